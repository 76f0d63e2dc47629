#include "roofs.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Dense (no sparsity) peaks from the vendors' datasheets and whitepapers.
 * Order matters: a more specific match comes before a more general one. */
static const roof_t s_roofs[] = {
    {"NVIDIA H200 SXM", "H200", 132, 67.0, 34.0, 989.4, 4800,
     "NVIDIA H200 Tensor Core GPU datasheet (2024); ncu on an H200 measures 2 x 16,896 FFMA/cycle "
     "x 1.98 GHz = 66.9 TFLOP/s and 1,504 B/cycle x 3.2 GHz = 4.81 TB/s"},
    {"NVIDIA H100 PCIe", "H100 PCIe", 114, 51.2, 25.6, 756.0, 2000,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), PCIe column"},
    {"NVIDIA H100 NVL", "H100 NVL", 132, 60.0, 30.0, 835.0, 3900,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), NVL column (per GPU)"},
    {"NVIDIA H100 SXM", "H100", 132, 67.0, 34.0, 989.4, 3350,
     "NVIDIA H100 Tensor Core GPU datasheet (2023), SXM column"},
    {"NVIDIA A100 SXM4 40GB", "A100-SXM4-40GB", 108, 19.5, 9.7, 312.0, 1555,
     "NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB SXM column"},
    {"NVIDIA A100 PCIe 40GB", "A100-PCIE-40GB", 108, 19.5, 9.7, 312.0, 1555,
     "NVIDIA A100 Tensor Core GPU datasheet (2021), 40GB PCIe column"},
    {"NVIDIA A100 80GB", "A100", 108, 19.5, 9.7, 312.0, 2039,
     "NVIDIA A100 Tensor Core GPU datasheet (2021), 80GB SXM column"},
    {"NVIDIA L40S", "L40S", 142, 91.6, 1.4, 362.1, 864,
     "NVIDIA L40S datasheet (2023); FP64 is 1/64 of FP32 on AD102"},
    {"NVIDIA L4", "L4", 58, 30.3, 0.5, 121.0, 300,
     "NVIDIA L4 Tensor Core GPU datasheet (2023)"},
    {"NVIDIA B200", "B200", 148, 75.0, 37.0, 2250.0, 8000,
     "NVIDIA DGX B200 datasheet (2024), system figures divided by its 8 GPUs"},
    {"NVIDIA GeForce RTX 4090", "4090", 128, 82.6, 1.3, 165.2, 1008,
     "NVIDIA Ada Lovelace architecture whitepaper v2.1, RTX 4090 column (FP16/BF16 tensor with "
     "FP32 accumulate)"},
};

/* Case-insensitive substring test; device names differ in case across tools. */
static bool s_contains(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);
    for (; *haystack; haystack++) {
        size_t i = 0;
        while (i < n && haystack[i] &&
               tolower((unsigned char) haystack[i]) == tolower((unsigned char) needle[i]))
            i++;
        if (i == n)
            return true;
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

const roof_t *roofs_table(int *count)
{
    *count = (int) (sizeof s_roofs / sizeof s_roofs[0]);
    return s_roofs;
}
