/* setgroups() and RLIMIT_NPROC are not POSIX. */
#define _DEFAULT_SOURCE
#include "proc_run.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Time a process group gets between SIGTERM and SIGKILL to write its files. */
#define GRACE_MS 2000

static int64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool s_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0; /* banned-ok: PATH search, exec follows */
}

bool proc_find(const char *name, char *path, size_t cap)
{
    if (!name || !*name)
        return false;
    if (strchr(name, '/')) {
        int n = snprintf(path, cap, "%s", name);
        return n > 0 && (size_t) n < cap && s_executable(path);
    }
    const char *env = getenv("PATH");
    if (!env)
        env = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = env; *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t) (colon - p) : strlen(p);
        int n = snprintf(path, cap, "%.*s/%s", (int) len, len ? p : ".", name);
        if (n > 0 && (size_t) n < cap && s_executable(path))
            return true;
        if (!colon)
            break;
        p = colon + 1;
    }
    return false;
}

static void s_keep_tail(proc_result_t *r, size_t *tail_len, const char *buf, size_t n)
{
    if (n >= PROC_STDERR_TAIL) {
        memcpy(r->stderr_tail, buf + n - PROC_STDERR_TAIL, PROC_STDERR_TAIL);
        *tail_len = PROC_STDERR_TAIL;
    } else {
        size_t keep = *tail_len + n > PROC_STDERR_TAIL ? PROC_STDERR_TAIL - n : *tail_len;
        memmove(r->stderr_tail, r->stderr_tail + *tail_len - keep, keep);
        memcpy(r->stderr_tail + keep, buf, n);
        *tail_len = keep + n;
    }
    r->stderr_tail[*tail_len] = '\0';
}

/* Appends to the stdout buffer; false once the cap is passed. */
static bool s_keep_output(proc_result_t *r, size_t *cap, size_t max, const char *buf, size_t n)
{
    if (r->output_len + n > max) {
        n = max - r->output_len;
        r->truncated = true;
    }
    if (r->output_len + n + 1 > *cap) {
        size_t grown = *cap ? *cap : 65536;
        while (grown < r->output_len + n + 1)
            grown *= 2;
        char *p = realloc(r->output, grown);
        if (!p) {
            r->truncated = true;
            return false;
        }
        r->output = p;
        *cap = grown;
    }
    memcpy(r->output + r->output_len, buf, n);
    r->output_len += n;
    r->output[r->output_len] = '\0';
    return !r->truncated;
}

/* Whether KEY=VALUE `entry` is named by `keep` ("NAME", or "PREFIX*"). */
static bool s_kept(const char *entry, char *const *keep)
{
    if (!keep)
        return true;
    const char *eq = strchr(entry, '=');
    size_t key = eq ? (size_t) (eq - entry) : strlen(entry);
    for (size_t i = 0; keep[i]; i++) {
        size_t n = strlen(keep[i]);
        if (n > 0 && keep[i][n - 1] == '*' ? key >= n - 1 && strncmp(entry, keep[i], n - 1) == 0
                                           : key == n && strncmp(entry, keep[i], n) == 0)
            return true;
    }
    return false;
}

/* environ filtered by `keep`, with `set` on top: a KEY=VALUE there replaces
 * environ's KEY. Made before fork, because the child may only make
 * async-signal-safe calls. The array is malloc'd; its strings are borrowed. */
static char **s_env_merge(char *const *set, char *const *keep)
{
    static char *const none[] = {NULL};
    if (!set)
        set = none;
    size_t n_env = 0, n_set = 0;
    while (environ[n_env])
        n_env++;
    while (set[n_set])
        n_set++;
    char **env = calloc(n_env + n_set + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < n_env; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t key = eq ? (size_t) (eq - environ[i]) + 1 : strlen(environ[i]);
        bool replaced = false;
        for (size_t j = 0; j < n_set && !replaced; j++)
            replaced = strncmp(set[j], environ[i], key) == 0;
        if (!replaced && s_kept(environ[i], keep))
            env[n++] = environ[i];
    }
    for (size_t j = 0; j < n_set; j++)
        env[n++] = set[j];
    return env;
}

pf_status_t proc_run(const proc_spec_t *spec, proc_result_t *result, pf_error_t *err)
{
    assert(spec && spec->argv && spec->argv[0] && result && spec->timeout_ms > 0);
    memset(result, 0, sizeof *result);
    char path[4096];
    if (!proc_find(spec->argv[0], path, sizeof path))
        return pf_error_set(err, PF_ENOTFOUND, "%s: no such executable (looked on PATH)", spec->argv[0]);
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
    bool own_env = spec->env || spec->keep_env;
    char **env = own_env ? s_env_merge(spec->env, spec->keep_env) : NULL;
    if (own_env && !env)
        return pf_error_set(err, PF_ENOMEM, "%s: out of memory for its environment", spec->argv[0]);
    if (pipe(out_pipe) || pipe(err_pipe) || pipe(exec_pipe)) {
        pf_error_set(err, PF_EIO, "%s: pipe: %s", spec->argv[0], strerror(errno));
        goto fail_pipes;
    }
    fcntl(exec_pipe[1], F_SETFD, FD_CLOEXEC);
    int out_file = -1;
    if (spec->stdout_path && (out_file = open(spec->stdout_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
        pf_error_set(err, PF_EIO, "%s: cannot write its output to %s: %s", spec->argv[0], spec->stdout_path,
                     strerror(errno));
        goto fail_pipes;
    }
    int64_t start = s_now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        pf_error_set(err, PF_EIO, "%s: fork: %s", spec->argv[0], strerror(errno));
        if (out_file >= 0)
            close(out_file);
        goto fail_pipes;
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls from here to execve. */
        setpgid(0, 0);
        dup2(out_file >= 0 ? out_file : out_pipe[1], STDOUT_FILENO);
        if (out_file >= 0)
            close(out_pipe[1]); /* the parent sees its stdout pipe end at once */
        dup2(err_pipe[1], STDERR_FILENO);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        close(out_pipe[0]);
        close(err_pipe[0]);
        close(exec_pipe[0]);
        if (spec->limits) {
            const proc_limits_t *l = spec->limits;
            const struct {
                int resource;
                rlim_t value;
            } limits[] = {{RLIMIT_CPU, l->cpu_s}, {RLIMIT_FSIZE, l->file_bytes}, {RLIMIT_NPROC, l->procs},
                          {RLIMIT_AS, l->memory_bytes}};
            for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
                if (!limits[i].value)
                    continue;
                /* The soft limit signals (SIGXCPU), the hard one kills. */
                struct rlimit r = {limits[i].value,
                                   limits[i].resource == RLIMIT_CPU ? limits[i].value + 5 : limits[i].value};
                setrlimit(limits[i].resource, &r);
            }
        }
        if (spec->user && (setgroups((size_t) spec->user->n_groups, spec->user->groups) != 0 ||
                           setgid(spec->user->gid) != 0 || setuid(spec->user->uid) != 0)) {
            int e = errno;
            ssize_t w = write(exec_pipe[1], &e, sizeof e);
            (void) w;
            _exit(127);
        }
        if (spec->cwd && chdir(spec->cwd) != 0) {
            int e = errno;
            ssize_t w = write(exec_pipe[1], &e, sizeof e);
            (void) w;
            _exit(127);
        }
        execve(path, spec->argv, env ? env : environ);
        int e = errno;
        ssize_t w = write(exec_pipe[1], &e, sizeof e);
        (void) w;
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever runs first, the group exists */
    if (out_file >= 0)
        close(out_file);
    free(env);
    env = NULL;
    close(out_pipe[1]);
    close(err_pipe[1]);
    close(exec_pipe[1]);
    int child_errno = 0;
    ssize_t got = read(exec_pipe[0], &child_errno, sizeof child_errno);
    close(exec_pipe[0]);
    if (got == (ssize_t) sizeof child_errno) {
        waitpid(pid, NULL, 0);
        close(out_pipe[0]);
        close(err_pipe[0]);
        return pf_error_set(err, PF_EIO, "%s: cannot execute: %s", path, strerror(child_errno));
    }

    size_t out_cap = 0, tail_len = 0;
    int64_t deadline = start + spec->timeout_ms, kill_at = -1;
    bool out_open = true, err_open = true, exited = false;
    int status = 0;
    char buf[65536];
    while (!exited || out_open || err_open) {
        int64_t now = s_now_ms();
        if (kill_at < 0 && now >= deadline) {
            result->timed_out = true;
            kill(-pid, SIGTERM);
            kill_at = now + GRACE_MS;
        }
        if (kill_at >= 0 && now >= kill_at) {
            kill(-pid, SIGKILL);
            kill_at = INT64_MAX;
        }
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;
                /* Whatever it left running in its group dies with it, so a
                 * stray child cannot hold the pipes open. */
                kill(-pid, SIGKILL);
            }
        }
        if (exited && !out_open && !err_open)
            break;
        struct pollfd fds[3];
        nfds_t n = 0;
        int out_i = -1, err_i = -1, cancel_i = -1;
        if (out_open) {
            out_i = (int) n;
            fds[n++] = (struct pollfd) {.fd = out_pipe[0], .events = POLLIN};
        }
        if (err_open) {
            err_i = (int) n;
            fds[n++] = (struct pollfd) {.fd = err_pipe[0], .events = POLLIN};
        }
        if (spec->cancel_fd >= 0 && !result->cancelled) {
            cancel_i = (int) n;
            fds[n++] = (struct pollfd) {.fd = spec->cancel_fd, .events = POLLIN};
        }
        /* Short waits: waitpid is polled, and the deadline checked. */
        int rc = poll(fds, n, exited ? 10 : 50);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0) {
            if (exited && rc == 0) {
                /* Exited and its pipes are quiet but still held open by a
                 * process outside its group: stop reading. */
                break;
            }
            continue;
        }
        if (out_i >= 0 && fds[out_i].revents) {
            ssize_t r = read(out_pipe[0], buf, sizeof buf);
            if (r <= 0)
                out_open = false;
            else if (!s_keep_output(result, &out_cap, spec->max_output, buf, (size_t) r) && kill_at < 0) {
                kill(-pid, SIGTERM);
                kill_at = s_now_ms() + GRACE_MS;
            }
        }
        if (err_i >= 0 && fds[err_i].revents) {
            ssize_t r = read(err_pipe[0], buf, sizeof buf);
            if (r <= 0)
                err_open = false;
            else
                s_keep_tail(result, &tail_len, buf, (size_t) r);
        }
        if (cancel_i >= 0 && fds[cancel_i].revents) {
            result->cancelled = true;
            if (kill_at < 0) {
                kill(-pid, SIGTERM);
                kill_at = s_now_ms() + GRACE_MS;
            }
        }
    }
    if (!exited) {
        kill(-pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (!result->output) {
        result->output = calloc(1, 1);
        if (!result->output)
            return pf_error_set(err, PF_ENOMEM, "%s: out of memory", spec->argv[0]);
    }
    result->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
        result->limit_hit = "its CPU time limit";
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
        result->limit_hit = "its file size limit";
    result->duration_ms = s_now_ms() - start;
    return PF_OK;

fail_pipes:
    free(env);
    for (int i = 0; i < 2; i++) {
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
        if (err_pipe[i] >= 0)
            close(err_pipe[i]);
        if (exec_pipe[i] >= 0)
            close(exec_pipe[i]);
    }
    return err ? err->code : PF_EIO;
}
