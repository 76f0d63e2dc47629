/* The collector's own decisions, without a broker: a job's folder name,
 * whether a pass is tried again, and what discovery finds on a host whose
 * PATH holds stand-in profilers (collector/job.h, collector/collector.h). */
#include "job.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static void s_mkdtemp(char *dir, size_t cap, const char *what)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/profeed-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", what);
    cr_assert_not_null(mkdtemp(dir));
}

/* ---- the job folder ------------------------------------------------------ */

Test(collector, a_job_folder_is_named_for_the_job_and_its_attempt_below_the_root)
{
    char root[4096];
    s_mkdtemp(root, sizeof root, "jobs");
    char dir[4096];
    cr_assert(job_dir_template(dir, sizeof dir, root, "3f2b8c1e-job", 2));
    char want[4200];
    snprintf(want, sizeof want, "%s/profeed-3f2b8c1e-job-a2-XXXXXX", root);
    cr_assert_str_eq(dir, want);
    cr_assert_not_null(mkdtemp(dir), "the template is mkdtemp's");
    cr_expect_eq(strncmp(dir, want, strlen(want) - 6), 0, "only the Xs change: %s", dir);
    struct stat st;
    cr_expect_eq(stat(dir, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0700, "private to the collector's user");
    /* Another attempt of the same job gets a folder of its own. */
    char again[4096];
    cr_assert(job_dir_template(again, sizeof again, root, "3f2b8c1e-job", 2));
    cr_assert_not_null(mkdtemp(again));
    cr_expect_str_neq(again, dir);
    test_rm_tree(root);
}

Test(collector, a_job_folder_that_would_not_fit_is_refused_not_cut)
{
    char root[600];
    memset(root, 'r', sizeof root - 1);
    root[0] = '/';
    root[sizeof root - 1] = '\0';
    char dir[512];
    cr_expect_not(job_dir_template(dir, sizeof dir, root, "job", 1), "a cut template would name another folder");
    char exact[64];
    /* "/t/profeed-j-a1-XXXXXX" is 22 characters: it fits 23, not 22. */
    cr_expect(job_dir_template(exact, 23, "/t", "j", 1));
    cr_expect_not(job_dir_template(exact, 22, "/t", "j", 1));
}

/* ---- pass retries -------------------------------------------------------- */

Test(collector, only_a_transient_failure_is_tried_again_while_attempts_are_left)
{
    cr_expect(job_pass_retries(PASS_RESULT_TRANSIENT, 1, 3));
    cr_expect(job_pass_retries(PASS_RESULT_TRANSIENT, 2, 3));
    cr_expect_not(job_pass_retries(PASS_RESULT_TRANSIENT, 3, 3), "the last attempt is the last");
    cr_expect_not(job_pass_retries(PASS_RESULT_TRANSIENT, 1, 1), "attempts 1: never again");
    cr_expect_not(job_pass_retries(PASS_RESULT_OK, 1, 3));
    cr_expect_not(job_pass_retries(PASS_RESULT_FAILED, 1, 3), "the profiler said why: it would say it again");
    cr_expect_not(job_pass_retries(PASS_RESULT_PERMISSION, 1, 3), "no counters now, none on a retry");
}

static char *s_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PF_FIXTURE_DIR, name);
    uint8_t *data = NULL;
    char why[256];
    cr_assert(job_read_file(path, 1 << 20, &data, len, why, sizeof why), "%s", why);
    return (char *) data;
}

/* The decision on real ncu output: a program that crashed under ncu is not
 * run again (ncu said ==ERROR==), a profiler killed without a word is. */
Test(collector, real_ncu_failures_are_judged_then_retried_or_not)
{
    size_t len;
    char *crash = s_fixture("ncu/h200/err_crash_stdout.txt", &len);
    pass_result_t v = pass_plan_judge(9, false, crash, len, "");
    cr_expect_eq(v, PASS_RESULT_FAILED);
    cr_expect_not(job_pass_retries(v, 1, 3));
    free(crash);
    v = pass_plan_judge(137, false, "==PROF== Connected to process 4242\n", 35, "");
    cr_expect_eq(v, PASS_RESULT_TRANSIENT);
    cr_expect(job_pass_retries(v, 1, 3));
    v = pass_plan_judge(0, true, "", 0, "");
    cr_expect(job_pass_retries(v, 1, 2), "a timeout is worth another attempt");
}

Test(collector, the_wait_between_attempts_doubles_until_it_reaches_ten_minutes)
{
    int wait = 250;
    int seen[16];
    for (size_t i = 0; i < 16; i++) {
        seen[i] = wait;
        wait = job_backoff_next(wait);
    }
    cr_expect_eq(seen[0], 250);
    cr_expect_eq(seen[1], 500);
    cr_expect_eq(seen[2], 1000);
    cr_expect_eq(seen[11], 512000);
    cr_expect_eq(seen[12], 1024000, "doubled once more from under ten minutes");
    cr_expect_eq(seen[13], 1024000, "then it stays");
    cr_expect_eq(seen[15], 1024000);
    cr_expect_eq(job_backoff_next(0), 0, "no backoff configured stays none");
}

/* ---- files a pass left --------------------------------------------------- */

Test(collector, a_pass_file_is_read_whole_within_its_bound_or_refused_with_the_reason)
{
    char dir[4096], path[4200];
    s_mkdtemp(dir, sizeof dir, "pass");
    snprintf(path, sizeof path, "%s/ncu.000.csv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (int i = 0; i < 100; i++)
        fputc('a' + i % 26, f);
    fclose(f);
    uint8_t *data = NULL;
    size_t len = 0;
    char why[256];
    cr_assert(job_read_file(path, 100, &data, &len, why, sizeof why), "%s", why);
    cr_expect_eq(len, 100);
    cr_expect_eq(memcmp(data, "abcdefghij", 10), 0);
    free(data);
    data = NULL;
    cr_expect_not(job_read_file(path, 99, &data, &len, why, sizeof why), "one byte past the bound");
    cr_expect(strstr(why, path), "the reason names the file: %s", why);
    cr_expect_null(data);
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/absent.csv", dir);
    char small[24];
    cr_expect_not(job_read_file(missing, 100, &data, &len, small, sizeof small));
    cr_expect_eq(strlen(small), sizeof small - 1, "a reason cut to its buffer, terminated");
    cr_expect_str_eq(job_basename(path), "ncu.000.csv");
    cr_expect_str_eq(job_basename("trace.metrics.41001"), "trace.metrics.41001");
    cr_expect_str_eq(job_basename("dir/"), "");
    test_rm_tree(dir);
}

/* ---- discovery ----------------------------------------------------------- */

/* A folder for PATH with stand-ins for the named tools: "ncu" is
 * tests/fake_ncu.sh (it answers --version as ncu does), others exit 0. */
static void s_path_with(char *dir, size_t cap, const char *const *tools, size_t n)
{
    s_mkdtemp(dir, cap, "path");
    for (size_t i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, tools[i]);
        if (strcmp(tools[i], "ncu") == 0) {
            cr_assert_eq(symlink(PF_FIXTURE_DIR "/../fake_ncu.sh", path), 0, "%s", strerror(errno));
            continue;
        }
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("#!/bin/sh\nexit 0\n", f);
        fclose(f);
        cr_assert_eq(chmod(path, 0755), 0);
    }
    cr_assert_eq(setenv("PATH", dir, 1), 0);
}

static int s_discover(collector_info_t *info, collector_config_t *config, const char *gpu)
{
    collector_config_default(config);
    config->gpu = gpu;
    config->python = "/nonexistent/python3"; /* kernel jobs are not this test's */
    memset(info, 0, sizeof *info);
    return discover_host(info, config);
}

Test(collector, discovery_offers_the_profilers_on_path_and_asks_the_version_the_table_says)
{
    char dir[4096];
    const char *tools[] = {"ncu", "unitrace"};
    s_path_with(dir, sizeof dir, tools, 2);
    collector_config_t config;
    collector_info_t info;
    cr_assert_eq(s_discover(&info, &config, "NVIDIA H200:sm_90:2"), 0);
    cr_assert_eq(info.profiler_count, 2);
    cr_expect_eq(info.profilers[0], PROFEED__PROFILER__PROFILER_NCU);
    cr_expect_eq(info.profilers[1], PROFEED__PROFILER__PROFILER_UNITRACE);
    char want[4200];
    snprintf(want, sizeof want, "%s/ncu", dir);
    cr_expect_str_eq(discover_profiler_path(&info, PROFEED__PROFILER__PROFILER_NCU), want);
    cr_expect_null(discover_profiler_path(&info, PROFEED__PROFILER__PROFILER_VTUNE), "vtune is not on PATH");
    cr_expect_str_eq(info.profiler_version, "0.0", "from fake_ncu.sh's \"Version 0.0 (test stand-in)\"");
    cr_assert_eq(info.gpu_count, 1);
    cr_expect_str_eq(info.gpus[0].name, "NVIDIA H200");
    cr_expect_str_eq(info.gpus[0].arch, "sm_90");
    cr_expect_eq(info.gpus[0].count, 2);
    cr_expect_str_eq(info.python_path, "", "no python: kernel jobs refused, not a failure");
    test_rm_tree(dir);
}

Test(collector, discovery_without_a_version_probe_leaves_the_version_empty)
{
    char dir[4096];
    const char *tools[] = {"vtune"};
    s_path_with(dir, sizeof dir, tools, 1);
    collector_config_t config;
    collector_info_t info;
    cr_assert_eq(s_discover(&info, &config, "Intel Arc B580:xe2"), 0);
    cr_assert_eq(info.profiler_count, 1);
    cr_expect_eq(info.profilers[0], PROFEED__PROFILER__PROFILER_VTUNE);
    cr_expect_str_eq(info.profiler_version, "", "the table gives vtune no version flag");
    test_rm_tree(dir);
}

Test(collector, discovery_refuses_a_host_without_profilers_and_a_bad_gpu_spec)
{
    char dir[4096];
    s_path_with(dir, sizeof dir, NULL, 0);
    collector_config_t config;
    collector_info_t info;
    cr_expect_eq(s_discover(&info, &config, "NVIDIA H200:sm_90"), -1, "nothing on PATH: nothing to offer");
    test_rm_tree(dir);
    const char *tools[] = {"ncu"};
    s_path_with(dir, sizeof dir, tools, 1);
    const char *bad[] = {"NVIDIA H200", "H200:sm_90:0", "H200:sm_90:1025", "H200:sm_90:two", "H200:sm_90:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(s_discover(&info, &config, bad[i]), -1, "--gpu %s", bad[i]);
    cr_expect_eq(s_discover(&info, &config, "H200:sm_90:1024"), 0, "the largest count");
    test_rm_tree(dir);
}

/* `profeed submit --local` profiles for real only where a profiler is on
 * PATH for GPUs discovery can find (NVIDIA's today), else it replays. */
Test(collector, a_host_can_profile_with_a_profiler_for_a_gpu_vendor_discovery_knows)
{
    char dir[4096];
    const char *nvidia[] = {"ncu"};
    s_path_with(dir, sizeof dir, nvidia, 1);
    cr_expect(discover_can_profile());
    test_rm_tree(dir);
    const char *intel[] = {"unitrace", "vtune"};
    s_path_with(dir, sizeof dir, intel, 2);
    cr_expect_not(discover_can_profile(), "no Intel GPU probe yet: replay");
    test_rm_tree(dir);
    s_path_with(dir, sizeof dir, NULL, 0);
    cr_expect_not(discover_can_profile());
    test_rm_tree(dir);
}
