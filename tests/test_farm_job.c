/* profeed_farm_job_t (client/profeed_client.h): a job set by keys reaches
 * the broker as the same JobRequest a profeed_job_t with those fields makes,
 * a key set to "" is unset again, and bad keys and values are named. The
 * broker is a stand-in on inproc (an actor in this process): it answers each
 * Submit with an Ack and a Feedback whose text lists what the request held. */
#include <criterion/criterion.h>
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "profeed_client.h"
#include "wire.h"
#include "wire_zmq.h"

static void s_send(zsock_t *sock, zframe_t *peer, Profeed__Envelope *env)
{
    pf_error_t err;
    cr_assert_eq(wire_zmq_send(sock, peer, env, WIRE_MAX_MSG, NULL, &err), PF_OK, "%s", err.msg);
}

/* What a request held, one "key=value" a field, in a fixed order. */
static void s_describe(const Profeed__JobRequest *req, char *out, size_t cap)
{
    size_t n = 0;
#define ADD(...) (n += (size_t) snprintf(out + n, n < cap ? cap - n : 0, __VA_ARGS__))
    ADD("agent=%s lang=%d arch=%s", req->agent_id ? req->agent_id : "-", req->language,
        req->gpu_arch && *req->gpu_arch ? req->gpu_arch : "-");
    ADD(" profiler=%s", req->has_profiler ? "set" : "-");
    if (req->target_case == PROFEED__JOB_REQUEST__TARGET_COMMAND) {
        ADD(" argv=");
        for (size_t i = 0; i < req->command->n_argv; i++)
            ADD("%s%s", i ? "," : "", req->command->argv[i]);
    } else if (req->target_case == PROFEED__JOB_REQUEST__TARGET_KERNEL) {
        const Profeed__KernelProblem *k = req->kernel;
        ADD(" kernel=%s:%zu", k->kernel_file->name, k->kernel_file->content.len);
        if (k->problem_file)
            ADD(" problem=%s:%zu", k->problem_file->name, k->problem_file->content.len);
    }
    if (req->n_passes)
        ADD(" plan=%s", req->passes[0]->name);
    if (req->has_timeout_s)
        ADD(" timeout=%u", req->timeout_s);
    if (req->metadata && req->metadata->has_round)
        ADD(" round=%u", req->metadata->round);
    if (req->filter)
        ADD(" regex=%s nvtx=%s skip=%u count=%u", req->filter->kernel_regex ? req->filter->kernel_regex : "-",
            req->filter->nvtx_range ? req->filter->nvtx_range : "-", req->filter->launch_skip,
            req->filter->launch_count);
    if (req->shape)
        ADD(" top=%u max_chars=%u max_tokens=%u min_share=%s%g", req->shape->top, req->shape->max_chars,
            req->shape->max_tokens, req->shape->has_min_share ? "" : "unset:", req->shape->min_share);
    if (req->has_source && req->source)
        ADD(" source");
    if (req->baseline_job_id && *req->baseline_job_id)
        ADD(" baseline=%s", req->baseline_job_id);
#undef ADD
}

static void s_broker(zsock_t *pipe, void *arg)
{
    zsock_t *sock = zsock_new(ZMQ_ROUTER);
    cr_assert_eq(zsock_bind(sock, "%s", (const char *) arg), 0);
    zsock_signal(pipe, 0);
    zpoller_t *poller = zpoller_new(pipe, sock, NULL);
    while (zpoller_wait(poller, -1) == sock) {
        zframe_t *peer = NULL;
        pf_error_t err;
        Profeed__Envelope *in = wire_zmq_recv(sock, true, &peer, WIRE_MAX_MSG, NULL, &err);
        if (in && in->body_case == PROFEED__ENVELOPE__BODY_SUBMIT) {
            Profeed__Ack ack;
            profeed__ack__init(&ack);
            ack.job_id = in->submit->job_id;
            Profeed__Envelope env;
            wire_envelope_init(&env);
            env.body_case = PROFEED__ENVELOPE__BODY_ACK;
            env.ack = &ack;
            s_send(sock, peer, &env);
            char text[2048];
            s_describe(in->submit, text, sizeof text);
            Profeed__Feedback fb;
            profeed__feedback__init(&fb);
            fb.job_id = in->submit->job_id;
            fb.has_status = 1;
            fb.status = PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK;
            fb.text = text;
            wire_envelope_init(&env);
            env.body_case = PROFEED__ENVELOPE__BODY_FEEDBACK;
            env.feedback = &fb;
            s_send(sock, peer, &env);
        }
        wire_envelope_destroy(&in);
        zframe_destroy(&peer);
    }
    zpoller_destroy(&poller);
    zsock_destroy(&sock);
}

/* Runs `job` against a fresh stand-in broker; returns the feedback text (the caller frees it). */
static char *s_run(profeed_farm_job_t *job, profeed_result_t want)
{
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "inproc://farm-job-%p", (void *) job);
    zactor_t *broker = zactor_new(s_broker, endpoint);
    profeed_farm_t *farm = profeed_farm_new(endpoint, 200, 3);
    cr_assert_not_null(farm);
    char *output = NULL, *error = NULL, id[129];
    profeed_result_t rc = profeed_farm_job_run(farm, job, 10000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error, id);
    cr_assert_eq(rc, want, "result %d: %s", (int) rc, error ? error : "");
    free(error);
    profeed_farm_destroy(&farm);
    zactor_destroy(&broker);
    return output;
}

Test(farm_job, every_key_reaches_the_request)
{
    profeed_farm_job_t *job = profeed_farm_job_new();
    cr_assert_not_null(job);
    const char *keys[][2] = {
        {"agent_id", "agent-7"}, {"language", "cuda"}, {"gpu_arch", "sm_90"},   {"profiler", "ncu"},
        {"plan", "full"},        {"timeout_s", "30"},  {"round", "2"},          {"kernel_regex", "^k"},
        {"nvtx_range", "r/"},    {"launch_skip", "1"}, {"launch_count", "4"},   {"top", "3"},
        {"max_chars", "500"},    {"min_share", "0.1"}, {"source", "true"},      {"baseline_job_id", "b-1"},
        {"max_tokens", "100"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_eq(profeed_farm_job_set(job, keys[i][0], keys[i][1]), PROFEED_OK, "%s: %s", keys[i][0],
                     profeed_farm_job_error(job));
    cr_assert_eq(profeed_farm_job_add_arg(job, "./bench"), PROFEED_OK);
    cr_assert_eq(profeed_farm_job_add_arg(job, "-n"), PROFEED_OK);
    char *text = s_run(job, PROFEED_OK);
    cr_expect_str_eq(text, "agent=agent-7 lang=1 arch=sm_90 profiler=set argv=./bench,-n plan=full timeout=30 round=2 "
                           "regex=^k nvtx=r/ skip=1 count=4 top=3 max_chars=500 max_tokens=100 min_share=0.1 source "
                           "baseline=b-1");
    free(text);

    /* "" unsets a key again; the words stay. */
    const char *unset[] = {"agent_id", "gpu_arch", "profiler", "plan", "timeout_s", "round", "kernel_regex",
                           "nvtx_range", "launch_skip", "launch_count", "top", "max_chars", "max_tokens", "min_share",
                           "source", "baseline_job_id"};
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
        cr_assert_eq(profeed_farm_job_set(job, unset[i], ""), PROFEED_OK, "%s", unset[i]);
    text = s_run(job, PROFEED_OK);
    cr_expect_str_eq(text, "agent=- lang=1 arch=- profiler=- argv=./bench,-n");
    free(text);
    profeed_farm_job_destroy(&job);
    cr_expect_null(job);
}

Test(farm_job, a_kernel_and_problem_job_carries_its_files)
{
    profeed_farm_job_t *job = profeed_farm_job_new();
    profeed_farm_job_set(job, "language", "pytorch");
    cr_assert_eq(profeed_farm_job_set_file(job, "kernel", "k.py", "def kernel_function(): pass\n", 28), PROFEED_OK);
    cr_assert_eq(profeed_farm_job_set_file(job, "problem", "p.py", "class Model: pass\n", 18), PROFEED_OK);
    /* A second kernel replaces the first. */
    cr_assert_eq(profeed_farm_job_set_file(job, "kernel", "k2.py", "x = 1\n", 6), PROFEED_OK);
    char *text = s_run(job, PROFEED_OK);
    cr_expect_str_eq(text, "agent=- lang=3 arch=- profiler=- kernel=k2.py:6 problem=p.py:18");
    free(text);
    profeed_farm_job_destroy(&job);
}

Test(farm_job, bad_keys_and_values_are_named)
{
    profeed_farm_job_t *job = profeed_farm_job_new();
    struct {
        const char *key, *value, *says;
    } bad[] = {
        {"colour", "red", "unknown job key \"colour\""},
        {"round", "-1", "job key round: \"-1\" is not a whole number"},
        {"round", " 2", "is not a whole number"},
        {"timeout_s", "4294967296", "from 0 to 4294967295"},
        {"top", "3x", "\"3x\" is not a whole number"},
        {"min_share", "1.5", "min_share: \"1.5\" is not a fraction between 0 and 1"},
        {"min_share", "nan", "is not a fraction"},
        {"source", "yes", "source: \"yes\" is not 0, 1, true or false"},
        {NULL, "x", "none given"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(profeed_farm_job_set(job, bad[i].key, bad[i].value), PROFEED_BAD_INPUT, "%s", bad[i].value);
        cr_expect(strstr(profeed_farm_job_error(job), bad[i].says), "%s: %s", bad[i].says,
                  profeed_farm_job_error(job));
    }
    cr_expect_eq(profeed_farm_job_set_file(job, "data", "d.bin", "x", 1), PROFEED_BAD_INPUT);
    cr_expect(strstr(profeed_farm_job_error(job), "not kernel or problem"));
    cr_expect_eq(profeed_farm_job_set_file(job, "kernel", "a/k.py", "x", 1), PROFEED_BAD_INPUT);
    cr_expect(strstr(profeed_farm_job_error(job), "plain file name"));
    cr_expect_eq(profeed_farm_job_set_file(job, "kernel", "..", "x", 1), PROFEED_BAD_INPUT);
    cr_expect(strstr(profeed_farm_job_error(job), "kernel file: file name \"..\""), "%s", profeed_farm_job_error(job));
    cr_expect_eq(profeed_farm_job_set_file(job, "problem", "", "x", 1), PROFEED_BAD_INPUT);
    cr_expect_eq(profeed_farm_job_set_file(job, "kernel", "k.py", NULL, 5), PROFEED_BAD_INPUT);
    cr_expect(strstr(profeed_farm_job_error(job), "given as NULL"));
    cr_expect_eq(profeed_farm_job_add_arg(job, NULL), PROFEED_BAD_INPUT);
    for (int i = 0; i < 1024; i++)
        cr_assert_eq(profeed_farm_job_add_arg(job, "w"), PROFEED_OK);
    cr_expect_eq(profeed_farm_job_add_arg(job, "w"), PROFEED_BAD_INPUT);
    cr_expect(strstr(profeed_farm_job_error(job), "more than 1024 words"));
    /* A good call clears the error. */
    cr_expect_eq(profeed_farm_job_set(job, "round", "3"), PROFEED_OK);
    cr_expect_str_eq(profeed_farm_job_error(job), "");
    profeed_farm_job_destroy(&job);
}

Test(farm_job, a_job_with_nothing_to_profile_is_refused_before_sending)
{
    profeed_farm_job_t *job = profeed_farm_job_new();
    profeed_farm_job_set(job, "language", "cuda");
    profeed_farm_t *farm = profeed_farm_new("inproc://farm-job-nobody", 200, 3);
    cr_assert_not_null(farm);
    char *output = NULL, *error = NULL;
    profeed_result_t rc = profeed_farm_job_run(farm, job, 1000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error, NULL);
    cr_expect_eq(rc, PROFEED_BAD_INPUT);
    cr_expect(error && strstr(error, "nothing to profile"), "%s", error ? error : "(none)");
    free(output);
    free(error);
    /* A problem file alone is not a kernel job. */
    profeed_farm_job_add_arg(job, "./bench");
    cr_assert_eq(profeed_farm_job_set_file(job, "problem", "p.py", "class Model: pass\n", 18), PROFEED_OK);
    output = error = NULL;
    rc = profeed_farm_job_run(farm, job, 1000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error, NULL);
    cr_expect_eq(rc, PROFEED_BAD_INPUT);
    cr_expect(error && strstr(error, "no kernel file"), "%s", error ? error : "(none)");
    free(output);
    free(error);
    profeed_farm_destroy(&farm);
    profeed_farm_job_destroy(&job);
}

Test(farm_job, a_job_id_the_wire_would_refuse_is_named_not_cut)
{
    profeed_farm_job_t *job = profeed_farm_job_new();
    profeed_farm_job_set(job, "language", "cuda");
    profeed_farm_job_add_arg(job, "./bench");
    char long_id[201];
    memset(long_id, 'a', 200);
    long_id[200] = '\0';
    const char *ids[] = {long_id, "has space", "-leading-dash"};
    profeed_farm_t *farm = profeed_farm_new("inproc://farm-job-nobody", 200, 3);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        cr_assert_eq(profeed_farm_job_set(job, "job_id", ids[i]), PROFEED_OK);
        char *output = NULL, *error = NULL, id[129] = "x";
        profeed_result_t rc = profeed_farm_job_run(farm, job, 1000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error,
                                                   id);
        cr_expect_eq(rc, PROFEED_BAD_INPUT, "%s", ids[i]);
        cr_expect(error && strstr(error, "job id"), "%s", error ? error : "(none)");
        cr_expect_str_eq(id, "", "no id is given back for a job never sent");
        free(output);
        free(error);
    }
    profeed_farm_destroy(&farm);
    profeed_farm_job_destroy(&job);
}
