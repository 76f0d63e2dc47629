/* The profeed-analyzer worker and FeedbackShape.collated: the field survives
 * the wire, and a worker (its real loop, on an actor) puts the collated
 * per-launch data in Feedback.json only when the job asks, and leaves it out
 * with a note when it would pass the worker's message limit. The test plays
 * the broker: a ROUTER on ipc:// that reads Ready and sends one Dispatch. */
#include <criterion/criterion.h>
#include <czmq.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ncu_metrics.h"
#include "test_util.h"
#include "textbuf.h"
#include "wire.h"
#include "wire_zmq.h"
#include "worker.h"

#define CAPTURE PF_FIXTURE_DIR "/ncu/h200/full_raw.csv"
#define WAIT_MS 20000

typedef struct {
    zsock_t *router;
    zactor_t *worker;
    zframe_t *peer;
    worker_config_t config;
    char endpoint[128];
} fake_broker_t;

/* A worker connected to a ROUTER of the test's, its Ready read; its
 * memory-mb as `memory_limit` bytes (0: the default). */
static void s_start_with(fake_broker_t *b, size_t max_msg, size_t memory_limit)
{
    static int serial;
    snprintf(b->endpoint, sizeof b->endpoint, "ipc:///tmp/profeed-test-worker-%ld-%d.ipc", (long) getpid(),
             serial++);
    b->router = zsock_new_router(b->endpoint);
    cr_assert_not_null(b->router, "cannot bind %s", b->endpoint);
    wire_zmq_configure(b->router, WIRE_MAX_MSG, 100);
    worker_config_default(&b->config);
    b->config.broker_endpoint = b->endpoint;
    b->config.worker_id = "analyzer-test";
    b->config.max_msg = max_msg;
    if (memory_limit)
        b->config.memory_limit = memory_limit;
    b->worker = zactor_new(worker_actor, &b->config);
    cr_assert_not_null(b->worker, "the worker did not start");
    zsock_set_rcvtimeo(b->router, WAIT_MS);
    pf_error_t err;
    Profeed__Envelope *ready = wire_zmq_recv(b->router, true, &b->peer, WIRE_MAX_MSG, NULL, &err);
    cr_assert_not_null(ready, "no Ready from the worker: %s", err.msg);
    cr_assert_eq(ready->body_case, PROFEED__ENVELOPE__BODY_READY);
    wire_envelope_destroy(&ready);
}

static void s_start(fake_broker_t *b, size_t max_msg)
{
    s_start_with(b, max_msg, 0);
}

static void s_stop(fake_broker_t *b)
{
    zactor_destroy(&b->worker);
    zframe_destroy(&b->peer);
    zsock_destroy(&b->router);
}

/* Sends one ncu pass of `csv` as a whole job and returns the Feedback's
 * envelope (caller destroys). `shape` NULL: the job asked for no shape. */
static Profeed__Envelope *s_analyze(fake_broker_t *b, const char *job_id, const char *csv, size_t len,
                                    Profeed__FeedbackShape *shape)
{
    Profeed__File file;
    profeed__file__init(&file);
    file.name = "ncu.000.csv";
    file.has_content = 1;
    file.content.data = (uint8_t *) csv;
    file.content.len = len;
    Profeed__File *files[1] = {&file};
    Profeed__WorkerInfo info;
    profeed__worker_info__init(&info);
    info.host = "gpu-host";
    Profeed__PassOutput pass;
    profeed__pass_output__init(&pass);
    pass.job_id = (char *) job_id;
    pass.pass_key = "ncu.000";
    pass.has_profiler = 1;
    pass.profiler = PROFEED__PROFILER__PROFILER_NCU;
    pass.files = files;
    pass.n_files = 1;
    pass.has_exit_status = 1;
    pass.exit_status = 0;
    pass.worker = &info;
    Profeed__Dispatch d;
    profeed__dispatch__init(&d);
    d.has_attempt = 1;
    d.attempt = 1;
    d.work_case = PROFEED__DISPATCH__WORK_PASS_OUTPUT;
    d.pass_output = &pass;
    d.has_pass_count = 1;
    d.pass_count = 1;
    d.shape = shape;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_DISPATCH;
    env.dispatch = &d;
    pf_error_t err;
    cr_assert_eq(wire_zmq_send(b->router, b->peer, &env, WIRE_MAX_MSG, NULL, &err), PF_OK, "%s", err.msg);
    for (;;) {
        zframe_t *peer = NULL;
        Profeed__Envelope *got = wire_zmq_recv(b->router, true, &peer, WIRE_MAX_MSG, NULL, &err);
        zframe_destroy(&peer);
        cr_assert_not_null(got, "no feedback from the worker for %s: %s", job_id, err.msg);
        if (got->body_case == PROFEED__ENVELOPE__BODY_FEEDBACK)
            return got;
        cr_assert_neq(got->body_case, PROFEED__ENVELOPE__BODY_ERROR, "the worker refused %s: %s", job_id,
                      got->error->text ? got->error->text : "");
        wire_envelope_destroy(&got);
    }
}

static bool s_has_note(const Profeed__Feedback *fb, const char *part)
{
    for (size_t i = 0; i < fb->n_notes; i++)
        if (strstr(fb->notes[i], part))
            return true;
    return false;
}

Test(worker, collated_survives_the_wire_in_a_request_and_a_dispatch)
{
    Profeed__FeedbackShape shape;
    profeed__feedback_shape__init(&shape);
    shape.has_collated = 1;
    shape.collated = 1;
    size_t len;
    char *csv = test_read_file(CAPTURE, &len);
    Profeed__File kernel, problem;
    profeed__file__init(&kernel);
    profeed__file__init(&problem);
    kernel.name = "kernel.py";
    kernel.has_content = problem.has_content = 1;
    kernel.content.data = (uint8_t *) "def kernel_function(): pass\n";
    kernel.content.len = strlen((const char *) kernel.content.data);
    problem.name = "problem.py";
    problem.content = kernel.content;
    Profeed__KernelProblem kj;
    profeed__kernel_problem__init(&kj);
    kj.kernel_file = &kernel;
    kj.problem_file = &problem;
    Profeed__JobRequest req;
    profeed__job_request__init(&req);
    req.job_id = "collated-1";
    req.has_language = 1;
    req.language = PROFEED__LANGUAGE__LANGUAGE_TRITON;
    req.target_case = PROFEED__JOB_REQUEST__TARGET_KERNEL;
    req.kernel = &kj;
    req.shape = &shape;
    size_t size = 0;
    pf_error_t err;
    uint8_t *bytes = wire_job_request_pack(&req, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__JobRequest *back = wire_job_request_unpack(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert_not_null(back->shape);
    cr_expect(back->shape->has_collated && back->shape->collated, "JobRequest.shape.collated was lost");
    /* The broker hands the request's shape on in Dispatch.shape. */
    Profeed__Dispatch d;
    profeed__dispatch__init(&d);
    d.work_case = PROFEED__DISPATCH__WORK_JOB;
    d.job = back;
    d.shape = back->shape;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_DISPATCH;
    env.dispatch = &d;
    size_t env_size = 0;
    uint8_t *env_bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &env_size, &err);
    cr_assert_not_null(env_bytes, "%s", err.msg);
    Profeed__Envelope *env_back = wire_envelope_unpack(env_bytes, env_size, WIRE_MAX_MSG, &err);
    cr_assert_not_null(env_back, "%s", err.msg);
    cr_expect(env_back->dispatch->shape && env_back->dispatch->shape->has_collated &&
                  env_back->dispatch->shape->collated,
              "Dispatch.shape.collated was lost");
    wire_envelope_destroy(&env_back);
    free(env_bytes);
    wire_job_request_destroy(&back);
    free(bytes);
    free(csv);
}

Test(worker, collated_is_in_the_feedback_json_only_when_the_job_asks)
{
    fake_broker_t b = {0};
    s_start(&b, WIRE_MAX_MSG);
    size_t len;
    char *csv = test_read_file(CAPTURE, &len);
    Profeed__Envelope *plain = s_analyze(&b, "collated-no", csv, len, NULL);
    Profeed__FeedbackShape shape;
    profeed__feedback_shape__init(&shape);
    shape.has_collated = 1;
    shape.collated = 1;
    Profeed__Envelope *asked = s_analyze(&b, "collated-yes", csv, len, &shape);

    json_error_t jerr;
    json_t *doc = json_loads(plain->feedback->json, 0, &jerr);
    cr_assert_not_null(doc, "Feedback.json: %s", jerr.text);
    cr_expect_null(json_object_get(doc, "collated"), "collated data nobody asked for");
    json_decref(doc);

    doc = json_loads(asked->feedback->json, 0, &jerr);
    cr_assert_not_null(doc, "Feedback.json: %s", jerr.text);
    json_t *launches = json_object_get(json_object_get(doc, "collated"), "launches");
    cr_assert(json_is_array(launches), "no collated launches in: %.300s", asked->feedback->json);
    cr_expect_eq(json_array_size(launches), 9, "the capture's 9 launches");
    /* The last launch, with the capture's own (normalised) values. */
    json_t *last = json_array_get(launches, json_array_size(launches) - 1);
    cr_expect_str_eq(json_string_value(json_object_get(last, "kernel")),
                     "atomic_hist(const int *, int *, unsigned long)");
    json_t *sm = json_object_get(json_object_get(last, "metrics"), "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    cr_expect(json_is_number(sm) && json_number_value(sm) == 0.524209, "sm__throughput of the last launch");
    /* ... and its row as ncu printed it, with the units row: what a reader of
     * the CSV itself (KernelAgent) would see. */
    json_t *raw = json_object_get(last, "raw");
    cr_expect_str_eq(json_string_value(json_object_get(raw, "dram__bytes_read.sum")), "0.268450");
    cr_expect_str_eq(json_string_value(json_object_get(raw, "Kernel Name")),
                     "atomic_hist(const int *, int *, unsigned long)");
    json_t *units = json_object_get(json_object_get(doc, "collated"), "raw_units");
    cr_expect_str_eq(json_string_value(json_object_get(units, "dram__bytes_read.sum")), "Gbyte");
    cr_expect_eq(json_object_size(raw), json_object_size(units), "a cell for every column of the raw page");
    cr_expect(!s_has_note(asked->feedback, "collated"), "a note about collated data that fits");
    /* Everything else is the same feedback. */
    cr_expect_str_eq(asked->feedback->text, plain->feedback->text);
    cr_expect_eq(asked->feedback->n_findings, plain->feedback->n_findings);
    json_decref(doc);
    wire_envelope_destroy(&plain);
    wire_envelope_destroy(&asked);
    free(csv);
    s_stop(&b);
}

/* A raw-page capture whose collated data outweighs the CSV: many launches,
 * each with every metric profeed keeps, every value "1" (a CSV cell of 4
 * bytes; a collated metric of 50 or so). Caller frees. */
static char *s_wide_capture(int launches, size_t *len_p)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_append(&tb, "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\"");
    for (int m = 0; m < NM__COUNT; m++)
        textbuf_printf(&tb, ",\"%s\"", ncu_metric_info((ncu_metric_t) m)->name);
    textbuf_append(&tb, "\n\"\",\"\",\"\",\"\"");
    for (int m = 0; m < NM__COUNT; m++)
        textbuf_append(&tb, ",\"\"");
    textbuf_append(&tb, "\n");
    for (int i = 0; i < launches; i++) {
        textbuf_printf(&tb, "\"%d\",\"k\",\"(1, 1, 1)\",\"(1, 1, 1)\"", i);
        for (int m = 0; m < NM__COUNT; m++)
            textbuf_append(&tb, ",\"1\"");
        textbuf_append(&tb, "\n");
    }
    cr_assert(!tb.failed, "out of memory building the capture");
    *len_p = tb.len;
    return textbuf_take(&tb);
}

Test(worker, collated_past_the_message_limit_is_left_out_with_a_note)
{
    size_t len;
    char *csv = s_wide_capture(2000, &len);
    /* Room for the pass and the feedback, not for the collated launches. */
    size_t limit = len + 256 * 1024;
    fake_broker_t b = {0};
    s_start(&b, limit);
    Profeed__FeedbackShape shape;
    profeed__feedback_shape__init(&shape);
    shape.has_collated = 1;
    shape.collated = 1;
    Profeed__Envelope *env = s_analyze(&b, "collated-big", csv, len, &shape);
    const Profeed__Feedback *fb = env->feedback;
    cr_expect_eq(fb->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "the job still succeeds");
    cr_expect_gt(fb->n_kernels, 0, "with its findings");
    json_error_t jerr;
    json_t *doc = json_loads(fb->json, 0, &jerr);
    cr_assert_not_null(doc, "Feedback.json: %s", jerr.text);
    cr_expect_null(json_object_get(doc, "collated"), "collated data past the limit was sent");
    cr_expect(s_has_note(fb, "collated per-launch data was left out"), "no note says why collated is missing");
    cr_expect(strstr(fb->text, "collated per-launch data was left out"), "the text does not say it either");
    char limit_text[32];
    snprintf(limit_text, sizeof limit_text, "limit of %zu", limit);
    cr_expect(s_has_note(fb, limit_text), "the note names the limit");
    json_decref(doc);
    wire_envelope_destroy(&env);
    free(csv);
    s_stop(&b);
}

/* Issue 20: the memory one job's analysis may hold is the analyzer's
 * memory-mb; a capture past it gets an error feedback naming the setting and
 * its value, not a crash or a cut result, and the next job is served. */
Test(worker, a_job_past_memory_mb_gets_an_error_naming_the_setting)
{
    size_t len;
    char *csv = s_wide_capture(3000, &len); /* 3,000 launches: about 3 MiB of collated data */
    fake_broker_t b = {0};
    s_start_with(&b, WIRE_MAX_MSG, (size_t) 1 << 20);
    Profeed__Envelope *over = s_analyze(&b, "over-budget", csv, len, NULL);
    cr_assert_eq(over->feedback->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_BAD_INPUT, "status %d",
                 (int) over->feedback->status);
    cr_expect(strstr(over->feedback->text, "may hold at most 1 MiB (the analyzer's memory-mb)"), "%s",
              over->feedback->text);
    cr_expect(strstr(over->feedback->text, "ncu.000.csv: line "), "the error does not say where: %s",
              over->feedback->text);
    /* A capture within it is served by the same analyzer. */
    size_t small_len;
    char *small = test_read_file(CAPTURE, &small_len);
    Profeed__Envelope *fits = s_analyze(&b, "within-budget", small, small_len, NULL);
    cr_expect_eq(fits->feedback->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK);
    wire_envelope_destroy(&over);
    wire_envelope_destroy(&fits);
    s_stop(&b);
    /* The default (1024 MiB) takes the same capture. */
    s_start(&b, WIRE_MAX_MSG);
    Profeed__Envelope *fine = s_analyze(&b, "default-budget", csv, len, NULL);
    cr_expect_eq(fine->feedback->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK, "%s", fine->feedback->text);
    wire_envelope_destroy(&fine);
    s_stop(&b);
    free(small);
    free(csv);
}
