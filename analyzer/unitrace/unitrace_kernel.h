/* unitrace_kernel: the analysis of one kernel from its rows in each unitrace
 * pass (ComputeBasic, MemoryProfile, VectorEngineProfile,
 * VectorEngineStalls), top-down (docs/intel.md, "Models"): the units the
 * passes measured against the device's roofs, every cause model with its
 * estimated gain, the bound, and the leading finding. Private to
 * unitrace_analyze.c collates the passes and calls it. */
#ifndef UNITRACE_KERNEL_H
#define UNITRACE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feedback.h"
#include "roofs.h"
#include "unitrace_table.h"

#define UT_COL_TIME "GpuTime[ns]"
#define UT_COL_ID "GlobalInstanceId"

/* The metric groups a pass can hold, recognised from its columns. */
typedef enum { UT_CB, UT_MP, UT_VEP, UT_VES, UT__GROUPS } unitrace_group_t;

/* A kernel's rows in one pass: one representative row (query mode) or all
 * its samples (sampling mode), averaged when read. No table: not measured.
 * With noise_sigma > 0 each value is read as another collection could read
 * it, for the kernel's close call (close_call.h): scaled by noise.h's factor
 * for reading `noise_seed` and its column, the times by one factor, the
 * instruction counts (XVE_INST_EXECUTED_*[events], fixed by the code) not. */
typedef struct {
    const unitrace_table_t *table;
    size_t *rows;
    size_t count;
    uint64_t noise_seed;
    double noise_sigma;
} unitrace_view_t;

/* Which group a pass ran, from its columns (never its position), or -1. */
int unitrace_kernel_group(const unitrace_table_t *table);

/* Analyzes kernel `index` of `fb` from its views (indexed by
 * unitrace_group_t; the ComputeBasic one is required): its metrics, its
 * findings with their gains, the leading one marked. `roof` may be NULL (the
 * counters' own utilizations are used). */
void unitrace_kernel_analyze(feedback_t *fb, size_t index, const roof_t *roof, bool sampling,
                             const unitrace_view_t views[UT__GROUPS]);

#endif
