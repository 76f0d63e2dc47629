/* wire_scan: one look at a message's raw bytes before protobuf-c decodes them.
 *
 * protobuf-c's unpack misses two things we must refuse from an untrusted peer:
 *  - a `string` field with a NUL byte inside: protobuf-c copies the bytes and
 *    adds a terminator, so the C string silently ends early ("job\0/../x" reads
 *    as "job") and no later check can see the rest;
 *  - a message that decodes to far more memory than it occupies on the wire: a
 *    2-byte empty sub-message costs a whole struct, every field a 32-byte record
 *    while decoding. Nothing in protobuf-c caps that.
 * wire_scan() walks the encoding with the schema's descriptors, checking every
 * length against the bytes left, and fails on either problem, naming the field
 * path and the byte offset. Group wire types (proto2 groups; we use none) are
 * refused, as protobuf-c refuses them. */
#ifndef WIRE_SCAN_H
#define WIRE_SCAN_H

#include "pf_error.h"

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Scans `size` bytes at `data` as an encoding of `desc`. Fails with PF_EBADINPUT
 * on a malformed encoding or a NUL inside a string field, and with PF_ETOOBIG
 * when decoding would allocate more than `decode_budget` bytes. */
pf_status_t wire_scan(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                      size_t decode_budget, pf_error_t *err);

#endif
