/* ncu_metrics: the Nsight Compute metrics the analysis reads, and where each
 * one is found.
 *
 * A metric appears under its canonical name as a column of `--page raw`, and
 * (for those a section shows) under a display label in `--page details`
 * ("GPU Speed Of Light Throughput" / "DRAM Throughput"). Everything else in a
 * capture (2,000+ columns for --set full) is skipped while parsing, so memory
 * grows with launches x kept metrics, not with the file. */
#ifndef NCU_METRICS_H
#define NCU_METRICS_H

#include <stdbool.h>

typedef enum {
    /* Speed of light */
    NM_DURATION, NM_SM_PCT, NM_MEM_PCT, NM_DRAM_PCT, NM_L1_PCT, NM_L2_PCT,
    NM_SM_FREQ, NM_DRAM_FREQ, NM_ELAPSED_CYCLES, NM_SM_ACTIVE_CYCLES,
    /* Memory workload */
    NM_MEM_BUSY, NM_MAX_BW, NM_MEM_PIPES, NM_DRAM_BYTES_PER_S, NM_L1_HIT, NM_L2_HIT,
    NM_SPILL_REQUESTS, NM_SPILL_INST, NM_DRAM_READ, NM_DRAM_WRITE,
    NM_LD_BYTES_PER_SECTOR, NM_ST_BYTES_PER_SECTOR, NM_LD_SECTOR_PCT,
    NM_SECTORS_EXCESSIVE, NM_SECTORS_GLOBAL,
    NM_BANK_CONFLICTS, NM_BANK_CONFLICTS_LD, NM_BANK_CONFLICTS_ST,
    NM_SHARED_WAVEFRONTS, NM_SHARED_WAVEFRONTS_LD, NM_SHARED_WAVEFRONTS_ST,
    NM_SHARED_EXCESSIVE,
    NM_L1_WAVEFRONTS_PCT, NM_L1_REQUESTS_PCT, NM_L2_TAG_PCT, NM_L2_SECTORS_PCT,
    NM_L2_ATOMIC_PCT, NM_GLOBAL_RED, NM_GLOBAL_ATOM, NM_SHARED_ATOM,
    NM_L2_RED_REQUESTS, NM_L2_ATOM_REQUESTS, NM_L2_CAS_REQUESTS,
    NM_SECTORS_GLOBAL_LD, NM_SECTORS_GLOBAL_ST, NM_SECTORS_LOCAL_LD, NM_SECTORS_LOCAL_ST,
    NM_REQUESTS_GLOBAL_LD, NM_WAVEFRONTS_GLOBAL_LD, NM_L2_READ_SECTORS_SM,
    /* Launch */
    NM_BLOCK_SIZE, NM_GRID_SIZE, NM_REGISTERS, NM_SMEM_STATIC, NM_SMEM_DYNAMIC,
    NM_SM_COUNT, NM_WAVES, NM_THREADS,
    /* Occupancy */
    NM_OCC_THEORETICAL, NM_OCC_ACHIEVED, NM_OCC_LIMIT_BLOCKS, NM_OCC_LIMIT_REGISTERS,
    NM_OCC_LIMIT_SMEM, NM_OCC_LIMIT_WARPS, NM_OCC_LIMIT_BARRIERS,
    /* Scheduler and warp state */
    NM_ISSUE_ACTIVE, NM_ISSUE_PCT, NM_ISSUED_IPC, NM_WARP_CYCLES_PER_ISSUE, NM_THREADS_PER_WARP,
    NM_THREADS_PER_WARP_PRED,
    NM_STALL_BARRIER, NM_STALL_BRANCH, NM_STALL_DISPATCH, NM_STALL_DRAIN, NM_STALL_GMMA,
    NM_STALL_IMC_MISS, NM_STALL_LG_THROTTLE, NM_STALL_LONG_SCOREBOARD, NM_STALL_MATH_THROTTLE,
    NM_STALL_MEMBAR, NM_STALL_MIO_THROTTLE, NM_STALL_MISC, NM_STALL_NO_INSTRUCTION,
    NM_STALL_NOT_SELECTED, NM_STALL_SHORT_SCOREBOARD, NM_STALL_SLEEPING, NM_STALL_TEX_THROTTLE,
    NM_STALL_WAIT,
    /* Pipes */
    NM_PIPE_FMA, NM_PIPE_FMAHEAVY, NM_PIPE_ALU, NM_PIPE_FP64, NM_PIPE_TENSOR, NM_PIPE_HMMA, NM_PIPE_XU, NM_PIPE_LSU,
    NM_PIPE_ADU, NM_PIPE_CBU, NM_PIPE_UNIFORM, NM_PIPE_TEX, NM_INST_EXECUTED, NM_INST_EXECUTED_SM,
    /* Per pipe: warp instructions, and thread instructions whose guard predicate was on
     * (useful lanes per instruction = the second over the first) */
    NM_INST_PIPE_FMA, NM_INST_PIPE_ALU, NM_INST_PIPE_FP64, NM_INST_PIPE_XU,
    NM_LANES_PIPE_FMA, NM_LANES_PIPE_ALU, NM_LANES_PIPE_FP64, NM_LANES_PIPE_XU,
    /* Roofline */
    NM_FADD, NM_FMUL, NM_FFMA, NM_DADD, NM_DMUL, NM_DFMA, NM_HADD, NM_HMUL, NM_HFMA,
    NM_FADD_RATE, NM_FMUL_RATE, NM_FFMA_RATE,
    NM_FFMA_PEAK, NM_DFMA_PEAK, NM_DRAM_BYTES_PEAK,
    /* Device */
    NM_DEV_CLOCK_KHZ, NM_DEV_MEM_CLOCK_KHZ, NM_DEV_BUS_WIDTH,
    NM__COUNT
} ncu_metric_t;

/* The first and one past the last stall reason, in enum order. */
#define NM_STALL_FIRST NM_STALL_BARRIER
#define NM_STALL_END (NM_STALL_WAIT + 1)

/* How launches of one kernel combine: counts add up, rates and ratios are
 * averaged weighted by each launch's duration. */
typedef enum { NM_AGG_WMEAN, NM_AGG_SUM } ncu_agg_t;

typedef struct {
    const char *name;     /* canonical raw-page column */
    const char *alt;      /* another column with the same meaning, or NULL */
    const char *section;  /* details page: section display name, or NULL */
    const char *label;    /* details page: metric label, or NULL */
    const char *unit;     /* unit after normalisation, for people ("%", "ns") */
    const char *what;     /* a few words for evidence lines */
    ncu_agg_t agg;
} ncu_metric_info_t;

const ncu_metric_info_t *ncu_metric_info(ncu_metric_t metric);

/* Returns the metric kept under this raw-page column name, or -1. */
int ncu_metric_by_name(const char *name);

/* Returns the metric a details-page metric row carries, or -1. The label may
 * also be a canonical name (--print-metric-name name). */
int ncu_metric_by_label(const char *section, const char *label);

#endif
