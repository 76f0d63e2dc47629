/* ceiling: how far each kernel is from the roof its limiter puts it
 * against, and whether an agent can stop.
 *
 * The roofline argument the analyses rank by (docs/ncu.md, docs/intel.md):
 * a kernel's time follows its busiest unit, so a kernel whose busiest unit
 * runs at p% of its peak has at most 100/p left from that unit (DRAM at 88%:
 * 1.14x). When every kernel that takes a share of the time that matters is
 * within `within` of its ceiling, and none of its findings still estimates
 * more than that, the feedback says to consider stopping
 * (docs/baselines.md, "When to stop"). */
#ifndef CEILING_H
#define CEILING_H

#include "feedback.h"

/* 1.15x: within 13% of the ceiling, about the gain the cause models' own
 * error spans (docs/ncu.md: tail estimates differ by up to 17 points), so
 * a further gain there is no longer one the analysis can promise. */
#define CEILING_STOP_WITHIN_DEFAULT 1.15

/* At most this much faster from the kernel's ceiling: 100 / ceiling_pct,
 * NAN when no unit was measured. */
double ceiling_left(const fb_kernel_t *kernel);

/* What is left for kernel `kernel` of `fb`: its ceiling's, or more when a
 * finding still estimates a larger speedup (the unit is busy with work the
 * fix removes, as uncoalesced loads fill L2 with unused sectors). NAN when
 * no unit was measured. */
double ceiling_kernel_left(const feedback_t *fb, size_t kernel);

/* Judges the kernels taking at least `min_share` of the time (every analyzed
 * kernel when shares are unknown) and sets the feedback's stop verdict. */
void ceiling_judge(feedback_t *fb, double min_share, double within);

#endif
