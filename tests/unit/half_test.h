/*
 * half_test.h - float16 and bfloat16 conversions for the tests, written independently of the
 * library's (binmap.h): frexp/ldexp arithmetic on doubles instead of bit manipulation, so that a
 * test comparing the two catches a slip in either.
 *
 *   test_f16_bits(x)   the float16 nearest the double x (ties to even, as NumPy's
 *                      astype(float16) rounds), +-inf beyond 65520, a quiet NaN for NaN
 *   test_f16_value(h)  the value of float16 bit pattern h, as a double
 *   test_bf16_bits(x)  the bfloat16 of x rounded to float32 first, then to bfloat16 ties to even
 *                      (what ml_dtypes and torch give for a double)
 *   test_bf16_value(h) the value of bfloat16 bit pattern h, as a double
 */
#ifndef GPUHIST_TEST_HALF_H
#define GPUHIST_TEST_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline double test_f16_value(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, -24);
    else
        v = ldexp((double)(m + 1024), e - 25);
    return (h & 0x8000u) ? -v : v;
}

static inline uint16_t test_f16_bits(double x)
{
    if (x != x)
        return 0x7e00u;
    const uint16_t sign = signbit(x) ? 0x8000u : 0u;
    const double a = fabs(x);
    if (a >= 65520.0)
        return sign | 0x7c00u;
    if (a < ldexp(1.0, -14)) /* subnormal (or the smallest normal, reached by rounding up) */
        return sign | (uint16_t)nearbyint(ldexp(a, 24));
    int k;
    const double f = frexp(a, &k); /* a = f * 2^k, f in [0.5, 1) */
    double m = nearbyint(ldexp(f, 11)); /* 11 significant bits: [1024, 2048] */
    if (m == 2048.0) {
        m = 1024.0;
        ++k;
    }
    const int field = k - 1 + 15;
    if (field >= 31)
        return sign | 0x7c00u;
    return sign | (uint16_t)(field << 10) | (uint16_t)((int)m - 1024);
}

static inline double test_bf16_value(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t test_bf16_bits(double x)
{
    const float f = (float)x;
    if (f != f)
        return 0x7fc0u;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    /* to nearest, ties to even, on the low 16 bits */
    const uint32_t low = u & 0xffffu, high = u >> 16;
    if (low > 0x8000u || (low == 0x8000u && (high & 1u)))
        return (uint16_t)(high + 1u);
    return (uint16_t)high;
}

#endif
