/*
 * one_block.cu - cuda-one-block: a small device-resident request counted and finished by one
 * block in one launch.
 *
 * Why. Below some tens of thousands of samples a call's time is its fixed cost, not reading:
 * the usual path is a count kernel into zeroed global counters, then a finish kernel (outlier
 * policy, counts, tallies), plus a 2-D copy first when the rows of a region are far apart.
 * On an H100 a 64x64 8-bit image took 0.020 ms of device time that way against CUB's 0.012
 * (an init and a sweep kernel; docs/PERFORMANCE.md, "Images"). Here one launch does it all.
 *
 * Mechanism. One block of OB_THREADS threads zeroes active * slots 32-bit counters in shared
 * memory, maps every histogrammed sample of the region to its slot (common.cuh's gh_counter:
 * binmap.h's one bin-mapping definition, as every strategy) and adds 1 with a shared atomic,
 * reading the rows in place (row, row length and row stride in the index arithmetic: no
 * compaction), then writes the counts and tallies (finish.cuh's gh_finish, the same outlier
 * policy as the backend's finish kernels) straight into the result. Nothing global is zeroed
 * before or after, so a call is one launch.
 *
 * Limits (supports): device-resident samples of the slot-mapped types (not f16/bf16), no
 * weights, samples aligned to their size, at most OB_MAX_SAMPLES (2^22) histogrammed samples
 * (32-bit shared counters cannot wrap; one block reads ~4 MB in tens of microseconds, so the
 * auto policy uses it only far below that: registry_cuda.cu), and active * slots counters in
 * the 48 KiB of shared memory a block gets without opting in. Only the backend's one-call path runs it
 * (GPUHIST_CAP_FINISH): a stream's chunks go to the other strategies.
 */
#include "common.cuh"
#include "finish.cuh"

namespace {

#define OB_THREADS 1024
#define OB_MAX_SAMPLES (1u << 22)
#define OB_MAX_COUNTERS 12288u /* 48 KiB of 32-bit counters */

template <typename T>
__global__ void __launch_bounds__(OB_THREADS)
    k_one_block(gh_kparams p, uint32_t rows, uint32_t row_length, size_t row_stride,
                gh_finish_out o)
{
    extern __shared__ unsigned int ob_counts[];
    const uint32_t tid = threadIdx.x;
    for (uint32_t i = tid; i < p.counters; i += OB_THREADS)
        ob_counts[i] = 0u;
    __syncthreads();
    const gpuhist_binmap m = p.map;
    const uint32_t C = p.channels, n = rows * row_length;
    for (uint32_t i = tid; i < n; i += OB_THREADS) {
        const uint32_t r = i / row_length, col = i - r * row_length;
        const T *px = (const T *)(p.data + (size_t)r * row_stride) + (size_t)col * C;
        for (uint32_t c = 0; c < C; ++c) {
            const uint32_t k = gh_counter<T, true>(p, &m, px[c], c);
            if (k != GH_NONE)
                atomicAdd(&ob_counts[k], 1u);
        }
    }
    __syncthreads();
    gh_finish(ob_counts, o, tid, OB_THREADS);
}

int supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    (void)ctx;
    const uint32_t counters = gh_counters_ok(plan);
    return plan->data_on_device && !plan->weights && counters && counters <= OB_MAX_COUNTERS &&
           plan->pixels <= OB_MAX_SAMPLES && plan->pixels * plan->active <= OB_MAX_SAMPLES &&
           (uintptr_t)plan->data % plan->sample_size == 0 &&
           plan->row_stride % plan->sample_size == 0;
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    (void)out; /* the counts and tallies go to job->finish */
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (!job->finish)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-one-block runs only as a whole call (no finish given)");
    gh_kparams p = gh_make_params(plan, job);
    const size_t smem = (size_t)p.counters * sizeof(unsigned int);
    return gh_dispatch(plan, [&](auto tag, auto) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        k_one_block<T><<<1, OB_THREADS, smem, job->stream>>>(
            p, (uint32_t)job->rows, (uint32_t)job->row_length, job->row_stride, *job->finish);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-one-block kernel");
        return GPUHIST_OK;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_one_block = {
    "cuda-one-block",
    GPUHIST_BACKEND_CUDA,
    "002 (privatized shared-memory counters), fused with the finish",
    "device-resident inputs of at most 2^22 samples: every dtype but f16/bf16, all bin kinds, "
    "(bins + 3) x channels <= 12288, 1-4 channels, strided rows read in place; no weights",
    "one block: shared 32-bit counters, then counts and tallies written in the same launch",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI | GPUHIST_CAP_FINISH,
    supports,
    run,
};
