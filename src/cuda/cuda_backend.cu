/*
 * cuda_backend.cu - the CUDA backend: opening a device, its operations table and C entry points.
 *
 * What a call does (execute):
 *   1. the EDGES array (if any) goes to the device once;
 *   2. the input becomes *jobs* (cuda_internal.cuh): device data that is contiguous and aligned to
 *      the sample size is one job, used in place; anything else (host memory, a strided ROI, a
 *      device pointer not aligned to the sample size) is copied chunk by chunk (~256 MiB) into
 *      two device staging buffers: pageable host data through two pinned buffers (host threads
 *      gather chunk i+1 while the device copies and counts chunk i), page-locked contiguous
 *      host data straight from where it is, device data with cudaMemcpy2DAsync; a stream's
 *      lent staging buffers (cuda_stream_buffer) are copied to their own device twins;
 *   3. each job is handed to the strategy, which adds into zeroed 64-bit slot (or raw-value)
 *      counters; value counters are then folded into slots on the device;
 *   4. one small kernel applies the outlier policy, writes the counts where the caller wants
 *      them and the four tallies per channel; host results are copied back and the stream
 *      synchronised, unless the call is asynchronous (device in, device out, ctx->async).
 * Everything runs on ctx->stream, in order, so buffers of the context can be reused from one
 * call to the next without synchronising; growing a buffer synchronises the device first.
 *
 * Exactness at scale: counters are uint64 (atomicAdd on unsigned long long), element indices
 * are 64-bit everywhere, and strategies with 32-bit shared counters bound the samples per block
 * per launch (common.cuh), so > 2^32 samples and > 2^32 counts in one bin are exact.
 */
#include "cuda_backend.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace gh_backend {

gpuhist_status cuda_open(gpuhist_ctx *ctx, int device)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || (e == cudaSuccess && n == 0)) {
        (void)cudaGetLastError();
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE, "cuda: no CUDA-capable device");
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE, "cuda: driver not loaded: %s",
                            cudaGetErrorString(e));
    }
    if (device < 0 || device >= n)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE, "cuda: device %d does not exist (%d %s)",
                            device, n, n == 1 ? "device" : "devices");
    e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE, "cuda: cannot use device %d: %s", device,
                            cudaGetErrorString(e));
    }
    cudaDeviceProp prop;
    GPUHIST_CUDA_TRY(ctx, cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");

    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!st)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "cuda: out of host memory");
    st->device = device;
    st->sm_count = prop.multiProcessorCount;
    st->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    st->smem_optin = prop.sharedMemPerBlockOptin;
    st->smem_per_sm = prop.sharedMemPerMultiprocessor;
    st->max_pitch = prop.memPitch;
    st->chunk_bytes = (size_t)256 << 20;
    /* Testing knob: a small chunk exercises the staging paths with small inputs. */
    const char *env = getenv("GPUHIST_CUDA_CHUNK_BYTES");
    if (env && *env) {
        unsigned long long v = strtoull(env, NULL, 10);
        if (v >= 64)
            st->chunk_bytes = (size_t)v;
    }
    /* Tuning knob for the benchmark's grid sweep (001 §V.B: 2 blocks per SM was best there). */
    env = getenv("GPUHIST_CUDA_BLOCKS_PER_SM");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        if (v >= 1 && v <= 64)
            st->blocks_per_sm_cap = (int)v;
    }
    ctx->backend_state = st;

    gpuhist_status rc = GPUHIST_OK;
    for (int b = 0; b < 2 && rc == GPUHIST_OK; ++b) {
        cudaError_t ee = cudaEventCreateWithFlags(&st->copied[b], cudaEventDisableTiming);
        if (ee != cudaSuccess) {
            st->copied[b] = NULL;
            rc = gpuhist_cuda_check(ctx, ee, "cudaEventCreate");
        }
    }
    size_t have = 0;
    const size_t stats_bytes = 4 * GPUHIST_MAX_CHANNELS * sizeof(unsigned long long);
    if (rc == GPUHIST_OK)
        rc = grow_t(ctx, &st->d_stats, &have, stats_bytes, 0, "tallies");
    have = 0;
    if (rc == GPUHIST_OK)
        rc = grow_t(ctx, &st->h_stats, &have, stats_bytes, 1, "tallies");
    have = 0;
    if (rc == GPUHIST_OK)
        rc = grow_t(ctx, &st->d_minmax, &have, 2 * sizeof(unsigned long long), 0, "min/max");
    have = 0;
    if (rc == GPUHIST_OK)
        rc = grow_t(ctx, &st->h_minmax, &have, 2 * sizeof(unsigned long long), 1, "min/max");
    if (rc != GPUHIST_OK) {
        free_state(st);
        ctx->backend_state = NULL;
        return rc;
    }
    size_t len = strnlen(prop.name, sizeof prop.name);
    if (len >= sizeof ctx->device_name)
        len = sizeof ctx->device_name - 1;
    memcpy(ctx->device_name, prop.name, len);
    ctx->device_name[len] = '\0';
    return GPUHIST_OK;
}

void cuda_close(gpuhist_ctx *ctx)
{
    cuda_state *st = state_of(ctx);
    if (!st)
        return;
    cudaSetDevice(st->device);
    free_state(st);
    ctx->backend_state = NULL;
}

int cuda_is_device_pointer(gpuhist_ctx *ctx, const void *data)
{
    cuda_state *st = state_of(ctx);
    if (!st || !data)
        return 0;
    cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, data);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (a.type == cudaMemoryTypeManaged)
        return 1;
    /* memory of another device is not ours to read with this context's kernels */
    return a.type == cudaMemoryTypeDevice && a.device == st->device;
}

gpuhist_status cuda_host_alloc(gpuhist_ctx *ctx, size_t bytes, void **out)
{
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(state_of(ctx)->device), "cudaSetDevice");
    cudaError_t e = cudaMallocHost(out, bytes);
    if (e != cudaSuccess) {
        *out = NULL;
        return gpuhist_cuda_check(ctx, e, "cudaMallocHost (host_alloc)");
    }
    return GPUHIST_OK;
}

void cuda_host_free(gpuhist_ctx *ctx, void *p)
{
    (void)ctx;
    cudaFreeHost(p);
    (void)cudaGetLastError();
}

gpuhist_status cuda_execute(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_strategy *s,
                            gpuhist_result *result)
{
    gpuhist_status rc = cuda_stream_begin(ctx, plan, s);
    if (rc == GPUHIST_OK)
        rc = cuda_stream_count(ctx, plan, s);
    if (rc == GPUHIST_OK)
        rc = cuda_stream_finish(ctx, plan, s, result);
    if (rc != GPUHIST_OK)
        cuda_stream_abort(ctx);
    return rc;
}

} /* namespace gh_backend */

using namespace gh_backend;

/* ---- C entry points ------------------------------------------------------------------------------ */

extern "C" gpuhist_status gpuhist_cuda_check(gpuhist_ctx *ctx, cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return GPUHIST_OK;
    (void)cudaGetLastError(); /* clear a non-sticky error so the context stays usable */
    return gpuhist_fail(ctx,
                        err == cudaErrorMemoryAllocation ? GPUHIST_ERROR_OUT_OF_MEMORY
                                                         : GPUHIST_ERROR_BACKEND,
                        "cuda: %s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
}

extern "C" gpuhist_status gpuhist_cuda_scratch(gpuhist_ctx *ctx, size_t bytes, void **out)
{
    cuda_state *st = state_of(ctx);
    gpuhist_status rc = grow(ctx, &st->scratch, &st->scratch_size, bytes, 0, "strategy scratch");
    *out = rc == GPUHIST_OK ? st->scratch : NULL;
    return rc;
}

extern "C" size_t gpuhist_cuda_smem_optin(const gpuhist_ctx *ctx)
{
    if (!ctx || ctx->backend != GPUHIST_BACKEND_CUDA || !ctx->backend_state)
        return 48u * 1024u;
    return state_of(ctx)->smem_optin;
}

extern "C" int gpuhist_cuda_sm_count(const gpuhist_ctx *ctx)
{
    return state_of(ctx)->sm_count;
}

extern "C" int gpuhist_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" gpuhist_status gpuhist_cuda_list_devices(char *buf, size_t size)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        if (buf && size) {
            if (e == cudaSuccess || e == cudaErrorNoDevice)
                snprintf(buf, size, "cuda: no CUDA-capable device\n");
            else
                snprintf(buf, size, "cuda: driver not loaded: %s\n", cudaGetErrorString(e));
        }
        return GPUHIST_ERROR_NO_DEVICE;
    }
    size_t used = 0;
    if (buf && size)
        buf[0] = '\0';
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp p;
        if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (buf && used < size) {
            int w = snprintf(buf + used, size - used, "%d: %s (sm_%d%d, %d SMs, %.1f GiB)\n", d,
                             p.name, p.major, p.minor, p.multiProcessorCount,
                             (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
            if (w > 0)
                used += (size_t)w;
        }
    }
    return GPUHIST_OK;
}

extern "C" const gpuhist_backend_ops gpuhist_cuda_backend = {
    GPUHIST_BACKEND_CUDA, cuda_open,    cuda_close,
    cuda_minmax,          &gpuhist_cuda_policy, cuda_execute,
    cuda_is_device_pointer,
    cuda_stream_begin,    cuda_stream_count, cuda_stream_buffer,
    cuda_stream_submit,   cuda_stream_finish, cuda_stream_abort,
    cuda_host_alloc,      cuda_host_free,
    cuda_stream_absorb,   NULL, /* requests: planned here */
    gpuhist_cuda_nd_map,  gpuhist_cuda_nd_release, /* nd_map.cu */
    gpuhist_cuda_nd_count, /* nd_packed16.cu */
    gpuhist_cuda_nd_collect, /* nd_collect.cu */
};
