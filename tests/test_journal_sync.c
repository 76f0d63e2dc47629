/* The journal's sync thread (broker/journal_sync.h): records written while a
 * sync runs share the next one, a sync counts only what was written before it
 * began, a failed sync is reported once for exactly the records it covered,
 * a compaction while a sync runs syncs no closed file and loses no record, and
 * a close with a sync in flight is clean. The thread's fdatasync is replaced
 * by a gate (journal_sync_set_fn) that the test opens sync by sync. */
#include "journal.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

static const uint8_t s_agent[] = {0x00, 0x6b, 0x8b, 0x45, 0x67};

static char s_dir[64];

static void s_make_dir(void)
{
    snprintf(s_dir, sizeof s_dir, "/tmp/profeed-jsync.XXXXXX");
    cr_assert_not_null(mkdtemp(s_dir));
}

static void s_remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(journal_sync, .init = s_make_dir, .fini = s_remove_dir, .timeout = 60);

/* The gate: sync n (from 1) waits until `opened` >= n, then fails when it is
 * `fail_at`, else fdatasyncs. Notes a descriptor that was not open. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int entered;
    int opened;
    int fail_at;
    bool bad_fd;
} gate_t;

static gate_t s_gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, false};

static int s_gated_sync(int fd, void *arg)
{
    gate_t *g = arg;
    pthread_mutex_lock(&g->lock);
    int n = ++g->entered;
    if (fcntl(fd, F_GETFD) == -1)
        g->bad_fd = true;
    pthread_cond_broadcast(&g->cond);
    while (g->opened < n)
        pthread_cond_wait(&g->cond, &g->lock);
    bool fail = n == g->fail_at;
    pthread_mutex_unlock(&g->lock);
    if (fail) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

static void s_gate_open(int n)
{
    pthread_mutex_lock(&s_gate.lock);
    s_gate.opened = n;
    pthread_cond_broadcast(&s_gate.cond);
    pthread_mutex_unlock(&s_gate.lock);
}

/* Waits (at most 10 s: a hang is a failure, not a wait) until sync n began. */
static void s_gate_entered(int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&s_gate.lock);
    int rc = 0;
    while (s_gate.entered < n && rc == 0)
        rc = pthread_cond_timedwait(&s_gate.cond, &s_gate.lock, &until);
    int entered = s_gate.entered;
    pthread_mutex_unlock(&s_gate.lock);
    cr_assert_geq(entered, n, "sync %d never began", n);
}

static journal_t *s_open(job_table_t *jobs, size_t compact_min, int fail_at)
{
    journal_options_t opts;
    journal_options_default(&opts);
    opts.compact_min = compact_min;
    pf_error_t err;
    journal_t *j = journal_open(s_dir, &opts, jobs, NULL, &err);
    cr_assert_not_null(j, "%s", err.msg);
    s_gate.entered = s_gate.opened = 0;
    s_gate.fail_at = fail_at;
    s_gate.bad_fd = false;
    cr_assert_not_null(journal_syncer(j), "sync on: a thread syncs");
    journal_sync_set_fn(journal_syncer(j), s_gated_sync, &s_gate);
    return j;
}

/* Submits a job of `id` and journals it, as the broker does before its ack;
 * returns the mark its ack waits for. */
static uint64_t s_submit(job_table_t *jobs, journal_t *j, const char *id)
{
    char *argv[] = {(char *) "kernels"};
    Profeed__Command command;
    profeed__command__init(&command);
    command.argv = argv;
    command.n_argv = 1;
    Profeed__JobRequest req;
    profeed__job_request__init(&req);
    req.job_id = (char *) id;
    req.has_language = 1;
    req.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    req.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
    req.command = &command;
    pf_error_t err;
    size_t len;
    uint8_t *bytes = wire_job_request_pack(&req, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__JobRequest *copy = wire_job_request_unpack(bytes, len, WIRE_MAX_MSG, &err);
    job_t *job = NULL;
    cr_assert_eq(job_table_submit(jobs, &copy, bytes, len, s_agent, sizeof s_agent, 600000, &job), JOB_SUBMIT_NEW);
    free(bytes);
    cr_assert_eq(journal_submitted(j, job, &err), PF_OK, "%s", err.msg);
    return journal_mark(j);
}

/* The progress the loop would take once the thread has synced `mark` or
 * reported a failure, waiting on the journal's socket as the broker's loop
 * does (at most 10 s each). */
static journal_sync_progress_t s_progress_until(journal_t *j, uint64_t mark)
{
    zpoller_t *poller = zpoller_new(journal_socket(j), NULL);
    journal_sync_progress_t p;
    for (;;) {
        journal_progress(j, &p);
        if (p.synced >= mark || p.failed_to)
            break;
        void *which = zpoller_wait(poller, 10000);
        cr_assert_not_null(which, "no progress towards mark %llu (synced %llu)", (unsigned long long) mark,
                           (unsigned long long) p.synced);
    }
    zpoller_destroy(&poller);
    return p;
}

Test(journal_sync, records_written_while_a_sync_runs_share_the_next_one)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 64u << 20, 0);
    uint64_t first = s_submit(jobs, j, "job-000");
    cr_assert_gt(first, 0, "a promise waits for its record");
    s_gate_entered(1);
    /* 40 acks wait while sync 1 runs. */
    char id[32];
    uint64_t last = 0;
    for (int i = 1; i <= 40; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        last = s_submit(jobs, j, id);
    }
    cr_assert_gt(last, first);
    s_gate_open(1);
    /* Sync 1 began before them: it covers the first record only. */
    journal_sync_progress_t p = s_progress_until(j, first);
    cr_expect_eq(p.synced, first, "sync 1 claimed %llu, but only %llu was written when it began",
                 (unsigned long long) p.synced, (unsigned long long) first);
    cr_expect_eq(p.failed_to, 0);
    s_gate_entered(2);
    s_gate_open(2);
    p = s_progress_until(j, last);
    cr_expect_eq(p.synced, last);
    cr_expect_eq(journal_sync_count(journal_syncer(j)), 2, "40 records written during one sync share one sync");
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal_sync, a_failed_sync_is_reported_once_for_exactly_the_records_it_covered)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 64u << 20, 2);
    s_gate_open(1);
    uint64_t a = s_submit(jobs, j, "job-a");
    journal_sync_progress_t p = s_progress_until(j, a);
    cr_expect_eq(p.failed_to, 0);
    uint64_t b = s_submit(jobs, j, "job-b");
    s_gate_entered(2);
    uint64_t c = s_submit(jobs, j, "job-c"); /* written while sync 2 runs */
    s_gate_open(3);
    p = s_progress_until(j, b);
    cr_expect_eq(p.failed_from, a, "the failure starts after the last good sync");
    cr_expect_eq(p.failed_to, b, "and ends where the failed sync began, not at job-c's record");
    cr_expect_neq(strstr(p.why, "cannot sync"), NULL, "%s", p.why);
    /* Taken once; a later sync retries what came after. */
    p = s_progress_until(j, c);
    cr_expect_eq(p.failed_to, 0, "a failure is reported once");
    cr_expect_eq(p.synced, c);
    journal_close(&j);
    job_table_destroy(&jobs);
}

/* Opens the gate from another thread (the loop is then inside the journal). */
static void *s_opener(void *arg)
{
    s_gate_open(*(int *) arg);
    return NULL;
}

Test(journal_sync, a_compaction_syncs_everything_and_never_syncs_a_closed_file)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 16 * 1024, 0);
    uint64_t mark = s_submit(jobs, j, "job-keep");
    s_gate_entered(1);
    /* While sync 1 holds the old file, jobs come and go until the file is
     * rewritten (16 KB); the opener lets sync 1 end meanwhile. */
    pthread_t opener;
    int all = 1000;
    cr_assert_eq(pthread_create(&opener, NULL, s_opener, &all), 0);
    char id[32];
    for (int i = 0; i < 300; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        mark = s_submit(jobs, j, id);
        job_t *job = job_table_find(jobs, id);
        job_table_forget(jobs, job);
        pf_error_t err;
        cr_assert_eq(journal_forgotten(j, id, &err), PF_OK, "%s", err.msg);
    }
    pthread_join(opener, NULL);
    struct stat st;
    char path[128];
    snprintf(path, sizeof path, "%s/journal", s_dir);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_lt(st.st_size, 17 * 1024, "the file was rewritten");
    journal_sync_progress_t p = s_progress_until(j, mark);
    cr_expect_geq(p.synced, mark);
    cr_expect_eq(p.failed_to, 0);
    pthread_mutex_lock(&s_gate.lock);
    bool bad = s_gate.bad_fd;
    pthread_mutex_unlock(&s_gate.lock);
    cr_expect_not(bad, "a sync was given a closed descriptor");
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal_sync, a_close_with_a_sync_in_flight_is_clean_and_keeps_every_record)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 64u << 20, 0);
    s_submit(jobs, j, "job-000");
    s_gate_entered(1);
    char id[32];
    for (int i = 1; i <= 10; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        s_submit(jobs, j, id);
    }
    pthread_t opener;
    int all = 1000;
    cr_assert_eq(pthread_create(&opener, NULL, s_opener, &all), 0);
    journal_close(&j); /* waits out sync 1, then syncs the rest itself */
    pthread_join(opener, NULL);
    cr_expect_null(j);
    job_table_destroy(&jobs);
    jobs = job_table_new();
    journal_options_t opts;
    journal_options_default(&opts);
    size_t replayed = 0;
    pf_error_t err;
    j = journal_open(s_dir, &opts, jobs, &replayed, &err);
    cr_assert_not_null(j, "%s", err.msg);
    cr_expect_eq(job_table_count(jobs, JOB_QUEUED), 11);
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal_sync, with_sync_off_there_is_no_thread_and_nothing_waits)
{
    job_table_t *jobs = job_table_new();
    journal_options_t opts;
    journal_options_default(&opts);
    opts.sync = false;
    pf_error_t err;
    journal_t *j = journal_open(s_dir, &opts, jobs, NULL, &err);
    cr_assert_not_null(j, "%s", err.msg);
    cr_expect_null(journal_syncer(j));
    cr_expect_null(journal_socket(j));
    cr_expect_eq(journal_mark(j), 0);
    journal_sync_progress_t p;
    journal_progress(j, &p);
    cr_expect_eq(p.synced, UINT64_MAX);
    journal_close(&j);
    cr_expect_eq(journal_mark(NULL), 0, "nor without a journal");
    job_table_destroy(&jobs);
}
