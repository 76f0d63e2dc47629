#include "number.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Longest value we accept; ncu's longest plain numbers are ~30 characters. */
#define NUMBER_MAX 64

static bool s_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool number_parse(const char *text, size_t len, double *out)
{
    /* An instance list follows the aggregate: keep what stands before " (". */
    const char *paren = memchr(text, '(', len);
    if (paren)
        len = (size_t) (paren - text);
    while (len > 0 && s_is_space(text[0])) {
        text++;
        len--;
    }
    while (len > 0 && s_is_space(text[len - 1]))
        len--;
    if (len == 0 || len >= NUMBER_MAX)
        return false;

    /* Decide which of ',' and '.' is the decimal mark. The last one to appear
     * is the decimal mark when both appear; a lone kind is grouping when it
     * repeats or when exactly three digits follow it ("57,984"), since ncu
     * never prints a bare three-decimal value with grouping on. */
    size_t commas = 0, dots = 0;
    const char *last_comma = NULL, *last_dot = NULL;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ',') {
            commas++;
            last_comma = text + i;
        } else if (text[i] == '.') {
            dots++;
            last_dot = text + i;
        }
    }
    char decimal = '.';
    if (commas && dots)
        decimal = last_comma > last_dot ? ',' : '.';
    else if (commas == 1 && (size_t) (text + len - last_comma - 1) != 3)
        decimal = ',';
    else if (dots > 1)
        decimal = ','; /* "1.234.567": dots group, no decimals */

    char buf[NUMBER_MAX];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ',' || c == '.') {
            if (c == decimal)
                buf[n++] = '.';
            continue; /* grouping */
        }
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E'))
            return false;
        buf[n++] = c;
    }
    buf[n] = '\0';
    if (n == 0)
        return false;

    char *end = NULL;
    errno = 0;
    double value = strtod(buf, &end);
    if (end == buf || *end != '\0' || errno == ERANGE || !isfinite(value))
        return false;
    *out = value;
    return true;
}

/* Powers of ten for the SI prefixes ncu uses. */
static double s_prefix(char c)
{
    switch (c) {
    case 'n': return 1e-9;
    case 'u': return 1e-6;
    case 'm': return 1e-3;
    case 'k':
    case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
    }
}

/* Seconds for a time unit ("s", "second", "ms", "usecond"), 0 if not time. */
static double s_time_seconds(const char *unit, size_t len)
{
    if ((len == 1 && unit[0] == 's') || (len == 6 && memcmp(unit, "second", 6) == 0))
        return 1;
    if (len >= 2 && s_prefix(unit[0]) != 0 && s_prefix(unit[0]) < 1) {
        if ((len == 2 && unit[1] == 's') || (len == 7 && memcmp(unit + 1, "second", 6) == 0))
            return s_prefix(unit[0]);
    }
    return 0;
}

/* Counted things whose names may carry an SI prefix in auto-scaled output. */
static bool s_is_base_word(const char *word, size_t len)
{
    static const char *const words[] = {"byte", "hz", "cycle", "inst", "sector", "sectors",
                                        "request", "warp", "thread", "block", "wavefront"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == len && memcmp(words[i], word, len) == 0)
            return true;
    return false;
}

double number_unit_scale(const char *unit)
{
    if (!unit || !*unit)
        return 1;
    const char *slash = strchr(unit, '/');
    size_t num_len = slash ? (size_t) (slash - unit) : strlen(unit);

    double scale = 1;
    double seconds = s_time_seconds(unit, num_len);
    if (seconds > 0)
        scale = seconds * 1e9; /* time is kept in nanoseconds */
    else if (num_len > 1 && s_prefix(unit[0]) != 0 && s_is_base_word(unit + 1, num_len - 1))
        scale = s_prefix(unit[0]);

    if (slash) {
        /* A rate per unit of time: "byte/s" is base; "sector/us" is per 1e-6 s. */
        double per = s_time_seconds(slash + 1, strlen(slash + 1));
        if (per > 0)
            scale /= per;
    }
    return scale;
}
