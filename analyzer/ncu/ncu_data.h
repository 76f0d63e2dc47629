/* ncu_data: one job's Nsight Compute data, collated from all its passes.
 *
 * Each profiled launch is one record keyed by (ID, kernel name, block, grid):
 * passes of the same program number launches the same way, so a launch seen
 * in several passes is merged into one record whose metrics are the union of
 * what each pass measured. Values are in base units (ns, byte, hz, %);
 * NAN means "not measured". */
#ifndef NCU_DATA_H
#define NCU_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis_budget.h"
#include "ncu_metrics.h"

/* Bounds on what one job may hold; a capture over them gets a clear error. */
#define NCU_MAX_LAUNCHES 1000000
#define NCU_MAX_RULES_PER_LAUNCH 256
#define NCU_MAX_MESSAGES 64
/* Raw-page cells kept for the collated data (ncu_data_keep_raw), in bytes of
 * cell text. Kept as JSON they take some 25 times that in memory, so a
 * capture past it keeps none (and says so) rather than growing without
 * bound: 4 MiB holds KernelAgent's 29 metrics for 10,000 launches, or a
 * --set full capture of a hundred. */
#define NCU_MAX_RAW_BYTES (4u << 20)

/* Rule strings are interned in the data set: 5,000 launches of one kernel
 * repeat the same texts, which are kept once. */
typedef struct {
    const char *name;    /* "UncoalescedGlobalAccess" */
    const char *section; /* section identifier, "SourceCounters" */
    const char *text;    /* NCU's description */
    double speedup;   /* estimated speedup in percent, NAN when none */
    char type[4];        /* OPT, INF, WRN or ERR */
    bool global;      /* estimated speedup is for the whole kernel, not one unit */
} ncu_rule_t; /* 40 bytes in this order (48 with type and global between the pointers): a launch of
               * --set full has 9 of them */

typedef struct {
    long id;
    const char *kernel; /* interned in the data set: a capture's launches repeat a few names */
    char block[32];   /* "(256, 1, 1)" */
    char grid[32];
    double v[NM__COUNT];
    ncu_rule_t *rules;
    size_t rule_count, rule_cap;
    /* With ncu_data_keep_raw(): the launch's raw-page row as ncu printed it,
     * {column: cell} (a jansson object), else NULL. */
    struct json_t *raw;
} ncu_launch_t;

typedef struct ncu_data_t ncu_data_t;

ncu_data_t *ncu_data_new(void);
void ncu_data_destroy(ncu_data_t **self_p);

/* Finds the launch with this identity or adds it. Returns NULL when the job
 * already holds NCU_MAX_LAUNCHES or memory ran out. `*added` says which. */
ncu_launch_t *ncu_data_launch(ncu_data_t *self, long id, const char *kernel, const char *block,
                              const char *grid, bool *added);

/* Adds a rule result to a launch; a repeat of the same rule and text is dropped.
 * Returns false when the launch holds too many rules or memory ran out. */
bool ncu_data_add_rule(ncu_data_t *self, ncu_launch_t *launch, const char *name, const char *section,
                       const char *type, const char *text, bool global, double speedup);

size_t ncu_data_count(const ncu_data_t *self);
ncu_launch_t *ncu_data_at(ncu_data_t *self, size_t index);
const ncu_launch_t *ncu_data_at_const(const ncu_data_t *self, size_t index);

/* What the profiler said besides the CSV: ==ERROR== lines, ==WARNING== lines
 * that matter, and our own notes on the collation (kept in order, bounded). */
typedef enum { NCU_MSG_ERROR, NCU_MSG_WARNING, NCU_MSG_NOTE } ncu_msg_kind_t;
void ncu_data_add_message(ncu_data_t *self, ncu_msg_kind_t kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t ncu_data_message_count(const ncu_data_t *self, ncu_msg_kind_t kind);
const char *ncu_data_message(const ncu_data_t *self, ncu_msg_kind_t kind, size_t index);

/* The device as the capture names it ("NVIDIA H200") and its compute capability. */
void ncu_data_set_device(ncu_data_t *self, const char *name, const char *cc);
const char *ncu_data_device(const ncu_data_t *self);
const char *ncu_data_cc(const ncu_data_t *self);

/* Adds everything `from` holds to `self`, as if `from`'s passes had been
 * parsed into `self` after its own: launches merge by identity (a metric
 * already measured keeps its first value), rules and messages are added.
 * Returns false when memory ran out or a limit was reached. */
bool ncu_data_merge(ncu_data_t *self, const ncu_data_t *from);

/* ncu_data_merge(), taking `from` (destroyed, *from_p set NULL): when `self`
 * holds nothing yet, `from` becomes it and nothing is copied, so a job's first
 * streamed page is not held twice (issue 20). Same result and returns. */
bool ncu_data_absorb(ncu_data_t *self, ncu_data_t **from_p);

/* The collated data of `profeed analyze --collated` carries, beside the
 * values in base units, every raw-page cell as ncu printed it (in the units
 * of its units row), so a reader that wants the capture's own numbers, as
 * KernelAgent reads them, gets them. Off by default: it costs memory in
 * proportion to the capture, not to the metrics profeed keeps. Call before
 * parsing. */
void ncu_data_keep_raw(ncu_data_t *self);
bool ncu_data_keeps_raw(const ncu_data_t *self);

/* Adds the cells of a raw-page row, {column: cell} holding `bytes` of cell
 * text, to a launch (takes *row_p): a cell the launch holds already keeps
 * its first value, as metrics do. The units row's cells go to the data set
 * the same way. Past NCU_MAX_RAW_BYTES every raw cell is dropped, a note
 * says so and no more are kept. False only when memory ran out. */
bool ncu_data_add_raw(ncu_data_t *self, ncu_launch_t *launch, struct json_t **row_p, size_t bytes);
bool ncu_data_add_raw_unit(ncu_data_t *self, const char *column, const char *unit);

/* The raw pages' units row, {column: unit}, or NULL when none was kept. */
struct json_t *ncu_data_raw_units(const ncu_data_t *self);

/* Charges what the data set holds (launches, rules, strings, raw cells) to
 * `budget` (borrowed, outlives the set; NULL: unbounded), before parsing.
 * Past it, adding a launch, rule or cell fails and ncu_data_over_budget()
 * says that was why. */
void ncu_data_set_budget(ncu_data_t *self, analysis_budget_t *budget);
analysis_budget_t *ncu_data_budget(const ncu_data_t *self);
bool ncu_data_over_budget(const ncu_data_t *self);

/* True once ncu said "No kernels were profiled". */
void ncu_data_set_no_kernels(ncu_data_t *self);
bool ncu_data_no_kernels(const ncu_data_t *self);

#endif
