/*
 * cuda_backend.cu - the CUDA backend: device, buffers, jobs, fold and finish.
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
#include "common.cuh"
#include "weighted.cuh"

#include <mutex>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GH_SIGN64 0x8000000000000000ull

namespace {

/* What begin() decided for the histogram in progress, for count() and finish(). */
struct cuda_run {
    int open;
    int values;       /* the strategy counts raw 8/16-bit values */
    uint32_t V;       /* 256 / 65536 values, or 0 */
    int small, use_slots;
    size_t slot_bytes, value_bytes; /* of the counters in use (d_slots / d_values) */
    void *out;        /* the counters the strategy adds into */
    size_t slots_zero_after, values_zero_after;
    uint64_t weight_deposits; /* weighted: bound on any limb's deposits since normalised */
};

struct cuda_state {
    int device;
    int sm_count, max_threads_per_sm;
    size_t smem_optin, smem_per_sm;
    size_t max_pitch;
    size_t chunk_bytes; /* bytes per staged chunk */
    int blocks_per_sm_cap; /* 0 = GH_BLOCKS_PER_SM_CAP */

    void *scratch;
    size_t scratch_size;
    unsigned char *pinned[2]; /* host staging (page-locked) */
    size_t pinned_size[2];
    unsigned char *stage[2]; /* device staging */
    size_t stage_size[2];
    cudaEvent_t copied[2]; /* pinned[b] may be refilled once copied[b] has completed */
    unsigned next_pinned;  /* which of the pair the next chunk uses */
    int copy_pending[2];
    double *d_edges;
    size_t edges_size;
    unsigned long long *d_slots;
    size_t slots_size;
    size_t slots_zero;  /* leading bytes of d_slots known to be zero for the next call */
    unsigned long long *d_values;
    size_t values_size;
    size_t values_zero; /* the same for d_values */
    cudaStream_t last_stream; /* stream of the previous call's work (see cuda_execute) */
    int called;               /* a call has enqueued work */
    unsigned long long *d_counts; /* counts on the device before a copy to host */
    size_t counts_size;
    unsigned long long *d_stats; /* 4 per channel: underflow, overflow, nan, total */
    unsigned long long *h_stats; /* pinned */
    unsigned long long *d_minmax; /* 2 ordered keys */
    unsigned long long *h_minmax; /* pinned */
    cuda_run run;                 /* the histogram in progress */
    /* zero-copy staging lent to a stream: page-locked host buffer, its device twin, and an
     * event marking the end of the copy that last read it */
    unsigned char *ring_host[GPUHIST_STREAM_SLOTS];
    size_t ring_host_size[GPUHIST_STREAM_SLOTS];
    unsigned char *ring_dev[GPUHIST_STREAM_SLOTS];
    size_t ring_dev_size[GPUHIST_STREAM_SLOTS];
    cudaEvent_t ring_copied[GPUHIST_STREAM_SLOTS];
    int ring_pending[GPUHIST_STREAM_SLOTS];
    /* adding another device's counters (cuda_stream_absorb): their copy on this device, an
     * event ordering the two devices' streams, and which peers were asked for direct access */
    unsigned long long *d_absorb;
    size_t absorb_size;
    cudaEvent_t absorb_event;
    uint64_t peer_checked, peer_ok; /* devices asked for direct access / that granted it */
    /* weighted histograms (weighted.cuh): the exact accumulator on the device and its host
     * copy, and the weights of staged chunks (device buffers, page-locked host buffers and the
     * events of their copies, as for the samples) */
    long long *d_wacc, *h_wacc;
    size_t wacc_size, h_wacc_size;
    unsigned char *wpinned[2], *wstage[2];
    size_t wpinned_size[2], wstage_size[2];
    cudaEvent_t wcopied[2];
    int wcopy_pending[2];
};

inline cuda_state *state_of(const gpuhist_ctx *ctx)
{
    return (cuda_state *)ctx->backend_state;
}
inline cudaStream_t stream_of(const gpuhist_ctx *ctx)
{
    return (cudaStream_t)ctx->stream;
}

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

template <typename P> gpuhist_status grow_t(gpuhist_ctx *ctx, P **p, size_t *have, size_t need,
                                            int pinned, const char *what)
{
    void *v = *p;
    gpuhist_status st = grow(ctx, &v, have, need, pinned, what);
    *p = (P *)v;
    return st;
}

/* gpuhist_cuda_blocks_per_sm's memory: small tables, searched linearly (a process uses a few
 * dozen kernel configurations at most); when full, results are simply not remembered. The
 * dynamic shared-memory limit of a kernel is only ever raised (a remembered configuration must
 * stay launchable after a later one asked for less). */
struct occupancy_entry {
    const void *kernel;
    int device, block, per_sm;
    size_t smem;
};
struct smem_limit_entry {
    const void *kernel;
    int device;
    size_t limit;
};
static occupancy_entry g_occupancy[256];
static int g_occupancy_n;
static smem_limit_entry g_smem_limit[128];
static int g_smem_limit_n;
static std::mutex g_occupancy_lock;

} /* namespace */

cudaError_t gpuhist_cuda_blocks_per_sm(const void *kernel, int block, size_t smem, int device,
                                       int *per_sm)
{
    std::lock_guard<std::mutex> guard(g_occupancy_lock);
    for (int i = 0; i < g_occupancy_n; ++i) {
        const occupancy_entry &e = g_occupancy[i];
        if (e.kernel == kernel && e.device == device && e.block == block && e.smem == smem) {
            *per_sm = e.per_sm;
            return cudaSuccess;
        }
    }
    bool remember = true; /* false: the limit is not tracked, so set it again next time */
    if (smem > 48u * 1024u) {
        smem_limit_entry *lim = NULL;
        for (int i = 0; i < g_smem_limit_n && !lim; ++i)
            if (g_smem_limit[i].kernel == kernel && g_smem_limit[i].device == device)
                lim = &g_smem_limit[i];
        if (!lim || lim->limit < smem) {
            cudaError_t e = cudaFuncSetAttribute(
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess)
                return e;
            if (lim)
                lim->limit = smem;
            else if (g_smem_limit_n < (int)(sizeof g_smem_limit / sizeof g_smem_limit[0]))
                g_smem_limit[g_smem_limit_n++] = smem_limit_entry{kernel, device, smem};
            else
                remember = false;
        }
    }
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem);
    if (e != cudaSuccess)
        return e;
    *per_sm = n;
    if (remember && g_occupancy_n < (int)(sizeof g_occupancy / sizeof g_occupancy[0]))
        g_occupancy[g_occupancy_n++] = occupancy_entry{kernel, device, block, n, smem};
    return cudaSuccess;
}

namespace {

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

/* ---- jobs -------------------------------------------------------------------------------------- */

/* Host gather of pixels [p0, p0 + n) into dst (contiguous, as the job layout wants). */
/* Pageable data is copied into page-locked staging by several threads: one thread's memcpy
 * (6-11 GB/s) is far slower than the copy engine reads page-locked memory (~54 GB/s on PCIe 5).
 * Pieces of at least 8 MiB, at most 8 threads; a thread that cannot start leaves its piece to
 * the caller (gpuhist_fork_join). */
struct copy_piece {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
};

void *copy_piece_run(void *arg)
{
    const copy_piece *c = (const copy_piece *)arg;
    memcpy(c->dst, c->src, c->bytes);
    return NULL;
}

void copy_to_staging(unsigned char *dst, const unsigned char *src, size_t bytes)
{
    enum { MAX_COPIERS = 8 };
    const size_t min_piece = (size_t)8 << 20;
    static const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = bytes / min_piece;
    if (n > MAX_COPIERS)
        n = MAX_COPIERS;
    if (cores > 0 && n > (size_t)cores)
        n = (size_t)cores;
    if (n < 2) {
        memcpy(dst, src, bytes);
        return;
    }
    const size_t per = (bytes / n + 4095) & ~(size_t)4095;
    copy_piece piece[MAX_COPIERS];
    for (size_t i = 0; i < n; ++i) {
        const size_t at = i * per < bytes ? i * per : bytes;
        piece[i] = copy_piece{dst + at, src + at, bytes - at < per ? bytes - at : per};
    }
    gpuhist_fork_join(piece, sizeof piece[0], (int)n, copy_piece_run);
}

void gather_host(const gpuhist_plan *plan, uint64_t p0, uint64_t n, unsigned char *dst)
{
    const size_t pb = (size_t)plan->channels * plan->sample_size;
    if (plan->contiguous) {
        copy_to_staging(dst, plan->data + p0 * pb, (size_t)(n * pb));
        return;
    }
    uint64_t row = p0 / plan->row_length, col = p0 % plan->row_length;
    while (n) {
        uint64_t take = plan->row_length - col < n ? plan->row_length - col : n;
        memcpy(dst, gpuhist_pixel_ptr(plan, row, col), (size_t)(take * pb));
        dst += take * pb;
        n -= take;
        ++row;
        col = 0;
    }
}

/* Device gather of pixels [p0, p0 + n) into dst: whole rows with one cudaMemcpy2DAsync (rows
 * one by one when the stride exceeds the device's maximum pitch), partial rows 1-D. */
gpuhist_status gather_device(gpuhist_ctx *ctx, const gpuhist_plan *plan, uint64_t p0, uint64_t n,
                             unsigned char *dst)
{
    cuda_state *st = state_of(ctx);
    cudaStream_t s = stream_of(ctx);
    const size_t pb = (size_t)plan->channels * plan->sample_size;
    if (plan->contiguous) {
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(dst, plan->data + p0 * pb, (size_t)(n * pb),
                                         cudaMemcpyDeviceToDevice, s),
                         "copy input to aligned staging");
        return GPUHIST_OK;
    }
    const uint64_t rl = plan->row_length;
    const size_t row_bytes = (size_t)(rl * pb);
    uint64_t row = p0 / rl, col = p0 % rl;
    while (n) {
        if (col == 0 && n >= rl) {
            uint64_t nrows = n / rl;
            if (plan->row_stride <= st->max_pitch && row_bytes <= st->max_pitch) {
                GPUHIST_CUDA_TRY(ctx,
                                 cudaMemcpy2DAsync(dst, row_bytes, gpuhist_pixel_ptr(plan, row, 0),
                                                   plan->row_stride, row_bytes, (size_t)nrows,
                                                   cudaMemcpyDeviceToDevice, s),
                                 "compact ROI rows");
            } else {
                for (uint64_t r = 0; r < nrows; ++r)
                    GPUHIST_CUDA_TRY(ctx,
                                     cudaMemcpyAsync(dst + r * row_bytes,
                                                     gpuhist_pixel_ptr(plan, row + r, 0), row_bytes,
                                                     cudaMemcpyDeviceToDevice, s),
                                     "compact ROI row");
            }
            dst += nrows * row_bytes;
            n -= nrows * rl;
            row += nrows;
            continue;
        }
        uint64_t take = rl - col < n ? rl - col : n;
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(dst, gpuhist_pixel_ptr(plan, row, col), (size_t)(take * pb),
                                         cudaMemcpyDeviceToDevice, s),
                         "compact ROI row part");
        dst += take * pb;
        n -= take;
        ++row;
        col = 0;
    }
    return GPUHIST_OK;
}

/* Is `p` page-locked host memory (cudaMallocHost, cudaHostRegister)? */
int host_page_locked(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

/* Weighted plans: the weights of pixels [p0, p0 + n) beside the job's samples. Device weights
 * aligned to their size are read where they are; others are copied into device buffer b
 * (pageable host weights through page-locked buffer b, multi-threaded as the samples are;
 * page-locked ones straight, and *locked is set: the caller waits for that copy). */
gpuhist_status stage_weights(gpuhist_ctx *ctx, const gpuhist_plan *plan, uint64_t p0, uint64_t n,
                             int b, gpuhist_cuda_job *job, int *locked)
{
    cuda_state *st = state_of(ctx);
    const size_t ws = gpuhist_dtype_size(plan->weight_dtype);
    const unsigned char *src = plan->weights + p0 * ws;
    const size_t bytes = (size_t)(n * ws);
    /* the weights live where the samples do: a kernel must not read host memory, nor the host
     * device memory */
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, src) != cudaSuccess) {
        (void)cudaGetLastError();
        a.type = cudaMemoryTypeUnregistered;
    }
    const int on_device = a.type == cudaMemoryTypeManaged ||
                          (a.type == cudaMemoryTypeDevice && a.device == st->device);
    if (on_device != plan->data_on_device)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.weights: in %s, but the samples are in %s memory (the "
                            "weights must be in the same memory)",
                            a.type == cudaMemoryTypeManaged  ? "managed memory"
                            : a.type != cudaMemoryTypeDevice ? "host memory"
                            : a.device == st->device        ? "device memory"
                                                             : "another device's memory",
                            plan->data_on_device ? "device" : "host");
    if (plan->data_on_device && (uintptr_t)src % ws == 0) {
        job->weights = src;
        return GPUHIST_OK;
    }
    gpuhist_status rc;
    if ((rc = grow_t(ctx, &st->wstage[b], &st->wstage_size[b], bytes, 0, "device weights")) !=
        GPUHIST_OK)
        return rc;
    job->weights = st->wstage[b];
    if (plan->data_on_device || a.type == cudaMemoryTypeHost) {
        *locked |= !plan->data_on_device;
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(st->wstage[b], src, bytes, cudaMemcpyDefault, job->stream),
                         "copy weights to the device");
        return GPUHIST_OK;
    }
    if (!st->wcopied[b]) {
        cudaError_t e = cudaEventCreateWithFlags(&st->wcopied[b], cudaEventDisableTiming);
        if (e != cudaSuccess) {
            st->wcopied[b] = NULL;
            return gpuhist_cuda_check(ctx, e, "cudaEventCreate");
        }
    }
    if (st->wcopy_pending[b]) {
        GPUHIST_CUDA_TRY(ctx, cudaEventSynchronize(st->wcopied[b]), "wait for weight staging");
        st->wcopy_pending[b] = 0;
    }
    if ((rc = grow_t(ctx, &st->wpinned[b], &st->wpinned_size[b], bytes, 1, "host weights")) !=
        GPUHIST_OK)
        return rc;
    copy_to_staging(st->wpinned[b], src, bytes);
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->wstage[b], st->wpinned[b], bytes, cudaMemcpyHostToDevice,
                                     job->stream),
                     "copy weights to the device");
    GPUHIST_CUDA_TRY(ctx, cudaEventRecord(st->wcopied[b], job->stream), "record weight copy");
    st->wcopy_pending[b] = 1;
    return GPUHIST_OK;
}

/* Call f(job) for each job of the input (see the file comment). *copied_from_locked (when
 * given) says whether page-locked host data was copied straight from where it is: those copies
 * may still be running when this returns. */
template <class F>
gpuhist_status for_each_job(gpuhist_ctx *ctx, const gpuhist_plan *plan, F &&f,
                            int *copied_from_locked = nullptr)
{
    if (copied_from_locked)
        *copied_from_locked = 0;
    cuda_state *st = state_of(ctx);
    gpuhist_cuda_job job;
    memset(&job, 0, sizeof job);
    job.edges = plan->map.kind == GH_KIND_EDGES ? st->d_edges : NULL;
    job.stream = stream_of(ctx);
    job.device = st->device;
    job.sm_count = st->sm_count;
    job.max_threads_per_sm = st->max_threads_per_sm;
    job.smem_per_block_optin = st->smem_optin;
    job.smem_per_sm = st->smem_per_sm;
    job.blocks_per_sm_cap = st->blocks_per_sm_cap;
    job.weight_deposits = &st->run.weight_deposits;
    if (plan->pixels == 0)
        return GPUHIST_OK;
    int wlocked = 0; /* page-locked host weights copied from where they are */

    const size_t pb = (size_t)plan->channels * plan->sample_size;
    if (plan->data_on_device && plan->contiguous &&
        (uintptr_t)plan->data % plan->sample_size == 0) {
        job.data = plan->data;
        job.pixels = plan->pixels;
        job.elements = plan->pixels * plan->channels;
        job.first_pixel = 0;
        job.scratch = st->scratch;
        job.scratch_size = st->scratch_size;
        gpuhist_status wrc = GPUHIST_OK;
        if (plan->weights)
            wrc = stage_weights(ctx, plan, 0, plan->pixels, 0, &job, &wlocked);
        return wrc == GPUHIST_OK ? f(job) : wrc;
    }

    uint64_t chunk_px = st->chunk_bytes / pb;
    if (chunk_px < 1)
        chunk_px = 1;
    if (chunk_px > plan->pixels)
        chunk_px = plan->pixels;
    const size_t chunk_bytes = (size_t)(chunk_px * pb);
    gpuhist_status rc;
    const int host_locked = !plan->data_on_device && plan->contiguous &&
                            host_page_locked(plan->data);
    if (copied_from_locked)
        *copied_from_locked = host_locked;
    for (int b = 0; b < 2; ++b) {
        if ((rc = grow_t(ctx, &st->stage[b], &st->stage_size[b], chunk_bytes, 0,
                         "device staging")) != GPUHIST_OK)
            return rc;
        if (!plan->data_on_device && !host_locked &&
            (rc = grow_t(ctx, &st->pinned[b], &st->pinned_size[b], chunk_bytes, 1,
                         "host staging")) != GPUHIST_OK)
            return rc;
    }

    /* The pinned pair alternates across calls too, so a stream's next chunk is gathered while
     * the previous one is still being copied. */
    for (uint64_t p0 = 0; p0 < plan->pixels; p0 += chunk_px) {
        const int b = (int)(st->next_pinned++ & 1u);
        const uint64_t n = plan->pixels - p0 < chunk_px ? plan->pixels - p0 : chunk_px;
        if (plan->data_on_device) {
            if ((rc = gather_device(ctx, plan, p0, n, st->stage[b])) != GPUHIST_OK)
                return rc;
        } else if (host_locked) {
            /* page-locked already: the copy engine reads it directly */
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(st->stage[b], plan->data + p0 * pb, (size_t)(n * pb),
                                             cudaMemcpyHostToDevice, job.stream),
                             "copy input chunk to device");
        } else {
            if (st->copy_pending[b]) {
                GPUHIST_CUDA_TRY(ctx, cudaEventSynchronize(st->copied[b]), "wait for staging");
                st->copy_pending[b] = 0;
            }
            gather_host(plan, p0, n, st->pinned[b]);
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(st->stage[b], st->pinned[b], (size_t)(n * pb),
                                             cudaMemcpyHostToDevice, job.stream),
                             "copy input chunk to device");
            GPUHIST_CUDA_TRY(ctx, cudaEventRecord(st->copied[b], job.stream), "record copy");
            st->copy_pending[b] = 1;
        }
        job.data = st->stage[b];
        job.pixels = n;
        job.elements = n * plan->channels;
        job.first_pixel = p0;
        job.scratch = st->scratch;
        job.scratch_size = st->scratch_size;
        if (plan->weights && (rc = stage_weights(ctx, plan, p0, n, b, &job, &wlocked)) != GPUHIST_OK)
            return rc;
        if (copied_from_locked)
            *copied_from_locked |= wlocked;
        if ((rc = f(job)) != GPUHIST_OK)
            return rc;
    }
    return GPUHIST_OK;
}

/* ---- kernels of the backend ---------------------------------------------------------------------- */

/* Fold raw-value counters (active * V) into slot counters (active * S), zeroing each value
 * counter as it is read (its one reader) so the next call needs no memset of them. */
__global__ void k_fold_values(unsigned long long *__restrict__ values, uint32_t V,
                              uint32_t active, gpuhist_binmap m, const double *edges, uint32_t S,
                              unsigned long long *__restrict__ slots)
{
    const uint64_t n = (uint64_t)active * V;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        unsigned long long c = values[i];
        if (c) {
            values[i] = 0;
            uint32_t h = (uint32_t)(i / V), v = (uint32_t)(i % V);
            uint32_t s = gpuhist_slot_small_value(&m, edges, v);
            atomicAdd(&slots[(uint64_t)h * S + s], c);
        }
    }
}

/* Where the finish writes: counts (active * bins), the tallies (4 per channel: underflow,
 * overflow, nan, total) and optionally the caller's device copy of them. */
struct gh_finish_out {
    unsigned long long *counts;
    unsigned long long *stats;
    unsigned long long *user_stats;
    unsigned long long pixels;
    uint32_t S, bins, active;
    int clamp;
};

/* Outlier policy, counts and tallies from slot counters `slots` (global or shared memory), by
 * the threads [first, first + nthreads) of the grid. */
__device__ __forceinline__ void gh_finish(const unsigned long long *slots, const gh_finish_out &o,
                                          uint64_t first, uint64_t nthreads)
{
    const uint32_t bins = o.bins, S = o.S;
    const uint64_t n = (uint64_t)o.active * bins;
    for (uint64_t i = first; i < n; i += nthreads) {
        uint32_t h = (uint32_t)(i / bins), b = (uint32_t)(i % bins);
        const unsigned long long *sl = slots + (uint64_t)h * S;
        unsigned long long v = sl[b];
        if (o.clamp) {
            if (b == 0)
                v += sl[GPUHIST_SLOT_UNDERFLOW(bins)];
            if (b == bins - 1u)
                v += sl[GPUHIST_SLOT_OVERFLOW(bins)];
        }
        o.counts[i] = v;
    }
    if (first < o.active) {
        const uint32_t h = (uint32_t)first;
        const unsigned long long *sl = slots + (uint64_t)h * S;
        unsigned long long t[4] = {sl[GPUHIST_SLOT_UNDERFLOW(bins)], sl[GPUHIST_SLOT_OVERFLOW(bins)],
                                   sl[GPUHIST_SLOT_NAN(bins)], o.pixels};
        for (int j = 0; j < 4; ++j) {
            o.stats[4 * h + j] = t[j];
            if (o.user_stats)
                o.user_stats[4 * h + j] = t[j];
        }
    }
}

__global__ void k_finish(const unsigned long long *__restrict__ slots, gh_finish_out o)
{
    gh_finish(slots, o, (uint64_t)blockIdx.x * blockDim.x + threadIdx.x,
              (uint64_t)gridDim.x * blockDim.x);
}

/* Small histograms (active * S <= GH_SMALL_SLOTS): fold (values != NULL: active * V raw-value
 * counters) or copy the counters into shared memory, zeroing the global ones as they are read
 * (so the next call needs no memset), then finish: one block, one launch instead of a memset,
 * a fold and a finish. Every counter is read and zeroed by the one thread that owns it.
 * 6144 x 8 bytes is the 48 KiB of static shared memory a block may have: 4096 bins + 3 slots. */
#define GH_SMALL_SLOTS 6144u
#define GH_SMALL_THREADS 1024
__global__ void __launch_bounds__(GH_SMALL_THREADS)
    k_finish_small(unsigned long long *__restrict__ slots, unsigned long long *__restrict__ values,
                   uint32_t V, gpuhist_binmap m, const double *edges, gh_finish_out o)
{
    __shared__ unsigned long long sl[GH_SMALL_SLOTS];
    const uint32_t ns = o.active * o.S, tid = threadIdx.x;
    if (values) {
        for (uint32_t i = tid; i < ns; i += GH_SMALL_THREADS)
            sl[i] = 0;
        __syncthreads();
        for (uint32_t i = tid; i < o.active * V; i += GH_SMALL_THREADS) {
            const unsigned long long c = values[i];
            if (c) {
                values[i] = 0;
                const uint32_t h = i / V, v = i % V;
                atomicAdd(&sl[h * o.S + gpuhist_slot_small_value(&m, edges, v)], c);
            }
        }
    } else {
        for (uint32_t i = tid; i < ns; i += GH_SMALL_THREADS) {
            sl[i] = slots[i];
            slots[i] = 0;
        }
    }
    __syncthreads();
    gh_finish(sl, o, tid, GH_SMALL_THREADS);
}

/* Order-preserving 64-bit keys: min/max of keys = min/max of values, exactly. Integers stay
 * integers (a 64-bit value is converted to double only at the very end, as the CPU does);
 * floats are widened to double (exact; f16/bf16 through float) and -0.0 is taken as +0.0. */
__device__ __forceinline__ bool gh_mm_key(int64_t x, unsigned long long *k)
{
    *k = (unsigned long long)x ^ GH_SIGN64;
    return true;
}
__device__ __forceinline__ bool gh_mm_key(uint64_t x, unsigned long long *k)
{
    *k = x;
    return true;
}
__device__ __forceinline__ bool gh_mm_key(double d, unsigned long long *k)
{
    if (!isfinite(d))
        return false;
    if (d == 0.0)
        d = 0.0;
    unsigned long long b = (unsigned long long)__double_as_longlong(d);
    *k = (b & GH_SIGN64) ? ~b : (b | GH_SIGN64);
    return true;
}
template <typename T> __device__ __forceinline__ bool gh_mm_key_of(T x, unsigned long long *k)
{
    if constexpr (std::is_same<T, gh_f16>::value)
        return gh_mm_key((double)gpuhist_f16_to_f32(x.bits), k);
    else if constexpr (std::is_same<T, gh_bf16>::value)
        return gh_mm_key((double)gpuhist_bf16_to_f32(x.bits), k);
    else if constexpr (std::is_floating_point<T>::value)
        return gh_mm_key((double)x, k);
    else if constexpr (std::is_signed<T>::value)
        return gh_mm_key((int64_t)x, k);
    else
        return gh_mm_key((uint64_t)x, k);
}

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK) k_minmax(gh_kparams p, unsigned long long *mm)
{
    const T *data = (const T *)p.data;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t k = p.begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    gh_chan ch;
    if (MULTI)
        ch.init(k, stride, p.channels);
    unsigned long long lo = ~0ull, hi = 0ull, key;
    for (; k < p.end; k += stride) {
        if (!MULTI || gh_base(p, ch.ch) >= 0) {
            if (gh_mm_key_of<T>(data[k], &key)) {
                lo = key < lo ? key : lo;
                hi = key > hi ? key : hi;
            }
        }
        if (MULTI)
            ch.advance();
    }
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long l2 = __shfl_xor_sync(0xffffffffu, lo, o);
        unsigned long long h2 = __shfl_xor_sync(0xffffffffu, hi, o);
        lo = l2 < lo ? l2 : lo;
        hi = h2 > hi ? h2 : hi;
    }
    /* lo <= hi iff the warp saw a finite value */
    if ((threadIdx.x & 31u) == 0 && lo <= hi) {
        atomicMin(&mm[0], lo);
        atomicMax(&mm[1], hi);
    }
}

/* Key back to a double; 64-bit integers round down for the minimum and up for the maximum so
 * every sample stays inside the auto range (internal.h). */
static double decode_key(gpuhist_dtype dt, unsigned long long k, int round_up)
{
    switch (dt) {
    case GPUHIST_F32:
    case GPUHIST_F64:
    case GPUHIST_F16:
    case GPUHIST_BF16: {
        unsigned long long b = (k & GH_SIGN64) ? (k & ~GH_SIGN64) : ~k;
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    case GPUHIST_I8:
    case GPUHIST_I16:
    case GPUHIST_I32:
    case GPUHIST_I64: {
        int64_t v = (int64_t)(k ^ GH_SIGN64);
        return round_up ? gpuhist_i64_to_double_up(v) : gpuhist_i64_to_double_down(v);
    }
    default:
        return round_up ? gpuhist_u64_to_double_up(k) : gpuhist_u64_to_double_down(k);
    }
}

/* ---- backend ops ----------------------------------------------------------------------------------- */

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

gpuhist_status cuda_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo, double *hi,
                           int *found)
{
    cuda_state *st = state_of(ctx);
    cudaStream_t s = stream_of(ctx);
    *found = 0;
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    st->h_minmax[0] = ~0ull;
    st->h_minmax[1] = 0ull;
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->d_minmax, st->h_minmax, 2 * sizeof(unsigned long long),
                                     cudaMemcpyHostToDevice, s),
                     "initialise min/max");
    gpuhist_plan unweighted = *plan; /* the range needs no weights staged */
    unweighted.weights = NULL;
    gpuhist_status rc = for_each_job(ctx, &unweighted, [&](const gpuhist_cuda_job &job) {
        gh_kparams p = gh_make_params(plan, &job);
        auto launch = [&](auto tag, auto multi) -> gpuhist_status {
            typedef typename decltype(tag)::type T;
            auto kernel = k_minmax<T, decltype(multi)::value>;
            cudaError_t err;
            int grid = gh_grid(&job, kernel, GH_BLOCK, 0, job.elements, &err);
            if (!grid)
                return gpuhist_cuda_check(ctx, err, "configure minmax kernel");
            kernel<<<grid, GH_BLOCK, 0, job.stream>>>(p, st->d_minmax);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "minmax kernel");
            return GPUHIST_OK;
        };
        /* f16/bf16: bit patterns widened exactly to float, then keyed as any float */
        if (GPUHIST_DTYPE_BIT(plan->dtype) & GPUHIST_CUDA_HALF_DTYPES)
            return gh_dispatch_half(plan, launch);
        return gh_dispatch(plan, launch);
    });
    if (rc != GPUHIST_OK)
        return rc;
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->h_minmax, st->d_minmax, 2 * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, s),
                     "read min/max");
    GPUHIST_CUDA_TRY(ctx, cudaStreamSynchronize(s), "minmax");
    if (st->h_minmax[0] <= st->h_minmax[1]) {
        *found = 1;
        *lo = decode_key(plan->dtype, st->h_minmax[0], 0);
        *hi = decode_key(plan->dtype, st->h_minmax[1], 1);
    }
    return GPUHIST_OK;
}

/* ---- a histogram in progress: begin, count chunks, finish (execute = all three) ----------------- */

/* Start: edges to the device, zeroed counters. The counters stay the context's until finish. */
gpuhist_status cuda_stream_begin(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                 const gpuhist_strategy *s)
{
    cuda_state *st = state_of(ctx);
    cudaStream_t strm = stream_of(ctx);
    gpuhist_status rc;
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");

    const uint32_t counters = gh_counters_ok(plan);
    if (!counters)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda: %u bins x %u channels is more than 2^32 counters", plan->bins,
                            plan->active);
    cuda_run &run = st->run;
    run.values = (s->caps & GPUHIST_CAP_VALUES) != 0;
    run.V = run.values ? gpuhist_small_value_count(plan->dtype) : 0;
    if (run.values && run.V == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s counts raw values of 8/16-bit types only", s->name);

    /* edges: once per histogram */
    if (plan->map.kind == GH_KIND_EDGES) {
        const size_t eb = ((size_t)plan->bins + 1u) * sizeof(double);
        if ((rc = grow_t(ctx, &st->d_edges, &st->edges_size, eb, 0, "edges")) != GPUHIST_OK)
            return rc;
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(st->d_edges, plan->edges, eb, cudaMemcpyHostToDevice,
                                         strm),
                         "copy edges to device");
    }

    /* Counters: zeroed before the strategy runs. The finish kernels zero what they read (every
     * value counter; the slot counters too when one block finishes a small histogram), so in
     * steady state no memset is needed: slots_zero / values_zero track the zero prefix. Work of a
     * previous call on another stream may still use them: a change of stream waits for the
     * device once. */
    if (st->called && strm != st->last_stream) {
        GPUHIST_CUDA_TRY(ctx, cudaDeviceSynchronize(), "wait for the previous stream's work");
        st->slots_zero = st->values_zero = 0;
    }
    st->last_stream = strm;
    st->called = 1;
    const size_t slot_bytes = (size_t)counters * sizeof(unsigned long long);
    const size_t vb = run.values ? (size_t)plan->active * run.V * sizeof(unsigned long long) : 0;
    run.small = counters <= GH_SMALL_SLOTS &&
                (!run.values || plan->active * run.V <= GH_SMALL_SLOTS);
    run.use_slots = !(run.small && run.values); /* the small fold never touches d_slots */
    run.slot_bytes = run.use_slots ? slot_bytes : 0;
    run.value_bytes = vb;
    if (run.use_slots &&
        (rc = zeroed_counters(ctx, &st->d_slots, &st->slots_size, &st->slots_zero, slot_bytes,
                              strm, "slot counters")) != GPUHIST_OK)
        return rc;
    run.out = st->d_slots;
    if (run.values) {
        if ((rc = zeroed_counters(ctx, &st->d_values, &st->values_size, &st->values_zero, vb,
                                  strm, "value counters")) != GPUHIST_OK)
            return rc;
        run.out = st->d_values;
    }
    /* until the finish is enqueued, the counters this histogram uses are not zero */
    run.slots_zero_after = st->slots_zero;
    run.values_zero_after = st->values_zero;
    if (run.use_slots)
        st->slots_zero = 0;
    if (run.values)
        st->values_zero = 0;
    /* weighted: the exact accumulator (weighted.cuh), zeroed */
    const size_t wbytes = gpuhist_weight_acc_words(plan) * sizeof(long long);
    run.weight_deposits = 0;
    if (wbytes) {
        if ((rc = grow_t(ctx, &st->d_wacc, &st->wacc_size, wbytes, 0, "weight sums")) !=
            GPUHIST_OK)
            return rc;
        GPUHIST_CUDA_TRY(ctx, cudaMemsetAsync(st->d_wacc, 0, wbytes, strm), "zero weight sums");
    }
    run.open = 1;
    return GPUHIST_OK;
}

/* A strided region of device memory (an image with a row pitch) whose gaps between rows hold
 * whole pixels and are small is counted in place as one span, from its first pixel to its
 * last, gaps included, and the gaps' pixels are then taken back (k_uncount_gaps), instead of
 * compacting the region with a 2-D copy first: a gap of at most a quarter of the row stride
 * costs at most a third more reading, the copy three passes. The gaps lie inside the caller's
 * image (between its rows), so they may be read. Counts are exact (uint64 counters, every
 * increment of a gap pixel matched by one decrement). */
/* Counters k_uncount_gaps may total in shared memory (32-bit each, within the 48 KB a launch
 * gets without opting in). */
#define GH_UNCOUNT_LOCAL 12288u

struct gap_span {
    gpuhist_plan span;   /* the region as one contiguous run of pixels */
    uint64_t gap_rows;   /* rows followed by a gap (all but the last) */
    uint32_t gap_pixels; /* pixels of one gap */
    size_t row_bytes;
};

bool gap_span_of(const gpuhist_plan *plan, gap_span *g)
{
    const size_t pb = (size_t)plan->channels * plan->sample_size;
    const size_t row_bytes = (size_t)plan->row_length * pb;
    if (!plan->data_on_device || plan->contiguous || plan->rows < 2 || plan->weights ||
        plan->row_stride <= row_bytes || (uintptr_t)plan->data % plan->sample_size != 0)
        return false;
    const size_t gap = plan->row_stride - row_bytes;
    if (gap % pb != 0 || gap > plan->row_stride / 4u || gap / pb > 0xFFFFFFFFu)
        return false;
    g->span = *plan;
    g->span.pixels = ((plan->rows - 1u) * plan->row_stride + row_bytes) / pb;
    g->span.rows = 1;
    g->span.row_length = g->span.pixels;
    g->span.row_stride = (size_t)(g->span.pixels * pb);
    g->span.contiguous = 1;
    g->gap_rows = plan->rows - 1u;
    g->gap_pixels = (uint32_t)(gap / pb);
    g->row_bytes = row_bytes;
    return true;
}

/* One decrement for each histogrammed sample of the gaps, into the counters the strategy
 * added them to: raw-value counters (V = 256 / 65536: histogram k's value v at k * V + v) or
 * slot counters (p.base[c] + the slot of binmap.h, as every strategy maps it). With `local`
 * nonzero (every counter index is below it and `local` 32-bit counters fit shared memory) a
 * block first gathers its decrements in shared memory and takes each counter's total back with
 * one global atomic: gap bytes are often all one value (zero padding), and a global atomic per
 * gap sample on one address would serialise. */
template <typename T>
__global__ void k_uncount_gaps(const unsigned char *__restrict__ first, size_t stride,
                               size_t row_bytes, uint64_t gap_rows, uint32_t gap_pixels,
                               gh_kparams p, uint32_t V, uint32_t local,
                               unsigned long long *out)
{
    extern __shared__ unsigned int taken[];
    for (uint32_t i = threadIdx.x; i < local; i += blockDim.x)
        taken[i] = 0;
    if (local)
        __syncthreads();
    const uint64_t n = gap_rows * gap_pixels;
    const size_t pb = (size_t)p.channels * sizeof(T);
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const unsigned char *px = first + (i / gap_pixels) * stride + row_bytes +
                                  (size_t)(i % gap_pixels) * pb;
        for (uint32_t c = 0; c < p.channels; ++c) {
            if (p.base[c] < 0)
                continue;
            T x;
            memcpy(&x, px + c * sizeof(T), sizeof(T));
            uint64_t at;
            if (V) {
                uint32_t raw = 0;
                memcpy(&raw, &x, sizeof(T) < 4 ? sizeof(T) : 4);
                at = (uint64_t)((uint32_t)p.base[c] / p.slots) * V + raw;
            } else {
                at = (uint64_t)(uint32_t)p.base[c] + gh_slot(&p.map, p.edges, x);
            }
            if (local)
                atomicAdd(&taken[at], 1u);
            else
                atomicAdd(out + at, ~0ull); /* - 1 (mod 2^64) */
        }
    }
    if (!local)
        return;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < local; i += blockDim.x)
        if (taken[i])
            atomicAdd(out + i, 0ull - (unsigned long long)taken[i]);
}

/* Add a chunk (host or device memory, any layout) to the counters. */
gpuhist_status cuda_stream_count(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                 const gpuhist_strategy *s)
{
    cuda_state *st = state_of(ctx);
    /* a context of several devices calls its devices from one thread in turn */
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    void *out = st->run.out;
    int from_locked = 0;
    gap_span g;
    const bool in_place = gap_span_of(chunk, &g);
    gpuhist_plan acc = in_place ? g.span : *chunk;
    acc.weight_acc = chunk->weights ? st->d_wacc : NULL; /* weighted: the device accumulator */
    const gpuhist_plan *use = &acc;
    gpuhist_status rc = for_each_job(
        ctx, use, [&](const gpuhist_cuda_job &job) { return s->run(ctx, use, &job, out); },
        &from_locked);
    if (rc == GPUHIST_OK && in_place) {
        gpuhist_cuda_job job;
        memset(&job, 0, sizeof job);
        job.data = chunk->data;
        job.edges = chunk->map.kind == GH_KIND_EDGES ? st->d_edges : NULL;
        const gh_kparams p = gh_make_params(chunk, &job);
        const uint64_t n = g.gap_rows * g.gap_pixels;
        const uint32_t V = st->run.values ? st->run.V : 0u;
        /* counters the gaps can touch: every histogram's raw values, or every active slot */
        const uint64_t touched = (uint64_t)chunk->active * (V ? V : chunk->slots);
        const uint32_t local = touched <= GH_UNCOUNT_LOCAL ? (uint32_t)touched : 0u;
        /* shared-memory totals are flushed once per block: few blocks, each with many pixels */
        const uint64_t per_block = local ? (uint64_t)GH_BLOCK * 16u : GH_BLOCK;
        const uint64_t blocks = (n + per_block - 1) / per_block;
        const uint64_t cap = (uint64_t)st->sm_count * (local ? 2u : 8u);
        const int grid = (int)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
        rc = gh_dispatch(chunk, [&](auto tag, auto) -> gpuhist_status {
            typedef typename decltype(tag)::type T;
            k_uncount_gaps<T><<<grid, GH_BLOCK, local * sizeof(unsigned int), stream_of(ctx)>>>(
                chunk->data, chunk->row_stride, g.row_bytes, g.gap_rows, g.gap_pixels, p, V,
                local, (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "take back the gaps of a strided region");
            return GPUHIST_OK;
        });
    }
    /* Page-locked host data is copied from where it is, asynchronously: the caller may reuse
     * it once the call returns, so wait for the copies. */
    if (rc == GPUHIST_OK && from_locked)
        GPUHIST_CUDA_TRY(ctx, cudaStreamSynchronize(stream_of(ctx)), "copy input");
    return rc;
}

/* Staging buffer `slot` for zero-copy feeding: page-locked, and no longer read by an earlier
 * copy. Its device twin is sized with it. */
gpuhist_status cuda_stream_buffer(gpuhist_ctx *ctx, int slot, size_t bytes, void **buf)
{
    cuda_state *st = state_of(ctx);
    /* a context of several devices calls its devices from one thread in turn */
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    gpuhist_status rc;
    if (st->ring_pending[slot]) {
        GPUHIST_CUDA_TRY(ctx, cudaEventSynchronize(st->ring_copied[slot]), "wait for staging");
        st->ring_pending[slot] = 0;
    }
    if ((rc = grow_t(ctx, &st->ring_host[slot], &st->ring_host_size[slot], bytes, 1,
                     "host staging")) != GPUHIST_OK ||
        (rc = grow_t(ctx, &st->ring_dev[slot], &st->ring_dev_size[slot], bytes, 0,
                     "device staging")) != GPUHIST_OK)
        return rc;
    *buf = st->ring_host[slot];
    return GPUHIST_OK;
}

/* Copy staging buffer `slot` to its device twin and count it there, both queued on the stream:
 * the call returns at once, and the buffer may be lent again once its copy is done. */
gpuhist_status cuda_stream_submit(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                  const gpuhist_strategy *s, int slot)
{
    cuda_state *st = state_of(ctx);
    cudaStream_t strm = stream_of(ctx);
    const size_t bytes = (size_t)(chunk->pixels * chunk->channels * chunk->sample_size);
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    if (!st->ring_copied[slot]) {
        cudaError_t e = cudaEventCreateWithFlags(&st->ring_copied[slot], cudaEventDisableTiming);
        if (e != cudaSuccess) {
            st->ring_copied[slot] = NULL;
            return gpuhist_cuda_check(ctx, e, "cudaEventCreate");
        }
    }
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->ring_dev[slot], st->ring_host[slot], bytes,
                                     cudaMemcpyHostToDevice, strm),
                     "copy input chunk to device");
    GPUHIST_CUDA_TRY(ctx, cudaEventRecord(st->ring_copied[slot], strm), "record copy");
    st->ring_pending[slot] = 1;
    gpuhist_plan dev = *chunk;
    dev.data = st->ring_dev[slot];
    dev.data_on_device = 1;
    return cuda_stream_count(ctx, &dev, s);
}

/* Fold, outlier policy, counts and tallies where the caller wants them. */
gpuhist_status cuda_stream_finish(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_strategy *s, gpuhist_result *result)
{
    (void)s;
    cuda_state *st = state_of(ctx);
    cudaStream_t strm = stream_of(ctx);
    gpuhist_status rc;
    cuda_run &run = st->run;
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    const int values = run.values;
    const uint32_t V = run.V;

    const double *d_edges = plan->map.kind == GH_KIND_EDGES ? st->d_edges : NULL;
    const int device_counts = result->counts_location == GPUHIST_MEMORY_DEVICE;
    const uint64_t ncounts = (uint64_t)plan->active * plan->bins;
    const size_t count_bytes = (size_t)ncounts * sizeof(unsigned long long);
    unsigned long long *counts_dst = (unsigned long long *)result->counts;
    if (!device_counts) {
        if ((rc = grow_t(ctx, &st->d_counts, &st->counts_size, count_bytes, 0, "counts")) !=
            GPUHIST_OK)
            return rc;
        counts_dst = st->d_counts;
    }
    gh_finish_out fo;
    fo.counts = counts_dst;
    fo.stats = st->d_stats;
    fo.user_stats = (unsigned long long *)result->device_stats;
    fo.pixels = (unsigned long long)plan->pixels;
    fo.S = plan->slots;
    fo.bins = plan->bins;
    fo.active = plan->active;
    fo.clamp = plan->outliers == GPUHIST_OUTLIERS_CLAMP;
    if (run.small) {
        k_finish_small<<<1, GH_SMALL_THREADS, 0, strm>>>(
            st->d_slots, values ? st->d_values : NULL, V, plan->map, d_edges, fo);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "finish counts");
        st->slots_zero = run.slots_zero_after; /* read and zeroed (or not touched) */
    } else {
        if (values) {
            uint64_t n = (uint64_t)plan->active * V;
            int grid = (int)((n + GH_BLOCK - 1) / GH_BLOCK);
            k_fold_values<<<grid, GH_BLOCK, 0, strm>>>(st->d_values, V, plan->active, plan->map,
                                                       d_edges, plan->slots, st->d_slots);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "fold values into slots");
        }
        uint64_t blocks = (ncounts + GH_BLOCK - 1) / GH_BLOCK;
        uint64_t cap = (uint64_t)st->sm_count * 8u;
        int grid = (int)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
        k_finish<<<grid, GH_BLOCK, 0, strm>>>(st->d_slots, fo);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "finish counts");
        /* the slot counters stay as they are: the next histogram zeroes them */
    }
    if (values)
        st->values_zero = run.values_zero_after; /* every value counter was read and zeroed */
    run.open = 0;
    /* weighted: the accumulator, normalised, to the host; rounded there once synchronised */
    const size_t wbytes = gpuhist_weight_acc_words(plan) * sizeof(long long);
    if (wbytes) {
        gpuhist_plan acc = *plan;
        acc.weight_acc = st->d_wacc;
        if ((rc = gpuhist_cuda_weight_normalize(ctx, &acc, strm)) != GPUHIST_OK ||
            (rc = grow_t(ctx, &st->h_wacc, &st->h_wacc_size, wbytes, 1, "weight sums")) !=
                GPUHIST_OK)
            return rc;
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(st->h_wacc, st->d_wacc, wbytes, cudaMemcpyDeviceToHost,
                                         strm),
                         "copy weight sums to host");
    }

    result->bins = plan->bins;
    result->channels = plan->active;
    for (uint32_t k = 0; k < GPUHIST_MAX_CHANNELS; ++k)
        result->channel_index[k] = k < plan->active ? plan->channel_index[k] : 0;

    const int async = ctx->async && plan->data_on_device && device_counts && !wbytes;
    if (async)
        return GPUHIST_OK;
    if (!device_counts)
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(result->counts, st->d_counts, count_bytes,
                                         cudaMemcpyDeviceToHost, strm),
                         "copy counts to host");
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->h_stats, st->d_stats,
                                     4u * plan->active * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, strm),
                     "copy tallies to host");
    GPUHIST_CUDA_TRY(ctx, cudaStreamSynchronize(strm), "histogram");
    for (uint32_t k = 0; k < plan->active; ++k) {
        result->underflow[k] = st->h_stats[4 * k + 0];
        result->overflow[k] = st->h_stats[4 * k + 1];
        result->nan[k] = st->h_stats[4 * k + 2];
        result->total[k] = st->h_stats[4 * k + 3];
    }
    if (wbytes)
        gpuhist_finish_sums(plan, (const int64_t *)st->h_wacc, result);
    return GPUHIST_OK;
}

/* A histogram given up (an error, or gpuhist_stream_abort): its counters are not zero. */
void cuda_stream_abort(gpuhist_ctx *ctx)
{
    cuda_state *st = state_of(ctx);
    if (!st || !st->run.open)
        return;
    cudaSetDevice(st->device);
    cudaStreamSynchronize(stream_of(ctx)); /* nothing may still read the caller's memory */
    (void)cudaGetLastError();
    st->slots_zero = st->values_zero = 0;
    st->run.open = 0;
}

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
        const uint64_t blocks = (n + GH_BLOCK - 1) / GH_BLOCK;
        const uint64_t cap = (uint64_t)st->sm_count * 8u;
        const int grid = (int)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
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

} /* namespace */

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
};
