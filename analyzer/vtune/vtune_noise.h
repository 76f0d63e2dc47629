/* vtune_noise: a kernel's VTune columns as another collection of the same
 * kernel could read them, for its close call (close_call.h).
 *
 * VTune samples its GPU metrics, so two collections never read the same
 * percentages and bandwidths; each such column is scaled by its own factor
 * (noise.h), the kernel's times by one factor together. What the kernel's
 * code and launch fix is read as it is: the instance count, SIMD width,
 * spill size, the peak occupancy and its limiters (computed from the work
 * sizes), and the instruction counts. */
#ifndef VTUNE_NOISE_H
#define VTUNE_NOISE_H

#include "vtune_report.h"

/* `*out` = `*in` with its sampled columns scaled as reading `reading` of
 * the kernel could have them, `sigma` one standard deviation of the log of a
 * factor. Deterministic, as noise.h's draws are. */
void vtune_noise_apply(const vtune_kernel_t *in, unsigned reading, double sigma, vtune_kernel_t *out);

#endif
