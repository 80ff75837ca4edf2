/*
 * cuda_stream.cu - a CUDA histogram in progress: begin (edges to the device once, counters
 * zeroed, or known zero from the previous finish), count (each chunk of any layout as jobs
 * handed to the strategy; a pitched device region in place, pitched_gaps.cu), the four lent
 * staging buffers of a stream (page-locked, each with a device twin), and abort. The finish is
 * cuda_finish.cu; execute (cuda_backend.cu) is begin + count + finish.
 */
#include "cuda_jobs.cuh"
#include "pitched_gaps.cuh"

namespace gh_backend {

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

    /* edges: once per histogram, and not again while they are the ones d_edges holds (a
     * histogram filled again and again: no copy from pageable memory, which may wait) */
    if (plan->map.kind == GH_KIND_EDGES) {
        const size_t eb = ((size_t)plan->bins + 1u) * sizeof(double);
        const double *held = st->d_edges;
        if ((rc = grow_t(ctx, &st->d_edges, &st->edges_size, eb, 0, "edges")) != GPUHIST_OK)
            return rc;
        if (st->d_edges != held || st->h_edges_n != (size_t)plan->bins + 1u ||
            memcmp(st->h_edges, plan->edges, eb) != 0) {
            st->h_edges_n = 0;
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(st->d_edges, plan->edges, eb,
                                             cudaMemcpyHostToDevice, strm),
                             "copy edges to device");
            double *copy = (double *)realloc(st->h_edges, eb);
            if (copy) { /* else they are copied again next time */
                memcpy(copy, plan->edges, eb);
                st->h_edges = copy;
                st->h_edges_n = (size_t)plan->bins + 1u;
            }
        }
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
    /* A strategy that finishes in its own launch (GPUHIST_CAP_FINISH; never a value counter)
     * counts the whole call at finish: its blocks add into the zeroed slot counters, followed by
     * one more zeroed word (its count of finished blocks), and leave all of them zero. */
    run.fused = (s->caps & GPUHIST_CAP_FINISH) != 0;
    const size_t slot_bytes =
        ((size_t)counters + (run.fused ? 1u : 0u)) * sizeof(unsigned long long);
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

/* Add a chunk (host or device memory, any layout) to the counters. */
gpuhist_status cuda_stream_count(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                 const gpuhist_strategy *s)
{
    cuda_state *st = state_of(ctx);
    if (st->run.fused) /* the whole call is counted at finish (begin) */
        return GPUHIST_OK;
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
    if (rc == GPUHIST_OK && in_place)
        rc = uncount_gaps(ctx, chunk, g, out);
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

} /* namespace gh_backend */
