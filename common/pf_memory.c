#include "pf_memory.h"

#include <stdlib.h> /* defines __GLIBC__ on glibc */

#ifdef __GLIBC__
#include <malloc.h>
#endif

void pf_memory_keep_large_buffers(void)
{
#ifdef __GLIBC__
    /* Setting either value also stops glibc's own adjustment of them. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}
