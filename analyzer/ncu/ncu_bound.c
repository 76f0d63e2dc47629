/* ncu_bound: the unit that limits the kernel, named from measurements.
 *
 * Top-down: the busiest measured unit decides. Memory side or compute side by
 * NCU's SOLBottleneck rule (a 10-point gap makes one side dominant); on the
 * memory side DRAM when it is near the roof and the L2 above it carries its
 * traffic, else the busiest level; on the compute side the busiest pipe by
 * its own counter, never a default. The bound finding's gain is its headroom
 * (1 - utilization, over the time SMs are active): what using the unit at its
 * peak would buy. Anything more (moving fewer bytes, doing less math) is a
 * change of algorithm the counters cannot size, and the action says so.
 * Stall reasons that are the bound showing through (memory waits in a
 * memory-bound kernel, a full MIO queue in an XU-bound one) are its evidence. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ncu_advice.h"
#include "ncu_atomics.h"
#include "analysis.h"
#include "ncu_ctx.h"
#include "ncu_summary.h"

static double V(const ncu_ctx_t *c, ncu_metric_t m) { return ncu_ctx_v(c, m); }
static double s_or0(double x) { return analysis_has(x) ? x : 0; }

/* "SM 70% of peak, memory 53%": ncu's two summaries as a title states them,
 * each only when measured (a missing one is not 0%, nor 100%); "" when
 * neither was. */
static const char *s_summaries(const ncu_ctx_t *c, char *buf, size_t size)
{
    double sm = V(c, NM_SM_PCT), mem = V(c, NM_MEM_PCT);
    if (analysis_has(sm) && analysis_has(mem))
        snprintf(buf, size, "SM %.0f%% of peak, memory %.0f%%", fmin(sm, 100), fmin(mem, 100));
    else if (analysis_has(sm))
        snprintf(buf, size, "SM %.0f%% of peak", fmin(sm, 100));
    else if (analysis_has(mem))
        snprintf(buf, size, "memory %.0f%% of peak", fmin(mem, 100));
    else
        buf[0] = '\0';
    return buf;
}

double ncu_ctx_stall_share(const ncu_ctx_t *c, ncu_metric_t stall)
{
    double x = V(c, stall);
    if (!analysis_has(x) || !analysis_has(c->stall_total) || c->stall_total <= 0)
        return NAN;
    return fmin(x / c->stall_total, 1);
}

double ncu_ctx_stall_sum(const ncu_ctx_t *c, const ncu_metric_t *reasons, size_t n)
{
    double share = 0;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        double s = ncu_ctx_stall_share(c, reasons[i]);
        if (analysis_has(s)) {
            share += s;
            any = true;
        }
    }
    return any ? fmin(share, 1) : NAN;
}

double ncu_ctx_lsu_sectors(const ncu_ctx_t *c)
{
    return s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST)) +
           s_or0(V(c, NM_SECTORS_LOCAL_LD)) + s_or0(V(c, NM_SECTORS_LOCAL_ST));
}

double ncu_ctx_unseen_sectors(const ncu_ctx_t *c, bool reads)
{
    double rd = V(c, NM_DRAM_READ), wr = reads ? 0 : V(c, NM_DRAM_WRITE);
    if (!analysis_has(rd) || !analysis_has(wr))
        return 0;
    return fmax(0, (rd + wr) / 32.0 - 2 * ncu_ctx_lsu_sectors(c));
}

double ncu_ctx_memory_wait_share(const ncu_ctx_t *c)
{
    static const ncu_metric_t reasons[] = {NM_STALL_LONG_SCOREBOARD, NM_STALL_DRAIN, NM_STALL_LG_THROTTLE};
    return ncu_ctx_stall_sum(c, reasons, sizeof reasons / sizeof reasons[0]);
}

/* Whether a finding's fix changes the grid or the warps per SM (so the launch
 * floor does not bound what it saves): the idle-SM and occupancy causes, and
 * the bounds whose levers include fewer, longer blocks. */
static bool s_changes_grid(const char *category)
{
    static const char *const kinds[] = {"small_grid", "tail_effect", "load_imbalance", "occupancy",
                                        "dram_bound", "latency_bound", "memory_bound"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(category, kinds[i]) == 0)
            return true;
    return false;
}

fb_finding_t *ncu_ctx_finding(ncu_ctx_t *c, const char *category, double gain, const char *model,
                              const char *title, const char *action)
{
    /* A fix that keeps the grid cannot beat the SMs' block launch floor: it
     * saves at most the share of the time the launches do not account for. */
    if (analysis_has(gain) && analysis_has(c->launch_share) && c->launch_share >= NCU_LAUNCH_SHARE &&
        !s_changes_grid(category))
        gain = fmin(gain, 1 - c->launch_share);
    /* Nor can a fix that keeps contended atomics beat their floor (corpus
     * v62's counter: DRAM at 48% below its roof, est. 1.9x, where the adds
     * to one slice's words fill 98% of the time; without them it ran 1.39x). */
    if (analysis_has(gain) && analysis_has(c->atomic_floor) && c->atomic_floor >= NCU_ATOMIC_SERIAL_BOUND &&
        strcmp(category, "contention") != 0)
        gain = fmin(gain, 1 - c->atomic_floor);
    double importance = analysis_has(gain) ? 100 * fmin(fmax(gain, 0), 0.999) : 5;
    fb_finding_t *f = feedback_add_finding(c->fb, c->index, category, importance, title, action);
    if (!f)
        return NULL;
    if (analysis_has(gain))
        f->speedup = importance;
    snprintf(f->source, sizeof f->source, "profeed:%s", model);
    return f;
}

void ncu_ctx_pct(fb_finding_t *f, const ncu_ctx_t *c, ncu_metric_t m)
{
    double x = V(c, m);
    if (!f || !analysis_has(x))
        return;
    x = fmin(fmax(x, 0), 100);
    if (m == NM_SM_PCT && c->k->sm_pct_derived)
        finding_add_evidence(f, ncu_summary_sm_name(c->k), x, "%",
                             "SM throughput %.1f%% of peak (derived: the busiest of the issue slots, the "
                             "pipes and the memory pipes, the counters sm__throughput is the maximum of)",
                             x);
    else
        finding_add_evidence(f, ncu_metric_info(m)->name, x, "%", "%s %.1f%% of peak", ncu_metric_info(m)->what,
                             x);
}

void ncu_ctx_missing(ncu_ctx_t *c, const char *what) { feedback_add_missing(c->fb, what); }

/* ----- evidence shared by the bound findings ------------------------------- */

/* "busiest units: DRAM 86%, L2 89%, ALU pipe 10%": the top of the table. */
static void s_units_evidence(fb_finding_t *f, const ncu_ctx_t *c)
{
    char text[190];
    size_t used = 0;
    for (size_t i = 0; i < c->units.count && i < 4; i++) {
        int n = snprintf(text + used, sizeof text - used, "%s%s %.0f%%", i ? ", " : "",
                         c->units.unit[i].key, c->units.unit[i].pct);
        if (n < 0 || (size_t) n >= sizeof text - used)
            break;
        used += (size_t) n;
    }
    if (used > 0)
        finding_add_evidence(f, "units", c->units.unit[0].pct, "%", "busiest units: %s", text);
}

/* The largest stall reasons among `reasons`, as evidence. */
static void s_stall_evidence(fb_finding_t *f, const ncu_ctx_t *c, const ncu_metric_t *reasons, size_t n)
{
    int shown = 0;
    bool used[NM__COUNT] = {false};
    while (shown < 2) {
        int best = -1;
        double best_share = 0.1;
        for (size_t i = 0; i < n; i++) {
            double s = ncu_ctx_stall_share(c, reasons[i]);
            if (analysis_has(s) && s >= best_share && !used[reasons[i]]) {
                best = (int) reasons[i];
                best_share = s;
            }
        }
        if (best < 0)
            return;
        used[best] = true;
        finding_add_evidence(f, ncu_metric_info((ncu_metric_t) best)->name, V(c, (ncu_metric_t) best),
                             "cycle", "warps wait on %s %.0f%% of their stall cycles",
                             ncu_advice_stall_reason(best), 100 * best_share);
        shown++;
    }
}

static const ncu_metric_t s_memory_stalls[] = {NM_STALL_LONG_SCOREBOARD, NM_STALL_LG_THROTTLE,
                                              NM_STALL_DRAIN, NM_STALL_MIO_THROTTLE,
                                              NM_STALL_SHORT_SCOREBOARD, NM_STALL_TEX_THROTTLE};
static const ncu_metric_t s_pipe_stalls[] = {NM_STALL_MATH_THROTTLE, NM_STALL_MIO_THROTTLE,
                                            NM_STALL_SHORT_SCOREBOARD, NM_STALL_GMMA,
                                            NM_STALL_DISPATCH, NM_STALL_WAIT};

/* Achieved DRAM bandwidth and its peak, in bytes per second. */
static bool s_dram_bandwidth(const ncu_ctx_t *c, double *achieved, double *peak)
{
    *achieved = V(c, NM_DRAM_BYTES_PER_S);
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE), t = V(c, NM_DURATION);
    if (!analysis_has(*achieved) && analysis_has(rd) && analysis_has(wr) && analysis_has(t) && t > 0)
        *achieved = (rd + wr) / (t * 1e-9);
    *peak = NAN;
    double per_cycle = V(c, NM_DRAM_BYTES_PEAK), freq = V(c, NM_DRAM_FREQ);
    double mem_khz = V(c, NM_DEV_MEM_CLOCK_KHZ), bus = V(c, NM_DEV_BUS_WIDTH);
    if (analysis_has(per_cycle) && analysis_has(freq))
        *peak = per_cycle * freq;
    else if (analysis_has(mem_khz) && analysis_has(bus))
        *peak = mem_khz * 1e3 * 2 * bus / 8; /* double data rate */
    else if (c->roof)
        *peak = c->roof->dram_gbps * 1e9;
    return analysis_has(*achieved) && analysis_has(*peak) && *peak > 0;
}

/* FP32 FLOP executed: counts when measured, else the full set's rates per
 * elapsed cycle times the clock (as NCU's roofline chart computes them). */
static double s_fp32_flops(const ncu_ctx_t *c, double t)
{
    if (analysis_has(V(c, NM_FFMA)) || analysis_has(V(c, NM_FADD)) || analysis_has(V(c, NM_FMUL)))
        return s_or0(V(c, NM_FADD)) + s_or0(V(c, NM_FMUL)) + 2 * s_or0(V(c, NM_FFMA));
    if ((analysis_has(V(c, NM_FFMA_RATE)) || analysis_has(V(c, NM_FADD_RATE))) && analysis_has(c->sm_clock_hz))
        return (s_or0(V(c, NM_FADD_RATE)) + s_or0(V(c, NM_FMUL_RATE)) + 2 * s_or0(V(c, NM_FFMA_RATE))) *
               c->sm_clock_hz * t * 1e-9;
    return NAN;
}

static void s_flops_evidence(fb_finding_t *f, const char *precision, const char *key, double flops,
                             double t, double peak, const char *peak_from)
{
    double rate = flops / (t * 1e-9);
    if (analysis_has(peak) && peak > 0)
        finding_add_evidence(f, key, rate, "FLOP/s", "%s %.2f TFLOP/s = %.0f%% of the %.1f TFLOP/s peak (%s)",
                             precision, rate / 1e12, fmin(100 * rate / peak, 100), peak / 1e12, peak_from);
    else
        finding_add_evidence(f, key, rate, "FLOP/s", "%s %.2f TFLOP/s", precision, rate / 1e12);
}

/* Achieved FLOP/s by precision (FADD + FMUL + 2 FFMA; packed FP16 counts
 * two or four), and arithmetic intensity against the ridge point. */
static void s_roofline(const ncu_ctx_t *c, fb_finding_t *f)
{
    double t = V(c, NM_DURATION);
    if (!analysis_has(t) || t <= 0)
        return;
    const char *peak_from = c->roof ? c->roof->name : "";
    double fp32 = s_fp32_flops(c, t);
    double fp32_peak = analysis_has(V(c, NM_FFMA_PEAK)) && analysis_has(c->sm_clock_hz)
                           ? 2 * V(c, NM_FFMA_PEAK) * c->sm_clock_hz
                           : (c->roof ? c->roof->fp32_tflops * 1e12 : NAN);
    if (analysis_has(V(c, NM_FFMA_PEAK)))
        peak_from = "the capture";
    if (analysis_has(fp32) && fp32 > 0)
        s_flops_evidence(f, "FP32", "fp32_flops_per_second", fp32, t, fp32_peak, peak_from);
    double fp64 = s_or0(V(c, NM_DADD)) + s_or0(V(c, NM_DMUL)) + 2 * s_or0(V(c, NM_DFMA));
    if (fp64 > 0) {
        double peak = analysis_has(V(c, NM_DFMA_PEAK)) && analysis_has(c->sm_clock_hz)
                          ? 2 * V(c, NM_DFMA_PEAK) * c->sm_clock_hz
                          : (c->roof ? c->roof->fp64_tflops * 1e12 : NAN);
        s_flops_evidence(f, "FP64", "fp64_flops_per_second", fp64, t, peak, peak_from);
    }
    double fp16 = 2 * s_or0(V(c, NM_HADD)) + 2 * s_or0(V(c, NM_HMUL)) + 4 * s_or0(V(c, NM_HFMA));
    if (fp16 > 0)
        s_flops_evidence(f, "FP16 (non-tensor)", "fp16_flops_per_second", fp16, t, NAN, "");
    double flops = s_or0(fp32) + fp64 + fp16;
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE);
    double achieved, bw_peak;
    if (flops > 0 && analysis_has(rd) && analysis_has(wr) && rd + wr > 0 && analysis_has(fp32_peak) &&
        s_dram_bandwidth(c, &achieved, &bw_peak)) {
        double ai = flops / (rd + wr), ridge = fp32_peak / bw_peak;
        finding_add_evidence(f, "arithmetic_intensity", ai, "FLOP/byte",
                             "arithmetic intensity %.3g FLOP/byte vs ridge point %.1f: %s side of "
                             "the roofline", ai, ridge, ai >= ridge ? "compute" : "memory");
    }
}

/* The headroom of a unit at `pct` of its peak that reaches `attain` at best,
 * over the time SMs are active, less what a cause that adds warps already
 * claims: with speedup S from that cause and S_h = attain / pct from the
 * headroom, the bound's own change is worth 1 - S / S_h (its action, more
 * bytes in flight or less work, comes on top of the cause's). */
static double s_headroom_of(const ncu_ctx_t *c, double pct, double attain)
{
    double used = fmin(fmin(pct, 100) / attain, 1);
    double left = 1 - used * (c->latency_speedup > 1 ? c->latency_speedup : 1);
    return (left > 0 ? left : 0) * (analysis_has(c->idle) ? 1 - c->idle : 1);
}

static double s_headroom(const ncu_ctx_t *c, double pct) { return s_headroom_of(c, pct, NCU_ATTAIN_ONCHIP); }

static double s_unit_headroom(const ncu_ctx_t *c, const ncu_unit_t *unit)
{
    return s_headroom_of(c, unit->pct, unit->attain);
}

/* Whether registers set the occupancy: their block limit is measured and no
 * other limit (shared memory, warps, blocks) is lower. */
static bool s_registers_limit_occupancy(const ncu_ctx_t *c)
{
    static const ncu_metric_t others[] = {NM_OCC_LIMIT_SMEM, NM_OCC_LIMIT_WARPS, NM_OCC_LIMIT_BLOCKS};
    double regs = V(c, NM_OCC_LIMIT_REGISTERS);
    if (!analysis_has(regs) || regs <= 0)
        return false;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (analysis_has(V(c, others[i])) && V(c, others[i]) > 0 && V(c, others[i]) < regs)
            return false;
    return true;
}

/* ----- memory side ----------------------------------------------------------- */

/* DRAM traffic passes through L2, so L2 reads at least as busy as DRAM; with
 * DRAM within this many points of L2, DRAM's traffic is what keeps L2 busy (a
 * stream that reads and writes each byte once, whose L2 hits are its writes),
 * not reuse. */
#define NCU_L2_CARRIES_GAP 15.0
static bool s_l2_carries_dram(const ncu_unit_t *dram, const ncu_unit_t *l2)
{
    return dram && l2 && dram->pct >= l2->pct - NCU_L2_CARRIES_GAP;
}

/* L2 serving most of its load traffic from its own contents: the global load
 * sectors that miss L1 (every L1 hit counted a load's: stores write through)
 * are more than twice the sectors DRAM reads, so more than half of what L2
 * returns is re-reads of data it already holds, traffic of L2's own on top of
 * DRAM's. Then L2, not DRAM behind it, is the level to relieve (corpus v13's
 * block-per-row softmax reads each row three times: L2 82%, DRAM 71%, 2.25
 * L1-missing sectors per DRAM sector; the row read once ran 1.14x faster, with
 * DRAM at 81% after). A stream reads each sector from DRAM once: about 1. */
#define NCU_L2_REREAD_RATIO 2.0
static double s_l1_missed_load_sectors(const ncu_ctx_t *c)
{
    double ld = V(c, NM_SECTORS_GLOBAL_LD), hit = V(c, NM_L1_HIT);
    if (!analysis_has(ld) || !analysis_has(hit))
        return NAN;
    return fmax(ld - fmin(fmax(hit, 0), 100) / 100 * ncu_ctx_lsu_sectors(c), 0);
}

/* Whether DRAM read more than the LSU's sectors could have asked for: the
 * reads came another way (TMA copies, texture fetches), which the L1-missing
 * load sectors do not count, so the re-read ratio is not measured there; it
 * would call a kernel whose L2 serves its operands again and again "not
 * re-reads" (corpus v51's cuDNN sm90 kernels: 0.0x, at 78% L2 hits). */
static bool s_reads_bypass_lsu(const ncu_ctx_t *c)
{
    return analysis_has(V(c, NM_SECTORS_GLOBAL_LD)) && ncu_ctx_unseen_sectors(c, true) > 0;
}

/* The bytes the SMs read from L2 per byte DRAM read: the LSU's loads that
 * miss L1 where they account for DRAM's reads, else (TMA copies, texture
 * fetches) L2's own count of the sectors the SMs read, where the capture has
 * it: cuBLAS's TMA GEMM in corpus v54 read 7.3x DRAM's bytes from L2 with one
 * LSU sector. NAN where neither measures it. */
static double s_l2_reread_ratio(const ncu_ctx_t *c)
{
    double rd = V(c, NM_DRAM_READ);
    if (!analysis_has(rd) || rd <= 0)
        return NAN;
    double read = s_reads_bypass_lsu(c) ? V(c, NM_L2_READ_SECTORS_SM) : s_l1_missed_load_sectors(c);
    return analysis_has(read) ? read * 32.0 / rd : NAN; /* 32-byte sectors */
}

static bool s_l2_rereads(const ncu_ctx_t *c)
{
    double ratio = s_l2_reread_ratio(c);
    return analysis_has(ratio) && ratio > NCU_L2_REREAD_RATIO;
}

/* Fills keep[] (one value per measured unit, NAN for "unchanged") with `value`
 * for the pipes that issue loads: LSU, and TEX with `tex`. */
static void s_keep_load_pipes(const ncu_ctx_t *c, double keep[NCU_UNITS_MAX], double value, bool tex)
{
    for (size_t u = 0; u < c->units.count; u++) {
        const char *key = c->units.unit[u].key;
        keep[u] = strcmp(key, "lsu") == 0 || (tex && strcmp(key, "tex") == 0) ? value : NAN;
    }
}

/* What a reuse lever saves beyond coalescing. Where the loads are uncoalesced
 * as well, both act on the same L1 and L2 work: coalescing first (its finding
 * has its own estimate), the reuse on what remains (corpus v14's matmul with
 * threadIdx.x down a column: 16 rows a request, 97% hits, coalescing measured
 * 5.34x; corpus v10's gather from an L2-resident table re-reads it by design,
 * and its sectors' waste is the lever, 1.55x). */
static double s_saved_beyond_coalescing(const ncu_ctx_t *c, double l1_keep, double l2_keep,
                                        const double *unit_keep)
{
    double l1, l2;
    ncu_traffic_coalesced_keep(c, &l1, &l2);
    ncu_relief_t first = {.l1 = l1, .l2 = l2, .dram = 1, .compute = 1, .unit_keep = NULL};
    ncu_relief_t both = {.l1 = l1 * l1_keep, .l2 = l2 * l2_keep, .dram = 1, .compute = 1, .unit_keep = unit_keep};
    double before = ncu_units_saved(&c->units, &first), after = ncu_units_saved(&c->units, &both);
    return analysis_has(before) && analysis_has(after) ? fmax(after - before, 0) : NAN;
}

/* What reuse buys an L1 bound whose loads mostly hit L1: a hit is data the SM
 * already fetched, which registers (several outputs per thread) or a
 * shared-memory tile would hand out without another load instruction and
 * L1 lookup. Model: L1's work and the LSU and TEX pipes' instructions drop by
 * the hit share, every other unit keeps its work, and the time follows the
 * roofline to the next unit that binds (the issue slots, a math pipe, L2).
 * It is an upper bound, as the fix decides how much of the reuse it takes.
 * Corpus v13: the naive matmul (L1 99%, hits 88%, issue next at 38%) est.
 * 60%, shared-memory tiles measured 33% (1.49x); the direct convolution (L1
 * 87%, hits 90%, issue 56%) est. 30%, 4 channels per thread measured 40%
 * (1.67x). Corpus v11's sliding window (L1 87%, hits 97%, issue 48%) est.
 * 41% where 4 outputs per thread measured 17%: the lever moved the limit to
 * something the counters did not show. */
static double s_reuse_saved(const ncu_ctx_t *c, double hit)
{
    double keep[NCU_UNITS_MAX];
    s_keep_load_pipes(c, keep, 1 - hit, true);
    return s_saved_beyond_coalescing(c, 1 - hit, 1, keep);
}

/* What register blocking buys a shared-memory bound: operands a thread loads
 * from shared memory for every instruction of math are kept in registers and
 * reused across several outputs (4x4 outputs a thread: a quarter of the
 * loads), so the shared-memory wavefronts and the LSU instructions that issue
 * them fall, and the time follows the roofline to the next unit; how far they
 * fall is the fix's choice, so this is the bound with them gone. Bank-conflict
 * replays are their own finding's: with a quarter or more of the wavefronts
 * replays, no estimate (corpus v13's strided reduction, 71%). Corpus v13's
 * tiled matmul (shared 94%, issue next at 34%) est. 64%, 4x4 outputs a thread
 * measured 65% (2.83x); its block scan (L1 72%, ADU 55%) est. 24%, shuffles
 * measured 29% (1.40x). */
static double s_register_blocking_saved(const ncu_ctx_t *c, double wavefronts)
{
    double conflicts = s_or0(V(c, NM_BANK_CONFLICTS_LD)) + s_or0(V(c, NM_BANK_CONFLICTS_ST));
    if (!(wavefronts > 0) || conflicts >= 0.25 * wavefronts)
        return NAN;
    /* L1 keeps its global traffic (a sector and a wavefront each about a
     * cycle of the data stage); the LSU pipe keeps nothing of the shared loads. */
    double global = s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST));
    double keep[NCU_UNITS_MAX];
    s_keep_load_pipes(c, keep, global / (global + wavefronts), false);
    ncu_relief_t relief = {.l1 = global / (global + wavefronts), .l2 = 1, .dram = 1, .compute = 1,
                           .unit_keep = keep};
    return ncu_units_saved(&c->units, &relief);
}

/* What reading the data once buys an L2 bound on re-reads (s_l2_rereads):
 * the loads that miss L1 fall to DRAM's reads (L2 keeps its stores and the
 * first reads), and as the data is then kept in registers or shared memory,
 * the loads' L1 work and LSU instructions fall by the same share; the time
 * follows the roofline to the next unit. Corpus v13's block softmax (2.2
 * L1-missing sectors per DRAM sector, stores as many as reads) est. 13%, the
 * row read once measured 12%; corpus v14's 1x1 convolution (119) est. 58%, 4
 * channels per thread measured 43%. */
static double s_reread_saved(const ncu_ctx_t *c, double ratio)
{
    double ld = V(c, NM_SECTORS_GLOBAL_LD), st = s_or0(V(c, NM_SECTORS_GLOBAL_ST));
    double missed = s_l1_missed_load_sectors(c);
    /* The model moves the LSU's loads; reads that come by TMA (a ratio from
     * L2's own count) it cannot place: the headroom stands for them. */
    if (!analysis_has(ratio) || ratio <= 1 || !analysis_has(ld) || ld <= 0 || !analysis_has(missed) ||
        s_reads_bypass_lsu(c))
        return NAN;
    double l2_keep = (missed / ratio + st) / (missed + st);
    double ld_keep = 1 - (ld / (ld + st)) * (1 - 1 / ratio);
    double keep[NCU_UNITS_MAX];
    s_keep_load_pipes(c, keep, 1 / ratio, false);
    return s_saved_beyond_coalescing(c, ld_keep, l2_keep, keep);
}

/* Below the 2x at which L2's re-reads are the bound (s_l2_rereads), a kernel
 * whose L1-missing loads still fetch this much more than DRAM reads is reading
 * data twice, and where the second pass misses L2 as well DRAM carries it
 * again (corpus v14's layer norm: 1.46x, DRAM reads 1.37x the input; reading
 * each row once ran 1.26x faster). Streams read each sector once: about 1.0;
 * PyTorch's reductions 1.2. */
#define NCU_REREAD_NOTE_RATIO 1.3
/* Under this, DRAM reads more than the loads fetch from L2: sectors fetched
 * in pairs for scattered reads (ncu_units.h), not a stream. */
#define NCU_STREAM_RATIO_LO 0.9

/* Blocks too short to pay for their launch (c->launch_share at
 * NCU_LAUNCH_SHARE or more) explain a DRAM bound under NCU_SOL_HIGH (plain or
 * waiting on memory) and a kernel with nothing busy: the SMs start blocks at a
 * fixed rate, so more warps or more blocks cannot help, and fewer, longer
 * blocks (several elements a thread) move the same bytes in fewer launches.
 * Measured on the H200 (tests/fixtures/ncu/h200-v15/launch_rate.cu): a copy of
 * one float a thread in 128-thread blocks ran at the floor, 161 cycles a
 * block, and 4 a thread 1.96x faster; corpus v15's block sums (launch share
 * 78%) 2.93x. The action and the evidence go together: a DRAM bound adds both
 * under NCU_SOL_HIGH only. */
static bool s_blocks_too_short(const ncu_ctx_t *c)
{
    return analysis_has(c->launch_share) && c->launch_share >= NCU_LAUNCH_SHARE;
}

/* Appends the lever for blocks too short to `action` (`cap` bytes). */
static void s_launch_action(const ncu_ctx_t *c, char *action, size_t cap)
{
    size_t used = strlen(action);
    if (s_blocks_too_short(c) && used + 1 < cap)
        snprintf(action + used, cap - used, " %s", ncu_advice_action("block_launch"));
}

/* Adds the launch floor's numbers to `f` when the blocks are too short. */
static void s_launch_evidence(const ncu_ctx_t *c, fb_finding_t *f)
{
    if (!s_blocks_too_short(c))
        return;
    double grid = V(c, NM_GRID_SIZE), per_sm = grid / V(c, NM_SM_COUNT);
    char why[80];
    if (analysis_has(c->block_floor_resident))
        snprintf(why, sizeof why, "%.0f resident, each alive a DRAM round trip", c->block_floor_resident);
    else
        snprintf(why, sizeof why, "the launch rate");
    finding_add_evidence(f, "block_launch_share", 100 * c->launch_share, "%",
                         "%.0f blocks, %.0f per SM, one every %.0f cycles; at best one every %.0f (%s): "
                         "%.0f%% of the time", grid, per_sm, V(c, NM_ELAPSED_CYCLES) / per_sm, c->block_floor_cycles,
                         why, 100 * c->launch_share);
}

/* A block size that is not a multiple of 32 leaves its last warp's other
 * lanes idle, and a warp slot carries only its active lanes' loads: with the
 * SM's warp slots what limits the bytes in flight, full warps put 32 / active
 * lanes as many in flight. Corpus v23's 100-thread blocks (25 of 32 lanes
 * active, DRAM 55% on the H100): 256-thread blocks over the same stream ran
 * 1.52x faster. Named in the action of a DRAM stream below its roof. */
static void s_partial_warp_action(const ncu_ctx_t *c, char *action, size_t cap)
{
    double block = V(c, NM_BLOCK_SIZE), lanes = V(c, NM_THREADS_PER_WARP);
    size_t used = strlen(action);
    if (!analysis_has(block) || block < 1 || fmod(block, 32) == 0 || used >= cap)
        return;
    double warps = ceil(block / 32);
    /* Without the lane counter, the block's own share: every lane of its full warps and the rest. */
    double active = analysis_has(lanes) ? lanes : 32 * block / (32 * warps);
    snprintf(action + used, cap - used,
             " Blocks of %.0f threads leave %.0f of their %.0f lanes idle (%.1f of 32 active %s): a warp slot "
             "carries only its active lanes' loads, so a block size that is a multiple of 32 puts more bytes "
             "in flight on the same warp slots.",
             block, 32 * warps - block, 32 * warps, active, analysis_has(lanes) ? "on average" : "in its warps");
}

/* The DRAM bound's action. Below the roof with few warps: the bytes in flight
 * come from more loads per thread or more warps, each loading its own data
 * (corpus v7's v7_regbound, 8 warps per SM at 216 registers: 8 loads in flight
 * per thread ran 1.27x faster, twice the warps with half the state each
 * 1.34x). The action names both. */
static void s_dram_action(const ncu_ctx_t *c, const ncu_unit_t *dram, char *action, size_t cap)
{
    double theo = V(c, NM_OCC_THEORETICAL);
    const char *base = ncu_advice_action(dram->pct >= NCU_SOL_HIGH ? "dram_bound" : "dram_below_roof");
    if (dram->pct < NCU_SOL_HIGH && analysis_has(theo) && theo <= 25 && analysis_has(V(c, NM_REGISTERS)) &&
        s_registers_limit_occupancy(c))
        snprintf(action, cap,
                 "%s At %.0f%% occupancy (%.0f registers per thread), more warps are the other way to "
                 "more bytes in flight: split each thread's state and data over several threads.",
                 base, theo, V(c, NM_REGISTERS));
    else
        snprintf(action, cap, "%s", base);
    double ratio = s_l2_reread_ratio(c);
    size_t used = strlen(action);
    if (analysis_has(ratio) && ratio >= NCU_REREAD_NOTE_RATIO && used < cap)
        snprintf(action + used, cap - used,
                 " The loads that miss L1 fetch %.1fx the bytes DRAM reads: the kernel reads its data "
                 "more than once (a second pass); read it once and keep it in registers or shared "
                 "memory, which also saves the DRAM reads of a second pass that misses L2.", ratio);
    if (dram->pct < NCU_SOL_HIGH) {
        s_partial_warp_action(c, action, cap);
        s_launch_action(c, action, cap);
    }
}

/* The last share of DRAM's scattered ceiling over which a request's wait
 * turns from its own round trip to the queue's (s_bound_memory). */
#define NCU_SCATTERED_QUEUE 0.10

static void s_bound_memory(ncu_ctx_t *c, const ncu_unit_t *unit)
{
    char title[320];
    double dram = V(c, NM_DRAM_PCT);
    fb_finding_t *f = NULL;
    if (!unit) { /* only the memory summary was measured */
        double mem = fmin(s_or0(V(c, NM_MEM_PCT)), 100);
        char sol[64];
        s_summaries(c, sol, sizeof sol);
        snprintf(title, sizeof title, "Memory-bound%s%s; which level saturates was not measured",
                 sol[0] ? ": " : "", sol);
        f = ncu_ctx_finding(c, "memory_bound", s_headroom(c, mem), "headroom", title,
                            ncu_advice_action("memory_bound"));
        ncu_ctx_missing(c, "per-level memory throughput (dram__throughput, lts__throughput, "
                           "l1tex__throughput): --section SpeedOfLight");
    } else if (strcmp(unit->key, "dram") == 0) {
        double achieved, peak;
        char rate[64] = "", compute[32] = "";
        if (s_dram_bandwidth(c, &achieved, &peak))
            snprintf(rate, sizeof rate, " (%.2f of %.2f TB/s)", achieved / 1e12, peak / 1e12);
        if (analysis_has(V(c, NM_SM_PCT)))
            snprintf(compute, sizeof compute, "; compute is at %.0f%%", fmin(V(c, NM_SM_PCT), 100));
        /* L2 well above DRAM is either DRAM's traffic passing through (a
         * stream: kernels.cu's vec_add, L2 83% over DRAM 72%) or L2's own
         * re-reads (corpus v13's block softmax: 82% over 71%, the row read
         * once ran 1.14x); SpeedOfLight's percentages cannot tell them apart,
         * only the load sectors against DRAM's reads can. Without those the
         * level is not named. */
        const ncu_unit_t *l2 = ncu_units_find(&c->units, "l2");
        if (unit->scattered) {
            /* At its scattered ceiling DRAM has no room for these reads; the
             * lever, neighbouring reads together, makes them a stream, whose
             * ceiling is DRAM's own: the headroom is read against that (the
             * over-fetched half of each burst, which goes too, is not counted).
             * The lever keeps the load requests, and each still takes an idle
             * round trip from DRAM, as a coalescing fix's do (ncu_traffic.c):
             * where the warps wait on their loads, that floor caps the gain
             * too. Corpus v50's 32-byte rows at random: DRAM 44%, the stream's
             * headroom said 2.05x, the floor 1.55x; in order they ran 1.29x,
             * and four rows a thread in order 1.41x. The floor holds for a
             * request that waits alone; one that waits less than the trip
             * itself shares its wait with others in flight (a thread's
             * several rows), whose order can still make a stream: there the
             * headroom stands. So does it where DRAM has reached its
             * scattered ceiling: requests that wait alone cannot keep it
             * there, and the waits are the queue's, which the stream
             * removes (corpus v67's rows two, four and eight a thread: DRAM
             * 56%-58%, a request waiting 887-928 cycles, which the floor
             * read as 1.24x-1.28x; in order they ran 1.59x-2.13x). The
             * waits turn from a request's own to the queue's as DRAM nears
             * that ceiling, so the floor holds in full up to 90% of it and
             * fades to nothing at it: a hard line moved v67's two rows a
             * thread (DRAM 56% of a 55% ceiling) 14 points between noisy
             * readings. */
            snprintf(title, sizeof title,
                     "Memory-bound on DRAM's rate for scattered sectors: %.0f%% of peak%s, where reads of "
                     "scattered 32-byte sectors saturate near %.0f%%%s",
                     unit->pct, rate, unit->attain, compute);
            double gain = s_headroom_of(c, unit->pct, NCU_ATTAIN_DRAM), wait = NAN, trip = NAN;
            double req = V(c, NM_REQUESTS_GLOBAL_LD), sectors = V(c, NM_SECTORS_GLOBAL_LD);
            double floor = analysis_has(req) && analysis_has(sectors) && req > 0
                               ? ncu_traffic_floor_gain(c, sectors / req, &wait, &trip)
                               : NAN;
            double lone = fmin(fmax((unit->attain - unit->pct) / (NCU_SCATTERED_QUEUE * unit->attain), 0), 1);
            bool floored = analysis_has(floor) && wait >= trip && lone > 0 && floor < gain;
            f = ncu_ctx_finding(c, "dram_bound", floored ? gain - lone * (gain - floor) : gain, "headroom", title,
                                ncu_advice_action("dram_scattered"));
            if (f && floored)
                finding_add_evidence(f, "model", 100 * trip / wait, "%",
                                     "a load request waits %.0f cycles; read in order it still takes an idle "
                                     "round trip of %.0f cycles from DRAM: the waits keep at least %.0f%%",
                                     wait, trip, 100 * trip / wait);
            if (f && analysis_has(V(c, NM_DRAM_READ)) && analysis_has(V(c, NM_SECTORS_GLOBAL_LD)))
                finding_add_evidence(f, "dram__bytes_read.sum", V(c, NM_DRAM_READ), "byte",
                                     "DRAM read %.3g bytes for %.3g bytes of load sectors: each sector "
                                     "fetched alone", V(c, NM_DRAM_READ), 32 * V(c, NM_SECTORS_GLOBAL_LD));
        } else if (l2 && l2->pct >= unit->pct + NCU_SOL_GAP && !analysis_has(s_l2_reread_ratio(c))) {
            snprintf(title, sizeof title,
                     "Memory-bound on DRAM or L2: DRAM %.0f%% of peak%s, L2 %.0f%%%s; whether L2's extra work "
                     "is DRAM's traffic passing through or re-reads of data it holds was not measured",
                     unit->pct, rate, l2->pct, compute);
            f = ncu_ctx_finding(c, "memory_bound", fmin(s_unit_headroom(c, unit), s_unit_headroom(c, l2)),
                                "headroom", title, ncu_advice_action("dram_or_l2"));
            if (s_reads_bypass_lsu(c)) { /* measured, and blind to this kernel's loads */
                if (f)
                    finding_add_evidence(f, "dram__bytes_read.sum", V(c, NM_DRAM_READ), "byte",
                                         "DRAM read %.3g bytes, more than the LSU's sectors could ask for: the "
                                         "data comes by TMA or texture, which the LSU's load counters do not see",
                                         V(c, NM_DRAM_READ));
            } else {
                ncu_ctx_missing(c, "the sectors that tell L2's re-reads from DRAM's traffic "
                                   "(l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum, l1tex__t_sector_hit_rate.pct, "
                                   "dram__bytes_read.sum): the default plan collects them, or add them with "
                                   "--metrics");
            }
        } else {
            char action[720];
            s_dram_action(c, unit, action, sizeof action);
            snprintf(title, sizeof title, "Memory-bound on DRAM bandwidth: %.0f%% of peak%s%s", unit->pct,
                     rate, compute);
            f = ncu_ctx_finding(c, "dram_bound", s_unit_headroom(c, unit), "headroom", title, action);
        }
        if (f && unit->pct < NCU_SOL_HIGH)
            s_launch_evidence(c, f);
        if (f && s_dram_bandwidth(c, &achieved, &peak))
            finding_add_evidence(f, "dram__bytes.sum.per_second", achieved, "byte/s",
                                 "DRAM %.2f TB/s of %.2f TB/s peak", achieved / 1e12, peak / 1e12);
        if (f)
            s_roofline(c, f);
    } else if (strcmp(unit->key, "l2") == 0) {
        double atomics = s_or0(V(c, NM_GLOBAL_RED)) + s_or0(V(c, NM_GLOBAL_ATOM));
        double atomic_unit = V(c, NM_L2_ATOMIC_PCT), reread = s_l2_reread_ratio(c);
        const char *reader = s_reads_bypass_lsu(c) ? "the SMs read (TMA included)" : "the loads that miss L1 fetch";
        bool atomic = atomics > 0 && analysis_has(atomic_unit) && atomic_unit >= 20;
        bool rereads = !atomic && analysis_has(reread) && reread > NCU_L2_REREAD_RATIO;
        if (atomic)
            snprintf(title, sizeof title,
                     "L2-bound on atomics: L2 %.0f%% of peak, its atomic unit %.0f%% busy with %.3g "
                     "global atomic instructions", unit->pct, fmin(atomic_unit, 100), atomics);
        else if (rereads)
            snprintf(title, sizeof title,
                     "L2-bound on re-reads: L2 %.0f%% of peak with DRAM at %.0f%%: %s %.1fx the bytes DRAM "
                     "reads, so L2 serves the same data again",
                     unit->pct, s_or0(dram), reader, reread);
        else if (analysis_has(reread)) /* measured, and not re-reads: say only what was measured */
            snprintf(title, sizeof title,
                     "L2-bound: L2 %.0f%% of peak with DRAM at %.0f%%; %s %s%.2gx the bytes DRAM reads, so "
                     "its work is not mostly re-reads of data it holds",
                     unit->pct, s_or0(dram), reader, reread < 0.01 ? "under " : "", fmax(reread, 0.01));
        else if (s_reads_bypass_lsu(c))
            snprintf(title, sizeof title,
                     "L2-bound: L2 %.0f%% of peak with DRAM at %.0f%%; its data comes by TMA or texture "
                     "(DRAM read more than the LSU's loads asked for), so whether L2 serves it again was "
                     "not measured", unit->pct, s_or0(dram));
        else
            snprintf(title, sizeof title,
                     "L2-bound: L2 %.0f%% of peak with DRAM at %.0f%%; whether its work is re-reads of data "
                     "it holds was not measured", unit->pct, s_or0(dram));
        /* Reading once saves what re-reads there are, the fewer the less
         * (s_reread_saved is 0 at a ratio of 1): priced below the 2x that
         * names them too, so that the estimate does not jump at the name's
         * line (corpus v7's tiled scale at 1.9x-2.0x swung 5% to 18%). */
        double gain = s_unit_headroom(c, unit), saved = !atomic ? s_reread_saved(c, reread) : NAN;
        bool reuse = analysis_has(saved) && saved > gain;
        /* A stream (each byte DRAM reads returned once: L2 hits are its
         * writes) has no locality to improve: its L2 is named over DRAM only
         * because L2 reads some 8-15 points above DRAM for the same bytes and
         * this one read more (corpus v28's FFT at 15.7 points, ratio 1.03),
         * which a re-capture may not (bench/stability.py). */
        bool stream = !atomic && analysis_has(reread) && reread >= NCU_STREAM_RATIO_LO &&
                      reread < NCU_REREAD_NOTE_RATIO;
        f = ncu_ctx_finding(c, "l2_bound", reuse ? saved : gain, reuse ? "reuse" : "headroom", title,
                            ncu_advice_action(atomic ? "l2_atomics" : stream ? "l2_bound_stream" : "l2_bound"));
    } else {
        double wf = s_or0(V(c, NM_SHARED_WAVEFRONTS_LD)) + s_or0(V(c, NM_SHARED_WAVEFRONTS_ST));
        double smem = s_or0(V(c, NM_SMEM_STATIC)) + s_or0(V(c, NM_SMEM_DYNAMIC));
        bool shared = ncu_ctx_shared_traffic(c);
        double hit = V(c, NM_L1_HIT);
        bool hits = analysis_has(hit) && hit >= 50, atomics = s_or0(V(c, NM_SHARED_ATOM)) > 0;
        double saved = NAN;
        if (shared)
            snprintf(title, sizeof title,
                     "Shared-memory bound: the L1/shared pipe is %.0f%% busy with DRAM at %.1f%%; the "
                     "shared-memory traffic of the tiles is the limit", unit->pct, s_or0(dram));
        else if (atomics && !hits)
            snprintf(title, sizeof title,
                     "L1/shared pipe bound: %.0f%% busy with %.3g shared-memory atomics and %.1f%% DRAM",
                     unit->pct, V(c, NM_SHARED_ATOM), s_or0(dram));
        else if (hits)
            snprintf(title, sizeof title,
                     "L1-bound without reuse in shared memory: L1 %.0f%% busy, %.0f%% of loads hit L1, "
                     "DRAM %.1f%%: threads reload data their neighbours loaded", unit->pct,
                     fmin(hit, 100), s_or0(dram));
        else
            snprintf(title, sizeof title, "L1-bound: L1 %.0f%% of peak while DRAM is at %.1f%%",
                     unit->pct, s_or0(dram));
        if (shared)
            saved = s_register_blocking_saved(c, wf);
        else if (hits && !atomics)
            saved = s_reuse_saved(c, hit / 100);
        double gain = s_unit_headroom(c, unit);
        bool reuse = analysis_has(saved) && saved > gain;
        f = ncu_ctx_finding(c, "l1_bound", reuse ? saved : gain, reuse ? "reuse" : "headroom", title,
                            ncu_advice_action(shared    ? "l1_bound_shared"
                                              : atomics ? "contention_shared"
                                              : hits    ? "l1_bound"
                                                        : "l1_bound_traffic"));
        if (f && analysis_has(hit))
            finding_add_evidence(f, ncu_metric_info(NM_L1_HIT)->name, fmin(hit, 100), "%",
                                 "L1 hit rate %.1f%%", fmin(hit, 100));
        if (f && smem > 0)
            finding_add_evidence(f, "launch__shared_mem_per_block", smem, "byte",
                                 "%.0f bytes of shared memory per block", smem);
    }
    if (!f)
        return;
    s_units_evidence(f, c);
    s_stall_evidence(f, c, s_memory_stalls, sizeof s_memory_stalls / sizeof s_memory_stalls[0]);
    if (analysis_has(V(c, NM_L2_HIT)) && unit && strcmp(unit->key, "l1") != 0)
        finding_add_evidence(f, ncu_metric_info(NM_L2_HIT)->name, fmin(V(c, NM_L2_HIT), 100), "%",
                             "L2 hit rate %.1f%%", fmin(V(c, NM_L2_HIT), 100));
}

/* ----- compute side ------------------------------------------------------------ */

/* How many pipes the capture measured (the core plan and --set full: 10). */
#define NCU_PIPES_ALL 8

static size_t s_pipes_measured(const ncu_ctx_t *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->units.count; i++)
        n += c->units.unit[i].kind == NCU_UNIT_PIPE;
    return n;
}

/* What running an FP64-bound kernel's arithmetic in FP32 saves, where
 * precision allows (compute_fp64's action): its FP64 pipe's work moves to the
 * FMA pipe at fp64/fp32 of the utilization (GH100 runs FP32 at twice its FP64
 * rate, AD102 at 64 times), and the issue slots keep theirs, one instruction
 * for one; the time follows the roofline to the busiest unit after the move.
 * The pipe's headroom alone says nothing of this lever: at 95% it prices it at
 * 0 (corpus v55's FP64 Horner chain: FP64 95%, issue 52%; est. 1.83x, the
 * chain in float measured 1.72x). NAN where the GPU's rates are not known. */
static double s_fp32_saved(const ncu_ctx_t *c)
{
    if (!c->roof || c->roof->fp64_tflops <= 0 || c->roof->fp32_tflops <= 0)
        return NAN;
    return ncu_units_saved_moving(&c->units, "fp64", "fma", c->roof->fp64_tflops / c->roof->fp32_tflops);
}

/* What "use fewer barriers" saves where the ADU, which executes them, is the
 * busiest pipe and warps wait at barriers: its action removes work, not
 * the headroom the ADU's own utilization leaves. The ADU's other work is
 * branch divergence (lanes would be under 32) and serialized constant loads
 * (the ADU at 8x the issue slots' share or more, s_constant_replays); with
 * neither, its work is the barriers'. The better of the roofline with the
 * ADU's work gone and the barrier waits' share of the stalls (dead time for
 * the warp that waits, as a fence's), capped at the next unit's ceiling.
 * Corpus v58's barrier after every 2 FMAs in 100 blocks of 1024: ADU 83%,
 * barrier 72% of the stalls; the headroom said 9%, under the 24% of SMs
 * idle, where no barrier measured 4.03x and 132 blocks 1.32x. */
static double s_fewer_barriers_saved(const ncu_ctx_t *c)
{
    const ncu_unit_t *adu = ncu_units_find(&c->units, "adu"), *issue = ncu_units_find(&c->units, "issue");
    double lanes = V(c, NM_THREADS_PER_WARP), share = ncu_ctx_stall_share(c, NM_STALL_BARRIER);
    if (!adu || !issue || issue->pct <= 0 || !analysis_has(lanes) || lanes < 31 || !analysis_has(share) ||
        adu->pct >= NCU_ADU_REPLAY_RATIO * issue->pct)
        return NAN;
    double keep[NCU_UNITS_MAX];
    ncu_units_keep_one(&c->units, adu, 0, keep);
    ncu_relief_t gone = {.l1 = 1, .l2 = 1, .dram = 1, .compute = 1, .unit_keep = keep};
    bool won;
    return ncu_units_saved_or(&c->units, &gone, share, &won);
}

/* The busiest unit other than `skip`, by name, for evidence. */
static const char *s_next_unit_name(const ncu_ctx_t *c, const ncu_unit_t *skip)
{
    for (size_t u = 0; u < c->units.count; u++)
        if (&c->units.unit[u] != skip)
            return c->units.unit[u].name;
    return "none";
}

/* L1/TEX busy with almost no memory traffic: global, local and shared traffic
 * together under 0.05 sectors or wavefronts per SM cycle (the data path moves
 * one wavefront or four sectors a cycle), so its utilization comes from
 * LSU-issued instructions that are not memory accesses (shuffles, votes). */
static bool s_l1_without_traffic(const ncu_ctx_t *c)
{
    double sectors = V(c, NM_SECTORS_GLOBAL_LD), cycles = V(c, NM_SM_ACTIVE_CYCLES), sms = V(c, NM_SM_COUNT);
    if (!analysis_has(sectors) || !analysis_has(cycles) || !analysis_has(sms) || cycles <= 0 || sms <= 0)
        return false;
    double traffic = sectors + s_or0(V(c, NM_SECTORS_GLOBAL_ST)) + s_or0(V(c, NM_SECTORS_LOCAL_LD)) +
                     s_or0(V(c, NM_SECTORS_LOCAL_ST)) + s_or0(V(c, NM_SHARED_WAVEFRONTS_LD)) +
                     s_or0(V(c, NM_SHARED_WAVEFRONTS_ST)) + s_or0(V(c, NM_SHARED_ATOM));
    return traffic / (cycles * sms) < 0.05;
}

static void s_bound_compute(ncu_ctx_t *c, const ncu_unit_t *pipe, const ncu_unit_t *issue)
{
    char title[320], advice[32], sol[64];
    double sm = fmin(s_or0(V(c, NM_SM_PCT)), 100);
    s_summaries(c, sol, sizeof sol);
    fb_finding_t *f;
    /* The unit the verdict is on (fb_finding_t.unit): the pipe's key, unless
     * the issue slots lead or the saturated pipe was not measured. */
    const char *unit = pipe ? pipe->key : NULL;
    if (!pipe) {
        snprintf(title, sizeof title, "Compute-bound%s%s; which pipe saturates was not measured",
                 sol[0] ? ": " : "", sol);
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(sm, issue ? issue->pct : 0)), "headroom",
                            title, ncu_advice_action("compute"));
        ncu_ctx_missing(c, "pipe utilization (sm__inst_executed_pipe_*, sm__pipe_*_cycles_active): "
                           "the core plan or --section ComputeWorkloadAnalysis");
    } else if (s_pipes_measured(c) < NCU_PIPES_ALL &&
               pipe->pct < fmax(sm, issue ? issue->pct : 0) - NCU_SOL_GAP) {
        /* SM throughput is the max over its breakdown, every pipe among it:
         * far above the few pipes a capture measured, the saturated one may
         * be another. With every pipe measured the busiest one is the bound
         * (SM throughput also counts non-pipe rates: int_hash is at 90% SM
         * with ALU 71% its busiest pipe, as NCU's HighPipeUtilization says).
         * Busy issue slots say the same: "no pipe is full" needs every pipe
         * (KernelAgent's metric list has the tensor pipe alone). */
        char issued[48] = "";
        if (issue && issue->pct >= sm - NCU_SOL_GAP)
            snprintf(issued, sizeof issued, ", issue slots %.0f%% busy", issue->pct);
        snprintf(title, sizeof title,
                 "Compute-bound: %s%s; which pipe saturates was not measured (busiest measured: %s %.0f%%)",
                 sol, issued, pipe->name, pipe->pct);
        unit = NULL;
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(sm, issued[0] ? issue->pct : 0)), "headroom",
                            title, ncu_advice_action("compute"));
        ncu_ctx_missing(c, "pipe utilization (sm__inst_executed_pipe_*, sm__pipe_*_cycles_active): "
                           "the core plan or --section ComputeWorkloadAnalysis");
    } else if (issue && issue->pct >= NCU_SOL_HIGH && pipe->pct < NCU_SOL_LATENCY) {
        /* Every cycle issues, no pipe is full: the instruction count itself. */
        snprintf(title, sizeof title,
                 "Issue-bound: the schedulers issue an instruction in %.0f%% of cycles while no pipe is "
                 "full (busiest: %s %.0f%%)", issue->pct, pipe->name, pipe->pct);
        unit = "issue";
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, issue->pct), "headroom", title,
                            ncu_advice_action("compute_issue"));
    } else if (strcmp(pipe->key, "adu") == 0 && ncu_ctx_stall_share(c, NM_STALL_BARRIER) >= 0.2) {
        /* BAR.SYNC executes on the ADU: the pipe is busy with barriers. */
        snprintf(title, sizeof title,
                 "Barrier-bound: the ADU pipe, which executes __syncthreads, is %.0f%% busy and warps "
                 "wait at barriers %.0f%% of their stall cycles", pipe->pct,
                 100 * ncu_ctx_stall_share(c, NM_STALL_BARRIER));
        double fewer = s_fewer_barriers_saved(c), headroom = s_headroom(c, fmax(pipe->pct, sm));
        bool priced = analysis_has(fewer) && fewer > headroom;
        f = ncu_ctx_finding(c, "barrier_stall", priced ? fewer : headroom, priced ? "fewer_barriers" : "headroom",
                            title, ncu_advice_stall_action(NM_STALL_BARRIER));
        if (f && priced)
            finding_add_evidence(f, "model", 100 * fewer, "%",
                                 "with fewer barriers the ADU's work goes with them and so do the warps' "
                                 "waits at them, up to the next unit's ceiling (busiest after: %s)",
                                 s_next_unit_name(c, pipe));
    } else if (strcmp(pipe->key, "lsu") == 0 && s_l1_without_traffic(c)) {
        /* The LSU path carries shuffles, votes and other non-memory
         * instructions: L1 is busy with almost no memory traffic. */
        snprintf(title, sizeof title,
                 "Compute-bound on the %s: %.0f%% busy with almost no memory traffic: warp shuffles "
                 "or other LSU-issued instructions, not loads, fill it", pipe->name, pipe->pct);
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(pipe->pct, sm)), "headroom", title,
                            ncu_advice_action("compute_lsu_shuffles"));
    } else if (strcmp(pipe->key, "fma") == 0 && analysis_has(V(c, NM_PIPE_FMAHEAVY)) &&
               V(c, NM_PIPE_FMAHEAVY) > pipe->pct + NCU_SOL_GAP) {
        /* Integer multiplies (IMAD, IMUL, IDP) issue only to the FMA pipe's
         * heavy half, FP32 to both: a heavy half far busier than the pipe is
         * integer work the light half cannot share (corpus v7's v7_imad_hash:
         * heavy half 88%, the pipe 44%, SM 88%). Not a unit of its own: it
         * names what fills the FMA pipe when that pipe is the busiest. */
        double heavy = fmin(V(c, NM_PIPE_FMAHEAVY), 100);
        snprintf(title, sizeof title,
                 "Compute-bound on the %s: its heavy half, which alone runs integer multiply-add (IMAD, "
                 "IMUL), is %.0f%% busy (the whole pipe %.0f%%)%s%s",
                 pipe->name, heavy, pipe->pct, sol[0] ? ", " : "", sol);
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(heavy, sm)), "headroom", title,
                            ncu_advice_action("compute_fmaheavy"));
        if (f)
            finding_add_evidence(f, ncu_metric_info(NM_PIPE_FMAHEAVY)->name, heavy, "%",
                                 "FMA pipe heavy half %.0f%% busy", heavy);
    } else if (issue && issue->pct >= pipe->pct + NCU_SOL_GAP) {
        /* The issue slots lead every pipe by the SOL gap: the instruction
         * count, not one pipe, sets the time, and the pipe's own action (the
         * ALU's, say) would miss most of the instructions (PyTorch's
         * logcumsumexp scan, corpus v28: issue 70%, its busiest pipe, ALU,
         * 41%). The headroom is the issue slots', over the active cycles as
         * s_headroom weighs them. */
        snprintf(title, sizeof title,
                 "Compute-bound on instruction issue: the schedulers issue in %.0f%% of cycles, more than "
                 "any pipe is busy (busiest: %s %.0f%%)%s%s", issue->pct, pipe->name, pipe->pct,
                 sol[0] ? "; " : "", sol);
        unit = "issue";
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(issue->pct, sm)), "headroom", title,
                            ncu_advice_action("compute_issue"));
    } else if (strcmp(pipe->key, "lsu") == 0) {
        /* Memory instructions issue faster than L1's data path serves them
         * (ncu_bound_add sends an L1 as busy to the memory side): many
         * narrow loads and stores whose count, not their bytes, sets the
         * time. After the issue slots: leading the LSU by the gap, they
         * count every instruction, not the memory ones alone. */
        const ncu_unit_t *l1 = ncu_units_find(&c->units, "l1");
        char beside[64] = "";
        if (l1)
            snprintf(beside, sizeof beside, " (L1's data path %.0f%%)", l1->pct);
        snprintf(title, sizeof title, "Compute-bound on the %s: %.0f%% busy issuing loads and stores%s",
                 pipe->name, pipe->pct, beside);
        f = ncu_ctx_finding(c, "compute_bound", s_headroom(c, fmax(pipe->pct, sm)), "headroom", title,
                            ncu_advice_action("compute_lsu"));
    } else {
        snprintf(title, sizeof title, "Compute-bound on the %s: %.0f%% busy%s%s", pipe->name, pipe->pct,
                 sol[0] ? ", " : "", sol);
        snprintf(advice, sizeof advice, "compute_%s", pipe->key);
        double headroom = s_headroom(c, fmax(pipe->pct, sm)), fp32 = NAN;
        if (strcmp(pipe->key, "fp64") == 0)
            fp32 = s_fp32_saved(c);
        bool moved = analysis_has(fp32) && fp32 > headroom;
        f = ncu_ctx_finding(c, "compute_bound", moved ? fp32 : headroom, moved ? "fp32" : "headroom", title,
                            ncu_advice_action(advice));
        if (f && moved)
            finding_add_evidence(f, "fp32_over_fp64_rate", c->roof->fp32_tflops / c->roof->fp64_tflops, "x",
                                 "FP32 runs at %.1fx this GPU's FP64 rate (%.0f vs %.0f TFLOP/s): in FP32 the "
                                 "work moves to the FMA pipe; the issue slots keep theirs",
                                 c->roof->fp32_tflops / c->roof->fp64_tflops, c->roof->fp32_tflops,
                                 c->roof->fp64_tflops);
    }
    if (!f)
        return;
    snprintf(f->unit, sizeof f->unit, "%s", unit ? unit : "");
    s_units_evidence(f, c);
    ncu_ctx_pct(f, c, NM_SM_PCT);
    s_stall_evidence(f, c, s_pipe_stalls, sizeof s_pipe_stalls / sizeof s_pipe_stalls[0]);
    s_roofline(c, f);
}

/* ----- latency ------------------------------------------------------------------- */

static void s_occupancy_evidence(fb_finding_t *f, const ncu_ctx_t *c)
{
    if (analysis_has(V(c, NM_OCC_ACHIEVED)))
        finding_add_evidence(f, ncu_metric_info(NM_OCC_ACHIEVED)->name, V(c, NM_OCC_ACHIEVED), "%",
                             "achieved occupancy %.1f%%", V(c, NM_OCC_ACHIEVED));
}

/* The largest stall reason worth naming, or -1. */
static int s_top_stall(const ncu_ctx_t *c, double *share)
{
    int best = -1;
    *share = 0;
    for (int m = NM_STALL_FIRST; m < NM_STALL_END; m++) {
        double s = ncu_ctx_stall_share(c, (ncu_metric_t) m);
        if (m != NM_STALL_NOT_SELECTED && analysis_has(s) && s > *share) {
            best = m;
            *share = s;
        }
    }
    return best;
}

static void s_bound_latency(ncu_ctx_t *c)
{
    double share;
    int stall = s_top_stall(c, &share);
    const ncu_unit_t *top = c->latency_unit;
    double top_pct = top ? top->pct : c->busiest;
    /* The issue slots' own counter is over active cycles and may pass 60%
     * where ncu's SM summary, over elapsed cycles, does not (s_context): the
     * title says which one decided, so its evidence does not contradict it. */
    const ncu_unit_t *issue = ncu_units_find(&c->units, "issue");
    char busiest[200];
    if (issue && issue != top && issue->pct >= NCU_SOL_LATENCY && analysis_has(V(c, NM_SM_PCT)))
        snprintf(busiest, sizeof busiest, "busiest: %s %.0f%%; the issue slots %.0f%% of active cycles, SM %.0f%% "
                 "over the elapsed ones", top ? top->name : "SM", top_pct, issue->pct, V(c, NM_SM_PCT));
    else
        snprintf(busiest, sizeof busiest, "busiest: %s %.0f%%", top ? top->name : "SM", top_pct);
    char title[400];
    if (stall >= 0)
        snprintf(title, sizeof title,
                 "Latency-bound: no unit reaches 60%% of peak (%s); warps mostly wait on %s (%.0f%% of "
                 "their stall cycles)", busiest, ncu_advice_stall_reason(stall), 100 * share);
    else
        snprintf(title, sizeof title, "Latency-bound: no unit reaches 60%% of peak (%s)", busiest);
    double gain = stall >= 0 ? (1 - c->busiest / 100) * share : NAN;
    /* Blocks too short: the launch floor sets the time, whatever the warps
     * wait on, and fewer, longer blocks (the action) save it until a unit
     * reaches its ceiling: min(launch share, 1 - 1 / least room). Corpus
     * v52's layer norm, 4.2 M blocks of one 64-float row at the floor, L1
     * 44% the busiest: est. 54% (the stall share said 27%); eight rows a
     * block ran 5.0x, past the ceiling, for it also dropped the block-wide
     * reduction's shared-memory work. */
    double floor_gain = NAN;
    if (s_blocks_too_short(c)) {
        double room = NAN;
        for (size_t i = 0; i < c->units.count; i++)
            room = analysis_has(room) ? fmin(room, ncu_unit_room(&c->units.unit[i]))
                                      : ncu_unit_room(&c->units.unit[i]);
        if (analysis_has(room) && room > 1)
            floor_gain = fmin(c->launch_share, 1 - 1 / room);
        if (analysis_has(floor_gain) && !(gain >= floor_gain))
            gain = floor_gain;
        else
            floor_gain = NAN;
    }
    char action[720];
    if (analysis_has(floor_gain)) { /* the floor sets the time: its lever first, and the title says so */
        snprintf(title, sizeof title,
                 "Latency-bound at the SMs' block launch rate: %.0f blocks of work too short to pay for "
                 "their launch (the floor is %.0f%% of the time); no unit reaches 60%% of peak (%s)",
                 V(c, NM_GRID_SIZE), 100 * c->launch_share, busiest);
        snprintf(action, sizeof action, "%s", ncu_advice_action("block_launch"));
    } else {
        snprintf(action, sizeof action, "%s",
                 stall >= 0 ? ncu_advice_stall_action(stall) : ncu_advice_action("warp_stall"));
        s_launch_action(c, action, sizeof action);
    }
    fb_finding_t *f = ncu_ctx_finding(c, "latency_bound", gain, "latency", title, action);
    if (!f)
        return;
    s_launch_evidence(c, f);
    if (analysis_has(floor_gain))
        finding_add_evidence(f, "model", 100 * floor_gain, "%",
                             "fewer, longer blocks save the launch floor's time until a unit reaches its "
                             "ceiling: %.0f%%", 100 * floor_gain);
    s_units_evidence(f, c);
    if (stall >= 0)
        finding_add_evidence(f, ncu_metric_info((ncu_metric_t) stall)->name, V(c, (ncu_metric_t) stall),
                             "cycle", "%s: %.1f of %.1f stall cycles per issued instruction",
                             ncu_metric_info((ncu_metric_t) stall)->what, V(c, (ncu_metric_t) stall),
                             c->stall_total);
    else
        ncu_ctx_missing(c, "warp stall reasons (smsp__average_warps_issue_stalled_*): the core plan or "
                           "--section WarpStateStats");
    s_occupancy_evidence(f, c);
}

/* Under 60% everywhere, a kernel whose warps wait on memory most of their
 * stall cycles and whose requests DRAM serves (L2 carrying DRAM's traffic,
 * s_l2_carries_dram, or most of L2's lookups missing) is a DRAM stream below
 * its roof: by Little's law its rate is the
 * bytes it keeps in flight over DRAM's latency, and the lever is more of them
 * (wider loads, more loads per thread before use), worth up to the DRAM roof.
 * Corpus v9's v9_half_axpy: 2-byte loads, DRAM 43%, SM 26%, memory waits 87%
 * of the stalls; 16-byte loads ran 2.11x faster (the roof model says 2.1x).
 * It holds with the SM as busy as memory: corpus v10's fp16 stream with 16
 * FMAs per element (SM 45%, DRAM 30%) and byte copy (SM 30%, DRAM 17%) ran
 * 2.80x and 5.08x faster with 16-byte loads (a condition that memory lead
 * the SM by 10 points, written for PyTorch's batch-norm statistics, whose
 * expectation is latency, was wrong on both). Returns the DRAM unit, or NULL. */
#define NCU_MEMORY_WAIT_DOMINANT 0.5
#define NCU_DRAM_STREAM_MIN 10.0
static const ncu_unit_t *s_dram_stream_below_roof(const ncu_ctx_t *c)
{
    const ncu_unit_t *dram = ncu_units_find(&c->units, "dram"), *l2 = ncu_units_find(&c->units, "l2");
    double wait = ncu_ctx_memory_wait_share(c);
    if (!dram || !l2 || !analysis_has(wait) || wait < NCU_MEMORY_WAIT_DOMINANT)
        return NULL;
    /* Local memory's waits are spills' or arrays' (their own findings): a stream is
     * one whose requests are mostly global (PyTorch's group-norm moments: local
     * sectors a quarter of the global ones, mostly L1 hits, DRAM 42% on the
     * global stream). */
    double global = s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST));
    double local = s_or0(V(c, NM_SECTORS_LOCAL_LD)) + s_or0(V(c, NM_SECTORS_LOCAL_ST));
    if (local > 0 && local >= global)
        return NULL;
    /* DRAM serves the requests: L2 about as busy as DRAM (its traffic is
     * DRAM's passing through), or most L2 lookups missing. Random whole lines
     * keep L2 busier per byte than a stream does (corpus v11's chase of
     * 128-byte nodes: L2 55%, DRAM 37%, 22% of L2's sectors hit; four chains
     * per warp ran 1.91x faster). */
    double hit = V(c, NM_L2_HIT);
    bool served = s_l2_carries_dram(dram, l2) || (analysis_has(hit) && hit < 50);
    /* ...and the loads leave the SM: where most of their sectors hit L1 the
     * warps wait on L1 and the LSU queue, not on DRAM, and DRAM's roof is not
     * what more loads in flight reach (corpus v33's attention with a thread a
     * query: K and V rows broadcast to every lane, 90% L1 hits, DRAM 12%,
     * memory waits 75% of the stalls; named a DRAM stream with 6.1x to gain). */
    double l1_hit = V(c, NM_L1_HIT);
    if (analysis_has(l1_hit) && l1_hit >= 50)
        return NULL;
    return dram->pct >= NCU_DRAM_STREAM_MIN && served ? dram : NULL;
}

bool ncu_ctx_dram_stream(const ncu_ctx_t *c) { return s_dram_stream_below_roof(c) != NULL; }

bool ncu_ctx_shared_traffic(const ncu_ctx_t *c)
{
    double wf = s_or0(V(c, NM_SHARED_WAVEFRONTS_LD)) + s_or0(V(c, NM_SHARED_WAVEFRONTS_ST));
    double global = s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST));
    double smem = s_or0(V(c, NM_SMEM_STATIC)) + s_or0(V(c, NM_SMEM_DYNAMIC));
    return wf > 0 ? wf >= global : smem > 0;
}

static void s_bound_dram_latency(ncu_ctx_t *c, const ncu_unit_t *dram)
{
    char title[320], action[720];
    double achieved, peak, wait = ncu_ctx_memory_wait_share(c);
    if (s_dram_bandwidth(c, &achieved, &peak))
        snprintf(title, sizeof title,
                 "DRAM below its roof: %.0f%% of peak (%.2f of %.2f TB/s) while warps wait on memory %.0f%% "
                 "of their stall cycles: too few bytes in flight to cover DRAM's latency",
                 dram->pct, achieved / 1e12, peak / 1e12, 100 * wait);
    else
        snprintf(title, sizeof title,
                 "DRAM below its roof: %.0f%% of peak while warps wait on memory %.0f%% of their stall "
                 "cycles: too few bytes in flight to cover DRAM's latency", dram->pct, 100 * wait);
    s_dram_action(c, dram, action, sizeof action);
    fb_finding_t *f = ncu_ctx_finding(c, "dram_bound", s_unit_headroom(c, dram), "headroom", title, action);
    if (!f)
        return;
    if (dram->pct < NCU_SOL_HIGH)
        s_launch_evidence(c, f);
    s_units_evidence(f, c);
    s_stall_evidence(f, c, s_memory_stalls, sizeof s_memory_stalls / sizeof s_memory_stalls[0]);
    s_occupancy_evidence(f, c);
    s_roofline(c, f);
}

/* SOLBottleneck on ncu's own summaries: the side ahead by the SOL gap binds.
 * Within the gap both sides are near their roofs, and the one nearer its
 * attainable ceiling binds first, as every estimate here reads the units
 * (ncu_units_saved): corpus v37's fp32 GEMM (issue 86% of 95 attainable,
 * L1 75% of 95, summaries 81% and 71%) is compute-bound, and so is corpus
 * v28's elementwise kernel on the H100 (issue 68% of 95, DRAM 61% of 90).
 * Without the units the memory side wins within the gap, as before. */
static bool s_memory_side_by_summaries(double sm, double mem_sum, const ncu_unit_t *mem, const ncu_unit_t *pipe,
                                       const ncu_unit_t *issue)
{
    if (fabs(mem_sum - sm) >= NCU_SOL_GAP)
        return mem_sum > sm;
    const ncu_unit_t *compute = pipe;
    if (issue && (!compute || issue->pct / issue->attain > compute->pct / compute->attain))
        compute = issue;
    if (!mem || !compute)
        return true;
    return mem->pct / mem->attain >= compute->pct / compute->attain;
}

void ncu_bound_add(ncu_ctx_t *c)
{
    if (!analysis_has(c->busiest)) {
        ncu_ctx_missing(c, "speed of light (sm__throughput, gpu__compute_memory_throughput): --section "
                           "SpeedOfLight");
        return;
    }
    if (c->latency) {
        if (c->latency_explained)
            return;
        const ncu_unit_t *dram = s_dram_stream_below_roof(c);
        if (dram) {
            c->bound = dram;
            s_bound_dram_latency(c, dram);
        } else {
            s_bound_latency(c);
        }
        return;
    }
    const ncu_unit_t *mem = ncu_units_busiest(&c->units, NCU_UNIT_MEMORY);
    const ncu_unit_t *pipe = ncu_units_busiest(&c->units, NCU_UNIT_PIPE);
    const ncu_unit_t *issue = ncu_units_find(&c->units, "issue");
    double mem_pct = mem ? mem->pct : s_or0(V(c, NM_MEM_PCT));
    double compute_pct = fmax(fmax(pipe ? pipe->pct : 0, issue ? issue->pct : 0), s_or0(V(c, NM_SM_PCT)));
    double sm = V(c, NM_SM_PCT), mem_sum = V(c, NM_MEM_PCT);
    bool memory_side;
    if (pipe && strcmp(pipe->key, "lsu") != 0 && pipe->pct >= NCU_SOL_HIGH && pipe->pct >= mem_pct - NCU_SOL_GAP)
        memory_side = false; /* a math pipe at its roof: the traffic beside it feeds it (wgmma's
                                operands come through shared memory) */
    else if (analysis_has(sm) && analysis_has(mem_sum))
        memory_side = s_memory_side_by_summaries(sm, mem_sum, mem, pipe, issue);
    else
        memory_side = mem_pct >= compute_pct - NCU_SOL_GAP;
    /* The LSU pipe issues L1's requests: with real traffic and L1 as busy
     * (within the SOL gap), the two are one bottleneck, and the memory
     * side's finding names its cause (hits, sectors, conflicts) where
     * "compute-bound on the LSU" would not. Which of two readings a few
     * percent apart is higher is run-to-run noise (the naive matmul of
     * kernels.cu: L1 78%, LSU 77-79% across its captures). Issue slots or
     * an SM summary ahead of the LSU by the gap lead the compute side
     * themselves. */
    bool l1_quiet = s_l1_without_traffic(c);
    if (!memory_side && pipe && strcmp(pipe->key, "lsu") == 0 && mem && strcmp(mem->key, "l1") == 0 &&
        mem->pct >= pipe->pct - NCU_SOL_GAP && compute_pct < pipe->pct + NCU_SOL_GAP && !l1_quiet)
        memory_side = true;
    if (memory_side && mem && strcmp(mem->key, "l1") == 0 && l1_quiet) {
        const ncu_unit_t *lsu = ncu_units_find(&c->units, "lsu");
        if (lsu && lsu->pct >= mem->pct - NCU_SOL_GAP) {
            s_bound_compute(c, lsu, issue);
            return;
        }
    }
    if (memory_side) {
        /* DRAM near the roof and carried by L2 (s_l2_carries_dram) is the
         * root, and so is DRAM below the roof when L2 is the busiest level
         * and carries it. */
        const ncu_unit_t *dram = ncu_units_find(&c->units, "dram");
        const ncu_unit_t *l2 = ncu_units_find(&c->units, "l2");
        bool l2_carries = s_l2_carries_dram(dram, l2) && !s_l2_rereads(c);
        if (dram && ((dram->pct >= NCU_SOL_LATENCY && (!l2 || l2_carries)) ||
                     (l2_carries && mem && strcmp(mem->key, "l2") == 0)))
            mem = dram;
        /* DRAM reading scattered sectors runs at its own ceiling (ncu_units.h,
         * where the GPU's was measured): nearer it than the busiest level is
         * to its own, DRAM binds. L2's load is then its misses' work, not
         * re-reads (the random gathers of corpora v3, v8, v29, v34, v46: L2
         * 80%-95% with 13%-21% hits). */
        if (dram && mem && dram != mem && dram->scattered &&
            dram->pct / dram->attain >= mem->pct / mem->attain)
            mem = dram;
        /* The summary is the max over every memory unit: far above the
         * busiest one measured, the saturated level was not measured. */
        if (mem && analysis_has(mem_sum) && mem_sum > mem->pct + NCU_SOL_GAP)
            mem = NULL;
        c->bound = mem;
        s_bound_memory(c, mem);
    } else {
        s_bound_compute(c, pipe, issue);
    }
}
