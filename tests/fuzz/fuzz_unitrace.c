/* Fuzz target for the unitrace path: the bytes as a metrics table and as a
 * chrome timeline of one pass, then the analysis and all renderers. Seed
 * corpus: tests/fixtures/intel/unitrace_*. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "render.h"
#include "unitrace_analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len)
{
    unitrace_job_t *job = unitrace_job_new();
    if (!job)
        return 0;
    unitrace_job_add(job, "unitrace.000", "trace.metrics.1", (const char *) bytes, len, NULL);
    unitrace_job_add(job, "unitrace.000", "python3.1.json", (const char *) bytes, len, NULL);
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    unitrace_device_t device = {"Intel Arc B580", NULL, NULL};
    feedback_t *fb = unitrace_analyze(job, &options, &device);
    if (fb) {
        free(render_text(fb, 400));
        free(render_json(fb, false));
        free(render_markdown(fb));
        feedback_destroy(&fb);
    }
    unitrace_job_destroy(&job);
    return 0;
}
