#include "token_estimate.h"

#include <math.h>
#include <string.h>

static int s_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int s_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* The modelled count before the safety factor, for `len` bytes. */
static double s_units(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *) text;
    double units = 0;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t j = i + 1;
        if (s_letter(c)) {
            while (j < len && s_letter(s[j]))
                j++;
            size_t n = j - i;
            units += 1 + (double) ((n - 1) / TOKEN_WORD_CHARS);
        } else if (s_digit(c)) {
            while (j < len && s_digit(s[j]))
                j++;
            units += (double) ((j - i + 2) / 3);
        } else if (c == ' ') {
            /* One space joins the word after it; a run of them (indent) is one token. */
            while (j < len && s[j] == ' ')
                j++;
            if (j - i > 1)
                units += 1;
        } else if (c >= 0x80) {
            /* A character outside ASCII: one token per character (its
             * continuation bytes are 10xxxxxx). */
            while (j < len && (s[j] & 0xC0) == 0x80)
                j++;
            units += 1;
        } else if (c == '\n' || c < 0x20) {
            units += 1;
        } else {
            /* Punctuation and symbols: the tokenizers merge common pairs
             * ("%)", "`,", "];"), rarely more, so a run costs one per two. */
            while (j < len && s[j] > 0x20 && s[j] < 0x80 && !s_letter(s[j]) && !s_digit(s[j]))
                j++;
            units += (double) ((j - i + 1) / 2);
        }
        i = j;
    }
    return units;
}

size_t token_estimate(const char *text, size_t len)
{
    return (size_t) ceil(s_units(text, len) * TOKEN_SAFETY);
}

size_t token_estimate_prefix(const char *text, size_t tokens)
{
    /* The estimate grows with the prefix (every unit is >= 0), so the
     * longest prefix that fits is found by bisection. */
    size_t lo = 0, hi = strlen(text);
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (token_estimate(text, mid) <= tokens)
            lo = mid;
        else
            hi = mid - 1;
    }
    while (lo > 0 && ((unsigned char) text[lo] & 0xC0) == 0x80)
        lo--;
    return lo;
}
