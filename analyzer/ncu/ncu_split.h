/* ncu_split: the fast path for the one record shape Nsight Compute writes.
 *
 * ncu quotes every field and never puts a quote inside one, so a record line
 * is "f1","f2",...,"fn" (the details page adds an unquoted empty last field).
 * For that shape finding the fields is a memchr per field instead of libcsv's
 * state machine per byte, which was two thirds of `profeed analyze`'s time.
 * Anything else (an escaped quote, unquoted text, spaces around a field, a
 * carriage return between fields, an oversized field) is refused, and the caller
 * hands the record to libcsv, which stays the parser of the CSV grammar.
 * For every line both accept, both give the same fields (tests/test_ncu_csv.c
 * and the NCU fuzz target check this). */
#ifndef NCU_SPLIT_H
#define NCU_SPLIT_H

#include <stddef.h>
#include <stdint.h>

/* One field: `len` bytes of content at `off` in the line. */
typedef struct {
    uint32_t off;
    uint32_t len;
} ncu_span_t;

/* Finds the fields of `line` (`len` bytes, its line terminator removed) and
 * returns how many there are; the first `cap` are stored in `spans`, so a
 * result above `cap` asks for a larger array. A line of another shape, or a
 * field longer than `max_field` bytes, returns SIZE_MAX. Reads `line`,
 * writes nothing to it. */
size_t ncu_split_quoted(const char *line, size_t len, ncu_span_t *spans, size_t cap,
                        size_t max_field);

#endif
