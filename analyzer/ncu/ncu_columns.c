#include "ncu_columns.h"

#include <string.h>

/* A raw page's header starts with these two columns, in every ncu version
 * the fixtures cover (2023.x to 2025.3). */
#define RAW_HEADER "\"ID\",\"Process ID\","

/* Whether the header line [line, end) holds the quoted field "name". */
static bool s_has_column(const char *line, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = line; p + n + 2 <= end; p++) {
        p = memchr(p, '"', (size_t) (end - p));
        if (!p || p + n + 2 > end)
            return false;
        if (memcmp(p + 1, name, n) == 0 && p[n + 1] == '"' && (p == line || p[-1] == ','))
            return true;
    }
    return false;
}

int ncu_columns_missing(const char *bytes, size_t len, const char *const *requested, size_t count, bool *missing)
{
    const char *end = bytes + len;
    size_t hl = strlen(RAW_HEADER);
    for (const char *line = bytes; line && line < end;) {
        const char *nl = memchr(line, '\n', (size_t) (end - line));
        const char *line_end = nl ? nl : end;
        if ((size_t) (line_end - line) >= hl && memcmp(line, RAW_HEADER, hl) == 0) {
            int n = 0;
            for (size_t i = 0; i < count; i++) {
                missing[i] = !s_has_column(line, line_end, requested[i]);
                n += missing[i];
            }
            return n;
        }
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}
