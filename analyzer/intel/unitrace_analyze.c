#include "unitrace_analyze.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofs.h"
#include "unitrace_table.h"
#include "unitrace_timeline.h"

#define MAX_PASSES 64
#define MAX_NOTES 32

/* Utilization thresholds, the same scale as the Nsight Compute analysis
 * (docs/ncu.md): 60% of a roof makes that unit the limiter. */
#define LIMIT_PCT 60.0
/* XVE_STALL: threads loaded but no pipe issuing; at 40% of the time with no
 * unit near its roof, the vector engines mostly wait (memory latency). */
#define STALL_PCT 40.0
/* Thread occupancy under half of the slots limits latency hiding. */
#define OCCUPANCY_PCT 50.0
/* Bank conflicts as the primary cause: a quarter of SLM accesses conflict;
 * as a secondary finding: 5%. */
#define CONFLICT_PRIMARY 0.25
#define CONFLICT_SECONDARY 0.05
/* KernelFoundry's roofline band: within 10% of a ridge point is balanced. */
#define RIDGE_BAND 0.9

typedef enum { G_CB, G_MP, G_VEP, G__COUNT } group_t;
static const char *const s_group_names[G__COUNT] = {"ComputeBasic", "MemoryProfile",
                                                   "VectorEngineProfile"};

typedef struct {
    char *key;
    unitrace_table_t *table;
    unitrace_timeline_t *timeline;
    int group; /* group_t, or -1 when not recognised */
} ut_pass_t;

struct unitrace_job_t {
    ut_pass_t passes[MAX_PASSES];
    size_t count;
    char *notes[MAX_NOTES];
    size_t note_count;
};

static void s_note(unitrace_job_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void s_note(unitrace_job_t *self, const char *fmt, ...)
{
    if (self->note_count >= MAX_NOTES)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *copy = strdup(text);
    if (copy)
        self->notes[self->note_count++] = copy;
}

unitrace_job_t *unitrace_job_new(void) { return calloc(1, sizeof(unitrace_job_t)); }

void unitrace_job_destroy(unitrace_job_t **self_p)
{
    assert(self_p);
    unitrace_job_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++) {
        free(self->passes[i].key);
        unitrace_table_destroy(&self->passes[i].table);
        unitrace_timeline_destroy(&self->passes[i].timeline);
    }
    for (size_t i = 0; i < self->note_count; i++)
        free(self->notes[i]);
    free(self);
    *self_p = NULL;
}

/* Files of one run share a process id: trace.metrics.<pid> and
 * <app>.<pid>.json. Without a pass key, that pid says which belong together. */
static void s_pass_key(const char *pass_key, const char *name, char *out, size_t cap)
{
    if (pass_key && *pass_key) {
        snprintf(out, cap, "%s", pass_key);
        return;
    }
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *end = base + strlen(base);
    if (end - base > 5 && strcmp(end - 5, ".json") == 0)
        end -= 5;
    const char *start = end;
    while (start > base && isdigit((unsigned char) start[-1]))
        start--;
    if (start < end && start > base && start[-1] == '.')
        snprintf(out, cap, "pid %.*s", (int) (end - start), start);
    else
        snprintf(out, cap, "%s", base);
}

static ut_pass_t *s_pass(unitrace_job_t *self, const char *key)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp(self->passes[i].key, key) == 0)
            return &self->passes[i];
    if (self->count >= MAX_PASSES)
        return NULL;
    ut_pass_t *pass = &self->passes[self->count];
    pass->key = strdup(key);
    if (!pass->key)
        return NULL;
    pass->group = -1;
    self->count++;
    return pass;
}

static bool s_ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* Whether `needle` occurs in the first `len` bytes (which may hold NULs). */
static bool s_has_text(const char *bytes, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (bytes[i] == needle[0] && memcmp(bytes + i, needle, n) == 0)
            return true;
    return false;
}

static int s_group(const unitrace_table_t *t);

size_t unitrace_job_pass_count(const unitrace_job_t *self)
{
    return self->count;
}

pf_status_t unitrace_job_add(unitrace_job_t *self, const char *pass_key, const char *name,
                             const char *bytes, size_t len, pf_error_t *err)
{
    char key[128], source[256];
    s_pass_key(pass_key, name, key, sizeof key);
    snprintf(source, sizeof source, "%s%s%s", pass_key ? "pass " : "", pass_key ? pass_key : "",
             pass_key ? ": " : "");
    snprintf(source + strlen(source), sizeof source - strlen(source), "%s", name);
    size_t k = 0;
    while (k < len && (bytes[k] == ' ' || bytes[k] == '\n' || bytes[k] == '\r' || bytes[k] == '\0'))
        k++;
    bool json = s_ends_with(name, ".json") || (k < len && bytes[k] == '{');
    bool metrics = strstr(name, ".metrics.") || s_ends_with(name, ".metrics") ||
                   s_has_text(bytes, len < 65536 ? len : 65536, "GpuTime[ns]");
    if (!json && !metrics) {
        s_note(self, "%s: neither a metrics table nor a timeline; skipped", source);
        return PF_OK;
    }
    ut_pass_t *pass = s_pass(self, key);
    if (!pass)
        return pf_error_set(err, PF_ETOOBIG, "%s: more than %d unitrace passes", source, MAX_PASSES);
    if (json) {
        if (pass->timeline) {
            s_note(self, "%s: a second timeline for pass %s; the first is used", source, key);
            return PF_OK;
        }
        pass->timeline = unitrace_timeline_parse(source, bytes, len, err);
        return pass->timeline ? PF_OK : (err ? err->code : PF_EBADINPUT);
    }
    if (pass->table) {
        s_note(self, "%s: a second metrics table for pass %s; the first is used", source, key);
        return PF_OK;
    }
    pass->table = unitrace_table_parse(source, bytes, len, err);
    if (!pass->table)
        return err ? err->code : PF_EBADINPUT;
    pass->group = s_group(pass->table);
    return PF_OK;
}

/* ---- columns -------------------------------------------------------------- */

#define C_TIME "GpuTime[ns]"
#define C_ID "GlobalInstanceId"
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
 * seed keys on). */
static int s_group(const unitrace_table_t *t)
{
    if (unitrace_table_has(t, "XVE_INST_EXECUTED_XMX_INT8[events]") ||
        (unitrace_table_has(t, "XVE_INST_EXECUTED_FP32[events]") &&
         unitrace_table_has(t, "XVE_INST_EXECUTED_FP16[events]")))
        return G_VEP;
    if (unitrace_table_has(t, C_SLM_ACC))
        return G_MP;
    if (unitrace_table_has(t, s_alu_events[0][0]) &&
        (unitrace_table_has(t, C_MEM_R) || unitrace_table_has(t, C_STALL)))
        return G_CB;
    return -1;
}

/* ---- a kernel's rows in one pass ----------------------------------------- */

/* A kernel's values in one pass: one representative row (query mode) or the
 * mean over its samples (sampling mode). */
typedef struct {
    const unitrace_table_t *table;
    size_t *rows;
    size_t count;
} view_t;

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
    return n ? sum / (double) n : NAN;
}

static double s_get2(const view_t *v, const char *const names[2])
{
    double x = s_get(v, names[0]);
    return isnan(x) && names[1] ? s_get(v, names[1]) : x;
}

static bool has(double x) { return !isnan(x); }
static double s_or0(double x) { return has(x) ? x : 0; }

/* ---- per-kernel analysis --------------------------------------------------- */

typedef struct {
    feedback_t *fb;
    size_t index;
    const roof_t *roof;
    bool sampling;
    view_t cb, mp, vep;
    double t;           /* ns the counters cover: kernel time, or the sample interval */
    double alu_rate[3]; /* instructions per ns */
    double alu_pct[3];  /* of the roof, or the counter's own utilization */
    double mem_gbps, mem_pct;
    double slm_bpns, slm_pct;
    double conflict_rate;
    double stall, occupancy, active;
} kctx_t;

static fb_finding_t *s_finding(kctx_t *c, const char *category, double importance, const char *title,
                               const char *action)
{
    importance = importance < 0 ? 0 : importance > 100 ? 100 : importance;
    return feedback_add_finding(c->fb, c->index, category, importance, title, action);
}

static void s_measure(kctx_t *c)
{
    c->t = s_get(&c->cb, C_TIME);
    c->stall = s_get(&c->cb, C_STALL);
    c->active = s_get(&c->cb, C_ACTIVE);
    c->occupancy = s_get(&c->vep, C_OCC);
    if (!has(c->occupancy))
        c->occupancy = s_get(&c->cb, C_OCC);
    for (int i = 0; i < 3; i++) {
        double events = s_get2(&c->cb, s_alu_events[i]);
        if (!has(events))
            events = s_get2(&c->vep, s_alu_events[i]);
        c->alu_rate[i] = has(events) && has(c->t) && c->t > 0 ? events / c->t : NAN;
        c->alu_pct[i] = NAN;
        if (c->roof && c->roof->alu_inst_per_ns[i] > 0 && has(c->alu_rate[i]))
            c->alu_pct[i] = 100 * c->alu_rate[i] / c->roof->alu_inst_per_ns[i];
        else
            c->alu_pct[i] = s_get2(&c->cb, s_alu_util[i]);
    }
    double rr = s_get(&c->cb, C_MEM_RR), wr = s_get(&c->cb, C_MEM_WR);
    double rb = s_get(&c->cb, C_MEM_R), wb = s_get(&c->cb, C_MEM_W);
    if (has(rr) || has(wr))
        c->mem_gbps = s_or0(rr) + s_or0(wr);
    else if ((has(rb) || has(wb)) && has(c->t) && c->t > 0)
        c->mem_gbps = (s_or0(rb) + s_or0(wb)) / c->t; /* bytes per ns = GB/s */
    else
        c->mem_gbps = NAN;
    c->mem_pct = c->roof && c->roof->dram_gbps > 0 && has(c->mem_gbps)
                     ? 100 * c->mem_gbps / c->roof->dram_gbps : NAN;
    double sr = s_get(&c->cb, C_SLM_R), sw = s_get(&c->cb, C_SLM_W);
    if (!has(sr) && !has(sw)) {
        sr = s_get(&c->mp, C_SLM_R);
        sw = s_get(&c->mp, C_SLM_W);
    }
    c->slm_bpns = (has(sr) || has(sw)) && has(c->t) && c->t > 0 ? (s_or0(sr) + s_or0(sw)) / c->t : NAN;
    c->slm_pct = c->roof && c->roof->slm_bytes_per_ns > 0 && has(c->slm_bpns)
                     ? 100 * c->slm_bpns / c->roof->slm_bytes_per_ns : NAN;
    double access = s_get(&c->mp, C_SLM_ACC), conflicts = s_get(&c->mp, C_SLM_BC);
    c->conflict_rate = has(access) && access > 0 && has(conflicts) ? conflicts / access : NAN;
}

static void s_pct_evidence(fb_finding_t *f, const char *metric, double pct, const char *what)
{
    if (f && has(pct))
        finding_add_evidence(f, metric, pct, "%", "%s %.1f%%", what, pct);
}

static void s_mix_evidence(kctx_t *c, fb_finding_t *f, int alu)
{
    double all = s_get2(&c->vep, s_alu_events[alu]);
    if (!f || !has(all) || all <= 0)
        return;
    char text[200];
    size_t n = 0;
    text[0] = '\0';
    for (size_t m = 0; m < MIX_COUNT; m++) {
        double x = s_get(&c->vep, s_mix[m].column);
        if (s_mix[m].alu != alu || !has(x) || x <= 0 || n + 32 >= sizeof text)
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
        if (has(c->alu_rate[i]) && (best < 0 || c->alu_rate[i] > c->alu_rate[best]))
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

static fb_finding_t *s_primary(kctx_t *c)
{
    /* The busiest unit against its roof. */
    const char *unit = NULL;
    double top = -1;
    int top_alu = -1;
    if (has(c->mem_pct) && c->mem_pct > top) {
        top = c->mem_pct;
        unit = "memory";
    }
    if (has(c->slm_pct) && c->slm_pct > top) {
        top = c->slm_pct;
        unit = "slm";
    }
    for (int i = 0; i < 3; i++)
        if (has(c->alu_pct[i]) && c->alu_pct[i] > top) {
            top = c->alu_pct[i];
            unit = "alu";
            top_alu = i;
        }
    char title[320];
    fb_finding_t *f = NULL;
    bool slm_used = has(c->slm_bpns) && c->slm_bpns > 0;
    if (has(c->conflict_rate) && c->conflict_rate >= CONFLICT_PRIMARY && slm_used &&
        (!unit || strcmp(unit, "slm") == 0 || top < LIMIT_PCT)) {
        snprintf(title, sizeof title, "SLM bank conflicts: %.0f%% of shared local memory accesses "
                 "conflict and are serialized", 100 * c->conflict_rate);
        f = s_finding(c, "slm_bank_conflicts", fmax(100 * c->conflict_rate, has(c->slm_pct) ? c->slm_pct : 0),
                      title, "Pad SLM arrays (e.g. [16][17] instead of [16][16]) or swizzle the index "
                      "so the work-items of a sub-group hit different banks.");
        if (f) {
            finding_add_evidence(f, C_SLM_BC, c->conflict_rate * 100, "%",
                                 "%.0f%% of %.0f SLM accesses conflict", 100 * c->conflict_rate,
                                 s_get(&c->mp, C_SLM_ACC));
            s_pct_evidence(f, "slm_bandwidth_pct", c->slm_pct, "SLM bandwidth, % of peak:");
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
        }
    } else if (unit && top >= LIMIT_PCT && strcmp(unit, "memory") == 0) {
        snprintf(title, sizeof title, "Memory-bound on device memory bandwidth: %.0f GB/s, %.0f%% of "
                 "the %.0f GB/s peak", c->mem_gbps, c->mem_pct, c->roof->dram_gbps);
        f = s_finding(c, "memory_bound", c->mem_pct, title,
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
            s_roofline_evidence(c, f);
        }
    } else if (unit && top >= LIMIT_PCT && strcmp(unit, "slm") == 0) {
        snprintf(title, sizeof title, "SLM-bandwidth bound: shared local memory at %.0f%% of its peak",
                 c->slm_pct);
        f = s_finding(c, "slm_bound", c->slm_pct, title,
                      "Keep reused values in registers (more outputs per work-item) and load SLM in "
                      "wider blocks; fix bank conflicts if any.");
        if (f) {
            finding_add_evidence(f, "slm_bandwidth", c->slm_bpns, "byte/ns", "SLM %.0f bytes/ns = %.0f%% "
                                 "of peak", c->slm_bpns, c->slm_pct);
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
        }
    } else if (unit && top >= LIMIT_PCT && top_alu >= 0) {
        bool xmx = top_alu == 2;
        snprintf(title, sizeof title, "Compute-bound on %s: %.0f%% of its instruction rate%s",
                 s_alu_names[top_alu], c->alu_pct[top_alu],
                 c->roof ? "" : " (the counter's own utilization)");
        f = s_finding(c, "compute_bound", c->alu_pct[top_alu], title,
                      xmx ? "XMX is the limit: use lower precision (INT8/FP16) if accuracy allows, or "
                            "cut redundant matrix work."
                      : top_alu == 0
                          ? "Cut FP32/FP16 instructions per result, and move matrix math onto XMX "
                            "(joint_matrix, oneDNN/oneMKL) where it fits."
                          : "Cut integer/FP64/math instructions: 32-bit indices instead of 64-bit, "
                            "hoist address math out of loops, FP32 instead of FP64 where accuracy allows.");
        if (f) {
            finding_add_evidence(f, s_alu_events[top_alu][0], c->alu_pct[top_alu], "%",
                                 "%s %.1f%% of peak%s", s_alu_names[top_alu], c->alu_pct[top_alu],
                                 has(c->alu_rate[top_alu]) ? "" : " (counter)");
            s_mix_evidence(c, f, top_alu);
            s_roofline_evidence(c, f);
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
        }
    } else if (has(c->stall) && c->stall >= STALL_PCT) {
        snprintf(title, sizeof title, "Latency-bound: the vector engines are stalled %.0f%% of the time "
                 "and no unit is above %.0f%% of its peak", c->stall, top > 0 ? top : 0);
        f = s_finding(c, "latency_bound", c->stall, title,
                      "Hide memory latency: more independent loads per work-item, prefetch into SLM, "
                      "more work-items per XVE (occupancy).");
        if (f) {
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
            s_pct_evidence(f, C_OCC, c->occupancy, "thread occupancy");
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
            s_roofline_evidence(c, f);
        }
    } else if (has(c->occupancy) && c->occupancy < OCCUPANCY_PCT) {
        snprintf(title, sizeof title, "Low thread occupancy: %.0f%% of XVE thread slots in use, no unit "
                 "near its peak", c->occupancy);
        f = s_finding(c, "low_occupancy", 100 - c->occupancy, title,
                      "Launch more work-groups or larger ones, and use less SLM and fewer registers per "
                      "work-item so more threads fit per XVE.");
        if (f)
            s_pct_evidence(f, C_OCC, c->occupancy, "thread occupancy");
    } else if (unit) {
        snprintf(title, sizeof title, "Balanced: no unit above %.0f%% of its peak (busiest: %s at %.0f%%)",
                 LIMIT_PCT, strcmp(unit, "alu") == 0 ? s_alu_names[top_alu] : unit, top);
        f = s_finding(c, "balanced", 100 - top, title,
                      "Raise compute and memory throughput together: more parallel work per launch, "
                      "fewer instructions per result, fewer bytes per result.");
        if (f) {
            s_pct_evidence(f, "gpu_memory_bandwidth_pct", c->mem_pct, "device memory bandwidth, % of peak:");
            for (int i = 0; i < 3; i++)
                if (has(c->alu_pct[i]) && c->alu_pct[i] > 0)
                    finding_add_evidence(f, s_alu_events[i][0], c->alu_pct[i], "%", "%s %.1f%% of peak",
                                         s_alu_names[i], c->alu_pct[i]);
            s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
            s_roofline_evidence(c, f);
        }
    }
    if (f) {
        f->primary = true;
        snprintf(feedback_kernel(c->fb, c->index)->bottleneck,
                 sizeof feedback_kernel(c->fb, c->index)->bottleneck, "%s", f->category);
    }
    return f;
}

/* `primary` is the category of the kernel's primary finding ("" if none):
 * a copy, since adding findings moves them. */
static void s_secondary(kctx_t *c, const char *pcat)
{
    bool slm_used = has(c->slm_bpns) && c->slm_bpns > 0;
    if (strcmp(pcat, "slm_bank_conflicts") != 0 && has(c->conflict_rate) &&
        c->conflict_rate >= CONFLICT_SECONDARY && slm_used) {
        char title[200];
        snprintf(title, sizeof title, "SLM bank conflicts: %.0f%% of SLM accesses conflict",
                 100 * c->conflict_rate);
        fb_finding_t *f = s_finding(c, "slm_bank_conflicts", 100 * c->conflict_rate * 0.5, title,
                                    "Pad or swizzle SLM indices so a sub-group's accesses spread over "
                                    "the banks.");
        if (f)
            finding_add_evidence(f, C_SLM_BC, 100 * c->conflict_rate, "%", "%.1f%% of SLM accesses "
                                 "conflict", 100 * c->conflict_rate);
    }
    if (strcmp(pcat, "low_occupancy") != 0 && has(c->occupancy) && c->occupancy < OCCUPANCY_PCT) {
        char title[200];
        snprintf(title, sizeof title, "Thread occupancy is %.0f%%: too few threads per XVE to hide latency",
                 c->occupancy);
        fb_finding_t *f = s_finding(c, "low_occupancy", (100 - c->occupancy) * 0.5, title,
                                    "Launch more or larger work-groups; reduce SLM and registers per "
                                    "work-item.");
        s_pct_evidence(f, C_OCC, c->occupancy, "thread occupancy");
    }
    if (strcmp(pcat, "latency_bound") != 0 && has(c->stall) && c->stall >= 30) {
        char title[200];
        snprintf(title, sizeof title, "Vector engines stalled %.0f%% of the time", c->stall);
        fb_finding_t *f = s_finding(c, "xve_stall", c->stall * 0.5, title,
                                    "Overlap memory with compute: more independent work per work-item, "
                                    "prefetch into SLM.");
        s_pct_evidence(f, C_STALL, c->stall, "XVE stalled");
    }
    /* Matrix math on the vector pipes: FP16/FP32 heavy ALU0, idle XMX. */
    double alu0 = s_get2(&c->vep, s_alu_events[0]), alu2 = s_get2(&c->vep, s_alu_events[2]);
    double fp16 = s_get(&c->vep, "XVE_INST_EXECUTED_FP16[events]");
    if (has(alu0) && alu0 > 0 && has(alu2) && alu2 == 0 && has(c->alu_pct[0]) && c->alu_pct[0] >= 40) {
        fb_finding_t *f = s_finding(c, "xmx_unused", c->alu_pct[0] * 0.5,
                                    "XMX matrix engines unused while ALU0 carries the math",
                                    "If the kernel multiplies matrices, use XMX: joint_matrix in SYCL "
                                    "(or oneDNN/oneMKL); XMX has several times ALU0's FP16/BF16 rate.");
        if (f) {
            finding_add_evidence(f, s_alu_events[0][0], c->alu_pct[0], "%", "ALU0 %.1f%% of peak, XMX 0",
                                 c->alu_pct[0]);
            if (has(fp16))
                finding_add_evidence(f, "XVE_INST_EXECUTED_FP16[events]", 100 * fp16 / alu0, "%",
                                     "FP16 is %.0f%% of ALU0 instructions", 100 * fp16 / alu0);
        }
    }
    /* 64-bit work on ALU1: FP64 runs at 1/8-1/16 rate on Xe2, INT64 is
     * usually index arithmetic. */
    double alu1 = s_get2(&c->vep, s_alu_events[1]);
    double fp64 = s_get(&c->vep, "XVE_INST_EXECUTED_FP64[events]");
    double int64 = s_get(&c->vep, "XVE_INST_EXECUTED_INT64[events]");
    if (has(alu1) && alu1 > 0 && has(fp64) && fp64 / alu1 >= 0.2) {
        fb_finding_t *f = s_finding(c, "fp64", 20 * fp64 / alu1, "FP64 instructions on a GPU with a "
                                    "slow FP64 rate", "Use FP32 (or FP32 with compensated sums) "
                                    "where accuracy allows; check for accidental double literals.");
        if (f)
            finding_add_evidence(f, "XVE_INST_EXECUTED_FP64[events]", 100 * fp64 / alu1, "%",
                                 "FP64 is %.0f%% of ALU1 instructions", 100 * fp64 / alu1);
    }
    if (has(alu1) && alu1 > 0 && has(int64) && int64 / alu1 >= 0.3) {
        fb_finding_t *f = s_finding(c, "int64_math", 15 * int64 / alu1, "64-bit integer math dominates "
                                    "ALU1 (likely index arithmetic)", "Use 32-bit indices and offsets "
                                    "where sizes allow (size_t/long indices compile to INT64 ops).");
        if (f)
            finding_add_evidence(f, "XVE_INST_EXECUTED_INT64[events]", 100 * int64 / alu1, "%",
                                 "INT64 is %.0f%% of ALU1 instructions", 100 * int64 / alu1);
    }
    double hit = s_get(&c->cb, C_L3_HIT), miss = s_get(&c->cb, C_L3_MISS);
    if (!has(hit)) {
        hit = s_get(&c->mp, C_L3_HIT);
        miss = s_get(&c->mp, C_L3_MISS);
    }
    if (has(hit) && has(miss) && hit + miss > 0 && miss / (hit + miss) >= 0.5 && has(c->mem_pct) &&
        c->mem_pct >= 30) {
        fb_finding_t *f = s_finding(c, "l3_thrashing", 30 * miss / (hit + miss), "Most device-cache "
                                    "(L3) accesses miss", "Block the computation so each tile's working "
                                    "set fits in L3/SLM, and order work-groups to reuse cached data.");
        if (f)
            finding_add_evidence(f, C_L3_MISS, 100 * miss / (hit + miss), "%", "L3 miss ratio %.0f%%",
                                 100 * miss / (hit + miss));
    }
}

/* "name[SIMD32 {1024; 1; 1} {256; 1; 1}]" -> name, simd, groups, group size;
 * "(anonymous namespace)::" is dropped from the name. */
static void s_split_name(const char *kernel, char *name, size_t cap, char *grid, size_t gcap,
                         char *block, size_t bcap)
{
    size_t len = strlen(kernel);
    grid[0] = block[0] = '\0';
    const char *suffix = NULL;
    if (len > 0 && kernel[len - 1] == ']') {
        int depth = 0;
        for (size_t i = len; i-- > 0;) {
            depth += kernel[i] == ']' ? 1 : kernel[i] == '[' ? -1 : 0;
            if (depth == 0) {
                suffix = kernel + i;
                break;
            }
        }
    }
    size_t keep = suffix ? (size_t) (suffix - kernel) : len;
    size_t n = 0;
    const char *anon = "(anonymous namespace)::";
    for (size_t i = 0; i < keep && n + 1 < cap;) {
        if (strncmp(kernel + i, anon, strlen(anon)) == 0) {
            i += strlen(anon);
            continue;
        }
        name[n++] = kernel[i++];
    }
    name[n] = '\0';
    if (!suffix)
        return;
    const char *g = strchr(suffix, '{'), *b = g ? strchr(g + 1, '{') : NULL;
    if (g && b) {
        const char *ge = strchr(g, '}'), *be = strchr(b, '}');
        if (ge && be) {
            snprintf(grid, gcap, "%.*s", (int) (ge - g + 1), g);
            snprintf(block, bcap, "%.*s", (int) (be - b + 1), b);
        }
        /* Keep the SIMD width with the name: it is part of what was compiled. */
        const char *simd = strstr(suffix, "SIMD");
        if (simd && n + 12 < cap) {
            size_t w = strcspn(simd, " ]");
            snprintf(name + n, cap - n, " [%.*s]", (int) (w > 10 ? 10 : w), simd);
        }
    } else {
        snprintf(grid, gcap, "%.*s", (int) (len - keep > 30 ? 30 : len - keep), suffix);
    }
}

/* ---- collation: segments, kernels ----------------------------------------- */

typedef struct {
    const char *kernel;
    size_t *rows;      /* base-pass rows of this kernel in the segment */
    size_t count;
    double time;       /* sum of GpuTime (query) or number of samples (sampling) */
    size_t median;     /* the base row with the median GpuTime */
} kgroup_t;

/* Segment index in `tl` with this label, or -1. */
static int s_find_segment(const unitrace_timeline_t *tl, const char *label)
{
    for (size_t s = 0; tl && s < tl->segment_count; s++)
        if (strcmp(tl->segments[s].label, label) == 0)
            return (int) s;
    return -1;
}

/* The rows of `pass` that belong to segment `label`: those whose instance ran
 * inside that window of the pass's own timeline. Without a timeline or
 * instance ids, all rows. */
static size_t *s_segment_rows(const ut_pass_t *pass, const char *label, size_t *count)
{
    size_t n = unitrace_table_rows(pass->table);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    *count = 0;
    if (!rows)
        return NULL;
    int seg = label ? s_find_segment(pass->timeline, label) : -1;
    int id_col = unitrace_table_column(pass->table, C_ID);
    for (size_t r = 0; r < n; r++) {
        /* Sampling mode writes idle intervals as "NoKernel(Before <name>)". */
        if (strncmp(unitrace_table_kernel(pass->table, r), "NoKernel(", 9) == 0)
            continue;
        if (seg >= 0 && id_col >= 0) {
            double id = unitrace_table_cell(pass->table, r, id_col);
            if (!has(id) || !unitrace_timeline_in_segment(pass->timeline, (size_t) seg, (long) id))
                continue;
        }
        rows[(*count)++] = r;
    }
    return rows;
}

/* A base-pass row with what sorting needs, so the comparison needs no table. */
typedef struct {
    size_t row;
    const char *kernel;
    double time;
} rowref_t;

static int s_rowref_cmp(const void *a, const void *b)
{
    const rowref_t *x = a, *y = b;
    int c = strcmp(x->kernel, y->kernel);
    if (c)
        return c;
    return (x->time > y->time) - (x->time < y->time);
}

static int s_kgroup_cmp(const void *a, const void *b)
{
    const kgroup_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return strcmp(x->kernel, y->kernel);
}

/* Groups rows by kernel (rewriting `rows` in kernel, then GpuTime, order);
 * returns the groups ordered by time, largest first. */
static kgroup_t *s_group_kernels(const unitrace_table_t *t, size_t *rows, size_t count, bool sampling,
                                 size_t *kcount)
{
    *kcount = 0;
    rowref_t *refs = malloc((count ? count : 1) * sizeof *refs);
    kgroup_t *groups = calloc(count ? count : 1, sizeof *groups);
    if (!refs || !groups) {
        free(refs);
        free(groups);
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        refs[i] = (rowref_t){rows[i], unitrace_table_kernel(t, rows[i]),
                             s_or0(unitrace_table_value(t, rows[i], C_TIME))};
    qsort(refs, count, sizeof *refs, s_rowref_cmp);
    for (size_t i = 0; i < count; i++)
        rows[i] = refs[i].row;
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j < count && strcmp(refs[j].kernel, refs[i].kernel) == 0)
            j++;
        kgroup_t *g = &groups[(*kcount)++];
        g->kernel = refs[i].kernel;
        g->rows = rows + i;
        g->count = j - i;
        g->median = rows[i + (j - i) / 2]; /* sorted by GpuTime within the kernel */
        g->time = 0;
        for (size_t k = i; k < j; k++)
            g->time += sampling ? 1 : refs[k].time;
        i = j;
    }
    free(refs);
    qsort(groups, *kcount, sizeof *groups, s_kgroup_cmp);
    return groups;
}

/* In another pass: the kernel's row whose GpuTime is closest to `target`
 * (query mode), or all its rows (sampling). */
static view_t s_match(const ut_pass_t *pass, const size_t *rows, size_t count, const char *kernel,
                      double target, bool sampling, size_t *scratch)
{
    view_t v = {pass ? pass->table : NULL, scratch, 0};
    if (!pass)
        return v;
    double best = INFINITY;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(unitrace_table_kernel(pass->table, rows[i]), kernel) != 0)
            continue;
        if (sampling) {
            scratch[v.count++] = rows[i];
            continue;
        }
        double d = fabs(s_or0(unitrace_table_value(pass->table, rows[i], C_TIME)) - target);
        if (d < best) {
            best = d;
            scratch[0] = rows[i];
            v.count = 1;
        }
    }
    return v;
}

typedef struct {
    const unitrace_job_t *job;
    const analysis_options_t *options;
    feedback_t *fb;
    const roof_t *roof;
    const ut_pass_t *pass[G__COUNT];
    bool sampling;
    size_t kernels_total;
    double time_total;
} actx_t;

static void s_analyze_segment(actx_t *a, const char *label, const char *shown_label)
{
    size_t base_count = 0, mp_count = 0, vep_count = 0;
    size_t *base = s_segment_rows(a->pass[G_CB], label, &base_count);
    size_t *mp = a->pass[G_MP] ? s_segment_rows(a->pass[G_MP], label, &mp_count) : NULL;
    size_t *vep = a->pass[G_VEP] ? s_segment_rows(a->pass[G_VEP], label, &vep_count) : NULL;
    size_t scratch_n = (mp_count > vep_count ? mp_count : vep_count) + 1;
    size_t *scratch_mp = malloc(scratch_n * sizeof(size_t)), *scratch_vep = malloc(scratch_n * sizeof(size_t));
    size_t kcount = 0;
    kgroup_t *groups = base && scratch_mp && scratch_vep
                           ? s_group_kernels(a->pass[G_CB]->table, base, base_count, a->sampling, &kcount)
                           : NULL;
    double total = 0;
    for (size_t k = 0; k < kcount; k++)
        total += groups[k].time;
    a->kernels_total += kcount;
    a->time_total += a->sampling ? 0 : total;
    size_t analyzed = 0, skipped = 0;
    for (size_t k = 0; groups && k < kcount; k++) {
        const kgroup_t *g = &groups[k];
        double share = total > 0 ? g->time / total : NAN;
        if (((analyzed > 0 || a->options->min_share_strict) && has(share) && share < a->options->min_share) ||
            (a->options->top && analyzed >= a->options->top)) {
            skipped++;
            continue;
        }
        char name[512], grid[64], block[64];
        s_split_name(g->kernel, name, sizeof name, grid, sizeof grid, block, sizeof block);
        size_t index = feedback_add_kernel(a->fb, name, block, grid, g->count,
                                           a->sampling ? NAN : g->time, share);
        if (index == (size_t) -1)
            break;
        snprintf(feedback_kernel(a->fb, index)->segment, sizeof feedback_kernel(a->fb, index)->segment,
                 "%s", shown_label ? shown_label : "");
        kctx_t c = {.fb = a->fb, .index = index, .roof = a->roof, .sampling = a->sampling};
        size_t median = g->median;
        c.cb = a->sampling ? (view_t){a->pass[G_CB]->table, g->rows, g->count}
                           : (view_t){a->pass[G_CB]->table, &median, 1};
        double target = unitrace_table_value(a->pass[G_CB]->table, g->median, C_TIME);
        c.mp = s_match(a->pass[G_MP], mp, mp_count, g->kernel, target, a->sampling, scratch_mp);
        c.vep = s_match(a->pass[G_VEP], vep, vep_count, g->kernel, target, a->sampling, scratch_vep);
        s_measure(&c);
        fb_kernel_t *kernel = feedback_kernel(a->fb, index);
        if (has(c.t))
            feedback_kernel_metric(kernel, a->sampling ? "sampling_interval_ns" : "median_time_ns", c.t);
        if (has(c.mem_gbps))
            feedback_kernel_metric(kernel, "gpu_memory_gbps", c.mem_gbps);
        if (has(c.stall))
            feedback_kernel_metric(kernel, C_STALL, c.stall);
        if (has(c.occupancy))
            feedback_kernel_metric(kernel, C_OCC, c.occupancy);
        for (int i = 0; i < 3; i++)
            if (has(c.alu_pct[i]))
                feedback_kernel_metric(kernel, s_alu_events[i][0], c.alu_pct[i]);
        fb_finding_t *primary = s_primary(&c);
        char category[32];
        snprintf(category, sizeof category, "%s", primary ? primary->category : "");
        s_secondary(&c, category);
        analyzed++;
    }
    if (skipped)
        feedback_add_note(a->fb, "%s%s%s%zu more kernel%s below the %.0f%% threshold or past --top "
                          "were not analyzed", shown_label ? "benchmark " : "",
                          shown_label ? shown_label : "", shown_label ? ": " : "", skipped,
                          skipped == 1 ? "" : "s", 100 * a->options->min_share);
    free(groups);
    free(base);
    free(mp);
    free(vep);
    free(scratch_mp);
    free(scratch_vep);
}

/* Sum over kernels of their median instance time in a segment: the key the
 * seed ranks benchmark windows by. */
static double s_segment_time(const ut_pass_t *cb, const char *label)
{
    size_t count = 0;
    size_t *rows = s_segment_rows(cb, label, &count);
    size_t kcount = 0;
    kgroup_t *groups = rows ? s_group_kernels(cb->table, rows, count, false, &kcount) : NULL;
    double sum = 0;
    for (size_t k = 0; groups && k < kcount; k++)
        sum += s_or0(unitrace_table_value(cb->table, groups[k].median, C_TIME));
    free(groups);
    free(rows);
    return sum;
}

typedef struct {
    size_t index;
    double time;
} segkey_t;

static int s_segkey_cmp(const void *a, const void *b)
{
    const segkey_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static void s_segments(actx_t *a)
{
    const ut_pass_t *cb = a->pass[G_CB];
    const unitrace_timeline_t *tl = cb->timeline;
    if (a->sampling) {
        feedback_add_note(a->fb, "metric-sampling mode: samples are averaged per kernel and passes "
                                 "matched by kernel name; GpuTime[ns] is the sampling interval, so "
                                 "shares are shares of samples, not measured kernel times");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    if (!tl || tl->segment_count == 0) {
        feedback_add_note(a->fb, "%s: the whole run is one segment", !tl
                          ? "no timeline (chrome JSON) in the ComputeBasic pass"
                          : "no 'ittapi::model run loop' window in the timeline (fine if the "
                            "benchmark is timed by other means)");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    if (unitrace_table_column(cb->table, C_ID) < 0) {
        feedback_add_note(a->fb, "the ComputeBasic table has no GlobalInstanceId column (older "
                                 "unitrace): rows cannot be placed in benchmark windows; the whole "
                                 "run is one segment");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    size_t n = tl->segment_count;
    segkey_t keys[64];
    size_t used = n < 64 ? n : 64;
    if (n > used)
        feedback_add_note(a->fb, "%zu benchmark windows; the first %zu are considered", n, used);
    size_t with_rows = 0;
    for (size_t s = 0; s < used; s++) {
        keys[s] = (segkey_t){s, s_segment_time(cb, tl->segments[s].label)};
        with_rows += keys[s].time > 0;
    }
    if (with_rows == 0) {
        feedback_add_note(a->fb, "no metrics rows fall inside any benchmark window; the whole run "
                                 "is used");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    bool chosen[64] = {false};
    if (used <= 3 || a->options->all_segments) {
        for (size_t s = 0; s < used; s++)
            chosen[s] = true;
    } else {
        qsort(keys, used, sizeof *keys, s_segkey_cmp);
        chosen[keys[(used - 1) / 2].index] = true; /* the median window */
        chosen[keys[used - 1].index] = true;       /* and the slowest */
        feedback_add_note(a->fb, "%zu benchmark windows: analyzed the median and the slowest "
                                 "(--all-segments for every one)", used);
    }
    for (size_t s = 0; s < used; s++) {
        if (!chosen[s])
            continue;
        char shown[160];
        snprintf(shown, sizeof shown, "%zu/%zu %s", s + 1, used, tl->segments[s].label);
        s_analyze_segment(a, tl->segments[s].label, shown);
    }
}

feedback_t *unitrace_analyze(const unitrace_job_t *job, const analysis_options_t *options,
                             const unitrace_device_t *device)
{
    assert(job && options);
    feedback_t *fb = feedback_new("unitrace");
    if (!fb)
        return NULL;
    unitrace_device_t none = {0};
    if (!device)
        device = &none;
    actx_t a = {.job = job, .options = options, .fb = fb};
    a.roof = roofs_lookup_worker(device->gpu_name, device->pci_id, device->cpu_model);
    feedback_set_device(fb, a.roof ? a.roof->name : device->gpu_name);
    for (size_t i = 0; i < job->note_count; i++)
        feedback_add_note(fb, "%s", job->notes[i]);

    /* Each pass's group was recognised when its table was read; the first
     * pass of a group is used. */
    for (size_t i = 0; i < job->count; i++) {
        const ut_pass_t *pass = &job->passes[i];
        if (!pass->table)
            continue;
        if (pass->group < 0) {
            feedback_add_note(fb, "pass %s: metric group not recognised from its %zu columns (PVC's "
                              "MemProfile or VectorEngineN sets, say); not used", pass->key,
                              unitrace_table_columns(pass->table));
            continue;
        }
        if (!a.pass[pass->group])
            a.pass[pass->group] = pass;
        else
            feedback_add_note(fb, "pass %s: a second %s pass; the first is used", pass->key,
                              s_group_names[pass->group]);
    }
    if (!a.pass[G_CB]) {
        bool any = false;
        for (size_t i = 0; i < job->count; i++)
            any |= job->passes[i].table != NULL;
        feedback_set_status(fb, FB_NO_KERNELS);
        feedback_add_error(fb, "%s", any ? "no ComputeBasic pass: kernel times, memory traffic and "
                                           "ALU counts come from it; add `--group ComputeBasic`"
                                         : "no unitrace metrics table (trace.metrics.<pid>) in the job");
        return fb;
    }
    if (!a.pass[G_MP])
        feedback_add_missing(fb, "MemoryProfile pass (unitrace --metric-query --group MemoryProfile): "
                                 "SLM bank-conflict rate and L3 behaviour");
    if (!a.pass[G_VEP])
        feedback_add_missing(fb, "VectorEngineProfile pass (unitrace --metric-query --group "
                                 "VectorEngineProfile): thread occupancy and instruction mix");
    if (!a.roof)
        feedback_add_note(fb, "no roofs for \"%s\"%s%s: memory bandwidth and roofline are unavailable; "
                          "findings use the counters' own utilizations", device->gpu_name ? device->gpu_name : "an unnamed GPU",
                          device->cpu_model ? " / " : "", device->cpu_model ? device->cpu_model : "");
    a.sampling = unitrace_table_sampling(a.pass[G_CB]->table);
    s_segments(&a);
    size_t launches = unitrace_table_rows(a.pass[G_CB]->table);
    feedback_set_totals(fb, a.kernels_total, launches, a.sampling || a.time_total <= 0 ? NAN : a.time_total);
    feedback_set_status(fb, feedback_kernel_count(fb) > 0 ? FB_OK : FB_NO_KERNELS);
    feedback_sort(fb);
    return fb;
}
