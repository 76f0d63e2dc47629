#include "ncu_rule_pipe.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The pipe names the rule prints (Nsight Compute 2021 to 2025) and the units
 * they are. The composites, "Shared" (FP64 and the tensor cores) and "Tensor"
 * (the tensor pipes together), count by their dominant sub-pipeline. */
static const struct {
    const char *name, *key;
} s_pipes[] = {
    {"FMA", "fma"},         {"FMA (FP16)", "fma"},    {"ALU", "alu"},           {"FP64", "fp64"},
    {"FP64 (FP64)", "fp64"}, {"FP64 (DMMA)", "tensor"}, {"Tensor (FP)", "tensor"}, {"Tensor (INT)", "tensor"},
    {"Tensor (DP)", "tensor"}, {"XU", "xu"},           {"LSU", "lsu"},           {"ADU", "adu"},
    {"CBU", "cbu"},         {"TEX", "tex"},           {"Uniform", "uniform"},
};

static const char *s_key(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof s_pipes / sizeof s_pipes[0]; i++)
        if (strlen(s_pipes[i].name) == n && strncmp(s_pipes[i].name, name, n) == 0)
            return s_pipes[i].key;
    return NULL;
}

/* The sub-pipeline named in "dominated by its Tensor (FP) sub-pipeline", as a
 * key, or NULL. */
static const char *s_dominant(const char *text)
{
    static const char lead[] = "dominated by its ", tail[] = " sub-pipeline";
    const char *p = strstr(text, lead);
    if (!p)
        return NULL;
    p += sizeof lead - 1;
    const char *end = strstr(p, tail);
    return end ? s_key(p, (size_t) (end - p)) : NULL;
}

/* A name of n bytes at `name`: a composite counts by its dominant
 * sub-pipeline, read from the rest of `text` (the tensor composite is the
 * tensor pipe whichever dominates). */
static const char *s_named(const char *name, size_t n, const char *text)
{
    bool shared = n == 6 && strncmp(name, "Shared", 6) == 0, tensor = n == 6 && strncmp(name, "Tensor", 6) == 0;
    if (!shared && !tensor)
        return s_key(name, n);
    const char *sub = s_dominant(text);
    return sub ? sub : tensor ? "tensor" : NULL;
}

/* A percentage "75.2%" at p, in 0..100; NAN where there is none. */
static double s_pct(const char *p)
{
    char *end;
    double x = strtod(p, &end);
    if (end == p || *end != '%' || !isfinite(x) || x < 0)
        return NAN;
    return fmin(x, 100);
}

static void s_add(ncu_rule_pipe_t out[NCU_RULE_PIPES], size_t *n, const char *key, double pct)
{
    if (!key || isnan(pct) || *n >= NCU_RULE_PIPES)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(out[i].key, key) == 0)
            return;
    out[(*n)++] = (ncu_rule_pipe_t){.key = key, .pct = pct};
}

size_t ncu_rule_pipes(const ncu_rule_t *const *rules, size_t count, ncu_rule_pipe_t out[NCU_RULE_PIPES])
{
    static const char first[] = " is the highest-utilized pipeline (";
    static const char second[] = "the highest utilized pipeline (";
    size_t n = 0;
    for (size_t i = 0; i < count && n == 0; i++) {
        const ncu_rule_t *r = rules[i];
        if (!r || !r->name || !r->text || strcmp(r->name, "HighPipeUtilization") != 0)
            continue;
        const char *at = strstr(r->text, first);
        if (at && at != r->text)
            s_add(out, &n, s_named(r->text, (size_t) (at - r->text), at), s_pct(at + sizeof first - 1));
        /* "... the highest utilized pipeline (30.9%) is Tensor (FP). It executes ..." */
        const char *p = strstr(r->text, second);
        if (p) {
            p += sizeof second - 1;
            double pct = s_pct(p);
            const char *is = strstr(p, "%) is ");
            if (is) {
                is += 6;
                s_add(out, &n, s_key(is, strcspn(is, ".")), pct);
            }
        }
    }
    return n;
}
