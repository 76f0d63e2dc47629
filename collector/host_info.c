#include "host_info.h"

#include <dlfcn.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies [start, end) without surrounding blanks; false when it is empty or
 * one of nvidia-smi's placeholders ("[N/A]", "[Not Supported]"). */
static bool s_field(const char *start, const char *end, char *out, size_t cap)
{
    while (start < end && isspace((unsigned char) *start))
        start++;
    while (end > start && isspace((unsigned char) end[-1]))
        end--;
    size_t len = (size_t) (end - start);
    if (len == 0 || *start == '[' || len >= cap)
        return false;
    memcpy(out, start, len);
    out[len] = '\0';
    return true;
}

/* "1980 MHz" -> 1980, "143771 MiB" -> its bytes; false for anything else. */
static bool s_number(const char *text, const char *unit, uint64_t *value)
{
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno != 0 || *text == '-')
        return false;
    while (*end == ' ')
        end++;
    if (strcmp(end, unit) != 0)
        return false;
    *value = v;
    return true;
}

static bool s_parse_line(const char *line, size_t len, host_gpu_t *gpu)
{
    /* Six comma-separated fields; the name is whatever comes before the last
     * five, so a name with a comma in it still parses. */
    const char *cut[5];
    size_t found = 0;
    for (size_t i = len; i > 0 && found < 5; i--) {
        if (line[i - 1] == ',')
            cut[found++] = line + i - 1;
    }
    if (found < 5)
        return false;
    /* cut[4] ends the name, cut[3] the capability, ... cut[0] the mem clock. */
    memset(gpu, 0, sizeof *gpu);
    if (!s_field(line, cut[4], gpu->name, sizeof gpu->name) ||
        !s_field(cut[4] + 1, cut[3], gpu->compute_capability, sizeof gpu->compute_capability))
        return false;
    int major = 0, minor = 0;
    char extra;
    if (sscanf(gpu->compute_capability, "%d.%d%c", &major, &minor, &extra) != 2 || major < 1 || major > 99 ||
        minor < 0 || minor > 9)
        return false;
    snprintf(gpu->arch, sizeof gpu->arch, "sm_%d%d", major, minor);
    s_field(cut[3] + 1, cut[2], gpu->driver_version, sizeof gpu->driver_version);
    char text[64];
    uint64_t v;
    if (s_field(cut[2] + 1, cut[1], text, sizeof text) && s_number(text, "MHz", &v) && v <= UINT32_MAX)
        gpu->sm_clock_mhz = (uint32_t) v;
    if (s_field(cut[1] + 1, cut[0], text, sizeof text) && s_number(text, "MHz", &v) && v <= UINT32_MAX)
        gpu->mem_clock_mhz = (uint32_t) v;
    if (s_field(cut[0] + 1, line + len, text, sizeof text) && s_number(text, "MiB", &v) && v < (UINT64_C(1) << 44))
        gpu->memory_bytes = v * 1024 * 1024;
    return true;
}

size_t host_info_parse_nvidia_smi(const char *text, host_gpu_t *gpus, size_t max)
{
    size_t n = 0;
    for (const char *line = text; line && *line && n < max;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t) (nl - line) : strlen(line);
        if (len > 0 && line[len - 1] == '\r')
            len--;
        if (s_parse_line(line, len, &gpus[n]))
            n++;
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

bool host_info_parse_version(const char *text, const char *marker, char *out, size_t cap)
{
    const char *v = text && marker && *marker ? strstr(text, marker) : NULL;
    if (!v)
        return false;
    v += strlen(marker);
    size_t len = strspn(v, "0123456789.");
    if (len == 0 || len >= cap)
        return false;
    memcpy(out, v, len);
    out[len] = '\0';
    return true;
}

bool host_info_parse_cpu_model(const char *cpuinfo, char *out, size_t cap)
{
    for (const char *line = cpuinfo; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t) (nl - line) : strlen(line);
        if (len > 10 && strncmp(line, "model name", 10) == 0) {
            const char *colon = memchr(line, ':', len);
            if (colon && s_field(colon + 1, line + len, out, cap))
                return true;
        }
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* The driver API's signatures and the attribute asked for (cuda.h's values,
 * stable since CUDA 2.0), so no CUDA header is needed to build. */
typedef int (*cu_init_fn)(unsigned int);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_device_get_attribute_fn)(int *, int, int);
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16

bool host_info_cuda_sm_count(int ordinal, uint32_t *sm_count)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return false;
    bool ok = false;
    /* dlsym returns data pointers; POSIX guarantees they convert to functions. */
    cu_init_fn cu_init;
    cu_device_get_fn cu_device_get;
    cu_device_get_attribute_fn cu_attribute;
    *(void **) &cu_init = dlsym(lib, "cuInit");
    *(void **) &cu_device_get = dlsym(lib, "cuDeviceGet");
    *(void **) &cu_attribute = dlsym(lib, "cuDeviceGetAttribute");
    int device = 0, count = 0;
    if (cu_init && cu_device_get && cu_attribute && cu_init(0) == 0 &&
        cu_device_get(&device, ordinal) == 0 &&
        cu_attribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) == 0 && count > 0) {
        *sm_count = (uint32_t) count;
        ok = true;
    }
    dlclose(lib);
    return ok;
}
