#include "pass_plan.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

/* The "profeed core" plan: the counters the top-down analysis of docs/ncu.md
 * reads, and nothing else. Speed of light for every memory level; each SM
 * pipe by its own utilization (FMA, ALU, FP64, XU, tensor incl. HGMMA, LSU,
 * ADU, CBU, uniform, TEX), so the busiest pipe is measured, never assumed;
 * issue-slot use and thread efficiency (divergence, predication); global,
 * local and shared traffic by sectors and wavefronts, bytes used per sector,
 * bank conflicts, global and shared atomics; occupancy and its limiters (the
 * launch__* values come with every capture at no cost); every warp stall
 * reason. Its cost against --set full is measured on the H200 and recorded in
 * docs/ncu.md ("What the default plan costs"). Every name must be a
 * collectable metric: ncu stops at a section-derived name (derived__*) and
 * drops an unknown plain name silently. */
static const char *const s_core_metrics[] = {
    "gpu__time_duration.sum",
    "gpc__cycles_elapsed.max",
    "sm__cycles_active.avg",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    /* pipes */
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_active",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    /* memory spaces and access efficiency */
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed_op_global_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "smsp__inst_executed_op_shared_atom.sum",
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed",
    /* occupancy */
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    /* warp state: every stall reason */
    "smsp__average_warp_latency_per_inst_issued.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_misc_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
    /* FP32 peak for the roofline */
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    NULL,
};

/* KernelFoundry's three unitrace metric groups; every Xe2 GPU (LNL, BMG, PTL)
 * has them (PVC and DG2 lack the last two: their passes then fail with
 * unitrace's own message). */
static const char *const s_unitrace_groups[] = {"ComputeBasic", "MemoryProfile", "VectorEngineProfile"};

#define MAX_ARGS 4096 /* bounds one argv: command (1024) + pass args (256) + the plan's own */

typedef struct {
    char **v;
    size_t n, cap;
} strvec_t;

struct pass_plan_t {
    pass_plan_pass_t *passes;
    size_t count;
    strvec_t env;
    strvec_t owned;   /* strings made here (paths, joined lists), freed with the plan */
    const char *name;
};

static bool s_push(strvec_t *vec, char *s)
{
    if (!s || vec->n + 2 > MAX_ARGS)
        return false;
    if (vec->n + 2 > vec->cap) {
        size_t cap = vec->cap ? vec->cap * 2 : 32;
        char **v = realloc(vec->v, cap * sizeof *v);
        if (!v)
            return false;
        vec->v = v;
        vec->cap = cap;
    }
    vec->v[vec->n++] = s;
    vec->v[vec->n] = NULL;
    return true;
}

/* A formatted string the plan owns; NULL when out of memory. */
static char *s_own(pass_plan_t *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *s_own(pass_plan_t *plan, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t) n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t) n + 1, fmt, ap);
    va_end(ap);
    if (!s_push(&plan->owned, s)) {
        free(s);
        return NULL;
    }
    return s;
}

/* Builds one step's argv; it is an error (false) only when out of memory or
 * past MAX_ARGS. */
typedef struct {
    strvec_t argv;
    bool ok;
} argv_build_t;

static void s_arg(argv_build_t *b, const char *s)
{
    if (b->ok && !s_push(&b->argv, (char *) s))
        b->ok = false;
}

/* Adds a pass of the input's profiler: its key is the profiler's name from
 * the table and the pass's index ("unitrace.001"), as profiler_by_pass_key()
 * reads it back; its folder is that key below the job's. */
static pass_plan_pass_t *s_add_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *name)
{
    pass_plan_pass_t *grown = realloc(plan->passes, (plan->count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    plan->passes = grown;
    pass_plan_pass_t *pass = &plan->passes[plan->count];
    memset(pass, 0, sizeof *pass);
    snprintf(pass->key, sizeof pass->key, "%s.%03zu", profiler_name_or(in->profiler, "unknown"), plan->count);
    pass->name = name;
    pass->dir = s_own(plan, "%s/%s", in->dir, pass->key);
    if (!pass->dir)
        return NULL;
    plan->count++;
    return pass;
}

static bool s_add_step(pass_plan_pass_t *pass, argv_build_t *b, const char *stdout_name, const char *log_path,
                       bool profiles)
{
    assert(pass->step_count < PASS_PLAN_MAX_STEPS);
    if (!b->ok) {
        free(b->argv.v);
        return false;
    }
    pass_step_t *step = &pass->steps[pass->step_count++];
    step->argv = b->argv.v;
    step->stdout_name = stdout_name;
    step->log_path = log_path;
    step->profiles = profiles;
    return true;
}

/* The profiler itself, behind `sudo -n -E` when the operator opted in: -n so
 * a sudo that wants a password fails at once instead of hanging the pass, -E
 * so LC_ALL and the job's environment survive. */
static void s_profiler(argv_build_t *b, const pass_plan_input_t *in, bool profiles)
{
    if (in->sudo && profiles) {
        s_arg(b, "sudo");
        s_arg(b, "-n");
        s_arg(b, "-E");
    }
    s_arg(b, in->profiler_path);
}

static void s_command(argv_build_t *b, const pass_plan_input_t *in)
{
    for (size_t i = 0; i < in->command_len; i++)
        s_arg(b, in->command[i]);
}

/* What every ncu profiling run gets: all processes (Python launches the GPU
 * work in a child for Triton), clocks left alone (never change the GPU's
 * settings; ncu's default locks them to base), and the job's filter. */
static void s_ncu_common(pass_plan_t *plan, argv_build_t *b, const pass_plan_input_t *in)
{
    s_arg(b, "--target-processes");
    s_arg(b, "all");
    s_arg(b, "--clock-control");
    s_arg(b, "none");
    const Profeed__ProfileFilter *f = in->filter;
    if (!f)
        return;
    if (f->has_launch_skip) {
        s_arg(b, "--launch-skip");
        s_arg(b, s_own(plan, "%u", (unsigned) f->launch_skip));
    }
    if (f->has_launch_count) {
        s_arg(b, "--launch-count");
        s_arg(b, s_own(plan, "%u", (unsigned) f->launch_count));
    }
    if (f->kernel_regex) {
        s_arg(b, "-k");
        s_arg(b, s_own(plan, "regex:%s", f->kernel_regex));
    }
    if (f->nvtx_range) {
        s_arg(b, "--nvtx");
        s_arg(b, "--nvtx-include");
        s_arg(b, f->nvtx_range);
    }
}

/* Splits a comma-separated --metrics value into the pass's metric list. */
static bool s_add_metrics(pass_plan_t *plan, pass_plan_pass_t *pass, const char *list)
{
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t) (comma - p) : strlen(p);
        if (len > 0) {
            char *name = s_own(plan, "%.*s", (int) len, p);
            char **grown = name ? realloc(pass->metrics, (pass->metric_count + 1) * sizeof *grown) : NULL;
            if (!grown)
                return false;
            pass->metrics = grown;
            pass->metrics[pass->metric_count++] = name;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    return true;
}

/* One ncu run writing its raw page as CSV to <pass dir>/<key>.csv, through
 * --log-file so the program's own output stays out of it. */
static bool s_ncu_csv_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *name,
                           char *const *extra, size_t extra_len, const char *const *metrics)
{
    pass_plan_pass_t *pass = s_add_pass(plan, in, name);
    if (!pass)
        return false;
    argv_build_t b = {.ok = true};
    s_profiler(&b, in, true);
    s_arg(&b, "--csv");
    s_arg(&b, "--page");
    s_arg(&b, "raw");
    s_arg(&b, "--log-file");
    s_arg(&b, s_own(plan, "%s/%s.csv", pass->dir, pass->key));
    s_ncu_common(plan, &b, in);
    if (metrics) {
        size_t len = 1;
        for (size_t i = 0; metrics[i]; i++)
            len += strlen(metrics[i]) + 1;
        char *joined = malloc(len);
        if (!joined || !s_push(&plan->owned, joined)) {
            free(joined);
            b.ok = false;
        } else {
            joined[0] = '\0';
            size_t used = 0;
            for (size_t i = 0; metrics[i]; i++)
                used += (size_t) snprintf(joined + used, len - used, "%s%s", i ? "," : "", metrics[i]);
            s_arg(&b, "--metrics");
            s_arg(&b, joined);
            if (!s_add_metrics(plan, pass, joined))
                b.ok = false;
        }
    }
    for (size_t i = 0; i < extra_len; i++) {
        s_arg(&b, extra[i]);
        /* A custom pass that names metrics gets the same missing-column check. */
        if (strcmp(extra[i], "--metrics") == 0 && i + 1 < extra_len && !s_add_metrics(plan, pass, extra[i + 1]))
            b.ok = false;
        else if (strncmp(extra[i], "--metrics=", 10) == 0 && !s_add_metrics(plan, pass, extra[i] + 10))
            b.ok = false;
    }
    s_command(&b, in);
    return s_add_step(pass, &b, NULL, NULL, true);
}

/* The profiling step of a pass that writes an ncu report (outside the pass
 * folder: it is large and the analyzer reads CSV pages of it): ncu with
 * `args` and -o into `<key>-<name>`, logging to `<key>.log`. Returns the
 * report's file for the import steps that follow, NULL when out of memory. */
static const char *s_ncu_report_step(pass_plan_t *plan, const pass_plan_input_t *in, pass_plan_pass_t *pass,
                                     const char *name, const char *const *args, size_t n_args)
{
    const char *report = s_own(plan, "%s/%s-%s", in->dir, pass->key, name);
    const char *report_file = s_own(plan, "%s/%s-%s.ncu-rep", in->dir, pass->key, name);
    const char *log = s_own(plan, "%s/%s.log", in->dir, pass->key);
    argv_build_t b = {.ok = report && report_file && log};
    s_profiler(&b, in, true);
    for (size_t i = 0; i < n_args; i++)
        s_arg(&b, args[i]);
    s_arg(&b, "-f");
    s_arg(&b, "-o");
    s_arg(&b, report);
    s_arg(&b, "--log-file");
    s_arg(&b, log);
    s_ncu_common(plan, &b, in);
    s_command(&b, in);
    return s_add_step(pass, &b, NULL, log, true) ? report_file : NULL;
}

/* An import step: a page of the report as CSV into `file`, with `args`. */
static bool s_ncu_import_step(const pass_plan_input_t *in, pass_plan_pass_t *pass, const char *report_file,
                              const char *const *args, size_t n_args, const char *file)
{
    argv_build_t imp = {.ok = true};
    s_profiler(&imp, in, false);
    s_arg(&imp, "--import");
    s_arg(&imp, report_file);
    s_arg(&imp, "--csv");
    for (size_t i = 0; i < n_args; i++)
        s_arg(&imp, args[i]);
    return s_add_step(pass, &imp, file, NULL, false);
}

/* --set full into a report, then the report's raw and details pages imported
 * as CSV in base units; the details page carries NCU's rule text. */
static bool s_ncu_full_pass(pass_plan_t *plan, const pass_plan_input_t *in)
{
    static const char *const capture[] = {"--set", "full"};
    static const char *const raw[] = {"--page", "raw", "--print-units", "base"};
    static const char *const details[] = {"--page", "details", "--print-units", "base"};
    pass_plan_pass_t *pass = s_add_pass(plan, in, "full");
    const char *report_file = pass ? s_ncu_report_step(plan, in, pass, "full", capture, 2) : NULL;
    return report_file && s_ncu_import_step(in, pass, report_file, raw, 4, "full_raw.csv") &&
           s_ncu_import_step(in, pass, report_file, details, 4, "full_details.csv");
}

/* The source pass (JobRequest.source): the per-instruction counters and
 * warp-state samples of the SourceCounters and WarpStateStats sections, with
 * the CUDA source imported into the report (--import-source yes: the report
 * then carries the lines, so the export needs no access to the sources), then
 * the source page of every profiled kernel, CUDA lines with their SASS, as
 * CSV, and the same page as SASS alone. A pass of its own after the plan's: the plan's passes stay exactly as
 * they are, and its cost is this one run (deploy/gpu-source.sh measures it). */
static bool s_ncu_source_pass(pass_plan_t *plan, const pass_plan_input_t *in)
{
    static const char *const capture[] = {"--section", "SourceCounters", "--section", "WarpStateStats",
                                          "--import-source", "yes"};
    static const char *const page[] = {"--page", "source", "--print-source", "cuda,sass"};
    static const char *const sass[] = {"--page", "source", "--print-source", "sass"};
    pass_plan_pass_t *pass = s_add_pass(plan, in, "source");
    const char *report_file = pass ? s_ncu_report_step(plan, in, pass, "source", capture, 6) : NULL;
    /* ncu prints no CUDA view of a function built without -lineinfo (only a
     * warning): the SASS-only page is what the hot spots fall back to. */
    return report_file && s_ncu_import_step(in, pass, report_file, page, 4, "source.csv") &&
           s_ncu_import_step(in, pass, report_file, sass, 4, "source_sass.csv");
}

static bool s_ncu_plan(pass_plan_t *plan, const pass_plan_input_t *in, const char *name, pf_error_t *err)
{
    static const char *const sol[] = {"--section", "SpeedOfLight"};
    if (strcmp(name, "core") == 0)
        return s_ncu_csv_pass(plan, in, "core", NULL, 0, s_core_metrics);
    if (strcmp(name, "sol") == 0)
        return s_ncu_csv_pass(plan, in, "sol", (char *const *) sol, 2, NULL);
    if (strcmp(name, "full") == 0)
        return s_ncu_full_pass(plan, in);
    pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for ncu (plans: %s)", name,
                 pass_plan_names(PROFEED__PROFILER__PROFILER_NCU));
    return false;
}

/* unitrace, as KernelFoundry runs it: chrome kernel and ITT timelines (the
 * benchmark loop is an ITT task) and one metric group per pass. */
static bool s_unitrace_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *group, bool sampling,
                            char *const *extra, size_t extra_len)
{
    pass_plan_pass_t *pass = s_add_pass(plan, in, group);
    if (!pass)
        return false;
    argv_build_t b = {.ok = true};
    s_profiler(&b, in, true);
    if (sampling)
        s_arg(&b, "--opencl");
    s_arg(&b, "--chrome-kernel-logging");
    s_arg(&b, "--chrome-itt-logging");
    s_arg(&b, "--group");
    s_arg(&b, group);
    s_arg(&b, sampling ? "--metric-sampling" : "--metric-query");
    s_arg(&b, "--output-dir-path");
    s_arg(&b, pass->dir);
    s_arg(&b, "-o");
    s_arg(&b, s_own(plan, "%s/trace", pass->dir));
    for (size_t i = 0; i < extra_len; i++)
        s_arg(&b, extra[i]);
    s_command(&b, in);
    return s_add_step(pass, &b, NULL, NULL, true);
}

/* VTune's GPU hotspots, then the per-computing-task report as a tab-separated
 * file in the pass folder. The result directory stays outside it. */
static bool s_vtune_pass(pass_plan_t *plan, const pass_plan_input_t *in, char *const *extra, size_t extra_len)
{
    pass_plan_pass_t *pass = s_add_pass(plan, in, "gpu-hotspots");
    if (!pass)
        return false;
    const char *result = s_own(plan, "%s/%s-result", in->dir, pass->key);
    argv_build_t b = {.ok = result != NULL};
    s_profiler(&b, in, true);
    s_arg(&b, "-collect");
    s_arg(&b, "gpu-hotspots");
    s_arg(&b, "-result-dir");
    s_arg(&b, result);
    for (size_t i = 0; i < extra_len; i++)
        s_arg(&b, extra[i]);
    s_arg(&b, "--");
    s_command(&b, in);
    if (!s_add_step(pass, &b, NULL, NULL, true))
        return false;
    argv_build_t r = {.ok = true};
    s_profiler(&r, in, false);
    s_arg(&r, "-report");
    s_arg(&r, "hotspots");
    s_arg(&r, "-result-dir");
    s_arg(&r, result);
    s_arg(&r, "-group-by");
    s_arg(&r, "computing-task");
    s_arg(&r, "-format");
    s_arg(&r, "csv");
    s_arg(&r, "-csv-delimiter");
    s_arg(&r, "tab");
    s_arg(&r, "-report-output");
    s_arg(&r, s_own(plan, "%s/vtune_hotspots.tsv", pass->dir));
    return s_add_step(pass, &r, NULL, NULL, false);
}

pf_status_t pass_plan_check_name(Profeed__Profiler profiler, const char *name, pf_error_t *err)
{
    const profiler_t *p = profiler_by_id(profiler);
    for (size_t i = 0; p && name && p->plans[i]; i++) {
        if (strcmp(p->plans[i], name) == 0)
            return PF_OK;
    }
    return pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for %s (plans: %s)",
                        name ? name : "", p ? p->name : "this profiler", pass_plan_names(profiler));
}

const char *pass_plan_names(Profeed__Profiler profiler)
{
    const profiler_t *p = profiler_by_id(profiler);
    return p ? p->plans_text : "none";
}

const char *const *pass_plan_ncu_metrics(const char *plan)
{
    return plan && strcmp(plan, "core") == 0 ? s_core_metrics : NULL;
}

bool pass_plan_build_ncu(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                         pf_error_t *err)
{
    bool ok = true;
    if (named) {
        plan->name = name ? name : "core";
        ok = s_ncu_plan(plan, in, plan->name, err);
    } else {
        plan->name = "custom";
        for (size_t i = 0; ok && i < in->n_passes; i++)
            ok = s_ncu_csv_pass(plan, in, in->passes[i]->name, in->passes[i]->args, in->passes[i]->n_args, NULL);
    }
    /* Numbers in ncu's CSV must not carry locale grouping ("57,984"). */
    return ok && s_push(&plan->env, "LC_ALL=C");
}

bool pass_plan_build_unitrace(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                              pf_error_t *err)
{
    bool ocl = in->language == PROFEED__LANGUAGE__LANGUAGE_OCL;
    if (named) {
        plan->name = name ? name : "groups";
        if (strcmp(plan->name, "compute") == 0 || (ocl && strcmp(plan->name, "groups") == 0))
            return s_unitrace_pass(plan, in, "ComputeBasic", ocl, NULL, 0);
        if (strcmp(plan->name, "groups") != 0) {
            pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for unitrace (plans: %s)",
                         plan->name, pass_plan_names(in->profiler));
            return false;
        }
        for (size_t i = 0; i < 3; i++) {
            if (!s_unitrace_pass(plan, in, s_unitrace_groups[i], false, NULL, 0))
                return false;
        }
        return true;
    }
    /* Custom unitrace passes: the spec's name is the metric group. */
    plan->name = "custom";
    for (size_t i = 0; i < in->n_passes; i++) {
        if (!s_unitrace_pass(plan, in, in->passes[i]->name, ocl, in->passes[i]->args, in->passes[i]->n_args))
            return false;
    }
    return true;
}

bool pass_plan_build_vtune(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                           pf_error_t *err)
{
    plan->name = named && name ? name : named ? "gpu-hotspots" : "custom";
    if (named && strcmp(plan->name, "gpu-hotspots") != 0) {
        pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for vtune (plans: %s)", plan->name,
                     pass_plan_names(in->profiler));
        return false;
    }
    for (size_t i = 0; i < (named ? 1 : in->n_passes); i++) {
        if (!s_vtune_pass(plan, in, named ? NULL : in->passes[i]->args, named ? 0 : in->passes[i]->n_args))
            return false;
    }
    return true;
}

/* One spec without args names a plan; otherwise the specs are custom passes
 * whose args follow the profiler's fixed options. The profiler table
 * (profiler.h) says which builder a profiler's plans come from. */
static bool s_build(pass_plan_t *plan, const pass_plan_input_t *in, pf_error_t *err)
{
    bool named = in->n_passes == 0 || (in->n_passes == 1 && in->passes[0]->n_args == 0);
    const char *name = in->n_passes ? in->passes[0]->name : NULL;
    const profiler_t *profiler = profiler_by_id(in->profiler);
    if (!profiler) {
        pf_error_set(err, PF_EBADINPUT, "no pass plan for profiler %s", profiler_name_or(in->profiler, "unspecified"));
        return false;
    }
    return profiler->build_plan(plan, in, named, name, err);
}

pass_plan_t *pass_plan_new(const pass_plan_input_t *input, pf_error_t *err)
{
    assert(input && input->profiler_path && input->dir && input->command && input->command_len >= 1);
    if (input->command[0][0] == '-') {
        pf_error_set(err, PF_EBADINPUT, "program \"%.64s\": a name starting with '-' would be read as a %s option",
                     input->command[0], profiler_name_or(input->profiler, "unspecified"));
        return NULL;
    }
    pass_plan_t *plan = calloc(1, sizeof *plan);
    if (!plan) {
        pf_error_set(err, PF_ENOMEM, "out of memory building the pass plan");
        return NULL;
    }
    pf_error_clear(err);
    bool ok = s_build(plan, input, err);
    if (ok && input->source) {
        if (input->profiler != PROFEED__PROFILER__PROFILER_NCU) {
            pf_error_set(err, PF_EBADINPUT, "the source pass is Nsight Compute's (ncu); %s has none",
                         profiler_name_or(input->profiler, "unspecified"));
            ok = false;
        } else
            ok = s_ncu_source_pass(plan, input);
    }
    if (!ok) {
        if (err && err->code == PF_OK)
            pf_error_set(err, PF_ENOMEM, "out of memory building the pass plan");
        pass_plan_destroy(&plan);
    }
    return plan;
}

void pass_plan_destroy(pass_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    pass_plan_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++) {
        for (size_t s = 0; s < self->passes[i].step_count; s++)
            free(self->passes[i].steps[s].argv);
        free(self->passes[i].metrics);
    }
    free(self->passes);
    for (size_t i = 0; i < self->owned.n; i++)
        free(self->owned.v[i]);
    free(self->owned.v);
    free(self->env.v);
    free(self);
    *self_p = NULL;
}

size_t pass_plan_count(const pass_plan_t *self)
{
    return self->count;
}

const pass_plan_pass_t *pass_plan_pass(const pass_plan_t *self, size_t index)
{
    assert(index < self->count);
    return &self->passes[index];
}

char *const *pass_plan_env(const pass_plan_t *self)
{
    static char *const none[] = {NULL};
    return self->env.v ? self->env.v : none;
}

const char *pass_plan_name(const pass_plan_t *self)
{
    return self->name;
}

/* Bounded substring search over bytes that need not end in NUL. */
/* Where `needle` first occurs in `text`, or NULL. Analyzers run this over
 * whole captures (megabytes): memchr finds the candidates, so needles should
 * start with a byte that is rare in CSV text. */
static const char *s_find(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (!text || n == 0 || len < n)
        return NULL;
    const char *end = text + len - n + 1; /* last possible start + 1 */
    for (const char *p = text; p < end; p++) {
        p = memchr(p, needle[0], (size_t) (end - p));
        if (!p)
            return NULL;
        if (memcmp(p, needle, n) == 0)
            return p;
    }
    return NULL;
}

static bool s_contains(const char *text, size_t len, const char *needle)
{
    return s_find(text, len, needle) != NULL;
}

bool pass_plan_is_permission_error(const char *text, size_t len)
{
    /* ncu: "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to
     * access NVIDIA GPU Performance Counters on the target device 0." The
     * search starts at the capitals and looks back for the rest. */
    if (s_contains(text, len, "ERR_NVGPUCTRPERM"))
        return true;
    static const char before[] = "does not have permission to access ";
    const size_t before_len = sizeof before - 1;
    const char *end = text ? text + len : NULL;
    for (const char *p = text; p && p < end;) {
        const char *hit = s_find(p, (size_t) (end - p), "NVIDIA GPU Performance Counters");
        if (!hit)
            return false;
        if ((size_t) (hit - text) >= before_len && memcmp(hit - before_len, before, before_len) == 0)
            return true;
        p = hit + 1;
    }
    return false;
}

const char *pass_plan_permission_advice(void)
{
    return "the profiler may not read this GPU's performance counters (ERR_NVGPUCTRPERM): on the collector's host, "
           "allow profiling for all users with the line `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a "
           "file under /etc/modprobe.d/ (e.g. /etc/modprobe.d/nvidia-profiling.conf), then reload the nvidia kernel "
           "module or reboot (check: `grep RmProfilingAdminOnly /proc/driver/nvidia/params` shows 0); in a container, "
           "run it with --cap-add=SYS_ADMIN; or let the collector run the profiler through passwordless sudo with "
           "PROFEED_NCU_SUDO=1 (or --ncu-sudo)";
}

pass_result_t pass_plan_judge(int exit_status, bool timed_out, const char *log, size_t log_len,
                              const char *stderr_tail)
{
    size_t tail_len = stderr_tail ? strlen(stderr_tail) : 0;
    if (pass_plan_is_permission_error(log, log_len) || pass_plan_is_permission_error(stderr_tail, tail_len))
        return PASS_RESULT_PERMISSION;
    if (timed_out)
        return PASS_RESULT_TRANSIENT;
    if (exit_status == 0)
        return PASS_RESULT_OK;
    /* A failure the profiler explained (the program crashed, a metric does not
     * exist, no such program) happens again on a retry; one without a word (a
     * signal, a crashed profiler) may not. */
    if (s_contains(log, log_len, "==ERROR==") || s_contains(stderr_tail, tail_len, "==ERROR=="))
        return PASS_RESULT_FAILED;
    return PASS_RESULT_TRANSIENT;
}

const char *pass_result_name(pass_result_t result)
{
    switch (result) {
    case PASS_RESULT_OK: return "ok";
    case PASS_RESULT_TRANSIENT: return "transient failure";
    case PASS_RESULT_PERMISSION: return "no permission for the performance counters";
    case PASS_RESULT_FAILED: return "failed";
    }
    return "unknown";
}
