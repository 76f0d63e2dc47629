/* outbox.c: the held messages of outbox.h.
 *
 * A stalled disk holds every promise the broker makes (journal_sync.h), so
 * the held list can grow to thousands of messages. Each costs constant time:
 * a peer with messages held has a record, found by its routing id in a hash
 * table, that counts them and says whether this release's walk has already
 * met one of them that must wait. A send asks the table; a release walks
 * the list once and follows each message's pointer to its peer's record.
 *
 * At a stop the held messages are dropped, not sent: the sockets close with
 * no linger (wire_zmq_configure), so a send then would be dropped by libzmq
 * anyway, and no promise is broken: journal_close syncs what was written,
 * and a peer that got no ack sends again (an agent resubmits, and is told
 * its job is known; a collector resends its pass, and it is a duplicate). */
#include "outbox.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"
#include "wire_zmq.h"

/* A peer with messages held. */
typedef struct {
    zframe_t *id;        /* its routing id (owned); the table's key */
    size_t held;         /* how many of the list's messages go to it; > 0 */
    uint64_t waits_in;   /* the release walk in which one of them had to wait */
} peer_t;

/* A held message and its peer's record. */
typedef struct {
    outbox_msg_t msg;
    peer_t *peer;
} held_t;

struct outbox_t {
    zsock_t *sock;    /* borrowed */
    zlistx_t *held;   /* held_t, in sending order */
    zhashx_t *peers;  /* routing id -> peer_t (owned), for the peers with messages held */
    uint64_t walks;   /* release walks so far */
    outbox_sent_fn sent;
    void *arg;
};

/* FNV-1a is no defence against routing ids chosen to collide (a peer may
 * set its own): then a lookup walks the colliding peers, as a walk of the
 * held list would. */
static size_t s_id_hash(const void *key)
{
    zframe_t *id = (zframe_t *)key;
    return (size_t)fnv1a_update(FNV1A_BASIS, zframe_data(id), zframe_size(id));
}

static int s_id_compare(const void *a, const void *b)
{
    zframe_t *x = (zframe_t *)a, *y = (zframe_t *)b;
    size_t nx = zframe_size(x), ny = zframe_size(y);
    if (nx != ny)
        return nx < ny ? -1 : 1;
    return nx ? memcmp(zframe_data(x), zframe_data(y), nx) : 0;
}

static void s_peer_destroy(void **item)
{
    peer_t *peer = *item;
    if (peer) {
        zframe_destroy(&peer->id);
        free(peer);
    }
    *item = NULL;
}

static void s_held_destroy(void **item)
{
    held_t *held = *item;
    if (held) {
        zframe_destroy(&held->msg.peer);
        zframe_destroy(&held->msg.body);
        free(held);
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
    self->peers = zhashx_new();
    if (!self->held || !self->peers) {
        zlistx_destroy(&self->held);
        zhashx_destroy(&self->peers);
        free(self);
        return NULL;
    }
    zlistx_set_destructor(self->held, s_held_destroy);
    zhashx_set_key_hasher(self->peers, s_id_hash);
    zhashx_set_key_comparator(self->peers, s_id_compare);
    /* The key is the record's own frame: neither copied nor freed by the
     * table (zhashx's default would strdup it). */
    zhashx_set_key_duplicator(self->peers, NULL);
    zhashx_set_key_destructor(self->peers, NULL);
    zhashx_set_destructor(self->peers, s_peer_destroy);
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
    zhashx_destroy(&self->peers);
    free(self);
    *self_p = NULL;
}

static pf_status_t s_send(outbox_t *self, outbox_msg_t *msg, bool held, pf_error_t *err)
{
    size_t size = zframe_size(msg->body);
    pf_status_t rc = wire_zmq_send_frame(self->sock, msg->peer, &msg->body, err);
    if (self->sent)
        self->sent(self->arg, msg, size, held, rc, err);
    return rc;
}

/* The record of `id`, made if it has none; NULL: out of memory. */
static peer_t *s_peer_get(outbox_t *self, zframe_t *id)
{
    peer_t *peer = zhashx_lookup(self->peers, id);
    if (peer)
        return peer;
    peer = calloc(1, sizeof *peer);
    if (!peer || !(peer->id = zframe_dup(id)) || zhashx_insert(self->peers, peer->id, peer) != 0) {
        if (peer)
            zframe_destroy(&peer->id);
        free(peer);
        return NULL;
    }
    return peer;
}

/* One fewer message held for `peer`; its record goes with the last. */
static void s_peer_release(outbox_t *self, peer_t *peer)
{
    assert(peer->held > 0);
    if (--peer->held == 0)
        zhashx_delete(self->peers, peer->id);
}

pf_status_t outbox_send(outbox_t *self, zframe_t *peer, zframe_t **body_p, uint64_t mark, uint64_t synced, int kind,
                        const char *job_id, pf_error_t *err)
{
    assert(peer && body_p && *body_p);
    outbox_msg_t msg = {.peer = peer, .body = *body_p, .mark = mark, .kind = kind};
    *body_p = NULL;
    if (job_id)
        snprintf(msg.job_id, sizeof msg.job_id, "%s", job_id);
    if (mark <= synced && !zhashx_lookup(self->peers, peer)) {
        pf_status_t rc = s_send(self, &msg, false, err);
        zframe_destroy(&msg.body); /* a failed send may leave it */
        return rc;
    }
    held_t *kept = calloc(1, sizeof *kept);
    peer_t *record = kept ? s_peer_get(self, peer) : NULL;
    if (record)
        record->held++; /* before anything else can fail: s_peer_release undoes it */
    zframe_t *peer_copy = record ? zframe_dup(peer) : NULL;
    if (!peer_copy || !zlistx_add_end(self->held, kept)) {
        if (record)
            s_peer_release(self, record);
        free(kept);
        zframe_destroy(&peer_copy);
        zframe_destroy(&msg.body);
        return pf_error_set(err, PF_ENOMEM, "out of memory holding a message until the journal is synced");
    }
    kept->msg = msg;
    kept->msg.peer = peer_copy;
    kept->peer = record;
    return PF_OK;
}

void outbox_release(outbox_t *self, uint64_t synced)
{
    if (zlistx_size(self->held) == 0)
        return;
    uint64_t walk = ++self->walks;
    for (held_t *held = zlistx_first(self->held); held; held = zlistx_next(self->held)) {
        /* What follows a message that waits, to the same peer, waits too. */
        if (held->msg.mark > synced || held->peer->waits_in == walk) {
            held->peer->waits_in = walk;
            continue;
        }
        if (held->msg.body) {
            pf_error_t err;
            s_send(self, &held->msg, true, &err);
        }
        s_peer_release(self, held->peer);
        /* zlistx moves its cursor back to the previous item: the walk goes on. */
        zlistx_delete(self->held, zlistx_cursor(self->held));
    }
}

void outbox_revise(outbox_t *self, void (*fn)(void *arg, outbox_msg_t *msg), void *arg)
{
    for (held_t *held = zlistx_first(self->held); held; held = zlistx_next(self->held))
        fn(arg, &held->msg);
}

size_t outbox_held(const outbox_t *self)
{
    return zlistx_size(self->held);
}
