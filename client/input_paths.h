/* input_paths: an input path that is a folder stands for the files in it
 * (unitrace writes one file per process into a folder; an agent passes the
 * folder), for the session (profeed_session_add_path) and so for the
 * command, the Python package and the MCP server alike. */
#ifndef INPUT_PATHS_H
#define INPUT_PATHS_H

#include <stddef.h>

/* At most this many files from one folder: a folder of more is refused with
 * a message, not read in part. */
#define INPUT_PATHS_MAX 4096

/* Expands `in` (count paths) into *out (*out_count paths, owned: free with
 * input_paths_free): a path that is a folder becomes its regular files, sorted
 * by name, without hidden ones and without descending; every other path ("-",
 * a file, a path that does not exist) stays as it is, for the reader to
 * judge. Returns 0, or -1 with a reason in why (a folder that cannot be read,
 * has no file, or would pass INPUT_PATHS_MAX). */
int input_paths_expand(const char *const *in, size_t count, char ***out, size_t *out_count, char *why,
                     size_t why_len);

void input_paths_free(char ***paths, size_t count);

#endif
