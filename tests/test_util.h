/* test_util: helpers shared by the Criterion suites (header only: each suite
 * is its own executable). */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feedback.h"

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

/* Removes the scratch folder `dir` and everything in it (links are removed,
 * not followed). Fails the test when the folder is missing or a file cannot
 * be removed: a suite that leaves files behind says so. */
static inline void test_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4400];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        cr_assert(n > 0 && (size_t) n < sizeof path, "%s/%s: path too long", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            test_rm_tree(path);
        else
            cr_expect_eq(unlink(path), 0, "%s", path);
    }
    closedir(d);
    cr_expect_eq(rmdir(dir), 0, "%s", dir);
}

/* The readings a kernel's close call counted: those that kept its verdict
 * and those of each other one (each reading counted once: equals close_of). */
static inline unsigned test_close_readings(const fb_kernel_t *k)
{
    unsigned n = k->close_same;
    for (size_t i = 0; i < k->close_count; i++)
        n += k->close[i].readings;
    return n;
}

#endif
