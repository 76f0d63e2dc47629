/* vtune_analyze: VTune GPU hotspots to ranked findings (see vtune_analyze.h).
 *
 * One file of ~1,000 lines because it is one model, as unitrace_kernel.c is
 * unitrace's: the units, the bound and each cause's gain model read one
 * kernel's metrics and rank against each other, followed by the job-level
 * notes (shape, launches, overhead) that use the same per-kernel results. */
#include "vtune_analyze.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "close_call.h"
#include "intel_topdown.h"
#include "roofs.h"
#include "vtune_noise.h"

/* Top-down (docs/intel.md, "Models"; intel_topdown.h): the busiest measured
 * unit (XMX, ALU0, ALU1, L3, GPU memory when the device is known) is the
 * bound with its headroom; every cause carries a gain from a model of its
 * own, and the largest gain leads.
 *
 * KernelFoundry's VTuneProfilerFeedback (eval_pipeline/profiler_feedback.py
 * at 365e1fb) applied its rules first-match-wins (Send stalls, XMX > 20,
 * ALU0 > 50, ALU1 > 50, else balanced); its marks still decide when a finding
 * is named. Values are the percentages VTune prints. Its memory_latency rule:
 * Send stalls > 5 while the XVEs stall, and Send >= SBID and Dist/Acc. */
#define KF_SEND_STALL_MIN 5.0
/* Its recommendations: occupancy under 50% (average, else peak); SBID or
 * Dist/Acc stalls over 5%; barrier stalls over 5%; an L3 miss ratio over
 * 50%; XMX under 5% active while ALU0 is over 40% busy. */
#define KF_OCCUPANCY_LOW 50.0
#define KF_DEPENDENCY_STALL 5.0
#define KF_BARRIER_STALL 5.0
#define KF_L3_MISS_HIGH 50.0
#define KF_XMX_UNUSED 5.0
#define KF_ALU0_BUSY 40.0

/* Headroom assumed when neither XVE activity nor a pipe was reported. */
#define HEADROOM_UNKNOWN 0.5
/* VTune's sampled GPU memory bandwidth (KernelFoundry: approximate) above the
 * device's published peak by more than this contradicts it: noted, not used
 * as a utilization. */
#define MEMORY_OVER_PEAK 1.05

/* What to add to the report when a column group is missing. Constant strings
 * so each is listed once however many kernels lack it. */
static const char *const s_missing_stalls =
    "XVE Stall Reasons (Send, SBID, Dist or Acc, Instruction Fetch, Barrier): add -column "
    "\"XVE Stall Reasons\" to vtune -report hotspots; without them memory latency, dependency and "
    "barrier stalls are not judged";
static const char *const s_missing_xve =
    "XVE Array (Active, Stalled, Idle): add -column \"XVE Array\"; without it stalls and idle time "
    "cannot be weighed";
static const char *const s_missing_pipes =
    "XVE Pipelines (ALU0 active, ALU1 active, XMX active): add -column \"XVE Pipelines\"; without "
    "them XMX/ALU0/ALU1 bounds and unused XMX are not judged";
static const char *const s_missing_occupancy =
    "XVE Threads Occupancy: add -column \"XVE Threads Occupancy\" (Peak XVE Threads Occupancy and "
    "its limiters need a second -report pass: VTune cannot combine the two)";
static const char *const s_missing_l3 =
    "GPU L3:Miss Ratio: add -column \"GPU L3\"; without it L3 thrashing is not judged";
static const char *const s_missing_memory =
    "GPU Memory Bandwidth, GB/sec (Read, Write): a separate -report pass with -column \"GB/sec\" "
    "(the comma in the name splits a -column list)";
static const char *const s_missing_time =
    "Computing Task:Total Time: add -column \"Computing Task\"; without it kernels are not ranked "
    "by time";

typedef struct {
    const vtune_kernel_t *k;
    size_t index; /* in the feedback */
    feedback_t *fb;
    const roof_t *roof;  /* the device's peaks, or NULL */
    intel_units_t units; /* measured utilizations, busiest first */
    double busiest;      /* NAN when no unit was measured */
    bool latency;        /* busiest < INTEL_BUSY_PCT */
    bool explained;      /* a cause accounts for a latency-bound kernel's idle time */
    const char *bound;   /* the busy unit's key when not latency-bound, else NULL */
} ctx_t;

static double V(const ctx_t *c, vtune_metric_t m) { return c->k->v[m]; }
static double s_or0(double x) { return analysis_has(x) ? x : 0; }

/* A finding with its gain (0..1, NAN: no model) from `model`. */
static fb_finding_t *s_finding(ctx_t *c, const char *category, double gain, const char *model,
                               const char *title, const char *action)
{
    return intel_finding(c->fb, c->index, category, gain, model, title, action);
}

static void s_missing(ctx_t *c, const char *what) { feedback_add_missing(c->fb, what); }

/* "1.23B", "580M", "12.0K": instruction counts are large. */
static void s_count(double x, char *out, size_t cap)
{
    if (x >= 1e12)
        snprintf(out, cap, "%.2fT", x / 1e12);
    else if (x >= 1e9)
        snprintf(out, cap, "%.2fB", x / 1e9);
    else if (x >= 1e6)
        snprintf(out, cap, "%.1fM", x / 1e6);
    else if (x >= 1e3)
        snprintf(out, cap, "%.1fK", x / 1e3);
    else
        snprintf(out, cap, "%.0f", x);
}

/* ----- evidence ------------------------------------------------------------ */

/* The vector engines' time split, one line: the breakdown every verdict
 * rests on. `key` picks which state the line's value carries. */
static void s_ev_xve(fb_finding_t *f, const ctx_t *c, vtune_metric_t key)
{
    double a = V(c, VT_XVE_ACTIVE), s = V(c, VT_XVE_STALLED), i = V(c, VT_XVE_IDLE);
    if (!f || (!analysis_has(a) && !analysis_has(s) && !analysis_has(i)))
        return;
    if (!analysis_has(V(c, key)))
        key = analysis_has(s) ? VT_XVE_STALLED : analysis_has(a) ? VT_XVE_ACTIVE : VT_XVE_IDLE;
    char parts[3][32] = {"", "", ""};
    if (analysis_has(a))
        snprintf(parts[0], sizeof parts[0], "active %.1f%%", a);
    if (analysis_has(s))
        snprintf(parts[1], sizeof parts[1], "%sstalled %.1f%%", analysis_has(a) ? ", " : "", s);
    if (analysis_has(i))
        snprintf(parts[2], sizeof parts[2], "%sidle %.1f%%", analysis_has(a) || analysis_has(s) ? ", " : "", i);
    finding_add_evidence(f, vtune_metric_column(key), V(c, key), "%", "XVE array %s%s%s of the time",
                         parts[0], parts[1], parts[2]);
}

static const struct {
    vtune_metric_t metric;
    const char *label;
} s_stalls[] = {
    {VT_STALL_SEND, "Send"},
    {VT_STALL_SBID, "SBID"},
    {VT_STALL_DIST_ACC, "Dist/Acc"},
    {VT_STALL_BARRIER, "Barrier"},
    {VT_STALL_INSTR_FETCH, "Instruction Fetch"},
};
#define STALL_COUNT (sizeof s_stalls / sizeof s_stalls[0])

/* The stall reasons, largest first, in one line whose value is the largest. */
static void s_ev_stalls(fb_finding_t *f, const ctx_t *c)
{
    size_t order[STALL_COUNT], n = 0;
    for (size_t i = 0; i < STALL_COUNT; i++)
        if (analysis_has(V(c, s_stalls[i].metric)))
            order[n++] = i;
    if (!f || n == 0)
        return;
    for (size_t i = 1; i < n; i++) { /* five entries: insertion sort */
        for (size_t j = i; j > 0; j--) {
            if (V(c, s_stalls[order[j]].metric) <= V(c, s_stalls[order[j - 1]].metric))
                break;
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    char text[200];
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof text; i++) {
        int w = snprintf(text + used, sizeof text - used, "%s%s %.1f%%", i ? ", " : "",
                         s_stalls[order[i]].label, V(c, s_stalls[order[i]].metric));
        if (w < 0)
            break;
        used += (size_t) w;
    }
    vtune_metric_t top = s_stalls[order[0]].metric;
    finding_add_evidence(f, vtune_metric_column(top), V(c, top), "%", "XVE stall reasons: %s", text);
}

/* Pipe activity, one line whose value is `key` (or the busiest pipe). */
static void s_ev_pipes(fb_finding_t *f, const ctx_t *c, vtune_metric_t key)
{
    double a0 = V(c, VT_ALU0_ACTIVE), a1 = V(c, VT_ALU1_ACTIVE), x = V(c, VT_XMX_ACTIVE);
    if (!f || (!analysis_has(a0) && !analysis_has(a1) && !analysis_has(x)))
        return;
    if (!analysis_has(V(c, key))) {
        key = VT_ALU0_ACTIVE;
        if (!analysis_has(a0) || (analysis_has(a1) && a1 > a0))
            key = VT_ALU1_ACTIVE;
        if (!analysis_has(V(c, key)) || (analysis_has(x) && x > V(c, key)))
            key = VT_XMX_ACTIVE;
    }
    char parts[3][48] = {"", "", ""};
    if (analysis_has(a0))
        snprintf(parts[0], sizeof parts[0], "ALU0 (FP32/FP16) %.1f%%", a0);
    if (analysis_has(a1))
        snprintf(parts[1], sizeof parts[1], "%sALU1 (INT/FP64/math) %.1f%%", analysis_has(a0) ? ", " : "", a1);
    if (analysis_has(x))
        snprintf(parts[2], sizeof parts[2], "%sXMX %.1f%%", analysis_has(a0) || analysis_has(a1) ? ", " : "", x);
    finding_add_evidence(f, vtune_metric_column(key), V(c, key), "%", "pipes active: %s%s%s",
                         parts[0], parts[1], parts[2]);
}

/* Instruction mix from the instruction counts, when reported. */
static void s_ev_mix(fb_finding_t *f, const ctx_t *c)
{
    double a0 = V(c, VT_ALU0_INSTR), a1 = V(c, VT_ALU1_INSTR), x = V(c, VT_XMX_INSTR);
    double total = s_or0(a0) + s_or0(a1) + s_or0(x);
    if (!f || total <= 0)
        return;
    char n0[16], n1[16], nx[16];
    s_count(s_or0(a0), n0, sizeof n0);
    s_count(s_or0(a1), n1, sizeof n1);
    s_count(s_or0(x), nx, sizeof nx);
    finding_add_evidence(f, "XVE Instructions", total, "inst",
                         "instruction mix: ALU0 %.0f%% (%s), ALU1 %.0f%% (%s), XMX %.0f%% (%s)",
                         100 * s_or0(a0) / total, n0, 100 * s_or0(a1) / total, n1,
                         100 * s_or0(x) / total, nx);
}

static void s_ev_memory(fb_finding_t *f, const ctx_t *c)
{
    double r = V(c, VT_MEM_BW_READ), w = V(c, VT_MEM_BW_WRITE);
    if (!f || (!analysis_has(r) && !analysis_has(w)))
        return;
    finding_add_evidence(f, "GPU Memory Bandwidth, GB/sec", s_or0(r) + s_or0(w), "GB/s",
                         "GPU memory bandwidth (VTune-sampled): read %.1f GB/s, write %.1f GB/s",
                         s_or0(r), s_or0(w));
    if (c->roof && c->roof->dram_gbps > 0)
        finding_add_evidence(f, "gpu_memory_bandwidth_pct", 100 * (s_or0(r) + s_or0(w)) / c->roof->dram_gbps,
                             "%", "%.0f%% of the %s's %.0f GB/s peak%s",
                             100 * (s_or0(r) + s_or0(w)) / c->roof->dram_gbps, c->roof->name,
                             c->roof->dram_gbps,
                             s_or0(r) + s_or0(w) > c->roof->dram_gbps ? " (more than its peak: the "
                                                                        "device or the sample is off)" : "");
}

static void s_ev_l3(fb_finding_t *f, const ctx_t *c)
{
    double miss = V(c, VT_L3_MISS), r = V(c, VT_L3_BW_READ), w = V(c, VT_L3_BW_WRITE);
    double busy = V(c, VT_L3_BUSY);
    if (!f)
        return;
    if (analysis_has(miss))
        finding_add_evidence(f, vtune_metric_column(VT_L3_MISS), miss, "%",
                             "L3 miss ratio %.1f%% (requests served from GPU memory)", miss);
    if (analysis_has(r) || analysis_has(w))
        finding_add_evidence(f, "GPU L3:Average Bandwidth, GB/s", s_or0(r) + s_or0(w), "GB/s",
                             "L3 bandwidth: read %.1f GB/s, write %.1f GB/s", s_or0(r), s_or0(w));
    if (analysis_has(busy))
        finding_add_evidence(f, vtune_metric_column(VT_L3_BUSY), busy, "%", "L3 busy %.1f%%", busy);
}

static void s_ev_pct(fb_finding_t *f, const ctx_t *c, vtune_metric_t m, const char *what)
{
    if (f && analysis_has(V(c, m)))
        finding_add_evidence(f, vtune_metric_column(m), V(c, m), "%", "%s %.1f%%", what, V(c, m));
}

/* ----- units and time shares (docs/intel.md, "Models") ---------------------- */

/* The pipes' activity, L3 busy, and GPU memory bandwidth as a share of the
 * device's peak when the device is known (the report does not name it) and
 * the figure is consistent with that peak. */
static void s_units(ctx_t *c)
{
    c->units.count = 0;
    intel_units_add(&c->units, "xmx", "XMX", INTEL_UNIT_PIPE, V(c, VT_XMX_ACTIVE));
    intel_units_add(&c->units, "alu0", "ALU0", INTEL_UNIT_PIPE, V(c, VT_ALU0_ACTIVE));
    intel_units_add(&c->units, "alu1", "ALU1", INTEL_UNIT_PIPE, V(c, VT_ALU1_ACTIVE));
    intel_units_add(&c->units, "l3", "L3", INTEL_UNIT_MEMORY, V(c, VT_L3_BUSY));
    double r = V(c, VT_MEM_BW_READ), w = V(c, VT_MEM_BW_WRITE);
    if (c->roof && c->roof->dram_gbps > 0 && (analysis_has(r) || analysis_has(w))) {
        double pct = 100 * (fmax(s_or0(r), 0) + fmax(s_or0(w), 0)) / c->roof->dram_gbps;
        if (pct <= 100 * MEMORY_OVER_PEAK)
            intel_units_add(&c->units, "memory", "GPU memory", INTEL_UNIT_MEMORY, pct);
        else
            feedback_add_note(c->fb, "\"%.80s\": VTune's GPU memory bandwidth (%.0f GB/s) exceeds the "
                              "%s's %.0f GB/s peak: the device or the sample is off, so it is not used "
                              "as a utilization", c->k->name, s_or0(r) + s_or0(w), c->roof->name,
                              c->roof->dram_gbps);
    }
    const intel_unit_t *top = intel_units_busiest(&c->units);
    c->busiest = top ? top->pct : NAN;
    c->latency = analysis_has(c->busiest) && c->busiest < INTEL_BUSY_PCT;
    c->bound = top && !c->latency ? top->key : NULL;
}

/* A stall reason's share of the kernel's time: XVE stalled x its share of the
 * reported reasons (whatever VTune's base for them, their ratio holds), else
 * the reason's own percentage. */
static double s_stall_time(const ctx_t *c, double reason)
{
    if (!analysis_has(reason))
        return NAN;
    reason = fmax(reason, 0); /* a report's numbers are untrusted */
    double sum = 0;
    for (size_t i = 0; i < STALL_COUNT; i++)
        sum += fmax(s_or0(V(c, s_stalls[i].metric)), 0);
    double stalled = V(c, VT_XVE_STALLED);
    if (analysis_has(stalled) && sum > 0)
        return fmin(fmax(stalled, 0), 100) / 100 * fmin(reason / sum, 1);
    return fmin(reason, 100) / 100;
}

/* The part of a stall's time the bound does not already cover: all of it in
 * a latency-bound kernel, else the busiest unit's idle share of it. */
static double s_uncovered(const ctx_t *c, double time)
{
    if (!analysis_has(time))
        return NAN;
    return c->latency || !analysis_has(c->busiest) ? time : time * (1 - c->busiest / 100);
}

/* The time no pipe issues and more threads could fill: idle, plus stalled
 * time on latency (Send, SBID, Dist/Acc: not barriers or instruction fetch). */
static double s_waiting(const ctx_t *c)
{
    double stalled = V(c, VT_XVE_STALLED), idle = V(c, VT_XVE_IDLE), active = V(c, VT_XVE_ACTIVE);
    if (analysis_has(stalled)) {
        double lat = fmax(s_or0(V(c, VT_STALL_SEND)), 0) + fmax(s_or0(V(c, VT_STALL_SBID)), 0) +
                     fmax(s_or0(V(c, VT_STALL_DIST_ACC)), 0);
        double all = lat + fmax(s_or0(V(c, VT_STALL_BARRIER)), 0) + fmax(s_or0(V(c, VT_STALL_INSTR_FETCH)), 0);
        double share = all > 0 ? lat / all : 1;
        return fmin(fmax(stalled * share + fmax(s_or0(idle), 0), 0) / 100, 1);
    }
    return analysis_has(active) ? 1 - fmin(fmax(active, 0), 100) / 100 : NAN;
}

static void s_claims(ctx_t *c, double gain)
{
    if (c->latency && analysis_has(gain) && gain >= INTEL_GAIN_EXPLAINS)
        c->explained = true;
}

/* ----- the bound ------------------------------------------------------------ */

static void s_bound_pipe(ctx_t *c, vtune_metric_t pipe)
{
    const char *category, *action;
    char title[300];
    double x = V(c, pipe);
    if (pipe == VT_XMX_ACTIVE) {
        category = "compute_xmx";
        snprintf(title, sizeof title, "XMX-bound: the matrix engines are active %.0f%% of the time, the "
                 "busiest unit", x);
        action = "Keep the XMX engines fed and doing less: use the lowest precision the accuracy "
                 "allows (bf16/fp16, int8), use the largest joint_matrix tile shapes the device "
                 "supports, load the next tiles into registers or SLM while the current ones "
                 "multiply, and move conversions and epilogues out of the inner loop.";
    } else if (pipe == VT_ALU0_ACTIVE) {
        category = "compute_alu0";
        snprintf(title, sizeof title,
                 "ALU0-bound: the FP32/FP16 vector pipe is active %.0f%% of the time, the busiest unit", x);
        action = "Cut the floating-point vector work: move matrix-shaped math to XMX (joint_matrix), "
                 "use packed fp16/bf16 where accuracy allows, fuse multiply-adds (fma/mad), and hoist "
                 "loop-invariant math out of the inner loop.";
    } else {
        category = "compute_alu1";
        snprintf(title, sizeof title, "ALU1-bound: the integer/FP64/extended-math pipe is active %.0f%% of "
                 "the time, the busiest unit", x);
        action = "Cut ALU1 work: strength-reduce index arithmetic (precompute offsets, replace / and "
                 "% by shifts and masks for powers of two), use sycl::native math functions where "
                 "precision allows, and avoid FP64 and 64-bit integer math in the inner loop.";
    }
    fb_finding_t *f = s_finding(c, category, 1 - fmin(x, 100) / 100, "headroom", title, action);
    if (!f)
        return;
    s_ev_pipes(f, c, pipe);
    s_ev_mix(f, c);
    s_ev_xve(f, c, VT_XVE_ACTIVE);
    s_ev_stalls(f, c);
    s_ev_memory(f, c);
    intel_units_evidence(f, &c->units);
}

/* GPU memory or L3 at its roof: the Send stalls are the bound showing
 * through. memory_bandwidth is KernelFoundry's name for it, in its table but
 * never produced by its rules. */
static void s_bound_memory(ctx_t *c, const intel_unit_t *unit)
{
    char title[300];
    fb_finding_t *f;
    if (strcmp(unit->key, "memory") == 0) {
        snprintf(title, sizeof title, "Memory-bandwidth bound: GPU memory moves %.0f GB/s, %.0f%% of the "
                 "%s's %.0f GB/s peak, the busiest unit",
                 fmax(s_or0(V(c, VT_MEM_BW_READ)), 0) + fmax(s_or0(V(c, VT_MEM_BW_WRITE)), 0), unit->pct,
                 c->roof->name, c->roof->dram_gbps);
        f = s_finding(c, "memory_bandwidth", 1 - unit->pct / 100, "headroom", title,
                      "Move fewer bytes: keep data that is reused in SLM or registers, fuse with the "
                      "kernels that produce or consume it, use narrower types (bf16/fp16, int8), and "
                      "read whole cache lines (contiguous addresses per sub-group).");
    } else {
        snprintf(title, sizeof title, "L3-bound: the GPU L3 is busy %.0f%% of the time, the busiest unit",
                 unit->pct);
        f = s_finding(c, "l3_bound", 1 - unit->pct / 100, "headroom", title,
                      "Reuse data closer to the XVEs: stage tiles in SLM or registers instead of "
                      "re-reading them through L3, and read contiguous, whole cache lines.");
    }
    if (!f)
        return;
    s_ev_stalls(f, c);
    s_ev_xve(f, c, VT_XVE_STALLED);
    s_ev_memory(f, c);
    s_ev_l3(f, c);
    intel_units_evidence(f, &c->units);
}

/* Which rule inputs are missing, as one phrase for the balanced title. */
static void s_unjudged(const ctx_t *c, char *out, size_t cap)
{
    const char *parts[3];
    size_t n = 0;
    if (!analysis_has(V(c, VT_STALL_SEND)))
        parts[n++] = "stall reasons (memory latency)";
    if (!analysis_has(V(c, VT_XMX_ACTIVE)))
        parts[n++] = "XMX activity";
    if (!analysis_has(V(c, VT_ALU0_ACTIVE)) || !analysis_has(V(c, VT_ALU1_ACTIVE)))
        parts[n++] = "ALU0/ALU1 activity";
    out[0] = '\0';
    if (n == 0)
        return;
    snprintf(out, cap, "; not reported, so not ruled out: %s%s%s%s%s", parts[0],
             n > 1 ? ", " : "", n > 1 ? parts[1] : "", n > 2 ? ", " : "", n > 2 ? parts[2] : "");
}

/* Latency-bound with no cause that accounts for it. Gain: the time the XVEs
 * do not execute (100 - active), the most more parallel or independent work
 * could fill; the idle pipes stand in for it. */
static void s_bound_balanced(ctx_t *c)
{
    double a = V(c, VT_XVE_ACTIVE), s = V(c, VT_XVE_STALLED), i = V(c, VT_XVE_IDLE);
    double busiest = fmax(fmax(s_or0(V(c, VT_ALU0_ACTIVE)), s_or0(V(c, VT_ALU1_ACTIVE))),
                          s_or0(V(c, VT_XMX_ACTIVE)));
    char unjudged[160];
    s_unjudged(c, unjudged, sizeof unjudged);
    char title[400];
    snprintf(title, sizeof title,
             "Balanced: no unit reaches %.0f%% of its peak (busiest pipe %.0f%%) and no single cause "
             "accounts for the waiting%s", INTEL_BUSY_PCT, busiest, unjudged);
    const char *action;
    if (analysis_has(i) && (!analysis_has(s) || i >= s) && (!analysis_has(a) || i >= a))
        action = "The XVEs are mostly idle: give the GPU more parallel work per launch (a global "
                 "range of many work-groups per Xe-core, larger batches) and fuse short kernels so "
                 "launch gaps stop dominating.";
    else if (analysis_has(s) && (!analysis_has(a) || s >= a))
        action = "The XVEs stall with no single dominant reason: give each work-item more "
                 "independent work (several outputs per work-item, unrolled loops) so memory and "
                 "math overlap, and check the stall reasons in the evidence.";
    else
        action = "The XVEs are busy across several pipes: reduce the work itself (fewer "
                 "instructions per element, fp16/bf16 where accuracy allows, native math, fused "
                 "passes over the data).";
    bool pipes = analysis_has(V(c, VT_ALU0_ACTIVE)) || analysis_has(V(c, VT_ALU1_ACTIVE)) || analysis_has(V(c, VT_XMX_ACTIVE));
    double gain = analysis_has(a) ? 1 - fmin(fmax(a, 0), 100) / 100 : pipes ? 1 - busiest / 100 : HEADROOM_UNKNOWN;
    fb_finding_t *f = s_finding(c, "balanced", gain, "latency", title, action);
    if (!f)
        return;
    s_ev_xve(f, c, VT_XVE_ACTIVE);
    s_ev_pipes(f, c, VT_ALU0_ACTIVE);
    s_ev_stalls(f, c);
    s_ev_memory(f, c);
    s_ev_l3(f, c);
    s_ev_mix(f, c);
    intel_units_evidence(f, &c->units);
}

static void s_bound(ctx_t *c)
{
    const intel_unit_t *top = intel_units_busiest(&c->units);
    if (!top) {
        if (!analysis_has(V(c, VT_STALL_SEND)))
            return; /* nothing to classify with: saying "balanced" would be a guess */
        if (!c->explained)
            s_bound_balanced(c);
        return;
    }
    if (c->latency) {
        if (!c->explained)
            s_bound_balanced(c);
    } else if (top->kind == INTEL_UNIT_MEMORY) {
        s_bound_memory(c, top);
    } else {
        s_bound_pipe(c, strcmp(top->key, "xmx") == 0 ? VT_XMX_ACTIVE
                        : strcmp(top->key, "alu0") == 0 ? VT_ALU0_ACTIVE : VT_ALU1_ACTIVE);
    }
}

/* ----- causes ----------------------------------------------------------------- */

/* KernelFoundry's memory_latency rule (Send > 5% while the XVEs stall, Send
 * >= SBID and Dist/Acc): the XVEs wait on memory messages. Gain: the Send
 * stalls' share of the time, less what the bound covers. On a memory- or
 * L3-bound kernel the Send stalls are the bound showing through: evidence
 * there, not a cause. */
static void s_memory_latency(ctx_t *c)
{
    double send = V(c, VT_STALL_SEND), stalled = V(c, VT_XVE_STALLED);
    double sbid = V(c, VT_STALL_SBID), dist = V(c, VT_STALL_DIST_ACC);
    if (!analysis_has(send) || send <= KF_SEND_STALL_MIN || (analysis_has(stalled) && stalled <= 0) ||
        send < fmax(s_or0(sbid), s_or0(dist)))
        return;
    if (c->bound && (strcmp(c->bound, "memory") == 0 || strcmp(c->bound, "l3") == 0))
        return;
    double gain = s_uncovered(c, s_stall_time(c, send));
    char title[300];
    if (analysis_has(stalled))
        snprintf(title, sizeof title,
                 "Memory-latency bound: the XVEs are stalled %.0f%% of the time and Send (waiting "
                 "on memory messages) is the top stall reason at %.1f%%", stalled, send);
    else
        snprintf(title, sizeof title,
                 "Memory-latency bound: Send (waiting on memory messages) is the top XVE stall "
                 "reason at %.1f%%", send);
    fb_finding_t *f = s_finding(
        c, "memory_latency", gain, "send_stalls", title,
        "Hide memory latency: issue several independent loads per work-item before using any "
        "(unroll, prefetch the next tile into registers), keep data that is reused in shared local "
        "memory, and make each sub-group read contiguous addresses so every send moves whole cache "
        "lines.");
    if (!f)
        return;
    s_ev_stalls(f, c);
    s_ev_xve(f, c, VT_XVE_STALLED);
    s_ev_memory(f, c);
    s_ev_l3(f, c);
    s_ev_pct(f, c, analysis_has(V(c, VT_OCCUPANCY)) ? VT_OCCUPANCY : VT_PEAK_OCCUPANCY,
             analysis_has(V(c, VT_OCCUPANCY)) ? "XVE thread occupancy" : "peak XVE thread occupancy");
    if (!analysis_has(V(c, VT_MEM_BW_READ)) && !analysis_has(V(c, VT_MEM_BW_WRITE)))
        s_missing(c, s_missing_memory);
    s_claims(c, gain);
}


static void s_occupancy(ctx_t *c)
{
    double avg = V(c, VT_OCCUPANCY), peak = V(c, VT_PEAK_OCCUPANCY);
    if (!analysis_has(avg) && !analysis_has(peak)) {
        s_missing(c, s_missing_occupancy);
        return;
    }
    /* KernelFoundry: the average when reported, else the peak. VTune cannot
     * report both in one pass, so usually only one is there. */
    bool use_avg = analysis_has(avg);
    double occ = use_avg ? avg : peak;
    if (occ >= KF_OCCUPANCY_LOW)
        return;
    /* The peak's sub-columns say what caps it (100% = not a limit). */
    static const struct {
        vtune_metric_t metric;
        const char *what;
        const char *action;
    } limits[] = {
        {VT_OCC_LIMIT_WORK_SIZE, "the work-group size",
         "Launch larger work-groups (a local range of 256-1024 work-items where the algorithm "
         "allows) and a global range of many work-groups, so every XVE thread slot gets work."},
        {VT_OCC_LIMIT_SLM, "shared local memory per work-group",
         "Use less shared local memory per work-group (smaller or reused tiles) so more "
         "work-groups fit on an Xe-core at once."},
        {VT_OCC_LIMIT_BARRIERS, "barriers per Xe-core",
         "Each work-group with a barrier takes one of the Xe-core's barrier slots: use fewer, "
         "larger work-groups, or drop barriers that sub-group operations can replace."},
    };
    int limiter = -1;
    for (int i = 0; i < 3; i++) {
        double x = V(c, limits[i].metric);
        if (analysis_has(x) && x < 100 && (limiter < 0 || x < V(c, limits[limiter].metric)))
            limiter = i;
    }
    char title[300];
    if (limiter >= 0 && use_avg)
        snprintf(title, sizeof title, "XVE thread occupancy is %.0f%% on average; %s caps the peak "
                 "at %.0f%%", occ, limits[limiter].what, V(c, limits[limiter].metric));
    else if (limiter >= 0)
        snprintf(title, sizeof title, "Peak XVE thread occupancy is only %.0f%%; %s caps it at "
                 "%.0f%%", occ, limits[limiter].what, V(c, limits[limiter].metric));
    else if (use_avg)
        snprintf(title, sizeof title, "Low XVE thread occupancy: %.0f%% of the thread slots in use "
                 "on average", occ);
    else
        snprintf(title, sizeof title, "Low peak XVE thread occupancy: %.0f%% of the thread slots "
                 "at best", occ);
    const char *action = limiter >= 0
        ? limits[limiter].action
        : "Raise occupancy: larger work-groups and more of them, less shared local memory per "
          "work-group, and fewer registers per thread (the large-GRF mode halves the threads per "
          "XVE; use it only when it removes spills).";
    /* More threads help until a unit reaches the 80% roof: speedup =
     * min(possible / achieved occupancy, 80 / busiest), where possible is the
     * peak (its limiters cap it) or 100%; gain = (1 - 1/speedup) x the time
     * more threads could fill (s_waiting). */
    double possible = use_avg && analysis_has(peak) && peak > occ ? peak : 100;
    double speedup = occ > 0 ? possible / occ : 10;
    if (analysis_has(c->busiest) && c->busiest > 0)
        speedup = fmin(speedup, INTEL_ROOF_PCT / c->busiest);
    double waiting = s_waiting(c);
    double gain = speedup > 1 ? (1 - 1 / speedup) * waiting : 0;
    fb_finding_t *f = s_finding(c, "occupancy", gain, "threads_in_flight", title, action);
    s_claims(c, gain);
    if (!f)
        return;
    s_ev_pct(f, c, VT_OCCUPANCY, "average XVE thread occupancy");
    s_ev_pct(f, c, VT_PEAK_OCCUPANCY, "peak XVE thread occupancy");
    if (limiter >= 0)
        finding_add_evidence(f, vtune_metric_column(limits[limiter].metric),
                             V(c, limits[limiter].metric), "%", "limit from %s: %.0f%%",
                             limits[limiter].what, V(c, limits[limiter].metric));
    if (c->k->work_local[0])
        finding_add_evidence(f, "Work Size:Local", NAN, "", "work-group size %s (global %s)",
                             c->k->work_local, c->k->work_global[0] ? c->k->work_global : "?");
    s_ev_xve(f, c, VT_XVE_IDLE);
}

static void s_dependency(ctx_t *c)
{
    double sbid = V(c, VT_STALL_SBID), dist = V(c, VT_STALL_DIST_ACC);
    if (!(analysis_has(sbid) && sbid > KF_DEPENDENCY_STALL) && !(analysis_has(dist) && dist > KF_DEPENDENCY_STALL))
        return;
    char title[300];
    snprintf(title, sizeof title,
             "Dependency stalls: SBID %.1f%% (waiting on the result of a send or math "
             "instruction), Dist/Acc %.1f%% (register dependencies in the pipeline)",
             s_or0(sbid), s_or0(dist));
    /* Gain: their share of the time, less what the bound covers. */
    double gain = s_uncovered(c, s_stall_time(c, s_or0(sbid) + s_or0(dist)));
    s_claims(c, gain);
    fb_finding_t *f = s_finding(
        c, "dependency_stalls", gain, "stall_time", title,
        "Break dependency chains: accumulate into several independent registers (unroll with "
        "separate partial sums), and issue loads a few iterations before their results are used "
        "so other instructions run in between.");
    if (!f)
        return;
    s_ev_pct(f, c, VT_STALL_SBID, "SBID stalls");
    s_ev_pct(f, c, VT_STALL_DIST_ACC, "Dist/Acc stalls");
    s_ev_xve(f, c, VT_XVE_STALLED);
}

static void s_barrier(ctx_t *c)
{
    double barrier = V(c, VT_STALL_BARRIER);
    if (!analysis_has(barrier) || barrier <= KF_BARRIER_STALL)
        return;
    char title[200];
    snprintf(title, sizeof title,
             "Barrier stalls: %.1f%%: work-items wait at work-group barriers", barrier);
    double gain = s_uncovered(c, s_stall_time(c, barrier));
    s_claims(c, gain);
    fb_finding_t *f = s_finding(
        c, "barrier_stalls", gain, "stall_time", title,
        "Wait at fewer barriers: exchange data inside a sub-group with shuffles and group "
        "reductions instead of SLM plus a barrier, double-buffer SLM tiles so one barrier per tile "
        "suffices, and give every work-item the same amount of work between barriers.");
    if (!f)
        return;
    s_ev_pct(f, c, VT_STALL_BARRIER, "Barrier stalls");
    s_ev_xve(f, c, VT_XVE_STALLED);
}

static void s_l3(ctx_t *c)
{
    double miss = V(c, VT_L3_MISS);
    if (!analysis_has(miss)) {
        s_missing(c, s_missing_l3);
        return;
    }
    if (miss <= KF_L3_MISS_HIGH)
        return;
    char title[200];
    snprintf(title, sizeof title,
             "L3 thrashing: %.0f%% of L3 requests miss and go to GPU memory", miss);
    /* How much DRAM traffic better reuse removes is not measured: no gain. */
    fb_finding_t *f = s_finding(
        c, "l3_thrashing", NAN, "none", title,
        "Reuse data while it is cached: tile or block the loops so a work-group's working set fits "
        "in L3, order work-groups so neighbours share data, and stop streaming through arrays "
        "larger than the cache more than once.");
    if (!f)
        return;
    s_ev_l3(f, c);
    s_ev_memory(f, c);
}

static void s_xmx_unused(ctx_t *c)
{
    double xmx = V(c, VT_XMX_ACTIVE), alu0 = V(c, VT_ALU0_ACTIVE);
    if (!analysis_has(xmx) || !analysis_has(alu0) || xmx >= KF_XMX_UNUSED || alu0 <= KF_ALU0_BUSY)
        return;
    char title[300];
    snprintf(title, sizeof title,
             "XMX unused: the matrix engines are %.1f%% active while ALU0 is %.0f%% busy; "
             "if the math is matrix-shaped (the counters cannot tell), the fastest units sit idle", xmx,
             alu0);
    /* Whether the math is matrix-shaped the counters cannot tell: no gain. */
    fb_finding_t *f = s_finding(
        c, "xmx_unused", NAN, "none", title,
        "If the inner loop is a matrix product (GEMM, convolution, attention), run it on the XMX "
        "engines with SYCL joint_matrix (sycl::ext::oneapi::experimental::matrix) in bf16/fp16 or "
        "int8, or call oneMKL/oneDNN: XMX offers up to ~8x ALU0's throughput (KernelFoundry's "
        "estimate).");
    if (!f)
        return;
    s_ev_pipes(f, c, VT_XMX_ACTIVE);
    s_ev_mix(f, c);
}

static void s_spills(ctx_t *c)
{
    double spill = V(c, VT_SPILL_SIZE);
    if (!analysis_has(spill) || spill <= 0)
        return;
    char title[200];
    snprintf(title, sizeof title, "Register spills: %.0f bytes of spill memory", spill);
    /* A spill size without its traffic cannot be sized: no gain. */
    fb_finding_t *f = s_finding(
        c, "register_spill", NAN, "none", title,
        "Cut register pressure: fewer live values per work-item (smaller per-thread tiles, "
        "recompute cheap values), or compile the kernel in the large GRF mode (more registers per "
        "thread) if the occupancy it costs is less than the spills do.");
    if (f)
        finding_add_evidence(f, vtune_metric_column(VT_SPILL_SIZE), spill, "byte",
                             "Computing Task:Spill Memory Size %.0f bytes", spill);
}

/* ----- putting a kernel together ------------------------------------------ */

static void s_kernel_metrics(ctx_t *c)
{
    static const vtune_metric_t keys[] = {
        VT_TOTAL_TIME,     VT_AVERAGE_TIME,   VT_INSTANCE_COUNT,    VT_SIMD_WIDTH,
        VT_XVE_ACTIVE,     VT_XVE_STALLED,    VT_XVE_IDLE,          VT_OCCUPANCY,
        VT_PEAK_OCCUPANCY, VT_STALL_SEND,     VT_STALL_SBID,        VT_STALL_DIST_ACC,
        VT_STALL_BARRIER,  VT_STALL_INSTR_FETCH, VT_ALU0_ACTIVE,    VT_ALU1_ACTIVE,
        VT_XMX_ACTIVE,     VT_L3_MISS,        VT_L3_BW_READ,        VT_L3_BW_WRITE,
        VT_MEM_BW_READ,    VT_MEM_BW_WRITE,   VT_SPILL_SIZE,
    };
    _Static_assert(sizeof keys / sizeof keys[0] <= FB_KERNEL_METRICS, "fits fb_kernel_t");
    fb_kernel_t *kernel = feedback_kernel(c->fb, c->index);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (analysis_has(V(c, keys[i])))
            feedback_kernel_metric(kernel, vtune_metric_column(keys[i]), V(c, keys[i]));
}

/* Top-down: measure the units, run every cause model, add the bound (or, in
 * a latency-bound kernel no cause accounts for, balanced), and mark the
 * finding with the largest gain. */
static void s_analyze_kernel(ctx_t *c)
{
    size_t first = feedback_finding_count(c->fb);
    s_kernel_metrics(c);
    s_units(c);
    if (!analysis_has(V(c, VT_STALL_SEND)))
        s_missing(c, s_missing_stalls);
    if (!analysis_has(V(c, VT_XVE_STALLED)) && !analysis_has(V(c, VT_XVE_ACTIVE)))
        s_missing(c, s_missing_xve);
    if (!analysis_has(V(c, VT_XMX_ACTIVE)) || !analysis_has(V(c, VT_ALU0_ACTIVE)) || !analysis_has(V(c, VT_ALU1_ACTIVE)))
        s_missing(c, s_missing_pipes);
    s_memory_latency(c);
    s_occupancy(c);
    s_dependency(c);
    s_barrier(c);
    s_l3(c);
    s_xmx_unused(c);
    s_spills(c);
    s_bound(c);
    intel_mark_primary(c->fb, c->index, first);
    intel_set_ceiling(c->fb, c->index, &c->units);
}

/* One noisy reading of the kernel (vtune_noise.h), analyzed into `scratch`
 * for its close call (close_call.h). */
static void s_reanalyze(void *arg, unsigned reading, double sigma, feedback_t *scratch, size_t index)
{
    const ctx_t *c = arg;
    vtune_kernel_t noisy;
    vtune_noise_apply(c->k, reading, sigma, &noisy);
    ctx_t t = {.k = &noisy, .index = index, .fb = scratch, .roof = c->roof};
    s_analyze_kernel(&t);
}

/* Parses a work size ("128 x 8", "1024") into up to three extents; returns
 * how many, 0 when it is not one. */
static int s_extents(const char *text, unsigned long long out[3])
{
    int n = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9' || n == 3)
            return 0;
        char *end = NULL;
        errno = 0;
        out[n++] = strtoull(p, &end, 10);
        if (errno == ERANGE)
            return 0;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == 'x' || *p == 'X')
            p++;
        else if (*p)
            return 0;
    }
    return n;
}

/* The launch shape in the NCU analyzer's notation: block = the work-group
 * (Work Size:Local), grid = work-groups per dimension (Global / Local). */
static void s_shape(const vtune_kernel_t *k, char *block, char *grid, size_t cap)
{
    unsigned long long g[3], l[3];
    int ng = s_extents(k->work_global, g), nl = s_extents(k->work_local, l);
    block[0] = grid[0] = '\0';
    if (nl > 0)
        snprintf(block, cap, nl == 1 ? "(%llu)" : nl == 2 ? "(%llu, %llu)" : "(%llu, %llu, %llu)",
                 l[0], nl > 1 ? l[1] : 0, nl > 2 ? l[2] : 0);
    if (ng == 0 || ng != nl)
        return;
    for (int i = 0; i < ng; i++)
        if (l[i] == 0 || g[i] % l[i] != 0)
            return;
    snprintf(grid, cap, ng == 1 ? "(%llu)" : ng == 2 ? "(%llu, %llu)" : "(%llu, %llu, %llu)",
             g[0] / l[0], ng > 1 ? g[1] / l[1] : 0, ng > 2 ? g[2] / l[2] : 0);
}

typedef struct {
    size_t index;
    double time;
} order_t;

/* Longest first; kernels without a time keep report order, after the rest. */
static int s_order_cmp(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (analysis_has(x->time) != analysis_has(y->time))
        return analysis_has(x->time) ? -1 : 1;
    if (analysis_has(x->time) && x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Launches of a kernel: VTune's Instance Count, else at least one per
 * variant (rows of other tables are the same launches reported again). */
static size_t s_launches(const vtune_kernel_t *k)
{
    double n = k->v[VT_INSTANCE_COUNT];
    if (analysis_has(n) && n >= 0 && n < 1e15)
        return (size_t) n;
    return k->variants;
}

/* "SIMD 16 and 32" from the widths seen. */
static void s_simd_list(uint32_t widths, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    int seen = 0;
    for (unsigned b = 0; b < 32 && used < cap; b++) {
        if (!(widths & (1u << b)))
            continue;
        int w = snprintf(out + used, cap - used, "%s%u", seen ? "/" : "SIMD ", 1u << b);
        if (w < 0)
            break;
        used += (size_t) w;
        seen++;
    }
}

static void s_notes(const vtune_report_t *report, feedback_t *fb)
{
    for (size_t i = 0; i < vtune_report_error_count(report); i++)
        feedback_add_error(fb, "vtune: %s", vtune_report_error(report, i));
    for (size_t i = 0; i < vtune_report_note_count(report); i++)
        feedback_add_note(fb, "%s", vtune_report_note(report, i));
}

/* Says which runtime entries were left out and how much time they took:
 * memory copies that take a third of the GPU time are news to an agent. */
static void s_overhead_note(const vtune_report_t *report, feedback_t *fb, double total_s,
                            bool fallback)
{
    size_t n = 0;
    double time = 0;
    char names[300];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < vtune_report_kernel_count(report); i++) {
        const vtune_kernel_t *k = vtune_report_kernel(report, i);
        if (!k->overhead)
            continue;
        n++;
        time += s_or0(k->v[VT_TOTAL_TIME]);
        if (n <= 3 && used < sizeof names) {
            int w = snprintf(names + used, sizeof names - used, "%s%.60s%s", n > 1 ? ", " : "",
                             k->name, strlen(k->name) > 60 ? "..." : "");
            if (w > 0)
                used += (size_t) w;
        }
    }
    if (n == 0)
        return;
    char share[64] = "";
    if (analysis_has(total_s) && total_s > 0)
        snprintf(share, sizeof share, ", %.1f%% of GPU time", 100 * time / total_s);
    if (fallback)
        feedback_add_note(fb, "only runtime entries KernelFoundry counts as overhead were profiled "
                              "(%s%s%s); the longest is analyzed, as KernelFoundry does", names,
                          n > 3 ? ", ..." : "", share);
    else
        feedback_add_note(fb, "%zu runtime entr%s not analyzed as kernels (%s%s%s)", n,
                          n == 1 ? "y" : "ies", names, n > 3 ? ", ..." : "", share);
}

feedback_t *vtune_analyze(const vtune_report_t *report, const analysis_options_t *options,
                          const char *device)
{
    assert(report && options);
    feedback_t *fb = feedback_new("vtune");
    if (!fb)
        return NULL;
    feedback_set_device(fb, device);
    s_notes(report, fb);
    const roof_t *roof = device ? roofs_lookup_worker(device, NULL, NULL) : NULL;

    size_t count = vtune_report_kernel_count(report);
    order_t *order = count ? malloc(count * sizeof *order) : NULL;
    if (count && !order) {
        feedback_destroy(&fb);
        return NULL;
    }
    /* Candidates: every kernel that is not runtime overhead; when there is
     * none, the longest overhead entry (KernelFoundry's fallback). */
    size_t candidates = 0, launches = 0, user = 0;
    double total = NAN;
    for (size_t i = 0; i < count; i++) {
        const vtune_kernel_t *k = vtune_report_kernel(report, i);
        launches += s_launches(k);
        if (analysis_has(k->v[VT_TOTAL_TIME]))
            total = s_or0(total) + k->v[VT_TOTAL_TIME];
        if (!k->overhead)
            user++;
    }
    for (size_t i = 0; i < count; i++) {
        const vtune_kernel_t *k = vtune_report_kernel(report, i);
        if (user == 0 || !k->overhead)
            order[candidates++] = (order_t){i, k->v[VT_TOTAL_TIME]};
    }
    if (candidates > 1)
        qsort(order, candidates, sizeof *order, s_order_cmp);
    bool fallback = user == 0 && candidates > 0;
    if (fallback)
        candidates = 1;
    feedback_set_totals(fb, count, launches, analysis_has(total) ? total * 1e9 : NAN);
    s_overhead_note(report, fb, total, fallback);

    if (vtune_report_error_count(report) > 0)
        feedback_set_status(fb, FB_PROFILER_ERROR);
    else if (candidates == 0)
        feedback_set_status(fb, FB_NO_KERNELS);
    else
        feedback_set_status(fb, FB_OK);
    if (candidates > 0 && !analysis_has(total)) {
        feedback_add_missing(fb, s_missing_time);
        feedback_add_note(fb, "no Computing Task:Total Time in the report: kernels are listed in "
                              "report order, not by their share of time");
    }

    size_t analyzed = 0, skipped = 0;
    double skipped_time = 0;
    for (size_t o = 0; o < candidates; o++) {
        const vtune_kernel_t *k = vtune_report_kernel(report, order[o].index);
        double t = k->v[VT_TOTAL_TIME];
        double share = analysis_has(total) && total > 0 && analysis_has(t) ? t / total : NAN;
        bool wanted = (analyzed == 0 && !options->min_share_strict) || !analysis_has(share) || share >= options->min_share;
        if (options->top > 0 && analyzed >= options->top)
            wanted = false;
        if (!wanted) {
            skipped++;
            skipped_time += s_or0(t);
            continue;
        }
        char block[32], grid[32];
        s_shape(k, block, grid, sizeof block);
        size_t index = feedback_add_kernel(fb, k->name, block, grid, s_launches(k),
                                           analysis_has(t) ? t * 1e9 : NAN, share);
        if (index == (size_t) -1)
            break;
        ctx_t c = {.k = k, .index = index, .fb = fb, .roof = roof};
        size_t first = feedback_finding_count(fb);
        s_analyze_kernel(&c);
        close_call_judge(fb, index, first, s_reanalyze, &c);
        analyzed++;
        if (k->variants > 1) {
            char simd[64];
            s_simd_list(k->simd_widths, simd, sizeof simd);
            feedback_add_note(fb, "\"%.80s%s\": %zu rows merged%s%s%s: Total Time and Instance "
                                  "Count are their sums, the other columns come from the "
                                  "longest-running variant", k->name,
                              strlen(k->name) > 80 ? "..." : "", k->variants,
                              simd[0] ? " (" : "", simd, simd[0] ? " variants)" : "");
        }
    }
    if (skipped > 0) {
        if (analysis_has(total) && total > 0)
            feedback_add_note(fb, "%zu more kernel%s (%.1f%% of GPU time) below the %.0f%% "
                                  "threshold%s were not analyzed", skipped, skipped == 1 ? "" : "s",
                              100 * skipped_time / total, 100 * options->min_share,
                              options->top ? " or past --top" : "");
        else
            feedback_add_note(fb, "%zu more kernel%s were not analyzed (--top)", skipped,
                              skipped == 1 ? "" : "s");
    }
    free(order);
    feedback_sort(fb);
    return fb;
}

json_t *vtune_analyze_collated(const vtune_report_t *report)
{
    json_t *root = json_object(), *kernels = json_array();
    if (!root || !kernels || json_object_set_new(root, "kernels", kernels) != 0) {
        json_decref(root);
        json_decref(kernels);
        return NULL;
    }
    for (size_t i = 0; i < vtune_report_kernel_count(report); i++) {
        const vtune_kernel_t *k = vtune_report_kernel(report, i);
        json_t *kernel = json_object(), *columns = json_object();
        if (!kernel || !columns || json_array_append_new(kernels, kernel) != 0) {
            json_decref(columns);
            json_decref(root);
            return NULL;
        }
        json_object_set_new(kernel, "name", analysis_json_text(k->name));
        json_object_set_new(kernel, "overhead", json_boolean(k->overhead));
        json_object_set_new(kernel, "rows", json_integer((json_int_t) k->rows));
        json_object_set_new(kernel, "work_size_global", analysis_json_text(k->work_global));
        json_object_set_new(kernel, "work_size_local", analysis_json_text(k->work_local));
        for (int m = 0; m < VT__COUNT; m++)
            if (analysis_has(k->v[m]))
                json_object_set_new(columns, vtune_metric_column((vtune_metric_t) m),
                                    json_real(k->v[m]));
        json_object_set_new(kernel, "columns", columns);
    }
    return root;
}
