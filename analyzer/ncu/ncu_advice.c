#include "ncu_advice.h"

#include <string.h>

#include "ncu_metrics.h"

static const struct {
    const char *category;
    const char *action;
} s_actions[] = {
    {"dram_bound", "Move fewer bytes: fuse this kernel with its producer or consumer, store data "
                   "in narrower types (bf16/fp8/int8), and read each byte once; near the DRAM roof "
                   "only less traffic helps."},
    {"dram_below_roof", "Reach the DRAM roof first: keep more bytes in flight per thread (vector "
                        "loads, several independent loads before use) and enough warps; then move "
                        "fewer bytes (fusion, narrower types)."},
    /* DRAM at its rate for scattered sectors (ncu_units.h): bandwidth is not
     * the limit, the rows are; corpus v46's four gathers a thread from 1 GB,
     * DRAM 52%, ran 12.6x with the same reads in order. */
    {"dram_scattered", "DRAM serves scattered 32-byte sectors at about half its peak: each is "
                       "fetched with its neighbour and opens a row of its own. Read neighbouring "
                       "data together (sort or bucket the indices, gather whole lines or records, "
                       "place the fields read together side by side), or keep a table small "
                       "enough for L2."},
    {"memory_bound", "Find which memory unit saturates (profile with --section SpeedOfLight and "
                     "MemoryWorkloadAnalysis) and cut its traffic."},
    {"dram_or_l2", "Move fewer bytes either way: read each byte once (data read again belongs in "
                   "registers or shared memory, which also relieves L2 if its extra work is "
                   "re-reads), fuse with the producer or consumer, store narrower types. The "
                   "default plan's load sectors tell which level to relieve."},
    {"uncoalesced_access", "Make consecutive threads (threadIdx.x) touch consecutive addresses: "
                           "swap the index roles, stage the strided side through a shared-memory "
                           "tile (e.g. 32x33 floats, padded), or change the layout to "
                           "structure-of-arrays."},
    /* Every lane in a sector of its own that nothing reuses: a stride or a
     * scatter, which the counters cannot tell apart. For scatters the lever is
     * the layout: corpus v8's chase, a warp's lanes on one 128-byte node,
     * 11.0x; corpus v41's random chase through 256 MB, the 32 chains of a
     * warp moving line to line together, 2.6x under ncu's cold caches. */
    {"uncoalesced_scattered", "Each lane reads a sector of its own and nothing reuses the rest. If the "
                              "addresses follow a stride, make consecutive threads (threadIdx.x) touch "
                              "consecutive addresses (swap the index roles, or stage through a "
                              "shared-memory tile). If they are scattered (a gather, a hash probe, a "
                              "pointer chase), change the layout so that what a warp reads lies in one "
                              "128-byte line: the lanes of a warp on one node or record (wider nodes, the "
                              "fields read together side by side), or sorted or bucketed indices so "
                              "neighbouring lanes read neighbouring data."},
    /* Measured on the H200 (corpora v7, v8, v45 and h200-v7/after/): the
     * writes in destination order ran 7.2x-18.2x; the scatter as a gather
     * 2.0x-2.3x (no read-modify-write, but a sector read for each element);
     * 16-byte stores paired into whole sectors, still scattered, 2.2x. */
    {"uncoalesced_partial_stores", "Each store writes part of a sector that L2 must first read from DRAM. "
                                   "Write whole sectors, best in destination order: sort or bucket the "
                                   "writes by destination (or by block of the output) so that a warp's "
                                   "stores fill the same 32-byte sectors; for a strided layout, stage the "
                                   "output through a shared-memory tile and write it row by row. Where the "
                                   "order cannot change, widen each write to a whole 32-byte sector, or "
                                   "turn the scatter into a gather (out[i] = in[inverse[i]]): no "
                                   "read-modify-write, though each load still reads a sector (worth "
                                   "about 2x, against several times for ordered writes)."},
    {"uncoalesced_fragments", "The loads feed tensor cores: matrix fragments read straight from global "
                              "memory arrive in narrow pieces, each tile read again by every warp that "
                              "needs it. Stage the A and B tiles in shared memory with 16-byte copies "
                              "(cp.async or TMA), read the fragments from there (ldmatrix, or "
                              "wmma::load_matrix_sync on shared memory) and give each warp several "
                              "fragments (2x2 or more) so each loaded tile feeds more MMAs."},
    {"bank_conflicts", "Pad the shared-memory array (e.g. [32][33] instead of [32][32]) or swizzle "
                       "the index so the 32 lanes of a warp hit 32 different banks."},
    {"bank_conflicts_unsplit", "Pad the shared-memory array (e.g. [32][33] instead of [32][32]) or swizzle "
                               "the index so the 32 lanes of a warp hit 32 different banks. If the replayed "
                               "accesses are atomics on a few shared addresses (a histogram of few bins), "
                               "padding does not help: give each warp its own copy of the bins, or add equal "
                               "keys within the warp first (__match_any_sync) and issue one atomic per key."},
    {"l1_bound", "Tile the loops: stage blocks of the inputs in shared memory (and registers) so "
                 "each value is loaded from global memory once per block, not once per thread."},
    {"l1_bound_shared", "Do more work per shared-memory access: register-block (several outputs "
                        "per thread), load wider (float4, ldmatrix), and remove any bank "
                        "conflicts; or move the inner product onto tensor cores (mma/wgmma)."},
    {"l2_bound", "Improve locality: block the computation so working sets stay in L1/shared "
                 "memory, and order blocks so neighbours reuse the same L2 lines."},
    /* L2 returning each byte DRAM reads once: its work is DRAM's traffic
     * passing through, and where it is named rather than DRAM (by a few
     * points of either reading) the lever is the DRAM bound's. */
    {"l2_bound_stream", "L2's work is DRAM's traffic passing through, each byte read once: move fewer "
                        "bytes (fuse this kernel with its producer or consumer, store narrower types), "
                        "and keep accesses wide and coalesced so L2 serves them in fewer requests."},
    {"compute", "Cut instructions per result: hoist invariant work out of loops, simplify index "
                "math, use intrinsics."},
    {"compute_fma", "Cut FP32 work per result (hoist invariants, reuse partial results), or move "
                    "the math onto tensor cores (TF32/BF16 mma) if precision allows; packed "
                    "half2/bf16x2 math doubles the rate for 16-bit data."},
    {"compute_fmaheavy", "Integer multiplies (IMAD, IMUL: index math, hashes) run only on the FMA "
                         "pipe's heavy half: hoist index multiplies out of loops (strength-reduce "
                         "them to additions), use shifts for power-of-two factors, and keep per-"
                         "element math in FP32, which issues to both halves."},
    {"compute_alu", "Reduce integer and logic instructions: hoist index arithmetic out of loops, "
                    "use shifts and masks for power-of-two sizes, avoid 64-bit integer math."},
    {"compute_fp64", "Use FP32 (or mixed precision) where accuracy allows: FP64 runs at half the "
                     "FP32 rate or less."},
    {"compute_xu", "Take work off the XU pipe: it runs transcendentals, reciprocals, square roots, "
                   "type conversions and bit counts (popc, clz, ffs, brev: two XU instructions for a "
                   "64-bit word) at a quarter of the FMA rate or less. Use fast-math intrinsics only "
                   "where they map to fewer XU ops, hoist or tabulate repeated calls, replace "
                   "divisions by multiplications, avoid int/float conversions in inner loops; for bit counts, "
                   "count part of the words with shifts, masks and adds on the ALU pipe (about a "
                   "dozen ALU instructions a 32-bit word), which runs beside the XU."},
    {"compute_lsu", "Issue fewer memory instructions: load wider (float4, ld.128), keep reused "
                    "values in registers, and stage shared data through shared memory once."},
    {"compute_lsu_shuffles", "Do fewer warp shuffles per result: reduce in registers before the "
                             "butterfly, use __reduce_add_sync/redux.sync for integers, combine "
                             "several all-reduces into one pass over wider values, or reduce "
                             "through shared memory once per block."},
    {"l1_bound_traffic", "Cut the L1 traffic: load wider (float4), reuse loaded values from "
                         "registers, and keep only the data each thread needs in flight."},
    {"compute_adu", "The ADU runs barriers, branches and constant-bank loads: remove __syncthreads "
                    "that no data dependency needs, make branches uniform per warp, and let a warp's "
                    "lanes read one constant address at a time (per-lane tables belong in global or "
                    "shared memory)."},
    {"compute_cbu", "Simplify warp-level control flow: fewer divergent branches, votes and "
                    "warp-synchronous loops."},
    {"compute_uniform", "Uniform (per-warp scalar) work dominates: hoist loop-invariant index "
                        "math and move per-block constants out of the loop."},
    {"compute_tex", "Texture fetches saturate the TEX pipe: use plain global loads (ld.global.nc) "
                    "where filtering is not needed, and fetch wider texels."},
    {"compute_issue", "The instruction count sets the time, not one pipe: cut instructions per "
                      "result (simpler index math, wider loads, fewer conversions, loop unrolling "
                      "with hoisted invariants)."},
    {"compute_tensor", "The tensor pipe is saturated: use a lower precision (FP8/BF16) or do less "
                       "work (algorithmic savings); the kernel is at its compute roof."},
    {"small_grid", "Launch more blocks than there are SMs: split the work over more, smaller "
                   "blocks, or batch independent problems into one launch."},
    {"small_grid_launches", "Batch or fuse: each launch is a few microseconds on a few SMs, so "
                            "launch overhead and an idle GPU dominate. Put the repeated launches "
                            "into one kernel (a loop over problems, or a CUDA graph at least) and "
                            "give it enough blocks to fill every SM."},
    {"small_grid_warps", "Launch more warps: larger blocks (128-256 threads) and more of them, "
                         "at least several warps per SM scheduler, so loads from many warps "
                         "overlap."},
    {"contention", "Privatize the updates: accumulate per block in shared memory (or per warp with "
                   "shuffles) and issue one global atomic per block, or spread updates over more "
                   "addresses."},
    {"contention_shared", "Spread the updates: give each warp its own copy of the bins (or "
                          "accumulate in registers and combine with shuffles), then merge the "
                          "copies once per block; hot bins updated by every lane serialize."},
    {"l2_atomics", "Aggregate before the atomics reach L2: combine per warp (shuffles or "
                   "__reduce_add_sync) or per block in shared memory and issue one global atomic "
                   "per group; sorting updates by address also merges them."},
    {"occupancy_registers", "Lower register use: cap it with __launch_bounds__ (or -maxrregcount), "
                            "shorten live ranges, unroll less."},
    {"occupancy_shared", "Use less shared memory per block (smaller tiles, reuse buffers) so more "
                         "blocks fit on an SM."},
    {"occupancy_warps", "Use smaller blocks (half the threads, the same work per thread) so whole "
                        "blocks fit the SM's warp slots more evenly."},
    {"occupancy_blocks", "Use larger blocks: the SM's block limit is reached before its warp "
                         "slots fill."},
    {"occupancy_achieved", "Even out the work: give blocks equal work, launch several waves, and "
                           "avoid long-running stragglers."},
    /* How to loop matters for streams: corpus v40's 320 MB y = 2x at two
     * blocks a SM, 1.21 waves, ran 1.22x faster as one wave with a
     * grid-stride loop (DRAM 77%) and 1.02x as one wave of contiguous shares,
     * 264 streams 1.2 MB apart (DRAM 64%). */
    {"tail_effect", "Size the grid to a whole number of waves (a multiple of SMs x blocks per SM), "
                    "or launch one wave and loop over the work grid-stride (thread t of block b takes "
                    "item b x blockDim + t, then every gridDim x blockDim-th), so the blocks in flight "
                    "touch adjacent addresses; a contiguous share a block puts their streams far apart, "
                    "which DRAM serves slower."},
    {"local_memory", "Keep the per-thread array in registers: index it only with compile-time "
                     "constants (unroll the loops that index it), or move it to shared memory "
                     "(one slice per thread) when it must be indexed at run time."},
    {"occupancy_barriers", "Use fewer named barriers per block."},
    {"register_spill", "Reduce register pressure: fewer live values, less unrolling, or allow "
                       "more registers per thread (__launch_bounds__ with fewer threads)."},
    {"predication", "Give the predicated work to whole warps: bucket or sort the items so the lanes that do "
                    "it sit together, or hand work out per warp instead of per lane; lanes predicated off "
                    "still take the issue slot and the pipe."},
    {"constant_divergent", "Constant memory serves one address per warp at a time: read a table that lanes "
                           "index differently from global memory (const __restrict__, cached in L1) or from "
                           "shared memory, and keep __constant__ for values every lane of a warp reads alike."},
    {"uncoalesced_misaligned", "Most sectors are used whole; find the accesses that are not: a warp's 128 bytes "
                               "starting off a 32-byte boundary span a sector more than they need (pad rows or "
                               "offset the base to 32 bytes, or load aligned vectors and shift values through "
                               "registers or shuffles; a sliding window can reuse loaded values across "
                               "outputs), and a value every lane reads can be loaded once per warp and "
                               "broadcast with a shuffle."},
    {"divergence_loads", "Give each warp several items: a few lanes per item (4 or 8 lanes per row, "
                         "several rows a warp) instead of a warp per item, so each load a warp issues "
                         "carries all 32 lanes and the warp keeps several items' loads in flight."},
    {"divergence", "Make whole warps take the same path: sort or bucket the inputs, or move the "
                   "branch to warp or block granularity."},
    {"warp_stall", "Expose more independent work per warp (ILP) so stalls overlap."},
    {"issue_slots", "Raise the issue rate: more eligible warps or more independent instructions "
                    "per warp."},
    {"fp_fusion", "Fuse separate multiplies and adds into FMAs (a*b+c, fmaf; avoid -fmad=false)."},
    {"block_launch", "Give each thread several elements (4-8, with wide loads, or a grid-stride loop over "
                     "a grid of a few blocks per SM) so the grid has fewer, longer blocks: an SM "
                     "starts blocks at a bounded rate and holds only a few while they wait on "
                     "memory, whatever each does."},
    {"load_imbalance", "Spread the work evenly across SMs and memory slices (balanced blocks, "
                       "interleaved addresses)."},
    {"launch_config", "Use a block size that is a multiple of 32 threads."},
    {"ncu_rule", "See NCU's description above."},
};

const char *ncu_advice_action(const char *category)
{
    for (size_t i = 0; i < sizeof s_actions / sizeof s_actions[0]; i++)
        if (strcmp(s_actions[i].category, category) == 0)
            return s_actions[i].action;
    return "";
}

static const struct {
    int metric;
    const char *reason;
    const char *action;
} s_stalls[] = {
    {NM_STALL_LONG_SCOREBOARD, "global/local memory results (long scoreboard)",
     "Keep more independent loads in flight: load several elements per thread before using them, "
     "unroll, or prefetch into shared memory (cp.async/TMA)."},
    {NM_STALL_SHORT_SCOREBOARD, "shared-memory or special-function results (short scoreboard)",
     "Cut shared-memory round trips and bank conflicts; keep reused values in registers."},
    {NM_STALL_MIO_THROTTLE, "a full MIO queue (shared memory, special math)",
     "Issue fewer, wider shared-memory accesses and remove bank conflicts."},
    {NM_STALL_LG_THROTTLE, "a full local/global memory queue (too many memory instructions)",
     "Use wider accesses (float4 instead of float) so fewer memory instructions move the same "
     "bytes."},
    {NM_STALL_BARRIER, "barriers (__syncthreads)",
     "Balance the work between barriers, use fewer barriers, or smaller blocks."},
    {NM_STALL_DRAIN, "stores draining at exit",
     "Coalesce the final stores and spread writes through the kernel."},
    {NM_STALL_MATH_THROTTLE, "a busy math pipe", "Spread work across pipes or use a faster one "
                                                 "(tensor cores, half2)."},
    {NM_STALL_WAIT, "fixed-latency dependencies", "Interleave independent instructions (ILP)."},
    {NM_STALL_BRANCH, "branch targets", "Reduce divergent and data-dependent branches."},
    {NM_STALL_DISPATCH, "dispatch", "Reduce pipeline contention between warps."},
    /* Triton's atomics fence by default (sem="acq_rel"): corpus v49's sum. */
    {NM_STALL_MEMBAR, "memory barriers",
     "Remove unneeded __threadfence() and fences; an atomic that orders nothing needs none (in Triton, "
     "tl.atomic_* fence by default: pass sem=\"relaxed\")."},
    {NM_STALL_IMC_MISS, "constant-cache misses", "Make warps read the same constant address."},
    {NM_STALL_NO_INSTRUCTION, "instruction fetch", "Shrink the hot loop's code (less unrolling)."},
    {NM_STALL_GMMA, "wgmma completion", "Overlap wgmma with loads in a deeper async pipeline."},
    {NM_STALL_TEX_THROTTLE, "a full texture queue", "Issue fewer texture/surface requests."},
    {NM_STALL_SLEEPING, "sleeping (nanosleep/backoff)", "Shorten spin-waits and back-off sleeps."},
    {NM_STALL_MISC, "miscellaneous reasons", "Look at the source-level stall sampling."},
    {NM_STALL_NOT_SELECTED, "the scheduler picking another warp", "Nothing: warps are ready."},
};

const char *ncu_advice_stall_reason(int stall_metric)
{
    for (size_t i = 0; i < sizeof s_stalls / sizeof s_stalls[0]; i++)
        if (s_stalls[i].metric == stall_metric)
            return s_stalls[i].reason;
    return "other reasons";
}

const char *ncu_advice_stall_action(int stall_metric)
{
    for (size_t i = 0; i < sizeof s_stalls / sizeof s_stalls[0]; i++)
        if (s_stalls[i].metric == stall_metric)
            return s_stalls[i].action;
    return ncu_advice_action("warp_stall");
}
