/* render: a feedback as text for an LLM prompt, JSON for programs, Markdown
 * for people. All three read the same findings; each returns a new string
 * (caller frees) or NULL when memory ran out. */
#ifndef RENDER_H
#define RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "feedback.h"
#include "textbuf.h"

/* The smallest text budget that holds a header and a first kernel; callers
 * refuse smaller ones (wire_check.h: WIRE_MIN_MAX_CHARS is the same). */
#define RENDER_MIN_CHARS 200
/* The same for a token budget: 200 characters of feedback estimate at ~60. */
#define RENDER_MIN_TOKENS 64

/* `max_chars` 0 means no limit; otherwise the least important findings are
 * left out until the text fits, and what was left out is said. */
char *render_text(const feedback_t *fb, size_t max_chars);
/* The same within a budget of characters and/or estimated tokens
 * (token_estimate.h; 0: no limit, else at least RENDER_MIN_TOKENS): the
 * least important findings go first, and the text says what was left out. */
char *render_text_within(const feedback_t *fb, size_t max_chars, size_t max_tokens);
char *render_json(const feedback_t *fb, bool with_collated);
char *render_markdown(const feedback_t *fb);

/* Shared by the renderers: what was profiled ("9 launches, 27.18 ms
 * profiled", or for metric sampling "13 samples (...)"), and how this
 * version's GPU time compares with the reference's ("" when unknown;
 * returns `out`). */
void render_profiled(const feedback_t *fb, char *out, size_t cap);
const char *render_reference_verdict(double own_ns, double reference_ns, char *out, size_t cap);

/* Shared by the renderers: where a finding's cause is, in words: "line 26
 * `out[i] = p[i].x * 2.f;` (corpus_v2.cu): 100% of the excess global sectors
 * (uncoalesced), 4.0 sectors per request". Source text past `text_max` bytes
 * is cut (on a character boundary) and marked "...". */
void render_line(const fb_line_t *line, size_t text_max, char *out, size_t cap);
/* Shared by the renderers (render_change.c, docs/baselines.md): the change
 * since the baseline (nothing without one), each kernel's line opened with
 * `bullet`; the stop verdict; the manifest; and a kernel's ceiling
 * ("DRAM at 88% of peak: at most 1.14x left", "" when not measured). */
void render_change(textbuf_t *tb, const feedback_t *fb, const char *bullet);
void render_stop(textbuf_t *tb, const feedback_t *fb);
void render_manifest(textbuf_t *tb, const feedback_t *fb);
void render_ceiling(const fb_kernel_t *kernel, char *out, size_t cap);
/* ... and whether another profile could lead with another finding ("with the
 * counters moved by run-to-run noise (1% one sigma), 2 of 8 readings lead
 * with l2_bound rather than dram_bound: ...", and what the most named other
 * finding the kernel does not list would have the agent do; "" when none did
 * or it was not judged). Cut on a word to `cap`; RENDER_CLOSE_CALL_MAX holds
 * the longest. */
#define RENDER_CLOSE_CALL_MAX 2048
void render_close_call(const fb_kernel_t *kernel, char *out, size_t cap);

/* Shared by the renderers: "1.23 ms", "850 us", "12.0 s". */
void render_duration(double ns, char *out, size_t cap);

#endif
