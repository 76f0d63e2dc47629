#include "wire_path.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* Appends the path to buf[used..]; returns the new length (at most size - 1). */
static size_t s_append(const wire_path_t *at, char *buf, size_t size, size_t used)
{
    if (!at)
        return used;
    used = s_append(at->parent, buf, size, used);
    if (used + 1 >= size)
        return used;
    const char *dot = at->parent ? "." : "";
    int n = at->index >= 0 ? snprintf(buf + used, size - used, "%s%s[%ld]", dot, at->name, at->index)
                           : snprintf(buf + used, size - used, "%s%s", dot, at->name);
    if (n < 0)
        return used;
    return (size_t) n >= size - used ? size - 1 : used + (size_t) n;
}

const char *wire_path_format(const wire_path_t *at, char *buf, size_t size)
{
    assert(buf && size > 0);
    buf[0] = '\0';
    s_append(at, buf, size, 0);
    return buf;
}
