/* Fuzz target for the VTune path: any bytes through the hotspots report
 * reader and the JSON reader, the analysis and all three renderers. Seed
 * corpus: tests/fixtures/intel/vtune/.
 *
 *   clang build with -DPROFEED_FUZZ=ON: a libFuzzer binary (fuzz_vtune)
 *   every build: fuzz_vtune_replay, a ctest that replays the corpus */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis.h"
#include "render.h"
#include "vtune_analyze.h"
#include "vtune_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len)
{
    vtune_report_t *report = vtune_report_new();
    if (!report)
        return 0;
    /* The same bytes twice also exercise the merge across files; the JSON
     * reader gets them too, whatever the first byte. */
    const char *text = (const char *) bytes;
    if (vtune_report_parse(report, "fuzz", text, len, NULL) == PF_OK &&
        vtune_report_parse(report, "fuzz2", text, len, NULL) == PF_OK) {
        (void) vtune_report_parse_json(report, "fuzz.json", text, len, NULL);
        analysis_options_t options;
        analysis_options_default(&options);
        options.min_share = 0;
        feedback_t *fb = vtune_analyze(report, &options, NULL);
        if (fb) {
            feedback_set_collated(fb, vtune_analyze_collated(report));
            free(render_text(fb, 500));
            free(render_json(fb, true));
            free(render_markdown(fb));
            feedback_destroy(&fb);
        }
    } else {
        vtune_report_t *json = vtune_report_new();
        if (json && vtune_report_parse_json(json, "fuzz.json", text, len, NULL) == PF_OK) {
            analysis_options_t options;
            analysis_options_default(&options);
            feedback_t *fb = vtune_analyze(json, &options, "Intel Arc B580");
            if (fb) {
                free(render_text(fb, 0));
                free(render_json(fb, false));
                feedback_destroy(&fb);
            }
        }
        vtune_report_destroy(&json);
    }
    (void) vtune_report_sniff(text, len);
    vtune_report_destroy(&report);
    return 0;
}
