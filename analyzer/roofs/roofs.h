/* roofs: published peak rates of GPUs, for rooflines when a capture does not
 * carry its own peaks (the `.peak_sustained` metrics and device attributes of
 * a full Nsight Compute set are preferred; see ncu_analyze.c).
 *
 * One compiled-in table for NVIDIA and Intel GPUs (roofs.c), each number with
 * its source. Intel entries also carry KernelFoundry-style instruction roofs
 * (instructions per ns per ALU pipe), which is what unitrace's counters
 * measure. Lookup takes what a worker knows: the GPU name, the PCI device id,
 * and for integrated GPUs the CPU model. */
#ifndef ROOFS_H
#define ROOFS_H

typedef enum { ROOF_NVIDIA, ROOF_INTEL } roof_vendor_t;

typedef struct {
    const char *name;          /* "NVIDIA H200 SXM" */
    roof_vendor_t vendor;
    const char *match;         /* case-insensitive substring of the GPU name */
    const char *cpu_match;     /* case-insensitive substring of the CPU model (iGPUs), or NULL */
    const char *pci_ids;       /* comma-separated PCI device ids ("0xe20b"), or NULL */
    int units;                 /* SMs (NVIDIA) or Xe-cores (Intel) */
    double fp32_tflops;        /* non-tensor FP32 (FMA = 2 FLOP) */
    double fp64_tflops;        /* non-tensor FP64; 0 when not native */
    double tensor_bf16_tflops; /* dense BF16 tensor/XMX, FP32 accumulate */
    double dram_gbps;          /* device memory bandwidth, GB/s (1e9 bytes) */
    /* Intel only (0 otherwise): instruction roofs per ALU pipe (ALU0, ALU1,
     * ALU2 = XMX) in instructions per ns, and SLM read + write in bytes per ns. */
    double alu_inst_per_ns[3];
    double slm_bytes_per_ns;
    const char *source;        /* where the numbers come from */
    /* NVIDIA, measured (0 where not): the fewest cycles between two blocks an
     * SM starts, for blocks of up to 512 threads (blocks that do nothing,
     * timed on the GPU: tests/fixtures/ncu/h200-v15/launch_rate.cu). */
    double block_launch_cycles;
    /* NVIDIA, measured (0 where not): the shortest life of a block whose
     * threads each load from DRAM and store, launch to retirement: no SM
     * finishes more than its resident blocks per that many cycles. */
    double block_life_dram_cycles;
    /* NVIDIA, measured (0 where not): a warp load's round trip through an
     * idle memory system, in SM cycles, for one sector and for each sector
     * more a request touches, served by L2 and by DRAM
     * (bench/gpu/latency_probe.cu), and DRAM's ceiling in percent of its
     * peak for reads of scattered sectors (the same probe's random chases). */
    double l2_trip_cycles, l2_trip_cycles_per_sector;
    double dram_trip_cycles, dram_trip_cycles_per_sector;
    double dram_scattered_pct;
} roof_t;

/* The entry whose match string occurs in `device` (e.g. "NVIDIA H200"), or NULL. */
const roof_t *roofs_lookup(const char *device);

/* The entry for a worker: CPU model first (integrated GPUs are named by their
 * CPU), then PCI device id, then GPU name. Any argument may be NULL or empty.
 * Case, spacing and a "(rev NN)" suffix do not matter. */
const roof_t *roofs_lookup_worker(const char *gpu_name, const char *pci_id, const char *cpu_model);

/* All entries, for listing; `*count` receives their number. */
const roof_t *roofs_table(int *count);

#endif
