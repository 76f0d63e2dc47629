/* vtune_analyze: turns VTune GPU hotspots data into ranked findings.
 *
 * For every kernel that takes at least the chosen share of GPU time, top-down
 * (docs/intel.md, "Models"): the busiest measured unit (XMX, ALU0, ALU1, L3,
 * GPU memory bandwidth against a known device's peak) is the bound with its
 * headroom; memory latency, low occupancy, dependency and barrier stalls
 * each get an estimated gain from a model of their own,
 * and the largest gain leads; a latency-bound kernel no cause accounts for is
 * balanced. L3 thrashing, XMX left unused and register spills are advice the
 * counters cannot size. Columns the report lacks are listed with the -column
 * or report pass that would add them. */
#ifndef VTUNE_ANALYZE_H
#define VTUNE_ANALYZE_H

#include <jansson.h>

#include "analysis.h"
#include "feedback.h"
#include "vtune_report.h"

/* Returns a new feedback with profiler "vtune" (caller destroys), or NULL
 * when memory ran out. `device` names the GPU (worker info); may be NULL. */
feedback_t *vtune_analyze(const vtune_report_t *report, const analysis_options_t *options,
                          const char *device);

/* The per-kernel values behind the findings as JSON
 * ({"kernels": [{"name", "overhead", "rows", "work_size_global",
 * "work_size_local", "columns": {VTune column: value}}]}), values in VTune's
 * units. Caller owns it; NULL when memory ran out. */
json_t *vtune_analyze_collated(const vtune_report_t *report);

#endif
