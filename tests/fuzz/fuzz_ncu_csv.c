/* Fuzz target for the Nsight Compute path: any bytes through the CSV parser,
 * the analysis and all three renderers, and a check that the fast record
 * splitter and libcsv alone read the bytes the same way (abort if not).
 * Seed corpus: tests/fixtures/ncu/.
 *
 *   clang build with -DPROFEED_FUZZ=ON: a libFuzzer binary (fuzz_ncu_csv)
 *   every build: fuzz_ncu_csv_replay, a ctest that replays the corpus */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis.h"
#include "ncu_analyze.h"
#include "ncu_both_ways.h"
#include "ncu_csv.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len)
{
    ncu_data_t *data = ncu_data_new();
    if (!data)
        return 0;
    /* Two passes of the same bytes exercise the cross-pass merge, once while
     * parsing and once through ncu_data_merge (the parallel path). */
    ncu_data_t *second = ncu_data_new();
    bool merged = second && ncu_csv_parse_buffer(second, "fuzz2", (const char *) bytes, len, NULL) == PF_OK;
    if (ncu_csv_parse_buffer(data, "fuzz", (const char *) bytes, len, NULL) == PF_OK &&
        ncu_csv_parse_buffer(data, "fuzz1", (const char *) bytes, len, NULL) == PF_OK &&
        (!merged || ncu_data_merge(data, second))) {
        analysis_options_t options;
        analysis_options_default(&options);
        options.min_share = 0;
        feedback_t *fb = ncu_analyze(data, &options, NULL);
        if (fb) {
            free(render_text(fb, 500));
            free(render_json(fb, true));
            free(render_markdown(fb));
            feedback_destroy(&fb);
        }
    }
    ncu_data_destroy(&data);
    ncu_data_destroy(&second);
    /* Whole, and in chunks that cut records at odd places. */
    if (!ncu_both_ways_agree((const char *) bytes, len, 0, NULL, NULL) ||
        !ncu_both_ways_agree((const char *) bytes, len, 61, NULL, NULL))
        abort();
    return 0;
}
