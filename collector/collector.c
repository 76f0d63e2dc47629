/* collector: the event loop (collector.h). The broker's socket and the slots'
 * pipes feed it; it answers heartbeats, hands each dispatched job to a slot's
 * thread (slot.c) and forwards what the job sends. What a job does is in
 * job_replay.c and job_real.c, what the host offers in discover.c. */
#include "collector.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "pirate.h"
#include "pf_log.h"
#include "pf_tsan.h"
#include "profiler.h"
#include "wire_zmq.h"

#define LOG "collector"

void collector_config_default(collector_config_t *config)
{
    memset(config, 0, sizeof *config);
    config->broker_endpoint = "tcp://127.0.0.1:5556";
    config->heartbeat_ms = 1000;
    config->liveness = 3;
    config->slots = 1;
    config->pass_timeout_s = 600;
    config->max_output = (size_t) 48 * 1024 * 1024;
    config->max_msg = WIRE_MAX_MSG;
    /* KernelAgent's KernelProfiler: two attempts, 2 s apart. */
    config->attempts = 2;
    config->retry_backoff_ms = 2000;
    config->allow_programs = "*";
    config->keep_env = COLLECTOR_KEEP_ENV;
    config->cpu_limit_s = 3600;
    config->file_limit_mb = 4096;
    config->max_procs = 4096;
}

/* ------------------------------------------------------------------------
 * The loop */

typedef struct {
    const collector_config_t *config;
    collector_info_t info;
    zsock_t *sock;
    wire_curve_t *curve; /* NULL: plaintext */
    zpoller_t *poller;
    zsock_t *pipe;
    job_run_t **runs;     /* config->slots of them, NULL = free */
    zactor_t **threads;   /* each slot's thread, started at its first job */
    pirate_t pirate;      /* liveness of the broker, heartbeats, reconnect pause */
    int64_t last_ready_ms;
} collector_t;

static void s_run_free(job_run_t *run)
{
    pf_tsan_taken_over(run); /* back from its thread ("DONE") */
    pthread_mutex_destroy(&run->lock);
    pthread_cond_destroy(&run->acked_cond);
    close(run->cancel[0]);
    close(run->cancel[1]);
    wire_job_request_destroy(&run->request);
    free(run);
}

/* Stops the slot's job, if any: cancels it and waits for its thread to say
 * DONE (a running pass is killed through the cancel pipe), dropping what the
 * job still sent. */
static void s_run_destroy(collector_t *self, size_t slot)
{
    job_run_t *run = self->runs[slot];
    if (!run)
        return;
    atomic_store(&run->cancelled, true);
    ssize_t w = write(run->cancel[1], "x", 1);
    (void) w;
    bool done = false;
    while (!done) {
        zmsg_t *msg = zmsg_recv(self->threads[slot]);
        if (!msg) {
            if (zmq_errno() == EINTR)
                continue; /* a signal (the stop itself): keep waiting for the job */
            break;
        }
        char *kind = zmsg_popstr(msg);
        done = kind && streq(kind, "DONE");
        zstr_free(&kind);
        zmsg_destroy(&msg);
    }
    /* Without DONE (the context is going away) the thread may still hold the
     * run: better kept than freed under it. */
    if (done)
        s_run_free(run);
    else
        pf_log_warn(LOG, "job %s: its thread did not stop; left to the exit", run->job_id);
    self->runs[slot] = NULL;
}

static void s_send(collector_t *self, Profeed__Envelope *env, const char *what)
{
    pf_error_t err;
    if (wire_zmq_send(self->sock, NULL, env, self->config->max_msg, NULL, &err) != PF_OK)
        pf_log_warn(LOG, "could not send %s to the broker: %s", what, err.msg);
}

static void s_send_ready(collector_t *self)
{
    Profeed__GpuCapability *gpus[MAX_GPU_KINDS];
    for (size_t i = 0; i < self->info.gpu_count; i++)
        gpus[i] = &self->info.gpus[i];
    Profeed__Ready ready;
    profeed__ready__init(&ready);
    ready.has_role = 1;
    ready.role = PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR;
    ready.worker_id = self->info.worker_id;
    ready.host = self->info.host;
    ready.gpus = gpus;
    ready.n_gpus = self->info.gpu_count;
    ready.profilers = self->info.profilers;
    ready.n_profilers = self->info.profiler_count;
    /* The same profilers as the strings the broker routes on (it knows no
     * profiler); `profilers` stays for brokers from before them. */
    char *caps[PROFILER_MAX];
    for (size_t i = 0; i < self->info.profiler_count && i < PROFILER_MAX; i++) {
        const char *name = profiler_name_or(self->info.profilers[i], NULL);
        if (name)
            caps[ready.n_capabilities++] = (char *) name;
    }
    ready.capabilities = caps;
    ready.has_slots = 1;
    ready.slots = self->config->slots;
    ready.has_chunks = ready.chunks = 1;
    /* Jobs still running (the broker restarted under them): a broker that
     * counted these slots free would send work they must refuse. */
    char *ids[1024];
    for (size_t i = 0; i < self->config->slots && ready.n_job_ids < 1024; i++) {
        if (self->runs[i])
            ids[ready.n_job_ids++] = self->runs[i]->job_id;
    }
    ready.job_ids = ids;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_READY;
    env.ready = &ready;
    s_send(self, &env, "ready");
    self->last_ready_ms = wire_zmq_now_ms();
}

static void s_send_heartbeat(collector_t *self)
{
    char *ids[1024];
    Profeed__Heartbeat hb;
    profeed__heartbeat__init(&hb);
    hb.worker_id = self->info.worker_id;
    for (size_t i = 0; i < self->config->slots && hb.n_job_ids < 1024; i++) {
        if (self->runs[i])
            ids[hb.n_job_ids++] = self->runs[i]->job_id;
    }
    hb.job_ids = ids;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    s_send(self, &env, "heartbeat");
}

static int s_connect(collector_t *self)
{
    if (wire_zmq_reconnect(&self->sock, self->poller, self->config->broker_endpoint,
                           self->config->max_msg, self->curve) != 0) {
        pf_log_error(LOG, "cannot connect to %s", self->config->broker_endpoint);
        return -1;
    }
    pirate_connected(&self->pirate);
    s_send_ready(self);
    return 0;
}

/* Starts the dispatched job on a free slot; the run takes d->job. */
static void s_on_dispatch(collector_t *self, Profeed__Dispatch *d)
{
    if (d->work_case != PROFEED__DISPATCH__WORK_JOB) {
        pf_log_warn(LOG, "broker sent a dispatch that is not a job; ignored");
        return;
    }
    const char *job_id = d->job->job_id;
    uint32_t attempt = d->has_attempt ? d->attempt : 1;
    size_t free_slot = self->config->slots;
    for (size_t i = 0; i < self->config->slots; i++) {
        job_run_t *run = self->runs[i];
        if (run && streq(run->job_id, job_id)) {
            /* A stream the broker stopped may be dispatched again under
             * its attempt (no analyzer was there yet, issue 20). */
            pthread_mutex_lock(&run->lock);
            bool refused = run->refused;
            pthread_mutex_unlock(&run->lock);
            if (attempt < run->attempt || (attempt == run->attempt && !refused)) {
                pf_log_info(LOG, "job %s: attempt %u already running; duplicate ignored", job_id, (unsigned) attempt);
                return;
            }
            s_run_destroy(self, i); /* a newer attempt replaces it */
        }
        if (!self->runs[i] && free_slot == self->config->slots)
            free_slot = i;
    }
    if (free_slot == self->config->slots) {
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED, job_id, LOG,
                            "all %u slots are busy", (unsigned) self->config->slots);
        return;
    }
    job_run_t *run = calloc(1, sizeof *run);
    if (!run || pipe(run->cancel) != 0) {
        free(run);
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, job_id, LOG,
                            "cannot start the job");
        return;
    }
    snprintf(run->job_id, sizeof run->job_id, "%s", job_id);
    job_id = run->job_id; /* d->job moves to the run and dies with it */
    run->request = d->job;
    d->job = NULL;
    d->work_case = PROFEED__DISPATCH__WORK__NOT_SET;
    run->attempt = attempt;
    run->info = &self->info;
    run->chunk_bytes = d->has_chunk_bytes ? d->chunk_bytes : 0;
    pthread_mutex_init(&run->lock, NULL);
    pthread_cond_init(&run->acked_cond, NULL);
    atomic_init(&run->cancelled, false);
    if (!self->threads[free_slot]) {
        self->threads[free_slot] = zactor_new(slot_actor, NULL);
        if (self->threads[free_slot])
            zpoller_add(self->poller, self->threads[free_slot]);
    }
    pf_tsan_handed_over(run);
    if (!self->threads[free_slot] || zsock_send(self->threads[free_slot], "sp", "RUN", run) != 0) {
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, job_id, LOG,
                            "cannot start the job: no thread for it");
        s_run_free(run);
        return;
    }
    self->runs[free_slot] = run;
    pf_log_info(LOG, "job %s: attempt %u started (%s)", job_id, (unsigned) attempt,
                self->info.replay ? "replay" : "real profilers");
}

/* The running attempt of `job_id`, or NULL. */
static job_run_t *s_run_of(collector_t *self, const char *job_id)
{
    for (size_t i = 0; job_id && i < self->config->slots; i++) {
        if (self->runs[i] && streq(self->runs[i]->job_id, job_id))
            return self->runs[i];
    }
    return NULL;
}

/* The broker's receipt for chunks: credit for the job thread's window. */
static void s_on_chunk_ack(collector_t *self, const Profeed__ChunkAck *ack)
{
    job_run_t *run = s_run_of(self, ack->job_id);
    if (!run || (ack->has_attempt && ack->attempt != run->attempt))
        return;
    pthread_mutex_lock(&run->lock);
    if (streq(run->stream_pass, ack->pass_key) && ack->seq + 1 > run->acked) {
        run->acked = ack->seq + 1;
        pthread_cond_signal(&run->acked_cond);
    }
    pthread_mutex_unlock(&run->lock);
}

static void s_on_broker(collector_t *self)
{
    pf_error_t err;
    Profeed__Envelope *env = wire_zmq_recv(self->sock, false, NULL, self->config->max_msg, NULL, &err);
    if (!env) {
        if (err.code != PF_OK)
            pf_log_warn(LOG, "broker %s: refused a message: %s", self->config->broker_endpoint, err.msg);
        return;
    }
    pirate_heard(&self->pirate);
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_DISPATCH: s_on_dispatch(self, env->dispatch); break;
    case PROFEED__ENVELOPE__BODY_HEARTBEAT:
    case PROFEED__ENVELOPE__BODY_ACK: break;
    case PROFEED__ENVELOPE__BODY_CHUNK_ACK: s_on_chunk_ack(self, env->chunk_ack); break;
    case PROFEED__ENVELOPE__BODY_ERROR:
        if (env->error->job_id) {
            pf_log_warn(LOG, "job %s: broker says: %s", env->error->job_id, env->error->text ? env->error->text : "");
            /* A stream the broker refused stops (the job moved on, or
             * failed): its job thread is waiting for receipts. */
            job_run_t *run = s_run_of(self, env->error->job_id);
            if (run) {
                pthread_mutex_lock(&run->lock);
                run->refused = run->stream_pass[0] != '\0';
                pthread_cond_signal(&run->acked_cond);
                pthread_mutex_unlock(&run->lock);
            }
        } else {
            pf_log_warn(LOG, "broker says: %s", env->error->text ? env->error->text : "");
            /* Most likely a restarted broker that does not know us yet. It
             * kept no chunk of a stream in flight: those streams stop, and
             * it collects their jobs again. */
            for (size_t i = 0; i < self->config->slots; i++) {
                job_run_t *run = self->runs[i];
                if (!run)
                    continue;
                pthread_mutex_lock(&run->lock);
                if (run->stream_pass[0]) {
                    run->refused = true;
                    pthread_cond_signal(&run->acked_cond);
                }
                pthread_mutex_unlock(&run->lock);
            }
            if (wire_zmq_now_ms() - self->last_ready_ms >= self->config->heartbeat_ms)
                s_send_ready(self);
        }
        break;
    default: pf_log_warn(LOG, "broker sent an unexpected message (body %d); ignored", (int) env->body_case); break;
    }
    wire_envelope_destroy(&env);
}

static void s_on_run(collector_t *self, size_t slot)
{
    job_run_t *run = self->runs[slot];
    zmsg_t *msg = zmsg_recv(self->threads[slot]);
    if (!msg)
        return;
    if (!run) {
        zmsg_destroy(&msg); /* cannot happen: a thread speaks only while it has a job */
        return;
    }
    char *kind = zmsg_popstr(msg);
    if (kind && streq(kind, "SEND")) {
        zframe_t *frame = zmsg_pop(msg);
        if (frame && zframe_send(&frame, self->sock, 0) != 0)
            pf_log_warn(LOG, "job %s: could not send to the broker: %s", run->job_id, zmq_strerror(zmq_errno()));
        zframe_destroy(&frame);
    } else if (kind && streq(kind, "ERROR")) {
        char *text = zmsg_popstr(msg);
        pf_log_warn(LOG, "job %s: %s", run->job_id, text ? text : "failed");
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST, run->job_id, LOG, "%s",
                            text ? text : "the job failed");
        zstr_free(&text);
    } else if (kind && streq(kind, "DONE")) {
        pf_log_info(LOG, "job %s: attempt %u done", run->job_id, (unsigned) run->attempt);
        s_run_free(run); /* the thread is done with it and waits for the next */
        self->runs[slot] = NULL;
    }
    zstr_free(&kind);
    zmsg_destroy(&msg);
}

int collector_run(const collector_config_t *config, zsock_t *pipe)
{
    assert(config && config->slots >= 1);
    collector_t self = {.config = config, .pipe = pipe};
    int rc = -1;
    self.runs = calloc(config->slots, sizeof *self.runs);
    self.threads = calloc(config->slots, sizeof *self.threads);
    self.poller = zpoller_new(NULL);
    pirate_start(&self.pirate, config->heartbeat_ms, config->liveness, wire_zmq_now_ms());
    pf_error_t err;
    if (wire_curve_client_setup(&config->curve, config->broker_endpoint, LOG, &self.curve, &err) != PF_OK) {
        pf_log_error(LOG, "%s", err.msg);
        goto cleanup;
    }
    self.info.sandbox = sandbox_new(config, &err);
    if (!self.info.sandbox) {
        pf_log_error(LOG, "%s", err.msg);
        goto cleanup;
    }
    if (!config->replay_map) {
        char what[2048];
        sandbox_describe(self.info.sandbox, what, sizeof what);
        pf_log_info(LOG, "jobs run: %s", what);
        if (strcmp(config->allow_programs ? config->allow_programs : "*", "*") == 0)
            pf_log_warn(LOG, "any program may be profiled here: set allow-programs to the ones agents may run");
        if (geteuid() == 0 && !sandbox_user_chosen(self.info.sandbox)) {
            pf_log_error(LOG, "started as root, this collector would run agents' jobs as root: set run-as to an "
                              "unprivileged user (run-as nobody; with ncu, that user needs counter access: "
                              "docs/security.md), or run-as root to accept it");
            goto cleanup;
        }
        if (geteuid() == 0 && config->run_as && strcmp(config->run_as, "root") == 0)
            pf_log_warn(LOG, "jobs run as root (run-as root)");
    }
    if (!self.runs || !self.threads || !self.poller || discover_host(&self.info, config) != 0 || s_connect(&self) != 0)
        goto cleanup;
    if (pipe) {
        zpoller_add(self.poller, pipe);
        zsock_signal(pipe, 0);
    }
    pf_log_info(LOG, "%s: %s on %s, %zu GPU kinds, %u slots, broker %s", self.info.worker_id,
                self.info.replay ? "replaying recorded captures" : "running real profilers", self.info.host,
                self.info.gpu_count, (unsigned) config->slots, config->broker_endpoint);
    rc = 0;
    while (true) {
        void *which = zpoller_wait(self.poller, pirate_wait_ms(&self.pirate, wire_zmq_now_ms()));
        if (zpoller_terminated(self.poller))
            break;
        if (pipe && which == pipe) {
            if (wire_zmq_pipe_term(pipe))
                break;
        } else if (which == self.sock) {
            s_on_broker(&self);
        } else if (which) {
            for (size_t i = 0; i < config->slots; i++) {
                if (which == self.threads[i]) {
                    s_on_run(&self, i);
                    break;
                }
            }
        }
        pirate_due_t due = pirate_tick(&self.pirate, wire_zmq_now_ms());
        if (due == PIRATE_HEARTBEAT) {
            s_send_heartbeat(&self);
        } else if (due == PIRATE_RECONNECT) {
            /* The broker is gone or restarted: start over on a fresh
             * socket, after a growing pause. */
            int pause = pirate_backoff(&self.pirate);
            pf_log_warn(LOG, "broker %s silent; reconnecting in %d ms", config->broker_endpoint, pause);
            for (size_t i = 0; i < config->slots; i++)
                s_run_destroy(&self, i);
            zclock_sleep(pause);
            if (s_connect(&self) != 0)
                break;
        }
    }
    pf_log_info(LOG, "%s: stopping", self.info.worker_id);
cleanup:
    if (rc != 0 && pipe)
        zsock_signal(pipe, 1);
    for (size_t i = 0; self.runs && self.threads && i < config->slots; i++) {
        s_run_destroy(&self, i);
        zactor_destroy(&self.threads[i]);
    }
    free(self.runs);
    free(self.threads);
    zpoller_destroy(&self.poller);
    zsock_destroy(&self.sock);
    wire_curve_destroy(&self.curve);
    sandbox_destroy(&self.info.sandbox);
    replay_destroy(&self.info.replay);
    return rc;
}

void collector_actor(zsock_t *pipe, void *args)
{
    collector_run((const collector_config_t *) args, pipe);
}
