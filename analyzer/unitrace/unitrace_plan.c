/* unitrace_plan: Intel unitrace's passes (profiler.h's table names these).
 *
 * groups (default): three --metric-query passes (ComputeBasic, MemoryProfile,
 * VectorEngineProfile) for SYCL, PyTorch and Triton on Intel GPUs, one
 * --metric-sampling pass of ComputeBasic for OpenCL; compute: ComputeBasic
 * alone. A custom pass's name is its metric group. The collector's file,
 * built into profeed_common, as ncu_plan.c is. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "pass_plan_build.h"
#include "profiler.h"

/* KernelFoundry's three unitrace metric groups; every Xe2 GPU (LNL, BMG, PTL)
 * has them (PVC and DG2 lack the last two: their passes then fail with
 * unitrace's own message). */
static const char *const s_unitrace_groups[] = {"ComputeBasic", "MemoryProfile", "VectorEngineProfile"};

/* unitrace, as KernelFoundry runs it: chrome kernel and ITT timelines (the
 * benchmark loop is an ITT task) and one metric group per pass. */
static bool s_unitrace_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *group, bool sampling,
                            char *const *extra, size_t extra_len)
{
    pass_plan_pass_t *pass = pass_plan_add_pass(plan, in, group);
    if (!pass)
        return false;
    pass_argv_t b = {.ok = true};
    pass_argv_profiler(&b, in, true);
    if (sampling)
        pass_argv_add(&b, "--opencl");
    pass_argv_add(&b, "--chrome-kernel-logging");
    pass_argv_add(&b, "--chrome-itt-logging");
    pass_argv_add(&b, "--group");
    pass_argv_add(&b, group);
    pass_argv_add(&b, sampling ? "--metric-sampling" : "--metric-query");
    pass_argv_add(&b, "--output-dir-path");
    pass_argv_add(&b, pass->dir);
    pass_argv_add(&b, "-o");
    pass_argv_add(&b, pass_plan_own(plan, "%s/trace", pass->dir));
    for (size_t i = 0; i < extra_len; i++)
        pass_argv_add(&b, extra[i]);
    pass_argv_command(&b, in);
    return pass_plan_add_step(pass, &b, NULL, NULL, true);
}

bool unitrace_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                         pf_error_t *err)
{
    bool ocl = in->language == PROFEED__LANGUAGE__LANGUAGE_OCL;
    if (named) {
        const char *plan_name = name ? name : "groups";
        pass_plan_set_name(plan, plan_name);
        if (strcmp(plan_name, "compute") == 0 || (ocl && strcmp(plan_name, "groups") == 0))
            return s_unitrace_pass(plan, in, "ComputeBasic", ocl, NULL, 0);
        if (strcmp(plan_name, "groups") != 0) {
            pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for unitrace (plans: %s)",
                         plan_name, pass_plan_names(in->profiler));
            return false;
        }
        for (size_t i = 0; i < 3; i++) {
            if (!s_unitrace_pass(plan, in, s_unitrace_groups[i], false, NULL, 0))
                return false;
        }
        return true;
    }
    /* Custom unitrace passes: the spec's name is the metric group. */
    pass_plan_set_name(plan, "custom");
    for (size_t i = 0; i < in->n_passes; i++) {
        if (!s_unitrace_pass(plan, in, in->passes[i]->name, ocl, in->passes[i]->args, in->passes[i]->n_args))
            return false;
    }
    return true;
}
