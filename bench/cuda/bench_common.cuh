/*
 * bench_common.cuh - what the CUDA benchmark and the sanitizer driver share: error checks, the
 * device-side data generator (hash PRNG, so 1 GiB is made in milliseconds and never crosses PCIe),
 * small helpers around the public gpuhist API.
 *
 * Only the public API (gpuhist.h) is used: the benchmark measures what a user gets.
 */
#ifndef GPUHIST_BENCH_COMMON_CUH
#define GPUHIST_BENCH_COMMON_CUH

#include "gpuhist.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

/* A failed CUDA call in the benchmark's own code is fatal: the numbers after it would be lies.
 * bench_on_fatal (if set) runs first, so a partial JSON can still be written. */
inline void (*bench_on_fatal)(void) = nullptr;

[[noreturn]] inline void bench_cuda_fatal(const char *what, cudaError_t e, const char *file,
                                          int line)
{
    std::fprintf(stderr, "FATAL: %s failed at %s:%d: %s (%s)\n", what, file, line,
                 cudaGetErrorString(e), cudaGetErrorName(e));
    std::fflush(stdout);
    if (bench_on_fatal) {
        void (*f)(void) = bench_on_fatal;
        bench_on_fatal = nullptr;
        f();
    }
    std::exit(3);
}

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t ck_e_ = (call);                                                           \
        if (ck_e_ != cudaSuccess)                                                             \
            bench_cuda_fatal(#call, ck_e_, __FILE__, __LINE__);                               \
    } while (0)

#define CK_LAUNCH(what)                                                                       \
    do {                                                                                      \
        cudaError_t ck_e_ = cudaGetLastError();                                               \
        if (ck_e_ != cudaSuccess)                                                             \
            bench_cuda_fatal(what, ck_e_, __FILE__, __LINE__);                                \
    } while (0)

/* ---- data distributions ---------------------------------------------------------------------- */

enum Dist { DIST_UNIFORM = 0, DIST_HOT90, DIST_CONSTANT, DIST_BELL, DIST_COUNT };
static const char *const dist_names[DIST_COUNT] = {"uniform", "hot90", "constant", "bell"};

__device__ __forceinline__ uint64_t bench_mix64(uint64_t z)
{
    /* splitmix64's finaliser: every output bit depends on every input bit. */
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The generator kernels below are static: a program of several files (gpuhist-bench) may include
 * this header in each, and a kernel with external linkage would then be defined twice. */

/* 90% of hot90 samples take the hot value: the top 32 bits of the hash below this threshold. */
#define BENCH_HOT_THRESHOLD 3865470566u /* 0.9 * 2^32 */

/* u8: uniform over 0..255; hot90 / constant use `hot`; bell = mean of four uniform bytes. */
static __global__ void bench_gen_u8(uint8_t *p, uint64_t n, int dist, uint64_t seed, uint32_t hot)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
        uint32_t v;
        if (dist == DIST_CONSTANT)
            v = hot;
        else if (dist == DIST_HOT90 && (uint32_t)(h >> 32) < BENCH_HOT_THRESHOLD)
            v = hot;
        else if (dist == DIST_BELL)
            v = ((uint32_t)(h & 0xFF) + (uint32_t)((h >> 8) & 0xFF) + (uint32_t)((h >> 16) & 0xFF) +
                 (uint32_t)((h >> 24) & 0xFF)) >> 2;
        else if (dist == DIST_HOT90)
            v = (uint32_t)(h & 0xFF);
        else
            v = (uint32_t)(h >> 56);
        p[i] = (uint8_t)v;
    }
}

static __global__ void bench_gen_u16(uint16_t *p, uint64_t n, int dist, uint64_t seed, uint32_t hot)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
        uint32_t v;
        if (dist == DIST_CONSTANT)
            v = hot;
        else if (dist == DIST_HOT90 && (uint32_t)(h >> 32) < BENCH_HOT_THRESHOLD)
            v = hot;
        else if (dist == DIST_BELL)
            v = ((uint32_t)(h & 0xFFFF) + (uint32_t)((h >> 16) & 0xFFFF) +
                 (uint32_t)((h >> 32) & 0xFFFF) + (uint32_t)(h >> 48)) >> 2;
        else
            v = (uint32_t)(h & 0xFFFF);
        p[i] = (uint16_t)v;
    }
}

/* f32 in [0, 1): uniform = k * 2^-24 (exact, never 1.0); bell = (sum of four 22-bit uniforms)
 * * 2^-24, whose sum < 2^24 is exact in float, so bell never reaches 1.0 either. */
__device__ __forceinline__ float bench_f32_sample(uint64_t i, int dist, uint64_t seed, float hot)
{
    uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
    if (dist == DIST_CONSTANT)
        return hot;
    if (dist == DIST_HOT90 && (uint32_t)(h >> 32) < BENCH_HOT_THRESHOLD)
        return hot;
    if (dist == DIST_BELL) {
        uint64_t h2 = bench_mix64(h ^ 0x5851F42D4C957F2Dull);
        uint32_t s = (uint32_t)(h & 0x3FFFFF) + (uint32_t)((h >> 22) & 0x3FFFFF) +
                     (uint32_t)(h2 & 0x3FFFFF) + (uint32_t)((h2 >> 22) & 0x3FFFFF);
        return (float)s * (1.0f / 16777216.0f);
    }
    return (float)(uint32_t)(h & 0xFFFFFF) * (1.0f / 16777216.0f);
}

static __global__ void bench_gen_f32(float *p, uint64_t n, int dist, uint64_t seed, float hot)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = bench_f32_sample(i, dist, seed, hot);
}

/* f16 / bf16 (bf16 != 0): bench_gen_f32's samples rounded to the half type, to nearest, ties to
 * even (values in [0, 1], finite: f16 keeps 11 significant bits, bf16 8; a value just below 1
 * may round to 1.0). */
static __global__ void bench_gen_half(uint16_t *p, uint64_t n, int dist, uint64_t seed, float hot,
                                      int bf16)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = bench_f32_sample(i, dist, seed, hot);
        const uint32_t u = __float_as_uint(v);
        uint16_t h;
        if (bf16) {
            const uint32_t low = u & 0xFFFFu, high = u >> 16;
            h = (uint16_t)(high + (low > 0x8000u || (low == 0x8000u && (high & 1u))));
        } else if (v < 6.103515625e-05f) {
            /* subnormal float16 (or 0): a multiple of 2^-24 */
            h = (uint16_t)__float2uint_rn(v * 16777216.0f);
        } else {
            /* normal: 10 stored mantissa bits of 23; a carry out of the mantissa bumps the
             * exponent, which is the right result */
            const uint32_t e = (u >> 23) - 112u, m = u & 0x7FFFFFu, low = m & 0x1FFFu;
            uint32_t r = (e << 10) | (m >> 13);
            r += low > 0x1000u || (low == 0x1000u && (r & 1u));
            h = (uint16_t)r;
        }
        p[i] = h;
    }
}

/* Arbitrary-dtype noise for the sanitizer driver: raw random bits (so NaN, inf, denormals and
 * -0.0 show up for floats), with every 7th sample pulled into [0, 1000) so in-range bins get hits. */
/* Half-precision samples (f16 or bf16 bit patterns) with lower <= value < upper, counted into
 * *n (zeroed by the caller): what a half-open range's counts must sum to. Rounding f32 data to
 * a half type puts some values on the upper edge (1 - 2^-12 rounds to 1.0 in f16), outside
 * [0, 1). Each pattern is widened to float by its bits, not by the library's loads. */
static __global__ void bench_count_half_in(const uint16_t *p, uint64_t n, int bf16, float lower,
                                           float upper, unsigned long long *in)
{
    unsigned long long c = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint32_t h = p[i];
        float v;
        if (bf16) {
            v = __uint_as_float(h << 16);
        } else {
            const uint32_t s = (h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u;
            if (e == 31u)
                v = __uint_as_float(s | 0x7F800000u | (m << 13)); /* inf / NaN */
            else if (e == 0u)
                v = (s ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-08f; /* m * 2^-24 */
            else
                v = __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
        }
        c += v >= lower && v < upper;
    }
    atomicAdd(in, c);
}

static __global__ void bench_gen_bits(uint8_t *p, uint64_t bytes, uint32_t sample_size,
                                      int is_float, uint64_t seed)
{
    uint64_t n = bytes / sample_size;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
        uint8_t *q = p + i * sample_size;
        if (i % 7 == 0 || (i % 3 == 0 && is_float)) {
            uint32_t small = (uint32_t)(h % 1000);
            if (is_float && sample_size == 4) {
                float f = (float)small + 0.25f * (float)((h >> 20) & 3);
                memcpy(q, &f, 4);
                continue;
            }
            if (is_float && sample_size == 8) {
                double d = (double)small + 0.25 * (double)((h >> 20) & 3);
                memcpy(q, &d, 8);
                continue;
            }
            h = small;
        }
        for (uint32_t b = 0; b < sample_size; ++b)
            q[b] = (uint8_t)(h >> (8 * (b & 7)));
    }
}

inline int bench_gen_grid()
{
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms * 8;
}

/* ---- small helpers ------------------------------------------------------------------------------- */

inline std::string bench_now_string()
{
    char buf[64];
    time_t t = time(nullptr);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    return buf;
}

/* The CUDA strategy names, in registry order. */
inline std::vector<std::string> bench_strategies_of(gpuhist_backend backend)
{
    std::vector<std::string> out;
    size_t n = gpuhist_strategy_count();
    for (size_t i = 0; i < n; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == backend && d.name)
            out.push_back(d.name);
    }
    return out;
}

#endif
