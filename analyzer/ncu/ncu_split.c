#include "ncu_split.h"

#include <string.h>

size_t ncu_split_quoted(const char *line, size_t len, ncu_span_t *spans, size_t cap,
                        size_t max_field)
{
    /* Offsets are 32-bit; records that long go to libcsv anyway. */
    if (len == 0 || len > UINT32_MAX)
        return SIZE_MAX;
    const char *end = line + len;
    const char *p = line;
    size_t count = 0;
    for (;;) {
        if (p == end || *p == ',') {
            /* An unquoted empty field: libcsv reports it as "" too. */
            if (count < cap)
                spans[count] = (ncu_span_t){(uint32_t) (p - line), 0};
            count++;
            if (p == end)
                return count;
            p++;
            continue;
        }
        if (*p != '"')
            return SIZE_MAX;
        const char *open = p + 1;
        const char *close = memchr(open, '"', (size_t) (end - open));
        if (!close || (size_t) (close - open) > max_field)
            return SIZE_MAX;
        if (count < cap)
            spans[count] = (ncu_span_t){(uint32_t) (open - line), (uint32_t) (close - open)};
        count++;
        p = close + 1;
        if (p == end)
            return count;
        /* A quote doubled inside the field, or anything but a comma after it:
         * libcsv's rules apply. */
        if (*p != ',')
            return SIZE_MAX;
        p++; /* at the end now, the loop adds the empty last field */
    }
}
