#include "analyzer.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "ncu_analyze.h"
#include "ncu_csv.h"

const char *analyzer_profilers(void) { return "ncu"; }

/* The name a file is known by in messages: "pass ncu.001: raw.csv". */
static void s_source(const analyzer_file_t *file, char *out, size_t cap)
{
    const char *name = file->name ? file->name : (file->path ? file->path : "input");
    if (file->pass_key)
        snprintf(out, cap, "pass %s: %s", file->pass_key, name);
    else
        snprintf(out, cap, "%s", name);
}

static pf_status_t s_run_ncu(const analyzer_input_t *input, const analysis_options_t *options,
                             feedback_t **out, pf_error_t *err)
{
    ncu_data_t *data = ncu_data_new();
    if (!data)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        const analyzer_file_t *file = &input->files[i];
        if (file->path && !file->bytes) {
            rc = ncu_csv_parse_file(data, file->path, err);
        } else {
            char source[256];
            s_source(file, source, sizeof source);
            rc = ncu_csv_parse_buffer(data, source, file->bytes ? file->bytes : "", file->len, err);
        }
    }
    if (rc == PF_OK) {
        *out = ncu_analyze(data, options, input->device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        else if (input->with_collated)
            feedback_set_collated(*out, ncu_analyze_collated(data));
    }
    ncu_data_destroy(&data);
    return rc;
}

pf_status_t analyzer_run(const analyzer_input_t *input, const analysis_options_t *options,
                         feedback_t **out, pf_error_t *err)
{
    assert(input && options && out);
    *out = NULL;
    if (input->count == 0)
        return pf_error_set(err, PF_EBADINPUT, "no input files");
    const char *profiler = input->profiler;
    if (!profiler || strcmp(profiler, "auto") == 0)
        profiler = "ncu";
    if (strcmp(profiler, "ncu") == 0)
        return s_run_ncu(input, options, out, err);
    return pf_error_set(err, PF_EBADINPUT, "unknown profiler \"%s\" (this build analyzes: %s)",
                        profiler, analyzer_profilers());
}
