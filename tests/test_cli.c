/* The profeed command as a user runs it: exit codes, formats, stdin, help. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    int rc = s_run("f=$(mktemp \"${TMPDIR:-/tmp}/pf_cli_bad.XXXXXX\") && printf '\"a\",\"b\"\\n' > $f && " PROFEED
                   " analyze $f 2>&1; rc=$?; rm -f $f; exit $rc",
                   &out);
    cr_expect_eq(rc, 2);
    cr_expect_not_null(strstr(out, "pf_cli_bad."), "%s", out);
    cr_expect_not_null(strstr(out, ": line 1"), "%s", out);
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

/* Issue 16: every exit code is the documented one, and says why. */

Test(cli, a_profiler_that_did_not_write_the_files_is_bad_input)
{
    char *out;
    int rc = s_run(PROFEED " analyze --profiler unitrace " H200 "full_raw.csv 2>&1", &out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "not unitrace output"), "%s", out);
    free(out);
}

Test(cli, a_capture_cut_at_a_field_boundary_is_bad_input)
{
    /* The first 13 lines whole, then the last launch's row up to a field's
     * end: every field read is whole, the row is not. */
    char *out;
    int rc = s_run("f=$(mktemp \"${TMPDIR:-/tmp}/pf_cli_cut.XXXXXX\") && head -13 " H200 "raw_metrics.csv > $f && "
                   "sed -n 14p " H200 "raw_metrics.csv | cut -d, -f1-150 | tr -d '\\n' >> $f && " PROFEED
                   " analyze $f 2>&1; rc=$?; rm -f $f; exit $rc",
                   &out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "cut short"), "%s", out);
    free(out);
}

Test(cli, kernelfoundry_vtune_json_is_detected)
{
    char *out;
    int rc = s_run(PROFEED " analyze " PF_FIXTURE_DIR "/intel/vtune/vtune_counters.json 2>&1", &out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect_not_null(strstr(out, "(Intel VTune"), "%s", out);
    cr_expect_not_null(strstr(out, "gemm_fp32_naive"), "%s", out);
    free(out);
}

/* unitrace writes a folder of files, one a process: the folder stands for
 * them, read in name order, hidden files and subfolders left out; a folder
 * with no file is bad input that names it. */
Test(cli, a_folder_stands_for_the_files_in_it)
{
    char *folder, *files;
    cr_expect_eq(s_run(PROFEED " analyze --format json " PF_FIXTURE_DIR "/intel/unitrace_ocl_sampling_slm", &folder),
                 0);
    cr_expect_eq(s_run(PROFEED " analyze --format json " PF_FIXTURE_DIR "/intel/unitrace_ocl_sampling_slm/*", &files),
                 0);
    cr_expect_str_eq(folder, files);
    cr_expect_not_null(strstr(folder, "slm_tile_reduce"), "%s", folder);
    free(folder);
    free(files);
    char *out;
    int rc = s_run("d=$(mktemp -d \"${TMPDIR:-/tmp}/pf_cli_dir.XXXXXX\") && mkdir $d/sub && touch $d/.hidden && "
                   PROFEED " analyze $d 2>&1; rc=$?; rm -rf $d; exit $rc", &out);
    cr_expect_eq(rc, 2, "%s", out);
    cr_expect_not_null(strstr(out, "a folder with no file in it"), "%s", out);
    free(out);
}

Test(cli, endpoints_that_are_not_endpoints_say_what_is_wrong)
{
    static const struct {
        const char *endpoint, *says;
    } cases[] = {
        {"localhost:5555", "has no transport: write tcp://localhost:5555"},
        {"http://127.0.0.1:5555", "speaks ZeroMQ, not HTTP: write tcp://127.0.0.1:5555"},
        {"tcp://127.0.0.1", "tcp://HOST:PORT"},
        {"tcp://127.0.0.1:0", "port must be a number 1..65535"},
        {"tcp://no-such-host.invalid:5555", "cannot resolve host \"no-such-host.invalid\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int status = 0; status < 2; status++) {
            char cmd[512], *out;
            snprintf(cmd, sizeof cmd, "%s %s --endpoint '%s' %s 2>&1", PROFEED, status ? "status" : "submit",
                     cases[i].endpoint, status ? "" : "--language cuda -- kernels");
            int rc = s_run(cmd, &out);
            cr_expect_eq(rc, 2, "%s: %s", cmd, out);
            cr_expect_not_null(strstr(out, cases[i].says), "%s: %s", cmd, out);
            cr_expect_null(strstr(out, "leaves this machine"), "%s: %s", cmd, out);
            free(out);
        }
    }
}

/* Runs argv, sends SIGINT after `after_ms`, returns the exit status (-1 when
 * it did not exit by itself) and how long it ran. */
static int s_interrupt(char *const argv[], int after_ms, double *seconds)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    struct timespec pause = {after_ms / 1000, (long) (after_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(cli, ctrl_c_of_submit_exits_130)
{
    /* No broker behind the ipc path: the wait is still on when Ctrl-C comes. */
    char endpoint[128];
    snprintf(endpoint, sizeof endpoint, "ipc:///tmp/pf_cli_nobroker_%ld", (long) getpid());
    char *argv[] = {PROFEED, "submit", "--endpoint", endpoint, "--language", "cuda", "--", "kernels", NULL};
    double seconds = 0;
    cr_expect_eq(s_interrupt(argv, 500, &seconds), 130);
    cr_expect_lt(seconds, 2.5, "it stopped at the signal, not at the end of its wait (%.1f s)", seconds);
}

Test(cli, help_texts_say_what_each_exit_code_means)
{
    static const char *const commands[] = {" analyze --help", " submit --help", " status --help",
                                           " keygen --help", " --help"};
    static const char *const codes[][6] = {
        {"0 ", "1 ", "2 ", "3 ", NULL},
        {"0 ", "1 ", "2 ", "3 ", "4 ", "5 "},
        {"0 ", "2 ", "4 ", NULL},
        {"0 ", "1 ", "2 ", NULL},
        {"0 ", "2 ", NULL},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        char cmd[256], *out;
        snprintf(cmd, sizeof cmd, "%s%s", PROFEED, commands[i]);
        cr_expect_eq(s_run(cmd, &out), 0, "%s", cmd);
        const char *status = strstr(out, "exit status");
        cr_assert_not_null(status, "%s: %s", cmd, out);
        for (size_t c = 0; c < 6 && codes[i][c]; c++)
            cr_expect_not_null(strstr(status, codes[i][c]), "%s: no exit code %s explained", cmd, codes[i][c]);
        if (i == 1)
            cr_expect_not_null(strstr(status, "130"), "submit --help explains 130");
        free(out);
    }
}

Test(cli, an_explicit_min_share_is_kept_even_when_no_kernel_reaches_it)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " analyze --min-share 100 " H200 "full_raw.csv", &out), 0);
    cr_expect_null(strstr(out, "\n1. "), "no kernel takes 100%%: %s", out);
    cr_expect_not_null(strstr(out, "below the 100% threshold"), "%s", out);
    free(out);
    /* The default still analyzes the busiest kernel of many small ones. */
    cr_expect_eq(s_run(PROFEED " analyze " H200 "full_raw.csv", &out), 0);
    cr_expect_not_null(strstr(out, "\n1. atomic_hist"), "%s", out);
    free(out);
}

Test(cli, a_text_budget_too_small_or_for_json_is_refused)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " analyze --max-chars 1 " H200 "full_raw.csv 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "too small: a feedback needs at least 200"), "%s", out);
    free(out);
    cr_expect_eq(s_run(PROFEED " analyze --format json --max-chars 500 " H200 "full_raw.csv 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "JSON and Markdown are never cut"), "%s", out);
    free(out);
    cr_expect_eq(s_run(PROFEED " submit --local --json --max-chars 500 --language cuda -- kernels 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "JSON and Markdown are never cut"), "%s", out);
    free(out);
    cr_expect_eq(s_run(PROFEED " submit --local --max-chars 100 --language cuda -- kernels 2>&1", &out), 2);
    free(out);
}

Test(cli, metric_sampling_says_samples_not_a_question_mark)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " analyze " PF_FIXTURE_DIR "/intel/unitrace_ocl_sampling/trace.metrics.52001 "
                       PF_FIXTURE_DIR "/intel/unitrace_ocl_sampling/trace.metrics.52002 " PF_FIXTURE_DIR
                       "/intel/unitrace_ocl_sampling/trace.metrics.52003",
                       &out),
                 0);
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
    cr_expect_null(strstr(out, "?"), "%s", out);
    cr_expect_not_null(strstr(out, "13 samples"), "%s", out);
    free(out);
}

Test(cli, a_reference_of_the_same_time_is_neither_faster_nor_slower)
{
    char *out;
    /* 27.18 ms against 27.17 ms: 1.00x either way. */
    cr_expect_eq(s_run(PROFEED " analyze --reference " H200 "raw_metrics.csv " H200 "full_raw.csv", &out), 0);
    cr_expect_not_null(strstr(out, "1.00x"), "%s", out);
    cr_expect_null(strstr(out, "(slower)"), "%s", out);
    cr_expect_null(strstr(out, "(faster)"), "%s", out);
    free(out);
}

Test(cli, replayed_feedback_says_so_in_its_first_line)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " submit --local --language cuda -- kernels all 2>/dev/null", &out), 0);
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
    cr_expect_not_null(strstr(out, "REPLAYED"), "%s", out);
    free(out);
}

Test(cli, an_unknown_plan_is_refused_under_replay_too)
{
    char *out;
    cr_expect_eq(s_run(PROFEED " submit --local --language cuda --plan bogus -- kernels all 2>&1", &out), 2);
    cr_expect_not_null(strstr(out, "pass plan \"bogus\" does not exist for ncu"), "%s", out);
    free(out);
}
