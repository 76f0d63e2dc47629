#include "ncu_rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ncu_advice.h"
#include "text_cut.h"

/* Local speedups are bounded by one unit's share of the runtime; count them
 * at half weight next to global ones. */
#define LOCAL_WEIGHT 0.5

const char *ncu_rules_category(const ncu_rule_t *rule)
{
    /* Only optimization advice is kept: INF results restate metrics, WRN
     * results are about the profiling itself. */
    if (strcmp(rule->type, "OPT") != 0)
        return NULL;
    static const struct {
        const char *rule;
        const char *category;
    } map[] = {
        {"SOLBottleneck", "sol"},
        {"CPIStall", "warp_stall"},
        {"IssueSlotUtilization", "warp_stall"},
        {"TheoreticalOccupancy", "occupancy"},
        {"AchievedOccupancy", "occupancy"},
        {"MemoryCacheAccessPattern", "uncoalesced_access"},
        {"UncoalescedGlobalAccess", "uncoalesced_access"},
        {"SharedMemoryConflicts", "bank_conflicts"},
        {"UncoalescedSharedAccess", "bank_conflicts"},
        {"ThreadDivergence", "divergence"},
        {"FPInstructions", "fp_fusion"},
        {"WorkloadImbalance", "load_imbalance"},
        {"SlowPipeLimiter", "compute_bound"},
        /* Noise for kernel feedback: fires on every kernel of an H200. */
        {"MemoryL2Compression", NULL},
        {"PCSamplingData", NULL},
        {"PMSamplingData", NULL},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].rule, rule->name) == 0)
            return map[i].category;
    if (strcmp(rule->name, "HighPipeUtilization") == 0)
        return strstr(rule->text, "under-utilized") ? NULL : "compute_bound";
    if (strcmp(rule->name, "LaunchConfiguration") == 0) {
        if (strstr(rule->text, "wave"))
            return "tail_effect";
        if (strstr(rule->text, "grid"))
            return "small_grid";
        return "launch_config";
    }
    return "ncu_rule";
}

/* The rule's text without links and boilerplate, cut at a sentence end or a
 * word boundary, marked (text_cut.h). */
static void s_clean(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    bool space = false;
    for (const char *p = text; *p && n + 1 < cap; p++) {
        if ((*p == 'h' && strncmp(p, "http", 4) == 0) || (*p == 'S' && strncmp(p, "See the ", 8) == 0) ||
            (*p == 'C' && strncmp(p, "Check the ", 10) == 0))
            break;
        if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
            space = n > 0;
            continue;
        }
        if (space && n + 2 < cap)
            out[n++] = ' ';
        space = false;
        out[n++] = *p;
    }
    out[n] = '\0';
    text_cut(out, NCU_RULE_TEXT_SHOWN, NULL);
    while (n > 0 && out[strlen(out) - 1] == ' ')
        out[strlen(out) - 1] = '\0';
}

static fb_finding_t *s_find(feedback_t *fb, size_t kernel, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        fb_finding_t *f = feedback_finding_mut(fb, i);
        if (f->kernel == kernel && strcmp(f->category, category) == 0)
            return f;
    }
    return NULL;
}

static fb_finding_t *s_primary(feedback_t *fb, size_t kernel)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++) {
        fb_finding_t *f = feedback_finding_mut(fb, i);
        if (f->kernel == kernel && f->primary)
            return f;
    }
    return NULL;
}

static void s_add_source(fb_finding_t *f, const char *rule)
{
    if (strstr(f->source, rule))
        return;
    size_t used = strlen(f->source);
    if (used + strlen(rule) + 6 < sizeof f->source)
        snprintf(f->source + used, sizeof f->source - used, "%sncu:%s",
                 strncmp(f->source, "profeed", 7) == 0 || used == 0 ? "+" : ",", rule);
}

static bool s_judged(const char *category, const char *const *judged, size_t judged_count)
{
    for (size_t i = 0; i < judged_count; i++)
        if (strcmp(judged[i], category) == 0)
            return true;
    return false;
}

ncu_rule_shown_t *ncu_rules_show(const ncu_rule_t *const *rules, size_t count)
{
    ncu_rule_shown_t *shown = count ? malloc(count * sizeof *shown) : NULL;
    for (size_t r = 0; shown && r < count; r++) {
        char text[1024];
        s_clean(rules[r]->text, text, sizeof text);
        shown[r].rule = rules[r];
        shown[r].category = ncu_rules_category(rules[r]);
        size_t len = strnlen(text, NCU_RULE_TEXT_SHOWN); /* text_cut kept it within */
        memcpy(shown[r].text, text, len);
        shown[r].text[len] = '\0';
    }
    return shown;
}

void ncu_rules_merge(feedback_t *fb, size_t kernel, const ncu_rule_shown_t *rules, size_t count,
                     const char *const *judged, size_t judged_count)
{
    for (size_t r = 0; r < count; r++) {
        const ncu_rule_t *rule = rules[r].rule;
        const char *category = rules[r].category;
        if (!category)
            continue;
        const char *text = rules[r].text;
        double weight = isnan(rule->speedup) ? NAN
                                             : rule->speedup * (rule->global ? 1.0 : LOCAL_WEIGHT);

        fb_finding_t *primary = s_primary(fb, kernel);
        fb_finding_t *f = s_find(fb, kernel, category);
        /* The speed-of-light verdict is the primary finding; and a grid too
         * small to fill the GPU is also why occupancy is low. */
        if (strcmp(category, "sol") == 0 ||
            (strcmp(category, "occupancy") == 0 && primary &&
             strcmp(primary->category, "small_grid") == 0))
            f = primary;
        if (!f && primary && s_judged(category, judged, judged_count)) {
            if (isnan(rule->speedup))
                finding_add_evidence(primary, rule->name, rule->speedup, "%", "NCU %s: %s", rule->name, text);
            else
                finding_add_evidence(primary, rule->name, rule->speedup, "%",
                                     "NCU %s (est. %.0f%%; profeed measured it smaller): %s", rule->name,
                                     rule->speedup, text);
            continue;
        }
        if (!f) {
            if (strcmp(category, "sol") == 0)
                category = "speed_of_light";
            f = feedback_add_finding(fb, kernel, category, isnan(weight) ? 5 : weight, text,
                                     ncu_advice_action(category));
            if (!f)
                return;
            snprintf(f->source, sizeof f->source, "ncu:%s", rule->name);
            if (!*f->action)
                finding_set_action(f, "Follow NCU's guidance above.");
        } else {
            bool ours = strncmp(f->source, "ncu:", 4) != 0;
            /* A finding with a profeed model keeps its estimate and rank, so
             * the order does not depend on which pages a job captured; NCU's
             * estimate is quoted beside it. */
            if (!ours && !isnan(weight) && weight > f->importance)
                f->importance = weight > 100 ? 100 : weight;
            if (isnan(rule->speedup))
                finding_add_evidence(f, rule->name, rule->speedup, "%", "NCU %s: %s", rule->name, text);
            else
                finding_add_evidence(f, rule->name, rule->speedup, "%", "NCU %s (est. %s speedup %.0f%%): %s",
                                     rule->name, rule->global ? "global" : "local", rule->speedup, text);
            s_add_source(f, rule->name);
            if (ours)
                continue;
        }
        /* A local speedup is bounded by one unit's share of the time: it is
         * evidence, not an estimate for the whole kernel. */
        if (rule->global && !isnan(rule->speedup) && (isnan(f->speedup) || rule->speedup > f->speedup))
            f->speedup = rule->speedup;
    }
}
