/* ncu_columns: which metrics a raw-page capture actually holds.
 *
 * ncu drops a --metrics name the GPU or ncu version does not know without a
 * word (rc 0: KernelAgent's list loses two of 29 on Hopper), so a pass that
 * asked for metrics by name is checked against the header it got back; the
 * feedback then says which were missing and what could not be judged. */
#ifndef NCU_COLUMNS_H
#define NCU_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>

/* Finds the raw page's header record ("ID","Process ID",...) in `bytes`
 * (what ncu printed or logged, any prefix of ==PROF== or program lines) and
 * sets missing[i] for each requested[i] that is not one of its columns.
 * Returns how many are missing, or -1 when the bytes hold no raw-page header
 * (a failed run, or a details page), in which case `missing` is untouched. */
int ncu_columns_missing(const char *bytes, size_t len, const char *const *requested, size_t count, bool *missing);

#endif
