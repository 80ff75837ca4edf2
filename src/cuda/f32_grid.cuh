/*
 * f32_grid.cuh - the certified f32 grid: map an f32 sample to its EVEN bin with three IEEE float
 * operations, certified on the host against every edge, so the answer is binmap.h's bit for bit.
 * Used by cuda-fast-packed16-f32 (fast_packed16.cu) and cuda-two-pass (two_pass.cu).
 *
 * The device computes f = fl(fl(x - lower_f) * scale_f) (IEEE binary32 by inline PTX, so
 * --use_fast_math/-ftz cannot change it) and r = fl_down(f + 2^23), whose bits are
 * 0x4B000000 + floor(f) for 0 <= f < 2^23 (anything else - negative, NaN, inf, huge - gives
 * key = bits - 0x4B000000 >= bins and is rejected). f is a non-decreasing function of x (each
 * rounding is monotone), so with E_0 = lower_f, E_bins = upper_f, E_i = binmap.h's float edges,
 * a_i = f(pred(E_i)) (largest f of any x below E_i) and b_i = f(E_i):
 *   f > a_i  =>  x >= E_i        and        f < b_i  =>  x < E_i.
 * The host evaluates f on every edge (same IEEE operations, once per bin spec, cached per
 * thread) and sets t_lo >= max_{0<=i<bins} (a_i - i), t_hi <= min_{1<=i<=bins} (1 + b_i - i).
 * For key = floor(f) < bins and frac = f - key (exact): frac > t_lo gives f > a_key, frac < t_hi
 * gives f < b_(key+1), hence E_key <= x < E_(key+1), which is exactly binmap.h's answer (its walk
 * ends at the largest i < bins with E_i <= x; the edges are non-decreasing). Samples failing the
 * test take gpuhist_slot_even_f32 itself. When t_lo < 0 and t_hi >= 1 (every [0, 1)
 * power-of-two grid, the benchmark's) the frac test is vacuous ("direct"): a sample maps in 3
 * float operations and an integer compare, with no slow path at all. The host refuses the
 * shortcut (all samples exact) if any edge computation meets a subnormal (where a host running
 * with FTZ/DAZ could differ from the device) or the thresholds are not sane.
 */
#ifndef GPUHIST_CUDA_F32_GRID_CUH
#define GPUHIST_CUDA_F32_GRID_CUH

#include "common.cuh"

#include <math.h>
#include <string.h>

/* IEEE binary32 without flush-to-zero whatever the compile flags: the host evaluates the same
 * operations on the edges. */
__device__ __forceinline__ float fgrid_sub_rn(float a, float b)
{
    float r;
    asm("sub.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ __forceinline__ float fgrid_mul_rn(float a, float b)
{
    float r;
    asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ __forceinline__ float fgrid_add_rm(float a, float b)
{
    float r;
    asm("add.rm.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}
__device__ __forceinline__ bool fgrid_gt(float a, float b)
{
    uint32_t r;
    asm("{ .reg .pred q; setp.gt.f32 q, %1, %2; selp.u32 %0, 1, 0, q; }"
        : "=r"(r)
        : "f"(a), "f"(b));
    return r != 0u;
}
__device__ __forceinline__ bool fgrid_lt(float a, float b)
{
    uint32_t r;
    asm("{ .reg .pred q; setp.lt.f32 q, %1, %2; selp.u32 %0, 1, 0, q; }"
        : "=r"(r)
        : "f"(a), "f"(b));
    return r != 0u;
}

/* The certified estimate of an f32 sample: its key (= slot when ok), ok = certified (else the
 * caller takes gpuhist_slot_even_f32). CUT: the frac test of the banner (not "direct"). */
template <bool CUT>
__device__ __forceinline__ uint32_t fgrid_key(float x, float lower_f, float scale_f, uint32_t bins,
                                              float t_lo, float t_hi, bool &ok)
{
    const float f = fgrid_mul_rn(fgrid_sub_rn(x, lower_f), scale_f);
    const float r = fgrid_add_rm(f, 8388608.0f); /* 2^23 + floor(f) when 0 <= f < 2^23 */
    const uint32_t key = __float_as_uint(r) - 0x4B000000u;
    ok = key < bins;
    if (CUT) {
        const float fr = fgrid_sub_rn(f, fgrid_sub_rn(r, 8388608.0f)); /* exact */
        ok = ok && fgrid_gt(fr, t_lo) && fgrid_lt(fr, t_hi);
    }
    return key;
}

/* ---- host: the certification ----------------------------------------------------------------- */

/* The device's f(x) = fl(fl(x - L) * S) in IEEE binary32 (volatile: one rounding each, no
 * contraction, no excess precision). */
static float fgrid_host_f(float x, float L, float S)
{
    volatile float t = x - L;
    volatile float f = t * S;
    return f;
}

/* binmap.h's gpuhist_even_edge_f32 for 0 < i < bins, every product and sum rounded separately as
 * the reference (built with -ffp-contract=off) and the device (__dmul_rn/__dadd_rn) do. */
static float fgrid_host_edge(const gpuhist_binmap *m, uint32_t i)
{
    volatile double a;
    if (m->step_is_zero) {
        a = (double)i / (double)m->bins;
        a = a * m->delta;
        a = a + m->lower;
    } else {
        a = (double)i * m->step;
        a = a + m->lower;
    }
    return (float)a;
}

/* 1 if evaluating f at x meets a subnormal (where FTZ/DAZ on the host could differ). */
static int fgrid_host_hazard(float x, float L, float S)
{
    const double t = fabs((double)x - (double)L);
    const double tiny = 0x1p-120;
    return (t != 0.0 && t < tiny) || (t * (double)S != 0.0 && t * (double)S < tiny);
}

struct fgrid_cut {
    int direct;       /* 1: every sample's estimate is its slot (no frac test, no slow path) */
    float t_lo, t_hi; /* else: frac(f) must lie in (t_lo, t_hi) */
};

static fgrid_cut fgrid_make_cut(const gpuhist_binmap *m)
{
    fgrid_cut c = {0, INFINITY, -INFINITY}; /* no sample passes: all exact */
    const uint32_t B = m->bins;
    const float L = m->lower_f, Uf = m->upper_f, S = m->scale_f;
    if (m->kind != GH_KIND_EVEN || B < 1u || B >= (1u << 22) || !isfinite(L) || !isfinite(Uf) ||
        !isfinite(S) || !(S > 0.0f) || !(L < Uf))
        return c;
    double amax = -INFINITY, bmin = INFINITY;
    for (uint32_t i = 0; i <= B; ++i) {
        const float E = i == 0u ? L : i == B ? Uf : fgrid_host_edge(m, i);
        if (i < B) {
            const float P = nextafterf(E, -INFINITY);
            /* i = 0: a host flush can only raise a_0 (toward 0): conservative. */
            if (i > 0u && fgrid_host_hazard(P, L, S))
                return c;
            const double a = (double)fgrid_host_f(P, L, S) - (double)i;
            if (!(a < 1.0))
                return c;
            amax = a > amax ? a : amax;
        }
        if (i > 0u) {
            if (fgrid_host_hazard(E, L, S))
                return c;
            const double b = 1.0 + (double)fgrid_host_f(E, L, S) - (double)i;
            if (!(b > 0.0))
                return c;
            bmin = b < bmin ? b : bmin;
        }
    }
    if (amax < 0.0 && bmin >= 1.0) {
        c.direct = 1;
        return c;
    }
    float lo = (float)amax;
    if ((double)lo < amax)
        lo = nextafterf(lo, INFINITY);
    if (lo > -1.17549435e-38f && lo < 1.17549435e-38f) /* never a subnormal threshold */
        lo = lo > 0.0f ? 1.17549435e-38f : 0.0f;
    float hi = (float)bmin;
    if ((double)hi > bmin)
        hi = nextafterf(hi, -INFINITY);
    if (!(lo < hi) || !(hi >= 1.17549435e-38f))
        return c;
    c.t_lo = lo;
    c.t_hi = hi;
    return c;
}

/* One evaluation per bin spec and host thread: the walk over the edges costs ~1 ms for 65536
 * bins, the kernel ~0.3 ms per GiB. */
static fgrid_cut fgrid_cut_for(const gpuhist_binmap *m)
{
    thread_local gpuhist_binmap key;
    thread_local fgrid_cut cut;
    thread_local int valid = 0;
    if (!valid || memcmp(&key, m, sizeof key) != 0) {
        cut = fgrid_make_cut(m);
        memcpy(&key, m, sizeof key);
        valid = 1;
    }
    return cut;
}

#endif
