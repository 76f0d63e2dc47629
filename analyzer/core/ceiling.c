#include "ceiling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double ceiling_left(const fb_kernel_t *kernel)
{
    double pct = kernel->ceiling_pct;
    double attain = isfinite(kernel->ceiling_attain_pct) && kernel->ceiling_attain_pct > 0 ? kernel->ceiling_attain_pct : 100;
    return isfinite(pct) && pct > 0 ? (pct < attain ? attain / pct : 1) : NAN;
}

/* The largest speedup a finding of the kernel still estimates (1 when none
 * does), and its category: a unit can be near its peak with wasted work
 * (uncoalesced loads fill L2 with unused sectors), and then the ceiling is
 * not where the kernel stops. */
static double s_cause_left(const feedback_t *fb, size_t kernel, const char **category)
{
    double best = 1;
    *category = "";
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel != kernel || !isfinite(f->speedup) || f->speedup <= 0)
            continue;
        double x = f->speedup < 99.9 ? 100 / (100 - f->speedup) : 1000;
        if (x > best) {
            best = x;
            *category = f->category;
        }
    }
    return best;
}

double ceiling_kernel_left(const feedback_t *fb, size_t kernel)
{
    const char *category;
    double roof = ceiling_left(feedback_kernel_const(fb, kernel));
    double cause = s_cause_left(fb, kernel, &category);
    return isfinite(roof) ? fmax(roof, cause) : NAN;
}

static void s_short_name(const fb_kernel_t *k, char *out, size_t cap)
{
    int n = (int) strlen(k->name);
    snprintf(out, cap, "%.*s%s", n > 60 ? 60 : n, k->name, n > 60 ? "..." : "");
}

void ceiling_judge(feedback_t *fb, double min_share, double within)
{
    size_t judged = 0, unknown = 0, furthest = 0;
    double furthest_left = 0;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        if (isfinite(k->share) && k->share < min_share)
            continue;
        double left = ceiling_kernel_left(fb, i);
        if (!isfinite(left)) {
            unknown++;
            continue;
        }
        if (judged++ == 0 || left > furthest_left) {
            furthest = i;
            furthest_left = left;
        }
    }
    if (judged == 0 || feedback_status(fb) != FB_OK) {
        feedback_set_stop(fb, false, "");
        return;
    }
    const fb_kernel_t *k = feedback_kernel_const(fb, furthest);
    const char *category;
    double roof = ceiling_left(k), cause = s_cause_left(fb, furthest, &category);
    char text[512], name[80];
    s_short_name(k, name, sizeof name);
    if (unknown > 0) {
        snprintf(text, sizeof text, "not judged whether to stop: %zu kernel%s above the %.0f%% share measured no "
                 "unit to put against its ceiling", unknown, unknown == 1 ? "" : "s", 100 * min_share);
        feedback_set_stop(fb, false, text);
    } else if (furthest_left <= within && judged == 1) {
        snprintf(text, sizeof text, "near the %s ceiling (%.0f%% of peak): at most %.2fx left; consider stopping",
                 k->ceiling_unit, k->ceiling_pct, furthest_left);
        feedback_set_stop(fb, true, text);
    } else if (furthest_left <= within) {
        snprintf(text, sizeof text, "every kernel above %.0f%% of the time is within %.2fx of its ceiling (the "
                 "furthest, %s, at %s %.0f%% of peak: at most %.2fx left); consider stopping",
                 100 * min_share, within, name, k->ceiling_unit, k->ceiling_pct, furthest_left);
        feedback_set_stop(fb, true, text);
    } else if (roof <= within) {
        snprintf(text, sizeof text, "not yet: %s runs its %s at %.0f%% of peak, but %s would still make it up to "
                 "%.2fx faster (the unit is busy with work that fix removes)", name, k->ceiling_unit, k->ceiling_pct,
                 category, cause);
        feedback_set_stop(fb, false, text);
    } else {
        snprintf(text, sizeof text, "not near the ceiling yet: %s runs its %s at %.0f%% of peak, up to %.2fx left "
                 "(stop is suggested within %.2fx)", name, k->ceiling_unit, k->ceiling_pct, furthest_left, within);
        feedback_set_stop(fb, false, text);
    }
}
