#include "textbuf.h"


#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void textbuf_init(textbuf_t *tb) { memset(tb, 0, sizeof *tb); }

static bool s_reserve(textbuf_t *tb, size_t extra)
{
    if (tb->failed)
        return false;
    if (tb->len + extra + 1 <= tb->cap)
        return true;
    size_t cap = tb->cap ? tb->cap : 1024;
    while (cap < tb->len + extra + 1)
        cap *= 2;
    char *data = realloc(tb->data, cap);
    if (!data) {
        tb->failed = true;
        return false;
    }
    tb->data = data;
    tb->cap = cap;
    return true;
}

void textbuf_append(textbuf_t *tb, const char *text)
{
    size_t n = strlen(text);
    if (!s_reserve(tb, n))
        return;
    memcpy(tb->data + tb->len, text, n + 1);
    tb->len += n;
}

void textbuf_printf(textbuf_t *tb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !s_reserve(tb, (size_t) n))
        return;
    va_start(ap, fmt);
    vsnprintf(tb->data + tb->len, (size_t) n + 1, fmt, ap);
    va_end(ap);
    tb->len += (size_t) n;
}

char *textbuf_take(textbuf_t *tb)
{
    if (tb->failed || !s_reserve(tb, 0)) {
        textbuf_free(tb);
        return NULL;
    }
    char *out = tb->data;
    out[tb->len] = '\0';
    textbuf_init(tb);
    return out;
}

void textbuf_free(textbuf_t *tb)
{
    free(tb->data);
    textbuf_init(tb);
}
