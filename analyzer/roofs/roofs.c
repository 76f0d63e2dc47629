#include "roofs.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Dense (no sparsity) peaks from the vendors' datasheets and whitepapers.
 * Order matters: a more specific match comes before a more general one.
 *
 * Intel instruction roofs follow KernelFoundry's hardware_info.py: ALU0 and
 * ALU1 issue one instruction per XVE per clock (GHz x Xe-cores x 8 XVE), ALU2
 * (XMX) half that. Entries marked "derived" apply that rule to the stated
 * clock and core count; Xe-HPG (A770, Flex) counts its 16 EUs per Xe-core. */
static const roof_t s_roofs[] = {
    {"NVIDIA H200 SXM", ROOF_NVIDIA, "H200", NULL, NULL, 132, 67.0, 34.0, 989.4, 4800, {0}, 0,
     "NVIDIA H200 Tensor Core GPU datasheet (2024); ncu on an H200 measures 2 x 16,896 FFMA/cycle "
     "x 1.98 GHz = 66.9 TFLOP/s and 1,504 B/cycle x 3.2 GHz = 4.81 TB/s",
     /* 540,672 empty blocks: 159.4-160.2 cycles a block per SM for 32 to 512
      * threads, 226 for 1024 (2026-12-02, corpus v15's launch_rate.cu); a
      * copy of one float a thread in 256-thread blocks (8 resident per SM)
      * ran at 198 cycles a block per SM: 8 x 198 cycles a block's life, the
      * shortest measured (512 threads: 4 x 430 = 1,719; 1024: 2 x 957 =
      * 1,914), so larger blocks' floors are understated, never overstated */
     .block_launch_cycles = 160, .block_life_dram_cycles = 1584,
     /* One dependent random chase a warp, 1 to 64 warps a SM (2026-12-03,
      * docs/gpu-validation/2026-12-03-h200/latency_probe.txt): from L2 300,
      * 305 and 355 cycles for 1, 4 and 32 sectors a request, flat until L2's
      * bandwidth; from DRAM 690, 708 and 1134. Random 32-sector requests
      * saturate DRAM at 1.26 TB/s of sectors, 2.5 TB/s of DRAM traffic (L2
      * fetches 64 bytes a missed sector): 52% of its peak, and the random
      * gathers of the corpora ran it at 52%-58% */
     .l2_trip_cycles = 300, .l2_trip_cycles_per_sector = 1.8, .dram_trip_cycles = 690,
     .dram_trip_cycles_per_sector = 14, .dram_scattered_pct = 55},
    {"NVIDIA H100 PCIe", ROOF_NVIDIA, "H100 PCIe", NULL, NULL, 114, 51.2, 25.6, 756.0, 2000, {0}, 0,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe column", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA H100 NVL", ROOF_NVIDIA, "H100 NVL", NULL, NULL, 132, 60.0, 30.0, 835.0, 3900, {0}, 0,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), NVL column (per GPU)", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA H100 SXM", ROOF_NVIDIA, "H100", NULL, NULL, 132, 67.0, 34.0, 989.4, 3350, {0}, 0,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column",
     /* Measured on an H100 80GB HBM3 like the H200 above (2026-12-02,
      * launch_rate.cu, docs/gpu-validation/2026-12-02-h200/launch_rate_h100.txt):
      * 159.0-159.6 cycles a block per SM for 32 to 512 threads, 226 for 1024;
      * the one-float copy in 256-thread blocks ran at 224 cycles a block per SM,
      * 8 resident: 8 x 224 cycles a block's life (512 threads: 4 x 484 = 1,936;
      * 1024: 2 x 1,054 = 2,108) */
     .block_launch_cycles = 159, .block_life_dram_cycles = 1791},
    {"NVIDIA A100 SXM4 40GB", ROOF_NVIDIA, "A100-SXM4-40GB", NULL, NULL, 108, 19.5, 9.7, 312.0, 1555,
     {0}, 0, "NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB SXM column", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA A100 PCIe 40GB", ROOF_NVIDIA, "A100-PCIE-40GB", NULL, NULL, 108, 19.5, 9.7, 312.0, 1555,
     {0}, 0, "NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB PCIe column", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA A100 80GB", ROOF_NVIDIA, "A100", NULL, NULL, 108, 19.5, 9.7, 312.0, 2039, {0}, 0,
     "NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB SXM column", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA L40S", ROOF_NVIDIA, "L40S", NULL, NULL, 142, 91.6, 1.4, 362.1, 864, {0}, 0,
     "NVIDIA L40S datasheet (2023); FP64 is 1/64 of FP32 on AD102", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA L4", ROOF_NVIDIA, "NVIDIA L4", NULL, NULL, 58, 30.3, 0.5, 121.0, 300, {0}, 0,
     "NVIDIA L4 Tensor Core GPU datasheet (2023)", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA B200", ROOF_NVIDIA, "B200", NULL, NULL, 148, 75.0, 37.0, 2250.0, 8000, {0}, 0,
     "NVIDIA DGX B200 datasheet (2024), system figures divided by its 8 GPUs", 0, 0, 0, 0, 0, 0, 0},
    {"NVIDIA GeForce RTX 4090", ROOF_NVIDIA, "4090", NULL, NULL, 128, 82.6, 1.3, 165.2, 1008, {0}, 0,
     "NVIDIA Ada Lovelace architecture whitepaper v2.1, RTX 4090 column (FP16/BF16 tensor with "
     "FP32 accumulate)", 0, 0, 0, 0, 0, 0, 0},

    {"Intel Data Center GPU Max 1550", ROOF_INTEL, "Max 1550", NULL, "0x0bd5", 128, 52.0, 52.0, 839.0,
     3276.8, {1638.4, 1638.4, 819.2}, 0,
     "Intel product specs via KernelFoundry gpu_specs (128 Xe-cores, 1.6 GHz max, 52 TF FP32/FP64, "
     "1678 INT8 TOPS, 3276.8 GB/s HBM2e); instruction roofs derived (1.6 x 128 x 8); SLM roof "
     "not published", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Data Center GPU Max 1100", ROOF_INTEL, "Max 1100", NULL, NULL, 56, 22.0, 22.0, 352.0, 1229,
     {694.4, 694.4, 347.2}, 0,
     "56 Xe-cores (Intel launch material); 1.55 GHz, 22 TF and 1.23 TB/s are unverified estimates; "
     "instruction roofs derived (1.55 x 56 x 8)", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Arc A770", ROOF_INTEL, "A770", NULL, "0x56a0", 32, 17.2, 0, 131.0, 560,
     {1075.2, 1075.2, 537.6}, 0,
     "Intel ark via KernelFoundry gpu_specs (32 Xe-cores, 512 EUs, 2.1 GHz, 262 INT8 TOPS, 560 GB/s "
     "GDDR6); FP32 derived at 2.1 GHz; no native FP64; instruction roofs derived (2.1 x 512 EU)", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Data Center GPU Flex 170", ROOF_INTEL, "Flex 170", NULL, "0x56c0", 32, 16.8, 0, 128.0, 576,
     {1049.6, 1049.6, 524.8}, 0,
     "Intel ark via KernelFoundry gpu_specs (32 Xe-cores, 512 EUs, 2.05 GHz, 576 GB/s GDDR6); "
     "instruction roofs derived (2.05 x 512 EU)", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Arc B580", ROOF_INTEL, "B580", NULL, "0xe20b", 20, 13.67, 1.71, 117.0, 456,
     {456.0, 456.0, 228.0}, 8960,
     "KernelFoundry hardware_info.py roofs (456 GB/s datasheet; 2.85 GHz x 20 x 8 instr/ns; SLM "
     "4480 B/ns each way); FP32/FP64 from fpsbench (13.67 / 1.709 TF)", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Arc B570", ROOF_INTEL, "B570", NULL, NULL, 18, 11.5, 1.4, 92.0, 380, {360.0, 360.0, 180.0},
     0,
     "Intel launch specs (18 Xe2-cores, 2.5 GHz, 10 GB 160-bit 19 Gbps = 380 GB/s); FP32 and "
     "instruction roofs derived (2.5 x 18 x 8)", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Core Ultra 7 268V (Arc 140V)", ROOF_INTEL, "268V", "268V", NULL, 8, 4.1, 0, 33.0, 136.5,
     {128.0, 128.0, 64.0}, 2560,
     "KernelFoundry hardware_info.py roofs (LPDDR5X-8533: 136.5 GB/s; 2.0 GHz x 8 x 8; SLM 1280 B/ns "
     "each way); estimated", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Core Ultra 7 258V (Arc 140V)", ROOF_INTEL, "258V", "258V", "0x64a0", 8, 4.0, 0, 32.0,
     136.5, {124.8, 124.8, 62.4}, 2496,
     "KernelFoundry hardware_info.py roofs (LPDDR5X-8533: 136.5 GB/s; 1.95 GHz x 8 x 8; SLM 1248 B/ns "
     "each way); estimated", 0, 0, 0, 0, 0, 0, 0},
    {"Intel Panther Lake (Arc B390, 12 Xe3-cores)", ROOF_INTEL, "Panther Lake", "Genuine Intel(R) 0000",
     "0xb080,0xb081,0xb082,0xb090,0xb091,0xb092,0xb0a0,0xb0a1,0xb0a2", 12, 7.1, 0, 56.0, 153.6,
     {220.8, 220.8, 110.4}, 4416,
     "KernelFoundry hardware_info.py roofs (LPDDR5X 9600 MT/s x 64 bit x 2 ch = 153.6 GB/s; 2.3 GHz "
     "x 12 x 8; SLM 2208 B/ns each way); estimated", 0, 0, 0, 0, 0, 0, 0},
};

/* Lower-case letters and digits of `text`, other characters dropped, and a
 * trailing "(rev NN)" ignored, so "Intel Corporation Battlemage G21 [Arc B580]
 * (rev 01)" and "arc b580" compare by their words alone. */
static void s_fold(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < cap; p++) {
        if (*p == '(' && strncmp(p, "(rev", 4) == 0)
            break;
        if (isalnum((unsigned char) *p))
            out[n++] = (char) tolower((unsigned char) *p);
    }
    out[n] = '\0';
}

static bool s_contains(const char *haystack, const char *needle)
{
    char h[256], n[128];
    s_fold(haystack, h, sizeof h);
    s_fold(needle, n, sizeof n);
    return n[0] && strstr(h, n) != NULL;
}

/* Whether `pci_id` ("0xE20B", "e20b", "8086:e20b") is one of `list`. */
static bool s_pci_match(const char *list, const char *pci_id)
{
    char want[16];
    const char *id = strrchr(pci_id, ':');
    id = id ? id + 1 : pci_id;
    if (strncmp(id, "0x", 2) == 0 || strncmp(id, "0X", 2) == 0)
        id += 2;
    s_fold(id, want, sizeof want);
    if (!want[0])
        return false;
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t) (comma - p) : strlen(p);
        char item[16];
        snprintf(item, sizeof item, "%.*s", (int) (len > 15 ? 15 : len), p);
        char folded[16];
        s_fold(item + (strncmp(item, "0x", 2) == 0 ? 2 : 0), folded, sizeof folded);
        if (strcmp(folded, want) == 0)
            return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

const roof_t *roofs_lookup(const char *device)
{
    if (!device || !*device)
        return NULL;
    for (size_t i = 0; i < sizeof s_roofs / sizeof s_roofs[0]; i++)
        if (s_contains(device, s_roofs[i].match))
            return &s_roofs[i];
    return NULL;
}

const roof_t *roofs_lookup_worker(const char *gpu_name, const char *pci_id, const char *cpu_model)
{
    size_t n = sizeof s_roofs / sizeof s_roofs[0];
    if (cpu_model && *cpu_model)
        for (size_t i = 0; i < n; i++)
            if (s_roofs[i].cpu_match && s_contains(cpu_model, s_roofs[i].cpu_match))
                return &s_roofs[i];
    if (pci_id && *pci_id)
        for (size_t i = 0; i < n; i++)
            if (s_roofs[i].pci_ids && s_pci_match(s_roofs[i].pci_ids, pci_id))
                return &s_roofs[i];
    return roofs_lookup(gpu_name);
}

const roof_t *roofs_table(int *count)
{
    *count = (int) (sizeof s_roofs / sizeof s_roofs[0]);
    return s_roofs;
}
