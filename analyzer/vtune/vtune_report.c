/* vtune_report: VTune reports into one record per kernel (see vtune_report.h).
 *
 * One file of ~1,100 lines because its two readers (the CSV/TSV report and
 * KernelFoundry's vtune_counters.json) fill the same kernel records through
 * the same merge (s_merge: one kernel's rows across tables, summed or kept
 * by column), whose rules are the module's point; apart, that merge and the
 * kernel index would be a header shared by only these two. */
#include "vtune_report.h"

#include <assert.h>
#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "file_read.h"
#include "fnv1a.h"
#include "number.h"

/* Bounds on what a report keeps besides its kernels. */
#define MESSAGES_MAX 32
#define MESSAGE_CHARS 512
#define NAME_BYTES_MAX (64u << 20) /* all kernel names together */
#define COLUMN_NAME_MAX 256        /* longer header names match no column we know */
#define WORK_SIZE_MAX 32

static const struct {
    const char *column;
    const char *unit;
} s_metrics[VT__COUNT] = {
    [VT_TOTAL_TIME] = {"Computing Task:Total Time", "s"},
    [VT_AVERAGE_TIME] = {"Computing Task:Average Time", "s"},
    [VT_INSTANCE_COUNT] = {"Computing Task:Instance Count", ""},
    [VT_SIMD_WIDTH] = {"Computing Task:SIMD Width", ""},
    [VT_SPILL_SIZE] = {"Computing Task:Spill Memory Size", "byte"},
    [VT_XVE_ACTIVE] = {"XVE Array:Active", "%"},
    [VT_XVE_STALLED] = {"XVE Array:Stalled", "%"},
    [VT_XVE_IDLE] = {"XVE Array:Idle", "%"},
    [VT_OCCUPANCY] = {"XVE Threads Occupancy", "%"},
    [VT_PEAK_OCCUPANCY] = {"Peak XVE Threads Occupancy", "%"},
    [VT_OCC_LIMIT_WORK_SIZE] = {"Peak XVE Threads Occupancy:Work Size Limit", "%"},
    [VT_OCC_LIMIT_SLM] = {"Peak XVE Threads Occupancy:SLM Use Limit", "%"},
    [VT_OCC_LIMIT_BARRIERS] = {"Peak XVE Threads Occupancy:Barriers Use Limit", "%"},
    [VT_STALL_SEND] = {"XVE Stall Reasons:Send", "%"},
    [VT_STALL_SBID] = {"XVE Stall Reasons:SBID", "%"},
    [VT_STALL_DIST_ACC] = {"XVE Stall Reasons:Dist or Acc", "%"},
    [VT_STALL_INSTR_FETCH] = {"XVE Stall Reasons:Instruction Fetch", "%"},
    [VT_STALL_BARRIER] = {"XVE Stall Reasons:Barrier", "%"},
    [VT_ALU0_ACTIVE] = {"XVE Pipelines:ALU0 active", "%"},
    [VT_ALU1_ACTIVE] = {"XVE Pipelines:ALU1 active", "%"},
    [VT_XMX_ACTIVE] = {"XVE Pipelines:XMX active", "%"},
    [VT_ALU0_INSTR] = {"XVE Instructions:ALU0 Instructions", ""},
    [VT_ALU1_INSTR] = {"XVE Instructions:ALU1 Instructions", ""},
    [VT_XMX_INSTR] = {"XVE Instructions:XMX instructions", ""},
    [VT_L3_BUSY] = {"GPU L3:Busy", "%"},
    [VT_L3_STALLED] = {"GPU L3:Stalled", "%"},
    [VT_L3_MISS] = {"GPU L3:Miss Ratio", "%"},
    [VT_L3_BW_READ] = {"GPU L3:Average Bandwidth, GB/s:Read", "GB/s"},
    [VT_L3_BW_WRITE] = {"GPU L3:Average Bandwidth, GB/s:Write", "GB/s"},
    [VT_MEM_BW_READ] = {"GPU Memory Bandwidth, GB/sec:Read", "GB/s"},
    [VT_MEM_BW_WRITE] = {"GPU Memory Bandwidth, GB/sec:Write", "GB/s"},
};

/* Other names the same quantities go by (reference §3): VTune called the
 * vector engines "EU" before Xe-HPG, scripts request the pipe activity under
 * "XVE Instructions", and older versions print L3 bandwidth as one column. */
static const struct {
    const char *column;
    vtune_metric_t metric;
} s_aliases[] = {
    {"EU Array:Active", VT_XVE_ACTIVE},
    {"EU Array:Stalled", VT_XVE_STALLED},
    {"EU Array:Idle", VT_XVE_IDLE},
    {"EU Threads Occupancy", VT_OCCUPANCY},
    {"Peak EU Threads Occupancy", VT_PEAK_OCCUPANCY},
    {"XVE Instructions:ALU0 active", VT_ALU0_ACTIVE},
    {"XVE Instructions:ALU1 active", VT_ALU1_ACTIVE},
    {"L3 Read Bandwidth, GB/sec", VT_L3_BW_READ},
    {"L3 Write Bandwidth, GB/sec", VT_L3_BW_WRITE},
    {"GPU L3:Average Bandwidth, GB/sec:Read", VT_L3_BW_READ},
    {"GPU L3:Average Bandwidth, GB/sec:Write", VT_L3_BW_WRITE},
};

/* KernelFoundry's overhead entries (VTuneProfilerFeedback, reference §1.9),
 * matched anywhere in the name as its regex search does. */
static const char *const s_overhead[] = {
    "VectorizedElementwiseKernel", "UnrolledElementwiseKernel", "zeCommandListAppendMemoryCopy",
    "ReduceKernelEmptyFunctor",    "[Outside any task]",
};

typedef struct {
    char *items[MESSAGES_MAX];
    size_t count;
} message_list_t;

/* Per-kernel merge bookkeeping for the table being read. */
typedef struct {
    size_t table;      /* the table that last had a row for this kernel */
    uint64_t owned;    /* metrics that table set (bit per vtune_metric_t) */
    double best_time;  /* Total Time of its longest row in that table */
    size_t table_rows; /* rows it had in that table */
} kernel_state_t;

_Static_assert(VT__COUNT <= 64, "kernel_state_t.owned has one bit per metric");

struct vtune_report_t {
    vtune_kernel_t *kernels;
    kernel_state_t *states;
    size_t count, cap;
    size_t *index; /* open addressing over kernel indices, SIZE_MAX = empty */
    size_t index_cap;
    size_t name_bytes;
    size_t tables, ignored_rows;
    message_list_t errors, notes;
};

/* ----- metric names -------------------------------------------------------- */

static bool s_is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Trims `text[0..*len)` in place of its bounds: returns the new start. */
static const char *s_trim(const char *text, size_t *len)
{
    while (*len > 0 && s_is_space(text[0])) {
        text++;
        (*len)--;
    }
    while (*len > 0 && s_is_space(text[*len - 1]))
        (*len)--;
    return text;
}

static bool s_name_is(const char *name, size_t len, const char *known)
{
    return strlen(known) == len && strncasecmp(name, known, len) == 0;
}

int vtune_metric_by_column(const char *column, bool *percent)
{
    size_t len = strlen(column);
    const char *name = s_trim(column, &len);
    bool pct = len >= 3 && memcmp(name + len - 3, "(%)", 3) == 0;
    if (pct) {
        len -= 3;
        name = s_trim(name, &len);
    }
    if (percent)
        *percent = pct;
    for (int m = 0; m < VT__COUNT; m++)
        if (s_name_is(name, len, s_metrics[m].column))
            return m;
    for (size_t i = 0; i < sizeof s_aliases / sizeof s_aliases[0]; i++)
        if (s_name_is(name, len, s_aliases[i].column))
            return (int) s_aliases[i].metric;
    return -1;
}

const char *vtune_metric_column(vtune_metric_t metric)
{
    assert(metric >= 0 && metric < VT__COUNT);
    return s_metrics[metric].column;
}

const char *vtune_metric_unit(vtune_metric_t metric)
{
    assert(metric >= 0 && metric < VT__COUNT);
    return s_metrics[metric].unit;
}

/* A value as VTune prints it: "0.026427", "40.0", "12.5%", "1,234.5", "0,5".
 * The digit grouping and decimal-mark rules are Nsight Compute's, because
 * both tools print with the process locale: number_parse() reads them
 * (a lone comma followed by exactly three digits is grouping, so a locale's
 * "0,5" is 0.5 and "1,234" is 1234). VTune adds only a trailing '%'. */
static bool s_number(const char *text, size_t len, double *out)
{
    text = s_trim(text, &len);
    if (len > 0 && text[len - 1] == '%')
        len--;
    return number_parse(text, len, out);
}

/* ----- the report ---------------------------------------------------------- */

vtune_report_t *vtune_report_new(void)
{
    vtune_report_t *self = calloc(1, sizeof *self);
    return self;
}

static void s_messages_free(message_list_t *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i]);
    list->count = 0;
}

void vtune_report_destroy(vtune_report_t **self_p)
{
    assert(self_p);
    vtune_report_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free(self->kernels[i].name);
    free(self->kernels);
    free(self->states);
    free(self->index);
    s_messages_free(&self->errors);
    s_messages_free(&self->notes);
    free(self);
    *self_p = NULL;
}

static void s_message_add(message_list_t *list, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Adds a message unless it is already there or the list is full: one note per
 * bad row of a hostile file must not grow without bound. */
static void s_message_add(message_list_t *list, const char *fmt, ...)
{
    char text[MESSAGE_CHARS];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->items[i], text) == 0)
            return;
    if (list->count >= MESSAGES_MAX)
        return;
    char *copy = strdup(text);
    if (copy)
        list->items[list->count++] = copy;
}

static uint64_t s_hash(const char *name) { return fnv1a_update_str(FNV1A_BASIS, name); }

static size_t s_find(const vtune_report_t *self, const char *name)
{
    if (self->index_cap == 0)
        return SIZE_MAX;
    size_t mask = self->index_cap - 1;
    for (size_t at = (size_t) s_hash(name) & mask;; at = (at + 1) & mask) {
        size_t k = self->index[at];
        if (k == SIZE_MAX || strcmp(self->kernels[k].name, name) == 0)
            return k;
    }
}

static void s_index_put(size_t *index, size_t cap, const char *name, size_t k)
{
    size_t mask = cap - 1;
    size_t at = (size_t) s_hash(name) & mask;
    while (index[at] != SIZE_MAX)
        at = (at + 1) & mask;
    index[at] = k;
}

/* Keeps the index at most half full so probes stay short. */
static bool s_index_grow(vtune_report_t *self)
{
    if ((self->count + 1) * 2 <= self->index_cap)
        return true;
    size_t cap = self->index_cap ? self->index_cap * 2 : 64;
    size_t *index = malloc(cap * sizeof *index);
    if (!index)
        return false;
    for (size_t i = 0; i < cap; i++)
        index[i] = SIZE_MAX;
    for (size_t k = 0; k < self->count; k++)
        s_index_put(index, cap, self->kernels[k].name, k);
    free(self->index);
    self->index = index;
    self->index_cap = cap;
    return true;
}

/* Finds the kernel or adds it. Sets *why on failure. */
static vtune_kernel_t *s_kernel(vtune_report_t *self, const char *name, pf_status_t *why,
                                size_t *out_index)
{
    size_t k = s_find(self, name);
    if (k != SIZE_MAX) {
        *out_index = k;
        return &self->kernels[k];
    }
    size_t name_len = strlen(name);
    if (self->count >= VTUNE_MAX_KERNELS || self->name_bytes + name_len > NAME_BYTES_MAX) {
        *why = PF_ETOOBIG;
        return NULL;
    }
    *why = PF_ENOMEM;
    if (self->count == self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 32;
        vtune_kernel_t *kernels = realloc(self->kernels, cap * sizeof *kernels);
        if (!kernels)
            return NULL;
        self->kernels = kernels;
        kernel_state_t *states = realloc(self->states, cap * sizeof *states);
        if (!states)
            return NULL;
        self->states = states;
        self->cap = cap;
    }
    if (!s_index_grow(self))
        return NULL;
    vtune_kernel_t *kernel = &self->kernels[self->count];
    memset(kernel, 0, sizeof *kernel);
    kernel->name = strdup(name);
    if (!kernel->name)
        return NULL;
    for (int m = 0; m < VT__COUNT; m++)
        kernel->v[m] = NAN;
    for (size_t i = 0; i < sizeof s_overhead / sizeof s_overhead[0]; i++)
        kernel->overhead |= strstr(name, s_overhead[i]) != NULL;
    memset(&self->states[self->count], 0, sizeof self->states[0]);
    s_index_put(self->index, self->index_cap, kernel->name, self->count);
    self->name_bytes += name_len;
    *out_index = self->count++;
    return kernel;
}

/* KernelFoundry's filter: rows that name no kernel (reference §1.9). */
static bool s_not_a_kernel(const char *name)
{
    return name[0] == '\0' || name[0] == '[' || strncmp(name, "vtune:", 6) == 0 ||
           strncmp(name, "war:", 4) == 0;
}

/* One row of one table, as read: values by metric and the work sizes. */
typedef struct {
    char name[VTUNE_NAME_MAX + 1];
    double v[VT__COUNT];
    signed char prio[VT__COUNT]; /* -1 unset, 0 plain column, 1 "(%)" column */
    char work_global[WORK_SIZE_MAX], work_local[WORK_SIZE_MAX];
} row_t;

static void s_row_reset(row_t *row)
{
    row->name[0] = row->work_global[0] = row->work_local[0] = '\0';
    for (int m = 0; m < VT__COUNT; m++) {
        row->v[m] = NAN;
        row->prio[m] = -1;
    }
}

static bool s_summed(int m) { return m == VT_TOTAL_TIME || m == VT_INSTANCE_COUNT; }

/* Merges a row into its kernel (see the header for the rules). `table`
 * identifies the table the row came from. Returns PF_OK, PF_ETOOBIG or
 * PF_ENOMEM. */
static pf_status_t s_merge(vtune_report_t *self, const row_t *row, size_t table)
{
    if (s_not_a_kernel(row->name)) {
        self->ignored_rows++;
        return PF_OK;
    }
    pf_status_t why = PF_OK;
    size_t k = 0;
    vtune_kernel_t *kernel = s_kernel(self, row->name, &why, &k);
    if (!kernel)
        return why;
    kernel_state_t *st = &self->states[k];
    if (st->table != table) {
        st->table = table;
        st->owned = 0;
        st->best_time = -INFINITY;
        st->table_rows = 0;
    }
    st->table_rows++;
    kernel->rows++;
    if (st->table_rows > kernel->variants)
        kernel->variants = st->table_rows;
    double t = row->v[VT_TOTAL_TIME];
    /* The longest-running variant of the table supplies the other columns;
     * without times, the first row does. */
    bool longest = st->table_rows == 1 || (!isnan(t) && t > st->best_time);
    if (!isnan(t) && t > st->best_time)
        st->best_time = t;
    double simd = row->v[VT_SIMD_WIDTH];
    if (!isnan(simd) && simd >= 1 && simd <= 65536) {
        unsigned bit = 0;
        while (bit < 31 && (1.0 * (1u << (bit + 1))) <= simd)
            bit++;
        kernel->simd_widths |= 1u << bit;
    }
    for (int m = 0; m < VT__COUNT; m++) {
        double x = row->v[m];
        if (isnan(x))
            continue;
        uint64_t bit = 1ull << m;
        if (isnan(kernel->v[m])) {
            kernel->v[m] = x;
            st->owned |= bit;
        } else if (st->owned & bit) {
            if (s_summed(m))
                kernel->v[m] += x;
            else if (longest)
                kernel->v[m] = x;
        }
        /* else an earlier table measured it: the same kernel, reported again */
    }
    if (row->work_global[0] && (!kernel->work_global[0] || (longest && st->table_rows > 1)))
        snprintf(kernel->work_global, sizeof kernel->work_global, "%s", row->work_global);
    if (row->work_local[0] && (!kernel->work_local[0] || (longest && st->table_rows > 1)))
        snprintf(kernel->work_local, sizeof kernel->work_local, "%s", row->work_local);
    return PF_OK;
}

/* ----- the table reader ----------------------------------------------------- */

enum { ROLE_IGNORE = -1, ROLE_NAME = -2, ROLE_WORK_GLOBAL = -3, ROLE_WORK_LOCAL = -4 };

typedef struct {
    int role;      /* a vtune_metric_t, or ROLE_* */
    bool percent;  /* the "(%)" variant of its column */
} column_t;

typedef struct {
    vtune_report_t *report;
    char source[256];
    struct csv_parser csv;
    bool csv_ready;
    char delim;
    size_t line;        /* 1-based line being looked at */
    size_t record_line; /* line where the record being parsed began */

    /* The table being read. */
    bool in_table, header_row;
    size_t table;       /* its number in the report */
    size_t table_line;
    size_t table_rows;
    column_t *columns;
    size_t column_count, column_cap;
    char pending[COLUMN_NAME_MAX]; /* the header name being assembled */
    size_t pending_len;
    bool pending_cut, have_pending;

    /* The record being read. */
    size_t col;   /* fields seen */
    size_t extra; /* fields joined into the name */
    size_t name_len;
    int name_depth;   /* open brackets in the name so far */
    bool name_quoted; /* the record starts with a quote: its name is whole */
    row_t row;

    size_t short_rows, long_rows, stray_lines, short_line, long_line, stray_line;
    bool saw_table, saw_error;
    bool failed;
    pf_error_t error;
} parser_t;

static void s_fail(parser_t *p, pf_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first error; the rest of the input is then ignored. */
static void s_fail(parser_t *p, pf_status_t code, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char what[PF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pf_error_set(&p->error, code, "%s: line %zu: %s", p->source, p->record_line, what);
}

/* libcsv grows one buffer for the field being read; refusing to grow it past
 * the limit turns a 10 MB field into CSV_ENOMEM instead of 10 MB of memory. */
static void *s_bounded_realloc(void *ptr, size_t size)
{
    if (size > VTUNE_MAX_FIELD + 64)
        return NULL;
    return realloc(ptr, size);
}

/* libcsv trims spaces around unquoted fields unless told otherwise; the
 * reader trims what it keeps itself, and needs to see a leading space to
 * put a name split at ", " back together. */
static int s_no_space(unsigned char c)
{
    (void) c;
    return 0;
}

/* Gives the header name assembled so far its role. */
static void s_header_column_end(parser_t *p)
{
    if (!p->have_pending)
        return;
    p->have_pending = false;
    if (p->column_count >= VTUNE_MAX_COLUMNS) {
        s_fail(p, PF_ETOOBIG, "the header has more than %d columns", VTUNE_MAX_COLUMNS);
        return;
    }
    if (p->column_count == p->column_cap) {
        size_t cap = p->column_cap ? p->column_cap * 2 : 64;
        column_t *columns = realloc(p->columns, cap * sizeof *columns);
        if (!columns) {
            s_fail(p, PF_ENOMEM, "out of memory reading the header");
            return;
        }
        p->columns = columns;
        p->column_cap = cap;
    }
    column_t *col = &p->columns[p->column_count];
    col->role = ROLE_IGNORE;
    col->percent = false;
    p->pending[p->pending_len] = '\0';
    size_t len = p->pending_len;
    const char *name = s_trim(p->pending, &len);
    if (p->column_count == 0) {
        col->role = ROLE_NAME;
    } else if (!p->pending_cut) {
        if (s_name_is(name, len, "Work Size:Global"))
            col->role = ROLE_WORK_GLOBAL;
        else if (s_name_is(name, len, "Work Size:Local"))
            col->role = ROLE_WORK_LOCAL;
        else
            col->role = vtune_metric_by_column(p->pending, &col->percent);
    }
    p->column_count++;
}

static void s_pending_append(parser_t *p, const char *text, size_t len)
{
    size_t room = sizeof p->pending - 1 - p->pending_len;
    if (len > room) {
        len = room;
        p->pending_cut = true;
    }
    memcpy(p->pending + p->pending_len, text, len);
    p->pending_len += len;
}

static void s_header_field(parser_t *p, const char *field, size_t len)
{
    /* With a comma delimiter an unquoted "GPU Memory Bandwidth, GB/sec:Read"
     * arrives as two fields; VTune's column names never start with a space,
     * so one that does continues the previous name. */
    if (p->delim == ',' && p->have_pending && len > 0 && field[0] == ' ') {
        s_pending_append(p, ",", 1);
        s_pending_append(p, field, len);
        return;
    }
    s_header_column_end(p);
    p->pending_len = 0;
    p->pending_cut = false;
    p->have_pending = true;
    s_pending_append(p, field, len);
}

static void s_name_append(parser_t *p, const char *text, size_t len)
{
    size_t room = VTUNE_NAME_MAX - p->name_len;
    if (len > room)
        len = room; /* names are cut at VTUNE_NAME_MAX */
    memcpy(p->row.name + p->name_len, text, len);
    p->name_len += len;
    p->row.name[p->name_len] = '\0';
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '<' || c == '(' || c == '[' || c == '{')
            p->name_depth++;
        else if ((c == '>' || c == ')' || c == ']' || c == '}') && p->name_depth > 0)
            p->name_depth--;
    }
}

static void s_copy(char *dst, size_t cap, const char *src, size_t len)
{
    src = s_trim(src, &len);
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static void s_data_field(parser_t *p, const char *field, size_t len)
{
    if (p->col == 0) {
        s_name_append(p, field, len);
        return;
    }
    /* With a comma delimiter an unquoted template name ("Gemm<int, 4>")
     * arrives in pieces: while its brackets are open, a field continues it. */
    if (p->delim == ',' && !p->name_quoted && p->col - p->extra == 1 && p->name_depth > 0) {
        s_name_append(p, ",", 1);
        s_name_append(p, field, len);
        p->extra++;
        return;
    }
    size_t at = p->col - p->extra;
    if (at >= p->column_count)
        return; /* counted at the end of the row */
    const column_t *col = &p->columns[at];
    if (col->role >= 0) {
        double value;
        int prio = col->percent ? 1 : 0;
        if (prio > p->row.prio[col->role] && s_number(field, len, &value)) {
            p->row.v[col->role] = value;
            p->row.prio[col->role] = (signed char) prio;
        }
    } else if (col->role == ROLE_WORK_GLOBAL) {
        s_copy(p->row.work_global, sizeof p->row.work_global, field, len);
    } else if (col->role == ROLE_WORK_LOCAL) {
        s_copy(p->row.work_local, sizeof p->row.work_local, field, len);
    }
}

static void s_on_field(void *s, size_t len, void *arg)
{
    parser_t *p = arg;
    const char *field = s ? s : "";
    if (p->failed)
        return;
    if (p->col == 0 && !p->header_row) {
        s_row_reset(&p->row);
        p->extra = 0;
        p->name_len = 0;
        p->name_depth = 0;
    }
    if (p->header_row)
        s_header_field(p, field, len);
    else
        s_data_field(p, field, len);
    p->col++;
}

static void s_data_row_end(parser_t *p)
{
    size_t fields = p->col - p->extra;
    if (fields > p->column_count) {
        /* Misaligned: values would land in the wrong columns. */
        if (p->long_rows++ == 0)
            p->long_line = p->record_line;
        return;
    }
    if (fields == 1 && p->column_count > 1) {
        /* A line of text inside a table is no kernel (a name alone says
         * nothing); a row cut after its name is counted the same way. */
        if (p->stray_lines++ == 0)
            p->stray_line = p->record_line;
        return;
    }
    if (fields < p->column_count && p->short_rows++ == 0)
        p->short_line = p->record_line;
    /* Trim the name in place: VTune pads nothing, but hand-edited files do. */
    size_t len = p->name_len;
    const char *name = s_trim(p->row.name, &len);
    memmove(p->row.name, name, len);
    p->row.name[len] = '\0';
    p->table_rows++;
    pf_status_t rc = s_merge(p->report, &p->row, p->table);
    if (rc == PF_ETOOBIG)
        s_fail(p, rc, "more than %d kernels, or more than %u MiB of kernel names", VTUNE_MAX_KERNELS,
               NAME_BYTES_MAX >> 20);
    else if (rc != PF_OK)
        s_fail(p, rc, "out of memory");
}

static void s_on_row(int terminator, void *arg)
{
    (void) terminator;
    parser_t *p = arg;
    if (p->failed || p->col == 0)
        return;
    if (p->header_row) {
        s_header_column_end(p);
        p->header_row = false;
        p->in_table = true;
    } else {
        s_data_row_end(p);
    }
    p->col = 0;
}

/* Whether a line is a table header, and its delimiter: the first column is
 * always "Computing Task", so the byte after it is the delimiter. */
static bool s_is_header(const char *text, size_t len, char *delim)
{
    static const char first[] = "Computing Task";
    const size_t n = sizeof first - 1;
    bool quoted = len > 0 && text[0] == '"';
    if (quoted) {
        text++;
        len--;
    }
    if (len < n || memcmp(text, first, n) != 0)
        return false;
    text += n;
    len -= n;
    if (quoted) {
        if (len == 0 || text[0] != '"')
            return false;
        text++;
        len--;
    }
    if (len == 0) {
        *delim = '\t'; /* a one-column table: any delimiter reads it */
        return true;
    }
    if (text[0] == '\t' || text[0] == ';' || text[0] == ',' || text[0] == ':') {
        *delim = text[0];
        return true;
    }
    return false;
}

/* A line outside any table row: VTune's own messages are kept, anything
 * else (the program's output) is skipped. */
static void s_message_line(parser_t *p, const char *text, size_t len)
{
    text = s_trim(text, &len);
    if (len > 400)
        len = 400;
    if (len >= 13 && strncmp(text, "vtune: Error:", 13) == 0) {
        size_t body_len = len - 13;
        const char *body = s_trim(text + 13, &body_len);
        s_message_add(&p->report->errors, "%.*s", (int) body_len, body);
        p->saw_error = true;
    } else if (len >= 15 && strncmp(text, "vtune: Warning:", 15) == 0) {
        s_message_add(&p->report->notes, "%s: %.*s", p->source, (int) len, text);
    }
}

/* Start of a new table: a header line. A table already being read ends. */
static void s_table_start(parser_t *p, char delim)
{
    p->in_table = false;
    p->header_row = true;
    p->column_count = 0;
    p->have_pending = false;
    p->delim = delim;
    p->saw_table = true;
    p->table = ++p->report->tables;
    p->table_line = p->line;
    p->table_rows = 0;
    csv_set_delim(&p->csv, (unsigned char) delim);
}

static void s_table_end_notes(parser_t *p)
{
    if (p->saw_table && p->in_table && p->table_rows == 0)
        s_message_add(&p->report->notes, "%s: the table at line %zu has a header but no rows",
                      p->source, p->table_line);
}

/* Whether a quoted field is still open at the end of a line, read the way
 * libcsv reads it: a quote opens a field only at its start, "" inside one is
 * a literal quote, and a quote in the middle of an unquoted field is text. */
static bool s_quote_open(const char *text, size_t len, char delim, bool open)
{
    bool field_start = !open;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (open) {
            if (c == '"') {
                if (i + 1 < len && text[i + 1] == '"')
                    i++;
                else
                    open = false;
            }
        } else if (c == delim) {
            field_start = true;
        } else if (c == '"' && field_start) {
            open = true;
            field_start = false;
        } else {
            field_start = false;
        }
    }
    return open;
}

static void s_csv_feed(parser_t *p, const char *bytes, size_t len)
{
    if (len == 0 || p->failed)
        return;
    if (csv_parse(&p->csv, bytes, len, s_on_field, s_on_row, p) != len && !p->failed) {
        int code = csv_error(&p->csv);
        if (code == CSV_ENOMEM || code == CSV_ETOOBIG)
            s_fail(p, PF_ETOOBIG, "a field is longer than %u bytes", VTUNE_MAX_FIELD);
        else
            s_fail(p, PF_EBADINPUT, "malformed CSV: %s", csv_strerror(code));
    }
}

/* Feeds one record starting at `pos` (a line, or several while a quoted
 * field is open) to libcsv; returns where the next line starts. */
static size_t s_record(parser_t *p, const char *bytes, size_t len, size_t pos)
{
    size_t start = pos;
    bool open = false;
    p->record_line = p->line;
    p->name_quoted = pos < len && bytes[pos] == '"';
    while (pos < len) {
        const char *nl = memchr(bytes + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - bytes) : len;
        open = s_quote_open(bytes + pos, end - pos, p->delim, open);
        pos = nl ? end + 1 : len;
        if (nl)
            p->line++;
        if (!open)
            break;
    }
    if (open) {
        s_fail(p, PF_EBADINPUT, "the input ends inside a quoted field (truncated file?)");
        return len;
    }
    s_csv_feed(p, bytes + start, pos - start);
    return pos;
}

static void s_parser_free(parser_t *p)
{
    if (p->csv_ready)
        csv_free(&p->csv);
    free(p->columns);
    free(p);
}

pf_status_t vtune_report_parse(vtune_report_t *self, const char *source, const char *bytes,
                               size_t len, pf_error_t *err)
{
    assert(self && (bytes || len == 0));
    parser_t *p = calloc(1, sizeof *p);
    if (!p)
        return pf_error_set(err, PF_ENOMEM, "%s: out of memory", source ? source : "input");
    if (csv_init(&p->csv, CSV_APPEND_NULL) != 0) {
        free(p);
        return pf_error_set(err, PF_ENOMEM, "%s: out of memory", source ? source : "input");
    }
    p->csv_ready = true;
    csv_set_realloc_func(&p->csv, s_bounded_realloc);
    csv_set_space_func(&p->csv, s_no_space);
    csv_set_blk_size(&p->csv, 4096);
    p->report = self;
    snprintf(p->source, sizeof p->source, "%s", source ? source : "input");
    p->line = 1;

    size_t pos = 0;
    if (len >= 3 && memcmp(bytes, "\xEF\xBB\xBF", 3) == 0)
        pos = 3; /* a UTF-8 byte order mark, as Windows tools write */
    while (pos < len && !p->failed) {
        const char *nl = memchr(bytes + pos, '\n', len - pos);
        size_t end = nl ? (size_t) (nl - bytes) : len;
        size_t line_len = end - pos;
        const char *line = bytes + pos;
        while (line_len > 0 && line[line_len - 1] == '\r')
            line_len--;
        char delim = '\t';
        if (s_is_header(line, line_len, &delim)) {
            p->record_line = p->line;
            if (delim == ':') {
                s_fail(p, PF_EBADINPUT, "a colon-delimited report cannot be read (VTune column "
                                        "names contain ':'); report with -csv-delimiter tab");
                break;
            }
            s_table_end_notes(p);
            s_table_start(p, delim);
            pos = s_record(p, bytes, len, pos);
            continue;
        }
        size_t trimmed = line_len;
        s_trim(line, &trimmed);
        if (trimmed == 0 || !p->in_table || (line_len >= 6 && strncmp(line, "vtune:", 6) == 0)) {
            if (trimmed > 0)
                s_message_line(p, line, line_len);
            pos = nl ? end + 1 : len;
            p->line++;
            continue;
        }
        pos = s_record(p, bytes, len, pos);
    }
    if (!p->failed) {
        csv_fini(&p->csv, s_on_field, s_on_row, p);
        s_table_end_notes(p);
    }
    if (!p->failed && !p->saw_table && !p->saw_error) {
        p->record_line = p->line;
        s_fail(p, PF_EBADINPUT, "no VTune hotspots table found (expected a header line starting "
                                "with \"Computing Task\", from vtune -report hotspots "
                                "-group-by computing-task -format csv)");
    }
    if (!p->failed && p->short_rows > 0)
        s_message_add(&self->notes, "%s: %zu row%s (first at line %zu) had fewer fields than the "
                      "header (truncated?); the missing columns were left out", p->source,
                      p->short_rows, p->short_rows == 1 ? "" : "s", p->short_line);
    if (!p->failed && p->long_rows > 0)
        s_message_add(&self->notes, "%s: %zu row%s (first at line %zu) had more fields than the "
                      "header (an unquoted delimiter inside a name or number?) and %s skipped",
                      p->source, p->long_rows, p->long_rows == 1 ? "" : "s", p->long_line,
                      p->long_rows == 1 ? "was" : "were");
    if (!p->failed && p->stray_lines > 0)
        s_message_add(&self->notes, "%s: %zu line%s inside a table (first at line %zu) had a single "
                      "field and %s skipped", p->source, p->stray_lines,
                      p->stray_lines == 1 ? "" : "s", p->stray_line,
                      p->stray_lines == 1 ? "was" : "were");
    pf_status_t rc = PF_OK;
    if (p->failed) {
        rc = p->error.code;
        if (err)
            *err = p->error;
    }
    s_parser_free(p);
    return rc;
}

/* ----- KernelFoundry's collated JSON ---------------------------------------- */

static pf_status_t s_json_kernel(vtune_report_t *self, const char *source, const char *name,
                                 json_t *columns, size_t table, row_t *row, pf_error_t *err)
{
    s_row_reset(row);
    snprintf(row->name, sizeof row->name, "%s", name);
    if (json_object_size(columns) > VTUNE_MAX_COLUMNS)
        return pf_error_set(err, PF_ETOOBIG, "%s: kernel \"%.80s\" has more than %d columns", source,
                            name, VTUNE_MAX_COLUMNS);
    const char *column;
    json_t *value;
    json_object_foreach(columns, column, value)
    {
        bool pct = false;
        int m = vtune_metric_by_column(column, &pct);
        const char *text = json_string_value(value);
        if (m < 0) {
            size_t len = strlen(column);
            const char *c = s_trim(column, &len);
            if (text && s_name_is(c, len, "Work Size:Global"))
                s_copy(row->work_global, sizeof row->work_global, text, strlen(text));
            else if (text && s_name_is(c, len, "Work Size:Local"))
                s_copy(row->work_local, sizeof row->work_local, text, strlen(text));
            continue;
        }
        double x = NAN;
        if (text) {
            if (!s_number(text, json_string_length(value), &x))
                continue;
        } else if (json_is_number(value)) {
            x = json_number_value(value);
            if (!isfinite(x))
                continue;
        } else {
            continue; /* null, objects, arrays: not a value */
        }
        int prio = pct ? 1 : 0;
        if (prio > row->prio[m]) {
            row->v[m] = x;
            row->prio[m] = (signed char) prio;
        }
    }
    pf_status_t rc = s_merge(self, row, table);
    if (rc == PF_ETOOBIG)
        return pf_error_set(err, rc, "%s: more than %d kernels, or more than %u MiB of kernel names",
                            source, VTUNE_MAX_KERNELS, NAME_BYTES_MAX >> 20);
    if (rc != PF_OK)
        return pf_error_set(err, rc, "%s: out of memory", source);
    return PF_OK;
}

pf_status_t vtune_report_parse_json(vtune_report_t *self, const char *source, const char *bytes,
                                    size_t len, pf_error_t *err)
{
    assert(self && (bytes || len == 0));
    if (!source)
        source = "input";
    if (len > VTUNE_MAX_JSON)
        return pf_error_set(err, PF_ETOOBIG, "%s: %zu bytes of JSON, more than the %u MiB allowed",
                            source, len, VTUNE_MAX_JSON >> 20);
    json_error_t jerr;
    /* JSON_DECODE_ANY: a scalar document then gets the message below, which
     * says what was expected, rather than jansson's. */
    json_t *root = json_loadb(bytes ? bytes : "", len, JSON_DECODE_ANY, &jerr);
    if (!root)
        return pf_error_set(err, PF_EBADINPUT, "%s: line %d, column %d: not valid JSON: %s", source,
                            jerr.line, jerr.column, jerr.text);
    pf_status_t rc = PF_OK;
    row_t *row = NULL;
    if (!json_is_object(root)) {
        rc = pf_error_set(err, PF_EBADINPUT, "%s: expected a JSON object of kernels "
                          "({\"kernel\": {\"column\": \"value\"}}), found %s", source,
                          json_is_array(root) ? "an array" : "a scalar");
        goto cleanup;
    }
    row = malloc(sizeof *row);
    if (!row) {
        rc = pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
        goto cleanup;
    }
    size_t table = ++self->tables, skipped = 0;
    const char *name;
    json_t *columns;
    json_object_foreach(root, name, columns)
    {
        if (!json_is_object(columns)) {
            skipped++;
            continue;
        }
        rc = s_json_kernel(self, source, name, columns, table, row, err);
        if (rc != PF_OK)
            goto cleanup;
    }
    if (skipped > 0)
        s_message_add(&self->notes, "%s: %zu entr%s without a column object skipped", source, skipped,
                      skipped == 1 ? "y" : "ies");
cleanup:
    free(row);
    json_decref(root);
    return rc;
}

/* ----- files and detection -------------------------------------------------- */

static const char *s_skip_blank(const char *p, const char *end)
{
    if (end - p >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    while (p < end && s_is_space(*p))
        p++;
    return p;
}

pf_status_t vtune_report_parse_file(vtune_report_t *self, const char *path, pf_error_t *err)
{
    assert(self && path);
    const char *source = strcmp(path, "-") == 0 ? "<stdin>" : path;
    char *buf = NULL;
    size_t len = 0;
    /* A hotspots report has one row per kernel: VTUNE_MAX_FILE is far past one. */
    pf_status_t rc = file_read_input(path, NULL, VTUNE_MAX_FILE, &buf, &len, err);
    if (rc != PF_OK)
        return rc;
    const char *first = s_skip_blank(buf, buf + len);
    if (first < buf + len && *first == '{')
        rc = vtune_report_parse_json(self, source, buf, len, err);
    else
        rc = vtune_report_parse(self, source, buf, len, err);
    free(buf);
    return rc;
}

bool vtune_report_sniff(const char *bytes, size_t len)
{
    if (!bytes)
        return false;
    const char *p = s_skip_blank(bytes, bytes + len), *end = bytes + len;
    if (p < end && *p == '{') {
        /* KernelFoundry's JSON: kernel objects with VTune's column names. */
        size_t head = (size_t) (end - p) < 4096 ? (size_t) (end - p) : 4096;
        static const char key[] = "\"Computing Task:";
        for (size_t i = 0; i + sizeof key - 1 <= head; i++)
            if (memcmp(p + i, key, sizeof key - 1) == 0)
                return true;
        return false;
    }
    /* VTune prints a few warning lines at most before the table. */
    for (int lines = 0; lines < 32 && p < end; lines++) {
        const char *nl = memchr(p, '\n', (size_t) (end - p));
        size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
        char delim;
        if (s_is_header(p, n, &delim))
            return true;
        if (!nl)
            break;
        p = nl + 1;
    }
    return false;
}

/* ----- accessors ------------------------------------------------------------ */

size_t vtune_report_kernel_count(const vtune_report_t *self) { return self->count; }

const vtune_kernel_t *vtune_report_kernel(const vtune_report_t *self, size_t index)
{
    assert(index < self->count);
    return &self->kernels[index];
}

const vtune_kernel_t *vtune_report_find(const vtune_report_t *self, const char *name)
{
    size_t k = s_find(self, name);
    return k == SIZE_MAX ? NULL : &self->kernels[k];
}

double vtune_report_value(const vtune_report_t *self, const char *kernel, const char *column)
{
    const vtune_kernel_t *k = vtune_report_find(self, kernel);
    int m = vtune_metric_by_column(column, NULL);
    return k && m >= 0 ? k->v[m] : NAN;
}

size_t vtune_report_table_count(const vtune_report_t *self) { return self->tables; }
size_t vtune_report_ignored_rows(const vtune_report_t *self) { return self->ignored_rows; }

size_t vtune_report_error_count(const vtune_report_t *self) { return self->errors.count; }
const char *vtune_report_error(const vtune_report_t *self, size_t index)
{
    assert(index < self->errors.count);
    return self->errors.items[index];
}

size_t vtune_report_note_count(const vtune_report_t *self) { return self->notes.count; }
const char *vtune_report_note(const vtune_report_t *self, size_t index)
{
    assert(index < self->notes.count);
    return self->notes.items[index];
}
