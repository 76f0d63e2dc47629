/* vtune_plan: Intel VTune's passes (profiler.h's table names these).
 *
 * gpu-hotspots (the one named plan): the collection, then its computing-task
 * report as a tab-separated file; a custom pass adds its args to the
 * collection. The collector's file, built into profeed_common, as ncu_plan.c
 * is. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "pass_plan_build.h"
#include "profiler.h"

/* VTune's GPU hotspots, then the per-computing-task report as a tab-separated
 * file in the pass folder. The result directory stays outside it. */
static bool s_vtune_pass(pass_plan_t *plan, const pass_plan_input_t *in, char *const *extra, size_t extra_len)
{
    pass_plan_pass_t *pass = pass_plan_add_pass(plan, in, "gpu-hotspots");
    if (!pass)
        return false;
    const char *result = pass_plan_own(plan, "%s/%s-result", in->dir, pass->key);
    pass_argv_t b = {.ok = result != NULL};
    pass_argv_profiler(&b, in, true);
    pass_argv_add(&b, "-collect");
    pass_argv_add(&b, "gpu-hotspots");
    pass_argv_add(&b, "-result-dir");
    pass_argv_add(&b, result);
    for (size_t i = 0; i < extra_len; i++)
        pass_argv_add(&b, extra[i]);
    pass_argv_add(&b, "--");
    pass_argv_command(&b, in);
    if (!pass_plan_add_step(pass, &b, NULL, NULL, true))
        return false;
    pass_argv_t r = {.ok = true};
    pass_argv_profiler(&r, in, false);
    pass_argv_add(&r, "-report");
    pass_argv_add(&r, "hotspots");
    pass_argv_add(&r, "-result-dir");
    pass_argv_add(&r, result);
    pass_argv_add(&r, "-group-by");
    pass_argv_add(&r, "computing-task");
    pass_argv_add(&r, "-format");
    pass_argv_add(&r, "csv");
    pass_argv_add(&r, "-csv-delimiter");
    pass_argv_add(&r, "tab");
    pass_argv_add(&r, "-report-output");
    pass_argv_add(&r, pass_plan_own(plan, "%s/vtune_hotspots.tsv", pass->dir));
    return pass_plan_add_step(pass, &r, NULL, NULL, false);
}

bool vtune_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                      pf_error_t *err)
{
    const char *plan_name = named && name ? name : named ? "gpu-hotspots" : "custom";
    pass_plan_set_name(plan, plan_name);
    if (named && strcmp(plan_name, "gpu-hotspots") != 0) {
        pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for vtune (plans: %s)", plan_name,
                     pass_plan_names(in->profiler));
        return false;
    }
    for (size_t i = 0; i < (named ? 1 : in->n_passes); i++) {
        if (!s_vtune_pass(plan, in, named ? NULL : in->passes[i]->args, named ? 0 : in->passes[i]->n_args))
            return false;
    }
    return true;
}
