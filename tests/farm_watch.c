/* farm_watch: submits one job to a broker's agent endpoint over a raw DEALER
 * socket and prints the body of every message that comes back for it, one word
 * per line ("ack", "progress", "feedback", "error"), until the feedback. What
 * the client library hides, the farm test checks here: that a job submitted
 * with progress = false gets no Progress messages, and one without gets them.
 *
 *   farm_watch ENDPOINT PROGRAM JOB_ID on|off|unset */
#include <czmq.h>
#include <stdio.h>
#include <string.h>

#include "wire.h"
#include "wire_zmq.h"

static const char *s_word(Profeed__Envelope__BodyCase body)
{
    switch (body) {
    case PROFEED__ENVELOPE__BODY_ACK: return "ack";
    case PROFEED__ENVELOPE__BODY_PROGRESS: return "progress";
    case PROFEED__ENVELOPE__BODY_FEEDBACK: return "feedback";
    case PROFEED__ENVELOPE__BODY_ERROR: return "error";
    default: return "other";
    }
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[4], "on") && strcmp(argv[4], "off") && strcmp(argv[4], "unset"))) {
        fprintf(stderr, "usage: farm_watch ENDPOINT PROGRAM JOB_ID on|off|unset\n");
        return 2;
    }
    zsock_t *sock = zsock_new_dealer(argv[1]);
    if (!sock) {
        fprintf(stderr, "farm_watch: cannot connect to %s\n", argv[1]);
        return 1;
    }
    zsock_set_linger(sock, 0);

    char *argv_job[] = {argv[2]};
    Profeed__Command command;
    profeed__command__init(&command);
    command.argv = argv_job;
    command.n_argv = 1;
    Profeed__JobRequest req;
    profeed__job_request__init(&req);
    req.job_id = argv[3];
    req.agent_id = "farm-watch";
    req.has_language = 1;
    req.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    req.gpu_arch = "sm_90";
    req.target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
    req.command = &command;
    if (strcmp(argv[4], "unset") != 0) {
        req.has_progress = 1;
        req.progress = strcmp(argv[4], "on") == 0;
    }
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_SUBMIT;
    env.submit = &req;
    pf_error_t err;
    size_t size;
    uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err);
    if (!bytes || zsock_send(sock, "b", bytes, size) != 0) {
        fprintf(stderr, "farm_watch: cannot send the job: %s\n", bytes ? "send failed" : err.msg);
        free(bytes);
        zsock_destroy(&sock);
        return 1;
    }
    free(bytes);

    int rc = 1;
    int64_t deadline = zclock_mono() + 30000;
    while (zclock_mono() < deadline) {
        zmq_pollitem_t item = {.socket = zsock_resolve(sock), .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 1000) <= 0)
            continue;
        Profeed__Envelope *in = wire_zmq_recv(sock, false, NULL, WIRE_MAX_MSG, NULL, &err);
        if (!in)
            continue;
        bool done = in->body_case == PROFEED__ENVELOPE__BODY_FEEDBACK || in->body_case == PROFEED__ENVELOPE__BODY_ERROR;
        if (in->body_case != PROFEED__ENVELOPE__BODY_HEARTBEAT)
            printf("%s\n", s_word(in->body_case));
        wire_envelope_destroy(&in);
        if (done) {
            rc = 0;
            break;
        }
    }
    if (rc)
        fprintf(stderr, "farm_watch: no feedback for %s within 30 s\n", argv[3]);
    zsock_destroy(&sock);
    return rc;
}
