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
 *  - hot mode, per sample (count()): each thread keeps one hot key hk; a sample equal to hk goes
 *    to the thread's own dummy word (its own bank), flushed with the hits of skipped vectors (a
 *    vector step in which every lane's keys all equal its hk issues no atomic at all); LEAN
 *    flushes every P16_FLUSH_EVERY iterations and votes less.
 *  - hot mode, halves (count_hot_halves, u16 values): one hot key per warp; a word-level mask
 *    finds the misses, hits only add to a register, the misses are counted in rounds of one
 *    atomic per lane. Warps switch between plain and hot mode warp-uniformly (probe() /
 *    flush()).
 *
 * The engine does not know where vectors come from or what their keys are: a kernel passes a
 * load and a key function to run() (the iteration structure) and owns the epilogue.
 */
#ifndef GPUHIST_CUDA_PACKED16_CUH
#define GPUHIST_CUDA_PACKED16_CUH

#include "common.cuh"

/* P16_THREADS (1024), the engine's block: launch_policy.h */
#define P16_HOT_KEEP 8u  /* hk survives a flush period with at least this many hits per iteration */
#define P16_HOT_STAY 64u /* a warp stays hot after a flush period with this many per iteration */
/* Hot iterations per flush (the lean hot mode). Per half, a dummy then holds at most
 * P16_FLUSH_EVERY * U * VE hits (8 * 4 * 8 = 256 in cuda-two-pass' pass 2), `hits` as many, and
 * a warp's flush at most 32 * 512: within the 2^15 limit of add_one. H200, u16/65536 hot90 (same
 * runs): every 4 iterations 0.746 / 0.741 of the read ceiling, every 8 0.751 / 0.758. */
#define P16_FLUSH_EVERY 8u
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

/* Halves hot mode (count_hot_halves): each thread's row of staged vectors, 4 U words padded to
 * an odd multiple of 4 words, so that a warp's 16-byte stores of one vector index meet no bank
 * twice (8 lanes x 4 words cover the 32 banks). */
__host__ __device__ constexpr uint32_t p16_row_words(uint32_t U)
{
    return (U & 1u) ? 4u * U : 4u * U + 4u;
}

/* Shared memory of one block with the halves hot mode: + one row per thread after the dummies. */
static inline size_t p16_smem_halves(uint32_t nkeys, uint32_t U)
{
    return p16_smem(nkeys) + (size_t)P16_THREADS * p16_row_words(U) * 4u;
}

/* uint4 per partial row of a block's counter words: the words rounded up to 4 (the words past
 * the counters, up to the dummies, stay 0). */
__host__ __device__ __forceinline__ uint32_t p16_row4(uint32_t nkeys)
{
    return ((nkeys + 1u) / 2u + 3u) / 4u;
}

/* Sums of the halves of one uint4 of counter words over partial rows: lo[i] / hi[i] the low /
 * high halves of word i (keys 2 (4 j4 + i) and the next). A half is below 2^16, so 2^16 rows fit
 * 32 bits. */
struct p16_halves {
    uint32_t lo[4] = {0u, 0u, 0u, 0u}, hi[4] = {0u, 0u, 0u, 0u};
    __device__ __forceinline__ void add(const uint4 v)
    {
        lo[0] += v.x & 0xffffu;
        hi[0] += v.x >> 16;
        lo[1] += v.y & 0xffffu;
        hi[1] += v.y >> 16;
        lo[2] += v.z & 0xffffu;
        hi[2] += v.z >> 16;
        lo[3] += v.w & 0xffffu;
        hi[3] += v.w >> 16;
    }
    /* One 64-bit atomic per non-zero sum into out (the keys of uint4 j4 below nkeys). */
    __device__ __forceinline__ void to_out(uint32_t j4, uint32_t nkeys,
                                           unsigned long long *out) const
    {
#pragma unroll
        for (uint32_t i = 0; i < 4u; ++i) {
            const uint32_t k = 2u * (4u * j4 + i);
            if (lo[i] && k < nkeys)
                atomicAdd(out + k, (unsigned long long)lo[i]);
            if (hi[i] && k + 1u < nkeys)
                atomicAdd(out + k + 1u, (unsigned long long)hi[i]);
        }
    }
};

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
    uint32_t hits;             /* hot mode: hits on hk counted in a register, not yet flushed */

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

    /* Count the VE keys of one vector: VE atomics back to back, one carry test (the per-sample
     * modes: plain, and hot with hits to the thread's dummy). SKIP (hot mode, converged warp
     * only): the whole-warp skip below, tried while try_skip (warp-uniform) holds; a failed try
     * clears it. */
    template <bool HOT, uint32_t VE, bool SKIP = false>
    __device__ __forceinline__ void count(const uint32_t (&key)[VE], uint32_t &lastk,
                                          bool &try_skip)
    {
        if (HOT && SKIP && try_skip) {
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
            try_skip = false;
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

    /* Hot mode for keys that are the 16-bit halves of the vectors in memory order (u16 values), one
     * full iteration of U vectors per thread; the warp must be converged. The per-sample hot mode
     * of count() pays a whole atomic slot for every sample, hit or not (~14.5 thread-instructions
     * per sample on u16 hot90, bound by the integer pipe; ncu, H200). Here a word-level test builds
     * a mask of the misses (~5 instructions per word), the hits only add to `hits`, and the misses
     * go to the counters in rounds: each round every lane takes one of its misses (its key re-read
     * from the thread's own shared row after the dummies, where the vectors were staged), lanes
     * without one add 0 to their dummy, and the warp loops while any lane has misses: ~6 rounds per
     * 24 keys on 90%-one-value data instead of 24 atomics. When no lane misses (constant data)
     * nothing is staged; after such an iteration the next one first tries the cheaper
     * all-words-equal vote. hk must be a key (< 65536): it is in hot mode, where probe() and
     * flush() set it from keys.
     * The rounds are not software-pipelined (the next key read before this atomic, carries
     * tested a round late): that costs more instructions than it hides. Measured against the
     * per-sample hot mode and the pipelined rounds: docs/PERFORMANCE.md, "u16, 65536 bins".
     * What bounds it: short-scoreboard stalls (each round waits for its key and its atomic) and
     * the integer pipe; the miss atomics still meet ~3.5-way bank conflicts.
     * cuda-two-pass' pass 2 keeps count()'s mode: its data rarely goes hot, and the rows' 64 KiB
     * of shared memory would cost f32 2^20 uniform and bell ~5% (docs/PERFORMANCE.md,
     * "Measurements behind the CUDA sources"). */
    template <uint32_t U>
    __device__ __forceinline__ void count_hot_halves(const uint4 (&v)[U], uint32_t &lastk,
                                                     bool &all_hit)
    {
        constexpr uint32_t NW = 4u * U;
        const uint32_t tid = dummy - p16_dummy(nkeys);
        uint32_t *const row = w + p16_dummy(nkeys) + P16_THREADS + tid * p16_row_words(U);
        static_assert(NW <= 16u, "a lane's misses fit one 32-bit mask");
        const uint32_t h2 = hk * 0x10001u;
        lastk = v[U - 1u].w >> 16;
        if (all_hit) { /* the iteration before was all hk: try the vote first */
            bool all = true;
#pragma unroll
            for (uint32_t u = 0; u < U; ++u)
                all = all && v[u].x == h2 && v[u].y == h2 && v[u].z == h2 && v[u].w == h2;
            if (__all_sync(0xffffffffu, all)) {
                hits += 2u * NW;
                return;
            }
        }
        /* Misses: bit i for the low half of word i, bit 16 + i for its high half. t has bit 15
         * (31) set when the low (high) half differs from hk: adding 0x7fff to the low 15 bits
         * carries into bit 15 unless they are zero, and never across halves. */
        uint32_t m = 0u;
#pragma unroll
        for (uint32_t i = 0; i < NW; ++i) {
            const uint32_t x = (i & 3u) == 0u   ? v[i / 4u].x
                               : (i & 3u) == 1u ? v[i / 4u].y
                               : (i & 3u) == 2u ? v[i / 4u].z
                                                : v[i / 4u].w;
            const uint32_t y = x ^ h2;
            const uint32_t t = (((y & 0x7fff7fffu) + 0x7fff7fffu) | y) & 0x80008000u;
            m += i == 15u ? t : __umulhi(t, 1u << (17u + i)); /* bits 15, 31 -> i, 16 + i */
        }
        hits += 2u * NW - (uint32_t)__popc(m);
        all_hit = !__any_sync(0xffffffffu, m != 0u);
        if (all_hit)
            return;
#pragma unroll
        for (uint32_t u = 0; u < U; ++u)
            reinterpret_cast<uint4 *>(row)[u] = v[u];
        const uint16_t *keys = reinterpret_cast<const uint16_t *>(row);
        do {
            const bool has = m != 0u;
            const uint32_t b = has ? 31u - (uint32_t)__clz(m) : 0u;
            m &= ~(1u << b);
            const uint32_t key = keys[2u * (b & 15u) + (b >> 4)];
            const uint32_t inc = has ? (key & 1u) * 0xffffu + 1u : 0u;
            const uint32_t old = atomicAdd(w + (has ? key >> 1 : dummy), inc);
            if ((old ^ (old + inc)) & P16_CARRY_BITS) /* rare; an add of 0 never carries */
                p16_wrap(out, nkeys, key, old, inc);
        } while (__any_sync(0xffffffffu, m != 0u));
    }

    /* The candidate most lanes of the warp hold (ties: the lowest such lane's); converged warp. */
    __device__ __forceinline__ uint32_t warp_mode(const uint32_t c) const
    {
        const uint32_t peers = __match_any_sync(0xffffffffu, c);
        const uint32_t best =
            __reduce_max_sync(0xffffffffu, (uint32_t)__popc(peers) << 5 | (31u - lane));
        return __shfl_sync(0xffffffffu, c, 31u - (best & 31u));
    }

    /* After `iters` hot iterations: flush the hits counted in the dummy (private to the thread)
     * and in `hits` (at most P16_FLUSH_EVERY * U * VE each, see there), maybe move hk (fewer
     * than P16_HOT_KEEP hits per iteration); stay hot while the warp had at least P16_HOT_STAY
     * hits per iteration. The warp must be converged here.
     * UNIFORM (the halves hot mode): one hot key for the whole warp, the candidate most lanes
     * hold. With a key per lane, the ~10% of lanes whose last key was a miss on 90%-one-value
     * data count every sample as a miss until the next flush, and the warp runs as many rounds
     * as its worst lane: u16/65536 hot90 0.69-0.70 of the read ceiling, 0.745 with one key per
     * warp (H200). */
    template <bool UNIFORM = false>
    __device__ __forceinline__ bool flush(const uint32_t lastk, const uint32_t iters = 1u)
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
        const uint32_t cand = hc < P16_HOT_KEEP * iters ? lastk : hk;
        hk = UNIFORM ? warp_mode(cand) : cand;
        return s >= P16_HOT_STAY * iters;
    }

    /* After a plain iteration: go hot when at least 4 lanes saw their previous iteration's last
     * key again (uniform u16: ~32 / 65536 per iteration; hot90: ~26 lanes). UNIFORM: going hot,
     * the warp takes the last key most lanes hold (see flush). */
    template <bool UNIFORM = false>
    __device__ __forceinline__ bool probe(const uint32_t lastk)
    {
        const uint32_t same = __popc(__ballot_sync(0xffffffffu, lastk == hk));
        hk = UNIFORM && same >= 4u ? warp_mode(lastk) : lastk;
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
     * vectors of registers). LEAN: hot warps flush every P16_FLUSH_EVERY iterations and try the
     * whole-warp skip only while it succeeds (else: both every iteration, every vector). HALVES:
     * the keys are the vectors' 16-bit halves in memory order, and hot iterations go to
     * count_hot_halves (the block's shared memory needs p16_smem_halves). */
    template <uint32_t U, uint32_t VE, bool PF = false, bool LEAN = true, bool HALVES = false,
              class Load, class Keys>
    __device__ __forceinline__ void run(uint64_t first, const uint64_t step, const uint64_t nvec,
                                        const uint32_t tid, Load &&load, Keys &&keys)
    {
        /* hot: hot mode; skip: the warp is converged (full iterations), so count() may vote */
        auto do_vector = [&](const uint4 vv, uint32_t &lastk, bool &try_skip, auto hot,
                             auto skip) {
            uint32_t key[VE];
            keys(vv, key);
            count<decltype(hot)::value, VE, decltype(skip)::value>(key, lastk, try_skip);
        };
        uint64_t base = first;
        bool hot = false;
        uint32_t since = 0; /* hot iterations not flushed yet */
        auto full = [&](uint64_t b) { return b + P16_THREADS * U <= nvec; };
        auto load_set = [&](uint4(&v)[U], uint64_t b) {
#pragma unroll
            for (uint32_t u = 0; u < U; ++u)
                v[u] = load(b + u * P16_THREADS + tid);
        };
        bool all_hit = false; /* HALVES: the last hot iteration had no miss in the warp */
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
                /* LEAN: the whole-warp skip is tried on the iteration's first vector and on the
                 * next ones only while it succeeds (90%-one-value data never skips; constant data
                 * always does), and the hits are flushed every P16_FLUSH_EVERY iterations. */
                if constexpr (HALVES) {
                    count_hot_halves<U>(v, lastk, all_hit);
                } else {
                    bool try_skip = true;
#pragma unroll
                    for (uint32_t u = 0; u < U; ++u) {
                        if (!LEAN)
                            try_skip = true;
                        do_vector(v[u], lastk, try_skip, std::true_type(), std::true_type());
                    }
                }
                if (++since == (LEAN ? P16_FLUSH_EVERY : 1u)) {
                    hot = flush<HALVES>(lastk, since);
                    since = 0;
                }
            } else {
                bool no_skip = false;
#pragma unroll
                for (uint32_t u = 0; u < U; ++u)
                    do_vector(v[u], lastk, no_skip, std::false_type(), std::false_type());
                hot = probe<HALVES>(lastk);
            }
        }
        if (base < nvec) { /* at most one partial iteration per block: one vector at a time */
            const uint32_t rem = (uint32_t)(nvec - base);
            uint32_t lastk = hk;
            bool no_skip = false;
#pragma unroll 1
            for (uint32_t u = 0; u < U; ++u)
                if (u * P16_THREADS + tid < rem)
                    do_vector(load(base + u * P16_THREADS + tid), lastk, no_skip,
                              std::true_type(), std::false_type());
            (void)flush(lastk); /* also the hot iterations not flushed yet */
        } else if (since != 0u) {
            (void)flush(hk); /* nothing may stay in the dummies or in `hits` */
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
