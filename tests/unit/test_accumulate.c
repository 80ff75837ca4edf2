/*
 * test_accumulate.c - result.accumulate: calls that add into a histogram equal one call over the
 * concatenation of their samples, bit for bit.
 *
 * For each case (dtype, bin kind, channels, outlier policy, unweighted or f32/f64 weights, data
 * with NaN, infinities and outliers, weights with a few non-finite values) the samples are cut
 * into 1 to 6 parts at random (empty parts included) and each part is added into one result with
 * accumulate set (counts, tallies, weight state, sums, sums of squares); the result must equal
 * gpuhist_histogram() of the whole input on the same context: counts and tallies exactly, the
 * sums bit for bit, the exact states word for word. Parts are added three ways: one-shot calls,
 * streams finished into the accumulating result, and (on the CPU backend) a context of two
 * devices. An independent check: INTEGER bins of u8 data with small integer weights, counted and
 * summed by a loop here. Refusals: accumulating weights without weight_state (named by the
 * message).
 *
 * usage: test_accumulate cpu|cuda|opencl (host samples and host counts; the device-resident
 * path is tests/gpu/test_accumulate.cu). Seed: GPUHIST_TEST_SEED (fixed unless set, printed;
 * "random" for a new one); GPUHIST_ACCUMULATE_CASES: how many cases. Exit 77 without a device.
 */
#include "gpuhist.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(rng_t *r, uint64_t n) { return n ? next(r) % n : 0; }
static double unit(rng_t *r) { return (double)(next(r) >> 11) * 0x1p-53; }

/* One sample: floats in [-0.1, 1.1) with NaN / +-inf / exact edges now and then; integers
 * around the integer bins' range. */
static void put(gpuhist_dtype t, unsigned char *p, rng_t *r)
{
    double v = unit(r) * 1.2 - 0.1;
    const uint64_t pick = below(r, 40);
    if (pick == 0)
        v = NAN;
    else if (pick == 1)
        v = below(r, 2) ? INFINITY : -INFINITY;
    else if (pick == 2)
        v = (double)below(r, 5) * 0.25; /* on an even edge of 4 bins over [0, 1] */
    const int64_t iv = (int64_t)below(r, 60) - 10;
    switch (t) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)below(r, 256); memcpy(p, &x, 1); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)below(r, 65536); memcpy(p, &x, 2); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)iv; memcpy(p, &x, 4); break; }
    case GPUHIST_I64: { int64_t x = iv; memcpy(p, &x, 8); break; }
    case GPUHIST_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
    }
}

/* A weight: mostly of mixed magnitudes and signs (cancellation), now and then inf or NaN. */
static void put_weight(gpuhist_dtype wt, unsigned char *p, rng_t *r, int nonfinite)
{
    double w = (unit(r) - 0.3) * ldexp(1.0, (int)below(r, 40) - 20);
    if (nonfinite && below(r, 3000) == 0)
        w = below(r, 3) == 0 ? NAN : below(r, 2) ? INFINITY : -INFINITY;
    if (wt == GPUHIST_F32) {
        float f = (float)w;
        memcpy(p, &f, 4);
    } else {
        memcpy(p, &w, 8);
    }
}

typedef struct {
    uint64_t *counts;
    double *sums, *sq;
    int64_t *state;
    size_t nc, words;
} outputs;

static int alloc_outputs(outputs *o, size_t nc, size_t words)
{
    o->nc = nc;
    o->words = words;
    o->counts = calloc(nc ? nc : 1, sizeof *o->counts);
    o->sums = calloc(nc ? nc : 1, sizeof *o->sums);
    o->sq = calloc(nc ? nc : 1, sizeof *o->sq);
    o->state = calloc(words ? words : 1, sizeof *o->state);
    return o->counts && o->sums && o->sq && o->state;
}

static void free_outputs(outputs *o)
{
    free(o->counts);
    free(o->sums);
    free(o->sq);
    free(o->state);
}

/* A result writing into `o` (weighted: sums, squares and the state). */
static gpuhist_result result_of(outputs *o, int weighted, int accumulate)
{
    gpuhist_result r = gpuhist_result_host(o->counts);
    if (weighted) {
        r.sums = o->sums;
        r.sums_squared = o->sq;
        r.weight_state = o->state;
    }
    r.accumulate = accumulate;
    return r;
}

/* `got` (accumulated) against `want` (one call): counts, tallies, sums bits, state words. */
static int same(const gpuhist_result *want, const outputs *w, const gpuhist_result *got,
                const outputs *g, int weighted, const char *how)
{
    int ok = CHECK_EQ_U64(got->bins, want->bins) && CHECK_EQ_U64(got->channels, want->channels);
    if (!ok)
        return 0;
    for (size_t i = 0; i < w->nc; ++i)
        if (!CHECK_MSG(g->counts[i] == w->counts[i], "%s: count %zu: %llu, one call %llu", how,
                       i, (unsigned long long)g->counts[i], (unsigned long long)w->counts[i]))
            return 0;
    for (uint32_t k = 0; k < want->channels; ++k) {
        ok &= CHECK_MSG(got->underflow[k] == want->underflow[k], "%s: underflow[%u]", how, k);
        ok &= CHECK_MSG(got->overflow[k] == want->overflow[k], "%s: overflow[%u]", how, k);
        ok &= CHECK_MSG(got->nan[k] == want->nan[k], "%s: nan[%u]", how, k);
        ok &= CHECK_MSG(got->total[k] == want->total[k], "%s: total[%u] %llu vs %llu", how, k,
                        (unsigned long long)got->total[k], (unsigned long long)want->total[k]);
    }
    if (!weighted)
        return ok;
    for (size_t i = 0; i < w->nc; ++i) {
        if (!CHECK_MSG(memcmp(&g->sums[i], &w->sums[i], 8) == 0, "%s: sum %zu: %a, one call %a",
                       how, i, g->sums[i], w->sums[i]) ||
            !CHECK_MSG(memcmp(&g->sq[i], &w->sq[i], 8) == 0, "%s: square sum %zu: %a vs %a", how,
                       i, g->sq[i], w->sq[i]))
            return 0;
    }
    for (size_t i = 0; i < w->words; ++i)
        if (!CHECK_MSG(g->state[i] == w->state[i], "%s: state word %zu: %lld vs %lld", how, i,
                       (long long)g->state[i], (long long)w->state[i]))
            return 0;
    return ok;
}

/* Samples [at, at + n) of `s` (pixels of pb bytes; weights of wb bytes). */
static gpuhist_samples part_of(const gpuhist_samples *s, uint64_t at, uint64_t n, size_t pb,
                               size_t wb)
{
    gpuhist_samples p = *s;
    p.data = (const unsigned char *)s->data + at * pb;
    p.count = n;
    if (s->weights)
        p.weights = (const unsigned char *)s->weights + at * wb;
    return p;
}

static gpuhist_status stream_part(gpuhist_ctx *ctx, const gpuhist_samples *p,
                                  const gpuhist_bin_spec *b, gpuhist_result *res)
{
    gpuhist_stream *st;
    gpuhist_status rc = gpuhist_stream_begin(ctx, p, b, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;
    rc = p->weights ? gpuhist_stream_feed_weighted(st, p->data, p->weights, p->count)
                    : gpuhist_stream_feed(st, p->data, p->count);
    if (rc != GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return rc;
    }
    return gpuhist_stream_finish(st, res);
}

/* An independent count: u8 samples in INTEGER bins [lo, lo + bins), weights small integers
 * (exact doubles, so the plain sum here is exact), added in two calls. */
static void independent(gpuhist_ctx *ctx, rng_t *r, int weighted)
{
    enum { N = 5000, BINS = 200 };
    const int64_t lo = 20;
    static uint8_t x[N];
    static double w[N];
    uint64_t want[BINS] = {0}, under = 0, over = 0;
    double wsum[BINS] = {0}, wsq[BINS] = {0};
    for (int i = 0; i < N; ++i) {
        x[i] = (uint8_t)below(r, 256);
        w[i] = (double)((int64_t)below(r, 21) - 10);
        if (x[i] < lo) {
            ++under;
        } else if (x[i] >= lo + BINS) {
            ++over;
        } else {
            ++want[x[i] - lo];
            wsum[x[i] - lo] += w[i];
            wsq[x[i] - lo] += w[i] * w[i];
        }
    }
    gpuhist_bin_spec b = gpuhist_bins_integer(BINS, lo);
    outputs o;
    size_t words = gpuhist_weight_state_words(BINS, 1, GPUHIST_F64, 1);
    if (!CHECK(alloc_outputs(&o, BINS, words)))
        return;
    gpuhist_result res = result_of(&o, weighted, 1);
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_U8, N);
    s.weights = weighted ? w : NULL;
    s.weight_dtype = GPUHIST_F64;
    check_context("independent u8 integer bins, %s", weighted ? "f64 weights" : "unweighted");
    const uint64_t cut = 1 + below(r, N - 1);
    gpuhist_samples a = part_of(&s, 0, cut, 1, 8), c = part_of(&s, cut, N - cut, 1, 8);
    gpuhist_status st = gpuhist_histogram(ctx, &a, &b, &res);
    if (st == GPUHIST_ERROR_UNSUPPORTED && weighted) {
        printf("  weights: %s (skipped)\n", gpuhist_last_error(ctx));
        free_outputs(&o);
        return;
    }
    if (CHECK_EQ_INT(st, GPUHIST_OK) && CHECK_EQ_INT(gpuhist_histogram(ctx, &c, &b, &res),
                                                     GPUHIST_OK)) {
        for (int i = 0; i < BINS; ++i) {
            CHECK_EQ_U64(o.counts[i], want[i]);
            if (weighted) {
                CHECK_EQ_F64_BITS(o.sums[i], wsum[i]);
                CHECK_EQ_F64_BITS(o.sq[i], wsq[i]);
            }
        }
        CHECK_EQ_U64(res.underflow[0], under);
        CHECK_EQ_U64(res.overflow[0], over);
        CHECK_EQ_U64(res.nan[0], 0);
        CHECK_EQ_U64(res.total[0], N);
    }
    free_outputs(&o);
}

/* Accumulating weights without a state is refused, naming the field; nothing is written. */
static void refusals(gpuhist_ctx *ctx)
{
    check_context("refusals");
    const double x[4] = {0.1, 0.2, 0.3, 0.4}, w[4] = {1, 2, 3, 4};
    uint64_t counts[2] = {7, 7};
    double sums[2] = {0, 0};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, 4);
    s.weights = w;
    s.weight_dtype = GPUHIST_F64;
    gpuhist_bin_spec b = gpuhist_bins_even(2, 0.0, 1.0);
    gpuhist_result r = gpuhist_result_host(counts);
    r.sums = sums;
    r.accumulate = 1;
    gpuhist_status st = gpuhist_histogram(ctx, &s, &b, &r);
    if (st == GPUHIST_ERROR_UNSUPPORTED)
        return; /* a backend that does not sum weights refuses them first */
    CHECK_EQ_INT(st, GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
    CHECK_EQ_U64(counts[0], 7);
    CHECK_EQ_U64(counts[1], 7);
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    if (argc < 2 || !gpuhist_backend_parse(argv[1], &backend) || backend == GPUHIST_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s cpu|cuda|opencl\n", argv[0]);
        return 2;
    }
    const char *env = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = env && strcmp(env, "random") == 0 ? (uint64_t)time(NULL)
                    : env && *env                    ? strtoull(env, NULL, 0)
                                                     : 20261127u;
    gpuhist_ctx *ctx = NULL, *multi = NULL;
    gpuhist_status cs = gpuhist_create(&ctx, backend);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no %s device: skipped (%s)\n", argv[1], gpuhist_last_error(NULL));
        return 77;
    }
    if (cs != GPUHIST_OK) {
        fprintf(stderr, "cannot create a context: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    if (backend == GPUHIST_BACKEND_CPU) {
        const int two[2] = {0, 0};
        if (gpuhist_create_multi(&multi, backend, two, 2) != GPUHIST_OK) {
            fprintf(stderr, "cannot create a context of two devices: %s\n",
                    gpuhist_last_error(NULL));
            return 1;
        }
    }
    printf("accumulate test: backend %s (%s), seed %llu\n", argv[1], gpuhist_device_name(ctx),
           (unsigned long long)seed);
    rng_t r = {seed};
    refusals(ctx);
    independent(ctx, &r, 0);
    independent(ctx, &r, 1);

    static const gpuhist_dtype types[] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_I32,
                                          GPUHIST_I64, GPUHIST_F32, GPUHIST_F64};
    const char *nc = getenv("GPUHIST_ACCUMULATE_CASES");
    const int cases = nc && atoi(nc) > 0 ? atoi(nc) : backend == GPUHIST_BACKEND_OPENCL ? 24 : 80;
    int weights_refused = 0;
    for (int ci = 0; ci < cases; ++ci) {
        const gpuhist_dtype t = types[below(&r, sizeof types / sizeof types[0])];
        const uint32_t C = 1 + (uint32_t)below(&r, 3), A = 1 + (uint32_t)below(&r, C);
        const size_t sz = gpuhist_dtype_size(t), pb = sz * C;
        const uint64_t pixels = ci % 7 == 0 ? below(&r, 30) : 500 + below(&r, 40000);
        const int weighted = (int)below(&r, 3); /* 0 none, 1 f32, 2 f64 */
        const gpuhist_dtype wt = weighted == 1 ? GPUHIST_F32 : GPUHIST_F64;
        const size_t wb = gpuhist_dtype_size(wt);
        unsigned char *data = malloc((size_t)(pixels * pb) + 1);
        unsigned char *wts = malloc((size_t)(pixels * wb) + 1);
        if (!CHECK(data && wts))
            return check_exit();
        for (uint64_t i = 0; i < pixels * C; ++i)
            put(t, data + i * sz, &r);
        const int nonfinite = below(&r, 2) == 0;
        for (uint64_t i = 0; i < pixels; ++i)
            put_weight(wt, wts + i * wb, &r, nonfinite);

        /* bins: even over [0, 1] (4 or many), edges, or integers */
        gpuhist_bin_spec b;
        double edges[65];
        const int kind = (int)below(&r, 3);
        if (kind == 0) {
            b = gpuhist_bins_even(below(&r, 2) ? 4u : 1u + (uint32_t)below(&r, 3000), 0.0, 1.0);
            if (t != GPUHIST_F32 && t != GPUHIST_F64)
                b = gpuhist_bins_even(1u + (uint32_t)below(&r, 64), 3.0, 40.0 + below(&r, 900));
            b.last_edge_inclusive = (int)below(&r, 2);
        } else if (kind == 1) {
            const uint32_t nb = 1 + (uint32_t)below(&r, 64);
            edges[0] = -0.05;
            for (uint32_t i = 1; i <= nb; ++i)
                edges[i] = edges[i - 1] + 0.001 + unit(&r) * 0.05;
            if (t != GPUHIST_F32 && t != GPUHIST_F64)
                for (uint32_t i = 0; i <= nb; ++i)
                    edges[i] = edges[i] * 1000.0;
            b = gpuhist_bins_edges(nb, edges);
        } else {
            b = gpuhist_bins_integer(1 + (uint32_t)below(&r, 80), (int64_t)below(&r, 20) - 12);
            if (t == GPUHIST_F32 || t == GPUHIST_F64)
                b = gpuhist_bins_even(7, 0.0, 1.0);
        }
        b.outliers = below(&r, 2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;

        gpuhist_samples s = gpuhist_samples_1d(data, t, pixels);
        s.channels = C;
        s.active_channels = A;
        if (weighted) {
            s.weights = wts;
            s.weight_dtype = wt;
        }
        check_context("case %d: %s, %u of %u channels, %llu pixels, kind %d, %u bins, %s, %s", ci,
                      gpuhist_dtype_name(t), A, C, (unsigned long long)pixels, kind, b.bins,
                      b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop",
                      weighted ? gpuhist_dtype_name(wt) : "unweighted");
        const size_t ncounts = (size_t)b.bins * A;
        const size_t words = weighted ? gpuhist_weight_state_words(b.bins, A, wt, 1) : 0;
        outputs one, acc;
        if (!CHECK(alloc_outputs(&one, ncounts, words) && alloc_outputs(&acc, ncounts, words)))
            return check_exit();
        gpuhist_result want = result_of(&one, weighted, 0);
        gpuhist_status st = gpuhist_histogram(ctx, &s, &b, &want);
        if (weighted && st == GPUHIST_ERROR_UNSUPPORTED) {
            if (!weights_refused++)
                printf("  weights: %s (weighted cases skipped)\n", gpuhist_last_error(ctx));
        } else if (CHECK_MSG(st == GPUHIST_OK, "one call: %s", gpuhist_last_error(ctx))) {
            /* cut points: 1 to 6 parts, some empty */
            const int parts = 1 + (int)below(&r, 6);
            uint64_t cuts[7];
            cuts[0] = 0;
            cuts[parts] = pixels;
            for (int p = 1; p < parts; ++p)
                cuts[p] = below(&r, pixels + 1);
            for (int p = 1; p < parts; ++p) /* sort the inner cuts */
                for (int q = p + 1; q < parts; ++q)
                    if (cuts[q] < cuts[p]) {
                        uint64_t tmp = cuts[p];
                        cuts[p] = cuts[q];
                        cuts[q] = tmp;
                    }
            static const char *const hows[3] = {"calls", "streams", "two devices"};
            for (int how = 0; how < 3; ++how) {
                gpuhist_ctx *use = how == 2 ? multi : ctx;
                if (!use)
                    continue;
                memset(acc.counts, 0, ncounts * sizeof *acc.counts);
                if (words)
                    memset(acc.state, 0, words * sizeof *acc.state);
                gpuhist_result got = result_of(&acc, weighted, 1);
                for (int p = 0; p < parts && st == GPUHIST_OK; ++p) {
                    gpuhist_samples ps = part_of(&s, cuts[p], cuts[p + 1] - cuts[p], pb, wb);
                    st = how == 1 ? stream_part(use, &ps, &b, &got)
                                  : gpuhist_histogram(use, &ps, &b, &got);
                    CHECK_MSG(st == GPUHIST_OK, "%s: part %d: %s", hows[how], p,
                              gpuhist_last_error(use));
                }
                if (st == GPUHIST_OK)
                    same(&want, &one, &got, &acc, weighted, hows[how]);
            }
        }
        free_outputs(&one);
        free_outputs(&acc);
        free(data);
        free(wts);
    }
    gpuhist_destroy(multi);
    gpuhist_destroy(ctx);
    printf("accumulate test: %d cases\n", cases);
    return check_exit();
}
