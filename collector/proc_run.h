/* proc_run: run one profiler command, safely, and keep what it printed.
 *
 * The command runs through fork + execve (never a shell, so no argument is
 * ever interpreted), in its own process group, with a time limit: on timeout
 * or cancellation the whole group gets SIGTERM, then SIGKILL after a grace
 * period, so programs the profiler started die with it. Standard output is
 * kept in memory up to `max_output` bytes (a run that prints more is stopped
 * and marked truncated); the last bytes of standard error are kept for the
 * pass's stderr_tail. */
#ifndef PROC_RUN_H
#define PROC_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "pf_error.h"

#define PROC_STDERR_TAIL 4096

/* Resource limits of the command and everything it starts (setrlimit in the
 * child). 0 leaves a limit as it is. */
typedef struct {
    rlim_t cpu_s;        /* CPU seconds per process: SIGXCPU, then SIGKILL */
    rlim_t file_bytes;   /* largest file a process may write: SIGXFSZ */
    rlim_t procs;        /* processes of the user at once (root is exempt) */
    rlim_t memory_bytes; /* address space per process */
} proc_limits_t;

/* Another user to run as (a collector started as root drops to it). */
typedef struct {
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int n_groups;
} proc_user_t;

typedef struct {
    char *const *argv;  /* argv[0]: a path, or a name looked up on PATH */
    const char *cwd;    /* run there; NULL = the caller's directory */
    int timeout_ms;     /* > 0 */
    size_t max_output;  /* stdout bytes kept before the run is stopped */
    /* When set, stdout goes to this file (created or emptied) instead of
     * memory: a profiler's report of hundreds of MB (ncu --import --page raw)
     * is then bounded by the file size limit, not by max_output (issue 20). */
    const char *stdout_path;
    int cancel_fd;      /* readable = stop now; -1 for none */
    char *const *env;   /* "KEY=VALUE" entries set on top of this process's environment
                           (NULL-terminated), or NULL */
    char *const *keep_env; /* NULL: this process's whole environment passes on; else only the
                              variables named here ("LC_*": a prefix), NULL-terminated */
    const proc_limits_t *limits; /* NULL: none */
    const proc_user_t *user;     /* NULL: this process's user */
} proc_spec_t;

typedef struct {
    int exit_status;        /* the exit code, or 128 + signal number */
    bool timed_out, cancelled, truncated;
    char *output;           /* stdout, malloc'd (caller frees), NUL-terminated */
    size_t output_len;
    char stderr_tail[PROC_STDERR_TAIL + 1];
    int64_t duration_ms;
    const char *limit_hit;  /* "its CPU time limit", "its file size limit", or NULL */
} proc_result_t;

/* Resolves `name` on PATH (or checks it when it contains a '/'); returns
 * false when there is no executable file of that name. */
bool proc_find(const char *name, char *path, size_t cap);

/* Runs the command. PF_OK when it ran (whatever its exit status: see
 * `result`); PF_ENOTFOUND / PF_EIO with `err` when it could not start (the
 * message names the program and the reason). Free result->output. */
pf_status_t proc_run(const proc_spec_t *spec, proc_result_t *result, pf_error_t *err);

#endif
