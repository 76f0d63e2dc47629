/* ncu_rules: folds Nsight Compute's own rule results into profeed's findings.
 *
 * A rule that says what a finding already says (UncoalescedGlobalAccess for an
 * uncoalesced kernel) strengthens that finding with its estimated speedup and
 * a line of evidence, instead of being pasted after it; a rule with no
 * counterpart becomes a finding of its own; boilerplate (info-only results,
 * tooling warnings, L2 compression on every kernel) is dropped. */
#ifndef NCU_RULES_H
#define NCU_RULES_H

#include <stddef.h>

#include "feedback.h"
#include "ncu_data.h"

void ncu_rules_merge(feedback_t *fb, size_t kernel, const ncu_rule_t *const *rules, size_t count);

/* The finding category a rule result belongs to, or NULL when it is noise. */
const char *ncu_rules_category(const ncu_rule_t *rule);

#endif
