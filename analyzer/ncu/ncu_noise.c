#include "ncu_noise.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "fnv1a.h"

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

static uint64_t s_mix(uint64_t x) /* splitmix64's finalizer */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A standard normal, near enough, from a 64-bit hash: the sum of its four
 * 16-bit quarters as uniforms (Irwin-Hall), centred and scaled to variance 1.
 * Its tails stop at 3.46 sigma, where a profile's noise is not modelled
 * anyway, and it costs no logarithm or cosine (the close calls draw about a
 * thousand a kernel). */
static double s_normal(uint64_t h)
{
    double sum = 0;
    for (int i = 0; i < 4; i++, h >>= 16)
        sum += ((double) (h & 0xffffu) + 0.5) / 65536.0;
    return (sum - 2.0) * 1.7320508075688772; /* sqrt(12 / 4) */
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
    uint64_t seed = s_mix(fnv1a_update_str(FNV1A_BASIS, in->name ? in->name : "") ^ s_mix(trial + 1));
    for (int m = 0; m < NM__COUNT; m++) {
        double v = in->v[m];
        if (isnan(v) || v == 0 || s_table[m].fixed)
            continue;
        double scaled = v * exp(sigma * s_normal(s_mix(seed ^ s_table[m].counter)));
        if (isfinite(scaled)) /* a count near DBL_MAX (a hostile capture) stays as read */
            out->v[m] = scaled;
    }
}
