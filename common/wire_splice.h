/* wire_splice: Envelopes built around messages that are already packed.
 *
 * The broker receives pass outputs and feedbacks, keeps them, and sends them
 * on inside other Envelopes. Decoding and packing megabytes again only to move
 * them was most of the broker's CPU per job. Protobuf encodes an embedded
 * message as a tag, a length and the message's own bytes, so a received
 * message can be cut out of its Envelope and spliced into another as it is.
 * Only messages the broker has already decoded and validated are spliced. */
#ifndef WIRE_SPLICE_H
#define WIRE_SPLICE_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Finds the bytes of field `field` (a length-delimited field, such as
 * Envelope's 6, pass_output) at the top level of a packed message. False when
 * it is absent, appears more than once (protobuf merges the copies, so the
 * bytes alone would not be what was decoded), or the encoding is odd: then
 * the caller packs the decoded message instead. */
bool wire_splice_find(const uint8_t *data, size_t size, uint32_t field, const uint8_t **body_p,
                      size_t *len_p);

/* Writes the Envelope { protocol_version, `body_field`: BODY } to `out` and
 * returns its size; with `out` NULL only returns the size. BODY is `inner`
 * itself when `head` is NULL (Envelope.feedback around a packed Feedback),
 * else `head` packed followed by field `inner_field` holding `inner`
 * (Envelope.dispatch = Dispatch{attempt, ..., pass_output: the packed pass}).
 * `head` must leave `inner_field` unset. */
size_t wire_splice_envelope(uint8_t *out, uint32_t body_field, const ProtobufCMessage *head,
                            uint32_t inner_field, const uint8_t *inner, size_t inner_len);

#endif
