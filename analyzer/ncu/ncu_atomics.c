#include "ncu_atomics.h"

#include <math.h>

static double s_or0(double x) { return isnan(x) ? 0 : x; }

double ncu_atomics_lanes(const ncu_kernel_t *k)
{
    double red = k->v[NM_L2_RED_REQUESTS], atom = k->v[NM_L2_ATOM_REQUESTS], cas = k->v[NM_L2_CAS_REQUESTS];
    double lanes = s_or0(red) + s_or0(atom) + s_or0(cas);
    if (lanes > 0)
        return lanes;
    return s_or0(k->v[NM_GLOBAL_RED]) + s_or0(k->v[NM_GLOBAL_ATOM]);
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
