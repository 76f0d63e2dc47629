/* The buffer API (client/profeed_session.h): passes given in memory, under
 * their own names, give exactly the feedback of the same files on disk;
 * options are set by name and checked; sizes are bounded before anything is
 * copied. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profeed_client.h"
#include "profeed_session.h"
#include "test_util.h"

#define NCU PF_FIXTURE_DIR "/ncu/h200/"
#define B580 PF_FIXTURE_DIR "/intel/unitrace_b580/"
#define B580_NAME "Intel Corporation Battlemage G21 [Arc B580]"

/* The feedback profeed_analyze_files() gives for `paths`, for comparison. */
static char *s_from_files(const char *const *paths, size_t count, const char *device)
{
    profeed_analyze_options_t options;
    profeed_analyze_options_init(&options);
    options.device = device;
    char *out = NULL, *err = NULL;
    profeed_result_t rc = profeed_analyze_files(paths, count, &options, &out, &err);
    cr_assert_eq(rc, PROFEED_OK, "files: %s", err ? err : "");
    free(err);
    cr_assert_not_null(out);
    return out;
}

/* Adds the fixture at `dir`/`name` to `s` as pass `pass_key`, under `as`. */
static void s_add_fixture(profeed_session_t *s, const char *pass_key, const char *path, const char *as)
{
    size_t len = 0;
    char *bytes = test_read_file(path, &len);
    cr_assert_eq(profeed_session_add(s, pass_key, as, bytes, len), PROFEED_OK, "%s", profeed_session_error(s));
    free(bytes);
}

Test(session, ncu_passes_in_memory_give_the_feedback_of_the_files)
{
    const char *paths[] = {NCU "full_raw.csv", NCU "full_details.csv"};
    char *expected = s_from_files(paths, 2, NULL);

    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    s_add_fixture(s, "ncu.000", paths[0], "ncu_report.csv");
    s_add_fixture(s, "ncu.001", paths[1], "ncu_report.csv");
    cr_assert_eq(profeed_session_run(s), PROFEED_OK, "%s", profeed_session_error(s));
    cr_assert_str_eq(profeed_session_output(s), expected);
    cr_assert_eq(profeed_session_output_len(s), strlen(expected));
    cr_assert_str_empty(profeed_session_error(s));
    free(expected);
    profeed_session_destroy(&s);
    cr_assert_null(s);
    profeed_session_destroy(&s); /* a no-op on NULL */
}

/* KernelFoundry's unitrace passes: the pass key groups a metrics table with
 * its timeline, whatever the timeline is called. */
Test(session, unitrace_passes_in_memory_are_grouped_by_pass_key)
{
    const char *paths[] = {B580 "trace.metrics.41001", B580 "python3.41001.json", B580 "trace.metrics.41002",
                           B580 "python3.41002.json",  B580 "trace.metrics.41003", B580 "python3.41003.json"};
    char *expected = s_from_files(paths, 6, B580_NAME);

    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "device", B580_NAME), PROFEED_OK);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "unitrace.%03d", i);
        s_add_fixture(s, key, paths[2 * i], paths[2 * i] + strlen(B580));
        s_add_fixture(s, key, paths[2 * i + 1], "timeline");
    }
    cr_assert_eq(profeed_session_run(s), PROFEED_OK, "%s", profeed_session_error(s));
    cr_assert_str_eq(profeed_session_output(s), expected);
    cr_assert_not_null(strstr(expected, "8 kernels"), "%s", expected);
    free(expected);
    profeed_session_destroy(&s);
}

Test(session, another_format_renders_the_same_feedback)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "with_collated", "1"), PROFEED_OK);
    s_add_fixture(s, "ncu.000", NCU "full_raw.csv", "ncu_report.csv");
    cr_assert_eq(profeed_session_run(s), PROFEED_OK, "%s", profeed_session_error(s));
    const char *json = profeed_session_render(s, "json");
    cr_assert_not_null(json);
    cr_assert_eq(json[0], '{');
    cr_assert_not_null(strstr(json, "\"collated\""));
    cr_assert_eq(profeed_session_render(s, "json"), json, "rendered once, kept");
    cr_assert_null(profeed_session_render(s, "yaml"));
    cr_assert_not_null(strstr(profeed_session_error(s), "yaml"));
    profeed_session_destroy(&s);
}

Test(session, an_unknown_option_or_value_is_named)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "colour", "red"), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "colour"));
    cr_assert_eq(profeed_session_set(s, "top", "-3"), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "top"));
    cr_assert_eq(profeed_session_set(s, "top", "3x"), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_set(s, "min_share", "1.5"), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "min_share"));
    cr_assert_eq(profeed_session_set(s, "format", "yaml"), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_set(s, "with_collated", "maybe"), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_set(s, "top", "3"), PROFEED_OK);
    cr_assert_str_empty(profeed_session_error(s));
    cr_assert_eq(profeed_session_set(s, NULL, "3"), PROFEED_BAD_INPUT);
    profeed_session_destroy(&s);
}

Test(session, an_unknown_profiler_is_bad_input_listing_those_that_work)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "profiler", "rocprof"), PROFEED_OK);
    s_add_fixture(s, "rocprof.000", NCU "full_raw.csv", "results.csv");
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT);
    const char *err = profeed_session_error(s);
    cr_assert_not_null(strstr(err, "rocprof"), "%s", err);
    cr_assert_not_null(strstr(err, "ncu, unitrace, vtune"), "%s", err);
    /* The output says so too, for a caller that only reads the feedback. */
    cr_assert_not_null(profeed_session_output(s));
    cr_assert_not_null(strstr(profeed_session_output(s), "rocprof"));
    profeed_session_destroy(&s);
}

Test(session, sizes_are_checked_before_anything_is_read)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    char small[4] = "abc";
    /* The length is checked before the bytes are touched: a caller's wrong
     * length is refused, not read past. */
    cr_assert_eq(profeed_session_add(s, "ncu.000", "big.csv", small, PROFEED_SESSION_FILE_MAX + 1),
                 PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "big.csv"));
    cr_assert_eq(profeed_session_add(s, "ncu.000", "none.csv", NULL, 10), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_add(s, "ncu.000", "", small, 3), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_add(s, "ncu.000", NULL, small, 3), PROFEED_BAD_INPUT);
    char *long_name = malloc(PROFEED_SESSION_NAME_MAX + 2);
    cr_assert_not_null(long_name);
    memset(long_name, 'a', PROFEED_SESSION_NAME_MAX + 1);
    long_name[PROFEED_SESSION_NAME_MAX + 1] = '\0';
    cr_assert_eq(profeed_session_add(s, "ncu.000", long_name, small, 3), PROFEED_BAD_INPUT);
    free(long_name);
    for (int i = 0; i < PROFEED_SESSION_FILES_MAX; i++)
        cr_assert_eq(profeed_session_add(s, "ncu.000", "f.csv", small, 0), PROFEED_OK);
    cr_assert_eq(profeed_session_add(s, "ncu.000", "f.csv", small, 0), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "files"));
    profeed_session_destroy(&s);
}

Test(session, bad_bytes_are_bad_input_naming_the_pass_and_file)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    const char broken[] = "{\"traceEvents\": [{\"name\": ";
    cr_assert_eq(profeed_session_add(s, "unitrace.001", "python3.7.json", broken, sizeof broken - 1), PROFEED_OK);
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT);
    const char *err = profeed_session_error(s);
    cr_assert_not_null(strstr(err, "pass unitrace.001: python3.7.json"), "%s", err);
    profeed_session_destroy(&s);
}

Test(session, a_session_runs_once)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_result(s), PROFEED_ERROR);
    cr_assert_null(profeed_session_output(s));
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT, "no files");
    cr_assert_not_null(strstr(profeed_session_error(s), "no input files"));
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "already ran"));
    cr_assert_eq(profeed_session_add(s, "ncu.000", "a.csv", "x", 1), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_abi(), 2); /* 2: profeed_session_add_baseline*() */
    profeed_session_destroy(&s);
}

Test(session, a_text_budget_too_small_or_for_json_is_refused)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "max_chars", "100"), PROFEED_OK);
    s_add_fixture(s, "ncu.000", NCU "full_raw.csv", "ncu_report.csv");
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "max chars 100 is too small"), "%s", profeed_session_error(s));
    profeed_session_destroy(&s);

    s = profeed_session_new();
    cr_assert_not_null(s);
    cr_assert_eq(profeed_session_set(s, "max_chars", "500"), PROFEED_OK);
    cr_assert_eq(profeed_session_set(s, "format", "json"), PROFEED_OK);
    s_add_fixture(s, "ncu.000", NCU "full_raw.csv", "ncu_report.csv");
    cr_assert_eq(profeed_session_run(s), PROFEED_BAD_INPUT);
    cr_assert_not_null(strstr(profeed_session_error(s), "never cut"));
    profeed_session_destroy(&s);
}

/* A share the caller sets is kept strictly: no kernel of this capture takes
 * 90% of the time, so none is analyzed, where the default share (and a
 * lenient one) still analyzes the busiest. */
Test(session, a_share_set_is_strict_unless_said)
{
    const char *shares[][2] = {{"0.9", NULL}, {"0.9", "0"}};
    char *outs[2];
    for (int i = 0; i < 2; i++) {
        profeed_session_t *s = profeed_session_new();
        cr_assert_not_null(s);
        cr_assert_eq(profeed_session_set(s, "min_share", shares[i][0]), PROFEED_OK);
        if (shares[i][1])
            cr_assert_eq(profeed_session_set(s, "min_share_strict", shares[i][1]), PROFEED_OK);
        s_add_fixture(s, "ncu.000", NCU "full_raw.csv", "ncu_report.csv");
        cr_assert_eq(profeed_session_run(s), PROFEED_OK, "%s", profeed_session_error(s));
        outs[i] = strdup(profeed_session_output(s));
        profeed_session_destroy(&s);
    }
    cr_assert_null(strstr(outs[0], "\n1. "), "%s", outs[0]);
    cr_assert_not_null(strstr(outs[1], "\n1. "), "%s", outs[1]);
    free(outs[0]);
    free(outs[1]);
}

Test(session, a_baseline_given_to_the_session_is_compared)
{
    profeed_session_t *s = profeed_session_new();
    cr_assert_geq(profeed_session_abi(), 2);
    cr_assert_eq(profeed_session_add_path(s, PF_FIXTURE_DIR "/ncu/h200-v2/capture-2026-12-01/core_raw.csv", 0), PROFEED_OK);
    cr_assert_eq(profeed_session_add_baseline_path(s, PF_FIXTURE_DIR "/ncu/h200-v2/core_raw.csv"), PROFEED_OK);
    cr_assert_eq(profeed_session_set(s, "stop_within", "0.5"), PROFEED_BAD_INPUT);
    cr_assert_eq(profeed_session_set(s, "stop_within", "1.2"), PROFEED_OK);
    cr_assert_eq(profeed_session_run(s), PROFEED_OK, "%s", profeed_session_error(s));
    const char *out = profeed_session_output(s);
    cr_assert(strstr(out, "Change since baseline files " PF_FIXTURE_DIR "/ncu/h200-v2/core_raw.csv: within noise"), "%s", out);
    cr_assert(strstr(out, "\n1. local_array_dyn"), "%s", out);
    profeed_session_destroy(&s);
}
