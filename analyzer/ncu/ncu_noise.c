#include "ncu_noise.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "fnv1a.h"
#include "noise.h"

static bool s_starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

bool ncu_noise_fixed(ncu_metric_t metric)
{
    /* The same prefixes as bench/stability.py's FIXED_PREFIXES, for the
     * metrics profeed keeps. */
    static const char *const fixed[] = {
        "launch__", "device__", "sm__maximum_warps", "sass__", "smsp__sass_", "sm__sass_",
        "smsp__thread_inst_executed_per_inst_executed",
        "smsp__thread_inst_executed_pred_on_per_inst_executed",
    };
    const char *name = ncu_metric_info(metric)->name;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (s_starts(name, fixed[i]))
            return true;
    return strstr(name, ".peak_sustained") && !strstr(name, "pct_of_peak");
}

static bool s_ends(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* The counter a metric reads, hashed: its name up to the first '.', every
 * form of the kernel's time one counter. */
static uint64_t s_counter(const char *name)
{
    const char *dot = strchr(name, '.');
    size_t len = dot ? (size_t) (dot - name) : strlen(name);
    if ((len == strlen("gpu__time_duration") && memcmp(name, "gpu__time_duration", len) == 0) ||
        s_ends(name, len, "__cycles_elapsed") || s_ends(name, len, "__cycles_active"))
        return fnv1a_update_str(FNV1A_BASIS, "time");
    return fnv1a_update(FNV1A_BASIS, name, len);
}

/* Per metric, computed once: whether it is fixed, and its counter's hash. */
static struct {
    bool fixed;
    uint64_t counter;
} s_table[NM__COUNT];
static pthread_once_t s_table_once = PTHREAD_ONCE_INIT;

static void s_table_fill(void)
{
    for (int m = 0; m < NM__COUNT; m++) {
        s_table[m].fixed = ncu_noise_fixed((ncu_metric_t) m);
        s_table[m].counter = s_counter(ncu_metric_info((ncu_metric_t) m)->name);
    }
}

void ncu_noise_apply(const ncu_kernel_t *in, unsigned trial, double sigma, ncu_kernel_t *out)
{
    assert(in && out && sigma >= 0);
    pthread_once(&s_table_once, s_table_fill);
    *out = *in;
    uint64_t seed = noise_seed(in->name, trial);
    for (int m = 0; m < NM__COUNT; m++) {
        double v = in->v[m];
        if (isnan(v) || v == 0 || s_table[m].fixed)
            continue;
        double scaled = v * noise_factor(seed, s_table[m].counter, sigma);
        if (isfinite(scaled)) /* a count near DBL_MAX (a hostile capture) stays as read */
            out->v[m] = scaled;
    }
}
