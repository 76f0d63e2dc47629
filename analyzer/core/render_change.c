/* render_change: the lines every text renderer shares for a round of an
 * optimization loop: the change since the baseline, whether to stop, and the
 * manifest (docs/baselines.md). Plain text, one item a line, each opened with
 * `bullet`; Markdown uses the same lines as a list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ceiling.h"
#include "comparison.h"
#include "render.h"
#include "text_cut.h"

#define NAME_SHOWN 80

static void s_name(textbuf_t *tb, const char *name)
{
    int n = (int) strlen(name);
    textbuf_printf(tb, "%.*s%s", n > NAME_SHOWN ? NAME_SHOWN : n, name, n > NAME_SHOWN ? "..." : "");
}

/* `noise`: a category that a limiter moved by a close call put on the list,
 * marked so that it does not read as the rewrite's doing ("" for none). */
static void s_categories(textbuf_t *tb, const char *label, const change_categories_t *list, const char *noise)
{
    textbuf_printf(tb, "; %s: ", label);
    if (list->count == 0)
        textbuf_append(tb, "none");
    for (size_t i = 0; i < list->count; i++)
        textbuf_printf(tb, "%s%s%s", i ? ", " : "", list->category[i],
                       noise[0] && strcmp(list->category[i], noise) == 0 ? " (the close call)" : "");
}

static void s_kernel(textbuf_t *tb, const kernel_change_t *c, const char *bullet)
{
    textbuf_printf(tb, "%s", bullet);
    s_name(tb, c->name);
    if (strcmp(c->name, c->baseline_name) != 0) {
        textbuf_append(tb, " (was ");
        s_name(tb, c->baseline_name);
        textbuf_printf(tb, ", matched by %s)", c->matched_by);
    }
    char before[32], after[32];
    render_duration(c->before_ns, before, sizeof before);
    render_duration(c->after_ns, after, sizeof after);
    textbuf_printf(tb, ": %s -> %s per launch", before, after);
    if (isfinite(c->change))
        textbuf_printf(tb, " (%+.1f%%, noise +-%.1f%% %s)", 100 * c->change, 100 * c->band,
                       strcmp(c->band_source, "default") == 0 ? "by default" : "from the launches");
    textbuf_printf(tb, ": %s; limiter %s -> %s", comparison_verdict_name(c->verdict),
                   c->limiter_before[0] ? c->limiter_before : "not judged",
                   c->limiter_after[0] ? c->limiter_after : "not judged");
    if (c->limiter_close)
        textbuf_append(tb, " (a close call: run-to-run noise alone can move it)");
    s_categories(tb, "resolved", &c->resolved, c->limiter_close ? c->limiter_before : "");
    s_categories(tb, "new", &c->added, c->limiter_close ? c->limiter_after : "");
    s_categories(tb, "unchanged", &c->unchanged, "");
    textbuf_append(tb, "\n");
}

static void s_list(textbuf_t *tb, const char *bullet, const char *label, char *const *items, size_t count)
{
    if (count == 0)
        return;
    textbuf_printf(tb, "%s%s: ", bullet, label);
    for (size_t i = 0; i < count; i++) {
        textbuf_append(tb, i ? ", " : "");
        s_name(tb, items[i]);
    }
    textbuf_append(tb, "\n");
}

void render_change(textbuf_t *tb, const feedback_t *fb, const char *bullet)
{
    const fb_comparison_t *c = feedback_comparison(fb);
    if (!c)
        return;
    if (c->problem[0]) {
        textbuf_printf(tb, "Change since baseline %.200s: not compared: %s\n", c->baseline, c->problem);
        return;
    }
    textbuf_printf(tb, "Change since baseline %.200s: %s", c->baseline, comparison_verdict_name(c->verdict));
    if (isfinite(c->change))
        textbuf_printf(tb, ", %+.1f%% time over %zu matched kernel%s (noise +-%.1f%%)", 100 * c->change,
                       c->kernel_count, c->kernel_count == 1 ? "" : "s", 100 * c->band);
    textbuf_append(tb, "\n");
    for (size_t i = 0; i < c->kernel_count; i++)
        s_kernel(tb, &c->kernels[i], bullet);
    s_list(tb, bullet, "appeared (analyzed now, not in the baseline's analysis: new, or under its time-share cut)", c->appeared, c->appeared_count);
    s_list(tb, bullet, "disappeared (in the baseline's analysis, not analyzed now: gone, or under the time-share cut)", c->disappeared, c->disappeared_count);
    s_list(tb, bullet, "measured differently", c->differences, c->difference_count);
}

void render_stop(textbuf_t *tb, const feedback_t *fb)
{
    const char *text;
    bool stop = feedback_stop(fb, &text);
    if (text[0])
        textbuf_printf(tb, "When to stop: %s%s\n", text, stop ? "." : "");
}

/* "on the same work": the bound is the busiest unit's headroom for the bytes and
 * instructions the kernel has now; a fix that removes work (unused sectors,
 * replays, idle lanes) can pay more, and its finding says so. */
void render_ceiling(const fb_kernel_t *kernel, char *out, size_t cap)
{
    double left = ceiling_left(kernel);
    if (isfinite(left) && kernel->ceiling_attain_pct < 100)
        snprintf(out, cap, "%s at %.0f%% of peak (%.0f%% is attainable): at most %.2fx left on the same work",
                 kernel->ceiling_unit,
                 kernel->ceiling_pct, kernel->ceiling_attain_pct, left);
    else if (isfinite(left))
        snprintf(out, cap, "%s at %.0f%% of peak: at most %.2fx left on the same work", kernel->ceiling_unit,
                 kernel->ceiling_pct, left);
    else
        snprintf(out, cap, "%s", "");
}

/* A first finding as a close call names it: "dram_bound", or with the unit
 * where its category spans several ("compute_bound:xu"). */
static const char *s_named(const char *category, const char *unit, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", category, unit[0] ? ":" : "", unit);
    return out;
}

void render_close_call(const fb_kernel_t *kernel, char *out, size_t cap)
{
    if (cap == 0)
        return;
    out[0] = '\0';
    if (kernel->close_of == 0 || kernel->close_count == 0)
        return;
    textbuf_t tb;
    textbuf_init(&tb);
    textbuf_printf(&tb, "with the counters moved by run-to-run noise (%.0f%% one sigma), ",
                   isfinite(kernel->close_noise_pct) ? kernel->close_noise_pct : 0);
    const fb_close_t *act = NULL; /* the most named other whose action the kernel does not list */
    char name[64];
    for (size_t i = 0; i < kernel->close_count; i++) {
        const fb_close_t *c = &kernel->close[i];
        const char *other = strcmp(c->category, "none") == 0 ? "no finding"
                                                              : s_named(c->category, c->unit, name, sizeof name);
        textbuf_printf(&tb, "%s%u of %u readings %s with %s%s", i ? ", " : "", c->readings, kernel->close_of,
                       c->readings == 1 ? "leads" : "lead", other, c->listed ? " (among the findings below)" : "");
        if (!act && c->action)
            act = c;
    }
    textbuf_printf(&tb, " rather than %s: another profile may name it first",
                   kernel->bottleneck[0] ? s_named(kernel->bottleneck, kernel->bottleneck_unit, name, sizeof name)
                                         : "the first finding");
    if (act)
        textbuf_printf(&tb, ". What %s would have you do: %s", s_named(act->category, act->unit, name, sizeof name),
                       act->action);
    char *text = textbuf_take(&tb);
    if (text) {
        size_t n = strlen(text);
        if (n >= cap) /* cut on a word, said (text_cut.h) */
            text_cut(text, cap - 1, NULL);
        snprintf(out, cap, "%s", text);
    }
    free(text);
}

void render_manifest(textbuf_t *tb, const feedback_t *fb)
{
    const fb_manifest_t *m = feedback_manifest_const(fb);
    textbuf_printf(tb, "Manifest: gpu %s; driver %s; %s %s; clock control %s; plan %s", m->gpu[0] ? m->gpu : "unknown",
                   m->driver_version[0] ? m->driver_version : "unknown", feedback_profiler(fb),
                   m->profiler_version[0] ? m->profiler_version : "(version unknown)",
                   m->clock_control[0] ? m->clock_control : "unknown", m->plan[0] ? m->plan : "unknown");
    if (m->metrics_hash[0])
        textbuf_printf(tb, " (%zu metrics, hash %s)", m->metrics_count, m->metrics_hash);
    /* The target (command line or files) is in the JSON and the wire only:
     * the agent knows what it ran, and a prompt need not spend on it. */
    textbuf_printf(tb, "; profeed %s\n", m->profeed_version);
}
