/*
 * thread_registers.cu - cuda-thread-registers: per-thread counters in registers for histograms
 * of up to 32 bins, reduced with warp shuffles; no atomics while counting.
 *
 * Mechanism: each thread keeps NS 32-bit counters (NS >= bins + 3: the bins plus underflow,
 * overflow and NaN) in registers. A register cannot be indexed by a run-time value (the
 * compiler would move the array to local memory), so each sample adds (slot == j) to every
 * counter j of a fully unrolled loop: NS compare-and-adds per sample, no memory traffic. At the
 * end the warp sums each counter with __shfl_down_sync, lane 0 adds the warp's sums into
 * 64-bit shared counters, and the block adds those to the global counters. Seed 002
 * ("per-thread counters in registers, best for 8-32 bins").
 *
 * Why/when fast: independent of the data distribution (no atomics, so a constant image costs
 * the same as noise), and nothing in shared memory. When slow: the NS compare-adds are ALU work
 * per sample (~2 * NS instructions): fine for 8-bit data where memory delivers few bytes per
 * sample-operation, a bottleneck for wide types at high bin counts (to be measured).
 * Limits: bins <= 32 (NS = 8, 16, 24 or 35 counters, chosen from the bins), one channel only
 * (no GPUHIST_CAP_CHANNELS); each thread counts at most 2^26 samples per launch so that a warp
 * sum (32 threads) stays below 2^31.
 * Seed: 002 (thread-private register counters + warp-shuffle reduction).
 */
#include "common.cuh"

namespace {

/* Samples one thread may count per launch: 32 lanes x 2^26 < 2^32 for the warp sums. */
#define TR_MAX_PER_THREAD (1ull << 26)

template <typename T, int NS>
__global__ void __launch_bounds__(GH_BLOCK, 2)
    k_thread_registers(gh_kparams p, unsigned long long *__restrict__ out)
{
    __shared__ unsigned long long block_sum[NS];
    for (uint32_t i = threadIdx.x; i < NS; i += blockDim.x)
        block_sum[i] = 0ull;
    __syncthreads();

    uint32_t cnt[NS];
#pragma unroll
    for (int j = 0; j < NS; ++j)
        cnt[j] = 0u;

    const gpuhist_binmap m = p.map;
    const T *__restrict__ data = (const T *)p.data;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = p.begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < p.end;
         k += stride) {
        const uint32_t s = gh_slot(&m, p.edges, data[k]);
#pragma unroll
        for (int j = 0; j < NS; ++j)
            cnt[j] += s == (uint32_t)j ? 1u : 0u;
    }

#pragma unroll
    for (int j = 0; j < NS; ++j) {
        uint32_t v = cnt[j];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if ((threadIdx.x & 31u) == 0 && v)
            atomicAdd(&block_sum[j], (unsigned long long)v);
    }
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < p.slots; i += blockDim.x) {
        unsigned long long v = block_sum[i];
        if (v)
            atomicAdd(&out[i], v);
    }
}

int supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    (void)ctx;
    return plan->channels == 1 && plan->active == 1 && plan->slots <= 35u;
}

template <typename T, int NS>
gpuhist_status launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, gh_kparams &p, void *out)
{
    auto kernel = k_thread_registers<T, NS>;
    cudaError_t err;
    int grid = gh_grid(job, kernel, GH_LP_GRID_STRIDE, 0, job->elements, &err);
    if (!grid)
        return gpuhist_cuda_check(ctx, err, "configure cuda-thread-registers");
    const uint64_t max_per_launch = (uint64_t)grid * GH_BLOCK * TR_MAX_PER_THREAD;
    return gh_segments_max(job->elements, max_per_launch,
                           [&](uint64_t b, uint64_t e) -> gpuhist_status {
                               p.begin = b;
                               p.end = e;
                               kernel<<<grid, GH_BLOCK, 0, job->stream>>>(
                                   p, (unsigned long long *)out);
                               GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-thread-registers kernel");
                               return GPUHIST_OK;
                           });
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    if (!supports(ctx, plan))
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-thread-registers: one channel and at most 32 bins");
    gh_kparams p = gh_make_params(plan, job);
    return gh_dispatch(plan, [&](auto tag, auto) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        if (plan->slots <= 8u)
            return launch<T, 8>(ctx, job, p, out);
        if (plan->slots <= 16u)
            return launch<T, 16>(ctx, job, p, out);
        if (plan->slots <= 24u)
            return launch<T, 24>(ctx, job, p, out);
        return launch<T, 35>(ctx, job, p, out);
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_thread_registers = {
    "cuda-thread-registers",
    GPUHIST_BACKEND_CUDA,
    "002 (register counters, warp-shuffle reduction)",
    "every dtype but f16/bf16, all bin kinds, bins <= 32, one channel",
    "per-thread register counters (compare-and-add), warp-shuffle reduction; no atomics",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    32,
    0,
    supports,
    run,
};
