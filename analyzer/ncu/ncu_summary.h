/* ncu_summary: ncu's summary counters rebuilt from what they summarize, for
 * captures that left them out to save replay passes (ncu_summary.c). */
#ifndef NCU_SUMMARY_H
#define NCU_SUMMARY_H

#include "ncu_kernel.h"

/* The name a derived SM summary goes by in evidence and in a kernel's
 * metrics: not ncu's, which would say it was collected. */
#define NCU_SM_PCT_DERIVED "profeed__sm_throughput_derived.pct"

/* Fills k->v[NM_SM_PCT] (sm__throughput) from the issue slots, the pipes and
 * the memory pipes when the capture lacks it and has those, and sets
 * k->sm_pct_derived. A kernel that has it, or lacks what it is made of, is
 * left as it is. */
void ncu_summary_derive(ncu_kernel_t *k);

/* The name k's SM summary goes by: ncu's when collected, NCU_SM_PCT_DERIVED
 * when rebuilt. */
const char *ncu_summary_sm_name(const ncu_kernel_t *k);

#endif
