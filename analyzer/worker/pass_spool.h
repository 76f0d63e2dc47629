/* pass_spool: the analyzer's side of streamed passes (issue 20).
 *
 * The chunks of a job's streamed passes are decompressed as they arrive and
 * appended to files in a folder of the job's own (under $TMPDIR), one
 * subfolder per pass; the analysis then reads those files by path, streaming,
 * as `profeed analyze` reads files given on its command line. So the analyzer
 * holds one chunk at a time, whatever the capture's size.
 *
 * A pass set to parse (ncu's, pass_spool_set_parse()) skips the disk for its
 * CSV pages: each page is parsed as its chunks come, into a data set of its
 * own (or, pass_spool_set_once(), the one of the pass's page before it) that
 * the analysis merges in the file's place (analyzer_file_t.parsed), so the
 * parse overlaps the transfer and the analysis that follows the last
 * chunk has only the merge and the judgement left. Its source pages, read
 * whole by the analysis, still go to disk. A page's parse error is kept for
 * the analysis to report. A pass that did not end (a cut stream, a new
 * attempt) is never analyzed: the worker reads a pass only after its last
 * chunk, and a chunk 0 of the pass (or the spool's end) drops what it held.
 *
 * Chunks must come in order: seq 0, 1, 2, ... per pass, each file's bytes at
 * the offset where the last ended. A chunk with seq 0 starts its pass over
 * (a new attempt, or the same one after a broker restart), dropping what the
 * spool held for it. */
#ifndef PASS_SPOOL_H
#define PASS_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "analyzer.h"
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

/* Whose backend parses the pages of the passes whose chunk 0 comes next as
 * they come (analyzer_page_begin; PROFILER_UNSPECIFIED: none, all spool), and keep their raw cells (the job wants the collated
 * data). Off by default: every file goes to disk. */
void pass_spool_set_parse(pass_spool_t *self, Profeed__Profiler parse, bool keep_raw);

/* The analysis will read each of the spool's files once, its pages in the
 * order they streamed (the worker's): a page then parses into the data set of
 * the page before it in its pass, and the analysis takes those sets instead
 * of copying them, so a job's launches are held once, not once per page and
 * again merged (analyzer_page_begin()'s `once`; 20,000 launches so held
 * three times were 138 MB). Set before the first chunk. Off by default: the
 * parsed pages can be analyzed again, in any order. */
void pass_spool_set_once(pass_spool_t *self, bool once);

/* The job's memory budget (analysis_budget.h; borrowed, outlives the spool),
 * charged with what its parsed pages hold. NULL (the default): unbounded. */
void pass_spool_set_budget(pass_spool_t *self, analysis_budget_t *budget);

/* How the analysis reads a file of a pass that streamed in: `file->parsed`
 * (a page parsed as it came) or `file->path` (on disk: in `path`). An error
 * when its parse failed (`err` names the file, line and problem). */
pf_status_t pass_spool_file(const pass_spool_t *self, const char *pass_key, const char *name, analyzer_file_t *file,
                            char *path, size_t cap, pf_error_t *err);

/* The path of a streamed pass's file, in `buf`. */
const char *pass_spool_path(const pass_spool_t *self, const char *pass_key, const char *name, char *buf, size_t cap);

#endif
