/* ncu_kernel: launches of one kernel with one launch configuration, combined.
 *
 * An agent cares about "matmul with this grid", not about launch 17 (unless
 * launch 17 behaves differently: then it is a group of its own): counts
 * add up over launches, rates are averaged weighted by launch duration, and
 * NCU rule results are de-duplicated (the same rule on every launch says one
 * thing). Kernels come out ordered by total time, largest first. */
#ifndef NCU_KERNEL_H
#define NCU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu_data.h"

typedef struct {
    const char *name;     /* borrowed from the data */
    const char *block;
    const char *grid;
    size_t launches;
    long first_id;
    double v[NM__COUNT];
    double duration_sd;   /* standard deviation of one launch's duration (ns); NAN under 2 timed launches */
    size_t launch_order;  /* rank of first_id among the kernels: 0 launched first */
    const ncu_rule_t **rules; /* one per distinct rule, the largest speedup kept */
    size_t rule_count;
    bool sm_pct_derived;  /* v[NM_SM_PCT] rebuilt from its breakdown (ncu_summary.c), not collected */
    /* Launches of one name, block and grid that behave differently are
     * grouped apart (ncu_kernel.c): how many groups the name, block and grid
     * has, and where it has more than one, this group's launch IDs ("2-4,31"). */
    size_t behaviours;
    char launch_ids[96];
} ncu_kernel_t;

typedef struct ncu_kernels_t ncu_kernels_t;

/* Groups the data's launches; NULL when memory ran out. The result borrows
 * from `data`, which must outlive it. */
ncu_kernels_t *ncu_kernels_group(const ncu_data_t *data);
void ncu_kernels_destroy(ncu_kernels_t **self_p);

size_t ncu_kernels_count(const ncu_kernels_t *self);
const ncu_kernel_t *ncu_kernels_at(const ncu_kernels_t *self, size_t index);
/* Sum of all kernels' durations in ns, NAN when none was measured. */
double ncu_kernels_total_time(const ncu_kernels_t *self);

#endif
