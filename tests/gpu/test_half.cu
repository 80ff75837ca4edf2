/*
 * test_half.cu - f16 and bf16 samples on the CUDA backend against the CPU backend, bit for bit,
 * through the public API. `test_half <case>` runs one case; exit 77 (ctest: skipped) without a
 * GPU.
 *
 * Mechanism under test: CUDA counts half-precision samples by their 65536 bit patterns
 * (cuda-fast-packed16, a GPUHIST_CAP_VALUES strategy) and the backend's fold maps each pattern to
 * its bin (binmap.h widens it exactly to float); cuda-half-pairs counts the certified slots of
 * one channel on even bins (test_half_pairs_cuda.cu), refusing other specs by name;
 * cuda-global-atomic maps each sample itself (the only strategy for several channels); every
 * other strategy refuses f16/bf16 by its dtype mask.
 *
 * Data sets (fixed seed, printed): every one of the 65536 bit patterns once (NaNs, infinities,
 * +-0.0, subnormals), and 2^24 samples: random bit patterns, then runs of one hot value (90%)
 * and of a constant, so the packed 16-bit counters carry many times.
 *
 * Cases:
 *   all      every bin spec below, f16 and bf16, host / device / device at an odd address,
 *            counts on host and on device, auto and every CUDA strategy: the accepting ones give
 *            the CPU's counts, tallies, range and edges; the others refuse by name (UNSUPPORTED,
 *            "cannot histogram f16 samples"); specs the CPU refuses are refused alike. The
 *            all-patterns counts are also recounted here from the edges with half_test.h's
 *            widening (independent of the library)
 *   minmax   gpuhist_minmax of host and device data equals the CPU's (all patterns, random,
 *            no finite value, only zeros, one subnormal)
 *   stream   streams fed pageable host chunks, lent page-locked buffers and device chunks at odd
 *            offsets, in random sizes (odd counts included), auto and the accepting strategies
 *   channels 3 interleaved channels (a mask, the first two) in a ROI with an odd byte stride,
 *            host and device: auto and cuda-global-atomic give the CPU's counts,
 *            cuda-fast-packed16 refuses
 *   refuse   integer bins refused as on the CPU; weighted half samples refused by name
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <string>
#include <vector>

#include "../unit/half_test.h"
#include "cuda_test.cuh"

static const uint64_t SEED = 0x5EEDF16Bull; /* rng_state (cuda_test.cuh) from main */

static gpuhist_ctx *cpu_ctx(void)
{
    static gpuhist_ctx *cpu = NULL;
    if (!cpu && (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
                 gpuhist_set_strategy(cpu, "cpu-reference") != GPUHIST_OK)) {
        fprintf(stderr, "cannot create the cpu-reference context\n");
        exit(1);
    }
    return cpu;
}

/* Does strategy `name` take unweighted half-precision samples in `channels` channels?
 * cuda-half-pairs takes one channel of the even specs whose slots certify
 * (test_half_pairs_cuda.cu checks which); it refuses the others as the rest do. */
static bool takes_half(const char *name, uint32_t channels)
{
    if (!strcmp(name, "auto") || !strcmp(name, "cuda-global-atomic"))
        return true;
    return channels == 1 &&
           (!strcmp(name, "cuda-fast-packed16") || !strcmp(name, "cuda-half-pairs"));
}

/* ---- data --------------------------------------------------------------------------------------- */

static std::vector<uint16_t> all_patterns(void)
{
    std::vector<uint16_t> v(65536);
    for (uint32_t i = 0; i < 65536u; ++i)
        v[i] = (uint16_t)i;
    return v;
}

/* 2^24 samples: 3/8 random bit patterns, 3/8 with 90% one value (1.0 in both types), 1/4 one
 * constant (-0.0); the runs are long enough for many carries of every packed 16-bit counter of
 * the hot keys. */
static std::vector<uint16_t> big_mix(gpuhist_dtype dt)
{
    const size_t n = (size_t)1 << 24;
    std::vector<uint16_t> v(n);
    const uint16_t one = dt == GPUHIST_F16 ? 0x3c00u : 0x3f80u;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t r = rnd();
        if (i < n / 8 * 3)
            v[i] = (uint16_t)(r >> 24);
        else if (i < n / 4 * 3)
            v[i] = (r % 10u) ? one : (uint16_t)(r >> 24);
        else
            v[i] = 0x8000u;
    }
    return v;
}

/* ---- specs -------------------------------------------------------------------------------------- */

struct spec_case {
    const char *what;
    gpuhist_bin_spec b;
};

static std::vector<spec_case> specs(gpuhist_dtype dt)
{
    static const double e1[] = {-1.0, -0.5, 0.0, 0.25, 1.0};
    static const double e2[] = {-65504.0, -1e-7, 0.0, 6e-8, 1e-4, 2048.0, 2049.0, 2050.0};
    static const double e3[] = {-3e38, -1.0, -1e-38, 0.0, 1e-40, 1.5, 1e30, 3e38};
    std::vector<spec_case> v;
    gpuhist_bin_spec b;
    if (dt == GPUHIST_F16) {
        v.push_back({"256 even [-1, 1]", gpuhist_bins_even(256, -1.0, 1.0)});
        v.push_back({"1000 even [-300, 700]", gpuhist_bins_even(1000, -300.0, 700.0)});
        v.push_back({"7 even [-65504, 65504]", gpuhist_bins_even(7, -65504.0, 65504.0)});
        v.push_back({"100 even [-3e-5, 2e-5]", gpuhist_bins_even(100, -3e-5, 2e-5)});
        v.push_back({"5 even [1000, 1010]", gpuhist_bins_even(5, 1000.0, 1010.0)});
        v.push_back({"2048 even [0.1, 1000.3]", gpuhist_bins_even(2048, 0.1, 1000.3)});
        v.push_back({"65536 even [-2, 2] (edges collapse)", gpuhist_bins_even(65536, -2.0, 2.0)});
        v.push_back({"edges e2", gpuhist_bins_edges(7, e2)});
    } else {
        v.push_back({"256 even [-3e38, 3e38]", gpuhist_bins_even(256, -3e38, 3e38)});
        v.push_back({"256 even [0, 1]", gpuhist_bins_even(256, 0.0, 1.0)});
        v.push_back({"50 even [1e-39, 1e-38]", gpuhist_bins_even(50, 1e-39, 1e-38)});
        v.push_back({"65536 even [-2, 2]", gpuhist_bins_even(65536, -2.0, 2.0)});
        v.push_back({"edges e3", gpuhist_bins_edges(7, e3)});
    }
    v.push_back({"edges e1", gpuhist_bins_edges(4, e1)});
    v.push_back({"auto 256", gpuhist_bins_auto(256)});
    v.push_back({"auto 3", gpuhist_bins_auto(3)});
    b = gpuhist_bins_even(10, -1.0, 1.0);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    b.last_edge_inclusive = 1;
    v.push_back({"10 even [-1, 1] clamp, last inclusive", b});
    return v;
}

/* ---- expectation and comparison -------------------------------------------------------------- */

struct half_expected {
    gpuhist_status st;
    std::vector<uint64_t> counts;
    std::vector<double> edges;
    gpuhist_result r;
};

static half_expected half_reference(const gpuhist_samples *s, const gpuhist_bin_spec *b)
{
    half_expected e;
    const uint32_t ch = s->channels ? s->channels : 1;
    e.counts.assign((size_t)b->bins * ch, 0);
    e.edges.assign((size_t)b->bins + 1, 0.0);
    e.r = gpuhist_result_host(e.counts.data());
    e.r.edges = e.edges.data();
    gpuhist_samples h = *s;
    h.location = GPUHIST_MEMORY_HOST;
    e.st = gpuhist_histogram(cpu_ctx(), &h, b, &e.r);
    if (e.st == GPUHIST_OK)
        e.counts.resize((size_t)b->bins * e.r.channels);
    return e;
}

static void compare(const half_expected &e, const gpuhist_result &r, const uint64_t *counts,
                    const double *edges)
{
    compare(expected{e.counts, e.r}, r, counts, 1); /* cuda_test.cuh: counts, tallies, range */
    if (edges) {
        size_t ebad = 0;
        for (size_t i = 0; i < e.edges.size(); ++i)
            if (memcmp(&edges[i], &e.edges[i], sizeof(double)) != 0 && ebad++ < 3)
                CHECK_MSG(0, "edge[%zu] = %a, expected %a", i, edges[i], e.edges[i]);
        CHECK_MSG(ebad == 0, "%zu edges differ", ebad);
    }
}

/* The counts of single-channel half samples under the CPU's edges, recounted here: each value
 * widened by half_test.h, bin i holds E[i] <= x < E[i+1] (the last also E[n] when the rule says
 * so), outliers clamped when asked. */
static void recount(const std::vector<uint16_t> &v, gpuhist_dtype dt, const gpuhist_bin_spec *b,
                    const half_expected &e)
{
    const std::vector<double> &E = e.edges;
    const size_t n = E.size() - 1;
    std::vector<uint64_t> c(n, 0);
    uint64_t under = 0, over = 0, nan = 0;
    for (uint16_t h : v) {
        const double x = dt == GPUHIST_F16 ? test_f16_value(h) : test_bf16_value(h);
        if (x != x) {
            ++nan;
            continue;
        }
        if (x < E[0]) {
            ++under;
            if (b->outliers == GPUHIST_OUTLIERS_CLAMP)
                ++c[0];
            continue;
        }
        if (x > E[n] || (x == E[n] && !e.r.last_edge_inclusive)) {
            ++over;
            if (b->outliers == GPUHIST_OUTLIERS_CLAMP)
                ++c[n - 1];
            continue;
        }
        size_t i = (size_t)(std::upper_bound(E.begin(), E.end(), x) - E.begin()) - 1;
        if (i == n)
            i = n - 1;
        ++c[i];
    }
    CHECK_MSG(c == e.counts, "the CPU's counts are not those of its edges (recounted)");
    CHECK_EQ_U64(e.r.underflow[0], under);
    CHECK_EQ_U64(e.r.overflow[0], over);
    CHECK_EQ_U64(e.r.nan[0], nan);
}

/* Run every CUDA strategy (and auto) on `s`, counts on host or device: the accepting ones must
 * give `e`, the others refuse by name. */
static void every_strategy(gpuhist_ctx *ctx, const gpuhist_samples *s, const gpuhist_bin_spec *b,
                           const half_expected &e, int counts_on_device, const char *what)
{
    const size_t n = (size_t)b->bins * GPUHIST_MAX_CHANNELS;
    uint64_t *d_counts = NULL;
    if (counts_on_device)
        CUDA_OK(cudaMalloc(&d_counts, n * sizeof(uint64_t)));
    std::vector<uint64_t> counts(n);
    std::vector<double> edges((size_t)b->bins + 1);
    const uint32_t ch = s->channels ? s->channels : 1;
    for (const char *name : cuda_strategies()) {
        check_context("%s, %s, counts on %s", what, name, counts_on_device ? "device" : "host");
        if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK))
            continue;
        std::fill(counts.begin(), counts.end(), 0xdeadbeefull);
        std::fill(edges.begin(), edges.end(), -1.0);
        gpuhist_result r = gpuhist_result_host(counts_on_device ? d_counts : counts.data());
        r.edges = edges.data();
        if (counts_on_device) {
            r.counts_location = GPUHIST_MEMORY_DEVICE;
            CUDA_OK(cudaMemset(d_counts, 0xab, n * sizeof(uint64_t)));
        }
        const gpuhist_status st = gpuhist_histogram(ctx, s, b, &r);
        if (e.st != GPUHIST_OK) {
            /* a spec the CPU refuses (e.g. edges that do not increase) is refused alike */
            CHECK_MSG(st == e.st, "status %s, the CPU's %s (%s)", gpuhist_status_string(st),
                      gpuhist_status_string(e.st), gpuhist_last_error(ctx));
            continue;
        }
        if (!takes_half(name, ch) ||
            (!strcmp(name, "cuda-half-pairs") && st == GPUHIST_ERROR_UNSUPPORTED)) {
            const char *msg = gpuhist_last_error(ctx);
            const std::string want = std::string("cannot histogram ") +
                                     gpuhist_dtype_name(s->dtype) + " samples";
            CHECK_MSG(st == GPUHIST_ERROR_UNSUPPORTED && strstr(msg, want.c_str()),
                      "expected a refusal naming the type, got %s: %s",
                      gpuhist_status_string(st), msg);
            continue;
        }
        if (!CHECK_MSG(st == GPUHIST_OK, "status %s: %s", gpuhist_status_string(st),
                       gpuhist_last_error(ctx)))
            continue;
        if (counts_on_device)
            CUDA_OK(cudaMemcpy(counts.data(), d_counts, e.counts.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost));
        compare(e, r, counts.data(), edges.data());
        if (strcmp(name, "auto") != 0)
            CHECK_EQ_STR(r.strategy, name);
        else
            CHECK_MSG(takes_half(r.strategy, ch) && strcmp(r.strategy, "auto") != 0,
                      "auto chose %s", r.strategy);
    }
    gpuhist_set_strategy(ctx, "auto");
    check_context("%s", "");
    cudaFree(d_counts);
}

/* ---- cases -------------------------------------------------------------------------------------- */

static const gpuhist_dtype HALVES[2] = {GPUHIST_F16, GPUHIST_BF16};

static void case_all(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    for (gpuhist_dtype dt : HALVES) {
        for (int set = 0; set < 2; ++set) {
            const std::vector<uint16_t> v = set == 0 ? all_patterns() : big_mix(dt);
            const char *sname = set == 0 ? "all patterns" : "2^24 mixed";
            const size_t bytes = v.size() * 2;
            void *base_a = NULL, *base_u = NULL;
            const void *dev_a = to_device(v.data(), bytes, 0, &base_a);
            const void *dev_u = to_device(v.data(), bytes, 1, &base_u); /* odd address */
            for (const spec_case &sc : specs(dt)) {
                gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
                s.location = GPUHIST_MEMORY_HOST;
                const half_expected e = half_reference(&s, &sc.b);
                if (set == 0 && e.st == GPUHIST_OK) {
                    check_context("%s %s %s: recount", gpuhist_dtype_name(dt), sname, sc.what);
                    recount(v, dt, &sc.b, e);
                }
                char what[256];
                snprintf(what, sizeof what, "%s %s %s, host", gpuhist_dtype_name(dt), sname,
                         sc.what);
                every_strategy(ctx, &s, &sc.b, e, 0, what);
                s = gpuhist_samples_1d(dev_a, dt, v.size());
                s.location = GPUHIST_MEMORY_DEVICE;
                snprintf(what, sizeof what, "%s %s %s, device", gpuhist_dtype_name(dt), sname,
                         sc.what);
                every_strategy(ctx, &s, &sc.b, e, 0, what);
                every_strategy(ctx, &s, &sc.b, e, 1, what);
                s = gpuhist_samples_1d(dev_u, dt, v.size());
                s.location = GPUHIST_MEMORY_DEVICE;
                snprintf(what, sizeof what, "%s %s %s, device at an odd address",
                         gpuhist_dtype_name(dt), sname, sc.what);
                every_strategy(ctx, &s, &sc.b, e, 0, what);
            }
            cudaFree(base_a);
            cudaFree(base_u);
        }
    }
    gpuhist_destroy(ctx);
}

static void minmax_one(gpuhist_ctx *ctx, const std::vector<uint16_t> &v, gpuhist_dtype dt,
                       const char *what)
{
    check_context("minmax %s %s", gpuhist_dtype_name(dt), what);
    gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
    s.location = GPUHIST_MEMORY_HOST;
    double lo0 = 0, hi0 = 0, lo = 0, hi = 0;
    int f0 = -1, f = -1;
    if (!CHECK_EQ_INT(gpuhist_minmax(cpu_ctx(), &s, &lo0, &hi0, &f0), GPUHIST_OK))
        return;
    void *base = NULL;
    for (int where = 0; where < 3; ++where) {
        if (where > 0) {
            s.data = to_device(v.data(), v.size() * 2, where == 2 ? 1 : 0, &base);
            s.location = GPUHIST_MEMORY_DEVICE;
        }
        f = -1;
        if (CHECK_MSG(gpuhist_minmax(ctx, &s, &lo, &hi, &f) == GPUHIST_OK, "%s",
                      gpuhist_last_error(ctx))) {
            CHECK_EQ_INT(f, f0);
            if (f0) {
                CHECK_EQ_F64_BITS(lo, lo0);
                CHECK_EQ_F64_BITS(hi, hi0);
            }
        }
        if (where > 0)
            cudaFree(base);
    }
}

static void case_minmax(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    for (gpuhist_dtype dt : HALVES) {
        minmax_one(ctx, all_patterns(), dt, "all patterns");
        minmax_one(ctx, big_mix(dt), dt, "2^24 mixed");
        const uint16_t nan = dt == GPUHIST_F16 ? 0x7e00u : 0x7fc0u;
        const uint16_t inf = dt == GPUHIST_F16 ? 0x7c00u : 0x7f80u;
        minmax_one(ctx, std::vector<uint16_t>{nan, inf, (uint16_t)(inf | 0x8000u), nan}, dt,
                   "no finite value");
        minmax_one(ctx, std::vector<uint16_t>{0x8000u, 0x0000u, nan, 0x8000u}, dt, "zeros");
        minmax_one(ctx, std::vector<uint16_t>{0x8001u}, dt, "one negative subnormal");
    }
    gpuhist_destroy(ctx);
}

/* Feed `v` to a stream in random chunk sizes: 0 pageable host chunks, 1 lent buffers, 2 device
 * chunks (every other one at an odd address). */
static void stream_one(gpuhist_ctx *ctx, const std::vector<uint16_t> &v, gpuhist_dtype dt,
                       const gpuhist_bin_spec *b, int mode, const char *what)
{
    gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
    s.location = GPUHIST_MEMORY_HOST;
    const half_expected e = half_reference(&s, b);
    if (!CHECK_MSG(e.st == GPUHIST_OK, "cpu: %s", gpuhist_last_error(cpu_ctx())))
        return;
    gpuhist_samples layout = gpuhist_samples_1d(NULL, dt, 0);
    layout.location = mode == 2 ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    void *dbase = NULL;
    const unsigned char *dev = NULL;
    if (mode == 2)
        dev = (const unsigned char *)to_device(v.data(), v.size() * 2, 0, &dbase);
    unsigned char *odd = NULL; /* device copy of a chunk at an odd address */
    if (mode == 2)
        CUDA_OK(cudaMalloc((void **)&odd, v.size() * 2 + 16));
    for (const char *name : {"auto", "cuda-fast-packed16", "cuda-global-atomic"}) {
        check_context("stream %s %s, %s, %s", gpuhist_dtype_name(dt), what,
                      mode == 0 ? "pageable host" : mode == 1 ? "lent buffers" : "device", name);
        gpuhist_set_strategy(ctx, name);
        gpuhist_stream *st = NULL;
        if (!CHECK_MSG(gpuhist_stream_begin(ctx, &layout, b, GPUHIST_MEMORY_HOST, &st) ==
                           GPUHIST_OK,
                       "%s", gpuhist_last_error(ctx)))
            continue;
        size_t done = 0;
        int k = 0;
        while (done < v.size()) {
            size_t take = (size_t)(rnd() % 3000001u) + 1u;
            if (rnd() % 4 == 0)
                take = (size_t)(rnd() % 17u) + 1u; /* tiny chunks: odd element counts */
            take = std::min(take, v.size() - done);
            gpuhist_status fs;
            if (mode == 0) {
                fs = gpuhist_stream_feed(st, v.data() + done, take);
            } else if (mode == 1) {
                void *buf = NULL;
                fs = gpuhist_stream_buffer(st, take * 2, &buf);
                if (fs == GPUHIST_OK) {
                    memcpy(buf, v.data() + done, take * 2);
                    fs = gpuhist_stream_submit(st, buf, take);
                }
            } else if (k++ % 2) {
                CUDA_OK(cudaMemcpy(odd + 1, dev + done * 2, take * 2, cudaMemcpyDeviceToDevice));
                fs = gpuhist_stream_feed(st, odd + 1, take);
                CUDA_OK(cudaDeviceSynchronize()); /* the odd buffer is reused next time */
            } else {
                fs = gpuhist_stream_feed(st, dev + done * 2, take);
            }
            if (!CHECK_MSG(fs == GPUHIST_OK, "%s", gpuhist_stream_error(st)))
                break;
            done += take;
        }
        std::vector<uint64_t> counts(b->bins, 0xdeadbeefull);
        std::vector<double> edges((size_t)b->bins + 1);
        gpuhist_result r = gpuhist_result_host(counts.data());
        r.edges = edges.data();
        const gpuhist_status fst = gpuhist_stream_finish(st, &r);
        if (done == v.size() &&
            CHECK_MSG(fst == GPUHIST_OK, "finish: %s", gpuhist_last_error(ctx))) {
            compare(e, r, counts.data(), edges.data());
            if (strcmp(name, "auto") != 0)
                CHECK_EQ_STR(r.strategy, name);
        }
    }
    gpuhist_set_strategy(ctx, "auto");
    cudaFree(dbase);
    cudaFree(odd);
}

static void case_stream(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    static const double e1[] = {-1.0, -0.5, 0.0, 0.25, 1.0};
    for (gpuhist_dtype dt : HALVES) {
        const std::vector<uint16_t> all = all_patterns(), mix = big_mix(dt);
        const gpuhist_bin_spec even = gpuhist_bins_even(256, -1.0, 1.0);
        const gpuhist_bin_spec edges = gpuhist_bins_edges(4, e1);
        for (int mode = 0; mode < 3; ++mode) {
            stream_one(ctx, all, dt, &even, mode, "all patterns, 256 even");
            stream_one(ctx, mix, dt, &even, mode, "2^24 mixed, 256 even");
            stream_one(ctx, mix, dt, &edges, mode, "2^24 mixed, edges");
        }
    }
    gpuhist_destroy(ctx);
}

static void case_channels(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    for (gpuhist_dtype dt : HALVES) {
        /* 3 channels, 1000 pixels per row, rows 6001 bytes apart (not a multiple of 2) */
        const uint64_t rows = 700, len = 1000;
        const size_t stride = len * 3 * 2 + 1;
        std::vector<unsigned char> buf(rows * stride);
        for (size_t i = 0; i < buf.size(); ++i)
            buf[i] = (unsigned char)(rnd() >> 32);
        /* every bit pattern once, pattern p in pixel p, channel p % 3 */
        for (uint32_t p = 0; p < 65536u; ++p) {
            const uint64_t px = p % (rows * len);
            const uint32_t c = (p / (uint32_t)(rows * len) + p) % 3u;
            const uint16_t h = (uint16_t)p;
            memcpy(&buf[(px / len) * stride + (px % len) * 6 + c * 2], &h, 2);
        }
        void *base = NULL;
        const void *dev = to_device(buf.data(), buf.size(), 0, &base);
        for (int sel = 0; sel < 2; ++sel) {
            for (int where = 0; where < 2; ++where) {
                gpuhist_samples s = gpuhist_samples_1d(where ? dev : buf.data(), dt, 0);
                s.rows = rows;
                s.row_length = len;
                s.row_stride = stride;
                s.channels = 3;
                if (sel == 0)
                    s.channel_mask = 0x5u;
                else
                    s.active_channels = 2;
                s.location = where ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
                for (const spec_case &sc : specs(dt)) {
                    gpuhist_samples h = s;
                    h.data = buf.data();
                    const half_expected e = half_reference(&h, &sc.b);
                    char what[256];
                    snprintf(what, sizeof what, "%s 3 channels (%s), ROI, %s, %s",
                             gpuhist_dtype_name(dt), sel == 0 ? "mask 0x5" : "first 2",
                             where ? "device" : "host", sc.what);
                    every_strategy(ctx, &s, &sc.b, e, 0, what);
                }
            }
        }
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

static void case_refuse(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const std::vector<uint16_t> v = all_patterns();
    for (gpuhist_dtype dt : HALVES) {
        check_context("refuse %s", gpuhist_dtype_name(dt));
        gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
        s.location = GPUHIST_MEMORY_HOST;
        /* integer bins: refused by both backends alike */
        const gpuhist_bin_spec ib = gpuhist_bins_integer(10, 0);
        const half_expected e = half_reference(&s, &ib);
        std::vector<uint64_t> counts(10);
        gpuhist_result r = gpuhist_result_host(counts.data());
        const gpuhist_status st = gpuhist_histogram(ctx, &s, &ib, &r);
        CHECK_MSG(e.st != GPUHIST_OK && st == e.st, "integer bins: cpu %s, cuda %s (%s)",
                  gpuhist_status_string(e.st), gpuhist_status_string(st),
                  gpuhist_last_error(ctx));
        /* weights: the CUDA strategies that sum weights do not read half samples */
        std::vector<float> w(v.size(), 1.0f);
        s.weights = w.data();
        s.weight_dtype = GPUHIST_F32;
        std::vector<double> sums(16);
        const gpuhist_bin_spec eb = gpuhist_bins_even(16, -1.0, 1.0);
        std::vector<uint64_t> c16(16);
        r = gpuhist_result_host(c16.data());
        r.sums = sums.data();
        const gpuhist_status ws = gpuhist_histogram(ctx, &s, &eb, &r);
        CHECK_MSG(ws == GPUHIST_ERROR_UNSUPPORTED &&
                      strstr(gpuhist_last_error(ctx), gpuhist_dtype_name(dt)),
                  "weighted: %s: %s", gpuhist_status_string(ws), gpuhist_last_error(ctx));
    }
    check_context("%s", "");
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_half all|minmax|stream|channels|refuse\n");
        return 2;
    }
    rng_state = SEED;
    printf("seed 0x%llx\n", (unsigned long long)SEED);
    const char *c = argv[1];
    if (!strcmp(c, "all"))
        case_all();
    else if (!strcmp(c, "minmax"))
        case_minmax();
    else if (!strcmp(c, "stream"))
        case_stream();
    else if (!strcmp(c, "channels"))
        case_channels();
    else if (!strcmp(c, "refuse"))
        case_refuse();
    else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    return check_exit();
}
