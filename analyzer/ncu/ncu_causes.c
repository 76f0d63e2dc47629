/* ncu_causes: the models that say what wastes the kernel's time, each with
 * its estimated gain (the share of the kernel's time the fix would save).
 *
 * A cause either wastes the unit that bounds the kernel (idle and
 * predicated-off lanes in ncu_lanes.c; sectors fetched and not used,
 * shared-memory replays and local-memory traffic in ncu_traffic.c), leaves
 * SMs without work (a grid smaller than the GPU, a partial last wave, uneven
 * blocks), or leaves warps waiting with nothing else to issue (too few warps,
 * contended atomics, barriers). docs/ncu.md ("Models") gives each formula
 * and why it holds; here each function says what it assumes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ncu_advice.h"
#include "ncu_atomics.h"
#include "analysis.h"
#include "ncu_ctx.h"

static double V(const ncu_ctx_t *c, ncu_metric_t m) { return ncu_ctx_v(c, m); }
static double s_or0(double x) { return analysis_has(x) ? x : 0; }

static double s_active(const ncu_ctx_t *c) { return analysis_has(c->idle) ? 1 - c->idle : 1; }

/* Stall reasons that more resident warps would hide: waits on results
 * (memory, shared memory, fixed-latency math), branch targets, constants. */
static double s_latency_share(const ncu_ctx_t *c)
{
    static const ncu_metric_t reasons[] = {
        NM_STALL_LONG_SCOREBOARD, NM_STALL_SHORT_SCOREBOARD, NM_STALL_WAIT,
        NM_STALL_DRAIN,           NM_STALL_IMC_MISS,         NM_STALL_BRANCH,
    };
    return ncu_ctx_stall_sum(c, reasons, sizeof reasons / sizeof reasons[0]);
}

/* ----- idle SMs: grid size, waves, imbalance -------------------------------- */

double ncu_ctx_blocks_per_sm(const ncu_ctx_t *c)
{
    static const ncu_metric_t limits[] = {NM_OCC_LIMIT_REGISTERS, NM_OCC_LIMIT_SMEM, NM_OCC_LIMIT_WARPS,
                                          NM_OCC_LIMIT_BLOCKS, NM_OCC_LIMIT_BARRIERS};
    double best = NAN;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        double x = V(c, limits[i]);
        if (analysis_has(x) && x > 0 && (!analysis_has(best) || x < best))
            best = x;
    }
    return best;
}

/* Waves of blocks over the GPU. ncu prints launch__waves_per_multiprocessor
 * with two decimals, which turns 265 blocks of 264 per wave into "1.00":
 * computed from grid and limits where they are known. */
static double s_waves(const ncu_ctx_t *c)
{
    double grid = V(c, NM_GRID_SIZE), sms = V(c, NM_SM_COUNT), per_sm = ncu_ctx_blocks_per_sm(c);
    if (analysis_has(grid) && analysis_has(sms) && analysis_has(per_sm) && sms > 0)
        return grid / (sms * per_sm);
    return V(c, NM_WAVES);
}

/* What work on the idle SMs could buy at most: L2 and DRAM serve every SM,
 * so the SMs that run may already hold them near their attainable peak, and
 * more SMs then wait on the same bandwidth. Corpus v15's row sums: 64 blocks
 * for 132 SMs (52% idle) held DRAM at 84%; 16 blocks a row ran 1.11x, not
 * 2.1x. Returns 1 - the higher of their loads (utilization / attainable), 1
 * when neither was measured. */
static double s_shared_headroom(const ncu_ctx_t *c)
{
    static const char *const shared[] = {"dram", "l2"};
    double room = 1;
    for (size_t i = 0; i < sizeof shared / sizeof shared[0]; i++) {
        const ncu_unit_t *u = ncu_units_find(&c->units, shared[i]);
        if (u)
            room = fmin(room, 1 - fmin(u->pct / u->attain, 1));
    }
    return room;
}

/* Says so when the shared units' headroom, not the cause's own model (its
 * gain `uncapped`), sized the gain: only then does a measured unit hold it. */
static void s_shared_evidence(const ncu_ctx_t *c, fb_finding_t *f, double uncapped, double gain)
{
    const ncu_unit_t *dram = ncu_units_find(&c->units, "dram"), *l2 = ncu_units_find(&c->units, "l2");
    if (!(gain < uncapped) || (!dram && !l2))
        return;
    char held[96] = "";
    if (dram && l2)
        snprintf(held, sizeof held, "DRAM at %.0f%% and L2 at %.0f%%", dram->pct, l2->pct);
    else
        snprintf(held, sizeof held, "%s at %.0f%%", dram ? "DRAM" : "L2", dram ? dram->pct : l2->pct);
    finding_add_evidence(f, "shared_headroom", 100 * gain, "%",
                         "the SMs that run hold %s: work on the idle ones saves at most %.0f%% of the time",
                         held, 100 * gain);
}

/* Idle SMs drag every unit's utilization down, so a tail can make a busy
 * kernel look latency-bound; it explains the latency only where the units,
 * over the time the SMs worked (utilization / (1 - idle)), would reach the
 * latency threshold. Blocks that are latency-bound while they run keep the
 * latency finding beside the tail, and the two levers are separate: more
 * work in flight shortens every block, whole waves remove the idle end
 * (corpus v30's chase over 2.1 waves: SMs idle 24%, the units at 31%, 40%
 * over the active time; a chain a warp over whole waves ran 1.25x, four
 * chains a warp walked together 1.93x). */
static bool s_idle_explains_latency(const ncu_ctx_t *c, double idle)
{
    if (!c->latency || !analysis_has(idle) || idle >= 1)
        return true;
    return c->busiest / (1 - idle) >= NCU_SOL_LATENCY;
}

/* A grid smaller than the GPU, a partial last wave, or blocks of unequal
 * length leave SMs with no work. Model: gain = the share of the elapsed time
 * SMs were idle (sm__cycles_active against the elapsed cycles) when measured;
 * otherwise 1 - blocks/SMs for a small grid and (1 - last wave's fill) /
 * waves for a tail, both assuming blocks of equal length. */
static void s_idle_sms(ncu_ctx_t *c)
{
    double grid = V(c, NM_GRID_SIZE), sms = V(c, NM_SM_COUNT);
    double waves = s_waves(c);
    char title[320];
    if (analysis_has(grid) && analysis_has(sms)) {
        ncu_ctx_judged(c, "small_grid");
        ncu_ctx_judged(c, "tail_effect");
        if (analysis_has(c->idle))
            ncu_ctx_judged(c, "load_imbalance");
    }
    if (analysis_has(grid) && analysis_has(sms) && grid > 0 && grid < sms) {
        /* More blocks fill the idle SMs and, where the launch left the SMs that
         * run under their theoretical occupancy with nothing busy (latency-bound),
         * put more warps on each of them too: the too-few-warps lever
         * (s_parallelism) multiplies the idle SMs'. Corpus v16's sum over 96
         * blocks of 16 warps (25% occupancy of 100%): 132/96 x 4 = 5.5x, capped
         * by DRAM's and L2's headroom at 6.3x; 528 blocks measured 4.73x. */
        double idle = 1 - grid / sms, speedup = sms / grid;
        double theo = V(c, NM_OCC_THEORETICAL), ach = V(c, NM_OCC_ACHIEVED);
        bool few_warps = c->latency && analysis_has(theo) && analysis_has(ach) && ach > 0 && theo > ach;
        if (few_warps)
            speedup *= theo / ach;
        double uncapped = 1 - 1 / speedup, gain = fmin(uncapped, s_shared_headroom(c));
        double launches = (double) c->k->launches, t = V(c, NM_DURATION);
        int n = snprintf(title, sizeof title,
                         "Grid too small: %.0f block%s for %.0f SMs, so %.0f%% of the GPU has no work",
                         grid, grid == 1 ? "" : "s", sms, 100 * idle);
        /* Where the warps, not the idle SMs, make most of the estimate (their
         * factor the larger), the title says so (cuBLAS's split-K reduce: 128 blocks for 132 SMs at
         * 23% occupancy of 100%). */
        if (few_warps && theo / ach > sms / grid && n > 0 && (size_t) n < sizeof title)
            snprintf(title + n, sizeof title - (size_t) n,
                     ", and the SMs that run hold %.0f%% occupancy of the %.0f%% their limits allow", ach, theo);
        fb_finding_t *f = ncu_ctx_finding(c, "small_grid", gain, "idle_sms", title,
                                          ncu_advice_action(launches > 1 && analysis_has(t) && t / launches < 10e3
                                                                ? "small_grid_launches" : "small_grid"));
        if (!f)
            return;
        finding_add_evidence(f, "launch__grid_size", grid, "block", "grid of %.0f block%s", grid,
                             grid == 1 ? "" : "s");
        finding_add_evidence(f, "launch__sm_count", sms, "SM", "%.0f SMs on the device", sms);
        if (launches > 1 && analysis_has(t))
            finding_add_evidence(f, "gpu__time_duration.sum", t / launches, "ns",
                                 "%zu launches of %.1f us each", c->k->launches, t / launches / 1e3);
        if (analysis_has(c->idle))
            finding_add_evidence(f, "sm__cycles_active.avg", 100 * c->idle, "%",
                                 "SMs idle %.0f%% of the elapsed cycles", 100 * c->idle);
        s_shared_evidence(c, f, uncapped, gain);
        c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
        return;
    }
    if (!analysis_has(waves) || waves < 1)
        return; /* under one wave every SM has work: a question of warps, below */
    /* The last wave idles the SMs it leaves without a block: with L blocks
     * left for S SMs, 1 - min(L, S)/S of them for 1/ceil(waves) of the time.
     * An SM that gets any block is busy, if less occupied (a question of
     * warps, not of idle SMs). Without the limits, L is unknown: the
     * fraction of the last wave stands in for it. */
    double frac = waves - floor(waves);
    double per_sm_blocks = ncu_ctx_blocks_per_sm(c);
    double left = analysis_has(grid) && analysis_has(sms) && sms > 0 && analysis_has(per_sm_blocks)
                      ? grid - floor(waves) * sms * per_sm_blocks
                      : NAN;
    double idle_share = analysis_has(left) ? 1 - fmin(left, sms) / sms : 1 - frac;
    double model = frac > 1e-6 ? idle_share / ceil(waves) : 0;
    bool tail = frac > 1e-6 && model >= NCU_GAIN_REPORT;
    double idle = analysis_has(c->idle) ? c->idle : model;
    /* (fmin would take the headroom alone for an idle share no model gave.) */
    double gain = analysis_has(idle) ? fmin(idle, s_shared_headroom(c)) : NAN;
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return;
    if (tail) {
        if (analysis_has(left) && left >= 1)
            snprintf(title, sizeof title,
                     "Tail effect: %.0f blocks make %.3f waves of %.0f; the last wave runs %.0f block%s "
                     "while the rest of the GPU waits", grid, waves, sms * per_sm_blocks, left,
                     left == 1 ? "" : "s");
        else
            snprintf(title, sizeof title,
                     "Tail effect: %.2f waves per SM, so the last wave runs %.0f%% full", waves,
                     100 * frac);
    } else {
        snprintf(title, sizeof title,
                 "Load imbalance: SMs were idle %.0f%% of the kernel's time although the grid fills "
                 "%.1f waves: some blocks run much longer than others", 100 * idle, waves);
    }
    fb_finding_t *f = ncu_ctx_finding(c, tail ? "tail_effect" : "load_imbalance", gain,
                                      analysis_has(c->idle) ? "idle_sms" : "waves", title,
                                      ncu_advice_action(tail ? "tail_effect" : "load_imbalance"));
    if (!f)
        return;
    finding_add_evidence(f, "launch__waves_per_multiprocessor", waves, "", "%.3g waves per SM", waves);
    if (analysis_has(c->idle))
        finding_add_evidence(f, "sm__cycles_active.avg", 100 * c->idle, "%",
                             "SMs idle %.0f%% of the elapsed cycles", 100 * c->idle);
    if (tail && analysis_has(c->idle))
        finding_add_evidence(f, "model", 100 * model, "%",
                             "equal-length blocks would predict %.0f%% idle", 100 * model);
    s_shared_evidence(c, f, idle, gain);
    c->latency_explained = c->latency_explained || (ncu_ctx_explains(f) && s_idle_explains_latency(c, idle));
}

/* ----- too few warps: the launch, or the occupancy limiters ---------------- */

static const struct {
    ncu_metric_t metric;
    const char *name, *advice;
} s_limits[] = {
    {NM_OCC_LIMIT_REGISTERS, "registers per thread", "occupancy_registers"},
    {NM_OCC_LIMIT_SMEM, "shared memory per block", "occupancy_shared"},
    {NM_OCC_LIMIT_WARPS, "block size (warps per block)", "occupancy_warps"},
    {NM_OCC_LIMIT_BLOCKS, "the blocks-per-SM limit", "occupancy_blocks"},
    {NM_OCC_LIMIT_BARRIERS, "barriers per block", "occupancy_barriers"},
};

/* Stall reasons more resident blocks would hide: the latency reasons, and
 * barrier waits, which another block's warps fill (a block's own extra warps
 * would wait at the same barrier). With one block per SM a barrier idles the
 * whole SM and a second block fills it; with n blocks the other n - 1 already
 * fill part of it, so the barrier share counts 1/n. */
static double s_block_hidden_share(const ncu_ctx_t *c, double blocks)
{
    double latency = s_latency_share(c), barrier = ncu_ctx_stall_share(c, NM_STALL_BARRIER);
    if (!analysis_has(latency))
        return latency;
    return fmin(latency + s_or0(barrier) / (analysis_has(blocks) && blocks > 1 ? blocks : 1), 1);
}

/* How much faster more warps let the kernel go: the least room (attainable
 * / utilization) over every unit measured. A unit already in its high
 * throughput zone (NCU_SOL_HIGH) has none for this lever: near saturation
 * its queues, not the warps' count, set the latency. The room closes over
 * the NCU_ROOM_CLOSING points below that line rather than at it, about a
 * throughput reading's spread between profiles, so that a unit read a point
 * either side of 80% does not turn the lever's whole estimate on and off
 * (bench/stability.py: corpus v5's spilling SGEMM, L2 at 80%-81%, an
 * occupancy finding of 10% that came and went). Wider, it would contradict
 * a measurement: corpus v5's shared-memory phase kernel, L2 at 76%, ran
 * 1.32x with the warps that fit. */
#define NCU_ROOM_CLOSING 3.0
static double s_room_of(const ncu_unit_t *unit)
{
    double r = ncu_unit_room(unit);
    if (unit->pct >= NCU_SOL_HIGH)
        return 1;
    if (unit->pct > NCU_SOL_HIGH - NCU_ROOM_CLOSING)
        r = 1 + (r - 1) * (NCU_SOL_HIGH - unit->pct) / NCU_ROOM_CLOSING;
    return r;
}

static double s_room(const ncu_ctx_t *c)
{
    double room = NAN;
    for (size_t i = 0; i < c->units.count; i++) {
        double r = s_room_of(&c->units.unit[i]);
        room = analysis_has(room) ? fmin(room, r) : r;
    }
    if (!analysis_has(room))
        room = c->busiest > 0 ? fmax(NCU_ATTAIN_ONCHIP / c->busiest, 1) : 10;
    return room;
}

/* GH100's register file (the occupancy calculator's numbers): 64K registers
 * per SM, allocated per warp in units of 256 (8 per thread), at most 64
 * warps and 32 blocks per SM. */
#define SM_REGISTERS 65536.0
#define SM_WARPS 64.0
#define SM_BLOCKS 32.0

static double s_reg_alloc(double regs) { return ceil(regs / 8) * 8; }

/* What capping registers to fit `blocks` blocks of `warps` warps costs:
 * ptxas allocates close to the live maximum, so a cap that takes away more
 * than a few registers spills live values into local memory. Measured on the
 * H200 (corpus v5, tests/fixtures/ncu/h200-v5/README.md): a cap from 38 to
 * 32 registers (-16%) made a 1024-thread softmax 1.37x faster; caps of
 * -37% to -50% (57, 64 -> 32; SGEMM 128 -> 80) made the kernels 1.2x to 2.2x
 * slower. Model: worth its occupancy in full up to a 20% cut, nothing from
 * 30%, linearly between. */
static double s_cap_worth(double regs, double blocks, double warps)
{
    double target = floor(SM_REGISTERS / (blocks * warps * 32) / 8) * 8;
    if (target >= s_reg_alloc(regs))
        return 1;
    double cut = 1 - target / regs;
    return cut <= 0.2 ? 1 : cut >= 0.3 ? 0 : (0.3 - cut) / 0.1;
}

/* The register limiter's two levers, best first: smaller blocks with the
 * same registers (whole blocks waste the register file: 1024-thread blocks
 * of 40-register threads fit one per SM, 32 warps, where 512-thread ones fit
 * three, 48 warps), or a cap on registers, discounted by s_cap_worth. The
 * block size is a lever only where registers bind `alone`: a tied limit
 * (shared memory, say) holds smaller blocks to the same warps. Sets the
 * resident warps the lever reaches relative to today (*grow) and whether it
 * is the block size; false when neither lever adds warps. */
static bool s_register_lever(const ncu_ctx_t *c, double current, double next, bool alone, double *grow,
                             double *worth, bool *smaller_blocks, double *to_warps)
{
    double regs = V(c, NM_REGISTERS), threads = V(c, NM_BLOCK_SIZE);
    if (!analysis_has(regs) || regs <= 0 || !analysis_has(threads) || threads <= 0)
        return false;
    double warps = ceil(threads / 32), now = current * warps;
    double best_smaller = now, best_b = warps;
    for (double b = floor(warps / 2); b >= 1; b = floor(b / 2)) {
        double blocks = fmin(floor(SM_REGISTERS / (s_reg_alloc(regs) * 32 * b)), SM_BLOCKS);
        double w = fmin(blocks * b, SM_WARPS);
        if (w > best_smaller) {
            best_smaller = w;
            best_b = b;
        }
    }
    double cap_grow = 1, cap_worth = 0;
    /* No SM holds more blocks than its cap or its warps allow, whatever a
     * capture says the next limit is (a hostile one said 1e9: this loop ran
     * for seconds). */
    double fit = fmin(floor(SM_WARPS / warps), SM_BLOCKS);
    double last = analysis_has(next) ? fmin(next, fit) : fit;
    for (double blocks = current + 1; blocks <= last; blocks++) {
        double w = s_cap_worth(regs, blocks, warps);
        if (w > 0 && (blocks / current) * w > cap_grow * cap_worth) {
            cap_grow = blocks / current;
            cap_worth = w;
        }
    }
    double smaller_grow = best_smaller / now;
    *smaller_blocks = alone && smaller_grow > 1 && smaller_grow >= cap_grow * cap_worth;
    *grow = *smaller_blocks ? smaller_grow : cap_grow;
    *worth = *smaller_blocks ? 1 : cap_worth;
    *to_warps = *smaller_blocks ? best_b : warps * current * cap_grow;
    return *grow > 1 && *worth > 0;
}

/* Appends to an occupancy finding's `action` (`cap` bytes) the other lever
 * for warps that wait on their own arithmetic (fixed-latency dependencies,
 * the "wait" stall, half the stalls or more): independent work in each warp
 * hides it as well as more warps do, and frees no registers or shared memory.
 * At equal independent chains per SM the two ran within 3% of each other for
 * FP32 FMA, FP64 FMA and integer multiply-add chains (corpus v30's
 * ilp_vs_warps.cu: 4 warps x 4 chains against 16 warps x 1). The finding
 * keeps its category. */
static void s_dependency_action(const ncu_ctx_t *c, char *action, size_t cap)
{
    double wait = ncu_ctx_stall_share(c, NM_STALL_WAIT);
    size_t used = strlen(action);
    if (!analysis_has(wait) || wait < 0.5 || used + 1 >= cap)
        return;
    snprintf(action + used, cap - used,
             " The warps wait on their own arithmetic (fixed-latency dependencies, %.0f%% of the stall "
             "cycles): independent chains interleaved in each thread (several accumulators, unrolled "
             "loops) hide that latency without more warps.", 100 * wait);
}

/* Appends to a register-cap action (`cap` bytes) what the cap may cost where
 * the schedulers are already busy (issue slots at 60% or more): ptxas fits
 * the capped registers by a tighter schedule (less overlap of loads and
 * arithmetic), and at that issue rate the lost overlap costs time directly.
 * Corpus v38's bf16 GEMM on the FMA pipe (issue 75%): 60 registers capped to
 * 48, a cut the occupancy model prices in full, ran 0.81x without a spill;
 * to 40, spilling 12 bytes, 1.06x. One measurement: the estimate stays, the
 * action says to time it. */
static void s_cap_caution(const ncu_ctx_t *c, char *action, size_t cap)
{
    const ncu_unit_t *issue = ncu_units_find(&c->units, "issue");
    size_t used = strlen(action);
    if (!issue || issue->pct < NCU_SOL_LATENCY || used + 1 >= cap)
        return;
    snprintf(action + used, cap - used,
             " The schedulers already issue in %.0f%% of cycles: a cap buys its warps with a tighter "
             "schedule, which can cost more than they give (a GEMM at 75%% issue ran 0.81x with 60 "
             "registers capped to 48, without a spill); time it against the uncapped kernel.",
             issue->pct);
}

/* More resident warps hide latency until a unit saturates. Model: speedup =
 * min(warps that could be resident / warps that were, the least room of any
 * unit to its attainable ceiling), gain = (1 - 1/speedup) x the share of
 * stall cycles more blocks would hide (latency and barrier waits) x what the
 * lever costs (a register cap that spills is worth less, s_cap_worth). A
 * kernel with a unit at its ceiling gets nothing from more warps, however low
 * its occupancy. The speedup is recorded (c->latency_speedup) so the bound
 * finding claims only the headroom left after it. */
static void s_parallelism(ncu_ctx_t *c)
{
    double theo = V(c, NM_OCC_THEORETICAL), ach = V(c, NM_OCC_ACHIEVED);
    double resident = ncu_ctx_blocks_per_sm(c);
    double latency = s_block_hidden_share(c, resident);
    if (!analysis_has(ach) || ach <= 0 || !analysis_has(c->busiest))
        return;
    if (analysis_has(theo))
        ncu_ctx_judged(c, "occupancy");
    if (!analysis_has(latency))
        latency = c->latency ? 1 : 0;
    double roof = s_room(c);
    double waves = s_waves(c);
    double grid = V(c, NM_GRID_SIZE), sms = V(c, NM_SM_COUNT);
    bool launch_small = analysis_has(waves) && waves < 1 && analysis_has(grid) && analysis_has(sms) && grid >= sms;
    char title[360];
    if (launch_small && analysis_has(theo)) {
        /* The launch itself puts fewer warps on each SM than fit. More blocks
         * fill at most the slots it left empty, 1 / waves of them: achieved
         * occupancy under theoretical within a full-enough wave is blocks
         * ending at different times, not too few of them (cuDNN's training
         * batch norm on the H100, corpus v28: 256 blocks for 264 slots, 0.97
         * waves, achieved 43% of 50%). */
        double speedup = fmin(fmin(theo / ach, 1 / waves), roof);
        double gain = speedup > 1 ? (1 - 1 / speedup) * latency : 0;
        if (gain < NCU_GAIN_REPORT)
            return;
        double warps = analysis_has(V(c, NM_BLOCK_SIZE)) ? grid * ceil(V(c, NM_BLOCK_SIZE) / 32) / sms : NAN;
        if (analysis_has(warps))
            snprintf(title, sizeof title,
                     "Too little parallelism: the launch puts %.3g warp%s on each SM, which could "
                     "hold %.0f%% occupancy; the warps wait on latency with every unit under %.0f%% busy",
                     warps, warps == 1 ? "" : "s", theo, ceil(c->busiest));
        else
            snprintf(title, sizeof title,
                     "Too little parallelism: %.2f waves of blocks, achieved occupancy %.1f%% of %.0f%% "
                     "possible", waves, ach, theo);
        fb_finding_t *f = ncu_ctx_finding(c, "small_grid", gain, "warps_in_flight", title,
                                          ncu_advice_action("small_grid_warps"));
        if (!f)
            return;
        finding_add_evidence(f, ncu_metric_info(NM_OCC_ACHIEVED)->name, ach, "%",
                             "achieved occupancy %.1f%% (theoretical %.0f%%)", ach, theo);
        finding_add_evidence(f, "launch__waves_per_multiprocessor", waves, "", "%.2f waves", waves);
        c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
        c->latency_speedup = fmax(c->latency_speedup, 1 / (1 - fmin(gain, 0.95)));
        return;
    }
    if (!analysis_has(theo) || theo >= 100)
        return;
    /* The occupancy limiter: the smallest block limit; lifting it lets the
     * next larger one bind. Limits that tie bind together: lifting one alone
     * adds no block (corpus v40's Adam step, two blocks a SM by its 45
     * registers and by 80 KB of shared memory alike). */
    int limiter = -1, tied[sizeof s_limits / sizeof s_limits[0]];
    size_t ntied = 0;
    double current = NAN, next = NAN;
    for (int i = 0; i < (int) (sizeof s_limits / sizeof s_limits[0]); i++) {
        double x = V(c, s_limits[i].metric);
        if (analysis_has(x) && x > 0 && (limiter < 0 || x < current)) {
            current = x;
            limiter = i;
        }
    }
    if (limiter < 0)
        return;
    /* ncu reports a limit that does not bind at the SM's block cap (32), so
     * at the cap the others only echo it. Blocks that small (a warp or two)
     * are held by how fast the SM launches them, which the launch-rate
     * finding prices (corpus v37's one-warp gather: 32 blocks a SM, 16%
     * achieved occupancy, a block every 157 cycles); the occupancy model,
     * which prices the theoretical limit, stays out. */
    if (analysis_has(V(c, NM_OCC_LIMIT_BLOCKS)) && V(c, NM_OCC_LIMIT_BLOCKS) == current)
        return;
    for (int i = 0; i < (int) (sizeof s_limits / sizeof s_limits[0]); i++) {
        double x = V(c, s_limits[i].metric);
        if (!analysis_has(x) || x <= 0)
            continue;
        if (x == current)
            tied[ntied++] = i;
        else if (!analysis_has(next) || x < next)
            next = x;
    }
    double grow = analysis_has(next) ? fmin(next / current, 100 / theo) : 100 / theo;
    double worth = 1, to_warps = NAN;
    bool smaller_blocks = false, registers = false;
    for (size_t i = 0; i < ntied; i++)
        registers = registers || s_limits[tied[i]].metric == NM_OCC_LIMIT_REGISTERS;
    if (registers && !s_register_lever(c, current, next, ntied == 1, &grow, &worth, &smaller_blocks, &to_warps))
        return; /* neither smaller blocks nor a cap that does not spill adds warps */
    grow = fmin(grow, 100 / theo);
    /* More blocks a SM need blocks to fill them: a grid of G blocks on S SMs
     * has G / S for each SM, so lifting the limiter adds warps only up to that;
     * the last wave's idle SMs are the tail finding's to claim. Corpus v52's
     * channel softmax (ATen's layout: 143 blocks of 1024 threads, one a SM):
     * two a SM fit, but 121 of the 132 SMs still get one; est. 1.8x without
     * this, measured 1.20x, where 130 blocks (the tail's lever) ran 1.32x.
     * A grid of whole waves was sized to the occupancy (a block or a few a SM,
     * each striding over the data): its lever launches the blocks that fit,
     * and the cap does not apply (corpus v5's 132 blocks of 120 KB: at 100 KB,
     * 264 blocks ran 1.32x). */
    bool whole_waves = analysis_has(waves) && fabs(waves - round(waves)) < 0.02;
    if (analysis_has(grid) && analysis_has(sms) && sms > 0 && !whole_waves)
        grow = fmin(grow, fmax(grid / sms / current, 1));
    double speedup = fmin(grow, roof);
    double gain = speedup > 1 ? (1 - 1 / speedup) * latency * worth : 0;
    if (gain < NCU_GAIN_REPORT)
        return;
    if (smaller_blocks)
        snprintf(title, sizeof title,
                 "Occupancy limited by registers per thread in whole blocks: %.0f block%s per SM, %.0f%% "
                 "theoretical occupancy; blocks of %.0f warp%s would fit %.1fx the warps with the same "
                 "registers, while warps wait on latency with every unit under %.0f%% busy",
                 current, current == 1 ? "" : "s", theo, to_warps, to_warps == 1 ? "" : "s", grow,
                 ceil(c->busiest));
    else if (ntied > 1) {
        char names[160] = "";
        for (size_t i = 0; i < ntied; i++) /* "a, b and c" */
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i == 0 ? "" : i + 1 == ntied ? " and " : ", ", s_limits[tied[i]].name);
        snprintf(title, sizeof title,
                 "Occupancy limited by %s alike: %.0f block%s per SM, %.0f%% theoretical occupancy "
                 "(lifting one alone adds no block), while warps wait on latency with every unit under %.0f%% "
                 "busy", names, current, current == 1 ? "" : "s", theo, ceil(c->busiest));
    }
    else
        snprintf(title, sizeof title,
                 "Occupancy limited by %s: %.0f block%s per SM, %.0f%% theoretical occupancy, while "
                 "warps wait on latency with every unit under %.0f%% busy", s_limits[limiter].name, current,
                 current == 1 ? "" : "s", theo, ceil(c->busiest));
    char action[300];
    if (smaller_blocks)
        snprintf(action, sizeof action,
                 "Use blocks of %.0f threads instead of %.0f, with the same work per thread: whole blocks "
                 "then use the register file more evenly (%.0f resident warps per SM instead of %.0f).",
                 32 * to_warps, V(c, NM_BLOCK_SIZE), grow * current * ceil(V(c, NM_BLOCK_SIZE) / 32),
                 current * ceil(V(c, NM_BLOCK_SIZE) / 32));
    char full[900];
    snprintf(full, sizeof full, "%s%s", ntied > 1 ? "Lift every tied limit. " : "",
             smaller_blocks ? action : ncu_advice_action(s_limits[limiter].advice));
    for (size_t i = 1; i < ntied && strlen(full) + 1 < sizeof full; i++) /* each tied limit's own lever */
        snprintf(full + strlen(full), sizeof full - strlen(full), " %s",
                 ncu_advice_action(s_limits[tied[i]].advice));
    if (registers && !smaller_blocks)
        s_cap_caution(c, full, sizeof full);
    s_dependency_action(c, full, sizeof full);
    fb_finding_t *f = ncu_ctx_finding(c, "occupancy", gain, "warps_in_flight", title, full);
    if (!f)
        return;
    finding_add_evidence(f, ncu_metric_info(NM_OCC_THEORETICAL)->name, theo, "%",
                         "theoretical occupancy %.1f%%, achieved %.1f%%", theo, ach);
    for (size_t i = 0; i < ntied; i++)
        finding_add_evidence(f, ncu_metric_info(s_limits[tied[i]].metric)->name, current, "block",
                             "the limit from %s: %.0f block%s per SM%s", s_limits[tied[i]].name, current,
                             current == 1 ? "" : "s", analysis_has(next) ? "" : " (no other limit measured)");
    if (analysis_has(V(c, NM_REGISTERS)))
        finding_add_evidence(f, ncu_metric_info(NM_REGISTERS)->name, V(c, NM_REGISTERS),
                             "register/thread", "%.0f registers per thread", V(c, NM_REGISTERS));
    if (registers && !smaller_blocks && worth < 1)
        finding_add_evidence(f, "model", 100 * worth, "%",
                             "a register cap that fits more blocks cuts over 20%% of the registers: counted at "
                             "%.0f%% for the spills it risks", 100 * worth);
    c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
    /* In a DRAM stream below its roof more warps are one way to more bytes in
     * flight, the DRAM bound's own lever, whose action names them; measured,
     * more bytes a thread did better than more warps (corpus v7's
     * v7_regbound: 8 loads in flight a thread 1.27x, twice the warps 1.06x;
     * corpus v17's RMSNorm at 8 warps per SM: float4 1.31x). The finding
     * stays, but does not take the bound's headroom from it. */
    if (!(registers && ncu_ctx_dram_stream(c)))
        c->latency_speedup = fmax(c->latency_speedup, 1 / (1 - fmin(gain, 0.95)));
}

/* ----- contended atomics ----------------------------------------------------- */

/* Contention in a kernel a unit binds (s_contention covers the latency-bound
 * ones): the atomics' floor on its time (ncu_atomics_floor), capped at the
 * ceiling of the busiest unit, which keeps its load (the atomics' own L2 work
 * is not in a counter the plan has). Corpus v61's last-block counter, one
 * atomicAdd a block on one address: 262,144 of them at 1.76 ns are 95% of its
 * 485 us; L2 67% with DRAM 46%, so not latency-bound; without the counter it
 * ran 1.65x, with it spread over 1024 addresses 1.47x. */
static fb_finding_t *s_contention_at_a_bound(ncu_ctx_t *c, double atomics)
{
    double serial = c->atomic_floor;
    if (!analysis_has(serial) || serial < NCU_ATOMIC_SERIAL_BOUND || c->units.count == 0)
        return NULL;
    ncu_relief_t same = {.l1 = 1, .l2 = 1, .dram = 1, .compute = 1};
    bool won;
    double gain = ncu_units_saved_or(&c->units, &same, serial, &won);
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return NULL;
    char title[300];
    snprintf(title, sizeof title,
             "Global atomic contention: %.3g atomic instructions on a few addresses would take %.0f%% of "
             "the kernel's time served one at a time; the L2 slice that owns them sets the pace",
             atomics, 100 * serial);
    fb_finding_t *f = ncu_ctx_finding(c, "contention", gain, "atomic_serial", title,
                                      ncu_advice_action("contention"));
    if (!f)
        return NULL;
    finding_add_evidence(f, "smsp__inst_executed_op_global_red.sum", atomics, "inst",
                         "%.3g global atomic/reduction instructions", atomics);
    finding_add_evidence(f, ncu_metric_info(NM_L2_ATOMIC_PCT)->name, V(c, NM_L2_ATOMIC_PCT), "%",
                         "L2 atomic unit busy %.2f%% of peak, averaged over the slices: about %.0f "
                         "slice%s' worth of queue", V(c, NM_L2_ATOMIC_PCT),
                         fmax(1, round(V(c, NM_L2_ATOMIC_PCT) / NCU_ATOMIC_ONE_SLICE)),
                         V(c, NM_L2_ATOMIC_PCT) / NCU_ATOMIC_ONE_SLICE >= 1.5 ? "s" : "");
    finding_add_evidence(f, "model", 100 * serial, "%",
                         "served one at a time at %.2f ns each (the slowest measured on this GPU's L2), "
                         "they take %.0f%% of the %.0f us; removing or spreading them saves that share "
                         "up to the next unit's ceiling", NCU_ATOMIC_NS, 100 * serial, V(c, NM_DURATION) / 1e3);
    double lanes = ncu_atomics_lanes(c->k); /* the instructions themselves where L2 did not count */
    if (lanes > atomics)
        finding_add_evidence(f, ncu_metric_info(NM_L2_RED_REQUESTS)->name, lanes, "request",
                             "L2 serves %.3g updates, %.0f per instruction: each lane's is its own", lanes,
                             lanes / atomics);
    return f;
}

/* Atomics to the same address serialize in L2: warps wait on them while every
 * unit idles. Model: in a latency-bound kernel with measured global atomics,
 * gain = the idle share of the busiest unit x the share of stall cycles spent
 * waiting on memory results and stores (long scoreboard, drain, LSU queue). */
static void s_contention(ncu_ctx_t *c)
{
    double red = V(c, NM_GLOBAL_RED), atom = V(c, NM_GLOBAL_ATOM);
    double atomics = s_or0(red) + s_or0(atom);
    if (analysis_has(red) || analysis_has(atom))
        ncu_ctx_judged(c, "contention");
    double unit = V(c, NM_L2_ATOMIC_PCT);
    if (atomics <= 0 || (analysis_has(unit) && unit < NCU_ATOMIC_UNIT_IDLE))
        return;
    /* Where the atomics' floor is most of the time, it prices them, in a
     * latency-bound kernel too: the stalls' share is a lower bound (corpus
     * v64's row sums, every lane's partial added to its row's word: memory
     * waits 71% of the stalls, est. 2.4x; the floor 99%; one store a row
     * ran 14x). */
    if (!c->latency || (analysis_has(c->atomic_floor) && c->atomic_floor >= NCU_ATOMIC_SERIAL_BOUND)) {
        fb_finding_t *f = s_contention_at_a_bound(c, atomics);
        if (f && c->latency)
            c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
        if (f || !c->latency)
            return;
    }
    double wait = ncu_ctx_memory_wait_share(c);
    if (!analysis_has(c->stall_total))
        wait = 1;
    else if (!analysis_has(wait))
        wait = 0;
    /* A fence after a contended atomic waits for it to be performed
     * (ncu_atomics_serialized): its stalls are the queue's as much as the
     * results' are, and privatized updates leave nothing to fence (corpus
     * v56's fenced histogram: memory 65% and membar 34% of the stalls, est.
     * 2.7x on the first alone; the private histogram measured 76x). */
    double fence = ncu_ctx_stall_share(c, NM_STALL_MEMBAR);
    bool fenced = analysis_has(fence) && fence > 0 && analysis_has(unit) && unit >= NCU_ATOMIC_UNIT_IDLE;
    if (fenced)
        wait += fence;
    double gain = (1 - c->busiest / 100) * fmin(wait, 1);
    /* Atomics cost the kernel time only as far as there are enough of them:
     * even served one lane at a time, the lanes L2 serves (where it counts
     * them, else 32 an instruction) take at most NCU_ATOMIC_NS each. Corpus
     * v16's sum over 96 blocks, latency-bound with 96 atomics in 1 ms (at
     * most 5 us of them), is not contended. */
    double t = V(c, NM_DURATION);
    if (analysis_has(t) && t > 0)
        gain = fmin(gain, ncu_atomics_lanes_most(c->k) * NCU_ATOMIC_NS / t);
    if (gain < NCU_GAIN_REPORT)
        return;
    char title[300];
    snprintf(title, sizeof title,
             "Global atomic contention: %.3g atomic instructions while every unit is under %.0f%% "
             "busy; warps wait on serialized updates", atomics, ceil(c->busiest));
    fb_finding_t *f = ncu_ctx_finding(c, "contention", gain, "atomic_wait", title,
                                      ncu_advice_action("contention"));
    if (!f)
        return;
    finding_add_evidence(f, "smsp__inst_executed_op_global_red.sum", atomics, "inst",
                         "%.3g global atomic/reduction instructions", atomics);
    if (analysis_has(V(c, NM_L2_ATOMIC_PCT)))
        finding_add_evidence(f, ncu_metric_info(NM_L2_ATOMIC_PCT)->name, V(c, NM_L2_ATOMIC_PCT), "%",
                             "L2 atomic unit busy %.2f%% of peak", V(c, NM_L2_ATOMIC_PCT));
    if (analysis_has(c->stall_total))
        finding_add_evidence(f, "stalls", 100 * fmin(wait, 1), "%",
                             "%.0f%% of stall cycles wait on memory results and stores%s", 100 * fmin(wait, 1),
                             fenced ? ", and on fences behind the atomics" : "");
    c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
}

/* Shared-memory atomics to the same address serialize in the L1's atomic
 * unit; warps wait for them in the MIO queue (mio throttle) and on their
 * results (short scoreboard). Model: gain = that share of stall cycles x the
 * L1/shared pipe's utilization when it is the busy unit, else x the time the
 * busiest unit leaves idle. */
static void s_shared_atomics(ncu_ctx_t *c)
{
    double atoms = V(c, NM_SHARED_ATOM), l1 = V(c, NM_L1_PCT);
    double mio = ncu_ctx_stall_share(c, NM_STALL_MIO_THROTTLE);
    double sb = ncu_ctx_stall_share(c, NM_STALL_SHORT_SCOREBOARD);
    if (!analysis_has(atoms) || atoms <= 0 || !analysis_has(mio) || !analysis_has(c->busiest))
        return;
    double wait = fmin(mio + s_or0(sb), 1);
    bool busy = analysis_has(l1) && l1 >= NCU_SOL_LATENCY;
    double gain = wait * (busy ? fmin(l1, 100) / 100 : 1 - c->busiest / 100);
    if (gain < NCU_GAIN_REPORT)
        return;
    char title[300];
    snprintf(title, sizeof title,
             "Shared-memory atomic contention: %.3g shared atomic instructions%s; warps wait on them "
             "(MIO queue and results) %.0f%% of their stall cycles", atoms,
             busy ? " keep the L1/shared pipe busy" : "", 100 * wait);
    fb_finding_t *f = ncu_ctx_finding(c, "contention", gain, "atomic_wait", title,
                                      ncu_advice_action("contention_shared"));
    if (!f)
        return;
    finding_add_evidence(f, ncu_metric_info(NM_SHARED_ATOM)->name, atoms, "inst",
                         "%.3g shared-memory atomic instructions", atoms);
    ncu_ctx_pct(f, c, NM_L1_PCT);
    c->latency_explained = c->latency_explained || (c->latency && ncu_ctx_explains(f));
}

/* ----- stalls that are causes, not symptoms --------------------------------- */

/* A fence (membar) or a back-off sleep stalls only the warp that runs it, on
 * its own memory operations or its own timer: dead time added to the warp's
 * latency, which deleting the fence or the sleep removes outright. A kernel
 * whose units are under their attainable ceilings runs at its warps' latency
 * (Little's law), so removing a share s of that latency raises its rate by
 * 1 / (1 - s) until the nearest unit reaches its ceiling: gain = min(s, what
 * the units leave), ncu's own CPIStall estimate (the share) capped by the
 * roofline. A fence is L2 work as well: the L2 slices acknowledge each one
 * (corpus v22's fence after every store on the H100: 3.2 L2 fabric requests a
 * load or store request, 0.8 without fences, and L2 at 95% with DRAM at 51%),
 * so of the L2's utilization only what DRAM's traffic puts through it stays.
 * Barrier waits are other warps' work showing through, and instruction-fetch
 * and branch waits overlap with the issue of the warps around them: those keep
 * the product (s_cause_stalls). Corpus v22's fence after every store: membar 43% of the
 * stall cycles (H200: est. 41%, no fence measured 1.42x, 30%; H100: 48%, est.
 * 41%, measured 1.36x, 26%: freed of its fences the stream waits longer on
 * DRAM, which the model holds constant). */
static bool s_dead_time(ncu_metric_t reason) { return reason == NM_STALL_MEMBAR || reason == NM_STALL_SLEEPING; }

static double s_dead_time_gain(const ncu_ctx_t *c, ncu_metric_t reason, double share)
{
    double keep[NCU_UNITS_MAX];
    const ncu_unit_t *l2 = ncu_units_find(&c->units, "l2"), *dram = ncu_units_find(&c->units, "dram");
    bool fences = reason == NM_STALL_MEMBAR && l2 && l2->pct > 0;
    ncu_units_keep_one(&c->units, fences ? l2 : NULL, fences && dram ? fmin(dram->pct / l2->pct, 1) : 0, keep);
    ncu_relief_t same = {.l1 = 1, .l2 = 1, .dram = 1, .compute = 1, .unit_keep = keep};
    bool won = false;
    double gain = c->units.count ? ncu_units_saved_or(&c->units, &same, fmin(share, 1), &won)
                                 : fmin(share, 1) * (1 - c->busiest / 100);
    double atomics = reason == NM_STALL_MEMBAR ? ncu_atomics_serialized(c->k) : NAN;
    if (analysis_has(gain) && analysis_has(atomics))
        gain = fmin(gain, 1 - atomics);
    return analysis_has(gain) ? gain * s_active(c) : NAN;
}

/* Waits on memory or on a busy pipe are the bound showing through and belong
 * to the bound finding. These are not: barriers, branches, fences, constant
 * and instruction-cache misses, sleeping. Model: gain = the reason's share of
 * stall cycles x the time the bound unit leaves idle, except for dead time
 * (s_dead_time). */
static void s_cause_stalls(ncu_ctx_t *c)
{
    static const ncu_metric_t reasons[] = {NM_STALL_BARRIER, NM_STALL_BRANCH, NM_STALL_MEMBAR,
                                           NM_STALL_IMC_MISS, NM_STALL_NO_INSTRUCTION,
                                           NM_STALL_SLEEPING, NM_STALL_MISC};
    if (!analysis_has(c->stall_total) || !analysis_has(c->busiest))
        return;
    ncu_ctx_judged(c, "warp_stall");
    ncu_ctx_judged(c, "barrier_stall");
    const ncu_unit_t *top = ncu_units_busiest(&c->units, NCU_UNIT_PIPE);
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        double share = ncu_ctx_stall_share(c, reasons[i]);
        if (!analysis_has(share) || share < 0.1)
            continue;
        /* A barrier-bound kernel keeps the ADU pipe (which executes BAR)
         * busy: the bound finding says so itself. */
        if (reasons[i] == NM_STALL_BARRIER && top && strcmp(top->key, "adu") == 0 &&
            !c->latency && top->pct >= c->busiest - NCU_SOL_GAP)
            continue;
        double gain = s_dead_time(reasons[i]) ? s_dead_time_gain(c, reasons[i], share)
                                               : share * (1 - c->busiest / 100) * s_active(c);
        if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
            continue;
        char title[300];
        snprintf(title, sizeof title, "Warps stall on %s: %.0f%% of their stall cycles",
                 ncu_advice_stall_reason((int) reasons[i]), 100 * share);
        const char *category = reasons[i] == NM_STALL_BARRIER ? "barrier_stall" : "warp_stall";
        fb_finding_t *f = ncu_ctx_finding(c, category, gain, "stall_share", title,
                                          ncu_advice_stall_action((int) reasons[i]));
        if (!f)
            continue;
        finding_add_evidence(f, ncu_metric_info(reasons[i])->name, V(c, reasons[i]), "cycle",
                             "%s: %.1f of %.1f stall cycles per issued instruction",
                             ncu_metric_info(reasons[i])->what, V(c, reasons[i]), c->stall_total);
        const ncu_unit_t *l2 = ncu_units_find(&c->units, "l2"), *dram = ncu_units_find(&c->units, "dram");
        if (reasons[i] == NM_STALL_MEMBAR && l2 && dram)
            finding_add_evidence(f, l2->metric, l2->pct, "%",
                                 "L2 %.0f%% of peak, the fences' acknowledgements included; without them it "
                                 "carries DRAM's traffic (%.0f%%)", l2->pct, dram->pct);
        double atomics = reasons[i] == NM_STALL_MEMBAR ? ncu_atomics_serialized(c->k) : NAN;
        if (analysis_has(atomics))
            finding_add_evidence(f, "atomics", 100 * atomics, "%",
                                 "the fences wait on contended atomics, which take at least %.0f%% of the "
                                 "time served one at a time: without the fences they still queue", 100 * atomics);
        if (c->latency)
            c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
    }
}

/* Constant-bank loads whose lanes read different addresses are served one
 * address at a time by the ADU pipe (which also runs barriers and branches,
 * one pass each). A kernel whose ADU is its busiest pipe at 8x or more the
 * share of issue slots the SM uses, with barriers under a tenth of its stalls,
 * is replaying them: across every committed H200 capture the ratio is at most
 * 3.1 otherwise (barrier_heavy 1.9), and corpus v10's per-lane __constant__
 * lookup table reads 166 (ADU 71%, issue 0.4%); its warps wait on the full
 * MIO queue. Model: uniform or global-memory reads keep issue/ADU of the
 * ADU's work (one pass per instruction); the gain is the better of the
 * roofline and that waste's share of the MIO-queue and short-scoreboard
 * waits, capped at the next ceiling. Measured: the table read from global
 * memory ran 82x faster (est. 99%). */
static void s_constant_replays(ncu_ctx_t *c)
{
    const ncu_unit_t *adu = ncu_units_find(&c->units, "adu"), *issue = ncu_units_find(&c->units, "issue");
    const ncu_unit_t *pipe = ncu_units_busiest(&c->units, NCU_UNIT_PIPE);
    double barrier = ncu_ctx_stall_share(c, NM_STALL_BARRIER);
    if (!adu || !issue || pipe != adu || adu->pct < 10 || adu->pct < NCU_ADU_REPLAY_RATIO * issue->pct ||
        (analysis_has(barrier) && barrier >= 0.1))
        return;
    double keep[NCU_UNITS_MAX];
    ncu_units_keep_one(&c->units, adu, issue->pct / adu->pct, keep);
    ncu_relief_t relief = {.l1 = 1, .l2 = 1, .dram = 1, .compute = 1, .unit_keep = keep};
    static const ncu_metric_t waits[] = {NM_STALL_MIO_THROTTLE, NM_STALL_SHORT_SCOREBOARD};
    double wait = ncu_ctx_stall_sum(c, waits, sizeof waits / sizeof waits[0]);
    bool waited = false;
    double gain = ncu_units_saved_or(&c->units, &relief,
                                     analysis_has(wait) ? wait * (1 - issue->pct / adu->pct) : NAN, &waited);
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return;
    char title[320];
    snprintf(title, sizeof title,
             "Constant-memory loads serialized: the ADU pipe, which serves constant-bank loads, is %.0f%% busy "
             "while the SM issues in %.1f%% of its slots (%.0fx): a warp's constant load is replayed once per "
             "distinct address its lanes read", adu->pct, issue->pct, adu->pct / fmax(issue->pct, 0.01));
    fb_finding_t *f = ncu_ctx_finding(c, "warp_stall", gain, "adu_replays", title,
                                      ncu_advice_action("constant_divergent"));
    if (!f)
        return;
    finding_add_evidence(f, adu->metric, adu->pct, "%", "ADU pipe %.0f%% busy", adu->pct);
    finding_add_evidence(f, issue->metric, issue->pct, "%", "issue slots %.1f%% busy", issue->pct);
    if (analysis_has(wait))
        finding_add_evidence(f, "model", 100 * wait, "%",
                             "warps wait on the MIO queue and short-scoreboard results %.0f%% of their stall cycles",
                             100 * wait);
    if (c->latency)
        c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
}

void ncu_causes_add(ncu_ctx_t *c)
{
    ncu_traffic_add(c);
    ncu_lanes_add(c);
    s_idle_sms(c);
    s_parallelism(c);
    s_contention(c);
    s_shared_atomics(c);
    s_cause_stalls(c);
    s_constant_replays(c);
}
