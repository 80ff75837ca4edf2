/*
 * smem_certified_even.cu - cuda-fast-smem's EVEN kernel for one channel of f32 or f64 samples
 * (fe_kernel<T, DIRECT>): per-warp-group replicated 32-bit counters in shared memory, each
 * sample's bin from fast_even.h's certified estimate, 16-byte loads (four floats or two doubles
 * each; smem_stream.cuh).
 *
 * fe_kernel<float>, f32 EVEN: THE estimate and THE TEST of fast_even.h (f = (x - lower_f) *
 * scale_f in float, key = floor(f), certified against every edge on the host once per spec; no
 * error bound of its own). Used when the certificate holds and is direct or its symmetric form
 * is usable (h_f > 0), else fs_kernel runs.
 *   Direct certificates (DIRECT; every [0, 1) power-of-two grid, the benchmark's): key < bins
 * alone proves the bin, out-of-range samples included: FADD, FMUL, FADD.RM, IADD, ISETP, BRA,
 * LEA, RED; only out-of-range samples (and in-range ones whose estimate reaches bins: the last
 * bin) take fe_slow, which needs no edge there.
 *   Otherwise the test's symmetric form, |f - (key + 1/2)| < h_f: FADD, FMUL, FADD.RM, IADD,
 * FADD, FADD, ISETP, FSETP(|d|, AND), BRA, LEA, RED = 11, plus ~0.8 of load/loop overhead per
 * sample: ~12 thread-instructions per sample. Out-of-range samples never pass.
 *
 * fe_kernel<double>, f64 EVEN: the double domain of fast_even.h (f = (x - lower) * scale with
 * __dadd_rn / __dmul_rn, no FMA; key and frac by a round-down add of 2^52:
 * gpuhist_fe_key_f64). Used whenever the double certificate holds (ok), else fs_kernel runs
 * binmap.h's walk. Direct certificates: DADD, DMUL, DADD.RM, 2 ISETP, BRA, LEA, RED per sample;
 * others the two-sided test, + DADD, DADD, 2 DSETP. Two samples per 16-byte load, so half the
 * shared atomics and a quarter of the FP32 kernel's lane work per byte read; the FP64 work, ~5-7
 * double operations per sample, is ~16 per clock per SM at the read ceiling, a quarter of
 * Hopper's 64 FP64 lanes. Bound: the read ceiling (H100, f64/256 over [0, 1), direct: 0.99-1.01
 * of it on all four distributions, CUB 0.96-0.97; fs_kernel had 0.72).
 *
 * Slow path (fe_slow; uniform data over [0, 1) with 1000 bins: ~0.01% of f32 samples): NaN /
 * below / above range by compares (binmap.h's outside rule), then fast_even.h's one-edge rule,
 * bin = j - 1 + (x >= E(j)): one edge by binmap.h's own formula in double. No edge table, so no
 * per-block set-up.
 * Limits: (bins + 3) * 4 * R bytes of counters (R <= 16 replicas, chosen to stay <= 160 KiB;
 * GPUHIST_CUDA_FE_REPS overrides) must fit the opt-in shared memory; f32 certificates that are
 * neither direct nor usable in their symmetric form, and refused certificates of either domain,
 * go to fs_kernel (fast_smem.cu). One channel only.
 */
#include "fast_even.h"
#include "smem_stream.cuh"

#include <stdlib.h>

#define FX_MAX_REPS 16u
#define FX_REP_BYTES (160u * 1024u)

namespace gh_fast_smem {
namespace {

/* EVEN slot of x off the fast path: out of range, NaN, or a sample that failed the test. */
template <bool DIRECT>
__device__ __forceinline__ uint32_t fe_slow(const fx_params &p, float x)
{
    return gpuhist_fe_fix_f32(&p.map, p.t_lo, DIRECT, x);
}
template <bool DIRECT>
__device__ __forceinline__ uint32_t fe_slow(const fx_params &p, double x)
{
    return gpuhist_fe_fix_f64(&p.map, p.t_lo_d, DIRECT, x);
}

/* The estimate's constants in registers and THE TEST in the samples' domain: direct (key < bins
 * alone), f32's symmetric form or f64's two-sided form (fe_setup says which forms a certificate
 * allows). */
template <typename T> struct fe_test;
template <> struct fe_test<float> {
    float lo, sc, h;
    uint32_t bins;
    __device__ explicit fe_test(const fx_params &p) : lo(p.lo), sc(p.sc), h(p.h), bins(p.bins) {}
    template <bool DIRECT> __device__ __forceinline__ uint32_t key(float x, int *ok) const
    {
        return DIRECT ? gpuhist_fe_key_f32(x, lo, sc, bins, 0.0f, 0.0f, 0, ok)
                      : gpuhist_fe_key_sym_f32(x, lo, sc, bins, h, ok);
    }
};
template <> struct fe_test<double> {
    double lo, sc, t_lo, t_hi;
    uint32_t bins;
    __device__ explicit fe_test(const fx_params &p)
        : lo(p.lo_d), sc(p.sc_d), t_lo(p.t_lo_d), t_hi(p.t_hi_d), bins(p.bins)
    {
    }
    template <bool DIRECT> __device__ __forceinline__ uint32_t key(double x, int *ok) const
    {
        return gpuhist_fe_key_f64(x, lo, sc, bins, t_lo, t_hi, !DIRECT, ok);
    }
};

/* f32 or f64 EVEN, one channel, certificate usable (fe_setup): see the banner. DIRECT: the
 * certificate is direct, so a sample whose key is a bin needs no test at all and only
 * out-of-range samples take fe_slow. */
template <typename T, bool DIRECT>
__global__ void __launch_bounds__(FX_THREADS, 1)
    fe_kernel(const __grid_constant__ fx_params p, unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    uint32_t *cnt = (uint32_t *)fs_smem;
    const uint32_t tid = threadIdx.x, ncnt = p.ncnt, total = p.reps * ncnt;
    const uint32_t my = (uint32_t)__cvta_generic_to_shared(cnt + ((tid >> 5) % p.reps) * ncnt);
    const fe_test<T> test(p);
    auto each = [&](T x) {
        int ok;
        uint32_t idx = test.template key<DIRECT>(x, &ok);
        if (!ok)
            idx = fe_slow<DIRECT>(p, x);
        gh_red_shared(my + idx * 4u);
    };
    auto setup = [&]() {
        for (uint32_t i = tid; i < total; i += FX_THREADS)
            cnt[i] = 0u;
        __syncthreads();
        if (blockIdx.x == 0 && tid < p.nhead + p.ntail)
            each(p.end_sample<T>(tid));
    };
    fx_stream<FE_U, T>(p.vec, p.nvec, setup, each);
    __syncthreads();
    for (uint32_t j = tid; j < ncnt; j += FX_THREADS) {
        uint32_t s = 0;
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

/* fe_kernel's parameters from fast_even.h's certificate (banner): 0 when it does not apply.
 * f32: refused, or neither direct nor with a usable symmetric form; f64: refused. Then
 * fs_kernel runs. */
static int fe_setup(const gpuhist_plan *plan, fx_params *q, int *direct)
{
    gpuhist_fe_cert c;
    gpuhist_fe_cert_of(&plan->map, &c); /* cached per spec; the domain from the plan's edges */
    if (!c.ok)
        return 0;
    if (plan->dtype == GPUHIST_F32) {
        if (!c.f32 || !(c.direct || c.h_f > 0.0f))
            return 0;
        q->lo = plan->map.lower_f;
        q->sc = plan->map.scale_f;
        q->h = c.h_f;
        q->t_lo = c.t_lo_f;
    } else if (plan->dtype == GPUHIST_F64) {
        if (c.f32)
            return 0;
        q->lo_d = plan->map.lower;
        q->sc_d = plan->map.scale;
        q->t_lo_d = c.t_lo;
        q->t_hi_d = c.t_hi;
    } else {
        return 0;
    }
    q->map = plan->map;
    *direct = c.direct;
    return 1;
}

template <typename T>
static gpuhist_status fe_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, int direct,
                                const fx_params &p, size_t smem, void *out)
{
    /* a direct certificate: no per-sample frac test */
    if (direct)
        return fx_launch<T>(ctx, job, fe_kernel<T, true>, p, smem, out);
    return fx_launch<T>(ctx, job, fe_kernel<T, false>, p, smem, out);
}

} /* namespace */

int fe_try(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job, fx_params &p,
           void *out, gpuhist_status *st)
{
    size_t smem;
    int direct;
    if (!fe_setup(plan, &p, &direct))
        return 0;
    uint32_t r = FX_MAX_REPS;
    while (r > 1u && (size_t)r * p.ncnt * 4u > FX_REP_BYTES)
        r >>= 1;
    /* Tuning knob: GPUHIST_CUDA_FE_REPS replicas (1..32) when they fit shared memory. H200,
     * f32 4096 bins (16 KiB per replica), uniform/hot90/constant/bell GB/s: 4 replicas
     * 4301 / 4314 / 4297 / 4301, 8 (the default) 4301 / 4295 / 4298 / 4299, 12 4114 / 4183 /
     * 4279 / 4253, 13 3956 / 4140 / 4151 / 3939: more replicas only take L1 away. */
    const char *env = getenv("GPUHIST_CUDA_FE_REPS");
    if (env && *env) {
        const unsigned long v = strtoul(env, NULL, 10);
        if (v >= 1u && v <= 32u && (size_t)v * p.ncnt * 4u <= job->smem_per_block_optin)
            r = (uint32_t)v;
    }
    p.reps = r;
    smem = (size_t)r * p.ncnt * 4u;
    if (smem > job->smem_per_block_optin)
        return 0;
    if (plan->dtype == GPUHIST_F64)
        *st = fe_launch<double>(ctx, job, direct, p, smem, out);
    else
        *st = fe_launch<float>(ctx, job, direct, p, smem, out);
    return 1;
}

} /* namespace gh_fast_smem */
