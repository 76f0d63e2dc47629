#include "intel_topdown.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"

void intel_units_add(intel_units_t *units, const char *key, const char *name, intel_unit_kind_t kind,
                     double pct)
{
    if (isnan(pct) || units->count >= INTEL_UNITS_MAX)
        return;
    size_t i = units->count++;
    pct = analysis_pct(pct);
    /* Insertion keeps busiest first; a tie stays after what came before. */
    while (i > 0 && units->unit[i - 1].pct < pct) {
        units->unit[i] = units->unit[i - 1];
        i--;
    }
    units->unit[i] = (intel_unit_t){key, name, kind, pct};
}

const intel_unit_t *intel_units_busiest(const intel_units_t *units)
{
    return units->count ? &units->unit[0] : NULL;
}

const intel_unit_t *intel_units_find(const intel_units_t *units, const char *key)
{
    for (size_t i = 0; i < units->count; i++)
        if (strcmp(units->unit[i].key, key) == 0)
            return &units->unit[i];
    return NULL;
}

void intel_units_scale(intel_units_t *units, const char *key, double keep, double add)
{
    for (size_t i = 0; i < units->count; i++)
        if (strcmp(units->unit[i].key, key) == 0) {
            double x = units->unit[i].pct * keep + add;
            units->unit[i].pct = analysis_pct(x);
        }
}

static double s_max(const intel_units_t *units)
{
    double m = NAN;
    for (size_t i = 0; i < units->count; i++)
        if (isnan(m) || units->unit[i].pct > m)
            m = units->unit[i].pct;
    return m;
}

double intel_units_drop(const intel_units_t *before, const intel_units_t *after)
{
    double a = s_max(before), b = s_max(after);
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? (a - b) / 100 : 0;
}

void intel_units_evidence(fb_finding_t *f, const intel_units_t *units)
{
    char text[200];
    size_t used = 0;
    for (size_t i = 0; f && i < units->count && i < 4; i++) {
        int n = snprintf(text + used, sizeof text - used, "%s%s %.0f%%", i ? ", " : "",
                         units->unit[i].name, units->unit[i].pct);
        if (n < 0 || (size_t) n >= sizeof text - used)
            break;
        used += (size_t) n;
    }
    if (f && used > 0)
        finding_add_evidence(f, "units", units->unit[0].pct, "%", "busiest units: %s", text);
}

fb_finding_t *intel_finding(feedback_t *fb, size_t kernel, const char *category, double gain,
                            const char *model, const char *title, const char *action)
{
    bool modelled = !isnan(gain);
    double importance = modelled ? 100 * fmin(fmax(gain, 0), 0.999) : 5;
    fb_finding_t *f = feedback_add_finding(fb, kernel, category, importance, title, action);
    if (!f)
        return NULL;
    f->speedup = modelled ? importance : NAN;
    snprintf(f->source, sizeof f->source, "profeed:%s", model);
    return f;
}

static bool s_is_bound(const fb_finding_t *f)
{
    return strcmp(f->source, "profeed:headroom") == 0 || strcmp(f->source, "profeed:latency") == 0;
}

void intel_mark_primary(feedback_t *fb, size_t kernel, size_t first)
{
    fb_finding_t *best = NULL, *bound = NULL;
    for (size_t i = first; i < feedback_finding_count(fb); i++) {
        fb_finding_t *f = feedback_finding_mut(fb, i);
        if (f->kernel != kernel)
            continue;
        if (s_is_bound(f))
            bound = f;
        else if (isnan(f->speedup))
            continue; /* advice no model sizes never leads */
        if (!best || f->importance > best->importance)
            best = f;
    }
    if (bound && best && best != bound && best->importance < 100 * INTEL_GAIN_LEAD)
        best = bound;
    if (!best)
        return;
    best->primary = true;
    fb_kernel_t *k = feedback_kernel(fb, kernel);
    snprintf(k->bottleneck, sizeof k->bottleneck, "%s", best->category);
    snprintf(k->bottleneck_unit, sizeof k->bottleneck_unit, "%s", best->unit);
}

double intel_best_gain(const feedback_t *fb, size_t kernel, size_t first)
{
    double best = 0;
    for (size_t i = first; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel == kernel && !isnan(f->speedup) && f->speedup / 100 > best)
            best = f->speedup / 100;
    }
    return best;
}

void intel_set_ceiling(feedback_t *fb, size_t kernel, const intel_units_t *units)
{
    const intel_unit_t *top = intel_units_busiest(units);
    if (top)
        feedback_kernel_ceiling(feedback_kernel(fb, kernel), top->name, top->pct, 100);
}
