/* text_cut: prose made shorter for a reader, never mid-word or mid-number.
 *
 * Feedback quotes text of any length (NCU's rule explanations, messages) into
 * fields and budgets of fixed size. Cut by bytes, "1040187936 conflicts"
 * becomes "10" and the reader cannot tell; this cuts at a sentence end, else
 * at a word boundary, and says it cut. */
#ifndef TEXT_CUT_H
#define TEXT_CUT_H

#include <stdbool.h>
#include <stddef.h>

/* What marks a cut. */
#define TEXT_CUT_MARK " [...]"

/* Shortens the NUL-terminated `text` in place to at most `max` bytes, `mark`
 * included, when it is longer; returns whether it cut. The cut is after the
 * last sentence end that keeps at least half of `max` (a '.', '!' or '?'
 * before a space or a capital, not a decimal point), else at the last
 * whitespace, else (one word longer than that) at a UTF-8 character
 * boundary; trailing whitespace and ",;:(" go, then `mark` (NULL:
 * TEXT_CUT_MARK) is appended. `max` smaller than the mark + 1 cuts to
 * the mark's first `max` bytes. */
bool text_cut(char *text, size_t max, const char *mark);

#endif
