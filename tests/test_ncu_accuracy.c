/* The ground truth of every committed H200 capture (tests/fixtures/ncu/<corpus>/truth.txt):
 * the default plan (core) and --set full name every expected first finding; the partial
 * plans (SpeedOfLight alone, three sections) make no wrong claim, though they may say less;
 * and no finding anywhere reports a share over 100% or names a unit its capture did not
 * measure. bench/accuracy.py prints the same judgement as the table in docs/ncu.md.
 *
 * Expectations profeed does not meet yet are listed in known_misses.txt beside this
 * suite's fixtures, with the reason; each must still be a miss (a fix fails the test until
 * its line goes), so the list can only shrink honestly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "feedback.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "ncu_kernel.h"
#include "ncu_rule_pipe.h"
#include "ncu_truth.h"
#include "ncu_units.h"

#define NCU PF_FIXTURE_DIR "/ncu/"

typedef struct {
    char fileset[32], kernel[96], expect[64];
} truth_t;

static size_t s_truth_load(const char *corpus, truth_t *out, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, NCU "%s/truth.txt", corpus);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        cr_assert_lt(n, cap, "%s: more than %zu truth lines; raise the table's size", path, cap);
        cr_assert_eq(sscanf(line, "%31s %95s %63s", out[n].fileset, out[n].kernel, out[n].expect), 3,
                     "%s: %s", path, line);
        n++;
    }
    fclose(f);
    return n;
}

/* Whether known_misses.txt lists this kernel under this plan ("*" for every plan). */
static bool s_known_miss(const char *corpus, const char *fileset, const char *kernel, const char *plan)
{
    FILE *f = fopen(NCU "known_misses.txt", "r");
    cr_assert_not_null(f);
    char line[512], c[64], fs[32], k[96], p[32];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%63s %31s %95s %31s", c, fs, k, p) == 4)
            found = strcmp(c, corpus) == 0 && strcmp(fs, fileset) == 0 && strcmp(k, kernel) == 0 &&
                    (strcmp(p, "*") == 0 || strcmp(p, plan) == 0);
    fclose(f);
    return found;
}

typedef struct {
    ncu_data_t *data;
    ncu_kernels_t *kernels;
    feedback_t *fb;
} capture_t;

/* The feedback made (again) from the capture's launches, as read or changed
 * by a test. */
static void s_reanalyze(capture_t *cap)
{
    feedback_destroy(&cap->fb);
    ncu_kernels_destroy(&cap->kernels);
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    cap->fb = ncu_analyze(cap->data, &options, NULL);
    cap->kernels = ncu_kernels_group(cap->data);
    cr_assert_not_null(cap->fb);
    cr_assert_not_null(cap->kernels);
}

static capture_t s_capture(const char *folder, const char *const *files)
{
    capture_t cap = {.data = ncu_data_new()};
    cr_assert_not_null(cap.data);
    for (size_t i = 0; files[i]; i++) {
        char path[512];
        snprintf(path, sizeof path, NCU "%s/%s", folder, files[i]);
        FILE *here = fopen(path, "rb");
        if (here)
            fclose(here);
        else /* kept as .xz, unpacked by the build (tests/CMakeLists.txt) */
            snprintf(path, sizeof path, PF_UNPACKED_FIXTURE_DIR "/ncu/%s/%s", folder, files[i]);
        pf_error_t err;
        pf_error_clear(&err);
        cr_assert_eq(ncu_csv_parse_file(cap.data, path, &err), PF_OK, "%s: %s", path, err.msg);
    }
    /* The default plan stopped collecting ncu's SM summary (sm__throughput)
     * after most of these captures were made: read without it, they are what
     * the plan collects today (the analysis rebuilds it, ncu_summary.c). */
    if (strcmp(files[0], "core_mwa_raw.csv") == 0)
        for (size_t i = 0; i < ncu_data_count(cap.data); i++)
            ncu_data_at(cap.data, i)->v[NM_SM_PCT] = NAN;
    s_reanalyze(&cap);
    return cap;
}

static void s_capture_destroy(capture_t *cap)
{
    feedback_destroy(&cap->fb);
    ncu_kernels_destroy(&cap->kernels);
    ncu_data_destroy(&cap->data);
}

/* Whether a group's launch IDs ("2-4,31", possibly ending in "...") hold id. */
static bool s_ids_hold(const char *ids, long id)
{
    for (const char *p = ids; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            return false;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        if (lo <= id && id <= hi)
            return true;
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return false;
}

/* The feedback kernel for a truth line: by name up to its arguments, or by "#ID", the
 * group of its launch (launches of one kernel with one grid and block are analyzed
 * together unless they behave differently, when each group lists its launch IDs;
 * bench/accuracy.py resolves IDs the same way). */
static size_t s_kernel(const capture_t *cap, const char *kernel, const ncu_kernel_t **group)
{
    *group = NULL;
    const ncu_launch_t *launch = NULL;
    if (kernel[0] == '#') {
        long id = strtol(kernel + 1, NULL, 10);
        for (size_t i = 0; i < ncu_data_count(cap->data) && !launch; i++)
            if (ncu_data_at_const(cap->data, i)->id == id)
                launch = ncu_data_at_const(cap->data, i);
        if (!launch)
            return (size_t) -1;
    }
    for (size_t g = 0; g < ncu_kernels_count(cap->kernels); g++) {
        const ncu_kernel_t *k = ncu_kernels_at(cap->kernels, g);
        size_t n = strcspn(k->name, "(");
        bool match = launch ? strcmp(k->name, launch->kernel) == 0 && strcmp(k->block, launch->block) == 0 &&
                                  strcmp(k->grid, launch->grid) == 0 &&
                                  (k->behaviours <= 1 || s_ids_hold(k->launch_ids, launch->id))
                            : strlen(kernel) == n && strncmp(k->name, kernel, n) == 0;
        if (match) {
            *group = k;
            break;
        }
    }
    if (!*group)
        return (size_t) -1;
    for (size_t i = 0; i < feedback_kernel_count(cap->fb); i++) {
        const fb_kernel_t *fk = feedback_kernel_const(cap->fb, i);
        if (strcmp(fk->name, (*group)->name) == 0 && strcmp(fk->block, (*group)->block) == 0 &&
            strcmp(fk->grid, (*group)->grid) == 0 && strcmp(fk->launch_ids, (*group)->launch_ids) == 0)
            return i;
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

/* The first finding of a kernel the capture must hold (ID "#N" or name). */
static const fb_finding_t *s_lead(capture_t *cap, const char *kernel)
{
    const ncu_kernel_t *group;
    size_t k = s_kernel(cap, kernel, &group);
    cr_assert_neq(k, (size_t) -1, "%s is not in the feedback", kernel);
    const fb_finding_t *first = s_first(cap->fb, k);
    cr_assert_not_null(first, "%s has no finding", kernel);
    return first;
}

/* Global atomic and reduction instructions, 0 where unmeasured. */
static double s_or0_atomics(const ncu_kernel_t *k)
{
    return (isnan(k->v[NM_GLOBAL_RED]) ? 0 : k->v[NM_GLOBAL_RED]) +
           (isnan(k->v[NM_GLOBAL_ATOM]) ? 0 : k->v[NM_GLOBAL_ATOM]);
}

/* The kernel's first finding of this category, or NULL. */
static const fb_finding_t *s_category(const feedback_t *fb, size_t kernel, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *x = feedback_finding(fb, i);
        if (x->kernel == kernel && strcmp(x->category, category) == 0)
            return x;
    }
    return NULL;
}

/* Every "N%" in a text is at most 100. */
static void s_expect_shares_bounded(const char *text, const char *where)
{
    for (const char *p = strchr(text, '%'); p; p = strchr(p + 1, '%')) {
        const char *q = p;
        while (q > text && (q[-1] == '.' || (q[-1] >= '0' && q[-1] <= '9')))
            q--;
        if (q < p)
            cr_expect_leq(strtod(q, NULL), 100.0, "%s: a share over 100%%: %s", where, text);
    }
}

/* No finding says more than its capture measured. */
static void s_expect_no_unmeasured_claims(const capture_t *cap, const char *where)
{
    for (size_t i = 0; i < feedback_finding_count(cap->fb); i++) {
        const fb_finding_t *f = feedback_finding(cap->fb, i);
        cr_expect_leq(f->importance, 100.0, "%s: importance %g", where, f->importance);
        cr_expect(isnan(f->speedup) || (f->speedup >= 0 && f->speedup <= 100), "%s: speedup %g", where,
                  f->speedup);
        s_expect_shares_bounded(f->title, where);
        for (size_t e = 0; e < f->evidence_count; e++) {
            if (strcmp(f->evidence[e].unit, "%") == 0 && !isnan(f->evidence[e].value) &&
                strncmp(f->source, "ncu:", 4) != 0 && strncmp(f->evidence[e].metric, "Sol", 3) != 0)
                cr_expect_leq(f->evidence[e].value, 100.0, "%s: %s", where, f->evidence[e].text);
            if (strncmp(f->evidence[e].text, "NCU ", 4) != 0)
                s_expect_shares_bounded(f->evidence[e].text, where);
        }
        if (strncmp(f->source, "profeed", 7) != 0)
            continue; /* NCU's own rule text names what NCU measured */
        const fb_kernel_t *fk = feedback_kernel_const(cap->fb, f->kernel);
        const ncu_kernel_t *group = NULL;
        for (size_t g = 0; g < ncu_kernels_count(cap->kernels) && !group; g++) {
            const ncu_kernel_t *k = ncu_kernels_at(cap->kernels, g);
            if (strcmp(k->name, fk->name) == 0 && strcmp(k->block, fk->block) == 0 && strcmp(k->grid, fk->grid) == 0)
                group = k;
        }
        cr_assert_not_null(group);
        ncu_units_t measured;
        ncu_units_measure(group, 0, &measured);
        for (size_t u = 0; u < sizeof s_truth_pipes / sizeof s_truth_pipes[0]; u++)
            if (strstr(f->title, s_truth_pipes[u].words))
                cr_expect_not_null(ncu_units_find(&measured, s_truth_pipes[u].pipe),
                                   "%s: \"%s\" names the %s, which this capture did not measure", where,
                                   f->title, s_truth_pipes[u].pipe);
    }
}

/* Judges every truth line of one fileset under one plan. `exact` demands the expected
 * finding (core, full); otherwise no wrong claim is allowed. */
static void s_expect_plan(const char *corpus, const char *folder, const char *fileset, const char *plan,
                          const char *const *files, bool exact)
{
    truth_t truth[128];
    size_t n = s_truth_load(corpus, truth, 128);
    capture_t cap = s_capture(folder, files);
    char where[160];
    snprintf(where, sizeof where, "%s %s/%s", corpus, fileset, plan);
    /* Some captures recorded their program's exit code 1: the default plan's
     * of corpus v22 on the H200 (the host check's own rounding,
     * h200-v22/README.md) and of corpus v36 (a lever's output failed its
     * check, h200-v36/README.md), and every live capture of corpus v60 (its
     * check's range for C and D was wrong, h200-v60/README.md; --set full's
     * import does not carry the exit code). The analysis says so, and every
     * kernel is there. */
    bool v60 = strncmp(folder, "h200-v60/", 9) == 0 && strcmp(plan, "full") != 0;
    bool exited_1 = v60 || ((strcmp(folder, "h200-v22/capture-2026-12-02") == 0 ||
                             strcmp(folder, "h200-v36/capture-2026-12-03") == 0) &&
                            strcmp(plan, "core") == 0);
    cr_expect_eq(feedback_status(cap.fb), exited_1 ? FB_PROFILER_ERROR : FB_OK, "%s", where);
    size_t judged = 0;
    for (size_t t = 0; t < n; t++) {
        if (strcmp(truth[t].fileset, fileset) != 0)
            continue;
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, truth[t].kernel, &group);
        cr_assert_neq(k, (size_t) -1, "%s: %s is not in the feedback", where, truth[t].kernel);
        const fb_finding_t *first = s_first(cap.fb, k);
        cr_assert_not_null(first, "%s: %s has no finding", where, truth[t].kernel);
        truth_verdict_t v = truth_judge(first, truth[t].expect);
        bool ok = exact ? v == TRUTH_RIGHT : v != TRUTH_WRONG;
        if (s_known_miss(corpus, fileset, truth[t].kernel, plan))
            cr_expect(!ok, "%s: %s is listed in known_misses.txt but is now judged right (%s: %s): "
                           "remove its line", where, truth[t].kernel, first->category, first->title);
        else
            cr_expect(ok, "%s: %s: expected %s, first finding is %s: %s", where, truth[t].kernel,
                      truth[t].expect, first->category, first->title);
        cr_expect(first->primary, "%s: %s: the first finding is not the primary one", where, truth[t].kernel);
        cr_expect_gt(first->evidence_count, 0, "%s: %s: no evidence", where, truth[t].kernel);
        cr_expect_neq(first->action[0], '\0', "%s: %s: no action", where, truth[t].kernel);
        judged++;
    }
    cr_expect_gt(judged, 0, "%s: no truth lines", where);
    s_expect_no_unmeasured_claims(&cap, where);
    s_capture_destroy(&cap);
}

/* The default plan since 2026-12-02: the core metrics plus --section
 * MemoryWorkloadAnalysis (its spill counters), and the metrics alone, the
 * default until then ("core-metrics" in known_misses.txt). */
static const char *const s_core[] = {"core_mwa_raw.csv", NULL};
static const char *const s_core_metrics[] = {"core_raw.csv", NULL};
static const char *const s_full[] = {"full_raw.csv", "full_details.csv", NULL};
static const char *const s_sol[] = {"sol_raw.csv", NULL};
static const char *const s_three[] = {"pass1_sol.csv", "pass2_memory.csv", "pass3_warps.csv", NULL};

#define PLANS(name, corpus, folder, fileset)                                                          \
    Test(ncu_accuracy, name##_core_names_every_expected_first_finding)                                 \
    {                                                                                                  \
        s_expect_plan(corpus, folder, fileset, "core", s_core, true);                                  \
    }                                                                                                  \
    Test(ncu_accuracy, name##_core_metrics_alone_name_every_expected_first_finding)                    \
    {                                                                                                  \
        s_expect_plan(corpus, folder, fileset, "core-metrics", s_core_metrics, true);                  \
    }                                                                                                  \
    Test(ncu_accuracy, name##_full_names_every_expected_first_finding)                                 \
    {                                                                                                  \
        s_expect_plan(corpus, folder, fileset, "full", s_full, true);                                  \
    }                                                                                                  \
    Test(ncu_accuracy, name##_speed_of_light_alone_makes_no_wrong_claim)                               \
    {                                                                                                  \
        s_expect_plan(corpus, folder, fileset, "sol", s_sol, false);                                   \
    }                                                                                                  \
    Test(ncu_accuracy, name##_three_sections_make_no_wrong_claim)                                      \
    {                                                                                                  \
        s_expect_plan(corpus, folder, fileset, "three", s_three, false);                               \
    }

PLANS(h200, "h200", "h200/capture-2026-12-01", "kernels")
PLANS(h200_v2, "h200-v2", "h200-v2/capture-2026-12-01", "kernels")
PLANS(h200_v3_kernels, "h200-v3", "h200-v3/kernels", "kernels")
PLANS(h200_v3_workloads, "h200-v3", "h200-v3/workloads", "workloads")
PLANS(h200_v4, "h200-v4", "h200-v4/capture-2026-12-01", "kernels")
PLANS(h200_v5, "h200-v5", "h200-v5/capture-2026-12-01", "kernels")
PLANS(h200_v6, "h200-v6", "h200-v6/capture-2026-12-01", "kernels")
PLANS(h200_v7, "h200-v7", "h200-v7/capture-2026-12-02", "kernels")
PLANS(h200_v8, "h200-v8", "h200-v8/capture-2026-12-02", "kernels")
PLANS(h200_v9, "h200-v9", "h200-v9/capture-2026-12-02", "kernels")
PLANS(h200_v10, "h200-v10", "h200-v10/capture-2026-12-02", "kernels")
PLANS(h200_v11, "h200-v11", "h200-v11/capture-2026-12-02", "kernels")
PLANS(h200_v13, "h200-v13", "h200-v13/capture-2026-12-02", "kernels")
PLANS(h200_v14, "h200-v14", "h200-v14/capture-2026-12-02", "kernels")
PLANS(h200_v15, "h200-v15", "h200-v15/capture-2026-12-02", "kernels")

/* kernels.cu and corpus v2 captured again on 2026-12-02 (eleventh session) under the
 * default plan as it is now, without ncu's SM summary (ncu_summary.c rebuilds it), and
 * --set full: the plan measured, not simulated by dropping a column. */
Test(ncu_accuracy, h200_core_without_the_sm_summary_names_every_expected_first_finding)
{
    s_expect_plan("h200", "h200/capture-2026-12-02", "kernels", "core", s_core, true);
    s_expect_plan("h200", "h200/capture-2026-12-02", "kernels", "full", s_full, true);
}
Test(ncu_accuracy, h200_v2_core_without_the_sm_summary_names_every_expected_first_finding)
{
    s_expect_plan("h200-v2", "h200-v2/capture-2026-12-02", "kernels", "core", s_core, true);
    s_expect_plan("h200-v2", "h200-v2/capture-2026-12-02", "kernels", "full", s_full, true);
}

/* kernels.cu, corpus v2 and corpus v51's KernelBench workloads captured again
 * on 2026-12-04 (nineteenth session) when L2's count of the sectors the SMs
 * read joined the default plan (at no replay pass: 19 either way on
 * kernels.cu's vec_add). v51's misses under it are its old capture's but for
 * the TMA kernels #2 and #31, right since ("core-12-04" in known_misses.txt). */
Test(ncu_accuracy, captures_under_the_plan_with_l2_reads_name_every_expected_first_finding)
{
    s_expect_plan("h200", "h200/capture-2026-12-04", "kernels", "core", s_core, true);
    s_expect_plan("h200-v2", "h200-v2/capture-2026-12-04", "kernels", "core", s_core, true);
    s_expect_plan("h200-v51", "h200-v51/workloads-2026-12-04", "workloads", "core-12-04", s_core, true);
}

/* kernels.cu and corpus v2 captured again on 2026-12-04 (twenty-first
 * session) when L2's per-lane atomic request counts joined the default plan
 * (at no replay pass: 19 a kernel either way). */
Test(ncu_accuracy, captures_under_the_plan_with_l2_atomic_requests_name_every_expected_first_finding)
{
    s_expect_plan("h200", "h200/capture-2026-12-04b", "kernels", "core", s_core, true);
    s_expect_plan("h200-v2", "h200-v2/capture-2026-12-04b", "kernels", "core", s_core, true);
}

/* L2's re-reads of operands that come by TMA are measured from L2's own count
 * of the sectors the SMs read, which the LSU's load counters do not see:
 * cuDNN's sm90 data-gradient kernels (corpus v51's #2, L2 77% with 78% of its
 * sectors hits) read 3.6x DRAM's bytes from L2: "L2-bound on re-reads", where
 * without the count they said "DRAM or L2" (the default plan's captures
 * before 2026-12-04 still do: they say less). */
Test(ncu_accuracy, tma_reads_are_counted_in_l2_re_reads)
{
    capture_t cap = s_capture("h200-v51/workloads-2026-12-04", s_core);
    const fb_finding_t *first = s_lead(&cap, "#2");
    cr_expect_str_eq(first->category, "l2_bound");
    cr_expect(strstr(first->title, "on re-reads") != NULL && strstr(first->title, "TMA included") != NULL, "%s",
              first->title);
    s_capture_destroy(&cap);
    cap = s_capture("h200-v51/workloads", s_core); /* the count not collected: says less */
    cr_expect_str_eq(s_lead(&cap, "#2")->category, "memory_bound");
    s_capture_destroy(&cap);
}

/* Corpus v12's workloads were captured under the default plan and full only. */
Test(ncu_accuracy, h200_v12_workloads_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v12", "h200-v12/workloads", "workloads", "core", s_core, true);
}
Test(ncu_accuracy, h200_v12_workloads_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v12", "h200-v12/workloads", "workloads", "full", s_full, true);
}

/* Corpus v20, under the default plan and full: its segment sums by ascending
 * length are a known miss (known_misses.txt). */
Test(ncu_accuracy, h200_v20_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v20", "h200-v20/capture-2026-12-02", "kernels", "core", s_core, true);
}
Test(ncu_accuracy, h200_v20_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v20", "h200-v20/capture-2026-12-02", "kernels", "full", s_full, true);
}

/* Corpus v21: v18's warp-per-row SpMV at 8 and 2 nonzeros a row, on both sides
 * of the load-lanes threshold; the row of 8 is the miss the model predicted for
 * itself (known_misses.txt). */
Test(ncu_accuracy, h200_v21_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v21", "h200-v21/capture-2026-12-02", "kernels", "core", s_core, true);
}
Test(ncu_accuracy, h200_v21_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v21", "h200-v21/capture-2026-12-02", "kernels", "full", s_full, true);
}

/* Corpora v22 to v35, every capture under the default plan and full: v22's seven
 * agent-style kernels of kinds no earlier corpus has (a fence after every
 * store, 128 KB of unrolled code, a block per SM, random lookups in a shared
 * table, Mandelbrot rows, a misaligned stream, NCHW to NHWC) on the H200 and an
 * H100 80GB HBM3, and its eight workloads (cuFFT, grid_sample, embedding_bag,
 * searchsorted, histc, cdist, im2col, a cuDNN conv3d); v23 (100-thread blocks,
 * a 64-bit remainder, an atomic a warp, a half GELU, a per-thread switch) and
 * v24 (Triton) on both GPUs; v25 (an int4 GEMV, a rotary embedding, a top-16 in
 * local memory, a paged gather) on both; v26 (a grid sync per sweep, an
 * atomicMax per element) on the H100; v27's workloads (causal flash attention,
 * an NHWC fp16 conv, a TF32 GEMM, a bf16 layer norm, SwiGLU, small batched
 * GEMMs, a row sort, a reflection pad) and v28's (bicubic upsampling, a
 * vocabulary log-softmax, a causal depthwise conv1d, cuFFT 2-D, training batch
 * norm, an NHWC permute, a pixel shuffle, logcumsumexp) on both GPUs; v29's
 * occupancy-limited signatures (an EmbeddingBag, a histogram, a gather); v30's
 * kernels with too little in flight (linked chains, dependent FMAs, a 2.1-wave
 * tail), WMMA tiles without padding and passes outside the element loop; v31's
 * unseen test of v30's changes (a compute-bound tail, Horner chains in 201
 * registers) and an embedding gather, a softmax in registers, a bitonic sort;
 * v32's workloads (unique, nonzero, an embedding backward, adaptive pooling, a
 * gather, a scatter-add, one_hot, cat, roll, int8 and FP64 GEMMs); v33 (an
 * agent's attention, a block-per-row RMSNorm, an L2 re-read); v34 (an fp8
 * quantizer, a hash-table probe, a batched fp16 GEMV); v35 (a column norm in 8
 * blocks, a sigmoid stream, sines of large arguments); v36 (a layer norm's weight
 * gradients by global atomics, a depthwise convolution, a per-thread cuRAND
 * dropout, a 3-D stencil), v37's workloads (a cuDNN LSTM, fused Adam, a
 * Cholesky, a cuSPARSE SpMM, flip, median, cosine similarity, repeat_interleave,
 * index_put_, where, GELU and cross entropy backward, CTC) and v38 (a
 * selective-scan recurrence, Hamming distances on the XU pipe, a bf16 GEMM on
 * the FMA pipe, an n-body step), v39 (two streams over DRAM whose grids are
 * not whole waves, warps of one block with unequal work before a barrier),
 * v40 (tails of DRAM streams at two blocks a SM), v41 (random chases at one
 * block a SM, from DRAM and from L2), v42 (an agent's argmin over the middle
 * dimension, three-pass group norm, stride-2 max pool), v43 (an embedding
 * bag, a Hillis-Steele reverse cumsum, a half-precision hardtanh), v44
 * (rotary embeddings by sincosf, a warp-a-row layer norm, a two-pass cross
 * entropy), v45 (scattered 2-byte and 16-byte stores, scattered whole
 * rows as a control), v46 (gathers waited on one request at a time, and two
 * that overlap them), v47's workloads (thirteen KernelBench level-1
 * problems), v48 (causes at their margins), v51's workloads (ten
 * KernelBench level-2 problems), v52 (v51's disagreements in ATen's layout),
 * v53 (the launch floor and the grid cap on kernels they were not made
 * with), v54's workloads (four KernelBench level-3 problems), v55
 * (textbook bottlenecks at parameters no earlier corpus used) and v56 (Triton
 * kernels with agents' mistakes: fenced atomics, no split-K, float64 GELU,
 * spills, a scalar loop). */
Test(ncu_accuracy, v22_to_v48_on_both_gpus_name_every_expected_first_finding)
{
    static const struct {
        const char *corpus, *folder, *fileset;
    } sets[] = {{"h200-v22", "h200-v22/capture-2026-12-02", "kernels"},
                {"h200-v22", "h200-v22/capture-h100-2026-12-02", "h100"},
                {"h200-v22", "h200-v22/workloads", "workloads"},
                {"h200-v23", "h200-v23/capture-h100-2026-12-02", "kernels"},
                {"h200-v23", "h200-v23/capture-2026-12-02", "h200"},
                {"h200-v24", "h200-v24/capture-h100-2026-12-02", "kernels"},
                {"h200-v24", "h200-v24/capture-2026-12-02", "h200"},
                {"h200-v25", "h200-v25/capture-2026-12-02", "kernels"},
                {"h200-v25", "h200-v25/capture-h100-2026-12-02", "h100"},
                {"h200-v26", "h200-v26/capture-h100-2026-12-02", "kernels"},
                {"h200-v29", "h200-v29/capture-2026-12-02", "kernels"},
                {"h200-v30", "h200-v30/capture-2026-12-02", "kernels"},
                {"h200-v31", "h200-v31/capture-2026-12-02", "kernels"},
                {"h200-v33", "h200-v33/capture-2026-12-02", "kernels"},
                {"h200-v34", "h200-v34/capture-2026-12-02", "kernels"},
                {"h200-v35", "h200-v35/capture-2026-12-02", "kernels"},
                {"h200-v36", "h200-v36/capture-2026-12-03", "kernels"},
                {"h200-v38", "h200-v38/capture-2026-12-03", "kernels"},
                {"h200-v39", "h200-v39/capture-2026-12-03", "kernels"},
                {"h200-v40", "h200-v40/capture-2026-12-03", "kernels"},
                {"h200-v41", "h200-v41/capture-2026-12-03", "kernels"},
                {"h200-v42", "h200-v42/capture-2026-12-03", "kernels"},
                {"h200-v43", "h200-v43/capture-2026-12-03", "kernels"},
                {"h200-v44", "h200-v44/capture-2026-12-03", "kernels"},
                {"h200-v45", "h200-v45/capture-2026-12-03", "kernels"},
                {"h200-v46", "h200-v46/capture-2026-12-03", "kernels"},
                {"h200-v48", "h200-v48/capture-2026-12-03", "kernels"},
                {"h200-v49", "h200-v49/capture-2026-12-03", "kernels"},
                {"h200-v50", "h200-v50/capture-2026-12-03", "kernels"},
                {"h200-v52", "h200-v52/capture-2026-12-03", "kernels"},
                {"h200-v53", "h200-v53/capture-2026-12-03", "kernels"},
                {"h200-v27", "h200-v27/workloads", "workloads"},
                {"h200-v28", "h200-v28/workloads", "workloads"},
                {"h200-v32", "h200-v32/workloads", "workloads"},
                {"h200-v37", "h200-v37/workloads", "workloads"},
                {"h200-v47", "h200-v47/workloads", "workloads"},
                {"h200-v51", "h200-v51/workloads", "workloads"},
                {"h200-v54", "h200-v54/workloads", "workloads"},
                {"h200-v54", "h200-v54/workloads-p21", "p21"},
                {"h200-v55", "h200-v55/capture-2026-12-04", "kernels"},
                {"h200-v56", "h200-v56/capture-2026-12-04", "kernels"},
                {"h200-v57", "h200-v57/capture-2026-12-04", "kernels"},
                {"h200-v58", "h200-v58/capture-2026-12-04", "kernels"},
                {"h200-v59", "h200-v59/capture-2026-12-04", "kernels"},
                {"h200-v60", "h200-v60/capture-2026-12-04", "kernels"},
                {"h200-v61", "h200-v61/capture-2026-12-04", "kernels"},
                {"h200-v62", "h200-v62/capture-2026-12-04", "kernels"},
                {"h200-v63", "h200-v63/capture-2026-12-04", "kernels"},
                {"h200-v64", "h200-v64/capture-2026-12-04", "kernels"},
                {"h200-v65", "h200-v65/capture-2026-12-04", "kernels"},
                {"h200-v66", "h200-v66/capture-2026-12-05", "kernels"},
                {"h200-v67", "h200-v67/capture-2026-12-05", "kernels"},
                {"h200-v27", "h200-v27/workloads-h100", "h100"},
                {"h200-v28", "h200-v28/workloads-h100", "h100"}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        s_expect_plan(sets[i].corpus, sets[i].folder, sets[i].fileset, "core", s_core, true);
        s_expect_plan(sets[i].corpus, sets[i].folder, sets[i].fileset, "full", s_full, true);
    }
}

/* A DRAM stream below its roof in blocks whose size is not a multiple of 32
 * names the idle lanes of their last warp: corpus v23's 100-thread blocks
 * (256-thread blocks ran 1.52x); a stream of 256-thread blocks does not. */
Test(ncu_accuracy, partial_warps_of_a_stream_below_its_roof_are_named_in_its_action)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v23/capture-h100-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v23_bias_c100", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "dram_bound");
        cr_expect(strstr(f->action, "Blocks of 100 threads leave 28 of their 128 lanes idle") != NULL, "%s",
                  f->action);
        f = s_category(cap.fb, s_kernel(&cap, "v23_sum_warp_atomic", &group), "dram_bound");
        cr_expect(!f || strstr(f->action, "lanes idle") == NULL, "%s", f ? f->action : "");
        s_capture_destroy(&cap);
    }
}

/* Idle SMs explain a latency-bound look only where the units, over the time
 * the SMs worked, would not be latency-bound: corpus v30's chase over 2.1 waves
 * (SMs idle 24%, L2 at 31%) leads with the latency its blocks have while they
 * run (four chains a warp ran 1.93x) and names the tail second (whole waves
 * ran 1.25x); corpus v2's tail wave, one block running alone on a busy kernel,
 * keeps the tail alone. */
Test(ncu_accuracy, a_tail_over_latency_bound_blocks_keeps_the_latency_finding)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v30/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v30_chase_tail", &group);
        const fb_finding_t *f = s_first(cap.fb, k);
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "latency_bound");
        const fb_finding_t *tail = s_category(cap.fb, k, "tail_effect");
        cr_assert_not_null(tail);
        cr_expect(tail->speedup > 15 && tail->speedup < 35, "tail est. %.0f%% (measured 20%%)", tail->speedup);
        s_capture_destroy(&cap);
        cap = s_capture("h200-v2/capture-2026-12-02", plans[p]);
        k = s_kernel(&cap, "tail_wave", &group);
        f = s_first(cap.fb, k);
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "tail_effect");
        cr_expect_null(s_category(cap.fb, k, "latency_bound"));
        s_capture_destroy(&cap);
    }
}

/* An occupancy finding whose warps wait on their own arithmetic names
 * independent work in each thread as the other lever (corpus v30's FMA chains:
 * four interleaved 3.62x, 16 blocks per SM 2.21x; ilp_vs_warps.cu: the two
 * equal at equal chains per SM); one whose warps wait on memory does not. */
Test(ncu_accuracy, occupancy_over_dependent_arithmetic_names_interleaved_chains)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v30/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, "v30_fma_chain_smem", &group), "occupancy");
        cr_assert_not_null(f);
        cr_expect(strstr(f->action, "independent chains interleaved") != NULL, "%s", f->action);
        f = s_category(cap.fb, s_kernel(&cap, "v30_chase_smem", &group), "occupancy");
        cr_assert_not_null(f);
        cr_expect(strstr(f->action, "own arithmetic") == NULL, "%s", f->action);
        s_capture_destroy(&cap);
    }
}

/* L2 well above DRAM is DRAM's traffic passing through or L2's own re-reads,
 * which SpeedOfLight's percentages cannot tell apart (kernels.cu's vec_add: L2
 * 83% over DRAM 72%; corpus v13's block softmax, whose row read once ran 1.14x:
 * 82% over 71%): without the load sectors the level is not named and the
 * sectors are listed as missing; with them (full) each gets its own level. */
/* A register cap on a kernel whose schedulers are already busy says what it
 * may cost: corpus v38's bf16 GEMM (issue 75%), whose cap to 48 registers ran
 * 0.81x; corpus v5's latency-bound softmax (the cap that ran 1.37x) is not
 * told so. */
Test(ncu_accuracy, a_register_cap_on_busy_schedulers_says_to_time_it)
{
    capture_t cap = s_capture("h200-v38/capture-2026-12-03", s_full);
    const ncu_kernel_t *group;
    const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v38_bf16_gemm_fma", &group));
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "occupancy");
    cr_expect(strstr(f->action, "The schedulers already issue in 75% of cycles") != NULL, "%s", f->action);
    s_capture_destroy(&cap);
    cap = s_capture("h200-v5/capture-2026-12-01", s_core);
    size_t caps = 0, told = 0;
    for (size_t i = 0; i < feedback_finding_count(cap.fb); i++) {
        caps += strstr(feedback_finding(cap.fb, i)->title, "Occupancy limited by registers per thread:") != NULL;
        told += strstr(feedback_finding(cap.fb, i)->action, "schedulers already issue") != NULL;
    }
    cr_expect_gt(caps, 0);
    cr_expect_eq(told, 0);
    s_capture_destroy(&cap);
}

/* Loads whose lanes each take a sector nothing reuses (16 or more sectors a
 * request, L1 hits under a fifth) may be a stride or a scatter: the action
 * gives both levers, the layout one for scatters (corpus v41's random chase
 * through 256 MB ran 2.6x with a warp's chains moving line to line together).
 * A stride whose sectors L1 serves again keeps the plain action (corpus v7's
 * column-major GELU). */
Test(ncu_accuracy, scattered_loads_get_the_layout_lever)
{
    capture_t cap = s_capture("h200-v41/capture-2026-12-03", s_full);
    const ncu_kernel_t *group;
    const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, "v41_chase_dram", &group), "uncoalesced_access");
    cr_assert_not_null(f);
    cr_expect(strstr(f->action, "what a warp reads lies in one 128-byte line") != NULL, "%s", f->action);
    s_capture_destroy(&cap);
    cap = s_capture("h200-v7/capture-2026-12-02", s_full);
    f = s_category(cap.fb, s_kernel(&cap, "v7_colmajor_gelu", &group), "uncoalesced_access");
    cr_assert_not_null(f);
    cr_expect(strstr(f->action, "128-byte line") == NULL, "%s", f->action);
    cr_expect(strstr(f->action, "swap the index roles") != NULL, "%s", f->action);
    s_capture_destroy(&cap);
}

/* Scattered partial-sector stores congest DRAM: every sector is a
 * read-modify-write of a row of its own, and the coalesced loads queue
 * behind the fills, so the estimate is the stream's (the kernel runs what it
 * uses at the ceiling of the busiest unit left), not Little's law's share of
 * the requests. Corpus v7's 4-byte scatter ran 17.5x with the identity
 * permutation and v8's 8-byte one 11.8x, where Little's law gave 2.4x and
 * 2.0x; at least 5x here. Corpus v45, written after the change to test it,
 * scattered 2-byte stores (in order 18.2x; Little's law 2.6x) and 16-byte
 * ones, half a sector (7.2x; Little's law 1.6x). */
Test(ncu_accuracy, scattered_partial_stores_are_priced_as_congestion)
{
    static const struct {
        const char *folder, *kernel;
        double least;
    } cases[] = {{"h200-v7/capture-2026-12-02", "v7_scatter", 5},
                 {"h200-v8/capture-2026-12-02", "v8_scatter8", 5},
                 {"h200-v45/capture-2026-12-03", "v45_scatter_half", 5},
                 {"h200-v45/capture-2026-12-03", "v45_scatter_f4", 3}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_t cap = s_capture(cases[i].folder, s_full);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, cases[i].kernel, &group), "uncoalesced_access");
        cr_assert_not_null(f, "%s", cases[i].kernel);
        double speedup = 1 / (1 - f->speedup / 100);
        cr_expect_geq(speedup, cases[i].least, "%s: estimated %.2fx", cases[i].kernel, speedup);
        cr_expect(strstr(f->action, "destination order") != NULL, "%s: %s", cases[i].kernel, f->action);
        s_capture_destroy(&cap);
    }
    /* The control: whole 256-byte rows scattered use every sector they write,
     * so nothing is uncoalesced (identity order 1.05x). */
    capture_t cap = s_capture("h200-v45/capture-2026-12-03", s_full);
    const ncu_kernel_t *group;
    size_t k = s_kernel(&cap, "v45_rows_scatter", &group);
    cr_assert_neq(k, (size_t) -1);
    cr_expect_null(s_category(cap.fb, k, "uncoalesced_access"));
    s_capture_destroy(&cap);
}

/* A load request costs at least an idle memory system's round trip
 * (bench/gpu/latency_probe.cu on the H200), which coalescing does not
 * remove. Corpus v10's gather from an L2-resident table waits 1417 cycles a
 * request; coalesced, half its requests still go to DRAM (a 534-cycle trip):
 * the estimate is held to at most 2.8x (3.3x without the floor; measured
 * 1.55x) and says why. Where the requests overlap or L1 serves most sectors,
 * the floor is unknown and must not bind: corpus v9's thread-per-row sum (86%
 * L1 hits; coalesced ran 4.3x) keeps an estimate of at least 2.5x, with no
 * round-trip evidence. */
static const fb_evidence_t *s_evidence(const fb_finding_t *f, const char *text)
{
    for (size_t e = 0; e < f->evidence_count; e++)
        if (strstr(f->evidence[e].text, text))
            return &f->evidence[e];
    return NULL;
}

Test(ncu_accuracy, load_requests_keep_a_round_trip)
{
    static const struct {
        const char *folder, *kernel;
        double least, most;
        bool floored;
    } cases[] = {{"h200-v10/capture-2026-12-02", "v10_l2_gather", 1.5, 2.8, true},
                 {"h200-v9/capture-2026-12-02", "v9_rowsum_thread", 2.5, 20, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_t cap = s_capture(cases[i].folder, s_core);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, cases[i].kernel, &group), "uncoalesced_access");
        cr_assert_not_null(f, "%s", cases[i].kernel);
        double speedup = 1 / (1 - f->speedup / 100);
        cr_expect_geq(speedup, cases[i].least, "%s: estimated %.2fx", cases[i].kernel, speedup);
        cr_expect_leq(speedup, cases[i].most, "%s: estimated %.2fx", cases[i].kernel, speedup);
        cr_expect_eq(s_evidence(f, "idle round trip") != NULL, cases[i].floored, "%s",
                     cases[i].kernel);
        s_capture_destroy(&cap);
    }
}

/* Scattered 32-byte reads cost DRAM a 64-byte burst and a row each, and
 * saturate it near 55% of its peak (bench/gpu/latency_probe.cu: 1.26 TB/s of
 * random sectors on the H200). The random gathers from DRAM-sized tables
 * (corpora v8 and v46: DRAM 52%-55%, L2 80%-86% with 13%-21% hits) are bound
 * there, and the second finding says so instead of "served from L2, over and
 * over". The controls: corpus v10's gather from an L2-resident table (86%
 * hits) is L2's re-reads, and a coalesced stream keeps DRAM's 90% ceiling. */
Test(ncu_accuracy, scattered_dram_reads_bind_at_their_own_ceiling)
{
    static const struct {
        const char *folder, *kernel;
    } scattered[] = {{"h200-v8/capture-2026-12-02", "v8_gather"},
                     {"h200-v46/capture-2026-12-03", "v46_gather4_dram"},
                     /* whole 32-byte rows beside 512 MB of whole-sector stores */
                     {"h200-v50/capture-2026-12-03", "v50_rows32_random"}};
    for (size_t i = 0; i < sizeof scattered / sizeof scattered[0]; i++) {
        capture_t cap = s_capture(scattered[i].folder, s_core);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, scattered[i].kernel, &group);
        cr_assert_neq(k, (size_t) -1, "%s", scattered[i].kernel);
        const fb_finding_t *f = s_category(cap.fb, k, "dram_bound");
        cr_assert_not_null(f, "%s", scattered[i].kernel);
        cr_expect(strstr(f->title, "scattered sectors") != NULL, "%s: %s", scattered[i].kernel, f->title);
        /* its lever, neighbouring reads, makes a stream: headroom to DRAM's 90% */
        cr_expect_geq(f->speedup, 30.0, "%s: est. %.1f%%", scattered[i].kernel, f->speedup);
        cr_expect_null(s_category(cap.fb, k, "l2_bound"), "%s", scattered[i].kernel);
        s_capture_destroy(&cap);
    }
    capture_t cap = s_capture("h200-v10/capture-2026-12-02", s_core);
    const ncu_kernel_t *group;
    size_t k = s_kernel(&cap, "v10_l2_gather", &group);
    cr_assert_neq(k, (size_t) -1);
    const fb_finding_t *f = s_category(cap.fb, k, "l2_bound");
    cr_assert_not_null(f);
    cr_expect(strstr(f->title, "re-reads") != NULL, "%s", f->title);
    s_capture_destroy(&cap);
    cap = s_capture("h200/capture-2026-12-02", s_core);
    k = s_kernel(&cap, "vec_add", &group);
    cr_assert_neq(k, (size_t) -1);
    f = s_category(cap.fb, k, "dram_bound");
    cr_assert_not_null(f);
    cr_expect(strstr(f->title, "scattered") == NULL, "%s", f->title);
    s_capture_destroy(&cap);
}

/* A finding's estimated speedup (its share of the time saved, as x). */
static double s_speedup(const fb_finding_t *f) { return 1 / (1 - f->speedup / 100); }

/* The finding of `category` for `kernel` in the capture of `folder` under
 * the default plan (the first finding when `lead`): estimated between `lo`
 * and `hi` times faster, with an evidence line containing `evidence` when
 * not NULL. `measured` is the lever's timing, for the message. */
static void s_expect_estimate(const char *folder, const char *kernel, const char *category, bool lead, double lo,
                              double hi, double measured, const char *evidence)
{
    capture_t cap = s_capture(folder, s_core);
    const ncu_kernel_t *group;
    size_t k = s_kernel(&cap, kernel, &group);
    cr_assert_neq(k, (size_t) -1, "%s is not in the feedback", kernel);
    const fb_finding_t *f = lead ? s_lead(&cap, kernel) : s_category(cap.fb, k, category);
    cr_assert_not_null(f, "%s: no %s finding", kernel, category);
    cr_expect_str_eq(f->category, category, "%s: %s", kernel, f->title);
    cr_expect(s_speedup(f) >= lo && s_speedup(f) <= hi, "%s: %s est. %.2fx (measured %.2fx)", kernel, category,
              s_speedup(f), measured);
    if (evidence)
        cr_expect_not_null(s_evidence(f, evidence), "%s: no evidence \"%s\": %s", kernel, evidence, f->title);
    s_capture_destroy(&cap);
}

/* An FP64-bound kernel's estimate prices its action, the same arithmetic in
 * FP32, where the pipe's headroom prices nothing at 95%: corpus v55's Horner
 * chain (FP64 95%, issue 52%) est. 1.83x, the chain in float measured 1.72x.
 * Where the issue slots bind as much (corpus v15's GELU in double, issue
 * 87%), moving the arithmetic saves nothing by this model and the estimate
 * stays the headroom's. */
Test(ncu_accuracy, fp64_bound_kernels_price_the_same_arithmetic_in_fp32)
{
    s_expect_estimate("h200-v55/capture-2026-12-04", "v55_fp64_horner", "compute_bound", true, 1.5, 2.1, 1.72,
                      "FP32 runs at 2.0x");
}

/* Shared-memory wavefronts follow instructions, not lanes: converged code
 * issues fewer reads and so fewer wavefronts, where global sectors stay.
 * Corpus v58's 8-way conflicted reads on 16 lanes: the same items on every
 * lane ran 1.99x, padded 3.88x; divergence had no finding (L1's work was
 * kept whole), and the conflicts must still lead. */
Test(ncu_accuracy, converged_lanes_issue_fewer_shared_wavefronts)
{
    s_expect_estimate("h200-v58/capture-2026-12-04", "v58_bank8_div", "divergence", false, 1.7, 2.3, 1.99, NULL);
    s_expect_estimate("h200-v58/capture-2026-12-04", "v58_bank8_div", "bank_conflicts", true, 3, 5, 3.88, NULL);
}

/* Where the ADU, which executes __syncthreads, is the busiest pipe and warps
 * wait at barriers, "use fewer barriers" removes the ADU's work and the
 * waits: corpus v58's barrier after every 2 FMAs in 100 blocks of 1024
 * (ADU 83%, barriers 72% of the stalls) was priced at the ADU's headroom,
 * 9%, under the 24% of idle SMs, and led with the grid; without the barrier
 * it ran 4.03x, on 132 SMs 1.32x. v43's Hillis-Steele reverse cumsum, not
 * made with it: est. 1.19x before, measured 1.58x with shuffles. */
Test(ncu_accuracy, barriers_on_a_busy_adu_are_priced_by_removing_them)
{
    s_expect_estimate("h200-v58/capture-2026-12-04", "v58_sync_grid", "barrier_stall", true, 2, 4.5, 4.03,
                      "with fewer barriers");
    s_expect_estimate("h200-v43/capture-2026-12-03", "v43_revcumsum_hs", "barrier_stall", true, 1.35, 1.8, 1.58, NULL);
}

/* A fence after a contended atomic waits for it: those stalls are the
 * queue's, and privatized updates remove them with it. Corpus v56's fenced
 * histogram (memory 65% and membar 34% of the stalls) was est. 2.7x on the
 * memory waits alone, the private one measured 76x; v49's tl.atomic_add sum
 * (acq_rel fences) est. 1.6x, measured 6.2x. v57's unfenced counters keep
 * theirs (est. 13.4x, measured 20.3x). */
Test(ncu_accuracy, fences_behind_contended_atomics_count_as_contention)
{
    s_expect_estimate("h200-v56/capture-2026-12-04", "v56_hist_atomic", "contention", true, 10, 76.4, 76.4,
                      "fences behind the atomics");
    s_expect_estimate("h200-v49/capture-2026-12-03", "v49_sum_atomic", "contention", true, 3, 6.23, 6.23, NULL);
    s_expect_estimate("h200-v57/capture-2026-12-04", "v57_atomic64", "contention", true, 10, 20.3, 20.3, NULL);
}

/* What agents capture themselves, read as they write it: KernelFoundry's
 * `ncu --set detailed --csv` (the details page) and KernelAgent's raw page
 * of 29 metrics (deploy/gpu-corpus.sh --plans "detailed ka", 2026-12-04).
 * Neither measures every cause: they may say less, never something wrong.
 * Two claims were wrong before (KernelAgent's list has the tensor pipe alone,
 * where "no pipe is full" named pipes it never measured; the details page
 * has the issue slots only as instructions a cycle, which an idle tail read
 * as latency); the rest of the wrong first findings are the default plan's
 * own disagreements (known_misses.txt). */
Test(ncu_accuracy, the_agents_own_captures_make_no_wrong_claim)
{
    static const char *const detailed[] = {"detailed.csv", NULL};
    static const char *const ka[] = {"ka_raw.csv", NULL};
    static const struct {
        const char *corpus, *day;
    } sets[] = {{"h200", "2026-12-04"},     {"h200-v2", "2026-12-04"},  {"h200-v3", "2026-12-04"},
                {"h200-v4", "2026-12-04"},  {"h200-v48", "2026-12-04"}, {"h200-v55", "2026-12-04"},
                {"h200-v56", "2026-12-04"}, {"h200-v57", "2026-12-04"}, {"h200-v58", "2026-12-04"},
                {"h200-v59", "2026-12-04"}, {"h200-v60", "2026-12-04"}, {"h200-v61", "2026-12-04"},
                {"h200-v62", "2026-12-04"}, {"h200-v63", "2026-12-04"}, {"h200-v64", "2026-12-04"},
                {"h200-v65", "2026-12-04"}, {"h200-v66", "2026-12-05"}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        char folder[64];
        snprintf(folder, sizeof folder, "%s/agents-%s", sets[i].corpus, sets[i].day);
        s_expect_plan(sets[i].corpus, folder, "kernels", "detailed", detailed, false);
        s_expect_plan(sets[i].corpus, folder, "kernels", "ka", ka, false);
    }
}

/* Atomics on one address served one at a time can set a kernel's time that
 * a unit binds, not only a latency-bound one, and hold every other fix to
 * what they leave: corpus v61's last-block
 * counter (262,144 adds, 95% of the time at 1.76 ns each; L2 67%) ran 1.65x
 * without it and 1.47x spread over 1024 addresses. Atomics spread over many
 * slices are served in parallel: CUB's radix-sort histogram (59,100 atomics,
 * the L2 atomic unit at 6.43% on average, about 18 slices' worth) gets no
 * such finding. */
Test(ncu_accuracy, serialized_atomics_bound_a_kernel_a_unit_binds)
{
    s_expect_estimate("h200-v61/capture-2026-12-04", "v61_fence_lastblock", "contention", true, 1.3, 1.8, 1.65,
                      "served one at a time");
    /* A fix that keeps them cannot beat their floor: corpus v62's counter over
     * 16 words of one slice (98% of the time) had DRAM's bound lead at est.
     * 1.9x over the contention; no counter ran 1.39x. */
    s_expect_estimate("h200-v62/capture-2026-12-04", "v62_counter16", "contention", true, 1.2, 1.8, 1.39,
                      "served one at a time");
    s_expect_estimate("h200-v62/capture-2026-12-04", "v62_counter16", "dram_bound", false, 1, 1.05, 1.39, NULL);
    /* A warp's RED to one address reaches L2 as 32 requests, which --set full
     * counts: corpus v64's row sums (262,144 instructions, 8.4M updates) are
     * 99% of the time served one lane at a time; one store a row ran 14x. */
    static const char *const *const v64_plans[] = {s_core, s_full};
    for (size_t p = 0; p < 2; p++) {
        capture_t v64 = s_capture("h200-v64/capture-2026-12-04", v64_plans[p]);
        const fb_finding_t *f = s_lead(&v64, "v64_rowsum_atomic");
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "contention", "%s", f->title);
        if (p == 1) {
            cr_expect(s_speedup(f) >= 4 && s_speedup(f) <= 14, "v64_rowsum_atomic est. %.2fx (measured 14x)",
                      s_speedup(f));
            cr_expect_not_null(s_evidence(f, "32 per instruction"), "%s", f->title);
        }
        s_capture_destroy(&v64);
    }
    capture_t cap = s_capture("h200-v19/workloads", s_core);
    for (size_t i = 0; i < feedback_finding_count(cap.fb); i++)
        cr_expect(strstr(feedback_finding(cap.fb, i)->title, "served one at a time") == NULL, "%s",
                  feedback_finding(cap.fb, i)->title);
    s_capture_destroy(&cap);
}

/* Whole-sector stores leave the loads' requests as they are, so their gain
 * is floored by the loads' idle round trip as a load fix's is: corpus v57's
 * strided stores from half the SMs (DRAM 53%, a load waiting 943 cycles
 * against 732 idle) ran 1.14x packed and 1.53x on every SM; "the kernel
 * streams what it uses" said 3.3x and led. v55's strided stores from every
 * SM (DRAM 89%, 2988 cycles a load) keep their congestion estimate. */
Test(ncu_accuracy, store_fixes_are_floored_by_the_loads_round_trip)
{
    s_expect_estimate("h200-v57/capture-2026-12-04", "v57_small_store2", "uncoalesced_access", false, 1.1, 1.4, 1.14,
                      "with whole-sector stores");
    s_expect_estimate("h200-v57/capture-2026-12-04", "v57_small_store2", "small_grid", true, 1.3, 2.0, 1.53, NULL);
    s_expect_estimate("h200-v55/capture-2026-12-04", "v55_store_stride4", "uncoalesced_access", true, 2.5, 4, 2.71,
                      NULL);
}

/* Traffic shares count what DRAM moved beyond the LSU's sectors: cuDNN's
 * sm90 data-gradient kernels (corpus v51, problems 3 and 38) move their
 * operands by TMA and write one sector through the LSU against 49 M DRAM
 * sectors; the LSU's counters alone made that sector "100% of the global
 * sectors" and its 258 K local sectors "100% of the memory sectors" (est.
 * 40% each). The controls keep theirs: corpus v7's scattered 4-byte stores
 * and v4's spills move all their traffic through the LSU. */
Test(ncu_accuracy, traffic_shares_count_what_moves_outside_the_lsu)
{
    capture_t cap = s_capture("h200-v51/workloads", s_core);
    const ncu_kernel_t *group;
    size_t k = s_kernel(&cap, "#2", &group);
    cr_assert_neq(k, (size_t) -1);
    cr_expect_null(s_category(cap.fb, k, "uncoalesced_access"));
    const fb_finding_t *spill = s_category(cap.fb, k, "register_spill");
    cr_expect(spill == NULL || spill->speedup < 5, "%s", spill ? spill->title : "");
    /* Nor is L2's work "not mostly re-reads" on loads the LSU never saw (78% of
     * L2's sectors hit in the --set full capture): which level binds is not
     * measured, and the first finding says why. */
    for (size_t i = 0; i < feedback_finding_count(cap.fb); i++) {
        const fb_finding_t *f = feedback_finding(cap.fb, i);
        if (f->kernel == k)
            cr_expect(strstr(f->title, "not mostly re-reads") == NULL, "%s", f->title);
    }
    const fb_finding_t *first = s_first(cap.fb, k);
    cr_assert_not_null(first);
    cr_expect_not_null(s_evidence(first, "TMA or texture"), "%s", first->title);
    s_capture_destroy(&cap);
    cap = s_capture("h200-v7/capture-2026-12-02", s_core);
    const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, "v7_scatter", &group), "uncoalesced_access");
    cr_assert_not_null(f);
    cr_expect(strstr(f->title, "of the global sectors") != NULL, "%s", f->title);
    s_capture_destroy(&cap);
    cap = s_capture("h200-v4/capture-2026-12-01", s_core);
    f = s_category(cap.fb, s_kernel(&cap, "v4_reg_spill", &group), "register_spill");
    cr_assert_not_null(f);
    cr_expect_geq(f->speedup, 20.0, "%s", f->title);
    s_capture_destroy(&cap);
}

/* Launches of one name, block and grid are one kernel unless they behave
 * differently. Corpus v51: ATen's elementwise add over 134 M floats adds a
 * broadcast bias in three launches (issue slots 70%) and a 0-d tensor in one
 * (L2 71% carrying DRAM, issue 46%): two kernels, each with its launch IDs,
 * and the 0-d add is DRAM-bound where their average was "compute-bound on
 * instruction issue"; cuDNN's dgrad at 120 blocks serves two problem sizes
 * (L2 77% and 56%). Repeated launches stay one: corpus v2's tiny_scale, 20
 * launches of 2 us, and the five alike passes of v32's radix sort. */
Test(ncu_accuracy, launches_that_behave_differently_are_analyzed_apart)
{
    capture_t cap = s_capture("h200-v51/workloads", s_core);
    const ncu_kernel_t *bias, *scalar;
    size_t kb = s_kernel(&cap, "#4", &bias), ks = s_kernel(&cap, "#5", &scalar);
    cr_assert_neq(kb, (size_t) -1);
    cr_assert_neq(ks, (size_t) -1);
    cr_expect_neq(kb, ks);
    cr_expect_eq(bias->launches, 3);
    cr_expect_eq(scalar->launches, 1);
    cr_expect_str_eq(bias->launch_ids, "4,33,58");
    cr_expect_str_eq(scalar->launch_ids, "5");
    cr_expect_str_eq(s_first(cap.fb, ks)->category, "dram_bound");
    cr_expect_str_eq(s_first(cap.fb, kb)->category, "compute_bound");
    const ncu_kernel_t *a, *b;
    cr_expect_neq(s_kernel(&cap, "#2", &a), s_kernel(&cap, "#56", &b));
    cr_expect_eq(s_kernel(&cap, "#2", &a), s_kernel(&cap, "#31", &b));
    cr_expect_str_eq(a->launch_ids, "2,31");
    s_capture_destroy(&cap);
    cap = s_capture("h200-v2", s_core_metrics);
    const ncu_kernel_t *tiny;
    cr_assert_neq(s_kernel(&cap, "tiny_scale", &tiny), (size_t) -1);
    cr_expect_eq(tiny->launches, 20);
    cr_expect_eq(tiny->behaviours, 1);
    cr_expect_str_eq(tiny->launch_ids, "");
    s_capture_destroy(&cap);
    cap = s_capture("h200-v32/workloads", s_core);
    const ncu_kernel_t *first, *later;
    s_kernel(&cap, "#2", &first);
    s_kernel(&cap, "#5", &later);
    cr_assert(first && later);
    cr_expect_str_eq(first->launch_ids, "2-4");
    cr_expect_str_eq(later->launch_ids, "5-9");
    s_capture_destroy(&cap);
}

/* Blocks too short to pay for their launch: a cause whose fix keeps the grid
 * saves nothing there, so it does not stand for the latency (corpus v52's layer
 * norm, ATen's layout: 4.2 M blocks of one 64-float row at the SMs' launch
 * floor; its barrier stalls and predicated-off lanes, est. 0% after the floor,
 * had hidden the latency finding), and the latency finding prices fewer,
 * longer blocks up to the busiest unit's ceiling (est. 54%; eight rows a block
 * ran 5.0x). */
Test(ncu_accuracy, blocks_at_the_launch_floor_lead_with_fewer_longer_blocks)
{
    capture_t cap = s_capture("h200-v52/capture-2026-12-03", s_core);
    const fb_finding_t *first = s_lead(&cap, "v52_layernorm64");
    cr_expect_str_eq(first->category, "latency_bound");
    cr_expect(strstr(first->title, "block launch rate") != NULL, "%s", first->title);
    cr_expect_geq(first->speedup, 45.0, "%s", first->title);
    cr_expect(strstr(first->action, "fewer, longer blocks") != NULL, "%s", first->action);
    s_capture_destroy(&cap);
}

/* Lifting an occupancy limit adds warps only where the grid has blocks for
 * them: corpus v52's channel softmax (ATen's layout, 143 blocks of 1024
 * threads, one a SM) fits two a SM, but 121 of 132 SMs still get one; the
 * tail leads (130 blocks ran 1.32x, two a SM 1.20x; the occupancy estimate
 * had been 1.8x). A grid of whole waves was sized to the occupancy and keeps
 * its estimate: corpus v5's 132 blocks of 120 KB (264 blocks at 100 KB ran
 * 1.32x). */
Test(ncu_accuracy, more_blocks_a_sm_need_blocks_in_the_grid)
{
    capture_t cap = s_capture("h200-v52/capture-2026-12-03", s_core);
    const ncu_kernel_t *group;
    size_t k = s_kernel(&cap, "v52_spatial_softmax", &group);
    cr_assert_neq(k, (size_t) -1);
    cr_expect_str_eq(s_first(cap.fb, k)->category, "tail_effect");
    const fb_finding_t *occ = s_category(cap.fb, k, "occupancy");
    cr_expect(occ == NULL || occ->speedup < 15, "%s", occ ? occ->title : "");
    s_capture_destroy(&cap);
    cap = s_capture("h200-v5/capture-2026-12-01", s_core);
    k = s_kernel(&cap, "#8", &group);
    cr_assert_neq(k, (size_t) -1);
    occ = s_category(cap.fb, k, "occupancy");
    cr_assert_not_null(occ);
    cr_expect_geq(occ->speedup, 15.0, "%s", occ->title);
    s_capture_destroy(&cap);
}

/* Occupancy limits that tie bind together: corpus v40's Adam step fits two
 * blocks a SM by its 45 registers and by its 80 KB of shared memory alike, so
 * the finding names both, does not offer smaller blocks (the shared memory
 * would hold them to the same warps), and gives each limit's lever; a kernel
 * limited by one (v40's y = 2x, shared memory only) names that one. */
Test(ncu_accuracy, occupancy_limits_that_tie_are_named_together)
{
    capture_t cap = s_capture("h200-v40/capture-2026-12-03", s_full);
    const ncu_kernel_t *group;
    const fb_finding_t *f = s_category(cap.fb, s_kernel(&cap, "v40_tail_adam", &group), "occupancy");
    cr_assert_not_null(f);
    cr_expect(strstr(f->title, "registers per thread and shared memory per block alike") != NULL, "%s", f->title);
    cr_expect(strstr(f->action, "Lower register use") != NULL && strstr(f->action, "less shared memory") != NULL,
              "%s", f->action);
    cr_expect(strstr(f->action, "Use blocks of") == NULL, "%s", f->action);
    f = s_category(cap.fb, s_kernel(&cap, "v40_tail_scale", &group), "occupancy");
    cr_assert_not_null(f);
    cr_expect(strstr(f->title, "Occupancy limited by shared memory per block:") != NULL, "%s", f->title);
    s_capture_destroy(&cap);
    /* At the SM's block cap the other limits only echo it: corpus v37's
     * one-warp gather (32 blocks a SM by every limit but the warps') gets no
     * occupancy finding; its blocks are held by the launch rate. */
    cap = s_capture("h200-v37/workloads", s_full);
    size_t k = s_kernel(&cap, "#170", &group);
    cr_assert_neq(k, (size_t) -1);
    cr_expect_null(s_category(cap.fb, k, "occupancy"));
    s_capture_destroy(&cap);
}

/* Within the SOL gap (ncu's SM and memory summaries less than 10 points
 * apart) the side whose busiest unit is nearer its attainable ceiling binds:
 * corpus v37's fp32 GEMM under the default plan (issue 86%, L1 75%, summaries
 * 81% and 71%: shared-memory bound before) and corpus v28's elementwise kernel
 * on the H100 (issue 68%, DRAM 61%: DRAM-bound before) are compute-bound on
 * their issue slots, as their --set full truths say. */
Test(ncu_accuracy, within_the_sol_gap_the_unit_nearer_its_ceiling_binds)
{
    static const struct {
        const char *folder, *kernel;
    } cases[] = {{"h200-v37/workloads", "#6"}, {"h200-v28/workloads-h100", "#10"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_t cap = s_capture(cases[i].folder, s_core);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, cases[i].kernel, &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "compute_bound", "%s %s: %s", cases[i].folder, cases[i].kernel, f->title);
        cr_expect(strstr(f->title, "instruction issue") != NULL, "%s", f->title);
        s_capture_destroy(&cap);
    }
}

Test(ncu_accuracy, without_sector_counts_an_l2_above_dram_names_neither_level)
{
    static const struct {
        const char *folder, *kernel, *full;
    } cases[] = {{"h200/capture-2026-12-01", "vec_add", "dram_bound"},
                 {"h200-v13/capture-2026-12-02", "v13_softmax_block", "l2_bound"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_t cap = s_capture(cases[i].folder, s_sol);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, cases[i].kernel, &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "memory_bound", "%s: %s", cases[i].kernel, f->title);
        cr_expect(strstr(f->title, "DRAM or L2") != NULL, "%s", f->title);
        cr_expect(strstr(f->action, "read each byte once") != NULL, "%s", f->action);
        bool named = false;
        for (size_t m = 0; m < feedback_missing_count(cap.fb); m++)
            named = named || strstr(feedback_missing(cap.fb, m), "l1tex__t_sectors_pipe_lsu_mem_global_op_ld") != NULL;
        cr_expect(named, "%s: the sector counts are not listed as missing", cases[i].kernel);
        s_capture_destroy(&cap);
        cap = s_capture(cases[i].folder, s_full);
        f = s_first(cap.fb, s_kernel(&cap, cases[i].kernel, &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, cases[i].full, "%s: %s", cases[i].kernel, f->title);
        s_capture_destroy(&cap);
    }
}

/* Warps that wait on loads which mostly hit L1 are not a DRAM stream below its
 * roof, however little of DRAM they use: corpus v33's attention with a thread a
 * query (K and V rows broadcast to every lane, 90% L1 hits, DRAM 12%) was named
 * one, with 6.1x to gain; it is latency-bound (est. 1.3x), and the loads in
 * flight its action asks for, float4 rows and four partial sums, measured 1.26x
 * (attn_more.txt). Under SpeedOfLight alone there is no stall or hit data. */
Test(ncu_accuracy, loads_that_hit_l1_are_not_a_dram_stream)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v33/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v33_attn_local", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "latency_bound", "%s", f->title);
        cr_expect(f->speedup > 10 && f->speedup < 30, "est. %.0f%% (measured 20%%)", f->speedup);
        s_capture_destroy(&cap);
    }
}

/* Corpus v19's workloads (flash attention, CUB's radix sort, top-k, an embedding
 * gather, index_add_, a depthwise convolution, a softmax over dim 0), under the
 * default plan as it is now and full. */
Test(ncu_accuracy, h200_v19_workloads_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v19", "h200-v19/workloads", "workloads", "core", s_core, true);
}
Test(ncu_accuracy, h200_v19_workloads_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v19", "h200-v19/workloads", "workloads", "full", s_full, true);
}
/* Its layer-norm backward, captured again alone once the op ran on the harness's thread. */
Test(ncu_accuracy, h200_v19_layer_norm_backward_names_every_expected_first_finding)
{
    s_expect_plan("h200-v19", "h200-v19/layer_norm_backward", "lnb", "core", s_core, true);
    s_expect_plan("h200-v19", "h200-v19/layer_norm_backward", "lnb", "full", s_full, true);
}

/* Corpora v16, v17 and v18 were captured under the default plan and full only. */
Test(ncu_accuracy, h200_v18_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v18", "h200-v18/capture-2026-12-02", "kernels", "core", s_core, true);
}
Test(ncu_accuracy, h200_v18_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v18", "h200-v18/capture-2026-12-02", "kernels", "full", s_full, true);
}
Test(ncu_accuracy, h200_v16_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v16", "h200-v16/capture-2026-12-02", "kernels", "core", s_core, true);
}
Test(ncu_accuracy, h200_v16_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v16", "h200-v16/capture-2026-12-02", "kernels", "full", s_full, true);
}
Test(ncu_accuracy, h200_v17_core_names_every_expected_first_finding)
{
    s_expect_plan("h200-v17", "h200-v17/capture-2026-12-02", "kernels", "core", s_core, true);
}
Test(ncu_accuracy, h200_v17_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v17", "h200-v17/capture-2026-12-02", "kernels", "full", s_full, true);
}

/* Corpus v2 as shared (2026-11 captures, tests/fixtures/ncu/h200-v2/): the
 * plans of that day, the default plan of that time among them, may say less
 * than today's core plan but never something wrong; --set full is exact. */
static const char *const s_raw16[] = {"raw16.csv", NULL};
static const char *const s_old_core[] = {"core_raw.csv", NULL};

Test(ncu_accuracy, h200_v2_2026_11_full_names_every_expected_first_finding)
{
    s_expect_plan("h200-v2", "h200-v2", "kernels", "full", s_full, true);
}

Test(ncu_accuracy, h200_v2_2026_11_partial_plans_make_no_wrong_claim)
{
    s_expect_plan("h200-v2", "h200-v2", "kernels", "sol", s_sol, false);
    s_expect_plan("h200-v2", "h200-v2", "kernels", "three", s_three, false);
    s_expect_plan("h200-v2", "h200-v2", "kernels", "raw16", s_raw16, false);
    s_expect_plan("h200-v2", "h200-v2", "kernels", "core-2026-11", s_old_core, false);
}

/* The judge itself: it must be able to say wrong. */
Test(ncu_accuracy, the_judge_tells_right_less_and_wrong_apart)
{
    fb_finding_t f = {.title = "Compute-bound on the XU pipe (transcendentals): 96% busy"};
    snprintf(f.category, sizeof f.category, "compute_bound");
    cr_expect_eq(truth_judge(&f, "compute_bound:xu"), TRUTH_RIGHT);
    cr_expect_eq(truth_judge(&f, "compute_bound:fma"), TRUTH_WRONG);
    cr_expect_eq(truth_judge(&f, "divergence"), TRUTH_LESS);
    cr_expect_eq(truth_judge(&f, "dram_bound"), TRUTH_WRONG);
    snprintf(f.category, sizeof f.category, "l2_bound");
    cr_expect_eq(truth_judge(&f, "uncoalesced_access"), TRUTH_LESS);
    cr_expect_eq(truth_judge(&f, "bank_conflicts"), TRUTH_WRONG);
    cr_expect_eq(truth_judge(NULL, "dram_bound"), TRUTH_WRONG);
    /* Alternatives: the best verdict of any. */
    cr_expect_eq(truth_judge(&f, "bank_conflicts|uncoalesced_access"), TRUTH_LESS);
    snprintf(f.category, sizeof f.category, "divergence");
    cr_expect_eq(truth_judge(&f, "divergence|compute_bound"), TRUTH_RIGHT);
    cr_expect_eq(truth_judge(&f, "compute_bound|divergence"), TRUTH_RIGHT);
    cr_expect_eq(truth_judge(&f, "dram_bound|l1_bound"), TRUTH_WRONG);
}

/* A lever experiment: a kernel, the category of the finding whose lever was
 * pulled in its twin, and what pulling it measured (1 - t_lever / t_kernel;
 * < 0: the twin was slower). */
typedef struct {
    const char *kernel, *category;
    double measured;
} lever_t;

/* Where the lever lost or paid under 10%, its category must not lead; where
 * it paid, it must lead with an estimate within a factor of two of the
 * measured gain. */
static void s_levers(const char *folder, const lever_t *levers, size_t n, const char *const *files, const char *plan)
{
    capture_t cap = s_capture(folder, files);
    for (size_t i = 0; i < n; i++) {
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, levers[i].kernel, &group);
        cr_assert_neq(k, (size_t) -1, "%s: no kernel %s", plan, levers[i].kernel);
        const fb_finding_t *first = s_first(cap.fb, k), *lever = s_category(cap.fb, k, levers[i].category);
        cr_assert_not_null(first, "%s: %s has no finding", plan, levers[i].kernel);
        if (levers[i].measured < 0.10) {
            cr_assert_str_neq(first->category, levers[i].category, "%s: %s leads with %s, whose lever measured %.2fx",
                              plan, levers[i].kernel, levers[i].category, 1 / (1 - levers[i].measured));
            continue;
        }
        cr_assert_str_eq(first->category, levers[i].category, "%s: %s", plan, levers[i].kernel);
        double estimate = lever->speedup / 100;
        cr_assert(estimate >= levers[i].measured / 2 && estimate <= levers[i].measured * 2,
                  "%s: %s: estimated %.0f%%, measured %.0f%%", plan, levers[i].kernel, 100 * estimate,
                  100 * levers[i].measured);
    }
    s_capture_destroy(&cap);
}

/* Corpus v5 (tests/fixtures/ncu/h200-v5/README.md): the occupancy lever, timed
 * on the H200 (capture-2026-12-01/levers.txt, medians of 25 launches, three
 * runs). The register-cap price in the occupancy model was set from these. */
static const lever_t s_v5[] = {
    {"v5_softmax8_free", "occupancy", 1 - 0.1573 / 0.2149},  /* 1.37x */
    {"#8", "occupancy", 1 - 0.2040 / 0.2696},                /* v5_smemphase 120 KB -> 100 KB: 1.32x */
    {"v5_softmax16_free", "occupancy", 1 - 0.4085 / 0.3404}, /* 0.83x */
    {"v5_softmax24_free", "occupancy", 1 - 0.9152 / 0.5288}, /* 0.58x */
    {"v5_sgemm_free", "occupancy", 1 - 10.0787 / 4.5016},    /* 0.45x */
};

/* Corpus v6 (tests/fixtures/ncu/h200-v6/README.md): written after the model
 * was changed, to test it; nothing was changed after its run. */
static const lever_t s_v6[] = {
    {"#0", "occupancy", 1 - 0.1897 / 0.1939},               /* v6_phase 3 -> 4 blocks/SM: 1.02x */
    {"v6_blocksum1024", "occupancy", 1 - 0.5517 / 0.4239},  /* 256-thread blocks: 0.77x */
    {"v6_div_lanes", "divergence", 1 - 0.3268 / 0.6456},    /* 1.98x */
    {"v6_columns_conflict", "bank_conflicts", 1 - 0.2481 / 4.2601}, /* 17.2x */
};

/* Corpus v7 (tests/fixtures/ncu/h200-v7/README.md): levers on kinds the
 * earlier corpora lack, predictions and rule written before the run
 * (capture-2026-12-02/levers.txt, run 1's medians). profeed's first run on it
 * was right on 7 of 9 (docs/gpu-validation/2026-12-02-h200/
 * accuracy_v7_first_run.txt); the scattered stores and divergence on a stream
 * were missed and the models changed after it (docs/ncu.md). The lever added
 * after the run (fix7_regbound_twice, 1.34x) is not part of the rule and not
 * here. */
static const lever_t s_v7[] = {
    {"v7_tinyblock_copy", "occupancy", 1 - 0.2780 / 0.2828},          /* 128-thread blocks: 1.02x */
    {"v7_colmajor_gelu", "uncoalesced_access", 1 - 0.2232 / 0.9707},  /* 4.35x */
    {"v7_block48_fma", "divergence", 1 - 0.4411 / 0.5884},            /* 1.33x */
    {"v7_divmem", "divergence", 1 - 0.4180 / 0.4846},                 /* 1.16x */
    {"v7_tile4x64_scale", "uncoalesced_access", 1 - 0.2093 / 0.3436}, /* 1.64x */
    {"v7_scatter", "uncoalesced_access", 1 - 0.2399 / 4.2112},        /* 17.5x */
    {"v7_div_strided", "divergence", 1 - 0.0496 / 0.0910},            /* 1.83x */
    {"v7_div_strided", "uncoalesced_access", 1 - 0.0900 / 0.0910},    /* coalesced load: 1.01x */
    {"v7_regbound", "dram_bound", 1 - 0.1461 / 0.1853},               /* 8 loads in flight: 1.27x */
    {"v7_regbound", "occupancy", 1 - 0.1743 / 0.1853},                /* same bytes, 2x warps: 1.06x */
};

Test(ncu_accuracy, h200_v7_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v7/capture-2026-12-02", s_v7, sizeof s_v7 / sizeof s_v7[0], s_core, "core");
    s_levers("h200-v7/capture-2026-12-02", s_v7, sizeof s_v7 / sizeof s_v7[0], s_core_metrics, "core-metrics");
    s_levers("h200-v7/capture-2026-12-02", s_v7, sizeof s_v7 / sizeof s_v7[0], s_full, "full");
}

/* Corpus v8 (tests/fixtures/ncu/h200-v8/README.md): the models changed after
 * v7's first run, tested on kernels they were not made with. First run: 3 of
 * 4 (v8_div_chain led with occupancy; docs/gpu-validation/2026-12-02-h200/
 * accuracy_v8_first_run.txt); the divergence model changed after it. C's two
 * levers are within 5%: converged warps is the larger, and the one tested. */
static const lever_t s_v8[] = {
    {"v8_gather", "uncoalesced_access", 1 - 0.3140 / 1.5647},   /* 4.98x */
    {"v8_scatter8", "uncoalesced_access", 1 - 0.1741 / 2.0473}, /* 11.8x */
    {"v8_div_chain", "divergence", 1 - 0.0841 / 0.1598},        /* 1.90x (four chains 1.85x) */
    {"v8_chase", "uncoalesced_access", 1 - 0.1074 / 1.1828},    /* 11.0x */
};

Test(ncu_accuracy, h200_v8_each_lever_leads_where_it_pays)
{
    s_levers("h200-v8/capture-2026-12-02", s_v8, sizeof s_v8 / sizeof s_v8[0], s_core, "core");
    s_levers("h200-v8/capture-2026-12-02", s_v8, sizeof s_v8 / sizeof s_v8[0], s_core_metrics, "core-metrics");
    s_levers("h200-v8/capture-2026-12-02", s_v8, sizeof s_v8 / sizeof s_v8[0], s_full, "full");
}

/* Corpus v9 (tests/fixtures/ncu/h200-v9/README.md): kinds no corpus had. First
 * run: 6 of 8 under core and full (docs/gpu-validation/2026-12-02-h200/
 * accuracy_v9_first_run.txt): the fp16 stream below its roof was called
 * latency-bound, the predicated FMAs compute-bound; the DRAM-stream bound and
 * the per-pipe lanes came after it. F and G are levers that must not lead. */
static const lever_t s_v9[] = {
    {"v9_atomic_one", "contention", 1 - 0.9315 / 29.4754},         /* 31.6x */
    {"v9_half_axpy", "dram_bound", 1 - 0.3741 / 0.7895},           /* 2.11x */
    {"v9_rowsum_thread", "uncoalesced_access", 1 - 0.1250 / 0.5399}, /* 4.32x */
    {"v9_trip_div", "divergence", 1 - 0.0558 / 0.0891},            /* 1.60x */
    {"v9_pred_quarter", "divergence", 1 - 0.1662 / 0.6368},        /* 3.83x */
    {"v9_offset_scale", "uncoalesced_access", 1 - 0.4135 / 0.4264}, /* 1.03x */
    {"v9_embed", "uncoalesced_access", 1 - 0.2708 / 0.2668},       /* 0.99x */
    {"v9_nchw_bias", "compute_bound", 1 - 0.3982 / 0.5164},        /* 1.30x */
};

Test(ncu_accuracy, h200_v9_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v9/capture-2026-12-02", s_v9, sizeof s_v9 / sizeof s_v9[0], s_core, "core");
    s_levers("h200-v9/capture-2026-12-02", s_v9, sizeof s_v9 / sizeof s_v9[0], s_full, "full");
}

/* Corpus v10 (tests/fixtures/ncu/h200-v10/README.md): v9's models on kernels
 * they were not made with, and three new kinds. First run: 4 of 7 under core
 * and full (docs/gpu-validation/2026-12-02-h200/accuracy_v10_first_run.txt):
 * the two streams with the SM as busy as memory were called latency-bound (a
 * condition of the DRAM-stream bound, dropped after it) and the constant
 * lookup table ADU-bound (the replay finding came after it). G's lever must
 * not lead: 64-thread blocks changed nothing. */
static const lever_t s_v10[] = {
    {"v10_l2_gather", "uncoalesced_access", 1 - 0.3108 / 0.4827},  /* 1.55x */
    {"v10_half_math", "dram_bound", 1 - 0.2623 / 0.7337},          /* 2.80x */
    {"v10_pred_alu", "divergence", 1 - 0.1568 / 0.6051},           /* 3.86x */
    {"v10_int8_copy", "dram_bound", 1 - 0.5045 / 2.5609},          /* 5.08x */
    {"v10_const_lut", "warp_stall", 1 - 0.3257 / 26.8274},         /* 82.4x */
    {"v10_colsum_thread", "small_grid", 1 - 0.2506 / 2.3972},      /* 9.57x */
    {"v10_rows64", "occupancy", 1 - 0.6386 / 0.6424},              /* 1.01x */
};

Test(ncu_accuracy, h200_v10_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v10/capture-2026-12-02", s_v10, sizeof s_v10 / sizeof s_v10[0], s_core, "core");
    s_levers("h200-v10/capture-2026-12-02", s_v10, sizeof s_v10 / sizeof s_v10[0], s_full, "full");
}

/* Corpus v11 (tests/fixtures/ncu/h200-v11/README.md): v10's changes where they
 * could be wrong. First run: 2 of 4 under core and full (docs/gpu-validation/
 * 2026-12-02-h200/accuracy_v11_first_run.txt): the whole-line chase was called
 * latency-bound (DRAM 37% under an L2 at 55%, most of whose lookups missed:
 * the DRAM-stream test reads the L2 hit rate since), and the sliding-window
 * convolution leads with its misaligned loads (est. 14%) where the measured
 * lever, register reuse, is l1_bound (1.20x): a known miss, not tested here. */
static const lever_t s_v11[] = {
    {"v11_chase_lines", "dram_bound", 1 - 0.0574 / 0.1096},        /* 1.91x */
    {"v11_const_halves", "warp_stall", 1 - 0.1622 / 1.7209},       /* 10.6x */
    {"v11_cas_max", "contention", 1 - 0.1892 / 1.2826},            /* 6.78x */
};

Test(ncu_accuracy, h200_v11_each_lever_leads_where_it_pays)
{
    s_levers("h200-v11/capture-2026-12-02", s_v11, sizeof s_v11 / sizeof s_v11[0], s_core, "core");
    s_levers("h200-v11/capture-2026-12-02", s_v11, sizeof s_v11 / sizeof s_v11[0], s_full, "full");
}

/* Corpus v13 (tests/fixtures/ncu/h200-v13/README.md): kernels as an agent
 * writes them. First run: 4 of 8 under core and full (docs/gpu-validation/
 * 2026-12-02-h200/accuracy_v13_first_run.txt): the naive matmul led with
 * uncoalesced loads (L1 takes one wavefront a request whatever the sectors:
 * the wavefront counters came after it), the softmax with DRAM (L2's re-reads
 * came after it), and the L1 bound's estimate was its headroom (0% on the
 * naive matmul; the reuse models came after it, for shared-memory bounds
 * too). The interleaved reduction and the fp16 mish are known misses. */
static const lever_t s_v13[] = {
    {"v13_mm_tiled16", "l1_bound", 1 - 0.7470 / 2.1163},           /* 4x4 outputs per thread: 2.83x */
    {"v13_mm_naive", "l1_bound", 1 - 2.1148 / 3.1437},             /* shared-memory tiles: 1.49x */
    {"v13_conv2d_naive", "l1_bound", 1 - 0.3444 / 0.5746},         /* 4 channels per thread: 1.67x */
    {"v13_reduce_strided", "bank_conflicts", 1 - 0.3033 / 0.3945}, /* 1.30x */
    {"v13_softmax_block", "l2_bound", 1 - 0.1382 / 0.1573},        /* row read once: 1.14x */
    {"v13_softmax_block", "barrier_stall", 1 - 0.1544 / 0.1573},   /* shuffle reductions: 1.02x */
};

Test(ncu_accuracy, h200_v13_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v13/capture-2026-12-02", s_v13, sizeof s_v13 / sizeof s_v13[0], s_core, "core");
    s_levers("h200-v13/capture-2026-12-02", s_v13, sizeof s_v13 / sizeof s_v13[0], s_full, "full");
}

/* Corpus v14 (tests/fixtures/ncu/h200-v14/README.md): more agent-style
 * kernels, aimed at v13's changes. First run: 3 of 7 under core and full
 * (docs/gpu-validation/2026-12-02-h200/accuracy_v14_first_run.txt): the
 * column-strided matmul led with the L1 reuse estimate (coalescing comes
 * first since), the 1x1 convolution with its broadcast weights' sectors (their
 * waste reaches L2 only beyond L1's hits since), the 5x5 pool with an L1 bound
 * at 59% (the issue slots count through the SM summary for latency since).
 * The layer norm is a known miss; the warp softmax's float4 lever (1.099x,
 * 1.108x, 1.115x in three runs) is too near 1.10x to test either way. */
static const lever_t s_v14[] = {
    {"v14_mm_tx_rows", "uncoalesced_access", 1 - 0.4253 / 2.2711},  /* 5.34x */
    {"v14_avgpool5", "l1_bound", 1 - 0.0816 / 0.0893},              /* 4 outputs per thread: 1.09x */
    {"v14_relu_one_block_per_sm", "small_grid", 1 - 0.3587 / 3.2005}, /* 8.92x */
    {"v14_conv1x1", "l2_bound", 1 - 0.1587 / 0.2805},               /* 4 channels per thread: 1.77x */
    {"v14_hist_global", "contention", 1 - 2.9075 / 17.3785},        /* 5.98x */
};

Test(ncu_accuracy, h200_v14_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v14/capture-2026-12-02", s_v14, sizeof s_v14 / sizeof s_v14[0], s_core, "core");
    s_levers("h200-v14/capture-2026-12-02", s_v14, sizeof s_v14 / sizeof s_v14[0], s_full, "full");
}

/* Corpus v16 (tests/fixtures/ncu/h200-v16/README.md): aimed at the launch
 * floor and the idle-SM cap. First run 1 of 3 under core and full: the sum over
 * 96 blocks was led by contention from 96 atomics (capped by the atomics' own
 * time since) and estimated at 1.4x as a small grid (5.5x with the too-few-warps
 * factor since). The copy over 66 blocks is a known miss. */
static const lever_t s_v16[] = {
    {"v16_sigmoid_1pt", "dram_bound", 1 - 0.1320 / 0.2228},     /* float4: 1.69x */
    {"v16_sum_few_blocks", "small_grid", 1 - 0.2133 / 1.0082}, /* 528 blocks: 4.73x */
};

Test(ncu_accuracy, h200_v16_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v16/capture-2026-12-02", s_v16, sizeof s_v16 / sizeof s_v16[0], s_core, "core");
    s_levers("h200-v16/capture-2026-12-02", s_v16, sizeof s_v16 / sizeof s_v16[0], s_full, "full");
}

/* Corpus v17 (tests/fixtures/ncu/h200-v17/README.md). First run 2 of 3 under
 * core and full: the RMSNorm with its row in 143 registers (8 warps per SM, a
 * DRAM stream at 63%) was led by the register limit on occupancy, whose
 * estimate took the DRAM bound's headroom; in a DRAM stream it no longer does
 * (the test below). */
static const lever_t s_v17[] = {
    {"v17_mm_smem_conflict", "bank_conflicts", 1 - 2.4538 / 9.8286}, /* padded tiles: 4.01x */
    {"v17_gelu_half1", "dram_bound", 1 - 0.1520 / 0.3874},          /* 8 halves a thread: 2.55x */
    {"v17_rmsnorm_warp", "dram_bound", 1 - 0.2726 / 0.3569},        /* float4: 1.31x */
};

Test(ncu_accuracy, h200_v17_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v17/capture-2026-12-02", s_v17, sizeof s_v17 / sizeof s_v17[0], s_core, "core");
    s_levers("h200-v17/capture-2026-12-02", s_v17, sizeof s_v17 / sizeof s_v17[0], s_full, "full");
}

/* In a DRAM stream below its roof, the register limit on occupancy is one way
 * to more bytes in flight, the DRAM bound's own lever: v17's RMSNorm leads with
 * the DRAM bound, whose action names more warps too, and keeps the occupancy
 * finding second. */
Test(ncu_accuracy, a_register_limit_in_a_dram_stream_leaves_the_bound_its_headroom)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v17/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v17_rmsnorm_warp", &group);
        const fb_finding_t *first = s_first(cap.fb, k), *occupancy = s_category(cap.fb, k, "occupancy");
        cr_assert_not_null(first);
        cr_expect_str_eq(first->category, "dram_bound");
        cr_expect(strstr(first->action, "more warps are the other way") != NULL, "%s", first->action);
        cr_expect_not_null(occupancy, "the occupancy finding is gone");
        s_capture_destroy(&cap);
    }
}

/* Whether a finding carries evidence under this metric name. */
static bool s_has_evidence(const fb_finding_t *f, const char *metric)
{
    for (size_t e = 0; e < f->evidence_count; e++)
        if (strcmp(f->evidence[e].metric, metric) == 0)
            return true;
    return false;
}

/* Corpus v15 (tests/fixtures/ncu/h200-v15/README.md): a third round of
 * agent-style kernels. First run: 6 of 9 under core and full
 * (docs/gpu-validation/2026-12-02-h200/accuracy_v15_first_run.txt); its three
 * misses are in known_misses.txt. Left out of this table: the serial block
 * tail (its shuffle lever, 1.03x, is led by the predicated-off lanes: a known
 * miss), the 64-bit index arithmetic (1.11x, 0.098 of the time: too near the
 * line to test either way), the row sums over 64 blocks (a known miss since
 * the idle-SM estimate is capped by DRAM's and L2's headroom: the test
 * below), and the GEMV whose float4 lever (0.98x) is the DRAM bound's own. */
static const lever_t s_v15[] = {
    {"v15_spmv_scalar", "uncoalesced_access", 1 - 0.2870 / 0.3831}, /* a warp per row: 1.33x */
    {"v15_spmv_scalar", "divergence", 1 - 0.4693 / 0.3831},         /* rows sorted by length: 0.82x */
    {"v15_sgemm_4x4", "l1_bound", 1 - 0.4646 / 0.6059},             /* 8x8 a thread: 1.30x */
    {"v15_queue_atomic", "contention", 1 - 0.0516 / 0.4180},        /* 1024 items an atomic: 8.10x */
};

Test(ncu_accuracy, h200_v15_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v15/capture-2026-12-02", s_v15, sizeof s_v15 / sizeof s_v15[0], s_core, "core");
    s_levers("h200-v15/capture-2026-12-02", s_v15, sizeof s_v15 / sizeof s_v15[0], s_full, "full");
}

/* Work on idle SMs saves at most what L2 and DRAM leave: v15's 64 row sums
 * hold DRAM at 84% on 64 SMs, so the small grid is estimated at under 10%
 * (measured 1.11x; the idle SMs alone said 2.1x) and says why; v4's 2-block
 * grid, with DRAM nearly idle, keeps the idle-SM estimate. */
Test(ncu_accuracy, idle_sms_save_at_most_what_the_shared_units_leave)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v15/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v15_rowsum_block", &group);
        const fb_finding_t *grid = s_category(cap.fb, k, "small_grid");
        cr_assert_not_null(grid, "v15_rowsum_block: no small_grid finding");
        cr_expect(grid->speedup > 3 && grid->speedup < 10, "estimated %.1f%%", grid->speedup);
        cr_expect(strstr(grid->title, "52% of the GPU has no work") != NULL, "%s", grid->title);
        cr_expect(s_has_evidence(grid, "shared_headroom"), "no shared_headroom evidence");
        s_capture_destroy(&cap);
        cap = s_capture("h200-v4/capture-2026-12-01", plans[p]);
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v4_tiny_grid_long", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "small_grid");
        cr_expect(f->speedup > 90, "estimated %.1f%%", f->speedup);
        s_capture_destroy(&cap);
    }
}

/* Uncoalesced loads that feed tensor cores are fragment loads: v15's WMMA fed
 * from global memory is told to stage tiles in shared memory (measured 2.87x),
 * v14's column-strided SIMT matmul to swap the index roles (measured 5.34x). */
Test(ncu_accuracy, uncoalesced_fragment_loads_are_told_to_stage_through_shared_memory)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v15/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v15_wmma_global", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "uncoalesced_access");
        cr_expect(strstr(f->action, "ldmatrix") != NULL, "%s", f->action);
        s_capture_destroy(&cap);
        cap = s_capture("h200-v14/capture-2026-12-02", plans[p]);
        f = s_first(cap.fb, s_kernel(&cap, "v14_mm_tx_rows", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "uncoalesced_access");
        cr_expect(strstr(f->action, "swap the index roles") != NULL && strstr(f->action, "ldmatrix") == NULL, "%s",
                  f->action);
        s_capture_destroy(&cap);
    }
}

/* On GH100 the tensor counters also count the shared FP16 datapath: v18's
 * warp-per-row SpMV issues no MMA and shows 1.5% there, a twentieth of its ALU
 * pipe. Its uncoalesced gathers are told to change the layout, not to stage
 * tensor-core fragments. */
Test(ncu_accuracy, uncoalesced_loads_without_mma_instructions_are_not_fragment_loads)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v18/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v18_spmv_warp_short", &group);
        cr_assert_gt(group->v[NM_PIPE_TENSOR], 1.0, "the counter's noise this test is about");
        const fb_finding_t *f = s_category(cap.fb, k, "uncoalesced_access");
        cr_assert_not_null(f);
        cr_expect(strstr(f->action, "ldmatrix") == NULL && strstr(f->action, "tensor") == NULL, "%s", f->action);
        s_capture_destroy(&cap);
    }
}

/* A warp per short item: v18's SpMV gives each CSR row of 1-7 nonzeros a warp,
 * so a load request carries 11.2 bytes while warps wait on memory 75% of their
 * stall cycles. The idle lanes in the loads lead, est. 2.5x, over the latency
 * bound (1.7x): 4 lanes per row measured 3.42x. Its full-lane neighbours in
 * the corpus (at 32 lanes, or loads carrying 66 bytes and more) get no such
 * finding. */
Test(ncu_accuracy, idle_lanes_in_the_loads_of_a_latency_bound_warp_lead_with_their_round_trips)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v18/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v18_spmv_warp_short", &group);
        const fb_finding_t *f = s_first(cap.fb, k);
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "divergence");
        cr_expect(strstr(f->title, "Idle lanes in the loads") != NULL, "%s", f->title);
        cr_expect(strstr(f->action, "lanes per item") != NULL, "%s", f->action);
        cr_expect(f->speedup >= 50 && f->speedup <= 75, "est. %g%% (measured 71%%)", f->speedup);
        cr_expect(s_has_evidence(f, "load_request_bytes"), "%s", f->title);
        const fb_finding_t *latency = s_category(cap.fb, k, "latency_bound");
        cr_expect(latency && latency->speedup < f->speedup);
        for (size_t i = 0; i < feedback_finding_count(cap.fb); i++) {
            const fb_finding_t *x = feedback_finding(cap.fb, i);
            if (x->kernel != k && strcmp(x->category, "divergence") == 0)
                cr_expect(strstr(x->title, "Idle lanes in the loads") == NULL, "%s", x->title);
        }
        s_capture_destroy(&cap);
    }
}

/* GH100's tensor counters also count the FP16 datapath the FMA pipe shares: v4's
 * HFMA2 kernel (no MMA) reads 85.8% on both and names no tensor pipe; v2's HMMA
 * kernel (tensor 96.6%, FMA 1.2%) keeps it. */
Test(ncu_accuracy, fp16_arithmetic_is_not_taken_for_tensor_core_work)
{
    static const struct {
        const char *folder, *kernel;
        bool tensor;
    } cases[] = {{"h200-v4/capture-2026-12-01", "v4_hfma2_compute", false},
                 {"h200-v2/capture-2026-12-01", "hmma_heavy", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        capture_t cap = s_capture(cases[i].folder, s_core);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, cases[i].kernel, &group);
        cr_assert_neq(k, (size_t) -1, "%s", cases[i].kernel);
        cr_assert_gt(group->v[NM_PIPE_TENSOR], 80.0, "%s: the reading this test is about", cases[i].kernel);
        ncu_units_t units;
        ncu_units_measure(group, 0, &units);
        cr_expect_eq(ncu_units_find(&units, "tensor") != NULL, cases[i].tensor, "%s", cases[i].kernel);
        for (size_t f = 0; f < feedback_finding_count(cap.fb); f++) {
            const fb_finding_t *x = feedback_finding(cap.fb, f);
            if (x->kernel == k && !cases[i].tensor)
                cr_expect_null(strstr(x->title, "tensor pipe"), "%s", x->title);
        }
        s_capture_destroy(&cap);
    }
}

/* A fence is the warp's own dead time: deleting it shortens the warps' latency
 * by its share of the stall cycles, which a kernel under its ceilings turns
 * into time until a unit reaches its ceiling, and the fences' own L2 work goes
 * with them. v22's fence after every store, on the H200 (membar 44% of the
 * stall cycles, L2 71%, DRAM 42%: no fence measured 30%) and on the H100 (48%,
 * L2 95%, DRAM 51%: 26%): the estimate lies between what was measured and the
 * share, and the L2 bound, whose headroom the fences fill, does not lead. */
Test(ncu_accuracy, fence_waits_are_dead_time_and_their_l2_work_goes_with_them)
{
    static const char *const folders[] = {"h200-v22/capture-2026-12-02", "h200-v22/capture-h100-2026-12-02"};
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t d = 0; d < sizeof folders / sizeof folders[0]; d++)
        for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
            capture_t cap = s_capture(folders[d], plans[p]);
            const ncu_kernel_t *group;
            size_t k = s_kernel(&cap, "v22_fence_store", &group);
            cr_assert_neq(k, (size_t) -1);
            const fb_finding_t *first = s_first(cap.fb, k);
            cr_assert_not_null(first);
            cr_expect_str_eq(first->category, "warp_stall", "%s", folders[d]);
            cr_expect(strstr(first->title, "memory barriers") != NULL, "%s", first->title);
            cr_expect(first->speedup >= 25 && first->speedup <= 48, "%s: est. %.1f%% (measured 26-30%%)",
                      folders[d], first->speedup);
            s_capture_destroy(&cap);
        }
}

/* A fence after a contended atomic waits for the atomic, which queues at its
 * address with or without the fence: corpus v49's Triton sum (tl.atomic_add's
 * default acq_rel fences around 262,144 atomics on one float, membar 42% of
 * the stall cycles) ran 0.96x with the atomics relaxed, and 6.2x with 64x
 * fewer atomics. The fences' estimate is held to what the atomics, served one
 * at a time, leave of the time, so contention leads; v22's fences after plain
 * stores keep theirs (the test above). */
Test(ncu_accuracy, fences_behind_contended_atomics_leave_the_lead_to_the_contention)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v49/capture-2026-12-03", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v49_sum_atomic", &group);
        cr_assert_neq(k, (size_t) -1);
        const fb_finding_t *first = s_first(cap.fb, k), *fence = s_category(cap.fb, k, "warp_stall");
        cr_assert_not_null(first);
        cr_expect_str_eq(first->category, "contention", "%s", first->title);
        cr_assert_not_null(fence);
        cr_expect_leq(fence->speedup, 10.0, "%s: est. %.1f%% (relaxed measured 0.96x)", fence->title, fence->speedup);
        cr_expect(strstr(fence->action, "sem=\"relaxed\"") != NULL, "%s", fence->action);
        s_capture_destroy(&cap);
    }
}

/* Atomics that never queued claim no contention: cuDNN's flash attention (v19,
 * 2,180 tile-scheduler atomics) and its split-K dgrad GEMM (v12, 130) hold the
 * L2 atomic units at 0.00%, where every contended kernel of the corpora holds
 * them at 0.35% or more; those keep their contention findings (the accuracy
 * suites and the lever tables). */
Test(ncu_accuracy, atomics_with_the_l2_atomic_units_idle_claim_no_contention)
{
    static const struct {
        const char *folder, *kernel;
    } idle[] = {{"h200-v19/workloads", "#0"}, {"h200-v12/workloads", "#12"}};
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t i = 0; i < sizeof idle / sizeof idle[0]; i++)
        for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
            capture_t cap = s_capture(idle[i].folder, plans[p]);
            const ncu_kernel_t *group;
            size_t k = s_kernel(&cap, idle[i].kernel, &group);
            cr_assert_neq(k, (size_t) -1, "%s %s", idle[i].folder, idle[i].kernel);
            cr_assert_gt(s_or0_atomics(group), 100, "%s: the atomics this test is about", group->name);
            cr_expect_lt(group->v[NM_L2_ATOMIC_PCT], 0.01, "%s", group->name);
            cr_expect_null(s_category(cap.fb, k, "contention"), "%s: %s", idle[i].folder, group->name);
            s_capture_destroy(&cap);
        }
}

/* A fix that keeps the grid cannot beat the block floor, the launch rate or,
 * for blocks that wait on DRAM, their resident count per round trip: v15's
 * block sums (262144 blocks of 256 threads, 8 resident) run at 97% of that
 * floor, so no profeed finding that keeps the grid claims more than 3.4% (the
 * shuffle lever measured 3%); v20's stride-2 complex reads run at 90% of it, so
 * their uncoalesced loads claim 10% (the plane of real parts measured 10%),
 * and the DRAM bound's evidence names the resident blocks. */
Test(ncu_accuracy, fixes_that_keep_the_grid_save_at_most_what_the_block_floor_leaves)
{
    static const char *const keep[] = {"divergence", "compute_bound", "uncoalesced_access", "l1_bound",
                                       "bank_conflicts", "warp_stall", "barrier_stall"};
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v15/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        size_t k = s_kernel(&cap, "v15_block_sum_serial", &group);
        size_t seen = 0;
        for (size_t f = 0; f < feedback_finding_count(cap.fb); f++) {
            const fb_finding_t *x = feedback_finding(cap.fb, f);
            if (x->kernel != k || !isfinite(x->speedup) || strncmp(x->source, "profeed:", 8) != 0)
                continue;
            for (size_t c = 0; c < sizeof keep / sizeof keep[0]; c++)
                if (strcmp(x->category, keep[c]) == 0) {
                    cr_expect(x->speedup <= 4, "%s: estimated %.1f%%", x->category, x->speedup);
                    seen++;
                }
        }
        cr_expect(seen >= 2, "v15_block_sum_serial: %zu findings that keep the grid", seen);
        s_capture_destroy(&cap);

        cap = s_capture("h200-v20/capture-2026-12-02", plans[p]);
        k = s_kernel(&cap, "v20_complex_re_abs", &group);
        const fb_finding_t *u = s_category(cap.fb, k, "uncoalesced_access");
        cr_assert_not_null(u);
        cr_expect(u->speedup >= 8 && u->speedup <= 12, "est. %.1f%% (measured 10%%)", u->speedup);
        const fb_finding_t *d = s_category(cap.fb, k, "dram_bound");
        cr_assert_not_null(d);
        bool named = false;
        for (size_t e = 0; e < d->evidence_count; e++)
            named = named || (strcmp(d->evidence[e].metric, "block_launch_share") == 0 &&
                              strstr(d->evidence[e].text, "8 resident") != NULL);
        cr_expect(named, "%s: the block floor's evidence names the resident blocks", d->title);
        s_capture_destroy(&cap);
    }
}

/* Blocks too short to pay for their launch: v10's byte copy (4M blocks of one
 * byte a thread, one every 159 cycles per SM against the H200's measured 160)
 * and v10's 64-float rows (1M blocks) get the launch evidence and the lever of
 * fewer, longer blocks on their DRAM and latency findings; v15's GEMV (2048
 * blocks, each a row a warp over 8192 floats) does not. */
Test(ncu_accuracy, blocks_too_short_to_pay_for_their_launch_are_named_with_the_measured_floor)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v10/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        static const char *const shorts[][2] = {{"v10_int8_copy", "dram_bound"}, {"v10_rows64", "latency_bound"}};
        for (size_t i = 0; i < 2; i++) {
            const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, shorts[i][0], &group));
            cr_assert_not_null(f);
            cr_expect_str_eq(f->category, shorts[i][1]);
            cr_expect(strstr(f->action, "fewer, longer blocks") != NULL, "%s: %s", shorts[i][0], f->action);
            cr_expect(s_has_evidence(f, "block_launch_share"), "%s: no block_launch_share evidence", shorts[i][0]);
        }
        s_capture_destroy(&cap);
        cap = s_capture("h200-v16/capture-2026-12-02", plans[p]);
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v16_sigmoid_1pt", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "dram_bound");
        cr_expect(s_has_evidence(f, "block_launch_share") && strstr(f->action, "fewer, longer blocks") != NULL,
                  "v16_sigmoid_1pt: %s", f->action);
        s_capture_destroy(&cap);
        cap = s_capture("h200-v15/capture-2026-12-02", plans[p]);
        f = s_first(cap.fb, s_kernel(&cap, "v15_gemv_warp_row", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "dram_bound");
        cr_expect(strstr(f->action, "fewer, longer blocks") == NULL, "%s", f->action);
        s_capture_destroy(&cap);
    }
}

/* A DRAM bound whose L1-missing loads fetch 1.3x-2x DRAM's reads says the
 * kernel reads its data twice (corpus v14's layer norm, 1.46x: reading each
 * row once ran 1.26x); a stream (v14's warp softmax, 1.0x) is not told so. And
 * a latency bound names the busiest unit its test counted: v14's pool has the
 * issue slots at 60.5% of active cycles, counted through the SM summary, and
 * its title says so beside L1's 59%, so the evidence's "issue 61%" does not
 * contradict "no unit reaches 60%". */
Test(ncu_accuracy, a_second_pass_over_the_data_is_named_and_a_latency_bound_names_what_it_counted)
{
    static const char *const *const plans[] = {s_core, s_full};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        capture_t cap = s_capture("h200-v14/capture-2026-12-02", plans[p]);
        const ncu_kernel_t *group;
        const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v14_layernorm_rows", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "dram_bound");
        cr_expect(strstr(f->action, "reads its data more than once") != NULL, "%s", f->action);
        f = s_first(cap.fb, s_kernel(&cap, "v14_softmax_warp", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "dram_bound");
        cr_expect(strstr(f->action, "more than once") == NULL, "%s", f->action);
        f = s_first(cap.fb, s_kernel(&cap, "v14_avgpool5", &group));
        cr_assert_not_null(f);
        cr_expect_str_eq(f->category, "latency_bound");
        cr_expect(strstr(f->title, "(busiest: L1/TEX cache and shared memory 59%; the issue slots 6") != NULL &&
                      strstr(f->title, "% of active cycles, SM 59% over the elapsed ones)") != NULL,
                  "%s", f->title);
        s_capture_destroy(&cap);
    }
}

/* v7_regbound's DRAM bound below the roof at 8 warps per SM names both ways to
 * more bytes in flight (8 loads per thread 1.27x, twice the warps 1.34x);
 * v7_tinyblock_copy, at 32 warps and limited by blocks, names only loads. */
Test(ncu_accuracy, a_dram_bound_limited_by_registers_names_more_warps_too)
{
    capture_t cap = s_capture("h200-v7/capture-2026-12-02", s_core);
    const ncu_kernel_t *group;
    const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v7_regbound", &group));
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "dram_bound");
    cr_expect(strstr(f->action, "more warps are the other way") != NULL, "%s", f->action);
    f = s_first(cap.fb, s_kernel(&cap, "v7_tinyblock_copy", &group));
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "dram_bound");
    cr_expect(strstr(f->action, "more warps") == NULL, "%s", f->action);
    s_capture_destroy(&cap);
}

/* Predicated-off lanes are placed on a pipe by the per-pipe counters: in
 * v9_pred_quarter the FMA pipe does work in 8 of 32 lanes (every lane active)
 * and the finding names it; rsqrt_heavy's guarded fix-ups leave its FMA pipe
 * at 10.7 useful lanes, but its bound is the XU pipe, which runs all 32, so
 * no predication finding is made at all. */
Test(ncu_accuracy, predicated_off_lanes_count_on_the_pipe_they_waste)
{
    capture_t cap = s_capture("h200-v9/capture-2026-12-02", s_core);
    const ncu_kernel_t *group;
    const fb_finding_t *f = s_first(cap.fb, s_kernel(&cap, "v9_pred_quarter", &group));
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "divergence");
    cr_expect(strstr(f->title, "Predicated-off lanes") && strstr(f->title, "FP32 FMA pipe"), "%s", f->title);
    s_capture_destroy(&cap);

    cap = s_capture("h200-v2/capture-2026-12-01", s_core);
    size_t k = s_kernel(&cap, "rsqrt_heavy", &group);
    cr_assert_neq(k, (size_t) -1);
    f = s_first(cap.fb, k);
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "compute_bound");
    const fb_finding_t *divergence = s_category(cap.fb, k, "divergence");
    cr_expect_null(divergence, "%s", divergence ? divergence->title : "");
    s_capture_destroy(&cap);
}

Test(ncu_accuracy, h200_v5_occupancy_leads_where_its_lever_pays_and_only_there)
{
    s_levers("h200-v5/capture-2026-12-01", s_v5, sizeof s_v5 / sizeof s_v5[0], s_core, "core");
    s_levers("h200-v5/capture-2026-12-01", s_v5, sizeof s_v5 / sizeof s_v5[0], s_core_metrics, "core-metrics");
    s_levers("h200-v5/capture-2026-12-01", s_v5, sizeof s_v5 / sizeof s_v5[0], s_full, "full");
}

Test(ncu_accuracy, h200_v6_each_lever_leads_where_it_pays_and_only_there)
{
    s_levers("h200-v6/capture-2026-12-01", s_v6, sizeof s_v6 / sizeof s_v6[0], s_core, "core");
    s_levers("h200-v6/capture-2026-12-01", s_v6, sizeof s_v6 / sizeof s_v6[0], s_core_metrics, "core-metrics");
    s_levers("h200-v6/capture-2026-12-01", s_v6, sizeof s_v6 / sizeof s_v6[0], s_full, "full");
}

/* Loads and stores that both waste most of each sector (a thread's own row,
 * read and written) are one indexing that one change coalesces: their wastes
 * add, and L2's share is of L2's sectors. Corpus v63's softmax a thread a row
 * (4 bytes of each sector on both sides, L1 thrashing) est. about 4x where a
 * warp a row measured 24x (the rows' re-reads hit L1 once coalesced, which no
 * counter of the capture shows); v7's column-major GELU est. 4.7x, measured
 * 4.35x. One side alone keeps L1's share: v15's SpMV a thread a row, whose
 * random reads of x stay scattered, measured 1.33x. */
Test(ncu_accuracy, loads_and_stores_wasted_alike_are_priced_together)
{
    s_expect_estimate("h200-v63/capture-2026-12-04", "v63_softmax_rowthread", "uncoalesced_access", true, 3, 6, 24.0,
                      "stores use 4.0");
    s_expect_estimate("h200-v7/capture-2026-12-02", "v7_colmajor_gelu", "uncoalesced_access", true, 3.5, 5.5, 4.35,
                      "stores use");
    s_expect_estimate("h200-v15/capture-2026-12-02", "v15_spmv_scalar", "uncoalesced_access", true, 1.2, 2.0, 1.33,
                      NULL);
}

/* On a page without profeed's sector counts (KernelFoundry's --set detailed),
 * a latency verdict gives way to NCU's count of a waste that accounts for most
 * of the time: v63's softmax a thread a row, latency-bound at L2 50%, where
 * UncoalescedGlobalAccess counts 88% of the sectors excessive. Where profeed
 * measured a bound, NCU's estimate stays evidence (v63's GEMV, L1 99%). */
Test(ncu_accuracy, ncu_counted_waste_names_the_cause_of_a_latency_verdict)
{
    static const char *const detailed[] = {"detailed.csv", NULL};
    capture_t cap = s_capture("h200-v63/agents-2026-12-04", detailed);
    const fb_finding_t *f = s_lead(&cap, "v63_softmax_rowthread");
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "uncoalesced_access", "%s", f->title);
    cr_expect(strncmp(f->source, "ncu:UncoalescedGlobalAccess", 27) == 0, "%s", f->source);
    cr_expect_not_null(s_evidence(f, "names the waste behind the latency"), "%s", f->title);
    f = s_lead(&cap, "v63_gemv_rowthread");
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "l1_bound", "%s", f->title);
    s_capture_destroy(&cap);
}

/* The same page names a shared-memory bound; NCU's count of the replays on that
 * very pipe (excessive wavefronts) is what the fix removes: v64's tiled SGEMM
 * with its A tile stored transposed (L1/shared 96%, a third of the wavefronts
 * replays; padding ran 1.43x). The page cannot tell a layout's conflicts from
 * atomics on few addresses, and the action gives both fixes. A global-sector
 * count does not displace a DRAM bound: v64's 2x2 max pool (NCU est. 43%,
 * float2 loads 1.08x). */
Test(ncu_accuracy, ncu_counted_replays_name_the_cause_of_a_shared_memory_bound)
{
    static const char *const detailed[] = {"detailed.csv", NULL};
    capture_t cap = s_capture("h200-v64/agents-2026-12-04", detailed);
    const fb_finding_t *f = s_lead(&cap, "v64_sgemm_tile_t");
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "bank_conflicts", "%s", f->title);
    cr_expect(strncmp(f->source, "ncu:UncoalescedSharedAccess", 27) == 0, "%s", f->source);
    cr_expect_not_null(s_evidence(f, "names the waste behind the bound"), "%s", f->title);
    cr_expect(strstr(f->action, "__match_any_sync") != NULL, "%s", f->action);
    f = s_lead(&cap, "v64_maxpool2x2");
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "dram_bound", "%s", f->title);
    s_capture_destroy(&cap);
}

/* The capture's launches of `kernel` (by name up to its arguments) with one
 * counter set, and the feedback made again from them. */
static void s_reanalyze_with(capture_t *cap, const char *kernel, ncu_metric_t metric, double value)
{
    size_t n = strlen(kernel);
    for (size_t i = 0; i < ncu_data_count(cap->data); i++) {
        ncu_launch_t *l = ncu_data_at(cap->data, i);
        if (strncmp(l->kernel, kernel, n) == 0 && l->kernel[n] == '(')
            l->v[metric] = value;
    }
    s_reanalyze(cap);
}

/* The group of `kernel` (by name up to its arguments), which the capture must
 * hold, and its first finding of `category` (NULL when it has none). */
static const ncu_kernel_t *s_group(const capture_t *cap, const char *kernel)
{
    const ncu_kernel_t *group;
    cr_assert_neq(s_kernel(cap, kernel, &group), (size_t) -1, "%s is not in the capture", kernel);
    return group;
}

static const fb_finding_t *s_finding(const capture_t *cap, const char *kernel, const char *category)
{
    const ncu_kernel_t *group;
    size_t k = s_kernel(cap, kernel, &group);
    cr_assert_neq(k, (size_t) -1, "%s is not in the feedback", kernel);
    return s_category(cap->fb, k, category);
}

/* An occupancy limit no SM can reach (a hostile capture's 1e15 blocks) prices
 * the register lever as the SM's block cap and warps allow, and at once: the
 * lever's search once counted up to the limit it was given (found by
 * fuzz_ncu_csv: 8 s for one kernel of 1e9). */
Test(ncu_accuracy, an_occupancy_limit_past_the_sms_cap_is_the_cap, .timeout = 30)
{
    static const ncu_metric_t others[] = {NM_OCC_LIMIT_SMEM, NM_OCC_LIMIT_WARPS, NM_OCC_LIMIT_BARRIERS,
                                          NM_OCC_LIMIT_BLOCKS};
    capture_t cap = s_capture("h200-v38/capture-2026-12-03", s_full);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        s_reanalyze_with(&cap, "v38_bf16_gemm_fma", others[i], 32);
    const fb_finding_t *f = s_finding(&cap, "v38_bf16_gemm_fma", "occupancy");
    cr_assert_not_null(f, "the register limit's finding");
    double capped = f->speedup;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        s_reanalyze_with(&cap, "v38_bf16_gemm_fma", others[i], 1e15);
    f = s_finding(&cap, "v38_bf16_gemm_fma", "occupancy");
    cr_assert_not_null(f);
    cr_expect_float_eq(f->speedup, capped, 1e-9, "est. %g%% against %g%%", f->speedup, capped);
    s_capture_destroy(&cap);
}

/* Two readings a point apart swap places from one profile to the next
 * (bench/stability.py: the naive matmul of kernels.cu, L1 78% and the LSU
 * pipe 77%-79% across its four captures). The verdict must not swap with
 * them: the LSU pipe issuing L1's requests at L1's own load is the L1 bound,
 * whose finding names the reuse, and "almost no memory traffic" is said only
 * where there is none. */
Test(ncu_accuracy, an_lsu_pipe_as_busy_as_its_l1_keeps_the_l1_bound)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200/capture-2026-12-04b", core);
    const fb_finding_t *f = s_lead(&cap, "matmul_naive");
    cr_assert_str_eq(f->category, "l1_bound", "%s", f->title);
    double clean = f->speedup;
    const ncu_kernel_t *group = s_group(&cap, "matmul_naive");
    double l1 = group->v[NM_L1_PCT];
    cr_assert(l1 > 70 && l1 < 85 && fabs(group->v[NM_PIPE_LSU] - l1) < 2, "the readings this test is about: %g %g",
              l1, group->v[NM_PIPE_LSU]);
    s_reanalyze_with(&cap, "matmul_naive", NM_PIPE_LSU, l1 + 1.5);
    f = s_lead(&cap, "matmul_naive");
    cr_expect_str_eq(f->category, "l1_bound", "%s", f->title);
    cr_expect_float_eq(f->speedup, clean, 3.0, "est. %.0f%% against %.0f%%", f->speedup, clean);
    cr_expect(strstr(f->title, "almost no memory traffic") == NULL, "%s", f->title);
    /* Far busier than L1 (by more than the SOL gap), the LSU pipe binds: its
     * memory instructions, not their bytes, set the time. */
    s_reanalyze_with(&cap, "matmul_naive", NM_PIPE_LSU, 95);
    f = s_lead(&cap, "matmul_naive");
    cr_expect_str_eq(f->category, "compute_bound", "%s", f->title);
    cr_expect(strstr(f->title, "LSU pipe") && strstr(f->title, "issuing loads and stores"), "%s", f->title);
    cr_expect(strstr(f->action, "fewer memory instructions") != NULL, "%s", f->action);
    s_capture_destroy(&cap);
}

/* A request takes one L1 wavefront at least; a count of wavefronts a hair
 * under the requests is the two counters' noise, not a license to price L1's
 * work by the sectors (corpus v13's naive matmul: 1.00 wavefront a request,
 * 18 of 32 bytes of a sector used, 88% hits: uncoalesced loads are not its
 * cause, and the L1 bound's reuse estimate halved when they were). */
Test(ncu_accuracy, fewer_wavefronts_than_requests_are_read_as_one_a_request)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v13/capture-2026-12-02", core);
    const fb_finding_t *f = s_lead(&cap, "v13_mm_naive");
    cr_assert_str_eq(f->category, "l1_bound", "%s", f->title);
    double clean = f->speedup;
    const ncu_kernel_t *group = s_group(&cap, "v13_mm_naive");
    double req = group->v[NM_REQUESTS_GLOBAL_LD];
    cr_assert(req > 0 && group->v[NM_WAVEFRONTS_GLOBAL_LD] < 1.02 * req, "the readings this test is about");
    s_reanalyze_with(&cap, "v13_mm_naive", NM_WAVEFRONTS_GLOBAL_LD, 0.99 * req);
    f = s_lead(&cap, "v13_mm_naive");
    cr_expect_str_eq(f->category, "l1_bound", "%s", f->title);
    cr_expect_float_eq(f->speedup, clean, 2.0, "est. %.0f%% against %.0f%%", f->speedup, clean);
    s_capture_destroy(&cap);
}

/* A load request that waits a hair less than an idle round trip still waits
 * its own (bench/stability.py: corpus v41's pointer chase within L2, 356
 * cycles a request against a 355-cycle trip). The round-trip floor on what
 * coalescing saves must not switch off with a few percent of noise in the
 * stall counter: it kept the estimate at 7% and, off, said 48%. */
Test(ncu_accuracy, a_wait_a_hair_under_the_round_trip_keeps_the_floor)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v41/capture-2026-12-03", core);
    const fb_finding_t *f = s_finding(&cap, "v41_chase_l2", "uncoalesced_access");
    cr_assert_not_null(f);
    double clean = f->speedup, lsb = s_group(&cap, "v41_chase_l2")->v[NM_STALL_LONG_SCOREBOARD];
    cr_assert(clean < 15, "the floored estimate this test is about: %.0f%%", clean);
    s_reanalyze_with(&cap, "v41_chase_l2", NM_STALL_LONG_SCOREBOARD, 0.97 * lsb);
    f = s_finding(&cap, "v41_chase_l2", "uncoalesced_access");
    cr_assert_not_null(f);
    cr_expect_float_eq(f->speedup, clean, 3.0, "est. %.0f%% against %.0f%%", f->speedup, clean);
    cr_expect_str_eq(s_lead(&cap, "v41_chase_l2")->category, "occupancy");
    s_capture_destroy(&cap);
}

/* The L2 atomic units' idle line sits between the corpora's noise floor and
 * real atomic traffic, not at ncu's printing resolution: CUB's onesweep
 * passes (a tile counter a block, 0.01% each launch) averaged over their
 * eight launches fell under 0.01 or not by rounding, and a 2% change in the
 * launches' durations turned a 25% "global atomic contention" on and off
 * (bench/stability.py). */
Test(ncu_accuracy, atomics_at_the_units_noise_floor_are_not_contention)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v32/workloads", core);
    for (double scale = 0.98; scale < 1.03; scale += 0.04) {
        for (size_t i = 0; i < ncu_data_count(cap.data); i++) {
            ncu_launch_t *l = ncu_data_at(cap.data, i);
            if (strncmp(l->kernel, "void radix_sort::DeviceRadixSortOnesweepKernel", 46) == 0 &&
                strcmp(l->grid, "(228, 1, 1)") == 0)
                l->v[NM_DURATION] *= scale;
        }
        s_reanalyze(&cap);
        size_t seen = 0;
        for (size_t g = 0; g < ncu_kernels_count(cap.kernels); g++) {
            const ncu_kernel_t *k = ncu_kernels_at(cap.kernels, g);
            if (strcmp(k->grid, "(228, 1, 1)") != 0 || !strstr(k->name, "Onesweep"))
                continue;
            cr_assert(k->v[NM_L2_ATOMIC_PCT] > 0 && k->v[NM_L2_ATOMIC_PCT] < 0.015,
                      "the reading this test is about: %g", k->v[NM_L2_ATOMIC_PCT]);
            for (size_t i = 0; i < feedback_finding_count(cap.fb); i++) {
                const fb_finding_t *f = feedback_finding(cap.fb, i);
                const fb_kernel_t *fk = feedback_kernel_const(cap.fb, f->kernel);
                if (strcmp(fk->name, k->name) == 0 && strcmp(fk->grid, k->grid) == 0)
                    cr_expect(strncmp(f->title, "Global atomic contention", 24) != 0, "x%.2f: %s", scale, f->title);
            }
            seen++;
        }
        cr_expect_eq(seen, 1);
    }
    s_capture_destroy(&cap);
}

/* An estimate is a function of the counters without steps at the lines that
 * name a cause (bench/stability.py): corpus v7's tiled scale reads 1.9x-2.0x
 * more bytes from L2 than DRAM reads, across the 2x that names re-reads, and
 * its L2 bound swung between est. 5% and 18%; corpus v5's spilling SGEMM has
 * L2 at 80%-81%, across the 80% where a unit has no room for more warps, and
 * an occupancy finding of 10% came and went. A few percent of noise in one
 * counter moves each estimate by a few points at most. */
Test(ncu_accuracy, estimates_have_no_steps_at_the_lines_that_name_a_cause)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v7/capture-2026-12-02", core);
    double read = s_group(&cap, "v7_tile4x64_scale")->v[NM_DRAM_READ], lo = 100, hi = 0;
    for (double scale = 0.97; scale < 1.04; scale += 0.02) {
        s_reanalyze_with(&cap, "v7_tile4x64_scale", NM_DRAM_READ, read * scale);
        const fb_finding_t *f = s_finding(&cap, "v7_tile4x64_scale", "l2_bound");
        cr_assert_not_null(f, "x%.2f", scale);
        lo = fmin(lo, f->speedup);
        hi = fmax(hi, f->speedup);
    }
    cr_expect_lt(hi - lo, 5.0, "the L2 bound's estimate moved from %.0f%% to %.0f%%", lo, hi);
    s_capture_destroy(&cap);

    cap = s_capture("h200-v5/capture-2026-12-01", core);
    double l2 = s_group(&cap, "v5_sgemm_capped")->v[NM_L2_PCT];
    cr_assert(l2 >= 80 && l2 < 82, "the reading this test is about: %g", l2);
    s_reanalyze_with(&cap, "v5_sgemm_capped", NM_L2_PCT, 79.5);
    const fb_finding_t *f = s_finding(&cap, "v5_sgemm_capped", "occupancy");
    cr_expect(f == NULL || f->speedup < 4, "L2 at 79.5%%: occupancy est. %.0f%%", f ? f->speedup : 0);
    s_capture_destroy(&cap);
}

/* L2 reads some 8-15 points above DRAM for a stream's bytes, and the line
 * between naming DRAM and naming L2 falls inside a re-capture's noise for
 * many streams (bench/stability.py: 27 kernels moved across it at 2% noise).
 * Named either way, a stream's lever is the same: fewer bytes, not the
 * locality L2's action asks for where it serves data again. */
Test(ncu_accuracy, a_stream_named_l2_bound_gets_the_streams_lever)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200/capture-2026-12-02", core);
    const fb_finding_t *f = s_lead(&cap, "vec_add");
    cr_assert_str_eq(f->category, "dram_bound", "%s", f->title);
    s_reanalyze_with(&cap, "vec_add", NM_L2_PCT, s_group(&cap, "vec_add")->v[NM_DRAM_PCT] + 16);
    f = s_lead(&cap, "vec_add");
    cr_assert_str_eq(f->category, "l2_bound", "%s", f->title);
    cr_expect(strstr(f->action, "passing through") && strstr(f->action, "move fewer bytes"), "%s", f->action);
    cr_expect(strstr(f->action, "locality") == NULL, "%s", f->action);
    s_capture_destroy(&cap);
}

/* DRAM reading scattered sectors is near its own ceiling (55% of peak on the
 * H200) long before 60% of peak, the line under which every unit being idle
 * makes a kernel latency-bound. Corpus v50's 32-byte random rows run DRAM at
 * 44% (80% of that ceiling) with L2 at 64%: with L2 under 60% the verdict had
 * switched to "DRAM below its roof" (est. 20%) from the scattered rate's
 * bound (est. 51%), the same DRAM either way (bench/sweep.py). The line now
 * reads scattered DRAM against its own ceiling. */
Test(ncu_accuracy, scattered_dram_is_judged_against_its_own_ceiling_at_the_latency_line)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v50/capture-2026-12-03", core);
    const fb_finding_t *f = s_lead(&cap, "v50_rows32_random");
    cr_assert_str_eq(f->category, "dram_bound", "%s", f->title);
    cr_assert(strstr(f->title, "scattered sectors"), "%s", f->title);
    double clean = f->speedup, dram = s_group(&cap, "v50_rows32_random")->v[NM_DRAM_PCT];
    cr_assert(dram > 40 && dram < 50 && s_group(&cap, "v50_rows32_random")->v[NM_L2_PCT] > 60,
              "the readings this test is about: DRAM %g", dram);
    s_reanalyze_with(&cap, "v50_rows32_random", NM_L2_PCT, 58);
    f = s_lead(&cap, "v50_rows32_random");
    cr_expect_str_eq(f->category, "dram_bound", "%s", f->title);
    cr_expect(strstr(f->title, "scattered sectors") != NULL, "%s", f->title);
    cr_expect_float_eq(f->speedup, clean, 1.0, "est. %.0f%% against %.0f%%", f->speedup, clean);
    /* Far under its own ceiling, scattered DRAM is idle too: latency. */
    s_reanalyze_with(&cap, "v50_rows32_random", NM_DRAM_PCT, 25);
    f = s_lead(&cap, "v50_rows32_random");
    cr_expect(strstr(f->title, "scattered sectors") == NULL, "%s", f->title);
    s_capture_destroy(&cap);
}

/* Reading neighbours together keeps a scattered kernel's load requests, and
 * each still takes an idle round trip from DRAM: where the warps wait on
 * their loads, the scattered bound's gain is capped by that floor, as a
 * coalescing fix's is. Corpus v50's 32-byte rows: a request waits about 1140
 * cycles against a 711-cycle trip; the stream's headroom said 2.05x, the rows
 * in order ran 1.29x (four a thread 1.41x). Where DRAM is at its scattered
 * ceiling, a request waits less than the trip, or the warps do not wait on
 * their loads, the floor says nothing and the headroom stands. */
Test(ncu_accuracy, reading_scattered_rows_in_order_keeps_a_dram_round_trip_a_request)
{
    static const char *const core[] = {"core_mwa_raw.csv", NULL};
    capture_t cap = s_capture("h200-v50/capture-2026-12-03", core);
    const fb_finding_t *f = s_lead(&cap, "v50_rows32_random");
    cr_assert(strstr(f->title, "scattered sectors"), "%s", f->title);
    cr_expect(f->speedup > 30 && f->speedup < 40, "est. %.1f%%: the round trip's floor, not the headroom's 51%%",
              f->speedup);
    cr_expect(s_evidence(f, "idle round trip") != NULL, "the evidence names the round trip");
    /* At DRAM's scattered ceiling the waits are the queue's, which the
     * stream removes (corpus v67's rows two and four a thread: DRAM 56%-58%,
     * in order 1.59x and 1.92x): no floor. */
    double dram = s_group(&cap, "v50_rows32_random")->v[NM_DRAM_PCT];
    s_reanalyze_with(&cap, "v50_rows32_random", NM_DRAM_PCT, 57);
    f = s_lead(&cap, "v50_rows32_random");
    cr_expect(strstr(f->title, "scattered sectors") != NULL, "%s", f->title);
    cr_expect(f->speedup > 30 && !s_evidence(f, "idle round trip"), "est. %.1f%%: the stream's headroom",
              f->speedup);
    /* The floor fades as DRAM nears that ceiling: no step at it between two
     * profiles (v67's two rows a thread sit at 56% of a 55% ceiling). */
    s_reanalyze_with(&cap, "v50_rows32_random", NM_DRAM_PCT, 54.8);
    double below = s_lead(&cap, "v50_rows32_random")->speedup;
    s_reanalyze_with(&cap, "v50_rows32_random", NM_DRAM_PCT, 55.2);
    double above = s_lead(&cap, "v50_rows32_random")->speedup;
    cr_expect(fabs(above - below) < 2, "est. %.1f%% at 54.8%% and %.1f%% at 55.2%%", below, above);
    s_reanalyze_with(&cap, "v50_rows32_random", NM_DRAM_PCT, dram);
    /* A request waiting less than the round trip itself shares its wait with
     * others in flight (several rows a thread), which order can make a
     * stream: no floor. */
    double lsb = s_group(&cap, "v50_rows32_random")->v[NM_STALL_LONG_SCOREBOARD];
    s_reanalyze_with(&cap, "v50_rows32_random", NM_STALL_LONG_SCOREBOARD, 0.55 * lsb);
    f = s_lead(&cap, "v50_rows32_random");
    cr_expect(strstr(f->title, "scattered sectors") != NULL, "%s", f->title);
    cr_expect(f->speedup > 45, "est. %.1f%%: the stream's headroom", f->speedup);
    /* The warps wait on other things for most of their stalls: no floor. */
    s_reanalyze_with(&cap, "v50_rows32_random", NM_STALL_LONG_SCOREBOARD, 0.5);
    f = s_lead(&cap, "v50_rows32_random");
    cr_expect(strstr(f->title, "scattered sectors") != NULL, "%s", f->title);
    cr_expect(f->speedup > 45, "est. %.1f%%: the stream's headroom", f->speedup);
    s_capture_destroy(&cap);
}

/* NCU's HighPipeUtilization text names the busiest of the pipes it compares
 * (2025: "based on elapsed cycles", 2023: "active cycles", 2021: no basis,
 * every pipe), and above 60% the busiest by executed instructions; anything
 * else in it (a pipe outside the map, a composite without its dominant
 * sub-pipeline, a missing or garbled percentage) names nothing. */
Test(ncu_accuracy, the_pipes_ncus_rule_names_are_read_from_its_text_only)
{
    static const struct {
        const char *name, *text, *key[NCU_RULE_PIPES];
        double pct[NCU_RULE_PIPES];
    } cases[] = {
        {"HighPipeUtilization", "FMA is the highest-utilized pipeline (75.2%) based on elapsed cycles", {"fma"},
         {75.2}},
        {"HighPipeUtilization", "ALU is the highest-utilized pipeline (70.9%) based on active cycles", {"alu"}, {70.9}},
        {"HighPipeUtilization", "XU is the highest-utilized pipeline (81.0%). It executes", {"xu"}, {81.0}},
        {"HighPipeUtilization", "Tensor (FP) is the highest-utilized pipeline (90.0%).", {"tensor"}, {90.0}},
        {"HighPipeUtilization",
         "Shared is the highest-utilized pipeline (92.6%) based on elapsed cycles in the workload, taking into "
         "account the rates of its different instructions. It is the logical sum of several other pipelines. "
         "It's dominated by its Tensor (FP) sub-pipeline. The pipeline is over-utilized. Based on the number of "
         "executed instructions, the highest utilized pipeline (30.9%) is Tensor (FP). It executes 16-bit",
         {"tensor"}, {92.6}},
        {"HighPipeUtilization",
         "Shared is the highest-utilized pipeline (85.0%). It's dominated by its FP64 sub-pipeline. Based on "
         "the number of executed instructions, the highest utilized pipeline (70.0%) is XU. It executes",
         {"fp64", "xu"}, {85.0, 70.0}},
        {"HighPipeUtilization", "Shared is the highest-utilized pipeline (92.6%) based on elapsed cycles", {NULL}, {0}},
        {"HighPipeUtilization", "Tensor is the highest-utilized pipeline (88.0%). It is the logical aggregation",
         {"tensor"}, {88.0}},
        {"HighPipeUtilization", "TMA is the highest-utilized pipeline (65.0%) based on elapsed cycles", {NULL}, {0}},
        {"HighPipeUtilization", "FMA is the highest-utilized pipeline (%) based on elapsed cycles", {NULL}, {0}},
        {"HighPipeUtilization", "FMA is the highest-utilized pipeline (75.2", {NULL}, {0}},
        {"HighPipeUtilization", " is the highest-utilized pipeline (75.2%)", {NULL}, {0}},
        {"HighPipeUtilization", "the highest utilized pipeline (75.2%) is", {NULL}, {0}},
        {"HighPipeUtilization", "All compute pipelines are under-utilized.", {NULL}, {0}},
        {"HighPipeUtilization", "FMA is the highest-utilized pipeline (250%) based on elapsed cycles", {"fma"}, {100}},
        {"SOLBottleneck", "FMA is the highest-utilized pipeline (75.2%) based on elapsed cycles", {NULL}, {0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ncu_rule_t rule = {.name = cases[i].name, .section = "ComputeWorkloadAnalysis", .text = cases[i].text,
                           .speedup = NAN, .type = "INF"};
        const ncu_rule_t *rules[] = {&rule};
        ncu_rule_pipe_t out[NCU_RULE_PIPES];
        size_t n = ncu_rule_pipes(rules, 1, out), want = 0;
        while (want < NCU_RULE_PIPES && cases[i].key[want])
            want++;
        cr_expect_eq(n, want, "case %zu: %zu pipes from %s", i, n, cases[i].text);
        for (size_t j = 0; j < n && j < want; j++) {
            cr_expect_str_eq(out[j].key, cases[i].key[j], "case %zu", i);
            cr_expect_float_eq(out[j].pct, cases[i].pct[j], 1e-9, "case %zu", i);
        }
    }
    ncu_rule_pipe_t out[NCU_RULE_PIPES];
    cr_expect_eq(ncu_rule_pipes(NULL, 0, out), 0);
}

/* On KernelFoundry's details page, which has no pipe counters, NCU's rule
 * names the pipe where it is the one that saturates (within the SOL gap of
 * the SM summary), and says no more where the SM is far busier than the
 * pipes the rule compares (an XU-bound kernel: FMA 36%, SM 96%). */
Test(ncu_accuracy, the_details_page_names_the_pipe_ncus_rule_reads)
{
    static const char *const detailed[] = {"detailed.csv", NULL};
    capture_t cap = s_capture("h200-v2/agents-2026-12-04", detailed);
    const fb_finding_t *f = s_lead(&cap, "hmma_heavy");
    cr_expect_str_eq(f->category, "compute_bound");
    cr_expect(strstr(f->title, "on the tensor pipe") != NULL, "%s", f->title);
    f = s_lead(&cap, "rsqrt_heavy");
    cr_expect_str_eq(f->category, "compute_bound");
    cr_expect(strstr(f->title, "was not measured") != NULL, "%s", f->title);
    s_capture_destroy(&cap);
    cap = s_capture("h200/agents-2026-12-04", detailed);
    f = s_lead(&cap, "fma_heavy");
    cr_expect(strstr(f->title, "on the FP32 FMA pipe") != NULL, "%s", f->title);
    s_capture_destroy(&cap);
}
