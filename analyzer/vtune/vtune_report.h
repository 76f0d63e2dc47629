/* vtune_report: Intel VTune GPU hotspots reports, read into one record per
 * kernel.
 *
 * Input is what `vtune -report hotspots -group-by computing-task -format csv`
 * prints (tab, semicolon or comma delimited), or KernelFoundry's collated
 * `vtune_counters.json` ({"kernel": {"column": "value"}}). A report may start
 * with `vtune: Warning:` lines, and one file may hold several tables, each
 * starting with a header line whose first column is "Computing Task"
 * (Xe-Forge reports the same result twice, because some columns cannot be
 * requested together).
 *
 * Merging, by kernel name:
 * - inside one table, rows with the same name are variants of one kernel
 *   (SIMD-width autotuning): Total Time and Instance Count add up, every
 *   other column comes from the longest-running variant;
 * - across tables and files, the same name is the same kernel reported again
 *   with other columns: the first table that has a value keeps it.
 * Rows that are not kernels ("[Outside any task]", empty names, `vtune:`
 * lines) are dropped; runtime entries KernelFoundry treats as overhead
 * (memory copies, PyTorch's elementwise kernels) are kept but marked.
 *
 * Values keep VTune's units: times in seconds, percentages 0-100, bandwidth
 * in GB/s. NAN means the column was not in the report. */
#ifndef VTUNE_REPORT_H
#define VTUNE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"

/* Limits on untrusted input; past them the parse fails with PF_ETOOBIG. */
#define VTUNE_MAX_FIELD (1u << 20)      /* one CSV field, bytes */
#define VTUNE_MAX_COLUMNS 65536         /* columns in a header */
#define VTUNE_MAX_KERNELS 100000        /* kernels in one report set */
#define VTUNE_MAX_JSON (64u << 20)      /* one vtune_counters.json, bytes */
#define VTUNE_MAX_FILE (256u << 20)     /* one file read by vtune_report_parse_file */
#define VTUNE_NAME_MAX 4096             /* kernel names are cut here */

/* The columns the analysis reads. Each has one canonical VTune column name
 * (vtune_metric_column) and may have aliases from other VTune versions. */
typedef enum {
    VT_TOTAL_TIME,          /* Computing Task:Total Time, s (summed over variants) */
    VT_AVERAGE_TIME,        /* Computing Task:Average Time, s */
    VT_INSTANCE_COUNT,      /* Computing Task:Instance Count (summed over variants) */
    VT_SIMD_WIDTH,          /* Computing Task:SIMD Width */
    VT_SPILL_SIZE,          /* Computing Task:Spill Memory Size, bytes */
    VT_XVE_ACTIVE,          /* XVE Array:Active, % */
    VT_XVE_STALLED,         /* XVE Array:Stalled, % */
    VT_XVE_IDLE,            /* XVE Array:Idle, % */
    VT_OCCUPANCY,           /* XVE Threads Occupancy, % */
    VT_PEAK_OCCUPANCY,      /* Peak XVE Threads Occupancy, % */
    VT_OCC_LIMIT_WORK_SIZE, /* Peak XVE Threads Occupancy:Work Size Limit, % */
    VT_OCC_LIMIT_SLM,       /* Peak XVE Threads Occupancy:SLM Use Limit, % */
    VT_OCC_LIMIT_BARRIERS,  /* Peak XVE Threads Occupancy:Barriers Use Limit, % */
    VT_STALL_SEND,          /* XVE Stall Reasons:Send, % */
    VT_STALL_SBID,          /* XVE Stall Reasons:SBID, % */
    VT_STALL_DIST_ACC,      /* XVE Stall Reasons:Dist or Acc, % */
    VT_STALL_INSTR_FETCH,   /* XVE Stall Reasons:Instruction Fetch, % */
    VT_STALL_BARRIER,       /* XVE Stall Reasons:Barrier, % */
    VT_ALU0_ACTIVE,         /* XVE Pipelines:ALU0 active, % */
    VT_ALU1_ACTIVE,         /* XVE Pipelines:ALU1 active, % */
    VT_XMX_ACTIVE,          /* XVE Pipelines:XMX active, % */
    VT_ALU0_INSTR,          /* XVE Instructions:ALU0 Instructions */
    VT_ALU1_INSTR,          /* XVE Instructions:ALU1 Instructions */
    VT_XMX_INSTR,           /* XVE Instructions:XMX instructions */
    VT_L3_BUSY,             /* GPU L3:Busy, % */
    VT_L3_STALLED,          /* GPU L3:Stalled, % */
    VT_L3_MISS,             /* GPU L3:Miss Ratio, % */
    VT_L3_BW_READ,          /* GPU L3:Average Bandwidth, GB/s:Read */
    VT_L3_BW_WRITE,         /* GPU L3:Average Bandwidth, GB/s:Write */
    VT_MEM_BW_READ,         /* GPU Memory Bandwidth, GB/sec:Read */
    VT_MEM_BW_WRITE,        /* GPU Memory Bandwidth, GB/sec:Write */
    VT__COUNT
} vtune_metric_t;

typedef struct {
    char *name;
    char work_global[32];  /* Work Size:Global, "128 x 8"; "" when not reported */
    char work_local[32];   /* Work Size:Local */
    double v[VT__COUNT];   /* NAN: not reported */
    bool overhead;         /* a runtime entry KernelFoundry does not analyze */
    size_t rows;           /* report rows merged into this record */
    size_t variants;       /* most rows one table had for it: > 1 means variants were merged */
    uint32_t simd_widths;  /* bit n set: a variant with SIMD width 2^n was seen */
} vtune_kernel_t;

typedef struct vtune_report_t vtune_report_t;

vtune_report_t *vtune_report_new(void);
void vtune_report_destroy(vtune_report_t **self_p);

/* Parses one hotspots report (a whole file's bytes) and merges it into the
 * report. `source` names it in errors ("pass vtune.000: hotspots.tsv").
 * Call once per file. On error nothing after the failing line is kept and
 * `err` names source, line and problem. A file holding only `vtune: Error:`
 * lines is not an error here: the messages are kept (vtune_report_error). */
pf_status_t vtune_report_parse(vtune_report_t *self, const char *source, const char *bytes,
                               size_t len, pf_error_t *err);

/* Parses KernelFoundry's collated form, {"kernel": {"column": "value"}},
 * where values are strings as VTune printed them (numbers are accepted too). */
pf_status_t vtune_report_parse_json(vtune_report_t *self, const char *source, const char *bytes,
                                    size_t len, pf_error_t *err);

/* Reads a file (at most VTUNE_MAX_FILE bytes; "-" is stdin) and parses it as
 * JSON when its first non-blank byte is '{', else as a hotspots report. */
pf_status_t vtune_report_parse_file(vtune_report_t *self, const char *path, pf_error_t *err);

/* Whether bytes look like VTune output (a "Computing Task" header among the
 * first lines, or a JSON object of kernels with "Computing Task:" columns),
 * for choosing an analyzer from the files alone. */
bool vtune_report_sniff(const char *bytes, size_t len);

/* Kernels in the order first seen. */
size_t vtune_report_kernel_count(const vtune_report_t *self);
const vtune_kernel_t *vtune_report_kernel(const vtune_report_t *self, size_t index);
/* The kernel with exactly this name, or NULL. */
const vtune_kernel_t *vtune_report_find(const vtune_report_t *self, const char *name);

/* A kernel's value by VTune column name, with or without its "(%)" suffix
 * ("XVE Array:Stalled(%)", "GPU Memory Bandwidth, GB/sec:Read"); NAN when
 * the kernel or the column is unknown or was not reported. */
double vtune_report_value(const vtune_report_t *self, const char *kernel, const char *column);

/* Tables read so far (header lines seen, plus one per JSON document). */
size_t vtune_report_table_count(const vtune_report_t *self);
/* Rows dropped as not being kernels ("[Outside any task]", empty names). */
size_t vtune_report_ignored_rows(const vtune_report_t *self);

/* Errors: the text of `vtune: Error:` lines, after the prefix (the profiler
 * failed). Notes: VTune's warnings and rows that could not be read. Each list
 * is bounded and de-duplicated. */
size_t vtune_report_error_count(const vtune_report_t *self);
const char *vtune_report_error(const vtune_report_t *self, size_t index);
size_t vtune_report_note_count(const vtune_report_t *self);
const char *vtune_report_note(const vtune_report_t *self, size_t index);

/* The metric a VTune column name maps to, or -1. "(%)" columns set *percent
 * (they win over the plain column of the same name); may be NULL. */
int vtune_metric_by_column(const char *column, bool *percent);
/* The canonical VTune column name of a metric, without "(%)". Static. */
const char *vtune_metric_column(vtune_metric_t metric);
/* VTune's unit for a metric: "s", "%", "GB/s", "byte" or "" (a count). */
const char *vtune_metric_unit(vtune_metric_t metric);

#endif
