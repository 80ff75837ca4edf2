/*
 * pitched_gaps.cu - a strided region of device memory (an image with a row pitch) whose gaps
 * between rows hold whole pixels and are small is counted in place as one span, from its first
 * pixel to its last, gaps included, and the gaps' pixels are then taken back (k_uncount_gaps),
 * instead of compacting the region with a 2-D copy first: a gap of at most a quarter of the row
 * stride costs at most a third more reading, the copy three passes. The gaps lie inside the
 * caller's image (between its rows), so they may be read. Counts are exact (uint64 counters,
 * every increment of a gap pixel matched by one decrement).
 * Limits: device memory only, unweighted, at least two rows, gaps of whole pixels no longer
 * than a quarter of the row stride.
 */
#include "pitched_gaps.cuh"

#include <string.h>

/* Counters k_uncount_gaps may total in shared memory (32-bit each, within the 48 KB a launch
 * gets without opting in). */
#define GH_UNCOUNT_LOCAL 12288u

namespace gh_backend {

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

gpuhist_status uncount_gaps(gpuhist_ctx *ctx, const gpuhist_plan *chunk, const gap_span &g,
                            void *out)
{
    cuda_state *st = state_of(ctx);
    gpuhist_status rc;
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
    const int grid =
        gh_fixed_grid(local ? GH_LP_UNCOUNT_LOCAL : GH_LP_UNCOUNT_GLOBAL, st->sm_count, n);
    rc = gh_dispatch(chunk, [&](auto tag, auto) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        k_uncount_gaps<T><<<grid, GH_BLOCK, local * sizeof(unsigned int), stream_of(ctx)>>>(
            chunk->data, chunk->row_stride, g.row_bytes, g.gap_rows, g.gap_pixels, p, V,
            local, (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "take back the gaps of a strided region");
        return GPUHIST_OK;
    });
    return rc;
}

} /* namespace gh_backend */
