/* wire_varint: protobuf's base-128 varints and wire types, for the code that
 * walks or writes encodings by hand instead of through protobuf-c: wire_scan
 * (checks before decoding), wire_splice (forwards packed messages) and
 * wire_elide (leaves file contents out). */
#ifndef WIRE_VARINT_H
#define WIRE_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The low three bits of a field's tag. Groups (3, 4) are not used here. */
enum { WIRE_TYPE_VARINT = 0, WIRE_TYPE_64BIT = 1, WIRE_TYPE_LEN = 2, WIRE_TYPE_32BIT = 5 };

/* Reads a varint of at most 10 bytes at *at without passing `end`, moving *at
 * past it; false (and *at unmoved) when it runs past `end` or is longer. */
static inline bool wire_varint_read(const uint8_t **at, const uint8_t *end, uint64_t *value)
{
    uint64_t v = 0;
    const uint8_t *p = *at;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        uint8_t byte = *p++;
        v |= (uint64_t) (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *at = p;
            *value = v;
            return true;
        }
    }
    return false;
}

/* Bytes the varint of `v` takes. */
static inline size_t wire_varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* Writes the varint of `v` at `p`; returns the byte after it. */
static inline uint8_t *wire_varint_put(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t) (v | 0x80);
    *p++ = (uint8_t) v;
    return p;
}

#endif
