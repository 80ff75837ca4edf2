/*
 * e2e_host.cu - host-side figures for the end-to-end benchmark, on the CUDA backend:
 *   - CUDA start: the first runtime call of the process (cudaFree(0)) and gpuhist_create;
 *   - pinned host-to-device bandwidth (cudaMemcpyAsync from cudaMallocHost memory);
 *   - pageable host-to-device bandwidth (cudaMemcpy from malloc'd, touched memory);
 *   - gpuhist_histogram on a host array, pageable and pinned, u8/256 and f32/4096, and the same
 *     array fed to a stream in 64 MiB chunks; each checked against the CPU backend's counts.
 * usage: gpuhist-e2e-host [GiB]   (default 4). Medians of 5 runs after one warm-up.
 */
#include "gpuhist.h"

#include <cuda_runtime.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

static double now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

template <class F> static double median_s(F &&f, int reps = 5)
{
    f(); /* warm-up */
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        double t0 = now();
        f();
        t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                           \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    double gib = argc > 1 ? atof(argv[1]) : 4.0;
    size_t bytes = (size_t)(gib * 1073741824.0) / 64 * 64;
    double t0 = now();
    CK(cudaFree(0));
    double t_runtime = now() - t0;
    gpuhist_ctx *ctx, *cpu;
    t0 = now();
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        fprintf(stderr, "no CUDA context: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    double t_create = now() - t0;
    gpuhist_create(&cpu, GPUHIST_BACKEND_CPU);
    printf("device: %s\n", gpuhist_device_name(ctx));
    printf("cuda start: first runtime call %.3f s, gpuhist_create %.3f s\n", t_runtime, t_create);

    unsigned char *pageable = (unsigned char *)malloc(bytes), *pinned = NULL, *dev = NULL;
    CK(cudaMallocHost((void **)&pinned, bytes));
    CK(cudaMalloc((void **)&dev, std::min(bytes, (size_t)1 << 30)));
    if (!pageable)
        return 1;
    srand(1);
    for (size_t i = 0; i < bytes; i += 4) {
        float f = (float)rand() / (float)RAND_MAX;
        memcpy(pageable + i, &f, 4);
    }
    memcpy(pinned, pageable, bytes);
    const size_t cb = std::min(bytes, (size_t)1 << 30);
    double h2d_pinned = median_s([&] {
        CK(cudaMemcpyAsync(dev, pinned, cb, cudaMemcpyHostToDevice, 0));
        CK(cudaStreamSynchronize(0));
    });
    double h2d_pageable = median_s([&] { CK(cudaMemcpy(dev, pageable, cb, cudaMemcpyHostToDevice)); });
    printf("h2d pinned: %.2f GB/s; h2d pageable: %.2f GB/s (1 GiB copies)\n", cb / h2d_pinned / 1e9,
           cb / h2d_pageable / 1e9);

    struct cfg {
        const char *name;
        gpuhist_dtype t;
        gpuhist_bin_spec b;
    } cfgs[] = {{"u8/256", GPUHIST_U8, gpuhist_bins_integer(256, 0)},
                {"f32/4096", GPUHIST_F32, gpuhist_bins_even(4096, 0.0, 1.0)}};
    std::vector<unsigned long long> c(4096), ref(4096);
    for (auto &k : cfgs) {
        uint64_t n = bytes / gpuhist_dtype_size(k.t);
        gpuhist_result rr = gpuhist_result_host((uint64_t *)ref.data());
        gpuhist_samples s = gpuhist_samples_1d(pageable, k.t, n);
        gpuhist_histogram(cpu, &s, &k.b, &rr);
        for (int m = 0; m < 3; ++m) {
            unsigned char *src = m == 1 ? pinned : pageable;
            const char *what = m == 0 ? "pageable array" : m == 1 ? "pinned array" : "pageable, stream 64 MiB feeds";
            int bad = 0;
            double t = median_s([&] {
                gpuhist_result r = gpuhist_result_host((uint64_t *)c.data());
                gpuhist_status st;
                if (m < 2) {
                    gpuhist_samples ss = gpuhist_samples_1d(src, k.t, n);
                    ss.location = GPUHIST_MEMORY_HOST;
                    st = gpuhist_histogram(ctx, &ss, &k.b, &r);
                } else {
                    gpuhist_samples lay = gpuhist_samples_1d(NULL, k.t, 0);
                    lay.location = GPUHIST_MEMORY_HOST;
                    gpuhist_stream *gs;
                    st = gpuhist_stream_begin(ctx, &lay, &k.b, GPUHIST_MEMORY_HOST, &gs);
                    size_t step = ((size_t)64 << 20) / gpuhist_dtype_size(k.t);
                    for (uint64_t p = 0; st == GPUHIST_OK && p < n; p += step)
                        st = gpuhist_stream_feed(gs, src + p * gpuhist_dtype_size(k.t),
                                                 std::min<uint64_t>(step, n - p));
                    if (st == GPUHIST_OK)
                        st = gpuhist_stream_finish(gs, &r);
                }
                bad |= st != GPUHIST_OK || memcmp(c.data(), ref.data(), k.b.bins * 8) != 0;
            });
            printf("%s %s: %.2f GB/s = %.2f x pinned h2d, %.2f x pageable h2d%s\n", k.name, what,
                   bytes / t / 1e9, (bytes / t) / (cb / h2d_pinned), (bytes / t) / (cb / h2d_pageable),
                   bad ? "  MISMATCH vs CPU" : "");
        }
    }
    cudaFreeHost(pinned);
    cudaFree(dev);
    free(pageable);
    gpuhist_destroy(ctx);
    gpuhist_destroy(cpu);
    return 0;
}
