/* ncu_lanes: thread efficiency, the cause that wastes a pipe's lanes: lanes
 * that sit out a divergent path, and lanes predicated off, placed on the pipe
 * whose instructions carry them where the capture counted lanes per pipe.
 * Its estimated gain is the share of the kernel's time converged or
 * compacted code would save; docs/ncu.md ("Models") gives the formula and the
 * measurements behind it. */
#include <math.h>
#include <stdio.h>

#include "analysis.h"
#include "ncu_advice.h"
#include "ncu_ctx.h"

static double V(const ncu_ctx_t *c, ncu_metric_t m) { return ncu_ctx_v(c, m); }

/* The share of active time the SM issues instructions: issue slots, or the
 * busiest pipe when issue was not measured. */
static double s_issue_busy(const ncu_ctx_t *c)
{
    const ncu_unit_t *i = ncu_units_find(&c->units, "issue");
    const ncu_unit_t *p = ncu_units_busiest(&c->units, NCU_UNIT_PIPE);
    double x = fmax(i ? i->pct : 0, p ? p->pct : 0);
    if (!i && !p)
        x = analysis_has(V(c, NM_SM_PCT)) ? V(c, NM_SM_PCT) : NAN;
    return analysis_has(x) ? x / 100 : NAN;
}

/* Stall reasons a warp spends on its own instruction stream: passed over for
 * another ready warp, waiting on its own fixed-latency and
 * MIO results, on a busy pipe, on branch targets or instruction fetch. Memory
 * waits, barriers and fences are not: they do not grow with the instructions
 * a warp issues. */
static double s_instruction_share(const ncu_ctx_t *c)
{
    static const ncu_metric_t reasons[] = {
        NM_STALL_NOT_SELECTED, NM_STALL_WAIT,           NM_STALL_MATH_THROTTLE,    NM_STALL_BRANCH,
        NM_STALL_DISPATCH,     NM_STALL_NO_INSTRUCTION, NM_STALL_SHORT_SCOREBOARD, NM_STALL_MIO_THROTTLE,
    };
    return ncu_ctx_stall_sum(c, reasons, sizeof reasons / sizeof reasons[0]);
}

/* Bytes a global load request carries (bytes used per sector x sectors per
 * request); NAN unless measured. A full warp of even 1-byte loads carries 32:
 * under NCU_LOAD_BYTES_FEW, at least half the lanes of each load sat out
 * whatever the element size, and a warp whose time is its round trips to
 * memory gets a few lanes' data from each. */
#define NCU_LOAD_BYTES_FEW 16.0
static double s_load_request_bytes(const ncu_ctx_t *c)
{
    double per_sector = V(c, NM_LD_BYTES_PER_SECTOR), sectors = V(c, NM_SECTORS_GLOBAL_LD),
           requests = V(c, NM_REQUESTS_GLOBAL_LD);
    if (!analysis_has(per_sector) || !analysis_has(sectors) || !analysis_has(requests) || requests <= 0)
        return NAN;
    return per_sector * sectors / requests;
}

/* Useful lanes by pipe: warp instructions on the pipe and thread instructions
 * whose guard predicate was on (the core plan's per-pipe counters). */
static const struct {
    const char *key;
    ncu_metric_t inst, lanes;
} s_pipe_lanes[] = {
    {"fma", NM_INST_PIPE_FMA, NM_LANES_PIPE_FMA},
    {"alu", NM_INST_PIPE_ALU, NM_LANES_PIPE_ALU},
    {"fp64", NM_INST_PIPE_FP64, NM_LANES_PIPE_FP64},
    {"xu", NM_INST_PIPE_XU, NM_LANES_PIPE_XU},
};

/* NCU's ThreadDivergence rule: fewer useful threads per warp than this is
 * worth acting on. Above it, predicated-off lanes are left alone: a lone
 * predicated instruction (a conditional increment in an integer division) is
 * a select no layout removes. */
#define NCU_LANES_LOW 24.0

/* How much of each unit's work converged or compacted code would leave.
 * Every pipe and the issue slots keep active/32 (lanes that sit out a
 * divergent path), except a pipe whose useful lanes per instruction were
 * counted and fall under NCU_LANES_LOW: it keeps its own useful lanes / 32,
 * predicated-off lanes included (they take the issue slot and the pipe as
 * idle lanes do), and the issue slots keep the instruction-weighted mix.
 * Fills keep[] per unit of c->units (NAN = active/32); returns the pipe whose
 * predicated-off lanes waste the most busy time, NULL when none does. */
static const ncu_unit_t *s_lanes_keep(const ncu_ctx_t *c, double active, double *keep, double *issue_keep,
                                      double *worst_lanes)
{
    double all = V(c, NM_INST_EXECUTED), counted = 0, kept = 0, worst_waste = 0;
    const ncu_unit_t *worst = NULL;
    *issue_keep = active / 32;
    for (size_t u = 0; u < c->units.count; u++)
        keep[u] = NAN;
    for (size_t i = 0; i < sizeof s_pipe_lanes / sizeof s_pipe_lanes[0]; i++) {
        double n = V(c, s_pipe_lanes[i].inst), t = V(c, s_pipe_lanes[i].lanes);
        if (!analysis_has(n) || !analysis_has(t) || n <= 0)
            continue;
        double lanes = fmin(fmax(t / n, 0), 32), used = lanes < NCU_LANES_LOW ? fmin(lanes, active) : active;
        counted += n;
        kept += n * used / 32;
        const ncu_unit_t *unit = ncu_units_find(&c->units, s_pipe_lanes[i].key);
        if (!unit)
            continue;
        keep[unit - c->units.unit] = used / 32;
        double waste = unit->pct * (active - used) / 32; /* busy time on predicated-off lanes */
        if (lanes < NCU_LANES_LOW && active - used >= 4 && waste > worst_waste) {
            worst_waste = waste;
            worst = unit;
            *worst_lanes = used;
        }
    }
    const ncu_unit_t *issue = ncu_units_find(&c->units, "issue");
    if (analysis_has(all) && all >= counted && all > 0) {
        *issue_keep = (kept + (all - counted) * active / 32) / all;
        if (issue)
            keep[issue - c->units.unit] = *issue_keep;
    }
    return worst;
}

/* What converged code leaves of L1's work. Global and local sectors follow
 * the bytes the lanes move, whatever their number; shared-memory wavefronts
 * follow the instructions (at least one each, and as many as the conflicts
 * make), so that part scales by active / 32. Corpus v58's 8-way conflicted
 * reads on 16 lanes: 8 wavefronts a read either way; the same items on every
 * lane ran 1.99x, which traffic that stays priced at nothing. */
static double s_l1_keep(const ncu_ctx_t *c, double active)
{
    double wld = V(c, NM_SHARED_WAVEFRONTS_LD), wst = V(c, NM_SHARED_WAVEFRONTS_ST);
    if (!analysis_has(wld) && !analysis_has(wst))
        return 1;
    double shared = (analysis_has(wld) ? wld : 0) + (analysis_has(wst) ? wst : 0);
    double other = 0;
    static const ncu_metric_t sectors[] = {NM_SECTORS_GLOBAL_LD, NM_SECTORS_GLOBAL_ST, NM_SECTORS_LOCAL_LD,
                                           NM_SECTORS_LOCAL_ST};
    for (size_t i = 0; i < sizeof sectors / sizeof sectors[0]; i++)
        if (analysis_has(V(c, sectors[i])))
            other += V(c, sectors[i]);
    if (shared <= 0)
        return 1;
    return 1 - shared / (shared + other) * (1 - active / 32);
}

/* Lanes that sit out an instruction still cost its issue slot and pipe cycle,
 * and each warp runs every path in turn. Model: converged code would issue
 * active/32 of the instructions, so every pipe's and the issue slots' work
 * scales by that (memory traffic stays), and the gain is the better of two:
 * how far the busiest unit drops (the roofline), and, for warps whose time is
 * their own instruction stream (a dependent chain with few warps to hide it),
 * (1 - active/32) of the stall cycles spent on it (s_instruction_share),
 * capped where a unit would reach its ceiling. Corpus v8's v8_div_chain (two
 * warps per scheduler, dependent FMA chains, 16 of 32 lanes): the roofline
 * says 27%, converged warps measured 48%, this model 50%. (Stall shares are
 * over the reasons parsed, "selected" not among them.) Lanes predicated off
 * cost the same, pipe by pipe where the capture counted them (s_lanes_keep):
 * corpus v9's v9_pred_quarter (every lane active, 8 of 32 predicated on for
 * its FMAs): the same FMAs on a quarter of the threads ran 3.83x faster.
 *
 * Memory waits shrink too where the loads themselves run on a few lanes
 * (s_load_request_bytes under NCU_LOAD_BYTES_FEW, lanes under NCU_LANES_LOW:
 * a warp per item whose items are short). Each of a warp's round trips then
 * brings a few lanes' data; packing items into the idle lanes makes each
 * carry 32 lanes' worth, so the waits fall by (1 - b/32) (b bytes a request,
 * lanes counted as 1-byte ones: the least it can be), capped like the rest.
 * Corpus v18's v18_spmv_warp_short (a warp per CSR row of 1-7 nonzeros, 11.2
 * bytes a load request, memory waits 73%): 4 lanes per row measured 3.42x;
 * no other committed kernel carries under 24 bytes a request. */
void ncu_lanes_add(ncu_ctx_t *c)
{
    double active = V(c, NM_THREADS_PER_WARP), pred = V(c, NM_THREADS_PER_WARP_PRED);
    double busy = s_issue_busy(c);
    if (analysis_has(active))
        ncu_ctx_judged(c, "divergence");
    if (!analysis_has(active) || active <= 0 || !analysis_has(busy))
        return;
    active = fmin(active, 32);
    double keep[NCU_UNITS_MAX], issue_keep, lanes = active;
    const ncu_unit_t *predicated = s_lanes_keep(c, active, keep, &issue_keep, &lanes);
    if (active >= 32 && !predicated)
        return;
    ncu_relief_t relief = {.l1 = s_l1_keep(c, active), .l2 = 1, .dram = 1, .compute = active / 32,
                           .unit_keep = keep};
    double own = s_instruction_share(c), load_bytes = s_load_request_bytes(c), waits = 0;
    double memory = ncu_ctx_stall_share(c, NM_STALL_LONG_SCOREBOARD);
    if (active < NCU_LANES_LOW && analysis_has(load_bytes) && load_bytes < NCU_LOAD_BYTES_FEW &&
        analysis_has(memory))
        waits = (1 - load_bytes / 32) * memory;
    bool chain = false;
    double gain = c->units.count ? ncu_units_saved_or(&c->units, &relief, (1 - issue_keep) * own + waits, &chain)
                                 : (1 - active / 32) * busy;
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return;
    char title[300];
    bool loads = chain && waits > (1 - issue_keep) * own;
    if (loads)
        snprintf(title, sizeof title,
                 "Idle lanes in the loads: a global load request carries %.1f bytes, a few lanes' worth "
                 "(%.1f of 32 lanes active on average), while warps wait on memory %.0f%% of their "
                 "stall cycles: each round trip brings a few items",
                 load_bytes, active, 100 * memory);
    else if (predicated)
        snprintf(title, sizeof title,
                 "Predicated-off lanes: instructions on the %s do work in %.1f of 32 lanes on average "
                 "(%.1f active, the rest predicated off), so it does %.1fx the work of compacted code",
                 predicated->name, lanes, active, 32 / fmax(lanes, 1));
    else
        snprintf(title, sizeof title,
                 "Warp divergence: on average %.1f of 32 lanes are active per instruction, so the SM "
                 "does %.1fx the issue work of converged code", active, 32 / active);
    fb_finding_t *f = ncu_ctx_finding(c, "divergence", gain, "active_lanes", title,
                                      ncu_advice_action(loads        ? "divergence_loads"
                                                        : predicated ? "predication"
                                                                     : "divergence"));
    if (!f)
        return;
    finding_add_evidence(f, ncu_metric_info(NM_THREADS_PER_WARP)->name, active, "thread",
                         "%.1f active threads per warp instruction", active);
    if (analysis_has(pred) && pred < active - 0.5)
        finding_add_evidence(f, ncu_metric_info(NM_THREADS_PER_WARP_PRED)->name, pred, "thread",
                             "%.1f of them not predicated off", pred);
    if (predicated)
        finding_add_evidence(f, "lanes", lanes, "thread", "%.1f useful (predicated-on) lanes per %s instruction",
                             lanes, predicated->name);
    if (chain && waits > 0)
        finding_add_evidence(f, "load_request_bytes", load_bytes, "byte",
                             "%.1f bytes per global load request (32 lanes of 1-byte loads carry 32): "
                             "packing items into the idle lanes cuts the round trips, %.0f%% of the "
                             "stall cycles", load_bytes, 100 * memory);
    if (chain)
        finding_add_evidence(f, "model", 100 * own, "%",
                             "warps spend %.0f%% of their stall cycles on their own instruction stream "
                             "(issuing, dependencies, pipes), which runs every path in turn",
                             100 * own);
    ncu_ctx_pct(f, c, NM_ISSUE_PCT);
    ncu_ctx_pct(f, c, NM_SM_PCT);
}
