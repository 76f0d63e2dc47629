/* wire_zmq: Envelopes over ZeroMQ sockets, the one framing every profeed
 * socket uses.
 *
 * A message is one frame holding a packed Envelope. ROUTER sockets see the
 * peer's routing id as an extra first frame. Anything else (more frames, an
 * empty frame, bytes that fail wire_envelope_unpack) is refused with an error
 * naming the peer, so the caller can log it and answer with Error. Sends never
 * block: a peer that is gone or at its high-water mark makes the send fail,
 * and the caller decides (the broker's heartbeats and requeues recover). */
#ifndef WIRE_ZMQ_H
#define WIRE_ZMQ_H

#include <czmq.h>
#include <stdbool.h>

#include "pf_error.h"
#include "wire.h"
#include "wire_curve.h"

/* A routing id as hex, for log lines and as a map key: at most 255 bytes. */
#define WIRE_ZMQ_PEER_LEN (255 * 2 + 1)

/* Applies the options every profeed socket gets: bounded high-water marks,
 * inbound size limit (a larger message disconnects the peer), no linger, and
 * non-blocking sends; ROUTER sockets also get ROUTER_MANDATORY, so a send to
 * a gone peer is an error instead of a silent drop. */
void wire_zmq_configure(zsock_t *sock, size_t max_msg, int hwm);

/* Packs and sends `env`, after a copy of `peer` when it is not NULL (ROUTER).
 * Returns PF_OK, or PF_EIO (peer gone or full) / a pack error in `err`. When
 * `size_p` is not NULL, *size_p is the packed size sent (0 on failure). */
pf_status_t wire_zmq_send(zsock_t *sock, zframe_t *peer, const Profeed__Envelope *env,
                          size_t max_msg, size_t *size_p, pf_error_t *err);

/* Receives one message. With `router`, the first frame is the peer's routing
 * id and is returned in *peer_p (the caller's, also on error, NULL when none
 * came). Returns the valid Envelope (caller destroys it) or NULL with `err`
 * set; NULL with err->code PF_OK means the receive was interrupted. When
 * `size_p` is not NULL, *size_p is the Envelope's size on the wire (0 when
 * none was decoded). */
Profeed__Envelope *wire_zmq_recv(zsock_t *sock, bool router, zframe_t **peer_p, size_t max_msg,
                                 size_t *size_p, pf_error_t *err);

/* wire_zmq_recv() that also hands back the frame the Envelope was decoded
 * from (*body_p, the caller's, NULL on error): the broker forwards parts of
 * it as they came instead of packing them again (wire_splice.h). Pass output
 * files decode without their contents (wire_envelope_unpack_no_files()): what
 * the broker forwards of them must come from *body_p. */
Profeed__Envelope *wire_zmq_recv_frame(zsock_t *sock, bool router, zframe_t **peer_p,
                                       zframe_t **body_p, size_t max_msg, pf_error_t *err);

/* Sends a ready frame holding a packed Envelope, after a copy of `peer` when
 * it is not NULL. Takes the frame in every case. PF_OK or PF_EIO in `err`. */
pf_status_t wire_zmq_send_frame(zsock_t *sock, zframe_t *peer, zframe_t **body_p, pf_error_t *err);

/* Writes `peer` as hex into `buf` (WIRE_ZMQ_PEER_LEN bytes) and returns it. */
const char *wire_zmq_peer_name(zframe_t *peer, char *buf, size_t cap);

/* Makes `*env` an Error{code, text, job_id} over the caller's `*error` (no
 * allocation; both must outlive the send): a job id that would not pass
 * validation is left out rather than echoed. */
void wire_zmq_error_envelope(Profeed__Envelope *env, Profeed__Error *error, Profeed__ErrorCode code, char *text,
                             const char *job_id);

/* Sends Error{code, text, job_id} to `peer` (when known); failures are only
 * logged, since the error is itself the answer to bad input. */
void wire_zmq_send_error(zsock_t *sock, zframe_t *peer, Profeed__ErrorCode code,
                         const char *job_id, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Reads one command from a zactor pipe; true when it says stop ($TERM, sent
 * by zactor_destroy(), or the pipe is gone). Other commands are dropped. */
bool wire_zmq_pipe_term(zsock_t *pipe);

/* Milliseconds on a monotonic clock. */
int64_t wire_zmq_now_ms(void);

/* (Re)connects a worker's DEALER socket to the broker: the old socket, if any,
 * leaves the poller and is destroyed (a new socket is a new peer to the
 * broker, which is what a worker that lost it wants), and a new one is
 * configured (as a CURVE client when `curve` is not NULL), connected to
 * `endpoint` and added to `poller`. Returns 0, or -1
 * with the socket NULL. */
int wire_zmq_reconnect(zsock_t **sock_p, zpoller_t *poller, const char *endpoint, size_t max_msg,
                       const wire_curve_t *curve);

#endif
