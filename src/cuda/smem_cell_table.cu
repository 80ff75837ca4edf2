/*
 * smem_cell_table.cu - cuda-fast-smem's f32 EDGES kernel (fx_kernel), one channel, bins <= 1024:
 * the slot of a float sample from a one-load, lane-replicated cell table in shared memory over a
 * monotone map of the edges' range, with the table built per block and the map chosen on the
 * host once per edge array.
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
 * Limits: bins <= FX_MAX_BINS (1024), a finite affine map of the first to the last edge, the
 * tables within FX_SMEM_BUDGET (163 KiB) of shared memory; otherwise fs_kernel (fast_smem.cu)
 * searches lane-replicated float edges.
 */
#include "smem_stream.cuh"

#include <float.h>
#include <math.h>
#include <string.h>

#define FX_CELL_BITS_MAX 10 /* 2^10 + 1 cells (linear map) */
#define FX_CELL_BITS_MIN 8 /* sh <= 15: an entry's low half holds the position in a cell */
#define FX_OCTAVES_MAX 4   /* cq >= 2^-4: 4 octaves of 256 cells fit the budget at 256 bins */
#define FX_FLAG 0x80000000u

namespace gh_fast_smem {
namespace {

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
            each(p.end_sample<float>(tid));
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

} /* namespace */

int fx_try_edges(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                 fx_params &p, void *out, gpuhist_status *st)
{
    size_t smem;
    if (!fx_setup(plan, job->smem_per_block_optin, &p, &smem))
        return 0;
    *st = fx_launch<float>(ctx, job, fx_kernel, p, smem, out);
    return 1;
}

} /* namespace gh_fast_smem */
