#include "wire_elide.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

enum { WIRETYPE_VARINT = 0, WIRETYPE_64BIT = 1, WIRETYPE_LEN = 2, WIRETYPE_32BIT = 5 };

/* Reads a varint that wire_scan() has already seen whole. */
static uint64_t s_varint(const uint8_t *data, size_t *pos)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t byte = data[(*pos)++];
        v |= (uint64_t) (byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
        assert(shift < 63);
    }
}

static size_t s_varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

static size_t s_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t) (v | 0x80);
    out[n++] = (uint8_t) v;
    return n;
}

/* Copies `n` bytes when writing; counts them either way. */
static size_t s_copy(uint8_t *out, const uint8_t *from, size_t n)
{
    if (out)
        memcpy(out, from, n);
    return n;
}

/* Whether a message of type `desc` can hold one of type `inside` at some
 * depth. Our schema nests 6 deep; the bound only stops a recursive schema. */
static bool s_may_hold(const ProtobufCMessageDescriptor *desc, const ProtobufCMessageDescriptor *inside,
                       unsigned depth)
{
    if (desc == inside)
        return true;
    if (depth >= 16)
        return false;
    for (unsigned i = 0; i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && s_may_hold(f->descriptor, inside, depth + 1))
            return true;
    }
    return false;
}

/* The walk: `active` once inside a message of type `inside`. Only messages
 * that are or may hold `inside` are walked; others are copied whole, so a
 * Feedback's thousands of fields cost one memcpy (and the walk's measuring
 * of each level again stays within the few levels of a PassOutput). */
static size_t s_elide(const ProtobufCMessageDescriptor *desc, const ProtobufCMessageDescriptor *inside,
                      bool active, const uint8_t *data, size_t size, uint8_t *out)
{
    active = active || desc == inside;
    size_t pos = 0, written = 0;
    while (pos < size) {
        size_t start = pos;
        uint64_t tag = s_varint(data, &pos);
        size_t tag_len = pos - start;
        switch (tag & 7) {
        case WIRETYPE_VARINT: (void) s_varint(data, &pos); break;
        case WIRETYPE_64BIT: pos += 8; break;
        case WIRETYPE_32BIT: pos += 4; break;
        case WIRETYPE_LEN: {
            size_t len = (size_t) s_varint(data, &pos);
            const uint8_t *body = data + pos;
            pos += len;
            const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field(desc, (unsigned) (tag >> 3));
            if (f && f->type == PROTOBUF_C_TYPE_BYTES && active) {
                written += s_copy(out ? out + written : NULL, data + start, tag_len);
                if (out)
                    out[written] = 0; /* length 0 */
                written++;
                continue;
            }
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && (active || s_may_hold(f->descriptor, inside, 0))) {
                const ProtobufCMessageDescriptor *sub = f->descriptor;
                size_t sub_len = s_elide(sub, inside, active, body, len, NULL);
                written += s_copy(out ? out + written : NULL, data + start, tag_len);
                written += out ? s_put_varint(out + written, sub_len) : s_varint_len(sub_len);
                written += s_elide(sub, inside, active, body, len, out ? out + written : NULL);
                continue;
            }
            break; /* strings, packed numbers, unknown fields: as they are */
        }
        default: assert(!"wire_elide: input did not pass wire_scan()"); return written;
        }
        written += s_copy(out ? out + written : NULL, data + start, pos - start);
    }
    assert(pos == size);
    return written;
}

size_t wire_elide(const ProtobufCMessageDescriptor *desc, const ProtobufCMessageDescriptor *inside,
                  const uint8_t *data, size_t size, uint8_t *out)
{
    assert(desc && desc->magic == PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
    assert(inside && inside->magic == PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
    assert(data || size == 0);
    return s_elide(desc, inside, false, data, size, out);
}
