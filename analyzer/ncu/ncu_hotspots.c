#include "ncu_hotspots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line under this share of the quantity is not a cause worth naming. */
#define LINE_SHARE_MIN 0.05
/* A warp has 32 lanes (every NVIDIA GPU to date). */
#define WARP_LANES 32.0

typedef enum {
    M_NONE,
    M_EXCESS_SECTORS,
    M_CONFLICTS,
    M_LOCAL,
    M_IDLE_LANES,
    M_BARRIER,
    M_SAMPLES,
} measure_t;

static bool s_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* Which quantity a finding's lines are ranked by. */
static measure_t s_measure(const char *category)
{
    if (strcmp(category, "uncoalesced_access") == 0)
        return M_EXCESS_SECTORS;
    if (strcmp(category, "bank_conflicts") == 0)
        return M_CONFLICTS;
    if (strcmp(category, "register_spill") == 0 || strcmp(category, "local_memory") == 0)
        return M_LOCAL;
    if (strcmp(category, "divergence") == 0)
        return M_IDLE_LANES;
    if (strcmp(category, "barrier_stall") == 0)
        return M_BARRIER;
    if (s_ends_with(category, "_stall") || s_ends_with(category, "_bound") || strcmp(category, "contention") == 0 ||
        strcmp(category, "l2_atomics") == 0)
        return M_SAMPLES;
    return M_NONE;
}

static double s_key(const ncu_source_kernel_t *k, const ncu_source_site_t *s, measure_t m)
{
    switch (m) {
    case M_EXCESS_SECTORS: return s->sectors_excess;
    case M_CONFLICTS: return s->conflict_wavefronts;
    case M_LOCAL: return k->has_local_sectors ? s->local_sectors : s->local_inst;
    case M_IDLE_LANES: {
        /* Predicated-on lanes do the work; without that column, active lanes. */
        double busy = s->pred_inst > 0 ? s->pred_inst : s->thread_inst;
        double idle = WARP_LANES * s->inst - busy;
        return idle > 0 ? idle : 0;
    }
    case M_BARRIER: return s->barrier_samples;
    case M_SAMPLES: return s->samples;
    case M_NONE: break;
    }
    return 0;
}

static const char *s_measure_name(const ncu_source_kernel_t *k, measure_t m)
{
    switch (m) {
    case M_EXCESS_SECTORS: return "excess global sectors (uncoalesced)";
    case M_CONFLICTS: return "shared bank-conflict wavefronts";
    case M_LOCAL: return k->has_local_sectors ? "local-memory sectors" : "local-memory instructions";
    case M_IDLE_LANES: return "idle lane slots";
    case M_BARRIER: return "barrier stall samples";
    case M_SAMPLES: return "warp stall samples";
    case M_NONE: break;
    }
    return "";
}

/* The number that shows the problem on the line itself, or NAN. */
static double s_value(const ncu_source_site_t *s, measure_t m, const char **unit)
{
    *unit = "";
    switch (m) {
    case M_EXCESS_SECTORS:
        /* Sectors fetched over those a fully coalesced access would need
         * (ncu's "Ideal"): 1.0 is coalesced, 3.0 a 12-byte stride of floats. */
        *unit = "times the coalesced sectors";
        return s->sectors_ideal > 0 ? s->sectors / s->sectors_ideal : NAN;
    case M_CONFLICTS:
        *unit = "ways per shared access";
        return s->shared_inst > 0 ? 1 + s->conflict_wavefronts / s->shared_inst : NAN;
    case M_IDLE_LANES:
        *unit = "of 32 lanes active";
        return s->inst > 0 ? (s->pred_inst > 0 ? s->pred_inst : s->thread_inst) / s->inst : NAN;
    default: return NAN;
    }
}

static const char *s_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Copies `src` into `dst`, cut on a UTF-8 character boundary when too long. */
static void s_copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char) src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Fills a finding's lines: the sites with the largest key, largest first. */
static void s_attach(fb_finding_t *f, const ncu_source_kernel_t *k, measure_t m)
{
    double total = 0;
    for (size_t i = 0; i < k->site_count; i++)
        total += s_key(k, &k->sites[i], m);
    if (!(total > 0))
        return;
    size_t picked[FB_LINES_MAX];
    f->line_count = 0;
    while (f->line_count < FB_LINES_MAX) {
        size_t best = k->site_count;
        double best_key = 0;
        for (size_t i = 0; i < k->site_count; i++) {
            bool used = false;
            for (size_t j = 0; j < f->line_count; j++)
                used |= picked[j] == i;
            double key = s_key(k, &k->sites[i], m);
            if (!used && key > best_key) {
                best = i;
                best_key = key;
            }
        }
        if (best == k->site_count || (f->line_count > 0 && best_key / total < LINE_SHARE_MIN))
            break;
        const ncu_source_site_t *s = &k->sites[best];
        fb_line_t *l = &f->lines[f->line_count];
        memset(l, 0, sizeof *l);
        l->line = s->line;
        l->address = (unsigned long long) s->address;
        s_copy(l->file, sizeof l->file, s->line && s->file ? s_basename(s->file) : "");
        s_copy(l->text, sizeof l->text, s->text);
        s_copy(l->sass, sizeof l->sass, s->line ? s->sass : "");
        l->share = best_key / total;
        snprintf(l->measure, sizeof l->measure, "%s", s_measure_name(k, m));
        const char *unit;
        l->value = s_value(s, m, &unit);
        snprintf(l->unit, sizeof l->unit, "%s", isnan(l->value) ? "" : unit);
        snprintf(l->stall, sizeof l->stall, "%s", s->stall);
        picked[f->line_count++] = best;
    }
}

void ncu_hotspots_attach(feedback_t *fb, const ncu_source_t *source)
{
    if (!source)
        return;
    size_t pages = ncu_source_kernel_count(source);
    bool *used = calloc(pages ? pages : 1, sizeof *used);
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
        const ncu_source_kernel_t *page = ncu_source_find(source, kernel->name);
        if (!page) {
            if (ncu_source_lacks_lines(source, kernel->name))
                feedback_add_note(fb, "%.120s: no source view: the build lacks line info (nvcc -lineinfo), and "
                                      "the capture has no SASS-only page to fall back to",
                                  kernel->name);
            continue;
        }
        /* Every page of the function is used: the SASS-only one beside the
         * page with lines is its fallback, not a stray. */
        for (size_t i = 0; used && i < pages; i++)
            used[i] |= strcmp(ncu_source_kernel(source, i)->function, page->function) == 0;
        if (!page->line_info)
            feedback_add_note(fb, "%.120s: the source page has no line numbers: the build lacks line info "
                                  "(nvcc -lineinfo); hot spots name SASS instructions instead",
                              kernel->name);
        for (size_t i = 0; i < feedback_finding_count(fb); i++) {
            fb_finding_t *f = feedback_finding_mut(fb, i);
            measure_t m = f->kernel == k ? s_measure(f->category) : M_NONE;
            if (m != M_NONE)
                s_attach(f, page, m);
        }
    }
    for (size_t i = 0; used && i < pages; i++)
        if (!used[i])
            feedback_add_note(fb, "a source page for %.120s matches no kernel analyzed here (below the time share, past --top, or not in the capture); its lines are not used",
                              ncu_source_kernel(source, i)->function[0] ? ncu_source_kernel(source, i)->function
                                                                         : "an unnamed function");
    free(used);
}
