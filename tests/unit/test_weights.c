/*
 * test_weights.c - weighted histograms: bad requests, reproducible bits, counts as without
 * weights, and (with --dump DIR) cases for the exact oracle (weights_oracle.py).
 *
 * Reproducibility: random samples (f32, f64, i64, u8 with channels, a ROI) and weights spread
 * over a wide exponent range (some NaN and infinite), histogrammed with 1, 2, 3 and 7 threads,
 * one-shot and as streams cut into random chunks: sums and sums of squares must be the same
 * bits every time, and the counts those of cpu-reference without weights.
 *
 * --dump DIR writes each case (samples and weights as f64, edges, the rules, gpuhist's sums) to
 * DIR/case-N.bin; the oracle recomputes the bins with NumPy and the sums with exact rationals.
 * Seed: GPUHIST_TEST_SEED (fixed by default, printed; "random" for a new one).
 */
#include "gpuhist.h"
#include "check.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t g_rng;
static uint64_t next(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unit(void) { return (double)(next() >> 11) * 0x1p-53; }

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

/* ---- bad requests --------------------------------------------------------------------------- */

static void bad_requests(void)
{
    gpuhist_ctx *ctx;
    if (!CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK))
        return;
    float x[4] = {0.1f, 0.2f, 0.7f, 2.0f}, w[4] = {1, 2, 3, 4};
    uint64_t counts[4];
    double sums[4], sq[4];
    gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 1.0);
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, 4);
    gpuhist_result r = gpuhist_result_host(counts);

    check_context("weights: bad requests");
    s.weights = w;
    s.weight_dtype = GPUHIST_I32;
    r.sums = sums;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "samples.weight_dtype: weights must be f32 or f64");
    s.weight_dtype = GPUHIST_F32;
    r.sums = NULL;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.sums: NULL");
    s.weights = NULL;
    r.sums = sums;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.sums: given without weights");
    r.sums = NULL;
    r.sums_squared = sq;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.sums_squared: given without weights");
    /* a strategy that does not sum weights, forced */
    s.weights = w;
    r.sums = sums;
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-serial"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_UNSUPPORTED);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "cpu-serial cannot histogram f32 samples into 4 even "
                                            "bins with 1 channel(s) and weights");
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "auto"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK);
    CHECK_EQ_U64(counts[0], 2); /* 0.1 and 0.2 in [0, 0.25) */
    CHECK_EQ_U64(counts[1], 0);
    CHECK_EQ_U64(counts[2], 1);
    CHECK_EQ_U64(r.overflow[0], 1);
    CHECK_EQ_F64_BITS(sums[0], 3.0);
    CHECK_EQ_F64_BITS(sums[1], 0.0);
    CHECK_EQ_F64_BITS(sums[2], 3.0);
    CHECK_EQ_F64_BITS(sums[3], 0.0);
    CHECK(!strcmp(r.strategy, "cpu-weighted"));

    /* streams: feeds must match the stream's kind; lent buffers are refused */
    gpuhist_stream *st;
    gpuhist_samples lay = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
    lay.weights = w;
    lay.weight_dtype = GPUHIST_F32;
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_stream_feed(st, x, 4), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_stream_error(st), "gpuhist_stream_feed_weighted");
    gpuhist_stream_abort(st);
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    void *buf;
    CHECK_EQ_INT(gpuhist_stream_buffer(st, 16, &buf), GPUHIST_ERROR_INVALID_ARGUMENT);
    gpuhist_stream_abort(st);
    lay.weights = NULL;
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_stream_feed_weighted(st, x, w, 4), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_stream_error(st), "weights given to a stream begun without weights");
    gpuhist_stream_abort(st);
    /* begun without squares: a finish that asks for them is refused (nothing written), one
     * that does not gets the counts and sums */
    lay.weights = w;
    lay.stream_no_squares = 1;
    for (int ask = 1; ask >= 0; --ask) {
        CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
        CHECK_EQ_INT(gpuhist_stream_feed_weighted(st, x, w, 4), GPUHIST_OK);
        memset(counts, 0xA5, sizeof counts);
        r = gpuhist_result_host(counts);
        r.sums = sums;
        r.sums_squared = ask ? sq : NULL;
        CHECK_EQ_INT(gpuhist_stream_finish(st, &r),
                     ask ? GPUHIST_ERROR_INVALID_ARGUMENT : GPUHIST_OK);
        if (ask) {
            CHECK_CONTAINS(gpuhist_last_error(ctx), "the stream was begun without squares");
            CHECK_EQ_U64(counts[0], 0xA5A5A5A5A5A5A5A5ull);
        } else {
            CHECK_EQ_U64(counts[0], 2);
            CHECK_EQ_U64(counts[2], 1);
            CHECK_EQ_F64_BITS(sums[0], 3.0);
            CHECK_EQ_F64_BITS(sums[2], 3.0);
        }
    }
    gpuhist_destroy(ctx);

    /* OpenCL sums weights too (test_weighted_opencl compares it bit for bit with this backend);
     * a strategy of it that does not sum weights, forced, says so */
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_OPENCL) == GPUHIST_OK) {
        s.weights = w;
        r.sums = sums;
        if (CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK)) {
            CHECK_EQ_U64(counts[0], 2);
            CHECK_EQ_U64(r.overflow[0], 1);
            CHECK_EQ_F64_BITS(sums[0], 3.0);
            CHECK_EQ_F64_BITS(sums[2], 3.0);
            CHECK(!strncmp(r.strategy, "opencl-weighted-", 16));
        }
        CHECK_EQ_INT(gpuhist_set_strategy(ctx, "opencl-block-shared"), GPUHIST_OK);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_UNSUPPORTED);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "opencl-block-shared cannot histogram f32 "
                                                "samples into 4 even bins with 1 channel(s) and "
                                                "weights");
        gpuhist_destroy(ctx);
    }
}

/* ---- random cases ------------------------------------------------------------------------------- */

typedef struct {
    gpuhist_dtype dtype;
    uint32_t channels, bins;
    gpuhist_bin_kind kind;
    int clamp, roi, weight_f32;
    uint64_t pixels;
    unsigned char *data;
    unsigned char *weights;
    double edges[65];
} wcase;

static double any_weight(int f32, int wide)
{
    const uint64_t u = next() % 1000;
    if (u == 0)
        return NAN;
    if (u == 1)
        return INFINITY;
    if (u == 2)
        return -INFINITY;
    double m = unit() * 2 - 1;
    /* f64: |w| within 2^+-450, where w^2 and the low part of its exact product are normal */
    int e = wide ? (int)(next() % (f32 ? 200 : 900)) - (f32 ? 100 : 450) : (int)(next() % 40) - 20;
    double w = ldexp(m, e);
    return f32 ? (double)(float)w : w;
}

static void make_case(wcase *c, int i)
{
    static const gpuhist_dtype types[] = {GPUHIST_F32, GPUHIST_F64, GPUHIST_I64, GPUHIST_U8};
    memset(c, 0, sizeof *c);
    c->dtype = types[i % 4];
    c->channels = c->dtype == GPUHIST_U8 ? 3 : 1;
    c->bins = 1 + (uint32_t)(next() % 64);
    c->kind = c->dtype == GPUHIST_U8 ? GPUHIST_BINS_EVEN : (gpuhist_bin_kind)(next() % 2);
    c->clamp = (int)(next() % 2);
    c->roi = i % 5 == 4;
    c->weight_f32 = (int)(next() % 2);
    c->pixels = 1 + next() % 30000;
    const size_t size = gpuhist_dtype_size(c->dtype);
    c->data = malloc(c->pixels * c->channels * size);
    c->weights = malloc(c->pixels * 8);
    const int wide = (int)(next() % 2);
    for (uint64_t p = 0; p < c->pixels; ++p) {
        for (uint32_t ch = 0; ch < c->channels; ++ch) {
            unsigned char *d = c->data + (p * c->channels + ch) * size;
            double v = unit() * 1.4 - 0.2;
            if (next() % 200 == 0)
                v = NAN;
            if (c->dtype == GPUHIST_F32) {
                float f = (float)v;
                memcpy(d, &f, 4);
            } else if (c->dtype == GPUHIST_F64) {
                memcpy(d, &v, 8);
            } else if (c->dtype == GPUHIST_I64) {
                int64_t k = (int64_t)(next() % 2000) - 300;
                memcpy(d, &k, 8);
            } else {
                *d = (uint8_t)next();
            }
        }
        double w = any_weight(c->weight_f32, wide);
        if (c->weight_f32) {
            float f = (float)w;
            memcpy(c->weights + p * 4, &f, 4);
        } else {
            memcpy(c->weights + p * 8, &w, 8);
        }
    }
    for (uint32_t k = 0; k <= c->bins; ++k)
        c->edges[k] = c->dtype == GPUHIST_I64 ? -100.0 + 13.0 * k : k * (1.0 / c->bins) + unit() * 1e-3;
}

static gpuhist_bin_spec spec_of(const wcase *c)
{
    gpuhist_bin_spec b;
    if (c->dtype == GPUHIST_U8)
        b = gpuhist_bins_even(c->bins, 10.0, 250.0);
    else if (c->kind == GPUHIST_BINS_EDGES)
        b = gpuhist_bins_edges(c->bins, c->edges);
    else if (c->dtype == GPUHIST_I64)
        b = gpuhist_bins_even(c->bins, -100.0, 1200.0);
    else
        b = gpuhist_bins_even(c->bins, 0.0, 1.0);
    b.outliers = c->clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
    return b;
}

static gpuhist_samples samples_of(const wcase *c)
{
    gpuhist_samples s = gpuhist_samples_1d(c->data, c->dtype, c->pixels);
    s.channels = c->channels;
    s.active_channels = c->channels == 3 ? 2 : 1;
    s.weights = c->weights;
    s.weight_dtype = c->weight_f32 ? GPUHIST_F32 : GPUHIST_F64;
    if (c->roi && c->pixels >= 8) { /* the whole input as rows of 8 pixels */
        s.count = 0;
        s.rows = c->pixels / 8;
        s.row_length = 8;
        s.row_stride = 8 * c->channels * gpuhist_dtype_size(c->dtype);
    }
    return s;
}

static uint64_t roi_pixels(const wcase *c) { return c->roi && c->pixels >= 8 ? c->pixels / 8 * 8 : c->pixels; }

typedef struct {
    uint64_t counts[2 * 64];
    double sums[2 * 64], sq[2 * 64];
} wresult;

static gpuhist_status one_shot(gpuhist_ctx *ctx, const wcase *c, wresult *o)
{
    gpuhist_samples s = samples_of(c);
    gpuhist_bin_spec b = spec_of(c);
    gpuhist_result r = gpuhist_result_host(o->counts);
    r.sums = o->sums;
    r.sums_squared = o->sq;
    return gpuhist_histogram(ctx, &s, &b, &r);
}

/* The case as a stream cut into random chunks; no_squares: begun without squares (the layout's
 * stream_no_squares), finished without asking for them. */
static gpuhist_status streamed(gpuhist_ctx *ctx, const wcase *c, wresult *o, int no_squares)
{
    gpuhist_samples lay = samples_of(c);
    lay.rows = 0;
    lay.stream_no_squares = no_squares;
    gpuhist_bin_spec b = spec_of(c);
    gpuhist_stream *st;
    gpuhist_status rc = gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;
    const size_t pb = c->channels * gpuhist_dtype_size(c->dtype), wb = c->weight_f32 ? 4 : 8;
    const uint64_t n = roi_pixels(c);
    for (uint64_t p = 0; p < n && rc == GPUHIST_OK;) {
        uint64_t take = 1 + next() % (n / 3 + 1);
        if (take > n - p)
            take = n - p;
        rc = gpuhist_stream_feed_weighted(st, c->data + p * pb, c->weights + p * wb, take);
        p += take;
    }
    if (rc != GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return rc;
    }
    gpuhist_result r = gpuhist_result_host(o->counts);
    r.sums = o->sums;
    r.sums_squared = no_squares ? NULL : o->sq;
    return gpuhist_stream_finish(st, &r);
}

static void dump(const char *dir, int i, const wcase *c, const wresult *o)
{
    char path[512];
    snprintf(path, sizeof path, "%s/case-%d.bin", dir, i);
    FILE *f = fopen(path, "wb");
    if (!f) {
        CHECK_MSG(0, "cannot write %s", path);
        return;
    }
    const uint32_t A = c->channels == 3 ? 2 : 1;
    const uint64_t n = roi_pixels(c);
    double edges[65];
    gpuhist_bin_spec b = spec_of(c);
    gpuhist_compute_edges(&b, c->dtype, edges);
    uint64_t head[8] = {n, c->bins, A, c->channels, (uint64_t)c->clamp, (uint64_t)c->weight_f32,
                        b.last_edge_inclusive ? 1u : 0u, 0};
    fwrite(head, 8, 8, f);
    const size_t size = gpuhist_dtype_size(c->dtype);
    for (uint64_t p = 0; p < n; ++p)
        for (uint32_t ch = 0; ch < c->channels; ++ch) {
            const unsigned char *d = c->data + (p * c->channels + ch) * size;
            double v;
            if (c->dtype == GPUHIST_F32) {
                float x;
                memcpy(&x, d, 4);
                v = x;
            } else if (c->dtype == GPUHIST_F64) {
                memcpy(&v, d, 8);
            } else if (c->dtype == GPUHIST_I64) {
                int64_t x;
                memcpy(&x, d, 8);
                v = (double)x; /* small integers: exact */
            } else {
                v = *d;
            }
            fwrite(&v, 8, 1, f);
        }
    for (uint64_t p = 0; p < n; ++p) {
        double w;
        if (c->weight_f32) {
            float x;
            memcpy(&x, c->weights + p * 4, 4);
            w = x;
        } else {
            memcpy(&w, c->weights + p * 8, 8);
        }
        fwrite(&w, 8, 1, f);
    }
    fwrite(edges, 8, c->bins + 1, f);
    fwrite(o->counts, 8, (size_t)A * c->bins, f);
    fwrite(o->sums, 8, (size_t)A * c->bins, f);
    fwrite(o->sq, 8, (size_t)A * c->bins, f);
    fclose(f);
}

static int same_bits(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (bits(a[i]) != bits(b[i]) && !(isnan(a[i]) && isnan(b[i])))
            return 0;
    return 1;
}

static void random_cases(const char *dump_dir, int ncases)
{
    gpuhist_ctx *ctx, *ref;
    if (!CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK) ||
        !CHECK_EQ_INT(gpuhist_create(&ref, GPUHIST_BACKEND_CPU), GPUHIST_OK))
        return;
    gpuhist_set_strategy(ref, "cpu-reference");
    for (int i = 0; i < ncases; ++i) {
        wcase c;
        make_case(&c, i);
        check_context("case %d: %s x%u, %u %s bins, %s, %llu pixels, f%d weights", i,
                      gpuhist_dtype_name(c.dtype), c.channels, c.bins,
                      c.kind == GPUHIST_BINS_EDGES ? "edge" : "even", c.clamp ? "clamp" : "drop",
                      (unsigned long long)c.pixels, c.weight_f32 ? 32 : 64);
        const size_t n = (size_t)(c.channels == 3 ? 2 : 1) * c.bins;
        wresult want, got;
        gpuhist_set_threads(ctx, 1);
        if (!CHECK_EQ_INT(one_shot(ctx, &c, &want), GPUHIST_OK)) {
            fprintf(stderr, "  %s\n", gpuhist_last_error(ctx));
            continue;
        }
        /* counts: those of cpu-reference without weights */
        {
            gpuhist_samples s = samples_of(&c);
            s.weights = NULL;
            gpuhist_bin_spec b = spec_of(&c);
            uint64_t counts[128];
            gpuhist_result r = gpuhist_result_host(counts);
            CHECK_EQ_INT(gpuhist_histogram(ref, &s, &b, &r), GPUHIST_OK);
            CHECK(memcmp(counts, want.counts, n * 8) == 0);
        }
        static const int threads[] = {2, 3, 7};
        for (int t = 0; t < 3; ++t) {
            gpuhist_set_threads(ctx, threads[t]);
            memset(&got, 0xA5, sizeof got);
            CHECK_EQ_INT(one_shot(ctx, &c, &got), GPUHIST_OK);
            CHECK(memcmp(got.counts, want.counts, n * 8) == 0);
            CHECK(same_bits(got.sums, want.sums, n));
            CHECK(same_bits(got.sq, want.sq, n));
            memset(&got, 0xA5, sizeof got);
            CHECK_EQ_INT(streamed(ctx, &c, &got, 0), GPUHIST_OK);
            CHECK(memcmp(got.counts, want.counts, n * 8) == 0);
            CHECK(same_bits(got.sums, want.sums, n));
            CHECK(same_bits(got.sq, want.sq, n));
            /* begun without squares: the same counts and sums */
            memset(&got, 0xA5, sizeof got);
            CHECK_EQ_INT(streamed(ctx, &c, &got, 1), GPUHIST_OK);
            CHECK(memcmp(got.counts, want.counts, n * 8) == 0);
            CHECK(same_bits(got.sums, want.sums, n));
        }
        if (dump_dir)
            dump(dump_dir, i, &c, &want);
        free(c.data);
        free(c.weights);
    }
    gpuhist_destroy(ctx);
    gpuhist_destroy(ref);
}

int main(int argc, char **argv)
{
    const char *dump_dir = argc > 2 && strcmp(argv[1], "--dump") == 0 ? argv[2] : NULL;
    const char *s = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = 20261125;
    if (s && strcmp(s, "random") == 0)
        seed = (uint64_t)time(NULL);
    else if (s && *s)
        seed = strtoull(s, NULL, 10);
    printf("weights test: seed %" PRIu64 " (GPUHIST_TEST_SEED; \"random\" for a new one)\n", seed);
    g_rng = seed;
    bad_requests();
    random_cases(dump_dir, 120);
    return check_exit();
}
