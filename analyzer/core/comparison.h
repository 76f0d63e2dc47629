/* comparison: what changed between a baseline's feedback and this one.
 *
 * An agent profiles round after round; the feedback of round N opens with
 * the change since round N-1 (docs/baselines.md). Kernels are matched by
 * name (then launch configuration), and the ones left over on both sides by
 * the order of their first launch when there are as many of each and the
 * two are one program (a kernel matched by name, or a single kernel each:
 * an agent renamed it); what is left after that appeared or disappeared. For each
 * pair: the mean time of one launch before and after, a noise band from the
 * launches measured (or COMPARISON_DEFAULT_BAND), the limiter before and
 * after, the findings resolved, new and unchanged, and a verdict. */
#ifndef COMPARISON_H
#define COMPARISON_H

#include <stddef.h>

#include "feedback.h"

/* The band when neither capture timed several launches of a kernel: the
 * +-2% that profile-diffing agents use, about ncu's run-to-run spread on
 * one kernel with --clock-control none (boost clocks move with temperature
 * and power). */
#define COMPARISON_DEFAULT_BAND 0.02
/* The narrowest band measured launches may give: launches of one run share
 * clocks and placement, so their spread understates the spread between two
 * runs. */
#define COMPARISON_MIN_BAND 0.01
/* Finding categories kept per list and kernel. */
#define COMPARISON_FINDINGS_MAX 16

typedef enum {
    CHANGE_NOT_TIMED,     /* a side measured no time */
    CHANGE_IMPROVED,
    CHANGE_REGRESSED,
    CHANGE_WITHIN_NOISE,
} change_verdict_t;

typedef struct {
    char category[COMPARISON_FINDINGS_MAX][32];
    size_t count;
} change_categories_t;

typedef struct {
    char *name;              /* the kernel now */
    char *baseline_name;     /* the kernel of the baseline it was matched with */
    const char *matched_by;  /* "name", "name without template arguments" or "launch order" (static) */
    double before_ns;        /* mean time of one launch; NAN when not measured */
    double after_ns;
    size_t before_launches;
    double change;           /* after / before - 1; NAN when not timed */
    double band;             /* relative noise band: 0.02 is +-2% */
    const char *band_source; /* "launches" or "default" (static) */
    char limiter_before[32];
    char limiter_after[32];
    bool limiter_close;      /* the limiters differ and one side's close call named the other's:
                                noise may have moved it (feedback.h, fb_close_t) */
    change_categories_t resolved, added, unchanged;
    change_verdict_t verdict;
} kernel_change_t;

struct fb_comparison_t {
    char baseline[256];      /* the baseline's job id or files */
    char problem[1024];      /* "" when compared, else why not */
    change_verdict_t verdict; /* over the matched kernels' time */
    double change, band;
    kernel_change_t *kernels;
    size_t kernel_count;
    char **appeared, **disappeared, **differences;
    size_t appeared_count, disappeared_count, difference_count;
};

/* Compares `now` with `baseline` (both analyzed feedbacks). A baseline that
 * cannot be compared (another profiler, no kernels) gives a comparison that
 * carries the problem. `name` says which baseline it was (a job id, files).
 * NULL when memory ran out. */
fb_comparison_t *comparison_new(const feedback_t *baseline, const feedback_t *now, const char *name);

/* A comparison that could not be made: `problem` says why. */
fb_comparison_t *comparison_new_problem(const char *name, const char *problem);

void comparison_destroy(fb_comparison_t **self_p);

/* Attaches the comparison to `now` (or, when memory ran out, a note), and a
 * note when it carries a problem: the job keeps its plain feedback. */
void comparison_attach(feedback_t *now, fb_comparison_t **comparison_p, const char *name);

/* "improved", "regressed", "within noise", "not timed". */
const char *comparison_verdict_name(change_verdict_t verdict);

#endif
