#include "ncu_data.h"

#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fnv1a.h"

#define MESSAGE_MAX 1024

/* Launches are kept in blocks of this many, not one array grown by
 * realloc: a 20,000-launch job's array was 20 MB, copied at each doubling
 * (the old and the new held at once) and leaving holes the next job's could
 * not reuse. A block is about 500 KB. */
#define LAUNCH_BLOCK 512

struct ncu_data_t {
    ncu_launch_t **blocks; /* launch i is blocks[i / LAUNCH_BLOCK][i % LAUNCH_BLOCK] */
    size_t count, block_count, block_cap;
    /* Open-addressing index from launch ID to position + 1 (0 = empty).
     * Several launches may share an ID when passes disagree on the kernel. */
    size_t *index;
    size_t index_cap;
    char *messages[3][NCU_MAX_MESSAGES];
    size_t message_count[3];
    size_t messages_dropped[3];
    /* Interned strings: open addressing, NULL = empty. */
    char **strings;
    size_t string_count, string_cap;
    char device[128];
    char cc[16];
    bool no_kernels;
    bool keep_raw;
    json_t *raw_units; /* {column: unit} of the raw pages, with keep_raw */
    size_t raw_bytes;  /* of cell text kept, for NCU_MAX_RAW_BYTES */
    analysis_budget_t *budget; /* ncu_data_set_budget(), or NULL */
    size_t charged;    /* bytes charged to it */
    size_t raw_charged; /* of which for raw cells */
    bool over;         /* the budget refused a charge */
};

/* Raw cells kept as jansson objects take about this many bytes per byte of
 * cell text (NCU_MAX_RAW_BYTES's comment). */
#define RAW_BYTES_HELD 25

ncu_data_t *ncu_data_new(void)
{
    return calloc(1, sizeof(ncu_data_t));
}

static ncu_launch_t *s_at(const ncu_data_t *self, size_t i)
{
    return &self->blocks[i / LAUNCH_BLOCK][i % LAUNCH_BLOCK];
}

/* Charges `bytes` about to be held; false (and `over` set) when the budget
 * has no room. */
static bool s_charge(ncu_data_t *self, size_t bytes)
{
    if (!analysis_budget_take(self->budget, bytes)) {
        self->over = true;
        return false;
    }
    self->charged += bytes;
    return true;
}

static void s_uncharge(ncu_data_t *self, size_t bytes)
{
    assert(bytes <= self->charged);
    analysis_budget_give(self->budget, bytes);
    self->charged -= bytes;
}

void ncu_data_set_budget(ncu_data_t *self, analysis_budget_t *budget)
{
    assert(self && self->charged == 0); /* set before anything is held: our bug otherwise */
    self->budget = budget;
}

analysis_budget_t *ncu_data_budget(const ncu_data_t *self) { return self->budget; }
bool ncu_data_over_budget(const ncu_data_t *self) { return self->over; }

static void s_launch_free(ncu_launch_t *launch)
{
    free(launch->rules);
    json_decref(launch->raw);
}

void ncu_data_destroy(ncu_data_t **self_p)
{
    assert(self_p);
    ncu_data_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        s_launch_free(s_at(self, i));
    for (size_t b = 0; b < self->block_count; b++)
        free(self->blocks[b]);
    free(self->blocks);
    free(self->index);
    for (size_t i = 0; i < self->string_cap; i++)
        free(self->strings[i]);
    free(self->strings);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < self->message_count[k]; i++)
            free(self->messages[k][i]);
    json_decref(self->raw_units);
    analysis_budget_give(self->budget, self->charged);
    free(self);
    *self_p = NULL;
}

static size_t s_hash_id(long id, size_t cap)
{
    uint64_t x = (uint64_t) id * 0x9E3779B97F4A7C15ull;
    return (size_t) (x >> 17) & (cap - 1);
}

static bool s_index_grow(ncu_data_t *self)
{
    size_t cap = self->index_cap ? self->index_cap * 2 : 64;
    if (!s_charge(self, (cap - self->index_cap) * sizeof(size_t)))
        return false;
    size_t *index = calloc(cap, sizeof *index);
    if (!index) {
        s_uncharge(self, (cap - self->index_cap) * sizeof(size_t));
        return false;
    }
    for (size_t i = 0; i < self->count; i++) {
        size_t slot = s_hash_id(s_at(self, i)->id, cap);
        while (index[slot])
            slot = (slot + 1) & (cap - 1);
        index[slot] = i + 1;
    }
    free(self->index);
    self->index = index;
    self->index_cap = cap;
    return true;
}

static const char *s_intern(ncu_data_t *self, const char *text);

/* Room for LAUNCH_BLOCK more launches. A block is not zeroed: only the
 * pages its launches fill are touched, so a capture of a few launches costs
 * a few KB of it. */
static bool s_add_block(ncu_data_t *self)
{
    if (self->block_count == self->block_cap) {
        size_t cap = self->block_cap ? self->block_cap * 2 : 8;
        if (!s_charge(self, (cap - self->block_cap) * sizeof(ncu_launch_t *)))
            return false;
        ncu_launch_t **blocks = realloc(self->blocks, cap * sizeof *blocks);
        if (!blocks)
            return false;
        self->blocks = blocks;
        self->block_cap = cap;
    }
    ncu_launch_t *block = malloc(LAUNCH_BLOCK * sizeof *block);
    if (!block)
        return false;
    self->blocks[self->block_count++] = block;
    return true;
}

ncu_launch_t *ncu_data_launch(ncu_data_t *self, long id, const char *kernel, const char *block,
                              const char *grid, bool *added)
{
    assert(self && kernel && block && grid);
    *added = false;
    if (self->index_cap) {
        for (size_t slot = s_hash_id(id, self->index_cap); self->index[slot];
             slot = (slot + 1) & (self->index_cap - 1)) {
            ncu_launch_t *launch = s_at(self, self->index[slot] - 1);
            if (launch->id == id && strcmp(launch->kernel, kernel) == 0 &&
                strcmp(launch->block, block) == 0 && strcmp(launch->grid, grid) == 0)
                return launch;
        }
    }
    if (self->count >= NCU_MAX_LAUNCHES)
        return NULL;
    /* Keep the index at most half full. */
    if ((self->count + 1) * 2 > self->index_cap && !s_index_grow(self))
        return NULL;
    if (self->count == self->block_count * LAUNCH_BLOCK && !s_add_block(self))
        return NULL;
    ncu_launch_t *launch = s_at(self, self->count);
    memset(launch, 0, sizeof *launch);
    /* Charged by the launch, not by the block it fills (untouched pages of
     * a block are not held). */
    if (!s_charge(self, sizeof *launch))
        return NULL;
    launch->kernel = s_intern(self, kernel);
    if (!launch->kernel)
        return NULL;
    launch->id = id;
    snprintf(launch->block, sizeof launch->block, "%s", block);
    snprintf(launch->grid, sizeof launch->grid, "%s", grid);
    for (int m = 0; m < NM__COUNT; m++)
        launch->v[m] = NAN;

    size_t slot = s_hash_id(id, self->index_cap);
    while (self->index[slot])
        slot = (slot + 1) & (self->index_cap - 1);
    self->index[slot] = ++self->count;
    *added = true;
    return launch;
}

static size_t s_hash_string(const char *text) { return (size_t) fnv1a_update_str(FNV1A_BASIS, text); }

/* Returns the pool's copy of `text`, adding it if new; NULL when out of memory. */
static const char *s_intern(ncu_data_t *self, const char *text)
{
    if ((self->string_count + 1) * 2 > self->string_cap) {
        size_t cap = self->string_cap ? self->string_cap * 2 : 256;
        if (!s_charge(self, (cap - self->string_cap) * sizeof(char *)))
            return NULL;
        char **strings = calloc(cap, sizeof *strings);
        if (!strings)
            return NULL;
        for (size_t i = 0; i < self->string_cap; i++) {
            if (!self->strings[i])
                continue;
            size_t slot = s_hash_string(self->strings[i]) & (cap - 1);
            while (strings[slot])
                slot = (slot + 1) & (cap - 1);
            strings[slot] = self->strings[i];
        }
        free(self->strings);
        self->strings = strings;
        self->string_cap = cap;
    }
    size_t slot = s_hash_string(text) & (self->string_cap - 1);
    for (; self->strings[slot]; slot = (slot + 1) & (self->string_cap - 1))
        if (strcmp(self->strings[slot], text) == 0)
            return self->strings[slot];
    if (!s_charge(self, strlen(text) + 1))
        return NULL;
    self->strings[slot] = strdup(text);
    if (!self->strings[slot])
        return NULL;
    self->string_count++;
    return self->strings[slot];
}

bool ncu_data_add_rule(ncu_data_t *self, ncu_launch_t *launch, const char *name,
                       const char *section, const char *type, const char *text, bool global,
                       double speedup)
{
    name = s_intern(self, name);
    section = s_intern(self, section);
    text = s_intern(self, text);
    if (!name || !section || !text)
        return false;
    for (size_t r = 0; r < launch->rule_count; r++) {
        const ncu_rule_t *rule = &launch->rules[r];
        if (rule->name == name && rule->text == text)
            return true; /* the same rule seen again in another pass */
    }
    if (launch->rule_count >= NCU_MAX_RULES_PER_LAUNCH)
        return false;
    if (launch->rule_count == launch->rule_cap) {
        size_t cap = launch->rule_cap ? launch->rule_cap * 2 : 8;
        if (!s_charge(self, (cap - launch->rule_cap) * sizeof(ncu_rule_t)))
            return false;
        ncu_rule_t *rules = realloc(launch->rules, cap * sizeof *rules);
        if (!rules)
            return false;
        launch->rules = rules;
        launch->rule_cap = cap;
    }
    ncu_rule_t *rule = &launch->rules[launch->rule_count];
    rule->name = name;
    rule->section = section;
    rule->text = text;
    snprintf(rule->type, sizeof rule->type, "%s", type);
    rule->global = global;
    rule->speedup = speedup;
    launch->rule_count++;
    return true;
}

size_t ncu_data_count(const ncu_data_t *self) { return self->count; }

ncu_launch_t *ncu_data_at(ncu_data_t *self, size_t index)
{
    assert(index < self->count);
    return s_at(self, index);
}

const ncu_launch_t *ncu_data_at_const(const ncu_data_t *self, size_t index)
{
    assert(index < self->count);
    return s_at(self, index);
}

void ncu_data_add_message(ncu_data_t *self, ncu_msg_kind_t kind, const char *fmt, ...)
{
    assert(kind <= NCU_MSG_NOTE);
    char text[MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < self->message_count[kind]; i++)
        if (strcmp(self->messages[kind][i], text) == 0)
            return; /* passes repeat the same warnings */
    if (self->message_count[kind] >= NCU_MAX_MESSAGES) {
        self->messages_dropped[kind]++;
        return;
    }
    char *copy = strdup(text);
    if (copy)
        self->messages[kind][self->message_count[kind]++] = copy;
}

size_t ncu_data_message_count(const ncu_data_t *self, ncu_msg_kind_t kind)
{
    return self->message_count[kind];
}

const char *ncu_data_message(const ncu_data_t *self, ncu_msg_kind_t kind, size_t index)
{
    assert(index < self->message_count[kind]);
    return self->messages[kind][index];
}

void ncu_data_set_device(ncu_data_t *self, const char *name, const char *cc)
{
    if (name && *name && !self->device[0])
        snprintf(self->device, sizeof self->device, "%s", name);
    if (cc && *cc && !self->cc[0])
        snprintf(self->cc, sizeof self->cc, "%s", cc);
}

const char *ncu_data_device(const ncu_data_t *self) { return self->device; }
const char *ncu_data_cc(const ncu_data_t *self) { return self->cc; }
void ncu_data_set_no_kernels(ncu_data_t *self) { self->no_kernels = true; }
bool ncu_data_no_kernels(const ncu_data_t *self) { return self->no_kernels; }

void ncu_data_keep_raw(ncu_data_t *self) { self->keep_raw = true; }
bool ncu_data_keeps_raw(const ncu_data_t *self) { return self->keep_raw; }
json_t *ncu_data_raw_units(const ncu_data_t *self) { return self->raw_units; }

/* Drops every raw cell kept: all launches have theirs or none does, so a
 * reader never takes a launch with cells for the last one. */
static void s_drop_raw(ncu_data_t *self, bool say)
{
    for (size_t i = 0; i < self->count; i++) {
        json_decref(s_at(self, i)->raw);
        s_at(self, i)->raw = NULL;
    }
    json_decref(self->raw_units);
    self->raw_units = NULL;
    self->keep_raw = false;
    s_uncharge(self, self->raw_charged);
    self->raw_charged = 0;
    if (say)
        ncu_data_add_message(self, NCU_MSG_NOTE,
                             "the collated data carries no raw-page cells: the capture holds more than %u MiB "
                             "of them; its values are there in base units",
                             NCU_MAX_RAW_BYTES >> 20);
}

bool ncu_data_add_raw(ncu_data_t *self, ncu_launch_t *launch, json_t **row_p, size_t bytes)
{
    json_t *row = *row_p;
    *row_p = NULL;
    if (!row || !self->keep_raw) {
        json_decref(row);
        return true;
    }
    self->raw_bytes += bytes;
    if (self->raw_bytes > NCU_MAX_RAW_BYTES) {
        json_decref(row);
        s_drop_raw(self, true);
        return true;
    }
    if (!s_charge(self, bytes * RAW_BYTES_HELD)) {
        json_decref(row);
        return false;
    }
    self->raw_charged += bytes * RAW_BYTES_HELD;
    if (!launch->raw) {
        launch->raw = row;
        return true;
    }
    int rc = json_object_update_missing(launch->raw, row);
    json_decref(row);
    return rc == 0;
}

bool ncu_data_add_raw_unit(ncu_data_t *self, const char *column, const char *unit)
{
    if (!self->keep_raw)
        return true;
    if (!self->raw_units && !(self->raw_units = json_object()))
        return false;
    if (json_object_get(self->raw_units, column))
        return true;
    return json_object_set_new(self->raw_units, column, json_string(unit)) == 0;
}

bool ncu_data_merge(ncu_data_t *self, const ncu_data_t *from)
{
    /* A pass that dropped its cells (and said so: its note is merged below)
     * leaves the job without any, as do passes over the budget together. */
    if (self->keep_raw && !from->keep_raw)
        s_drop_raw(self, false);
    self->raw_bytes += from->raw_bytes;
    if (self->keep_raw && self->raw_bytes > NCU_MAX_RAW_BYTES)
        s_drop_raw(self, true);
    if (self->keep_raw && from->raw_bytes) {
        if (!s_charge(self, from->raw_bytes * RAW_BYTES_HELD))
            return false;
        self->raw_charged += from->raw_bytes * RAW_BYTES_HELD;
    }
    for (size_t i = 0; i < from->count; i++) {
        const ncu_launch_t *src = s_at(from, i);
        bool added = false;
        ncu_launch_t *dst = ncu_data_launch(self, src->id, src->kernel, src->block, src->grid, &added);
        if (!dst)
            return false;
        for (int m = 0; m < NM__COUNT; m++)
            if (isnan(dst->v[m]) && !isnan(src->v[m]))
                dst->v[m] = src->v[m];
        json_t *raw = src->raw && self->keep_raw ? json_deep_copy(src->raw) : NULL;
        if ((src->raw && self->keep_raw && !raw) || !ncu_data_add_raw(self, dst, &raw, 0))
            return false;
        for (size_t r = 0; r < src->rule_count; r++) {
            const ncu_rule_t *rule = &src->rules[r];
            if (!ncu_data_add_rule(self, dst, rule->name, rule->section, rule->type, rule->text,
                                   rule->global, rule->speedup))
                return false;
        }
    }
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < from->message_count[k]; i++)
            ncu_data_add_message(self, (ncu_msg_kind_t) k, "%s", from->messages[k][i]);
    const char *column;
    json_t *unit;
    json_object_foreach(from->raw_units, column, unit)
        if (!ncu_data_add_raw_unit(self, column, json_string_value(unit)))
            return false;
    ncu_data_set_device(self, from->device, from->cc);
    if (from->no_kernels)
        self->no_kernels = true;
    return true;
}

/* Whether the data set holds nothing a merge into it could meet. */
static bool s_is_empty(const ncu_data_t *self)
{
    for (int k = 0; k < 3; k++)
        if (self->message_count[k] || self->messages_dropped[k])
            return false;
    return self->count == 0 && self->string_count == 0 && !self->device[0] && !self->cc[0] && !self->no_kernels &&
           !self->raw_units && self->raw_bytes == 0;
}

bool ncu_data_absorb(ncu_data_t *self, ncu_data_t **from_p)
{
    assert(self && from_p && *from_p);
    ncu_data_t *from = *from_p;
    *from_p = NULL;
    bool ok = true;
    /* Merging into an empty set copies `from` whole, raw cells too unless
     * `self` keeps none: then the sets are swapped instead. */
    if (s_is_empty(self) && (self->keep_raw || !from->keep_raw)) {
        ncu_data_t empty = *self;
        *self = *from;
        *from = empty;
        /* Each keeps its budget; what is held moves to the other's. */
        analysis_budget_t *mine = from->budget, *theirs = self->budget;
        self->budget = mine;
        from->budget = theirs;
        if (mine != theirs) {
            analysis_budget_give(theirs, self->charged);
            analysis_budget_force(mine, self->charged);
            analysis_budget_give(mine, from->charged);
            analysis_budget_force(theirs, from->charged);
        }
    } else {
        ok = ncu_data_merge(self, from);
    }
    ncu_data_destroy(&from);
    return ok;
}
