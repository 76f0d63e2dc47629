/* analysis_budget: the memory one job's analysis may hold (issue 20).
 *
 * A job's collated data grows with its capture (launches, their metrics and
 * rule results, raw cells): 20,000 launches of `--set full` hold some 30 MB.
 * A budget bounds it per job, so a capture too large for the process is
 * refused with a message naming the setting and its value, not answered by
 * the kernel's OOM killer or a cut result. One budget is shared by every data
 * set of a job (its streamed pages, the merged set, threads parsing passes),
 * so its counter is atomic. A NULL budget bounds nothing. */
#ifndef ANALYSIS_BUDGET_H
#define ANALYSIS_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t limit;         /* bytes; 0: unbounded */
    atomic_size_t used;   /* bytes charged now */
    char setting[64];     /* what sets it, for messages: "the analyzer's memory-mb" */
} analysis_budget_t;

/* A budget of `limit` bytes (0: unbounded) set by `setting`. */
void analysis_budget_init(analysis_budget_t *self, size_t limit, const char *setting);

/* Charges `bytes`; false, charging nothing, when that would pass the limit.
 * NULL: always true. */
bool analysis_budget_take(analysis_budget_t *self, size_t bytes);
/* Charges `bytes` whatever the limit (memory already held changing hands). */
void analysis_budget_force(analysis_budget_t *self, size_t bytes);
/* Gives back `bytes` taken before. */
void analysis_budget_give(analysis_budget_t *self, size_t bytes);

/* The refusal, for an error message: "the analysis of one job may hold at
 * most 1024 MiB (the analyzer's memory-mb); ..." */
void analysis_budget_describe(const analysis_budget_t *self, char *out, size_t cap);

#endif
