/* A feedback compared with its baseline (analyzer/core/comparison.c,
 * docs/baselines.md): kernels matched by name, renamed ones by launch order,
 * added and removed ones listed; the noise band from the launches measured
 * or the default; a baseline that cannot be compared; the renderers and the
 * wire carrying it all; the ceiling and the stop verdict. On real H200
 * captures where the case exists in them, on small hand-built feedbacks
 * where it does not. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyzer.h"
#include "ceiling.h"
#include "comparison.h"
#include "feedback.h"
#include "feedback_wire.h"
#include "render.h"
#include "wire.h"

#define V2 PF_FIXTURE_DIR "/ncu/h200-v2/"
#define H200 PF_FIXTURE_DIR "/ncu/h200/"

typedef struct {
    const char *name;
    size_t launches;
    double time_ns;  /* all launches */
    double sd_ns;    /* one launch's; NAN: not measured */
    size_t order;
    const char *limiter;
    const char *findings; /* categories, comma-separated */
} spec_t;

/* A feedback as an analysis would leave it, from a table of kernels. */
static feedback_t *s_feedback(const char *profiler, const spec_t *specs, size_t n)
{
    feedback_t *fb = feedback_new(profiler);
    cr_assert_not_null(fb);
    feedback_set_status(fb, FB_OK);
    for (size_t i = 0; i < n; i++) {
        size_t k = feedback_add_kernel(fb, specs[i].name, "(256, 1, 1)", "(1024, 1, 1)", specs[i].launches,
                                       specs[i].time_ns, NAN);
        cr_assert_neq(k, (size_t) -1);
        fb_kernel_t *kernel = feedback_kernel(fb, k);
        kernel->launch_sd_ns = specs[i].sd_ns;
        kernel->launch_order = specs[i].order;
        snprintf(kernel->bottleneck, sizeof kernel->bottleneck, "%s", specs[i].limiter);
        char list[256];
        snprintf(list, sizeof list, "%s", specs[i].findings);
        for (char *c = list, *end; c && *c; c = end) {
            end = strchr(c, ',');
            if (end)
                *end++ = '\0';
            cr_assert_not_null(feedback_add_finding(fb, k, c, 50, c, "change it"));
        }
    }
    feedback_sort(fb);
    return fb;
}

/* Analyzes capture files as `profeed analyze` does. */
static feedback_t *s_analyze(const char *const *paths, size_t n, double min_share)
{
    analyzer_file_t files[4];
    cr_assert(n <= 4);
    for (size_t i = 0; i < n; i++)
        files[i] = (analyzer_file_t){.path = paths[i], .name = paths[i]};
    analyzer_input_t input = {.files = files, .count = n, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = min_share;
    options.min_share_strict = min_share > 0;
    feedback_t *fb = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    return fb;
}

static const kernel_change_t *s_change(const fb_comparison_t *c, const char *prefix)
{
    for (size_t i = 0; i < c->kernel_count; i++)
        if (strncmp(c->kernels[i].name, prefix, strlen(prefix)) == 0)
            return &c->kernels[i];
    cr_assert_fail("no change for %s", prefix);
    return NULL;
}

static bool s_has(const change_categories_t *list, const char *category)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->category[i], category) == 0)
            return true;
    return false;
}

Test(comparison, same_kernels_captured_twice_match_by_name)
{
    const char *before[] = {V2 "core_raw.csv"}, *after[] = {V2 "capture-2026-12-01/core_raw.csv"};
    feedback_t *b = s_analyze(before, 1, 0.05), *a = s_analyze(after, 1, 0.05);
    fb_comparison_t *c = comparison_new(b, a, "files");
    cr_assert_not_null(c);
    cr_assert_str_empty(c->problem);
    cr_assert_eq(c->kernel_count, 5);
    cr_assert_eq(c->appeared_count + c->disappeared_count, 0);
    for (size_t i = 0; i < c->kernel_count; i++)
        cr_assert_str_eq(c->kernels[i].matched_by, "name");
    /* One launch each: the default band; stream_one_warp ran 3.1% faster. */
    const kernel_change_t *s = s_change(c, "stream_one_warp");
    cr_assert_str_eq(s->band_source, "default");
    cr_assert_float_eq(s->band, COMPARISON_DEFAULT_BAND, 1e-12);
    cr_assert(s->change < -0.02 && s->change > -0.04, "%g", s->change);
    cr_assert_eq(s->verdict, CHANGE_IMPROVED);
    cr_assert_eq(s_change(c, "smem_stride4")->verdict, CHANGE_WITHIN_NOISE);
    /* barrier_heavy's limiter moved from compute_bound to barrier_stall under
     * the richer plan: one finding resolved, one new. */
    const kernel_change_t *bh = s_change(c, "barrier_heavy");
    cr_assert_str_eq(bh->limiter_before, "compute_bound");
    cr_assert_str_eq(bh->limiter_after, "barrier_stall");
    cr_assert(s_has(&bh->resolved, "compute_bound") && s_has(&bh->added, "barrier_stall"));
    cr_assert(s_has(&s_change(c, "smem_stride4")->unchanged, "bank_conflicts"));
    cr_assert_eq(c->verdict, CHANGE_WITHIN_NOISE);
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, launches_measured_give_the_noise_band)
{
    /* tiny_scale is launched 20 times in corpus v2: its band comes from them. */
    const char *before[] = {V2 "core_raw.csv"}, *after[] = {V2 "capture-2026-12-01/core_raw.csv"};
    feedback_t *b = s_analyze(before, 1, 0), *a = s_analyze(after, 1, 0);
    fb_comparison_t *c = comparison_new(b, a, "files");
    cr_assert_not_null(c);
    const kernel_change_t *t = s_change(c, "tiny_scale");
    cr_assert_eq(t->before_launches, 20);
    cr_assert_str_eq(t->band_source, "launches");
    cr_assert(t->band >= COMPARISON_MIN_BAND && isfinite(t->band), "%g", t->band);
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, a_change_inside_the_band_is_noise_and_outside_it_is_not)
{
    /* 20 launches with a 10% spread each: the band is 2 sqrt(2 x 0.01 / 20)
     * = 6.3%, so 3% faster is noise and 20% faster is not. */
    spec_t before = {"k", 20, 20 * 100.0, 10, 0, "dram_bound", "dram_bound"};
    spec_t noise = {"k", 20, 20 * 97.0, 9.7, 0, "dram_bound", "dram_bound"};
    spec_t faster = {"k", 20, 20 * 80.0, 8, 0, "dram_bound", "dram_bound"};
    spec_t slower = {"k", 20, 20 * 130.0, 13, 0, "dram_bound", "dram_bound"};
    feedback_t *b = s_feedback("ncu", &before, 1), *n = s_feedback("ncu", &noise, 1);
    feedback_t *f = s_feedback("ncu", &faster, 1), *s = s_feedback("ncu", &slower, 1);
    fb_comparison_t *cn = comparison_new(b, n, "b"), *cf = comparison_new(b, f, "b"), *cs = comparison_new(b, s, "b");
    cr_assert_float_eq(cn->kernels[0].band, 2 * sqrt(2 * 0.01 / 20), 1e-9);
    cr_assert_str_eq(cn->kernels[0].band_source, "launches");
    cr_assert_eq(cn->kernels[0].verdict, CHANGE_WITHIN_NOISE);
    cr_assert_eq(cn->verdict, CHANGE_WITHIN_NOISE);
    cr_assert_eq(cf->kernels[0].verdict, CHANGE_IMPROVED);
    cr_assert_float_eq(cf->change, -0.2, 1e-9);
    cr_assert_eq(cs->kernels[0].verdict, CHANGE_REGRESSED);
    comparison_destroy(&cn);
    comparison_destroy(&cf);
    comparison_destroy(&cs);
    feedback_destroy(&b);
    feedback_destroy(&n);
    feedback_destroy(&f);
    feedback_destroy(&s);
}

Test(comparison, single_launches_use_the_default_band)
{
    spec_t before = {"k", 1, 1000, NAN, 0, "dram_bound", ""};
    spec_t small = {"k", 1, 985, NAN, 0, "dram_bound", ""};
    spec_t big = {"k", 1, 970, NAN, 0, "dram_bound", ""};
    feedback_t *b = s_feedback("ncu", &before, 1), *s = s_feedback("ncu", &small, 1), *g = s_feedback("ncu", &big, 1);
    fb_comparison_t *cs = comparison_new(b, s, "b"), *cg = comparison_new(b, g, "b");
    cr_assert_str_eq(cs->kernels[0].band_source, "default");
    cr_assert_eq(cs->kernels[0].verdict, CHANGE_WITHIN_NOISE); /* -1.5% inside +-2% */
    cr_assert_eq(cg->kernels[0].verdict, CHANGE_IMPROVED);     /* -3% outside */
    comparison_destroy(&cs);
    comparison_destroy(&cg);
    feedback_destroy(&b);
    feedback_destroy(&s);
    feedback_destroy(&g);
}

Test(comparison, a_renamed_kernel_matches_by_launch_order)
{
    spec_t before[] = {{"prologue", 1, 500, NAN, 0, "latency", ""},
                       {"copy_v1", 1, 1000, NAN, 1, "uncoalesced_access", "uncoalesced_access,dram_bound"}};
    spec_t after[] = {{"copy_v2", 1, 600, NAN, 1, "dram_bound", "dram_bound"},
                      {"prologue", 1, 500, NAN, 0, "latency", ""}};
    feedback_t *b = s_feedback("ncu", before, 2), *a = s_feedback("ncu", after, 2);
    fb_comparison_t *c = comparison_new(b, a, "b");
    cr_assert_eq(c->kernel_count, 2);
    const kernel_change_t *k = s_change(c, "copy_v2");
    cr_assert_str_eq(k->baseline_name, "copy_v1");
    cr_assert_str_eq(k->matched_by, "launch order");
    cr_assert_eq(k->verdict, CHANGE_IMPROVED);
    cr_assert(s_has(&k->resolved, "uncoalesced_access") && s_has(&k->unchanged, "dram_bound"));
    cr_assert_str_eq(s_change(c, "prologue")->matched_by, "name");
    cr_assert_eq(c->appeared_count + c->disappeared_count, 0);
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

/* The H200 loop of deploy/gpu-smoke.sh: round 2 changed the kernel's
 * template argument (copy_round<1> -> copy_round<2>) and an init kernel that
 * was under the time-share cut in round 1 is analyzed in round 2; the
 * launch-order rule cannot pair them (one kernel left on one side, two on the
 * other), the name without template arguments does. */
Test(comparison, a_changed_template_argument_matches_by_name_without_it)
{
    spec_t before[] = {{"void copy_round<1>(const float *, float *, unsigned long)", 5, 2570000, 1000, 1,
                        "uncoalesced_access", "uncoalesced_access,l2_bound"}};
    spec_t after[] = {{"void copy_round<2>(const float *, float *, unsigned long)", 5, 977000, 1000, 1, "l2_bound",
                       "l2_bound"},
                      {"init(float *, unsigned long)", 1, 90900, NAN, 0, "l2_bound", "l2_bound"}};
    feedback_t *b = s_feedback("ncu", before, 1), *a = s_feedback("ncu", after, 2);
    fb_comparison_t *c = comparison_new(b, a, "b");
    cr_assert_eq(c->kernel_count, 1);
    const kernel_change_t *k = s_change(c, "void copy_round<2>(const float *, float *, unsigned long)");
    cr_assert_str_eq(k->baseline_name, "void copy_round<1>(const float *, float *, unsigned long)");
    cr_assert_str_eq(k->matched_by, "name without template arguments");
    cr_assert_eq(k->verdict, CHANGE_IMPROVED);
    cr_assert_eq(c->appeared_count, 1);
    cr_assert_str_eq(c->appeared[0], "init(float *, unsigned long)");
    cr_assert_eq(c->disappeared_count, 0);
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

/* Two instantiations on each side: which is which is not known from the
 * name, so the name without template arguments pairs none of them. */
Test(comparison, several_instantiations_are_not_paired_by_the_template_rule)
{
    spec_t before[] = {{"k<1>(int)", 1, 1000, NAN, 0, "dram_bound", ""}, {"k<2>(int)", 1, 1000, NAN, 1, "dram_bound", ""}};
    spec_t after[] = {{"k<3>(int)", 1, 900, NAN, 0, "dram_bound", ""}, {"k<4>(int)", 1, 900, NAN, 1, "dram_bound", ""}};
    feedback_t *b = s_feedback("ncu", before, 2), *a = s_feedback("ncu", after, 2);
    fb_comparison_t *c = comparison_new(b, a, "b");
    for (size_t i = 0; i < c->kernel_count; i++)
        cr_assert_str_neq(c->kernels[i].matched_by, "name without template arguments");
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, added_and_removed_kernels_are_listed)
{
    spec_t before[] = {{"main", 1, 1000, NAN, 0, "dram_bound", ""}, {"old_reduce", 1, 300, NAN, 1, "latency", ""}};
    spec_t after[] = {{"main", 1, 990, NAN, 0, "dram_bound", ""},
                      {"reduce_a", 1, 100, NAN, 1, "latency", ""},
                      {"reduce_b", 1, 100, NAN, 2, "latency", ""}};
    feedback_t *b = s_feedback("ncu", before, 2), *a = s_feedback("ncu", after, 3);
    fb_comparison_t *c = comparison_new(b, a, "b");
    cr_assert_eq(c->kernel_count, 1);
    cr_assert_eq(c->appeared_count, 2);
    cr_assert_str_eq(c->appeared[0], "reduce_a");
    cr_assert_str_eq(c->appeared[1], "reduce_b");
    cr_assert_eq(c->disappeared_count, 1);
    cr_assert_str_eq(c->disappeared[0], "old_reduce");
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, two_programs_without_a_common_name_are_not_paired_by_position)
{
    const char *before[] = {V2 "core_raw.csv"}, *after[] = {H200 "capture-2026-12-01/core_raw.csv"};
    feedback_t *b = s_analyze(before, 1, 0.05), *a = s_analyze(after, 1, 0.05);
    fb_comparison_t *c = comparison_new(b, a, "files");
    cr_assert_eq(c->kernel_count, 0);
    cr_assert_eq(c->appeared_count, feedback_kernel_count(a));
    cr_assert_eq(c->disappeared_count, feedback_kernel_count(b));
    cr_assert_eq(c->verdict, CHANGE_NOT_TIMED);
    comparison_destroy(&c);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, another_profiler_or_an_empty_baseline_is_not_compared)
{
    spec_t k = {"k", 1, 1000, NAN, 0, "dram_bound", ""};
    feedback_t *ncu = s_feedback("ncu", &k, 1), *vtune = s_feedback("vtune", &k, 1), *empty = feedback_new("ncu");
    feedback_set_status(empty, FB_NO_KERNELS);
    fb_comparison_t *c = comparison_new(vtune, ncu, "job v");
    cr_assert(strstr(c->problem, "profiled by vtune and this job by ncu"), "%s", c->problem);
    comparison_attach(ncu, &c, "job v");
    cr_assert_null(c);
    cr_assert(strstr(feedback_note(ncu, 0), "baseline job v: not compared"), "%s", feedback_note(ncu, 0));
    fb_comparison_t *e = comparison_new(empty, ncu, "job e");
    cr_assert(strstr(e->problem, "no analyzed kernel"), "%s", e->problem);
    comparison_destroy(&e);
    feedback_destroy(&ncu);
    feedback_destroy(&vtune);
    feedback_destroy(&empty);
}

Test(comparison, a_missing_baseline_leaves_the_plain_feedback)
{
    const char *now[] = {V2 "capture-2026-12-01/core_raw.csv"}, *missing[] = {V2 "no-such-capture.csv"};
    feedback_t *a = s_analyze(now, 1, 0.05);
    size_t kernels = feedback_kernel_count(a), findings = feedback_finding_count(a);
    analyzer_file_t file = {.path = missing[0], .name = missing[0]};
    analyzer_input_t input = {.files = &file, .count = 1, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    analyzer_compare_files(a, &input, &options, "files no-such-capture.csv");
    const fb_comparison_t *c = feedback_comparison(a);
    cr_assert_not_null(c);
    cr_assert(strstr(c->problem, "could not be analyzed"), "%s", c->problem);
    cr_assert_eq(feedback_kernel_count(a), kernels);
    cr_assert_eq(feedback_finding_count(a), findings);
    char *text = render_text(a, 0);
    cr_assert(strstr(text, "Change since baseline files no-such-capture.csv: not compared: its files could not be "
                           "analyzed"), "%s", text);
    cr_assert(strstr(text, "\n1. local_array_dyn"), "%s", text);
    free(text);
    feedback_destroy(&a);
}

Test(comparison, text_json_and_markdown_show_the_change)
{
    spec_t before[] = {{"copy_v1", 1, 1000, NAN, 0, "uncoalesced_access", "uncoalesced_access"}};
    spec_t after[] = {{"copy_v2", 1, 500, NAN, 0, "dram_bound", "dram_bound"}};
    feedback_t *b = s_feedback("ncu", before, 1), *a = s_feedback("ncu", after, 1);
    fb_comparison_t *c = comparison_new(b, a, "job r1");
    comparison_attach(a, &c, "job r1");
    char *text = render_text(a, 0), *json = render_json(a, false), *md = render_markdown(a);
    cr_assert(strstr(text, "Change since baseline job r1: improved, -50.0% time over 1 matched kernel (noise +-2.0%)"),
              "%s", text);
    cr_assert(strstr(text, "- copy_v2 (was copy_v1, matched by launch order): 1.0 us -> 500 ns per launch (-50.0%, "
                           "noise +-2.0% by default): improved; limiter uncoalesced_access -> dram_bound; resolved: "
                           "uncoalesced_access; new: dram_bound; unchanged: none"), "%s", text);
    json_error_t jerr;
    json_t *doc = json_loads(json, 0, &jerr);
    cr_assert_not_null(doc, "%s", jerr.text);
    json_t *cmp = json_object_get(doc, "comparison");
    cr_assert_str_eq(json_string_value(json_object_get(cmp, "verdict")), "improved");
    json_t *k0 = json_array_get(json_object_get(cmp, "kernels"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(k0, "matched_by")), "launch order");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(k0, "resolved"), 0)), "uncoalesced_access");
    cr_assert_not_null(json_object_get(doc, "manifest"));
    cr_assert(strstr(md, "## Change since the baseline"), "%s", md);
    cr_assert(strstr(md, "copy_v2 (was copy_v1, matched by launch order)"), "%s", md);
    json_decref(doc);
    free(text);
    free(json);
    free(md);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(comparison, the_wire_carries_what_a_later_comparison_needs)
{
    /* The farm keeps a job's Feedback message, not its feedback_t: read back,
     * it compares as the original does (timings, launch order, findings). */
    spec_t before[] = {{"k", 20, 20 * 100.0, 10, 3, "dram_bound", "dram_bound,uncoalesced_access"}};
    spec_t after[] = {{"k", 20, 20 * 80.0, 8, 3, "dram_bound", "dram_bound"}};
    feedback_t *b = s_feedback("ncu", before, 1), *a = s_feedback("ncu", after, 1);
    snprintf(feedback_manifest(b)->driver_version, sizeof feedback_manifest(b)->driver_version, "550.54");
    snprintf(feedback_manifest(a)->driver_version, sizeof feedback_manifest(a)->driver_version, "580.159");
    Profeed__Feedback *msg = feedback_wire_new(b, "job-1", "text", "{}");
    cr_assert_not_null(msg);
    size_t len = 0;
    pf_error_t err;
    uint8_t *bytes = wire_feedback_pack(msg, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__Feedback *back = wire_feedback_unpack(bytes, len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(back, "%s", err.msg);
    feedback_t *read = feedback_wire_read(back);
    cr_assert_not_null(read);
    cr_assert_eq(feedback_kernel_const(read, 0)->launch_order, 3);
    cr_assert_float_eq(feedback_kernel_const(read, 0)->launch_sd_ns, 10, 1e-9);
    fb_comparison_t *c = comparison_new(read, a, "job job-1");
    cr_assert_str_eq(c->kernels[0].band_source, "launches");
    cr_assert_eq(c->kernels[0].verdict, CHANGE_IMPROVED);
    cr_assert(s_has(&c->kernels[0].resolved, "uncoalesced_access"));
    cr_assert_eq(c->difference_count, 1);
    cr_assert_str_eq(c->differences[0], "driver_version: 550.54 -> 580.159");
    /* ... and the comparison itself goes out on the wire and validates. */
    comparison_attach(a, &c, "job job-1");
    Profeed__Feedback *out = feedback_wire_new(a, "job-2", "text", "{}");
    cr_assert_not_null(out->comparison);
    cr_assert_eq(out->comparison->verdict, PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_IMPROVED);
    size_t out_len = 0;
    uint8_t *out_bytes = wire_feedback_pack(out, WIRE_MAX_MSG, &out_len, &err);
    cr_assert_not_null(out_bytes, "%s", err.msg);
    free(out_bytes);
    wire_feedback_destroy(&out);
    feedback_destroy(&read);
    wire_feedback_destroy(&back);
    free(bytes);
    wire_feedback_destroy(&msg);
    feedback_destroy(&b);
    feedback_destroy(&a);
}

Test(ceiling, a_kernel_near_its_roof_says_to_consider_stopping)
{
    spec_t k = {"copy", 1, 1000, NAN, 0, "dram_bound", "dram_bound"};
    feedback_t *fb = s_feedback("ncu", &k, 1);
    feedback_kernel_ceiling(feedback_kernel(fb, 0), "DRAM", 88, 100);
    cr_assert_float_eq(ceiling_left(feedback_kernel_const(fb, 0)), 100.0 / 88, 1e-9);
    ceiling_judge(fb, 0.05, CEILING_STOP_WITHIN_DEFAULT);
    const char *text;
    cr_assert(feedback_stop(fb, &text));
    cr_assert_str_eq(text, "near the DRAM ceiling (88% of peak): at most 1.14x left; consider stopping");
    char *out = render_text(fb, 0);
    cr_assert(strstr(out, "When to stop: near the DRAM ceiling (88% of peak): at most 1.14x left; consider stopping"),
              "%s", out);
    cr_assert(strstr(out, "   Ceiling: DRAM at 88% of peak: at most 1.14x left on the same work"), "%s", out);
    free(out);
    /* A stricter setting: 1.14x is too far. */
    ceiling_judge(fb, 0.05, 1.10);
    cr_assert_not(feedback_stop(fb, &text));
    cr_assert(strstr(text, "not near the ceiling yet"), "%s", text);
    feedback_destroy(&fb);
}

Test(ceiling, one_kernel_far_from_its_roof_keeps_the_loop_going)
{
    spec_t k[] = {{"near", 1, 1000, NAN, 0, "dram_bound", ""}, {"far", 1, 900, NAN, 1, "small_grid", ""}};
    feedback_t *fb = s_feedback("ncu", k, 2);
    feedback_kernel_ceiling(feedback_kernel(fb, 0), "DRAM", 95, 100);
    feedback_kernel_ceiling(feedback_kernel(fb, 1), "L2 cache", 20, 100);
    ceiling_judge(fb, 0.05, CEILING_STOP_WITHIN_DEFAULT);
    const char *text;
    cr_assert_not(feedback_stop(fb, &text));
    cr_assert(strstr(text, "far runs its L2 cache at 20% of peak, up to 5.00x left"), "%s", text);
    feedback_destroy(&fb);
}

Test(ceiling, a_real_capture_gets_each_kernels_ceiling)
{
    /* vec_add streams from DRAM on the H200 (tests/fixtures/ncu/h200/README.md) with one
     * scalar load per thread: DRAM at 71% of peak, 90% attainable, so 1.26x left (a
     * vectorized copy measured 1.49x faster than a scalar one in rounds.cu's loop,
     * docs/gpu-validation.md). Its L2 (83%) carries DRAM's traffic: DRAM is the ceiling. */
    const char *files[] = {H200 "capture-2026-12-01/core_raw.csv"};
    feedback_t *fb = s_analyze(files, 1, 0);
    bool seen = false;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        cr_assert(isfinite(k->ceiling_pct), "%s has no ceiling", k->name);
        if (strncmp(k->name, "vec_add", 7) == 0) {
            seen = true;
            cr_assert_str_eq(k->ceiling_unit, "DRAM");
            cr_assert(k->ceiling_pct > 65 && ceiling_left(k) > 1.1 && ceiling_left(k) < 1.4, "%s: %s %g", k->name,
                      k->ceiling_unit, k->ceiling_pct);
        }
    }
    cr_assert(seen);
    feedback_destroy(&fb);
}

Test(ceiling, a_unit_busy_with_waste_is_not_a_reason_to_stop)
{
    /* strided_copy on the H200 keeps L2 96% busy with sectors it mostly
     * throws away: near that ceiling, yet coalescing would make it ~4x faster. */
    spec_t k = {"strided_copy", 1, 1000, NAN, 0, "uncoalesced_access", ""};
    feedback_t *fb = s_feedback("ncu", &k, 1);
    feedback_kernel_ceiling(feedback_kernel(fb, 0), "L2 cache", 96, 100);
    fb_finding_t *f = feedback_add_finding(fb, 0, "uncoalesced_access", 75, "uncoalesced", "coalesce");
    f->speedup = 75;
    ceiling_judge(fb, 0.05, CEILING_STOP_WITHIN_DEFAULT);
    const char *text;
    cr_assert_not(feedback_stop(fb, &text));
    cr_assert(strstr(text, "but uncoalesced_access would still make it up to 4.00x faster"), "%s", text);
    cr_assert_float_eq(ceiling_kernel_left(fb, 0), 4, 1e-9);
    feedback_destroy(&fb);
}

Test(comparison, a_device_name_from_a_file_goes_on_the_wire_as_one_clean_line)
{
    /* The manifest's GPU can come from the capture, which is untrusted. */
    spec_t k = {"k", 1, 1000, NAN, 0, "dram_bound", ""};
    feedback_t *fb = s_feedback("ncu", &k, 1);
    snprintf(feedback_manifest(fb)->gpu, sizeof feedback_manifest(fb)->gpu, "NVIDIA\nH200 \xff");
    Profeed__Feedback *msg = feedback_wire_new(fb, "job-1", "text", "{}");
    cr_assert_not_null(msg);
    cr_assert_str_eq(msg->manifest->gpu, "NVIDIA?H200 ?");
    size_t len = 0;
    pf_error_t err;
    uint8_t *bytes = wire_feedback_pack(msg, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    free(bytes);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}
