/*
 * fast_smem.cu - cuda-fast-smem: per-block 32-bit slot counters in shared memory, fed by 16-byte
 * loads, with bin mapping that needs almost no shared-memory traffic besides the one atomic.
 * Built for f32 with 256 / 4096 even bins (target: 0.95 of the read ceiling) and 256 uneven
 * explicit edges (target: 0.90); correct for every dtype, bin kind and 1-4 channels that fit.
 *
 * Budget. At the read ceiling an SM takes ~17-19 bytes per clock: ~4.5 f32 samples/clk/SM. Four
 * schedulers issue 128 thread-instructions/clk, so at a realistic ~70% issue rate the mapping
 * may cost ~20 instructions per sample at most. Shared atomics cap near 8.4 lane-updates/clk/SM
 * (docs/PERFORMANCE.md, "Hardware facts the CUDA strategies rely on"): one per sample fits.
 *
 * Two single-channel f32 kernels (fe_kernel, fx_kernel) do the f32 cases above; everything else
 * (other dtypes, channels > 1, specs outside their proven range) runs the general fs_kernel.
 * Both: 1024 threads, one block per SM, two stages of 4 x 16-byte loads in flight per thread
 * (the next stage is issued before the current one is counted), counters replicated per warp
 * group (warp w uses copy w % R), red.shared at a 32-bit shared address.
 *
 * fe_kernel, f32 EVEN: THE estimate and THE TEST of fast_even.h (f = (x - lower_f) * scale_f
 * in float, key = floor(f), certified against every edge on the host once per spec; no error
 * bound of its own). Used when the certificate holds and is direct or its symmetric form is
 * usable (h_f > 0), else fs_kernel runs.
 *   Direct certificates (fe_kernel<true>; every [0, 1) power-of-two grid, the benchmark's):
 * key < bins alone proves the bin, out-of-range samples included: FADD, FMUL, FADD.RM, IADD,
 * ISETP, BRA, LEA, RED; only out-of-range samples (and in-range ones whose estimate reaches
 * bins: the last bin) take fe_slow, which needs no edge there.
 *   Otherwise (fe_kernel<false>) the test's symmetric form, |f - (key + 1/2)| < h_f: FADD, FMUL,
 * FADD.RM, IADD, FADD, FADD, ISETP, FSETP(|d|, AND), BRA, LEA, RED = 11, plus ~0.8 of load/loop
 * overhead per sample: ~12 thread-instructions per sample. Out-of-range samples never pass.
 *   Slow path (fe_slow; uniform data over [0, 1) with 1000 bins: ~0.01% of samples): NaN /
 * below / above range by compares, then fast_even.h's one-edge rule, bin = j - 1 + (x >= E(j)):
 * one edge by binmap.h's own formula in double. No edge table, so no per-block set-up.
 *
 * fx_kernel, f32 EDGES, bins <= 1024. For float x and a double edge e, x >= e <=> x >= ru(e) (e
 * rounded up to float), and x > e <=> x >= nextup(rd(e)). So with thresholds T[j] = ru(e[j])
 * (j < bins), T[bins] = ru(e[bins]) or, last edge inclusive, nextup(rd(e[bins])), the count
 * k(x) = #{j : x >= T[j]} gives the slot exactly: 0 underflow, 1..bins bin k - 1, bins + 1
 * overflow (NaN: bins + 2). Counters are kept in k order and renamed at the merge.
 *   One-load cell table. q(x) = bits(rz(sat(fma(x, cs, ck)) + cq)), cq = 2^-k, runs from bits(cq)
 * to bits(1 + cq) and is monotone in x (every step rounds monotonely; .sat sends NaN to 0); q >>
 * sh, less bits(cq) >> sh, is the cell, the low sh = 23 - b bits the position in it. k = 0 is a
 * linear map (2^b + 1 cells, b = 10 at most); k = 1..4 gives k octaves of 2^b cells, each twice as
 * fine as the next towards the first edge (k = 4, b = 8: 1041 cells). The host picks k and b per
 * edge array (fx_choose: the least share of the edges' range in crowded cells; remembered per
 * host thread, since the choice costs ~20 us against ~0.27 ms of kernel per GiB). With
 * q_j = q(T[j]) computed by the same code: q(x) > q_j => x >= T[j], q(x) < q_j => x < T[j]. So
 * for x in cell c, k(x) = base(c) + #{j in [base, base + amb) : x >= T[j]}, base = #{j : cell of
 * q_j < c}, amb = #{j : cell of q_j = c}, whatever rounding cs and ck carry (they only spread the
 * thresholds over the cells). A cell with amb <= 1 has one 32-bit entry, base << 16 | low, low =
 * 0xFFFF - frac(q_base) (amb = 1; frac = the low sh bits, sh <= 15) or 0x7FFF (amb = 0): adding
 * frac(q(x)) carries into bit 16 exactly when frac(q(x)) > frac(q_base), i.e. x >= T[base], so
 * s = entry + frac(q(x)) gives k = s >> 16 with one shared load; low half 0xFFFF means the two
 * q are equal (undecided: the search below, over [base, base + 1)). Cell 0 (NaN and below the
 * first edge) and cells with amb >= 2 are flagged (bit 31). While the shared-memory budget
 * lasts (11 at 256 bins with 1041 cells), a crowded cell's entry points at a sub-table of 16
 * sub-cells (the next 4 bits of q) in the same encoding with sh - 4 position bits, decided by a
 * second load; the rest, and flagged sub-cells, count NaN, then four compares on T (amb <= 4) or
 * a binary search of [base, base + amb] (T has NaN entries up to bins + 4).
 *   The cell tables are lane-replicated (entry i of lane l at [i * 32 + l]): every probe hits the
 * lane's own bank, one wavefront, whatever the data; T (only the divergent path reads it) is
 * kept once. 1025-1041 cells x 128 B + 8 counter copies + sub-tables of 2 KiB: at most 163 KiB
 * (FX_SMEM_BUDGET: L1 keeps the rest; one block per SM).
 *   Per sample (SASS): FFMA.SAT, FADD.RZ, SHF, LOP, IMAD, LDS, IADD, LOP, ISETP, BRA, SHF, LOP,
 * IADD, ATOMS + BSSY/BSYNC = 16, one shared load (a cell table of two compares needs three, and
 * the shared pipe is what binds that table). Uniform data over the benchmark's quadratic edges
 * puts 0.8% of samples in crowded cells of the linear map (x < 1/64), so ~22% of warp-steps take
 * the divergent path (the sub-tables make it one more load instead of four compares); the k = 4
 * map leaves 0.06% (x < 2^-10), ~2% of warp-steps. Measured (the one-load against the
 * two-compare table, the linear against the octave map, the map chosen per call against
 * remembered): docs/PERFORMANCE.md, "f32, 256 uneven edges" and "Measurements behind the CUDA
 * sources".
 *
 * fs_kernel (general). f32 EVEN outside fe_kernel's range: fast_even.h's test (two-sided, before
 * any range check), then NaN / outside by compares and the one-edge rule on a shared float edge
 * table E[0..bins]; specs the certificate refuses take binmap.h's walk on the table. f32 EDGES
 * past 1024 bins or without a finite cell map: binmap.h's binary search on float edges rounded up
 * (the rule above), lane-replicated when bins + 1 <= 320. Other dtypes / kinds: binmap.h's gh_slot
 * (common.cuh) per sample, EDGES from a shared double copy of the edge array. fs_kernel keeps
 * R = 4 counter copies for <= 1024 counters, else 1.
 *
 * Counters: each block counts at most 2^31 samples per launch (common.cuh: gh_segments), so no
 * 32-bit counter wraps. Merge: sum of the copies, one 64-bit global atomic per non-zero counter
 * per block. Loads cover the 16-byte-aligned body of each launch's element range; the unaligned
 * head/tail (< 16 bytes each) are counted element by element by block 0 (fs_kernel's walk is
 * common.cuh's gh_vec16_walk, shared with cuda-fast-global). Element and vector indices are
 * 64-bit.
 * Limits: fs_kernel: R * 4 * active * (bins + 3) + tables must fit the opt-in shared memory (227
 * KiB on H100/H200). fe_kernel: (bins + 3) * 4 * R (R <= 16, chosen to stay <= 160 KiB) must fit.
 * Data dependence: atomics merge same-address lanes in hardware (hot data runs as fast as
 * spread data: docs/PERFORMANCE.md, "CUDA (NVIDIA H200)"); fe_kernel's slow path is taken for
 * samples that fail fast_even.h's test (near an edge), fx_kernel's for samples in crowded cells
 * (many narrow bins) and below the first edge.
 * Exactness: the kernels are checked against cpu-reference on the GPU (tests/gpu edge_cells,
 * whose edge sets pick k = 0, 1 and 4, and the property suite). The f32 EVEN forms are
 * fast_even.h's, checked against binmap.h by a CPU emulation of the device arithmetic (its
 * banner); the float-threshold rule of fx_kernel by a CPU emulation of the slot logic (float ops
 * without contraction, fmaf): ~9e7 EDGES evaluations over ~3000 edge sets
 * (quadratic, random, sub-ulp clusters, clumps, edges past FLT_MAX, both last-edge rules, 257 to
 * 1025 cells): no mismatch.
 * Seed: 001 section V.B, 002 (privatised shared histograms); certified estimate, float-rounded
 * edge thresholds and the monotone cell table are new.
 */
#include "common.cuh"
#include "fast_even.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

#define FS_THREADS 256
#define FS_U 4 /* 16-byte vectors per thread per iteration */
#define FS_REP_MAX_COUNTERS 1024u
#define FS_REP 4u
#define FS_LANE_REP_MAX_EDGES 320u /* 32 copies: 40 KiB at most */

enum { FS_GENERIC = 0, FS_F32_EVEN = 1, FS_F32_EDGES = 2 };

struct fs_params {
    gh_kparams k;
    uint32_t reps;      /* counter replicas */
    uint32_t edge_rep;  /* FS_F32_EDGES: 32 (lane-interleaved) or 1 */
    uint32_t cert_ok;   /* FS_F32_EVEN: fast_even.h's certificate holds */
    float t_lo, t_hi;   /* FS_F32_EVEN: its thresholds (t_lo_f, t_hi_f) */
};

/* Exact f32 EVEN slot (see banner); tab = E(0..bins) as floats. */
__device__ __forceinline__ uint32_t fs_slot_even_f32(const fs_params &p, const gpuhist_binmap &m,
                                                     const float *tab, float x)
{
    const uint32_t bins = m.bins;
    if (p.cert_ok) { /* THE TEST first: it also rejects NaN and out-of-range samples */
        int ok;
        const uint32_t key =
            gpuhist_fe_key_f32(x, m.lower_f, m.scale_f, bins, p.t_lo, p.t_hi, 1, &ok);
        if (ok)
            return key;
    }
    uint32_t outside;
    if (gpuhist_even_f32_outside(&m, x, &outside))
        return outside;
    const float f = gpuhist_fe_estimate_f32(x, m.lower_f, m.scale_f);
    if (p.cert_ok) { /* the one-edge rule */
        const uint32_t j = gpuhist_fe_pivot_f32(f, bins, p.t_lo);
        return j - 1u + (x >= tab[j] ? 1u : 0u);
    }
    /* refused: binmap.h's gpuhist_slot_even_f32, edges from the table */
    uint32_t i;
    if (f < (float)bins)
        i = gpuhist_clamp_estimate((double)f, bins);
    else
        i = gpuhist_clamp_estimate(((double)x - m.lower) * m.scale, bins);
    while (i > 0u && x < tab[i])
        --i;
    while (i + 1u < bins && x >= tab[i + 1u])
        ++i;
    return i;
}

/* Exact f32 EDGES slot: binmap.h's gpuhist_slot_edges_f64 on float edges rounded up. */
__device__ __forceinline__ uint32_t fs_slot_edges_f32(const gpuhist_binmap &m, const float *tab,
                                                      uint32_t rep, uint32_t lane, float x)
{
    const uint32_t bins = m.bins;
    if (x != x)
        return GPUHIST_SLOT_NAN(bins);
    if (x < tab[lane])
        return GPUHIST_SLOT_UNDERFLOW(bins);
    if (!(x < tab[bins * rep + lane])) /* (double)x >= e[bins] */
        return (m.last_inclusive && (double)x == m.upper) ? bins - 1u
                                                          : GPUHIST_SLOT_OVERFLOW(bins);
    uint32_t lo = 0, hi = bins;
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if (x < tab[mid * rep + lane])
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

template <typename T, bool MULTI, int MODE>
__global__ void __launch_bounds__(FS_THREADS)
    fs_kernel(const fs_params p, const uint64_t vbegin, const uint64_t nvec,
              unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    const gh_kparams &kp = p.k;
    const gpuhist_binmap m = kp.map;
    const uint32_t ncnt = kp.counters;
    uint32_t *cnt = (uint32_t *)fs_smem;
    unsigned char *tables = fs_smem + (((size_t)p.reps * ncnt * 4u + 15u) & ~(size_t)15u);
    const uint32_t tid = threadIdx.x, lane = tid & 31u;

    for (uint32_t i = tid; i < p.reps * ncnt; i += FS_THREADS)
        cnt[i] = 0u;
    const float *ftab = (const float *)tables;
    const double *dedges = kp.edges;
    if (MODE == FS_F32_EVEN) {
        float *t = (float *)tables;
        for (uint32_t i = tid; i <= m.bins; i += FS_THREADS) /* E(bins) = upper_f */
            t[i] = gpuhist_even_edge_f32(&m, i);
    } else if (MODE == FS_F32_EDGES) {
        float *t = (float *)tables;
        const uint32_t n = (m.bins + 1u) * p.edge_rep;
        for (uint32_t i = tid; i < n; i += FS_THREADS)
            t[i] = __double2float_ru(kp.edges[i / p.edge_rep]);
    } else if (m.kind == GH_KIND_EDGES) {
        double *t = (double *)tables;
        for (uint32_t i = tid; i <= m.bins; i += FS_THREADS)
            t[i] = kp.edges[i];
        dedges = t;
    }
    __syncthreads();

    uint32_t *mycnt = cnt + ((tid >> 5) % p.reps) * ncnt;
    const uint32_t elane = MODE == FS_F32_EDGES && p.edge_rep > 1u ? lane : 0u;
    auto count = [&](T x, uint32_t ch) {
        uint32_t s;
        if (MODE == FS_F32_EVEN)
            s = fs_slot_even_f32(p, m, ftab, (float)x);
        else if (MODE == FS_F32_EDGES)
            s = fs_slot_edges_f32(m, ftab, p.edge_rep, elane, (float)x);
        else
            s = gh_slot(&m, dedges, x);
        if (MULTI) {
            const int32_t b = gh_base(kp, ch);
            if (b < 0)
                return;
            s += (uint32_t)b;
        }
        atomicAdd(mycnt + s, 1u);
    };

    gh_vec16_walk<T, MULTI, FS_THREADS, FS_U, false>(kp, vbegin, nvec,
                                                     [&](T x, uint32_t ch, bool) { count(x, ch); });
    __syncthreads();

    for (uint32_t j = tid; j < ncnt; j += FS_THREADS) {
        uint32_t s = 0; /* all replicas together count at most 2^31 samples */
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

/* ==== single-channel f32 specialisations ====================================================== */

#define FX_THREADS 1024 /* one block per SM: the edge tables want most of shared memory */
#define FE_U 4  /* 16-byte vectors per thread per stage (two stages in flight), even bins */
#define FXE_U 4 /* the same, explicit edges (register budget of 64 at 1024 threads) */
#define FX_MAX_REPS 16u
#define FX_REP_BYTES (160u * 1024u)
#define FX_CELL_BITS_MAX 10 /* 2^10 + 1 cells (linear map) */
#define FX_CELL_BITS_MIN 8 /* sh <= 15: an entry's low half holds the position in a cell */
#define FX_OCTAVES_MAX 4   /* cq >= 2^-4: 4 octaves of 256 cells fit the budget at 256 bins */
#define FX_FLAG 0x80000000u

/* Loop shared by both kernels: the block's chunks of FX_THREADS * U vectors, two stages (U loads
 * each) in flight, then the partial chunk, vector by vector. `each` counts a float; `setup` (table
 * build, ending in __syncthreads) runs once the first stage is on its way, hiding its latency. */
template <int U, class S, class F>
__device__ __forceinline__ void fx_stream(const uint4 *__restrict__ vec, uint64_t nvec, S &&setup,
                                          F &&each)
{
    const uint32_t tid = threadIdx.x;
    const uint64_t CH = (uint64_t)FX_THREADS * U;
    const uint64_t nfull = nvec / CH;
    const uint64_t G = gridDim.x;
    auto body = [&](const uint4(&v)[U]) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            each(__uint_as_float(v[u].x));
            each(__uint_as_float(v[u].y));
            each(__uint_as_float(v[u].z));
            each(__uint_as_float(v[u].w));
        }
    };
    auto load = [&](uint4(&v)[U], uint64_t c) {
        const uint4 *q = vec + c * CH + tid;
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = __ldcs(q + u * FX_THREADS);
    };
    uint64_t c = blockIdx.x;
    uint4 a[U], b[U];
    if (c < nfull)
        load(a, c);
    setup();
    while (c < nfull) {
        if (c + G < nfull)
            load(b, c + G);
        body(a);
        c += G;
        if (c >= nfull)
            break;
        if (c + G < nfull)
            load(a, c + G);
        body(b);
        c += G;
    }
    /* partial chunk: vectors [nfull * CH, nvec) spread over all blocks */
    for (uint64_t i = nfull * CH + (uint64_t)blockIdx.x * FX_THREADS + tid; i < nvec;
         i += G * FX_THREADS) {
        const uint4 w = __ldcs(vec + i);
        each(__uint_as_float(w.x));
        each(__uint_as_float(w.y));
        each(__uint_as_float(w.z));
        each(__uint_as_float(w.w));
    }
}

struct fx_params {
    const uint4 *vec;     /* 16-byte-aligned body of the launch */
    uint64_t nvec;
    const float *head;    /* fewer than 4 elements before the body ... */
    const float *tail;    /* ... and after it, counted by block 0 */
    uint32_t nhead, ntail;
    uint32_t bins, ncnt;  /* ncnt = bins + 3 */
    uint32_t reps;        /* counter replicas per block (warp w uses w % reps) */
    int32_t last_inclusive;
    /* EVEN */
    float lo, sc, h, t_lo; /* lower_f, scale_f; fast_even.h's h_f and t_lo_f */
    gpuhist_binmap map;    /* fe_slow: the outside rule and binmap.h's edges */
    /* EDGES */
    const double *edges;  /* device copy, bins + 1 */
    float cs, ck, cq;     /* q(x) = bits(rz(sat(fma(x, cs, ck)) + cq)), cq = 2^-k */
    uint32_t first;       /* bits(cq) >> sh: cell(x) = (q(x) >> sh) - first */
    uint32_t cells;       /* (bits(1 + cq) >> sh) - first + 1 */
    uint32_t sh;          /* 23 - b: 2^b cells per octave of u + cq */
    uint32_t subs;        /* sub-tables for crowded cells */
};

/* EVEN slot of x off the fast path: out of range, NaN, or a sample that failed the test. */
template <bool DIRECT>
__device__ __forceinline__ uint32_t fe_slow(const fx_params &p, float x)
{
    return gpuhist_fe_fix_f32(&p.map, p.t_lo, DIRECT, x);
}

/* f32 EVEN, one channel, certificate usable (fe_setup): see the banner. DIRECT: the
 * certificate is direct, so a sample whose key is a bin needs no test at all and only
 * out-of-range samples take fe_slow. */
template <bool DIRECT>
__global__ void __launch_bounds__(FX_THREADS, 1)
    fe_kernel(const __grid_constant__ fx_params p, unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    uint32_t *cnt = (uint32_t *)fs_smem;
    const uint32_t tid = threadIdx.x, ncnt = p.ncnt, total = p.reps * ncnt;
    const uint32_t my = (uint32_t)__cvta_generic_to_shared(cnt + ((tid >> 5) % p.reps) * ncnt);
    const float lo = p.lo, sc = p.sc, h = p.h;
    const uint32_t bins = p.bins;
    auto each = [&](float x) {
        int ok;
        uint32_t idx = DIRECT ? gpuhist_fe_key_f32(x, lo, sc, bins, 0.0f, 0.0f, 0, &ok)
                              : gpuhist_fe_key_sym_f32(x, lo, sc, bins, h, &ok);
        if (!ok)
            idx = fe_slow<DIRECT>(p, x);
        gh_red_shared(my + idx * 4u);
    };
    auto setup = [&]() {
        for (uint32_t i = tid; i < total; i += FX_THREADS)
            cnt[i] = 0u;
        __syncthreads();
        if (blockIdx.x == 0 && tid < p.nhead + p.ntail)
            each(tid < p.nhead ? p.head[tid] : p.tail[tid - p.nhead]);
    };
    fx_stream<FE_U>(p.vec, p.nvec, setup, each);
    __syncthreads();
    for (uint32_t j = tid; j < ncnt; j += FX_THREADS) {
        uint32_t s = 0;
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

/* q(x), monotone in x: u = sat(fma(x, cs, ck)) lies in [0, 1] (.sat flushes NaN to +0, as
 * __saturatef is documented to), and u + cq rounded toward zero runs from cq to 1 + cq, so q runs
 * from bits(cq) to bits(1 + cq) and q >> sh, less bits(cq) >> sh, is the cell (banner). Every
 * step is monotone in x; the tables use this very code. */
__device__ __forceinline__ uint32_t fx_q(float x, float cs, float ck, float cq)
{
    float u; /* one FFMA.SAT: __saturatef(__fmaf_rn(x, cs, ck)), NaN -> +0 */
    asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(u) : "f"(x), "f"(cs), "f"(ck));
    return __float_as_uint(__fadd_rz(u, cq));
}

/* Threshold j of the count k(x) = #{j in [0, bins] : x >= T[j]} (banner), float x exact. */
__device__ __forceinline__ float fx_threshold(const fx_params &p, uint32_t j)
{
    if (j < p.bins)
        return __double2float_ru(p.edges[j]);
    if (j == p.bins) {
        const double e = p.edges[j];
        /* last edge inclusive: overflow means x > e, i.e. x >= the float after rd(e) */
        return p.last_inclusive ? nextafterf(__double2float_rd(e), INFINITY)
                                : __double2float_ru(e);
    }
    return __int_as_float(0x7fffffff); /* padding: x >= NaN is false */
}

/* Shared loads at 32-bit shared addresses. volatile: the compiler must not move them above the
 * __syncthreads that ends the table build (it cannot see what they read). */
__device__ __forceinline__ float fx_lds_f32(uint32_t a)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a));
    return v;
}
__device__ __forceinline__ uint32_t fx_lds_u32(uint32_t a)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
}

/* 0xFFFFFFFF if x >= t else 0 (one FSET; NaN on either side gives 0) */
__device__ __forceinline__ uint32_t fx_ge_mask(float x, float t)
{
    uint32_t m;
    asm("set.ge.u32.f32 %0, %1, %2;" : "=r"(m) : "f"(x), "f"(t));
    return m;
}

/* Sub-tables: a cell holding two or more thresholds gets (while they last) FX_SUB_CELLS
 * sub-cells, the next FX_SUB_BITS bits of q, in the same one-load encoding. */
#define FX_SUB_BITS 4u
#define FX_SUB_CELLS (1u << FX_SUB_BITS)
#define FX_SUB_MAX 64u
#define FX_SUB 0x40000000u      /* with FX_FLAG: the entry is the lane's sub-table address */
#define FX_NONE 0x7FFFu         /* low half of an entry whose cell holds no threshold */
#define FX_TEST 0x8000FFFFu     /* (entry + frac) & FX_TEST >= 0xFFFF: flagged, or equal frac */

/* Shared layout of fx_kernel: [pad to 128][cells x 32 entries][subs x FX_SUB_CELLS x 32
 * entries][reps x ncnt counters][bins + 1 q values][bins + 5 thresholds][subs owner cells][1
 * claim counter]. */
static size_t fx_smem(uint32_t bins, uint32_t cells, uint32_t subs, uint32_t reps)
{
    return 128u + (size_t)cells * 128u + (size_t)subs * FX_SUB_CELLS * 128u +
           (size_t)reps * (bins + 3u) * 4u + ((size_t)bins + 1u) * 4u + ((size_t)bins + 5u) * 4u +
           (size_t)subs * 4u + 4u;
}

/* Shared memory fx_kernel may take: the rest of the SM's 256 KiB is L1, through which the
 * block's loads in flight pass (1024 threads x 8 x 16 B). H200, 1 GiB, 256 quadratic edges,
 * uniform / hot90 / constant / bell, one build, sub-tables capped at run time: 0 (138 KiB)
 * 0.746 / 0.917 / 0.924 / 0.897 of the read ceiling, 4 0.804 / 0.914 / 0.921 / 0.855, 8 0.859 /
 * 0.913 / 0.927 / 0.855, 12 (162 KiB) 0.859 / 0.913 / 0.927 / 0.898, 20 (178 KiB) 0.846 / 0.797 /
 * 0.823 / 0.765; 27 with T lane-replicated (225 KiB) 0.745 / 0.701 / 0.717 / 0.696 (bell varies
 * by ~0.04 from run to run). Likely cause: past 164 KiB per SM (with the 1 KiB the system
 * reserves) the carveout steps to 196 KiB and L1 shrinks from 92 to 60 KiB. */
#define FX_SMEM_BUDGET (163u * 1024u)
/* Edges fx_kernel takes: the counters and thresholds leave room for 513+ cells in the budget,
 * and an entry's base (< 2^14) stays clear of the flag bits */
#define FX_MAX_BINS 1024u

/* The one-load entry of a (sub-)cell: thresholds [base, base + amb) lie in it; qb = q(T[base]),
 * fm the mask of the bits of q below the (sub-)cell. */
__device__ __forceinline__ uint32_t fx_entry(uint32_t base, uint32_t amb, uint32_t qb, uint32_t fm)
{
    if (amb > 1u)
        return FX_FLAG | (base << 16) | amb;
    return (base << 16) | (amb == 0u ? FX_NONE : 0xFFFFu - (qb & fm));
}

/* f32 EDGES, one channel: the one-load cell table (banner). Counters are kept in k order (k = 0
 * underflow, 1..bins bin k-1, bins+1 overflow, bins+2 NaN) and renamed at the merge. */
__global__ void __launch_bounds__(FX_THREADS, 1) fx_kernel(const fx_params p,
                                                          unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    const uint32_t tid = threadIdx.x, lane = tid & 31u;
    const uint32_t bins = p.bins, ncnt = p.ncnt, cells = p.cells, subs = p.subs;
    const uint32_t sh = p.sh, sh2 = p.sh - FX_SUB_BITS;
    const uint32_t s0 = (uint32_t)__cvta_generic_to_shared(fs_smem);
    const uint32_t pad = (128u - (s0 & 127u)) & 127u;
    uint32_t *C = (uint32_t *)(fs_smem + pad);     /* C[c * 32 + lane], 128-byte aligned */
    uint32_t *SUB = C + cells * 32u;               /* SUB[(i * FX_SUB_CELLS + t) * 32 + lane] */
    uint32_t *cnt = SUB + subs * FX_SUB_CELLS * 32u;
    uint32_t *qj = cnt + p.reps * ncnt;            /* q(T[j]), j <= bins */
    float *tj = (float *)(qj + bins + 1u);          /* T[j], j < bins + 5, once */
    uint32_t *owner = (uint32_t *)(tj + bins + 5u); /* cell of sub-table i */
    uint32_t *claimed = owner + subs;
    const uint32_t tb = (uint32_t)__cvta_generic_to_shared(tj); /* shared address of T */
    const uint32_t first = p.first; /* q >> sh of cell 0 */

    /* [base, base + amb) = the thresholds whose q, shifted right by `shift`, equals v; searched
     * in [a, z) (q is non-decreasing in j) */
    auto range = [&](uint32_t v, uint32_t shift, uint32_t a, uint32_t z, uint32_t &base,
                     uint32_t &amb) {
        const uint32_t z0 = z;
        while (a < z) {
            const uint32_t mid = (a + z) >> 1;
            if ((qj[mid] >> shift) < v)
                a = mid + 1u;
            else
                z = mid;
        }
        base = a;
        z = z0;
        while (a < z) {
            const uint32_t mid = (a + z) >> 1;
            if ((qj[mid] >> shift) <= v)
                a = mid + 1u;
            else
                z = mid;
        }
        amb = a - base;
    };
    /* An entry into all 32 lane copies of a table row, rotated (no bank conflicts); a sub-table
     * pointer gets each lane's own copy's address. */
    auto put = [&](uint32_t *row, uint32_t e) {
        const uint32_t step = (e & FX_SUB) ? 4u : 0u;
#pragma unroll 1
        for (uint32_t r = 0; r < 32u; ++r) {
            const uint32_t l = (r + lane) & 31u;
            row[l] = e + l * step;
        }
    };
    /* Table build: one global edge load per thread, then replication from shared memory. */
    auto build = [&]() {
        for (uint32_t j = tid; j < bins + 5u; j += FX_THREADS) {
            const float t = fx_threshold(p, j);
            tj[j] = t;
            if (j <= bins)
                qj[j] = fx_q(t, p.cs, p.ck, p.cq);
        }
        for (uint32_t i = tid; i < p.reps * ncnt; i += FX_THREADS)
            cnt[i] = 0u;
        if (tid == 0)
            *claimed = 0u;
        __syncthreads();
        for (uint32_t c = tid; c < cells; c += FX_THREADS) {
            uint32_t base, amb;
            range(c + first, sh, 0u, bins + 1u, base, amb);
            uint32_t e = fx_entry(base, amb, amb ? qj[base] : 0u, (1u << sh) - 1u);
            /* cell 0 holds NaN (and everything below the first edge): always the search */
            if (c == 0u)
                e = FX_FLAG | (base << 16) | amb;
            else if (amb > 1u) {
                const uint32_t i = atomicAdd(claimed, 1u);
                if (i < subs) {
                    owner[i] = c;
                    e = FX_FLAG | FX_SUB;
                    e |= (uint32_t)__cvta_generic_to_shared(SUB + i * FX_SUB_CELLS * 32u);
                }
            }
            put(C + c * 32u, e);
        }
        __syncthreads();
        const uint32_t used = min(*claimed, subs);
        for (uint32_t it = tid; it < used * FX_SUB_CELLS; it += FX_THREADS) {
            const uint32_t i = it / FX_SUB_CELLS, t = it % FX_SUB_CELLS;
            uint32_t cb, ca, base, amb;
            range(owner[i] + first, sh, 0u, bins + 1u, cb, ca);
            range(((owner[i] + first) << FX_SUB_BITS) + t, sh2, cb, cb + ca, base, amb);
            put(SUB + it * 32u, fx_entry(base, amb, amb ? qj[base] : 0u, (1u << sh2) - 1u));
        }
        __syncthreads();
    };

    /* the lane's entry of the cell of q: cl + (q >> sh) * 128 (32-bit wrap-around) */
    const uint32_t cl = (uint32_t)__cvta_generic_to_shared(C) + lane * 4u - first * 128u;
    const uint32_t my = (uint32_t)__cvta_generic_to_shared(cnt + ((tid >> 5) % p.reps) * ncnt);
    const float cs = p.cs, ck = p.ck, cq = p.cq;
    const uint32_t fm = (1u << sh) - 1u, fm2 = (1u << sh2) - 1u;
    auto each = [&](float x) {
        /* q(x) > q(T) => x >= T, q(x) < q(T) => x < T (monotone, the same code built the table):
         * the carry of the entry's low half + frac(q(x)) into bit 16 is the compare */
        const uint32_t q = fx_q(x, cs, ck, cq);
        uint32_t e = fx_lds_u32(cl + (q >> sh) * 128u);
        uint32_t s = e + (q & fm);
        uint32_t a;
        if ((s & FX_TEST) < 0xFFFFu) {
            a = my + (s >> 16) * 4u;
        } else {
            if ((e & (FX_FLAG | FX_SUB)) == (FX_FLAG | FX_SUB)) {
                /* a crowded cell: the entry of x's sub-cell, the same encoding one level down */
                e = fx_lds_u32((e & ~(FX_FLAG | FX_SUB)) +
                               ((q >> sh2) & (FX_SUB_CELLS - 1u)) * 128u);
                s = e + (q & fm2);
            }
            if ((s & FX_TEST) < 0xFFFFu) {
                a = my + (s >> 16) * 4u;
            } else if (x != x) {
                a = my + (bins + 2u) * 4u;
            } else {
                /* thresholds below base are <= x, those past base + amb are > x: search the
                 * amb in between (one when x fell on a threshold's q) */
                uint32_t lo = (e >> 16) & 0x7fffu;
                const uint32_t amb = (e & FX_FLAG) ? e & 0xffffu : 1u;
                if (amb <= 4u) { /* four compares (T has NaN entries up to bins + 4) */
                    const uint32_t t = tb + lo * 4u;
                    lo = lo - fx_ge_mask(x, fx_lds_f32(t)) - fx_ge_mask(x, fx_lds_f32(t + 4u)) -
                         fx_ge_mask(x, fx_lds_f32(t + 8u)) - fx_ge_mask(x, fx_lds_f32(t + 12u));
                } else {
                    uint32_t hi = lo + amb;
                    while (lo < hi) {
                        const uint32_t mid = (lo + hi) >> 1;
                        if (x >= tj[mid])
                            lo = mid + 1u;
                        else
                            hi = mid;
                    }
                }
                a = my + lo * 4u;
            }
        }
        gh_red_shared(a);
    };
    auto setup = [&]() {
        build();
        if (blockIdx.x == 0 && tid < p.nhead + p.ntail)
            each(tid < p.nhead ? p.head[tid] : p.tail[tid - p.nhead]);
    };
    fx_stream<FXE_U>(p.vec, p.nvec, setup, each);
    __syncthreads();
    for (uint32_t k = tid; k < ncnt; k += FX_THREADS) {
        uint32_t s = 0;
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + k];
        const uint32_t slot = k == 0u ? bins : (k <= bins ? k - 1u : k);
        if (s)
            atomicAdd(out + slot, (unsigned long long)s);
    }
}

static int fs_mode(const gpuhist_plan *plan)
{
    if (plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EVEN)
        return FS_F32_EVEN;
    if (plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EDGES)
        return FS_F32_EDGES;
    return FS_GENERIC;
}

/* Shared memory of a plan; 0 if its counters overflow 32-bit indices. */
static size_t fs_smem_bytes(const gpuhist_plan *plan, uint32_t *reps, uint32_t *edge_rep)
{
    const uint32_t n = gh_counters_ok(plan);
    if (n == 0)
        return 0;
    *reps = n <= FS_REP_MAX_COUNTERS ? FS_REP : 1u;
    *edge_rep = 1;
    size_t s = (((size_t)*reps * n * 4u) + 15u) & ~(size_t)15u;
    switch (fs_mode(plan)) {
    case FS_F32_EVEN:
        s += ((size_t)plan->bins + 1u) * 4u;
        break;
    case FS_F32_EDGES:
        *edge_rep = plan->bins + 1u <= FS_LANE_REP_MAX_EDGES ? 32u : 1u;
        s += ((size_t)plan->bins + 1u) * 4u * *edge_rep;
        break;
    default:
        if (plan->map.kind == GH_KIND_EDGES)
            s += ((size_t)plan->bins + 1u) * 8u;
        break;
    }
    return s;
}

static int fs_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    uint32_t r, e;
    const size_t s = fs_smem_bytes(plan, &r, &e);
    return s != 0 && s <= gpuhist_cuda_smem_optin(ctx);
}

/* fe_kernel's parameters from fast_even.h's certificate (banner): 0 when it does not apply
 * (refused, or neither direct nor with a usable symmetric form: then fs_kernel runs). */
static int fe_setup(const gpuhist_plan *plan, fx_params *q, int *direct)
{
    gpuhist_fe_cert c;
    gpuhist_fe_cert_of(&plan->map, &c); /* cached per spec */
    if (!c.ok || !(c.direct || c.h_f > 0.0f))
        return 0;
    q->lo = plan->map.lower_f;
    q->sc = plan->map.scale_f;
    q->h = c.h_f;
    q->t_lo = c.t_lo_f;
    q->map = plan->map;
    *direct = c.direct;
    return 1;
}

/* Float x >= e <=> x >= e rounded up to float (host copy of the device rule). */
static float fx_ru(double e)
{
    float f = (float)e;
    if ((double)f < e)
        f = nextafterf(f, INFINITY);
    return f;
}

static uint32_t fx_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Host copy of fx_q (the choice of map below only estimates: the kernel builds its tables with
 * its own fx_q, so a rounding difference here costs speed at most, never exactness). */
static uint32_t fx_q_host(float x, float cs, float ck, float cq)
{
    float u = fmaf(x, cs, ck);
    u = u > 0.0f ? (u < 1.0f ? u : 1.0f) : 0.0f;
    const double d = (double)u + (double)cq;
    float f = (float)d;
    if ((double)f > d) /* round toward zero */
        f = nextafterf(f, 0.0f);
    return fx_bits(f);
}

static float fx_from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* Cells of the map with cq = 2^-k and 2^b cells per octave: q runs from bits(cq) to bits(1 + cq)
 * (1 + cq is exact). */
static uint32_t fx_cells(int k, int b)
{
    const float cq = ldexpf(1.0f, -k);
    return (fx_bits(1.0f + cq) >> (23 - b)) - (fx_bits(cq) >> (23 - b)) + 1u;
}

/* One candidate cell map: u = (x - t0) * cs + lo_u over [t0, hi] -> [lo_u, 1], q = bits(u + cq),
 * 2^b cells per octave of u + cq (cq = 2^-k: k octaves, each finer than the last towards the
 * first edge; k = 0 is linear). Fills q's map fields; returns the share of [lo_u, 1] that lies in
 * crowded cells (two or more thresholds: the kernel's divergent path), or -1 if unusable. */
static double fx_map(const float *T, uint32_t n, double t0, double span, int k, int b,
                     fx_params *q)
{
    const float cq = ldexpf(1.0f, -k);
    const uint32_t sh = (uint32_t)(23 - b);
    const double lo_u = ldexp(1.0, -k - b); /* width of cell 0: the first edge starts cell 1 */
    const float cs = (float)((1.0 - lo_u) / span);
    if (!(cs > 0.0f) || !isfinite(cs))
        return -1.0;
    const float ck = (float)(lo_u - t0 * (double)cs);
    if (!isfinite(ck))
        return -1.0;
    const uint32_t first = fx_bits(cq) >> sh;
    q->cs = cs;
    q->ck = ck;
    q->cq = cq;
    q->sh = sh;
    q->first = first;
    q->cells = fx_cells(k, b);
    /* the thresholds' cells are non-decreasing: walk the runs of equal cells */
    double crowded = 0.0;
    uint32_t cell = fx_q_host(T[0], cs, ck, cq) >> sh, run = 1u;
    for (uint32_t j = 1; j <= n; ++j) {
        const uint32_t next = j < n ? fx_q_host(T[j], cs, ck, cq) >> sh : ~0u;
        if (next == cell) {
            ++run;
            continue;
        }
        if (run >= 2u && cell > first) {
            const double lo = (double)fx_from_bits(cell << sh) - cq;
            const double hi = (double)fx_from_bits((cell + 1u) << sh) - cq;
            crowded += fmin(hi, 1.0) - fmax(lo, lo_u);
        }
        cell = next;
        run = 1u;
    }
    return crowded / (1.0 - lo_u);
}

/* The cell map's fields of m into q (the rest of q is the launch's). */
static void fx_take_map(fx_params *q, const fx_params &m)
{
    q->cs = m.cs;
    q->ck = m.ck;
    q->cq = m.cq;
    q->first = m.first;
    q->cells = m.cells;
    q->sh = m.sh;
}

/* Cell map of fx_kernel; 0 if the edges give no finite affine map (then the lane-replicated
 * search of fs_kernel runs). Any positive finite cs and any cq work for exactness: they only
 * spread work. Of the maps that fit the shared-memory budget, the one with the least crowded
 * share of [first edge, last edge] wins (samples spread evenly over the edges' range assumed);
 * ties keep the linear map. The benchmark's quadratic edges (narrow bins towards 0): linear
 * 1025 cells 0.8% crowded, cq = 2^-4 with 256 cells per octave (1041 cells) 0.06%. Fills q's
 * map fields (cs, ck, cq, first, cells, sh, subs, reps). */
static int fx_choose(const gpuhist_plan *plan, size_t optin, fx_params *q, size_t *smem)
{
    const uint32_t bins = plan->bins;
    float T[FX_MAX_BINS + 1u];
    for (uint32_t j = 0; j <= bins; ++j)
        T[j] = fx_ru(plan->edges[j]);
    const float t0 = T[0], tl = T[bins];
    if (!isfinite(t0))
        return 0;
    const double hi = isfinite(tl) ? (double)tl : (double)FLT_MAX;
    const double span = hi - (double)t0;
    if (!(span > 0.0))
        return 0;
    const size_t budget = optin < FX_SMEM_BUDGET ? optin : FX_SMEM_BUDGET;
    double best = -1.0;
    for (int k = 0; k <= FX_OCTAVES_MAX; ++k) {
        int b = FX_CELL_BITS_MAX; /* the finest map of this k that fits */
        while (b >= FX_CELL_BITS_MIN && fx_smem(bins, fx_cells(k, b), 0u, 8u) > budget)
            --b;
        if (b < FX_CELL_BITS_MIN)
            continue;
        fx_params c;
        const double crowded = fx_map(T, bins + 1u, (double)t0, span, k, b, &c);
        if (crowded >= 0.0 && (best < 0.0 || crowded < best)) {
            best = crowded;
            fx_take_map(q, c);
        }
    }
    if (best < 0.0)
        return 0;
    /* what is left of the budget becomes sub-tables for crowded cells */
    uint32_t subs = 0;
    while (subs < FX_SUB_MAX && fx_smem(bins, q->cells, subs + 1u, 8u) <= budget)
        ++subs;
    q->subs = subs;
    q->reps = 8u;
    *smem = fx_smem(bins, q->cells, subs, 8u);
    return 1;
}

/* fx_choose once per edge array and host thread: it costs ~20 us for 256 edges (five candidate
 * maps), the kernel ~0.27 ms per GiB; a repeated call compares the edges (bins + 1 doubles). */
static int fx_setup(const gpuhist_plan *plan, size_t optin, fx_params *q, size_t *smem)
{
    const uint32_t bins = plan->bins;
    if (!plan->edges || bins < 1u || bins > FX_MAX_BINS)
        return 0;
    thread_local double key[FX_MAX_BINS + 1u];
    thread_local uint32_t key_bins = 0; /* 0: nothing remembered */
    thread_local size_t key_optin, map_smem;
    thread_local int map_ok;
    thread_local fx_params map;
    const size_t eb = ((size_t)bins + 1u) * sizeof(double);
    if (key_bins != bins || key_optin != optin || memcmp(key, plan->edges, eb) != 0) {
        map_ok = fx_choose(plan, optin, &map, &map_smem);
        memcpy(key, plan->edges, eb);
        key_bins = bins;
        key_optin = optin;
    }
    if (!map_ok)
        return 0;
    fx_take_map(q, map);
    q->subs = map.subs;
    q->reps = map.reps;
    *smem = map_smem;
    return 1;
}

/* Launch fe_kernel / fx_kernel over the job (head and tail elements by block 0). */
template <typename K>
static gpuhist_status fx_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, K *kernel,
                                fx_params p, size_t smem, void *out)
{
    cudaError_t err;
    const int grid = gh_grid(job, kernel, FX_THREADS, smem, job->elements / 4u, &err);
    if (grid == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
    return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        const float *d = (const float *)job->data;
        uint64_t nv;
        const uint64_t vb = gh_vec16_body<float>(job->data, b, e, &nv);
        fx_params q = p;
        q.vec = (const uint4 *)(d + vb);
        q.nvec = nv;
        q.head = d + b;
        q.nhead = (uint32_t)(vb - b);
        q.tail = d + vb + nv * 4u;
        q.ntail = (uint32_t)(e - (vb + nv * 4u));
        kernel<<<grid, FX_THREADS, smem, job->stream>>>(q, (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-smem kernel");
        return GPUHIST_OK;
    });
}

/* Run the single-channel f32 kernels when they apply: @return 1 and the status in *st, or 0
 * (nothing run) when they do not. */
static int fx_try(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                  void *out, gpuhist_status *st)
{
    if (plan->dtype != GPUHIST_F32 || plan->channels != 1u || plan->active != 1u ||
        gh_counters_ok(plan) == 0)
        return 0;
    fx_params p;
    memset(&p, 0, sizeof p);
    p.bins = plan->bins;
    p.ncnt = plan->bins + 3u;
    p.last_inclusive = plan->map.last_inclusive;
    p.edges = job->edges;
    size_t smem;
    if (plan->map.kind == GH_KIND_EVEN) {
        int direct;
        if (!fe_setup(plan, &p, &direct))
            return 0;
        uint32_t r = FX_MAX_REPS;
        while (r > 1u && (size_t)r * p.ncnt * 4u > FX_REP_BYTES)
            r >>= 1;
        /* Tuning knob: GPUHIST_CUDA_FE_REPS replicas (1..32) when they fit shared memory. H200,
         * f32 4096 bins (16 KiB per replica), uniform/hot90/constant/bell GB/s: 4 replicas
         * 4301 / 4314 / 4297 / 4301, 8 (the default) 4301 / 4295 / 4298 / 4299, 12 4114 / 4183 /
         * 4279 / 4253, 13 3956 / 4140 / 4151 / 3939: more replicas only take L1 away. */
        const char *env = getenv("GPUHIST_CUDA_FE_REPS");
        if (env && *env) {
            const unsigned long v = strtoul(env, NULL, 10);
            if (v >= 1u && v <= 32u && (size_t)v * p.ncnt * 4u <= job->smem_per_block_optin)
                r = (uint32_t)v;
        }
        p.reps = r;
        smem = (size_t)r * p.ncnt * 4u;
        if (smem > job->smem_per_block_optin)
            return 0;
        /* a direct certificate: no per-sample frac test */
        if (direct)
            *st = fx_launch(ctx, job, fe_kernel<true>, p, smem, out);
        else
            *st = fx_launch(ctx, job, fe_kernel<false>, p, smem, out);
        return 1;
    }
    if (plan->map.kind == GH_KIND_EDGES && job->edges) {
        if (!fx_setup(plan, job->smem_per_block_optin, &p, &smem))
            return 0;
        *st = fx_launch(ctx, job, fx_kernel, p, smem, out);
        return 1;
    }
    return 0;
}

static gpuhist_status fs_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    gpuhist_status fx_st;
    if (fx_try(ctx, plan, job, out, &fx_st))
        return fx_st;
    fs_params p;
    const size_t smem = fs_smem_bytes(plan, &p.reps, &p.edge_rep);
    if (smem == 0 || smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-smem: %u bins x %u channels do not fit shared memory",
                            plan->bins, plan->active);
    p.k = gh_make_params(plan, job);
    const int mode = fs_mode(plan);
    gpuhist_fe_cert c; /* fast_even.h, cached per spec */
    gpuhist_fe_cert_of(&plan->map, &c);
    p.cert_ok = mode == FS_F32_EVEN && c.ok ? 1u : 0u;
    p.t_lo = c.t_lo_f;
    p.t_hi = c.t_hi_f;
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        constexpr bool MULTI = decltype(multi)::value;
        auto launch_with = [&](auto kernel) -> gpuhist_status {
            cudaError_t err;
            const int grid = gh_grid(job, kernel, FS_THREADS, smem, job->elements / FS_U, &err);
            if (grid == 0)
                return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
            return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
                uint64_t nv;
                const uint64_t vb = gh_vec16_body<T>(job->data, b, e, &nv);
                fs_params q = p;
                q.k.begin = b;
                q.k.end = e;
                kernel<<<grid, FS_THREADS, smem, job->stream>>>(q, vb, nv,
                                                                (unsigned long long *)out);
                GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-smem kernel");
                return GPUHIST_OK;
            });
        };
        if constexpr (std::is_same<T, float>::value) {
            if (mode == FS_F32_EVEN)
                return launch_with(fs_kernel<T, MULTI, FS_F32_EVEN>);
            if (mode == FS_F32_EDGES)
                return launch_with(fs_kernel<T, MULTI, FS_F32_EDGES>);
        }
        return launch_with(fs_kernel<T, MULTI, FS_GENERIC>);
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_smem = {
    "cuda-fast-smem",
    GPUHIST_BACKEND_CUDA,
    "001 section V.B, 002 (privatised shared histograms); new: certified f32 estimate, "
    "rounded-up float edges, monotone cell table",
    "every dtype but f16/bf16, "
    "every bin kind, 1-4 channels, while the 32-bit counters (x4 replicas up to 1024) "
    "and edge tables fit shared memory",
    "per-block 32-bit shared counters, 16-byte loads; f32 even bins: estimate certified against "
    "every edge on the host, an exact one-edge fix-up near edges; f32 edges: monotone cell "
    "table + two compares on lane-replicated float edges (binary search in crowded cells)",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    fs_supports,
    fs_run,
};
