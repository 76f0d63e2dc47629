/* file_read: a whole file into memory, bounded. The one reader every process
 * uses for inputs it wants whole (a capture, a config file, a kernel source,
 * a pass's output files, /proc/cpuinfo).
 *
 * The contents come back in a new buffer (*data, the caller's to free) with a
 * NUL after the last byte, so text parsers may read it as a string; *len
 * counts the bytes without it (a file may hold NULs: check before treating it
 * as one string). A file over `max` bytes is refused, PF_ETOOBIG, before more
 * than max + 1 bytes are held. A missing file is PF_ENOTFOUND, other failures
 * to open or read PF_EIO; messages name the input: `what` ("config file")
 * and the path, as in "cannot read config file /x.cfg: No such file or
 * directory". */
#ifndef FILE_READ_H
#define FILE_READ_H

#include <stddef.h>

#include "pf_error.h"

/* Reads the file at `path` (a path only: "-" is a file named "-"). */
pf_status_t file_read(const char *path, const char *what, size_t max, char **data, size_t *len,
                      pf_error_t *err);

/* Reads a command-line input: `path`, or stdin (named "<stdin>") for "-". */
pf_status_t file_read_input(const char *path, const char *what, size_t max, char **data, size_t *len,
                            pf_error_t *err);

/* Reads what is left of the open `fd` (stdin, say), named `name` in
 * messages; the caller closes it. */
pf_status_t file_read_fd(int fd, const char *name, const char *what, size_t max, char **data, size_t *len,
                         pf_error_t *err);

#endif
