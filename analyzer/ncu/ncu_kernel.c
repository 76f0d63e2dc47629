#include "ncu_kernel.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_summary.h"

/* Per kernel while grouping: the timed launches' count, mean and sum of
 * squared deviations (Welford's update: one pass, no cancellation). */
typedef struct {
    double n, mean, m2;
} spread_t;

static void s_spread_add(spread_t *s, double x)
{
    if (isnan(x))
        return;
    s->n += 1;
    double d = x - s->mean;
    s->mean += d / s->n;
    s->m2 += d * (x - s->mean);
}

static double s_spread_sd(const spread_t *s) { return s->n >= 2 ? sqrt(s->m2 / (s->n - 1)) : NAN; }

struct ncu_kernels_t {
    ncu_kernel_t *kernels;
    size_t count;
    double total_time;
};

/* A launch while grouping: which behaviour of its kernel it shows, and how
 * many its kernel has. */
typedef struct {
    const ncu_launch_t *l;
    size_t behaviour, behaviours;
} slot_t;

/* Launches of one kernel (name, block and grid) are one kernel to an agent,
 * unless they behave differently: ATen's elementwise add over one size adds a
 * broadcast bias in one launch (issue slots 70%, L2 60%) and a 0-d tensor in
 * another (L2 71% carrying DRAM's traffic, issue 46%), and their average is
 * neither (corpus v51). Two launches behave alike unless a memory level or the
 * issue slots differ by more than NCU_ALIKE_POINTS while one of the two is at
 * NCU_ALIKE_FLOOR or more: repeated launches differ by a few points (replay
 * noise; corpus v2's 2 us tiny_scale, launched 20 times, 11%-24% on L1), and
 * a unit under the floor limits neither launch. Across the committed captures
 * 10 of 120 kernels launched more than once split: radix sort's passes over
 * different digits, top-k's, cuDNN's kernel reused for two problem sizes. */
#define NCU_ALIKE_POINTS 10.0
#define NCU_ALIKE_FLOOR 40.0
/* At most this many behaviours a kernel; a launch past it joins the nearest. */
#define NCU_BEHAVIOURS_MAX 8

static double s_difference(const ncu_launch_t *a, const ncu_launch_t *b)
{
    static const ncu_metric_t units[] = {NM_DRAM_PCT, NM_L2_PCT, NM_L1_PCT, NM_ISSUE_PCT};
    double most = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        double x = a->v[units[i]], y = b->v[units[i]];
        if (!isnan(x) && !isnan(y) && fmax(x, y) >= NCU_ALIKE_FLOOR)
            most = fmax(most, fabs(x - y));
    }
    return most;
}

/* Orders launches by kernel: name, block, grid. */
static int s_key_cmp(const ncu_launch_t *x, const ncu_launch_t *y)
{
    int c = strcmp(x->kernel, y->kernel);
    if (!c)
        c = strcmp(x->block, y->block);
    if (!c)
        c = strcmp(x->grid, y->grid);
    return c;
}

static bool s_same_key(const ncu_launch_t *x, const ncu_launch_t *y) { return s_key_cmp(x, y) == 0; }

static int s_launch_cmp(const void *a, const void *b)
{
    const slot_t *x = a, *y = b;
    int c = s_key_cmp(x->l, y->l);
    if (!c)
        c = (x->behaviour > y->behaviour) - (x->behaviour < y->behaviour);
    if (!c)
        c = (x->l->id > y->l->id) - (x->l->id < y->l->id);
    return c;
}

/* Gives each launch of a run [from, to) of one key (in launch order) its
 * behaviour: the first earlier behaviour whose first launch it is alike, else
 * a new one; then orders the run by behaviour. */
static void s_behaviours(slot_t *slots, size_t from, size_t to)
{
    const ncu_launch_t *first[NCU_BEHAVIOURS_MAX];
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        size_t best = 0;
        double nearest = INFINITY;
        for (size_t b = 0; b < n; b++) {
            double d = s_difference(slots[i].l, first[b]);
            if (d < nearest) {
                nearest = d;
                best = b;
            }
            if (d <= NCU_ALIKE_POINTS)
                break;
        }
        if (n < NCU_BEHAVIOURS_MAX && !(nearest <= NCU_ALIKE_POINTS)) {
            first[n] = slots[i].l;
            best = n++;
        }
        slots[i].behaviour = best;
    }
    for (size_t i = from; i < to; i++)
        slots[i].behaviours = n;
    if (n > 1)
        qsort(slots + from, to - from, sizeof *slots, s_launch_cmp);
}

/* Appends a launch ID to a kernel's list, consecutive IDs as a range
 * ("2-4,31"); a list that does not fit ends in "...". */
static void s_id_append(ncu_kernel_t *k, long id, long *run_first, long *run_last)
{
    char *out = k->launch_ids;
    size_t cap = sizeof k->launch_ids, len = strlen(out);
    if (*run_last >= 0 && id == *run_last + 1) {
        *run_last = id;
        return;
    }
    if (*run_last >= 0 && *run_last != *run_first && len + 24 < cap)
        len += (size_t) snprintf(out + len, cap - len, "-%ld", *run_last);
    if (len + 24 >= cap) {
        if (len + 4 <= cap && (len < 3 || strcmp(out + len - 3, "...") != 0))
            snprintf(out + len, cap - len, "...");
        *run_first = *run_last = -1;
        return;
    }
    snprintf(out + len, cap - len, "%s%ld", len ? "," : "", id);
    *run_first = *run_last = id;
}

static void s_id_close(ncu_kernel_t *k, long run_first, long run_last)
{
    size_t len = strlen(k->launch_ids);
    if (run_last >= 0 && run_last != run_first && len + 24 < sizeof k->launch_ids)
        snprintf(k->launch_ids + len, sizeof k->launch_ids - len, "-%ld", run_last);
}

static int s_kernel_cmp(const void *a, const void *b)
{
    const ncu_kernel_t *x = a, *y = b;
    double tx = x->v[NM_DURATION], ty = y->v[NM_DURATION];
    if (!isnan(tx) && !isnan(ty) && tx != ty)
        return tx > ty ? -1 : 1;
    if (isnan(tx) != isnan(ty))
        return isnan(tx) ? 1 : -1;
    return (x->first_id > y->first_id) - (x->first_id < y->first_id);
}

/* The part of a rule's text before its first digit: launches of one kernel
 * repeat a rule with different numbers in it. */
static size_t s_stem(const char *text)
{
    size_t n = 0;
    while (text[n] && !(text[n] >= '0' && text[n] <= '9') && n < 80)
        n++;
    return n;
}

static bool s_add_rule(ncu_kernel_t *k, const ncu_rule_t *rule, size_t *cap)
{
    size_t stem = s_stem(rule->text);
    for (size_t i = 0; i < k->rule_count; i++) {
        const ncu_rule_t *have = k->rules[i];
        if (strcmp(have->name, rule->name) == 0 && s_stem(have->text) == stem &&
            strncmp(have->text, rule->text, stem) == 0) {
            if (!isnan(rule->speedup) && (isnan(have->speedup) || rule->speedup > have->speedup))
                k->rules[i] = rule;
            return true;
        }
    }
    if (k->rule_count == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        const ncu_rule_t **rules = realloc(k->rules, n * sizeof *rules);
        if (!rules)
            return false;
        k->rules = rules;
        *cap = n;
    }
    k->rules[k->rule_count++] = rule;
    return true;
}

/* Folds one launch into its kernel: sums, and duration-weighted sums that
 * s_finish divides by the weights. */
static bool s_fold(ncu_kernel_t *k, double *weights, const ncu_launch_t *l, size_t *rule_cap)
{
    double w = isnan(l->v[NM_DURATION]) || l->v[NM_DURATION] <= 0 ? 1 : l->v[NM_DURATION];
    for (int m = 0; m < NM__COUNT; m++) {
        double x = l->v[m];
        if (isnan(x))
            continue;
        if (isnan(k->v[m]))
            k->v[m] = 0;
        if (ncu_metric_info((ncu_metric_t) m)->agg == NM_AGG_SUM) {
            k->v[m] += x;
        } else {
            k->v[m] += x * w;
            weights[m] += w;
        }
    }
    k->launches++;
    for (size_t r = 0; r < l->rule_count; r++)
        if (!s_add_rule(k, &l->rules[r], rule_cap))
            return false;
    return true;
}

static void s_finish(ncu_kernel_t *k, const double *weights)
{
    for (int m = 0; m < NM__COUNT; m++)
        if (ncu_metric_info((ncu_metric_t) m)->agg == NM_AGG_WMEAN && weights[m] > 0)
            k->v[m] /= weights[m];
}

/* Whether two launches are grouped: one kernel, one behaviour. */
static bool s_same_kernel(const slot_t *x, const slot_t *y)
{
    return s_same_key(x->l, y->l) && x->behaviour == y->behaviour;
}

ncu_kernels_t *ncu_kernels_group(const ncu_data_t *data)
{
    size_t n = ncu_data_count(data);
    ncu_kernels_t *self = calloc(1, sizeof *self);
    slot_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!self || !order) {
        free(order);
        free(self);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (slot_t){ncu_data_at_const(data, i), 0, 1};
    qsort(order, n, sizeof *order, s_launch_cmp); /* by key, then launch */
    for (size_t from = 0, to; from < n; from = to) { /* then each key's launches by behaviour */
        for (to = from + 1; to < n && s_same_key(order[from].l, order[to].l); to++)
            ;
        s_behaviours(order, from, to);
    }
    /* One kernel per run of launches in that order: sized by the kernels,
     * not the launches (20,000 launches of 9 kernels took 20 MB). */
    size_t distinct = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        distinct += !s_same_kernel(&order[i - 1], &order[i]);
    self->kernels = calloc(distinct ? distinct : 1, sizeof *self->kernels);
    if (!self->kernels) {
        free(order);
        free(self);
        return NULL;
    }

    double weights[NM__COUNT];
    spread_t spread = {0, 0, 0};
    size_t rule_cap = 0;
    ncu_kernel_t *k = NULL;
    long run_first = -1, run_last = -1;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const ncu_launch_t *l = order[i].l;
        if (!k || !s_same_kernel(&order[i - 1], &order[i])) {
            if (k) {
                s_finish(k, weights);
                k->duration_sd = s_spread_sd(&spread);
                s_id_close(k, run_first, run_last);
            }
            run_first = run_last = -1;
            spread = (spread_t){0, 0, 0};
            assert(self->count < distinct);
            k = &self->kernels[self->count++];
            k->name = l->kernel;
            k->block = l->block;
            k->grid = l->grid;
            k->first_id = l->id;
            k->behaviours = order[i].behaviours;
            for (int m = 0; m < NM__COUNT; m++) {
                k->v[m] = NAN;
                weights[m] = 0;
            }
            rule_cap = 0;
        }
        if (l->id < k->first_id)
            k->first_id = l->id;
        ok = s_fold(k, weights, l, &rule_cap);
        s_spread_add(&spread, l->v[NM_DURATION]);
        if (k->behaviours > 1)
            s_id_append(k, l->id, &run_first, &run_last);
    }
    if (k) {
        s_finish(k, weights);
        k->duration_sd = s_spread_sd(&spread);
        s_id_close(k, run_first, run_last);
    }
    free(order);
    if (!ok) {
        ncu_kernels_destroy(&self);
        return NULL;
    }
    for (size_t i = 0; i < self->count; i++)
        ncu_summary_derive(&self->kernels[i]);
    /* Launch order, for matching renamed kernels across rounds: a rank by
     * first launch, before the kernels are ordered by time. */
    for (size_t i = 0; i < self->count; i++)
        for (size_t j = 0; j < self->count; j++)
            if (self->kernels[j].first_id < self->kernels[i].first_id)
                self->kernels[i].launch_order++;
    qsort(self->kernels, self->count, sizeof *self->kernels, s_kernel_cmp);
    self->total_time = NAN;
    for (size_t i = 0; i < self->count; i++) {
        double t = self->kernels[i].v[NM_DURATION];
        if (!isnan(t))
            self->total_time = isnan(self->total_time) ? t : self->total_time + t;
    }
    return self;
}

void ncu_kernels_destroy(ncu_kernels_t **self_p)
{
    assert(self_p);
    ncu_kernels_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free(self->kernels[i].rules);
    free(self->kernels);
    free(self);
    *self_p = NULL;
}

size_t ncu_kernels_count(const ncu_kernels_t *self) { return self->count; }

const ncu_kernel_t *ncu_kernels_at(const ncu_kernels_t *self, size_t index)
{
    assert(index < self->count);
    return &self->kernels[index];
}

double ncu_kernels_total_time(const ncu_kernels_t *self) { return self->total_time; }
