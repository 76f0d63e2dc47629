#include "broker_metrics.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"

/* Jobs take from milliseconds (replay) to minutes (multi-pass profiler runs). */
static const double s_bounds[METRICS_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};

static const char *s_reject_names[METRICS_REJECT_COUNT] = {
    [METRICS_REJECT_MALFORMED] = "malformed",
    [METRICS_REJECT_VERSION] = "version_mismatch",
    [METRICS_REJECT_UNEXPECTED] = "unexpected_body",
    [METRICS_REJECT_UNREGISTERED] = "unregistered",
    [METRICS_REJECT_BAD_REQUEST] = "bad_request",
    [METRICS_REJECT_NO_WORKER] = "no_capable_worker",
    [METRICS_REJECT_DUPLICATE] = "duplicate_job_id",
    [METRICS_REJECT_UNKNOWN_JOB] = "unknown_job",
    [METRICS_REJECT_OVERLOADED] = "overloaded",
};

static const char *s_endpoint_names[METRICS_ENDPOINT_COUNT] = {"agents", "workers"};

void broker_metrics_init(broker_metrics_t *self)
{
    assert(self);
    memset(self, 0, sizeof *self);
}

void broker_metrics_observe(metrics_histogram_t *h, double seconds)
{
    assert(h);
    if (!(seconds > 0))
        seconds = 0; /* also NaN */
    size_t i = 0;
    while (i < METRICS_BUCKETS && seconds > s_bounds[i])
        i++;
    h->counts[i]++;
    h->n++;
    h->sum_s += seconds;
}

void broker_metrics_finished(broker_metrics_t *self, Profeed__FeedbackStatus status, double seconds)
{
    assert(self);
    size_t i = (size_t) status < METRICS_STATUS_MAX ? (size_t) status : 0;
    self->finished[i]++;
    broker_metrics_observe(&self->job_latency, seconds);
}

const char *broker_metrics_reject_name(metrics_reject_t reason)
{
    return (size_t) reason < METRICS_REJECT_COUNT ? s_reject_names[reason] : "unknown";
}

/* ------------------------------------------------------------------------
 * Rendering */

static void s_header(textbuf_t *t, const char *name, const char *type, const char *help)
{
    textbuf_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void s_histogram(textbuf_t *t, const char *name, const char *help, const metrics_histogram_t *h)
{
    s_header(t, name, "histogram", help);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < METRICS_BUCKETS; i++) {
        cumulative += h->counts[i];
        textbuf_printf(t, "%s_bucket{le=\"%g\"} %llu\n", name, s_bounds[i], (unsigned long long) cumulative);
    }
    textbuf_printf(t, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long) h->n);
    textbuf_printf(t, "%s_sum %.6f\n%s_count %llu\n", name, h->sum_s, name, (unsigned long long) h->n);
}

/* "FEEDBACK_STATUS_NO_KERNELS" -> "no_kernels" */
static void s_status_label(size_t status, char *buf, size_t cap)
{
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&profeed__feedback_status__descriptor, (int) status);
    const char *name = v ? v->name : "unspecified";
    const char *prefix = "FEEDBACK_STATUS_";
    if (strncmp(name, prefix, strlen(prefix)) == 0)
        name += strlen(prefix);
    size_t i = 0;
    for (; name[i] && i + 1 < cap; i++)
        buf[i] = (char) tolower((unsigned char) name[i]);
    buf[i] = '\0';
}

static void s_counter_by_endpoint(textbuf_t *t, const char *name, const char *help, const uint64_t *values)
{
    s_header(t, name, "counter", help);
    for (size_t e = 0; e < METRICS_ENDPOINT_COUNT; e++)
        textbuf_printf(t, "%s{endpoint=\"%s\"} %llu\n", name, s_endpoint_names[e], (unsigned long long) values[e]);
}

void broker_metrics_counters(const broker_metrics_t *self, int64_t uptime_ms, Profeed__FarmCounters *out,
                             metrics_counters_storage_t *storage)
{
    assert(self && out && storage);
    profeed__farm_counters__init(out);
    out->has_uptime_ms = out->has_submitted = out->has_attempts = out->has_requeued = 1;
    out->has_workers_lost = out->has_bytes_in = out->has_bytes_out = 1;
    out->uptime_ms = uptime_ms > 0 ? (uint64_t) uptime_ms : 0;
    out->submitted = self->submitted;
    out->attempts = self->attempts;
    out->requeued = self->requeued;
    out->workers_lost = self->workers_lost;
    out->bytes_in = self->bytes_in[METRICS_AGENTS] + self->bytes_in[METRICS_WORKERS];
    out->bytes_out = self->bytes_out[METRICS_AGENTS] + self->bytes_out[METRICS_WORKERS];
    if (self->job_latency.n) {
        out->has_job_latency_mean_s = 1;
        out->job_latency_mean_s = self->job_latency.sum_s / (double) self->job_latency.n;
    }
    size_t used = 0;
    for (size_t s = 0; s < METRICS_STATUS_MAX; s++) {
        if (!self->finished[s])
            continue;
        Profeed__NamedCount *n = &storage->counts[used++];
        profeed__named_count__init(n);
        s_status_label(s, storage->labels[s], sizeof storage->labels[s]);
        n->name = storage->labels[s];
        n->has_value = 1;
        n->value = self->finished[s];
        storage->finished[out->n_finished++] = n;
    }
    for (size_t r = 0; r < METRICS_REJECT_COUNT; r++) {
        if (!self->rejected[r])
            continue;
        Profeed__NamedCount *n = &storage->counts[used++];
        profeed__named_count__init(n);
        n->name = (char *) s_reject_names[r];
        n->has_value = 1;
        n->value = self->rejected[r];
        storage->rejected[out->n_rejected++] = n;
    }
    out->finished = storage->finished;
    out->rejected = storage->rejected;
}

char *broker_metrics_render(const broker_metrics_t *self, job_table_t *jobs, worker_pool_t *pool,
                            int64_t uptime_ms)
{
    assert(self && jobs && pool);
    textbuf_t t;
    textbuf_init(&t);

    s_header(&t, "profeed_broker_uptime_seconds", "gauge", "Seconds since the broker started.");
    textbuf_printf(&t, "profeed_broker_uptime_seconds %.3f\n", (double) uptime_ms / 1000.0);

    s_header(&t, "profeed_broker_queue_depth", "gauge", "Jobs waiting for a collector.");
    textbuf_printf(&t, "profeed_broker_queue_depth %zu\n", job_table_count(jobs, JOB_QUEUED));
    s_header(&t, "profeed_broker_jobs", "gauge", "Jobs the broker holds, by state (finished ones while retained).");
    for (job_state_t s = JOB_QUEUED; s <= JOB_FINISHED; s++)
        textbuf_printf(&t, "profeed_broker_jobs{state=\"%s\"} %zu\n", job_state_name(s), job_table_count(jobs, s));
    s_header(&t, "profeed_broker_retained_bytes", "gauge",
             "Bytes of job data held in memory: passes of unfinished jobs, feedback of finished ones.");
    textbuf_printf(&t, "profeed_broker_retained_bytes{kind=\"passes\"} %zu\n", job_table_pass_bytes(jobs));
    textbuf_printf(&t, "profeed_broker_retained_bytes{kind=\"feedback\"} %zu\n", job_table_feedback_bytes(jobs));

    size_t workers[2][2] = {{0}}; /* [collector?][busy?] */
    for (worker_t *w = worker_pool_first(pool); w; w = worker_pool_next(pool))
        workers[w->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR][w->busy > 0]++;
    s_header(&t, "profeed_broker_workers", "gauge", "Registered workers by role and state.");
    for (int c = 1; c >= 0; c--)
        for (int b = 0; b < 2; b++)
            textbuf_printf(&t, "profeed_broker_workers{role=\"%s\",state=\"%s\"} %zu\n", c ? "collector" : "analyzer",
                  b ? "busy" : "idle", workers[c][b]);

    s_header(&t, "profeed_broker_jobs_submitted_total", "counter", "New jobs accepted.");
    textbuf_printf(&t, "profeed_broker_jobs_submitted_total %llu\n", (unsigned long long) self->submitted);
    s_header(&t, "profeed_broker_jobs_finished_total", "counter", "Jobs finished, by feedback status.");
    for (size_t s = 0; s < METRICS_STATUS_MAX; s++) {
        char label[64];
        if (s != 0 && !protobuf_c_enum_descriptor_get_value(&profeed__feedback_status__descriptor, (int) s))
            continue;
        s_status_label(s, label, sizeof label);
        textbuf_printf(&t, "profeed_broker_jobs_finished_total{status=\"%s\"} %llu\n", label,
              (unsigned long long) self->finished[s]);
    }
    s_header(&t, "profeed_broker_attempts_total", "counter", "Collection attempts dispatched to collectors.");
    textbuf_printf(&t, "profeed_broker_attempts_total %llu\n", (unsigned long long) self->attempts);
    s_header(&t, "profeed_broker_attempts_requeued_total", "counter", "Attempts lost with their collector and requeued.");
    textbuf_printf(&t, "profeed_broker_attempts_requeued_total %llu\n", (unsigned long long) self->requeued);
    s_header(&t, "profeed_broker_workers_lost_total", "counter", "Workers dropped: silent, unreachable or replaced.");
    textbuf_printf(&t, "profeed_broker_workers_lost_total %llu\n", (unsigned long long) self->workers_lost);

    s_header(&t, "profeed_broker_rejected_total", "counter", "Messages refused, by reason.");
    for (size_t r = 0; r < METRICS_REJECT_COUNT; r++)
        textbuf_printf(&t, "profeed_broker_rejected_total{reason=\"%s\"} %llu\n", s_reject_names[r],
              (unsigned long long) self->rejected[r]);

    s_counter_by_endpoint(&t, "profeed_broker_received_bytes_total", "Message bytes received.", self->bytes_in);
    s_counter_by_endpoint(&t, "profeed_broker_sent_bytes_total", "Message bytes sent.", self->bytes_out);
    s_counter_by_endpoint(&t, "profeed_broker_received_messages_total", "Messages received.", self->messages_in);
    s_counter_by_endpoint(&t, "profeed_broker_sent_messages_total", "Messages sent.", self->messages_out);

    s_histogram(&t, "profeed_broker_job_latency_seconds", "From submission to feedback, finished jobs.",
                &self->job_latency);
    s_histogram(&t, "profeed_broker_pass_latency_seconds",
                "From the attempt's start (or its previous pass) to a pass output's arrival.", &self->pass_latency);
    return textbuf_take(&t); /* NULL when an append ran out of memory */
}
