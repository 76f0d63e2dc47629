/* pass_plan_build: what a profiler's plan builder builds a plan with.
 *
 * A profiler's builder lives in its own folder (analyzer/<name>/<name>_plan.c:
 * the argv of each of its passes) and the profiler table (profiler.h) names
 * it; pass_plan_new() calls the job's profiler's. The builder adds passes and
 * their steps here; the plan owns every string made through it. Only the
 * builders and pass_plan.c include this header. */
#ifndef PASS_PLAN_BUILD_H
#define PASS_PLAN_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "pass_plan.h"

typedef struct {
    char **v; /* NULL-terminated once it holds anything */
    size_t n, cap;
} pass_strvec_t;

/* One step's argv as it is built: start it as `{.ok = true}`; an add past
 * the argv bound or out of memory sets `ok` false, and pass_plan_add_step()
 * then refuses the step. */
typedef struct {
    pass_strvec_t argv;
    bool ok;
} pass_argv_t;

/* Appends `s` (not copied: a literal, the input's, or pass_plan_own()'s). */
void pass_argv_add(pass_argv_t *b, const char *s);
/* The profiler's path, behind `sudo -n -E` for a step that `profiles` when
 * the operator opted in. */
void pass_argv_profiler(pass_argv_t *b, const pass_plan_input_t *in, bool profiles);
/* The job's program and its arguments. */
void pass_argv_command(pass_argv_t *b, const pass_plan_input_t *in);

/* A formatted string the plan owns; NULL when out of memory. */
char *pass_plan_own(pass_plan_t *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `items` (NULL-terminated) joined by commas, owned by the plan; NULL when out
 * of memory. */
char *pass_plan_join(pass_plan_t *plan, const char *const *items);

/* A new pass named `name` (a literal or the input's): its key is the
 * profiler's name and the pass's index ("unitrace.001"), its folder that key
 * below the job's. NULL when out of memory. */
pass_plan_pass_t *pass_plan_add_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *name);
/* Adds the step `b` built (taking its argv) to `pass`; false, freeing it,
 * when `b` failed. `stdout_name`, `log_path`, `profiles`: pass_step_t's. */
bool pass_plan_add_step(pass_plan_pass_t *pass, pass_argv_t *b, const char *stdout_name, const char *log_path,
                        bool profiles);
/* Adds a comma-separated list of metric names to the pass's asked-for
 * metrics (the missing-column check); false when out of memory. */
bool pass_plan_add_metrics(pass_plan_t *plan, pass_plan_pass_t *pass, const char *list);

/* The plan's name (a literal or the input's), as pass_plan_name() returns it. */
void pass_plan_set_name(pass_plan_t *plan, const char *name);
/* A "KEY=VALUE" literal for the profiler's environment; false when out of memory. */
bool pass_plan_add_env(pass_plan_t *plan, const char *entry);

#endif
