/* client_farm: the client library's farm calls (submit and wait, status).
 *
 * One file of ~780 lines because both calls share the farm handle's private
 * state (its socket, CURVE keys, Paranoid Pirate timing, the notice hook) and
 * its send path; most of the length is profeed_farm_run()'s wait loop, which
 * reads top to bottom as the job's messages arrive. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <czmq.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pf_error.h"
#include "profiler.h"
#include "select.h"
#include "textbuf.h"
#include "profeed_client.h"
#include "wire.h"
#include "wire_endpoint.h"
#include "wire_zmq.h"

/* Control messages only come back; a feedback is the largest of them. */
#define FARM_MAX_MSG WIRE_MAX_MSG

struct profeed_farm_t {
    char *endpoint;
    zsock_t *sock;
    wire_curve_t *curve; /* NULL: plaintext */
    int heartbeat_ms;
    int liveness;
    size_t strays; /* feedbacks for a job this handle was not waiting for */
    profeed_notice_fn *notice;
    void *notice_arg;
};

static char *s_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *s_printf(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap); /* a cut-short message is still a message */
    va_end(ap);
    return strdup(buf);
}

/* Tells the handle's notice callback, if any, a line for a person. */
static void s_notice(profeed_farm_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_notice(profeed_farm_t *self, const char *fmt, ...)
{
    if (!self->notice)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    self->notice(buf, self->notice_arg);
}

void profeed_farm_set_notice(profeed_farm_t *self, profeed_notice_fn *notice, void *arg)
{
    assert(self);
    self->notice = notice;
    self->notice_arg = arg;
}

static int s_connect(profeed_farm_t *self)
{
    zsock_destroy(&self->sock);
    self->sock = zsock_new(ZMQ_DEALER);
    if (!self->sock)
        return -1;
    wire_zmq_configure(self->sock, FARM_MAX_MSG, 1000);
    if (self->curve)
        wire_curve_apply_client(self->curve, self->sock);
    return zsock_connect(self->sock, "%s", self->endpoint);
}

/* CZMQ sets itself up on the first socket, and that set-up is not safe to run
 * from two threads at once; do it once, before any handle exists. */
static pthread_once_t s_czmq_once = PTHREAD_ONCE_INIT;
static void s_czmq_init(void) { zsys_init(); }

profeed_farm_t *profeed_farm_open(const char *endpoint, int heartbeat_ms, int liveness,
                                  const profeed_security_t *security, char **error)
{
    if (error)
        *error = NULL;
    if (!endpoint) {
        if (error)
            *error = strdup("no endpoint");
        return NULL;
    }
    pthread_once(&s_czmq_once, s_czmq_init);
    profeed_farm_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    pf_error_t err;
    if (wire_endpoint_check_connect(endpoint, "endpoint", &err) != PF_OK) {
        if (error)
            *error = strdup(err.msg);
        free(self);
        return NULL;
    }
    profeed_security_t none = {0};
    if (!security)
        security = &none;
    wire_curve_client_t settings = {security->curve_secret, security->broker_key, security->insecure != 0};
    if (wire_curve_client_setup(&settings, endpoint, "client", &self->curve, &err) != PF_OK) {
        if (error)
            *error = strdup(err.msg);
        free(self);
        return NULL;
    }
    self->endpoint = strdup(endpoint);
    self->heartbeat_ms = heartbeat_ms > 0 ? heartbeat_ms : 1000;
    self->liveness = liveness > 0 ? liveness : 3;
    if (!self->endpoint || s_connect(self) != 0) {
        if (error)
            *error = s_printf("cannot connect to \"%s\" (not a valid endpoint?)", endpoint);
        profeed_farm_destroy(&self);
    }
    return self;
}

size_t profeed_farm_stray_feedbacks(const profeed_farm_t *self)
{
    return self ? self->strays : 0;
}

profeed_farm_t *profeed_farm_new(const char *endpoint, int heartbeat_ms, int liveness)
{
    return profeed_farm_open(endpoint, heartbeat_ms, liveness, NULL, NULL);
}

void profeed_farm_destroy(profeed_farm_t **self_p)
{
    assert(self_p);
    profeed_farm_t *self = *self_p;
    if (!self)
        return;
    zsock_destroy(&self->sock);
    wire_curve_destroy(&self->curve);
    free(self->endpoint);
    free(self);
    *self_p = NULL;
}

static bool s_language(const char *name, Profeed__Language *out)
{
    static const struct {
        const char *name;
        Profeed__Language value;
    } table[] = {
        {"cuda", PROFEED__LANGUAGE__LANGUAGE_CUDA},       {"triton", PROFEED__LANGUAGE__LANGUAGE_TRITON},
        {"pytorch", PROFEED__LANGUAGE__LANGUAGE_PYTORCH}, {"sycl", PROFEED__LANGUAGE__LANGUAGE_SYCL},
        {"ocl", PROFEED__LANGUAGE__LANGUAGE_OCL},
    };
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].value;
            return true;
        }
    }
    return false;
}

static bool s_profiler(const char *name, Profeed__Profiler *out)
{
    if (!name) {
        *out = PROFEED__PROFILER__PROFILER_UNSPECIFIED;
        return true;
    }
    const profiler_t *p = profiler_by_name(name);
    if (p)
        *out = p->id;
    return p != NULL;
}

static pf_status_t s_send(profeed_farm_t *self, Profeed__Envelope *env, pf_error_t *err)
{
    return wire_zmq_send(self->sock, NULL, env, FARM_MAX_MSG, NULL, err);
}

static profeed_result_t s_feedback_result(const Profeed__Feedback *fb)
{
    switch (fb->status) {
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK:
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_KERNELS: return PROFEED_OK;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_PROFILER_ERROR: return PROFEED_PROFILER_ERROR;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT: return PROFEED_BAD_INPUT;
    case PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_CAPABLE_WORKER: return PROFEED_UNAVAILABLE;
    default: return PROFEED_FAILED;
    }
}

/* A JSON answer for feedback that carries no JSON document (the broker's own
 * failure feedback): status and errors. */
/* The analyzer's JSON document plus what the Feedback message adds around
 * it: the job's metadata (kernel and problem file, round, when it was made)
 * and the machine it was measured on. Falls back to the document as is. */
static char *s_json_with_context(const Profeed__Feedback *fb)
{
    json_t *root = json_loads(fb->json, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        return strdup(fb->json);
    }
    const Profeed__JobMetadata *m = fb->metadata;
    if (m && !json_object_get(root, "metadata")) {
        json_t *o = json_object();
        if (m->kernel_file_name)
            json_object_set_new(o, "kernel_file", json_string(m->kernel_file_name));
        if (m->problem_file_name)
            json_object_set_new(o, "problem_file", json_string(m->problem_file_name));
        if (m->has_round)
            json_object_set_new(o, "round", json_integer(m->round));
        if (m->timestamp)
            json_object_set_new(o, "timestamp", json_string(m->timestamp));
        for (size_t i = 0; i < m->n_extra; i++)
            json_object_set_new(o, m->extra[i]->key, json_string(m->extra[i]->value ? m->extra[i]->value : ""));
        json_object_set_new(root, "metadata", o);
    }
    const Profeed__WorkerInfo *w = fb->worker;
    if (w && !json_object_get(root, "worker")) {
        json_t *o = json_object();
        const struct {
            const char *key, *value;
        } strs[] = {{"host", w->host}, {"gpu_name", w->gpu_name}, {"arch", w->arch},
                    {"compute_capability", w->compute_capability}, {"driver_version", w->driver_version},
                    {"profiler_version", w->profiler_version}, {"cpu_model", w->cpu_model}};
        for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
            if (strs[i].value)
                json_object_set_new(o, strs[i].key, json_string(strs[i].value));
        }
        if (w->has_sm_count)
            json_object_set_new(o, "sm_count", json_integer(w->sm_count));
        if (w->has_sm_clock_mhz)
            json_object_set_new(o, "sm_clock_mhz", json_integer(w->sm_clock_mhz));
        if (w->has_mem_clock_mhz)
            json_object_set_new(o, "mem_clock_mhz", json_integer(w->mem_clock_mhz));
        if (w->has_memory_bytes)
            json_object_set_new(o, "memory_bytes", json_integer((json_int_t) w->memory_bytes));
        json_object_set_new(root, "worker", o);
    }
    char *out = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return out ? out : strdup(fb->json);
}

static char *s_minimal_json(const Profeed__Feedback *fb)
{
    json_t *root = json_object();
    json_object_set_new(root, "job_id", json_string(fb->job_id ? fb->job_id : ""));
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(&profeed__feedback_status__descriptor,
                                                                       (int) fb->status);
    json_object_set_new(root, "status", json_string(v ? v->name : "unknown"));
    json_t *errors = json_array();
    for (size_t i = 0; i < fb->n_errors; i++)
        json_array_append_new(errors, json_string(fb->errors[i]));
    json_object_set_new(root, "errors", errors);
    char *out = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    return out;
}

/* Waits up to `wait_ms` for a message on the handle's socket: 1 when one
 * came, 0 when none did, -1 (with *error and *result saying why, `what` the
 * wait) when the wait broke: a signal, or a ZeroMQ error. */
static int s_poll(profeed_farm_t *self, int64_t wait_ms, const char *what, profeed_result_t *result, char **error)
{
    zmq_pollitem_t item = {.socket = zsock_resolve(self->sock), .events = ZMQ_POLLIN};
    int rc = zmq_poll(&item, 1, (long) wait_ms);
    if (rc >= 0)
        return rc > 0;
    int why = errno;
    *error = why == EINTR ? s_printf("interrupted while %s", what) : s_printf("%s: %s", what, zmq_strerror(why));
    *result = why == EINTR ? PROFEED_INTERRUPTED : PROFEED_ERROR;
    return -1;
}

profeed_result_t profeed_farm_run(profeed_farm_t *self, const profeed_job_t *job, int wait_ms,
                                  profeed_format_t format, profeed_progress_fn *progress, void *arg,
                                  char **output, char **error, char *job_id_out)
{
    assert(self && job);
    char *out_local = NULL, *err_local = NULL;
    if (!output)
        output = &out_local;
    if (!error)
        error = &err_local;
    *output = *error = NULL;
    profeed_result_t result = PROFEED_UNAVAILABLE;

    Profeed__JobRequest req;
    profeed__job_request__init(&req);
    Profeed__Command command;
    profeed__command__init(&command);
    char id[WIRE_MAX_ID_LEN + 1] = "";
    if (job_id_out)
        job_id_out[0] = '\0';
    if (job->job_id) {
        /* Checked before it is copied: a longer id would be cut to another job's. */
        pf_error_t id_err;
        if (wire_check_id(job->job_id, "job id", &id_err) != PF_OK) {
            *error = s_printf("%s", id_err.msg);
            result = PROFEED_BAD_INPUT;
            goto done;
        }
        snprintf(id, sizeof id, "%s", job->job_id);
    } else {
        zuuid_t *uuid = zuuid_new();
        snprintf(id, sizeof id, "%s", zuuid_str_canonical(uuid));
        zuuid_destroy(&uuid);
    }
    if (job_id_out)
        snprintf(job_id_out, WIRE_MAX_ID_LEN + 1, "%s", id);
    req.job_id = id;
    req.agent_id = (char *) job->agent_id;
    req.baseline_job_id = (char *) job->baseline_job_id;
    req.has_language = 1;
    req.has_profiler = 1;
    if (!s_language(job->language, &req.language)) {
        *error = s_printf("unknown language \"%s\" (cuda, triton, pytorch, sycl or ocl)",
                          job->language ? job->language : "");
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (!s_profiler(job->profiler, &req.profiler)) {
        *error = s_printf("unknown profiler \"%s\" (%s)", job->profiler, profiler_names());
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    pf_error_t err;
    const char *analyzer = NULL;
    if (job->profiler && select_analyzer(job->language, job->gpu_arch, job->profiler, &analyzer, &err) != PF_OK) {
        /* No analysis reads that profiler's output for this language. */
        *error = s_printf("%s", err.msg);
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (req.profiler == PROFEED__PROFILER__PROFILER_UNSPECIFIED)
        req.has_profiler = 0;
    req.gpu_arch = (char *) job->gpu_arch;
    Profeed__KernelProblem kernel;
    Profeed__File kernel_file, problem_file;
    Profeed__JobMetadata metadata;
    profeed__job_metadata__init(&metadata);
    if (job->kernel_name) {
        profeed__kernel_problem__init(&kernel);
        profeed__file__init(&kernel_file);
        profeed__file__init(&problem_file);
        kernel_file.name = (char *) job->kernel_name;
        kernel_file.has_content = 1;
        kernel_file.content.data = (uint8_t *) job->kernel_source;
        kernel_file.content.len = job->kernel_len;
        problem_file.name = (char *) job->problem_name;
        problem_file.has_content = 1;
        problem_file.content.data = (uint8_t *) job->problem_source;
        problem_file.content.len = job->problem_len;
        kernel.kernel_file = &kernel_file;
        kernel.problem_file = job->problem_name ? &problem_file : NULL;
        req.target_case = PROFEED__JOB_REQUEST__TARGET_KERNEL;
        req.kernel = &kernel;
        metadata.kernel_file_name = (char *) job->kernel_name;
        metadata.problem_file_name = (char *) job->problem_name;
        req.metadata = &metadata;
    } else {
        command.argv = (char **) job->argv;
        command.n_argv = job->argc;
        req.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
        req.command = &command;
    }
    if (job->round) {
        metadata.has_round = 1;
        metadata.round = job->round;
        req.metadata = &metadata;
    }
    Profeed__PassSpec plan, *plans[1] = {&plan};
    if (job->plan) {
        profeed__pass_spec__init(&plan);
        plan.name = (char *) job->plan;
        req.passes = plans;
        req.n_passes = 1;
    }
    Profeed__ProfileFilter filter;
    profeed__profile_filter__init(&filter);
    if (job->kernel_regex || job->nvtx_range || job->launch_skip || job->launch_count) {
        filter.kernel_regex = (char *) job->kernel_regex;
        filter.nvtx_range = (char *) job->nvtx_range;
        filter.has_launch_skip = job->launch_skip != 0;
        filter.launch_skip = job->launch_skip;
        filter.has_launch_count = job->launch_count != 0;
        filter.launch_count = job->launch_count;
        req.filter = &filter;
    }
    if (job->source) {
        req.has_source = 1;
        req.source = 1;
    }
    if (job->timeout_s) {
        req.has_timeout_s = 1;
        req.timeout_s = job->timeout_s;
    }
    Profeed__FeedbackShape shape;
    profeed__feedback_shape__init(&shape);
    if (job->max_chars > 0 && format != PROFEED_FORMAT_TEXT) {
        *error = s_printf("max chars bounds the text format only; JSON and Markdown are never cut");
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (job->max_tokens > 0 && format != PROFEED_FORMAT_TEXT) {
        *error = s_printf("max tokens bounds the text format only; JSON and Markdown are never cut");
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (job->max_tokens > UINT32_MAX || (job->max_tokens > 0 && job->max_tokens < 64)) {
        *error = s_printf("max tokens %zu is not 0 or between 64 and %u", job->max_tokens, (unsigned) UINT32_MAX);
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (job->max_chars > UINT32_MAX) {
        *error = s_printf("max chars %zu is over %u", job->max_chars, (unsigned) UINT32_MAX);
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    if (job->min_share_given && !(job->min_share >= 0 && job->min_share <= 1)) {
        *error = s_printf("min share %g is not a share of time in 0..1", job->min_share);
        result = PROFEED_BAD_INPUT;
        goto done;
    }
    bool collated = job->collated && format == PROFEED_FORMAT_JSON; /* only JSON shows it */
    if (format == PROFEED_FORMAT_MARKDOWN || job->max_chars || job->max_tokens || job->top || job->min_share_given ||
        collated) {
        shape.has_text_format = format == PROFEED_FORMAT_MARKDOWN;
        shape.text_format = PROFEED__TEXT_FORMAT__TEXT_FORMAT_MARKDOWN;
        shape.has_max_chars = job->max_chars != 0;
        shape.max_chars = (uint32_t) job->max_chars;
        shape.has_max_tokens = job->max_tokens != 0;
        shape.max_tokens = (uint32_t) job->max_tokens;
        shape.has_top = job->top != 0;
        shape.top = job->top;
        shape.has_min_share = job->min_share_given != 0;
        shape.min_share = job->min_share;
        shape.has_collated = collated;
        shape.collated = collated;
        req.shape = &shape;
    }
    /* Nobody to show progress to: ask the broker not to send it. */
    req.has_progress = 1;
    req.progress = progress != NULL;
    Profeed__Envelope submit;
    wire_envelope_init(&submit);
    submit.body_case = PROFEED__ENVELOPE__BODY_SUBMIT;
    submit.submit = &req;
    if (s_send(self, &submit, &err) != PF_OK) {
        *error = s_printf("%s", err.msg);
        result = err.code == PF_EIO ? PROFEED_UNAVAILABLE : PROFEED_BAD_INPUT;
        goto done;
    }

    char *ids[1] = {id};
    Profeed__Heartbeat hb;
    profeed__heartbeat__init(&hb);
    hb.job_ids = ids;
    hb.n_job_ids = 1;
    Profeed__Envelope ping;
    wire_envelope_init(&ping);
    ping.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
    ping.heartbeat = &hb;

    int64_t deadline = wait_ms > 0 ? wire_zmq_now_ms() + wait_ms : INT64_MAX;
    int64_t next_hb = wire_zmq_now_ms() + self->heartbeat_ms;
    int liveness = self->liveness;
    /* answered: the broker ever answered this wait; accepted: it
     * acknowledged the job; silent: windows without an answer since it last
     * answered. */
    bool answered = false, accepted = false;
    int silent = 0;
    int64_t window_ms = (int64_t) self->heartbeat_ms * self->liveness, last_heard_ms = wire_zmq_now_ms();
    char waiting[WIRE_MAX_ID_LEN + 32]; /* what an interrupted wait says */
    snprintf(waiting, sizeof waiting, "waiting for job %s", id);
    while (true) {
        int64_t now = wire_zmq_now_ms();
        if (now >= deadline) {
            if (!answered)
                *error = s_printf("no answer from the broker at %s within %d ms (is profeed-broker running, and is "
                                  "this its agent endpoint?)",
                                  self->endpoint, wait_ms);
            else if (accepted)
                *error = s_printf("no feedback for job %s within %d ms; the broker at %s accepted it and still "
                                  "has it: submit the same --job-id again to collect the feedback",
                                  id, wait_ms, self->endpoint);
            else
                *error = s_printf("no feedback for job %s within %d ms: the broker at %s answered but did not "
                                  "accept it",
                                  id, wait_ms, self->endpoint);
            result = PROFEED_UNAVAILABLE;
            break;
        }
        if (now >= next_hb) {
            if (--liveness <= 0) {
                if (!answered) {
                    *error = s_printf("no answer from the broker at %s within %lld ms (is profeed-broker running, "
                                      "and is this its agent endpoint?)",
                                      self->endpoint, (long long) window_ms);
                    break;
                }
                if (++silent > PROFEED_FARM_LOST_WINDOWS) {
                    *error = s_printf("no answer from the broker at %s for %lld ms; it answered before, and job "
                                      "%s may still finish there: submit the same --job-id again later",
                                      self->endpoint, (long long) (now - last_heard_ms), id);
                    break;
                }
                /* The broker is gone or restarted: a new connection, and the
                 * job again (idempotent by its id). */
                s_notice(self, "the broker at %s has not answered for %lld ms; connecting again and submitting "
                               "job %s again",
                         self->endpoint, (long long) (now - last_heard_ms), id);
                if (s_connect(self) != 0 || s_send(self, &submit, &err) != PF_OK) {
                    *error = s_printf("cannot reach the broker at %s", self->endpoint);
                    break;
                }
                liveness = self->liveness;
            } else {
                s_send(self, &ping, &err);
            }
            next_hb = now + self->heartbeat_ms;
        }
        int64_t wait = next_hb - now;
        if (deadline - now < wait)
            wait = deadline - now;
        int rc = s_poll(self, wait, waiting, &result, error);
        if (rc < 0)
            break;
        if (rc == 0)
            continue;
        Profeed__Envelope *env = wire_zmq_recv(self->sock, false, NULL, FARM_MAX_MSG, NULL, &err);
        if (!env)
            continue; /* a bad message from the broker: not ours to act on */
        liveness = self->liveness;
        answered = true;
        silent = 0;
        last_heard_ms = wire_zmq_now_ms();
        bool finished = false;
        switch (env->body_case) {
        case PROFEED__ENVELOPE__BODY_ACK:
            if (env->ack->job_id && strcmp(env->ack->job_id, id) == 0)
                accepted = true;
            break;
        case PROFEED__ENVELOPE__BODY_PROGRESS:
            if (progress && env->progress->job_id && strcmp(env->progress->job_id, id) == 0)
                progress(id, env->progress->state ? env->progress->state : "", env->progress->passes_done,
                         env->progress->pass_count, arg);
            break;
        case PROFEED__ENVELOPE__BODY_FEEDBACK: {
            const Profeed__Feedback *fb = env->feedback;
            if (!fb->job_id || strcmp(fb->job_id, id) != 0) {
                self->strays++; /* a second delivery of an earlier job's: dropped */
                break;
            }
            result = s_feedback_result(fb);
            if (format == PROFEED_FORMAT_JSON)
                *output = fb->json ? s_json_with_context(fb) : s_minimal_json(fb);
            else
                *output = strdup(fb->text ? fb->text : "");
            if (result != PROFEED_OK && fb->n_errors)
                *error = strdup(fb->errors[0]);
            finished = true;
            /* Tell the broker it arrived, so it can stop keeping what it
             * kept to deliver it again. Lost acks only cost broker memory
             * until its retention ends. */
            Profeed__Ack ack;
            profeed__ack__init(&ack);
            ack.job_id = id;
            Profeed__Envelope got;
            wire_envelope_init(&got);
            got.body_case = PROFEED__ENVELOPE__BODY_ACK;
            got.ack = &ack;
            s_send(self, &got, &err);
            break;
        }
        case PROFEED__ENVELOPE__BODY_ERROR: {
            const Profeed__Error *e = env->error;
            if (e->job_id && strcmp(e->job_id, id) != 0)
                break;
            if (e->code == PROFEED__ERROR_CODE__ERROR_CODE_UNKNOWN_JOB) {
                s_send(self, &submit, &err); /* a restarted broker: submit again */
                break;
            }
            if (e->code == PROFEED__ERROR_CODE__ERROR_CODE_OVERLOADED && e->has_retry_after_ms &&
                wire_zmq_now_ms() + e->retry_after_ms < deadline) {
                /* Busy: the same job again after the time the broker asked for. */
                s_notice(self, "the farm is busy (%s); submitting job %s again in %u ms",
                         e->text ? e->text : "no reason given", id, (unsigned) e->retry_after_ms);
                zclock_sleep((int) e->retry_after_ms);
                s_send(self, &submit, &err);
                liveness = self->liveness;
                next_hb = wire_zmq_now_ms() + self->heartbeat_ms;
                break;
            }
            *error = s_printf("%s", e->text ? e->text : "the broker refused the job");
            result = e->code == PROFEED__ERROR_CODE__ERROR_CODE_BAD_REQUEST ||
                             e->code == PROFEED__ERROR_CODE__ERROR_CODE_DUPLICATE_JOB
                         ? PROFEED_BAD_INPUT
                         : PROFEED_UNAVAILABLE;
            finished = true;
            break;
        }
        default: break;
        }
        wire_envelope_destroy(&env);
        if (finished)
            break;
    }
done:
    free(out_local);
    free(err_local);
    return result;
}

/* What a worker offers jobs (Ready.capabilities: the profilers a collector
 * runs or an analyzer reads), as the broker matches it: a worker that
 * announced none offers its `profilers`, by name (broker/worker_pool.c does
 * the same). Calls `each` per item. */
static void s_offers(const Profeed__Ready *r, void (*each)(const char *offer, void *arg), void *arg)
{
    for (size_t i = 0; i < r->n_capabilities; i++)
        each(r->capabilities[i], arg);
    for (size_t i = 0; r->n_capabilities == 0 && i < r->n_profilers; i++)
        if (profiler_name_or(r->profilers[i], NULL))
            each(profiler_name_or(r->profilers[i], NULL), arg);
}

/* Appends ", offers A, B" to a textbuf_t, the first time with "offers". */
typedef struct {
    textbuf_t *tb;
    size_t count;
} offer_text_t;

static void s_offer_text(const char *offer, void *arg)
{
    offer_text_t *t = arg;
    textbuf_printf(t->tb, "%s%s", t->count++ ? ", " : ", offers ", offer);
}

static void s_offer_json(const char *offer, void *arg) { json_array_append_new(arg, json_string(offer)); }

static void s_status_text(const Profeed__FarmStatus *st, char **output)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_printf(&tb, "workers: %zu\n", st->n_workers);
    for (size_t i = 0; i < st->n_workers; i++) {
        const Profeed__WorkerStatus *w = st->workers[i];
        const Profeed__Ready *r = w->worker;
        bool collector = r->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR;
        textbuf_printf(&tb, "  %-9s %s on %s, busy %u/%u, heard %u ms ago", collector ? "collector" : "analyzer",
                       r->worker_id, r->host ? r->host : "?", (unsigned) w->busy,
                       (unsigned) (r->has_slots ? r->slots : 1), (unsigned) w->idle_ms);
        for (size_t g = 0; g < r->n_gpus; g++)
            textbuf_printf(&tb, ", %s (%s) x%u", r->gpus[g]->name, r->gpus[g]->arch ? r->gpus[g]->arch : "?",
                           (unsigned) (r->gpus[g]->has_count ? r->gpus[g]->count : 1));
        offer_text_t offers = {&tb, 0};
        s_offers(r, s_offer_text, &offers);
        textbuf_append(&tb, "\n");
    }
    textbuf_printf(&tb, "jobs: %u queued, %u in flight, %u finished (remembered)\n", (unsigned) st->queued,
                   (unsigned) st->in_flight, (unsigned) st->finished);
    for (size_t i = 0; i < st->n_job_ids; i++)
        textbuf_printf(&tb, "  %s\n", st->job_ids[i]);
    const Profeed__FarmCounters *c = st->counters;
    if (c) {
        textbuf_printf(&tb, "since the broker started (%.0f s ago): %llu jobs submitted, %llu attempts, "
                            "%llu requeued, %llu workers lost\n",
                       (double) c->uptime_ms / 1000.0, (unsigned long long) c->submitted,
                       (unsigned long long) c->attempts, (unsigned long long) c->requeued,
                       (unsigned long long) c->workers_lost);
        textbuf_append(&tb, "  finished:");
        for (size_t i = 0; i < c->n_finished; i++)
            textbuf_printf(&tb, "%s %llu %s", i ? "," : "", (unsigned long long) c->finished[i]->value,
                           c->finished[i]->name);
        if (c->has_job_latency_mean_s)
            textbuf_printf(&tb, "; mean %.3f s from submission to feedback", c->job_latency_mean_s);
        textbuf_append(&tb, c->n_finished ? "\n" : " none\n");
        textbuf_append(&tb, "  refused messages:");
        for (size_t i = 0; i < c->n_rejected; i++)
            textbuf_printf(&tb, "%s %llu %s", i ? "," : "", (unsigned long long) c->rejected[i]->value,
                           c->rejected[i]->name);
        textbuf_append(&tb, c->n_rejected ? "\n" : " none\n");
        textbuf_printf(&tb, "  traffic: %.1f MB in, %.1f MB out\n", (double) c->bytes_in / 1e6,
                       (double) c->bytes_out / 1e6);
    }
    *output = textbuf_take(&tb);
}

static void s_status_json(const Profeed__FarmStatus *st, char **output)
{
    json_t *root = json_object();
    json_t *workers = json_array();
    for (size_t i = 0; i < st->n_workers; i++) {
        const Profeed__WorkerStatus *w = st->workers[i];
        const Profeed__Ready *r = w->worker;
        json_t *o = json_object();
        json_object_set_new(o, "role", json_string(r->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR
                                                       ? "collector" : "analyzer"));
        json_object_set_new(o, "worker_id", json_string(r->worker_id));
        json_object_set_new(o, "host", json_string(r->host ? r->host : ""));
        json_object_set_new(o, "busy", json_integer(w->busy));
        json_object_set_new(o, "slots", json_integer(r->has_slots ? r->slots : 1));
        json_object_set_new(o, "idle_ms", json_integer(w->idle_ms));
        json_t *gpus = json_array();
        for (size_t g = 0; g < r->n_gpus; g++) {
            json_t *gpu = json_object();
            json_object_set_new(gpu, "name", json_string(r->gpus[g]->name));
            json_object_set_new(gpu, "arch", json_string(r->gpus[g]->arch ? r->gpus[g]->arch : ""));
            json_object_set_new(gpu, "count", json_integer(r->gpus[g]->has_count ? r->gpus[g]->count : 1));
            json_array_append_new(gpus, gpu);
        }
        json_object_set_new(o, "gpus", gpus);
        json_t *offers = json_array();
        s_offers(r, s_offer_json, offers);
        json_object_set_new(o, "offers", offers);
        json_array_append_new(workers, o);
    }
    json_object_set_new(root, "workers", workers);
    json_object_set_new(root, "queued", json_integer(st->queued));
    json_object_set_new(root, "in_flight", json_integer(st->in_flight));
    json_object_set_new(root, "finished", json_integer(st->finished));
    json_t *jobs = json_array();
    for (size_t i = 0; i < st->n_job_ids; i++)
        json_array_append_new(jobs, json_string(st->job_ids[i]));
    json_object_set_new(root, "jobs_in_flight", jobs);
    if (st->counters) {
        const Profeed__FarmCounters *c = st->counters;
        json_t *o = json_object();
        json_object_set_new(o, "uptime_ms", json_integer((json_int_t) c->uptime_ms));
        json_object_set_new(o, "submitted", json_integer((json_int_t) c->submitted));
        json_object_set_new(o, "attempts", json_integer((json_int_t) c->attempts));
        json_object_set_new(o, "requeued", json_integer((json_int_t) c->requeued));
        json_object_set_new(o, "workers_lost", json_integer((json_int_t) c->workers_lost));
        json_object_set_new(o, "bytes_in", json_integer((json_int_t) c->bytes_in));
        json_object_set_new(o, "bytes_out", json_integer((json_int_t) c->bytes_out));
        if (c->has_job_latency_mean_s)
            json_object_set_new(o, "job_latency_mean_s", json_real(c->job_latency_mean_s));
        json_t *finished = json_object(), *rejected = json_object();
        for (size_t i = 0; i < c->n_finished; i++)
            json_object_set_new(finished, c->finished[i]->name, json_integer((json_int_t) c->finished[i]->value));
        for (size_t i = 0; i < c->n_rejected; i++)
            json_object_set_new(rejected, c->rejected[i]->name, json_integer((json_int_t) c->rejected[i]->value));
        json_object_set_new(o, "finished", finished);
        json_object_set_new(o, "rejected", rejected);
        json_object_set_new(root, "counters", o);
    }
    *output = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
}

profeed_result_t profeed_farm_status(profeed_farm_t *self, int wait_ms, int json, char **output,
                                     char **error)
{
    assert(self);
    char *out_local = NULL, *err_local = NULL;
    if (!output)
        output = &out_local;
    if (!error)
        error = &err_local;
    *output = *error = NULL;
    Profeed__StatusRequest request;
    profeed__status_request__init(&request);
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_STATUS_REQUEST;
    env.status_request = &request;
    pf_error_t err;
    profeed_result_t result = PROFEED_UNAVAILABLE;
    if (s_send(self, &env, &err) != PF_OK) {
        *error = s_printf("%s", err.msg);
        goto done;
    }
    int64_t deadline = wire_zmq_now_ms() + (wait_ms > 0 ? wait_ms : 5000);
    while (true) {
        int64_t left = deadline - wire_zmq_now_ms();
        if (left <= 0) {
            *error = s_printf("no answer from the broker at %s", self->endpoint);
            break;
        }
        int rc = s_poll(self, left, "waiting for the broker", &result, error);
        if (rc < 0)
            break;
        if (rc == 0)
            continue;
        Profeed__Envelope *reply = wire_zmq_recv(self->sock, false, NULL, FARM_MAX_MSG, NULL, &err);
        if (reply && reply->body_case == PROFEED__ENVELOPE__BODY_ERROR && !reply->error->job_id) {
            /* Refused, not ignored: say why (e.g. this is a worker endpoint). */
            *error = s_printf("the broker at %s refused the request: %s", self->endpoint,
                              reply->error->text ? reply->error->text : "no reason given");
            result = PROFEED_BAD_INPUT;
            wire_envelope_destroy(&reply);
            break;
        }
        if (reply && reply->body_case == PROFEED__ENVELOPE__BODY_STATUS) {
            if (json)
                s_status_json(reply->status, output);
            else
                s_status_text(reply->status, output);
            result = *output ? PROFEED_OK : PROFEED_ERROR;
            wire_envelope_destroy(&reply);
            break;
        }
        wire_envelope_destroy(&reply);
    }
done:
    free(out_local);
    free(err_local);
    return result;
}
