/*
 * test_stream.c - a streamed histogram equals one call on the concatenation, bit for bit.
 *
 * For each case (dtype, bin kind, channels, outlier policy, data with NaN/inf/outliers) the
 * input is cut into random chunks (1 pixel ... the whole input, and many tiny ones) and fed
 * through gpuhist_stream_feed or through lent staging buffers (gpuhist_stream_buffer/submit,
 * several held at once), and the counts, tallies and edges are compared with
 * gpuhist_histogram() on the same context and with cpu-reference. Also: auto range is refused,
 * a context with an open stream answers BUSY, abort leaves it usable, a failed stream reports
 * its error at finish, and an empty stream gives zero counts.
 *
 * usage: test_stream cpu|cuda|opencl. Seed: GPUHIST_TEST_SEED (fixed by default, printed;
 * "random" for a new one); GPUHIST_STREAM_CASES: how many cases. Exit 77 without a device.
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

static void put(gpuhist_dtype t, unsigned char *p, double v, uint64_t raw)
{
    switch (t) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)raw; memcpy(p, &x, 1); break; }
    case GPUHIST_I16: { int16_t x = (int16_t)raw; memcpy(p, &x, 2); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)raw; memcpy(p, &x, 2); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)(raw % 2001) - 1000; memcpy(p, &x, 4); break; }
    case GPUHIST_I64: { int64_t x = (int64_t)raw; memcpy(p, &x, 8); break; }
    case GPUHIST_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
    default: { memcpy(p, &v, 8); break; }
    }
}

typedef struct {
    uint64_t counts_cap;
    uint64_t *a, *b;
    double *ea, *eb;
} bufs;

static int same(const gpuhist_result *x, const uint64_t *cx, const double *ex,
                const gpuhist_result *y, const uint64_t *cy, const double *ey, const char *what)
{
    int ok = CHECK_EQ_U64(x->bins, y->bins) && CHECK_EQ_U64(x->channels, y->channels);
    if (!ok)
        return 0;
    for (uint64_t i = 0; i < (uint64_t)x->bins * x->channels; ++i)
        if (!CHECK_MSG(cx[i] == cy[i], "%s: count %llu: %llu vs %llu", what,
                       (unsigned long long)i, (unsigned long long)cx[i],
                       (unsigned long long)cy[i]))
            return 0;
    for (uint32_t k = 0; k < x->channels; ++k) {
        ok &= CHECK_EQ_U64(x->underflow[k], y->underflow[k]);
        ok &= CHECK_EQ_U64(x->overflow[k], y->overflow[k]);
        ok &= CHECK_EQ_U64(x->nan[k], y->nan[k]);
        ok &= CHECK_EQ_U64(x->total[k], y->total[k]);
    }
    for (uint32_t i = 0; i <= x->bins; ++i)
        if (!CHECK_MSG(memcmp(&ex[i], &ey[i], sizeof(double)) == 0, "%s: edge %u differs", what,
                       i))
            return 0;
    return ok;
}

/* Feed `data` (pixels of pixel_bytes) in random chunks; mode 0: feed, 1: lent buffers. */
static gpuhist_status stream_run(gpuhist_ctx *ctx, rng_t *r, const gpuhist_samples *layout,
                                 const gpuhist_bin_spec *spec, const unsigned char *data,
                                 uint64_t pixels, size_t pixel_bytes, int mode, uint64_t max_chunk,
                                 gpuhist_result *res)
{
    gpuhist_stream *st;
    gpuhist_status rc = gpuhist_stream_begin(ctx, layout, spec, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;
    uint64_t done = 0;
    void *held[3] = {0};
    uint64_t held_px[3] = {0};
    int nheld = 0;
    while (done < pixels && rc == GPUHIST_OK) {
        uint64_t n = 1 + below(r, max_chunk);
        if (n > pixels - done)
            n = pixels - done;
        if (mode == 0) {
            rc = gpuhist_stream_feed(st, data + done * pixel_bytes, n);
        } else {
            void *buf;
            rc = gpuhist_stream_buffer(st, (size_t)(n * pixel_bytes), &buf);
            if (rc != GPUHIST_OK)
                break;
            memcpy(buf, data + done * pixel_bytes, (size_t)(n * pixel_bytes));
            held[nheld] = buf;
            held_px[nheld++] = n;
            /* hold up to three filled buffers, then hand them back in a random order */
            if (nheld == 3 || done + n == pixels) {
                while (nheld > 0 && rc == GPUHIST_OK) {
                    int j = (int)below(r, (uint64_t)nheld);
                    rc = gpuhist_stream_submit(st, held[j], held_px[j]);
                    held[j] = held[nheld - 1];
                    held_px[j] = held_px[nheld - 1];
                    --nheld;
                }
            }
        }
        done += n;
    }
    if (rc != GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return rc;
    }
    return gpuhist_stream_finish(st, res);
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
                                                     : 20261124u;
    gpuhist_ctx *ctx = NULL, *gold = NULL;
    gpuhist_status cs = gpuhist_create(&ctx, backend);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no %s device: skipped (%s)\n", argv[1], gpuhist_last_error(NULL));
        return 77;
    }
    if (cs != GPUHIST_OK || gpuhist_create(&gold, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(gold, "cpu-reference") != GPUHIST_OK) {
        fprintf(stderr, "cannot create contexts: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    printf("stream test: backend %s (%s), seed %llu\n", argv[1], gpuhist_device_name(ctx),
           (unsigned long long)seed);

    static const gpuhist_dtype types[] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_I16, GPUHIST_I32,
                                          GPUHIST_I64, GPUHIST_F32, GPUHIST_F64};
    rng_t r = {seed};
    /* GPUHIST_STREAM_CASES: fewer cases for slow runs (compute-sanitizer's racecheck) */
    const char *nc = getenv("GPUHIST_STREAM_CASES");
    const int cases = nc && atoi(nc) > 0 ? atoi(nc) : backend == GPUHIST_BACKEND_OPENCL ? 24 : 60;
    for (int ci = 0; ci < cases; ++ci) {
        gpuhist_dtype t = types[below(&r, sizeof types / sizeof types[0])];
        uint32_t C = 1 + (uint32_t)below(&r, 4), A = 1 + (uint32_t)below(&r, C);
        size_t sz = gpuhist_dtype_size(t), pb = sz * C;
        uint64_t pixels = ci % 5 == 0 ? below(&r, 40) : 1000 + below(&r, 300000);
        unsigned char *data = malloc((size_t)(pixels * pb) + 1);
        for (uint64_t i = 0; i < pixels * C; ++i) {
            double v = unit(&r) * 1.2 - 0.1;
            if (below(&r, 50) == 0)
                v = below(&r, 2) ? NAN : -INFINITY;
            put(t, data + i * sz, v, next(&r) % 300);
        }
        gpuhist_bin_spec spec;
        double edges[9] = {-0.05, 0.0, 0.1, 0.25, 0.3, 0.5, 0.75, 0.9, 1.0};
        int kind = (int)below(&r, 3);
        int is_int = t != GPUHIST_F32 && t != GPUHIST_F64;
        if (kind == 2 && is_int)
            spec = gpuhist_bins_integer(1 + (uint32_t)below(&r, 400), (int64_t)below(&r, 20) - 10);
        else if (kind == 1)
            spec = gpuhist_bins_edges(8, edges);
        else
            spec = gpuhist_bins_even(1 + (uint32_t)below(&r, ci % 7 == 0 ? 70000 : 300),
                                     is_int ? -3.0 : 0.0, is_int ? 250.0 : 1.0);
        if (is_int && kind == 1) {
            for (int i = 0; i < 9; ++i)
                edges[i] = edges[i] * 300.0;
        }
        spec.outliers = below(&r, 2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
        spec.last_edge_inclusive = (int)below(&r, 2);

        gpuhist_samples s = gpuhist_samples_1d(data, t, pixels);
        s.channels = C;
        s.active_channels = A;
        s.location = GPUHIST_MEMORY_HOST;
        size_t nc = (size_t)spec.bins * A;
        uint64_t *c1 = malloc(nc * 8), *c2 = malloc(nc * 8), *c3 = malloc(nc * 8);
        double *e1 = malloc(((size_t)spec.bins + 1) * 8), *e2 = malloc(((size_t)spec.bins + 1) * 8),
               *e3 = malloc(((size_t)spec.bins + 1) * 8);
        check_context("case %d: %s bins=%u kind=%d C=%u A=%u pixels=%llu", ci,
                      gpuhist_dtype_name(t), spec.bins, kind, C, A, (unsigned long long)pixels);
        gpuhist_result one = gpuhist_result_host(c1), ref = gpuhist_result_host(c3);
        one.edges = e1;
        ref.edges = e3;
        if (CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &spec, &one), GPUHIST_OK) &&
            CHECK_EQ_INT(gpuhist_histogram(gold, &s, &spec, &ref), GPUHIST_OK) &&
            same(&one, c1, e1, &ref, c3, e3, "one call vs cpu-reference")) {
            for (int mode = 0; mode < 2; ++mode) {
                /* tiny chunks (a few pixels; on big inputs ~1% of them, as every chunk
                 * costs a strategy call), up to a third, up to everything */
                uint64_t tiny = pixels <= 5000 ? 1 + below(&r, 7) : 1 + pixels / 100;
                uint64_t maxes[3] = {tiny, 1 + below(&r, pixels / 3 + 1), pixels + 1};
                for (int m = 0; m < 3; ++m) {
                    gpuhist_result sr = gpuhist_result_host(c2);
                    sr.edges = e2;
                    gpuhist_status rc = stream_run(ctx, &r, &s, &spec, data, pixels, pb, mode,
                                                   maxes[m], &sr);
                    if (!CHECK_MSG(rc == GPUHIST_OK, "stream (mode %d, chunks <= %llu): %s: %s",
                                   mode, (unsigned long long)maxes[m],
                                   gpuhist_status_string(rc), gpuhist_last_error(ctx)))
                        continue;
                    /* (the strategy may differ: a stream chooses as for a large input) */
                    CHECK(sr.strategy != NULL);
                    same(&sr, c2, e2, &one, c1, e1, mode ? "lent buffers" : "feed");
                }
            }
        }
        free(c1), free(c2), free(c3), free(e1), free(e2), free(e3), free(data);
    }

    check_context("contract");
    {
        float x[4] = {0.1f, 0.2f, 0.3f, 0.9f};
        gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, 4);
        gpuhist_bin_spec au = gpuhist_bins_auto(4), ev = gpuhist_bins_even(4, 0.0, 1.0);
        gpuhist_stream *st = NULL;
        uint64_t c[4];
        CHECK_EQ_INT(gpuhist_stream_begin(ctx, &s, &au, GPUHIST_MEMORY_HOST, &st),
                     GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "range");
        CHECK(st == NULL);
        /* An open stream holds the context. */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &s, &ev, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
            gpuhist_result r1 = gpuhist_result_host(c);
            CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &ev, &r1), GPUHIST_ERROR_BUSY);
            CHECK_EQ_INT(gpuhist_stream_feed(st, x, 4), GPUHIST_OK);
            gpuhist_stream_abort(st);
            /* usable again after abort, and the aborted counts are gone */
            CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &ev, &r1), GPUHIST_OK);
            CHECK_EQ_U64(c[0] + c[1] + c[2] + c[3], 4);
        }
        /* An empty stream. */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &s, &ev, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
            gpuhist_result r2 = gpuhist_result_host(c);
            memset(c, 0xFF, sizeof c);
            CHECK_EQ_INT(gpuhist_stream_finish(st, &r2), GPUHIST_OK);
            CHECK_EQ_U64(c[0] + c[1] + c[2] + c[3], 0);
            CHECK_EQ_U64(r2.total[0], 0);
        }
        /* A bad chunk fails the stream; finish reports it and frees the stream. */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &s, &ev, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
            CHECK_EQ_INT(gpuhist_stream_feed(st, NULL, 3), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_EQ_INT(gpuhist_stream_feed(st, x, 4), GPUHIST_ERROR_INVALID_ARGUMENT);
            gpuhist_result r3 = gpuhist_result_host(c);
            CHECK_EQ_INT(gpuhist_stream_finish(st, &r3), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_last_error(ctx), "NULL");
        }
        /* More buffers than the stream lends. */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &s, &ev, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
            void *b[5];
            int k = 0;
            while (k < 5 && gpuhist_stream_buffer(st, 64, &b[k]) == GPUHIST_OK)
                ++k;
            CHECK_EQ_INT(k, 4);
            CHECK_CONTAINS(gpuhist_stream_error(st), "lent");
            gpuhist_stream_abort(st);
        }
        gpuhist_result r4 = gpuhist_result_host(c);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &ev, &r4), GPUHIST_OK);
    }
    gpuhist_destroy(ctx);
    gpuhist_destroy(gold);
    return check_exit();
}
