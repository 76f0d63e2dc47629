/* ncu_units: how busy each unit of the GPU was during one kernel, from
 * whatever the capture measured.
 *
 * The top-down analysis (docs/ncu.md) starts here: every memory level (DRAM,
 * L2, L1/TEX with shared memory), every SM pipe with its own utilization
 * counter (FMA, ALU, FP64, XU, tensor, LSU, ADU, CBU, uniform, TEX) and the
 * schedulers' issue slots. A unit the capture did not measure is absent, never
 * zero: the busiest unit is always one that was measured. */
#ifndef NCU_UNITS_H
#define NCU_UNITS_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu_kernel.h"

typedef enum { NCU_UNIT_MEMORY, NCU_UNIT_PIPE, NCU_UNIT_ISSUE } ncu_unit_kind_t;

typedef struct {
    const char *key;     /* stable: "dram", "l2", "l1", "fma", "xu", "tensor", "issue", ... */
    const char *name;    /* for people: "XU pipe (transcendentals, conversions)" */
    const char *metric;  /* the counter it was read from */
    ncu_unit_kind_t kind;
    double pct;          /* 0..100: ncu reports rounding noise above 100; clamped */
    double attain;       /* the share of its peak a unit reaches in practice (NCU_ATTAIN_*) */
    bool scattered;      /* DRAM reading scattered sectors, read against its own ceiling */
} ncu_unit_t;

/* What a unit reaches at best, in percent of its peak (docs/ncu.md, "Attainable
 * ceilings"): HBM loses a tenth of its peak to refresh, bank and read/write
 * turnarounds, and the best streams measured on the H200 reach 89.8% (cuBLAS,
 * PyTorch's vectorized elementwise kernels, corpus v4's strided fp64 at
 * 86%); the caches and pipes run at 95-100% when saturated (L2 99.5%, L1
 * 100%, FMA 95%, LSU 96%, XU 96% in the corpora). A unit at its attainable
 * ceiling has nothing left to give. */
#define NCU_ATTAIN_DRAM 90.0
#define NCU_ATTAIN_ONCHIP 95.0

/* Loads that read scattered sectors: DRAM read at least 1.5x the bytes of
 * every load sector (each missed sector fetched with its neighbour: L2 fetches
 * 64 bytes) while the stores, whose partial-sector fills also read, write
 * whole sectors or are a quarter of the loads' sectors or fewer. DRAM then
 * runs at the rate of its row activations, a ceiling of its own that the
 * GPU's roof entry gives where it was measured (roof_t.dram_scattered_pct: 55%
 * on the H200; the random gathers of corpora v3, v8, v29, v34, v46 and v50 ran
 * it at 44%-58%). */
#define NCU_SCATTERED_OVERFETCH 1.5
#define NCU_SCATTERED_STORE_SHARE 0.25
#define NCU_SCATTERED_WHOLE_STORE 31.0 /* bytes a store sector: written whole */

/* How much faster the unit could run the same work: attain / pct, at least 1
 * (10 for a unit that was idle). */
double ncu_unit_room(const ncu_unit_t *unit);

#define NCU_UNITS_MAX 16

typedef struct {
    ncu_unit_t unit[NCU_UNITS_MAX];
    size_t count;
} ncu_units_t;

/* Schedulers (SM sub-partitions) per SM, each issuing at most one warp
 * instruction a cycle. */
#define NCU_SCHEDULERS_PER_SM 4.0

/* The issue slots' utilization per active cycle (percent) from whichever
 * form the capture has: the percentage, a fraction per scheduler cycle,
 * instructions issued per SM cycle, or executed instructions over the SMs'
 * active cycles (a floor); *from names the metric read. NAN where none. */
double ncu_units_issue_pct(const double *v, ncu_metric_t *from);

/* Fills `out` with the units this kernel's capture measured, busiest first.
 * dram_scattered_pct: the GPU's DRAM ceiling for scattered reads, 0 where it
 * was not measured (DRAM then keeps NCU_ATTAIN_DRAM). */
void ncu_units_measure(const ncu_kernel_t *k, double dram_scattered_pct, ncu_units_t *out);

/* The busiest measured unit of one kind (or of any kind when kind < 0), or
 * NULL when none of that kind was measured. */
const ncu_unit_t *ncu_units_busiest(const ncu_units_t *units, int kind);

/* How much of each unit's work a change leaves: 1 keeps it, 0.25 removes
 * three quarters. `compute` applies to every pipe and the issue slots, except
 * the units `unit_keep` names: when not NULL it holds one value per unit of
 * the ncu_units_t it is used with (same order), NAN for "the default". */
typedef struct {
    double l1, l2, dram, compute;
    const double *unit_keep;
} ncu_relief_t;

/* Fills keep (one value per unit of `units`) for a change that touches one
 * unit: `value` for `unit`, NAN ("the default") for every other; all NAN
 * when `unit` is NULL. */
void ncu_units_keep_one(const ncu_units_t *units, const ncu_unit_t *unit, double value, double keep[NCU_UNITS_MAX]);

/* The share of the kernel's time a change saves, by the roofline argument:
 * time follows the unit nearest its attainable ceiling, so the saving is how
 * far the highest utilization-to-attainable ratio drops (r_max - r_max' after
 * scaling, in 0..1). A latency-bound
 * kernel, whose busiest unit is far from its peak, gains correspondingly
 * little. */
double ncu_units_saved(const ncu_units_t *units, const ncu_relief_t *relief);

/* The share of the kernel's time saved, by the same roofline argument, when
 * the work of unit `from` moves to unit `to`, where it takes `factor` of the
 * utilization it took on `from` (the same arithmetic on a faster pipe: 0.5
 * for FP64 work done as FP32 on GH100). Every other unit keeps its load. NAN
 * when `from` was not measured; a `to` not measured counts from 0. */
double ncu_units_saved_moving(const ncu_units_t *units, const char *from, const char *to, double factor);

/* The better of the roofline's saving and `other`, a saving another model
 * estimates, capped so that no unit passes its attainable ceiling afterwards
 * (after a change that saves a share g of the time every unit runs at its
 * load x keep / (1 - g)). *other_won says which gave it; NAN without units,
 * the roofline's alone when `other` is NAN. */
double ncu_units_saved_or(const ncu_units_t *units, const ncu_relief_t *relief, double other, bool *other_won);

/* The unit with this key, or NULL. */
const ncu_unit_t *ncu_units_find(const ncu_units_t *units, const char *key);

#endif
