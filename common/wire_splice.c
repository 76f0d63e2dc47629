#include "wire_splice.h"

#include <assert.h>
#include <string.h>

#include "profeed.pb-c.h"

enum { WIRETYPE_VARINT = 0, WIRETYPE_64BIT = 1, WIRETYPE_LEN = 2, WIRETYPE_32BIT = 5 };

/* Reads a varint; false past the end or beyond 10 bytes. */
static bool s_read_varint(const uint8_t *data, size_t size, size_t *pos, uint64_t *value)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70 && *pos < size; shift += 7) {
        uint8_t byte = data[(*pos)++];
        v |= (uint64_t) (byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = v;
            return true;
        }
    }
    return false;
}

bool wire_splice_find(const uint8_t *data, size_t size, uint32_t field, const uint8_t **body_p,
                      size_t *len_p)
{
    assert(data || size == 0);
    size_t pos = 0, found = 0;
    while (pos < size) {
        uint64_t tag, value;
        if (!s_read_varint(data, size, &pos, &tag))
            return false;
        switch (tag & 7) {
        case WIRETYPE_VARINT:
            if (!s_read_varint(data, size, &pos, &value))
                return false;
            break;
        case WIRETYPE_64BIT:
        case WIRETYPE_32BIT: {
            size_t width = (tag & 7) == WIRETYPE_64BIT ? 8 : 4;
            if (size - pos < width)
                return false;
            pos += width;
            break;
        }
        case WIRETYPE_LEN:
            if (!s_read_varint(data, size, &pos, &value) || value > size - pos)
                return false;
            if (tag >> 3 == field) {
                found++;
                *body_p = data + pos;
                *len_p = (size_t) value;
            }
            pos += (size_t) value;
            break;
        default:
            return false;
        }
    }
    return found == 1;
}

static size_t s_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *s_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t) (v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t) v;
    return p;
}

/* Tag and length of a length-delimited field holding `len` bytes. */
static size_t s_header_len(uint32_t field, size_t len)
{
    return s_varint_len((uint64_t) field << 3 | WIRETYPE_LEN) + s_varint_len(len);
}

static uint8_t *s_put_header(uint8_t *p, uint32_t field, size_t len)
{
    p = s_put_varint(p, (uint64_t) field << 3 | WIRETYPE_LEN);
    return s_put_varint(p, len);
}

size_t wire_splice_envelope(uint8_t *out, uint32_t body_field, const ProtobufCMessage *head,
                            uint32_t inner_field, const uint8_t *inner, size_t inner_len)
{
    assert(inner || inner_len == 0);
    const uint64_t version = PROFEED__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT;
    size_t head_len = head ? protobuf_c_message_get_packed_size(head) : 0;
    size_t body_len = head ? head_len + s_header_len(inner_field, inner_len) + inner_len : inner_len;
    size_t total = 1 + s_varint_len(version) + s_header_len(body_field, body_len) + body_len;
    if (!out)
        return total;
    uint8_t *p = out;
    *p++ = 1 << 3 | WIRETYPE_VARINT; /* Envelope.protocol_version */
    p = s_put_varint(p, version);
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
