/* The client library's farm calls (client/client_farm.c) against a stand-in
 * broker that delivers every Feedback twice, and once more for each
 * Heartbeat that names a finished job, as a real broker does when a heartbeat
 * crosses the feedback (the protocol allows it: at least once). The caller
 * must get exactly one feedback per job, its own, whatever the duplicates
 * (issue 15, defect 8). */
#include <criterion/criterion.h>
#include <czmq.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profeed_client.h"
#include "wire.h"
#include "wire_zmq.h"

static void s_send(zsock_t *sock, zframe_t *peer, Profeed__Envelope *env)
{
    pf_error_t err;
    cr_assert_eq(wire_zmq_send(sock, peer, env, WIRE_MAX_MSG, NULL, &err), PF_OK, "%s", err.msg);
}

static void s_feedback(zsock_t *sock, zframe_t *peer, const char *job_id)
{
    char text[128];
    snprintf(text, sizeof text, "feedback of %s", job_id);
    Profeed__Feedback fb;
    profeed__feedback__init(&fb);
    fb.job_id = (char *) job_id;
    fb.has_status = 1;
    fb.status = PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK;
    fb.text = text;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_FEEDBACK;
    env.feedback = &fb;
    s_send(sock, peer, &env);
}

/* The stand-in broker: acks each job, answers with its feedback twice, and
 * again to every heartbeat naming it. Counts the acks it gets in *args. */
static void s_broker(zsock_t *pipe, void *args)
{
    int *acks = args;
    zsock_t *sock = zsock_new(ZMQ_ROUTER);
    if (!sock || zsock_bind(sock, "ipc://@profeed-test-client-farm-%d", (int) getpid()) != 0) {
        zsock_destroy(&sock);
        zsock_signal(pipe, 1);
        return;
    }
    zsock_signal(pipe, 0);
    zpoller_t *poller = zpoller_new(pipe, sock, NULL);
    while (true) {
        void *which = zpoller_wait(poller, -1);
        if (which != sock)
            break; /* $TERM, or interrupted */
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
            s_feedback(sock, peer, in->submit->job_id);
            s_feedback(sock, peer, in->submit->job_id);
        } else if (in && in->body_case == PROFEED__ENVELOPE__BODY_HEARTBEAT) {
            for (size_t i = 0; i < in->heartbeat->n_job_ids; i++)
                s_feedback(sock, peer, in->heartbeat->job_ids[i]);
        } else if (in && in->body_case == PROFEED__ENVELOPE__BODY_ACK) {
            (*acks)++;
        }
        wire_envelope_destroy(&in);
        zframe_destroy(&peer);
    }
    zpoller_destroy(&poller);
    zsock_destroy(&sock);
}

Test(client_farm, each_job_gets_one_feedback_its_own_whatever_the_duplicates)
{
    int acks = 0;
    zactor_t *broker = zactor_new(s_broker, &acks);
    cr_assert_not_null(broker);
    char endpoint[128];
    snprintf(endpoint, sizeof endpoint, "ipc://@profeed-test-client-farm-%d", (int) getpid());
    char *error = NULL;
    profeed_farm_t *farm = profeed_farm_open(endpoint, 20, 50, NULL, &error);
    cr_assert_not_null(farm, "%s", error ? error : "");
    const char *argv[] = {"kernels"};
    char id[64];
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "dup-%02d", i);
        profeed_job_t job = {.job_id = id, .language = "cuda", .argv = argv, .argc = 1};
        char *output = NULL;
        /* Between jobs the duplicates of the last one are already queued on
         * the handle's socket. */
        if (i % 2)
            zclock_sleep(30);
        profeed_result_t rc = profeed_farm_run(farm, &job, 5000, PROFEED_FORMAT_TEXT, NULL, NULL, &output, &error,
                                               NULL);
        cr_assert_eq(rc, PROFEED_OK, "job %s: %s", id, error ? error : "");
        char want[128];
        snprintf(want, sizeof want, "feedback of %s", id);
        cr_expect_str_eq(output, want, "job %s got another job's feedback", id);
        free(output);
        free(error);
        error = NULL;
    }
    cr_expect_geq(profeed_farm_stray_feedbacks(farm), 19, "every earlier job's second delivery was dropped");
    profeed_farm_destroy(&farm);
    zactor_destroy(&broker);
    /* Each ack goes before the next job's submission, on one connection: in order. */
    cr_expect_geq(acks, 19, "each feedback acknowledged (the last may be cut by the close)");
}
