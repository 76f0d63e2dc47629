#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler.h"
#include "render.h"
#include "text_cut.h"
#include "textbuf.h"
#include "token_estimate.h"
#include "wire_check.h"

_Static_assert(RENDER_MIN_CHARS == WIRE_MIN_MAX_CHARS, "the renderer and the wire agree on the smallest budget");
_Static_assert(RENDER_MIN_TOKENS == WIRE_MIN_MAX_TOKENS, "... and on the smallest token budget");

/* Evidence lines shown per finding in text; JSON carries all of them. */
#define TEXT_EVIDENCE 4
#define KERNEL_NAME_SHOWN 120
/* Bytes of a source line shown in text ("Where:"); JSON carries all of it. */
#define TEXT_SOURCE_SHOWN 80

void render_duration(double ns, char *out, size_t cap)
{
    if (isnan(ns))
        snprintf(out, cap, "?");
    else if (ns >= 1e13) /* hours and more: a capture's garbage, not a kernel; said in a few digits */
        snprintf(out, cap, "%.3g s", ns / 1e9);
    else if (ns >= 1e9)
        snprintf(out, cap, "%.2f s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf(out, cap, "%.2f ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf(out, cap, "%.1f us", ns / 1e3);
    else
        snprintf(out, cap, "%.0f ns", ns);
}

/* The profiler as people call it. */
static const char *s_profiler_name(const char *profiler)
{
    const profiler_t *p = profiler_by_name(profiler);
    return p ? p->display : profiler;
}

void render_line(const fb_line_t *l, size_t text_max, char *out, size_t cap)
{
    char text[sizeof l->text + 4];
    size_t n = strlen(l->text);
    if (n > text_max) {
        n = text_max;
        while (n > 0 && ((unsigned char) l->text[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
    }
    snprintf(text, sizeof text, "%.*s%s", (int) n, l->text, n < strlen(l->text) ? "..." : "");
    char value[64] = "";
    if (!isnan(l->value))
        snprintf(value, sizeof value, ", %.1f %s", l->value, l->unit);
    char stall[48] = "";
    if (l->stall[0])
        snprintf(stall, sizeof stall, ", top stall %s", l->stall);
    char where[sizeof text + sizeof l->file + 48];
    if (l->line)
        snprintf(where, sizeof where, "line %u `%s`%s%s%s", l->line, text, l->file[0] ? " (" : "", l->file,
                 l->file[0] ? ")" : "");
    else
        snprintf(where, sizeof where, "SASS 0x%llx `%s`", l->address, text);
    snprintf(out, cap, "%s: %.0f%% of the %s%s%s", where, 100 * l->share, l->measure, value, stall);
}

void render_profiled(const feedback_t *fb, char *out, size_t cap)
{
    size_t launches = feedback_total_launches(fb);
    double total = feedback_total_time_ns(fb);
    if (!isnan(total)) {
        char time[32];
        render_duration(total, time, sizeof time);
        snprintf(out, cap, "%zu launch%s, %s profiled", launches, launches == 1 ? "" : "es", time);
        return;
    }
    /* Metric sampling counts samples, not times: each kernel has a share of
     * samples and no duration. */
    bool sampled = feedback_kernel_count(fb) > 0;
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
        sampled &= isnan(kernel->time_ns) && !isnan(kernel->share);
    }
    if (sampled)
        snprintf(out, cap, "%zu sample%s (metric sampling: shares of samples, no kernel times)", launches,
                 launches == 1 ? "" : "s");
    else
        snprintf(out, cap, "%zu launch%s, no kernel time measured", launches, launches == 1 ? "" : "es");
}

const char *render_reference_verdict(double own_ns, double reference_ns, char *out, size_t cap)
{
    out[0] = '\0';
    if (isnan(own_ns) || isnan(reference_ns) || reference_ns <= 0)
        return out;
    double ratio = own_ns / reference_ns;
    /* Shown with two decimals: what rounds to 1.00x is neither. */
    if (ratio >= 0.995 && ratio < 1.005)
        snprintf(out, cap, "this version takes the reference's GPU time (1.00x)");
    else
        snprintf(out, cap, "this version takes %.2fx the reference's GPU time (%s)", ratio,
                 ratio < 1 ? "faster" : "slower");
    return out;
}

static void s_header(textbuf_t *tb, const feedback_t *fb)
{
    char profiled[96];
    render_profiled(fb, profiled, sizeof profiled);
    textbuf_printf(tb, "profeed feedback (%s%s%s)%s: %zu kernel%s, %s; status: %s\n",
                   s_profiler_name(feedback_profiler(fb)),
                   feedback_device(fb)[0] ? ", " : "", feedback_device(fb),
                   feedback_replayed(fb) ? " REPLAYED from a recorded capture, not measured now" : "",
                   feedback_total_kernels(fb), feedback_total_kernels(fb) == 1 ? "" : "s", profiled,
                   feedback_status_name(feedback_status(fb)));
    for (size_t i = 0; i < feedback_error_count(fb); i++)
        textbuf_printf(tb, "Error: %s\n", feedback_error(fb, i));
    const char *ref_profiler;
    size_t ref_kernels;
    double ref_time;
    if (feedback_reference(fb, &ref_profiler, &ref_kernels, &ref_time)) {
        char ref[32];
        render_duration(ref_time, ref, sizeof ref);
        textbuf_printf(tb, "Reference implementation (%s): %zu kernel%s, %s", ref_profiler, ref_kernels,
                       ref_kernels == 1 ? "" : "s", ref);
        char verdict[96];
        if (render_reference_verdict(feedback_total_time_ns(fb), ref_time, verdict, sizeof verdict)[0])
            textbuf_printf(tb, "; %s", verdict);
        textbuf_append(tb, "\n");
    }
    render_change(tb, fb, "- ");
    render_stop(tb, fb);
}

static void s_kernel(textbuf_t *tb, const feedback_t *fb, size_t k)
{
    const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
    char time[32];
    render_duration(kernel->time_ns, time, sizeof time);
    int shown = (int) strlen(kernel->name) > KERNEL_NAME_SHOWN ? KERNEL_NAME_SHOWN : (int) strlen(kernel->name);
    textbuf_printf(tb, "\n%zu. %.*s%s", k + 1, shown, kernel->name,
                   shown < (int) strlen(kernel->name) ? "..." : "");
    if (kernel->segment[0])
        textbuf_printf(tb, " [benchmark %s]", kernel->segment);
    if (!isnan(kernel->share) && isnan(kernel->time_ns))
        textbuf_printf(tb, " (%.1f%% of samples", 100 * kernel->share); /* metric sampling */
    else if (!isnan(kernel->share))
        textbuf_printf(tb, " (%.1f%% of %s time, %s", 100 * kernel->share,
                       kernel->segment[0] ? "its benchmark's" : "profiled", time);
    else
        textbuf_printf(tb, " (%s", time);
    textbuf_printf(tb, ", %zu %s", kernel->launches,
                   isnan(kernel->time_ns) && !isnan(kernel->share)
                       ? (kernel->launches == 1 ? "sample" : "samples")
                       : (kernel->launches == 1 ? "launch" : "launches"));
    if (kernel->grid[0] || kernel->block[0])
        textbuf_printf(tb, ", grid %s x block %s", kernel->grid, kernel->block);
    if (kernel->launch_ids[0])
        textbuf_printf(tb, "; ncu IDs %s: its other launches behave differently and are listed apart",
                       kernel->launch_ids);
    textbuf_append(tb, ")\n");
    char ceiling[160];
    render_ceiling(kernel, ceiling, sizeof ceiling);
    if (ceiling[0])
        textbuf_printf(tb, "   Ceiling: %s\n", ceiling);
    char close[RENDER_CLOSE_CALL_MAX];
    render_close_call(kernel, close, sizeof close);
    if (close[0])
        textbuf_printf(tb, "   Close call: %s\n", close);
}

/* "NCU's estimate: " for a finding from a profiler's own rules (its source is
 * "<profiler>:Rule", and the table says whose they are), else "est. ". */
static void s_whose_estimate(const char *source, char *out, size_t cap)
{
    const char *colon = strchr(source, ':');
    char name[32];
    const profiler_t *p = NULL;
    if (colon && (size_t) (colon - source) < sizeof name) {
        memcpy(name, source, (size_t) (colon - source));
        name[colon - source] = '\0';
        p = profiler_by_name(name);
    }
    if (p && p->rules_by)
        snprintf(out, cap, "%s's estimate: ", p->rules_by);
    else
        snprintf(out, cap, "est. ");
}

static void s_finding(textbuf_t *tb, const fb_finding_t *f, int rank)
{
    /* The estimate is the share of the kernel's time the change would save
     * (NCU's "estimated speedup" convention), shown with the speedup it means. */
    if (!isnan(f->speedup)) {
        char whose[64];
        s_whose_estimate(f->source, whose, sizeof whose);
        double x = f->speedup < 99.9 ? 100 / (100 - f->speedup) : INFINITY;
        if (x < 10)
            textbuf_printf(tb, "   %c) [%s, %sgain %.0f%% of its time = %.1fx] %s\n", 'a' + (rank % 26),
                           f->category, whose, f->speedup, x, f->title);
        else if (isfinite(x))
            textbuf_printf(tb, "   %c) [%s, %sgain %.0f%% of its time = %.0fx] %s\n", 'a' + (rank % 26),
                           f->category, whose, f->speedup, x, f->title);
        else
            textbuf_printf(tb, "   %c) [%s, %sgain %.0f%% of its time] %s\n", 'a' + (rank % 26),
                           f->category, whose, f->speedup, f->title);
    } else
        textbuf_printf(tb, "   %c) [%s, importance %.0f] %s\n", 'a' + (rank % 26), f->category, f->importance,
                       f->title);
    if (f->evidence_count > 0) {
        textbuf_append(tb, "      Evidence: ");
        for (size_t e = 0; e < f->evidence_count && e < TEXT_EVIDENCE; e++)
            textbuf_printf(tb, "%s%s", e ? "; " : "", f->evidence[e].text);
        textbuf_append(tb, "\n");
    }
    if (f->line_count > 0) {
        textbuf_append(tb, "      Where: ");
        for (size_t i = 0; i < f->line_count; i++) {
            char line[768];
            render_line(&f->lines[i], TEXT_SOURCE_SHOWN, line, sizeof line);
            textbuf_printf(tb, "%s%s", i ? "; " : "", line);
        }
        textbuf_append(tb, "\n");
    }
    if (f->action[0])
        textbuf_printf(tb, "      Action: %s\n", f->action);
}

static void s_footer(textbuf_t *tb, const feedback_t *fb, size_t omitted, size_t kernels_omitted)
{
    if (omitted > 0 || kernels_omitted > 0)
        textbuf_printf(tb, "\n(left out to fit the length limit: %zu lower-ranked finding%s, %zu kernel%s)\n",
                       omitted, omitted == 1 ? "" : "s", kernels_omitted, kernels_omitted == 1 ? "" : "s");
    if (feedback_missing_count(fb) > 0) {
        textbuf_append(tb, "\nNot judged, metrics missing (add to the pass plan):\n");
        for (size_t i = 0; i < feedback_missing_count(fb); i++)
            textbuf_printf(tb, "- %s\n", feedback_missing(fb, i));
    }
    if (feedback_note_count(fb) > 0) {
        textbuf_append(tb, "\nNotes:\n");
        for (size_t i = 0; i < feedback_note_count(fb); i++)
            textbuf_printf(tb, "- %s\n", feedback_note(fb, i));
    }
    textbuf_append(tb, "\n");
    render_manifest(tb, fb);
}

/* What the text shows: every kernel up to `kernels`, the findings marked
 * included, and the footer (missing metrics and notes) if `footer`. */
typedef struct {
    bool *included;
    size_t omitted;
    size_t kernels;
    bool footer;
} layout_t;

static char *s_render(const feedback_t *fb, const layout_t *layout)
{
    textbuf_t tb;
    textbuf_init(&tb);
    s_header(&tb, fb);
    if (feedback_kernel_count(fb) == 0 && feedback_status(fb) == FB_NO_KERNELS)
        textbuf_append(&tb, "No kernels were profiled: check that the program launches GPU "
                            "kernels and that the kernel filter (-k, NVTX range) matches them.\n");
    size_t next = 0;
    for (size_t k = 0; k < layout->kernels; k++) {
        s_kernel(&tb, fb, k);
        int rank = 0, judged = 0;
        for (; next < feedback_finding_count(fb) && feedback_finding(fb, next)->kernel == k; next++) {
            judged++;
            if (layout->included[next])
                s_finding(&tb, feedback_finding(fb, next), rank++);
        }
        if (judged == 0)
            textbuf_append(&tb, "   (no finding could be judged from the metrics present)\n");
    }
    size_t kernels_omitted = feedback_kernel_count(fb) - layout->kernels;
    if (layout->footer)
        s_footer(&tb, fb, layout->omitted, kernels_omitted);
    else if (layout->omitted > 0 || kernels_omitted > 0)
        textbuf_printf(&tb, "\n(left out to fit the length limit: %zu findings, %zu kernels, notes)\n",
                       layout->omitted, kernels_omitted);
    return textbuf_take(&tb);
}

/* A secondary finding's weight for the length budget: its importance scaled
 * by its kernel's share of time. */
static double s_score(const feedback_t *fb, const fb_finding_t *f)
{
    double share = feedback_kernel_const(fb, f->kernel)->share;
    return f->importance * (isnan(share) ? 1 : share);
}

/* Makes the layout smaller by one step: the least important secondary
 * finding first, then the footer, then whole kernels from the least time
 * up (primaries go with their kernel). Returns false when nothing is left
 * to drop but the first kernel. */
static bool s_shrink(const feedback_t *fb, layout_t *layout)
{
    size_t n = feedback_finding_count(fb), drop = n;
    for (size_t i = 0; i < n; i++) {
        const fb_finding_t *f = feedback_finding(fb, i);
        if (layout->included[i] && !f->primary && f->kernel < layout->kernels &&
            (drop == n || s_score(fb, f) < s_score(fb, feedback_finding(fb, drop))))
            drop = i;
    }
    if (drop < n) {
        layout->included[drop] = false;
        layout->omitted++;
        return true;
    }
    if (layout->footer) {
        layout->footer = false;
        return true;
    }
    if (layout->kernels > 1) {
        layout->kernels--;
        return true;
    }
    return false;
}

/* Whether a rendering is over either budget (0: no limit). */
static bool s_over(const char *text, size_t max_chars, size_t max_tokens)
{
    size_t len = strlen(text);
    return (max_chars > 0 && len > max_chars) || (max_tokens > 0 && token_estimate(text, len) > max_tokens);
}

char *render_text_within(const feedback_t *fb, size_t max_chars, size_t max_tokens)
{
    size_t n = feedback_finding_count(fb);
    layout_t layout = {.kernels = feedback_kernel_count(fb), .footer = true};
    layout.included = malloc((n ? n : 1) * sizeof *layout.included);
    if (!layout.included)
        return NULL;
    for (size_t i = 0; i < n; i++)
        layout.included[i] = true;
    char *text = s_render(fb, &layout);
    while (text && s_over(text, max_chars, max_tokens) && s_shrink(fb, &layout)) {
        free(text);
        text = s_render(fb, &layout);
    }
    free(layout.included);
    /* Even one kernel does not fit: cut between words, and say so (the
     * budget is at least RENDER_MIN_CHARS or RENDER_MIN_TOKENS, room for
     * the mark). A token budget becomes the longest prefix within it. */
    static const char mark[] = " [...] (cut to fit the length limit)\n";
    if (text && max_tokens > 0 && s_over(text, 0, max_tokens)) {
        size_t room = token_estimate_prefix(text, max_tokens - token_estimate(mark, strlen(mark)));
        text_cut(text, room + strlen(mark), mark);
    }
    if (text && max_chars > 0)
        text_cut(text, max_chars, mark);
    return text;
}

char *render_text(const feedback_t *fb, size_t max_chars)
{
    return render_text_within(fb, max_chars, 0);
}
