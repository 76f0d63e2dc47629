#include "wire_scan.h"

#include "wire_path.h"
#include "wire_varint.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* protobuf-c keeps one ScannedMember record (tag, wire type, field, length,
 * data pointer: 32 bytes on LP64) per field occurrence while it decodes. */
#define SCAN_RECORD_BYTES 32
/* An element of a repeated array is at most a ProtobufCBinaryData (16 bytes). */
#define SCAN_ELEMENT_BYTES 16
/* Our schema nests at most 6 deep (Envelope.dispatch.job.kernel.kernel_file);
 * the walk follows descriptors, so a peer cannot make it deeper. The guard is
 * for a future recursive message, which protobuf-c would not bound either. */
#define SCAN_MAX_DEPTH 32
#define SCAN_PATH_LEN 256
/* The longest tag or length protobuf-c reads (32 bits of value). */
#define SCAN_MAX_HEADER_BYTES 5

typedef struct {
    const uint8_t *start;   /* the whole message, to report byte offsets */
    size_t decoded;         /* bytes protobuf-c will allocate, estimated from above */
    size_t budget;
    const char *root;       /* the top message's name, for errors */
    pf_error_t *err;
} scan_t;

/* Counts `bytes` against the decode budget; fails once it is exceeded. */
static pf_status_t s_charge(scan_t *scan, size_t bytes)
{
    if (bytes > scan->budget - scan->decoded) {
        return pf_error_set(scan->err, PF_ETOOBIG,
                            "%s: would decode to more than %zu bytes of memory; refused "
                            "before decoding (too many small fields)",
                            scan->root, scan->budget);
    }
    scan->decoded += bytes;
    return PF_OK;
}

static pf_status_t s_malformed(scan_t *scan, const wire_path_t *path, const uint8_t *at, const char *what)
{
    char where[SCAN_PATH_LEN];
    return pf_error_set(scan->err, PF_EBADINPUT, "%s: %s at byte %zu of %s",
                        wire_path_format(path, where, sizeof where), what, (size_t) (at - scan->start),
                        scan->root);
}

/* Scans the fields of one message of type `desc` in [at, end). */
static pf_status_t s_scan_message(scan_t *scan, const ProtobufCMessageDescriptor *desc,
                                  const uint8_t *at, const uint8_t *end, const wire_path_t *path,
                                  unsigned depth)
{
    if (depth > SCAN_MAX_DEPTH)
        return s_malformed(scan, path, at, "messages nested too deeply");
    pf_status_t rc = s_charge(scan, desc->sizeof_message);

    while (rc == PF_OK && at < end) {
        const uint8_t *field_start = at;
        uint64_t tag;
        if (!wire_varint_read(&at, end, &tag))
            return s_malformed(scan, path, field_start, "truncated field tag");
        /* protobuf-c reads at most 5 bytes of a tag or a length; refusing
         * longer (non-minimal) ones here keeps every decoder of ours, the
         * broker's without file contents too (wire_elide), in agreement. */
        if (at - field_start > SCAN_MAX_HEADER_BYTES)
            return s_malformed(scan, path, field_start, "field tag longer than 5 bytes");
        uint64_t number = tag >> 3;
        unsigned wire_type = (unsigned) (tag & 7);
        if (number == 0 || number > 0x1fffffff)
            return s_malformed(scan, path, field_start, "field number out of range");
        const ProtobufCFieldDescriptor *field =
            protobuf_c_message_descriptor_get_field(desc, (unsigned) number);

        uint64_t len = 0;
        switch (wire_type) {
        case WIRE_TYPE_VARINT: {
            uint64_t ignored;
            if (!wire_varint_read(&at, end, &ignored))
                return s_malformed(scan, path, field_start, "truncated varint");
            break;
        }
        case WIRE_TYPE_64BIT:
        case WIRE_TYPE_32BIT:
            len = wire_type == WIRE_TYPE_64BIT ? 8 : 4;
            if ((uint64_t) (end - at) < len)
                return s_malformed(scan, path, field_start, "truncated fixed-width value");
            at += len;
            break;
        case WIRE_TYPE_LEN: {
            const uint8_t *length_start = at;
            if (!wire_varint_read(&at, end, &len))
                return s_malformed(scan, path, field_start, "truncated length");
            if (at - length_start > SCAN_MAX_HEADER_BYTES)
                return s_malformed(scan, path, field_start, "length longer than 5 bytes");
            if (len > (uint64_t) (end - at))
                return s_malformed(scan, path, field_start, "length runs past the end");
            at += len;
            break;
        }
        default:
            return s_malformed(scan, path, field_start, "unsupported wire type (groups?)");
        }
        size_t data_len = (size_t) len;
        const uint8_t *data = at - data_len;

        rc = s_charge(scan, SCAN_RECORD_BYTES);
        if (rc != PF_OK)
            break;
        if (!field) {
            /* Kept by protobuf-c as an unknown field: a record plus a copy. */
            rc = s_charge(scan, sizeof(ProtobufCMessageUnknownField) + (size_t) (at - field_start));
            continue;
        }
        if (field->label == PROTOBUF_C_LABEL_REPEATED)
            rc = s_charge(scan, SCAN_ELEMENT_BYTES);
        if (rc != PF_OK || wire_type != WIRE_TYPE_LEN)
            continue;

        const wire_path_t sub = {.parent = path, .name = field->name, .index = -1};
        switch (field->type) {
        case PROTOBUF_C_TYPE_STRING: {
            const uint8_t *nul = memchr(data, 0, data_len);
            if (nul) {
                char where[SCAN_PATH_LEN];
                return pf_error_set(scan->err, PF_EBADINPUT,
                                    "%s: string contains a NUL byte (byte %zu of %s)",
                                    wire_path_format(&sub, where, sizeof where),
                                    (size_t) (nul - scan->start), scan->root);
            }
            rc = s_charge(scan, data_len + 1);
            break;
        }
        case PROTOBUF_C_TYPE_MESSAGE:
            rc = s_scan_message(scan, field->descriptor, data, at, &sub, depth + 1);
            break;
        case PROTOBUF_C_TYPE_BYTES:
            rc = s_charge(scan, data_len);
            break;
        default:
            /* A packed run of numbers: each takes at least one byte on the
             * wire and at most 8 in memory. */
            rc = data_len > SIZE_MAX / 8 ? s_charge(scan, SIZE_MAX) : s_charge(scan, data_len * 8);
            break;
        }
    }
    return rc;
}

pf_status_t wire_scan(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                      size_t decode_budget, pf_error_t *err)
{
    assert(desc && desc->magic == PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
    assert(data || size == 0);
    static const uint8_t empty[1];
    if (!data)
        data = empty;
    scan_t scan = {
        .start = data, .decoded = 0, .budget = decode_budget, .root = desc->short_name, .err = err,
    };
    const wire_path_t root = {.parent = NULL, .name = desc->short_name, .index = -1};
    return s_scan_message(&scan, desc, data, data + size, &root, 0);
}
