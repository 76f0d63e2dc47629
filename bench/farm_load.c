/* farm_load: the agents of bench/pipeline.sh, and its analysis floor.
 *
 *     farm_load --endpoint EP [--agents N] [--jobs M] [--warmup W] [--arch A]
 *               [--latencies FILE] [--expect TEXT] -- PROGRAM ARGS...
 *     farm_load --analyze [--jobs M] FILE...
 *
 * Farm mode: N threads, each one agent with its own client-library handle
 * (libprofeed-client, profeed_farm_run(): one DEALER connection, as an LLM
 * agent would hold), each submitting W untimed jobs and then M timed jobs one
 * after another, each with a new job id. A job's latency is from the call to
 * its return with the feedback, on the agent's thread: the end-to-end time an
 * agent waits. Threads instead of `profeed submit` processes so that process
 * start (about 1 ms, as large as what is measured) is not in the numbers.
 *
 * Analyze mode: the same analysis as the farm's analyzer, in this one process,
 * on the files of one job (profeed_analyze_files(), JSON, as the farm renders
 * it): W untimed runs, then M timed. This is the analysis floor.
 *
 * Both print one line of key=value results (times in ms):
 *
 *     jobs=400 ok=400 failed=0 wall_s=1.92 jobs_per_s=208.3 p50_ms=9.41 p99_ms=14.02 mean_ms=9.50
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "cli_util.h"
#include "profeed_client.h"

#define PROG "farm_load"
#define MAX_AGENTS 256
#define MAX_JOBS 100000

typedef struct {
    const char *endpoint;
    const char *arch;
    const char *const *argv;
    size_t argc;
    long long jobs;
    long long warmup;
    int wait_s;
    const char *expect; /* every feedback must contain this, or the job counts as failed */
    int interval_ms;    /* each agent starts a job every interval_ms (0: back to back) */
} load_config_t;

typedef struct {
    const load_config_t *config;
    profeed_farm_t *farm; /* made on the main thread, used only by this agent's */
    int index;
    double *latency_ms; /* config->jobs of them */
    long long ok;
    long long failed;
    char first_error[512];
} agent_t;

static double s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double s_percentile(const double *sorted, size_t n, double p)
{
    size_t rank = (size_t) (p / 100.0 * (double) n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

/* One agent: its own handle (handles are not thread-safe), jobs in sequence. */
static void *s_agent(void *arg)
{
    agent_t *self = arg;
    const load_config_t *config = self->config;
    profeed_farm_t *farm = self->farm;
    profeed_job_t job = {
        .language = "cuda",
        .gpu_arch = config->arch,
        .argv = config->argv,
        .argc = config->argc,
    };
    double next = s_now_ms();
    for (long long i = 0; i < config->warmup + config->jobs; i++) {
        char *output = NULL, *error = NULL;
        if (config->interval_ms > 0) {
            /* A steady rate: wait for this job's slot unless late already. */
            double wait = next - s_now_ms();
            if (wait > 0) {
                struct timespec ts = {(time_t) (wait / 1000), (long) (fmod(wait, 1000) * 1e6)};
                nanosleep(&ts, NULL);
            }
            next += config->interval_ms;
        }
        double t0 = s_now_ms();
        profeed_result_t rc = profeed_farm_run(farm, &job, config->wait_s * 1000, PROFEED_FORMAT_TEXT, NULL, NULL,
                                               &output, &error, NULL);
        double dt = s_now_ms() - t0;
        bool good = rc == PROFEED_OK && output && *output;
        if (good && config->expect && !strstr(output, config->expect)) {
            good = false;
            if (!self->first_error[0])
                snprintf(self->first_error, sizeof self->first_error, "agent %d job %lld: the feedback lacks \"%s\"",
                         self->index, i, config->expect);
        }
        if (!good && !self->first_error[0])
            snprintf(self->first_error, sizeof self->first_error, "agent %d job %lld: result %d: %s", self->index,
                     i, (int) rc, error ? error : "no feedback text");
        if (i >= config->warmup) {
            self->latency_ms[i - config->warmup] = dt;
            if (good)
                self->ok++;
            else
                self->failed++;
        }
        free(output);
        free(error);
    }
    return NULL;
}

static void s_report(double *lat, size_t n, long long ok, long long failed, double wall_ms)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += lat[i];
    qsort(lat, n, sizeof *lat, s_cmp_double);
    printf("jobs=%zu ok=%lld failed=%lld wall_s=%.3f jobs_per_s=%.1f p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f\n", n, ok,
           failed, wall_ms / 1e3, (double) n / (wall_ms / 1e3), s_percentile(lat, n, 50), s_percentile(lat, n, 99),
           sum / (double) n);
}

static int s_write_latencies(const char *path, const double *lat, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s\n", PROG, path);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.3f\n", lat[i]);
    return fclose(f) == 0 ? 0 : -1;
}

static int s_run_farm(const load_config_t *config, int agents, const char *latency_path)
{
    size_t n = (size_t) agents * (size_t) config->jobs;
    double *lat = calloc(n, sizeof *lat);
    agent_t *agent = calloc((size_t) agents, sizeof *agent);
    pthread_t *threads = calloc((size_t) agents, sizeof *threads);
    int rc = 1, started = 0;
    if (!lat || !agent || !threads) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        goto cleanup;
    }
    /* The handles are made here, one after another: CZMQ initialises itself
     * on the first socket, and two threads doing that at once trip its
     * assertion (zsys_set_thread_name_prefix after sockets exist). */
    for (int i = 0; i < agents; i++) {
        agent[i].farm = profeed_farm_new(config->endpoint, 0, 0);
        if (!agent[i].farm) {
            fprintf(stderr, "%s: cannot connect to %s\n", PROG, config->endpoint);
            goto cleanup;
        }
    }
    double t0 = s_now_ms();
    for (; started < agents; started++) {
        agent[started].config = config;
        agent[started].index = started;
        agent[started].latency_ms = lat + (size_t) started * (size_t) config->jobs;
        if (pthread_create(&threads[started], NULL, s_agent, &agent[started]) != 0) {
            fprintf(stderr, "%s: cannot start agent thread %d\n", PROG, started);
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    /* Warm-up jobs are inside this wall time; with W small and M large they
     * are a small part of it, and they keep every agent busy from the start. */
    double wall = s_now_ms() - t0;
    if (started < agents)
        goto cleanup;
    long long ok = 0, failed = 0;
    for (int i = 0; i < agents; i++) {
        ok += agent[i].ok;
        failed += agent[i].failed;
        if (agent[i].first_error[0])
            fprintf(stderr, "%s: %s\n", PROG, agent[i].first_error);
    }
    if (latency_path && s_write_latencies(latency_path, lat, n) != 0)
        goto cleanup;
    s_report(lat, n, ok, failed, wall);
    size_t strays = 0;
    for (int i = 0; i < agents; i++)
        strays += profeed_farm_stray_feedbacks(agent[i].farm);
    /* Second deliveries that reached the agents (and were dropped there). */
    printf("strays=%zu\n", strays);
    rc = failed ? 1 : 0;
cleanup:
    for (int i = 0; agent && i < agents; i++)
        profeed_farm_destroy(&agent[i].farm);
    free(lat);
    free(agent);
    free(threads);
    return rc;
}

static int s_run_analyze(const char *const *paths, size_t count, long long jobs, long long warmup)
{
    double *lat = calloc((size_t) jobs, sizeof *lat);
    if (!lat)
        return 1;
    profeed_analyze_options_t options = {.profiler = "ncu", .format = PROFEED_FORMAT_JSON};
    long long ok = 0, failed = 0;
    double t0 = s_now_ms();
    for (long long i = 0; i < warmup + jobs; i++) {
        char *output = NULL, *error = NULL;
        double start = s_now_ms();
        profeed_result_t rc = profeed_analyze_files(paths, count, &options, &output, &error);
        double dt = s_now_ms() - start;
        if (rc != PROFEED_OK && !failed)
            fprintf(stderr, "%s: analyze: result %d: %s\n", PROG, (int) rc, error ? error : "");
        if (i >= warmup) {
            lat[i - warmup] = dt;
            if (rc == PROFEED_OK)
                ok++;
            else
                failed++;
        }
        free(output);
        free(error);
    }
    s_report(lat, (size_t) jobs, ok, failed, s_now_ms() - t0);
    free(lat);
    return failed ? 1 : 0;
}

static int s_usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: %s --endpoint EP [--agents N] [--jobs M] [--warmup W] [--arch A] [--wait-s S]\n"
            "                 [--latencies FILE] [--expect TEXT] [--interval-ms N] -- PROGRAM ARGS...\n"
            "       %s --analyze [--jobs M] [--warmup W] FILE...\n",
            PROG, PROG);
    return rc;
}

int main(int argc, char **argv)
{
    load_config_t config = {.arch = "sm_90", .jobs = 100, .warmup = 2, .wait_s = 60};
    long long agents = 1, wait_s = 60;
    bool analyze = false;
    const char *latency_path = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "--analyze") == 0) {
            analyze = true;
        } else if (strcmp(a, "--help") == 0) {
            return s_usage(0);
        } else if (strncmp(a, "--", 2) != 0) {
            break;
        } else if (!has_value) {
            return s_usage(2);
        } else if (strcmp(a, "--endpoint") == 0) {
            config.endpoint = argv[++i];
        } else if (strcmp(a, "--arch") == 0) {
            config.arch = argv[++i];
        } else if (strcmp(a, "--latencies") == 0) {
            latency_path = argv[++i];
        } else if (strcmp(a, "--expect") == 0) {
            config.expect = argv[++i];
        } else if (strcmp(a, "--interval-ms") == 0) {
            long long ms;
            if (!cli_parse_int(PROG, a, argv[++i], 0, 3600000, &ms))
                return 2;
            config.interval_ms = (int) ms;
        } else if (strcmp(a, "--agents") == 0) {
            if (!cli_parse_int(PROG, a, argv[++i], 1, MAX_AGENTS, &agents))
                return 2;
        } else if (strcmp(a, "--jobs") == 0) {
            if (!cli_parse_int(PROG, a, argv[++i], 1, MAX_JOBS, &config.jobs))
                return 2;
        } else if (strcmp(a, "--warmup") == 0) {
            if (!cli_parse_int(PROG, a, argv[++i], 0, MAX_JOBS, &config.warmup))
                return 2;
        } else if (strcmp(a, "--wait-s") == 0) {
            if (!cli_parse_int(PROG, a, argv[++i], 1, 86400, &wait_s))
                return 2;
        } else {
            return s_usage(2);
        }
    }
    config.wait_s = (int) wait_s;
    if (i >= argc)
        return s_usage(2);
    if (analyze)
        return s_run_analyze((const char *const *) argv + i, (size_t) (argc - i), config.jobs, config.warmup);
    if (!config.endpoint)
        return s_usage(2);
    config.argv = (const char *const *) argv + i;
    config.argc = (size_t) (argc - i);
    return s_run_farm(&config, (int) agents, latency_path);
}
