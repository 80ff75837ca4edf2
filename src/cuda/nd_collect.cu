/*
 * nd_collect.cu - the end of a fused N-D count into device memory (the backend's nd_collect
 * operation; histogramdd.c uses it for a result whose counts are on the device).
 *
 * Mechanism: one grid-stride launch on the context's stream reads the fused count's total + 2
 * counters (ndmap.h's encoding: nan, the joint bins, out; the two-pass count's nan at
 * gh_nd_state.nan_at) and stores or adds (accumulating) the
 * joint bins into the caller's device counts and, when given, nan / out / the points fed into
 * the caller's 4 device tallies (gpuhist_nd_result.device_stats: nan, out, 0, total, the
 * layout of the 1-D count of joint slots). Nothing waits for the device: the counters stay
 * valid until the next fused count begins (same stream, so ordered after this launch).
 * Limits: the caller's buffers must be device memory of the context's device (the core checks);
 * the points fed are passed by value from the host.
 */
#include "nd_device.cuh"

namespace {

__global__ void k_nd_collect(const unsigned long long *__restrict__ counters, uint32_t total,
                             uint32_t nan_at, unsigned long long *__restrict__ counts,
                             unsigned long long *__restrict__ stats, unsigned long long points,
                             int add)
{
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (uint64_t i = first; i < total; i += step)
        counts[i] = (add ? counts[i] : 0ull) + counters[i + 1u];
    if (stats && first == 0) {
        const unsigned long long mine[4] = {counters[nan_at], counters[(uint64_t)total + 1u], 0ull,
                                            points};
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
    if (!s || !s->counters || s->nkeys < 2u)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND, "N-D: no fused count to collect");
    const uint32_t total = s->nkeys - 2u;
    /* the policy's grid is at most 8 blocks per SM: it needs the device's SM count (0 would
     * mean one block for all the joint bins) */
    const int grid =
        gh_fixed_grid(GH_LP_COUNTER_PASS, gpuhist_cuda_sm_count(ctx), total ? total : 1u);
    k_nd_collect<<<grid, GH_BLOCK, 0, gh_nd_stream(ctx)>>>(
        s->counters, total, s->nan_at, (unsigned long long *)counts, (unsigned long long *)stats,
        (unsigned long long)points, add);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: counts into device memory");
    return GPUHIST_OK;
}
