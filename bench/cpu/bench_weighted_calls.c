/*
 * gpuhist-bench-weighted-calls - the per-call time of repeated weighted histograms on one CPU
 * context (cpu-weighted), the pattern of a fitter that fills the same weighted histogram
 * thousands of times: each cell makes one context, makes one warm-up call, then times --calls
 * calls of the same request and prints the median and the minimum per call, and the minor page
 * faults per call (getrusage; what fresh allocations cost beyond the counting).
 *
 * Cells (f32 samples uniform in [-0.05, 1.05), even bins over [0, 1), fixed seed):
 *   1M f32 samples + f32 weights, 100 bins      4 KiB of samples (1024) + f32 weights, 100 bins
 *   1M f32 samples + f64 weights and squares, 4096 bins (large per-thread records)
 *   4 KiB of samples + f64 weights and squares, 4096 bins
 *   1M f32 samples + f64 weights and squares, 2^15 bins (36 MiB of records per thread: above
 *   glibc's largest mmap threshold, so fresh records would be mapped and faulted in per call)
 * The sums of every timed call are compared with the first call's, bit for bit (the benchmark
 * fails when they differ); it asserts nothing about speed.
 *
 * usage: gpuhist-bench-weighted-calls [--calls N] [--threads N]
 *   --calls: timed calls per 1M cell (default 200; the 4 KiB cells make 50x as many)
 *   --threads: the context's thread count (default: the library's, every core)
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SEED 0x5eedf17u

static uint64_t g_rng = SEED;
static uint64_t rng(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unit(void) { return (double)(rng() >> 11) * (1.0 / 9007199254740992.0); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One cell; returns 0, or 1 when a call failed or its sums differ from the first call's. */
static int cell(const char *label, const float *x, const void *w, gpuhist_dtype wdtype,
                uint64_t n, uint32_t bins, int squares, int calls, int threads)
{
    gpuhist_ctx *ctx = NULL;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK || !ctx) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: cannot create a CPU context\n");
        return 1;
    }
    gpuhist_set_strategy(ctx, "cpu-weighted");
    if (threads > 0)
        gpuhist_set_threads(ctx, threads);
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, n);
    s.weights = w;
    s.weight_dtype = wdtype;
    const gpuhist_bin_spec b = gpuhist_bins_even(bins, 0.0, 1.0);
    uint64_t *counts = calloc(bins, sizeof *counts);
    double *sums = calloc(bins, sizeof *sums), *first = calloc(bins, sizeof *first);
    double *sq = calloc(bins, sizeof *sq);
    double *t = calloc((size_t)calls, sizeof *t);
    if (!counts || !sums || !first || !sq || !t) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: out of memory\n");
        exit(1);
    }
    gpuhist_result r = gpuhist_result_host(counts);
    r.sums = sums;
    r.sums_squared = squares ? sq : NULL;
    int bad = 0;
    if (gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: %s: %s\n", label, gpuhist_last_error(ctx));
        bad = 1;
    }
    memcpy(first, sums, bins * sizeof *sums);
    const long f0 = minor_faults();
    for (int i = 0; i < calls && !bad; ++i) {
        const double t0 = now_s();
        bad |= gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK;
        t[i] = now_s() - t0;
        bad |= memcmp(first, sums, bins * sizeof *sums) != 0;
    }
    const double faults = (double)(minor_faults() - f0) / calls;
    if (bad) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: %s: a call failed or its sums differ\n",
                label);
    } else {
        qsort(t, (size_t)calls, sizeof *t, cmp_double);
        printf("| %s | %d | %.1f | %.1f | %.1f |\n", label, calls, t[calls / 2] * 1e6,
               t[0] * 1e6, faults);
    }
    free(counts);
    free(sums);
    free(first);
    free(sq);
    free(t);
    gpuhist_destroy(ctx);
    return bad;
}

int main(int argc, char **argv)
{
    int calls = 200, threads = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
            calls = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: gpuhist-bench-weighted-calls [--calls N] [--threads N]\n");
            return 2;
        }
    }
    if (calls < 1 || calls > 1000000 || threads < 0) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: --calls 1..1000000, --threads >= 0\n");
        return 2;
    }
    const uint64_t n = (uint64_t)1 << 20, small = 1024; /* 4 KiB of f32 samples */
    float *x = malloc(n * sizeof *x), *w32 = malloc(n * sizeof *w32);
    double *w64 = malloc(n * sizeof *w64);
    if (!x || !w32 || !w64) {
        fprintf(stderr, "gpuhist-bench-weighted-calls: out of memory\n");
        return 1;
    }
    for (uint64_t i = 0; i < n; ++i) {
        x[i] = (float)(-0.05 + 1.1 * unit());
        w64[i] = 0.5 + unit();
        w32[i] = (float)w64[i];
    }
    if (threads)
        printf("gpuhist-bench-weighted-calls: seed 0x%x, %d threads\n\n", SEED, threads);
    else
        printf("gpuhist-bench-weighted-calls: seed 0x%x, threads: the library's default\n\n",
               SEED);
    printf("| cell | calls | median us/call | min us/call | minor faults/call |\n");
    printf("|---|---|---|---|---|\n");
    int bad = 0;
    bad |= cell("1M f32 + f32 weights, 100 bins", x, w32, GPUHIST_F32, n, 100, 0, calls, threads);
    bad |= cell("4 KiB f32 + f32 weights, 100 bins", x, w32, GPUHIST_F32, small, 100, 0,
                calls * 50, threads);
    bad |= cell("1M f32 + f64 weights + squares, 4096 bins", x, w64, GPUHIST_F64, n, 4096, 1,
                calls, threads);
    bad |= cell("4 KiB f32 + f64 weights + squares, 4096 bins", x, w64, GPUHIST_F64, small, 4096,
                1, calls * 50, threads);
    bad |= cell("1M f32 + f64 weights + squares, 2^15 bins", x, w64, GPUHIST_F64, n, 1u << 15, 1,
                calls / 4 > 0 ? calls / 4 : 1, threads);
    free(x);
    free(w32);
    free(w64);
    return bad;
}
