/* wire_elide: an encoding with the contents of `bytes` fields left out.
 *
 * The broker forwards pass outputs without reading their files: it needs
 * their ids and must check every other field, but decoding copied every file
 * (half a megabyte for an `ncu --set full` pass) only to free it unread.
 * wire_elide() copies an encoding with each `bytes` field inside messages of
 * one type written as empty, so that protobuf-c decodes and wire_check()
 * checks everything else while the file contents are only skipped over. The
 * caller forwards the original bytes (wire_splice.h), never the decoded copy. */
#ifndef WIRE_ELIDE_H
#define WIRE_ELIDE_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Writes `size` bytes at `data`, an encoding of `desc`, to `out` with every
 * length-delimited `bytes` field found inside a message of type `inside` (at
 * any depth; `desc` itself when it is `inside`) written with length 0, and
 * returns the size written; with `out` NULL only returns that size. Every other
 * field is copied as it is, unknown ones too. `data` must have passed
 * wire_scan() for `desc` (the walk trusts its lengths). */
size_t wire_elide(const ProtobufCMessageDescriptor *desc, const ProtobufCMessageDescriptor *inside,
                  const uint8_t *data, size_t size, uint8_t *out);

#endif
