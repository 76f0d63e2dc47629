/* profeed_session: analysis of passes held in memory, behind opaque handles.
 *
 * The stable-ABI face of libprofeed-client, for callers that cannot follow a
 * struct's layout (Python through ctypes, other languages' FFIs, agents built
 * against an older header). Nothing here exposes a struct: options are set by
 * name, inputs are added one file at a time, results are read by getters. A
 * new option is a new key, never a new field, so no caller breaks.
 *
 * The files of one job arrive as KernelFoundry's `outputs` dict holds them:
 * a pass key ("ncu.000", "unitrace.001"; "ncu_ref.000" for the reference
 * implementation's profile) and, per pass, file names with their bytes. The
 * names carry meaning (unitrace's trace.metrics.<pid>, <proc>.<pid>.json), so
 * a pass given in memory is identified by its names and its content exactly
 * as the same files on disk would be: no temporary file is ever written.
 *
 *     profeed_session_t *s = profeed_session_new();
 *     profeed_session_set(s, "format", "json");
 *     profeed_session_add(s, "ncu.000", "ncu_report.csv", bytes, len);
 *     if (profeed_session_run(s) == PROFEED_OK)
 *         puts(profeed_session_output(s));
 *     profeed_session_destroy(&s);
 *
 * A session is one analysis: run it once, read its results, destroy it. Not
 * thread-safe; one session per thread. */
#ifndef PROFEED_SESSION_H
#define PROFEED_SESSION_H

#include <stddef.h>

#include "profeed_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Limits on what a caller may hand over, checked before anything is copied:
 * a file (one pass's CSV, timeline or report), all files together, the
 * number of files, and the length of a pass key or file name. */
#define PROFEED_SESSION_FILE_MAX ((size_t) 1 << 30)
#define PROFEED_SESSION_TOTAL_MAX ((size_t) 2 << 30)
#define PROFEED_SESSION_FILES_MAX 1024
#define PROFEED_SESSION_NAME_MAX 1024

typedef struct profeed_session_t profeed_session_t;

/* The ABI version of this interface; it grows only when a function is added. */
int profeed_session_abi(void);

/* A session with the default options (profiler auto, text, min share 5%).
 * NULL when memory ran out. */
profeed_session_t *profeed_session_new(void);
void profeed_session_destroy(profeed_session_t **self_p);

/* Sets one option by name. Keys, with the values they take:
 *   profiler      ncu, unitrace, vtune, auto
 *   language      cuda, triton, pytorch, sycl, ocl
 *   gpu_arch      sm_90, Hopper, bmg, ...
 *   format        text, json, markdown
 *   top           kernels to analyze at most (0: no cap)
 *   min_share     analyze kernels above this fraction of the time (0..1);
 *                 a share set here is kept strictly (what it leaves out is
 *                 said); by default the busiest kernel is analyzed even below it
 *   min_share_strict  0: the default share's leniency for the share set (0 or 1)
 *   max_chars     text: keep the most important findings within this (0: all,
 *                 else at least 200; the run refuses it for json and markdown)
 *   max_tokens    the same in estimated tokens (token_estimate.h; at least 64)
 *   device        GPU name (KernelFoundry's worker_info gpu_name)
 *   pci_id        PCI device id (worker_info device_id)
 *   cpu_model     CPU model (worker_info cpu_info)
 *   with_collated json: include the collated per-launch data (0 or 1)
 *   all_segments  unitrace: every benchmark window (0 or 1)
 *   stop_within   say "consider stopping" when every kernel that matters is
 *                 within this factor of its ceiling (>= 1; default 1.15)
 * A NULL or empty value restores the default. PROFEED_BAD_INPUT for an
 * unknown key or a value it does not take, with profeed_session_error()
 * naming both. */
profeed_result_t profeed_session_set(profeed_session_t *self, const char *key, const char *value);

/* Why `max_chars` cannot be used with `format` ("text", "json", "markdown"),
 * written into `buf` (`cap` bytes) and returned, or NULL when it can: it
 * bounds the text only, and a feedback needs 200 characters. For callers
 * that check options before any work; profeed_session_run() checks too. */
const char *profeed_session_check_max_chars(size_t max_chars, const char *format, char *buf, size_t cap);

/* The same for `max_tokens` (a feedback needs 64 estimated tokens). */
const char *profeed_session_check_max_tokens(size_t max_tokens, const char *format, char *buf, size_t cap);

/* Adds one file of pass `pass_key` (NULL: none, as on a command line) named
 * `name`, copying its `len` bytes (which may hold NUL bytes). PROFEED_BAD_INPUT
 * when a limit above would be passed or the session already ran. */
profeed_result_t profeed_session_add(profeed_session_t *self, const char *pass_key, const char *name,
                                     const void *bytes, size_t len);

/* Adds a file by path ("-" is standard input), read when the session runs
 * (an ncu capture streams, it is never held whole); a folder adds its regular
 * files, in name order (PROFEED_BAD_INPUT, with the reason, for a folder that
 * cannot be read or holds no file). `reference`: the file is of the
 * reference implementation's profile. */
profeed_result_t profeed_session_add_path(profeed_session_t *self, const char *path, int reference);

/* Adds one file of the baseline's capture (an earlier round of the same
 * kernel), in memory or by path, as profeed_session_add() and _add_path()
 * do. With any, the feedback opens with the change since the baseline
 * (docs/baselines.md); a baseline that cannot be read or compared is said
 * in a note, and the run still gives its plain feedback. ABI 2. */
profeed_result_t profeed_session_add_baseline(profeed_session_t *self, const char *pass_key, const char *name,
                                              const void *bytes, size_t len);
profeed_result_t profeed_session_add_baseline_path(profeed_session_t *self, const char *path);

/* Runs the analysis. Returns what profeed_analyze_files() would: PROFEED_OK
 * (feedback, also "no kernels"), PROFEED_PROFILER_ERROR, PROFEED_BAD_INPUT,
 * PROFEED_ERROR. The output is set for every result but PROFEED_ERROR. */
profeed_result_t profeed_session_run(profeed_session_t *self);

/* The rendered feedback in the chosen format, owned by the session; NULL
 * before a run. Its length excludes the terminating NUL. */
const char *profeed_session_output(const profeed_session_t *self);
size_t profeed_session_output_len(const profeed_session_t *self);

/* The same feedback rendered in another format ("text", "json",
 * "markdown"), owned by the session and kept until it is destroyed; NULL
 * before a run, after PROFEED_ERROR, or for an unknown format (the error
 * says so). Python reads the collated data this way beside the text. */
const char *profeed_session_render(profeed_session_t *self, const char *format);

/* The last error (bad option, bad input, profiler error), owned by the
 * session; "" when there was none. */
const char *profeed_session_error(const profeed_session_t *self);

/* The result of the last run (PROFEED_ERROR before one). */
profeed_result_t profeed_session_result(const profeed_session_t *self);

#ifdef __cplusplus
}
#endif

#endif
