/*
 * fast_bytes.cu - cuda-fast-bytes: 8-bit value histograms (u8/i8, 1-4 interleaved channels)
 * without one shared-memory atomic per sample. Built for u8/256 and RGBA data.
 *
 * Why. Hopper's shared-memory atomics cap near 8.4 lane-updates per clock per SM
 * (docs/PERFORMANCE.md, "Hardware facts the CUDA strategies rely on"), so one atomic per byte
 * (cuda-histogram256) leaves uniform data near half the read ceiling. At 0.75 of a ~4480 GB/s
 * ceiling an SM must retire ~12.8 u8 samples per clock (132 SMs, ~1.98 GHz).
 *
 * Mechanism. Each thread owns private counters (one per byte value per histogrammed channel)
 * and updates them with plain shared loads and stores, no atomics:
 *   Layout. A "plane" is 256 rows (byte value b) x 256 bytes; row b holds the counter of value b
 *   of 256/sizeof(counter) thread-tables. Table t of thread (warp, lane) is group
 *   G = t * warps + warp; its counter of b is at   tc | b << 8,   tc = plane(G) << 16 |
 *   word-half(G) << 7 | lane << 2 | slot-in-word(G). Every counter of a lane lies in bank
 *   `lane`, so a warp's 32 accesses always hit 32 distinct banks (one wavefront), whatever the
 *   data. Byte 1 of tc is 0, so the address of byte j of an input word w is ONE PRMT:
 *   __byte_perm(w, tc, 0x7604 | j << 4).
 *   Counters. One histogram (u8/256, or one channel of several): 16-bit counters, 128-thread
 *   blocks (one 64 KiB plane, 3 blocks = 12 warps per SM). A launch gives a thread at most 4092
 *   vectors (65472 samples), so no counter can wrap: there is no overflow test at all. Several
 *   histograms (RGBA): 8-bit counters (K tables per thread: 256-thread blocks of 3 planes for
 *   K = 3, 8 warps per SM); a count of 256 wraps in the byte and hands 256 to a per-block 32-bit
 *   table with a shared atomic (one test per group of pairs, ~1 sample in 256 takes it).
 *   Latency. Two samples of one table may hit the same counter, so a thread's updates form a
 *   chain (shared load latency per link). Samples go in pairs: both loads, then both stores,
 *   each storing count + 2 when the two addresses are equal (order-free); for several channels
 *   the pairs of the K channels of two pixels are independent (2K loads in flight).
 *   SASS per pair (C = 1): 2 PRMT, ISETP, SEL, 2 LDS.U16, 2 IADD, 2 STS.U16 = 5 instructions per
 *   sample, ~5.6 per sample with loads, loop and the constant-run test.
 *   Input: U = 4 (2) 16-byte loads per thread per iteration, the next iteration's issued before
 *   the current one is counted; two register sets used alternately so vectors are never copied.
 * Constant runs (single channel). Each warp keeps a candidate value h (lane 0's first byte when
 *   the test fails); when all 32 x U x 16 bytes of an iteration equal h they are only counted
 *   in a register (added to `out` when the candidate changes and at the end). Costs ~0.2
 *   instructions per sample on other data. hot90 data (10% other values) takes the counting
 *   path, which is distribution-independent.
 * Merge: each thread sums one key over its block's counters (32-bit word loads, lane-rotated
 *   start so a warp hits 32 banks; dp4a for bytes), then one 64-bit global atomic per key.
 *
 * Cost model (H200). Shared wavefronts: 2 per 32 samples + 0.25 for the input (~2.25/32):
 *   the shared pipe caps at ~14 samples/clk/SM; issue at 5.6 instr/sample allows ~23. What binds
 *   first is latency: 12 warps per SM, each thread one pair chain (GPUHIST_FB_COUNTER_BITS=8
 *   selects the 8-bit variant, 24 warps at ~8.5 instr/sample, for comparison); constant data
 *   takes the register path. RGBA 3 of 4: ~4.5 instructions per input byte, the 4th channel's
 *   bytes are never touched; 8 warps with 6 loads in flight each. Measured below the model
 *   (docs/PERFORMANCE.md, "CUDA (NVIDIA H200)" and its u8 cell), so auto uses cuda-byte-pairs.
 * Hard limits. 16-bit: <= 4092 vectors per thread per launch; 8-bit: <= 2^27 vectors per block
 *   per launch (2^31 samples, so the 32-bit block table and merge sums cannot wrap); bigger jobs
 *   become several launches. Vector indices are 32-bit (launches of at most 2^30 vectors,
 *   byte_common.cuh). The unaligned head/tail bytes (< 32) go through gh8_loose_kernel.
 * Data dependence: none on the counting path; constant runs are faster.
 * Seed: 000 (histogram64's per-thread 8-bit counters in shared memory, bank-conflict-free column
 * layout) + 002 (sub-histograms); the PRMT addressing, 16-bit no-test counters, pairing, spill
 * and constant-run path are new.
 */
#include "byte_common.cuh"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FB_PLANE 65536u            /* one plane: 256 rows (byte values) x 256 bytes */
#define FB_FULL 0xffffffffu
#define FB_BLOCK_VECTORS (1ull << 27) /* 8-bit: vectors per block per launch (2^31 samples) */
#define FB_THREAD_VECTORS16 4092u     /* 16-bit: vectors per thread per launch (65472 samples) */

/* Per launch (the channel phase of the launch's first byte changes which byte position belongs
 * to which histogram). C = 1, 2, 4: byte position class m = j % C of vector byte j has a fixed
 * channel for the whole launch; the K histogrammed classes are listed in sel/tab. C = 3: the
 * phase changes from vector to vector, so the kernel rotates ctab per vector. */
struct fb_params {
    unsigned sel[GPUHIST_MAX_CHANNELS]; /* PRMT selector of histogrammed class k: 0x7604|pos<<4 */
    unsigned tab[GPUHIST_MAX_CHANNELS]; /* histogram of histogrammed class k */
    int ctab[GPUHIST_MAX_CHANNELS];     /* C == 3: histogram of input channel c, -1: skipped */
    unsigned phase0;                    /* C == 3: channel of byte 0 of vector 0 */
};

/* Geometry (see banner): S counters per 32-bit word, 2*S groups of 32 threads per plane. */
template <typename T>
struct fb_geo {
    static constexpr unsigned S = 4u / (unsigned)sizeof(T);
    static constexpr unsigned GPP = 2u * S;
};

/* Threads per block and vectors per thread per iteration for K tables of T counters. */
template <int K, typename T>
struct fb_cfg {
    /* 16-bit (K = 1 only): 128 threads = 4 groups = 1 plane; 8-bit: K * warps fills planes. */
    static constexpr int NT =
        sizeof(T) == 2 ? 128 : (K == 1 ? 256 : K == 2 ? 128 : K == 3 ? 256 : 64);
    static constexpr int U = (sizeof(T) == 1 && K == 1) ? 2 : 4;
    static constexpr unsigned W = (unsigned)NT / 32u;
    static constexpr unsigned PLANES = (K * W + fb_geo<T>::GPP - 1u) / fb_geo<T>::GPP;
    static constexpr size_t SMEM = (size_t)PLANES * FB_PLANE; /* dynamic; blk is static */
};

/* Address constant of table t for thread (warp, lane): the counter of byte value b is at
 * tc | b << 8 (byte 1 of tc is 0). Group G = t * W + warp, plane G / GPP, group-in-plane g. */
template <typename T, int NT>
__device__ __forceinline__ unsigned fb_tc(unsigned t, unsigned warp, unsigned lane)
{
    constexpr unsigned S = fb_geo<T>::S, GPP = fb_geo<T>::GPP, W = (unsigned)NT / 32u;
    const unsigned G = t * W + warp, g = G % GPP;
    return ((G / GPP) << 16) | ((g / S) << 7) | (lane << 2) | ((g % S) * (unsigned)sizeof(T));
}

/* Counter address of byte `pos` of w for address constant tc: ONE PRMT (byte 1 <- w.byte[pos],
 * bytes 0, 2, 3 <- tc). sel = 0x7604 | pos << 4. */
__device__ __forceinline__ unsigned fb_addr(unsigned w, unsigned tc, unsigned sel)
{
    return __byte_perm(w, tc, sel);
}

template <typename T>
__device__ __forceinline__ unsigned fb_ld(const unsigned char *s, unsigned a)
{
    return *(const T *)(s + a);
}
template <typename T>
__device__ __forceinline__ void fb_st(unsigned char *s, unsigned a, unsigned v)
{
    *(T *)(s + a) = (T)v;
}

/*
 * P independent pairs: pair k = two samples of table k (addresses a0[k], a1[k]); different k are
 * different tables, so they never alias. All loads, then all stores: both samples of an equal
 * pair load the same count and store count + 2, so the order of the stores does not matter.
 * 8-bit counters: a new count of 256 or 257 wraps in the byte and hands 256 to the block table.
 */
template <typename T, int P>
__device__ __forceinline__ void fb_pairs(unsigned char *s, unsigned *blk, const unsigned (&a0)[P],
                                         const unsigned (&a1)[P], const unsigned (&key)[P])
{
    unsigned n0[P], n1[P];
    bool same[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        n0[k] = fb_ld<T>(s, a0[k]);
        n1[k] = fb_ld<T>(s, a1[k]);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
        same[k] = a0[k] == a1[k];
        const unsigned inc = same[k] ? 2u : 1u;
        n0[k] += inc;
        n1[k] += inc;
        fb_st<T>(s, a0[k], n0[k]);
        fb_st<T>(s, a1[k], n1[k]);
    }
    if (sizeof(T) == 1) {
        unsigned acc = 0;
#pragma unroll
        for (int k = 0; k < P; ++k)
            acc |= n0[k] | n1[k];
        if (acc > 255u) { /* ~1 sample in 256 */
#pragma unroll
            for (int k = 0; k < P; ++k) {
                if (n0[k] > 255u)
                    atomicAdd(blk + key[k] + ((a0[k] >> 8) & 255u), 256u);
                if (n1[k] > 255u && !same[k])
                    atomicAdd(blk + key[k] + ((a1[k] >> 8) & 255u), 256u);
            }
        }
    }
}

/* C = 1, 2, 4: one vector. tc[k], p.sel[k], key[k]: histogrammed class k (launch-uniform). */
template <int C, int K, typename T>
__device__ __forceinline__ void fb_count(const uint4 &v, unsigned char *s, unsigned *blk,
                                         const unsigned (&tc)[K], const unsigned (&sel)[K],
                                         const unsigned (&key)[K])
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    if (C == 1) {
        /* pairs: bytes (0, 1) and (2, 3) of each word */
#pragma unroll
        for (int q = 0; q < 4; ++q) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const unsigned a0[1] = {fb_addr(w[q], tc[0], 0x7604u | (unsigned)(2 * h) << 4)};
                const unsigned a1[1] = {fb_addr(w[q], tc[0], 0x7604u | (unsigned)(2 * h + 1) << 4)};
                const unsigned k1[1] = {0u};
                fb_pairs<T, 1>(s, blk, a0, a1, k1);
            }
        }
    } else if (C == 2) {
        /* word = 2 pixels: class at positions pos and pos + 2 */
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            unsigned a0[K], a1[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                a0[k] = fb_addr(w[q], tc[k], sel[k]);
                a1[k] = fb_addr(w[q], tc[k], sel[k] + 0x20u);
            }
            fb_pairs<T, K>(s, blk, a0, a1, key);
        }
    } else { /* C == 4: word = 1 pixel; pairs = the same channel of two pixels */
#pragma unroll
        for (int q = 0; q < 4; q += 2) {
            unsigned a0[K], a1[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                a0[k] = fb_addr(w[q], tc[k], sel[k]);
                a1[k] = fb_addr(w[q + 1], tc[k], sel[k]);
            }
            fb_pairs<T, K>(s, blk, a0, a1, key);
        }
    }
}

/* C = 3: bytes j0 .. j0+NB-1 (NB <= 3 consecutive bytes: distinct channels, never alias).
 * rtc/rkey/ract[m]: class j % 3 == m of this vector (rotated by the vector's phase). */
template <typename T, int J0, int NB>
__device__ __forceinline__ void fb_count3_group(const unsigned (&w)[4], unsigned char *s,
                                                unsigned *blk, const unsigned (&rtc)[3],
                                                const unsigned (&rkey)[3], const bool (&ract)[3])
{
    unsigned a[NB], n[NB];
#pragma unroll
    for (int m = 0; m < NB; ++m) {
        const int j = J0 + m;
        a[m] = fb_addr(w[j >> 2], rtc[j % 3], 0x7604u | (unsigned)(j & 3) << 4);
        n[m] = 0;
        if (ract[j % 3])
            n[m] = fb_ld<T>(s, a[m]);
    }
    unsigned acc = 0;
#pragma unroll
    for (int m = 0; m < NB; ++m) {
        const int j = J0 + m;
        if (ract[j % 3]) {
            n[m] += 1u;
            fb_st<T>(s, a[m], n[m]);
            acc |= n[m];
        }
    }
    if (sizeof(T) == 1 && acc > 255u) {
#pragma unroll
        for (int m = 0; m < NB; ++m) {
            const int j = J0 + m;
            if (ract[j % 3] && n[m] > 255u)
                atomicAdd(blk + rkey[j % 3] + ((a[m] >> 8) & 255u), 256u);
        }
    }
}

template <typename T>
__device__ __forceinline__ void fb_count3(const uint4 &v, unsigned char *s, unsigned *blk,
                                          const unsigned (&rtc)[3], const unsigned (&rkey)[3],
                                          const bool (&ract)[3])
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
    fb_count3_group<T, 0, 3>(w, s, blk, rtc, rkey, ract);
    fb_count3_group<T, 3, 3>(w, s, blk, rtc, rkey, ract);
    fb_count3_group<T, 6, 3>(w, s, blk, rtc, rkey, ract);
    fb_count3_group<T, 9, 3>(w, s, blk, rtc, rkey, ract);
    fb_count3_group<T, 12, 3>(w, s, blk, rtc, rkey, ract);
    fb_count3_group<T, 15, 1>(w, s, blk, rtc, rkey, ract);
}

/* Sum of the counters in a 32-bit word. */
template <typename T>
__device__ __forceinline__ unsigned fb_word_sum(unsigned x, unsigned s)
{
    if (sizeof(T) == 1)
        return __dp4a(x, 0x01010101u, s);
    return s + (x & 0xffffu) + (x >> 16);
}

template <int C, int K, typename T>
__global__ void __launch_bounds__(fb_cfg<K, T>::NT)
    fb_kernel(const uint4 *__restrict__ vec, unsigned nvec, fb_params p,
              unsigned long long *__restrict__ out)
{
    constexpr int NT = fb_cfg<K, T>::NT;
    constexpr int U = fb_cfg<K, T>::U;
    constexpr unsigned W = fb_cfg<K, T>::W;
    constexpr unsigned S = fb_geo<T>::S, GPP = fb_geo<T>::GPP;
    extern __shared__ __align__(16) unsigned char fb_smem[];
    /* 8-bit: per-block 32-bit counts of the 256s handed over by wrapping counters. */
    __shared__ unsigned blk[sizeof(T) == 1 ? K * 256 : 1];
    unsigned char *tabs = fb_smem;
    const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    {
        constexpr unsigned n16 = (unsigned)(fb_cfg<K, T>::SMEM / 16u);
        uint4 *z = (uint4 *)fb_smem;
        for (unsigned i = tid; i < n16; i += NT)
            z[i] = make_uint4(0u, 0u, 0u, 0u);
        if (sizeof(T) == 1)
            for (unsigned i = tid; i < (unsigned)K * 256u; i += NT)
                blk[i] = 0u;
    }
    __syncthreads();

    /* C = 1, 2, 4: launch-uniform classes. */
    unsigned tc[K], sel[K], key[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        tc[k] = fb_tc<T, NT>(p.tab[k], warp, lane);
        sel[k] = p.sel[k];
        key[k] = p.tab[k] * 256u;
    }
    /* C = 3: per input channel, rotated per vector. */
    unsigned ctc[3] = {0u, 0u, 0u}, ckey[3] = {0u, 0u, 0u};
    bool cact[3] = {false, false, false};
    if (C == 3) {
#pragma unroll
        for (int c = 0; c < 3; ++c) {
            const int t = p.ctab[c];
            cact[c] = t >= 0;
            ctc[c] = fb_tc<T, NT>(t >= 0 ? (unsigned)t : 0u, warp, lane);
            ckey[c] = t >= 0 ? (unsigned)t * 256u : 0u;
        }
    }

    unsigned hot = 0, hv = 0; /* C == 1: warp-uniform hot value and per-lane count of it */
    const unsigned step = gridDim.x * (unsigned)(NT * U);
    unsigned base = blockIdx.x * (unsigned)(NT * U);

    /* Count vector x, vector index i. */
    auto count_one = [&](const uint4 &x, unsigned i) {
        if (C == 3) {
            unsigned ph = p.phase0 + i % 3u;
            if (ph >= 3u)
                ph -= 3u;
            unsigned rtc[3], rkey[3];
            bool ract[3];
#pragma unroll
            for (int m = 0; m < 3; ++m) {
                unsigned c = ph + (unsigned)m;
                if (c >= 3u)
                    c -= 3u;
                rtc[m] = c == 0u ? ctc[0] : c == 1u ? ctc[1] : ctc[2];
                rkey[m] = c == 0u ? ckey[0] : c == 1u ? ckey[1] : ckey[2];
                ract[m] = c == 0u ? cact[0] : c == 1u ? cact[1] : cact[2];
            }
            fb_count3<T>(x, tabs, blk, rtc, rkey, ract);
        } else {
            fb_count<C, K, T>(x, tabs, blk, tc, sel, key);
        }
    };

    /* One iteration: prefetch the next iteration's vectors into nxt, count cur. Two register
     * sets used alternately (ping-pong) so that no vector is ever copied. */
    auto iteration = [&](const uint4(&cur)[U], uint4(&nxt)[U], unsigned b) {
        const unsigned next = b + step; /* < 2^31: b < nvec <= 2^30 */
        if (next + (unsigned)(U * NT) <= nvec) { /* block-uniform: the usual case */
#pragma unroll
            for (int u = 0; u < U; ++u)
                nxt[u] = gh8_load(vec + next + (unsigned)u * NT + tid);
        } else if (next < nvec) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const unsigned i = next + (unsigned)u * NT + tid;
                nxt[u] = i < nvec ? gh8_load(vec + i) : make_uint4(0u, 0u, 0u, 0u);
            }
        }
        const bool full = b + (unsigned)(U * NT) <= nvec; /* block-uniform */
        if (C == 1) {
            /* Constant runs: the whole warp's U vectors equal to the hot value -> registers. */
            const unsigned hh = hv * 0x01010101u;
            if (__all_sync(FB_FULL, full && cur[0].x == hh)) {
                bool all = true;
#pragma unroll
                for (int u = 0; u < U; ++u)
                    all = all && cur[u].x == hh && cur[u].y == hh && cur[u].z == hh &&
                          cur[u].w == hh;
                if (__all_sync(FB_FULL, all)) {
                    hot += 16u * U;
                    return;
                }
            } else {
                /* New candidate: lane 0's first byte (after handing over the old one's count). */
                if (hot != 0u) { /* warp-uniform: every lane added the same */
                    if (lane == 0)
                        atomicAdd(out + hv, 32ull * hot);
                    hot = 0;
                }
                hv = __shfl_sync(FB_FULL, cur[0].x & 0xffu, 0);
            }
        }
        if (full) {
#pragma unroll
            for (int u = 0; u < U; ++u)
                count_one(cur[u], b + (unsigned)u * NT + tid);
        } else { /* the last iteration only */
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const unsigned i = b + (unsigned)u * NT + tid;
                if (i < nvec)
                    count_one(cur[u], i);
            }
        }
    };

    uint4 va[U], vb[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const unsigned i = base + (unsigned)u * NT + tid;
        va[u] = i < nvec ? gh8_load(vec + i) : make_uint4(0u, 0u, 0u, 0u);
    }
    /* The loop condition depends on `base` only: every thread of the block runs every
     * iteration, so the warp votes see full warps. */
    while (base < nvec) {
        iteration(va, vb, base);
        base += step;
        if (base >= nvec)
            break;
        iteration(vb, va, base);
        base += step;
    }
    if (C == 1 && hot != 0u && lane == 0)
        atomicAdd(out + hv, 32ull * hot);
    __syncthreads();

    /* Merge: thread takes key (table t, value b) and sums the counters of every thread of the
     * block in row b of t's groups, starting at a lane-rotated column so that a warp's loads hit
     * 32 banks. Sum <= the block's samples per launch (< 2^32). */
    for (unsigned kk = tid; kk < (unsigned)K * 256u; kk += NT) {
        const unsigned t = kk >> 8, b = kk & 255u;
        unsigned sum = sizeof(T) == 1 ? blk[kk] : 0u;
        if ((W % S) == 0) { /* t's groups fill whole words */
            for (unsigned G = t * W; G < t * W + W; G += S) {
                const unsigned row = ((G / GPP) << 16) | (b << 8) | (((G % GPP) / S) << 7);
#pragma unroll 8
                for (unsigned l0 = 0; l0 < 32u; ++l0) {
                    const unsigned l = (l0 + tid) & 31u;
                    sum = fb_word_sum<T>(*(const unsigned *)(tabs + (row | (l << 2))), sum);
                }
            }
        } else {
            for (unsigned wp = 0; wp < W; ++wp) {
#pragma unroll 8
                for (unsigned l0 = 0; l0 < 32u; ++l0) {
                    const unsigned l = (l0 + tid) & 31u;
                    sum += fb_ld<T>(tabs, fb_tc<T, NT>(t, wp, l) | (b << 8));
                }
            }
        }
        if (sum)
            atomicAdd(out + kk, (unsigned long long)sum);
    }
}

/* Counter width for single-histogram plans: 16 (default) or 8, from GPUHIST_FB_COUNTER_BITS
 * (a tuning knob for benchmark comparisons; both are exact). */
static int fb_bits_for(unsigned K)
{
    if (K != 1)
        return 8;
    const char *e = getenv("GPUHIST_FB_COUNTER_BITS");
    if (e && strcmp(e, "8") == 0)
        return 8;
    return 16;
}

template <int C, int K, typename T>
static gpuhist_status fb_go(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                            const gh8_keys &k, unsigned long long *out)
{
    constexpr int NT = fb_cfg<K, T>::NT;
    constexpr int U = fb_cfg<K, T>::U;
    constexpr size_t smem = fb_cfg<K, T>::SMEM;
    auto kernel = fb_kernel<C, K, T>;
    unsigned grid = 1;
    gh_launch_policy pol = gh_launch_policy_of(GH_LP_FAST_BYTES); /* the block per type: */
    pol.threads = (unsigned)NT;
    pol.items_per_thread = (unsigned)U;
    gpuhist_status s =
        gh8_grid(ctx, job, kernel, pol, smem, job->elements / GH8_VEC, &grid, "cuda-fast-bytes");
    if (s != GPUHIST_OK)
        return s;
    const uint64_t cap = sizeof(T) == 1 ? (uint64_t)grid * FB_BLOCK_VECTORS
                                        : (uint64_t)grid * NT * FB_THREAD_VECTORS16;
    return gh8_drive(ctx, job, k, out, cap,
                     [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                         fb_params p;
                         memset(&p, 0, sizeof p);
                         unsigned n = 0;
                         for (unsigned m = 0; m < (unsigned)C; ++m) {
                             const unsigned c = (phase0 + m) % (unsigned)C;
                             const int t = C == 1 ? 0 : (int)plan->channel_slot[c];
                             if (t >= 0 && n < (unsigned)K) {
                                 p.sel[n] = 0x7604u | (m << 4);
                                 p.tab[n] = (unsigned)t;
                                 ++n;
                             }
                         }
                         if (C != 3 && n != (unsigned)K)
                             return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                                 "cuda-fast-bytes: %u histogrammed channels, "
                                                 "expected %d",
                                                 n, K);
                         for (unsigned c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
                             p.ctab[c] =
                                 c < (unsigned)C && C != 1 ? (int)plan->channel_slot[c] : -1;
                         p.phase0 = phase0;
                         kernel<<<grid, NT, smem, job->stream>>>(vec, nvec, p, out);
                         GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-bytes kernel");
                         return GPUHIST_OK;
                     });
}

static gpuhist_status fb_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    gh8_keys k;
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    const unsigned C = plan->channels, K = C == 1 ? 1u : plan->active;
    const bool wide = fb_bits_for(K) == 16;
    typedef unsigned char u8;
    typedef unsigned short u16;
    switch (C * 8 + K) {
    case 1 * 8 + 1:
        return wide ? fb_go<1, 1, u16>(ctx, plan, job, k, out)
                    : fb_go<1, 1, u8>(ctx, plan, job, k, out);
    case 2 * 8 + 1:
        return wide ? fb_go<2, 1, u16>(ctx, plan, job, k, out)
                    : fb_go<2, 1, u8>(ctx, plan, job, k, out);
    case 2 * 8 + 2:
        return fb_go<2, 2, u8>(ctx, plan, job, k, out);
    case 3 * 8 + 1:
        return wide ? fb_go<3, 1, u16>(ctx, plan, job, k, out)
                    : fb_go<3, 1, u8>(ctx, plan, job, k, out);
    case 3 * 8 + 2:
        return fb_go<3, 2, u8>(ctx, plan, job, k, out);
    case 3 * 8 + 3:
        return fb_go<3, 3, u8>(ctx, plan, job, k, out);
    case 4 * 8 + 1:
        return wide ? fb_go<4, 1, u16>(ctx, plan, job, k, out)
                    : fb_go<4, 1, u8>(ctx, plan, job, k, out);
    case 4 * 8 + 2:
        return fb_go<4, 2, u8>(ctx, plan, job, k, out);
    case 4 * 8 + 3:
        return fb_go<4, 3, u8>(ctx, plan, job, k, out);
    case 4 * 8 + 4:
        return fb_go<4, 4, u8>(ctx, plan, job, k, out);
    default:
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-bytes: %u channels, %u active", C, K);
    }
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_bytes = {
    "cuda-fast-bytes",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram64 per-thread 8-bit counters), 002; new: PRMT addressing, 16-bit counters, "
    "spill",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); 1-4 "
    "interleaved channels, any active subset",
    "atomic-free per-thread 16-bit (one histogram) or 8-bit (several, spill at 256) counters in "
    "bank-private shared-memory columns, one PRMT per address, 16-byte loads; constant runs in "
    "registers",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    fb_run,
};
