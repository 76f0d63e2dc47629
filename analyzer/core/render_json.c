#include <math.h>
#include <stdlib.h>

#include "render.h"
#include "textbuf.h"

/* jansson refuses invalid UTF-8 and NaN; kernel names come from untrusted
 * files and unmeasured values are NaN, so every value goes through these. */
static json_t *s_str(const char *text)
{
    char *clean = textbuf_utf8_clean(text ? text : "");
    json_t *s = clean ? json_string(clean) : NULL;
    free(clean);
    return s ? s : json_string("");
}

static json_t *s_num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *s_finding(const fb_finding_t *f)
{
    json_t *evidence = json_array();
    for (size_t e = 0; e < f->evidence_count; e++) {
        const fb_evidence_t *ev = &f->evidence[e];
        json_array_append_new(evidence, json_pack("{s:o, s:o, s:o, s:o}", "metric", s_str(ev->metric),
                                                  "value", s_num(ev->value), "unit", s_str(ev->unit),
                                                  "text", s_str(ev->text)));
    }
    return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o}", "category", s_str(f->category),
                     "primary", f->primary, "importance", s_num(f->importance),
                     "estimated_speedup", s_num(f->speedup), "title", s_str(f->title), "evidence",
                     evidence, "action", s_str(f->action), "source", s_str(f->source));
}

static json_t *s_strings(const feedback_t *fb, size_t (*count)(const feedback_t *),
                         const char *(*at)(const feedback_t *, size_t))
{
    json_t *list = json_array();
    for (size_t i = 0; i < count(fb); i++)
        json_array_append_new(list, s_str(at(fb, i)));
    return list;
}

char *render_json(const feedback_t *fb, bool with_collated)
{
    json_t *kernels = json_array();
    size_t next = 0;
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
        json_t *findings = json_array();
        for (; next < feedback_finding_count(fb) && feedback_finding(fb, next)->kernel == k; next++)
            json_array_append_new(findings, s_finding(feedback_finding(fb, next)));
        json_array_append_new(
            kernels,
            json_pack("{s:I, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:O, s:o}", "rank", (json_int_t) k + 1,
                      "name", s_str(kernel->name), "block", s_str(kernel->block), "grid",
                      s_str(kernel->grid), "launches", (json_int_t) kernel->launches, "time_ns",
                      s_num(kernel->time_ns), "time_share", s_num(kernel->share), "bottleneck",
                      s_str(kernel->bottleneck), "metrics", kernel->metrics, "findings", findings));
    }
    json_t *root = json_pack(
        "{s:o, s:o, s:o, s:{s:I, s:I, s:I, s:o}, s:o, s:o, s:o, s:o}", "profiler",
        s_str(feedback_profiler(fb)), "status", s_str(feedback_status_name(feedback_status(fb))),
        "device", s_str(feedback_device(fb)), "summary", "kernels_profiled",
        (json_int_t) feedback_total_kernels(fb), "launches_profiled",
        (json_int_t) feedback_total_launches(fb), "kernels_analyzed",
        (json_int_t) feedback_kernel_count(fb), "total_time_ns", s_num(feedback_total_time_ns(fb)),
        "kernels", kernels, "missing_metrics", s_strings(fb, feedback_missing_count, feedback_missing),
        "notes", s_strings(fb, feedback_note_count, feedback_note), "errors",
        s_strings(fb, feedback_error_count, feedback_error));
    if (!root)
        return NULL;
    if (with_collated && feedback_collated(fb))
        json_object_set(root, "collated", feedback_collated(fb));
    char *out = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(root);
    return out;
}
