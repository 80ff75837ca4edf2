/*
 * test_cuda.cu - CUDA-only tests of gpuhist, through the public API (plus the CUDA runtime for
 * device buffers). `test_cuda <case>` runs one case; exit 77 (ctest: skipped) without a GPU.
 *
 * Cases:
 *   big_u8       > 2^32 u8 samples in one call (device memory filled by a kernel), every CUDA
 *                strategy, counts against the known fill pattern; then all one value, so one bin
 *                holds more than 2^32 counts; both also fed to a stream in 7 chunks
 *   device_io    device samples -> device counts for several dtypes / kinds / policies and auto
 *                range, every CUDA strategy, against cpu-reference on a host copy
 *   async        the same with a user stream, gpuhist_set_async and device_stats
 *   channels_roi interleaved channels (subset mask) in a strided ROI, odd strides (rows not
 *                aligned to the sample size), host and device data, small staging chunks
 *   unaligned    device pointers not aligned to the sample size, multi-byte types
 *   host_chunks  host input larger than one 256 MiB staging chunk
 *   many_bins    2^17..2^20 bins (several 65536-key buckets of cuda-two-pass): f32 even on the
 *                certified and the checked grid, f64, i32 integer, uneven edges; uniform with
 *                outliers, 90% one value, constant; every CUDA strategy, and cuda-two-pass with
 *                small segments (GPUHIST_CUDA_TWO_PASS_SEGMENT) and an unaligned start
 *   reuse        asynchronous calls back to back on one context through every finish path
 *   edge_cells   f32 uneven edges through cuda-fast-smem's one-load cell table: the benchmark's
 *                quadratic edges (the 4-octave cell map, crowded cells -> sub-tables), the same
 *                narrow at 1 (linear map), log-spaced over six decades, 1024 quadratic bins,
 *                clusters of edges a few ulps apart in more cells than there are sub-tables
 *                (-> the search), one bin, 500 bins, edges past FLT_MAX; samples on every edge
 *                and up to 6 ulps either side, uniform, NaN / inf; every CUDA strategy
 *   byte_channels 400 MiB of u8 in every layout cuda-byte-pairs pairs (one channel; 2 of 2; 2, 3,
 *                4 of 4 under several masks), aligned and unaligned starts, five byte values so
 *                the pair counters carry; every CUDA strategy
 *   byte_runs    192 MiB of u8 that switches cuda-byte-pairs between its modes (runs of one word,
 *                vectors framed by one pair, one value with stray bytes, random) in the layouts
 *                of byte_channels, aligned and unaligned; every CUDA strategy
 *   multi_device a context over every GPU (two on GPU 0 when there is one): parts already on
 *                each GPU fed to one stream, a one-shot call on one GPU's data (host and device
 *                counts), a host array shared out (even and auto range), lent buffers in turn
 * Every result is compared bin by bin with the CPU reference (or the known answer), with the
 * tallies (underflow, overflow, nan, total).
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <random>
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

/* ---- helpers ------------------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static gpuhist_ctx *cuda_ctx(void)
{
    gpuhist_ctx *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        fprintf(stderr, "no CUDA device: %s\n", ctx ? gpuhist_last_error(ctx) : "");
        check_skip("no CUDA device");
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create(cuda): %s\n", gpuhist_status_string(st));
        exit(1);
    }
    return ctx;
}

/* The names of the CUDA strategies, plus "auto". */
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

struct expected {
    std::vector<uint64_t> counts;
    gpuhist_result r;
};

/* cpu-reference on host samples. */
static expected reference(const gpuhist_samples *s, const gpuhist_bin_spec *b)
{
    static gpuhist_ctx *cpu = NULL;
    if (!cpu) {
        if (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
            gpuhist_set_strategy(cpu, "cpu-reference") != GPUHIST_OK) {
            fprintf(stderr, "cannot create the cpu-reference context\n");
            exit(1);
        }
    }
    expected e;
    uint32_t ch = s->channels ? s->channels : 1;
    e.counts.assign((size_t)b->bins * ch, 0);
    e.r = gpuhist_result_host(e.counts.data());
    gpuhist_status st = gpuhist_histogram(cpu, s, b, &e.r);
    if (st != GPUHIST_OK) {
        fprintf(stderr, "cpu-reference failed: %s\n", gpuhist_last_error(cpu));
        exit(1);
    }
    e.counts.resize((size_t)b->bins * e.r.channels);
    return e;
}

/* Compare a result (counts already on the host) with the expectation. */
static void compare(const expected &e, const gpuhist_result &r, const uint64_t *counts,
                    int check_tallies)
{
    if (!CHECK_EQ_U64(r.channels, e.r.channels) || !CHECK_EQ_U64(r.bins, e.r.bins))
        return;
    size_t bad = 0;
    for (size_t i = 0; i < e.counts.size(); ++i)
        if (counts[i] != e.counts[i] && bad++ < 5)
            CHECK_MSG(0, "count[%zu] = %llu, expected %llu", i, (unsigned long long)counts[i],
                      (unsigned long long)e.counts[i]);
    CHECK_MSG(bad == 0, "%zu counts differ", bad);
    if (check_tallies) {
        for (uint32_t k = 0; k < e.r.channels; ++k) {
            CHECK_EQ_U64(r.underflow[k], e.r.underflow[k]);
            CHECK_EQ_U64(r.overflow[k], e.r.overflow[k]);
            CHECK_EQ_U64(r.nan[k], e.r.nan[k]);
            CHECK_EQ_U64(r.total[k], e.r.total[k]);
            CHECK_EQ_U64(r.channel_index[k], e.r.channel_index[k]);
        }
    }
    CHECK_EQ_F64_BITS(r.lower, e.r.lower);
    CHECK_EQ_F64_BITS(r.upper, e.r.upper);
}

/* Run every CUDA strategy on `dev` samples (any location), counts on host or device, and compare
 * with `e`. */
static void all_strategies(gpuhist_ctx *ctx, const gpuhist_samples *dev, const gpuhist_bin_spec *b,
                           const expected &e, int counts_on_device, const char *what)
{
    const size_t n = e.counts.size();
    uint64_t *d_counts = NULL;
    if (counts_on_device)
        CUDA_OK(cudaMalloc(&d_counts, n * sizeof(uint64_t)));
    std::vector<uint64_t> counts(n);
    for (const char *name : cuda_strategies()) {
        check_context("%s, %s, counts on %s", what, name, counts_on_device ? "device" : "host");
        if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK))
            continue;
        std::fill(counts.begin(), counts.end(), 0xdeadbeefull);
        gpuhist_result r = gpuhist_result_host(counts_on_device ? d_counts : counts.data());
        if (counts_on_device) {
            r.counts_location = GPUHIST_MEMORY_DEVICE;
            CUDA_OK(cudaMemset(d_counts, 0xab, n * sizeof(uint64_t)));
        }
        gpuhist_status st = gpuhist_histogram(ctx, dev, b, &r);
        if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0)
            continue; /* the strategy does not take this spec */
        if (!CHECK_MSG(st == GPUHIST_OK, "status %s: %s", gpuhist_status_string(st),
                       gpuhist_last_error(ctx)))
            continue;
        if (counts_on_device)
            CUDA_OK(cudaMemcpy(counts.data(), d_counts, n * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost));
        compare(e, r, counts.data(), 1);
        if (strcmp(name, "auto") != 0)
            CHECK_EQ_STR(r.strategy, name);
    }
    gpuhist_set_strategy(ctx, "auto");
    check_context("%s", "");
    cudaFree(d_counts);
}

static void *to_device(const void *host, size_t bytes, size_t offset, void **base)
{
    unsigned char *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, bytes + offset + 16));
    CUDA_OK(cudaMemcpy(d + offset, host, bytes, cudaMemcpyHostToDevice));
    *base = d;
    return d + offset;
}

/* Random samples of a dtype with adversarial values mixed in (NaN, inf, -0.0, edges, extremes). */
static std::vector<unsigned char> make_data(gpuhist_dtype dt, size_t n, double lo, double hi)
{
    size_t sz = gpuhist_dtype_size(dt);
    std::vector<unsigned char> buf(n * sz);
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rnd();
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);
        double x = lo + (hi - lo) * (u * 1.2 - 0.1); /* 10% outside each side */
        unsigned char *p = &buf[i * sz];
        int special = (int)(r & 63);
        switch (dt) {
        case GPUHIST_F32: {
            float f = (float)x;
            if (special == 0) f = NAN;
            if (special == 1) f = INFINITY;
            if (special == 2) f = -INFINITY;
            if (special == 3) f = -0.0f;
            if (special == 4) f = (float)lo;
            if (special == 5) f = (float)hi;
            memcpy(p, &f, 4);
            break;
        }
        case GPUHIST_F64: {
            if (special == 0) x = NAN;
            if (special == 1) x = INFINITY;
            if (special == 2) x = -0.0;
            if (special == 3) x = lo;
            if (special == 4) x = hi;
            memcpy(p, &x, 8);
            break;
        }
        case GPUHIST_U64: {
            uint64_t v = (uint64_t)(x < 0 ? 0 : x);
            if (special == 0) v = UINT64_MAX;
            if (special == 1) v = (1ull << 53) + 1;
            memcpy(p, &v, 8);
            break;
        }
        case GPUHIST_I64: {
            int64_t v = (int64_t)x;
            if (special == 0) v = INT64_MIN;
            if (special == 1) v = INT64_MAX;
            if (special == 2) v = (1ll << 53) + 1;
            memcpy(p, &v, 8);
            break;
        }
        case GPUHIST_U8: { uint8_t v = (uint8_t)r; memcpy(p, &v, 1); break; }
        case GPUHIST_I8: { int8_t v = (int8_t)r; memcpy(p, &v, 1); break; }
        case GPUHIST_U16: { uint16_t v = (uint16_t)(r >> 8); memcpy(p, &v, 2); break; }
        case GPUHIST_I16: { int16_t v = (int16_t)(r >> 8); memcpy(p, &v, 2); break; }
        case GPUHIST_U32: { uint32_t v = (uint32_t)(x < 0 ? 0 : x); if (special == 0) v = UINT32_MAX; memcpy(p, &v, 4); break; }
        case GPUHIST_I32: { int32_t v = (int32_t)x; if (special == 0) v = INT32_MIN; memcpy(p, &v, 4); break; }
        default: break;
        }
    }
    return buf;
}

/* ---- cases ---------------------------------------------------------------------------------------- */

__global__ void fill_mod(unsigned char *p, uint64_t n, uint32_t mod)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = (unsigned char)(i % mod);
}

/* Feed n device bytes at d to a stream in 7 uneven chunks; compare with e (auto strategy). */
static void streamed_big(gpuhist_ctx *ctx, const unsigned char *d, uint64_t n,
                         const gpuhist_bin_spec *b, const expected &e, const char *label)
{
    check_context("%s", label);
    gpuhist_samples lay = gpuhist_samples_1d(NULL, GPUHIST_U8, 0);
    lay.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_stream *st = NULL;
    if (!CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK))
        return;
    uint64_t done = 0;
    for (int k = 0; k < 7; ++k) {
        uint64_t take = k == 6 ? n - done : n / 7 + (uint64_t)k * 4099;
        CHECK_EQ_INT(gpuhist_stream_feed(st, d + done, take), GPUHIST_OK);
        done += take;
    }
    std::vector<unsigned long long> c(b->bins);
    gpuhist_result r = gpuhist_result_host((uint64_t *)c.data());
    if (!CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK))
        return;
    for (uint32_t i = 0; i < b->bins; ++i)
        if (!CHECK_EQ_U64(c[i], e.counts[i]))
            break;
    CHECK_EQ_U64(r.total[0], n);
}

static void case_big_u8(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const uint64_t n = 4500000000ull; /* > 2^32 */
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < n + (2ull << 30)) {
        fprintf(stderr, "big_u8 needs %.1f GiB of free device memory, %.1f free\n",
                (double)(n + (2ull << 30)) / 1073741824.0, (double)free_b / 1073741824.0);
        check_skip("not enough device memory");
    }
    unsigned char *d = NULL;
    CUDA_OK(cudaMalloc(&d, n));
    fill_mod<<<1024, 256>>>(d, n, 251);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());

    gpuhist_samples s = gpuhist_samples_1d(d, GPUHIST_U8, n);
    s.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 256.0);
    expected e;
    e.counts.assign(256, 0);
    for (uint32_t v = 0; v < 251; ++v)
        e.counts[v] = (n - 1 - v) / 251 + 1;
    memset(&e.r, 0, sizeof e.r);
    e.r.bins = 256;
    e.r.channels = 1;
    e.r.total[0] = n;
    e.r.lower = 0.0;
    e.r.upper = 256.0;
    all_strategies(ctx, &s, &b, e, 0, "big_u8 pattern");

    /* the same through a stream: the device array fed in 7 uneven chunks */
    streamed_big(ctx, d, n, &b, e, "big_u8 pattern, streamed");

    /* one value everywhere: bin 7 holds n > 2^32 */
    CUDA_OK(cudaMemset(d, 7, n));
    std::fill(e.counts.begin(), e.counts.end(), 0);
    e.counts[7] = n;
    all_strategies(ctx, &s, &b, e, 1, "big_u8 constant");
    streamed_big(ctx, d, n, &b, e, "big_u8 constant, streamed");

    /* one bin of 4 (64 values each): the value-folding strategies at > 2^32 too */
    gpuhist_bin_spec b4 = gpuhist_bins_even(4, 0.0, 256.0);
    e.counts.assign(4, 0);
    e.counts[0] = n;
    e.r.bins = 4;
    all_strategies(ctx, &s, &b4, e, 0, "big_u8 constant, 4 bins");
    cudaFree(d);
    gpuhist_destroy(ctx);
}

/* An interleaved 8-bit layout: channels, channel mask, active channels (as gpuhist_samples). */
struct byte_layout {
    uint32_t C, mask, active;
};

/* The bytes of h in each layout, from an aligned and an unaligned device start (+3: a launch
 * phase other than 0), through every CUDA strategy against the CPU reference. */
static void check_byte_layouts(gpuhist_ctx *ctx, const std::vector<unsigned char> &h,
                               const byte_layout *layouts, size_t nlayouts, const char *label)
{
    const size_t bytes = h.size();
    gpuhist_bin_spec b = gpuhist_bins_integer(256, 0);
    void *base[2];
    const size_t offsets[2] = {0, 3};
    void *d[2];
    for (int o = 0; o < 2; ++o)
        d[o] = to_device(h.data(), bytes, offsets[o], &base[o]);
    for (size_t li = 0; li < nlayouts; ++li) {
        const byte_layout &l = layouts[li];
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_U8, bytes / l.C);
        hs.location = GPUHIST_MEMORY_HOST;
        hs.channels = l.C;
        hs.channel_mask = l.mask;
        hs.active_channels = l.active;
        expected e = reference(&hs, &b);
        for (int o = 0; o < 2; ++o) {
            gpuhist_samples ds = hs;
            ds.data = d[o];
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[96];
            snprintf(what, sizeof what, "%s C=%u mask=%x active=%u +%zu", label, l.C, l.mask,
                     l.active, offsets[o]);
            all_strategies(ctx, &ds, &b, e, 1, what);
        }
    }
    cudaFree(base[0]);
    cudaFree(base[1]);
}

/* 8-bit data in every layout cuda-byte-pairs counts as pairs (one channel; 2 of 2; 2, 3 and 4
 * of 4 under several masks, so the pair is not always R,G), from an aligned and an unaligned
 * start (a launch phase other than 0). Five byte values in a period of 5 bytes: ~100k samples of
 * each pair key per block, so its 16-bit counters carry. */
static void case_byte_channels(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t bytes = 400ull << 20;
    std::vector<unsigned char> h(bytes);
    for (size_t i = 0; i < bytes; ++i)
        h[i] = (unsigned char)(i % 5 * 37 + 11);
    static const byte_layout layouts[] = {{4, 0, 3},   {4, 0, 4}, {4, 0x5, 0}, {4, 0xA, 0},
                                          {4, 0xE, 0}, {2, 0, 0}, {1, 0, 0}};
    check_byte_layouts(ctx, h, layouts, sizeof layouts / sizeof layouts[0], "byte_channels");
    gpuhist_destroy(ctx);
}

/* 8-bit data that drives cuda-byte-pairs through each of its counting modes within one call, in
 * six of byte_channels' layouts: in each 1 MiB, 256 KiB of one repeated 32-bit word (four
 * different bytes, a new word per MiB: the word-run mode), 256 KiB of vectors that start and end
 * with the same pair but hold random bytes between (every lane of a warp repeats its pair key,
 * yet the words differ: bytes mode), 256 KiB of one value with a stray byte every 4099 bytes
 * (the run test fails now and then), 256 KiB of random bytes (pairs mode). */
static void case_byte_runs(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t bytes = 192ull << 20, mib = 1u << 20, quarter = mib / 4;
    std::vector<unsigned char> h(bytes);
    for (size_t i = 0; i < bytes; ++i) {
        const size_t m = i / mib, r = i % mib;
        unsigned char x;
        if (r < quarter)
            x = (unsigned char)((m * 4 + i % 4) * 29 + 3);
        else if (r < 2 * quarter)
            x = (i % 16 < 2 || i % 16 >= 14) ? 9 : (unsigned char)rnd();
        else if (r < 3 * quarter)
            x = i % 4099 == 0 ? (unsigned char)rnd() : 0x5A;
        else
            x = (unsigned char)rnd();
        h[i] = x;
    }
    static const byte_layout layouts[] = {{4, 0, 3},   {4, 0, 4}, {4, 0x5, 0},
                                          {4, 0xE, 0}, {2, 0, 0}, {1, 0, 0}};
    check_byte_layouts(ctx, h, layouts, sizeof layouts / sizeof layouts[0], "byte_runs");
    gpuhist_destroy(ctx);
}

struct spec_case {
    gpuhist_dtype dt;
    gpuhist_bin_spec b;
    double lo, hi; /* data range */
};

static std::vector<double> uneven_edges(uint32_t bins, double lo, double hi)
{
    std::vector<double> e(bins + 1);
    double x = lo;
    for (uint32_t i = 0; i <= bins; ++i) {
        e[i] = x;
        x += (hi - lo) / bins * (0.5 + (double)(rnd() % 1000) / 1000.0);
    }
    return e;
}

static std::vector<spec_case> spec_cases(std::vector<double> &edges_store)
{
    std::vector<spec_case> v;
    edges_store = uneven_edges(17, -3.0, 5.0);
    v.push_back({GPUHIST_F32, gpuhist_bins_even(1000, -1.0, 1.0), -1.0, 1.0});
    v.push_back({GPUHIST_F32, gpuhist_bins_even(7, -1.0, 1.0), -1.0, 1.0});
    v.push_back({GPUHIST_F64, gpuhist_bins_edges(17, edges_store.data()), -3.0, 5.0});
    v.push_back({GPUHIST_I32, gpuhist_bins_integer(300, -150), -200.0, 200.0});
    v.push_back({GPUHIST_U64, gpuhist_bins_even(5000, 0.0, 1e12), 0.0, 1e12});
    v.push_back({GPUHIST_I64, gpuhist_bins_auto(100), -1e15, 1e15});
    v.push_back({GPUHIST_F32, gpuhist_bins_auto(64), -10.0, 10.0});
    v.push_back({GPUHIST_U16, gpuhist_bins_even(100000, 0.0, 65536.0), 0.0, 65536.0});
    v.push_back({GPUHIST_I8, gpuhist_bins_integer(256, -128), -128.0, 128.0});
    v.push_back({GPUHIST_U8, gpuhist_bins_even(10, 20.0, 200.0), 0.0, 256.0});
    gpuhist_bin_spec clamp = gpuhist_bins_even(31, -0.5, 0.5);
    clamp.outliers = GPUHIST_OUTLIERS_CLAMP;
    clamp.last_edge_inclusive = 1;
    v.push_back({GPUHIST_F64, clamp, -0.5, 0.5});
    return v;
}

static void case_device_io(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    std::vector<double> edges;
    for (const spec_case &c : spec_cases(edges)) {
        const size_t n = 1000003;
        std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
        hs.location = GPUHIST_MEMORY_HOST;
        expected e = reference(&hs, &c.b);
        void *base;
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), h.size(), 0, &base);
        ds.location = GPUHIST_MEMORY_AUTO; /* detected from the pointer attributes */
        char what[64];
        snprintf(what, sizeof what, "device_io %s bins %u kind %d", gpuhist_dtype_name(c.dt),
                 c.b.bins, (int)c.b.kind);
        all_strategies(ctx, &ds, &c.b, e, 1, what);
        all_strategies(ctx, &ds, &c.b, e, 0, what);
        /* host samples through the staging path */
        all_strategies(ctx, &hs, &c.b, e, 0, what);
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

static void case_async(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(gpuhist_set_stream(ctx, (void *)stream) == GPUHIST_OK);
    CHECK(gpuhist_set_async(ctx, 1) == GPUHIST_OK);
    std::vector<double> edges;
    for (const spec_case &c : spec_cases(edges)) {
        if (c.b.auto_range)
            continue;
        const size_t n = 777777;
        std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
        expected e = reference(&hs, &c.b);
        void *base;
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), h.size(), 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        uint64_t *d_counts, *d_stats;
        CUDA_OK(cudaMalloc(&d_counts, e.counts.size() * 8));
        CUDA_OK(cudaMalloc(&d_stats, 4 * GPUHIST_MAX_CHANNELS * 8));
        for (const char *name : cuda_strategies()) {
            check_context("async %s bins %u, %s", gpuhist_dtype_name(c.dt), c.b.bins, name);
            gpuhist_set_strategy(ctx, name);
            CUDA_OK(cudaMemsetAsync(d_counts, 0xcd, e.counts.size() * 8, stream));
            CUDA_OK(cudaMemsetAsync(d_stats, 0xcd, 4 * GPUHIST_MAX_CHANNELS * 8, stream));
            gpuhist_result r = gpuhist_result_host(d_counts);
            r.counts_location = GPUHIST_MEMORY_DEVICE;
            r.device_stats = d_stats;
            gpuhist_status st = gpuhist_histogram(ctx, &ds, &c.b, &r);
            if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0)
                continue;
            if (!CHECK_MSG(st == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
                continue;
            CUDA_OK(cudaStreamSynchronize(stream));
            std::vector<uint64_t> counts(e.counts.size()), stats(4 * GPUHIST_MAX_CHANNELS);
            CUDA_OK(cudaMemcpy(counts.data(), d_counts, counts.size() * 8,
                               cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(stats.data(), d_stats, stats.size() * 8, cudaMemcpyDeviceToHost));
            for (uint32_t k = 0; k < e.r.channels; ++k) {
                r.underflow[k] = stats[4 * k + 0];
                r.overflow[k] = stats[4 * k + 1];
                r.nan[k] = stats[4 * k + 2];
                r.total[k] = stats[4 * k + 3];
            }
            compare(e, r, counts.data(), 1);
        }
        gpuhist_set_strategy(ctx, "auto");
        cudaFree(d_counts);
        cudaFree(d_stats);
        cudaFree(base);
    }
    check_context("%s", "");
    gpuhist_destroy(ctx);
    cudaStreamDestroy(stream);
}

static void roi_case(gpuhist_ctx *ctx, gpuhist_dtype dt, uint32_t C, uint32_t mask,
                     uint32_t active, uint64_t row_len, uint64_t rows, size_t pad,
                     const gpuhist_bin_spec *b, double lo, double hi, const char *tag)
{
    const size_t sz = gpuhist_dtype_size(dt);
    const size_t stride = row_len * C * sz + pad;
    const size_t bytes = stride * rows;
    std::vector<unsigned char> h = make_data(dt, (bytes + sz - 1) / sz, lo, hi);
    h.resize(bytes);
    gpuhist_samples hs;
    memset(&hs, 0, sizeof hs);
    hs.data = h.data();
    hs.dtype = dt;
    hs.row_length = row_len;
    hs.rows = rows;
    hs.row_stride = stride;
    hs.channels = C;
    hs.active_channels = active;
    hs.channel_mask = mask;
    hs.location = GPUHIST_MEMORY_HOST;
    expected e = reference(&hs, b);
    void *base;
    gpuhist_samples ds = hs;
    ds.data = to_device(h.data(), bytes, 0, &base);
    ds.location = GPUHIST_MEMORY_DEVICE;
    char what[128];
    snprintf(what, sizeof what, "%s %s C=%u mask=%x active=%u %llux%llu pad %zu", tag,
             gpuhist_dtype_name(dt), C, mask, active, (unsigned long long)row_len,
             (unsigned long long)rows, pad);
    all_strategies(ctx, &ds, b, e, 1, what);
    all_strategies(ctx, &hs, b, e, 0, what);
    cudaFree(base);
}

static void roi_suite(gpuhist_ctx *ctx, const char *tag)
{
    gpuhist_bin_spec b256 = gpuhist_bins_even(256, 0.0, 65536.0);
    gpuhist_bin_spec b50 = gpuhist_bins_even(50, -1.0, 1.0);
    gpuhist_bin_spec bauto = gpuhist_bins_auto(33);
    roi_case(ctx, GPUHIST_U16, 4, 0xB, 0, 101, 37, 22, &b256, 0, 65536, tag);
    roi_case(ctx, GPUHIST_U16, 4, 0xB, 0, 101, 37, 23, &b256, 0, 65536, tag); /* odd stride */
    roi_case(ctx, GPUHIST_F32, 3, 0, 2, 333, 29, 12, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_F32, 3, 0x4, 0, 333, 29, 5, &bauto, -1, 1, tag);
    roi_case(ctx, GPUHIST_U8, 4, 0, 3, 640, 48, 64, &b256, 0, 256, tag);
    roi_case(ctx, GPUHIST_F64, 2, 0, 0, 1000, 7, 8, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_I64, 1, 0, 0, 999, 11, 0, &b50, -1e6, 1e6, tag); /* packed rows */
    /* gaps of whole pixels, at most a quarter of the stride (an image's row pitch): raw-value
     * and slot counters, signed values, channels */
    gpuhist_bin_spec bu8 = gpuhist_bins_integer(256, 0);
    gpuhist_bin_spec bi8 = gpuhist_bins_even(17, -128.0, 128.0);
    gpuhist_bin_spec bu16 = gpuhist_bins_integer(65536, 0);
    roi_case(ctx, GPUHIST_U8, 1, 0, 0, 1000, 40, 24, &bu8, 0, 256, tag);
    roi_case(ctx, GPUHIST_I8, 1, 0, 0, 777, 33, 7, &bi8, -128, 128, tag);
    roi_case(ctx, GPUHIST_U16, 1, 0, 0, 500, 21, 64, &bu16, 0, 65536, tag);
    roi_case(ctx, GPUHIST_F32, 1, 0, 0, 900, 25, 16, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_U8, 4, 0, 0, 300, 19, 40, &bu8, 0, 256, tag);
}

static void case_channels_roi(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    roi_suite(ctx, "default chunk");
    gpuhist_destroy(ctx);
    /* small staging chunks: rows split across chunks, many chunks, both staging buffers */
    setenv("GPUHIST_CUDA_CHUNK_BYTES", "1000", 1);
    ctx = cuda_ctx();
    roi_suite(ctx, "1000-byte chunks");
    gpuhist_destroy(ctx);
    unsetenv("GPUHIST_CUDA_CHUNK_BYTES");
}

static void case_unaligned(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const gpuhist_dtype dts[] = {GPUHIST_U16, GPUHIST_I16, GPUHIST_I32, GPUHIST_F32,
                                 GPUHIST_U64, GPUHIST_F64, GPUHIST_U8};
    for (gpuhist_dtype dt : dts) {
        for (size_t off : {1, 3, 4, 6}) {
            const size_t n = 100003;
            const size_t sz = gpuhist_dtype_size(dt);
            std::vector<unsigned char> h = make_data(dt, n, -1000.0, 1000.0);
            std::vector<unsigned char> hu(h.size() + off);
            memcpy(hu.data() + off, h.data(), h.size());
            gpuhist_samples hs = gpuhist_samples_1d(hu.data() + off, dt, n);
            hs.location = GPUHIST_MEMORY_HOST;
            gpuhist_bin_spec b = gpuhist_bins_even(300, -900.0, 900.0);
            expected e = reference(&hs, &b);
            void *base;
            gpuhist_samples ds = hs;
            ds.data = to_device(h.data(), h.size(), off, &base);
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[64];
            snprintf(what, sizeof what, "unaligned %s +%zu (size %zu)", gpuhist_dtype_name(dt),
                     off, sz);
            all_strategies(ctx, &ds, &b, e, 0, what);
            /* also as a 3-channel image: the copy to aligned scratch keeps the channel phase */
            {
                gpuhist_samples d3 = ds, h3 = hs;
                d3.count = h3.count = n / 3;
                d3.channels = h3.channels = 3;
                expected e3 = reference(&h3, &b);
                all_strategies(ctx, &d3, &b, e3, 0, what);
            }
            cudaFree(base);
        }
    }
    gpuhist_destroy(ctx);
}

static void case_host_chunks(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = 70000001; /* 280 MB of f32: more than one 256 MiB chunk */
    std::vector<unsigned char> h = make_data(GPUHIST_F32, n, -5.0, 5.0);
    gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_F32, n);
    hs.location = GPUHIST_MEMORY_HOST;
    gpuhist_bin_spec b = gpuhist_bins_even(4096, -4.0, 4.0);
    expected e = reference(&hs, &b);
    all_strategies(ctx, &hs, &b, e, 0, "host_chunks f32");
    all_strategies(ctx, &hs, &b, e, 1, "host_chunks f32");
    gpuhist_bin_spec ba = gpuhist_bins_auto(1000);
    expected ea = reference(&hs, &ba);
    check_context("host_chunks auto range");
    std::vector<uint64_t> counts(1000);
    gpuhist_result r = gpuhist_result_host(counts.data());
    if (CHECK(gpuhist_histogram(ctx, &hs, &ba, &r) == GPUHIST_OK))
        compare(ea, r, counts.data(), 1);
    gpuhist_destroy(ctx);
}

/* Samples of which `hot_pct` percent are the same value (one inside the range). */
static void make_hot(std::vector<unsigned char> &buf, gpuhist_dtype dt, int hot_pct, double v)
{
    size_t sz = gpuhist_dtype_size(dt), n = buf.size() / sz;
    for (size_t i = 0; i < n; ++i) {
        if ((int)(rnd() % 100) >= hot_pct)
            continue;
        unsigned char *p = &buf[i * sz];
        if (dt == GPUHIST_F32) { float f = (float)v; memcpy(p, &f, 4); }
        else if (dt == GPUHIST_F64) memcpy(p, &v, 8);
        else if (dt == GPUHIST_I32) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
    }
}

/* One strategy on `s` (counts on the host), compared with `e`. */
static void one_strategy(gpuhist_ctx *ctx, const char *name, const gpuhist_samples *s,
                         const gpuhist_bin_spec *b, const expected &e)
{
    std::vector<uint64_t> counts(e.counts.size());
    gpuhist_result r = gpuhist_result_host(counts.data());
    if (CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK) &&
        CHECK_MSG(gpuhist_histogram(ctx, s, b, &r) == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
        compare(e, r, counts.data(), 1);
}

static void case_many_bins(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = 6000011;
    std::vector<double> edges(300001);
    for (size_t i = 0; i < edges.size(); ++i) /* uneven: denser towards 0 */
        edges[i] = -2.0 + 4.0 * ((double)i / 300000.0) * ((double)i / 300000.0);
    struct mb {
        gpuhist_dtype dt;
        gpuhist_bin_spec b;
        double lo, hi, hot;
        const char *what;
    } cases[] = {
        {GPUHIST_F32, gpuhist_bins_even(1u << 20, 0.0, 1.0), 0.0, 1.0, 0.3, "f32 2^20 [0,1)"},
        {GPUHIST_F32, gpuhist_bins_even(1000003, -3.3, 7.1), -3.3, 7.1, 2.5, "f32 1000003 bins"},
        {GPUHIST_F64, gpuhist_bins_even(200000, -1.0, 1.0), -1.0, 1.0, 0.25, "f64 200000 bins"},
        {GPUHIST_I32, gpuhist_bins_integer(131073, -1000), -1000.0, 130073.0, 7.0,
         "i32 131073 integer bins"},
        {GPUHIST_F32, gpuhist_bins_edges(300000, edges.data()), -2.0, 2.0, 0.5,
         "f32 300000 edges"},
    };
    for (const mb &c : cases) {
        for (int hot : {0, 90, 100}) {
            std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
            make_hot(h, c.dt, hot, c.hot);
            gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
            expected e = reference(&hs, &c.b);
            void *base = NULL;
            const size_t sz = gpuhist_dtype_size(c.dt);
            gpuhist_samples ds = hs;
            ds.data = to_device(h.data(), h.size(), 0, &base);
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[96];
            snprintf(what, sizeof what, "many_bins %s, %d%% one value", c.what, hot);
            if (hot == 0) {
                all_strategies(ctx, &ds, &c.b, e, 0, what);
            } else {
                check_context("%s, cuda-two-pass", what);
                one_strategy(ctx, "cuda-two-pass", &ds, &c.b, e);
            }
            /* Small segments (several pass pairs into the same counters) and a start that is
             * not 16-byte aligned (head and tail samples outside the vector loop). */
            setenv("GPUHIST_CUDA_TWO_PASS_SEGMENT", "1048583", 1);
            check_context("%s, cuda-two-pass, small segments, offset start", what);
            gpuhist_samples os = ds;
            os.data = (const unsigned char *)ds.data + sz;
            os.count = n - 3;
            gpuhist_samples ohs = hs;
            ohs.data = h.data() + sz;
            ohs.count = n - 3;
            one_strategy(ctx, "cuda-two-pass", &os, &c.b, reference(&ohs, &c.b));
            unsetenv("GPUHIST_CUDA_TWO_PASS_SEGMENT");
            gpuhist_set_strategy(ctx, "auto");
            check_context("%s", "");
            cudaFree(base);
        }
    }
    gpuhist_destroy(ctx);
}

/* One context, asynchronous calls back to back with no synchronisation between them, whose
 * counters take every path of the backend's finish (raw values folded by one block or by the
 * multi-block fold, slot counters finished by one block or by the multi-block finish) and are
 * zeroed by the previous call's finish instead of a memset; then the same on a second stream
 * (a change of stream), then synchronous calls. Every result must equal the cpu-reference. */
static void case_reuse(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    cudaStream_t streams[2];
    for (cudaStream_t &st : streams)
        CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct one {
        gpuhist_dtype dt;
        gpuhist_bin_spec b;
        double lo, hi;
        uint32_t channels;
    };
    gpuhist_bin_spec clamp = gpuhist_bins_even(300, -1.0, 1.0);
    clamp.outliers = GPUHIST_OUTLIERS_CLAMP;
    const std::vector<one> specs = {
        {GPUHIST_U8, gpuhist_bins_integer(256, 0), 0.0, 256.0, 1},          /* small values */
        {GPUHIST_U16, gpuhist_bins_integer(65536, 0), 0.0, 65536.0, 1},     /* big values */
        {GPUHIST_F32, gpuhist_bins_even(4096, -1.0, 1.0), -1.0, 1.0, 1},    /* small slots */
        {GPUHIST_F32, gpuhist_bins_even(1u << 17, -1.0, 1.0), -1.0, 1.0, 1}, /* big slots */
        {GPUHIST_U8, gpuhist_bins_even(10, 20.0, 200.0), 0.0, 256.0, 4},    /* 4 x 256 values */
        {GPUHIST_F32, clamp, -1.0, 1.0, 1},                                 /* clamp, small */
        {GPUHIST_I16, gpuhist_bins_even(7, -100.0, 100.0), -200.0, 200.0, 2}, /* small slots of
                                                                                 big values */
    };
    struct run {
        expected e;
        void *base;
        uint64_t *d_counts, *d_stats;
        gpuhist_samples ds;
    };
    std::vector<run> runs;
    for (const one &o : specs) {
        const size_t pixels = 300001;
        std::vector<unsigned char> h = make_data(o.dt, pixels * o.channels, o.lo, o.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), o.dt, pixels);
        hs.channels = o.channels;
        run r;
        r.e = reference(&hs, &o.b);
        r.ds = hs;
        r.ds.data = to_device(h.data(), h.size(), 0, &r.base);
        r.ds.location = GPUHIST_MEMORY_DEVICE;
        CUDA_OK(cudaMalloc(&r.d_counts, r.e.counts.size() * 8));
        CUDA_OK(cudaMalloc(&r.d_stats, 4 * GPUHIST_MAX_CHANNELS * 8));
        runs.push_back(r);
    }
    auto check_run = [&](const run &r, const gpuhist_result &res) {
        std::vector<uint64_t> counts(r.e.counts.size()), stats(4 * GPUHIST_MAX_CHANNELS);
        CUDA_OK(cudaMemcpy(counts.data(), r.d_counts, counts.size() * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(stats.data(), r.d_stats, stats.size() * 8, cudaMemcpyDeviceToHost));
        gpuhist_result x = res;
        for (uint32_t k = 0; k < r.e.r.channels; ++k) {
            x.underflow[k] = stats[4 * k + 0];
            x.overflow[k] = stats[4 * k + 1];
            x.nan[k] = stats[4 * k + 2];
            x.total[k] = stats[4 * k + 3];
        }
        compare(r.e, x, counts.data(), 1);
    };
    CHECK(gpuhist_set_async(ctx, 1) == GPUHIST_OK);
    /* rounds: 0, 1 on stream 0; 2 on stream 1; 3 back on stream 0; order shuffled per round */
    for (int round = 0; round < 4; ++round) {
        cudaStream_t st = streams[round == 2 ? 1 : 0];
        CHECK(gpuhist_set_stream(ctx, (void *)st) == GPUHIST_OK);
        std::vector<size_t> order(runs.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        for (size_t i = order.size(); i > 1; --i) /* Fisher-Yates */
            std::swap(order[i - 1], order[rnd() % i]);
        std::vector<gpuhist_result> res(runs.size());
        for (size_t i : order) {
            check_context("reuse round %d, spec %zu (%s, %u bins)", round, i,
                          gpuhist_dtype_name(specs[i].dt), specs[i].b.bins);
            CUDA_OK(cudaMemsetAsync(runs[i].d_counts, 0xcd, runs[i].e.counts.size() * 8, st));
            res[i] = gpuhist_result_host(runs[i].d_counts);
            res[i].counts_location = GPUHIST_MEMORY_DEVICE;
            res[i].device_stats = runs[i].d_stats;
            gpuhist_status s = gpuhist_histogram(ctx, &runs[i].ds, &specs[i].b, &res[i]);
            CHECK_MSG(s == GPUHIST_OK, "%s", gpuhist_last_error(ctx));
            /* a call that fails validation in between leaves nothing behind */
            gpuhist_bin_spec bad = gpuhist_bins_even(0, 0.0, 1.0);
            CHECK(gpuhist_histogram(ctx, &runs[i].ds, &bad, &res[i]) ==
                  GPUHIST_ERROR_INVALID_ARGUMENT);
        }
        CUDA_OK(cudaStreamSynchronize(st));
        for (size_t i = 0; i < runs.size(); ++i) {
            check_context("reuse round %d, spec %zu result", round, i);
            check_run(runs[i], res[i]);
        }
    }
    /* synchronous, host counts, after the asynchronous rounds */
    CHECK(gpuhist_set_async(ctx, 0) == GPUHIST_OK);
    CHECK(gpuhist_set_stream(ctx, NULL) == GPUHIST_OK);
    for (size_t i = 0; i < runs.size(); ++i) {
        check_context("reuse sync, spec %zu", i);
        std::vector<uint64_t> counts(runs[i].e.counts.size(), 0xdeadbeefull);
        gpuhist_result r = gpuhist_result_host(counts.data());
        if (CHECK_MSG(gpuhist_histogram(ctx, &runs[i].ds, &specs[i].b, &r) == GPUHIST_OK, "%s",
                      gpuhist_last_error(ctx)))
            compare(runs[i].e, r, counts.data(), 1);
    }
    check_context("%s", "");
    for (run &r : runs) {
        cudaFree(r.d_counts);
        cudaFree(r.d_stats);
        cudaFree(r.base);
    }
    gpuhist_destroy(ctx);
    for (cudaStream_t st : streams)
        cudaStreamDestroy(st);
}

/* f32 samples on and around every edge (+-6 ulps), uniform over [lo, hi] and 5% beyond, NaN and
 * infinities. */
static std::vector<float> around_edges(const std::vector<double> &edges, size_t n_uniform,
                                       double lo, double hi)
{
    std::vector<float> x;
    for (double e : edges) {
        float f = (float)e;
        for (int k = 0; k < 6; ++k)
            f = nextafterf(f, -INFINITY);
        for (int k = 0; k <= 12; ++k, f = nextafterf(f, INFINITY))
            x.push_back(f);
    }
    for (size_t i = 0; i < n_uniform; ++i) {
        const double u = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
        x.push_back((float)(lo + (hi - lo) * (u * 1.1 - 0.05)));
    }
    x.push_back(NAN);
    x.push_back(INFINITY);
    x.push_back(-INFINITY);
    x.push_back(-0.0f);
    std::shuffle(x.begin(), x.end(), std::mt19937(12345));
    return x;
}

static void case_edge_cells(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    struct ec {
        std::vector<double> edges;
        const char *what;
    };
    std::vector<ec> cases;
    { /* the benchmark's cell: quadratic, narrow bins near 0 */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(((double)i / 256) * ((double)i / 256));
        cases.push_back({e, "256 quadratic edges"});
    }
    { /* 100 clusters of 5 edges 1..3 ulps apart: 100 crowded cells, more than the sub-tables */
        std::vector<double> e;
        for (int c = 0; c < 100; ++c) {
            float f = (float)(-50.0 + c * 1.01);
            for (int k = 0; k < 5; ++k) {
                e.push_back((double)f);
                f = nextafterf(nextafterf(f, INFINITY), INFINITY);
            }
        }
        cases.push_back({e, "100 clusters of 5 edges"});
    }
    { /* 500 bins, mixed widths, edges between floats (rounded up on the device) */
        std::vector<double> e;
        double v = -3.0;
        for (int i = 0; i <= 500; ++i) {
            e.push_back(v);
            v += (i % 7 == 0) ? 1e-9 : 0.01 + 0.001 * (i % 13);
        }
        cases.push_back({e, "500 mixed edges"});
    }
    { /* narrow bins towards 1 instead: the linear map stays the best */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(1.0 - ((double)(256 - i) / 256) * ((double)(256 - i) / 256));
        cases.push_back({e, "256 quadratic edges, narrow at 1"});
    }
    { /* log-spaced over six decades: edges on many octave boundaries of the finer maps */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(pow(10.0, -6.0 + 6.0 * i / 256));
        cases.push_back({e, "256 log-spaced edges"});
    }
    { /* 1024 quadratic bins: the finest maps no longer fit beside 1027 x 8 counters */
        std::vector<double> e;
        for (int i = 0; i <= 1024; ++i)
            e.push_back(((double)i / 1024) * ((double)i / 1024) * 8.0 - 4.0);
        cases.push_back({e, "1024 quadratic edges"});
    }
    cases.push_back({{-1.0, 2.5}, "one bin"});
    cases.push_back({{-1.0, 0.0, 1.0, 1e39}, "last edge past FLT_MAX"});
    for (const ec &c : cases) {
        const double lo = c.edges.front(), hi = std::min(c.edges.back(), 1e30);
        std::vector<float> x = around_edges(c.edges, 400000, lo, hi);
        const uint32_t bins = (uint32_t)c.edges.size() - 1u;
        const gpuhist_bin_spec b = gpuhist_bins_edges(bins, c.edges.data());
        gpuhist_samples hs = gpuhist_samples_1d(x.data(), GPUHIST_F32, x.size());
        expected e = reference(&hs, &b);
        void *base = NULL;
        gpuhist_samples ds = hs;
        ds.data = to_device(x.data(), x.size() * 4, 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        char what[96];
        snprintf(what, sizeof what, "edge_cells %s", c.what);
        all_strategies(ctx, &ds, &b, e, 0, what);
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

/* Skewed 16-bit data through cuda-fast-packed16's hot mode (and auto): 4 Mi-sample stretches of
 * 90% one value, one value, two values of 45% each (the miss path carries out of 16-bit halves),
 * uniform values, runs of 1024 equal values, and 97% of a value that moves every 64 Ki samples,
 * so warps switch between plain and hot mode, move their hot key, skip whole iterations and
 * count misses in rounds. 22 iterations of every block of a 132-SM grid (the H100 and the H200)
 * leave a block's last hot iteration unflushed at the loop's end; the other size ends on a
 * partial iteration. Then cuda-two-pass with two hot f32 values, so that its pass 2 (the same
 * engine) counts the one its reference-key exclusion lets through in hot mode. */
static void case_u16_skew(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t it = 132ull * 24576ull;
    for (size_t n : {22 * it, 22 * it - 777}) {
        std::vector<uint16_t> h(n);
        for (size_t i = 0; i < n; ++i) {
            const uint32_t r = (uint32_t)rnd(), pct = (r >> 16) % 100;
            uint16_t x = (uint16_t)r;
            switch ((i >> 22) % 6) {
            case 0: x = pct < 90 ? 40000 : x; break;
            case 1: x = 123; break;
            case 2: x = pct < 45 ? 7 : pct < 90 ? 65535 : x; break;
            case 3: break;
            case 4: x = (uint16_t)(i >> 10); break;
            default: x = pct < 97 ? (uint16_t)(2 * (i >> 16) + 1) : x; break;
            }
            h[i] = x;
        }
        void *base = NULL;
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_U16, n);
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), n * 2, 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        const gpuhist_bin_spec specs[] = {gpuhist_bins_integer(65536, 0),
                                          gpuhist_bins_even(1000, 0.0, 65536.0)};
        for (const gpuhist_bin_spec &b : specs) {
            const expected e = reference(&hs, &b);
            for (const char *name : {"auto", "cuda-fast-packed16"}) {
                check_context("u16_skew n=%zu, %u bins, %s", n, b.bins, name);
                one_strategy(ctx, name, &ds, &b, e);
            }
        }
        cudaFree(base);
    }
    const size_t n = 6000011;
    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i) {
        const uint32_t r = (uint32_t)rnd(), pct = (r >> 24) % 100;
        f[i] = pct < 45 ? 0.3f : pct < 90 ? 0.7f : (float)(r & 0xffffff) * (1.0f / 16777216.0f);
    }
    const gpuhist_bin_spec b = gpuhist_bins_even(1u << 20, 0.0, 1.0);
    gpuhist_samples hs = gpuhist_samples_1d(f.data(), GPUHIST_F32, n);
    void *base = NULL;
    gpuhist_samples ds = hs;
    ds.data = to_device(f.data(), n * 4, 0, &base);
    ds.location = GPUHIST_MEMORY_DEVICE;
    check_context("u16_skew: f32 2^20 bins, two values of 45%%, %s", "cuda-two-pass");
    one_strategy(ctx, "cuda-two-pass", &ds, &b, reference(&hs, &b));
    gpuhist_set_strategy(ctx, "auto");
    check_context("%s", "");
    cudaFree(base);
    gpuhist_destroy(ctx);
}

/* A context over every GPU (two contexts on GPU 0 when there is one): data that already lives
 * on each GPU is fed to one stream and counted where it is; a one-shot call on device data of
 * the last GPU runs there; a host array shared out; all against cpu-reference. */
static void case_multi_device(void)
{
    int ngpu = gpuhist_device_count(GPUHIST_BACKEND_CUDA);
    if (ngpu == 0)
        check_skip("no CUDA device");
    std::vector<int> devs;
    for (int d = 0; d < (ngpu > 1 ? ngpu : 2); ++d)
        devs.push_back(ngpu > 1 ? d : 0);
    gpuhist_ctx *ctx = NULL;
    if (!CHECK_EQ_INT(gpuhist_create_multi(&ctx, GPUHIST_BACKEND_CUDA, devs.data(), (int)devs.size()),
                      GPUHIST_OK)) {
        fprintf(stderr, "%s\n", gpuhist_last_error(NULL));
        return;
    }
    printf("multi_device: %s\n", gpuhist_device_name(ctx));
    const size_t per = ((size_t)96 << 20) + 13; /* f32 samples per device part */
    std::vector<unsigned char> host = make_data(GPUHIST_F32, per * devs.size(), -0.1, 1.1);
    gpuhist_samples hs = gpuhist_samples_1d(host.data(), GPUHIST_F32, per * devs.size());
    gpuhist_bin_spec b = gpuhist_bins_even(4096, 0.0, 1.0);
    expected e = reference(&hs, &b);
    std::vector<uint64_t> counts(b.bins);

    /* each part on its device */
    std::vector<void *> parts(devs.size());
    for (size_t i = 0; i < devs.size(); ++i) {
        CUDA_OK(cudaSetDevice(devs[i]));
        CUDA_OK(cudaMalloc(&parts[i], per * 4));
        CUDA_OK(cudaMemcpy(parts[i], host.data() + i * per * 4, per * 4, cudaMemcpyHostToDevice));
    }
    check_context("multi_device: device parts fed to one stream");
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
    gpuhist_stream *st = NULL;
    if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
        for (size_t i = 0; i < devs.size(); ++i)
            CHECK_EQ_INT(gpuhist_stream_feed(st, parts[i], per), GPUHIST_OK);
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
        compare(e, r, counts.data(), 1);
    }
    check_context("multi_device: one-shot on the last device's part");
    {
        gpuhist_samples ds = gpuhist_samples_1d(parts.back(), GPUHIST_F32, per);
        gpuhist_samples hpart = gpuhist_samples_1d(host.data() + (devs.size() - 1) * per * 4,
                                                   GPUHIST_F32, per);
        expected ep = reference(&hpart, &b);
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &ds, &b, &r), GPUHIST_OK);
        compare(ep, r, counts.data(), 1);
        /* counts on that device too */
        void *dcounts = NULL;
        CUDA_OK(cudaSetDevice(devs.back()));
        CUDA_OK(cudaMalloc(&dcounts, b.bins * 8));
        r = gpuhist_result_host((uint64_t *)dcounts);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        CHECK_EQ_INT(gpuhist_histogram(ctx, &ds, &b, &r), GPUHIST_OK);
        std::vector<uint64_t> back(b.bins);
        CUDA_OK(cudaMemcpy(back.data(), dcounts, b.bins * 8, cudaMemcpyDeviceToHost));
        CHECK(back == ep.counts);
        cudaFree(dcounts);
    }
    check_context("multi_device: host array shared out, auto range, lent buffers");
    {
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &hs, &b, &r), GPUHIST_OK);
        compare(e, r, counts.data(), 1);
        gpuhist_bin_spec ab = gpuhist_bins_auto(1000);
        expected ea = reference(&hs, &ab);
        std::vector<uint64_t> c2(ab.bins);
        r = gpuhist_result_host(c2.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &hs, &ab, &r), GPUHIST_OK);
        compare(ea, r, c2.data(), 1);
        /* lent page-locked buffers, in turn to the devices */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &st),
                         GPUHIST_OK)) {
            const size_t chunk = (size_t)7 << 20;
            for (size_t at = 0; at < per * devs.size(); at += chunk) {
                size_t k = std::min(chunk, per * devs.size() - at);
                void *buf = NULL;
                if (!CHECK_EQ_INT(gpuhist_stream_buffer(st, k * 4, &buf), GPUHIST_OK))
                    break;
                memcpy(buf, host.data() + at * 4, k * 4);
                CHECK_EQ_INT(gpuhist_stream_submit(st, buf, k), GPUHIST_OK);
            }
            r = gpuhist_result_host(counts.data());
            CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
            compare(e, r, counts.data(), 1);
        }
    }
    for (size_t i = 0; i < devs.size(); ++i) {
        cudaSetDevice(devs[i]);
        cudaFree(parts[i]);
    }
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {
        {"big_u8", case_big_u8},         {"device_io", case_device_io},
        {"async", case_async},           {"channels_roi", case_channels_roi},
        {"unaligned", case_unaligned},   {"host_chunks", case_host_chunks},
        {"many_bins", case_many_bins},   {"reuse", case_reuse},
        {"edge_cells", case_edge_cells}, {"byte_channels", case_byte_channels},
        {"byte_runs", case_byte_runs},   {"u16_skew", case_u16_skew},
        {"multi_device", case_multi_device},
    };
    for (const auto &c : cases)
        if (argc == 2 && !strcmp(argv[1], c.name)) {
            c.run();
            return check_exit();
        }
    fprintf(stderr, "usage: %s CASE, CASE one of:", argv[0]);
    for (const auto &c : cases)
        fprintf(stderr, " %s", c.name);
    fprintf(stderr, "\n");
    return 2;
}
