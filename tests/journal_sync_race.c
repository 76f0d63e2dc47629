/* The journal's sync thread under ThreadSanitizer (ctest -L tsan; Criterion's
 * runner does not run under TSan): the loop writes promised records, takes
 * the thread's progress from its socket and compacts the file (16 KB) while
 * the thread syncs, then closes with syncs in flight. Exits 1 on a promise
 * never synced; TSan fails the test on a race. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "wire.h"

int main(void)
{
    char dir[] = "/tmp/profeed-jrace.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    journal_options_t opts;
    journal_options_default(&opts);
    opts.compact_min = 16 * 1024;
    job_table_t *jobs = job_table_new();
    pf_error_t err;
    journal_t *j = journal_open(dir, &opts, jobs, NULL, &err);
    if (!j) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    zpoller_t *poller = zpoller_new(journal_socket(j), NULL);
    int rc = 0;
    for (int i = 0; i < 2000 && rc == 0; i++) {
        char id[32];
        snprintf(id, sizeof id, "job-%04d", i);
        char *argv[] = {(char *) "kernels"};
        Profeed__Command command;
        profeed__command__init(&command);
        command.argv = argv;
        command.n_argv = 1;
        Profeed__JobRequest req;
        profeed__job_request__init(&req);
        req.job_id = id;
        req.has_language = 1;
        req.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
        req.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
        req.command = &command;
        size_t len = 0;
        uint8_t *bytes = wire_job_request_pack(&req, WIRE_MAX_MSG, &len, &err);
        Profeed__JobRequest *copy = bytes ? wire_job_request_unpack(bytes, len, WIRE_MAX_MSG, &err) : NULL;
        job_t *job = NULL;
        if (!copy ||
            job_table_submit(jobs, &copy, bytes, len, (const uint8_t *) "a", 1, 600000, &job) != JOB_SUBMIT_NEW ||
            journal_submitted(j, job, &err) != PF_OK) {
            fprintf(stderr, "%s: cannot submit and journal it: %s\n", id, err.msg);
            rc = 1;
        }
        free(bytes);
        uint64_t mark = journal_mark(j);
        if (rc == 0 && i % 2 == 0) {
            job_table_forget(jobs, job);
            rc = journal_forgotten(j, id, &err) != PF_OK;
        }
        /* Every tenth promise is waited for, as the broker's loop would. */
        journal_sync_progress_t p;
        journal_progress(j, &p);
        while (rc == 0 && i % 10 == 0 && p.synced < mark) {
            if (!zpoller_wait(poller, 10000)) {
                fprintf(stderr, "mark %llu never synced\n", (unsigned long long) mark);
                rc = 1;
            }
            journal_progress(j, &p);
        }
        rc |= p.failed_to != 0;
    }
    zpoller_destroy(&poller);
    journal_close(&j);
    job_table_destroy(&jobs);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    rc |= system(cmd) != 0;
    return rc;
}
