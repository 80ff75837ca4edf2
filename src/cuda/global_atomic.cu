/*
 * global_atomic.cu - cuda-global-atomic: one 64-bit global atomicAdd per sample.
 *
 * Mechanism: a grid-stride loop maps each sample to its counter (binmap.h) and adds 1 to the
 * uint64 counter in global memory. The baseline of seed 001 §V.A and seed 002's "naive" kernel.
 *
 * Why/when fast: no shared memory, so any number of bins and channels; with many bins and
 * evenly spread data the atomics land on different L2 lines and run at L2 atomic throughput
 * (~400 GB/s for f32 over 2^20 bins on an H200: docs/PERFORMANCE.md, "CUDA (NVIDIA H200)").
 * When slow: every sample is a round trip to L2, and samples of the same counter serialise in
 * the L2 atomic unit: hot or constant data collapses to a few GB/s (same page: 1 GB/s for u8
 * hot90, 5 GB/s at 2^20 bins on constant data).
 * Limits: none beyond the backend's (fewer than 2^32 counters); counts are exact uint64. Every
 * dtype: f16/bf16 samples are loaded as their bit patterns and widened exactly (binmap.h), so
 * half-precision data in several channels, which cuda-fast-packed16 does not take, is counted.
 * Seed: 001 §V.A, 002 (naive).
 */
#include "common.cuh"

namespace {

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK)
    k_global_atomic(gh_kparams p, unsigned long long *__restrict__ out)
{
    const gpuhist_binmap m = p.map;
    const T *__restrict__ data = (const T *)p.data;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t k = p.begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    gh_chan ch;
    if (MULTI)
        ch.init(k, stride, p.channels);
    for (; k < p.end; k += stride) {
        uint32_t c = gh_counter<T, MULTI>(p, &m, data[k], MULTI ? ch.ch : 0u);
        if (c != GH_NONE)
            atomicAdd(&out[c], 1ull);
        if (MULTI)
            ch.advance();
    }
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p = gh_make_params(plan, job);
    auto launch = [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        auto kernel = k_global_atomic<T, decltype(multi)::value>;
        cudaError_t err;
        int grid = gh_grid(job, kernel, GH_LP_GRID_STRIDE, 0, job->elements, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, "configure cuda-global-atomic");
        /* 64-bit counters cannot wrap: one launch for the whole job */
        p.begin = 0;
        p.end = job->elements;
        kernel<<<grid, GH_BLOCK, 0, job->stream>>>(p, (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-global-atomic kernel");
        return GPUHIST_OK;
    };
    /* f16/bf16: each sample's bit pattern widened to float and mapped (the only strategy that
     * takes half-precision samples in several channels). */
    if (GPUHIST_DTYPE_BIT(plan->dtype) & GPUHIST_CUDA_HALF_DTYPES)
        return gh_dispatch_half(plan, launch);
    return gh_dispatch(plan, launch);
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_global_atomic = {
    "cuda-global-atomic",
    GPUHIST_BACKEND_CUDA,
    "001 §V.A, 002 (naive)",
    "all dtypes (f16/bf16 included), all bin kinds, any bins, 1-4 channels",
    "one 64-bit global atomicAdd per sample",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_counters_fit,
    run,
};
