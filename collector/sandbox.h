/* sandbox: what a collector lets a job run, and under which limits
 * (docs/security.md).
 *
 *  - programs: a command job's program must be on the allowlist
 *    (`allow-programs`; "*" allows any). Programs and entries are compared as
 *    canonical paths (realpath): an entry with a '/' is that file; a bare name
 *    is the program of that name on the collector's PATH, and only that one
 *    (not a file of that name elsewhere, nor a link named so). The job then
 *    runs the canonical path that was checked, never a name looked up again.
 *    Kernel + problem jobs run the collector's own wrapper, always allowed.
 *  - environment: only the variables named in `keep-env` pass to the
 *    profiler and the program ("LC_*" is a prefix; "*" keeps everything).
 *  - limits: CPU seconds, file size, processes and address space per process
 *    (setrlimit), on top of the pass timeout and output cap.
 *  - user: a collector started as root runs jobs as `run-as`, and refuses to
 *    start without it (run-as root accepts running them as root).
 * Built once from the configuration; applied to every step a pass runs. */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "collector.h"
#include "pf_error.h"
#include "proc_run.h"

typedef struct sandbox_t sandbox_t;

/* NULL with `err` when a list is malformed or the run-as user is unknown. */
sandbox_t *sandbox_new(const collector_config_t *config, pf_error_t *err);
void sandbox_destroy(sandbox_t **self_p);

/* Whether a command job may run `program` (its argv[0]; a relative path is
 * taken from `cwd`, the job's folder, or the collector's when NULL); `why`
 * says why not. When allowed, `run` gets what to execute: the canonical path
 * that was checked (with "*": `program` as given). */
bool sandbox_allows(const sandbox_t *self, const char *program, const char *cwd, char *run, size_t run_cap,
                    char *why, size_t cap);

/* Whether run-as was set: a root collector must not start without it. */
bool sandbox_user_chosen(const sandbox_t *self);

/* Hands a folder the collector made for a job to the run-as user, so the
 * profiler can write its output there; a no-op when jobs run as this user. */
void sandbox_own(const sandbox_t *self, const char *path);

/* Sets spec's environment filter, limits and user. */
void sandbox_apply(const sandbox_t *self, proc_spec_t *spec);

/* One line for the start-up log: what is allowed and limited. */
void sandbox_describe(const sandbox_t *self, char *out, size_t cap);

#endif
