/* Parses NCU CSV bytes with the fast splitter and again with libcsv alone,
 * and renders each result to JSON, so a test or the fuzzer can check that
 * the fast path changes nothing. Header-only: shared by test_ncu_csv.c and
 * fuzz/fuzz_ncu_csv.c. */
#ifndef NCU_BOTH_WAYS_H
#define NCU_BOTH_WAYS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "ncu_analyze.h"
#include "ncu_csv.h"
#include "render.h"

/* One way: `chunk` bytes per ncu_csv_feed() call (0: all at once). Returns
 * what came out as a malloc'd text: the status and error, then the rendered
 * feedback with the collated data. NULL only when out of memory. */
static char *ncu_one_way(const char *bytes, size_t len, size_t chunk, bool libcsv_only)
{
    ncu_data_t *data = ncu_data_new();
    ncu_csv_t *csv = data ? ncu_csv_new(data, "input") : NULL;
    if (!csv) {
        ncu_data_destroy(&data);
        return NULL;
    }
    ncu_csv_set_libcsv_only(csv, libcsv_only);
    pf_error_t err = {0};
    pf_status_t rc = PF_OK;
    if (chunk == 0)
        chunk = len ? len : 1;
    for (size_t off = 0; off < len && rc == PF_OK; off += chunk)
        rc = ncu_csv_feed(csv, bytes + off, len - off < chunk ? len - off : chunk, &err);
    if (rc == PF_OK)
        rc = ncu_csv_finish(csv, &err);
    ncu_csv_destroy(&csv);

    char *json = NULL;
    if (rc == PF_OK) {
        analysis_options_t options;
        analysis_options_default(&options);
        options.min_share = 0;
        feedback_t *fb = ncu_analyze(data, &options, NULL);
        if (fb) {
            json = render_json(fb, true);
            feedback_destroy(&fb);
        }
    }
    ncu_data_destroy(&data);

    size_t size = strlen(err.msg) + (json ? strlen(json) : 0) + 64;
    char *out = malloc(size);
    if (out)
        snprintf(out, size, "rc %d: %s\n%s", (int) rc, rc == PF_OK ? "" : err.msg, json ? json : "");
    free(json);
    return out;
}

/* Whether both ways give the same result; on a difference, `*fast_p` and
 * `*slow_p` (when given) receive the two texts, else they are freed. */
static bool ncu_both_ways_agree(const char *bytes, size_t len, size_t chunk, char **fast_p,
                                char **slow_p)
{
    char *fast = ncu_one_way(bytes, len, chunk, false);
    char *slow = ncu_one_way(bytes, len, chunk, true);
    bool same = !fast || !slow || strcmp(fast, slow) == 0; /* out of memory proves nothing */
    if (!same && fast_p && slow_p) {
        *fast_p = fast;
        *slow_p = slow;
        return false;
    }
    free(fast);
    free(slow);
    return same;
}

#endif
