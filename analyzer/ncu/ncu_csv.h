/* ncu_csv: streams one Nsight Compute CSV output (--page raw or --page details)
 * into an ncu_data_t.
 *
 * The stream may start with anything ncu or the program printed (==PROF==,
 * ==WARNING==, the program's stdout); lines that do not start a CSV record are
 * read for ==ERROR== / ==WARNING== messages and otherwise skipped. Input comes
 * in chunks of any size, so a capture is never held whole in memory; only the
 * metrics in ncu_metrics.h are kept. */
#ifndef NCU_CSV_H
#define NCU_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu_data.h"
#include "pf_error.h"

/* Limits on untrusted input. */
#define NCU_CSV_MAX_FIELD (1u << 20)  /* one field, bytes */
#define NCU_CSV_MAX_COLUMNS 65536     /* columns in a header */
#define NCU_CSV_KERNEL_MAX 4096       /* kernel names are cut here */

typedef struct ncu_csv_t ncu_csv_t;

/* A parser that adds what it reads to `data` (borrowed, must outlive it).
 * `source` names the input in errors ("pass ncu.001: raw.csv"). */
ncu_csv_t *ncu_csv_new(ncu_data_t *data, const char *source);
void ncu_csv_destroy(ncu_csv_t **self_p);

/* Reads every record with libcsv instead of the fast splitter for ncu's own
 * record shape (ncu_split.h); the results are the same, only slower. For
 * tests and benchmarks that compare the two. */
void ncu_csv_set_libcsv_only(ncu_csv_t *self, bool libcsv_only);

/* Parses the next `len` bytes. After an error the parser refuses more input. */
pf_status_t ncu_csv_feed(ncu_csv_t *self, const char *bytes, size_t len, pf_error_t *err);

/* Ends the input: flushes a last row without a newline, checks the stream
 * held a table (or a profiler message saying why not). */
pf_status_t ncu_csv_finish(ncu_csv_t *self, pf_error_t *err);

/* Whole-buffer and whole-file conveniences; `path` "-" reads stdin. */
pf_status_t ncu_csv_parse_buffer(ncu_data_t *data, const char *source, const char *bytes,
                                 size_t len, pf_error_t *err);
pf_status_t ncu_csv_parse_file(ncu_data_t *data, const char *path, pf_error_t *err);

#endif
