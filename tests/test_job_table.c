/* The broker's job table: the state machine of broker/job_table.h, as the
 * broker drives it.
 *
 * Every arrow of the diagram is taken here. The moves that are not arrows are
 * bugs of the broker itself: one is made, to show the guard aborts in every
 * build (pf_assert), not only where asserts are on; what is tested besides is what a bad or late peer can cause: a pass plan or
 * a pass output for a job that is not collecting, from a stale collector,
 * beyond the announced plan, or twice. Those must be refused with an error and
 * leave the job as it was. */
#include "job_table.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define MAX_ATTEMPTS 3
#define DEADLINE_MS 600000

static const uint8_t s_agent1[] = {0x00, 0x6b, 0x8b, 0x45, 0x67};
static const uint8_t s_agent2[] = {0x00, 0x6b, 0x8b, 0x45, 0x68};

/* Packs a command job `argv0 all` with this id, the way an agent sends it. */
static uint8_t *s_pack_request(const char *job_id, const char *argv0, size_t *len_p)
{
    char *argv[] = {(char *) argv0, (char *) "all"};
    Profeed__Command command;
    profeed__command__init(&command);
    command.argv = argv;
    command.n_argv = 2;
    Profeed__JobRequest request;
    profeed__job_request__init(&request);
    request.job_id = (char *) job_id;
    request.has_language = 1;
    request.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    request.gpu_arch = (char *) "sm_90";
    request.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
    request.command = &command;
    pf_error_t err;
    uint8_t *bytes = wire_job_request_pack(&request, WIRE_MAX_MSG, len_p, &err);
    cr_assert_not_null(bytes, "packing the request: %s", err.msg);
    return bytes;
}

/* Submits `argv0 all` under `job_id` from `agent`, as broker.c does: the
 * table gets the unpacked request (owned) and the bytes it came as. */
static job_submit_t s_submit_from(job_table_t *table, const char *job_id, const char *argv0,
                                  const uint8_t *agent, size_t agent_len, job_t **job_p)
{
    size_t len = 0;
    uint8_t *bytes = s_pack_request(job_id, argv0, &len);
    pf_error_t err;
    Profeed__JobRequest *request = wire_job_request_unpack(bytes, len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(request, "unpacking the request: %s", err.msg);
    job_submit_t rc = job_table_submit(table, &request, bytes, len, agent, agent_len, DEADLINE_MS, job_p);
    cr_assert_null(request, "the table owns or destroys the request in every case");
    free(bytes);
    return rc;
}

static job_t *s_submit(job_table_t *table, const char *job_id)
{
    job_t *job = NULL;
    cr_assert_eq(s_submit_from(table, job_id, "kernels", s_agent1, sizeof s_agent1, &job), JOB_SUBMIT_NEW);
    cr_assert_not_null(job);
    return job;
}

static job_pass_result_t s_pass(job_table_t *table, job_t *job, const char *collector, const char *key,
                                pf_error_t *err)
{
    char bytes[64];
    int n = snprintf(bytes, sizeof bytes, "packed PassOutput %s of %s", key, job->id);
    cr_assert(n > 0 && (size_t) n < sizeof bytes);
    pf_error_clear(err);
    return job_table_pass(table, job, collector, key, PROFEED__PROFILER__PROFILER_NCU, (const uint8_t *) bytes,
                          (size_t) n, NULL, err);
}

/* A job dispatched to `collector` whose plan of `passes` passes is announced. */
static job_t *s_collecting(job_table_t *table, const char *job_id, const char *collector, uint32_t passes)
{
    job_t *job = s_submit(table, job_id);
    job_table_dispatched(table, job, collector);
    pf_error_t err;
    cr_assert_eq(job_table_plan(table, job, passes, &err), PF_OK, "%s", err.msg);
    return job;
}

/* The packed Feedback the broker finishes a failed job with. */
static uint8_t *s_pack_feedback(const char *job_id, Profeed__FeedbackStatus status, const char *text,
                                size_t *len_p)
{
    Profeed__Feedback fb;
    profeed__feedback__init(&fb);
    fb.job_id = (char *) job_id;
    fb.has_status = 1;
    fb.status = status;
    fb.text = (char *) text;
    pf_error_t err;
    uint8_t *bytes = wire_feedback_pack(&fb, WIRE_MAX_MSG, len_p, &err);
    cr_assert_not_null(bytes, "packing the feedback: %s", err.msg);
    return bytes;
}

static void s_finish(job_table_t *table, job_t *job, Profeed__FeedbackStatus status, const char *text,
                     int64_t now_ms)
{
    size_t len = 0;
    uint8_t *bytes = s_pack_feedback(job->id, status, text, &len);
    job_table_finish(table, job, bytes, len, now_ms);
    free(bytes);
}

/* ---------------------------------------------------------------------------
 * Every arrow of the diagram */

Test(job_table, submit_queues_a_new_job_with_its_request)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    cr_assert_eq(job->state, JOB_QUEUED);
    cr_assert_str_eq(job->id, "job-1");
    cr_assert_str_eq(job->request->command->argv[0], "kernels");
    cr_assert_eq(job->attempt, 0);
    cr_assert_eq(job->agent_len, sizeof s_agent1);
    cr_assert_eq(memcmp(job->agent, s_agent1, sizeof s_agent1), 0);
    cr_assert_eq(job->deadline_ms, DEADLINE_MS);
    cr_assert_eq(job_table_find(table, "job-1"), job);
    cr_assert_null(job_table_find(table, "job-2"));
    cr_assert_null(job_table_find(table, NULL));
    cr_assert_eq(job_table_count(table, JOB_QUEUED), 1);
    job_table_destroy(&table);
    cr_assert_null(table);
    job_table_destroy(&table); /* a no-op on NULL */
}

Test(job_table, dispatch_moves_queued_to_collecting_and_starts_attempt_one)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    job_table_dispatched(table, job, "c1");
    cr_assert_eq(job->state, JOB_COLLECTING);
    cr_assert_str_eq(job->collector, "c1");
    cr_assert_eq(job->attempt, 1);
    cr_assert_eq(job->pass_count, 0, "the plan size comes from the collector");
    cr_assert_eq(job_table_count(table, JOB_QUEUED), 0);
    cr_assert_eq(job_table_count(table, JOB_COLLECTING), 1);
    job_table_destroy(&table);
}

Test(job_table, last_pass_moves_collecting_to_analyzing)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_COLLECTING, "two of three passes in");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.002", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    cr_assert_str_empty(job->collector, "the collector is free once every pass is in");
    cr_assert_eq(job->pass_len, 3);
    cr_assert_eq(job->profiler, PROFEED__PROFILER__PROFILER_NCU);
    cr_assert_str_eq(job->passes[2].pass_key, "ncu.002");
    cr_assert_eq(memcmp(job->passes[2].bytes, "packed PassOutput ncu.002 of job-1", job->passes[2].len), 0);
    job_table_destroy(&table);
}

Test(job_table, feedback_moves_analyzing_to_finished_and_keeps_it)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 1);
    pf_error_t err;
    job_table_set_analyzer(table, job, "a1");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "1. atomic_hist", 1000);
    cr_assert_eq(job->state, JOB_FINISHED);
    cr_assert_eq(job->finished_ms, 1000);
    cr_assert_str_empty(job->analyzer);
    cr_assert_eq(job->pass_len, 0, "a finished job keeps its feedback, not its passes");
    cr_assert_eq(job_table_pass_bytes(table), 0);
    cr_assert_eq(job_table_feedback_bytes(table), job->feedback_len);
    job_table_delivered(table, job);
    cr_assert(job->delivered);
    Profeed__Feedback *fb = wire_feedback_unpack(job->feedback, job->feedback_len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(fb, "%s", err.msg);
    cr_assert_str_eq(fb->text, "1. atomic_hist");
    wire_feedback_destroy(&fb);
    cr_assert_eq(job_table_count(table, JOB_FINISHED), 1);
    job_table_destroy(&table);
}

Test(job_table, queued_job_can_finish_on_timeout)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT, "no collector was free", 5);
    cr_assert_eq(job->state, JOB_FINISHED);
    cr_assert_null(job_table_first_queued(table));
    job_table_destroy(&table);
}

/* job_table_dispatched() checks no state of its own: the transition guard is
 * all that stands between a finished job and a second run. It must hold under
 * NDEBUG too (deploy/test.sh's second build has asserts off). */
Test(job_table, a_move_the_diagram_lacks_aborts_in_every_build, .signal = SIGABRT)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT, "no collector was free", 5);
    job_table_dispatched(table, job, "collector-1");
    cr_assert_fail("a finished job was dispatched again");
    job_table_destroy(&table);
}

Test(job_table, collecting_job_can_finish_when_refused_by_its_collector)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT, "no capture for program", 5);
    cr_assert_eq(job->state, JOB_FINISHED);
    cr_assert_str_empty(job->collector);
    cr_assert_eq(job->pass_len, 0, "dropped as it finishes");
    cr_assert_eq(job_table_pass_bytes(table), 0);
    job_table_destroy(&table);
}

Test(job_table, collector_loss_requeues_collecting_to_queued)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert(job_table_requeue(table, job, MAX_ATTEMPTS));
    cr_assert_eq(job->state, JOB_QUEUED);
    cr_assert_str_empty(job->collector);
    cr_assert_eq(job->pass_len, 0, "a new attempt collects every pass again");
    cr_assert_eq(job->pass_count, 0, "and announces its own plan");
    cr_assert_eq(job->attempt, 1, "attempts count dispatches, not requeues");
    cr_assert_eq(job_table_first_queued(table), job);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * Queue order */

Test(job_table, a_requeued_job_keeps_its_analyzer_until_that_analyzer_dies)
{
    /* farm_faults: the collector and then the analyzer of a job died; the
     * broker unpins the requeued job, which must not trip an assertion. */
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    job_table_set_analyzer(table, job, "a1");
    cr_assert(job_table_requeue(table, job, MAX_ATTEMPTS));
    cr_assert_eq(job->state, JOB_QUEUED);
    cr_assert_str_eq(job->analyzer, "a1");
    job_table_set_analyzer(table, job, "");
    cr_assert_str_empty(job->analyzer);
    job_table_destroy(&table);
}

Test(job_table, queued_jobs_come_out_in_submission_order_and_a_requeued_job_keeps_its_place)
{
    job_table_t *table = job_table_new();
    job_t *a = s_submit(table, "job-a");
    job_t *b = s_submit(table, "job-b");
    job_t *c = s_submit(table, "job-c");
    cr_assert_eq(job_table_first_queued(table), a);
    cr_assert_eq(job_table_queued_after(table, a), b);
    cr_assert_eq(job_table_queued_after(table, b), c);
    cr_assert_null(job_table_queued_after(table, c));
    job_table_dispatched(table, a, "c1");
    cr_assert_eq(job_table_first_queued(table), b);
    cr_assert(job_table_requeue(table, a, MAX_ATTEMPTS));
    cr_assert_eq(job_table_first_queued(table), a, "a requeued job goes first again, not last");
    cr_assert_eq(job_table_queued_after(table, a), b);
    /* A requeued job between others, and one that leaves from the middle. */
    job_table_dispatched(table, b, "c1");
    cr_assert(job_table_requeue(table, b, MAX_ATTEMPTS));
    cr_assert_eq(job_table_queued_after(table, a), b);
    cr_assert_eq(job_table_queued_after(table, b), c);
    job_table_forget(table, b);
    cr_assert_eq(job_table_queued_after(table, a), c);
    job_table_dispatched(table, c, "c1");
    cr_assert_null(job_table_queued_after(table, a));
    cr_assert_eq(job_table_first_queued(table), a);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * Idempotent resubmission */

Test(job_table, same_request_again_is_the_same_job_answered_to_the_new_agent)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    job_t *again = NULL;
    cr_assert_eq(s_submit_from(table, "job-1", "kernels", s_agent2, sizeof s_agent2, &again), JOB_SUBMIT_SAME);
    cr_assert_eq(again, job);
    cr_assert_eq(job->state, JOB_COLLECTING, "nothing is redone");
    cr_assert_eq(job->attempt, 1);
    cr_assert_eq(memcmp(job->agent, s_agent2, sizeof s_agent2), 0, "the agent may have reconnected");
    cr_assert_eq(job_table_count(table, JOB_COLLECTING), 1);
    cr_assert_eq(job_table_count(table, JOB_QUEUED), 0);
    job_table_destroy(&table);
}

Test(job_table, same_request_after_the_feedback_gets_the_stored_feedback)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 1);
    pf_error_t err;
    job_table_set_analyzer(table, job, "a1");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "the one feedback", 10);
    job_t *again = NULL;
    cr_assert_eq(s_submit_from(table, "job-1", "kernels", s_agent1, sizeof s_agent1, &again), JOB_SUBMIT_SAME);
    cr_assert_eq(again, job);
    cr_assert_eq(again->state, JOB_FINISHED);
    cr_assert_eq(again->attempt, 1, "not run again");
    Profeed__Feedback *fb = wire_feedback_unpack(again->feedback, again->feedback_len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(fb, "%s", err.msg);
    cr_assert_str_eq(fb->text, "the one feedback");
    wire_feedback_destroy(&fb);
    job_table_destroy(&table);
}

Test(job_table, same_id_for_another_request_is_a_conflict_and_leaves_the_job_alone)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    job_t *other = job;
    cr_assert_eq(s_submit_from(table, "job-1", "full", s_agent2, sizeof s_agent2, &other), JOB_SUBMIT_CONFLICT);
    cr_assert_null(other);
    cr_assert_eq(job_table_find(table, "job-1"), job);
    cr_assert_str_eq(job->request->command->argv[0], "kernels");
    cr_assert_eq(memcmp(job->agent, s_agent1, sizeof s_agent1), 0, "the first agent still gets the answer");
    cr_assert_eq(job_table_count(table, JOB_QUEUED), 1);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * Collector loss: requeue up to the attempt limit, then failure */

Test(job_table, collector_loss_requeues_until_the_attempt_limit_then_fails_with_the_reason)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    const char *collectors[MAX_ATTEMPTS] = {"c1", "c2", "c3"};
    for (uint32_t i = 0; i < MAX_ATTEMPTS; i++) {
        pf_error_t err;
        job_table_dispatched(table, job, collectors[i]);
        cr_assert_eq(job->attempt, i + 1);
        cr_assert_eq(job_table_plan(table, job, 3, &err), PF_OK, "%s", err.msg);
        cr_assert_eq(s_pass(table, job, collectors[i], "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
        bool requeued = job_table_requeue(table, job, MAX_ATTEMPTS);
        if (i + 1 < MAX_ATTEMPTS) {
            cr_assert(requeued, "attempt %u of %u: requeued", (unsigned) (i + 1), MAX_ATTEMPTS);
            cr_assert_eq(job->state, JOB_QUEUED);
        } else {
            cr_assert_not(requeued, "no attempts left after %u", MAX_ATTEMPTS);
            cr_assert_eq(job->state, JOB_COLLECTING, "the table leaves the verdict to the broker");
        }
    }
    /* What broker.c does when requeue says no. */
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES,
             "the collector died during attempt 3 of 3 (silent for 3000 ms); no attempts left", 20);
    cr_assert_eq(job->state, JOB_FINISHED);
    cr_assert_eq(job->attempt, MAX_ATTEMPTS);
    job_t *again = NULL;
    cr_assert_eq(s_submit_from(table, "job-1", "kernels", s_agent1, sizeof s_agent1, &again), JOB_SUBMIT_SAME);
    pf_error_t err;
    Profeed__Feedback *fb = wire_feedback_unpack(again->feedback, again->feedback_len, WIRE_MAX_MSG, &err);
    cr_assert_not_null(fb, "%s", err.msg);
    cr_assert_eq(fb->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_FAILED_AFTER_RETRIES);
    cr_assert(strstr(fb->text, "attempt 3 of 3") != NULL, "the reason is kept: %s", fb->text);
    wire_feedback_destroy(&fb);
    job_table_destroy(&table);
}

/* A collector that answers OVERLOADED never started the attempt: twenty
 * refusals in a row leave every attempt for real work, and the job carries
 * when to retry and whom to avoid. */
Test(job_table, an_overloaded_refusal_does_not_spend_an_attempt)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    for (int i = 0; i < 20; i++) {
        job_table_dispatched(table, job, "c1");
        cr_assert_eq(job->attempt, 1, "each retry reuses the refused attempt's number");
        job_table_refused(table, job, 1000 + i);
        cr_assert_eq(job->state, JOB_QUEUED);
        cr_assert_eq(job->attempt, 0);
    }
    cr_expect_eq(job->refusals, 20);
    cr_expect_eq(job->retry_ms, 1019);
    cr_expect_str_eq(job->refused_by, "c1");
    cr_expect_eq(job_table_first_queued(table), job);
    job_table_dispatched(table, job, "c2");
    cr_expect_eq(job->retry_ms, 0, "a dispatch clears the wait");
    cr_expect(job_table_requeue(table, job, MAX_ATTEMPTS), "attempt 1 of %u lost: attempts are left", MAX_ATTEMPTS);
    job_table_destroy(&table);
}

Test(job_table, a_late_pass_from_the_lost_collector_is_refused_after_the_requeue)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 2);
    pf_error_t err;
    cr_assert(job_table_requeue(table, job, MAX_ATTEMPTS));
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert(strstr(err.msg, "not collecting") != NULL, "%s", err.msg);
    job_table_dispatched(table, job, "c2");
    cr_assert_eq(job_table_plan(table, job, 2, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert(strstr(err.msg, "stale attempt") != NULL, "%s", err.msg);
    cr_assert_eq(job->pass_len, 0);
    cr_assert_eq(s_pass(table, job, "c2", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->pass_len, 1);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * Analyzer loss: the job moves with its retained passes */

Test(job_table, analyzer_reassignment_while_collecting_keeps_the_passes)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    job_table_set_analyzer(table, job, "a1");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    job_table_set_analyzer(table, job, ""); /* a1 died */
    cr_assert_str_empty(job->analyzer);
    cr_assert_eq(job->state, JOB_COLLECTING);
    cr_assert_eq(job->pass_len, 2, "the broker resends these to the next analyzer");
    job_table_set_analyzer(table, job, "a2");
    cr_assert_str_eq(job->analyzer, "a2");
    cr_assert_str_eq(job->passes[0].pass_key, "ncu.000");
    cr_assert_str_eq(job->passes[1].pass_key, "ncu.001");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.002", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    cr_assert_eq(job->pass_len, 3);
    job_table_destroy(&table);
}

/* Found by farm_faults under load: a job requeued with its analyzer pinned,
 * whose analyzer then died, aborted the broker on an assert. */
Test(job_table, a_requeued_job_whose_analyzer_dies_is_unpinned)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    job_table_set_analyzer(table, job, "a1");
    cr_assert(job_table_requeue(table, job, MAX_ATTEMPTS)); /* c1 died */
    cr_assert_eq(job->state, JOB_QUEUED);
    cr_assert_str_eq(job->analyzer, "a1", "the pin stays across the requeue");
    job_table_set_analyzer(table, job, ""); /* then a1 died */
    cr_assert_str_empty(job->analyzer);
    cr_assert_eq(job_table_first_queued(table), job);
    job_table_destroy(&table);
}

Test(job_table, analyzer_reassignment_while_analyzing_keeps_every_pass)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 2);
    pf_error_t err;
    job_table_set_analyzer(table, job, "a1");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    job_table_set_analyzer(table, job, "");
    job_table_set_analyzer(table, job, "a2");
    cr_assert_eq(job->state, JOB_ANALYZING, "an analyzer's death is not a state change");
    cr_assert_eq(job->pass_len, 2);
    for (size_t i = 0; i < job->pass_len; i++) {
        char want[64];
        snprintf(want, sizeof want, "packed PassOutput ncu.00%zu of job-1", i);
        cr_assert_eq(job->passes[i].len, strlen(want));
        cr_assert_eq(memcmp(job->passes[i].bytes, want, job->passes[i].len), 0, "pass %zu intact", i);
    }
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "from a2", 30);
    cr_assert_eq(job->state, JOB_FINISHED);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * What bad or late peers can send: refused, the job unchanged */

Test(job_table, pass_plan_for_a_job_that_is_not_collecting_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    pf_error_t err;
    cr_assert_eq(job_table_plan(table, job, 3, &err), PF_EPROTO);
    cr_assert(strstr(err.msg, "queued") != NULL, "%s", err.msg);
    cr_assert_eq(job->state, JOB_QUEUED);
    cr_assert_eq(job->pass_count, 0);
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT, "timed out", 1);
    cr_assert_eq(job_table_plan(table, job, 3, &err), PF_EPROTO);
    cr_assert_eq(job->state, JOB_FINISHED);
    job_table_destroy(&table);
}

Test(job_table, pass_plan_of_zero_or_too_many_passes_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    job_table_dispatched(table, job, "c1");
    pf_error_t err;
    cr_assert_eq(job_table_plan(table, job, 0, &err), PF_EBADINPUT);
    cr_assert_eq(job_table_plan(table, job, UINT32_MAX, &err), PF_EBADINPUT);
    cr_assert(strstr(err.msg, "4294967295") != NULL, "%s", err.msg);
    cr_assert_eq(job->pass_count, 0);
    cr_assert_eq(job->state, JOB_COLLECTING);
    job_table_destroy(&table);
}

Test(job_table, pass_plan_smaller_than_the_passes_already_in_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 3);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job_table_plan(table, job, 1, &err), PF_EPROTO);
    cr_assert_eq(job->pass_count, 3);
    cr_assert_eq(job->state, JOB_COLLECTING);
    job_table_destroy(&table);
}

Test(job_table, pass_for_a_queued_or_finished_job_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert(strstr(err.msg, "queued, not collecting") != NULL, "%s", err.msg);
    cr_assert_eq(job->state, JOB_QUEUED);
    s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_TIMED_OUT, "timed out", 1);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert_eq(job->state, JOB_FINISHED);
    cr_assert_eq(job->pass_len, 0);
    job_table_destroy(&table);
}

Test(job_table, pass_before_the_plan_or_beyond_it_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    job_table_dispatched(table, job, "c1");
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert(strstr(err.msg, "beyond the announced plan of 0") != NULL, "%s", err.msg);
    cr_assert_eq(job_table_plan(table, job, 2, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.002", &err), JOB_PASS_REFUSED, "a third pass of a plan of two");
    cr_assert_eq(job->pass_len, 2);
    cr_assert_eq(job->state, JOB_ANALYZING);
    job_table_destroy(&table);
}

Test(job_table, pass_from_another_collector_is_refused)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 2);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c9", "ncu.000", &err), JOB_PASS_REFUSED);
    cr_assert(strstr(err.msg, "another worker") != NULL, "%s", err.msg);
    cr_assert_eq(job->pass_len, 0);
    job_table_destroy(&table);
}

Test(job_table, the_same_pass_twice_is_a_duplicate_kept_once)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 2);
    pf_error_t err;
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, job, "c1", "ncu.000", &err), JOB_PASS_DUPLICATE);
    cr_assert_eq(job->pass_len, 1);
    cr_assert_eq(job->state, JOB_COLLECTING, "a duplicate does not complete the plan");
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(job->state, JOB_ANALYZING);
    /* A collector that resends after the job moved on is acknowledged, not refused. */
    cr_assert_eq(s_pass(table, job, "c1", "ncu.001", &err), JOB_PASS_DUPLICATE);
    cr_assert_eq(job->pass_len, 2);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * Forgetting finished jobs */

static void s_free_item(void **item)
{
    free(*item);
    *item = NULL;
}

Test(job_table, expire_forgets_only_jobs_finished_before_the_cutoff)
{
    job_table_t *table = job_table_new();
    job_t *old = s_submit(table, "job-old");
    job_t *recent = s_submit(table, "job-recent");
    s_submit(table, "job-queued");
    s_finish(table, old, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "old", 100);
    s_finish(table, recent, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "recent", 900);
    zlistx_t *gone = zlistx_new();
    zlistx_set_destructor(gone, s_free_item);
    cr_assert_eq(job_table_expire(table, 500, gone), 1);
    cr_assert_eq(zlistx_size(gone), 1, "the forgotten ids are handed back for the journal");
    zlistx_destroy(&gone);
    cr_assert_null(job_table_find(table, "job-old"));
    cr_assert_not_null(job_table_find(table, "job-recent"));
    cr_assert_not_null(job_table_find(table, "job-queued"), "unfinished jobs are never expired");
    size_t n = 0;
    for (job_t *job = job_table_first(table); job; job = job_table_next(table))
        n++;
    cr_assert_eq(n, 2);
    /* The forgotten id is free again: a new request under it is a new job. */
    job_t *again = NULL;
    cr_assert_eq(s_submit_from(table, "job-old", "full", s_agent1, sizeof s_agent1, &again), JOB_SUBMIT_NEW);
    cr_assert_eq(again->state, JOB_QUEUED);
    job_table_destroy(&table);
}

/* A bound on memory whatever the rate: only the newest finished jobs stay. */
Test(job_table, trim_keeps_the_newest_finished_jobs)
{
    job_table_t *table = job_table_new();
    char id[32];
    for (int i = 0; i < 10; i++) {
        snprintf(id, sizeof id, "job-%d", i);
        job_t *job = s_submit(table, id);
        s_finish(table, job, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "text", 1000 + (i * 7919) % 10);
    }
    s_submit(table, "job-running");
    zlistx_t *gone = zlistx_new();
    zlistx_set_destructor(gone, s_free_item);
    cr_assert_eq(job_table_trim_finished(table, 4, gone), 6);
    cr_expect_eq(zlistx_size(gone), 6);
    cr_expect_eq(job_table_count(table, JOB_FINISHED), 4);
    cr_expect_not_null(job_table_find(table, "job-running"), "unfinished jobs are never trimmed");
    for (job_t *job = job_table_first(table); job; job = job_table_next(table))
        if (job->state == JOB_FINISHED)
            cr_expect_geq(job->finished_ms, 1006, "%s finished at %lld", job->id, (long long) job->finished_ms);
    cr_expect_eq(job_table_trim_finished(table, 4, NULL), 0);
    zlistx_destroy(&gone);
    job_table_destroy(&table);
}

/* The broker hands the table the frame a pass came in: a new pass keeps it
 * (no copy), a duplicate or refused one leaves it with the caller. ASan's leak
 * check sees a frame that is lost or freed twice. */
/* Issue 15, defect 5: retained bytes are counted as jobs move, and a byte
 * budget forgets delivered feedback first, oldest first, then undelivered. */
Test(job_table, a_byte_budget_forgets_delivered_feedback_first_oldest_first)
{
    job_table_t *table = job_table_new();
    char id[32];
    job_t *jobs[6];
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof id, "job-%d", i);
        jobs[i] = s_collecting(table, id, "c1", 1);
        pf_error_t err;
        cr_assert_eq(s_pass(table, jobs[i], "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    }
    cr_assert_gt(job_table_pass_bytes(table), 0, "passes of unfinished jobs are counted");
    for (int i = 0; i < 6; i++)
        s_finish(table, jobs[i], PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "1. atomic_hist", 100 + i);
    cr_assert_eq(job_table_pass_bytes(table), 0);
    size_t each = jobs[0]->feedback_len;
    cr_assert_eq(job_table_feedback_bytes(table), 6 * each);
    /* job-4 and job-1 were delivered; the others not. */
    job_table_delivered(table, jobs[4]);
    job_table_delivered(table, jobs[1]);
    zlistx_t *gone = zlistx_new();
    zlistx_set_destructor(gone, s_free_item);
    cr_assert_eq(job_table_trim_bytes(table, 6 * each, gone), 0, "within the budget: nothing goes");
    cr_assert_eq(job_table_trim_bytes(table, 3 * each, gone), 3);
    cr_assert_str_eq(zlistx_first(gone), "job-1", "delivered, oldest first");
    cr_assert_str_eq(zlistx_next(gone), "job-4");
    cr_assert_str_eq(zlistx_next(gone), "job-0", "then undelivered, oldest first");
    cr_assert_eq(job_table_feedback_bytes(table), 3 * each);
    cr_assert_not_null(job_table_find(table, "job-2"));
    cr_assert_null(job_table_find(table, "job-4"));
    zlistx_destroy(&gone);
    job_table_destroy(&table);
}

/* Issue 15, defect 5: once the journal holds a delivered feedback, the
 * table holds none of it (its length stays, to check what is read back), and
 * the byte budget never forgets such a job for memory it does not take. */
Test(job_table, a_delivered_feedback_the_journal_holds_leaves_memory)
{
    job_table_t *table = job_table_new();
    job_t *stored = s_collecting(table, "stored", "c1", 1);
    job_t *kept = s_collecting(table, "kept", "c1", 1);
    job_t *waiting = s_collecting(table, "waiting", "c1", 1);
    pf_error_t err;
    cr_assert_eq(s_pass(table, stored, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, kept, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_eq(s_pass(table, waiting, "c1", "ncu.000", &err), JOB_PASS_NEW, "%s", err.msg);
    s_finish(table, stored, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "1. atomic_hist", 100);
    s_finish(table, kept, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "1. atomic_hist", 101);
    s_finish(table, waiting, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "1. atomic_hist", 102);
    size_t each = stored->feedback_len;
    cr_assert_eq(job_table_feedback_bytes(table), each + kept->feedback_len + waiting->feedback_len);

    /* Stored, then delivered: the bytes go at the acknowledgement. */
    job_table_stored(table, stored, 4096, each + 40);
    cr_expect_not_null(stored->feedback, "not delivered yet: kept for the delivery");
    job_table_delivered(table, stored);
    cr_expect_null(stored->feedback);
    cr_expect_eq(stored->feedback_len, each, "the length stays");
    /* Delivered without a journal record (no journal): kept in memory. */
    job_table_delivered(table, kept);
    cr_expect_not_null(kept->feedback);
    /* Delivered first, then stored (a record moved or read back): goes too. */
    job_table_delivered(table, waiting);
    job_table_stored(table, waiting, 8192, each + 40);
    cr_expect_null(waiting->feedback);
    cr_assert_eq(job_table_feedback_bytes(table), kept->feedback_len);

    /* Over budget, the one holding bytes goes, not the older stored one. */
    zlistx_t *gone = zlistx_new();
    zlistx_set_destructor(gone, s_free_item);
    cr_assert_eq(job_table_trim_bytes(table, 0, gone), 1);
    cr_assert_str_eq(zlistx_first(gone), "kept");
    cr_expect_not_null(job_table_find(table, "stored"));
    cr_expect_eq(job_table_feedback_bytes(table), 0);
    zlistx_destroy(&gone);
    job_table_destroy(&table);
}

Test(job_table, a_new_pass_keeps_its_frame_and_a_duplicate_leaves_it)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 2);
    static const char envelope[] = "hdr:packed PassOutput ncu.000";
    zframe_t *frame = zframe_new(envelope, sizeof envelope - 1);
    const uint8_t *inside = zframe_data(frame) + 4;
    size_t len = sizeof envelope - 1 - 4;
    pf_error_t err;
    cr_assert_eq(job_table_pass(table, job, "c1", "ncu.000", PROFEED__PROFILER__PROFILER_NCU, inside, len, &frame,
                                &err), JOB_PASS_NEW, "%s", err.msg);
    cr_assert_null(frame, "the table took the frame");
    cr_assert_eq(job->passes[0].bytes, inside, "kept where it came, not copied");
    cr_assert_eq(memcmp(job->passes[0].bytes, "packed PassOutput ncu.000", len), 0);

    zframe_t *again = zframe_new(envelope, sizeof envelope - 1);
    cr_assert_eq(job_table_pass(table, job, "c1", "ncu.000", PROFEED__PROFILER__PROFILER_NCU,
                                zframe_data(again) + 4, len, &again, &err), JOB_PASS_DUPLICATE);
    cr_assert_not_null(again, "a duplicate is not kept");
    cr_assert_eq(job_table_pass(table, job, "c2", "ncu.001", PROFEED__PROFILER__PROFILER_NCU,
                                zframe_data(again) + 4, len, &again, &err), JOB_PASS_REFUSED);
    cr_assert_not_null(again, "nor a refused one");
    zframe_destroy(&again);
    job_table_destroy(&table);
}

/* ---------------------------------------------------------------------------
 * The broker changes a job only through the table (issue 17 step 4) */

Test(job_table, a_streamed_pass_is_in_at_the_receipt_of_its_last_chunk_and_no_other)
{
    job_table_t *table = job_table_new();
    job_t *job = s_collecting(table, "job-1", "c1", 1);
    cr_expect_eq(job_table_chunk_in(table, job, 1000), 1000);
    cr_expect_eq(job_table_chunk_in(table, job, 24), 1024, "the attempt's raw bytes add up");
    job_table_streaming(table, job, PROFEED__PROFILER__PROFILER_UNSPECIFIED);
    cr_expect(job->streamed);
    cr_expect_eq(job->profiler, PROFEED__PROFILER__PROFILER_UNSPECIFIED, "no chunk said its profiler yet");
    job_table_streaming(table, job, PROFEED__PROFILER__PROFILER_NCU);
    cr_expect_eq(job->profiler, PROFEED__PROFILER__PROFILER_NCU, "the first chunk that says it names the job's");
    job_table_streaming(table, job, PROFEED__PROFILER__PROFILER_VTUNE);
    cr_expect_eq(job->profiler, PROFEED__PROFILER__PROFILER_NCU, "and later ones do not change it");
    job_table_stream_sent(table, job, "ncu.000", 7, PROFEED__PROFILER__PROFILER_UNSPECIFIED);
    job_pass_result_t rc = JOB_PASS_REFUSED;
    pf_error_t err;
    pf_error_clear(&err);
    cr_expect_not(job_table_stream_received(table, job, "ncu.000", 6, &rc, &err), "an earlier chunk's receipt");
    cr_expect_not(job_table_stream_received(table, job, "ncu.001", 7, &rc, &err), "another pass's receipt");
    cr_expect_eq(job->state, JOB_COLLECTING);
    cr_assert(job_table_stream_received(table, job, "ncu.000", 7, &rc, &err));
    cr_expect_eq(rc, JOB_PASS_NEW, "%s", err.msg);
    cr_expect_eq(job->state, JOB_ANALYZING, "the plan's only pass is in");
    cr_expect_eq(job->passes[0].len, 0, "nothing of a streamed pass is kept");
    cr_expect_not(job_table_stream_received(table, job, "ncu.000", 7, &rc, &err), "a receipt twice is no pass");
    job_table_destroy(&table);
}

Test(job_table, an_owner_too_long_for_the_table_is_refused_and_leaves_the_owner)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    cr_assert(job_table_set_owner(table, job, "key:abc"));
    cr_expect_str_eq(job->owner, "key:abc");
    char long_owner[JOB_OWNER_LEN + 1];
    memset(long_owner, 'k', sizeof long_owner - 1);
    long_owner[sizeof long_owner - 1] = '\0';
    cr_expect_not(job_table_set_owner(table, job, long_owner));
    cr_expect_str_eq(job->owner, "key:abc");
    job_table_set_agent(table, job, s_agent2, sizeof s_agent2);
    cr_expect_eq(job->agent_len, sizeof s_agent2);
    cr_expect_eq(memcmp(job->agent, s_agent2, sizeof s_agent2), 0, "the feedback goes where the agent is now");
    job_table_destroy(&table);
}

Test(job_table, a_dispatch_read_back_from_the_journal_keeps_its_attempt_number)
{
    job_table_t *table = job_table_new();
    job_t *job = s_submit(table, "job-1");
    job_table_dispatched_as(table, job, "c1", 3);
    cr_expect_eq(job->state, JOB_COLLECTING);
    cr_expect_eq(job->attempt, 3);
    cr_expect_str_eq(job->collector, "c1");
    job_table_sent(table, job, 1234);
    cr_expect_eq(job->dispatched_ms, 1234);
    cr_expect_eq(job->stage_ms, 1234);
    job_table_stage(table, job, 2000);
    cr_expect_eq(job->stage_ms, 2000);
    cr_expect_eq(job->dispatched_ms, 1234, "a pass moves the stage clock only");
    job_table_destroy(&table);
}
