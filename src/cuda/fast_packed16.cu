/*
 * fast_packed16.cu - cuda-fast-packed16 (u16/i16, the 65536 raw values) and
 * cuda-fast-packed16-f32 (f32, EVEN bins up to ~115k slots): 16-bit counters packed two per
 * 32-bit word so a 65536-counter histogram fits one block's shared memory (128 KiB of the
 * 227 KiB opt-in on H100/H200). Aimed at issue 5's u16/65536 and f32/65536 cells (>= 0.75).
 *
 * Mechanism. Key k (raw value, or slot) lives in half k & 1 of word k >> 1. A thread adds r << 16*(k&1)
 * with a shared atomicAdd (ATOMS with return) and looks at the half's old value h: the one thread
 * whose add takes the half from below 0x4000 to 0x4000 or more subtracts 0x4000 from it (its next
 * instruction) and adds 0x4000 to the global 64-bit counter. Invariant: a half has at most one
 * subtract pending (a new hand-off needs h < 0x4000, impossible while a pending one keeps it at or
 * above 0x4000), so it never goes negative (no borrow from the high half) and stays below
 * 0x4000 + (what other threads add to that one half between a thread's atomic and its subtract,
 * two instructions later) - it would take 0xC000 such adds to carry into the neighbour, which
 * the scheduler cannot plausibly delay that long (stated, not proved: there is no hardware
 * guarantee of warp progress). At the end each block adds its halves to `out`.
 * Hot and constant data (DESIGN.md section 5: ~510-560 GB/s from same-address contention): each
 * thread keeps the last key and a run count in registers (run-length cache, cap 32) and issues
 * the atomic only when the key changes or the run reaches the cap: constant data needs one
 * atomic per 32 samples per thread; hot90 about one per 5.
 * f32 slots: the certified estimate of cuda-fast-smem (same error bound, duplicated here:
 * frac(f) farther than eps from an integer -> trunc(f) is binmap.h's bin) and binmap.h's
 * gpuhist_slot_even_f32 otherwise (edges computed in double; ~2 eps of the samples: 3% for
 * [0,1) with 65536 bins, so most warps see one slow lane per step - the limit of this path).
 * Loads: 16-byte vectors, 4 per thread per iteration; unaligned head/tail by block 0.
 * PREDICTION (H200): u16 uniform ~0.55-0.6 of the ceiling (the DESIGN.md probe of the same
 * counter scheme reached 2494 GB/s: random ATOMS over 32k words, ~3.5-way bank conflicts, bound
 * by the atomic unit, not the 0.75 target); hot90/constant rise from ~0.12 to ~0.5+ (run cache).
 * f32 65536: ~0.5 (extra slow-lane cost). Single channel only (the backend deinterleaves).
 * Seed: 002 (privatised shared histograms), DESIGN.md section 5 probe; run cache and the
 * 0x4000 hand-off bound are new.
 */
#include "common.cuh"

#include <math.h>

namespace {

#define P16_THREADS 1024
#define P16_U 4
#define P16_RUN_CAP 32u
#define P16_HANDOFF 0x4000u

enum { P16_U16 = 0, P16_F32 = 1 };

struct p16_params {
    gh_kparams k;
    uint32_t nkeys;   /* 65536 values, or bins + 3 slots */
    uint32_t fast_ok; /* f32: certified estimate usable */
    float eps_lo, eps_hi, fmax;
};

__device__ __forceinline__ uint32_t p16_slot_f32(const p16_params &p, const gpuhist_binmap &m,
                                                 float x)
{
    if (p.fast_ok && x >= m.lower_f && x < m.upper_f) { /* NaN fails both */
        const float f = __fmul_rn(__fsub_rn(x, m.lower_f), m.scale_f);
        if (f >= 0.0f && f < p.fmax) {
            const float t = truncf(f);
            const float fr = __fsub_rn(f, t);
            if (fr > p.eps_lo && fr < p.eps_hi)
                return (uint32_t)t;
        }
    }
    return gpuhist_slot_even_f32(&m, x);
}

template <int MODE>
__global__ void __launch_bounds__(P16_THREADS)
    p16_kernel(const p16_params p, const uint64_t vbegin, const uint64_t nvec,
               unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) uint32_t p16_w[];
    const uint32_t nwords = (p.nkeys + 1u) / 2u;
    const uint32_t tid = threadIdx.x;
    for (uint32_t i = tid; i < nwords; i += P16_THREADS)
        p16_w[i] = 0u;
    __syncthreads();
    const gpuhist_binmap m = p.k.map;

    uint32_t last = 0, run = 0;
    auto add = [&](uint32_t key, uint32_t r) {
        const uint32_t sh = (key & 1u) << 4;
        const uint32_t old = atomicAdd(p16_w + (key >> 1), r << sh);
        const uint32_t h = (old >> sh) & 0xffffu;
        if (h < P16_HANDOFF && h + r >= P16_HANDOFF) {
            atomicSub(p16_w + (key >> 1), P16_HANDOFF << sh);
            atomicAdd(out + key, (unsigned long long)P16_HANDOFF);
        }
    };
    auto count = [&](uint32_t key) {
        if (key == last && run < P16_RUN_CAP) {
            ++run;
            return;
        }
        if (run)
            add(last, run);
        last = key;
        run = 1;
    };

    typedef typename std::conditional<MODE == P16_U16, uint16_t, float>::type T;
    constexpr uint32_t VE = 16u / sizeof(T);
    const T *data = (const T *)p.k.data;
    auto key_of = [&](T x) -> uint32_t {
        if constexpr (MODE == P16_U16)
            return (uint32_t)x;
        else
            return p16_slot_f32(p, m, x);
    };
    if (blockIdx.x == 0) {
        const uint64_t vend = vbegin + nvec * VE;
        const uint64_t nh = vbegin - p.k.begin, nt = p.k.end - vend;
        if (tid < nh + nt)
            count(key_of(data[tid < nh ? p.k.begin + tid : vend + (tid - nh)]));
    }
    const uint4 *vec = (const uint4 *)(data + vbegin);
    const uint64_t step = (uint64_t)gridDim.x * (P16_THREADS * P16_U);
    for (uint64_t base = (uint64_t)blockIdx.x * (P16_THREADS * P16_U); base < nvec;
         base += step) {
        uint4 v[P16_U];
#pragma unroll
        for (int u = 0; u < P16_U; ++u) {
            const uint64_t i = base + (uint64_t)u * P16_THREADS + tid;
            v[u] = i < nvec ? __ldcs(vec + i) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int u = 0; u < P16_U; ++u) {
            if (base + (uint64_t)u * P16_THREADS + tid >= nvec)
                continue;
            union {
                uint4 v;
                T e[VE];
            } w;
            w.v = v[u];
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e)
                count(key_of(w.e[e]));
        }
    }
    if (run)
        add(last, run);
    __syncthreads();

    for (uint32_t j = tid; j < nwords; j += P16_THREADS) {
        const uint32_t v = p16_w[j];
        if (v & 0xffffu)
            atomicAdd(out + 2u * j, (unsigned long long)(v & 0xffffu));
        if ((v >> 16) && 2u * j + 1u < p.nkeys)
            atomicAdd(out + 2u * j + 1u, (unsigned long long)(v >> 16));
    }
}

/* The certified-estimate eps of fast_smem.cu (see its banner for the bound). */
static int p16_even_eps(const gpuhist_binmap *m, float *lo, float *hi, float *fmax_out)
{
    const double u = 1.0 / 16777216.0;
    const double B = (double)m->bins;
    const double D = m->upper - m->lower;
    if (m->step_is_zero || !(D > 0.0) || !isfinite(D) || !(m->scale > 0.0) ||
        !isfinite(m->scale) || m->bins < 2u)
        return 0;
    const double bd = B / D;
    const double M = fmax(fabs(m->lower), fabs(m->upper)) * bd;
    const double eps = 4.0 * (M + B + 1.0) * u + ldexp(bd, -147);
    if (!(eps < 0.25))
        return 0;
    float e = (float)eps;
    if ((double)e < eps)
        e = nextafterf(e, 1.0f);
    float h = (float)(1.0 - eps);
    if ((double)h > 1.0 - eps)
        h = nextafterf(h, 0.0f);
    *lo = e;
    *hi = h;
    *fmax_out = (float)(B - 1.0);
    return 1;
}

static size_t p16_smem(uint32_t nkeys)
{
    return (((size_t)nkeys + 1u) / 2u) * 4u;
}

static int p16_supports_f32(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 && plan->slots > plan->bins && plan->slots < 0x40000000u &&
           p16_smem(plan->slots) <= gpuhist_cuda_smem_optin(ctx);
}

static int p16_supports_u16(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 && p16_smem(65536u) <= gpuhist_cuda_smem_optin(ctx);
}

template <int MODE>
static gpuhist_status p16_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                              void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    if (plan->channels != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16: interleaved channels are not handled");
    p16_params p;
    p.k = gh_make_params(plan, job);
    p.nkeys = MODE == P16_U16 ? 65536u : plan->slots;
    p.fast_ok = 0;
    p.eps_lo = 1.0f;
    p.eps_hi = 0.0f;
    p.fmax = 0.0f;
    if (MODE == P16_F32)
        p.fast_ok = (uint32_t)p16_even_eps(&plan->map, &p.eps_lo, &p.eps_hi, &p.fmax);
    const size_t smem = p16_smem(p.nkeys);
    if (smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16: %zu bytes of shared memory needed", smem);
    auto kernel = p16_kernel<MODE>;
    cudaError_t err;
    const int grid = gh_grid(job, kernel, P16_THREADS, smem, job->elements / P16_U, &err);
    if (grid == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-fast-packed16 configuration");
    const size_t size = MODE == P16_U16 ? 2u : 4u;
    const uint64_t VE = 16u / size;
    return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        const uintptr_t a = (uintptr_t)(job->data + b * size);
        uint64_t vb = b + ((16u - (a & 15u)) & 15u) / size;
        if (vb > e)
            vb = e;
        p16_params q = p;
        q.k.begin = b;
        q.k.end = e;
        kernel<<<grid, P16_THREADS, smem, job->stream>>>(q, vb, (e - vb) / VE,
                                                          (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-packed16 kernel");
        return GPUHIST_OK;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16 = {
    "cuda-fast-packed16",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), DESIGN.md section 5 probe; new: run cache, 0x4000 hand-off",
    "u16/i16, every bin spec (counts the 65536 values, the backend folds them into bins); one "
    "channel",
    "16-bit counters packed two per word in 128 KiB of shared memory, hand-off of 0x4000 to the "
    "global counter, per-thread run-length cache against hot-value contention, 16-byte loads",
    GPUHIST_DTYPE_BIT(GPUHIST_U16) | GPUHIST_DTYPE_BIT(GPUHIST_I16),
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES,
    p16_supports_u16,
    p16_run<P16_U16>,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_f32 = {
    "cuda-fast-packed16-f32",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), DESIGN.md section 5 probe; new: run cache, certified "
    "estimate",
    "f32, even bins while (bins + 3) 16-bit counters fit shared memory (~115k on H100/H200); one "
    "channel",
    "16-bit slot counters packed two per word in shared memory with 0x4000 hand-off, run-length "
    "cache, error-bounded f32 estimate with exact binmap fallback near edges",
    GPUHIST_DTYPE_BIT(GPUHIST_F32),
    GPUHIST_KIND_BIT(GPUHIST_BINS_EVEN),
    0,
    0,
    p16_supports_f32,
    p16_run<P16_F32>,
};
