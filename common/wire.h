/* wire: pack and unpack the messages of proto/profeed.proto, checked both ways.
 *
 * Between processes everything travels as an Envelope (protocol version + one
 * body). JobRequest, PassOutput and Feedback can also be packed on their own,
 * for storage and for the client library's results.
 *
 * wire_*_unpack() is the only door for bytes from outside. In order it checks:
 *  1. the size against `max_bytes` (callers pass WIRE_MAX_MSG or a tighter
 *     limit of their own) — PF_ETOOBIG, before reading a byte;
 *  2. the raw encoding (wire_scan.h): lengths, NUL bytes inside strings, and
 *     that decoding will not allocate more than the budget below;
 *  3. protobuf-c's own decoding;
 *  4. the meaning (wire_check.h): required fields, enums, ids, file names,
 *     limits, the protocol version.
 * On failure it returns NULL, frees whatever it decoded, and `err` names the
 * field and the reason. A returned message is valid and the caller's:
 * destroy it with the matching wire_*_destroy(), which is only for messages
 * unpack returned (messages built in memory are the builder's to free).
 *
 * wire_*_pack() runs step 4 before packing, so a process never sends what its
 * peers would refuse, and enforces `max_bytes` on the result. It returns a
 * malloc'd buffer the caller frees, with its length in *size_p.
 *
 *     Profeed__Envelope env;
 *     wire_envelope_init(&env);            // sets protocol_version
 *     env.body_case = PROFEED__ENVELOPE__BODY_ACK;
 *     env.ack = &ack;
 *     uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err);
 */
#ifndef WIRE_H
#define WIRE_H

#include "pf_error.h"
#include "profeed.pb-c.h"
#include "wire_check.h"

#include <stddef.h>
#include <stdint.h>

/* Default largest message: a pass output carries profiler reports, and a full
 * Nsight Compute CSV of a big run is tens of MB. */
#define WIRE_MAX_MSG ((size_t) 64 * 1024 * 1024)
/* Decoding may allocate at most WIRE_DECODE_FACTOR x max_bytes + WIRE_DECODE_SLACK
 * (see wire_scan.h). Profiler files decode to about their own size; the slack
 * covers small control messages, whose structs outweigh their few bytes. */
#define WIRE_DECODE_FACTOR 4
#define WIRE_DECODE_SLACK ((size_t) 1024 * 1024)

/* Initialises `env` (profeed__envelope__init) and sets its protocol version. */
void wire_envelope_init(Profeed__Envelope *env);

uint8_t *wire_envelope_pack(const Profeed__Envelope *env, size_t max_bytes, size_t *size_p,
                            pf_error_t *err);
Profeed__Envelope *wire_envelope_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                        pf_error_t *err);
/* wire_envelope_unpack() for a process that forwards pass outputs without
 * reading their files (the broker): every check is made, and a PassOutput's
 * files keep their names, but their contents decode as empty instead of being
 * copied (wire_elide.h). Forward the received bytes, never the decoded copy. */
Profeed__Envelope *wire_envelope_unpack_no_files(const uint8_t *data, size_t size, size_t max_bytes,
                                                 pf_error_t *err);

/* wire_envelope_pack() in two steps, for callers that pack straight into a
 * buffer of their own (a ZeroMQ frame): measure checks `env` and its size as
 * pack does; pack_to then writes exactly *size_p bytes to `out`. */
pf_status_t wire_envelope_measure(const Profeed__Envelope *env, size_t max_bytes, size_t *size_p,
                                  pf_error_t *err);
void wire_envelope_pack_to(const Profeed__Envelope *env, uint8_t *out, size_t size);
void wire_envelope_destroy(Profeed__Envelope **env_p);

uint8_t *wire_job_request_pack(const Profeed__JobRequest *job, size_t max_bytes, size_t *size_p,
                               pf_error_t *err);
Profeed__JobRequest *wire_job_request_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                             pf_error_t *err);
void wire_job_request_destroy(Profeed__JobRequest **job_p);

uint8_t *wire_pass_output_pack(const Profeed__PassOutput *pass, size_t max_bytes, size_t *size_p,
                               pf_error_t *err);
Profeed__PassOutput *wire_pass_output_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                             pf_error_t *err);
void wire_pass_output_destroy(Profeed__PassOutput **pass_p);

uint8_t *wire_feedback_pack(const Profeed__Feedback *feedback, size_t max_bytes, size_t *size_p,
                            pf_error_t *err);
Profeed__Feedback *wire_feedback_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                        pf_error_t *err);
void wire_feedback_destroy(Profeed__Feedback **feedback_p);

/* The broker's journal records (broker/journal.h), read back from disk. */
uint8_t *wire_journal_record_pack(const Profeed__JournalRecord *rec, size_t max_bytes, size_t *size_p,
                                  pf_error_t *err);
Profeed__JournalRecord *wire_journal_record_unpack(const uint8_t *data, size_t size, size_t max_bytes,
                                                   pf_error_t *err);
void wire_journal_record_destroy(Profeed__JournalRecord **rec_p);

/* A deep copy of any message of ours, through pack and unpack, so every field
 * comes along, those added to the schema later included (a field-by-field
 * copy drops them silently). The copy is freed as an unpacked message is:
 * protobuf_c_message_free_unpacked(), or with the message it is put in. NULL
 * when out of memory. */
ProtobufCMessage *wire_message_copy(const ProtobufCMessage *msg);

#endif
