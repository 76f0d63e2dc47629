#include "ncu_atomics.h"

#include <math.h>

static double s_or0(double x) { return isnan(x) ? 0 : x; }

/* The lanes L2 counts, 0 where it does not count them. */
static double s_counted(const ncu_kernel_t *k)
{
    return s_or0(k->v[NM_L2_RED_REQUESTS]) + s_or0(k->v[NM_L2_ATOM_REQUESTS]) + s_or0(k->v[NM_L2_CAS_REQUESTS]);
}

static double s_instructions(const ncu_kernel_t *k)
{
    return s_or0(k->v[NM_GLOBAL_RED]) + s_or0(k->v[NM_GLOBAL_ATOM]);
}

double ncu_atomics_lanes(const ncu_kernel_t *k)
{
    double lanes = s_counted(k);
    return lanes > 0 ? lanes : s_instructions(k);
}

double ncu_atomics_lanes_most(const ncu_kernel_t *k)
{
    double lanes = s_counted(k);
    return lanes > 0 ? lanes : 32 * s_instructions(k);
}

/* The updates' time served one at a time, as a share of the kernel's: not
 * capped, the slices that serve them in parallel divide it first. */
static double s_serial(const ncu_kernel_t *k)
{
    double lanes = ncu_atomics_lanes(k), unit = k->v[NM_L2_ATOMIC_PCT], t = k->v[NM_DURATION];
    if (lanes <= 0 || isnan(unit) || unit < NCU_ATOMIC_UNIT_IDLE || isnan(t) || t <= 0)
        return NAN;
    return lanes * NCU_ATOMIC_NS / t;
}

double ncu_atomics_serialized(const ncu_kernel_t *k)
{
    double serial = s_serial(k);
    return isnan(serial) ? NAN : fmin(serial, 1); /* fmin would take 1 over a NAN */
}

double ncu_atomics_floor(const ncu_kernel_t *k)
{
    double serial = s_serial(k);
    if (isnan(serial))
        return NAN;
    return fmin(serial / fmax(1, k->v[NM_L2_ATOMIC_PCT] / NCU_ATOMIC_ONE_SLICE), 1);
}
