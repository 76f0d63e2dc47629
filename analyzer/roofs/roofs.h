/* roofs: published peak rates of GPUs, for rooflines when a capture does not
 * carry its own peaks (the `.peak_sustained` metrics and device attributes of
 * a full Nsight Compute set are preferred; see ncu_analyze.c). */
#ifndef ROOFS_H
#define ROOFS_H

typedef struct {
    const char *name;          /* "NVIDIA H200 SXM" */
    const char *match;         /* case-insensitive substring of the device name */
    int sm_count;
    double fp32_tflops;        /* non-tensor FP32 (FMA = 2 FLOP) */
    double fp64_tflops;        /* non-tensor FP64 */
    double tensor_bf16_tflops; /* dense BF16 tensor, FP32 accumulate */
    double dram_gbps;          /* DRAM bandwidth, GB/s (1e9 bytes) */
    const char *source;        /* where the numbers come from */
} roof_t;

/* The entry whose match string occurs in `device` (e.g. "NVIDIA H200"), or NULL. */
const roof_t *roofs_lookup(const char *device);

/* All entries, for listing; `*count` receives their number. */
const roof_t *roofs_table(int *count);

#endif
