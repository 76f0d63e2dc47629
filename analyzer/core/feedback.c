#include "feedback.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comparison.h"
#include "text_cut.h"

#ifndef PROFEED_ANALYZER_VERSION
#define PROFEED_ANALYZER_VERSION "unknown"
#endif

/* Bounds on lists fed by untrusted input (one note per bad row would grow
 * without limit). */
#define LIST_MAX 64
#define LINE_MAX_CHARS 1024

typedef struct {
    char *items[LIST_MAX];
    size_t count;
} string_list_t;

struct feedback_t {
    fb_status_t status;
    char profiler[16];
    char device[128];
    size_t total_kernels, total_launches;
    double total_time_ns;
    fb_kernel_t *kernels;
    size_t kernel_count, kernel_cap;
    fb_finding_t *findings;
    size_t finding_count, finding_cap;
    string_list_t errors, notes, missing;
    bool has_reference;
    char reference_profiler[16];
    size_t reference_kernels;
    double reference_time_ns;
    bool replayed;
    json_t *collated;
    fb_manifest_t manifest;
    fb_comparison_t *comparison;
    bool stop;
    char stop_text[512];
};

feedback_t *feedback_new(const char *profiler)
{
    feedback_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->profiler, sizeof self->profiler, "%s", profiler ? profiler : "");
    self->total_time_ns = NAN;
    snprintf(self->manifest.profeed_version, sizeof self->manifest.profeed_version, "%s",
             PROFEED_ANALYZER_VERSION);
    return self;
}

static void s_list_free(string_list_t *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i]);
    list->count = 0;
}

void feedback_destroy(feedback_t **self_p)
{
    assert(self_p);
    feedback_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->kernel_count; i++) {
        free(self->kernels[i].name);
        for (size_t c = 0; c < self->kernels[i].close_count; c++)
            free(self->kernels[i].close[c].action);
    }
    free(self->kernels);
    for (size_t i = 0; i < self->finding_count; i++) {
        free(self->findings[i].title);
        free(self->findings[i].action);
    }
    free(self->findings);
    s_list_free(&self->errors);
    s_list_free(&self->notes);
    s_list_free(&self->missing);
    json_decref(self->collated);
    comparison_destroy(&self->comparison);
    free(self);
    *self_p = NULL;
}

void feedback_set_status(feedback_t *self, fb_status_t status) { self->status = status; }
fb_status_t feedback_status(const feedback_t *self) { return self->status; }
const char *feedback_profiler(const feedback_t *self) { return self->profiler; }

const char *feedback_status_name(fb_status_t status)
{
    switch (status) {
    case FB_OK: return "ok";
    case FB_NO_KERNELS: return "no_kernels_profiled";
    case FB_PROFILER_ERROR: return "profiler_error";
    case FB_BAD_INPUT: return "bad_input";
    case FB_TIMED_OUT: return "timed_out";
    case FB_FAILED_AFTER_RETRIES: return "failed_after_retries";
    }
    return "unknown";
}

void feedback_set_device(feedback_t *self, const char *device)
{
    snprintf(self->device, sizeof self->device, "%s", device ? device : "");
}

const char *feedback_device(const feedback_t *self) { return self->device; }

void feedback_set_totals(feedback_t *self, size_t kernels, size_t launches, double time_ns)
{
    self->total_kernels = kernels;
    self->total_launches = launches;
    self->total_time_ns = time_ns;
}

size_t feedback_total_kernels(const feedback_t *self) { return self->total_kernels; }
size_t feedback_total_launches(const feedback_t *self) { return self->total_launches; }
double feedback_total_time_ns(const feedback_t *self) { return self->total_time_ns; }

size_t feedback_add_kernel(feedback_t *self, const char *name, const char *block, const char *grid,
                           size_t launches, double time_ns, double share)
{
    if (self->kernel_count == self->kernel_cap) {
        size_t cap = self->kernel_cap ? self->kernel_cap * 2 : 16;
        fb_kernel_t *kernels = realloc(self->kernels, cap * sizeof *kernels);
        if (!kernels)
            return (size_t) -1;
        self->kernels = kernels;
        self->kernel_cap = cap;
    }
    fb_kernel_t *kernel = &self->kernels[self->kernel_count];
    memset(kernel, 0, sizeof *kernel);
    kernel->name = strdup(name);
    if (!kernel->name)
        return (size_t) -1;
    snprintf(kernel->block, sizeof kernel->block, "%s", block);
    snprintf(kernel->grid, sizeof kernel->grid, "%s", grid);
    kernel->launches = launches;
    kernel->time_ns = time_ns;
    kernel->share = share;
    kernel->launch_order = SIZE_MAX;
    kernel->launch_sd_ns = NAN;
    kernel->ceiling_pct = NAN;
    kernel->ceiling_attain_pct = 100;
    return self->kernel_count++;
}

size_t feedback_kernel_count(const feedback_t *self) { return self->kernel_count; }

void feedback_kernel_metric(fb_kernel_t *kernel, const char *name, double value)
{
    if (kernel->metric_count < FB_KERNEL_METRICS)
        kernel->metrics[kernel->metric_count++] = (fb_metric_t){name, value};
}

void feedback_kernel_ceiling(fb_kernel_t *kernel, const char *unit, double pct, double attain)
{
    snprintf(kernel->ceiling_unit, sizeof kernel->ceiling_unit, "%s", unit ? unit : "");
    kernel->ceiling_pct = isfinite(pct) ? (pct < 0 ? 0 : pct > 100 ? 100 : pct) : NAN;
    kernel->ceiling_attain_pct = isfinite(attain) && attain > 0 && attain < 100 ? attain : 100;
}

void feedback_kernel_close(fb_kernel_t *kernel, unsigned readings, unsigned same, double noise_pct)
{
    assert(same <= readings);
    kernel->close_of = readings;
    kernel->close_same = same;
    kernel->close_noise_pct = noise_pct;
    for (size_t i = 0; i < kernel->close_count; i++)
        free(kernel->close[i].action);
    kernel->close_count = 0;
}

void feedback_kernel_add_close(fb_kernel_t *kernel, const char *category, const char *unit, unsigned readings,
                               bool listed, const char *action)
{
    if (!category || !category[0] || readings == 0)
        return;
    size_t at = kernel->close_count; /* kept most named first; the least named drops out */
    while (at > 0 && kernel->close[at - 1].readings < readings)
        at--;
    if (at >= FB_CLOSE_MAX)
        return;
    if (kernel->close_count == FB_CLOSE_MAX)
        free(kernel->close[FB_CLOSE_MAX - 1].action);
    size_t end = kernel->close_count < FB_CLOSE_MAX ? kernel->close_count : FB_CLOSE_MAX - 1;
    memmove(&kernel->close[at + 1], &kernel->close[at], (end - at) * sizeof kernel->close[0]);
    fb_close_t *c = &kernel->close[at];
    snprintf(c->category, sizeof c->category, "%s", category);
    snprintf(c->unit, sizeof c->unit, "%s", unit ? unit : "");
    c->readings = readings;
    c->listed = listed;
    c->action = action && action[0] && !listed ? strdup(action) : NULL; /* NULL too when memory ran out */
    if (kernel->close_count < FB_CLOSE_MAX)
        kernel->close_count++;
}

fb_kernel_t *feedback_kernel(feedback_t *self, size_t index)
{
    assert(index < self->kernel_count);
    return &self->kernels[index];
}

const fb_kernel_t *feedback_kernel_const(const feedback_t *self, size_t index)
{
    assert(index < self->kernel_count);
    return &self->kernels[index];
}

fb_finding_t *feedback_add_finding(feedback_t *self, size_t kernel, const char *category,
                                   double importance, const char *title, const char *action)
{
    assert(kernel < self->kernel_count);
    if (self->finding_count == self->finding_cap) {
        size_t cap = self->finding_cap ? self->finding_cap * 2 : 32;
        fb_finding_t *findings = realloc(self->findings, cap * sizeof *findings);
        if (!findings)
            return NULL;
        self->findings = findings;
        self->finding_cap = cap;
    }
    fb_finding_t *finding = &self->findings[self->finding_count];
    memset(finding, 0, sizeof *finding);
    finding->title = strdup(title ? title : "");
    finding->action = strdup(action ? action : "");
    if (!finding->title || !finding->action) {
        free(finding->title);
        free(finding->action);
        return NULL;
    }
    finding->kernel = kernel;
    snprintf(finding->category, sizeof finding->category, "%s", category);
    finding->importance = importance;
    finding->speedup = NAN;
    snprintf(finding->source, sizeof finding->source, "profeed");
    self->finding_count++;
    return finding;
}

size_t feedback_finding_count(const feedback_t *self) { return self->finding_count; }

const fb_finding_t *feedback_finding(const feedback_t *self, size_t index)
{
    assert(index < self->finding_count);
    return &self->findings[index];
}

fb_finding_t *feedback_finding_mut(feedback_t *self, size_t index)
{
    assert(index < self->finding_count);
    return &self->findings[index];
}

static void s_replace(char **slot, const char *text)
{
    char *copy = strdup(text ? text : "");
    if (copy) {
        free(*slot);
        *slot = copy;
    }
}

void finding_set_title(fb_finding_t *finding, const char *title) { s_replace(&finding->title, title); }
void finding_set_action(fb_finding_t *finding, const char *action) { s_replace(&finding->action, action); }

void finding_add_evidence(fb_finding_t *finding, const char *metric, double value, const char *unit,
                          const char *fmt, ...)
{
    if (finding->evidence_count >= FB_EVIDENCE_MAX)
        return;
    fb_evidence_t *ev = &finding->evidence[finding->evidence_count++];
    snprintf(ev->metric, sizeof ev->metric, "%s", metric ? metric : "");
    ev->value = value;
    snprintf(ev->unit, sizeof ev->unit, "%s", unit ? unit : "");
    /* Formatted whole, then cut for a reader if it is longer than the field. */
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    text_cut(text, sizeof ev->text - 1, NULL);
    memcpy(ev->text, text, strlen(text) + 1);
}

static int s_finding_cmp(const void *a, const void *b)
{
    const fb_finding_t *x = a, *y = b;
    if (x->kernel != y->kernel)
        return x->kernel < y->kernel ? -1 : 1;
    if (x->primary != y->primary)
        return x->primary ? -1 : 1;
    if (x->importance != y->importance)
        return x->importance > y->importance ? -1 : 1;
    return strcmp(x->category, y->category);
}

void feedback_sort(feedback_t *self)
{
    if (self->finding_count > 1)
        qsort(self->findings, self->finding_count, sizeof *self->findings, s_finding_cmp);
}

static void s_list_add(string_list_t *list, const char *text)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->items[i], text) == 0)
            return;
    if (list->count >= LIST_MAX)
        return;
    char *copy = strdup(text);
    if (copy)
        list->items[list->count++] = copy;
}

void feedback_add_error(feedback_t *self, const char *fmt, ...)
{
    char text[LINE_MAX_CHARS];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    s_list_add(&self->errors, text);
}

void feedback_add_note(feedback_t *self, const char *fmt, ...)
{
    char text[LINE_MAX_CHARS];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    s_list_add(&self->notes, text);
}

void feedback_add_missing(feedback_t *self, const char *what) { s_list_add(&self->missing, what); }

size_t feedback_error_count(const feedback_t *self) { return self->errors.count; }
const char *feedback_error(const feedback_t *self, size_t i)
{
    assert(i < self->errors.count);
    return self->errors.items[i];
}
size_t feedback_note_count(const feedback_t *self) { return self->notes.count; }
const char *feedback_note(const feedback_t *self, size_t i)
{
    assert(i < self->notes.count);
    return self->notes.items[i];
}
size_t feedback_missing_count(const feedback_t *self) { return self->missing.count; }
const char *feedback_missing(const feedback_t *self, size_t i)
{
    assert(i < self->missing.count);
    return self->missing.items[i];
}

void feedback_set_reference(feedback_t *self, const char *profiler, size_t kernels, double time_ns)
{
    self->has_reference = true;
    snprintf(self->reference_profiler, sizeof self->reference_profiler, "%s", profiler ? profiler : "");
    self->reference_kernels = kernels;
    self->reference_time_ns = time_ns;
}

bool feedback_reference(const feedback_t *self, const char **profiler, size_t *kernels, double *time_ns)
{
    if (!self->has_reference)
        return false;
    *profiler = self->reference_profiler;
    *kernels = self->reference_kernels;
    *time_ns = self->reference_time_ns;
    return true;
}

void feedback_set_collated(feedback_t *self, json_t *collated)
{
    json_decref(self->collated);
    self->collated = collated;
}

json_t *feedback_collated(const feedback_t *self) { return self->collated; }

void feedback_set_replayed(feedback_t *self, bool replayed)
{
    self->replayed = replayed;
}

bool feedback_replayed(const feedback_t *self)
{
    return self->replayed;
}

fb_manifest_t *feedback_manifest(feedback_t *self) { return &self->manifest; }
const fb_manifest_t *feedback_manifest_const(const feedback_t *self) { return &self->manifest; }

void feedback_set_comparison(feedback_t *self, fb_comparison_t **comparison_p)
{
    assert(comparison_p);
    comparison_destroy(&self->comparison);
    self->comparison = *comparison_p;
    *comparison_p = NULL;
}

const fb_comparison_t *feedback_comparison(const feedback_t *self) { return self->comparison; }

void feedback_set_stop(feedback_t *self, bool stop, const char *text)
{
    self->stop = stop;
    snprintf(self->stop_text, sizeof self->stop_text, "%s", text ? text : "");
}

bool feedback_stop(const feedback_t *self, const char **text)
{
    if (text)
        *text = self->stop_text;
    return self->stop;
}
