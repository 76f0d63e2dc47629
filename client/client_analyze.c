/* client_analyze: the client library's offline analysis entry point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "analyzer.h"
#include "feedback.h"
#include "pf_error.h"
#include "profeed_client.h"
#include "render.h"

void profeed_analyze_options_init(profeed_analyze_options_t *options)
{
    memset(options, 0, sizeof *options);
    options->profiler = "auto";
    options->format = PROFEED_FORMAT_TEXT;
    options->min_share = 0.05;
}

static char *s_render(const feedback_t *fb, const profeed_analyze_options_t *options)
{
    switch (options->format) {
    case PROFEED_FORMAT_JSON: return render_json(fb, options->with_collated != 0);
    case PROFEED_FORMAT_MARKDOWN: return render_markdown(fb);
    case PROFEED_FORMAT_TEXT: break;
    }
    return render_text(fb, options->max_chars);
}

/* A feedback that only says the input was bad, so a JSON consumer gets a
 * structured answer too. */
static char *s_bad_input(const char *message, const profeed_analyze_options_t *options)
{
    feedback_t *fb = feedback_new(options->profiler ? options->profiler : "auto");
    if (!fb)
        return NULL;
    feedback_set_status(fb, FB_BAD_INPUT);
    feedback_add_error(fb, "%s", message);
    char *out = s_render(fb, options);
    feedback_destroy(&fb);
    return out;
}

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
    const char *wrong = NULL;
    char why[160];
    if (options->max_chars > 0 && options->format != PROFEED_FORMAT_TEXT)
        wrong = "max chars bounds the text format only; JSON and Markdown are never cut";
    else if (options->max_chars > 0 && options->max_chars < RENDER_MIN_CHARS) {
        snprintf(why, sizeof why, "max chars %zu is too small: a feedback needs at least %d characters",
                 options->max_chars, RENDER_MIN_CHARS);
        wrong = why;
    }
    if (wrong) {
        if (error)
            *error = strdup(wrong);
        return PROFEED_BAD_INPUT;
    }
    size_t total = count + options->reference_count;
    analyzer_file_t *files = calloc(total, sizeof *files);
    if (!files)
        return PROFEED_ERROR;
    for (size_t i = 0; i < count; i++)
        files[i].path = paths[i];
    for (size_t i = 0; i < options->reference_count; i++) {
        files[count + i].path = options->reference_paths[i];
        files[count + i].reference = true;
    }
    analyzer_input_t input = {
        .files = files,
        .count = total,
        .profiler = options->profiler,
        .language = options->language,
        .gpu_arch = options->gpu_arch,
        .device = options->device,
        .pci_id = options->pci_id,
        .cpu_model = options->cpu_model,
        .with_collated = options->with_collated && options->format == PROFEED_FORMAT_JSON,
    };
    analysis_options_t analysis;
    analysis_options_default(&analysis);
    analysis.top = options->top;
    analysis.all_segments = options->all_segments != 0;
    if (options->min_share >= 0)
        analysis.min_share = options->min_share;
    analysis.min_share_strict = options->min_share_given != 0;

    feedback_t *fb = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    pf_status_t rc = analyzer_run(&input, &analysis, &fb, &err);
    free(files);
    if (rc != PF_OK) {
        if (error)
            *error = strdup(err.msg);
        if (output)
            *output = s_bad_input(err.msg, options);
        return rc == PF_ENOMEM ? PROFEED_ERROR : PROFEED_BAD_INPUT;
    }
    profeed_result_t result = PROFEED_OK;
    if (feedback_status(fb) == FB_PROFILER_ERROR) {
        result = PROFEED_PROFILER_ERROR;
        if (error && feedback_error_count(fb) > 0)
            *error = strdup(feedback_error(fb, 0));
    }
    char *text = s_render(fb, options);
    feedback_destroy(&fb);
    if (!text)
        return PROFEED_ERROR;
    if (output)
        *output = text;
    else
        free(text);
    return result;
}
