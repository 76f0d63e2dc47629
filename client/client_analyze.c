/* client_analyze: the client library's offline analysis entry point. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profeed_client.h"
#include "profeed_session.h"

void profeed_analyze_options_init(profeed_analyze_options_t *options)
{
    memset(options, 0, sizeof *options);
    options->profiler = "auto";
    options->format = PROFEED_FORMAT_TEXT;
    options->min_share = 0.05;
}

/* Sets one option given as a number, through the session's named options. */
static profeed_result_t s_set_number(profeed_session_t *session, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static profeed_result_t s_set_number(profeed_session_t *session, const char *key, const char *fmt, ...)
{
    char value[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    return profeed_session_set(session, key, value);
}

static const char *s_format_name(profeed_format_t format)
{
    switch (format) {
    case PROFEED_FORMAT_JSON: return "json";
    case PROFEED_FORMAT_MARKDOWN: return "markdown";
    case PROFEED_FORMAT_TEXT: break;
    }
    return "text";
}

/* The file API is a thin layer over the session (profeed_session.h): the
 * struct's fields become named options, the paths become files read at run
 * time. */
profeed_result_t profeed_analyze_files(const char *const *paths, size_t count,
                                       const profeed_analyze_options_t *options, char **output,
                                       char **error)
{
    profeed_analyze_options_t defaults;
    if (!options) {
        profeed_analyze_options_init(&defaults);
        options = &defaults;
    }
    if (output)
        *output = NULL;
    if (error)
        *error = NULL;
    if (count == 0 || !paths) {
        if (error)
            *error = strdup("no input files");
        return PROFEED_BAD_INPUT;
    }
    /* A bad max chars is refused here, before any work and without an output,
     * as it always was; the session refuses it too, for its own callers. */
    char why[256];
    const char *wrong = profeed_session_check_max_chars(options->max_chars, s_format_name(options->format), why,
                                                        sizeof why);
    if (!wrong)
        wrong = profeed_session_check_max_tokens(options->max_tokens, s_format_name(options->format), why,
                                                 sizeof why);
    if (wrong) {
        if (error)
            *error = strdup(wrong);
        return PROFEED_BAD_INPUT;
    }
    profeed_session_t *session = profeed_session_new();
    if (!session)
        return PROFEED_ERROR;
    profeed_result_t rc = PROFEED_OK;
    const char *strings[][2] = {
        {"profiler", options->profiler}, {"language", options->language}, {"gpu_arch", options->gpu_arch},
        {"device", options->device},     {"pci_id", options->pci_id},     {"cpu_model", options->cpu_model},
        {"format", s_format_name(options->format)},
    };
    for (size_t i = 0; rc == PROFEED_OK && i < sizeof strings / sizeof strings[0]; i++)
        rc = profeed_session_set(session, strings[i][0], strings[i][1]);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "top", "%zu", options->top);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "max_chars", "%zu", options->max_chars);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "max_tokens", "%zu", options->max_tokens);
    /* A negative share keeps the default; a share is strict only when the
     * caller says it chose it; the collated data is only JSON's. */
    if (rc == PROFEED_OK && options->min_share >= 0)
        rc = s_set_number(session, "min_share", "%.17g", options->min_share);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "min_share_strict", "%d", options->min_share_given != 0);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "with_collated", "%d",
                          options->with_collated && options->format == PROFEED_FORMAT_JSON);
    if (rc == PROFEED_OK)
        rc = s_set_number(session, "all_segments", "%d", options->all_segments != 0);
    for (size_t i = 0; rc == PROFEED_OK && i < count; i++)
        rc = profeed_session_add_path(session, paths[i], 0);
    for (size_t i = 0; rc == PROFEED_OK && i < options->reference_count; i++)
        rc = profeed_session_add_path(session, options->reference_paths[i], 1);
    for (size_t i = 0; rc == PROFEED_OK && i < options->baseline_count; i++)
        rc = profeed_session_add_baseline_path(session, options->baseline_paths[i]);
    if (rc == PROFEED_OK && options->stop_within > 0)
        rc = s_set_number(session, "stop_within", "%.17g", options->stop_within);
    if (rc == PROFEED_OK)
        rc = profeed_session_run(session);
    const char *message = profeed_session_error(session);
    if (error && rc != PROFEED_OK && *message)
        *error = strdup(message);
    const char *text = profeed_session_output(session);
    if (output && text)
        *output = strdup(text);
    if (output && text && !*output)
        rc = PROFEED_ERROR;
    profeed_session_destroy(&session);
    return rc;
}
