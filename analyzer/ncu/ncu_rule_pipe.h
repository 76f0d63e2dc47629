/* ncu_rule_pipe: the pipe Nsight Compute's HighPipeUtilization rule names.
 *
 * Captures without the pipe counters (KernelFoundry's `--set detailed` page:
 * ComputeWorkloadAnalysis's table has no per-pipe rows) still carry the rule's
 * text, which reads them: "FMA is the highest-utilized pipeline (75.2%) based
 * on elapsed cycles in the workload". The rule compares some pipes only (ALU,
 * FMA, FP64 and the shared FP64/tensor pipe, by the names it prints; an
 * XU-bound kernel's rule names FMA at 36% while the SM is at 96%), so the pipe
 * it names is the busiest of those, not of the SM: the bound reads it against
 * the SM summary like any pipe of a capture that does not measure them all. */
#ifndef NCU_RULE_PIPE_H
#define NCU_RULE_PIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "ncu_data.h"

/* The rule's pipe as an ncu_units key ("fma", "alu", "fp64", "tensor") and its
 * utilization in percent of peak over elapsed cycles; false where no rule of
 * that name reads a pipe we know (the shared pipe counts only where the text
 * says which sub-pipeline dominates it). */
bool ncu_rule_pipe(const ncu_rule_t *const *rules, size_t count, const char **key, double *pct);

#endif
