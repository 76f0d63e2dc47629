/* feedback_t to the wire Feedback: statuses mapped (FB_OK is 0, the wire's OK
 * is 1), unmeasured values left unset, every field the renderers show kept,
 * and the result passes the same validation a receiver applies. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "feedback_wire.h"
#include "wire.h"

#define INTEL PF_FIXTURE_DIR "/intel/"

static Profeed__Feedback *s_roundtrip(const Profeed__Feedback *msg)
{
    size_t size = 0;
    pf_error_t err;
    uint8_t *bytes = wire_feedback_pack(msg, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "pack refused: %s", err.msg);
    Profeed__Feedback *back = wire_feedback_unpack(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert_not_null(back, "unpack refused: %s", err.msg);
    free(bytes);
    return back;
}

Test(feedback_wire, a_unitrace_feedback_keeps_its_benchmark_windows_and_status)
{
    analyzer_file_t files[2] = {{.path = INTEL "unitrace_b580/trace.metrics.41001"},
                                {.path = INTEL "unitrace_b580/python3.41001.json"}};
    analyzer_input_t input = {.files = files, .count = 2, .device = "Arc B580"};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    Profeed__Feedback *msg = feedback_wire_new(fb, "3f2b8c1e-0d4a-4c7e-9b1a-2f6d5e4c3b2a", "text", NULL);
    cr_assert_not_null(msg);
    Profeed__Feedback *back = s_roundtrip(msg);
    cr_expect_eq(back->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK);
    cr_assert_eq(back->n_kernels, feedback_kernel_count(fb));
    bool windowed = false;
    for (size_t k = 0; k < back->n_kernels; k++)
        windowed |= back->kernels[k]->segment && strstr(back->kernels[k]->segment, "test_benchmark[1024]");
    cr_expect(windowed, "the slowest window's label travels with its kernels");
    wire_feedback_destroy(&back);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}

Test(feedback_wire, sampling_mode_sends_no_kernel_time)
{
    analyzer_file_t files[1] = {{.path = INTEL "unitrace_ocl_sampling/trace.metrics.52001"}};
    analyzer_input_t input = {.files = files, .count = 1};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    Profeed__Feedback *msg = feedback_wire_new(fb, "3f2b8c1e-0d4a-4c7e-9b1a-2f6d5e4c3b2b", NULL, NULL);
    Profeed__Feedback *back = s_roundtrip(msg);
    cr_assert_gt(back->n_kernels, 0);
    for (size_t k = 0; k < back->n_kernels; k++) {
        cr_expect(!back->kernels[k]->has_time_ns, "the sampling interval is not a kernel time");
        cr_expect(back->kernels[k]->has_time_share);
    }
    wire_feedback_destroy(&back);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}

/* An optional wire string: "" is not sent, so it comes back NULL. */
static const char *s_str(const char *wire)
{
    return wire ? wire : "";
}

/* A wire double that may be absent: equal when both are unmeasured. */
static void s_expect_value(bool has, double wire, double ours, const char *what)
{
    if (!isfinite(ours)) {
        cr_expect(!has, "%s: unmeasured, so unset on the wire", what);
        return;
    }
    cr_expect(has, "%s: measured, so set on the wire", what);
    cr_expect_float_eq(wire, ours, 1e-9 * fmax(1, fabs(ours)), "%s", what);
}

/* Every field the renderers (render_text, render_markdown, render_json) show
 * of a kernel, a finding and its evidence, and the feedback's lists, read
 * back after a pack and an unpack: an agent reading the structured Feedback
 * sees what the text says. The H200 capture's analysis, with a note, an
 * error and a missing metric added. */
Test(feedback_wire, every_field_the_renderers_show_survives_the_wire)
{
    analyzer_file_t files[2] = {{.path = PF_FIXTURE_DIR "/ncu/h200/full_raw.csv"},
                                {.path = PF_FIXTURE_DIR "/ncu/h200/full_details.csv"}};
    analyzer_input_t input = {.files = files, .count = 2, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    feedback_add_note(fb, "a note for the agent");
    feedback_add_error(fb, "an error for the agent");
    feedback_add_missing(fb, "sm__inst_executed_pipe_tensor.sum");
    cr_assert_gt(feedback_kernel_count(fb), 1);
    cr_assert_gt(feedback_finding_count(fb), 1);
    Profeed__Feedback *msg = feedback_wire_new(fb, "job-1", "the text", "{}");
    cr_assert_not_null(msg);
    Profeed__Feedback *back = s_roundtrip(msg);

    cr_expect_str_eq(s_str(back->job_id), "job-1");
    cr_expect_str_eq(s_str(back->text), "the text");
    cr_expect_str_eq(s_str(back->json), "{}");
    cr_expect(back->has_profiler && back->profiler == PROFEED__PROFILER__PROFILER_NCU);
    cr_expect_eq(back->status, feedback_wire_status(feedback_status(fb)));
    cr_assert_eq(back->n_kernels, feedback_kernel_count(fb));
    for (size_t i = 0; i < back->n_kernels; i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        const Profeed__KernelSummary *w = back->kernels[i];
        cr_expect_str_eq(s_str(w->name), k->name);
        cr_expect_str_eq(s_str(w->block), k->block);
        cr_expect_str_eq(s_str(w->grid), k->grid);
        cr_expect_str_eq(s_str(w->bottleneck), k->bottleneck);
        cr_expect_str_eq(w->segment ? w->segment : "", k->segment);
        cr_expect(w->has_launches && w->launches == k->launches, "%s: launches", k->name);
        s_expect_value(w->has_time_share, w->time_share, k->share, "time share");
        if (isfinite(k->time_ns))
            cr_expect(w->has_time_ns && (double) w->time_ns == round(k->time_ns), "%s: time", k->name);
        else
            cr_expect(!w->has_time_ns);
    }
    cr_assert_eq(back->n_findings, feedback_finding_count(fb));
    for (size_t i = 0; i < back->n_findings; i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        const Profeed__Finding *w = back->findings[i];
        cr_expect_str_eq(s_str(w->kernel), feedback_kernel_const(fb, f->kernel)->name);
        cr_expect_str_eq(s_str(w->category), f->category);
        cr_expect_str_eq(s_str(w->title), f->title);
        cr_expect_str_eq(s_str(w->action), f->action);
        cr_expect_str_eq(s_str(w->source), f->source);
        cr_expect(w->has_primary && w->primary == f->primary, "%s: primary", f->category);
        s_expect_value(w->has_importance, w->importance, f->importance, "importance");
        s_expect_value(w->has_estimated_speedup, w->estimated_speedup, f->speedup, "speedup");
        cr_assert_eq(w->n_evidence, f->evidence_count, "%s: evidence", f->category);
        for (size_t e = 0; e < w->n_evidence; e++) {
            const fb_evidence_t *ev = &f->evidence[e];
            cr_expect_str_eq(s_str(w->evidence[e]->metric), ev->metric[0] ? ev->metric : "(text)");
            cr_expect_str_eq(s_str(w->evidence[e]->unit), ev->unit);
            cr_expect_str_eq(s_str(w->evidence[e]->text), ev->text);
            s_expect_value(w->evidence[e]->has_value, w->evidence[e]->value, ev->value, "evidence value");
        }
    }
    cr_assert_eq(back->n_notes, feedback_note_count(fb));
    for (size_t i = 0; i < back->n_notes; i++)
        cr_expect_str_eq(s_str(back->notes[i]), feedback_note(fb, i));
    cr_assert_eq(back->n_errors, feedback_error_count(fb));
    for (size_t i = 0; i < back->n_errors; i++)
        cr_expect_str_eq(s_str(back->errors[i]), feedback_error(fb, i));
    cr_assert_eq(back->n_missing, feedback_missing_count(fb));
    for (size_t i = 0; i < back->n_missing; i++)
        cr_expect_str_eq(s_str(back->missing[i]), feedback_missing(fb, i));
    wire_feedback_destroy(&back);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}

Test(feedback_wire, source_lines_travel_with_their_findings)
{
    analyzer_file_t files[] = {{.path = PF_FIXTURE_DIR "/ncu/h200-v2/full_raw.csv"},
                               {.path = PF_FIXTURE_DIR "/ncu/h200-v2/full_details.csv"},
                               {.path = PF_FIXTURE_DIR "/ncu/h200-v2/source_smem_stride4.csv"}};
    analyzer_input_t input = {.files = files, .count = 3, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    Profeed__Feedback *msg = feedback_wire_new(fb, "3f2b8c1e-0d4a-4c7e-9b1a-2f6d5e4c3b2a", "text", NULL);
    cr_assert_not_null(msg);
    Profeed__Feedback *back = s_roundtrip(msg);
    const Profeed__SourceLine *line = NULL;
    for (size_t i = 0; i < back->n_findings && !line; i++)
        if (strcmp(back->findings[i]->category, "bank_conflicts") == 0 && back->findings[i]->n_lines > 0)
            line = back->findings[i]->lines[0];
    cr_assert_not_null(line, "the bank-conflict finding carries its line");
    cr_expect_eq(line->line, 62);
    cr_expect(line->has_share && line->share > 0.99);
    cr_expect_str_eq(line->file, "corpus_v2.cu");
    cr_expect(strstr(line->text, "acc += s[(lane * 4 + w + i) & 1023]"), "%s", line->text);
    wire_feedback_destroy(&back);
    /* A share past 1 is refused on the way out, as any receiver would. */
    for (size_t i = 0; i < msg->n_findings; i++)
        if (msg->n_findings && msg->findings[i]->n_lines > 0) {
            msg->findings[i]->lines[0]->share = 1.5;
            break;
        }
    size_t size = 0;
    uint8_t *bytes = wire_feedback_pack(msg, WIRE_MAX_MSG, &size, &err);
    cr_expect_null(bytes);
    cr_expect(strstr(err.msg, "lines[0].share"), "%s", err.msg);
    free(bytes);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}

/* Two kernels may share a name (one kernel at two launch configurations, or
 * launches of one configuration that behave differently, analyzed apart):
 * each finding read back from the wire is its own kernel's, and the groups'
 * launch IDs survive. Corpus v51's workloads have both. */
Test(feedback_wire, findings_stay_with_their_kernel_when_kernels_share_a_name)
{
    analyzer_file_t files[1] = {{.path = PF_FIXTURE_DIR "/ncu/h200-v51/workloads/core_mwa_raw.csv"}};
    analyzer_input_t input = {.files = files, .count = 1, .profiler = "ncu"};
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0; /* every kernel, as --min-share 0 */
    options.top = 0;
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    size_t shared = 0, split = 0;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        split += k->launch_ids[0] != '\0';
        for (size_t j = 0; j < i; j++)
            shared += strcmp(feedback_kernel_const(fb, j)->name, k->name) == 0;
    }
    cr_assert_gt(shared, 0);
    cr_assert_gt(split, 0);
    Profeed__Feedback *msg = feedback_wire_new(fb, "job-1", "text", "{}");
    cr_assert_not_null(msg);
    Profeed__Feedback *back = s_roundtrip(msg);
    feedback_t *read = feedback_wire_read(back);
    cr_assert_not_null(read);
    cr_assert_eq(feedback_kernel_count(read), feedback_kernel_count(fb));
    for (size_t i = 0; i < feedback_kernel_count(fb); i++)
        cr_expect_str_eq(feedback_kernel_const(read, i)->launch_ids, feedback_kernel_const(fb, i)->launch_ids);
    cr_assert_eq(feedback_finding_count(read), feedback_finding_count(fb));
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        cr_expect_eq(feedback_finding(read, i)->kernel, feedback_finding(fb, i)->kernel, "finding %zu (%s)", i,
                     feedback_finding(fb, i)->title);
    feedback_destroy(&read);
    wire_feedback_destroy(&back);
    wire_feedback_destroy(&msg);
    feedback_destroy(&fb);
}
