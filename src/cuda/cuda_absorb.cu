/*
 * cuda_absorb.cu - a histogram of several devices merged on the first: another device's
 * counters added into this one's (one add kernel per counter buffer), read over NVLink / PCIe
 * peer-to-peer where the devices allow it, else copied here first; events order the two
 * devices' streams, so the host never waits.
 */
#include "cuda_backend.cuh"

namespace gh_backend {

/* dst[i] += src[i] */
__global__ void k_add_counters(unsigned long long *__restrict__ dst,
                               const unsigned long long *__restrict__ src, uint64_t n)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        dst[i] += src[i];
}

/* The event of `st`'s device, made on first use. */
gpuhist_status absorb_event_of(gpuhist_ctx *ctx, cuda_state *st)
{
    if (!st->absorb_event) {
        cudaError_t e = cudaEventCreateWithFlags(&st->absorb_event, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            st->absorb_event = NULL;
            return gpuhist_cuda_check(ctx, e, "cudaEventCreate");
        }
    }
    return GPUHIST_OK;
}

/* Add the counters of the histogram open on `from` into this context's: once `from`'s queued
 * work is done (an event waited for on this stream, no host wait), one kernel per counter buffer
 * adds them, reading them where they are when this device has direct access to `from`'s (the
 * same device, or a peer over NVLink / PCIe peer-to-peer), else from a copy made here first
 * (cudaMemcpyPeerAsync, through the host); `from`'s stream then waits for that kernel before it
 * may reuse its counters. Both histograms were begun with the same plan and strategy,
 * so their counter buffers have the same layout. */
gpuhist_status cuda_stream_absorb(gpuhist_ctx *ctx, gpuhist_ctx *from)
{
    cuda_state *st = state_of(ctx);
    cuda_state *fs = state_of(from);
    cuda_run &run = st->run;
    const cuda_run &fr = fs->run;
    if (!run.open || !fr.open || run.values != fr.values || run.use_slots != fr.use_slots ||
        run.slot_bytes != fr.slot_bytes || run.value_bytes != fr.value_bytes)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "cuda: the histograms of two devices do not match (internal)");
    gpuhist_status rc;
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(fs->device), "cudaSetDevice");
    if ((rc = absorb_event_of(ctx, fs)) != GPUHIST_OK)
        return rc;
    GPUHIST_CUDA_TRY(ctx, cudaEventRecord(fs->absorb_event, stream_of(from)),
                     "record the other device's work");
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    if (fs->device != st->device && fs->device < 64 &&
        !(st->peer_checked & (1ull << fs->device))) {
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, st->device, fs->device) == cudaSuccess && can) {
            cudaError_t e = cudaDeviceEnablePeerAccess(fs->device, 0);
            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                return gpuhist_cuda_check(ctx, e, "cudaDeviceEnablePeerAccess");
            st->peer_ok |= 1ull << fs->device;
        }
        (void)cudaGetLastError();
        st->peer_checked |= 1ull << fs->device;
    }
    /* the add kernel reads the other device's counters itself where it may (the same device, or
     * a peer with direct access: NVLink / PCIe peer-to-peer); else they are copied here first */
    const int direct = fs->device == st->device ||
                       (fs->device < 64 && (st->peer_ok & (1ull << fs->device)));
    cudaStream_t strm = stream_of(ctx);
    GPUHIST_CUDA_TRY(ctx, cudaStreamWaitEvent(strm, fs->absorb_event, 0),
                     "wait for the other device's work");
    const size_t most = run.slot_bytes > run.value_bytes ? run.slot_bytes : run.value_bytes;
    if (!direct && (rc = grow_t(ctx, &st->d_absorb, &st->absorb_size, most, 0,
                                "counters of another device")) != GPUHIST_OK)
        return rc;
    struct {
        unsigned long long *dst;
        const unsigned long long *src;
        size_t bytes;
    } bufs[2] = {{st->d_slots, fs->d_slots, run.slot_bytes},
                 {st->d_values, fs->d_values, run.value_bytes}};
    for (int b = 0; b < 2; ++b) {
        if (!bufs[b].bytes)
            continue;
        if (!direct)
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyPeerAsync(st->d_absorb, st->device, bufs[b].src,
                                                 fs->device, bufs[b].bytes, strm),
                             "copy counters from another device");
        const uint64_t n = bufs[b].bytes / sizeof(unsigned long long);
        const int grid = gh_fixed_grid(GH_LP_COUNTER_PASS, st->sm_count, n);
        k_add_counters<<<grid, GH_BLOCK, 0, strm>>>(bufs[b].dst,
                                                    direct ? bufs[b].src : st->d_absorb, n);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "add counters of another device");
    }
    if ((rc = absorb_event_of(ctx, st)) != GPUHIST_OK)
        return rc;
    GPUHIST_CUDA_TRY(ctx, cudaEventRecord(st->absorb_event, strm), "record the copy");
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(fs->device), "cudaSetDevice");
    GPUHIST_CUDA_TRY(ctx, cudaStreamWaitEvent(stream_of(from), st->absorb_event, 0),
                     "order the other device after the copy");
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    return GPUHIST_OK;
}

} /* namespace gh_backend */
