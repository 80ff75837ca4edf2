/*
 * smem_cell_table.cu - cuda-fast-smem's f32 EDGES kernel (fx_kernel), one channel, bins <= 1024:
 * the slot of a float sample from a one-load, lane-replicated cell table in shared memory over a
 * monotone map of the edges' range, with the table built per block and the map and entry kind
 * chosen on the host once per edge array.
 *
 * fx_kernel, f32 EDGES, bins <= 1024. For float x and a double edge e, x >= e <=> x >= ru(e) (e
 * rounded up to float), and x > e <=> x >= nextup(rd(e)). So with thresholds T[j] = ru(e[j])
 * (j < bins), T[bins] = ru(e[bins]) or, last edge inclusive, nextup(rd(e[bins])), the count
 * k(x) = #{j : x >= T[j]} gives the slot exactly: 0 underflow, 1..bins bin k - 1, bins + 1
 * overflow (NaN: bins + 2). Counters are kept in k order and renamed at the merge.
 *   One-load cell table. q(x) = bits(rz(sat(fma(x, cs, ck)) + cq)), cq = 2^-k, runs from bits(cq)
 * to bits(1 + cq) and is monotone in x (every step rounds monotonely; .sat sends NaN to 0); q >>
 * sh, less bits(cq) >> sh, is the cell, the low sh = 23 - b bits the position in it. k = 0 is a
 * linear map (2^b + 1 cells, b = 10 at most); k = 1..4 (FX_ONE) or 1..6 (FX_TWO, b <= 9) gives k
 * octaves of 2^b cells, each twice as fine as the next towards the first edge (k = 4, b = 8:
 * 1041 cells). With q_j = q(T[j])
 * computed by the same code: q(x) > q_j => x >= T[j], q(x) < q_j => x < T[j]. So for x in cell
 * c, k(x) = base(c) + #{j in [base, base + amb) : x >= T[j]}, base = #{j : cell of q_j < c},
 * amb = #{j : cell of q_j = c}, whatever rounding cs and ck carry (they only spread the
 * thresholds over the cells); the same holds for any prefix of q's position bits.
 *   Entries, two kinds (the template argument). FX_ONE, for a cell with amb <= 1: base << 16 |
 * low, low = 0xFFFF - frac(q_base) (amb = 1; frac = the low sh bits, sh <= 15) or 0x7FFF (amb =
 * 0): adding frac(q(x)) carries into bit 16 exactly when frac(q(x)) > frac(q_base), i.e. x >=
 * T[base], so s = entry + frac(q(x)) gives k = s >> 16; low half 0xFFFF means the two q are
 * equal (undecided). FX_TWO, for a cell with amb <= 2: base << 20 | v2 << 10 | v1 with v1 = 511
 * - p1 (p1 the top 9 position bits of q_base) and v2 = 1023 - p2 (p2 the top 10 position bits of
 * q_(base + amb - 1)); with f the top 10 position bits of q(x), s = entry + (f >> 1) + (f << 10)
 * carries field 1 into bit 9 and field 2 into the base exactly when x is past the threshold, k =
 * (s >> 20) + bit 9; an equal position leaves a field undecided (low 10 bits 0x1FF, bits 10-19
 * all ones). A cell of one threshold puts it in field 2 and sets field 1's carry (0x200) under a
 * base one less; an empty cell has v2 = 0. The table holds FX_TWO entries less the part of the
 * sum that q's cell bits add, so the sum needs no mask (fx_two_bias). Either kind: cell 0 (NaN
 * and below the first edge) and crowded cells (amb >= 2, FX_TWO amb >= 3) are flagged (bit 31).
 * While the shared-memory budget lasts, a crowded cell's entry points at a sub-table of 16
 * sub-cells (FX_TWO: 8) in the same encoding over the next 4 (3) bits of q, decided by a second
 * load; they go to the crowded cells from the last cell down (the widest, in the octave maps).
 * The rest, and flagged sub-cells, count NaN, then four compares on T from the entry's base (amb
 * <= 4; FX_TWO's undecided entries search from its stored base, at most one below the cell's,
 * over two) or a binary search of [base, base + amb] (T has NaN entries up to bins + 4).
 *   The host picks the map and kind per edge array (fx_choose: the least share of the edges'
 * range on the divergent path, FX_ONE unless FX_TWO saves more than FX_TWO_COST; remembered per
 * host thread, since the choice costs ~20-60 us against ~0.27 ms of kernel per GiB). FX_ONE
 * keeps 8 counter copies, FX_TWO 4 (1027 x 8 counters leave room for ~990 cells only).
 *   The cell tables are lane-replicated (entry i of lane l at [i * 32 + l]): every probe hits the
 * lane's own bank, one wavefront, whatever the data; T (only the divergent path reads it) is
 * kept once. The cells x 128 B + counter copies + sub-tables of 2 KiB (FX_TWO: 1 KiB): at most
 * 163 KiB (FX_SMEM_BUDGET: L1 keeps the rest; one block per SM).
 *   Per sample (SASS, the common path), FX_ONE: FFMA.SAT, FADD.RZ, SHF, LOP, IMAD, LDS, IADD,
 * LOP, ISETP, BRA, SHF, IMAD, ATOMS + BSSY/BSYNC = 15, one shared load (a cell table of two
 * compares needs three, and the shared pipe is what binds that table). FX_TWO: FFMA.SAT,
 * FADD.RZ, SHF, SHF, IMAD, LDS, LEA.HI, IMAD, LOP, LOP, ISETP, ISETP, SHF, LOP, LEA.HI, BRA, IMAD,
 * ATOMS + BSSY/BSYNC = 20, one shared load. The benchmark's quadratic edges (replayed on the
 * host: the table construction and lookup for its edges and distributions): 256 bins, FX_ONE
 * with the k = 4 map leaves 0.06% of uniform samples (x < 2^-10), ~2% of warp-steps, on the
 * divergent path (the linear map 0.8%, ~22%). 1024 bins: FX_ONE beside 8 counter copies fits
 * ~980 cells, ~510-800 for the maps it would pick, so 20-50% of samples (all warp-steps) went
 * divergent; FX_TWO with the k = 4 map (1041 cells: 772 of one threshold, 99 of two, 11 of 3-17,
 * all below x = 2^-8) and 8 sub-tables leaves uniform 0.21% of samples (6.5% of warp-steps) to
 * the search (0.13% undecided, the rest in crowded cells near 0), hot90 0.02% (0.7%), constant
 * 0, bell 0.14% (4.4%, all undecided); with 16-sub-cell tables only 4 fit (9.3% on uniform).
 * Measured (the one-load against the two-compare table, the linear against the octave map, the
 * map chosen per call against remembered): docs/PERFORMANCE.md, "f32, 256 uneven edges" and
 * "Measurements behind the CUDA sources".
 * Limits: bins <= FX_MAX_BINS (1024), a finite affine map of the first to the last edge, the
 * tables within FX_SMEM_BUDGET (163 KiB) of shared memory; otherwise fs_kernel (fast_smem.cu)
 * searches lane-replicated float edges. Measured (H100, 1 GiB, the bench's 1024 quadratic edges,
 * gpuhist-bench --matrix): 0.930 / 0.927 / 0.941 / 0.899 of the read ceiling (uniform / hot90 /
 * constant / bell) against FX_ONE's 0.424 / 0.845 / 0.962 / 0.502; 256 edges unchanged (0.95-0.96):
 * docs/PERFORMANCE.md, "The new cells, 2026-11-27 13:16Z". Not profiled with ncu yet: issue (20
 * instructions per sample against FX_ONE's 15) and bell's divergent warp-steps are the likely
 * bound of what is left.
 */
#include "smem_stream.cuh"

#include <float.h>
#include <math.h>
#include <string.h>

#define FX_CELL_BITS_MAX 10 /* 2^10 + 1 cells (linear map) */
#define FX_CELL_BITS_MIN 8 /* sh <= 15: an entry's low half holds the position in a cell */
#define FX_OCTAVES_MAX 4   /* FX_ONE: cq >= 2^-4, 4 octaves of 256 cells fit at 256 bins */
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

/* Sub-tables: a crowded cell gets (while they last) 2^sub_bits sub-cells, the next sub_bits bits
 * of q, in the same encoding: FX_SUB_BITS for FX_ONE, FX_SUB_BITS_TWO for FX_TWO (whose cells
 * hold two thresholds, so 8 sub-cells mostly do, and twice as many sub-tables fit). */
#define FX_SUB_BITS 4u
#define FX_SUB_BITS_TWO 3u
#define FX_SUB_MAX 64u
#define FX_SUB 0x40000000u      /* with FX_FLAG: the entry is the lane's sub-table address */
#define FX_NONE 0x7FFFu         /* low half of an entry whose cell holds no threshold */
#define FX_TEST 0x8000FFFFu     /* (entry + frac) & FX_TEST >= 0xFFFF: flagged, or equal frac */

/* The two-threshold entry (FX_TWO, banner): base << 20 | v2 << 10 | v1, bit 31 the flag. v1 =
 * 511 - p1 over bits 0-8 (its carry lands in bit 9), v2 = 1023 - p2 over bits 10-19 (its carry
 * lands in the base); p1, p2 the top 9 and 10 position bits of the (sub-)cell's thresholds. */
#define FX_P2 10u               /* position bits of field 2 (field 1: FX_P2 - 1) */
#define FX_F1_NONE 0x200u       /* field 1 holding no threshold: its carry already counted */
#define FX_U1_MASK 0x3FFu       /* field 1 and its carry: 0x1FF = equal top 9 bits, undecided */
#define FX_U2_TEST 0x800FFC00u  /* flag and field 2: >= 0xFFC00 = flagged or equal top 10 bits */
#define FX_AMB2_MASK 0xFFFFFu   /* a flagged two-threshold entry: base << 20 | amb */

/* Shared layout of fx_kernel: [pad to 128][cells x 32 entries][subs x 2^sub_bits x 32
 * entries][reps x ncnt counters][bins + 1 q values][bins + 5 thresholds][subs owner cells][1
 * claim counter]. */
static size_t fx_smem(uint32_t bins, uint32_t cells, uint32_t subs, uint32_t reps,
                      uint32_t sub_bits)
{
    return 128u + (size_t)cells * 128u + ((size_t)subs << sub_bits) * 128u +
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

/* The two-threshold entry of a (sub-)cell (FX_TWO): thresholds [base, base + amb) lie in it;
 * qa = q(T[base]) when amb >= 1, qb = q(T[base + 1]) when amb = 2; fm the mask of the bits of q
 * below the (sub-)cell, psh = their number less FX_P2. One threshold sits in field 2 and field 1
 * holds FX_F1_NONE with the base one less (its carry is that one), so neither field can read
 * as undecided except field 2 on an equal position; base 0 (a cell before T[0]'s) keeps v1 = 0. */
__device__ __forceinline__ uint32_t fx_entry2(uint32_t base, uint32_t amb, uint32_t qa,
                                              uint32_t qb, uint32_t fm, uint32_t psh)
{
    if (amb > 2u)
        return FX_FLAG | (base << 20) | amb;
    uint32_t v1 = FX_F1_NONE, b = base, v2 = 0u; /* amb = 0: field 2 never carries */
    if (amb == 2u)
        v1 = 511u - ((qa & fm) >> (psh + 1u));
    else if (base > 0u)
        b = base - 1u;
    else
        v1 = 0u;
    if (amb > 0u)
        v2 = 1023u - (((amb == 2u ? qb : qa) & fm) >> psh);
    return (b << 20) | (v2 << 10) | v1;
}

/* The entry kinds of fx_kernel: FX_ONE the one-threshold entry (fx_entry), FX_TWO the
 * two-threshold one (fx_entry2). */
enum { FX_ONE = 1, FX_TWO = 2 };

/* What (t >> 1) + (t << 10) adds for the bits of t = q >> (shift - FX_P2) above the position,
 * i.e. for (sub-)cell v = q >> shift (mod 2^32): the tables hold FX_TWO entries less this. */
__device__ __forceinline__ uint32_t fx_two_bias(uint32_t v)
{
    return (v << (FX_P2 - 1u)) + (v << (FX_P2 + 10u));
}

/* f32 EDGES, one channel: the cell table (banner), entries of kind ENC (FX_ONE or FX_TWO).
 * Counters are kept in k order (k = 0 underflow, 1..bins bin k-1, bins+1 overflow, bins+2 NaN)
 * and renamed at the merge. */
template <int ENC>
__global__ void __launch_bounds__(FX_THREADS, 1) fx_kernel(const fx_params p,
                                                          unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    const uint32_t tid = threadIdx.x, lane = tid & 31u;
    const uint32_t bins = p.bins, ncnt = p.ncnt, cells = p.cells, subs = p.subs;
    constexpr uint32_t SUB_BITS = ENC == FX_TWO ? FX_SUB_BITS_TWO : FX_SUB_BITS;
    constexpr uint32_t SUB_CELLS = 1u << SUB_BITS;
    const uint32_t sh = p.sh, sh2 = p.sh - SUB_BITS;
    const uint32_t s0 = (uint32_t)__cvta_generic_to_shared(fs_smem);
    const uint32_t pad = (128u - (s0 & 127u)) & 127u;
    uint32_t *C = (uint32_t *)(fs_smem + pad);     /* C[c * 32 + lane], 128-byte aligned */
    uint32_t *SUB = C + cells * 32u;               /* SUB[(i * SUB_CELLS + t) * 32 + lane] */
    uint32_t *cnt = SUB + subs * SUB_CELLS * 32u;
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
    /* The entry of a (sub-)cell holding thresholds [base, base + amb), positions below `shift` */
    auto entry = [&](uint32_t base, uint32_t amb, uint32_t shift) -> uint32_t {
        const uint32_t fm = (1u << shift) - 1u;
        if (ENC == FX_ONE)
            return fx_entry(base, amb, amb ? qj[base] : 0u, fm);
        return fx_entry2(base, amb, amb ? qj[base] : 0u, amb == 2u ? qj[base + 1u] : 0u, fm,
                         shift - FX_P2);
    };
    /* An entry into all 32 lane copies of the row of (sub-)cell v (q >> shift = v), rotated (no
     * bank conflicts); a sub-table pointer (step 4) gets each lane's own copy's address, told
     * apart by the caller (an FX_TWO entry of base 1024 has bit 30 set too). FX_TWO stores entry
     * - fx_two_bias(v) (see sum below). */
    auto put = [&](uint32_t *row, uint32_t e, uint32_t v, uint32_t step) {
        if (ENC == FX_TWO)
            e -= fx_two_bias(v);
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
        __syncthreads();
        /* every cell's entry; cell 0 (NaN and everything below the first edge) and crowded
         * cells flagged, cell 0 always the search */
        for (uint32_t c = tid; c < cells; c += FX_THREADS) {
            uint32_t base, amb;
            range(c + first, sh, 0u, bins + 1u, base, amb);
            uint32_t e = entry(base, amb, sh);
            if (c == 0u)
                e = FX_FLAG | (base << (ENC == FX_ONE ? 16 : 20)) | amb;
            put(C + c * 32u, e, c + first, 0u);
        }
        __syncthreads();
        /* the sub-tables go to the crowded cells from the last cell down (in the octave maps the
         * widest cells come last): one warp ranks them by ballot */
        if (tid < 32u) {
            uint32_t n = 0;
            for (int hi = (int)cells - 1; hi >= 1 && n < subs; hi -= 32) {
                const int c = hi - (int)lane;
                uint32_t e = c >= 1 ? C[c * 32] : 0u;
                if (ENC == FX_TWO && c >= 1)
                    e += fx_two_bias((uint32_t)c + first);
                const bool crowded = c >= 1 && (e & FX_FLAG);
                const uint32_t vote = __ballot_sync(0xffffffffu, crowded);
                const uint32_t rank = n + __popc(vote & ((1u << lane) - 1u));
                if (crowded && rank < subs)
                    owner[rank] = (uint32_t)c;
                n += __popc(vote);
            }
            if (lane == 0)
                *claimed = min(n, subs);
        }
        __syncthreads();
        const uint32_t used = *claimed;
        for (uint32_t i = tid; i < used; i += FX_THREADS)
            put(C + owner[i] * 32u,
                FX_FLAG | FX_SUB |
                    (uint32_t)__cvta_generic_to_shared(SUB + i * SUB_CELLS * 32u),
                owner[i] + first, 4u);
        for (uint32_t it = tid; it < used * SUB_CELLS; it += FX_THREADS) {
            const uint32_t i = it / SUB_CELLS, t = it % SUB_CELLS;
            uint32_t cb, ca, base, amb;
            range(owner[i] + first, sh, 0u, bins + 1u, cb, ca);
            range(((owner[i] + first) << SUB_BITS) + t, sh2, cb, cb + ca, base, amb);
            put(SUB + it * 32u, entry(base, amb, sh2), ((owner[i] + first) << SUB_BITS) + t, 0u);
        }
        __syncthreads();
    };

    /* the lane's entry of the cell of q: cl + (q >> sh) * 128 (32-bit wrap-around) */
    const uint32_t cl = (uint32_t)__cvta_generic_to_shared(C) + lane * 4u - first * 128u;
    const uint32_t my = (uint32_t)__cvta_generic_to_shared(cnt + ((tid >> 5) % p.reps) * ncnt);
    const float cs = p.cs, ck = p.ck, cq = p.cq;
    const uint32_t fm = (1u << sh) - 1u, fm2 = (1u << sh2) - 1u;
    /* FX_ONE: the carry of the entry's low half + frac(q(x)) into bit 16 is the compare. FX_TWO:
     * f = the top FX_P2 position bits of q(x) in its (sub-)cell v; s = entry + (f >> 1) + (f <<
     * 10) carries field 1 into bit 9 and field 2 into the base exactly when x is at or past their
     * thresholds; an equal position (or a flagged entry) leaves it undecided. With t = q >>
     * (shift - FX_P2) = v << FX_P2 | f, (t >> 1) + (t << 10) = (f >> 1) + (f << 10) +
     * fx_two_bias(v) (mod 2^32), so the table holds entry - fx_two_bias(v) and the sum needs no
     * mask; `entry_of` gives the entry back for the divergent path. */
    auto sum = [&](uint32_t e, uint32_t q, uint32_t mask, uint32_t shift) -> uint32_t {
        if (ENC == FX_ONE)
            return e + (q & mask);
        const uint32_t t = q >> (shift - FX_P2);
        return e + (t >> 1) + (t << 10);
    };
    auto entry_of = [&](uint32_t e, uint32_t q, uint32_t shift) -> uint32_t {
        return ENC == FX_ONE ? e : e + fx_two_bias(q >> shift);
    };
    auto decided = [&](uint32_t s) -> bool {
        if (ENC == FX_ONE)
            return (s & FX_TEST) < 0xFFFFu;
        return (s & FX_U2_TEST) < 0xFFC00u && (s & FX_U1_MASK) != 0x1FFu;
    };
    /* k of a decided sum: the base carried into (and for FX_TWO, field 1's carry) */
    auto slot_k = [&](uint32_t s) -> uint32_t {
        if (ENC == FX_ONE)
            return s >> 16;
        return (s >> 20) + ((s >> 9) & 1u);
    };
    auto each = [&](float x) {
        /* q(x) > q(T) => x >= T, q(x) < q(T) => x < T (monotone, the same code built the table) */
        const uint32_t q = fx_q(x, cs, ck, cq);
        uint32_t e = fx_lds_u32(cl + (q >> sh) * 128u);
        uint32_t s = sum(e, q, fm, sh);
        uint32_t k;
        if (decided(s)) {
            k = slot_k(s);
        } else {
            e = entry_of(e, q, sh);
            if ((e & (FX_FLAG | FX_SUB)) == (FX_FLAG | FX_SUB)) {
                /* a crowded cell: the entry of x's sub-cell, the same encoding one level down */
                e = fx_lds_u32((e & ~(FX_FLAG | FX_SUB)) +
                               ((q >> sh2) & (SUB_CELLS - 1u)) * 128u);
                s = sum(e, q, fm2, sh2);
                e = entry_of(e, q, sh2);
            }
            if (decided(s)) {
                k = slot_k(s);
            } else if (x != x) {
                k = bins + 2u;
            } else {
                /* thresholds below lo are <= x, those past lo + amb are > x: search the amb in
                 * between (FX_ONE: one when x fell on a threshold's q; FX_TWO: two, from the
                 * entry's base, which is at most one below the cell's) */
                uint32_t lo, amb;
                if (ENC == FX_ONE) {
                    lo = (e >> 16) & 0x7fffu;
                    amb = (e & FX_FLAG) ? e & 0xffffu : 1u;
                } else {
                    lo = (e >> 20) & 0x7ffu;
                    amb = (e & FX_FLAG) ? e & FX_AMB2_MASK : 2u;
                }
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
                k = lo;
            }
        }
        gh_red_shared(my + k * 4u);
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

/* Share of the map q's range [lo_u, 1] (q filled by fx_map) that takes fx_kernel<FX_TWO>'s
 * divergent path, for samples spread evenly: cells of three or more thresholds whole, and the
 * undecided part of the rest (an equal position: 2^-10 of a cell per field-2 position, i.e. of
 * every cell but those before T[0]'s, 2^-9 more for field 1 of a cell of two). */
static double fx_share_two(const float *T, uint32_t n, const fx_params &q, int k, int b)
{
    const double lo_u = ldexp(1.0, -k - b);
    uint32_t qc[FX_MAX_BINS + 1u]; /* the thresholds' cells, non-decreasing */
    for (uint32_t j = 0; j < n; ++j)
        qc[j] = fx_q_host(T[j], q.cs, q.ck, q.cq) >> q.sh;
    double share = 0.0;
    uint32_t j = 0;
    for (uint32_t c = 1; c < q.cells; ++c) {
        const uint32_t v = c + q.first;
        while (j < n && qc[j] < v)
            ++j;
        uint32_t z = j;
        while (z < n && qc[z] == v)
            ++z;
        const uint32_t amb = z - j;
        const double lo = fmax((double)fx_from_bits(v << q.sh) - q.cq, lo_u);
        const double hi = fmin((double)fx_from_bits((v + 1u) << q.sh) - q.cq, 1.0);
        if (hi > lo)
            share += (hi - lo) * (amb > 2u ? 1.0 : amb == 2u ? 3.0 / 1024.0 : 1.0 / 1024.0);
    }
    return share / (1.0 - lo_u);
}

/* fx_kernel<FX_TWO>'s cost per sample over FX_ONE's (two fields to add, test and count), as a
 * share of samples on the divergent path: FX_TWO runs only when it saves more than this. */
#define FX_TWO_COST 0.005
#define FX_TWO_OCTAVES_MAX 6
#define FX_TWO_CELL_BITS_MAX 9 /* sh >= 14 (a sub-cell's FX_P2 position bits need 13) */
#define FX_TWO_CELL_BITS_MIN 7
#define FX_ONE_REPS 8u
#define FX_TWO_REPS 4u /* 1027 x 8 counters would leave ~990 cells; 4 leave ~1110 */

/* Cell map and entry kind of fx_kernel; 0 if the edges give no finite affine map (then the
 * lane-replicated search of fs_kernel runs), else FX_ONE or FX_TWO. Any positive finite cs and
 * any cq work for exactness: they only spread work. Of the maps that fit the shared-memory
 * budget, the one with the least share of [first edge, last edge] on the divergent path wins
 * (samples spread evenly over the edges' range assumed); ties keep the linear map, and FX_ONE
 * unless FX_TWO saves more than FX_TWO_COST. The benchmark's quadratic edges (narrow bins
 * towards 0): 256 bins, FX_ONE: linear 1025 cells 0.8% crowded, cq = 2^-4 with 256 cells per
 * octave (1041 cells) 0.06%; 1024 bins: FX_ONE's best that fits beside 8 counter copies leaves
 * ~20% of uniform samples divergent, FX_TWO with cq = 2^-4, 1041 cells ~0.4% (0.27% in 11
 * crowded cells near 0, 0.13% undecided). Fills q's map fields (cs, ck, cq, first, cells, sh,
 * subs, reps). */
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
        while (b >= FX_CELL_BITS_MIN &&
               fx_smem(bins, fx_cells(k, b), 0u, FX_ONE_REPS, FX_SUB_BITS) > budget)
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
    int enc = FX_ONE;
    uint32_t reps = FX_ONE_REPS;
    if (best > FX_TWO_COST) {
        double best2 = -1.0;
        fx_params m2 = {}; /* set with best2 */
        for (int k = 0; k <= FX_TWO_OCTAVES_MAX; ++k) {
            int b = FX_TWO_CELL_BITS_MAX;
            while (b >= FX_TWO_CELL_BITS_MIN &&
                   fx_smem(bins, fx_cells(k, b), 0u, FX_TWO_REPS, FX_SUB_BITS_TWO) > budget)
                --b;
            if (b < FX_TWO_CELL_BITS_MIN)
                continue;
            fx_params c;
            if (fx_map(T, bins + 1u, (double)t0, span, k, b, &c) < 0.0)
                continue;
            const double share = fx_share_two(T, bins + 1u, c, k, b);
            if (best2 < 0.0 || share < best2) {
                best2 = share;
                m2 = c;
            }
        }
        if (best2 >= 0.0 && best2 + FX_TWO_COST < best) {
            fx_take_map(q, m2);
            enc = FX_TWO;
            reps = FX_TWO_REPS;
        }
    }
    /* what is left of the budget becomes sub-tables for crowded cells */
    uint32_t subs = 0;
    const uint32_t sub_bits = enc == FX_TWO ? FX_SUB_BITS_TWO : FX_SUB_BITS;
    while (subs < FX_SUB_MAX && fx_smem(bins, q->cells, subs + 1u, reps, sub_bits) <= budget)
        ++subs;
    q->subs = subs;
    q->reps = reps;
    *smem = fx_smem(bins, q->cells, subs, reps, sub_bits);
    return enc;
}

/* fx_choose once per edge array and host thread: it costs ~20 us for 256 edges (five candidate
 * maps; more when FX_TWO is weighed), the kernel ~0.27 ms per GiB; a repeated call compares the
 * edges (bins + 1 doubles). Returns fx_choose's answer. */
static int fx_setup(const gpuhist_plan *plan, size_t optin, fx_params *q, size_t *smem)
{
    const uint32_t bins = plan->bins;
    if (!plan->edges || bins < 1u || bins > FX_MAX_BINS)
        return 0;
    thread_local double key[FX_MAX_BINS + 1u];
    thread_local uint32_t key_bins = 0; /* 0: nothing remembered */
    thread_local size_t key_optin, map_smem;
    thread_local int map_enc;
    thread_local fx_params map;
    const size_t eb = ((size_t)bins + 1u) * sizeof(double);
    if (key_bins != bins || key_optin != optin || memcmp(key, plan->edges, eb) != 0) {
        map_enc = fx_choose(plan, optin, &map, &map_smem);
        memcpy(key, plan->edges, eb);
        key_bins = bins;
        key_optin = optin;
    }
    if (!map_enc)
        return 0;
    fx_take_map(q, map);
    q->subs = map.subs;
    q->reps = map.reps;
    *smem = map_smem;
    return map_enc;
}

} /* namespace */

int fx_try_edges(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                 fx_params &p, void *out, gpuhist_status *st)
{
    size_t smem;
    const int enc = fx_setup(plan, job->smem_per_block_optin, &p, &smem);
    if (!enc)
        return 0;
    *st = enc == FX_TWO ? fx_launch<float>(ctx, job, fx_kernel<FX_TWO>, p, smem, out)
                        : fx_launch<float>(ctx, job, fx_kernel<FX_ONE>, p, smem, out);
    return 1;
}

} /* namespace gh_fast_smem */
