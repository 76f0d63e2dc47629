/* close_call: whether another profile of a kernel could lead with another
 * finding (fb_kernel_t's close call), for every analysis.
 *
 * The kernel is judged again on NOISE_READINGS readings of its counters as
 * another profile could read them (noise.h), each by the analysis' own
 * callback into a scratch feedback; the other first findings they give are
 * recorded on the kernel, with the action of the first such reading where
 * the kernel does not list that finding: a verdict on one of the analysis'
 * lines is said to be one, and what the other side would have the agent do.
 * A first finding of the same category on another unit (a compute bound on
 * another pipe, whose action is that pipe's) is another. The first finding
 * itself is never changed. */
#ifndef CLOSE_CALL_H
#define CLOSE_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "feedback.h"

/* Analyzes reading `reading` of the kernel, its counters moved by noise of
 * `sigma` (noise.h), into kernel `index` of `scratch` (a feedback of the same
 * profiler holding that one kernel). */
typedef void (*close_call_fn)(void *arg, unsigned reading, double sigma, feedback_t *scratch, size_t index);

/* Judges kernel `index` of `fb`, whose own findings start at index
 * `first_finding`, with `reanalyze`. A kernel without a first finding, or
 * memory running out, leaves it not judged (close_of 0). */
void close_call_judge(feedback_t *fb, size_t index, size_t first_finding, close_call_fn reanalyze, void *arg);

#endif
