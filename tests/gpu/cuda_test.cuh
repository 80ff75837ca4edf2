/*
 * cuda_test.cuh - what the CUDA-only tests (test_cuda_*.cu, one program per subject) share:
 * CUDA_OK, a reproducible generator, the CUDA context (exit 77 without a GPU), the names of the
 * CUDA strategies, the expected result from cpu-reference on a host copy, the comparison of a
 * result with it bin by bin and tally by tally, every CUDA strategy (or one) run and compared,
 * device copies at any offset, random samples with adversarial values, and the driver that
 * runs the case named on the command line (`test_cuda_<subject> CASE`).
 *
 * Header-only, like check.h: each program is one translation unit.
 */
#ifndef GPUHIST_TEST_CUDA_TEST_CUH
#define GPUHIST_TEST_CUDA_TEST_CUH

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

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static inline gpuhist_ctx *cuda_ctx(void)
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
static inline std::vector<const char *> cuda_strategies(void)
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
static inline expected reference(const gpuhist_samples *s, const gpuhist_bin_spec *b)
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
static inline void compare(const expected &e, const gpuhist_result &r, const uint64_t *counts,
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
static inline void all_strategies(gpuhist_ctx *ctx, const gpuhist_samples *dev, const gpuhist_bin_spec *b,
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

static inline void *to_device(const void *host, size_t bytes, size_t offset, void **base)
{
    unsigned char *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, bytes + offset + 16));
    CUDA_OK(cudaMemcpy(d + offset, host, bytes, cudaMemcpyHostToDevice));
    *base = d;
    return d + offset;
}

/* Random samples of a dtype with adversarial values mixed in (NaN, inf, -0.0, edges, extremes). */
static inline std::vector<unsigned char> make_data(gpuhist_dtype dt, size_t n, double lo, double hi)
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

/* One strategy on `s` (counts on the host), compared with `e`. */
static inline void one_strategy(gpuhist_ctx *ctx, const char *name, const gpuhist_samples *s,
                         const gpuhist_bin_spec *b, const expected &e)
{
    std::vector<uint64_t> counts(e.counts.size());
    gpuhist_result r = gpuhist_result_host(counts.data());
    if (CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK) &&
        CHECK_MSG(gpuhist_histogram(ctx, s, b, &r) == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
        compare(e, r, counts.data(), 1);
}

/* One case of a program: `test_cuda_<subject> NAME` runs it. */
struct cuda_case {
    const char *name;
    void (*run)(void);
};

/* Run the case named by argv[1]. @return check_exit(), or 2 with the list of cases. */
static inline int cuda_test_main(int argc, char **argv, const cuda_case *cases, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (argc == 2 && !strcmp(argv[1], cases[i].name)) {
            cases[i].run();
            return check_exit();
        }
    fprintf(stderr, "usage: %s CASE, CASE one of:", argv[0]);
    for (size_t i = 0; i < n; ++i)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}

#endif
