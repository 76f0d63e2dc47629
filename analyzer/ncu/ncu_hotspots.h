/* ncu_hotspots: which source lines cause each finding.
 *
 * Given the source pages of a job (ncu_source.h), each finding of a kernel
 * that has a page gets the lines (FB_LINES_MAX at most) with the largest
 * share of the quantity that finding is about:
 *
 *   uncoalesced_access      excess global sectors (beyond the fully coalesced
 *                           ideal): the traffic-weighted worst sectors/request
 *   bank_conflicts          extra shared wavefronts, (N-way - 1) x executions
 *   register_spill,         local-memory sectors (or local instructions
 *   local_memory            executed where the page has no local sectors)
 *   divergence              idle lane slots, 32 x instructions - predicated-on
 *                           thread instructions: low efficiency weighted by
 *                           how often the line runs
 *   barrier_stall           barrier stall samples
 *   warp_stall, *_bound,    warp stall samples: where the kernel spends its
 *   latency_bound, ...      time
 *
 * Lines below 5% of the quantity are left out (the first one never is).
 * Findings about the launch (grid size, occupancy, tail) get no lines: no
 * line causes them. The finding order is not touched. */
#ifndef NCU_HOTSPOTS_H
#define NCU_HOTSPOTS_H

#include "feedback.h"
#include "ncu_source.h"

/* Attaches lines to the findings of every kernel with a source page, and
 * notes what the pages could not say (no line info, no matching kernel). */
void ncu_hotspots_attach(feedback_t *fb, const ncu_source_t *source);

#endif
