#include "ceiling.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double ceiling_left(const fb_kernel_t *kernel)
{
    double pct = kernel->ceiling_pct;
    return isfinite(pct) && pct > 0 ? 100 / (pct < 100 ? pct : 100) : NAN;
}

static void s_short_name(const fb_kernel_t *k, char *out, size_t cap)
{
    int n = (int) strlen(k->name);
    snprintf(out, cap, "%.*s%s", n > 60 ? 60 : n, k->name, n > 60 ? "..." : "");
}

void ceiling_judge(feedback_t *fb, double min_share, double within)
{
    size_t judged = 0, unknown = 0;
    const fb_kernel_t *furthest = NULL;
    double furthest_left = 0;
    for (size_t i = 0; i < feedback_kernel_count(fb); i++) {
        const fb_kernel_t *k = feedback_kernel_const(fb, i);
        if (isfinite(k->share) && k->share < min_share)
            continue;
        double left = ceiling_left(k);
        if (!isfinite(left)) {
            unknown++;
            continue;
        }
        judged++;
        if (!furthest || left > furthest_left) {
            furthest = k;
            furthest_left = left;
        }
    }
    char text[512], name[80];
    if (judged == 0 || feedback_status(fb) != FB_OK) {
        feedback_set_stop(fb, false, "");
        return;
    }
    s_short_name(furthest, name, sizeof name);
    if (unknown > 0) {
        snprintf(text, sizeof text, "not judged whether to stop: %zu kernel%s above the %.0f%% share measured no "
                 "unit to put against its ceiling", unknown, unknown == 1 ? "" : "s", 100 * min_share);
        feedback_set_stop(fb, false, text);
    } else if (furthest_left <= within && judged == 1) {
        snprintf(text, sizeof text, "near the %s ceiling (%.0f%% of peak): at most %.2fx left; consider stopping",
                 furthest->ceiling_unit, furthest->ceiling_pct, furthest_left);
        feedback_set_stop(fb, true, text);
    } else if (furthest_left <= within) {
        snprintf(text, sizeof text, "every kernel above %.0f%% of the time is within %.2fx of its ceiling (the "
                 "furthest, %s, at %s %.0f%% of peak: at most %.2fx left); consider stopping",
                 100 * min_share, within, name, furthest->ceiling_unit, furthest->ceiling_pct, furthest_left);
        feedback_set_stop(fb, true, text);
    } else {
        snprintf(text, sizeof text, "not near the ceiling yet: %s runs its %s at %.0f%% of peak, up to %.2fx left "
                 "(stop is suggested within %.2fx)", name, furthest->ceiling_unit, furthest->ceiling_pct,
                 furthest_left, within);
        feedback_set_stop(fb, false, text);
    }
}
