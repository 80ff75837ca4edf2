/*
 * minmax.c - the finite min and max of samples on the CPU (the auto-range first pass), at memory
 * speed: one channel, interleaved channels (pixels of 1-8 samples, any subset of them) and the
 * axes of interleaved N-D points, in rows of any stride, on all cores.
 *
 * Mechanism: a run of m samples, sample i belonging to channel i % C (C = 1 for one channel), is
 * taken in blocks of L lanes, L a multiple of C and of the vector width (L = K * 32 bytes of
 * samples, K = 2 for C in {1, 2, 4, 8}, 3 for {3, 6}, 5 and 7 for those), so lane j always holds
 * channel j % C: the same loop deinterleaves for free. Lane j keeps the min and max of the samples
 * j, j + L, j + 2L, ... with a compare and a select, no branch, so the compiler turns the lane
 * loop into vector compares and blends. Floats that are not finite are replaced before the
 * compare (by +inf for the min, -inf for the max), so they never win. Halves (f16, bf16) are
 * compared as 16-bit integer order keys (sign and magnitude to two's complement: 16 lanes a
 * vector, no widening in the loop) and only the results widened to float, exactly. Each
 * requested result (a mask of channels: one channel, an N-D axis, or all the histogrammed
 * channels together) folds the lanes of its channels. The loops are built for the
 * baseline instruction set and for AVX2, chosen at run time (gpuhist_cpu_simd(),
 * GPUHIST_CPU_SIMD=0 turns it off); the scalar loop (one sample at a time) is used when the
 * vector forms are off. Rows (a region of interest) and threads: the pixels are cut into one
 * contiguous share per thread (4 MiB at least each), each share walks its rows; results are
 * merged in pixel order.
 *
 * The result is the scalar loop's, bit for bit: for integers min and max do not depend on the
 * order (64-bit integers are compared in their own type). For floats the scalar loop keeps the
 * first of equal values, which differ only for zeros: a min or max of zero is the first zero of
 * the result's channels. Each lane keeps its own first zero; when the result's lanes holding the
 * zero disagree on its sign, the run is scanned for its first zero (halves, whose keys do not
 * tell -0 from +0: whenever the min or max is zero; a vector scan, at worst a second pass).
 * Merging runs in order with strict compares keeps the first zero too.
 * Limits: any alignment; m up to 2^64 - 1; C from 1 to 8 for the lane loops (the scalar loop
 * takes up to 32).
 */
#include "cpu_kernels.h"
#include "cpu_simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The lane loops. In scope: p (the run), m (its samples), C (channels), nout, masks, outs (zeroed
 * by the caller) and present (the channels with a sample in the run).
 */

/* Integer lanes (min and max kept in the type itself), starting from MAXV and MINV; SET(o, a, b)
 * writes result o from its min a and max b. */
#define MM_INT(T, L, MINV, MAXV, SET)                                                              \
    do {                                                                                           \
        T mn[L], mx[L];                                                                            \
        for (int j = 0; j < (L); ++j)                                                              \
            mn[j] = (MAXV), mx[j] = (MINV);                                                        \
        uint64_t i = 0;                                                                            \
        for (; i + (L) <= m; i += (L)) {                                                           \
            for (int j = 0; j < (L); ++j) {                                                        \
                T v;                                                                               \
                memcpy(&v, p + (i + (uint64_t)j) * sizeof(T), sizeof v);                           \
                mn[j] = v < mn[j] ? v : mn[j];                                                     \
                mx[j] = v > mx[j] ? v : mx[j];                                                     \
            }                                                                                      \
        }                                                                                          \
        for (int j = 0; i < m; ++i, ++j) {                                                         \
            T v;                                                                                   \
            memcpy(&v, p + i * sizeof(T), sizeof v);                                               \
            mn[j] = v < mn[j] ? v : mn[j];                                                         \
            mx[j] = v > mx[j] ? v : mx[j];                                                         \
        }                                                                                          \
        for (uint32_t o = 0; o < nout; ++o) {                                                      \
            const uint32_t mask = masks[o];                                                        \
            if (!(mask & present))                                                                 \
                continue;                                                                          \
            T a = (MAXV), b = (MINV);                                                              \
            for (int j = 0; j < (L); ++j)                                                          \
                if (mask >> ((uint32_t)j % C) & 1u) {                                              \
                    a = mn[j] < a ? mn[j] : a;                                                     \
                    b = mx[j] > b ? mx[j] : b;                                                     \
                }                                                                                  \
            SET(o, a, b);                                                                          \
        }                                                                                          \
    } while (0)

#define SET_I(o, a, b) (outs[o].imin = (int64_t)(a), outs[o].imax = (int64_t)(b), outs[o].found = 1)
#define SET_U(o, a, b) (outs[o].umin = (a), outs[o].umax = (b), outs[o].found = 1)

/* Float lanes: LOAD(i) gives sample i as FT (f32 or f64; halves widened exactly). */
#define MM_FLOAT(FT, L, LOAD)                                                                      \
    do {                                                                                           \
        const FT inf = (FT)INFINITY;                                                               \
        FT mn[L], mx[L];                                                                           \
        for (int j = 0; j < (L); ++j)                                                              \
            mn[j] = inf, mx[j] = -inf;                                                             \
        uint64_t i = 0;                                                                            \
        for (; i + (L) <= m; i += (L)) {                                                           \
            for (int j = 0; j < (L); ++j) {                                                        \
                const FT v = LOAD(i + (uint64_t)j);                                                \
                const int ok = v - v == (FT)0;                                                     \
                const FT a = ok ? v : inf, b = ok ? v : -inf;                                      \
                mn[j] = a < mn[j] ? a : mn[j];                                                     \
                mx[j] = b > mx[j] ? b : mx[j];                                                     \
            }                                                                                      \
        }                                                                                          \
        for (int j = 0; i < m; ++i, ++j) {                                                         \
            const FT v = LOAD(i);                                                                  \
            const int ok = v - v == (FT)0;                                                         \
            const FT a = ok ? v : inf, b = ok ? v : -inf;                                          \
            mn[j] = a < mn[j] ? a : mn[j];                                                         \
            mx[j] = b > mx[j] ? b : mx[j];                                                         \
        }                                                                                          \
        for (uint32_t o = 0; o < nout; ++o) {                                                      \
            const uint32_t mask = masks[o];                                                        \
            FT a = inf, b = -inf;                                                                  \
            for (int j = 0; j < (L); ++j)                                                          \
                if (mask >> ((uint32_t)j % C) & 1u) {                                              \
                    a = mn[j] < a ? mn[j] : a;                                                     \
                    b = mx[j] > b ? mx[j] : b;                                                     \
                }                                                                                  \
            if (!(a <= b))                                                                         \
                continue; /* nothing finite */                                                     \
            /* a zero: the lanes' first zeros; mixed signs need the run's first zero */            \
            int zmin = a == (FT)0 ? -1 : 0, zmax = b == (FT)0 ? -1 : 0; /* -1 none, 1 -0, 2 +0 */  \
            int mixed = 0;                                                                         \
            for (int j = 0; j < (L); ++j) {                                                        \
                if (!(mask >> ((uint32_t)j % C) & 1u))                                             \
                    continue;                                                                      \
                if (zmin && mn[j] == (FT)0) {                                                      \
                    const int s = signbit(mn[j]) ? 1 : 2;                                          \
                    mixed |= zmin > 0 && zmin != s;                                                \
                    zmin = s;                                                                      \
                }                                                                                  \
                if (zmax && mx[j] == (FT)0) {                                                      \
                    const int s = signbit(mx[j]) ? 1 : 2;                                          \
                    mixed |= zmax > 0 && zmax != s;                                                \
                    zmax = s;                                                                      \
                }                                                                                  \
            }                                                                                      \
            if (mixed) {                                                                           \
                FT z = 0;                                                                          \
                uint32_t c = 0;                                                                    \
                for (uint64_t k = 0; k < m; ++k, c = c + 1 == C ? 0 : c + 1) {                     \
                    if (!(mask >> c & 1u))                                                         \
                        continue;                                                                  \
                    const FT v = LOAD(k);                                                          \
                    if (v == (FT)0) {                                                              \
                        z = v;                                                                     \
                        break;                                                                     \
                    }                                                                              \
                }                                                                                  \
                if (a == (FT)0)                                                                    \
                    a = z;                                                                         \
                if (b == (FT)0)                                                                    \
                    b = z;                                                                         \
            }                                                                                      \
            outs[o].fmin = (double)a, outs[o].fmax = (double)b, outs[o].found = 1;                 \
        }                                                                                          \
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

#define LD_F32(i) load_f32(p, (i))
#define LD_F64(i) load_f64(p, (i))

/* Lane j of MM_HALF takes sample k: its order key into mn[j] and mx[j]. */
#define MM_HALF_LANE(j, k, TOP)                                                                    \
    do {                                                                                           \
        uint16_t b;                                                                                \
        memcpy(&b, p + 2u * (k), sizeof b);                                                        \
        const int16_t mag = (int16_t)(b & 0x7fff), s = (int16_t)(0 - (b >> 15));                  \
        const int16_t key = (int16_t)((mag ^ s) - s), ok = mag < (TOP);                            \
        const int16_t a = ok ? key : (TOP), c = ok ? key : -(TOP);                                 \
        mn[j] = a < mn[j] ? a : mn[j];                                                             \
        mx[j] = c > mx[j] ? c : mx[j];                                                             \
    } while (0)

/* Halves (f16, bf16: sign and magnitude in 16 bits, TOP the magnitude of inf) in int16 lanes of
 * order keys: the magnitude, negated for a negative sign, so that the keys of finite values
 * order as the values do, with -0 and +0 both 0; a non-finite sample (magnitude >= TOP) becomes
 * TOP for the min and -TOP for the max. A result's keys are turned back into bits and widened by
 * WIDEN. A zero min or max is the first zero of the result's channels: found by a scan of L
 * samples a step (vector ORs) until a step holds one, then sample by sample in that step. */
#define MM_HALF(L, TOP, WIDEN)                                                                     \
    do {                                                                                           \
        int16_t mn[L], mx[L];                                                                      \
        for (int j = 0; j < (L); ++j)                                                              \
            mn[j] = (TOP), mx[j] = -(TOP);                                                         \
        uint64_t i = 0;                                                                            \
        for (; i + (L) <= m; i += (L)) {                                                           \
            for (int j = 0; j < (L); ++j)                                                          \
                MM_HALF_LANE(j, i + (uint64_t)j, TOP);                                             \
        }                                                                                          \
        for (int j = 0; i < m; ++i, ++j)                                                           \
            MM_HALF_LANE(j, i, TOP);                                                               \
        for (uint32_t o = 0; o < nout; ++o) {                                                      \
            const uint32_t mask = masks[o];                                                        \
            int16_t a = (TOP), b = -(TOP);                                                         \
            uint16_t sel[L];                                                                       \
            for (int j = 0; j < (L); ++j) {                                                        \
                sel[j] = (uint16_t)(mask >> ((uint32_t)j % C) & 1u);                               \
                if (sel[j]) {                                                                      \
                    a = mn[j] < a ? mn[j] : a;                                                     \
                    b = mx[j] > b ? mx[j] : b;                                                     \
                }                                                                                  \
            }                                                                                      \
            if (a > b)                                                                             \
                continue; /* nothing finite */                                                     \
            uint16_t ba = (uint16_t)(a < 0 ? 0x8000 | -a : a);                                     \
            uint16_t bb = (uint16_t)(b < 0 ? 0x8000 | -b : b);                                     \
            if (a == 0 || b == 0) {                                                                \
                uint16_t z = 0;                                                                    \
                for (uint64_t q = 0; q < m; q += (L)) {                                            \
                    const int n_ = m - q < (L) ? (int)(m - q) : (L);                               \
                    uint16_t any = 0;                                                              \
                    for (int j = 0; j < n_; ++j) {                                                 \
                        uint16_t v;                                                                \
                        memcpy(&v, p + 2u * (q + (uint64_t)j), sizeof v);                          \
                        any |= (uint16_t)((v & 0x7fff) == 0) & sel[j];                             \
                    }                                                                              \
                    if (!any)                                                                      \
                        continue;                                                                  \
                    for (int j = 0; j < n_; ++j) {                                                 \
                        uint16_t v;                                                                \
                        memcpy(&v, p + 2u * (q + (uint64_t)j), sizeof v);                          \
                        if (sel[j] && (v & 0x7fff) == 0) {                                         \
                            z = v;                                                                 \
                            break;                                                                 \
                        }                                                                          \
                    }                                                                              \
                    break;                                                                         \
                }                                                                                  \
                if (a == 0)                                                                        \
                    ba = z;                                                                        \
                if (b == 0)                                                                        \
                    bb = z;                                                                        \
            }                                                                                      \
            outs[o].fmin = (double)WIDEN(ba), outs[o].fmax = (double)WIDEN(bb);                    \
            outs[o].found = 1;                                                                     \
        }                                                                                          \
    } while (0)

/* The lane loops for every dtype with L = K * 32 bytes of samples; one function per K and
 * instruction set (ATTR). */
#define MM_DEFINE(NAME, K, ATTR)                                                                   \
    ATTR static void NAME(gpuhist_dtype dtype, const unsigned char *p, uint64_t m, uint32_t C,     \
                          uint32_t nout, const uint32_t *masks, gpuhist_cpu_extent *outs)          \
    {                                                                                              \
        const uint32_t present = m >= C ? (1u << C) - 1u : (1u << m) - 1u;                         \
        switch (dtype) {                                                                           \
        case GPUHIST_U8: MM_INT(uint8_t, 32 * (K), 0, UINT8_MAX, SET_I); break;                    \
        case GPUHIST_U16: MM_INT(uint16_t, 16 * (K), 0, UINT16_MAX, SET_I); break;                 \
        case GPUHIST_U32: MM_INT(uint32_t, 8 * (K), 0, UINT32_MAX, SET_I); break;                  \
        case GPUHIST_U64: MM_INT(uint64_t, 4 * (K), 0, UINT64_MAX, SET_U); break;                  \
        case GPUHIST_I8: MM_INT(int8_t, 32 * (K), INT8_MIN, INT8_MAX, SET_I); break;               \
        case GPUHIST_I16: MM_INT(int16_t, 16 * (K), INT16_MIN, INT16_MAX, SET_I); break;           \
        case GPUHIST_I32: MM_INT(int32_t, 8 * (K), INT32_MIN, INT32_MAX, SET_I); break;            \
        case GPUHIST_I64: MM_INT(int64_t, 4 * (K), INT64_MIN, INT64_MAX, SET_I); break;            \
        case GPUHIST_F32: MM_FLOAT(float, 8 * (K), LD_F32); break;                                 \
        case GPUHIST_F16: MM_HALF(16 * (K), 0x7c00, gpuhist_f16_to_f32); break;                    \
        case GPUHIST_BF16: MM_HALF(16 * (K), 0x7f80, gpuhist_bf16_to_f32); break;                  \
        default: MM_FLOAT(double, 4 * (K), LD_F64); break;                                         \
        }                                                                                          \
    }

typedef void (*mm_lanes_fn)(gpuhist_dtype, const unsigned char *, uint64_t, uint32_t, uint32_t,
                            const uint32_t *, gpuhist_cpu_extent *);

MM_DEFINE(mm_base2, 2, )
MM_DEFINE(mm_base3, 3, )
MM_DEFINE(mm_base5, 5, )
MM_DEFINE(mm_base7, 7, )
static const mm_lanes_fn mm_base[4] = {mm_base2, mm_base3, mm_base5, mm_base7};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MM_HAVE_AVX2 1
#define MM_AVX2 __attribute__((target("avx2")))
MM_DEFINE(mm_avx2_2, 2, MM_AVX2)
MM_DEFINE(mm_avx2_3, 3, MM_AVX2)
MM_DEFINE(mm_avx2_5, 5, MM_AVX2)
MM_DEFINE(mm_avx2_7, 7, MM_AVX2)
static const mm_lanes_fn mm_avx2[4] = {mm_avx2_2, mm_avx2_3, mm_avx2_5, mm_avx2_7};
#endif

/* Which K (index into the tables above) holds C channels whole: C divides L for every dtype. */
static const int mm_family[9] = {0, 0, 0, 1, 0, 2, 1, 3, 0};

void gpuhist_cpu_minmax_channels_lanes(gpuhist_dtype dtype, const void *data, uint64_t m,
                                       uint32_t channels, uint32_t nout, const uint32_t *masks,
                                       gpuhist_cpu_extent *outs)
{
    if (channels < 1 || channels > 8) {
        gpuhist_cpu_minmax_channels_scalar(dtype, data, m, channels, nout, masks, outs);
        return;
    }
    memset(outs, 0, nout * sizeof *outs);
    if (m == 0)
        return;
    mm_lanes_fn fn = mm_base[mm_family[channels]];
#ifdef MM_HAVE_AVX2
    if (gpuhist_cpu_simd())
        fn = mm_avx2[mm_family[channels]];
#endif
    fn(dtype, data, m, channels, nout, masks, outs);
}

/* The one-sample-at-a-time loop: the first kept value of the result's channels starts the min
 * and max, a later one replaces them only when strictly smaller or larger. */
#define MM_SCALAR(T, LO, HI, KEEP)                                                                 \
    do {                                                                                           \
        T mn = 0, mx = 0;                                                                          \
        int f = 0;                                                                                 \
        uint32_t c = 0;                                                                            \
        for (uint64_t i = 0; i < m; ++i, c = c + 1 == C ? 0 : c + 1) {                             \
            if (!(mask >> c & 1u))                                                                 \
                continue;                                                                          \
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
        uint32_t c = 0;                                                                            \
        for (uint64_t i = 0; i < m; ++i, c = c + 1 == C ? 0 : c + 1) {                             \
            if (!(mask >> c & 1u))                                                                 \
                continue;                                                                          \
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

void gpuhist_cpu_minmax_channels_scalar(gpuhist_dtype dtype, const void *data, uint64_t m,
                                        uint32_t channels, uint32_t nout, const uint32_t *masks,
                                        gpuhist_cpu_extent *outs)
{
    const unsigned char *p = data;
    const uint32_t C = channels ? channels : 1;
    memset(outs, 0, nout * sizeof *outs);
    for (uint32_t o = 0; o < nout; ++o) {
        gpuhist_cpu_extent *out = &outs[o];
        const uint32_t mask = masks[o];
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
}

static int mm_scalar_wanted(void)
{
    const char *env = getenv("GPUHIST_CPU_SIMD");
    return env && strcmp(env, "0") == 0;
}

void gpuhist_cpu_minmax_channels(gpuhist_dtype dtype, const void *data, uint64_t m,
                                 uint32_t channels, uint32_t nout, const uint32_t *masks,
                                 gpuhist_cpu_extent *outs)
{
    if (mm_scalar_wanted())
        gpuhist_cpu_minmax_channels_scalar(dtype, data, m, channels, nout, masks, outs);
    else
        gpuhist_cpu_minmax_channels_lanes(dtype, data, m, channels, nout, masks, outs);
}

/* ---- one channel ----------------------------------------------------------------------------- */

static const uint32_t mm_one = 1;

void gpuhist_cpu_minmax_lanes(gpuhist_dtype dtype, const void *data, uint64_t n,
                              gpuhist_cpu_extent *out)
{
    gpuhist_cpu_minmax_channels_lanes(dtype, data, n, 1, 1, &mm_one, out);
}

void gpuhist_cpu_minmax_scalar(gpuhist_dtype dtype, const void *data, uint64_t n,
                               gpuhist_cpu_extent *out)
{
    gpuhist_cpu_minmax_channels_scalar(dtype, data, n, 1, 1, &mm_one, out);
}

void gpuhist_cpu_minmax(gpuhist_dtype dtype, const void *data, uint64_t n,
                        gpuhist_cpu_extent *out)
{
    gpuhist_cpu_minmax_channels(dtype, data, n, 1, 1, &mm_one, out);
}

/* ---- merging, the auto range, rows on threads ------------------------------------------------ */

void gpuhist_cpu_extent_merge(gpuhist_cpu_extent *acc, const gpuhist_cpu_extent *next)
{
    if (!next->found)
        return;
    if (!acc->found) {
        *acc = *next;
        return;
    }
    /* strict compares: of equal values (zeros of both signs) the earlier run's stays */
    acc->fmin = next->fmin < acc->fmin ? next->fmin : acc->fmin;
    acc->fmax = next->fmax > acc->fmax ? next->fmax : acc->fmax;
    acc->imin = next->imin < acc->imin ? next->imin : acc->imin;
    acc->imax = next->imax > acc->imax ? next->imax : acc->imax;
    acc->umin = next->umin < acc->umin ? next->umin : acc->umin;
    acc->umax = next->umax > acc->umax ? next->umax : acc->umax;
}

void gpuhist_cpu_extent_range(gpuhist_dtype dtype, const gpuhist_cpu_extent *e, double *lo,
                              double *hi)
{
    switch (dtype) {
    case GPUHIST_F32:
    case GPUHIST_F64:
    case GPUHIST_F16:
    case GPUHIST_BF16: *lo = e->fmin, *hi = e->fmax; break;
    case GPUHIST_U64:
        *lo = gpuhist_u64_to_double_down(e->umin);
        *hi = gpuhist_u64_to_double_up(e->umax);
        break;
    default:
        *lo = gpuhist_i64_to_double_down(e->imin);
        *hi = gpuhist_i64_to_double_up(e->imax);
        break;
    }
}

/* Fewest bytes per thread worth starting a thread for, and the most threads. */
#define MM_MIN_SHARE ((uint64_t)4 << 20)
enum { MM_MAX_THREADS = 64 };

typedef struct mm_share {
    const gpuhist_cpu_layout *l;
    uint32_t nout;
    const uint32_t *masks;
    int scalar;
    uint64_t begin, end; /* pixels, row-major */
    gpuhist_cpu_extent out[GPUHIST_CPU_MINMAX_OUTS];
} mm_share;

static void *mm_share_run(void *arg)
{
    mm_share *sh = arg;
    const gpuhist_cpu_layout *l = sh->l;
    const size_t pixel = (size_t)l->channels * gpuhist_dtype_size(l->dtype);
    memset(sh->out, 0, sizeof sh->out);
    for (uint64_t q = sh->begin; q < sh->end;) {
        const uint64_t r = q / l->row_length, px = q % l->row_length;
        uint64_t k = l->row_length - px;
        if (k > sh->end - q)
            k = sh->end - q;
        const unsigned char *p = (const unsigned char *)l->data + r * l->row_stride + px * pixel;
        gpuhist_cpu_extent part[GPUHIST_CPU_MINMAX_OUTS];
        if (sh->scalar)
            gpuhist_cpu_minmax_channels_scalar(l->dtype, p, k * l->channels, l->channels,
                                               sh->nout, sh->masks, part);
        else
            gpuhist_cpu_minmax_channels_lanes(l->dtype, p, k * l->channels, l->channels,
                                              sh->nout, sh->masks, part);
        for (uint32_t o = 0; o < sh->nout; ++o)
            gpuhist_cpu_extent_merge(&sh->out[o], &part[o]);
        q += k;
    }
    return NULL;
}

void gpuhist_cpu_minmax_rows(const gpuhist_cpu_layout *l, uint32_t nout, const uint32_t *masks,
                             int threads, gpuhist_cpu_extent *outs)
{
    mm_share sh[MM_MAX_THREADS];
    const uint64_t pixels = l->rows * l->row_length;
    const uint64_t bytes = pixels * l->channels * gpuhist_dtype_size(l->dtype);
    uint64_t t = bytes / MM_MIN_SHARE;
    if (t > (uint64_t)threads)
        t = threads > 1 ? (uint64_t)threads : 1;
    if (t > MM_MAX_THREADS)
        t = MM_MAX_THREADS;
    if (t < 1)
        t = 1;
    const int scalar = mm_scalar_wanted();
    for (uint64_t i = 0; i < t; ++i) {
        memset(&sh[i], 0, sizeof sh[i]);
        sh[i].l = l, sh[i].nout = nout, sh[i].masks = masks, sh[i].scalar = scalar;
        sh[i].begin = pixels / t * i;
        sh[i].end = i + 1 < t ? pixels / t * (i + 1) : pixels;
    }
    gpuhist_fork_join(sh, sizeof sh[0], (int)t, mm_share_run);
    memset(outs, 0, nout * sizeof *outs);
    for (uint64_t i = 0; i < t; ++i)
        for (uint32_t o = 0; o < nout; ++o)
            gpuhist_cpu_extent_merge(&outs[o], &sh[i].out[o]);
}
