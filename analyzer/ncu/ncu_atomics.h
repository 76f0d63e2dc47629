/* ncu_atomics: how long a kernel's global atomics take at the least where
 * they contend, served one at a time by the L2 slice that owns their address.
 * The contention findings price it, and every other finding is held to what
 * it leaves: a fix that keeps the atomics cannot beat them. */
#ifndef NCU_ATOMICS_H
#define NCU_ATOMICS_H

#include "ncu_kernel.h"

/* Nanoseconds an L2 slice takes for one lane's atomic on one address, the
 * slowest measured on the H200: corpus v9's float reductions into one address,
 * 524,288 instructions of 32 lanes in 29.5 ms (1.76 ns a lane; corpus v15's
 * integer work queue, its atomics aggregated by the compiler: 0.70 ns an
 * instruction). An upper bound for atomics spread over addresses, which the
 * slices serve in parallel. */
#define NCU_ATOMIC_NS 1.76

/* The L2 atomic units' input activity (percent of peak, averaged over the
 * slices) under which no atomic serialized. A queue of updates to one address
 * keeps the owning slice's unit taking input: corpus v9's fully contended
 * single-address float sum holds the average at 0.35% (a third of one slice's
 * time of 96), every contended kernel of the corpora at 0.30% or more. Under
 * 0.05%, no slice's unit took input for more than about 5% of the kernel:
 * cuDNN's flash attention (2,180 tile-scheduler atomics in 304 us) and its
 * split-K dgrad GEMM (130) read 0.00%, CUB's onesweep passes (a tile counter
 * a block) and PyTorch's reduce 0.01%-0.02%, and none is contended. The line
 * sits in the corpora's empty range between those and the 0.09% and more of
 * kernels with real atomic traffic, not at ncu's printing resolution, where
 * a group's average of launches that each read 0.01 falls under 0.01 or not
 * by rounding (bench/stability.py found CUB's onesweep swinging that way). */
#define NCU_ATOMIC_UNIT_IDLE 0.05

/* One L2 slice's atomic unit taking input throughout, as an average over the
 * H200's slices: corpus v9's single-address float sum, 0.35% (corpus v61's
 * counter 0.34%). Atomics spread over addresses keep more slices busy and are
 * served in parallel: CUB's radix-sort histogram, 59,100 atomics at 6.43%,
 * about 18 slices' worth. */
#define NCU_ATOMIC_ONE_SLICE 0.35

/* The floor's share of the time from which the atomics set it, whatever
 * binds: corpus v61's last-block counter (95%, L2 67% with DRAM 46%) ran
 * 1.65x without it; corpus v62's counter over 16 words of one slice (98%,
 * DRAM 48%) 1.39x. */
#define NCU_ATOMIC_SERIAL_BOUND 0.5

/* The updates L2 serves: a request a lane where the capture counts them at L2
 * (NM_L2_RED_REQUESTS and its kin: --set full, and the default plan since
 * 2026-12-04), else the instructions, one lane each at the least (a lower
 * bound where whole warps update). */
double ncu_atomics_lanes(const ncu_kernel_t *k);

/* The most updates L2 may serve: the lanes it counts where it counts them,
 * else every instruction's 32 lanes (an upper bound). 0 without atomics. */
double ncu_atomics_lanes_most(const ncu_kernel_t *k);

/* The share of the kernel's time its global atomics take served one lane
 * after another on one address at NCU_ATOMIC_NS each (the lanes L2 counts
 * where the capture has them, else the instructions), capped at 1; NAN where they do not contend (no atomics, or the L2 atomic unit under
 * NCU_ATOMIC_UNIT_IDLE or unmeasured). A fence after such an atomic waits for
 * it to be performed: without the fence the warp goes on, but the address's
 * queue does not drain faster (corpus v49's Triton sum, tl.atomic_add's
 * default acq_rel fences around 262,144 atomics on one float: membar 42% of
 * the stall cycles; relaxed, the fences gone, it ran 0.96x; 262,144 x 1.76 ns
 * is 95% of its 487 us). */
double ncu_atomics_serialized(const ncu_kernel_t *k);

/* The same over the slices that serve them, counted from the atomic unit's
 * average activity in units of one contended slice's, capped at 1: the time
 * below which the kernel cannot go while it keeps its atomics. Corpus v64's
 * row sums, every lane's partial added to its row's word: 8.4M lanes at 1.76
 * ns are 26.6 times the kernel's 556 us, over 26.8 slices' worth of activity
 * 99% of it (one store a row ran 14x). NAN where they do not contend. */
double ncu_atomics_floor(const ncu_kernel_t *k);

#endif
