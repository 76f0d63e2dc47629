/* textbuf: a growable string for renderers. Appends never fail visibly: on
 * allocation failure the buffer is marked failed and textbuf_take returns NULL. */
#ifndef TEXTBUF_H
#define TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} textbuf_t;

void textbuf_init(textbuf_t *tb);
void textbuf_append(textbuf_t *tb, const char *text);
void textbuf_printf(textbuf_t *tb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the string (caller frees) and resets the buffer; NULL after a failure. */
char *textbuf_take(textbuf_t *tb);
void textbuf_free(textbuf_t *tb);

#endif
