/*
 * cuda_jobs.cu - the host side of the CUDA backend's jobs (cuda_jobs.cuh): pageable host data
 * gathered into page-locked staging on several threads, strided device rows compacted with
 * cudaMemcpy2DAsync, weights staged beside their samples. Limits: weights must be in the same
 * memory as the samples (host or this device); rows longer than the device's maximum pitch are
 * copied one by one.
 */
#include "cuda_jobs.cuh"

#include <unistd.h>

namespace gh_backend {

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

} /* namespace gh_backend */
