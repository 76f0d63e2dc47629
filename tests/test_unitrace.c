/* Intel unitrace feedback on constructed captures (tests/fixtures/intel/,
 * documented formats, numbers built against the Arc B580 roofs), the
 * profiler selection table, and the Intel/NVIDIA roof lookup. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "noise.h"
#include "render.h"
#include "test_util.h"
#include "roofs.h"
#include "select.h"
#include "unitrace_analyze.h"
#include "unitrace_table.h"
#include "unitrace_timeline.h"

#define INTEL PF_FIXTURE_DIR "/intel/"
#define B580 INTEL "unitrace_b580/"

static const char *const s_b580_files[] = {
    B580 "trace.metrics.41001", B580 "python3.41001.json", B580 "trace.metrics.41002",
    B580 "python3.41002.json",  B580 "trace.metrics.41003", B580 "python3.41003.json",
};

static feedback_t *s_run(const char *const *paths, size_t count, const char *device, bool all_segments)
{
    analyzer_file_t files[16];
    cr_assert_leq(count, 16);
    memset(files, 0, sizeof files);
    for (size_t i = 0; i < count; i++)
        files[i].path = paths[i];
    analyzer_input_t input = {.files = files, .count = count, .device = device};
    analysis_options_t options;
    analysis_options_default(&options);
    options.min_share = 0;
    options.all_segments = all_segments;
    feedback_t *fb = NULL;
    pf_error_t err;
    pf_error_clear(&err);
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    cr_assert_not_null(fb);
    return fb;
}

static const fb_finding_t *s_first(const feedback_t *fb, const char *kernel_prefix, const char *segment_part)
{
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        const fb_kernel_t *kernel = feedback_kernel_const(fb, k);
        if (strncmp(kernel->name, kernel_prefix, strlen(kernel_prefix)) != 0)
            continue;
        if (segment_part && !strstr(kernel->segment, segment_part))
            continue;
        for (size_t i = 0; i < feedback_finding_count(fb); i++)
            if (feedback_finding(fb, i)->kernel == k)
                return feedback_finding(fb, i);
    }
    return NULL;
}

static bool s_evidence_has(const fb_finding_t *f, const char *text)
{
    for (size_t e = 0; f && e < f->evidence_count; e++)
        if (strstr(f->evidence[e].text, text))
            return true;
    return false;
}

static bool s_note_has(const feedback_t *fb, const char *text)
{
    for (size_t i = 0; i < feedback_note_count(fb); i++)
        if (strstr(feedback_note(fb, i), text))
            return true;
    return false;
}

Test(unitrace, the_profiler_is_detected_from_the_files)
{
    analyzer_file_t files[2] = {{.path = B580 "trace.metrics.41001"}, {.path = B580 "python3.41001.json"}};
    cr_expect_str_eq(analyzer_detect(files, 2), "unitrace");
    analyzer_file_t ncu[1] = {{.path = PF_FIXTURE_DIR "/ncu/h200/raw_metrics.csv"}};
    cr_expect_str_eq(analyzer_detect(ncu, 1), "ncu");
}

Test(unitrace, each_kernel_gets_the_verdict_it_was_built_for)
{
    feedback_t *fb = s_run(s_b580_files, 6, "Intel Corporation Battlemage G21 [Arc B580] (rev 01)", false);
    cr_expect_eq(feedback_status(fb), FB_OK);
    cr_expect_str_eq(feedback_device(fb), "Intel Arc B580");
    const fb_finding_t *gemm = s_first(fb, "gemm_fp32", NULL);
    const fb_finding_t *triad = s_first(fb, "stream_triad", NULL);
    const fb_finding_t *softmax = s_first(fb, "softmax_rows", NULL);
    const fb_finding_t *transpose = s_first(fb, "transpose_slm", NULL);
    cr_assert(gemm && triad && softmax && transpose);
    cr_expect_str_eq(gemm->category, "compute_bound");
    cr_expect_str_eq(triad->category, "memory_bound");
    cr_expect_str_eq(softmax->category, "balanced");
    cr_expect_str_eq(transpose->category, "slm_bank_conflicts");
    /* Issue #14: importance is the estimated gain; a bound's gain is its
     * headroom. ALU0 at 82% of 456 instr/ns leaves 18% (it read 82 before). */
    cr_expect_float_eq(gemm->importance, 18, 1, "ALU0 at 82%% of 456 instr/ns");
    cr_expect_str_eq(gemm->source, "profeed:headroom");
    cr_expect(s_evidence_has(triad, "400.0 GB/s = 88% of 456 GB/s"));
    cr_expect(s_evidence_has(transpose, "60% of"), "SLM conflict rate from MemoryProfile");
    /* Balanced still gets its breakdown (the seed prints nothing there). */
    cr_expect_geq(softmax->evidence_count, 3);
    feedback_destroy(&fb);
}

Test(unitrace, instruction_mix_and_xmx_advice_come_from_vector_engine_profile)
{
    feedback_t *fb = s_run(s_b580_files, 6, "Arc B580", false);
    const fb_finding_t *gemm = s_first(fb, "gemm_fp32", NULL);
    cr_expect(s_evidence_has(gemm, "ALU0 mix: FP32 97%"));
    bool xmx = false;
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        xmx |= strcmp(feedback_finding(fb, i)->category, "xmx_unused") == 0;
    cr_expect(xmx, "an FP32 GEMM on ALU0 with XMX idle is told about XMX");
    feedback_destroy(&fb);
}

Test(unitrace, four_windows_keep_the_median_and_the_slowest)
{
    feedback_t *fb = s_run(s_b580_files, 6, "Arc B580", false);
    cr_expect_not_null(s_first(fb, "gemm_fp32", "test_benchmark[256]"), "median window");
    cr_expect_not_null(s_first(fb, "gemm_fp32", "test_benchmark[1024]"), "slowest window");
    cr_expect_null(s_first(fb, "gemm_fp32", "test_benchmark[128]"));
    cr_expect_null(s_first(fb, "gemm_fp32", "test_benchmark[512]"));
    cr_expect(s_note_has(fb, "median and the slowest"));
    cr_expect_eq(feedback_kernel_count(fb), 8);
    feedback_destroy(&fb);
    fb = s_run(s_b580_files, 6, "Arc B580", true);
    cr_expect_eq(feedback_kernel_count(fb), 16, "--all-segments keeps all four windows");
    cr_expect_not_null(s_first(fb, "gemm_fp32", "test_benchmark[128]"));
    feedback_destroy(&fb);
}

Test(unitrace, rows_join_the_timeline_on_instance_ids)
{
    size_t len = 0;
    FILE *f = fopen(B580 "python3.41001.json", "rb");
    cr_assert_not_null(f);
    char *bytes = malloc(1 << 20);
    len = fread(bytes, 1, 1 << 20, f);
    fclose(f);
    pf_error_t err;
    unitrace_timeline_t *tl = unitrace_timeline_parse("t.json", bytes, len, &err);
    cr_assert_not_null(tl, "%s", err.msg);
    cr_expect_eq(tl->segment_count, 4);
    cr_expect_str_eq(tl->segments[0].label, "task.py::Test::test_benchmark[128]");
    cr_expect_eq(tl->instance_count, 32);
    cr_expect(unitrace_timeline_in_segment(tl, 0, 1), "instance 1 ran in the first window");
    cr_expect(!unitrace_timeline_in_segment(tl, 1, 1));
    cr_expect(unitrace_timeline_in_segment(tl, 3, 32));
    unitrace_timeline_destroy(&tl);
    /* A trace cut before its closing brackets is closed and read. */
    char *cut = strstr(bytes, "\n]\n}");
    cr_assert_not_null(cut);
    tl = unitrace_timeline_parse("cut.json", bytes, (size_t) (cut - bytes), &err);
    cr_expect_not_null(tl, "%s", err.msg);
    unitrace_timeline_destroy(&tl);
    free(bytes);
}

Test(unitrace, a_missing_pass_degrades_with_a_note)
{
    feedback_t *fb = s_run(s_b580_files, 4, "Arc B580", false); /* no VectorEngineProfile */
    bool named = false;
    for (size_t i = 0; i < feedback_missing_count(fb); i++)
        named |= strstr(feedback_missing(fb, i), "VectorEngineProfile") != NULL;
    cr_expect(named);
    const fb_finding_t *gemm = s_first(fb, "gemm_fp32", NULL);
    cr_expect_str_eq(gemm->category, "compute_bound", "still judged from ComputeBasic");
    cr_expect(!s_evidence_has(gemm, "mix:"), "no instruction mix without the pass");
    feedback_destroy(&fb);
}

Test(unitrace, no_roofs_still_gives_utilization_findings)
{
    feedback_t *fb = s_run(s_b580_files, 6, "Some Future Intel GPU", false);
    cr_expect(s_note_has(fb, "no roofs"));
    const fb_finding_t *gemm = s_first(fb, "gemm_fp32", NULL);
    cr_assert_not_null(gemm);
    cr_expect_str_eq(gemm->category, "compute_bound", "from XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION");
    cr_expect_not_null(strstr(gemm->title, "counter"));
    feedback_destroy(&fb);
}

Test(unitrace, sampling_mode_averages_samples_and_never_calls_the_interval_a_time)
{
    const char *paths[] = {INTEL "unitrace_ocl_sampling/trace.metrics.52001",
                           INTEL "unitrace_ocl_sampling/trace.metrics.52002",
                           INTEL "unitrace_ocl_sampling/trace.metrics.52003"};
    feedback_t *fb = s_run(paths, 3, "Arc B580", false);
    cr_expect_eq(feedback_kernel_count(fb), 2, "idle NoKernel samples are not a kernel");
    for (size_t k = 0; k < feedback_kernel_count(fb); k++) {
        cr_expect(isnan(feedback_kernel_const(fb, k)->time_ns), "no kernel time in sampling mode");
        cr_expect_float_eq(feedback_kernel_const(fb, k)->share, 0.5, 1e-9, "6 of 12 samples");
        cr_expect_eq(feedback_kernel_const(fb, k)->launches, 6);
    }
    const fb_finding_t *gemm = s_first(fb, "gemm_fp32", NULL);
    cr_expect_str_eq(gemm->category, "compute_bound");
    /* Issue #14: importance is the gain, here the headroom of ALU0 at the
     * mean of 78.7, 82, 85.3 (the test read 82 before). */
    cr_expect_float_eq(gemm->importance, 18, 0.5, "the mean of 78.7, 82, 85.3");
    cr_expect_str_eq(s_first(fb, "stream_triad", NULL)->category, "memory_bound");
    cr_expect(s_note_has(fb, "sampling interval"));
    char *text = render_text(fb, 0);
    cr_expect_not_null(strstr(text, "of samples"));
    free(text);
    feedback_destroy(&fb);
}

Test(unitrace, both_header_generations_and_pvc_groups_are_read)
{
    const char *paths[] = {INTEL "unitrace_pvc/trace.metrics.1799860", INTEL "unitrace_pvc/trace.metrics.1799853",
                           INTEL "unitrace_pvc/trace.metrics.1799871"};
    feedback_t *fb = s_run(paths, 3, "Intel(R) Data Center GPU Max 1550", false);
    cr_expect_eq(feedback_status(fb), FB_OK);
    cr_expect_str_eq(feedback_device(fb), "Intel Data Center GPU Max 1550");
    cr_assert_eq(feedback_kernel_count(fb), 1);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->name, "binary_test [SIMD16]");
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->grid, "{1; 1; 1}");
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->block, "{4; 2; 1}");
    cr_expect(s_note_has(fb, "pid 1799871: metric group not recognised"), "PVC MemProfile degrades");
    cr_expect(!s_note_has(fb, "pid 1799853"), "VectorEngine138 is read as the vector-engine pass");
    feedback_destroy(&fb);
}

Test(unitrace, old_format_rows_parse_with_their_trailing_comma)
{
    const char *csv = "== Kernel Metrics ==\n\nKernel,Device,SubDeviceId,GpuTime[ns],XVE_STALL[%],\n"
                      "k[SIMD16 {1; 1; 1} {4; 2; 1}],0,0,563720,0.00162064,\n";
    pf_error_t err;
    unitrace_table_t *t = unitrace_table_parse("old", csv, strlen(csv), &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_expect_eq(unitrace_table_columns(t), 5, "the empty trailing column is dropped");
    cr_expect_eq(unitrace_table_rows(t), 1);
    cr_expect_float_eq(unitrace_table_value(t, 0, "XVE_STALL[%]"), 0.00162064, 1e-12);
    cr_expect(!unitrace_table_sampling(t));
    unitrace_table_destroy(&t);
}

Test(unitrace, quoted_names_with_commas_and_the_seed_fixture)
{
    /* KernelFoundry's own test data (tests/test_profiler_feedback.py). */
    const char *cb = "GlobalInstanceId,Kernel,GpuTime[ns],SLM_BANK_CONFLICT_COUNT[events],"
                     "XVE_INST_EXECUTED_ALU0_ALL[events],GPU_MEMORY_BYTE_READ_RATE[GBpS],"
                     "GPU_MEMORY_BYTE_WRITE_RATE[GBpS],GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],"
                     "SLM_BYTE_READ[bytes],SLM_BYTE_WRITE[bytes],XVE_STALL[%],XVE_INST_EXECUTED_ALU1_ALL[events],"
                     "XVE_INST_EXECUTED_ALU2_ALL[events]\n1,kernel_a[simd=8x1x1],100,1,10,1,1,100,40,1,1,1,10,10\n";
    const char *timeline = "{\"traceEvents\": [{\"name\": \"ittapi::model run loop::task.py::Test::test_benchmark[512]\", "
                           "\"ts\": 100, \"dur\": 50}, {\"name\": \"kernel_a\", \"ts\": 110, \"dur\": 10, \"args\": {\"id\": 1}}]}";
    unitrace_job_t *job = unitrace_job_new();
    pf_error_t err;
    cr_assert_eq(unitrace_job_add(job, "unitrace.001", "ComputeBasic.metrics.1", cb, strlen(cb), &err), PF_OK, "%s", err.msg);
    cr_assert_eq(unitrace_job_add(job, "unitrace.001", "timeline.json", timeline, strlen(timeline), &err), PF_OK, "%s", err.msg);
    analysis_options_t options;
    analysis_options_default(&options);
    unitrace_device_t device = {"Intel(R) Core(TM) Ultra 7 258V", "0x7d55", "Intel(R) Core(TM) Ultra 7 258V"};
    feedback_t *fb = unitrace_analyze(job, &options, &device);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->name, "kernel_a");
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->grid, "[simd=8x1x1]");
    cr_expect_str_eq(feedback_kernel_const(fb, 0)->segment, "1/1 task.py::Test::test_benchmark[512]");
    cr_expect_str_eq(feedback_device(fb), "Intel Core Ultra 7 258V (Arc 140V)");
    char *text = render_text(fb, 0);
    cr_expect_not_null(strstr(text, "benchmark 1/1 task.py::Test::test_benchmark[512]"));
    free(text);
    feedback_destroy(&fb);
    unitrace_job_destroy(&job);

    const char *quoted = "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns]\n\"f(int, float)[SIMD32 {1; 1; 1} {32; 1; 1}]\",7,0,500\n\n";
    unitrace_table_t *t = unitrace_table_parse("q", quoted, strlen(quoted), &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_expect_str_eq(unitrace_table_kernel(t, 0), "f(int, float)[SIMD32 {1; 1; 1} {32; 1; 1}]");
    unitrace_table_destroy(&t);
}

Test(unitrace_bad_input, malformed_files_get_clear_errors_never_crashes)
{
    pf_error_t err;
    cr_expect_null(unitrace_table_parse("x", "", 0, &err));
    cr_expect_not_null(strstr(err.msg, "no unitrace metrics header"), "%s", err.msg);
    const char *no_time = "Kernel,GlobalInstanceId\n\"k\",1\n";
    cr_expect_null(unitrace_table_parse("x", no_time, strlen(no_time), &err));
    cr_expect_not_null(strstr(err.msg, "GpuTime"), "%s", err.msg);
    cr_expect_null(unitrace_timeline_parse("t.json", "{not json", 9, &err));
    cr_expect_not_null(strstr(err.msg, "not a chrome trace"), "%s", err.msg);
    cr_expect_null(unitrace_timeline_parse("t.json", "[1,2]", 5, &err));

    size_t big = 10u << 20;
    char *field = malloc(big + 64);
    int n = snprintf(field, 64, "Kernel,GpuTime[ns]\n\"");
    memset(field + n, 'k', big);
    memcpy(field + n + big, "\",5\n", 5);
    cr_expect_null(unitrace_table_parse("big", field, strlen(field), &err));
    cr_expect_eq(err.code, PF_ETOOBIG);
    free(field);

    /* Bit flips over a real-format table and timeline: any outcome but a crash. */
    FILE *f = fopen(B580 "trace.metrics.41001", "rb");
    cr_assert_not_null(f);
    char *bytes = malloc(1 << 16);
    size_t len = fread(bytes, 1, 1 << 16, f);
    fclose(f);
    unsigned seed = 7;
    for (int round = 0; round < 100; round++) {
        char *copy = malloc(len);
        memcpy(copy, bytes, len);
        for (int i = 0; i < 16; i++) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % len] ^= (char) (1u << (seed % 8));
        }
        unitrace_job_t *job = unitrace_job_new();
        if (unitrace_job_add(job, "unitrace.000", "trace.metrics.1", copy, len, &err) == PF_OK) {
            analysis_options_t options;
            analysis_options_default(&options);
            feedback_t *fb = unitrace_analyze(job, &options, NULL);
            char *json = render_json(fb, false);
            json_t *parsed = json_loads(json, 0, NULL);
            cr_expect_not_null(parsed, "round %d: JSON stays valid", round);
            json_decref(parsed);
            free(json);
            feedback_destroy(&fb);
        }
        unitrace_job_destroy(&job);
        free(copy);
    }
    free(bytes);
}

Test(select, the_seed_table_with_its_defaults)
{
    const char *a;
    pf_error_t err;
    cr_assert_eq(select_analyzer("cuda", "sm_90", NULL, &a, &err), PF_OK);
    cr_expect_str_eq(a, "ncu");
    cr_assert_eq(select_analyzer("sycl", "bmg", NULL, &a, &err), PF_OK);
    cr_expect_str_eq(a, "unitrace");
    cr_assert_eq(select_analyzer("ocl", "bmg", NULL, &a, &err), PF_OK);
    cr_expect_str_eq(a, "vtune", "OpenCL defaults to VTune");
    cr_assert_eq(select_analyzer("OCL", "bmg", "unitrace", &a, &err), PF_OK);
    cr_expect_str_eq(a, "unitrace_sampling");
    cr_assert_eq(select_analyzer("pytorch", "Hopper", NULL, &a, &err), PF_OK);
    cr_expect_str_eq(a, "ncu");
    cr_assert_eq(select_analyzer("triton", "lnl", NULL, &a, &err), PF_OK);
    cr_expect_str_eq(a, "unitrace", "Triton on an Intel GPU");
    cr_assert_eq(select_analyzer("sycl", "bmg", "VTune", &a, &err), PF_OK);
    cr_expect_str_eq(a, "vtune");
}

Test(select, an_unknown_pair_lists_what_the_language_has)
{
    const char *a;
    pf_error_t err;
    cr_expect_eq(select_analyzer("sycl", "bmg", "ncu", &a, &err), PF_EBADINPUT);
    cr_expect_str_eq(err.msg, "unknown profiler 'ncu' for language 'sycl'. Available profilers for "
                              "'sycl': ['unitrace', 'vtune']");
    cr_expect_eq(select_analyzer("fortran", NULL, NULL, &a, &err), PF_EBADINPUT);
    cr_expect_not_null(strstr(err.msg, "unknown language"));
    cr_expect(select_is_cuda_arch("sm_90") && select_is_cuda_arch("A100") && select_is_cuda_arch("ampere"));
    cr_expect(!select_is_cuda_arch("bmg") && !select_is_cuda_arch("pvc") && !select_is_cuda_arch(NULL));
    cr_expect_str_eq(select_reference_language("sycl", NULL), "pytorch");
    cr_expect_str_eq(select_reference_language("sycl", "sycl"), "sycl");
    cr_expect(select_pass_is_reference("ncu_ref.000") && !select_pass_is_reference("ncu.000"));
}

Test(roofs, lookup_by_cpu_pci_or_name_ignoring_case_and_revision)
{
    const roof_t *r = roofs_lookup_worker(NULL, NULL, "Intel(R) Core(TM) Ultra 7 258V");
    cr_assert_not_null(r);
    cr_expect_float_eq(r->alu_inst_per_ns[0], 124.8, 1e-9);
    r = roofs_lookup_worker("unknown", "0xE20B", NULL);
    cr_assert_not_null(r);
    cr_expect_float_eq(r->dram_gbps, 456, 1e-9);
    r = roofs_lookup_worker("INTEL CORPORATION BATTLEMAGE G21 [ARC B580] (REV 01)", NULL, NULL);
    cr_assert_not_null(r);
    cr_expect_str_eq(r->name, "Intel Arc B580");
    cr_expect_eq(roofs_lookup_worker("NVIDIA H200", NULL, NULL)->units, 132);
    cr_expect_null(roofs_lookup_worker("Mystery GPU", "0x1234", "Some CPU"));
    int count;
    const roof_t *table = roofs_table(&count);
    for (int i = 0; i < count; i++) {
        cr_expect_gt(table[i].dram_gbps, 0, "%s", table[i].name);
        cr_expect_gt(strlen(table[i].source), 10, "%s has a source", table[i].name);
    }
}

Test(reference, the_reference_profile_is_summarised_beside_the_candidate)
{
    analyzer_file_t files[7];
    memset(files, 0, sizeof files);
    for (size_t i = 0; i < 6; i++)
        files[i].path = s_b580_files[i];
    files[6].path = PF_FIXTURE_DIR "/ncu/h200/raw_metrics.csv";
    files[6].reference = true;
    analyzer_input_t input = {.files = files, .count = 7, .device = "Arc B580", .language = "sycl", .gpu_arch = "bmg"};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    const char *profiler;
    size_t kernels;
    double time;
    cr_assert(feedback_reference(fb, &profiler, &kernels, &time));
    cr_expect_str_eq(profiler, "ncu");
    cr_expect_eq(kernels, 9);
    cr_expect_gt(time, 1e7);
    cr_expect_str_eq(feedback_profiler(fb), "unitrace");
    feedback_destroy(&fb);
}

Test(select, vtune_files_are_detected_and_ocl_defaults_to_vtune)
{
    analyzer_file_t files[1] = {{.path = INTEL "vtune/kf_pass1_full.tsv"}};
    cr_expect_str_eq(analyzer_detect(files, 1), "vtune");
    analyzer_input_t input = {.files = files, .count = 1, .language = "ocl", .gpu_arch = "bmg"};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s", err.msg);
    cr_expect_str_eq(feedback_profiler(fb), "vtune");
    cr_expect_gt(feedback_kernel_count(fb), 0);
    feedback_destroy(&fb);
    input.profiler = "ncu";
    cr_expect_eq(analyzer_run(&input, &options, &fb, &err), PF_EBADINPUT, "ncu is no OpenCL profiler");
    cr_expect_not_null(strstr(err.msg, "Available profilers for 'ocl'"), "%s", err.msg);
}

/* ----- the models of issue #14 (docs/intel.md, "Models") --------------------- */

static const fb_finding_t *s_category(const feedback_t *fb, size_t kernel, const char *category)
{
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        if (feedback_finding(fb, i)->kernel == kernel && strcmp(feedback_finding(fb, i)->category, category) == 0)
            return feedback_finding(fb, i);
    return NULL;
}

/* Issue #14's sampling case: 60% of SLM accesses conflict. Counting bytes SLM
 * is at 62% and ALU0 at 66%, so the old verdict was compute-bound; with a
 * replay per conflict SLM is busy 99% of the time, and removing the replays
 * (0.6/1.6 of its work) drops the busiest unit from 99% to ALU0's 66%. */
Test(unitrace_models, sampled_conflicts_on_a_busy_slm_come_first)
{
    const char *paths[] = {INTEL "unitrace_ocl_sampling_slm/trace.metrics.53001",
                           INTEL "unitrace_ocl_sampling_slm/trace.metrics.53002",
                           INTEL "unitrace_ocl_sampling_slm/trace.metrics.53003"};
    feedback_t *fb = s_run(paths, 3, "Arc B580", false);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    const fb_finding_t *first = s_first(fb, "slm_tile_reduce", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "slm_bank_conflicts", "%s", first->title);
    cr_expect(first->primary);
    cr_expect_str_eq(first->source, "profeed:slm_replays");
    cr_expect_float_eq(first->importance, 99.2 - 66, 0.5);
    cr_expect_float_eq(first->speedup, first->importance, 1e-9);
    const fb_finding_t *bound = s_category(fb, 0, "slm_bound");
    cr_assert_not_null(bound, "the SLM bound is still said, with its headroom");
    cr_expect_lt(bound->importance, 2);
    feedback_destroy(&fb);
}

/* In a latency-bound kernel (transpose_slm: nothing above 48%, XVEs stalled
 * 48%) the replays lengthen the SLM accesses the threads wait on: gain =
 * 48% stalled x SLM's 96% share of the bytes x 0.6/1.6 of SLM time. That
 * accounts for the waiting, so no generic latency finding is added. */
Test(unitrace_models, conflicts_in_a_latency_bound_kernel_are_sized_by_the_waiting)
{
    feedback_t *fb = s_run(s_b580_files, 6, "Arc B580", false);
    const fb_finding_t *f = s_first(fb, "transpose_slm", "test_benchmark[256]");
    cr_assert_not_null(f);
    cr_expect_str_eq(f->category, "slm_bank_conflicts");
    cr_expect_str_eq(f->source, "profeed:slm_replay_latency");
    cr_expect_float_eq(f->importance, 100 * 0.48 * (2700.0 / 2810.0) * (0.6 / 1.6), 0.3);
    for (size_t i = 0; i < feedback_finding_count(fb); i++)
        cr_expect_str_neq(feedback_finding(fb, i)->category, "latency_bound");
    feedback_destroy(&fb);
}

/* A job from inline tables: ComputeBasic, VectorEngineProfile and optionally
 * VectorEngineStalls, one row each. */
static feedback_t *s_inline3(const char *cb, const char *vep, const char *ves)
{
    unitrace_job_t *job = unitrace_job_new();
    pf_error_t err;
    cr_assert_eq(unitrace_job_add(job, "unitrace.000", "trace.metrics.1", cb, strlen(cb), &err), PF_OK, "%s", err.msg);
    cr_assert_eq(unitrace_job_add(job, "unitrace.001", "trace.metrics.2", vep, strlen(vep), &err), PF_OK, "%s", err.msg);
    if (ves)
        cr_assert_eq(unitrace_job_add(job, "unitrace.002", "trace.metrics.3", ves, strlen(ves), &err), PF_OK, "%s",
                     err.msg);
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = unitrace_analyze(job, &options, NULL); /* no roofs: the counters' own utilizations */
    unitrace_job_destroy(&job);
    return fb;
}

static feedback_t *s_inline(const char *cb, const char *vep) { return s_inline3(cb, vep, NULL); }

#define CB_COLS "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],XVE_ACTIVE[%],XVE_STALL[%],"             \
                "XVE_INST_EXECUTED_ALU0_ALL[events],XVE_INST_EXECUTED_ALU1_ALL[events],"                  \
                "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%],XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%],"    \
                "XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]\n"
#define VEP_COLS "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],XVE_INST_EXECUTED_ALU0_ALL[events],"    \
                 "XVE_INST_EXECUTED_ALU1_ALL[events],XVE_INST_EXECUTED_ALU2_ALL[events],"                 \
                 "XVE_INST_EXECUTED_FP16[events],XVE_INST_EXECUTED_FP32[events],"                         \
                 "XVE_INST_EXECUTED_FP64[events],XVE_INST_EXECUTED_XMX_INT8[events],"                     \
                 "XVE_THREADS_OCCUPANCY_ALL[%]\n"

/* 20% occupancy, stalled 45%, nothing above 20% busy: more threads fill the
 * 75% of the time no pipe issues, up to min(100/20, 80/20) = 4x. The old
 * verdict was latency_bound (stalled >= 40%) with occupancy second. */
Test(unitrace_models, low_occupancy_in_a_latency_bound_kernel_comes_first)
{
    const char *cb = CB_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,25,45,1000,500,20,10,0\n\n";
    const char *vep = VEP_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,1000,500,0,0,1000,0,0,20\n\n";
    feedback_t *fb = s_inline(cb, vep);
    cr_assert_eq(feedback_kernel_count(fb), 1);
    const fb_finding_t *first = s_first(fb, "k", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "low_occupancy", "%s", first->title);
    cr_expect_str_eq(first->source, "profeed:threads_in_flight");
    cr_expect_float_eq(first->importance, 100 * 0.75 * 0.75, 1e-6);
    cr_expect_null(s_category(fb, 0, "latency_bound"), "occupancy accounts for the waiting");
    feedback_destroy(&fb);
}

/* FP64 is half of ALU1's instructions on an ALU1 at 80%: in FP32 those slots
 * move to ALU0 (10% -> 50%) and ALU1 drops to 40%, so the busiest unit drops
 * from 80% to 50%: a 30% gain, ahead of the bound's 20% headroom. */
Test(unitrace_models, fp64_on_a_busy_alu1_is_sized_by_the_pipe_drop)
{
    const char *cb = CB_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,90,5,1000,8000,10,80,0\n\n";
    const char *vep = VEP_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,1000,8000,0,0,1000,4000,0,90\n\n";
    feedback_t *fb = s_inline(cb, vep);
    const fb_finding_t *first = s_first(fb, "k", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "fp64", "%s", first->title);
    cr_expect_str_eq(first->source, "profeed:pipe_work");
    cr_expect_float_eq(first->importance, 30, 1e-6);
    const fb_finding_t *bound = s_category(fb, 0, "compute_bound");
    cr_assert_not_null(bound);
    cr_expect_float_eq(bound->importance, 20, 1e-6, "ALU1's headroom");
    feedback_destroy(&fb);
}

#define VES_COLS "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],XVE_STALL[%],XVE_STALL_SBID[%],"            \
                 "XVE_STALL_SENDWR[%],XVE_STALL_ALUWR[%],XVE_STALL_PIPESTALL[%],XVE_STALL_BARRIER[%],"    \
                 "XVE_STALL_INSTFETCH[%],XVE_STALL_CONTROL[%],XVE_STALL_OTHER[%]\n"

/* VectorEngineStalls splits XVE_STALL: a latency-bound kernel stalled 50% of
 * the time, 60% of it at barriers, gains 30% from fewer barriers, ahead of
 * the generic latency verdict the kernel got before the group was read. */
Test(unitrace_models, barrier_stalls_in_a_latency_bound_kernel_are_sized_by_their_time)
{
    const char *cb = CB_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,40,50,1000,500,30,10,0\n\n";
    const char *vep = VEP_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,1000,500,0,0,1000,0,0,90\n\n";
    const char *ves = VES_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,50,10,5,3,2,30,0,0,0\n\n";
    feedback_t *fb = s_inline3(cb, vep, ves);
    const fb_finding_t *first = s_first(fb, "k", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "barrier_stalls", "%s", first->title);
    cr_expect_str_eq(first->source, "profeed:stall_time");
    cr_expect_float_eq(first->importance, 50 * 30.0 / 50, 1e-6);
    cr_expect_null(s_category(fb, 0, "latency_bound"), "the barriers account for the waiting");
    const fb_finding_t *send = s_category(fb, 0, "memory_latency");
    cr_assert_not_null(send);
    cr_expect_float_eq(send->importance, 50 * 15.0 / 50, 1e-6, "SBID + SENDWR");
    feedback_destroy(&fb);
}

/* On a compute-bound kernel (ALU1 80%) waits on a busy pipe are the bound
 * showing through: evidence on the bound, not a finding; waits on sends are
 * a cause, less the 80% the pipe covers. */
Test(unitrace_models, pipe_stalls_on_a_compute_bound_kernel_are_its_symptom)
{
    const char *cb = CB_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,85,15,1000,8000,10,80,0\n\n";
    const char *vep = VEP_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,1000,8000,0,0,1000,0,0,90\n\n";
    const char *ves = VES_COLS "\"k[SIMD16 {64; 1; 1} {64; 1; 1}]\",1,0,100000,15,5,0,5,20,0,0,0,0\n\n";
    feedback_t *fb = s_inline3(cb, vep, ves);
    const fb_finding_t *first = s_first(fb, "k", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "compute_bound");
    cr_expect(s_evidence_has(first, "a busy pipe 20.0% (the bound showing through)"));
    cr_expect_null(s_category(fb, 0, "dependency_stalls"));
    feedback_destroy(&fb);
}

/* The real PVC row: one work-group of 4 x 2 work-items on a 128-Xe-core Max
 * 1550. It read low_occupancy (0% of the thread slots); more threads per
 * core cannot help when 127 cores have no work-group at all. */
Test(unitrace_models, a_grid_smaller_than_the_gpu_is_a_small_grid)
{
    const char *paths[] = {INTEL "unitrace_pvc/trace.metrics.1799860", INTEL "unitrace_pvc/trace.metrics.1799853"};
    feedback_t *fb = s_run(paths, 2, "Intel(R) Data Center GPU Max 1550", false);
    const fb_finding_t *first = s_first(fb, "binary_test", NULL);
    cr_assert_not_null(first);
    cr_expect_str_eq(first->category, "small_grid", "%s", first->title);
    cr_expect_str_eq(first->source, "profeed:idle_cores");
    cr_expect_float_eq(first->importance, 100 * (1 - 1.0 / 128), 1e-6);
    cr_expect_null(s_category(fb, 0, "low_occupancy"), "the launch, not the occupancy, is the limit");
    feedback_destroy(&fb);
}

/* The close call (close_call.h) of a unitrace kernel: its columns read
 * again as other collections could read them (unitrace_view_t's noise). An
 * ALU0 a third of a point over the 60% at which a unit bounds the kernel is
 * one; the same kernel at 78% is not. */
Test(unitrace_models, a_pipe_on_the_busy_line_is_a_close_call_and_one_far_from_it_is_not)
{
    static const char *const alu0[] = {"60.3", "78.0"};
    for (size_t i = 0; i < 2; i++) {
        char cb[1024];
        snprintf(cb, sizeof cb, "%s\"k[SIMD16 {65536; 1; 1} {64; 1; 1}]\",1,0,100000,90,5,6000,1000,%s,10,0\n\n",
                 CB_COLS, alu0[i]);
        const char *vep = VEP_COLS "\"k[SIMD16 {65536; 1; 1} {64; 1; 1}]\",1,0,100000,6000,1000,0,0,6000,0,0,90\n\n";
        feedback_t *fb = s_inline(cb, vep);
        const fb_kernel_t *k = feedback_kernel_const(fb, 0);
        cr_assert_str_eq(k->bottleneck, "compute_bound", "ALU0 at %s%%", alu0[i]);
        cr_assert_str_eq(k->bottleneck_unit, "alu0", "the pipe, as the ncu analysis names it");
        cr_assert_eq(k->close_of, NOISE_READINGS, "every kernel with a verdict is judged");
        cr_assert_eq(test_close_readings(k), k->close_of, "every reading is counted once");
        char *text = render_text(fb, 0);
        if (i == 0) {
            cr_assert_gt(k->close_count, 0, "60.3%% is within the noise of the line: %s", text);
            cr_assert(strstr(text, "Close call: with the counters moved by run-to-run noise (1% one sigma)"), "%s",
                      text);
            cr_assert(strstr(text, "rather than compute_bound:alu0"), "%s", text);
        } else {
            cr_assert_eq(k->close_same, NOISE_READINGS, "78%% is far from every line: %s", text);
        }
        free(text);
        feedback_destroy(&fb);
    }
}
