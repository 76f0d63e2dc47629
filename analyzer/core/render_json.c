/* render_json: the feedback as one JSON document, written directly.
 *
 * A feedback is small and its shape fixed, so it is written straight into a
 * buffer rather than built as a jansson tree and dumped (which cost more than
 * parsing the capture did). Strings are made valid UTF-8 and escaped by
 * common/json_string; NaN (not measured) is written as null. The collated
 * data, when asked for, is a jansson tree and is dumped as one. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ceiling.h"
#include "comparison.h"
#include "json_string.h"
#include "render.h"
#include "textbuf.h"

/* A JSON string: common/json_string.h. */
static void s_string(textbuf_t *tb, const char *text)
{
    json_string_append(tb, text);
}

/* A string, or null where it is empty: a field that may name nothing. */
static void s_string_or_null(textbuf_t *tb, const char *text)
{
    if (text && text[0])
        s_string(tb, text);
    else
        textbuf_append(tb, "null");
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
    /* Only from a source page: feedback without one keeps its shape. */
    if (f->line_count > 0) {
        s_key(tb, 5, "lines", false);
        textbuf_append(tb, "[");
        for (size_t i = 0; i < f->line_count; i++) {
            const fb_line_t *l = &f->lines[i];
            textbuf_printf(tb, "%s\n%12s{\"line\": ", i ? "," : "", "");
            if (l->line)
                textbuf_printf(tb, "%u", l->line);
            else
                textbuf_append(tb, "null");
            textbuf_printf(tb, ", \"address\": \"0x%llx\", \"file\": ", l->address);
            s_string(tb, l->file);
            textbuf_append(tb, ", \"source\": ");
            s_string(tb, l->line ? l->text : "");
            textbuf_append(tb, ", \"sass\": ");
            s_string(tb, l->line ? l->sass : l->text);
            textbuf_append(tb, ", \"share\": ");
            s_number(tb, l->share);
            textbuf_append(tb, ", \"measure\": ");
            s_string(tb, l->measure);
            textbuf_append(tb, ", \"value\": ");
            s_number(tb, l->value);
            textbuf_append(tb, ", \"unit\": ");
            s_string(tb, l->unit);
            textbuf_append(tb, ", \"stall\": ");
            s_string(tb, l->stall);
            textbuf_append(tb, "}");
        }
        textbuf_append(tb, "\n          ]");
    }
    s_key(tb, 5, "action", false);
    s_string(tb, f->action);
    s_key(tb, 5, "source", false);
    s_string(tb, f->source);
    s_key(tb, 5, "unit", false);
    s_string_or_null(tb, f->unit);
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
    s_key(tb, 3, "bottleneck_unit", false);
    s_string_or_null(tb, kernel->bottleneck_unit);
    s_key(tb, 3, "segment", false);
    s_string(tb, kernel->segment);
    s_key(tb, 3, "launch_order", false);
    s_number(tb, kernel->launch_order == SIZE_MAX ? NAN : (double) kernel->launch_order);
    s_key(tb, 3, "launch_sd_ns", false);
    s_number(tb, kernel->launch_sd_ns);
    s_key(tb, 3, "launch_ids", false);
    s_string_or_null(tb, kernel->launch_ids);
    s_key(tb, 3, "ceiling", false);
    if (isfinite(kernel->ceiling_pct)) {
        textbuf_append(tb, "{\"unit\": ");
        s_string(tb, kernel->ceiling_unit);
        textbuf_append(tb, ", \"pct_of_peak\": ");
        s_number(tb, kernel->ceiling_pct);
        textbuf_append(tb, ", \"attainable_pct\": ");
        s_number(tb, kernel->ceiling_attain_pct);
        textbuf_append(tb, ", \"at_most_left\": ");
        s_number(tb, ceiling_left(kernel));
        textbuf_append(tb, "}");
    } else {
        textbuf_append(tb, "null");
    }
    s_key(tb, 3, "close_call", false);
    if (kernel->close_of > 0) {
        textbuf_printf(tb, "{\"readings\": %u, \"noise_pct\": ", kernel->close_of);
        s_number(tb, kernel->close_noise_pct);
        textbuf_printf(tb, ", \"same_first\": %u, \"other_firsts\": [", kernel->close_same);
        for (size_t i = 0; i < kernel->close_count; i++) {
            textbuf_append(tb, i ? ", {\"category\": " : "{\"category\": ");
            s_string(tb, kernel->close[i].category);
            textbuf_append(tb, ", \"unit\": ");
            s_string_or_null(tb, kernel->close[i].unit);
            textbuf_printf(tb, ", \"readings\": %u, \"listed\": %s, \"action\": ", kernel->close[i].readings,
                           kernel->close[i].listed ? "true" : "false");
            if (kernel->close[i].action)
                s_string(tb, kernel->close[i].action);
            else
                textbuf_append(tb, "null");
            textbuf_append(tb, "}");
        }
        textbuf_append(tb, "]}");
    } else {
        textbuf_append(tb, "null");
    }
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

static void s_strings(textbuf_t *tb, char *const *items, size_t count)
{
    textbuf_append(tb, "[");
    for (size_t i = 0; i < count; i++) {
        textbuf_append(tb, i ? ", " : "");
        s_string(tb, items[i]);
    }
    textbuf_append(tb, "]");
}

static void s_categories(textbuf_t *tb, const char *key, const change_categories_t *list)
{
    textbuf_printf(tb, ", \"%s\": [", key);
    for (size_t i = 0; i < list->count; i++) {
        textbuf_append(tb, i ? ", " : "");
        s_string(tb, list->category[i]);
    }
    textbuf_append(tb, "]");
}

static void s_change(textbuf_t *tb, const kernel_change_t *c)
{
    textbuf_append(tb, "{\"name\": ");
    s_string(tb, c->name);
    textbuf_append(tb, ", \"baseline_name\": ");
    s_string(tb, c->baseline_name);
    textbuf_append(tb, ", \"matched_by\": ");
    s_string(tb, c->matched_by);
    textbuf_append(tb, ", \"time_before_ns\": ");
    s_number(tb, c->before_ns);
    textbuf_append(tb, ", \"time_after_ns\": ");
    s_number(tb, c->after_ns);
    textbuf_append(tb, ", \"change\": ");
    s_number(tb, c->change);
    textbuf_append(tb, ", \"noise_band\": ");
    s_number(tb, c->band);
    textbuf_append(tb, ", \"noise_source\": ");
    s_string(tb, c->band_source);
    textbuf_append(tb, ", \"limiter_before\": ");
    s_string(tb, c->limiter_before);
    textbuf_append(tb, ", \"limiter_after\": ");
    s_string(tb, c->limiter_after);
    textbuf_printf(tb, ", \"limiter_close_call\": %s", c->limiter_close ? "true" : "false");
    s_categories(tb, "resolved", &c->resolved);
    s_categories(tb, "new", &c->added);
    s_categories(tb, "unchanged", &c->unchanged);
    textbuf_append(tb, ", \"verdict\": ");
    s_string(tb, comparison_verdict_name(c->verdict));
    textbuf_append(tb, "}");
}

/* The change since the baseline (comparison.h), or null. */
static void s_comparison(textbuf_t *tb, const fb_comparison_t *c)
{
    if (!c) {
        textbuf_append(tb, "null");
        return;
    }
    textbuf_append(tb, "{\"baseline\": ");
    s_string(tb, c->baseline);
    textbuf_append(tb, ", \"problem\": ");
    if (c->problem[0])
        s_string(tb, c->problem);
    else
        textbuf_append(tb, "null");
    textbuf_append(tb, ", \"verdict\": ");
    s_string(tb, c->problem[0] ? "" : comparison_verdict_name(c->verdict));
    textbuf_append(tb, ", \"change\": ");
    s_number(tb, c->change);
    textbuf_append(tb, ", \"noise_band\": ");
    s_number(tb, c->band);
    textbuf_append(tb, ", \"kernels\": [");
    for (size_t i = 0; i < c->kernel_count; i++) {
        textbuf_append(tb, i ? ",\n      " : "\n      ");
        s_change(tb, &c->kernels[i]);
    }
    textbuf_append(tb, c->kernel_count ? "\n    ]" : "]");
    textbuf_append(tb, ", \"appeared\": ");
    s_strings(tb, c->appeared, c->appeared_count);
    textbuf_append(tb, ", \"disappeared\": ");
    s_strings(tb, c->disappeared, c->disappeared_count);
    textbuf_append(tb, ", \"manifest_differences\": ");
    s_strings(tb, c->differences, c->difference_count);
    textbuf_append(tb, "}");
}

static void s_manifest(textbuf_t *tb, const feedback_t *fb)
{
    const fb_manifest_t *m = feedback_manifest_const(fb);
    const struct {
        const char *key, *value;
    } fields[] = {
        {"gpu", m->gpu}, {"driver_version", m->driver_version}, {"profiler", feedback_profiler(fb)},
        {"profiler_version", m->profiler_version}, {"clock_control", m->clock_control}, {"plan", m->plan},
        {"metrics_hash", m->metrics_hash}, {"profeed_version", m->profeed_version}, {"target", m->target},
    };
    textbuf_append(tb, "{");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        textbuf_printf(tb, "%s\"%s\": ", i ? ", " : "", fields[i].key);
        s_string(tb, fields[i].value);
    }
    textbuf_printf(tb, ", \"metrics_count\": %zu}", m->metrics_count);
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
    s_key(&tb, 1, "manifest", false);
    s_manifest(&tb, fb);
    s_key(&tb, 1, "comparison", false);
    s_comparison(&tb, feedback_comparison(fb));
    const char *stop_text;
    bool stop = feedback_stop(fb, &stop_text);
    s_key(&tb, 1, "stop", false);
    textbuf_printf(&tb, "{\"consider_stopping\": %s, \"text\": ", stop ? "true" : "false");
    s_string(&tb, stop_text);
    textbuf_append(&tb, "}");
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
