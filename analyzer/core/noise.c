#include "noise.h"

#include <math.h>

#include "fnv1a.h"

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

uint64_t noise_seed(const char *name, unsigned reading)
{
    return s_mix(fnv1a_update_str(FNV1A_BASIS, name ? name : "") ^ s_mix(reading + 1));
}

double noise_factor(uint64_t seed, uint64_t counter, double sigma)
{
    return exp(sigma * s_normal(s_mix(seed ^ counter)));
}
