/*
 * simd_x86.c - the AVX2 forms of THE TEST (cpu_simd.h) for cpu-serial and cpu-threads.
 *
 * Mechanism: 8 f32 (or 4 f64) samples per step: d = x - lower, f = d * scale (two separately
 * rounded IEEE operations, never fused: intrinsics are not contracted, and the library is built
 * with -ffp-contract=off), in = x >= lower & f >= 0 & f < bins (ordered compares: NaN fails),
 * key = truncation of f (its floor: f >= 0), frac = f - key (exact), pass = in & frac > t_lo &
 * frac < t_hi; the keys are stored for all lanes and the lanes that fail are listed for the
 * caller's exact scalar rule. These are the operations of fast_even.h's host form
 * (gpuhist_fe_key_f32 and its double twin) lane by lane, under the same MXCSR rounding and
 * flushing, so a lane passes exactly when the scalar test would.
 * Two vectors per step share one mask test; a direct certificate with scale > 0 (the common
 * case: [0, 1) with 2^k bins) tests the range with f < bins and the sign bit of f (pass_f32v).
 * Why: the estimate, the range checks and the test take ~12 scalar instructions per sample;
 *    here ~1 per f32 sample, which leaves the counter increments as the loop's limit (the
 *    two-vector step and the sign-bit range test: f64 256 even bins 19.0-19.2 -> 20.5-21.2 GB/s
 *    per CPU-second, f32 4096 even 11.8-12.2 -> 13.0-13.4, AMD EPYC, same run).
 * Limits: compiled only for x86-64 with GCC or Clang (target attributes, no -mavx2 for the
 *    rest of the library), used only when the CPU reports AVX2 at run time; elsewhere
 *    gpuhist_cpu_simd() is 0. Unaligned loads; any n (a scalar tail of the same tests).
 */
#include "cpu_simd.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GPUHIST_HAVE_AVX2_KERNELS 1
#include <immintrin.h>
#endif

#ifdef GPUHIST_HAVE_AVX2_KERNELS

static int simd_decided = -1;

int gpuhist_cpu_simd(void)
{
    int d = __atomic_load_n(&simd_decided, __ATOMIC_RELAXED);
    if (d < 0) {
        const char *env = getenv("GPUHIST_CPU_SIMD");
        __builtin_cpu_init();
        d = __builtin_cpu_supports("avx2") && !(env && strcmp(env, "0") == 0);
        __atomic_store_n(&simd_decided, d, __ATOMIC_RELAXED);
    }
    return d;
}

/* The scalar test of one f32 sample (the tail), as fast_even.h's host form. */
static inline int pass_f32(float x, const gpuhist_cpu_test_f32 *c, uint32_t *key)
{
    const float d = x - c->lower;
    const float f = d * c->scale;
    if (!(x >= c->lower && f >= 0.0f && f < c->bins))
        return 0;
    const uint32_t k = (uint32_t)f;
    const float fr = f - (float)k;
    *key = k;
    return fr > c->t_lo && fr < c->t_hi;
}

static inline int pass_f64(double x, const gpuhist_cpu_test_f64 *c, uint32_t *key)
{
    const double d = x - c->lower;
    const double f = d * c->scale;
    if (!(x >= c->lower && f >= 0.0 && f < c->bins))
        return 0;
    const uint32_t k = (uint32_t)f;
    const double fr = f - (double)k;
    *key = k;
    return fr > c->t_lo && fr < c->t_hi;
}

/*
 * The lanes of one vector that pass, as a bit mask (bit j: lane j).
 * cut = 0: a "direct" certificate (t_lo < 0, t_hi >= 1), whose fraction test every in-range
 *    sample passes: left out.
 * sgn = 1 (with cut = 0, only where scale > 0): "in range" as f < bins with the sign bit of f
 *    clear, two instructions instead of five. Exact: x < lower (or x = -0, lower = +0) makes
 *    d = x - lower negative or -0, and f = d * scale carries d's sign (scale > 0), so its sign
 *    bit is set; x NaN makes f NaN, which fails the ordered f < bins; and a clear sign bit means
 *    d >= +0, i.e. x >= lower, and f >= 0: the three compares of the full test. A lane this
 *    form refuses and the full test passes (x = -0 with lower = +0) goes to the caller's scalar
 *    rule, which gives it the same bin.
 */
__attribute__((target("avx2"), always_inline)) static inline unsigned
pass_f32v(const __m256 x, const __m256 f, const __m256i k, const gpuhist_cpu_test_f32 *c,
          const int cut, const int sgn)
{
    const __m256 bins = _mm256_set1_ps(c->bins);
    if (sgn)
        return (unsigned)_mm256_movemask_ps(
            _mm256_andnot_ps(f, _mm256_cmp_ps(f, bins, _CMP_LT_OQ)));
    const __m256 lower = _mm256_set1_ps(c->lower);
    __m256 ok = _mm256_and_ps(_mm256_cmp_ps(x, lower, _CMP_GE_OQ),
                              _mm256_cmp_ps(f, _mm256_setzero_ps(), _CMP_GE_OQ));
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(f, bins, _CMP_LT_OQ));
    if (cut) {
        const __m256 fr = _mm256_sub_ps(f, _mm256_cvtepi32_ps(k));
        const __m256 t_lo = _mm256_set1_ps(c->t_lo), t_hi = _mm256_set1_ps(c->t_hi);
        ok = _mm256_and_ps(ok, _mm256_and_ps(_mm256_cmp_ps(fr, t_lo, _CMP_GT_OQ),
                                             _mm256_cmp_ps(fr, t_hi, _CMP_LT_OQ)));
    }
    return (unsigned)_mm256_movemask_ps(ok);
}

__attribute__((target("avx2"), always_inline)) static inline unsigned
pass_f64v(const __m256d x, const __m256d f, const __m128i k, const gpuhist_cpu_test_f64 *c,
          const int cut, const int sgn)
{
    const __m256d bins = _mm256_set1_pd(c->bins);
    if (sgn)
        return (unsigned)_mm256_movemask_pd(
            _mm256_andnot_pd(f, _mm256_cmp_pd(f, bins, _CMP_LT_OQ)));
    const __m256d lower = _mm256_set1_pd(c->lower);
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(x, lower, _CMP_GE_OQ),
                               _mm256_cmp_pd(f, _mm256_setzero_pd(), _CMP_GE_OQ));
    ok = _mm256_and_pd(ok, _mm256_cmp_pd(f, bins, _CMP_LT_OQ));
    if (cut) {
        const __m256d fr = _mm256_sub_pd(f, _mm256_cvtepi32_pd(k));
        const __m256d t_lo = _mm256_set1_pd(c->t_lo), t_hi = _mm256_set1_pd(c->t_hi);
        ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(fr, t_lo, _CMP_GT_OQ),
                                             _mm256_cmp_pd(fr, t_hi, _CMP_LT_OQ)));
    }
    return (unsigned)_mm256_movemask_pd(ok);
}

/* Two vectors per step (16 f32 / 8 f64 samples), one test of their joint mask: the loop's
 * branch and mask bookkeeping are paid once per two vectors. */
__attribute__((target("avx2"), always_inline)) static inline size_t
keys_f32(const unsigned char *p, size_t n, const gpuhist_cpu_test_f32 *c, uint32_t *key,
         uint32_t *miss, const int cut, const int sgn)
{
    const __m256 lower = _mm256_set1_ps(c->lower), scale = _mm256_set1_ps(c->scale);
    size_t nm = 0, i = 0;
    for (; i + 16u <= n; i += 16u) {
        const __m256 x0 = _mm256_loadu_ps((const float *)(const void *)(p + 4u * i));
        const __m256 x1 = _mm256_loadu_ps((const float *)(const void *)(p + 4u * i + 32u));
        const __m256 f0 = _mm256_mul_ps(_mm256_sub_ps(x0, lower), scale);
        const __m256 f1 = _mm256_mul_ps(_mm256_sub_ps(x1, lower), scale);
        /* lanes out of range convert to 0x80000000 or garbage: they fail the test */
        const __m256i k0 = _mm256_cvttps_epi32(f0), k1 = _mm256_cvttps_epi32(f1);
        _mm256_storeu_si256((__m256i *)(void *)(key + i), k0);
        _mm256_storeu_si256((__m256i *)(void *)(key + i + 8u), k1);
        unsigned bad = ~(pass_f32v(x0, f0, k0, c, cut, sgn) |
                         (pass_f32v(x1, f1, k1, c, cut, sgn) << 8)) &
                       0xFFFFu;
        while (__builtin_expect(bad != 0u, 0)) {
            miss[nm++] = (uint32_t)(i + (unsigned)__builtin_ctz(bad));
            bad &= bad - 1u;
        }
    }
    for (; i < n; ++i) {
        float x;
        memcpy(&x, p + 4u * i, 4);
        if (!pass_f32(x, c, &key[i]))
            miss[nm++] = (uint32_t)i;
    }
    return nm;
}

__attribute__((target("avx2"), always_inline)) static inline size_t
keys_f64(const unsigned char *p, size_t n, const gpuhist_cpu_test_f64 *c, uint32_t *key,
         uint32_t *miss, const int cut, const int sgn)
{
    const __m256d lower = _mm256_set1_pd(c->lower), scale = _mm256_set1_pd(c->scale);
    size_t nm = 0, i = 0;
    for (; i + 8u <= n; i += 8u) {
        const __m256d x0 = _mm256_loadu_pd((const double *)(const void *)(p + 8u * i));
        const __m256d x1 = _mm256_loadu_pd((const double *)(const void *)(p + 8u * i + 32u));
        const __m256d f0 = _mm256_mul_pd(_mm256_sub_pd(x0, lower), scale);
        const __m256d f1 = _mm256_mul_pd(_mm256_sub_pd(x1, lower), scale);
        const __m128i k0 = _mm256_cvttpd_epi32(f0), k1 = _mm256_cvttpd_epi32(f1); /* bins <= 2^24 */
        _mm256_storeu_si256((__m256i *)(void *)(key + i), _mm256_set_m128i(k1, k0));
        unsigned bad = ~(pass_f64v(x0, f0, k0, c, cut, sgn) |
                         (pass_f64v(x1, f1, k1, c, cut, sgn) << 4)) &
                       0xFFu;
        while (__builtin_expect(bad != 0u, 0)) {
            miss[nm++] = (uint32_t)(i + (unsigned)__builtin_ctz(bad));
            bad &= bad - 1u;
        }
    }
    for (; i < n; ++i) {
        double x;
        memcpy(&x, p + 8u * i, 8);
        if (!pass_f64(x, c, &key[i]))
            miss[nm++] = (uint32_t)i;
    }
    return nm;
}

__attribute__((target("avx2"))) size_t gpuhist_cpu_test_keys_f32(const unsigned char *p, size_t n,
                                                                  const gpuhist_cpu_test_f32 *c,
                                                                  uint32_t *key, uint32_t *miss)
{
    if (c->t_lo < 0.0f && c->t_hi >= 1.0f)
        return c->scale > 0.0f ? keys_f32(p, n, c, key, miss, 0, 1)
                               : keys_f32(p, n, c, key, miss, 0, 0);
    return keys_f32(p, n, c, key, miss, 1, 0);
}

__attribute__((target("avx2"))) size_t gpuhist_cpu_test_keys_f64(const unsigned char *p, size_t n,
                                                                  const gpuhist_cpu_test_f64 *c,
                                                                  uint32_t *key, uint32_t *miss)
{
    if (c->t_lo < 0.0 && c->t_hi >= 1.0)
        return c->scale > 0.0 ? keys_f64(p, n, c, key, miss, 0, 1)
                              : keys_f64(p, n, c, key, miss, 0, 0);
    return keys_f64(p, n, c, key, miss, 1, 0);
}

#else /* no AVX2 kernels on this target */

int gpuhist_cpu_simd(void)
{
    return 0;
}

size_t gpuhist_cpu_test_keys_f32(const unsigned char *p, size_t n, const gpuhist_cpu_test_f32 *c,
                                 uint32_t *key, uint32_t *miss)
{
    (void)p, (void)c, (void)key;
    for (size_t i = 0; i < n; ++i)
        miss[i] = (uint32_t)i; /* never called: gpuhist_cpu_simd() is 0; all misses is safe */
    return n;
}

size_t gpuhist_cpu_test_keys_f64(const unsigned char *p, size_t n, const gpuhist_cpu_test_f64 *c,
                                 uint32_t *key, uint32_t *miss)
{
    (void)p, (void)c, (void)key;
    for (size_t i = 0; i < n; ++i)
        miss[i] = (uint32_t)i;
    return n;
}

#endif
