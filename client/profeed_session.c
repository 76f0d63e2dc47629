/* profeed_session: analysis of passes held in memory, behind opaque handles. */
#include "profeed_session.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyzer.h"
#include "ceiling.h"
#include "feedback.h"
#include "input_paths.h"
#include "option_value.h"
#include "pf_error.h"
#include "render.h"
#include "select.h"

/* Bumped when a function joins this interface. */
#define PROFEED_SESSION_ABI 2

typedef struct {
    char *pass_key; /* may be NULL */
    char *name;
    char *path;     /* read at run time when set ... */
    char *bytes;    /* ... else this copy of the caller's bytes */
    size_t len;
    bool reference;
    bool baseline;  /* of the baseline's capture, analyzed apart */
} s_file_t;

/* The options, by the names profeed_session_set() takes. Strings are owned. */
typedef struct {
    char *profiler, *language, *gpu_arch, *device, *pci_id, *cpu_model;
    profeed_format_t format;
    size_t top, max_chars, max_tokens;
    double min_share;
    double stop_within;
    bool min_share_strict, with_collated, all_segments;
} s_options_t;

enum { S_FORMATS = 3 };

struct profeed_session_t {
    s_options_t options;
    s_file_t *files;
    size_t count, cap, total;
    bool ran;
    profeed_result_t result;
    feedback_t *feedback;          /* NULL before a run or when the input was bad */
    char *rendered[S_FORMATS];     /* per profeed_format_t, made on demand */
    char error[PF_ERROR_MSG_MAX];
};

int profeed_session_abi(void) { return PROFEED_SESSION_ABI; }

static void s_error(profeed_session_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_error(profeed_session_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->error, sizeof self->error, fmt, ap);
    va_end(ap);
}

static void s_options_default(s_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->format = PROFEED_FORMAT_TEXT;
    o->min_share = 0.05;
    o->stop_within = CEILING_STOP_WITHIN_DEFAULT;
}

profeed_session_t *profeed_session_new(void)
{
    profeed_session_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    s_options_default(&self->options);
    self->result = PROFEED_ERROR;
    return self;
}

void profeed_session_destroy(profeed_session_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    profeed_session_t *self = *self_p;
    s_options_t *o = &self->options;
    free(o->profiler);
    free(o->language);
    free(o->gpu_arch);
    free(o->device);
    free(o->pci_id);
    free(o->cpu_model);
    for (size_t i = 0; i < self->count; i++) {
        free(self->files[i].pass_key);
        free(self->files[i].name);
        free(self->files[i].path);
        free(self->files[i].bytes);
    }
    free(self->files);
    feedback_destroy(&self->feedback);
    for (int f = 0; f < S_FORMATS; f++)
        free(self->rendered[f]);
    free(self);
    *self_p = NULL;
}

/* Replaces an owned string option; "" or NULL clears it. */
static profeed_result_t s_set_string(profeed_session_t *self, char **slot, const char *key, const char *value)
{
    if (value && strlen(value) > PROFEED_SESSION_NAME_MAX) {
        s_error(self, "option %s: value longer than %d bytes", key, PROFEED_SESSION_NAME_MAX);
        return PROFEED_BAD_INPUT;
    }
    char *copy = NULL;
    if (value && *value && !(copy = strdup(value))) {
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    free(*slot);
    *slot = copy;
    return PROFEED_OK;
}

static profeed_result_t s_set_size(profeed_session_t *self, size_t *slot, const char *key, const char *value)
{
    unsigned long long v = 0;
    if (value && *value && !option_value_count(value, SIZE_MAX, &v)) {
        s_error(self, "option %s: \"%s\" is not a count (a whole number >= 0)", key, value);
        return PROFEED_BAD_INPUT;
    }
    *slot = (size_t) v;
    return PROFEED_OK;
}

static profeed_result_t s_set_bool(profeed_session_t *self, bool *slot, const char *key, const char *value)
{
    bool v = false;
    if (value && *value && !option_value_bool(value, &v)) {
        s_error(self, "option %s: \"%s\" is not 0, 1, true or false", key, value);
        return PROFEED_BAD_INPUT;
    }
    *slot = v;
    return PROFEED_OK;
}

static int s_format(const char *name)
{
    if (strcmp(name, "text") == 0)
        return PROFEED_FORMAT_TEXT;
    if (strcmp(name, "json") == 0)
        return PROFEED_FORMAT_JSON;
    if (strcmp(name, "markdown") == 0 || strcmp(name, "md") == 0)
        return PROFEED_FORMAT_MARKDOWN;
    return -1;
}

profeed_result_t profeed_session_set(profeed_session_t *self, const char *key, const char *value)
{
    if (!self)
        return PROFEED_ERROR;
    s_options_t *o = &self->options;
    self->error[0] = '\0';
    if (!key) {
        s_error(self, "option: no key");
        return PROFEED_BAD_INPUT;
    }
    /* An unknown profiler is reported by the run, as for files on disk. */
    if (strcmp(key, "profiler") == 0)
        return s_set_string(self, &o->profiler, key, value);
    if (strcmp(key, "language") == 0)
        return s_set_string(self, &o->language, key, value);
    if (strcmp(key, "gpu_arch") == 0)
        return s_set_string(self, &o->gpu_arch, key, value);
    if (strcmp(key, "device") == 0)
        return s_set_string(self, &o->device, key, value);
    if (strcmp(key, "pci_id") == 0)
        return s_set_string(self, &o->pci_id, key, value);
    if (strcmp(key, "cpu_model") == 0)
        return s_set_string(self, &o->cpu_model, key, value);
    if (strcmp(key, "format") == 0) {
        int f = value && *value ? s_format(value) : PROFEED_FORMAT_TEXT;
        if (f < 0) {
            s_error(self, "option format: \"%s\" is not text, json or markdown", value);
            return PROFEED_BAD_INPUT;
        }
        o->format = (profeed_format_t) f;
        return PROFEED_OK;
    }
    if (strcmp(key, "top") == 0)
        return s_set_size(self, &o->top, key, value);
    if (strcmp(key, "max_chars") == 0)
        return s_set_size(self, &o->max_chars, key, value);
    if (strcmp(key, "max_tokens") == 0)
        return s_set_size(self, &o->max_tokens, key, value);
    if (strcmp(key, "with_collated") == 0)
        return s_set_bool(self, &o->with_collated, key, value);
    if (strcmp(key, "all_segments") == 0)
        return s_set_bool(self, &o->all_segments, key, value);
    if (strcmp(key, "min_share_strict") == 0)
        return s_set_bool(self, &o->min_share_strict, key, value);
    if (strcmp(key, "stop_within") == 0) {
        if (!value || !*value) {
            o->stop_within = CEILING_STOP_WITHIN_DEFAULT;
            return PROFEED_OK;
        }
        double v;
        if (!option_value_real(value, 1, 100, &v)) {
            s_error(self, "option stop_within: \"%s\" is not a factor between 1 and 100 (1.15: within 1.15x of "
                          "the ceiling)", value);
            return PROFEED_BAD_INPUT;
        }
        o->stop_within = v;
        return PROFEED_OK;
    }
    if (strcmp(key, "min_share") == 0) {
        if (!value || !*value) {
            o->min_share = 0.05;
            o->min_share_strict = false;
            return PROFEED_OK;
        }
        double v;
        if (!option_value_real(value, 0, 1, &v)) {
            s_error(self, "option min_share: \"%s\" is not a fraction between 0 and 1", value);
            return PROFEED_BAD_INPUT;
        }
        o->min_share = v;
        o->min_share_strict = true;
        return PROFEED_OK;
    }
    s_error(self, "unknown option \"%s\" (options: profiler, language, gpu_arch, format, top, min_share, "
                  "min_share_strict, max_chars, max_tokens, device, pci_id, cpu_model, with_collated, all_segments, "
                  "stop_within)",
            key);
    return PROFEED_BAD_INPUT;
}

/* Room for one more file within the limits, or PROFEED_BAD_INPUT naming it. */
static profeed_result_t s_reserve(profeed_session_t *self, const char *what, size_t len)
{
    if (self->ran) {
        s_error(self, "%s: the session already ran; start a new one", what);
        return PROFEED_BAD_INPUT;
    }
    if (self->count >= PROFEED_SESSION_FILES_MAX) {
        s_error(self, "%s: more than %d files in one analysis", what, PROFEED_SESSION_FILES_MAX);
        return PROFEED_BAD_INPUT;
    }
    if (len > PROFEED_SESSION_FILE_MAX || self->total + len > PROFEED_SESSION_TOTAL_MAX) {
        s_error(self, "%s: %zu bytes; a file may hold at most %zu, all files together %zu", what, len,
                PROFEED_SESSION_FILE_MAX, PROFEED_SESSION_TOTAL_MAX);
        return PROFEED_BAD_INPUT;
    }
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 8;
        s_file_t *grown = realloc(self->files, cap * sizeof *grown);
        if (!grown) {
            s_error(self, "out of memory");
            return PROFEED_ERROR;
        }
        self->files = grown;
        self->cap = cap;
    }
    return PROFEED_OK;
}

static bool s_name_ok(profeed_session_t *self, const char *what, const char *name)
{
    if (!name || !*name) {
        s_error(self, "%s: no name", what);
        return false;
    }
    if (strlen(name) > PROFEED_SESSION_NAME_MAX) {
        s_error(self, "%s: name longer than %d bytes", what, PROFEED_SESSION_NAME_MAX);
        return false;
    }
    return true;
}

static profeed_result_t s_add(profeed_session_t *self, const char *pass_key, const char *name, const void *bytes,
                              size_t len, bool baseline)
{
    if (!self)
        return PROFEED_ERROR;
    self->error[0] = '\0';
    if (pass_key && !s_name_ok(self, "pass key", pass_key))
        return PROFEED_BAD_INPUT;
    if (!s_name_ok(self, pass_key ? pass_key : "file", name))
        return PROFEED_BAD_INPUT;
    if (!bytes && len > 0) {
        s_error(self, "%s%s%s: %zu bytes announced, none given", pass_key ? pass_key : "", pass_key ? ": " : "",
                name, len);
        return PROFEED_BAD_INPUT;
    }
    char what[2 * PROFEED_SESSION_NAME_MAX + 16];
    snprintf(what, sizeof what, "%s%s%s", pass_key ? "pass " : "", pass_key ? pass_key : "", pass_key ? ": " : "");
    snprintf(what + strlen(what), sizeof what - strlen(what), "%s", name);
    profeed_result_t rc = s_reserve(self, what, len);
    if (rc != PROFEED_OK)
        return rc;
    s_file_t file = {.len = len, .reference = pass_key && select_pass_is_reference(pass_key), .baseline = baseline};
    file.pass_key = pass_key ? strdup(pass_key) : NULL;
    file.name = strdup(name);
    file.bytes = malloc(len + 1);
    if ((pass_key && !file.pass_key) || !file.name || !file.bytes) {
        free(file.pass_key);
        free(file.name);
        free(file.bytes);
        s_error(self, "%s: out of memory", what);
        return PROFEED_ERROR;
    }
    if (len > 0)
        memcpy(file.bytes, bytes, len);
    file.bytes[len] = '\0';
    self->files[self->count++] = file;
    self->total += len;
    return PROFEED_OK;
}

static profeed_result_t s_add_one_path(profeed_session_t *self, const char *path, int reference, bool baseline)
{
    profeed_result_t rc = s_reserve(self, path, 0);
    if (rc != PROFEED_OK)
        return rc;
    s_file_t file = {.reference = reference != 0, .baseline = baseline};
    file.path = strdup(path);
    if (!file.path) {
        s_error(self, "%s: out of memory", path);
        return PROFEED_ERROR;
    }
    self->files[self->count++] = file;
    return PROFEED_OK;
}

/* A folder stands for its files (input_paths.h); every other path is read,
 * and judged, at run time. */
static profeed_result_t s_add_path(profeed_session_t *self, const char *path, int reference, bool baseline)
{
    if (!self)
        return PROFEED_ERROR;
    self->error[0] = '\0';
    if (!s_name_ok(self, "path", path))
        return PROFEED_BAD_INPUT;
    char **files = NULL, why[512];
    size_t count = 0;
    if (input_paths_expand(&path, 1, &files, &count, why, sizeof why) != 0) {
        if (baseline) /* a baseline that cannot be read is a note of the run, not its end */
            return s_add_one_path(self, path, reference, baseline);
        s_error(self, "%s", why);
        return PROFEED_BAD_INPUT;
    }
    profeed_result_t rc = PROFEED_OK;
    for (size_t i = 0; rc == PROFEED_OK && i < count; i++)
        rc = s_add_one_path(self, files[i], reference, baseline);
    input_paths_free(&files, count);
    return rc;
}

profeed_result_t profeed_session_add(profeed_session_t *self, const char *pass_key, const char *name,
                                     const void *bytes, size_t len)
{
    return s_add(self, pass_key, name, bytes, len, false);
}

profeed_result_t profeed_session_add_path(profeed_session_t *self, const char *path, int reference)
{
    return s_add_path(self, path, reference, false);
}

profeed_result_t profeed_session_add_baseline(profeed_session_t *self, const char *pass_key, const char *name,
                                              const void *bytes, size_t len)
{
    return s_add(self, pass_key, name, bytes, len, true);
}

profeed_result_t profeed_session_add_baseline_path(profeed_session_t *self, const char *path)
{
    return s_add_path(self, path, 0, true);
}

static char *s_render(const profeed_session_t *self, profeed_format_t format)
{
    switch (format) {
    case PROFEED_FORMAT_JSON: return render_json(self->feedback, self->options.with_collated);
    case PROFEED_FORMAT_MARKDOWN: return render_markdown(self->feedback);
    case PROFEED_FORMAT_TEXT: break;
    }
    return render_text_within(self->feedback, self->options.max_chars, self->options.max_tokens);
}

/* A feedback that only says the input was bad, so a JSON consumer gets a
 * structured answer too. */
static feedback_t *s_bad_input(const profeed_session_t *self, const char *message)
{
    feedback_t *fb = feedback_new(self->options.profiler ? self->options.profiler : "auto");
    if (!fb)
        return NULL;
    feedback_set_status(fb, FB_BAD_INPUT);
    feedback_add_error(fb, "%s", message);
    return fb;
}

const char *profeed_session_check_max_chars(size_t max_chars, const char *format, char *buf, size_t cap)
{
    assert(buf && cap > 0);
    if (max_chars == 0)
        return NULL;
    if (!format || strcmp(format, "text") != 0)
        snprintf(buf, cap, "max chars bounds the text format only; JSON and Markdown are never cut");
    else if (max_chars < RENDER_MIN_CHARS)
        snprintf(buf, cap, "max chars %zu is too small: a feedback needs at least %d characters", max_chars,
                 RENDER_MIN_CHARS);
    else
        return NULL;
    return buf;
}

const char *profeed_session_check_max_tokens(size_t max_tokens, const char *format, char *buf, size_t cap)
{
    assert(buf && cap > 0);
    if (max_tokens == 0)
        return NULL;
    if (!format || strcmp(format, "text") != 0)
        snprintf(buf, cap, "max tokens bounds the text format only; JSON and Markdown are never cut");
    else if (max_tokens < RENDER_MIN_TOKENS)
        snprintf(buf, cap, "max tokens %zu is too small: a feedback needs at least %d tokens", max_tokens,
                 RENDER_MIN_TOKENS);
    else
        return NULL;
    return buf;
}

/* Renders the output in the chosen format: `result`, or PROFEED_ERROR when
 * memory ran out. */
static profeed_result_t s_render_output(profeed_session_t *self, profeed_result_t result)
{
    profeed_format_t f = self->options.format;
    if (self->feedback && !self->rendered[f])
        self->rendered[f] = s_render(self, f);
    if (!self->rendered[f]) {
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    return result;
}

/* How the feedback names a baseline given as files: "files a.csv b.csv". */
static void s_baseline_name(const analyzer_input_t *baseline, char *out, size_t cap)
{
    size_t used = (size_t) snprintf(out, cap, "files");
    for (size_t i = 0; i < baseline->count && used < cap; i++) {
        const analyzer_file_t *f = &baseline->files[i];
        int w = snprintf(out + used, cap - used, " %s", f->path ? f->path : f->name);
        used = w > 0 ? used + (size_t) w : cap;
    }
}

profeed_result_t profeed_session_run(profeed_session_t *self)
{
    if (!self)
        return PROFEED_ERROR;
    if (self->ran) {
        s_error(self, "the session already ran; start a new one");
        return PROFEED_BAD_INPUT;
    }
    self->ran = true;
    self->result = PROFEED_ERROR;
    char why[PF_ERROR_MSG_MAX];
    if (profeed_session_check_max_chars(self->options.max_chars,
                                        self->options.format == PROFEED_FORMAT_TEXT ? "text" : "json", why,
                                        sizeof why) ||
        profeed_session_check_max_tokens(self->options.max_tokens,
                                         self->options.format == PROFEED_FORMAT_TEXT ? "text" : "json", why,
                                         sizeof why)) {
        s_error(self, "%s", why);
        self->feedback = s_bad_input(self, self->error);
        return self->result = s_render_output(self, PROFEED_BAD_INPUT);
    }
    size_t baselines = 0;
    for (size_t i = 0; i < self->count; i++)
        baselines += self->files[i].baseline;
    if (self->count == baselines) {
        s_error(self, baselines ? "no input files besides the baseline's" : "no input files");
        self->feedback = s_bad_input(self, self->error);
        return self->result = s_render_output(self, PROFEED_BAD_INPUT);
    }
    analyzer_file_t *files = calloc(self->count, sizeof *files);
    if (!files) {
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    /* The job's files first, the baseline's after them. */
    size_t own = 0, base = self->count - baselines;
    for (size_t i = 0; i < self->count; i++) {
        const s_file_t *f = &self->files[i];
        files[f->baseline ? base++ : own++] = (analyzer_file_t){
            .pass_key = f->pass_key,
            .name = f->name,
            .path = f->path,
            .bytes = f->path ? NULL : f->bytes,
            .len = f->len,
            .reference = f->reference,
        };
    }
    const s_options_t *o = &self->options;
    analyzer_input_t input = {
        .files = files,
        .count = own,
        .profiler = o->profiler ? o->profiler : "auto",
        .language = o->language,
        .gpu_arch = o->gpu_arch,
        .device = o->device,
        .pci_id = o->pci_id,
        .cpu_model = o->cpu_model,
        .with_collated = o->with_collated,
    };
    analysis_options_t analysis;
    analysis_options_default(&analysis);
    analysis.top = o->top;
    analysis.all_segments = o->all_segments;
    analysis.min_share = o->min_share;
    analysis.min_share_strict = o->min_share_strict;
    analysis.stop_within = o->stop_within;

    pf_error_t err;
    pf_error_clear(&err);
    pf_status_t rc = analyzer_run(&input, &analysis, &self->feedback, &err);
    if (rc == PF_OK && baselines > 0) {
        analyzer_input_t before = input;
        before.files = files + own;
        before.count = baselines;
        before.with_collated = 0;
        char name[512];
        s_baseline_name(&before, name, sizeof name);
        analyzer_compare_files(self->feedback, &before, &analysis, name);
    }
    free(files);
    if (rc != PF_OK) {
        s_error(self, "%s", err.msg);
        if (rc == PF_ENOMEM)
            return self->result = PROFEED_ERROR;
        self->feedback = s_bad_input(self, err.msg);
        return self->result = s_render_output(self, PROFEED_BAD_INPUT);
    }
    self->result = PROFEED_OK;
    if (feedback_status(self->feedback) == FB_PROFILER_ERROR) {
        self->result = PROFEED_PROFILER_ERROR;
        if (feedback_error_count(self->feedback) > 0)
            s_error(self, "%s", feedback_error(self->feedback, 0));
    }
    return self->result = s_render_output(self, self->result);
}

const char *profeed_session_render(profeed_session_t *self, const char *format)
{
    if (!self || !self->feedback)
        return NULL;
    int f = format ? s_format(format) : -1;
    if (f < 0) {
        s_error(self, "render: \"%s\" is not text, json or markdown", format ? format : "(null)");
        return NULL;
    }
    if (!self->rendered[f])
        self->rendered[f] = s_render(self, (profeed_format_t) f);
    return self->rendered[f];
}

const char *profeed_session_output(const profeed_session_t *self)
{
    return self ? self->rendered[self->options.format] : NULL;
}

size_t profeed_session_output_len(const profeed_session_t *self)
{
    const char *out = profeed_session_output(self);
    return out ? strlen(out) : 0;
}

const char *profeed_session_error(const profeed_session_t *self) { return self ? self->error : ""; }

profeed_result_t profeed_session_result(const profeed_session_t *self)
{
    return self ? self->result : PROFEED_ERROR;
}
