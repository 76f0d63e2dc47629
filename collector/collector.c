#include "collector.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pf_log.h"
#include "proc_run.h"
#include "replay.h"
#include "wire.h"
#include "wire_zmq.h"

#define LOG "collector"
#define MAX_GPU_KINDS 8

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
}

/* The default pass plan for ncu: the three section groups of the bundled
 * H200 capture (tests/fixtures/ncu/h200/pass*.csv), which together feed every
 * rule of the NCU analyzer, each as raw-page CSV on stdout. */
static const struct {
    const char *name;
    const char *args[8];
} s_ncu_plan[] = {
    {"sol", {"--section", "SpeedOfLight", NULL}},
    {"memory", {"--section", "MemoryWorkloadAnalysis", NULL}},
    {"warps", {"--section", "WarpStateStats", "--section", "Occupancy", "--section", "LaunchStats", NULL}},
};

typedef struct {
    const collector_config_t *config;
    replay_t *replay;
    char worker_id[WIRE_MAX_ID_LEN + 1];
    char host[256];
    Profeed__GpuCapability gpus[MAX_GPU_KINDS];
    char gpu_names[MAX_GPU_KINDS][256];
    char gpu_archs[MAX_GPU_KINDS][32];
    size_t gpu_count;
    char compute_capability[16];
    Profeed__Profiler profilers[4];
    size_t profiler_count;
    char ncu_path[4096];
} collector_info_t;

/* One running job: its thread and how to stop it. */
typedef struct {
    char job_id[WIRE_MAX_ID_LEN + 1];
    uint32_t attempt;
    zactor_t *actor;
    int cancel[2];        /* write end [1]: a byte there stops the running pass */
    atomic_bool cancelled;
    uint8_t *request;     /* packed JobRequest, for the thread */
    size_t request_len;
    const collector_info_t *info;
} job_run_t;

/* ------------------------------------------------------------------------
 * The job thread */

static void s_send_env(zsock_t *pipe, const Profeed__Envelope *env, size_t max_msg, const char *job_id)
{
    size_t size = 0;
    pf_error_t err;
    uint8_t *bytes = wire_envelope_pack(env, max_msg, &size, &err);
    if (!bytes) {
        pf_log_error(LOG, "job %s: cannot pack a message: %s", job_id, err.msg);
        zstr_sendm(pipe, "ERROR");
        zstr_send(pipe, err.msg);
        return;
    }
    zstr_sendm(pipe, "SEND");
    zframe_t *frame = zframe_new(bytes, size);
    free(bytes);
    zframe_send(&frame, pipe, 0);
}

static void s_fill_worker(const collector_info_t *info, Profeed__WorkerInfo *w)
{
    profeed__worker_info__init(w);
    w->host = (char *) info->host;
    if (info->gpu_count) {
        w->gpu_name = info->gpus[0].name;
        w->arch = info->gpus[0].arch;
    }
    if (info->compute_capability[0])
        w->compute_capability = (char *) info->compute_capability;
    w->profiler_version = info->replay ? "replay" : NULL;
}

static bool s_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, cap, "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    size_t have = 0, size = 65536;
    uint8_t *buf = malloc(size);
    size_t got;
    while (buf && (got = fread(buf + have, 1, size - have, f)) > 0) {
        have += got;
        if (have > max) {
            snprintf(why, cap, "%s is over the %zu-byte output limit", path, max);
            free(buf);
            fclose(f);
            return false;
        }
        if (have == size) {
            uint8_t *grown = realloc(buf, size * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            size *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(why, cap, "out of memory reading %s", path);
        return false;
    }
    *data = buf;
    *len = have;
    return true;
}

static const char *s_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Sends the job's plan size: the broker forwards it as progress and tells
 * the analyzer how many passes to wait for. */
static void s_send_plan(zsock_t *pipe, const job_run_t *run, uint32_t count, size_t max_msg)
{
    Profeed__Progress p;
    profeed__progress__init(&p);
    p.job_id = (char *) run->job_id;
    p.has_pass_count = p.has_passes_done = 1;
    p.pass_count = count;
    p.passes_done = 0;
    p.state = "collecting";
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PROGRESS;
    env.progress = &p;
    s_send_env(pipe, &env, max_msg, run->job_id);
}

static void s_send_pass(zsock_t *pipe, const job_run_t *run, Profeed__PassOutput *pass, size_t max_msg)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PASS_OUTPUT;
    env.pass_output = pass;
    s_send_env(pipe, &env, max_msg, run->job_id);
}

static void s_job_error(zsock_t *pipe, const char *text)
{
    zstr_sendm(pipe, "ERROR");
    zstr_send(pipe, text);
}

/* Waits `ms` unless the job is cancelled first; false when cancelled. */
static bool s_sleep(job_run_t *run, int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000000};
    for (int waited = 0; waited < ms; waited += 10) {
        if (atomic_load(&run->cancelled))
            return false;
        nanosleep(&ts, NULL);
    }
    return !atomic_load(&run->cancelled);
}

static void s_run_replay(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    const char *program = s_basename(req->command->argv[0]);
    const replay_pass_t *passes[64];
    size_t count = replay_find(info->replay, program, passes, 64);
    if (count == 0) {
        char text[512];
        snprintf(text, sizeof text, "replay: %s records no capture for program \"%.128s\"",
                 replay_path(info->replay), program);
        s_job_error(pipe, text);
        return;
    }
    s_send_plan(pipe, run, (uint32_t) count, config->max_msg);
    for (size_t i = 0; i < count; i++) {
        if (!s_sleep(run, config->pass_delay_ms))
            return;
        const replay_pass_t *rp = passes[i];
        Profeed__PassOutput pass;
        profeed__pass_output__init(&pass);
        Profeed__File files[REPLAY_MAX_FILES], *file_ptrs[REPLAY_MAX_FILES];
        uint8_t *datas[REPLAY_MAX_FILES] = {0};
        char source[2048];
        size_t used = (size_t) snprintf(source, sizeof source, "%s:", replay_path(info->replay));
        bool ok = true;
        char why[512];
        for (size_t f = 0; f < rp->file_count; f++) {
            size_t len = 0;
            if (!s_read_file(rp->files[f], config->max_output, &datas[f], &len, why, sizeof why)) {
                ok = false;
                break;
            }
            profeed__file__init(&files[f]);
            files[f].name = (char *) s_basename(rp->files[f]);
            files[f].has_content = 1;
            files[f].content.data = datas[f];
            files[f].content.len = len;
            file_ptrs[f] = &files[f];
            if (used < sizeof source) {
                int n = snprintf(source + used, sizeof source - used, " %s", rp->files[f]);
                used = n > 0 ? used + (size_t) n : sizeof source;
            }
        }
        if (ok) {
            Profeed__WorkerInfo worker;
            s_fill_worker(info, &worker);
            pass.job_id = run->job_id;
            pass.pass_key = (char *) rp->pass_key;
            pass.has_profiler = 1;
            pass.profiler = PROFEED__PROFILER__PROFILER_NCU;
            pass.files = file_ptrs;
            pass.n_files = rp->file_count;
            pass.has_exit_status = 1;
            pass.exit_status = rp->exit_status;
            pass.has_duration_ms = 1;
            pass.duration_ms = (uint64_t) config->pass_delay_ms;
            pass.worker = &worker;
            pass.replay_source = source;
            s_send_pass(pipe, run, &pass, config->max_msg);
        }
        for (size_t f = 0; f < rp->file_count; f++)
            free(datas[f]);
        if (!ok) {
            s_job_error(pipe, why);
            return;
        }
    }
}

/* Cuts `text` to valid UTF-8 on one boundary, for stderr_tail. Profilers
 * print bytes; the wire wants UTF-8 without NULs, so others become '?'. */
static void s_clean_text(char *text)
{
    for (unsigned char *p = (unsigned char *) text; *p; p++) {
        if (*p >= 0x80 || (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r'))
            *p = '?';
    }
}

static void s_run_ncu(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    size_t plan = req->n_passes ? req->n_passes : sizeof s_ncu_plan / sizeof s_ncu_plan[0];
    s_send_plan(pipe, run, (uint32_t) plan, config->max_msg);
    uint32_t timeout_s = req->has_timeout_s ? req->timeout_s : config->pass_timeout_s;
    for (size_t i = 0; i < plan; i++) {
        if (atomic_load(&run->cancelled))
            return;
        /* ncu --csv --page raw --clock-control none <pass args> -- <command> */
        size_t extra = req->n_passes ? req->passes[i]->n_args : 8;
        size_t argc_max = 6 + extra + 1 + req->command->n_argv + 1;
        char **argv = calloc(argc_max, sizeof *argv);
        if (!argv) {
            s_job_error(pipe, "out of memory");
            return;
        }
        size_t argc = 0;
        argv[argc++] = (char *) info->ncu_path;
        argv[argc++] = "--csv";
        argv[argc++] = "--page";
        argv[argc++] = "raw";
        argv[argc++] = "--clock-control";
        argv[argc++] = "none";
        if (req->n_passes) {
            for (size_t a = 0; a < req->passes[i]->n_args; a++)
                argv[argc++] = req->passes[i]->args[a];
        } else {
            for (size_t a = 0; s_ncu_plan[i].args[a]; a++)
                argv[argc++] = (char *) s_ncu_plan[i].args[a];
        }
        argv[argc++] = "--";
        for (size_t a = 0; a < req->command->n_argv; a++)
            argv[argc++] = req->command->argv[a];
        argv[argc] = NULL;
        proc_spec_t spec = {
            .argv = argv,
            .cwd = config->workdir,
            .timeout_ms = (int) (timeout_s > 2000000 ? 2000000000 : timeout_s * 1000),
            .max_output = config->max_output,
            .cancel_fd = run->cancel[0],
        };
        proc_result_t result;
        pf_error_t err;
        pf_status_t rc = proc_run(&spec, &result, &err);
        free(argv);
        if (rc != PF_OK) {
            s_job_error(pipe, err.msg);
            return;
        }
        if (result.cancelled) {
            free(result.output);
            return;
        }
        char pass_key[32];
        snprintf(pass_key, sizeof pass_key, "ncu.%03zu", i);
        char tail[PROC_STDERR_TAIL + 256];
        snprintf(tail, sizeof tail, "%s%s%s", result.stderr_tail,
                 result.timed_out ? "\nprofeed: the pass ran past its time limit and was stopped" : "",
                 result.truncated ? "\nprofeed: the output passed the size limit; the pass was stopped" : "");
        s_clean_text(tail);
        char file_name[64];
        snprintf(file_name, sizeof file_name, "ncu.%03zu.csv", i);
        Profeed__File file;
        profeed__file__init(&file);
        file.name = file_name;
        file.has_content = 1;
        file.content.data = (uint8_t *) result.output;
        file.content.len = result.output_len;
        Profeed__File *files[1] = {&file};
        Profeed__WorkerInfo worker;
        s_fill_worker(info, &worker);
        Profeed__PassOutput pass;
        profeed__pass_output__init(&pass);
        pass.job_id = run->job_id;
        pass.pass_key = pass_key;
        pass.has_profiler = 1;
        pass.profiler = PROFEED__PROFILER__PROFILER_NCU;
        pass.files = files;
        pass.n_files = 1;
        pass.has_exit_status = 1;
        pass.exit_status = result.exit_status;
        pass.stderr_tail = tail;
        pass.has_duration_ms = 1;
        pass.duration_ms = (uint64_t) result.duration_ms;
        pass.worker = &worker;
        s_send_pass(pipe, run, &pass, config->max_msg);
        free(result.output);
    }
}

static void s_job_actor(zsock_t *pipe, void *args)
{
    job_run_t *run = args;
    zsock_signal(pipe, 0);
    pf_error_t err;
    Profeed__JobRequest *req = wire_job_request_unpack(run->request, run->request_len, WIRE_MAX_MSG, &err);
    if (!req) {
        s_job_error(pipe, err.msg);
    } else if (req->target_case != PROFEED__JOB_REQUEST__TARGET_COMMAND) {
        s_job_error(pipe, "this collector runs command jobs; kernel + problem jobs need a language "
                          "harness that is not built yet");
    } else if (run->info->replay) {
        s_run_replay(pipe, run, req);
    } else {
        s_run_ncu(pipe, run, req);
    }
    wire_job_request_destroy(&req);
    zstr_send(pipe, "DONE");
    /* zactor_destroy() sends $TERM and waits for the thread to end. */
    while (true) {
        char *cmd = zstr_recv(pipe);
        bool term = !cmd || streq(cmd, "$TERM");
        zstr_free(&cmd);
        if (term)
            break;
    }
}

/* ------------------------------------------------------------------------
 * The loop */

typedef struct {
    const collector_config_t *config;
    collector_info_t info;
    zsock_t *sock;
    zpoller_t *poller;
    zsock_t *pipe;
    job_run_t **runs;     /* config->slots of them, NULL = free */
    int liveness;
    int64_t next_heartbeat_ms;
    int64_t last_ready_ms;
    int backoff_ms;
} collector_t;

static void s_run_destroy(collector_t *self, size_t slot)
{
    job_run_t *run = self->runs[slot];
    if (!run)
        return;
    atomic_store(&run->cancelled, true);
    ssize_t w = write(run->cancel[1], "x", 1);
    (void) w;
    zpoller_remove(self->poller, run->actor);
    zactor_destroy(&run->actor);
    close(run->cancel[0]);
    close(run->cancel[1]);
    free(run->request);
    free(run);
    self->runs[slot] = NULL;
}

static void s_send(collector_t *self, Profeed__Envelope *env, const char *what)
{
    pf_error_t err;
    if (wire_zmq_send(self->sock, NULL, env, self->config->max_msg, &err) != PF_OK)
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
    ready.has_slots = 1;
    ready.slots = self->config->slots;
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
    if (self->sock) {
        zpoller_remove(self->poller, self->sock);
        zsock_destroy(&self->sock);
    }
    self->sock = zsock_new(ZMQ_DEALER);
    if (!self->sock)
        return -1;
    wire_zmq_configure(self->sock, self->config->max_msg, 100);
    if (zsock_connect(self->sock, "%s", self->config->broker_endpoint) != 0) {
        pf_log_error(LOG, "cannot connect to %s", self->config->broker_endpoint);
        return -1;
    }
    zpoller_add(self->poller, self->sock);
    self->liveness = self->config->liveness;
    s_send_ready(self);
    return 0;
}

static void s_on_dispatch(collector_t *self, const Profeed__Dispatch *d)
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
            if (attempt <= run->attempt) {
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
    pf_error_t err;
    if (run)
        run->request = wire_job_request_pack(d->job, self->config->max_msg, &run->request_len, &err);
    if (!run || !run->request || pipe(run->cancel) != 0) {
        if (run)
            free(run->request);
        free(run);
        wire_zmq_send_error(self->sock, NULL, PROFEED__ERROR_CODE__ERROR_CODE_INTERNAL, job_id, LOG,
                            "cannot start the job");
        return;
    }
    snprintf(run->job_id, sizeof run->job_id, "%s", job_id);
    run->attempt = attempt;
    run->info = &self->info;
    atomic_init(&run->cancelled, false);
    run->actor = zactor_new(s_job_actor, run);
    self->runs[free_slot] = run;
    zpoller_add(self->poller, run->actor);
    pf_log_info(LOG, "job %s: attempt %u started (%s)", job_id, (unsigned) attempt,
                self->info.replay ? "replay" : "ncu");
}

static void s_on_broker(collector_t *self)
{
    pf_error_t err;
    Profeed__Envelope *env = wire_zmq_recv(self->sock, false, NULL, self->config->max_msg, &err);
    if (!env) {
        if (err.code != PF_OK)
            pf_log_warn(LOG, "broker %s: refused a message: %s", self->config->broker_endpoint, err.msg);
        return;
    }
    self->liveness = self->config->liveness;
    self->backoff_ms = self->config->heartbeat_ms;
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_DISPATCH: s_on_dispatch(self, env->dispatch); break;
    case PROFEED__ENVELOPE__BODY_HEARTBEAT:
    case PROFEED__ENVELOPE__BODY_ACK: break;
    case PROFEED__ENVELOPE__BODY_ERROR:
        if (env->error->job_id) {
            pf_log_warn(LOG, "job %s: broker says: %s", env->error->job_id, env->error->text ? env->error->text : "");
        } else {
            pf_log_warn(LOG, "broker says: %s", env->error->text ? env->error->text : "");
            /* Most likely a restarted broker that does not know us yet. */
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
    zmsg_t *msg = zmsg_recv(run->actor);
    if (!msg)
        return;
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
        s_run_destroy(self, slot);
    }
    zstr_free(&kind);
    zmsg_destroy(&msg);
}

/* GPUs from --gpu, or nvidia-smi; profilers from PATH. */
static int s_discover(collector_t *self)
{
    collector_info_t *info = &self->info;
    const collector_config_t *config = self->config;
    if (gethostname(info->host, sizeof info->host) != 0)
        snprintf(info->host, sizeof info->host, "unknown");
    info->host[sizeof info->host - 1] = '\0';
    if (config->worker_id)
        snprintf(info->worker_id, sizeof info->worker_id, "%s", config->worker_id);
    else
        snprintf(info->worker_id, sizeof info->worker_id, "collector-%.64s-%ld", info->host, (long) getpid());
    pf_error_t err;
    if (wire_check_id(info->worker_id, "--worker-id", &err) != PF_OK) {
        pf_log_error(LOG, "%s", err.msg);
        return -1;
    }
    if (config->gpu) {
        char spec[256];
        snprintf(spec, sizeof spec, "%s", config->gpu);
        char *arch = strchr(spec, ':');
        if (!arch) {
            pf_log_error(LOG, "--gpu needs NAME:ARCH[:COUNT], got \"%s\"", config->gpu);
            return -1;
        }
        *arch++ = '\0';
        char *count = strchr(arch, ':');
        long n = 1;
        if (count) {
            *count++ = '\0';
            char *end = NULL;
            n = strtol(count, &end, 10);
            if (end == count || *end || n < 1 || n > 1024) {
                pf_log_error(LOG, "--gpu: COUNT must be 1..1024, got \"%s\"", count);
                return -1;
            }
        }
        snprintf(info->gpu_names[0], sizeof info->gpu_names[0], "%s", spec);
        snprintf(info->gpu_archs[0], sizeof info->gpu_archs[0], "%s", arch);
        profeed__gpu_capability__init(&info->gpus[0]);
        info->gpus[0].name = info->gpu_names[0];
        info->gpus[0].arch = info->gpu_archs[0];
        info->gpus[0].has_count = 1;
        info->gpus[0].count = (uint32_t) n;
        info->gpu_count = 1;
    } else if (!config->replay_map) {
        char *argv[] = {"nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader", NULL};
        proc_spec_t spec = {.argv = argv, .timeout_ms = 20000, .max_output = 65536, .cancel_fd = -1};
        proc_result_t r;
        if (proc_run(&spec, &r, &err) == PF_OK) {
            char *next = NULL;
            for (char *line = r.output; line && *line && info->gpu_count < MAX_GPU_KINDS; line = next) {
                char *nl = strchr(line, '\n');
                next = nl ? nl + 1 : NULL;
                if (nl)
                    *nl = '\0';
                char *comma = strrchr(line, ',');
                if (!comma)
                    continue;
                *comma = '\0';
                const char *cc = comma + 1;
                while (*cc == ' ')
                    cc++;
                char arch[32];
                int major = 0, minor = 0;
                if (sscanf(cc, "%d.%d", &major, &minor) != 2)
                    continue;
                snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
                size_t k = 0;
                for (; k < info->gpu_count; k++) {
                    if (streq(info->gpu_names[k], line)) {
                        info->gpus[k].count++;
                        break;
                    }
                }
                if (k == info->gpu_count) {
                    snprintf(info->gpu_names[k], sizeof info->gpu_names[k], "%s", line);
                    snprintf(info->gpu_archs[k], sizeof info->gpu_archs[k], "%s", arch);
                    profeed__gpu_capability__init(&info->gpus[k]);
                    info->gpus[k].name = info->gpu_names[k];
                    info->gpus[k].arch = info->gpu_archs[k];
                    info->gpus[k].has_count = 1;
                    info->gpus[k].count = 1;
                    info->gpu_count++;
                    snprintf(info->compute_capability, sizeof info->compute_capability, "%d.%d", major, minor);
                }
            }
            free(r.output);
        }
    }
    if (config->replay_map) {
        info->replay = replay_load(config->replay_map, &err);
        if (!info->replay) {
            pf_log_error(LOG, "replay map: %s", err.msg);
            return -1;
        }
        if (info->gpu_count == 0) {
            /* The bundled captures come from an H200. */
            snprintf(info->gpu_names[0], sizeof info->gpu_names[0], "NVIDIA H200");
            snprintf(info->gpu_archs[0], sizeof info->gpu_archs[0], "sm_90");
            profeed__gpu_capability__init(&info->gpus[0]);
            info->gpus[0].name = info->gpu_names[0];
            info->gpus[0].arch = info->gpu_archs[0];
            info->gpus[0].has_count = 1;
            info->gpus[0].count = 1;
            info->gpu_count = 1;
        }
        info->profilers[info->profiler_count++] = PROFEED__PROFILER__PROFILER_NCU;
    } else {
        if (proc_find("ncu", info->ncu_path, sizeof info->ncu_path))
            info->profilers[info->profiler_count++] = PROFEED__PROFILER__PROFILER_NCU;
        if (info->profiler_count == 0) {
            pf_log_error(LOG, "no profiler this collector can run (ncu) is on PATH; use --replay MAP to "
                              "serve recorded captures");
            return -1;
        }
        if (info->gpu_count == 0) {
            pf_log_error(LOG, "no GPU found (nvidia-smi); name one with --gpu NAME:ARCH or use --replay MAP");
            return -1;
        }
    }
    info->config = config;
    return 0;
}

int collector_run(const collector_config_t *config, zsock_t *pipe)
{
    assert(config && config->slots >= 1);
    collector_t self = {.config = config, .pipe = pipe};
    int rc = -1;
    self.runs = calloc(config->slots, sizeof *self.runs);
    self.poller = zpoller_new(NULL);
    if (!self.runs || !self.poller || s_discover(&self) != 0 || s_connect(&self) != 0)
        goto cleanup;
    if (pipe) {
        zpoller_add(self.poller, pipe);
        zsock_signal(pipe, 0);
    }
    pf_log_info(LOG, "%s: %s on %s, %zu GPU kinds, %u slots, broker %s", self.info.worker_id,
                self.info.replay ? "replaying recorded captures" : "running ncu", self.info.host,
                self.info.gpu_count, (unsigned) config->slots, config->broker_endpoint);
    rc = 0;
    self.backoff_ms = config->heartbeat_ms;
    self.next_heartbeat_ms = wire_zmq_now_ms() + config->heartbeat_ms;
    while (true) {
        int64_t wait = self.next_heartbeat_ms - wire_zmq_now_ms();
        void *which = zpoller_wait(self.poller, wait < 0 ? 0 : (int) wait);
        if (zpoller_terminated(self.poller))
            break;
        if (pipe && which == pipe) {
            char *cmd = zstr_recv(pipe);
            bool term = !cmd || streq(cmd, "$TERM");
            zstr_free(&cmd);
            if (term)
                break;
        } else if (which == self.sock) {
            s_on_broker(&self);
        } else if (which) {
            for (size_t i = 0; i < config->slots; i++) {
                if (self.runs[i] && which == self.runs[i]->actor) {
                    s_on_run(&self, i);
                    break;
                }
            }
        }
        if (wire_zmq_now_ms() >= self.next_heartbeat_ms) {
            if (--self.liveness <= 0) {
                /* Paranoid Pirate: the broker is gone or restarted. Start
                 * over on a fresh socket, after a growing pause. */
                pf_log_warn(LOG, "broker %s silent; reconnecting in %d ms", config->broker_endpoint, self.backoff_ms);
                for (size_t i = 0; i < config->slots; i++)
                    s_run_destroy(&self, i);
                zclock_sleep(self.backoff_ms);
                if (self.backoff_ms < 32 * config->heartbeat_ms)
                    self.backoff_ms *= 2;
                if (s_connect(&self) != 0)
                    break;
            } else {
                s_send_heartbeat(&self);
            }
            self.next_heartbeat_ms = wire_zmq_now_ms() + config->heartbeat_ms;
        }
    }
    pf_log_info(LOG, "%s: stopping", self.info.worker_id);
cleanup:
    if (rc != 0 && pipe)
        zsock_signal(pipe, 1);
    for (size_t i = 0; self.runs && i < config->slots; i++)
        s_run_destroy(&self, i);
    free(self.runs);
    zpoller_destroy(&self.poller);
    zsock_destroy(&self.sock);
    replay_destroy(&self.info.replay);
    return rc;
}

void collector_actor(zsock_t *pipe, void *args)
{
    collector_run((const collector_config_t *) args, pipe);
}
