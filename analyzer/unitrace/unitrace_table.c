#include "unitrace_table.h"

#include <assert.h>
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unitrace_table_t {
    char **names;
    size_t columns;
    int kernel_col;
    bool sampling;
    char **kernels; /* one per row */
    double *cells;  /* rows x columns */
    size_t rows, row_cap;
    size_t skipped;
};

typedef struct {
    unitrace_table_t *table;
    const char *source;
    size_t line;
    bool in_header;     /* the record being read is the header */
    bool header_done;
    size_t col;
    char *kernel;       /* of the record being read */
    double *row;        /* the record's cells */
    bool row_bad;
    pf_status_t failed;
    pf_error_t *err;
} parse_t;

static void *s_bounded_realloc(void *ptr, size_t size)
{
    return size > UNITRACE_MAX_FIELD + 64 ? NULL : realloc(ptr, size);
}

void unitrace_table_destroy(unitrace_table_t **self_p)
{
    assert(self_p);
    unitrace_table_t *self = *self_p;
    if (!self)
        return;
    for (size_t c = 0; c < self->columns; c++)
        free(self->names[c]);
    free(self->names);
    for (size_t r = 0; r < self->rows; r++)
        free(self->kernels[r]);
    free(self->kernels);
    free(self->cells);
    free(self);
    *self_p = NULL;
}

static void s_fail(parse_t *p, pf_status_t code, const char *what)
{
    if (p->failed)
        return;
    p->failed = code;
    pf_error_set(p->err, code, "%s: line %zu: %s", p->source, p->line, what);
}

static void s_header_field(parse_t *p, const char *field, size_t len)
{
    unitrace_table_t *t = p->table;
    if (t->columns >= UNITRACE_MAX_COLUMNS) {
        s_fail(p, PF_ETOOBIG, "the header has too many columns");
        return;
    }
    char **names = realloc(t->names, (t->columns + 1) * sizeof *names);
    if (!names) {
        s_fail(p, PF_ENOMEM, "out of memory");
        return;
    }
    t->names = names;
    t->names[t->columns] = strndup(field, len);
    if (!t->names[t->columns]) {
        s_fail(p, PF_ENOMEM, "out of memory");
        return;
    }
    if (len == 6 && memcmp(field, "Kernel", 6) == 0 && t->kernel_col < 0)
        t->kernel_col = (int) t->columns;
    t->columns++;
}

static bool s_number(const char *field, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, field, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || errno == ERANGE || !isfinite(v))
        return false;
    while (*end == ' ')
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

static void s_on_field(void *s, size_t len, void *arg)
{
    parse_t *p = arg;
    const char *field = s ? s : "";
    if (p->failed)
        return;
    unitrace_table_t *t = p->table;
    if (p->col == 0 && p->header_done && len == 6 && memcmp(field, "Kernel", 6) == 0)
        p->in_header = true; /* a repeated header (another device's section) */
    if (p->in_header) {
        if (!p->header_done)
            s_header_field(p, field, len);
    } else if (p->col < t->columns) {
        if ((int) p->col == t->kernel_col) {
            free(p->kernel);
            p->kernel = strndup(field, len);
        } else if (!s_number(field, len, &p->row[p->col])) {
            p->row[p->col] = NAN;
        }
    }
    p->col++;
}

static void s_on_row(int terminator, void *arg)
{
    (void) terminator;
    parse_t *p = arg;
    unitrace_table_t *t = p->table;
    if (p->failed || p->col == 0)
        goto done;
    if (p->in_header) {
        if (!p->header_done) {
            /* An old-format header ends with a comma: drop the empty column. */
            while (t->columns > 0 && t->names[t->columns - 1][0] == '\0')
                free(t->names[--t->columns]);
            if (t->kernel_col < 0 || unitrace_table_column(t, "GpuTime[ns]") < 0) {
                s_fail(p, PF_EBADINPUT, "not a unitrace metrics table: the header has no Kernel "
                                        "and GpuTime[ns] columns");
                goto done;
            }
            p->header_done = true;
            p->row = malloc(t->columns * sizeof *p->row);
            if (!p->row)
                s_fail(p, PF_ENOMEM, "out of memory");
        }
        p->in_header = false;
        goto done;
    }
    if (!p->kernel || !p->kernel[0]) {
        t->skipped++;
        goto done;
    }
    for (size_t c = p->col; c < t->columns; c++)
        p->row[c] = NAN; /* a short row: the rest is missing */
    if ((t->rows + 1) * t->columns > UNITRACE_MAX_CELLS) {
        s_fail(p, PF_ETOOBIG, "too many rows for one metrics file");
        goto done;
    }
    if (t->rows == t->row_cap) {
        size_t cap = t->row_cap ? t->row_cap * 2 : 64;
        char **kernels = realloc(t->kernels, cap * sizeof *kernels);
        if (kernels)
            t->kernels = kernels;
        double *cells = realloc(t->cells, cap * t->columns * sizeof *cells);
        if (cells)
            t->cells = cells;
        if (!kernels || !cells) {
            s_fail(p, PF_ENOMEM, "out of memory");
            goto done;
        }
        t->row_cap = cap;
    }
    memcpy(t->cells + t->rows * t->columns, p->row, t->columns * sizeof *p->row);
    t->kernels[t->rows++] = p->kernel;
    p->kernel = NULL;
done:
    free(p->kernel);
    p->kernel = NULL;
    p->col = 0;
}

unitrace_table_t *unitrace_table_parse(const char *source, const char *bytes, size_t len,
                                       pf_error_t *err)
{
    unitrace_table_t *t = calloc(1, sizeof *t);
    struct csv_parser csv;
    if (!t || csv_init(&csv, CSV_APPEND_NULL) != 0) {
        free(t);
        pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    csv_set_realloc_func(&csv, s_bounded_realloc);
    t->kernel_col = -1;
    parse_t p = {.table = t, .source = source, .err = err, .in_header = true};

    /* Line by line: unitrace's banners ("=== Device #0 Metrics ===", "== Kernel
     * Metrics ==") and the blank line after each instance are not CSV. */
    size_t i = 0;
    while (i < len && !p.failed) {
        const char *nl = memchr(bytes + i, '\n', len - i);
        size_t end = nl ? (size_t) (nl - bytes) + 1 : len;
        p.line++;
        const char *line = bytes + i;
        size_t n = end - i;
        size_t k = 0;
        while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r' || line[k] == '\n'))
            k++;
        if (k < n && line[k] != '=') {
            if (!p.header_done && p.in_header && !t->columns) {
                /* Sampling mode separates with ", ". */
                const char *comma = memchr(line, ',', n);
                t->sampling = comma && comma + 1 < line + n && comma[1] == ' ';
            }
            if (csv_parse(&csv, line, n, s_on_field, s_on_row, &p) != n && !p.failed)
                s_fail(&p, csv_error(&csv) == CSV_ENOMEM ? PF_ETOOBIG : PF_EBADINPUT,
                       csv_error(&csv) == CSV_ENOMEM ? "a field is too long" : "malformed CSV");
            if (!nl && !p.failed)
                csv_fini(&csv, s_on_field, s_on_row, &p);
        }
        i = end;
    }
    if (!p.failed && !p.header_done)
        s_fail(&p, PF_EBADINPUT, "no unitrace metrics header (a line starting with Kernel,)");
    csv_free(&csv);
    free(p.row);
    free(p.kernel);
    if (p.failed) {
        unitrace_table_destroy(&t);
        return NULL;
    }
    return t;
}

size_t unitrace_table_rows(const unitrace_table_t *self) { return self->rows; }
size_t unitrace_table_columns(const unitrace_table_t *self) { return self->columns; }
bool unitrace_table_sampling(const unitrace_table_t *self) { return self->sampling; }
size_t unitrace_table_skipped(const unitrace_table_t *self) { return self->skipped; }

const char *unitrace_table_column_name(const unitrace_table_t *self, size_t col)
{
    assert(col < self->columns);
    return self->names[col];
}

int unitrace_table_column(const unitrace_table_t *self, const char *name)
{
    for (size_t c = 0; c < self->columns; c++)
        if (strcmp(self->names[c], name) == 0)
            return (int) c;
    return -1;
}

bool unitrace_table_has(const unitrace_table_t *self, const char *name)
{
    return unitrace_table_column(self, name) >= 0;
}

const char *unitrace_table_kernel(const unitrace_table_t *self, size_t row)
{
    assert(row < self->rows);
    return self->kernels[row];
}

double unitrace_table_cell(const unitrace_table_t *self, size_t row, int col)
{
    assert(row < self->rows);
    if (col < 0 || (size_t) col >= self->columns)
        return NAN;
    return self->cells[row * self->columns + (size_t) col];
}

double unitrace_table_value(const unitrace_table_t *self, size_t row, const char *name)
{
    return unitrace_table_cell(self, row, unitrace_table_column(self, name));
}
