/*
 * capi_cells.cu - gpuhist-capi-cells: the C API's own throughput on the cells of
 * bench/python/compare.py, timed the way compare.py times the Python binding, so that its
 * table can print binding / C API per cell (the Python issue's target: >= 0.9).
 *
 *   gpuhist-capi-cells [--mib N] [--repeat R]
 *
 * Cells (device-resident, uniform, N MiB each, default 1024): u8 with 256 even bins over
 * [0, 256), f32 with 4096 and with 2^20 even bins over [0, 1) - the specs compare.py's
 * gpuhist.histogram calls hand the library (EVEN, last edge inclusive, outliers dropped). The
 * data are made on the device by a counter-based hash (u8: its low byte; f32: 24 bits over
 * [0, 1)), not NumPy's generator: the same distribution, not the same bytes.
 * Timing, as compare.py's timed(): one warm-up call, then the median of R calls (fewer when one
 * takes more than a tenth of 10 s), each call gpuhist_histogram() on the CUDA backend with the
 * strategy on auto, counts in device memory, the context asynchronous, followed by
 * cudaStreamSynchronize of the default stream (the stream CuPy and torch use by default).
 * Each cell is also timed on the same data in pageable host memory (counts to host memory: what
 * gpuhist.histogram does with a NumPy array on the CUDA backend), tagged CAPIHOST.
 * Output: one line per cell, tab-separated, for compare.py to read:
 *   CAPI|CAPIHOST <cell> <median seconds> <input bytes> <strategy> <device>
 * and nothing is asserted about speed. Exit 77 without a CUDA device, 1 on a failed call.
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

namespace {

__device__ uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__global__ void k_fill_u8(uint8_t *out, uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = (uint8_t)mix(i);
}

__global__ void k_fill_f32(float *out, uint64_t n)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = (float)(mix(i ^ 0x5A5A5A5Aull) >> 40) * 0x1p-24f;
}

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    fprintf(stderr, "gpuhist-capi-cells: %s: %s\n", what, cudaGetErrorString(e));
    return 0;
}

/* One cell: median seconds of R synchronised calls after one warm-up (compare.py's timed()).
 * host: data is a pageable host array and the counts go to host memory (what gpuhist.histogram
 * does with a NumPy array on the CUDA backend); its line is tagged CAPIHOST. */
int time_cell(gpuhist_ctx *ctx, const char *name, const void *data, gpuhist_dtype dt,
              uint64_t n, uint32_t bins, double lo, double hi, int repeat, const char *device,
              bool host = false)
{
    uint64_t *counts = NULL;
    if (host)
        counts = (uint64_t *)malloc((size_t)bins * 8);
    else if (!cuda_ok(cudaMalloc((void **)&counts, (size_t)bins * 8), "cudaMalloc(counts)"))
        return 0;
    if (!counts)
        return 0;
    gpuhist_samples s = gpuhist_samples_1d(data, dt, n);
    s.location = host ? GPUHIST_MEMORY_HOST : GPUHIST_MEMORY_DEVICE;
    gpuhist_bin_spec b = gpuhist_bins_even(bins, lo, hi);
    b.last_edge_inclusive = 1;
    gpuhist_result r = gpuhist_result_host(counts);
    r.counts_location = host ? GPUHIST_MEMORY_HOST : GPUHIST_MEMORY_DEVICE;
    int ok = 1;
    auto call = [&]() -> double {
        const double t0 = now();
        gpuhist_status st = gpuhist_histogram(ctx, &s, &b, &r);
        cudaError_t e = cudaStreamSynchronize(0);
        const double t = now() - t0;
        if (st != GPUHIST_OK) {
            fprintf(stderr, "gpuhist-capi-cells: %s: %s\n", name, gpuhist_last_error(ctx));
            ok = 0;
        }
        ok = ok && cuda_ok(e, "cudaStreamSynchronize");
        return t;
    };
    const double warm = call();
    if (ok) {
        const double budget = 10.0;
        const int runs = std::max(1, std::min(repeat, (int)(budget / std::max(warm, 1e-9))));
        std::vector<double> t;
        for (int i = 0; i < runs && ok; ++i)
            t.push_back(call());
        if (ok) {
            std::sort(t.begin(), t.end());
            const size_t m = t.size();
            const double median = m % 2 ? t[m / 2] : (t[m / 2 - 1] + t[m / 2]) / 2;
            printf("%s\t%s\t%.9g\t%llu\t%s\t%s\n", host ? "CAPIHOST" : "CAPI", name, median,
                   (unsigned long long)(n * gpuhist_dtype_size(dt)), r.strategy, device);
            fflush(stdout);
        }
    }
    if (host)
        free(counts);
    else
        cudaFree(counts);
    return ok;
}

} /* namespace */

int main(int argc, char **argv)
{
    long mib = 1024, repeat = 5;
    for (int i = 1; i < argc; ++i) {
        char *end = NULL;
        long *to = !strcmp(argv[i], "--mib") ? &mib : !strcmp(argv[i], "--repeat") ? &repeat
                                                                                  : NULL;
        if (!to || i + 1 >= argc || (*to = strtol(argv[i + 1], &end, 10)) < 1 || *end) {
            fprintf(stderr, "gpuhist-capi-cells: %s: expected --mib N or --repeat R (positive "
                            "integers)\nusage: gpuhist-capi-cells [--mib N] [--repeat R]\n",
                    argv[i]);
            return 2;
        }
        ++i;
    }
    gpuhist_ctx *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        printf("gpuhist-capi-cells: no CUDA device: skipped (%s)\n", gpuhist_last_error(NULL));
        return 77;
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist-capi-cells: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    gpuhist_set_async(ctx, 1);
    const uint64_t bytes = (uint64_t)mib << 20;
    void *data = NULL;
    if (!cuda_ok(cudaMalloc(&data, bytes), "cudaMalloc(data)")) {
        gpuhist_destroy(ctx);
        return 1;
    }
    const char *device = gpuhist_device_name(ctx);
    int ok = 1;
    /* the same data in pageable host memory, for the host-array rows */
    void *hdata = malloc(bytes);
    ok = hdata != NULL;
    if (!ok)
        fprintf(stderr, "gpuhist-capi-cells: out of host memory\n");
    k_fill_u8<<<1024, 256>>>((uint8_t *)data, bytes);
    ok = ok && cuda_ok(cudaDeviceSynchronize(), "fill u8") &&
         time_cell(ctx, "u8 256 bins", data, GPUHIST_U8, bytes, 256, 0.0, 256.0, (int)repeat,
                   device) &&
         cuda_ok(cudaMemcpy(hdata, data, bytes, cudaMemcpyDeviceToHost), "copy u8") &&
         time_cell(ctx, "u8 256 bins", hdata, GPUHIST_U8, bytes, 256, 0.0, 256.0, (int)repeat,
                   device, true);
    if (ok) {
        k_fill_f32<<<1024, 256>>>((float *)data, bytes / 4);
        ok = cuda_ok(cudaDeviceSynchronize(), "fill f32") &&
             time_cell(ctx, "f32 4096 bins", data, GPUHIST_F32, bytes / 4, 4096, 0.0, 1.0,
                       (int)repeat, device) &&
             time_cell(ctx, "f32 2^20 bins", data, GPUHIST_F32, bytes / 4, 1u << 20, 0.0, 1.0,
                       (int)repeat, device) &&
             cuda_ok(cudaMemcpy(hdata, data, bytes, cudaMemcpyDeviceToHost), "copy f32") &&
             time_cell(ctx, "f32 4096 bins", hdata, GPUHIST_F32, bytes / 4, 4096, 0.0, 1.0,
                       (int)repeat, device, true) &&
             time_cell(ctx, "f32 2^20 bins", hdata, GPUHIST_F32, bytes / 4, 1u << 20, 0.0, 1.0,
                       (int)repeat, device, true);
    }
    free(hdata);
    cudaFree(data);
    gpuhist_destroy(ctx);
    return ok ? 0 : 1;
}
