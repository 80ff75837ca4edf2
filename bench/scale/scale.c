/*
 * scale.c - gpuhist-scale: one GPU against every GPU of the machine (a context made by
 * gpuhist_create_multi), same process, same data, same run. Not a test: it prints figures.
 *
 *   gpuhist-scale [--gib N] [--reps R] [--gpus G] [--file PATH]
 *
 * Cells (each the median of R runs, wall time of the whole call including the merge):
 *  - device-resident: N GiB already on each GPU (u8/256 even, f32/4096 even, f32/2^20 even).
 *    One GPU counts its N GiB with gpuhist_histogram(); all GPUs count theirs through one
 *    stream of the multi-device context (each part counted where it lives). Figure: GB/s of
 *    input read, and the ratio all / one.
 *  - host arrays of N GiB x GPUs (u8/256): page-locked (gpuhist_host_alloc) and pageable
 *    (malloc, touched first), one GPU against all; beside them the host-to-device copy rate of
 *    the same buffer to one GPU and to every GPU at once (cudaMemcpyAsync, one stream each).
 *  - lent buffers: N GiB x GPUs streamed through gpuhist_stream_buffer/_submit (16 MiB each,
 *    no reading), the command's file path without its reader.
 *  - --gpus G: the first G GPUs only (default: all).
 *  - --file PATH: writes PATH (N GiB x GPUs of u8) for scripts that time the command on it.
 * Every multi-GPU result is checked against the one-GPU counts (exit 1 on a difference).
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"

#include <cuda_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "gpuhist-scale: %s: %s\n", #call, cudaGetErrorString(e_));        \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define GH(ctx, call)                                                                          \
    do {                                                                                       \
        gpuhist_status s_ = (call);                                                            \
        if (s_ != GPUHIST_OK) {                                                                \
            fprintf(stderr, "gpuhist-scale: %s: %s\n", #call, gpuhist_last_error(ctx));      \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Fill n bytes with a pattern that spreads over every bin (xorshift). */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    for (; i < n; ++i)
        p[i] = (unsigned char)i;
}

/* f32 in [0, 1) from the same pattern */
static void fill_f32(float *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (float)(x >> 40) * 0x1p-24f;
    }
}

typedef struct cell {
    const char *name;
    gpuhist_dtype dtype;
    uint32_t bins;
} cell;

static int g_reps = 5;
static int g_fail;

static void check_same(const char *what, const uint64_t *a, const uint64_t *b, uint32_t n,
                       uint64_t times)
{
    for (uint32_t i = 0; i < n; ++i)
        if (a[i] * times != b[i]) {
            printf("MISMATCH %s: bin %u: one GPU x %llu = %llu, all GPUs %llu\n", what, i,
                   (unsigned long long)times, (unsigned long long)(a[i] * times),
                   (unsigned long long)b[i]);
            g_fail = 1;
            return;
        }
}

/* Device-resident: every GPU holds the same `bytes` of data. */
static void device_resident(gpuhist_ctx *one, gpuhist_ctx *all, const int *devs, int n,
                            size_t bytes)
{
    static const cell cells[] = {
        {"u8/256", GPUHIST_U8, 256},
        {"f32/4096", GPUHIST_F32, 4096},
        {"f32/2^20", GPUHIST_F32, 1u << 20},
    };
    void **parts = calloc((size_t)n, sizeof *parts);
    unsigned char *host = malloc(bytes);
    uint64_t *c1 = malloc(sizeof(uint64_t) << 20), *cn = malloc(sizeof(uint64_t) << 20);
    for (int d = 0; d < n; ++d) {
        CK(cudaSetDevice(devs[d]));
        CK(cudaMalloc(&parts[d], bytes));
    }
    for (size_t c = 0; c < sizeof cells / sizeof cells[0]; ++c) {
        const cell *ce = &cells[c];
        const uint64_t count = bytes / gpuhist_dtype_size(ce->dtype);
        if (ce->dtype == GPUHIST_U8)
            fill(host, bytes, 7);
        else
            fill_f32((float *)host, count, 7);
        for (int d = 0; d < n; ++d)
            CK(cudaMemcpy(parts[d], host, bytes, cudaMemcpyHostToDevice));
        gpuhist_bin_spec b = gpuhist_bins_even(ce->bins, 0.0, ce->dtype == GPUHIST_U8 ? 256.0 : 1.0);
        double t1[64], tn[64];
        const char *strategy = "";
        for (int r = 0; r < g_reps + 1; ++r) {
            gpuhist_samples s = gpuhist_samples_1d(parts[0], ce->dtype, count);
            gpuhist_result res = gpuhist_result_host(c1);
            double t = now();
            GH(one, gpuhist_histogram(one, &s, &b, &res));
            t = now() - t;
            strategy = res.strategy;
            gpuhist_samples layout = gpuhist_samples_1d(NULL, ce->dtype, 0);
            gpuhist_stream *st;
            double u = now();
            GH(all, gpuhist_stream_begin(all, &layout, &b, GPUHIST_MEMORY_HOST, &st));
            for (int d = 0; d < n; ++d)
                GH(all, gpuhist_stream_feed(st, parts[d], count));
            gpuhist_result rn = gpuhist_result_host(cn);
            GH(all, gpuhist_stream_finish(st, &rn));
            u = now() - u;
            if (r > 0) { /* the first run warms both up */
                t1[r - 1] = t;
                tn[r - 1] = u;
            }
        }
        check_same(ce->name, c1, cn, ce->bins, (uint64_t)n);
        double m1 = median(t1, g_reps), mn = median(tn, g_reps);
        double g1 = (double)bytes / m1 / 1e9, gn = (double)bytes * n / mn / 1e9;
        printf("device-resident %-9s %s: one GPU %.3f ms = %.0f GB/s; %d GPUs %.3f ms = %.0f GB/s;"
               " ratio %.2f\n",
               ce->name, strategy, m1 * 1e3, g1, n, mn * 1e3, gn, gn / g1);
    }
    for (int d = 0; d < n; ++d) {
        cudaSetDevice(devs[d]);
        cudaFree(parts[d]);
    }
    free(parts);
    free(host);
    free(c1);
    free(cn);
}

/* Host-to-device copy rate of `buf` to one GPU, and to every GPU at once (each its share). */
static void copy_rates(const unsigned char *buf, size_t bytes, const int *devs, int n,
                       double *one_gbs, double *all_gbs)
{
    void **dst = calloc((size_t)n, sizeof *dst);
    cudaStream_t *st = calloc((size_t)n, sizeof *st);
    const size_t share = bytes / (size_t)n;
    for (int d = 0; d < n; ++d) {
        CK(cudaSetDevice(devs[d]));
        CK(cudaMalloc(&dst[d], share));
        CK(cudaStreamCreate(&st[d]));
    }
    double t1[64], tn[64];
    for (int r = 0; r < g_reps + 1; ++r) {
        CK(cudaSetDevice(devs[0]));
        double t = now();
        for (size_t at = 0; at < bytes; at += share) /* all of it through the one GPU */
            CK(cudaMemcpyAsync(dst[0], buf + at, share, cudaMemcpyHostToDevice, st[0]));
        CK(cudaStreamSynchronize(st[0]));
        t = now() - t;
        double u = now();
        for (int d = 0; d < n; ++d) {
            CK(cudaSetDevice(devs[d]));
            CK(cudaMemcpyAsync(dst[d], buf + (size_t)d * share, share, cudaMemcpyHostToDevice,
                               st[d]));
        }
        for (int d = 0; d < n; ++d) {
            CK(cudaSetDevice(devs[d]));
            CK(cudaStreamSynchronize(st[d]));
        }
        u = now() - u;
        if (r > 0) {
            t1[r - 1] = t;
            tn[r - 1] = u;
        }
    }
    *one_gbs = (double)share * n / median(t1, g_reps) / 1e9;
    *all_gbs = (double)share * n / median(tn, g_reps) / 1e9;
    for (int d = 0; d < n; ++d) {
        cudaSetDevice(devs[d]);
        cudaFree(dst[d]);
        cudaStreamDestroy(st[d]);
    }
    free(dst);
    free(st);
}

/* Lent staging buffers (gpuhist_stream_buffer / _submit, what the command's file reader
 * uses), 16 MiB each, with no reading: each buffer is filled once, the first time it is lent
 * (in the untimed first run), and then submitted as it is, so the figure is the stream's own
 * rate (copies to the devices and counting) without the reader. */
typedef struct seen_buffers {
    void *buf[64];
    int n;
} seen_buffers;

static double lent_rate(gpuhist_ctx *ctx, size_t bytes, uint64_t *counts, seen_buffers *seen)
{
    const size_t chunk = (size_t)16 << 20;
    gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 256.0);
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_U8, 0);
    gpuhist_stream *st;
    double t = now();
    GH(ctx, gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &st));
    for (size_t at = 0; at < bytes; at += chunk) {
        void *buf;
        GH(ctx, gpuhist_stream_buffer(st, chunk, &buf));
        int known = 0;
        for (int i = 0; i < seen->n; ++i)
            known |= seen->buf[i] == buf;
        if (!known && seen->n < 64) {
            fill(buf, chunk, 5);
            seen->buf[seen->n++] = buf;
        }
        GH(ctx, gpuhist_stream_submit(st, buf, chunk));
    }
    gpuhist_result r = gpuhist_result_host(counts);
    GH(ctx, gpuhist_stream_finish(st, &r));
    return now() - t;
}

static void lent_buffers(gpuhist_ctx *one, gpuhist_ctx *all, int n, size_t bytes)
{
    uint64_t c1[256], cn[256];
    double t1[64], tn[64];
    seen_buffers s1 = {{0}, 0}, sn = {{0}, 0}; /* filled in the first (untimed) run */
    for (int r = 0; r < g_reps + 1; ++r) {
        double t = lent_rate(one, bytes, c1, &s1);
        double u = lent_rate(all, bytes, cn, &sn);
        if (r > 0) {
            t1[r - 1] = t;
            tn[r - 1] = u;
        }
    }
    check_same("lent buffers", c1, cn, 256, 1);
    double g1 = (double)bytes / median(t1, g_reps) / 1e9;
    double gn = (double)bytes / median(tn, g_reps) / 1e9;
    printf("stream of lent 16 MiB buffers (no reading) u8/256 %.1f GiB: one GPU %.1f GB/s;"
           " %d GPUs %.1f GB/s; ratio %.2f\n",
           (double)bytes / (1 << 30), g1, n, gn, gn / g1);
}

static void host_arrays(gpuhist_ctx *one, gpuhist_ctx *all, const int *devs, int n,
                        size_t bytes)
{
    for (int pinned = 1; pinned >= 0; --pinned) {
        unsigned char *buf = NULL;
        if (pinned)
            GH(all, gpuhist_host_alloc(all, bytes, (void **)&buf));
        else if (!(buf = malloc(bytes))) {
            fprintf(stderr, "gpuhist-scale: cannot allocate %zu bytes\n", bytes);
            exit(1);
        }
        fill(buf, bytes, 11);
        uint64_t c1[256], cn[256];
        gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 256.0);
        gpuhist_samples s = gpuhist_samples_1d(buf, GPUHIST_U8, bytes);
        double t1[64], tn[64];
        for (int r = 0; r < g_reps + 1; ++r) {
            gpuhist_result r1 = gpuhist_result_host(c1), rn = gpuhist_result_host(cn);
            double t = now();
            GH(one, gpuhist_histogram(one, &s, &b, &r1));
            t = now() - t;
            double u = now();
            GH(all, gpuhist_histogram(all, &s, &b, &rn));
            u = now() - u;
            if (r > 0) {
                t1[r - 1] = t;
                tn[r - 1] = u;
            }
        }
        check_same(pinned ? "pinned u8" : "pageable u8", c1, cn, 256, 1);
        double one_copy, all_copy;
        copy_rates(buf, bytes, devs, n, &one_copy, &all_copy);
        double g1 = (double)bytes / median(t1, g_reps) / 1e9;
        double gn = (double)bytes / median(tn, g_reps) / 1e9;
        printf("host %-8s u8/256 %.1f GiB: one GPU %.1f GB/s (copy to one GPU %.1f GB/s: %.2f);"
               " %d GPUs %.1f GB/s (copy to all at once %.1f GB/s: %.2f); ratio %.2f\n",
               pinned ? "pinned" : "pageable", (double)bytes / (1 << 30), g1, one_copy,
               g1 / one_copy, n, gn, all_copy, gn / all_copy, gn / g1);
        if (pinned)
            gpuhist_host_free(all, buf);
        else
            free(buf);
    }
}

int main(int argc, char **argv)
{
    double gib = 1.0;
    const char *file = NULL;
    int gpus = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--gib") && i + 1 < argc)
            gib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            gpus = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gpuhist-scale [--gib N] [--reps R] [--gpus G] [--file PATH]\n");
            return 2;
        }
    }
    if (g_reps < 1 || g_reps > 63)
        g_reps = 5;
    int n = gpuhist_device_count(GPUHIST_BACKEND_CUDA);
    if (n < 1) {
        printf("gpuhist-scale: no CUDA device: skipped\n");
        return 77;
    }
    if (gpus > 0 && gpus < n)
        n = gpus;
    int devs[64];
    for (int d = 0; d < n && d < 64; ++d)
        devs[d] = d;
    const size_t bytes = (size_t)(gib * (double)(1u << 30)) & ~(size_t)4095;
    if (file) {
        FILE *f = fopen(file, "wb");
        unsigned char *chunk = malloc((size_t)64 << 20);
        if (!f || !chunk) {
            fprintf(stderr, "gpuhist-scale: cannot write %s\n", file);
            return 1;
        }
        for (size_t at = 0; at < bytes * (size_t)n; at += (size_t)64 << 20) {
            fill(chunk, (size_t)64 << 20, at + 1);
            fwrite(chunk, 1, (size_t)64 << 20, f);
        }
        if (fclose(f) != 0) {
            fprintf(stderr, "gpuhist-scale: cannot write %s\n", file);
            return 1;
        }
        free(chunk);
        printf("wrote %s: %.1f GiB of u8\n", file, (double)bytes * n / (1u << 30));
        return 0;
    }
    gpuhist_ctx *one = NULL, *all = NULL;
    GH(NULL, gpuhist_create_on(&one, GPUHIST_BACKEND_CUDA, 0));
    GH(NULL, gpuhist_create_multi(&all, GPUHIST_BACKEND_CUDA, devs, n));
    printf("gpuhist-scale: one GPU: %s; all: %s; %.1f GiB per GPU, median of %d\n",
           gpuhist_device_name(one), gpuhist_device_name(all), gib, g_reps);
    device_resident(one, all, devs, n, bytes);
    host_arrays(one, all, devs, n, bytes * (size_t)n);
    lent_buffers(one, all, n, bytes * (size_t)n);
    gpuhist_destroy(one);
    gpuhist_destroy(all);
    return g_fail;
}
