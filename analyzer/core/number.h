/* number: metric values and units as the profilers print them, for every
 * profiler's parser (ncu's CSV, VTune's reports).
 *
 * Values come with the process locale's digit grouping ("3,197,588,809.13"
 * under en_US, "3197588809.13" under LC_ALL=C, "3.197.588.809,13" where a
 * European locale leaks in), sometimes with an instance list after the
 * aggregate ("10,485,760 (2,621,440; ...)"), and sometimes as "n/a" or
 * "no data". Units are base ("ns", "byte", "hz") in live --csv runs and
 * auto-scaled ("us", "Gbyte", "Ghz", "Tbyte/s") in --import runs. */
#ifndef NUMBER_H
#define NUMBER_H

#include <stdbool.h>
#include <stddef.h>

/* Parses `len` bytes of `text` as a number. Returns false (and leaves *out
 * untouched) for anything that is not one: empty, "n/a", "nan", words. */
bool number_parse(const char *text, size_t len, double *out);

/* The factor that turns a value in `unit` into the base unit profeed keeps:
 * nanoseconds for time, plain bytes / hertz / counts otherwise, so "us" -> 1e3,
 * "Ghz" -> 1e9, "Kbyte/cycle" -> 1e3, "Tbyte/s" -> 1e12, "%" -> 1. Unknown
 * units give 1: they are already base. */
double number_unit_scale(const char *unit);

#endif
