/*
 * thread_packed.cu - cuda-thread-packed: privatized per-thread histograms of packed 8-bit
 * counters (seed 003, CUDA Handbook "Privatized (Per Thread) Histograms": Figure 6 layout,
 * Listing 5 increment, Listings 6/7 merge, Listing 8 with bPeriodicMerge).
 *
 * What it counts. The raw byte of every u8/i8 sample (GPUHIST_CAP_VALUES): the backend folds the
 * 256 value counts of each channel into the requested bins, so every bin spec of 8-bit data is
 * supported, exactly. Interleaved channels (1..4, any active subset) are counted in one pass as
 * extra 256-value tables (byte_common.cuh). Input: 16-byte aligned vector loads; the < 32
 * unaligned head/tail bytes go through a tiny separate kernel (byte_common.cuh).
 *
 * Mechanism. 64-thread blocks. Every thread owns one 8-bit counter per key, four of them packed
 * in a 32-bit word; the words are interleaved (Figure 6): key v lives in byte v & 3 of word
 * (v >> 2) * 64 + threadIdx.x, so one table is a square 64 x 64 array of words (16 KiB) and
 * every increment is one 32-bit shared add of 1 << 8 * (v & 3) (Listing 5) - no atomics, since
 * no other thread touches the word. Lane i always hits bank i, so counting is free of bank
 * conflicts and of contention on every input distribution, hot and constant data included.
 *
 * Overflow: periodic merge (Listing 8, bPeriodicMerge). A byte counter holds 255, so every 15
 * vector steps (240 samples per thread) the block stops, and each thread sums one row of the
 * table - 64 words, the packed bytes split into two pairs of 16-bit partial sums (Listing 6), at
 * most 64 x 240 = 15360 per half - clearing it as it goes (Listing 7 with bClear), reading the
 * row from a thread-rotated start so that the 32 lanes hit 32 banks. Unlike Listing 7 the sums go
 * to a per-block 32-bit total in shared memory, not to global atomics: a 64-thread block merges
 * every 15 KiB of input, and one global atomic per key per merge would be ~1 atomic per 60 input
 * bytes. The block adds its totals to `out` with 64-bit global atomics once, at the end. A launch
 * gives each thread at most 2^20 vector steps, so a block's total stays below 2^30.
 *
 * Speed: 16 shared read-modify-writes per 16-byte load and no data dependence, but 64-thread
 * blocks with 17 KiB (one channel) to 68 KiB (four tables) of shared memory each limit occupancy
 * (13 blocks = 832 threads per H100 SM for one channel), and the merge costs about one shared
 * word read + clear per 3.75 samples (a 16 KiB table every 15 KiB of input).
 */
#include "byte_common.cuh"

#define TP_THREADS THREAD_PACKED_THREADS /* launch_policy.h: Listing 8's 64 */
#define TP_STEPS THREAD_PACKED_STEPS     /* launch_policy.h: 15 vectors between merges */
#define TP_MAX_STEPS (1u << 20) /* per thread per launch: block total < 2^30 */

/* Listings 6/7: fold the rows this thread owns into acc[] and clear them. */
__device__ __forceinline__ void tp_merge(unsigned *priv, unsigned *acc, unsigned rows,
                                         unsigned t)
{
    for (unsigned r = t; r < rows; r += TP_THREADS) {
        unsigned sum02 = 0, sum13 = 0;
        unsigned *row = priv + r * TP_THREADS;
#pragma unroll 8
        for (unsigned i = 0; i < TP_THREADS; ++i) {
            const unsigned idx = (i + t) & (TP_THREADS - 1u); /* rotated: lane l -> bank l+i */
            unsigned w = row[idx];
            row[idx] = 0;
            sum02 += w & 0x00ff00ffu;
            sum13 += (w >> 8) & 0x00ff00ffu;
        }
        acc[4 * r + 0] += sum02 & 0xffffu;
        acc[4 * r + 2] += sum02 >> 16;
        acc[4 * r + 1] += sum13 & 0xffffu;
        acc[4 * r + 3] += sum13 >> 16;
    }
}

template <int C>
__global__ void __launch_bounds__(TP_THREADS)
    tp_kernel(const uint4 *__restrict__ vec, unsigned nvec, unsigned phase0, gh8_keys k,
              unsigned long long *__restrict__ out)
{
    extern __shared__ unsigned smem[];
    const unsigned rows = k.nkeys / 4u;
    unsigned *priv = smem;                    /* rows x 64 words of packed counters */
    unsigned *acc = smem + rows * TP_THREADS; /* k.nkeys per-block totals */
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < rows * TP_THREADS; i += TP_THREADS)
        priv[i] = 0;
    for (unsigned i = t; i < k.nkeys; i += TP_THREADS)
        acc[i] = 0;
    __syncthreads();

    const unsigned stride = gridDim.x * TP_THREADS;
    const unsigned first = blockIdx.x * TP_THREADS;
    /* Thread 0's step count (the largest in the block), so every thread reaches every barrier. */
    const unsigned steps = first < nvec ? (nvec - first + stride - 1u) / stride : 0u;
    for (unsigned s0 = 0; s0 < steps; s0 += TP_STEPS) {
        const unsigned s1 = min(s0 + TP_STEPS, steps);
        for (unsigned s = s0; s < s1; ++s) {
            const unsigned i = first + t + s * stride;
            if (i < nvec) {
                const uint4 v = gh8_load(vec + i);
                int o[C];
                gh8_rotate<C>(k, gh8_phase<C>(phase0, i), o);
                gh8_for_each_key<C>(v, o, [&](unsigned key) { /* Listing 5 */
                    priv[(key >> 2) * TP_THREADS + t] += 1u << (8u * (key & 3u));
                });
            }
        }
        __syncthreads(); /* every thread's counts are in before any row is summed */
        tp_merge(priv, acc, rows, t);
        __syncthreads(); /* rows cleared (and acc complete) before counting resumes */
    }

    for (unsigned key = t; key < k.nout; key += TP_THREADS)
        if (acc[key])
            atomicAdd(out + key, (unsigned long long)acc[key]);
}

static gpuhist_status tp_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    gh8_keys k;
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    /* nkeys bytes per thread of counters + nkeys 32-bit block totals */
    const size_t smem = (size_t)k.nkeys * TP_THREADS + (size_t)k.nkeys * sizeof(unsigned);
    return gh8_by_channels(k.channels, [&](auto cc) -> gpuhist_status {
        constexpr int C = decltype(cc)::value;
        auto kernel = tp_kernel<C>;
        unsigned grid = 1;
        gpuhist_status s =
            gh8_grid(ctx, job, kernel, gh_launch_policy_of(GH_LP_THREAD_PACKED), smem,
                     job->elements / GH8_VEC, &grid, "cuda-thread-packed");
        if (s != GPUHIST_OK)
            return s;
        const uint64_t cap = (uint64_t)grid * TP_THREADS * TP_MAX_STEPS;
        return gh8_drive(ctx, job, k, out, cap,
                         [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                             kernel<<<grid, TP_THREADS, smem, job->stream>>>(vec, nvec, phase0, k,
                                                                             out);
                             GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-thread-packed kernel");
                             return GPUHIST_OK;
                         });
    });
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_thread_packed = {
    "cuda-thread-packed",
    GPUHIST_BACKEND_CUDA,
    "003 (Figure 6, Listings 5-8, bPeriodicMerge)",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); 1-4 "
    "interleaved channels, any active subset",
    "per-thread packed 8-bit counters in an interleaved 64x64-word table, 64-thread blocks, "
    "periodic merge every 240 samples per thread via 16-bit unpacking",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    tp_run,
};
