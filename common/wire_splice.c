#include "wire_splice.h"

#include <assert.h>
#include <string.h>

#include "profeed.pb-c.h"
#include "wire_varint.h"

bool wire_splice_find(const uint8_t *data, size_t size, uint32_t field, const uint8_t **body_p,
                      size_t *len_p)
{
    assert(data || size == 0);
    const uint8_t *at = data, *end = data + size;
    size_t found = 0;
    while (at < end) {
        uint64_t tag, value;
        if (!wire_varint_read(&at, end, &tag))
            return false;
        switch (tag & 7) {
        case WIRE_TYPE_VARINT:
            if (!wire_varint_read(&at, end, &value))
                return false;
            break;
        case WIRE_TYPE_64BIT:
        case WIRE_TYPE_32BIT: {
            size_t width = (tag & 7) == WIRE_TYPE_64BIT ? 8 : 4;
            if ((size_t) (end - at) < width)
                return false;
            at += width;
            break;
        }
        case WIRE_TYPE_LEN:
            if (!wire_varint_read(&at, end, &value) || value > (uint64_t) (end - at))
                return false;
            if (tag >> 3 == field) {
                found++;
                *body_p = at;
                *len_p = (size_t) value;
            }
            at += (size_t) value;
            break;
        default:
            return false;
        }
    }
    return found == 1;
}

/* Tag and length of a length-delimited field holding `len` bytes. */
static size_t s_header_len(uint32_t field, size_t len)
{
    return wire_varint_len((uint64_t) field << 3 | WIRE_TYPE_LEN) + wire_varint_len(len);
}

static uint8_t *s_put_header(uint8_t *p, uint32_t field, size_t len)
{
    p = wire_varint_put(p, (uint64_t) field << 3 | WIRE_TYPE_LEN);
    return wire_varint_put(p, len);
}

size_t wire_splice_envelope(uint8_t *out, uint32_t body_field, const ProtobufCMessage *head,
                            uint32_t inner_field, const uint8_t *inner, size_t inner_len)
{
    assert(inner || inner_len == 0);
    const uint64_t version = PROFEED__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
    size_t head_len = head ? protobuf_c_message_get_packed_size(head) : 0;
    size_t body_len = head ? head_len + s_header_len(inner_field, inner_len) + inner_len : inner_len;
    size_t total = 1 + wire_varint_len(version) + s_header_len(body_field, body_len) + body_len;
    if (!out)
        return total;
    uint8_t *p = out;
    *p++ = 1 << 3 | WIRE_TYPE_VARINT; /* Envelope.protocol_version */
    p = wire_varint_put(p, version);
    p = s_put_header(p, body_field, body_len);
    if (head) {
        p += protobuf_c_message_pack(head, p);
        p = s_put_header(p, inner_field, inner_len);
    }
    if (inner_len)
        memcpy(p, inner, inner_len);
    p += inner_len;
    assert((size_t) (p - out) == total);
    return total;
}
