/* ncu_noise: a kernel's counters as another profile of the same kernel could
 * read them, to learn whether a verdict would survive that profile.
 *
 * Two profiles of one kernel never read the same counters: ncu replays each
 * pass, and clocks, DRAM refresh and the GPU's other tenants move every count
 * a little (the committed H200 repeats of kernels.cu and corpus v2 differ by a
 * median 0% and 0.5% at the 90th percentile, up to 25% on rare stall
 * reasons). A kernel whose utilizations sit on one of the analysis' lines
 * (DRAM against L2, the 60% latency line, a cause's 10% lead) can be named two
 * ways on two profiles; the feedback says so instead of sending an agent in a
 * loop two ways (ncu_analyze.c, s_close_calls; docs/ncu.md, "Close calls").
 *
 * The model is bench/stability.py's, which measures the same thing over the
 * corpora: every counter is scaled by its own factor exp(g), g normal with
 * standard deviation sigma (near enough: its tails stop at 3.46 sigma,
 * noise.c); a counter's forms (.sum, .pct_of_peak...) move together, as
 * do the kernel's time in every form (duration, elapsed and
 * active cycles); launch configuration, device attributes, peak rates and the
 * counts ncu derives from the executed SASS (bytes per sector, lanes per
 * instruction, spill instructions), which read the same in every repeat, are
 * left as they are. */
#ifndef NCU_NOISE_H
#define NCU_NOISE_H

#include <stdbool.h>
#include <stdint.h>

#include "ncu_kernel.h"
#include "ncu_metrics.h"

/* Whether the metric reads the same in every profile of a kernel. */
bool ncu_noise_fixed(ncu_metric_t metric);

/* `*out` = `*in` with its measured counters scaled as reading `trial` of
 * the kernel could have them, `sigma` one standard deviation of the log of a
 * factor. Deterministic: the same kernel name, trial and sigma give the same
 * reading on every machine that rounds the same way. */
void ncu_noise_apply(const ncu_kernel_t *in, unsigned trial, double sigma, ncu_kernel_t *out);

#endif
