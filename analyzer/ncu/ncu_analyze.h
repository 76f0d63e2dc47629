/* ncu_analyze: turns a job's collated Nsight Compute data into findings.
 *
 * For every kernel (its launches with one launch configuration, aggregated)
 * that takes at least the chosen share of profiled time, it names the
 * dominant limiter first (speed of light refined down to its cause:
 * uncoalesced access, bank conflicts, DRAM, L1, compute pipe, small grid,
 * contention, latency), then secondary findings (occupancy, warp stalls,
 * tails, spills, divergence), merging NCU's own rule results into them. */
#ifndef NCU_ANALYZE_H
#define NCU_ANALYZE_H

#include "analysis.h"
#include "feedback.h"
#include "ncu_data.h"

/* Returns a new feedback (caller destroys), or NULL when memory ran out.
 * `device_hint` names the GPU when the capture does not (worker info). */
feedback_t *ncu_analyze(const ncu_data_t *data, const analysis_options_t *options,
                        const char *device_hint);

/* The collated per-launch metrics as JSON ({"launches": [...]}), for
 * consumers that want the data behind the findings. Caller owns it. */
json_t *ncu_analyze_collated(const ncu_data_t *data);

#endif
