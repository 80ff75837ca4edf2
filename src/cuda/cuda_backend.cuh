/*
 * cuda_backend.cuh - what the files of the CUDA backend share (not the strategies: they see
 * cuda_internal.cuh only): the context's device state (cuda_state), the histogram in progress
 * (cuda_run), buffer growth, and the backend operations each file implements.
 *
 * The files, one job each:
 *   cuda_backend.cu   opening and closing a device, host page-locked memory, execute
 *                     (begin + count + finish), the C entry points and the operations table;
 *   cuda_state.cu     buffer growth, zeroed counters, freeing the state;
 *   cuda_jobs.cu/.cuh the input as jobs: host and device gathers into staging, weights staged
 *                     beside the samples, for_each_job;
 *   cuda_stream.cu    a histogram in progress: begin, count chunks, lent buffers, abort;
 *   cuda_finish.cu    fold of raw-value counters, the outlier policy, counts and tallies;
 *   cuda_minmax.cu    the finite min/max of the samples (auto range);
 *   cuda_absorb.cu    adding another device's counters (several devices);
 *   pitched_gaps.cu   a pitched device region counted in place, its row gaps taken back;
 *   launch_policy.h   every launch's block and grid as data (the strategies' too); its .cu asks
 *                     occupancy and raises shared-memory limits once per kernel and device.
 * Everything runs on ctx->stream, in order, so buffers of the context can be reused from one
 * call to the next without synchronising; growing a buffer synchronises the device first.
 */
#ifndef GPUHIST_CUDA_BACKEND_CUH
#define GPUHIST_CUDA_BACKEND_CUH

#include "common.cuh"

#include <stddef.h>
#include <stdint.h>

/* Histograms of at most this many counters (slots, or raw values) are finished by one block
 * in shared memory (k_finish_small, cuda_finish.cu): 6144 x 8 bytes is the 48 KiB of static
 * shared memory a block may have, 4096 bins + 3 slots. */
#define GH_SMALL_SLOTS 6144u

namespace gh_backend {

/* What begin() decided for the histogram in progress, for count() and finish(). */
struct cuda_run {
    int open;
    int values;       /* the strategy counts raw 8/16-bit values */
    uint32_t V;       /* 256 / 65536 values, or 0 */
    int small, use_slots;
    int fused;        /* the strategy counts the whole call at finish and writes the result
                         itself (GPUHIST_CAP_FINISH): no counters in use */
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
    double *h_edges;  /* host copy of the edges d_edges holds (malloc'd), h_edges_n of them */
    size_t h_edges_n;
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
                    const char *what);
template <typename P> gpuhist_status grow_t(gpuhist_ctx *ctx, P **p, size_t *have, size_t need,
                                            int pinned, const char *what)
{
    void *v = *p;
    gpuhist_status st = grow(ctx, &v, have, need, pinned, what);
    *p = (P *)v;
    return st;
}

/* (*p, *size) at least `bytes`, its first `bytes` zero once strm gets there (cuda_state.cu). */
gpuhist_status zeroed_counters(gpuhist_ctx *ctx, unsigned long long **p, size_t *size,
                               size_t *zero, size_t bytes, cudaStream_t strm, const char *what);
/* Free every buffer and event of the state, then the state (cuda_state.cu). */
void free_state(cuda_state *st);

/* The backend's operations (internal.h's gpuhist_backend_ops), by file. */
gpuhist_status cuda_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo, double *hi,
                           int *found); /* cuda_minmax.cu */
gpuhist_status cuda_stream_begin(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                 const gpuhist_strategy *s); /* cuda_stream.cu */
gpuhist_status cuda_stream_count(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                 const gpuhist_strategy *s);
gpuhist_status cuda_stream_buffer(gpuhist_ctx *ctx, int slot, size_t bytes, void **buf);
gpuhist_status cuda_stream_submit(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                  const gpuhist_strategy *s, int slot);
void cuda_stream_abort(gpuhist_ctx *ctx);
gpuhist_status cuda_stream_finish(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_strategy *s,
                                  gpuhist_result *result); /* cuda_finish.cu */
gpuhist_status cuda_stream_absorb(gpuhist_ctx *ctx, gpuhist_ctx *from); /* cuda_absorb.cu */

} /* namespace gh_backend */

#endif
