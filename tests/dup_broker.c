/* dup_broker: a stand-in broker for the client library's delivery test
 * (tests/dup_test.sh, issue 15, defect 8). It acks each job, sends its
 * Feedback twice, and sends it again for every Heartbeat that names it, as a
 * real broker does when a heartbeat crosses the feedback (the protocol allows
 * it: at least once). It prints "acks N" when stopped (SIGTERM, SIGINT).
 *
 *   dup_broker ENDPOINT */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"
#include "wire_zmq.h"

static void s_send(zsock_t *sock, zframe_t *peer, Profeed__Envelope *env)
{
    pf_error_t err;
    if (wire_zmq_send(sock, peer, env, WIRE_MAX_MSG, NULL, &err) != PF_OK)
        fprintf(stderr, "dup_broker: send: %s\n", err.msg);
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dup_broker ENDPOINT\n");
        return 2;
    }
    zsock_t *sock = zsock_new(ZMQ_ROUTER);
    if (!sock || zsock_bind(sock, "%s", argv[1]) != 0) {
        fprintf(stderr, "dup_broker: cannot bind %s\n", argv[1]);
        zsock_destroy(&sock);
        return 1;
    }
    int acks = 0;
    while (!zsys_interrupted) {
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
            acks++;
        }
        wire_envelope_destroy(&in);
        zframe_destroy(&peer);
    }
    printf("acks %d\n", acks);
    zsock_destroy(&sock);
    return 0;
}
