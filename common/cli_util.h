/* cli_util: flag parsing shared by the profeed processes. */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/* Parses a whole decimal number in [min, max] from a flag's value; on
 * failure prints "<prog>: <flag> needs ..." to stderr and returns false. */
bool cli_parse_int(const char *prog, const char *flag, const char *text, long long min, long long max,
                   long long *out);

#endif
