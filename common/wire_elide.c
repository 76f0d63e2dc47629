#include "wire_elide.h"

#include "wire_varint.h"

#include <assert.h>
#include <stdbool.h>
#include <string.h>

/* Reads a varint that wire_scan() has already seen whole. */
static uint64_t s_varint(const uint8_t **at, const uint8_t *end)
{
    uint64_t v = 0;
    bool ok = wire_varint_read(at, end, &v);
    assert(ok && "wire_elide: input did not pass wire_scan()");
    (void) ok;
    return v;
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
    const uint8_t *at = data, *end = data + size;
    size_t written = 0;
    while (at < end) {
        const uint8_t *start = at;
        uint64_t tag = s_varint(&at, end);
        size_t tag_len = (size_t) (at - start);
        switch (tag & 7) {
        case WIRE_TYPE_VARINT: (void) s_varint(&at, end); break;
        case WIRE_TYPE_64BIT: at += 8; break;
        case WIRE_TYPE_32BIT: at += 4; break;
        case WIRE_TYPE_LEN: {
            size_t len = (size_t) s_varint(&at, end);
            const uint8_t *body = at;
            at += len;
            const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field(desc, (unsigned) (tag >> 3));
            if (f && f->type == PROTOBUF_C_TYPE_BYTES && active) {
                written += s_copy(out ? out + written : NULL, start, tag_len);
                if (out)
                    out[written] = 0; /* length 0 */
                written++;
                continue;
            }
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && (active || s_may_hold(f->descriptor, inside, 0))) {
                const ProtobufCMessageDescriptor *sub = f->descriptor;
                size_t sub_len = s_elide(sub, inside, active, body, len, NULL);
                written += s_copy(out ? out + written : NULL, start, tag_len);
                written += out ? (size_t) (wire_varint_put(out + written, sub_len) - (out + written))
                               : wire_varint_len(sub_len);
                written += s_elide(sub, inside, active, body, len, out ? out + written : NULL);
                continue;
            }
            break; /* strings, packed numbers, unknown fields: as they are */
        }
        default: assert(!"wire_elide: input did not pass wire_scan()"); return written;
        }
        written += s_copy(out ? out + written : NULL, start, (size_t) (at - start));
    }
    assert(at == end);
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
