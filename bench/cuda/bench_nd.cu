/*
 * bench_nd.cu - gpuhist-nd-bench: N-D histograms of device-resident points (gpuhist_histogramdd
 * with points in device memory: the device map of nd_map.cu, then the 1-D count of the joint
 * slots, or one pass of the fused count, or past its slots the two-pass count of the points)
 * against the device's read ceiling in the same run: f32 pairs into 256 x 256 and 4096 x 4096
 * even bins, u8 RGB pixels into 32 x 32 x 32.
 * Each case: median of --reps calls after two warm-up calls, counts into page-locked host
 * memory ("host counts") or, for 4096 x 4096 also, into device memory ("device counts": the
 * counts stay on the device as CuPy's histogram2d returns them; the call still waits for the
 * nan / out tallies); checked: the counts and tallies add up to the points, and a 1M-point
 * prefix equals the CPU backend's counts on a host copy bit for bit (written where the case
 * writes them).
 * Prints one line per case: where the counts go, ms, GB/s of points read, ratio to the read
 * ceiling, the strategy that counted, and the time of copying the counts alone to the host
 * (which the 16M-bin case with host counts pays).
 * usage: gpuhist-nd-bench [--reps N] [--points-mib M]
 */
#include "gpuhist.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "FATAL: %s: %s\n", #x, cudaGetErrorString(e_));                \
            std::exit(3);                                                                       \
        }                                                                                       \
    } while (0)

static __global__ void gen_f32(float *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t z = (i ^ seed) + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = (float)(uint32_t)(z & 0xFFFFFF) * (1.0f / 16777216.0f);
    }
}

static __global__ void gen_u8(uint8_t *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t z = (i ^ seed) + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        p[i] = (uint8_t)(z >> 56);
    }
}

static __global__ void read_all(const uint4 *p, uint64_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u)
        *sink = acc;
}

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* best of a few grid sizes, median of 10 each: GB/s */
static double read_ceiling(const void *d, uint64_t bytes)
{
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    double best = 0;
    for (int per_sm : {4, 8, 16, 32}) {
        std::vector<double> t;
        for (int r = 0; r < 12; ++r) {
            cudaEvent_t a, b;
            CK(cudaEventCreate(&a));
            CK(cudaEventCreate(&b));
            CK(cudaEventRecord(a));
            read_all<<<sms * per_sm, 256>>>((const uint4 *)d, bytes / 16, sink);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 2)
                t.push_back(ms);
            cudaEventDestroy(a);
            cudaEventDestroy(b);
        }
        best = std::max(best, bytes / (median(t) * 1e-3) / 1e9);
    }
    CK(cudaFree(sink));
    return best;
}

struct Case {
    const char *name;
    gpuhist_dtype dtype;
    uint32_t dims;
    uint32_t bins; /* per axis */
    double lo, hi;
    double target;
    bool device_counts; /* counts into device memory (else page-locked host memory) */
};

int main(int argc, char **argv)
{
    int reps = 10;
    uint64_t mib = 2048;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--points-mib") && i + 1 < argc)
            mib = std::strtoull(argv[++i], nullptr, 10);
        else {
            std::fprintf(stderr, "usage: gpuhist-nd-bench [--reps N] [--points-mib M]\n");
            return 2;
        }
    }
    gpuhist_ctx *ctx = nullptr, *cpu = nullptr;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        std::fprintf(stderr, "gpuhist-nd-bench: no CUDA device: %s\n", gpuhist_last_error(nullptr));
        return 77;
    }
    gpuhist_create(&cpu, GPUHIST_BACKEND_CPU);
    const uint64_t bytes = mib << 20;
    void *d;
    CK(cudaMalloc(&d, bytes));
    const Case cases[] = {
        {"f32 pairs, 256 x 256 even", GPUHIST_F32, 2, 256, 0.0, 1.0, 0.75, false},
        {"f32 pairs, 4096 x 4096 even", GPUHIST_F32, 2, 4096, 0.0, 1.0, 0.25, false},
        {"f32 pairs, 4096 x 4096 even", GPUHIST_F32, 2, 4096, 0.0, 1.0, 0.25, true},
        {"u8 RGB, 32 x 32 x 32 even", GPUHIST_U8, 3, 32, 0.0, 256.0, 0.75, false},
    };
    std::printf("device: %s; %llu MiB of points per case; median of %d calls; counts to "
                "page-locked host memory (host counts) or device memory (device counts)\n",
                gpuhist_device_name(ctx), (unsigned long long)mib, reps);
    int bad = 0;
    for (const Case &c : cases) {
        const size_t sz = gpuhist_dtype_size(c.dtype);
        const uint64_t points = bytes / (sz * c.dims);
        const uint64_t used = points * sz * c.dims;
        if (c.dtype == GPUHIST_F32)
            gen_f32<<<1024, 256>>>((float *)d, points * c.dims, 2026);
        else
            gen_u8<<<1024, 256>>>((uint8_t *)d, points * c.dims, 2026);
        CK(cudaDeviceSynchronize());
        const double ceiling = read_ceiling(d, used & ~(uint64_t)15);
        uint64_t total = 1;
        std::vector<gpuhist_bin_spec> axes;
        for (uint32_t a = 0; a < c.dims; ++a) {
            axes.push_back(gpuhist_bins_even(c.bins, c.lo, c.hi));
            total *= c.bins;
        }
        uint64_t *counts, *dcounts = nullptr;
        CK(cudaMallocHost(&counts, total * 8));
        if (c.device_counts)
            CK(cudaMalloc(&dcounts, total * 8));
        gpuhist_points p = gpuhist_points_interleaved(d, c.dtype, c.dims, points);
        p.location = GPUHIST_MEMORY_DEVICE;
        gpuhist_nd_result r;
        std::vector<double> t;
        const char *strategy = "?";
        for (int i = 0; i < reps + 2; ++i) {
            std::memset(&r, 0, sizeof r);
            r.counts = c.device_counts ? dcounts : counts;
            r.counts_location = c.device_counts ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
            double t0 = now_ms();
            gpuhist_status st = gpuhist_histogramdd(ctx, &p, axes.data(), &r);
            double t1 = now_ms();
            if (st != GPUHIST_OK) {
                std::printf("%-30s | FAILED: %s\n", c.name, gpuhist_last_error(ctx));
                ++bad;
                break;
            }
            strategy = r.strategy;
            if (i >= 2)
                t.push_back(t1 - t0);
        }
        if (t.empty())
            continue;
        /* checks: every point counted once; a 1M-point prefix against the CPU backend */
        if (c.device_counts)
            CK(cudaMemcpy(counts, dcounts, total * 8, cudaMemcpyDeviceToHost));
        uint64_t sum = r.out + r.nan;
        for (uint64_t k = 0; k < total; ++k)
            sum += counts[k];
        bool ok = sum == points;
        if (cpu) {
            uint64_t pre = std::min<uint64_t>(points, 1u << 20);
            std::vector<unsigned char> host(pre * sz * c.dims);
            CK(cudaMemcpy(host.data(), d, host.size(), cudaMemcpyDeviceToHost));
            std::vector<uint64_t> want(total), got(total);
            gpuhist_points hp = gpuhist_points_interleaved(host.data(), c.dtype, c.dims, pre);
            gpuhist_points dp = gpuhist_points_interleaved(d, c.dtype, c.dims, pre);
            dp.location = GPUHIST_MEMORY_DEVICE;
            gpuhist_nd_result a, b;
            std::memset(&a, 0, sizeof a);
            std::memset(&b, 0, sizeof b);
            a.counts = want.data();
            b.counts = c.device_counts ? dcounts : got.data();
            b.counts_location = c.device_counts ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
            ok = ok && gpuhist_histogramdd(cpu, &hp, axes.data(), &a) == GPUHIST_OK &&
                 gpuhist_histogramdd(ctx, &dp, axes.data(), &b) == GPUHIST_OK;
            if (ok && c.device_counts)
                CK(cudaMemcpy(got.data(), dcounts, total * 8, cudaMemcpyDeviceToHost));
            ok = ok && want == got && a.out == b.out && a.nan == b.nan;
        }
        /* the output alone: the counts' copy to the host */
        void *dc;
        CK(cudaMalloc(&dc, total * 8));
        double c0 = now_ms();
        CK(cudaMemcpy(counts, dc, total * 8, cudaMemcpyDeviceToHost));
        double copy_ms = now_ms() - c0;
        CK(cudaFree(dc));
        const double ms = median(t);
        const double gbps = used / (ms * 1e-3) / 1e9;
        std::printf("%-30s | %-13s | %9.3f ms | %7.1f GB/s | ceiling %7.1f GB/s | ratio %.3f "
                    "(target %.2f) | counts copy %.3f ms | %s | %s\n",
                    c.name, c.device_counts ? "device counts" : "host counts", ms, gbps,
                    ceiling, gbps / ceiling, c.target, copy_ms, strategy,
                    ok ? "counts ok" : "COUNTS WRONG");
        bad += !ok;
        CK(cudaFreeHost(counts));
        if (dcounts)
            CK(cudaFree(dcounts));
    }
    CK(cudaFree(d));
    gpuhist_destroy(ctx);
    gpuhist_destroy(cpu);
    return bad ? 1 : 0;
}
