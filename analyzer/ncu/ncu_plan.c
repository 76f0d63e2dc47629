/* ncu_plan: Nsight Compute's passes (profiler.h's table names these).
 *
 * Named plans:
 *
 *   core  (default) one run: the counters the top-down analysis reads, by
 *         name, plus the MemoryWorkloadAnalysis section, whose register-spill
 *         counters ncu does not give to --metrics (docs/ncu.md, "What the
 *         default plan measures and costs": 19 replay passes to full's 38,
 *         22-27% of --set full's overhead on the H200, medians of three
 *         and four runs)
 *   sol   --section SpeedOfLight only (cheapest; says less: the bound without
 *         its causes)
 *   full  --set full (plus the per-pipe lane counters the set lacks) into a
 *         report, then its raw and details pages imported as CSV (everything,
 *         NCU's rule text included; about 4x core's cost)
 *
 * plus, on request (JobRequest.source), the source pass. Custom passes are one
 * ncu run each writing its raw page as CSV, with the spec's args. This file
 * is the collector's, built into profeed_common (analyzer/CMakeLists.txt): it
 * includes common's headers only, none of the folder's analysis. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "pass_plan_build.h"
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
    /* not sm__throughput.avg.pct_of_peak_sustained_elapsed, ncu's SM summary:
     * alone it costs 3 of the plan's 22 replay passes on the H200, and the
     * analysis rebuilds it from the pipes, the issue slots and the memory
     * pipes below (ncu_summary.c: within 2.1 points on every committed
     * kernel) */
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_sector_hit_rate.pct",
    /* the sectors the SMs read from L2, TMA's included, which the LSU's
     * counters below do not see: L2's re-reads of a TMA kernel's operands */
    "lts__t_sectors_srcunit_tex_op_read.sum",
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
    /* useful lanes on each arithmetic pipe (predication by pipe), and the
     * FMA pipe's heavy half (integer multiply-add) */
    "smsp__inst_executed.sum",
    "smsp__inst_executed_pipe_fma.sum",
    "smsp__inst_executed_pipe_alu.sum",
    "smsp__inst_executed_pipe_fp64.sum",
    "smsp__inst_executed_pipe_xu.sum",
    "smsp__thread_inst_executed_pipe_fma_pred_on.sum",
    "smsp__thread_inst_executed_pipe_alu_pred_on.sum",
    "smsp__thread_inst_executed_pipe_fp64_pred_on.sum",
    "smsp__thread_inst_executed_pipe_xu_pred_on.sum",
    "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active",
    /* memory spaces and access efficiency */
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    /* L1's work per global load request: a request whose sectors cost one
     * wavefront (lanes sharing a few addresses) gains nothing at L1 from
     * coalescing */
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__inst_executed_op_global_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "smsp__inst_executed_op_shared_atom.sum",
    "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed",
    /* the updates L2 serves, a request a lane: a warp's RED to one address is
     * 32 of them (ncu_atomics.c) */
    "lts__t_requests_srcunit_tex_op_red.sum",
    "lts__t_requests_srcunit_tex_op_atom_dot_alu.sum",
    "lts__t_requests_srcunit_tex_op_atom_dot_cas.sum",
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

/* What the core pass adds to its metrics: the MemoryWorkloadAnalysis section,
 * which carries sass__inst_executed_register_spilling (spills told from arrays
 * indexed at run time), a counter ncu drops from a --metrics list. Measured on
 * the H200 beside the metrics alone, it costs 0.4-1.4 s more per run on
 * corpus v2 and kernels.cu (docs/ncu.md). deploy/core-metrics.sh --sections
 * reads these arguments for the GPU scripts. */
static const char *const s_core_section_args[] = {"--section", "MemoryWorkloadAnalysis"};

/* What every ncu profiling run gets: all processes (Python launches the GPU
 * work in a child for Triton), clocks left alone (never change the GPU's
 * settings; ncu's default locks them to base), and the job's filter. */
static void s_ncu_common(pass_plan_t *plan, pass_argv_t *b, const pass_plan_input_t *in)
{
    pass_argv_add(b, "--target-processes");
    pass_argv_add(b, "all");
    pass_argv_add(b, "--clock-control");
    pass_argv_add(b, "none");
    const Profeed__ProfileFilter *f = in->filter;
    if (!f)
        return;
    if (f->has_launch_skip) {
        pass_argv_add(b, "--launch-skip");
        pass_argv_add(b, pass_plan_own(plan, "%u", (unsigned) f->launch_skip));
    }
    if (f->has_launch_count) {
        pass_argv_add(b, "--launch-count");
        pass_argv_add(b, pass_plan_own(plan, "%u", (unsigned) f->launch_count));
    }
    if (f->kernel_regex) {
        pass_argv_add(b, "-k");
        pass_argv_add(b, pass_plan_own(plan, "regex:%s", f->kernel_regex));
    }
    if (f->nvtx_range) {
        pass_argv_add(b, "--nvtx");
        pass_argv_add(b, "--nvtx-include");
        pass_argv_add(b, f->nvtx_range);
    }
}

/* One ncu run writing its raw page as CSV to <pass dir>/<key>.csv, through
 * --log-file so the program's own output stays out of it. */
static bool s_ncu_csv_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *name,
                           char *const *extra, size_t extra_len, const char *const *metrics)
{
    pass_plan_pass_t *pass = pass_plan_add_pass(plan, in, name);
    if (!pass)
        return false;
    pass_argv_t b = {.ok = true};
    pass_argv_profiler(&b, in, true);
    pass_argv_add(&b, "--csv");
    pass_argv_add(&b, "--page");
    pass_argv_add(&b, "raw");
    pass_argv_add(&b, "--log-file");
    pass_argv_add(&b, pass_plan_own(plan, "%s/%s.csv", pass->dir, pass->key));
    s_ncu_common(plan, &b, in);
    if (metrics) {
        char *joined = pass_plan_join(plan, metrics);
        pass_argv_add(&b, "--metrics");
        pass_argv_add(&b, joined);
        if (!joined || !pass_plan_add_metrics(plan, pass, joined))
            b.ok = false;
    }
    for (size_t i = 0; i < extra_len; i++) {
        pass_argv_add(&b, extra[i]);
        /* A custom pass that names metrics gets the same missing-column check. */
        if (strcmp(extra[i], "--metrics") == 0 && i + 1 < extra_len && !pass_plan_add_metrics(plan, pass, extra[i + 1]))
            b.ok = false;
        else if (strncmp(extra[i], "--metrics=", 10) == 0 && !pass_plan_add_metrics(plan, pass, extra[i] + 10))
            b.ok = false;
    }
    pass_argv_command(&b, in);
    return pass_plan_add_step(pass, &b, NULL, NULL, true);
}

/* The profiling step of a pass that writes an ncu report (outside the pass
 * folder: it is large and the analyzer reads CSV pages of it): ncu with
 * `args` and -o into `<key>-<name>`, logging to `<key>.log`. Returns the
 * report's file for the import steps that follow, NULL when out of memory. */
static const char *s_ncu_report_step(pass_plan_t *plan, const pass_plan_input_t *in, pass_plan_pass_t *pass,
                                     const char *name, const char *const *args, size_t n_args)
{
    const char *report = pass_plan_own(plan, "%s/%s-%s", in->dir, pass->key, name);
    const char *report_file = pass_plan_own(plan, "%s/%s-%s.ncu-rep", in->dir, pass->key, name);
    const char *log = pass_plan_own(plan, "%s/%s.log", in->dir, pass->key);
    pass_argv_t b = {.ok = report && report_file && log};
    pass_argv_profiler(&b, in, true);
    for (size_t i = 0; i < n_args; i++)
        pass_argv_add(&b, args[i]);
    pass_argv_add(&b, "-f");
    pass_argv_add(&b, "-o");
    pass_argv_add(&b, report);
    pass_argv_add(&b, "--log-file");
    pass_argv_add(&b, log);
    s_ncu_common(plan, &b, in);
    pass_argv_command(&b, in);
    return pass_plan_add_step(pass, &b, NULL, log, true) ? report_file : NULL;
}

/* An import step: a page of the report as CSV into `file`, with `args`. */
static bool s_ncu_import_step(const pass_plan_input_t *in, pass_plan_pass_t *pass, const char *report_file,
                              const char *const *args, size_t n_args, const char *file)
{
    pass_argv_t imp = {.ok = true};
    pass_argv_profiler(&imp, in, false);
    pass_argv_add(&imp, "--import");
    pass_argv_add(&imp, report_file);
    pass_argv_add(&imp, "--csv");
    for (size_t i = 0; i < n_args; i++)
        pass_argv_add(&imp, args[i]);
    return pass_plan_add_step(pass, &imp, file, NULL, false);
}

/* What the full plan adds to --set full: the core plan's counters that no
 * section of the full set carries (useful lanes per pipe, for predication by
 * pipe). Each is also in s_core_metrics (tests/test_pass_plan.c checks);
 * deploy/core-metrics.sh --full prints them for the GPU scripts. */
static const char *const s_full_metrics[] = {
    "smsp__inst_executed_pipe_fma.sum",
    "smsp__inst_executed_pipe_alu.sum",
    "smsp__inst_executed_pipe_fp64.sum",
    "smsp__inst_executed_pipe_xu.sum",
    "smsp__thread_inst_executed_pipe_fma_pred_on.sum",
    "smsp__thread_inst_executed_pipe_alu_pred_on.sum",
    "smsp__thread_inst_executed_pipe_fp64_pred_on.sum",
    "smsp__thread_inst_executed_pipe_xu_pred_on.sum",
    NULL,
};

/* --set full (and s_full_metrics) into a report, then the report's raw and
 * details pages imported as CSV in base units; the details page carries
 * NCU's rule text. */
static bool s_ncu_full_pass(pass_plan_t *plan, const pass_plan_input_t *in)
{
    const char *capture[] = {"--set", "full", "--metrics", pass_plan_join(plan, s_full_metrics)};
    static const char *const raw[] = {"--page", "raw", "--print-units", "base"};
    static const char *const details[] = {"--page", "details", "--print-units", "base"};
    if (!capture[3])
        return false;
    pass_plan_pass_t *pass = pass_plan_add_pass(plan, in, "full");
    const char *report_file = pass ? s_ncu_report_step(plan, in, pass, "full", capture, 4) : NULL;
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
    pass_plan_pass_t *pass = pass_plan_add_pass(plan, in, "source");
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
        return s_ncu_csv_pass(plan, in, "core", (char *const *) s_core_section_args,
                              sizeof s_core_section_args / sizeof s_core_section_args[0], s_core_metrics);
    if (strcmp(name, "sol") == 0)
        return s_ncu_csv_pass(plan, in, "sol", (char *const *) sol, 2, NULL);
    if (strcmp(name, "full") == 0)
        return s_ncu_full_pass(plan, in);
    pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for ncu (plans: %s)", name,
                 pass_plan_names(in->profiler));
    return false;
}

bool ncu_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name, pf_error_t *err)
{
    bool ok = true;
    if (named) {
        pass_plan_set_name(plan, name ? name : "core");
        ok = s_ncu_plan(plan, in, pass_plan_name(plan), err);
    } else {
        pass_plan_set_name(plan, "custom");
        for (size_t i = 0; ok && i < in->n_passes; i++)
            ok = s_ncu_csv_pass(plan, in, in->passes[i]->name, in->passes[i]->args, in->passes[i]->n_args, NULL);
    }
    /* Numbers in ncu's CSV must not carry locale grouping ("57,984"). */
    return ok && pass_plan_add_env(plan, "LC_ALL=C");
}

bool ncu_plan_source(pass_plan_t *plan, const pass_plan_input_t *in)
{
    return s_ncu_source_pass(plan, in);
}

const char *const *ncu_plan_metrics(const char *plan)
{
    return strcmp(plan, "core") == 0 ? s_core_metrics : NULL;
}
