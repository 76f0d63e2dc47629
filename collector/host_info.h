/* host_info: what the collector tells about its machine, read from the
 * host's own tools: `nvidia-smi --query-gpu=...` (GPU name, compute
 * capability, driver, max SM and memory clocks, memory), `ncu --version`,
 * /proc/cpuinfo's model name. The parsers take the tools' text so tests can
 * feed captured output; a field a tool leaves out ("[N/A]") stays unset.
 * nvidia-smi has no SM count; host_info_cuda_sm_count() asks the CUDA driver
 * for it, when the driver library is there. */
#ifndef HOST_INFO_H
#define HOST_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The nvidia-smi query the parser expects, in this order. */
#define HOST_INFO_NVIDIA_SMI_QUERY "--query-gpu=name,compute_cap,driver_version,clocks.max.sm,clocks.max.mem,memory.total"

typedef struct {
    char name[256];               /* "NVIDIA H200" */
    char compute_capability[16];  /* "9.0" */
    char arch[32];                /* "sm_90" */
    char driver_version[64];
    uint32_t sm_clock_mhz, mem_clock_mhz;  /* 0: unknown */
    uint64_t memory_bytes;                 /* 0: unknown */
    uint32_t sm_count;                     /* 0: unknown */
} host_gpu_t;

/* Parses `nvidia-smi HOST_INFO_NVIDIA_SMI_QUERY --format=csv,noheader`, one
 * GPU a line, into at most `max` entries; lines that do not parse (no name,
 * no "major.minor" capability) are skipped. Returns the count. */
size_t host_info_parse_nvidia_smi(const char *text, host_gpu_t *gpus, size_t max);

/* The version after `marker` (the profiler table's version_marker) in what a
 * tool's version flag printed: "Version 2025.3.1.0 (build 36398880)" with
 * marker "Version " -> "2025.3.1.0" (digits and dots). False when there is
 * none, or it does not fit `cap`. */
bool host_info_parse_version(const char *text, const char *marker, char *out, size_t cap);

/* The first "model name : ..." of /proc/cpuinfo. */
bool host_info_parse_cpu_model(const char *cpuinfo, char *out, size_t cap);

/* The number of SMs of CUDA device `ordinal`, from the driver (libcuda.so.1,
 * opened at run time so the collector neither links nor needs it). False when
 * there is no driver or no such device. */
bool host_info_cuda_sm_count(int ordinal, uint32_t *sm_count);

#endif
