/* The broker's journal (broker/journal.h): what the job table held is what
 * a restarted broker reads back, a damaged tail is cut off rather than
 * believed, a journal that cannot be written refuses, and the file is
 * rewritten to the live jobs when it grows. */
#include "journal.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "wire.h"

static const uint8_t s_agent[] = {0x00, 0x6b, 0x8b, 0x45, 0x67};

static char s_dir[64];

static void s_make_dir(void)
{
    snprintf(s_dir, sizeof s_dir, "/tmp/profeed-journal.XXXXXX");
    cr_assert_not_null(mkdtemp(s_dir));
}

static void s_remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(journal, .init = s_make_dir, .fini = s_remove_dir);

static char *s_path(void)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/journal", s_dir);
    return path;
}

static long s_file_size(void)
{
    struct stat st;
    return stat(s_path(), &st) == 0 ? (long) st.st_size : -1;
}

static journal_t *s_open(job_table_t *jobs, size_t compact_min, size_t *replayed)
{
    journal_options_t opts;
    journal_options_default(&opts);
    opts.compact_min = compact_min;
    pf_error_t err;
    journal_t *j = journal_open(s_dir, &opts, jobs, replayed, &err);
    cr_assert_not_null(j, "%s", err.msg);
    return j;
}

/* Closes the journal and drops the table, as a broker that stops, then reads
 * the journal into a fresh table, as the broker started again. */
static void s_restart(job_table_t **jobs_p, journal_t **j_p, size_t compact_min, size_t *replayed)
{
    journal_close(j_p);
    job_table_destroy(jobs_p);
    *jobs_p = job_table_new();
    *j_p = s_open(*jobs_p, compact_min, replayed);
}

/* Adds a command job (with `padding` bytes of argument) to the table. */
static job_t *s_new_job(job_table_t *jobs, const char *id, size_t padding)
{
    char *pad = malloc(padding + 1);
    memset(pad, 'x', padding);
    pad[padding] = '\0';
    char *argv[] = {(char *) "kernels", pad};
    Profeed__Command command;
    profeed__command__init(&command);
    command.argv = argv;
    command.n_argv = 2;
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
    free(pad);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__JobRequest *copy = wire_job_request_unpack(bytes, len, WIRE_MAX_MSG, &err);
    job_t *job = NULL;
    cr_assert_eq(job_table_submit(jobs, &copy, bytes, len, s_agent, sizeof s_agent, 600000, &job), JOB_SUBMIT_NEW);
    free(bytes);
    return job;
}

/* ... and journals it, as the broker does before its ack. */
static job_t *s_submit(job_table_t *jobs, journal_t *j, const char *id, size_t padding)
{
    job_t *job = s_new_job(jobs, id, padding);
    pf_error_t err;
    cr_assert_eq(journal_submitted(j, job, &err), PF_OK, "%s", err.msg);
    return job;
}

static void s_dispatch(job_table_t *jobs, journal_t *j, job_t *job, uint32_t passes)
{
    pf_error_t err;
    job_table_dispatched(jobs, job, "c1");
    cr_assert_eq(journal_dispatched(j, job, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(job_table_plan(jobs, job, passes, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(journal_planned(j, job, &err), PF_OK, "%s", err.msg);
}

static void s_pass(job_table_t *jobs, journal_t *j, job_t *job, const char *key)
{
    Profeed__PassOutput pass;
    profeed__pass_output__init(&pass);
    pass.job_id = job->id;
    pass.pass_key = (char *) key;
    pass.has_profiler = 1;
    pass.profiler = PROFEED__PROFILER__PROFILER_NCU;
    pass.has_exit_status = 1;
    Profeed__WorkerInfo worker;
    profeed__worker_info__init(&worker);
    worker.host = (char *) "gpu-host-1";
    pass.worker = &worker;
    pf_error_t err;
    size_t len;
    uint8_t *bytes = wire_pass_output_pack(&pass, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    cr_assert_eq(job_table_pass(jobs, job, job->collector, key, PROFEED__PROFILER__PROFILER_NCU, bytes, len, NULL, &err),
                 JOB_PASS_NEW, "%s", err.msg);
    free(bytes);
    cr_assert_eq(journal_pass(j, job, &job->passes[job->pass_len - 1], &err), PF_OK, "%s", err.msg);
}

static void s_finish(job_table_t *jobs, journal_t *j, job_t *job, const char *text)
{
    Profeed__Feedback fb;
    profeed__feedback__init(&fb);
    fb.job_id = job->id;
    fb.has_status = 1;
    fb.status = PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK;
    fb.text = (char *) text;
    pf_error_t err;
    size_t len;
    uint8_t *bytes = wire_feedback_pack(&fb, WIRE_MAX_MSG, &len, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    job_table_finish(jobs, job, bytes, len, 1000);
    free(bytes);
    cr_assert_eq(journal_finished(j, job, &err), PF_OK, "%s", err.msg);
}

/* Five jobs, one in each situation a broker can die in. */
static void s_populate(job_table_t *jobs, journal_t *j)
{
    s_submit(jobs, j, "queued", 10);
    job_t *collecting = s_submit(jobs, j, "collecting", 10);
    s_dispatch(jobs, j, collecting, 3);
    s_pass(jobs, j, collecting, "ncu.000");
    job_t *analyzing = s_submit(jobs, j, "analyzing", 10);
    s_dispatch(jobs, j, analyzing, 2);
    s_pass(jobs, j, analyzing, "ncu.000");
    s_pass(jobs, j, analyzing, "ncu.001");
    job_t *finished = s_submit(jobs, j, "finished", 10);
    s_dispatch(jobs, j, finished, 1);
    s_pass(jobs, j, finished, "ncu.000");
    s_finish(jobs, j, finished, "1. atomic_hist is latency-bound");
    job_t *delivered = s_submit(jobs, j, "delivered", 10);
    s_dispatch(jobs, j, delivered, 1);
    s_pass(jobs, j, delivered, "ncu.000");
    s_finish(jobs, j, delivered, "delivered text");
    pf_error_t err;
    job_table_delivered(jobs, delivered);
    cr_assert_eq(journal_delivered(j, delivered, &err), PF_OK);
    job_t *gone = s_submit(jobs, j, "gone", 10);
    job_table_forget(jobs, gone);
    cr_assert_eq(journal_forgotten(j, "gone", &err), PF_OK);
}

/* What a restarted broker must see of s_populate's jobs. */
static void s_expect_restored(job_table_t *jobs)
{
    job_t *job = job_table_find(jobs, "queued");
    cr_assert_not_null(job);
    cr_expect_eq(job->state, JOB_QUEUED);
    cr_expect_eq(job->agent_len, sizeof s_agent);
    cr_expect_eq(memcmp(job->agent, s_agent, sizeof s_agent), 0);
    cr_expect_str_eq(job->request->command->argv[0], "kernels");

    job = job_table_find(jobs, "collecting");
    cr_assert_not_null(job);
    cr_expect_eq(job->state, JOB_QUEUED, "a collection in flight starts over");
    cr_expect_eq(job->pass_len, 0);
    cr_expect_eq(job->attempt, 1);

    job = job_table_find(jobs, "analyzing");
    cr_assert_not_null(job);
    cr_expect_eq(job->state, JOB_ANALYZING, "its passes are all there: it waits for an analyzer");
    cr_expect_eq(job->pass_len, 2);
    cr_expect_str_eq(job->analyzer, "");
    pf_error_t err;
    Profeed__PassOutput *pass = wire_pass_output_unpack(job->passes[1].bytes, job->passes[1].len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(pass, "%s", err.msg);
    cr_expect_str_eq(pass->pass_key, "ncu.001");
    wire_pass_output_destroy(&pass);

    job = job_table_find(jobs, "finished");
    cr_assert_not_null(job);
    cr_expect_eq(job->state, JOB_FINISHED);
    cr_expect_not(job->delivered);
    Profeed__Feedback *fb = wire_feedback_unpack(job->feedback, job->feedback_len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(fb, "%s", err.msg);
    cr_expect_str_eq(fb->text, "1. atomic_hist is latency-bound");
    wire_feedback_destroy(&fb);

    job = job_table_find(jobs, "delivered");
    cr_assert_not_null(job);
    cr_expect(job->delivered);
    cr_expect_null(job_table_find(jobs, "gone"), "a forgotten job stays forgotten");
    cr_expect_eq(job_table_count(jobs, JOB_QUEUED), 2);
    cr_expect_eq(job_table_count(jobs, JOB_ANALYZING), 1);
    cr_expect_eq(job_table_count(jobs, JOB_FINISHED), 2);
}

Test(journal, a_restarted_broker_reads_back_every_job_in_its_state)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 1u << 30, NULL);
    s_populate(jobs, j);
    size_t replayed = 0;
    s_restart(&jobs, &j, 1u << 30, &replayed);
    cr_expect_geq(replayed, 20, "%zu records", replayed);
    s_expect_restored(jobs);

    /* Opening compacted the file to the live jobs: reading that gives the same. */
    s_restart(&jobs, &j, 1u << 30, &replayed);
    s_expect_restored(jobs);
    journal_close(&j);
    job_table_destroy(&jobs);
}

static void s_expect_cut_at_damage(void (*damage)(long size))
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 1u << 30, NULL);
    s_submit(jobs, j, "first", 10);
    long before = s_file_size();
    s_submit(jobs, j, "second", 10);
    journal_close(&j);
    job_table_destroy(&jobs);
    damage(before);

    jobs = job_table_new();
    j = s_open(jobs, 1u << 30, NULL);
    cr_expect_not_null(job_table_find(jobs, "first"));
    cr_expect_null(job_table_find(jobs, "second"), "a damaged record is not believed");
    /* The damage is gone: new records follow good ones. */
    s_submit(jobs, j, "third", 10);
    s_restart(&jobs, &j, 1u << 30, NULL);
    cr_expect_not_null(job_table_find(jobs, "first"));
    cr_expect_not_null(job_table_find(jobs, "third"));
    journal_close(&j);
    job_table_destroy(&jobs);
}

static void s_cut_mid_record(long before)
{
    cr_assert_eq(truncate(s_path(), before + 20), 0);
}

static void s_flip_a_payload_byte(long before)
{
    FILE *f = fopen(s_path(), "r+b");
    cr_assert_not_null(f);
    fseek(f, before + 16, SEEK_SET);
    int c = fgetc(f);
    fseek(f, before + 16, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

static void s_append_garbage(long before)
{
    (void) before;
    cr_assert_eq(truncate(s_path(), before), 0);
    FILE *f = fopen(s_path(), "ab");
    fputs("garbage that is no record at all", f);
    fclose(f);
}

Test(journal, a_record_cut_short_by_a_crash_is_dropped) { s_expect_cut_at_damage(s_cut_mid_record); }
Test(journal, a_record_whose_checksum_fails_is_dropped) { s_expect_cut_at_damage(s_flip_a_payload_byte); }
Test(journal, bytes_that_are_no_record_are_dropped) { s_expect_cut_at_damage(s_append_garbage); }

Test(journal, a_folder_that_cannot_be_written_is_refused_at_open)
{
    if (geteuid() == 0) {
        s_remove_dir(); /* a skipped test gets no .fini */
        cr_skip_test("root may write anywhere");
    }
    cr_assert_eq(chmod(s_dir, 0500), 0);
    journal_options_t opts;
    journal_options_default(&opts);
    job_table_t *jobs = job_table_new();
    pf_error_t err;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/state", s_dir);
    cr_expect_null(journal_open(sub, &opts, jobs, NULL, &err));
    cr_expect_eq(err.code, PF_EIO);
    cr_expect_not_null(strstr(err.msg, "Permission denied"), "%s", err.msg);
    chmod(s_dir, 0700);
    job_table_destroy(&jobs);
}

/* A full disk, played by the file size limit: the record is refused, and
 * nothing of it stays in the file. */
Test(journal, a_write_that_fails_leaves_nothing_and_says_why)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 1u << 30, NULL);
    s_submit(jobs, j, "kept", 10);
    long size = s_file_size();
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = (rlim_t) size + 100, .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);

    job_t *job = s_new_job(jobs, "refused", 4000);
    pf_error_t err;
    cr_expect_eq(journal_submitted(j, job, &err), PF_EIO);
    cr_expect_not_null(strstr(err.msg, "cannot write"), "%s", err.msg);
    cr_expect_eq(s_file_size(), size, "no partial record left behind");
    job_table_forget(jobs, job); /* as the broker does: not accepted */

    lim.rlim_cur = RLIM_INFINITY;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    s_submit(jobs, j, "after", 10);
    s_restart(&jobs, &j, 1u << 30, NULL);
    cr_expect_not_null(job_table_find(jobs, "kept"));
    cr_expect_null(job_table_find(jobs, "refused"));
    cr_expect_not_null(job_table_find(jobs, "after"));
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal, a_grown_file_is_rewritten_with_the_live_jobs)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 16 * 1024, NULL);
    char id[32];
    /* 200 jobs come and go; five stay. */
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        job_t *job = s_submit(jobs, j, id, 200);
        if (i % 40 != 0) {
            pf_error_t err;
            job_table_forget(jobs, job);
            cr_assert_eq(journal_forgotten(j, id, &err), PF_OK);
        }
    }
    /* Unrewritten, the 400 records would take about 60 KB; rewritten, the
     * file never grows past the 16 KB threshold plus one record. */
    long size = s_file_size();
    cr_expect_lt(size, 17 * 1024, "the file was not rewritten: %ld bytes", size);
    s_restart(&jobs, &j, 16 * 1024, NULL);
    cr_expect_eq(job_table_count(jobs, JOB_QUEUED), 5);
    cr_expect_not_null(job_table_find(jobs, "job-040"));
    cr_expect_null(job_table_find(jobs, "job-041"));
    journal_close(&j);
    job_table_destroy(&jobs);
}

/* Issue 15, defect 5: a delivered feedback lives in the file only. Finishes
 * and delivers `id` with a feedback of `text`; returns its packed bytes (the
 * caller frees them). */
static uint8_t *s_deliver(job_table_t *jobs, journal_t *j, const char *id, const char *text, size_t *len_p)
{
    job_t *job = s_submit(jobs, j, id, 10);
    s_dispatch(jobs, j, job, 1);
    s_pass(jobs, j, job, "ncu.000");
    s_finish(jobs, j, job, text);
    cr_assert_gt(job->stored_len, 0, "the finished record's place is known");
    *len_p = job->feedback_len;
    uint8_t *copy = malloc(*len_p);
    memcpy(copy, job->feedback, *len_p);
    pf_error_t err;
    job_table_delivered(jobs, job);
    cr_assert_eq(journal_delivered(j, job, &err), PF_OK, "%s", err.msg);
    return copy;
}

/* What journal_feedback_read gives for `id` is `want`, byte for byte. */
static void s_expect_read_back(job_table_t *jobs, journal_t *j, const char *id, const uint8_t *want, size_t len)
{
    job_t *job = job_table_find(jobs, id);
    cr_assert_not_null(job, "%s is remembered", id);
    cr_expect_null(job->feedback, "%s: a delivered feedback is not in memory", id);
    uint8_t *bytes = NULL;
    size_t got = 0;
    pf_error_t err;
    cr_assert_eq(journal_feedback_read(j, job, &bytes, &got, &err), PF_OK, "%s: %s", id, err.msg);
    cr_expect_eq(got, len);
    cr_expect_eq(memcmp(bytes, want, len), 0, "%s: the feedback read back is the one stored", id);
    free(bytes);
}

Test(journal, a_delivered_feedback_leaves_memory_and_is_read_back_from_the_file)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 1u << 30, NULL);
    size_t len = 0;
    uint8_t *want = s_deliver(jobs, j, "delivered", "1. atomic_hist is latency-bound", &len);
    job_t *waiting = s_submit(jobs, j, "waiting", 10);
    s_dispatch(jobs, j, waiting, 1);
    s_pass(jobs, j, waiting, "ncu.000");
    s_finish(jobs, j, waiting, "not acknowledged yet");
    cr_expect_eq(job_table_feedback_bytes(jobs), waiting->feedback_len,
                 "only the undelivered feedback is held in memory");
    s_expect_read_back(jobs, j, "delivered", want, len);
    /* The same after a restart: read back from the file, then out of memory. */
    s_restart(&jobs, &j, 1u << 30, NULL);
    cr_expect_eq(job_table_feedback_bytes(jobs), job_table_find(jobs, "waiting")->feedback_len);
    s_expect_read_back(jobs, j, "delivered", want, len);
    free(want);
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal, a_delivered_feedback_is_found_again_after_the_file_is_rewritten)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 16 * 1024, NULL);
    size_t len = 0;
    uint8_t *want = s_deliver(jobs, j, "delivered", "1. atomic_hist is latency-bound", &len);
    uint64_t at = job_table_find(jobs, "delivered")->stored_at;
    char id[32];
    /* 200 jobs come and go before it: the file is rewritten several times. */
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        job_t *job = s_submit(jobs, j, id, 200);
        pf_error_t err;
        job_table_forget(jobs, job);
        cr_assert_eq(journal_forgotten(j, id, &err), PF_OK);
    }
    cr_expect_lt(s_file_size(), 17 * 1024, "the file was not rewritten: %ld bytes", s_file_size());
    job_t *job = job_table_find(jobs, "delivered");
    cr_assert_not_null(job);
    cr_expect_neq(job->stored_at, at, "the record moved (it was at %llu)", (unsigned long long) at);
    s_expect_read_back(jobs, j, "delivered", want, len);
    s_restart(&jobs, &j, 16 * 1024, NULL);
    s_expect_read_back(jobs, j, "delivered", want, len);
    free(want);
    journal_close(&j);
    job_table_destroy(&jobs);
}

/* Flips one byte of the file at `at`. */
static void s_flip_byte_at(uint64_t at)
{
    FILE *f = fopen(s_path(), "r+b");
    cr_assert_not_null(f);
    fseek(f, (long) at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, (long) at, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}

Test(journal, a_damaged_or_misplaced_feedback_record_is_refused_not_believed)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 1u << 30, NULL);
    size_t len = 0;
    free(s_deliver(jobs, j, "first", "first text", &len));
    free(s_deliver(jobs, j, "second", "second text", &len));
    (void) len;
    job_t *first = job_table_find(jobs, "first");
    job_t *second = job_table_find(jobs, "second");
    uint8_t *bytes = NULL;
    size_t got = 0;
    pf_error_t err;

    /* A place that holds another job's record. */
    uint64_t at = first->stored_at;
    size_t stored = first->stored_len;
    first->stored_at = second->stored_at;
    first->stored_len = second->stored_len;
    cr_expect_eq(journal_feedback_read(j, first, &bytes, &got, &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "not job first's feedback"), "%s", err.msg);
    /* A place beyond the file's end. */
    first->stored_at = 1u << 30;
    cr_expect_eq(journal_feedback_read(j, first, &bytes, &got, &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "no record of"), "%s", err.msg);
    first->stored_at = at;
    first->stored_len = stored;

    /* A byte of the record damaged on disk. */
    s_flip_byte_at(second->stored_at + second->stored_len - 3);
    cr_expect_eq(journal_feedback_read(j, second, &bytes, &got, &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "checksum does not match"), "%s", err.msg);
    cr_expect_null(bytes);
    cr_expect_eq(got, 0);
    /* The other one is still there. */
    cr_expect_eq(journal_feedback_read(j, first, &bytes, &got, &err), PF_OK, "%s", err.msg);
    free(bytes);
    journal_close(&j);
    job_table_destroy(&jobs);
}

Test(journal, a_rewrite_forgets_a_job_whose_delivered_feedback_cannot_be_read)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 16 * 1024, NULL);
    size_t len = 0;
    uint8_t *want = s_deliver(jobs, j, "kept", "kept text", &len);
    size_t other = 0;
    free(s_deliver(jobs, j, "damaged", "damaged text", &other));
    job_t *damaged = job_table_find(jobs, "damaged");
    s_flip_byte_at(damaged->stored_at + damaged->stored_len - 3);
    char id[32];
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        job_t *job = s_submit(jobs, j, id, 200);
        pf_error_t err;
        job_table_forget(jobs, job);
        cr_assert_eq(journal_forgotten(j, id, &err), PF_OK);
    }
    cr_expect_null(job_table_find(jobs, "damaged"), "a record that does not read back is not copied");
    s_expect_read_back(jobs, j, "kept", want, len);
    s_restart(&jobs, &j, 16 * 1024, NULL);
    cr_expect_null(job_table_find(jobs, "damaged"));
    s_expect_read_back(jobs, j, "kept", want, len);
    free(want);
    journal_close(&j);
    job_table_destroy(&jobs);
}

/* The checksum is zlib's CRC-32, so the file can be checked with any tool. */
Test(journal, the_record_checksum_is_the_standard_crc32)
{
    cr_expect_eq(crc32_update(0, "123456789", 9), 0xCBF43926u);
    cr_expect_eq(crc32_update(0, "", 0), 0u);
    /* In pieces of any size, as one. */
    uint32_t crc = crc32_update(0, "12345", 5);
    cr_expect_eq(crc32_update(crc, "6789", 4), 0xCBF43926u);
    char big[1000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char) (i * 7);
    uint32_t whole = crc32_update(0, big, sizeof big);
    uint32_t parts = crc32_update(crc32_update(0, big, 333), big + 333, sizeof big - 333);
    cr_expect_eq(whole, parts);
}

/* A streamed pass (issue 20) is not kept, so the journal holds none of it: a
 * rewrite while such a job is being analyzed writes the job as dispatched,
 * to be collected again after a restart, and the records after it read back.
 * (Before, the rewrite wrote the empty pass, which reading refused with a
 * warning: "stored pass ncu.000 is not valid".) */
Test(journal, a_rewrite_during_a_streamed_job_keeps_the_records_after_it)
{
    job_table_t *jobs = job_table_new();
    journal_t *j = s_open(jobs, 16 * 1024, NULL);
    job_t *streamed = s_submit(jobs, j, "streamed", 10);
    s_dispatch(jobs, j, streamed, 1);
    streamed->streamed = true; /* as the broker marks it at its first chunk */
    pf_error_t err;
    cr_assert_eq(job_table_pass(jobs, streamed, streamed->collector, "ncu.000", PROFEED__PROFILER__PROFILER_NCU,
                                (const uint8_t *) "", 0, NULL, &err),
                 JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(streamed->state, JOB_ANALYZING);
    /* Enough coming and going to make the file be rewritten, then one more. */
    char id[32];
    for (int i = 0; i < 200; i++) {
        snprintf(id, sizeof id, "job-%03d", i);
        s_submit(jobs, j, id, 200);
        job_table_forget(jobs, job_table_find(jobs, id));
        cr_assert_eq(journal_forgotten(j, id, &err), PF_OK);
    }
    cr_expect_lt(s_file_size(), 17 * 1024, "the file was not rewritten");
    s_submit(jobs, j, "after", 10);
    s_restart(&jobs, &j, 16 * 1024, NULL);
    cr_expect_not_null(job_table_find(jobs, "after"), "the records after the rewrite were cut off");
    job_t *back = job_table_find(jobs, "streamed");
    cr_assert_not_null(back);
    cr_expect_eq(back->pass_len, 0, "a streamed pass came back from the journal");
    journal_close(&j);
    job_table_destroy(&jobs);
}
