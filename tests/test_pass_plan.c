/* pass_plan: the profiler command lines of every plan, built without a GPU,
 * and how a finished pass is judged (retry, permission, failure). */
#include "pass_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "ncu_columns.h"

static char *s_command[] = {"./kernels", "all", NULL};

static pass_plan_input_t s_input(Profeed__Profiler profiler, const char *path)
{
    pass_plan_input_t in = {
        .language = PROFEED__LANGUAGE__LANGUAGE_CUDA,
        .profiler = profiler,
        .profiler_path = path,
        .dir = "/jobs/j1",
        .command = s_command,
        .command_len = 2,
    };
    return in;
}

/* The step's argv joined with spaces, for readable assertions. */
static void s_join(const pass_step_t *step, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (char **a = step->argv; *a && used < cap; a++) {
        int n = snprintf(out + used, cap - used, "%s%s", used ? " " : "", *a);
        cr_assert(n > 0 && (size_t) n < cap - used, "argv longer than the test buffer");
        used += (size_t) n;
    }
}

static size_t s_index(char **argv, const char *arg)
{
    for (size_t i = 0; argv[i]; i++) {
        if (strcmp(argv[i], arg) == 0)
            return i;
    }
    return (size_t) -1;
}

/* A plan of one named ncu pass, built for the profiler at `path`; the spec is
 * only read while the plan is built. */
static pass_plan_t *s_named_plan(const char *path, const char *name, bool sudo)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, path);
    Profeed__PassSpec spec, *specs[1] = {&spec};
    profeed__pass_spec__init(&spec);
    spec.name = (char *) name;
    in.passes = specs;
    in.n_passes = 1;
    in.sudo = sudo;
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    return plan;
}

Test(pass_plan, default_ncu_plan_is_core_metrics_and_the_memory_section_in_one_csv_pass_with_clocks_untouched)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, "/usr/local/cuda/bin/ncu");
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_str_eq(pass_plan_name(plan), "core");
    cr_assert_eq(pass_plan_count(plan), 1);
    const pass_plan_pass_t *p = pass_plan_pass(plan, 0);
    cr_assert_str_eq(p->key, "ncu.000");
    cr_assert_str_eq(p->dir, "/jobs/j1/ncu.000");
    cr_assert_eq(p->step_count, 1);
    char line[8192];
    s_join(&p->steps[0], line, sizeof line);
    const char *head = "/usr/local/cuda/bin/ncu --csv --page raw --log-file /jobs/j1/ncu.000/ncu.000.csv "
                       "--target-processes all --clock-control none --metrics gpu__time_duration.sum,";
    cr_assert(strncmp(line, head, strlen(head)) == 0, "%s", line);
    /* The program comes last, as ncu reads it: no "--" (ncu would take it as the program). */
    size_t n = 0;
    while (p->steps[0].argv[n])
        n++;
    cr_assert_str_eq(p->steps[0].argv[n - 2], "./kernels");
    cr_assert_str_eq(p->steps[0].argv[n - 1], "all");
    /* The spill counters come only with this section (ncu drops them from --metrics). */
    size_t section = s_index(p->steps[0].argv, "--section");
    cr_assert_neq(section, (size_t) -1, "%s", line);
    cr_assert_str_eq(p->steps[0].argv[section + 1], "MemoryWorkloadAnalysis");
    cr_assert_gt(section, s_index(p->steps[0].argv, "--metrics"));
    cr_assert_eq(s_index(p->steps[0].argv, "sudo"), (size_t) -1, "sudo is never the default");
    cr_assert(p->steps[0].profiles);
    cr_assert_eq(p->metric_count, 78, "the measured core list (docs/ncu.md)");
    cr_assert_str_eq(p->metrics[0], "gpu__time_duration.sum");
    for (size_t i = 0; i < p->metric_count; i++) /* 3 replay passes of its own; ncu_summary.c rebuilds it */
        cr_assert(strncmp(p->metrics[i], "sm__throughput.", 15) != 0, "%s", p->metrics[i]);
    cr_assert_str_eq(p->metrics[77], "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained");
    char *const *env = pass_plan_env(plan);
    cr_assert_str_eq(env[0], "LC_ALL=C");
    cr_assert_null(env[1]);
    pass_plan_destroy(&plan);
    cr_assert_null(plan);
}

Test(pass_plan, core_metrics_are_all_columns_of_the_h200_captures_of_that_plan)
{
    /* The plan's list is the one deploy/gpu-corpus.sh captured on the H200
     * with the section (core_mwa_raw.csv: kernels.cu and corpus v2 captured
     * again on 2026-12-04, twenty-first session, when L2's per-lane atomic
     * request counts joined the list; a list that loses a name keeps being
     * covered by these): every name came back as a column (ncu drops unknown
     * names silently), and the section brought the spill counter the analysis
     * reads. */
    static const char *const files[] = {"/ncu/h200/capture-2026-12-04b/core_mwa_raw.csv",
                                        "/ncu/h200-v2/capture-2026-12-04b/core_mwa_raw.csv"};
    const char *const *metrics = pass_plan_metrics(PROFEED__PROFILER__PROFILER_NCU, "core");
    size_t n = 0;
    while (metrics[n])
        n++;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s", PF_FIXTURE_DIR, files[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        static char buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        bool missing[128];
        cr_assert(n <= sizeof missing / sizeof missing[0]);
        cr_assert_eq(ncu_columns_missing(buf, len, metrics, n, missing), 0, "%s", path);
        const char *spill[] = {"sass__inst_executed_register_spilling"};
        bool spill_missing[1];
        cr_assert_eq(ncu_columns_missing(buf, len, spill, 1, spill_missing), 0, "%s", path);
    }
    cr_assert_null(pass_plan_metrics(PROFEED__PROFILER__PROFILER_NCU, "full"));
}

/* The full plan adds to --set full the core counters no section of it has
 * (useful lanes per pipe): each is in the core list, and each came back as a
 * column of the H200 capture made with the plan (corpus v9, full_raw.csv). */
Test(pass_plan, full_adds_core_counters_the_full_set_lacks_and_ncu_returns_them)
{
    pass_plan_t *plan = s_named_plan("/opt/ncu", "full", false);
    char **argv = pass_plan_pass(plan, 0)->steps[0].argv;
    size_t at = s_index(argv, "--metrics");
    cr_assert_neq(at, (size_t) -1);
    cr_assert_eq(s_index(argv, "--set") + 2, at, "--set full, then its added metrics");
    char list[2048];
    snprintf(list, sizeof list, "%s", argv[at + 1]);
    const char *names[32];
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t && n < 32; t = strtok_r(NULL, ",", &save))
        names[n++] = t;
    cr_assert_eq(n, 8);
    const char *const *core = pass_plan_metrics(PROFEED__PROFILER__PROFILER_NCU, "core");
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; core[j] && !found; j++)
            found = strcmp(core[j], names[i]) == 0;
        cr_assert(found, "%s is not in the core list", names[i]);
    }
    FILE *f = fopen(PF_FIXTURE_DIR "/ncu/h200-v9/capture-2026-12-02/full_raw.csv", "rb");
    cr_assert_not_null(f);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    bool missing[32];
    cr_assert_eq(ncu_columns_missing(buf, len, names, n, missing), 0);
    pass_plan_destroy(&plan);
}

Test(pass_plan, unknown_metric_names_are_reported_missing_against_the_returned_header)
{
    FILE *f = fopen(PF_FIXTURE_DIR "/ncu/h200/err_badmetric_stdout.txt", "rb");
    cr_assert_not_null(f);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const char *asked[] = {"not__a_metric.sum", "launch__grid_size"};
    bool missing[2] = {false, false};
    cr_assert_eq(ncu_columns_missing(buf, len, asked, 2, missing), 1);
    cr_assert(missing[0]);
    cr_assert_not(missing[1]);
    /* No raw header at all (a crashed run): nothing to compare. */
    const char *crash = "==ERROR== LaunchFailed\n";
    cr_assert_eq(ncu_columns_missing(crash, strlen(crash), asked, 2, missing), -1);
}

Test(pass_plan, job_filter_becomes_launch_skip_count_kernel_regex_and_nvtx_range)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, "ncu");
    Profeed__ProfileFilter filter;
    profeed__profile_filter__init(&filter);
    filter.has_launch_skip = 1;
    filter.launch_skip = 3;
    filter.has_launch_count = 1;
    filter.launch_count = 20;
    filter.kernel_regex = "add_kernel|vec_add";
    filter.nvtx_range = "profeed/";
    in.filter = &filter;
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    char line[8192];
    s_join(&pass_plan_pass(plan, 0)->steps[0], line, sizeof line);
    cr_assert_not_null(strstr(line, " --launch-skip 3 --launch-count 20 -k regex:add_kernel|vec_add "
                                    "--nvtx --nvtx-include profeed/ --metrics "),
                       "%s", line);
    pass_plan_destroy(&plan);
}

Test(pass_plan, sudo_prefixes_only_the_profiling_steps_when_opted_in)
{
    pass_plan_t *plan = s_named_plan("/opt/ncu", "full", true);
    const pass_plan_pass_t *p = pass_plan_pass(plan, 0);
    cr_assert_eq(p->step_count, 3);
    char line[8192];
    s_join(&p->steps[0], line, sizeof line);
    cr_assert_str_eq(line, "sudo -n -E /opt/ncu --set full --metrics smsp__inst_executed_pipe_fma.sum,"
                           "smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fp64.sum,"
                           "smsp__inst_executed_pipe_xu.sum,smsp__thread_inst_executed_pipe_fma_pred_on.sum,"
                           "smsp__thread_inst_executed_pipe_alu_pred_on.sum,"
                           "smsp__thread_inst_executed_pipe_fp64_pred_on.sum,"
                           "smsp__thread_inst_executed_pipe_xu_pred_on.sum -f -o /jobs/j1/ncu.000-full "
                           "--log-file /jobs/j1/ncu.000.log --target-processes all --clock-control none ./kernels all");
    cr_assert_str_eq(p->steps[0].log_path, "/jobs/j1/ncu.000.log");
    s_join(&p->steps[1], line, sizeof line);
    cr_assert_str_eq(line, "/opt/ncu --import /jobs/j1/ncu.000-full.ncu-rep --csv --page raw --print-units base");
    cr_assert_str_eq(p->steps[1].stdout_name, "full_raw.csv");
    cr_assert_not(p->steps[1].profiles);
    s_join(&p->steps[2], line, sizeof line);
    cr_assert_str_eq(line, "/opt/ncu --import /jobs/j1/ncu.000-full.ncu-rep --csv --page details --print-units base");
    cr_assert_str_eq(p->steps[2].stdout_name, "full_details.csv");
    cr_assert_eq(p->metric_count, 0);
    pass_plan_destroy(&plan);
}

Test(pass_plan, sol_plan_and_custom_passes_with_their_metrics)
{
    pass_plan_t *plan = s_named_plan("ncu", "sol", false);
    char line[8192];
    s_join(&pass_plan_pass(plan, 0)->steps[0], line, sizeof line);
    cr_assert_not_null(strstr(line, "--clock-control none --section SpeedOfLight ./kernels all"), "%s", line);
    pass_plan_destroy(&plan);

    char *a1[] = {"--section", "Occupancy"};
    char *a2[] = {"--metrics", "dram__bytes_read.sum,sm__cycles_active.avg"};
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, "ncu");
    pf_error_t err;
    Profeed__PassSpec c1, c2, *two[2] = {&c1, &c2};
    profeed__pass_spec__init(&c1);
    profeed__pass_spec__init(&c2);
    c1.name = "occupancy";
    c1.args = a1;
    c1.n_args = 2;
    c2.name = "dram";
    c2.args = a2;
    c2.n_args = 2;
    in.passes = two;
    in.n_passes = 2;
    plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_str_eq(pass_plan_name(plan), "custom");
    cr_assert_eq(pass_plan_count(plan), 2);
    cr_assert_str_eq(pass_plan_pass(plan, 1)->key, "ncu.001");
    cr_assert_eq(pass_plan_pass(plan, 1)->metric_count, 2);
    cr_assert_str_eq(pass_plan_pass(plan, 1)->metrics[1], "sm__cycles_active.avg");
    pass_plan_destroy(&plan);
}

Test(pass_plan, unknown_plan_and_option_like_program_are_refused_by_name)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, "ncu");
    Profeed__PassSpec bad, *one[1] = {&bad};
    profeed__pass_spec__init(&bad);
    bad.name = "everything";
    in.passes = one;
    in.n_passes = 1;
    pf_error_t err;
    cr_assert_null(pass_plan_new(&in, &err));
    cr_assert_eq(err.code, PF_EBADINPUT);
    cr_assert_not_null(strstr(err.msg, "\"everything\" does not exist for ncu (plans: core (default), sol, full)"),
                       "%s", err.msg);
    char *dash[] = {"--set", NULL};
    in.n_passes = 0;
    in.command = dash;
    in.command_len = 1;
    cr_assert_null(pass_plan_new(&in, &err));
    cr_assert_not_null(strstr(err.msg, "starting with '-'"), "%s", err.msg);
}

Test(pass_plan, unitrace_runs_three_metric_groups_and_opencl_one_sampling_pass)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_UNITRACE, "/opt/unitrace");
    in.language = PROFEED__LANGUAGE__LANGUAGE_SYCL;
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_eq(pass_plan_count(plan), 3);
    const char *groups[] = {"ComputeBasic", "MemoryProfile", "VectorEngineProfile"};
    for (size_t i = 0; i < 3; i++) {
        char line[4096], want[4096];
        s_join(&pass_plan_pass(plan, i)->steps[0], line, sizeof line);
        snprintf(want, sizeof want,
                 "/opt/unitrace --chrome-kernel-logging --chrome-itt-logging --group %s --metric-query "
                 "--output-dir-path /jobs/j1/unitrace.%03zu -o /jobs/j1/unitrace.%03zu/trace ./kernels all",
                 groups[i], i, i);
        cr_assert_str_eq(line, want);
    }
    cr_assert_null(pass_plan_env(plan)[0], "no LC_ALL for unitrace");
    pass_plan_destroy(&plan);

    in.language = PROFEED__LANGUAGE__LANGUAGE_OCL;
    plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_eq(pass_plan_count(plan), 1);
    char line[4096];
    s_join(&pass_plan_pass(plan, 0)->steps[0], line, sizeof line);
    cr_assert_str_eq(line, "/opt/unitrace --opencl --chrome-kernel-logging --chrome-itt-logging --group ComputeBasic "
                           "--metric-sampling --output-dir-path /jobs/j1/unitrace.000 -o /jobs/j1/unitrace.000/trace "
                           "./kernels all");
    pass_plan_destroy(&plan);
}

Test(pass_plan, vtune_collects_gpu_hotspots_then_reports_computing_tasks_as_tsv)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_VTUNE, "/opt/vtune");
    in.language = PROFEED__LANGUAGE__LANGUAGE_SYCL;
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    const pass_plan_pass_t *p = pass_plan_pass(plan, 0);
    cr_assert_eq(p->step_count, 2);
    char line[4096];
    s_join(&p->steps[0], line, sizeof line);
    cr_assert_str_eq(line, "/opt/vtune -collect gpu-hotspots -result-dir /jobs/j1/vtune.000-result -- ./kernels all");
    s_join(&p->steps[1], line, sizeof line);
    cr_assert_str_eq(line, "/opt/vtune -report hotspots -result-dir /jobs/j1/vtune.000-result -group-by computing-task "
                           "-format csv -csv-delimiter tab -report-output /jobs/j1/vtune.000/vtune_hotspots.tsv");
    pass_plan_destroy(&plan);
}

/* Reads a fixture whole (small files only). */
static char *s_fixture(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PF_FIXTURE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

Test(pass_plan, a_crash_the_profiler_explained_is_not_retried_a_silent_death_is)
{
    size_t len;
    char *crash = s_fixture("ncu/h200/err_crash_stdout.txt", &len);
    cr_assert_eq(pass_plan_judge(9, false, crash, len, ""), PASS_RESULT_FAILED);
    free(crash);
    cr_assert_eq(pass_plan_judge(137, false, "==PROF== Connected\n", 19, ""), PASS_RESULT_TRANSIENT);
    cr_assert_eq(pass_plan_judge(0, true, "", 0, NULL), PASS_RESULT_TRANSIENT, "a timeout is worth a retry");
    cr_assert_eq(pass_plan_judge(0, false, NULL, 0, NULL), PASS_RESULT_OK);
}

Test(pass_plan, counter_permission_failure_is_recognised_and_the_advice_says_what_to_set)
{
    const char *log = "==PROF== Connected to process 1 (/tmp/k)\n"
                      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                      "Performance Counters on the target device 0. For instructions on enabling permissions and to "
                      "get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n";
    cr_assert_eq(pass_plan_judge(1, false, log, strlen(log), ""), PASS_RESULT_PERMISSION);
    cr_assert_eq(pass_plan_judge(1, false, "", 0, log), PASS_RESULT_PERMISSION, "from stderr too");
    const char *advice = pass_plan_permission_advice();
    cr_assert_not_null(strstr(advice, "options nvidia NVreg_RestrictProfilingToAdminUsers=0"));
    cr_assert_not_null(strstr(advice, "/etc/modprobe.d/"));
    cr_assert_not_null(strstr(advice, "PROFEED_NCU_SUDO=1"));
    cr_assert_not(pass_plan_is_permission_error("permission", 10), "a bare word is not the failure");
    /* The wording without the code, as other ncu versions print it. */
    const char *words = "x NVIDIA GPU Performance Counters; The user does not have permission to access NVIDIA GPU "
                        "Performance Counters on the target device 0.";
    cr_assert(pass_plan_is_permission_error(words, strlen(words)));
    cr_assert_not(pass_plan_is_permission_error(words, strlen(words) - 40), "cut before the counters' name");
    const char *other = "NVIDIA GPU Performance Counters are available";
    cr_assert_not(pass_plan_is_permission_error(other, strlen(other)));
}

Test(pass_plan, source_adds_one_pass_after_the_plan_and_leaves_the_plan_as_it_was)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_NCU, "/usr/local/cuda/bin/ncu");
    pf_error_t err;
    pass_plan_t *plain = pass_plan_new(&in, &err);
    cr_assert_not_null(plain, "%s", err.msg);
    in.source = true;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_not_null(plan, "%s", err.msg);
    cr_assert_eq(pass_plan_count(plan), pass_plan_count(plain) + 1);
    char a[8192], b[8192];
    for (size_t i = 0; i < pass_plan_count(plain); i++) {
        s_join(&pass_plan_pass(plain, i)->steps[0], a, sizeof a);
        s_join(&pass_plan_pass(plan, i)->steps[0], b, sizeof b);
        cr_assert_str_eq(a, b, "the plan's pass %zu changed", i);
    }
    const pass_plan_pass_t *p = pass_plan_pass(plan, pass_plan_count(plan) - 1);
    cr_assert_str_eq(p->name, "source");
    cr_assert_str_eq(p->key, "ncu.001");
    cr_assert_eq(p->step_count, 3);
    s_join(&p->steps[0], a, sizeof a);
    cr_assert(strstr(a, "--section SourceCounters --section WarpStateStats --import-source yes -f -o "
                        "/jobs/j1/ncu.001-source"), "%s", a);
    cr_assert(strstr(a, "--clock-control none"), "%s", a);
    cr_assert(strstr(a, "./kernels all"), "%s", a);
    cr_assert(p->steps[0].profiles);
    s_join(&p->steps[1], b, sizeof b);
    cr_assert_str_eq(b, "/usr/local/cuda/bin/ncu --import /jobs/j1/ncu.001-source.ncu-rep --csv --page source "
                        "--print-source cuda,sass");
    cr_assert_str_eq(p->steps[1].stdout_name, "source.csv");
    cr_assert_not(p->steps[1].profiles);
    /* The SASS-only page: the fallback for builds without -lineinfo. */
    s_join(&p->steps[2], b, sizeof b);
    cr_assert_str_eq(b, "/usr/local/cuda/bin/ncu --import /jobs/j1/ncu.001-source.ncu-rep --csv --page source "
                        "--print-source sass");
    cr_assert_str_eq(p->steps[2].stdout_name, "source_sass.csv");
    cr_assert_not(p->steps[2].profiles);
    pass_plan_destroy(&plan);
    pass_plan_destroy(&plain);
}

Test(pass_plan, source_is_refused_for_a_profiler_without_one)
{
    pass_plan_input_t in = s_input(PROFEED__PROFILER__PROFILER_UNITRACE, "/opt/unitrace");
    in.language = PROFEED__LANGUAGE__LANGUAGE_SYCL;
    in.source = true;
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&in, &err);
    cr_assert_null(plan);
    cr_assert_eq(err.code, PF_EBADINPUT);
    cr_assert(strstr(err.msg, "the source pass is Nsight Compute's"), "%s", err.msg);
}
