/*
 * cuda_internal.cuh - what the CUDA backend (cuda_backend.cuh and its files) and the CUDA
 * strategies share.
 *
 * The backend turns any request into a sequence of *jobs*: contiguous, device-resident,
 * sample-aligned runs of pixels (host input is copied in chunks through pinned staging buffers,
 * strided ROI rows are compacted with cudaMemcpy2DAsync, unaligned device pointers are copied to
 * aligned scratch). A strategy's run() receives one job and ADDS its counts into `out`, a device
 * array of uint64 counters, zeroed by the backend:
 *   - slot strategies:  active * plan->slots counters (bins + 3 per channel, see binmap.h);
 *   - value strategies (GPUHIST_CAP_VALUES): active * 256 (8-bit) or active * 65536 (16-bit)
 *     raw-value counters (f16/bf16: their bit patterns); the backend folds them into slots on
 *     the device (binmap.h's gpuhist_slot_small_value decodes the plan's dtype).
 * Every launch goes on job->stream; strategies never synchronise the device (the backend does
 * when it must), so device-in/device-out calls can be asynchronous.
 */
#ifndef GPUHIST_CUDA_INTERNAL_CUH
#define GPUHIST_CUDA_INTERNAL_CUH

#include "internal.h"
#include "launch_policy.h"

#include <cuda_runtime.h>
#include <stdint.h>

/* Sample types of the strategies that map each sample to its slot themselves (gh_dispatch's
 * types). f16 and bf16 samples are counted by their 65536 bit patterns (the 16-bit value
 * strategies, GPUHIST_CAP_VALUES, folded by the backend) and by cuda-global-atomic (channels). */
#define GPUHIST_CUDA_SLOT_DTYPES                                                               \
    (GPUHIST_ALL_DTYPES & ~(GPUHIST_DTYPE_BIT(GPUHIST_F16) | GPUHIST_DTYPE_BIT(GPUHIST_BF16)))
#define GPUHIST_CUDA_HALF_DTYPES (GPUHIST_DTYPE_BIT(GPUHIST_F16) | GPUHIST_DTYPE_BIT(GPUHIST_BF16))

typedef struct gpuhist_cuda_job {
    const unsigned char *data; /* device pointer, aligned to the sample size (not to 16 bytes) */
    uint64_t pixels;           /* pixels in this job */
    uint64_t elements;         /* pixels * channels samples */
    uint64_t first_pixel;      /* index of the job's first pixel in the whole input (channel
                                  phase is always 0: jobs start on a pixel boundary) */
    const double *edges;       /* device copy of the EDGES array (NULL for other kinds) */
    cudaStream_t stream;
    int device;
    int sm_count;
    int max_threads_per_sm;
    size_t smem_per_block_optin; /* cudaDevAttrMaxSharedMemoryPerBlockOptin */
    size_t smem_per_sm;
    void *scratch;             /* per-context device scratch, for strategies that ask for it */
    size_t scratch_size;
    int blocks_per_sm_cap;     /* most resident blocks per SM a grid-stride kernel should use
                                  (GPUHIST_CUDA_BLOCKS_PER_SM for tuning runs; 0 = default) */
    /* Weighted plans (weighted.cuh): the job's weights, one per pixel (device memory, aligned
     * to the weight size), and the backend's bound on the deposits each limb of the device
     * accumulator (plan->weight_acc) has taken since it was last normalised. */
    const unsigned char *weights;
    uint64_t *weight_deposits;
    /* GPUHIST_CAP_FINISH strategies only (job_of_call): the call's rows as they lie in device
     * memory, and where its counts and tallies go (finish.cuh); NULL for every other job. */
    uint64_t rows, row_length;
    size_t row_stride;
    const struct gh_finish_out *finish;
} gpuhist_cuda_job;

#ifdef __cplusplus
extern "C" {
#endif
/* Grow-on-demand device scratch owned by the context (freed by the backend's close()).
 * Strategies needing temporary device memory (sort-rle, per-block partials) call this; the
 * pointer stays valid until the next call with a larger size. */
gpuhist_status gpuhist_cuda_scratch(gpuhist_ctx *ctx, size_t bytes, void **out);
/* The backend's nd_map / nd_release operations (nd_map.cu; see internal.h). */
gpuhist_status gpuhist_cuda_nd_map(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map,
                                   uint64_t first, uint64_t n, const void **slots);
void gpuhist_cuda_nd_release(gpuhist_ctx *ctx);
gpuhist_status gpuhist_cuda_nd_count(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map,
                                     uint64_t first, uint64_t n, uint64_t *collect);
/* The backend's nd_collect operation (nd_collect.cu; see internal.h). */
gpuhist_status gpuhist_cuda_nd_collect(gpuhist_ctx *ctx, uint64_t *counts, uint64_t *stats,
                                       uint64_t points, int add);

/* Check a CUDA runtime status: on failure record "<what>: <cuda error string>" on ctx and
 * return GPUHIST_ERROR_BACKEND (OUT_OF_MEMORY for cudaErrorMemoryAllocation). */
gpuhist_status gpuhist_cuda_check(gpuhist_ctx *ctx, cudaError_t err, const char *what);

/* Opt-in shared memory per block of the context's device (cudaDevAttrMaxSharedMemoryPerBlockOptin)
 * for supports_fn checks; 48 KiB (the guaranteed minimum) when ctx is NULL or not a CUDA context. */
size_t gpuhist_cuda_smem_optin(const gpuhist_ctx *ctx);
/* Multiprocessors of the CUDA context's device (for launches without a job). */
int gpuhist_cuda_sm_count(const gpuhist_ctx *ctx);
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
/* Resident blocks per SM of `kernel` (a __global__ function) with `block` threads and `smem`
 * bytes of dynamic shared memory on `device`, raising the kernel's dynamic shared-memory limit
 * first when smem exceeds the default 48 KiB. Remembered per (kernel, device, block, smem) for the
 * life of the process, so repeated calls cost no CUDA runtime call (they are on the host path of
 * every histogram, before the kernel can start). */
cudaError_t gpuhist_cuda_blocks_per_sm(const void *kernel, int block, size_t smem, int device,
                                       int *per_sm);
/* Raise the dynamic shared-memory limit of `kernel` on `device` to `smem` when that exceeds
 * 48 KiB, once (remembered as above). */
cudaError_t gpuhist_cuda_smem_limit(const void *kernel, size_t smem, int device);
/* The grid of a launch of `kernel` with `threads` threads and `smem` bytes of dynamic shared
 * memory under policy `p` (launch_policy.h) over `work` items on a device of `sm_count` SMs;
 * `tuned` = GPUHIST_CUDA_BLOCKS_PER_SM (job->blocks_per_sm_cap, 0 unset). Asks the kernel's
 * occupancy (GH_LP_OCCUPANCY) or raises its shared-memory limit, each once.
 * @return the grid, or 0 and the CUDA error in *err. */
int gh_launch_grid(const gh_launch_policy &p, const void *kernel, unsigned threads, size_t smem,
                   int device, int sm_count, int tuned, uint64_t work, cudaError_t *err);
/* The grid of a policy that asks nothing of the runtime (no GH_LP_OCCUPANCY, no shared memory
 * beyond 48 KiB): gh_launch_grid_of with its own block size. */
static inline int gh_fixed_grid(gh_lp_id id, int sm_count, uint64_t work)
{
    const gh_launch_policy p = gh_launch_policy_of(id);
    return (int)gh_launch_grid_of(&p, p.threads, sm_count, 0, 0, work);
}
#endif

/* Check the last launch: use right after every <<<...>>>. */
#define GPUHIST_CUDA_LAUNCH_CHECK(ctx, what)                                                  \
    do {                                                                                      \
        cudaError_t e_ = cudaGetLastError();                                                  \
        if (e_ != cudaSuccess)                                                                \
            return gpuhist_cuda_check((ctx), e_, (what));                                     \
    } while (0)
#define GPUHIST_CUDA_TRY(ctx, call, what)                                                     \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return gpuhist_cuda_check((ctx), e_, (what));                                     \
    } while (0)

#endif
