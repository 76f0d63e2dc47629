/* farm_poke: sends a broker endpoint the bad input a hostile or broken peer
 * could: random bytes, too many frames, an empty frame, a wrong protocol
 * version, and (with a size) one oversized frame. Exits 0 when the broker
 * answered the answerable ones with Error and the connection still works
 * (a status request is answered afterwards on the agent endpoint, or an
 * Error for an unregistered heartbeat on the worker endpoint).
 *
 *   farm_poke ENDPOINT agents|workers [OVERSIZE_BYTES] */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static int s_expect_error(zsock_t *sock, const char *what)
{
    zmq_pollitem_t item = {.socket = zsock_resolve(sock), .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, 3000) <= 0) {
        fprintf(stderr, "farm_poke: no answer to %s\n", what);
        return 1;
    }
    zframe_t *frame = zframe_recv(sock);
    pf_error_t err;
    Profeed__Envelope *env = wire_envelope_unpack(zframe_data(frame), zframe_size(frame), WIRE_MAX_MSG, &err);
    zframe_destroy(&frame);
    int rc = env && env->body_case == PROFEED__ENVELOPE__BODY_ERROR ? 0 : 1;
    if (rc)
        fprintf(stderr, "farm_poke: %s was not answered with Error\n", what);
    else
        printf("farm_poke: %s -> Error: %s\n", what, env->error->text ? env->error->text : "");
    wire_envelope_destroy(&env);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: farm_poke ENDPOINT agents|workers [OVERSIZE_BYTES]\n");
        return 2;
    }
    bool agents = strcmp(argv[2], "agents") == 0;
    int failures = 0;
    zsock_t *sock = zsock_new_dealer(argv[1]);
    zsock_set_linger(sock, 0);

    uint8_t garbage[512];
    srand(42);
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t) rand();
    zsock_send(sock, "b", garbage, sizeof garbage);
    failures += s_expect_error(sock, "random bytes");

    zsock_send(sock, "sss", "one", "two", "three");
    failures += s_expect_error(sock, "three frames");

    zsock_send(sock, "b", "", (size_t) 0);
    failures += s_expect_error(sock, "an empty frame");

    /* A well-formed Envelope of protocol version 99. */
    uint8_t wrong_version[] = {0x08, 99, 0x1a, 0x00};
    zsock_send(sock, "b", wrong_version, sizeof wrong_version);
    failures += s_expect_error(sock, "protocol version 99");

    if (argc > 3) {
        /* Over ZMQ_MAXMSGSIZE: libzmq drops this connection; a new one must
         * still be served. */
        size_t size = (size_t) strtoull(argv[3], NULL, 10);
        uint8_t *big = calloc(1, size);
        zsock_send(sock, "b", big, size);
        free(big);
        zclock_sleep(300);
        zsock_destroy(&sock);
        sock = zsock_new_dealer(argv[1]);
        zsock_set_linger(sock, 0);
    }

    /* Still serving. */
    Profeed__Envelope env;
    wire_envelope_init(&env);
    Profeed__StatusRequest status;
    profeed__status_request__init(&status);
    Profeed__Heartbeat hb;
    profeed__heartbeat__init(&hb);
    if (agents) {
        env.body_case = PROFEED__ENVELOPE__BODY_STATUS_REQUEST;
        env.status_request = &status;
    } else {
        hb.worker_id = "poke";
        env.body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT;
        env.heartbeat = &hb;
    }
    size_t size = 0;
    uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, NULL);
    zsock_send(sock, "b", bytes, size);
    free(bytes);
    zmq_pollitem_t item = {.socket = zsock_resolve(sock), .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, 3000) <= 0) {
        fprintf(stderr, "farm_poke: the endpoint no longer answers\n");
        failures++;
    } else {
        zframe_t *frame = zframe_recv(sock);
        pf_error_t err;
        Profeed__Envelope *reply = wire_envelope_unpack(zframe_data(frame), zframe_size(frame), WIRE_MAX_MSG, &err);
        Profeed__Envelope__BodyCase want = agents ? PROFEED__ENVELOPE__BODY_STATUS : PROFEED__ENVELOPE__BODY_ERROR;
        if (!reply || reply->body_case != want) {
            fprintf(stderr, "farm_poke: unexpected answer after the bad input\n");
            failures++;
        } else {
            printf("farm_poke: still serving\n");
        }
        wire_envelope_destroy(&reply);
        zframe_destroy(&frame);
    }
    zsock_destroy(&sock);
    return failures ? 1 : 0;
}
