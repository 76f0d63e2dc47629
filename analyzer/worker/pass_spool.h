/* pass_spool: the analyzer's side of streamed passes (issue 20).
 *
 * The chunks of a job's streamed passes are decompressed as they arrive and
 * appended to files in a folder of the job's own (under $TMPDIR), one
 * subfolder per pass; the analysis then reads those files by path, streaming,
 * as `profeed analyze` reads files given on its command line. So the analyzer
 * holds one chunk at a time, whatever the capture's size.
 *
 * Chunks must come in order: seq 0, 1, 2, ... per pass, each file's bytes at
 * the offset where the last ended. A chunk with seq 0 starts its pass over
 * (a new attempt, or the same one after a broker restart), dropping what the
 * spool held for it. */
#ifndef PASS_SPOOL_H
#define PASS_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "pass_chunk.h"
#include "pf_error.h"
#include "profeed.pb-c.h"

typedef struct pass_spool_t pass_spool_t;

/* A spool for one job; its folder is made at the first chunk. */
pass_spool_t *pass_spool_new(const char *job_id);
/* Removes the spool's folder and everything in it. */
void pass_spool_destroy(pass_spool_t **self_p);

typedef enum {
    PASS_SPOOL_STORED,    /* written; acknowledge it */
    PASS_SPOOL_DUPLICATE, /* seen already (a resend): acknowledge it again */
    PASS_SPOOL_PASS_DONE, /* the pass's last chunk: its files are complete */
} pass_spool_result_t;

/* Decompresses (with `codec`) and appends one chunk. Errors, with the chunk
 * named: out of order, a file name that is not a plain name, bad
 * compression, a disk that cannot be written. */
pf_status_t pass_spool_add(pass_spool_t *self, pass_chunk_codec_t *codec, const Profeed__PassChunk *chunk,
                           pass_spool_result_t *result, pf_error_t *err);

/* The path of a streamed pass's file, in `buf`. */
const char *pass_spool_path(const pass_spool_t *self, const char *pass_key, const char *name, char *buf, size_t cap);

#endif
