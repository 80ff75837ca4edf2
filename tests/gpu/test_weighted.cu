/*
 * test_weighted.cu - weighted histograms on CUDA (cuda-weighted-smem, cuda-weighted-global and
 * the auto choice) against the CPU backend (cpu-weighted, whose sums tests/unit/weights_oracle.py
 * checks against exact rationals), bit for bit: counts, tallies, sums, sums of squares and the
 * exact weight state. `test_weighted <case>`; exit 77 (ctest: skipped) without a GPU.
 *
 * Cases:
 *   random       random requests: every dtype, EVEN / EDGES / INTEGER bins from 1 to 3000 (past
 *                the shared-memory records of f32 and f64 weights), 1-4 channels with subsets,
 *                strided ROIs, both outlier policies, f32 and f64 weights with and without
 *                squares, samples and weights on the host and on the device (also at addresses
 *                not aligned to the weight size); weights random over a few octaves, over the
 *                whole exponent range (subnormals included), cancelling pairs, non-finite ones
 *                now and then, one constant value, zeros of both signs, near the largest finite
 *                value; data uniform, constant (one bin: the warp-sum path), sorted or hot (90% one
 *                value: folding warps that also deposit); weights
 *                in other memory than the samples (refused by name)
 *   known        answers known exactly: 1e300 + 1 - 1e300 = 1 in one bin, 2^-1074 x 3, f32
 *                subnormals, +inf and -inf in one bin (NaN), FLT_MAX x 2^20 (finite), DBL_MAX x
 *                2 (+inf); every CUDA strategy that sums weights
 *   many         2^28 samples of one f32 value with weight 1.5 (2^28 x 1.5 exactly) and
 *                2^27 f64 weights 2^-1074 in one bin: a block's records flushed round after
 *                round, per-warp sums of 32 lanes; against the CPU backend and the formula
 *   streams      weighted streams in random chunks (pageable, page-locked and device chunks)
 *                against one CPU call; staging chunks of 4 KiB and normalisation before every
 *                launch (GPUHIST_CUDA_CHUNK_BYTES, GPUHIST_CUDA_WEIGHT_DEPOSITS) in a second
 *                context
 * Seed: GPUHIST_TEST_SEED (printed), a fixed one by default.
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#include "cuda_test.cuh"

static const uint64_t SEED = 0x5EED0F3A9E3779B9ull; /* rng_state (cuda_test.cuh) from main */
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static double unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static gpuhist_ctx *make_ctx(gpuhist_backend b)
{
    gpuhist_ctx *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, b);
    if (b == GPUHIST_BACKEND_CUDA && st == GPUHIST_ERROR_NO_DEVICE) {
        fprintf(stderr, "no CUDA device: %s\n", ctx ? gpuhist_last_error(ctx) : "");
        check_skip("no CUDA device");
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create: %s\n", gpuhist_status_string(st));
        exit(1);
    }
    return ctx;
}

static const char *const cuda_names[] = {"auto", "cuda-weighted-smem", "cuda-weighted-global"};

/* ---- one request ---------------------------------------------------------------------------- */

struct request {
    gpuhist_dtype dtype, wdtype;
    uint32_t channels, mask, bins;
    gpuhist_bin_kind kind;
    gpuhist_outliers outliers;
    uint64_t row_length, rows;
    size_t stride;     /* bytes between rows */
    int squares;
    std::vector<unsigned char> data; /* rows * stride bytes */
    std::vector<unsigned char> w;    /* pixels * weight size */
    std::vector<double> edges;
    uint64_t pixels() const { return row_length * rows; }
    uint32_t active() const
    {
        return mask ? (uint32_t)__builtin_popcount(mask) : channels;
    }
    gpuhist_bin_spec spec() const
    {
        gpuhist_bin_spec b = kind == GPUHIST_BINS_EVEN    ? gpuhist_bins_even(bins, -1.0, 3.0)
                             : kind == GPUHIST_BINS_EDGES ? gpuhist_bins_edges(bins, edges.data())
                                                          : gpuhist_bins_integer(bins, -2);
        b.outliers = outliers;
        return b;
    }
    gpuhist_samples samples(const void *d, const void *wp, gpuhist_memory where) const
    {
        gpuhist_samples s = gpuhist_samples_1d(d, dtype, pixels());
        s.channels = channels;
        s.channel_mask = mask;
        if (rows > 1) {
            s.rows = rows;
            s.row_length = row_length;
            s.row_stride = stride;
        }
        s.location = where;
        s.weights = wp;
        s.weight_dtype = wdtype;
        return s;
    }
};

struct outcome {
    gpuhist_status st;
    std::vector<uint64_t> counts;
    std::vector<double> sums, sq;
    std::vector<int64_t> state;
    gpuhist_result r;
};

static outcome run(gpuhist_ctx *ctx, const request &q, const gpuhist_samples &s)
{
    outcome o;
    const size_t n = (size_t)q.bins * q.active();
    o.counts.assign(n, 0xdeadbeefull);
    o.sums.assign(n, -7.0);
    o.sq.assign(n, -7.0);
    o.state.assign(gpuhist_weight_state_words(q.bins, q.active(), q.wdtype, q.squares), 77);
    o.r = gpuhist_result_host(o.counts.data());
    o.r.sums = o.sums.data();
    o.r.sums_squared = q.squares ? o.sq.data() : NULL;
    o.r.weight_state = o.state.data();
    const gpuhist_bin_spec b = q.spec();
    o.st = gpuhist_histogram(ctx, &s, &b, &o.r);
    return o;
}

static size_t differ_f64(const std::vector<double> &a, const std::vector<double> &b)
{
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
        if (memcmp(&a[i], &b[i], 8) != 0 && bad++ < 4)
            CHECK_MSG(0, "[%zu] = %a, expected %a", i, b[i], a[i]);
    return bad;
}

/* b (CUDA) against a (the CPU backend), bit for bit. */
static void same(const outcome &a, const outcome &b, int squares)
{
    if (!CHECK_MSG(a.st == GPUHIST_OK && b.st == GPUHIST_OK, "status %d / %d", (int)a.st,
                   (int)b.st))
        return;
    size_t bad = 0;
    for (size_t i = 0; i < a.counts.size(); ++i)
        if (a.counts[i] != b.counts[i] && bad++ < 4)
            CHECK_MSG(0, "count[%zu] = %llu, expected %llu", i, (unsigned long long)b.counts[i],
                      (unsigned long long)a.counts[i]);
    CHECK_MSG(bad == 0, "%zu counts differ", bad);
    for (uint32_t k = 0; k < a.r.channels; ++k) {
        CHECK_EQ_U64(b.r.underflow[k], a.r.underflow[k]);
        CHECK_EQ_U64(b.r.overflow[k], a.r.overflow[k]);
        CHECK_EQ_U64(b.r.nan[k], a.r.nan[k]);
        CHECK_EQ_U64(b.r.total[k], a.r.total[k]);
    }
    CHECK_MSG(differ_f64(a.sums, b.sums) == 0, "weight sums differ in their bits");
    if (squares)
        CHECK_MSG(differ_f64(a.sq, b.sq) == 0, "sums of squares differ in their bits");
    CHECK_MSG(a.state == b.state, "the exact weight states differ");
}

/* ---- random requests ------------------------------------------------------------------------ */

static double weight_value(int mode, size_t i)
{
    const double sign = (rnd() & 1) ? -1.0 : 1.0;
    switch (mode) {
    case 0: return sign * ldexp(1.0 + unit(), (int)below(12) - 6);
    case 1: return sign * ldexp(unit(), (int)below(2200) - 1100); /* f32: 0, subnormal or inf */
    case 2: { /* cancelling pairs and small change */
        const double big = ldexp(1.0 + (double)(i / 2 % 7), 90);
        return (i & 1) ? -big : (i % 5 == 0 ? unit() : big);
    }
    case 3: {
        const uint64_t r = below(64);
        return r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : sign * unit();
    }
    case 4: return 1.5;
    case 5: return (rnd() & 1) ? -0.0 : 0.0;
    default: return sign * (1.0 - unit() * 1e-3) * (below(2) ? DBL_MAX : (double)FLT_MAX);
    }
}

static void fill_weights(request &q, int mode)
{
    const size_t n = (size_t)q.pixels(), ws = gpuhist_dtype_size(q.wdtype);
    q.w.resize(n * ws);
    for (size_t i = 0; i < n; ++i) {
        const double v = weight_value(mode, i);
        if (q.wdtype == GPUHIST_F32) {
            const float f = (float)v;
            memcpy(&q.w[i * 4], &f, 4);
        } else {
            memcpy(&q.w[i * 8], &v, 8);
        }
    }
}

/* A sample value for data mode: 0 uniform over the range and outside, 1 constant, 2 sorted, 3 hot
 * (nine in ten the constant's value, the others as mode 0: warps that fold and deposit both). */
static double data_value(int mode, size_t i, size_t n)
{
    if (mode == 1 || (mode == 3 && below(10) != 0))
        return 0.7;
    if (mode == 2)
        return -1.5 + 5.0 * (double)i / (double)(n ? n : 1);
    const uint64_t r = below(40);
    return r == 0 ? NAN : -1.5 + 5.0 * unit();
}

static void store(gpuhist_dtype dt, unsigned char *p, double x)
{
    switch (dt) {
    case GPUHIST_F32: { const float f = (float)x; memcpy(p, &f, 4); break; }
    case GPUHIST_F64: memcpy(p, &x, 8); break;
    default: {
        /* integers: the range -2 .. 3000 scaled from [-1.5, 3.5) */
        const int64_t v = isnan(x) ? 0 : (int64_t)floor((x + 1.5) * 700.0) - 2;
        switch (dt) {
        case GPUHIST_U8: { const uint8_t u = (uint8_t)v; memcpy(p, &u, 1); break; }
        case GPUHIST_I8: { const int8_t u = (int8_t)v; memcpy(p, &u, 1); break; }
        case GPUHIST_U16: { const uint16_t u = (uint16_t)v; memcpy(p, &u, 2); break; }
        case GPUHIST_I16: { const int16_t u = (int16_t)v; memcpy(p, &u, 2); break; }
        case GPUHIST_U32: { const uint32_t u = (uint32_t)v; memcpy(p, &u, 4); break; }
        case GPUHIST_I32: { const int32_t u = (int32_t)v; memcpy(p, &u, 4); break; }
        case GPUHIST_U64: { const uint64_t u = (uint64_t)v; memcpy(p, &u, 8); break; }
        default: memcpy(p, &v, 8); break;
        }
    }
    }
}

static request random_request(int index)
{
    static const gpuhist_dtype dts[] = {GPUHIST_F32, GPUHIST_F32, GPUHIST_F64, GPUHIST_U8,
                                        GPUHIST_I16, GPUHIST_U32, GPUHIST_I64, GPUHIST_U64};
    static const uint32_t bin_choices[] = {1, 2, 7, 64, 256, 256, 700, 1000, 2300, 3000};
    request q;
    q.dtype = dts[below(sizeof dts / sizeof dts[0])];
    q.wdtype = below(3) ? GPUHIST_F32 : GPUHIST_F64;
    q.bins = bin_choices[below(sizeof bin_choices / sizeof bin_choices[0])];
    const bool is_float = q.dtype == GPUHIST_F32 || q.dtype == GPUHIST_F64;
    q.kind = (gpuhist_bin_kind)below(3);
    if (q.kind == GPUHIST_BINS_INTEGER && is_float)
        q.kind = GPUHIST_BINS_EVEN;
    if (q.kind == GPUHIST_BINS_EDGES) {
        const double lo = is_float ? -1.0 : -2.0, hi = is_float ? 3.0 : 3000.0;
        q.edges.resize(q.bins + 1);
        for (uint32_t i = 0; i <= q.bins; ++i) /* uneven: quadratic */
            q.edges[i] = lo + (hi - lo) * ((double)i / q.bins) * ((double)i / q.bins);
    }
    q.outliers = below(2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
    q.channels = below(3) ? 1 : 1 + (uint32_t)below(4);
    q.mask = q.channels > 1 && below(2) ? (uint32_t)(1 + below((1u << q.channels) - 1)) : 0;
    q.squares = (int)below(2);
    const uint64_t sizes[] = {1, 31, 1000, 4099, 65537, 300001, 2000003};
    q.row_length = sizes[below(sizeof sizes / sizeof sizes[0])];
    q.rows = 1;
    const size_t pb = (size_t)q.channels * gpuhist_dtype_size(q.dtype);
    if (below(4) == 0 && q.row_length > 31) { /* a strided ROI */
        q.rows = 1 + below(7);
        q.row_length = q.row_length / q.rows + 1;
    }
    q.stride = (size_t)q.row_length * pb + (q.rows > 1 ? pb * below(5) + below(3) : 0);
    q.data.assign(q.stride * q.rows, 0);
    const int dmode = (int)below(4) == 0 ? 1 : (int)below(4);
    const int wmode = (int)below(7);
    for (uint64_t r = 0; r < q.rows; ++r)
        for (uint64_t px = 0; px < q.row_length; ++px)
            for (uint32_t c = 0; c < q.channels; ++c)
                store(q.dtype, &q.data[r * q.stride + (px * q.channels + c) * gpuhist_dtype_size(q.dtype)],
                      data_value(dmode, (size_t)(r * q.row_length + px), (size_t)q.pixels()));
    fill_weights(q, wmode);
    check_context("random %d: %s x %u channel(s) mask %x, %u %s bins, %s, %llu x %llu pixels, "
                  "%s weights mode %d%s, data mode %d",
                  index, gpuhist_dtype_name(q.dtype), q.channels, q.mask, q.bins,
                  q.kind == GPUHIST_BINS_EVEN ? "even" : q.kind == GPUHIST_BINS_EDGES ? "edge" : "integer",
                  q.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop",
                  (unsigned long long)q.rows, (unsigned long long)q.row_length,
                  gpuhist_dtype_name(q.wdtype), wmode, q.squares ? ", squares" : "", dmode);
    return q;
}

/* The request on the CPU, then on CUDA with every weighted strategy, host and device input. */
static void check_request(gpuhist_ctx *cpu, gpuhist_ctx *cuda, const request &q, int unaligned)
{
    const outcome ref = run(cpu, q, q.samples(q.data.data(), q.w.data(), GPUHIST_MEMORY_HOST));
    if (ref.st != GPUHIST_OK) { /* a request the library refuses: CUDA refuses it alike */
        CHECK_MSG(ref.st == GPUHIST_ERROR_INVALID_ARGUMENT, "cpu: %s", gpuhist_last_error(cpu));
        const outcome o =
            run(cuda, q, q.samples(q.data.data(), q.w.data(), GPUHIST_MEMORY_HOST));
        CHECK_EQ_INT(o.st, ref.st);
        return;
    }
    /* device copies; the weights `unaligned` bytes past an aligned address */
    unsigned char *dd = NULL, *dw = NULL;
    CUDA_OK(cudaMalloc(&dd, q.data.size() + 16));
    CUDA_OK(cudaMalloc(&dw, q.w.size() + 16));
    CUDA_OK(cudaMemcpy(dd, q.data.data(), q.data.size(), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dw + unaligned, q.w.data(), q.w.size(), cudaMemcpyHostToDevice));
    for (const char *name : cuda_names) {
        if (!CHECK_EQ_INT(gpuhist_set_strategy(cuda, name), GPUHIST_OK))
            continue;
        for (int dev = 0; dev < 2; ++dev) {
            const gpuhist_samples s =
                dev ? q.samples(dd, dw + unaligned, GPUHIST_MEMORY_DEVICE)
                    : q.samples(q.data.data(), q.w.data(), GPUHIST_MEMORY_HOST);
            const outcome o = run(cuda, q, s);
            if (o.st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "cuda-weighted-smem") == 0) {
                /* records past shared memory: only for f64 weights past 351 bins or f32 past
                 * 2232 (one channel) */
                CHECK_MSG((size_t)q.bins * q.active() > 350, "smem refused %u bins: %s", q.bins,
                          gpuhist_last_error(cuda));
                continue;
            }
            if (!CHECK_MSG(o.st == GPUHIST_OK, "%s (%s input): %s", name, dev ? "device" : "host",
                           gpuhist_last_error(cuda)))
                continue;
            if (strcmp(name, "auto") != 0)
                CHECK_EQ_STR(o.r.strategy, name);
            else
                CHECK(strncmp(o.r.strategy, "cuda-weighted-", 14) == 0);
            same(ref, o, q.squares);
        }
    }
    gpuhist_set_strategy(cuda, "auto");
    cudaFree(dd);
    cudaFree(dw);
}

/* Weights in other memory than the samples: refused by name, the context still usable. */
static void mixed_memory(gpuhist_ctx *cuda)
{
    check_context("random: weights and samples in different memory");
    float x[4] = {0.1f, 0.2f, 0.3f, 0.4f}, w[4] = {1, 2, 3, 4};
    float *dx = NULL, *dw = NULL;
    CUDA_OK(cudaMalloc(&dx, sizeof x));
    CUDA_OK(cudaMalloc(&dw, sizeof w));
    CUDA_OK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dw, w, sizeof w, cudaMemcpyHostToDevice));
    const gpuhist_bin_spec b = gpuhist_bins_even(2, 0.0, 1.0);
    uint64_t c[2];
    double sums[2];
    for (int k = 0; k < 3; ++k) {
        gpuhist_samples s = gpuhist_samples_1d(k == 1 ? (const void *)dx : x, GPUHIST_F32, 4);
        s.weights = k == 0 ? (const void *)dw : k == 1 ? (const void *)w : dw;
        s.weight_dtype = GPUHIST_F32;
        if (k == 2) { /* both on the device: accepted */
            s.data = dx;
        }
        gpuhist_result r = gpuhist_result_host(c);
        r.sums = sums;
        const gpuhist_status st = gpuhist_histogram(cuda, &s, &b, &r);
        if (k < 2) {
            CHECK_EQ_INT(st, GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_last_error(cuda), "samples.weights: in ");
        } else if (CHECK_EQ_INT(st, GPUHIST_OK)) {
            CHECK_EQ_U64(c[0], 4);
            CHECK_EQ_F64_BITS(sums[0], 10.0);
        }
    }
    cudaFree(dx);
    cudaFree(dw);
}

static void case_random(void)
{
    gpuhist_ctx *cuda = make_ctx(GPUHIST_BACKEND_CUDA), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    mixed_memory(cuda);
    const int cases = 160;
    for (int i = 0; i < cases; ++i) {
        const request q = random_request(i);
        check_request(cpu, cuda, q, (i % 5 == 0) ? 4 : 0);
    }
    gpuhist_destroy(cuda);
    gpuhist_destroy(cpu);
}

/* ---- known answers -------------------------------------------------------------------------- */

static request one_bin(gpuhist_dtype wd, const std::vector<double> &w)
{
    request q;
    q.dtype = GPUHIST_F32;
    q.wdtype = wd;
    q.channels = 1;
    q.mask = 0;
    q.bins = 4;
    q.kind = GPUHIST_BINS_EVEN;
    q.outliers = GPUHIST_OUTLIERS_DROP;
    q.row_length = w.size();
    q.rows = 1;
    q.stride = w.size() * 4;
    q.squares = 1;
    q.data.resize(w.size() * 4);
    for (size_t i = 0; i < w.size(); ++i)
        store(GPUHIST_F32, &q.data[i * 4], 0.5); /* bin 1 of [-1, 3) in 4 */
    q.w.resize(w.size() * gpuhist_dtype_size(wd));
    for (size_t i = 0; i < w.size(); ++i) {
        if (wd == GPUHIST_F32) {
            const float f = (float)w[i];
            memcpy(&q.w[i * 4], &f, 4);
        } else {
            memcpy(&q.w[i * 8], &w[i], 8);
        }
    }
    return q;
}

static void known(gpuhist_ctx *cpu, gpuhist_ctx *cuda, const char *what, gpuhist_dtype wd,
                  const std::vector<double> &w, double sum)
{
    check_context("known: %s", what);
    const request q = one_bin(wd, w);
    for (const char *name : cuda_names) {
        gpuhist_set_strategy(cuda, name);
        const outcome o = run(cuda, q, q.samples(q.data.data(), q.w.data(), GPUHIST_MEMORY_HOST));
        if (!CHECK_MSG(o.st == GPUHIST_OK, "%s: %s", name, gpuhist_last_error(cuda)))
            continue;
        CHECK_EQ_F64_BITS(o.sums[1], sum);
        CHECK_EQ_U64(o.counts[1], w.size());
    }
    gpuhist_set_strategy(cuda, "auto");
    check_request(cpu, cuda, q, 0);
}

static void case_known(void)
{
    gpuhist_ctx *cuda = make_ctx(GPUHIST_BACKEND_CUDA), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    const double tiny = ldexp(1.0, -1074);
    known(cpu, cuda, "1e300 + 1 - 1e300", GPUHIST_F64, {1e300, 1.0, -1e300}, 1.0);
    known(cpu, cuda, "3 x 2^-1074", GPUHIST_F64, {tiny, tiny, tiny}, 3 * tiny);
    known(cpu, cuda, "f32 subnormals", GPUHIST_F32, {ldexp(1.0, -149), ldexp(3.0, -149)},
          ldexp(4.0, -149));
    known(cpu, cuda, "+inf and -inf", GPUHIST_F32, {1.0, INFINITY, -INFINITY}, NAN);
    known(cpu, cuda, "NaN", GPUHIST_F64, {1.0, NAN}, NAN);
    known(cpu, cuda, "-inf", GPUHIST_F64, {1.0, -INFINITY, 5.0}, -INFINITY);
    known(cpu, cuda, "DBL_MAX x 2", GPUHIST_F64, {DBL_MAX, DBL_MAX}, INFINITY);
    known(cpu, cuda, "DBL_MAX x 2 - DBL_MAX", GPUHIST_F64, {DBL_MAX, DBL_MAX, -DBL_MAX}, DBL_MAX);
    known(cpu, cuda, "0.1 x 10 (f64)", GPUHIST_F64, std::vector<double>(10, 0.1), 1.0000000000000000);
    std::vector<double> fm(1u << 20, (double)FLT_MAX);
    known(cpu, cuda, "FLT_MAX x 2^20", GPUHIST_F32, fm, (double)FLT_MAX * 1048576.0);
    gpuhist_destroy(cuda);
    gpuhist_destroy(cpu);
}

/* ---- many samples in one bin ---------------------------------------------------------------- */

__global__ void fill_f32(float *p, uint64_t n, float v)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = v;
}
__global__ void fill_f64(double *p, uint64_t n, double v)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static void case_many(void)
{
    gpuhist_ctx *cuda = make_ctx(GPUHIST_BACKEND_CUDA);
    const uint64_t n = 1ull << 28;
    float *x = NULL, *w = NULL;
    CUDA_OK(cudaMalloc(&x, n * 4));
    CUDA_OK(cudaMalloc(&w, n * 8));
    fill_f32<<<1024, 256>>>(x, n, 0.5f);
    fill_f32<<<1024, 256>>>(w, n, 1.5f);
    CUDA_OK(cudaDeviceSynchronize());
    const gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 1.0);
    std::vector<uint64_t> counts(256);
    std::vector<double> sums(256), sq(256);
    for (const char *name : cuda_names) {
        check_context("many: 2^28 x 1.5, %s", name);
        gpuhist_set_strategy(cuda, name);
        gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, n);
        s.weights = w;
        s.weight_dtype = GPUHIST_F32;
        gpuhist_result r = gpuhist_result_host(counts.data());
        r.sums = sums.data();
        r.sums_squared = sq.data();
        if (!CHECK_EQ_INT(gpuhist_histogram(cuda, &s, &b, &r), GPUHIST_OK))
            continue;
        CHECK_EQ_U64(counts[128], n);
        CHECK_EQ_F64_BITS(sums[128], 1.5 * (double)n);
        CHECK_EQ_F64_BITS(sq[128], 2.25 * (double)n);
        CHECK_EQ_F64_BITS(sums[0], 0.0);
        /* f64 weights of 2^-1074, half as many (the buffer holds 2^27 doubles) */
        check_context("many: 2^27 x 2^-1074, %s", name);
        fill_f64<<<1024, 256>>>((double *)w, n / 2, ldexp(1.0, -1074));
        CUDA_OK(cudaDeviceSynchronize());
        s.count = n / 2;
        s.weight_dtype = GPUHIST_F64;
        if (!CHECK_EQ_INT(gpuhist_histogram(cuda, &s, &b, &r), GPUHIST_OK))
            continue;
        CHECK_EQ_U64(counts[128], n / 2);
        CHECK_EQ_F64_BITS(sums[128], ldexp(1.0, 27 - 1074));
        CHECK_EQ_F64_BITS(sq[128], 0.0);
        fill_f32<<<1024, 256>>>(w, n, 1.5f);
        CUDA_OK(cudaDeviceSynchronize());
    }
    cudaFree(x);
    cudaFree(w);
    gpuhist_destroy(cuda);
}

/* ---- streams --------------------------------------------------------------------------------- */

static void stream_request(gpuhist_ctx *cpu, gpuhist_ctx *cuda, const request &q, int index)
{
    const outcome ref = run(cpu, q, q.samples(q.data.data(), q.w.data(), GPUHIST_MEMORY_HOST));
    if (ref.st != GPUHIST_OK) /* refused requests: case_random */
        return;
    const size_t pb = (size_t)q.channels * gpuhist_dtype_size(q.dtype);
    const size_t ws = gpuhist_dtype_size(q.wdtype);
    const uint64_t n = q.pixels();
    unsigned char *hd = NULL, *hw = NULL, *dd = NULL, *dw = NULL; /* page-locked, device */
    CUDA_OK(cudaMallocHost(&hd, n * pb + 1));
    CUDA_OK(cudaMallocHost(&hw, n * ws + 1));
    CUDA_OK(cudaMalloc(&dd, n * pb + 1));
    CUDA_OK(cudaMalloc(&dw, n * ws + 1));
    memcpy(hd, q.data.data(), n * pb);
    memcpy(hw, q.w.data(), n * ws);
    CUDA_OK(cudaMemcpy(dd, hd, n * pb, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dw, hw, n * ws, cudaMemcpyHostToDevice));
    for (const char *name : cuda_names) {
        for (int where = 0; where < 3; ++where) { /* pageable, page-locked, device */
            check_context("streams %d: %s, %s chunks, %s x %u, %u bins, %s weights", index, name,
                          where == 0 ? "pageable" : where == 1 ? "page-locked" : "device",
                          gpuhist_dtype_name(q.dtype), q.channels, q.bins,
                          gpuhist_dtype_name(q.wdtype));
            gpuhist_set_strategy(cuda, name);
            const unsigned char *d = where == 0 ? q.data.data() : where == 1 ? hd : dd;
            const unsigned char *wp = where == 0 ? q.w.data() : where == 1 ? hw : dw;
            gpuhist_samples lay = q.samples(NULL, wp, where == 2 ? GPUHIST_MEMORY_DEVICE
                                                                 : GPUHIST_MEMORY_HOST);
            lay.count = 0;
            lay.stream_no_squares = !q.squares; /* no square records when the finish takes none */
            const gpuhist_bin_spec b = q.spec();
            gpuhist_stream *st = NULL;
            gpuhist_status rc = gpuhist_stream_begin(cuda, &lay, &b, GPUHIST_MEMORY_HOST, &st);
            if (rc == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "cuda-weighted-smem") == 0)
                continue;
            if (!CHECK_MSG(rc == GPUHIST_OK, "begin: %s", gpuhist_last_error(cuda)))
                continue;
            uint64_t done = 0;
            while (done < n && rc == GPUHIST_OK) {
                const uint64_t k = std::min<uint64_t>(n - done, 1 + below(n / 3 + 2));
                rc = gpuhist_stream_feed_weighted(st, d + done * pb, wp + done * ws, k);
                done += k;
            }
            if (!CHECK_MSG(rc == GPUHIST_OK, "feed: %s", gpuhist_stream_error(st))) {
                gpuhist_stream_abort(st);
                continue;
            }
            outcome o;
            const size_t nc = (size_t)q.bins * q.active();
            o.counts.assign(nc, 0);
            o.sums.assign(nc, -7.0);
            o.sq.assign(nc, -7.0);
            o.state.assign(ref.state.size(), 77);
            o.r = gpuhist_result_host(o.counts.data());
            o.r.sums = o.sums.data();
            o.r.sums_squared = q.squares ? o.sq.data() : NULL;
            o.r.weight_state = o.state.data();
            o.st = gpuhist_stream_finish(st, &o.r);
            CHECK_MSG(o.st == GPUHIST_OK, "finish: %s", gpuhist_last_error(cuda));
            same(ref, o, q.squares);
        }
    }
    gpuhist_set_strategy(cuda, "auto");
    cudaFreeHost(hd);
    cudaFreeHost(hw);
    cudaFree(dd);
    cudaFree(dw);
}

static void case_streams(void)
{
    gpuhist_ctx *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) { /* tiny staging chunks, a normalisation before every launch */
            setenv("GPUHIST_CUDA_CHUNK_BYTES", "4096", 1);
            setenv("GPUHIST_CUDA_WEIGHT_DEPOSITS", "1", 1);
        }
        gpuhist_ctx *cuda = make_ctx(GPUHIST_BACKEND_CUDA);
        for (int i = 0; i < (pass ? 12 : 30); ++i) {
            request q = random_request(1000 * (pass + 1) + i);
            if (q.rows > 1) { /* streams take whole contiguous pixels */
                request c = q;
                c.row_length = q.pixels();
                c.rows = 1;
                const size_t pb = (size_t)q.channels * gpuhist_dtype_size(q.dtype);
                c.stride = c.row_length * pb;
                c.data.resize(c.stride);
                for (uint64_t r = 0; r < q.rows; ++r)
                    memcpy(&c.data[r * q.row_length * pb], &q.data[r * q.stride],
                           q.row_length * pb);
                q = c;
            }
            if (pass == 1 && q.pixels() > 70000) /* keep 4 KiB chunks quick */
                continue;
            stream_request(cpu, cuda, q, i);
        }
        gpuhist_destroy(cuda);
    }
    unsetenv("GPUHIST_CUDA_CHUNK_BYTES");
    unsetenv("GPUHIST_CUDA_WEIGHT_DEPOSITS");
    gpuhist_destroy(cpu);
}

int main(int argc, char **argv)
{
    rng_state = SEED;
    const char *seed = getenv("GPUHIST_TEST_SEED");
    if (seed && *seed)
        rng_state = strtoull(seed, NULL, 0) | 1u;
    printf("test_weighted: seed 0x%llx\n", (unsigned long long)rng_state);
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {
        {"random", case_random},
        {"known", case_known},
        {"many", case_many},
        {"streams", case_streams},
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
