/* Fuzz target for ncu source pages: any bytes through ncu_source_parse(),
 * then the hot spots attached to a feedback whose one kernel has every
 * parsed function's name, and all three renderers. Seed corpus: the source
 * pages in tests/fixtures/ncu/h200-v2/ and tests/fixtures/ncu/source/.
 *
 *   clang build with -DPROFEED_FUZZ=ON: a libFuzzer binary (fuzz_ncu_source)
 *   every build: fuzz_ncu_source_replay, a ctest that replays the corpus */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "feedback.h"
#include "ncu_hotspots.h"
#include "ncu_source.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t len)
{
    (void) ncu_source_sniff((const char *) bytes, len);
    ncu_source_t *src = ncu_source_new();
    feedback_t *fb = feedback_new("ncu");
    if (src && fb && ncu_source_parse(src, "fuzz", (const char *) bytes, len, NULL) == PF_OK) {
        static const char *const categories[] = {"uncoalesced_access", "bank_conflicts", "local_memory",
                                                 "divergence", "barrier_stall", "warp_stall", "small_grid"};
        for (size_t i = 0; i < ncu_source_kernel_count(src) && i < 4; i++) {
            size_t k = feedback_add_kernel(fb, ncu_source_kernel(src, i)->function, "(1, 1, 1)", "(1, 1, 1)", 1,
                                           1000, 1.0);
            for (size_t c = 0; k != (size_t) -1 && c < sizeof categories / sizeof categories[0]; c++)
                (void) feedback_add_finding(fb, k, categories[c], 10, "title", "action");
        }
        ncu_hotspots_attach(fb, src);
        free(render_text_within(fb, 0, 200));
        free(render_json(fb, false));
        free(render_markdown(fb));
    }
    feedback_destroy(&fb);
    ncu_source_destroy(&src);
    return 0;
}
