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
    feedback_wire_destroy(&msg);
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
    feedback_wire_destroy(&msg);
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
    feedback_wire_destroy(&msg);
    feedback_destroy(&fb);
}
