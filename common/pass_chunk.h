/* pass_chunk: the bytes of a pass's files as bounded, zstd-compressed chunks.
 *
 * A capture of thousands of launches is hundreds of MB: too big for one
 * message, and too big to hold whole in every process it crosses. So a pass
 * travels as a stream of PassChunk messages (proto/profeed.proto), each
 * carrying at most `max_raw` bytes of one file as one zstd frame, and every
 * process holds a few chunks at a time, never the pass.
 *
 * A codec owns one compression and one decompression context and a buffer
 * of each kind, sized once for `max_raw`: packing and unpacking allocate
 * nothing per chunk. A chunk from outside is bad input until proven
 * otherwise: pass_chunk_codec_unpack() checks its declared sizes against the
 * limit, the frame's own header against them, and that the frame is exactly
 * one and whole, all before a byte is decompressed, so a small frame that
 * claims (or would expand to) more than the limit is refused, not allocated
 * for ("a zip bomb is bad input").
 *
 *     pass_chunk_codec_t *codec = pass_chunk_codec_new(PASS_CHUNK_DEFAULT_RAW, &err);
 *     const uint8_t *z; size_t zlen;
 *     pass_chunk_codec_pack(codec, bytes, len, &z, &zlen, &err);   // z: the codec's until the next pack
 *     ...
 *     pass_chunk_codec_unpack(codec, chunk, &raw, &raw_len, &err); // raw: the codec's until the next unpack
 *     pass_chunk_codec_destroy(&codec);
 *
 * A codec is for one thread at a time. */
#ifndef PASS_CHUNK_H
#define PASS_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"
#include "profeed.pb-c.h"
#include "wire_check.h"

/* Raw bytes per chunk unless configured: 4 MiB compresses to about 0.3-1 MiB
 * of NCU CSV, small next to the 64 MiB message limit and to a process's
 * memory, large enough that the per-message cost (a broker round trip, a
 * journal record) is amortised over megabytes. */
#define PASS_CHUNK_DEFAULT_RAW ((size_t) 4 * 1024 * 1024)
/* The most raw bytes one chunk may declare on the wire, whatever a process is
 * configured with (wire_check.c): a chunk's decompressed buffer is allocated
 * for its raw size, so this bounds what a peer can make a process allocate. */
#define PASS_CHUNK_MAX_RAW WIRE_MAX_CHUNK_RAW
/* The smallest chunk size a setting may ask for: smaller only multiplies
 * messages. */
#define PASS_CHUNK_MIN_RAW ((size_t) 4 * 1024)
/* zstd level 1: NCU CSV compresses 6-10x at it at several hundred MB/s;
 * higher levels gain a little ratio for much more CPU on the GPU host. */
#define PASS_CHUNK_LEVEL 1

/* Chunks a pass may have unconfirmed: a sender reads and sends ahead of its
 * receiver by at most this many, so the bytes in flight per stream are
 * bounded by the window, not by the capture (and a broker can budget them:
 * stream-memory-mb). */
#define PASS_CHUNK_WINDOW 4

typedef struct pass_chunk_codec_t pass_chunk_codec_t;

/* A codec for chunks of at most `max_raw` raw bytes (PASS_CHUNK_MIN_RAW ..
 * PASS_CHUNK_MAX_RAW). NULL with `err` set when out of memory or the size is
 * out of range. */
pass_chunk_codec_t *pass_chunk_codec_new(size_t max_raw, pf_error_t *err);
void pass_chunk_codec_destroy(pass_chunk_codec_t **self_p);

/* The codec's chunk size limit. */
size_t pass_chunk_codec_max_raw(const pass_chunk_codec_t *self);

/* Compresses `len` (<= max_raw) bytes into one zstd frame that records its
 * content size. *out points into the codec, valid until the next pack. */
pf_status_t pass_chunk_codec_pack(pass_chunk_codec_t *self, const void *raw, size_t len, const uint8_t **out,
                                  size_t *out_len, pf_error_t *err);

/* Checks and decompresses a chunk that passed wire_check (ids, names and
 * size fields present and in their wire ranges). Refuses, with the chunk's
 * job, pass and sequence number in the message, a raw_size over the codec's
 * limit, a compressed_size that is not the data's length, a frame whose
 * header does not state its content size or states another, anything but
 * exactly one whole frame, and a frame that does not decompress to exactly
 * raw_size bytes. *raw points into the codec, valid until the next unpack. */
pf_status_t pass_chunk_codec_unpack(pass_chunk_codec_t *self, const Profeed__PassChunk *chunk, const uint8_t **raw,
                                    size_t *raw_len, pf_error_t *err);

#endif
