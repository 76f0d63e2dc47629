#include "ncu_atomics.h"

#include <math.h>

static double s_or0(double x) { return isnan(x) ? 0 : x; }

double ncu_atomics_serialized(const ncu_kernel_t *k)
{
    double atomics = s_or0(k->v[NM_GLOBAL_RED]) + s_or0(k->v[NM_GLOBAL_ATOM]);
    double unit = k->v[NM_L2_ATOMIC_PCT], t = k->v[NM_DURATION];
    if (atomics <= 0 || isnan(unit) || unit < NCU_ATOMIC_UNIT_IDLE || isnan(t) || t <= 0)
        return NAN;
    return fmin(atomics * NCU_ATOMIC_NS / t, 1);
}

double ncu_atomics_floor(const ncu_kernel_t *k)
{
    double serial = ncu_atomics_serialized(k);
    if (isnan(serial))
        return NAN;
    return serial / fmax(1, k->v[NM_L2_ATOMIC_PCT] / NCU_ATOMIC_ONE_SLICE);
}
