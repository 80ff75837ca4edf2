/*
 * histogram64.cu - cuda-histogram64 and cuda-histogram64-atomic: per-thread 8-bit counters in
 * shared memory with the bank-conflict-free thread-position shuffle (seed 000, "Implementation of
 * histogram64", Figures 1-2, Listing 2 with and without ATOMICS).
 *
 * What it counts, and the adaptation. The seed's histogram64 counts 64 bins (the top 6 bits of a
 * byte) because G80 had 16 KiB of shared memory: 64 one-byte counters x 192 threads. gpuhist
 * needs the exact count of every byte value (GPUHIST_CAP_VALUES: the backend folds the 256 value
 * counts of each channel into the requested bins, so every bin spec of u8/i8 data is supported),
 * and Hopper's SMs have 228 KiB. So the per-block table has 256 rows instead of 64 - four
 * histogram64 tables stacked, one per quarter of the byte range - giving exact counts of all 256
 * values in a single pass over the data; everything else is the seed's scheme: one byte column
 * per thread, one row per value, the thread-position shuffle, the 255-sample-per-thread limit,
 * the rotated-start merge, per-block output. Interleaved channels (1..4, any active subset) add
 * 256 rows per table (byte_common.cuh). 128 threads per block: 32 KiB of shared memory for one
 * channel, up to 128 KiB for four tables (opt-in shared memory). Input: 16-byte aligned vector
 * loads; the < 32 unaligned head/tail bytes go through a tiny separate kernel (byte_common.cuh).
 *
 * Bank-conflict-free counting (Figure 1, redone for 32 four-byte banks and 32-thread warps).
 * The counter of value v for thread t is byte v * 128 + pos(t), so its bank is (pos / 4) % 32
 * whatever v is (128 is a multiple of the 128-byte bank period). With pos = t every group of 4
 * lanes shares a bank (4-way conflicts); the seed's shuffle of thread-index bit ranges, here
 *     pos = ((t & 31) << 2) | ((t >> 5) & 3),
 * gives lane l of every warp bank l, and the 4 warps of the block the 4 bytes of each word: a
 * warp's 32 increments never conflict, on any data. (Checked for every (thread, value).)
 *
 * Limits and merge. A byte counter holds 255: each thread counts at most 15 vectors (240
 * samples) before the block merges (the seed's 63 words of 4 bytes, with 16-byte loads). Merge
 * (Figure 2): thread t sums the 128 byte counters of its rows r = t, t + 128, ..., as 32 words
 * split into 16-bit pairs, clearing them, starting at word (t % 32) of the row so that the 32
 * lanes read 32 different banks; the row sums accumulate in 32-bit per-block totals in shared
 * memory. The seed launched one block per 255-sample chunk; we loop a resident grid over
 * 15-vector batches instead so the per-block output stays one row per resident block, and a
 * launch gives each thread at most 2^20 vector steps, so a block's total stays below 2^31.
 *   cuda-histogram64: each block writes its totals to its own row of device scratch and a
 *     separate merge kernel sums the rows into `out` (mergeHistogram64Kernel()).
 *   cuda-histogram64-atomic: each block adds its totals to `out` with 64-bit global atomics
 *     (Listing 2's ATOMICS), one kernel.
 *
 * Speed: data-independent (no conflicts, no atomics in the counting loop), but every sample is a
 * byte load + store in shared memory, and the merge reads the whole 32 KiB table every 30 KiB of
 * input (a quarter as many shared accesses as the counting, as 32-bit words).
 */
#include "byte_common.cuh"

/* H64_THREADS, H64_STEPS: launch_policy.h */
#define H64_MAX_STEPS (1u << 20)  /* per thread per launch: block total < 2^31 */
#define H64_ROW_WORDS (H64_THREADS / 4u)

/* Byte column of thread t: lane -> bank, warp -> byte within the word. */
__device__ __forceinline__ unsigned h64_pos(unsigned t)
{
    return ((t & 31u) << 2) | ((t >> 5) & 3u);
}

template <int C, bool ATOMICS>
__global__ void __launch_bounds__(H64_THREADS)
    h64_kernel(const uint4 *__restrict__ vec, unsigned nvec, unsigned phase0, gh8_keys k,
               unsigned long long *__restrict__ out, unsigned *__restrict__ partial)
{
    extern __shared__ unsigned smem[];
    unsigned *hist = smem;                          /* nkeys rows x 128 byte counters */
    unsigned *acc = smem + k.nkeys * H64_ROW_WORDS; /* nkeys per-block totals */
    unsigned char *hist8 = (unsigned char *)hist;
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < k.nkeys * H64_ROW_WORDS; i += H64_THREADS)
        hist[i] = 0;
    for (unsigned i = t; i < k.nkeys; i += H64_THREADS)
        acc[i] = 0;
    __syncthreads();

    unsigned char *col = hist8 + h64_pos(t);
    const unsigned stride = gridDim.x * H64_THREADS;
    const unsigned first = blockIdx.x * H64_THREADS;
    /* Thread 0's step count (the largest in the block), so every thread reaches every barrier. */
    const unsigned steps = first < nvec ? (nvec - first + stride - 1u) / stride : 0u;
    for (unsigned s0 = 0; s0 < steps; s0 += H64_STEPS) {
        const unsigned s1 = min(s0 + H64_STEPS, steps);
        for (unsigned s = s0; s < s1; ++s) {
            const unsigned i = first + t + s * stride;
            if (i < nvec) {
                const uint4 v = gh8_load(vec + i);
                int o[C];
                gh8_rotate<C>(k, gh8_phase<C>(phase0, i), o);
                gh8_for_each_key<C>(v, o, [&](unsigned key) { col[key * H64_THREADS] += 1; });
            }
        }
        __syncthreads(); /* every thread's counts are in before any row is summed */
        for (unsigned r = t; r < k.nkeys; r += H64_THREADS) {
            unsigned *row = hist + r * H64_ROW_WORDS;
            unsigned sum02 = 0, sum13 = 0; /* halves <= 32 * 240 */
#pragma unroll 8
            for (unsigned w = 0; w < H64_ROW_WORDS; ++w) {
                const unsigned idx = (w + t) & (H64_ROW_WORDS - 1u); /* Figure 2's shift */
                const unsigned x = row[idx];
                row[idx] = 0;
                sum02 += x & 0x00ff00ffu;
                sum13 += (x >> 8) & 0x00ff00ffu;
            }
            acc[r] += (sum02 & 0xffffu) + (sum02 >> 16) + (sum13 & 0xffffu) + (sum13 >> 16);
        }
        __syncthreads(); /* rows cleared (and acc complete) before counting resumes */
    }

    /* acc[r] was written only by the thread that owns row r, which is the thread reading it
     * here (same stride), so no barrier is needed when steps == 0 either. */
    for (unsigned key = t; key < k.nout; key += H64_THREADS) {
        if (ATOMICS) {
            if (acc[key])
                atomicAdd(out + key, (unsigned long long)acc[key]);
        } else {
            partial[(size_t)blockIdx.x * k.nout + key] = acc[key];
        }
    }
}

template <bool ATOMICS>
static gpuhist_status h64_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                              void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    const char *name = ATOMICS ? "cuda-histogram64-atomic" : "cuda-histogram64";
    gh8_keys k;
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    /* nkeys rows of 128 byte counters + nkeys 32-bit block totals */
    const size_t smem = (size_t)k.nkeys * H64_THREADS + (size_t)k.nkeys * sizeof(unsigned);
    return gh8_by_channels(k.channels, [&](auto cc) -> gpuhist_status {
        constexpr int C = decltype(cc)::value;
        auto kernel = h64_kernel<C, ATOMICS>;
        unsigned grid = 1;
        gpuhist_status s =
            gh8_grid(ctx, job, kernel, gh_launch_policy_of(GH_LP_HISTOGRAM64), smem,
                     job->elements / GH8_VEC, &grid, name);
        if (s != GPUHIST_OK)
            return s;
        unsigned *partial = NULL;
        if (!ATOMICS) {
            void *scratch = NULL;
            s = gpuhist_cuda_scratch(ctx, (size_t)grid * k.nout * sizeof(unsigned), &scratch);
            if (s != GPUHIST_OK)
                return s;
            partial = (unsigned *)scratch;
        }
        const uint64_t cap = (uint64_t)grid * H64_THREADS * H64_MAX_STEPS;
        return gh8_drive(ctx, job, k, out, cap,
                         [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                             kernel<<<grid, H64_THREADS, smem, job->stream>>>(vec, nvec, phase0,
                                                                              k, out, partial);
                             GPUHIST_CUDA_LAUNCH_CHECK(ctx, name);
                             if (ATOMICS)
                                 return GPUHIST_OK;
                             return gh8_merge(ctx, job, partial, grid, k.nout, out);
                         });
    });
}

static gpuhist_status h64_run_merge(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job,
                                    void *out)
{
    return h64_run<false>(ctx, plan, job, out);
}

static gpuhist_status h64_run_atomic(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                     const void *job, void *out)
{
    return h64_run<true>(ctx, plan, job, out);
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_histogram64 = {
    "cuda-histogram64",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram64, Figures 1-2, Listing 2 + merge kernel)",
    "u8/i8, every bin spec (exact counts of all 256 values: four 64-row histogram64 tables "
    "stacked, folded into bins by the backend); 1-4 interleaved channels, any active subset",
    "per-thread 8-bit counters, 256 rows x 128 threads, bank-conflict-free thread-position "
    "shuffle, merge every 240 samples per thread, per-block rows + merge kernel",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    h64_run_merge,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_histogram64_atomic = {
    "cuda-histogram64-atomic",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram64, Figures 1-2, Listing 2 with ATOMICS)",
    "u8/i8, every bin spec (exact counts of all 256 values: four 64-row histogram64 tables "
    "stacked, folded into bins by the backend); 1-4 interleaved channels, any active subset",
    "per-thread 8-bit counters, 256 rows x 128 threads, bank-conflict-free thread-position "
    "shuffle, merge every 240 samples per thread, block totals added with global atomics",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    h64_run_atomic,
};
