/* analyzer: one job's pass outputs in, one feedback out.
 *
 * The seed's contract, in C: pass outputs {pass key -> {file name -> bytes}}
 * are collated by the profiler's analyzer and turned into findings. Files
 * come as bytes (from PassOutput messages) or as paths (profeed analyze,
 * streamed so a large capture is never held whole). The profiler is named or
 * detected from the files; each profiler of common/profiler.h's table has
 * a backend here (analyzer.c) that recognises its output and analyses it. */
#ifndef ANALYZER_H
#define ANALYZER_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis.h"
#include "analysis_budget.h"
#include "feedback.h"
#include "pf_error.h"
#include "profeed.pb-c.h"

/* A page of a streamed pass parsed as its bytes came (analyzer_page_begin);
 * what it holds is its backend's. */
typedef struct analyzer_page analyzer_page_t;

typedef struct {
    const char *pass_key; /* "ncu.000"; NULL for files given on a command line */
    const char *name;     /* file name within the pass, for messages */
    const char *path;     /* read from this file ("-" is stdin) when set ... */
    const char *bytes;    /* ... else these bytes */
    size_t len;
    /* ... or the page parsed already (a streamed pass parsed as its chunks
     * came, pass_spool.h): merged in the file's place by its backend. */
    const analyzer_page_t *parsed;
    bool reference;       /* from the task's reference implementation (pass "ncu_ref.000") */
} analyzer_file_t;

typedef struct {
    const analyzer_file_t *files;
    size_t count;
    const char *profiler;  /* "ncu", "unitrace", "vtune", or NULL / "auto" */
    const char *language;  /* with gpu_arch, picks the profiler when it is NULL/"auto" */
    const char *gpu_arch;
    const char *device;    /* GPU name from the worker when the files lack it */
    const char *pci_id;    /* PCI device id ("0xe20b"), or NULL */
    const char *cpu_model; /* CPU model, which names integrated GPUs, or NULL */
    int with_collated;     /* attach the collated per-launch data to the feedback */
    /* Parse passes on threads: 0 decides (several usable CPUs and enough
     * bytes beside the largest file), 1 never, 2 or more always. */
    int threads;
    /* What the job's collated data may hold (analysis_budget.h; NULL:
     * unbounded); a capture past it is an error that names the setting.
     * ncu's data is charged; the other profilers' is not yet. */
    analysis_budget_t *budget;
} analyzer_input_t;

/* The profilers this build analyzes, as a comma-separated list for messages,
 * and whether it analyzes one. */
const char *analyzer_profilers(void);
bool analyzer_handles(Profeed__Profiler profiler);

/* The profiler that wrote these files, judged from first bytes, then names:
 * "unitrace" (GpuTime[ns] columns, chrome JSON; trace.metrics.<pid>, .json),
 * "vtune" (its report's header; a name with "vtune"), else "ncu". Files
 * given as paths are peeked at, not consumed. */
const char *analyzer_detect(const analyzer_file_t *files, size_t count);

/* Notes on `fb` what a pass's output lacks that its plan asked for (ncu's
 * metrics asked for by name and dropped without a word), for the worker. */
void analyzer_check_pass(feedback_t *fb, const Profeed__PassOutput *pass);

/* Runs the analysis. Returns PF_OK with *out set (its status may still say
 * the profiler failed or profiled nothing), or an error for input that could
 * not be read or parsed (*out NULL, `err` names file, line and problem). */
pf_status_t analyzer_run(const analyzer_input_t *input, const analysis_options_t *options,
                         feedback_t **out, pf_error_t *err);

/* Analyzes `baseline` (the files of an earlier round, with the same
 * options) and attaches the change from it to `fb` (comparison.h). A
 * baseline that cannot be read or compared is said in a note and in the
 * comparison's problem; `fb` keeps its plain feedback either way. `name`
 * says which baseline it was in the feedback. */
void analyzer_compare_files(feedback_t *fb, const analyzer_input_t *baseline, const analysis_options_t *options,
                            const char *name);

/* Whether `profiler`'s backend parses pages as they come (it has a page
 * parser); false for a profiler this build does not analyze. */
bool analyzer_parses_pages(Profeed__Profiler profiler);

/* Parsing a page of a streamed pass as its bytes come (issue 20), so that
 * the parse overlaps the transfer: begin with the page's first bytes (`head`,
 * as many as a chunk holds) and the name messages give it (`source`), feed
 * the rest in order, finish, then hand it to the analysis in
 * analyzer_file_t.parsed. NULL from begin: `profiler`'s backend reads this
 * page whole (a profiler without a page parser, or an ncu source page), so
 * keep its bytes; or out of memory (*err says which). `keep_raw`: the
 * collated data will carry the cells as printed. `once`: the analysis will read the
 * page once (the worker's), so it may take what the page holds instead of
 * copying it; and `follows`, with `once` only: the page begun right before
 * this one in the same pass, when it finished without error (else NULL), into
 * whose data this one may be parsed, as parsing files one after another does,
 * so that a pass's pages describing the same launches hold them once (issue
 * 20). The analysis then needs such pages in that order, one after the other,
 * and says so when they are not. `budget`: the job's (analyzer_input_t's),
 * charged with what the page holds. */
analyzer_page_t *analyzer_page_begin(Profeed__Profiler profiler, const char *source, const char *head, size_t n,
                                     bool keep_raw, bool once, analyzer_page_t *follows, analysis_budget_t *budget,
                                     pf_error_t *err);
pf_status_t analyzer_page_feed(analyzer_page_t *page, const char *bytes, size_t n, pf_error_t *err);
pf_status_t analyzer_page_finish(analyzer_page_t *page, pf_error_t *err);
void analyzer_page_destroy(analyzer_page_t **page_p);

#endif
