/* outbox: the broker's messages to one ROUTER socket, held while the journal
 * record a promise stands on is not yet on disk (journal.h, journal_sync.h).
 *
 * Each message carries the journal mark it waits for (journal_mark(); 0:
 * none). outbox_send sends it at once when its mark is synced and no message
 * to the same peer is held; else it is held, at the end of the socket's one
 * FIFO. outbox_release walks the FIFO in order and sends each message whose
 * mark is synced and before which no message to its peer is still held.
 *
 * Why each peer gets its messages in the order the broker sent them: a
 * message leaves only when no earlier message to its peer is still held
 * (outbox_send: none held for that peer at all; outbox_release: none before
 * it in the FIFO, which is in sending order). So the "queued" progress after
 * a submit's ack waits behind that ack, while a Dispatch to another collector
 * does not wait for this collector's ack. Marks only grow, so promises are
 * released in the order they were made.
 *
 * The outbox does not say what a message is: a kind and a job id ride along
 * for the broker's handling of a failed sync (outbox_revise). */
#ifndef OUTBOX_H
#define OUTBOX_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#include "pf_error.h"
#include "wire_check.h"

typedef enum {
    OUTBOX_PLAIN,       /* no promise: waits only for earlier messages to its peer */
    OUTBOX_SUBMIT_ACK,  /* the ack of a new job */
    OUTBOX_PASS_ACK,    /* the ack of a new pass */
    OUTBOX_FEEDBACK,    /* a job's feedback */
    OUTBOX_COUNTED = 8, /* flag: counts in the broker's bytes and messages out (not Error replies) */
} outbox_kind_t;

typedef struct {
    zframe_t *peer;   /* the routing id (owned) */
    zframe_t *body;   /* a packed Envelope (owned); NULL: dropped, never sent */
    uint64_t mark;    /* the journal mark it waits for; 0: none */
    int kind;         /* outbox_kind_t, | OUTBOX_COUNTED */
    char job_id[WIRE_MAX_ID_LEN + 1];
} outbox_msg_t;

/* Told of every message sent (or failed to send): `size` its body's bytes,
 * `held` whether it had been held (then no caller hears of a failure). */
typedef void (*outbox_sent_fn)(void *arg, const outbox_msg_t *msg, size_t size, bool held, pf_status_t rc,
                               const pf_error_t *err);

typedef struct outbox_t outbox_t;

/* `sock` is borrowed; `sent` (may be NULL) is called with `arg`. */
outbox_t *outbox_new(zsock_t *sock, outbox_sent_fn sent, void *arg);
/* Drops what is still held (outbox.c says why that is safe at a stop). */
void outbox_destroy(outbox_t **self_p);

/* Sends *body_p to `peer` (copied), or holds it: when `mark` is beyond
 * `synced` or a message to `peer` is held. Takes *body_p in every case.
 * PF_OK when sent or held; a send's error otherwise. */
pf_status_t outbox_send(outbox_t *self, zframe_t *peer, zframe_t **body_p, uint64_t mark, uint64_t synced, int kind,
                        const char *job_id, pf_error_t *err);

/* Sends every held message that may go now that marks up to `synced` are
 * resolved; a dropped one (body NULL) is let go. */
void outbox_release(outbox_t *self, uint64_t synced);

/* Calls fn(arg, msg) on each held message, in order: it may replace or
 * destroy msg->body (NULL: dropped). For a failed sync's promises. */
void outbox_revise(outbox_t *self, void (*fn)(void *arg, outbox_msg_t *msg), void *arg);

size_t outbox_held(const outbox_t *self);

#endif
