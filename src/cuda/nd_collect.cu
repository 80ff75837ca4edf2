/*
 * nd_collect.cu - the end of a fused N-D count into device memory (the backend's nd_collect
 * operation; histogramdd.c uses it for a result whose counts are on the device).
 *
 * Mechanism: one grid-stride launch on the context's stream reads the fused count's total + 2
 * counters (ndmap.h's encoding: nan, the joint bins, out; the nan and out words where
 * gh_nd_state says) and stores or adds (accumulating) the
 * joint bins into the caller's device counts and, when given, nan / out / the points fed into
 * the caller's 4 device tallies (gpuhist_nd_result.device_stats: nan, out, 0, total, the
 * layout of the 1-D count of joint slots). A two-pass count made straight into these counts
 * (gh_nd_state.direct) has its joint bins there already: only the tallies are written. Nothing
 * waits for the device: the counters stay valid until the next fused count begins (same
 * stream, so ordered after this launch).
 * Limits: the caller's buffers must be device memory of the context's device (the core checks);
 * the points fed are passed by value from the host.
 */
#include "nd_device.cuh"

namespace {

/* bins: the joint bins to store or add (counters + 1), or NULL (counted in place) */
__global__ void k_nd_collect(const unsigned long long *__restrict__ bins, uint32_t total,
                             const unsigned long long *nan_word,
                             const unsigned long long *out_word,
                             unsigned long long *__restrict__ counts,
                             unsigned long long *__restrict__ stats, unsigned long long points,
                             int add)
{
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (bins)
        for (uint64_t i = first; i < total; i += step)
            counts[i] = (add ? counts[i] : 0ull) + bins[i];
    if (stats && first == 0) {
        const unsigned long long mine[4] = {*nan_word, *out_word, 0ull, points};
        for (int k = 0; k < 4; ++k)
            stats[k] = (add ? stats[k] : 0ull) + mine[k];
    }
}

} /* namespace */

/* See internal.h (nd_collect). */
extern "C" gpuhist_status gpuhist_cuda_nd_collect(gpuhist_ctx *ctx, uint64_t *counts,
                                                  uint64_t *stats, uint64_t points, int add)
{
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(ctx->device), "cudaSetDevice");
    gh_nd_state *s = gh_nd_state_of(ctx);
    if (!s || !(s->counters || s->direct) || s->nkeys < 2u)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND, "N-D: no fused count to collect");
    const uint32_t total = s->nkeys - 2u;
    const int in_place = s->direct && s->direct == (unsigned long long *)counts && !add;
    if (s->direct && !in_place)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "N-D: the counts were counted into another device buffer");
    if (in_place && !stats)
        return GPUHIST_OK;
    /* the policy's grid is at most 8 blocks per SM: it needs the device's SM count (0 would
     * mean one block for all the joint bins) */
    const int grid = in_place ? 1
                              : gh_fixed_grid(GH_LP_COUNTER_PASS, gpuhist_cuda_sm_count(ctx),
                                              total ? total : 1u);
    k_nd_collect<<<grid, GH_BLOCK, 0, gh_nd_stream(ctx)>>>(
        in_place ? NULL : s->counters + 1, total, s->nan_word, s->out_word,
        (unsigned long long *)counts, (unsigned long long *)stats, (unsigned long long)points,
        add);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: counts into device memory");
    return GPUHIST_OK;
}
