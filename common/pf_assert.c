/* pf_assert: see pf_assert.h. */
#include "pf_assert.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void pf_assert_fail(const char *what, const char *file, int line, const char *func)
{
    fprintf(stderr, "%s:%d: %s: assertion `%s` failed\n", file, line, func, what);
    fflush(stderr);
    abort();
}
