/* The profeed command as a user runs it: exit codes, formats, stdin, help. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#define PROFEED PF_BINARY_DIR "/client/profeed"
#define H200 PF_FIXTURE_DIR "/ncu/h200/"

/* Runs a shell command line, returns its exit status and stdout (caller frees). */
static int s_run(const char *cmdline, char **out)
{
    FILE *p = popen(cmdline, "r");
    cr_assert_not_null(p, "cannot run %s", cmdline);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    int status = pclose(p);
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(cli, analyze_prints_feedback_and_exits_zero)
{
    char *out;
    int rc = s_run(PROFEED " analyze " H200 "full_raw.csv " H200 "full_details.csv", &out);
    cr_expect_eq(rc, 0);
    cr_expect_not_null(strstr(out, "atomic_hist"));
    cr_expect_not_null(strstr(out, "Action:"));
    free(out);
}

Test(cli, json_format_is_parseable_and_collated_data_is_optional)
{
    char *out;
    int rc = s_run(PROFEED " analyze --format json --collated --min-share 0 " H200 "raw_metrics.csv", &out);
    cr_expect_eq(rc, 0);
    json_error_t error;
    json_t *root = json_loads(out, 0, &error);
    cr_assert_not_null(root, "%s", error.text);
    cr_expect_eq(json_array_size(json_object_get(root, "kernels")), 9);
    cr_expect_eq(json_array_size(json_object_get(json_object_get(root, "collated"), "launches")), 9);
    json_decref(root);
    free(out);
}

Test(cli, stdin_is_read_with_a_dash)
{
    char *out;
    int rc = s_run("cat " H200 "raw_metrics_mixed_stdout.csv | " PROFEED " analyze --format markdown -", &out);
    cr_expect_eq(rc, 0);
    cr_expect_not_null(strstr(out, "# profeed feedback"));
    free(out);
}

Test(cli, bad_input_exits_two_and_names_the_file)
{
    char *out;
    int rc = s_run("printf '\"a\",\"b\"\\n' > /tmp/profeed_cli_bad.csv; " PROFEED
                   " analyze /tmp/profeed_cli_bad.csv 2>&1",
                   &out);
    cr_expect_eq(rc, 2);
    cr_expect_not_null(strstr(out, "/tmp/profeed_cli_bad.csv: line 1"), "%s", out);
    free(out);
    rc = s_run(PROFEED " analyze /nonexistent/file.csv 2>&1", &out);
    cr_expect_eq(rc, 2);
    cr_expect_not_null(strstr(out, "cannot open"), "%s", out);
    free(out);
}

Test(cli, profiler_error_exits_three_and_quotes_it)
{
    char *out;
    int rc = s_run(PROFEED " analyze --format json " H200 "err_crash_stdout.txt 2>/dev/null", &out);
    cr_expect_eq(rc, 3);
    cr_expect_not_null(strstr(out, "profiler_error"));
    cr_expect_not_null(strstr(out, "LaunchFailed"));
    free(out);
}

Test(cli, usage_errors_exit_two_and_help_exits_zero)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " analyze --format yaml x 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "--format must be"));
    free(out);
    cr_expect_eq(s_run(PROFEED " analyze --top -3 x 2>&1", &out), 2);
    free(out);
    cr_expect_eq(s_run(PROFEED " analyze 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "no input files"));
    free(out);
    cr_expect_eq(s_run(PROFEED " frobnicate 2>&1", &out), 2);
    free(out);
    cr_expect_eq(s_run(PROFEED " analyze --help", &out), 0);
    cr_expect_not_null(strstr(out, "exit status"));
    free(out);
}

Test(cli, top_and_max_chars_bound_the_output)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " analyze --top 2 " H200 "full_raw.csv", &out), 0);
    cr_expect_not_null(strstr(out, "\n2. "));
    cr_expect_null(strstr(out, "\n3. "));
    free(out);
    cr_expect_eq(s_run(PROFEED " analyze --max-chars 800 " H200 "full_raw.csv", &out), 0);
    cr_expect_leq(strlen(out), 800);
    free(out);
}
