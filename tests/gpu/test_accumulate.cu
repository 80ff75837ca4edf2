/*
 * test_accumulate.cu - result.accumulate on CUDA with device samples and device outputs: calls
 * that add into device counts, device_stats and a device weight state equal one call of the CPU
 * backend over the concatenation of their samples, bit for bit, and an asynchronous call does
 * not wait for the device. `test_accumulate <case>`; exit 77 (ctest: skipped) without a GPU.
 *
 * Cases:
 *   counts     unweighted: every CUDA strategy (and auto) that takes the request, u8 / u16 / i32
 *              / f32 / f64 samples with NaN, infinities and outliers, 1 or 3 channels (2
 *              histogrammed), EVEN / EDGES bins from 1 to 20000 (one-block finish and the grid
 *              finish, raw-value folds), both outlier policies; 1 to 5 parts (empty ones too)
 *              added into device counts and device_stats, asynchronously and not (then the
 *              result's own tallies accumulate too); counts, device_stats and tallies against
 *              the CPU backend's one call
 *   weights    f32 and f64 device weights (a few non-finite, heavy cancellation) with device
 *              samples: cuda-weighted-smem, cuda-weighted-global and auto adding into a device
 *              weight state with squares, asynchronously (sums not written; read afterwards
 *              with gpuhist_weight_state_sums on a host copy) and not (sums written from the
 *              accumulated state); the state word for word, the sums and squares bit for bit
 *              and the counts against the CPU backend's one call; accumulating weights without
 *              a state is refused (INVALID_ARGUMENT naming result.weight_state)
 *   nosync     on a stream kept busy by a 200 ms spin kernel, an asynchronous accumulating
 *              call (unweighted, then weighted) returns in less than half of that: it waits
 *              for nothing; the totals are right once the stream is synchronised
 * Seed: GPUHIST_TEST_SEED (printed), a fixed one by default.
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static uint64_t rng_state = 0xACC0517E9E3779B9ull;
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

static gpuhist_ctx *cuda_ctx(void)
{
    gpuhist_ctx *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        printf("no CUDA device: skipped (%s)\n", gpuhist_last_error(NULL));
        exit(77);
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create(cuda): %s\n", gpuhist_last_error(NULL));
        exit(1);
    }
    return ctx;
}

static std::vector<const char *> cuda_strategies(void)
{
    std::vector<const char *> v;
    v.push_back("auto");
    for (size_t i = 0; i < gpuhist_strategy_count(); ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CUDA)
            v.push_back(d.name);
    }
    return v;
}

template <typename T> static T *dev_copy(const std::vector<T> &h)
{
    T *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, h.size() * sizeof(T) + 16));
    if (!h.empty())
        CUDA_OK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

template <typename T> static std::vector<T> host_copy(const T *d, size_t n)
{
    std::vector<T> h(n);
    if (n)
        CUDA_OK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

/* `n` samples of `dt` (NaN, infinities, outliers mixed in for floats). */
static std::vector<unsigned char> make_samples(gpuhist_dtype dt, size_t n)
{
    const size_t sz = gpuhist_dtype_size(dt);
    std::vector<unsigned char> buf(n * sz);
    for (size_t i = 0; i < n; ++i) {
        unsigned char *p = &buf[i * sz];
        double x = unit() * 1.2 - 0.1;
        const uint64_t s = below(64);
        if (s == 0)
            x = NAN;
        else if (s == 1)
            x = INFINITY;
        else if (s == 2)
            x = -INFINITY;
        switch (dt) {
        case GPUHIST_U8: { uint8_t v = (uint8_t)rnd(); memcpy(p, &v, 1); break; }
        case GPUHIST_U16: { uint16_t v = (uint16_t)rnd(); memcpy(p, &v, 2); break; }
        case GPUHIST_I32: { int32_t v = (int32_t)below(3000) - 500; memcpy(p, &v, 4); break; }
        case GPUHIST_F32: { float v = (float)x; memcpy(p, &v, 4); break; }
        default: memcpy(p, &x, 8); break;
        }
    }
    return buf;
}

/* The CPU backend's one call over all the samples. */
struct reference {
    std::vector<uint64_t> counts;
    std::vector<double> sums, sq;
    std::vector<int64_t> state;
    gpuhist_result r;
};

static reference cpu_reference(const gpuhist_samples &s, const gpuhist_bin_spec &b, uint32_t A,
                               gpuhist_dtype wt)
{
    reference e;
    e.counts.assign((size_t)b.bins * A, 0);
    e.r = gpuhist_result_host(e.counts.data());
    if (s.weights) {
        e.sums.assign((size_t)b.bins * A, 0.0);
        e.sq.assign((size_t)b.bins * A, 0.0);
        e.state.assign(gpuhist_weight_state_words(b.bins, A, wt, 1), 0);
        e.r.sums = e.sums.data();
        e.r.sums_squared = e.sq.data();
        e.r.weight_state = e.state.data();
    }
    gpuhist_status st = gpuhist_histogram(g_cpu, &s, &b, &e.r);
    if (st != GPUHIST_OK) {
        fprintf(stderr, "cpu backend: %s\n", gpuhist_last_error(g_cpu));
        exit(1);
    }
    return e;
}

/* Cut points of `parts` parts of n (sorted, some parts empty). */
static std::vector<uint64_t> cuts_of(uint64_t n, int parts)
{
    std::vector<uint64_t> c(parts + 1);
    c[0] = 0;
    c[parts] = n;
    for (int p = 1; p < parts; ++p)
        c[p] = below(n + 1);
    for (int p = 1; p < parts; ++p)
        for (int q = p + 1; q < parts; ++q)
            if (c[q] < c[p])
                std::swap(c[p], c[q]);
    return c;
}

static void case_counts(gpuhist_ctx *ctx)
{
    static const gpuhist_dtype types[] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_I32, GPUHIST_F32,
                                          GPUHIST_F64};
    const std::vector<const char *> names = cuda_strategies();
    for (int ci = 0; ci < 40; ++ci) {
        const gpuhist_dtype t = types[below(5)];
        const uint32_t C = below(3) ? 1u : 3u, A = C == 1 ? 1u : 2u;
        const size_t sz = gpuhist_dtype_size(t);
        const uint64_t pixels = ci % 6 == 0 ? below(50) : 1000 + below(200000);
        std::vector<unsigned char> host = make_samples(t, (size_t)(pixels * C));
        const uint32_t bins = ci % 4 == 0 ? 1u + (uint32_t)below(20000) : 1u + (uint32_t)below(200);
        std::vector<double> edges;
        gpuhist_bin_spec b;
        if (below(3) == 0) {
            edges.resize(bins + 1);
            for (uint32_t i = 0; i <= bins; ++i)
                edges[i] = -0.05 + 1.1 * i / bins;
            if (t == GPUHIST_U8 || t == GPUHIST_U16 || t == GPUHIST_I32)
                for (double &e : edges)
                    e *= 300.0;
            b = gpuhist_bins_edges(bins, edges.data());
        } else {
            b = t == GPUHIST_F32 || t == GPUHIST_F64 ? gpuhist_bins_even(bins, 0.0, 1.0)
                                                     : gpuhist_bins_even(bins, 5.0, 250.0);
        }
        b.outliers = below(2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
        gpuhist_samples hs = gpuhist_samples_1d(host.data(), t, pixels);
        hs.channels = C;
        hs.active_channels = A;
        hs.location = GPUHIST_MEMORY_HOST;
        const reference e = cpu_reference(hs, b, A, GPUHIST_F64);
        unsigned char *d_data = dev_copy(host);
        const size_t nc = (size_t)bins * A;
        uint64_t *d_counts = NULL, *d_stats = NULL;
        CUDA_OK(cudaMalloc((void **)&d_counts, nc * 8));
        CUDA_OK(cudaMalloc((void **)&d_stats, 4 * A * 8));
        const int parts = 1 + (int)below(5);
        const std::vector<uint64_t> cuts = cuts_of(pixels, parts);
        for (const char *name : names) {
            const int async = (int)below(2);
            check_context("counts case %d: %s, %u of %u channels, %llu pixels, %u bins (%s), %s, "
                          "%d parts, %s, %s", ci, gpuhist_dtype_name(t), A, C,
                          (unsigned long long)pixels, bins, edges.empty() ? "even" : "edges",
                          b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop", parts, name,
                          async ? "async" : "sync");
            if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK &&
                       gpuhist_set_async(ctx, async) == GPUHIST_OK))
                continue;
            CUDA_OK(cudaMemset(d_counts, 0, nc * 8));
            CUDA_OK(cudaMemset(d_stats, 0, 4 * A * 8));
            gpuhist_result r = gpuhist_result_host(d_counts);
            r.counts_location = GPUHIST_MEMORY_DEVICE;
            r.device_stats = d_stats;
            r.accumulate = 1;
            gpuhist_status st = GPUHIST_OK;
            for (int p = 0; p < parts && st == GPUHIST_OK; ++p) {
                gpuhist_samples ds = gpuhist_samples_1d(d_data + cuts[p] * C * sz, t,
                                                        cuts[p + 1] - cuts[p]);
                ds.channels = C;
                ds.active_channels = A;
                ds.location = GPUHIST_MEMORY_DEVICE;
                st = gpuhist_histogram(ctx, &ds, &b, &r);
            }
            if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0)
                continue;
            if (!CHECK_MSG(st == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
                continue;
            CUDA_OK(cudaDeviceSynchronize());
            const std::vector<uint64_t> got = host_copy(d_counts, nc);
            const std::vector<uint64_t> stats = host_copy(d_stats, 4 * (size_t)A);
            size_t bad = 0;
            for (size_t i = 0; i < nc; ++i)
                if (got[i] != e.counts[i] && bad++ < 3)
                    CHECK_MSG(0, "count %zu: %llu, one CPU call %llu", i,
                              (unsigned long long)got[i], (unsigned long long)e.counts[i]);
            CHECK_MSG(bad == 0, "%zu counts differ", bad);
            for (uint32_t k = 0; k < A; ++k) {
                CHECK_EQ_U64(stats[4 * k + 0], e.r.underflow[k]);
                CHECK_EQ_U64(stats[4 * k + 1], e.r.overflow[k]);
                CHECK_EQ_U64(stats[4 * k + 2], e.r.nan[k]);
                CHECK_EQ_U64(stats[4 * k + 3], e.r.total[k]);
                if (!async) { /* the result's own tallies accumulate too */
                    CHECK_EQ_U64(r.underflow[k], e.r.underflow[k]);
                    CHECK_EQ_U64(r.overflow[k], e.r.overflow[k]);
                    CHECK_EQ_U64(r.nan[k], e.r.nan[k]);
                    CHECK_EQ_U64(r.total[k], e.r.total[k]);
                }
            }
        }
        gpuhist_set_strategy(ctx, "auto");
        gpuhist_set_async(ctx, 0);
        cudaFree(d_data);
        cudaFree(d_counts);
        cudaFree(d_stats);
    }
    check_context("%s", "");
}

static void case_weights(gpuhist_ctx *ctx)
{
    static const char *const names[] = {"auto", "cuda-weighted-smem", "cuda-weighted-global"};
    /* refused: weights accumulated without a state */
    {
        check_context("weights: refusal");
        std::vector<float> x(10, 0.5f), w(10, 1.0f);
        float *dx = dev_copy(x), *dw = dev_copy(w);
        uint64_t *dc = NULL;
        CUDA_OK(cudaMalloc((void **)&dc, 4 * 8));
        double sums[4];
        gpuhist_samples s = gpuhist_samples_1d(dx, GPUHIST_F32, 10);
        s.location = GPUHIST_MEMORY_DEVICE;
        s.weights = dw;
        s.weight_dtype = GPUHIST_F32;
        gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 1.0);
        gpuhist_result r = gpuhist_result_host(dc);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        r.sums = sums;
        r.accumulate = 1;
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
        cudaFree(dx);
        cudaFree(dw);
        cudaFree(dc);
    }
    for (int ci = 0; ci < 24; ++ci) {
        const gpuhist_dtype t = below(2) ? GPUHIST_F32 : GPUHIST_F64;
        const gpuhist_dtype wt = below(2) ? GPUHIST_F32 : GPUHIST_F64;
        const size_t sz = gpuhist_dtype_size(t), wsz = gpuhist_dtype_size(wt);
        const uint64_t n = ci % 6 == 0 ? below(40) : 1000 + below(300000);
        std::vector<unsigned char> xs = make_samples(t, (size_t)n), ws((size_t)n * wsz);
        const int nonfinite = below(3) == 0;
        for (uint64_t i = 0; i < n; ++i) {
            double w = (below(2) ? 1e12 : -1e12) + (unit() - 0.5) * ldexp(1.0, (int)below(30));
            if (nonfinite && below(5000) == 0)
                w = below(3) == 0 ? NAN : below(2) ? INFINITY : -INFINITY;
            if (wt == GPUHIST_F32) {
                float f = (float)w;
                memcpy(&ws[i * wsz], &f, 4);
            } else {
                memcpy(&ws[i * wsz], &w, 8);
            }
        }
        const uint32_t bins = ci % 5 == 0 ? 1u + (uint32_t)below(3000) : 1u + (uint32_t)below(120);
        gpuhist_bin_spec b = gpuhist_bins_even(bins, 0.0, 1.0);
        b.outliers = below(2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
        gpuhist_samples hs = gpuhist_samples_1d(xs.data(), t, n);
        hs.location = GPUHIST_MEMORY_HOST;
        hs.weights = ws.data();
        hs.weight_dtype = wt;
        const reference e = cpu_reference(hs, b, 1, wt);
        unsigned char *dx = dev_copy(xs), *dw = dev_copy(ws);
        const size_t words = gpuhist_weight_state_words(bins, 1, wt, 1);
        int64_t *d_state = NULL;
        uint64_t *d_counts = NULL, *d_stats = NULL;
        CUDA_OK(cudaMalloc((void **)&d_state, words * 8));
        CUDA_OK(cudaMalloc((void **)&d_counts, (size_t)bins * 8));
        CUDA_OK(cudaMalloc((void **)&d_stats, 4 * 8));
        const int parts = 1 + (int)below(5);
        const std::vector<uint64_t> cuts = cuts_of(n, parts);
        for (const char *name : names) {
            for (int async = 0; async < 2; ++async) {
                check_context("weights case %d: %s samples, %s weights, %llu, %u bins, %s, %d "
                              "parts, %s, %s", ci, gpuhist_dtype_name(t), gpuhist_dtype_name(wt),
                              (unsigned long long)n, bins,
                              b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop", parts,
                              name, async ? "async" : "sync");
                if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK &&
                           gpuhist_set_async(ctx, async) == GPUHIST_OK))
                    continue;
                CUDA_OK(cudaMemset(d_state, 0, words * 8));
                CUDA_OK(cudaMemset(d_counts, 0, (size_t)bins * 8));
                CUDA_OK(cudaMemset(d_stats, 0, 4 * 8));
                std::vector<double> sums(bins, -1.0), sq(bins, -1.0);
                gpuhist_result r = gpuhist_result_host(d_counts);
                r.counts_location = GPUHIST_MEMORY_DEVICE;
                r.device_stats = d_stats;
                r.sums = sums.data();
                r.sums_squared = sq.data();
                r.weight_state = d_state;
                r.accumulate = 1;
                gpuhist_status st = GPUHIST_OK;
                for (int p = 0; p < parts && st == GPUHIST_OK; ++p) {
                    gpuhist_samples ds = gpuhist_samples_1d(dx + cuts[p] * sz, t,
                                                            cuts[p + 1] - cuts[p]);
                    ds.location = GPUHIST_MEMORY_DEVICE;
                    ds.weights = dw + cuts[p] * wsz;
                    ds.weight_dtype = wt;
                    st = gpuhist_histogram(ctx, &ds, &b, &r);
                }
                if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0)
                    continue;
                if (!CHECK_MSG(st == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
                    continue;
                CUDA_OK(cudaDeviceSynchronize());
                const std::vector<int64_t> state = host_copy(d_state, words);
                const std::vector<uint64_t> counts = host_copy(d_counts, bins);
                const std::vector<uint64_t> stats = host_copy(d_stats, 4);
                std::vector<double> s2(bins), q2(bins);
                CHECK_EQ_INT(gpuhist_weight_state_sums(state.data(), bins, 1, wt, 1, b.outliers,
                                                       s2.data(), q2.data()),
                             GPUHIST_OK);
                size_t bad = 0;
                for (size_t i = 0; i < words; ++i)
                    if (state[i] != e.state[i] && bad++ < 3)
                        CHECK_MSG(0, "state word %zu: %lld, one CPU call %lld", i,
                                  (long long)state[i], (long long)e.state[i]);
                CHECK_MSG(bad == 0, "%zu state words differ", bad);
                for (uint32_t i = 0; i < bins; ++i) {
                    CHECK_EQ_U64(counts[i], e.counts[i]);
                    CHECK_EQ_F64_BITS(s2[i], e.sums[i]);
                    CHECK_EQ_F64_BITS(q2[i], e.sq[i]);
                    if (!async) { /* written from the accumulated state by the last call */
                        CHECK_EQ_F64_BITS(sums[i], e.sums[i]);
                        CHECK_EQ_F64_BITS(sq[i], e.sq[i]);
                    } else {
                        CHECK_EQ_F64_BITS(sums[i], -1.0); /* not written */
                    }
                }
                CHECK_EQ_U64(stats[0], e.r.underflow[0]);
                CHECK_EQ_U64(stats[1], e.r.overflow[0]);
                CHECK_EQ_U64(stats[2], e.r.nan[0]);
                CHECK_EQ_U64(stats[3], e.r.total[0]);
            }
        }
        gpuhist_set_strategy(ctx, "auto");
        gpuhist_set_async(ctx, 0);
        cudaFree(dx);
        cudaFree(dw);
        cudaFree(d_state);
        cudaFree(d_counts);
        cudaFree(d_stats);
    }
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
    const uint64_t n = 1u << 20;
    std::vector<float> x(n), w(n);
    for (uint64_t i = 0; i < n; ++i) {
        x[i] = (float)unit();
        w[i] = (float)unit();
    }
    float *dx = dev_copy(x), *dw = dev_copy(w);
    const uint32_t bins = 100;
    const size_t words = gpuhist_weight_state_words(bins, 1, GPUHIST_F32, 1);
    int64_t *d_state = NULL;
    uint64_t *d_counts = NULL, *d_stats = NULL;
    CUDA_OK(cudaMalloc((void **)&d_state, words * 8));
    CUDA_OK(cudaMalloc((void **)&d_counts, bins * 8));
    CUDA_OK(cudaMalloc((void **)&d_stats, 4 * 8));
    gpuhist_bin_spec b = gpuhist_bins_even(bins, 0.0, 1.0);
    for (int weighted = 0; weighted < 2; ++weighted) {
        check_context("nosync, %s", weighted ? "f32 weights" : "unweighted");
        CUDA_OK(cudaMemset(d_state, 0, words * 8));
        CUDA_OK(cudaMemset(d_counts, 0, bins * 8));
        CUDA_OK(cudaMemset(d_stats, 0, 4 * 8));
        std::vector<double> sums(bins), sq(bins);
        gpuhist_samples s = gpuhist_samples_1d(dx, GPUHIST_F32, n);
        s.location = GPUHIST_MEMORY_DEVICE;
        gpuhist_result r = gpuhist_result_host(d_counts);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        r.device_stats = d_stats;
        r.accumulate = 1;
        if (weighted) {
            s.weights = dw;
            s.weight_dtype = GPUHIST_F32;
            r.sums = sums.data();
            r.sums_squared = sq.data();
            r.weight_state = d_state;
        }
        /* one call first: the context's buffers exist, nothing is allocated while timing */
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK);
        CUDA_OK(cudaStreamSynchronize(strm));
        k_spin<<<1, 1, 0, strm>>>(cycles);
        CUDA_OK(cudaGetLastError());
        const double t0 = now();
        gpuhist_status st = gpuhist_histogram(ctx, &s, &b, &r);
        const double took = now() - t0;
        CUDA_OK(cudaStreamSynchronize(strm));
        const double spun = now() - t0;
        CHECK_EQ_INT(st, GPUHIST_OK);
        printf("  %s: the call took %.3f ms on a stream busy for %.3f ms\n",
               weighted ? "weighted" : "unweighted", took * 1e3, spun * 1e3);
        CHECK_MSG(took < spun / 2, "the call waited: %.3f ms of %.3f ms", took * 1e3, spun * 1e3);
        /* two fills of the same samples: twice one CPU call */
        gpuhist_samples hs = gpuhist_samples_1d(x.data(), GPUHIST_F32, n);
        hs.location = GPUHIST_MEMORY_HOST;
        if (weighted) {
            hs.weights = w.data();
            hs.weight_dtype = GPUHIST_F32;
        }
        std::vector<uint64_t> want(bins), want_acc(bins, 0);
        std::vector<double> ws(bins), wq(bins), got_s(bins), got_q(bins);
        std::vector<int64_t> wstate(words, 0);
        gpuhist_result c = gpuhist_result_host(want_acc.data());
        c.accumulate = 1;
        if (weighted) {
            c.sums = ws.data();
            c.sums_squared = wq.data();
            c.weight_state = wstate.data();
        }
        CHECK_EQ_INT(gpuhist_histogram(g_cpu, &hs, &b, &c), GPUHIST_OK);
        CHECK_EQ_INT(gpuhist_histogram(g_cpu, &hs, &b, &c), GPUHIST_OK);
        const std::vector<uint64_t> counts = host_copy(d_counts, bins);
        for (uint32_t i = 0; i < bins; ++i)
            CHECK_EQ_U64(counts[i], want_acc[i]);
        if (weighted) {
            const std::vector<int64_t> state = host_copy(d_state, words);
            gpuhist_weight_state_sums(state.data(), bins, 1, GPUHIST_F32, 1,
                                      GPUHIST_OUTLIERS_DROP, got_s.data(), got_q.data());
            for (uint32_t i = 0; i < bins; ++i) {
                CHECK_EQ_F64_BITS(got_s[i], ws[i]);
                CHECK_EQ_F64_BITS(got_q[i], wq[i]);
            }
        }
    }
    gpuhist_set_async(ctx, 0);
    gpuhist_set_stream(ctx, NULL);
    cudaFree(dx);
    cudaFree(dw);
    cudaFree(d_state);
    cudaFree(d_counts);
    cudaFree(d_stats);
    cudaStreamDestroy(strm);
    check_context("%s", "");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s counts|weights|nosync\n", argv[0]);
        return 2;
    }
    const char *env = getenv("GPUHIST_TEST_SEED");
    if (env && *env)
        rng_state = strcmp(env, "random") == 0 ? (uint64_t)time(NULL) | 1u
                                               : strtoull(env, NULL, 0) | 1u;
    printf("test_accumulate %s: seed %llu\n", argv[1], (unsigned long long)rng_state);
    gpuhist_ctx *ctx = cuda_ctx();
    if (gpuhist_create(&g_cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
    if (strcmp(argv[1], "counts") == 0)
        case_counts(ctx);
    else if (strcmp(argv[1], "weights") == 0)
        case_weights(ctx);
    else if (strcmp(argv[1], "nosync") == 0)
        case_nosync(ctx);
    else {
        fprintf(stderr, "unknown case %s\n", argv[1]);
        return 2;
    }
    gpuhist_destroy(g_cpu);
    gpuhist_destroy(ctx);
    return check_exit();
}
