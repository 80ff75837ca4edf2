/*
 * fast_even.h - THE fast EVEN bin estimate and its certificate, shared by host C, CUDA C++ and
 * OpenCL C (on top of binmap.h). Every fast path that maps a sample to an EVEN bin by
 * multiplying (the CPU's cpu-serial/cpu-threads loops, the CUDA kernels of cuda-fast-smem,
 * cuda-fast-global/-cluster, cuda-fast-packed16-f32 and cuda-two-pass) uses these functions and
 * this one proof; the answer is always binmap.h's, bit for bit.
 *
 * Bin kinds. Only EVEN bins have a multiply estimate. INTEGER bins are one exact subtraction;
 * EDGES bins are searched (or, cuda-fast-smem's f32 cell table, compared with float thresholds):
 * neither estimates, so neither needs a certificate.
 *
 * The estimate (two domains; the same IEEE operations on every device):
 *   f32 samples (float edges):   f(x) = fl32(fl32(x - lower_f) * scale_f)
 *   every other dtype (double edges; integers converted to double where exact, |x| <= 2^53):
 *                                f(x) = fl64(fl64(x - lower) * scale)
 * each operation rounded to nearest on its own: no fused multiply-add (host code is built with
 * -ffp-contract=off, OpenCL code has FP_CONTRACT OFF, CUDA device code uses sub.rn/mul.rn by
 * inline PTX for f32 - no flush-to-zero even under -ftz or --use_fast_math - and
 * __dsub_rn/__dmul_rn for f64). Each rounding is monotone, so f is non-decreasing in x (also
 * where a host or device flushes subnormals to zero: the flush is monotone too).
 *
 * The certificate (computed once per bin spec on the host by gpuhist_fe_cert_of, cached):
 * with E_0 = the first edge, E_bins = the last, E_i = binmap.h's edges (gpuhist_even_edge_f32 /
 * _f64, non-decreasing; for f32 samples either kind of float edge, double rounded to float or
 * NumPy 2's float32 linspace), pred(E) the largest value of the domain below E,
 *     a_i = f(pred(E_i))   (0 <= i < bins: the largest estimate of any sample below E_i)
 *     b_i = f(E_i)         (1 <= i <= bins: the smallest estimate of any sample at/above E_i)
 *     t_lo >= max_i (a_i - i),   t_hi <= min_i (b_i - (i - 1)),
 * evaluated with the very operations above. Monotonicity gives, for every sample x:
 *     f(x) > a_i  =>  x >= E_i          f(x) < b_i  =>  x < E_i.
 * Let key = floor(f(x)) and frac = f(x) - key (exact).
 *   THE TEST. key < bins and t_lo < frac < t_hi prove E_key <= x < E_(key+1): frac > t_lo gives
 *     f > key + t_lo >= a_key, and frac < t_hi gives f < key + t_hi <= b_(key+1). With
 *     non-decreasing edges this is exactly binmap.h's answer (its walk ends at the largest
 *     i < bins with E_i <= x). It holds for any x, NaN and out-of-range samples included (they
 *     never pass: x >= E_bins would need f < b_bins; x < E_0 has f <= a_0, and either a_0 < 0,
 *     so f is negative and has no key, or a_0 >= 0 enters t_lo - a negative a_0 bounds nothing
 *     and is left out; NaN has no key), so a caller may test before checking the range.
 *     "Direct" specs (t_lo < 0 and t_hi >= 1, e.g. every [0, 1) grid with a power-of-two bin
 *     count) pass every key < bins: the test is key < bins alone.
 *   The certificate holds (ok) only when t_lo < 1, t_hi > 0 and t_lo < t_hi (for f32 also with
 *   t_lo rounded up to float, the t_lo_f the code compares with). Then, for x in [E_0, E_bins)
 *   (so f >= 0), the bin is always within one of k = min(key, bins - 1):
 *     if f >= bins, x >= E_(bins-1) (f >= bins > bins - 1 + t_lo >= a_(bins-1)): the bin is
 *     bins - 1 = k; else x >= E_(k-1) when k >= 1 (f >= k > k - 1 + t_lo >= a_(k-1)) and
 *     x < E_(k+2) when k + 2 <= bins (f < k + 1 < k + 1 + t_hi <= b_(k+2)).
 *   THE NEIGHBOUR RULE: so the bin is k - 1 if x < E_k, k + 1 if x >= E_(k+1), else k: two edge
 *     compares (the CPU loops, against their edge table; predicted branches).
 *   THE ONE-EDGE RULE: with j = key + (frac > t_lo) clamped to bins (key = bins when f >= bins),
 *     the bin is j - 1 + (x >= E_j): one edge (the CUDA kernels' slow paths, which compute it).
 *     frac <= t_lo gives f <= key + t_lo < key + t_hi <= b_(key+1), so x < E_(key+1) and the
 *     bin is key - 1 or key, decided by E_key (key = 0: bin 0, as x >= E_0); frac > t_lo gives
 *     x >= E_key, so the bin is key or key + 1, decided by E_(key+1); f >= bins: j = bins and
 *     the bin is bins - 1 (x < E_bins). A sample that passes the test satisfies both rules.
 * There is no analytic error bound: the certificate IS the bound, measured on every edge. A spec
 * whose estimate can be more than one bin off somewhere (huge offsets against the bin width)
 * gets t_lo >= 1 or t_hi <= 0 and is refused.
 *
 * Refusals (ok = 0: nothing passes the test, the rules may not be used; callers take binmap.h's
 * exact slot function or an equivalent table walk):
 *  - not EVEN, NumPy's fallback formula for denormal steps (step_is_zero), non-finite or
 *    non-normal lower/scale, lower >= upper, an estimate at an edge that is not finite, edges
 *    that decrease;
 *  - bins > 2^23 (f32: the device's floor by a round-down add of 2^23 needs f < 2^23) or > 2^24
 *    (double domain: bounds the cost of certification below); f32 specs of up to 2^24 bins have
 *    a wide certificate of their own (gpuhist_fe_cert_wide_of, the same proof), used only with
 *    gpuhist_fe_key_f32_wide, whose floor is a conversion (test_fast_even checks both forms);
 *  - an evaluation at an edge E_i or pred(E_i), i >= 1, that meets a subnormal (input, x - lower
 *    or the product, with a margin), or an edge whose double value rounds to a float near the
 *    subnormal range, or (NumPy 2's float32 linspace, edge_linspace_f32) a step_f below 2^-120
 *    or an edge i * step_f + lower_f whose exact sum is that small: there a host or device that
 *    flushes subnormals (FTZ/DAZ) would compute a different estimate or edge than the
 *    certificate assumed. Such specs keep binmap.h's exact slot function, whose float edges are
 *    exact IEEE binary32 on every device. The tests are made on the bits,
 *    so a host with DAZ sees them too. For i = 0 a host flush only raises a_0 toward 0, which
 *    is conservative for an IEEE device (CUDA's PTX); estimates that may flush (host, OpenCL)
 *    never see a key below E_0: the host and OpenCL forms of the test check x >= E_0, and the
 *    rules above apply to x >= E_0 only.
 * Thresholds are never subnormal (so flushing compares agree, or reject); t_lo rounds up and
 * t_hi down to float for f32.
 *
 * Checked against binmap.h by a CPU emulation of every form (host, and the CUDA arithmetic with
 * the round-down add - of 2^23 in f32, of 2^52 in double - done by the rounding mode): ~1.5e9 f32 and ~1.5e9 double evaluations over
 * ~20000 random specs up to 70000 bins plus specs of 2^20 to 2^24 bins (every edge +-6 ulps,
 * random, random bit patterns, specials; certificates computed with and without FTZ/DAZ, samples
 * mapped with and without them): no mismatch. The forms also compile and agree as OpenCL C.
 *
 * Cost of certification: one edge and two estimates per bin in one pass on the host, ~5 ns per
 * bin on one core (2^16 bins ~0.4 ms, 2^20 ~5 ms, 2^23 f32 ~45 ms, 2^24 double ~75 ms), once per
 * spec and process (gpuhist_fe_cert_of keeps the last 8 specs). The per-sample cost is the
 * estimate, the floor and the two compares of the test; the symmetric form below (f32) trades
 * one compare for a slightly narrower interval. Both domains have the test (gpuhist_fe_key_f32,
 * gpuhist_fe_key_f64), the one-edge rule (_pivot_, _fix_) and the exact slot (_slot_).
 */
#ifndef GPUHIST_FAST_EVEN_H
#define GPUHIST_FAST_EVEN_H

#include "binmap.h"

/* Largest bin counts certified (see the banner). */
#define GPUHIST_FE_MAX_BINS_F32 (1u << 23)
/* f32 specs of up to 2^24 bins: certified apart (gpuhist_fe_cert_wide_of), for kernels that take
 * the key with gpuhist_fe_key_f32_wide (a conversion floor instead of the round-down add). */
#define GPUHIST_FE_MAX_BINS_F32_WIDE (1u << 24)
#define GPUHIST_FE_MAX_BINS_F64 (1u << 24)

/*
 * The certificate of one EVEN bin spec (host-computed, passed to devices by value). Refused
 * (ok = 0): t_lo = +inf, t_hi = -inf (and the float copies), so the test never passes.
 */
typedef struct gpuhist_fe_cert {
    double t_lo, t_hi;    /* the test's thresholds (double domain; f32: the values before
                             rounding to float) */
    float t_lo_f, t_hi_f; /* f32 domain: t_lo rounded up, t_hi rounded down, never subnormal */
    float h_f;            /* f32, symmetric form: |frac - 1/2| < h_f implies t_lo < frac < t_hi;
                             0 when unusable (bins > 2^22, or no interval around 1/2) */
    gh_i32 ok;            /* 1: the test and both rules hold */
    gh_i32 direct;        /* 1: t_lo < 0 and t_hi >= 1: key < bins alone passes */
    gh_i32 f32;           /* domain: 1 f32 samples (float edges), 0 double */
    gh_i32 pad_;
} gpuhist_fe_cert;

/* ---- exact f32 operations: binmap.h's GH_F32_* (CUDA device: inline PTX, no flush-to-zero
 * whatever the flags), and a round-down add for the device's floor -----------------------------
 * Compares stay plain C: thresholds are never subnormal, so a compare that flushes a subnormal
 * frac to 0 (-ftz) can only reject a sample the certificate would pass. */
#define GH_FE_SUB(a, b) GH_F32_SUB(a, b)
#define GH_FE_MUL(a, b) GH_F32_MUL(a, b)
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
/* a + b rounded toward -inf */
static __device__ __forceinline__ float gh_fe_add_rm(float a, float b)
{
    float r;
    asm("add.rm.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
#endif
#if defined(__OPENCL_VERSION__)
#define GH_FE_ABS(a) fabs(a)
#else
#define GH_FE_ABS(a) fabsf(a)
#endif

/* ---- the estimate ------------------------------------------------------------------------------ */

/* f32 domain: fl32(fl32(x - lower_f) * scale_f). */
GH_FN float gpuhist_fe_estimate_f32(float x, float lower_f, float scale_f)
{
    const float t = GH_FE_SUB(x, lower_f);
    return GH_FE_MUL(t, scale_f);
}

/* Double domain: fl64(fl64(x - lower) * scale). */
GH_FN double gpuhist_fe_estimate_f64(double x, double lower, double scale)
{
    return GH_MUL(GH_ADD(x, -lower), scale);
}

/* ---- the test ---------------------------------------------------------------------------------- */

/* The host and OpenCL form of the f32 keys below: key = floor(f) by a conversion of an estimate
 * f in [0, limit) (0xFFFFFFFF outside it, never converted), and THE TEST. x >= lower_f: a host or
 * OpenCL device that flushes subnormals can estimate 0 just below the first edge, where the
 * certificate assumed IEEE (banner, a_0). */
GH_FN gh_u32 gh_fe_key_by_conversion(float x, float f, float lower_f, gh_u32 bins, float t_lo,
                                     float t_hi, int cut, float limit, int *ok)
{
    const int in = f >= 0.0f && f < limit && x >= lower_f;
    const gh_u32 key = in ? (gh_u32)f : 0xFFFFFFFFu;
    int good = in && key < bins;
    if (cut && good) {
        const float fr = f - (float)key; /* exact */
        good = fr > t_lo && fr < t_hi;
    }
    *ok = good;
    return key;
}

/*
 * The key of an f32 sample and THE TEST (banner): returns key = floor(f(x)) (as an unsigned
 * number >= 2^23 when f is negative, NaN or >= 2^23) and *ok = 1 when the certificate proves that
 * the key is the sample's bin. cut = 0 ("direct" certificates only): key < bins alone; cut = 1:
 * also t_lo < frac < t_hi (pass the certificate's t_lo_f, t_hi_f; a refused certificate never
 * passes). Any x. CUDA: f + 2^23 rounded down has floor(f) in its low mantissa bits, and
 * frac = f - (that - 2^23) is exact: FADD, FMUL, FADD.RM, IADD, ISETP (+ FADD, FADD, 2 FSETP with
 * cut); no conversion unit. Host/OpenCL: the same numbers by conversions.
 */
GH_FN gh_u32 gpuhist_fe_key_f32(float x, float lower_f, float scale_f, gh_u32 bins, float t_lo,
                                float t_hi, int cut, int *ok)
{
    const float f = gpuhist_fe_estimate_f32(x, lower_f, scale_f);
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
    const float r = gh_fe_add_rm(f, 8388608.0f); /* 2^23 + floor(f) when -0 <= f < 2^23 */
    const gh_u32 key = __float_as_uint(r) - 0x4B000000u;
    bool good = key < bins;
    if (cut) {
        const float fr = gh_f32_sub(f, gh_f32_sub(r, 8388608.0f)); /* exact */
        good = good & (fr > t_lo) & (fr < t_hi);
    }
    *ok = good;
    return key;
#else
    return gh_fe_key_by_conversion(x, f, lower_f, bins, t_lo, t_hi, cut, 8388608.0f, ok);
#endif
}

/*
 * THE TEST for a wide certificate (gpuhist_fe_cert_wide_of: f32 specs of up to 2^24 bins): the
 * same key = floor(f) and frac = f - key (exact: key < 2^24) as gpuhist_fe_key_f32, the floor
 * taken by a conversion (CUDA: F2I.FLOOR; f < 0, NaN never pass), since f + 2^23 no longer holds
 * floor(f) once f >= 2^23. Only for wide certificates, and valid for any f32 certificate.
 */
GH_FN gh_u32 gpuhist_fe_key_f32_wide(float x, float lower_f, float scale_f, gh_u32 bins,
                                     float t_lo, float t_hi, int cut, int *ok)
{
    const float f = gpuhist_fe_estimate_f32(x, lower_f, scale_f);
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
    const gh_u32 key = __float2uint_rd(f); /* saturates: 0 for f < 0 and NaN (then f >= 0 fails) */
    bool good = (f >= 0.0f) & (key < bins);
    if (cut) {
        const float fr = gh_f32_sub(f, __uint2float_rn(key)); /* key < 2^24: exact */
        good = good & (fr > t_lo) & (fr < t_hi);
    }
    *ok = good;
    return key;
#else
    return gh_fe_key_by_conversion(x, f, lower_f, bins, t_lo, t_hi, cut, 16777216.0f, ok);
#endif
}

/*
 * THE TEST in symmetric form (bins <= 2^22): d = f - (key + 1/2) and |d| < h_f, where the
 * certificate's h_f makes (1/2 - h_f, 1/2 + h_f) part of (t_lo, t_hi). One compare fewer than
 * the two-sided form: FADD, FMUL, FADD.RM, IADD, FADD, FADD, ISETP, FSETP(|d|). key + 1/2 is
 * exact (key < 2^22); d is exact for key >= 1 (Sterbenz) and, for key = 0 and f < 1/4, rounded
 * monotonely, so |d| < h_f still implies 1/2 - h_f < f < 1/2 + h_f.
 */
GH_FN gh_u32 gpuhist_fe_key_sym_f32(float x, float lower_f, float scale_f, gh_u32 bins, float h,
                                    int *ok)
{
    const float f = gpuhist_fe_estimate_f32(x, lower_f, scale_f);
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
    const float r = gh_fe_add_rm(f, 8388608.0f);
    const gh_u32 key = __float_as_uint(r) - 0x4B000000u;
    const float d = gh_f32_sub(f, gh_f32_sub(r, 8388607.5f)); /* f - (key + 1/2) */
    *ok = (key < bins) & (fabsf(d) < h);
#else
    const int in = f >= 0.0f && f < 8388608.0f && x >= lower_f; /* as above */
    const gh_u32 key = in ? (gh_u32)f : 0xFFFFFFFFu;
    const float d = in ? f - ((float)key + 0.5f) : 1.0f;
    *ok = in && key < bins && GH_FE_ABS(d) < h;
#endif
    return key;
}

/*
 * The key of a sample in the double domain and THE TEST (banner), the twin of
 * gpuhist_fe_key_f32: returns key = floor(f(x)) and *ok = 1 when the certificate proves that the
 * key is the sample's bin; the key is meaningful only when *ok = 1. cut = 0 ("direct"
 * certificates only): key < bins alone; cut = 1: also t_lo < frac < t_hi (pass the
 * certificate's t_lo, t_hi; a refused certificate, +inf and -inf, never passes). Any x.
 * CUDA: r = f + 2^52 rounded down is 2^52 + floor(f) exactly when -0 <= f < 2^52 (the doubles
 * of [2^52, 2^53) are the integers), so its high word is 0x43300000 exactly when
 * 0 <= floor(f) < 2^32, and its low word is then floor(f); a negative f gives r < 2^52, a
 * larger one r >= 2^52 + 2^32, inf/NaN an exponent of all ones: none has that high word.
 * frac = f - (r - 2^52) is exact (r - 2^52 = floor(f) exactly; f - floor(f) by Sterbenz for
 * f >= 1, f itself below 1): DADD, DMUL, DADD.RM, 2 ISETP (+ DADD, DADD, 2 DSETP with cut); no
 * conversion unit. CUDA's double operations never flush subnormals. Host/OpenCL: the same
 * numbers by conversions, and x >= lower as in the f32 form (a host that flushes subnormals).
 */
GH_FN gh_u32 gpuhist_fe_key_f64(double x, double lower, double scale, gh_u32 bins, double t_lo,
                                double t_hi, int cut, int *ok)
{
    const double f = gpuhist_fe_estimate_f64(x, lower, scale);
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
    const double r = __dadd_rd(f, 4503599627370496.0); /* 2^52 + floor(f) when -0 <= f < 2^52 */
    const gh_u32 key = (gh_u32)__double2loint(r);
    bool good = ((gh_u32)__double2hiint(r) == 0x43300000u) & (key < bins);
    if (cut) {
        const double fr = __dsub_rn(f, __dsub_rn(r, 4503599627370496.0)); /* exact */
        good = good & (fr > t_lo) & (fr < t_hi);
    }
#else
    const int in = f >= 0.0 && f < 4294967296.0 && x >= lower;
    const gh_u32 key = in ? (gh_u32)f : 0xFFFFFFFFu;
    int good = in && key < bins;
    if (cut && good) {
        const double fr = f - (double)key; /* exact */
        good = fr > t_lo && fr < t_hi;
    }
#endif
    *ok = good;
    return key;
}

/* ---- the one-edge rule ------------------------------------------------------------------------- */

/* j of THE ONE-EDGE RULE (banner) for an f32 sample in [E_0, E_bins) with estimate f, under a
 * certificate that holds (t_lo = its t_lo_f): the bin is j - 1 + (x >= E_j), 0 <= j <= bins. */
GH_FN gh_u32 gpuhist_fe_pivot_f32(float f, gh_u32 bins, float t_lo)
{
    const gh_u32 key = f < (float)bins ? (gh_u32)f : bins; /* f >= 0 in range */
    const float fr = GH_FE_SUB(f, (float)key);              /* exact below bins */
    const gh_u32 j = key + (fr > t_lo ? 1u : 0u);
    return j < bins ? j : bins;
}

/* j of THE ONE-EDGE RULE in the double domain: the same for a double sample in [E_0, E_bins)
 * with estimate f, under a certificate that holds (t_lo = its t_lo). */
GH_FN gh_u32 gpuhist_fe_pivot_f64(double f, gh_u32 bins, double t_lo)
{
    const gh_u32 key = f < (double)bins ? (gh_u32)f : bins; /* f >= 0 in range */
    const double fr = GH_ADD(f, -(double)key);                /* exact below bins */
    const gh_u32 j = key + (fr > t_lo ? 1u : 0u);
    return j < bins ? j : bins;
}

/* ---- exact slots ------------------------------------------------------------------------------- */

/* binmap.h's float edge E_j of a spec whose certificate holds: such a spec never has
 * step_is_zero (its scale would be infinite), which lets a device drop that formula's code. */
GH_FN float gpuhist_fe_edge_f32(const gpuhist_binmap *m, gh_u32 j)
{
    gpuhist_binmap c = *m;
    c.step_is_zero = 0;
    return gpuhist_even_edge_f32(&c, j);
}

/* Slot of an f32 sample that did not pass the test, under a certificate that holds: the outside
 * rule, then the one-edge rule with binmap.h's edge. t_lo = the certificate's t_lo_f. direct:
 * the test that failed was the direct form (key < bins alone), which an in-range sample fails
 * only when f >= bins: its bin is then bins - 1 (banner), and no edge is needed. */
GH_FN gh_u32 gpuhist_fe_fix_f32(const gpuhist_binmap *m, float t_lo, int direct, float x)
{
    gh_u32 outside;
    if (gpuhist_even_f32_outside(m, x, &outside))
        return outside;
    if (direct)
        return m->bins - 1u;
    const float f = gpuhist_fe_estimate_f32(x, m->lower_f, m->scale_f);
    const gh_u32 j = gpuhist_fe_pivot_f32(f, m->bins, t_lo);
    return j - 1u + (x >= gpuhist_fe_edge_f32(m, j) ? 1u : 0u);
}

/* Slot of an f32 sample: binmap.h's gpuhist_slot_even_f32, by the test and, when it fails, the
 * one-edge rule (certificate holds) or binmap.h itself (refused). */
GH_FN gh_u32 gpuhist_fe_slot_f32(const gpuhist_binmap *m, const gpuhist_fe_cert *c, float x)
{
    int ok;
    const gh_u32 key =
        gpuhist_fe_key_f32(x, m->lower_f, m->scale_f, m->bins, c->t_lo_f, c->t_hi_f, 1, &ok);
    if (ok)
        return key;
    if (!c->ok)
        return gpuhist_slot_even_f32(m, x);
    return gpuhist_fe_fix_f32(m, c->t_lo_f, 0, x);
}

/* binmap.h's double edge E_j of a spec whose certificate holds (no step_is_zero: as above). */
GH_FN double gpuhist_fe_edge_f64(const gpuhist_binmap *m, gh_u32 j)
{
    gpuhist_binmap c = *m;
    c.step_is_zero = 0;
    return gpuhist_even_edge_f64(&c, j);
}

/* Slot of a double sample that did not pass the test, under a certificate that holds (double
 * domain): binmap.h's outside rule (gpuhist_even_f64_outside), then the one-edge rule with
 * binmap.h's edge. t_lo = the certificate's t_lo. direct: as gpuhist_fe_fix_f32 (an in-range
 * sample fails the direct test only when f >= bins: the last bin). */
GH_FN gh_u32 gpuhist_fe_fix_f64(const gpuhist_binmap *m, double t_lo, int direct, double x)
{
    gh_u32 outside;
    if (gpuhist_even_f64_outside(m, x, &outside))
        return outside;
    if (direct)
        return m->bins - 1u;
    const double f = gpuhist_fe_estimate_f64(x, m->lower, m->scale);
    const gh_u32 j = gpuhist_fe_pivot_f64(f, m->bins, t_lo);
    return j - 1u + (x >= gpuhist_fe_edge_f64(m, j) ? 1u : 0u);
}

/* Slot of a double sample of an EVEN spec with double edges: binmap.h's gpuhist_slot_even_f64,
 * by the test and, when it fails, the one-edge rule (certificate holds) or binmap.h itself
 * (refused, or a certificate of the f32 domain). */
GH_FN gh_u32 gpuhist_fe_slot_f64(const gpuhist_binmap *m, const gpuhist_fe_cert *c, double x)
{
    if (!c->ok || c->f32)
        return gpuhist_slot_even_f64(m, x);
    int ok;
    const gh_u32 key = gpuhist_fe_key_f64(x, m->lower, m->scale, m->bins, c->t_lo, c->t_hi, 1, &ok);
    if (ok)
        return key;
    return gpuhist_fe_fix_f64(m, c->t_lo, 0, x);
}

/* ---- host: the certification (fast_even.c) ----------------------------------------------------- */
#if !defined(__OPENCL_VERSION__)
#ifdef __cplusplus
extern "C" {
#endif

/* The certificate of an EVEN spec (domain from m->edge_is_f32), computed now (see the banner:
 * one pass over the edges). Never fails: a spec it cannot certify gets ok = 0. */
void gpuhist_fe_certify(const gpuhist_binmap *m, gpuhist_fe_cert *c);

/* The same, remembered: a process-wide cache of the last few specs (thread-safe). */
void gpuhist_fe_cert_of(const gpuhist_binmap *m, gpuhist_fe_cert *c);

/* An f32 EVEN spec's certificate up to GPUHIST_FE_MAX_BINS_F32_WIDE bins (the same proof and
 * refusals otherwise), for gpuhist_fe_key_f32_wide only (never the round-down-add forms), and
 * the one-edge rule; remembered as gpuhist_fe_cert_of's are. Refused for the double domain. */
void gpuhist_fe_certify_f32_wide(const gpuhist_binmap *m, gpuhist_fe_cert *c);
void gpuhist_fe_cert_wide_of(const gpuhist_binmap *m, gpuhist_fe_cert *c);

/* scan(m) (whether the spec's reported edges strictly increase: plan.c's check of crowded EVEN
 * specs, one pass over every edge), remembered in the same cache: once per spec. */
int gpuhist_fe_edges_increase(const gpuhist_binmap *m, int (*scan)(const gpuhist_binmap *m));

#ifdef __cplusplus
}
#endif
#endif

#endif /* GPUHIST_FAST_EVEN_H */
