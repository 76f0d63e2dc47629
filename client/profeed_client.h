/* libprofeed-client: what an agent links to get profiler feedback.
 *
 * Offline analysis (no farm): give it the files a profiler wrote for one job
 * (several files = several passes of one program) and get the feedback back
 * as LLM-ready text, JSON or Markdown. The farm calls (submit a job, wait for
 * its feedback) join this header with the broker. */
#ifndef PROFEED_CLIENT_H
#define PROFEED_CLIENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROFEED_VERSION "0.1.0"

/* Outcome of an analysis, also the `profeed analyze` exit code. */
typedef enum {
    PROFEED_OK = 0,             /* feedback produced (status ok or no kernels profiled) */
    PROFEED_ERROR = 1,          /* out of memory or another failure of ours */
    PROFEED_BAD_INPUT = 2,      /* an input file is unreadable or malformed */
    PROFEED_PROFILER_ERROR = 3, /* the profiler itself reported an error */
    PROFEED_UNAVAILABLE = 4,    /* farm: refused (no capable worker) or no answer in time */
    PROFEED_FAILED = 5,         /* farm: the job timed out or failed after its retries */
    PROFEED_INTERRUPTED = 130,  /* farm: a signal (Ctrl-C) stopped the wait; 128 + SIGINT, as shells say */
} profeed_result_t;

typedef enum { PROFEED_FORMAT_TEXT, PROFEED_FORMAT_JSON, PROFEED_FORMAT_MARKDOWN } profeed_format_t;

typedef struct {
    const char *profiler;   /* "ncu", "unitrace", "vtune" or "auto" (default: auto) */
    const char *language;   /* cuda, triton, pytorch, sycl, ocl: picks the profiler for "auto" */
    const char *gpu_arch;   /* with language: sm_90, Hopper, bmg, ... */
    profeed_format_t format;
    size_t top;             /* analyze at most this many kernels; 0 = no cap */
    double min_share;       /* analyze kernels above this share of time (default 0.05) */
    size_t max_chars;       /* text only, 0 or >= 200: keep the most important findings within this; 0 = all */
    const char *device;     /* GPU name when the capture does not say it, or NULL */
    const char *pci_id;     /* PCI device id, for rooflines of Intel GPUs, or NULL */
    const char *cpu_model;  /* CPU model (names integrated GPUs), or NULL */
    int with_collated;      /* JSON only: include the collated per-launch data */
    int all_segments;       /* unitrace: every benchmark window, not median + slowest */
    const char *const *reference_paths; /* files of the reference implementation's profile */
    size_t reference_count;
    /* min_share was chosen (not the default): kept strictly, even when no
     * kernel reaches it; with the default the busiest kernel is analyzed. */
    int min_share_given;
    size_t max_tokens;      /* text only, 0 or >= 64: as max_chars, in estimated tokens (token_estimate.h) */
    /* The files of the baseline's capture (an earlier round): the feedback
     * opens with the change since it (docs/baselines.md). */
    const char *const *baseline_paths;
    size_t baseline_count;
    /* Say "consider stopping" when every kernel that matters is within this
     * factor of its ceiling (>= 1; 0: the default, 1.15). */
    double stop_within;
} profeed_analyze_options_t;

/* Fills `options` with the defaults. */
void profeed_analyze_options_init(profeed_analyze_options_t *options);

/* Analyzes the files of one job (`"-"` is standard input). On return
 * `*output` holds the rendered feedback (also for a profiler error, which the
 * feedback describes), and `*error` a message naming the file, line and
 * problem when the result is not PROFEED_OK; both are the caller's to free()
 * and may be NULL. */
profeed_result_t profeed_analyze_files(const char *const *paths, size_t count,
                                       const profeed_analyze_options_t *options, char **output,
                                       char **error);

/* ---------------------------------------------------------------------
 * The farm: submit a job to a broker and wait for its feedback.
 *
 * A farm handle is one connection (a DEALER socket) to a broker's agent
 * endpoint. While it waits it heartbeats the broker; if the broker falls
 * silent (heartbeat_ms x liveness) it reconnects and submits the job again,
 * which is safe because the job id makes submission idempotent: a broker that
 * already ran the job answers with the same feedback. Not thread-safe: one
 * handle per thread. */
typedef struct profeed_farm_t profeed_farm_t;

/* Silent windows (heartbeat_ms x liveness each) a broker that answered once
 * is given to come back before a wait gives up on it. */
#define PROFEED_FARM_LOST_WINDOWS 10

typedef struct {
    const char *job_id;       /* NULL: a new random id (UUID) */
    const char *agent_id;     /* NULL: none */
    const char *language;     /* "cuda", "triton", "pytorch", "sycl" or "ocl" */
    const char *gpu_arch;     /* "sm_90"; NULL = any */
    const char *profiler;     /* "ncu", "unitrace", "vtune"; NULL = the collector picks */
    const char *const *argv;  /* the command to profile ... */
    size_t argc;
    unsigned timeout_s;       /* 0: the broker's default */
    /* ... or, when kernel_name is set (argv unused), a kernel + problem job
     * (KernelBench style): the kernel file defines kernel_function, the
     * problem file Model, get_inputs() and get_init_inputs(); the collector
     * runs them through its Python wrapper. Names are plain file names. */
    const char *kernel_name;
    const char *kernel_source;
    size_t kernel_len;
    const char *problem_name;
    const char *problem_source;
    size_t problem_len;
    const char *plan;         /* a named pass plan ("core", "sol", "full"); NULL: the collector's default */
    unsigned round;           /* the agent's optimisation round, kept in the feedback (0: none) */
    const char *kernel_regex; /* profile only kernels whose names match (ncu -k regex:); NULL: all */
    const char *nvtx_range;   /* only launches inside this NVTX range (ncu --nvtx-include); NULL: all */
    unsigned launch_skip;     /* launches to skip before profiling (0: none) */
    unsigned launch_count;    /* launches to profile (0: all) */
    /* The feedback's shape, as profeed_analyze_options_t's: the text within
     * max_chars (0: no limit, else >= 200; text format only), at most `top`
     * kernels (0: all), kernels of at least min_share of the time (0..1)
     * when min_share_given (0 is a valid share; without it, the analyzer's
     * 5%). The format argument of profeed_farm_run() picks text, Markdown
     * (carried in the feedback's text) or JSON. */
    size_t max_chars;
    unsigned top;
    double min_share;
    int min_share_given;
    size_t max_tokens;        /* as max_chars, in estimated tokens (0: no limit, else >= 64; text only) */
    int source;               /* ncu: add a source pass, so findings name their source lines */
    /* An earlier finished job of this agent to compare with (the feedback
     * opens with the change since it; docs/baselines.md); NULL: none. */
    const char *baseline_job_id;
    /* With the JSON format: the feedback's JSON also carries "collated", the
     * capture's per-launch values, as profeed_analyze_options_t's
     * with_collated (left out, with a note, past the analyzer's message
     * limit; docs/protocol.md). */
    int collated;
} profeed_job_t;

/* Called on every progress report: state is "queued", "collecting",
 * "analyzing", "requeued"; done/count are passes (count 0 = not known yet). */
typedef void(profeed_progress_fn)(const char *job_id, const char *state, unsigned done, unsigned count,
                                  void *arg);

/* How an agent proves who it is to the broker (CURVE; docs/security.md). */
typedef struct {
    const char *curve_secret; /* this agent's certificate: the NAME.key_secret file of `profeed keygen` */
    const char *broker_key;   /* the broker's public certificate (its NAME.key) */
    int insecure;             /* without a certificate: allow plaintext to a broker on another machine */
} profeed_security_t;

/* Connects to `endpoint` ("tcp://127.0.0.1:5555", "inproc://..."). 0 for
 * heartbeat_ms / liveness picks 1000 / 3. With `security` NULL (or without a
 * certificate) the connection is plaintext, which is refused to an endpoint
 * off this machine unless security->insecure. NULL on failure, with *error
 * (when `error` is not NULL; the caller frees it) saying why. */
profeed_farm_t *profeed_farm_open(const char *endpoint, int heartbeat_ms, int liveness,
                                  const profeed_security_t *security, char **error);

/* profeed_farm_open() without security (loopback, ipc, inproc endpoints). */
profeed_farm_t *profeed_farm_new(const char *endpoint, int heartbeat_ms, int liveness);
void profeed_farm_destroy(profeed_farm_t **self_p);

/* Called with a line for a person when the wait takes a turn the caller
 * should hear about even without progress: the broker stopped answering and
 * the job is submitted again, or the farm is busy and asked to retry later. */
typedef void(profeed_notice_fn)(const char *message, void *arg);

/* Sets (or, with NULL, clears) the handle's notice callback. */
void profeed_farm_set_notice(profeed_farm_t *self, profeed_notice_fn *notice, void *arg);

/* Feedbacks that reached this handle for a job it was not waiting for: a
 * second delivery of an earlier job's (delivery between processes is at
 * least once; the library returns one feedback per job and drops these). */
size_t profeed_farm_stray_feedbacks(const profeed_farm_t *self);

/* Submits `job` and waits up to `wait_ms` (0 = until the job ends: the
 * broker finishes every job within its time limit) for its feedback.
 * The broker must answer within heartbeat_ms x liveness (3 s by default) of
 * the submission, or the call returns PROFEED_UNAVAILABLE with "no answer
 * from the broker at ...". A broker that answered and then falls silent is
 * reconnected to and sent the job again (the notice callback hears of it)
 * for up to PROFEED_FARM_LOST_WINDOWS such windows (30 s by default); then
 * the call gives up with PROFEED_UNAVAILABLE saying since when it is silent.
 * `format` picks what *output gets: PROFEED_FORMAT_TEXT (the LLM-ready text),
 * PROFEED_FORMAT_MARKDOWN (the analyzer renders Markdown instead) or
 * PROFEED_FORMAT_JSON (the JSON document). Returns PROFEED_OK (feedback, also "no kernels"),
 * PROFEED_PROFILER_ERROR, PROFEED_BAD_INPUT, PROFEED_FAILED (timed out, or
 * failed after retries: the feedback says why), or PROFEED_UNAVAILABLE
 * (refused or no answer: *error says why). *output and *error are the
 * caller's to free() and may be NULL; `job_id_out` (may be NULL, 129 bytes)
 * receives the job id. `progress` (may be NULL) is called with each progress
 * report; with NULL, the broker is asked to send none for this job. */
profeed_result_t profeed_farm_run(profeed_farm_t *self, const profeed_job_t *job, int wait_ms,
                                  profeed_format_t format, profeed_progress_fn *progress, void *arg,
                                  char **output, char **error, char *job_id_out);

/* A farm job behind an opaque handle: the stable-ABI way to describe a job,
 * for callers that cannot follow profeed_job_t's layout as it grows (other
 * languages' FFIs, agents built against an older header). A new job field is
 * a new key here, never a new struct member.
 *
 *     profeed_farm_job_t *job = profeed_farm_job_new();
 *     profeed_farm_job_set(job, "language", "cuda");
 *     profeed_farm_job_add_arg(job, "./bench");
 *     rc = profeed_farm_job_run(farm, job, 120000, PROFEED_FORMAT_TEXT, NULL, NULL, &out, &err, id);
 *     profeed_farm_job_destroy(&job);
 *
 * The job copies what it is given. Not thread-safe; a job may be run more
 * than once (with its job_id set, a second run is answered from the first). */
typedef struct profeed_farm_job_t profeed_farm_job_t;

/* A job with every key unset (profeed_job_t zeroed); NULL when memory ran out. */
profeed_farm_job_t *profeed_farm_job_new(void);
void profeed_farm_job_destroy(profeed_farm_job_t **self_p);

/* Sets one of profeed_job_t's fields by its name; NULL or "" restores its
 * default. Keys: job_id, agent_id, language, gpu_arch, profiler, plan,
 * kernel_regex, nvtx_range, baseline_job_id (strings); timeout_s, round,
 * launch_skip, launch_count, top, max_chars, max_tokens (whole numbers);
 * min_share (0..1); source, collated (0, 1, false or true). The run checks
 * what depends on other keys or on the format (language names, max_chars).
 * PROFEED_BAD_INPUT for an unknown key or a value it does not take, with
 * profeed_farm_job_error() naming both. */
profeed_result_t profeed_farm_job_set(profeed_farm_job_t *self, const char *key, const char *value);

/* Appends one word of the command to profile (at most 1024 words). */
profeed_result_t profeed_farm_job_add_arg(profeed_farm_job_t *self, const char *arg);

/* A kernel + problem job (KernelBench style; profeed_job_t's kernel_* and
 * problem_*): `role` "kernel" or "problem", a plain file name, and its
 * bytes (copied; together under the farm's 64 MiB message). */
profeed_result_t profeed_farm_job_set_file(profeed_farm_job_t *self, const char *role, const char *name,
                                           const void *bytes, size_t len);

/* Why the last set or add on this job failed; "" when none did (a run
 * says why in its *error). */
const char *profeed_farm_job_error(const profeed_farm_job_t *self);

/* profeed_farm_run() with the job set by keys: the same wait, results and
 * outputs. */
profeed_result_t profeed_farm_job_run(profeed_farm_t *farm, profeed_farm_job_t *job, int wait_ms,
                                      profeed_format_t format, profeed_progress_fn *progress, void *arg,
                                      char **output, char **error, char *job_id_out);

/* Asks the broker what it is doing: workers, queue depth, jobs in flight.
 * *output gets text, or JSON with `json`. PROFEED_UNAVAILABLE when no answer
 * came within wait_ms. */
profeed_result_t profeed_farm_status(profeed_farm_t *self, int wait_ms, int json, char **output,
                                     char **error);

#ifdef __cplusplus
}
#endif

#endif
