/* Nsight Compute feedback on real H200 captures: for every kernel of the
 * ground truth (tests/fixtures/ncu/h200/README.md), the first finding names the
 * kernel's dominant character when the capture measured it (--set full), and
 * makes no claim the capture does not support when it measured less (the
 * 24-metric raw page, the details page, SpeedOfLight alone, three sections).
 * tests/test_ncu_accuracy.c holds every corpus to the same rules. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "feedback.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "ncu_truth.h"
#include "render.h"

#define H200 PF_FIXTURE_DIR "/ncu/h200/"

/* The ground truth table (as in tests/fixtures/ncu/h200/truth.txt): kernel and
 * what its first finding must say. */
static const struct {
    const char *kernel;
    const char *expect;
} s_truth[] = {
    {"vec_add", "dram_bound"},
    {"strided_copy", "uncoalesced_access"},
    {"transpose_naive", "uncoalesced_access"},
    {"matmul_naive", "l1_bound"},
    {"matmul_tiled", "l1_bound"},
    {"bank_conflict", "bank_conflicts"},
    {"fma_heavy", "compute_bound:fma"},
    {"pointer_chase", "small_grid"},
    {"atomic_hist", "contention"},
};

/* Parses the files as the passes of one job and analyzes every kernel. */
static feedback_t *s_analyze(const char *const *files, size_t count, double min_share)
{
    ncu_data_t *data = ncu_data_new();
    cr_assert_not_null(data);
    for (size_t i = 0; i < count; i++) {
        pf_error_t err;
        pf_error_clear(&err);
        char path[512];
        snprintf(path, sizeof path, H200 "%s", files[i]);
        cr_assert_eq(ncu_csv_parse_file(data, path, &err), PF_OK, "%s: %s", files[i], err.msg);
    }
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = min_share;
    feedback_t *fb = ncu_analyze(data, &options, NULL);
    cr_assert_not_null(fb);
    ncu_data_destroy(&data);
    return fb;
}

static size_t s_kernel(const feedback_t *fb, const char *name)
{
    size_t n = strlen(name);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const char *kname = feedback_kernel_const(fb, k)->name;
        if (strncmp(kname, name, n) == 0 && kname[n] == '(')
            return k;
    }
    return (size_t) -1;
}

static const fb_finding_t *s_first(const feedback_t *fb, size_t kernel)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        if (feedback_finding(fb, i)->kernel == kernel)
            return feedback_finding(fb, i);
    return NULL;
}

/* `exact`: every first finding is the expected one. Otherwise (a capture that
 * measured less) each is the expected one or a less specific finding consistent
 * with it, never a wrong claim. */
static void s_expect_ground_truth(const char *const *files, size_t count, bool exact)
{
    feedback_t *fb = s_analyze(files, count, 0);
    cr_expect_eq(feedback_status(fb), FB_OK);
    cr_expect_eq(feedback_kernel_count(fb), 9);
    for (size_t t = 0; t < sizeof s_truth / sizeof s_truth[0]; t++) {
        size_t k = s_kernel(fb, s_truth[t].kernel);
        cr_assert_neq(k, (size_t) -1, "%s missing from the feedback", s_truth[t].kernel);
        const fb_finding_t *first = s_first(fb, k);
        cr_assert_not_null(first, "%s: no finding", s_truth[t].kernel);
        cr_expect(first->primary, "%s: first finding is not the primary limiter", s_truth[t].kernel);
        truth_verdict_t v = truth_judge(first, s_truth[t].expect);
        cr_expect(exact ? v == TRUTH_RIGHT : v != TRUTH_WRONG, "%s: first finding is %s (%s), want %s%s",
                  s_truth[t].kernel, first->category, first->title, exact ? "" : "at least consistent with ",
                  s_truth[t].expect);
        cr_expect_gt(first->evidence_count, 0, "%s: first finding has no evidence", s_truth[t].kernel);
        cr_expect_neq(first->action[0], '\0', "%s: first finding has no action", s_truth[t].kernel);
    }
    feedback_destroy(&fb);
}

Test(ncu_ground_truth, raw_page_human_units)
{
    const char *files[] = {"raw_metrics.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, raw_page_base_units)
{
    const char *files[] = {"raw_metrics_base_units.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, raw_page_after_program_stdout)
{
    const char *files[] = {"raw_metrics_mixed_stdout.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, details_page_only)
{
    const char *files[] = {"details_sections.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, full_set_raw_and_details)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    s_expect_ground_truth(files, 2, true);
}

Test(ncu_ground_truth, three_pass_job)
{
    const char *files[] = {"pass1_sol.csv", "pass2_memory.csv", "pass3_warps_occupancy.csv"};
    s_expect_ground_truth(files, 3, false);
}

Test(ncu_feedback, kernels_are_ranked_by_time_share)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    cr_assert_eq(feedback_kernel_count(fb), 9);
    cr_expect_eq(strncmp(feedback_kernel_const(fb, 0)->name, "atomic_hist(", 12), 0);
    cr_expect_eq(strncmp(feedback_kernel_const(fb, 1)->name, "pointer_chase(", 14), 0);
    cr_expect_eq(strncmp(feedback_kernel_const(fb, 2)->name, "bank_conflict(", 14), 0);
    double total = 0;
    for (size_t k = 0; k < 9; k++) {
        total += feedback_kernel_const(fb, k)->share;
        if (k > 0)
            cr_expect_geq(feedback_kernel_const(fb, k - 1)->time_ns, feedback_kernel_const(fb, k)->time_ns);
    }
    cr_expect_float_eq(total, 1.0, 1e-9);
    /* atomic_hist took 10.79 ms of about 27 ms. */
    cr_expect_float_eq(feedback_kernel_const(fb, 0)->time_ns, 10791104, 1);
    feedback_destroy(&fb);
}

Test(ncu_feedback, default_threshold_keeps_kernels_above_five_percent_and_says_so)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0.05);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++)
        cr_expect_geq(feedback_kernel_const(fb, k)->share, 0.05);
    cr_expect_eq(feedback_kernel_count(fb), 5);
    bool noted = false;
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        noted |= strstr(feedback_note(fb, i), "4 more kernels") != NULL;
    cr_expect(noted, "the kernels left out are not mentioned");
    feedback_destroy(&fb);
}

Test(ncu_feedback, evidence_carries_the_numbers_that_prove_it)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    const fb_finding_t *bank = s_first(fb, s_kernel(fb, "bank_conflict"));
    cr_expect_float_eq(bank->evidence[0].value, 1.04e9, 0.01e9, "conflicts: %g", bank->evidence[0].value);
    /* profeed's own estimate ranks it (replays take 97% of the L1/shared pipe's
     * work); NCU's SharedMemoryConflicts estimate is quoted beside it. */
    cr_expect_float_eq(bank->speedup, 93, 2, "estimated gain %g", bank->speedup);
    bool ncu_quoted = false;
    for (size_t e = 0; e < bank->evidence_count; e++)
        ncu_quoted |= strcmp(bank->evidence[e].metric, "SharedMemoryConflicts") == 0 &&
                      fabs(bank->evidence[e].value - 96.86) < 0.01;
    cr_expect(ncu_quoted, "NCU's SharedMemoryConflicts estimate (96.86%%) is quoted");
    const fb_finding_t *vec = s_first(fb, s_kernel(fb, "vec_add"));
    cr_expect_str_eq(vec->category, "dram_bound");
    cr_expect_not_null(strstr(vec->title, "72% of peak"), "%s", vec->title);
    /* Headroom to what DRAM attains at best (90% of peak, NCU_ATTAIN_DRAM): 1 - 72/90. */
    cr_expect_float_eq(vec->speedup, 20, 1, "headroom to the DRAM roof: %g", vec->speedup);
    const fb_finding_t *fma = s_first(fb, s_kernel(fb, "fma_heavy"));
    bool flops = false;
    for (size_t e = 0; e < fma->evidence_count; e++)
        flops |= strcmp(fma->evidence[e].metric, "fp32_flops_per_second") == 0 &&
                 fma->evidence[e].value > 45e12 && fma->evidence[e].value < 56e12;
    cr_expect(flops, "fma_heavy reaches ~50 TFLOP/s FP32");
    const fb_finding_t *strided = s_first(fb, s_kernel(fb, "strided_copy"));
    cr_expect_float_eq(strided->evidence[0].value, 4.0, 0.01, "4 of 32 bytes per sector");
    feedback_destroy(&fb);
}

Test(ncu_feedback, ncu_rules_merge_into_findings_instead_of_repeating_them)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        size_t seen_categories = 0;
        char categories[32][32];
        for (size_t i = 0; i < feedback_finding_count(fb); i++) {
            const fb_finding_t *f = feedback_finding(fb, i);
            if (f->kernel != k)
                continue;
            for (size_t j = 0; j < seen_categories; j++)
                cr_expect_str_neq(categories[j], f->category, "kernel %zu has two %s findings", k, f->category);
            cr_assert_lt(seen_categories, 32);
            snprintf(categories[seen_categories++], 32, "%s", f->category);
            cr_expect_null(strstr(f->title, "http"), "URLs are removed");
            cr_expect_null(strstr(f->title, "L2 Compression"), "L2 compression noise is dropped");
        }
    }
    const fb_finding_t *strided = s_first(fb, s_kernel(fb, "strided_copy"));
    cr_expect_not_null(strstr(strided->source, "UncoalescedGlobalAccess"), "source: %s", strided->source);
    feedback_destroy(&fb);
}

Test(ncu_feedback, missing_metrics_are_listed_not_guessed)
{
    const char *files[] = {"err_badmetric_stdout.txt"};
    feedback_t *fb = s_analyze(files, 1, 0);
    cr_expect_eq(feedback_status(fb), FB_OK);
    cr_expect_eq(feedback_finding_count(fb), 0, "nothing can be judged without metrics");
    cr_expect_gt(feedback_missing_count(fb), 0);
    bool sol = false;
    for (size_t i = 0; i < feedback_missing_count(fb); i++)
        sol |= strstr(feedback_missing(fb, i), "SpeedOfLight") != NULL;
    cr_expect(sol, "the pass plan to add is named");
    feedback_destroy(&fb);
}

static feedback_t *s_error_capture(const char *file)
{
    const char *files[] = {file};
    return s_analyze(files, 1, 0);
}

Test(ncu_errors, kernel_crash_is_a_profiler_error_quoting_ncu)
{
    feedback_t *fb = s_error_capture("err_crash_stdout.txt");
    cr_expect_eq(feedback_status(fb), FB_PROFILER_ERROR);
    cr_assert_geq(feedback_error_count(fb), 1);
    cr_expect_not_null(strstr(feedback_error(fb, 0), "LaunchFailed"));
    feedback_destroy(&fb);
}

Test(ncu_errors, missing_executable_is_a_profiler_error)
{
    feedback_t *fb = s_error_capture("err_noexe_stdout.txt");
    cr_expect_eq(feedback_status(fb), FB_PROFILER_ERROR);
    cr_assert_geq(feedback_error_count(fb), 1);
    cr_expect_not_null(strstr(feedback_error(fb, 0), "does not exist"));
    cr_expect_eq(feedback_kernel_count(fb), 0);
    feedback_destroy(&fb);
}

Test(ncu_errors, no_kernels_profiled_has_its_own_status)
{
    feedback_t *fb = s_error_capture("err_nokernel_stdout.txt");
    cr_expect_eq(feedback_status(fb), FB_NO_KERNELS);
    cr_expect_eq(feedback_kernel_count(fb), 0);
    feedback_destroy(&fb);
}

Test(ncu_render, text_names_every_analyzed_kernel_and_its_action)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    char *text = render_text(fb, 0);
    cr_assert_not_null(text);
    for (size_t t = 0; t < sizeof s_truth / sizeof s_truth[0]; t++)
        cr_expect_not_null(strstr(text, s_truth[t].kernel), "%s not in text", s_truth[t].kernel);
    cr_expect_not_null(strstr(text, "Action: "));
    cr_expect_not_null(strstr(text, "NVIDIA H200"));
    free(text);
    feedback_destroy(&fb);
}

Test(ncu_render, max_chars_keeps_the_most_important_findings)
{
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    char *full = render_text(fb, 0);
    char *short_text = render_text(fb, 2000);
    cr_assert_not_null(full);
    cr_assert_not_null(short_text);
    cr_expect_gt(strlen(full), 2000);
    cr_expect_leq(strlen(short_text), 2000);
    cr_expect_not_null(strstr(short_text, "Global atomic contention"), "the top finding stays");
    cr_expect_not_null(strstr(short_text, "left out to fit"), "what was left out is said");
    char *tiny = render_text(fb, 40);
    cr_assert_not_null(tiny);
    cr_expect_leq(strlen(tiny), 40);
    free(full);
    free(short_text);
    free(tiny);
    feedback_destroy(&fb);
}

Test(ncu_render, json_is_valid_and_structured)
{
    /* --set full: the capture that measures atomic_hist's atomics. */
    const char *files[] = {"full_raw.csv", "full_details.csv"};
    feedback_t *fb = s_analyze(files, 2, 0);
    char *text = render_json(fb, false);
    cr_assert_not_null(text);
    json_error_t error;
    json_t *root = json_loads(text, 0, &error);
    cr_assert_not_null(root, "invalid JSON: %s", error.text);
    cr_expect_str_eq(json_string_value(json_object_get(root, "status")), "ok");
    json_t *kernels = json_object_get(root, "kernels");
    cr_assert_eq(json_array_size(kernels), 9);
    json_t *first = json_array_get(json_object_get(json_array_get(kernels, 0), "findings"), 0);
    cr_expect_str_eq(json_string_value(json_object_get(first, "category")), "contention");
    cr_expect(json_is_true(json_object_get(first, "primary")));
    cr_expect(json_array_size(json_object_get(first, "evidence")) > 0);
    json_decref(root);
    free(text);
    feedback_destroy(&fb);
}

Test(ncu_render, markdown_has_a_table_per_kernel)
{
    const char *files[] = {"raw_metrics.csv"};
    feedback_t *fb = s_analyze(files, 1, 0);
    char *md = render_markdown(fb);
    cr_assert_not_null(md);
    size_t tables = 0;
    for (const char *p = md; (p = strstr(p, "| # | Finding")); p++)
        tables++;
    cr_expect_eq(tables, 9);
    free(md);
    feedback_destroy(&fb);
}

/* Many kernels, many findings: the findings array grows while a kernel's
 * analysis still refers to its primary finding (a use-after-free the fuzzer
 * found in the unitrace analyzer; ASan fails this test if it comes back). */
Test(ncu_feedback, findings_stay_valid_when_the_list_grows)
{
    FILE *f = fopen(H200 "raw_metrics.csv", "rb");
    cr_assert_not_null(f);
    static char src[1 << 16];
    size_t len = fread(src, 1, sizeof src, f);
    fclose(f);
    src[len] = '\0';
    /* Header and units rows, then the nine launches five times under new names. */
    char *rows = strstr(src, "\n\"0\",");
    cr_assert_not_null(rows);
    rows++;
    size_t head = (size_t) (rows - src);
    size_t cap = len * 6;
    char *csv = malloc(cap);
    memcpy(csv, src, head);
    size_t n = head;
    int id = 0;
    for (int copy = 0; copy < 5; copy++) {
        for (const char *line = rows; *line;) {
            const char *end = strchr(line, '\n');
            size_t l = end ? (size_t) (end - line) + 1 : strlen(line);
            const char *name = strstr(line, "(");
            const char *comma = strchr(line, ',');
            cr_assert(name && comma);
            n += (size_t) snprintf(csv + n, cap - n, "\"%d\"", id++);
            /* Copy up to the kernel name's '(' and add a suffix to the name. */
            size_t upto = (size_t) (name - comma);
            memcpy(csv + n, comma, upto);
            n += upto;
            n += (size_t) snprintf(csv + n, cap - n, "_v%d", copy);
            memcpy(csv + n, name, l - (size_t) (name - line));
            n += l - (size_t) (name - line);
            line += l;
        }
    }
    ncu_data_t *data = ncu_data_new();
    pf_error_t err;
    cr_assert_eq(ncu_csv_parse_buffer(data, "many", csv, n, &err), PF_OK, "%s", err.msg);
    cr_expect_eq(ncu_data_count(data), 45);
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    feedback_t *fb = ncu_analyze(data, &options, NULL);
    cr_expect_eq(feedback_kernel_count(fb), 45);
    cr_expect_gt(feedback_finding_count(fb), 32, "enough findings to grow the list");
    feedback_destroy(&fb);
    ncu_data_destroy(&data);
    free(csv);
}

/* Cheaper pass plans of 2026-11 (the default plan of that time among them),
 * captured live on an H200 by bench/ncu_plans.sh: none may make a wrong claim.
 * Today's default plan is held to --set full's answers in test_ncu_accuracy. */
Test(ncu_ground_truth, plan_speed_of_light_only)
{
    const char *files[] = {"../h200-plans/plan_sol.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, plan_profeed_core_metrics)
{
    const char *files[] = {"../h200-plans/plan_profeed_core.csv"};
    s_expect_ground_truth(files, 1, false);
}

Test(ncu_ground_truth, plan_five_sections)
{
    const char *files[] = {"../h200-plans/plan_five.csv"};
    s_expect_ground_truth(files, 1, false);
}
