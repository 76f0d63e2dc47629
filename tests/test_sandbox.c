/* The collector's sandbox (collector/sandbox.h, proc_run's limits): programs
 * off the allowlist are refused, the environment is filtered, and a job that
 * writes too much, spins, forks endlessly or should not be root is stopped or
 * dropped as configured, and says why. */
#define _DEFAULT_SOURCE /* realpath(), symlink() */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "proc_run.h"
#include "sandbox.h"

static sandbox_t *s_sandbox(const char *allow, const char *keep)
{
    collector_config_t config;
    collector_config_default(&config);
    config.allow_programs = allow;
    config.keep_env = keep;
    pf_error_t err;
    sandbox_t *sb = sandbox_new(&config, &err);
    cr_assert_not_null(sb, "%s", err.msg);
    return sb;
}

static proc_result_t s_run(char *const *argv, const proc_limits_t *limits, char *const *keep, int timeout_ms,
                           const char *cwd)
{
    proc_spec_t spec = {.argv = argv, .cwd = cwd, .timeout_ms = timeout_ms, .max_output = 1 << 20,
                        .cancel_fd = -1, .keep_env = keep, .limits = limits};
    proc_result_t r;
    pf_error_t err;
    cr_assert_eq(proc_run(&spec, &r, &err), PF_OK, "%s", err.msg);
    return r;
}

Test(sandbox, only_allowlisted_programs_run)
{
    sandbox_t *sb = s_sandbox("sh, /usr/bin/env", NULL);
    char why[512], run[4096];
    cr_expect(sandbox_allows(sb, "sh", NULL, run, sizeof run, why, sizeof why));
    cr_expect_eq(run[0], '/', "the job runs the checked path, not a name: %s", run);
    cr_expect(sandbox_allows(sb, "/bin/sh", NULL, run, sizeof run, why, sizeof why), "a path to the allowed sh");
    cr_expect(sandbox_allows(sb, "env", NULL, run, sizeof run, why, sizeof why), "a name resolving to an allowed path");
    cr_expect_not(sandbox_allows(sb, "ls", NULL, run, sizeof run, why, sizeof why));
    cr_expect_not_null(strstr(why, "allow-programs"), "%s", why);
    cr_expect_not(sandbox_allows(sb, "no-such-program-here", NULL, run, sizeof run, why, sizeof why));
    cr_expect_not_null(strstr(why, "no such executable"), "%s", why);
    sandbox_destroy(&sb);
    sb = s_sandbox("*", NULL);
    cr_expect(sandbox_allows(sb, "ls", NULL, run, sizeof run, why, sizeof why), "* allows any");
    cr_expect_str_eq(run, "ls", "with * the program runs as named");
    sandbox_destroy(&sb);
}

/* The attacks of issue 15 (defect 7) on `allow-programs okprog`, okprog
 * being a program on PATH: a copy of it elsewhere, a link named okprog to
 * another program, and a link with another name to a file called okprog
 * outside PATH. Only okprog as PATH has it runs, and by its canonical path. */
Test(sandbox, a_bare_name_allows_only_that_program_on_path)
{
    char root[] = "/tmp/profeed-allow-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char bin[64], other[64], link_dir[64], okprog[128], copy[128], fake[128], innocent[128], old_path[8192];
    snprintf(bin, sizeof bin, "%s/bin", root);
    snprintf(other, sizeof other, "%s/other", root);
    cr_assert_eq(mkdir(bin, 0755), 0);
    cr_assert_eq(mkdir(other, 0755), 0);
    snprintf(okprog, sizeof okprog, "%s/okprog", bin);
    snprintf(copy, sizeof copy, "%s/okprog", other);
    snprintf(fake, sizeof fake, "%s/fake/okprog", root);
    snprintf(innocent, sizeof innocent, "%s/innocent", other);
    FILE *f = fopen(okprog, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\necho ok\n", f);
    fclose(f);
    cr_assert_eq(chmod(okprog, 0755), 0);
    f = fopen(copy, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\necho copy\n", f);
    fclose(f);
    cr_assert_eq(chmod(copy, 0755), 0);
    snprintf(link_dir, sizeof link_dir, "%s/fake", root);
    cr_assert_eq(mkdir(link_dir, 0755), 0);
    cr_assert_eq(symlink("/bin/sh", fake), 0, "a link named okprog to another program");
    cr_assert_eq(symlink(copy, innocent), 0, "a link whose target is called okprog");
    const char *path = getenv("PATH");
    snprintf(old_path, sizeof old_path, "%s", path ? path : "/usr/bin:/bin");
    char new_path[8192 + 4096];
    snprintf(new_path, sizeof new_path, "%s:%s", bin, old_path);
    setenv("PATH", new_path, 1);

    sandbox_t *sb = s_sandbox("okprog", NULL);
    char why[512], run[4096], canonical[PATH_MAX];
    cr_assert_not_null(realpath(okprog, canonical));
    cr_expect(sandbox_allows(sb, "okprog", NULL, run, sizeof run, why, sizeof why), "%s", why);
    cr_expect_str_eq(run, canonical, "okprog runs by the path that was checked");
    cr_expect(sandbox_allows(sb, okprog, NULL, run, sizeof run, why, sizeof why), "its own path: %s", why);
    cr_expect_not(sandbox_allows(sb, copy, NULL, run, sizeof run, why, sizeof why), "a file named okprog elsewhere");
    cr_expect_not(sandbox_allows(sb, fake, NULL, run, sizeof run, why, sizeof why), "a link named okprog");
    cr_expect_not(sandbox_allows(sb, innocent, NULL, run, sizeof run, why, sizeof why),
                  "a link to a file named okprog");
    cr_expect_not(sandbox_allows(sb, "./okprog", other, run, sizeof run, why, sizeof why),
                  "./okprog from the job's folder is the copy");
    cr_expect_not_null(strstr(why, "allow-programs"), "%s", why);
    sandbox_destroy(&sb);

    setenv("PATH", old_path, 1);
    unlink(innocent);
    unlink(fake);
    unlink(copy);
    unlink(okprog);
    rmdir(link_dir);
    rmdir(other);
    rmdir(bin);
    rmdir(root);
}

Test(sandbox, a_star_in_a_list_is_refused)
{
    collector_config_t config;
    collector_config_default(&config);
    config.allow_programs = "sh,*";
    pf_error_t err;
    cr_expect_null(sandbox_new(&config, &err));
    cr_expect_not_null(strstr(err.msg, "goes alone"), "%s", err.msg);
}

Test(sandbox, jobs_see_only_the_kept_environment)
{
    setenv("PROFEED_TEST_SECRET", "hunter2", 1);
    setenv("LC_PROFEED_TEST", "kept", 1);
    char *argv[] = {"sh", "-c", "echo \"${PROFEED_TEST_SECRET:-none} ${LC_PROFEED_TEST:-gone} ${PATH:+path}\"", NULL};
    char *keep[] = {"PATH", "LC_*", NULL};
    proc_result_t r = s_run(argv, NULL, keep, 5000, NULL);
    cr_expect_str_eq(r.output, "none kept path\n");
    free(r.output);
    r = s_run(argv, NULL, NULL, 5000, NULL);
    cr_expect_str_eq(r.output, "hunter2 kept path\n", "no filter: everything passes");
    free(r.output);
}

Test(sandbox, a_job_that_fills_the_disk_is_stopped_at_its_file_limit)
{
    char dir[] = "/tmp/profeed-sandbox.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    proc_limits_t limits = {.file_bytes = 1 << 20};
    char *argv[] = {"sh", "-c", "exec head -c 50000000 /dev/zero > big", NULL};
    proc_result_t r = s_run(argv, &limits, NULL, 20000, dir);
    cr_expect_str_eq(r.limit_hit ? r.limit_hit : "", "its file size limit");
    cr_expect_eq(r.exit_status, 128 + SIGXFSZ);
    char path[64];
    snprintf(path, sizeof path, "%s/big", dir);
    struct stat st;
    cr_expect(stat(path, &st) == 0 && st.st_size <= (1 << 20), "the file stopped at the limit");
    unlink(path);
    rmdir(dir);
    free(r.output);
}

Test(sandbox, a_job_that_spins_is_stopped_at_its_cpu_limit, .timeout = 60)
{
    proc_limits_t limits = {.cpu_s = 1};
    char *argv[] = {"sh", "-c", "while :; do :; done", NULL};
    proc_result_t r = s_run(argv, &limits, NULL, 30000, NULL);
    cr_expect_not(r.timed_out, "the CPU limit, not the timeout, stopped it");
    cr_expect_str_eq(r.limit_hit ? r.limit_hit : "", "its CPU time limit");
    free(r.output);
}

/* Endless forking: the process limit (for other users than root) holds the
 * count down, and the timeout's process-group kill ends all of them. */
Test(sandbox, a_job_that_forks_endlessly_is_stopped_with_all_its_processes, .timeout = 60)
{
    proc_limits_t limits = {.procs = 512};
    /* The sleeps' length carries this run's process ID, so that another run
     * of the suite on the same machine (a CI beside a developer's ctest)
     * cannot be mistaken for what this job left behind. */
    char job[64], check[96];
    snprintf(job, sizeof job, "while :; do sleep 31.%d & done", (int)getpid());
    snprintf(check, sizeof check, "pgrep -f 'sleep 31[.]%d$' >/dev/null", (int)getpid());
    char *argv[] = {"sh", "-c", job, NULL};
    proc_result_t r = s_run(argv, &limits, NULL, 800, NULL);
    cr_expect(r.timed_out);
    free(r.output);
    /* The group is killed at once, but a loaded machine may take a while to
     * reap thousands of processes: wait for them up to 10 s. The bracket in
     * the pattern keeps pgrep's own shell, whose command line holds it, from
     * matching. */
    int left = 0;
    for (int i = 0; i < 100 && (left = system(check) == 0); i++) {
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    cr_expect(!left, "no process of the job is left");
}

Test(sandbox, a_root_collector_runs_jobs_as_its_run_as_user)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to change user");
    collector_config_t config;
    collector_config_default(&config);
    config.run_as = "nobody";
    pf_error_t err;
    sandbox_t *sb = sandbox_new(&config, &err);
    cr_assert_not_null(sb, "%s", err.msg);
    char *argv[] = {"id", "-un", NULL};
    proc_spec_t spec = {.argv = argv, .timeout_ms = 5000, .max_output = 4096, .cancel_fd = -1};
    sandbox_apply(sb, &spec);
    proc_result_t r;
    cr_assert_eq(proc_run(&spec, &r, &err), PF_OK, "%s", err.msg);
    cr_expect_str_eq(r.output, "nobody\n");
    free(r.output);
    sandbox_destroy(&sb);
    config.run_as = "no-such-user-here";
    cr_expect_null(sandbox_new(&config, &err));
    cr_expect_not_null(strstr(err.msg, "no such user"), "%s", err.msg);
}
