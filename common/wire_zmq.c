#include "wire_zmq.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "pf_log.h"

void wire_zmq_configure(zsock_t *sock, size_t max_msg, int hwm)
{
    assert(sock);
    zsock_set_sndhwm(sock, hwm);
    zsock_set_rcvhwm(sock, hwm);
    /* A few bytes of slack over the message limit for framing: the unpacker
     * enforces the exact limit and answers with an error, while libzmq's
     * limit drops peers that send far more. */
    zsock_set_maxmsgsize(sock, (int) (max_msg > INT32_MAX - 1024 ? INT32_MAX : max_msg + 1024));
    zsock_set_linger(sock, 0);
    zsock_set_sndtimeo(sock, 0);
    if (zsock_type(sock) == ZMQ_ROUTER)
        zsock_set_router_mandatory(sock, 1);
}

pf_status_t wire_zmq_send(zsock_t *sock, zframe_t *peer, const Profeed__Envelope *env,
                          size_t max_msg, size_t *size_p, pf_error_t *err)
{
    if (size_p)
        *size_p = 0;
    size_t size = 0;
    if (wire_envelope_measure(env, max_msg, &size, err) != PF_OK)
        return err ? err->code : PF_EBADINPUT;
    /* Packed straight into the frame: a pass output is megabytes. */
    zframe_t *body = zframe_new(NULL, size);
    if (!body)
        return pf_error_set(err, PF_ENOMEM, "out of memory for a %zu-byte message", size);
    wire_envelope_pack_to(env, zframe_data(body), size);
    pf_status_t rc = wire_zmq_send_frame(sock, peer, &body, err);
    if (rc == PF_OK && size_p)
        *size_p = size;
    return rc;
}

pf_status_t wire_zmq_send_frame(zsock_t *sock, zframe_t *peer, zframe_t **body_p, pf_error_t *err)
{
    assert(body_p && *body_p);
    zmsg_t *msg = zmsg_new();
    if (!msg) {
        zframe_destroy(body_p);
        return pf_error_set(err, PF_ENOMEM, "out of memory for a message");
    }
    if (peer)
        zmsg_append(msg, &(zframe_t *) {zframe_dup(peer)});
    zmsg_append(msg, body_p);
    if (zmsg_send(&msg, sock) != 0) {
        zmsg_destroy(&msg);
        return pf_error_set(err, PF_EIO, "send failed: %s", zmq_strerror(zmq_errno()));
    }
    return PF_OK;
}

/* Receives one message; decodes it whole, or with `no_files` as
 * wire_envelope_unpack_no_files() does. */
static Profeed__Envelope *s_recv(zsock_t *sock, bool router, zframe_t **peer_p, zframe_t **body_p,
                                 size_t max_msg, bool no_files, pf_error_t *err)
{
    assert(body_p);
    *body_p = NULL;
    if (peer_p)
        *peer_p = NULL;
    pf_error_clear(err);
    zmsg_t *msg = zmsg_recv(sock);
    if (!msg)
        return NULL;
    Profeed__Envelope *env = NULL;
    if (router) {
        zframe_t *peer = zmsg_pop(msg);
        if (peer_p)
            *peer_p = peer;
        else
            zframe_destroy(&peer);
    }
    size_t frames = zmsg_size(msg);
    if (frames != 1) {
        pf_error_set(err, PF_EBADINPUT, "message of %zu frames; profeed sends one frame (an Envelope)",
                     frames);
        goto cleanup;
    }
    zframe_t *body = zmsg_pop(msg);
    env = no_files ? wire_envelope_unpack_no_files(zframe_data(body), zframe_size(body), max_msg, err)
                   : wire_envelope_unpack(zframe_data(body), zframe_size(body), max_msg, err);
    if (env)
        *body_p = body;
    else
        zframe_destroy(&body);
cleanup:
    zmsg_destroy(&msg);
    return env;
}

Profeed__Envelope *wire_zmq_recv(zsock_t *sock, bool router, zframe_t **peer_p, size_t max_msg,
                                 size_t *size_p, pf_error_t *err)
{
    if (size_p)
        *size_p = 0;
    zframe_t *body = NULL;
    Profeed__Envelope *env = s_recv(sock, router, peer_p, &body, max_msg, false, err);
    if (env && size_p)
        *size_p = zframe_size(body);
    zframe_destroy(&body);
    return env;
}

Profeed__Envelope *wire_zmq_recv_frame(zsock_t *sock, bool router, zframe_t **peer_p,
                                       zframe_t **body_p, size_t max_msg, pf_error_t *err)
{
    return s_recv(sock, router, peer_p, body_p, max_msg, true, err);
}

const char *wire_zmq_peer_name(zframe_t *peer, char *buf, size_t cap)
{
    assert(cap >= 1);
    buf[0] = '\0';
    if (!peer)
        return buf;
    const uint8_t *data = zframe_data(peer);
    size_t n = zframe_size(peer);
    size_t out = 0;
    for (size_t i = 0; i < n && out + 3 <= cap; i++)
        out += (size_t) snprintf(buf + out, cap - out, "%02x", data[i]);
    return buf;
}

void wire_zmq_error_envelope(Profeed__Envelope *env, Profeed__Error *error, Profeed__ErrorCode code, char *text,
                             const char *job_id)
{
    profeed__error__init(error);
    error->has_code = 1;
    error->code = code;
    error->text = text;
    if (job_id && wire_check_id(job_id, "job_id", NULL) == PF_OK)
        error->job_id = (char *) job_id;
    wire_envelope_init(env);
    env->body_case = PROFEED__ENVELOPE__BODY_ERROR;
    env->error = error;
}

void wire_zmq_send_error(zsock_t *sock, zframe_t *peer, Profeed__ErrorCode code,
                         const char *job_id, const char *component, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap); /* a cut-short error text is still an answer */
    va_end(ap);
    Profeed__Error error;
    Profeed__Envelope env;
    wire_zmq_error_envelope(&env, &error, code, text, job_id);
    pf_error_t err;
    if (wire_zmq_send(sock, peer, &env, 64 * 1024 * 2, NULL, &err) != PF_OK) {
        char name[WIRE_ZMQ_PEER_LEN];
        pf_log_debug(component, "could not answer peer %s with an error: %s",
                     wire_zmq_peer_name(peer, name, sizeof name), err.msg);
    }
}

int64_t wire_zmq_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int wire_zmq_reconnect(zsock_t **sock_p, zpoller_t *poller, const char *endpoint, size_t max_msg,
                       const wire_curve_t *curve)
{
    if (*sock_p) {
        zpoller_remove(poller, *sock_p);
        zsock_destroy(sock_p);
    }
    *sock_p = zsock_new(ZMQ_DEALER);
    if (!*sock_p)
        return -1;
    wire_zmq_configure(*sock_p, max_msg, 100);
    if (curve)
        wire_curve_apply_client(curve, *sock_p);
    if (zsock_connect(*sock_p, "%s", endpoint) != 0) {
        zsock_destroy(sock_p);
        return -1;
    }
    zpoller_add(poller, *sock_p);
    return 0;
}

bool wire_zmq_pipe_term(zsock_t *pipe)
{
    char *command = zstr_recv(pipe);
    bool term = !command || streq(command, "$TERM");
    zstr_free(&command);
    return term;
}
