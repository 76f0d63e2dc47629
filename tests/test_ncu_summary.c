/* ncu_summary: ncu's SM summary (sm__throughput), which the default plan no
 * longer collects, rebuilt from the counters it is the maximum of. Checked
 * against ncu's own value on every kernel of every committed default-plan
 * capture (collected there before the plan dropped it), and held to say it
 * was derived, and to say nothing where its parts were not measured. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "feedback.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "ncu_kernel.h"
#include "ncu_summary.h"
#include "ncu_units.h"

#define NCU PF_FIXTURE_DIR "/ncu/"

/* Every folder holding a capture of the default plan (core_mwa_raw.csv). */
static const char *const s_folders[] = {
    "h200/capture-2026-12-01",     "h200-v2/capture-2026-12-01",  "h200-v3/kernels",
    "h200-v3/workloads",           "h200-v4/capture-2026-12-01",  "h200-v5/capture-2026-12-01",
    "h200-v6/capture-2026-12-01",  "h200-v7/capture-2026-12-02",  "h200-v8/capture-2026-12-02",
    "h200-v9/capture-2026-12-02",  "h200-v10/capture-2026-12-02", "h200-v11/capture-2026-12-02",
    "h200-v12/workloads",          "h200-v13/capture-2026-12-02", "h200-v14/capture-2026-12-02",
    "h200-v15/capture-2026-12-02", "h200-v16/capture-2026-12-02", "h200-v17/capture-2026-12-02",
};

static ncu_data_t *s_load(const char *folder, const char *file)
{
    char path[512];
    snprintf(path, sizeof path, NCU "%s/%s", folder, file);
    ncu_data_t *data = ncu_data_new();
    cr_assert_not_null(data);
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(ncu_csv_parse_file(data, path, &err), PF_OK, "%s: %s", path, err.msg);
    return data;
}

/* Forgets a metric on every launch, as a capture that did not collect it. */
static void s_drop(ncu_data_t *data, ncu_metric_t m)
{
    for (size_t i = 0; i < ncu_data_count(data); i++)
        ncu_data_at(data, i)->v[m] = NAN;
}

static feedback_t *s_analyze(ncu_data_t *data)
{
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    feedback_t *fb = ncu_analyze(data, &options, NULL);
    cr_assert_not_null(fb);
    return fb;
}

Test(ncu_summary, the_rebuilt_sm_summary_is_within_2_5_points_of_ncus_on_every_committed_kernel)
{
    size_t kernels = 0;
    double worst = 0;
    for (size_t f = 0; f < sizeof s_folders / sizeof s_folders[0]; f++) {
        ncu_data_t *with = s_load(s_folders[f], "core_mwa_raw.csv");
        ncu_data_t *without = s_load(s_folders[f], "core_mwa_raw.csv");
        s_drop(without, NM_SM_PCT);
        ncu_kernels_t *a = ncu_kernels_group(with), *b = ncu_kernels_group(without);
        cr_assert(a && b);
        cr_assert_eq(ncu_kernels_count(a), ncu_kernels_count(b));
        for (size_t i = 0; i < ncu_kernels_count(a); i++) {
            const ncu_kernel_t *x = ncu_kernels_at(a, i), *y = ncu_kernels_at(b, i);
            cr_assert_str_eq(x->name, y->name);
            cr_expect(!x->sm_pct_derived, "%s: %s: collected, yet marked derived", s_folders[f], x->name);
            cr_assert(!isnan(x->v[NM_SM_PCT]), "%s: %s: no sm__throughput", s_folders[f], x->name);
            cr_expect(y->sm_pct_derived, "%s: %s: not derived", s_folders[f], y->name);
            double error = fabs(y->v[NM_SM_PCT] - x->v[NM_SM_PCT]);
            cr_expect_leq(error, 2.5, "%s: %s: derived %.2f%%, ncu %.2f%%", s_folders[f], x->name,
                          y->v[NM_SM_PCT], x->v[NM_SM_PCT]);
            worst = fmax(worst, error);
            kernels++;
        }
        ncu_kernels_destroy(&a);
        ncu_kernels_destroy(&b);
        ncu_data_destroy(&with);
        ncu_data_destroy(&without);
    }
    cr_expect_geq(kernels, 160, "every committed kernel: %zu", kernels);
    cr_log_info("sm__throughput rebuilt on %zu kernels, worst error %.2f points", kernels, worst);
}

Test(ncu_summary, nothing_is_derived_without_the_counters_the_summary_is_made_of)
{
    /* SpeedOfLight alone: no pipes, no issue slots. */
    ncu_data_t *sol = s_load("h200/capture-2026-12-01", "sol_raw.csv");
    s_drop(sol, NM_SM_PCT);
    ncu_kernels_t *k = ncu_kernels_group(sol);
    cr_assert_not_null(k);
    for (size_t i = 0; i < ncu_kernels_count(k); i++) {
        cr_expect(isnan(ncu_kernels_at(k, i)->v[NM_SM_PCT]));
        cr_expect(!ncu_kernels_at(k, i)->sm_pct_derived);
    }
    ncu_kernels_destroy(&k);
    ncu_data_destroy(&sol);

    /* The default plan's counters without the memory pipes' summary (its
     * section): the maximum would leave out half of what sets it. */
    ncu_data_t *core = s_load("h200/capture-2026-12-01", "core_mwa_raw.csv");
    s_drop(core, NM_SM_PCT);
    s_drop(core, NM_MEM_PIPES);
    k = ncu_kernels_group(core);
    cr_assert_not_null(k);
    for (size_t i = 0; i < ncu_kernels_count(k); i++)
        cr_expect(isnan(ncu_kernels_at(k, i)->v[NM_SM_PCT]) && !ncu_kernels_at(k, i)->sm_pct_derived);
    ncu_kernels_destroy(&k);
    ncu_data_destroy(&core);
}

Test(ncu_summary, a_derived_summary_is_named_as_derived_never_as_ncus)
{
    ncu_data_t *data = s_load("h200/capture-2026-12-01", "core_mwa_raw.csv");
    s_drop(data, NM_SM_PCT);
    feedback_t *fb = s_analyze(data);
    const char *collected = ncu_metric_info(NM_SM_PCT)->name;
    size_t derived_evidence = 0, derived_metrics = 0;
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        for (size_t e = 0; e < f->evidence_count; e++) {
            cr_expect_str_neq(f->evidence[e].metric, collected, "%s: %s", f->title, f->evidence[e].text);
            if (strcmp(f->evidence[e].metric, NCU_SM_PCT_DERIVED) == 0) {
                derived_evidence++;
                cr_expect(strstr(f->evidence[e].text, "derived"), "%s", f->evidence[e].text);
            }
        }
    }
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        for (size_t m = 0; m < k->metric_count; m++) {
            cr_expect_str_neq(k->metrics[m].name, collected, "%s", k->name);
            derived_metrics += strcmp(k->metrics[m].name, NCU_SM_PCT_DERIVED) == 0;
        }
    }
    cr_expect_gt(derived_evidence, 0, "no evidence cites the derived summary");
    cr_expect_eq(derived_metrics, feedback_kernel_count(fb), "every kernel's metrics carry it");
    feedback_destroy(&fb);
    ncu_data_destroy(&data);
}

/* With neither summary measured, a title states neither: not as 0%, not as
 * 100% (fmin(NAN, 100) is 100). */
Test(ncu_summary, titles_state_no_summary_that_was_not_measured)
{
    static const char *const folders[] = {"h200/capture-2026-12-01", "h200-v2/capture-2026-12-01",
                                          "h200-v7/capture-2026-12-02"};
    size_t titles = 0;
    for (size_t d = 0; d < sizeof folders / sizeof folders[0]; d++) {
        ncu_data_t *data = s_load(folders[d], "core_mwa_raw.csv");
        s_drop(data, NM_SM_PCT);
        s_drop(data, NM_MEM_PIPES);
        s_drop(data, NM_MEM_PCT);
        feedback_t *fb = s_analyze(data);
        for (size_t i = 0; i < feedback_finding_count(fb); i++) {
            const char *title = feedback_finding(fb, i)->title;
            cr_expect_null(strstr(title, "compute is at"), "%s", title);
            cr_expect_null(strstr(title, "of peak, memory"), "%s", title);
            for (const char *p = strstr(title, "SM "); p; p = strstr(p + 1, "SM "))
                cr_expect(!(p[3] >= '0' && p[3] <= '9'), "%s", title);
            titles++;
        }
        feedback_destroy(&fb);
        ncu_data_destroy(&data);
    }
    cr_expect_gt(titles, 20);
}

/* The default plan's own captures (kernels.cu, corpora v2, v18 and v20, corpus
 * v19's workloads, 2026-12-02): no sm__throughput column, and every kernel's summary
 * rebuilt. */
Test(ncu_summary, the_default_plans_own_captures_have_every_summary_rebuilt)
{
    static const char *const folders[] = {"h200/capture-2026-12-02", "h200-v2/capture-2026-12-02",
                                          "h200-v18/capture-2026-12-02", "h200-v19/workloads",
                                          "h200-v20/capture-2026-12-02"};
    for (size_t d = 0; d < sizeof folders / sizeof folders[0]; d++) {
        ncu_data_t *data = s_load(folders[d], "core_mwa_raw.csv");
        ncu_kernels_t *k = ncu_kernels_group(data);
        cr_assert_not_null(k);
        cr_expect_geq(ncu_kernels_count(k), 4);
        for (size_t i = 0; i < ncu_kernels_count(k); i++) {
            const ncu_kernel_t *x = ncu_kernels_at(k, i);
            cr_expect(x->sm_pct_derived, "%s: %s", folders[d], x->name);
            cr_expect(x->v[NM_SM_PCT] >= 0 && x->v[NM_SM_PCT] <= 100, "%s: %s: %g", folders[d], x->name,
                      x->v[NM_SM_PCT]);
        }
        ncu_kernels_destroy(&k);
        ncu_data_destroy(&data);
    }
}

/* The issue slots come in three forms besides the percentage: a fraction a
 * scheduler cycle, instructions issued a cycle per SM (the only one in
 * --set detailed's details page), and executed instructions over the SMs'
 * active cycles (KernelAgent's metric list). On every kernel of --set full
 * captures, which have them all, each form read alone must give the
 * percentage: the second and third to within a point, the last never above
 * it by more (every executed instruction was issued) and within 5 points.
 * Per SM, the last two count four schedulers where the percentage counts
 * those that had a warp: with one warp a SM (corpus v2's stream_one_warp)
 * they read 0.5% where it reads 1.9%; they are compared from 10% up, where
 * issue slots start to matter as a unit. */
Test(ncu_summary, the_issue_slots_read_from_any_form_match_the_percentage)
{
    static const char *const folders[] = {"h200-v55/capture-2026-12-04", "h200-v57/capture-2026-12-04",
                                          "h200-v48/capture-2026-12-03", "h200-v2/capture-2026-12-01"};
    size_t kernels = 0;
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
        ncu_data_t *data = s_load(folders[f], "full_raw.csv");
        ncu_kernels_t *k = ncu_kernels_group(data);
        cr_assert_not_null(k);
        for (size_t i = 0; i < ncu_kernels_count(k); i++) {
            double v[NM__COUNT];
            memcpy(v, ncu_kernels_at(k, i)->v, sizeof v);
            const char *name = ncu_kernels_at(k, i)->name;
            ncu_metric_t from;
            double pct = ncu_units_issue_pct(v, &from);
            cr_assert(!isnan(pct) && from == NM_ISSUE_PCT, "%s: %s", folders[f], name);
            v[NM_ISSUE_PCT] = NAN;
            double frac = ncu_units_issue_pct(v, &from);
            cr_expect(from == NM_ISSUE_ACTIVE && fabs(frac - pct) <= 1, "%s: %s: %.1f vs %.1f", folders[f], name,
                      frac, pct);
            v[NM_ISSUE_ACTIVE] = NAN;
            double ipc = ncu_units_issue_pct(v, &from);
            cr_expect(from == NM_ISSUED_IPC && (fabs(ipc - pct) <= 1 || (pct < 10 && ipc <= pct)),
                      "%s: %s: %.1f vs %.1f", folders[f], name, ipc, pct);
            v[NM_ISSUED_IPC] = NAN;
            double executed = ncu_units_issue_pct(v, &from);
            cr_expect(from == NM_INST_EXECUTED && executed <= pct + 1 && (executed >= pct - 5 || pct < 10),
                      "%s: %s: %.1f vs %.1f", folders[f], name, executed, pct);
            /* KernelAgent's list has the count as the SMs sum it (sm__, not
             * smsp__): the same number, the same reading. */
            cr_expect(isnan(v[NM_INST_EXECUTED_SM]), "%s: --set full has no sm__inst_executed.sum", folders[f]);
            v[NM_INST_EXECUTED_SM] = v[NM_INST_EXECUTED];
            v[NM_INST_EXECUTED] = NAN;
            double sm_sum = ncu_units_issue_pct(v, &from);
            cr_expect(from == NM_INST_EXECUTED_SM && sm_sum == executed, "%s: %s: %.1f vs %.1f", folders[f], name,
                      sm_sum, executed);
            v[NM_INST_EXECUTED_SM] = NAN;
            cr_expect(isnan(ncu_units_issue_pct(v, &from)), "%s: %s: nothing left to read", folders[f], name);
            kernels++;
        }
        ncu_kernels_destroy(&k);
        ncu_data_destroy(&data);
    }
    cr_expect_geq(kernels, 30);
}
