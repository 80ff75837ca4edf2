/*
 * byte_common.cuh - what the 8-bit value-counting CUDA strategies share (histogram64,
 * histogram256, histogram256-tagged, thread-packed, byte-pairs).
 *
 * These strategies (GPUHIST_CAP_VALUES) count the raw byte of every u8/i8 sample: `out` holds
 * active * 256 uint64 counters (histogram h, byte value v at out[h * 256 + v]) and the backend
 * folds them into the requested bins, so every bin spec of 8-bit data is supported exactly.
 *
 * Keys. Inside a kernel a sample is counted under the key  table * 256 + byte:  table is the
 * histogram of the sample's channel, or, for a channel that is not histogrammed, one extra
 * "dummy" table (index active) that is counted like the others and never written out. Counting
 * the unwanted channel instead of skipping it keeps the inner loop free of branches; the cost is
 * one more 256-key table, present only when some channel is inactive (active + 1 <= channels <= 4,
 * so there are never more than 1024 keys). (cuda-histogram256 skips such bytes without a branch
 * when C is 2 or 4, where byte p of every word is on the same channel for a whole launch.)
 *
 * Loads. job->data is aligned to 1 byte only. A job is split into a head (the bytes before the
 * first 16-byte-aligned address), a body of aligned 16-byte vectors and a tail (< 16 bytes). The
 * strategies' kernels see only the body; the head and tail (at most 30 bytes) are added straight
 * to `out` with global atomics by gh8_loose_kernel, one tiny launch, skipped when both are empty
 * (cudaMalloc'd buffers of a multiple of 16 bytes have neither).
 *
 * Launch size. The body is handed to a kernel in launches of at most `cap` vectors (and never
 * more than 2^30, so that vector indices and grid strides fit 32 bits); each strategy derives its
 * cap from the width of its per-block counters, so none of them can overflow whatever the job's
 * size. The channel of vector byte j is (first element of the vector + j) % C; jobs start on a
 * pixel boundary, so element 0 of the job is channel 0.
 */
#ifndef GPUHIST_BYTE_COMMON_CUH
#define GPUHIST_BYTE_COMMON_CUH

#include "cuda_internal.cuh"

#include <stdint.h>
#include <type_traits>

#define GH8_VALUES 256u
#define GH8_VEC 16u                        /* bytes per vector load */
#define GH8_MAX_LAUNCH_VECTORS (1u << 30)  /* 16 GiB: indices + strides stay below 2^32 */

/* How a plan's channels map to keys. Passed to kernels by value. */
struct gh8_keys {
    int off[GPUHIST_MAX_CHANNELS]; /* key offset of input channel c (table * 256) */
    unsigned channels;             /* C, 1..4 */
    unsigned nout;                 /* active * 256: keys that go to `out` */
    unsigned nkeys;                /* nout, + 256 when a channel is not histogrammed */
};

/* The histogrammed bytes of each 32-bit word of a launch whose first byte is on channel phase0,
 * in byte order: C = 1, 2 or 4 divides 16, so byte p of every word of the launch is on channel
 * (phase0 + p) % C. For each: the PRMT selector taking byte p out of a word, zero-extended, and
 * its key offset. Host code, passed to the kernels (cuda-histogram256's NLW < 4 kernels,
 * cuda-byte-pairs' layouts). */
struct gh8_live {
    unsigned n;      /* histogrammed bytes per word */
    unsigned sel[4]; /* 0x4440 | p */
    unsigned off[4]; /* key offset of byte p's channel */
};

static inline gh8_live gh8_live_bytes(const gh8_keys &k, unsigned phase0)
{
    gh8_live L = {};
    for (unsigned p = 0; p < 4u; ++p) {
        const unsigned off = (unsigned)k.off[(phase0 + p) % k.channels];
        if (off >= k.nout) /* not histogrammed */
            continue;
        L.sel[L.n] = 0x4440u | p;
        L.off[L.n] = off;
        ++L.n;
    }
    return L;
}

static inline gpuhist_status gh8_keys_of(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                         gh8_keys *k)
{
    if (plan->sample_size != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "8-bit value strategy given %zu-byte samples", plan->sample_size);
    if (plan->channels < 1 || plan->channels > GPUHIST_MAX_CHANNELS || plan->active < 1 ||
        plan->active > plan->channels)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "bad channel layout %u:%u",
                            plan->channels, plan->active);
    unsigned dummy = 0;
    for (unsigned c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        k->off[c] = 0;
    for (unsigned c = 0; c < plan->channels; ++c) {
        int32_t s = plan->channels == 1 ? 0 : plan->channel_slot[c];
        if (s >= (int32_t)plan->active)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "channel %u maps to histogram %d of %u", c, (int)s,
                                plan->active);
        if (s < 0)
            dummy = 1;
        k->off[c] = (int)((s < 0 ? plan->active : (uint32_t)s) * GH8_VALUES);
    }
    k->channels = plan->channels;
    k->nout = plan->active * GH8_VALUES;
    k->nkeys = (plan->active + dummy) * GH8_VALUES;
    return GPUHIST_OK;
}

/* ---- device side ---------------------------------------------------------------------------- */

/* Channel of byte 0 of vector i of a launch whose vector 0 starts on channel phase0. */
template <int C>
__device__ __forceinline__ unsigned gh8_phase(unsigned phase0, unsigned i)
{
    if ((GH8_VEC % C) == 0)
        return phase0;
    return (phase0 + (i % C) * (GH8_VEC % C)) % C; /* only C == 3: 16 = 1 (mod 3) */
}

/* o[j] = key offset of byte j, j+C, j+2C... of a vector starting on channel `phase`. Selects
 * over the C offsets instead of indexing, so o[] stays in registers. */
template <int C>
__device__ __forceinline__ void gh8_rotate(const gh8_keys &k, unsigned phase, int (&o)[C])
{
#pragma unroll
    for (int j = 0; j < C; ++j) {
        unsigned c = phase + (unsigned)j;
        if (c >= (unsigned)C)
            c -= (unsigned)C;
        int r = k.off[0];
#pragma unroll
        for (int m = 1; m < C; ++m)
            if (c == (unsigned)m)
                r = k.off[m];
        o[j] = C == 1 ? 0 : r;
    }
}

/* f(key) for the 16 bytes of v, in memory order. */
template <int C, class F>
__device__ __forceinline__ void gh8_for_each_key(const uint4 &v, const int (&o)[C], F &&f)
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < (int)GH8_VEC; ++j) {
        unsigned b = (w[j >> 2] >> (8 * (j & 3))) & 0xffu;
        f(C == 1 ? b : (unsigned)o[j % C] + b);
    }
}

/* Streaming 16-byte load: read once, keep out of L1. */
__device__ __forceinline__ uint4 gh8_load(const uint4 *p)
{
    return __ldcs(p);
}

/* Per-warp sub-histograms in dynamic shared memory (cuda-histogram256 and -tagged): the block's
 * THREADS / 32 tables of k.nkeys counters each. Two calls around the kernel's counting loop
 * rather than one taking the loop as a lambda: the lambda form moved instructions of the tagged
 * kernel's loop (nvcc 13.0, sm_90); these compile to the same SASS as the code written out.
 * gh8_tables_zero: zero every table, wait for the whole block, return the calling warp's. */
template <unsigned THREADS>
__device__ __forceinline__ unsigned *gh8_tables_zero(unsigned *s_hist, const gh8_keys &k)
{
    const unsigned total = THREADS / 32u * k.nkeys;
    for (unsigned i = threadIdx.x; i < total; i += THREADS)
        s_hist[i] = 0;
    __syncthreads();
    return s_hist + (threadIdx.x / 32u) * k.nkeys;
}

/* gh8_tables_merge: once the whole block has counted, emit(key, sum) for each output key, sum
 * (of type S) adding the key's counter of every table under `mask` (the tagged kernel keeps the
 * writer's lane above the count bits). */
template <unsigned THREADS, typename S, class Emit>
__device__ __forceinline__ void gh8_tables_merge(const unsigned *s_hist, const gh8_keys &k,
                                                 unsigned mask, Emit &&emit)
{
    __syncthreads();
    for (unsigned key = threadIdx.x; key < k.nout; key += THREADS) {
        S sum = 0;
#pragma unroll
        for (unsigned w = 0; w < THREADS / 32u; ++w)
            sum += s_hist[w * k.nkeys + key] & mask;
        emit(key, sum);
    }
}

/* The head and tail bytes (< 32 in all), straight into `out`: byte t < nhead is job element t,
 * byte nhead + t is element tail_elem + t (tail_phase = tail_elem % C). */
static __global__ void gh8_loose_kernel(const unsigned char *head, unsigned nhead,
                                        const unsigned char *tail, unsigned ntail,
                                        unsigned tail_phase, gh8_keys k,
                                        unsigned long long *out)
{
    unsigned t = threadIdx.x;
    unsigned byte, chan;
    if (t < nhead) {
        byte = head[t];
        chan = t % k.channels;
    } else if (t - nhead < ntail) {
        byte = tail[t - nhead];
        chan = (tail_phase + (t - nhead)) % k.channels;
    } else {
        return;
    }
    unsigned key = (unsigned)k.off[chan] + byte;
    if (key < k.nout)
        atomicAdd(out + key, 1ull);
}

/* Fold per-block partial histograms (nblocks rows of nout uint32) into `out`. Each thread sums
 * one key over GH8_MERGE_ROWS blocks (reads coalesced across keys), so the merge has enough
 * threads in flight to run at memory speed, and only nout * nblocks / GH8_MERGE_ROWS atomics. */
#define GH8_MERGE_ROWS 32u
#define GH8_MERGE_THREADS 256u
static __global__ void __launch_bounds__(GH8_MERGE_THREADS)
    gh8_merge_kernel(const unsigned *__restrict__ partial, unsigned nblocks, unsigned nout,
                     unsigned long long *__restrict__ out)
{
    unsigned key = blockIdx.x * GH8_MERGE_THREADS + threadIdx.x;
    if (key >= nout)
        return;
    unsigned b0 = blockIdx.y * GH8_MERGE_ROWS;
    unsigned b1 = min(b0 + GH8_MERGE_ROWS, nblocks);
    unsigned long long sum = 0;
    for (unsigned b = b0; b < b1; ++b)
        sum += partial[(size_t)b * nout + key];
    if (sum)
        atomicAdd(out + key, sum);
}

/* ---- host side ------------------------------------------------------------------------------ */

static inline gpuhist_status gh8_merge(gpuhist_ctx *ctx, const gpuhist_cuda_job *job,
                                       const unsigned *partial, unsigned nblocks, unsigned nout,
                                       unsigned long long *out)
{
    dim3 grid((nout + GH8_MERGE_THREADS - 1) / GH8_MERGE_THREADS,
              (nblocks + GH8_MERGE_ROWS - 1) / GH8_MERGE_ROWS);
    gh8_merge_kernel<<<grid, GH8_MERGE_THREADS, 0, job->stream>>>(partial, nblocks, nout, out);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "8-bit merge kernel");
    return GPUHIST_OK;
}

/*
 * Blocks to launch for `kernel` under policy `pol` (launch_policy.h: as many as are resident at
 * once, occupancy x SMs, but no more than there are threads x items_per_thread vectors of work).
 * Raises the kernel's dynamic shared-memory limit first when it needs more than 48 KiB.
 */
template <class K>
static gpuhist_status gh8_grid(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, K kernel,
                               const gh_launch_policy &pol, size_t smem, uint64_t nvec,
                               unsigned *grid, const char *name)
{
    if (smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s needs %zu bytes of shared memory per block, the device has %zu",
                            name, smem, job->smem_per_block_optin);
    cudaError_t err;
    const int g = gh_launch_grid(pol, (const void *)kernel, pol.threads, smem, job->device,
                                 job->sm_count, job->blocks_per_sm_cap, nvec, &err);
    if (g == 0 && err == cudaErrorInvalidConfiguration)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s: no block of %u threads with %zu bytes of shared memory fits an SM",
                            name, pol.threads, smem);
    if (g == 0)
        return gpuhist_cuda_check(ctx, err, name);
    *grid = (unsigned)g;
    return GPUHIST_OK;
}

/*
 * Run a job: the loose head/tail bytes through gh8_loose_kernel, the aligned body through
 * launch(vec, nvec, phase0) in pieces of at most `cap` vectors (phase0 = channel of the piece's
 * first byte). `launch` returns a gpuhist_status.
 */
template <class Launch>
static gpuhist_status gh8_drive(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, const gh8_keys &k,
                                unsigned long long *out, uint64_t cap, Launch &&launch)
{
    const uint64_t n = job->elements;
    if (n == 0)
        return GPUHIST_OK;
    const uintptr_t addr = (uintptr_t)job->data;
    uint64_t head = (GH8_VEC - (addr % GH8_VEC)) % GH8_VEC;
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / GH8_VEC;
    const uint64_t tail = n - head - nvec * GH8_VEC;
    if (head + tail > 0) {
        uint64_t tail_elem = head + nvec * GH8_VEC;
        gh8_loose_kernel<<<1, 32, 0, job->stream>>>(job->data, (unsigned)head,
                                                    job->data + tail_elem, (unsigned)tail,
                                                    (unsigned)(tail_elem % k.channels), k, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "8-bit head/tail kernel");
    }
    if (cap > GH8_MAX_LAUNCH_VECTORS)
        cap = GH8_MAX_LAUNCH_VECTORS;
    if (cap < 1)
        cap = 1;
    const uint4 *body = (const uint4 *)(job->data + head);
    for (uint64_t v0 = 0; v0 < nvec; v0 += cap) {
        uint64_t m = nvec - v0 < cap ? nvec - v0 : cap;
        unsigned phase0 = (unsigned)((head + v0 * GH8_VEC) % k.channels);
        gpuhist_status st = launch(body + v0, (unsigned)m, phase0);
        if (st != GPUHIST_OK)
            return st;
    }
    return GPUHIST_OK;
}

/* Instantiate kernels for the plan's channel count: calls f(std::integral_constant<int, C>{})
 * for C = channels (1..4), so the per-byte channel arithmetic is compile-time. */
template <class F>
static gpuhist_status gh8_by_channels(unsigned channels, F &&f)
{
    switch (channels) {
    case 1:
        return f(std::integral_constant<int, 1>{});
    case 2:
        return f(std::integral_constant<int, 2>{});
    case 3:
        return f(std::integral_constant<int, 3>{});
    default:
        return f(std::integral_constant<int, 4>{});
    }
}

/*
 * The start of an 8-bit strategy's run(): the plan's keys k, then for C = k.channels the kernel
 * pick(std::integral_constant<int, C>{}) with smem_per_key * k.nkeys bytes of dynamic shared
 * memory and a grid from gh8_grid (`threads` per block, per_block vectors of work per block);
 * go(kernel, grid, k, smem) then drives the job.
 */
template <class Pick, class Go>
static gpuhist_status gh8_start(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                const gpuhist_cuda_job *job, gh_lp_id id, size_t smem_per_key,
                                const char *name, Pick &&pick, Go &&go)
{
    gh8_keys k = {}; /* {}: gcc cannot tell that gh8_keys_of fills k whenever it returns OK */
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    const size_t smem = smem_per_key * k.nkeys;
    return gh8_by_channels(k.channels, [&](auto cc) -> gpuhist_status {
        auto kernel = pick(cc);
        unsigned grid = 1;
        gpuhist_status s = gh8_grid(ctx, job, kernel, gh_launch_policy_of(id), smem,
                                    job->elements / GH8_VEC, &grid, name);
        if (s != GPUHIST_OK)
            return s;
        return go(kernel, grid, k, smem);
    });
}

#endif
