/* pass_dispatch: what a Dispatch of a job's pass says beside it (see
 * pass_dispatch.h). */
#include "pass_dispatch.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The request's pass plan as the manifest names it: the plan a single
 * spec without arguments names, "custom" for passes with arguments, and
 * "default" (the collector's default plan for its profiler) when the request
 * named none. */
static const char *s_plan_name(const Profeed__JobRequest *req)
{
    if (req->n_passes == 0)
        return "default";
    if (req->n_passes == 1 && req->passes[0]->n_args == 0 && req->passes[0]->name && *req->passes[0]->name)
        return req->passes[0]->name;
    return "custom";
}

/* What the job runs, in one line for the manifest: its command line, or
 * its kernel and problem files. Control characters become '?' (a line on
 * the wire has none). */
static void s_target(const Profeed__JobRequest *req, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    if (req->target_case == PROFEED__JOB_REQUEST__TARGET_COMMAND && req->command) {
        for (size_t i = 0; i < req->command->n_argv && used + 1 < cap; i++) {
            int w = snprintf(out + used, cap - used, "%s%s", i ? " " : "", req->command->argv[i]);
            used = w > 0 ? used + (size_t) w : cap;
        }
    } else if (req->target_case == PROFEED__JOB_REQUEST__TARGET_KERNEL && req->kernel) {
        snprintf(out, cap, "kernel %s, problem %s",
                 req->kernel->kernel_file && req->kernel->kernel_file->name ? req->kernel->kernel_file->name : "?",
                 req->kernel->problem_file && req->kernel->problem_file->name ? req->kernel->problem_file->name : "?");
    }
    for (char *p = out; *p; p++)
        if ((unsigned char) *p < 0x20 || *p == 0x7f)
            *p = '?';
}

void pass_dispatch_context_init(pass_dispatch_context_t *c, const job_t *job)
{
    assert(c && job && job->request);
    profeed__analysis_context__init(&c->msg);
    c->problem[0] = '\0';
    c->owned = NULL;
    c->baseline_len = 0;
    s_target(job->request, c->target, sizeof c->target);
    c->msg.plan = (char *) s_plan_name(job->request);
    c->msg.target = c->target[0] ? c->target : NULL;
}

void pass_dispatch_context_baseline(pass_dispatch_context_t *c, const job_t *job, const uint8_t *baseline,
                                    size_t len)
{
    assert(c && job && job->request->baseline_job_id);
    c->msg.baseline_job_id = job->request->baseline_job_id;
    c->msg.has_baseline_feedback = baseline != NULL;
    c->msg.baseline_feedback.data = (uint8_t *) baseline;
    c->msg.baseline_feedback.len = c->baseline_len = baseline ? len : 0;
    c->msg.baseline_problem = c->problem[0] ? c->problem : NULL;
}

void pass_dispatch_context_with(pass_dispatch_context_t *c, bool with, size_t pass_len, size_t max_msg)
{
    /* 64 KiB for the Envelope's other fields. */
    bool fits = with && c->baseline_len > 0 && c->baseline_len + pass_len + 65536 <= max_msg;
    c->msg.has_baseline_feedback = fits;
    c->msg.baseline_feedback.len = fits ? c->baseline_len : 0;
    if (with && c->baseline_len > 0 && !fits)
        c->msg.baseline_problem = (char *) "its feedback and this job's first pass do not fit in one message";
    else
        c->msg.baseline_problem = c->problem[0] ? c->problem : NULL;
}

void pass_dispatch_context_clear(pass_dispatch_context_t *c)
{
    free(c->owned);
    c->owned = NULL;
}

void pass_dispatch_head(const job_t *job, Profeed__Dispatch *head)
{
    assert(job && head);
    profeed__dispatch__init(head);
    head->has_attempt = 1;
    head->attempt = job->attempt;
    head->has_pass_count = 1;
    head->pass_count = job->pass_count;
    head->metadata = job->request->metadata;
    head->has_language = 1;
    head->language = job->request->language;
    head->shape = job->request->shape;
}
