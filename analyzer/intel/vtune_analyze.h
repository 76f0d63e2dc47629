/* vtune_analyze: turns VTune GPU hotspots data into ranked findings.
 *
 * For every kernel that takes at least the chosen share of GPU time it names
 * the bound first, with KernelFoundry's rules in their order (memory
 * latency, XMX, ALU0, ALU1, else balanced) and the numbers behind the
 * verdict, then secondary findings: low occupancy, dependency and barrier
 * stalls, L3 thrashing, XMX left unused by matrix-shaped work, register
 * spills. Columns the report lacks are listed with the -column or report
 * pass that would add them. */
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
