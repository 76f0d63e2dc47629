/* textbuf: the renderers' growable string (common/textbuf.h). */
#include "textbuf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(textbuf, an_empty_buffer_takes_as_an_empty_string_the_caller_frees)
{
    textbuf_t tb;
    textbuf_init(&tb);
    char *s = textbuf_take(&tb);
    cr_assert_not_null(s, "nothing appended is \"\", not a failure");
    cr_assert_str_eq(s, "");
    free(s);
}

Test(textbuf, appends_and_formats_accumulate_in_order)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_append(&tb, "kernel ");
    textbuf_printf(&tb, "%s: %d%% of %.1f ms", "matmul", 42, 3.5);
    textbuf_append(&tb, "");
    textbuf_append(&tb, "\n");
    cr_assert_eq(tb.len, strlen("kernel matmul: 42% of 3.5 ms\n"));
    char *s = textbuf_take(&tb);
    cr_assert_str_eq(s, "kernel matmul: 42% of 3.5 ms\n");
    free(s);
}

/* Past the first 1024 bytes the buffer grows, and what was there stays. */
Test(textbuf, growing_keeps_every_byte)
{
    textbuf_t tb;
    textbuf_init(&tb);
    for (int i = 0; i < 5000; i++)
        textbuf_printf(&tb, "%04d,", i);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    textbuf_append(&tb, big);
    cr_assert_eq(tb.len, 5000 * 5 + sizeof big - 1);
    cr_assert_geq(tb.cap, tb.len + 1);
    char *s = textbuf_take(&tb);
    cr_assert_eq(strncmp(s, "0000,0001,0002,", 15), 0);
    cr_assert_eq(strncmp(s + 4999 * 5, "4999,xxx", 8), 0);
    cr_assert_eq(strlen(s), 5000 * 5 + sizeof big - 1, "no NUL inside, one at the end");
    free(s);
}

Test(textbuf, take_hands_the_string_over_and_leaves_an_empty_buffer)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_append(&tb, "first");
    char *first = textbuf_take(&tb);
    cr_assert_null(tb.data, "the string is the caller's now");
    cr_assert_eq(tb.len, 0);
    textbuf_append(&tb, "second");
    char *second = textbuf_take(&tb);
    cr_assert_str_eq(first, "first", "the first string is not touched by later appends");
    cr_assert_str_eq(second, "second");
    free(first);
    free(second);
}

/* After an allocation failure (marked in `failed`, as s_reserve does) every
 * append is dropped and take gives NULL and frees what there was: a renderer
 * then reports out of memory instead of sending a cut report. */
Test(textbuf, a_failed_buffer_drops_appends_and_takes_as_null)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_append(&tb, "kept until the failure");
    size_t len = tb.len;
    tb.failed = true;
    textbuf_append(&tb, "dropped");
    textbuf_printf(&tb, "%s", "dropped too");
    cr_assert_eq(tb.len, len, "nothing appended after a failure");
    cr_assert_null(textbuf_take(&tb));
    cr_assert_null(tb.data, "freed (LeakSanitizer checks)");
    cr_assert_not(tb.failed, "and reset for reuse");
    textbuf_append(&tb, "again");
    char *s = textbuf_take(&tb);
    cr_assert_str_eq(s, "again");
    free(s);
}

Test(textbuf, free_releases_and_resets)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_printf(&tb, "%0500d", 7);
    cr_assert_eq(tb.len, 500);
    textbuf_free(&tb);
    cr_assert_null(tb.data);
    cr_assert_eq(tb.len, 0);
    cr_assert_eq(tb.cap, 0);
    textbuf_free(&tb); /* twice is harmless */
}
