/*
 * packed16.cuh - the packed 16-bit shared-memory counting engine, shared by cuda-fast-packed16
 * (fast_packed16.cu: u16 values and f32 slots in one block's shared memory) and cuda-two-pass
 * (two_pass.cu: its second pass counts 65536-key buckets). The full argument (carry accounting,
 * hot-key dummies, warp modes) is in fast_packed16.cu's banner; in short:
 *
 *  - key k lives in half k & 1 of shared word k >> 1; a thread adds inc = r << 16*(k&1) with a
 *    shared atomicAdd and never subtracts; the old value tells it exactly whether its add carried
 *    out of the low half or out of the word, and p16_wrap() then moves 2^16 into the 64-bit
 *    global counters. Carries flip bit 15 or 31, so a vector of adds is checked with one test.
 *  - hot mode: each thread keeps one hot key hk; a sample equal to hk goes to the thread's own
 *    dummy word (its own bank), flushed after each iteration (one atomic per warp when the lanes
 *    agree); a vector step in which every lane's keys all equal its hk issues no atomic at all
 *    (a register counts the hits). Warps switch between plain and hot mode warp-uniformly
 *    (probe() / flush()).
 *
 * The engine does not know where vectors come from or what their keys are: a kernel passes a
 * load and a key function to run() (the iteration structure) and owns the epilogue.
 */
#ifndef GPUHIST_CUDA_PACKED16_CUH
#define GPUHIST_CUDA_PACKED16_CUH

#include "common.cuh"

#define P16_THREADS 1024
#define P16_HOT_KEEP 8u       /* hk survives an iteration with at least this many hits */
#define P16_HOT_STAY 64u      /* a warp stays hot after an iteration with this many hits */
#define P16_NOKEY 0xFFFFFFFFu /* no key equals it: keys are < nkeys <= 2^17 */
#define P16_CARRY_BITS 0x80008000u

/* First of the P16_THREADS dummy words (one per thread: thread t's is in bank t % 32) after the
 * counters. */
__host__ __device__ __forceinline__ uint32_t p16_dummy(uint32_t nkeys)
{
    return ((nkeys + 1u) / 2u + 31u) & ~31u;
}

/* Shared memory of one block: the counter words, then the dummies. */
static inline size_t p16_smem(uint32_t nkeys)
{
    return ((size_t)p16_dummy(nkeys) + P16_THREADS) * 4u;
}

/* The carry accounting for one add of inc to key's word that returned old (rare path). */
__device__ __forceinline__ void p16_wrap(unsigned long long *out, uint32_t nkeys, uint32_t key,
                                         uint32_t old, uint32_t inc)
{
    const uint32_t now = old + inc;
    if (key & 1u) {
        if (now < old) /* the high half wrapped */
            atomicAdd(out + key, 0x10000ull);
    } else if ((old & 0xffffu) + inc > 0xffffu) { /* the low half carried into the high half */
        atomicAdd(out + key, 0x10000ull);
        if (key + 1u < nkeys) /* -1 for the carry, +0x10000 if it also wrapped the high half */
            atomicAdd(out + key + 1u, now < old ? 0xffffull : ~0ull);
    }
}

/* One thread's view of a block's packed counters. `out` receives the carries (and, through
 * add_one, nothing else): the 64-bit counters of keys [0, nkeys). */
struct p16_engine {
    uint32_t *w;               /* the block's counter words (shared memory) */
    unsigned long long *out;   /* 64-bit counters of key 0.. */
    uint32_t nkeys;
    uint32_t dummy;            /* this thread's dummy word */
    uint32_t lane;
    uint32_t hk;               /* hot key (P16_NOKEY: none) */
    uint32_t hits;             /* hot mode: hits of whole vectors on hk, not yet flushed */

    __device__ __forceinline__ void init(uint32_t *words, unsigned long long *o, uint32_t n,
                                         uint32_t tid)
    {
        w = words;
        out = o;
        nkeys = n;
        dummy = p16_dummy(n) + tid;
        lane = tid & 31u;
        hk = P16_NOKEY;
        hits = 0u;
    }

    /* Zero the counters and dummies (block-wide; the caller synchronises). */
    __device__ __forceinline__ void zero(uint32_t tid) const
    {
        for (uint32_t i = tid; i < p16_dummy(nkeys) + P16_THREADS; i += P16_THREADS)
            w[i] = 0u;
    }

    /* Add r (1 <= r <= 32768) to key, with the carry accounting. */
    __device__ __forceinline__ void add_one(uint32_t key, uint32_t r) const
    {
        const uint32_t inc = (key & 1u) ? (r << 16) : r;
        const uint32_t old = atomicAdd(w + (key >> 1), inc);
        if ((old ^ (old + inc)) & P16_CARRY_BITS)
            p16_wrap(out, nkeys, key, old, inc);
    }

    /* Count the VE keys of one vector: VE atomics back to back, one carry test. */
    /* SKIP (hot mode, converged warp only): the whole-warp skip below. */
    template <bool HOT, uint32_t VE, bool SKIP = false>
    __device__ __forceinline__ void count(const uint32_t (&key)[VE], uint32_t &lastk)
    {
        if (HOT && SKIP) {
            /* When every lane's vector is all hk, the warp issues no atomic at all: the VE hits
             * are kept in a register (constant data never touches shared memory). Warp-uniform
             * on purpose: letting single lanes skip (hot90 u16: ~43% of vectors) measured 2612
             * instead of 3022 GB/s on the H200, the other lanes' atomics still set the pace. */
            bool all = true;
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e)
                all = all && key[e] == hk;
            if (__all_sync(0xffffffffu, all)) {
                hits += VE;
                lastk = hk;
                return;
            }
        }
        uint32_t old[VE];
        uint32_t acc = 0;
#pragma unroll
        for (uint32_t e = 0; e < VE; ++e) {
            /* Straight-line, no predicated atomic (ptxas turns those into branches): a hit on hk
             * goes to this thread's own dummy word (its own bank, so hot lanes never serialise
             * on one address; the dummy holds the hit count), a miss to its key's half. H200,
             * u16/65536 hot90: one dummy word per warp instead measured 0.12 of the read ceiling
             * against 0.61 (same-address lanes of an atomic with return are serialised). */
            const uint32_t inc = (key[e] & 1u) * 0xffffu + 1u;
            const uint32_t word = HOT && key[e] == hk ? dummy : key[e] >> 1;
            old[e] = atomicAdd(w + word, inc);
            acc |= old[e] ^ (old[e] + inc);
        }
        lastk = key[VE - 1];
        if (acc & P16_CARRY_BITS) {
            /* Rare: recompute from laundered copies, so the compiler keeps no predicate of the
             * straight-line part alive for this path. */
            uint32_t h = hk;
            asm volatile("" : "+r"(h));
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e) {
                uint32_t k = key[e];
                asm volatile("" : "+r"(k));
                const uint32_t inc = (k & 1u) ? 0x10000u : 1u;
                if ((!HOT || k != h) && ((old[e] ^ (old[e] + inc)) & P16_CARRY_BITS))
                    p16_wrap(out, nkeys, k, old[e], inc);
            }
        }
    }

    /* After a hot iteration: flush the hits counted in the dummy (at most 32 per iteration in
     * either half; private to the thread) and in `hits` (at most 32 per iteration), maybe move
     * hk; stay hot while the warp had at least P16_HOT_STAY hits. The warp must be converged
     * here. */
    __device__ __forceinline__ bool flush(const uint32_t lastk)
    {
        const uint32_t d = w[dummy];
        w[dummy] = 0u;
        const uint32_t hc = (d & 0xffffu) + (d >> 16) + hits;
        hits = 0u;
        const uint32_t s = __reduce_add_sync(0xffffffffu, hc); /* <= 32 * 64 */
        const uint32_t hk0 = __shfl_sync(0xffffffffu, hk, 0);
        if (__all_sync(0xffffffffu, hk == hk0)) {
            if (lane == 0u && s != 0u)
                add_one(hk0, s);
        } else if (hc != 0u) {
            add_one(hk, hc);
        }
        if (hc < P16_HOT_KEEP)
            hk = lastk;
        return s >= P16_HOT_STAY;
    }

    /* After a plain iteration: go hot when at least 4 lanes saw their previous iteration's last
     * key again (uniform u16: ~32 / 65536 per iteration; hot90: ~26 lanes). */
    __device__ __forceinline__ bool probe(const uint32_t lastk)
    {
        const uint32_t same = __popc(__ballot_sync(0xffffffffu, lastk == hk));
        hk = lastk;
        return same >= 4u;
    }

    /* The counting loop over vectors [0, nvec) of a block: this block's iterations start at
     * `first` and advance by `step` (grid-stride: blockIdx.x * P16_THREADS * U and gridDim.x
     * times that; one block: 0 and P16_THREADS * U). Each iteration loads U vectors per thread
     * (load(i) returns vector i), turns each into VE keys (keys(v, key)) and counts them; full
     * iterations are straight-line, at most one partial iteration goes one vector at a time.
     * Warp-uniform mode: plain (no hot-key test) until probe() sees skew, hot until flush() sees
     * too few hits. The trip count is block-uniform, so warps are converged at flush() and
     * probe(). PF: the next iteration's U vectors are loaded before this one is counted (2U
     * vectors of registers). */
    template <uint32_t U, uint32_t VE, bool PF = false, class Load, class Keys>
    __device__ __forceinline__ void run(uint64_t first, const uint64_t step, const uint64_t nvec,
                                        const uint32_t tid, Load &&load, Keys &&keys)
    {
        /* hot: hot mode; skip: the warp is converged (full iterations), so count() may vote */
        auto do_vector = [&](const uint4 vv, uint32_t &lastk, auto hot, auto skip) {
            uint32_t key[VE];
            keys(vv, key);
            count<decltype(hot)::value, VE, decltype(skip)::value>(key, lastk);
        };
        uint64_t base = first;
        bool hot = false;
        auto full = [&](uint64_t b) { return b + P16_THREADS * U <= nvec; };
        auto load_set = [&](uint4(&v)[U], uint64_t b) {
#pragma unroll
            for (uint32_t u = 0; u < U; ++u)
                v[u] = load(b + u * P16_THREADS + tid);
        };
        uint4 nx[U]; /* PF: the next iteration's vectors */
        if (PF && full(base))
            load_set(nx, base);
        for (; full(base); base += step) {
            uint4 v[U];
            if (PF) {
#pragma unroll
                for (uint32_t u = 0; u < U; ++u)
                    v[u] = nx[u];
                if (full(base + step))
                    load_set(nx, base + step);
            } else {
                load_set(v, base);
            }
            uint32_t lastk = hk;
            if (hot) {
#pragma unroll
                for (uint32_t u = 0; u < U; ++u)
                    do_vector(v[u], lastk, std::true_type(), std::true_type());
                hot = flush(lastk);
            } else {
#pragma unroll
                for (uint32_t u = 0; u < U; ++u)
                    do_vector(v[u], lastk, std::false_type(), std::false_type());
                hot = probe(lastk);
            }
        }
        if (base < nvec) { /* at most one partial iteration per block: one vector at a time */
            const uint32_t rem = (uint32_t)(nvec - base);
            uint32_t lastk = hk;
#pragma unroll 1
            for (uint32_t u = 0; u < U; ++u)
                if (u * P16_THREADS + tid < rem)
                    do_vector(load(base + u * P16_THREADS + tid), lastk, std::true_type(),
                              std::false_type());
            (void)flush(lastk);
        }
    }

    /* Add the block's halves straight into out (block-wide, after a __syncthreads): one 64-bit
     * atomic per non-zero half. */
    __device__ __forceinline__ void add_to_out(uint32_t tid) const
    {
        const uint32_t nwords = (nkeys + 1u) / 2u;
        for (uint32_t j = tid; j < nwords; j += P16_THREADS) {
            const uint32_t v = w[j];
            if (v & 0xffffu)
                atomicAdd(out + 2u * j, (unsigned long long)(v & 0xffffu));
            if ((v >> 16) && 2u * j + 1u < nkeys)
                atomicAdd(out + 2u * j + 1u, (unsigned long long)(v >> 16));
        }
    }
};

#endif
