/* Text cut for a reader (analyzer/core/text_cut.h): at a sentence end, else a
 * word boundary, never inside a word or a number, and always marked; and the
 * feedback's quoted NCU rule text on a real capture is cut that way. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "feedback.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "render.h"
#include "text_cut.h"

#define H200 PF_FIXTURE_DIR "/ncu/h200/"

static bool s_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

Test(text_cut, text_that_fits_is_left_alone)
{
    char text[] = "Short enough.";
    cr_expect_not(text_cut(text, 13, NULL));
    cr_expect_str_eq(text, "Short enough.");
}

Test(text_cut, cuts_after_the_last_sentence_that_fits)
{
    char text[] = "The first sentence is here. The second one goes on for too long to fit.";
    cr_expect(text_cut(text, 40, NULL));
    cr_expect_str_eq(text, "The first sentence is here. [...]");
}

Test(text_cut, a_missing_space_between_sentences_still_ends_one)
{
    /* NCU writes "requests.This results in ...". */
    char text[] = "across all 33554432 shared load requests.This results in 1040187936 bank conflicts";
    cr_expect(text_cut(text, 60, NULL));
    cr_expect_str_eq(text, "across all 33554432 shared load requests. [...]");
}

Test(text_cut, a_decimal_point_is_not_a_sentence_end)
{
    char text[] = "spends 1488.6 cycles being stalled waiting for a scoreboard dependency";
    cr_expect(text_cut(text, 30, NULL));
    cr_expect_str_eq(text, "spends 1488.6 cycles [...]");
}

Test(text_cut, without_a_sentence_end_it_cuts_between_words)
{
    char text[] = "This results in 1040187936 bank conflicts during the kernel";
    cr_expect(text_cut(text, 24, NULL));
    cr_expect_str_eq(text, "This results in [...]");
    cr_expect_leq(strlen(text), 24);
}

Test(text_cut, punctuation_before_the_cut_goes)
{
    char text[] = "fused multiply-add to their fused (FMA) forms";
    cr_expect(text_cut(text, 42, NULL));
    cr_expect_str_eq(text, "fused multiply-add to their fused [...]");
}

Test(text_cut, one_long_word_is_cut_on_a_character_boundary)
{
    char text[] = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"; /* six e-acute, 2 bytes each */
    cr_expect(text_cut(text, 11, "..."));
    cr_expect_str_eq(text, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...");
}

Test(text_cut, a_budget_smaller_than_the_mark_keeps_the_mark_short)
{
    char text[] = "some text that is long";
    cr_expect(text_cut(text, 3, NULL));
    cr_expect_eq(strlen(text), 3);
}

/* Every quoted NCU rule text of the H200 full capture ends a sentence or
 * carries the mark: none stops inside a number or a word. */
Test(text_cut, quoted_ncu_rule_text_is_never_cut_mid_word)
{
    ncu_data_t *data = ncu_data_new();
    const char *files[] = {H200 "full_raw.csv", H200 "full_details.csv"};
    for (size_t i = 0; i < 2; i++) {
        pf_error_t err;
        pf_error_clear(&err);
        cr_assert_eq(ncu_csv_parse_file(data, files[i], &err), PF_OK, "%s", err.msg);
    }
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    feedback_t *fb = ncu_analyze(data, &options, NULL);
    cr_assert_not_null(fb);
    size_t quoted = 0, cut = 0;
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        for (size_t e = 0; e < f->evidence_count; e++) {
            const char *text = f->evidence[e].text;
            if (strncmp(text, "NCU ", 4) != 0)
                continue;
            quoted++;
            bool marked = s_ends_with(text, TEXT_CUT_MARK);
            cut += marked;
            cr_expect(marked || s_ends_with(text, ".") || s_ends_with(text, ")"),
                      "cut without a mark: \"%s\"", text);
        }
    }
    cr_expect_gt(quoted, 5, "the capture quotes NCU rules");
    cr_expect_gt(cut, 0, "some are long enough to be cut");
    feedback_destroy(&fb);
    ncu_data_destroy(&data);
}

Test(text_cut, a_text_over_its_budget_is_cut_between_words_and_says_so)
{
    ncu_data_t *data = ncu_data_new();
    pf_error_t err;
    cr_assert_eq(ncu_csv_parse_file(data, H200 "full_raw.csv", &err), PF_OK, "%s", err.msg);
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = ncu_analyze(data, &options, NULL);
    char *text = render_text(fb, RENDER_MIN_CHARS);
    cr_assert_not_null(text);
    cr_expect_leq(strlen(text), RENDER_MIN_CHARS);
    cr_expect(s_ends_with(text, "(cut to fit the length limit)\n"), "%s", text);
    free(text);
    feedback_destroy(&fb);
    ncu_data_destroy(&data);
}

Test(render_duration, every_magnitude_reads_in_a_few_digits)
{
    static const struct {
        double ns;
        const char *text;
    } cases[] = {{NAN, "?"}, {12, "12 ns"}, {1500, "1.5 us"}, {2.5e6, "2.50 ms"}, {3.2e9, "3.20 s"},
                 {1.7e308, "1.7e+299 s"}, {INFINITY, "inf s"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[32];
        render_duration(cases[i].ns, out, sizeof out);
        cr_assert_str_eq(out, cases[i].text);
    }
}
