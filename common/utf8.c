#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_sequence_len(const char *p)
{
    const unsigned char *s = (const unsigned char *) p;
    size_t n;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, min = 0x80, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, min = 0x800, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0; /* a continuation byte, or 0xf8..0xff */
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80) /* also stops at the terminator */
            return 0;
        cp = (cp << 6) | (s[k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

long utf8_invalid_at(const char *s)
{
    /* Feedback text and JSON are tens of KB of mostly ASCII, checked by every
     * process they pass: skip ASCII eight bytes at a time. strlen() first, so
     * the word reads stay inside the string. */
    size_t len = strlen(s);
    size_t i = 0;
    while (i < len) {
        for (uint64_t word; i + 8 <= len; i += 8) {
            memcpy(&word, s + i, sizeof word);
            if (word & UINT64_C(0x8080808080808080))
                break;
        }
        if (i >= len)
            break;
        if ((unsigned char) s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_sequence_len(s + i);
        if (n == 0)
            return (long) i;
        i += n;
    }
    return -1;
}

void utf8_clean(char *text, unsigned flags)
{
    char *p = text;
    while (*p) {
        unsigned char c = (unsigned char) *p;
        size_t n = utf8_sequence_len(p);
        if (n == 0) {
            *p++ = '?';
        } else if ((flags & UTF8_CLEAN_CONTROLS) && (c < 0x20 || c == 0x7f) && c != '\n' && c != '\t' &&
                   c != '\r') {
            *p++ = '?';
        } else {
            p += n;
        }
    }
}

char *utf8_clean_dup(const char *text)
{
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, text, len + 1);
    utf8_clean(copy, 0);
    return copy;
}
