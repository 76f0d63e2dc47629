/* ncu_rule_pipe: the pipes Nsight Compute's HighPipeUtilization rule names.
 *
 * Captures without the pipe counters (KernelFoundry's `--set detailed` page:
 * ComputeWorkloadAnalysis's table has no per-pipe rows) still carry the rule's
 * text, which reads them. Two sentences name a pipe with its utilization:
 *
 *   "FMA is the highest-utilized pipeline (75.2%) based on elapsed cycles ..."
 *   "... Based on the number of executed instructions, the highest utilized
 *    pipeline (30.9%) is Tensor (FP)."
 *
 * The first compares the pipes with cycle counters (Nsight Compute 2023 and
 * later: ALU, FMA, FP64, the shared FP64/tensor pipe and the tensor pipes,
 * whose text names the sub-pipeline that dominates them; 2021's compared every
 * pipe by instructions). The second, written only where the first is at 60%
 * or more, compares every pipe by executed instructions (XU, LSU, ADU
 * included). Neither is the busiest pipe of the SM for certain: an XU-bound
 * kernel's rule names FMA at 36% under an SM at 96%. So the pipes they name
 * join the units as any pipe of a capture that does not measure them all, and
 * the bound reads them against the SM summary. */
#ifndef NCU_RULE_PIPE_H
#define NCU_RULE_PIPE_H

#include <stddef.h>

#include "ncu_data.h"

#define NCU_RULE_PIPES 2

typedef struct {
    const char *key; /* an ncu_units key: "fma", "alu", "fp64", "tensor", "xu", "lsu", ... */
    double pct;      /* utilization, percent of peak, 0..100 */
} ncu_rule_pipe_t;

/* The pipes the kernel's HighPipeUtilization rule names, at most one per
 * sentence and none twice, into out[]; returns how many. A name the table
 * does not know (TMA, FP16), a composite pipe whose dominant sub-pipeline the
 * text does not give, or a missing or garbled percentage names nothing. */
size_t ncu_rule_pipes(const ncu_rule_t *const *rules, size_t count, ncu_rule_pipe_t out[NCU_RULE_PIPES]);

#endif
