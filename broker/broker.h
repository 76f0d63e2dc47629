/* broker: the profeed-broker's event loop.
 *
 * Two ROUTER sockets: agents connect to `agent_endpoint` (submit, heartbeat,
 * status), collectors and analyzers to `worker_endpoint` (Ready, Heartbeat,
 * Progress, PassOutput, Feedback, Error). Messages feed the job table
 * (job_table.h) and the worker pool (worker_pool.h); the loop sends what they
 * decide. Optionally a third socket serves Prometheus metrics over HTTP
 * (broker_http.h, broker_metrics.h). It runs as the process's main loop (pipe NULL: stops on SIGINT or
 * SIGTERM) or as a zactor for `profeed submit --local` (stops on $TERM). */
#ifndef BROKER_H
#define BROKER_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *agent_endpoint;   /* bound: "tcp://127.0.0.1:5555", "tcp://127.0.0.1:*", "inproc://..." */
    const char *worker_endpoint;
    const char *metrics_endpoint; /* Prometheus metrics over HTTP: "tcp://0.0.0.0:9556"; NULL or "": off */
    const char *endpoints_file;   /* when set, the bound endpoints are written there (for scripts) */
    int bind_retry_ms;            /* a busy TCP endpoint is tried again this long before giving up */
    int heartbeat_ms;             /* both ways; a peer silent for heartbeat_ms x liveness is dead */
    int liveness;
    uint32_t max_attempts;        /* collection attempts before a job fails */
    uint32_t default_timeout_s;   /* for jobs that give none */
    int64_t retain_ms;            /* finished jobs are remembered this long (idempotent resubmission) */
    uint32_t max_finished;        /* ... and at most this many: the oldest are forgotten first */
    size_t max_msg;               /* largest message accepted */
    int hwm;                      /* per-peer high-water mark, messages */
    const char *state_dir;        /* the journal's folder (journal.h); NULL or "": jobs live in memory only */
    bool journal_sync;            /* fdatasync the journal before acknowledging */
    size_t max_retained_bytes;    /* feedback finished jobs may hold; beyond it the oldest delivered go first */
    uint32_t max_queued;          /* jobs waiting for a collector; more are refused as busy */
    uint32_t max_agent_jobs;      /* unfinished jobs per agent; more are refused as busy */
    uint32_t chunk_bytes;         /* collectors that speak chunks stream passes bigger than this, in chunks of it */
    uint64_t max_capture_bytes;   /* raw bytes one job may stream; beyond it the job fails, naming the limit */
    /* The memory streams in flight may hold here: each up to a window of
     * chunks (PASS_CHUNK_WINDOW x chunk_bytes) in the queues to its analyzer.
     * A stream that would go over it waits (its job is dispatched again
     * later); at least one stream must fit. */
    uint64_t stream_memory_bytes;
    /* CURVE (docs/security.md): the broker's certificate (NAME.key_secret)
     * and the folders of public keys admitted per role. No certificate:
     * plaintext, allowed only on endpoints local to this machine unless
     * `insecure`. */
    const char *curve_secret;
    const char *agent_keys;
    const char *collector_keys;
    const char *analyzer_keys;
    const char *operator_keys;    /* with CURVE: agents whose status lists every job */
    bool insecure;
} broker_config_t;

void broker_config_default(broker_config_t *config);

/* Runs until interrupted (pipe NULL) or told $TERM on `pipe`. Returns 0, or
 * -1 when an endpoint could not be bound (logged; a busy TCP port is tried
 * again for bind_retry_ms first). With a pipe, the broker signals it once
 * bound (0) or failed (-1), as zactor wants. */
int broker_run(const broker_config_t *config, zsock_t *pipe);

/* zactor entry point: `args` is a broker_config_t that outlives the actor. */
void broker_actor(zsock_t *pipe, void *args);

#endif
