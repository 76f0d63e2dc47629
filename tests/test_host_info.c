/* host_info: WorkerInfo from the host's own tools, parsed from their text. */
#include "host_info.h"
#include "profiler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <dlfcn.h>

static char *s_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PF_FIXTURE_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(host_info, nvidia_smi_query_of_the_h200_fills_every_field)
{
    char *text = s_fixture("host/nvidia_smi_h200.txt");
    host_gpu_t gpus[4];
    cr_assert_eq(host_info_parse_nvidia_smi(text, gpus, 4), 1);
    cr_assert_str_eq(gpus[0].name, "NVIDIA H200");
    cr_assert_str_eq(gpus[0].compute_capability, "9.0");
    cr_assert_str_eq(gpus[0].arch, "sm_90");
    cr_assert_str_eq(gpus[0].driver_version, "580.159.04");
    cr_assert_eq(gpus[0].sm_clock_mhz, 1980);
    cr_assert_eq(gpus[0].mem_clock_mhz, 3201);
    cr_assert_eq(gpus[0].memory_bytes, (uint64_t) 143771 * 1024 * 1024);
    free(text);
}

Test(host_info, placeholders_stay_unset_bad_lines_are_skipped_and_names_may_hold_commas)
{
    char *text = s_fixture("host/nvidia_smi_mixed.txt");
    host_gpu_t gpus[8];
    cr_assert_eq(host_info_parse_nvidia_smi(text, gpus, 8), 4);
    cr_assert_str_eq(gpus[2].name, "NVIDIA GeForce RTX 4090");
    cr_assert_str_eq(gpus[2].arch, "sm_89");
    cr_assert_eq(gpus[2].sm_clock_mhz, 0, "[N/A] is unknown, not zero MHz");
    cr_assert_eq(gpus[2].mem_clock_mhz, 10501);
    cr_assert_str_eq(gpus[3].name, "Tesla, Inc. Model X");
    cr_assert_str_eq(gpus[3].arch, "sm_70");
    cr_assert_eq(host_info_parse_nvidia_smi(text, gpus, 1), 1, "bounded by max");
    free(text);
}

Test(host_info, ncu_version_and_cpu_model)
{
    char *env = s_fixture("ncu/h200/env.txt");
    char version[64];
    const char *marker = profiler_by_name("ncu")->version_marker;
    cr_assert(host_info_parse_version(env, marker, version, sizeof version));
    cr_assert_str_eq(version, "2025.3.1.0");
    free(env);
    cr_assert_not(host_info_parse_version("nvcc: NVIDIA (R) Cuda compiler driver\n", marker, version, sizeof version));
    char model[256];
    cr_assert(host_info_parse_cpu_model("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 "
                                        "96-Core Processor\nmodel name\t: other\n",
                                        model, sizeof model));
    cr_assert_str_eq(model, "AMD EPYC 9654 96-Core Processor");
    cr_assert_not(host_info_parse_cpu_model("processor\t: 0\n", model, sizeof model));
}

/* The SM count comes from the CUDA driver when it and a GPU are there;
 * otherwise the answer is "unknown", never a guess. (A machine may carry the
 * driver library without a GPU: then cuInit fails and the count is unknown.) */
Test(host_info, sm_count_from_the_driver_or_unknown)
{
    uint32_t sms = 0;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    bool got = host_info_cuda_sm_count(0, &sms);
    if (!driver)
        cr_expect(!got, "no driver: unknown");
    else
        dlclose(driver);
    cr_expect_eq(got, sms > 0, "a count is given exactly when one was read");
    cr_expect(!host_info_cuda_sm_count(-1, &sms), "no device -1");
}
