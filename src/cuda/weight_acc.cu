/*
 * weight_acc.cu - the device weight accumulator's normalisation (weighted.cuh): one thread per
 * record moves each limb's carry into the next (exact_sum.h's gh_xsum_normalize), so limbs
 * 0 .. n-2 end in [0, 2^32) and may take GH_W_DEPOSITS_MAX more deposits. The backend runs it
 * before copying the accumulator to the host, and the weighted strategies before a launch that
 * could overflow a limb (gh_w_reserve).
 *
 * Limits: records of sums (weight_limbs limbs) and of squares (GH_XSUM_LIMBS_F64); each thread
 * walks its record's limbs in order (68 dependent steps for f64): a few microseconds for 256
 * bins, ~1 ms for 2^20 bins of f64 sums and squares.
 */
#include "weighted.cuh"

namespace {

__global__ void k_weight_normalize(long long *__restrict__ acc, uint64_t records, uint32_t words)
{
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < records;
         r += (uint64_t)gridDim.x * blockDim.x)
        gh_xsum_normalize((gh_i64 *)acc + r * words, words - 1u);
}

} /* namespace */

extern "C" gpuhist_status gpuhist_cuda_weight_normalize(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                                        cudaStream_t strm)
{
    if (!plan->weights || !plan->weight_acc)
        return GPUHIST_OK;
    const uint64_t records = (uint64_t)plan->active * plan->slots;
    long long *sums = (long long *)plan->weight_acc;
    const uint32_t sum_words = (uint32_t)GPUHIST_SUM_RECORD(plan);
    const uint64_t blocks = (records + GH_BLOCK - 1) / GH_BLOCK;
    const int grid = (int)(blocks < 1 ? 1 : blocks > 65535u ? 65535u : blocks);
    k_weight_normalize<<<grid, GH_BLOCK, 0, strm>>>(sums, records, sum_words);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "normalise the weight sums");
    if (plan->want_squares) {
        k_weight_normalize<<<grid, GH_BLOCK, 0, strm>>>(sums + records * sum_words, records,
                                                        (uint32_t)GPUHIST_SQUARE_RECORD);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "normalise the sums of squares");
    }
    return GPUHIST_OK;
}
