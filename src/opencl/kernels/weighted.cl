/*
 * weighted.cl - opencl-weighted-local and opencl-weighted-global: weighted histograms with exact
 * sums of the weights and of their squares (src/core/exact_sum.h, placed before this source).
 *
 * The accumulator (the backend's, zeroed per call) has the host layout (internal.h): per counter
 * (histogram x slot) a sum record of `sum_words - 1` signed 64-bit limbs and a flags word, then
 * (squares) a record of GH_XSUM_LIMBS_F64 limbs and a flags word. Limb i counts units of
 * 2^(32 i - bias). Every addition into it is an integer addition, so its value after any set of
 * deposits does not depend on their order: the host rounds it once (gpuhist_finish_sums) to the
 * CPU backend's bits.
 *
 * 64-bit additions into the accumulator: atom_add with cl_khr_int64_base_atomics (GH_COUNTER64);
 * without it, two 32-bit atomic_adds on the limb's low and high words, the low add's carry
 * (read from the value it returns) added to the high word. The final value is the same: each
 * carry is counted once, and nothing reads a limb before the kernel ends. Flags are OR'ed into
 * the low word of the flags word (the host requires a little-endian device).
 *
 * gh_weighted_local: each work-group keeps, per counter, a 32-bit count, a flags word (bits 0-7
 * the sum's GH_XSUM_* flags, 8-15 the square's) and the exact sum as signed 32-bit *pieces*:
 * piece j counts units of 2^(base + W j) of the record. A weight m * 2^pos is written as
 * m << (pos mod W) cut into P pieces of W bits, added with P 32-bit local atomics:
 *   f32 sums:     W 12, P 3, 24 pieces from 2^-149
 *   f32 squares:  W 12, P 5, 47 pieces from 2^(768 - 1074) (m^2 at 2 pos + 776, exact)
 *   f64 sums and squares (hi = w * w and lo = fma(w, w, -hi) share the window): W 13, P 5,
 *                 162 pieces from 2^-1074
 * A piece takes less than 2^W per deposit and at most 2 deposits per pixel, so a work-group
 * counts at most GH_WL_TILE = 2^17 pixels per round (2^18 deposits cannot wrap a piece), then
 * flushes: counts by one global atomic each, flags OR'ed, each non-zero piece v as v * 2^bit into
 * the two limbs it straddles; then zeroes what it flushed. Squares that do not fit local memory
 * go straight to the global square records (sq_mode 2).
 *
 * gh_weighted_global: a grid-stride loop over pixels, each pixel's channels in turn; the
 * weight's digits (exact_sum.h's split: 2 for f32, 3 for f64) and its square's go straight into
 * the records with 64-bit global atomics. Any bin count.
 *
 * gh_weighted_normalize: one work-item per record moves each limb's carry into the next
 * (gh_xsum_normalize). The host runs it after each launch, which keeps every limb far below 2^31
 * deposits between normalisations.
 *
 * Weights of NaN samples are not summed (they are in no bin); those of outliers are (CLAMP adds
 * them to the end bins on the host). Unweighted plans (wk 0) only count. Samples: every type (common.clh's GH_SLOT: binmap.h, f16 and
 * bf16 widened exactly).
 */
#pragma OPENCL FP_CONTRACT OFF

#define GH_WL_TILE (1u << 17)
#define GH_W_F32 1u
#define GH_W_F64 2u

/* a weight as an integer: m * 2^pos units of the record, its sign, and r: 1 a deposit, 0 zero,
 * or the GH_XSUM_* flag of a weight that is not finite */
typedef struct gh_wsplit {
    ulong m;
    uint pos, r, neg;
} gh_wsplit;

static inline gh_wsplit gh_w_split_f32(uint bits)
{
    gh_wsplit s;
    const uint e = (bits >> 23) & 0xFFu;
    s.m = bits & 0x7FFFFFu;
    s.neg = bits >> 31;
    s.pos = 0u;
    if (e == 0xFFu)
        s.r = s.m ? GH_XSUM_NAN : s.neg ? GH_XSUM_NEG_INF : GH_XSUM_POS_INF;
    else
        s.r = (e == 0u && s.m == 0u) ? 0u : 1u;
    if (e && e != 0xFFu) {
        s.m |= (ulong)1 << 23;
        s.pos = e - 1u;
    }
    return s;
}

static inline gh_wsplit gh_w_split_f64(ulong bits)
{
    gh_wsplit s;
    const uint e = (uint)(bits >> 52) & 0x7FFu;
    s.m = bits & 0xFFFFFFFFFFFFFul;
    s.neg = (uint)(bits >> 63);
    s.pos = 0u;
    if (e == 0x7FFu)
        s.r = s.m ? GH_XSUM_NAN : s.neg ? GH_XSUM_NEG_INF : GH_XSUM_POS_INF;
    else
        s.r = (e == 0u && s.m == 0u) ? 0u : 1u;
    if (e && e != 0x7FFu) {
        s.m |= (ulong)1 << 52;
        s.pos = e - 1u;
    }
    return s;
}

/* The square of an f32 weight in f64 units (2^-1074), exactly: m^2 (< 2^48) at 2 pos + 776; the
 * square of +-inf is +inf, of NaN NaN (what the CPU deposits for the double w * w). */
static inline gh_wsplit gh_w_square_f32(gh_wsplit w)
{
    gh_wsplit s;
    s.neg = 0u;
    s.r = w.r == GH_XSUM_NEG_INF ? GH_XSUM_POS_INF : w.r;
    s.m = w.r == 1u ? w.m * w.m : 0ul;
    s.pos = w.r == 1u ? 2u * w.pos + 776u : 0u;
    return s;
}

/* ---- 64-bit additions into the global records ---------------------------------------------- */

static inline void gh_acc_add(__global ulong *word, long v)
{
#if GH_COUNTER64
    atom_add((volatile __global ulong *)word, (ulong)v);
#else
    const ulong u = (ulong)v;
    const uint lo = (uint)u;
    uint hi = (uint)(u >> 32);
    volatile __global uint *w = (volatile __global uint *)word; /* little-endian: low word first */
    if (lo) {
        const uint old = atomic_add(w, lo);
        hi += (uint)(old + lo < old); /* the carry out of the low word */
    }
    if (hi)
        atomic_add(w + 1, hi);
#endif
}

static inline void gh_acc_or(__global ulong *word, uint flags)
{
    atomic_or((volatile __global uint *)word, flags); /* flags < 256: the low word */
}

/* exact_sum.h's deposit: digits d[k] into limbs limb + k, or a flag. */
static inline void gh_acc_deposit(__global ulong *rec, uint r, uint limb, const gh_i64 *d,
                                  int digits, uint flags_word)
{
    if (r == 1u) {
        for (int k = 0; k < digits; ++k)
            if (d[k])
                gh_acc_add(rec + limb + (uint)k, d[k]);
    } else if (r) {
        gh_acc_or(rec + flags_word, r);
    }
}

/* v * 2^bit (|v| < 2^31) into a record: its low 32 bits into limb bit / 32, the signed rest into
 * the next limb. */
static inline void gh_acc_piece(__global ulong *rec, int v, uint bit)
{
    const uint limb = bit >> 5;
    const long t = (long)v * (long)((ulong)1 << (bit & 31u));
    const long lo = (long)((ulong)t & 0xFFFFFFFFul);
    const long hi = t >> 32;
    if (lo)
        gh_acc_add(rec + limb, lo);
    if (hi)
        gh_acc_add(rec + limb + 1u, hi);
}

/* The square of pixel i's weight into a global square record (f32: the exact double w * w;
 * f64: hi = w * w and, when finite, lo = fma(w, w, -hi)), as the CPU backend deposits it. */
static inline void gh_square_global(__global ulong *rec, double w, uint wk)
{
    uint limb = 0u;
    gh_i64 d[3] = {0, 0, 0};
    const double hi = w * w;
    uint r = gh_xsum_split_f64(hi, &limb, d);
    gh_acc_deposit(rec, r, limb, d, 3, GH_XSUM_LIMBS_F64);
    if (wk == GH_W_F64 && r != GH_XSUM_POS_INF && r != GH_XSUM_NAN) {
        const double lo = fma(w, w, -hi);
        r = gh_xsum_split_f64(lo, &limb, d);
        gh_acc_deposit(rec, r, limb, d, 3, GH_XSUM_LIMBS_F64);
    }
}

/* ---- local pieces --------------------------------------------------------------------------- */

/* The P pieces of s (pos relative to the window's base), each added to rec[q + k]. */
static inline void gh_pieces_add(__local uint *rec, gh_wsplit s, uint W, uint P, uint base)
{
    const uint pos = s.pos - base;
    const uint q = pos / W, sh = pos - q * W;
    const uint mask = (1u << W) - 1u;
    for (uint k = 0u; k < P; ++k) {
        const uint d = k == 0u ? (uint)(s.m << sh) & mask : (uint)(s.m >> (W * k - sh)) & mask;
        if (d)
            atomic_add(rec + q + k, s.neg ? 0u - d : d);
    }
}

__kernel void gh_weighted_local(__global const gh_sample_t *data, __global const uint *weights,
                                uint pixels, GH_COMMON_PARAMS, __global gh_count_t *counters,
                                __global ulong *sums, ulong sq_offset, __local uint *lm, uint N,
                                uint wk, uint sq_mode, uint sum_words)
{
    gpuhist_binmap m = map;
    __global ulong *squares = sums + sq_offset; /* (sq_mode 0: not read) */
    const uint lid = get_local_id(0), lsize = get_local_size(0);
    const uint grp = get_group_id(0), ngrp = get_num_groups(0);
    const uint nan_slot = slots - 1u;
    /* windows: sums (SW, SP, SN pieces, base 0), squares (QW, QP, QN pieces, base QB) */
    const uint SW = wk == GH_W_F32 ? 12u : 13u, SP = wk == GH_W_F32 ? 3u : 5u;
    const uint SN = wk == GH_W_F32 ? 24u : wk == GH_W_F64 ? 162u : 0u; /* unweighted: counts */
    const uint QW = wk == GH_W_F32 ? 12u : 13u, QP = 5u, QN = wk == GH_W_F32 ? 47u : 162u;
    const uint QB = wk == GH_W_F32 ? 768u : 0u;
    __local uint *cnt = lm;
    __local uint *flg = lm + N;
    __local uint *sp = lm + 2u * N;
    __local uint *qp = sp + N * SN;
    const uint words = wk ? N * (2u + SN + (sq_mode == 1u ? QN : 0u)) : N;
    for (uint i = lid; i < words; i += lsize)
        lm[i] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    const ulong tile = (ulong)ngrp * GH_WL_TILE;
    for (ulong r0 = 0; r0 < pixels; r0 += tile) {
        const ulong r1 = pixels - r0 > tile ? r0 + tile : (ulong)pixels;
        for (ulong p = r0 + (ulong)grp * lsize + lid; p < r1; p += (ulong)ngrp * lsize) {
            gh_wsplit w, q, ql;
            double wd = 0.0;
            w.r = q.r = ql.r = 0u;
            if (wk == GH_W_F32) {
                const uint b = weights[p];
                w = gh_w_split_f32(b);
                q = gh_w_square_f32(w);
                wd = (double)as_float(b);
                ql.r = 0u;
            } else if (wk == GH_W_F64) {
                const ulong b = ((__global const ulong *)weights)[p];
                w = gh_w_split_f64(b);
                wd = as_double(b);
                const double h = wd * wd;
                q = gh_w_split_f64(as_ulong(h));
                ql.r = 0u;
                if (q.r == 1u)
                    ql = gh_w_split_f64(as_ulong(fma(wd, wd, -h)));
            }
            for (uint c = 0u; c < C; ++c) {
                const int h = gh_hist_of(c, cs0, cs1, cs2, cs3);
                if (h < 0)
                    continue;
                const uint slot = GH_SLOT(&m, edges, data[p * C + c]);
                const uint counter = (uint)h * slots + slot;
                atomic_inc(cnt + counter);
                if (slot == nan_slot || !wk)
                    continue;
                if (w.r == 1u)
                    gh_pieces_add(sp + counter * SN, w, SW, SP, 0u);
                else if (w.r)
                    atomic_or(flg + counter, w.r);
                if (sq_mode == 1u) {
                    if (q.r == 1u)
                        gh_pieces_add(qp + counter * QN, q, QW, QP, QB);
                    else if (q.r)
                        atomic_or(flg + counter, q.r << 8);
                    if (ql.r == 1u)
                        gh_pieces_add(qp + counter * QN, ql, QW, QP, QB);
                } else if (sq_mode == 2u) {
                    gh_square_global(squares + (ulong)counter * (GH_XSUM_LIMBS_F64 + 1u), wd, wk);
                }
            }
        }
        /* flush the round into the global counters and records */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = lid; i < N; i += lsize) {
            const uint c = cnt[i];
            if (c) {
                GH_GLOBAL_ADD(&counters[i], c);
                cnt[i] = 0u;
            }
            const uint f = wk ? flg[i] : 0u;
            if (f) {
                if (f & 0xFFu)
                    gh_acc_or(sums + (ulong)i * sum_words + sum_words - 1u, f & 0xFFu);
                if (f >> 8)
                    gh_acc_or(squares + (ulong)i * (GH_XSUM_LIMBS_F64 + 1u) + GH_XSUM_LIMBS_F64,
                              f >> 8);
                flg[i] = 0u;
            }
        }
        for (uint i = lid; i < N * SN; i += lsize) {
            const int v = (int)sp[i];
            if (v) {
                const uint c = i / SN, j = i - c * SN;
                gh_acc_piece(sums + (ulong)c * sum_words, v, SW * j);
                sp[i] = 0u;
            }
        }
        if (sq_mode == 1u) {
            for (uint i = lid; i < N * QN; i += lsize) {
                const int v = (int)qp[i];
                if (v) {
                    const uint c = i / QN, j = i - c * QN;
                    gh_acc_piece(squares + (ulong)c * (GH_XSUM_LIMBS_F64 + 1u), v, QB + QW * j);
                    qp[i] = 0u;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Pixels [first, first + count) of the job, straight into the global records. */
__kernel void gh_weighted_global(__global const gh_sample_t *data, __global const uint *weights,
                                 uint first, uint count, GH_COMMON_PARAMS,
                                 __global gh_count_t *counters, __global ulong *sums,
                                 ulong sq_offset, uint wk, uint want_squares, uint sum_words)
{
    gpuhist_binmap m = map;
    __global ulong *squares = sums + sq_offset;
    const uint nan_slot = slots - 1u;
    const uint end = first + count;
    for (uint p = first + (uint)get_global_id(0); p < end; p += (uint)get_global_size(0)) {
        uint limb = 0u, r = 0u;
        gh_i64 d[3] = {0, 0, 0};
        double wd = 0.0;
        if (wk == GH_W_F32) {
            const float f = as_float(weights[p]);
            wd = (double)f;
            r = gh_xsum_split_f32(f, &limb, d);
        } else if (wk == GH_W_F64) {
            wd = as_double(((__global const ulong *)weights)[p]);
            r = gh_xsum_split_f64(wd, &limb, d);
        }
        for (uint c = 0u; c < C; ++c) {
            const int h = gh_hist_of(c, cs0, cs1, cs2, cs3);
            if (h < 0)
                continue;
            const uint slot = GH_SLOT(&m, edges, data[(ulong)p * C + c]);
            const ulong counter = (ulong)h * slots + slot;
            GH_GLOBAL_ADD(&counters[counter], 1u);
            if (slot == nan_slot || !wk)
                continue;
            gh_acc_deposit(sums + counter * sum_words, r, limb, d, wk == GH_W_F32 ? 2 : 3,
                           sum_words - 1u);
            if (want_squares)
                gh_square_global(squares + counter * (GH_XSUM_LIMBS_F64 + 1u), wd, wk);
        }
    }
}

/* Normalise `records` records of `words` words (limbs + flags) from word `offset` of acc. */
__kernel void gh_weighted_normalize(__global long *acc, ulong offset, uint records, uint words)
{
    const uint r = (uint)get_global_id(0);
    if (r >= records)
        return;
    __global long *rec = acc + offset + (ulong)r * words;
    gh_i64 x[GH_XSUM_LIMBS_F64];
    const uint n = words - 1u;
    for (uint i = 0u; i < n; ++i)
        x[i] = rec[i];
    gh_xsum_normalize(x, n);
    for (uint i = 0u; i < n; ++i)
        rec[i] = x[i];
}
