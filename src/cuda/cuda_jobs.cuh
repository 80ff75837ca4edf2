/*
 * cuda_jobs.cuh - the input of a call as *jobs* (cuda_internal.cuh): device data that is
 * contiguous and aligned to the sample size is one job, used in place; anything else (host
 * memory, a strided ROI, a device pointer not aligned to the sample size) is copied chunk by
 * chunk (~256 MiB) into two device staging buffers: pageable host data through two pinned
 * buffers (host threads gather chunk i+1 while the device copies and counts chunk i),
 * page-locked contiguous host data straight from where it is, device data with
 * cudaMemcpy2DAsync. Weights go beside the samples (stage_weights). The gathers are in
 * cuda_jobs.cu; for_each_job is a template (it calls the strategy through a lambda).
 */
#ifndef GPUHIST_CUDA_JOBS_CUH
#define GPUHIST_CUDA_JOBS_CUH

#include "cuda_backend.cuh"

#include <string.h>

namespace gh_backend {

/* Copy `bytes` of pageable memory into page-locked staging, on several threads when large. */
void copy_to_staging(unsigned char *dst, const unsigned char *src, size_t bytes);
/* Host gather of pixels [p0, p0 + n) into dst (contiguous, as the job layout wants). */
void gather_host(const gpuhist_plan *plan, uint64_t p0, uint64_t n, unsigned char *dst);
/* Device gather of pixels [p0, p0 + n) into dst. */
gpuhist_status gather_device(gpuhist_ctx *ctx, const gpuhist_plan *plan, uint64_t p0, uint64_t n,
                             unsigned char *dst);
/* Is `p` page-locked host memory (cudaMallocHost, cudaHostRegister)? */
int host_page_locked(const void *p);
/* Weighted plans: the weights of pixels [p0, p0 + n) beside the job's samples (cuda_jobs.cu). */
gpuhist_status stage_weights(gpuhist_ctx *ctx, const gpuhist_plan *plan, uint64_t p0, uint64_t n,
                             int b, gpuhist_cuda_job *job, int *locked);

/* A job's device description (stream, device limits, edges, scratch); data and size unset. */
inline gpuhist_cuda_job job_of_device(gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
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
    job.scratch = st->scratch;
    job.scratch_size = st->scratch_size;
    return job;
}

/* The whole of a device-resident call as one job, its rows where they lie (for the strategies
 * that read strided rows and finish in their own launch: GPUHIST_CAP_FINISH). */
inline gpuhist_cuda_job job_of_call(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                    const gh_finish_out *finish)
{
    gpuhist_cuda_job job = job_of_device(ctx, plan);
    job.finish = finish;
    job.data = plan->data;
    job.pixels = plan->pixels;
    job.elements = plan->pixels * plan->channels;
    job.rows = plan->rows;
    job.row_length = plan->row_length;
    job.row_stride = plan->row_stride;
    return job;
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
    gpuhist_cuda_job job = job_of_device(ctx, plan);
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

} /* namespace gh_backend */

#endif
