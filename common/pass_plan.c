/* pass_plan: a plan's passes and steps, built by the profiler's builder (see
 * pass_plan.h and pass_plan_build.h), and the verdict on a finished step. */
#include "pass_plan.h"
#include "pass_plan_build.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"

#define MAX_ARGS 4096 /* bounds one argv: command (1024) + pass args (256) + the plan's own */

struct pass_plan_t {
    pass_plan_pass_t *passes;
    size_t count;
    pass_strvec_t env;
    pass_strvec_t owned;   /* strings made here (paths, joined lists), freed with the plan */
    const char *name;
};

static bool s_push(pass_strvec_t *vec, char *s)
{
    if (!s || vec->n + 2 > MAX_ARGS)
        return false;
    if (vec->n + 2 > vec->cap) {
        size_t cap = vec->cap ? vec->cap * 2 : 32;
        char **v = realloc(vec->v, cap * sizeof *v);
        if (!v)
            return false;
        vec->v = v;
        vec->cap = cap;
    }
    vec->v[vec->n++] = s;
    vec->v[vec->n] = NULL;
    return true;
}

/* A formatted string the plan owns; NULL when out of memory. */
char *pass_plan_own(pass_plan_t *plan, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t) n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t) n + 1, fmt, ap);
    va_end(ap);
    if (!s_push(&plan->owned, s)) {
        free(s);
        return NULL;
    }
    return s;
}

void pass_argv_add(pass_argv_t *b, const char *s)
{
    if (b->ok && !s_push(&b->argv, (char *) s))
        b->ok = false;
}

/* Adds a pass of the input's profiler: its key is the profiler's name from
 * the table and the pass's index ("unitrace.001"), as profiler_by_pass_key()
 * reads it back; its folder is that key below the job's. */
pass_plan_pass_t *pass_plan_add_pass(pass_plan_t *plan, const pass_plan_input_t *in, const char *name)
{
    pass_plan_pass_t *grown = realloc(plan->passes, (plan->count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    plan->passes = grown;
    pass_plan_pass_t *pass = &plan->passes[plan->count];
    memset(pass, 0, sizeof *pass);
    snprintf(pass->key, sizeof pass->key, "%s.%03zu", profiler_name_or(in->profiler, "unknown"), plan->count);
    pass->name = name;
    pass->dir = pass_plan_own(plan, "%s/%s", in->dir, pass->key);
    if (!pass->dir)
        return NULL;
    plan->count++;
    return pass;
}

bool pass_plan_add_step(pass_plan_pass_t *pass, pass_argv_t *b, const char *stdout_name, const char *log_path,
                        bool profiles)
{
    assert(pass->step_count < PASS_PLAN_MAX_STEPS);
    if (!b->ok) {
        free(b->argv.v);
        return false;
    }
    pass_step_t *step = &pass->steps[pass->step_count++];
    step->argv = b->argv.v;
    step->stdout_name = stdout_name;
    step->log_path = log_path;
    step->profiles = profiles;
    return true;
}

/* Behind `sudo -n -E` when the operator opted in: -n so a sudo that wants a
 * password fails at once instead of hanging the pass, -E so LC_ALL and the
 * job's environment survive. */
void pass_argv_profiler(pass_argv_t *b, const pass_plan_input_t *in, bool profiles)
{
    if (in->sudo && profiles) {
        pass_argv_add(b, "sudo");
        pass_argv_add(b, "-n");
        pass_argv_add(b, "-E");
    }
    pass_argv_add(b, in->profiler_path);
}

void pass_argv_command(pass_argv_t *b, const pass_plan_input_t *in)
{
    for (size_t i = 0; i < in->command_len; i++)
        pass_argv_add(b, in->command[i]);
}

bool pass_plan_add_metrics(pass_plan_t *plan, pass_plan_pass_t *pass, const char *list)
{
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t) (comma - p) : strlen(p);
        if (len > 0) {
            char *name = pass_plan_own(plan, "%.*s", (int) len, p);
            char **grown = name ? realloc(pass->metrics, (pass->metric_count + 1) * sizeof *grown) : NULL;
            if (!grown)
                return false;
            pass->metrics = grown;
            pass->metrics[pass->metric_count++] = name;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    return true;
}

char *pass_plan_join(pass_plan_t *plan, const char *const *items)
{
    size_t len = 1;
    for (size_t i = 0; items[i]; i++)
        len += strlen(items[i]) + 1;
    char *joined = malloc(len);
    if (!joined || !s_push(&plan->owned, joined)) {
        free(joined);
        return NULL;
    }
    size_t used = 0;
    joined[0] = '\0';
    for (size_t i = 0; items[i]; i++)
        used += (size_t) snprintf(joined + used, len - used, "%s%s", i ? "," : "", items[i]);
    return joined;
}

void pass_plan_set_name(pass_plan_t *plan, const char *name)
{
    plan->name = name;
}

bool pass_plan_add_env(pass_plan_t *plan, const char *entry)
{
    return s_push(&plan->env, (char *) entry);
}

const char *const *pass_plan_metrics(Profeed__Profiler profiler, const char *plan)
{
    const profiler_t *p = profiler_by_id(profiler);
    return p && p->plan_metrics && plan ? p->plan_metrics(plan) : NULL;
}

pf_status_t pass_plan_check_name(Profeed__Profiler profiler, const char *name, pf_error_t *err)
{
    const profiler_t *p = profiler_by_id(profiler);
    for (size_t i = 0; p && name && p->plans[i]; i++) {
        if (strcmp(p->plans[i], name) == 0)
            return PF_OK;
    }
    return pf_error_set(err, PF_EBADINPUT, "pass plan \"%.64s\" does not exist for %s (plans: %s)",
                        name ? name : "", p ? p->name : "this profiler", pass_plan_names(profiler));
}

const char *pass_plan_names(Profeed__Profiler profiler)
{
    const profiler_t *p = profiler_by_id(profiler);
    return p ? p->plans_text : "none";
}

/* One spec without args names a plan; otherwise the specs are custom passes
 * whose args follow the profiler's fixed options. The profiler table
 * (profiler.h) says which builder a profiler's plans come from. */
static bool s_build(pass_plan_t *plan, const pass_plan_input_t *in, pf_error_t *err)
{
    bool named = in->n_passes == 0 || (in->n_passes == 1 && in->passes[0]->n_args == 0);
    const char *name = in->n_passes ? in->passes[0]->name : NULL;
    const profiler_t *profiler = profiler_by_id(in->profiler);
    if (!profiler) {
        pf_error_set(err, PF_EBADINPUT, "no pass plan for profiler %s", profiler_name_or(in->profiler, "unspecified"));
        return false;
    }
    return profiler->build_plan(plan, in, named, name, err);
}

/* The source pass (JobRequest.source), from the profiler whose table entry
 * has one; any other profiler refuses it, naming the one that has. */
static bool s_build_source(pass_plan_t *plan, const pass_plan_input_t *in, pf_error_t *err)
{
    const profiler_t *profiler = profiler_by_id(in->profiler);
    if (profiler && profiler->build_source)
        return profiler->build_source(plan, in);
    const profiler_t *has = NULL;
    for (size_t i = 0; !has && i < profiler_count(); i++)
        has = profiler_at(i)->build_source ? profiler_at(i) : NULL;
    if (has)
        pf_error_set(err, PF_EBADINPUT, "the source pass is %s's (%s); %s has none", has->display, has->name,
                     profiler_name_or(in->profiler, "unspecified"));
    else
        pf_error_set(err, PF_EBADINPUT, "no profiler has a source pass");
    return false;
}

pass_plan_t *pass_plan_new(const pass_plan_input_t *input, pf_error_t *err)
{
    assert(input && input->profiler_path && input->dir && input->command && input->command_len >= 1);
    if (input->command[0][0] == '-') {
        pf_error_set(err, PF_EBADINPUT, "program \"%.64s\": a name starting with '-' would be read as a %s option",
                     input->command[0], profiler_name_or(input->profiler, "unspecified"));
        return NULL;
    }
    pass_plan_t *plan = calloc(1, sizeof *plan);
    if (!plan) {
        pf_error_set(err, PF_ENOMEM, "out of memory building the pass plan");
        return NULL;
    }
    pf_error_clear(err);
    bool ok = s_build(plan, input, err);
    if (ok && input->source)
        ok = s_build_source(plan, input, err);
    if (!ok) {
        if (err && err->code == PF_OK)
            pf_error_set(err, PF_ENOMEM, "out of memory building the pass plan");
        pass_plan_destroy(&plan);
    }
    return plan;
}

void pass_plan_destroy(pass_plan_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    pass_plan_t *self = *self_p;
    for (size_t i = 0; i < self->count; i++) {
        for (size_t s = 0; s < self->passes[i].step_count; s++)
            free(self->passes[i].steps[s].argv);
        free(self->passes[i].metrics);
    }
    free(self->passes);
    for (size_t i = 0; i < self->owned.n; i++)
        free(self->owned.v[i]);
    free(self->owned.v);
    free(self->env.v);
    free(self);
    *self_p = NULL;
}

size_t pass_plan_count(const pass_plan_t *self)
{
    return self->count;
}

const pass_plan_pass_t *pass_plan_pass(const pass_plan_t *self, size_t index)
{
    assert(index < self->count);
    return &self->passes[index];
}

char *const *pass_plan_env(const pass_plan_t *self)
{
    static char *const none[] = {NULL};
    return self->env.v ? self->env.v : none;
}

const char *pass_plan_name(const pass_plan_t *self)
{
    return self->name;
}

/* Bounded substring search over bytes that need not end in NUL. */
/* Where `needle` first occurs in `text`, or NULL. Analyzers run this over
 * whole captures (megabytes): memchr finds the candidates, so needles should
 * start with a byte that is rare in CSV text. */
static const char *s_find(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (!text || n == 0 || len < n)
        return NULL;
    const char *end = text + len - n + 1; /* last possible start + 1 */
    for (const char *p = text; p < end; p++) {
        p = memchr(p, needle[0], (size_t) (end - p));
        if (!p)
            return NULL;
        if (memcmp(p, needle, n) == 0)
            return p;
    }
    return NULL;
}

static bool s_contains(const char *text, size_t len, const char *needle)
{
    return s_find(text, len, needle) != NULL;
}

bool pass_plan_is_permission_error(const char *text, size_t len)
{
    /* ncu: "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to
     * access NVIDIA GPU Performance Counters on the target device 0." The
     * search starts at the capitals and looks back for the rest. */
    if (s_contains(text, len, "ERR_NVGPUCTRPERM"))
        return true;
    static const char before[] = "does not have permission to access ";
    const size_t before_len = sizeof before - 1;
    const char *end = text ? text + len : NULL;
    for (const char *p = text; p && p < end;) {
        const char *hit = s_find(p, (size_t) (end - p), "NVIDIA GPU Performance Counters");
        if (!hit)
            return false;
        if ((size_t) (hit - text) >= before_len && memcmp(hit - before_len, before, before_len) == 0)
            return true;
        p = hit + 1;
    }
    return false;
}

const char *pass_plan_permission_advice(void)
{
    return "the profiler may not read this GPU's performance counters (ERR_NVGPUCTRPERM): on the collector's host, "
           "allow profiling for all users with the line `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a "
           "file under /etc/modprobe.d/ (e.g. /etc/modprobe.d/nvidia-profiling.conf), then reload the nvidia kernel "
           "module or reboot (check: `grep RmProfilingAdminOnly /proc/driver/nvidia/params` shows 0); in a container, "
           "run it with --cap-add=SYS_ADMIN; or let the collector run the profiler through passwordless sudo with "
           "PROFEED_NCU_SUDO=1 (or --ncu-sudo)";
}

pass_result_t pass_plan_judge(int exit_status, bool timed_out, const char *log, size_t log_len,
                              const char *stderr_tail)
{
    size_t tail_len = stderr_tail ? strlen(stderr_tail) : 0;
    if (pass_plan_is_permission_error(log, log_len) || pass_plan_is_permission_error(stderr_tail, tail_len))
        return PASS_RESULT_PERMISSION;
    if (timed_out)
        return PASS_RESULT_TRANSIENT;
    if (exit_status == 0)
        return PASS_RESULT_OK;
    /* A failure the profiler explained (the program crashed, a metric does not
     * exist, no such program) happens again on a retry; one without a word (a
     * signal, a crashed profiler) may not. */
    if (s_contains(log, log_len, "==ERROR==") || s_contains(stderr_tail, tail_len, "==ERROR=="))
        return PASS_RESULT_FAILED;
    return PASS_RESULT_TRANSIENT;
}

const char *pass_result_name(pass_result_t result)
{
    switch (result) {
    case PASS_RESULT_OK: return "ok";
    case PASS_RESULT_TRANSIENT: return "transient failure";
    case PASS_RESULT_PERMISSION: return "no permission for the performance counters";
    case PASS_RESULT_FAILED: return "failed";
    }
    return "unknown";
}
