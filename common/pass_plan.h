/* pass_plan: what each profiler pass of a job runs.
 *
 * For a job's language and profiler this builds the argument vectors the
 * collector executes (fork + execve, never a shell) and names the metrics each
 * pass asks for, which the analyzer compares with what came back. What a
 * profiler's passes are is its own: the profiler table (profiler.h) names
 * each profiler's builder, in the profiler's folder
 * (analyzer/<name>/<name>_plan.c, which says what its named plans hold and
 * builds them through pass_plan_build.h). Here: the plan and its passes,
 * choosing the builder, and judging how a step went. A plan that asks for
 * metrics by name is the single source of that list:
 * `profeed-collector --print-metrics PLAN` prints it (bench/ncu_plans.sh). */
#ifndef PASS_PLAN_H
#define PASS_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"
#include "profeed.pb-c.h"

#define PASS_PLAN_MAX_STEPS 3
#define PASS_PLAN_KEY_LEN 32

/* One program run within a pass. */
typedef struct {
    char **argv;              /* NULL-terminated; argv[0] the profiler's path (or "sudo") */
    const char *stdout_name;  /* keep standard output as this file of the pass; NULL: discard it */
    const char *log_path;     /* the profiler's own log when it is outside the pass folder: sent
                                 as "<key>.log" if the step fails, so the error reaches the agent */
    bool profiles;            /* runs the job's program (needs counters, sudo, the long timeout) */
} pass_step_t;

typedef struct {
    char key[PASS_PLAN_KEY_LEN];  /* "ncu.000": the PassOutput's pass_key and folder name */
    const char *name;             /* "core", "ComputeBasic", "custom" */
    char *dir;                    /* <job dir>/<key>: every regular file there is the pass's output */
    pass_step_t steps[PASS_PLAN_MAX_STEPS];
    size_t step_count;
    char **metrics;               /* asked for by name (ncu --metrics), for the missing-column check */
    size_t metric_count;
} pass_plan_pass_t;

typedef struct {
    Profeed__Language language;
    Profeed__Profiler profiler;              /* ncu, unitrace or vtune (not unspecified) */
    const char *profiler_path;               /* absolute path of the profiler */
    const char *dir;                         /* the job's folder; passes write below it */
    char *const *command;                    /* the program and its arguments */
    size_t command_len;
    Profeed__PassSpec *const *passes;        /* the request's pass plan: one spec without args
                                                naming a plan, or custom passes (extra args) */
    size_t n_passes;
    const Profeed__ProfileFilter *filter;    /* or NULL */
    bool sudo;                               /* prefix profiling steps with `sudo -n -E` (opt-in) */
    bool source;                             /* ncu: one more pass, the source page (JobRequest.source) */
} pass_plan_input_t;

typedef struct pass_plan_t pass_plan_t;

/* Builds the plan. PF_EBADINPUT (in `err`) for a plan name that does not
 * exist for the profiler, a profiler that cannot run the language, or a
 * program name starting with '-' (it would be read as a profiler option). */
pass_plan_t *pass_plan_new(const pass_plan_input_t *input, pf_error_t *err);
void pass_plan_destroy(pass_plan_t **self_p);

size_t pass_plan_count(const pass_plan_t *self);
const pass_plan_pass_t *pass_plan_pass(const pass_plan_t *self, size_t index);

/* "KEY=VALUE" entries to set in the profiler's environment (LC_ALL=C for
 * ncu, so numbers carry no locale grouping), NULL-terminated. */
char *const *pass_plan_env(const pass_plan_t *self);

/* The plan's name ("core" when the job named none). */
const char *pass_plan_name(const pass_plan_t *self);

/* The metrics a named plan of `profiler` asks for by name (ncu's core),
 * NULL-terminated, or NULL when the plan does not ask by name (ncu's sol and
 * full), does not exist, or the profiler has no such plans. */
const char *const *pass_plan_metrics(Profeed__Profiler profiler, const char *plan);

/* PF_OK when `name` is a named plan of `profiler`; else PF_EBADINPUT with
 * the message pass_plan_new() gives (the plans there are). For a collector
 * that builds no plan (replay), so a wrong name is refused the same way. */
pf_status_t pass_plan_check_name(Profeed__Profiler profiler, const char *name, pf_error_t *err);

/* The named plans of a profiler, comma-separated, for messages and --help. */
const char *pass_plan_names(Profeed__Profiler profiler);

/* How a finished step went, judged from its exit and what it printed. */
typedef enum {
    PASS_RESULT_OK,          /* exit 0 */
    PASS_RESULT_TRANSIENT,   /* timed out, or died without a word: worth another attempt */
    PASS_RESULT_PERMISSION,  /* no access to the GPU's performance counters: retrying cannot help */
    PASS_RESULT_FAILED,      /* the profiler or the program said why it failed (==ERROR==) */
} pass_result_t;

pass_result_t pass_plan_judge(int exit_status, bool timed_out, const char *log, size_t log_len,
                              const char *stderr_tail);

/* True when `text` holds ncu's counter-permission failure (ERR_NVGPUCTRPERM). */
bool pass_plan_is_permission_error(const char *text, size_t len);

/* What to do about that failure, in words an operator can follow. */
const char *pass_plan_permission_advice(void);

const char *pass_result_name(pass_result_t result);

#endif
