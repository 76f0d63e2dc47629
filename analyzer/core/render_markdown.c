#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "textbuf.h"
#include "utf8.h"

/* Table cells cannot hold '|' or newlines; kernel names often hold neither,
 * but files are untrusted. */
static void s_cell(textbuf_t *tb, const char *text)
{
    char *clean = utf8_clean_dup(text);
    if (!clean)
        return;
    for (char *p = clean; *p; p++)
        if (*p == '|' || *p == '\n' || *p == '\r')
            *p = ' ';
    textbuf_append(tb, clean);
    free(clean);
}

char *render_markdown(const feedback_t *fb)
{
    textbuf_t tb;
    textbuf_init(&tb);
    char profiled[96];
    render_profiled(fb, profiled, sizeof profiled);
    textbuf_append(&tb, "# profeed feedback\n\n");
    if (feedback_replayed(fb))
        textbuf_append(&tb, "**Replayed** from a recorded capture, not measured now.\n\n");
    textbuf_printf(&tb, "- Profiler: %s\n- Device: ", feedback_profiler(fb));
    s_cell(&tb, feedback_device(fb)[0] ? feedback_device(fb) : "unknown");
    textbuf_printf(&tb, "\n- Status: **%s**\n- Profiled: %zu kernels, %s\n",
                   feedback_status_name(feedback_status(fb)), feedback_total_kernels(fb), profiled);
    for (size_t i = 0; i < feedback_error_count(fb); i++) {
        textbuf_append(&tb, "- Error: ");
        s_cell(&tb, feedback_error(fb, i));
        textbuf_append(&tb, "\n");
    }
    if (feedback_comparison(fb)) {
        textbuf_append(&tb, "\n## Change since the baseline\n\n");
        char *change = NULL;
        textbuf_t part;
        textbuf_init(&part);
        render_change(&part, fb, "- ");
        change = textbuf_take(&part);
        if (change) {
            textbuf_append(&tb, change);
            free(change);
        }
    }
    const char *stop_text;
    feedback_stop(fb, &stop_text);
    if (stop_text[0]) {
        textbuf_append(&tb, "\n**When to stop:** ");
        s_cell(&tb, stop_text);
        textbuf_append(&tb, "\n");
    }
    size_t next = 0;
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
        char time[32];
        render_duration(kernel->time_ns, time, sizeof time);
        textbuf_printf(&tb, "\n## %zu. `", k + 1);
        s_cell(&tb, kernel->name);
        textbuf_append(&tb, "`\n\n");
        if (kernel->segment[0]) {
            textbuf_append(&tb, "Benchmark ");
            s_cell(&tb, kernel->segment);
            textbuf_append(&tb, "; ");
        }
        if (!isnan(kernel->share))
            textbuf_printf(&tb, "%.1f%% of profiled time; ", 100 * kernel->share);
        textbuf_printf(&tb, "%s over %zu launch%s; ", time, kernel->launches,
                       kernel->launches == 1 ? "" : "es");
        if (kernel->grid[0] || kernel->block[0])
            textbuf_printf(&tb, "grid %s, block %s; ", kernel->grid, kernel->block);
        if (kernel->launch_ids[0]) {
            textbuf_append(&tb, "ncu IDs ");
            s_cell(&tb, kernel->launch_ids);
            textbuf_append(&tb, " (its other launches behave differently and are listed apart); ");
        }
        textbuf_printf(&tb, "limiter: **%s**", kernel->bottleneck[0] ? kernel->bottleneck : "not judged");
        char ceiling[160];
        render_ceiling(kernel, ceiling, sizeof ceiling);
        if (ceiling[0])
            textbuf_printf(&tb, "; ceiling: %s", ceiling);
        char close[RENDER_CLOSE_CALL_MAX];
        render_close_call(kernel, close, sizeof close);
        if (close[0])
            textbuf_printf(&tb, "; close call: %s", close);
        textbuf_append(&tb, "\n\n");
        textbuf_append(&tb, "| # | Finding | Importance | Est. speedup | Evidence | Action |\n"
                            "|---|---|---|---|---|---|\n");
        int rank = 0;
        for (; next < feedback_finding_count(fb) && feedback_finding(fb, next)->kernel == k; next++) {
            const fb_finding_t *f = feedback_finding(fb, next);
            textbuf_printf(&tb, "| %d | **%s**: ", ++rank, f->category);
            s_cell(&tb, f->title);
            textbuf_printf(&tb, " | %.0f | ", f->importance);
            if (!isnan(f->speedup))
                textbuf_printf(&tb, "%.0f%%", f->speedup);
            textbuf_append(&tb, " | ");
            for (size_t e = 0; e < f->evidence_count; e++) {
                if (e)
                    textbuf_append(&tb, "<br>");
                s_cell(&tb, f->evidence[e].text);
            }
            for (size_t i = 0; i < f->line_count; i++) {
                char line[768];
                render_line(&f->lines[i], 120, line, sizeof line);
                textbuf_append(&tb, i == 0 && f->evidence_count == 0 ? "Where: " : i == 0 ? "<br>Where: " : "<br>");
                s_cell(&tb, line);
            }
            textbuf_append(&tb, " | ");
            s_cell(&tb, f->action);
            textbuf_append(&tb, " |\n");
        }
    }
    if (feedback_missing_count(fb) > 0) {
        textbuf_append(&tb, "\n## Not judged: metrics missing\n\n");
        for (size_t i = 0; i < feedback_missing_count(fb); i++) {
            textbuf_append(&tb, "- ");
            s_cell(&tb, feedback_missing(fb, i));
            textbuf_append(&tb, "\n");
        }
    }
    if (feedback_note_count(fb) > 0) {
        textbuf_append(&tb, "\n## Notes\n\n");
        for (size_t i = 0; i < feedback_note_count(fb); i++) {
            textbuf_append(&tb, "- ");
            s_cell(&tb, feedback_note(fb, i));
            textbuf_append(&tb, "\n");
        }
    }
    textbuf_append(&tb, "\n## Manifest\n\n");
    textbuf_t part;
    textbuf_init(&part);
    render_manifest(&part, fb);
    char *manifest = textbuf_take(&part);
    if (manifest) {
        s_cell(&tb, manifest);
        free(manifest);
    }
    textbuf_append(&tb, "\n");
    return textbuf_take(&tb);
}
