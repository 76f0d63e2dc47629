// latency_probe: the round-trip time of a global load on this GPU, by the level that serves it
// (a footprint that fits in L2, one that does not), by the sectors one warp request touches
// (1, 4: one 128-byte line, 32: a sector per lane) and by the load on the memory system (warps
// per SM chasing at once). Every warp follows a random cycle: each load's address is the value
// the previous load returned, so one step is one round trip and nothing overlaps it.
//
// Why: profeed's estimate for a fix that removes memory traffic (docs/ncu.md, "Models") takes
// the time warps wait to follow the sectors they request. That holds while the memory system is
// loaded; a request also has a floor, the round trip of an idle system, which no coalescing
// removes. This measures the floor and how the round trip grows with the load.
//
// Build: nvcc -O3 -arch=sm_90 -o latency_probe latency_probe.cu
// Usage: ./latency_probe [steps]   prints one LAT line per case (cycles and ns a step, the
//        request rate and the sector bandwidth the case reached) and exits 0
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(call)                                                                     \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                    cudaGetErrorString(e_));                                         \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__host__ __device__ inline uint32_t s_hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// WIDTH 1: the lanes read the 8 words of one 32-byte cell (one sector a request).
// WIDTH 4: the lanes read the 32 words of one 128-byte cell (four sectors).
// WIDTH 32: each lane chases a cycle of its own over 32-byte cells (32 sectors a request).
// Every word of a cell holds the index of the next cell.
template <int WIDTH>
__global__ void chase(const uint32_t *__restrict__ buf, uint32_t ncell, int steps,
                      long long *cycles, uint32_t *sink, uint32_t seed)
{
    uint32_t lane = threadIdx.x & 31, gid = blockIdx.x * blockDim.x + threadIdx.x, warp = gid >> 5;
    uint32_t p = s_hash((WIDTH == 32 ? gid : warp) ^ seed) % ncell;
    long long t0 = clock64();
    for (int s = 0; s < steps; s++) {
        if (WIDTH == 1)
            p = buf[(size_t)p * 8 + (lane & 7)];
        else if (WIDTH == 4)
            p = buf[(size_t)p * 32 + lane];
        else
            p = buf[(size_t)p * 8];
    }
    long long t1 = clock64();
    if (lane == 0)
        cycles[warp] = t1 - t0;
    if (p == 0xffffffffu) // never: keeps the chain live
        sink[0] = p;
}

// A single random cycle over n cells (Sattolo's algorithm), each cell's words its successor.
static void s_fill(std::vector<uint32_t> &host, uint32_t n, int words)
{
    std::vector<uint32_t> next(n);
    for (uint32_t i = 0; i < n; i++)
        next[i] = i;
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (uint32_t i = n - 1; i > 0; i--) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        uint32_t j = (uint32_t)(r % i);
        std::swap(next[i], next[j]);
    }
    host.resize((size_t)n * words);
    for (uint32_t i = 0; i < n; i++)
        for (int w = 0; w < words; w++)
            host[(size_t)i * words + w] = next[i];
}

struct result_t {
    double cyc_step, ns_step, req_per_us, sector_gbps, clock_ghz;
};

template <int WIDTH>
static result_t s_run(const uint32_t *buf, uint32_t ncell, int warps_per_sm, int sms, int steps,
                      long long *cycles, uint32_t *sink, double clock_ghz)
{
    int block = warps_per_sm == 1 ? 32 : 64;
    int grid = sms * warps_per_sm * 32 / block;
    int warps = grid * block / 32;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    float best = 1e30f;
    // The first run warms the TLBs. Each run starts its chains elsewhere on the cycle (a seed of
    // its own), so a run does not find the cells the run before it left in L2.
    for (int rep = 0; rep < 3; rep++) {
        CK(cudaEventRecord(a));
        chase<WIDTH><<<grid, block>>>(buf, ncell, steps, cycles, sink, s_hash(0x51ed + rep * 7919u));
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (rep > 0)
            best = std::min(best, ms);
    }
    std::vector<long long> host(warps);
    CK(cudaMemcpy(host.data(), cycles, warps * sizeof(long long), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    result_t r;
    r.cyc_step = (double)host[warps / 2] / steps;
    double requests = (double)warps * steps;
    r.req_per_us = requests / (best * 1e3);
    r.sector_gbps = requests * (WIDTH == 1 ? 1 : WIDTH == 4 ? 4 : 32) * 32.0 / (best * 1e6);
    r.clock_ghz = (double)host[warps - 1] / (best * 1e6); // the slowest warp spans the kernel
    r.ns_step = r.cyc_step / (r.clock_ghz > 0.5 ? r.clock_ghz : clock_ghz);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return r;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 1024;
    if (steps < 16) {
        fprintf(stderr, "latency_probe: steps must be 16 or more\n");
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    double clock_ghz = clock_khz / 1e6;
    int sms = prop.multiProcessorCount;
    printf("# %s, %d SMs, L2 %d MB, clock %.2f GHz nominal; ns figures use the clock each case ran at\n", prop.name, sms,
           prop.l2CacheSize >> 20, clock_ghz);
    const size_t footprints_mb[] = {8, 2048};
    const int loads[] = {1, 2, 4, 8, 16, 32, 64};
    long long *cycles;
    uint32_t *sink, *buf;
    CK(cudaMalloc(&cycles, (size_t)sms * 64 * sizeof(long long)));
    CK(cudaMalloc(&sink, 4));
    for (size_t mb : footprints_mb) {
        CK(cudaMalloc(&buf, mb << 20));
        for (int width : {1, 4, 32}) {
            int words = width == 4 ? 32 : 8;
            uint32_t ncell = (uint32_t)((mb << 20) / (words * 4));
            std::vector<uint32_t> host;
            s_fill(host, ncell, words);
            CK(cudaMemcpy(buf, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
            for (int w : loads) {
                result_t r = width == 1    ? s_run<1>(buf, ncell, w, sms, steps, cycles, sink, clock_ghz)
                             : width == 4 ? s_run<4>(buf, ncell, w, sms, steps, cycles, sink, clock_ghz)
                                          : s_run<32>(buf, ncell, w, sms, steps, cycles, sink, clock_ghz);
                printf("LAT footprint_mb=%zu sectors=%d warps_per_sm=%d cyc_step=%.0f ns_step=%.0f "
                       "req_per_us=%.0f sector_GBps=%.0f clock_GHz=%.2f\n",
                       mb, width, w, r.cyc_step, r.ns_step, r.req_per_us, r.sector_gbps, r.clock_ghz);
                fflush(stdout);
            }
        }
        CK(cudaFree(buf));
    }
    printf("latency_probe done\n");
    return 0;
}
