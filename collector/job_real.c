/* job_real: a job run by a real profiler. In order: the job folder (a kernel
 * job's files and wrapper written into it), the profiler and its pass plan
 * (common/pass_plan.h), each pass's steps through proc_run in the sandbox,
 * retried on a transient failure, and the pass folder's files collected into
 * one PassOutput, sent whole or streamed. */
#include "job.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pass_plan.h"
#include "pf_log.h"
#include "proc_run.h"
#include "utf8.h"
#include "wrapper.h"

#define LOG "collector"

#define MAX_PASS_FILES 64

/* Removes a job folder and what is in it (the folders this collector made:
 * regular files and subfolders, no symbolic links followed). Best effort. */
static void s_remove_tree(const char *path, int depth)
{
    DIR *dir = depth < 8 ? opendir(path) : NULL;
    if (dir) {
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[4096];
            int n = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            if (n < 0 || (size_t) n >= sizeof child)
                continue;
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                s_remove_tree(child, depth + 1);
            else
                unlink(child);
        }
        closedir(dir);
    }
    rmdir(path);
}

static bool s_write_file(const char *path, const void *data, size_t len, char *why, size_t cap)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        snprintf(why, cap, "cannot create %s: %s", path, strerror(errno));
        return false;
    }
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(why, cap, "cannot write %s: %s", path, strerror(errno));
            close(fd);
            return false;
        }
        p += w;
        len -= (size_t) w;
    }
    if (close(fd) != 0) {
        snprintf(why, cap, "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static int s_name_order(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* A pass's output: the regular files of its folder, in name order. */
typedef struct {
    char *names[MAX_PASS_FILES];
    uint8_t *data[MAX_PASS_FILES];
    size_t len[MAX_PASS_FILES];
    size_t count;
} pass_files_t;

static void s_pass_files_free(pass_files_t *f)
{
    for (size_t i = 0; i < f->count; i++) {
        free(f->names[i]);
        free(f->data[i]);
    }
    f->count = 0;
}

static bool s_pass_files_add(pass_files_t *f, const char *name, const char *path, size_t max, char *why, size_t cap)
{
    if (f->count == MAX_PASS_FILES) {
        snprintf(why, cap, "the pass wrote more than %d files", MAX_PASS_FILES);
        return false;
    }
    size_t i = f->count;
    f->names[i] = strdup(name);
    if (!f->names[i] || !job_read_file(path, max, &f->data[i], &f->len[i], why, cap)) {
        free(f->names[i]);
        if (!f->names[i])
            snprintf(why, cap, "out of memory");
        return false;
    }
    f->count++;
    return true;
}

/* The regular files of a pass folder, in name order: names[i] (malloc'd, the
 * caller's; free with s_names_free) and their paths under `dir`. */
static bool s_list_pass(const char *dir, char **names, size_t *n_p, char *why, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, cap, "cannot read %s: %s", dir, strerror(errno));
        return false;
    }
    size_t n = 0;
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        int len = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 0 || (size_t) len >= sizeof path || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == MAX_PASS_FILES || !(names[n] = strdup(e->d_name))) {
            snprintf(why, cap, "%s: more than %d files, or out of memory", dir, MAX_PASS_FILES);
            ok = false;
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, s_name_order);
    *n_p = n;
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            free(names[i]);
        *n_p = 0;
    }
    return ok;
}

/* Reads every regular file in the pass folder; `budget` bounds their sum so
 * the PassOutput stays under the message limit. */
static bool s_collect(const char *dir, size_t max_file, size_t budget, pass_files_t *out, char *why, size_t cap)
{
    char *names[MAX_PASS_FILES];
    size_t n = 0;
    bool ok = s_list_pass(dir, names, &n, why, cap);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (ok && s_pass_files_add(out, names[i], path, max_file, why, cap)) {
            total += out->len[out->count - 1];
            if (total > budget) {
                snprintf(why, cap, "the pass's files hold %zu bytes, over the %zu-byte message budget", total, budget);
                ok = false;
            }
        } else {
            ok = false;
        }
        free(names[i]);
    }
    if (!ok)
        s_pass_files_free(out);
    return ok;
}

/* The profiler a job gets: the one it asked for, else the first of its
 * language's (common/profiler.h; every profiler for a job without one) that
 * this collector has. */

static Profeed__Profiler s_pick_profiler(const collector_info_t *info, const Profeed__JobRequest *req)
{
    if (req->has_profiler && req->profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED)
        return req->profiler;
    const profiler_t *order[PROFILER_MAX];
    size_t n = profiler_for_language(req->language, order, PROFILER_MAX);
    for (size_t i = 0; n == 0 && i < profiler_count() && i < PROFILER_MAX; i++)
        order[n++] = profiler_at(i); /* no language (a command job): the table's order */
    for (size_t i = 0; i < n && i < PROFILER_MAX; i++) {
        if (discover_profiler_path(info, order[i]->id))
            return order[i]->id;
    }
    return PROFEED__PROFILER__PROFILER_UNSPECIFIED;
}

static const char *s_metadata_extra(const Profeed__JobRequest *req, const char *key)
{
    for (size_t i = 0; req->metadata && i < req->metadata->n_extra; i++) {
        if (strcmp(req->metadata->extra[i]->key, key) == 0)
            return req->metadata->extra[i]->value;
    }
    return NULL;
}

/* Writes a kernel + problem job's two files and its wrapper into `dir`;
 * fills `argv` (python, wrapper) and `wrapper_path` (its storage). */
static bool s_prepare_kernel_job(const collector_info_t *info, const Profeed__JobRequest *req, const char *dir,
                                 char *wrapper_path, size_t cap, char *why, size_t why_cap)
{
    const Profeed__File *files[2] = {req->kernel->kernel_file, req->kernel->problem_file};
    char *sources[2] = {NULL, NULL};
    bool ok = true;
    for (size_t i = 0; ok && i < 2; i++) {
        /* The wrapper imports them from its own folder: no subfolders. */
        if (strchr(files[i]->name, '/')) {
            snprintf(why, why_cap, "kernel job file \"%.128s\": give a plain file name, without folders",
                     files[i]->name);
            ok = false;
            break;
        }
        char path[4096];
        int plen = snprintf(path, sizeof path, "%s/%s", dir, files[i]->name);
        if (plen < 0 || (size_t) plen >= sizeof path) {
            snprintf(why, why_cap, "kernel job file \"%.128s\": the path is too long", files[i]->name);
            ok = false;
            break;
        }
        size_t len = files[i]->has_content ? files[i]->content.len : 0;
        ok = s_write_file(path, files[i]->content.data, len, why, why_cap);
        sources[i] = ok ? malloc(len + 1) : NULL;
        if (ok && !sources[i]) {
            snprintf(why, why_cap, "out of memory");
            ok = false;
        }
        if (ok) {
            if (len)
                memcpy(sources[i], files[i]->content.data, len);
            sources[i][len] = '\0';
        }
    }
    char *program = NULL;
    if (ok) {
        wrapper_params_t params = {
            .kernel_file = files[0]->name,
            .problem_file = files[1]->name,
            .call = wrapper_detect(sources[0], sources[1]),
            .warmup = WRAPPER_WARMUP,
            .nvtx_range = WRAPPER_NVTX_RANGE,
        };
        const char *forced = s_metadata_extra(req, "wrapper");
        if (forced && wrapper_case_parse(forced, &params.call) != 0) {
            snprintf(why, why_cap, "metadata wrapper=\"%.64s\": use plain, model or init_inputs", forced);
            ok = false;
        }
        pf_error_t err;
        program = ok ? wrapper_render(wrapper_template, wrapper_template_len, &params, &err) : NULL;
        if (ok && !program) {
            snprintf(why, why_cap, "%s", err.msg);
            ok = false;
        }
        if (ok) {
            pf_log_info(LOG, "job %s: wrapper calls kernel_function the %s way", req->job_id,
                        wrapper_case_name(params.call));
        }
    }
    if (ok) {
        int wlen = snprintf(wrapper_path, cap, "%s/profeed_wrapper.py", dir);
        ok = wlen > 0 && (size_t) wlen < cap;
        if (!ok)
            snprintf(why, why_cap, "the job folder's path is too long");
        ok = ok && s_write_file(wrapper_path, program, strlen(program), why, why_cap);
    }
    (void) info;
    free(program);
    free(sources[0]);
    free(sources[1]);
    return ok;
}

/* Runs one step; returns false (with `why`) only when it could not start. */
static bool s_run_step(job_run_t *run, const pass_plan_t *plan, const pass_plan_pass_t *pp, const pass_step_t *step,
                       const char *cwd, uint32_t timeout_s, proc_result_t *result, char *why, size_t cap)
{
    const collector_config_t *config = run->info->config;
    /* A step whose stdout is a report (ncu --import --csv) writes it to its
     * file directly: it may be hundreds of MB, which the pass then streams
     * (issue 20); the job's file size limit bounds it. */
    char out_path[4096];
    if (step->stdout_name)
        snprintf(out_path, sizeof out_path, "%s/%s", pp->dir, step->stdout_name);
    proc_spec_t spec = {
        .argv = step->argv,
        .cwd = cwd,
        .timeout_ms = (int) (timeout_s > 2000000 ? 2000000000 : timeout_s * 1000),
        .max_output = config->max_output,
        .stdout_path = step->stdout_name ? out_path : NULL,
        .cancel_fd = run->cancel[0],
        .env = pass_plan_env(plan),
    };
    sandbox_apply(run->info->sandbox, &spec);
    pf_error_t err;
    if (proc_run(&spec, result, &err) != PF_OK) {
        snprintf(why, cap, "pass %s: %s", pp->key, err.msg);
        return false;
    }
    return true;
}

/* Empties a pass folder before an attempt, so a retry sends only its own files. */
static void s_reset_dir(const sandbox_t *sandbox, const char *dir)
{
    s_remove_tree(dir, 0);
    mkdir(dir, 0755);
    sandbox_own(sandbox, dir);
}

typedef struct {
    int exit_status;
    bool timed_out, truncated;
    pass_result_t verdict;
    int64_t duration_ms;
    uint32_t attempts;
    char stderr_tail[PROC_STDERR_TAIL + 1];
    char failed_log[4096];    /* a failed step's log outside the pass folder, to send */
} pass_run_t;

/* Runs a pass's steps, retrying transient failures of the whole pass with a
 * doubling back-off. False when cancelled or a step could not start (`why`). */
bool job_pass_retries(pass_result_t verdict, uint32_t attempt, uint32_t attempts)
{
    return verdict == PASS_RESULT_TRANSIENT && attempt < attempts;
}

int job_backoff_next(int backoff_ms)
{
    return backoff_ms < 600000 ? backoff_ms * 2 : backoff_ms;
}

bool job_dir_template(char *out, size_t cap, const char *root, const char *job_id, uint32_t attempt)
{
    int n = snprintf(out, cap, "%s/profeed-%s-a%u-XXXXXX", root, job_id, (unsigned) attempt);
    return n > 0 && (size_t) n < cap;
}

static bool s_run_pass(job_run_t *run, const pass_plan_t *plan, const pass_plan_pass_t *pp, const char *cwd,
                       uint32_t timeout_s, pass_run_t *out, char *why, size_t cap)
{
    const collector_config_t *config = run->info->config;
    int backoff = config->retry_backoff_ms;
    uint32_t attempts = config->attempts ? config->attempts : 1;
    for (uint32_t attempt = 1; attempt <= attempts; attempt++) {
        memset(out, 0, sizeof *out);
        out->attempts = attempt;
        s_reset_dir(run->info->sandbox, pp->dir);
        for (size_t s = 0; s < pp->step_count; s++) {
            const pass_step_t *step = &pp->steps[s];
            proc_result_t result;
            if (!s_run_step(run, plan, pp, step, cwd, timeout_s, &result, why, cap))
                return false;
            if (result.cancelled) {
                free(result.output);
                return false;
            }
            out->duration_ms += result.duration_ms;
            out->exit_status = result.exit_status;
            out->timed_out = result.timed_out;
            out->truncated = result.truncated;
            if (result.limit_hit)
                snprintf(out->stderr_tail, sizeof out->stderr_tail,
                         "%.3900s%sprofeed: the collector stopped the run: it reached %.40s", result.stderr_tail,
                         result.stderr_tail[0] ? "\n" : "", result.limit_hit);
            else
                snprintf(out->stderr_tail, sizeof out->stderr_tail, "%s", result.stderr_tail);
            /* The verdict reads the profiler's log: ncu writes its ==ERROR==
             * lines there, not to stderr. */
            char log_path[4096];
            if (step->log_path)
                snprintf(log_path, sizeof log_path, "%s", step->log_path);
            else
                snprintf(log_path, sizeof log_path, "%s/%s.csv", pp->dir, pp->key);
            uint8_t *log = NULL;
            size_t log_len = 0;
            char ignore[256];
            if (!job_read_file(log_path, config->max_output, &log, &log_len, ignore, sizeof ignore)) {
                log = NULL;
                log_len = 0;
            }
            out->verdict = pass_plan_judge(result.exit_status, result.timed_out, (const char *) log, log_len,
                                           result.stderr_tail);
            if (out->verdict == PASS_RESULT_TRANSIENT && result.output && !step->stdout_name &&
                pass_plan_is_permission_error(result.output, result.output_len))
                out->verdict = PASS_RESULT_PERMISSION;
            free(log);
            free(result.output);
            if (out->verdict != PASS_RESULT_OK) {
                if (step->log_path)
                    snprintf(out->failed_log, sizeof out->failed_log, "%s", step->log_path);
                break;
            }
        }
        if (!job_pass_retries(out->verdict, attempt, attempts))
            break;
        pf_log_warn(LOG, "job %s: pass %s attempt %u of %u: %s (exit %d%s); retrying in %d ms", run->job_id, pp->key,
                    (unsigned) attempt, (unsigned) attempts, pass_result_name(out->verdict), out->exit_status,
                    out->timed_out ? ", timed out" : "", backoff);
        if (!job_sleep(run, backoff))
            return false;
        backoff = job_backoff_next(backoff);
    }
    return true;
}

void job_run_real(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    char why[1024] = "";
    Profeed__Profiler profiler = s_pick_profiler(info, req);
    const char *profiler_path = discover_profiler_path(info, profiler);
    if (!profiler_path) {
        job_send_error(pipe, "this collector has no profiler for the job (it offers what its Ready listed)");
        return;
    }
    char dir[4096];
    if (!job_dir_template(dir, sizeof dir, info->job_root, run->job_id, run->attempt) || !mkdtemp(dir)) {
        snprintf(why, sizeof why, "cannot make a job folder under %.900s: %s", info->job_root, strerror(errno));
        job_send_error(pipe, why);
        return;
    }
    sandbox_own(info->sandbox, dir);
    char *wrapper_argv[3] = {(char *) info->python_path, NULL, NULL};
    char wrapper_path[4096];
    char *const *command = NULL;
    size_t command_len = 0;
    char **checked = NULL;  /* a command job's argv, its program as checked */
    char program[4096];
    const char *cwd = config->workdir;
    Profeed__ProfileFilter filter;
    const Profeed__ProfileFilter *use_filter = req->filter;
    pass_plan_t *plan = NULL;
    if (req->target_case == PROFEED__JOB_REQUEST__TARGET_KERNEL) {
        if (!info->python_path[0]) {
            job_send_error(pipe, "kernel + problem jobs need python3 (with torch) on the collector's PATH, or --python");
            goto cleanup;
        }
        if (!s_prepare_kernel_job(info, req, dir, wrapper_path, sizeof wrapper_path, why, sizeof why)) {
            job_send_error(pipe, why);
            goto cleanup;
        }
        wrapper_argv[1] = wrapper_path;
        command = wrapper_argv;
        command_len = 2;
        cwd = dir;
        /* Profile only the measured launch, not the warm-up or input setup. */
        if (!use_filter || !use_filter->nvtx_range) {
            if (use_filter)
                filter = *use_filter;
            else
                profeed__profile_filter__init(&filter);
            filter.nvtx_range = WRAPPER_NVTX_RANGE "/";
            use_filter = &filter;
        }
    } else {
        command_len = req->command->n_argv;
        /* The program runs by the path the allowlist checked (argv[0]
         * replaced), so that neither the profiler's PATH lookup nor a link
         * swapped in since can run another one. */
        checked = calloc(command_len + 1, sizeof *checked);
        if (!checked) {
            job_send_error(pipe, "out of memory");
            goto cleanup;
        }
        if (!sandbox_allows(info->sandbox, req->command->argv[0], cwd, program, sizeof program, why, sizeof why)) {
            job_send_error(pipe, why);
            goto cleanup;
        }
        checked[0] = program;
        for (size_t i = 1; i < command_len; i++)
            checked[i] = req->command->argv[i];
        command = checked;
    }
    pass_plan_input_t input = {
        .language = req->language,
        .profiler = profiler,
        .profiler_path = profiler_path,
        .dir = dir,
        .command = command,
        .command_len = command_len,
        .passes = req->passes,
        .n_passes = req->n_passes,
        .filter = use_filter,
        .sudo = info->sudo,
        .source = req->has_source && req->source,
    };
    pf_error_t err;
    plan = pass_plan_new(&input, &err);
    if (!plan) {
        job_send_error(pipe, err.msg);
        goto cleanup;
    }
    job_send_plan(pipe, run, (uint32_t) pass_plan_count(plan), config->max_msg);
    uint32_t timeout_s = req->has_timeout_s ? req->timeout_s : config->pass_timeout_s;
    for (size_t i = 0; i < pass_plan_count(plan); i++) {
        const pass_plan_pass_t *pp = pass_plan_pass(plan, i);
        pass_run_t pr;
        if (mkdir(pp->dir, 0755) != 0 && errno != EEXIST) {
            snprintf(why, sizeof why, "cannot make %s: %s", pp->dir, strerror(errno));
            job_send_error(pipe, why);
            goto cleanup;
        }
        sandbox_own(info->sandbox, pp->dir);
        if (!s_run_pass(run, plan, pp, cwd, timeout_s, &pr, why, sizeof why)) {
            if (!atomic_load(&run->cancelled))
                job_send_error(pipe, why);
            goto cleanup;
        }
        if (pr.verdict == PASS_RESULT_PERMISSION)
            pf_log_error(LOG, "job %s: pass %s: %s", run->job_id, pp->key, pass_plan_permission_advice());
        pass_files_t files = {0};
        /* A pass bigger than one chunk is streamed (issue 20): its files
         * are read a chunk at a time, so max-output-mb does not bound it. */
        char *snames[MAX_PASS_FILES + 1], *spaths[MAX_PASS_FILES + 1];
        size_t sn = 0;
        bool stream = run->chunk_bytes && s_list_pass(pp->dir, snames, &sn, why, sizeof why);
        bool paths_ok = true;
        for (size_t f = 0; stream && f < sn; f++) {
            spaths[f] = malloc(4096);
            if (spaths[f])
                snprintf(spaths[f], 4096, "%s/%s", pp->dir, snames[f]);
            paths_ok = paths_ok && spaths[f];
        }
        /* Out of memory for the paths: the pass goes whole, as it did before. */
        stream = stream && paths_ok && job_should_stream(run, spaths, sn);
        if (!stream) {
            for (size_t f = 0; f < sn; f++) {
                free(snames[f]);
                free(spaths[f]);
            }
            sn = 0;
        }
        size_t budget = config->max_msg > ((size_t) 1 << 20) ? config->max_msg - ((size_t) 1 << 20) : config->max_msg / 2;
        if (!stream && !s_collect(pp->dir, config->max_output, budget, &files, why, sizeof why)) {
            job_send_error(pipe, why);
            goto cleanup;
        }
        if (pr.failed_log[0] && access(pr.failed_log, R_OK) == 0) { /* banned-ok: no log is no warning */
            char name[64];
            snprintf(name, sizeof name, "%s.log", pp->key);
            if (stream) {
                snames[sn] = strdup(name);
                spaths[sn] = strdup(pr.failed_log);
                if (snames[sn] && spaths[sn]) {
                    sn++;
                } else {
                    free(snames[sn]);
                    free(spaths[sn]);
                }
            } else if (!s_pass_files_add(&files, name, pr.failed_log, config->max_output, why, sizeof why)) {
                pf_log_warn(LOG, "job %s: %s", run->job_id, why);
            }
        }
        char tail[PROC_STDERR_TAIL + 2048];
        snprintf(tail, sizeof tail, "%s%s%s%s%s", pr.stderr_tail,
                 pr.timed_out ? "\nprofeed: the pass ran past its time limit and was stopped" : "",
                 pr.truncated ? "\nprofeed: the output passed the size limit; the pass was stopped" : "",
                 pr.attempts > 1 ? "\nprofeed: the pass was retried after a transient failure" : "",
                 pr.verdict == PASS_RESULT_PERMISSION ? "\nprofeed: " : "");
        if (pr.verdict == PASS_RESULT_PERMISSION) {
            size_t used = strlen(tail);
            snprintf(tail + used, sizeof tail - used, "%s", pass_plan_permission_advice());
        }
        utf8_clean(tail, UTF8_CLEAN_CONTROLS); /* profilers print bytes; the wire wants UTF-8 */
        Profeed__File file_msgs[MAX_PASS_FILES + 1], *file_ptrs[MAX_PASS_FILES + 1];
        size_t nfiles = stream ? sn : files.count;
        for (size_t f = 0; f < nfiles; f++) {
            profeed__file__init(&file_msgs[f]);
            file_msgs[f].name = stream ? snames[f] : files.names[f];
            file_msgs[f].has_content = !stream; /* a stream's contents go in its chunks */
            file_msgs[f].content.data = stream ? NULL : files.data[f];
            file_msgs[f].content.len = stream ? 0 : files.len[f];
            file_ptrs[f] = &file_msgs[f];
        }
        Profeed__WorkerInfo worker;
        job_fill_worker(info, &worker);
        Profeed__PassOutput pass;
        profeed__pass_output__init(&pass);
        pass.job_id = run->job_id;
        pass.pass_key = (char *) pp->key;
        pass.has_profiler = 1;
        pass.profiler = profiler;
        pass.files = file_ptrs;
        pass.n_files = nfiles;
        pass.has_exit_status = 1;
        pass.exit_status = pr.exit_status;
        pass.stderr_tail = tail;
        pass.has_duration_ms = 1;
        pass.duration_ms = (uint64_t) pr.duration_ms;
        pass.worker = &worker;
        pass.requested_metrics = pp->metrics;
        pass.n_requested_metrics = pp->metric_count;
        pf_log_info(LOG, "job %s: pass %s (%s) %s in %lld ms, exit %d, %zu files", run->job_id, pp->key, pp->name,
                    pass_result_name(pr.verdict), (long long) pr.duration_ms, pr.exit_status, nfiles);
        int streamed = 0;
        if (stream)
            streamed = job_stream_pass(pipe, run, &pass, snames, spaths, sn);
        else
            job_send_pass(pipe, run, &pass, config->max_msg);
        s_pass_files_free(&files);
        for (size_t f = 0; f < sn; f++) {
            free(snames[f]);
            free(spaths[f]);
        }
        if (streamed != 0)
            goto cleanup; /* the stream stopped: job_stream_pass said why */
    }
cleanup:
    free(checked);
    pass_plan_destroy(&plan);
    if (!config->keep_job_dirs)
        s_remove_tree(dir, 0);
}
