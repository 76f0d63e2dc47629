/* ncu_advice: the words of a finding: what a stall reason means and the one
 * concrete change each kind of limiter calls for. Kept apart from the
 * analysis so the wording can be tuned without touching the logic. */
#ifndef NCU_ADVICE_H
#define NCU_ADVICE_H

/* The action for a category key ("dram_bound", "bank_conflicts", ...). */
const char *ncu_advice_action(const char *category);

/* For a stall metric (NM_STALL_*): what warps wait on, and what to change. */
const char *ncu_advice_stall_reason(int stall_metric);
const char *ncu_advice_stall_action(int stall_metric);

#endif
