/* sched_getaffinity: parse on parallel threads only when this process may use
 * several CPUs (taskset, cgroups), not merely when the machine has them. */
#define _GNU_SOURCE
#include "analyzer.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ceiling.h"
#include "comparison.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "ncu_hotspots.h"
#include "ncu_source.h"
#include "select.h"
#include "text_cut.h"
#include "unitrace_analyze.h"
#include "vtune_analyze.h"
#include "vtune_report.h"

/* A unitrace file is read whole: metrics tables and timelines are small
 * next to ncu captures, and the timeline is parsed as one JSON document. */
#define UNITRACE_FILE_MAX ((size_t) 256 * 1024 * 1024)

const char *analyzer_profilers(void) { return "ncu, unitrace, vtune"; }

/* The name a file is known by in messages: "pass ncu.001: raw.csv". */
static void s_source(const analyzer_file_t *file, char *out, size_t cap)
{
    const char *name = file->name ? file->name : (file->path ? file->path : "input");
    if (file->pass_key)
        snprintf(out, cap, "pass %s: %s", file->pass_key, name);
    else
        snprintf(out, cap, "%s", name);
}

static bool s_contains(const char *bytes, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (bytes[i] == needle[0] && memcmp(bytes + i, needle, n) == 0)
            return true;
    return false;
}

/* The first bytes of a file: from memory, or peeked from a path (not stdin). */
static size_t s_head(const analyzer_file_t *file, char *buf, size_t cap)
{
    if (file->parsed)
        return 0;
    if (file->bytes) {
        size_t n = file->len < cap ? file->len : cap;
        memcpy(buf, file->bytes, n);
        return n;
    }
    if (!file->path || strcmp(file->path, "-") == 0)
        return 0;
    int fd = open(file->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, buf, cap);
    close(fd);
    return got > 0 ? (size_t) got : 0;
}

const char *analyzer_detect(const analyzer_file_t *files, size_t count)
{
    char head[4096];
    for (size_t i = 0; i < count; i++) {
        /* What a file holds decides before its name: KernelFoundry's VTune
         * output is vtune_counters.json, and unitrace's timelines are .json too. */
        size_t n = s_head(&files[i], head, sizeof head);
        if (s_contains(head, n, "GpuTime[ns]") || s_contains(head, n, "\"traceEvents\""))
            return "unitrace";
        if (vtune_report_sniff(head, n))
            return "vtune";
        const char *name = files[i].name ? files[i].name : (files[i].path ? files[i].path : "");
        size_t nlen = strlen(name);
        if (strstr(name, ".metrics.") || (nlen > 5 && strcmp(name + nlen - 5, ".json") == 0))
            return "unitrace";
        if (strstr(name, "vtune"))
            return "vtune";
    }
    return "ncu";
}

#define PARALLEL_MIN_BYTES ((size_t) 4 * 1024 * 1024)

/* A file's size in bytes, 0 when unknown (stdin, a path that will fail). */
static size_t s_file_size(const analyzer_file_t *file)
{
    if (file->parsed || file->bytes || !file->path)
        return file->len;
    struct stat st;
    return strcmp(file->path, "-") != 0 && stat(file->path, &st) == 0 && st.st_size > 0 ? (size_t) st.st_size : 0;
}

/* One pass file parsed on its own thread into its own data set. */
typedef struct {
    const analyzer_file_t *file;
    ncu_data_t *data;
    pf_status_t rc;
    pf_error_t err;
} ncu_task_t;

static pf_status_t s_parse_ncu_file(const analyzer_file_t *file, ncu_data_t *data, pf_error_t *err)
{
    if (file->parsed)
        return ncu_data_merge(data, file->parsed)
                   ? PF_OK : pf_error_set(err, PF_ETOOBIG, "the passes hold more launches or rules than one job may");
    if (file->path && !file->bytes)
        return ncu_csv_parse_file(data, file->path, err);
    char source[256];
    s_source(file, source, sizeof source);
    return ncu_csv_parse_buffer(data, source, file->bytes ? file->bytes : "", file->len, err);
}

static void *s_ncu_task(void *arg)
{
    ncu_task_t *task = arg;
    pf_error_clear(&task->err);
    task->rc = task->data ? s_parse_ncu_file(task->file, task->data, &task->err)
                          : pf_error_set(&task->err, PF_ENOMEM, "out of memory");
    return NULL;
}

/* Parses a job's pass files. Passes are independent until they are merged,
 * so on a machine with several cores each file is parsed on its own thread
 * (a multi-pass job then costs about its largest file), and the data sets
 * are merged in pass order, which gives exactly what parsing them one after
 * another would. Standard input is read alone. */
static pf_status_t s_parse_ncu(const analyzer_input_t *input, ncu_data_t *data, pf_error_t *err)
{
    cpu_set_t cpus;
    int cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    /* Threads pay off only when the files beside the largest are big enough
     * to outweigh starting them (on the H200 capture, 0.5 MB in two files,
     * they cost 0.4 ms; on 200 MB they save a third of the time). */
    size_t total = 0, largest = 0;
    for (size_t i = 0; i < input->count; i++) {
        size_t size = s_file_size(&input->files[i]);
        total += size;
        largest = size > largest ? size : largest;
    }
    bool parallel = input->count > 1 &&
                    (input->threads == 0 ? cores > 1 && total - largest >= PARALLEL_MIN_BYTES
                                         : input->threads > 1);
    /* Standard input is read alone; a page parsed already is merged in its
     * turn, not copied on a thread. */
    for (size_t i = 0; parallel && i < input->count; i++)
        if ((input->files[i].path && strcmp(input->files[i].path, "-") == 0) || input->files[i].parsed)
            parallel = false;
    if (!parallel) {
        for (size_t i = 0; i < input->count; i++) {
            pf_status_t rc = s_parse_ncu_file(&input->files[i], data, err);
            if (rc != PF_OK)
                return rc;
        }
        return PF_OK;
    }
    size_t n = input->count;
    ncu_task_t *tasks = calloc(n, sizeof *tasks);
    pthread_t *threads = calloc(n, sizeof *threads);
    bool *started = calloc(n, sizeof *started);
    pf_status_t rc = PF_OK;
    if (!tasks || !threads || !started) {
        rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        goto cleanup;
    }
    /* The first file parses on this thread, straight into `data`. */
    for (size_t i = 0; i < n; i++) {
        tasks[i].file = &input->files[i];
        tasks[i].data = i == 0 ? data : ncu_data_new();
        if (i > 0 && tasks[i].data && ncu_data_keeps_raw(data))
            ncu_data_keep_raw(tasks[i].data);
        if (i > 0)
            started[i] = pthread_create(&threads[i], NULL, s_ncu_task, &tasks[i]) == 0;
        if (i > 0 && !started[i])
            s_ncu_task(&tasks[i]); /* no thread to be had: parse it here */
    }
    s_ncu_task(&tasks[0]);
    for (size_t i = 1; i < n; i++)
        if (started[i])
            pthread_join(threads[i], NULL);
    for (size_t i = 0; i < n; i++) {
        if (tasks[i].rc != PF_OK) {
            rc = tasks[i].rc;
            if (err)
                *err = tasks[i].err;
            goto cleanup;
        }
    }
    for (size_t i = 1; i < n; i++)
        if (!ncu_data_merge(data, tasks[i].data)) {
            rc = pf_error_set(err, PF_ETOOBIG, "the passes hold more launches or rules than one job may");
            goto cleanup;
        }
cleanup:
    for (size_t i = 1; tasks && i < n; i++)
        ncu_data_destroy(&tasks[i].data);
    free(tasks);
    free(threads);
    free(started);
    return rc;
}

static pf_status_t s_slurp(const char *path, char **bytes, size_t *len, size_t max, pf_error_t *err);

/* A source page (--page source) among the files: read whole, it is per
 * instruction and small next to a raw page of many launches. */
static bool s_is_source_page(const analyzer_file_t *file)
{
    char head[4096];
    size_t n = s_head(file, head, sizeof head);
    return ncu_source_sniff(head, n);
}

static pf_status_t s_parse_source_page(ncu_source_t *source, const analyzer_file_t *file, pf_error_t *err)
{
    char name[256];
    s_source(file, name, sizeof name);
    if (file->bytes || !file->path)
        return ncu_source_parse(source, name, file->bytes ? file->bytes : "", file->len, err);
    char *bytes = NULL;
    size_t len = 0;
    pf_status_t rc = s_slurp(file->path, &bytes, &len, NCU_SOURCE_MAX_BYTES, err);
    if (rc == PF_OK)
        rc = ncu_source_parse(source, name, bytes, len, err);
    free(bytes);
    return rc;
}

static pf_status_t s_run_ncu(const analyzer_input_t *input, const analysis_options_t *options,
                             feedback_t **out, pf_error_t *err)
{
    ncu_data_t *data = ncu_data_new();
    ncu_source_t *source = ncu_source_new();
    analyzer_file_t *pages = malloc((input->count ? input->count : 1) * sizeof *pages);
    pf_status_t rc = PF_OK;
    if (!data || !source || !pages) {
        rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (input->with_collated)
        ncu_data_keep_raw(data); /* the collated data carries the cells as printed */
    /* Source pages go to their own parser; the raw and details pages to
     * ncu_csv as before. */
    analyzer_input_t csv = *input;
    csv.files = pages;
    csv.count = 0;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        if (s_is_source_page(&input->files[i]))
            rc = s_parse_source_page(source, &input->files[i], err);
        else
            pages[csv.count++] = input->files[i];
    }
    if (rc == PF_OK && csv.count == 0 && input->count > 0) {
        char first[512];
        s_source(&input->files[0], first, sizeof first);
        rc = pf_error_set(err, PF_EBADINPUT,
                          "%s%s: only source pages, which say where in the code, not what limits a kernel; "
                          "give the capture's raw page too (ncu --import R.ncu-rep --csv --page raw)", first,
                          input->count > 1 ? " and the other files" : "");
    }
    if (rc == PF_OK)
        rc = s_parse_ncu(&csv, data, err);
    if (rc == PF_OK) {
        *out = ncu_analyze(data, options, input->device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        else {
            ncu_hotspots_attach(*out, source);
            if (input->with_collated)
                feedback_set_collated(*out, ncu_analyze_collated(data));
        }
    }
cleanup:
    free(pages);
    ncu_source_destroy(&source);
    ncu_data_destroy(&data);
    return rc;
}

/* Reads a whole file (bounded) for the analyzers that need it whole. */
static pf_status_t s_slurp(const char *path, char **bytes, size_t *len, size_t max, pf_error_t *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pf_error_set(err, PF_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    pf_status_t rc = PF_OK;
    while (buf) {
        if (n == cap) {
            if (cap >= max) {
                rc = pf_error_set(err, PF_ETOOBIG, "%s: larger than %zu bytes", path, max);
                break;
            }
            char *grown = realloc(buf, cap * 2);
            if (!grown)
                break;
            buf = grown;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = pf_error_set(err, PF_EIO, "%s: read failed: %s", path, strerror(errno));
            break;
        }
        if (got == 0) {
            *bytes = buf;
            *len = n;
            if (!is_stdin)
                close(fd);
            return PF_OK;
        }
        n += (size_t) got;
    }
    if (!is_stdin)
        close(fd);
    free(buf);
    return rc != PF_OK ? rc : pf_error_set(err, PF_ENOMEM, "%s: out of memory", path);
}

static pf_status_t s_run_unitrace(const analyzer_input_t *input, const analysis_options_t *options,
                                  feedback_t **out, pf_error_t *err)
{
    unitrace_job_t *job = unitrace_job_new();
    if (!job)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        const analyzer_file_t *file = &input->files[i];
        const char *name = file->name ? file->name : (file->path ? file->path : "input");
        if (file->bytes || !file->path) {
            rc = unitrace_job_add(job, file->pass_key, name, file->bytes ? file->bytes : "", file->len, err);
            continue;
        }
        char *bytes = NULL;
        size_t len = 0;
        rc = s_slurp(file->path, &bytes, &len, UNITRACE_FILE_MAX, err);
        if (rc == PF_OK)
            rc = unitrace_job_add(job, file->pass_key, name, bytes, len, err);
        free(bytes);
    }
    if (rc == PF_OK && unitrace_job_pass_count(job) == 0 && input->count > 0) {
        /* Nothing was unitrace output: the wrong profiler, not a run that
         * profiled no kernel. */
        const analyzer_file_t *file = &input->files[0];
        const char *looks = analyzer_detect(input->files, input->count);
        rc = pf_error_set(err, PF_EBADINPUT,
                          "%s: not unitrace output (neither a metrics table trace.metrics.<pid> nor a chrome "
                          "timeline .json)%s%s%s",
                          file->name ? file->name : (file->path ? file->path : "input"),
                          strcmp(looks, "unitrace") ? "; it looks like " : "",
                          strcmp(looks, "unitrace") ? looks : "", strcmp(looks, "unitrace") ? " output" : "");
    }
    if (rc == PF_OK) {
        unitrace_device_t device = {input->device, input->pci_id, input->cpu_model};
        *out = unitrace_analyze(job, options, &device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
    }
    unitrace_job_destroy(&job);
    return rc;
}

static pf_status_t s_run_vtune(const analyzer_input_t *input, const analysis_options_t *options,
                               feedback_t **out, pf_error_t *err)
{
    vtune_report_t *report = vtune_report_new();
    if (!report)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        const analyzer_file_t *file = &input->files[i];
        if (file->path && !file->bytes) {
            rc = vtune_report_parse_file(report, file->path, err);
            continue;
        }
        char source[256];
        s_source(file, source, sizeof source);
        const char *bytes = file->bytes ? file->bytes : "";
        size_t k = 0;
        while (k < file->len && (bytes[k] == ' ' || bytes[k] == '\n' || bytes[k] == '\r' || bytes[k] == '\t'))
            k++;
        /* KernelFoundry's collector ships vtune_counters.json; a report is text. */
        rc = k < file->len && bytes[k] == '{'
                 ? vtune_report_parse_json(report, source, bytes, file->len, err)
                 : vtune_report_parse(report, source, bytes, file->len, err);
    }
    if (rc == PF_OK) {
        *out = vtune_analyze(report, options, input->device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        else if (input->with_collated)
            feedback_set_collated(*out, vtune_analyze_collated(report));
    }
    vtune_report_destroy(&report);
    return rc;
}

/* Runs one profiler's analysis over one set of files. */
static pf_status_t s_run_one(const analyzer_input_t *input, const char *profiler,
                             const analysis_options_t *options, feedback_t **out, pf_error_t *err)
{
    if (!profiler || strcmp(profiler, "auto") == 0)
        profiler = analyzer_detect(input->files, input->count);
    if (strcmp(profiler, "ncu") == 0)
        return s_run_ncu(input, options, out, err);
    if (strcmp(profiler, "unitrace") == 0 || strcmp(profiler, "unitrace_sampling") == 0)
        return s_run_unitrace(input, options, out, err);
    if (strcmp(profiler, "vtune") == 0)
        return s_run_vtune(input, options, out, err);
    return pf_error_set(err, PF_EBADINPUT, "unknown profiler \"%s\" (this build analyzes: %s)",
                        profiler, analyzer_profilers());
}

/* The manifest as the files tell it: the device, the profiler, the files
 * themselves. A farm worker overrides what its passes say better (the
 * worker's GPU, driver and profiler versions, the plan, clock control). */
static void s_manifest(feedback_t *fb, const analyzer_input_t *input)
{
    fb_manifest_t *m = feedback_manifest(fb);
    snprintf(m->gpu, sizeof m->gpu, "%s", feedback_device(fb));
    snprintf(m->clock_control, sizeof m->clock_control, "%s",
             strcmp(feedback_profiler(fb), "ncu") == 0
                 ? "unknown: the files do not record it (profeed's collector runs ncu with --clock-control none)"
                 : "unknown: the files do not record it");
    size_t used = 0;
    m->target[0] = '\0';
    for (size_t i = 0; i < input->count && used + 1 < sizeof m->target; i++) {
        const analyzer_file_t *file = &input->files[i];
        const char *name = file->path ? file->path : (file->name ? file->name : "input");
        int w = snprintf(m->target + used, sizeof m->target - used, "%s%s", i ? " " : "", name);
        used = w > 0 ? used + (size_t) w : sizeof m->target;
    }
    if (used >= sizeof m->target)
        text_cut(m->target, sizeof m->target - 1, "...");
}

void analyzer_compare_files(feedback_t *fb, const analyzer_input_t *baseline, const analysis_options_t *options,
                            const char *name)
{
    assert(fb && baseline && options);
    feedback_t *before = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    fb_comparison_t *comparison = NULL;
    if (analyzer_run(baseline, options, &before, &err) == PF_OK) {
        comparison = comparison_new(before, fb, name);
    } else {
        char problem[1024];
        snprintf(problem, sizeof problem, "its files could not be analyzed: %.900s", err.msg);
        comparison = comparison_new_problem(name, problem);
    }
    comparison_attach(fb, &comparison, name);
    feedback_destroy(&before);
}

pf_status_t analyzer_run(const analyzer_input_t *input, const analysis_options_t *options,
                         feedback_t **out, pf_error_t *err)
{
    assert(input && options && out);
    *out = NULL;
    const char *profiler = input->profiler;
    if ((!profiler || strcmp(profiler, "auto") == 0) && input->language && *input->language) {
        pf_status_t rc = select_analyzer(input->language, input->gpu_arch, NULL, &profiler, err);
        if (rc != PF_OK)
            return rc;
    } else if (profiler && strcmp(profiler, "auto") != 0 && input->language && *input->language) {
        /* A named profiler must suit the language (KernelFoundry's table). */
        pf_status_t rc = select_analyzer(input->language, input->gpu_arch, profiler, &profiler, err);
        if (rc != PF_OK)
            return rc;
    }

    /* The reference implementation's files are analyzed apart and summarised
     * beside the candidate's feedback. */
    size_t own = 0, ref = 0;
    for (size_t i = 0; i < input->count; i++)
        input->files[i].reference ? ref++ : own++;
    if (own == 0)
        return pf_error_set(err, PF_EBADINPUT, "no input files%s", ref ? " besides the reference's" : "");
    analyzer_file_t *split = malloc(input->count * sizeof *split);
    if (!split)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    size_t a = 0, b = own;
    for (size_t i = 0; i < input->count; i++)
        split[input->files[i].reference ? b++ : a++] = input->files[i];
    analyzer_input_t part = *input;
    part.files = split;
    part.count = own;
    pf_status_t rc = s_run_one(&part, profiler, options, out, err);
    if (rc == PF_OK) {
        s_manifest(*out, &part);
        ceiling_judge(*out, options->min_share, options->stop_within);
    }
    if (rc == PF_OK && ref > 0) {
        analyzer_input_t refpart = *input;
        refpart.files = split + own;
        refpart.count = ref;
        refpart.with_collated = 0;
        feedback_t *reference = NULL;
        pf_error_t ref_err;
        pf_error_clear(&ref_err);
        /* The reference may use another profiler than the candidate. */
        if (s_run_one(&refpart, NULL, options, &reference, &ref_err) == PF_OK)
            feedback_set_reference(*out, feedback_profiler(reference), feedback_total_kernels(reference),
                                   feedback_total_time_ns(reference));
        else
            feedback_add_note(*out, "the reference implementation's profile could not be read: %s",
                              ref_err.msg);
        feedback_destroy(&reference);
    }
    free(split);
    return rc;
}
