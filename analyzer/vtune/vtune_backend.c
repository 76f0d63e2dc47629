/* vtune_backend: VTune's analysis as the core sees it (analyzer_backend.h):
 * its hotspots reports (text, or KernelFoundry's vtune_counters.json), then
 * analysed. */
#include "analyzer_backend.h"

#include <string.h>

#include "vtune_analyze.h"
#include "vtune_report.h"

/* By content, a report's header (vtune_report_sniff); by name, "vtune". */
static bool s_vtune_name(const char *name)
{
    return strstr(name, "vtune") != NULL;
}

static pf_status_t s_run_vtune(const analyzer_input_t *input, const analysis_options_t *options,
                               feedback_t **out, pf_error_t *err)
{
    vtune_report_t *report = vtune_report_new();
    if (!report)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        const analyzer_file_t *file = &input->files[i];
        if (file->path && !file->bytes) {
            rc = vtune_report_parse_file(report, file->path, err);
            continue;
        }
        char source[256];
        analyzer_file_source(file, source, sizeof source);
        const char *bytes = file->bytes ? file->bytes : "";
        size_t k = 0;
        while (k < file->len && (bytes[k] == ' ' || bytes[k] == '\n' || bytes[k] == '\r' || bytes[k] == '\t'))
            k++;
        /* KernelFoundry's collector ships vtune_counters.json; a report is text. */
        rc = k < file->len && bytes[k] == '{'
                 ? vtune_report_parse_json(report, source, bytes, file->len, err)
                 : vtune_report_parse(report, source, bytes, file->len, err);
    }
    if (rc == PF_OK) {
        *out = vtune_analyze(report, options, input->device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
        else if (input->with_collated)
            feedback_set_collated(*out, vtune_analyze_collated(report));
    }
    vtune_report_destroy(&report);
    return rc;
}

static const analyzer_backend_t s_backend = {
    .id = PROFEED__PROFILER__PROFILER_VTUNE,
    .by_content = vtune_report_sniff,
    .by_name = s_vtune_name,
    .run = s_run_vtune,
    .check_pass = NULL,
};

const analyzer_backend_t *vtune_backend(void)
{
    return &s_backend;
}
