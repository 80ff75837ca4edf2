/*
 * cpu-weighted - weighted histograms on the CPU: counts, and exact sums of weights and of their
 * squares (src/core/exact_sum.h).
 *
 * Mechanism: the pixels are cut into pieces of at most WEIGHTED_PIECE; the threads share each
 * piece, and each thread maps its samples to slots (f32 EVEN: the certified estimate of
 * fast_even.h; else gpuhist_slot_of, binmap.h) and adds counts and weight digits with plain
 * integer adds (so the order does not matter): thread 0 (the calling thread) straight into the
 * result's counts and the plan's accumulator (plan->weight_acc), threads 1.. into private
 * records. After each piece the private records are added into the result and the accumulator
 * and cleared, and the accumulator is normalised. Between two normalisations a limb of the
 * accumulator therefore takes its normalised value (< 2^32) plus at most 2 deposits (< 2^32
 * each) per pixel of the piece, 2^27 in all: below 2^60, far from overflow. Weights of NaN
 * samples are not summed (those samples are in no bin); outliers' are (the outlier policy may
 * need them).
 *
 * Memory: the private records are the context's scratch (cpu_kernels.h: entry t's `records`),
 * kept from call to call and all zero between uses (each merge clears what it added), so
 * repeated calls (a fitter filling the same histogram thousands of times) allocate nothing and
 * take no fresh pages; the backend frees them with the rest of the scratch when a histogram ends
 * holding more than its keep limit (cpu_backend.c, GPUHIST_CPU_KEEP_MIB) and when the context
 * is destroyed. A call on one thread (fewer than 65536 pixels per extra thread) needs no
 * private records at all.
 *
 * Limits: any dtype, bin kind, channels, ROI; weights f32 or f64, one per pixel. Private records
 * per extra thread: slots x (count + sum record + square record) int64; when that would pass
 * PRIVATE_BUDGET for all threads together, fewer threads run. Speed: a slot lookup and 2-3 (f32)
 * or 3-6 (f64, with squares) 64-bit adds per sample; per piece, a merge of (threads - 1) x the
 * records and one normalisation of the accumulator (with many bins and few samples, these
 * dominate: 4096 bins of f64 sums and squares are 1.1M limbs).
 * Seed: 003 (private histograms per thread, merged), with the exact accumulator for the sums.
 */
#define _GNU_SOURCE
#include "cpu_kernels.h"
#include "fast_even.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WEIGHTED_PIECE ((uint64_t)1 << 26)
#define PRIVATE_BUDGET ((uint64_t)512 << 20)

typedef struct weighted_share {
    const gpuhist_plan *plan;
    const gpuhist_fe_cert *cert; /* f32 EVEN: the spec's certificate (fast_even.h), else NULL */
    uint64_t begin, end; /* pixel indices */
    uint64_t *counts;    /* active * slots */
    int64_t *acc;        /* gpuhist_weight_acc_words(plan) */
} weighted_share;

static void deposit(int64_t *rec, gh_u32 r, gh_u32 limb, const gh_i64 *d, int digits,
                    size_t words)
{
    if (r == 1u) {
        for (int k = 0; k < digits; ++k)
            rec[limb + (gh_u32)k] += d[k];
    } else if (r) {
        rec[words - 1] |= (int64_t)r;
    }
}

/* Add the square of w (exact: f32 weights, and f64 ones whose product's low part is normal). */
static void deposit_square(int64_t *rec, double w, int is_f32)
{
    const size_t words = GPUHIST_SQUARE_RECORD;
    gh_u32 limb = 0;
    gh_i64 d[3] = {0, 0, 0};
    const double hi = w * w;
    gh_u32 r = gh_xsum_split_f64(hi, &limb, d);
    deposit(rec, r, limb, d, 3, words);
    if (!is_f32 && isfinite(hi)) {
        const double lo = fma(w, w, -hi);
        r = gh_xsum_split_f64(lo, &limb, d);
        deposit(rec, r, limb, d, 3, words);
    }
}

static void *weighted_run_share(void *arg)
{
    weighted_share *sh = arg;
    const gpuhist_plan *p = sh->plan;
    const size_t sum_words = GPUHIST_SUM_RECORD(p);
    int64_t *sums = sh->acc; /* NULL for an unweighted request (counts only) */
    int64_t *squares = sums ? sums + (size_t)p->active * p->slots * sum_words : NULL;
    const int is_f32 = p->weight_dtype == GPUHIST_F32;
    const uint32_t nan_slot = GPUHIST_SLOT_NAN(p->bins);
    uint64_t row = sh->begin / p->row_length, col = sh->begin % p->row_length;
    for (uint64_t i = sh->begin; i < sh->end; ++i) {
        const unsigned char *pixel = gpuhist_pixel_ptr(p, row, col);
        if (++col == p->row_length) {
            col = 0;
            ++row;
        }
        double w = 0;
        gh_u32 limb = 0, r = 0;
        gh_i64 d[3] = {0, 0, 0};
        if (p->weights && is_f32) { /* (unweighted, when forced: counts only) */
            float f;
            memcpy(&f, p->weights + i * 4u, 4);
            w = f;
            r = gh_xsum_split_f32(f, &limb, d);
        } else if (p->weights) {
            memcpy(&w, p->weights + i * 8u, 8);
            r = gh_xsum_split_f64(w, &limb, d);
        }
        for (uint32_t k = 0; k < p->active; ++k) {
            const unsigned char *at = pixel + (size_t)p->channel_index[k] * p->sample_size;
            uint32_t slot;
            if (sh->cert) { /* f32 EVEN: the certified estimate, binmap.h's answer */
                float x;
                memcpy(&x, at, 4);
                slot = gpuhist_fe_slot_f32(&p->map, sh->cert, x);
            } else {
                slot = gpuhist_slot_of(p, at);
            }
            const size_t record = (size_t)k * p->slots + slot;
            sh->counts[record] += 1;
            if (!p->weights || slot == nan_slot)
                continue;
            deposit(sums + record * sum_words, r, limb, d, is_f32 ? 2 : 3, sum_words);
            if (p->want_squares)
                deposit_square(squares + record * GPUHIST_SQUARE_RECORD, w, is_f32);
        }
    }
    return NULL;
}

/* Normalise every record of an accumulator (sums, then squares). */
static void normalize_all(const gpuhist_plan *p, int64_t *acc)
{
    const size_t records = (size_t)p->active * p->slots, sum_words = GPUHIST_SUM_RECORD(p);
    for (size_t r = 0; r < records; ++r)
        gh_xsum_normalize(acc + r * sum_words, (gh_u32)(sum_words - 1));
    if (p->want_squares) {
        int64_t *sq = acc + records * sum_words;
        for (size_t r = 0; r < records; ++r)
            gh_xsum_normalize(sq + r * GPUHIST_SQUARE_RECORD, GH_XSUM_LIMBS_F64);
    }
}

/* Add accumulator b into a, flags words OR'ed. */
static void add_acc(const gpuhist_plan *p, int64_t *a, const int64_t *b)
{
    const size_t records = (size_t)p->active * p->slots, sum_words = GPUHIST_SUM_RECORD(p);
    for (size_t r = 0; r < records; ++r) {
        int64_t *x = a + r * sum_words;
        const int64_t *y = b + r * sum_words;
        for (size_t i = 0; i + 1 < sum_words; ++i)
            x[i] += y[i];
        x[sum_words - 1] |= y[sum_words - 1];
    }
    if (p->want_squares) {
        int64_t *sa = a + records * sum_words;
        const int64_t *sb = b + records * sum_words;
        for (size_t r = 0; r < records; ++r) {
            int64_t *x = sa + r * GPUHIST_SQUARE_RECORD;
            const int64_t *y = sb + r * GPUHIST_SQUARE_RECORD;
            for (size_t i = 0; i < GH_XSUM_LIMBS_F64; ++i)
                x[i] += y[i];
            x[GH_XSUM_LIMBS_F64] |= y[GH_XSUM_LIMBS_F64];
        }
    }
}

static gpuhist_status weighted_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job,
                                   void *out)
{
    (void)job;
    uint64_t *counts = out;
    const size_t records = (size_t)plan->active * plan->slots;
    const size_t words = gpuhist_weight_acc_words(plan);
    /* threads: enough pixels each, and private records within the budget */
    const uint64_t per_thread_bytes = (uint64_t)(records + words) * 8u;
    /* (below 65536 pixels one thread runs: no core count asked, which reads a file of /sys) */
    int threads = plan->pixels < 65536u ? 1 : gpuhist_cpu_threads(ctx);
    if (threads > 64)
        threads = 64;
    if ((uint64_t)threads * per_thread_bytes > PRIVATE_BUDGET)
        threads = (int)(PRIVATE_BUDGET / per_thread_bytes);
    if ((uint64_t)threads > plan->pixels / 65536u + 1u)
        threads = (int)(plan->pixels / 65536u + 1u);
    if (threads < 1)
        threads = 1;
    gpuhist_status st =
        gpuhist_need_host_memory(ctx, (uint64_t)(threads - 1) * per_thread_bytes,
                                 "cpu-weighted: its private counts and sums");
    if (st != GPUHIST_OK)
        return st;
    /* thread 0 adds into the result; threads 1.. into their records, kept in the context's
     * scratch (all zero between uses), or, without it, in one block of this call's own */
    weighted_share sh[64];
    int64_t *own = NULL;
    gpuhist_cpu_scratch *sc = threads > 1 ? gpuhist_cpu_scratch_for(ctx, threads) : NULL;
    if (threads > 1 && !sc)
        own = calloc((size_t)threads - 1u, (records + words) * sizeof *own);
    for (int t = 1; t < threads; ++t) {
        int64_t *priv = own ? own + (size_t)(t - 1) * (records + words)
                            : sc ? gpuhist_cpu_scratch_records(&sc[t], records + words) : NULL;
        if (!priv) {
            free(own);
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "cpu-weighted: cannot allocate %d private records of %zu words",
                                threads - 1, records + words);
        }
        sh[t].counts = (uint64_t *)priv;
        sh[t].acc = priv + records;
    }
    int64_t *acc = plan->weight_acc;
    sh[0].counts = counts;
    sh[0].acc = acc;
    gpuhist_fe_cert cert;
    const int certified = plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EVEN;
    if (certified)
        gpuhist_fe_cert_of(&plan->map, &cert);
    for (int t = 0; t < threads; ++t) {
        sh[t].plan = plan;
        sh[t].cert = certified ? &cert : NULL;
    }
    for (uint64_t p0 = 0; p0 < plan->pixels; p0 += WEIGHTED_PIECE) {
        const uint64_t n = plan->pixels - p0 < WEIGHTED_PIECE ? plan->pixels - p0 : WEIGHTED_PIECE;
        const uint64_t per = (n + (uint64_t)threads - 1) / (uint64_t)threads;
        for (int t = 0; t < threads; ++t) {
            uint64_t b = (uint64_t)t * per < n ? (uint64_t)t * per : n;
            sh[t].begin = p0 + b;
            sh[t].end = p0 + (n - b < per ? n : b + per);
        }
        gpuhist_fork_join(sh, sizeof sh[0], threads, weighted_run_share);
        /* merge: the private counts and records add into the result and are cleared (the kept
         * scratch's invariant); the accumulator is normalised once for the whole piece */
        for (int t = 1; t < threads; ++t) {
            for (size_t i = 0; i < records; ++i)
                counts[i] += sh[t].counts[i];
            memset(sh[t].counts, 0, records * sizeof *sh[t].counts);
            if (words) {
                add_acc(plan, acc, sh[t].acc);
                memset(sh[t].acc, 0, words * sizeof *sh[t].acc);
            }
        }
        if (words)
            normalize_all(plan, acc);
    }
    free(own);
    return GPUHIST_OK;
}

const gpuhist_strategy gpuhist_strategy_cpu_weighted = {
    .name = "cpu-weighted",
    .backend = GPUHIST_BACKEND_CPU,
    .seed = "003 (private histograms), exact sums",
    .supports = "all dtypes, all bin kinds, any bins, channels, ROI; weights f32/f64",
    .summary = "slot per sample and exact weight sums (64-bit integer limbs) in private records "
               "per thread, merged",
    .dtypes = GPUHIST_ALL_DTYPES,
    .kinds = GPUHIST_ALL_KINDS,
    .max_bins = 0,
    .caps = GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI | GPUHIST_CAP_WEIGHTS,
    .supports_fn = NULL,
    .run = weighted_run,
};
