/* file_read: see file_read.h.
 *
 * A regular file of known size is read into one buffer of that size plus
 * one byte, in one read, rather than a buffer grown and copied at each
 * doubling (the collector read a 512 KB report in 200 us that way); the
 * extra byte shows a file that grew while read. Files that report no size
 * (pipes, /proc) start at 64 KiB and double. */
#include "file_read.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_READ_FIRST ((size_t) 64 * 1024)

/* "config file /x.cfg" or "/x.cfg". */
#define S_NAME_FMT "%s%s%s"
#define S_NAME(what, name) (what) ? (what) : "", (what) ? " " : "", (name)

pf_status_t file_read_fd(int fd, const char *name, const char *what, size_t max, char **data, size_t *len,
                         pf_error_t *err)
{
    assert(fd >= 0 && name && data && len && max < SIZE_MAX - 1);
    *data = NULL;
    *len = 0;
    struct stat st;
    size_t cap = FILE_READ_FIRST;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        if ((uint64_t) st.st_size > max)
            return pf_error_set(err, PF_ETOOBIG, S_NAME_FMT ": more than %zu bytes, the limit", S_NAME(what, name),
                                max);
        cap = (size_t) st.st_size + 1; /* + 1: a read that fills it means the file grew */
    }
    if (cap > max + 1)
        cap = max + 1;
    char *buf = malloc(cap + 1); /* + 1: the NUL */
    size_t have = 0;
    for (;;) {
        if (!buf)
            return pf_error_set(err, PF_ENOMEM, "out of memory reading " S_NAME_FMT, S_NAME(what, name));
        if (have == cap) {
            if (have > max) {
                free(buf);
                return pf_error_set(err, PF_ETOOBIG, S_NAME_FMT ": more than %zu bytes, the limit",
                                    S_NAME(what, name), max);
            }
            size_t grown_cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
            char *grown = realloc(buf, grown_cap + 1);
            if (!grown)
                free(buf);
            buf = grown;
            cap = grown_cap;
            continue;
        }
        ssize_t got = read(fd, buf + have, cap - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int saved = errno;
            free(buf);
            return pf_error_set(err, PF_EIO, "cannot read " S_NAME_FMT ": %s", S_NAME(what, name), strerror(saved));
        }
        if (got == 0)
            break;
        have += (size_t) got;
    }
    if (have > max) {
        free(buf);
        return pf_error_set(err, PF_ETOOBIG, S_NAME_FMT ": more than %zu bytes, the limit", S_NAME(what, name), max);
    }
    buf[have] = '\0';
    *data = buf;
    *len = have;
    return PF_OK;
}

pf_status_t file_read(const char *path, const char *what, size_t max, char **data, size_t *len, pf_error_t *err)
{
    assert(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int saved = errno;
        *data = NULL;
        *len = 0;
        return pf_error_set(err, saved == ENOENT ? PF_ENOTFOUND : PF_EIO, "cannot read " S_NAME_FMT ": %s",
                            S_NAME(what, path), strerror(saved));
    }
    pf_status_t rc = file_read_fd(fd, path, what, max, data, len, err);
    close(fd);
    return rc;
}

pf_status_t file_read_input(const char *path, const char *what, size_t max, char **data, size_t *len,
                            pf_error_t *err)
{
    assert(path);
    if (strcmp(path, "-") == 0)
        return file_read_fd(STDIN_FILENO, "<stdin>", what, max, data, len, err);
    return file_read(path, what, max, data, len, err);
}
