/*
 * test_multi.c - contexts over several devices (gpuhist_create_multi) give the same bits as one
 * device: one-shot calls (host input cut into shares), auto range agreed over the shares,
 * streams fed in turn (user buffers and lent ones), weights merged through their exact states,
 * minmax, errors with the one-device message.
 *
 *   test_multi BACKEND [DEVICES]    BACKEND cpu | cuda | opencl; DEVICES e.g. "0,1" (default:
 *                                   every device when there are several, else "0,0,0" for the
 *                                   CPU and "0,0" elsewhere: two contexts on one device)
 * GPU backends skip (exit 77) without a device. Seed: GPUHIST_TEST_SEED (fixed by default,
 * printed; "random" for a new one). Cases: GPUHIST_MULTI_CASES (default 150).
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
static uint64_t below(uint64_t n) { return n ? next() % n : 0; }

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static const gpuhist_dtype g_types[] = {GPUHIST_U8,  GPUHIST_I16, GPUHIST_U32,
                                        GPUHIST_I64, GPUHIST_F32, GPUHIST_F64};

/* Fill n samples of type t: values mostly in [-20, 120), a few specials for floats. */
static void fill(void *p, gpuhist_dtype t, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        double v = floor(unit() * 140.0) - 20.0;
        switch (t) {
        case GPUHIST_U8: ((uint8_t *)p)[i] = (uint8_t)next(); break;
        case GPUHIST_I16: ((int16_t *)p)[i] = (int16_t)v; break;
        case GPUHIST_U32: ((uint32_t *)p)[i] = (uint32_t)(v < 0 ? -v : v); break;
        case GPUHIST_I64: ((int64_t *)p)[i] = (int64_t)v; break;
        case GPUHIST_F32: {
            float f = (float)(unit() * 140.0 - 20.0);
            if (below(50) == 0)
                f = below(2) ? NAN : INFINITY;
            ((float *)p)[i] = f;
            break;
        }
        default: {
            double d = unit() * 140.0 - 20.0;
            if (below(50) == 0)
                d = below(2) ? NAN : -INFINITY;
            ((double *)p)[i] = d;
            break;
        }
        }
    }
}

/* Weights over a wide exponent range, some of opposite signs, now and then not finite. */
static void fill_weights(void *p, gpuhist_dtype t, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        double w = ldexp(unit() + 0.5, (int)below(200) - 100) * (below(3) ? 1.0 : -1.0);
        if (below(400) == 0)
            w = below(2) ? INFINITY : NAN;
        if (t == GPUHIST_F32)
            ((float *)p)[i] = (float)w;
        else
            ((double *)p)[i] = w;
    }
}

typedef struct outcome {
    gpuhist_status st;
    uint64_t *counts;
    double *edges, *sums, *squares;
    int64_t *state;
    gpuhist_result r;
    char error[512];
} outcome;

static void outcome_alloc(outcome *o, size_t n, uint32_t bins, size_t state_words)
{
    memset(o, 0, sizeof *o);
    o->counts = calloc(n, sizeof *o->counts);
    o->edges = calloc((size_t)bins + 1, sizeof *o->edges);
    o->sums = calloc(n, sizeof *o->sums);
    o->squares = calloc(n, sizeof *o->squares);
    o->state = calloc(state_words + 1, sizeof *o->state);
}

static void outcome_free(outcome *o)
{
    free(o->counts);
    free(o->edges);
    free(o->sums);
    free(o->squares);
    free(o->state);
}

/* The result fields of a request, pointing into o. */
static gpuhist_result result_of(outcome *o, int weighted, int squares)
{
    gpuhist_result r = gpuhist_result_host(o->counts);
    r.edges = o->edges;
    if (weighted) {
        r.sums = o->sums;
        r.sums_squared = squares ? o->squares : NULL;
        r.weight_state = o->state;
    }
    return r;
}

static void compare(const char *what, const outcome *a, const outcome *b, size_t n,
                    uint32_t bins, int weighted, int squares, size_t state_words)
{
    char ctx_[512];
    snprintf(ctx_, sizeof ctx_, "%s", check_context_);
    check_context("%.400s; %s", ctx_, what);
    CHECK_EQ_INT(b->st, a->st);
    if (a->st != GPUHIST_OK || b->st != GPUHIST_OK) {
        CHECK_EQ_STR(b->error, a->error);
        check_context("%s", ctx_);
        return;
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += a->counts[i] != b->counts[i];
    CHECK_MSG(bad == 0, "%zu of %zu counts differ", bad, n);
    for (uint32_t i = 0; i <= bins; ++i)
        if (bits(a->edges[i]) != bits(b->edges[i])) {
            CHECK_EQ_F64_BITS(b->edges[i], a->edges[i]);
            break;
        }
    CHECK_EQ_U64(b->r.bins, a->r.bins);
    CHECK_EQ_U64(b->r.channels, a->r.channels);
    for (uint32_t k = 0; k < a->r.channels; ++k) {
        CHECK_EQ_U64(b->r.underflow[k], a->r.underflow[k]);
        CHECK_EQ_U64(b->r.overflow[k], a->r.overflow[k]);
        CHECK_EQ_U64(b->r.nan[k], a->r.nan[k]);
        CHECK_EQ_U64(b->r.total[k], a->r.total[k]);
    }
    CHECK_EQ_F64_BITS(b->r.lower, a->r.lower);
    CHECK_EQ_F64_BITS(b->r.upper, a->r.upper);
    CHECK_EQ_INT(b->r.last_edge_inclusive, a->r.last_edge_inclusive);
    if (weighted) {
        size_t sb = 0, qb = 0;
        for (size_t i = 0; i < n; ++i) {
            sb += bits(a->sums[i]) != bits(b->sums[i]);
            qb += squares && bits(a->squares[i]) != bits(b->squares[i]);
        }
        CHECK_MSG(sb == 0, "%zu of %zu weight sums differ in their bits", sb, n);
        CHECK_MSG(qb == 0, "%zu of %zu sums of squares differ in their bits", qb, n);
        CHECK_MSG(memcmp(a->state, b->state, state_words * 8) == 0,
                  "the exact weight states differ");
    }
    check_context("%s", ctx_);
}

/* One random request through the single context and the multi context, one-shot and streamed. */
static void one_case(gpuhist_ctx *one, gpuhist_ctx *multi, int index, int weights_ok)
{
    const gpuhist_dtype t = g_types[below(sizeof g_types / sizeof g_types[0])];
    const size_t ss = gpuhist_dtype_size(t);
    const uint32_t C = 1 + (uint32_t)below(4), A = 1 + (uint32_t)below(C);
    const int roi = below(4) == 0;
    uint64_t pixels = below(6) == 0 ? below(4) : below(below(2) ? 3000 : 200000);
    uint64_t rows = roi ? 1 + below(40) : 0, row_length = roi ? below(3000) : 0;
    size_t pad = roi ? (size_t)below(3) * C * ss : 0;
    size_t stride = roi ? (size_t)row_length * C * ss + pad : 0;
    if (roi)
        pixels = rows * row_length;
    const size_t bytes = roi ? (size_t)rows * stride + 1 : (size_t)pixels * C * ss + 1;
    unsigned char *data = malloc(bytes);
    fill(data, t, bytes / ss);

    gpuhist_bin_spec spec;
    double edges[65];
    const int kind = (int)below(4);
    uint32_t bins = 1 + (uint32_t)below(below(4) == 0 ? 70000 : 200);
    if (kind == 0) {
        spec = gpuhist_bins_even(bins, -5.0 + unit(), 100.0 * unit() + 1.0);
    } else if (kind == 1) {
        spec = gpuhist_bins_auto(bins);
    } else if (kind == 2) {
        bins = 1 + (uint32_t)below(64);
        edges[0] = -10.0 + unit();
        for (uint32_t i = 1; i <= bins; ++i)
            edges[i] = edges[i - 1] + 0.25 + unit() * 3.0;
        spec = gpuhist_bins_edges(bins, edges);
    } else {
        spec = gpuhist_bins_integer(bins, (int64_t)below(20) - 10);
        if (t == GPUHIST_F32 || t == GPUHIST_F64)
            spec = gpuhist_bins_even(bins, 0.0, 50.0);
    }
    if (below(3) == 0)
        spec.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (below(3) == 0)
        spec.last_edge_inclusive = 1;

    gpuhist_samples s = gpuhist_samples_1d(data, t, pixels);
    s.channels = C;
    s.active_channels = A;
    if (roi) {
        s.rows = rows;
        s.row_length = row_length;
        s.row_stride = stride;
    }
    const int weighted = weights_ok && below(3) == 0;
    const int squares = weighted && below(2);
    const gpuhist_dtype wd = below(2) ? GPUHIST_F32 : GPUHIST_F64;
    void *w = NULL;
    if (weighted) {
        w = malloc((size_t)pixels * 8 + 8);
        fill_weights(w, wd, (size_t)pixels);
        s.weights = w;
        s.weight_dtype = wd;
    }
    check_context("case %d: %s C=%u A=%u %s%llu pixels, bin kind %d, %u bins%s%s%s", index,
                  gpuhist_dtype_name(t), C, A, roi ? "ROI " : "", (unsigned long long)pixels,
                  kind, bins, spec.outliers ? ", clamp" : "",
                  weighted ? (wd == GPUHIST_F32 ? ", f32 weights" : ", f64 weights") : "",
                  squares ? " + squares" : "");

    const size_t n = (size_t)A * bins;
    const size_t words = weighted ? gpuhist_weight_state_words(bins, A, wd, squares) : 0;
    outcome a, b;
    outcome_alloc(&a, n, bins, words);
    outcome_alloc(&b, n, bins, words);
    a.r = result_of(&a, weighted, squares);
    b.r = result_of(&b, weighted, squares);
    a.st = gpuhist_histogram(one, &s, &spec, &a.r);
    snprintf(a.error, sizeof a.error, "%s", gpuhist_last_error(one));
    b.st = gpuhist_histogram(multi, &s, &spec, &b.r);
    snprintf(b.error, sizeof b.error, "%s", gpuhist_last_error(multi));
    compare("one-shot", &a, &b, n, bins, weighted, squares, words);

    /* the same data as a stream (contiguous input, a known range): random chunks, in turn */
    if (a.st == GPUHIST_OK && !roi) {
        gpuhist_bin_spec ss_spec = spec;
        if (spec.kind == GPUHIST_BINS_EVEN && spec.auto_range) {
            ss_spec = gpuhist_bins_even(bins, a.r.lower, a.r.upper);
            ss_spec.last_edge_inclusive = 1;
            ss_spec.outliers = spec.outliers;
            ss_spec.float32_linspace = spec.float32_linspace; /* f32: the same edges */
        }
        gpuhist_samples layout = s;
        layout.data = NULL;
        outcome c;
        outcome_alloc(&c, n, bins, words);
        c.r = result_of(&c, weighted, squares);
        /* the reference: one stream on one device */
        outcome d;
        outcome_alloc(&d, n, bins, words);
        d.r = result_of(&d, weighted, squares);
        gpuhist_stream *st1 = NULL, *stm = NULL;
        gpuhist_status r1 = gpuhist_stream_begin(one, &layout, &ss_spec, GPUHIST_MEMORY_HOST, &st1);
        gpuhist_status rm = gpuhist_stream_begin(multi, &layout, &ss_spec, GPUHIST_MEMORY_HOST, &stm);
        CHECK_EQ_INT(rm, r1);
        const size_t pb = (size_t)C * ss;
        const int lend = !weighted && below(2);
        for (uint64_t at = 0; r1 == GPUHIST_OK && rm == GPUHIST_OK && at < pixels;) {
            uint64_t k = 1 + below(below(3) ? pixels / 3 + 1 : 50);
            if (k > pixels - at)
                k = pixels - at;
            const unsigned char *p = data + at * pb;
            const void *wp = weighted ? (const unsigned char *)w + at * gpuhist_dtype_size(wd) : NULL;
            r1 = weighted ? gpuhist_stream_feed_weighted(st1, p, wp, k) : gpuhist_stream_feed(st1, p, k);
            if (lend) {
                void *buf = NULL;
                rm = gpuhist_stream_buffer(stm, (size_t)k * pb, &buf);
                if (rm == GPUHIST_OK) {
                    memcpy(buf, p, (size_t)k * pb);
                    rm = gpuhist_stream_submit(stm, buf, k);
                }
            } else {
                rm = weighted ? gpuhist_stream_feed_weighted(stm, p, wp, k)
                              : gpuhist_stream_feed(stm, p, k);
            }
            at += k;
        }
        CHECK_EQ_INT(rm, GPUHIST_OK);
        CHECK_EQ_INT(r1, GPUHIST_OK);
        if (r1 == GPUHIST_OK)
            d.st = gpuhist_stream_finish(st1, &d.r);
        else
            gpuhist_stream_abort(st1);
        if (rm == GPUHIST_OK)
            c.st = gpuhist_stream_finish(stm, &c.r);
        else
            gpuhist_stream_abort(stm);
        if (rm != GPUHIST_OK)
            fprintf(stderr, "multi stream: %s\n", gpuhist_last_error(multi));
        compare("streams", &d, &c, n, bins, weighted, squares, words);
        /* and the stream equals the one-shot call */
        compare("stream vs one-shot", &a, &c, n, bins, weighted, squares, words);
        outcome_free(&c);
        outcome_free(&d);
    }

    /* the min and max agree */
    double mn1 = 0, mx1 = 0, mn2 = 0, mx2 = 0;
    int f1 = 0, f2 = 0;
    gpuhist_samples sm = s;
    sm.weights = NULL;
    gpuhist_status m1 = gpuhist_minmax(one, &sm, &mn1, &mx1, &f1);
    gpuhist_status m2 = gpuhist_minmax(multi, &sm, &mn2, &mx2, &f2);
    CHECK_EQ_INT(m2, m1);
    CHECK_EQ_INT(f2, f1);
    if (f1 && f2) {
        CHECK_EQ_F64_BITS(mn2, mn1);
        CHECK_EQ_F64_BITS(mx2, mx1);
    }
    outcome_free(&a);
    outcome_free(&b);
    free(w);
    free(data);
}

/* Requests that fail give the message of one device; the context stays usable. */
static void errors(gpuhist_ctx *one, gpuhist_ctx *multi)
{
    check_context("errors");
    float x[5] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
    uint64_t c1[8], c2[8];
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, 5);
    gpuhist_bin_spec bad = gpuhist_bins_even(4, 2.0, 1.0);
    gpuhist_result r1 = gpuhist_result_host(c1), r2 = gpuhist_result_host(c2);
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &bad, &r2), gpuhist_histogram(one, &s, &bad, &r1));
    CHECK_EQ_STR(gpuhist_last_error(multi), gpuhist_last_error(one));
    gpuhist_bin_spec good = gpuhist_bins_even(4, 0.0, 4.0);
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), GPUHIST_OK);
    CHECK_EQ_U64(c2[0] + c2[1] + c2[2] + c2[3], 4);
    s.channels = 9;
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), gpuhist_histogram(one, &s, &good, &r1));
    CHECK_EQ_STR(gpuhist_last_error(multi), gpuhist_last_error(one));
    s.channels = 1;
    double sums[4];
    r2.sums = sums; /* sums without weights */
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(multi), "result.sums");
    r2.sums = NULL;
    /* a stream cannot leave its counts on a device of several */
    gpuhist_stream *st = NULL;
    if (gpuhist_context_device_count(multi) > 1) {
        CHECK_EQ_INT(gpuhist_stream_begin(multi, &s, &good, GPUHIST_MEMORY_DEVICE, &st),
                     GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(multi), "counts");
        CHECK_EQ_INT(gpuhist_set_stream(multi, (void *)&st), GPUHIST_ERROR_INVALID_ARGUMENT);
    }
    /* a busy context */
    CHECK_EQ_INT(gpuhist_stream_begin(multi, &s, &good, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), GPUHIST_ERROR_BUSY);
    void *buf = NULL;
    CHECK_EQ_INT(gpuhist_stream_submit(st, x, 5), GPUHIST_ERROR_INVALID_ARGUMENT); /* not lent */
    CHECK_CONTAINS(gpuhist_stream_error(st), "not a buffer lent");
    (void)buf;
    gpuhist_stream_abort(st);
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), GPUHIST_OK);
    /* a forced strategy reaches every device */
    gpuhist_backend b = gpuhist_context_backend(multi);
    const char *name = b == GPUHIST_BACKEND_CPU ? "cpu-reference"
                       : b == GPUHIST_BACKEND_CUDA ? "cuda-global-atomic"
                                                   : "opencl-local-atomic";
    CHECK_EQ_INT(gpuhist_set_strategy(multi, name), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(multi, &s, &good, &r2), GPUHIST_OK);
    CHECK_EQ_STR(r2.strategy, name);
    CHECK_EQ_INT(gpuhist_set_strategy(multi, "auto"), GPUHIST_OK);
}

static void exact_state_api(void)
{
    check_context("weight state API");
    CHECK_EQ_U64(gpuhist_weight_state_words(4, 1, GPUHIST_F32, 0), 7 * 11);
    CHECK_EQ_U64(gpuhist_weight_state_words(4, 2, GPUHIST_F64, 1), 2 * 7 * (69 + 69));
    CHECK_EQ_U64(gpuhist_weight_state_words(0, 1, GPUHIST_F64, 0), 0);
    CHECK_EQ_U64(gpuhist_weight_state_words(4, 1, GPUHIST_I32, 0), 0);
    /* 1e300 + 1 - 1e300 in two parts, and a NaN in a third: exact, whatever the order */
    gpuhist_ctx *ctx;
    if (!CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK))
        return;
    double x[3] = {0.5, 0.5, 0.5}, w1[2] = {1e300, 1.0}, w2[1] = {-1e300};
    uint64_t c[1];
    double sum = 0;
    const size_t words = gpuhist_weight_state_words(1, 1, GPUHIST_F64, 0);
    int64_t *s1 = calloc(words, 8), *s2 = calloc(words, 8);
    gpuhist_bin_spec b = gpuhist_bins_even(1, 0.0, 1.0);
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, 2);
    s.weights = w1;
    s.weight_dtype = GPUHIST_F64;
    gpuhist_result r = gpuhist_result_host(c);
    r.sums = &sum;
    r.weight_state = s1;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK);
    CHECK_EQ_F64_BITS(sum, 1e300);
    s.count = 1;
    s.weights = w2;
    r.weight_state = s2;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_weight_state_add(s1, s2, 1, 1, GPUHIST_F64, 0), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_weight_state_sums(s1, 1, 1, GPUHIST_F64, 0, GPUHIST_OUTLIERS_DROP, &sum,
                                           NULL),
                 GPUHIST_OK);
    CHECK_EQ_F64_BITS(sum, 1.0);
    CHECK_EQ_INT(gpuhist_weight_state_sums(s1, 1, 1, GPUHIST_F64, 0, GPUHIST_OUTLIERS_DROP, &sum,
                                           &sum),
                 GPUHIST_ERROR_INVALID_ARGUMENT); /* squares from a state without them */
    free(s1);
    free(s2);
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    gpuhist_backend backend = GPUHIST_BACKEND_CPU;
    if (argc > 1 && !gpuhist_backend_parse(argv[1], &backend)) {
        fprintf(stderr, "test_multi: unknown backend '%s'\n", argv[1]);
        return 2;
    }
    const char *s = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = 20261126;
    if (s && strcmp(s, "random") == 0)
        seed = (uint64_t)time(NULL);
    else if (s && *s)
        seed = strtoull(s, NULL, 10);
    const char *cs = getenv("GPUHIST_MULTI_CASES");
    const int cases = cs && *cs ? atoi(cs) : 150;
    printf("multi test: seed %" PRIu64 " (GPUHIST_TEST_SEED; \"random\" for a new one)\n", seed);
    g_rng = seed;

    int devices[16], count = 0;
    if (argc > 2) {
        for (char *p = argv[2]; *p && count < 16;) {
            devices[count++] = (int)strtol(p, &p, 10);
            if (*p == ',')
                ++p;
        }
    } else {
        int have = gpuhist_device_count(backend);
        if (have == 0) {
            printf("test_multi: no %s device: skipped\n", gpuhist_backend_name(backend));
            return 77;
        }
        if (have > 1) {
            for (count = 0; count < have && count < 16; ++count)
                devices[count] = count;
        } else {
            count = backend == GPUHIST_BACKEND_CPU ? 3 : 2;
            for (int i = 0; i < count; ++i)
                devices[i] = 0;
        }
    }
    gpuhist_ctx *one = NULL, *multi = NULL;
    gpuhist_status st = gpuhist_create_on(&one, backend, devices[0]);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        printf("test_multi: %s: skipped\n", gpuhist_last_error(NULL));
        return 77;
    }
    if (!CHECK_EQ_INT(st, GPUHIST_OK) ||
        !CHECK_EQ_INT(gpuhist_create_multi(&multi, backend, devices, count), GPUHIST_OK)) {
        fprintf(stderr, "%s\n", gpuhist_last_error(NULL));
        return check_exit();
    }
    printf("one: %s\nmulti: %s (%d devices)\n", gpuhist_device_name(one),
           gpuhist_device_name(multi), gpuhist_context_device_count(multi));
    check_context("context");
    CHECK_EQ_INT(gpuhist_context_device_count(multi), count);
    for (int i = 0; i < count; ++i)
        CHECK_EQ_INT(gpuhist_context_device(multi, i), devices[i]);
    CHECK_EQ_INT(gpuhist_context_device(multi, count), -1);
    CHECK_EQ_INT(gpuhist_context_device_count(one), 1);
    CHECK_EQ_INT(gpuhist_context_backend(multi), backend);
    {
        gpuhist_ctx *bad = NULL;
        int nope[2] = {0, 999};
        CHECK(gpuhist_create_multi(&bad, backend, nope, 2) != GPUHIST_OK || backend == GPUHIST_BACKEND_CPU);
        gpuhist_destroy(bad);
        CHECK_EQ_INT(gpuhist_create_multi(&bad, backend, NULL, 3), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_INT(gpuhist_create_multi(&bad, backend, devices, -1), GPUHIST_ERROR_INVALID_ARGUMENT);
    }
    exact_state_api();
    errors(one, multi);
    const int weights_ok = 1; /* every backend sums weights */
    for (int i = 0; i < cases; ++i)
        one_case(one, multi, i, weights_ok);
    gpuhist_destroy(one);
    gpuhist_destroy(multi);
    return check_exit();
}
