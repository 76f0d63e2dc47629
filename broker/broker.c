/* broker: the event loop (broker.h says what it serves).
 *
 * One file of some 1,600 lines, over the ~700 the project keeps to, because
 * it holds one thing: the handlers of the two sockets and of the timers,
 * each turning a message into job_table_*() (state) and worker_pool_*()
 * (who) calls and sending what they decided. The handlers share the senders
 * (s_wire_send, s_refuse, s_progress) and the steps of a job's life
 * (s_dispatch, s_finish, s_collection_lost, s_worker_lost, s_ensure_analyzer),
 * which call each other both ways: agents' submissions dispatch, workers'
 * losses requeue and finish, finishing frees slots that dispatch. Split by
 * socket, the pieces would share a private header of every one of these and
 * of broker_t, a seam in name only. What does stand alone is elsewhere: job
 * state in job_table.c, workers and routing in worker_pool.c, what an
 * analyzer is told beside a pass in pass_dispatch.c, durability in
 * journal.c, metrics in broker_metrics.c and broker_http.c, keys in
 * broker_auth.c. This file writes no field of a job or a worker: it reads
 * them, and changes them through those modules. */
#include "broker.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bind_retry.h"
#include "broker_auth.h"
#include "broker_http.h"
#include "broker_metrics.h"
#include "job_table.h"
#include "journal.h"
#include "pass_chunk.h"
#include "outbox.h"
#include "pass_dispatch.h"
#include "pf_log.h"
#include "pirate.h"
#include "profiler.h"
#include "wire.h"
#include "wire_curve.h"
#include "wire_splice.h"
#include "wire_zmq.h"
#include "worker_pool.h"

#define LOG "broker"

void broker_config_default(broker_config_t *config)
{
    memset(config, 0, sizeof *config);
    config->agent_endpoint = "tcp://127.0.0.1:5555";
    config->worker_endpoint = "tcp://127.0.0.1:5556";
    /* Paranoid Pirate's numbers: 1 s heartbeats, dead after 3 missed. */
    config->heartbeat_ms = 1000;
    config->liveness = 3;
    config->max_attempts = 3;
    config->default_timeout_s = 600;
    config->retain_ms = 10 * 60 * 1000;
    config->max_finished = 10000;
    config->max_msg = WIRE_MAX_MSG;
    /* Pass outputs can be tens of MB: a small queue per peer bounds memory. */
    config->hwm = 100;
    config->journal_sync = true;
    config->max_retained_bytes = (size_t) 256 * 1024 * 1024;
    config->max_queued = 10000;
    config->max_agent_jobs = 1000;
    config->chunk_bytes = (uint32_t) PASS_CHUNK_DEFAULT_RAW;
    /* 20,000 launches of `--set full` are 820 MB (issue 20): several GB
     * leaves room for the largest captures and still stops a runaway. */
    config->max_capture_bytes = (uint64_t) 8192 * 1024 * 1024;
    /* 64 streams of 4 x 4 MiB chunks at once. */
    config->stream_memory_bytes = (uint64_t) 1024 * 1024 * 1024;
    /* Rides over a restart by systemd or Kubernetes that finds its port still
     * held for a moment (bind_retry.h). */
    config->bind_retry_ms = 5000;
}

typedef struct {
    const broker_config_t *config;
    zsock_t *agents;
    zsock_t *workers;
    /* Every send to a socket goes through its outbox, which holds promises
     * until the journal has synced their records (outbox.h). */
    outbox_t *to_agents;
    outbox_t *to_workers;
    uint64_t synced;            /* the journal's synced mark, as last taken (s_settle) */
    job_table_t *jobs;
    journal_t *journal;         /* NULL: no state folder, nothing is kept */
    wire_curve_t *curve;        /* NULL: plaintext */
    broker_auth_t *auth;        /* with curve: who may connect, in which role */
    worker_pool_t *pool;
    int64_t next_tick_ms;
    int64_t started_ms;
    /* The last time collectors may have been away though alive: the start,
     * or the loss of a collector (a pause of this loop longer than the
     * liveness window loses every worker at once, and they come straight
     * back). Jobs are judged against the registered collectors only once
     * the live ones had the time to return (s_return_ms after it). */
    int64_t returning_ms;
    bool judged;                /* since returning_ms, every live worker had the time to return; the queue was judged */
    broker_metrics_t metrics;
    broker_http_t *http;        /* NULL when metrics are not served */
} broker_t;

static int64_t s_expiry(broker_t *self)
{
    return wire_zmq_now_ms() + (int64_t) self->config->heartbeat_ms * self->config->liveness;
}

/* ------------------------------------------------------------------------
 * Sending */

/* Every message the broker sends is counted here once it has left (the
 * outbox may have held it); Error replies are not in the byte counts. A held
 * message that cannot be sent is logged: no caller waits for it any more. */
static void s_sent(broker_t *self, metrics_endpoint_t e, const outbox_msg_t *msg, size_t size, bool held,
                   pf_status_t rc, const pf_error_t *err)
{
    if (rc == PF_OK) {
        if (msg->kind & OUTBOX_COUNTED) {
            self->metrics.bytes_out[e] += size;
            self->metrics.messages_out[e]++;
        }
        return;
    }
    if (!held)
        return;
    char name[WIRE_ZMQ_PEER_LEN];
    wire_zmq_peer_name(msg->peer, name, sizeof name);
    pf_log_warn(LOG, "job %s: could not send a held message to peer %s: %s", msg->job_id[0] ? msg->job_id : "-", name,
                err->msg);
    /* As s_dispatch and s_tick do: a worker whose connection is gone is dead
     * now (an agent gets its answer when it comes back). */
    worker_t *w = e == METRICS_WORKERS ? worker_pool_find(self->pool, name) : NULL;
    if (w)
        worker_pool_unreachable(w);
}

static void s_sent_agents(void *arg, const outbox_msg_t *msg, size_t size, bool held, pf_status_t rc,
                          const pf_error_t *err)
{
    s_sent(arg, METRICS_AGENTS, msg, size, held, rc, err);
}

static void s_sent_workers(void *arg, const outbox_msg_t *msg, size_t size, bool held, pf_status_t rc,
                           const pf_error_t *err)
{
    s_sent(arg, METRICS_WORKERS, msg, size, held, rc, err);
}

/* Sends a packed Envelope through the socket's outbox: at once, or once the
 * journal has synced `mark` (0: no wait) and earlier messages to `peer` have
 * gone. `kind` (outbox_kind_t) says what a failed sync makes of it. */
static pf_status_t s_frame_send(broker_t *self, zsock_t *sock, zframe_t *peer, zframe_t **body_p, uint64_t mark,
                                int kind, const char *job_id, pf_error_t *err)
{
    outbox_t *out = sock == self->agents ? self->to_agents : self->to_workers;
    return outbox_send(out, peer, body_p, mark, self->synced, kind, job_id, err);
}

/* Packs `env` and sends it (s_frame_send). */
static pf_status_t s_wire_hold(broker_t *self, zsock_t *sock, zframe_t *peer, const Profeed__Envelope *env,
                               uint64_t mark, int kind, const char *job_id, pf_error_t *err)
{
    size_t size = 0;
    if (wire_envelope_measure(env, self->config->max_msg, &size, err) != PF_OK)
        return err->code;
    /* Packed straight into the frame: a pass output is megabytes. */
    zframe_t *body = zframe_new(NULL, size);
    if (!body)
        return pf_error_set(err, PF_ENOMEM, "out of memory for a %zu-byte message", size);
    wire_envelope_pack_to(env, zframe_data(body), size);
    return s_frame_send(self, sock, peer, &body, mark, kind, job_id, err);
}

/* Every envelope the broker sends goes through here or s_wire_hold, to be
 * counted and kept in order behind held promises. */
static pf_status_t s_wire_send(broker_t *self, zsock_t *sock, zframe_t *peer, const Profeed__Envelope *env,
                               pf_error_t *err)
{
    return s_wire_hold(self, sock, peer, env, 0, OUTBOX_PLAIN | OUTBOX_COUNTED, NULL, err);
}

/* Error{code, text, job_id} to `peer`, through the outbox (not counted in
 * bytes out); failures are only logged, the error being itself the answer. */
static void s_error_send(broker_t *self, zsock_t *sock, zframe_t *peer, Profeed__ErrorCode code, const char *job_id,
                         const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void s_error_send(broker_t *self, zsock_t *sock, zframe_t *peer, Profeed__ErrorCode code, const char *job_id,
                         const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap); /* a cut-short error text is still an answer */
    va_end(ap);
    Profeed__Error error;
    Profeed__Envelope env;
    wire_zmq_error_envelope(&env, &error, code, text, job_id);
    pf_error_t err;
    if (s_wire_hold(self, sock, peer, &env, 0, OUTBOX_PLAIN, error.job_id, &err) != PF_OK) {
        char name[WIRE_ZMQ_PEER_LEN];
        pf_log_debug(LOG, "could not answer peer %s with an error: %s", wire_zmq_peer_name(peer, name, sizeof name),
                     err.msg);
    }
}

/* Refuses a message with an Error to the peer, and counts why. */
#define s_refuse(self, sock, peer, reason, code, job_id, ...)                                          \
    do {                                                                                               \
        (self)->metrics.rejected[(reason)]++;                                                          \
        s_error_send((self), (sock), (peer), (code), (job_id), __VA_ARGS__);                           \
    } while (0)

static void s_send(broker_t *self, zsock_t *sock, zframe_t *peer, Profeed__Envelope *env,
                   const char *what, const char *job_id)
{
    pf_error_t err;
    if (s_wire_send(self, sock, peer, env, &err) != PF_OK) {
        char name[WIRE_ZMQ_PEER_LEN];
        pf_log_warn(LOG, "job %s: could not send %s to peer %s: %s", job_id ? job_id : "-", what,
                    wire_zmq_peer_name(peer, name, sizeof name), err.msg);
    }
}

/* Sends an Envelope spliced around a retained packed message (wire_splice.h):
 * Envelope{`body_field`: head + field `inner_field` = inner}, or with `head`
 * NULL, Envelope{`body_field`: inner}. Through the outbox, with `mark` and
 * `kind` as s_frame_send's. */
static pf_status_t s_splice_send(broker_t *self, zsock_t *sock, zframe_t *peer, uint32_t body_field,
                                 const ProtobufCMessage *head, uint32_t inner_field, const uint8_t *inner,
                                 size_t inner_len, uint64_t mark, int kind, const char *job_id, pf_error_t *err)
{
    size_t size = wire_splice_envelope(NULL, body_field, head, inner_field, inner, inner_len);
    if (size > self->config->max_msg)
        return pf_error_set(err, PF_ETOOBIG, "a %zu-byte message, over the %zu-byte limit", size,
                            self->config->max_msg);
    zframe_t *frame = zframe_new(NULL, size);
    if (!frame)
        return pf_error_set(err, PF_ENOMEM, "out of memory for a %zu-byte message", size);
    wire_splice_envelope(zframe_data(frame), body_field, head, inner_field, inner, inner_len);
    return s_frame_send(self, sock, peer, &frame, mark, kind | OUTBOX_COUNTED, job_id, err);
}

static void s_to_agent(broker_t *self, job_t *job, Profeed__Envelope *env, const char *what)
{
    if (job->agent_len == 0)
        return;
    zframe_t *peer = zframe_new(job->agent, job->agent_len);
    pf_error_t err;
    /* An agent that went away gets its answer when it resubmits the job id. */
    if (s_wire_hold(self, self->agents, peer, env, 0, OUTBOX_PLAIN | OUTBOX_COUNTED, job->id, &err) != PF_OK)
        pf_log_debug(LOG, "job %s: agent not reachable for %s: %s", job->id, what, err.msg);
    zframe_destroy(&peer);
}

static void s_progress(broker_t *self, job_t *job, const char *state)
{
    if (job->request->has_progress && !job->request->progress)
        return; /* the agent asked for none */
    Profeed__Progress progress;
    profeed__progress__init(&progress);
    progress.job_id = job->id;
    if (job->pass_count) {
        progress.has_pass_count = progress.has_passes_done = 1;
        progress.pass_count = job->pass_count;
        progress.passes_done = (uint32_t) job->pass_len;
    }
    progress.state = (char *) state;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PROGRESS;
    env.progress = &progress;
    s_to_agent(self, job, &env, "progress");
}

/* An Ack; with `mark` (journal_mark) it waits for the journal, and `kind`
 * says which promise it is (OUTBOX_SUBMIT_ACK, OUTBOX_PASS_ACK). */
static void s_ack(broker_t *self, zsock_t *sock, zframe_t *peer, const char *job_id,
                  const char *pass_key, bool duplicate, uint64_t mark, int kind)
{
    Profeed__Ack ack;
    profeed__ack__init(&ack);
    ack.job_id = (char *) job_id;
    ack.pass_key = (char *) pass_key;
    ack.has_duplicate = 1;
    ack.duplicate = duplicate;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    pf_error_t err;
    if (s_wire_hold(self, sock, peer, &env, mark, kind | OUTBOX_COUNTED, job_id, &err) != PF_OK) {
        char name[WIRE_ZMQ_PEER_LEN];
        pf_log_warn(LOG, "job %s: could not send ack to peer %s: %s", job_id,
                    wire_zmq_peer_name(peer, name, sizeof name), err.msg);
    }
}

/* Sends `len` bytes of packed Feedback to the job's agent, as they are, once
 * the journal holds what it has written so far (the job's finished record
 * among it, whether just written or not): `kind` OUTBOX_FEEDBACK for the
 * feedback just finished, OUTBOX_PLAIN for one sent again. */
static void s_send_packed_feedback(broker_t *self, const job_t *job, const uint8_t *bytes, size_t len, int kind)
{
    if (job->agent_len == 0)
        return;
    zframe_t *peer = zframe_new(job->agent, job->agent_len);
    pf_error_t err;
    /* An agent that went away gets its answer when it resubmits the job id. */
    if (s_splice_send(self, self->agents, peer, PROFEED__ENVELOPE__BODY_FEEDBACK, NULL, 0, bytes, len,
                      journal_mark(self->journal), kind, job->id, &err) != PF_OK)
        pf_log_debug(LOG, "job %s: agent not reachable for feedback: %s", job->id, err.msg);
    zframe_destroy(&peer);
}

/* A delivered feedback only the journal holds, read back (journal.h: one
 * bounded read of one record) into *bytes_p for the caller to free. A record
 * that cannot be read back is no answer: the job is forgotten (logged, and
 * recorded), so that the agent, told it is unknown, submits it again and it
 * runs again; the caller must not use `job` after false. */
static bool s_stored_feedback(broker_t *self, job_t *job, uint8_t **bytes_p, size_t *len_p)
{
    pf_error_t err;
    if (journal_feedback_read(self->journal, job, bytes_p, len_p, &err) == PF_OK) {
        pf_log_info(LOG, "job %s: its delivered feedback read back from the journal (%zu bytes)", job->id, *len_p);
        return true;
    }
    pf_log_error(LOG, "job %s: its delivered feedback cannot be read back: %s; the job is forgotten "
                      "(submitted again, it runs again)",
                 job->id, err.msg);
    char id[WIRE_MAX_ID_LEN + 1];
    snprintf(id, sizeof id, "%s", job->id);
    job_table_forget(self->jobs, job);
    if (journal_forgotten(self->journal, id, &err) != PF_OK)
        pf_log_warn(LOG, "job %s: forgetting it is not stored: %s", id, err.msg);
    return false;
}

/* Sends a finished job's Feedback to its agent, as it was packed: from
 * memory, or, once delivered, from the journal (`kind`: as
 * s_send_packed_feedback's). False when that could not be read back and the
 * job is forgotten (s_stored_feedback). */
static bool s_send_feedback(broker_t *self, job_t *job, int kind)
{
    if (job->feedback) {
        s_send_packed_feedback(self, job, job->feedback, job->feedback_len, kind);
        return true;
    }
    if (job->stored_len == 0)
        return true; /* out of memory when it finished: nothing to send */
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (!s_stored_feedback(self, job, &bytes, &len))
        return false;
    s_send_packed_feedback(self, job, bytes, len, kind);
    free(bytes);
    return true;
}

/* ------------------------------------------------------------------------
 * Job life */

/* A record that could not be written costs redone work after a crash, not
 * a job (journal.h): it is logged, and the broker goes on. */
static void s_journal_note(const job_t *job, pf_status_t rc, const pf_error_t *err)
{
    if (rc != PF_OK)
        pf_log_error(LOG, "job %s: a state change is not stored (it may be redone after a restart): %s", job->id,
                     err->msg);
}

static void s_release(broker_t *self, job_t *job)
{
    if (job->state == JOB_COLLECTING && job->collector[0]) {
        worker_t *c = worker_pool_find(self->pool, job->collector);
        if (c)
            worker_pool_release(c);
    }
    if (job->analyzer[0]) {
        worker_t *a = worker_pool_find(self->pool, job->analyzer);
        if (a)
            worker_pool_release(a);
    }
}

/* Finishes a job with `fb_bytes` (a packed Feedback) and sends it. */
static void s_finish(broker_t *self, job_t *job, const uint8_t *fb_bytes, size_t len,
                     Profeed__FeedbackStatus status)
{
    s_release(self, job);
    broker_metrics_finished(&self->metrics, status, (double) (wire_zmq_now_ms() - job->submitted_ms) / 1000.0);
    job_table_finish(self->jobs, job, fb_bytes, len, wire_zmq_now_ms());
    pf_error_t err;
    if (journal_finished(self->journal, job, &err) != PF_OK)
        pf_log_error(LOG, "job %s: the feedback is not stored (a broker restart would run the job again): %s",
                     job->id, err.msg);
    pf_log_info(LOG, "job %s: finished (attempt %u)", job->id, (unsigned) job->attempt);
    s_send_feedback(self, job, OUTBOX_FEEDBACK);
}

/* Finishes a job the farm could not complete, with a Feedback saying why. */
static void s_finish_failed(broker_t *self, job_t *job, Profeed__FeedbackStatus status, const char *why)
{
    Profeed__Feedback fb;
    profeed__feedback__init(&fb);
    fb.job_id = job->id;
    fb.has_status = 1;
    fb.status = status;
    char *errors[1] = {(char *) why};
    fb.errors = errors;
    fb.n_errors = 1;
    fb.text = (char *) why;
    size_t len = 0;
    pf_error_t err;
    uint8_t *bytes = wire_feedback_pack(&fb, self->config->max_msg, &len, &err);
    if (!bytes) {
        pf_log_error(LOG, "job %s: cannot pack the failure feedback: %s", job->id, err.msg);
        return;
    }
    pf_log_warn(LOG, "job %s: failed: %s", job->id, why);
    s_finish(self, job, bytes, len, status);
    free(bytes);
}

/* Whether `base` may serve as `job`'s baseline, and if not, why (in
 * `problem`). With CURVE a job is its key's (issue 15's owners); without,
 * nothing proves who an agent is across connections, so the agent_id the
 * two requests name must agree. */
static const uint8_t *s_baseline(broker_t *self, const job_t *job, size_t *len, uint8_t **owned, char *problem,
                                 size_t cap)
{
    const char *id = job->request->baseline_job_id;
    job_t *base = job_table_find(self->jobs, id);
    const char *mine = job->request->agent_id ? job->request->agent_id : "";
    *len = 0;
    *owned = NULL;
    if (strcmp(id, job->id) == 0) {
        snprintf(problem, cap, "a job cannot be its own baseline");
    } else if (!base) {
        snprintf(problem, cap, "job %s is not known to the broker (never submitted here, or forgotten after its "
                 "retention)", id);
    } else if (self->auth ? !base->owner[0] || strcmp(base->owner, job->owner) != 0
                          : strcmp(base->request->agent_id ? base->request->agent_id : "", mine) != 0) {
        /* Said like an unknown job's refusal elsewhere would leak that the id
         * exists; it names only what the agent may know: that it is not its. */
        snprintf(problem, cap, "job %s is not this agent's (another agent's job cannot be a baseline)", id);
    } else if (base->state != JOB_FINISHED || (!base->feedback && base->stored_len == 0)) {
        snprintf(problem, cap, "job %s has not finished yet (%s): submit after its feedback arrived", id,
                 job_state_name(base->state));
    } else if (base->feedback) {
        *len = base->feedback_len;
        return base->feedback;
    } else if (s_stored_feedback(self, base, owned, len)) {
        return *owned; /* delivered: only the journal holds it (issue 15) */
    } else {
        snprintf(problem, cap, "job %s's feedback could not be read back from the broker's journal", id);
    }
    return NULL;
}

/* The Dispatch.context of `job`'s passes, with the baseline this broker
 * allows it (s_baseline). */
static void s_context_init(broker_t *self, job_t *job, pass_dispatch_context_t *c)
{
    pass_dispatch_context_init(c, job);
    if (job->request->baseline_job_id && *job->request->baseline_job_id) {
        size_t len = 0;
        const uint8_t *bytes = s_baseline(self, job, &len, &c->owned, c->problem, sizeof c->problem);
        pass_dispatch_context_baseline(c, job, bytes, len);
    }
}

/* Sends the job's retained passes (all, or only the last one) to its analyzer:
 * each as Dispatch{attempt, pass_count, metadata, language, context,
 * pass_output} with the pass spliced in as the collector packed it. */
static void s_send_passes(broker_t *self, job_t *job, bool all)
{
    worker_t *a = worker_pool_find(self->pool, job->analyzer);
    if (!a || job->pass_len == 0)
        return;
    Profeed__Dispatch head;
    pass_dispatch_head(job, &head);
    pass_dispatch_context_t context;
    s_context_init(self, job, &context);
    head.context = &context.msg;
    for (size_t i = all ? 0 : job->pass_len - 1; i < job->pass_len; i++) {
        /* The baseline rides with the first pass only (an analyzer that gets
         * the passes again gets that one too). */
        pass_dispatch_context_with(&context, i == 0, job->passes[i].len, self->config->max_msg);
        pf_error_t err;
        if (s_splice_send(self, self->workers, a->routing_id, PROFEED__ENVELOPE__BODY_DISPATCH, &head.base,
                          PROFEED__DISPATCH__WORK_PASS_OUTPUT, job->passes[i].bytes, job->passes[i].len, 0,
                          OUTBOX_PLAIN, job->id, &err) != PF_OK)
            pf_log_warn(LOG, "job %s: could not send pass %s to analyzer %s: %s", job->id,
                        job->passes[i].pass_key, a->ready->worker_id, err.msg);
    }
    pass_dispatch_context_clear(&context);
}

/* Pins the job to an analyzer when it has none and sends what it must see. */
static void s_ensure_analyzer(broker_t *self, job_t *job, bool newest_only)
{
    if (job->state != JOB_COLLECTING && job->state != JOB_ANALYZING)
        return;
    if (job->analyzer[0]) {
        if (newest_only)
            s_send_passes(self, job, false);
        return;
    }
    if (job->pass_len == 0)
        return;
    const char *need = worker_pool_capability(job->profiler);
    worker_t *a = worker_pool_pick_analyzer(self->pool, need, job->streamed);
    if (!a) {
        pf_log_warn(LOG, "job %s: no analyzer for %s yet; passes are kept until one registers",
                    job->id, need ? need : "any");
        return;
    }
    job_table_set_analyzer(self->jobs, job, a->key);
    worker_pool_claim(a);
    pf_log_info(LOG, "job %s: pinned to analyzer %s (%s)", job->id, a->ready->worker_id, a->key);
    s_send_passes(self, job, true);
}

/* The collector for a queued job: the least loaded free one, preferring
 * another than the one that refused it last. */
static worker_t *s_collector_for(broker_t *self, const job_t *job)
{
    const Profeed__JobRequest *req = job->request;
    return worker_pool_pick_collector(self->pool, req->gpu_arch,
                                      worker_pool_capability(profiler_field(req->has_profiler, req->profiler)),
                                      req->language, job->refused_by[0] ? job->refused_by : NULL);
}

/* Hands queued jobs, oldest first, to free collectors that can run them. */
static void s_dispatch(broker_t *self)
{
    job_t *next;
    int64_t now = wire_zmq_now_ms();
    for (job_t *job = job_table_first_queued(self->jobs); job; job = next) {
        /* Taken first: dispatching `job` takes it out of the queue. */
        next = job_table_queued_after(self->jobs, job);
        if (job->retry_ms > now)
            continue; /* refused lately: it waits out its backoff */
        worker_t *c = s_collector_for(self, job);
        if (!c)
            continue;
        Profeed__Dispatch d;
        profeed__dispatch__init(&d);
        d.has_attempt = 1;
        d.attempt = job->attempt + 1;
        d.work_case = PROFEED__DISPATCH__WORK_JOB;
        d.job = job->request;
        /* A collector that speaks chunks streams its big passes (issue 20). */
        d.has_chunk_bytes = c->ready->chunks;
        d.chunk_bytes = self->config->chunk_bytes;
        Profeed__Envelope env;
        wire_envelope_init(&env);
        env.body_case = PROFEED__ENVELOPE__BODY_DISPATCH;
        env.dispatch = &d;
        pf_error_t err;
        if (s_wire_send(self, self->workers, c->routing_id, &env, &err) != PF_OK) {
            /* Unreachable: its connection is gone. The next tick removes it. */
            pf_log_warn(LOG, "job %s: collector %s unreachable: %s", job->id, c->ready->worker_id, err.msg);
            worker_pool_unreachable(c);
            continue;
        }
        job_table_dispatched(self->jobs, job, c->key);
        s_journal_note(job, journal_dispatched(self->journal, job, &err), &err);
        job_table_sent(self->jobs, job, wire_zmq_now_ms());
        self->metrics.attempts++;
        /* A job the collector already ran has its slot counted (s_collector_report). */
        if (!worker_pool_holds(c, job->id))
            worker_pool_claim(c);
        pf_log_info(LOG, "job %s: attempt %u on collector %s (%s)", job->id, (unsigned) job->attempt,
                    c->ready->worker_id, c->key);
        s_progress(self, job, "collecting");
    }
}

/* The job's attempt ended on its collector without its passes (the
 * collector died, or no longer runs it): requeued, or failed when its
 * attempts are spent. */
static void s_collection_lost(broker_t *self, job_t *job, bool died, const char *why)
{
    uint32_t attempt = job->attempt;
    if (job_table_requeue(self->jobs, job, self->config->max_attempts)) {
        pf_error_t err;
        s_journal_note(job, journal_requeued(self->journal, job, &err), &err);
        pf_log_info(LOG, "job %s: collector %s attempt %u (%s); requeued", job->id,
                    died ? "died during" : "no longer runs", (unsigned) attempt, why);
        self->metrics.requeued++;
        s_progress(self, job, "requeued");
    } else {
        char why_job[512];
        snprintf(why_job, sizeof why_job, "the collector %s during attempt %u of %u (%s); no attempts left",
                 died ? "died" : "dropped the job", (unsigned) attempt, (unsigned) self->config->max_attempts, why);
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES, why_job);
    }
}

/* A worker is gone (silent, unreachable, or replaced by its own restart):
 * requeue the jobs it collected, move the jobs pinned to it elsewhere. */
static void s_worker_lost(broker_t *self, const char *key, const char *why)
{
    worker_t *w = worker_pool_find(self->pool, key);
    if (!w)
        return;
    pf_log_warn(LOG, "worker %s (%s, peer %s) lost: %s", w->ready->worker_id,
                w->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR ? "collector" : "analyzer", key, why);
    self->metrics.workers_lost++;
    if (w->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR) {
        self->returning_ms = wire_zmq_now_ms();
        self->judged = false;
    }
    zlistx_t *affected = zlistx_new();
    for (job_t *job = job_table_first(self->jobs); job; job = job_table_next(self->jobs)) {
        if ((job->state == JOB_COLLECTING && strcmp(job->collector, key) == 0) ||
            (job->state != JOB_FINISHED && strcmp(job->analyzer, key) == 0))
            zlistx_add_end(affected, job);
    }
    for (job_t *job = zlistx_first(affected); job; job = zlistx_next(affected)) {
        if (strcmp(job->analyzer, key) == 0 && job->streamed) {
            /* Its chunks were passed through, not kept: collect it again.
             * A collector still streaming it is told to stop, so its slot
             * frees now rather than when its window times out. */
            job_table_set_analyzer(self->jobs, job, "");
            worker_t *c = job->state == JOB_COLLECTING ? worker_pool_find(self->pool, job->collector) : NULL;
            if (c)
                s_refuse(self, self->workers, c->routing_id, METRICS_REJECT_UNKNOWN_JOB,
                         PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB, job->id,
                         "job %s: its analyzer died; stop streaming it, it is collected again", job->id);
            s_release(self, job); /* the collector's slot, while it still streams */
            s_collection_lost(self, job, false, "its analyzer died with a streamed pass, which the broker does not keep");
            continue;
        }
        if (strcmp(job->analyzer, key) == 0) {
            job_table_set_analyzer(self->jobs, job, "");
            pf_log_info(LOG, "job %s: its analyzer died; moving %zu retained passes", job->id, job->pass_len);
        }
        if (job->state == JOB_COLLECTING && strcmp(job->collector, key) == 0)
            s_collection_lost(self, job, true, why);
    }
    worker_pool_remove(self->pool, key);
    for (job_t *job = zlistx_first(affected); job; job = zlistx_next(affected))
        s_ensure_analyzer(self, job, false);
    zlistx_destroy(&affected);
}

/* A collector said which jobs it runs (Ready, Heartbeat): its busy count
 * becomes the jobs the broker has collecting there plus the ones it runs that
 * the broker does not count there (attempts from before a restart, jobs
 * whose last pass is in but whose run has not ended). Counting only its own
 * dispatches, the broker would send work into slots that are full, or leave
 * free ones unused after a path that forgot a release. */
static void s_collector_report(broker_t *self, worker_t *w, char *const *ids, size_t n)
{
    if (!worker_pool_set_held(w, ids, n)) {
        pf_log_warn(LOG, "worker %s: out of memory keeping the jobs it reports", w->ready->worker_id);
        return;
    }
    /* A job collecting here that the collector no longer runs (its passes
     * were refused, or it ended without them) would wait for its time
     * limit: it goes back to the queue, as if the collector had died with
     * it. Not one dispatched within interval x liveness: the report may
     * have crossed its Dispatch. */
    int64_t now = wire_zmq_now_ms(), settle_ms = (int64_t) self->config->heartbeat_ms * self->config->liveness;
    uint32_t busy = 0;
    zlistx_t *lost = zlistx_new();
    for (job_t *job = job_table_first(self->jobs); job; job = job_table_next(self->jobs)) {
        if (job->state != JOB_COLLECTING || strcmp(job->collector, w->key) != 0)
            continue;
        if (lost && now - job->dispatched_ms > settle_ms && !worker_pool_holds(w, job->id))
            zlistx_add_end(lost, job);
        else
            busy++;
    }
    for (job_t *job = lost ? zlistx_first(lost) : NULL; job; job = zlistx_next(lost))
        s_collection_lost(self, job, false, "it reports the job no longer running");
    zlistx_destroy(&lost);
    for (size_t i = 0; i < w->held_len; i++) {
        job_t *job = job_table_find(self->jobs, w->held[i]);
        if (!job || job->state != JOB_COLLECTING || strcmp(job->collector, w->key) != 0)
            busy++;
    }
    if (busy != w->busy)
        pf_log_debug(LOG, "worker %s: busy %u by its report (counted %u)", w->ready->worker_id, (unsigned) busy,
                     (unsigned) w->busy);
    if (worker_pool_set_busy(w, busy))
        s_dispatch(self);
}

/* ------------------------------------------------------------------------
 * Agents */

/* Who sent an agent message: the owner its jobs get, and whether it may see
 * every job. With CURVE that is its public key (stable across reconnects;
 * operators are keys in --operator-keys); without, only the connection is
 * known. */
typedef struct {
    char owner[JOB_OWNER_LEN];
    bool operator;
} caller_t;

static void s_caller(broker_t *self, zframe_t *peer, zframe_t *body, caller_t *caller)
{
    caller->operator = false;
    const char *key = self->auth && body ? zframe_meta(body, BROKER_AUTH_KEY) : NULL;
    if (key) {
        snprintf(caller->owner, sizeof caller->owner, "key:%s", key);
        caller->operator = broker_auth_user_is(zframe_meta(body, "User-Id"), "operator");
    } else {
        char hex[WIRE_ZMQ_PEER_LEN];
        snprintf(caller->owner, sizeof caller->owner, "peer:%s", wire_zmq_peer_name(peer, hex, sizeof hex));
    }
}

/* Whether `caller` may hear of `job`. A job without an owner (stored before
 * owners were) is nobody's until an exact resubmission claims it. */
static bool s_owns(const caller_t *caller, const job_t *job)
{
    return job->owner[0] && strcmp(job->owner, caller->owner) == 0;
}

static void s_status(broker_t *self, zframe_t *peer, const caller_t *caller)
{
    size_t n = worker_pool_size(self->pool);
    Profeed__FarmStatus st;
    profeed__farm_status__init(&st);
    Profeed__WorkerStatus *items = calloc(n ? n : 1, sizeof *items);
    Profeed__WorkerStatus **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    size_t jobs = job_table_count(self->jobs, JOB_COLLECTING) + job_table_count(self->jobs, JOB_ANALYZING);
    char **ids = calloc(jobs ? jobs : 1, sizeof *ids);
    if (!items || !ptrs || !ids)
        goto cleanup;
    int64_t now = wire_zmq_now_ms();
    for (worker_t *w = worker_pool_first(self->pool); w && st.n_workers < n; w = worker_pool_next(self->pool)) {
        Profeed__WorkerStatus *ws = &items[st.n_workers];
        profeed__worker_status__init(ws);
        ws->worker = w->ready;
        ws->has_busy = ws->has_idle_ms = 1;
        ws->busy = w->busy;
        int64_t idle = now - w->last_heard_ms;
        ws->idle_ms = idle < 0 ? 0 : idle > UINT32_MAX ? UINT32_MAX : (uint32_t) idle;
        ptrs[st.n_workers++] = ws;
    }
    st.workers = ptrs;
    for (job_t *job = job_table_first(self->jobs); job; job = job_table_next(self->jobs)) {
        /* Job ids are what an agent needs to ask for a job's feedback:
         * each agent sees its own, operators all of them. */
        if ((job->state == JOB_COLLECTING || job->state == JOB_ANALYZING) && st.n_job_ids < jobs &&
            st.n_job_ids < WIRE_MAX_HEARTBEAT_JOBS && (caller->operator || s_owns(caller, job)))
            ids[st.n_job_ids++] = job->id;
    }
    st.job_ids = ids;
    st.has_queued = st.has_in_flight = st.has_finished = 1;
    st.queued = (uint32_t) job_table_count(self->jobs, JOB_QUEUED);
    st.in_flight = (uint32_t) jobs;
    st.finished = (uint32_t) job_table_count(self->jobs, JOB_FINISHED);
    Profeed__FarmCounters counters;
    metrics_counters_storage_t storage;
    broker_metrics_counters(&self->metrics, wire_zmq_now_ms() - self->started_ms, &counters, &storage);
    st.counters = &counters;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_STATUS;
    env.status = &st;
    s_send(self, self->agents, peer, &env, "status", NULL);
cleanup:
    free(items);
    free(ptrs);
    free(ids);
}

/* Backpressure: refuses a new job with "busy, retry after" when the queue
 * or the agent's unfinished jobs are at their limits. The wait suggested
 * grows with the queue (about a second per thousand jobs, at most 30 s). */
static bool s_busy(broker_t *self, zframe_t *peer, const Profeed__JobRequest *req)
{
    size_t queued = job_table_count(self->jobs, JOB_QUEUED);
    char key[WIRE_MAX_ID_LEN + 8];
    job_table_agent_key(req, zframe_data(peer), zframe_size(peer), key, sizeof key);
    size_t mine = job_table_agent_unfinished(self->jobs, key);
    char why[256];
    if (queued >= self->config->max_queued)
        snprintf(why, sizeof why, "busy: %zu jobs are queued (the limit is %u)", queued,
                 (unsigned) self->config->max_queued);
    else if (mine >= self->config->max_agent_jobs)
        snprintf(why, sizeof why, "busy: agent %s has %zu unfinished jobs (the limit is %u)", key, mine,
                 (unsigned) self->config->max_agent_jobs);
    else
        return false;
    uint32_t retry_ms = (uint32_t) (1000 + queued);
    if (retry_ms > 30000)
        retry_ms = 30000;
    pf_log_info(LOG, "job %s refused: %s; retry after %u ms", req->job_id, why, (unsigned) retry_ms);
    self->metrics.rejected[METRICS_REJECT_OVERLOADED]++;
    Profeed__Error e;
    profeed__error__init(&e);
    e.has_code = 1;
    e.code = PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED;
    e.text = why;
    e.job_id = req->job_id;
    e.has_retry_after_ms = 1;
    e.retry_after_ms = retry_ms;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_ERROR;
    env.error = &e;
    s_send(self, self->agents, peer, &env, "busy answer", req->job_id);
    return true;
}

/* Whether a registered collector could run `req`: its GPU arch and the
 * capability its profiler stands for, or, when it names no profiler, one
 * that suits its language. When none, `reason` says what is offered. */
static bool s_servable(broker_t *self, const Profeed__JobRequest *req, char *reason, size_t cap)
{
    const char *need = worker_pool_capability(profiler_field(req->has_profiler, req->profiler));
    if (!worker_pool_can_serve(self->pool, req->gpu_arch, need, reason, cap))
        return false;
    return need || worker_pool_offers_language(self->pool, req->language, reason, cap);
}

/* How long after a start, or after a collector was lost (its loss may be
 * this broker's pause, not its death), a live worker may still be coming
 * back: it notices the silence (interval x liveness), pauses at most
 * PIRATE_BACKOFF_MAX_INTERVALS intervals before reconnecting (a worker whose
 * broker died several times in a row is at its longest pause), and
 * registers. 36 s by default. Until then a new job that the collectors
 * registered so far cannot run is queued rather than refused, and the queue is judged at its
 * end (s_judge_queue): a job no collector that came back can run is refused
 * then, saying why, not left to wait out its time limit. */
static int64_t s_return_ms(const broker_t *self)
{
    return (int64_t) self->config->heartbeat_ms * (self->config->liveness + PIRATE_BACKOFF_MAX_INTERVALS) + 1000;
}

/* When every live worker has had the time to come back (after the start or
 * a collector's loss): a queued job that no registered collector can run is
 * refused now, not left to wait out its time limit. */
static void s_judge_queue(broker_t *self)
{
    job_t *next;
    for (job_t *job = job_table_first_queued(self->jobs); job; job = next) {
        next = job_table_queued_after(self->jobs, job);
        char reason[1024];
        if (s_servable(self, job->request, reason, sizeof reason))
            continue;
        self->metrics.rejected[METRICS_REJECT_NO_WORKER]++;
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_CAPABLE_WORKER, reason);
    }
}

static void s_submit(broker_t *self, zframe_t *peer, const char *peer_name, const caller_t *caller,
                     Profeed__JobRequest *submitted)
{
    const char *job_id = submitted->job_id;
    job_t *known = job_table_find(self->jobs, job_id);
    /* With CURVE a job id is its key's: another key's request under it is a
     * conflict, identical or not (it would get the other's feedback).
     * Without CURVE connections change as agents reconnect, so the exact
     * request again is what claims a job (below), as it does a job stored
     * before owners were. */
    if (known && self->auth && known->owner[0] && !s_owns(caller, known)) {
        pf_log_warn(LOG, "job %s from agent %s: the id belongs to another key; refused", job_id, peer_name);
        s_refuse(self, self->agents, peer, METRICS_REJECT_DUPLICATE, PROFEED__ERROR_CODE__ERROR_CODE_DUPLICATE_JOB,
                 job_id, "job id %s is already used by a different request", job_id);
        return;
    }
    size_t len = 0;
    pf_error_t err;
    uint8_t *bytes = wire_job_request_pack(submitted, self->config->max_msg, &len, &err);
    if (!bytes) {
        s_refuse(self, self->agents, peer, METRICS_REJECT_BAD_REQUEST, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 job_id, "%s", err.msg);
        return;
    }
    job_t *job = job_table_find(self->jobs, job_id);
    /* The same request for a job whose feedback only the journal holds: read
     * it back now, so that a record that cannot be read makes this a new job
     * (the old one is forgotten) rather than an answer that never comes. */
    uint8_t *stored = NULL;
    size_t stored_len = 0;
    if (job && job->state == JOB_FINISHED && !job->feedback && job->stored_len > 0 && job->request_len == len &&
        memcmp(job->request_bytes, bytes, len) == 0 && !s_stored_feedback(self, job, &stored, &stored_len))
        job = NULL;
    if (!job) {
        char reason[1024];
        /* Within the window in which collectors may still be on their way
         * back (a start or restart, a loss), a job that the collectors
         * registered so far cannot serve is queued, not refused, whatever
         * else is registered: after a broker restart the sm_80 collector may
         * be back before the sm_90 one, and an sm_90 job is not unservable
         * for that. The queue is judged when the window ends. */
        bool settled = wire_zmq_now_ms() - self->returning_ms >= s_return_ms(self);
        if (settled && !s_servable(self, submitted, reason, sizeof reason)) {
            pf_log_info(LOG, "job %s from agent %s refused: %s", job_id, peer_name, reason);
            s_refuse(self, self->agents, peer, METRICS_REJECT_NO_WORKER,
                     PROFEED__ERROR_CODE__ERROR_CODE_NO_CAPABLE_WORKER, job_id, "%s", reason);
            free(bytes);
            return;
        }
        if (s_busy(self, peer, submitted)) {
            free(bytes);
            return;
        }
    }
    /* The table keeps a standalone copy of the request, decoded from the
     * bytes it also keeps for comparison. */
    Profeed__JobRequest *request = wire_job_request_unpack(bytes, len, self->config->max_msg, &err);
    if (!request) {
        pf_log_error(LOG, "job %s: a request that packed does not unpack: %s", job_id, err.msg);
        free(bytes);
        free(stored);
        return;
    }
    char id[WIRE_MAX_ID_LEN + 1];
    snprintf(id, sizeof id, "%s", job_id);
    uint32_t timeout_s = submitted->has_timeout_s ? submitted->timeout_s : self->config->default_timeout_s;
    int64_t deadline = wire_zmq_now_ms() + (int64_t) timeout_s * 1000;
    job_submit_t rc = job_table_submit(self->jobs, &request, bytes, len, zframe_data(peer),
                                       zframe_size(peer), deadline, &job);
    free(bytes);
    assert(rc == JOB_SUBMIT_SAME || !stored); /* read back only for the same request */
    switch (rc) {
    case JOB_SUBMIT_NOMEM:
        s_refuse(self, self->agents, peer, METRICS_REJECT_OVERLOADED, PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED,
                 id, "out of memory");
        return;
    case JOB_SUBMIT_CONFLICT:
        pf_log_info(LOG, "job %s from agent %s: id reused with a different request", id, peer_name);
        s_refuse(self, self->agents, peer, METRICS_REJECT_DUPLICATE, PROFEED__ERROR_CODE__ERROR_CODE_DUPLICATE_JOB,
                 id, "job id %s is already used by a different request", id);
        return;
    case JOB_SUBMIT_SAME:
        pf_log_info(LOG, "job %s from agent %s: resubmitted while %s", id, peer_name, job_state_name(job->state));
        job_table_set_owner(self->jobs, job, caller->owner); /* caller_t's fits: JOB_OWNER_LEN */
        /* After whatever is written: the job's own records may still be
         * on their way to the disk (an agent that resubmits at once, from a
         * new connection). */
        s_ack(self, self->agents, peer, id, NULL, true, journal_mark(self->journal), OUTBOX_PLAIN);
        if (stored)
            s_send_packed_feedback(self, job, stored, stored_len, OUTBOX_PLAIN);
        else if (job->state == JOB_FINISHED)
            s_send_feedback(self, job, OUTBOX_PLAIN);
        else
            s_progress(self, job, job_state_name(job->state));
        free(stored);
        return;
    case JOB_SUBMIT_NEW:
        job_table_set_owner(self->jobs, job, caller->owner);
        /* The ack promises the job is kept: written first, or not accepted;
         * the ack is held until it is synced (s_settle: a failed sync makes
         * it this refusal then). */
        if (journal_submitted(self->journal, job, &err) != PF_OK) {
            job_table_forget(self->jobs, job);
            pf_log_error(LOG, "job %s from agent %s refused: cannot store it: %s", id, peer_name, err.msg);
            s_refuse(self, self->agents, peer, METRICS_REJECT_OVERLOADED, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL,
                     id, "the broker cannot store jobs now, so it accepts none (%s)", err.msg);
            return;
        }
        pf_log_info(LOG, "job %s from agent %s: queued", id, peer_name);
        job_table_accepted(self->jobs, job, wire_zmq_now_ms());
        self->metrics.submitted++;
        /* Held until the record is synced; what follows it to this agent
         * waits behind it (outbox.h). */
        s_ack(self, self->agents, peer, id, NULL, false, journal_mark(self->journal), OUTBOX_SUBMIT_ACK);
        s_progress(self, job, "queued");
        s_dispatch(self);
        return;
    }
}

static void s_agent_heartbeat(broker_t *self, zframe_t *peer, const caller_t *caller, const Profeed__Heartbeat *hb)
{
    for (size_t i = 0; i < hb->n_job_ids; i++) {
        job_t *job = job_table_find(self->jobs, hb->job_ids[i]);
        /* Another's job is answered as one not known: naming an id (from a
         * status answer, or a guess) must not get its feedback. */
        if (job && !s_owns(caller, job))
            job = NULL;
        if (!job) {
            /* A restarted broker forgot it (or another connection has it):
             * the agent resubmits, and the exact request claims it. */
            s_refuse(self, self->agents, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                     hb->job_ids[i], "job %s is not known here; submit it again", hb->job_ids[i]);
            continue;
        }
        job_table_set_agent(self->jobs, job, zframe_data(peer), zframe_size(peer));
        /* An agent still waiting for a finished job missed its feedback (it
         * was away, or the broker restarted): at least once, it gets it. One
         * whose stored feedback cannot be read back is forgotten: unknown. */
        if (job->state == JOB_FINISHED && !s_send_feedback(self, job, OUTBOX_PLAIN))
            s_refuse(self, self->agents, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                     hb->job_ids[i], "job %s is not known here; submit it again", hb->job_ids[i]);
    }
    Profeed__Heartbeat reply;
    profeed__heartbeat__init(&reply);
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &reply;
    s_send(self, self->agents, peer, &env, "heartbeat", NULL);
}

/* The agent has the job's feedback: what was kept to deliver it again goes. */
static void s_agent_ack(broker_t *self, const caller_t *caller, const Profeed__Ack *ack)
{
    job_t *job = job_table_find(self->jobs, ack->job_id);
    if (!job || !s_owns(caller, job) || job->state != JOB_FINISHED || job->delivered)
        return;
    job_table_delivered(self->jobs, job);
    pf_error_t err;
    s_journal_note(job, journal_delivered(self->journal, job, &err), &err);
    pf_log_debug(LOG, "job %s: delivered", job->id);
}

static void s_on_agent(broker_t *self)
{
    zframe_t *peer = NULL, *body = NULL;
    pf_error_t err;
    /* With the frame: its properties say which CURVE key sent it. */
    Profeed__Envelope *env = wire_zmq_recv_frame(self->agents, true, &peer, &body, self->config->max_msg, &err);
    char name[WIRE_ZMQ_PEER_LEN];
    wire_zmq_peer_name(peer, name, sizeof name);
    if (!env) {
        if (err.code != PF_OK) {
            pf_log_warn(LOG, "agent peer %s: refused a message: %s", name, err.msg);
            self->metrics.rejected[err.code == PF_EPROTO ? METRICS_REJECT_VERSION : METRICS_REJECT_MALFORMED]++;
            if (peer && zframe_size(peer) > 0)
                s_error_send(self, self->agents, peer,
                             err.code == PF_EPROTO ? PROFEED__ERROR_CODE__ERROR_CODE_VERSION_MISMATCH
                                                   : PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                             NULL, "%s", err.msg);
        }
        zframe_destroy(&peer);
        return;
    }
    self->metrics.bytes_in[METRICS_AGENTS] += zframe_size(body);
    self->metrics.messages_in[METRICS_AGENTS]++;
    caller_t caller;
    s_caller(self, peer, body, &caller);
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_SUBMIT: s_submit(self, peer, name, &caller, env->submit); break;
    case PROFEED__ENVELOPE__BODY_HEARTBEAT: s_agent_heartbeat(self, peer, &caller, env->heartbeat); break;
    case PROFEED__ENVELOPE__BODY_STATUS_REQUEST: s_status(self, peer, &caller); break;
    case PROFEED__ENVELOPE__BODY_ACK: s_agent_ack(self, &caller, env->ack); break;
    default:
        pf_log_warn(LOG, "agent peer %s: sent a message agents do not send (body %d)", name, (int) env->body_case);
        s_refuse(self, self->agents, peer, METRICS_REJECT_UNEXPECTED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 NULL, "agents send submit, heartbeat, ack or status_request; got body %d", (int) env->body_case);
        break;
    }
    wire_envelope_destroy(&env);
    zframe_destroy(&body);
    zframe_destroy(&peer);
}

/* ------------------------------------------------------------------------
 * Workers */

static void s_on_ready(broker_t *self, zframe_t *peer, zframe_t *body, const char *key, Profeed__Envelope **env_p)
{
    Profeed__Ready *ready = (*env_p)->ready;
    if (self->auth) {
        /* A key may register only in the role its folder gives it. */
        const char *user = zframe_meta(body, "User-Id");
        const char *role = ready->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR ? "collector" : "analyzer";
        if (!broker_auth_user_is(user, role)) {
            pf_log_warn(LOG, "worker %s (peer %s, key of %s) refused: that key may not register in the %s role",
                        ready->worker_id, key, user ? user : "?", role);
            s_refuse(self, self->workers, peer, METRICS_REJECT_UNEXPECTED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                     NULL, "this key may not register in the %s role", role);
            return;
        }
    }
    char worker_id[WIRE_MAX_ID_LEN + 1];
    snprintf(worker_id, sizeof worker_id, "%s", ready->worker_id);
    bool collector = ready->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR;
    char replaced[JOB_WORKER_KEY_LEN];
    worker_t *w = worker_pool_ready(self->pool, peer, key, env_p, s_expiry(self), replaced, sizeof replaced);
    if (!w) {
        pf_log_error(LOG, "worker %s (peer %s): out of memory registering it", worker_id, key);
        return;
    }
    worker_pool_heard(w, wire_zmq_now_ms(), s_expiry(self));
    pf_log_info(LOG, "worker %s (peer %s) ready: %s, %zu GPU kinds, %zu capabilities%s, %u slots", worker_id,
                key, collector ? "collector" : "analyzer", w->ready->n_gpus, w->n_caps,
                w->ready->n_capabilities ? "" : " (from its profilers)", (unsigned) w->slots);
    if (replaced[0])
        s_worker_lost(self, replaced, "it registered again from a new connection");
    if (collector)
        s_collector_report(self, w, w->ready->job_ids, w->ready->n_job_ids);
    /* Jobs whose passes waited for an analyzer. */
    if (!collector) {
        zlistx_t *waiting = zlistx_new();
        for (job_t *job = job_table_first(self->jobs); job; job = job_table_next(self->jobs)) {
            if (job->state != JOB_FINISHED && !job->analyzer[0] && job->pass_len > 0)
                zlistx_add_end(waiting, job);
        }
        for (job_t *job = zlistx_first(waiting); job; job = zlistx_next(waiting))
            s_ensure_analyzer(self, job, false);
        zlistx_destroy(&waiting);
    }
    s_dispatch(self);
}

static void s_on_plan(broker_t *self, worker_t *w, const Profeed__Progress *p)
{
    job_t *job = job_table_find(self->jobs, p->job_id);
    if (!job || job->state != JOB_COLLECTING || strcmp(job->collector, w->key) != 0 || !p->has_pass_count) {
        pf_log_debug(LOG, "job %s: a stale plan from %s ignored", p->job_id, w->ready->worker_id);
        return;
    }
    pf_error_t err;
    if (job_table_plan(self->jobs, job, p->pass_count, &err) != PF_OK) {
        pf_log_warn(LOG, "job %s: collector %s: %s", job->id, w->ready->worker_id, err.msg);
        return;
    }
    s_journal_note(job, journal_planned(self->journal, job, &err), &err);
    s_progress(self, job, "collecting");
}

/* The packed Feedback the broker decoded from `body`: the bytes as they came
 * when the Envelope holds the field once (the common case), else (valid
 * protobuf, which merges the copies; our analyzers never send it) packed
 * again, and *packed_p is then the caller's to free. */
static const uint8_t *s_feedback_packed(broker_t *self, zframe_t *body, const Profeed__Feedback *fb,
                                        size_t *len_p, uint8_t **packed_p, pf_error_t *err)
{
    const uint8_t *bytes = NULL;
    *packed_p = NULL;
    if (wire_splice_find(zframe_data(body), zframe_size(body), PROFEED__ENVELOPE__BODY_FEEDBACK, &bytes, len_p))
        return bytes;
    *packed_p = wire_feedback_pack(fb, self->config->max_msg, len_p, err);
    return *packed_p;
}

/* `*body_p` is the frame the pass came in: the job table may keep it. */
static void s_on_pass(broker_t *self, worker_t *w, zframe_t *peer, zframe_t **body_p, const Profeed__PassOutput *pass)
{
    zframe_t *body = *body_p;
    job_t *job = job_table_find(self->jobs, pass->job_id);
    if (!job) {
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                 pass->job_id, "job %s is not known here", pass->job_id);
        return;
    }
    /* The pass was decoded without its file contents (wire_zmq_recv_frame):
     * what is kept and forwarded is its bytes as they came, so they must be
     * one field (protobuf would merge several; our collectors never send it). */
    const uint8_t *bytes = NULL;
    size_t len = 0;
    if (!wire_splice_find(zframe_data(body), zframe_size(body), PROFEED__ENVELOPE__BODY_PASS_OUTPUT, &bytes, &len)) {
        s_refuse(self, self->workers, peer, METRICS_REJECT_MALFORMED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 job->id, "pass %s: the Envelope holds its pass_output in more than one piece; send it as one field",
                 pass->pass_key);
        return;
    }
    /* The table keeps the received frame (*body_p), not a copy of the pass. */
    pf_error_t err;
    job_pass_result_t rc = job_table_pass(self->jobs, job, w->key, pass->pass_key,
                                          profiler_field(pass->has_profiler, pass->profiler),
                                          bytes, len, body_p, &err);
    switch (rc) {
    case JOB_PASS_DUPLICATE:
        s_ack(self, self->workers, peer, job->id, pass->pass_key, true, journal_mark(self->journal), OUTBOX_PLAIN);
        return;
    case JOB_PASS_REFUSED:
        pf_log_warn(LOG, "job %s: pass %s from %s refused: %s", job->id, pass->pass_key, w->ready->worker_id, err.msg);
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                 job->id, "%s", err.msg);
        return;
    case JOB_PASS_NEW: break;
    }
    /* The collector's ack promises the pass is safe: written now, and the ack
     * held until it is synced (s_settle: a failed sync fails the job then). */
    if (journal_pass(self->journal, job, &job->passes[job->pass_len - 1], &err) != PF_OK) {
        pf_log_error(LOG, "job %s: cannot store pass %s: %s", job->id, pass->pass_key, err.msg);
        char why[PF_ERROR_MSG_MAX + 64];
        snprintf(why, sizeof why, "the broker could not store a pass output: %s", err.msg);
        if (job->state == JOB_ANALYZING)
            worker_pool_release(w); /* its last pass moved it on: s_release no longer counts the collector */
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES, why);
        s_dispatch(self);
        return;
    }
    int64_t now = wire_zmq_now_ms();
    broker_metrics_observe(&self->metrics.pass_latency, (double) (now - job->stage_ms) / 1000.0);
    job_table_stage(self->jobs, job, now);
    pf_log_info(LOG, "job %s: pass %s (%zu of %u) from %s", job->id, pass->pass_key, job->pass_len,
                (unsigned) job->pass_count, w->ready->worker_id);
    if (job->state == JOB_ANALYZING)
        worker_pool_release(w); /* collection is over: the slot is free */
    /* The pass goes on to the analyzer before the collector's ack and the
     * agent's progress: it is what the job waits for, and each send queues
     * behind the ones before it in libzmq's I/O thread. */
    s_ensure_analyzer(self, job, true);
    s_ack(self, self->workers, peer, job->id, pass->pass_key, false, journal_mark(self->journal), OUTBOX_PASS_ACK);
    s_progress(self, job, job->state == JOB_ANALYZING ? "analyzing" : "collecting");
    if (job->state == JOB_ANALYZING)
        s_dispatch(self);
}

/* Streams whose chunks may be in the broker's queues now: jobs collecting
 * that forwarded a chunk in this attempt. Counted when a stream starts. */
static size_t s_streams_in_flight(broker_t *self)
{
    size_t n = 0;
    for (job_t *j = job_table_first(self->jobs); j; j = job_table_next(self->jobs))
        n += j->state == JOB_COLLECTING && j->streamed;
    return n;
}

/* A stream that cannot start now (`why`): its first chunk cannot wait here,
 * as chunks are not kept, so the stream stops and the job is dispatched
 * again after a backoff, as a collector's OVERLOADED refusal is, without
 * spending an attempt. */
static void s_stream_wait(broker_t *self, job_t *job, zframe_t *peer, const char *why)
{
    uint32_t shift = job->refusals < 5 ? job->refusals : 5;
    pf_log_info(LOG, "job %s: %s; stream stopped, dispatched again in %d ms", job->id, why, 50 << shift);
    s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
             job->id, "job %s: %s; stop streaming, it is dispatched again", job->id, why);
    s_release(self, job);
    job_table_refused(self->jobs, job, wire_zmq_now_ms() + (50 << shift));
    pf_error_t err;
    s_journal_note(job, journal_requeued(self->journal, job, &err), &err);
}

/* A chunk of a streamed pass from its collector (issue 20): checked against
 * the job, passed through to the job's analyzer as it came (spliced into a
 * Dispatch, never assembled or kept), and acknowledged to the collector only
 * when the analyzer acknowledges it, so a slow analyzer slows the collector.
 * Not journaled: a restarted broker collects the job again. */
static void s_on_chunk(broker_t *self, worker_t *w, zframe_t *peer, zframe_t *body, const Profeed__PassChunk *chunk)
{
    job_t *job = job_table_find(self->jobs, chunk->job_id);
    if (!job || job->state != JOB_COLLECTING || strcmp(job->collector, w->key) != 0) {
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                 chunk->job_id, "job %s is not being collected here; stop streaming it", chunk->job_id);
        return;
    }
    if (chunk->has_attempt && chunk->attempt != job->attempt) {
        pf_log_debug(LOG, "job %s: chunk %u of pass %s from attempt %u, now %u; dropped", job->id,
                     (unsigned) chunk->seq, chunk->pass_key, (unsigned) chunk->attempt, (unsigned) job->attempt);
        return;
    }
    const uint8_t *bytes = NULL;
    size_t len = 0;
    if (!wire_splice_find(zframe_data(body), zframe_size(body), PROFEED__ENVELOPE__BODY_PASS_CHUNK, &bytes, &len)) {
        s_refuse(self, self->workers, peer, METRICS_REJECT_MALFORMED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 job->id, "pass %s: the Envelope holds its pass_chunk in more than one piece; send it as one field",
                 chunk->pass_key);
        return;
    }
    if (job->pass_count == 0) {
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                 job->id, "job %s: a chunk before the plan's size", job->id);
        return;
    }
    if (job_table_chunk_in(self->jobs, job, chunk->raw_size) > self->config->max_capture_bytes) {
        char why[256];
        snprintf(why, sizeof why,
                 "the capture is over the broker's limit of %llu MiB per job (max-capture-mb); profile fewer launches "
                 "(--launch-count, --kernel-regex) or raise the limit",
                 (unsigned long long) (self->config->max_capture_bytes >> 20));
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                 job->id, "%s", why);
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT, why);
        s_dispatch(self);
        return;
    }
    if (!job->streamed && !job->analyzer[0]) {
        /* A new stream: it may hold a window of chunks here, within the
         * broker's budget for streams. */
        uint64_t window = (uint64_t) PASS_CHUNK_WINDOW * self->config->chunk_bytes;
        size_t streams = s_streams_in_flight(self);
        if (streams > 0 && (streams + 1) * window > self->config->stream_memory_bytes) {
            char why[256];
            snprintf(why, sizeof why,
                     "%zu streams in flight hold the broker's stream-memory-mb of %llu MiB (%llu KiB each: %d "
                     "chunks of chunk-kb)",
                     streams, (unsigned long long) (self->config->stream_memory_bytes >> 20),
                     (unsigned long long) (window >> 10), PASS_CHUNK_WINDOW);
            s_stream_wait(self, job, peer, why);
            return;
        }
    }
    job_table_streaming(self->jobs, job, profiler_field(chunk->has_profiler, chunk->profiler));
    if (!job->analyzer[0]) {
        const char *need = worker_pool_capability(job->profiler);
        worker_t *a = worker_pool_pick_analyzer(self->pool, need, true);
        if (!a && worker_pool_pick_analyzer(self->pool, need, false)) {
            /* Only analyzers from before streamed passes: say so, rather
             * than let the job wait out its time limit. */
            char why[256];
            snprintf(why, sizeof why,
                     "the capture is streamed in chunks (it is over the broker's chunk-kb) and no registered %s "
                     "analyzer takes streamed passes (Ready.chunks); upgrade the analyzers",
                     need ? need : "any");
            s_refuse(self, self->workers, peer, METRICS_REJECT_UNKNOWN_JOB, PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB,
                     job->id, "%s", why);
            s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT, why);
            s_dispatch(self);
            return;
        }
        if (!a) {
            /* No analyzer yet (a restart: they come back). */
            char why[256];
            snprintf(why, sizeof why, "no analyzer for %s streams yet", need ? need : "any");
            s_stream_wait(self, job, peer, why);
            return;
        }
        job_table_set_analyzer(self->jobs, job, a->key);
        worker_pool_claim(a);
        pf_log_info(LOG, "job %s: pinned to analyzer %s (%s), streamed", job->id, a->ready->worker_id, a->key);
        s_send_passes(self, job, true); /* passes that came whole before */
    }
    worker_t *a = worker_pool_find(self->pool, job->analyzer);
    if (!a)
        return;
    Profeed__Dispatch head;
    pass_dispatch_head(job, &head);
    /* A streamed pass's last chunk becomes the pass at the analyzer, so it
     * carries the job's context (plan, target, baseline) as a whole pass's
     * Dispatch does: a job of streamed passes only has no other. */
    pass_dispatch_context_t context;
    if (chunk->last) {
        s_context_init(self, job, &context);
        pass_dispatch_context_with(&context, true, len, self->config->max_msg);
        head.context = &context.msg;
    }
    pf_error_t err;
    pf_status_t sent = s_splice_send(self, self->workers, a->routing_id, PROFEED__ENVELOPE__BODY_DISPATCH,
                                     &head.base, PROFEED__DISPATCH__WORK_PASS_CHUNK, bytes, len, 0, OUTBOX_PLAIN,
                                     job->id, &err);
    if (chunk->last)
        pass_dispatch_context_clear(&context);
    if (sent != PF_OK) {
        pf_log_warn(LOG, "job %s: could not send chunk %u of pass %s to analyzer %s: %s", job->id,
                    (unsigned) chunk->seq, chunk->pass_key, a->ready->worker_id, err.msg);
        return;
    }
    if (chunk->last)
        job_table_stream_sent(self->jobs, job, chunk->pass_key, chunk->seq,
                              profiler_field(chunk->pass->has_profiler, chunk->pass->profiler));
}

/* The analyzer's receipt for chunks: passed on to the collector as its
 * credit; the receipt of a pass's last chunk is the pass arriving. */
static void s_on_chunk_ack(broker_t *self, worker_t *w, const Profeed__ChunkAck *ack)
{
    job_t *job = job_table_find(self->jobs, ack->job_id);
    if (!job || job->state != JOB_COLLECTING || strcmp(job->analyzer, w->key) != 0 ||
        (ack->has_attempt && ack->attempt != job->attempt)) {
        pf_log_debug(LOG, "job %s: chunk receipt from %s not expected (moved or a stale attempt); ignored",
                     ack->job_id, w->ready->worker_id);
        return;
    }
    worker_t *c = worker_pool_find(self->pool, job->collector);
    if (c) {
        Profeed__ChunkAck fwd = *ack;
        fwd.has_attempt = 1;
        fwd.attempt = job->attempt;
        Profeed__Envelope env;
        wire_envelope_init(&env);
        env.body_case = PROFEED__ENVELOPE__BODY_CHUNK_ACK;
        env.chunk_ack = &fwd;
        s_send(self, self->workers, c->routing_id, &env, "chunk receipt", job->id);
    }
    pf_error_t err;
    job_pass_result_t rc;
    /* Nothing of a streamed pass is kept: the table records that it is in. */
    if (!job_table_stream_received(self->jobs, job, ack->pass_key, ack->seq, &rc, &err))
        return;
    if (rc != JOB_PASS_NEW) {
        pf_log_warn(LOG, "job %s: streamed pass %s not recorded: %s", job->id, ack->pass_key,
                    rc == JOB_PASS_DUPLICATE ? "a duplicate" : err.msg);
        return;
    }
    int64_t now = wire_zmq_now_ms();
    broker_metrics_observe(&self->metrics.pass_latency, (double) (now - job->stage_ms) / 1000.0);
    job_table_stage(self->jobs, job, now);
    pf_log_info(LOG, "job %s: pass %s (%zu of %u) streamed, %llu raw bytes so far", job->id, ack->pass_key,
                job->pass_len, (unsigned) job->pass_count, (unsigned long long) job->stream_raw);
    if (job->state == JOB_ANALYZING && c)
        worker_pool_release(c);
    s_progress(self, job, job->state == JOB_ANALYZING ? "analyzing" : "collecting");
    if (job->state == JOB_ANALYZING)
        s_dispatch(self);
}

static void s_on_feedback(broker_t *self, worker_t *w, zframe_t *body, const Profeed__Feedback *fb)
{
    job_t *job = job_table_find(self->jobs, fb->job_id);
    if (!job || job->state == JOB_FINISHED || strcmp(job->analyzer, w->key) != 0) {
        pf_log_debug(LOG, "job %s: feedback from %s not expected (finished or moved); ignored",
                     fb->job_id ? fb->job_id : "-", w->ready->worker_id);
        return;
    }
    size_t len = 0;
    pf_error_t err;
    uint8_t *packed;
    const uint8_t *bytes = s_feedback_packed(self, body, fb, &len, &packed, &err);
    if (!bytes) {
        pf_log_error(LOG, "job %s: feedback does not pack: %s", job->id, err.msg);
        return;
    }
    s_finish(self, job, bytes, len, fb->has_status ? fb->status : PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_UNSPECIFIED);
    free(packed);
    s_dispatch(self);
}

static void s_on_worker_error(broker_t *self, worker_t *w, const Profeed__Error *e)
{
    job_t *job = job_table_find(self->jobs, e->job_id);
    pf_log_warn(LOG, "job %s: worker %s reports error %d: %s", e->job_id ? e->job_id : "-",
                w->ready->worker_id, (int) e->code, e->text ? e->text : "");
    if (!job || job->state == JOB_FINISHED)
        return;
    bool ours = (job->state == JOB_COLLECTING && strcmp(job->collector, w->key) == 0) ||
                strcmp(job->analyzer, w->key) == 0;
    if (!ours)
        return;
    if (e->code == PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED && job->state == JOB_COLLECTING &&
        strcmp(job->collector, w->key) == 0) {
        /* The collector's slots and ours disagreed: it is full by its own
         * word until its next report says otherwise. The attempt never
         * started, so it is not spent; the job waits (50 ms doubling to
         * 1.6 s: a heartbeat or two, for the reports to catch up) and then
         * prefers another collector. */
        worker_pool_fill(w);
        uint32_t shift = job->refusals < 5 ? job->refusals : 5;
        job_table_refused(self->jobs, job, wire_zmq_now_ms() + (50 << shift));
        pf_error_t err;
        s_journal_note(job, journal_requeued(self->journal, job, &err), &err);
        pf_log_info(LOG, "job %s: collector %s is full (refusal %u); retried in %d ms", job->id, w->ready->worker_id,
                    (unsigned) job->refusals, 50 << shift);
        s_dispatch(self);
        return;
    }
    s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT,
                    e->text && *e->text ? e->text : "the worker could not run the job");
    s_dispatch(self);
}

static void s_on_worker(broker_t *self)
{
    zframe_t *peer = NULL, *body = NULL;
    pf_error_t err;
    Profeed__Envelope *env = wire_zmq_recv_frame(self->workers, true, &peer, &body, self->config->max_msg, &err);
    char key[WIRE_ZMQ_PEER_LEN];
    wire_zmq_peer_name(peer, key, sizeof key);
    if (!env) {
        if (err.code != PF_OK) {
            pf_log_warn(LOG, "worker peer %s: refused a message: %s", key, err.msg);
            self->metrics.rejected[err.code == PF_EPROTO ? METRICS_REJECT_VERSION : METRICS_REJECT_MALFORMED]++;
            if (peer && zframe_size(peer) > 0)
                s_error_send(self, self->workers, peer,
                             err.code == PF_EPROTO ? PROFEED__ERROR_CODE__ERROR_CODE_VERSION_MISMATCH
                                                   : PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                             NULL, "%s", err.msg);
        }
        zframe_destroy(&peer);
        return;
    }
    self->metrics.bytes_in[METRICS_WORKERS] += zframe_size(body);
    self->metrics.messages_in[METRICS_WORKERS]++;
    if (env->body_case == PROFEED__ENVELOPE__BODY_READY) {
        s_on_ready(self, peer, body, key, &env);
        goto cleanup;
    }
    worker_t *w = worker_pool_find(self->pool, key);
    if (!w) {
        /* After a broker restart: the worker re-registers on this error. An
         * agent pointed at this endpoint is told where it should be. */
        bool agent = env->body_case == PROFEED__ENVELOPE__BODY_SUBMIT ||
                     env->body_case == PROFEED__ENVELOPE__BODY_STATUS_REQUEST;
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNREGISTERED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 NULL, "%s",
                 agent ? "this is the broker's worker endpoint, for collectors and analyzers; agents (profeed "
                         "submit, profeed status) connect to its agent endpoint (--agents)"
                       : "peer not registered: send Ready first");
        goto cleanup;
    }
    worker_pool_heard(w, wire_zmq_now_ms(), s_expiry(self));
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_HEARTBEAT:
        if (w->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR)
            s_collector_report(self, w, env->heartbeat->job_ids, env->heartbeat->n_job_ids);
        break;
    case PROFEED__ENVELOPE__BODY_PROGRESS: s_on_plan(self, w, env->progress); break;
    case PROFEED__ENVELOPE__BODY_PASS_OUTPUT: s_on_pass(self, w, peer, &body, env->pass_output); break;
    case PROFEED__ENVELOPE__BODY_FEEDBACK: s_on_feedback(self, w, body, env->feedback); break;
    case PROFEED__ENVELOPE__BODY_ERROR: s_on_worker_error(self, w, env->error); break;
    case PROFEED__ENVELOPE__BODY_ACK: break;
    case PROFEED__ENVELOPE__BODY_PASS_CHUNK: s_on_chunk(self, w, peer, body, env->pass_chunk); break;
    case PROFEED__ENVELOPE__BODY_CHUNK_ACK: s_on_chunk_ack(self, w, env->chunk_ack); break;
    default:
        pf_log_warn(LOG, "worker %s (peer %s): sent a message workers do not send (body %d)",
                    w->ready->worker_id, key, (int) env->body_case);
        s_refuse(self, self->workers, peer, METRICS_REJECT_UNEXPECTED, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                 NULL, "workers do not send body %d", (int) env->body_case);
        break;
    }
cleanup:
    wire_envelope_destroy(&env);
    zframe_destroy(&body);
    zframe_destroy(&peer);
}

/* ------------------------------------------------------------------------
 * Journal syncs */

/* A zlistx destructor for the strings the broker's lists own. */
static void s_free_item(void **item)
{
    free(*item);
    *item = NULL;
}

/* A failed sync's consequences, gathered while the outboxes are revised
 * (s_failed_msg) and carried out once they have released what they may:
 * those steps send, and an outbox is not sent on while it is walked. */
typedef struct {
    broker_t *broker;
    const journal_sync_progress_t *progress;
    zlistx_t *forget;  /* job ids whose submit ack became a refusal: forgotten */
    zlistx_t *fail;    /* job ids whose pass ack was dropped: failed */
} sync_failure_t;

static bool s_listed(zlistx_t *ids, const char *id)
{
    for (const char *i = zlistx_first(ids); i; i = zlistx_next(ids))
        if (strcmp(i, id) == 0)
            return true;
    return false;
}

/* One held message after a failed sync: the promises whose records it
 * covered are treated as the failed write of the same record is (s_submit,
 * s_on_pass, s_finish); what was to follow a refused submit's ack to its
 * agent about that job goes with the job. */
static void s_failed_msg(void *arg, outbox_msg_t *msg)
{
    sync_failure_t *f = arg;
    broker_t *self = f->broker;
    int kind = msg->kind & ~OUTBOX_COUNTED;
    if (!msg->body)
        return;
    bool covered = msg->mark > f->progress->failed_from && msg->mark <= f->progress->failed_to;
    if (kind == OUTBOX_PLAIN && msg->job_id[0] && s_listed(f->forget, msg->job_id)) {
        zframe_destroy(&msg->body);
        return;
    }
    if (!covered)
        return;
    if (kind == OUTBOX_SUBMIT_ACK) {
        pf_log_error(LOG, "job %s refused: cannot store it: %s", msg->job_id, f->progress->why);
        self->metrics.rejected[METRICS_REJECT_OVERLOADED]++;
        /* The refusal s_submit sends for a failed write, in the ack's place. */
        char text[1024];
        snprintf(text, sizeof text, "the broker cannot store jobs now, so it accepts none (%s)", f->progress->why);
        Profeed__Error error;
        Profeed__Envelope env;
        wire_zmq_error_envelope(&env, &error, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, text, msg->job_id);
        zframe_destroy(&msg->body);
        size_t size = 0;
        pf_error_t err;
        if (wire_envelope_measure(&env, self->config->max_msg, &size, &err) == PF_OK &&
            (msg->body = zframe_new(NULL, size)) != NULL)
            wire_envelope_pack_to(&env, zframe_data(msg->body), size);
        msg->kind = OUTBOX_PLAIN;
        zlistx_add_end(f->forget, strdup(msg->job_id));
    } else if (kind == OUTBOX_PASS_ACK) {
        zframe_destroy(&msg->body); /* as for a failed write: no ack, the job fails */
        if (!s_listed(f->fail, msg->job_id))
            zlistx_add_end(f->fail, strdup(msg->job_id));
    } else if (kind == OUTBOX_FEEDBACK) {
        pf_log_error(LOG, "job %s: the feedback is not stored (a broker restart would run the job again): %s",
                     msg->job_id, f->progress->why);
    }
}

/* Takes the journal's sync progress and sends the promises it made good;
 * after a failed sync, first turns the promises it covered into what a
 * failed write would have sent (s_failed_msg). */
static void s_settle(broker_t *self)
{
    journal_sync_progress_t progress;
    journal_progress(self->journal, &progress);
    sync_failure_t f = {.broker = self, .progress = &progress};
    if (progress.failed_to) {
        pf_log_error(LOG, "%s; the promises waiting on it are withdrawn (new jobs refused, their passes failed)",
                     progress.why);
        f.forget = zlistx_new();
        f.fail = zlistx_new();
        if (f.forget)
            zlistx_set_destructor(f.forget, s_free_item);
        if (f.fail)
            zlistx_set_destructor(f.fail, s_free_item);
        if (f.forget && f.fail) {
            outbox_revise(self->to_agents, s_failed_msg, &f);
            outbox_revise(self->to_workers, s_failed_msg, &f);
        } else {
            pf_log_error(LOG, "out of memory withdrawing promises: they are sent as if stored");
        }
    }
    self->synced = progress.synced;
    outbox_release(self->to_agents, self->synced);
    outbox_release(self->to_workers, self->synced);
    for (const char *id = f.forget ? zlistx_first(f.forget) : NULL; id; id = zlistx_next(f.forget)) {
        job_t *job = job_table_find(self->jobs, id);
        if (!job)
            continue;
        s_release(self, job);
        job_table_forget(self->jobs, job);
        pf_error_t err;
        if (journal_forgotten(self->journal, id, &err) != PF_OK)
            pf_log_warn(LOG, "job %s: forgetting it is not stored: %s", id, err.msg);
    }
    bool failed = false;
    for (const char *id = f.fail ? zlistx_first(f.fail) : NULL; id; id = zlistx_next(f.fail)) {
        job_t *job = job_table_find(self->jobs, id);
        if (!job || job->state == JOB_FINISHED)
            continue;
        char why[PF_ERROR_MSG_MAX + 64];
        snprintf(why, sizeof why, "the broker could not store a pass output: %s", progress.why);
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES, why);
        failed = true;
    }
    zlistx_destroy(&f.forget);
    zlistx_destroy(&f.fail);
    if (failed)
        s_dispatch(self);
}

/* ------------------------------------------------------------------------
 * Timers */

static void s_tick(broker_t *self)
{
    int64_t now = wire_zmq_now_ms();
    Profeed__Heartbeat hb;
    profeed__heartbeat__init(&hb);
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    for (worker_t *w = worker_pool_first(self->pool); w; w = worker_pool_next(self->pool)) {
        pf_error_t err;
        /* A worker whose connection is gone cannot be reached: it is dead now,
         * not in liveness x interval. */
        if (s_wire_send(self, self->workers, w->routing_id, &env, &err) != PF_OK)
            worker_pool_unreachable(w);
    }
    worker_t *w;
    while ((w = worker_pool_expired(self->pool, now)) != NULL)
        s_worker_lost(self, w->key, w->expiry_ms == 0 ? "its connection is gone" : "no heartbeat");
    zlistx_t *late = zlistx_new();
    for (job_t *job = job_table_first(self->jobs); job; job = job_table_next(self->jobs)) {
        if (job->state != JOB_FINISHED && job->deadline_ms < now)
            zlistx_add_end(late, job);
    }
    for (job_t *job = zlistx_first(late); job; job = zlistx_next(late))
        s_finish_failed(self, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT,
                        "the job did not finish within its time limit");
    zlistx_destroy(&late);
    if (!self->judged && now - self->returning_ms >= s_return_ms(self)) {
        self->judged = true;
        s_judge_queue(self);
    }
    zlistx_t *gone = zlistx_new();
    zlistx_set_destructor(gone, s_free_item);
    job_table_expire(self->jobs, now - self->config->retain_ms, gone);
    job_table_trim_finished(self->jobs, self->config->max_finished, gone);
    job_table_trim_bytes(self->jobs, self->config->max_retained_bytes, gone);
    for (char *id = zlistx_first(gone); id; id = zlistx_next(gone)) {
        pf_error_t err;
        if (journal_forgotten(self->journal, id, &err) != PF_OK)
            pf_log_warn(LOG, "job %s: forgetting it is not stored: %s", id, err.msg);
    }
    zlistx_destroy(&gone);
    s_dispatch(self);
}

static char *s_render_metrics(void *arg)
{
    broker_t *self = arg;
    return broker_metrics_render(&self->metrics, self->jobs, self->pool, wire_zmq_now_ms() - self->started_ms);
}

static int s_write_endpoints(const broker_config_t *config, zsock_t *agents, zsock_t *workers,
                             broker_http_t *http)
{
    if (!config->endpoints_file)
        return 0;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", config->endpoints_file);
    if (n < 0 || (size_t) n >= sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "agent=%s\nworker=%s\n", zsock_endpoint(agents), zsock_endpoint(workers));
    if (http)
        fprintf(f, "metrics=%s\n", broker_http_endpoint(http));
    if (fclose(f) != 0)
        return -1;
    /* rename: a reader never sees half a file. */
    return rename(tmp, config->endpoints_file);
}

/* CURVE on both endpoints with the ZAP handler, or plaintext where that is
 * allowed. Before binding: a CURVE server must be one from its first peer. */
static int s_secure(broker_t *self)
{
    const broker_config_t *config = self->config;
    pf_error_t err;
    if (!config->curve_secret || !*config->curve_secret) {
        if (wire_curve_check_plaintext(config->agent_endpoint, config->insecure, LOG, &err) != PF_OK ||
            wire_curve_check_plaintext(config->worker_endpoint, config->insecure, LOG, &err) != PF_OK) {
            pf_log_error(LOG, "%s", err.msg);
            return -1;
        }
        return 0;
    }
    self->curve = wire_curve_server_new(config->curve_secret, &err);
    if (self->curve)
        self->auth = broker_auth_new(config->agent_keys, config->collector_keys, config->analyzer_keys,
                                     config->operator_keys, &err);
    if (!self->curve || !self->auth) {
        pf_log_error(LOG, "CURVE: %s", err.msg);
        return -1;
    }
    wire_curve_apply_server(self->curve, self->agents, BROKER_AUTH_AGENTS);
    wire_curve_apply_server(self->curve, self->workers, BROKER_AUTH_WORKERS);
    pf_log_info(LOG, "CURVE on both endpoints; the broker's public key is %s", wire_curve_public_txt(self->curve));
    return 0;
}

int broker_run(const broker_config_t *config, zsock_t *pipe)
{
    assert(config);
    broker_t self = {.config = config, .started_ms = wire_zmq_now_ms()};
    self.returning_ms = self.started_ms;
    broker_metrics_init(&self.metrics);
    int rc = -1;
    self.agents = zsock_new(ZMQ_ROUTER);
    self.workers = zsock_new(ZMQ_ROUTER);
    self.jobs = job_table_new();
    self.pool = worker_pool_new();
    zpoller_t *poller = NULL;
    if (!self.agents || !self.workers || !self.jobs || !self.pool)
        goto cleanup;
    self.to_agents = outbox_new(self.agents, s_sent_agents, &self);
    self.to_workers = outbox_new(self.workers, s_sent_workers, &self);
    if (!self.to_agents || !self.to_workers)
        goto cleanup;
    if ((uint64_t) PASS_CHUNK_WINDOW * config->chunk_bytes > config->stream_memory_bytes) {
        pf_log_error(LOG, "stream-memory-mb of %llu MiB does not hold one stream's window of %d chunks of chunk-kb "
                          "%u KiB; raise stream-memory-mb or lower chunk-kb",
                     (unsigned long long) (config->stream_memory_bytes >> 20), PASS_CHUNK_WINDOW,
                     (unsigned) (config->chunk_bytes >> 10));
        goto cleanup;
    }
    if (config->state_dir && *config->state_dir) {
        journal_options_t opts;
        journal_options_default(&opts);
        opts.sync = config->journal_sync;
        opts.max_record = config->max_msg + 1024 * 1024;
        size_t replayed = 0;
        pf_error_t err;
        self.journal = journal_open(config->state_dir, &opts, self.jobs, &replayed, &err);
        if (!self.journal) {
            pf_log_error(LOG, "cannot use the state folder %s: %s", config->state_dir, err.msg);
            goto cleanup;
        }
        pf_log_info(LOG, "journal %s/journal: %zu records read; %zu jobs queued, %zu analyzing, %zu finished%s",
                    config->state_dir, replayed, job_table_count(self.jobs, JOB_QUEUED),
                    job_table_count(self.jobs, JOB_ANALYZING), job_table_count(self.jobs, JOB_FINISHED),
                    config->journal_sync ? "" : " (journal-fsync off: a power loss can lose acknowledged jobs)");
    } else {
        pf_log_warn(LOG, "no state folder (--state-dir): jobs live in memory only and are lost if the broker dies");
    }
    wire_zmq_configure(self.agents, config->max_msg, config->hwm);
    wire_zmq_configure(self.workers, config->max_msg, config->hwm);
    if (s_secure(&self) != 0)
        goto cleanup;
    if (bind_retry_bind(self.agents, config->agent_endpoint, "agent", config->bind_retry_ms) != 0 ||
        bind_retry_bind(self.workers, config->worker_endpoint, "worker", config->bind_retry_ms) != 0)
        goto cleanup;
    if (config->metrics_endpoint && *config->metrics_endpoint) {
        pf_error_t err;
        self.http = broker_http_new(config->metrics_endpoint, s_render_metrics, &self, &err);
        if (!self.http) {
            pf_log_error(LOG, "%s", err.msg);
            goto cleanup;
        }
        pf_log_info(LOG, "serving Prometheus metrics on %s (http, /metrics)", broker_http_endpoint(self.http));
    }
    if (s_write_endpoints(config, self.agents, self.workers, self.http) != 0) {
        pf_log_error(LOG, "cannot write the endpoints file %s", config->endpoints_file);
        goto cleanup;
    }
    pf_log_info(LOG, "serving agents on %s, workers on %s (heartbeat %d ms x %d)", zsock_endpoint(self.agents),
                zsock_endpoint(self.workers), config->heartbeat_ms, config->liveness);
    poller = zpoller_new(self.agents, self.workers, NULL);
    if (self.auth)
        zpoller_add(poller, broker_auth_socket(self.auth));
    if (self.http)
        zpoller_add(poller, broker_http_socket(self.http));
    zsock_t *synced = journal_socket(self.journal);
    if (synced)
        zpoller_add(poller, synced);
    if (pipe) {
        zpoller_add(poller, pipe);
        zsock_signal(pipe, 0);
    }
    rc = 0;
    self.next_tick_ms = wire_zmq_now_ms() + config->heartbeat_ms;
    while (true) {
        int64_t wait = self.next_tick_ms - wire_zmq_now_ms();
        void *which = zpoller_wait(poller, wait < 0 ? 0 : (int) wait);
        if (zpoller_terminated(poller))
            break;
        if (which == pipe && pipe) {
            if (wire_zmq_pipe_term(pipe))
                break;
        } else if (which == self.agents) {
            s_on_agent(&self);
        } else if (which == self.workers) {
            s_on_worker(&self);
        } else if (self.auth && which == broker_auth_socket(self.auth)) {
            broker_auth_handle(self.auth);
        } else if (self.http && which == broker_http_socket(self.http)) {
            broker_http_handle(self.http, wire_zmq_now_ms());
        }
        /* A sync ended, or a compaction in a handler synced everything:
         * promises may go (a take with nothing new is cheap). */
        if (synced && (which == synced || outbox_held(self.to_agents) || outbox_held(self.to_workers)))
            s_settle(&self);
        if (wire_zmq_now_ms() >= self.next_tick_ms) {
            s_tick(&self);
            if (self.http)
                broker_http_expire(self.http, wire_zmq_now_ms());
            self.next_tick_ms = wire_zmq_now_ms() + config->heartbeat_ms;
        }
    }
    pf_log_info(LOG, "stopping");
cleanup:
    if (rc != 0 && pipe)
        zsock_signal(pipe, 1);
    zpoller_destroy(&poller);
    broker_http_destroy(&self.http);
    /* Held promises are dropped, after the journal synced at close: outbox.c
     * says why no promise is broken so. */
    outbox_destroy(&self.to_agents);
    outbox_destroy(&self.to_workers);
    journal_close(&self.journal);
    job_table_destroy(&self.jobs);
    worker_pool_destroy(&self.pool);
    zsock_destroy(&self.agents);
    zsock_destroy(&self.workers);
    broker_auth_destroy(&self.auth);
    wire_curve_destroy(&self.curve);
    return rc;
}

void broker_actor(zsock_t *pipe, void *args)
{
    broker_run((const broker_config_t *) args, pipe);
}
