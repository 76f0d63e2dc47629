#include "fnv1a.h"

#define FNV1A_PRIME 1099511628211ULL

uint64_t fnv1a_update(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * FNV1A_PRIME;
    return h;
}

uint64_t fnv1a_update_str(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        h = (h ^ *p) * FNV1A_PRIME;
    return h;
}
