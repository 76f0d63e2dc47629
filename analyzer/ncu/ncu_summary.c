/* ncu_summary: ncu's SM summary, sm__throughput, from the counters it
 * summarizes, when the capture did not collect it.
 *
 * sm__throughput.avg.pct_of_peak_sustained_elapsed is the maximum over a
 * breakdown of SM sub-counters. Collected by name it costs three of the
 * default plan's 22 replay passes on the H200 (deploy/plan-passes.sh, docs/
 * ncu.md "Where the passes go"), though every sub-counter that sets it in
 * practice is in the plan already. Over the 235 launches of the committed
 * --set full captures the maximum came from the issue slots (90), the memory
 * pipes' summary sm__memory_throughput (89), the MIO queues (19, which that
 * summary covers), the FMA pipe's heavy half (13), the ALU pipe (11), the
 * tensor pipe (7), the pipes' own summary (5) and the shared pipe (1).
 * Rebuilt from the plan's counters it is within 2.1 points of ncu's value on
 * all 168 kernels of the default plan's captures (median 0.01 over their 193
 * launches): tests/test_ncu_summary.c holds it to 2.5.
 *
 * The pipe and issue counters are per active SM cycle, the summary per
 * elapsed cycle: they are scaled by the SMs' active share of the elapsed
 * cycles. A kernel is marked when its value is derived, so the evidence says
 * so. Nothing is derived without the issue slots, the memory pipes, the FMA
 * and ALU pipes and the cycle counts: a maximum over fewer counters would
 * understate the SM. */
#include "ncu_summary.h"
#include "ncu_units.h"

#include <assert.h>
#include <math.h>

/* The pipes, per active cycle (the issue slots are read apart: they may come
 * as a fraction). */
static const ncu_metric_t s_pipes[] = {
    NM_PIPE_FMA, NM_PIPE_FMAHEAVY, NM_PIPE_ALU, NM_PIPE_FP64, NM_PIPE_TENSOR, NM_PIPE_HMMA,
    NM_PIPE_XU,  NM_PIPE_LSU,      NM_PIPE_ADU, NM_PIPE_CBU,  NM_PIPE_UNIFORM, NM_PIPE_TEX,
};

void ncu_summary_derive(ncu_kernel_t *k)
{
    assert(k);
    if (!isnan(k->v[NM_SM_PCT]))
        return;
    double active = k->v[NM_SM_ACTIVE_CYCLES], elapsed = k->v[NM_ELAPSED_CYCLES];
    ncu_metric_t from;
    double issue = ncu_units_issue_pct(k->v, &from);
    if (isnan(active) || isnan(elapsed) || elapsed <= 0 || active < 0 || isnan(issue) ||
        isnan(k->v[NM_MEM_PIPES]) || isnan(k->v[NM_PIPE_FMA]) || isnan(k->v[NM_PIPE_ALU]))
        return;
    double busiest = issue;
    for (size_t i = 0; i < sizeof s_pipes / sizeof s_pipes[0]; i++)
        if (!isnan(k->v[s_pipes[i]]))
            busiest = fmax(busiest, k->v[s_pipes[i]]);
    double share = fmin(active / elapsed, 1);
    k->v[NM_SM_PCT] = fmax(busiest * share, k->v[NM_MEM_PIPES]);
    k->sm_pct_derived = true;
}

const char *ncu_summary_sm_name(const ncu_kernel_t *k)
{
    assert(k);
    return k->sm_pct_derived ? NCU_SM_PCT_DERIVED : ncu_metric_info(NM_SM_PCT)->name;
}
