/* analyzer: the core that picks a profiler's backend (analyzer_backend.h)
 * and runs it; it knows each backend by its struct alone. */
#include "analyzer.h"

#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer_backend.h"
#include "ceiling.h"
#include "comparison.h"
#include "profiler.h"
#include "select.h"
#include "text_cut.h"

/* Detection tries every backend's content test on a file before any name
 * test (a KernelFoundry VTune capture is vtune_counters.json, and unitrace's
 * timelines are .json too), in this order; the last, with no tests, takes
 * what none recognised. */
static const analyzer_backend_t *(*const s_backend_at[])(void) = {unitrace_backend, vtune_backend, ncu_backend};
#define S_BACKENDS (sizeof s_backend_at / sizeof s_backend_at[0])

void analyzer_file_source(const analyzer_file_t *file, char *out, size_t cap)
{
    const char *name = file->name ? file->name : (file->path ? file->path : "input");
    if (file->pass_key)
        snprintf(out, cap, "pass %s: %s", file->pass_key, name);
    else
        snprintf(out, cap, "%s", name);
}

bool analyzer_text_contains(const char *bytes, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (bytes[i] == needle[0] && memcmp(bytes + i, needle, n) == 0)
            return true;
    return false;
}

size_t analyzer_file_head(const analyzer_file_t *file, char *buf, size_t cap)
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

static const analyzer_backend_t *s_backend(const char *profiler)
{
    const profiler_t *p = profiler_by_name(profiler);
    for (size_t i = 0; p && i < S_BACKENDS; i++) {
        if (s_backend_at[i]()->id == p->id)
            return s_backend_at[i]();
    }
    return NULL;
}

analyzer_page_t *analyzer_page_begin(Profeed__Profiler profiler, const char *source, const char *head, size_t n,
                                     bool keep_raw, bool once, analyzer_page_t *follows, analysis_budget_t *budget,
                                     pf_error_t *err)
{
    assert(source && head);
    pf_error_clear(err);
    const analyzer_backend_t *backend = NULL;
    for (size_t i = 0; i < S_BACKENDS && !backend; i++)
        if (s_backend_at[i]()->id == profiler)
            backend = s_backend_at[i]();
    if (!backend || !backend->page_begin)
        return NULL;
    analyzer_page_t *page = malloc(sizeof *page);
    if (!page) {
        pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    page->backend = backend;
    assert(once || !follows);
    page->state = backend->page_begin(source, head, n, keep_raw, once,
                                      follows && follows->backend == backend ? follows->state : NULL, budget, err);
    if (!page->state) {
        free(page);
        return NULL;
    }
    return page;
}

pf_status_t analyzer_page_feed(analyzer_page_t *page, const char *bytes, size_t n, pf_error_t *err)
{
    assert(page && bytes);
    return page->backend->page_feed(page->state, bytes, n, err);
}

pf_status_t analyzer_page_finish(analyzer_page_t *page, pf_error_t *err)
{
    assert(page);
    return page->backend->page_finish(page->state, err);
}

void analyzer_page_destroy(analyzer_page_t **page_p)
{
    assert(page_p);
    if (!*page_p)
        return;
    (*page_p)->backend->page_destroy((*page_p)->state);
    free(*page_p);
    *page_p = NULL;
}

const char *analyzer_profilers(void)
{
    return profiler_names(); /* a backend for each (test_profiler) */
}

bool analyzer_handles(Profeed__Profiler profiler)
{
    for (size_t i = 0; i < S_BACKENDS; i++) {
        if (s_backend_at[i]()->id == profiler)
            return true;
    }
    return false;
}

/* The table's name of backend `b`'s profiler (test_profiler: every backend's
 * id is in the table). */
static const char *s_backend_name(size_t b)
{
    const profiler_t *p = profiler_by_id(s_backend_at[b]()->id);
    assert(p);
    return p->name;
}

const char *analyzer_detect(const analyzer_file_t *files, size_t count)
{
    char head[4096];
    for (size_t i = 0; i < count; i++) {
        size_t n = analyzer_file_head(&files[i], head, sizeof head);
        const char *name = files[i].name ? files[i].name : (files[i].path ? files[i].path : "");
        for (size_t b = 0; b < S_BACKENDS; b++) {
            if (s_backend_at[b]()->by_content && s_backend_at[b]()->by_content(head, n))
                return s_backend_name(b);
        }
        for (size_t b = 0; b < S_BACKENDS; b++) {
            if (s_backend_at[b]()->by_name && s_backend_at[b]()->by_name(name))
                return s_backend_name(b);
        }
    }
    return s_backend_name(S_BACKENDS - 1);
}

bool analyzer_parses_pages(Profeed__Profiler profiler)
{
    for (size_t i = 0; i < S_BACKENDS; i++) {
        if (s_backend_at[i]()->id == profiler)
            return s_backend_at[i]()->page_begin != NULL;
    }
    return false;
}

void analyzer_check_pass(feedback_t *fb, const Profeed__PassOutput *pass)
{
    for (size_t i = 0; i < S_BACKENDS; i++) {
        if (s_backend_at[i]()->check_pass)
            s_backend_at[i]()->check_pass(fb, pass);
    }
}

/* Runs one profiler's analysis over one set of files. */
static pf_status_t s_run_one(const analyzer_input_t *input, const char *profiler,
                             const analysis_options_t *options, feedback_t **out, pf_error_t *err)
{
    if (!profiler || strcmp(profiler, "auto") == 0)
        profiler = analyzer_detect(input->files, input->count);
    /* A profiler's variant (the table's: unitrace's OpenCL sampling) is run
     * by the profiler's backend, which tells it from the files themselves. */
    const profiler_t *owner = profiler_by_analyzer_name(profiler);
    const analyzer_backend_t *backend = s_backend(owner ? owner->name : profiler);
    if (backend)
        return backend->run(input, options, out, err);
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
    const profiler_t *p = profiler_by_name(feedback_profiler(fb));
    if (p && p->clock_options)
        snprintf(m->clock_control, sizeof m->clock_control,
                 "unknown: the files do not record it (profeed's collector runs %s with %s)", p->name,
                 p->clock_options);
    else
        snprintf(m->clock_control, sizeof m->clock_control, "unknown: the files do not record it");
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
