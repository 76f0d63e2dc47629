/* farm_snoop: an agent that tries to read other agents' jobs (issue 15,
 * defect 6). It asks the broker for its status, prints the job ids the
 * answer lists ("id JOB"), then names those ids (and any given on the
 * command line) in a Heartbeat every 200 ms for SECONDS, printing what comes
 * back for them: "feedback JOB" or "error CODE JOB". A broker that keeps jobs
 * to their owners lists none of another's and sends it no Feedback.
 *
 *   farm_snoop ENDPOINT SECONDS [--curve SECRET BROKER_KEY] [JOB_ID...] */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "wire_curve.h"
#include "wire_zmq.h"

#define MAX_IDS 256

static int s_send(zsock_t *sock, Profeed__Envelope *env)
{
    pf_error_t err;
    size_t size;
    uint8_t *bytes = wire_envelope_pack(env, WIRE_MAX_MSG, &size, &err);
    int rc = bytes && zsock_send(sock, "b", bytes, size) == 0 ? 0 : -1;
    free(bytes);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: farm_snoop ENDPOINT SECONDS [--curve SECRET BROKER_KEY] [JOB_ID...]\n");
        return 2;
    }
    char *end = NULL;
    long seconds = strtol(argv[2], &end, 10);
    if (!end || *end || seconds < 0 || seconds > 600) {
        fprintf(stderr, "farm_snoop: SECONDS: expected 0..600, got %s\n", argv[2]);
        return 2;
    }
    int first_id = 3;
    wire_curve_t *curve = NULL;
    pf_error_t err;
    if (argc >= 6 && strcmp(argv[3], "--curve") == 0) {
        if (!(curve = wire_curve_client_new(argv[4], argv[5], &err))) {
            fprintf(stderr, "farm_snoop: %s\n", err.msg);
            return 1;
        }
        first_id = 6;
    }
    char *ids[MAX_IDS];
    size_t n_ids = 0;
    for (int i = first_id; i < argc && n_ids < MAX_IDS; i++)
        ids[n_ids++] = strdup(argv[i]);
    zsock_t *sock = zsock_new(ZMQ_DEALER);
    if (!sock) {
        fprintf(stderr, "farm_snoop: out of memory\n");
        return 1;
    }
    zsock_set_linger(sock, 0);
    if (curve)
        wire_curve_apply_client(curve, sock);
    if (zsock_connect(sock, "%s", argv[1]) != 0) {
        fprintf(stderr, "farm_snoop: cannot connect to %s\n", argv[1]);
        return 1;
    }

    Profeed__StatusRequest sreq;
    profeed__status_request__init(&sreq);
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_STATUS_REQUEST;
    env.status_request = &sreq;
    s_send(sock, &env);
    int rc = 0, status_seen = 0;
    int64_t deadline = zclock_mono() + 5000 + seconds * 1000, next_hb = 0;
    while (zclock_mono() < deadline) {
        if (status_seen && zclock_mono() >= next_hb) {
            if (zclock_mono() > deadline - 5000)
                break; /* SECONDS of heartbeats are over */
            Profeed__Heartbeat hb;
            profeed__heartbeat__init(&hb);
            hb.job_ids = ids;
            hb.n_job_ids = n_ids;
            wire_envelope_init(&env);
            env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
            env.heartbeat = &hb;
            s_send(sock, &env);
            next_hb = zclock_mono() + 200;
        }
        zmq_pollitem_t item = {.socket = zsock_resolve(sock), .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        Profeed__Envelope *in = wire_zmq_recv(sock, false, NULL, WIRE_MAX_MSG, NULL, &err);
        if (!in)
            continue;
        if (in->body_case == PROFEED__ENVELOPE__BODY_STATUS && !status_seen) {
            status_seen = 1;
            /* The deadline starts now: SECONDS of heartbeats after the answer. */
            deadline = zclock_mono() + 5000 + seconds * 1000;
            for (size_t i = 0; i < in->status->n_job_ids; i++) {
                printf("id %s\n", in->status->job_ids[i]);
                if (n_ids < MAX_IDS)
                    ids[n_ids++] = strdup(in->status->job_ids[i]);
            }
        } else if (in->body_case == PROFEED__ENVELOPE__BODY_FEEDBACK) {
            printf("feedback %s\n", in->feedback->job_id ? in->feedback->job_id : "-");
        } else if (in->body_case == PROFEED__ENVELOPE__BODY_ERROR) {
            printf("error %d %s\n", (int) in->error->code, in->error->job_id ? in->error->job_id : "-");
        }
        fflush(stdout);
        wire_envelope_destroy(&in);
    }
    if (!status_seen) {
        fprintf(stderr, "farm_snoop: no status answer from %s\n", argv[1]);
        rc = 1;
    }
    for (size_t i = 0; i < n_ids; i++)
        free(ids[i]);
    zsock_destroy(&sock);
    wire_curve_destroy(&curve);
    return rc;
}
