/*
 * test_nd_accumulate.cu - accumulating N-D calls of points in device memory
 * (gpuhist_nd_result.accumulate on CUDA), against the CPU backend on host copies, bit for bit.
 *
 *   parts    random points (NaN, outside an axis, on the last edge) of 2 to 4 f32 / f64 / u8
 *            coordinates, interleaved or in columns, cut into random parts (some empty), each
 *            counted by one accumulating call: into host counts, and into DEVICE counts with
 *            device_stats (synchronous and asynchronous), through the fused count (few joint
 *            bins) and the map + 1-D count (gpuhist_nd_set_device_fused(0), and 600 x 400
 *            joint bins): counts, out / nan / total and the device tallies (nan, out, 0, total)
 *            equal one CPU call on all the points.
 *   nosync   on a stream kept busy by a 200 ms spin kernel, an asynchronous accumulating call
 *            with DEVICE counts returns in less than half of that (fused and map paths), and
 *            the totals are right.
 *   refuse   DEVICE counts in host memory, device_stats in host memory, a stream's finish with
 *            DEVICE counts: refused by name, nothing added.
 *
 * usage: test_nd_accumulate parts|nosync|refuse. Seed: GPUHIST_TEST_SEED (default fixed,
 * printed). Exits 77 without a GPU.
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#include "../unit/check.h"

#define CUDA_OK(call)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                      \
                    cudaGetErrorString(e_));                                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

extern "C" void gpuhist_nd_set_device_fused(int on); /* internal: one-pass count or map + 1-D */

static uint64_t rng_state = 0x4E44ACC0517E9E37ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static double unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static gpuhist_ctx *g_cpu;

struct Case {
    gpuhist_dtype dtype;
    uint32_t dims;
    uint64_t n;
    std::vector<unsigned char> pts; /* interleaved, host */
    std::vector<gpuhist_bin_spec> axes;
    uint64_t B;
};

static void put(Case &c, uint64_t i, double v)
{
    unsigned char *p = &c.pts[i * gpuhist_dtype_size(c.dtype)];
    if (c.dtype == GPUHIST_F64) {
        memcpy(p, &v, 8);
    } else if (c.dtype == GPUHIST_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else {
        uint8_t u = (uint8_t)v;
        memcpy(p, &u, 1);
    }
}

/* Points of `dims` coordinates with bins[] per axis (u8: values 0..19 over [2, 18)). */
static Case make_case(gpuhist_dtype dt, uint32_t dims, const uint32_t *bins, uint64_t n)
{
    Case c;
    c.dtype = dt;
    c.dims = dims;
    c.n = n;
    c.pts.resize(n * dims * gpuhist_dtype_size(dt));
    c.B = 1;
    for (uint32_t a = 0; a < dims; ++a) {
        gpuhist_bin_spec s = dt == GPUHIST_U8 ? gpuhist_bins_even(bins[a], 2.0, 18.0)
                                              : gpuhist_bins_even(bins[a], 0.0, 1.0);
        s.last_edge_inclusive = 1;
        c.axes.push_back(s);
        c.B *= bins[a];
    }
    for (uint64_t i = 0; i < n * dims; ++i) {
        const uint64_t k = below(40);
        double v = dt == GPUHIST_U8 ? (double)below(20)
                   : k == 0         ? NAN
                   : k == 1         ? -0.5
                   : k == 2         ? 1.0
                                    : unit();
        put(c, i, v);
    }
    return c;
}

/* The CPU backend's one call on all the points. */
static void reference(const Case &c, std::vector<uint64_t> &counts, gpuhist_nd_result &r)
{
    counts.assign(c.B, 0);
    gpuhist_points p = gpuhist_points_interleaved(c.pts.data(), c.dtype, c.dims, c.n);
    memset(&r, 0, sizeof r);
    r.counts = counts.data();
    CHECK_EQ_INT(gpuhist_histogramdd(g_cpu, &p, c.axes.data(), &r), GPUHIST_OK);
}

/* Device copies of the points: interleaved, and one column per axis. */
struct DevicePoints {
    void *inter = NULL;
    std::vector<void *> cols;
    void make(const Case &c)
    {
        const size_t size = gpuhist_dtype_size(c.dtype);
        CUDA_OK(cudaMalloc(&inter, c.pts.size() + 1));
        CUDA_OK(cudaMemcpy(inter, c.pts.data(), c.pts.size(), cudaMemcpyHostToDevice));
        std::vector<unsigned char> col(c.n * size + 1);
        for (uint32_t a = 0; a < c.dims; ++a) {
            for (uint64_t i = 0; i < c.n; ++i)
                memcpy(&col[i * size], &c.pts[(i * c.dims + a) * size], size);
            void *d = NULL;
            CUDA_OK(cudaMalloc(&d, col.size()));
            CUDA_OK(cudaMemcpy(d, col.data(), col.size(), cudaMemcpyHostToDevice));
            cols.push_back(d);
        }
    }
    ~DevicePoints()
    {
        cudaFree(inter);
        for (void *d : cols)
            cudaFree(d);
    }
    /* points [first, first + n) */
    gpuhist_points part(const Case &c, uint64_t first, uint64_t n, int columns) const
    {
        const size_t size = gpuhist_dtype_size(c.dtype);
        gpuhist_points p = gpuhist_points_interleaved(NULL, c.dtype, c.dims, n);
        p.location = GPUHIST_MEMORY_DEVICE;
        if (columns)
            for (uint32_t a = 0; a < c.dims; ++a)
                p.columns[a] = (const unsigned char *)cols[a] + first * size;
        else
            p.data = (const unsigned char *)inter + first * c.dims * size;
        return p;
    }
};

static void case_parts(gpuhist_ctx *ctx)
{
    static const uint32_t small[4] = {5, 6, 7, 3}, large[2] = {600, 400};
    for (int round = 0; round < 24; ++round) {
        static const gpuhist_dtype types[3] = {GPUHIST_F32, GPUHIST_F64, GPUHIST_U8};
        const gpuhist_dtype dt = types[below(3)];
        const int big = round % 6 == 5;
        const uint32_t dims = big ? 2 : 2 + (uint32_t)below(3);
        const int fused = (int)below(2);
        const int columns = (int)below(2);
        const int where = (int)below(3); /* 0 host counts, 1 device, 2 device asynchronous */
        check_context("parts round %d: %s, %u dims%s, %s, %s, %s", round,
                      gpuhist_dtype_name(dt), dims, big ? " (600 x 400 bins)" : "",
                      fused ? "fused allowed" : "map + 1-D", columns ? "columns" : "interleaved",
                      where == 0 ? "host counts" : where == 1 ? "device counts"
                                                             : "device counts, async");
        Case c = make_case(dt, dims, big ? large : small, 1 + below(2000000));
        std::vector<uint64_t> want;
        gpuhist_nd_result ref;
        reference(c, want, ref);
        DevicePoints d;
        d.make(c);
        gpuhist_nd_set_device_fused(fused);
        gpuhist_set_async(ctx, where == 2);
        std::vector<uint64_t> host(c.B, 0);
        uint64_t *d_counts = NULL, *d_stats = NULL;
        CUDA_OK(cudaMalloc((void **)&d_counts, c.B * 8));
        CUDA_OK(cudaMalloc((void **)&d_stats, 4 * 8));
        CUDA_OK(cudaMemset(d_counts, 0, c.B * 8));
        CUDA_OK(cudaMemset(d_stats, 0, 4 * 8));
        gpuhist_nd_result r;
        memset(&r, 0, sizeof r);
        r.accumulate = 1;
        r.counts = where ? d_counts : host.data();
        r.counts_location = where ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
        r.device_stats = where ? d_stats : NULL;
        const int k = 1 + (int)below(6);
        std::vector<uint64_t> cuts(k + 1);
        cuts[0] = 0;
        cuts[k] = c.n;
        for (int i = 1; i < k; ++i)
            cuts[i] = below(c.n + 1);
        std::sort(cuts.begin() + 1, cuts.begin() + k);
        for (int i = 0; i < k; ++i) {
            gpuhist_points p = d.part(c, cuts[i], cuts[i + 1] - cuts[i], columns);
            gpuhist_status st = gpuhist_histogramdd(ctx, &p, c.axes.data(), &r);
            if (!CHECK_MSG(st == GPUHIST_OK, "part %d: %s", i, gpuhist_last_error(ctx)))
                break;
        }
        CUDA_OK(cudaDeviceSynchronize());
        if (where)
            CUDA_OK(cudaMemcpy(host.data(), d_counts, c.B * 8, cudaMemcpyDeviceToHost));
        CHECK_MSG(memcmp(host.data(), want.data(), c.B * 8) == 0, "counts differ from the CPU "
                                                                   "backend's one call");
        if (where != 2) {
            CHECK_EQ_U64(r.out, ref.out);
            CHECK_EQ_U64(r.nan, ref.nan);
            CHECK_EQ_U64(r.total, ref.total);
        }
        if (where) {
            uint64_t stats[4];
            CUDA_OK(cudaMemcpy(stats, d_stats, sizeof stats, cudaMemcpyDeviceToHost));
            CHECK_EQ_U64(stats[0], ref.nan);
            CHECK_EQ_U64(stats[1], ref.out);
            CHECK_EQ_U64(stats[2], 0);
            CHECK_EQ_U64(stats[3], ref.total);
        }
        cudaFree(d_counts);
        cudaFree(d_stats);
    }
    gpuhist_nd_set_device_fused(1);
    gpuhist_set_async(ctx, 0);
    check_context("%s", "");
}

__global__ void k_spin(long long cycles)
{
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void case_nosync(gpuhist_ctx *ctx)
{
    cudaStream_t strm;
    CUDA_OK(cudaStreamCreateWithFlags(&strm, cudaStreamNonBlocking));
    CHECK_EQ_INT(gpuhist_set_stream(ctx, strm), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_async(ctx, 1), GPUHIST_OK);
    int rate_khz = 0;
    CUDA_OK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
    const long long cycles = (long long)(rate_khz ? rate_khz : 2000000) * 200; /* ~200 ms */
    static const uint32_t small[2] = {20, 30}, large[2] = {600, 400};
    for (int big = 0; big < 2; ++big) {
        check_context("nosync, %s", big ? "600 x 400 bins (map + 1-D)" : "20 x 30 bins (fused)");
        Case c = make_case(GPUHIST_F32, 2, big ? large : small, 1u << 20);
        std::vector<uint64_t> want;
        gpuhist_nd_result ref;
        reference(c, want, ref);
        DevicePoints d;
        d.make(c);
        uint64_t *d_counts = NULL, *d_stats = NULL;
        CUDA_OK(cudaMalloc((void **)&d_counts, c.B * 8));
        CUDA_OK(cudaMalloc((void **)&d_stats, 4 * 8));
        CUDA_OK(cudaMemset(d_counts, 0, c.B * 8));
        CUDA_OK(cudaMemset(d_stats, 0, 4 * 8));
        gpuhist_nd_result r;
        memset(&r, 0, sizeof r);
        r.accumulate = 1;
        r.counts = d_counts;
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        r.device_stats = d_stats;
        gpuhist_points p = d.part(c, 0, c.n, 1);
        /* one call first: the context's buffers exist, nothing is allocated while timing */
        CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, c.axes.data(), &r), GPUHIST_OK);
        CUDA_OK(cudaStreamSynchronize(strm));
        k_spin<<<1, 1, 0, strm>>>(cycles);
        CUDA_OK(cudaGetLastError());
        const double t0 = now();
        gpuhist_status st = gpuhist_histogramdd(ctx, &p, c.axes.data(), &r);
        const double took = now() - t0;
        CUDA_OK(cudaStreamSynchronize(strm));
        const double spun = now() - t0;
        CHECK_EQ_INT(st, GPUHIST_OK);
        printf("  %s: the call took %.3f ms on a stream busy for %.3f ms\n",
               big ? "map + 1-D" : "fused", took * 1e3, spun * 1e3);
        CHECK_MSG(took < spun / 2, "the call waited: %.3f ms of %.3f ms", took * 1e3, spun * 1e3);
        std::vector<uint64_t> got(c.B);
        CUDA_OK(cudaMemcpy(got.data(), d_counts, c.B * 8, cudaMemcpyDeviceToHost));
        for (uint64_t i = 0; i < c.B; ++i)
            CHECK_EQ_U64(got[i], 2 * want[i]);
        uint64_t stats[4];
        CUDA_OK(cudaMemcpy(stats, d_stats, sizeof stats, cudaMemcpyDeviceToHost));
        CHECK_EQ_U64(stats[0], 2 * ref.nan);
        CHECK_EQ_U64(stats[1], 2 * ref.out);
        CHECK_EQ_U64(stats[3], 2 * ref.total);
        cudaFree(d_counts);
        cudaFree(d_stats);
    }
    gpuhist_set_async(ctx, 0);
    gpuhist_set_stream(ctx, NULL);
    cudaStreamDestroy(strm);
    check_context("%s", "");
}

static void case_refuse(gpuhist_ctx *ctx)
{
    static const uint32_t bins[2] = {4, 4};
    Case c = make_case(GPUHIST_F32, 2, bins, 1000);
    DevicePoints d;
    d.make(c);
    uint64_t *d_counts = NULL;
    CUDA_OK(cudaMalloc((void **)&d_counts, c.B * 8));
    CUDA_OK(cudaMemset(d_counts, 0, c.B * 8));
    std::vector<uint64_t> host(c.B, 0), stats(4, 0);
    gpuhist_points p = d.part(c, 0, c.n, 0);
    gpuhist_nd_result r;
    check_context("refuse: DEVICE counts in host memory");
    memset(&r, 0, sizeof r);
    r.counts = host.data();
    r.counts_location = GPUHIST_MEMORY_DEVICE;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, c.axes.data(), &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.counts");
    check_context("refuse: device_stats in host memory");
    r.counts = d_counts;
    r.device_stats = stats.data();
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, c.axes.data(), &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.device_stats");
    check_context("refuse: a stream's finish with DEVICE counts");
    gpuhist_points lay = p;
    lay.data = NULL;
    lay.count = 0;
    gpuhist_nd_stream *ns = NULL;
    if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, c.axes.data(), &ns), GPUHIST_OK)) {
        CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &p), GPUHIST_OK);
        r.device_stats = NULL;
        CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "result.counts_location");
    }
    std::vector<uint64_t> got(c.B);
    CUDA_OK(cudaMemcpy(got.data(), d_counts, c.B * 8, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < c.B; ++i)
        CHECK_EQ_U64(got[i], 0);
    cudaFree(d_counts);
    check_context("%s", "");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s parts|nosync|refuse\n", argv[0]);
        return 2;
    }
    const char *env = getenv("GPUHIST_TEST_SEED");
    if (env && *env)
        rng_state = strcmp(env, "random") == 0 ? (uint64_t)time(NULL) | 1u
                                               : strtoull(env, NULL, 0) | 1u;
    printf("test_nd_accumulate %s: seed %llu\n", argv[1], (unsigned long long)rng_state);
    gpuhist_ctx *ctx = NULL;
    gpuhist_status cs = gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (cs != GPUHIST_OK || gpuhist_create(&g_cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "cannot create the contexts: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    if (strcmp(argv[1], "parts") == 0)
        case_parts(ctx);
    else if (strcmp(argv[1], "nosync") == 0)
        case_nosync(ctx);
    else if (strcmp(argv[1], "refuse") == 0)
        case_refuse(ctx);
    else {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    gpuhist_destroy(g_cpu);
    gpuhist_destroy(ctx);
    return check_exit();
}
