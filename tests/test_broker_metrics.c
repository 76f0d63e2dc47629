/* broker_metrics: histogram buckets, status labels and the Prometheus text. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "broker_metrics.h"

Test(broker_metrics, observations_land_in_the_first_bucket_that_holds_them)
{
    metrics_histogram_t h = {0};
    broker_metrics_observe(&h, 0.001);  /* on a bound: that bucket (le is <=) */
    broker_metrics_observe(&h, 0.0011); /* just above: the next */
    broker_metrics_observe(&h, 1e6);    /* beyond every bound: +Inf */
    broker_metrics_observe(&h, -5);     /* clock went back: counted as 0 */
    broker_metrics_observe(&h, NAN);
    cr_expect_eq(h.counts[0], 3);
    cr_expect_eq(h.counts[1], 1);
    cr_expect_eq(h.counts[METRICS_BUCKETS], 1);
    cr_expect_eq(h.n, 5);
    cr_expect_float_eq(h.sum_s, 0.0021 + 1e6, 1e-6);
}

Test(broker_metrics, render_counts_gauges_and_cumulative_buckets)
{
    broker_metrics_t m;
    broker_metrics_init(&m);
    m.submitted = 3;
    m.rejected[METRICS_REJECT_DUPLICATE] = 2;
    m.bytes_in[METRICS_WORKERS] = 12345;
    broker_metrics_finished(&m, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, 0.02);
    broker_metrics_finished(&m, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_NO_KERNELS, 2);
    broker_metrics_finished(&m, (Profeed__FeedbackStatus) 999, 0.5); /* unknown: counted as unspecified */
    job_table_t *jobs = job_table_new();
    worker_pool_t *pool = worker_pool_new();
    cr_assert(jobs && pool);
    char *text = broker_metrics_render(&m, jobs, pool, 1500);
    cr_assert_not_null(text);
    const char *want[] = {
        "# TYPE profeed_broker_queue_depth gauge\nprofeed_broker_queue_depth 0\n",
        "profeed_broker_uptime_seconds 1.500\n",
        "profeed_broker_jobs{state=\"queued\"} 0\n",
        "profeed_broker_workers{role=\"collector\",state=\"idle\"} 0\n",
        "profeed_broker_jobs_submitted_total 3\n",
        "profeed_broker_jobs_finished_total{status=\"ok\"} 1\n",
        "profeed_broker_jobs_finished_total{status=\"no_kernels\"} 1\n",
        "profeed_broker_jobs_finished_total{status=\"unspecified\"} 1\n",
        "profeed_broker_jobs_finished_total{status=\"failed_after_retries\"} 0\n",
        "profeed_broker_rejected_total{reason=\"duplicate_job_id\"} 2\n",
        "profeed_broker_received_bytes_total{endpoint=\"workers\"} 12345\n",
        "profeed_broker_job_latency_seconds_bucket{le=\"0.01\"} 0\n",
        "profeed_broker_job_latency_seconds_bucket{le=\"0.05\"} 1\n",
        "profeed_broker_job_latency_seconds_bucket{le=\"1\"} 2\n",
        "profeed_broker_job_latency_seconds_bucket{le=\"5\"} 3\n",
        "profeed_broker_job_latency_seconds_bucket{le=\"+Inf\"} 3\n",
        "profeed_broker_job_latency_seconds_count 3\n",
        "# TYPE profeed_broker_pass_latency_seconds histogram\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_not_null(strstr(text, want[i]), "missing: %s\nin:\n%s", want[i], text);
    cr_expect_eq(text[strlen(text) - 1], '\n');
    free(text);
    job_table_destroy(&jobs);
    worker_pool_destroy(&pool);
}

Test(broker_metrics, reject_reasons_have_names)
{
    for (int r = 0; r < METRICS_REJECT_COUNT; r++)
        cr_expect_not_null(broker_metrics_reject_name((metrics_reject_t) r));
    cr_expect_str_eq(broker_metrics_reject_name(METRICS_REJECT_COUNT), "unknown");
}
