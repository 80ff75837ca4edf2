/*
 * one_launch.cu - cuda-one-launch: a device-resident call of up to a few million samples counted
 * and finished in one launch.
 *
 * Why. At image sizes a call's time is its fixed cost, not reading: the usual path is a count
 * kernel into zeroed global counters and then a finish kernel (outlier policy, counts,
 * tallies), plus a 2-D copy or a gap kernel when the rows of a region lie apart. On an H100 a
 * 64x64 8-bit image took 0.020 ms of device time that way against CUB's 0.012 (an init and a
 * sweep kernel), and a pitched 1920x1080 frame 0.028 ms against 0.022 (docs/PERFORMANCE.md,
 * "Images"). Here one launch does all of it.
 *
 * Mechanism. Each block of OL_THREADS threads zeroes active * slots 32-bit counters in shared
 * memory and counts its share of the pixels (grid-stride over the region; each pixel's address
 * from its row and column, so pitched rows are read where they lie, no compaction): every
 * histogrammed sample is mapped to its slot by common.cuh's gh_counter (binmap.h's one
 * bin-mapping definition, as every strategy) and added with a shared atomic. A grid of one
 * block then writes the counts and tallies (finish.cuh's gh_finish, the outlier policy of the
 * backend's finish kernels) straight from shared memory. A larger grid adds each block's
 * nonzero counters to the backend's zeroed 64-bit slot counters, and the last block to finish
 * (a device-wide count of finished blocks after a fence, as CUDA's threadFenceReduction sample
 * does) reads every slot counter back while zeroing it (atomicExch), resets the block count and
 * finishes: the counters are left zero, so no call needs a memset, and no second kernel runs.
 *
 * Limits (supports): device-resident samples of the slot-mapped types (not f16/bf16), aligned
 * to their size (rows too), no weights, at most OL_MAX_SAMPLES (2^22) histogrammed samples, so
 * a total fits a 32-bit shared counter; active * slots counters in the 48 KiB of shared memory
 * a block gets without opting in. Only the backend's call path runs it (GPUHIST_CAP_FINISH): a
 * stream is planned as a large input, which it declines. Grid: one block per
 * OL_PIXELS_PER_BLOCK pixels, at most as many as are resident at once (one wave; each flush is
 * active * slots global atomics);
 * each thread loads OL_U pixels before it counts them, so their loads are in flight together.
 */
#include "common.cuh"
#include "finish.cuh"

namespace {

#define OL_THREADS 1024
#define OL_U 4 /* pixels a thread loads before it counts them (loads in flight, not in turn) */
#define OL_PIXELS_PER_BLOCK (OL_THREADS * OL_U)
#define OL_MAX_SAMPLES (1u << 22)
#define OL_MAX_COUNTERS 12288u /* 48 KiB of 32-bit counters */

template <typename T>
__global__ void __launch_bounds__(OL_THREADS)
    k_one_launch(gh_kparams p, uint32_t rows, uint32_t row_length, size_t row_stride,
                 unsigned long long *__restrict__ slots, unsigned int *done, gh_finish_out o)
{
    extern __shared__ unsigned int ol_counts[];
    __shared__ bool last;
    const uint32_t tid = threadIdx.x;
    for (uint32_t i = tid; i < p.counters; i += OL_THREADS)
        ol_counts[i] = 0u;
    __syncthreads();
    const gpuhist_binmap m = p.map;
    const uint32_t C = p.channels, n = rows * row_length, step = gridDim.x * OL_THREADS;
    for (uint32_t i0 = blockIdx.x * OL_THREADS + tid; i0 < n; i0 += OL_U * step) {
        T v[OL_U][GPUHIST_MAX_CHANNELS];
#pragma unroll
        for (uint32_t u = 0; u < OL_U; ++u) {
            const uint32_t i = i0 + u * step;
            if (i < n) {
                const uint32_t r = i / row_length, col = i - r * row_length;
                const T *px = (const T *)(p.data + (size_t)r * row_stride) + (size_t)col * C;
#pragma unroll
                for (uint32_t c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
                    if (c < C)
                        v[u][c] = px[c];
            }
        }
#pragma unroll
        for (uint32_t u = 0; u < OL_U; ++u) {
            if (i0 + u * step >= n)
                break;
#pragma unroll
            for (uint32_t c = 0; c < GPUHIST_MAX_CHANNELS; ++c) {
                if (c >= C)
                    break;
                const uint32_t k = gh_counter<T, true>(p, &m, v[u][c], c);
                if (k != GH_NONE)
                    atomicAdd(&ol_counts[k], 1u);
            }
        }
    }
    __syncthreads();
    if (gridDim.x > 1) {
        for (uint32_t i = tid; i < p.counters; i += OL_THREADS)
            if (ol_counts[i])
                atomicAdd(&slots[i], (unsigned long long)ol_counts[i]);
        __threadfence(); /* this block's additions are seen before it is counted as done */
        __syncthreads();
        if (tid == 0)
            last = atomicAdd(done, 1u) == gridDim.x - 1u;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        for (uint32_t i = tid; i < p.counters; i += OL_THREADS)
            ol_counts[i] = (unsigned int)atomicExch(&slots[i], 0ull);
        if (tid == 0)
            *done = 0u;
        __syncthreads();
    }
    gh_finish(ol_counts, o, tid, OL_THREADS);
}

int supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    (void)ctx;
    const uint32_t counters = gh_counters_ok(plan);
    return plan->data_on_device && !plan->weights && counters && counters <= OL_MAX_COUNTERS &&
           plan->pixels <= OL_MAX_SAMPLES && plan->pixels * plan->active <= OL_MAX_SAMPLES &&
           (uintptr_t)plan->data % plan->sample_size == 0 &&
           plan->row_stride % plan->sample_size == 0;
}

/* `out`: the backend's zeroed slot counters (active * slots) and, after them, the count of
 * finished blocks; both are left zero. */
gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (!job->finish)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-one-launch runs only as a whole call (no finish given)");
    gh_kparams p = gh_make_params(plan, job);
    unsigned long long *slots = (unsigned long long *)out;
    unsigned int *done = (unsigned int *)(slots + p.counters);
    const uint32_t pixels = (uint32_t)(job->rows * job->row_length);
    const size_t smem = (size_t)p.counters * sizeof(unsigned int);
    return gh_dispatch(plan, [&](auto tag, auto) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        /* one block per OL_PIXELS_PER_BLOCK pixels, no more than are resident at once */
        int per_sm = 0;
        cudaError_t err = gpuhist_cuda_blocks_per_sm((const void *)k_one_launch<T>, OL_THREADS,
                                                     smem, job->device, &per_sm);
        if (err != cudaSuccess)
            return gpuhist_cuda_check(ctx, err, "configure cuda-one-launch");
        uint32_t grid = (pixels + OL_PIXELS_PER_BLOCK - 1u) / OL_PIXELS_PER_BLOCK;
        const uint32_t cap = (uint32_t)(per_sm > 0 ? per_sm : 1) *
                             (uint32_t)(job->sm_count > 0 ? job->sm_count : 1);
        grid = grid < 1u ? 1u : grid > cap ? cap : grid;
        k_one_launch<T><<<grid, OL_THREADS, smem, job->stream>>>(
            p, (uint32_t)job->rows, (uint32_t)job->row_length, job->row_stride, slots, done,
            *job->finish);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-one-launch kernel");
        return GPUHIST_OK;
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_one_launch = {
    "cuda-one-launch",
    GPUHIST_BACKEND_CUDA,
    "002 (privatized shared-memory counters), the finish in the same launch",
    "device-resident calls only (no host data, no streams) of at most 2^22 samples; the "
    "slot-mapped types (not f16/bf16), all bin kinds, (bins + 3) x channels <= 12288, 1-4 "
    "channels, strided rows read in place; no weights",
    "per-block shared 32-bit counters; the last block finishes: counts and tallies in one launch",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI | GPUHIST_CAP_FINISH,
    supports,
    run,
};
