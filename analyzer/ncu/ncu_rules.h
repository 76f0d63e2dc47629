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

/* The most of a rule's text a finding quotes, in bytes. */
#define NCU_RULE_TEXT_SHOWN 220

/* A rule result as the feedback shows it: its category (NULL: noise) and its
 * text without links and boilerplate, cut at a sentence end or a word
 * (text_cut.h). Worked out once a kernel: ncu_analyze.c judges a kernel again
 * on noisy readings for its close calls, with the same rules. */
typedef struct {
    const ncu_rule_t *rule;
    const char *category;
    char text[NCU_RULE_TEXT_SHOWN + 1];
} ncu_rule_shown_t;

/* The `count` rules as shown, in a new array the caller frees; NULL when
 * `count` is 0 or memory ran out. */
ncu_rule_shown_t *ncu_rules_show(const ncu_rule_t *const *rules, size_t count);

/* `judged` lists the categories profeed's own models had the counters to judge
 * for this kernel. A rule of such a category with no finding to join (profeed
 * measured the cause and found it too small to report) is evidence on the
 * leading finding, not a finding of its own. A rule of a category profeed could
 * not judge becomes a finding ranked by NCU's estimate among the secondary
 * ones; it never leads: NCU's estimates ignore what bounds the kernel (its
 * FPInstructions rule promises a large gain from fusing FP32 adds in kernels
 * bound by the XU or LSU pipe, where fusion saves nothing). */
void ncu_rules_merge(feedback_t *fb, size_t kernel, const ncu_rule_shown_t *rules, size_t count,
                     const char *const *judged, size_t judged_count);

/* The finding category a rule result belongs to, or NULL when it is noise. */
const char *ncu_rules_category(const ncu_rule_t *rule);

#endif
