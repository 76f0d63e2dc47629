/* unitrace_analyze: Intel GPU feedback from unitrace, in metric-query mode
 * (SYCL, PyTorch/Triton on XPU: three passes ComputeBasic, MemoryProfile,
 * VectorEngineProfile plus a chrome timeline each) and metric-sampling mode
 * (OpenCL: samples averaged per kernel, matched across passes by name).
 *
 * Collation follows KernelFoundry's UnitraceProfilerFeedback: a pass's group
 * is recognised from its columns, benchmark windows come from the ITT task
 * "ittapi::model run loop[::label]", rows join the timeline on
 * GlobalInstanceId, and more than three windows are reduced to the median and
 * the slowest. Analysis goes further: every kernel above the time threshold,
 * top-down (docs/intel.md, "Models"): the busiest measured unit (device
 * memory, L3, SLM counting its conflict replays, ALU0, ALU1, XMX) is the
 * bound; SLM bank conflicts, low occupancy, stall reasons and 64-bit pipe work
 * each get an estimated gain, and the largest gain leads; evidence against
 * the device's roofs, instruction mix, and one action each; without roofs the
 * counters' own utilizations are used. */
#ifndef UNITRACE_ANALYZE_H
#define UNITRACE_ANALYZE_H

#include <stddef.h>

#include "analysis.h"
#include "feedback.h"
#include "pf_error.h"

typedef struct unitrace_job_t unitrace_job_t;

unitrace_job_t *unitrace_job_new(void);
void unitrace_job_destroy(unitrace_job_t **self_p);

/* Adds one file of one pass. Metrics tables (trace.metrics.<pid>) and chrome
 * timelines (*.json) are kept; anything else (the text summary trace.<pid>)
 * is skipped with a note. A file that claims to be one of those and is not
 * gets an error naming it. */
pf_status_t unitrace_job_add(unitrace_job_t *self, const char *pass_key, const char *name,
                             const char *bytes, size_t len, pf_error_t *err);

/* How many passes the job holds a metrics table or a timeline for: 0 when
 * every file added was skipped as not unitrace output. */
size_t unitrace_job_pass_count(const unitrace_job_t *self);

/* The device as the worker knows it; any field may be NULL. */
typedef struct {
    const char *gpu_name;
    const char *pci_id;
    const char *cpu_model;
} unitrace_device_t;

/* A new feedback (caller destroys), or NULL when memory ran out. */
feedback_t *unitrace_analyze(const unitrace_job_t *job, const analysis_options_t *options,
                             const unitrace_device_t *device);

#endif
