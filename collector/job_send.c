/* job_send: a job thread's messages to the collector's loop. Each Envelope
 * is packed straight into the frame the loop forwards; a pass bigger than the
 * broker's chunk size goes as a credit-flow-controlled stream of chunks
 * (issue 20), the loop handing the broker's receipts over (job_run_t.acked). */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file_read.h"
#include "pass_chunk.h"
#include "pf_log.h"
#include "wire_zmq.h"

#define LOG "collector"

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

void job_fill_worker(const collector_info_t *info, Profeed__WorkerInfo *w)
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
bool job_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why, size_t cap)
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

const char *job_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Sends the job's plan size: the broker forwards it as progress and tells
 * the analyzer how many passes to wait for. */
void job_send_plan(zsock_t *pipe, const job_run_t *run, uint32_t count, size_t max_msg)
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

void job_send_pass(zsock_t *pipe, const job_run_t *run, Profeed__PassOutput *pass, size_t max_msg)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PASS_OUTPUT;
    env.pass_output = pass;
    s_send_env(pipe, &env, max_msg, run->job_id);
}

void job_send_error(zsock_t *pipe, const char *text)
{
    zstr_sendm(pipe, "ERROR");
    zstr_send(pipe, text);
}

/* Waits `ms` unless the job is cancelled first; false when cancelled. */
bool job_sleep(job_run_t *run, int ms)
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
int job_stream_pass(zsock_t *pipe, job_run_t *run, Profeed__PassOutput *head, char *const *names,
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
        job_send_error(pipe, why);
    free(buf);
    pass_chunk_codec_destroy(&codec);
    return rc;
}

/* Whether a pass of these files goes as chunks: the broker asked for them
 * and the files hold more than one chunk. */
bool job_should_stream(const job_run_t *run, char *const *paths, size_t n)
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
