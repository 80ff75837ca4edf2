/*
 * weight_acc.cu - the device weight accumulator's normalisation (weighted.cuh): one thread per
 * record moves each limb's carry into the next (exact_sum.h's gh_xsum_normalize), so limbs
 * 0 .. n-2 end in [0, 2^32) and may take GH_W_DEPOSITS_MAX more deposits. The backend runs it
 * before copying the accumulator to the host, and the weighted strategies before a launch that
 * could overflow a limb (gh_w_reserve).
 *
 * Accumulating calls (result.accumulate with a device weight state): the finish adds each
 * record, normalised, into the caller's state record (limbs added, flags OR'ed) and normalises
 * that, in one launch for the sums and squares together, instead of the normalisation and the
 * copy to the host; the state stays exact on the device across calls.
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

/* Records [0, records) have `words` int64, the `squares` that follow GPUHIST_SQUARE_RECORD: the
 * accumulator's record r, normalised in place (begin zeroes it), is added into the state's record
 * r, which is then normalised. A normalised limb is below 2^32, so neither sum can overflow. */
__global__ void k_weight_accumulate(long long *__restrict__ state, long long *__restrict__ acc,
                                    uint64_t records, uint32_t words, uint64_t squares)
{
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < records + squares;
         r += (uint64_t)gridDim.x * blockDim.x) {
        const bool sq = r >= records;
        const uint32_t w = sq ? (uint32_t)GPUHIST_SQUARE_RECORD : words;
        const uint64_t at = sq ? records * words + (r - records) * w : r * words;
        gh_i64 *a = (gh_i64 *)acc + at, *s = (gh_i64 *)state + at;
        gh_xsum_normalize(a, w - 1u);
        for (uint32_t i = 0; i + 1u < w; ++i)
            s[i] += a[i];
        s[w - 1u] |= a[w - 1u];
        gh_xsum_normalize(s, w - 1u);
    }
}

} /* namespace */

extern "C" gpuhist_status gpuhist_cuda_weight_accumulate(gpuhist_ctx *ctx,
                                                         const gpuhist_plan *plan, void *state,
                                                         int squares, cudaStream_t strm)
{
    const uint64_t records = (uint64_t)plan->active * plan->slots;
    const uint64_t n = records * (squares ? 2u : 1u);
    const uint64_t blocks = (n + GH_BLOCK - 1) / GH_BLOCK;
    const int grid = (int)(blocks < 1 ? 1 : blocks > 65535u ? 65535u : blocks);
    k_weight_accumulate<<<grid, GH_BLOCK, 0, strm>>>(
        (long long *)state, (long long *)plan->weight_acc, records,
        (uint32_t)GPUHIST_SUM_RECORD(plan), squares ? records : 0u);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "add the weight sums into the state");
    return GPUHIST_OK;
}

extern "C" gpuhist_status gpuhist_cuda_weight_normalize(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                                        cudaStream_t strm)
{
    if (!plan->weights || !plan->weight_acc)
        return GPUHIST_OK;
    const uint64_t records = (uint64_t)plan->active * plan->slots;
    long long *sums = (long long *)plan->weight_acc;
    const uint32_t sum_words = (uint32_t)GPUHIST_SUM_RECORD(plan);
    const int grid = gh_fixed_grid(GH_LP_WEIGHT_NORMALIZE, 0, records);
    k_weight_normalize<<<grid, GH_BLOCK, 0, strm>>>(sums, records, sum_words);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "normalise the weight sums");
    if (plan->want_squares) {
        k_weight_normalize<<<grid, GH_BLOCK, 0, strm>>>(sums + records * sum_words, records,
                                                        (uint32_t)GPUHIST_SQUARE_RECORD);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "normalise the sums of squares");
    }
    return GPUHIST_OK;
}
