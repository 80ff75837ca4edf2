/*
 * cuda_state.cu - the CUDA backend's buffers: growth on demand (device or page-locked host
 * memory, synchronising the device before a buffer in use is replaced), counters kept zero
 * between calls, and freeing the whole state. Limits: a failed allocation leaves the old buffer
 * freed and reports out of memory; nothing shrinks before the context is closed.
 */
#include "cuda_backend.cuh"

#include <stdlib.h>

namespace gh_backend {

/* Make (*p, *have) at least `need` bytes of device (pinned = 0) or page-locked host memory.
 * The old buffer may still be read by queued work (the strategy of a previous job, an
 * asynchronous previous call, possibly on another stream): synchronise the device first. */
gpuhist_status grow(gpuhist_ctx *ctx, void **p, size_t *have, size_t need, int pinned,
                    const char *what)
{
    if (*p && need <= *have)
        return GPUHIST_OK;
    if (need < 256)
        need = 256;
    need = (need + 4095) & ~(size_t)4095;
    if (*p) {
        GPUHIST_CUDA_TRY(ctx, cudaDeviceSynchronize(), "synchronise before reallocation");
        cudaError_t e = pinned ? cudaFreeHost(*p) : cudaFree(*p);
        *p = NULL;
        *have = 0;
        GPUHIST_CUDA_TRY(ctx, e, "free");
    }
    cudaError_t e = pinned ? cudaMallocHost(p, need) : cudaMalloc(p, need);
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        if (e == cudaErrorMemoryAllocation)
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "cuda: out of %s memory allocating %zu bytes for %s",
                                pinned ? "page-locked host" : "device", need, what);
        return gpuhist_cuda_check(ctx, e, what);
    }
    *have = need;
    return GPUHIST_OK;
}

/* (*p, *size) at least `bytes`, its first `bytes` zero once strm gets there: a memset only when
 * less than that is known to be zero (*zero, kept by cuda_execute; a reallocation knows none). */
gpuhist_status zeroed_counters(gpuhist_ctx *ctx, unsigned long long **p, size_t *size,
                               size_t *zero, size_t bytes, cudaStream_t strm, const char *what)
{
    const size_t had = *size;
    gpuhist_status rc = grow_t(ctx, p, size, bytes, 0, what);
    if (rc != GPUHIST_OK)
        return rc;
    if (*size != had)
        *zero = 0;
    if (*zero < bytes) {
        GPUHIST_CUDA_TRY(ctx, cudaMemsetAsync(*p, 0, bytes, strm), "zero counters");
        *zero = bytes;
    }
    return GPUHIST_OK;
}

void free_state(cuda_state *st)
{
    if (!st)
        return;
    cudaDeviceSynchronize();
    cudaFree(st->scratch);
    for (int b = 0; b < 2; ++b) {
        cudaFreeHost(st->pinned[b]);
        cudaFree(st->stage[b]);
        if (st->copied[b])
            cudaEventDestroy(st->copied[b]);
    }
    for (int b = 0; b < GPUHIST_STREAM_SLOTS; ++b) {
        cudaFreeHost(st->ring_host[b]);
        cudaFree(st->ring_dev[b]);
        if (st->ring_copied[b])
            cudaEventDestroy(st->ring_copied[b]);
    }
    cudaFree(st->d_edges);
    free(st->h_edges);
    cudaFree(st->d_slots);
    cudaFree(st->d_values);
    cudaFree(st->d_counts);
    cudaFree(st->d_stats);
    cudaFreeHost(st->h_stats);
    cudaFree(st->d_minmax);
    cudaFreeHost(st->h_minmax);
    cudaFree(st->d_absorb);
    if (st->absorb_event)
        cudaEventDestroy(st->absorb_event);
    cudaFree(st->d_wacc);
    cudaFreeHost(st->h_wacc);
    for (int b = 0; b < 2; ++b) {
        cudaFreeHost(st->wpinned[b]);
        cudaFree(st->wstage[b]);
        if (st->wcopied[b])
            cudaEventDestroy(st->wcopied[b]);
    }
    (void)cudaGetLastError();
    free(st);
}

} /* namespace gh_backend */
