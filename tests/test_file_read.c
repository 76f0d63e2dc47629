/* file_read: the one bounded whole-file reader (common/file_read.h). */
#include "file_read.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes `len` bytes of `bytes` to a new temporary file; returns its path (caller frees and unlinks). */
static char *s_temp_file(const char *bytes, size_t len)
{
    char *path = strdup("/tmp/pf_file_read.XXXXXX");
    cr_assert_not_null(path);
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bytes, len), (ssize_t) len);
    close(fd);
    return path;
}

Test(file_read, reads_a_file_whole_with_a_nul_after_it_and_keeps_nuls_inside)
{
    char *path = s_temp_file("ab\0cd", 5);
    char *data = NULL;
    size_t len = 0;
    pf_error_t err;
    cr_assert_eq(file_read(path, NULL, 5, &data, &len, &err), PF_OK, "%s", err.msg);
    cr_assert_eq(len, 5);
    cr_assert_eq(memcmp(data, "ab\0cd", 5), 0);
    cr_assert_eq(data[5], '\0');
    free(data);
    unlink(path);
    free(path);
}

Test(file_read, a_file_one_byte_over_the_limit_is_refused_naming_it_and_the_limit)
{
    char *path = s_temp_file("123456", 6);
    char *data = (char *) 1;
    size_t len = 7;
    pf_error_t err;
    cr_assert_eq(file_read(path, "kernel source", 5, &data, &len, &err), PF_ETOOBIG);
    cr_assert_null(data);
    cr_assert_eq(len, 0);
    cr_assert_not_null(strstr(err.msg, "kernel source "), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, path), "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "more than 5 bytes"), "%s", err.msg);
    unlink(path);
    free(path);
}

Test(file_read, a_missing_file_is_not_found_and_says_what_it_was)
{
    char *data = NULL;
    size_t len = 0;
    pf_error_t err;
    cr_assert_eq(file_read("/nonexistent/x.cfg", "config file", 100, &data, &len, &err), PF_ENOTFOUND);
    cr_assert_str_eq(err.msg, "cannot read config file /nonexistent/x.cfg: No such file or directory");
    cr_assert_null(data);
}

/* A pipe reports no size: the buffer grows past its first 64 KiB, and the
 * limit still holds without the size known up front. */
Test(file_read, a_pipe_of_unknown_size_is_read_whole_and_bounded)
{
    size_t n = 200 * 1000;
    char *bytes = malloc(n);
    cr_assert_not_null(bytes);
    for (size_t i = 0; i < n; i++)
        bytes[i] = (char) ('a' + i % 26);
    for (int round = 0; round < 2; round++) {
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            close(fds[0]);
            size_t off = 0;
            while (off < n) {
                ssize_t w = write(fds[1], bytes + off, n - off);
                if (w <= 0)
                    _exit(1);
                off += (size_t) w;
            }
            _exit(0);
        }
        close(fds[1]);
        char *data = NULL;
        size_t len = 0;
        pf_error_t err;
        size_t max = round == 0 ? n : n - 1;
        pf_status_t rc = file_read_fd(fds[0], "<pipe>", NULL, max, &data, &len, &err);
        close(fds[0]);
        if (round == 0) {
            cr_assert_eq(rc, PF_OK, "%s", err.msg);
            cr_assert_eq(len, n);
            cr_assert_eq(memcmp(data, bytes, n), 0);
        } else {
            cr_assert_eq(rc, PF_ETOOBIG);
            cr_assert_str_eq(err.msg, "<pipe>: more than 199999 bytes, the limit");
        }
        free(data);
        int status;
        waitpid(pid, &status, 0);
    }
    free(bytes);
}
