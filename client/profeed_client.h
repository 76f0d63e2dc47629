/* libprofeed-client: what an agent links to get profiler feedback.
 *
 * Offline analysis (no farm): give it the files a profiler wrote for one job
 * (several files = several passes of one program) and get the feedback back
 * as LLM-ready text, JSON or Markdown. The farm calls (submit a job, wait for
 * its feedback) join this header with the broker. */
#ifndef PROFEED_CLIENT_H
#define PROFEED_CLIENT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROFEED_VERSION "0.1.0"

/* Outcome of an analysis, also the `profeed analyze` exit code. */
typedef enum {
    PROFEED_OK = 0,             /* feedback produced (status ok or no kernels profiled) */
    PROFEED_ERROR = 1,          /* out of memory or another failure of ours */
    PROFEED_BAD_INPUT = 2,      /* an input file is unreadable or malformed */
    PROFEED_PROFILER_ERROR = 3, /* the profiler itself reported an error */
} profeed_result_t;

typedef enum { PROFEED_FORMAT_TEXT, PROFEED_FORMAT_JSON, PROFEED_FORMAT_MARKDOWN } profeed_format_t;

typedef struct {
    const char *profiler;   /* "ncu", "unitrace", "vtune" or "auto" (default: auto) */
    const char *language;   /* cuda, triton, pytorch, sycl, ocl: picks the profiler for "auto" */
    const char *gpu_arch;   /* with language: sm_90, Hopper, bmg, ... */
    profeed_format_t format;
    size_t top;             /* analyze at most this many kernels; 0 = no cap */
    double min_share;       /* analyze kernels above this share of time (default 0.05) */
    size_t max_chars;       /* text only: keep the most important findings within this; 0 = all */
    const char *device;     /* GPU name when the capture does not say it, or NULL */
    const char *pci_id;     /* PCI device id, for rooflines of Intel GPUs, or NULL */
    const char *cpu_model;  /* CPU model (names integrated GPUs), or NULL */
    int with_collated;      /* JSON only: include the collated per-launch data */
    int all_segments;       /* unitrace: every benchmark window, not median + slowest */
    const char *const *reference_paths; /* files of the reference implementation's profile */
    size_t reference_count;
} profeed_analyze_options_t;

/* Fills `options` with the defaults. */
void profeed_analyze_options_init(profeed_analyze_options_t *options);

/* Analyzes the files of one job (`"-"` is standard input). On return
 * `*output` holds the rendered feedback (also for a profiler error, which the
 * feedback describes), and `*error` a message naming the file, line and
 * problem when the result is not PROFEED_OK; both are the caller's to free()
 * and may be NULL. */
profeed_result_t profeed_analyze_files(const char *const *paths, size_t count,
                                       const profeed_analyze_options_t *options, char **output,
                                       char **error);

#ifdef __cplusplus
}
#endif

#endif
