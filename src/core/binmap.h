/*
 * binmap.h - THE bin-mapping definition of gpuhist, shared by host C, CUDA and OpenCL C.
 *
 * Every strategy of every backend maps a sample to a "slot" with these functions, so there is a
 * single definition of the right answer:
 *
 *   slot in [0, bins)   the sample's bin
 *   slot == bins + 0    underflow  (x below the first edge)
 *   slot == bins + 1    overflow   (x at/above the last edge, unless last-edge-inclusive and equal)
 *   slot == bins + 2    NaN        (never binned)
 *
 * Strategies count slots (bins + 3 counters per channel); the backend then applies the outlier
 * policy (CLAMP adds underflow to bin 0 and overflow to bin bins-1) and reports the tallies.
 *
 * Edges (docs/SEMANTICS.md, Bins; NumPy's rules):
 *   EVEN:    d[i] = lower + i * ((upper - lower) / bins) computed in double for 0 <= i < bins,
 *            d[bins] = upper, then rounded to the edge type: float for f32 and bf16 samples,
 *            float16 for f16 samples (held as floats: every float16 is one), double for all
 *            other types. (NumPy's linspace: when the step underflows to 0 it computes
 *            (i / bins) * (upper - lower) + lower instead; so do we.)
 *   EVEN, float32 linspace (edge_linspace_f32: f32 samples of a spec that asks for it, NumPy 2's
 *            edges of float32 data without a range): the same linspace computed in float32 over
 *            L = (float)lower, U = (float)upper, each operation rounded to float on its own:
 *            delta = U - L, step = delta / bins, E[i] = i * step + L for 0 <= i < bins (when
 *            step is 0: (i / bins) * delta + L), E[bins] = U. The float operations are exactly
 *            IEEE binary32, round to nearest, subnormals kept: device code uses PTX add.rn /
 *            mul.rn / div.rn without .ftz (whatever the compiler's flags). A step of 0 never
 *            reaches a device: its edges cannot increase (at most bins / 2 distinct values), so
 *            the plan refuses the spec.
 *   EDGES:   the caller's doubles.
 *   INTEGER: bin = x - lower for integer x in [lower, lower + bins).
 * A sample x is in bin i iff E[i] <= x < E[i+1], compared exactly: 64-bit integers are compared
 * with double edges without rounding the integer; f16 and bf16 samples are widened exactly to
 * float (gpuhist_f16_to_f32, gpuhist_bf16_to_f32) and then mapped as f32 samples.
 *
 * Fast and exact even binning: estimate i from (x - lower) * scale, then fix it by comparing x
 * with the true edges E[i] and E[i+1]. A multiply alone is sometimes one bin off (NumPy corrects
 * for this too; CUB does not).
 *
 * Products and sums of edges must be rounded individually (no fused multiply-add), or edges would
 * differ from NumPy's in the last bit: device code uses __dmul_rn/__dadd_rn, host code is built
 * with -ffp-contract=off, OpenCL code with FP_CONTRACT OFF.
 */
#ifndef GPUHIST_BINMAP_H
#define GPUHIST_BINMAP_H

/* ---- portability: one source for C, CUDA C++ and OpenCL C ------------------------------------ */
#if defined(__OPENCL_VERSION__)
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef ulong gh_u64;
typedef long gh_i64;
typedef uint gh_u32;
typedef int gh_i32;
#define GH_FN static inline
#ifndef GH_EDGES_SPACE
#define GH_EDGES_SPACE __global
#endif
#define GH_MUL(a, b) ((a) * (b))
#define GH_ADD(a, b) ((a) + (b))
#define GH_DIV(a, b) ((a) / (b))
#define GH_FLOOR(x) floor(x)
#else
#include <stdint.h>
#include <string.h>
#include <math.h>
typedef uint64_t gh_u64;
typedef int64_t gh_i64;
typedef uint32_t gh_u32;
typedef int32_t gh_i32;
#define GH_EDGES_SPACE
#if defined(__CUDACC__)
#define GH_FN static __host__ __device__ __forceinline__
#if defined(__CUDA_ARCH__)
#define GH_MUL(a, b) __dmul_rn((a), (b))
#define GH_ADD(a, b) __dadd_rn((a), (b))
#define GH_DIV(a, b) __ddiv_rn((a), (b))
#else
#define GH_MUL(a, b) ((a) * (b))
#define GH_ADD(a, b) ((a) + (b))
#define GH_DIV(a, b) ((a) / (b))
#endif
#else
#define GH_FN static inline
#define GH_MUL(a, b) ((a) * (b))
#define GH_ADD(a, b) ((a) + (b))
#define GH_DIV(a, b) ((a) / (b))
#endif
#define GH_FLOOR(x) floor(x)
#endif

/* float operations, each rounded to nearest on its own (edge_linspace_f32): plain C on the host
 * (built with -ffp-contract=off) and in OpenCL C (FP_CONTRACT OFF; only the step-of-0 formula
 * divides, which never runs on a device, see above); PTX without .ftz in CUDA device code, so
 * neither -ftz nor --use_fast_math can flush a subnormal or fuse a multiply-add. */
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
static __device__ __forceinline__ float gh_f32_add(float a, float b)
{
    float r;
    asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
static __device__ __forceinline__ float gh_f32_sub(float a, float b)
{
    float r;
    asm("sub.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
static __device__ __forceinline__ float gh_f32_mul(float a, float b)
{
    float r;
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
static __device__ __forceinline__ float gh_f32_div(float a, float b)
{
    float r;
    asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
#define GH_F32_ADD(a, b) gh_f32_add((a), (b))
#define GH_F32_SUB(a, b) gh_f32_sub((a), (b))
#define GH_F32_MUL(a, b) gh_f32_mul((a), (b))
#define GH_F32_DIV(a, b) gh_f32_div((a), (b))
#else
#define GH_F32_ADD(a, b) ((float)((a) + (b)))
#define GH_F32_SUB(a, b) ((float)((a) - (b)))
#define GH_F32_MUL(a, b) ((float)((a) * (b)))
#define GH_F32_DIV(a, b) ((float)((a) / (b)))
#endif

/* ---- constants --------------------------------------------------------------------------------- */
#define GPUHIST_EXTRA_SLOTS 3
#define GPUHIST_SLOT_UNDERFLOW(bins) ((bins) + 0u)
#define GPUHIST_SLOT_OVERFLOW(bins) ((bins) + 1u)
#define GPUHIST_SLOT_NAN(bins) ((bins) + 2u)

/* Values of gpuhist_binmap.kind / .dtype are those of gpuhist_bin_kind / gpuhist_dtype. */
#define GH_KIND_EVEN 0
#define GH_KIND_EDGES 1
#define GH_KIND_INTEGER 2
#define GH_DT_U8 0
#define GH_DT_I8 1
#define GH_DT_U16 2
#define GH_DT_I16 3
#define GH_DT_U32 4
#define GH_DT_I32 5
#define GH_DT_U64 6
#define GH_DT_I64 7
#define GH_DT_F32 8
#define GH_DT_F64 9
#define GH_DT_F16 10
#define GH_DT_BF16 11

/*
 * Everything a kernel needs to map a sample, apart from the explicit edge array (passed
 * separately so that the struct holds no pointer and can go to any device by value). Fields are
 * ordered widest first so host C and OpenCL C lay it out identically (104 bytes, no padding).
 */
typedef struct gpuhist_binmap {
    double lower;      /* EVEN: E[0] (as double); EDGES: e[0] */
    double upper;      /* EVEN: E[bins] (as double); EDGES: e[bins] */
    double step;       /* EVEN: (upper - lower) / bins, the NumPy step */
    double delta;      /* EVEN: upper - lower */
    double scale;      /* EVEN: bins / (upper - lower), for the estimate only */
    gh_i64 int_lower;  /* INTEGER: value of bin 0 */
    float lower_f;     /* EVEN, f32 samples: E[0] as float */
    float upper_f;     /* EVEN, f32 samples: E[bins] as float */
    float scale_f;     /* EVEN, f32 samples: (float)scale (estimate only) */
    float step_f;      /* EVEN, edge_linspace_f32: float(delta_f / bins) */
    float delta_f;     /* EVEN, edge_linspace_f32: float(upper_f - lower_f) */
    gh_i32 kind;       /* GH_KIND_* */
    gh_i32 dtype;      /* GH_DT_* */
    gh_u32 bins;       /* >= 1 */
    gh_i32 last_inclusive; /* EVEN/EDGES: x == last edge goes to bin bins-1 */
    gh_i32 step_is_zero;   /* EVEN: NumPy's linspace fallback (denormal ranges; with
                              edge_linspace_f32: step_f == 0) */
    gh_i32 edge_is_f32;    /* EVEN: edges are float values (f32, f16 and bf16 samples) */
    gh_i32 edge_is_f16;    /* EVEN: ...rounded to float16, not to float32 (f16 samples) */
    gh_i32 edge_linspace_f32; /* EVEN, f32 samples: edges are NumPy 2's float32 linspace over
                                 (lower_f, upper_f) (lower, upper hold the same values) */
    gh_i32 pad_;           /* 0: keeps the size a multiple of 8 without padding bytes */
} gpuhist_binmap;

/* ---- half-precision samples --------------------------------------------------------------------- */

/* The float whose bit pattern is u. */
GH_FN float gpuhist_float_from_bits(gh_u32 u)
{
#if defined(__OPENCL_VERSION__)
    return as_float(u);
#elif defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* The float16 of bit pattern h (low 16 bits), widened exactly to float: every float16 value,
 * subnormals included, is a normal float; infinities stay infinite, NaN stays NaN. */
GH_FN float gpuhist_f16_to_f32(gh_u32 h)
{
    const gh_u32 sign = (h & 0x8000u) << 16;
    const gh_u32 e = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (e == 0x1fu)
        return gpuhist_float_from_bits(sign | 0x7f800000u | (mant << 13));
    if (e == 0u) {
        /* subnormal: mant * 2^-24, exact in float (an integer below 2^10 times a power of 2) */
        const float v = (float)mant * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return gpuhist_float_from_bits(sign | ((e + 112u) << 23) | (mant << 13));
}

/* The bfloat16 of bit pattern h (low 16 bits) as a float: its upper half, exactly. */
GH_FN float gpuhist_bf16_to_f32(gh_u32 h)
{
    return gpuhist_float_from_bits((h & 0xffffu) << 16);
}

/* d rounded to the nearest float16 (ties to even, as NumPy's astype(float16) rounds a double),
 * returned as the float holding that value; +-inf beyond the float16 range (|d| >= 65520). Edges
 * only: d is finite. */
GH_FN float gpuhist_round_f16(double d)
{
    const double a = d < 0.0 ? -d : d;
    float f;
    if (!(a < 65520.0)) {
        f = gpuhist_float_from_bits(0x7f800000u);
    } else if (a < 6.103515625e-05) {
        /* below 2^-14 float16 is subnormal: a multiple of 2^-24; the scalings are exact */
        f = (float)(rint(a * 16777216.0) / 16777216.0);
    } else {
        /* a in [2^k, 2^(k+1)), k in [-14, 15]: 11 significant bits, a multiple of 2^(k-10) */
        const int k = ilogb(a);
        f = (float)ldexp(rint(ldexp(a, 10 - k)), k - 10);
    }
    return d < 0.0 ? -f : f;
}

/* ---- EVEN edges -------------------------------------------------------------------------------- */

/* E[i] of an EVEN spec in double (before rounding to the edge type). */
GH_FN double gpuhist_even_edge_f64(const gpuhist_binmap *m, gh_u32 i)
{
    if (i >= m->bins)
        return m->upper;
    if (m->step_is_zero)
        return GH_ADD(GH_MUL(GH_DIV((double)i, (double)m->bins), m->delta), m->lower);
    return GH_ADD(GH_MUL((double)i, m->step), m->lower);
}

/* E[i] of an EVEN spec with edge_linspace_f32: NumPy 2's float32 linspace (above), every
 * operation in float. */
GH_FN float gpuhist_linspace_edge_f32(const gpuhist_binmap *m, gh_u32 i)
{
    if (i >= m->bins)
        return m->upper_f;
    const float y = (float)i; /* NumPy's float32 arange: i rounded to float */
    if (m->step_is_zero)
        return GH_F32_ADD(GH_F32_MUL(GH_F32_DIV(y, (float)m->bins), m->delta_f), m->lower_f);
    return GH_F32_ADD(GH_F32_MUL(y, m->step_f), m->lower_f);
}

/* E[i] of an EVEN spec rounded to float (the edges of f32 and bf16 samples), or to float16 (f16
 * samples: edge_is_f16), or NumPy 2's float32 linspace (edge_linspace_f32). */
GH_FN float gpuhist_even_edge_f32(const gpuhist_binmap *m, gh_u32 i)
{
    if (m->edge_linspace_f32)
        return gpuhist_linspace_edge_f32(m, i);
    const double e = gpuhist_even_edge_f64(m, i);
    return m->edge_is_f16 ? gpuhist_round_f16(e) : (float)e;
}

/* ---- exact comparison of 64-bit integers with doubles ------------------------------------------ */

/* @return -1, 0, 1 as x <, ==, > e, exactly (e finite). */
GH_FN int gpuhist_cmp_i64_f64(gh_i64 x, double e)
{
    if (e >= 9223372036854775808.0)
        return -1;
    if (e < -9223372036854775808.0)
        return 1;
    double fl = GH_FLOOR(e);
    gh_i64 ie = (gh_i64)fl; /* exact: fl is an integer in [-2^63, 2^63) */
    if (x < ie)
        return -1;
    if (x > ie)
        return 1;
    return fl < e ? -1 : 0;
}

GH_FN int gpuhist_cmp_u64_f64(gh_u64 x, double e)
{
    if (e >= 18446744073709551616.0)
        return -1;
    if (e < 0.0)
        return 1;
    double fl = GH_FLOOR(e);
    gh_u64 ie = (gh_u64)fl;
    if (x < ie)
        return -1;
    if (x > ie)
        return 1;
    return fl < e ? -1 : 0;
}

/* ---- slot of one sample -------------------------------------------------------------------------- */

/* Clamp an estimate (any float, possibly NaN/inf) to [0, bins-1]. */
GH_FN gh_u32 gpuhist_clamp_estimate(double f, gh_u32 bins)
{
    if (!(f >= 0.0))
        return 0;
    if (f >= (double)(bins - 1u))
        return bins - 1u;
    return (gh_u32)f;
}

/* EDGES, x exactly representable as a double (f32, f64, integers of up to 32 bits). */
GH_FN gh_u32 gpuhist_slot_edges_f64(const gpuhist_binmap *m, GH_EDGES_SPACE const double *e,
                                    double x)
{
    gh_u32 bins = m->bins;
    if (x != x)
        return GPUHIST_SLOT_NAN(bins);
    if (x < e[0])
        return GPUHIST_SLOT_UNDERFLOW(bins);
    if (x >= e[bins])
        return (m->last_inclusive && x == e[bins]) ? bins - 1u : GPUHIST_SLOT_OVERFLOW(bins);
    gh_u32 lo = 0, hi = bins; /* invariant: e[lo] <= x < e[hi] */
    while (hi - lo > 1u) {
        gh_u32 mid = lo + (hi - lo) / 2u;
        if (x < e[mid])
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* 1 when a double sample is NaN or outside the EVEN double range [lower, upper), with its slot
 * in *slot (upper itself is the last bin when the last edge is inclusive); 0 when x lies inside.
 * The one statement of this rule for every double EVEN mapping, fast paths included. */
GH_FN int gpuhist_even_f64_outside(const gpuhist_binmap *m, double x, gh_u32 *slot)
{
    gh_u32 bins = m->bins;
    if (x != x)
        *slot = GPUHIST_SLOT_NAN(bins);
    else if (x < m->lower)
        *slot = GPUHIST_SLOT_UNDERFLOW(bins);
    else if (x >= m->upper)
        *slot = (m->last_inclusive && x == m->upper) ? bins - 1u : GPUHIST_SLOT_OVERFLOW(bins);
    else
        return 0;
    return 1;
}

/* EVEN with double edges, x exactly representable as a double. */
GH_FN gh_u32 gpuhist_slot_even_f64(const gpuhist_binmap *m, double x)
{
    gh_u32 bins = m->bins;
    gh_u32 outside;
    if (gpuhist_even_f64_outside(m, x, &outside))
        return outside;
    gh_u32 i = gpuhist_clamp_estimate((x - m->lower) * m->scale, bins);
    while (i > 0u && x < gpuhist_even_edge_f64(m, i))
        --i;
    while (i + 1u < bins && x >= gpuhist_even_edge_f64(m, i + 1u))
        ++i;
    return i;
}

/* 1 when an f32 sample is NaN or outside the EVEN float range [lower_f, upper_f), with its slot
 * in *slot (upper_f itself is the last bin when the last edge is inclusive); 0 when x lies
 * inside. The one statement of this rule for every f32 EVEN mapping, fast paths included. */
GH_FN int gpuhist_even_f32_outside(const gpuhist_binmap *m, float x, gh_u32 *slot)
{
    gh_u32 bins = m->bins;
    if (x != x)
        *slot = GPUHIST_SLOT_NAN(bins);
    else if (x < m->lower_f)
        *slot = GPUHIST_SLOT_UNDERFLOW(bins);
    else if (x >= m->upper_f)
        *slot = (m->last_inclusive && x == m->upper_f) ? bins - 1u : GPUHIST_SLOT_OVERFLOW(bins);
    else
        return 0;
    return 1;
}

/* EVEN with float edges (f32 samples). */
GH_FN gh_u32 gpuhist_slot_even_f32(const gpuhist_binmap *m, float x)
{
    gh_u32 bins = m->bins;
    gh_u32 outside;
    if (gpuhist_even_f32_outside(m, x, &outside))
        return outside;
    float f = (x - m->lower_f) * m->scale_f;
    gh_u32 i;
    if (f < (float)bins) /* false for inf/NaN: a tiny or huge range; estimate in double */
        i = gpuhist_clamp_estimate((double)f, bins);
    else
        i = gpuhist_clamp_estimate(((double)x - m->lower) * m->scale, bins);
    while (i > 0u && x < gpuhist_even_edge_f32(m, i))
        --i;
    while (i + 1u < bins && x >= gpuhist_even_edge_f32(m, i + 1u))
        ++i;
    return i;
}

/* Slot of a double sample (f64 samples; also f32/<=32-bit integers under EDGES). */
GH_FN gh_u32 gpuhist_slot_f64(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                              double x)
{
    if (m->kind == GH_KIND_EDGES)
        return gpuhist_slot_edges_f64(m, edges, x);
    return gpuhist_slot_even_f64(m, x); /* INTEGER is rejected for float samples */
}

/* Slot of an f32 sample. */
GH_FN gh_u32 gpuhist_slot_f32(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                              float x)
{
    if (m->kind == GH_KIND_EDGES)
        return gpuhist_slot_edges_f64(m, edges, (double)x);
    return gpuhist_slot_even_f32(m, x);
}

/* |x| <= 2^53: the integer converts to double exactly. */
#define GH_EXACT_IN_DOUBLE 9007199254740992LL

/* INTEGER slot of a signed integer sample (bins [int_lower, int_lower + bins)); kernels that
 * only take INTEGER bins call it directly. */
GH_FN gh_u32 gpuhist_slot_integer_i64(gh_i64 int_lower, gh_u32 bins, gh_i64 x)
{
    if (x < int_lower)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    gh_u64 d = (gh_u64)x - (gh_u64)int_lower; /* exact: x >= lower */
    return d < (gh_u64)bins ? (gh_u32)d : GPUHIST_SLOT_OVERFLOW(bins);
}

/* INTEGER bins: the slot of a u64 sample (any value, past INT64_MAX included). */
GH_FN gh_u32 gpuhist_slot_integer_u64(gh_i64 int_lower, gh_u32 bins, gh_u64 x)
{
    if (x <= (gh_u64)0x7FFFFFFFFFFFFFFFull)
        return gpuhist_slot_integer_i64(int_lower, bins, (gh_i64)x);
    /* x > 2^63 - 1 >= lower; bins <= 2^32, so x - lower < bins needs lower > 2^63 - 2^32 */
    if (int_lower < 0)
        return GPUHIST_SLOT_OVERFLOW(bins);
    gh_u64 d = x - (gh_u64)int_lower;
    return d < (gh_u64)bins ? (gh_u32)d : GPUHIST_SLOT_OVERFLOW(bins);
}

/* Slot of a signed integer sample (all signed types, and unsigned types of up to 32 bits). */
GH_FN gh_u32 gpuhist_slot_i64(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                              gh_i64 x)
{
    gh_u32 bins = m->bins;
    if (m->kind == GH_KIND_INTEGER)
        return gpuhist_slot_integer_i64(m->int_lower, bins, x);
    if (x >= -GH_EXACT_IN_DOUBLE && x <= GH_EXACT_IN_DOUBLE)
        return gpuhist_slot_f64(m, edges, (double)x);
    /* Beyond 2^53 a double cannot hold x: compare exactly. */
    double first = m->kind == GH_KIND_EDGES ? edges[0] : m->lower;
    double last = m->kind == GH_KIND_EDGES ? edges[bins] : m->upper;
    if (gpuhist_cmp_i64_f64(x, first) < 0)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    int c = gpuhist_cmp_i64_f64(x, last);
    if (c > 0 || (c == 0 && !m->last_inclusive))
        return GPUHIST_SLOT_OVERFLOW(bins);
    if (c == 0)
        return bins - 1u;
    if (m->kind == GH_KIND_EDGES) {
        gh_u32 lo = 0, hi = bins;
        while (hi - lo > 1u) {
            gh_u32 mid = lo + (hi - lo) / 2u;
            if (gpuhist_cmp_i64_f64(x, edges[mid]) < 0)
                hi = mid;
            else
                lo = mid;
        }
        return lo;
    }
    gh_u32 i = gpuhist_clamp_estimate(((double)x - m->lower) * m->scale, bins);
    while (i > 0u && gpuhist_cmp_i64_f64(x, gpuhist_even_edge_f64(m, i)) < 0)
        --i;
    while (i + 1u < bins && gpuhist_cmp_i64_f64(x, gpuhist_even_edge_f64(m, i + 1u)) >= 0)
        ++i;
    return i;
}

/* Slot of a u64 sample. */
GH_FN gh_u32 gpuhist_slot_u64(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                              gh_u64 x)
{
    gh_u32 bins = m->bins;
    if (x <= (gh_u64)GH_EXACT_IN_DOUBLE)
        return gpuhist_slot_i64(m, edges, (gh_i64)x);
    if (m->kind == GH_KIND_INTEGER)
        return gpuhist_slot_integer_u64(m->int_lower, bins, x);
    double first = m->kind == GH_KIND_EDGES ? edges[0] : m->lower;
    double last = m->kind == GH_KIND_EDGES ? edges[bins] : m->upper;
    if (gpuhist_cmp_u64_f64(x, first) < 0)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    int c = gpuhist_cmp_u64_f64(x, last);
    if (c > 0 || (c == 0 && !m->last_inclusive))
        return GPUHIST_SLOT_OVERFLOW(bins);
    if (c == 0)
        return bins - 1u;
    if (m->kind == GH_KIND_EDGES) {
        gh_u32 lo = 0, hi = bins;
        while (hi - lo > 1u) {
            gh_u32 mid = lo + (hi - lo) / 2u;
            if (gpuhist_cmp_u64_f64(x, edges[mid]) < 0)
                hi = mid;
            else
                lo = mid;
        }
        return lo;
    }
    gh_u32 i = gpuhist_clamp_estimate(((double)x - m->lower) * m->scale, bins);
    while (i > 0u && gpuhist_cmp_u64_f64(x, gpuhist_even_edge_f64(m, i)) < 0)
        --i;
    while (i + 1u < bins && gpuhist_cmp_u64_f64(x, gpuhist_even_edge_f64(m, i + 1u)) >= 0)
        ++i;
    return i;
}

/* Slot of the 8- or 16-bit value whose bit pattern is v (u8/i8/u16/i16/f16/bf16): the fold of a
 * value histogram into bins, used by the strategies that count raw values. */
GH_FN gh_u32 gpuhist_slot_small_value(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                                      gh_u32 v)
{
    gh_i64 x;
    switch (m->dtype) {
    case GH_DT_F16:
        return gpuhist_slot_f32(m, edges, gpuhist_f16_to_f32(v & 0xffffu));
    case GH_DT_BF16:
        return gpuhist_slot_f32(m, edges, gpuhist_bf16_to_f32(v));
    case GH_DT_I8:
        x = (gh_i64)(v & 0xffu) - ((v & 0x80u) ? 256 : 0);
        break;
    case GH_DT_I16:
        x = (gh_i64)(v & 0xffffu) - ((v & 0x8000u) ? 65536 : 0);
        break;
    default:
        x = (gh_i64)v;
        break;
    }
    return gpuhist_slot_i64(m, edges, x);
}

/* The reported edge i (0 <= i <= bins) as a double: what the comparisons actually used. */
GH_FN double gpuhist_reported_edge(const gpuhist_binmap *m, GH_EDGES_SPACE const double *edges,
                                   gh_u32 i)
{
    if (m->kind == GH_KIND_EDGES)
        return edges[i];
    if (m->kind == GH_KIND_INTEGER)
        return (double)m->int_lower + (double)i;
    if (m->edge_is_f32)
        return (double)gpuhist_even_edge_f32(m, i);
    return gpuhist_even_edge_f64(m, i);
}

#endif /* GPUHIST_BINMAP_H */
