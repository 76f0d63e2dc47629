/* utf8: what counts as valid UTF-8 (RFC 3629) for strings on the wire. */
#include "utf8.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(utf8, accepts_ascii_and_every_sequence_length_up_to_the_last_code_point)
{
    cr_assert_eq(utf8_invalid_at(""), -1);
    cr_assert_eq(utf8_invalid_at("sm__throughput.avg.pct"), -1);
    cr_assert_eq(utf8_invalid_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80"), -1); /* é € 🚀 */
    cr_assert_eq(utf8_invalid_at("\xf4\x8f\xbf\xbf"), -1);                           /* U+10FFFF */
    cr_assert_eq(utf8_sequence_len("\xc3\xa9"), 2);
    cr_assert_eq(utf8_sequence_len("\xe2\x82\xac"), 3);
    cr_assert_eq(utf8_sequence_len("\xf0\x9f\x9a\x80"), 4);
}

Test(utf8, refuses_overlong_surrogate_out_of_range_and_stray_bytes_at_their_offset)
{
    cr_assert_eq(utf8_invalid_at("ab\xc0\xaf"), 2, "overlong '/'");
    cr_assert_eq(utf8_invalid_at("\xe0\x80\xaf"), 0, "overlong 3-byte '/'");
    cr_assert_eq(utf8_invalid_at("x\xed\xa0\x80"), 1, "surrogate U+D800");
    cr_assert_eq(utf8_invalid_at("\xf4\x90\x80\x80"), 0, "U+110000");
    cr_assert_eq(utf8_invalid_at("ok\x80"), 2, "lone continuation byte");
    cr_assert_eq(utf8_invalid_at("\xf8\x88\x80\x80\x80"), 0, "5-byte form");
    cr_assert_eq(utf8_invalid_at("\xff"), 0);
}

Test(utf8, a_sequence_cut_by_the_terminator_is_invalid_and_nothing_past_it_is_read)
{
    /* The array ends right after the terminator: ASan would see a read past it. */
    static const char cut[] = {'a', (char) 0xe2, (char) 0x82, '\0'};
    cr_assert_eq(utf8_invalid_at(cut), 1);
    cr_assert_eq(utf8_sequence_len(cut + 1), 0);
}

/* The checker skips ASCII a word at a time: a bad or multi-byte sequence must
 * be found wherever it falls against those words, also in the last few bytes. */
Test(utf8, finds_a_bad_byte_at_every_offset_of_a_long_ascii_string)
{
    char text[64];
    for (size_t len = 1; len < sizeof text; len++) {
        for (size_t at = 0; at < len; at++) {
            memset(text, 'a', len);
            text[len] = '\0';
            cr_assert_eq(utf8_invalid_at(text), -1, "all ASCII, %zu bytes", len);
            text[at] = (char) 0x80;
            cr_assert_eq(utf8_invalid_at(text), (long) at, "stray byte at %zu of %zu", at, len);
            if (at + 2 <= len) {
                memcpy(text + at, "\xc3\xa9", 2); /* é across a word boundary or not */
                cr_assert_eq(utf8_invalid_at(text), -1, "é at %zu of %zu", at, len);
                text[at + 1] = 'a';
                cr_assert_eq(utf8_invalid_at(text), (long) at, "cut é at %zu of %zu", at, len);
            }
        }
    }
}

Test(utf8, clean_keeps_valid_text_and_turns_each_invalid_byte_into_one_question_mark)
{
    char text[] = "caf\xc3\xa9 \xff\xfe \xe2\x82\xac \xed\xa0\x80 end \xe2\x82";
    utf8_clean(text, 0);
    cr_assert_str_eq(text, "caf\xc3\xa9 ?? \xe2\x82\xac ??? end ??");
    cr_assert_eq(utf8_invalid_at(text), -1);
}

/* The collector's stderr tail: the same, and control characters but line
 * breaks and tabs become '?' too (the old copy made every non-ASCII byte '?'). */
Test(utf8, clean_with_controls_drops_escapes_but_keeps_lines_and_non_ascii_text)
{
    char text[] = "ERROR \x1b[31mred\x1b[0m\r\n\tkernel \xe2\x80\x9c" "add\xe2\x80\x9d \x7f\x80";
    utf8_clean(text, UTF8_CLEAN_CONTROLS);
    cr_assert_str_eq(text, "ERROR ?[31mred?[0m\r\n\tkernel \xe2\x80\x9c" "add\xe2\x80\x9d ??");
}

Test(utf8, clean_dup_leaves_the_original_alone)
{
    const char *text = "a\xff" "b";
    char *copy = utf8_clean_dup(text);
    cr_assert_not_null(copy);
    cr_assert_str_eq(copy, "a?b");
    cr_assert_str_eq(text, "a\xff" "b");
    free(copy);
}
