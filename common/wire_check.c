/* wire_check: what a decoded message must mean (see wire_check.h).
 *
 * One file of ~1,100 lines because it is one table of rules over one schema:
 * a check function per message, in proto/profeed.proto's order, sharing the
 * field-path and failure helpers at the top, so a rule for a new field is
 * found beside its message's others. */
#include "wire_check.h"

#include "pass_chunk.h"

#include "utf8.h"
#include "wire_path.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Field paths ("Envelope.feedback.findings[12].evidence[3]") are built from
 * schema names, at most 6 deep, and indices: they fit. */
#define PATH_LEN 256
/* How much of an offending value an error message quotes. */
#define QUOTE_LEN 48

/* Flags for s_check_str(). */
enum {
    STR_REQUIRED = 1 << 0, /* absent or "" is an error */
    STR_LINE = 1 << 1,     /* one line: no control characters at all */
};

/* Formats a field path into `buf`. Were one ever cut short (a deeper schema),
 * only an error message would be shorter, so no check beyond termination. */
static void s_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void s_path(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(buf, size, fmt, ap) < 0)
        buf[0] = '\0';
    va_end(ap);
}

/* Fills `err` with "<where>.<field>: <reason>" (just "<where>: " when field is
 * NULL) and returns `code`. */
static pf_status_t s_fail(pf_error_t *err, pf_status_t code, const char *where, const char *field,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static pf_status_t s_fail(pf_error_t *err, pf_status_t code, const char *where, const char *field,
                          const char *fmt, ...)
{
    char reason[PF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap); /* a cut-short reason is still a reason */
    va_end(ap);
    if (field)
        return pf_error_set(err, code, "%s.%s: %s", where, field, reason);
    return pf_error_set(err, code, "%s: %s", where, reason);
}

/* Quotes a value from the wire for an error message: printable ASCII as is,
 * anything else as \xNN, cut at QUOTE_LEN bytes, so a hostile value can neither
 * flood nor forge log lines. */
static const char *s_quote(char *buf, size_t size, const char *value)
{
    assert(size >= QUOTE_LEN * 4 + 8);
    size_t out = 0;
    buf[out++] = '"';
    size_t i = 0;
    for (; value[i] && i < QUOTE_LEN; i++) {
        unsigned char c = (unsigned char) value[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            buf[out++] = (char) c;
        else
            out += (size_t) snprintf(buf + out, size - out, "\\x%02x", c);
    }
    if (value[i])
        out += (size_t) snprintf(buf + out, size - out, "...");
    buf[out++] = '"';
    buf[out] = '\0';
    return buf;
}

/* ---------------------------------------------------------------------------
 * What every field must satisfy whatever it means, checked by walking the
 * descriptors so that a field added to the .proto is covered without touching
 * this file: enum values known to this schema, strings valid UTF-8, doubles
 * finite (JSON and the renderers have no NaN), and, for messages built in
 * memory before packing, no NULL where protobuf-c's packer would dereference. */

/* s_fail() for the walk: the message names the field's path. */
static pf_status_t s_walk_fail(pf_error_t *err, const wire_path_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pf_status_t s_walk_fail(pf_error_t *err, const wire_path_t *at, const char *fmt, ...)
{
    char path[PATH_LEN];
    char reason[PF_ERROR_MSG_MAX];
    wire_path_format(at, path, sizeof path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap); /* a cut-short reason is still a reason */
    va_end(ap);
    return pf_error_set(err, PF_EBADINPUT, "%s: %s", path, reason);
}

static pf_status_t s_check_fields(const ProtobufCMessage *msg, const wire_path_t *at, pf_error_t *err);

static pf_status_t s_check_element(const ProtobufCFieldDescriptor *f, const void *elem,
                                   const wire_path_t *at, pf_error_t *err)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_ENUM: {
        int value = *(const int *) elem;
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        if (!protobuf_c_enum_descriptor_get_value(ed, value))
            return s_walk_fail(err, at, "%d is not a %s value this build knows", value, ed->short_name);
        return PF_OK;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *) elem;
        if (!s)
            return s_walk_fail(err, at, "string is NULL");
        long bad = utf8_invalid_at(s); /* protobuf-c does not check */
        if (bad >= 0)
            return s_walk_fail(err, at, "not valid UTF-8 at byte %ld", bad);
        return PF_OK;
    }
    case PROTOBUF_C_TYPE_DOUBLE:
        if (!isfinite(*(const double *) elem))
            return s_walk_fail(err, at, "must be a finite number");
        return PF_OK;
    case PROTOBUF_C_TYPE_FLOAT:
        if (!isfinite(*(const float *) elem))
            return s_walk_fail(err, at, "must be a finite number");
        return PF_OK;
    case PROTOBUF_C_TYPE_MESSAGE: {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *) elem;
        if (!sub)
            return s_walk_fail(err, at, "message is NULL");
        return s_check_fields(sub, at, err);
    }
    default:
        return PF_OK;
    }
}

/* Size of one element of a repeated array of `type`, as protobuf-c lays it out. */
static size_t s_element_size(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_ENUM: return sizeof(int);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
    case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    default: return 0; /* not looked at */
    }
}

static pf_status_t s_check_fields(const ProtobufCMessage *msg, const wire_path_t *at, pf_error_t *err)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    assert(desc && desc->magic == PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC);
    const char *base = (const char *) msg;
    pf_status_t rc = PF_OK;

    for (unsigned i = 0; rc == PF_OK && i < desc->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &desc->fields[i];
        size_t size = s_element_size(f->type);
        if (size == 0)
            continue;
        const char *member = base + f->offset;
        wire_path_t here = {.parent = at, .name = f->name, .index = -1};

        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *) (base + f->quantifier_offset);
            const char *array = *(const char *const *) member;
            if (n > 0 && !array)
                return s_walk_fail(err, &here, "%zu entries but no array", n);
            for (size_t k = 0; rc == PF_OK && k < n; k++) {
                here.index = (long) k;
                rc = s_check_element(f, array + k * size, &here, err);
            }
            continue;
        }

        bool present;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            present = *(const uint32_t *) (base + f->quantifier_offset) == f->id;
        else if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE)
            present = *(const void *const *) member != NULL; /* proto2 optional: NULL = absent */
        else
            present = *(const protobuf_c_boolean *) (base + f->quantifier_offset);
        if (present)
            rc = s_check_element(f, member, &here, err);
    }
    return rc;
}

/* ---------------------------------------------------------------------------
 * Building blocks for the per-message rules. */

static bool s_empty(const char *s) { return !s || !*s; }

/* Checks an optional (or, with STR_REQUIRED, required) string: length at most
 * `max` bytes, and with STR_LINE no control characters, because one-line
 * fields go into log lines and prompt headers. */
static pf_status_t s_check_str(const char *value, const char *where, const char *field,
                               size_t max, unsigned flags, pf_error_t *err)
{
    if (s_empty(value)) {
        if (flags & STR_REQUIRED)
            return s_fail(err, PF_EBADINPUT, where, field, "missing or empty");
        return PF_OK;
    }
    size_t len = strlen(value);
    if (len > max)
        return s_fail(err, PF_ETOOBIG, where, field, "%zu bytes long, at most %zu allowed", len, max);
    if (flags & STR_LINE) {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char) value[i];
            if (c < 0x20 || c == 0x7f) {
                char q[QUOTE_LEN * 4 + 8];
                return s_fail(err, PF_EBADINPUT, where, field,
                              "control character 0x%02x at byte %zu of %s (one line expected)", c,
                              i, s_quote(q, sizeof q, value));
            }
        }
    }
    return PF_OK;
}

static pf_status_t s_check_count(size_t n, size_t max, const char *where, const char *field,
                                 pf_error_t *err)
{
    if (n > max)
        return s_fail(err, PF_ETOOBIG, where, field, "%zu entries, at most %zu allowed", n, max);
    return PF_OK;
}

static bool s_id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == ':' || c == '-';
}

/* An id field; `required` says whether absence is an error. */
static pf_status_t s_check_id(const char *id, const char *where, const char *field, bool required,
                              pf_error_t *err)
{
    if (s_empty(id)) {
        if (required)
            return s_fail(err, PF_EBADINPUT, where, field, "missing or empty (an id is required)");
        return PF_OK;
    }
    char q[QUOTE_LEN * 4 + 8];
    size_t len = strlen(id);
    if (len > WIRE_MAX_ID_LEN) {
        return s_fail(err, PF_ETOOBIG, where, field, "id %s is %zu bytes, at most %d allowed",
                      s_quote(q, sizeof q, id), len, WIRE_MAX_ID_LEN);
    }
    bool first_ok = (id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z') ||
                    (id[0] >= '0' && id[0] <= '9');
    if (!first_ok) {
        return s_fail(err, PF_EBADINPUT, where, field,
                      "id %s must start with a letter or digit", s_quote(q, sizeof q, id));
    }
    for (size_t i = 0; i < len; i++) {
        if (!s_id_char(id[i])) {
            return s_fail(err, PF_EBADINPUT, where, field,
                          "id %s has character 0x%02x at byte %zu; ids use only [A-Za-z0-9._:-]",
                          s_quote(q, sizeof q, id), (unsigned char) id[i], i);
        }
    }
    return PF_OK;
}

pf_status_t wire_check_id(const char *id, const char *what, pf_error_t *err)
{
    assert(what);
    return s_check_id(id, what, NULL, true, err);
}

static pf_status_t s_check_file_name(const char *name, const char *where, const char *field,
                                     pf_error_t *err)
{
    if (s_empty(name))
        return s_fail(err, PF_EBADINPUT, where, field, "file name missing or empty");
    char q[QUOTE_LEN * 4 + 8];
    size_t len = strlen(name);
    if (len > WIRE_MAX_FILE_NAME_LEN) {
        return s_fail(err, PF_ETOOBIG, where, field, "file name %s is %zu bytes, at most %d allowed",
                      s_quote(q, sizeof q, name), len, WIRE_MAX_FILE_NAME_LEN);
    }
    if (name[0] == '/') {
        return s_fail(err, PF_EBADINPUT, where, field,
                      "file name %s is absolute; only relative names are accepted",
                      s_quote(q, sizeof q, name));
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) name[i];
        if (c < 0x20 || c == 0x7f) {
            return s_fail(err, PF_EBADINPUT, where, field,
                          "file name %s has control character 0x%02x", s_quote(q, sizeof q, name), c);
        }
    }
    /* Component by component: each must name something inside the directory. */
    for (const char *part = name; *part;) {
        const char *slash = strchr(part, '/');
        size_t plen = slash ? (size_t) (slash - part) : strlen(part);
        if (plen == 0 || (plen == 1 && part[0] == '.') ||
            (plen == 2 && part[0] == '.' && part[1] == '.')) {
            return s_fail(err, PF_EBADINPUT, where, field,
                          "file name %s has an empty, \".\" or \"..\" component; "
                          "names must stay inside the job's directory",
                          s_quote(q, sizeof q, name));
        }
        if (plen > WIRE_MAX_FILE_PART_LEN) {
            return s_fail(err, PF_ETOOBIG, where, field,
                          "file name %s has a %zu-byte component, at most %d allowed",
                          s_quote(q, sizeof q, name), plen, WIRE_MAX_FILE_PART_LEN);
        }
        if (!slash)
            break;
        part = slash + 1;
        if (!*part) /* trailing '/': a directory, not a file */
            return s_fail(err, PF_EBADINPUT, where, field, "file name %s ends with '/'",
                          s_quote(q, sizeof q, name));
    }
    return PF_OK;
}

pf_status_t wire_check_file_name(const char *name, const char *what, pf_error_t *err)
{
    assert(what);
    return s_check_file_name(name, what, NULL, err);
}

/* ---------------------------------------------------------------------------
 * Per-message rules. Each takes the message's path for its errors; the generic
 * walk has already run, so set oneofs and repeated elements are non-NULL,
 * enums are known values and strings are UTF-8. */

static pf_status_t s_check_file(const Profeed__File *file, const char *where, pf_error_t *err)
{
    return s_check_file_name(file->name, where, "name", err);
}

static pf_status_t s_check_worker(const Profeed__WorkerInfo *w, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_str(w->host, where, "host", WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
    const struct {
        const char *value;
        const char *name;
    } optional[] = {
        {w->gpu_name, "gpu_name"},
        {w->arch, "arch"},
        {w->compute_capability, "compute_capability"},
        {w->driver_version, "driver_version"},
        {w->profiler_version, "profiler_version"},
        {w->cpu_model, "cpu_model"},
    };
    for (size_t i = 0; rc == PF_OK && i < sizeof optional / sizeof optional[0]; i++)
        rc = s_check_str(optional[i].value, where, optional[i].name, WIRE_MAX_SHORT_LEN, STR_LINE, err);
    return rc;
}

static pf_status_t s_check_metadata(const Profeed__JobMetadata *meta, const char *where,
                                    pf_error_t *err)
{
    pf_status_t rc = PF_OK;
    if (!s_empty(meta->kernel_file_name))
        rc = s_check_file_name(meta->kernel_file_name, where, "kernel_file_name", err);
    if (rc == PF_OK && !s_empty(meta->problem_file_name))
        rc = s_check_file_name(meta->problem_file_name, where, "problem_file_name", err);
    if (rc == PF_OK)
        rc = s_check_str(meta->timestamp, where, "timestamp", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_count(meta->n_extra, WIRE_MAX_EXTRA, where, "extra", err);
    for (size_t i = 0; rc == PF_OK && i < meta->n_extra; i++) {
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.extra[%zu]", where, i);
        rc = s_check_str(meta->extra[i]->key, path, "key", WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(meta->extra[i]->value, path, "value", WIRE_MAX_LINE_LEN, 0, err);
    }
    return rc;
}

static pf_status_t s_check_command(const Profeed__Command *cmd, const char *where, pf_error_t *err)
{
    if (cmd->n_argv == 0 || s_empty(cmd->argv[0]))
        return s_fail(err, PF_EBADINPUT, where, "argv", "empty: argv[0] must name the program to run");
    pf_status_t rc = s_check_count(cmd->n_argv, WIRE_MAX_ARGV, where, "argv", err);
    for (size_t i = 0; rc == PF_OK && i < cmd->n_argv; i++) {
        char field[32];
        s_path(field, sizeof field, "argv[%zu]", i);
        rc = s_check_str(cmd->argv[i], where, field, WIRE_MAX_ARG_LEN, 0, err);
    }
    return rc;
}

static pf_status_t s_check_kernel_problem(const Profeed__KernelProblem *kp, const char *where,
                                          pf_error_t *err)
{
    char path[PATH_LEN];
    if (!kp->kernel_file)
        return s_fail(err, PF_EBADINPUT, where, "kernel_file", "missing: the kernel source to profile");
    if (!kp->problem_file)
        return s_fail(err, PF_EBADINPUT, where, "problem_file", "missing: the problem that runs the kernel");
    s_path(path, sizeof path, "%s.kernel_file", where);
    pf_status_t rc = s_check_file(kp->kernel_file, path, err);
    if (rc == PF_OK) {
        s_path(path, sizeof path, "%s.problem_file", where);
        rc = s_check_file(kp->problem_file, path, err);
    }
    if (rc == PF_OK && strcmp(kp->kernel_file->name, kp->problem_file->name) == 0) {
        rc = s_fail(err, PF_EBADINPUT, where, NULL,
                    "kernel_file and problem_file have the same name; one would overwrite the other");
    }
    return rc;
}

/* The filter's strings end up in a profiler's argv: one line each, bounded. */
static pf_status_t s_check_filter(const Profeed__ProfileFilter *f, const char *where, pf_error_t *err)
{
    if (f->has_launch_count && f->launch_count == 0)
        return s_fail(err, PF_EBADINPUT, where, "launch_count", "0: profile at least one launch, or leave it unset");
    pf_status_t rc = s_check_str(f->kernel_regex, where, "kernel_regex", WIRE_MAX_FILTER_LEN, STR_LINE, err);
    if (rc == PF_OK && f->kernel_regex && !*f->kernel_regex)
        rc = s_fail(err, PF_EBADINPUT, where, "kernel_regex", "empty: leave it unset to profile every kernel");
    if (rc == PF_OK)
        rc = s_check_str(f->nvtx_range, where, "nvtx_range", WIRE_MAX_FILTER_LEN, STR_LINE, err);
    if (rc == PF_OK && f->nvtx_range && !*f->nvtx_range)
        rc = s_fail(err, PF_EBADINPUT, where, "nvtx_range", "empty: leave it unset to profile outside NVTX ranges too");
    return rc;
}

static pf_status_t s_check_pass_spec(const Profeed__PassSpec *spec, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(spec->name, where, "name", true, err);
    if (rc == PF_OK)
        rc = s_check_count(spec->n_args, WIRE_MAX_PASS_ARGS, where, "args", err);
    for (size_t i = 0; rc == PF_OK && i < spec->n_args; i++) {
        char field[32];
        s_path(field, sizeof field, "args[%zu]", i);
        rc = s_check_str(spec->args[i], where, field, WIRE_MAX_ARG_LEN, 0, err);
    }
    return rc;
}

/* FeedbackShape: a share is a fraction, a text budget fits at least a
 * feedback's header and its first kernel. */
static pf_status_t s_check_shape(const Profeed__FeedbackShape *shape, const char *where, pf_error_t *err)
{
    if (shape->has_min_share && !(shape->min_share >= 0 && shape->min_share <= 1))
        return s_fail(err, PF_EBADINPUT, where, "min_share", "%g is not a share of time in 0..1", shape->min_share);
    if (shape->has_max_chars && shape->max_chars != 0 && shape->max_chars < WIRE_MIN_MAX_CHARS)
        return s_fail(err, PF_EBADINPUT, where, "max_chars",
                      "%u is too small: a feedback needs at least %d characters (0 = no limit)",
                      (unsigned) shape->max_chars, WIRE_MIN_MAX_CHARS);
    if (shape->has_max_chars && shape->max_chars != 0 && shape->has_text_format &&
        shape->text_format == PROFEED__TEXT_FORMAT__TEXT_FORMAT_MARKDOWN)
        return s_fail(err, PF_EBADINPUT, where, "max_chars", "bounds plain text only; Markdown is never cut");
    if (shape->has_max_tokens && shape->max_tokens != 0 && shape->max_tokens < WIRE_MIN_MAX_TOKENS)
        return s_fail(err, PF_EBADINPUT, where, "max_tokens",
                      "%u is too small: a feedback needs at least %d tokens (0 = no limit)",
                      (unsigned) shape->max_tokens, WIRE_MIN_MAX_TOKENS);
    if (shape->has_max_tokens && shape->max_tokens != 0 && shape->has_text_format &&
        shape->text_format == PROFEED__TEXT_FORMAT__TEXT_FORMAT_MARKDOWN)
        return s_fail(err, PF_EBADINPUT, where, "max_tokens", "bounds plain text only; Markdown is never cut");
    return PF_OK;
}

static pf_status_t s_check_job_request(const Profeed__JobRequest *job, const char *where,
                                       pf_error_t *err)
{
    char path[PATH_LEN];
    pf_status_t rc = s_check_id(job->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(job->agent_id, where, "agent_id", false, err);
    if (rc == PF_OK && (!job->has_language || job->language == PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED)) {
        rc = s_fail(err, PF_EBADINPUT, where, "language",
                    "missing: say what the kernel is written in (cuda, triton, pytorch, sycl, ocl)");
    }
    if (rc == PF_OK)
        rc = s_check_str(job->gpu_arch, where, "gpu_arch", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK) {
        switch (job->target_case) {
        case PROFEED__JOB_REQUEST__TARGET_COMMAND:
            s_path(path, sizeof path, "%s.command", where);
            rc = s_check_command(job->command, path, err);
            break;
        case PROFEED__JOB_REQUEST__TARGET_KERNEL:
            s_path(path, sizeof path, "%s.kernel", where);
            rc = s_check_kernel_problem(job->kernel, path, err);
            break;
        default:
            rc = s_fail(err, PF_EBADINPUT, where, "target",
                        "neither command nor kernel is set: a job must say what to run");
            break;
        }
    }
    if (rc == PF_OK)
        rc = s_check_count(job->n_passes, WIRE_MAX_PASSES, where, "passes", err);
    for (size_t i = 0; rc == PF_OK && i < job->n_passes; i++) {
        s_path(path, sizeof path, "%s.passes[%zu]", where, i);
        rc = s_check_pass_spec(job->passes[i], path, err);
    }
    if (rc == PF_OK && job->has_timeout_s && (job->timeout_s == 0 || job->timeout_s > WIRE_MAX_TIMEOUT_S)) {
        rc = s_fail(err, PF_EBADINPUT, where, "timeout_s", "%u is out of range 1..%d seconds",
                    (unsigned) job->timeout_s, WIRE_MAX_TIMEOUT_S);
    }
    if (rc == PF_OK && job->metadata) {
        s_path(path, sizeof path, "%s.metadata", where);
        rc = s_check_metadata(job->metadata, path, err);
    }
    if (rc == PF_OK && job->filter) {
        s_path(path, sizeof path, "%s.filter", where);
        rc = s_check_filter(job->filter, path, err);
    }
    if (rc == PF_OK && job->shape) {
        s_path(path, sizeof path, "%s.shape", where);
        rc = s_check_shape(job->shape, path, err);
    }
    if (rc == PF_OK)
        rc = s_check_id(job->baseline_job_id, where, "baseline_job_id", false, err);
    return rc;
}

static pf_status_t s_check_pass_output(const Profeed__PassOutput *pass, const char *where,
                                       pf_error_t *err)
{
    char path[PATH_LEN];
    pf_status_t rc = s_check_id(pass->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(pass->pass_key, where, "pass_key", true, err);
    if (rc == PF_OK)
        rc = s_check_count(pass->n_files, WIRE_MAX_FILES, where, "files", err);
    for (size_t i = 0; rc == PF_OK && i < pass->n_files; i++) {
        s_path(path, sizeof path, "%s.files[%zu]", where, i);
        rc = s_check_file(pass->files[i], path, err);
        /* Two files of one name would overwrite each other on disk. n <= 256. */
        for (size_t j = 0; rc == PF_OK && j < i; j++) {
            if (strcmp(pass->files[i]->name, pass->files[j]->name) == 0) {
                char q[QUOTE_LEN * 4 + 8];
                rc = s_fail(err, PF_EBADINPUT, path, "name", "%s repeats files[%zu].name",
                            s_quote(q, sizeof q, pass->files[i]->name), j);
            }
        }
    }
    if (rc == PF_OK && !pass->has_exit_status)
        rc = s_fail(err, PF_EBADINPUT, where, "exit_status", "missing: how the profiler exited");
    if (rc == PF_OK)
        rc = s_check_str(pass->stderr_tail, where, "stderr_tail", WIRE_MAX_STDERR_TAIL, 0, err);
    if (rc == PF_OK && !pass->worker)
        rc = s_fail(err, PF_EBADINPUT, where, "worker", "missing: which machine ran the pass");
    if (rc == PF_OK) {
        s_path(path, sizeof path, "%s.worker", where);
        rc = s_check_worker(pass->worker, path, err);
    }
    if (rc == PF_OK)
        rc = s_check_str(pass->replay_source, where, "replay_source", WIRE_MAX_LINE_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_count(pass->n_requested_metrics, WIRE_MAX_METRICS, where, "requested_metrics", err);
    for (size_t i = 0; rc == PF_OK && i < pass->n_requested_metrics; i++) {
        char field[48];
        s_path(field, sizeof field, "requested_metrics[%zu]", i);
        rc = s_check_str(pass->requested_metrics[i], where, field, WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
    }
    return rc;
}

static pf_status_t s_check_finding(const Profeed__Finding *f, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_str(f->kernel, where, "kernel", WIRE_MAX_LABEL_LEN, STR_LINE, err);
    if (rc == PF_OK && f->has_kernel_index && f->kernel_index >= WIRE_MAX_KERNELS)
        rc = s_fail(err, PF_EBADINPUT, where, "kernel_index", "%u is past the %d kernels a feedback holds",
                    (unsigned) f->kernel_index, WIRE_MAX_KERNELS);
    if (rc == PF_OK)
        rc = s_check_str(f->category, where, "category", WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
    if (rc == PF_OK && (!f->has_importance || f->importance < 0))
        rc = s_fail(err, PF_EBADINPUT, where, "importance", "missing or negative; findings are ranked by it");
    if (rc == PF_OK && f->has_estimated_speedup && f->estimated_speedup < 0)
        rc = s_fail(err, PF_EBADINPUT, where, "estimated_speedup", "%g is negative", f->estimated_speedup);
    if (rc == PF_OK)
        rc = s_check_count(f->n_evidence, WIRE_MAX_EVIDENCE, where, "evidence", err);
    for (size_t i = 0; rc == PF_OK && i < f->n_evidence; i++) {
        const Profeed__Evidence *ev = f->evidence[i];
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.evidence[%zu]", where, i);
        rc = s_check_str(ev->metric, path, "metric", WIRE_MAX_LABEL_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(ev->unit, path, "unit", WIRE_MAX_SHORT_LEN, STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(ev->text, path, "text", WIRE_MAX_LINE_LEN, 0, err);
    }
    if (rc == PF_OK)
        rc = s_check_count(f->n_lines, WIRE_MAX_LINES, where, "lines", err);
    for (size_t i = 0; rc == PF_OK && i < f->n_lines; i++) {
        const Profeed__SourceLine *l = f->lines[i];
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.lines[%zu]", where, i);
        if (l->has_share && !(l->share >= 0 && l->share <= 1))
            rc = s_fail(err, PF_EBADINPUT, path, "share", "%g is outside 0..1", l->share);
        const char *const texts[] = {l->file, l->text, l->sass, l->measure, l->unit, l->stall};
        static const char *const names[] = {"file", "text", "sass", "measure", "unit", "stall"};
        for (size_t t = 0; rc == PF_OK && t < sizeof texts / sizeof texts[0]; t++)
            rc = s_check_str(texts[t], path, names[t], WIRE_MAX_LINE_LEN, STR_LINE, err);
    }
    if (rc == PF_OK)
        rc = s_check_str(f->action, where, "action", WIRE_MAX_LINE_LEN, 0, err);
    if (rc == PF_OK)
        rc = s_check_str(f->source, where, "source", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(f->title, where, "title", WIRE_MAX_LINE_LEN, 0, err);
    return rc;
}

/* KernelSummary.close_call: counts no larger than the readings they are of
 * (feedback_wire_read relies on it). */
static pf_status_t s_check_close_call(const Profeed__CloseCall *c, const char *where, pf_error_t *err)
{
    char path[PATH_LEN];
    s_path(path, sizeof path, "%s.close_call", where);
    uint32_t readings = c->has_readings ? c->readings : 0;
    pf_status_t rc = PF_OK;
    if (readings > WIRE_MAX_CLOSE_READINGS)
        rc = s_fail(err, PF_ETOOBIG, path, "readings", "%u, at most %u allowed", (unsigned) readings,
                    (unsigned) WIRE_MAX_CLOSE_READINGS);
    uint64_t named = c->has_same_first ? c->same_first : 0;
    if (rc == PF_OK && c->has_noise_pct && !(c->noise_pct >= 0 && c->noise_pct <= 100))
        rc = s_fail(err, PF_EBADINPUT, path, "noise_pct", "%g is outside 0..100", c->noise_pct);
    if (rc == PF_OK)
        rc = s_check_count(c->n_other_firsts, WIRE_MAX_CLOSE_OTHERS, path, "other_firsts", err);
    for (size_t i = 0; rc == PF_OK && i < c->n_other_firsts; i++) {
        char name[64];
        s_path(name, sizeof name, "other_firsts[%zu]", i);
        rc = s_check_str(c->other_firsts[i]->category, path, name, WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK) {
            char unit[80];
            s_path(unit, sizeof unit, "other_firsts[%zu].unit", i);
            rc = s_check_str(c->other_firsts[i]->unit, path, unit, WIRE_MAX_SHORT_LEN, STR_LINE, err);
        }
        named += c->other_firsts[i]->has_readings ? c->other_firsts[i]->readings : 0;
    }
    if (rc == PF_OK && named > readings)
        rc = s_fail(err, PF_EBADINPUT, path, "other_firsts", "%llu readings named, of %u", (unsigned long long) named,
                    (unsigned) readings);
    return rc;
}

static pf_status_t s_check_kernel_summary(const Profeed__KernelSummary *k, const char *where,
                                          pf_error_t *err)
{
    pf_status_t rc = s_check_str(k->name, where, "name", WIRE_MAX_LABEL_LEN, STR_REQUIRED | STR_LINE, err);
    if (rc == PF_OK && k->has_time_share && !(k->time_share >= 0 && k->time_share <= 1))
        rc = s_fail(err, PF_EBADINPUT, where, "time_share", "%g is outside 0..1", k->time_share);
    if (rc == PF_OK)
        rc = s_check_str(k->bottleneck, where, "bottleneck", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(k->bottleneck_unit, where, "bottleneck_unit", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(k->block, where, "block", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(k->grid, where, "grid", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(k->segment, where, "segment", WIRE_MAX_LABEL_LEN, STR_LINE, err);
    if (rc == PF_OK && k->close_call)
        rc = s_check_close_call(k->close_call, where, err);
    return rc;
}

/* Feedback.errors, .notes and .missing: lists of free text. */
static pf_status_t s_check_lines(char *const *lines, size_t n, const char *where, const char *field,
                                 pf_error_t *err)
{
    pf_status_t rc = s_check_count(n, WIRE_MAX_NOTES, where, field, err);
    for (size_t i = 0; rc == PF_OK && i < n; i++) {
        char name[64];
        s_path(name, sizeof name, "%s[%zu]", field, i);
        rc = s_check_str(lines[i], where, name, WIRE_MAX_LINE_LEN, 0, err);
    }
    return rc;
}

/* A list of one-line strings (kernel names, categories, differences). */
static pf_status_t s_check_names(char *const *items, size_t n, size_t max, size_t len, const char *where,
                                 const char *field, pf_error_t *err)
{
    pf_status_t rc = s_check_count(n, max, where, field, err);
    for (size_t i = 0; rc == PF_OK && i < n; i++) {
        char name[64];
        s_path(name, sizeof name, "%s[%zu]", field, i);
        rc = s_check_str(items[i], where, name, len, STR_REQUIRED | STR_LINE, err);
    }
    return rc;
}

static pf_status_t s_check_manifest(const Profeed__Manifest *m, const char *where, pf_error_t *err)
{
    const struct {
        const char *field, *value;
        size_t max;
    } strings[] = {
        {"gpu", m->gpu, WIRE_MAX_SHORT_LEN},
        {"driver_version", m->driver_version, WIRE_MAX_SHORT_LEN},
        {"profiler_version", m->profiler_version, WIRE_MAX_SHORT_LEN},
        {"clock_control", m->clock_control, WIRE_MAX_SHORT_LEN},
        {"plan", m->plan, WIRE_MAX_SHORT_LEN},
        {"metrics_hash", m->metrics_hash, WIRE_MAX_SHORT_LEN},
        {"profeed_version", m->profeed_version, WIRE_MAX_SHORT_LEN},
        {"target", m->target, WIRE_MAX_LINE_LEN},
    };
    pf_status_t rc = PF_OK;
    for (size_t i = 0; rc == PF_OK && i < sizeof strings / sizeof strings[0]; i++)
        rc = s_check_str(strings[i].value, where, strings[i].field, strings[i].max, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_count(m->n_kernel_timings, WIRE_MAX_KERNELS, where, "kernel_timings", err);
    for (size_t i = 0; rc == PF_OK && i < m->n_kernel_timings; i++) {
        const Profeed__KernelTiming *t = m->kernel_timings[i];
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.kernel_timings[%zu]", where, i);
        rc = s_check_str(t->name, path, "name", WIRE_MAX_LABEL_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(t->launch_ids, path, "launch_ids", WIRE_MAX_SHORT_LEN, STR_LINE, err);
        if (rc == PF_OK && t->has_launch_sd_ns && t->launch_sd_ns < 0)
            rc = s_fail(err, PF_EBADINPUT, path, "launch_sd_ns", "%g is negative", t->launch_sd_ns);
    }
    return rc;
}

static pf_status_t s_check_comparison(const Profeed__Comparison *c, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_str(c->baseline, where, "baseline", WIRE_MAX_LINE_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_str(c->problem, where, "problem", WIRE_MAX_LINE_LEN, 0, err);
    if (rc == PF_OK && c->has_noise_band && c->noise_band < 0)
        rc = s_fail(err, PF_EBADINPUT, where, "noise_band", "%g is negative", c->noise_band);
    if (rc == PF_OK)
        rc = s_check_count(c->n_kernels, WIRE_MAX_KERNELS, where, "kernels", err);
    for (size_t i = 0; rc == PF_OK && i < c->n_kernels; i++) {
        const Profeed__KernelChange *k = c->kernels[i];
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.kernels[%zu]", where, i);
        rc = s_check_str(k->name, path, "name", WIRE_MAX_LABEL_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(k->baseline_name, path, "baseline_name", WIRE_MAX_LABEL_LEN, STR_LINE, err);
        const char *shorts[][2] = {{"matched_by", k->matched_by}, {"noise_source", k->noise_source},
                                   {"limiter_before", k->limiter_before}, {"limiter_after", k->limiter_after}};
        for (size_t s = 0; rc == PF_OK && s < sizeof shorts / sizeof shorts[0]; s++)
            rc = s_check_str(shorts[s][1], path, shorts[s][0], WIRE_MAX_SHORT_LEN, STR_LINE, err);
        if (rc == PF_OK && k->has_noise_band && k->noise_band < 0)
            rc = s_fail(err, PF_EBADINPUT, path, "noise_band", "%g is negative", k->noise_band);
        if (rc == PF_OK)
            rc = s_check_names(k->resolved, k->n_resolved, WIRE_MAX_FINDINGS, WIRE_MAX_SHORT_LEN, path, "resolved", err);
        if (rc == PF_OK)
            rc = s_check_names(k->added, k->n_added, WIRE_MAX_FINDINGS, WIRE_MAX_SHORT_LEN, path, "added", err);
        if (rc == PF_OK)
            rc = s_check_names(k->unchanged, k->n_unchanged, WIRE_MAX_FINDINGS, WIRE_MAX_SHORT_LEN, path,
                               "unchanged", err);
    }
    if (rc == PF_OK)
        rc = s_check_names(c->appeared, c->n_appeared, WIRE_MAX_KERNELS, WIRE_MAX_LABEL_LEN, where, "appeared", err);
    if (rc == PF_OK)
        rc = s_check_names(c->disappeared, c->n_disappeared, WIRE_MAX_KERNELS, WIRE_MAX_LABEL_LEN, where,
                           "disappeared", err);
    if (rc == PF_OK)
        rc = s_check_names(c->differences, c->n_differences, WIRE_MAX_NOTES, WIRE_MAX_LINE_LEN, where,
                           "differences", err);
    return rc;
}

static pf_status_t s_check_feedback(const Profeed__Feedback *fb, const char *where, pf_error_t *err)
{
    char path[PATH_LEN];
    pf_status_t rc = s_check_id(fb->job_id, where, "job_id", true, err);
    if (rc == PF_OK && (!fb->has_status || fb->status == PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_UNSPECIFIED))
        rc = s_fail(err, PF_EBADINPUT, where, "status", "missing");
    if (rc == PF_OK)
        rc = s_check_count(fb->n_findings, WIRE_MAX_FINDINGS, where, "findings", err);
    for (size_t i = 0; rc == PF_OK && i < fb->n_findings; i++) {
        s_path(path, sizeof path, "%s.findings[%zu]", where, i);
        rc = s_check_finding(fb->findings[i], path, err);
    }
    if (rc == PF_OK)
        rc = s_check_count(fb->n_kernels, WIRE_MAX_KERNELS, where, "kernels", err);
    for (size_t i = 0; rc == PF_OK && i < fb->n_kernels; i++) {
        s_path(path, sizeof path, "%s.kernels[%zu]", where, i);
        rc = s_check_kernel_summary(fb->kernels[i], path, err);
    }
    if (rc == PF_OK)
        rc = s_check_lines(fb->errors, fb->n_errors, where, "errors", err);
    if (rc == PF_OK)
        rc = s_check_lines(fb->notes, fb->n_notes, where, "notes", err);
    if (rc == PF_OK)
        rc = s_check_lines(fb->missing, fb->n_missing, where, "missing", err);
    if (rc == PF_OK && fb->worker) {
        s_path(path, sizeof path, "%s.worker", where);
        rc = s_check_worker(fb->worker, path, err);
    }
    if (rc == PF_OK && fb->metadata) {
        s_path(path, sizeof path, "%s.metadata", where);
        rc = s_check_metadata(fb->metadata, path, err);
    }
    if (rc == PF_OK && fb->manifest) {
        s_path(path, sizeof path, "%s.manifest", where);
        rc = s_check_manifest(fb->manifest, path, err);
    }
    if (rc == PF_OK && fb->comparison) {
        s_path(path, sizeof path, "%s.comparison", where);
        rc = s_check_comparison(fb->comparison, path, err);
    }
    return rc;
}

static pf_status_t s_check_ready(const Profeed__Ready *r, const char *where, pf_error_t *err)
{
    bool collector = r->has_role && r->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR;
    pf_status_t rc = PF_OK;
    if (!r->has_role || r->role == PROFEED__WORKER_ROLE__WORKER_ROLE_UNSPECIFIED)
        rc = s_fail(err, PF_EBADINPUT, where, "role", "missing: collector or analyzer");
    if (rc == PF_OK)
        rc = s_check_id(r->worker_id, where, "worker_id", true, err);
    if (rc == PF_OK)
        rc = s_check_str(r->host, where, "host", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    if (rc == PF_OK)
        rc = s_check_count(r->n_gpus, WIRE_MAX_GPUS, where, "gpus", err);
    if (rc == PF_OK && collector && r->n_gpus == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "gpus", "empty: a collector must offer at least one GPU");
    for (size_t i = 0; rc == PF_OK && i < r->n_gpus; i++) {
        const Profeed__GpuCapability *gpu = r->gpus[i];
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.gpus[%zu]", where, i);
        rc = s_check_str(gpu->name, path, "name", WIRE_MAX_SHORT_LEN, STR_REQUIRED | STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(gpu->arch, path, "arch", WIRE_MAX_SHORT_LEN, STR_LINE, err);
        if (rc == PF_OK && gpu->has_count && gpu->count == 0)
            rc = s_fail(err, PF_EBADINPUT, path, "count", "0 GPUs of a kind offered");
    }
    if (rc == PF_OK)
        rc = s_check_count(r->n_profilers, WIRE_MAX_PROFILERS, where, "profilers", err);
    if (rc == PF_OK && r->n_profilers == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "profilers", "empty: a worker must handle at least one profiler");
    for (size_t i = 0; rc == PF_OK && i < r->n_profilers; i++) {
        if (r->profilers[i] == PROFEED__PROFILER__PROFILER_UNSPECIFIED) {
            char field[32];
            s_path(field, sizeof field, "profilers[%zu]", i);
            rc = s_fail(err, PF_EBADINPUT, where, field, "PROFILER_UNSPECIFIED names no profiler");
        }
    }
    /* Matched as they are by the broker's routing: ids' rules keep them
     * one word, printable in its refusals. */
    if (rc == PF_OK)
        rc = s_check_count(r->n_capabilities, WIRE_MAX_CAPABILITIES, where, "capabilities", err);
    for (size_t i = 0; rc == PF_OK && i < r->n_capabilities; i++) {
        char field[32];
        s_path(field, sizeof field, "capabilities[%zu]", i);
        rc = s_check_id(r->capabilities[i], where, field, true, err);
    }
    if (rc == PF_OK && r->has_slots && (r->slots == 0 || r->slots > WIRE_MAX_SLOTS))
        rc = s_fail(err, PF_EBADINPUT, where, "slots", "%u is out of range 1..%d", (unsigned) r->slots, WIRE_MAX_SLOTS);
    if (rc == PF_OK)
        rc = s_check_count(r->n_job_ids, WIRE_MAX_HEARTBEAT_JOBS, where, "job_ids", err);
    for (size_t i = 0; rc == PF_OK && i < r->n_job_ids; i++) {
        char field[32];
        s_path(field, sizeof field, "job_ids[%zu]", i);
        rc = s_check_id(r->job_ids[i], where, field, true, err);
    }
    return rc;
}

static pf_status_t s_check_heartbeat(const Profeed__Heartbeat *hb, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(hb->worker_id, where, "worker_id", false, err);
    if (rc == PF_OK)
        rc = s_check_count(hb->n_job_ids, WIRE_MAX_HEARTBEAT_JOBS, where, "job_ids", err);
    for (size_t i = 0; rc == PF_OK && i < hb->n_job_ids; i++) {
        char field[32];
        s_path(field, sizeof field, "job_ids[%zu]", i);
        rc = s_check_id(hb->job_ids[i], where, field, true, err);
    }
    return rc;
}

static pf_status_t s_check_pass_chunk(const Profeed__PassChunk *c, const char *where, pf_error_t *err);

/* What a Dispatch to an analyzer carries beside its pass (whole or a chunk):
 * the pass count, the request's metadata and shape, and the job's context. */
static pf_status_t s_check_pass_dispatch(const Profeed__Dispatch *d, const char *where, pf_error_t *err)
{
    char path[PATH_LEN];
    pf_status_t rc = PF_OK;
    if (!d->has_pass_count || d->pass_count == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "pass_count",
                    "missing or 0: the analyzer must know how many passes to wait for");
    if (rc == PF_OK && d->metadata) {
        s_path(path, sizeof path, "%s.metadata", where);
        rc = s_check_metadata(d->metadata, path, err);
    }
    if (rc == PF_OK && d->shape) {
        s_path(path, sizeof path, "%s.shape", where);
        rc = s_check_shape(d->shape, path, err);
    }
    if (rc == PF_OK && d->context) {
        /* The baseline's packed Feedback is checked where it is used:
         * the analyzer unpacks it with wire_feedback_unpack(). */
        const Profeed__AnalysisContext *c = d->context;
        s_path(path, sizeof path, "%s.context", where);
        rc = s_check_str(c->plan, path, "plan", WIRE_MAX_SHORT_LEN, STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_str(c->target, path, "target", WIRE_MAX_LINE_LEN, STR_LINE, err);
        if (rc == PF_OK)
            rc = s_check_id(c->baseline_job_id, path, "baseline_job_id", false, err);
        if (rc == PF_OK)
            rc = s_check_str(c->baseline_problem, path, "baseline_problem", WIRE_MAX_LINE_LEN, 0, err);
    }
    return rc;
}

static pf_status_t s_check_dispatch(const Profeed__Dispatch *d, const char *where, pf_error_t *err)
{
    char path[PATH_LEN];
    pf_status_t rc = PF_OK;
    if (d->has_attempt && d->attempt == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "attempt", "0; attempts count from 1");
    if (rc == PF_OK && d->has_chunk_bytes && (d->chunk_bytes < PASS_CHUNK_MIN_RAW || d->chunk_bytes > WIRE_MAX_CHUNK_RAW)) {
        rc = s_fail(err, PF_EBADINPUT, where, "chunk_bytes", "%u; expected %zu to %zu", (unsigned) d->chunk_bytes,
                    (size_t) PASS_CHUNK_MIN_RAW, (size_t) WIRE_MAX_CHUNK_RAW);
    }
    if (rc != PF_OK)
        return rc;
    switch (d->work_case) {
    case PROFEED__DISPATCH__WORK_JOB:
        s_path(path, sizeof path, "%s.job", where);
        return s_check_job_request(d->job, path, err);
    case PROFEED__DISPATCH__WORK_PASS_OUTPUT:
        s_path(path, sizeof path, "%s.pass_output", where);
        rc = s_check_pass_output(d->pass_output, path, err);
        return rc == PF_OK ? s_check_pass_dispatch(d, where, err) : rc;
    case PROFEED__DISPATCH__WORK_PASS_CHUNK:
        s_path(path, sizeof path, "%s.pass_chunk", where);
        rc = s_check_pass_chunk(d->pass_chunk, path, err);
        return rc == PF_OK ? s_check_pass_dispatch(d, where, err) : rc;
    default:
        return s_fail(err, PF_EBADINPUT, where, "work", "neither job, pass_output nor pass_chunk is set");
    }
}

static pf_status_t s_check_ack(const Profeed__Ack *ack, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(ack->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(ack->pass_key, where, "pass_key", false, err);
    return rc;
}

static pf_status_t s_check_progress(const Profeed__Progress *p, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(p->job_id, where, "job_id", true, err);
    if (rc == PF_OK && p->has_passes_done && p->has_pass_count && p->passes_done > p->pass_count) {
        rc = s_fail(err, PF_EBADINPUT, where, "passes_done", "%u is more than pass_count %u",
                    (unsigned) p->passes_done, (unsigned) p->pass_count);
    }
    if (rc == PF_OK)
        rc = s_check_str(p->state, where, "state", WIRE_MAX_SHORT_LEN, STR_LINE, err);
    return rc;
}

static pf_status_t s_check_error(const Profeed__Error *e, const char *where, pf_error_t *err)
{
    pf_status_t rc = PF_OK;
    if (!e->has_code || e->code == PROFEED__ERROR_CODE__ERROR_CODE_UNSPECIFIED)
        rc = s_fail(err, PF_EBADINPUT, where, "code", "missing");
    if (rc == PF_OK)
        rc = s_check_str(e->text, where, "text", WIRE_MAX_LINE_LEN, 0, err);
    if (rc == PF_OK)
        rc = s_check_id(e->job_id, where, "job_id", false, err);
    return rc;
}

static pf_status_t s_check_farm_status(const Profeed__FarmStatus *st, const char *where,
                                       pf_error_t *err)
{
    pf_status_t rc = s_check_count(st->n_workers, WIRE_MAX_STATUS_WORKERS, where, "workers", err);
    for (size_t i = 0; rc == PF_OK && i < st->n_workers; i++) {
        char path[PATH_LEN];
        s_path(path, sizeof path, "%s.workers[%zu]", where, i);
        if (!st->workers[i]->worker)
            rc = s_fail(err, PF_EBADINPUT, path, "worker", "missing");
        else {
            char sub[PATH_LEN];
            s_path(sub, sizeof sub, "%s.worker", path);
            rc = s_check_ready(st->workers[i]->worker, sub, err);
        }
    }
    if (rc == PF_OK && st->counters) {
        const Profeed__FarmCounters *c = st->counters;
        rc = s_check_count(c->n_finished, WIRE_MAX_NAMED_COUNTS, where, "counters.finished", err);
        if (rc == PF_OK)
            rc = s_check_count(c->n_rejected, WIRE_MAX_NAMED_COUNTS, where, "counters.rejected", err);
        for (size_t i = 0; rc == PF_OK && i < c->n_finished + c->n_rejected; i++) {
            const Profeed__NamedCount *n = i < c->n_finished ? c->finished[i] : c->rejected[i - c->n_finished];
            rc = s_check_str(n->name, where, "counters name", WIRE_MAX_ID_LEN, STR_REQUIRED | STR_LINE, err);
        }
    }
    if (rc == PF_OK)
        rc = s_check_count(st->n_job_ids, WIRE_MAX_HEARTBEAT_JOBS, where, "job_ids", err);
    for (size_t i = 0; rc == PF_OK && i < st->n_job_ids; i++) {
        char field[32];
        s_path(field, sizeof field, "job_ids[%zu]", i);
        rc = s_check_id(st->job_ids[i], where, field, true, err);
    }
    return rc;
}

/* A chunk's sizes are checked against the wire's bound here and against the
 * receiver's own limit, and the frame against them, in pass_chunk.c before
 * anything is decompressed. */
static pf_status_t s_check_pass_chunk(const Profeed__PassChunk *c, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(c->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(c->pass_key, where, "pass_key", true, err);
    if (rc == PF_OK && !c->has_seq)
        rc = s_fail(err, PF_EBADINPUT, where, "seq", "missing: chunks are numbered from 0");
    if (rc == PF_OK && c->has_attempt && c->attempt == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "attempt", "0; attempts count from 1");
    size_t zlen = c->has_data ? c->data.len : 0;
    if (rc == PF_OK && (!c->has_raw_size || !c->has_compressed_size))
        rc = s_fail(err, PF_EBADINPUT, where, "raw_size", "raw_size and compressed_size are both required");
    if (rc == PF_OK && c->raw_size > WIRE_MAX_CHUNK_RAW) {
        rc = s_fail(err, PF_ETOOBIG, where, "raw_size", "%u bytes, at most %zu allowed", (unsigned) c->raw_size,
                    WIRE_MAX_CHUNK_RAW);
    }
    if (rc == PF_OK && c->compressed_size != zlen) {
        rc = s_fail(err, PF_EBADINPUT, where, "compressed_size", "%u, but data holds %zu bytes",
                    (unsigned) c->compressed_size, zlen);
    }
    if (rc == PF_OK && zlen > 0 && s_empty(c->file_name))
        rc = s_fail(err, PF_EBADINPUT, where, "file_name", "missing: which file the data continues");
    if (rc == PF_OK && !s_empty(c->file_name))
        rc = s_check_file_name(c->file_name, where, "file_name", err);
    if (rc != PF_OK)
        return rc;
    if (!c->last) {
        if (c->pass)
            return s_fail(err, PF_EBADINPUT, where, "pass", "set on a chunk that is not the last");
        return PF_OK;
    }
    if (!c->pass)
        return s_fail(err, PF_EBADINPUT, where, "pass", "missing on the last chunk: the pass's exit status and worker");
    char path[PATH_LEN];
    s_path(path, sizeof path, "%s.pass", where);
    rc = s_check_pass_output(c->pass, path, err);
    if (rc == PF_OK && (strcmp(c->pass->job_id, c->job_id) != 0 || strcmp(c->pass->pass_key, c->pass_key) != 0))
        rc = s_fail(err, PF_EBADINPUT, path, "job_id", "job and pass key differ from the chunk's");
    for (size_t i = 0; rc == PF_OK && i < c->pass->n_files; i++) {
        if (c->pass->files[i]->has_content && c->pass->files[i]->content.len > 0) {
            char field[48];
            s_path(field, sizeof field, "files[%zu].content", i);
            rc = s_fail(err, PF_EBADINPUT, path, field, "set: a streamed pass's contents come in its chunks");
        }
    }
    return rc;
}

static pf_status_t s_check_chunk_ack(const Profeed__ChunkAck *a, const char *where, pf_error_t *err)
{
    pf_status_t rc = s_check_id(a->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(a->pass_key, where, "pass_key", true, err);
    if (rc == PF_OK && !a->has_seq)
        rc = s_fail(err, PF_EBADINPUT, where, "seq", "missing: the last chunk received");
    if (rc == PF_OK && a->has_attempt && a->attempt == 0)
        rc = s_fail(err, PF_EBADINPUT, where, "attempt", "0; attempts count from 1");
    return rc;
}

static pf_status_t s_check_envelope(const Profeed__Envelope *env, pf_error_t *err)
{
    const char *where = "Envelope";
    if (!env->has_protocol_version) {
        return s_fail(err, PF_EPROTO, where, "protocol_version",
                      "missing; this build speaks version %u", (unsigned) WIRE_PROTOCOL_VERSION);
    }
    if (env->protocol_version != WIRE_PROTOCOL_VERSION) {
        return s_fail(err, PF_EPROTO, where, "protocol_version",
                      "peer speaks version %u, this build speaks %u",
                      (unsigned) env->protocol_version, (unsigned) WIRE_PROTOCOL_VERSION);
    }
    wire_path_t root = {.parent = NULL, .name = where, .index = -1};
    pf_status_t rc = s_check_fields(&env->base, &root, err);
    if (rc != PF_OK)
        return rc;
    switch (env->body_case) {
    case PROFEED__ENVELOPE__BODY_READY:
        return s_check_ready(env->ready, "Envelope.ready", err);
    case PROFEED__ENVELOPE__BODY_HEARTBEAT:
        return s_check_heartbeat(env->heartbeat, "Envelope.heartbeat", err);
    case PROFEED__ENVELOPE__BODY_SUBMIT:
        return s_check_job_request(env->submit, "Envelope.submit", err);
    case PROFEED__ENVELOPE__BODY_DISPATCH:
        return s_check_dispatch(env->dispatch, "Envelope.dispatch", err);
    case PROFEED__ENVELOPE__BODY_PASS_OUTPUT:
        return s_check_pass_output(env->pass_output, "Envelope.pass_output", err);
    case PROFEED__ENVELOPE__BODY_ACK:
        return s_check_ack(env->ack, "Envelope.ack", err);
    case PROFEED__ENVELOPE__BODY_PROGRESS:
        return s_check_progress(env->progress, "Envelope.progress", err);
    case PROFEED__ENVELOPE__BODY_FEEDBACK:
        return s_check_feedback(env->feedback, "Envelope.feedback", err);
    case PROFEED__ENVELOPE__BODY_ERROR:
        return s_check_error(env->error, "Envelope.error", err);
    case PROFEED__ENVELOPE__BODY_STATUS_REQUEST:
        return PF_OK;
    case PROFEED__ENVELOPE__BODY_STATUS:
        return s_check_farm_status(env->status, "Envelope.status", err);
    case PROFEED__ENVELOPE__BODY_PASS_CHUNK:
        return s_check_pass_chunk(env->pass_chunk, "Envelope.pass_chunk", err);
    case PROFEED__ENVELOPE__BODY_CHUNK_ACK:
        return s_check_chunk_ack(env->chunk_ack, "Envelope.chunk_ack", err);
    default:
        return s_fail(err, PF_EBADINPUT, where, "body",
                      "not set (an empty envelope, or a body type newer than this build)");
    }
}

/* A journal record is the broker's own, read back from disk: the checks make
 * sure a damaged file is refused rather than believed. The packed messages
 * inside are checked when the broker unpacks them. */
static pf_status_t s_check_journal_record(const Profeed__JournalRecord *rec, const char *where, pf_error_t *err)
{
    if (!rec->has_event || rec->event == PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_UNSPECIFIED)
        return s_fail(err, PF_EBADINPUT, where, "event", "missing");
    pf_status_t rc = s_check_id(rec->job_id, where, "job_id", true, err);
    if (rc == PF_OK)
        rc = s_check_id(rec->pass_key, where, "pass_key", false, err);
    if (rc != PF_OK)
        return rc;
    switch (rec->event) {
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_SUBMITTED:
        if (!rec->has_request || !rec->has_deadline_unix_ms)
            return s_fail(err, PF_EBADINPUT, where, "request", "a submission without its request or deadline");
        if (rec->has_agent && rec->agent.len > 255)
            return s_fail(err, PF_EBADINPUT, where, "agent", "a routing id of %zu bytes", rec->agent.len);
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DISPATCHED:
        if (!rec->has_attempt || rec->attempt == 0 || !rec->collector)
            return s_fail(err, PF_EBADINPUT, where, "attempt", "a dispatch without attempt or collector");
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PLANNED:
        if (!rec->has_pass_count)
            return s_fail(err, PF_EBADINPUT, where, "pass_count", "missing");
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PASS:
        if (!rec->pass_key || !rec->has_pass_output)
            return s_fail(err, PF_EBADINPUT, where, "pass_output", "a pass without its key or bytes");
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FINISHED:
        if (!rec->has_feedback)
            return s_fail(err, PF_EBADINPUT, where, "feedback", "missing");
        break;
    default: break;
    }
    return PF_OK;
}

pf_status_t wire_check(const ProtobufCMessage *msg, pf_error_t *err)
{
    assert(msg);
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    if (desc == &profeed__envelope__descriptor)
        return s_check_envelope((const Profeed__Envelope *) msg, err);

    /* The standalone messages carry no version: whoever stored or embedded
     * them checked it on the way in. */
    const char *where = desc->short_name;
    wire_path_t root = {.parent = NULL, .name = where, .index = -1};
    pf_status_t rc = s_check_fields(msg, &root, err);
    if (rc != PF_OK)
        return rc;
    if (desc == &profeed__job_request__descriptor)
        return s_check_job_request((const Profeed__JobRequest *) msg, where, err);
    if (desc == &profeed__pass_output__descriptor)
        return s_check_pass_output((const Profeed__PassOutput *) msg, where, err);
    if (desc == &profeed__journal_record__descriptor)
        return s_check_journal_record((const Profeed__JournalRecord *) msg, where, err);
    assert(desc == &profeed__feedback__descriptor && "wire_check: not a top-level message type");
    return s_check_feedback((const Profeed__Feedback *) msg, where, err);
}
