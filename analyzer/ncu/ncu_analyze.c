#include "ncu_analyze.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_advice.h"
#include "ncu_kernel.h"
#include "ncu_rules.h"
#include "roofs.h"
#include "textbuf.h"

/* Speed-of-light thresholds, from NCU's SOLBottleneck rule (SpeedOfLight.py,
 * Nsight Compute 2025.3.1): >= 80% of peak is high throughput; both SM and
 * memory below 60% points to latency; a 10-point gap makes one side dominant. */
#define SOL_HIGH 80.0
#define SOL_LATENCY 60.0
#define SOL_GAP 10.0

/* A kernel below this on every unit while the GPU is full of warps is not
 * short of parallelism but serialized (atomics, locks, dependent chains). */
#define CONTENTION_MAX_PCT 10.0

/* Bank conflicts as the primary cause: at least a quarter of shared-memory
 * wavefronts are replays. NCU's SharedMemoryConflicts fires at 10%; a cause
 * that explains a memory-bound kernel must be larger. */
#define BANK_PRIMARY_RATE 0.25
#define BANK_SECONDARY_RATE 0.05

/* A global access uses fewer than half the bytes of each 32-byte sector. */
#define SECTOR_BYTES 32.0
#define COALESCE_PRIMARY_BYTES 16.0
#define COALESCE_SECONDARY_BYTES 24.0

/* Without sector metrics, traffic per memory instruction stands in for them.
 * Measured on an H200 (tests/fixtures/ncu/h200): coalesced 4-byte accesses
 * give L1 wavefronts/requests ~1.1 and L2%/LSU% ~4; 32-byte-stride or
 * column-wise accesses give 5-9 and 9-24; shared-memory 32-way conflicts 32. */
#define INFER_WAVEFRONTS_PER_REQUEST 3.0
#define INFER_L2_PER_LSU 6.0
#define INFER_MEM_PER_SM 6.0
#define INFER_L1_PER_LSU 4.0

/* Share of warp cycles that makes a stall reason worth naming. */
#define STALL_SHARE_MIN 0.10

typedef struct {
    const ncu_kernel_t *k;
    size_t index;          /* in the feedback */
    feedback_t *fb;
    double sm_clock_hz;    /* from the capture, else the device attribute */
    const roof_t *roof;
    double headroom;       /* 100 - max(SM%, memory%), or NAN */
    /* The primary finding's category, copied: findings live in a growing
     * array, so a pointer to one dies with the next finding added. */
    char primary[32];
} ctx_t;

static double V(const ctx_t *c, ncu_metric_t m) { return c->k->v[m]; }
static void s_roofline(ctx_t *c, fb_finding_t *f);
static bool has(double x) { return !isnan(x); }

static fb_finding_t *s_finding(ctx_t *c, const char *category, double importance,
                               const char *title, const char *action)
{
    if (importance < 0)
        importance = 0;
    if (importance > 100)
        importance = 100;
    return feedback_add_finding(c->fb, c->index, category, importance, title, action);
}

/* Evidence for a percentage metric, if measured. */
static void s_pct(fb_finding_t *f, const ctx_t *c, ncu_metric_t m)
{
    double x = V(c, m);
    if (f && has(x))
        finding_add_evidence(f, ncu_metric_info(m)->name, x, "%", "%s %.1f%% of peak",
                             ncu_metric_info(m)->what, x);
}

static void s_missing(ctx_t *c, const char *what) { feedback_add_missing(c->fb, what); }

/* Shared memory per block the launch asked for, or NAN. */
static double s_shared_bytes(const ctx_t *c)
{
    double s = V(c, NM_SMEM_STATIC), d = V(c, NM_SMEM_DYNAMIC);
    if (!has(s) && !has(d))
        return NAN;
    return (has(s) ? s : 0) + (has(d) ? d : 0);
}

/* SM cycles summed over SMs while the kernel ran: the denominator that turns
 * event counts into "share of the SMs' time". */
static double s_sm_cycles(const ctx_t *c)
{
    double t = V(c, NM_DURATION), sms = V(c, NM_SM_COUNT);
    if (!has(t) || !has(sms) || !has(c->sm_clock_hz) || t <= 0)
        return NAN;
    return t * 1e-9 * c->sm_clock_hz * sms;
}

/* ----- bank conflicts ------------------------------------------------------ */

/* Fraction of shared-memory wavefronts that were conflict replays, measured
 * directly when the counters are there. Sets *how to the method used. */
static double s_bank_rate(const ctx_t *c, const char **how)
{
    double conflicts = V(c, NM_BANK_CONFLICTS);
    double ld = V(c, NM_BANK_CONFLICTS_LD), st = V(c, NM_BANK_CONFLICTS_ST);
    if (has(ld) || has(st))
        conflicts = (has(ld) ? ld : 0) + (has(st) ? st : 0);
    if (!has(conflicts))
        return NAN;
    double wavefronts = V(c, NM_SHARED_WAVEFRONTS);
    double wld = V(c, NM_SHARED_WAVEFRONTS_LD), wst = V(c, NM_SHARED_WAVEFRONTS_ST);
    if (!has(wavefronts) && (has(wld) || has(wst)))
        wavefronts = (has(wld) ? wld : 0) + (has(wst) ? wst : 0);
    if (has(wavefronts) && wavefronts > 0) {
        *how = "conflicts per shared-memory wavefront";
        return conflicts / wavefronts;
    }
    /* Each replay holds the SM's shared-memory data path for a cycle. */
    double cycles = s_sm_cycles(c);
    if (has(cycles) && cycles > 0) {
        *how = "conflict replays per SM cycle";
        return conflicts / cycles;
    }
    return NAN;
}

/* ----- coalescing ---------------------------------------------------------- */

typedef struct {
    double bytes;        /* bytes used per 32-byte sector, worst measured side */
    const char *side;    /* "loads" or "stores" */
    bool direct;         /* measured (true) or inferred from traffic ratios */
    double ratio;        /* the inferred ratio, when inferred */
    const char *proxy;   /* which ratio */
    bool all_measured;   /* both sides measured and fine: nothing to infer */
} coalescing_t;

static coalescing_t s_coalescing(const ctx_t *c)
{
    coalescing_t r = {NAN, NULL, false, NAN, NULL, false};
    double ld = V(c, NM_LD_BYTES_PER_SECTOR), st = V(c, NM_ST_BYTES_PER_SECTOR);
    if (!has(ld) && has(V(c, NM_LD_SECTOR_PCT)))
        ld = V(c, NM_LD_SECTOR_PCT) / 100.0 * SECTOR_BYTES;
    /* Zero means the kernel issued no such access. */
    if (has(ld) && ld > 0 && (!has(r.bytes) || ld < r.bytes)) {
        r.bytes = ld;
        r.side = "loads";
        r.direct = true;
    }
    if (has(st) && st > 0 && (!has(r.bytes) || st < r.bytes)) {
        r.bytes = st;
        r.side = "stores";
        r.direct = true;
    }
    r.all_measured = has(ld) && has(st);
    return r;
}

/* Infers scattered access from how much traffic each memory instruction
 * causes, using the best pair of metrics the capture has. */
static bool s_infer_excess(const ctx_t *c, double *ratio, const char **proxy, double threshold_scale)
{
    double wf = V(c, NM_L1_WAVEFRONTS_PCT), req = V(c, NM_L1_REQUESTS_PCT);
    if (has(wf) && has(req) && req > 0.5) {
        *ratio = wf / req;
        *proxy = "L1 data-pipe wavefronts per LSU request (from % of peak)";
        return *ratio >= INFER_WAVEFRONTS_PER_REQUEST * threshold_scale;
    }
    double l2 = V(c, NM_L2_PCT), lsu = V(c, NM_MEM_PIPES);
    if (has(l2) && has(lsu) && lsu > 0.5) {
        *ratio = l2 / lsu;
        *proxy = "L2 throughput per unit of LSU issue (% / %)";
        return *ratio >= INFER_L2_PER_LSU * threshold_scale;
    }
    double mem = V(c, NM_MEM_PCT), sm = V(c, NM_SM_PCT);
    if (has(mem) && has(sm) && sm > 0.5) {
        *ratio = mem / sm;
        *proxy = "memory throughput per unit of SM throughput (% / %)";
        return *ratio >= INFER_MEM_PER_SM * threshold_scale;
    }
    return false;
}

/* ----- the primary limiter -------------------------------------------------- */

static void s_sol_evidence(fb_finding_t *f, const ctx_t *c)
{
    s_pct(f, c, NM_SM_PCT);
    s_pct(f, c, NM_MEM_PCT);
}

static fb_finding_t *s_primary_small_grid(ctx_t *c, double grid, double sms)
{
    char title[256], action[256];
    snprintf(title, sizeof title,
             "Grid too small: %.0f block%s for %.0f SMs, so %.0f%% of the GPU sits idle", grid,
             grid == 1 ? "" : "s", sms, 100.0 * (1 - grid / sms));
    snprintf(action, sizeof action,
             "Launch at least %.0f blocks (several per SM is better): split the work over more, "
             "smaller blocks, or batch independent problems into one launch.", sms);
    fb_finding_t *f = s_finding(c, "small_grid", 100.0 * (1 - grid / sms), title, action);
    if (!f)
        return NULL;
    finding_add_evidence(f, "launch__grid_size", grid, "block", "grid of %.0f block%s", grid,
                         grid == 1 ? "" : "s");
    finding_add_evidence(f, "launch__sm_count", sms, "SM", "%.0f SMs on the device", sms);
    if (has(V(c, NM_WAVES)))
        finding_add_evidence(f, "launch__waves_per_multiprocessor", V(c, NM_WAVES), "",
                             "%.2f waves per SM", V(c, NM_WAVES));
    s_sol_evidence(f, c);
    return f;
}

static fb_finding_t *s_primary_contention(ctx_t *c)
{
    double red = V(c, NM_GLOBAL_RED), atom = V(c, NM_GLOBAL_ATOM), l2a = V(c, NM_L2_ATOMIC_PCT);
    double atomics = (has(red) ? red : 0) + (has(atom) ? atom : 0);
    bool atomic_seen = atomics > 0 || (has(l2a) && l2a > 0.1);
    double busiest = fmax(has(V(c, NM_SM_PCT)) ? V(c, NM_SM_PCT) : 0,
                          has(V(c, NM_MEM_PCT)) ? V(c, NM_MEM_PCT) : 0);
    char title[300];
    if (atomic_seen)
        snprintf(title, sizeof title,
                 "Global atomic contention: every unit under %.0f%% busy while the GPU is full of "
                 "warps; the warps wait on serialized atomic updates", ceil(busiest + 0.5));
    else
        snprintf(title, sizeof title,
                 "Serialized: every unit under %.0f%% busy while the GPU is full of warps; "
                 "typical of contended atomics or locks, or long dependent chains",
                 ceil(busiest + 0.5));
    fb_finding_t *f = s_finding(c, "contention", 100 - busiest, title, ncu_advice_action("contention"));
    if (!f)
        return NULL;
    s_sol_evidence(f, c);
    if (atomics > 0)
        finding_add_evidence(f, "smsp__inst_executed_op_global_red.sum", atomics, "inst",
                             "%.0f global atomic/reduction instructions", atomics);
    if (has(l2a) && l2a > 0)
        finding_add_evidence(f, ncu_metric_info(NM_L2_ATOMIC_PCT)->name, l2a, "%",
                             "L2 atomic unit busy %.2f%% of peak", l2a);
    if (has(V(c, NM_OCC_ACHIEVED)))
        finding_add_evidence(f, ncu_metric_info(NM_OCC_ACHIEVED)->name, V(c, NM_OCC_ACHIEVED), "%",
                             "achieved occupancy %.1f%%", V(c, NM_OCC_ACHIEVED));
    if (has(V(c, NM_WARP_CYCLES_PER_ISSUE)))
        finding_add_evidence(f, ncu_metric_info(NM_WARP_CYCLES_PER_ISSUE)->name,
                             V(c, NM_WARP_CYCLES_PER_ISSUE), "cycle",
                             "%.0f warp cycles between issued instructions",
                             V(c, NM_WARP_CYCLES_PER_ISSUE));
    if (!atomic_seen)
        s_missing(c, "atomic traffic (smsp__inst_executed_op_global_red.sum, "
                     "lts__d_atomic_input_cycles_active): --section SpeedOfLight --set full");
    return f;
}

/* The largest stall reason and its share of warp cycles, or -1. */
static int s_top_stall(const ctx_t *c, double *share)
{
    double total = V(c, NM_WARP_CYCLES_PER_ISSUE);
    int best = -1;
    double best_v = 0;
    for (int m = NM_STALL_FIRST; m < NM_STALL_END; m++) {
        double x = V(c, (ncu_metric_t) m);
        if (has(x) && x > best_v && m != NM_STALL_NOT_SELECTED) {
            best_v = x;
            best = m;
        }
    }
    *share = (has(total) && total > 0) ? best_v / total : NAN;
    return best;
}

static fb_finding_t *s_primary_latency(ctx_t *c)
{
    double share;
    int stall = s_top_stall(c, &share);
    double busiest = fmax(V(c, NM_SM_PCT), V(c, NM_MEM_PCT));
    char title[300];
    const char *reason = stall >= 0 ? ncu_advice_stall_reason(stall) : NULL;
    if (reason && has(share))
        snprintf(title, sizeof title,
                 "Latency-bound: SM %.0f%% and memory %.0f%% of peak, both under 60%%; warps "
                 "mostly wait on %s (%.0f%% of their cycles)",
                 V(c, NM_SM_PCT), V(c, NM_MEM_PCT), reason, 100 * share);
    else
        snprintf(title, sizeof title,
                 "Latency-bound: SM %.0f%% and memory %.0f%% of peak, both under 60%%",
                 V(c, NM_SM_PCT), V(c, NM_MEM_PCT));
    const char *action = stall >= 0 ? ncu_advice_stall_action(stall)
                                    : "Expose more parallelism: more independent work per thread "
                                      "(ILP) and enough warps per SM to hide latency.";
    fb_finding_t *f = s_finding(c, "latency_bound", 100 - busiest, title, action);
    if (!f)
        return NULL;
    s_sol_evidence(f, c);
    if (stall >= 0 && has(share))
        finding_add_evidence(f, ncu_metric_info((ncu_metric_t) stall)->name, V(c, (ncu_metric_t) stall),
                             "cycle", "%s stall: %.1f of %.1f cycles per issued instruction",
                             ncu_metric_info((ncu_metric_t) stall)->what, V(c, (ncu_metric_t) stall),
                             V(c, NM_WARP_CYCLES_PER_ISSUE));
    if (has(V(c, NM_OCC_ACHIEVED)))
        finding_add_evidence(f, ncu_metric_info(NM_OCC_ACHIEVED)->name, V(c, NM_OCC_ACHIEVED), "%",
                             "achieved occupancy %.1f%%", V(c, NM_OCC_ACHIEVED));
    if (stall < 0)
        s_missing(c, "warp stall reasons: --section WarpStateStats");
    return f;
}

static fb_finding_t *s_primary_bank(ctx_t *c, double rate, const char *how, bool inferred,
                                    double ratio, const char *proxy)
{
    char title[300];
    double l1 = V(c, NM_L1_PCT);
    if (inferred)
        snprintf(title, sizeof title,
                 "Shared-memory bank conflicts (inferred): the L1/shared pipe is saturated by few "
                 "instructions, %.1fx the expected traffic per access, with no global traffic to "
                 "explain it", ratio);
    else
        snprintf(title, sizeof title,
                 "Shared-memory bank conflicts: %.0f%% of shared-memory accesses are replays that "
                 "serialize the warp", 100 * fmin(rate, 1.0));
    double util = has(l1) ? l1 : V(c, NM_MEM_PCT);
    fb_finding_t *f = s_finding(c, "bank_conflicts", util, title, ncu_advice_action("bank_conflicts"));
    if (!f)
        return NULL;
    if (!inferred) {
        double conflicts = V(c, NM_BANK_CONFLICTS);
        if (!has(conflicts))
            conflicts = (has(V(c, NM_BANK_CONFLICTS_LD)) ? V(c, NM_BANK_CONFLICTS_LD) : 0) +
                        (has(V(c, NM_BANK_CONFLICTS_ST)) ? V(c, NM_BANK_CONFLICTS_ST) : 0);
        finding_add_evidence(f, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", conflicts, "",
                             "%.3g bank conflicts; %.2f %s", conflicts, rate, how);
    } else {
        finding_add_evidence(f, "inferred", ratio, "", "%s = %.1f", proxy, ratio);
        s_missing(c, "bank-conflict counters (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_*): "
                     "--section MemoryWorkloadAnalysis_Tables");
    }
    s_pct(f, c, NM_L1_PCT);
    s_pct(f, c, NM_MEM_PCT);
    s_pct(f, c, NM_SM_PCT);
    double smem = s_shared_bytes(c);
    if (has(smem))
        finding_add_evidence(f, "launch__shared_mem_per_block_static", smem, "byte",
                             "%.0f bytes of shared memory per block", smem);
    return f;
}

static fb_finding_t *s_primary_uncoalesced(ctx_t *c, const coalescing_t *co)
{
    char title[300];
    double util = fmax(has(V(c, NM_L2_PCT)) ? V(c, NM_L2_PCT) : 0, V(c, NM_MEM_PCT));
    if (has(V(c, NM_DRAM_PCT)))
        util = fmax(util, V(c, NM_DRAM_PCT));
    if (co->direct)
        snprintf(title, sizeof title,
                 "Uncoalesced global %s: each 32-byte sector moved carries only %.1f useful bytes "
                 "(%.0f%%), so the memory system moves %.0fx the data the kernel uses",
                 co->side, co->bytes, 100 * co->bytes / SECTOR_BYTES, SECTOR_BYTES / co->bytes);
    else
        snprintf(title, sizeof title,
                 "Uncoalesced global access (inferred): the memory system is %.0f%% busy with "
                 "%.1fx the traffic per memory instruction of coalesced code", util, co->ratio);
    fb_finding_t *f = s_finding(c, "uncoalesced_access", util, title,
                                ncu_advice_action("uncoalesced_access"));
    if (!f)
        return NULL;
    if (co->direct) {
        finding_add_evidence(f,
                             strcmp(co->side, "loads") == 0
                                 ? "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"
                                 : "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
                             co->bytes, "byte/sector", "%s use %.1f of 32 bytes per sector", co->side,
                             co->bytes);
    } else {
        finding_add_evidence(f, "inferred", co->ratio, "", "%s = %.1f", co->proxy, co->ratio);
        s_missing(c, "sector efficiency (smsp__sass_average_data_bytes_per_sector_mem_global_op_ld/"
                     "st.ratio): --section MemoryWorkloadAnalysis_Tables or SourceCounters");
    }
    double excess = V(c, NM_SECTORS_EXCESSIVE), total = V(c, NM_SECTORS_GLOBAL);
    if (has(excess) && has(total) && total > 0 && excess > 0)
        finding_add_evidence(f, ncu_metric_info(NM_SECTORS_EXCESSIVE)->name, excess, "sector",
                             "%.0f excessive sectors (%.0f%% of %.0f)", excess, 100 * excess / total,
                             total);
    s_pct(f, c, NM_L2_PCT);
    s_pct(f, c, NM_DRAM_PCT);
    s_pct(f, c, NM_SM_PCT);
    if (has(V(c, NM_L2_TAG_PCT)) && has(V(c, NM_L2_SECTORS_PCT)))
        finding_add_evidence(f, ncu_metric_info(NM_L2_TAG_PCT)->name, V(c, NM_L2_TAG_PCT), "%",
                             "L2 tag lookups %.0f%% vs sector traffic %.0f%% of peak: few sectors "
                             "per request", V(c, NM_L2_TAG_PCT), V(c, NM_L2_SECTORS_PCT));
    return f;
}

/* Achieved DRAM bandwidth and its peak, in bytes per second. */
static bool s_dram_bandwidth(const ctx_t *c, double *achieved, double *peak)
{
    *achieved = V(c, NM_DRAM_BYTES_PER_S);
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE), t = V(c, NM_DURATION);
    if (!has(*achieved) && has(rd) && has(wr) && has(t) && t > 0)
        *achieved = (rd + wr) / (t * 1e-9);
    *peak = NAN;
    double per_cycle = V(c, NM_DRAM_BYTES_PEAK), freq = V(c, NM_DRAM_FREQ);
    double mem_khz = V(c, NM_DEV_MEM_CLOCK_KHZ), bus = V(c, NM_DEV_BUS_WIDTH);
    if (has(per_cycle) && has(freq))
        *peak = per_cycle * freq;
    else if (has(mem_khz) && has(bus))
        *peak = mem_khz * 1e3 * 2 * bus / 8; /* double data rate */
    else if (c->roof)
        *peak = c->roof->dram_gbps * 1e9;
    return has(*achieved) && has(*peak) && *peak > 0;
}

static fb_finding_t *s_primary_dram(ctx_t *c)
{
    char title[300];
    double dram = V(c, NM_DRAM_PCT);
    double achieved, peak;
    bool bw = s_dram_bandwidth(c, &achieved, &peak);
    if (bw)
        snprintf(title, sizeof title,
                 "Memory-bound on DRAM bandwidth: %.0f%% of peak (%.2f of %.2f TB/s); compute is "
                 "at %.0f%%", dram, achieved / 1e12, peak / 1e12, V(c, NM_SM_PCT));
    else
        snprintf(title, sizeof title,
                 "Memory-bound on DRAM bandwidth: %.0f%% of peak; compute is at %.0f%%", dram,
                 V(c, NM_SM_PCT));
    fb_finding_t *f = s_finding(c, "dram_bound", dram, title, ncu_advice_action("dram_bound"));
    if (!f)
        return NULL;
    s_pct(f, c, NM_DRAM_PCT);
    s_pct(f, c, NM_SM_PCT);
    if (bw)
        finding_add_evidence(f, "dram__bytes.sum.per_second", achieved, "byte/s",
                             "DRAM %.2f TB/s of %.2f TB/s peak", achieved / 1e12, peak / 1e12);
    if (has(V(c, NM_L2_HIT)))
        finding_add_evidence(f, ncu_metric_info(NM_L2_HIT)->name, V(c, NM_L2_HIT), "%",
                             "L2 hit rate %.1f%%", V(c, NM_L2_HIT));
    s_roofline(c, f);
    return f;
}

static fb_finding_t *s_primary_l1(ctx_t *c, bool inferred)
{
    double smem = s_shared_bytes(c);
    bool shared = has(smem) && smem > 0;
    double l1 = V(c, NM_L1_PCT), hit = V(c, NM_L1_HIT);
    double util = has(l1) ? l1 : V(c, NM_MEM_PCT);
    char title[300];
    if (shared)
        snprintf(title, sizeof title,
                 "L1/shared-memory pipe bound: L1 %.0f%% of peak with DRAM at %.1f%%; the shared "
                 "memory traffic of the tiles is the limit", util, V(c, NM_DRAM_PCT));
    else if (has(hit))
        snprintf(title, sizeof title,
                 "L1/LSU-bound without data reuse in shared memory: L1 %.0f%% busy, %.0f%% of "
                 "loads hit L1, DRAM only %.1f%%: every thread reloads data its neighbours loaded",
                 util, hit, V(c, NM_DRAM_PCT));
    else
        snprintf(title, sizeof title,
                 "L1/LSU-bound: L1 %.0f%% of peak while DRAM is at %.1f%%: the loads are served "
                 "by the cache, over and over", util, V(c, NM_DRAM_PCT));
    fb_finding_t *f = s_finding(c, "l1_bound", util, title,
                                ncu_advice_action(shared ? "l1_bound_shared" : "l1_bound"));
    if (!f)
        return NULL;
    s_pct(f, c, NM_L1_PCT);
    s_pct(f, c, NM_MEM_PCT);
    s_pct(f, c, NM_DRAM_PCT);
    if (has(hit))
        finding_add_evidence(f, ncu_metric_info(NM_L1_HIT)->name, hit, "%", "L1 hit rate %.1f%%", hit);
    s_pct(f, c, NM_PIPE_LSU);
    if (shared)
        finding_add_evidence(f, "launch__shared_mem_per_block_static", smem, "byte",
                             "%.0f bytes of shared memory per block", smem);
    if (inferred)
        s_missing(c, "L1/TEX throughput (l1tex__throughput): --section SpeedOfLight");
    return f;
}

static double s_or0(double x) { return has(x) ? x : 0; }

/* FP32 FLOP executed: counts when measured, else the full set's rates per
 * elapsed cycle times the clock (as NCU's roofline chart computes them). */
static double s_fp32_flops(const ctx_t *c, double t)
{
    if (has(V(c, NM_FFMA)) || has(V(c, NM_FADD)) || has(V(c, NM_FMUL)))
        return s_or0(V(c, NM_FADD)) + s_or0(V(c, NM_FMUL)) + 2 * s_or0(V(c, NM_FFMA));
    if ((has(V(c, NM_FFMA_RATE)) || has(V(c, NM_FADD_RATE))) && has(c->sm_clock_hz))
        return (s_or0(V(c, NM_FADD_RATE)) + s_or0(V(c, NM_FMUL_RATE)) +
                2 * s_or0(V(c, NM_FFMA_RATE))) * c->sm_clock_hz * t * 1e-9;
    return NAN;
}

/* One precision's achieved rate against its peak, as evidence. */
static void s_flops_evidence(fb_finding_t *f, const char *precision, const char *key, double flops,
                             double t, double peak, const char *peak_from)
{
    double rate = flops / (t * 1e-9);
    if (has(peak) && peak > 0)
        finding_add_evidence(f, key, rate, "FLOP/s", "%s %.2f TFLOP/s = %.0f%% of the %.1f TFLOP/s "
                             "peak (%s)", precision, rate / 1e12, 100 * rate / peak, peak / 1e12,
                             peak_from);
    else
        finding_add_evidence(f, key, rate, "FLOP/s", "%s %.2f TFLOP/s", precision, rate / 1e12);
}

/* Achieved FLOP/s by precision (FADD + FMUL + 2 FFMA; packed FP16 counts
 * two or four), arithmetic intensity against DRAM bytes, and where it stands
 * against the ridge point (FP32 peak / DRAM peak). */
static void s_roofline(ctx_t *c, fb_finding_t *f)
{
    double t = V(c, NM_DURATION);
    if (!has(t) || t <= 0)
        return;
    const char *peak_from = c->roof ? c->roof->name : "";
    double fp32 = s_fp32_flops(c, t);
    double fp32_peak = has(V(c, NM_FFMA_PEAK)) && has(c->sm_clock_hz)
                           ? 2 * V(c, NM_FFMA_PEAK) * c->sm_clock_hz
                           : (c->roof ? c->roof->fp32_tflops * 1e12 : NAN);
    if (has(V(c, NM_FFMA_PEAK)))
        peak_from = "the capture";
    if (has(fp32) && fp32 > 0)
        s_flops_evidence(f, "FP32", "fp32_flops_per_second", fp32, t, fp32_peak, peak_from);

    double fp64 = s_or0(V(c, NM_DADD)) + s_or0(V(c, NM_DMUL)) + 2 * s_or0(V(c, NM_DFMA));
    if (fp64 > 0) {
        double peak = has(V(c, NM_DFMA_PEAK)) && has(c->sm_clock_hz)
                          ? 2 * V(c, NM_DFMA_PEAK) * c->sm_clock_hz
                          : (c->roof ? c->roof->fp64_tflops * 1e12 : NAN);
        s_flops_evidence(f, "FP64", "fp64_flops_per_second", fp64, t, peak, peak_from);
    }
    double fp16 = 2 * s_or0(V(c, NM_HADD)) + 2 * s_or0(V(c, NM_HMUL)) + 4 * s_or0(V(c, NM_HFMA));
    if (fp16 > 0)
        s_flops_evidence(f, "FP16 (non-tensor)", "fp16_flops_per_second", fp16, t, NAN, "");
    if (has(V(c, NM_PIPE_TENSOR)) && V(c, NM_PIPE_TENSOR) >= 5)
        finding_add_evidence(f, ncu_metric_info(NM_PIPE_TENSOR)->name, V(c, NM_PIPE_TENSOR), "%",
                             "tensor pipe %.0f%% busy", V(c, NM_PIPE_TENSOR));

    double flops = s_or0(fp32) + fp64 + fp16;
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE);
    double achieved, bw_peak;
    if (flops > 0 && has(rd) && has(wr) && rd + wr > 0 && has(fp32_peak) &&
        s_dram_bandwidth(c, &achieved, &bw_peak)) {
        double ai = flops / (rd + wr), ridge = fp32_peak / bw_peak;
        finding_add_evidence(f, "arithmetic_intensity", ai, "FLOP/byte",
                             "arithmetic intensity %.3g FLOP/byte vs ridge point %.1f: %s side of "
                             "the roofline", ai, ridge, ai >= ridge ? "compute" : "memory");
    }
}

static fb_finding_t *s_primary_compute(ctx_t *c)
{
    static const struct {
        ncu_metric_t metric;
        const char *pipe;
        const char *advice;
    } pipes[] = {
        {NM_PIPE_FMA, "FP32 FMA", "compute_fma"},
        {NM_PIPE_ALU, "integer/logic ALU", "compute_alu"},
        {NM_PIPE_FP64, "FP64", "compute_fp64"},
        {NM_PIPE_TENSOR, "tensor", "compute_tensor"},
    };
    int best = -1;
    for (int i = 0; i < (int) (sizeof pipes / sizeof pipes[0]); i++) {
        double x = V(c, pipes[i].metric);
        if (has(x) && (best < 0 || x > V(c, pipes[best].metric)))
            best = i;
    }
    /* Without pipe metrics, FP32 instruction counts still say what the SM does. */
    double ffma = V(c, NM_FFMA);
    if (best < 0 && has(ffma) && ffma > 0)
        best = 0;
    char title[300];
    double sm = V(c, NM_SM_PCT);
    if (best >= 0 && has(V(c, pipes[best].metric)))
        snprintf(title, sizeof title,
                 "Compute-bound on the %s pipe: SM %.0f%% of peak, %s pipe %.0f%% busy, memory %.0f%%",
                 pipes[best].pipe, sm, pipes[best].pipe, V(c, pipes[best].metric), V(c, NM_MEM_PCT));
    else
        snprintf(title, sizeof title, "Compute-bound%s%s: SM %.0f%% of peak, memory %.0f%%",
                 best >= 0 ? " on " : "", best >= 0 ? pipes[best].pipe : "", sm, V(c, NM_MEM_PCT));
    fb_finding_t *f = s_finding(c, "compute_bound", sm, title,
                                ncu_advice_action(best >= 0 ? pipes[best].advice : "compute"));
    if (!f)
        return NULL;
    s_pct(f, c, NM_SM_PCT);
    if (best >= 0)
        s_pct(f, c, pipes[best].metric);
    else
        s_missing(c, "pipe utilization (sm__pipe_*_cycles_active): --section ComputeWorkloadAnalysis");
    s_roofline(c, f);
    s_pct(f, c, NM_MEM_PCT);
    return f;
}

/* Refines "memory-side" into its cause, most specific first. */
static fb_finding_t *s_primary_memory(ctx_t *c)
{
    double mem = V(c, NM_MEM_PCT), dram = V(c, NM_DRAM_PCT), l1 = V(c, NM_L1_PCT), l2 = V(c, NM_L2_PCT);
    double smem = s_shared_bytes(c);
    bool shared = has(smem) && smem > 0;
    /* Global traffic: L2 or DRAM carries a real share of the load. */
    double global = fmax(has(l2) ? l2 : 0, has(dram) ? dram : 0);

    const char *how = NULL;
    double rate = s_bank_rate(c, &how);
    if (has(rate) && rate >= BANK_PRIMARY_RATE)
        return s_primary_bank(c, rate, how, false, NAN, NULL);
    if (!has(rate) && shared && global < 20) {
        double ratio = NAN;
        const char *proxy = NULL;
        double wf = V(c, NM_L1_WAVEFRONTS_PCT), req = V(c, NM_L1_REQUESTS_PCT);
        double lsu = V(c, NM_MEM_PIPES), sm = V(c, NM_SM_PCT);
        if (has(wf) && has(req) && req > 0.5) {
            ratio = wf / req;
            proxy = "L1 data-pipe wavefronts per LSU request (from % of peak)";
        } else if (has(l1) && has(lsu) && lsu > 0.5) {
            ratio = l1 / lsu;
            proxy = "L1 throughput per unit of LSU issue (% / %)";
        } else if (has(mem) && has(sm) && sm > 0.5) {
            ratio = mem / sm;
            proxy = "memory throughput per unit of SM throughput (% / %)";
        }
        if (has(ratio) && ratio >= INFER_L1_PER_LSU)
            return s_primary_bank(c, NAN, NULL, true, ratio, proxy);
    }

    coalescing_t co = s_coalescing(c);
    if (co.direct && co.bytes < COALESCE_PRIMARY_BYTES)
        return s_primary_uncoalesced(c, &co);
    /* Scattered global access needs global traffic: L2 busy, or, where L2 was
     * not measured, DRAM busy or no shared memory that could explain it. */
    bool global_traffic = has(l2) ? l2 >= 20 : ((has(dram) && dram >= 20) || !shared);
    if (!co.all_measured && global_traffic &&
        s_infer_excess(c, &co.ratio, &co.proxy, 1.0)) {
        co.direct = false;
        return s_primary_uncoalesced(c, &co);
    }
    if (!has(dram))
        s_missing(c, "DRAM throughput (dram__throughput): --section SpeedOfLight");
    if (has(dram) && (dram >= SOL_LATENCY || dram >= mem - SOL_GAP))
        return s_primary_dram(c);
    if (has(l1) && l1 >= SOL_LATENCY)
        return s_primary_l1(c, false);
    if (has(l2) && l2 >= SOL_LATENCY) {
        char title[200];
        snprintf(title, sizeof title, "L2-bound: L2 %.0f%% of peak with DRAM at %.0f%%", l2, dram);
        fb_finding_t *f = s_finding(c, "l2_bound", l2, title, ncu_advice_action("l2_bound"));
        s_pct(f, c, NM_L2_PCT);
        s_pct(f, c, NM_DRAM_PCT);
        return f;
    }
    /* No per-unit split: DRAM idle means the caches carry the load. */
    if (!has(l1) && has(dram) && dram < mem / 2)
        return s_primary_l1(c, true);
    char title[200];
    snprintf(title, sizeof title, "Memory-bound: memory %.0f%% of peak, SM %.0f%%", mem,
             V(c, NM_SM_PCT));
    fb_finding_t *f = s_finding(c, "memory_bound", mem, title, ncu_advice_action("dram_bound"));
    s_sol_evidence(f, c);
    s_missing(c, "per-unit memory throughput (l1tex__throughput, lts__throughput): --section "
                 "SpeedOfLight");
    return f;
}

static void s_primary(ctx_t *c)
{
    double sm = V(c, NM_SM_PCT), mem = V(c, NM_MEM_PCT);
    double grid = V(c, NM_GRID_SIZE), sms = V(c, NM_SM_COUNT), waves = V(c, NM_WAVES);
    fb_finding_t *f = NULL;
    if (has(grid) && has(sms) && grid > 0 && grid < sms && (!has(sm) || !has(mem) || fmax(sm, mem) < SOL_LATENCY)) {
        f = s_primary_small_grid(c, grid, sms);
    } else if (!has(sm) || !has(mem)) {
        s_missing(c, "speed of light (sm__throughput, gpu__compute_memory_throughput): --section "
                     "SpeedOfLight");
    } else if (fmax(sm, mem) < SOL_LATENCY) {
        double occ = V(c, NM_OCC_ACHIEVED);
        bool full = (!has(waves) || waves >= 1) && (!has(occ) || occ >= 40);
        if (fmax(sm, mem) < CONTENTION_MAX_PCT && full)
            f = s_primary_contention(c);
        else
            f = s_primary_latency(c);
    } else if (mem >= sm - SOL_GAP) {
        f = s_primary_memory(c);
    } else {
        f = s_primary_compute(c);
    }
    if (f) {
        f->primary = true;
        snprintf(feedback_kernel(c->fb, c->index)->bottleneck,
                 sizeof feedback_kernel(c->fb, c->index)->bottleneck, "%s", f->category);
    }
    snprintf(c->primary, sizeof c->primary, "%s", f ? f->category : "");
}

/* ----- secondary findings ------------------------------------------------- */

static void s_occupancy(ctx_t *c)
{
    double theo = V(c, NM_OCC_THEORETICAL), ach = V(c, NM_OCC_ACHIEVED);
    if (!has(theo) || !has(ach)) {
        s_missing(c, "occupancy (sm__warps_active, sm__maximum_warps_per_active_cycle_pct): "
                     "--section Occupancy");
        return;
    }
    if (strcmp(c->primary, "small_grid") == 0)
        return; /* low occupancy is the small grid itself */
    static const struct {
        ncu_metric_t metric;
        const char *name;
        const char *advice;
    } limits[] = {
        {NM_OCC_LIMIT_REGISTERS, "registers", "occupancy_registers"},
        {NM_OCC_LIMIT_SMEM, "shared memory", "occupancy_shared"},
        {NM_OCC_LIMIT_WARPS, "block size (warps)", "occupancy_warps"},
        {NM_OCC_LIMIT_BLOCKS, "blocks per SM", "occupancy_blocks"},
    };
    int limiter = -1;
    for (int i = 0; i < 4; i++) {
        double x = V(c, limits[i].metric);
        if (has(x) && (limiter < 0 || x < V(c, limits[limiter].metric)))
            limiter = i;
    }
    double headroom = has(c->headroom) ? c->headroom : 50;
    if (theo < 80 && limiter >= 0) {
        char title[256];
        snprintf(title, sizeof title,
                 "Theoretical occupancy is %.0f%%, limited by %s (%.0f blocks per SM)", theo,
                 limits[limiter].name, V(c, limits[limiter].metric));
        fb_finding_t *f = s_finding(c, "occupancy", (100 - theo) * headroom / 100, title,
                                    ncu_advice_action(limits[limiter].advice));
        if (f) {
            finding_add_evidence(f, ncu_metric_info(NM_OCC_THEORETICAL)->name, theo, "%",
                                 "theoretical occupancy %.1f%%", theo);
            finding_add_evidence(f, ncu_metric_info(limits[limiter].metric)->name,
                                 V(c, limits[limiter].metric), "block", "%s: %.0f blocks per SM",
                                 ncu_metric_info(limits[limiter].metric)->what,
                                 V(c, limits[limiter].metric));
            if (has(V(c, NM_REGISTERS)))
                finding_add_evidence(f, ncu_metric_info(NM_REGISTERS)->name, V(c, NM_REGISTERS),
                                     "register/thread", "%.0f registers per thread",
                                     V(c, NM_REGISTERS));
        }
    } else if (theo - ach > 10) {
        char title[256];
        snprintf(title, sizeof title,
                 "Achieved occupancy %.0f%% is well below the theoretical %.0f%%: warps finish "
                 "unevenly or blocks start late", ach, theo);
        fb_finding_t *f = s_finding(c, "occupancy", (theo - ach) / theo * headroom, title,
                                    ncu_advice_action("occupancy_achieved"));
        if (f) {
            finding_add_evidence(f, ncu_metric_info(NM_OCC_ACHIEVED)->name, ach, "%",
                                 "achieved occupancy %.1f%%", ach);
            finding_add_evidence(f, ncu_metric_info(NM_OCC_THEORETICAL)->name, theo, "%",
                                 "theoretical occupancy %.1f%%", theo);
        }
    }
}

static void s_stalls(ctx_t *c)
{
    double total = V(c, NM_WARP_CYCLES_PER_ISSUE);
    if (!has(total) || total <= 0) {
        s_missing(c, "warp stall reasons (smsp__average_warps_issue_stalled_*): --section "
                     "WarpStateStats");
        return;
    }
    int order[NM_STALL_END - NM_STALL_FIRST];
    int n = 0;
    for (int m = NM_STALL_FIRST; m < NM_STALL_END; m++) {
        double x = V(c, (ncu_metric_t) m);
        if (m != NM_STALL_NOT_SELECTED && has(x) && x / total >= STALL_SHARE_MIN)
            order[n++] = m;
    }
    if (n == 0)
        return;
    for (int i = 1; i < n; i++) /* few entries: insertion sort, largest first */
        for (int j = i; j > 0 && V(c, (ncu_metric_t) order[j]) > V(c, (ncu_metric_t) order[j - 1]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double top_share = V(c, (ncu_metric_t) order[0]) / total;
    double headroom = has(c->headroom) ? c->headroom : 50;
    char title[300];
    snprintf(title, sizeof title, "Warps stall mostly on %s: %.0f%% of the %.1f cycles between "
                                  "issued instructions",
             ncu_advice_stall_reason(order[0]), 100 * top_share, total);
    fb_finding_t *f = s_finding(c, "warp_stall", top_share * headroom, title,
                                ncu_advice_stall_action(order[0]));
    if (!f)
        return;
    for (int i = 0; i < n && i < 3; i++) {
        ncu_metric_t m = (ncu_metric_t) order[i];
        finding_add_evidence(f, ncu_metric_info(m)->name, V(c, m), "cycle",
                             "%s: %.1f cycles per issue (%.0f%%)", ncu_metric_info(m)->what, V(c, m),
                             100 * V(c, m) / total);
    }
}

static void s_tail(ctx_t *c)
{
    double waves = V(c, NM_WAVES);
    if (!has(waves) || waves < 1 || waves >= 8)
        return;
    double full = floor(waves), frac = waves - full;
    if (frac < 0.01 || frac > 0.5)
        return;
    /* The last wave keeps the whole GPU busy for a wave's time with only
     * `frac` of it working: up to (1 - frac) / ceil(waves) of the runtime. */
    double loss = 100 * (1 - frac) / ceil(waves);
    if (loss < 10)
        return;
    char title[256];
    snprintf(title, sizeof title,
             "Tail effect: %.2f waves per SM, so the last wave runs %.0f%% full; up to %.0f%% of "
             "the runtime is a partly idle GPU", waves, 100 * frac, loss);
    fb_finding_t *f = s_finding(c, "tail_effect", loss, title, ncu_advice_action("tail_effect"));
    if (f)
        finding_add_evidence(f, "launch__waves_per_multiprocessor", waves, "", "%.2f waves per SM",
                             waves);
}

static void s_spills(ctx_t *c)
{
    double req = V(c, NM_SPILL_REQUESTS), inst = V(c, NM_SPILL_INST);
    double n = has(req) ? req : inst;
    if (!has(n) || n <= 0)
        return;
    char title[200];
    snprintf(title, sizeof title, "Register spills: %.0f local-memory spill requests", n);
    fb_finding_t *f = s_finding(c, "register_spill", 30, title, ncu_advice_action("register_spill"));
    if (f) {
        finding_add_evidence(f, has(req) ? ncu_metric_info(NM_SPILL_REQUESTS)->name
                                         : ncu_metric_info(NM_SPILL_INST)->name,
                             n, "", "%.0f spill requests", n);
        if (has(V(c, NM_REGISTERS)))
            finding_add_evidence(f, ncu_metric_info(NM_REGISTERS)->name, V(c, NM_REGISTERS),
                                 "register/thread", "%.0f registers per thread", V(c, NM_REGISTERS));
    }
}

static void s_divergence(ctx_t *c)
{
    double pred = V(c, NM_THREADS_PER_WARP_PRED), active = V(c, NM_THREADS_PER_WARP);
    double x = has(pred) ? pred : active;
    if (!has(x) || x >= 24)
        return; /* NCU's ThreadDivergence rule: fewer than 24 of 32 threads */
    char title[200];
    snprintf(title, sizeof title, "Thread divergence: on average only %.1f of 32 threads per warp "
                                  "do useful work", x);
    fb_finding_t *f = s_finding(c, "divergence", 100 * (1 - x / 32) * (has(c->headroom) ? c->headroom : 50) / 100,
                                title, ncu_advice_action("divergence"));
    if (f)
        finding_add_evidence(f, has(pred) ? ncu_metric_info(NM_THREADS_PER_WARP_PRED)->name
                                          : ncu_metric_info(NM_THREADS_PER_WARP)->name,
                             x, "thread", "%.1f threads per warp", x);
}

/* Memory inefficiencies that are real but not the kernel's main limiter. */
static void s_memory_secondary(ctx_t *c)
{
    const char *primary = c->primary;
    const char *how = NULL;
    double rate = s_bank_rate(c, &how);
    if (has(rate) && rate >= BANK_SECONDARY_RATE && strcmp(primary, "bank_conflicts") != 0) {
        char title[256];
        snprintf(title, sizeof title, "Shared-memory bank conflicts: %.0f%% of shared accesses are "
                                      "replays", 100 * fmin(rate, 1));
        double l1 = has(V(c, NM_L1_PCT)) ? V(c, NM_L1_PCT) : 50;
        fb_finding_t *f = s_finding(c, "bank_conflicts", rate * l1, title,
                                    ncu_advice_action("bank_conflicts"));
        if (f)
            finding_add_evidence(f, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", rate, "",
                                 "%.3f %s", rate, how);
    }
    coalescing_t co = s_coalescing(c);
    if (co.direct && co.bytes < COALESCE_SECONDARY_BYTES && strcmp(primary, "uncoalesced_access") != 0 &&
        has(V(c, NM_MEM_PCT)) && V(c, NM_MEM_PCT) >= 20 && strcmp(primary, "small_grid") != 0) {
        char title[256];
        snprintf(title, sizeof title, "Partly uncoalesced global %s: %.1f of 32 bytes per sector "
                                      "used", co.side, co.bytes);
        fb_finding_t *f = s_finding(c, "uncoalesced_access",
                                    (1 - co.bytes / SECTOR_BYTES) * V(c, NM_MEM_PCT), title,
                                    ncu_advice_action("uncoalesced_access"));
        if (f)
            finding_add_evidence(f, "bytes_per_sector", co.bytes, "byte/sector",
                                 "%s use %.1f of 32 bytes per sector", co.side, co.bytes);
    }
}

/* ----- putting a kernel together ------------------------------------------ */

static void s_kernel_metrics(ctx_t *c)
{
    static const ncu_metric_t keys[] = {
        NM_DURATION, NM_SM_PCT, NM_MEM_PCT, NM_DRAM_PCT, NM_L1_PCT, NM_L2_PCT, NM_L1_HIT, NM_L2_HIT,
        NM_OCC_THEORETICAL, NM_OCC_ACHIEVED, NM_REGISTERS, NM_WAVES, NM_WARP_CYCLES_PER_ISSUE,
        NM_LD_BYTES_PER_SECTOR, NM_ST_BYTES_PER_SECTOR, NM_BANK_CONFLICTS,
    };
    fb_kernel_t *kernel = feedback_kernel(c->fb, c->index);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (has(V(c, keys[i])))
            feedback_kernel_metric(kernel, ncu_metric_info(keys[i])->name, V(c, keys[i]));
}

static void s_analyze_kernel(ctx_t *c)
{
    double sm = V(c, NM_SM_PCT), mem = V(c, NM_MEM_PCT);
    c->headroom = has(sm) && has(mem) ? 100 - fmax(sm, mem) : NAN;
    s_kernel_metrics(c);
    s_primary(c);
    s_memory_secondary(c);
    s_occupancy(c);
    s_stalls(c);
    s_tail(c);
    s_spills(c);
    s_divergence(c);
    ncu_rules_merge(c->fb, c->index, c->k->rules, c->k->rule_count);
}

/* A JSON string for text from a capture, made valid UTF-8 first (jansson
 * refuses anything else). */
static json_t *s_json_text(const char *text)
{
    char *clean = textbuf_utf8_clean(text);
    json_t *s = clean ? json_string(clean) : NULL;
    free(clean);
    return s;
}

json_t *ncu_analyze_collated(const ncu_data_t *data)
{
    json_t *launches = json_array();
    json_t *root = json_object();
    if (!launches || !root || json_object_set_new(root, "launches", launches) != 0) {
        json_decref(launches);
        json_decref(root);
        return NULL;
    }
    for (size_t i = 0; i < ncu_data_count(data); i++) {
        const ncu_launch_t *l = ncu_data_at_const(data, i);
        json_t *launch = json_object(), *metrics = json_object();
        if (!launch || !metrics || json_array_append_new(launches, launch) != 0) {
            json_decref(metrics);
            json_decref(root);
            return NULL;
        }
        json_object_set_new(launch, "id", json_integer(l->id));
        json_object_set_new(launch, "kernel", s_json_text(l->kernel));
        json_object_set_new(launch, "block", s_json_text(l->block));
        json_object_set_new(launch, "grid", s_json_text(l->grid));
        for (int m = 0; m < NM__COUNT; m++)
            if (has(l->v[m]))
                json_object_set_new(metrics, ncu_metric_info((ncu_metric_t) m)->name, json_real(l->v[m]));
        json_object_set_new(launch, "metrics", metrics);
        json_object_set_new(launch, "rule_results", json_integer((json_int_t) l->rule_count));
    }
    return root;
}

static void s_status(const ncu_data_t *data, feedback_t *fb)
{
    size_t errors = ncu_data_message_count(data, NCU_MSG_ERROR);
    for (size_t i = 0; i < errors; i++)
        feedback_add_error(fb, "ncu: %s", ncu_data_message(data, NCU_MSG_ERROR, i));
    for (size_t i = 0; i < ncu_data_message_count(data, NCU_MSG_WARNING); i++)
        feedback_add_note(fb, "ncu warning: %s", ncu_data_message(data, NCU_MSG_WARNING, i));
    for (size_t i = 0; i < ncu_data_message_count(data, NCU_MSG_NOTE); i++)
        feedback_add_note(fb, "%s", ncu_data_message(data, NCU_MSG_NOTE, i));
    if (errors > 0)
        feedback_set_status(fb, FB_PROFILER_ERROR);
    else if (ncu_data_count(data) == 0)
        feedback_set_status(fb, FB_NO_KERNELS);
    else
        feedback_set_status(fb, FB_OK);
}

feedback_t *ncu_analyze(const ncu_data_t *data, const analysis_options_t *options,
                        const char *device_hint)
{
    assert(data && options);
    feedback_t *fb = feedback_new("ncu");
    if (!fb)
        return NULL;
    const char *device = ncu_data_device(data)[0] ? ncu_data_device(data) : device_hint;
    feedback_set_device(fb, device);
    s_status(data, fb);

    ncu_kernels_t *kernels = ncu_kernels_group(data);
    if (!kernels) {
        feedback_destroy(&fb);
        return NULL;
    }
    size_t total_kernels = ncu_kernels_count(kernels);
    double total_time = ncu_kernels_total_time(kernels);
    feedback_set_totals(fb, total_kernels, ncu_data_count(data), total_time);
    if (total_kernels > 0 && !has(total_time))
        feedback_add_note(fb, "no kernel duration was measured (gpu__time_duration.sum): kernels "
                              "are listed in launch order, not by their share of time");

    const roof_t *roof = roofs_lookup(device);
    size_t analyzed = 0, skipped = 0;
    double skipped_time = 0;
    for (size_t i = 0; i < total_kernels; i++) {
        const ncu_kernel_t *k = ncu_kernels_at(kernels, i);
        double share = has(total_time) && total_time > 0 && has(k->v[NM_DURATION])
                           ? k->v[NM_DURATION] / total_time : NAN;
        bool wanted = (analyzed == 0 && !options->min_share_strict) || !has(share) || share >= options->min_share;
        if (options->top > 0 && analyzed >= options->top)
            wanted = false;
        if (!wanted) {
            skipped++;
            if (has(k->v[NM_DURATION]))
                skipped_time += k->v[NM_DURATION];
            continue;
        }
        size_t index = feedback_add_kernel(fb, k->name, k->block, k->grid, k->launches,
                                           k->v[NM_DURATION], share);
        if (index == (size_t) -1)
            break;
        ctx_t c = {.k = k, .index = index, .fb = fb, .roof = roof};
        c.sm_clock_hz = has(k->v[NM_SM_FREQ]) ? k->v[NM_SM_FREQ]
                        : has(k->v[NM_DEV_CLOCK_KHZ]) ? k->v[NM_DEV_CLOCK_KHZ] * 1e3 : NAN;
        s_analyze_kernel(&c);
        analyzed++;
    }
    if (skipped > 0) {
        if (has(total_time) && total_time > 0)
            feedback_add_note(fb, "%zu more kernel%s (%.1f%% of profiled time) below the %.0f%% "
                                  "threshold%s were not analyzed", skipped, skipped == 1 ? "" : "s",
                              100 * skipped_time / total_time, 100 * options->min_share,
                              options->top ? " or past --top" : "");
        else
            feedback_add_note(fb, "%zu more kernels were not analyzed (--top)", skipped);
    }
    if (!roof && device && *device)
        feedback_add_note(fb, "no published peaks for \"%s\"; rooflines use the capture's own "
                              "peak metrics where present", device);
    ncu_kernels_destroy(&kernels);
    feedback_sort(fb);
    return fb;
}
