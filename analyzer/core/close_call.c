#include "close_call.h"

#include <stdio.h>
#include <string.h>

#include "noise.h"

/* Whether the kernel's own findings (from index `first` of the feedback)
 * include one of `category` on `unit`. */
static bool s_listed(const feedback_t *fb, size_t kernel, size_t first, const char *category, const char *unit)
{
    for (size_t i = first; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (f->kernel == kernel && strcmp(f->category, category) == 0 && strcmp(f->unit, unit) == 0)
            return true;
    }
    return false;
}

/* The action of the finding a feedback's analysis of one kernel put first. */
static const char *s_primary_action(const feedback_t *fb)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        if (feedback_finding(fb, i)->primary)
            return feedback_finding(fb, i)->action;
    return NULL;
}

void close_call_judge(feedback_t *fb, size_t index, size_t first_finding, close_call_fn reanalyze, void *arg)
{
    fb_kernel_t *kernel = feedback_kernel(fb, index);
    if (!kernel->bottleneck[0])
        return;
    struct {
        char category[32];
        char unit[16];
        unsigned readings;
        char action[1024];
    } other[NOISE_READINGS];
    size_t others = 0;
    unsigned same = 0;
    for (unsigned reading = 0; reading < NOISE_READINGS; reading++) {
        feedback_t *scratch = feedback_new(feedback_profiler(fb));
        size_t at = scratch ? feedback_add_kernel(scratch, kernel->name, kernel->block, kernel->grid,
                                                  kernel->launches, kernel->time_ns, kernel->share)
                            : (size_t) -1;
        if (at == (size_t) -1) {
            feedback_destroy(&scratch);
            return;
        }
        reanalyze(arg, reading, NOISE_SIGMA, scratch, at);
        const char *first = feedback_kernel_const(scratch, at)->bottleneck;
        const char *unit = feedback_kernel_const(scratch, at)->bottleneck_unit;
        if (!first[0])
            first = "none";
        if (strcmp(first, kernel->bottleneck) == 0 && strcmp(unit, kernel->bottleneck_unit) == 0) {
            same++;
        } else {
            size_t i = 0;
            while (i < others && (strcmp(other[i].category, first) != 0 || strcmp(other[i].unit, unit) != 0))
                i++;
            if (i == others) {
                const char *action = s_primary_action(scratch);
                snprintf(other[i].category, sizeof other[i].category, "%s", first);
                snprintf(other[i].unit, sizeof other[i].unit, "%s", unit);
                snprintf(other[i].action, sizeof other[i].action, "%s", action ? action : "");
                other[others++].readings = 0;
            }
            other[i].readings++;
        }
        feedback_destroy(&scratch);
    }
    feedback_kernel_close(kernel, NOISE_READINGS, same, 100 * NOISE_SIGMA);
    for (size_t i = 0; i < others; i++)
        feedback_kernel_add_close(kernel, other[i].category, other[i].unit, other[i].readings,
                                  s_listed(fb, index, first_finding, other[i].category, other[i].unit),
                                  other[i].action);
}
