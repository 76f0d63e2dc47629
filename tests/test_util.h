/* test_util: helpers shared by the Criterion suites (header only: each suite
 * is its own executable). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file at `path` (a fixture), NUL-terminated; *len_p is its size.
 * Fails the test when it cannot be read. Caller frees. */
static inline char *test_read_file(const char *path, size_t *len_p)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open fixture %s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    cr_assert_geq(len, 0);
    rewind(f);
    char *data = malloc((size_t) len + 1);
    cr_assert_not_null(data);
    cr_assert_eq(fread(data, 1, (size_t) len, f), (size_t) len, "short read of %s", path);
    data[len] = '\0';
    fclose(f);
    *len_p = (size_t) len;
    return data;
}

#endif
