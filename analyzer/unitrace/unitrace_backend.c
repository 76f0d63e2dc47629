/* unitrace_backend: unitrace's analysis as the core sees it
 * (analyzer_backend.h): its metrics tables and chrome timelines, read whole,
 * then analysed. */
#include "analyzer_backend.h"

#include <stdlib.h>
#include <string.h>

#include "file_read.h"
#include "unitrace_analyze.h"

/* A unitrace file is read whole: metrics tables and timelines are small
 * next to ncu captures, and the timeline is parsed as one JSON document. */
#define UNITRACE_FILE_MAX ((size_t) 256 * 1024 * 1024)

/* A metrics table's GpuTime[ns] column or a chrome timeline's events; by
 * name, trace.metrics.<pid> or a .json. */
static bool s_unitrace_content(const char *head, size_t n)
{
    return analyzer_text_contains(head, n, "GpuTime[ns]") || analyzer_text_contains(head, n, "\"traceEvents\"");
}

static bool s_unitrace_name(const char *name)
{
    size_t nlen = strlen(name);
    return strstr(name, ".metrics.") || (nlen > 5 && strcmp(name + nlen - 5, ".json") == 0);
}

static pf_status_t s_run_unitrace(const analyzer_input_t *input, const analysis_options_t *options,
                                  feedback_t **out, pf_error_t *err)
{
    unitrace_job_t *job = unitrace_job_new();
    if (!job)
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    pf_status_t rc = PF_OK;
    for (size_t i = 0; i < input->count && rc == PF_OK; i++) {
        const analyzer_file_t *file = &input->files[i];
        const char *name = file->name ? file->name : (file->path ? file->path : "input");
        if (file->bytes || !file->path) {
            rc = unitrace_job_add(job, file->pass_key, name, file->bytes ? file->bytes : "", file->len, err);
            continue;
        }
        char *bytes = NULL;
        size_t len = 0;
        rc = file_read_input(file->path, NULL, UNITRACE_FILE_MAX, &bytes, &len, err);
        if (rc == PF_OK)
            rc = unitrace_job_add(job, file->pass_key, name, bytes, len, err);
        free(bytes);
    }
    if (rc == PF_OK && unitrace_job_pass_count(job) == 0 && input->count > 0) {
        /* Nothing was unitrace output: the wrong profiler, not a run that
         * profiled no kernel. */
        const analyzer_file_t *file = &input->files[0];
        const char *looks = analyzer_detect(input->files, input->count);
        rc = pf_error_set(err, PF_EBADINPUT,
                          "%s: not unitrace output (neither a metrics table trace.metrics.<pid> nor a chrome "
                          "timeline .json)%s%s%s",
                          file->name ? file->name : (file->path ? file->path : "input"),
                          strcmp(looks, "unitrace") ? "; it looks like " : "",
                          strcmp(looks, "unitrace") ? looks : "", strcmp(looks, "unitrace") ? " output" : "");
    }
    if (rc == PF_OK) {
        unitrace_device_t device = {input->device, input->pci_id, input->cpu_model};
        *out = unitrace_analyze(job, options, &device);
        if (!*out)
            rc = pf_error_set(err, PF_ENOMEM, "out of memory");
    }
    unitrace_job_destroy(&job);
    return rc;
}

static const analyzer_backend_t s_backend = {
    .id = PROFEED__PROFILER__PROFILER_UNITRACE,
    .by_content = s_unitrace_content,
    .by_name = s_unitrace_name,
    .run = s_run_unitrace,
    .check_pass = NULL,
};

const analyzer_backend_t *unitrace_backend(void)
{
    return &s_backend;
}
