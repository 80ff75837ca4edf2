/*
 * minmax.c - the finite min and max of a run of contiguous one-channel samples on the CPU (the
 * auto-range first pass), at memory speed.
 *
 * Mechanism: the samples are taken in blocks of L lanes (L samples of one vector width or more);
 * lane j keeps the min and max of the samples j, j + L, j + 2L, ... with a compare and a select,
 * no branch, so the compiler turns the lane loop into vector compares and blends. Floats that
 * are not finite are replaced before the compare (by +inf for the min, -inf for the max), so
 * they never win. The lanes are folded at the end. The loop is built twice: for the baseline
 * instruction set and for AVX2, chosen at run time (gpuhist_cpu_simd(), GPUHIST_CPU_SIMD=0 turns
 * it off); gpuhist_cpu_minmax_scalar() is the one-sample-at-a-time loop, used when the vector
 * forms are off.
 *
 * The result is the scalar loop's, bit for bit: for integers min and max do not depend on the
 * order. For floats the scalar loop keeps the first of equal values, which differ only for
 * zeros: a min or max of zero is the first zero of the run. Each lane keeps its own first zero;
 * when the lanes holding the zero disagree on its sign, the run is scanned for its first zero.
 * Limits: contiguous samples, any alignment; n up to 2^64 - 1.
 */
#include "cpu_kernels.h"
#include "cpu_simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Integer lanes (min and max kept in the type itself), starting from MAXV and MINV; the result
 * in LO and HI. */
#define MM_INT(T, L, MINV, MAXV, LO, HI)                                                           \
    do {                                                                                           \
        T mn[L], mx[L];                                                                            \
        for (int j = 0; j < (L); ++j)                                                              \
            mn[j] = (MAXV), mx[j] = (MINV);                                                        \
        uint64_t i = 0;                                                                            \
        for (; i + (L) <= n; i += (L)) {                                                           \
            for (int j = 0; j < (L); ++j) {                                                        \
                T v;                                                                               \
                memcpy(&v, p + (i + (uint64_t)j) * sizeof(T), sizeof v);                           \
                mn[j] = v < mn[j] ? v : mn[j];                                                     \
                mx[j] = v > mx[j] ? v : mx[j];                                                     \
            }                                                                                      \
        }                                                                                          \
        for (int j = 0; i < n; ++i, ++j) {                                                         \
            T v;                                                                                   \
            memcpy(&v, p + i * sizeof(T), sizeof v);                                               \
            mn[j] = v < mn[j] ? v : mn[j];                                                         \
            mx[j] = v > mx[j] ? v : mx[j];                                                         \
        }                                                                                          \
        T a = mn[0], b = mx[0];                                                                    \
        for (int j = 1; j < (L); ++j) {                                                            \
            a = mn[j] < a ? mn[j] : a;                                                             \
            b = mx[j] > b ? mx[j] : b;                                                             \
        }                                                                                          \
        LO = a, HI = b;                                                                            \
    } while (0)

/* Float lanes: LOAD(i) gives sample i as FT (f32 or f64; halves widened exactly). */
#define MM_FLOAT(FT, L, LOAD)                                                                      \
    do {                                                                                           \
        const FT inf = (FT)INFINITY;                                                               \
        FT mn[L], mx[L];                                                                           \
        for (int j = 0; j < (L); ++j)                                                              \
            mn[j] = inf, mx[j] = -inf;                                                             \
        uint64_t i = 0;                                                                            \
        for (; i + (L) <= n; i += (L)) {                                                           \
            for (int j = 0; j < (L); ++j) {                                                        \
                const FT v = LOAD(i + (uint64_t)j);                                                \
                const int ok = v - v == (FT)0;                                                     \
                const FT a = ok ? v : inf, b = ok ? v : -inf;                                      \
                mn[j] = a < mn[j] ? a : mn[j];                                                     \
                mx[j] = b > mx[j] ? b : mx[j];                                                     \
            }                                                                                      \
        }                                                                                          \
        for (int j = 0; i < n; ++i, ++j) {                                                         \
            const FT v = LOAD(i);                                                                  \
            const int ok = v - v == (FT)0;                                                         \
            const FT a = ok ? v : inf, b = ok ? v : -inf;                                          \
            mn[j] = a < mn[j] ? a : mn[j];                                                         \
            mx[j] = b > mx[j] ? b : mx[j];                                                         \
        }                                                                                          \
        FT a = mn[0], b = mx[0];                                                                   \
        for (int j = 1; j < (L); ++j) {                                                            \
            a = mn[j] < a ? mn[j] : a;                                                             \
            b = mx[j] > b ? mx[j] : b;                                                             \
        }                                                                                          \
        /* a zero: the lanes' first zeros; mixed signs need the run's first zero */                \
        int zmin = a == (FT)0 ? -1 : 0, zmax = b == (FT)0 ? -1 : 0; /* -1 none, 1 -0, 2 +0 */      \
        int mixed = 0;                                                                             \
        for (int j = 0; j < (L); ++j) {                                                            \
            if (zmin && mn[j] == (FT)0) {                                                          \
                const int s = signbit(mn[j]) ? 1 : 2;                                              \
                mixed |= zmin > 0 && zmin != s;                                                    \
                zmin = s;                                                                          \
            }                                                                                      \
            if (zmax && mx[j] == (FT)0) {                                                          \
                const int s = signbit(mx[j]) ? 1 : 2;                                              \
                mixed |= zmax > 0 && zmax != s;                                                    \
                zmax = s;                                                                          \
            }                                                                                      \
        }                                                                                          \
        if (mixed) {                                                                               \
            FT z = 0;                                                                              \
            for (uint64_t k = 0; k < n; ++k) {                                                     \
                const FT v = LOAD(k);                                                              \
                if (v == (FT)0) {                                                                  \
                    z = v;                                                                         \
                    break;                                                                         \
                }                                                                                  \
            }                                                                                      \
            if (a == (FT)0)                                                                        \
                a = z;                                                                             \
            if (b == (FT)0)                                                                        \
                b = z;                                                                             \
        }                                                                                          \
        lo_f = (double)a, hi_f = (double)b;                                                        \
    } while (0)

static inline float load_f32(const unsigned char *p, uint64_t i)
{
    float v;
    memcpy(&v, p + 4u * i, sizeof v);
    return v;
}

static inline double load_f64(const unsigned char *p, uint64_t i)
{
    double v;
    memcpy(&v, p + 8u * i, sizeof v);
    return v;
}

static inline float load_f16(const unsigned char *p, uint64_t i)
{
    uint16_t b;
    memcpy(&b, p + 2u * i, sizeof b);
    return gpuhist_f16_to_f32(b);
}

static inline float load_bf16(const unsigned char *p, uint64_t i)
{
    uint16_t b;
    memcpy(&b, p + 2u * i, sizeof b);
    return gpuhist_bf16_to_f32(b);
}

#define LD_F32(i) load_f32(p, (i))
#define LD_F64(i) load_f64(p, (i))
#define LD_F16(i) load_f16(p, (i))
#define LD_BF16(i) load_bf16(p, (i))

/* The lane loops for every dtype; instantiated once per instruction set below. */
#define MM_BODY                                                                                    \
    double lo_f = 0, hi_f = 0;                                                                     \
    int64_t lo_i = 0, hi_i = 0;                                                                    \
    uint64_t lo_u = 0, hi_u = 0;                                                                   \
    memset(out, 0, sizeof *out);                                                                   \
    if (n == 0)                                                                                    \
        return;                                                                                    \
    switch (dtype) {                                                                               \
    case GPUHIST_U8: MM_INT(uint8_t, 64, 0, UINT8_MAX, lo_u, hi_u); break;                         \
    case GPUHIST_U16: MM_INT(uint16_t, 32, 0, UINT16_MAX, lo_u, hi_u); break;                      \
    case GPUHIST_U32: MM_INT(uint32_t, 16, 0, UINT32_MAX, lo_u, hi_u); break;                      \
    case GPUHIST_U64: MM_INT(uint64_t, 8, 0, UINT64_MAX, lo_u, hi_u); break;                       \
    case GPUHIST_I8: MM_INT(int8_t, 64, INT8_MIN, INT8_MAX, lo_i, hi_i); break;                    \
    case GPUHIST_I16: MM_INT(int16_t, 32, INT16_MIN, INT16_MAX, lo_i, hi_i); break;                \
    case GPUHIST_I32: MM_INT(int32_t, 16, INT32_MIN, INT32_MAX, lo_i, hi_i); break;                \
    case GPUHIST_I64: MM_INT(int64_t, 8, INT64_MIN, INT64_MAX, lo_i, hi_i); break;                 \
    case GPUHIST_F32: MM_FLOAT(float, 16, LD_F32); break;                                          \
    case GPUHIST_F16: MM_FLOAT(float, 16, LD_F16); break;                                          \
    case GPUHIST_BF16: MM_FLOAT(float, 16, LD_BF16); break;                                        \
    default: MM_FLOAT(double, 8, LD_F64); break;                                                   \
    }                                                                                              \
    switch (dtype) {                                                                               \
    case GPUHIST_F32:                                                                              \
    case GPUHIST_F16:                                                                              \
    case GPUHIST_BF16:                                                                             \
    case GPUHIST_F64:                                                                              \
        if (lo_f <= hi_f)                                                                          \
            out->fmin = lo_f, out->fmax = hi_f, out->found = 1;                                    \
        break;                                                                                     \
    case GPUHIST_U64: out->umin = lo_u, out->umax = hi_u, out->found = 1; break;                   \
    case GPUHIST_U8:                                                                               \
    case GPUHIST_U16:                                                                              \
    case GPUHIST_U32: out->imin = (int64_t)lo_u, out->imax = (int64_t)hi_u, out->found = 1; break; \
    default: out->imin = lo_i, out->imax = hi_i, out->found = 1; break;                            \
    }

static void minmax_lanes_base(gpuhist_dtype dtype, const unsigned char *p, uint64_t n,
                              gpuhist_cpu_extent *out)
{
    MM_BODY
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MM_HAVE_AVX2 1
__attribute__((target("avx2"))) static void minmax_lanes_avx2(gpuhist_dtype dtype,
                                                              const unsigned char *p, uint64_t n,
                                                              gpuhist_cpu_extent *out)
{
    MM_BODY
}
#endif

void gpuhist_cpu_minmax_lanes(gpuhist_dtype dtype, const void *data, uint64_t n,
                              gpuhist_cpu_extent *out)
{
#ifdef MM_HAVE_AVX2
    if (gpuhist_cpu_simd()) {
        minmax_lanes_avx2(dtype, data, n, out);
        return;
    }
#endif
    minmax_lanes_base(dtype, data, n, out);
}

/* The one-sample-at-a-time loop: the first finite value starts the min and max, a later value
 * replaces them only when strictly smaller or larger. */
#define MM_SCALAR(T, LO, HI, KEEP)                                                                 \
    do {                                                                                           \
        T mn = 0, mx = 0;                                                                          \
        int f = 0;                                                                                 \
        for (uint64_t i = 0; i < n; ++i) {                                                         \
            T v;                                                                                   \
            memcpy(&v, p + i * sizeof(T), sizeof v);                                               \
            if (!(KEEP))                                                                           \
                continue;                                                                          \
            if (!f) {                                                                              \
                mn = mx = v;                                                                       \
                f = 1;                                                                             \
            }                                                                                      \
            mn = v < mn ? v : mn;                                                                  \
            mx = v > mx ? v : mx;                                                                  \
        }                                                                                          \
        if (f) {                                                                                   \
            out->LO = mn;                                                                          \
            out->HI = mx;                                                                          \
            out->found = 1;                                                                        \
        }                                                                                          \
    } while (0)

#define MM_SCALAR_HALF(WIDEN)                                                                      \
    do {                                                                                           \
        float mn = INFINITY, mx = -INFINITY;                                                       \
        for (uint64_t i = 0; i < n; ++i) {                                                         \
            uint16_t b;                                                                            \
            memcpy(&b, p + 2u * i, sizeof b);                                                      \
            const float v = WIDEN(b);                                                              \
            if (v - v == 0.0f) {                                                                   \
                mn = v < mn ? v : mn;                                                              \
                mx = v > mx ? v : mx;                                                              \
            }                                                                                      \
        }                                                                                          \
        if (mn <= mx) {                                                                            \
            out->fmin = mn;                                                                        \
            out->fmax = mx;                                                                        \
            out->found = 1;                                                                        \
        }                                                                                          \
    } while (0)

void gpuhist_cpu_minmax_scalar(gpuhist_dtype dtype, const void *data, uint64_t n,
                               gpuhist_cpu_extent *out)
{
    const unsigned char *p = data;
    memset(out, 0, sizeof *out);
    switch (dtype) {
    case GPUHIST_U8: MM_SCALAR(uint8_t, imin, imax, 1); break;
    case GPUHIST_U16: MM_SCALAR(uint16_t, imin, imax, 1); break;
    case GPUHIST_U32: MM_SCALAR(uint32_t, imin, imax, 1); break;
    case GPUHIST_U64: MM_SCALAR(uint64_t, umin, umax, 1); break;
    case GPUHIST_I8: MM_SCALAR(int8_t, imin, imax, 1); break;
    case GPUHIST_I16: MM_SCALAR(int16_t, imin, imax, 1); break;
    case GPUHIST_I32: MM_SCALAR(int32_t, imin, imax, 1); break;
    case GPUHIST_I64: MM_SCALAR(int64_t, imin, imax, 1); break;
    case GPUHIST_F32: MM_SCALAR(float, fmin, fmax, v - v == 0.0f); break; /* finite */
    case GPUHIST_F16: MM_SCALAR_HALF(gpuhist_f16_to_f32); break;
    case GPUHIST_BF16: MM_SCALAR_HALF(gpuhist_bf16_to_f32); break;
    default: MM_SCALAR(double, fmin, fmax, v - v == 0.0); break;
    }
}

void gpuhist_cpu_minmax(gpuhist_dtype dtype, const void *data, uint64_t n,
                        gpuhist_cpu_extent *out)
{
    const char *env = getenv("GPUHIST_CPU_SIMD");
    if (env && strcmp(env, "0") == 0)
        gpuhist_cpu_minmax_scalar(dtype, data, n, out);
    else
        gpuhist_cpu_minmax_lanes(dtype, data, n, out);
}
