/* unitrace_table: one unitrace metrics file (trace.metrics.<pid>) as a table.
 *
 * Both generations of unitrace's CSV are read: the current one
 * (`Kernel,GlobalInstanceId,SubDeviceId,...`, quoted kernel names with commas
 * inside, a `=== Device #0 Metrics ===` banner and a blank line after each
 * instance) and the older one (`Kernel,Device,SubDeviceId,...`, unquoted,
 * trailing comma), in query mode (`,`) and sampling mode (`, `). Banners,
 * blank lines and repeated headers are skipped. Cells are kept as numbers
 * (NAN where a cell is not one); the kernel name is kept as text. */
#ifndef UNITRACE_TABLE_H
#define UNITRACE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"

/* Limits on untrusted input. */
#define UNITRACE_MAX_COLUMNS 4096
#define UNITRACE_MAX_CELLS (4u * 1024 * 1024) /* rows x columns */
#define UNITRACE_MAX_FIELD (64u * 1024)

typedef struct unitrace_table_t unitrace_table_t;

/* Parses `len` bytes; NULL with `err` set (naming `source` and the line) when
 * the bytes are not a unitrace metrics table. */
unitrace_table_t *unitrace_table_parse(const char *source, const char *bytes, size_t len,
                                       pf_error_t *err);
void unitrace_table_destroy(unitrace_table_t **self_p);

size_t unitrace_table_rows(const unitrace_table_t *self);
size_t unitrace_table_columns(const unitrace_table_t *self);
const char *unitrace_table_column_name(const unitrace_table_t *self, size_t col);
/* Index of the column named exactly `name` (e.g. "GpuTime[ns]"), or -1. */
int unitrace_table_column(const unitrace_table_t *self, const char *name);
bool unitrace_table_has(const unitrace_table_t *self, const char *name);
/* The kernel name of a row, and a cell by column name (NAN when absent). */
const char *unitrace_table_kernel(const unitrace_table_t *self, size_t row);
double unitrace_table_value(const unitrace_table_t *self, size_t row, const char *name);
double unitrace_table_cell(const unitrace_table_t *self, size_t row, int col);
/* True when the header used ", " separators (metric-sampling mode). */
bool unitrace_table_sampling(const unitrace_table_t *self);
/* Rows whose instance id column could not be read, kernels without a name,
 * and other rows skipped. */
size_t unitrace_table_skipped(const unitrace_table_t *self);

#endif
