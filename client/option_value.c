/* option_value.c: see option_value.h. */
#include "option_value.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool option_value_count(const char *value, unsigned long long max, unsigned long long *out)
{
    if (!value || value[0] < '0' || value[0] > '9') /* strtoull would take a sign and spaces */
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

bool option_value_bool(const char *value, bool *out)
{
    if (!value)
        return false;
    if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0)
        return *out = false, true;
    if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0)
        return *out = true, true;
    return false;
}

bool option_value_real(const char *value, double lo, double hi, double *out)
{
    if (!value || !*value)
        return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (errno != 0 || end == value || *end != '\0' || !isfinite(v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}
