/* VTune GPU hotspots: reports read the way VTune and KernelFoundry write them
 * (tab, semicolon and comma delimiters, warnings before the header, several
 * tables per file, SIMD variants, overhead entries, the collated JSON), each
 * bound rule on a kernel built for it, the recommendations, missing columns
 * that degrade with a note, and bad input answered with a clear error or a
 * degraded result, never a crash.
 *
 * The fixtures are constructed from the documented formats (no Intel GPU
 * here): tests/fixtures/README.md says which and from what. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "analysis.h"
#include "feedback.h"
#include "noise.h"
#include "render.h"
#include "vtune_analyze.h"
#include "vtune_report.h"

#define VT PF_FIXTURE_DIR "/intel/vtune/"

/* A report from fixture files, each parsed as one file of the job. */
static vtune_report_t *s_report(const char *const *files, size_t count)
{
    vtune_report_t *report = vtune_report_new();
    cr_assert_not_null(report);
    for (size_t i = 0; i < count; i++) {
        char path[512];
        snprintf(path, sizeof path, VT "%s", files[i]);
        pf_error_t err;
        pf_error_clear(&err);
        cr_assert_eq(vtune_report_parse_file(report, path, &err), PF_OK, "%s: %s", files[i], err.msg);
    }
    return report;
}

static vtune_report_t *s_report1(const char *file) { return s_report(&file, 1); }

/* A report from text; the status is returned, the report kept in *out. */
static pf_status_t s_parse(const char *text, size_t len, pf_error_t *err, vtune_report_t **out)
{
    vtune_report_t *report = vtune_report_new();
    cr_assert_not_null(report);
    pf_error_clear(err);
    pf_status_t rc = vtune_report_parse(report, "test.tsv", text, len, err);
    *out = report;
    return rc;
}

static feedback_t *s_analyze_on(const vtune_report_t *report, double min_share, const char *device)
{
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = min_share;
    feedback_t *fb = vtune_analyze(report, &options, device);
    cr_assert_not_null(fb);
    return fb;
}

static feedback_t *s_analyze(const vtune_report_t *report, double min_share)
{
    return s_analyze_on(report, min_share, "Intel Arc B580");
}

static size_t s_kernel(const feedback_t *fb, const char *name)
{
    for (size_t k = 0; k < feedback_kernel_count(fb); k++)
        if (strcmp(feedback_kernel_const(fb, k)->name, name) == 0)
            return k;
    return (size_t) -1;
}

static const fb_finding_t *s_first(const feedback_t *fb, size_t kernel)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        if (feedback_finding(fb, i)->kernel == kernel)
            return feedback_finding(fb, i);
    return NULL;
}

static const fb_finding_t *s_finding(const feedback_t *fb, size_t kernel, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel == kernel && strcmp(f->category, category) == 0)
            return f;
    }
    return NULL;
}

/* Whether some evidence line of the finding carries `value` for `metric`. */
static bool s_evidence(const fb_finding_t *f, const char *metric, double value)
{
    for (size_t e = 0; e < f->evidence_count; e++)
        if (strcmp(f->evidence[e].metric, metric) == 0 && fabs(f->evidence[e].value - value) < 1e-6)
            return true;
    return false;
}

static bool s_has_note(const feedback_t *fb, const char *text)
{
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        if (strstr(feedback_note(fb, i), text))
            return true;
    return false;
}

static bool s_has_missing(const feedback_t *fb, const char *text)
{
    for (size_t i = 0; i < feedback_missing_count(fb); i++)
        if (strstr(feedback_missing(fb, i), text))
            return true;
    return false;
}

/* ----- parsing ------------------------------------------------------------- */

Test(vtune_report, xeforge_semicolon_report_is_read_column_by_column)
{
    vtune_report_t *report = s_report1("xeforge_semicolon.csv");
    cr_assert_eq(vtune_report_kernel_count(report), 1);
    const vtune_kernel_t *k = vtune_report_find(report, "gemm_kernel");
    cr_assert_not_null(k);
    cr_expect_float_eq(k->v[VT_TOTAL_TIME], 0.026427, 1e-12);
    cr_expect_float_eq(k->v[VT_AVERAGE_TIME], 0.000529, 1e-12);
    cr_expect_float_eq(k->v[VT_INSTANCE_COUNT], 50, 0);
    cr_expect_float_eq(k->v[VT_SIMD_WIDTH], 16, 0);
    cr_expect_float_eq(k->v[VT_SPILL_SIZE], 0, 0);
    cr_expect_float_eq(k->v[VT_PEAK_OCCUPANCY], 40, 0);
    cr_expect_float_eq(k->v[VT_OCC_LIMIT_WORK_SIZE], 40, 0);
    cr_expect_float_eq(k->v[VT_OCC_LIMIT_SLM], 100, 0);
    cr_expect_float_eq(k->v[VT_OCC_LIMIT_BARRIERS], 100, 0);
    cr_expect(isnan(k->v[VT_XVE_ACTIVE]), "not in the report, so not zero");
    cr_expect_str_eq(k->work_global, "128 x 8");
    cr_expect_str_eq(k->work_local, "64 x 8");
    cr_expect_float_eq(vtune_report_value(report, "gemm_kernel", "Peak XVE Threads Occupancy(%)"), 40, 0);
    cr_expect_float_eq(vtune_report_value(report, "gemm_kernel", "Peak XVE Threads Occupancy"), 40, 0);
    vtune_report_destroy(&report);
}

Test(vtune_report, two_tables_in_one_file_merge_columns_without_adding_times)
{
    vtune_report_t *report = s_report1("b70_two_blocks.tsv");
    cr_expect_eq(vtune_report_table_count(report), 2);
    cr_assert_eq(vtune_report_kernel_count(report), 1);
    const char *name = "GemmUniversal<cute::tuple<...>>";
    const vtune_kernel_t *k = vtune_report_find(report, name);
    cr_assert_not_null(k);
    /* The second table reports the same run again: its Total Time is the
     * same kernel's, not another variant's. */
    cr_expect_float_eq(k->v[VT_TOTAL_TIME], 0.0598, 1e-12);
    cr_expect_eq(k->variants, 1);
    cr_expect_eq(k->rows, 2);
    cr_expect_float_eq(k->v[VT_XVE_STALLED], 39.4, 1e-9);
    cr_expect_float_eq(k->v[VT_XMX_ACTIVE], 5.0, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, name, "GPU Memory Bandwidth, GB/sec:Read"), 120.5, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, name, "GPU Memory Bandwidth, GB/sec:Write"), 60.2, 1e-9);
    vtune_report_destroy(&report);
}

Test(vtune_report, warning_lines_before_the_header_are_skipped_and_kept_as_notes)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    /* 11 rows: 1 "[Outside any task]", 3 softmax_rows variants -> 8 kernels. */
    cr_expect_eq(vtune_report_kernel_count(report), 8);
    cr_expect_eq(vtune_report_ignored_rows(report), 1);
    bool warned = false;
    for (size_t i = 0; i < vtune_report_note_count(report); i++)
        warned |= strstr(vtune_report_note(report, i), "vtune: Warning: Cannot locate debugging") != NULL;
    cr_expect(warned, "VTune's warnings are kept as notes");
    cr_expect_eq(vtune_report_error_count(report), 0);
    vtune_report_destroy(&report);
}

Test(vtune_report, simd_variants_add_their_times_and_take_the_longest_ones_columns)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    const vtune_kernel_t *k = vtune_report_find(report, "softmax_rows");
    cr_assert_not_null(k);
    cr_expect_float_eq(k->v[VT_TOTAL_TIME], 0.0031 + 0.0102 + 0.0047, 1e-12);
    cr_expect_float_eq(k->v[VT_INSTANCE_COUNT], 100, 0);
    cr_expect_eq(k->variants, 3);
    cr_expect_eq(k->simd_widths, (1u << 3) | (1u << 4) | (1u << 5), "SIMD 8, 16 and 32");
    /* The SIMD16 variant ran longest (0.0102 s): its columns win over the
     * SIMD8 row that came first and the SIMD32 row that came last. */
    cr_expect_float_eq(k->v[VT_SIMD_WIDTH], 16, 0);
    cr_expect_float_eq(k->v[VT_STALL_SEND], 22.0, 1e-9);
    cr_expect_float_eq(k->v[VT_ALU0_ACTIVE], 24.6, 1e-9);
    cr_expect_float_eq(k->v[VT_AVERAGE_TIME], 0.000170, 1e-12);
    vtune_report_destroy(&report);
}

Test(vtune_report, overhead_entries_are_marked_and_non_kernels_dropped)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    const vtune_kernel_t *copy = vtune_report_find(report, "zeCommandListAppendMemoryCopy");
    cr_assert_not_null(copy);
    cr_expect(copy->overhead);
    const vtune_kernel_t *fill = vtune_report_find(
        report, "at::native::xpu::VectorizedElementwiseKernel<4, at::native::xpu::FillFunctor<float>, "
                "at::detail::Array<char*, 1>>");
    cr_assert_not_null(fill, "a name with commas in a tab-delimited report stays whole");
    cr_expect(fill->overhead);
    cr_expect(!vtune_report_find(report, "gather_rows")->overhead);
    cr_expect_null(vtune_report_find(report, "[Outside any task]"));
    vtune_report_destroy(&report);
}

Test(vtune_report, comma_report_reads_quoted_names_and_column_names)
{
    vtune_report_t *report = s_report1("comma_quoted.csv");
    cr_assert_eq(vtune_report_kernel_count(report), 2);
    const char *name = "conv2d_nhwc<float, 3, 3>";
    cr_assert_not_null(vtune_report_find(report, name));
    cr_expect_float_eq(vtune_report_value(report, name, "GPU Memory Bandwidth, GB/sec:Read"), 35.6, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, name, "XVE Pipelines:ALU0 active(%)"), 71.4, 1e-9);
    cr_expect_str_eq(vtune_report_find(report, name)->work_local, "256 x 1");
    vtune_report_destroy(&report);
}

Test(vtune_report, unquoted_commas_in_comma_reports_are_put_back_together)
{
    /* Defensive: a report whose writer did not quote. Column names never
     * start with a space; a template name keeps its brackets balanced. */
    const char *csv = "Computing Task,Computing Task:Total Time,GPU Memory Bandwidth, GB/sec:Read,"
                      "GPU Memory Bandwidth, GB/sec:Write\n"
                      "Gemm<int, 4>,0.5,100.0,20.0\n"
                      "plain,0.25,10.0,2.0\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(csv, strlen(csv), &err, &report), PF_OK, "%s", err.msg);
    cr_assert_eq(vtune_report_kernel_count(report), 2);
    cr_expect_float_eq(vtune_report_value(report, "Gemm<int, 4>", "GPU Memory Bandwidth, GB/sec:Read"),
                       100.0, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, "Gemm<int, 4>", "GPU Memory Bandwidth, GB/sec:Write"),
                       20.0, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, "plain", "Computing Task:Total Time"), 0.25, 1e-12);
    vtune_report_destroy(&report);
}

Test(vtune_report, percent_column_wins_over_the_plain_one_in_either_order)
{
    const char *a = "Computing Task\tXVE Array:Active\tXVE Array:Active(%)\nk\t0.5\t50.0\n";
    const char *b = "Computing Task\tXVE Array:Active(%)\tXVE Array:Active\nk\t50.0\t0.5\n";
    const char *texts[] = {a, b};
    for (int i = 0; i < 2; i++) {
        pf_error_t err;
        vtune_report_t *report;
        cr_assert_eq(s_parse(texts[i], strlen(texts[i]), &err, &report), PF_OK, "%s", err.msg);
        cr_expect_float_eq(vtune_report_value(report, "k", "XVE Array:Active"), 50.0, 1e-9, "order %d", i);
        vtune_report_destroy(&report);
    }
}

Test(vtune_report, numbers_with_grouping_and_percent_signs)
{
    const char *tsv = "Computing Task\tXVE Instructions:ALU0 Instructions\tXVE Array:Active(%)\t"
                      "XVE Array:Stalled(%)\tXVE Array:Idle(%)\tComputing Task:Total Time\n"
                      "k\t1,234,567\t12.5%\t0,5\tn/a\t1.5e-03\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    const vtune_kernel_t *k = vtune_report_find(report, "k");
    cr_expect_float_eq(k->v[VT_ALU0_INSTR], 1234567, 0);
    cr_expect_float_eq(k->v[VT_XVE_ACTIVE], 12.5, 1e-9);
    cr_expect_float_eq(k->v[VT_XVE_STALLED], 0.5, 1e-9, "a lone decimal comma");
    cr_expect(isnan(k->v[VT_XVE_IDLE]), "n/a is missing, not zero");
    cr_expect_float_eq(k->v[VT_TOTAL_TIME], 0.0015, 1e-12);
    vtune_report_destroy(&report);
}

Test(vtune_report, a_new_header_may_change_the_delimiter)
{
    const char *text = "Computing Task\tComputing Task:Total Time\nk\t0.5\n"
                       "Computing Task;XVE Array:Stalled(%)\nk;30.0\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(text, strlen(text), &err, &report), PF_OK, "%s", err.msg);
    cr_expect_eq(vtune_report_table_count(report), 2);
    cr_expect_eq(vtune_report_kernel_count(report), 1);
    cr_expect_float_eq(vtune_report_value(report, "k", "XVE Array:Stalled"), 30.0, 1e-9);
    cr_expect_float_eq(vtune_report_value(report, "k", "Computing Task:Total Time"), 0.5, 1e-12);
    vtune_report_destroy(&report);
}

Test(vtune_report, files_of_one_job_merge_by_kernel_name)
{
    const char *second = "vtune: Warning: second report pass\n"
                         "Computing Task\tComputing Task:Total Time\tXVE Stall Reasons:Send(%)\n"
                         "gemm_kernel\t0.026427\t12.0\n";
    vtune_report_t *report = s_report1("xeforge_semicolon.csv");
    pf_error_t err;
    cr_assert_eq(vtune_report_parse(report, "pass2.tsv", second, strlen(second), &err), PF_OK, "%s", err.msg);
    cr_assert_eq(vtune_report_kernel_count(report), 1);
    const vtune_kernel_t *k = vtune_report_find(report, "gemm_kernel");
    cr_expect_float_eq(k->v[VT_TOTAL_TIME], 0.026427, 1e-12, "the same kernel, not a variant");
    cr_expect_float_eq(k->v[VT_STALL_SEND], 12.0, 1e-9);
    cr_expect_float_eq(k->v[VT_PEAK_OCCUPANCY], 40.0, 1e-9);
    vtune_report_destroy(&report);
}

Test(vtune_report, crlf_line_ends_and_a_byte_order_mark_are_accepted)
{
    const char *text = "\xEF\xBB\xBFvtune: Warning: x\r\nComputing Task\tComputing Task:Total Time\r\n"
                       "k\t0.25\r\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(text, strlen(text), &err, &report), PF_OK, "%s", err.msg);
    cr_expect_float_eq(vtune_report_value(report, "k", "Computing Task:Total Time"), 0.25, 1e-12);
    cr_expect_not_null(vtune_report_find(report, "k"), "no \\r left on the name");
    vtune_report_destroy(&report);
}

Test(vtune_report, sniff_recognises_vtune_output_only)
{
    const char *files[] = {"kf_pass1_full.tsv", "xeforge_semicolon.csv", "b70_two_blocks.tsv",
                           "comma_quoted.csv", "vtune_counters.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, VT "%s", files[i]);
        size_t len;
        char *bytes = test_read_file(path, &len);
        cr_expect(vtune_report_sniff(bytes, len), "%s", files[i]);
        free(bytes);
    }
    const char *ncu = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n";
    const char *unitrace = "Kernel,GlobalInstanceId,GpuTime[ns]\n";
    const char *json = "{\"traceEvents\": []}";
    cr_expect(!vtune_report_sniff(ncu, strlen(ncu)));
    cr_expect(!vtune_report_sniff(unitrace, strlen(unitrace)));
    cr_expect(!vtune_report_sniff(json, strlen(json)));
    cr_expect(!vtune_report_sniff("", 0));
}

/* ----- bound rules --------------------------------------------------------- */

/* The category of a kernel's first finding in the PASS1 fixture, on `device`
 * (NULL: unknown, so GPU memory bandwidth is no share of a peak). */
static void s_expect_bound_on(const char *kernel, const char *category, const char *device)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze_on(report, 0, device);
    size_t k = s_kernel(fb, kernel);
    cr_assert_neq(k, (size_t) -1, "%s not analyzed", kernel);
    const fb_finding_t *first = s_first(fb, k);
    cr_assert_not_null(first, "%s: no finding", kernel);
    cr_expect(first->primary, "%s: the first finding is the bound", kernel);
    cr_expect_str_eq(first->category, category, "%s: %s (%s)", kernel, first->category, first->title);
    cr_expect_str_eq(feedback_kernel_const(fb, k)->bottleneck, category);
    cr_expect_gt(first->evidence_count, 2, "%s: evidence", kernel);
    cr_expect_neq(first->action[0], '\0', "%s: an action", kernel);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

static void s_expect_bound(const char *kernel, const char *category)
{
    s_expect_bound_on(kernel, category, "Intel Arc B580");
}

Test(vtune_bound, send_stalls_dominating_is_memory_latency)
{
    /* Issue #14: the busiest measured unit is the bound. On the B580 this
     * test names, gather_rows moves 422 of its 456 GB/s: memory bandwidth
     * bounds it and its Send stalls are that bound showing through (the test
     * expected memory_latency, KernelFoundry's first rule). Without a known
     * device the bandwidth is no share of a peak and the rule's verdict
     * stands. softmax_rows reads 504 GB/s, more than the B580's peak, which
     * is noted and not used. */
    s_expect_bound("gather_rows", "memory_bandwidth");
    s_expect_bound_on("gather_rows", "memory_latency", NULL);
    s_expect_bound("softmax_rows", "memory_latency");
}

Test(vtune_bound, busy_xmx_is_compute_xmx) { s_expect_bound("gemm_xmx_bf16<256, 256, 32>", "compute_xmx"); }
Test(vtune_bound, busy_alu0_is_compute_alu0) { s_expect_bound("gemm_fp32_naive", "compute_alu0"); }
Test(vtune_bound, busy_alu1_is_compute_alu1) { s_expect_bound("hash_keys_u64", "compute_alu1"); }
Test(vtune_bound, nothing_dominant_is_balanced)
{
    /* Issue #14: on the B580, layernorm_fwd's 401 GB/s is 88% of the DRAM
     * peak, the busiest unit (the test expected balanced, from the pipes
     * alone); on an unknown device nothing reaches 60% and it is balanced. */
    s_expect_bound_on("layernorm_fwd", "balanced", NULL);
    s_expect_bound("layernorm_fwd", "memory_bandwidth");
}

Test(vtune_bound, evidence_carries_the_numbers_behind_the_verdict)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    const fb_finding_t *mem = s_first(fb, s_kernel(fb, "gather_rows"));
    cr_expect(s_evidence(mem, "XVE Stall Reasons:Send", 48.6), "Send stall as the top reason");
    cr_expect(s_evidence(mem, "XVE Array:Stalled", 71.8));
    cr_expect(s_evidence(mem, "GPU Memory Bandwidth, GB/sec", 380.2 + 41.7));
    const fb_finding_t *xmx = s_first(fb, s_kernel(fb, "gemm_xmx_bf16<256, 256, 32>"));
    cr_expect(s_evidence(xmx, "XVE Pipelines:XMX active", 72.6));
    /* Issue #14: importance is the estimated gain; the bound's is its
     * headroom, 100 - 72.6 (it was 72.6, the activity itself). */
    cr_expect_float_eq(xmx->importance, 100 - 72.6, 1e-9);
    cr_expect_str_eq(xmx->source, "profeed:headroom");
    /* Unlike the seed, a balanced kernel still shows its breakdown (on an
     * unknown device: on the B580 this kernel is memory-bound, issue #14). */
    feedback_t *anywhere = s_analyze_on(report, 0, NULL);
    const fb_finding_t *bal = s_first(anywhere, s_kernel(anywhere, "layernorm_fwd"));
    cr_assert_str_eq(bal->category, "balanced");
    cr_expect(s_evidence(bal, "XVE Array:Active", 38.2));
    bool breakdown = false, pipes = false;
    for (size_t e = 0; e < bal->evidence_count; e++) {
        breakdown |= strstr(bal->evidence[e].text, "active 38.2%, stalled 31.5%, idle 30.3%") != NULL;
        pipes |= strstr(bal->evidence[e].text, "ALU0 (FP32/FP16) 29.5%") != NULL;
    }
    cr_expect(breakdown && pipes, "balanced evidence: XVE states and pipes");
    cr_expect_float_eq(bal->importance, 100 - 38.2, 1e-9, "the time the XVEs do not execute");
    feedback_destroy(&anywhere);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* Issue #14: the busiest measured unit is the bound, never the first of
 * KernelFoundry's rules that matches. This test asserted the rule order
 * (XMX at 50% before ALU0 at 60%, ALU0 at 60% before ALU1 at 70%, Send stalls
 * before a pipe at 60%); it now asserts the top-down verdicts on the same
 * rows. */
Test(vtune_bound, the_busiest_pipe_is_the_bound_not_the_first_rule)
{
    const char *tsv = "Computing Task\tComputing Task:Total Time\tXVE Array:Stalled(%)\t"
                      "XVE Stall Reasons:Send(%)\tXVE Stall Reasons:SBID(%)\t"
                      "XVE Stall Reasons:Dist or Acc(%)\tXVE Pipelines:ALU0 active(%)\t"
                      "XVE Pipelines:ALU1 active(%)\tXVE Pipelines:XMX active(%)\n"
                      "send_and_xmx\t0.4\t40\t30\t1\t1\t60\t60\t50\n"     /* rule 1 before 2 */
                      "sbid_over_send\t0.3\t40\t10\t12\t1\t60\t0\t50\n"   /* rule 1 fails on SBID */
                      "send_at_five\t0.2\t40\t5\t0\t0\t60\t70\t0\n"       /* > 5, not >= 5 */
                      "alu0_and_alu1\t0.1\t10\t1\t0\t0\t60\t70\t0\n"      /* ALU0 before ALU1 */
                      "never_stalls\t0.05\t0\t30\t0\t0\t10\t70\t0\n";     /* Stalled > 0 */
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0);
    static const struct {
        const char *kernel, *category;
    } want[] = {
        {"send_and_xmx", "compute_alu0"},   /* ALU0 and ALU1 tie at 60%: the Send stalls' gain
                                               (40% x 30/32 of the time, less the 60% the pipe
                                               covers) is under the 40% headroom */
        {"sbid_over_send", "compute_alu0"}, {"send_at_five", "compute_alu1"},
        {"alu0_and_alu1", "compute_alu1"},  {"never_stalls", "compute_alu1"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t k = s_kernel(fb, want[i].kernel);
        cr_assert_neq(k, (size_t) -1);
        cr_expect_str_eq(s_first(fb, k)->category, want[i].category, "%s", want[i].kernel);
    }
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_bound, kernels_rank_by_total_time_in_seconds)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    static const char *const order[] = {"gemm_fp32_naive", "gather_rows", "gemm_xmx_bf16<256, 256, 32>",
                                        "softmax_rows",    "layernorm_fwd", "hash_keys_u64"};
    cr_assert_eq(feedback_kernel_count(fb), 6, "overhead entries are not analyzed");
    for (size_t i = 0; i < 6; i++)
        cr_expect_str_eq(feedback_kernel_const(fb, i)->name, order[i]);
    const fb_kernel_t *top = feedback_kernel_const(fb, 0);
    /* Total Time is seconds: 0.0874 s is 87.4 ms, over 100 instances. */
    cr_expect_float_eq(top->time_ns, 87.4e6, 1);
    cr_expect_eq(top->launches, 100);
    double total = 0.0874 + 0.0412 + 0.0298 + 0.0180 + 0.0121 + 0.0087 + 0.0123 + 0.0024;
    cr_expect_float_eq(top->share, 0.0874 / total, 1e-9);
    cr_expect_float_eq(feedback_total_time_ns(fb), total * 1e9, 1);
    cr_expect_str_eq(top->block, "");
    bool avg = false;
    for (size_t m = 0; m < top->metric_count; m++)
        avg |= strcmp(top->metrics[m].name, "Computing Task:Average Time") == 0 &&
               fabs(top->metrics[m].value - 0.000874) < 1e-12;
    cr_expect(avg, "Average Time is kept in VTune's seconds");
    char *text = render_text(fb, 0);
    cr_expect_not_null(strstr(text, "87.40 ms"), "%s", text);
    free(text);
    cr_expect(s_has_note(fb, "runtime entries not analyzed"), "overhead is said");
    cr_expect(s_has_note(fb, "zeCommandListAppendMemoryCopy"));
    cr_expect(s_has_note(fb, "\"softmax_rows\": 3 rows merged (SIMD 8/16/32 variants)"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_bound, default_threshold_and_top_leave_kernels_out_and_say_so)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0.05);
    /* hash_keys_u64 is 4.1% of GPU time. */
    cr_expect_eq(feedback_kernel_count(fb), 5);
    cr_expect_eq(s_kernel(fb, "hash_keys_u64"), (size_t) -1);
    cr_expect(s_has_note(fb, "1 more kernel (4.1% of GPU time) below the 5% threshold"));
    feedback_destroy(&fb);
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    options.top = 2;
    fb = vtune_analyze(report, &options, NULL);
    cr_expect_eq(feedback_kernel_count(fb), 2);
    cr_expect(s_has_note(fb, "or past --top"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* ----- recommendations ----------------------------------------------------- */

Test(vtune_advice, each_recommendation_fires_on_the_kernel_built_for_it)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    size_t gather = s_kernel(fb, "gather_rows"), xmx = s_kernel(fb, "gemm_xmx_bf16<256, 256, 32>");
    size_t naive = s_kernel(fb, "gemm_fp32_naive"), norm = s_kernel(fb, "layernorm_fwd");
    size_t hash = s_kernel(fb, "hash_keys_u64");

    const fb_finding_t *f = s_finding(fb, xmx, "occupancy");
    cr_assert_not_null(f, "46.9%% average occupancy is under 50%%");
    cr_expect(s_evidence(f, "XVE Threads Occupancy", 46.9));
    cr_expect_null(s_finding(fb, naive, "occupancy"), "91%% is fine");

    f = s_finding(fb, gather, "dependency_stalls");
    cr_assert_not_null(f, "SBID 9.1%%");
    cr_expect(s_evidence(f, "XVE Stall Reasons:SBID", 9.1));
    cr_expect_not_null(s_finding(fb, hash, "dependency_stalls"), "Dist or Acc 7.4%%");
    cr_expect_null(s_finding(fb, naive, "dependency_stalls"));

    f = s_finding(fb, norm, "barrier_stalls");
    cr_assert_not_null(f, "Barrier 6.1%%");
    cr_expect(s_evidence(f, "XVE Stall Reasons:Barrier", 6.1));
    cr_expect_null(s_finding(fb, xmx, "barrier_stalls"), "4.2%% is under the mark");

    f = s_finding(fb, gather, "l3_thrashing");
    cr_assert_not_null(f, "63.5%% L3 misses");
    cr_expect(s_evidence(f, "GPU L3:Miss Ratio", 63.5));
    cr_expect_null(s_finding(fb, xmx, "l3_thrashing"));

    f = s_finding(fb, naive, "xmx_unused");
    cr_assert_not_null(f, "XMX 0%% with ALU0 78.3%%");
    cr_expect_not_null(strstr(f->action, "joint_matrix"), "%s", f->action);
    cr_expect_null(s_finding(fb, xmx, "xmx_unused"));
    cr_expect_null(s_finding(fb, norm, "xmx_unused"), "ALU0 29.5%% is not busy enough");

    /* Importance on the NCU analyzer's 0..100 scale, the bound first. */
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *x = feedback_finding(fb, i);
        cr_expect(x->importance >= 0 && x->importance <= 100, "%s %f", x->category, x->importance);
        cr_expect_neq(x->action[0], '\0', "%s has an action", x->category);
        cr_expect_gt(x->evidence_count, 0, "%s has evidence", x->category);
    }
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_advice, peak_occupancy_names_its_limiter)
{
    vtune_report_t *report = s_report1("xeforge_semicolon.csv");
    feedback_t *fb = s_analyze(report, 0);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    const fb_finding_t *f = s_finding(fb, 0, "occupancy");
    cr_assert_not_null(f);
    cr_expect_not_null(strstr(f->title, "the work-group size caps it at 40%"), "%s", f->title);
    cr_expect(s_evidence(f, "Peak XVE Threads Occupancy:Work Size Limit", 40));
    cr_expect_not_null(strstr(f->action, "larger work-groups"), "%s", f->action);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->block, "(64, 8)");
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->grid, "(2, 1)");
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_advice, comma_report_gets_the_same_analysis)
{
    vtune_report_t *report = s_report1("comma_quoted.csv");
    feedback_t *fb = s_analyze(report, 0);
    size_t conv = s_kernel(fb, "conv2d_nhwc<float, 3, 3>"), reduce = s_kernel(fb, "reduce_sum<float, 1024>");
    cr_assert(conv != (size_t) -1 && reduce != (size_t) -1);
    cr_expect_str_eq(s_first(fb, conv)->category, "compute_alu0");
    cr_expect_not_null(s_finding(fb, conv, "xmx_unused"));
    cr_expect_str_eq(feedback_kernel_const(fb, conv)->grid, "(4096, 1)");
    cr_expect_str_eq(s_first(fb, reduce)->category, "memory_latency");
    cr_expect_not_null(s_finding(fb, reduce, "barrier_stalls"));
    cr_expect_not_null(s_finding(fb, reduce, "dependency_stalls"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_advice, slm_limited_occupancy_and_spills_are_named)
{
    /* Older VTune names ("EU") are aliases of the XVE columns. */
    const char *tsv = "Computing Task\tComputing Task:Total Time\tComputing Task:Spill Memory Size\t"
                      "EU Array:Active(%)\tPeak XVE Threads Occupancy(%)\t"
                      "Peak XVE Threads Occupancy:Work Size Limit(%)\t"
                      "Peak XVE Threads Occupancy:SLM Use Limit(%)\t"
                      "Peak XVE Threads Occupancy:Barriers Use Limit(%)\tXVE Pipelines:ALU0 active(%)\n"
                      "tiled\t0.5\t2048\t30\t25\t100\t25\t50\t20\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0);
    const fb_finding_t *occ = s_finding(fb, 0, "occupancy");
    cr_assert_not_null(occ);
    cr_expect_not_null(strstr(occ->title, "shared local memory per work-group caps it at 25%"), "%s",
                       occ->title);
    /* Issue #14: importance is the modelled gain. ALU0 20% bounds the speedup
     * at min(100/25, 80/20) = 4x; without XVE stall data the waiting time is
     * 100 - XVE active = 70% (the old weighting, (100 - 25) x (100 - 30) / 100,
     * gave the same number). */
    cr_expect_float_eq(occ->importance, 0.75 * 70, 1e-9);
    const fb_finding_t *spill = s_finding(fb, 0, "register_spill");
    cr_assert_not_null(spill);
    cr_expect(s_evidence(spill, "Computing Task:Spill Memory Size", 2048));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* ----- missing columns ------------------------------------------------------ */

Test(vtune_missing, no_rule_inputs_means_no_verdict_and_says_what_to_add)
{
    vtune_report_t *report = s_report1("xeforge_semicolon.csv");
    feedback_t *fb = s_analyze(report, 0);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->bottleneck, "", "no guess at a bound");
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        cr_expect(!feedback_finding(fb, i)->primary);
    cr_expect(s_has_missing(fb, "XVE Stall Reasons"));
    cr_expect(s_has_missing(fb, "XVE Pipelines"));
    cr_expect(s_has_missing(fb, "XVE Array"));
    cr_expect(s_has_missing(fb, "GPU L3:Miss Ratio"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_missing, partial_columns_give_balanced_with_what_was_not_ruled_out)
{
    vtune_report_t *report = s_report1("b70_two_blocks.tsv");
    feedback_t *fb = s_analyze(report, 0);
    /* Issue #14 ("VTune's view of a kernel at ~20% occupancy is 'balanced'"):
     * this real Xe-Forge capture has a 25% peak occupancy with the XVEs idle
     * 53% and stalled 39% of the time and XMX at 5%; it was "balanced". More
     * threads would fill that time: min(100/25, 80/39.6) = 2.02x on 93% of it
     * (GPU memory at 180.7 GB/s, 39.6% of the B580's peak, is the busiest
     * unit). */
    const fb_finding_t *first = s_first(fb, 0);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "occupancy");
    cr_expect(first->primary);
    cr_expect_float_eq(first->importance, (1 - 100 * (120.5 + 60.2) / 456 / 80) * (39.4 + 53.3), 1e-6);
    cr_expect_null(s_finding(fb, 0, "balanced"), "the occupancy model accounts for the waiting");
    cr_expect(s_has_missing(fb, "XVE Stall Reasons"));
    cr_expect(s_has_missing(fb, "XVE Pipelines"));
    cr_expect(!s_has_missing(fb, "GPU Memory Bandwidth"), "it was in the second table");
    cr_expect_eq(feedback_kernel_const(fb, 0)->launches, 1, "two tables, one launch at least");
    cr_expect_not_null(strstr(first->title, "Low peak XVE thread occupancy"), "%s", first->title);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_missing, no_total_time_lists_in_report_order_with_a_note)
{
    const char *tsv = "Computing Task\tXVE Pipelines:ALU0 active(%)\nfirst\t10\nsecond\t90\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0.05);
    cr_assert_eq(feedback_kernel_count(fb), 2);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->name, "first");
    cr_expect(isnan(feedback_kernel_const(fb, 0)->time_ns));
    cr_expect(s_has_note(fb, "report order"));
    cr_expect(s_has_missing(fb, "Computing Task:Total Time"));
    cr_expect_eq(feedback_kernel_const(fb, 0)->launches, 1, "one row, at least one instance");
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* ----- KernelFoundry's JSON ----------------------------------------------- */

Test(vtune_json, collated_counters_give_the_same_verdicts_as_the_report)
{
    vtune_report_t *report = s_report1("vtune_counters.json");
    cr_expect_eq(vtune_report_kernel_count(report), 8);
    const vtune_kernel_t *naive = vtune_report_find(report, "gemm_fp32_naive");
    cr_assert_not_null(naive);
    cr_expect_float_eq(naive->v[VT_ALU0_INSTR], 2950000000.0, 0, "\"2,950,000,000\"");
    cr_expect_float_eq(naive->v[VT_XVE_ACTIVE], 82.5, 1e-9, "\"82.5%%\"");
    cr_expect_float_eq(vtune_report_value(report, "softmax_rows", "Computing Task:Total Time"), 0.018, 1e-12);
    feedback_t *fb = s_analyze(report, 0);
    static const struct {
        const char *kernel, *category;
    } want[] = {
        /* Issue #14: on the B580 gather_rows and layernorm_fwd are bound by
         * GPU memory bandwidth (93% and 88% of its peak), as in the report
         * (see send_stalls_dominating_is_memory_latency); they were
         * memory_latency and balanced. */
        {"gather_rows", "memory_bandwidth"}, {"gemm_xmx_bf16<256, 256, 32>", "compute_xmx"},
        {"gemm_fp32_naive", "compute_alu0"}, {"hash_keys_u64", "compute_alu1"},
        {"layernorm_fwd", "memory_bandwidth"}, {"softmax_rows", "memory_latency"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t k = s_kernel(fb, want[i].kernel);
        cr_assert_neq(k, (size_t) -1, "%s", want[i].kernel);
        cr_expect_str_eq(s_first(fb, k)->category, want[i].category, "%s", want[i].kernel);
    }
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_json, numbers_and_nulls_are_accepted_other_shapes_noted)
{
    const char *json = "{\"k\": {\"XVE Array:Active(%)\": 61.5, \"XVE Array:Stalled\": null, "
                       "\"Computing Task:Total Time\": \"0.5\"}, \"bad\": [1, 2]}";
    vtune_report_t *report = vtune_report_new();
    pf_error_t err;
    cr_assert_eq(vtune_report_parse_json(report, "c.json", json, strlen(json), &err), PF_OK, "%s", err.msg);
    cr_expect_eq(vtune_report_kernel_count(report), 1);
    cr_expect_float_eq(vtune_report_value(report, "k", "XVE Array:Active"), 61.5, 1e-9);
    cr_expect(isnan(vtune_report_value(report, "k", "XVE Array:Stalled")));
    bool noted = false;
    for (size_t i = 0; i < vtune_report_note_count(report); i++)
        noted |= strstr(vtune_report_note(report, i), "1 entry without a column object") != NULL;
    cr_expect(noted);
    vtune_report_destroy(&report);
}

Test(vtune_json, broken_json_gets_a_clear_error)
{
    static const struct {
        const char *text, *expect;
    } cases[] = {
        {"{\"k\": {\"a\": \"1\"", "line 1"},
        {"[1, 2]", "expected a JSON object of kernels"},
        {"\"just a string\"", "expected a JSON object"},
        {"{\"k\xff\": {}}", "not valid JSON"},
        {"", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vtune_report_t *report = vtune_report_new();
        pf_error_t err;
        pf_error_clear(&err);
        cr_expect_eq(vtune_report_parse_json(report, "c.json", cases[i].text, strlen(cases[i].text), &err),
                     PF_EBADINPUT, "case %zu", i);
        cr_expect_not_null(strstr(err.msg, cases[i].expect), "case %zu: %s", i, err.msg);
        cr_expect_not_null(strstr(err.msg, "c.json"), "names the source: %s", err.msg);
        vtune_report_destroy(&report);
    }
    char *deep = malloc(100001);
    memset(deep, '[', 100000);
    deep[100000] = '\0';
    vtune_report_t *report = vtune_report_new();
    pf_error_t err;
    cr_expect_eq(vtune_report_parse_json(report, "deep.json", deep, 100000, &err), PF_EBADINPUT);
    vtune_report_destroy(&report);
    free(deep);
}

/* ----- profiler errors and empty results ------------------------------------ */

Test(vtune_status, a_failed_collection_is_a_profiler_error_quoting_vtune)
{
    vtune_report_t *report = s_report1("error_no_result.txt");
    feedback_t *fb = s_analyze(report, 0.05);
    cr_expect_eq(feedback_status(fb), FB_PROFILER_ERROR);
    cr_assert_eq(feedback_error_count(fb), 1);
    cr_expect_str_eq(feedback_error(fb, 0),
                     "vtune: Cannot find the result directory: /tmp/kf_out/vtune_result.");
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_status, a_table_without_rows_has_no_kernels)
{
    const char *tsv = "Computing Task\tComputing Task:Total Time\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0.05);
    cr_expect_eq(feedback_status(fb), FB_NO_KERNELS);
    cr_expect(s_has_note(fb, "header but no rows"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_status, only_overhead_entries_analyze_the_longest_as_the_seed_does)
{
    const char *tsv = "Computing Task\tComputing Task:Total Time\tXVE Pipelines:ALU0 active(%)\n"
                      "zeCommandListAppendMemoryCopy\t0.002\t\n"
                      "at::native::xpu::VectorizedElementwiseKernel<4, Add>\t0.004\t12\n";
    pf_error_t err;
    vtune_report_t *report;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0.05);
    cr_expect_eq(feedback_status(fb), FB_OK);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->name, "at::native::xpu::VectorizedElementwiseKernel<4, Add>");
    cr_expect(s_has_note(fb, "only runtime entries"));
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* ----- bad input ------------------------------------------------------------ */

/* Parses, and when that works analyzes and renders: nothing may crash. */
static pf_status_t s_try(const char *text, size_t len, pf_error_t *err)
{
    vtune_report_t *report;
    pf_status_t rc = s_parse(text, len, err, &report);
    if (rc == PF_OK) {
        feedback_t *fb = s_analyze(report, 0);
        free(render_text(fb, 300));
        free(render_markdown(fb));
        char *json = render_json(fb, false);
        json_t *root = json_loads(json, 0, NULL);
        cr_expect_not_null(root, "renders valid JSON");
        json_decref(root);
        free(json);
        feedback_destroy(&fb);
    }
    vtune_report_destroy(&report);
    return rc;
}

Test(vtune_bad_input, empty_and_foreign_files_get_a_clear_error)
{
    pf_error_t err;
    cr_expect_eq(s_try("", 0, &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "no VTune hotspots table"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "test.tsv"), "%s", err.msg);
    const char *ncu = "\"ID\",\"Kernel Name\"\n\"0\",\"k\"\n";
    cr_expect_eq(s_try(ncu, strlen(ncu), &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "Computing Task"), "%s", err.msg);
    const char *colon = "Computing Task:Computing Task:Total Time\nk:0.5\n";
    cr_expect_eq(s_try(colon, strlen(colon), &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "colon"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "line 1"), "%s", err.msg);
}

Test(vtune_bad_input, truncated_files_never_crash)
{
    const char *files[] = {"kf_pass1_full.tsv", "comma_quoted.csv", "vtune_counters.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, VT "%s", files[i]);
        size_t len;
        char *bytes = test_read_file(path, &len);
        for (size_t cut = 0; cut < len; cut += 37) {
            pf_error_t err;
            pf_status_t rc = s_try(bytes, cut, &err);
            cr_expect(rc == PF_OK || rc == PF_EBADINPUT, "%s cut at %zu: %s", files[i], cut, err.msg);
            if (rc != PF_OK)
                cr_expect_neq(err.msg[0], '\0');
            vtune_report_t *report = vtune_report_new();
            rc = vtune_report_parse_json(report, "cut.json", bytes, cut, &err);
            cr_expect(rc == PF_OK || rc == PF_EBADINPUT);
            vtune_report_destroy(&report);
        }
        free(bytes);
    }
}

Test(vtune_bad_input, truncated_inside_a_quoted_name_says_so)
{
    size_t len;
    char *bytes = test_read_file(VT "comma_quoted.csv", &len);
    const char *mid = strstr(bytes, "\"reduce_sum<") + 6;
    pf_error_t err;
    cr_expect_eq(s_try(bytes, (size_t) (mid - bytes), &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "quoted field"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "line 3"), "%s", err.msg);
    free(bytes);
}

Test(vtune_bad_input, short_long_and_stray_rows_are_noted)
{
    const char *tsv = "Computing Task\tComputing Task:Total Time\tXVE Array:Stalled(%)\n"
                      "short\t0.5\n"
                      "long\t0.5\t10\t99\n"
                      "Elapsed Time: 3.2s\n"
                      "ok\t0.25\t20\n";
    vtune_report_t *report;
    pf_error_t err;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    cr_expect_eq(vtune_report_kernel_count(report), 2, "short and ok");
    cr_expect_null(vtune_report_find(report, "long"));
    cr_expect_null(vtune_report_find(report, "Elapsed Time: 3.2s"));
    const char *want[] = {"line 2) had fewer fields", "line 3) had more fields", "line 4) had a single field"};
    for (size_t w = 0; w < 3; w++) {
        bool found = false;
        for (size_t i = 0; i < vtune_report_note_count(report); i++)
            found |= strstr(vtune_report_note(report, i), want[w]) != NULL;
        cr_expect(found, "note: %s", want[w]);
    }
    vtune_report_destroy(&report);
}

Test(vtune_bad_input, program_output_before_the_table_is_ignored)
{
    const char *text = "Running benchmark...\n3 passed in 2.1s\n\n"
                       "Computing Task\tComputing Task:Total Time\nk\t0.5\n";
    vtune_report_t *report;
    pf_error_t err;
    cr_assert_eq(s_parse(text, strlen(text), &err, &report), PF_OK, "%s", err.msg);
    cr_expect_eq(vtune_report_kernel_count(report), 1);
    vtune_report_destroy(&report);
}

Test(vtune_bad_input, random_bit_flips_never_crash)
{
    size_t len;
    char *orig = test_read_file(VT "kf_pass1_full.tsv", &len);
    char *bytes = malloc(len);
    unsigned seed = 4242;
    for (int round = 0; round < 200; round++) {
        memcpy(bytes, orig, len);
        for (int flips = 0; flips < 20; flips++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            bytes[at] ^= (char) (1u << (seed % 8));
        }
        pf_error_t err;
        pf_status_t rc = s_try(bytes, len, &err);
        cr_expect(rc == PF_OK || rc == PF_EBADINPUT || rc == PF_ETOOBIG, "round %d: %s", round, err.msg);
    }
    free(bytes);
    free(orig);
}

Test(vtune_bad_input, garbage_bytes_never_crash)
{
    unsigned seed = 99;
    char buf[4096];
    for (int round = 0; round < 100; round++) {
        size_t len = 0;
        if (round % 2)
            len = (size_t) snprintf(buf, sizeof buf, "Computing Task%c", "\t;,"[round % 3]);
        for (; len < sizeof buf; len++) {
            seed = seed * 1103515245u + 12345u;
            buf[len] = (char) (seed >> 16);
        }
        pf_error_t err;
        pf_status_t rc = s_try(buf, sizeof buf, &err);
        cr_expect(rc == PF_OK || rc == PF_EBADINPUT || rc == PF_ETOOBIG, "round %d: %s", round, err.msg);
    }
}

Test(vtune_bad_input, invalid_utf8_names_still_give_valid_json)
{
    const char *tsv = "Computing Task\tComputing Task:Total Time\tXVE Pipelines:ALU0 active(%)\n"
                      "k\xff\xfe\xc3(\t0.5\t70\n";
    vtune_report_t *report;
    pf_error_t err;
    cr_assert_eq(s_parse(tsv, strlen(tsv), &err, &report), PF_OK, "%s", err.msg);
    feedback_t *fb = s_analyze(report, 0);
    feedback_set_collated(fb, vtune_analyze_collated(report));
    char *json = render_json(fb, true);
    json_t *root = json_loads(json, 0, NULL);
    cr_assert_not_null(root, "%s", json);
    const char *name = json_string_value(
        json_object_get(json_array_get(json_object_get(root, "kernels"), 0), "name"));
    cr_expect_str_eq(name, "k\x3f\x3f\x3f(");
    json_decref(root);
    free(json);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

Test(vtune_bad_input, ten_megabyte_field_is_refused)
{
    size_t big = 10u << 20;
    const char *head = "Computing Task\tComputing Task:Total Time\n\"";
    size_t n = strlen(head);
    char *tsv = malloc(n + big + 8);
    memcpy(tsv, head, n);
    memset(tsv + n, 'a', big);
    memcpy(tsv + n + big, "\"\t1\n", 5);
    pf_error_t err;
    cr_expect_eq(s_try(tsv, strlen(tsv), &err), PF_ETOOBIG);
    cr_expect_not_null(strstr(err.msg, "longer than"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "line 2"), "%s", err.msg);
    /* Unquoted, the same field is refused the same way. */
    memmove(tsv + n - 1, tsv + n, big + 5);
    cr_expect_eq(s_try(tsv, strlen(tsv), &err), PF_ETOOBIG);
    free(tsv);
}

Test(vtune_bad_input, hundred_thousand_columns_are_refused)
{
    size_t cols = 100000;
    char *tsv = malloc(cols * 8 + 64);
    size_t n = (size_t) snprintf(tsv, 64, "Computing Task");
    for (size_t c = 1; c < cols; c++)
        n += (size_t) snprintf(tsv + n, 16, "\tc%zu", c % 1000);
    tsv[n++] = '\n';
    pf_error_t err;
    cr_expect_eq(s_try(tsv, n, &err), PF_ETOOBIG);
    cr_expect_not_null(strstr(err.msg, "columns"), "%s", err.msg);
    free(tsv);
}

Test(vtune_bad_input, more_than_the_kernel_limit_is_refused)
{
    size_t rows = VTUNE_MAX_KERNELS + 1;
    char *tsv = malloc(rows * 24 + 64);
    size_t n = (size_t) snprintf(tsv, 64, "Computing Task\tComputing Task:Total Time\n");
    for (size_t r = 0; r < rows; r++)
        n += (size_t) snprintf(tsv + n, 24, "k%zu\t0.001\n", r);
    pf_error_t err;
    vtune_report_t *report;
    cr_expect_eq(s_parse(tsv, n, &err, &report), PF_ETOOBIG);
    cr_expect_not_null(strstr(err.msg, "kernels"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "line 100002"), "%s", err.msg);
    vtune_report_destroy(&report);
    free(tsv);
}

/* ----- rendering ----------------------------------------------------------- */

Test(vtune_render, text_and_json_name_every_kernel_and_its_action)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    cr_expect_str_eq(feedback_profiler(fb), "vtune");
    cr_expect_str_eq(feedback_device(fb), "Intel Arc B580");
    char *text = render_text(fb, 0);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        cr_expect_not_null(strstr(text, feedback_kernel_const(fb, k)->name), "%s", text);
        cr_expect_not_null(strstr(text, s_first(fb, k)->action));
    }
    free(text);
    char *json = render_json(fb, false);
    json_t *root = json_loads(json, 0, NULL);
    cr_assert_not_null(root);
    cr_expect_str_eq(json_string_value(json_object_get(root, "profiler")), "vtune");
    cr_expect_eq(json_array_size(json_object_get(root, "kernels")), 6);
    json_decref(root);
    free(json);
    json_t *collated = vtune_analyze_collated(report);
    cr_assert_not_null(collated);
    cr_expect_eq(json_array_size(json_object_get(collated, "kernels")), 8);
    json_decref(collated);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* ----- the models of issue #14 (docs/intel.md, "Models") --------------------- */

/* A latency-bound kernel at 21% occupancy: KernelFoundry's rules call it
 * balanced (no Send stall over SBID, no pipe over its mark); more threads
 * would fill the time it waits, so occupancy comes first. */
Test(vtune_models, a_latency_bound_kernel_at_low_occupancy_gets_occupancy_first)
{
    vtune_report_t *report = s_report1("low_occupancy.tsv");
    feedback_t *fb = s_analyze(report, 0);
    const fb_finding_t *first = s_first(fb, 0);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "occupancy", "%s", first->title);
    cr_expect(first->primary);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->bottleneck, "occupancy");
    cr_expect_str_eq(first->source, "profeed:threads_in_flight");
    /* min(100/21, 80/25 (L3 busy 25%)) = 3.2x, on idle 26% + stalled 50% x
     * 36/38 (latency reasons of all reasons). */
    double want = (1 - 1 / 3.2) * (0.26 + 0.50 * 36 / 38);
    cr_expect_float_eq(first->importance, 100 * want, 1e-6);
    cr_expect_float_eq(first->speedup, first->importance, 1e-9);
    cr_expect_null(s_finding(fb, 0, "balanced"));
    /* The dependency stalls are a cause of their own, sized by their time. */
    const fb_finding_t *dep = s_finding(fb, 0, "dependency_stalls");
    cr_assert_not_null(dep);
    cr_expect_str_eq(dep->source, "profeed:stall_time");
    cr_expect_float_eq(dep->importance, 100 * 0.50 * 32 / 38, 1e-6);
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* Send stalls in a latency-bound kernel: their share of the time (on an
 * unknown device, where gather_rows's bandwidth is no share of a peak). */
Test(vtune_models, memory_latency_is_sized_by_the_send_stalls_time)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze_on(report, 0, NULL);
    const fb_finding_t *f = s_first(fb, s_kernel(fb, "gather_rows"));
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "memory_latency");
    cr_expect_str_eq(f->source, "profeed:send_stalls");
    cr_expect_float_eq(f->importance, 71.8 * 48.6 / (48.6 + 9.1 + 2.3 + 0.4), 1e-6);
    /* Every finding: a gain in 0..100 from a named model, or no claim. */
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *x = feedback_finding(fb, i);
        cr_expect_eq(strncmp(x->source, "profeed:", 8), 0, "%s: %s", x->category, x->source);
        cr_expect(isnan(x->speedup) || (x->speedup >= 0 && x->speedup < 100), "%s", x->category);
        if (!isnan(x->speedup))
            cr_expect_float_eq(x->speedup, x->importance, 1e-9, "%s", x->category);
        else
            cr_expect(!x->primary, "%s: advice without a model never leads", x->category);
    }
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* XMX unused and register spills: the counters cannot size them, so they
 * carry no gain and never displace the bound. */
Test(vtune_models, advice_the_counters_cannot_size_claims_no_gain)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    size_t naive = s_kernel(fb, "gemm_fp32_naive");
    const fb_finding_t *x = s_finding(fb, naive, "xmx_unused");
    cr_assert_not_null(x);
    cr_expect(isnan(x->speedup));
    cr_expect_str_eq(x->source, "profeed:none");
    cr_expect_str_eq(s_first(fb, naive)->category, "compute_alu0");
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* GPU memory bandwidth is a unit when the device is known: gather_rows moves
 * 422 of the B580's 456 GB/s, so it is bound there with 7.5% headroom, and its
 * Send stalls are that bound's evidence, not a finding of their own. */
Test(vtune_models, memory_bandwidth_near_the_peak_is_the_bound)
{
    vtune_report_t *report = s_report1("kf_pass1_full.tsv");
    feedback_t *fb = s_analyze(report, 0);
    size_t k = s_kernel(fb, "gather_rows");
    const fb_finding_t *f = s_first(fb, k);
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "memory_bandwidth");
    cr_expect_str_eq(f->source, "profeed:headroom");
    cr_expect_float_eq(f->importance, 100 - 100 * (380.2 + 41.7) / 456, 1e-6);
    cr_expect(s_evidence(f, "XVE Stall Reasons:Send", 48.6), "Send stalls as the bound's evidence");
    cr_expect_null(s_finding(fb, k, "memory_latency"));
    cr_expect(s_has_note(fb, "\"softmax_rows\": VTune's GPU memory bandwidth (504 GB/s) exceeds"),
              "a figure over the peak is noted, not used");
    feedback_destroy(&fb);
    vtune_report_destroy(&report);
}

/* The close call (close_call.h) of a VTune kernel: judged again on noisy
 * readings of its sampled columns (vtune_noise.h), the same way on every run. */
Test(vtune_close_call, a_pipe_on_the_busy_line_is_a_close_call_and_one_far_from_it_is_not)
{
    static const char header[] =
        "Computing Task\tComputing Task:Total Time\tComputing Task:Average Time\tComputing Task:Instance Count\t"
        "Computing Task:SIMD Width\tXVE Array:Active(%)\tXVE Array:Stalled(%)\tXVE Array:Idle(%)\t"
        "XVE Threads Occupancy(%)\tXVE Stall Reasons:Send(%)\tXVE Stall Reasons:Barrier(%)\t"
        "XVE Stall Reasons:SBID(%)\tXVE Stall Reasons:Instruction Fetch(%)\tXVE Stall Reasons:Dist or Acc(%)\t"
        "XVE Pipelines:ALU0 active(%)\tXVE Pipelines:ALU1 active(%)\tXVE Pipelines:XMX active(%)\n";
    /* gemm_fp32_naive of kf_pass1_full.tsv with its ALU0 at 60.3%, a third
     * of a point over the 60% at which a unit bounds the kernel, and at 78.3%
     * as captured. */
    static const char *const rows[] = {
        "near\t0.0874\t0.000874\t100\t16\t82.5\t14.1\t3.4\t91.0\t2.8\t0.0\t1.2\t0.6\t4.1\t60.3\t12.6\t0.0\n",
        "far\t0.0874\t0.000874\t100\t16\t82.5\t14.1\t3.4\t91.0\t2.8\t0.0\t1.2\t0.6\t4.1\t78.3\t12.6\t0.0\n",
    };
    for (size_t i = 0; i < 2; i++) {
        char text[2048];
        snprintf(text, sizeof text, "%s%s", header, rows[i]);
        vtune_report_t *report;
        pf_error_t err;
        cr_assert_eq(s_parse(text, strlen(text), &err, &report), PF_OK, "%s", err.msg);
        feedback_t *fb = s_analyze(report, 0);
        const fb_kernel_t *k = feedback_kernel_const(fb, 0);
        cr_assert_str_eq(k->bottleneck, "compute_alu0");
        cr_assert_eq(k->close_of, NOISE_READINGS, "every kernel with a verdict is judged");
        cr_assert_eq(test_close_readings(k), k->close_of, "every reading is counted once");
        char *out = render_text(fb, 0);
        if (i == 0) {
            cr_assert_gt(k->close_count, 0, "60.3%% is within the noise of the line");
            cr_assert_str_eq(k->close[0].category, "balanced");
            cr_assert(strstr(out, "readings lead with balanced rather than compute_alu0"), "%s", out);
        } else {
            cr_assert_eq(k->close_same, NOISE_READINGS, "78.3%% is far from every line");
            cr_assert_null(strstr(out, "Close call"), "%s", out);
        }
        free(out);
        feedback_destroy(&fb);
        vtune_report_destroy(&report);
    }
}
