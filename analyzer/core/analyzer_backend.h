/* analyzer_backend: what a profiler's folder gives the analysis core.
 *
 * Each folder (ncu/, unitrace/, vtune/) exports one of these, returned by
 * <profiler>_backend() in its <profiler>_backend.c; analyzer.c lists them
 * and names no profiler's functions beyond them (Redis's ae.c backends are
 * the model). The folder's headers are its own: its include directory is
 * private to its object library (analyzer/CMakeLists.txt), so no other
 * folder can include them. A backend may use the core's headers. */
#ifndef ANALYZER_BACKEND_H
#define ANALYZER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"
#include "analyzer.h"
#include "feedback.h"
#include "pf_error.h"
#include "profeed.pb-c.h"

typedef struct {
    Profeed__Profiler id; /* its entry in common/profiler.h's table */
    /* Whether a file's first bytes, or else its name, show this profiler's
     * output; NULL: this backend takes what no other recognised (ncu). */
    bool (*by_content)(const char *head, size_t n);
    bool (*by_name)(const char *name);
    /* Parses and analyses a job's files into *out. */
    pf_status_t (*run)(const analyzer_input_t *input, const analysis_options_t *options, feedback_t **out,
                       pf_error_t *err);
    /* Notes on `fb` what a pass's output lacks that its plan asked for
     * (ncu: metrics asked for by name); NULL when there is nothing to check. */
    void (*check_pass)(feedback_t *fb, const Profeed__PassOutput *pass);
    /* A page parsed as its bytes come (analyzer.h's analyzer_page_*); NULL:
     * the backend reads files whole. page_begin returns NULL with `err`
     * clear for a page it reads whole, or sets `err` when out of memory.
     * `once`, `follows` and `budget`: analyzer_page_begin's, `follows` as its state
     * (NULL unless it is this backend's). */
    void *(*page_begin)(const char *source, const char *head, size_t n, bool keep_raw, bool once, void *follows,
                        analysis_budget_t *budget, pf_error_t *err);
    pf_status_t (*page_feed)(void *state, const char *bytes, size_t n, pf_error_t *err);
    pf_status_t (*page_finish)(void *state, pf_error_t *err);
    void (*page_destroy)(void *state);
} analyzer_backend_t;

/* What analyzer_page_t is: its backend, and the backend's own state. */
struct analyzer_page {
    const analyzer_backend_t *backend;
    void *state;
};

/* Functions, not exported variables: a program may link the analysis twice
 * (statically and through libprofeed-client), and one global defined in
 * both is an ODR violation ASan stops at. */
const analyzer_backend_t *ncu_backend(void);
const analyzer_backend_t *unitrace_backend(void);
const analyzer_backend_t *vtune_backend(void);

/* The name a file is known by in messages: "pass ncu.001: raw.csv". */
void analyzer_file_source(const analyzer_file_t *file, char *out, size_t cap);

/* The first bytes of a file (up to `cap`): from memory, or peeked from a path
 * (not stdin, which cannot be read twice); 0 when there are none. */
size_t analyzer_file_head(const analyzer_file_t *file, char *buf, size_t cap);

/* Whether `needle` occurs in the first `len` bytes (which may hold NULs). */
bool analyzer_text_contains(const char *bytes, size_t len, const char *needle);

#endif
