#include "ncu_kernel.h"

#include <assert.h>
#include <math.h>
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

static int s_launch_cmp(const void *a, const void *b)
{
    const ncu_launch_t *x = *(const ncu_launch_t *const *) a;
    const ncu_launch_t *y = *(const ncu_launch_t *const *) b;
    int c = strcmp(x->kernel, y->kernel);
    if (!c)
        c = strcmp(x->block, y->block);
    if (!c)
        c = strcmp(x->grid, y->grid);
    if (!c)
        c = (x->id > y->id) - (x->id < y->id);
    return c;
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

/* Whether two launches are of one kernel: name, block and grid. */
static bool s_same_kernel(const ncu_launch_t *x, const ncu_launch_t *y)
{
    return strcmp(x->kernel, y->kernel) == 0 && strcmp(x->block, y->block) == 0 && strcmp(x->grid, y->grid) == 0;
}

ncu_kernels_t *ncu_kernels_group(const ncu_data_t *data)
{
    size_t n = ncu_data_count(data);
    ncu_kernels_t *self = calloc(1, sizeof *self);
    const ncu_launch_t **order = malloc((n ? n : 1) * sizeof *order);
    if (!self || !order) {
        free(order);
        free(self);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = ncu_data_at_const(data, i);
    qsort(order, n, sizeof *order, s_launch_cmp);
    /* One kernel per run of launches in that order: sized by the kernels,
     * not the launches (20,000 launches of 9 kernels took 20 MB). */
    size_t distinct = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        distinct += !s_same_kernel(order[i - 1], order[i]);
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
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const ncu_launch_t *l = order[i];
        if (!k || !s_same_kernel(order[i - 1], l)) {
            if (k) {
                s_finish(k, weights);
                k->duration_sd = s_spread_sd(&spread);
            }
            spread = (spread_t){0, 0, 0};
            assert(self->count < distinct);
            k = &self->kernels[self->count++];
            k->name = l->kernel;
            k->block = l->block;
            k->grid = l->grid;
            k->first_id = l->id;
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
    }
    if (k) {
        s_finish(k, weights);
        k->duration_sd = s_spread_sd(&spread);
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
