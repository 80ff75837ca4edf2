/*
 * weighted_smem.cu - cuda-weighted-smem: weighted histograms with per-block counters and exact
 * weight sums in shared memory, flushed into the global accumulator (weighted.cuh).
 *
 * Mechanism. Each block keeps, per counter (histogram x slot), a 32-bit count, a flags word
 * (bits 0-7: the sum record's GH_XSUM_* flags, 8-15: the square record's) and the exact sum of
 * its weights as signed 32-bit *pieces*: piece j counts units of 2^(BASE + W j) of the record
 * (exact_sum.h's units). A weight m * 2^pos (gh_wsplit) is written as m << (pos mod W), cut into
 * P pieces of W bits added at pieces pos / W .. pos / W + P - 1: P native 32-bit shared atomics
 * (red.shared.add; a 64-bit shared atomicAdd is a compare-and-swap loop on sm_90). Pieces are
 * stored piece-major (piece j of counter c at word j * N + c), so a warp's deposits, whose piece
 * indices mostly agree, spread over the banks as their counters do. The windows:
 *   f32 sums:       W 12, P 3 (24 + 11 bits), 24 pieces (2^-149 .. 2^139)
 *   f32 squares:    W 12, P 5 (48 + 11 bits), 47 pieces from 2^(768 - 1074) (m^2 of gh_wsplit)
 *   f64 sums and squares (hi and lo): W 13, P 5 (53 + 12 bits), 162 pieces (2^-1074 ..)
 * A piece takes < 2^W per deposit, so 2^(31 - W) deposits cannot wrap it; a block counts at
 * most WS_TILE = 2^17 pixels per round (a f64 square adds 2 deposits, hi and lo; f32 sums alone
 * in ws_kernel_f32x4: WS_TILE_F32 = 2^19), then flushes:
 * counts into the 64-bit global counters, flags OR'ed, each non-zero piece v as v * 2^bit into
 * the two global limbs it straddles (gh_w_add_global_piece), and zeroes what it flushed; f32
 * sums go a record per thread, its 24 pieces summed into the 10 limbs in registers first, one
 * global atomic per non-zero limb instead of one or two per piece. All additions are integers,
 * so the result is the CPU backend's, bit for bit.
 *   Warps whose lanes mostly hit one bin (constant data, few bins, sorted data) would serialise
 * on one shared address: a warp takes lane 0's key (counter, piece indices of its deposits);
 * when at least WS_GROUP lanes share it, they sum their pieces with __reduce_add_sync (|sum| <
 * 32 * 2^13) and one lane adds the P sums and the group's count; the others deposit one by one.
 *
 * Slot: binmap.h (common.cuh's gh_slot); f32 EVEN through fast_even.h's certified estimate
 * (the same answer). Weights of NaN samples are not summed (their slot is NaN), outliers' are.
 *
 * Limits (4-byte words of shared memory per counter; H100/H200 opt-in: 227 KiB a block):
 *   f32 weights: 26 (2235 counters: up to 2232 bins, one channel); f64: 164 (354: 351 bins).
 * Squares live in shared memory too when they fit (f32 + 47 words: 793 bins; f64 + 162, the
 * hi and lo parts sharing the window: 175 bins); beyond that the block's sums stay in shared
 * memory and each square goes straight to the global square record (64-bit global atomics).
 * Larger bin counts: cuda-weighted-global. Unweighted plans count only (32-bit shared counts).
 * Every dtype but f16/bf16 (gh_dispatch's; the plan refuses weighted half samples), any bin
 * kind, 1-4 channels.
 *
 * Speed: per f32 sample + f32 weight, 8 bytes read, the slot (fast_even.h: ~8 instructions),
 * the split (~10) and 1 + up to 3 shared atomics (zero pieces are skipped: weights with short
 * significands, 1.0 or 0.5, make one). What bounds it: shared-atomic throughput at ~4 per
 * sample (~8 lane-updates/clk/SM on Hopper: ~2 samples/clk/SM against ~1.6 for the read
 * ceiling), and the flush per round (26 words per counter: ~7K words for 256 bins; weights of
 * many exponents leave most of them non-zero, on addresses all blocks flush at about the same
 * time, which is why ws_kernel_f32x4's rounds are 2^19 pixels and f32 records flush by limbs:
 * ~10 global atomics per record instead of up to 48). Target: 0.6 of the read
 * ceiling (bytes = samples + weights). Measured with ncu (H100, ws_kernel_f32x4, 256 bins):
 * instruction issue is the bound in every distribution (SM 73-77%, 0.77 warps issued per
 * scheduler, occupancy 40%: 4 blocks per SM by registers and shared memory); the key and the
 * split of each pixel are most of the work. Folding with the other counters' pixels deposited
 * at once brings hot90 and constant data above uniform data; weights of many exponents on
 * hot90 data are the slowest cell with uniform ones (the hot counter's pieces at other indices
 * are deposited one lane at a time; grouping them by index with __match_any_sync cost 4x, and
 * lane-private shared rows for them 0.5-0.57 against 0.60-0.63 on hot90). The cells are in
 * docs/PERFORMANCE.md.
 *
 * Seed: 001 section V.B, 002 (privatised shared histograms), with exact_sum.h's integer digits.
 */
#include "weighted.cuh"
#include "fast_even.h"

namespace {

/* Pixels a block counts between flushes (each piece takes at most 2 deposits per pixel). */
#define WS_TILE (1u << 17)
/* The same for ws_kernel_f32x4 (f32 sums only: one deposit per pixel and word, each below 2^12
 * in magnitude, so 2^19 pixels keep every word below 2^31). Fewer rounds matter to weights of
 * many exponents: their flush finds most of a record's 24 pieces non-zero, each 1-2 global
 * atomics on addresses every block flushes. */
#define WS_TILE_F32 (1u << 19)
/* Lanes of one key that a warp sums before depositing (__reduce_add_sync: sm_80 and later;
 * older devices deposit lane by lane). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WS_GROUP 33
#else
#define WS_GROUP 4
#endif
/* Vectors a warp of ws_kernel_f32x4 keeps to groups after folding did not pay, and the lanes
 * whose first pixel must share lane 0's counter for the warp to start folding (see there). */
#define WS_FOLD_COOL 16u
#define WS_FOLD_ENTER 24

/* A window of pieces: width W bits, P pieces per deposit, NW pieces per record, piece 0 at bit
 * BASE of the record (its units: exact_sum.h), global records of LIMBS limbs. */
template <int W_, int P_, int NW_, int BASE_> struct ws_win {
    static constexpr int W = W_, P = P_, NW = NW_, BASE = BASE_;
};
typedef ws_win<12, 3, 24, 0> win_sum_f32;
typedef ws_win<12, 5, 47, 768> win_sq_f32;
typedef ws_win<13, 5, 162, 0> win_f64;

template <int WK> struct ws_windows {
    typedef win_f64 sum;
    typedef win_f64 sq;
};
template <> struct ws_windows<GH_WK_F32> {
    typedef win_sum_f32 sum;
    typedef win_sq_f32 sq;
};

/* Squares: none, in shared memory, or straight to the global records. */
enum { WS_SQ_NONE = 0, WS_SQ_SHARED = 1, WS_SQ_GLOBAL = 2 };

/* 4-byte words of shared memory per counter. */
static inline uint32_t ws_words(int wk, int sq)
{
    if (wk == GH_WK_NONE)
        return 1u;
    const uint32_t s = wk == GH_WK_F32 ? win_sum_f32::NW : win_f64::NW;
    const uint32_t q = wk == GH_WK_F32 ? win_sq_f32::NW : win_f64::NW; /* hi and lo share it */
    return 2u + s + (sq == WS_SQ_SHARED ? q : 0u);
}

typedef gh_wparams ws_params; /* weighted.cuh */

/* The pieces of m * 2^pos (pos relative to the window's BASE) and the first piece's index. */
template <class WIN>
__device__ __forceinline__ void ws_pieces(const gh_wsplit &s, int32_t (&v)[WIN::P], uint32_t *q)
{
    const uint32_t pos = s.pos - (uint32_t)WIN::BASE;
    const uint32_t qq = pos / (uint32_t)WIN::W, sh = pos - qq * (uint32_t)WIN::W;
    const uint32_t mask = (1u << WIN::W) - 1u;
#pragma unroll
    for (int k = 0; k < WIN::P; ++k) {
        const uint32_t d = k == 0 ? (uint32_t)(s.m << sh) & mask
                                  : (uint32_t)(s.m >> (WIN::W * k - sh)) & mask;
        v[k] = s.neg ? -(int32_t)d : (int32_t)d;
    }
    *q = qq;
}

__device__ __forceinline__ void ws_red(uint32_t *a, uint32_t v)
{
    gh_red_shared_add((uint32_t)__cvta_generic_to_shared(a), v);
}

/* Piece j of counter c is word j * N + c of its window (piece-major): the lanes of a warp, whose
 * weights mostly share their pieces' indices, hit the banks of their counters, as unweighted
 * counts do (a counter-major record of 24 words would put every counter on 4 banks). */
template <class WIN>
__device__ __forceinline__ void ws_red_pieces(uint32_t *win, uint32_t N, uint32_t counter,
                                              uint32_t q, const int32_t (&v)[WIN::P])
{
#pragma unroll
    for (int k = 0; k < WIN::P; ++k)
        if (v[k])
            ws_red(win + (size_t)(q + (uint32_t)k) * N + counter, (uint32_t)v[k]);
}

/* A square straight into its global record (squares that do not fit shared memory). */
__device__ __forceinline__ void ws_square_global(const ws_params &p, uint32_t counter,
                                                 const gh_wsplit &q, const gh_wsplit &ql)
{
    unsigned long long *rec = p.squares + (uint64_t)counter * GPUHIST_SQUARE_RECORD;
    if (q.r == 1u)
        gh_w_add_global(rec, q.m, q.pos, false);
    else if (q.r)
        atomicOr(rec + GH_XSUM_LIMBS_F64, (unsigned long long)q.r);
    if (ql.r == 1u)
        gh_w_add_global(rec, ql.m, ql.pos, ql.neg);
}

/* One histogrammed sample of every lane of the warp (all 32 lanes call it): counter (GH_NONE:
 * the lane has none), whether its slot is NaN, its weight's split and its square's. */
template <int WK, int SQ>
__device__ __forceinline__ void ws_deposit(const ws_params &p, uint32_t *sh, uint32_t N,
                                           uint32_t counter, bool nan, const gh_wsplit &w,
                                           const gh_wsplit &q, const gh_wsplit &ql, uint32_t lane)
{
    uint32_t *cnt = sh;
    if constexpr (WK == GH_WK_NONE) {
        if (counter != GH_NONE)
            ws_red(cnt + counter, 1u);
        return;
    } else {
        typedef typename ws_windows<WK>::sum SW;
        typedef typename ws_windows<WK>::sq QW;
        uint32_t *flg = sh + N;
        uint32_t *sp = sh + 2u * N;
        uint32_t *qp = sp + (size_t)N * SW::NW;
        int32_t vs[SW::P], vq[QW::P], vl[QW::P];
        uint32_t qs = 0u, qq = 0u, qlo = 0xFFFFFFFFu;
        if (w.r == 1u)
            ws_pieces<SW>(w, vs, &qs);
        if constexpr (SQ == WS_SQ_SHARED) {
            if (q.r == 1u)
                ws_pieces<QW>(q, vq, &qq);
            if (ql.r == 1u)
                ws_pieces<QW>(ql, vl, &qlo);
            else
#pragma unroll
                for (int k = 0; k < QW::P; ++k)
                    vl[k] = 0;
        }
        /* lanes that share lane 0's key sum their pieces first */
        const bool can = counter != GH_NONE && !nan && w.r == 1u &&
                         (SQ != WS_SQ_SHARED || q.r == 1u);
        const uint32_t c0 = __shfl_sync(0xFFFFFFFFu, counter, 0);
        const uint32_t s0 = __shfl_sync(0xFFFFFFFFu, qs, 0);
        bool in = can && counter == c0 && qs == s0;
        if (SQ == WS_SQ_SHARED) {
            const uint32_t q0 = __shfl_sync(0xFFFFFFFFu, qq, 0);
            const uint32_t l0 = __shfl_sync(0xFFFFFFFFu, qlo, 0);
            in = in && qq == q0 && qlo == l0;
        }
        const unsigned group = __ballot_sync(0xFFFFFFFFu, in);
        bool done = false;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
        if (__popc(group) >= WS_GROUP && in) {
            const uint32_t leader = (uint32_t)__ffs(group) - 1u;
            int32_t ts[SW::P];
#pragma unroll
            for (int k = 0; k < SW::P; ++k)
                ts[k] = (int32_t)__reduce_add_sync(group, (unsigned)vs[k]);
            if (lane == leader) {
                ws_red(cnt + counter, (uint32_t)__popc(group));
                ws_red_pieces<SW>(sp, N, counter, qs, ts);
            }
            if constexpr (SQ == WS_SQ_SHARED) {
                int32_t tq[QW::P], tl[QW::P];
#pragma unroll
                for (int k = 0; k < QW::P; ++k) {
                    tq[k] = (int32_t)__reduce_add_sync(group, (unsigned)vq[k]);
                    tl[k] = (int32_t)__reduce_add_sync(group, (unsigned)vl[k]);
                }
                if (lane == leader) {
                    ws_red_pieces<QW>(qp, N, counter, qq, tq);
                    if (qlo != 0xFFFFFFFFu)
                        ws_red_pieces<QW>(qp, N, counter, qlo, tl);
                }
            }
            done = true;
        }
#endif
        if (SQ == WS_SQ_GLOBAL && done) /* squares stay per lane */
            ws_square_global(p, counter, q, ql);
        if (done || counter == GH_NONE)
            return;
        ws_red(cnt + counter, 1u);
        if (nan)
            return;
        if (w.r == 1u)
            ws_red_pieces<SW>(sp, N, counter, qs, vs);
        else if (w.r)
            atomicOr(flg + counter, w.r);
        if constexpr (SQ == WS_SQ_SHARED) {
            if (q.r == 1u)
                ws_red_pieces<QW>(qp, N, counter, qq, vq);
            else if (q.r)
                atomicOr(flg + counter, q.r << 8);
            if (ql.r == 1u)
                ws_red_pieces<QW>(qp, N, counter, qlo, vl);
        } else if (SQ == WS_SQ_GLOBAL) {
            ws_square_global(p, counter, q, ql);
        }
    }
}

/* Flush the block's records into the global ones and zero them (whole block, synchronised). */
template <int WK, int SQ>
__device__ __forceinline__ void ws_flush(const ws_params &p, uint32_t *sh, uint32_t N,
                                         unsigned long long *__restrict__ out)
{
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < N; i += blockDim.x) {
        const uint32_t c = sh[i];
        if (c) {
            atomicAdd(out + i, (unsigned long long)c);
            sh[i] = 0u;
        }
        if constexpr (WK != GH_WK_NONE) {
            const uint32_t f = sh[N + i];
            if (f) {
                if (f & 0xFFu)
                    atomicOr(p.sums + (uint64_t)i * p.sum_words + p.sum_words - 1u,
                             (unsigned long long)(f & 0xFFu));
                if (f >> 8)
                    atomicOr(p.squares + (uint64_t)i * GPUHIST_SQUARE_RECORD + GH_XSUM_LIMBS_F64,
                             (unsigned long long)(f >> 8));
                sh[N + i] = 0u;
            }
        }
    }
    if constexpr (WK != GH_WK_NONE) {
        typedef typename ws_windows<WK>::sum SW;
        typedef typename ws_windows<WK>::sq QW;
        uint32_t *sp = sh + 2u * N;
        if constexpr (WK == GH_WK_F32) {
            /* a thread per record: its 24 pieces summed into the 10 limbs they overlap (the
             * limbs' indices known at compile time: registers), one global atomic per non-zero
             * limb instead of one or two per piece. Each limb receives exactly what the pieces'
             * own deposits (gh_w_piece_split, as gh_w_add_global_piece) would have added
             * (|sum| < 2^35, at most the 8 deposits per record and flush that ws_launch
             * reserves). */
            static_assert(SW::BASE == 0 && ((SW::W * (SW::NW - 1)) >> 5) + 1 < GH_XSUM_LIMBS_F32,
                          "f32 sum window past its limbs");
            for (uint32_t c = threadIdx.x; c < N; c += blockDim.x) {
                long long limb[GH_XSUM_LIMBS_F32];
#pragma unroll
                for (int k = 0; k < GH_XSUM_LIMBS_F32; ++k)
                    limb[k] = 0;
#pragma unroll
                for (int j = 0; j < SW::NW; ++j) {
                    const int32_t v = (int32_t)sp[j * N + c];
                    if (v) {
                        const int bit = SW::W * j;
                        unsigned long long lo;
                        long long hi;
                        gh_w_piece_split(v, (uint32_t)bit, &lo, &hi);
                        limb[bit >> 5] += (long long)lo;
                        limb[(bit >> 5) + 1] += hi;
                        sp[j * N + c] = 0u;
                    }
                }
                unsigned long long *rec = p.sums + (uint64_t)c * p.sum_words;
#pragma unroll
                for (int k = 0; k < GH_XSUM_LIMBS_F32; ++k)
                    if (limb[k])
                        atomicAdd(rec + k, (unsigned long long)limb[k]);
            }
        } else {
            for (uint32_t i = threadIdx.x; i < N * (uint32_t)SW::NW; i += blockDim.x) {
                const int32_t v = (int32_t)sp[i];
                if (v) {
                    const uint32_t j = i / N, c = i - j * N;
                    gh_w_add_global_piece(p.sums + (uint64_t)c * p.sum_words, v,
                                          (uint32_t)SW::BASE + (uint32_t)SW::W * j);
                    sp[i] = 0u;
                }
            }
        }
        if (SQ == WS_SQ_SHARED) {
            uint32_t *qp = sp + (size_t)N * SW::NW;
            for (uint32_t i = threadIdx.x; i < N * (uint32_t)QW::NW; i += blockDim.x) {
                const int32_t v = (int32_t)qp[i];
                if (v) {
                    const uint32_t j = i / N, c = i - j * N;
                    gh_w_add_global_piece(p.squares + (uint64_t)c * GPUHIST_SQUARE_RECORD, v,
                                          (uint32_t)QW::BASE + (uint32_t)QW::W * j);
                    qp[i] = 0u;
                }
            }
        }
    }
    __syncthreads();
}

template <typename T, bool FE>
__device__ __forceinline__ uint32_t ws_slot(const ws_params &p, const gpuhist_binmap &m, T x)
{
    if constexpr (FE && std::is_same<T, float>::value)
        return gpuhist_fe_slot_f32(&m, &p.cert, x);
    else
        return gh_slot(&m, p.k.edges, x);
}

/* The split of pixel i's weight and of its square. */
template <int WK, int SQ>
__device__ __forceinline__ void ws_weight(const ws_params &p, uint64_t i, gh_wsplit *w,
                                          gh_wsplit *q, gh_wsplit *ql)
{
    w->r = q->r = ql->r = 0u;
    if constexpr (WK == GH_WK_F32) {
        *w = gh_w_split_f32(((const uint32_t *)p.weights)[i]);
        if (SQ != WS_SQ_NONE)
            *q = gh_w_square_f32(*w);
    } else if constexpr (WK == GH_WK_F64) {
        const unsigned long long b = ((const unsigned long long *)p.weights)[i];
        *w = gh_w_split_f64(b);
        if (SQ != WS_SQ_NONE)
            gh_w_square_f64(__longlong_as_double((long long)b), q, ql);
    }
}

template <typename T, int WK, bool MULTI, int SQ, bool FE>
__global__ void __launch_bounds__(WS_BLOCK) ws_kernel(const __grid_constant__ ws_params p,
                                                      unsigned long long *__restrict__ out)
{
    extern __shared__ uint32_t sh[];
    const uint32_t N = p.k.counters;
    const uint32_t words = N * (WK == GH_WK_NONE ? 1u
                                : 2u + (uint32_t)ws_windows<WK>::sum::NW +
                                      (SQ == WS_SQ_SHARED ? (uint32_t)ws_windows<WK>::sq::NW : 0u));
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x)
        sh[i] = 0u;
    __syncthreads();
    const gpuhist_binmap m = p.k.map;
    const T *data = (const T *)p.k.data;
    const uint32_t C = MULTI ? p.k.channels : 1u;
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t S = (uint64_t)gridDim.x * blockDim.x;
    constexpr int U = MULTI ? 1 : 4; /* pixels per thread whose loads are in flight at once */
    const uint64_t tile = (uint64_t)gridDim.x * WS_TILE;
    for (uint64_t r0 = p.pixel_begin; r0 < p.pixel_end; r0 += tile) {
        const uint64_t r1 = p.pixel_end - r0 > tile ? r0 + tile : p.pixel_end;
        /* base is warp-uniform: every lane runs every step (ws_deposit is warp-synchronous) */
        for (uint64_t base = r0 + (uint64_t)blockIdx.x * blockDim.x + (threadIdx.x - lane);
             base < r1; base += (uint64_t)U * S) {
            T xs[U];
            gh_wsplit w[U], q[U], ql[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const uint64_t i = base + (uint64_t)u * S + lane;
                xs[u] = T();
                w[u].r = q[u].r = ql[u].r = 0u;
                if (i < r1) {
                    if (!MULTI)
                        xs[u] = data[i];
                    ws_weight<WK, SQ>(p, i, &w[u], &q[u], &ql[u]);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const uint64_t i = base + (uint64_t)u * S + lane;
                const bool valid = i < r1;
                for (uint32_t c = 0; c < C; ++c) {
                    uint32_t counter = GH_NONE;
                    bool nan = false;
                    const int32_t b = MULTI ? gh_base(p.k, c) : 0;
                    if (valid && b >= 0) {
                        const T x = MULTI ? data[i * C + c] : xs[u];
                        const uint32_t slot = ws_slot<T, FE>(p, m, x);
                        counter = (uint32_t)b + slot;
                        nan = slot == p.nan_slot;
                    }
                    ws_deposit<WK, SQ>(p, sh, N, counter, nan, w[u], q[u], ql[u], lane);
                }
            }
        }
        ws_flush<WK, SQ>(p, sh, N, out);
    }
}

/* An f32 weight's exact pieces for the fast path: piece index q of win_sum_f32 and the three
 * signed 12-bit pieces of m * 2^(pos mod 12) (each |v| < 2^12), finite: not inf or NaN. */
struct wsf_pieces {
    uint32_t q;
    int32_t v0, v1, v2;
    bool finite;
};

__device__ __forceinline__ wsf_pieces wsf_split(uint32_t wb)
{
    typedef win_sum_f32 SW;
    wsf_pieces s;
    const uint32_t e = (wb >> 23) & 0xFFu;
    const uint32_t m = (wb & 0x7FFFFFu) | (e ? 0x800000u : 0u);
    const uint32_t pos = e ? e - 1u : 0u;
    s.q = pos / (uint32_t)SW::W;
    const uint32_t shf = pos - s.q * (uint32_t)SW::W;
    const int32_t sg = (int32_t)wb >> 31; /* 0 or -1: two's complement negation */
    const uint32_t lo = m << shf;         /* bits 0..31 of m * 2^shf (< 2^35) */
    s.v0 = ((int32_t)(lo & 0xFFFu) ^ sg) - sg;
    s.v1 = ((int32_t)((lo >> 12) & 0xFFFu) ^ sg) - sg;
    s.v2 = ((int32_t)(m >> (24u - shf)) ^ sg) - sg;
    s.finite = e != 0xFFu;
    return s;
}

/* n pixels' count (none when n is 0) and summed pieces into counter c's shared record, this
 * lane alone. */
__device__ __forceinline__ void wsf_add(uint32_t sbase, uint32_t stride, uint32_t c, uint32_t n,
                                        uint32_t q, int32_t v0, int32_t v1, int32_t v2)
{
    gh_red_shared_add_nz(sbase + 4u * c, n);
    const uint32_t a = sbase + 2u * stride + q * stride + 4u * c;
    gh_red_shared_add_nz(a, (uint32_t)v0);
    gh_red_shared_add_nz(a + stride, (uint32_t)v1);
    gh_red_shared_add_nz(a + 2u * stride, (uint32_t)v2);
}


/* The f32 kernel (ws_kernel_f32x4): one pixel's deposit, called by all 32 lanes (valid: the
 * lane has a pixel to deposit; ok: the fast key is certified, counter is its slot). A certified
 * slot and a finite weight (the common case, handled here: the count and the three pieces of
 * the weight, or the whole warp's share of one key by its leader); the others go through
 * ws_deposit's rules one lane at a time (outliers, NaN samples, non-finite weights). */
template <bool GROUP>
__device__ __forceinline__ bool ws_deposit_f32(const ws_params &p, uint32_t *sh, uint32_t N,
                                               uint32_t counter, bool valid, bool ok, float x,
                                               uint32_t wb, const wsf_pieces &s, uint32_t lane)
{
    typedef win_sum_f32 SW;
    const bool fast = valid && ok && s.finite;
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(sh);
    const uint32_t stride = 4u * N;
    bool done = false, grouped = false;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    const uint32_t c0 = GROUP ? __shfl_sync(0xFFFFFFFFu, counter, 0) : 0u;
    const uint32_t q0 = GROUP ? __shfl_sync(0xFFFFFFFFu, s.q, 0) : 0u;
    const bool in = GROUP && fast && counter == c0 && s.q == q0;
    const unsigned group = GROUP ? __ballot_sync(0xFFFFFFFFu, in) : 0u;
    if (GROUP && __popc(group) >= WS_GROUP) { /* warp-uniform */
        grouped = true;
        const int32_t t0 = (int32_t)__reduce_add_sync(0xFFFFFFFFu, in ? (unsigned)s.v0 : 0u);
        const int32_t t1 = (int32_t)__reduce_add_sync(0xFFFFFFFFu, in ? (unsigned)s.v1 : 0u);
        const int32_t t2 = (int32_t)__reduce_add_sync(0xFFFFFFFFu, in ? (unsigned)s.v2 : 0u);
        if (lane == (uint32_t)__ffs(group) - 1u)
            wsf_add(sbase, stride, c0, (uint32_t)__popc(group), q0, t0, t1, t2);
        done = in;
    }
#endif
    if (done)
        return grouped;
    if (fast) {
        wsf_add(sbase, stride, counter, 1u, s.q, s.v0, s.v1, s.v2);
    } else if (valid) {
        /* the general rule, this lane alone (the fast key was not certified, or a non-finite
         * weight) */
        const uint32_t slot = ok ? counter : gpuhist_fe_slot_f32(&p.k.map, &p.cert, x);
        gh_red_shared_add(sbase + 4u * slot, 1u);
        if (slot == p.nan_slot)
            return grouped;
        const gh_wsplit w = gh_w_split_f32(wb);
        if (w.r == 1u) {
            int32_t v[SW::P];
            uint32_t qq;
            ws_pieces<SW>(w, v, &qq);
            ws_red_pieces<SW>(sh + 2u * N, N, slot, qq, v);
        } else if (w.r) {
            atomicOr(sh + N + slot, w.r);
        }
    }
    return grouped;
}

/* cuda-weighted-smem for the common case: f32 samples binned by the certified estimate (EVEN),
 * f32 weights, one channel, no squares; samples and weights 16-byte aligned. Each thread reads
 * four pixels' samples and weights as two 16-byte vectors (the next pair loaded before this one
 * is counted), and the pieces go in with predicated adds: same records and flushes as ws_kernel,
 * so the same bits.
 *   Skewed data (one hot value, constant data) would make every pixel a deposit of the same
 * shared words. A warp in which at least WS_FOLD_ENTER lanes' first pixel of a vector has lane
 * 0's counter switches to *folding*: that counter and lane 0's piece index become the warp's
 * reference; each lane adds the count of every fast pixel of that counter into a register, and
 * its weight's three pieces too when they have the reference index (a lane sees at most
 * WS_TILE_F32 / WS_BLOCK = 2048 pixels a round, so |sum| < 2^23), else deposits the pieces
 * alone.
 * Fast pixels of other counters are deposited at once with predicated adds (a warp-wide step
 * per pixel would cost more: on hot90 data some lane of the warp has such a pixel almost every
 * time); the rare others (outliers, NaN samples, non-finite weights) go through the general
 * rule one per lane and step. When more than a quarter of a vector's pixels missed the
 * reference counter, the warp goes back to groups for WS_FOLD_COOL vectors. The folded sums go
 * in when the reference changes and before the round's flush. Data without a hot counter never
 * folds and pays a shuffle and a vote per vector. Integer sums in any grouping: the same bits. */
__global__ void __launch_bounds__(WS_BLOCK) ws_kernel_f32x4(const __grid_constant__ ws_params p,
                                                            unsigned long long *__restrict__ out)
{
    typedef win_sum_f32 SW;
    extern __shared__ uint32_t sh[];
    const uint32_t N = p.k.counters;
    const uint32_t words = N * (2u + (uint32_t)SW::NW);
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x)
        sh[i] = 0u;
    __syncthreads();
    const float *xs = (const float *)p.k.data;
    const uint32_t *ws = (const uint32_t *)p.weights;
    const float lower = p.k.map.lower_f, scale = p.k.map.scale_f;
    const float tlo = p.cert.t_lo_f, thi = p.cert.t_hi_f;
    const uint32_t bins = p.k.map.bins;
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t S = (uint64_t)gridDim.x * blockDim.x; /* vectors per step */
    const uint64_t tile = (uint64_t)gridDim.x * WS_TILE_F32; /* pixels a round: a multiple of 4 */
    auto load = [&](uint64_t v, uint64_t end, float4 &x, uint4 &w) {
        if (4u * v + 4u <= end) {
            x = __ldcs((const float4 *)xs + v);
            w = __ldcs((const uint4 *)ws + v);
        } else { /* the last, partial vector of the job */
            float xv[4] = {0.f, 0.f, 0.f, 0.f};
            uint32_t wv[4] = {0u, 0u, 0u, 0u};
            for (uint32_t k = 0; k < 4u; ++k)
                if (4u * v + k < end) {
                    xv[k] = xs[4u * v + k];
                    wv[k] = ws[4u * v + k];
                }
            x = make_float4(xv[0], xv[1], xv[2], xv[3]);
            w = make_uint4(wv[0], wv[1], wv[2], wv[3]);
        }
    };
    const uint32_t sbase = (uint32_t)__cvta_generic_to_shared(sh), stride = 4u * N;
    for (uint64_t r0 = p.pixel_begin; r0 < p.pixel_end; r0 += tile) {
        const uint64_t r1 = p.pixel_end - r0 > tile ? r0 + tile : p.pixel_end;
        const uint64_t v1 = (r1 + 3u) / 4u;
        /* the warp's reference key (while folding) and the lane's folded count and pieces */
        uint32_t ref_c = 0u, ref_q = 0u, ref_n = 0u, cool = 0u;
        bool fold_mode = false; /* warp-uniform */
        int32_t ref0 = 0, ref1 = 0, ref2 = 0;
        /* base is warp-uniform: every lane runs every step (the deposits are warp-synchronous) */
        uint64_t base = r0 / 4u + (uint64_t)blockIdx.x * blockDim.x + (threadIdx.x - lane);
        float4 nx = make_float4(0.f, 0.f, 0.f, 0.f);
        uint4 nw = make_uint4(0u, 0u, 0u, 0u);
        if (base + lane < v1)
            load(base + lane, r1, nx, nw);
        for (; base < v1; base += S) {
            const uint64_t v = base + lane;
            const float4 x4 = nx;
            const uint4 w4 = nw;
            if (v + S < v1)
                load(v + S, r1, nx, nw);
            const float xa[4] = {x4.x, x4.y, x4.z, x4.w};
            const uint32_t wa[4] = {w4.x, w4.y, w4.z, w4.w};
            const bool valid_v = v < v1;
            if (!fold_mode) {
                /* the warp looks for lanes sharing a key on the vector's first pixel, and on the
                 * other three only when the first had such a group; a group on the first pixel
                 * turns folding on (unless it was turned off a moment ago) */
                bool hot = false;
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const bool valid = valid_v && 4u * v + (uint64_t)k < r1;
                    int ok = 0;
                    const uint32_t key =
                        gpuhist_fe_key_f32(xa[k], lower, scale, bins, tlo, thi, 1, &ok);
                    const wsf_pieces s = wsf_split(wa[k]);
                    if (k == 0 && cool == 0u) {
                        /* most lanes' first pixel in lane 0's counter: fold from now on, with
                         * that counter and lane 0's piece index as the reference */
                        const uint32_t c0 = __shfl_sync(0xFFFFFFFFu, key, 0);
                        const unsigned same =
                            __ballot_sync(0xFFFFFFFFu, valid && ok != 0 && s.finite && key == c0);
                        if (__popc(same) >= WS_FOLD_ENTER) {
                            if (ref_n)
                                wsf_add(sbase, stride, ref_c, ref_n, ref_q, ref0, ref1, ref2);
                            ref_n = 0u;
                            ref0 = ref1 = ref2 = 0;
                            ref_c = c0;
                            ref_q = __shfl_sync(0xFFFFFFFFu, s.q, 0);
                            fold_mode = true;
                        }
                    }
                    if (k == 0 || hot)
                        hot = ws_deposit_f32<true>(p, sh, N, key, valid, ok != 0, xa[k], wa[k],
                                                   s, lane);
                    else
                        ws_deposit_f32<false>(p, sh, N, key, valid, ok != 0, xa[k], wa[k], s,
                                              lane);
                }
                if (cool)
                    --cool;
                continue;
            }
            /* folding: a fast pixel of the reference counter adds its count into the lane's
             * registers, and its weight's pieces too when they have the reference piece index
             * (else the pieces alone go to shared memory); other fast pixels are deposited at
             * once (predicated: no warp-wide step per pixel); the rare rest (outliers, NaN,
             * non-finite weights) goes through ws_deposit_f32 one per lane and step */
            uint32_t keys[4], oks = 0u, rest = 0u, missed = 0u;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const bool valid = valid_v && 4u * v + (uint64_t)k < r1;
                int ok = 0;
                keys[k] = gpuhist_fe_key_f32(xa[k], lower, scale, bins, tlo, thi, 1, &ok);
                oks |= ok ? 1u << k : 0u;
                const wsf_pieces s = wsf_split(wa[k]);
                const bool fast = valid && ok && s.finite;
                const bool same = fast && keys[k] == ref_c;
                if (same)
                    ++ref_n;
                if (same && s.q == ref_q) {
                    ref0 += s.v0;
                    ref1 += s.v1;
                    ref2 += s.v2;
                } else if (fast) {
                    wsf_add(sbase, stride, keys[k], same ? 0u : 1u, s.q, s.v0, s.v1,
                                   s.v2);
                } else if (valid) {
                    rest |= 1u << k;
                }
                missed += valid && !same ? 1u : 0u;
            }
            /* more than a quarter of the warp's pixels missed the reference counter: back to
             * groups, for a while (WS_FOLD_COOL vectors) */
            if (__reduce_add_sync(0xFFFFFFFFu, missed) > 32u) {
                fold_mode = false;
                cool = WS_FOLD_COOL;
            }
            if (!__any_sync(0xFFFFFFFFu, rest != 0u))
                continue;
            const uint32_t steps = __reduce_max_sync(0xFFFFFFFFu, (uint32_t)__popc(rest));
            for (uint32_t j = 0; j < steps; ++j) {
                const bool has = rest != 0u;
                const uint32_t k = has ? (uint32_t)__ffs(rest) - 1u : 0u;
                rest &= rest - 1u;
                const float x = k == 0u ? xa[0] : k == 1u ? xa[1] : k == 2u ? xa[2] : xa[3];
                const uint32_t wb = k == 0u ? wa[0] : k == 1u ? wa[1] : k == 2u ? wa[2] : wa[3];
                const uint32_t key =
                    k == 0u ? keys[0] : k == 1u ? keys[1] : k == 2u ? keys[2] : keys[3];
                ws_deposit_f32<false>(p, sh, N, key, has, (oks >> k) & 1u, x, wb, wsf_split(wb),
                                      lane);
            }
        }
        if (ref_n)
            wsf_add(sbase, stride, ref_c, ref_n, ref_q, ref0, ref1, ref2);
        ws_flush<GH_WK_F32, WS_SQ_NONE>(p, sh, N, out);
    }
}

/* Weight kind and squares mode of a plan, and the shared memory it needs; 0 when it does not
 * fit `optin` bytes. */
static size_t ws_plan_smem(const gpuhist_plan *plan, size_t optin, int *wk, int *sq)
{
    const uint32_t n = gh_counters_ok(plan);
    *wk = !plan->weights ? GH_WK_NONE : plan->weight_dtype == GPUHIST_F32 ? GH_WK_F32 : GH_WK_F64;
    *sq = plan->weights && plan->want_squares ? WS_SQ_SHARED : WS_SQ_NONE;
    if (n == 0)
        return 0;
    size_t bytes = (size_t)n * ws_words(*wk, *sq) * 4u;
    if (bytes > optin && *sq == WS_SQ_SHARED) {
        *sq = WS_SQ_GLOBAL;
        bytes = (size_t)n * ws_words(*wk, *sq) * 4u;
    }
    return bytes <= optin ? bytes : 0;
}

int ws_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    int wk, sq;
    return ws_plan_smem(plan, gpuhist_cuda_smem_optin(ctx), &wk, &sq) != 0;
}

template <typename T, int WK, bool MULTI, int SQ>
gpuhist_status ws_launch(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                         ws_params &p, bool fe, size_t smem, unsigned long long *out)
{
    auto kernel = fe ? ws_kernel<T, WK, MULTI, SQ, true> : ws_kernel<T, WK, MULTI, SQ, false>;
    if constexpr (std::is_same<T, float>::value && WK == GH_WK_F32 && !MULTI && SQ == WS_SQ_NONE)
        if (fe && ((uintptr_t)job->data % 16u) == 0u && ((uintptr_t)job->weights % 16u) == 0u)
            kernel = ws_kernel_f32x4;
    const uint64_t tile_px = kernel == ws_kernel_f32x4 ? WS_TILE_F32 : WS_TILE;
    cudaError_t err;
    const int grid = gh_grid(job, kernel, GH_LP_WEIGHTED_SMEM, smem, job->pixels, &err);
    if (!grid)
        return gpuhist_cuda_check(ctx, err, "configure cuda-weighted-smem");
    /* Deposits per global limb: a flush adds at most 8 per record (the low and high parts of the
     * pieces that overlap it), once per block and round; global squares 2 per pixel. Launches
     * of at most 2^30 pixels keep both far below GH_W_DEPOSITS_MAX. */
    const uint64_t most = 1ull << 30;
    for (uint64_t b = 0; b < job->pixels; b += most) {
        const uint64_t e = job->pixels - b > most ? b + most : job->pixels;
        const uint64_t per_round = (uint64_t)grid * tile_px;
        const uint64_t rounds = (e - b + per_round - 1u) / per_round;
        const uint64_t deposits = SQ == WS_SQ_GLOBAL ? 2u * (e - b) : 8u * (uint64_t)grid * rounds;
        gpuhist_status st = gh_w_reserve(ctx, plan, job, deposits);
        if (st != GPUHIST_OK)
            return st;
        p.pixel_begin = b;
        p.pixel_end = e;
        kernel<<<grid, WS_BLOCK, smem, job->stream>>>(p, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-weighted-smem kernel");
    }
    return GPUHIST_OK;
}

template <typename T, bool MULTI>
gpuhist_status ws_pick(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                       ws_params &p, bool fe, size_t smem, int wk, int sq,
                       unsigned long long *out)
{
#define WS_CASE(WK, SQ)                                                                       \
    if (wk == WK && sq == SQ)                                                                 \
        return ws_launch<T, WK, MULTI, SQ>(ctx, plan, job, p, fe, smem, out);
    WS_CASE(GH_WK_NONE, WS_SQ_NONE)
    WS_CASE(GH_WK_F32, WS_SQ_NONE)
    WS_CASE(GH_WK_F32, WS_SQ_SHARED)
    WS_CASE(GH_WK_F32, WS_SQ_GLOBAL)
    WS_CASE(GH_WK_F64, WS_SQ_NONE)
    WS_CASE(GH_WK_F64, WS_SQ_SHARED)
    WS_CASE(GH_WK_F64, WS_SQ_GLOBAL)
#undef WS_CASE
    return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND, "cuda-weighted-smem: no kernel (internal)");
}

gpuhist_status ws_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->pixels == 0)
        return GPUHIST_OK;
    if (plan->weights && (!job->weights || !plan->weight_acc))
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "cuda-weighted-smem: no device weights or accumulator (internal)");
    int wk, sq;
    const size_t smem = ws_plan_smem(plan, job->smem_per_block_optin, &wk, &sq);
    if (!smem)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-weighted-smem: %u bins x %u channel(s) do not fit shared "
                            "memory (%zu bytes)",
                            plan->bins, plan->active, job->smem_per_block_optin);
    ws_params p;
    const bool fe = gh_w_params_of(plan, job, &p);
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        return ws_pick<T, decltype(multi)::value>(ctx, plan, job, p, fe, smem, wk, sq,
                                                  (unsigned long long *)out);
    });
}

} /* namespace */

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_weighted_smem = {
    "cuda-weighted-smem",
    GPUHIST_BACKEND_CUDA,
    "001 §V.B, 002 (privatised shared histograms), exact sums",
    "every dtype but f16/bf16, all bin kinds, "
    "bins whose records fit shared memory (f32 weights: ~2230, f64: "
    "~350), channels; weights f32/f64",
    "per-block counts and exact weight pieces (32-bit shared atomics) flushed to the global "
    "accumulator",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_WEIGHTS,
    ws_supports,
    ws_run,
};
