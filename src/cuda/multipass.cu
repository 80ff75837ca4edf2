/*
 * multipass.cu - cuda-multipass: histograms larger than shared memory, one shared-memory-sized
 * window of counters per pass over the data.
 *
 * Mechanism: the active * (bins + 3) counters are cut into windows of W counters, W = the
 * opt-in shared memory per block / 4. Pass j launches a privatised kernel (as
 * cuda-block-shared) that maps every sample to its counter and counts it only if it falls in
 * window j; blocks merge their window into the global uint64 counters. Seed 002 ("process bins
 * in chunks that fit in shared memory").
 *
 * Why/when fast: each pass is a bandwidth-bound read with cheap shared atomics, and skewed
 * data does not hurt more than in cuda-block-shared (a hot counter lives in one window).
 * When slow: the input is read and every sample mapped once per window: ceil(counters / W)
 * passes (W ~ 58k counters on H100/H200: 2^20 bins = 19 passes). Host input (staged in
 * chunks) is reread from the device staging buffer, not copied again.
 * Limits: fewer than 2^32 counters; a block counts at most 2^31 samples per launch
 * (common.cuh). Any dtype, bin kind, 1-4 channels.
 * Seed: 002 (multi-pass / chunked bins).
 */
#include "common.cuh"

namespace {

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK_BIG, 1)
    k_multipass(gh_kparams p, uint32_t lo, uint32_t width, unsigned long long *__restrict__ out)
{
    extern __shared__ uint32_t sh[];
    for (uint32_t i = threadIdx.x; i < width; i += blockDim.x)
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
        /* unsigned: c < lo wraps to a huge value; GH_NONE - lo >= counters - lo >= width */
        uint32_t r = c - lo;
        if (r < width)
            atomicAdd(&sh[r], 1u);
        if (MULTI)
            ch.advance();
    }
    __syncthreads();

    for (uint32_t i = threadIdx.x; i < width; i += blockDim.x) {
        uint32_t v = sh[i];
        if (v)
            atomicAdd(&out[(uint64_t)lo + i], (unsigned long long)v);
    }
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p = gh_make_params(plan, job);
    uint32_t window = (uint32_t)(job->smem_per_block_optin / sizeof(uint32_t));
    if (window > p.counters)
        window = p.counters;
    if (window == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND, "cuda-multipass: no shared memory");
    const size_t smem = (size_t)window * sizeof(uint32_t);
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        auto kernel = k_multipass<T, decltype(multi)::value>;
        cudaError_t err;
        const int block = gh_block_of(GH_LP_BLOCK_SHARED, smem);
        int grid = gh_grid(job, kernel, GH_LP_BLOCK_SHARED, smem, job->elements, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, "configure cuda-multipass");
        for (uint64_t lo64 = 0; lo64 < p.counters; lo64 += window) {
            const uint32_t lo = (uint32_t)lo64;
            const uint32_t width = p.counters - lo < window ? p.counters - lo : window;
            gpuhist_status st =
                gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
                    p.begin = b;
                    p.end = e;
                    kernel<<<grid, block, smem, job->stream>>>(p, lo, width,
                                                                  (unsigned long long *)out);
                    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-multipass kernel");
                    return GPUHIST_OK;
                });
            if (st != GPUHIST_OK)
                return st;
        }
        return GPUHIST_OK;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_multipass = {
    "cuda-multipass",
    GPUHIST_BACKEND_CUDA,
    "002 (bins in shared-memory-sized chunks)",
    "every dtype but f16/bf16, all bin kinds, any bins, 1-4 channels",
    "one pass over the data per shared-memory window of counters",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_counters_fit,
    run,
};
