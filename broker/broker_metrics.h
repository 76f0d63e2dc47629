/* broker_metrics: what the broker counts, and its Prometheus text rendering.
 *
 * Counters and latency histograms are kept here as events happen (the broker
 * calls broker_metrics_*); gauges (queue depth, jobs by state, workers by role
 * and state) are read from the job table and worker pool when the metrics are
 * rendered, so they can never drift from the truth. No I/O: broker_http.c
 * serves the text. Format: Prometheus text exposition 0.0.4. */
#ifndef BROKER_METRICS_H
#define BROKER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "job_table.h"
#include "profeed.pb-c.h"
#include "worker_pool.h"

/* Why a message was refused (label `reason` of profeed_broker_rejected_total). */
typedef enum {
    METRICS_REJECT_MALFORMED,      /* not a valid envelope: bad protobuf, frames, size */
    METRICS_REJECT_VERSION,        /* another protocol version */
    METRICS_REJECT_UNEXPECTED,     /* a body this endpoint does not take */
    METRICS_REJECT_UNREGISTERED,   /* a worker message before Ready */
    METRICS_REJECT_BAD_REQUEST,    /* a JobRequest that does not validate */
    METRICS_REJECT_NO_WORKER,      /* no collector could ever serve it */
    METRICS_REJECT_DUPLICATE,      /* job id reused for another request */
    METRICS_REJECT_UNKNOWN_JOB,    /* names a job the broker does not have */
    METRICS_REJECT_OVERLOADED,     /* out of memory */
    METRICS_REJECT_COUNT
} metrics_reject_t;

typedef enum { METRICS_AGENTS, METRICS_WORKERS, METRICS_ENDPOINT_COUNT } metrics_endpoint_t;

/* Latency buckets, seconds (upper bounds; +Inf is implied). */
#define METRICS_BUCKETS 12

typedef struct {
    uint64_t counts[METRICS_BUCKETS + 1]; /* per bucket, not cumulative; last is +Inf */
    uint64_t n;
    double sum_s;
} metrics_histogram_t;

#define METRICS_STATUS_MAX 16 /* FeedbackStatus values counted; others count as 0 */

typedef struct {
    uint64_t submitted;                                   /* new jobs */
    uint64_t finished[METRICS_STATUS_MAX];                /* by FeedbackStatus */
    uint64_t attempts;                                    /* collection attempts dispatched */
    uint64_t requeued;                                    /* attempts lost with their collector */
    uint64_t workers_lost;
    uint64_t rejected[METRICS_REJECT_COUNT];
    uint64_t bytes_in[METRICS_ENDPOINT_COUNT];
    uint64_t bytes_out[METRICS_ENDPOINT_COUNT];
    uint64_t messages_in[METRICS_ENDPOINT_COUNT];
    uint64_t messages_out[METRICS_ENDPOINT_COUNT];
    metrics_histogram_t job_latency;    /* submission -> feedback sent */
    metrics_histogram_t pass_latency;   /* attempt start or previous pass -> this pass in */
} broker_metrics_t;

void broker_metrics_init(broker_metrics_t *self);

/* Records one observation of `seconds` (negative counts as 0). */
void broker_metrics_observe(metrics_histogram_t *h, double seconds);

void broker_metrics_finished(broker_metrics_t *self, Profeed__FeedbackStatus status, double seconds);

const char *broker_metrics_reject_name(metrics_reject_t reason);

/* Fills `out` (initialised here) with the counters for FarmStatus. Names and
 * counts point into `storage`, which must outlive `out`; zero counts are left
 * out. */
#define METRICS_NAMED_MAX (METRICS_STATUS_MAX + METRICS_REJECT_COUNT)
typedef struct {
    Profeed__NamedCount counts[METRICS_NAMED_MAX];
    Profeed__NamedCount *finished[METRICS_STATUS_MAX];
    Profeed__NamedCount *rejected[METRICS_REJECT_COUNT];
    char labels[METRICS_STATUS_MAX][64];
} metrics_counters_storage_t;

void broker_metrics_counters(const broker_metrics_t *self, int64_t uptime_ms, Profeed__FarmCounters *out,
                             metrics_counters_storage_t *storage);

/* The metrics as Prometheus text, with gauges read from `jobs` and `pool`.
 * Returns a heap string the caller frees, or NULL when out of memory. */
char *broker_metrics_render(const broker_metrics_t *self, job_table_t *jobs, worker_pool_t *pool,
                            int64_t uptime_ms);

#endif
