#include "wire.h"

#include "wire_elide.h"
#include "wire_scan.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

/* Checks `msg` and its packed size: the first half of every pack. */
static pf_status_t s_measure(const ProtobufCMessage *msg, size_t max_bytes, size_t *size_p, pf_error_t *err)
{
    assert(msg && size_p && max_bytes > 0);
    *size_p = 0;
    const char *name = msg->descriptor->short_name;
    if (wire_check(msg, err) != PF_OK) {
        pf_error_prefix(err, "cannot pack %s", name);
        return err ? err->code : PF_EBADINPUT;
    }
    size_t size = protobuf_c_message_get_packed_size(msg);
    if (size > max_bytes)
        return pf_error_set(err, PF_ETOOBIG, "cannot pack %s: %zu bytes, over the %zu-byte limit",
                            name, size, max_bytes);
    *size_p = size;
    return PF_OK;
}

static uint8_t *s_pack(const ProtobufCMessage *msg, size_t max_bytes, size_t *size_p, pf_error_t *err)
{
    assert(size_p);
    *size_p = 0;
    size_t size;
    if (s_measure(msg, max_bytes, &size, err) != PF_OK)
        return NULL;
    const char *name = msg->descriptor->short_name;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes) {
        pf_error_set(err, PF_ENOMEM, "cannot pack %s: out of memory for %zu bytes", name, size);
        return NULL;
    }
    size_t written = protobuf_c_message_pack(msg, bytes);
    assert(written == size);
    *size_p = written;
    return bytes;
}

/* Scans, decodes and checks. With `elide_in`, the contents of bytes fields
 * inside messages of that type are decoded as empty (wire_elide.h). */
static ProtobufCMessage *s_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                  size_t size, size_t max_bytes,
                                  const ProtobufCMessageDescriptor *elide_in, pf_error_t *err)
{
    assert(desc && max_bytes > 0);
    assert(data || size == 0);
    if (size > max_bytes) {
        pf_error_set(err, PF_ETOOBIG, "%s: %zu bytes, over the %zu-byte limit", desc->short_name,
                     size, max_bytes);
        return NULL;
    }
    size_t budget = max_bytes > (SIZE_MAX - WIRE_DECODE_SLACK) / WIRE_DECODE_FACTOR
                        ? SIZE_MAX
                        : max_bytes * WIRE_DECODE_FACTOR + WIRE_DECODE_SLACK;
    if (wire_scan(desc, data, size, budget, err) != PF_OK)
        return NULL;
    static const uint8_t empty[1];
    const uint8_t *decode = data ? data : empty;
    uint8_t *elided = NULL;
    size_t elided_size = elide_in ? wire_elide(desc, elide_in, decode, size, NULL) : size;
    if (elided_size < size) { /* there are contents to leave out */
        if (!(elided = malloc(elided_size ? elided_size : 1))) {
            pf_error_set(err, PF_ENOMEM, "%s: out of memory for %zu bytes", desc->short_name, elided_size);
            return NULL;
        }
        wire_elide(desc, elide_in, decode, size, elided);
        decode = elided;
        size = elided_size;
    }
    /* protobuf-c copies what it keeps, so the elided copy can go at once. */
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, size, decode);
    free(elided);
    if (!msg) {
        /* wire_scan passed, so the encoding is sound: this is a field whose
         * wire type does not match the schema, or allocation failed. */
        pf_error_set(err, PF_EBADINPUT,
                     "%s: %zu bytes are not a valid protobuf encoding of it "
                     "(a field of the wrong type?)",
                     desc->short_name, size);
        return NULL;
    }
    if (wire_check(msg, err) != PF_OK) {
        protobuf_c_message_free_unpacked(msg, NULL);
        return NULL;
    }
    return msg;
}

void wire_envelope_init(Profeed__Envelope *env)
{
    assert(env);
    profeed__envelope__init(env);
    env->has_protocol_version = 1;
    env->protocol_version = WIRE_PROTOCOL_VERSION;
}

/* The typed doors: each is the generic one with its descriptor. */

uint8_t *wire_envelope_pack(const Profeed__Envelope *env, size_t max_bytes, size_t *size_p,
                            pf_error_t *err)
{
    assert(env && env->base.descriptor == &profeed__envelope__descriptor);
    return s_pack(&env->base, max_bytes, size_p, err);
}

pf_status_t wire_envelope_measure(const Profeed__Envelope *env, size_t max_bytes, size_t *size_p,
                                  pf_error_t *err)
{
    assert(env);
    return s_measure(&env->base, max_bytes, size_p, err);
}

void wire_envelope_pack_to(const Profeed__Envelope *env, uint8_t *out, size_t size)
{
    assert(env && out);
    size_t written = protobuf_c_message_pack(&env->base, out);
    assert(written == size);
    (void) written;
    (void) size;
}

Profeed__Envelope *wire_envelope_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                        pf_error_t *err)
{
    return (Profeed__Envelope *) s_unpack(&profeed__envelope__descriptor, data, size, max_bytes, NULL, err);
}

Profeed__Envelope *wire_envelope_unpack_no_files(const uint8_t *data, size_t size, size_t max_bytes,
                                                 pf_error_t *err)
{
    return (Profeed__Envelope *) s_unpack(&profeed__envelope__descriptor, data, size, max_bytes,
                                          &profeed__pass_output__descriptor, err);
}

void wire_envelope_destroy(Profeed__Envelope **env_p)
{
    assert(env_p);
    if (*env_p) {
        profeed__envelope__free_unpacked(*env_p, NULL);
        *env_p = NULL;
    }
}

uint8_t *wire_job_request_pack(const Profeed__JobRequest *job, size_t max_bytes, size_t *size_p,
                               pf_error_t *err)
{
    assert(job && job->base.descriptor == &profeed__job_request__descriptor);
    return s_pack(&job->base, max_bytes, size_p, err);
}

Profeed__JobRequest *wire_job_request_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                             pf_error_t *err)
{
    return (Profeed__JobRequest *) s_unpack(&profeed__job_request__descriptor, data, size,
                                            max_bytes, NULL, err);
}

void wire_job_request_destroy(Profeed__JobRequest **job_p)
{
    assert(job_p);
    if (*job_p) {
        profeed__job_request__free_unpacked(*job_p, NULL);
        *job_p = NULL;
    }
}

uint8_t *wire_pass_output_pack(const Profeed__PassOutput *pass, size_t max_bytes, size_t *size_p,
                               pf_error_t *err)
{
    assert(pass && pass->base.descriptor == &profeed__pass_output__descriptor);
    return s_pack(&pass->base, max_bytes, size_p, err);
}

Profeed__PassOutput *wire_pass_output_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                             pf_error_t *err)
{
    return (Profeed__PassOutput *) s_unpack(&profeed__pass_output__descriptor, data, size,
                                            max_bytes, NULL, err);
}

void wire_pass_output_destroy(Profeed__PassOutput **pass_p)
{
    assert(pass_p);
    if (*pass_p) {
        profeed__pass_output__free_unpacked(*pass_p, NULL);
        *pass_p = NULL;
    }
}

uint8_t *wire_feedback_pack(const Profeed__Feedback *feedback, size_t max_bytes, size_t *size_p,
                            pf_error_t *err)
{
    assert(feedback && feedback->base.descriptor == &profeed__feedback__descriptor);
    return s_pack(&feedback->base, max_bytes, size_p, err);
}

Profeed__Feedback *wire_feedback_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                        pf_error_t *err)
{
    return (Profeed__Feedback *) s_unpack(&profeed__feedback__descriptor, data, size, max_bytes,
                                          NULL, err);
}

void wire_feedback_destroy(Profeed__Feedback **feedback_p)
{
    assert(feedback_p);
    if (*feedback_p) {
        profeed__feedback__free_unpacked(*feedback_p, NULL);
        *feedback_p = NULL;
    }
}

uint8_t *wire_journal_record_pack(const Profeed__JournalRecord *rec, size_t max_bytes, size_t *size_p,
                                  pf_error_t *err)
{
    assert(rec && rec->base.descriptor == &profeed__journal_record__descriptor);
    return s_pack(&rec->base, max_bytes, size_p, err);
}

Profeed__JournalRecord *wire_journal_record_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                                   pf_error_t *err)
{
    return (Profeed__JournalRecord *) s_unpack(&profeed__journal_record__descriptor, data, size,
                                               max_bytes, NULL, err);
}

void wire_journal_record_destroy(Profeed__JournalRecord **rec_p)
{
    assert(rec_p);
    if (*rec_p) {
        profeed__journal_record__free_unpacked(*rec_p, NULL);
        *rec_p = NULL;
    }
}

ProtobufCMessage *wire_message_copy(const ProtobufCMessage *msg)
{
    assert(msg && msg->descriptor);
    size_t size = protobuf_c_message_get_packed_size(msg);
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        return NULL;
    size_t packed = protobuf_c_message_pack(msg, bytes);
    assert(packed == size);
    (void) packed;
    ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, size, bytes);
    free(bytes);
    return copy;
}
