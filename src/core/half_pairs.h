/*
 * half_pairs.h - THE arithmetic slot of a half-precision sample (f16 or bf16) on EVEN bins, and
 * its exhaustive certificate: shared by host C (half_pairs.c certifies it) and CUDA C++
 * (cuda-half-pairs, byte_pairs.cu, counts with it). The answer is always binmap.h's slot.
 *
 * Why. A half type has only 65536 values, so an estimate of the bin can be checked on every one
 * of them on the host before a kernel uses it: no per-sample test and no exact fallback path
 * are needed on the device, only the estimate. A spec whose 65536 answers do not all agree is
 * refused, and its samples are counted by another strategy (cuda-fast-packed16 counts the raw
 * bit patterns and the backend folds them).
 *
 * Codes. The kernel counts codes, not slots, so that every code comes out of one monotone
 * formula and one conversion: 0 NaN, 1 underflow, 2 + i bin i (0 <= i < bins), bins + 2
 * overflow; bins + 3 codes in all (gpuhist_hp_slot_of_code maps them back to binmap.h's slots).
 *
 * The estimate of the sample h (a 16-bit pattern):
 *   1. clamp: x = min(max(x, XL), XH) in the half type itself, NaN kept (PTX max.NaN/min.NaN on
 *      both halves of a 32-bit word at once). XL is the largest underflow value, XH the smallest
 *      overflow value (+-inf when there is none), so clamping never changes a slot and every
 *      value reaching step 2 is finite or NaN;
 *   2. y = x widened to float, exactly (f16: cvt; bf16: the 16 bits shifted up);
 *   3. n = the nudge base: f16: 2^e for y's float exponent e (y's bits & 0x7F800000; 0 for 0);
 *      bf16: |y|;
 *   4. t = fma(n, k, c), f = fma(y, s, t), each rounded toward -inf once (fma.rm.f32: no
 *      flush-to-zero, no contraction surprises: these are the two fused operations, written
 *      out). Rounding down makes floor(f) the floor of the exact y * s + t (integers are
 *      floats), so a value just below an edge is never rounded up onto it: near an edge at
 *      0, bf16 values down to 2^-133 sit next to it, far closer than a float ulp of f;
 *   5. code = floor(f) converted to a 32-bit integer with saturation, NaN -> 0 (PTX
 *      cvt.rmi.s32.f32; the host replays the same rule);
 *   6. last edge inclusive (li) and E[bins] a value of the type: the line is made for the
 *      half-open spec, then code = min(code, bins + 2) - (y == E[bins]). One line cannot close
 *      only its last bin (E[bins] and the next value up would get one code; moving the last
 *      crossing moves every other), so that one value is taken back by a compare, and the
 *      clamp bound above it (the next value up, which may lie bins away when they are narrower
 *      than an ulp there) is held to the overflow code by the min (kernels of their own: the
 *      other specs do not pay for it).
 * With s = bins / (upper - lower) and c = 2 - s * lower, f is about 2 + (y - lower) * s: the
 * bin's code. Edges are binmap.h's: float16 values for f16 samples (NumPy computes float16 edges
 * for float16 input), float values for bf16. An f16 edge E rounded from the exact edge t lies
 * within half a float16 ulp of t, so x >= E exactly when the midpoint between x and the next
 * float16 value is at least t (ties aside): k = s * 2^-11 moves y to that midpoint (half an ulp
 * of a normal float16 is 2^(e - 11)), which makes the line through the exact edges decide
 * rounded edges too. bf16 edges are floats, far finer than bf16 values, so the line decides them
 * directly; k = s * 2^-12 nudges a value that is itself an edge up past the line's rounding
 * error, far less than the distance to the value below it. Neither nudge is trusted: the
 * certificate is. Without a nudge (k = 0: t = c, one fma and the LOP3 saved a sample) specs
 * whose edges are values of the type certify (every power-of-two step over [0, 1), say), and
 * that form is tried first.
 *
 * The certificate (half_pairs.c, once per spec and dtype, cached): binmap.h's slot of all 65536
 * patterns (gpuhist_slot_small_value), and the estimate replayed on the host with the very
 * operations above (C fmaf with the rounding mode toward -inf, and no flush-to-zero or
 * denormals-are-zero whatever the calling program set; binmap.h's slots under the default
 * environment, round to nearest); a few nearby values of c
 * and k = 0 are tried when the first does not agree everywhere. Only an estimate whose 65536
 * codes all equal binmap.h's is used ("ok"). Cost: ~65536 exact slots and up to 10 replays of
 * 65536 estimates, a few milliseconds per spec and process.
 *
 * Limits: EVEN bins only, bins + 3 <= GPUHIST_HP_MAX_CODES (the kernel's tables), a finite
 * estimate at the clamp bounds (a spec whose edges round to +-inf in float16, or whose range
 * has no overflow value below +inf while +inf is an overflow, is refused unless its clamp
 * covers it), and specs where the nudged line does not separate every rounded edge from the
 * value below it (bins narrower than an ulp of the type, an edge next to float16 midpoints;
 * bf16 with edges that are bf16 values but inexact floats) are refused: their samples go to
 * cuda-fast-packed16. test_half_pairs prints which specs of its list certify.
 */
#ifndef GPUHIST_HALF_PAIRS_H
#define GPUHIST_HALF_PAIRS_H

#include "binmap.h"

/* Most codes (bins + 3) the kernel's tables take: 256 bins. */
#define GPUHIST_HP_MAX_CODES 259u

/* Code layout (see the banner). */
#define GPUHIST_HP_CODE_NAN 0u
#define GPUHIST_HP_CODE_UNDER 1u
#define GPUHIST_HP_CODE_BIN0 2u

/* The estimate of one EVEN spec for f16 or bf16 samples (host-made, passed to devices by value). */
typedef struct gpuhist_hp_est {
    float s;        /* scale of y */
    float k;        /* nudge coefficient: of 2^e (f16), of |y| (bf16) */
    float c;        /* offset: about 2 - s * lower */
    gh_u32 lo2;     /* XL's 16-bit pattern in both halves */
    gh_u32 hi2;     /* XH's 16-bit pattern in both halves */
    gh_u32 codes;   /* bins + 3 */
    gh_u32 bins;
    gh_i32 bf16;    /* 1: bfloat16 samples, 0: float16 */
    gh_i32 ok;      /* 1: the 65536 codes are binmap.h's */
    gh_i32 li;      /* 1: the last edge is inclusive and a value of the type: step 6 */
    float li_y;     /* that value, E[bins] */
} gpuhist_hp_est;

/* binmap.h's slot of code c (0 <= c < bins + 3). */
GH_FN gh_u32 gpuhist_hp_slot_of_code(gh_u32 c, gh_u32 bins)
{
    if (c >= GPUHIST_HP_CODE_BIN0)
        return c - GPUHIST_HP_CODE_BIN0 < bins ? c - GPUHIST_HP_CODE_BIN0
                                                : GPUHIST_SLOT_OVERFLOW(bins);
    return c == GPUHIST_HP_CODE_NAN ? GPUHIST_SLOT_NAN(bins) : GPUHIST_SLOT_UNDERFLOW(bins);
}

/* The code of binmap.h's slot s. */
GH_FN gh_u32 gpuhist_hp_code_of_slot(gh_u32 s, gh_u32 bins)
{
    if (s < bins)
        return s + GPUHIST_HP_CODE_BIN0;
    if (s == GPUHIST_SLOT_UNDERFLOW(bins))
        return GPUHIST_HP_CODE_UNDER;
    return s == GPUHIST_SLOT_OVERFLOW(bins) ? bins + GPUHIST_HP_CODE_BIN0 : GPUHIST_HP_CODE_NAN;
}

/* ---- steps 3-5: the code of a clamped, widened sample y ------------------------------------- */
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
/* a * b + c rounded toward -inf, once; no flush-to-zero */
static __device__ __forceinline__ float gh_hp_fma(float a, float b, float c)
{
    float r;
    asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a), "f"(b), "f"(c));
    return r;
}
/* floor(f) as a saturated s32, NaN -> 0 (PTX ISA: float-to-integer conversions saturate and
 * convert NaN to 0) */
static __device__ __forceinline__ gh_i32 gh_hp_floor(float f)
{
    gh_i32 r;
    asm("cvt.rmi.s32.f32 %0, %1;" : "=r"(r) : "f"(f));
    return r;
}
#define GH_HP_BITS(f) __float_as_uint(f)
#define GH_HP_FLOAT(u) __uint_as_float(u)
#define GH_HP_ABS(f) fabsf(f)
#else
/* the host replay runs with the rounding mode set toward -inf (half_pairs.c) */
static inline float gh_hp_fma(float a, float b, float c)
{
    return fmaf(a, b, c);
}
static inline gh_i32 gh_hp_floor(float f)
{
    if (f != f)
        return 0;
    if (f >= 2147483648.0f)
        return 2147483647;
    if (f < -2147483648.0f)
        return (gh_i32)(-2147483647 - 1);
    return (gh_i32)floorf(f);
}
static inline gh_u32 gh_hp_bits(float f)
{
    gh_u32 u;
    memcpy(&u, &f, sizeof u);
    return u;
}
#define GH_HP_BITS(f) gh_hp_bits(f)
#define GH_HP_FLOAT(u) gpuhist_float_from_bits(u)
#define GH_HP_ABS(f) fabsf(f)
#endif

/* Steps 3-6 of the banner: the code of the clamped sample y widened to float (any integer: a
 * certified estimate gives 0 <= code < bins + 3 for every clamped value). bf16, li and nudge
 * (k != 0) as e's (constants in a kernel; without the nudge, step 4 is f = fma(y, s, c)). */
GH_FN gh_i32 gpuhist_hp_code(float y, const gpuhist_hp_est *e, int bf16, int li, int nudge)
{
    float t = e->c;
    if (nudge) {
        const float n = bf16 ? GH_HP_ABS(y) : GH_HP_FLOAT(GH_HP_BITS(y) & 0x7F800000u);
        t = gh_hp_fma(n, e->k, e->c);
    }
    const gh_i32 code = gh_hp_floor(gh_hp_fma(y, e->s, t));
    if (!li)
        return code;
    const gh_i32 over = (gh_i32)e->codes - 1;
    return (code < over ? code : over) - (y == e->li_y ? 1 : 0);
}

/* ---- host: the certificate (half_pairs.c) ---------------------------------------------------- */
#if !defined(__OPENCL_VERSION__)
#ifdef __cplusplus
extern "C" {
#endif

/* Steps 1-5 replayed on the host for the 16-bit pattern h (the kernel's answer, code or not);
 * sets and restores the floating-point environment around the replay (a few hundred ns). */
gh_i32 gpuhist_hp_replay(const gpuhist_hp_est *e, gh_u32 h);

/* 1 when e's code of every one of the 65536 patterns is the code of binmap.h's slot under m
 * (m: an EVEN map of f16 or bf16 samples); 0 otherwise, also for a map of another kind. */
int gpuhist_hp_check(const gpuhist_binmap *m, const gpuhist_hp_est *e);

/* The estimate of m (EVEN, f16 or bf16 samples, bins + 3 <= GPUHIST_HP_MAX_CODES), certified
 * now: e->ok = 1 when a candidate passed gpuhist_hp_check. Never fails otherwise: e->ok = 0. */
void gpuhist_hp_certify(const gpuhist_binmap *m, gpuhist_hp_est *e);

/* The same, remembered: a process-wide cache of the last few specs (thread-safe). */
void gpuhist_hp_cert_of(const gpuhist_binmap *m, gpuhist_hp_est *e);

#ifdef __cplusplus
}
#endif
#endif

#endif /* GPUHIST_HALF_PAIRS_H */
