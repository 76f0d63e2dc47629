/* wire_check: what a decoded profeed message must mean before anyone uses it.
 *
 * protobuf-c checks only the encoding. Everything here is about content that
 * came from another process: required fields present, enum values this schema
 * knows (protobuf-c hands unknown values through as raw ints), strings valid
 * UTF-8, ids and file names safe to log and to use as paths, repeated counts and
 * string lengths within the limits below, numbers finite and in range, and the
 * Envelope's protocol version. A failed check returns PF_EBADINPUT (PF_ETOOBIG
 * for a limit, PF_EPROTO for the version) with a message naming the field path
 * ("Envelope.submit.kernel.kernel_file.name") and what was expected.
 *
 * The limits are generous for real profiler work and small enough that a
 * hostile peer cannot make a process allocate without bound. Text bodies
 * (Feedback.text, Feedback.json, File.content) are bounded only by the
 * message size limit in wire.h. docs/protocol.md lists the same rules. */
#ifndef WIRE_CHECK_H
#define WIRE_CHECK_H

#include "pf_error.h"
#include "profeed.pb-c.h"

/* The protocol version this build speaks; Envelopes with any other are refused. */
#define WIRE_PROTOCOL_VERSION ((uint32_t) PROFEED__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT)

#define WIRE_MAX_ID_LEN 128          /* job_id, agent_id, worker_id, pass_key, pass names */
#define WIRE_MAX_SHORT_LEN 256       /* host, gpu name, arch, versions, category, unit, state */
#define WIRE_MAX_FILE_NAME_LEN 1024  /* a relative path */
#define WIRE_MAX_FILE_PART_LEN 255   /* one path component (Linux NAME_MAX) */
#define WIRE_MAX_LABEL_LEN 16384     /* kernel and metric names: templated C++ names run long */
#define WIRE_MAX_LINE_LEN 65536      /* an action, evidence text, error, note, metadata value */
#define WIRE_MAX_ARG_LEN 131072      /* one argv string (Linux MAX_ARG_STRLEN) */
#define WIRE_MAX_STDERR_TAIL 65536
#define WIRE_MAX_ARGV 1024
#define WIRE_MAX_PASSES 64
#define WIRE_MAX_PASS_ARGS 256
#define WIRE_MAX_EXTRA 256
#define WIRE_MAX_FILES 256           /* per pass output */
#define WIRE_MAX_FINDINGS 4096
#define WIRE_MAX_EVIDENCE 64         /* per finding */
#define WIRE_MAX_LINES 16            /* source lines per finding */
#define WIRE_MAX_KERNELS 4096
#define WIRE_MAX_NOTES 1024          /* Feedback.errors, .notes and .missing, each */
#define WIRE_MAX_CLOSE_READINGS 1024 /* KernelSummary.close_call.readings */
#define WIRE_MAX_CLOSE_OTHERS 16     /* KernelSummary.close_call.other_firsts */
#define WIRE_MAX_GPUS 64
#define WIRE_MAX_PROFILERS 16
#define WIRE_MAX_CAPABILITIES 64     /* Ready.capabilities */
#define WIRE_MAX_SLOTS 1024
#define WIRE_MAX_NAMED_COUNTS 64     /* FarmCounters.finished and .rejected, each */
#define WIRE_MAX_HEARTBEAT_JOBS 1024
#define WIRE_MAX_STATUS_WORKERS 4096 /* workers listed in one FarmStatus */
#define WIRE_MAX_METRICS 1024        /* PassOutput.requested_metrics */
#define WIRE_MAX_FILTER_LEN 4096     /* ProfileFilter.kernel_regex and .nvtx_range */
#define WIRE_MAX_TIMEOUT_S 86400     /* a day: longer is a stuck job, not a slow one */
#define WIRE_MAX_CHUNK_RAW ((size_t) 32 * 1024 * 1024) /* PassChunk.raw_size (pass_chunk.h) */
#define WIRE_MIN_MAX_CHARS 200      /* the smallest text budget: a header and a first kernel (render.h) */
#define WIRE_MIN_MAX_TOKENS 64      /* the same in estimated tokens (render.h) */

/* Checks a decoded Envelope, JobRequest, PassOutput or Feedback (the messages
 * wire.h packs on their own) and everything inside it. `msg` must be one of
 * those four types. Returns PF_OK or fills `err`. */
pf_status_t wire_check(const ProtobufCMessage *msg, pf_error_t *err);

/* Checks one id (job, agent, worker, pass key): 1..WIRE_MAX_ID_LEN characters
 * from [A-Za-z0-9._:-], starting with a letter or digit. Ids end up in log
 * lines, map keys and file names of the broker's store, hence the alphabet.
 * `what` names the field in the error ("JobRequest.job_id"). */
pf_status_t wire_check_id(const char *id, const char *what, pf_error_t *err);

/* Checks a file name from the wire, which a collector or analyzer will use as a
 * path under its scratch directory: non-empty, relative, at most
 * WIRE_MAX_FILE_NAME_LEN bytes, components of at most WIRE_MAX_FILE_PART_LEN
 * bytes, none empty, "." or "..", no control characters. */
pf_status_t wire_check_file_name(const char *name, const char *what, pf_error_t *err);

#endif
