/*
 * smem_certified_even.cu - cuda-fast-smem's f32 EVEN kernel (fe_kernel), one channel: per-warp-
 * group replicated 32-bit counters in shared memory, each sample's bin from fast_even.h's
 * certified estimate.
 *
 * fe_kernel, f32 EVEN: THE estimate and THE TEST of fast_even.h (f = (x - lower_f) * scale_f
 * in float, key = floor(f), certified against every edge on the host once per spec; no error
 * bound of its own). Used when the certificate holds and is direct or its symmetric form is
 * usable (h_f > 0), else fs_kernel runs.
 *   Direct certificates (fe_kernel<true>; every [0, 1) power-of-two grid, the benchmark's):
 * key < bins alone proves the bin, out-of-range samples included: FADD, FMUL, FADD.RM, IADD,
 * ISETP, BRA, LEA, RED; only out-of-range samples (and in-range ones whose estimate reaches
 * bins: the last bin) take fe_slow, which needs no edge there.
 *   Otherwise (fe_kernel<false>) the test's symmetric form, |f - (key + 1/2)| < h_f: FADD, FMUL,
 * FADD.RM, IADD, FADD, FADD, ISETP, FSETP(|d|, AND), BRA, LEA, RED = 11, plus ~0.8 of load/loop
 * overhead per sample: ~12 thread-instructions per sample. Out-of-range samples never pass.
 *   Slow path (fe_slow; uniform data over [0, 1) with 1000 bins: ~0.01% of samples): NaN /
 * below / above range by compares, then fast_even.h's one-edge rule, bin = j - 1 + (x >= E(j)):
 * one edge by binmap.h's own formula in double. No edge table, so no per-block set-up.
 * Limits: (bins + 3) * 4 * R bytes of counters (R <= 16 replicas, chosen to stay <= 160 KiB;
 * GPUHIST_CUDA_FE_REPS overrides) must fit the opt-in shared memory; certificates that are
 * neither direct nor usable in their symmetric form go to fs_kernel (fast_smem.cu).
 */
#include "fast_even.h"
#include "smem_f32_stream.cuh"

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

/* f32 EVEN, one channel, certificate usable (fe_setup): see the banner. DIRECT: the
 * certificate is direct, so a sample whose key is a bin needs no test at all and only
 * out-of-range samples take fe_slow. */
template <bool DIRECT>
__global__ void __launch_bounds__(FX_THREADS, 1)
    fe_kernel(const __grid_constant__ fx_params p, unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    uint32_t *cnt = (uint32_t *)fs_smem;
    const uint32_t tid = threadIdx.x, ncnt = p.ncnt, total = p.reps * ncnt;
    const uint32_t my = (uint32_t)__cvta_generic_to_shared(cnt + ((tid >> 5) % p.reps) * ncnt);
    const float lo = p.lo, sc = p.sc, h = p.h;
    const uint32_t bins = p.bins;
    auto each = [&](float x) {
        int ok;
        uint32_t idx = DIRECT ? gpuhist_fe_key_f32(x, lo, sc, bins, 0.0f, 0.0f, 0, &ok)
                              : gpuhist_fe_key_sym_f32(x, lo, sc, bins, h, &ok);
        if (!ok)
            idx = fe_slow<DIRECT>(p, x);
        gh_red_shared(my + idx * 4u);
    };
    auto setup = [&]() {
        for (uint32_t i = tid; i < total; i += FX_THREADS)
            cnt[i] = 0u;
        __syncthreads();
        if (blockIdx.x == 0 && tid < p.nhead + p.ntail)
            each(tid < p.nhead ? p.head[tid] : p.tail[tid - p.nhead]);
    };
    fx_stream<FE_U>(p.vec, p.nvec, setup, each);
    __syncthreads();
    for (uint32_t j = tid; j < ncnt; j += FX_THREADS) {
        uint32_t s = 0;
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

/* fe_kernel's parameters from fast_even.h's certificate (banner): 0 when it does not apply
 * (refused, or neither direct nor with a usable symmetric form: then fs_kernel runs). */
static int fe_setup(const gpuhist_plan *plan, fx_params *q, int *direct)
{
    gpuhist_fe_cert c;
    gpuhist_fe_cert_of(&plan->map, &c); /* cached per spec */
    if (!c.ok || !(c.direct || c.h_f > 0.0f))
        return 0;
    q->lo = plan->map.lower_f;
    q->sc = plan->map.scale_f;
    q->h = c.h_f;
    q->t_lo = c.t_lo_f;
    q->map = plan->map;
    *direct = c.direct;
    return 1;
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
    /* a direct certificate: no per-sample frac test */
    if (direct)
        *st = fx_launch(ctx, job, fe_kernel<true>, p, smem, out);
    else
        *st = fx_launch(ctx, job, fe_kernel<false>, p, smem, out);
    return 1;
}

} /* namespace gh_fast_smem */
