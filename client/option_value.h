/* option_value: the values of options set by name (profeed_session_set,
 * profeed_farm_job_set), parsed one way for both: whole counts, switches
 * and fractions, with the empty string meaning "the default". */
#ifndef OPTION_VALUE_H
#define OPTION_VALUE_H

#include <stdbool.h>

/* A whole decimal number in 0..max, no sign, nothing after it. */
bool option_value_count(const char *value, unsigned long long max, unsigned long long *out);

/* 0, 1, false or true. */
bool option_value_bool(const char *value, bool *out);

/* A finite decimal number in lo..hi. */
bool option_value_real(const char *value, double lo, double hi, double *out);

#endif
