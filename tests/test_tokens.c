/* The token budget: token_estimate() against real tokenizer counts committed
 * by bench/tokens.sh --commit (tests/fixtures/tokens/counts.tsv: cl100k_base
 * and o200k_base of js-tiktoken on our feedback texts), and --max-tokens
 * keeping the estimate, and so the real count, within the budget. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "profeed_session.h"
#include "render.h"
#include "token_estimate.h"

#define TOKENS PF_FIXTURE_DIR "/tokens/"
#define V2 PF_FIXTURE_DIR "/ncu/h200-v2/"

/* The margin over the real count that token_estimate.h documents. */
#define MARGIN 1.05

static char *s_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    char *bytes = malloc((size_t) n + 1);
    cr_assert_not_null(bytes);
    cr_assert_eq(fread(bytes, 1, (size_t) n, f), (size_t) n);
    bytes[n] = '\0';
    fclose(f);
    *len = (size_t) n;
    return bytes;
}

Test(tokens, the_estimate_is_above_both_tokenizers_on_every_committed_text)
{
    FILE *f = fopen(TOKENS "counts.tsv", "r");
    cr_assert_not_null(f);
    char line[512];
    size_t checked = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char name[256];
        unsigned long cl100k, o200k;
        cr_assert_eq(sscanf(line, "%255s %lu %lu", name, &cl100k, &o200k), 3, "%s", line);
        char path[512];
        snprintf(path, sizeof path, TOKENS "%s", name);
        size_t len;
        char *text = s_read(path, &len);
        size_t est = token_estimate(text, len);
        unsigned long real = cl100k > o200k ? cl100k : o200k;
        cr_expect_geq((double) est, MARGIN * (double) real, "%s: estimate %zu, real %lu", name, est, real);
        free(text);
        checked++;
    }
    fclose(f);
    cr_assert_geq(checked, 60, "only %zu texts in counts.tsv", checked);
}

Test(tokens, the_estimate_counts_words_digits_and_symbols)
{
    cr_assert_eq(token_estimate("", 0), 0);
    /* "dram" one word, "83" one digit group, "%" a symbol: 3 x 1.12 -> 4 */
    cr_assert_eq(token_estimate("dram 83%", 8), 4);
    /* twelve letters: two tokens' worth; 1234567 three digit groups */
    cr_assert_eq(token_estimate("abcdefghijkl", 12), 3);
    cr_assert_eq(token_estimate("1234567", 7), 4);
}

Test(tokens, a_prefix_within_a_budget_ends_on_a_character)
{
    const char *text = "Uncoalesced global loads: 10.7 of every 32 bytes fetched are used \xc3\xa9\xc3\xa9\xc3\xa9 done";
    for (size_t budget = 1; budget < 30; budget++) {
        size_t n = token_estimate_prefix(text, budget);
        cr_assert_leq(token_estimate(text, n), budget);
        cr_assert_neq((unsigned char) text[n] & 0xC0, 0x80, "cut inside a character at %zu", n);
        if (n < strlen(text))
            cr_assert_gt(token_estimate(text, n + 1), budget - (budget > 1 ? 1 : 0));
    }
}

static feedback_t *s_v2(void)
{
    analyzer_file_t files[] = {{.path = V2 "full_raw.csv"}, {.path = V2 "full_details.csv"}};
    analysis_options_t options;
    analysis_options_default(&options);
    analyzer_input_t input = {.files = files, .count = 2, .profiler = "ncu"};
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    return fb;
}

Test(tokens, max_tokens_drops_the_least_important_findings_first_and_says_so)
{
    feedback_t *fb = s_v2();
    char *all = render_text(fb, 0);
    char *cut = render_text_within(fb, 0, 500);
    cr_assert_gt(token_estimate(all, strlen(all)), 500, "the test needs a feedback over the budget");
    cr_assert_leq(token_estimate(cut, strlen(cut)), 500);
    cr_assert(strstr(cut, "left out to fit the length limit"), "%s", cut);
    /* the first kernel's leading finding stays */
    const fb_finding_t *first = feedback_finding(fb, 0);
    cr_assert(strstr(cut, first->title), "%s", cut);
    free(all);
    free(cut);
    feedback_destroy(&fb);
}

Test(tokens, every_budget_is_kept_down_to_the_smallest)
{
    feedback_t *fb = s_v2();
    const size_t budgets[] = {RENDER_MIN_TOKENS, 100, 200, 1000, 3000};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        char *text = render_text_within(fb, 0, budgets[i]);
        cr_assert_not_null(text);
        cr_assert_leq(token_estimate(text, strlen(text)), budgets[i], "budget %zu", budgets[i]);
        free(text);
    }
    /* both budgets at once: the tighter one wins */
    char *text = render_text_within(fb, 400, 3000);
    cr_assert_leq(strlen(text), 400);
    free(text);
    feedback_destroy(&fb);
}

Test(tokens, a_budget_below_the_smallest_or_on_json_is_refused)
{
    char buf[256];
    cr_assert_null(profeed_session_check_max_tokens(0, "json", buf, sizeof buf));
    cr_assert_null(profeed_session_check_max_tokens(64, "text", buf, sizeof buf));
    cr_assert_not_null(profeed_session_check_max_tokens(63, "text", buf, sizeof buf));
    cr_assert(strstr(buf, "at least 64 tokens"), "%s", buf);
    cr_assert_not_null(profeed_session_check_max_tokens(500, "json", buf, sizeof buf));
    cr_assert(strstr(buf, "text format only"), "%s", buf);
}
