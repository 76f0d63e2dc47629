/* ncu_csv: the streaming Nsight Compute CSV parser (see ncu_csv.h).
 *
 * One file of ~890 lines because it is one streaming parser: the header,
 * units, raw and details rows, the message lines between records and the
 * chunk-spanning record buffer all share one parse state and must agree on
 * where a record ends; the fast splitter that does not need that state is
 * ncu_split.c already. */
#include "ncu_csv.h"

#include <assert.h>
#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "number.h"
#include "ncu_split.h"
#include "utf8.h"
#include "textbuf.h"

/* What a column holds. Metric columns carry their ncu_metric_t (>= 0). */
enum {
    COL_IGNORE = -1,
    COL_ID = -2,
    COL_KERNEL = -3,
    COL_BLOCK = -4,
    COL_GRID = -5,
    COL_CC = -6,
    COL_DEVICE_NAME = -7,
    COL_SECTION = -8,
    COL_METRIC_NAME = -9,
    COL_METRIC_UNIT = -10,
    COL_METRIC_VALUE = -11,
    COL_RULE_NAME = -12,
    COL_RULE_TYPE = -13,
    COL_RULE_TEXT = -14,
    COL_SPEEDUP_TYPE = -15,
    COL_SPEEDUP = -16,
    COL_INVOCATIONS = -17,
};

typedef struct {
    bool used;
    char section[64];
    char label[96];
    int metric;
} label_slot_t;

typedef enum { TABLE_NONE, TABLE_RAW, TABLE_DETAILS, TABLE_FOREIGN } table_kind_t;
typedef enum { ROW_HEADER, ROW_UNITS, ROW_DATA } row_kind_t;

#define RULE_TEXT_MAX 8192
/* Read size for files: under glibc's mmap threshold, so the buffer comes from
 * the heap and its pages are reused from one pass's file to the next. */
#define NCU_CSV_READ_CHUNK (64 * 1024)
#define MESSAGE_LINE_MAX 1024
/* Records up to this size are gathered whole for the fast splitter; a longer
 * one (only a hostile input has one) streams through libcsv as it comes. */
#define RECORD_MAX (4u << 20)

struct ncu_csv_t {
    ncu_data_t *data;
    char source[256];
    struct csv_parser csv;
    bool csv_ready;

    /* Line state of the byte stream around the CSV records. */
    bool line_start;
    bool in_record;     /* the current line belongs to a CSV record */
    bool quote_open;    /* an odd number of quotes so far: a field spans lines */
    size_t line;        /* 1-based line being read, for messages */
    size_t record_line; /* line where the current record began */
    char message[MESSAGE_LINE_MAX];
    size_t message_len;

    /* The record being gathered for ncu_split_quoted(), and its fields. */
    char *record;
    size_t record_len, record_cap;
    bool streaming;    /* this record is too long: libcsv takes it in pieces */
    bool libcsv_only;  /* tests and benchmarks: never use the fast splitter */
    ncu_span_t *spans;
    size_t spans_cap;

    /* The table being read. */
    table_kind_t table;
    int *roles;
    double *scales;
    size_t columns, columns_cap;
    bool expect_units;
    /* With ncu_data_keeps_raw(): the header's names (a jansson array) and
     * the raw-page row being read, {column: cell}. */
    json_t *names;
    json_t *raw_row;
    size_t raw_bytes; /* of cell text in raw_row */

    /* The record being read. */
    row_kind_t row;
    size_t col;
    bool row_bad;
    long id;
    bool have_id;
    char kernel[NCU_CSV_KERNEL_MAX + 1];
    char block[32], grid[32], cc[16], device_name[128];
    char section[128], metric_name[256], metric_unit[32], metric_value[64];
    char rule_name[128], rule_type[8], speedup_type[16], speedup[32];
    char rule_text[RULE_TEXT_MAX];
    double values[NM__COUNT];

    /* Details pages repeat ~90 labels on every launch: remember where each
     * went. Allocated with the first details row; raw pages never need it. */
    label_slot_t *labels;

    size_t rows, skipped_rows, tables;
    bool failed;
    pf_error_t error;
};

/* libcsv grows one buffer for the field being read; refusing to grow it past
 * the limit turns a 10 MB field into CSV_ENOMEM instead of 10 MB of memory. */
static void *s_bounded_realloc(void *ptr, size_t size)
{
    if (size > NCU_CSV_MAX_FIELD + 64)
        return NULL;
    return realloc(ptr, size);
}

ncu_csv_t *ncu_csv_new(ncu_data_t *data, const char *source)
{
    assert(data);
    ncu_csv_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    if (csv_init(&self->csv, CSV_APPEND_NULL) != 0) {
        free(self);
        return NULL;
    }
    self->csv_ready = true;
    csv_set_realloc_func(&self->csv, s_bounded_realloc);
    /* Grow the field buffer in pages, not libcsv's default 128 bytes: rule
     * descriptions run to kilobytes. */
    csv_set_blk_size(&self->csv, 4096);
    self->data = data;
    snprintf(self->source, sizeof self->source, "%s", source ? source : "input");
    self->line_start = true;
    self->line = 1;
    return self;
}

void ncu_csv_destroy(ncu_csv_t **self_p)
{
    assert(self_p);
    ncu_csv_t *self = *self_p;
    if (!self)
        return;
    if (self->csv_ready)
        csv_free(&self->csv);
    free(self->roles);
    free(self->scales);
    free(self->labels);
    free(self->record);
    free(self->spans);
    json_decref(self->names);
    json_decref(self->raw_row);
    free(self);
    *self_p = NULL;
}

static void s_fail(ncu_csv_t *self, pf_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the first error; the parser then ignores the rest of the input. */
static void s_fail(ncu_csv_t *self, pf_status_t code, const char *fmt, ...)
{
    if (self->failed)
        return;
    self->failed = true;
    char what[PF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pf_error_set(&self->error, code, "%s: line %zu: %s", self->source, self->record_line, what);
}

/* The data set's memory budget refused what this row needs. */
static void s_fail_budget(ncu_csv_t *self)
{
    char what[512];
    analysis_budget_describe(ncu_data_budget(self->data), what, sizeof what);
    s_fail(self, PF_ETOOBIG, "%s", what);
}

static void s_copy(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Roles of the header columns ncu prints before the metrics, and of the long
 * format's columns; matched by name since NVTX columns can shift them. */
static int s_role_of(const char *name)
{
    /* Identifying columns have capitalised display names; metrics never do. */
    if (name[0] >= 'A' && name[0] <= 'Z') {
        static const struct {
            const char *name;
            int role;
        } fixed[] = {
            {"ID", COL_ID},
            {"Kernel Name", COL_KERNEL},
            {"Block Size", COL_BLOCK},
            {"Grid Size", COL_GRID},
            {"CC", COL_CC},
            {"Section Name", COL_SECTION},
            {"Metric Name", COL_METRIC_NAME},
            {"Metric Unit", COL_METRIC_UNIT},
            {"Metric Value", COL_METRIC_VALUE},
            {"Rule Name", COL_RULE_NAME},
            {"Rule Type", COL_RULE_TYPE},
            {"Rule Description", COL_RULE_TEXT},
            {"Estimated Speedup Type", COL_SPEEDUP_TYPE},
            {"Estimated Speedup", COL_SPEEDUP},
            {"Invocations", COL_INVOCATIONS},
        };
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (strcmp(fixed[i].name, name) == 0)
                return fixed[i].role;
        return COL_IGNORE;
    }
    if (strcmp(name, "device__attribute_display_name") == 0)
        return COL_DEVICE_NAME;
    int metric = ncu_metric_by_name(name);
    return metric >= 0 ? metric : COL_IGNORE;
}

static bool s_has_role(const ncu_csv_t *self, int role)
{
    for (size_t c = 0; c < self->columns; c++)
        if (self->roles[c] == role)
            return true;
    return false;
}

static void s_reset_record(ncu_csv_t *self)
{
    self->col = 0;
    self->row_bad = false;
    self->have_id = false;
    self->kernel[0] = self->block[0] = self->grid[0] = self->cc[0] = self->device_name[0] = '\0';
    self->section[0] = self->metric_name[0] = self->metric_unit[0] = self->metric_value[0] = '\0';
    self->rule_name[0] = self->rule_type[0] = self->speedup_type[0] = self->speedup[0] = '\0';
    self->rule_text[0] = '\0';
    if (self->table == TABLE_RAW && self->row == ROW_DATA)
        for (int m = 0; m < NM__COUNT; m++)
            self->values[m] = NAN;
    json_decref(self->raw_row);
    self->raw_row = NULL;
    self->raw_bytes = 0;
    bool keep = self->names && ncu_data_keeps_raw(self->data) && self->table == TABLE_RAW && self->row == ROW_DATA;
    if (keep && !(self->raw_row = json_object()))
        s_fail(self, PF_ENOMEM, "out of memory keeping the raw row");
}

/* The name of column `col` of the raw page, when its cells are kept. */
static const char *s_raw_name(const ncu_csv_t *self)
{
    return self->names ? json_string_value(json_array_get(self->names, self->col)) : NULL;
}

/* A cell from the capture as a JSON string: valid UTF-8 first (jansson
 * refuses anything else, and so does the wire). */
static json_t *s_raw_text(const char *field)
{
    char *clean = utf8_clean_dup(field);
    json_t *text = clean ? json_string(clean) : NULL;
    free(clean);
    return text;
}

static void s_header_field(ncu_csv_t *self, const char *field)
{
    if (self->columns >= NCU_CSV_MAX_COLUMNS) {
        s_fail(self, PF_ETOOBIG, "the header has more than %d columns", NCU_CSV_MAX_COLUMNS);
        return;
    }
    if (self->columns == self->columns_cap) {
        size_t cap = self->columns_cap ? self->columns_cap * 2 : 512;
        int *roles = realloc(self->roles, cap * sizeof *roles);
        if (roles)
            self->roles = roles;
        double *scales = realloc(self->scales, cap * sizeof *scales);
        if (scales)
            self->scales = scales;
        if (!roles || !scales) {
            s_fail(self, PF_ENOMEM, "out of memory reading the header");
            return;
        }
        self->columns_cap = cap;
    }
    self->roles[self->columns] = s_role_of(field);
    self->scales[self->columns] = 1.0;
    if (ncu_data_keeps_raw(self->data)) {
        if (self->columns == 0) {
            json_decref(self->names);
            self->names = json_array();
        }
        if (!self->names || json_array_append_new(self->names, s_raw_text(field)) != 0) {
            s_fail(self, PF_ENOMEM, "out of memory reading the header");
            return;
        }
    }
    self->columns++;
}

/* Decides what the header row just read describes. */
static void s_header_end(ncu_csv_t *self)
{
    self->tables++;
    if (s_has_role(self, COL_METRIC_NAME) && s_has_role(self, COL_METRIC_VALUE) &&
        s_has_role(self, COL_ID) && s_has_role(self, COL_KERNEL)) {
        self->table = TABLE_DETAILS;
    } else if (s_has_role(self, COL_INVOCATIONS)) {
        s_fail(self, PF_EBADINPUT, "this is a --print-summary table, which keeps no launches; "
                                   "profile with --page raw or --page details");
    } else if (s_has_role(self, COL_ID) && s_has_role(self, COL_KERNEL)) {
        self->table = TABLE_RAW;
        self->expect_units = true;
    } else if (self->tables == 1) {
        s_fail(self, PF_EBADINPUT,
               "the CSV header has no \"ID\" and \"Kernel Name\" columns: not Nsight Compute "
               "--page raw or --page details output");
    } else {
        /* --print-details all embeds foreign tables (GPU lists); skip them. */
        self->table = TABLE_FOREIGN;
    }
}

static void s_units_field(ncu_csv_t *self, const char *field)
{
    if (self->col < self->columns && self->roles[self->col] >= 0)
        self->scales[self->col] = number_unit_scale(field);
    const char *name = self->col < self->columns ? s_raw_name(self) : NULL;
    json_t *unit = name ? s_raw_text(field) : NULL;
    if (name && (!unit || !ncu_data_add_raw_unit(self->data, name, json_string_value(unit))))
        s_fail(self, PF_ENOMEM, "out of memory keeping the units row");
    json_decref(unit);
}

/* One field of a raw-page launch row. */
static void s_raw_field(ncu_csv_t *self, const char *field, size_t len)
{
    int role = self->col < self->columns ? self->roles[self->col] : COL_IGNORE;
    if (role >= 0) {
        double value;
        if (number_parse(field, len, &value))
            self->values[role] = value * self->scales[self->col];
        return;
    }
    switch (role) {
    case COL_KERNEL: s_copy(self->kernel, sizeof self->kernel, field, len); break;
    case COL_BLOCK: s_copy(self->block, sizeof self->block, field, len); break;
    case COL_GRID: s_copy(self->grid, sizeof self->grid, field, len); break;
    case COL_CC: s_copy(self->cc, sizeof self->cc, field, len); break;
    case COL_DEVICE_NAME: s_copy(self->device_name, sizeof self->device_name, field, len); break;
    default: break;
    }
}

static void s_details_field(ncu_csv_t *self, const char *field, size_t len)
{
    int role = self->col < self->columns ? self->roles[self->col] : COL_IGNORE;
    switch (role) {
    case COL_KERNEL: s_copy(self->kernel, sizeof self->kernel, field, len); break;
    case COL_BLOCK: s_copy(self->block, sizeof self->block, field, len); break;
    case COL_GRID: s_copy(self->grid, sizeof self->grid, field, len); break;
    case COL_CC: s_copy(self->cc, sizeof self->cc, field, len); break;
    case COL_SECTION: s_copy(self->section, sizeof self->section, field, len); break;
    case COL_METRIC_NAME: s_copy(self->metric_name, sizeof self->metric_name, field, len); break;
    case COL_METRIC_UNIT: s_copy(self->metric_unit, sizeof self->metric_unit, field, len); break;
    case COL_METRIC_VALUE: s_copy(self->metric_value, sizeof self->metric_value, field, len); break;
    case COL_RULE_NAME: s_copy(self->rule_name, sizeof self->rule_name, field, len); break;
    case COL_RULE_TYPE: s_copy(self->rule_type, sizeof self->rule_type, field, len); break;
    case COL_RULE_TEXT: s_copy(self->rule_text, sizeof self->rule_text, field, len); break;
    case COL_SPEEDUP_TYPE: s_copy(self->speedup_type, sizeof self->speedup_type, field, len); break;
    case COL_SPEEDUP: s_copy(self->speedup, sizeof self->speedup, field, len); break;
    default: break;
    }
}

/* Parses the ID field; a non-number marks the row bad (counted, skipped). */
static void s_id_field(ncu_csv_t *self, const char *field, size_t len)
{
    char text[32];
    if (len == 0 || len >= sizeof text) {
        self->row_bad = true;
        return;
    }
    memcpy(text, field, len);
    text[len] = '\0';
    char *end = NULL;
    errno = 0;
    long id = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || id < 0) {
        self->row_bad = true;
        return;
    }
    self->id = id;
    self->have_id = true;
}

static void s_on_field(void *s, size_t len, void *arg)
{
    ncu_csv_t *self = arg;
    const char *field = s ? s : "";
    if (self->failed)
        return;

    if (self->col == 0) {
        /* A record whose first field is "ID" starts a new table: several
         * outputs concatenated into one stream are read one after another. */
        if (len == 2 && memcmp(field, "ID", 2) == 0) {
            self->table = TABLE_NONE;
            self->columns = 0;
            self->row = ROW_HEADER;
        } else if (self->table == TABLE_NONE) {
            self->row = ROW_HEADER;
        } else if (self->table == TABLE_RAW && self->expect_units) {
            /* The units row leaves the identifying columns empty. */
            self->row = len == 0 ? ROW_UNITS : ROW_DATA;
            if (self->row == ROW_DATA)
                ncu_data_add_message(self->data, NCU_MSG_NOTE,
                                     "%s: no units row after the header; values were taken as "
                                     "base units", self->source);
            self->expect_units = false;
        } else {
            self->row = ROW_DATA;
        }
        s_reset_record(self);
    }

    switch (self->row) {
    case ROW_HEADER: s_header_field(self, field); break;
    case ROW_UNITS: s_units_field(self, field); break;
    case ROW_DATA: {
        const char *name = self->raw_row && self->col < self->columns ? s_raw_name(self) : NULL;
        if (name && json_object_set_new(self->raw_row, name, s_raw_text(field)) != 0)
            s_fail(self, PF_ENOMEM, "out of memory keeping the raw row");
        self->raw_bytes += name ? len : 0;
        if (self->col < self->columns && self->roles[self->col] == COL_ID)
            s_id_field(self, field, len);
        else if (self->table == TABLE_RAW)
            s_raw_field(self, field, len);
        else if (self->table == TABLE_DETAILS)
            s_details_field(self, field, len);
        break;
    }
    }
    self->col++;
}

static ncu_launch_t *s_row_launch(ncu_csv_t *self)
{
    bool added = false;
    ncu_launch_t *launch =
        ncu_data_launch(self->data, self->id, self->kernel, self->block, self->grid, &added);
    if (!launch && ncu_data_over_budget(self->data))
        s_fail_budget(self);
    else if (!launch)
        s_fail(self, PF_ETOOBIG, "cannot keep another launch (the limit is %d launches per job)",
               NCU_MAX_LAUNCHES);
    return launch;
}

static void s_raw_row_end(ncu_csv_t *self)
{
    ncu_launch_t *launch = s_row_launch(self);
    if (!launch)
        return;
    /* The first pass that measured a metric keeps it: passes of one program
     * measure the same launch, and mixing samples would hide nothing useful. */
    for (int m = 0; m < NM__COUNT; m++)
        if (isnan(launch->v[m]) && !isnan(self->values[m]))
            launch->v[m] = self->values[m];
    if (!ncu_data_add_raw(self->data, launch, &self->raw_row, self->raw_bytes)) {
        if (ncu_data_over_budget(self->data))
            s_fail_budget(self);
        else
            s_fail(self, PF_ENOMEM, "out of memory keeping the raw row");
    }
    ncu_data_set_device(self->data, self->device_name, self->cc);
}

static int s_label_metric(ncu_csv_t *self)
{
    size_t h = 5381;
    for (const char *p = self->section; *p; p++)
        h = h * 33 + (unsigned char) *p;
    for (const char *p = self->metric_name; *p; p++)
        h = h * 33 + (unsigned char) *p;
    /* Linear probing; a full table just stops remembering (no eviction, so
     * two labels can never take turns missing). */
    size_t section_len = strlen(self->section), label_len = strlen(self->metric_name);
    if (!self->labels)
        self->labels = calloc(256, sizeof *self->labels);
    if (!self->labels)
        return ncu_metric_by_label(self->section, self->metric_name);
    for (size_t probe = 0; probe < 16; probe++) {
        label_slot_t *slot = &self->labels[(h + probe) & 255];
        if (!slot->used) {
            int metric = ncu_metric_by_label(self->section, self->metric_name);
            if (section_len < sizeof slot->section && label_len < sizeof slot->label) {
                memcpy(slot->section, self->section, section_len + 1);
                memcpy(slot->label, self->metric_name, label_len + 1);
                slot->metric = metric;
                slot->used = true;
            }
            return metric;
        }
        if (strcmp(slot->label, self->metric_name) == 0 && strcmp(slot->section, self->section) == 0)
            return slot->metric;
    }
    return ncu_metric_by_label(self->section, self->metric_name);
}

static void s_details_row_end(ncu_csv_t *self)
{
    ncu_launch_t *launch = s_row_launch(self);
    if (!launch)
        return;
    ncu_data_set_device(self->data, NULL, self->cc);
    if (self->rule_name[0]) {
        double speedup = NAN;
        if (!number_parse(self->speedup, strlen(self->speedup), &speedup))
            speedup = NAN;
        if (!ncu_data_add_rule(self->data, launch, self->rule_name, self->section, self->rule_type,
                               self->rule_text, strcmp(self->speedup_type, "global") == 0, speedup)) {
            if (ncu_data_over_budget(self->data))
                s_fail_budget(self);
            else
                ncu_data_add_message(self->data, NCU_MSG_NOTE,
                                 "%s: launch %ld has more rule results than kept (%d)",
                                 self->source, self->id, NCU_MAX_RULES_PER_LAUNCH);
        }
        return;
    }
    int metric = s_label_metric(self);
    double value;
    if (metric >= 0 && isnan(launch->v[metric]) &&
        number_parse(self->metric_value, strlen(self->metric_value), &value))
        launch->v[metric] = value * number_unit_scale(self->metric_unit);
}

static void s_on_row(int terminator, void *arg)
{
    (void) terminator;
    ncu_csv_t *self = arg;
    if (self->failed)
        return;
    if (self->col == 0)
        return; /* an empty line */
    switch (self->row) {
    case ROW_HEADER: s_header_end(self); break;
    case ROW_UNITS: break;
    case ROW_DATA:
        if (self->table == TABLE_FOREIGN)
            break;
        if (self->row_bad || !self->have_id || !self->kernel[0]) {
            self->skipped_rows++;
            break;
        }
        if (self->table == TABLE_RAW && self->col < self->columns) {
            /* ncu writes every field of every row: a short row is a capture
             * cut short, and its launch's missing metrics would read as
             * "not measured" rather than as the bad input it is. */
            s_fail(self, PF_EBADINPUT,
                   "the row has %zu of the header's %zu fields: the file is cut short (a truncated capture)",
                   self->col, self->columns);
            break;
        }
        self->rows++;
        if (self->table == TABLE_RAW)
            s_raw_row_end(self);
        else
            s_details_row_end(self);
        break;
    }
    self->col = 0;
}

/* A line outside the CSV: keep what ncu reports, skip the program's output. */
static void s_message_line(ncu_csv_t *self)
{
    char *text = self->message;
    self->message[self->message_len] = '\0';
    size_t n = self->message_len;
    while (n > 0 && (text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    if (strncmp(text, "==ERROR==", 9) == 0) {
        const char *body = text + 9;
        while (*body == ' ')
            body++;
        ncu_data_add_message(self->data, NCU_MSG_ERROR, "%s", body);
    } else if (strncmp(text, "==WARNING==", 11) == 0) {
        const char *body = text + 11;
        while (*body == ' ')
            body++;
        if (strstr(body, "No kernels were profiled"))
            ncu_data_set_no_kernels(self->data);
        /* The clock note is printed on every --clock-control none run. */
        if (strncmp(body, "Note: Running with unmodified GPU clocks", 40) != 0)
            ncu_data_add_message(self->data, NCU_MSG_WARNING, "%s", body);
    }
    self->message_len = 0;
}

/* Whether a run of bytes holds an odd number of '"'. Every ncu field is
 * quoted, so this runs over every byte of a capture: it looks at eight bytes
 * at a time and folds their quote flags with XOR, since only parity matters. */
static bool s_odd_quotes(const char *p, size_t n)
{
    const uint64_t quotes = 0x2222222222222222ull, low7 = 0x7F7F7F7F7F7F7F7Full;
    uint64_t flags = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t x = w ^ quotes; /* zero bytes where p had a quote */
        flags ^= ~(((x & low7) + low7) | x | low7);
    }
    unsigned odd = 0;
    for (; i < n; i++)
        odd ^= p[i] == '"';
    /* Parity of the set bits of `flags`. */
    flags ^= flags >> 32;
    flags ^= flags >> 16;
    flags ^= flags >> 8;
    flags ^= flags >> 4;
    flags ^= flags >> 2;
    flags ^= flags >> 1;
    return ((unsigned) flags & 1u) ^ odd;
}

static pf_status_t s_csv_parse(ncu_csv_t *self, const char *bytes, size_t len)
{
    if (len == 0)
        return PF_OK;
    if (csv_parse(&self->csv, bytes, len, s_on_field, s_on_row, self) != len && !self->failed) {
        int code = csv_error(&self->csv);
        if (code == CSV_ENOMEM || code == CSV_ETOOBIG) {
            s_fail(self, PF_ETOOBIG, "a field is longer than %u bytes", NCU_CSV_MAX_FIELD);
        } else {
            s_fail(self, PF_EBADINPUT, "malformed CSV: %s", csv_strerror(code));
        }
    }
    return self->failed ? self->error.code : PF_OK;
}

void ncu_csv_set_libcsv_only(ncu_csv_t *self, bool libcsv_only)
{
    assert(self);
    self->libcsv_only = libcsv_only;
}

/* Adds bytes to the record being gathered; false when it would outgrow
 * RECORD_MAX (or memory), and the caller streams it through libcsv. */
static bool s_record_append(ncu_csv_t *self, const char *bytes, size_t len)
{
    if (len > RECORD_MAX - self->record_len)
        return false;
    /* One byte to spare: the fast path may write a NUL after the record. */
    size_t need = self->record_len + len + 1;
    if (need > self->record_cap) {
        size_t cap = self->record_cap ? self->record_cap : 64 * 1024;
        while (cap < need)
            cap *= 2;
        char *grown = realloc(self->record, cap);
        if (!grown)
            return false;
        self->record = grown;
        self->record_cap = cap;
    }
    memcpy(self->record + self->record_len, bytes, len);
    self->record_len += len;
    return true;
}

/* Splits the gathered record with ncu_split_quoted() and reports its fields
 * and its end as libcsv would; false when the record is not of ncu's shape. */
static bool s_record_split(ncu_csv_t *self)
{
    /* libcsv's own struct says whether it holds part of a record (pstate 0 is
     * its ROW_NOT_BEGUN): after odd input read by libcsv, a record can start
     * inside libcsv's idea of a quoted field, and only libcsv may go on. */
    if (self->libcsv_only || self->csv.pstate != 0)
        return false;
    size_t len = self->record_len;
    if (len > 0 && self->record[len - 1] == '\n')
        len--;
    if (len > 0 && self->record[len - 1] == '\r')
        len--;
    size_t count = ncu_split_quoted(self->record, len, self->spans, self->spans_cap,
                                    NCU_CSV_MAX_FIELD);
    if (count != SIZE_MAX && count > self->spans_cap) {
        /* Past the column limit libcsv reads it, and the header check says no. */
        if (count > NCU_CSV_MAX_COLUMNS + 1)
            return false;
        ncu_span_t *grown = realloc(self->spans, count * sizeof *grown);
        if (!grown)
            return false;
        self->spans = grown;
        self->spans_cap = count;
        count = ncu_split_quoted(self->record, len, self->spans, self->spans_cap, NCU_CSV_MAX_FIELD);
    }
    if (count == SIZE_MAX)
        return false;
    for (size_t k = 0; k < count && !self->failed; k++) {
        /* Field handlers expect a terminated string, as CSV_APPEND_NULL gives:
         * the closing quote becomes the NUL. An empty field may have none. */
        char *field = NULL;
        if (self->spans[k].len > 0) {
            field = self->record + self->spans[k].off;
            field[self->spans[k].len] = '\0';
        }
        s_on_field(field, self->spans[k].len, self);
    }
    s_on_row('\n', self);
    return true;
}

/* A whole record has been gathered: the fast splitter, else libcsv. */
static pf_status_t s_record_end(ncu_csv_t *self)
{
    pf_status_t rc = PF_OK;
    if (!s_record_split(self))
        rc = s_csv_parse(self, self->record, self->record_len);
    self->record_len = 0;
    return self->failed ? self->error.code : rc;
}

pf_status_t ncu_csv_feed(ncu_csv_t *self, const char *bytes, size_t len, pf_error_t *err)
{
    assert(self);
    size_t i = 0;
    while (i < len && !self->failed) {
        if (self->line_start) {
            self->line_start = false;
            if (!self->in_record || !self->quote_open) {
                self->in_record = bytes[i] == '"';
                self->record_line = self->line;
                self->message_len = 0;
            }
        }
        if (!self->in_record) {
            const char *nl = memchr(bytes + i, '\n', len - i);
            size_t end = nl ? (size_t) (nl - bytes) : len;
            size_t room = sizeof self->message - 1 - self->message_len;
            size_t take = end - i < room ? end - i : room;
            memcpy(self->message + self->message_len, bytes + i, take);
            self->message_len += take;
            if (nl) {
                s_message_line(self);
                self->line++;
                self->line_start = true;
                i = end + 1;
            } else {
                i = len;
            }
            continue;
        }
        /* Inside a record: find the newline that ends it. A newline inside a
         * quoted field does not, so quotes are counted line by line. */
        size_t start = i;
        bool ended = false;
        while (i < len) {
            const char *nl = memchr(bytes + i, '\n', len - i);
            size_t end = nl ? (size_t) (nl - bytes) : len;
            if (s_odd_quotes(bytes + i, end - i))
                self->quote_open = !self->quote_open;
            i = end;
            if (!nl)
                break;
            i++; /* past the newline */
            self->line++;
            if (!self->quote_open) {
                ended = true;
                break;
            }
        }
        if (self->streaming) {
            if (s_csv_parse(self, bytes + start, i - start) != PF_OK)
                break;
        } else if (!s_record_append(self, bytes + start, i - start)) {
            /* Too long to gather: libcsv reads what was gathered, then the
             * rest of the record as it comes. */
            self->streaming = true;
            size_t held = self->record_len;
            self->record_len = 0;
            if (s_csv_parse(self, self->record, held) != PF_OK ||
                s_csv_parse(self, bytes + start, i - start) != PF_OK)
                break;
        }
        if (ended) {
            if (!self->streaming && s_record_end(self) != PF_OK)
                break;
            self->streaming = false;
            self->line_start = true;
        }
    }
    if (self->failed) {
        if (err)
            *err = self->error;
        return self->error.code;
    }
    return PF_OK;
}

pf_status_t ncu_csv_finish(ncu_csv_t *self, pf_error_t *err)
{
    assert(self);
    /* Cut inside a quoted field says so before the short row it leaves. */
    if (!self->failed && self->quote_open)
        s_fail(self, PF_EBADINPUT, "the input ends inside a quoted field (truncated file?)");
    if (!self->failed) {
        if (self->message_len > 0)
            s_message_line(self);
        /* A last record without a newline: libcsv ends it in csv_fini. */
        size_t held = self->record_len;
        self->record_len = 0;
        if (held > 0)
            s_csv_parse(self, self->record, held);
        if (!self->failed)
            csv_fini(&self->csv, s_on_field, s_on_row, self);
    }
    if (!self->failed && self->quote_open)
        s_fail(self, PF_EBADINPUT, "the input ends inside a quoted field (truncated file?)");
    if (!self->failed && self->tables == 0 && ncu_data_message_count(self->data, NCU_MSG_ERROR) == 0 &&
        !ncu_data_no_kernels(self->data)) {
        self->record_line = self->line;
        s_fail(self, PF_EBADINPUT,
               "no Nsight Compute CSV found (expected a header line starting with \"ID\")");
    }
    if (!self->failed && self->table == TABLE_RAW && self->expect_units && self->rows == 0)
        ncu_data_add_message(self->data, NCU_MSG_NOTE, "%s: the table has a header but no rows",
                             self->source);
    if (!self->failed && self->skipped_rows > 0)
        ncu_data_add_message(self->data, NCU_MSG_NOTE,
                             "%s: skipped %zu rows without a numeric ID and a kernel name",
                             self->source, self->skipped_rows);
    if (self->failed) {
        if (err)
            *err = self->error;
        return self->error.code;
    }
    return PF_OK;
}

pf_status_t ncu_csv_parse_buffer(ncu_data_t *data, const char *source, const char *bytes,
                                 size_t len, pf_error_t *err)
{
    ncu_csv_t *csv = ncu_csv_new(data, source);
    if (!csv)
        return pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
    pf_status_t rc = ncu_csv_feed(csv, bytes, len, err);
    if (rc == PF_OK)
        rc = ncu_csv_finish(csv, err);
    ncu_csv_destroy(&csv);
    return rc;
}

pf_status_t ncu_csv_parse_file(ncu_data_t *data, const char *path, pf_error_t *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pf_error_set(err, PF_EIO, "%s: cannot open: %s", path, strerror(errno));
    ncu_csv_t *csv = ncu_csv_new(data, is_stdin ? "<stdin>" : path);
    char *buf = malloc(NCU_CSV_READ_CHUNK);
    pf_status_t rc = PF_OK;
    if (!csv || !buf) {
        rc = pf_error_set(err, PF_ENOMEM, "%s: out of memory", path);
        goto cleanup;
    }
    for (;;) {
        ssize_t got = read(fd, buf, NCU_CSV_READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = pf_error_set(err, PF_EIO, "%s: read failed: %s", path, strerror(errno));
            goto cleanup;
        }
        if (got == 0)
            break;
        rc = ncu_csv_feed(csv, buf, (size_t) got, err);
        if (rc != PF_OK)
            goto cleanup;
    }
    rc = ncu_csv_finish(csv, err);
cleanup:
    free(buf);
    ncu_csv_destroy(&csv);
    if (!is_stdin)
        close(fd);
    return rc;
}
