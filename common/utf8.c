#include "utf8.h"

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
    for (const char *p = s; *p;) {
        size_t n = utf8_sequence_len(p);
        if (n == 0)
            return (long) (p - s);
        p += n;
    }
    return -1;
}
