#include "text_cut.h"

#include <string.h>

static bool s_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool s_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Whether text[i] ends a sentence: "done. Next", "done.Next" (NCU leaves the
 * space out between sentences), not "32.0" or "e.g" inside a word. */
static bool s_sentence_end(const char *text, size_t i, size_t len)
{
    char c = text[i];
    if (c != '.' && c != '!' && c != '?')
        return false;
    if (i + 1 >= len)
        return true;
    char next = text[i + 1];
    if (s_space(next))
        return i > 0 && !s_space(text[i - 1]);
    return next >= 'A' && next <= 'Z' && i > 0 && !s_digit(text[i - 1]) && text[i - 1] >= 'a' && text[i - 1] <= 'z';
}

bool text_cut(char *text, size_t max, const char *mark)
{
    if (!mark)
        mark = TEXT_CUT_MARK;
    size_t len = strlen(text);
    if (len <= max)
        return false;
    size_t mark_len = strlen(mark);
    if (max <= mark_len) {
        memcpy(text, mark, max);
        text[max] = '\0';
        return true;
    }
    size_t room = max - mark_len; /* bytes of the text kept, at most */
    size_t cut = 0;
    for (size_t i = room; i > room / 2; i--) {
        if (s_sentence_end(text, i - 1, len)) {
            cut = i;
            break;
        }
    }
    if (cut == 0) {
        /* The last whitespace with text before it that fits. */
        for (size_t i = room; i > 0; i--) {
            if (s_space(text[i]) && !s_space(text[i - 1])) {
                cut = i;
                break;
            }
        }
    }
    if (cut == 0) {
        /* One word longer than the room: a character boundary, not inside
         * a UTF-8 sequence (continuation bytes are 10xxxxxx). */
        cut = room;
        while (cut > 0 && ((unsigned char) text[cut] & 0xC0) == 0x80)
            cut--;
    }
    while (cut > 0 && (s_space(text[cut - 1]) || strchr(",;:(", text[cut - 1])))
        cut--;
    memcpy(text + cut, mark, mark_len + 1);
    return true;
}
