#define _DEFAULT_SOURCE /* getgrouplist() */
#include "sandbox.h"

#include <assert.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_log.h"

struct sandbox_t {
    char **allow;     /* resolved paths and bare names; NULL: any program */
    char **keep_env;  /* NULL: the whole environment */
    proc_limits_t limits;
    proc_user_t user;
    bool drop;        /* run as `user` */
    bool chosen;      /* run-as was set (to another user, to this one, or "root") */
    char run_as[64];
};

static void s_free_list(char ***list_p)
{
    char **list = *list_p;
    for (size_t i = 0; list && list[i]; i++)
        free(list[i]);
    free(list);
    *list_p = NULL;
}

/* Splits "a, b,c" into a NULL-terminated list; "*" alone gives NULL (all). */
static pf_status_t s_split(const char *text, const char *what, char ***out, pf_error_t *err)
{
    *out = NULL;
    if (!text || strcmp(text, "*") == 0)
        return PF_OK;
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    char **list = calloc(n + 1, sizeof *list);
    if (!list)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    size_t k = 0;
    for (const char *p = text; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        size_t len = (size_t) (end - p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len > 0) {
            if (len == 1 && *p == '*') {
                s_free_list(&list);
                return pf_error_set(err, PF_EBADINPUT, "%s: \"*\" means all and goes alone", what);
            }
            list[k] = strndup(p, len);
            if (!list[k++]) {
                s_free_list(&list);
                return pf_error_set(err, PF_ENOMEM, "out of memory");
            }
        }
        p = end;
    }
    *out = list;
    return PF_OK;
}

sandbox_t *sandbox_new(const collector_config_t *config, pf_error_t *err)
{
    sandbox_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    if (s_split(config->allow_programs, "allow-programs", &self->allow, err) != PF_OK ||
        s_split(config->keep_env, "keep-env", &self->keep_env, err) != PF_OK) {
        sandbox_destroy(&self);
        return NULL;
    }
    /* Program entries with a '/' are compared as resolved paths. */
    for (size_t i = 0; self->allow && self->allow[i]; i++) {
        if (strchr(self->allow[i], '/')) {
            char resolved[4096];
            if (realpath(self->allow[i], resolved)) {
                char *copy = strdup(resolved);
                if (copy) {
                    free(self->allow[i]);
                    self->allow[i] = copy;
                }
            }
        }
    }
    self->limits.cpu_s = (rlim_t) config->cpu_limit_s;
    self->limits.file_bytes = (rlim_t) config->file_limit_mb * 1024 * 1024;
    self->limits.procs = (rlim_t) config->max_procs;
    self->limits.memory_bytes = (rlim_t) config->memory_limit_mb * 1024 * 1024;
    const char *run_as = config->run_as && *config->run_as ? config->run_as : NULL;
    if (run_as && strcmp(run_as, COLLECTOR_RUN_AS_SELF) == 0) {
        struct passwd *me = getpwuid(geteuid());
        snprintf(self->run_as, sizeof self->run_as, "%s", me ? me->pw_name : "this user");
        self->chosen = true;
        run_as = NULL;
    }
    if (run_as) {
        struct passwd *pw = getpwnam(run_as);
        if (!pw) {
            pf_error_set(err, PF_EBADINPUT, "run-as %s: no such user", run_as);
            sandbox_destroy(&self);
            return NULL;
        }
        snprintf(self->run_as, sizeof self->run_as, "%s", run_as);
        self->chosen = true;
        if (pw->pw_uid != geteuid()) {
            if (geteuid() != 0) {
                pf_error_set(err, PF_EBADINPUT, "run-as %s: only a collector started as root can change user",
                             run_as);
                sandbox_destroy(&self);
                return NULL;
            }
            self->user.uid = pw->pw_uid;
            self->user.gid = pw->pw_gid;
            int n = (int) (sizeof self->user.groups / sizeof self->user.groups[0]);
            if (getgrouplist(pw->pw_name, pw->pw_gid, self->user.groups, &n) < 0)
                n = (int) (sizeof self->user.groups / sizeof self->user.groups[0]); /* the first 64 */
            self->user.n_groups = n;
            self->drop = true;
        }
    }
    return self;
}

void sandbox_destroy(sandbox_t **self_p)
{
    assert(self_p);
    sandbox_t *self = *self_p;
    if (!self)
        return;
    s_free_list(&self->allow);
    s_free_list(&self->keep_env);
    free(self);
    *self_p = NULL;
}

/* The canonical path of the executable `program` names: a name looked up on
 * the collector's PATH, a relative path taken from `cwd`. False when there is
 * none (or the path does not fit). */
static bool s_canonical(const char *program, const char *cwd, char *out, size_t cap)
{
    char path[4096];
    if (strchr(program, '/') && program[0] != '/' && cwd && *cwd) {
        int n = snprintf(path, sizeof path, "%s/%s", cwd, program);
        if (n < 0 || (size_t) n >= sizeof path)
            return false;
        program = path;
    }
    char found[4096];
    char resolved[PATH_MAX];
    if (!proc_find(program, found, sizeof found) || !realpath(found, resolved))
        return false;
    int n = snprintf(out, cap, "%s", resolved);
    return n > 0 && (size_t) n < cap;
}

bool sandbox_allows(const sandbox_t *self, const char *program, const char *cwd, char *run, size_t run_cap,
                    char *why, size_t cap)
{
    if (!program || !*program) {
        snprintf(why, cap, "the job names no program");
        return false;
    }
    if (!self->allow) {
        int n = snprintf(run, run_cap, "%s", program);
        if (n < 0 || (size_t) n >= run_cap) {
            snprintf(why, cap, "the program's name is too long");
            return false;
        }
        return true;
    }
    char resolved[4096];
    if (!s_canonical(program, cwd, resolved, sizeof resolved)) {
        snprintf(why, cap, "%s: no such executable on the collector", program);
        return false;
    }
    for (size_t i = 0; self->allow[i]; i++) {
        const char *entry = self->allow[i];
        /* A path entry was made canonical at start; a bare name is looked up
         * on PATH now (a program installed since counts). */
        char named[4096];
        const char *allowed = entry;
        if (!strchr(entry, '/'))
            allowed = s_canonical(entry, NULL, named, sizeof named) ? named : NULL;
        if (allowed && strcmp(allowed, resolved) == 0) {
            int n = snprintf(run, run_cap, "%s", resolved);
            if (n < 0 || (size_t) n >= run_cap)
                break;
            return true;
        }
    }
    snprintf(why, cap, "%s (%s) is not in this collector's allow-programs", program, resolved);
    return false;
}

void sandbox_apply(const sandbox_t *self, proc_spec_t *spec)
{
    spec->keep_env = self->keep_env;
    spec->limits = &self->limits;
    spec->user = self->drop ? &self->user : NULL;
}

void sandbox_own(const sandbox_t *self, const char *path)
{
    if (self->drop && chown(path, self->user.uid, self->user.gid) != 0)
        pf_log_warn("collector", "cannot hand %s to %s: %s", path, self->run_as, strerror(errno));
}

bool sandbox_user_chosen(const sandbox_t *self)
{
    return self->chosen;
}

void sandbox_describe(const sandbox_t *self, char *out, size_t cap)
{
    size_t n = 0;
    if (!self->allow)
        n += (size_t) snprintf(out + n, cap - n, "any program (allow-programs *)");
    else
        for (size_t i = 0; self->allow[i] && n < cap; i++)
            n += (size_t) snprintf(out + n, cap - n, "%s%s", i ? ", " : "programs ", self->allow[i]);
    if (n < cap)
        n += (size_t) snprintf(out + n, cap - n, "; environment %s", self->keep_env ? "filtered" : "passed whole");
    if (n < cap)
        n += (size_t) snprintf(out + n, cap - n, "; limits cpu %llus, file %lluMB, procs %llu, memory %lluMB (0: none)",
                               (unsigned long long) self->limits.cpu_s,
                               (unsigned long long) (self->limits.file_bytes >> 20),
                               (unsigned long long) self->limits.procs,
                               (unsigned long long) (self->limits.memory_bytes >> 20));
    if (n < cap)
        snprintf(out + n, cap - n, "; user %s", self->chosen ? self->run_as : "this one");
}
