/* worker: the profeed-analyzer's event loop.
 *
 * Connects a DEALER to the broker's worker endpoint and announces, with Ready,
 * the profilers this build analyzes. The broker pins every pass output of a
 * job to one analyzer; the worker keeps a job's passes until it has
 * `pass_count` of them for the newest attempt (a higher attempt number means
 * the job was collected again: older passes are dropped), then runs
 * analyzer_run() on their files as bytes and sends the Feedback (text, JSON
 * and the findings as data). Heartbeats and reconnection follow Paranoid
 * Pirate, as in the collector. Analysis runs in the loop's thread: a job's
 * analysis must take less than heartbeat x liveness, which holds for every
 * capture in tests/fixtures by a wide margin. */
#ifndef WORKER_H
#define WORKER_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire_curve.h"

typedef struct {
    const char *broker_endpoint;
    const char *worker_id;       /* default "analyzer-<host>-<pid>" */
    int heartbeat_ms;
    int liveness;
    uint32_t max_jobs;           /* jobs with passes held at once */
    size_t max_msg;
    /* Bytes one job's analysis may hold (its collated data, memory-mb): a
     * capture past it gets an error feedback naming the setting. 0: no bound. */
    size_t memory_limit;
    /* CURVE (docs/security.md): this worker's certificate (NAME.key_secret)
     * and the broker's public NAME.key; without them, plaintext, allowed
     * only to a broker on this machine unless `insecure`. */
    wire_curve_client_t curve;
} worker_config_t;

void worker_config_default(worker_config_t *config);

/* Runs until interrupted (pipe NULL) or $TERM on `pipe`. 0, or -1 when it
 * cannot start. */
int worker_run(const worker_config_t *config, zsock_t *pipe);

/* zactor entry point: `args` is a worker_config_t that outlives the actor. */
void worker_actor(zsock_t *pipe, void *args);

#endif
