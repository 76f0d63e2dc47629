/* analysis: what every profiler's analysis shares: its options, and the
 * small helpers each would otherwise write again (whether a value was
 * measured, a percentage held to its range, text for the collated JSON). */
#ifndef ANALYSIS_H
#define ANALYSIS_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    /* Analyze kernels that take at least this share of profiled time (0..1). */
    double min_share;
    /* false (the default share): the busiest kernel is analyzed even below
     * min_share, so a run of many small kernels still gets feedback. true
     * (a share the user chose): kept strictly, and what it left out is said. */
    bool min_share_strict;
    /* At most this many kernels (0: no cap); the largest shares win. */
    size_t top;
    /* unitrace: analyze every benchmark window, not just the median and the
     * slowest when there are more than three. */
    bool all_segments;
    /* Say "consider stopping" when every kernel above min_share is within
     * this factor of its ceiling (ceiling.h; CEILING_STOP_WITHIN_DEFAULT). */
    double stop_within;
} analysis_options_t;

/* 5% of profiled time, no cap: every kernel that matters, few that don't. */
void analysis_options_default(analysis_options_t *options);

/* Whether a value was measured: NaN means "not measured" throughout. */
static inline bool analysis_has(double x)
{
    return !isnan(x);
}

/* A utilisation percentage held to 0..100 (profilers round past either
 * end: 100.02%); NaN stays NaN. */
double analysis_pct(double x);

/* A JSON string for text from a capture, made valid UTF-8 first (jansson
 * refuses anything else); NULL when out of memory. */
json_t *analysis_json_text(const char *text);

#endif
