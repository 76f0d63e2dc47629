/* unitrace_kernel: one kernel's top-down analysis (see unitrace_kernel.h).
 *
 * One file of ~770 lines because it is one model: the measured units, each
 * cause's gain model and the bound all read and write one kernel context
 * (kctx_t) and rank against each other; the file reads in that order
 * (columns, units, causes, bound, top-down). Apart, the causes would need
 * that context in a header shared by nothing else. */
#include "unitrace_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fnv1a.h"
#include "intel_topdown.h"
#include "noise.h"

/* XVE_STALL: threads loaded but no pipe issuing; at 40% of the time with no
 * unit near its roof, the vector engines mostly wait (memory latency). */
#define STALL_PCT 40.0
/* Occupancy is named low under half of the thread slots (KernelFoundry's
 * mark); its model then sizes what more threads would buy. */
#define OCCUPANCY_LOW 50.0
/* A conflict rate worth naming even when its modelled gain is small. */
#define CONFLICT_SECONDARY 0.05
/* KernelFoundry's roofline band: within 10% of a ridge point is balanced. */
#define RIDGE_BAND 0.9

/* ---- columns -------------------------------------------------------------- */

#define C_TIME UT_COL_TIME
#define C_ACTIVE "XVE_ACTIVE[%]"
#define C_STALL "XVE_STALL[%]"
#define C_OCC "XVE_THREADS_OCCUPANCY_ALL[%]"
#define C_MEM_R "GPU_MEMORY_BYTE_READ[bytes]"
#define C_MEM_W "GPU_MEMORY_BYTE_WRITE[bytes]"
#define C_MEM_RR "GPU_MEMORY_BYTE_READ_RATE[GBpS]"
#define C_MEM_WR "GPU_MEMORY_BYTE_WRITE_RATE[GBpS]"
#define C_SLM_R "SLM_BYTE_READ[bytes]"
#define C_SLM_W "SLM_BYTE_WRITE[bytes]"
#define C_SLM_ACC "SLM_ACCESS_COUNT[events]"
#define C_SLM_BC "SLM_BANK_CONFLICT_COUNT[events]"
#define C_L3_HIT "L3_HIT[events]"
#define C_L3_MISS "L3_MISS[events]"
#define C_QFULL "GPU_MEMORY_REQUEST_QUEUE_FULL[%]"

/* ALU pipes: event counts, the counters' own utilization, and the old (PVC)
 * spelling of ALU2 as XMX. */
static const char *const s_alu_events[3][2] = {
    {"XVE_INST_EXECUTED_ALU0_ALL[events]", NULL},
    {"XVE_INST_EXECUTED_ALU1_ALL[events]", NULL},
    {"XVE_INST_EXECUTED_ALU2_ALL[events]", "XVE_INST_EXECUTED_XMX_ALL[events]"},
};
static const char *const s_alu_util[3][2] = {
    {"XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]", NULL},
    {"XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]", NULL},
    {"XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]", "XVE_INST_EXECUTED_XMX_ALL_UTILIZATION[%]"},
};
static const char *const s_alu_names[3] = {"ALU0", "ALU1", "ALU2 (XMX)"};

/* Instruction mix per pipe (KernelFoundry's grouping; Xe2 ALU0 = FP16/FP32,
 * ALU1 = FP64/integer/math, ALU2 = XMX). */
typedef struct {
    const char *column;
    const char *name;
    int alu;
} mix_t;
static const mix_t s_mix[] = {
    {"XVE_INST_EXECUTED_FP16[events]", "FP16", 0},
    {"XVE_INST_EXECUTED_FP32[events]", "FP32", 0},
    {"XVE_INST_EXECUTED_FP64[events]", "FP64", 1},
    {"XVE_INST_EXECUTED_INT16[events]", "INT16", 1},
    {"XVE_INST_EXECUTED_INT32[events]", "INT32", 1},
    {"XVE_INST_EXECUTED_INT64[events]", "INT64", 1},
    {"XVE_INST_EXECUTED_MATH[events]", "MATH", 1},
    {"XVE_INST_EXECUTED_XMX_BF16[events]", "XMX_BF16", 2},
    {"XVE_INST_EXECUTED_XMX_FP16[events]", "XMX_FP16", 2},
    {"XVE_INST_EXECUTED_XMX_INT2[events]", "XMX_INT2", 2},
    {"XVE_INST_EXECUTED_XMX_INT4[events]", "XMX_INT4", 2},
    {"XVE_INST_EXECUTED_XMX_INT8[events]", "XMX_INT8", 2},
};
#define MIX_COUNT (sizeof s_mix / sizeof s_mix[0])

/* Which metric group a pass ran, from its columns (never its position): the
 * per-type instruction counts mean VectorEngineProfile (PVC's VectorEngine138
 * too), SLM access counts mean MemoryProfile, ALU counts with memory traffic
 * mean ComputeBasic (PVC's ComputeBasic lacks the SLM conflict column the
 * seed keys on), per-reason stall columns mean VectorEngineStalls. */
int unitrace_kernel_group(const unitrace_table_t *t)
{
    /* VectorEngineStalls (Xe2): the stall reasons, XVE_STALL_<reason>[%]. */
    if (unitrace_table_has(t, "XVE_STALL_SBID[%]") && unitrace_table_has(t, "XVE_STALL_BARRIER[%]"))
        return UT_VES;
    if (unitrace_table_has(t, "XVE_INST_EXECUTED_XMX_INT8[events]") ||
        (unitrace_table_has(t, "XVE_INST_EXECUTED_FP32[events]") &&
         unitrace_table_has(t, "XVE_INST_EXECUTED_FP16[events]")))
        return UT_VEP;
    if (unitrace_table_has(t, C_SLM_ACC))
        return UT_MP;
    if (unitrace_table_has(t, s_alu_events[0][0]) &&
        (unitrace_table_has(t, C_MEM_R) || unitrace_table_has(t, C_STALL)))
        return UT_CB;
    return -1;
}


/* ---- a kernel's rows in one pass ----------------------------------------- */

/* A kernel's values in one pass: one representative row (query mode) or the
 * mean over its samples (sampling mode). */
typedef unitrace_view_t view_t;

/* The factor another collection's reading of `name` has (unitrace_view_t's
 * noise): 1 for the instruction counts the code fixes. */
static double s_noise(const view_t *v, const char *name)
{
    if (strncmp(name, "XVE_INST_EXECUTED_", 18) == 0 && !strstr(name, "UTILIZATION"))
        return 1;
    const char *counter = strcmp(name, C_TIME) == 0 ? "time" : name;
    return noise_factor(v->noise_seed, fnv1a_update_str(FNV1A_BASIS, counter), v->noise_sigma);
}

static double s_get(const view_t *v, const char *name)
{
    if (!v->table || v->count == 0)
        return NAN;
    int col = unitrace_table_column(v->table, name);
    if (col < 0)
        return NAN;
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < v->count; i++) {
        double x = unitrace_table_cell(v->table, v->rows[i], col);
        if (!isnan(x)) {
            sum += x;
            n++;
        }
    }
    if (n == 0)
        return NAN;
    double mean = sum / (double) n, factor = v->noise_sigma > 0 ? s_noise(v, name) : 1;
    return isfinite(mean * factor) ? mean * factor : mean; /* a value near DBL_MAX stays as read */
}

static double s_get2(const view_t *v, const char *const names[2])
{
    double x = s_get(v, names[0]);
    return isnan(x) && names[1] ? s_get(v, names[1]) : x;
}

static double s_or0(double x) { return analysis_has(x) ? x : 0; }

/* ---- per-kernel analysis --------------------------------------------------- */

typedef struct {
    feedback_t *fb;
    size_t index;
    const roof_t *roof;
    bool sampling;
    view_t cb, mp, vep, ves;
    double t;           /* ns the counters cover: kernel time, or the sample interval */
    double alu_rate[3]; /* instructions per ns */
    double alu_pct[3];  /* of the roof, or the counter's own utilization */
    double mem_gbps, mem_pct;
    double slm_bpns, slm_pct;
    double conflict_rate;
    double stall, occupancy, active;
    double l3_busy;     /* L3_BUSY[%] (MemoryProfile, VectorEngineProfile) */
    intel_units_t units; /* measured utilizations, busiest first */
    double busiest;     /* NAN when no unit was measured */
    bool latency;       /* busiest < INTEL_BUSY_PCT */
    bool explained;     /* a cause accounts for a latency-bound kernel's idle time */
} kctx_t;

static void s_measure(kctx_t *c)
{
    c->t = s_get(&c->cb, C_TIME);
    c->stall = s_get(&c->cb, C_STALL);
    c->active = s_get(&c->cb, C_ACTIVE);
    c->occupancy = s_get(&c->vep, C_OCC);
    if (!analysis_has(c->occupancy))
        c->occupancy = s_get(&c->cb, C_OCC);
    for (int i = 0; i < 3; i++) {
        double events = s_get2(&c->cb, s_alu_events[i]);
        if (!analysis_has(events))
            events = s_get2(&c->vep, s_alu_events[i]);
        c->alu_rate[i] = analysis_has(events) && analysis_has(c->t) && c->t > 0 ? events / c->t : NAN;
        c->alu_pct[i] = NAN;
        if (c->roof && c->roof->alu_inst_per_ns[i] > 0 && analysis_has(c->alu_rate[i]))
            c->alu_pct[i] = 100 * c->alu_rate[i] / c->roof->alu_inst_per_ns[i];
        else
            c->alu_pct[i] = s_get2(&c->cb, s_alu_util[i]);
    }
    double rr = s_get(&c->cb, C_MEM_RR), wr = s_get(&c->cb, C_MEM_WR);
    double rb = s_get(&c->cb, C_MEM_R), wb = s_get(&c->cb, C_MEM_W);
    if (analysis_has(rr) || analysis_has(wr))
        c->mem_gbps = s_or0(rr) + s_or0(wr);
    else if ((analysis_has(rb) || analysis_has(wb)) && analysis_has(c->t) && c->t > 0)
        c->mem_gbps = (s_or0(rb) + s_or0(wb)) / c->t; /* bytes per ns = GB/s */
    else
        c->mem_gbps = NAN;
    c->mem_pct = c->roof && c->roof->dram_gbps > 0 && analysis_has(c->mem_gbps)
                     ? 100 * c->mem_gbps / c->roof->dram_gbps : NAN;
    double sr = s_get(&c->cb, C_SLM_R), sw = s_get(&c->cb, C_SLM_W);
    if (!analysis_has(sr) && !analysis_has(sw)) {
        sr = s_get(&c->mp, C_SLM_R);
        sw = s_get(&c->mp, C_SLM_W);
    }
    c->slm_bpns = (analysis_has(sr) || analysis_has(sw)) && analysis_has(c->t) && c->t > 0 ? (s_or0(sr) + s_or0(sw)) / c->t : NAN;
    c->slm_pct = c->roof && c->roof->slm_bytes_per_ns > 0 && analysis_has(c->slm_bpns)
                     ? 100 * c->slm_bpns / c->roof->slm_bytes_per_ns : NAN;
    double access = s_get(&c->mp, C_SLM_ACC), conflicts = s_get(&c->mp, C_SLM_BC);
    c->conflict_rate = analysis_has(access) && access > 0 && analysis_has(conflicts) ? fmin(conflicts / access, 1) : NAN;
    c->l3_busy = s_get(&c->mp, "L3_BUSY[%]");
    if (!analysis_has(c->l3_busy))
        c->l3_busy = s_get(&c->vep, "L3_BUSY[%]");
}

static void s_pct_evidence(fb_finding_t *f, const char *metric, double pct, const char *what)
{
    if (f && analysis_has(pct))
        finding_add_evidence(f, metric, pct, "%", "%s %.1f%%", what, pct);
}

static void s_mix_evidence(kctx_t *c, fb_finding_t *f, int alu)
{
    double all = s_get2(&c->vep, s_alu_events[alu]);
    if (!f || !analysis_has(all) || all <= 0)
        return;
    char text[200];
    size_t n = 0;
    text[0] = '\0';
    for (size_t m = 0; m < MIX_COUNT; m++) {
        double x = s_get(&c->vep, s_mix[m].column);
        if (s_mix[m].alu != alu || !analysis_has(x) || x <= 0 || n + 32 >= sizeof text)
            continue;
        n += (size_t) snprintf(text + n, sizeof text - n, "%s%s %.0f%%", n ? ", " : "",
                               s_mix[m].name, 100 * x / all);
    }
    if (n)
        finding_add_evidence(f, "instruction_mix", NAN, "", "%s mix: %s", s_alu_names[alu], text);
}

/* The pipe issuing the most instructions per ns, and the roofline side it is
 * on (KernelFoundry's rule: within 10% of the ridge point is balanced). */
static int s_busiest_alu(const kctx_t *c)
{
    int best = -1;
    for (int i = 0; i < 3; i++)
        if (analysis_has(c->alu_rate[i]) && (best < 0 || c->alu_rate[i] > c->alu_rate[best]))
            best = i;
    return best;
}

static void s_roofline_evidence(kctx_t *c, fb_finding_t *f)
{
    int alu = s_busiest_alu(c);
    double bytes = s_or0(s_get(&c->cb, C_MEM_R)) + s_or0(s_get(&c->cb, C_MEM_W));
    if (!f || alu < 0 || bytes <= 0 || !c->roof || c->roof->alu_inst_per_ns[alu] <= 0)
        return;
    double ai = c->alu_rate[alu] * c->t / bytes;
    double ridge = c->roof->alu_inst_per_ns[alu] / c->roof->dram_gbps;
    const char *side = ai < RIDGE_BAND * ridge ? "memory" : ai > ridge / RIDGE_BAND ? "compute" : "balanced";
    finding_add_evidence(f, "arithmetic_intensity", ai, "inst/byte",
                         "%s arithmetic intensity %.3g instructions/byte vs ridge point %.3g: %s side",
                         s_alu_names[alu], ai, ridge, side);
}

/* ---- top-down: units, causes, the bound (docs/intel.md, "Models") ---------- */

/* SLM's busy time counts its replays: a conflicting access takes at least one
 * more SLM cycle (a 2-way conflict), moving no new bytes, so the SLM pipe is
 * busy bytes% x (accesses + conflicts) / accesses at least. */
static double s_slm_busy(const kctx_t *c)
{
    if (!analysis_has(c->slm_pct))
        return NAN;
    double r = analysis_has(c->conflict_rate) ? c->conflict_rate : 0;
    return fmin(c->slm_pct * (1 + r), 100);
}

static void s_units(kctx_t *c)
{
    c->units.count = 0;
    intel_units_add(&c->units, "memory", "device memory", INTEL_UNIT_MEMORY, c->mem_pct);
    intel_units_add(&c->units, "l3", "L3", INTEL_UNIT_MEMORY, c->l3_busy);
    intel_units_add(&c->units, "slm", "SLM", INTEL_UNIT_MEMORY, s_slm_busy(c));
    static const char *const keys[3] = {"alu0", "alu1", "xmx"};
    for (int i = 0; i < 3; i++)
        intel_units_add(&c->units, keys[i], s_alu_names[i], INTEL_UNIT_PIPE, c->alu_pct[i]);
    const intel_unit_t *top = intel_units_busiest(&c->units);
    c->busiest = top ? top->pct : NAN;
    c->latency = analysis_has(c->busiest) && c->busiest < INTEL_BUSY_PCT;
}

/* The share of the time no pipe issues, which more threads or more
 * independent work could fill: stalled plus idle (100 - XVE_ACTIVE), else
 * XVE_STALL alone. */
static double s_waiting(const kctx_t *c)
{
    if (analysis_has(c->active))
        return 1 - fmin(fmax(c->active, 0), 100) / 100;
    return analysis_has(c->stall) ? fmin(fmax(c->stall, 0), 100) / 100 : NAN;
}

/* SLM bank conflicts. Throughput: without replays the SLM pipe does
 * accesses / (accesses + conflicts) of its work; the gain is how far the
 * busiest unit drops. Latency (a latency-bound kernel): each replay also
 * lengthens an access the threads wait on; gain = XVE_STALL x SLM's share of
 * the bytes the XVEs move x the replays' share of SLM time. The larger of the
 * two is the estimate. */
static void s_cause_conflicts(kctx_t *c)
{
    double r = c->conflict_rate;
    bool slm_used = analysis_has(c->slm_bpns) && c->slm_bpns > 0;
    if (!analysis_has(r) || r <= 0 || !slm_used)
        return;
    double replays = r / (1 + r);
    intel_units_t after = c->units;
    intel_units_scale(&after, "slm", 1 - replays, 0);
    double gain = intel_units_drop(&c->units, &after);
    const char *model = "slm_replays";
    if (!intel_units_find(&c->units, "slm")) {
        gain = NAN; /* no SLM roof for this device: its busy time is unknown */
        model = "none";
    }
    if (c->latency && analysis_has(c->stall) && analysis_has(c->mem_gbps)) {
        double slm_share = c->slm_bpns / (c->slm_bpns + fmax(c->mem_gbps, 0));
        double wait = fmin(fmax(c->stall, 0), 100) / 100 * slm_share * replays;
        if (!analysis_has(gain) || wait > gain) {
            gain = wait;
            model = "slm_replay_latency";
        }
    }
    if (r < CONFLICT_SECONDARY && (!analysis_has(gain) || gain < INTEL_GAIN_REPORT))
        return;
    char title[320];
    const intel_unit_t *slm = intel_units_find(&c->units, "slm");
    if (slm)
        snprintf(title, sizeof title, "SLM bank conflicts: %.0f%% of shared local memory accesses conflict "
                 "and are serialized; SLM is busy %.0f%% of the time counting the replays", 100 * r, slm->pct);
    else
        snprintf(title, sizeof title, "SLM bank conflicts: %.0f%% of shared local memory accesses conflict "
                 "and are serialized (no SLM roof for this device: its busy time is unknown)", 100 * r);
    fb_finding_t *f = intel_finding(c->fb, c->index, "slm_bank_conflicts", gain, model, title,
                                    "Pad SLM arrays (e.g. [16][17] instead of [16][16]) or swizzle the "
                                    "index so the work-items of a sub-group hit different banks.");
    if (!f)
        return;
    finding_add_evidence(f, C_SLM_BC, 100 * r, "%", "%.0f%% of %.0f SLM accesses conflict", 100 * r,
                         s_get(&c->mp, C_SLM_ACC));
    s_pct_evidence(f, "slm_bandwidth_pct", c->slm_pct, "SLM bytes, % of peak:");
    if (slm)
        finding_add_evidence(f, "slm_busy_pct", slm->pct, "%", "SLM busy %.0f%% with one replay per "
                             "conflict", slm->pct);
    s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
    if (c->latency && analysis_has(gain) && gain >= INTEL_GAIN_EXPLAINS)
        c->explained = true;
}

/* Work-groups in the launch, from the kernel's "{x; y; z}" group count
 * (unitrace's name suffix), or NAN. */
static double s_groups(const kctx_t *c)
{
    const char *g = feedback_kernel(c->fb, c->index)->grid;
    if (g[0] != '{')
        return NAN;
    double n = 1;
    int dims = 0;
    const char *p = g + 1;
    while (dims < 3) {
        char *end = NULL;
        double x = strtod(p, &end);
        if (end == p || !(x >= 1) || x > 1e9)
            return NAN;
        n *= x;
        dims++;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == '}')
            break;
        if (*p != ';')
            return NAN;
        p++;
    }
    return dims > 0 ? n : NAN;
}

/* Fewer work-groups than Xe-cores: the cores without one have no work
 * whatever the occupancy. Model (as Nsight Compute's idle SMs): gain = the
 * share of the Xe-cores left without a work-group, 1 - groups / cores.
 * Returns whether it applied (then more threads per core is not the fix). */
static bool s_cause_small_grid(kctx_t *c)
{
    double groups = s_groups(c);
    if (!c->roof || c->roof->units <= 0 || !analysis_has(groups) || groups >= c->roof->units)
        return false;
    double gain = 1 - groups / c->roof->units;
    char title[240];
    snprintf(title, sizeof title, "Grid too small: %.0f work-group%s for the %d Xe-cores of the %s, so "
             "%.0f%% of the GPU has no work", groups, groups == 1 ? "" : "s", c->roof->units,
             c->roof->name, 100 * gain);
    fb_finding_t *f = intel_finding(c->fb, c->index, "small_grid", gain, "idle_cores", title,
                                    "Launch at least one work-group per Xe-core, better several: split "
                                    "the work into more, smaller work-groups, or batch several "
                                    "problems into one launch.");
    if (!f)
        return true;
    finding_add_evidence(f, "work_groups", groups, "", "%.0f work-group%s (%s)", groups,
                         groups == 1 ? "" : "s", feedback_kernel(c->fb, c->index)->grid);
    s_pct_evidence(f, C_OCC, c->occupancy, "thread occupancy");
    if (c->latency && gain >= INTEL_GAIN_EXPLAINS)
        c->explained = true;
    return true;
}

/* Too few threads to hide latency. More threads help until a unit reaches
 * the 80% roof: speedup = min(100 / occupancy, 80 / busiest); gain =
 * (1 - 1/speedup) x the time no pipe issues. Only the launch and the
 * kernel's resources (unreported by unitrace) bound the possible occupancy,
 * so 100% is taken as possible. */
static void s_cause_occupancy(kctx_t *c)
{
    double occ = c->occupancy, waiting = s_waiting(c);
    if (!analysis_has(occ) || occ <= 0 || occ >= OCCUPANCY_LOW || !analysis_has(c->busiest) || !analysis_has(waiting))
        return;
    double roof = c->busiest > 0 ? INTEL_ROOF_PCT / c->busiest : 10;
    double speedup = fmin(100 / fmin(occ, 100), roof);
    double gain = speedup > 1 ? (1 - 1 / speedup) * waiting : 0;
    if (gain < INTEL_GAIN_REPORT)
        return;
    char title[240];
    snprintf(title, sizeof title, "Low thread occupancy: %.0f%% of XVE thread slots in use while no unit "
             "is above %.0f%% busy; more threads would fill the %.0f%% of the time no pipe issues",
             occ, ceil(c->busiest), 100 * waiting);
    fb_finding_t *f = intel_finding(c->fb, c->index, "low_occupancy", gain, "threads_in_flight", title,
                                    "Launch more or larger work-groups, and use less SLM and fewer "
                                    "registers per work-item so more threads fit per XVE.");
    if (!f)
        return;
    s_pct_evidence(f, C_OCC, occ, "thread occupancy");
    s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
    s_pct_evidence(f, C_ACTIVE, c->active, "XVE active");
    if (c->latency && gain >= INTEL_GAIN_EXPLAINS)
        c->explained = true;
}

/* VectorEngineStalls' reasons and what they wait on. Waits on sends are the
 * memory side showing through when a memory unit (device memory, L3, SLM) is
 * the bound; waits on pipe results or a busy pipe are the compute side's. */
typedef enum { STALL_SEND, STALL_PIPE, STALL_CAUSE } stall_kind_t;
static const struct {
    const char *column, *what;
    stall_kind_t kind;
    const char *category, *action;
} s_stall_reasons[] = {
    {"XVE_STALL_SBID[%]", "scoreboard dependencies (results of sends and long-latency math)", STALL_SEND,
     "memory_latency", "Hide memory latency: issue several independent loads per work-item before "
     "using any (unroll, prefetch the next tile into registers), and keep reused data in SLM."},
    {"XVE_STALL_SENDWR[%]", "send write-back", STALL_SEND, "memory_latency",
     "Hide memory latency: issue several independent loads per work-item before using any, and keep "
     "reused data in SLM."},
    {"XVE_STALL_ALUWR[%]", "ALU result dependencies", STALL_PIPE, "dependency_stalls",
     "Break dependency chains: accumulate into several independent registers (unroll with separate "
     "partial sums) so other instructions run in between."},
    {"XVE_STALL_PIPESTALL[%]", "a busy pipe", STALL_PIPE, "dependency_stalls",
     "Spread the work over the pipes: mix FP32 (ALU0) with integer/math (ALU1) work, and cut "
     "instructions on the busiest pipe."},
    {"XVE_STALL_BARRIER[%]", "work-group barriers", STALL_CAUSE, "barrier_stalls",
     "Wait at fewer barriers: exchange data inside a sub-group with shuffles and group reductions "
     "instead of SLM plus a barrier, and double-buffer SLM tiles so one barrier per tile suffices."},
    {"XVE_STALL_INSTFETCH[%]", "instruction fetch", STALL_CAUSE, "instruction_fetch",
     "Shrink the hot loop's code: less unrolling or fewer template instantiations in one kernel, so "
     "it fits the instruction cache."},
    {"XVE_STALL_CONTROL[%]", "control flow", STALL_CAUSE, "warp_stall",
     "Simplify the control flow of the hot loop: hoist invariant branches, use select instead of "
     "branches, and keep a sub-group's work-items on one path."},
};
#define STALL_REASON_COUNT (sizeof s_stall_reasons / sizeof s_stall_reasons[0])

/* A stall reason is a cause unless it is the bound showing through. Gain: its
 * share of the time = XVE_STALL x its share of the reported reasons (their
 * ratio holds whatever their base), and when a unit is busy, only the part
 * the bound leaves idle, x (1 - busiest). */
static void s_cause_stalls(kctx_t *c)
{
    if (!c->ves.table || c->ves.count == 0)
        return;
    double stall = analysis_has(c->stall) ? c->stall : s_get(&c->ves, C_STALL);
    double x[STALL_REASON_COUNT], sum = 0;
    for (size_t i = 0; i < STALL_REASON_COUNT; i++) {
        x[i] = s_get(&c->ves, s_stall_reasons[i].column);
        sum += fmax(s_or0(x[i]), 0); /* the table's numbers are untrusted */
    }
    sum += fmax(s_or0(s_get(&c->ves, "XVE_STALL_OTHER[%]")), 0);
    if (!analysis_has(stall) || sum <= 0)
        return;
    const intel_unit_t *top = intel_units_busiest(&c->units);
    bool memory_bound = !c->latency && top && top->kind == INTEL_UNIT_MEMORY;
    bool compute_bound = !c->latency && top && top->kind == INTEL_UNIT_PIPE;
    /* One finding per category: the reasons of a category add up. */
    static const char *const categories[] = {"memory_latency", "dependency_stalls", "barrier_stalls",
                                             "instruction_fetch", "warp_stall"};
    for (size_t k = 0; k < sizeof categories / sizeof categories[0]; k++) {
        double share = 0;
        size_t lead = STALL_REASON_COUNT;
        for (size_t i = 0; i < STALL_REASON_COUNT; i++) {
            if (strcmp(s_stall_reasons[i].category, categories[k]) != 0 || !analysis_has(x[i]) || x[i] <= 0)
                continue;
            stall_kind_t kind = s_stall_reasons[i].kind;
            if ((kind == STALL_SEND && memory_bound) || (kind == STALL_PIPE && compute_bound))
                continue; /* the bound showing through */
            share += x[i] / sum;
            if (lead == STALL_REASON_COUNT || x[i] > x[lead])
                lead = i;
        }
        if (lead == STALL_REASON_COUNT)
            continue;
        double time = fmin(fmax(stall, 0), 100) / 100 * share;
        double gain = c->latency ? time : time * (1 - c->busiest / 100);
        if (gain < INTEL_GAIN_REPORT)
            continue;
        char title[300];
        snprintf(title, sizeof title, "XVE stalls on %s: %.0f%% of the stalled time, %.0f%% of the "
                 "kernel's time", s_stall_reasons[lead].what, 100 * share, 100 * time);
        fb_finding_t *f = intel_finding(c->fb, c->index, categories[k], gain, "stall_time", title,
                                        s_stall_reasons[lead].action);
        if (!f)
            continue;
        for (size_t i = 0; i < STALL_REASON_COUNT; i++)
            if (strcmp(s_stall_reasons[i].category, categories[k]) == 0 && analysis_has(x[i]) && x[i] > 0)
                finding_add_evidence(f, s_stall_reasons[i].column, x[i], "%", "%s %.1f%%",
                                     s_stall_reasons[i].what, x[i]);
        s_pct_evidence(f, C_STALL, stall, "XVE stalled");
        if (c->latency && gain >= INTEL_GAIN_EXPLAINS)
            c->explained = true;
    }
}

/* 64-bit work on ALU1. FP64 in FP32 runs on ALU0 (1/8-1/16 of the rate on
 * Xe2 becomes full rate: the slots move, counted once); INT64 as 32-bit
 * halves its slots at least. Gain: how far the busiest unit drops. */
static void s_cause_wide_types(kctx_t *c)
{
    double alu1 = s_get2(&c->vep, s_alu_events[1]);
    double fp64 = s_get(&c->vep, "XVE_INST_EXECUTED_FP64[events]");
    double int64 = s_get(&c->vep, "XVE_INST_EXECUTED_INT64[events]");
    const intel_unit_t *a1 = intel_units_find(&c->units, "alu1");
    if (!analysis_has(alu1) || alu1 <= 0 || !a1)
        return;
    if (analysis_has(fp64) && fp64 / alu1 >= 0.2) {
        double f64 = fmin(fp64 / alu1, 1);
        intel_units_t after = c->units;
        intel_units_scale(&after, "alu1", 1 - f64, 0);
        intel_units_scale(&after, "alu0", 1, a1->pct * f64);
        double gain = intel_units_drop(&c->units, &after);
        fb_finding_t *f = intel_finding(c->fb, c->index, "fp64", gain, "pipe_work",
                                        "FP64 instructions on a GPU with a slow FP64 rate",
                                        "Use FP32 (or FP32 with compensated sums) where accuracy allows; "
                                        "check for accidental double literals.");
        if (f)
            finding_add_evidence(f, "XVE_INST_EXECUTED_FP64[events]", 100 * f64, "%",
                                 "FP64 is %.0f%% of ALU1 instructions, ALU1 %.0f%% busy", 100 * f64, a1->pct);
    }
    if (analysis_has(int64) && int64 / alu1 >= 0.3) {
        double i64 = fmin(int64 / alu1, 1);
        intel_units_t after = c->units;
        intel_units_scale(&after, "alu1", 1 - i64 / 2, 0);
        double gain = intel_units_drop(&c->units, &after);
        fb_finding_t *f = intel_finding(c->fb, c->index, "int64_math", gain, "pipe_work",
                                        "64-bit integer math dominates ALU1 (likely index arithmetic)",
                                        "Use 32-bit indices and offsets where sizes allow (size_t/long "
                                        "indices compile to INT64 ops).");
        if (f)
            finding_add_evidence(f, "XVE_INST_EXECUTED_INT64[events]", 100 * i64, "%",
                                 "INT64 is %.0f%% of ALU1 instructions, ALU1 %.0f%% busy", 100 * i64, a1->pct);
    }
}

/* Advice the counters cannot size: whether ALU0's math is matrix-shaped
 * (XMX), and how much of the DRAM traffic better reuse would remove (L3
 * misses). Reported without a gain (importance 5), never ahead of a bound. */
static void s_cause_unsized(kctx_t *c)
{
    double alu0 = s_get2(&c->vep, s_alu_events[0]), alu2 = s_get2(&c->vep, s_alu_events[2]);
    double fp16 = s_get(&c->vep, "XVE_INST_EXECUTED_FP16[events]");
    if (analysis_has(alu0) && alu0 > 0 && analysis_has(alu2) && alu2 == 0 && analysis_has(c->alu_pct[0]) && c->alu_pct[0] >= 40) {
        fb_finding_t *f = intel_finding(c->fb, c->index, "xmx_unused", NAN, "none",
                                        "XMX matrix engines unused while ALU0 carries the math (if it is "
                                        "matrix math: the counters cannot tell)",
                                        "If the kernel multiplies matrices, use XMX: joint_matrix in SYCL "
                                        "(or oneDNN/oneMKL); XMX has several times ALU0's FP16/BF16 rate.");
        if (f) {
            finding_add_evidence(f, s_alu_events[0][0], c->alu_pct[0], "%", "ALU0 %.1f%% of peak, XMX 0",
                                 c->alu_pct[0]);
            if (analysis_has(fp16))
                finding_add_evidence(f, "XVE_INST_EXECUTED_FP16[events]", 100 * fp16 / alu0, "%",
                                     "FP16 is %.0f%% of ALU0 instructions", 100 * fp16 / alu0);
        }
    }
    double hit = s_get(&c->cb, C_L3_HIT), miss = s_get(&c->cb, C_L3_MISS);
    if (!analysis_has(hit)) {
        hit = s_get(&c->mp, C_L3_HIT);
        miss = s_get(&c->mp, C_L3_MISS);
    }
    if (analysis_has(hit) && analysis_has(miss) && hit + miss > 0 && miss / (hit + miss) >= 0.5 && analysis_has(c->mem_pct) &&
        c->mem_pct >= 30) {
        fb_finding_t *f = intel_finding(c->fb, c->index, "l3_thrashing", NAN, "none",
                                        "Most device-cache (L3) accesses miss", "Block the computation so "
                                        "each tile's working set fits in L3/SLM, and order work-groups to "
                                        "reuse cached data.");
        if (f)
            finding_add_evidence(f, C_L3_MISS, 100 * miss / (hit + miss), "%", "L3 miss ratio %.0f%%",
                                 100 * miss / (hit + miss));
    }
}

/* Stall reasons that are the bound showing through, as its evidence. */
static void s_symptom_evidence(kctx_t *c, fb_finding_t *f, stall_kind_t kind)
{
    if (!f || !c->ves.table || c->ves.count == 0)
        return;
    for (size_t i = 0; i < STALL_REASON_COUNT; i++) {
        double x = s_get(&c->ves, s_stall_reasons[i].column);
        if (s_stall_reasons[i].kind == kind && analysis_has(x) && x > 0)
            finding_add_evidence(f, s_stall_reasons[i].column, x, "%", "XVEs wait on %s %.1f%% (the bound "
                                 "showing through)", s_stall_reasons[i].what, x);
    }
}

/* The bound: the busiest unit at >= 60% of its peak, gain = its headroom. */
static void s_bound_busy(kctx_t *c, const intel_unit_t *top)
{
    char title[320];
    fb_finding_t *f = NULL;
    double gain = 1 - top->pct / 100;
    bool slm_used = analysis_has(c->slm_bpns) && c->slm_bpns > 0;
    if (strcmp(top->key, "memory") == 0) {
        snprintf(title, sizeof title, "Memory-bound on device memory bandwidth: %.0f GB/s, %.0f%% of "
                 "the %.0f GB/s peak", c->mem_gbps, c->mem_pct, c->roof->dram_gbps);
        f = intel_finding(c->fb, c->index, "memory_bound", gain, "headroom", title,
                          slm_used ? "Move fewer bytes: fuse with neighbouring kernels, use narrower types, "
                                     "and reuse tiles already in SLM before reloading them."
                                   : "Move fewer bytes: stage reused data in shared local memory (SLM), "
                                     "fuse with neighbouring kernels, and use narrower types.");
        if (f) {
            finding_add_evidence(f, "gpu_memory_bandwidth", c->mem_gbps, "GB/s",
                                 "device memory %.1f GB/s = %.0f%% of %.0f GB/s", c->mem_gbps, c->mem_pct,
                                 c->roof->dram_gbps);
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
            s_pct_evidence(f, C_QFULL, s_get(&c->cb, C_QFULL), "memory request queue full");
        }
    } else if (strcmp(top->key, "l3") == 0) {
        snprintf(title, sizeof title, "L3-bound: the device cache is busy %.0f%% of the time with device "
                 "memory at %.0f%%", top->pct, s_or0(c->mem_pct));
        f = intel_finding(c->fb, c->index, "l3_bound", gain, "headroom", title,
                          "Reuse data closer to the XVEs: stage tiles in SLM or registers instead of "
                          "re-reading them through L3, and read contiguous, whole cache lines.");
        if (f)
            finding_add_evidence(f, "L3_BUSY[%]", top->pct, "%", "L3 busy %.1f%%", top->pct);
    } else if (strcmp(top->key, "slm") == 0) {
        snprintf(title, sizeof title, "SLM-bandwidth bound: shared local memory busy %.0f%% of the time "
                 "(%.0f%% of its byte rate)", top->pct, c->slm_pct);
        f = intel_finding(c->fb, c->index, "slm_bound", gain, "headroom", title,
                          "Keep reused values in registers (more outputs per work-item) and load SLM in "
                          "wider blocks; fix bank conflicts if any.");
        if (f) {
            finding_add_evidence(f, "slm_bandwidth", c->slm_bpns, "byte/ns", "SLM %.0f bytes/ns = %.0f%% "
                                 "of peak", c->slm_bpns, c->slm_pct);
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
        }
    } else {
        int alu = strcmp(top->key, "alu0") == 0 ? 0 : strcmp(top->key, "alu1") == 0 ? 1 : 2;
        snprintf(title, sizeof title, "Compute-bound on %s: %.0f%% of its instruction rate%s",
                 s_alu_names[alu], c->alu_pct[alu], c->roof ? "" : " (the counter's own utilization)");
        f = intel_finding(c->fb, c->index, "compute_bound", gain, "headroom", title,
                          alu == 2 ? "XMX is the limit: use lower precision (INT8/FP16) if accuracy allows, "
                                     "or cut redundant matrix work."
                          : alu == 0 ? "Cut FP32/FP16 instructions per result, and move matrix math onto XMX "
                                       "(joint_matrix, oneDNN/oneMKL) where it fits."
                                     : "Cut integer/FP64/math instructions: 32-bit indices instead of 64-bit, "
                                       "hoist address math out of loops, FP32 instead of FP64 where accuracy "
                                       "allows.");
        if (f) {
            snprintf(f->unit, sizeof f->unit, "%s", top->key); /* the pipe: its action is its own */
            finding_add_evidence(f, s_alu_events[alu][0], c->alu_pct[alu], "%", "%s %.1f%% of peak%s",
                                 s_alu_names[alu], c->alu_pct[alu], analysis_has(c->alu_rate[alu]) ? "" : " (counter)");
            s_mix_evidence(c, f, alu);
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
        }
    }
    if (!f)
        return;
    intel_units_evidence(f, &c->units);
    s_symptom_evidence(c, f, top->kind == INTEL_UNIT_MEMORY ? STALL_SEND : STALL_PIPE);
    s_roofline_evidence(c, f);
}

/* No unit at 60% and no cause that explains it. latency_bound when the XVEs
 * are stalled >= 40% of the time: gain = the idle share of the busiest unit x
 * the stalled share (what hiding the latency could fill). Otherwise balanced:
 * gain = the time no pipe issues, the most more parallel work could fill. */
static void s_bound_latency(kctx_t *c)
{
    char title[320];
    const intel_unit_t *top = intel_units_busiest(&c->units);
    fb_finding_t *f;
    if (analysis_has(c->stall) && c->stall >= STALL_PCT) {
        snprintf(title, sizeof title, "Latency-bound: the vector engines are stalled %.0f%% of the time "
                 "and no unit is above %.0f%% of its peak (busiest: %s)", c->stall, ceil(c->busiest),
                 top->name);
        f = intel_finding(c->fb, c->index, "latency_bound",
                          (1 - c->busiest / 100) * fmin(c->stall, 100) / 100, "latency", title,
                          "Hide memory latency: more independent loads per work-item, prefetch into SLM, "
                          "more work-items per XVE (occupancy).");
        if (f) {
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
            s_pct_evidence(f, C_OCC, c->occupancy, "thread occupancy");
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
        }
    } else {
        snprintf(title, sizeof title, "Balanced: no unit above %.0f%% of its peak (busiest: %s at %.0f%%)",
                 INTEL_BUSY_PCT, top->name, top->pct);
        double waiting = s_waiting(c);
        f = intel_finding(c->fb, c->index, "balanced", analysis_has(waiting) ? waiting : 1 - c->busiest / 100,
                          "latency", title,
                          "Raise compute and memory throughput together: more parallel work per launch, "
                          "fewer instructions per result, fewer bytes per result.");
        if (f) {
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
            for (int i = 0; i < 3; i++)
                if (analysis_has(c->alu_pct[i]) && c->alu_pct[i] > 0)
                    finding_add_evidence(f, s_alu_events[i][0], c->alu_pct[i], "%", "%s %.1f%% of peak",
                                         s_alu_names[i], c->alu_pct[i]);
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
        }
    }
    if (!f)
        return;
    intel_units_evidence(f, &c->units);
    s_roofline_evidence(c, f);
}

/* One kernel, top-down: measure the units, run every cause model, add the
 * bound, and mark the finding with the largest gain. */
static void s_topdown(kctx_t *c)
{
    size_t first = feedback_finding_count(c->fb);
    s_units(c);
    if (!analysis_has(c->busiest)) {
        feedback_add_missing(c->fb, "unit utilizations: ComputeBasic's XVE_INST_EXECUTED_ALU*_ALL, "
                                    "GPU_MEMORY_BYTE_* and SLM_BYTE_* (unitrace --group ComputeBasic)");
        return;
    }
    s_cause_conflicts(c);
    s_cause_stalls(c);
    if (!s_cause_small_grid(c))
        s_cause_occupancy(c);
    s_cause_wide_types(c);
    s_cause_unsized(c);
    if (!c->latency)
        s_bound_busy(c, intel_units_busiest(&c->units));
    else if (!c->explained)
        s_bound_latency(c);
    intel_mark_primary(c->fb, c->index, first);
    intel_set_ceiling(c->fb, c->index, &c->units);
}

void unitrace_kernel_analyze(feedback_t *fb, size_t index, const roof_t *roof, bool sampling,
                             const unitrace_view_t views[UT__GROUPS])
{
    kctx_t c = {.fb = fb, .index = index, .roof = roof, .sampling = sampling};
    c.cb = views[UT_CB];
    c.mp = views[UT_MP];
    c.vep = views[UT_VEP];
    c.ves = views[UT_VES];
    s_measure(&c);
    fb_kernel_t *kernel = feedback_kernel(fb, index);
    if (analysis_has(c.t))
        feedback_kernel_metric(kernel, sampling ? "sampling_interval_ns" : "median_time_ns", c.t);
    if (analysis_has(c.mem_gbps))
        feedback_kernel_metric(kernel, "gpu_memory_gbps", c.mem_gbps);
    if (analysis_has(c.stall))
        feedback_kernel_metric(kernel, C_STALL, c.stall);
    if (analysis_has(c.occupancy))
        feedback_kernel_metric(kernel, C_OCC, c.occupancy);
    for (int i = 0; i < 3; i++)
        if (analysis_has(c.alu_pct[i]))
            feedback_kernel_metric(kernel, s_alu_events[i][0], c.alu_pct[i]);
    s_topdown(&c);
}
