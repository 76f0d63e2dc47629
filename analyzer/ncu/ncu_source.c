/* ncu_source: the source page parser (see ncu_source.h).
 *
 * One file of ~750 lines because it is one parser: the header's column map,
 * the kernel being filled, the per-function SASS address map and the row
 * bound are one parse state (page_t) that every row handler reads and
 * writes; split, that state would go into a header with no second user. */
#include "ncu_source.h"

#include <assert.h>
#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "utf8.h"

/* One row's fields together: bounded so a row of a thousand 64 KiB fields
 * cannot take 64 MiB. */
#define ROW_MAX_BYTES (1u << 20)
/* Distinct SASS addresses per function (ncu repeats them; each counts once). */
#define ADDRESSES_MAX ((size_t) 4 * NCU_SOURCE_MAX_SITES)
/* Line numbers beyond this are not a source file's. */
#define LINE_MAX 100000000u

/* The stall reasons of the page's "stall_*" columns (ncu 2025), in one
 * order; the "(Not Issued)" twins are left out. */
static const char *const s_stall_names[] = {
    "barrier", "branch_resolving", "dispatch", "drain", "imc", "lg", "long_sb", "math", "membar",
    "mio", "misc", "no_inst", "not_selected", "selected", "short_sb", "sleep", "tex", "wait",
};
#define STALL_COUNT (sizeof s_stall_names / sizeof s_stall_names[0])
#define STALL_BARRIER 0

/* A site as it is built: the public fields plus its samples per stall reason. */
typedef struct {
    ncu_source_site_t pub;
    double stalls[STALL_COUNT];
} site_t;

/* uint64 -> index, open addressing; key 0 is free (keys are stored + 1). */
typedef struct {
    uint64_t *keys;
    uint32_t *values;
    size_t cap, count;
} index_map_t;

typedef struct {
    ncu_source_kernel_t pub;
    site_t *sites;
    size_t cap;
    index_map_t lines;     /* (file, line number) -> site */
    size_t file;           /* the file the rows now come from */
    index_map_t addresses; /* SASS address seen (value unused) */
} kernel_t;

/* Columns of the current header, -1 when absent. */
typedef struct {
    size_t count;
    int line, cuda, address, sass, samples, inst, thread, pred, space, requests, conflicts, sectors, ideal,
        excess, local;
    int stall[STALL_COUNT];
} columns_t;

struct ncu_source_t {
    ncu_source_kernel_t **kernels;
    size_t count;
    char **no_lines; /* functions ncu printed no source view for (built without -lineinfo) */
    size_t no_lines_count;
};

/* One page being read. */
typedef struct {
    const char *name;
    struct csv_parser csv;
    char *row;            /* the current row's fields, each NUL-terminated */
    size_t row_len, row_cap;
    size_t *offsets;
    size_t field_count;
    bool row_too_big;
    size_t record;
    columns_t cols;
    bool have_header;
    char file[512];
    kernel_t **kernels;
    size_t count;
    kernel_t *current;
    size_t site;          /* the line the SASS rows belong to, or SIZE_MAX */
    bool failed;
    pf_error_t err;
} page_t;

/* ----- small helpers ------------------------------------------------------ */

static void s_fail(page_t *p, pf_status_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void s_fail(page_t *p, pf_status_t code, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char msg[PF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pf_error_set(&p->err, code, "%s: record %zu: %s", p->name, p->record, msg);
}

/* Copies `src` into `dst` (capacity `cap`), with runs of whitespace made one
 * space, the ends trimmed, invalid UTF-8 and control characters made '?',
 * cut on a character
 * boundary: the text goes into protobuf strings and JSON. */
static void s_copy_text(char *dst, size_t cap, const char *src)
{
    assert(cap > 0);
    size_t n = 0;
    bool space = false;
    while (*src == ' ' || *src == '\t')
        src++;
    for (const char *s = src; *s;) {
        if (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') {
            space = true;
            s++;
            continue;
        }
        size_t len = utf8_sequence_len(s);
        if ((unsigned char) *s < 0x20 || *s == 0x7f)
            len = 0; /* a control character: one-line wire strings refuse them */
        const char *from = len ? s : "?";
        size_t take = len ? len : 1;
        if (n + (space ? 1 : 0) + take >= cap)
            break;
        if (space)
            dst[n++] = ' ';
        space = false;
        memcpy(dst + n, from, take);
        n += take;
        s += take;
    }
    dst[n] = '\0';
}

static bool s_map_grow(index_map_t *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *values = calloc(cap, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t h = (size_t) (m->keys[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);
        while (keys[h])
            h = (h + 1) & (cap - 1);
        keys[h] = m->keys[i];
        values[h] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    m->keys = keys;
    m->values = values;
    m->cap = cap;
    return true;
}

/* Finds `key`; when absent and `insert`, adds it with `value`. Returns a
 * pointer to its value, NULL when absent (or out of memory: *oom). */
static uint32_t *s_map_get(index_map_t *m, uint64_t key, bool insert, uint32_t value, bool *oom)
{
    uint64_t k = key + 1;
    if (m->cap) {
        size_t h = (size_t) (k * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
        while (m->keys[h]) {
            if (m->keys[h] == k)
                return &m->values[h];
            h = (h + 1) & (m->cap - 1);
        }
    }
    if (!insert)
        return NULL;
    if ((m->count + 1) * 2 > m->cap && !s_map_grow(m)) {
        *oom = true;
        return NULL;
    }
    size_t h = (size_t) (k * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->keys[h])
        h = (h + 1) & (m->cap - 1);
    m->keys[h] = k;
    m->values[h] = value;
    m->count++;
    return &m->values[h];
}

static void s_map_free(index_map_t *m)
{
    free(m->keys);
    free(m->values);
    m->keys = NULL;
    m->values = NULL;
}

static void s_files_free(char **files, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(files[i]);
    free(files);
}

static void s_kernel_free(kernel_t *k)
{
    if (!k)
        return;
    s_files_free(k->pub.files, k->pub.file_count);
    free(k->sites);
    s_map_free(&k->lines);
    s_map_free(&k->addresses);
    free(k);
}

/* ----- rows --------------------------------------------------------------- */

static const char *s_field(const page_t *p, int col)
{
    return col >= 0 && (size_t) col < p->field_count ? p->row + p->offsets[col] : "";
}

/* A counter: a number, or 0 for ncu's "-" (not applicable) and empty cells.
 * "Global(2)"-style cells are not counters and give 0 too. */
static double s_number(const page_t *p, int col)
{
    const char *f = s_field(p, col);
    double v = 0;
    if (!*f || !number_parse(f, strlen(f), &v) || !(v >= 0) || v > 1e300)
        return 0;
    return v;
}

static void s_header(page_t *p)
{
    columns_t c;
    memset(&c, 0xff, sizeof c); /* every column index -1 */
    c.count = p->field_count;
    if (c.count > NCU_SOURCE_MAX_COLUMNS) {
        s_fail(p, PF_ETOOBIG, "the header has %zu columns, more than %d", c.count, NCU_SOURCE_MAX_COLUMNS);
        return;
    }
    static const struct {
        const char *name;
        size_t offset;
    } named[] = {
        {"Line No", offsetof(columns_t, line)},
        {"Address", offsetof(columns_t, address)},
        {"Warp Stall Sampling (All Samples)", offsetof(columns_t, samples)},
        {"Instructions Executed", offsetof(columns_t, inst)},
        {"Thread Instructions Executed", offsetof(columns_t, thread)},
        {"Predicated-On Thread Instructions Executed", offsetof(columns_t, pred)},
        {"Address Space", offsetof(columns_t, space)},
        {"L1 Tag Requests Global", offsetof(columns_t, requests)},
        {"L1 Conflicts Shared N-Way", offsetof(columns_t, conflicts)},
        {"L2 Theoretical Sectors Global", offsetof(columns_t, sectors)},
        {"L2 Theoretical Sectors Global Ideal", offsetof(columns_t, ideal)},
        {"L2 Theoretical Sectors Global Excessive", offsetof(columns_t, excess)},
        {"L2 Theoretical Sectors Local", offsetof(columns_t, local)},
    };
    for (size_t i = 0; i < c.count; i++) {
        const char *f = s_field(p, (int) i);
        for (size_t n = 0; n < sizeof named / sizeof named[0]; n++) {
            int *slot = (int *) ((char *) &c + named[n].offset);
            if (*slot < 0 && strcmp(f, named[n].name) == 0)
                *slot = (int) i;
        }
        /* "Source" follows the column it belongs to: the CUDA line after
         * "Line No", the SASS instruction after "Address". */
        if (strcmp(f, "Source") == 0 && i > 0) {
            const char *before = s_field(p, (int) i - 1);
            if (strcmp(before, "Line No") == 0)
                c.cuda = (int) i;
            else if (strcmp(before, "Address") == 0)
                c.sass = (int) i;
        }
        if (strncmp(f, "stall_", 6) == 0 && !strstr(f, "(Not Issued)"))
            for (size_t s = 0; s < STALL_COUNT; s++)
                if (strcmp(f + 6, s_stall_names[s]) == 0)
                    c.stall[s] = (int) i;
    }
    if (c.address < 0) {
        s_fail(p, PF_EBADINPUT, "the header has no \"Address\" column (print the page with "
                                "--print-source cuda,sass or sass)");
        return;
    }
    if (c.samples < 0 && c.inst < 0) {
        s_fail(p, PF_EBADINPUT, "the header has neither \"Warp Stall Sampling (All Samples)\" nor "
                                "\"Instructions Executed\": not a source page with counters");
        return;
    }
    p->cols = c;
    p->have_header = true;
    if (c.local >= 0)
        p->current->pub.has_local_sectors = true;
}

/* Makes `path` the file the next rows of `k` come from. */
static bool s_use_file(page_t *p, kernel_t *k, const char *path)
{
    char name[sizeof k->pub.file];
    s_copy_text(name, sizeof name, path);
    for (size_t i = 0; i < k->pub.file_count; i++)
        if (strcmp(k->pub.files[i], name) == 0) {
            k->file = i;
            return true;
        }
    if (k->pub.file_count >= NCU_SOURCE_MAX_FILES) {
        s_fail(p, PF_ETOOBIG, "more than %d source files in one function", NCU_SOURCE_MAX_FILES);
        return false;
    }
    char **grown = realloc(k->pub.files, (k->pub.file_count + 1) * sizeof *grown);
    char *copy = strdup(name);
    if (grown)
        k->pub.files = grown;
    if (!grown || !copy) {
        free(copy);
        s_fail(p, PF_ENOMEM, "out of memory");
        return false;
    }
    k->file = k->pub.file_count;
    k->pub.files[k->pub.file_count++] = copy;
    return true;
}

static kernel_t *s_start_kernel(page_t *p, const char *function)
{
    if (p->count >= NCU_SOURCE_MAX_KERNELS) {
        s_fail(p, PF_ETOOBIG, "more than %d functions in one page", NCU_SOURCE_MAX_KERNELS);
        return NULL;
    }
    kernel_t **grown = realloc(p->kernels, (p->count + 1) * sizeof *grown);
    kernel_t *k = calloc(1, sizeof *k);
    if (grown)
        p->kernels = grown;
    if (!grown || !k) {
        free(k);
        s_fail(p, PF_ENOMEM, "out of memory");
        return NULL;
    }
    p->kernels[p->count++] = k;
    s_copy_text(k->pub.function, sizeof k->pub.function, function);
    s_copy_text(k->pub.file, sizeof k->pub.file, p->file);
    if (!s_use_file(p, k, p->file))
        return NULL;
    p->current = k;
    p->site = SIZE_MAX;
    p->have_header = false;
    return k;
}

static size_t s_add_site(page_t *p, kernel_t *k, unsigned line, uint64_t address, const char *text)
{
    if (k->pub.site_count >= NCU_SOURCE_MAX_SITES) {
        s_fail(p, PF_ETOOBIG, "more than %d source lines or instructions in %s", NCU_SOURCE_MAX_SITES,
               k->pub.function[0] ? k->pub.function : "one function");
        return SIZE_MAX;
    }
    if (k->pub.site_count == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        site_t *grown = realloc(k->sites, cap * sizeof *grown);
        if (!grown) {
            s_fail(p, PF_ENOMEM, "out of memory");
            return SIZE_MAX;
        }
        k->sites = grown;
        k->cap = cap;
    }
    site_t *s = &k->sites[k->pub.site_count];
    memset(s, 0, sizeof *s);
    s->pub.line = line;
    s->pub.file = k->pub.files[k->file];
    s->pub.address = address;
    s_copy_text(s->pub.text, sizeof s->pub.text, text);
    return k->pub.site_count++;
}

/* A source line's row: the SASS rows after it are its instructions. */
static void s_line_row(page_t *p, const char *field)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(field, &end, 10);
    if (end == field || *end || errno || v == 0 || v > LINE_MAX || field[0] == '-' || field[0] == '+') {
        s_fail(p, PF_EBADINPUT, "\"Line No\" is \"%.32s\", not a line number", field);
        return;
    }
    kernel_t *k = p->current;
    bool oom = false;
    uint64_t key = (uint64_t) k->file << 32 | (uint64_t) v;
    uint32_t *found = s_map_get(&k->lines, key, false, 0, &oom);
    if (found) {
        p->site = *found;
        return;
    }
    size_t site = s_add_site(p, k, (unsigned) v, 0, s_field(p, p->cols.cuda));
    if (site == SIZE_MAX)
        return;
    if (!s_map_get(&k->lines, key, true, (uint32_t) site, &oom)) {
        s_fail(p, PF_ENOMEM, "out of memory");
        return;
    }
    k->pub.line_info = true;
    p->site = site;
}

/* One SASS instruction: counted once, into the line above it, or as a site
 * of its own when the page has no line above it (no -lineinfo). */
static void s_sass_row(page_t *p, const char *field)
{
    const char *hex = field;
    if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X'))
        hex += 2;
    char *end = NULL;
    errno = 0;
    unsigned long long address = strtoull(hex, &end, 16);
    if (end == hex || *end || errno || hex[0] == '-' || hex[0] == '+' || hex[0] == ' ') {
        s_fail(p, PF_EBADINPUT, "\"Address\" is \"%.32s\", not a hexadecimal address", field);
        return;
    }
    kernel_t *k = p->current;
    bool oom = false;
    if (s_map_get(&k->addresses, address, false, 0, &oom))
        return; /* the same instruction in another view of its loop */
    if (k->addresses.count >= ADDRESSES_MAX) {
        s_fail(p, PF_ETOOBIG, "more than %zu SASS instructions in one function", ADDRESSES_MAX);
        return;
    }
    if (!s_map_get(&k->addresses, address, true, 0, &oom)) {
        s_fail(p, PF_ENOMEM, "out of memory");
        return;
    }
    const char *sass = s_field(p, p->cols.sass);
    size_t index = p->site;
    if (index == SIZE_MAX) {
        index = s_add_site(p, k, 0, address, sass);
        if (index == SIZE_MAX)
            return;
    }
    site_t *s = &k->sites[index];
    const columns_t *c = &p->cols;
    double samples = s_number(p, c->samples), inst = s_number(p, c->inst);
    if (s->pub.address == 0 || address < s->pub.address)
        s->pub.address = address;
    if (!s->pub.sass[0] || samples > s->pub.sass_samples) {
        s_copy_text(s->pub.sass, sizeof s->pub.sass, sass);
        s->pub.sass_samples = samples;
    }
    s->pub.samples += samples;
    s->pub.inst += inst;
    s->pub.thread_inst += s_number(p, c->thread);
    s->pub.pred_inst += s_number(p, c->pred);
    s->pub.requests += s_number(p, c->requests);
    s->pub.sectors += s_number(p, c->sectors);
    s->pub.sectors_ideal += s_number(p, c->ideal);
    s->pub.sectors_excess += s_number(p, c->excess);
    /* "L1 Conflicts Shared N-Way" is the average ways per execution of a
     * shared instruction; 1-way is conflict-free, so each execution of an
     * N-way access costs N - 1 extra wavefronts. */
    double ways = s_number(p, c->conflicts);
    if (ways > 1)
        s->pub.conflict_wavefronts += (ways - 1) * inst;
    if (ways >= 1)
        s->pub.shared_inst += inst;
    if (strstr(s_field(p, c->space), "Local")) {
        s->pub.local_inst += inst;
        s->pub.local_sectors += s_number(p, c->local);
    }
    for (size_t r = 0; r < STALL_COUNT; r++)
        s->stalls[r] += s_number(p, c->stall[r]);
}

static void s_row(page_t *p)
{
    const char *first = s_field(p, 0);
    if (p->field_count == 2 && strcmp(first, "File Path") == 0) {
        snprintf(p->file, sizeof p->file, "%s", s_field(p, 1));
        /* Within a function: the lines that follow are that file's. */
        if (p->current)
            s_use_file(p, p->current, p->file);
        p->site = SIZE_MAX;
        return;
    }
    /* The SASS-only export names the function "Kernel Name" (with a trailing
     * empty field); the CUDA export "Function Name". */
    bool named = (p->field_count == 2 || (p->field_count == 3 && !s_field(p, 2)[0])) &&
                 (strcmp(first, "Function Name") == 0 || strcmp(first, "Kernel Name") == 0);
    if (named) {
        /* A function whose code comes from several files (Triton's kernels
         * inline triton/language/standard.py) gets a "File Path", its name
         * and a header again for each file: the same function goes on. */
        char name[sizeof p->current->pub.function];
        s_copy_text(name, sizeof name, s_field(p, 1));
        if (p->current && strcmp(p->current->pub.function, name) == 0) {
            p->site = SIZE_MAX;
            p->have_header = false;
            return;
        }
        s_start_kernel(p, s_field(p, 1));
        return;
    }
    if (strcmp(first, "Line No") == 0 || strcmp(first, "Address") == 0) {
        if (!p->current && !s_start_kernel(p, ""))
            return;
        s_header(p);
        return;
    }
    if (!p->have_header) {
        s_fail(p, PF_EBADINPUT, "a row before the header (\"Line No\",\"Source\",\"Address\",...): "
                                "not an ncu source page");
        return;
    }
    if (p->field_count != p->cols.count) {
        s_fail(p, PF_EBADINPUT, "%zu fields where the header has %zu (the page is cut short or not ncu's)",
               p->field_count, p->cols.count);
        return;
    }
    const char *line = s_field(p, p->cols.line);
    const char *address = s_field(p, p->cols.address);
    if (strcmp(line, "-") == 0)
        p->site = SIZE_MAX; /* instructions ncu maps to no line: each its own site */
    else if (line[0])
        s_line_row(p, line);
    else if (address[0] && strcmp(address, "...") != 0 && strcmp(address, "-") != 0)
        s_sass_row(p, address);
}

/* libcsv grows one buffer for the field being read; refusing to grow it past
 * the limit turns a 10 MB field into CSV_ENOMEM instead of 10 MB of memory. */
static void *s_bounded_realloc(void *ptr, size_t size)
{
    if (size > NCU_SOURCE_MAX_FIELD + 64)
        return NULL;
    return realloc(ptr, size);
}

static void s_on_field(void *s, size_t len, void *arg)
{
    page_t *p = arg;
    if (p->failed || p->row_too_big)
        return;
    if (p->field_count >= NCU_SOURCE_MAX_COLUMNS + 1 || p->row_len + len + 1 > ROW_MAX_BYTES) {
        p->row_too_big = true;
        return;
    }
    if (p->row_len + len + 1 > p->row_cap) {
        size_t cap = p->row_cap ? p->row_cap : 4096;
        while (cap < p->row_len + len + 1)
            cap *= 2;
        char *grown = realloc(p->row, cap);
        if (!grown) {
            s_fail(p, PF_ENOMEM, "out of memory");
            return;
        }
        p->row = grown;
        p->row_cap = cap;
    }
    if (p->field_count % 64 == 0) {
        size_t *grown = realloc(p->offsets, (p->field_count + 64) * sizeof *grown);
        if (!grown) {
            s_fail(p, PF_ENOMEM, "out of memory");
            return;
        }
        p->offsets = grown;
    }
    p->offsets[p->field_count++] = p->row_len;
    if (len)
        memcpy(p->row + p->row_len, s, len);
    p->row[p->row_len + len] = '\0';
    p->row_len += len + 1;
}

static void s_on_row(int c, void *arg)
{
    (void) c;
    page_t *p = arg;
    p->record++;
    if (!p->failed && p->row_too_big)
        s_fail(p, PF_ETOOBIG, "a row longer than %u bytes or %d fields", ROW_MAX_BYTES, NCU_SOURCE_MAX_COLUMNS);
    if (!p->failed)
        s_row(p);
    p->field_count = 0;
    p->row_len = 0;
    p->row_too_big = false;
}

/* Ends a function: its public site list and the top stall of each site. */
static void s_finish_kernel(kernel_t *k)
{
    ncu_source_site_t *pub = malloc((k->pub.site_count ? k->pub.site_count : 1) * sizeof *pub);
    if (!pub)
        return;
    k->pub.samples = 0;
    for (size_t i = 0; i < k->pub.site_count; i++) {
        site_t *s = &k->sites[i];
        s->pub.barrier_samples = s->stalls[STALL_BARRIER];
        for (size_t r = 0; r < STALL_COUNT; r++)
            if (s->stalls[r] > s->pub.stall_samples) {
                s->pub.stall_samples = s->stalls[r];
                snprintf(s->pub.stall, sizeof s->pub.stall, "%s", s_stall_names[r]);
            }
        pub[i] = s->pub;
        k->pub.samples += s->pub.samples;
    }
    k->pub.sites = pub;
}

/* ----- the public API ----------------------------------------------------- */

ncu_source_t *ncu_source_new(void)
{
    return calloc(1, sizeof(ncu_source_t));
}

void ncu_source_destroy(ncu_source_t **self_p)
{
    assert(self_p);
    ncu_source_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++) {
        free(self->kernels[i]->sites);
        s_files_free(self->kernels[i]->files, self->kernels[i]->file_count);
        free(self->kernels[i]);
    }
    free(self->kernels);
    s_files_free(self->no_lines, self->no_lines_count);
    free(self);
    *self_p = NULL;
}

/* Where the page starts: past a byte order mark and the "==PROF==" /
 * "==WARNING==" lines ncu may print before it. */
static size_t s_page_start(const char *bytes, size_t len)
{
    size_t i = len >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (len - i >= 2 && bytes[i] == '=' && bytes[i + 1] == '=') {
        const char *nl = memchr(bytes + i, '\n', len - i);
        if (!nl)
            return len;
        i = (size_t) (nl - bytes) + 1;
    }
    return i;
}

/* A kernel's name as ncu's pages spell it differently: the raw page prints
 * template arguments as written ("copy_round<1>"), the source page with a
 * cast ("copy_round<(int)1>"). Writes the name without such casts (a
 * parenthesized type name before a number) to `out`. */
static void s_plain_name(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *c = name; *c && n + 1 < cap; c++) {
        if (*c == '(') {
            const char *e = c + 1;
            while (*e == ' ' || *e == '_' || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') ||
                   (*e >= '0' && *e <= '9'))
                e++;
            bool type = e > c + 1 && *e == ')' && !(c[1] >= '0' && c[1] <= '9');
            if (type && ((e[1] >= '0' && e[1] <= '9') || e[1] == '-')) {
                c = e; /* the cast goes, the number stays */
                continue;
            }
        }
        out[n++] = *c;
    }
    out[n] = '\0';
}

/* ncu's warning for a function built without -lineinfo, when the export
 * asks for the CUDA view (it then prints nothing else for that function). */
static const char s_no_lineinfo[] = "==WARNING== No lineinfo available to show CUDA-C source related to '";

/* Records the functions the warnings before the page name; false when out
 * of memory or past the limit. */
static bool s_note_no_lines(ncu_source_t *self, const char *bytes, size_t len)
{
    size_t n = strlen(s_no_lineinfo);
    for (size_t i = 0; i + n <= len;) {
        const char *nl = memchr(bytes + i, '\n', len - i);
        size_t end = nl ? (size_t) (nl - bytes) : len;
        if (end - i > n && memcmp(bytes + i, s_no_lineinfo, n) == 0) {
            const char *name = bytes + i + n, *close = memchr(name, '\'', end - i - n);
            if (close && self->no_lines_count < NCU_SOURCE_MAX_KERNELS) {
                char raw[512];
                size_t cut = (size_t) (close - name) < sizeof raw - 1 ? (size_t) (close - name) : sizeof raw - 1;
                memcpy(raw, name, cut);
                raw[cut] = '\0';
                char **grown = realloc(self->no_lines, (self->no_lines_count + 1) * sizeof *grown);
                if (!grown)
                    return false;
                self->no_lines = grown;
                char *copy = malloc(sizeof raw);
                if (!copy)
                    return false;
                s_copy_text(copy, sizeof raw, raw);
                self->no_lines[self->no_lines_count++] = copy;
            }
        }
        i = end + 1;
    }
    return true;
}

bool ncu_source_lacks_lines(const ncu_source_t *self, const char *kernel)
{
    char want[512], have[512];
    s_plain_name(kernel, want, sizeof want);
    for (size_t i = 0; i < self->no_lines_count; i++) {
        s_plain_name(self->no_lines[i], have, sizeof have);
        if (strcmp(have, want) == 0)
            return true;
    }
    return false;
}

bool ncu_source_sniff(const char *head, size_t len)
{
    static const char *const starts[] = {"\"File Path\",", "\"Function Name\",", "\"Kernel Name\",",
                                         "\"Line No\",\"Source\",\"Address\"", "\"Address\",\"Source\","};
    size_t i = s_page_start(head, len);
    size_t warning = strlen(s_no_lineinfo);
    for (size_t at = 0; i == len && at + warning <= len; at++)
        if (memcmp(head + at, s_no_lineinfo, warning) == 0)
            return true; /* an export of functions that all lack line info */
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
        size_t n = strlen(starts[s]);
        if (len - i >= n && memcmp(head + i, starts[s], n) == 0)
            return true;
    }
    return false;
}

pf_status_t ncu_source_parse(ncu_source_t *self, const char *name, const char *bytes, size_t len, pf_error_t *err)
{
    assert(self && bytes);
    if (len > NCU_SOURCE_MAX_BYTES)
        return pf_error_set(err, PF_ETOOBIG, "%s: a source page of %zu bytes, more than %zu", name, len,
                            NCU_SOURCE_MAX_BYTES);
    page_t p = {.name = name ? name : "source page", .site = SIZE_MAX};
    if (csv_init(&p.csv, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    csv_set_realloc_func(&p.csv, s_bounded_realloc);
    csv_set_blk_size(&p.csv, 4096);
    size_t skip = s_page_start(bytes, len);
    if (!s_note_no_lines(self, bytes, skip))
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    if (skip == len && self->no_lines_count > 0)
        return PF_OK; /* nothing but "no lineinfo" warnings: the hot spots say so */
    if (csv_parse(&p.csv, bytes + skip, len - skip, s_on_field, s_on_row, &p) != len - skip && !p.failed) {
        int code = csv_error(&p.csv);
        p.record++;
        if (code == CSV_ENOMEM)
            s_fail(&p, PF_ETOOBIG, "a field longer than %u bytes", NCU_SOURCE_MAX_FIELD);
        else
            s_fail(&p, PF_EBADINPUT, "malformed CSV: %s", csv_strerror(code));
    }
    if (!p.failed && csv_fini(&p.csv, s_on_field, s_on_row, &p) != 0 && !p.failed) {
        p.record++;
        s_fail(&p, PF_EBADINPUT, "the page ends inside a quoted field (cut short): %s",
               csv_strerror(csv_error(&p.csv)));
    }
    csv_free(&p.csv);
    free(p.row);
    free(p.offsets);
    size_t with_sites = 0;
    for (size_t i = 0; i < p.count; i++)
        with_sites += p.kernels[i]->pub.site_count > 0;
    if (!p.failed && with_sites == 0)
        pf_error_set(&p.err, PF_EBADINPUT, "%s: no source lines or SASS instructions: not an ncu source page "
                                           "(ncu --import R.ncu-rep --csv --page source --print-source cuda,sass)",
                     p.name),
            p.failed = true;
    ncu_source_kernel_t **grown = NULL;
    if (!p.failed) {
        grown = realloc(self->kernels, (self->count + with_sites) * sizeof *grown);
        if (!grown)
            s_fail(&p, PF_ENOMEM, "out of memory");
        else
            self->kernels = grown;
    }
    for (size_t i = 0; i < p.count; i++) {
        kernel_t *k = p.kernels[i];
        if (!p.failed && k->pub.site_count > 0) {
            s_finish_kernel(k);
            ncu_source_kernel_t *pub = k->pub.sites ? malloc(sizeof *pub) : NULL;
            if (!pub) {
                free(k->pub.sites);
                s_fail(&p, PF_ENOMEM, "out of memory");
            } else {
                *pub = k->pub;
                self->kernels[self->count++] = pub;
                k->pub.files = NULL; /* the public copy owns them now */
                k->pub.file_count = 0;
            }
        }
        s_kernel_free(k);
    }
    free(p.kernels);
    if (p.failed) {
        if (err)
            *err = p.err;
        return p.err.code;
    }
    return PF_OK;
}

size_t ncu_source_kernel_count(const ncu_source_t *self) { return self->count; }

const ncu_source_kernel_t *ncu_source_kernel(const ncu_source_t *self, size_t index)
{
    assert(index < self->count);
    return self->kernels[index];
}

/* The name up to its parameter list: "aos_float3_x(const P3 *, ...)" ->
 * "aos_float3_x"; template arguments stay. */
static size_t s_base_len(const char *name)
{
    const char *paren = strchr(name, '(');
    return paren ? (size_t) (paren - name) : strlen(name);
}

/* Matching pages by name, best first: the same name, the same name without
 * casts, the same name before the parameter list. Among the pages of one
 * rank the one with line numbers wins (a SASS-only export of the same
 * function is the fallback for builds without -lineinfo). */
const ncu_source_kernel_t *ncu_source_find(const ncu_source_t *self, const char *kernel)
{
    char want[sizeof self->kernels[0]->function], have[sizeof want];
    s_plain_name(kernel, want, sizeof want);
    size_t want_base = s_base_len(want);
    for (int rank = 0; rank < 3; rank++) {
        const ncu_source_kernel_t *found = NULL;
        for (size_t i = 0; i < self->count; i++) {
            const char *f = self->kernels[i]->function;
            bool same;
            if (rank == 0) {
                same = strcmp(f, kernel) == 0;
            } else {
                s_plain_name(f, have, sizeof have);
                same = rank == 1 ? strcmp(have, want) == 0
                                 : want_base > 0 && s_base_len(have) == want_base && memcmp(have, want, want_base) == 0;
            }
            if (same && (!found || (!found->line_info && self->kernels[i]->line_info)))
                found = self->kernels[i];
        }
        if (found)
            return found;
    }
    return NULL;
}
