/* fake_broker: plays the broker to one collector, to check how the collector
 * runs, replaces and stops jobs on its slot threads without a whole farm.
 *
 *   fake_broker ENDPOINTS_FILE PROGRAM
 *
 * Binds a ROUTER on a free loopback port and writes "worker=<endpoint>" to
 * ENDPOINTS_FILE. Once the collector's Ready arrives it sends job "job-a",
 * attempt 1 (argv [PROGRAM]); when that attempt's plan arrives it sends
 * attempt 2 of the same job, which must replace it; it acks every pass and
 * prints one line per message from the collector ("plan job-a 3", "pass job-a
 * ncu.000", "error job-a ...") until attempt 2's passes are all in and one
 * second passes without more but heartbeats; then it sends "job-b" and prints "running"
 * when its plan arrives, and keeps answering until it is killed. */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"
#include "wire_zmq.h"

static zframe_t *s_peer;

static void s_send(zsock_t *sock, Profeed__Envelope *env)
{
    pf_error_t err;
    if (wire_zmq_send(sock, s_peer, env, WIRE_MAX_MSG, NULL, &err) != PF_OK)
        fprintf(stderr, "fake_broker: send failed: %s\n", err.msg);
}

static void s_dispatch(zsock_t *sock, const char *job_id, uint32_t attempt, char *program)
{
    char *argv[] = {program};
    Profeed__Command command;
    profeed__command__init(&command);
    command.argv = argv;
    command.n_argv = 1;
    Profeed__JobRequest req;
    profeed__job_request__init(&req);
    req.job_id = (char *) job_id;
    req.has_language = 1;
    req.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    req.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
    req.command = &command;
    Profeed__Dispatch d;
    profeed__dispatch__init(&d);
    d.has_attempt = 1;
    d.attempt = attempt;
    d.work_case = PROFEED__DISPATCH__WORK_JOB;
    d.job = &req;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_DISPATCH;
    env.dispatch = &d;
    s_send(sock, &env);
}

static void s_ack(zsock_t *sock, const Profeed__PassOutput *pass)
{
    Profeed__Ack ack;
    profeed__ack__init(&ack);
    ack.job_id = pass->job_id;
    ack.pass_key = pass->pass_key;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_ACK;
    env.ack = &ack;
    s_send(sock, &env);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fake_broker ENDPOINTS_FILE PROGRAM\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    zsock_t *sock = zsock_new(ZMQ_ROUTER);
    int port = sock ? zsock_bind(sock, "tcp://127.0.0.1:*") : -1;
    if (port < 0) {
        fprintf(stderr, "fake_broker: cannot bind\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    fprintf(f, "worker=tcp://127.0.0.1:%d\n", port);
    fclose(f);

    enum { WAIT_READY, FIRST_ATTEMPT, SECOND_ATTEMPT, SECOND_JOB } phase = WAIT_READY;
    uint32_t planned = 0, passes = 0;
    int64_t quiet_since = 0;
    while (!zsys_interrupted) {
        zmq_pollitem_t item = {.socket = zsock_resolve(sock), .events = ZMQ_POLLIN};
        int rc = zmq_poll(&item, 1, 100);
        if (rc < 0)
            break;
        if (phase == SECOND_ATTEMPT && planned && passes >= planned && zclock_mono() - quiet_since > 1000) {
            printf("attempt 2 done\n");
            s_dispatch(sock, "job-b", 1, argv[2]);
            phase = SECOND_JOB;
        }
        if (rc == 0)
            continue;
        zframe_t *peer = NULL;
        pf_error_t err;
        Profeed__Envelope *env = wire_zmq_recv(sock, true, &peer, WIRE_MAX_MSG, NULL, &err);
        if (!env) {
            zframe_destroy(&peer);
            continue;
        }
        zframe_destroy(&s_peer);
        s_peer = peer;
        if (env->body_case != PROFEED__ENVELOPE__BODY_HEARTBEAT)
            quiet_since = zclock_mono(); /* heartbeats come all the time */
        switch (env->body_case) {
        case PROFEED__ENVELOPE__BODY_READY:
            if (phase == WAIT_READY) {
                printf("ready\n");
                s_dispatch(sock, "job-a", 1, argv[2]);
                phase = FIRST_ATTEMPT;
            }
            break;
        case PROFEED__ENVELOPE__BODY_PROGRESS:
            printf("plan %s %u\n", env->progress->job_id, (unsigned) env->progress->pass_count);
            if (phase == FIRST_ATTEMPT) {
                s_dispatch(sock, "job-a", 2, argv[2]);
                phase = SECOND_ATTEMPT;
            } else if (phase == SECOND_ATTEMPT) {
                planned = env->progress->pass_count;
                passes = 0;
            } else if (phase == SECOND_JOB) {
                printf("running\n");
            }
            break;
        case PROFEED__ENVELOPE__BODY_PASS_OUTPUT:
            printf("pass %s %s\n", env->pass_output->job_id, env->pass_output->pass_key);
            passes++;
            s_ack(sock, env->pass_output);
            break;
        case PROFEED__ENVELOPE__BODY_ERROR:
            printf("error %s %s\n", env->error->job_id ? env->error->job_id : "-", env->error->text ? env->error->text : "");
            break;
        case PROFEED__ENVELOPE__BODY_HEARTBEAT: {
            Profeed__Heartbeat hb;
            profeed__heartbeat__init(&hb);
            Profeed__Envelope pong;
            wire_envelope_init(&pong);
            pong.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
            pong.heartbeat = &hb;
            s_send(sock, &pong);
            break;
        }
        default: break;
        }
        wire_envelope_destroy(&env);
    }
    zframe_destroy(&s_peer);
    zsock_destroy(&sock);
    return 0;
}
