/* ncu_truth.h: judging a first finding against a corpus's expected one, for the
 * ground-truth suites (test_ncu_feedback.c, test_ncu_accuracy.c). The same rules
 * as bench/accuracy.py, which prints the accuracy table of docs/ncu.md:
 *
 *   right      the expected category, and for "compute_bound:PIPE" that pipe named;
 *   says less  consistent with the truth but less specific: the bound the cause shows
 *              up on (dram_bound for an uncoalesced kernel whose capture has no sector
 *              counters), or compute-bound with "which pipe ... was not measured";
 *   wrong      anything else: a claim the measurements do not support. */
#ifndef NCU_TRUTH_H
#define NCU_TRUTH_H

#include <stdio.h>
#include <string.h>

#include "feedback.h"

typedef enum { TRUTH_RIGHT, TRUTH_LESS, TRUTH_WRONG } truth_verdict_t;

static const struct {
    const char *pipe, *words;
} s_truth_pipes[] = {
    {"fma", "FP32 FMA pipe"}, {"alu", "ALU pipe"},     {"fp64", "FP64 pipe"},
    {"xu", "XU pipe"},        {"tensor", "tensor pipe"}, {"lsu", "LSU pipe"},
    {"adu", "ADU pipe"},      {"cbu", "CBU pipe"},     {"tex", "TEX pipe"},
};

/* Categories a capture without the specific counters may name instead. */
static const struct {
    const char *truth, *less;
} s_truth_less[] = {
    {"uncoalesced_access", "dram_bound l2_bound l1_bound memory_bound latency_bound"},
    {"bank_conflicts", "l1_bound memory_bound"},
    {"local_memory", "l2_bound l1_bound dram_bound memory_bound register_spill"},
    /* Without the spill counter, spills are local memory of unknown cause. */
    {"register_spill", "local_memory l2_bound l1_bound dram_bound memory_bound"},
    /* Divergence shows up as the issue work on a busy SM, or, in warps that wait on
     * their own dependent chains with nothing else to run, as latency. */
    {"divergence", "compute_bound latency_bound"},
    {"barrier_stall", "compute_bound latency_bound"},
    {"small_grid", "latency_bound"},
    {"tail_effect", "compute_bound latency_bound load_imbalance"},
    {"occupancy", "latency_bound dram_bound memory_bound"},
    {"contention", "latency_bound l1_bound memory_bound"},
    /* A DRAM stream below its roof for want of bytes in flight is, without stall
     * reasons (SpeedOfLight alone), a kernel with no unit at 60%: latency. */
    {"dram_bound", "memory_bound latency_bound"},
    {"l2_bound", "memory_bound"},
    {"l1_bound", "memory_bound"},
    /* The LSU pipe issues into L1/TEX: without traffic counters its work looks like L1's. */
    {"compute_bound:lsu", "l1_bound"},
    /* Serialized constant loads keep the ADU busy: without issue slots (SpeedOfLight
     * alone) the replays cannot be told from the ADU's own work. */
    {"warp_stall", "compute_bound:adu"},
};

static bool s_truth_word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* `expect` is "category" or "category:pipe". */
static truth_verdict_t truth_judge_one(const fb_finding_t *first, const char *expect)
{
    char category[64];
    const char *colon = strchr(expect, ':');
    snprintf(category, sizeof category, "%.*s", colon ? (int) (colon - expect) : (int) strlen(expect), expect);
    const char *got = first ? first->category : "(none)";
    if (strcmp(got, category) == 0) {
        if (!colon)
            return TRUTH_RIGHT;
        /* "which pipe saturates was not measured (busiest measured: ALU ...)"
         * names no bound: it says less, whatever pipe it mentions. */
        if (strstr(first->title, "was not measured"))
            return TRUTH_LESS;
        for (size_t i = 0; i < sizeof s_truth_pipes / sizeof s_truth_pipes[0]; i++)
            if (strcmp(s_truth_pipes[i].pipe, colon + 1) == 0 && strstr(first->title, s_truth_pipes[i].words))
                return TRUTH_RIGHT;
        return strstr(first->title, "was not measured") ? TRUTH_LESS : TRUTH_WRONG;
    }
    for (size_t i = 0; i < sizeof s_truth_less / sizeof s_truth_less[0]; i++) {
        if (strcmp(s_truth_less[i].truth, category) != 0 && strcmp(s_truth_less[i].truth, expect) != 0)
            continue;
        if (s_truth_word_in(s_truth_less[i].less, got))
            return TRUTH_LESS;
        /* "category:pipe" in a list: that category with that pipe in the title */
        for (size_t j = 0; first && j < sizeof s_truth_pipes / sizeof s_truth_pipes[0]; j++) {
            char word[64];
            snprintf(word, sizeof word, "%s:%s", got, s_truth_pipes[j].pipe);
            if (s_truth_word_in(s_truth_less[i].less, word) && strstr(first->title, s_truth_pipes[j].words))
                return TRUTH_LESS;
        }
    }
    return TRUTH_WRONG;
}

/* `expect` may list alternatives, "a|b" (levers measured within 5% of each
 * other, corpus v8's README): the best verdict of any of them. */
static truth_verdict_t truth_judge(const fb_finding_t *first, const char *expect)
{
    truth_verdict_t best = TRUTH_WRONG;
    for (const char *p = expect; *p;) {
        size_t n = strcspn(p, "|");
        char one[64];
        snprintf(one, sizeof one, "%.*s", (int) n, p);
        truth_verdict_t v = truth_judge_one(first, one);
        best = v < best ? v : best;
        p += n + (p[n] == '|');
    }
    return best;
}

#endif
