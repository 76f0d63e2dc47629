/* feedback: what an analysis found, as data, before it is text.
 *
 * A feedback holds the kernels that matter (ordered by their share of the
 * run), the findings for each (ranked by importance, each with evidence and
 * one action), notes on what could not be judged, and the job's status. The
 * text, JSON and Markdown renderers all read this one structure. */
#ifndef FEEDBACK_H
#define FEEDBACK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mirrors profeed.Feedback.Status on the wire. */
typedef enum {
    FB_OK,
    FB_NO_KERNELS,
    FB_PROFILER_ERROR,
    FB_BAD_INPUT,
    FB_TIMED_OUT,
    FB_FAILED_AFTER_RETRIES,
} fb_status_t;

#define FB_EVIDENCE_MAX 10

typedef struct {
    char metric[96];   /* the metric or quantity, e.g. "dram__throughput" or "FP32 FLOP/s" */
    double value;      /* NAN when the evidence is only text */
    char unit[16];
    char text[200];    /* for people: "DRAM throughput 71.8% of peak" */
} fb_evidence_t;

#define FB_LINES_MAX 3

/* A place in the kernel's code that causes a finding (from a source page):
 * a CUDA source line, or a SASS instruction when the build had no line info. */
typedef struct {
    unsigned line;           /* 1-based; 0: no line info, `text` is the SASS instruction */
    unsigned long long address; /* its (first) SASS instruction */
    char file[128];          /* the source file's name, "" when unknown */
    char text[201];          /* the source line (or SASS instruction), trimmed */
    char sass[64];           /* the line's SASS instruction with the most samples */
    double share;            /* 0..1 of `measure` this line accounts for */
    char measure[64];        /* "excess global sectors", "warp stall samples", ... */
    double value;            /* a number that shows it on this line, NAN when none */
    char unit[32];           /* value's unit: "sectors/request", "of 32 lanes active" */
    char stall[32];          /* the line's top stall reason ("long_sb"), "" when not sampled */
} fb_line_t;

typedef struct {
    size_t kernel;           /* index into the feedback's kernels */
    char category[32];       /* stable key: "uncoalesced_access", "dram_bound", ... */
    double importance;       /* 0..100: how much of this kernel's time it explains */
    double speedup;          /* estimated kernel speedup in percent, NAN if unknown */
    bool primary;            /* the kernel's dominant limiter */
    char *title;             /* one line: what limits the kernel */
    char *action;            /* one concrete change */
    char source[128];        /* "profeed" or "ncu:RuleName[,RuleName]" */
    /* Where the category spans several units, the one this finding is on, a
     * stable key: a compute bound's pipe ("fma", "alu", "xu", "fp64",
     * "tensor", "lsu", ...) or "issue" (the issue slots); "" else. */
    char unit[16];
    fb_evidence_t evidence[FB_EVIDENCE_MAX];
    size_t evidence_count;
    fb_line_t lines[FB_LINES_MAX]; /* where in the code, the largest share first */
    size_t line_count;
} fb_finding_t;

#define FB_KERNEL_METRICS 24

/* One key number of a kernel, by its canonical metric name. */
typedef struct {
    const char *name; /* static storage (the profiler's metric table) */
    double value;
} fb_metric_t;

#define FB_CLOSE_MAX 3

/* A first finding the same kernel could get from another profile of it. */
typedef struct {
    char category[32];
    char unit[16];      /* its unit (fb_finding_t.unit), "" when it names none */
    unsigned readings;  /* of the kernel's close_of noisy readings that name it first */
    bool listed;        /* the kernel has a finding of this category among its own */
    char *action;       /* where not listed, the action the first such reading gave (owned), or NULL */
} fb_close_t;

typedef struct {
    char *name;
    char block[32];
    char grid[32];
    size_t launches;
    double time_ns;     /* NAN when no duration was measured */
    double share;       /* of all profiled time, 0..1; NAN when unknown */
    char bottleneck[32];
    char bottleneck_unit[16]; /* the first finding's unit (fb_finding_t.unit), "" when it names none */
    char segment[128];  /* the benchmark window it ran in, or "" */
    fb_metric_t metrics[FB_KERNEL_METRICS];
    size_t metric_count;
    /* For a later comparison (docs/baselines.md): the rank of the kernel's
     * first launch (SIZE_MAX when unknown) and the standard deviation of one
     * launch's time (NAN under two launches). */
    size_t launch_order;
    double launch_sd_ns;
    /* Where launches of this name, block and grid behave differently and
     * were analyzed apart, this group's launch IDs ("2-4,31"); else "". */
    char launch_ids[96];
    /* The roofline the limiter found puts the kernel against: the busiest
     * unit measured and how busy, 0..100 (NAN: none measured). At most
     * 100 / ceiling_pct is left from that unit's bandwidth or throughput. */
    char ceiling_unit[64];
    double ceiling_pct;
    double ceiling_attain_pct; /* what that unit reaches at best, percent of its peak (100 when unknown) */
    /* A close call: the other first findings that close_of readings of the
     * kernel's counters, each scaled by run-to-run noise of close_noise_pct
     * percent (one sigma), gave; the most often named first. close_of 0: not
     * judged. close_same of them gave the kernel's own first finding. */
    fb_close_t close[FB_CLOSE_MAX];
    size_t close_count;
    unsigned close_of;
    unsigned close_same;
    double close_noise_pct;
} fb_kernel_t;

/* How a feedback was measured (profeed.Manifest): "" when unknown. */
typedef struct {
    char gpu[128];
    char driver_version[64];
    char profiler_version[128];
    char clock_control[160];
    char plan[64];
    char metrics_hash[20];       /* FNV-1a 64 in hex, "" when no metric was asked for by name */
    size_t metrics_count;
    char profeed_version[32];
    char target[1024];           /* the job's command line, or the files analyzed */
} fb_manifest_t;

typedef struct fb_comparison_t fb_comparison_t;

typedef struct feedback_t feedback_t;

feedback_t *feedback_new(const char *profiler);
void feedback_destroy(feedback_t **self_p);

void feedback_set_status(feedback_t *self, fb_status_t status);
fb_status_t feedback_status(const feedback_t *self);
const char *feedback_status_name(fb_status_t status);
const char *feedback_profiler(const feedback_t *self);

void feedback_set_device(feedback_t *self, const char *device);
const char *feedback_device(const feedback_t *self);

/* Totals over every profiled kernel, including those not analyzed. */
void feedback_set_totals(feedback_t *self, size_t kernels, size_t launches, double time_ns);
size_t feedback_total_kernels(const feedback_t *self);
size_t feedback_total_launches(const feedback_t *self);
double feedback_total_time_ns(const feedback_t *self);

/* Adds a kernel; returns its index, or (size_t)-1 when memory ran out. */
size_t feedback_add_kernel(feedback_t *self, const char *name, const char *block, const char *grid,
                           size_t launches, double time_ns, double share);
size_t feedback_kernel_count(const feedback_t *self);
fb_kernel_t *feedback_kernel(feedback_t *self, size_t index);
const fb_kernel_t *feedback_kernel_const(const feedback_t *self, size_t index);

/* Records a key number of a kernel (dropped past FB_KERNEL_METRICS).
 * `name` must be a string with static storage. */
void feedback_kernel_metric(fb_kernel_t *kernel, const char *name, double value);

/* Records the unit the kernel's roofline puts it against (ceiling.h):
 * `unit` for people ("DRAM"), `pct` 0..100 of its peak. */
void feedback_kernel_ceiling(fb_kernel_t *kernel, const char *unit, double pct, double attain);

/* Records that the kernel's first finding was judged again on `readings`
 * noisy readings of its counters (noise_pct one sigma), `same` of which gave
 * it first again, and which other first
 * findings they gave: a category (on `unit`, NULL or "" for none) named
 * first by that many of them (kept in order, the most named first; past
 * FB_CLOSE_MAX the least named drop out), whether the kernel lists that
 * finding already, and else the action such a reading gave (copied; NULL:
 * none). */
void feedback_kernel_close(fb_kernel_t *kernel, unsigned readings, unsigned same, double noise_pct);
void feedback_kernel_add_close(fb_kernel_t *kernel, const char *category, const char *unit, unsigned readings,
                               bool listed, const char *action);

/* Adds a finding for a kernel and returns it for filling in (owned by the
 * feedback), or NULL when memory ran out. Title and action are copied. */
fb_finding_t *feedback_add_finding(feedback_t *self, size_t kernel, const char *category,
                                   double importance, const char *title, const char *action);
size_t feedback_finding_count(const feedback_t *self);
const fb_finding_t *feedback_finding(const feedback_t *self, size_t index);
fb_finding_t *feedback_finding_mut(feedback_t *self, size_t index);

/* Replaces a finding's title or action. */
void finding_set_title(fb_finding_t *finding, const char *title);
void finding_set_action(fb_finding_t *finding, const char *action);

/* Appends one evidence line (dropped silently past FB_EVIDENCE_MAX: the
 * strongest evidence is added first). */
void finding_add_evidence(fb_finding_t *finding, const char *metric, double value, const char *unit,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Orders findings: by kernel (kernels keep their order), primary first, then
 * by importance. Call once all findings are in. */
void feedback_sort(feedback_t *self);

/* Errors (what went wrong), notes (what was not judged and why), and the
 * metrics a richer pass plan would add. Each is a de-duplicated list. */
void feedback_add_error(feedback_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void feedback_add_note(feedback_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void feedback_add_missing(feedback_t *self, const char *what);
size_t feedback_error_count(const feedback_t *self);
const char *feedback_error(const feedback_t *self, size_t index);
size_t feedback_note_count(const feedback_t *self);
const char *feedback_note(const feedback_t *self, size_t index);
size_t feedback_missing_count(const feedback_t *self);
const char *feedback_missing(const feedback_t *self, size_t index);

/* The reference implementation's profile, collated beside this one: its
 * profiler, kernel count and total GPU time (NAN when unknown). */
void feedback_set_reference(feedback_t *self, const char *profiler, size_t kernels, double time_ns);
/* False when the job had no reference profile. */
bool feedback_reference(const feedback_t *self, const char **profiler, size_t *kernels, double *time_ns);

/* The profile was replayed from a recorded capture, not measured for this
 * job (a replay collector): every renderer says so first. */
void feedback_set_replayed(feedback_t *self, bool replayed);
bool feedback_replayed(const feedback_t *self);

/* The manifest (every renderer and the wire carry it). Starts empty but
 * for profeed's version. */
fb_manifest_t *feedback_manifest(feedback_t *self);
const fb_manifest_t *feedback_manifest_const(const feedback_t *self);

/* The change since a baseline (comparison.h), owned by the feedback from
 * here on; NULL when none was asked for. */
void feedback_set_comparison(feedback_t *self, fb_comparison_t **comparison_p);
const fb_comparison_t *feedback_comparison(const feedback_t *self);

/* Whether every kernel that matters is near its ceiling (ceiling.c), and the
 * sentence that says so; "" when not judged. */
void feedback_set_stop(feedback_t *self, bool stop, const char *text);
bool feedback_stop(const feedback_t *self, const char **text);

/* The collated data the findings came from (profiler-specific JSON), owned. */
void feedback_set_collated(feedback_t *self, json_t *collated);
json_t *feedback_collated(const feedback_t *self);

#endif
