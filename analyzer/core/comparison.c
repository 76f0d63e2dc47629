#include "comparison.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on the lists a comparison keeps: a feedback holds at most
 * WIRE_MAX_KERNELS kernels, and a manifest a handful of fields. */
#define DIFFERENCES_MAX 16

static char *s_dup(const char *text)
{
    size_t n = strlen(text ? text : "") + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text ? text : "", n);
    return copy;
}

static fb_comparison_t *s_new(const char *name)
{
    fb_comparison_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->baseline, sizeof self->baseline, "%s", name ? name : "");
    self->change = self->band = NAN;
    self->verdict = CHANGE_NOT_TIMED;
    return self;
}

fb_comparison_t *comparison_new_problem(const char *name, const char *problem)
{
    fb_comparison_t *self = s_new(name);
    if (self)
        snprintf(self->problem, sizeof self->problem, "%s", problem ? problem : "not compared");
    return self;
}

static void s_free_list(char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(list[i]);
    free(list);
}

void comparison_destroy(fb_comparison_t **self_p)
{
    assert(self_p);
    fb_comparison_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->kernel_count; i++) {
        free(self->kernels[i].name);
        free(self->kernels[i].baseline_name);
    }
    free(self->kernels);
    s_free_list(self->appeared, self->appeared_count);
    s_free_list(self->disappeared, self->disappeared_count);
    s_free_list(self->differences, self->difference_count);
    free(self);
    *self_p = NULL;
}

const char *comparison_verdict_name(change_verdict_t verdict)
{
    switch (verdict) {
    case CHANGE_IMPROVED: return "improved";
    case CHANGE_REGRESSED: return "regressed";
    case CHANGE_WITHIN_NOISE: return "within noise";
    case CHANGE_NOT_TIMED: return "not timed";
    }
    return "not timed";
}

static bool s_push(char ***list, size_t *count, size_t max, const char *text)
{
    if (*count >= max)
        return true;
    char **grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown)
        return false;
    *list = grown;
    if ((grown[*count] = s_dup(text)) == NULL)
        return false;
    (*count)++;
    return true;
}

/* A kernel's mean time of one launch, NAN when not measured. */
static double s_mean(const fb_kernel_t *k)
{
    return k->launches > 0 && isfinite(k->time_ns) ? k->time_ns / (double) k->launches : NAN;
}

/* The relative spread of one launch's time (coefficient of variation) and
 * the launches it came from, when the capture timed several. */
static bool s_spread(const fb_kernel_t *k, double *cv, double *n)
{
    double mean = s_mean(k);
    if (k->launches < 2 || !isfinite(k->launch_sd_ns) || !(mean > 0))
        return false;
    *cv = k->launch_sd_ns / mean;
    *n = (double) k->launches;
    return true;
}

/* The noise band of the change of the mean: twice the standard error of the
 * difference of two means (about 95%), relative to the mean, from each
 * side's launches; a side with one launch borrows the other's spread. */
static void s_band(kernel_change_t *c, const fb_kernel_t *before, const fb_kernel_t *after)
{
    double cv_b = 0, n_b = 1, cv_a = 0, n_a = 1;
    bool has_b = s_spread(before, &cv_b, &n_b), has_a = s_spread(after, &cv_a, &n_a);
    if (!has_b && !has_a) {
        c->band = COMPARISON_DEFAULT_BAND;
        c->band_source = "default";
        return;
    }
    if (!has_b)
        cv_b = cv_a, n_b = (double) (before->launches ? before->launches : 1);
    if (!has_a)
        cv_a = cv_b, n_a = (double) (after->launches ? after->launches : 1);
    double band = 2 * sqrt(cv_b * cv_b / n_b + cv_a * cv_a / n_a);
    c->band = band > COMPARISON_MIN_BAND ? band : COMPARISON_MIN_BAND;
    c->band_source = "launches";
}

static change_verdict_t s_verdict(double change, double band)
{
    if (!isfinite(change))
        return CHANGE_NOT_TIMED;
    if (fabs(change) <= band)
        return CHANGE_WITHIN_NOISE;
    return change < 0 ? CHANGE_IMPROVED : CHANGE_REGRESSED;
}

static bool s_has_category(const feedback_t *fb, size_t kernel, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel == kernel && strcmp(f->category, category) == 0)
            return true;
    }
    return false;
}

static void s_category_add(change_categories_t *list, const char *category)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->category[i], category) == 0)
            return;
    if (list->count < COMPARISON_FINDINGS_MAX)
        snprintf(list->category[list->count++], sizeof list->category[0], "%s", category);
}

/* Findings by category: gone, new, and found in both. */
static void s_findings(kernel_change_t *c, const feedback_t *baseline, size_t b, const feedback_t *now, size_t a)
{
    for (size_t i = 0; i < feedback_finding_count(baseline); i++) {
        const fb_finding_t *f = feedback_finding(baseline, i);
        if (f->kernel == b)
            s_category_add(s_has_category(now, a, f->category) ? &c->unchanged : &c->resolved, f->category);
    }
    for (size_t i = 0; i < feedback_finding_count(now); i++) {
        const fb_finding_t *f = feedback_finding(now, i);
        if (f->kernel == a && !s_has_category(baseline, b, f->category))
            s_category_add(&c->added, f->category);
    }
}

/* Whether the kernel's close call named `category` as another profile's
 * first finding. */
static bool s_close_names(const fb_kernel_t *kernel, const char *category)
{
    for (size_t i = 0; category[0] && i < kernel->close_count; i++)
        if (strcmp(kernel->close[i].category, category) == 0)
            return true;
    return false;
}

static bool s_pair(fb_comparison_t *self, const feedback_t *baseline, size_t b, const feedback_t *now, size_t a,
                   const char *matched_by)
{
    const fb_kernel_t *before = feedback_kernel_const(baseline, b), *after = feedback_kernel_const(now, a);
    kernel_change_t *c = &self->kernels[self->kernel_count];
    memset(c, 0, sizeof *c);
    c->name = s_dup(after->name);
    c->baseline_name = s_dup(before->name);
    if (!c->name || !c->baseline_name) {
        free(c->name);
        free(c->baseline_name);
        return false;
    }
    c->matched_by = matched_by;
    c->before_ns = s_mean(before);
    c->after_ns = s_mean(after);
    c->before_launches = before->launches;
    c->change = c->before_ns > 0 && isfinite(c->after_ns) ? c->after_ns / c->before_ns - 1 : NAN;
    s_band(c, before, after);
    c->verdict = s_verdict(c->change, c->band);
    snprintf(c->limiter_before, sizeof c->limiter_before, "%s", before->bottleneck);
    snprintf(c->limiter_after, sizeof c->limiter_after, "%s", after->bottleneck);
    c->limiter_close = strcmp(before->bottleneck, after->bottleneck) != 0 &&
                       (s_close_names(before, after->bottleneck) || s_close_names(after, before->bottleneck));
    s_findings(c, baseline, b, now, a);
    self->kernel_count++;
    return true;
}

/* Kernels not matched by name, in the order of their first launch (a
 * kernel whose order is unknown keeps its place in the feedback, after the
 * known ones). */
typedef struct {
    size_t index, order;
} leftover_t;

static int s_leftover_cmp(const void *x, const void *y)
{
    const leftover_t *a = x, *b = y;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static size_t s_leftovers(const feedback_t *fb, const bool *used, leftover_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++)
        if (!used[i])
            out[n++] = (leftover_t){i, feedback_kernel_const(fb, i)->launch_order};
    qsort(out, n, sizeof *out, s_leftover_cmp);
    return n;
}

/* A kernel's name without template arguments and parameters:
 * "void copy_round<2>(const float *, float *)" -> "void copy_round". An
 * agent's rewrite often changes only a template argument. */
static void s_base_name(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    int depth = 0;
    for (const char *c = name; *c && *c != '(' && n + 1 < cap; c++) {
        if (*c == '<')
            depth++;
        else if (*c == '>' && depth > 0)
            depth--;
        else if (depth == 0)
            out[n++] = *c;
    }
    out[n] = '\0';
}

/* True when `base` names exactly one kernel of `fb` not yet matched. */
static bool s_base_unique(const feedback_t *fb, const bool *used, const char *base)
{
    char other[512];
    size_t hits = 0;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        if (used[i])
            continue;
        s_base_name(feedback_kernel_const(fb, i)->name, other, sizeof other);
        hits += strcmp(other, base) == 0;
    }
    return hits == 1;
}

/* Matches kernels: the same name and launch configuration first, then the
 * same name, then the same name without template arguments when it is
 * unique on both sides, then what is left by launch order when both sides have as many
 * left and the two are recognisably one program (some kernel matched by
 * name, or one kernel on each side is left: a renamed kernel); the rest
 * appeared or disappeared. Two programs with no name in common are not
 * paired off by position. */
static bool s_match(fb_comparison_t *self, const feedback_t *baseline, const feedback_t *now)
{
    size_t nb = feedback_kernel_count(baseline), na = feedback_kernel_count(now);
    bool *used_b = calloc(nb ? nb : 1, sizeof *used_b), *used_a = calloc(na ? na : 1, sizeof *used_a);
    leftover_t *left_b = malloc((nb ? nb : 1) * sizeof *left_b), *left_a = malloc((na ? na : 1) * sizeof *left_a);
    self->kernels = calloc(na ? na : 1, sizeof *self->kernels);
    bool ok = used_b && used_a && left_b && left_a && self->kernels;
    for (int pass = 0; ok && pass < 2; pass++) {
        for (size_t a = 0; ok && a < na; a++) {
            const fb_kernel_t *ka = feedback_kernel_const(now, a);
            for (size_t b = 0; !used_a[a] && b < nb; b++) {
                const fb_kernel_t *kb = feedback_kernel_const(baseline, b);
                if (used_b[b] || strcmp(ka->name, kb->name) != 0)
                    continue;
                if (pass == 0 && (strcmp(ka->grid, kb->grid) != 0 || strcmp(ka->block, kb->block) != 0))
                    continue;
                ok = s_pair(self, baseline, b, now, a, "name");
                used_a[a] = used_b[b] = true;
            }
        }
    }
    for (size_t a = 0; ok && a < na; a++) {
        char base_a[512], base_b[512];
        s_base_name(feedback_kernel_const(now, a)->name, base_a, sizeof base_a);
        if (used_a[a] || !base_a[0] || !s_base_unique(now, used_a, base_a) || !s_base_unique(baseline, used_b, base_a))
            continue;
        for (size_t b = 0; ok && b < nb; b++) {
            s_base_name(feedback_kernel_const(baseline, b)->name, base_b, sizeof base_b);
            if (used_b[b] || strcmp(base_a, base_b) != 0)
                continue;
            ok = s_pair(self, baseline, b, now, a, "name without template arguments");
            used_a[a] = used_b[b] = true;
            break;
        }
    }
    if (ok) {
        size_t lb = s_leftovers(baseline, used_b, left_b), la = s_leftovers(now, used_a, left_a);
        if (lb == la && (self->kernel_count > 0 || la == 1)) {
            for (size_t i = 0; ok && i < la; i++) {
                ok = s_pair(self, baseline, left_b[i].index, now, left_a[i].index, "launch order");
                used_b[left_b[i].index] = used_a[left_a[i].index] = true;
            }
        }
        for (size_t a = 0; ok && a < na; a++)
            if (!used_a[a])
                ok = s_push(&self->appeared, &self->appeared_count, na, feedback_kernel_const(now, a)->name);
        for (size_t b = 0; ok && b < nb; b++)
            if (!used_b[b])
                ok = s_push(&self->disappeared, &self->disappeared_count, nb, feedback_kernel_const(baseline, b)->name);
    }
    free(used_b);
    free(used_a);
    free(left_b);
    free(left_a);
    return ok;
}

/* The change over the matched kernels: the baseline's launches priced at
 * the new mean times, against their old price (a round that launches a
 * kernel more often is not slower for it); the band is the pairs' bands
 * weighted by their share of that time. */
static void s_overall(fb_comparison_t *self)
{
    double before = 0, after = 0, band = 0;
    for (size_t i = 0; i < self->kernel_count; i++) {
        const kernel_change_t *c = &self->kernels[i];
        if (!isfinite(c->change))
            continue;
        double weight = c->before_ns * (double) c->before_launches;
        before += weight;
        after += c->after_ns * (double) c->before_launches;
        band += c->band * weight;
    }
    if (!(before > 0))
        return;
    self->change = after / before - 1;
    self->band = band / before;
    self->verdict = s_verdict(self->change, self->band);
}

/* One manifest field that differs, when both sides know it. */
static bool s_differs(fb_comparison_t *self, const char *field, const char *before, const char *after)
{
    if (!before[0] || !after[0] || strcmp(before, after) == 0)
        return true;
    char line[512];
    snprintf(line, sizeof line, "%s: %.200s -> %.200s", field, before, after);
    return s_push(&self->differences, &self->difference_count, DIFFERENCES_MAX, line);
}

/* What differs between the two manifests. The target is left out: rounds
 * differ in it by design (a new kernel file, new capture files). */
static bool s_differences(fb_comparison_t *self, const feedback_t *baseline, const feedback_t *now)
{
    const fb_manifest_t *b = feedback_manifest_const(baseline), *a = feedback_manifest_const(now);
    char hb[32], ha[32];
    snprintf(hb, sizeof hb, "%s", b->metrics_hash);
    snprintf(ha, sizeof ha, "%s", a->metrics_hash);
    return s_differs(self, "gpu", b->gpu, a->gpu) && s_differs(self, "driver_version", b->driver_version, a->driver_version) &&
           s_differs(self, "profiler_version", b->profiler_version, a->profiler_version) &&
           s_differs(self, "clock_control", b->clock_control, a->clock_control) &&
           s_differs(self, "plan", b->plan, a->plan) && s_differs(self, "metrics_hash", hb, ha) &&
           s_differs(self, "profeed_version", b->profeed_version, a->profeed_version);
}

fb_comparison_t *comparison_new(const feedback_t *baseline, const feedback_t *now, const char *name)
{
    assert(baseline && now);
    char problem[512] = "";
    if (strcmp(feedback_profiler(baseline), feedback_profiler(now)) != 0)
        snprintf(problem, sizeof problem,
                 "the baseline was profiled by %s and this job by %s: their times and findings are not comparable",
                 feedback_profiler(baseline)[0] ? feedback_profiler(baseline) : "an unknown profiler",
                 feedback_profiler(now)[0] ? feedback_profiler(now) : "an unknown profiler");
    else if (feedback_status(baseline) != FB_OK || feedback_kernel_count(baseline) == 0)
        snprintf(problem, sizeof problem, "the baseline has no analyzed kernel to compare with (status %s)",
                 feedback_status_name(feedback_status(baseline)));
    if (problem[0])
        return comparison_new_problem(name, problem);
    fb_comparison_t *self = s_new(name);
    if (!self)
        return NULL;
    if (!s_match(self, baseline, now) || !s_differences(self, baseline, now)) {
        comparison_destroy(&self);
        return NULL;
    }
    s_overall(self);
    return self;
}

void comparison_attach(feedback_t *now, fb_comparison_t **comparison_p, const char *name)
{
    assert(now && comparison_p);
    if (!*comparison_p) {
        feedback_add_note(now, "baseline %.200s: not compared (out of memory)", name ? name : "");
        return;
    }
    if ((*comparison_p)->problem[0])
        feedback_add_note(now, "baseline %.200s: not compared: %s", name ? name : "", (*comparison_p)->problem);
    feedback_set_comparison(now, comparison_p);
}
