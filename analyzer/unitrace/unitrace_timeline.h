/* unitrace_timeline: the chrome trace unitrace writes with
 * --chrome-kernel-logging --chrome-itt-logging, reduced to what collation
 * needs: the benchmark windows (ITT tasks "ittapi::model run loop" and
 * "ittapi::model run loop::<label>") and each device kernel instance's time
 * range keyed by its instance id ("args": {"id": "<GlobalInstanceId>"}). */
#ifndef UNITRACE_TIMELINE_H
#define UNITRACE_TIMELINE_H

#include <stddef.h>

#include "pf_error.h"

#define UNITRACE_TIMELINE_MAX_BYTES ((size_t) 256 * 1024 * 1024)

typedef struct {
    char *label;       /* "default" for the bare task name */
    double start, end; /* microseconds */
} ut_segment_t;

typedef struct {
    long id;
    double start, end; /* microseconds */
} ut_instance_t;

typedef struct {
    ut_segment_t *segments; /* in timeline order */
    size_t segment_count;
    ut_instance_t *instances;
    size_t instance_count;
} unitrace_timeline_t;

/* Parses a trace (NUL bytes, which unitrace may leave, are ignored; a trace
 * cut short before its closing "]}" is closed). NULL with `err` set when it
 * is not a chrome trace. */
unitrace_timeline_t *unitrace_timeline_parse(const char *source, const char *bytes, size_t len,
                                             pf_error_t *err);
void unitrace_timeline_destroy(unitrace_timeline_t **self_p);

/* Whether the instance `id` ran entirely inside segment `s`. */
int unitrace_timeline_in_segment(const unitrace_timeline_t *self, size_t s, long id);

#endif
