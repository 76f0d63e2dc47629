/* ncu_backend: Nsight Compute's analysis as the core sees it
 * (analyzer_backend.h): its CSV pages parsed, on threads where that pays,
 * then analysed; and a pass's columns checked against the metrics it asked
 * for. No detection: ncu takes what no other backend recognised.
 *
 * sched_getaffinity: parse on parallel threads only when this process may use
 * several CPUs (taskset, cgroups), not merely when the machine has them. */
#define _GNU_SOURCE
#include "analyzer_backend.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file_read.h"
#include "ncu_analyze.h"
#include "ncu_columns.h"
#include "ncu_csv.h"
#include "ncu_hotspots.h"
#include "ncu_source.h"

/* A streamed page parsed as it comes (analyzer_page_begin): the CSV
 * parser is a stream, so each chunk goes through it into a data set that the
 * analysis merges in the file's place. A page begun `once` (the worker's)
 * that follows another of its pass parses into that page's set, as `profeed
 * analyze` parses its files one after another into one, and the analysis
 * takes the set instead of copying it: a pass's raw and details pages
 * describe the same launches, which are then held once, not once per page
 * and again when merged (issue 20: 20,000 launches held three times were
 * 138 MB). A source page is read whole (its parser needs the page), so it is
 * not parsed this way. */
typedef struct {
    ncu_data_t *data; /* NULL once the analysis took it */
    int refs;         /* the pages parsing into it */
} ncu_shared_t;

typedef struct ncu_page_t {
    ncu_shared_t *shared;
    ncu_csv_t *csv;                /* NULL once finished */
    const struct ncu_page_t *follows; /* the page whose set this one parsed into, or NULL */
    bool once;                     /* the analysis takes the set instead of copying it */
    bool merged;                   /* ... and has, with `once` */
} ncu_page_t;

static void s_page_destroy(void *state)
{
    ncu_page_t *page = state;
    if (!page)
        return;
    ncu_csv_destroy(&page->csv);
    if (page->shared && --page->shared->refs == 0) {
        ncu_data_destroy(&page->shared->data);
        free(page->shared);
    }
    free(page);
}

static void *s_page_begin(const char *source, const char *head, size_t n, bool keep_raw, bool once, void *follows,
                          analysis_budget_t *budget, pf_error_t *err)
{
    if (ncu_source_sniff(head, n < 4096 ? n : 4096))
        return NULL;
    ncu_page_t *page = calloc(1, sizeof *page);
    ncu_page_t *before = follows;
    /* A page before this one that the analysis has not taken, whose raw
     * cells are kept as this one's are. */
    if (page)
        page->once = once;
    if (page && once && before && before->once && before->shared->data && !before->merged && !before->csv &&
        ncu_data_keeps_raw(before->shared->data) == keep_raw && ncu_data_budget(before->shared->data) == budget) {
        page->shared = before->shared;
        page->shared->refs++;
        page->follows = before;
    } else if (page && (page->shared = calloc(1, sizeof *page->shared)) != NULL) {
        page->shared->refs = 1;
        page->shared->data = ncu_data_new();
        if (page->shared->data && keep_raw)
            ncu_data_keep_raw(page->shared->data);
        if (page->shared->data)
            ncu_data_set_budget(page->shared->data, budget);
    }
    if (page && page->shared && page->shared->data)
        page->csv = ncu_csv_new(page->shared->data, source);
    if (!page || !page->csv) {
        s_page_destroy(page);
        pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    return page;
}

static pf_status_t s_page_feed(void *state, const char *bytes, size_t n, pf_error_t *err)
{
    ncu_page_t *page = state;
    assert(page->csv); /* fed after finish: our bug */
    return ncu_csv_feed(page->csv, bytes, n, err);
}

static pf_status_t s_page_finish(void *state, pf_error_t *err)
{
    ncu_page_t *page = state;
    assert(page->csv);
    pf_status_t rc = ncu_csv_finish(page->csv, err);
    ncu_csv_destroy(&page->csv);
    return rc;
}

/* Why merging passes into `data` failed: its memory budget, or a limit on
 * launches or rules. */
static pf_status_t s_merge_error(const ncu_data_t *data, pf_error_t *err)
{
    if (!ncu_data_over_budget(data))
        return pf_error_set(err, PF_ETOOBIG, "the passes hold more launches or rules than one job may");
    char what[512];
    analysis_budget_describe(ncu_data_budget(data), what, sizeof what);
    return pf_error_set(err, PF_ETOOBIG, "%s", what);
}

/* Merges a streamed page into the job's data; a page begun `once` gives its
 * set up (the worker analyzes a job once), the others are copied. A page
 * that parsed into the set of the page before it is in that set already,
 * which is right only when that page was merged just before it (`last`, the
 * page merged last, NULL after any other file): the order parsing the files
 * one after another has. */
static pf_status_t s_page_merge(ncu_data_t *data, const analyzer_file_t *file, const ncu_page_t **last,
                                pf_error_t *err)
{
    ncu_page_t *page = file->parsed->state;
    assert(!page->csv); /* merged before its finish: our bug */
    if (!page->once) {
        *last = NULL;
        return ncu_data_merge(data, page->shared->data) ? PF_OK : s_merge_error(data, err);
    }
    assert(!page->merged); /* a page begun `once` merged twice: our bug */
    page->merged = true;
    const ncu_page_t *before = *last;
    *last = page;
    if (page->follows) {
        if (page->follows == before)
            return PF_OK;
        char source[256];
        analyzer_file_source(file, source, sizeof source);
        return pf_error_set(err, PF_EBADINPUT,
                            "%s: streamed right after another page of its pass, but the pass does not list it "
                            "right after that one; the pass's files must be listed in the order they stream",
                            source);
    }
    return ncu_data_absorb(data, &page->shared->data) ? PF_OK : s_merge_error(data, err);
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

static pf_status_t s_parse_ncu_file(const analyzer_file_t *file, ncu_data_t *data, const ncu_page_t **last,
                                    pf_error_t *err)
{
    if (file->parsed)
        return s_page_merge(data, file, last, err);
    *last = NULL;
    if (file->path && !file->bytes)
        return ncu_csv_parse_file(data, file->path, err);
    char source[256];
    analyzer_file_source(file, source, sizeof source);
    return ncu_csv_parse_buffer(data, source, file->bytes ? file->bytes : "", file->len, err);
}

static void *s_ncu_task(void *arg)
{
    ncu_task_t *task = arg;
    pf_error_clear(&task->err);
    const ncu_page_t *last = NULL; /* no parsed page goes to a thread */
    task->rc = task->data ? s_parse_ncu_file(task->file, task->data, &last, &task->err)
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
        const ncu_page_t *last = NULL;
        for (size_t i = 0; i < input->count; i++) {
            pf_status_t rc = s_parse_ncu_file(&input->files[i], data, &last, err);
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
        if (i > 0 && tasks[i].data)
            ncu_data_set_budget(tasks[i].data, ncu_data_budget(data));
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
            rc = s_merge_error(data, err);
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

/* A source page (--page source) among the files: read whole, it is per
 * instruction and small next to a raw page of many launches. */
static bool s_is_source_page(const analyzer_file_t *file)
{
    char head[4096];
    size_t n = analyzer_file_head(file, head, sizeof head);
    return ncu_source_sniff(head, n);
}

static pf_status_t s_parse_source_page(ncu_source_t *source, const analyzer_file_t *file, pf_error_t *err)
{
    char name[256];
    analyzer_file_source(file, name, sizeof name);
    if (file->bytes || !file->path)
        return ncu_source_parse(source, name, file->bytes ? file->bytes : "", file->len, err);
    char *bytes = NULL;
    size_t len = 0;
    pf_status_t rc = file_read_input(file->path, NULL, NCU_SOURCE_MAX_BYTES, &bytes, &len, err);
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
    ncu_data_set_budget(data, input->budget);
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
        analyzer_file_source(&input->files[0], first, sizeof first);
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

/* Compares the metrics a pass asked for with the columns its CSV came back
 * with: ncu leaves out names this GPU or ncu version lacks without a word. */
static void s_check_pass(feedback_t *fb, const Profeed__PassOutput *pass)
{
    if (pass->n_requested_metrics == 0)
        return;
    bool *missing = calloc(pass->n_requested_metrics, sizeof *missing);
    if (!missing)
        return;
    for (size_t f = 0; f < pass->n_files; f++) {
        int n = ncu_columns_missing((const char *) pass->files[f]->content.data, pass->files[f]->content.len,
                                    (const char *const *) pass->requested_metrics, pass->n_requested_metrics, missing);
        if (n <= 0)
            continue;
        char list[2048];
        size_t used = 0;
        list[0] = '\0';
        for (size_t i = 0; i < pass->n_requested_metrics; i++) {
            if (!missing[i])
                continue;
            feedback_add_missing(fb, pass->requested_metrics[i]);
            if (used < sizeof list) {
                int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", pass->requested_metrics[i]);
                used = w > 0 ? used + (size_t) w : sizeof list;
            }
        }
        feedback_add_note(fb,
                          "pass %s: ncu returned no column for %d of the %zu metrics the pass plan asked for (this GPU "
                          "or ncu version does not have them): %.1500s; findings that need them were judged without "
                          "them or not at all",
                          pass->pass_key, n, pass->n_requested_metrics, list);
        break;
    }
    free(missing);
}

static const analyzer_backend_t s_backend = {
    .id = PROFEED__PROFILER__PROFILER_NCU,
    .by_content = NULL,
    .by_name = NULL,
    .run = s_run_ncu,
    .check_pass = s_check_pass,
    .page_begin = s_page_begin,
    .page_feed = s_page_feed,
    .page_finish = s_page_finish,
    .page_destroy = s_page_destroy,
};

const analyzer_backend_t *ncu_backend(void)
{
    return &s_backend;
}
