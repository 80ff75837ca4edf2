/*
 * warp_aggregated.cu - cuda-warp-aggregated: per-block shared slot histogram where each warp
 * issues one shared atomic per *distinct* counter instead of one per sample.
 *
 * Mechanism: every lane computes its sample's counter; __match_any_sync groups the lanes with
 * equal counters, the lowest lane of each group (leader, __ffs) adds the group size (__popc)
 * with one shared atomicAdd. Blocks merge into the global uint64 counters as in
 * cuda-block-shared. Seed 002 (warp-aggregated atomics).
 *
 * Why/when fast: on skewed data (hot bins, constant images, black/white peaks) a warp's 32
 * updates collapse into a handful of atomics, removing the same-address serialisation that
 * makes cuda-block-shared slow there (seed 002's kernels on u8: warp aggregation 708 GB/s on
 * hot90 and 1043 on constant data against 188 for plain shared atomics; docs/PERFORMANCE.md,
 * "Hardware facts the CUDA strategies rely on"). When slow: on spread data every sample still
 * costs one atomic plus the match instruction, which is slower than a bare atomic (130 against
 * 188 GB/s on uniform u8, same section).
 * Limits: 4 * active * (bins + 3) bytes within the opt-in shared memory per block; a block
 * counts at most 2^31 samples per launch (common.cuh). Any dtype, bin kind, 1-4 channels.
 * Seed: 002 (warp aggregation).
 */
#include "common.cuh"

namespace {

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK_BIG, 1)
    k_warp_aggregated(gh_kparams p, unsigned long long *__restrict__ out)
{
    extern __shared__ uint32_t sh[];
    gh_block_zero(sh, p.counters);

    const gpuhist_binmap m = p.map;
    const T *__restrict__ data = (const T *)p.data;
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    /* the loop runs on the warp's first element so that all 32 lanes stay converged for
     * __match_any_sync; lanes past the end vote with GH_NONE */
    uint64_t wbase = p.begin + (uint64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    gh_chan ch;
    if (MULTI)
        ch.init(wbase + lane, stride, p.channels);
    for (; wbase < p.end; wbase += stride) {
        const uint64_t k = wbase + lane;
        uint32_t c = GH_NONE;
        if (k < p.end)
            c = gh_counter<T, MULTI>(p, &m, data[k], MULTI ? ch.ch : 0u);
        const uint32_t peers = __match_any_sync(0xffffffffu, c);
        if (c != GH_NONE && lane == (uint32_t)(__ffs(peers) - 1))
            atomicAdd(&sh[c], (uint32_t)__popc(peers));
        if (MULTI)
            ch.advance();
    }
    gh_block_merge(sh, p.counters, out);
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    return gh_block_run(ctx, plan, jobp, out, "cuda-warp-aggregated", [](auto tag, auto multi) {
        return k_warp_aggregated<typename decltype(tag)::type, decltype(multi)::value>;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_warp_aggregated = {
    "cuda-warp-aggregated",
    GPUHIST_BACKEND_CUDA,
    "002 (warp aggregation)",
    "every dtype but f16/bf16, "
    "all bin kinds, 1-4 channels; 4*(bins+3)*channels bytes within shared memory",
    "__match_any_sync leader election: one shared atomic per distinct counter per warp",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_fits_shared,
    run,
};
