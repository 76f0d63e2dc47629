/* outbox.c: the held messages of outbox.h.
 *
 * At a stop the held messages are dropped, not sent: the sockets close with
 * no linger (wire_zmq_configure), so a send then would be dropped by libzmq
 * anyway, and no promise is broken: journal_close syncs what was written,
 * and a peer that got no ack sends again (an agent resubmits, and is told
 * its job is known; a collector resends its pass, and it is a duplicate). */
#include "outbox.h"

#include <assert.h>
#include <stdlib.h>

#include "wire_zmq.h"

struct outbox_t {
    zsock_t *sock;   /* borrowed */
    zlistx_t *held;  /* outbox_msg_t, in sending order */
    outbox_sent_fn sent;
    void *arg;
};

static void s_msg_destroy(void **item)
{
    outbox_msg_t *msg = *item;
    if (msg) {
        zframe_destroy(&msg->peer);
        zframe_destroy(&msg->body);
        free(msg);
    }
    *item = NULL;
}

outbox_t *outbox_new(zsock_t *sock, outbox_sent_fn sent, void *arg)
{
    assert(sock);
    outbox_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->held = zlistx_new();
    if (!self->held) {
        free(self);
        return NULL;
    }
    zlistx_set_destructor(self->held, s_msg_destroy);
    self->sock = sock;
    self->sent = sent;
    self->arg = arg;
    return self;
}

void outbox_destroy(outbox_t **self_p)
{
    assert(self_p);
    outbox_t *self = *self_p;
    if (!self)
        return;
    zlistx_destroy(&self->held);
    free(self);
    *self_p = NULL;
}

static bool s_holds_peer(outbox_t *self, zframe_t *peer)
{
    for (outbox_msg_t *m = zlistx_first(self->held); m; m = zlistx_next(self->held))
        if (zframe_eq(m->peer, peer))
            return true;
    return false;
}

static pf_status_t s_send(outbox_t *self, outbox_msg_t *msg, bool held, pf_error_t *err)
{
    size_t size = zframe_size(msg->body);
    pf_status_t rc = wire_zmq_send_frame(self->sock, msg->peer, &msg->body, err);
    if (self->sent)
        self->sent(self->arg, msg, size, held, rc, err);
    return rc;
}

pf_status_t outbox_send(outbox_t *self, zframe_t *peer, zframe_t **body_p, uint64_t mark, uint64_t synced, int kind,
                        const char *job_id, pf_error_t *err)
{
    assert(peer && body_p && *body_p);
    outbox_msg_t msg = {.peer = peer, .body = *body_p, .mark = mark, .kind = kind};
    *body_p = NULL;
    if (job_id)
        snprintf(msg.job_id, sizeof msg.job_id, "%s", job_id);
    if (mark <= synced && (zlistx_size(self->held) == 0 || !s_holds_peer(self, peer))) {
        pf_status_t rc = s_send(self, &msg, false, err);
        zframe_destroy(&msg.body); /* a failed send may leave it */
        return rc;
    }
    outbox_msg_t *kept = malloc(sizeof *kept);
    zframe_t *peer_copy = zframe_dup(peer);
    if (!kept || !peer_copy || !zlistx_add_end(self->held, kept)) {
        free(kept);
        zframe_destroy(&peer_copy);
        zframe_destroy(&msg.body);
        return pf_error_set(err, PF_ENOMEM, "out of memory holding a message until the journal is synced");
    }
    *kept = msg;
    kept->peer = peer_copy;
    return PF_OK;
}

void outbox_release(outbox_t *self, uint64_t synced)
{
    if (zlistx_size(self->held) == 0)
        return;
    /* The peers of messages still held, in this walk: what follows them to
     * the same peer waits too. */
    zlistx_t *blocked = zlistx_new();
    for (outbox_msg_t *msg = zlistx_first(self->held); msg; msg = zlistx_next(self->held)) {
        bool waits = msg->mark > synced;
        for (zframe_t *p = blocked && !waits ? zlistx_first(blocked) : NULL; p && !waits; p = zlistx_next(blocked))
            waits = zframe_eq(p, msg->peer);
        if (waits) {
            /* Out of memory for the list: every later message waits, which
             * keeps the order at the cost of a later release. */
            if (!blocked || !zlistx_add_end(blocked, msg->peer))
                break;
            continue;
        }
        if (msg->body) {
            pf_error_t err;
            s_send(self, msg, true, &err);
        }
        /* zlistx moves its cursor back to the previous item: the walk goes on. */
        zlistx_delete(self->held, zlistx_cursor(self->held));
    }
    zlistx_destroy(&blocked);
}

void outbox_revise(outbox_t *self, void (*fn)(void *arg, outbox_msg_t *msg), void *arg)
{
    for (outbox_msg_t *msg = zlistx_first(self->held); msg; msg = zlistx_next(self->held))
        fn(arg, msg);
}

size_t outbox_held(const outbox_t *self)
{
    return zlistx_size(self->held);
}
