/* token_estimate: how many tokens an LLM tokenizer makes of a text, estimated
 * without its vocabulary, on the safe side.
 *
 * The model follows how byte-pair tokenizers of the GPT-4 family (cl100k,
 * o200k) split text before merging: a run of letters is a word (with the
 * space before it), digits go in groups of at most three, punctuation and
 * other symbols stand alone or in pairs, a newline or a run of spaces is a
 * token. A word costs one token up to TOKEN_WORD_CHARS letters and one more
 * per TOKEN_WORD_CHARS after that; a run of punctuation one per two
 * characters; a digit group of up to three one; a character outside ASCII
 * one. The sum is scaled by TOKEN_SAFETY, chosen so that on every feedback
 * text of the committed fixtures the estimate is at least 5% above the real
 * count of both tokenizers (bench/tokens.sh measures it, docs/benchmarks.md
 * has the table: plain text at least +6.7%, +12.7% on average).
 * It is not a tokenizer: a text unlike our feedback (other languages, long
 * runs of rare symbols) can be under-estimated. */
#ifndef TOKEN_ESTIMATE_H
#define TOKEN_ESTIMATE_H

#include <stddef.h>

/* Letters a tokenizer keeps in one token of an English or code word. */
#define TOKEN_WORD_CHARS 7
/* The factor over the modelled count (see above). */
#define TOKEN_SAFETY 1.12

/* The estimated token count of the first `len` bytes of `text`. */
size_t token_estimate(const char *text, size_t len);

/* The longest prefix of `text` (in bytes, on a UTF-8 character boundary)
 * whose estimate is at most `tokens`. */
size_t token_estimate_prefix(const char *text, size_t tokens);

#endif
