/* feedback_wire: a feedback_t as the wire's Feedback message.
 *
 * The analyzer worker sends what the analysis found to the broker and on to
 * the agent as a profeed.Feedback: the rendered text and JSON plus the same
 * findings as structured data. The two enums differ (FB_OK is 0, while 0 on
 * the wire means "unset" and FEEDBACK_STATUS_OK is 1), so statuses are
 * mapped one by one; unknown numbers (NAN in feedback_t) leave the wire field
 * unset, because the wire refuses non-finite doubles. */
#ifndef FEEDBACK_WIRE_H
#define FEEDBACK_WIRE_H

#include "feedback.h"
#include "pf_error.h"
#include "profeed.pb-c.h"

/* The wire status for a feedback status. */
Profeed__FeedbackStatus feedback_wire_status(fb_status_t status);

/* The wire profiler for a profiler name ("ncu"); UNSPECIFIED when unknown. */
Profeed__Profiler feedback_wire_profiler(const char *name);

/* Builds a Feedback for `job_id` from `fb`, with `text` and `json` (the
 * rendered forms, may be NULL) copied in. Lists longer than the wire allows
 * are cut and a note says so. Returns a message that owns all its memory
 * (free it with wire_feedback_destroy: every part is malloc'd, as an unpacked message's are), or NULL when memory ran out. */
Profeed__Feedback *feedback_wire_new(const feedback_t *fb, const char *job_id, const char *text,
                                     const char *json);

/* Builds a Feedback that carries only a status and one error (a job that
 * could not be analyzed at all: bad input, timed out, failed after retries). */
Profeed__Feedback *feedback_wire_new_error(const char *job_id, Profeed__FeedbackStatus status,
                                           const char *error);

/* Appends a note to a message made by feedback_wire_new*(); false when
 * memory ran out or the list is full. */
bool feedback_wire_add_note(Profeed__Feedback *msg, const char *note);

/* The feedback a Feedback message carries, read back for a comparison
 * (comparison.h): profiler, status, kernels with their timings, findings by
 * kernel and category, and the manifest. Text, evidence and notes are not
 * read. `msg` must have passed wire_check. NULL when memory ran out. */
feedback_t *feedback_wire_read(const Profeed__Feedback *msg);

#endif
