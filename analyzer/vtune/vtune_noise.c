#include "vtune_noise.h"

#include <assert.h>
#include <math.h>

#include "fnv1a.h"
#include "noise.h"

/* The counter a column reads, for the noise's hash: the kernel's times are
 * one reading; UINT64_MAX: fixed by the code and the launch. */
static uint64_t s_counter(vtune_metric_t m)
{
    switch (m) {
    case VT_INSTANCE_COUNT:
    case VT_SIMD_WIDTH:
    case VT_SPILL_SIZE:
    case VT_PEAK_OCCUPANCY:
    case VT_OCC_LIMIT_WORK_SIZE:
    case VT_OCC_LIMIT_SLM:
    case VT_OCC_LIMIT_BARRIERS:
    case VT_ALU0_INSTR:
    case VT_ALU1_INSTR:
    case VT_XMX_INSTR:
        return UINT64_MAX;
    case VT_TOTAL_TIME:
    case VT_AVERAGE_TIME:
        return fnv1a_update_str(FNV1A_BASIS, "time");
    default: {
        unsigned index = (unsigned) m;
        return fnv1a_update(FNV1A_BASIS, &index, sizeof index);
    }
    }
}

void vtune_noise_apply(const vtune_kernel_t *in, unsigned reading, double sigma, vtune_kernel_t *out)
{
    assert(in && out && sigma >= 0);
    *out = *in;
    uint64_t seed = noise_seed(in->name, reading);
    for (int m = 0; m < VT__COUNT; m++) {
        uint64_t counter = s_counter((vtune_metric_t) m);
        double v = in->v[m];
        if (counter == UINT64_MAX || isnan(v) || v == 0)
            continue;
        double scaled = v * noise_factor(seed, counter, sigma);
        if (isfinite(scaled)) /* a value near DBL_MAX (a hostile report) stays as read */
            out->v[m] = scaled;
    }
}
