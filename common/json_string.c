/* json_string: see json_string.h. Written in chunks of a stack buffer: one
 * textbuf append per 256 bytes rather than one per character. */
#include "json_string.h"

#include <string.h>

#include "utf8.h"

void json_string_append(textbuf_t *tb, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    char chunk[256];
    size_t n = 0;
    textbuf_append(tb, "\"");
    for (const char *p = text ? text : ""; *p;) {
        if (n + 8 >= sizeof chunk) {
            chunk[n] = '\0';
            textbuf_append(tb, chunk);
            n = 0;
        }
        unsigned char c = (unsigned char) *p;
        size_t len = utf8_sequence_len(p);
        if (len == 0) {
            chunk[n++] = '?'; /* not UTF-8: kernel names come from untrusted files */
            p++;
        } else if (c == '"' || c == '\\') {
            chunk[n++] = '\\';
            chunk[n++] = (char) c;
            p++;
        } else if (c < 0x20) {
            const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (esc) {
                memcpy(chunk + n, esc, 2);
                n += 2;
            } else {
                memcpy(chunk + n, "\\u00", 4);
                chunk[n + 4] = hex[c >> 4];
                chunk[n + 5] = hex[c & 15];
                n += 6;
            }
            p++;
        } else {
            memcpy(chunk + n, p, len);
            n += len;
            p += len;
        }
    }
    chunk[n] = '\0';
    textbuf_append(tb, chunk);
    textbuf_append(tb, "\"");
}
