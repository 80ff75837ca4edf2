/*
 * byte_pairs.cu - cuda-byte-pairs: u8/i8, one channel, counted two bytes at a time. Aimed at
 * issue 5's u8/256 cell, whose uniform and bell data every per-byte strategy leaves near 0.52-0.57
 * of the read ceiling on the H200: one shared atomic per byte at ~8.4 lane-updates per clock per
 * SM is the bound (the same GB/s on an H100, whose lower ceiling it meets at 0.76).
 *
 * Mechanism. The two bytes a (even offset) and b (odd offset) of each aligned 16-bit half-word
 * are one key k = a | b << 8 of a 65536-entry pair histogram P: one shared atomic counts two
 * samples. The value histogram is h[v] = sum_b P[v | b << 8] + sum_a P[a | v << 8] (every byte
 * is the low or the high byte of exactly one pair). P lives in 128 KiB of shared memory as 16-bit
 * counters packed two per word, with packed16.cuh's exact carry accounting (the atomic's old
 * value shows every carry out of a half; see fast_packed16.cu's banner for the proof), except
 * that a carry of key k is added to the 256 value counters of both its bytes (h is linear in P).
 * Pairs of skewed data collide on few keys, and an atomic whose old value is used serialises
 * same-address lanes (u16 hot90: 0.61 of the ceiling). So each warp also has its own 256-value
 * table of 32-bit counters fed by red.shared (no old value: same-address lanes merge, which is
 * how cuda-histogram256 reaches 0.96 on hot90), and counts each iteration of 3 vectors per
 * thread in one of two warp-uniform modes:
 *   pairs: 8 keys per 16-byte vector, 8 atomics with return and one carry test per vector;
 *   bytes: 16 red.shared per vector into the warp's table.
 * After each iteration the warp counts the lanes whose last pair key equals their previous
 * iteration's last key (uniform bytes: ~32 / 65536 lanes, bell ~0.001, 90% one value ~21):
 * four or more switch it to bytes for the next iteration, fewer back to pairs.
 * Epilogue: each block folds P's halves (both directions) and the warp tables into 256 sums
 * (warp reductions, shared atomics) and adds them to `out` with 256 64-bit global atomics.
 * Limits: one channel (the backend deinterleaves others), 161 KiB of shared memory (one block of
 * 1024 threads per SM), at most 2^26 vectors per block per launch (the 32-bit per-block sums).
 * Loads: 16-byte vectors of the aligned body, the next iteration's loaded before this one is
 * counted; the unaligned head and tail (< 16 bytes each) by byte_common.cuh's gh8_loose_kernel.
 * Seed: 002 (privatised shared histograms), 000 (histogram256's per-warp tables); counting pairs
 * of samples with one atomic is new.
 */
#include "byte_common.cuh"
#include "packed16.cuh"

namespace {

#define BP_THREADS P16_THREADS /* 1024: one block per SM */
#define BP_U 3u                /* vectors per thread per iteration (packed16's measured choice) */
#define BP_WARPS (BP_THREADS / 32u)
#define BP_PAIR_WORDS 32768u   /* 65536 16-bit pair counters */
#define BP_SWITCH 4u           /* lanes with a repeated pair key that turn a warp to bytes */
/* shared memory: pair words, one 256-value table per warp, the block's 256 sums */
#define BP_SMEM ((BP_PAIR_WORDS + BP_WARPS * GH8_VALUES + GH8_VALUES) * 4u)
#define BP_BLOCK_VECTORS (1u << 26) /* per block and launch: < 2^32 bytes, 32-bit sums */

/* A carry of pair key k moves d (mod 2^64) into the counts of both its bytes. */
__device__ __forceinline__ void bp_carry(unsigned long long *out, uint32_t k, unsigned long long d)
{
    atomicAdd(out + (k & 0xffu), d);
    atomicAdd(out + (k >> 8), d);
}

/* packed16.cuh's p16_wrap for pair keys: the exact carry accounting of one add (rare path). */
__device__ __forceinline__ void bp_wrap(unsigned long long *out, uint32_t k, uint32_t old,
                                        uint32_t inc)
{
    const uint32_t now = old + inc;
    if (k & 1u) {
        if (now < old) /* the high half wrapped */
            bp_carry(out, k, 0x10000ull);
    } else if ((old & 0xffffu) + inc > 0xffffu) { /* the low half carried into the high half */
        bp_carry(out, k, 0x10000ull);
        bp_carry(out, k + 1u, now < old ? 0xffffull : ~0ull);
    }
}

__global__ void __launch_bounds__(BP_THREADS, 1)
    bp_kernel(const uint4 *__restrict__ vec, const uint32_t nvec,
              unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) uint32_t bp_w[];
    uint32_t *tables = bp_w + BP_PAIR_WORDS;
    uint32_t *sums = tables + BP_WARPS * GH8_VALUES;
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    for (uint32_t i = tid; i < BP_PAIR_WORDS + BP_WARPS * GH8_VALUES + GH8_VALUES;
         i += BP_THREADS)
        bp_w[i] = 0u;
    __syncthreads();
    const uint32_t mine = (uint32_t)__cvta_generic_to_shared(tables + warp * GH8_VALUES);

    /* bytes mode: each byte of the vector into the warp's table */
    auto count_bytes = [&](const uint4 v) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (uint32_t i = 0; i < 4u; ++i)
#pragma unroll
            for (uint32_t j = 0; j < 4u; ++j)
                gh_red_shared(mine + ((w[i] >> (8u * j)) & 0xffu) * 4u);
    };
    /* pairs mode: 8 keys, 8 atomics back to back, one carry test (packed16.cuh's count) */
    auto count_pairs = [&](const uint4 v) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
        uint32_t key[8], old[8], acc = 0u;
#pragma unroll
        for (uint32_t e = 0; e < 8u; ++e) {
            key[e] = (w[e >> 1] >> (16u * (e & 1u))) & 0xffffu;
            const uint32_t inc = (key[e] & 1u) * 0xffffu + 1u;
            old[e] = atomicAdd(bp_w + (key[e] >> 1), inc);
            acc |= old[e] ^ (old[e] + inc);
        }
        if (acc & P16_CARRY_BITS) {
#pragma unroll
            for (uint32_t e = 0; e < 8u; ++e) {
                uint32_t k = key[e];
                asm volatile("" : "+r"(k)); /* keep the straight-line part free of this path */
                const uint32_t inc = (k & 1u) ? 0x10000u : 1u;
                if ((old[e] ^ (old[e] + inc)) & P16_CARRY_BITS)
                    bp_wrap(out, k, old[e], inc);
            }
        }
    };

    /* Full iterations: BP_U vectors per thread, block-uniform trip count, so warps are converged
     * at the vote; the next iteration's vectors are loaded before this one is counted. */
    const uint32_t per_iter = BP_THREADS * BP_U;
    const uint32_t step = gridDim.x * per_iter;
    uint32_t base = blockIdx.x * per_iter;
    bool bytes = false;
    uint32_t prev = 0xFFFFFFFFu; /* no pair key equals it */
    uint4 nx[BP_U];
    auto full = [&](uint32_t b) { return b < nvec && nvec - b >= per_iter; };
    if (full(base))
#pragma unroll
        for (uint32_t u = 0; u < BP_U; ++u)
            nx[u] = __ldcs(vec + base + u * BP_THREADS + tid);
    for (; full(base); base += step) {
        uint4 v[BP_U];
#pragma unroll
        for (uint32_t u = 0; u < BP_U; ++u)
            v[u] = nx[u];
        if (base + step > base && full(base + step))
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                nx[u] = __ldcs(vec + base + step + u * BP_THREADS + tid);
        if (bytes) {
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                count_bytes(v[u]);
        } else {
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                count_pairs(v[u]);
        }
        const uint32_t last = v[BP_U - 1u].w >> 16;
        bytes = __popc(__ballot_sync(0xffffffffu, last == prev)) >= BP_SWITCH;
        prev = last;
    }
    /* at most one partial iteration per block: bytes, vector by vector */
    for (uint32_t i = base + tid; base < nvec && i < nvec && i - base < per_iter; i += BP_THREADS)
        count_bytes(__ldcs(vec + i));
    __syncthreads();

    /* Fold: thread t sums value v = t % 256 as the low byte of the pairs with high byte in its
     * quarter, and the warp tables of its quarter of the warps; then, lanes on consecutive low
     * bytes a, the pairs a | v << 8 for the v of its quarter (one warp reduction per v). */
    const uint32_t v = tid & 0xffu, q = tid >> 8;
    auto half = [&](uint32_t k) { return (bp_w[k >> 1] >> (16u * (k & 1u))) & 0xffffu; };
    uint32_t s = 0u;
    for (uint32_t b = q * 64u; b < q * 64u + 64u; ++b)
        s += half(v | b << 8);
    for (uint32_t wi = q * (BP_WARPS / 4u); wi < (q + 1u) * (BP_WARPS / 4u); ++wi)
        s += tables[wi * GH8_VALUES + v];
    atomicAdd(sums + v, s);
    for (uint32_t hv = q * 64u; hv < q * 64u + 64u; ++hv) {
        const uint32_t r = __reduce_add_sync(0xffffffffu, half(v | hv << 8));
        if (lane == 0u && r)
            atomicAdd(sums + hv, r);
    }
    __syncthreads();
    if (tid < GH8_VALUES && sums[tid])
        atomicAdd(out + tid, (unsigned long long)sums[tid]);
}

static int bp_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 && BP_SMEM <= gpuhist_cuda_smem_optin(ctx);
}

static gpuhist_status bp_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    if (plan->channels != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-byte-pairs: interleaved channels are not handled");
    gh8_keys k = {};
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    unsigned grid = 1;
    st = gh8_grid(ctx, job, bp_kernel, (int)BP_THREADS, BP_SMEM, job->elements / GH8_VEC,
                  (uint64_t)BP_THREADS * BP_U, &grid, "cuda-byte-pairs");
    if (st != GPUHIST_OK)
        return st;
    return gh8_drive(ctx, job, k, out, (uint64_t)grid * BP_BLOCK_VECTORS,
                     [&](const uint4 *vec, unsigned nvec, unsigned) -> gpuhist_status {
                         bp_kernel<<<grid, BP_THREADS, BP_SMEM, job->stream>>>(vec, nvec, out);
                         GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-byte-pairs kernel");
                         return GPUHIST_OK;
                     });
}

} /* namespace */

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_byte_pairs = {
    "cuda-byte-pairs",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), 000 (per-warp tables); new: two bytes per atomic",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); one "
    "channel",
    "pairs of bytes as one key of a 65536-entry packed 16-bit shared histogram (one atomic per "
    "two samples, exact carries), per-warp 256-value red.shared tables while the data is skewed",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES,
    bp_supports,
    bp_run,
};
