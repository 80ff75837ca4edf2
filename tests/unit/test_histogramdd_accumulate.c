/*
 * test_histogramdd_accumulate.c - accumulating N-D calls (gpuhist_nd_result.accumulate): random
 * points (NaN, outside an axis and on the last edge among them) of 1 to 4 dimensions, f64, f32,
 * u8 or i32, over even, edge and integer axes, cut into random parts (some empty) and counted by
 * one call per part into one result: counts, out / nan / total, and with weights (f32 or f64,
 * adversarial: +-1e16 beside 1, tiny, huge) the sums, squares and exact weight state equal one
 * call on all the points bit for bit; the same with N-D streams whose finishes add into one
 * result. Integer rounds are also checked against a reference counted here (integer bins are
 * exact: bin = x - lower). Refusals: accumulating weights without a state, device tallies with
 * host counts, DEVICE counts of host points or of a stream, each naming the field.
 *
 * usage: test_histogramdd_accumulate cpu|opencl|cuda (the CUDA run counts host points; device
 * points are tests/gpu/test_nd_accumulate.cu's). Seed: GPUHIST_TEST_SEED (fixed by default,
 * printed; "random" for a new one). Rounds: GPUHIST_ND_CASES (default 40). Exit 77 without a
 * device.
 */
#include "gpuhist.h"
#include "check.h"
#include "nd_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One round's points (interleaved, `dtype`) and what describes them. */
typedef struct {
    uint32_t dims;
    gpuhist_dtype dtype;
    uint64_t n;
    unsigned char *pts; /* n * dims coordinates */
    gpuhist_bin_spec axes[4];
    double *edges[4];   /* EDGES axes' edges */
    uint64_t B;         /* joint bins */
    void *w;            /* NULL or n weights of wd */
    gpuhist_dtype wd;
    int squares;
    int integer;        /* every axis INTEGER (reference counted here) */
} round_t;

static void store(round_t *R, uint64_t i, double v)
{
    unsigned char *p = R->pts + i * gpuhist_dtype_size(R->dtype);
    if (R->dtype == GPUHIST_F64) {
        memcpy(p, &v, 8);
    } else if (R->dtype == GPUHIST_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else if (R->dtype == GPUHIST_U8) {
        uint8_t u = (uint8_t)v;
        memcpy(p, &u, 1);
    } else {
        int32_t s = (int32_t)v;
        memcpy(p, &s, 4);
    }
}

static void make_round(rng_t *rng, round_t *R)
{
    static const gpuhist_dtype types[] = {GPUHIST_F64, GPUHIST_F32, GPUHIST_U8, GPUHIST_I32};
    memset(R, 0, sizeof *R);
    R->dims = 1 + (uint32_t)below(rng, 4);
    R->dtype = types[below(rng, 4)];
    R->integer = R->dtype == GPUHIST_U8 || R->dtype == GPUHIST_I32;
    R->B = 1;
    for (uint32_t a = 0; a < R->dims; ++a) {
        const uint32_t bins = 1 + (uint32_t)below(rng, 7);
        if (R->integer) {
            R->axes[a] = gpuhist_bins_integer(bins, (int64_t)below(rng, 4));
        } else if (below(rng, 3) == 0) {
            R->edges[a] = malloc((bins + 1u) * sizeof(double));
            double e = 0.0;
            for (uint32_t i = 0; i <= bins; ++i) {
                R->edges[a][i] = e;
                e += (0.25 + unit(rng)) / bins;
            }
            R->axes[a] = gpuhist_bins_edges(bins, R->edges[a]);
            R->axes[a].last_edge_inclusive = (int)below(rng, 2);
        } else {
            R->axes[a] = gpuhist_bins_even(bins, 0.0, 1.0);
            R->axes[a].last_edge_inclusive = (int)below(rng, 2);
        }
        R->B *= bins;
    }
    R->n = 1 + below(rng, 4000);
    R->pts = malloc(R->n * R->dims * 8);
    for (uint64_t i = 0; i < R->n * R->dims; ++i) {
        const uint64_t k = below(rng, 40);
        double v;
        if (R->integer)
            v = (double)below(rng, 12); /* some below, some above each axis */
        else
            v = k == 0 && R->dtype != GPUHIST_U8 ? NAN : k == 1 ? -0.5 : k == 2 ? 1.0 : unit(rng);
        store(R, i, v);
    }
    if (R->integer || below(rng, 2)) /* integer rounds unweighted: their reference is counts */
        return;
    R->wd = below(rng, 2) ? GPUHIST_F64 : GPUHIST_F32;
    R->squares = (int)below(rng, 2);
    R->w = malloc(R->n * 8);
    static const double big[] = {1e16, -1e16, 1.0, -1.0, 3e-300, 0.1, 1e300, -1e300};
    for (uint64_t i = 0; i < R->n; ++i) {
        double v = below(rng, 2) ? big[below(rng, 8)] : (unit(rng) - 0.5) * 1e3;
        if (R->wd == GPUHIST_F32) {
            float f = (float)(below(rng, 2) ? v : v * 1e-20);
            memcpy((unsigned char *)R->w + i * 4, &f, 4);
        } else {
            memcpy((unsigned char *)R->w + i * 8, &v, 8);
        }
    }
}

static void free_round(round_t *R)
{
    for (uint32_t a = 0; a < 4; ++a)
        free(R->edges[a]);
    free(R->pts);
    free(R->w);
}

/* Points [first, first + n) of the round. */
static gpuhist_points part_points(const round_t *R, uint64_t first, uint64_t n)
{
    gpuhist_points p = gpuhist_points_interleaved(
        R->pts + first * R->dims * gpuhist_dtype_size(R->dtype), R->dtype, R->dims, n);
    if (R->w) {
        p.weights = (const unsigned char *)R->w + first * gpuhist_dtype_size(R->wd);
        p.weight_dtype = R->wd;
    }
    return p;
}

/* The reference of an integer round: counts and tallies counted here (NaN impossible). */
static void reference(const round_t *R, uint64_t *counts, uint64_t *out)
{
    memset(counts, 0, R->B * 8);
    *out = 0;
    const size_t size = gpuhist_dtype_size(R->dtype);
    for (uint64_t i = 0; i < R->n; ++i) {
        uint64_t j = 0;
        int inside = 1;
        for (uint32_t a = 0; a < R->dims; ++a) {
            const unsigned char *c = R->pts + (i * R->dims + a) * size;
            int64_t x;
            if (R->dtype == GPUHIST_U8) {
                x = *c;
            } else {
                int32_t s;
                memcpy(&s, c, 4);
                x = s;
            }
            const int64_t b = x - R->axes[a].integer_lower;
            if (b < 0 || b >= (int64_t)R->axes[a].bins)
                inside = 0;
            else
                j = j * R->axes[a].bins + (uint64_t)b;
        }
        if (inside)
            ++counts[j];
        else
            ++*out;
    }
}

/* Random cut points 0 = cuts[0] <= ... <= cuts[k] = n; returns k (1..7). */
static int cut(rng_t *rng, uint64_t n, uint64_t *cuts)
{
    const int k = 1 + (int)below(rng, 7);
    cuts[0] = 0;
    cuts[k] = n;
    for (int i = 1; i < k; ++i)
        cuts[i] = below(rng, n + 1);
    for (int i = 1; i < k; ++i)
        for (int j = i + 1; j < k; ++j)
            if (cuts[j] < cuts[i]) {
                uint64_t t = cuts[i];
                cuts[i] = cuts[j];
                cuts[j] = t;
            }
    return k;
}

/* A result of the round's buffers, zeroed (counts, sums, state as the round needs). */
static void result_of(const round_t *R, uint64_t *counts, double *sums, double *squares,
                      int64_t *state, int accumulate, gpuhist_nd_result *r)
{
    memset(r, 0, sizeof *r);
    r->counts = counts;
    r->accumulate = accumulate;
    if (R->w) {
        r->sums = sums;
        r->sums_squared = R->squares ? squares : NULL;
        r->weight_state = state;
    }
}

static int same_result(const round_t *R, const gpuhist_nd_result *a, const gpuhist_nd_result *b,
                       const int64_t *sa, const int64_t *sb, size_t words, int round,
                       const char *how)
{
    int ok = CHECK_MSG(memcmp(a->counts, b->counts, R->B * 8) == 0, "round %d %s: counts differ",
                       round, how);
    ok &= CHECK_MSG(a->out == b->out && a->nan == b->nan && a->total == b->total,
                    "round %d %s: tallies %llu/%llu/%llu, one call %llu/%llu/%llu", round, how,
                    (unsigned long long)b->out, (unsigned long long)b->nan,
                    (unsigned long long)b->total, (unsigned long long)a->out,
                    (unsigned long long)a->nan, (unsigned long long)a->total);
    if (R->w) {
        ok &= CHECK_MSG(memcmp(a->sums, b->sums, R->B * 8) == 0,
                        "round %d %s (%u dims, %s weights): sums differ", round, how, R->dims,
                        gpuhist_dtype_name(R->wd));
        if (R->squares)
            ok &= CHECK_MSG(memcmp(a->sums_squared, b->sums_squared, R->B * 8) == 0,
                            "round %d %s: squares differ", round, how);
        ok &= CHECK_MSG(memcmp(sa, sb, words * 8) == 0, "round %d %s: weight states differ",
                        round, how);
    }
    return ok;
}

static void rounds(gpuhist_ctx *ctx, rng_t *rng, int cases)
{
    check_context("accumulate");
    for (int round = 0; round < cases; ++round) {
        round_t R;
        make_round(rng, &R);
        const size_t words =
            R.w ? gpuhist_weight_state_words((uint32_t)R.B, 1, R.wd, R.squares) : 1;
        uint64_t *c_all = malloc(R.B * 8), *c_acc = malloc(R.B * 8), *c_ref = malloc(R.B * 8);
        double *s_all = malloc(R.B * 8), *q_all = malloc(R.B * 8);
        double *s_acc = malloc(R.B * 8), *q_acc = malloc(R.B * 8);
        int64_t *st_all = calloc(words, 8), *st_acc = calloc(words, 8);

        /* one call on all the points (its state from zero, as a fresh result would be) */
        gpuhist_nd_result all, acc;
        result_of(&R, c_all, s_all, q_all, st_all, 0, &all);
        gpuhist_points p = part_points(&R, 0, R.n);
        if (!CHECK_MSG(gpuhist_histogramdd(ctx, &p, R.axes, &all) == GPUHIST_OK,
                       "round %d: one call: %s", round, gpuhist_last_error(ctx)))
            goto next;
        CHECK_EQ_U64(all.total, R.n);
        if (R.integer) {
            uint64_t out = 0;
            reference(&R, c_ref, &out);
            CHECK_MSG(memcmp(c_ref, c_all, R.B * 8) == 0, "round %d: counts differ from the "
                                                           "reference", round);
            CHECK_EQ_U64(all.out, out);
        }

        /* accumulating calls, one per part, into one result (counts, tallies and state from
         * zero; everything else left as the last call wrote it) */
        uint64_t cuts[8];
        int k = cut(rng, R.n, cuts);
        memset(c_acc, 0, R.B * 8); /* zeroed by the caller before the first call */
        result_of(&R, c_acc, s_acc, q_acc, st_acc, 1, &acc);
        for (int i = 0; i < k; ++i) {
            p = part_points(&R, cuts[i], cuts[i + 1] - cuts[i]);
            if (!CHECK_MSG(gpuhist_histogramdd(ctx, &p, R.axes, &acc) == GPUHIST_OK,
                           "round %d part %d: %s", round, i, gpuhist_last_error(ctx)))
                goto next;
        }
        same_result(&R, &all, &acc, st_all, st_acc, words, round, "calls");

        /* N-D streams, each fed some parts, their finishes adding into one result */
        memset(c_acc, 0, R.B * 8);
        memset(st_acc, 0, words * 8);
        result_of(&R, c_acc, s_acc, q_acc, st_acc, 1, &acc);
        k = cut(rng, R.n, cuts);
        for (int i = 0; i < k;) {
            gpuhist_points lay = part_points(&R, 0, 0);
            lay.data = NULL;
            gpuhist_nd_stream *ns = NULL;
            if (!CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, R.axes, &ns), GPUHIST_OK))
                goto next;
            const int feeds = 1 + (int)below(rng, 3);
            for (int f = 0; f < feeds && i < k; ++f, ++i) {
                p = part_points(&R, cuts[i], cuts[i + 1] - cuts[i]);
                CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &p), GPUHIST_OK);
            }
            if (!CHECK_MSG(gpuhist_nd_stream_finish(ns, &acc) == GPUHIST_OK,
                           "round %d stream: %s", round, gpuhist_last_error(ctx)))
                goto next;
        }
        same_result(&R, &all, &acc, st_all, st_acc, words, round, "streams");
    next:
        free(c_all);
        free(c_acc);
        free(c_ref);
        free(s_all);
        free(q_all);
        free(s_acc);
        free(q_acc);
        free(st_all);
        free(st_acc);
        free_round(&R);
    }
}

/* What accumulating N-D results refuse, by name. */
static void refusals(gpuhist_ctx *ctx)
{
    check_context("refusals");
    double pts[4] = {0.1, 0.2, 0.3, 0.4}, w[2] = {1.0, 2.0}, sums[4];
    uint64_t counts[4], stats[4];
    gpuhist_bin_spec ax[2] = {gpuhist_bins_even(2, 0.0, 1.0), gpuhist_bins_even(2, 0.0, 1.0)};
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F64, 2, 2);
    gpuhist_nd_result r;

    /* weighted and accumulating without a state */
    p.weights = w;
    p.weight_dtype = GPUHIST_F64;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    r.sums = sums;
    r.accumulate = 1;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
    gpuhist_points lay = p;
    lay.data = NULL;
    lay.count = 0;
    gpuhist_nd_stream *ns = NULL;
    if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, ax, &ns), GPUHIST_OK)) {
        CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
    }
    p.weights = NULL;

    /* device tallies with host counts */
    memset(&r, 0, sizeof r);
    r.counts = counts;
    r.device_stats = stats;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.device_stats");

    /* DEVICE counts: host memory is not device memory; host points are not device points */
    memset(&r, 0, sizeof r);
    r.counts = counts;
    r.counts_location = GPUHIST_MEMORY_DEVICE;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.counts");
    r.counts_location = (gpuhist_memory)7;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.counts_location");

    /* a stream's result is in host memory */
    lay = p;
    lay.data = NULL;
    lay.count = 0;
    if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, ax, &ns), GPUHIST_OK)) {
        CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &p), GPUHIST_OK);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "result.c");
    }

    /* nothing was added by the refused calls: one accumulating call on zeroed counts */
    memset(&r, 0, sizeof r);
    memset(counts, 0, sizeof counts);
    r.counts = counts;
    r.accumulate = 1;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_OK);
    /* (0.1, 0.2) and (0.3, 0.4) are both in bins (0, 0) of [0, 0.5) x [0, 0.5): joint bin 0 */
    CHECK_EQ_U64(counts[0], 2);
    CHECK_EQ_U64(counts[1] + counts[2] + counts[3], 0);
    CHECK_EQ_U64(r.total, 2);
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_OK);
    CHECK_EQ_U64(counts[0], 4);
    CHECK_EQ_U64(r.total, 4);
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    uint64_t seed;
    gpuhist_ctx *ctx = NULL;
    int rc = nd_test_start(argc, argv, "test_histogramdd_accumulate", &backend, &seed, &ctx);
    if (rc >= 0)
        return rc;
    const char *env = getenv("GPUHIST_ND_CASES");
    const int cases = env && *env ? atoi(env) : 40;
    printf("test_histogramdd_accumulate %s: seed %llu (GPUHIST_TEST_SEED), %d rounds\n",
           gpuhist_backend_name(backend), (unsigned long long)seed, cases);
    rng_t rng = {seed};
    rounds(ctx, &rng, cases);
    refusals(ctx);
    gpuhist_destroy(ctx);
    return check_exit();
}
