/*
 * cuda_finish.cu - the end of a CUDA histogram: raw-value counters folded into slots, the
 * outlier policy (CLAMP), counts and the four tallies per channel written where the caller
 * wants them, the weight accumulator normalised and copied back. Small histograms (at most
 * GH_SMALL_SLOTS counters) take one block and one launch that also zeroes the counters it
 * reads, so the next call needs no memset; larger ones a fold (values) and a grid-stride finish.
 * A strategy that finishes in its own launch (GPUHIST_CAP_FINISH) is run here instead, on the
 * whole call, with the same destination (finish.cuh).
 * Accumulating calls (result.accumulate) add into the counts and the caller's device tallies
 * where the finish would store them, and add the weight accumulator into the caller's device
 * weight state in place of its normalisation and copy: no extra launch, and no copy back when
 * asynchronous. Host counts are accumulated by copying them up first (not a hot path).
 */
#include "cuda_jobs.cuh"
#include "finish.cuh"
#include "weighted.cuh"

namespace gh_backend {

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

/* Fold, outlier policy, counts and tallies where the caller wants them. */
gpuhist_status cuda_stream_finish(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_strategy *s, gpuhist_result *result)
{
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
    const int add = result->accumulate;
    const size_t wbytes = gpuhist_weight_acc_words(plan) * sizeof(long long);
    /* accumulating weights with device counts: the caller's state is device memory, added into
     * there (checked before anything is written: a kernel must not write host memory) */
    const int device_state = add && wbytes && device_counts;
    const int squares = plan->want_squares && result->sums_squared;
    if (device_state && !ctx->ops->is_device_pointer(ctx, result->weight_state))
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.weight_state: not device memory of this context's device "
                            "(an accumulating call with device counts adds into a device state)");
    unsigned long long *counts_dst = (unsigned long long *)result->counts;
    if (!device_counts) {
        if ((rc = grow_t(ctx, &st->d_counts, &st->counts_size, count_bytes, 0, "counts")) !=
            GPUHIST_OK)
            return rc;
        counts_dst = st->d_counts;
        if (add) /* the caller's host counts go up to be added into (not a hot path) */
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(st->d_counts, result->counts, count_bytes,
                                             cudaMemcpyHostToDevice, strm),
                             "copy counts to the device");
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
    fo.add = add;
    if (run.fused) {
        /* the strategy counts the whole call and writes fo itself, in one launch, leaving the
         * slot counters it used zero */
        const gpuhist_cuda_job job = job_of_call(ctx, plan, &fo);
        if ((rc = s->run(ctx, plan, &job, st->d_slots)) != GPUHIST_OK)
            return rc;
        st->slots_zero = run.slots_zero_after;
    } else if (run.small) {
        k_finish_small<<<1, GH_SMALL_THREADS, 0, strm>>>(
            st->d_slots, values ? st->d_values : NULL, V, plan->map, d_edges, fo);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "finish counts");
        st->slots_zero = run.slots_zero_after; /* read and zeroed (or not touched) */
    } else {
        if (values) {
            uint64_t n = (uint64_t)plan->active * V;
            int grid = gh_fixed_grid(GH_LP_FOLD, st->sm_count, n);
            k_fold_values<<<grid, GH_BLOCK, 0, strm>>>(st->d_values, V, plan->active, plan->map,
                                                       d_edges, plan->slots, st->d_slots);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "fold values into slots");
        }
        int grid = gh_fixed_grid(GH_LP_COUNTER_PASS, st->sm_count, ncounts);
        k_finish<<<grid, GH_BLOCK, 0, strm>>>(st->d_slots, fo);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "finish counts");
        /* the slot counters stay as they are: the next histogram zeroes them */
    }
    if (values)
        st->values_zero = run.values_zero_after; /* every value counter was read and zeroed */
    run.open = 0;
    /* weighted: the accumulator, normalised, to the host; rounded there once synchronised. An
     * accumulating call with device counts adds it into the caller's device state instead, and
     * only a synchronous call copies that state back for its sums */
    const size_t state_bytes =
        device_state
            ? gpuhist_weight_state_words(plan->bins, plan->active, plan->weight_dtype, squares) *
                  sizeof(long long)
            : 0;
    if (device_state) {
        gpuhist_plan acc = *plan;
        acc.weight_acc = st->d_wacc;
        if ((rc = gpuhist_cuda_weight_accumulate(ctx, &acc, result->weight_state, squares,
                                                 strm)) != GPUHIST_OK)
            return rc;
    } else if (wbytes) {
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

    const int async =
        ctx->async && plan->data_on_device && device_counts && (!wbytes || device_state);
    if (async)
        return GPUHIST_OK;
    if (device_state) {
        if ((rc = grow_t(ctx, &st->h_wacc, &st->h_wacc_size, state_bytes, 1, "weight sums")) !=
            GPUHIST_OK)
            return rc;
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemcpyAsync(st->h_wacc, result->weight_state, state_bytes,
                                         cudaMemcpyDeviceToHost, strm),
                         "copy the weight state to host");
    }
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
    for (uint32_t k = 0; k < plan->active; ++k) { /* accumulating: added (describe kept them) */
        result->underflow[k] = (add ? result->underflow[k] : 0u) + st->h_stats[4 * k + 0];
        result->overflow[k] = (add ? result->overflow[k] : 0u) + st->h_stats[4 * k + 1];
        result->nan[k] = (add ? result->nan[k] : 0u) + st->h_stats[4 * k + 2];
        result->total[k] = (add ? result->total[k] : 0u) + st->h_stats[4 * k + 3];
    }
    if (device_state)
        gpuhist_weight_state_sums((const int64_t *)st->h_wacc, plan->bins, plan->active,
                                  plan->weight_dtype, squares, plan->outliers, result->sums,
                                  result->sums_squared);
    else if (wbytes)
        gpuhist_finish_sums(plan, (const int64_t *)st->h_wacc, result);
    return GPUHIST_OK;
}

} /* namespace gh_backend */
