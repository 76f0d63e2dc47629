/* render_json: the feedback as one JSON document, written directly.
 *
 * A feedback is small and its shape fixed, so it is written straight into a
 * buffer rather than built as a jansson tree and dumped (which cost more than
 * parsing the capture did). Strings are made valid UTF-8 and escaped by
 * common/json_string; NaN (not measured) is written as null. The collated
 * data, when asked for, is a jansson tree and is dumped as one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_string.h"
#include "render.h"
#include "textbuf.h"

/* A JSON string: common/json_string.h. */
static void s_string(textbuf_t *tb, const char *text)
{
    json_string_append(tb, text);
}

static void s_number(textbuf_t *tb, double x)
{
    if (!isfinite(x))
        textbuf_append(tb, "null");
    else if (x == floor(x) && fabs(x) < 1e15)
        textbuf_printf(tb, "%.0f", x);
    else
        textbuf_printf(tb, "%.6g", x);
}

/* `"key": ` with the indent of the given depth. */
static void s_key(textbuf_t *tb, int depth, const char *key, bool first)
{
    textbuf_printf(tb, "%s\n%*s", first ? "" : ",", 2 * depth, "");
    s_string(tb, key);
    textbuf_append(tb, ": ");
}

static void s_string_list(textbuf_t *tb, const feedback_t *fb, size_t (*count)(const feedback_t *),
                          const char *(*at)(const feedback_t *, size_t))
{
    textbuf_append(tb, "[");
    for (size_t i = 0; i < count(fb); i++) {
        textbuf_printf(tb, "%s\n    ", i ? "," : "");
        s_string(tb, at(fb, i));
    }
    textbuf_append(tb, count(fb) ? "\n  ]" : "]");
}

static void s_finding(textbuf_t *tb, const fb_finding_t *f)
{
    textbuf_append(tb, "{");
    s_key(tb, 5, "category", true);
    s_string(tb, f->category);
    s_key(tb, 5, "primary", false);
    textbuf_append(tb, f->primary ? "true" : "false");
    s_key(tb, 5, "importance", false);
    s_number(tb, f->importance);
    s_key(tb, 5, "estimated_speedup", false);
    s_number(tb, f->speedup);
    s_key(tb, 5, "title", false);
    s_string(tb, f->title);
    s_key(tb, 5, "evidence", false);
    textbuf_append(tb, "[");
    for (size_t e = 0; e < f->evidence_count; e++) {
        const fb_evidence_t *ev = &f->evidence[e];
        textbuf_printf(tb, "%s\n%12s{\"metric\": ", e ? "," : "", "");
        s_string(tb, ev->metric);
        textbuf_append(tb, ", \"value\": ");
        s_number(tb, ev->value);
        textbuf_append(tb, ", \"unit\": ");
        s_string(tb, ev->unit);
        textbuf_append(tb, ", \"text\": ");
        s_string(tb, ev->text);
        textbuf_append(tb, "}");
    }
    textbuf_printf(tb, "%s]", f->evidence_count ? "\n          " : "");
    s_key(tb, 5, "action", false);
    s_string(tb, f->action);
    s_key(tb, 5, "source", false);
    s_string(tb, f->source);
    textbuf_append(tb, "\n        }");
}

static void s_kernel(textbuf_t *tb, const feedback_t *fb, size_t k, size_t *next)
{
    const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
    textbuf_append(tb, "{");
    s_key(tb, 3, "rank", true);
    textbuf_printf(tb, "%zu", k + 1);
    s_key(tb, 3, "name", false);
    s_string(tb, kernel->name);
    s_key(tb, 3, "block", false);
    s_string(tb, kernel->block);
    s_key(tb, 3, "grid", false);
    s_string(tb, kernel->grid);
    s_key(tb, 3, "launches", false);
    textbuf_printf(tb, "%zu", kernel->launches);
    s_key(tb, 3, "time_ns", false);
    s_number(tb, kernel->time_ns);
    s_key(tb, 3, "time_share", false);
    s_number(tb, kernel->share);
    s_key(tb, 3, "bottleneck", false);
    s_string(tb, kernel->bottleneck);
    s_key(tb, 3, "segment", false);
    s_string(tb, kernel->segment);
    s_key(tb, 3, "metrics", false);
    textbuf_append(tb, "{");
    for (size_t m = 0; m < kernel->metric_count; m++) {
        s_key(tb, 4, kernel->metrics[m].name, m == 0);
        s_number(tb, kernel->metrics[m].value);
    }
    textbuf_append(tb, kernel->metric_count ? "\n      }" : "}");
    s_key(tb, 3, "findings", false);
    textbuf_append(tb, "[");
    bool first = true;
    for (; *next < feedback_finding_count(fb) && feedback_finding(fb, *next)->kernel == k; (*next)++) {
        textbuf_printf(tb, "%s\n        ", first ? "" : ",");
        s_finding(tb, feedback_finding(fb, *next));
        first = false;
    }
    textbuf_append(tb, first ? "]" : "\n      ]");
    textbuf_append(tb, "\n    }");
}

char *render_json(const feedback_t *fb, bool with_collated)
{
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_append(&tb, "{");
    s_key(&tb, 1, "profiler", true);
    s_string(&tb, feedback_profiler(fb));
    s_key(&tb, 1, "status", false);
    s_string(&tb, feedback_status_name(feedback_status(fb)));
    s_key(&tb, 1, "device", false);
    s_string(&tb, feedback_device(fb));
    s_key(&tb, 1, "replayed", false);
    textbuf_append(&tb, feedback_replayed(fb) ? "true" : "false");
    s_key(&tb, 1, "summary", false);
    textbuf_printf(&tb, "{\"kernels_profiled\": %zu, \"launches_profiled\": %zu, "
                        "\"kernels_analyzed\": %zu, \"total_time_ns\": ",
                   feedback_total_kernels(fb), feedback_total_launches(fb), feedback_kernel_count(fb));
    s_number(&tb, feedback_total_time_ns(fb));
    textbuf_append(&tb, "}");
    const char *ref_profiler;
    size_t ref_kernels;
    double ref_time;
    if (feedback_reference(fb, &ref_profiler, &ref_kernels, &ref_time)) {
        s_key(&tb, 1, "reference", false);
        textbuf_append(&tb, "{\"profiler\": ");
        s_string(&tb, ref_profiler);
        textbuf_printf(&tb, ", \"kernels\": %zu, \"total_time_ns\": ", ref_kernels);
        s_number(&tb, ref_time);
        textbuf_append(&tb, "}");
    }
    s_key(&tb, 1, "kernels", false);
    textbuf_append(&tb, "[");
    size_t next = 0;
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        textbuf_printf(&tb, "%s\n    ", k ? "," : "");
        s_kernel(&tb, fb, k, &next);
    }
    textbuf_append(&tb, feedback_kernel_count(fb) ? "\n  ]" : "]");
    s_key(&tb, 1, "missing_metrics", false);
    s_string_list(&tb, fb, feedback_missing_count, feedback_missing);
    s_key(&tb, 1, "notes", false);
    s_string_list(&tb, fb, feedback_note_count, feedback_note);
    s_key(&tb, 1, "errors", false);
    s_string_list(&tb, fb, feedback_error_count, feedback_error);
    if (with_collated && feedback_collated(fb)) {
        /* jansson escapes and validates; its strings come from ncu_csv,
         * cleaned to UTF-8 before they entered the tree. */
        char *collated = json_dumps(feedback_collated(fb), JSON_COMPACT | JSON_REAL_PRECISION(10));
        if (!collated) {
            textbuf_free(&tb);
            return NULL;
        }
        s_key(&tb, 1, "collated", false);
        textbuf_append(&tb, collated);
        free(collated);
    }
    textbuf_append(&tb, "\n}");
    return textbuf_take(&tb);
}
