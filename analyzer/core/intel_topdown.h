/* intel_topdown: the frame the unitrace and VTune analyses share (docs/intel.md,
 * "Models"), the same one analyzer/ncu applies to Nsight Compute.
 *
 * The busiest measured unit (device memory, L3, SLM, each XVE pipe) is the
 * bound; every cause carries an estimated gain, the share of the kernel's
 * time its fix would save, from a model of its own; findings are ranked by
 * gain, and a cause under INTEL_GAIN_LEAD does not displace the bound. A unit
 * the capture did not measure is absent, never zero. */
#ifndef INTEL_TOPDOWN_H
#define INTEL_TOPDOWN_H

#include <stdbool.h>
#include <stddef.h>

#include "feedback.h"

/* The same thresholds as the Nsight Compute analysis (NCU's SOLBottleneck
 * rule): a unit at 60% of its peak bounds the kernel, below that on every unit
 * it is latency-bound; 80% is the roof more parallelism can reach. */
#define INTEL_BUSY_PCT 60.0
#define INTEL_ROOF_PCT 80.0
/* A cause is reported from this gain; it leads over the bound from
 * INTEL_GAIN_LEAD (estimates below it are within the models' error); in a
 * latency-bound kernel a cause from INTEL_GAIN_EXPLAINS accounts for the idle
 * time, so the generic latency finding is not added. */
#define INTEL_GAIN_REPORT 0.03
#define INTEL_GAIN_LEAD 0.10
#define INTEL_GAIN_EXPLAINS 0.15

typedef enum { INTEL_UNIT_MEMORY, INTEL_UNIT_PIPE } intel_unit_kind_t;

typedef struct {
    const char *key;    /* stable: "memory", "l3", "slm", "alu0", "alu1", "xmx" */
    const char *name;   /* for people */
    intel_unit_kind_t kind;
    double pct;         /* 0..100 of the unit's peak */
} intel_unit_t;

#define INTEL_UNITS_MAX 8

typedef struct {
    intel_unit_t unit[INTEL_UNITS_MAX];
    size_t count;
} intel_units_t;

/* Adds a measured unit (`pct` NAN: not measured, not added), clamped to
 * 0..100, keeping the table busiest first (ties keep insertion order).
 * `key` and `name` are static strings. */
void intel_units_add(intel_units_t *units, const char *key, const char *name, intel_unit_kind_t kind,
                     double pct);

/* The busiest unit, or NULL when none was measured. */
const intel_unit_t *intel_units_busiest(const intel_units_t *units);
const intel_unit_t *intel_units_find(const intel_units_t *units, const char *key);

/* Scales one unit's utilization by `keep` (0.6 removes 40% of its work) or
 * adds `add` points to it; a copy, for intel_units_drop. */
void intel_units_scale(intel_units_t *units, const char *key, double keep, double add);

/* The roofline argument: time follows the busiest unit, so a change saves
 * how far the busiest utilization drops, (max before - max after) / 100, in
 * 0..1. NAN when nothing was measured. */
double intel_units_drop(const intel_units_t *before, const intel_units_t *after);

/* "busiest units: SLM 96%, ALU0 66%, ...", the top of the table. */
void intel_units_evidence(fb_finding_t *f, const intel_units_t *units);

/* Adds a finding whose gain (0..1, NAN when no model sizes it) comes from
 * `model`, shown as its source "profeed:<model>". importance = speedup =
 * 100 x gain, under 100; without a model importance is 5 and speedup NAN. */
fb_finding_t *intel_finding(feedback_t *fb, size_t kernel, const char *category, double gain,
                            const char *model, const char *title, const char *action);

/* Marks the kernel's leading finding among those added from index `first`:
 * the largest modelled gain (advice without a model never leads), except that a cause under INTEL_GAIN_LEAD does not
 * displace the bound (source profeed:headroom or profeed:latency). Sets the
 * kernel's bottleneck to its category. */
void intel_mark_primary(feedback_t *fb, size_t kernel, size_t first);

/* Records the busiest unit as the kernel's ceiling (ceiling.h). */
void intel_set_ceiling(feedback_t *fb, size_t kernel, const intel_units_t *units);

/* The largest gain among the kernel's findings added from `first`, 0..1. */
double intel_best_gain(const feedback_t *fb, size_t kernel, size_t first);

#endif
