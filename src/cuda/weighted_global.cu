/*
 * weighted_global.cu - cuda-weighted-global: weighted histograms with every counter and every
 * weight limb in global memory, for any bin count (the fallback of cuda-weighted-smem).
 *
 * Mechanism: one thread per pixel (grid-stride); for each histogrammed sample, its slot by
 * binmap.h (f32 EVEN: fast_even.h's certified estimate, the same answer), one 64-bit atomic
 * on its count, and, unless the sample is NaN, the weight's exact_sum.h digits added into the
 * slot's sum record with one 64-bit atomic per non-zero digit (2 for f32 weights, up to 3 for
 * f64), the flags of a non-finite weight OR'ed; with squares, the square's digits into the
 * square record (f32: the exact m^2; f64: hi = w * w and lo = fma(w, w, -hi)). Integer atomics
 * commute, so the limbs, and the rounded sums, are the CPU backend's bits.
 *
 * Limits: every dtype but f16/bf16 (gh_dispatch's; the plan refuses weighted half samples),
 * any bin kind and bin count that fit the 32-bit counter indices, 1-4 channels;
 * unweighted plans count only. A launch takes at most 2^30 pixels (each adds at most 2 deposits
 * to one limb: a square's hi and lo), and the accumulator is normalised before a launch that
 * could pass GH_W_DEPOSITS_MAX (weighted.cuh).
 *
 * Speed: bound by global atomics, 3-4 per f32 sample (count + digits), 6-8 with squares; all
 * samples of one bin serialise on the same addresses in L2. cuda-weighted-smem is preferred
 * wherever its records fit shared memory.
 */
#include "weighted.cuh"
#include "fast_even.h"

namespace {

/* Launches of at most this many pixels (2 deposits per limb each, below GH_W_DEPOSITS_MAX). */
#define WG_MAX_PIXELS (1ull << 30)

typedef gh_wparams wg_params; /* weighted.cuh */

template <typename T, bool FE>
__device__ __forceinline__ uint32_t wg_slot(const wg_params &p, const gpuhist_binmap &m, T x)
{
    if constexpr (FE && std::is_same<T, float>::value)
        return gpuhist_fe_slot_f32(&m, &p.cert, x);
    else
        return gh_slot(&m, p.k.edges, x);
}

template <typename T, int WK, bool MULTI, bool SQ, bool FE>
__global__ void __launch_bounds__(GH_BLOCK) wg_kernel(const __grid_constant__ wg_params p,
                                                      unsigned long long *__restrict__ out)
{
    const gpuhist_binmap m = p.k.map;
    const T *data = (const T *)p.k.data;
    const uint32_t C = MULTI ? p.k.channels : 1u;
    for (uint64_t i = p.pixel_begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
         i < p.pixel_end; i += (uint64_t)gridDim.x * blockDim.x) {
        gh_wsplit w, q, ql;
        if constexpr (WK == GH_WK_F32) {
            w = gh_w_split_f32(((const uint32_t *)p.weights)[i]);
            if (SQ)
                q = gh_w_square_f32(w), ql.r = 0u;
        } else if constexpr (WK == GH_WK_F64) {
            const unsigned long long b = ((const unsigned long long *)p.weights)[i];
            w = gh_w_split_f64(b);
            if (SQ)
                gh_w_square_f64(__longlong_as_double((long long)b), &q, &ql);
        }
        for (uint32_t c = 0; c < C; ++c) {
            const int32_t base = MULTI ? gh_base(p.k, c) : 0;
            if (base < 0)
                continue;
            const T x = data[i * C + c];
            const uint32_t slot = wg_slot<T, FE>(p, m, x);
            const uint32_t counter = (uint32_t)base + slot;
            atomicAdd(out + counter, 1ull);
            if (WK == GH_WK_NONE || slot == p.nan_slot)
                continue;
            unsigned long long *rec = p.sums + (uint64_t)counter * p.sum_words;
            if (w.r == 1u)
                gh_w_add_global(rec, w.m, w.pos, w.neg);
            else if (w.r)
                atomicOr(rec + p.sum_words - 1u, (unsigned long long)w.r);
            if (SQ) {
                unsigned long long *sq = p.squares + (uint64_t)counter * GPUHIST_SQUARE_RECORD;
                if (q.r == 1u)
                    gh_w_add_global(sq, q.m, q.pos, false);
                else if (q.r)
                    atomicOr(sq + GH_XSUM_LIMBS_F64, (unsigned long long)q.r);
                if (ql.r == 1u)
                    gh_w_add_global(sq, ql.m, ql.pos, ql.neg);
            }
        }
    }
}

template <typename T, int WK, bool MULTI, bool SQ>
gpuhist_status wg_launch(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                         wg_params &p, bool fe, unsigned long long *out)
{
    auto kernel = fe ? wg_kernel<T, WK, MULTI, SQ, true> : wg_kernel<T, WK, MULTI, SQ, false>;
    cudaError_t err;
    const int grid = gh_grid(job, kernel, GH_LP_GRID_STRIDE, 0, job->pixels, &err);
    if (!grid)
        return gpuhist_cuda_check(ctx, err, "configure cuda-weighted-global");
    for (uint64_t b = 0; b < job->pixels; b += WG_MAX_PIXELS) {
        const uint64_t e = job->pixels - b > WG_MAX_PIXELS ? b + WG_MAX_PIXELS : job->pixels;
        gpuhist_status st = gh_w_reserve(ctx, plan, job, 2u * (e - b));
        if (st != GPUHIST_OK)
            return st;
        p.pixel_begin = b;
        p.pixel_end = e;
        kernel<<<grid, GH_BLOCK, 0, job->stream>>>(p, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-weighted-global kernel");
    }
    return GPUHIST_OK;
}

/* The kernel for the weight type and squares (runtime) of the plan. */
template <typename T, bool MULTI>
gpuhist_status wg_pick(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                       wg_params &p, bool fe, unsigned long long *out)
{
    if (!plan->weights)
        return wg_launch<T, GH_WK_NONE, MULTI, false>(ctx, plan, job, p, fe, out);
    if (plan->weight_dtype == GPUHIST_F32)
        return plan->want_squares ? wg_launch<T, GH_WK_F32, MULTI, true>(ctx, plan, job, p, fe, out)
                                  : wg_launch<T, GH_WK_F32, MULTI, false>(ctx, plan, job, p, fe, out);
    return plan->want_squares ? wg_launch<T, GH_WK_F64, MULTI, true>(ctx, plan, job, p, fe, out)
                              : wg_launch<T, GH_WK_F64, MULTI, false>(ctx, plan, job, p, fe, out);
}

gpuhist_status wg_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->pixels == 0)
        return GPUHIST_OK;
    if (plan->weights && (!job->weights || !plan->weight_acc))
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "cuda-weighted-global: no device weights or accumulator (internal)");
    wg_params p;
    const bool fe = gh_w_params_of(plan, job, &p);
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        return wg_pick<T, decltype(multi)::value>(ctx, plan, job, p, fe,
                                                  (unsigned long long *)out);
    });
}

} /* namespace */

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_weighted_global = {
    "cuda-weighted-global",
    GPUHIST_BACKEND_CUDA,
    "003 (global atomics), exact sums",
    "every dtype but f16/bf16, all bin kinds, any bins, channels; weights f32/f64",
    "per-sample 64-bit global atomics on the count and on the weight's exact_sum.h digits",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_WEIGHTS,
    gh_counters_fit,
    wg_run,
};
