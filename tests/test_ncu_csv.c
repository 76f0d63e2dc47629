/* Nsight Compute CSV parsing: numbers and units as ncu prints them, pages and
 * passes collated per launch, and bad input answered with a clear error or a
 * degraded result that says what is missing, never a crash. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "test_util.h"
#include "analysis.h"
#include "analyzer.h"
#include "ncu_analyze.h"
#include "ncu_both_ways.h"
#include "ncu_csv.h"
#include "ncu_split.h"
#include "number.h"
#include "render.h"

#define H200 PF_FIXTURE_DIR "/ncu/h200/"

static double s_num(const char *text)
{
    double v = NAN;
    if (!number_parse(text, strlen(text), &v))
        return NAN;
    return v;
}

Test(number, reads_every_grouping_ncu_prints)
{
    cr_expect_float_eq(s_num("57,984"), 57984, 0);
    cr_expect_float_eq(s_num("57984"), 57984, 0);
    cr_expect_float_eq(s_num("3,197,588,809.13"), 3197588809.13, 1e-3);
    cr_expect_float_eq(s_num("3.197.588.809,13"), 3197588809.13, 1e-3);
    cr_expect_float_eq(s_num("41.68"), 41.68, 1e-9);
    cr_expect_float_eq(s_num("1,5"), 1.5, 1e-9);
    cr_expect_float_eq(s_num("6.346e-05"), 6.346e-05, 1e-12);
    cr_expect_float_eq(s_num(" 0.536879 "), 0.536879, 1e-12);
    cr_expect_float_eq(s_num("10,485,760 (2,621,440; 2,097,152)"), 10485760, 0);
}

Test(number, words_and_blanks_are_not_numbers)
{
    const char *bad[] = {"", "n/a", "N/A", "no data", "nan", "NaN", "inf", "PolicySpread", "-", "1e",
                         "1e999", "12abc", "(1; 2)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect(isnan(s_num(bad[i])), "\"%s\" parsed as a number", bad[i]);
}

Test(number, units_scale_to_base)
{
    cr_expect_float_eq(number_unit_scale("ns"), 1, 0);
    cr_expect_float_eq(number_unit_scale("us"), 1e3, 1e-6);
    cr_expect_float_eq(number_unit_scale("ms"), 1e6, 1e-3);
    cr_expect_float_eq(number_unit_scale("msecond"), 1e6, 1e-3);
    cr_expect_float_eq(number_unit_scale("s"), 1e9, 1);
    cr_expect_float_eq(number_unit_scale("Ghz"), 1e9, 1);
    cr_expect_float_eq(number_unit_scale("Kbyte/cycle"), 1e3, 1e-9);
    cr_expect_float_eq(number_unit_scale("Tbyte/s"), 1e12, 1);
    cr_expect_float_eq(number_unit_scale("Mbyte"), 1e6, 1e-6);
    cr_expect_float_eq(number_unit_scale("sector/us"), 1e6, 1e-6);
    cr_expect_float_eq(number_unit_scale("%"), 1, 0);
    cr_expect_float_eq(number_unit_scale("register/thread"), 1, 0);
    cr_expect_float_eq(number_unit_scale(""), 1, 0);
}

static ncu_data_t *s_parse_ok(const char *const *files, size_t count)
{
    ncu_data_t *data = ncu_data_new();
    for (size_t i = 0; i < count; i++) {
        pf_error_t err;
        pf_error_clear(&err);
        char path[512];
        snprintf(path, sizeof path, H200 "%s", files[i]);
        cr_assert_eq(ncu_csv_parse_file(data, path, &err), PF_OK, "%s", err.msg);
    }
    return data;
}

static const ncu_launch_t *s_launch(const ncu_data_t *data, long id)
{
    for (size_t i = 0; i < ncu_data_count(data); i++)
        if (ncu_data_at_const(data, i)->id == id)
            return ncu_data_at_const(data, i);
    return NULL;
}

/* Two runs of the same program, one printing human units, one base units:
 * the values agree to run-to-run noise. */
Test(ncu_csv, human_and_base_units_give_the_same_values)
{
    const char *human[] = {"raw_metrics.csv"}, *base[] = {"raw_metrics_base_units.csv"};
    ncu_data_t *a = s_parse_ok(human, 1), *b = s_parse_ok(base, 1);
    cr_assert_eq(ncu_data_count(a), 9);
    cr_assert_eq(ncu_data_count(b), 9);
    for (long id = 0; id < 9; id++) {
        const ncu_launch_t *x = s_launch(a, id), *y = s_launch(b, id);
        cr_assert(x && y);
        cr_expect_str_eq(x->kernel, y->kernel);
        cr_expect_float_eq(x->v[NM_DRAM_READ], y->v[NM_DRAM_READ], 0.05 * y->v[NM_DRAM_READ] + 4096,
                           "%s: %g vs %g", x->kernel, x->v[NM_DRAM_READ], y->v[NM_DRAM_READ]);
        cr_expect_float_eq(x->v[NM_SM_PCT], y->v[NM_SM_PCT], 1.0);
        cr_expect_float_eq(x->v[NM_DURATION], y->v[NM_DURATION], 0.05 * y->v[NM_DURATION]);
    }
    ncu_data_destroy(&a);
    ncu_data_destroy(&b);
}

Test(ncu_csv, auto_scaled_units_are_converted_to_base)
{
    const char *files[] = {"full_raw.csv"};
    ncu_data_t *data = s_parse_ok(files, 1);
    const ncu_launch_t *atomic = s_launch(data, 8);
    cr_assert_not_null(atomic);
    cr_expect_eq(strncmp(atomic->kernel, "atomic_hist(", 12), 0);
    cr_expect_float_eq(atomic->v[NM_DURATION], 10791104, 1, "ms -> ns: %f", atomic->v[NM_DURATION]);
    cr_expect_float_eq(atomic->v[NM_SM_FREQ], 1.979497e9, 1e3, "Ghz -> hz");
    cr_expect_float_eq(atomic->v[NM_DRAM_BYTES_PEAK], 1504, 1e-6, "Kbyte/cycle -> byte/cycle");
    cr_expect_float_eq(atomic->v[NM_DRAM_READ], 0.268450e9, 1e3, "Gbyte -> byte");
    cr_expect_str_eq(ncu_data_device(data), "NVIDIA H200");
    ncu_data_destroy(&data);
}

Test(ncu_csv, details_labels_map_to_metrics_and_rules_are_kept)
{
    const char *files[] = {"details_sections.csv"};
    ncu_data_t *data = s_parse_ok(files, 1);
    cr_assert_eq(ncu_data_count(data), 9);
    const ncu_launch_t *tiny = s_launch(data, 7);
    cr_expect_float_eq(tiny->v[NM_GRID_SIZE], 1, 0);
    cr_expect_float_eq(tiny->v[NM_SM_COUNT], 132, 0);
    bool launch_rule = false;
    for (size_t r = 0; r < tiny->rule_count; r++)
        launch_rule |= strcmp(tiny->rules[r].name, "LaunchConfiguration") == 0 &&
                       tiny->rules[r].global && fabs(tiny->rules[r].speedup - 99.24) < 0.01;
    cr_expect(launch_rule, "LaunchConfiguration with its 99.24%% global speedup");
    /* "Memory Throughput" is a percentage in SpeedOfLight, bytes/s in the memory section. */
    const ncu_launch_t *vec = s_launch(data, 0);
    cr_expect_float_eq(vec->v[NM_MEM_PCT], 71.77, 0.01);
    cr_expect_gt(vec->v[NM_DRAM_BYTES_PER_S], 3e12);
    ncu_data_destroy(&data);
}

Test(ncu_csv, passes_merge_per_launch)
{
    const char *files[] = {"pass1_sol.csv", "pass2_memory.csv", "pass3_warps_occupancy.csv"};
    ncu_data_t *data = s_parse_ok(files, 3);
    cr_expect_eq(ncu_data_count(data), 9, "three passes of nine launches are nine launches");
    const ncu_launch_t *bank = s_launch(data, 5);
    cr_expect(!isnan(bank->v[NM_L1_PCT]), "from the SpeedOfLight pass");
    cr_expect(!isnan(bank->v[NM_L2_HIT]), "from the memory pass");
    cr_expect(!isnan(bank->v[NM_STALL_MIO_THROTTLE]), "from the warp-state pass");
    ncu_data_destroy(&data);
}

Test(ncu_csv, passes_of_different_programs_are_kept_apart)
{
    const char *raw =
        "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n"
        "\"\",\"\",\"\",\"\",\"\",\"ns\"\n"
        "\"0\",\"1\",\"a(int)\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"100\"\n";
    const char *other =
        "\"ID\",\"Process ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n"
        "\"\",\"\",\"\",\"\",\"\",\"ns\"\n"
        "\"0\",\"2\",\"b(int)\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"200\"\n";
    ncu_data_t *data = ncu_data_new();
    pf_error_t err;
    cr_assert_eq(ncu_csv_parse_buffer(data, "one", raw, strlen(raw), &err), PF_OK);
    cr_assert_eq(ncu_csv_parse_buffer(data, "two", other, strlen(other), &err), PF_OK);
    cr_expect_eq(ncu_data_count(data), 2);
    ncu_data_destroy(&data);
}

/* Parsing in chunks of any size must give what parsing the whole gives. */
Test(ncu_csv, chunk_boundaries_do_not_matter)
{
    size_t len;
    char *bytes = test_read_file(H200 "raw_metrics_mixed_stdout.csv", &len);
    const size_t chunks[] = {1, 2, 7, 64, 4093};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        ncu_data_t *data = ncu_data_new();
        ncu_csv_t *csv = ncu_csv_new(data, "chunks");
        pf_error_t err;
        for (size_t off = 0; off < len; off += chunks[c]) {
            size_t n = len - off < chunks[c] ? len - off : chunks[c];
            cr_assert_eq(ncu_csv_feed(csv, bytes + off, n, &err), PF_OK, "%s", err.msg);
        }
        cr_assert_eq(ncu_csv_finish(csv, &err), PF_OK, "%s", err.msg);
        cr_expect_eq(ncu_data_count(data), 9, "chunk %zu", chunks[c]);
        const ncu_launch_t *atomic = s_launch(data, 8);
        cr_expect_float_eq(atomic->v[NM_DURATION], 10761056, 0, "chunk %zu", chunks[c]);
        ncu_csv_destroy(&csv);
        ncu_data_destroy(&data);
    }
    free(bytes);
}

/* Runs bytes through the parser and the whole analysis. */
static pf_status_t s_try(const char *bytes, size_t len, pf_error_t *err, feedback_t **fb_out)
{
    ncu_data_t *data = ncu_data_new();
    pf_error_clear(err);
    pf_status_t rc = ncu_csv_parse_buffer(data, "input.csv", bytes, len, err);
    if (rc == PF_OK) {
        analysis_options_t options;
        analysis_options_default(&options);
        options.min_share = 0;
        feedback_t *fb = ncu_analyze(data, &options, NULL);
        cr_assert_not_null(fb);
        char *text = render_text(fb, 0), *json = render_json(fb, true), *md = render_markdown(fb);
        cr_assert(text && json && md);
        json_t *parsed = json_loads(json, 0, NULL);
        cr_expect_not_null(parsed, "JSON output is always valid");
        json_decref(parsed);
        free(text);
        free(json);
        free(md);
        if (fb_out)
            *fb_out = fb;
        else
            feedback_destroy(&fb);
    }
    ncu_data_destroy(&data);
    return rc;
}

Test(ncu_bad_input, empty_and_foreign_files_get_a_clear_error)
{
    pf_error_t err;
    cr_expect_eq(s_try("", 0, &err, NULL), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "no Nsight Compute CSV"), "%s", err.msg);
    const char *other = "\"name\",\"value\"\n\"a\",\"1\"\n";
    cr_expect_eq(s_try(other, strlen(other), &err, NULL), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "line 1"), "the line is named: %s", err.msg);
    cr_expect_not_null(strstr(err.msg, "Kernel Name"), "%s", err.msg);
}

Test(ncu_bad_input, summary_page_is_refused_with_a_reason)
{
    size_t len;
    char *bytes = test_read_file(PF_FIXTURE_DIR "/ncu/h200-samples/live_summary_per_kernel.csv", &len);
    pf_error_t err;
    cr_expect_eq(s_try(bytes, len, &err, NULL), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "--print-summary"), "%s", err.msg);
    free(bytes);
}

Test(ncu_bad_input, truncated_files_never_crash)
{
    size_t len;
    char *bytes = test_read_file(H200 "full_details.csv", &len);
    /* Every 997th prefix: inside quoted fields, between rows, mid-number. */
    for (size_t cut = 0; cut < len; cut += 997) {
        pf_error_t err;
        pf_status_t rc = s_try(bytes, cut, &err, NULL);
        cr_expect(rc == PF_OK || rc == PF_EBADINPUT, "cut at %zu: %s", cut, err.msg);
        if (rc != PF_OK)
            cr_expect_neq(err.msg[0], '\0');
    }
    free(bytes);
}

Test(ncu_bad_input, truncated_inside_a_field_says_so)
{
    size_t len;
    char *bytes = test_read_file(H200 "raw_metrics.csv", &len);
    const char *mid = strstr(bytes, "\"vec_add(") + 5;
    pf_error_t err;
    cr_expect_eq(s_try(bytes, (size_t) (mid - bytes), &err, NULL), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "quoted field"), "%s", err.msg);
    free(bytes);
}

Test(ncu_bad_input, row_cut_at_a_field_boundary_is_bad_input)
{
    size_t len;
    char *bytes = test_read_file(H200 "raw_metrics.csv", &len);
    /* End the file in the middle of the last launch's row, between fields:
     * every field read is whole, but the row is short. */
    const char *last = strstr(bytes, "\"8\",\"");
    const char *cut = strstr(last + 200, "\",\"") + 2;
    pf_error_t err;
    feedback_t *fb = NULL;
    cr_expect_eq(s_try(bytes, (size_t) (cut - bytes), &err, &fb), PF_EBADINPUT);
    cr_expect_null(fb);
    cr_expect_not_null(strstr(err.msg, "cut short"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "input.csv: line "), "%s", err.msg);
    feedback_destroy(&fb);
    free(bytes);
}

Test(ncu_bad_input, missing_units_row_is_noted_and_values_kept)
{
    const char *csv = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\"\n"
                      "\"0\",\"k()\",\"(32, 1, 1)\",\"(1000, 1, 1)\",\"85\",\"10\"\n";
    pf_error_t err;
    feedback_t *fb = NULL;
    cr_assert_eq(s_try(csv, strlen(csv), &err, &fb), PF_OK, "%s", err.msg);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->bottleneck, "compute_bound");
    bool noted = false;
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        noted |= strstr(feedback_note(fb, i), "no units row") != NULL;
    cr_expect(noted);
    feedback_destroy(&fb);
}

Test(ncu_bad_input, reordered_and_unknown_columns_are_found_by_name)
{
    const char *csv =
        "\"made_up__metric.sum\",\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\",\"Grid Size\",\"Kernel Name\",\"ID\",\"Block Size\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed\"\n"
        "\"\",\"%\",\"\",\"\",\"\",\"\",\"%\",\"%\"\n"
        "\"7\",\"90\",\"(1000, 1, 1)\",\"k()\",\"3\",\"(256, 1, 1)\",\"20\",\"88\"\n";
    pf_error_t err;
    feedback_t *fb = NULL;
    /* The units row is recognised by its empty ID, wherever ID stands. */
    cr_assert_eq(s_try(csv, strlen(csv), &err, &fb), PF_OK, "%s", err.msg);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->bottleneck, "dram_bound");
    feedback_destroy(&fb);
}

Test(ncu_bad_input, na_values_are_missing_not_zero)
{
    const char *csv = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\"\n"
                      "\"\",\"\",\"\",\"\",\"%\",\"%\"\n"
                      "\"0\",\"k()\",\"(32, 1, 1)\",\"(1000, 1, 1)\",\"n/a\",\"nan\"\n";
    pf_error_t err;
    feedback_t *fb = NULL;
    cr_assert_eq(s_try(csv, strlen(csv), &err, &fb), PF_OK, "%s", err.msg);
    cr_expect_eq(feedback_finding_count(fb), 0, "nothing is judged from n/a");
    cr_expect_gt(feedback_missing_count(fb), 0);
    feedback_destroy(&fb);
}

Test(ncu_bad_input, invalid_utf8_still_gives_valid_json)
{
    const char *csv = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n"
                      "\"\",\"\",\"\",\"\",\"ns\"\n"
                      "\"0\",\"k\xff\xfe\xc3(\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"5\"\n";
    pf_error_t err;
    feedback_t *fb = NULL;
    cr_assert_eq(s_try(csv, strlen(csv), &err, &fb), PF_OK, "%s", err.msg);
    char *json = render_json(fb, false);
    json_t *root = json_loads(json, 0, NULL);
    cr_assert_not_null(root);
    const char *name = json_string_value(
        json_object_get(json_array_get(json_object_get(root, "kernels"), 0), "name"));
    cr_expect_str_eq(name, "k\x3f\x3f\x3f(");
    json_decref(root);
    free(json);
    feedback_destroy(&fb);
}

Test(ncu_bad_input, ten_megabyte_field_is_refused)
{
    size_t big = 10u << 20;
    const char *head = "\"ID\",\"Kernel Name\"\n\"0\",\"";
    char *csv = malloc(strlen(head) + big + 8);
    memcpy(csv, head, strlen(head));
    memset(csv + strlen(head), 'a', big);
    memcpy(csv + strlen(head) + big, "\"\n", 3);
    pf_error_t err;
    cr_expect_eq(s_try(csv, strlen(csv), &err, NULL), PF_ETOOBIG);
    cr_expect_not_null(strstr(err.msg, "longer than"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "line 2"), "%s", err.msg);
    free(csv);
}

Test(ncu_bad_input, hundred_thousand_columns_are_refused)
{
    size_t cols = 100000;
    char *csv = malloc(cols * 8 + 64);
    size_t n = 0;
    for (size_t c = 0; c < cols; c++)
        n += (size_t) snprintf(csv + n, 16, "%s\"c%zu\"", c ? "," : "", c % 1000);
    csv[n++] = '\n';
    pf_error_t err;
    cr_expect_eq(s_try(csv, n, &err, NULL), PF_ETOOBIG);
    cr_expect_not_null(strstr(err.msg, "columns"), "%s", err.msg);
    free(csv);
}

Test(ncu_bad_input, random_bit_flips_never_crash)
{
    size_t len;
    char *orig = test_read_file(H200 "raw_metrics.csv", &len);
    char *bytes = malloc(len);
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        memcpy(bytes, orig, len);
        for (int flips = 0; flips < 20; flips++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            bytes[at] ^= (char) (1u << (seed % 8));
        }
        pf_error_t err;
        pf_status_t rc = s_try(bytes, len, &err, NULL);
        cr_expect(rc == PF_OK || rc == PF_EBADINPUT || rc == PF_ETOOBIG, "round %d: %s", round, err.msg);
    }
    free(bytes);
    free(orig);
}

/* analyzer_run parses a job's passes on several threads and merges them in
 * pass order: the collated data must equal parsing the files one by one. */
Test(ncu_csv, parallel_pass_parsing_equals_sequential)
{
    const char *names[] = {"pass1_sol.csv", "pass2_memory.csv", "pass3_warps_occupancy.csv", "full_details.csv"};
    ncu_data_t *data = ncu_data_new();
    ncu_data_keep_raw(data); /* as analyzer_run() does for the collated data */
    analyzer_file_t files[4];
    memset(files, 0, sizeof files);
    char paths[4][512];
    for (size_t i = 0; i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], H200 "%s", names[i]);
        files[i].path = paths[i];
        pf_error_t err;
        cr_assert_eq(ncu_csv_parse_file(data, paths[i], &err), PF_OK, "%s", err.msg);
    }
    json_t *sequential = ncu_analyze_collated(data);
    ncu_data_destroy(&data);

    analyzer_input_t input = {.files = files, .count = 4, .profiler = "ncu", .with_collated = 1, .threads = 4};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    cr_expect(json_equal(sequential, feedback_collated(fb)), "parallel parsing changed the data");
    cr_expect_eq(json_array_size(json_object_get(sequential, "launches")), 9);
    json_decref(sequential);
    feedback_destroy(&fb);
}

/* The fast splitter (ncu_split.h) must read every capture exactly as libcsv
 * does: the whole feedback, collated data included, is compared, fed whole
 * and in chunks that cut records anywhere. */
Test(ncu_csv, fast_splitter_reads_every_fixture_as_libcsv_does)
{
    const char *dirs[] = {"h200", "h200-plans", "h200-samples"};
    size_t compared = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char dir[512];
        snprintf(dir, sizeof dir, PF_FIXTURE_DIR "/ncu/%s", dirs[d]);
        DIR *listing = opendir(dir);
        cr_assert(listing, "%s", dir);
        struct dirent *entry;
        while ((entry = readdir(listing))) {
            const char *dot = strrchr(entry->d_name, '.');
            if (!dot || (strcmp(dot, ".csv") != 0 && strcmp(dot, ".txt") != 0))
                continue;
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
            size_t len;
            char *bytes = test_read_file(path, &len);
            const size_t chunks[] = {0, 7, 4093};
            for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                char *fast = NULL, *slow = NULL;
                bool same = ncu_both_ways_agree(bytes, len, chunks[c], &fast, &slow);
                cr_expect(same, "%s, chunk %zu: fast splitter gave\n%.300s\nlibcsv gave\n%.300s", path,
                          chunks[c], fast ? fast : "", slow ? slow : "");
                free(fast);
                free(slow);
            }
            free(bytes);
            compared++;
        }
        closedir(listing);
    }
    cr_expect_geq(compared, 20, "only %zu fixtures found", compared);
}

/* Records of other shapes go to libcsv, and the result is still libcsv's. */
Test(ncu_csv, fast_splitter_leaves_other_shapes_to_libcsv)
{
    const char *header = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n"
                         "\"\",\"\",\"\",\"\",\"nsecond\"\n";
    const char *rows[] = {
        "\"0\",\"k\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"1,000\"\n",               /* ncu's shape */
        "\"0\",\"k\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"1,000\"\r\n",             /* CRLF */
        "\"0\",\"k \"\"q\"\"\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"\n",       /* escaped quotes */
        "\"0\", \"k\" ,\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"\n",                 /* spaces around */
        "\"0\",k,\"(1, 1, 1)\",\"(2, 1, 1)\",5\n",                             /* unquoted */
        "\"0\",\"k\",,\"(2, 1, 1)\",\"5\",\n",                                 /* empty fields */
        "\"0\",\"k\nl\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"\n",                /* newline inside */
        "\"0\",\"k\"x,\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"\n",                  /* text after a quote */
        "\"0\",\"k\"\r\"1\",\"(2, 1, 1)\",\"5\"\n",                          /* CR between fields */
        "\"0\",\"k\"x\n\"1\",\"k\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"\n",  /* libcsv mid-field */
        "\"0\",\"k\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"5\"",                      /* no last newline */
        "\"0\",\"k\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"5",                        /* open quote at the end */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        char input[1024];
        int n = snprintf(input, sizeof input, "%s%s\"1\",\"k2\",\"(1, 1, 1)\",\"(2, 1, 1)\",\"7\"\n%s",
                         header, rows[r], rows[r]);
        const size_t chunks[] = {0, 1, 5};
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            char *fast = NULL, *slow = NULL;
            bool same = ncu_both_ways_agree(input, (size_t) n, chunks[c], &fast, &slow);
            cr_expect(same, "row %zu, chunk %zu:\n%s\nfast: %.400s\nlibcsv: %.400s", r, chunks[c], input,
                      fast ? fast : "", slow ? slow : "");
            free(fast);
            free(slow);
        }
    }
}

/* The fast splitter's own promise (ncu_split.h), line by line: ncu's shape is
 * split, and every other shape is refused (SIZE_MAX) so that libcsv reads it,
 * rather than split some other way. */
static size_t s_split(const char *line, ncu_span_t *spans, size_t cap, size_t max_field)
{
    return ncu_split_quoted(line, strlen(line), spans, cap, max_field);
}

Test(ncu_split, splits_the_shape_ncu_writes_with_the_details_pages_empty_last_field)
{
    ncu_span_t spans[4];
    const char *line = "\"ID\",\"Kernel Name\",\"\",";
    cr_assert_eq(s_split(line, spans, 4, 64), 4);
    cr_expect(spans[0].off == 1 && spans[0].len == 2, "\"ID\"");
    cr_expect(spans[1].off == 6 && spans[1].len == 11, "\"Kernel Name\"");
    cr_expect_eq(spans[2].len, 0, "a quoted empty field");
    cr_expect(spans[3].off == strlen(line) && spans[3].len == 0, "the unquoted empty last field");
    cr_expect_eq(s_split("\"a\",\"b\",\"c\"", spans, 2, 64), 3, "more fields than spans: the count, first two kept");
    cr_expect(spans[1].off == 5 && spans[1].len == 1);
}

Test(ncu_split, refuses_every_other_shape_for_libcsv)
{
    ncu_span_t spans[8];
    cr_expect_eq(s_split("", spans, 8, 64), SIZE_MAX, "an empty line");
    cr_expect_eq(s_split("\"say \"\"hi\"\"\",\"b\"", spans, 8, 64), SIZE_MAX, "an escaped quote");
    cr_expect_eq(s_split("\"a\",b", spans, 8, 64), SIZE_MAX, "unquoted text");
    cr_expect_eq(s_split("\"a\", \"b\"", spans, 8, 64), SIZE_MAX, "a space before a field");
    cr_expect_eq(s_split("\"a\" ,\"b\"", spans, 8, 64), SIZE_MAX, "a space after a field");
    cr_expect_eq(s_split("\"a\"\r,\"b\"", spans, 8, 64), SIZE_MAX, "a carriage return between fields");
    cr_expect_eq(s_split("\"a\",\"unterminated", spans, 8, 64), SIZE_MAX, "an open quote");
    cr_expect_eq(s_split("\"12345\",\"b\"", spans, 8, 4), SIZE_MAX, "a field over max_field");
    cr_expect_eq(s_split("\"1234\",\"b\"", spans, 8, 4), 2, "a field of exactly max_field");
}

/* A raw page of `rows` launches (IDs from `first`) whose one extra column
 * holds a cell of `cell` bytes: cell text in bulk, for the raw-cell budget.
 * Caller frees. */
static char *s_bulky_raw_page(int first, int rows, size_t cell, size_t *len_p)
{
    size_t cap = (size_t) rows * (cell + 128) + 256, len = 0;
    char *csv = malloc(cap);
    cr_assert_not_null(csv);
    len += (size_t) snprintf(csv + len, cap - len, "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"x__blob\"\n"
                                                   "\"\",\"\",\"nsecond\",\"\"\n");
    for (int i = 0; i < rows; i++) {
        len += (size_t) snprintf(csv + len, cap - len, "\"%d\",\"k\",\"1000\",\"", first + i);
        memset(csv + len, 'x', cell);
        len += cell;
        len += (size_t) snprintf(csv + len, cap - len, "\"\n");
    }
    *len_p = len;
    return csv;
}

static bool s_any_raw(const json_t *collated)
{
    size_t i;
    json_t *launch;
    json_array_foreach(json_object_get(collated, "launches"), i, launch)
        if (json_object_get(launch, "raw"))
            return true;
    return json_object_get(collated, "raw_units") != NULL;
}

static bool s_says(const feedback_t *fb, const char *part)
{
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        if (strstr(feedback_note(fb, i), part))
            return true;
    return false;
}

Test(ncu_csv, raw_cells_past_their_budget_are_all_dropped_and_said)
{
    size_t cell = 512 * 1024, len_a, len_b;
    /* 6 + 6 launches: each pass within NCU_MAX_RAW_BYTES, the two together not. */
    char *a = s_bulky_raw_page(0, 6, cell, &len_a), *b = s_bulky_raw_page(100, 6, cell, &len_b);
    cr_assert_lt(6 * cell, NCU_MAX_RAW_BYTES);
    cr_assert_gt(12 * cell, NCU_MAX_RAW_BYTES);
    for (int threads = 1; threads <= 2; threads++) {
        analyzer_file_t one[1] = {{.pass_key = "ncu.000", .name = "a.csv", .bytes = a, .len = len_a}};
        analyzer_file_t two[2] = {{.pass_key = "ncu.000", .name = "a.csv", .bytes = a, .len = len_a},
                                  {.pass_key = "ncu.001", .name = "b.csv", .bytes = b, .len = len_b}};
        analysis_options_t options;
        analysis_options_default(&options);
        pf_error_t err;
        feedback_t *fb = NULL;
        analyzer_input_t input = {.files = one, .count = 1, .profiler = "ncu", .with_collated = 1, .threads = threads};
        cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
        cr_expect(s_any_raw(feedback_collated(fb)), "a pass within the budget keeps its cells");
        cr_expect(!s_says(fb, "no raw-page cells"));
        feedback_destroy(&fb);
        input.files = two;
        input.count = 2;
        cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
        json_t *collated = feedback_collated(fb);
        cr_expect_eq(json_array_size(json_object_get(collated, "launches")), 12, "every launch is still there");
        cr_expect(!s_any_raw(collated), "%d thread(s): cells kept past the budget", threads);
        cr_expect(s_says(fb, "the collated data carries no raw-page cells"), "%d thread(s): not said", threads);
        feedback_destroy(&fb);
    }
    free(a);
    free(b);
}

/* Issue 20: a data set charges what it holds to its job's budget and gives
 * it all back when destroyed; parsing past the budget is an error that names
 * the setting, the file and the line, not a cut result. */
Test(ncu_csv, a_budget_is_charged_while_held_and_refuses_past_its_limit)
{
    analysis_budget_t budget;
    analysis_budget_init(&budget, 0, "the test's memory-mb");
    ncu_data_t *data = ncu_data_new();
    ncu_data_set_budget(data, &budget);
    pf_error_t err;
    cr_assert_eq(ncu_csv_parse_file(data, H200 "full_details.csv", &err), PF_OK, "%s", err.msg);
    size_t held = atomic_load(&budget.used);
    cr_assert_gt(held, 9 * sizeof(ncu_launch_t), "9 launches and their rules are held: %zu bytes charged", held);
    ncu_data_destroy(&data);
    cr_assert_eq(atomic_load(&budget.used), 0, "destroyed, the set still holds %zu bytes of the budget",
                 atomic_load(&budget.used));

    analysis_budget_init(&budget, held / 2, "the test's memory-mb");
    data = ncu_data_new();
    ncu_data_set_budget(data, &budget);
    cr_assert_eq(ncu_csv_parse_file(data, H200 "full_details.csv", &err), PF_ETOOBIG);
    cr_assert(ncu_data_over_budget(data));
    cr_assert(strstr(err.msg, "full_details.csv: line "), "%s", err.msg);
    char want[128];
    snprintf(want, sizeof want, "may hold at most %zu bytes (the test's memory-mb)", held / 2);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    ncu_data_destroy(&data);
    cr_assert_eq(atomic_load(&budget.used), 0);
}
