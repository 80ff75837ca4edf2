/*
 * exact_sum.h - exact, order-independent sums of floating-point weights, shared by host C, CUDA
 * and OpenCL C: the accumulator behind bit-reproducible weighted histograms.
 *
 * Mechanism: a weight w = +-m * 2^E (m the integer significand) is an integer multiple of the
 * smallest subnormal of its type, N = m * 2^(E + BIAS). N is split into 32-bit digits at the
 * digit boundaries its bit position falls between (two digits for f32, three for f64), and each
 * digit is added, with w's sign, to a signed 64-bit limb: limb i counts units of 2^(32 i - BIAS).
 * Additions are plain integer adds (atomic adds on a device), so the limbs after any set of
 * deposits are the same whatever the order, the chunking, the thread or the device count: the
 * sum is exact. A limb takes 2^31 deposits before it could overflow; gh_xsum_normalize moves
 * each limb's carry into the next one (the caller normalises at least every 2^31 deposits per
 * accumulator; counts beyond that are fine after normalising).
 *
 * Result: gh_xsum_to_double rounds the exact sum once, to nearest with ties to even: the
 * correctly rounded sum (no error beyond that one rounding, whatever the number of weights and
 * their cancellation; an exact sum beyond the double range gives +-inf). Infinite and NaN
 * weights are not deposited; the caller keeps them as flags (GH_XSUM_POS_INF, GH_XSUM_NEG_INF,
 * GH_XSUM_NAN OR'ed together) and gh_xsum_special gives the IEEE result of adding them to any
 * finite sum: NaN when a NaN or both infinities occurred, else the infinity.
 *
 * Limits: f32 weights need GH_XSUM_LIMBS_F32 limbs (80 bytes), f64 weights GH_XSUM_LIMBS_F64
 * (544 bytes) per accumulator; the top limb leaves room for 2^64 weights of the largest finite
 * value. Squares of f32 weights are exact doubles (sum them as f64); squares of f64 weights are
 * deposited as the two doubles of their exact product (hi + lo), which is exact unless lo falls
 * below the subnormal range (then lo is rounded once, deterministically: the order still does
 * not matter, and the error is at most 2^-1075 per square) or w^2 overflows (+inf).
 */
#ifndef GPUHIST_EXACT_SUM_H
#define GPUHIST_EXACT_SUM_H

#ifndef GPUHIST_BINMAP_H /* an OpenCL program has binmap.h before it, and no include path */
#include "binmap.h"
#endif

#define GH_XSUM_LIMBS_F32 10
#define GH_XSUM_LIMBS_F64 68
#define GH_XSUM_BIAS_F32 149  /* bit 0 of limb 0 is 2^-149, the smallest f32 subnormal */
#define GH_XSUM_BIAS_F64 1074 /* 2^-1074, the smallest f64 subnormal */

/* flags for weights that are not finite (never 1: the split functions return 1 for a deposit) */
#define GH_XSUM_POS_INF 2u
#define GH_XSUM_NEG_INF 4u
#define GH_XSUM_NAN 8u

#if defined(__OPENCL_VERSION__)
#define GH_F64_BITS(x) as_ulong(x)
#define GH_F32_BITS(x) as_uint(x)
#define GH_LDEXP(x, e) ldexp((x), (e))
#elif defined(__CUDA_ARCH__)
#define GH_F64_BITS(x) ((gh_u64)__double_as_longlong(x))
#define GH_F32_BITS(x) ((gh_u32)__float_as_uint(x))
#define GH_LDEXP(x, e) ldexp((x), (e))
#else
#include <string.h>
GH_FN gh_u64 gh_f64_bits_(double x)
{
    gh_u64 b;
    memcpy(&b, &x, sizeof b);
    return b;
}
GH_FN gh_u32 gh_f32_bits_(float x)
{
    gh_u32 b;
    memcpy(&b, &x, sizeof b);
    return b;
}
#define GH_F64_BITS(x) gh_f64_bits_(x)
#define GH_F32_BITS(x) gh_f32_bits_(x)
#define GH_LDEXP(x, e) ldexp((x), (e))
#endif

/*
 * Split an f64 weight into its deposit: add d[k] to limb (*limb + k), k = 0, 1, 2.
 * @return 1 (deposit), 0 (zero: nothing to add) or one GH_XSUM_* flag (not finite).
 */
GH_FN gh_u32 gh_xsum_split_f64(double w, gh_u32 *limb, gh_i64 *d)
{
    const gh_u64 bits = GH_F64_BITS(w);
    const gh_u32 e = (gh_u32)(bits >> 52) & 0x7FFu;
    gh_u64 m = bits & 0xFFFFFFFFFFFFFull;
    if (e == 0x7FFu)
        return m ? GH_XSUM_NAN : (bits >> 63) ? GH_XSUM_NEG_INF : GH_XSUM_POS_INF;
    if (e == 0u && m == 0u)
        return 0u;
    gh_u32 p = 0u; /* bit position of m's bit 0 above 2^-1074 */
    if (e) {
        m |= (gh_u64)1 << 52;
        p = e - 1u;
    }
    const gh_u32 s = p & 31u;
    const gh_u64 lo = m << s;                          /* bits 0..63 of m * 2^s */
    const gh_u64 hi = s ? m >> (64u - s) : (gh_u64)0;  /* bits 64..83 */
    *limb = p >> 5;
    d[0] = (gh_i64)(lo & 0xFFFFFFFFu);
    d[1] = (gh_i64)(lo >> 32);
    d[2] = (gh_i64)hi;
    if (bits >> 63) {
        d[0] = -d[0];
        d[1] = -d[1];
        d[2] = -d[2];
    }
    return 1u;
}

/* The same for an f32 weight: two digits, d[0] and d[1]. */
GH_FN gh_u32 gh_xsum_split_f32(float w, gh_u32 *limb, gh_i64 *d)
{
    const gh_u32 bits = GH_F32_BITS(w);
    const gh_u32 e = (bits >> 23) & 0xFFu;
    gh_u64 m = bits & 0x7FFFFFu;
    if (e == 0xFFu)
        return m ? GH_XSUM_NAN : (bits >> 31) ? GH_XSUM_NEG_INF : GH_XSUM_POS_INF;
    if (e == 0u && m == 0u)
        return 0u;
    gh_u32 p = 0u;
    if (e) {
        m |= (gh_u64)1 << 23;
        p = e - 1u;
    }
    const gh_u64 v = m << (p & 31u); /* < 2^55 */
    *limb = p >> 5;
    d[0] = (gh_i64)(v & 0xFFFFFFFFu);
    d[1] = (gh_i64)(v >> 32);
    if (bits >> 31) {
        d[0] = -d[0];
        d[1] = -d[1];
    }
    return 1u;
}

/* Move each limb's carry into the next: limbs 0 .. n-2 end in [0, 2^32), the top one signed. */
GH_FN void gh_xsum_normalize(gh_i64 *x, gh_u32 n)
{
    for (gh_u32 i = 0; i + 1u < n; ++i) {
        const gh_i64 c = x[i] >> 32; /* arithmetic: floor(x / 2^32) */
        x[i] -= (gh_i64)((gh_u64)c << 32);
        x[i + 1u] += c;
    }
}

/* Bit i of a normalised, non-negative accumulator of n limbs (the top limb may hold more than
 * 32 bits). */
GH_FN gh_u32 gh_xsum_bit_(const gh_i64 *x, gh_u32 n, gh_u32 i)
{
    const gh_u32 k = (i >> 5) < n - 1u ? (i >> 5) : n - 1u;
    return (gh_u32)(((gh_u64)x[k] >> (i - 32u * k)) & 1u);
}

/*
 * The exact sum rounded once to the nearest double (ties to even). `x` (n limbs, bit 0 of limb
 * 0 worth 2^-bias) is normalised and, when negative, negated in place. Use it only on a copy
 * that is not needed again.
 */
GH_FN double gh_xsum_to_double(gh_i64 *x, gh_u32 n, int bias)
{
    gh_xsum_normalize(x, n);
    const int negative = x[n - 1u] < 0;
    if (negative) {
        for (gh_u32 i = 0; i < n; ++i)
            x[i] = -x[i];
        gh_xsum_normalize(x, n);
    }
    int top = (int)n - 1;
    while (top >= 0 && x[top] == 0)
        --top;
    if (top < 0)
        return 0.0;
    /* T: the position of the highest set bit (the top limb may hold more than 32 bits) */
    gh_u64 t = (gh_u64)x[top];
    int tb = 63;
    while (!((t >> tb) & 1u))
        --tb;
    const int T = top * 32 + tb;
    double r;
    if (T < 53) { /* fewer than 54 bits: exact (a subnormal or the smallest normals) */
        gh_u64 v = 0;
        for (int i = T; i >= 0; --i)
            v = (v << 1) | gh_xsum_bit_(x, n, (gh_u32)i);
        r = GH_LDEXP((double)v, -bias);
    } else {
        gh_u64 mant = 0;
        for (int i = T; i > T - 53; --i)
            mant = (mant << 1) | (gh_u64)gh_xsum_bit_(x, n, (gh_u32)i);
        const gh_u32 round = gh_xsum_bit_(x, n, (gh_u32)(T - 53));
        gh_u32 sticky = 0;
        for (int i = T - 54; i >= 0 && !sticky; --i) {
            if ((i & 31) == 31 && (gh_u32)(i >> 5) < n - 1u && x[i >> 5] == 0) { /* zero limb */
                i -= 31;
                continue;
            }
            sticky = gh_xsum_bit_(x, n, (gh_u32)i);
        }
        int exp = T - 52 - bias;
        if (round && (sticky || (mant & 1u))) {
            ++mant;
            if (mant >> 53) {
                mant >>= 1;
                ++exp;
            }
        }
        /* mant < 2^53: ldexp is exact unless the result passes the double range (+inf) */
        r = exp + 52 >= 1024 ? (double)INFINITY : GH_LDEXP((double)mant, exp);
    }
    return negative ? -r : r;
}

/* The IEEE sum of the non-finite weights with any finite sum (flags: GH_XSUM_*). */
GH_FN double gh_xsum_special(gh_u32 flags)
{
    if ((flags & GH_XSUM_NAN) || (flags & (GH_XSUM_POS_INF | GH_XSUM_NEG_INF)) ==
                                     (GH_XSUM_POS_INF | GH_XSUM_NEG_INF))
        return (double)NAN;
    return (flags & GH_XSUM_POS_INF) ? (double)INFINITY : -(double)INFINITY;
}

#endif
