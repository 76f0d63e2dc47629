#include "collector.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "host_info.h"
#include "pirate.h"
#include "pass_chunk.h"
#include "pass_plan.h"
#include "pf_log.h"
#include "pf_tsan.h"
#include "profiler.h"
#include "proc_run.h"
#include "replay.h"
#include "sandbox.h"
#include "utf8.h"
#include "wire.h"
#include "wire_zmq.h"
#include "wrapper.h"

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
    /* KernelAgent's KernelProfiler: two attempts, 2 s apart. */
    config->attempts = 2;
    config->retry_backoff_ms = 2000;
    config->allow_programs = "*";
    config->keep_env = COLLECTOR_KEEP_ENV;
    config->cpu_limit_s = 3600;
    config->file_limit_mb = 4096;
    config->max_procs = 4096;
}

int collector_print_plan(const char *spec, bool metrics_only, FILE *out)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *name = strchr(buf, ':');
    if (name)
        *name++ = '\0';
    const profiler_t *known = profiler_by_name(buf);
    if (!known) {
        fprintf(stderr, "profeed-collector: --print-plan PROFILER[:PLAN]: PROFILER is one of %s\n", profiler_names());
        return 2;
    }
    Profeed__Profiler profiler = known->id;
    if (metrics_only) {
        const char *const *metrics = pass_plan_ncu_metrics(name ? name : "core");
        if (profiler != PROFEED__PROFILER__PROFILER_NCU || !metrics) {
            fprintf(stderr, "profeed-collector: plan %s does not ask for metrics by name\n", spec);
            return 2;
        }
        for (size_t i = 0; metrics[i]; i++)
            fprintf(out, "%s%s", i ? "," : "", metrics[i]);
        fputc('\n', out);
        return 0;
    }
    char *command[] = {"PROGRAM", "ARGS...", NULL};
    Profeed__PassSpec one, *specs[1] = {&one};
    profeed__pass_spec__init(&one);
    one.name = name;
    pass_plan_input_t input = {
        .language = PROFEED__LANGUAGE__LANGUAGE_CUDA,
        .profiler = profiler,
        .profiler_path = buf,
        .dir = "JOBDIR",
        .command = command,
        .command_len = 2,
        .passes = specs,
        .n_passes = name ? 1 : 0,
    };
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&input, &err);
    if (!plan) {
        fprintf(stderr, "profeed-collector: %s\n", err.msg);
        return 2;
    }
    fprintf(out, "# plan %s:%s, %zu passes; environment:", buf, pass_plan_name(plan), pass_plan_count(plan));
    for (char *const *e = pass_plan_env(plan); *e; e++)
        fprintf(out, " %s", *e);
    fputc('\n', out);
    for (size_t i = 0; i < pass_plan_count(plan); i++) {
        const pass_plan_pass_t *pp = pass_plan_pass(plan, i);
        for (size_t st = 0; st < pp->step_count; st++) {
            fprintf(out, "%s (%s)", pp->key, pp->name);
            for (char **a = pp->steps[st].argv; *a; a++)
                fprintf(out, " %s", *a);
            if (pp->steps[st].stdout_name)
                fprintf(out, " > %s/%s", pp->dir, pp->steps[st].stdout_name);
            fputc('\n', out);
        }
    }
    pass_plan_destroy(&plan);
    return 0;
}

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
    host_gpu_t gpu;                 /* the first GPU nvidia-smi listed (zeroed: none) */
    char profiler_version[64];      /* ncu --version */
    char cpu_model[256];
    Profeed__Profiler profilers[PROFILER_MAX];
    size_t profiler_count;
    char profiler_paths[PROFILER_MAX][4096]; /* by profiler table index; "" when not on PATH */
    char python_path[4096];
    char job_root[4096];
    bool sudo;
    sandbox_t *sandbox;
} collector_info_t;

/* One running job and how to stop it; it runs on its slot's thread. */
typedef struct {
    char job_id[WIRE_MAX_ID_LEN + 1];
    uint32_t attempt;
    int cancel[2];        /* write end [1]: a byte there stops the running pass */
    atomic_bool cancelled;
    Profeed__JobRequest *request; /* as the broker sent it (decoded, checked): owned */
    const collector_info_t *info;
    /* Streamed passes (issue 20): the broker's chunk size (0: send passes
     * whole), and the receipts the loop thread hands the job thread. */
    uint32_t chunk_bytes;
    pthread_mutex_t lock;
    pthread_cond_t acked_cond;
    char stream_pass[WIRE_MAX_ID_LEN + 1]; /* the pass being streamed */
    uint32_t acked;                        /* its chunks the broker confirmed: seq + 1 of the latest */
    bool refused;                          /* the broker refused the stream: stop it */
} job_run_t;

/* Chunks a pass may have unconfirmed (pass_chunk.h). */
#define CHUNK_WINDOW PASS_CHUNK_WINDOW

/* ------------------------------------------------------------------------
 * The job thread */

static void s_send_env(zsock_t *pipe, const Profeed__Envelope *env, size_t max_msg, const char *job_id)
{
    size_t size = 0;
    pf_error_t err;
    zframe_t *frame = NULL;
    if (wire_envelope_measure(env, max_msg, &size, &err) == PF_OK && !(frame = zframe_new(NULL, size)))
        pf_error_set(&err, PF_ENOMEM, "out of memory for a %zu-byte message", size);
    if (!frame) {
        pf_log_error(LOG, "job %s: cannot pack a message: %s", job_id, err.msg);
        zstr_sendm(pipe, "ERROR");
        zstr_send(pipe, err.msg);
        return;
    }
    /* Packed straight into the frame the main thread forwards: inproc and
     * the broker's socket take it without another copy. */
    wire_envelope_pack_to(env, zframe_data(frame), size);
    zstr_sendm(pipe, "SEND");
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
    w->profiler_version = info->replay ? "replay" : info->profiler_version[0] ? (char *) info->profiler_version : NULL;
    if (info->cpu_model[0])
        w->cpu_model = (char *) info->cpu_model;
    const host_gpu_t *g = &info->gpu;
    if (g->driver_version[0])
        w->driver_version = (char *) g->driver_version;
    w->has_sm_clock_mhz = g->sm_clock_mhz != 0;
    w->sm_clock_mhz = g->sm_clock_mhz;
    w->has_mem_clock_mhz = g->mem_clock_mhz != 0;
    w->mem_clock_mhz = g->mem_clock_mhz;
    w->has_memory_bytes = g->memory_bytes != 0;
    w->memory_bytes = g->memory_bytes;
    w->has_sm_count = g->sm_count != 0;
    w->sm_count = g->sm_count;
}

/* Reads a whole file into a new buffer (*data, the caller's): file_read.h,
 * with its message in `why`. */
static bool s_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why, size_t cap)
{
    pf_error_t err;
    if (file_read(path, NULL, max, (char **) data, len, &err) != PF_OK) {
        size_t n = strnlen(err.msg, cap - 1); /* a message cut short, as snprintf would */
        memcpy(why, err.msg, n);
        why[n] = '\0';
        return false;
    }
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

/* Waits until the broker confirmed `want` chunks of the pass being streamed;
 * false when the stream must stop (refused, cancelled, or no receipt for a
 * stall's worth of time: the broker lost it, and requeues the job when our
 * heartbeats stop naming it). */
static bool s_wait_acked(job_run_t *run, uint32_t want, int stall_ms, char *why, size_t cap)
{
    int64_t until = wire_zmq_now_ms() + stall_ms;
    bool ok = true;
    pthread_mutex_lock(&run->lock);
    while (run->acked < want) {
        if (run->refused || atomic_load(&run->cancelled)) {
            snprintf(why, cap, "%s", run->refused ? "the broker refused the stream" : "cancelled");
            ok = false;
            break;
        }
        if (wire_zmq_now_ms() >= until) {
            snprintf(why, cap, "no receipt for chunk %u of pass %s in %d ms", (unsigned) want - 1, run->stream_pass,
                     stall_ms);
            ok = false;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&run->acked_cond, &run->lock, &ts);
    }
    pthread_mutex_unlock(&run->lock);
    return ok;
}

/* Reads up to `cap` bytes, retrying short reads: a chunk is full unless the
 * file ends. -1 on a read error. */
static ssize_t s_read_full(int fd, uint8_t *buf, size_t cap)
{
    size_t have = 0;
    while (have < cap) {
        ssize_t got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        have += (size_t) got;
    }
    return (ssize_t) have;
}

/* Sends one pass as a stream of chunks (issue 20): each file read a chunk at
 * a time, compressed, sent when the window allows; then a last chunk with the
 * pass's other fields (`head`, whose files are named without contents).
 * Holds one chunk and its compressed copy, whatever the files' size. Returns
 * 0 when every chunk was confirmed, 1 when the stream stopped for a reason the
 * broker knows (refused, cancelled, stalled: `why` says which), -1 on a local
 * failure to report (`why`). */
static int s_stream_pass(zsock_t *pipe, job_run_t *run, Profeed__PassOutput *head, char *const *names,
                         char *const *paths, size_t n)
{
    const collector_config_t *config = run->info->config;
    int stall_ms = config->heartbeat_ms * config->liveness * 10;
    char why[PF_ERROR_MSG_MAX + 4096 + 64];
    pf_error_t err;
    pass_chunk_codec_t *codec = pass_chunk_codec_new(run->chunk_bytes, &err);
    uint8_t *buf = codec ? malloc(run->chunk_bytes) : NULL;
    int rc = 0;
    if (!buf) {
        snprintf(why, sizeof why, "pass %s: cannot stream: %s", head->pass_key, codec ? "out of memory" : err.msg);
        rc = -1;
        goto done;
    }
    pthread_mutex_lock(&run->lock);
    snprintf(run->stream_pass, sizeof run->stream_pass, "%s", head->pass_key);
    run->acked = 0;
    pthread_mutex_unlock(&run->lock);
    uint32_t seq = 0;
    uint64_t raw_total = 0, z_total = 0;
    for (size_t f = 0; f < n && rc == 0; f++) {
        int fd = open(paths[f], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            snprintf(why, sizeof why, "cannot open %s: %s", paths[f], strerror(errno));
            rc = -1;
            break;
        }
        uint64_t offset = 0;
        while (rc == 0) {
            ssize_t got = s_read_full(fd, buf, run->chunk_bytes);
            if (got < 0) {
                snprintf(why, sizeof why, "cannot read %s: %s", paths[f], strerror(errno));
                rc = -1;
                break;
            }
            if (got == 0 && offset > 0)
                break; /* an empty file still sends one chunk: the analyzer makes the file */
            const uint8_t *z = NULL;
            size_t zlen = 0;
            if (got > 0 && pass_chunk_codec_pack(codec, buf, (size_t) got, &z, &zlen, &err) != PF_OK) {
                snprintf(why, sizeof why, "%s: %s", paths[f], err.msg);
                rc = -1;
                break;
            }
            if (seq >= CHUNK_WINDOW && !s_wait_acked(run, seq - CHUNK_WINDOW + 1, stall_ms, why, sizeof why)) {
                rc = 1;
                break;
            }
            Profeed__PassChunk c;
            profeed__pass_chunk__init(&c);
            c.job_id = run->job_id;
            c.pass_key = head->pass_key;
            c.has_seq = c.has_offset = c.has_raw_size = c.has_compressed_size = c.has_attempt = c.has_profiler = 1;
            c.seq = seq++;
            c.file_name = names[f];
            c.offset = offset;
            c.raw_size = (uint32_t) got;
            c.compressed_size = (uint32_t) zlen;
            c.has_data = zlen > 0;
            c.data.data = (uint8_t *) z;
            c.data.len = zlen;
            c.attempt = run->attempt;
            c.profiler = head->profiler;
            Profeed__Envelope env;
            wire_envelope_init(&env);
            env.body_case = PROFEED__ENVELOPE__BODY_PASS_CHUNK;
            env.pass_chunk = &c;
            s_send_env(pipe, &env, config->max_msg, run->job_id);
            offset += (uint64_t) got;
            raw_total += (uint64_t) got;
            z_total += zlen;
            if ((size_t) got < run->chunk_bytes)
                break;
        }
        close(fd);
    }
    if (rc == 0 && seq >= CHUNK_WINDOW && !s_wait_acked(run, seq - CHUNK_WINDOW + 1, stall_ms, why, sizeof why))
        rc = 1;
    if (rc == 0) {
        Profeed__PassChunk c;
        profeed__pass_chunk__init(&c);
        c.job_id = run->job_id;
        c.pass_key = head->pass_key;
        c.has_seq = c.has_raw_size = c.has_compressed_size = c.has_attempt = c.has_profiler = 1;
        c.seq = seq++;
        c.has_last = c.last = 1;
        c.pass = head;
        c.attempt = run->attempt;
        c.profiler = head->profiler;
        Profeed__Envelope env;
        wire_envelope_init(&env);
        env.body_case = PROFEED__ENVELOPE__BODY_PASS_CHUNK;
        env.pass_chunk = &c;
        s_send_env(pipe, &env, config->max_msg, run->job_id);
        if (!s_wait_acked(run, seq, stall_ms, why, sizeof why))
            rc = 1;
    }
    if (rc == 0) {
        pf_log_info(LOG, "job %s: pass %s streamed: %u chunks, %llu bytes as %llu (%.1fx)", run->job_id, head->pass_key,
                    (unsigned) seq, (unsigned long long) raw_total, (unsigned long long) z_total,
                    z_total ? (double) raw_total / (double) z_total : 0.0);
    }
done:
    if (rc == 1)
        pf_log_warn(LOG, "job %s: pass %s: stream stopped: %s", run->job_id, head->pass_key, why);
    else if (rc < 0)
        s_job_error(pipe, why);
    free(buf);
    pass_chunk_codec_destroy(&codec);
    return rc;
}

/* Whether a pass of these files goes as chunks: the broker asked for them
 * and the files hold more than one chunk. */
static bool s_should_stream(const job_run_t *run, char *const *paths, size_t n)
{
    if (run->chunk_bytes == 0)
        return false;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t) st.st_size;
    }
    return total > run->chunk_bytes;
}

static void s_run_replay(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    /* Commands are matched by program, kernel jobs by their kernel file. */
    const char *program = req->target_case == PROFEED__JOB_REQUEST__TARGET_COMMAND
                              ? s_basename(req->command->argv[0])
                              : s_basename(req->kernel->kernel_file->name);
    const replay_pass_t *passes[64];
    size_t found = replay_find(info->replay, program, passes, 64), count = 0;
    /* A recorded source pass stands in for the one a real run adds only
     * when the job asks for it. */
    bool want_source = req->has_source && req->source;
    for (size_t i = 0; i < found; i++)
        if (!passes[i]->source || want_source)
            passes[count++] = passes[i];
    if (count == 0) {
        char text[512];
        snprintf(text, sizeof text, "replay: %s records no capture for program \"%.128s\"",
                 replay_path(info->replay), program);
        s_job_error(pipe, text);
        return;
    }
    /* A named plan must exist, as it must for a real run: the recorded
     * passes stand in for it, and a typo should not pass unnoticed. */
    if (req->n_passes == 1 && req->passes[0]->n_args == 0) {
        const profiler_t *keyed = profiler_by_pass_key(passes[0]->pass_key);
        Profeed__Profiler profiler = req->has_profiler && req->profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED
                                         ? req->profiler
                                     : keyed ? keyed->id
                                             : PROFEED__PROFILER__PROFILER_NCU;
        pf_error_t err;
        if (pass_plan_check_name(profiler, req->passes[0]->name, &err) != PF_OK) {
            s_job_error(pipe, err.msg);
            return;
        }
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
        /* A streamed pass reads its files a chunk at a time, so the
         * whole-pass limit (max-output-mb) is not what bounds it. */
        bool stream = s_should_stream(run, rp->files, rp->file_count);
        char *names[REPLAY_MAX_FILES];
        for (size_t f = 0; stream && f < rp->file_count; f++) {
            profeed__file__init(&files[f]);
            files[f].name = names[f] = (char *) s_basename(rp->files[f]);
            file_ptrs[f] = &files[f];
            if (used < sizeof source) {
                int n = snprintf(source + used, sizeof source - used, " %s", rp->files[f]);
                used = n > 0 ? used + (size_t) n : sizeof source;
            }
        }
        for (size_t f = 0; !stream && f < rp->file_count; f++) {
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
            if (stream) {
                if (s_stream_pass(pipe, run, &pass, names, rp->files, rp->file_count) != 0)
                    return;
            } else {
                s_send_pass(pipe, run, &pass, config->max_msg);
            }
        }
        for (size_t f = 0; f < rp->file_count; f++)
            free(datas[f]);
        if (!ok) {
            s_job_error(pipe, why);
            return;
        }
    }
}

/* ------------------------------------------------------------------------
 * Real profiling: a job folder, the pass plan (common/pass_plan.h), one
 * PassOutput per pass */

#define MAX_PASS_FILES 64

/* Removes a job folder and what is in it (the folders this collector made:
 * regular files and subfolders, no symbolic links followed). Best effort. */
static void s_remove_tree(const char *path, int depth)
{
    DIR *dir = depth < 8 ? opendir(path) : NULL;
    if (dir) {
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[4096];
            int n = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            if (n < 0 || (size_t) n >= sizeof child)
                continue;
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                s_remove_tree(child, depth + 1);
            else
                unlink(child);
        }
        closedir(dir);
    }
    rmdir(path);
}

static bool s_write_file(const char *path, const void *data, size_t len, char *why, size_t cap)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        snprintf(why, cap, "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(why, cap, "cannot write %s: %s", path, strerror(errno));
            close(fd);
            return false;
        }
        p += w;
        len -= (size_t) w;
    }
    if (close(fd) != 0) {
        snprintf(why, cap, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static int s_name_order(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A pass's output: the regular files of its folder, in name order. */
typedef struct {
    char *names[MAX_PASS_FILES];
    uint8_t *data[MAX_PASS_FILES];
    size_t len[MAX_PASS_FILES];
    size_t count;
} pass_files_t;

static void s_pass_files_free(pass_files_t *f)
{
    for (size_t i = 0; i < f->count; i++) {
        free(f->names[i]);
        free(f->data[i]);
    }
    f->count = 0;
}

static bool s_pass_files_add(pass_files_t *f, const char *name, const char *path, size_t max, char *why, size_t cap)
{
    if (f->count == MAX_PASS_FILES) {
        snprintf(why, cap, "the pass wrote more than %d files", MAX_PASS_FILES);
        return false;
    }
    size_t i = f->count;
    f->names[i] = strdup(name);
    if (!f->names[i] || !s_read_file(path, max, &f->data[i], &f->len[i], why, cap)) {
        free(f->names[i]);
        if (!f->names[i])
            snprintf(why, cap, "out of memory");
        return false;
    }
    f->count++;
    return true;
}

/* The regular files of a pass folder, in name order: names[i] (malloc'd, the
 * caller's; free with s_names_free) and their paths under `dir`. */
static bool s_list_pass(const char *dir, char **names, size_t *n_p, char *why, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, cap, "cannot read %s: %s", dir, strerror(errno));
        return false;
    }
    size_t n = 0;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 0 || (size_t) len >= sizeof path || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == MAX_PASS_FILES || !(names[n] = strdup(e->d_name))) {
            snprintf(why, cap, "%s: more than %d files, or out of memory", dir, MAX_PASS_FILES);
            ok = false;
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, s_name_order);
    *n_p = n;
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        *n_p = 0;
    }
    return ok;
}

/* Reads every regular file in the pass folder; `budget` bounds their sum so
 * the PassOutput stays under the message limit. */
static bool s_collect(const char *dir, size_t max_file, size_t budget, pass_files_t *out, char *why, size_t cap)
{
    char *names[MAX_PASS_FILES];
    size_t n = 0;
    bool ok = s_list_pass(dir, names, &n, why, cap);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (ok && s_pass_files_add(out, names[i], path, max_file, why, cap)) {
            total += out->len[out->count - 1];
            if (total > budget) {
                snprintf(why, cap, "the pass's files hold %zu bytes, over the %zu-byte message budget", total, budget);
                ok = false;
            }
        } else {
            ok = false;
        }
        free(names[i]);
    }
    if (!ok)
        s_pass_files_free(out);
    return ok;
}

/* The profiler a job gets: the one it asked for, else the first of its
 * language's (common/profiler.h; every profiler for a job without one) that
 * this collector has. */
static const char *s_profiler_path(const collector_info_t *info, Profeed__Profiler p)
{
    for (size_t i = 0; i < profiler_count() && i < PROFILER_MAX; i++) {
        if (profiler_at(i)->id == p)
            return info->profiler_paths[i][0] ? info->profiler_paths[i] : NULL;
    }
    return NULL;
}

static Profeed__Profiler s_pick_profiler(const collector_info_t *info, const Profeed__JobRequest *req)
{
    if (req->has_profiler && req->profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED)
        return req->profiler;
    const profiler_t *order[PROFILER_MAX];
    size_t n = profiler_for_language(req->language, order, PROFILER_MAX);
    for (size_t i = 0; n == 0 && i < profiler_count() && i < PROFILER_MAX; i++)
        order[n++] = profiler_at(i); /* no language (a command job): the table's order */
    for (size_t i = 0; i < n && i < PROFILER_MAX; i++) {
        if (s_profiler_path(info, order[i]->id))
            return order[i]->id;
    }
    return PROFEED__PROFILER__PROFILER_UNSPECIFIED;
}

static const char *s_metadata_extra(const Profeed__JobRequest *req, const char *key)
{
    for (size_t i = 0; req->metadata && i < req->metadata->n_extra; i++) {
        if (strcmp(req->metadata->extra[i]->key, key) == 0)
            return req->metadata->extra[i]->value;
    }
    return NULL;
}

/* Writes a kernel + problem job's two files and its wrapper into `dir`;
 * fills `argv` (python, wrapper) and `wrapper_path` (its storage). */
static bool s_prepare_kernel_job(const collector_info_t *info, const Profeed__JobRequest *req, const char *dir,
                                 char *wrapper_path, size_t cap, char *why, size_t why_cap)
{
    const Profeed__File *files[2] = {req->kernel->kernel_file, req->kernel->problem_file};
    char *sources[2] = {NULL, NULL};
    bool ok = true;
    for (size_t i = 0; ok && i < 2; i++) {
        /* The wrapper imports them from its own folder: no subfolders. */
        if (strchr(files[i]->name, '/')) {
            snprintf(why, why_cap, "kernel job file \"%.128s\": give a plain file name, without folders",
                     files[i]->name);
            ok = false;
            break;
        }
        char path[4096];
        int plen = snprintf(path, sizeof path, "%s/%s", dir, files[i]->name);
        if (plen < 0 || (size_t) plen >= sizeof path) {
            snprintf(why, why_cap, "kernel job file \"%.128s\": the path is too long", files[i]->name);
            ok = false;
            break;
        }
        size_t len = files[i]->has_content ? files[i]->content.len : 0;
        ok = s_write_file(path, files[i]->content.data, len, why, why_cap);
        sources[i] = ok ? malloc(len + 1) : NULL;
        if (ok && !sources[i]) {
            snprintf(why, why_cap, "out of memory");
            ok = false;
        }
        if (ok) {
            if (len)
                memcpy(sources[i], files[i]->content.data, len);
            sources[i][len] = '\0';
        }
    }
    char *program = NULL;
    if (ok) {
        wrapper_params_t params = {
            .kernel_file = files[0]->name,
            .problem_file = files[1]->name,
            .call = wrapper_detect(sources[0], sources[1]),
            .warmup = WRAPPER_WARMUP,
            .nvtx_range = WRAPPER_NVTX_RANGE,
        };
        const char *forced = s_metadata_extra(req, "wrapper");
        if (forced && wrapper_case_parse(forced, &params.call) != 0) {
            snprintf(why, why_cap, "metadata wrapper=\"%.64s\": use plain, model or init_inputs", forced);
            ok = false;
        }
        pf_error_t err;
        program = ok ? wrapper_render(wrapper_template, wrapper_template_len, &params, &err) : NULL;
        if (ok && !program) {
            snprintf(why, why_cap, "%s", err.msg);
            ok = false;
        }
        if (ok) {
            pf_log_info(LOG, "job %s: wrapper calls kernel_function the %s way", req->job_id,
                        wrapper_case_name(params.call));
        }
    }
    if (ok) {
        int wlen = snprintf(wrapper_path, cap, "%s/profeed_wrapper.py", dir);
        ok = wlen > 0 && (size_t) wlen < cap;
        if (!ok)
            snprintf(why, why_cap, "the job folder's path is too long");
        ok = ok && s_write_file(wrapper_path, program, strlen(program), why, why_cap);
    }
    (void) info;
    free(program);
    free(sources[0]);
    free(sources[1]);
    return ok;
}

/* Runs one step; returns false (with `why`) only when it could not start. */
static bool s_run_step(job_run_t *run, const pass_plan_t *plan, const pass_plan_pass_t *pp, const pass_step_t *step,
                       const char *cwd, uint32_t timeout_s, proc_result_t *result, char *why, size_t cap)
{
    const collector_config_t *config = run->info->config;
    /* A step whose stdout is a report (ncu --import --csv) writes it to its
     * file directly: it may be hundreds of MB, which the pass then streams
     * (issue 20); the job's file size limit bounds it. */
    char out_path[4096];
    if (step->stdout_name)
        snprintf(out_path, sizeof out_path, "%s/%s", pp->dir, step->stdout_name);
    proc_spec_t spec = {
        .argv = step->argv,
        .cwd = cwd,
        .timeout_ms = (int) (timeout_s > 2000000 ? 2000000000 : timeout_s * 1000),
        .max_output = config->max_output,
        .stdout_path = step->stdout_name ? out_path : NULL,
        .cancel_fd = run->cancel[0],
        .env = pass_plan_env(plan),
    };
    sandbox_apply(run->info->sandbox, &spec);
    pf_error_t err;
    if (proc_run(&spec, result, &err) != PF_OK) {
        snprintf(why, cap, "pass %s: %s", pp->key, err.msg);
        return false;
    }
    return true;
}

/* Empties a pass folder before an attempt, so a retry sends only its own files. */
static void s_reset_dir(const sandbox_t *sandbox, const char *dir)
{
    s_remove_tree(dir, 0);
    mkdir(dir, 0755);
    sandbox_own(sandbox, dir);
}

typedef struct {
    int exit_status;
    bool timed_out, truncated;
    pass_result_t verdict;
    int64_t duration_ms;
    uint32_t attempts;
    char stderr_tail[PROC_STDERR_TAIL + 1];
    char failed_log[4096];    /* a failed step's log outside the pass folder, to send */
} pass_run_t;

/* Runs a pass's steps, retrying transient failures of the whole pass with a
 * doubling back-off. False when cancelled or a step could not start (`why`). */
static bool s_run_pass(job_run_t *run, const pass_plan_t *plan, const pass_plan_pass_t *pp, const char *cwd,
                       uint32_t timeout_s, pass_run_t *out, char *why, size_t cap)
{
    const collector_config_t *config = run->info->config;
    int backoff = config->retry_backoff_ms;
    uint32_t attempts = config->attempts ? config->attempts : 1;
    for (uint32_t attempt = 1; attempt <= attempts; attempt++) {
        memset(out, 0, sizeof *out);
        out->attempts = attempt;
        s_reset_dir(run->info->sandbox, pp->dir);
        for (size_t s = 0; s < pp->step_count; s++) {
            const pass_step_t *step = &pp->steps[s];
            proc_result_t result;
            if (!s_run_step(run, plan, pp, step, cwd, timeout_s, &result, why, cap))
                return false;
            if (result.cancelled) {
                free(result.output);
                return false;
            }
            out->duration_ms += result.duration_ms;
            out->exit_status = result.exit_status;
            out->timed_out = result.timed_out;
            out->truncated = result.truncated;
            if (result.limit_hit)
                snprintf(out->stderr_tail, sizeof out->stderr_tail,
                         "%.3900s%sprofeed: the collector stopped the run: it reached %.40s", result.stderr_tail,
                         result.stderr_tail[0] ? "\n" : "", result.limit_hit);
            else
                snprintf(out->stderr_tail, sizeof out->stderr_tail, "%s", result.stderr_tail);
            /* The verdict reads the profiler's log: ncu writes its ==ERROR==
             * lines there, not to stderr. */
            char log_path[4096];
            if (step->log_path)
                snprintf(log_path, sizeof log_path, "%s", step->log_path);
            else
                snprintf(log_path, sizeof log_path, "%s/%s.csv", pp->dir, pp->key);
            uint8_t *log = NULL;
            size_t log_len = 0;
            char ignore[256];
            if (!s_read_file(log_path, config->max_output, &log, &log_len, ignore, sizeof ignore)) {
                log = NULL;
                log_len = 0;
            }
            out->verdict = pass_plan_judge(result.exit_status, result.timed_out, (const char *) log, log_len,
                                           result.stderr_tail);
            if (out->verdict == PASS_RESULT_TRANSIENT && result.output && !step->stdout_name &&
                pass_plan_is_permission_error(result.output, result.output_len))
                out->verdict = PASS_RESULT_PERMISSION;
            free(log);
            free(result.output);
            if (out->verdict != PASS_RESULT_OK) {
                if (step->log_path)
                    snprintf(out->failed_log, sizeof out->failed_log, "%s", step->log_path);
                break;
            }
        }
        if (out->verdict != PASS_RESULT_TRANSIENT || attempt == attempts)
            break;
        pf_log_warn(LOG, "job %s: pass %s attempt %u of %u: %s (exit %d%s); retrying in %d ms", run->job_id, pp->key,
                    (unsigned) attempt, (unsigned) attempts, pass_result_name(out->verdict), out->exit_status,
                    out->timed_out ? ", timed out" : "", backoff);
        if (!s_sleep(run, backoff))
            return false;
        if (backoff < 600000)
            backoff *= 2;
    }
    return true;
}

static void s_run_real(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    char why[1024] = "";
    Profeed__Profiler profiler = s_pick_profiler(info, req);
    const char *profiler_path = s_profiler_path(info, profiler);
    if (!profiler_path) {
        s_job_error(pipe, "this collector has no profiler for the job (it offers what its Ready listed)");
        return;
    }
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/profeed-%s-a%u-XXXXXX", info->job_root, run->job_id, (unsigned) run->attempt);
    if (n < 0 || (size_t) n >= sizeof dir || !mkdtemp(dir)) {
        snprintf(why, sizeof why, "cannot make a job folder under %.900s: %s", info->job_root, strerror(errno));
        s_job_error(pipe, why);
        return;
    }
    sandbox_own(info->sandbox, dir);
    char *wrapper_argv[3] = {(char *) info->python_path, NULL, NULL};
    char wrapper_path[4096];
    char *const *command = NULL;
    size_t command_len = 0;
    char **checked = NULL;  /* a command job's argv, its program as checked */
    char program[4096];
    const char *cwd = config->workdir;
    Profeed__ProfileFilter filter;
    const Profeed__ProfileFilter *use_filter = req->filter;
    pass_plan_t *plan = NULL;
    if (req->target_case == PROFEED__JOB_REQUEST__TARGET_KERNEL) {
        if (!info->python_path[0]) {
            s_job_error(pipe, "kernel + problem jobs need python3 (with torch) on the collector's PATH, or --python");
            goto cleanup;
        }
        if (!s_prepare_kernel_job(info, req, dir, wrapper_path, sizeof wrapper_path, why, sizeof why)) {
            s_job_error(pipe, why);
            goto cleanup;
        }
        wrapper_argv[1] = wrapper_path;
        command = wrapper_argv;
        command_len = 2;
        cwd = dir;
        /* Profile only the measured launch, not the warm-up or input setup. */
        if (!use_filter || !use_filter->nvtx_range) {
            if (use_filter)
                filter = *use_filter;
            else
                profeed__profile_filter__init(&filter);
            filter.nvtx_range = WRAPPER_NVTX_RANGE "/";
            use_filter = &filter;
        }
    } else {
        command_len = req->command->n_argv;
        /* The program runs by the path the allowlist checked (argv[0]
         * replaced), so that neither the profiler's PATH lookup nor a link
         * swapped in since can run another one. */
        checked = calloc(command_len + 1, sizeof *checked);
        if (!checked) {
            s_job_error(pipe, "out of memory");
            goto cleanup;
        }
        if (!sandbox_allows(info->sandbox, req->command->argv[0], cwd, program, sizeof program, why, sizeof why)) {
            s_job_error(pipe, why);
            goto cleanup;
        }
        checked[0] = program;
        for (size_t i = 1; i < command_len; i++)
            checked[i] = req->command->argv[i];
        command = checked;
    }
    pass_plan_input_t input = {
        .language = req->language,
        .profiler = profiler,
        .profiler_path = profiler_path,
        .dir = dir,
        .command = command,
        .command_len = command_len,
        .passes = req->passes,
        .n_passes = req->n_passes,
        .filter = use_filter,
        .sudo = info->sudo,
        .source = req->has_source && req->source,
    };
    pf_error_t err;
    plan = pass_plan_new(&input, &err);
    if (!plan) {
        s_job_error(pipe, err.msg);
        goto cleanup;
    }
    s_send_plan(pipe, run, (uint32_t) pass_plan_count(plan), config->max_msg);
    uint32_t timeout_s = req->has_timeout_s ? req->timeout_s : config->pass_timeout_s;
    for (size_t i = 0; i < pass_plan_count(plan); i++) {
        const pass_plan_pass_t *pp = pass_plan_pass(plan, i);
        pass_run_t pr;
        if (mkdir(pp->dir, 0755) != 0 && errno != EEXIST) {
            snprintf(why, sizeof why, "cannot make %s: %s", pp->dir, strerror(errno));
            s_job_error(pipe, why);
            goto cleanup;
        }
        sandbox_own(info->sandbox, pp->dir);
        if (!s_run_pass(run, plan, pp, cwd, timeout_s, &pr, why, sizeof why)) {
            if (!atomic_load(&run->cancelled))
                s_job_error(pipe, why);
            goto cleanup;
        }
        if (pr.verdict == PASS_RESULT_PERMISSION)
            pf_log_error(LOG, "job %s: pass %s: %s", run->job_id, pp->key, pass_plan_permission_advice());
        pass_files_t files = {0};
        /* A pass bigger than one chunk is streamed (issue 20): its files
         * are read a chunk at a time, so max-output-mb does not bound it. */
        char *snames[MAX_PASS_FILES + 1], *spaths[MAX_PASS_FILES + 1];
        size_t sn = 0;
        bool stream = run->chunk_bytes && s_list_pass(pp->dir, snames, &sn, why, sizeof why);
        bool paths_ok = true;
        for (size_t f = 0; stream && f < sn; f++) {
            spaths[f] = malloc(4096);
            if (spaths[f])
                snprintf(spaths[f], 4096, "%s/%s", pp->dir, snames[f]);
            paths_ok = paths_ok && spaths[f];
        }
        /* Out of memory for the paths: the pass goes whole, as it did before. */
        stream = stream && paths_ok && s_should_stream(run, spaths, sn);
        if (!stream) {
            for (size_t f = 0; f < sn; f++) {
                free(snames[f]);
                free(spaths[f]);
            }
            sn = 0;
        }
        size_t budget = config->max_msg > ((size_t) 1 << 20) ? config->max_msg - ((size_t) 1 << 20) : config->max_msg / 2;
        if (!stream && !s_collect(pp->dir, config->max_output, budget, &files, why, sizeof why)) {
            s_job_error(pipe, why);
            goto cleanup;
        }
        if (pr.failed_log[0] && access(pr.failed_log, R_OK) == 0) { /* banned-ok: no log is no warning */
            char name[64];
            snprintf(name, sizeof name, "%s.log", pp->key);
            if (stream) {
                snames[sn] = strdup(name);
                spaths[sn] = strdup(pr.failed_log);
                if (snames[sn] && spaths[sn]) {
                    sn++;
                } else {
                    free(snames[sn]);
                    free(spaths[sn]);
                }
            } else if (!s_pass_files_add(&files, name, pr.failed_log, config->max_output, why, sizeof why)) {
                pf_log_warn(LOG, "job %s: %s", run->job_id, why);
            }
        }
        char tail[PROC_STDERR_TAIL + 2048];
        snprintf(tail, sizeof tail, "%s%s%s%s%s", pr.stderr_tail,
                 pr.timed_out ? "\nprofeed: the pass ran past its time limit and was stopped" : "",
                 pr.truncated ? "\nprofeed: the output passed the size limit; the pass was stopped" : "",
                 pr.attempts > 1 ? "\nprofeed: the pass was retried after a transient failure" : "",
                 pr.verdict == PASS_RESULT_PERMISSION ? "\nprofeed: " : "");
        if (pr.verdict == PASS_RESULT_PERMISSION) {
            size_t used = strlen(tail);
            snprintf(tail + used, sizeof tail - used, "%s", pass_plan_permission_advice());
        }
        utf8_clean(tail, UTF8_CLEAN_CONTROLS); /* profilers print bytes; the wire wants UTF-8 */
        Profeed__File file_msgs[MAX_PASS_FILES + 1], *file_ptrs[MAX_PASS_FILES + 1];
        size_t nfiles = stream ? sn : files.count;
        for (size_t f = 0; f < nfiles; f++) {
            profeed__file__init(&file_msgs[f]);
            file_msgs[f].name = stream ? snames[f] : files.names[f];
            file_msgs[f].has_content = !stream; /* a stream's contents go in its chunks */
            file_msgs[f].content.data = stream ? NULL : files.data[f];
            file_msgs[f].content.len = stream ? 0 : files.len[f];
            file_ptrs[f] = &file_msgs[f];
        }
        Profeed__WorkerInfo worker;
        s_fill_worker(info, &worker);
        Profeed__PassOutput pass;
        profeed__pass_output__init(&pass);
        pass.job_id = run->job_id;
        pass.pass_key = (char *) pp->key;
        pass.has_profiler = 1;
        pass.profiler = profiler;
        pass.files = file_ptrs;
        pass.n_files = nfiles;
        pass.has_exit_status = 1;
        pass.exit_status = pr.exit_status;
        pass.stderr_tail = tail;
        pass.has_duration_ms = 1;
        pass.duration_ms = (uint64_t) pr.duration_ms;
        pass.worker = &worker;
        pass.requested_metrics = pp->metrics;
        pass.n_requested_metrics = pp->metric_count;
        pf_log_info(LOG, "job %s: pass %s (%s) %s in %lld ms, exit %d, %zu files", run->job_id, pp->key, pp->name,
                    pass_result_name(pr.verdict), (long long) pr.duration_ms, pr.exit_status, nfiles);
        int streamed = 0;
        if (stream)
            streamed = s_stream_pass(pipe, run, &pass, snames, spaths, sn);
        else
            s_send_pass(pipe, run, &pass, config->max_msg);
        s_pass_files_free(&files);
        for (size_t f = 0; f < sn; f++) {
            free(snames[f]);
            free(spaths[f]);
        }
        if (streamed != 0)
            goto cleanup; /* the stream stopped: s_stream_pass said why */
    }
cleanup:
    free(checked);
    pass_plan_destroy(&plan);
    if (!config->keep_job_dirs)
        s_remove_tree(dir, 0);
}

/* Runs one job on the calling slot thread; its messages go out on `pipe`. */
static void s_job_run(zsock_t *pipe, job_run_t *run)
{
    if (run->info->replay)
        s_run_replay(pipe, run, run->request);
    else
        s_run_real(pipe, run, run->request);
    pf_tsan_handed_over(run);
    zstr_send(pipe, "DONE");
}

/* A slot's thread: started at the slot's first job and kept, so a job costs a
 * message to a waiting thread rather than a thread and a socket pair of its
 * own (about 80 us here, a third of the collector's time per replayed job).
 * Runs each job it is handed ("RUN" + the job_run_t, which stays the loop's
 * until "DONE" comes back) until $TERM. */
static void s_slot_actor(zsock_t *pipe, void *args)
{
    (void) args;
    zsock_signal(pipe, 0);
    while (true) {
        char *command = NULL;
        void *run = NULL;
        if (zsock_recv(pipe, "sp", &command, &run) != 0 || !command || streq(command, "$TERM")) {
            zstr_free(&command);
            break;
        }
        bool is_run = streq(command, "RUN");
        zstr_free(&command);
        if (is_run && run) {
            pf_tsan_taken_over(run);
            s_job_run(pipe, run);
        }
    }
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
        self->threads[free_slot] = zactor_new(s_slot_actor, NULL);
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
                self->info.replay ? "replay" : "ncu");
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

/* Runs a host tool and returns what it printed (caller frees), or NULL. */
static char *s_tool_output(char **argv)
{
    proc_spec_t spec = {.argv = argv, .timeout_ms = 20000, .max_output = 65536, .cancel_fd = -1};
    proc_result_t r;
    pf_error_t err;
    if (proc_run(&spec, &r, &err) != PF_OK)
        return NULL;
    if (r.exit_status != 0) {
        free(r.output);
        return NULL;
    }
    return r.output;
}

/* GPUs from nvidia-smi: one kind per name, counted. */
static void s_discover_gpus(collector_info_t *info)
{
    char *argv[] = {"nvidia-smi", HOST_INFO_NVIDIA_SMI_QUERY, "--format=csv,noheader", NULL};
    char *text = s_tool_output(argv);
    if (!text)
        return;
    host_gpu_t gpus[MAX_GPU_KINDS * 8];
    size_t n = host_info_parse_nvidia_smi(text, gpus, sizeof gpus / sizeof gpus[0]);
    free(text);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (; k < info->gpu_count; k++) {
            if (streq(info->gpu_names[k], gpus[i].name)) {
                info->gpus[k].count++;
                break;
            }
        }
        if (k == info->gpu_count && k < MAX_GPU_KINDS) {
            /* Both fields are as long as their source fields. */
            memcpy(info->gpu_names[k], gpus[i].name, sizeof info->gpu_names[k]);
            memcpy(info->gpu_archs[k], gpus[i].arch, sizeof info->gpu_archs[k]);
            profeed__gpu_capability__init(&info->gpus[k]);
            info->gpus[k].name = info->gpu_names[k];
            info->gpus[k].arch = info->gpu_archs[k];
            info->gpus[k].has_count = 1;
            info->gpus[k].count = 1;
            info->gpu_count++;
        }
    }
    if (n > 0) {
        info->gpu = gpus[0];
        if (!host_info_cuda_sm_count(0, &info->gpu.sm_count))
            info->gpu.sm_count = 0;
        snprintf(info->compute_capability, sizeof info->compute_capability, "%s", gpus[0].compute_capability);
    }
}

static bool s_env_true(const char *name)
{
    const char *v = getenv(name);
    return v && (streq(v, "1") || streq(v, "yes") || streq(v, "true"));
}

/* Versions, the CPU, python for kernel jobs, the job folders, sudo. */
static void s_discover_tools(collector_info_t *info, const collector_config_t *config)
{
    const char *ncu = s_profiler_path(info, PROFEED__PROFILER__PROFILER_NCU);
    if (ncu) {
        char *argv[] = {(char *) ncu, "--version", NULL};
        char *text = s_tool_output(argv);
        if (text && !host_info_parse_ncu_version(text, info->profiler_version, sizeof info->profiler_version))
            pf_log_warn(LOG, "ncu --version printed no \"Version N\" line");
        free(text);
    }
    char *cpuinfo = NULL;
    size_t len = 0;
    char why[256];
    if (s_read_file("/proc/cpuinfo", 1 << 22, (uint8_t **) &cpuinfo, &len, why, sizeof why)) {
        char *text = realloc(cpuinfo, len + 1);
        if (text) {
            text[len] = '\0';
            host_info_parse_cpu_model(text, info->cpu_model, sizeof info->cpu_model);
            cpuinfo = text;
        }
        free(cpuinfo);
    }
    const char *python = config->python ? config->python : getenv("PROFEED_PYTHON");
    if (!proc_find(python ? python : "python3", info->python_path, sizeof info->python_path)) {
        info->python_path[0] = '\0';
        pf_log_warn(LOG, "%s not found: kernel + problem jobs will be refused", python ? python : "python3");
    }
    const char *root = config->job_root ? config->job_root : getenv("TMPDIR");
    snprintf(info->job_root, sizeof info->job_root, "%s", root && *root ? root : "/tmp");
    /* sudo is never the default: the operator opts in by flag or environment. */
    info->sudo = config->sudo || s_env_true("PROFEED_NCU_SUDO");
    if (info->sudo)
        pf_log_info(LOG, "profiling steps run through sudo -n -E (opted in)");
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
        s_discover_gpus(info);
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
        /* A profiler that is not installed is not offered, so the broker
         * never routes a job here that would fail for want of it. */
        for (size_t i = 0; i < profiler_count() && i < PROFILER_MAX; i++) {
            if (proc_find(profiler_at(i)->tool, info->profiler_paths[i], sizeof info->profiler_paths[i]))
                info->profilers[info->profiler_count++] = profiler_at(i)->id;
            else
                info->profiler_paths[i][0] = '\0';
        }
        if (info->profiler_count == 0) {
            pf_log_error(LOG, "no profiler this collector can run (%s) is on PATH; use --replay "
                              "MAP to serve recorded captures", profiler_names());
            return -1;
        }
        s_discover_tools(info, config);
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
    if (!self.runs || !self.threads || !self.poller || s_discover(&self) != 0 || s_connect(&self) != 0)
        goto cleanup;
    if (pipe) {
        zpoller_add(self.poller, pipe);
        zsock_signal(pipe, 0);
    }
    pf_log_info(LOG, "%s: %s on %s, %zu GPU kinds, %u slots, broker %s", self.info.worker_id,
                self.info.replay ? "replaying recorded captures" : "running ncu", self.info.host,
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
