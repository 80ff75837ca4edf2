/*
 * block_shared.cu - cuda-block-shared: a private slot histogram per block in shared memory,
 * merged into the global uint64 counters with one atomic per non-zero counter per block.
 *
 * Mechanism: each block zeroes active * (bins + 3) 32-bit counters in shared memory, runs a
 * grid-stride loop adding 1 per sample with a shared-memory atomic, then adds its non-zero
 * counters into global memory. Seed 001 §V.B (privatisation) and seed 002's first kernel.
 *
 * Why/when fast: shared atomics are an order of magnitude cheaper than L2 ones, and the merge
 * costs one global atomic per counter per block. The grid is sized from the SM count (as many
 * blocks as fit, at most GH_BLOCKS_PER_SM_CAP per SM; 001 found 2 x SMs best on its GPU: the
 * benchmark measures it). When slow: same-address shared atomics serialise, so hot/constant
 * data runs at the rate of one lane per clock per SM; large histograms leave room for fewer
 * resident blocks (occupancy) and lengthen the zero/merge phases; Hopper caps shared atomics
 * near 8.4 lane-updates per clock per SM even without conflicts (DESIGN.md §5).
 * Limits: 4 * active * (bins + 3) bytes must fit the opt-in shared memory per block (227 KiB on
 * H100/H200: ~58k counters); each block counts at most 2^31 samples per launch so the 32-bit
 * counters cannot wrap (common.cuh). Any dtype, bin kind and 1-4 channels.
 * Seed: 001 §V.B, 002 (privatised).
 */
#include "common.cuh"

namespace {

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK_BIG, 1)
    k_block_shared(gh_kparams p, unsigned long long *__restrict__ out)
{
    extern __shared__ uint32_t sh[];
    for (uint32_t i = threadIdx.x; i < p.counters; i += blockDim.x)
        sh[i] = 0u;
    __syncthreads();

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
            atomicAdd(&sh[c], 1u);
        if (MULTI)
            ch.advance();
    }
    __syncthreads();

    for (uint32_t i = threadIdx.x; i < p.counters; i += blockDim.x) {
        uint32_t v = sh[i];
        if (v)
            atomicAdd(&out[i], (unsigned long long)v);
    }
}

int supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return gh_fits_shared(ctx, plan);
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p = gh_make_params(plan, job);
    const size_t smem = (size_t)p.counters * sizeof(uint32_t);
    if (smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-block-shared: %zu bytes of counters exceed shared memory (%zu)",
                            smem, job->smem_per_block_optin);
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        auto kernel = k_block_shared<T, decltype(multi)::value>;
        cudaError_t err;
        const int block = gh_block_for_smem(smem);
        int grid = gh_grid(job, kernel, block, smem, job->elements, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, "configure cuda-block-shared");
        return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
            p.begin = b;
            p.end = e;
            kernel<<<grid, block, smem, job->stream>>>(p, (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-block-shared kernel");
            return GPUHIST_OK;
        });
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_block_shared = {
    "cuda-block-shared",
    GPUHIST_BACKEND_CUDA,
    "001 §V.B, 002 (privatised)",
    "all dtypes, all bin kinds, 1-4 channels; 4*(bins+3)*channels bytes within shared memory",
    "per-block shared-memory slot histogram (32-bit), merged with global atomics",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    supports,
    run,
};
