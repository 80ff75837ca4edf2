/*
 * fast_bytes.cu - cuda-fast-bytes: 8-bit value histograms (u8/i8, 1-4 interleaved channels)
 * without one shared-memory atomic per sample. Aimed at issue 5's u8/256 and RGBA cells.
 *
 * Why. Hopper's shared-memory atomics cap near 8.4 lane-updates per clock per SM (DESIGN.md
 * section 5: 2190-2282 GB/s on an H200, ~0.5 of the 4363 GB/s read ceiling). Reading at the
 * ceiling needs ~18.8 bytes per clock per SM (4363 GB/s / 132 SMs / ~1.76-1.98 GHz), so the u8
 * target (0.75) needs ~14 samples per clock per SM.
 *
 * Mechanism (counting path, every distribution, every channel layout).
 *   Each thread owns private 8-bit counters (one byte per value per histogrammed channel) and
 *   updates them with a plain load / add / store (LDS.U8, IADD, STS.U8): no atomics. Layout: a
 *   "plane" is 64 rows x 256 columns of 32-bit words (64 KiB); thread t's table for histogram k is
 *   column c = lane + 32 * (k + K * warp) (K = histogrammed channels); value b sits in row b >> 2,
 *   byte b & 3 of that word. Every word of a column lies in bank c % 32 = lane, so a warp's 32
 *   accesses hit 32 different banks whatever the data (one wavefront each). The byte address is
 *       ((b * 0x101) & 0xfc03) | col   (col = plane << 16 | (c & 255) << 2, fixed per thread)
 *   and b * 0x101 comes straight from the input word with one PRMT, so addressing is 2 ALU
 *   instructions. An 8-bit counter that would wrap (255 + 1) hands 256 to a per-block 32-bit
 *   table with a shared atomic and keeps counting from 0 (one rare, predicted-not-taken branch;
 *   checked once per group of samples by OR-ing the new values).
 *   Dependencies: two updates of the same thread may hit the same byte, so they are a chain
 *   (load latency ~30 clk per link). To overlap links: single channel, samples go in pairs - both
 *   loads, then both stores, the second sample of an equal pair adding 2 (its store wins); several
 *   channels, the C bytes of a pixel belong to C different tables, so they never alias.
 *   Per sample (single channel): PRMT, LOP3, LDS.U8, IADD, STS.U8 + ~1 for pairing/overflow:
 *   ~6.5-7.5 issue slots (128 lane-slots/clk/SM -> ~17-19 samples/clk) and 2 shared wavefronts
 *   per 32 samples (-> 16 samples/clk/SM, the binding limit). Occupancy: 64 KiB + 1 KiB per
 *   256-thread block, 3 blocks (24 warps) per SM; a warp's chain of ~35 clk per pair gives
 *   24 x 64 / 35 = 44 samples/clk of latency headroom. Two 16-byte loads per thread per
 *   iteration, the next iteration's loads issued before the current vectors are counted (24 KiB
 *   in flight per SM, enough to cover ~1 us of HBM latency at 18.8 B/clk).
 *   PREDICTION (H200, 132 SMs at ~1.9 GHz): ~12-14 samples/clk/SM -> 3.0-3.5 TB/s = 0.70-0.80 of
 *   the read ceiling on uniform and bell data; data-independent (no conflicts, no contention).
 *   RGBA with 3 histogrammed channels: K = 3 -> one 256-thread block per SM (3 planes, 195 KiB),
 *   8 warps with 3 independent updates per pixel, the 4th byte skipped: ~12 updates/clk ->
 *   16 input bytes/clk -> ~0.8 of the ceiling (less certain: 8 warps barely cover load latency).
 *
 * Skewed data (single channel only). Counting path is distribution-independent (~0.75), but the
 * target for hot90/constant is 0.95. Each warp keeps a candidate hot value h (warp-uniform) and
 * a per-thread register count of it. Every iteration one word per lane is compared with h (exact
 * zero-byte test, POPC, one warp REDUX): if at least half of those 128 bytes equal h, the
 * iteration's vectors go the "hot" way: a lane whose 16 bytes all equal h adds 16 to its register;
 * otherwise matching bytes are counted by POPC and only the others take a shared atomic on the
 * block's 32-bit table (10% of the samples for hot90, far below the atomic cap). If the test fails
 * the candidate becomes lane 0's first byte (after flushing the register count of the old one),
 * so a hot value is found within an iteration or two and kept. Constant data: ~8 instructions per
 * 16 bytes; hot90: ~5 per sample and atomics on 10% -> both predicted memory-bound (~0.95).
 *
 * Hard limits. 8-bit counters never wrap (spill at 256). Per-block 32-bit table: a launch gives
 * each block at most 2^27 16-byte vectors (2^31 samples), so no 32-bit count can wrap; bigger
 * jobs become several launches. Vector indices are 32-bit (launches of at most 2^30 vectors,
 * byte_common.cuh). The unaligned head/tail bytes (< 32) go through gh8_loose_kernel. The final
 * merge (each thread sums one key over all columns of its block, conflict-free by rotating the
 * start column per lane) costs ~2.5% of the counting work for 1 GiB.
 * Data dependence: none for the counting path; hot path faster when one value dominates.
 * Seed: 000 (histogram64's per-thread 8-bit counters in shared memory, bank-conflict-free column
 * layout) + 002 (sub-histograms); the PRMT addressing, overflow spill and hot-value path are new.
 */
#include "byte_common.cuh"

#include <stdint.h>

#define FB_PLANE 65536u   /* bytes of one plane: 64 rows x 256 columns x 4 bytes */
#define FB_U 2            /* 16-byte vectors per thread per iteration */
#define FB_HOT_MIN 64u    /* of 128 sampled bytes per warp: take the hot path */
#define FB_FULL 0xffffffffu
/* Vectors one block may count per launch: 2^27 x 16 = 2^31 samples < 2^32. */
#define FB_BLOCK_VECTORS (1ull << 27)

/* Threads per block for K histogrammed channels: K * threads columns must fill whole planes
 * (K = 1: 256 threads, 1 plane, 3 blocks/SM; K = 2: 128, 1 plane, 3 blocks/SM; K = 3: 256,
 * 3 planes, 1 block/SM; K = 4: 64, 1 plane, 3 blocks/SM). */
static inline int fb_threads_for(unsigned K)
{
    switch (K) {
    case 1:
        return 256;
    case 2:
        return 128;
    case 3:
        return 256;
    default:
        return 64;
    }
}

struct fb_params {
    int tab[GPUHIST_MAX_CHANNELS]; /* histogram of input channel c, -1: not counted */
    unsigned K;                    /* histogrammed channels (tables) */
    unsigned planes;               /* 64 KiB planes of per-thread counters per block */
};

/* Column constant of table k of this thread (see banner). */
template <int NT>
__device__ __forceinline__ unsigned fb_col(unsigned k, unsigned K, unsigned tid)
{
    unsigned c = (tid & 31u) + 32u * (k + K * (tid >> 5));
    return ((c >> 8) << 16) | ((c & 255u) << 2);
}

/* b * 0x101 for byte j (0..3) of w: one PRMT. */
__device__ __forceinline__ unsigned fb_dup(unsigned w, int j)
{
    return __byte_perm(w, 0u, 0x4400u | ((unsigned)j << 4) | (unsigned)j);
}

/* Exact zero-byte test: bit 7 of each byte of the result is set iff that byte of y is 0. */
__device__ __forceinline__ unsigned fb_zero_bytes(unsigned y)
{
    unsigned t = (y & 0x7f7f7f7fu) + 0x7f7f7f7fu;
    return ~(t | y | 0x7f7f7f7fu);
}

/* Single channel: the 16 bytes of one vector, in pairs (see banner). */
__device__ __forceinline__ void fb_count1(const uint4 &v, unsigned char *tabs, unsigned *blk,
                                          unsigned col)
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int p = 0; p < 8; ++p) {
        const int j0 = 2 * p, j1 = 2 * p + 1;
        const unsigned d0 = fb_dup(w[j0 >> 2], j0 & 3);
        const unsigned d1 = fb_dup(w[j1 >> 2], j1 & 3);
        const unsigned a0 = (d0 & 0xfc03u) | col;
        const unsigned a1 = (d1 & 0xfc03u) | col;
        const unsigned c0 = tabs[a0];
        const unsigned c1 = tabs[a1];
        const unsigned same = a0 == a1 ? 1u : 0u;
        const unsigned n1 = c1 + 1u;
        const unsigned n0 = c0 + 1u + same; /* equal pair: c0 == c1, this store lands last */
        tabs[a1] = (unsigned char)n1;
        tabs[a0] = (unsigned char)n0;
        if ((n0 | n1) >= 256u) { /* rare: a counter passed 255 */
            if (n0 >= 256u)
                atomicAdd(blk + (d0 & 0xffu), 256u);
            if (n1 >= 256u && !same)
                atomicAdd(blk + (d1 & 0xffu), 256u);
        }
    }
}

/* C > 1: the bytes of a vector whose byte 0 has channel phase; col[m]/key[m]/act[m] describe
 * the channel of bytes j with j % C == m (already rotated by the phase). Bytes of one group of C
 * consecutive bytes have C distinct channels, hence distinct tables: all loads, then all stores. */
template <int C>
__device__ __forceinline__ void fb_countc(const uint4 &v, unsigned char *tabs, unsigned *blk,
                                          const unsigned (&col)[C], const unsigned (&key)[C],
                                          const bool (&act)[C])
{
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int g = 0; g * C < 16; ++g) {
        unsigned d[C], a[C], n[C];
        unsigned any = 0;
#pragma unroll
        for (int m = 0; m < C; ++m) {
            const int j = g * C + m;
            n[m] = 0;
            if (j < 16 && act[m]) {
                d[m] = fb_dup(w[j >> 2], j & 3);
                a[m] = (d[m] & 0xfc03u) | col[m];
                n[m] = tabs[a[m]];
            }
        }
#pragma unroll
        for (int m = 0; m < C; ++m) {
            const int j = g * C + m;
            if (j < 16 && act[m]) {
                n[m] += 1u;
                tabs[a[m]] = (unsigned char)n[m];
                any |= n[m];
            }
        }
        if (any >= 256u) {
#pragma unroll
            for (int m = 0; m < C; ++m) {
                const int j = g * C + m;
                if (j < 16 && act[m] && n[m] >= 256u)
                    atomicAdd(blk + key[m] + (d[m] & 0xffu), 256u);
            }
        }
    }
}

/* Single channel, hot iteration: bytes equal to the warp's hot value h go to the register count,
 * the others to the block table with shared atomics. */
__device__ __forceinline__ void fb_count_hot(const uint4 &v, unsigned hh, unsigned *blk,
                                             unsigned &hot)
{
    if (v.x == hh && v.y == hh && v.z == hh && v.w == hh) {
        hot += 16u;
        return;
    }
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const unsigned z = fb_zero_bytes(w[q] ^ hh);
        hot += __popc(z);
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (!((z >> (8 * j + 7)) & 1u))
                atomicAdd(blk + ((w[q] >> (8 * j)) & 0xffu), 1u);
    }
}

/* Add the warp's register count of hot value hv to the block table. */
__device__ __forceinline__ void fb_flush_hot(unsigned &hot, unsigned hv, unsigned *blk)
{
    const unsigned s = __reduce_add_sync(FB_FULL, hot); /* <= 2^31: block samples per launch */
    if ((threadIdx.x & 31u) == 0 && s)
        atomicAdd(blk + hv, s);
    hot = 0;
}

template <int C, int NT>
__global__ void __launch_bounds__(NT)
    fb_kernel(const uint4 *__restrict__ vec, unsigned nvec, unsigned phase0, fb_params p,
              unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fb_smem[];
    unsigned char *tabs = fb_smem;
    unsigned *blk = (unsigned *)(fb_smem + (size_t)p.planes * FB_PLANE);
    const unsigned K = p.K;
    const unsigned tid = threadIdx.x;
    {
        const unsigned n16 = (p.planes * FB_PLANE + K * 1024u) / 16u;
        uint4 *z = (uint4 *)fb_smem;
        for (unsigned i = tid; i < n16; i += NT)
            z[i] = make_uint4(0u, 0u, 0u, 0u);
    }
    __syncthreads();

    /* Per byte class m (= byte index % C): column constant, table key offset, counted? For
     * C = 1, 2, 4 the phase is the launch's (16 % C == 0); C = 3 rotates per vector. */
    unsigned col[C], key[C];
    bool act[C];
    unsigned coltab[GPUHIST_MAX_CHANNELS];
#pragma unroll
    for (int c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        coltab[c] = fb_col<NT>(p.tab[c] < 0 ? 0u : (unsigned)p.tab[c], K, tid);
    auto rotate = [&](unsigned phase) {
#pragma unroll
        for (int m = 0; m < C; ++m) {
            unsigned c = phase + (unsigned)m;
            if (c >= (unsigned)C)
                c -= (unsigned)C;
            int t = p.tab[0];
            unsigned cc = coltab[0];
#pragma unroll
            for (int q = 1; q < C; ++q)
                if (c == (unsigned)q) {
                    t = p.tab[q];
                    cc = coltab[q];
                }
            act[m] = t >= 0;
            key[m] = t >= 0 ? (unsigned)t * 256u : 0u;
            col[m] = cc;
        }
    };
    rotate(phase0);

    unsigned hot = 0, hv = 0; /* warp-uniform hot value, per-thread count of it (C == 1) */
    const unsigned step = gridDim.x * (unsigned)(NT * FB_U);
    unsigned base = blockIdx.x * (unsigned)(NT * FB_U);
    uint4 v[FB_U];
#pragma unroll
    for (int u = 0; u < FB_U; ++u) {
        const unsigned i = base + (unsigned)u * NT + tid;
        v[u] = i < nvec ? gh8_load(vec + i) : make_uint4(0u, 0u, 0u, 0u);
    }
    /* The loop condition depends on `base` only: every thread of the block runs every
     * iteration, so the warp collectives below see full warps. */
    while (base < nvec) {
        uint4 cur[FB_U];
#pragma unroll
        for (int u = 0; u < FB_U; ++u)
            cur[u] = v[u];
        const unsigned next = base + step;
        if (next < nvec) { /* block-uniform; next < 2^31 (nvec <= 2^30) */
#pragma unroll
            for (int u = 0; u < FB_U; ++u) {
                const unsigned i = next + (unsigned)u * NT + tid;
                v[u] = i < nvec ? gh8_load(vec + i) : make_uint4(0u, 0u, 0u, 0u);
            }
        }
        bool ok[FB_U];
#pragma unroll
        for (int u = 0; u < FB_U; ++u)
            ok[u] = base + (unsigned)u * NT + tid < nvec;

        if (C == 1) {
            const unsigned hh = hv * 0x01010101u;
            const unsigned m = ok[0] ? (unsigned)__popc(fb_zero_bytes(cur[0].x ^ hh)) : 0u;
            const unsigned cand = __shfl_sync(FB_FULL, cur[0].x & 0xffu, 0);
            if (__reduce_add_sync(FB_FULL, m) >= FB_HOT_MIN) {
#pragma unroll
                for (int u = 0; u < FB_U; ++u)
                    if (ok[u])
                        fb_count_hot(cur[u], hh, blk, hot);
            } else {
                if (cand != hv) {
                    fb_flush_hot(hot, hv, blk);
                    hv = cand;
                }
#pragma unroll
                for (int u = 0; u < FB_U; ++u)
                    if (ok[u])
                        fb_count1(cur[u], tabs, blk, col[0]);
            }
        } else {
#pragma unroll
            for (int u = 0; u < FB_U; ++u) {
                if (!ok[u])
                    continue;
                if (C == 3)
                    rotate(gh8_phase<C>(phase0, base + (unsigned)u * NT + tid));
                fb_countc<C>(cur[u], tabs, blk, col, key, act);
            }
        }
        base = next;
    }
    if (C == 1)
        fb_flush_hot(hot, hv, blk);
    __syncthreads();

    /* Merge: thread takes key (table k, value b) and sums the block table and the byte of every
     * thread's column; lane-rotated start column so a warp's loads hit 32 banks. The sum is at
     * most the block's samples (<= 2^31) and fits 32 bits. */
    for (unsigned kk = tid; kk < K * 256u; kk += NT) {
        const unsigned k = kk >> 8, b = kk & 255u;
        const unsigned rowbyte = ((b >> 2) << 10) | (b & 3u);
        unsigned s = blk[kk];
        for (unsigned u0 = 0; u0 < (unsigned)NT; ++u0) {
            unsigned u = u0 + tid;
            if (u >= (unsigned)NT)
                u -= (unsigned)NT; /* tid < NT */
            s += tabs[rowbyte | fb_col<NT>(k, K, u)];
        }
        if (s)
            atomicAdd(out + kk, (unsigned long long)s);
    }
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
    fb_params p;
    for (int c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        p.tab[c] = -1;
    for (unsigned c = 0; c < plan->channels; ++c)
        p.tab[c] = plan->channels == 1 ? 0 : plan->channel_slot[c];
    p.K = plan->channels == 1 ? 1u : plan->active;
    const int nt = fb_threads_for(p.K);
    p.planes = (unsigned)((p.K * (unsigned)nt + 255u) / 256u);
    const size_t smem = (size_t)p.planes * FB_PLANE + (size_t)p.K * 1024u;

    auto go = [&](auto kernel, int threads) -> gpuhist_status {
        unsigned grid = 1;
        gpuhist_status s = gh8_grid(ctx, job, kernel, threads, smem, job->elements / GH8_VEC,
                                    (uint64_t)threads * FB_U, &grid, "cuda-fast-bytes");
        if (s != GPUHIST_OK)
            return s;
        const uint64_t cap = (uint64_t)grid * FB_BLOCK_VECTORS;
        return gh8_drive(ctx, job, k, out, cap,
                         [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                             kernel<<<grid, threads, smem, job->stream>>>(vec, nvec, phase0, p,
                                                                          out);
                             GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-bytes kernel");
                             return GPUHIST_OK;
                         });
    };
    switch (plan->channels) {
    case 1:
        return go(fb_kernel<1, 256>, 256);
    case 2:
        return nt == 128 ? go(fb_kernel<2, 128>, 128) : go(fb_kernel<2, 256>, 256);
    case 3:
        return nt == 128 ? go(fb_kernel<3, 128>, 128) : go(fb_kernel<3, 256>, 256);
    case 4:
        return nt == 64    ? go(fb_kernel<4, 64>, 64)
               : nt == 128 ? go(fb_kernel<4, 128>, 128)
                           : go(fb_kernel<4, 256>, 256);
    default:
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED, "cuda-fast-bytes: %u channels",
                            plan->channels);
    }
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_bytes = {
    "cuda-fast-bytes",
    GPUHIST_BACKEND_CUDA,
    "000 (histogram64 per-thread 8-bit counters), 002; new: PRMT addressing, spill, hot path",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); 1-4 "
    "interleaved channels, any active subset",
    "atomic-free per-thread 8-bit counters in bank-private shared-memory columns (load/add/store, "
    "spill at 256), 16-byte loads; single channel: warp hot-value register count on skewed data",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    NULL,
    fb_run,
};
