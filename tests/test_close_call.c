/* Close calls: whether another profile of the same kernel could lead with
 * another finding (analyzer/core/close_call.h, analyzer/ncu/ncu_noise.h, docs/ncu.md "Close calls"):
 * the noise model, the verdict judged again on real captures, and what the
 * renderers, the wire and a comparison with a baseline make of it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyzer.h"
#include "comparison.h"
#include "feedback.h"
#include "feedback_wire.h"
#include "ncu_noise.h"
#include "noise.h"
#include "render.h"
#include "test_util.h"
#include "wire.h"
#include "wire_check.h"

/* A kernel with every kind of metric the model treats apart. */
static ncu_kernel_t s_kernel(void)
{
    ncu_kernel_t k;
    memset(&k, 0, sizeof k);
    k.name = "copy_kernel(const float *, float *)";
    for (int m = 0; m < NM__COUNT; m++)
        k.v[m] = NAN;
    k.v[NM_DURATION] = 100000;
    k.v[NM_ELAPSED_CYCLES] = 180000;
    k.v[NM_SM_ACTIVE_CYCLES] = 170000;
    k.v[NM_DRAM_PCT] = 80;
    k.v[NM_L2_PCT] = 90;
    k.v[NM_STALL_LONG_SCOREBOARD] = 20;
    k.v[NM_GRID_SIZE] = 4096;
    k.v[NM_REGISTERS] = 32;
    k.v[NM_LD_BYTES_PER_SECTOR] = 16;
    k.v[NM_THREADS_PER_WARP] = 31.5;
    k.v[NM_SPILL_INST] = 12;
    k.v[NM_OCC_THEORETICAL] = 100;
    k.v[NM_FFMA_PEAK] = 2;
    return k;
}

Test(close_call, launch_sass_and_peak_metrics_hold_while_counters_move)
{
    ncu_kernel_t k = s_kernel(), noisy;
    ncu_noise_apply(&k, 0, 0.05, &noisy);
    static const ncu_metric_t fixed[] = {NM_GRID_SIZE, NM_REGISTERS, NM_LD_BYTES_PER_SECTOR, NM_THREADS_PER_WARP,
                                         NM_SPILL_INST, NM_OCC_THEORETICAL, NM_FFMA_PEAK};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        cr_assert(ncu_noise_fixed(fixed[i]), "%s", ncu_metric_info(fixed[i])->name);
        cr_assert_eq(noisy.v[fixed[i]], k.v[fixed[i]], "%s", ncu_metric_info(fixed[i])->name);
    }
    static const ncu_metric_t counted[] = {NM_DURATION, NM_DRAM_PCT, NM_L2_PCT, NM_STALL_LONG_SCOREBOARD};
    for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++) {
        cr_assert_not(ncu_noise_fixed(counted[i]), "%s", ncu_metric_info(counted[i])->name);
        cr_assert_neq(noisy.v[counted[i]], k.v[counted[i]], "%s", ncu_metric_info(counted[i])->name);
    }
    cr_assert(isnan(noisy.v[NM_L1_PCT]), "a metric not measured stays not measured");
    k.v[NM_DRAM_READ] = 1.79e308; /* finite, as number_parse lets it through */
    for (unsigned trial = 0; trial < 16; trial++) {
        ncu_noise_apply(&k, trial, 0.05, &noisy);
        cr_assert(isfinite(noisy.v[NM_DRAM_READ]), "a huge count scaled stays finite");
    }
    cr_assert_str_eq(noisy.name, k.name);
}

Test(close_call, the_kernels_time_moves_as_one_reading)
{
    /* Idle SMs are active over elapsed cycles: noise drawn apart would
     * invent idle time. */
    ncu_kernel_t k = s_kernel(), noisy;
    for (unsigned trial = 0; trial < 16; trial++) {
        ncu_noise_apply(&k, trial, 0.05, &noisy);
        double f = noisy.v[NM_DURATION] / k.v[NM_DURATION];
        cr_assert_float_eq(noisy.v[NM_ELAPSED_CYCLES] / k.v[NM_ELAPSED_CYCLES], f, 1e-12);
        cr_assert_float_eq(noisy.v[NM_SM_ACTIVE_CYCLES] / k.v[NM_SM_ACTIVE_CYCLES], f, 1e-12);
    }
}

Test(close_call, readings_are_reproducible_and_spread_by_sigma)
{
    ncu_kernel_t k = s_kernel(), a, b;
    ncu_noise_apply(&k, 3, 0.01, &a);
    ncu_noise_apply(&k, 3, 0.01, &b);
    cr_assert_eq(memcmp(a.v, b.v, sizeof a.v), 0, "the same trial reads the same");
    ncu_noise_apply(&k, 4, 0.01, &b);
    cr_assert_neq(a.v[NM_DRAM_PCT], b.v[NM_DRAM_PCT], "another trial reads otherwise");
    ncu_noise_apply(&k, 3, 0, &a);
    cr_assert_eq(memcmp(a.v, k.v, sizeof a.v), 0, "no noise, no change");
    /* The log of the factors is normal with the sigma asked for, centred on
     * 0, and two counters' factors are independent. */
    double sum = 0, sum2 = 0, cross = 0;
    const unsigned n = 4000;
    for (unsigned trial = 0; trial < n; trial++) {
        ncu_noise_apply(&k, trial, 0.02, &a);
        double g = log(a.v[NM_DRAM_PCT] / k.v[NM_DRAM_PCT]), h = log(a.v[NM_L2_PCT] / k.v[NM_L2_PCT]);
        sum += g;
        sum2 += g * g;
        cross += g * h;
    }
    double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
    cr_assert_lt(fabs(mean), 0.002, "mean %g", mean);
    cr_assert_float_eq(sd, 0.02, 0.002, "sd %g", sd);
    cr_assert_lt(fabs(cross / n) / (0.02 * 0.02), 0.1, "correlation %g", cross / n / (0.02 * 0.02));
}

static feedback_t *s_analyze(const char *path)
{
    analyzer_file_t file = {.path = path, .name = path};
    analyzer_input_t input = {.files = &file, .count = 1, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    feedback_t *fb = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    return fb;
}

static const fb_kernel_t *s_find(const feedback_t *fb, const char *prefix)
{
    for (size_t i = 0; i < feedback_kernel_count(fb); i++)
        if (strstr(feedback_kernel_const(fb, i)->name, prefix))
            return feedback_kernel_const(fb, i);
    cr_assert_fail("no kernel %s", prefix);
    return NULL;
}

static bool s_names(const fb_kernel_t *k, const char *category)
{
    for (size_t i = 0; i < k->close_count; i++)
        if (strcmp(k->close[i].category, category) == 0)
            return true;
    return false;
}

#define V12 PF_FIXTURE_DIR "/ncu/h200-v12/workloads/core_mwa_raw.csv"

Test(close_call, a_kernel_on_the_dram_l2_line_is_a_close_call)
{
    /* PyTorch's log-softmax on the H200: DRAM 72% of peak with L2 at 86%,
     * one point inside the 15 by which L2 must lead to be named instead. */
    feedback_t *fb = s_analyze(V12);
    const fb_kernel_t *k = s_find(fb, "cunn_SoftMaxForward<4");
    cr_assert_str_eq(k->bottleneck, "dram_bound");
    cr_assert_eq(k->close_of, NOISE_READINGS);
    cr_assert_float_eq(k->close_noise_pct, 100 * NOISE_SIGMA, 1e-9);
    cr_assert(s_names(k, "l2_bound"), "the close call names L2");
    cr_assert_eq(test_close_readings(k), k->close_of, "every reading is counted once");
    char *text = render_text(fb, 0);
    cr_assert(strstr(text, "   Close call: with the counters moved by run-to-run noise (1% one sigma), "),
              "%s", text);
    cr_assert(strstr(text, "readings lead with l2_bound rather than dram_bound"), "%s", text);
    cr_assert(strstr(text, ". What l2_bound would have you do: "), "the other side's lever: %s", text);
    char *json = render_json(fb, false);
    cr_assert(strstr(json, "\"close_call\": {\"readings\": 8, \"noise_pct\": 1, \"same_first\": "), "%s", json);
    cr_assert(strstr(json, "{\"category\": \"l2_bound\", \"unit\": null, \"readings\": "), "%s", json);
    cr_assert(strstr(json, "\"listed\": false, \"action\": \""), "%s", json);
    char *md = render_markdown(fb);
    cr_assert(strstr(md, "; close call: with the counters moved"));
    free(md);
    free(json);
    free(text);
    feedback_destroy(&fb);
}

/* The kernel's close call naming `category` on `unit` ("": none), or NULL. */
static const fb_close_t *s_other(const fb_kernel_t *k, const char *category, const char *unit)
{
    for (size_t i = 0; i < k->close_count; i++)
        if (strcmp(k->close[i].category, category) == 0 && strcmp(k->close[i].unit, unit) == 0)
            return &k->close[i];
    return NULL;
}

Test(close_call, a_compute_bound_on_another_pipe_is_a_close_call)
{
    /* cuBLAS's SIMT SGEMM on the H200: the issue slots at 87% lead the FMA
     * pipe (77%) by the 10 points at which profeed names the instruction
     * count rather than the pipe. The two bounds share a category, but not
     * an action: fewer instructions of every kind, or less FP32 math. */
    feedback_t *fb = s_analyze(V12);
    const fb_kernel_t *k = s_find(fb, "cutlass_80_simt_sgemm_256x128");
    cr_assert_str_eq(k->bottleneck, "compute_bound");
    cr_assert_str_eq(k->bottleneck_unit, "issue");
    const fb_close_t *fma = s_other(k, "compute_bound", "fma");
    cr_assert_not_null(fma, "the close call names the FMA pipe");
    cr_assert_null(s_other(k, "compute_bound", "issue"), "not the kernel's own verdict");
    cr_assert_not(fma->listed, "the kernel's compute bound is on the issue slots, not that pipe");
    cr_assert(fma->action && strstr(fma->action, "FP32"), "that pipe's own action: %s", fma->action);
    cr_assert_eq(test_close_readings(k), k->close_of, "every reading is counted once");
    char *text = render_text(fb, 0);
    cr_assert(strstr(text, "readings lead with compute_bound:fma rather than compute_bound:issue"), "%s", text);
    cr_assert(strstr(text, ". What compute_bound:fma would have you do: Cut FP32 work"), "%s", text);
    char *json = render_json(fb, false);
    cr_assert(strstr(json, "\"bottleneck\": \"compute_bound\",\n      \"bottleneck_unit\": \"issue\""), "%s", json);
    cr_assert(strstr(json, "{\"category\": \"compute_bound\", \"unit\": \"fma\", \"readings\": "), "%s", json);
    free(json);
    free(text);
    feedback_destroy(&fb);
}

Test(close_call, kernels_far_from_every_line_keep_their_verdict_on_every_reading)
{
    /* kernels.cu on the H200: nine kernels whose verdicts held across four
     * captures on three days. */
    feedback_t *fb = s_analyze(PF_FIXTURE_DIR "/ncu/h200/capture-2026-12-01/core_mwa_raw.csv");
    cr_assert_eq(feedback_kernel_count(fb), 9);
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        cr_assert_eq(k->close_of, NOISE_READINGS, "%s", k->name);
        cr_assert_eq(k->close_same, NOISE_READINGS, "%s: %s", k->name, k->close_count ? k->close[0].category : "");
    }
    char *text = render_text(fb, 0);
    cr_assert_null(strstr(text, "Close call"), "%s", text);
    free(text);
    feedback_destroy(&fb);
}

Test(close_call, the_most_named_come_first_and_the_least_named_drop_out)
{
    feedback_t *fb = feedback_new("ncu");
    size_t i = feedback_add_kernel(fb, "k", "(1, 1, 1)", "(1, 1, 1)", 1, 100, 1);
    fb_kernel_t *k = feedback_kernel(fb, i);
    feedback_kernel_close(k, 16, 6, 1);
    feedback_kernel_add_close(k, "l2_bound", NULL, 2, false, "Improve locality.");
    feedback_kernel_add_close(k, "latency_bound", NULL, 5, false, "Keep more loads in flight.");
    feedback_kernel_add_close(k, "occupancy", NULL, 2, true, "Lower register use.");
    feedback_kernel_add_close(k, "none", NULL, 1, false, NULL); /* drops out: the least named */
    feedback_kernel_add_close(k, "tail_effect", NULL, 0, false, "Size the grid.");
    cr_assert_eq(k->close_count, FB_CLOSE_MAX);
    cr_assert_str_eq(k->close[0].category, "latency_bound");
    cr_assert_str_eq(k->close[1].category, "l2_bound", "equal counts keep their order");
    cr_assert_str_eq(k->close[2].category, "occupancy");
    cr_assert_null(k->close[2].action, "a finding the kernel lists keeps its own action");
    feedback_kernel_add_close(k, "small_grid", NULL, 3, false, "Launch more blocks."); /* occupancy drops out */
    cr_assert_str_eq(k->close[1].category, "small_grid");
    cr_assert_str_eq(k->close[2].category, "l2_bound");
    snprintf(k->bottleneck, sizeof k->bottleneck, "dram_bound");
    char text[RENDER_CLOSE_CALL_MAX];
    render_close_call(k, text, sizeof text);
    cr_assert(strstr(text, "5 of 16 readings lead with latency_bound, 3 of 16 readings lead with small_grid, 2 of "
                           "16 readings lead with l2_bound rather than dram_bound"), "%s", text);
    cr_assert(strstr(text, ". What latency_bound would have you do: Keep more loads in flight."), "%s", text);
    render_close_call(k, text, 120);
    cr_assert_leq(strlen(text), 119);
    cr_assert(strstr(text, "[...]"), "a cut is said: %s", text);
    feedback_kernel_close(k, 8, 6, 1);
    feedback_kernel_add_close(k, "none", NULL, 1, false, NULL);
    feedback_kernel_add_close(k, "occupancy", NULL, 1, true, NULL);
    render_close_call(k, text, sizeof text);
    cr_assert(strstr(text, "1 of 8 readings leads with no finding, 1 of 8 readings leads with occupancy (among the "
                           "findings below) rather than dram_bound: another profile may name it first"), "%s", text);
    cr_assert_null(strstr(text, "What"), "no action to add: %s", text);
    feedback_kernel_close(k, 8, 8, 1);
    render_close_call(k, text, sizeof text);
    cr_assert_str_empty(text, "a kernel every reading agrees on is no close call");
    feedback_destroy(&fb);
}

/* The feedback of V12 packed and unpacked, as the farm keeps it. */
static Profeed__Feedback *s_wire(const feedback_t *fb)
{
    Profeed__Feedback *msg = feedback_wire_new(fb, "job-1", "text", "{}");
    cr_assert_not_null(msg);
    pf_error_t err;
    size_t len = 0;
    uint8_t *bytes = wire_feedback_pack(msg, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__Feedback *back = wire_feedback_unpack(bytes, len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(back, "%s", err.msg);
    free(bytes);
    wire_feedback_destroy(&msg);
    return back;
}

Test(close_call, the_wire_carries_it_to_a_later_comparison)
{
    feedback_t *fb = s_analyze(V12);
    Profeed__Feedback *back = s_wire(fb);
    feedback_t *read = feedback_wire_read(back);
    cr_assert_not_null(read);
    static const char *const kernels[] = {"cunn_SoftMaxForward<4", "cutlass_80_simt_sgemm_256x128"};
    for (size_t n = 0; n < sizeof kernels / sizeof kernels[0]; n++) {
        const fb_kernel_t *a = s_find(fb, kernels[n]), *b = s_find(read, kernels[n]);
        cr_assert_str_eq(b->bottleneck, a->bottleneck);
        cr_assert_str_eq(b->bottleneck_unit, a->bottleneck_unit);
        cr_assert_eq(b->close_of, a->close_of);
        cr_assert_eq(b->close_same, a->close_same);
        cr_assert_float_eq(b->close_noise_pct, a->close_noise_pct, 1e-12);
        cr_assert_eq(b->close_count, a->close_count);
        for (size_t i = 0; i < a->close_count; i++) {
            cr_assert_str_eq(b->close[i].category, a->close[i].category);
            cr_assert_str_eq(b->close[i].unit, a->close[i].unit);
            cr_assert_eq(b->close[i].readings, a->close[i].readings);
        }
    }
    feedback_destroy(&read);
    wire_feedback_destroy(&back);
    feedback_destroy(&fb);
}

Test(close_call, a_close_call_that_does_not_add_up_is_refused)
{
    feedback_t *fb = s_analyze(V12);
    Profeed__Feedback *msg = s_wire(fb);
    Profeed__CloseCall *cc = NULL;
    for (size_t i = 0; i < msg->n_kernels && !cc; i++)
        if (msg->kernels[i]->close_call && msg->kernels[i]->close_call->n_other_firsts > 0)
            cc = msg->kernels[i]->close_call;
    cr_assert_not_null(cc);
    pf_error_t err;
    cr_assert_eq(wire_check(&msg->base, &err), PF_OK, "%s", err.msg);
    uint32_t readings = cc->readings, same = cc->same_first;

    cc->same_first = readings + 1;
    cr_assert_eq(wire_check(&msg->base, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "close_call"), "%s", err.msg);
    cc->same_first = readings; /* and one other named too: more than were read */
    cr_assert_eq(wire_check(&msg->base, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "other_firsts"), "%s", err.msg);
    cc->same_first = same;

    cc->readings = WIRE_MAX_CLOSE_READINGS + 1;
    cr_assert_eq(wire_check(&msg->base, &err), PF_ETOOBIG);
    cc->readings = readings;

    cc->noise_pct = 101;
    cr_assert_eq(wire_check(&msg->base, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "noise_pct"), "%s", err.msg);
    cc->noise_pct = 1;

    char *category = cc->other_firsts[0]->category;
    cc->other_firsts[0]->category = (char *) "l2\nbound";
    cr_assert_eq(wire_check(&msg->base, &err), PF_EBADINPUT, "a category is one line");
    cc->other_firsts[0]->category = category;
    cr_assert_eq(wire_check(&msg->base, &err), PF_OK, "%s", err.msg);
    cc->other_firsts[0]->unit = (char *) "fma\r";
    cr_assert_eq(wire_check(&msg->base, &err), PF_EBADINPUT, "a unit is one line");
    cr_assert(strstr(err.msg, "other_firsts[0].unit"), "%s", err.msg);
    cc->other_firsts[0]->unit = NULL;
    cr_assert_eq(wire_check(&msg->base, &err), PF_OK, "%s", err.msg);

    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}

/* One kernel, its limiter and its close call. */
static feedback_t *s_round(const char *limiter, const char *close, double time_ns)
{
    feedback_t *fb = feedback_new("ncu");
    feedback_set_status(fb, FB_OK);
    size_t i = feedback_add_kernel(fb, "softmax(float *)", "(256, 1, 1)", "(1024, 1, 1)", 1, time_ns, 1);
    fb_kernel_t *k = feedback_kernel(fb, i);
    snprintf(k->bottleneck, sizeof k->bottleneck, "%s", limiter);
    feedback_kernel_close(k, 8, close ? 6 : 8, 1);
    if (close)
        feedback_kernel_add_close(k, close, NULL, 2, false, NULL);
    cr_assert_not_null(feedback_add_finding(fb, i, limiter, 20, limiter, "change it"));
    feedback_sort(fb);
    return fb;
}

Test(close_call, a_limiter_that_noise_can_move_is_said_to_be_one_in_a_comparison)
{
    struct {
        const char *before, *before_close, *after, *after_close;
        bool close;
    } cases[] = {
        {"dram_bound", "l2_bound", "l2_bound", NULL, true},     /* the baseline's call named it */
        {"dram_bound", NULL, "l2_bound", "dram_bound", true},   /* this round's call named it */
        {"dram_bound", NULL, "l2_bound", NULL, false},          /* neither: a change */
        {"dram_bound", "occupancy", "l2_bound", NULL, false},   /* a call, but not this one */
        {"dram_bound", "l2_bound", "dram_bound", NULL, false},  /* no change to explain */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        feedback_t *b = s_round(cases[i].before, cases[i].before_close, 100000);
        feedback_t *a = s_round(cases[i].after, cases[i].after_close, 100500);
        fb_comparison_t *c = comparison_new(b, a, "job job-1");
        cr_assert_not_null(c);
        cr_assert_eq(c->kernel_count, 1);
        cr_assert_eq(c->kernels[0].limiter_close, cases[i].close, "case %zu", i);
        comparison_attach(a, &c, "job job-1");
        char *text = render_text(a, 0), *json = render_json(a, false);
        cr_assert_eq(strstr(text, "(a close call: run-to-run noise alone can move it)") != NULL, cases[i].close,
                     "%s", text);
        if (strcmp(cases[i].before, cases[i].after) != 0) /* each round's one finding is its limiter */
            cr_assert_eq(strstr(text, "resolved: dram_bound (the close call); new: l2_bound (the close call)") != NULL,
                         cases[i].close, "%s", text);
        cr_assert(strstr(json, cases[i].close ? "\"limiter_close_call\": true" : "\"limiter_close_call\": false"),
                  "%s", json);
        Profeed__Feedback *msg = feedback_wire_new(a, "job-2", text, json);
        cr_assert_not_null(msg->comparison);
        cr_assert_eq(msg->comparison->kernels[0]->limiter_close_call, cases[i].close);
        wire_feedback_destroy(&msg);
        free(json);
        free(text);
        feedback_destroy(&a);
        feedback_destroy(&b);
    }
}
