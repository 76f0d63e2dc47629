/* pass_dispatch: what the broker's Dispatch of a job's pass (whole or a
 * chunk) tells the job's analyzer beside the pass: the head (attempt, how
 * many passes to wait for, the request's metadata, language and shape) and
 * the AnalysisContext (the plan and target for the manifest, the baseline's
 * feedback or why there is none). Functions of the job alone: which baseline
 * a job may have is the broker's to decide (it knows owners and the
 * journal), and it hands the result in. */
#ifndef PASS_DISPATCH_H
#define PASS_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job_table.h"
#include "profeed.pb-c.h"

/* The head every Dispatch of the job's passes has; `head` is initialised. */
void pass_dispatch_head(const job_t *job, Profeed__Dispatch *head);

/* A Dispatch's context. The storage behind `msg` lives here;
 * pass_dispatch_context_clear() frees it. */
typedef struct {
    Profeed__AnalysisContext msg;
    char target[4096];
    char problem[512];   /* why the job has no baseline feedback, "" when it has or asked for none */
    uint8_t *owned;      /* a baseline read back from the journal, freed by _clear */
    size_t baseline_len; /* 0: no baseline feedback to send */
} pass_dispatch_context_t;

/* The context of `job`: its plan and target, and, when it asked for a
 * baseline, `baseline` (its packed Feedback of `len` bytes, which the
 * context owns when it is c->owned) or, when NULL, c->problem saying why
 * there is none (the caller writes it there first). */
void pass_dispatch_context_init(pass_dispatch_context_t *c, const job_t *job);
void pass_dispatch_context_baseline(pass_dispatch_context_t *c, const job_t *job, const uint8_t *baseline,
                                    size_t len);

/* Whether the baseline goes with a pass of `pass_len` bytes: only where the
 * two fit in one message of `max_msg` bytes, since a pass must never fail to
 * go for its baseline; else the context says why it did not. */
void pass_dispatch_context_with(pass_dispatch_context_t *c, bool with, size_t pass_len, size_t max_msg);

void pass_dispatch_context_clear(pass_dispatch_context_t *c);

#endif
