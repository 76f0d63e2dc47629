#include "cli_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

bool cli_parse_int(const char *prog, const char *flag, const char *text, long long min, long long max,
                   long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno || v < min || v > max) {
        fprintf(stderr, "%s: %s needs a whole number in %lld..%lld, got \"%s\"\n", prog, flag, min, max, text);
        return false;
    }
    *out = v;
    return true;
}
