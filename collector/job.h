/* job: what the collector's files share about a job run. `collector_info_t`
 * is what discovery (discover.c) learned of this host, filled once before the
 * loop starts and read-only after; `job_run_t` is one running job, owned by
 * the loop (collector.c) and lent to its slot's thread (slot.c) from "RUN"
 * until "DONE". A job thread runs it through replay (job_replay.c) or real
 * profilers (job_real.c); both send through job_send.c. */
#ifndef COLLECTOR_JOB_H
#define COLLECTOR_JOB_H

#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "host_info.h"
#include "pass_chunk.h"
#include "profiler.h"
#include "replay.h"
#include "sandbox.h"
#include "wire.h"

#define MAX_GPU_KINDS 8

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
 * job_send.c: what a job thread sends the loop ("SEND" + a packed Envelope,
 * "ERROR" + text), passes whole or as chunks, and its cancellable waits */

void job_fill_worker(const collector_info_t *info, Profeed__WorkerInfo *w);
bool job_read_file(const char *path, size_t max, uint8_t **data, size_t *len, char *why, size_t cap);
const char *job_basename(const char *path);
void job_send_plan(zsock_t *pipe, const job_run_t *run, uint32_t count, size_t max_msg);
void job_send_pass(zsock_t *pipe, const job_run_t *run, Profeed__PassOutput *pass, size_t max_msg);
void job_send_error(zsock_t *pipe, const char *text);
bool job_sleep(job_run_t *run, int ms);
int job_stream_pass(zsock_t *pipe, job_run_t *run, Profeed__PassOutput *head, char *const *names,
                    char *const *paths, size_t n);
bool job_should_stream(const job_run_t *run, char *const *paths, size_t n);

/* job_replay.c: a job served from the replay map's recorded passes. */
void job_run_replay(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req);

/* job_real.c: a job run by a real profiler, in its own folder, through its
 * pass plan, each pass retried on a transient failure. */
void job_run_real(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req);

/* Whether a pass whose attempt `attempt` (from 1) of `attempts` ended in
 * `verdict` is run again: a transient failure only (a timeout, a death
 * without a word), while attempts are left; a failure the profiler explained
 * or a permission refusal would only happen again. */
bool job_pass_retries(pass_result_t verdict, uint32_t attempt, uint32_t attempts);
/* The wait before the attempt after one that waited `backoff_ms`: doubled,
 * until a wait reaches 10 minutes. */
int job_backoff_next(int backoff_ms);
/* A job's folder as mkdtemp() takes it: <root>/profeed-<job id>-a<attempt>-XXXXXX
 * (the job id is wire-checked: safe in a path). False when it does not fit. */
bool job_dir_template(char *out, size_t cap, const char *root, const char *job_id, uint32_t attempt);

/* slot.c: a slot's thread (zactor), running the jobs it is handed. */
void slot_actor(zsock_t *pipe, void *args);

/* discover.c: fills `info` (GPUs, profilers, tools, the replay map) for
 * `config`; -1 when there is nothing to offer, logged. */
int discover_host(collector_info_t *info, const collector_config_t *config);
/* Where profiler `p` is on this host; NULL when it is not. */
const char *discover_profiler_path(const collector_info_t *info, Profeed__Profiler p);

#endif
