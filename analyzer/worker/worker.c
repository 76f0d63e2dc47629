/* worker: the profeed-analyzer's event loop (see worker.h).
 *
 * One file of ~860 lines because it is one loop and the job state it owns:
 * passes arriving whole or streamed, the analysis of a complete job, the
 * manifest and baseline comparison it attaches, and the Feedback sent back
 * all read and change the same job_passes_t list and socket. It reads in the
 * order a job flows: connect and announce, passes in, analysis, Feedback
 * out, then the loop. */
#include "worker.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "analyzer.h"
#include "comparison.h"
#include "select.h"
#include "feedback.h"
#include "feedback_wire.h"
#include "fnv1a.h"
#include "pirate.h"
#include "pass_chunk.h"
#include "pass_plan.h"
#include "pass_spool.h"
#include "pf_log.h"
#include "profiler.h"
#include "render.h"
#include "wire.h"
#include "wire_zmq.h"

#define LOG "analyzer"

void worker_config_default(worker_config_t *config)
{
    memset(config, 0, sizeof *config);
    config->broker_endpoint = "tcp://127.0.0.1:5556";
    config->heartbeat_ms = 1000;
    config->liveness = 3;
    config->max_jobs = 256;
    config->max_msg = WIRE_MAX_MSG;
    config->memory_limit = (size_t) 1024 * 1024 * 1024;
}

/* The passes of one job, for its newest attempt. Each pass is kept inside
 * the Envelope it came in (owned). */
typedef struct {
    char job_id[WIRE_MAX_ID_LEN + 1];
    uint32_t attempt;
    uint32_t pass_count;
    Profeed__Envelope **passes;
    bool *streamed;       /* per pass: its files' contents are in `spool` */
    size_t pass_len;
    pass_spool_t *spool;  /* streamed passes' files (issue 20); NULL until a chunk came */
    analysis_budget_t budget; /* what its analysis may hold: memory-mb */
} job_passes_t;

typedef struct {
    const worker_config_t *config;
    char worker_id[WIRE_MAX_ID_LEN + 1];
    char host[256];
    zsock_t *sock;
    wire_curve_t *curve; /* NULL: plaintext */
    zpoller_t *poller;
    zhashx_t *jobs; /* job id -> job_passes_t */
    pass_chunk_codec_t *codec; /* decompresses streamed passes' chunks, one at a time */
    zlist_t *pending; /* messages that came during an analysis, handled after it (Envelopes, owned) */
    pirate_t pirate; /* liveness of the broker, heartbeats, reconnect pause */
    int64_t last_ready_ms;
} worker_t;

static void s_job_free(job_passes_t **job_p)
{
    job_passes_t *job = *job_p;
    if (!job)
        return;
    for (size_t i = 0; i < job->pass_len; i++)
        wire_envelope_destroy(&job->passes[i]);
    free(job->passes);
    free(job->streamed);
    pass_spool_destroy(&job->spool);
    free(job);
    *job_p = NULL;
}

static void s_job_destructor(void **item) { s_job_free((job_passes_t **) item); }

static void s_send(worker_t *self, Profeed__Envelope *env, const char *what, const char *job_id)
{
    pf_error_t err;
    if (wire_zmq_send(self->sock, NULL, env, self->config->max_msg, NULL, &err) != PF_OK)
        pf_log_warn(LOG, "job %s: could not send %s to the broker: %s", job_id ? job_id : "-", what, err.msg);
}

static void s_send_ready(worker_t *self)
{
    /* The profilers of the table that analyzer_run() has a backend for. */
    Profeed__Profiler profilers[16];
    char *caps[16]; /* the same, as the strings the broker routes on (Ready.capabilities) */
    size_t n = 0;
    for (size_t i = 0; i < profiler_count() && n < sizeof profilers / sizeof profilers[0]; i++) {
        if (analyzer_handles(profiler_at(i)->id)) {
            caps[n] = (char *) profiler_at(i)->name;
            profilers[n++] = profiler_at(i)->id;
        }
    }
    Profeed__Ready ready;
    profeed__ready__init(&ready);
    ready.has_role = 1;
    ready.role = PROFEED__WORKER_ROLE__WORKER_ROLE_ANALYZER;
    ready.worker_id = self->worker_id;
    ready.host = self->host;
    ready.profilers = profilers;
    ready.n_profilers = n;
    ready.capabilities = caps;
    ready.n_capabilities = n;
    ready.has_slots = 1;
    ready.slots = self->config->max_jobs;
    ready.has_chunks = ready.chunks = 1;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_READY;
    env.ready = &ready;
    s_send(self, &env, "ready", NULL);
    self->last_ready_ms = wire_zmq_now_ms();
}

static void s_send_heartbeat(worker_t *self)
{
    char *ids[WIRE_MAX_HEARTBEAT_JOBS];
    Profeed__Heartbeat hb;
    profeed__heartbeat__init(&hb);
    hb.worker_id = self->worker_id;
    for (job_passes_t *job = zhashx_first(self->jobs); job && hb.n_job_ids < WIRE_MAX_HEARTBEAT_JOBS;
         job = zhashx_next(self->jobs))
        ids[hb.n_job_ids++] = job->job_id;
    hb.job_ids = ids;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
    env.heartbeat = &hb;
    s_send(self, &env, "heartbeat", NULL);
}

static int s_connect(worker_t *self)
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

/* strdup() that passes NULL through: WorkerInfo's strings are optional. */
static char *s_strdup_optional(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, s, n);
    return copy;
}

/* Adds a pass (its Envelope, taken) in pass key order, the order the
 * analysis reads them in. false when out of memory (the Envelope stays the
 * caller's). */
static bool s_job_add_pass(job_passes_t *job, Profeed__Envelope **env_p, bool streamed)
{
    Profeed__Envelope **grown = realloc(job->passes, (job->pass_len + 1) * sizeof *grown);
    if (grown)
        job->passes = grown;
    bool *flags = grown ? realloc(job->streamed, (job->pass_len + 1) * sizeof *flags) : NULL;
    if (!flags)
        return false;
    job->streamed = flags;
    const char *key = (*env_p)->dispatch->pass_output->pass_key;
    size_t at = job->pass_len;
    while (at > 0 && strcmp(job->passes[at - 1]->dispatch->pass_output->pass_key, key) > 0) {
        job->passes[at] = job->passes[at - 1];
        job->streamed[at] = job->streamed[at - 1];
        at--;
    }
    job->passes[at] = *env_p;
    job->streamed[at] = streamed;
    job->pass_len++;
    *env_p = NULL;
    return true;
}

/* Whether a pass failed for want of counter permissions (ncu's
 * ERR_NVGPUCTRPERM), in its stderr or any of its files. */
static bool s_permission_denied(const Profeed__PassOutput *pass)
{
    if (pass->stderr_tail && pass_plan_is_permission_error(pass->stderr_tail, strlen(pass->stderr_tail)))
        return true;
    for (size_t f = 0; f < pass->n_files; f++) {
        if (pass_plan_is_permission_error((const char *) pass->files[f]->content.data, pass->files[f]->content.len))
            return true;
    }
    return false;
}

/* The request's metadata for the Feedback, with the time it was made: a
 * deep copy (wire_message_copy) that the Feedback's free releases. */
static Profeed__JobMetadata *s_feedback_metadata(const job_passes_t *job)
{
    const Profeed__JobMetadata *from = NULL;
    for (size_t i = 0; i < job->pass_len && !from; i++)
        from = job->passes[i]->dispatch->metadata;
    Profeed__JobMetadata empty;
    profeed__job_metadata__init(&empty);
    if (!from)
        from = &empty;
    Profeed__JobMetadata *copy = (Profeed__JobMetadata *) wire_message_copy(&from->base);
    if (!copy)
        return NULL;
    char stamp[32];
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) && strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc) > 0) {
        free(copy->timestamp);
        copy->timestamp = s_strdup_optional(stamp);
    }
    return copy;
}

/* The job's context (Dispatch.context) as the broker sent it with any pass:
 * the first that carries the baseline's feedback, else the first at all. */
static const Profeed__AnalysisContext *s_context(const job_passes_t *job)
{
    const Profeed__AnalysisContext *any = NULL;
    for (size_t i = 0; i < job->pass_len; i++) {
        const Profeed__AnalysisContext *c = job->passes[i]->dispatch->context;
        if (c && c->has_baseline_feedback)
            return c;
        if (c && !any)
            any = c;
    }
    return any;
}

/* FNV-1a 64 over the metric names the passes asked for, in pass order (a
 * NUL after each): two plans asking for the same list hash alike. */
static void s_metrics_hash(const job_passes_t *job, fb_manifest_t *m)
{
    uint64_t h = FNV1A_BASIS;
    size_t count = 0;
    for (size_t i = 0; i < job->pass_len; i++) {
        const Profeed__PassOutput *pass = job->passes[i]->dispatch->pass_output;
        for (size_t k = 0; k < pass->n_requested_metrics; k++, count++) /* each name and its NUL */
            h = fnv1a_update(h, pass->requested_metrics[k], strlen(pass->requested_metrics[k]) + 1);
    }
    m->metrics_count = count;
    if (count > 0)
        snprintf(m->metrics_hash, sizeof m->metrics_hash, "%016llx", (unsigned long long) h);
}

/* The manifest from what the farm knows better than the files: the worker's
 * GPU, driver and profiler, the plan, its metrics, the clocks and target. */
static void s_manifest(feedback_t *fb, const job_passes_t *job, const Profeed__WorkerInfo *worker,
                       const Profeed__AnalysisContext *context)
{
    fb_manifest_t *m = feedback_manifest(fb);
    if (worker && worker->gpu_name)
        snprintf(m->gpu, sizeof m->gpu, "%s", worker->gpu_name);
    if (worker && worker->driver_version)
        snprintf(m->driver_version, sizeof m->driver_version, "%s", worker->driver_version);
    if (worker && worker->profiler_version)
        snprintf(m->profiler_version, sizeof m->profiler_version, "%s", worker->profiler_version);
    const Profeed__PassOutput *first = job->passes[0]->dispatch->pass_output;
    const profiler_t *profiler = profiler_by_name(feedback_profiler(fb));
    if (first->replay_source)
        snprintf(m->clock_control, sizeof m->clock_control, "as recorded: replayed, not measured for this job");
    else if (profiler && profiler->clock_options)
        snprintf(m->clock_control, sizeof m->clock_control, "none (the collector runs %s %s)", profiler->name,
                 profiler->clock_options);
    else
        snprintf(m->clock_control, sizeof m->clock_control, "none (the profiler leaves the GPU's clocks alone)");
    if (context && context->plan)
        snprintf(m->plan, sizeof m->plan, "%s", context->plan);
    if (context && context->target)
        snprintf(m->target, sizeof m->target, "%s", context->target);
    s_metrics_hash(job, m);
}

/* The change since the job's baseline, when it asked for one: from the
 * baseline's Feedback the broker sent, or a note saying why there is none. */
static void s_compare(feedback_t *fb, const Profeed__AnalysisContext *context, size_t max_msg)
{
    if (!context || !context->baseline_job_id)
        return;
    const char *id = context->baseline_job_id;
    char name[WIRE_MAX_ID_LEN + 8];
    snprintf(name, sizeof name, "job %s", id);
    fb_comparison_t *comparison = NULL;
    if (!context->has_baseline_feedback) {
        comparison = comparison_new_problem(name, context->baseline_problem ? context->baseline_problem
                                                                            : "the broker sent no baseline");
    } else {
        pf_error_t err;
        pf_error_clear(&err);
        Profeed__Feedback *msg = wire_feedback_unpack(context->baseline_feedback.data, context->baseline_feedback.len,
                                                      max_msg, &err);
        feedback_t *before = msg ? feedback_wire_read(msg) : NULL;
        if (!msg) {
            char problem[1024];
            snprintf(problem, sizeof problem, "its stored feedback does not read: %.900s", err.msg);
            comparison = comparison_new_problem(name, problem);
        } else if (before) {
            comparison = comparison_new(before, fb, name);
        }
        feedback_destroy(&before);
        wire_feedback_destroy(&msg);
    }
    comparison_attach(fb, &comparison, name);
}

/* The worker the passes ran on and the request's metadata, on a Feedback
 * that does not carry them yet. */
static void s_attach_context(Profeed__Feedback *msg, const job_passes_t *job)
{
    const Profeed__PassOutput *first = job->passes[0]->dispatch->pass_output;
    if (!msg->worker && first->worker)
        msg->worker = (Profeed__WorkerInfo *) wire_message_copy(&first->worker->base);
    if (!msg->metadata)
        msg->metadata = s_feedback_metadata(job);
}

/* The packed size of `msg` inside the Envelope that carries it. */
static size_t s_envelope_size(Profeed__Feedback *msg)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_FEEDBACK;
    env.feedback = msg;
    return protobuf_c_message_get_packed_size(&env.base);
}

/* The Feedback of an analysis, rendered with the job's shape. With the
 * collated data asked for, it must still fit the `max_msg` this analyzer
 * sends (the broker and the agent keep the same limit by default): when it
 * would not, the collated data is left out and a note says so, since the
 * findings are worth more than the raw values and the capture can still be
 * collated offline. NULL only when memory ran out. */
static Profeed__Feedback *s_render(feedback_t *fb, const job_passes_t *job, bool markdown, size_t max_chars,
                                   size_t max_tokens, bool collated, size_t max_msg)
{
    for (;;) {
        char *text = markdown ? render_markdown(fb) : render_text_within(fb, max_chars, max_tokens);
        char *json = render_json(fb, collated);
        Profeed__Feedback *msg = text && json ? feedback_wire_new(fb, job->job_id, text, json) : NULL;
        free(text);
        free(json);
        if (!msg)
            return NULL;
        s_attach_context(msg, job);
        size_t size = collated ? s_envelope_size(msg) : 0;
        if (size <= max_msg)
            return msg;
        wire_feedback_destroy(&msg);
        collated = false;
        feedback_add_note(fb, "the collated per-launch data was left out of this feedback: with it the feedback "
                              "takes %zu bytes, more than this analyzer's message limit of %zu; profile fewer "
                              "launches, or run `profeed analyze --collated` on the capture",
                          size, max_msg);
    }
}

/* Collates and analyzes a job whose passes are all in; builds its Feedback
 * (NULL when memory ran out). */
static Profeed__Feedback *s_analyze(job_passes_t *job, size_t max_msg)
{
    size_t nfiles = 0;
    for (size_t i = 0; i < job->pass_len; i++)
        nfiles += job->passes[i]->dispatch->pass_output->n_files;
    const Profeed__PassOutput *first = job->passes[0]->dispatch->pass_output;
    if (nfiles == 0) {
        char text[8192];
        snprintf(text, sizeof text, "the profiler wrote no output (pass %s exited with status %d)%s%.3000s%s%s",
                 first->pass_key, (int) first->exit_status, first->stderr_tail && *first->stderr_tail ? ": " : "",
                 first->stderr_tail ? first->stderr_tail : "", s_permission_denied(first) ? "\n" : "",
                 s_permission_denied(first) ? pass_plan_permission_advice() : "");
        Profeed__Feedback *msg =
            feedback_wire_new_error(job->job_id, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_PROFILER_ERROR, text);
        if (msg)
            msg->metadata = s_feedback_metadata(job);
        return msg;
    }
    analyzer_file_t *files = calloc(nfiles, sizeof *files);
    if (!files)
        return NULL;
    size_t k = 0;
    pf_error_t err;
    pf_error_clear(&err);
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < job->pass_len; i++) {
        const Profeed__PassOutput *pass = job->passes[i]->dispatch->pass_output;
        for (size_t f = 0; f < pass->n_files; f++) {
            files[k].pass_key = pass->pass_key;
            files[k].name = pass->files[f]->name;
            if (job->streamed[i]) {
                /* Parsed as it came, or read from the spool by path,
                 * streaming, as profeed analyze does. */
                char *path = malloc(4096 + 512);
                if (!path)
                    break;
                pf_status_t got = pass_spool_file(job->spool, pass->pass_key, pass->files[f]->name, &files[k], path,
                                                  4096 + 512, rc == PF_OK ? &err : NULL);
                rc = rc == PF_OK ? got : rc;
                if (!files[k].path)
                    free(path);
            } else {
                files[k].bytes = (const char *) pass->files[f]->content.data;
                files[k].len = pass->files[f]->content.len;
            }
            /* "ncu_ref.000": the task's reference implementation, summarised
             * beside the candidate (KernelFoundry's name + "_ref"). */
            files[k].reference = select_pass_is_reference(pass->pass_key);
            k++;
        }
    }
    /* WorkerInfo carries the PCI device id as a number; the roofs table
     * matches it as hex text ("0xe20b"), which names a GPU its marketing name
     * may not (integrated and early-sample parts). */
    const Profeed__WorkerInfo *worker = first->worker;
    char pci_id[16] = "";
    if (worker && worker->has_device_id)
        snprintf(pci_id, sizeof pci_id, "0x%04x", (unsigned) worker->device_id);
    analyzer_input_t input = {
        .files = files,
        .count = nfiles,
        .profiler = profiler_name_or(first->has_profiler ? first->profiler : PROFEED__PROFILER__PROFILER_UNSPECIFIED, "auto"),
        /* A pass that does not say its profiler is read by the one the seed's
         * table gives the job's language and the worker's GPU (select.c). */
        .language = job->passes[0]->dispatch->has_language
                        ? profiler_language_name(job->passes[0]->dispatch->language) : NULL,
        .gpu_arch = worker ? worker->arch : NULL,
        .device = worker ? worker->gpu_name : NULL,
        .pci_id = pci_id[0] ? pci_id : NULL,
        .cpu_model = worker ? worker->cpu_model : NULL,
        .budget = &job->budget,
    };
    analysis_options_t options;
    analysis_options_default(&options);
    /* The job's wishes for its feedback (JobRequest.shape, checked on the
     * wire: a share in 0..1, a budget of 0 or at least 200). */
    const Profeed__FeedbackShape *shape = job->passes[0]->dispatch->shape;
    if (shape && shape->has_top)
        options.top = shape->top;
    if (shape && shape->has_min_share) {
        options.min_share = shape->min_share;
        options.min_share_strict = true;
    }
    bool collated = shape && shape->has_collated && shape->collated;
    input.with_collated = collated;
    size_t max_chars = shape && shape->has_max_chars ? shape->max_chars : 0;
    size_t max_tokens = shape && shape->has_max_tokens ? shape->max_tokens : 0;
    bool markdown = shape && shape->has_text_format && shape->text_format == PROFEED__TEXT_FORMAT__TEXT_FORMAT_MARKDOWN;
    feedback_t *fb = NULL;
    if (rc == PF_OK)
        rc = analyzer_run(&input, &options, &fb, &err);
    for (size_t i = 0; i < k; i++)
        free((char *) files[i].path);
    free(files);
    Profeed__Feedback *msg = NULL;
    if (rc != PF_OK) {
        /* Output that cannot be read is the profiler's failure when a pass
         * exited non-zero (ncu printed nothing usable): say so, with what it
         * wrote on stderr; otherwise the output itself is bad. */
        const Profeed__PassOutput *failed = NULL;
        for (size_t i = 0; i < job->pass_len && !failed; i++)
            if (job->passes[i]->dispatch->pass_output->exit_status != 0)
                failed = job->passes[i]->dispatch->pass_output;
        if (failed) {
            char text[4096];
            snprintf(text, sizeof text, "pass %s: the profiler exited with status %d and its output "
                     "could not be read (%.1500s)%s%.2000s", failed->pass_key, (int) failed->exit_status,
                     err.msg, failed->stderr_tail && *failed->stderr_tail ? "; stderr: " : "",
                     failed->stderr_tail ? failed->stderr_tail : "");
            msg = feedback_wire_new_error(job->job_id, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_PROFILER_ERROR,
                                          text);
        } else {
            msg = feedback_wire_new_error(job->job_id, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT,
                                          err.msg);
        }
    } else {
        for (size_t i = 0; i < job->pass_len; i++) {
            const Profeed__PassOutput *pass = job->passes[i]->dispatch->pass_output;
            if (pass->replay_source)
                feedback_set_replayed(fb, true);
            if (pass->replay_source)
                feedback_add_note(fb, "replayed: pass %s is a recorded capture (%.900s), not measured for this job",
                                  pass->pass_key, pass->replay_source);
            if (pass->exit_status != 0)
                feedback_add_note(fb, "pass %s: the profiler exited with status %d", pass->pass_key,
                                  (int) pass->exit_status);
            if (s_permission_denied(pass))
                feedback_add_error(fb, "pass %s: %s", pass->pass_key, pass_plan_permission_advice());
            analyzer_check_pass(fb, pass);
        }
        const Profeed__AnalysisContext *context = s_context(job);
        s_manifest(fb, job, worker, context);
        s_compare(fb, context, max_msg);
        msg = s_render(fb, job, markdown, max_chars, max_tokens, collated, max_msg);
        feedback_destroy(&fb);
    }
    if (msg)
        s_attach_context(msg, job);
    return msg;
}

typedef struct {
    job_passes_t *job;
    size_t max_msg;
    Profeed__Feedback *fb;
    atomic_bool done;
} analysis_t;

static void *s_analysis_thread(void *arg)
{
    analysis_t *a = arg;
    a->fb = s_analyze(a->job, a->max_msg);
    atomic_store(&a->done, true);
    return NULL;
}

/* Runs the job's analysis on a thread of its own while this one keeps the
 * heartbeats going: a large capture takes seconds to analyze, longer than
 * the broker waits before it declares a silent analyzer dead (and collects
 * its streamed jobs again). What the broker sends meanwhile is queued and
 * handled after, in order; the job is not touched until the analysis ends. */
static Profeed__Feedback *s_analyze_beating(worker_t *self, job_passes_t *job)
{
    analysis_t a = {.job = job, .max_msg = self->config->max_msg, .fb = NULL};
    atomic_init(&a.done, false);
    pthread_t thread;
    if (pthread_create(&thread, NULL, s_analysis_thread, &a) != 0)
        return s_analyze(job, self->config->max_msg); /* no thread: analyze here, without heartbeats */
    int64_t next_beat = wire_zmq_now_ms() + self->config->heartbeat_ms;
    while (!atomic_load(&a.done)) {
        /* The socket alone: a stop request on the actor's pipe waits. */
        zmq_pollitem_t item = {.socket = zsock_resolve(self->sock), .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 10) > 0 && (item.revents & ZMQ_POLLIN)) {
            pf_error_t err;
            Profeed__Envelope *env = wire_zmq_recv(self->sock, false, NULL, self->config->max_msg, NULL, &err);
            if (env) {
                pirate_heard(&self->pirate);
                if (zlist_append(self->pending, env) != 0)
                    wire_envelope_destroy(&env);
            } else if (err.code != PF_OK) {
                pf_log_warn(LOG, "broker %s: refused a message: %s", self->config->broker_endpoint, err.msg);
            }
        }
        int64_t now = wire_zmq_now_ms();
        if (now >= next_beat) {
            s_send_heartbeat(self);
            next_beat = now + self->config->heartbeat_ms;
        }
    }
    pthread_join(thread, NULL);
    return a.fb;
}

static void s_finish(worker_t *self, job_passes_t *job)
{
    int64_t start = wire_zmq_now_ms();
    Profeed__Feedback *fb = s_analyze_beating(self, job);
    if (!fb) {
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, job->job_id, LOG,
                            "out of memory analyzing the job");
    } else {
        Profeed__Envelope env;
        wire_envelope_init(&env);
        env.body_case = PROFEED__ENVELOPE__BODY_FEEDBACK;
        env.feedback = fb;
        pf_error_t err;
        if (wire_zmq_send(self->sock, NULL, &env, self->config->max_msg, NULL, &err) != PF_OK) {
            pf_log_error(LOG, "job %s: feedback not sent: %s", job->job_id, err.msg);
            wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, job->job_id, LOG,
                                "the feedback could not be sent: %s", err.msg);
        } else {
            pf_log_info(LOG, "job %s: feedback sent (%zu passes, %zu findings, %lld ms)", job->job_id,
                        job->pass_len, fb->n_findings, (long long) (wire_zmq_now_ms() - start));
        }
        wire_feedback_destroy(&fb);
    }
    char id[WIRE_MAX_ID_LEN + 1];
    snprintf(id, sizeof id, "%s", job->job_id);
    zhashx_delete(self->jobs, id);
}

/* The job a pass of `attempt` belongs to, made when new; NULL when the pass
 * is from an older attempt (ignored) or the analyzer is full (refused). A
 * newer attempt voids what the job held: it is collected again. */
static job_passes_t *s_job_for(worker_t *self, const char *job_id, const char *pass_key, uint32_t attempt)
{
    job_passes_t *job = zhashx_lookup(self->jobs, job_id);
    if (job && attempt < job->attempt) {
        pf_log_info(LOG, "job %s: pass %s of old attempt %u ignored", job_id, pass_key, (unsigned) attempt);
        return NULL;
    }
    if (job && attempt > job->attempt) {
        for (size_t i = 0; i < job->pass_len; i++)
            wire_envelope_destroy(&job->passes[i]);
        job->pass_len = 0;
        pass_spool_destroy(&job->spool);
    }
    if (!job) {
        if (zhashx_size(self->jobs) >= self->config->max_jobs) {
            wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED, job_id, LOG,
                                "this analyzer holds %u jobs already", (unsigned) self->config->max_jobs);
            return NULL;
        }
        job = calloc(1, sizeof *job);
        if (!job)
            return NULL;
        snprintf(job->job_id, sizeof job->job_id, "%s", job_id);
        analysis_budget_init(&job->budget, self->config->memory_limit, "the analyzer's memory-mb");
        zhashx_insert(self->jobs, job->job_id, job);
    }
    job->attempt = attempt;
    return job;
}

/* Drops the job's passes from `pass_key` on (in key order): a stream that
 * starts a pass over starts the passes after it over too. */
static void s_job_drop_from(job_passes_t *job, const char *pass_key)
{
    size_t keep = 0;
    for (size_t i = 0; i < job->pass_len; i++) {
        if (strcmp(job->passes[i]->dispatch->pass_output->pass_key, pass_key) >= 0)
            wire_envelope_destroy(&job->passes[i]);
        else
            keep = i + 1;
    }
    job->pass_len = keep;
}

static void s_chunk_ack(worker_t *self, const Profeed__PassChunk *c, uint32_t attempt)
{
    Profeed__ChunkAck ack;
    profeed__chunk_ack__init(&ack);
    ack.job_id = c->job_id;
    ack.pass_key = c->pass_key;
    ack.has_seq = ack.has_attempt = 1;
    ack.seq = c->seq;
    ack.attempt = attempt;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_CHUNK_ACK;
    env.chunk_ack = &ack;
    s_send(self, &env, "chunk receipt", c->job_id);
}

/* A chunk of a streamed pass (issue 20): written to the job's spool, then
 * acknowledged, which is the collector's credit for the next; the last
 * chunk's pass (files named, contents in the spool) joins the job's passes. */
static void s_on_chunk(worker_t *self, Profeed__Envelope **env_p)
{
    Profeed__Dispatch *d = (*env_p)->dispatch;
    const Profeed__PassChunk *c = d->pass_chunk;
    uint32_t attempt = d->has_attempt ? d->attempt : 1;
    job_passes_t *job = s_job_for(self, c->job_id, c->pass_key, attempt);
    if (!job)
        return;
    job->pass_count = d->pass_count;
    if (!self->codec || (!job->spool && !(job->spool = pass_spool_new(job->job_id))))
        return; /* out of memory: no receipt, so the stream stalls and is collected again */
    pass_spool_set_once(job->spool, true); /* s_analyze reads each file once, in pass order */
    pass_spool_set_budget(job->spool, &job->budget);
    if (c->seq == 0)
        s_job_drop_from(job, c->pass_key);
    /* Pages whose backend parses them as they come (ncu's CSV) overlap the
     * transfer; the others are read whole, from disk, after the last. */
    const Profeed__FeedbackShape *shape = d->shape;
    pass_spool_set_parse(job->spool, c->has_profiler ? c->profiler : PROFEED__PROFILER__PROFILER_UNSPECIFIED,
                         shape && shape->has_collated && shape->collated);
    pass_spool_result_t result;
    pf_error_t err;
    if (pass_spool_add(job->spool, self->codec, c, &result, &err) != PF_OK) {
        /* Out of order is a lost chunk: no receipt, so the stream stalls
         * and the broker collects the job again. Bad data fails the job. */
        pf_log_warn(LOG, "%s", err.msg);
        if (err.code != PF_EPROTO)
            wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST, job->job_id, LOG, "%s",
                                err.msg);
        return;
    }
    s_chunk_ack(self, c, attempt);
    pf_log_debug(LOG, "job %s: pass %s chunk %u taken", job->job_id, c->pass_key, (unsigned) c->seq);
    if (result != PASS_SPOOL_PASS_DONE)
        return;
    /* The profiler whose pages were parsed as they came (its backend has a
     * page parser), named in the log line; NULL when they were spooled. */
    const char *parsed = c->has_profiler && analyzer_parses_pages(c->profiler) ? profiler_name_or(c->profiler, NULL)
                                                                               : NULL;
    /* The Envelope now holds the pass as if it had come whole, its files'
     * contents in the spool. */
    Profeed__PassChunk *chunk = d->pass_chunk;
    unsigned chunks = (unsigned) chunk->seq + 1;
    d->pass_output = chunk->pass; /* the same union as pass_chunk */
    chunk->pass = NULL;
    d->work_case = PROFEED__DISPATCH__WORK_PASS_OUTPUT;
    protobuf_c_message_free_unpacked(&chunk->base, NULL);
    const char *key = d->pass_output->pass_key;
    pf_log_info(LOG, "job %s: pass %s streamed in (%u chunks%s%s%s; %zu of %u, attempt %u)", job->job_id, key, chunks,
                parsed ? ", its " : "", parsed ? parsed : "", parsed ? " pages parsed as they came" : "",
                job->pass_len + 1, (unsigned) job->pass_count, (unsigned) attempt);
    if (!s_job_add_pass(job, env_p, true))
        return;
    if (job->pass_len >= job->pass_count)
        s_finish(self, job);
}

static void s_on_dispatch(worker_t *self, Profeed__Envelope **env_p)
{
    Profeed__Dispatch *d = (*env_p)->dispatch;
    if (d->work_case == PROFEED__DISPATCH__WORK_PASS_CHUNK) {
        s_on_chunk(self, env_p);
        return;
    }
    if (d->work_case != PROFEED__DISPATCH__WORK_PASS_OUTPUT) {
        pf_log_warn(LOG, "broker sent a job to an analyzer; ignored");
        return;
    }
    const Profeed__PassOutput *pass = d->pass_output;
    uint32_t attempt = d->has_attempt ? d->attempt : 1;
    job_passes_t *job = s_job_for(self, pass->job_id, pass->pass_key, attempt);
    if (!job)
        return;
    job->pass_count = d->pass_count;
    for (size_t i = 0; i < job->pass_len; i++) {
        if (streq(job->passes[i]->dispatch->pass_output->pass_key, pass->pass_key)) {
            pf_log_debug(LOG, "job %s: pass %s again; ignored", job->job_id, pass->pass_key);
            return;
        }
    }
    if (!s_job_add_pass(job, env_p, false))
        return;
    pf_log_info(LOG, "job %s: pass %s (%zu of %u, attempt %u)", job->job_id, pass->pass_key, job->pass_len,
                (unsigned) job->pass_count, (unsigned) attempt);
    if (job->pass_len >= job->pass_count)
        s_finish(self, job);
}

/* Handles one message from the broker (taken). */
static void s_handle(worker_t *self, Profeed__Envelope *env)
{
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_DISPATCH: s_on_dispatch(self, &env); break;
    case PROFEED__ENVELOPE__BODY_HEARTBEAT:
    case PROFEED__ENVELOPE__BODY_ACK: break;
    case PROFEED__ENVELOPE__BODY_ERROR:
        pf_log_warn(LOG, "job %s: broker says: %s", env->error->job_id ? env->error->job_id : "-",
                    env->error->text ? env->error->text : "");
        if (!env->error->job_id && wire_zmq_now_ms() - self->last_ready_ms >= self->config->heartbeat_ms)
            s_send_ready(self);
        break;
    default: pf_log_warn(LOG, "broker sent an unexpected message (body %d); ignored", (int) env->body_case); break;
    }
    wire_envelope_destroy(&env);
}

static void s_on_broker(worker_t *self)
{
    pf_error_t err;
    Profeed__Envelope *env = wire_zmq_recv(self->sock, false, NULL, self->config->max_msg, NULL, &err);
    if (!env) {
        if (err.code != PF_OK)
            pf_log_warn(LOG, "broker %s: refused a message: %s", self->config->broker_endpoint, err.msg);
        return;
    }
    pirate_heard(&self->pirate);
    s_handle(self, env);
}

/* Handles what came during analyses; each may start another analysis, which
 * queues more. */
static void s_drain(worker_t *self)
{
    Profeed__Envelope *env;
    while ((env = zlist_pop(self->pending)) != NULL)
        s_handle(self, env);
}

static void s_drop_pending(worker_t *self)
{
    Profeed__Envelope *env;
    while ((env = zlist_pop(self->pending)) != NULL)
        wire_envelope_destroy(&env);
}

int worker_run(const worker_config_t *config, zsock_t *pipe)
{
    assert(config);
    worker_t self = {.config = config};
    int rc = -1;
    if (gethostname(self.host, sizeof self.host) != 0)
        snprintf(self.host, sizeof self.host, "unknown");
    self.host[sizeof self.host - 1] = '\0';
    if (config->worker_id)
        snprintf(self.worker_id, sizeof self.worker_id, "%s", config->worker_id);
    else
        snprintf(self.worker_id, sizeof self.worker_id, "analyzer-%.64s-%ld", self.host, (long) getpid());
    pf_error_t err;
    if (wire_check_id(self.worker_id, "--worker-id", &err) != PF_OK) {
        pf_log_error(LOG, "%s", err.msg);
        if (pipe)
            zsock_signal(pipe, 1);
        return -1;
    }
    self.jobs = zhashx_new();
    zhashx_set_destructor(self.jobs, s_job_destructor);
    self.codec = pass_chunk_codec_new(PASS_CHUNK_MAX_RAW, NULL);
    self.pending = zlist_new();
    self.poller = zpoller_new(NULL);
    pirate_start(&self.pirate, config->heartbeat_ms, config->liveness, wire_zmq_now_ms());
    if (wire_curve_client_setup(&config->curve, config->broker_endpoint, LOG, &self.curve, &err) != PF_OK) {
        pf_log_error(LOG, "%s", err.msg);
        goto cleanup;
    }
    if (s_connect(&self) != 0)
        goto cleanup;
    if (pipe) {
        zpoller_add(self.poller, pipe);
        zsock_signal(pipe, 0);
    }
    pf_log_info(LOG, "%s: analyzing %s, broker %s", self.worker_id, analyzer_profilers(), config->broker_endpoint);
    rc = 0;
    while (true) {
        s_drain(&self);
        void *which = zpoller_wait(self.poller, pirate_wait_ms(&self.pirate, wire_zmq_now_ms()));
        if (zpoller_terminated(self.poller))
            break;
        if (pipe && which == pipe) {
            if (wire_zmq_pipe_term(pipe))
                break;
        } else if (which == self.sock) {
            s_on_broker(&self);
        }
        pirate_due_t due = pirate_tick(&self.pirate, wire_zmq_now_ms());
        if (due == PIRATE_HEARTBEAT) {
            s_send_heartbeat(&self);
        } else if (due == PIRATE_RECONNECT) {
            int pause = pirate_backoff(&self.pirate);
            pf_log_warn(LOG, "broker %s silent; reconnecting in %d ms", config->broker_endpoint, pause);
            /* The broker moves our jobs to another analyzer when it sees us
             * come back on a new connection. */
            zhashx_purge(self.jobs);
            s_drop_pending(&self);
            zclock_sleep(pause);
            if (s_connect(&self) != 0)
                break;
        }
    }
    pf_log_info(LOG, "%s: stopping", self.worker_id);
cleanup:
    if (rc != 0 && pipe)
        zsock_signal(pipe, 1);
    zhashx_destroy(&self.jobs);
    if (self.pending)
        s_drop_pending(&self);
    zlist_destroy(&self.pending);
    pass_chunk_codec_destroy(&self.codec);
    zpoller_destroy(&self.poller);
    zsock_destroy(&self.sock);
    wire_curve_destroy(&self.curve);
    return rc;
}

void worker_actor(zsock_t *pipe, void *args)
{
    worker_run((const worker_config_t *) args, pipe);
}
