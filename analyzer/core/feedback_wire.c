#include "feedback_wire.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comparison.h"
#include "profiler.h"
#include "textbuf.h"
#include "utf8.h"
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

static Profeed__SourceLine *s_line(const fb_line_t *l, bool *oom)
{
    Profeed__SourceLine *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__source_line__init(msg);
    msg->has_line = l->line != 0;
    msg->line = l->line;
    msg->has_address = 1;
    msg->address = l->address;
    msg->file = s_dup(l->file, oom);
    msg->text = s_dup(l->text, oom);
    msg->sass = s_dup(l->sass, oom);
    msg->has_share = isfinite(l->share);
    msg->share = l->share;
    msg->measure = s_dup(l->measure, oom);
    if (isfinite(l->value)) {
        msg->has_value = 1;
        msg->value = l->value;
    }
    msg->unit = s_dup(l->unit, oom);
    msg->stall = s_dup(l->stall, oom);
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
    if (f->kernel < feedback_kernel_count(fb)) {
        msg->kernel = s_dup(feedback_kernel_const(fb, f->kernel)->name, oom);
        if (f->kernel <= UINT32_MAX) {
            msg->has_kernel_index = 1;
            msg->kernel_index = (uint32_t) f->kernel;
        }
    }
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
    if (f->line_count > 0) {
        msg->lines = calloc(f->line_count, sizeof *msg->lines);
        if (!msg->lines)
            *oom = true;
        for (size_t i = 0; msg->lines && i < f->line_count; i++) {
            msg->lines[msg->n_lines] = s_line(&f->lines[i], oom);
            if (msg->lines[msg->n_lines])
                msg->n_lines++;
        }
    }
    return msg;
}

/* The kernel's close call (feedback.h), or NULL where it was not judged. */
static Profeed__CloseCall *s_close_call(const fb_kernel_t *k, bool *oom)
{
    if (k->close_of == 0)
        return NULL;
    Profeed__CloseCall *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__close_call__init(msg);
    msg->has_readings = msg->has_same_first = 1;
    msg->readings = k->close_of;
    msg->same_first = k->close_same;
    if (isfinite(k->close_noise_pct)) {
        msg->has_noise_pct = 1;
        msg->noise_pct = k->close_noise_pct;
    }
    if (k->close_count > 0 && (msg->other_firsts = calloc(k->close_count, sizeof *msg->other_firsts)) == NULL)
        *oom = true;
    for (size_t i = 0; msg->other_firsts && i < k->close_count; i++) {
        Profeed__OtherFirst *o = malloc(sizeof *o);
        if (!o) {
            *oom = true;
            break;
        }
        profeed__other_first__init(o);
        o->category = s_dup(k->close[i].category, oom);
        if (k->close[i].unit[0])
            o->unit = s_dup(k->close[i].unit, oom);
        o->has_readings = 1;
        o->readings = k->close[i].readings;
        msg->other_firsts[msg->n_other_firsts++] = o;
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
    if (k->bottleneck_unit[0])
        msg->bottleneck_unit = s_dup(k->bottleneck_unit, oom);
    msg->block = s_dup(k->block, oom);
    msg->grid = s_dup(k->grid, oom);
    if (k->segment[0])
        msg->segment = s_dup(k->segment, oom);
    msg->close_call = s_close_call(k, oom);
    return msg;
}

/* s_dup for a one-line wire field whose text may come from a capture (the
 * device name in the manifest, and the differences quoting it): valid UTF-8,
 * control characters as '?', as the wire's one-line rule wants. */
static char *s_dup_line(const char *text, bool *oom)
{
    if (!text || !*text)
        return NULL;
    char *clean = utf8_clean_dup(text);
    if (!clean) {
        *oom = true;
        return NULL;
    }
    for (char *p = clean; *p; p++)
        if ((unsigned char) *p < 0x20 || *p == 0x7f)
            *p = '?';
    return clean;
}

static Profeed__KernelTiming *s_timing(const fb_kernel_t *k, bool *oom)
{
    Profeed__KernelTiming *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__kernel_timing__init(msg);
    msg->name = s_dup(k->name, oom);
    if (k->launch_order != SIZE_MAX && k->launch_order <= UINT32_MAX) {
        msg->has_launch_order = 1;
        msg->launch_order = (uint32_t) k->launch_order;
    }
    if (isfinite(k->launch_sd_ns) && k->launch_sd_ns >= 0) {
        msg->has_launch_sd_ns = 1;
        msg->launch_sd_ns = k->launch_sd_ns;
    }
    if (k->launch_ids[0])
        msg->launch_ids = s_dup(k->launch_ids, oom);
    return msg;
}

static Profeed__Manifest *s_manifest(const feedback_t *fb, size_t kernels, bool *oom)
{
    const fb_manifest_t *m = feedback_manifest_const(fb);
    Profeed__Manifest *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__manifest__init(msg);
    msg->gpu = s_dup_line(m->gpu, oom);
    msg->driver_version = s_dup_line(m->driver_version, oom);
    Profeed__Profiler profiler = feedback_wire_profiler(feedback_profiler(fb));
    msg->has_profiler = profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED;
    msg->profiler = profiler;
    msg->profiler_version = s_dup_line(m->profiler_version, oom);
    msg->clock_control = s_dup_line(m->clock_control, oom);
    msg->plan = s_dup_line(m->plan, oom);
    msg->metrics_hash = s_dup_line(m->metrics_hash, oom);
    if (m->metrics_count > 0) {
        msg->has_metrics_count = 1;
        msg->metrics_count = (uint32_t) (m->metrics_count < UINT32_MAX ? m->metrics_count : UINT32_MAX);
    }
    msg->profeed_version = s_dup_line(m->profeed_version, oom);
    msg->target = s_dup_line(m->target, oom);
    if (kernels > 0 && (msg->kernel_timings = calloc(kernels, sizeof *msg->kernel_timings)) == NULL)
        *oom = true;
    for (size_t i = 0; msg->kernel_timings && i < kernels; i++) {
        msg->kernel_timings[msg->n_kernel_timings] = s_timing(feedback_kernel_const(fb, i), oom);
        if (msg->kernel_timings[msg->n_kernel_timings])
            msg->n_kernel_timings++;
    }
    return msg;
}

static Profeed__ChangeVerdict s_verdict(change_verdict_t v)
{
    switch (v) {
    case CHANGE_IMPROVED: return PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_IMPROVED;
    case CHANGE_REGRESSED: return PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_REGRESSED;
    case CHANGE_WITHIN_NOISE: return PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_WITHIN_NOISE;
    case CHANGE_NOT_TIMED: break;
    }
    return PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_UNSPECIFIED;
}

/* A finite number into an optional double field. */
#define S_NUMBER(msg, field, x)                                                                                       \
    do {                                                                                                              \
        if (isfinite(x)) {                                                                                            \
            (msg)->has_##field = 1;                                                                                   \
            (msg)->field = (x);                                                                                       \
        }                                                                                                             \
    } while (0)

static char **s_categories(const change_categories_t *list, size_t *n, bool *oom)
{
    *n = 0;
    if (list->count == 0)
        return NULL;
    char **out = calloc(list->count, sizeof *out);
    if (!out) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < list->count; i++)
        if ((out[*n] = s_dup(list->category[i], oom)) != NULL)
            (*n)++;
    return out;
}

static char **s_strings(char *const *items, size_t count, size_t max, size_t *n, bool *oom)
{
    *n = 0;
    if (count > max)
        count = max;
    if (count == 0)
        return NULL;
    char **out = calloc(count, sizeof *out);
    if (!out) {
        *oom = true;
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        if ((out[*n] = s_dup(items[i], oom)) != NULL)
            (*n)++;
    return out;
}

static Profeed__KernelChange *s_change(const kernel_change_t *c, bool *oom)
{
    Profeed__KernelChange *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__kernel_change__init(msg);
    msg->name = s_dup(c->name, oom);
    msg->baseline_name = s_dup(c->baseline_name, oom);
    msg->matched_by = s_dup(c->matched_by, oom);
    S_NUMBER(msg, time_before_ns, c->before_ns);
    S_NUMBER(msg, time_after_ns, c->after_ns);
    S_NUMBER(msg, change, c->change);
    S_NUMBER(msg, noise_band, c->band);
    msg->noise_source = s_dup(c->band_source, oom);
    msg->limiter_before = s_dup(c->limiter_before, oom);
    msg->limiter_after = s_dup(c->limiter_after, oom);
    msg->resolved = s_categories(&c->resolved, &msg->n_resolved, oom);
    msg->added = s_categories(&c->added, &msg->n_added, oom);
    msg->unchanged = s_categories(&c->unchanged, &msg->n_unchanged, oom);
    msg->has_limiter_close_call = c->limiter_close;
    msg->limiter_close_call = c->limiter_close;
    Profeed__ChangeVerdict v = s_verdict(c->verdict);
    msg->has_verdict = v != PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_UNSPECIFIED;
    msg->verdict = v;
    return msg;
}

static Profeed__Comparison *s_comparison(const fb_comparison_t *c, bool *oom)
{
    Profeed__Comparison *msg = malloc(sizeof *msg);
    if (!msg) {
        *oom = true;
        return NULL;
    }
    profeed__comparison__init(msg);
    msg->baseline = s_dup_line(c->baseline, oom);
    msg->problem = s_dup_line(c->problem, oom);
    Profeed__ChangeVerdict v = s_verdict(c->verdict);
    msg->has_verdict = !c->problem[0] && v != PROFEED__CHANGE_VERDICT__CHANGE_VERDICT_UNSPECIFIED;
    msg->verdict = v;
    S_NUMBER(msg, change, c->change);
    S_NUMBER(msg, noise_band, c->band);
    size_t n = c->kernel_count < WIRE_MAX_KERNELS ? c->kernel_count : WIRE_MAX_KERNELS;
    if (n > 0 && (msg->kernels = calloc(n, sizeof *msg->kernels)) == NULL)
        *oom = true;
    for (size_t i = 0; msg->kernels && i < n; i++)
        if ((msg->kernels[msg->n_kernels] = s_change(&c->kernels[i], oom)) != NULL)
            msg->n_kernels++;
    msg->appeared = s_strings(c->appeared, c->appeared_count, WIRE_MAX_KERNELS, &msg->n_appeared, oom);
    msg->disappeared = s_strings(c->disappeared, c->disappeared_count, WIRE_MAX_KERNELS, &msg->n_disappeared, oom);
    size_t nd = c->difference_count < WIRE_MAX_NOTES ? c->difference_count : WIRE_MAX_NOTES;
    if (nd > 0 && (msg->differences = calloc(nd, sizeof *msg->differences)) == NULL)
        *oom = true;
    for (size_t i = 0; msg->differences && i < nd; i++)
        if ((msg->differences[msg->n_differences] = s_dup_line(c->differences[i], oom)) != NULL)
            msg->n_differences++;
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
    msg->manifest = s_manifest(fb, msg->n_kernels, &oom);
    if (feedback_comparison(fb))
        msg->comparison = s_comparison(feedback_comparison(fb), &oom);
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

static fb_status_t s_status_from(Profeed__FeedbackStatus status)
{
    switch (status) {
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK: return FB_OK;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_KERNELS: return FB_NO_KERNELS;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_PROFILER_ERROR: return FB_PROFILER_ERROR;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT: return FB_TIMED_OUT;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES: return FB_FAILED_AFTER_RETRIES;
    default: return FB_BAD_INPUT; /* bad input, no capable worker: nothing analyzed */
    }
}

static void s_copy(char *out, size_t cap, const char *text)
{
    snprintf(out, cap, "%s", text ? text : "");
}

feedback_t *feedback_wire_read(const Profeed__Feedback *msg)
{
    assert(msg);
    feedback_t *fb = feedback_new(msg->has_profiler ? profiler_name_or(msg->profiler, "") : "");
    if (!fb)
        return NULL;
    feedback_set_status(fb, msg->has_status ? s_status_from(msg->status) : FB_BAD_INPUT);
    const Profeed__Manifest *m = msg->manifest;
    for (size_t i = 0; i < msg->n_kernels; i++) {
        const Profeed__KernelSummary *k = msg->kernels[i];
        size_t index = feedback_add_kernel(fb, k->name, k->block ? k->block : "", k->grid ? k->grid : "",
                                           k->has_launches ? (size_t) k->launches : 0,
                                           k->has_time_ns ? (double) k->time_ns : NAN,
                                           k->has_time_share ? k->time_share : NAN);
        if (index == (size_t) -1) {
            feedback_destroy(&fb);
            return NULL;
        }
        fb_kernel_t *kernel = feedback_kernel(fb, index);
        s_copy(kernel->bottleneck, sizeof kernel->bottleneck, k->bottleneck);
        s_copy(kernel->bottleneck_unit, sizeof kernel->bottleneck_unit, k->bottleneck_unit);
        const Profeed__CloseCall *cc = k->close_call;
        if (cc && cc->has_readings && cc->readings > 0) { /* wire_check bounds the counts */
            feedback_kernel_close(kernel, cc->readings, cc->has_same_first ? cc->same_first : 0,
                                  cc->has_noise_pct ? cc->noise_pct : NAN);
            for (size_t o = 0; o < cc->n_other_firsts; o++)
                feedback_kernel_add_close(kernel, cc->other_firsts[o]->category, cc->other_firsts[o]->unit,
                                          cc->other_firsts[o]->has_readings ? cc->other_firsts[o]->readings : 0,
                                          false, NULL);
        }
        /* The timings are parallel to the kernels; one that names another
         * kernel is not this one's. */
        const Profeed__KernelTiming *t = m && i < m->n_kernel_timings ? m->kernel_timings[i] : NULL;
        if (t && t->name && strcmp(t->name, k->name) == 0) {
            if (t->has_launch_order)
                kernel->launch_order = t->launch_order;
            if (t->has_launch_sd_ns && t->launch_sd_ns >= 0)
                kernel->launch_sd_ns = t->launch_sd_ns;
            s_copy(kernel->launch_ids, sizeof kernel->launch_ids, t->launch_ids);
            for (char *p = kernel->launch_ids; *p; p++) /* printed as it came: no control bytes */
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                    *p = '?';
        }
    }
    for (size_t i = 0; i < msg->n_findings; i++) {
        const Profeed__Finding *f = msg->findings[i];
        size_t kernel = (size_t) -1;
        /* By index where the sender gave one that names this kernel (two
         * kernels may share a name), else the first of that name. */
        if (f->kernel && f->has_kernel_index && f->kernel_index < feedback_kernel_count(fb) &&
            strcmp(feedback_kernel_const(fb, f->kernel_index)->name, f->kernel) == 0)
            kernel = f->kernel_index;
        for (size_t k = 0; f->kernel && k < feedback_kernel_count(fb) && kernel == (size_t) -1; k++)
            if (strcmp(feedback_kernel_const(fb, k)->name, f->kernel) == 0)
                kernel = k;
        if (kernel == (size_t) -1)
            continue; /* a finding about the whole program: no kernel to compare it on */
        fb_finding_t *finding = feedback_add_finding(fb, kernel, f->category, f->has_importance ? f->importance : 0,
                                                     f->title, f->action);
        if (!finding) {
            feedback_destroy(&fb);
            return NULL;
        }
        finding->primary = f->has_primary && f->primary;
    }
    if (m) {
        fb_manifest_t *to = feedback_manifest(fb);
        s_copy(to->gpu, sizeof to->gpu, m->gpu);
        s_copy(to->driver_version, sizeof to->driver_version, m->driver_version);
        s_copy(to->profiler_version, sizeof to->profiler_version, m->profiler_version);
        s_copy(to->clock_control, sizeof to->clock_control, m->clock_control);
        s_copy(to->plan, sizeof to->plan, m->plan);
        s_copy(to->metrics_hash, sizeof to->metrics_hash, m->metrics_hash);
        to->metrics_count = m->has_metrics_count ? m->metrics_count : 0;
        s_copy(to->profeed_version, sizeof to->profeed_version, m->profeed_version);
        s_copy(to->target, sizeof to->target, m->target);
    } else {
        /* A feedback from before manifests: its version is not ours. */
        feedback_manifest(fb)->profeed_version[0] = '\0';
    }
    return fb;
}
