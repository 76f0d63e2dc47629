/* farm_job.c: profeed_farm_job_t (profeed_client.h), a profeed_job_t set by
 * key. The job owns a copy of every string and file it is given; its
 * profeed_job_t points into those copies, so a run hands it to
 * profeed_farm_run() as it is. */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "option_value.h"
#include "profeed_client.h"
#include "wire.h"
#include "wire_check.h"

/* The string keys, each a `const char *` member of profeed_job_t. */
static const struct {
    const char *key;
    size_t offset;
} s_strings[] = {
    {"job_id", offsetof(profeed_job_t, job_id)},
    {"agent_id", offsetof(profeed_job_t, agent_id)},
    {"language", offsetof(profeed_job_t, language)},
    {"gpu_arch", offsetof(profeed_job_t, gpu_arch)},
    {"profiler", offsetof(profeed_job_t, profiler)},
    {"plan", offsetof(profeed_job_t, plan)},
    {"kernel_regex", offsetof(profeed_job_t, kernel_regex)},
    {"nvtx_range", offsetof(profeed_job_t, nvtx_range)},
    {"baseline_job_id", offsetof(profeed_job_t, baseline_job_id)},
};
#define S_STRINGS (sizeof s_strings / sizeof s_strings[0])

/* The whole-number keys: `unsigned` or `size_t` members. */
static const struct {
    const char *key;
    size_t offset;
    bool is_size;
} s_counts[] = {
    {"timeout_s", offsetof(profeed_job_t, timeout_s), false},
    {"round", offsetof(profeed_job_t, round), false},
    {"launch_skip", offsetof(profeed_job_t, launch_skip), false},
    {"launch_count", offsetof(profeed_job_t, launch_count), false},
    {"top", offsetof(profeed_job_t, top), false},
    {"max_chars", offsetof(profeed_job_t, max_chars), true},
    {"max_tokens", offsetof(profeed_job_t, max_tokens), true},
};

/* The switches: `int` members. */
static const struct {
    const char *key;
    size_t offset;
} s_switches[] = {
    {"source", offsetof(profeed_job_t, source)},
    {"collated", offsetof(profeed_job_t, collated)},
};

struct profeed_farm_job_t {
    profeed_job_t job;           /* points into what follows */
    char *strings[S_STRINGS];    /* owned, in s_strings' order */
    char **argv;                 /* owned words */
    size_t argc, argv_cap;
    char *file_name[2];          /* kernel, problem: owned */
    char *file_bytes[2];
    size_t file_len[2];
    char error[512];
};

static void s_error(profeed_farm_job_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_error(profeed_farm_job_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->error, sizeof self->error, fmt, ap);
    va_end(ap);
}

profeed_farm_job_t *profeed_farm_job_new(void)
{
    return calloc(1, sizeof(profeed_farm_job_t));
}

void profeed_farm_job_destroy(profeed_farm_job_t **self_p)
{
    assert(self_p);
    profeed_farm_job_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < S_STRINGS; i++)
        free(self->strings[i]);
    for (size_t i = 0; i < self->argc; i++)
        free(self->argv[i]);
    free(self->argv);
    for (int f = 0; f < 2; f++) {
        free(self->file_name[f]);
        free(self->file_bytes[f]);
    }
    free(self);
    *self_p = NULL;
}

static profeed_result_t s_set_string(profeed_farm_job_t *self, size_t i, const char *value)
{
    if (value && strlen(value) > WIRE_MAX_LINE_LEN) {
        s_error(self, "job key %s: value longer than %d bytes", s_strings[i].key, WIRE_MAX_LINE_LEN);
        return PROFEED_BAD_INPUT;
    }
    char *copy = NULL;
    if (value && *value && !(copy = strdup(value))) {
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    free(self->strings[i]);
    self->strings[i] = copy;
    memcpy((char *) &self->job + s_strings[i].offset, &(const char *){copy}, sizeof(const char *));
    return PROFEED_OK;
}

profeed_result_t profeed_farm_job_set(profeed_farm_job_t *self, const char *key, const char *value)
{
    if (!self)
        return PROFEED_ERROR;
    self->error[0] = '\0';
    if (!key) {
        s_error(self, "job key: none given");
        return PROFEED_BAD_INPUT;
    }
    bool unset = !value || !*value;
    for (size_t i = 0; i < S_STRINGS; i++)
        if (strcmp(key, s_strings[i].key) == 0)
            return s_set_string(self, i, value);
    for (size_t i = 0; i < sizeof s_counts / sizeof s_counts[0]; i++) {
        if (strcmp(key, s_counts[i].key) != 0)
            continue;
        unsigned long long max = s_counts[i].is_size ? SIZE_MAX : UINT_MAX, v = 0;
        if (!unset && !option_value_count(value, max, &v)) {
            s_error(self, "job key %s: \"%s\" is not a whole number from 0 to %llu", key, value, max);
            return PROFEED_BAD_INPUT;
        }
        char *slot = (char *) &self->job + s_counts[i].offset;
        if (s_counts[i].is_size)
            memcpy(slot, &(size_t){(size_t) v}, sizeof(size_t));
        else
            memcpy(slot, &(unsigned){(unsigned) v}, sizeof(unsigned));
        return PROFEED_OK;
    }
    for (size_t i = 0; i < sizeof s_switches / sizeof s_switches[0]; i++) {
        if (strcmp(key, s_switches[i].key) != 0)
            continue;
        bool on = false;
        if (!unset && !option_value_bool(value, &on)) {
            s_error(self, "job key %s: \"%s\" is not 0, 1, true or false", key, value);
            return PROFEED_BAD_INPUT;
        }
        memcpy((char *) &self->job + s_switches[i].offset, &(int){on}, sizeof(int));
        return PROFEED_OK;
    }
    if (strcmp(key, "min_share") == 0) {
        double v = 0;
        if (!unset && !option_value_real(value, 0, 1, &v)) {
            s_error(self, "job key min_share: \"%s\" is not a fraction between 0 and 1", value);
            return PROFEED_BAD_INPUT;
        }
        self->job.min_share = v;
        self->job.min_share_given = !unset;
        return PROFEED_OK;
    }
    s_error(self, "unknown job key \"%s\" (keys: job_id, agent_id, language, gpu_arch, profiler, plan, kernel_regex, "
                  "nvtx_range, baseline_job_id, timeout_s, round, launch_skip, launch_count, top, max_chars, "
                  "max_tokens, min_share, source, collated)",
            key);
    return PROFEED_BAD_INPUT;
}

profeed_result_t profeed_farm_job_add_arg(profeed_farm_job_t *self, const char *arg)
{
    if (!self)
        return PROFEED_ERROR;
    self->error[0] = '\0';
    if (!arg) {
        s_error(self, "command word: none given");
        return PROFEED_BAD_INPUT;
    }
    if (self->argc >= WIRE_MAX_ARGV) {
        s_error(self, "command: more than %d words", WIRE_MAX_ARGV);
        return PROFEED_BAD_INPUT;
    }
    if (strlen(arg) > WIRE_MAX_ARG_LEN) {
        s_error(self, "command word %zu: longer than %d bytes", self->argc + 1, WIRE_MAX_ARG_LEN);
        return PROFEED_BAD_INPUT;
    }
    if (self->argc == self->argv_cap) {
        size_t cap = self->argv_cap ? 2 * self->argv_cap : 8;
        char **grown = realloc(self->argv, cap * sizeof *grown);
        if (!grown) {
            s_error(self, "out of memory");
            return PROFEED_ERROR;
        }
        self->argv = grown;
        self->argv_cap = cap;
    }
    char *copy = strdup(arg);
    if (!copy) {
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    self->argv[self->argc++] = copy;
    self->job.argv = (const char *const *) self->argv;
    self->job.argc = self->argc;
    return PROFEED_OK;
}

profeed_result_t profeed_farm_job_set_file(profeed_farm_job_t *self, const char *role, const char *name,
                                           const void *bytes, size_t len)
{
    if (!self)
        return PROFEED_ERROR;
    self->error[0] = '\0';
    int f = role && strcmp(role, "kernel") == 0 ? 0 : role && strcmp(role, "problem") == 0 ? 1 : -1;
    if (f < 0) {
        s_error(self, "file role \"%s\": not kernel or problem", role ? role : "");
        return PROFEED_BAD_INPUT;
    }
    pf_error_t name_err;
    if (name && strchr(name, '/')) {
        s_error(self, "%s file \"%.64s\": a plain file name, without '/', is needed", role, name);
        return PROFEED_BAD_INPUT;
    }
    if (wire_check_file_name(name, f == 0 ? "kernel file" : "problem file", &name_err) != PF_OK) {
        s_error(self, "%s", name_err.msg);
        return PROFEED_BAD_INPUT;
    }
    if ((!bytes && len) || len > WIRE_MAX_MSG - self->file_len[1 - f]) {
        s_error(self, "%s file %s: %zu bytes %s", role, name, len,
                bytes || !len ? "make the kernel and problem over the farm's 64 MiB message" : "given as NULL");
        return PROFEED_BAD_INPUT;
    }
    char *name_copy = strdup(name), *bytes_copy = malloc(len ? len : 1);
    if (!name_copy || !bytes_copy) {
        free(name_copy);
        free(bytes_copy);
        s_error(self, "out of memory");
        return PROFEED_ERROR;
    }
    if (len)
        memcpy(bytes_copy, bytes, len);
    free(self->file_name[f]);
    free(self->file_bytes[f]);
    self->file_name[f] = name_copy;
    self->file_bytes[f] = bytes_copy;
    self->file_len[f] = len;
    if (f == 0) {
        self->job.kernel_name = name_copy;
        self->job.kernel_source = bytes_copy;
        self->job.kernel_len = len;
    } else {
        self->job.problem_name = name_copy;
        self->job.problem_source = bytes_copy;
        self->job.problem_len = len;
    }
    return PROFEED_OK;
}

const char *profeed_farm_job_error(const profeed_farm_job_t *self)
{
    return self ? self->error : "";
}

profeed_result_t profeed_farm_job_run(profeed_farm_t *farm, profeed_farm_job_t *job, int wait_ms,
                                      profeed_format_t format, profeed_progress_fn *progress, void *arg,
                                      char **output, char **error, char *job_id_out)
{
    assert(farm && job);
    const char *refused = NULL;
    if (job->job.problem_name && !job->job.kernel_name)
        refused = "the job has a problem file but no kernel file (profeed_farm_job_set_file \"kernel\")";
    else if (job->argc == 0 && !job->job.kernel_name)
        refused = "the job has nothing to profile: add the command's words (profeed_farm_job_add_arg) or a kernel "
                  "file (profeed_farm_job_set_file)";
    if (refused) {
        if (output)
            *output = NULL;
        if (error)
            *error = strdup(refused);
        return PROFEED_BAD_INPUT;
    }
    return profeed_farm_run(farm, &job->job, wait_ms, format, progress, arg, output, error, job_id_out);
}
