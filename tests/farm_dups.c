/* farm_dups: the client library's delivery against tests/dup_broker.c, which
 * delivers every Feedback twice and again per heartbeat (issue 15, defect 8).
 * Runs JOBS jobs one after another on one handle (its socket then holds the
 * duplicates of the job before) and checks that each call returns exactly
 * its own job's feedback. Prints "jobs=N own=N strays=S"; exits 1 when a call
 * returned another job's feedback or none.
 *
 *   farm_dups ENDPOINT JOBS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profeed_client.h"

int main(int argc, char **argv)
{
    char *end = NULL;
    long jobs = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || !end || *end || jobs < 1 || jobs > 10000) {
        fprintf(stderr, "usage: farm_dups ENDPOINT JOBS (1..10000)\n");
        return 2;
    }
    char *error = NULL;
    /* Heartbeats every 20 ms, so that they cross the feedback. */
    profeed_farm_t *farm = profeed_farm_open(argv[1], 20, 50, NULL, &error);
    if (!farm) {
        fprintf(stderr, "farm_dups: %s\n", error ? error : "cannot open");
        free(error);
        return 1;
    }
    const char *cmd[] = {"kernels"};
    long own = 0;
    for (long i = 0; i < jobs; i++) {
        char id[64], want[128];
        snprintf(id, sizeof id, "dup-%04ld", i);
        snprintf(want, sizeof want, "feedback of %s", id);
        profeed_job_t job = {.job_id = id, .language = "cuda", .argv = cmd, .argc = 1};
        if (i % 2) {
            /* Time for the last job's duplicates to arrive first. */
            struct timespec ts = {0, 30 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        char *output = NULL;
        profeed_result_t rc = profeed_farm_run(farm, &job, 5000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error,
                                               NULL);
        if (rc == PROFEED_OK && output && strcmp(output, want) == 0)
            own++;
        else
            fprintf(stderr, "farm_dups: job %s: result %d, got \"%s\" (%s)\n", id, (int) rc, output ? output : "",
                    error ? error : "");
        free(output);
        free(error);
        error = NULL;
    }
    printf("jobs=%ld own=%ld strays=%zu\n", jobs, own, profeed_farm_stray_feedbacks(farm));
    profeed_farm_destroy(&farm);
    return own == jobs ? 0 : 1;
}
