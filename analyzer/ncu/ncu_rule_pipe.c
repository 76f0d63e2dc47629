#include "ncu_rule_pipe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The names the rule prints (Nsight Compute 2025.3, GH100) and the units they
 * are. "Shared" is the pipe FP64 and the tensor cores share; the text names
 * the sub-pipeline that dominates it ("It's dominated by its Tensor (FP)
 * sub-pipeline"). */
static const struct {
    const char *name, *key;
} s_pipes[] = {
    {"FMA", "fma"}, {"ALU", "alu"}, {"FP64", "fp64"}, {"Tensor", "tensor"},
};

static const char *s_key(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof s_pipes / sizeof s_pipes[0]; i++)
        if (strlen(s_pipes[i].name) == n && strncmp(s_pipes[i].name, name, n) == 0)
            return s_pipes[i].key;
    return NULL;
}

/* The sub-pipeline named after "dominated by its ", as a key, or NULL. */
static const char *s_dominant(const char *text)
{
    static const char lead[] = "dominated by its ";
    const char *p = strstr(text, lead);
    if (!p)
        return NULL;
    p += sizeof lead - 1;
    size_t n = strcspn(p, " (");
    return s_key(p, n);
}

bool ncu_rule_pipe(const ncu_rule_t *const *rules, size_t count, const char **key, double *pct)
{
    static const char mid[] = " is the highest-utilized pipeline (";
    for (size_t i = 0; i < count; i++) {
        const ncu_rule_t *r = rules[i];
        if (!r->name || !r->text || strcmp(r->name, "HighPipeUtilization") != 0)
            continue;
        const char *at = strstr(r->text, mid);
        if (!at || at == r->text)
            continue;
        size_t n = (size_t) (at - r->text);
        const char *k = n == 6 && strncmp(r->text, "Shared", 6) == 0 ? s_dominant(r->text) : s_key(r->text, n);
        char *end;
        double x = strtod(at + sizeof mid - 1, &end);
        if (!k || end == at + sizeof mid - 1 || *end != '%' || !isfinite(x) || x < 0)
            continue;
        *key = k;
        *pct = fmin(x, 100);
        return true;
    }
    return false;
}
