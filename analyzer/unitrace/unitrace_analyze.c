/* unitrace_analyze: the passes of a unitrace job (metrics tables and
 * timelines), their groups, benchmark windows and per-kernel row matching;
 * each kernel is then analyzed by unitrace_kernel.c. */
#include "unitrace_analyze.h"

#include <assert.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyzer_backend.h"
#include "close_call.h"
#include "noise.h"
#include "roofs.h"
#include "unitrace_kernel.h"
#include "unitrace_table.h"
#include "unitrace_timeline.h"

#define MAX_PASSES 64
#define MAX_NOTES 32

static const char *const s_group_names[UT__GROUPS] = {"ComputeBasic", "MemoryProfile",
                                                   "VectorEngineProfile", "VectorEngineStalls"};

typedef struct {
    char *key;
    unitrace_table_t *table;
    unitrace_timeline_t *timeline;
    int group; /* unitrace_group_t, or -1 when not recognised */
} ut_pass_t;

struct unitrace_job_t {
    ut_pass_t passes[MAX_PASSES];
    size_t count;
    char *notes[MAX_NOTES];
    size_t note_count;
};

static double s_or0(double x) { return analysis_has(x) ? x : 0; }

static void s_note(unitrace_job_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void s_note(unitrace_job_t *self, const char *fmt, ...)
{
    if (self->note_count >= MAX_NOTES)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char *copy = strdup(text);
    if (copy)
        self->notes[self->note_count++] = copy;
}

unitrace_job_t *unitrace_job_new(void) { return calloc(1, sizeof(unitrace_job_t)); }

void unitrace_job_destroy(unitrace_job_t **self_p)
{
    assert(self_p);
    unitrace_job_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++) {
        free(self->passes[i].key);
        unitrace_table_destroy(&self->passes[i].table);
        unitrace_timeline_destroy(&self->passes[i].timeline);
    }
    for (size_t i = 0; i < self->note_count; i++)
        free(self->notes[i]);
    free(self);
    *self_p = NULL;
}

/* Files of one run share a process id: trace.metrics.<pid> and
 * <app>.<pid>.json. Without a pass key, that pid says which belong together. */
static void s_pass_key(const char *pass_key, const char *name, char *out, size_t cap)
{
    if (pass_key && *pass_key) {
        snprintf(out, cap, "%s", pass_key);
        return;
    }
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *end = base + strlen(base);
    if (end - base > 5 && strcmp(end - 5, ".json") == 0)
        end -= 5;
    const char *start = end;
    while (start > base && isdigit((unsigned char) start[-1]))
        start--;
    if (start < end && start > base && start[-1] == '.')
        snprintf(out, cap, "pid %.*s", (int) (end - start), start);
    else
        snprintf(out, cap, "%s", base);
}

static ut_pass_t *s_pass(unitrace_job_t *self, const char *key)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp(self->passes[i].key, key) == 0)
            return &self->passes[i];
    if (self->count >= MAX_PASSES)
        return NULL;
    ut_pass_t *pass = &self->passes[self->count];
    pass->key = strdup(key);
    if (!pass->key)
        return NULL;
    pass->group = -1;
    self->count++;
    return pass;
}

static bool s_ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

size_t unitrace_job_pass_count(const unitrace_job_t *self)
{
    return self->count;
}

pf_status_t unitrace_job_add(unitrace_job_t *self, const char *pass_key, const char *name,
                             const char *bytes, size_t len, pf_error_t *err)
{
    char key[128], source[256];
    s_pass_key(pass_key, name, key, sizeof key);
    snprintf(source, sizeof source, "%s%s%s", pass_key ? "pass " : "", pass_key ? pass_key : "",
             pass_key ? ": " : "");
    snprintf(source + strlen(source), sizeof source - strlen(source), "%s", name);
    size_t k = 0;
    while (k < len && (bytes[k] == ' ' || bytes[k] == '\n' || bytes[k] == '\r' || bytes[k] == '\0'))
        k++;
    bool json = s_ends_with(name, ".json") || (k < len && bytes[k] == '{');
    bool metrics = strstr(name, ".metrics.") || s_ends_with(name, ".metrics") ||
                   analyzer_text_contains(bytes, len < 65536 ? len : 65536, "GpuTime[ns]");
    if (!json && !metrics) {
        s_note(self, "%s: neither a metrics table nor a timeline; skipped", source);
        return PF_OK;
    }
    ut_pass_t *pass = s_pass(self, key);
    if (!pass)
        return pf_error_set(err, PF_ETOOBIG, "%s: more than %d unitrace passes", source, MAX_PASSES);
    if (json) {
        if (pass->timeline) {
            s_note(self, "%s: a second timeline for pass %s; the first is used", source, key);
            return PF_OK;
        }
        pass->timeline = unitrace_timeline_parse(source, bytes, len, err);
        return pass->timeline ? PF_OK : (err ? err->code : PF_EBADINPUT);
    }
    if (pass->table) {
        s_note(self, "%s: a second metrics table for pass %s; the first is used", source, key);
        return PF_OK;
    }
    pass->table = unitrace_table_parse(source, bytes, len, err);
    if (!pass->table)
        return err ? err->code : PF_EBADINPUT;
    pass->group = unitrace_kernel_group(pass->table);
    return PF_OK;
}
/* "name[SIMD32 {1024; 1; 1} {256; 1; 1}]" -> name, simd, groups, group size;
 * "(anonymous namespace)::" is dropped from the name. */
static void s_split_name(const char *kernel, char *name, size_t cap, char *grid, size_t gcap,
                         char *block, size_t bcap)
{
    size_t len = strlen(kernel);
    grid[0] = block[0] = '\0';
    const char *suffix = NULL;
    if (len > 0 && kernel[len - 1] == ']') {
        int depth = 0;
        for (size_t i = len; i-- > 0;) {
            depth += kernel[i] == ']' ? 1 : kernel[i] == '[' ? -1 : 0;
            if (depth == 0) {
                suffix = kernel + i;
                break;
            }
        }
    }
    size_t keep = suffix ? (size_t) (suffix - kernel) : len;
    size_t n = 0;
    const char *anon = "(anonymous namespace)::";
    for (size_t i = 0; i < keep && n + 1 < cap;) {
        if (strncmp(kernel + i, anon, strlen(anon)) == 0) {
            i += strlen(anon);
            continue;
        }
        name[n++] = kernel[i++];
    }
    name[n] = '\0';
    if (!suffix)
        return;
    const char *g = strchr(suffix, '{'), *b = g ? strchr(g + 1, '{') : NULL;
    if (g && b) {
        const char *ge = strchr(g, '}'), *be = strchr(b, '}');
        if (ge && be) {
            snprintf(grid, gcap, "%.*s", (int) (ge - g + 1), g);
            snprintf(block, bcap, "%.*s", (int) (be - b + 1), b);
        }
        /* Keep the SIMD width with the name: it is part of what was compiled. */
        const char *simd = strstr(suffix, "SIMD");
        if (simd && n + 12 < cap) {
            size_t w = strcspn(simd, " ]");
            snprintf(name + n, cap - n, " [%.*s]", (int) (w > 10 ? 10 : w), simd);
        }
    } else {
        snprintf(grid, gcap, "%.*s", (int) (len - keep > 30 ? 30 : len - keep), suffix);
    }
}

/* ---- collation: segments, kernels ----------------------------------------- */

typedef struct {
    const char *kernel;
    size_t *rows;      /* base-pass rows of this kernel in the segment */
    size_t count;
    double time;       /* sum of GpuTime (query) or number of samples (sampling) */
    size_t median;     /* the base row with the median GpuTime */
} kgroup_t;

/* Segment index in `tl` with this label, or -1. */
static int s_find_segment(const unitrace_timeline_t *tl, const char *label)
{
    for (size_t s = 0; tl && s < tl->segment_count; s++)
        if (strcmp(tl->segments[s].label, label) == 0)
            return (int) s;
    return -1;
}

/* The rows of `pass` that belong to segment `label`: those whose instance ran
 * inside that window of the pass's own timeline. Without a timeline or
 * instance ids, all rows. */
static size_t *s_segment_rows(const ut_pass_t *pass, const char *label, size_t *count)
{
    size_t n = unitrace_table_rows(pass->table);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    *count = 0;
    if (!rows)
        return NULL;
    int seg = label ? s_find_segment(pass->timeline, label) : -1;
    int id_col = unitrace_table_column(pass->table, UT_COL_ID);
    for (size_t r = 0; r < n; r++) {
        /* Sampling mode writes idle intervals as "NoKernel(Before <name>)". */
        if (strncmp(unitrace_table_kernel(pass->table, r), "NoKernel(", 9) == 0)
            continue;
        if (seg >= 0 && id_col >= 0) {
            double id = unitrace_table_cell(pass->table, r, id_col);
            if (!analysis_has(id) || !unitrace_timeline_in_segment(pass->timeline, (size_t) seg, (long) id))
                continue;
        }
        rows[(*count)++] = r;
    }
    return rows;
}

/* A base-pass row with what sorting needs, so the comparison needs no table. */
typedef struct {
    size_t row;
    const char *kernel;
    double time;
} rowref_t;

static int s_rowref_cmp(const void *a, const void *b)
{
    const rowref_t *x = a, *y = b;
    int c = strcmp(x->kernel, y->kernel);
    if (c)
        return c;
    return (x->time > y->time) - (x->time < y->time);
}

static int s_kgroup_cmp(const void *a, const void *b)
{
    const kgroup_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return strcmp(x->kernel, y->kernel);
}

/* Groups rows by kernel (rewriting `rows` in kernel, then GpuTime, order);
 * returns the groups ordered by time, largest first. */
static kgroup_t *s_group_kernels(const unitrace_table_t *t, size_t *rows, size_t count, bool sampling,
                                 size_t *kcount)
{
    *kcount = 0;
    rowref_t *refs = malloc((count ? count : 1) * sizeof *refs);
    kgroup_t *groups = calloc(count ? count : 1, sizeof *groups);
    if (!refs || !groups) {
        free(refs);
        free(groups);
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        refs[i] = (rowref_t){rows[i], unitrace_table_kernel(t, rows[i]),
                             s_or0(unitrace_table_value(t, rows[i], UT_COL_TIME))};
    qsort(refs, count, sizeof *refs, s_rowref_cmp);
    for (size_t i = 0; i < count; i++)
        rows[i] = refs[i].row;
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j < count && strcmp(refs[j].kernel, refs[i].kernel) == 0)
            j++;
        kgroup_t *g = &groups[(*kcount)++];
        g->kernel = refs[i].kernel;
        g->rows = rows + i;
        g->count = j - i;
        g->median = rows[i + (j - i) / 2]; /* sorted by GpuTime within the kernel */
        g->time = 0;
        for (size_t k = i; k < j; k++)
            g->time += sampling ? 1 : refs[k].time;
        i = j;
    }
    free(refs);
    qsort(groups, *kcount, sizeof *groups, s_kgroup_cmp);
    return groups;
}

/* In another pass: the kernel's row whose GpuTime is closest to `target`
 * (query mode), or all its rows (sampling). */
static unitrace_view_t s_match(const ut_pass_t *pass, const size_t *rows, size_t count, const char *kernel,
                      double target, bool sampling, size_t *scratch)
{
    unitrace_view_t v = {.table = pass ? pass->table : NULL, .rows = scratch, .count = 0};
    if (!pass)
        return v;
    double best = INFINITY;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(unitrace_table_kernel(pass->table, rows[i]), kernel) != 0)
            continue;
        if (sampling) {
            scratch[v.count++] = rows[i];
            continue;
        }
        double d = fabs(s_or0(unitrace_table_value(pass->table, rows[i], UT_COL_TIME)) - target);
        if (d < best) {
            best = d;
            scratch[0] = rows[i];
            v.count = 1;
        }
    }
    return v;
}

typedef struct {
    const unitrace_job_t *job;
    const analysis_options_t *options;
    feedback_t *fb;
    const roof_t *roof;
    const ut_pass_t *pass[UT__GROUPS];
    bool sampling;
    size_t kernels_total;
    double time_total;
} actx_t;

/* What a kernel's close call (close_call.h) re-reads: its views, as the
 * analysis read them. */
typedef struct {
    const roof_t *roof;
    bool sampling;
    const char *name;
    const unitrace_view_t *views;
} reading_t;

/* One noisy reading of the kernel's views (unitrace_view_t), analyzed into
 * `scratch`. */
static void s_reanalyze(void *arg, unsigned reading, double sigma, feedback_t *scratch, size_t index)
{
    const reading_t *r = arg;
    uint64_t seed = noise_seed(r->name, reading);
    unitrace_view_t noisy[UT__GROUPS];
    for (int g = 0; g < UT__GROUPS; g++) {
        noisy[g] = r->views[g];
        noisy[g].noise_seed = seed;
        noisy[g].noise_sigma = sigma;
    }
    unitrace_kernel_analyze(scratch, index, r->roof, r->sampling, noisy);
}

static void s_analyze_segment(actx_t *a, const char *label, const char *shown_label)
{
    size_t base_count = 0, mp_count = 0, vep_count = 0, ves_count = 0;
    size_t *base = s_segment_rows(a->pass[UT_CB], label, &base_count);
    size_t *mp = a->pass[UT_MP] ? s_segment_rows(a->pass[UT_MP], label, &mp_count) : NULL;
    size_t *vep = a->pass[UT_VEP] ? s_segment_rows(a->pass[UT_VEP], label, &vep_count) : NULL;
    size_t *ves = a->pass[UT_VES] ? s_segment_rows(a->pass[UT_VES], label, &ves_count) : NULL;
    size_t scratch_n = (mp_count > vep_count ? mp_count : vep_count) + 1;
    if (ves_count + 1 > scratch_n)
        scratch_n = ves_count + 1;
    size_t *scratch_mp = malloc(scratch_n * sizeof(size_t)), *scratch_vep = malloc(scratch_n * sizeof(size_t));
    size_t *scratch_ves = malloc(scratch_n * sizeof(size_t));
    size_t kcount = 0;
    kgroup_t *groups = base && scratch_mp && scratch_vep && scratch_ves
                           ? s_group_kernels(a->pass[UT_CB]->table, base, base_count, a->sampling, &kcount)
                           : NULL;
    double total = 0;
    for (size_t k = 0; k < kcount; k++)
        total += groups[k].time;
    a->kernels_total += kcount;
    a->time_total += a->sampling ? 0 : total;
    size_t analyzed = 0, skipped = 0;
    for (size_t k = 0; groups && k < kcount; k++) {
        const kgroup_t *g = &groups[k];
        double share = total > 0 ? g->time / total : NAN;
        if (((analyzed > 0 || a->options->min_share_strict) && analysis_has(share) && share < a->options->min_share) ||
            (a->options->top && analyzed >= a->options->top)) {
            skipped++;
            continue;
        }
        char name[512], grid[64], block[64];
        s_split_name(g->kernel, name, sizeof name, grid, sizeof grid, block, sizeof block);
        size_t index = feedback_add_kernel(a->fb, name, block, grid, g->count,
                                           a->sampling ? NAN : g->time, share);
        if (index == (size_t) -1)
            break;
        snprintf(feedback_kernel(a->fb, index)->segment, sizeof feedback_kernel(a->fb, index)->segment,
                 "%s", shown_label ? shown_label : "");
        size_t median = g->median;
        unitrace_view_t views[UT__GROUPS];
        views[UT_CB] = (unitrace_view_t){.table = a->pass[UT_CB]->table, .rows = a->sampling ? g->rows : &median,
                                         .count = a->sampling ? g->count : 1};
        double target = unitrace_table_value(a->pass[UT_CB]->table, g->median, UT_COL_TIME);
        views[UT_MP] = s_match(a->pass[UT_MP], mp, mp_count, g->kernel, target, a->sampling, scratch_mp);
        views[UT_VEP] = s_match(a->pass[UT_VEP], vep, vep_count, g->kernel, target, a->sampling, scratch_vep);
        views[UT_VES] = s_match(a->pass[UT_VES], ves, ves_count, g->kernel, target, a->sampling, scratch_ves);
        size_t first = feedback_finding_count(a->fb);
        unitrace_kernel_analyze(a->fb, index, a->roof, a->sampling, views);
        reading_t reading = {a->roof, a->sampling, name, views};
        close_call_judge(a->fb, index, first, s_reanalyze, &reading);
        analyzed++;
    }
    if (skipped)
        feedback_add_note(a->fb, "%s%s%s%zu more kernel%s below the %.0f%% threshold or past --top "
                          "were not analyzed", shown_label ? "benchmark " : "",
                          shown_label ? shown_label : "", shown_label ? ": " : "", skipped,
                          skipped == 1 ? "" : "s", 100 * a->options->min_share);
    free(groups);
    free(base);
    free(mp);
    free(vep);
    free(ves);
    free(scratch_mp);
    free(scratch_vep);
    free(scratch_ves);
}

/* Sum over kernels of their median instance time in a segment: the key the
 * seed ranks benchmark windows by. */
static double s_segment_time(const ut_pass_t *cb, const char *label)
{
    size_t count = 0;
    size_t *rows = s_segment_rows(cb, label, &count);
    size_t kcount = 0;
    kgroup_t *groups = rows ? s_group_kernels(cb->table, rows, count, false, &kcount) : NULL;
    double sum = 0;
    for (size_t k = 0; groups && k < kcount; k++)
        sum += s_or0(unitrace_table_value(cb->table, groups[k].median, UT_COL_TIME));
    free(groups);
    free(rows);
    return sum;
}

typedef struct {
    size_t index;
    double time;
} segkey_t;

static int s_segkey_cmp(const void *a, const void *b)
{
    const segkey_t *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static void s_segments(actx_t *a)
{
    const ut_pass_t *cb = a->pass[UT_CB];
    const unitrace_timeline_t *tl = cb->timeline;
    if (a->sampling) {
        feedback_add_note(a->fb, "metric-sampling mode: samples are averaged per kernel and passes "
                                 "matched by kernel name; GpuTime[ns] is the sampling interval, so "
                                 "shares are shares of samples, not measured kernel times");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    if (!tl || tl->segment_count == 0) {
        feedback_add_note(a->fb, "%s: the whole run is one segment", !tl
                          ? "no timeline (chrome JSON) in the ComputeBasic pass"
                          : "no 'ittapi::model run loop' window in the timeline (fine if the "
                            "benchmark is timed by other means)");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    if (unitrace_table_column(cb->table, UT_COL_ID) < 0) {
        feedback_add_note(a->fb, "the ComputeBasic table has no GlobalInstanceId column (older "
                                 "unitrace): rows cannot be placed in benchmark windows; the whole "
                                 "run is one segment");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    size_t n = tl->segment_count;
    segkey_t keys[64];
    size_t used = n < 64 ? n : 64;
    if (n > used)
        feedback_add_note(a->fb, "%zu benchmark windows; the first %zu are considered", n, used);
    size_t with_rows = 0;
    for (size_t s = 0; s < used; s++) {
        keys[s] = (segkey_t){s, s_segment_time(cb, tl->segments[s].label)};
        with_rows += keys[s].time > 0;
    }
    if (with_rows == 0) {
        feedback_add_note(a->fb, "no metrics rows fall inside any benchmark window; the whole run "
                                 "is used");
        s_analyze_segment(a, NULL, NULL);
        return;
    }
    bool chosen[64] = {false};
    if (used <= 3 || a->options->all_segments) {
        for (size_t s = 0; s < used; s++)
            chosen[s] = true;
    } else {
        qsort(keys, used, sizeof *keys, s_segkey_cmp);
        chosen[keys[(used - 1) / 2].index] = true; /* the median window */
        chosen[keys[used - 1].index] = true;       /* and the slowest */
        feedback_add_note(a->fb, "%zu benchmark windows: analyzed the median and the slowest "
                                 "(--all-segments for every one)", used);
    }
    for (size_t s = 0; s < used; s++) {
        if (!chosen[s])
            continue;
        char shown[160];
        snprintf(shown, sizeof shown, "%zu/%zu %s", s + 1, used, tl->segments[s].label);
        s_analyze_segment(a, tl->segments[s].label, shown);
    }
}

feedback_t *unitrace_analyze(const unitrace_job_t *job, const analysis_options_t *options,
                             const unitrace_device_t *device)
{
    assert(job && options);
    feedback_t *fb = feedback_new("unitrace");
    if (!fb)
        return NULL;
    unitrace_device_t none = {0};
    if (!device)
        device = &none;
    actx_t a = {.job = job, .options = options, .fb = fb};
    a.roof = roofs_lookup_worker(device->gpu_name, device->pci_id, device->cpu_model);
    feedback_set_device(fb, a.roof ? a.roof->name : device->gpu_name);
    for (size_t i = 0; i < job->note_count; i++)
        feedback_add_note(fb, "%s", job->notes[i]);

    /* Each pass's group was recognised when its table was read; the first
     * pass of a group is used. */
    for (size_t i = 0; i < job->count; i++) {
        const ut_pass_t *pass = &job->passes[i];
        if (!pass->table)
            continue;
        if (pass->group < 0) {
            feedback_add_note(fb, "pass %s: metric group not recognised from its %zu columns (PVC's "
                              "MemProfile or VectorEngineN sets, say); not used", pass->key,
                              unitrace_table_columns(pass->table));
            continue;
        }
        if (!a.pass[pass->group])
            a.pass[pass->group] = pass;
        else
            feedback_add_note(fb, "pass %s: a second %s pass; the first is used", pass->key,
                              s_group_names[pass->group]);
    }
    if (!a.pass[UT_CB]) {
        bool any = false;
        for (size_t i = 0; i < job->count; i++)
            any |= job->passes[i].table != NULL;
        feedback_set_status(fb, FB_NO_KERNELS);
        feedback_add_error(fb, "%s", any ? "no ComputeBasic pass: kernel times, memory traffic and "
                                           "ALU counts come from it; add `--group ComputeBasic`"
                                         : "no unitrace metrics table (trace.metrics.<pid>) in the job");
        return fb;
    }
    if (!a.pass[UT_MP])
        feedback_add_missing(fb, "MemoryProfile pass (unitrace --metric-query --group MemoryProfile): "
                                 "SLM bank-conflict rate and L3 behaviour");
    if (!a.pass[UT_VES])
        feedback_add_missing(fb, "VectorEngineStalls pass (unitrace --metric-query --group "
                                 "VectorEngineStalls): stall reasons; without them the XVEs' stalls "
                                 "are not split into causes (barriers, dependencies, instruction fetch)");
    if (!a.pass[UT_VEP])
        feedback_add_missing(fb, "VectorEngineProfile pass (unitrace --metric-query --group "
                                 "VectorEngineProfile): thread occupancy and instruction mix");
    if (!a.roof)
        feedback_add_note(fb, "no roofs for \"%s\"%s%s: memory bandwidth and roofline are unavailable; "
                          "findings use the counters' own utilizations", device->gpu_name ? device->gpu_name : "an unnamed GPU",
                          device->cpu_model ? " / " : "", device->cpu_model ? device->cpu_model : "");
    a.sampling = unitrace_table_sampling(a.pass[UT_CB]->table);
    s_segments(&a);
    size_t launches = unitrace_table_rows(a.pass[UT_CB]->table);
    feedback_set_totals(fb, a.kernels_total, launches, a.sampling || a.time_total <= 0 ? NAN : a.time_total);
    feedback_set_status(fb, feedback_kernel_count(fb) > 0 ? FB_OK : FB_NO_KERNELS);
    feedback_sort(fb);
    return fb;
}
