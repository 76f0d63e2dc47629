/* Source hot spots: ncu's source page (--page source --print-source cuda,sass)
 * read per line, and each finding given the lines that cause it. The four
 * pages are real H200 captures of corpus v2 (tests/fixtures/ncu/h200-v2/
 * README.md names each kernel's culprit; corpus_v2.cu has the lines). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "feedback.h"
#include "ncu_source.h"
#include "render.h"
#include "test_util.h"

#define V2 PF_FIXTURE_DIR "/ncu/h200-v2/"
#define CONSTRUCTED PF_FIXTURE_DIR "/ncu/source/"


/* The analysis of these files, every kernel (no time-share cut). */
static feedback_t *s_analyze_files(const char *const *paths, size_t count)
{
    analyzer_file_t files[8] = {{0}};
    cr_assert_leq(count, 8);
    for (size_t i = 0; i < count; i++)
        files[i].path = paths[i];
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    analyzer_input_t input = {.files = files, .count = count, .profiler = "ncu"};
    feedback_t *fb = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    return fb;
}

/* corpus v2's --set full pages plus the given source pages. */
static feedback_t *s_analyze(const char *const *sources, size_t count)
{
    const char *paths[8] = {V2 "full_raw.csv", V2 "full_details.csv"};
    cr_assert_leq(count, 6);
    for (size_t i = 0; i < count; i++)
        paths[2 + i] = sources[i];
    return s_analyze_files(paths, 2 + count);
}

static size_t s_kernel(const feedback_t *fb, const char *name)
{
    size_t n = strlen(name);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const char *kname = feedback_kernel_const(fb, k)->name;
        if (strncmp(kname, name, n) == 0 && kname[n] == '(')
            return k;
    }
    cr_assert_fail("no kernel %s", name);
    return 0;
}

static const fb_finding_t *s_finding(const feedback_t *fb, const char *kernel, const char *category)
{
    size_t k = s_kernel(fb, kernel);
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel == k && strcmp(f->category, category) == 0)
            return f;
    }
    cr_assert_fail("%s has no %s finding", kernel, category);
    return NULL;
}

static const fb_finding_t *s_first(const feedback_t *fb, size_t kernel)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        if (feedback_finding(fb, i)->kernel == kernel)
            return feedback_finding(fb, i);
    return NULL;
}

Test(ncu_source, sass_rows_are_summed_per_line_once_per_address)
{
    size_t len;
    char *bytes = test_read_file(V2 "source_aos_float3_x.csv", &len);
    ncu_source_t *src = ncu_source_new();
    pf_error_t err;
    cr_assert_eq(ncu_source_parse(src, "aos", bytes, len, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(ncu_source_kernel_count(src), 1);
    const ncu_source_kernel_t *k = ncu_source_find(src, "aos_float3_x(const P3 *, float *, unsigned long)");
    cr_assert_not_null(k);
    cr_assert(k->line_info);
    cr_assert_str_eq(k->file, "/tmp/corpus_v2/corpus_v2.cu");
    /* ncu lists line 26's instructions twice (two views of the loop); the
     * line row's own totals are what one count of each gives. */
    const ncu_source_site_t *line26 = NULL;
    for (size_t i = 0; i < k->site_count; i++)
        if (k->sites[i].line == 26)
            line26 = &k->sites[i];
    cr_assert_not_null(line26);
    cr_assert_float_eq(line26->samples, 21607, 0.5);
    cr_assert_float_eq(line26->sectors_excess, 11184810, 0.5);
    cr_assert_float_eq(line26->sectors, 22369622, 0.5);
    cr_assert_str_eq(line26->sass, "FADD R9, R2, R2");
    cr_assert_str_eq(line26->stall, "long_sb");
    ncu_source_destroy(&src);
    free(bytes);
}

Test(ncu_source, uncoalesced_load_is_the_aos_line)
{
    const char *pages[] = {V2 "source_aos_float3_x.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "aos_float3_x", "uncoalesced_access");
    cr_assert_geq(f->line_count, 1);
    cr_assert_eq(f->lines[0].line, 26);
    cr_assert(strstr(f->lines[0].text, "out[i] = p[i].x * 2.f;"), "%s", f->lines[0].text);
    cr_assert_float_eq(f->lines[0].share, 1.0, 1e-9);
    /* the 12-byte stride loads 3x the sectors, the store 1x: 2x on the line */
    cr_assert_float_eq(f->lines[0].value, 2.0, 0.01);
    char *text = render_text(fb, 0);
    cr_assert(strstr(text, "Where: line 26 `for (size_t i"), "%s", text);
    cr_assert(strstr(text, "100% of the excess global sectors (uncoalesced)"));
    free(text);
    char *json = render_json(fb, false);
    cr_assert(strstr(json, "\"lines\": [\n            {\"line\": 26, \"address\": \"0x7fa7037a2910\", "
                           "\"file\": \"corpus_v2.cu\""), "%s", json);
    free(json);
    feedback_destroy(&fb);
}

Test(ncu_source, bank_conflicts_are_the_strided_shared_load)
{
    const char *pages[] = {V2 "source_smem_stride4.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "smem_stride4", "bank_conflicts");
    cr_assert_geq(f->line_count, 1);
    /* line 62 reads s[(lane * 4 + w + i) & 1023]: 4-way; line 58's store is
     * conflict-free and must not be named */
    cr_assert_eq(f->lines[0].line, 62);
    cr_assert_float_eq(f->lines[0].value, 4.0, 0.01);
    for (size_t i = 0; i < f->line_count; i++)
        cr_assert_neq(f->lines[i].line, 58);
    feedback_destroy(&fb);
}

Test(ncu_source, local_memory_is_the_dynamically_indexed_array)
{
    const char *pages[] = {V2 "source_local_array_dyn.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "local_array_dyn", "local_memory");
    /* a[j] is read on line 80 and written on line 81, each half the local
     * sectors; the fill loop of line 76 stays under 5% */
    cr_assert_eq(f->line_count, 2);
    unsigned a = f->lines[0].line, b = f->lines[1].line;
    cr_assert((a == 80 && b == 81) || (a == 81 && b == 80), "lines %u and %u", a, b);
    cr_assert_float_eq(f->lines[0].share + f->lines[1].share, 1.0, 0.01);
    cr_assert_str_eq(f->lines[0].measure, "local-memory sectors");
    feedback_destroy(&fb);
}

Test(ncu_source, divergence_is_the_quarter_warp_branch)
{
    const char *pages[] = {V2 "source_divergent_quarter.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "divergent_quarter", "divergence");
    cr_assert_geq(f->line_count, 1);
    cr_assert_eq(f->lines[0].line, 69);
    cr_assert_float_eq(f->lines[0].value, 8.0, 0.05); /* one lane in four of 32 */
    feedback_destroy(&fb);
}

Test(ncu_source, stalls_name_the_lines_with_the_most_samples)
{
    const char *pages[] = {V2 "source_local_array_dyn.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "local_array_dyn", "l2_bound");
    cr_assert_geq(f->line_count, 2);
    cr_assert_eq(f->lines[0].line, 80); /* acc += a[j]: 333125 of 581k samples */
    cr_assert_float_eq(f->lines[0].share, 333125.0 / 581246.0, 0.01);
    cr_assert_geq(f->lines[0].share, f->lines[1].share);
    feedback_destroy(&fb);
}

Test(ncu_source, source_pages_do_not_change_any_first_finding)
{
    const char *pages[] = {V2 "source_aos_float3_x.csv", V2 "source_divergent_quarter.csv",
                           V2 "source_local_array_dyn.csv", V2 "source_smem_stride4.csv"};
    feedback_t *plain = s_analyze(NULL, 0);
    feedback_t *with = s_analyze(pages, 4);
    cr_assert_eq(feedback_kernel_count(plain), feedback_kernel_count(with));
    cr_assert_eq(feedback_finding_count(plain), feedback_finding_count(with));
    for (size_t k = 0; k < feedback_kernel_count(plain); k++)
        cr_assert_str_eq(s_first(plain, k)->category, s_first(with, k)->category);
    feedback_destroy(&plain);
    feedback_destroy(&with);
}

Test(ncu_source, without_lineinfo_the_sass_instruction_is_named)
{
    /* The aos page with its CUDA line rows taken out, as a build without
     * -lineinfo leaves it (tests/fixtures/ncu/source/README.md). */
    const char *pages[] = {CONSTRUCTED "aos_float3_x_no_lineinfo.csv"};
    feedback_t *fb = s_analyze(pages, 1);
    const fb_finding_t *f = s_finding(fb, "aos_float3_x", "uncoalesced_access");
    cr_assert_geq(f->line_count, 1);
    cr_assert_eq(f->lines[0].line, 0);
    cr_assert_str_eq(f->lines[0].text, "LDG.E R2, desc[UR8][R2.64]");
    cr_assert_eq(f->lines[0].address, 0x7fa7037a2a60ull);
    cr_assert_float_eq(f->lines[0].value, 3.0, 0.01); /* the load alone: 3x */
    bool noted = false;
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        noted |= strstr(feedback_note(fb, i), "the build lacks line info") != NULL;
    cr_assert(noted);
    char *text = render_text(fb, 0);
    cr_assert(strstr(text, "Where: SASS 0x7fa7037a2a60 `LDG.E R2, desc[UR8][R2.64]`"), "%s", text);
    free(text);
    feedback_destroy(&fb);
}

/* Parses `bytes` as a page and expects an error whose message holds `want`. */
static void s_refused(const char *bytes, size_t len, pf_status_t code, const char *want)
{
    ncu_source_t *src = ncu_source_new();
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(ncu_source_parse(src, "page.csv", bytes, len, &err), code, "%s", err.msg);
    cr_assert(strstr(err.msg, want), "\"%s\" lacks \"%s\"", err.msg, want);
    cr_assert(strncmp(err.msg, "page.csv", 8) == 0, "%s", err.msg);
    cr_assert_eq(ncu_source_kernel_count(src), 0);
    ncu_source_destroy(&src);
}

Test(ncu_source, a_page_cut_short_is_refused)
{
    size_t len;
    char *bytes = test_read_file(V2 "source_smem_stride4.csv", &len);
    /* inside a quoted field */
    char *q = strstr(bytes + len / 2, "\"");
    cr_assert_not_null(q);
    s_refused(bytes, (size_t) (q + 2 - bytes), PF_EBADINPUT, "cut short");
    /* at a comma: the last row has fewer fields than the header */
    char *comma = strstr(bytes + len / 2, "\",\"");
    s_refused(bytes, (size_t) (comma + 1 - bytes), PF_EBADINPUT, "fields where the header has");
    free(bytes);
}

Test(ncu_source, malformed_rows_are_refused_with_their_record)
{
    const char *header = "\"Line No\",\"Source\",\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\","
                         "\"Instructions Executed\"\n";
    char page[1024];
    snprintf(page, sizeof page, "%s\"12\",\"x = 1;\",\"-\",\"-\",\"5\",\"7\"\n\"\",\"\",\"0xZZ\",\"MOV\",\"1\",\"1\"\n",
             header);
    s_refused(page, strlen(page), PF_EBADINPUT, "record 3: \"Address\" is \"0xZZ\"");
    snprintf(page, sizeof page, "%s\"-3\",\"x = 1;\",\"-\",\"-\",\"5\",\"7\"\n", header);
    s_refused(page, strlen(page), PF_EBADINPUT, "not a line number");
    s_refused("\"a\",\"b\"\n\"1\",\"2\"\n", 16, PF_EBADINPUT, "before the header");
    const char *no_address = "\"Line No\",\"Source\",\"Samples\"\n";
    s_refused(no_address, strlen(no_address), PF_EBADINPUT, "no \"Address\" column");
    s_refused(header, strlen(header), PF_EBADINPUT, "not an ncu source page");
    const char *quote = "\"Line No\",\"Sou\"rce\"\n";
    s_refused(quote, strlen(quote), PF_EBADINPUT, "malformed CSV");
}

Test(ncu_source, a_huge_field_is_refused_not_held)
{
    size_t n = 200 * 1024;
    char *page = malloc(n + 64);
    cr_assert_not_null(page);
    memcpy(page, "\"File Path\",\"", 13);
    memset(page + 13, 'a', n);
    memcpy(page + 13 + n, "\"\n", 3);
    s_refused(page, 13 + n + 2, PF_ETOOBIG, "longer than 65536 bytes");
    free(page);
}

Test(ncu_source, detection_reads_the_first_row)
{
    size_t len;
    char *bytes = test_read_file(V2 "source_divergent_quarter.csv", &len);
    cr_assert(ncu_source_sniff(bytes, len));
    free(bytes);
    bytes = test_read_file(V2 "full_raw.csv", &len);
    cr_assert_not(ncu_source_sniff(bytes, len));
    free(bytes);
    cr_assert_not(ncu_source_sniff("\"File", 5));
    const char *noisy = "==PROF== Connected to process 7\n==WARNING== something\n\"File Path\",\"/a.cu\"\n";
    cr_assert(ncu_source_sniff(noisy, strlen(noisy)));
}

Test(ncu_source, lines_of_two_files_in_one_function_stay_apart)
{
    /* Inlined code from a header: ncu gives its lines a "File Path" row of
     * their own; line 5 of each file is a different line. */
    const char *page =
        "\"File Path\",\"/src/k.cu\"\n"
        "\"Function Name\",\"k(float *)\"\n"
        "\"Line No\",\"Source\",\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\"\n"
        "\"5\",\"x = f(y);\",\"-\",\"-\",\"10\",\"4\"\n"
        "\"\",\"\",\"0x10\",\"FADD R1, R2, R3\",\"10\",\"4\"\n"
        "\"File Path\",\"/inc/f.h\"\n"
        "\"5\",\"return y * 2;\",\"-\",\"-\",\"30\",\"4\"\n"
        "\"\",\"\",\"0x20\",\"FMUL R1, R2, 2\",\"30\",\"4\"\n"
        "\"\",\"\",\"0x20\",\"FMUL R1, R2, 2\",\"30\",\"4\"\n";
    ncu_source_t *src = ncu_source_new();
    pf_error_t err;
    cr_assert_eq(ncu_source_parse(src, "two.csv", page, strlen(page), &err), PF_OK, "%s", err.msg);
    const ncu_source_kernel_t *k = ncu_source_find(src, "k");
    cr_assert_not_null(k);
    cr_assert_eq(k->site_count, 2);
    cr_assert_str_eq(k->sites[0].file, "/src/k.cu");
    cr_assert_str_eq(k->sites[1].file, "/inc/f.h");
    cr_assert_str_eq(k->sites[1].text, "return y * 2;");
    cr_assert_float_eq(k->sites[1].samples, 30, 0.1); /* its instruction once */
    ncu_source_destroy(&src);
}

Test(ncu_source, a_source_page_alone_is_refused_saying_what_is_missing)
{
    analyzer_file_t files[] = {{.path = V2 "source_smem_stride4.csv"}};
    analysis_options_t options;
    analysis_options_default(&options);
    analyzer_input_t input = {.files = files, .count = 1, .profiler = "ncu"};
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_EBADINPUT);
    cr_assert_null(fb);
    cr_assert(strstr(err.msg, "give the capture's raw page too"), "%s", err.msg);
}

/* ----- real H200 pages of deploy/gpu-source.sh and gpu-smoke.sh (2026-12-01) ----- */

#define REAL PF_FIXTURE_DIR "/ncu/source/h200-2026-12-01/"

/* One capture's core page with its source page(s). */
static feedback_t *s_analyze_real(const char *core, const char *const *sources, size_t count)
{
    const char *paths[4] = {core};
    cr_assert_leq(count, 3);
    for (size_t i = 0; i < count; i++)
        paths[1 + i] = sources[i];
    return s_analyze_files(paths, 1 + count);
}

static bool s_noted(const feedback_t *fb, const char *text)
{
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        if (strstr(feedback_note(fb, i), text))
            return true;
    return false;
}

/* The first finding of this category, which must name at least one line. */
static const fb_finding_t *s_with_lines(const feedback_t *fb, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (strcmp(f->category, category) == 0) {
            cr_assert_geq(f->line_count, 1, "%s names no line", category);
            return f;
        }
    }
    cr_assert_fail("no %s finding", category);
    return NULL;
}

/* The raw page names the template instance "void copy_round<1>(...)", the
 * source page "void copy_round<(int)1>(...)": one kernel. Round 1 of the
 * agent loop: the strided load is line 43 of rounds.cu. */
Test(ncu_source, a_template_instance_matches_its_page_despite_the_cast)
{
    const char *pages[] = {REAL "rounds1_source.csv"};
    feedback_t *fb = s_analyze_real(REAL "rounds1_core.csv", pages, 1);
    const fb_finding_t *f = s_with_lines(fb, "uncoalesced_access");
    cr_assert_eq(f->lines[0].line, 43);
    cr_assert_str_eq(f->lines[0].file, "rounds.cu");
    cr_assert(strstr(f->lines[0].text, "out[i] = in[src];"), "%s", f->lines[0].text);
    cr_assert_not(s_noted(fb, "copy_round<(int)1>"), "the page was left unused");
    feedback_destroy(&fb);
}

/* A Triton kernel's page has one block per file its code comes from
 * (triton/language/standard.py, then the kernel's own file): one function,
 * whose hot lines are in the kernel's file. */
Test(ncu_source, a_triton_function_over_several_files_is_one_function)
{
    size_t len;
    char *bytes = test_read_file(REAL "triton_matmul_source.csv", &len);
    ncu_source_t *src = ncu_source_new();
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(ncu_source_parse(src, "triton", bytes, len, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(ncu_source_kernel_count(src), 1);
    const ncu_source_kernel_t *k = ncu_source_kernel(src, 0);
    cr_assert_str_eq(k->function, "matmul_kernel");
    cr_assert_eq(k->file_count, 2);
    const ncu_source_site_t *top = NULL;
    for (size_t i = 0; i < k->site_count; i++)
        if (!top || k->sites[i].samples > top->samples)
            top = &k->sites[i];
    cr_assert_not_null(top);
    cr_assert(strstr(top->file, "workloads.py"), "the hottest line is in %s", top->file);
    ncu_source_destroy(&src);
    free(bytes);

    const char *pages[] = {REAL "triton_matmul_source.csv"};
    feedback_t *fb = s_analyze_real(REAL "triton_matmul_core.csv", pages, 1);
    cr_assert_not(s_noted(fb, "matches no kernel"), "a file block was taken for another function");
    feedback_destroy(&fb);
}

/* Built without -lineinfo, `--print-source cuda,sass` prints only ncu's
 * warning: the page is read as such (not an error), and the feedback says the
 * build lacks line info. */
Test(ncu_source, an_export_without_lineinfo_is_named_not_refused)
{
    size_t len;
    char *bytes = test_read_file(REAL "nolineinfo_source.csv", &len);
    cr_assert(ncu_source_sniff(bytes, len));
    free(bytes);
    const char *pages[] = {REAL "nolineinfo_source.csv"};
    feedback_t *fb = s_analyze_real(REAL "nolineinfo_core.csv", pages, 1);
    cr_assert(s_noted(fb, "aos_float3_x(const P3 *, float *, unsigned long): no source view: the build lacks "
                          "line info (nvcc -lineinfo)"));
    feedback_destroy(&fb);
}

/* The source pass also exports the page as SASS alone (ncu names the
 * function "Kernel Name" there): for that build the hot spots fall back to
 * the SASS instruction, the strided LDG of aos_float3_x. */
Test(ncu_source, without_lineinfo_the_sass_page_is_the_fallback)
{
    const char *pages[] = {REAL "nolineinfo_source.csv", REAL "nolineinfo_sass.csv"};
    feedback_t *fb = s_analyze_real(REAL "nolineinfo_core.csv", pages, 2);
    const fb_finding_t *f = s_with_lines(fb, "uncoalesced_access");
    cr_assert_eq(f->lines[0].line, 0);
    cr_assert(strncmp(f->lines[0].text, "LDG.E", 5) == 0, "%s", f->lines[0].text);
    cr_assert(s_noted(fb, "the build lacks line info (nvcc -lineinfo); hot spots name SASS instructions instead"));
    cr_assert_not(s_noted(fb, "no SASS-only page"));
    feedback_destroy(&fb);
}
