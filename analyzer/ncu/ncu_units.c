#include "ncu_units.h"

#include <math.h>
#include <string.h>

#include "analysis.h"
#include "ncu_rule_pipe.h"

/* Every unit with a utilization counter in Nsight Compute's
 * ComputeWorkloadAnalysis and SpeedOfLight sections (2025.3.1, GH100). Pipe
 * counters are per active SM cycle (.pct_of_peak_sustained_active), the
 * DRAM and L2 ones per elapsed cycle. The tensor pipe is read from its
 * all-ops counter, else from the HMMA one (which counts HGMMA on Hopper). */
static const struct {
    const char *key, *name;
    ncu_metric_t metric, fallback;
    ncu_unit_kind_t kind;
} s_table[] = {
    {"dram", "DRAM", NM_DRAM_PCT, NM__COUNT, NCU_UNIT_MEMORY},
    {"l2", "L2 cache", NM_L2_PCT, NM__COUNT, NCU_UNIT_MEMORY},
    {"l1", "L1/TEX cache and shared memory", NM_L1_PCT, NM__COUNT, NCU_UNIT_MEMORY},
    {"fma", "FP32 FMA pipe", NM_PIPE_FMA, NM__COUNT, NCU_UNIT_PIPE},
    {"alu", "integer/logic ALU pipe", NM_PIPE_ALU, NM__COUNT, NCU_UNIT_PIPE},
    {"fp64", "FP64 pipe", NM_PIPE_FP64, NM__COUNT, NCU_UNIT_PIPE},
    {"xu", "XU pipe (transcendentals, square roots, conversions, bit counts)", NM_PIPE_XU, NM__COUNT,
     NCU_UNIT_PIPE},
    {"tensor", "tensor pipe (mma/wgmma)", NM_PIPE_TENSOR, NM_PIPE_HMMA, NCU_UNIT_PIPE},
    {"lsu", "LSU pipe (memory instruction issue)", NM_PIPE_LSU, NM__COUNT, NCU_UNIT_PIPE},
    {"adu", "ADU pipe (barriers, branches, constant loads)", NM_PIPE_ADU, NM__COUNT, NCU_UNIT_PIPE},
    {"cbu", "CBU pipe (warp-level control flow)", NM_PIPE_CBU, NM__COUNT, NCU_UNIT_PIPE},
    {"uniform", "uniform datapath", NM_PIPE_UNIFORM, NM__COUNT, NCU_UNIT_PIPE},
    {"tex", "TEX pipe", NM_PIPE_TEX, NM__COUNT, NCU_UNIT_PIPE},
    {"issue", "instruction issue slots", NM_ISSUE_PCT, NM__COUNT, NCU_UNIT_ISSUE},
};

/* Busiest first; ties keep the table's order (memory before pipes), so the
 * result never depends on the sort. */
static void s_sort(ncu_units_t *units)
{
    for (size_t i = 1; i < units->count; i++)
        for (size_t j = i; j > 0 && units->unit[j].pct > units->unit[j - 1].pct; j--) {
            ncu_unit_t t = units->unit[j];
            units->unit[j] = units->unit[j - 1];
            units->unit[j - 1] = t;
        }
}

/* On GH100 the tensor counters also count the FP16 datapath the FMA pipe
 * shares: a kernel of HFMA2 and no MMA reads the same on both (corpus v4's
 * v4_hfma2_compute: FMA 85.8%, tensor 85.8%), where a kernel that issues MMAs
 * keeps the tensor pipe far busier than the FMA pipe (corpus v2's HMMA kernel:
 * 96.6% against 1.2%). A tensor reading within a point of a busy FMA pipe is
 * that shadow, not MMA work: it is left out, so no title or list names the
 * tensor pipe for FP16 arithmetic. */
#define NCU_FP16_SHADOW_POINTS 1.0
#define NCU_FP16_SHADOW_MIN 10.0
static void s_drop_fp16_shadow(ncu_units_t *units)
{
    const ncu_unit_t *fma = ncu_units_find(units, "fma"), *tensor = ncu_units_find(units, "tensor");
    if (!fma || !tensor || fma->pct < NCU_FP16_SHADOW_MIN || fabs(tensor->pct - fma->pct) > NCU_FP16_SHADOW_POINTS)
        return;
    for (size_t i = (size_t) (tensor - units->unit); i + 1 < units->count; i++)
        units->unit[i] = units->unit[i + 1];
    units->count--;
}

/* Whether a kernel's DRAM reads are scattered sectors (the signature in
 * ncu_units.h): v is its metric values by ncu_metric_t. */
static bool s_dram_scattered(const double *v)
{
    double rd = v[NM_DRAM_READ], ld = v[NM_SECTORS_GLOBAL_LD], st = v[NM_SECTORS_GLOBAL_ST];
    double st_bytes = v[NM_ST_BYTES_PER_SECTOR];
    /* Stores that write whole sectors fill nothing from DRAM (corpus v50's
     * row gather writes 512 MB beside its 512 MB of random rows). */
    bool whole_stores = !isnan(st_bytes) && st_bytes >= NCU_SCATTERED_WHOLE_STORE;
    return !isnan(rd) && !isnan(ld) && !isnan(st) && ld > 0 && rd >= NCU_SCATTERED_OVERFETCH * ld * 32 &&
           (whole_stores || st <= NCU_SCATTERED_STORE_SHARE * ld);
}

double ncu_units_issue_pct(const double *v, ncu_metric_t *from)
{
    if (!isnan(v[NM_ISSUE_PCT])) {
        *from = NM_ISSUE_PCT;
        return v[NM_ISSUE_PCT];
    }
    /* A fraction per scheduler cycle. */
    if (!isnan(v[NM_ISSUE_ACTIVE])) {
        *from = NM_ISSUE_ACTIVE;
        return 100 * v[NM_ISSUE_ACTIVE];
    }
    /* Instructions a cycle per SM: one a cycle from each of its four
     * schedulers at most (every SM from Volta to Blackwell has four). */
    if (!isnan(v[NM_ISSUED_IPC])) {
        *from = NM_ISSUED_IPC;
        return fmin(100 * v[NM_ISSUED_IPC] / NCU_SCHEDULERS_PER_SM, 100);
    }
    /* Executed instructions over the SMs' active cycles (KernelAgent's
     * metric list): a floor, since every executed instruction was issued. */
    ncu_metric_t inst = !isnan(v[NM_INST_EXECUTED]) ? NM_INST_EXECUTED : NM_INST_EXECUTED_SM;
    double cycles = v[NM_SM_ACTIVE_CYCLES], sms = v[NM_SM_COUNT];
    if (!isnan(v[inst]) && !isnan(cycles) && !isnan(sms) && cycles > 0 && sms > 0) {
        *from = inst;
        return fmin(100 * v[inst] / (cycles * sms * NCU_SCHEDULERS_PER_SM), 100);
    }
    return NAN;
}

/* A capture without the pipe counters may carry NCU's own reading of some of
 * them (ncu_rule_pipe.h: KernelFoundry's details page): the pipes its rule
 * names join the units where no counter measured them, read from the rule. */
#define NCU_RULE_PIPE_METRIC "HighPipeUtilization (ncu rule)"
static void s_add_rule_pipes(const ncu_kernel_t *k, ncu_units_t *out)
{
    ncu_rule_pipe_t named[NCU_RULE_PIPES];
    size_t n = ncu_rule_pipes(k->rules, k->rule_count, named);
    for (size_t j = 0; j < n && out->count < NCU_UNITS_MAX; j++) {
        if (ncu_units_find(out, named[j].key))
            continue;
        for (size_t i = 0; i < sizeof s_table / sizeof s_table[0]; i++)
            if (strcmp(s_table[i].key, named[j].key) == 0) {
                out->unit[out->count++] = (ncu_unit_t){.key = s_table[i].key, .name = s_table[i].name,
                                                       .metric = NCU_RULE_PIPE_METRIC, .kind = s_table[i].kind,
                                                       .pct = analysis_pct(named[j].pct),
                                                       .attain = NCU_ATTAIN_ONCHIP};
                break;
            }
    }
}

void ncu_units_measure(const ncu_kernel_t *k, double dram_scattered_pct, ncu_units_t *out)
{
    bool scattered = dram_scattered_pct > 0 && s_dram_scattered(k->v);
    out->count = 0;
    for (size_t i = 0; i < sizeof s_table / sizeof s_table[0] && out->count < NCU_UNITS_MAX; i++) {
        ncu_metric_t m = s_table[i].metric;
        double x = k->v[m];
        if (s_table[i].fallback != NM__COUNT && !isnan(k->v[s_table[i].fallback]) &&
            (isnan(x) || k->v[s_table[i].fallback] > x)) {
            m = s_table[i].fallback;
            x = k->v[m];
        }
        if (isnan(x) && m == NM_ISSUE_PCT)
            x = ncu_units_issue_pct(k->v, &m);
        if (isnan(x))
            continue;
        ncu_unit_t *u = &out->unit[out->count++];
        u->key = s_table[i].key;
        u->name = s_table[i].name;
        u->metric = ncu_metric_info(m)->name;
        u->kind = s_table[i].kind;
        u->pct = analysis_pct(x);
        u->scattered = scattered && strcmp(u->key, "dram") == 0;
        u->attain = strcmp(u->key, "dram") != 0 ? NCU_ATTAIN_ONCHIP
                    : u->scattered               ? dram_scattered_pct
                                                 : NCU_ATTAIN_DRAM;
    }
    s_add_rule_pipes(k, out);
    s_drop_fp16_shadow(out);
    s_sort(out);
}

const ncu_unit_t *ncu_units_busiest(const ncu_units_t *units, int kind)
{
    for (size_t i = 0; i < units->count; i++) /* busiest first */
        if (kind < 0 || units->unit[i].kind == (ncu_unit_kind_t) kind)
            return &units->unit[i];
    return NULL;
}

double ncu_unit_room(const ncu_unit_t *unit)
{
    if (unit->pct <= unit->attain / 10)
        return 10;
    return unit->pct >= unit->attain ? 1 : unit->attain / unit->pct;
}

const ncu_unit_t *ncu_units_find(const ncu_units_t *units, const char *key)
{
    for (size_t i = 0; i < units->count; i++)
        if (strcmp(units->unit[i].key, key) == 0)
            return &units->unit[i];
    return NULL;
}

static void s_loads(const ncu_units_t *units, const ncu_relief_t *relief, double *before, double *after)
{
    /* Time follows the unit nearest its attainable ceiling: each unit's
     * utilization is read against what it reaches at best. */
    *before = 0;
    *after = 0;
    for (size_t i = 0; i < units->count; i++) {
        const ncu_unit_t *u = &units->unit[i];
        double keep = u->kind != NCU_UNIT_MEMORY ? relief->compute
                      : strcmp(u->key, "l1") == 0 ? relief->l1
                      : strcmp(u->key, "l2") == 0 ? relief->l2
                                                  : relief->dram;
        if (relief->unit_keep && !isnan(relief->unit_keep[i]))
            keep = relief->unit_keep[i];
        keep = keep < 0 ? 0 : keep > 1 ? 1 : keep;
        double load = fmin(u->pct / u->attain, 1);
        *before = fmax(*before, load);
        *after = fmax(*after, load * keep);
    }
}

double ncu_units_saved(const ncu_units_t *units, const ncu_relief_t *relief)
{
    if (units->count == 0)
        return NAN;
    double before, after;
    s_loads(units, relief, &before, &after);
    return before > after ? before - after : 0;
}

double ncu_units_saved_moving(const ncu_units_t *units, const char *from, const char *to, double factor)
{
    const ncu_unit_t *src = ncu_units_find(units, from), *dst = ncu_units_find(units, to);
    if (!src || !analysis_has(factor) || factor < 0)
        return NAN;
    double before = 0, after = 0, moved = src->pct * factor;
    for (size_t i = 0; i < units->count; i++) {
        const ncu_unit_t *u = &units->unit[i];
        double load = fmin(u->pct / u->attain, 1);
        before = fmax(before, load);
        after = fmax(after, u == src ? 0 : u == dst ? fmin((u->pct + moved) / u->attain, 1) : load);
    }
    if (!dst) /* the pipe the work moves to was not measured: it starts idle */
        after = fmax(after, fmin(moved / NCU_ATTAIN_ONCHIP, 1));
    return before > after ? before - after : 0;
}

void ncu_units_keep_one(const ncu_units_t *units, const ncu_unit_t *unit, double value, double keep[NCU_UNITS_MAX])
{
    for (size_t u = 0; u < units->count; u++)
        keep[u] = &units->unit[u] == unit ? value : NAN;
}

double ncu_units_saved_or(const ncu_units_t *units, const ncu_relief_t *relief, double other, bool *other_won)
{
    *other_won = false;
    if (units->count == 0)
        return NAN;
    double before, after;
    s_loads(units, relief, &before, &after);
    double roofline = before > after ? before - after : 0;
    if (!analysis_has(other))
        return roofline;
    /* After saving g every unit runs at load x keep / (1 - g): at most 1 - after. */
    double capped = fmin(other, 1 - after);
    *other_won = capped > roofline;
    return *other_won ? capped : roofline;
}
