/* collector: the profeed-collector's event loop.
 *
 * Connects a DEALER to the broker's worker endpoint, announces its GPUs and
 * profilers with Ready, and runs each dispatched job in its own thread (a
 * zactor per job, up to `slots` at once) so the loop keeps heartbeating while
 * profilers run. A job's passes run one after another; each pass's output is
 * sent as soon as the pass ends, after a Progress that tells the broker how
 * many passes the job has. Two backends: real profilers on PATH (ncu, through
 * proc_run: fork + execve, timeout, process-group kill, output cap), or
 * `replay` of recorded captures (replay.h). If the broker falls silent for
 * heartbeat x liveness, the collector reconnects with a new socket, cancels
 * the jobs it was running (the broker requeues them when it sees the new
 * connection), and registers again. */
#ifndef COLLECTOR_H
#define COLLECTOR_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire_curve.h"

typedef struct {
    const char *broker_endpoint;  /* the broker's worker endpoint */
    const char *worker_id;        /* stable across reconnects; default "collector-<host>-<pid>" */
    const char *replay_map;       /* serve recorded captures from this map (replay.h); NULL = real profilers */
    const char *gpu;              /* "NAME:ARCH[:COUNT]": the GPU to advertise instead of nvidia-smi's */
    const char *workdir;          /* where commands run; NULL = the current directory */
    const char *job_root;         /* job folders (profiler output, kernel jobs' files) go below it;
                                     NULL = $TMPDIR, else /tmp */
    const char *python;           /* runs kernel + problem jobs' wrapper; NULL = python3 on PATH */
    uint32_t attempts;            /* per pass, counting the first: transient failures are retried */
    int retry_backoff_ms;         /* before the second attempt; doubles after each */
    bool sudo;                    /* run profiling steps through `sudo -n -E` (opt-in; also
                                     PROFEED_NCU_SUDO=1 in the environment) */
    bool keep_job_dirs;           /* leave job folders in place (debugging) */
    int heartbeat_ms;
    int liveness;
    uint32_t slots;               /* jobs at once */
    uint32_t pass_timeout_s;      /* per pass, when the job gives no timeout */
    size_t max_output;            /* bytes of profiler output kept per pass */
    int pass_delay_ms;            /* replay: how long each pass "runs" (demos, tests) */
    size_t max_msg;
    /* CURVE (docs/security.md): this worker's certificate (NAME.key_secret)
     * and the broker's public NAME.key; without them, plaintext, allowed
     * only to a broker on this machine unless `insecure`. */
    wire_curve_client_t curve;
    /* The sandbox (sandbox.h): programs a command job may run ("*": any),
     * the environment variables passed on ("*": all), limits per process
     * (0: none) and the user jobs run as when started as root. */
    const char *allow_programs;
    const char *keep_env;
    uint32_t cpu_limit_s;
    uint32_t file_limit_mb;
    uint32_t max_procs;
    uint32_t memory_limit_mb;
    const char *run_as;           /* a user name; "root" accepts running jobs as root;
                                     COLLECTOR_RUN_AS_SELF: whoever runs the collector */
} collector_config_t;

/* run-as value meaning "this process's own user" (no change, no warning). */
#define COLLECTOR_RUN_AS_SELF "."

/* The variables a job sees by default: what profilers, CUDA, Python and the
 * Intel runtimes need, and nothing else of the collector's environment. */
#define COLLECTOR_KEEP_ENV                                                                             \
    "PATH,HOME,USER,LOGNAME,LANG,LC_*,TZ,TMPDIR,TERM,LD_LIBRARY_PATH,CUDA_*,NVIDIA_*,NV_*,PYTHONPATH," \
    "PYTHONHOME,VIRTUAL_ENV,CONDA_PREFIX,TRITON_*,TORCH_*,SYCL_*,ONEAPI_*,ZE_*,OCL_*,INTEL_*,VTUNE_*"

void collector_config_default(collector_config_t *config);

/* Runs until interrupted (pipe NULL) or $TERM on `pipe` (signalled once
 * started). Returns 0, or -1 when it cannot start (no GPU or profiler to
 * offer, a bad replay map), logged. */
int collector_run(const collector_config_t *config, zsock_t *pipe);

/* zactor entry point: `args` is a collector_config_t that outlives the actor. */
void collector_actor(zsock_t *pipe, void *args);

/* Whether this host could profile for real: a profiler of the table is on
 * PATH for a GPU vendor whose GPUs discovery finds (discover.c's probes;
 * NVIDIA's today). `profeed submit --local` replays recorded captures
 * otherwise. */
bool discover_can_profile(void);

#endif
