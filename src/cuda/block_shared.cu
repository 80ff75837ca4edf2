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
 * near 8.4 lane-updates per clock per SM even without conflicts (docs/PERFORMANCE.md,
 * "Hardware facts the CUDA strategies rely on").
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
    gh_block_zero(sh, p.counters);

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
    gh_block_merge(sh, p.counters, out);
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    return gh_block_run(ctx, plan, jobp, out, "cuda-block-shared", [](auto tag, auto multi) {
        return k_block_shared<typename decltype(tag)::type, decltype(multi)::value>;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_block_shared = {
    "cuda-block-shared",
    GPUHIST_BACKEND_CUDA,
    "001 §V.B, 002 (privatised)",
    "every dtype but f16/bf16, "
    "all bin kinds, 1-4 channels; 4*(bins+3)*channels bytes within shared memory",
    "per-block shared-memory slot histogram (32-bit), merged with global atomics",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_fits_shared,
    run,
};
