#include "feedback_wire.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"
#include "wire.h"
#include "wire_check.h"

Profeed__FeedbackStatus feedback_wire_status(fb_status_t status)
{
    switch (status) {
    case FB_OK: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK;
    case FB_NO_KERNELS: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_KERNELS;
    case FB_PROFILER_ERROR: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_PROFILER_ERROR;
    case FB_BAD_INPUT: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT;
    case FB_TIMED_OUT: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT;
    case FB_FAILED_AFTER_RETRIES: return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES;
    }
    assert(!"feedback_wire_status: a status this file does not map");
    return PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT;
}

Profeed__Profiler feedback_wire_profiler(const char *name)
{
    const profiler_t *p = profiler_by_name(name);
    return p ? p->id : PROFEED__PROFILER__PROFILER_UNSPECIFIED;
}

/* A malloc'd copy, or NULL for NULL and "" (the wire's "absent"). Sets *oom
 * when a copy was due and failed. */
static char *s_dup(const char *text, bool *oom)
{
    if (!text || !*text)
        return NULL;
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (!copy) {
        *oom = true;
        return NULL;
    }
    memcpy(copy, text, n);
    return copy;
}

/* Copies at most `max` strings from a feedback list into a new array. */
static char **s_dup_list(size_t count, size_t max, const char *(*get)(const feedback_t *, size_t),
                         const feedback_t *fb, size_t *n_out, bool *oom)
{
    *n_out = 0;
    if (count > max)
        count = max;
    if (count == 0)
        return NULL;
    char **list = calloc(count, sizeof *list);
    if (!list) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        list[*n_out] = s_dup(get(fb, i), oom);
        if (list[*n_out])
            (*n_out)++;
    }
    return list;
}

static Profeed__Evidence *s_evidence(const fb_evidence_t *ev, bool *oom)
{
    Profeed__Evidence *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__evidence__init(msg);
    /* The wire requires a metric; evidence that is only words says so. */
    msg->metric = s_dup(ev->metric[0] ? ev->metric : "(text)", oom);
    if (isfinite(ev->value)) {
        msg->has_value = 1;
        msg->value = ev->value;
    }
    msg->unit = s_dup(ev->unit, oom);
    msg->text = s_dup(ev->text, oom);
    return msg;
}

static Profeed__Finding *s_finding(const feedback_t *fb, const fb_finding_t *f, bool *oom)
{
    Profeed__Finding *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__finding__init(msg);
    if (f->kernel < feedback_kernel_count(fb))
        msg->kernel = s_dup(feedback_kernel_const(fb, f->kernel)->name, oom);
    msg->category = s_dup(f->category, oom);
    msg->has_importance = 1;
    msg->importance = isfinite(f->importance) && f->importance > 0 ? f->importance : 0;
    if (isfinite(f->speedup) && f->speedup >= 0) {
        msg->has_estimated_speedup = 1;
        msg->estimated_speedup = f->speedup;
    }
    msg->has_primary = 1;
    msg->primary = f->primary;
    msg->title = s_dup(f->title, oom);
    msg->action = s_dup(f->action, oom);
    msg->source = s_dup(f->source, oom);
    size_t n = f->evidence_count < WIRE_MAX_EVIDENCE ? f->evidence_count : WIRE_MAX_EVIDENCE;
    if (n > 0) {
        msg->evidence = calloc(n, sizeof *msg->evidence);
        if (!msg->evidence)
            *oom = true;
        for (size_t i = 0; msg->evidence && i < n; i++) {
            msg->evidence[msg->n_evidence] = s_evidence(&f->evidence[i], oom);
            if (msg->evidence[msg->n_evidence])
                msg->n_evidence++;
        }
    }
    return msg;
}

static Profeed__KernelSummary *s_kernel(const fb_kernel_t *k, bool *oom)
{
    Profeed__KernelSummary *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__kernel_summary__init(msg);
    msg->name = s_dup(k->name, oom);
    msg->has_launches = 1;
    msg->launches = k->launches;
    if (isfinite(k->time_ns) && k->time_ns >= 0) {
        msg->has_time_ns = 1;
        msg->time_ns = (uint64_t) llround(k->time_ns);
    }
    if (isfinite(k->share)) {
        msg->has_time_share = 1;
        msg->time_share = k->share < 0 ? 0 : k->share > 1 ? 1 : k->share;
    }
    msg->bottleneck = s_dup(k->bottleneck, oom);
    msg->block = s_dup(k->block, oom);
    msg->grid = s_dup(k->grid, oom);
    if (k->segment[0])
        msg->segment = s_dup(k->segment, oom);
    return msg;
}

static Profeed__Feedback *s_new(const char *job_id, bool *oom)
{
    Profeed__Feedback *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__feedback__init(msg);
    msg->job_id = s_dup(job_id, oom);
    return msg;
}

Profeed__Feedback *feedback_wire_new(const feedback_t *fb, const char *job_id, const char *text,
                                     const char *json)
{
    assert(fb);
    bool oom = false;
    Profeed__Feedback *msg = s_new(job_id, &oom);
    if (!msg)
        return NULL;
    msg->has_status = 1;
    msg->status = feedback_wire_status(feedback_status(fb));
    msg->text = s_dup(text, &oom);
    msg->json = s_dup(json, &oom);
    Profeed__Profiler profiler = feedback_wire_profiler(feedback_profiler(fb));
    if (profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED) {
        msg->has_profiler = 1;
        msg->profiler = profiler;
    }
    size_t kernels = feedback_kernel_count(fb);
    size_t nk = kernels < WIRE_MAX_KERNELS ? kernels : WIRE_MAX_KERNELS;
    if (nk > 0 && (msg->kernels = calloc(nk, sizeof *msg->kernels)) == NULL)
        oom = true;
    for (size_t i = 0; msg->kernels && i < nk; i++) {
        msg->kernels[msg->n_kernels] = s_kernel(feedback_kernel_const(fb, i), &oom);
        if (msg->kernels[msg->n_kernels])
            msg->n_kernels++;
    }
    size_t findings = feedback_finding_count(fb);
    size_t nf = findings < WIRE_MAX_FINDINGS ? findings : WIRE_MAX_FINDINGS;
    if (nf > 0 && (msg->findings = calloc(nf, sizeof *msg->findings)) == NULL)
        oom = true;
    for (size_t i = 0; msg->findings && i < nf; i++) {
        msg->findings[msg->n_findings] = s_finding(fb, feedback_finding(fb, i), &oom);
        if (msg->findings[msg->n_findings])
            msg->n_findings++;
    }
    msg->errors = s_dup_list(feedback_error_count(fb), WIRE_MAX_NOTES, feedback_error, fb,
                             &msg->n_errors, &oom);
    /* One slot is kept for the note about cut lists below. */
    msg->notes = s_dup_list(feedback_note_count(fb), WIRE_MAX_NOTES - 1, feedback_note, fb,
                            &msg->n_notes, &oom);
    msg->missing = s_dup_list(feedback_missing_count(fb), WIRE_MAX_NOTES, feedback_missing, fb,
                              &msg->n_missing, &oom);
    if (!oom && (kernels > nk || findings > nf)) {
        if (!feedback_wire_add_note(msg, "the structured lists were cut to the wire's limits; "
                                         "the text and json carry everything"))
            oom = true;
    }
    if (oom)
        wire_feedback_destroy(&msg);
    return msg;
}

Profeed__Feedback *feedback_wire_new_error(const char *job_id, Profeed__FeedbackStatus status,
                                           const char *error)
{
    bool oom = false;
    Profeed__Feedback *msg = s_new(job_id, &oom);
    if (!msg)
        return NULL;
    msg->has_status = 1;
    msg->status = status;
    msg->errors = calloc(1, sizeof *msg->errors);
    if (!msg->errors)
        oom = true;
    else if ((msg->errors[0] = s_dup(error, &oom)) != NULL)
        msg->n_errors = 1;
    msg->text = s_dup(error, &oom);
    if (oom)
        wire_feedback_destroy(&msg);
    return msg;
}

bool feedback_wire_add_note(Profeed__Feedback *msg, const char *note)
{
    assert(msg && note);
    if (msg->n_notes >= WIRE_MAX_NOTES)
        return false;
    char **grown = realloc(msg->notes, (msg->n_notes + 1) * sizeof *grown);
    if (!grown)
        return false;
    msg->notes = grown;
    bool oom = false;
    char *copy = s_dup(note, &oom);
    if (!copy)
        return false;
    msg->notes[msg->n_notes++] = copy;
    return true;
}
