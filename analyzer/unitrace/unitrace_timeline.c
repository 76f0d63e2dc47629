#include "unitrace_timeline.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ITT_TASK "ittapi::model run loop"

void unitrace_timeline_destroy(unitrace_timeline_t **self_p)
{
    assert(self_p);
    unitrace_timeline_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->segment_count; i++)
        free(self->segments[i].label);
    free(self->segments);
    free(self->instances);
    free(self);
    *self_p = NULL;
}

/* unitrace writes ids as strings ("17"); accept numbers too. */
static bool s_id(json_t *value, long *id)
{
    if (json_is_integer(value)) {
        *id = (long) json_integer_value(value);
        return *id >= 0;
    }
    const char *text = json_string_value(value);
    if (!text || !*text)
        return false;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (*end || errno || v < 0)
        return false;
    *id = v;
    return true;
}

static int s_instance_cmp(const void *a, const void *b)
{
    const ut_instance_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static json_t *s_load(const char *bytes, size_t len, json_error_t *error)
{
    /* Drop NUL bytes: unitrace can leave them in the file. */
    char *clean = malloc(len + 3);
    if (!clean)
        return NULL;
    clean[0] = '\0';
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (bytes[i])
            clean[n++] = bytes[i];
    json_t *root = json_loadb(clean, n, JSON_REJECT_DUPLICATES, error);
    if (!root) {
        /* A process that ended early leaves the event list open. */
        while (n > 0 && (clean[n - 1] == '\n' || clean[n - 1] == ' ' || clean[n - 1] == ','))
            n--;
        memcpy(clean + n, "]}", 2);
        root = json_loadb(clean, n + 2, 0, NULL);
    }
    free(clean);
    return root;
}

unitrace_timeline_t *unitrace_timeline_parse(const char *source, const char *bytes, size_t len,
                                             pf_error_t *err)
{
    if (len > UNITRACE_TIMELINE_MAX_BYTES) {
        pf_error_set(err, PF_ETOOBIG, "%s: the timeline is larger than %zu bytes", source,
                     UNITRACE_TIMELINE_MAX_BYTES);
        return NULL;
    }
    json_error_t error;
    memset(&error, 0, sizeof error);
    json_t *root = s_load(bytes, len, &error);
    json_t *events = root ? json_object_get(root, "traceEvents") : NULL;
    if (!json_is_array(events)) {
        pf_error_set(err, PF_EBADINPUT, "%s: line %d: not a chrome trace (%s)", source,
                     root ? 0 : error.line, root ? "no traceEvents array" : error.text);
        json_decref(root);
        return NULL;
    }
    unitrace_timeline_t *self = calloc(1, sizeof *self);
    size_t n = json_array_size(events);
    if (self) {
        self->instances = calloc(n ? n : 1, sizeof *self->instances);
        self->segments = calloc(n ? n : 1, sizeof *self->segments);
    }
    if (!self || !self->instances || !self->segments) {
        unitrace_timeline_destroy(&self);
        json_decref(root);
        pf_error_set(err, PF_ENOMEM, "%s: out of memory", source);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *event = json_array_get(events, i);
        json_t *ts = json_object_get(event, "ts"), *dur = json_object_get(event, "dur");
        if (!json_is_number(ts) || !json_is_number(dur))
            continue;
        double start = json_number_value(ts), length = json_number_value(dur);
        if (!isfinite(start) || !isfinite(length) || length < 0)
            continue;
        const char *name = json_string_value(json_object_get(event, "name"));
        if (name && strncmp(name, ITT_TASK, strlen(ITT_TASK)) == 0) {
            const char *rest = name + strlen(ITT_TASK);
            if (*rest && strncmp(rest, "::", 2) != 0)
                continue; /* another task that merely starts the same way */
            char *label = strdup(*rest ? rest + 2 : "default");
            if (!label)
                continue;
            self->segments[self->segment_count++] = (ut_segment_t){label, start, start + length};
            continue;
        }
        long id;
        if (s_id(json_object_get(json_object_get(event, "args"), "id"), &id))
            self->instances[self->instance_count++] = (ut_instance_t){id, start, start + length};
    }
    json_decref(root);
    qsort(self->instances, self->instance_count, sizeof *self->instances, s_instance_cmp);
    return self;
}

int unitrace_timeline_in_segment(const unitrace_timeline_t *self, size_t s, long id)
{
    assert(s < self->segment_count);
    const ut_segment_t *seg = &self->segments[s];
    /* Instances are sorted by id: find the first with this id. */
    size_t lo = 0, hi = self->instance_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (self->instances[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < self->instance_count && self->instances[i].id == id; i++)
        if (self->instances[i].start >= seg->start && self->instances[i].end <= seg->end)
            return 1;
    return 0;
}
