/*
 * histogram256.cu - cuda-histogram256 and cuda-histogram256-tagged: per-warp 256-value
 * sub-histograms in shared memory (seed 000, "Implementation of histogram256", Figure 3).
 *
 * What they count. The raw byte of every u8/i8 sample (GPUHIST_CAP_VALUES): the backend folds the
 * 256 value counts of each channel into the requested bins, so every bin spec of 8-bit data is
 * supported, exactly. Interleaved channels (1..4, any active subset, e.g. RGBA) are counted in
 * one pass: each warp owns one 256-counter table per active channel (plus one for the inactive
 * channels, see byte_common.cuh; the atomic kernel skips their bytes when C is 2 or 4). Input:
 * 16-byte aligned vector loads; the < 32 unaligned head and tail bytes go through a tiny separate
 * kernel (byte_common.cuh).
 *
 * Mechanism. Each warp of a 256-thread block increments its own 32-bit sub-histogram in shared
 * memory (8 warps x tables x 1 KiB: 8 KiB for one channel, 32 KiB for four), so collisions only
 * happen between the 32 lanes of one warp; at the end the block sums the 8 warp tables and adds
 * the result to `out`.
 *
 * cuda-histogram256 (hardware atomics): the increment is a shared-memory atomicAdd (RED), and
 * the block's sums go to `out` with 64-bit global atomics (Listing 4's ATOMICS variant), so one
 * kernel does everything. Grid: as many blocks as are resident at once (occupancy x SMs),
 * grid-stride over the data; each thread keeps four 16-byte loads in flight (one channel: two
 * sets of two, the next set loaded while the current one is counted; several channels: four
 * loads, then their atomics).
 *   Fast: one shared atomic per sample, no branches. Slow: Hopper's shared atomics cap near 8.4
 *   lane-updates per clock per SM (docs/PERFORMANCE.md, "Hardware facts the CUDA strategies
 *   rely on"), so uniform data runs at about half the read bandwidth; same-bank collisions (data
 *   landing 32 keys apart) add conflicts, while equal values within a warp are merged by the
 *   hardware, so hot/constant data is about as fast.
 *   Limits: a warp's 32-bit counter sees at most 2^31 + 512 samples per launch (launches are
 *   at most 2^30 vectors, 256 threads per block), so it cannot overflow.
 *
 * cuda-histogram256-tagged (software atomics, Listing 3): no shared atomics. Each counter holds
 * a 27-bit count under a 5-bit tag (the lane that wrote it last); a lane reads the counter, writes
 * tag | (count + 1) and reads it back; if another lane's write won, it tries again. The block
 * writes its histogram to a per-block row of device scratch (no global atomics either) and a
 * separate merge kernel sums the rows into `out` (Listing 4 without ATOMICS, and
 * mergeHistogram256Kernel()).
 *
 *   Why Listing 3 is wrong as written on Volta and later, and what we do instead. On G80 the 32
 *   lanes executed the read, the write and the read-back in lockstep: all reads of a round saw the
 *   same old count, the colliding writes were combined (one won), and the read-back came after all
 *   writes. With independent thread scheduling the lanes of a warp may interleave at any point:
 *   lane A can finish read-write-check (and leave) before lane B reads, which is harmless, but
 *   also A reads c, B reads c, B writes c+1|B, C reads c+1|B, A writes c+1|A, C writes c+2|C:
 *   C's check succeeds with c+2 although only C's increment survives and A and B retry - the
 *   count ends one too high. So we restore the three phases explicitly with __syncwarp(), which
 *   both reconverges the warp and orders shared-memory accesses among its lanes:
 *       round: [pending lanes read + compute tag|(count+1)]  __syncwarp
 *              [pending lanes write]                          __syncwarp
 *              [pending lanes read back; equal -> done]       until no lane of the warp pends
 *   All 32 lanes run every round (lanes with nothing to add take part with pending = false), so
 *   the full-mask __syncwarp/__any_sync are legal; only this warp touches its sub-histogram
 *   during counting.
 *   Exactness: no write happens between the previous round's last barrier and this round's first
 *   one, so every pending lane of a key reads the same count V. The tagged value is stored with
 *   an atomic exchange (its old value is ignored): Listing 3's plain volatile store relied on the
 *   hardware combining same-address writes, which is a data race in the CUDA memory model and is
 *   reported by compute-sanitizer racecheck; the exchange makes the colliding stores well
 *   defined while the collision detection stays the seed's tags. So after the writes the counter holds
 *   exactly one of the values written, tag_w | (V + 1) of some lane w; tags are unique per lane,
 *   so after the second barrier exactly that lane finds its own value and retires. Each round
 *   therefore adds exactly 1 to each contended counter and retires exactly one of its lanes: no
 *   increment is lost or counted twice.
 *   Termination: every round retires at least one lane per contended key, so an add takes at
 *   most 32 rounds (all lanes on one value), 1 when the warp's 32 values are distinct.
 *   27-bit limit: the count field is 27 bits, so a warp must see fewer than 2^27 samples before
 *   its table is flushed: a launch gives each thread at most 2^18 - 1 vectors (2^27 - 512
 *   samples per warp) and each launch flushes to its own per-block rows; the per-block sum of 8
 *   warps stays below 2^30, so the 32-bit rows cannot overflow either.
 *   Speed: three barriers and a vote per sample, plus a retry round per collision: slower than
 *   hardware atomics and strongly data dependent (constant data: 32 rounds per byte). Kept as
 *   the seed's experiment, not as a production path.
 *   Sanitizer note: the write phase is a deliberate write-write race between colliding lanes
 *   (the tag decides the winner); compute-sanitizer racecheck may report it.
 */
#include "byte_common.cuh"

/* H256_THREADS: launch_policy.h */
#define H256_WARPS (H256_THREADS / 32u)
#define H256_SMEM_PER_KEY (H256_WARPS * sizeof(unsigned)) /* one counter per warp table */
#define H256_U 4u /* vectors in flight per thread (atomic kernel) */
#define H256_P 2u /* vectors per register set of the prefetching variant */
#define H256_COUNT_BITS 27u
#define H256_COUNT_MASK ((1u << H256_COUNT_BITS) - 1u) /* 0x07FFFFFF, Listing 3 */
/* Vectors per thread per launch for the tagged kernel: 512 samples per warp per vector step. */
#define H256_TAGGED_STEPS ((1u << (H256_COUNT_BITS - 9u)) - 1u)

/* ---- hardware shared atomics ------------------------------------------------------------------ */

/* PF: two register sets of H256_P vectors, the next loaded while the current is counted (one
 * channel); else H256_U vectors loaded, then counted (several channels).
 * NLW < 4 (C = 2 or 4, some channel not histogrammed): only the NLW bytes of each 32-bit word
 * that belong to histogrammed channels are counted. 16 % C == 0, so byte p of every word of the
 * launch is on channel (phase0 + p) % C: the host finds the live positions (gh8_live_bytes),
 * each live byte is taken out of its word with one PRMT, and the skipped channel costs nothing
 * (the dummy table stays empty). RGBA with 3 of 4 channels: 12 atomics per vector instead of
 * 16, no branch. Skipping by PRMT selection is faster than counting the dummy's bytes and than
 * a branch per byte (measured: docs/PERFORMANCE.md, "Measurements behind the CUDA sources"). */
template <int C, bool PF, int NLW = 4>
__global__ void __launch_bounds__(H256_THREADS)
    h256_atomic_kernel(const uint4 *__restrict__ vec, unsigned nvec, unsigned phase0, gh8_keys k,
                       gh8_live live, unsigned long long *__restrict__ out)
{
    static_assert(NLW == 4 || (C > 1 && GH8_VEC % C == 0), "live bytes need a fixed phase");
    extern __shared__ unsigned s_hist[]; /* H256_WARPS tables of k.nkeys counters */
    unsigned *wh = gh8_tables_zero<H256_THREADS>(s_hist, k);

    auto count = [&](const uint4 &v, unsigned i) {
        if constexpr (NLW < 4) {
            const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int b = 0; b < NLW; ++b)
                    atomicAdd(wh + live.off[b] + __byte_perm(w[j], 0u, live.sel[b]), 1u);
        } else {
            int o[C];
            gh8_rotate<C>(k, gh8_phase<C>(phase0, i), o);
            gh8_for_each_key<C>(v, o, [&](unsigned key) { atomicAdd(wh + key, 1u); });
        }
    };
    /* Indices stay below 2^31 (nvec <= 2^30, a few strides past it at most). */
    const unsigned stride = gridDim.x * H256_THREADS;
    unsigned i = blockIdx.x * H256_THREADS + threadIdx.x;
    if (!PF) {
        /* H256_U grid-strided vectors per thread are loaded before any is counted, so each
         * thread keeps H256_U 16-byte loads in flight (one alone leaves the read short of the
         * ceiling on data whose atomics are cheap: hot and constant). */
        for (; i + (H256_U - 1u) * stride < nvec; i += H256_U * stride) {
            uint4 v[H256_U];
#pragma unroll
            for (unsigned u = 0; u < H256_U; ++u)
                v[u] = gh8_load(vec + i + u * stride);
#pragma unroll
            for (unsigned u = 0; u < H256_U; ++u)
                count(v[u], i + u * stride);
        }
    } else {
        /* Two register sets of H256_P vectors: the next set is loaded before the current one is
         * counted, so loads stay in flight while the atomics issue. */
        constexpr unsigned P = H256_P;
        auto full = [&](unsigned j) { return j + (P - 1u) * stride < nvec; };
        auto load = [&](uint4(&v)[P], unsigned j) {
#pragma unroll
            for (unsigned p = 0; p < P; ++p)
                v[p] = gh8_load(vec + j + p * stride);
        };
        auto count_set = [&](const uint4(&v)[P], unsigned j) {
#pragma unroll
            for (unsigned p = 0; p < P; ++p)
                count(v[p], j + p * stride);
        };
        uint4 a[P], b[P];
        if (full(i))
            load(a, i);
        while (full(i)) {
            unsigned n = i + P * stride;
            if (full(n))
                load(b, n);
            count_set(a, i);
            i = n;
            if (!full(i))
                break;
            n = i + P * stride;
            if (full(n))
                load(a, n);
            count_set(b, i);
            i = n;
        }
    }
    for (; i < nvec; i += stride)
        count(gh8_load(vec + i), i);

    gh8_tables_merge<H256_THREADS, unsigned long long>(
        s_hist, k, 0xffffffffu, [&](unsigned key, unsigned long long sum) {
            if (sum)
                atomicAdd(out + key, sum);
        });
}

static gpuhist_status h256_atomic_run(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                      const void *jobv, void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    return gh8_start(
        ctx, plan, job, GH_LP_HISTOGRAM256, H256_SMEM_PER_KEY, "cuda-histogram256",
        [&](auto cc) {
            /* prefetching for one channel only: it speeds up u8 hot90 / constant and costs
             * uniform / bell ~2%; several channels lose 2-5% with it (measured:
             * docs/PERFORMANCE.md, "Measurements behind the CUDA sources") */
            constexpr int C = decltype(cc)::value;
            if constexpr (C == 2 || C == 4) {
                /* live bytes per word: 4 / C times the histogrammed channels */
                const unsigned nlw = plan->active * 4u / (unsigned)C;
                if (nlw == 2u)
                    return h256_atomic_kernel<C, false, 2>;
                if constexpr (C == 4) {
                    if (nlw == 1u)
                        return h256_atomic_kernel<C, false, 1>;
                    if (nlw == 3u)
                        return h256_atomic_kernel<C, false, 3>;
                }
            }
            return h256_atomic_kernel<C, C == 1>;
        },
        [&](auto kernel, unsigned grid, const gh8_keys &k, size_t smem) -> gpuhist_status {
            return gh8_drive(
                ctx, job, k, out, GH8_MAX_LAUNCH_VECTORS,
                [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                    kernel<<<grid, H256_THREADS, smem, job->stream>>>(
                        vec, nvec, phase0, k, gh8_live_bytes(k, phase0), out);
                    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-histogram256 kernel");
                    return GPUHIST_OK;
                });
        });
}

/* ---- tagged software atomics (Listing 3, made safe under independent thread scheduling) ------- */

/* Add 1 to wh[key] for every lane with `pending`; all 32 lanes of the warp must call it
 * together. The proof of exactness and termination is in the banner. */
__device__ __forceinline__ void h256_tagged_add(volatile unsigned *wh, unsigned key, bool pending,
                                                unsigned tag)
{
    unsigned mine = 0;
    while (__any_sync(0xffffffffu, pending)) {
        if (pending)
            mine = tag | ((wh[key] & H256_COUNT_MASK) + 1u);
        __syncwarp();
        if (pending)
            atomicExch(const_cast<unsigned *>(wh + key), mine); /* see banner: exactness */
        __syncwarp();
        if (pending)
            pending = wh[key] != mine;
    }
}

template <int C>
__global__ void __launch_bounds__(H256_THREADS)
    h256_tagged_kernel(const uint4 *__restrict__ vec, unsigned nvec, unsigned phase0, gh8_keys k,
                       unsigned *__restrict__ partial)
{
    extern __shared__ unsigned s_hist[]; /* H256_WARPS tables of k.nkeys tagged counters */
    volatile unsigned *wh = gh8_tables_zero<H256_THREADS>(s_hist, k);

    const unsigned lane = threadIdx.x & 31u;
    const unsigned tag = lane << H256_COUNT_BITS;
    const unsigned stride = gridDim.x * H256_THREADS;
    /* The trip count follows lane 0, so it is the same for the whole warp: every lane must take
     * part in every round of h256_tagged_add, even past the end of the data. */
    for (unsigned base = blockIdx.x * H256_THREADS + (threadIdx.x & ~31u); base < nvec;
         base += stride) {
        const unsigned i = base + lane;
        const bool valid = i < nvec;
        const uint4 v = valid ? gh8_load(vec + i) : make_uint4(0u, 0u, 0u, 0u);
        int o[C];
        gh8_rotate<C>(k, gh8_phase<C>(phase0, i), o);
        gh8_for_each_key<C>(v, o, [&](unsigned key) { h256_tagged_add(wh, key, valid, tag); });
    }

    gh8_tables_merge<H256_THREADS, unsigned>(
        s_hist, k, H256_COUNT_MASK, [&](unsigned key, unsigned sum /* < 8 * 2^27 */) {
            partial[(size_t)blockIdx.x * k.nout + key] = sum;
        });
}

static gpuhist_status h256_tagged_run(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                      const void *jobv, void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    return gh8_start(
        ctx, plan, job, GH_LP_HISTOGRAM256, H256_SMEM_PER_KEY, "cuda-histogram256-tagged",
        [](auto cc) { return h256_tagged_kernel<decltype(cc)::value>; },
        [&](auto kernel, unsigned grid, const gh8_keys &k, size_t smem) -> gpuhist_status {
            void *scratch = NULL;
            gpuhist_status s =
                gpuhist_cuda_scratch(ctx, (size_t)grid * k.nout * sizeof(unsigned), &scratch);
            if (s != GPUHIST_OK)
                return s;
            unsigned *partial = (unsigned *)scratch;
            /* Each thread gets at most H256_TAGGED_STEPS vectors per launch: the 27-bit limit. */
            const uint64_t cap = (uint64_t)grid * H256_THREADS * H256_TAGGED_STEPS;
            return gh8_drive(
                ctx, job, k, out, cap,
                [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                    kernel<<<grid, H256_THREADS, smem, job->stream>>>(vec, nvec, phase0, k,
                                                                      partial);
                    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-histogram256-tagged kernel");
                    return gh8_merge(ctx, job, partial, grid, k.nout, out);
                });
        });
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_histogram256 = {
    "cuda-histogram256",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram256, Figure 3, Listing 4 with ATOMICS)",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); 1-4 "
    "interleaved channels, any active subset",
    "per-warp 256-value sub-histograms in shared memory, hardware shared atomics, 16-byte loads, "
    "block sums added to the output with 64-bit global atomics",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    h256_atomic_run,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_histogram256_tagged = {
    "cuda-histogram256-tagged",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram256, Listing 3 tagged software atomics, Listing 4 + merge kernel)",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); 1-4 "
    "interleaved channels, any active subset",
    "per-warp sub-histograms updated with 5-bit lane-tagged software atomics (__syncwarp-phased "
    "for independent thread scheduling), per-block rows merged by a second kernel",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    h256_tagged_run,
};
