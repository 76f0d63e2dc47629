#include "job_table.h"

#include <assert.h>
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_assert.h"
#include "pf_log.h"
#include "profiler.h"
#include "wire.h"

struct job_table_t {
    zhashx_t *jobs; /* id -> job_t, owned */
    job_t *queue_head, *queue_tail; /* the QUEUED jobs, oldest (lowest seq) first */
    uint64_t next_seq;
    size_t counts[JOB_FINISHED + 1];
    size_t feedback_bytes; /* of FINISHED jobs */
    size_t pass_bytes;     /* retained passes, of unfinished jobs */
    zhashx_t *unfinished; /* agent key -> size_t *, jobs not FINISHED */
};

/* Keeps the per-agent count of unfinished jobs as a job starts or ends. */
static void s_agent_count(job_table_t *self, const job_t *job, int delta)
{
    size_t *n = zhashx_lookup(self->unfinished, job->agent_key);
    if (!n) {
        if (delta < 0)
            return;
        n = calloc(1, sizeof *n);
        if (!n)
            return; /* out of memory: this agent is not limited */
        zhashx_insert(self->unfinished, job->agent_key, n);
    }
    if (delta < 0 && *n > 0)
        (*n)--;
    else if (delta > 0)
        (*n)++;
    if (*n == 0)
        zhashx_delete(self->unfinished, job->agent_key);
}

static void s_free_count(void **item)
{
    free(*item);
    *item = NULL;
}

static void s_pass_free(job_pass_t *pass)
{
    if (pass->frame)
        zframe_destroy(&pass->frame);
    else
        free((uint8_t *) pass->bytes);
    pass->bytes = NULL;
}

static void s_job_free(job_t **job_p)
{
    job_t *job = *job_p;
    if (!job)
        return;
    wire_job_request_destroy(&job->request);
    free(job->request_bytes);
    for (size_t i = 0; i < job->pass_len; i++)
        s_pass_free(&job->passes[i]);
    free(job->passes);
    free(job->feedback);
    free(job);
    *job_p = NULL;
}

static void s_job_destructor(void **item) { s_job_free((job_t **) item); }

job_table_t *job_table_new(void)
{
    job_table_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->jobs = zhashx_new();
    self->unfinished = zhashx_new();
    if (!self->jobs || !self->unfinished) {
        zhashx_destroy(&self->jobs);
        zhashx_destroy(&self->unfinished);
        free(self);
        return NULL;
    }
    zhashx_set_destructor(self->jobs, s_job_destructor);
    zhashx_set_destructor(self->unfinished, s_free_count);
    return self;
}

void job_table_destroy(job_table_t **self_p)
{
    assert(self_p);
    job_table_t *self = *self_p;
    if (!self)
        return;
    zhashx_destroy(&self->jobs);
    zhashx_destroy(&self->unfinished);
    free(self);
    *self_p = NULL;
}

const char *job_state_name(job_state_t state)
{
    switch (state) {
    case JOB_QUEUED: return "queued";
    case JOB_COLLECTING: return "collecting";
    case JOB_ANALYZING: return "analyzing";
    case JOB_FINISHED: return "finished";
    }
    return "unknown";
}

/* Puts a job that became QUEUED in its place by seq: at the end when it is
 * new, further forward when it is an older job requeued. */
static void s_queue_insert(job_table_t *self, job_t *job)
{
    job_t *after = self->queue_tail;
    while (after && after->seq > job->seq)
        after = after->queue_prev;
    job->queue_prev = after;
    job->queue_next = after ? after->queue_next : self->queue_head;
    if (job->queue_next)
        job->queue_next->queue_prev = job;
    else
        self->queue_tail = job;
    if (after)
        after->queue_next = job;
    else
        self->queue_head = job;
}

static void s_queue_remove(job_table_t *self, job_t *job)
{
    if (job->queue_prev)
        job->queue_prev->queue_next = job->queue_next;
    else
        self->queue_head = job->queue_next;
    if (job->queue_next)
        job->queue_next->queue_prev = job->queue_prev;
    else
        self->queue_tail = job->queue_prev;
    job->queue_prev = job->queue_next = NULL;
}

/* The one function that changes job->state. The allowed moves are the arrows
 * of the diagram in job_table.h; anything else is a bug of the broker, checked
 * in release builds too (pf_assert.h says why). */
static void s_transition(job_table_t *self, job_t *job, job_state_t to)
{
    bool ok = false;
    switch (job->state) {
    case JOB_QUEUED: ok = to == JOB_COLLECTING || to == JOB_FINISHED; break;
    case JOB_COLLECTING: ok = to == JOB_QUEUED || to == JOB_ANALYZING || to == JOB_FINISHED; break;
    case JOB_ANALYZING: ok = to == JOB_FINISHED || (to == JOB_QUEUED && job->streamed); break;
    case JOB_FINISHED: ok = false; break;
    }
    pf_assert(ok && "job_table: a transition the state machine does not have");
    pf_log_debug("broker", "job %s: %s -> %s", job->id, job_state_name(job->state), job_state_name(to));
    self->counts[job->state]--;
    self->counts[to]++;
    if (to == JOB_FINISHED)
        s_agent_count(self, job, -1);
    if (job->state == JOB_QUEUED)
        s_queue_remove(self, job);
    job->state = to;
    if (to == JOB_QUEUED)
        s_queue_insert(self, job);
}

static void s_drop_passes(job_table_t *self, job_t *job)
{
    for (size_t i = 0; i < job->pass_len; i++) {
        assert(self->pass_bytes >= job->passes[i].len);
        self->pass_bytes -= job->passes[i].len;
        s_pass_free(&job->passes[i]);
    }
    free(job->passes);
    job->passes = NULL;
    job->pass_len = 0;
    job->pass_count = 0;
    job->streamed = false;
    job->stream_raw = 0;
    job->stream_last[0] = '\0';
}

job_submit_t job_table_submit(job_table_t *self, Profeed__JobRequest **request_p,
                              const uint8_t *bytes, size_t len, const uint8_t *agent,
                              size_t agent_len, int64_t deadline_ms, job_t **job_p)
{
    assert(self && request_p && *request_p && bytes && job_p);
    assert(agent_len <= sizeof((job_t *) 0)->agent);
    *job_p = NULL;
    Profeed__JobRequest *request = *request_p;
    job_t *job = zhashx_lookup(self->jobs, request->job_id);
    if (job) {
        wire_job_request_destroy(request_p);
        if (job->request_len != len || memcmp(job->request_bytes, bytes, len) != 0)
            return JOB_SUBMIT_CONFLICT;
        memcpy(job->agent, agent, agent_len);
        job->agent_len = agent_len;
        *job_p = job;
        return JOB_SUBMIT_SAME;
    }
    job = calloc(1, sizeof *job);
    uint8_t *copy = malloc(len ? len : 1);
    if (!job || !copy) {
        free(job);
        free(copy);
        wire_job_request_destroy(request_p);
        return JOB_SUBMIT_NOMEM;
    }
    memcpy(copy, bytes, len);
    snprintf(job->id, sizeof job->id, "%s", request->job_id); /* validated: <= 128 bytes */
    job->state = JOB_QUEUED;
    job->seq = ++self->next_seq;
    job->request = request;
    *request_p = NULL;
    job->request_bytes = copy;
    job->request_len = len;
    memcpy(job->agent, agent, agent_len);
    job->agent_len = agent_len;
    job->deadline_ms = deadline_ms;
    job->profiler = profiler_field(request->has_profiler, request->profiler);
    job_table_agent_key(request, agent, agent_len, job->agent_key, sizeof job->agent_key);
    zhashx_insert(self->jobs, job->id, job);
    s_queue_insert(self, job);
    self->counts[JOB_QUEUED]++;
    s_agent_count(self, job, +1);
    *job_p = job;
    return JOB_SUBMIT_NEW;
}

job_t *job_table_find(job_table_t *self, const char *id)
{
    assert(self);
    return id ? zhashx_lookup(self->jobs, id) : NULL;
}

job_t *job_table_first_queued(job_table_t *self)
{
    assert(self);
    return self->queue_head;
}

job_t *job_table_queued_after(job_table_t *self, const job_t *job)
{
    assert(self && job && job->state == JOB_QUEUED);
    (void) self; /* used only by the asserts */
    return job->queue_next;
}

void job_table_dispatched(job_table_t *self, job_t *job, const char *collector)
{
    assert(self && job && collector);
    s_transition(self, job, JOB_COLLECTING);
    snprintf(job->collector, sizeof job->collector, "%s", collector);
    job->attempt++;
    job->retry_ms = 0;
    s_drop_passes(self, job);
}

void job_table_dispatched_as(job_table_t *self, job_t *job, const char *collector, uint32_t attempt)
{
    assert(self && job && collector && attempt >= 1); /* wire_check refuses a record of attempt 0 */
    job->attempt = attempt - 1; /* job_table_dispatched() starts the next */
    job_table_dispatched(self, job, collector);
}

void job_table_sent(job_table_t *self, job_t *job, int64_t now_ms)
{
    assert(self && job && job->state == JOB_COLLECTING);
    (void) self; /* used only by the asserts */
    job->stage_ms = job->dispatched_ms = now_ms;
}

void job_table_stage(job_table_t *self, job_t *job, int64_t now_ms)
{
    assert(self && job);
    (void) self; /* used only by the asserts */
    job->stage_ms = now_ms;
}

pf_status_t job_table_plan(job_table_t *self, job_t *job, uint32_t pass_count, pf_error_t *err)
{
    assert(self && job);
    (void) self; /* used only by the asserts */
    if (job->state != JOB_COLLECTING)
        return pf_error_set(err, PF_EPROTO, "job %s: a pass plan while %s", job->id, job_state_name(job->state));
    if (pass_count == 0 || pass_count > WIRE_MAX_PASSES * 4)
        return pf_error_set(err, PF_EBADINPUT, "job %s: a plan of %u passes", job->id, (unsigned) pass_count);
    if (job->pass_len > pass_count)
        return pf_error_set(err, PF_EPROTO, "job %s: a plan of %u passes after %zu arrived", job->id,
                            (unsigned) pass_count, job->pass_len);
    job->pass_count = pass_count;
    return PF_OK;
}

/* A job that names no profiler yet has the first one its passes name. The
 * table says which values name one: every wire value but UNSPECIFIED. */
static void s_take_profiler(job_t *job, Profeed__Profiler profiler)
{
    if (!profiler_by_id(job->profiler))
        job->profiler = profiler;
}

job_pass_result_t job_table_pass(job_table_t *self, job_t *job, const char *collector,
                                 const char *pass_key, Profeed__Profiler profiler,
                                 const uint8_t *bytes, size_t len, zframe_t **frame_p, pf_error_t *err)
{
    assert(self && job && collector && pass_key && bytes);
    for (size_t i = 0; i < job->pass_len; i++) {
        if (strcmp(job->passes[i].pass_key, pass_key) == 0)
            return JOB_PASS_DUPLICATE;
    }
    if (job->state != JOB_COLLECTING) {
        pf_error_set(err, PF_EPROTO, "job %s is %s, not collecting", job->id, job_state_name(job->state));
        return JOB_PASS_REFUSED;
    }
    if (strcmp(job->collector, collector) != 0) {
        pf_error_set(err, PF_EPROTO, "job %s is collected by another worker (a stale attempt)", job->id);
        return JOB_PASS_REFUSED;
    }
    if (job->pass_count == 0 || job->pass_len >= job->pass_count) {
        pf_error_set(err, PF_EPROTO, "job %s: pass %s beyond the announced plan of %u", job->id,
                     pass_key, (unsigned) job->pass_count);
        return JOB_PASS_REFUSED;
    }
    zframe_t *frame = frame_p ? *frame_p : NULL;
    assert(!frame || (bytes >= zframe_data(frame) && len <= zframe_size(frame) &&
                      (size_t) (bytes - zframe_data(frame)) <= zframe_size(frame) - len));
    job_pass_t *grown = realloc(job->passes, (job->pass_len + 1) * sizeof *grown);
    uint8_t *copy = frame ? NULL : malloc(len ? len : 1);
    if (!grown || (!frame && !copy)) {
        if (grown)
            job->passes = grown;
        free(copy);
        pf_error_set(err, PF_ENOMEM, "job %s: out of memory retaining pass %s", job->id, pass_key);
        return JOB_PASS_REFUSED;
    }
    job->passes = grown;
    job_pass_t *pass = &job->passes[job->pass_len++];
    snprintf(pass->pass_key, sizeof pass->pass_key, "%s", pass_key);
    if (frame) {
        pass->frame = frame; /* the received message itself: no copy of a pass that may be 50 MB */
        *frame_p = NULL;
        pass->bytes = bytes;
    } else {
        memcpy(copy, bytes, len);
        pass->frame = NULL;
        pass->bytes = copy;
    }
    pass->len = len;
    self->pass_bytes += len;
    s_take_profiler(job, profiler);
    if (job->pass_len == job->pass_count) {
        s_transition(self, job, JOB_ANALYZING);
        job->collector[0] = '\0';
    }
    return JOB_PASS_NEW;
}

uint64_t job_table_chunk_in(job_table_t *self, job_t *job, uint64_t raw_size)
{
    assert(self && job && job->state == JOB_COLLECTING);
    (void) self; /* used only by the asserts */
    job->stream_raw += raw_size;
    return job->stream_raw;
}

void job_table_streaming(job_table_t *self, job_t *job, Profeed__Profiler profiler)
{
    assert(self && job && job->state == JOB_COLLECTING);
    (void) self; /* used only by the asserts */
    job->streamed = true;
    s_take_profiler(job, profiler);
}

void job_table_stream_sent(job_table_t *self, job_t *job, const char *pass_key, uint32_t seq,
                           Profeed__Profiler profiler)
{
    assert(self && job && pass_key && job->state == JOB_COLLECTING && job->streamed);
    (void) self; /* used only by the asserts */
    snprintf(job->stream_last, sizeof job->stream_last, "%s", pass_key); /* validated: an id */
    job->stream_last_seq = seq;
    job->stream_profiler = profiler_by_id(profiler) ? profiler : job->profiler;
}

bool job_table_stream_received(job_table_t *self, job_t *job, const char *pass_key, uint32_t seq,
                               job_pass_result_t *result, pf_error_t *err)
{
    assert(self && job && pass_key && result);
    if (!job->stream_last[0] || strcmp(job->stream_last, pass_key) != 0 || seq != job->stream_last_seq)
        return false;
    char key[sizeof job->stream_last], collector[sizeof job->collector];
    snprintf(key, sizeof key, "%s", job->stream_last);
    snprintf(collector, sizeof collector, "%s", job->collector);
    job->stream_last[0] = '\0';
    *result = job_table_pass(self, job, collector, key, job->stream_profiler, (const uint8_t *) "", 0, NULL, err);
    return true;
}

void job_table_set_analyzer(job_table_t *self, job_t *job, const char *analyzer)
{
    assert(self && job && analyzer);
    (void) self; /* used only by the asserts */
    /* A job is pinned while it collects or is analyzed; a requeued job keeps
     * its pin (its next attempt's passes go to the same analyzer), so the
     * death of that analyzer unpins a QUEUED job too. */
    assert(analyzer[0] ? job->state == JOB_COLLECTING || job->state == JOB_ANALYZING : job->state != JOB_FINISHED);
    snprintf(job->analyzer, sizeof job->analyzer, "%s", analyzer);
}

bool job_table_requeue(job_table_t *self, job_t *job, uint32_t max_attempts)
{
    assert(self && job && (job->state == JOB_COLLECTING || (job->state == JOB_ANALYZING && job->streamed)));
    if (job->attempt >= max_attempts)
        return false;
    s_transition(self, job, JOB_QUEUED);
    job->collector[0] = '\0';
    s_drop_passes(self, job);
    return true;
}

void job_table_refused(job_table_t *self, job_t *job, int64_t retry_ms)
{
    assert(self && job && job->state == JOB_COLLECTING && job->attempt > 0);
    snprintf(job->refused_by, sizeof job->refused_by, "%s", job->collector);
    s_transition(self, job, JOB_QUEUED);
    job->collector[0] = '\0';
    job->attempt--;
    job->refusals++;
    job->retry_ms = retry_ms;
    s_drop_passes(self, job);
}

void job_table_finish(job_table_t *self, job_t *job, const uint8_t *feedback, size_t len,
                      int64_t now_ms)
{
    assert(self && job && feedback);
    s_transition(self, job, JOB_FINISHED);
    job->collector[0] = '\0';
    job->analyzer[0] = '\0';
    s_drop_passes(self, job);
    free(job->feedback);
    job->feedback = malloc(len ? len : 1);
    if (job->feedback) {
        memcpy(job->feedback, feedback, len);
        job->feedback_len = len;
    } else {
        job->feedback_len = 0; /* a resubmission then runs it again */
    }
    self->feedback_bytes += job->feedback_len;
    job->finished_ms = now_ms;
}

/* The journal holds the delivered feedback: its bytes in memory go (the
 * length stays, to check the record read back). */
static void s_drop_feedback(job_table_t *self, job_t *job)
{
    if (!job->feedback)
        return;
    assert(self->feedback_bytes >= job->feedback_len);
    self->feedback_bytes -= job->feedback_len;
    free(job->feedback);
    job->feedback = NULL;
}

void job_table_delivered(job_table_t *self, job_t *job)
{
    assert(self && job && job->state == JOB_FINISHED);
    job->delivered = true;
    if (job->stored_len > 0)
        s_drop_feedback(self, job);
}

void job_table_stored(job_table_t *self, job_t *job, uint64_t at, size_t len)
{
    assert(self && job && job->state == JOB_FINISHED && len > 0);
    job->stored_at = at;
    job->stored_len = len;
    if (job->delivered)
        s_drop_feedback(self, job);
}

size_t job_table_feedback_bytes(job_table_t *self) { return self->feedback_bytes; }
size_t job_table_pass_bytes(job_table_t *self) { return self->pass_bytes; }

/* Delivered before undelivered, then oldest finished first. */
static int s_by_delivered_then_finished(const void *a, const void *b)
{
    const job_t *x = *(job_t *const *) a, *y = *(job_t *const *) b;
    if (x->delivered != y->delivered)
        return x->delivered ? -1 : 1;
    return (x->finished_ms > y->finished_ms) - (x->finished_ms < y->finished_ms);
}

/* The finished jobs in the order `cmp` forgets them first; the caller frees
 * the array. NULL when memory ran out (the next tick tries again). */
static job_t **s_finished_sorted(job_table_t *self, int (*cmp)(const void *, const void *), size_t *count)
{
    size_t n = self->counts[JOB_FINISHED];
    job_t **finished = malloc((n ? n : 1) * sizeof *finished);
    if (!finished)
        return NULL;
    size_t k = 0;
    for (job_t *job = zhashx_first(self->jobs); job && k < n; job = zhashx_next(self->jobs))
        if (job->state == JOB_FINISHED)
            finished[k++] = job;
    qsort(finished, k, sizeof *finished, cmp);
    *count = k;
    return finished;
}

size_t job_table_trim_bytes(job_table_t *self, size_t max_bytes, zlistx_t *gone_out)
{
    assert(self);
    if (self->feedback_bytes <= max_bytes)
        return 0;
    size_t k = 0;
    job_t **finished = s_finished_sorted(self, s_by_delivered_then_finished, &k);
    if (!finished)
        return 0;
    size_t dropped = 0;
    for (size_t i = 0; i < k && self->feedback_bytes > max_bytes; i++) {
        if (!finished[i]->feedback)
            continue; /* only the journal holds it: forgetting it frees nothing */
        dropped++;
        if (gone_out)
            zlistx_add_end(gone_out, strdup(finished[i]->id));
        job_table_forget(self, finished[i]);
    }
    free(finished);
    return dropped;
}

bool job_table_set_owner(job_table_t *self, job_t *job, const char *owner)
{
    assert(self && job && owner);
    (void) self; /* used only by the asserts */
    if (strlen(owner) >= sizeof job->owner)
        return false;
    snprintf(job->owner, sizeof job->owner, "%s", owner);
    return true;
}

void job_table_set_agent(job_table_t *self, job_t *job, const uint8_t *agent, size_t agent_len)
{
    assert(self && job && agent && agent_len <= sizeof job->agent);
    (void) self; /* used only by the asserts */
    memcpy(job->agent, agent, agent_len);
    job->agent_len = agent_len;
}

void job_table_accepted(job_table_t *self, job_t *job, int64_t now_ms)
{
    assert(self && job);
    (void) self; /* used only by the asserts */
    job->submitted_ms = now_ms;
}

void job_table_forget(job_table_t *self, job_t *job)
{
    assert(self && job);
    s_drop_feedback(self, job);
    s_drop_passes(self, job);
    self->counts[job->state]--;
    if (job->state != JOB_FINISHED)
        s_agent_count(self, job, -1);
    if (job->state == JOB_QUEUED)
        s_queue_remove(self, job);
    char id[WIRE_MAX_ID_LEN + 1];
    snprintf(id, sizeof id, "%s", job->id); /* the key dies with the job */
    zhashx_delete(self->jobs, id);
}

size_t job_table_expire(job_table_t *self, int64_t before_ms, zlistx_t *gone_out)
{
    assert(self);
    zlistx_t *gone = zlistx_new();
    for (job_t *job = zhashx_first(self->jobs); job; job = zhashx_next(self->jobs)) {
        if (job->state == JOB_FINISHED && job->finished_ms < before_ms)
            zlistx_add_end(gone, job);
    }
    size_t n = zlistx_size(gone);
    for (job_t *job = zlistx_first(gone); job; job = zlistx_next(gone)) {
        if (gone_out)
            zlistx_add_end(gone_out, strdup(job->id));
        job_table_forget(self, job);
    }
    zlistx_destroy(&gone);
    return n;
}

static int s_by_finished(const void *a, const void *b)
{
    const job_t *x = *(job_t *const *) a, *y = *(job_t *const *) b;
    return (x->finished_ms > y->finished_ms) - (x->finished_ms < y->finished_ms);
}

size_t job_table_trim_finished(job_table_t *self, size_t keep, zlistx_t *gone_out)
{
    assert(self);
    if (self->counts[JOB_FINISHED] <= keep)
        return 0;
    size_t k = 0;
    job_t **finished = s_finished_sorted(self, s_by_finished, &k);
    if (!finished)
        return 0;
    size_t drop = k > keep ? k - keep : 0;
    for (size_t i = 0; i < drop; i++) {
        if (gone_out)
            zlistx_add_end(gone_out, strdup(finished[i]->id));
        job_table_forget(self, finished[i]);
    }
    free(finished);
    return drop;
}

size_t job_table_count(job_table_t *self, job_state_t state)
{
    assert(self && state <= JOB_FINISHED);
    return self->counts[state];
}

size_t job_table_agent_unfinished(job_table_t *self, const char *agent_key)
{
    assert(self && agent_key);
    size_t *n = zhashx_lookup(self->unfinished, agent_key);
    return n ? *n : 0;
}

void job_table_agent_key(const Profeed__JobRequest *request, const uint8_t *agent, size_t agent_len, char *out,
                         size_t cap)
{
    assert(cap >= 8);
    if (request->agent_id && *request->agent_id) {
        snprintf(out, cap, "%s", request->agent_id);
        return;
    }
    size_t used = (size_t) snprintf(out, cap, "peer:");
    for (size_t i = 0; i < agent_len && used + 3 <= cap; i++)
        used += (size_t) snprintf(out + used, cap - used, "%02x", agent[i]);
}

job_t *job_table_first(job_table_t *self) { return zhashx_first(self->jobs); }
job_t *job_table_next(job_table_t *self) { return zhashx_next(self->jobs); }
