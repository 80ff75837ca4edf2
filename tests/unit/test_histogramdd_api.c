/*
 * test_histogramdd_api.c - gpuhist_histogramdd() and the N-D streams on fixed cases: every
 * refusal of a bad request (each message naming its field: points, axes[a].<field>, result,
 * weights, a product of bins beyond 2^31 or 2^64), BUSY while a stream holds the context, the
 * streams' own refusals (auto range at begin, a chunk of another shape or weighting), an empty
 * stream; hand-computed counts and tallies (NaN before out, last edge inclusive per axis, auto
 * range per axis); a 4096 x 4096 f32 histogram against counts computed here (its edges k/4096
 * are exact, so the bin of x is floor(4096 x)).
 *
 * usage: test_histogramdd_api cpu|opencl|cuda. Seed: GPUHIST_TEST_SEED (fixed by default,
 * printed; "random" for a new one). Exit 77 without a device.
 */
#include "gpuhist.h"
#include "check.h"
#include "nd_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void expect_error(gpuhist_ctx *ctx, const gpuhist_points *p, const gpuhist_bin_spec *axes,
                         gpuhist_nd_result *r, gpuhist_status want, const char *needle)
{
    gpuhist_status st = gpuhist_histogramdd(ctx, p, axes, r);
    CHECK_EQ_INT(st, want);
    CHECK_CONTAINS(gpuhist_last_error(ctx), needle);
}

/* Replace the first `from` in s (of `size` bytes) by `to`. */
static void replace_once(char *s, size_t size, const char *from, const char *to)
{
    char *at = strstr(s, from);
    if (!at)
        return;
    char tail[600];
    snprintf(tail, sizeof tail, "%s", at + strlen(from));
    snprintf(at, size - (size_t)(at - s), "%s%s", to, tail);
}

/* Each axis is checked by the 1-D checks (plan.c's gpuhist_check_spec): for bad specs of every
 * kind, the N-D message of axis 1 is the 1-D call's message with the axis's field names
 * ("axes[1].range" for "range", "points" for "samples", ...). */
static void same_checks_as_1d(gpuhist_ctx *ctx)
{
    check_context("axis checks = 1-D checks");
    float pts[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    uint64_t counts[64];
    static const double dup[3] = {0.0, 0.5, 0.5}, inf_e[3] = {0.0, INFINITY, 2.0};
    struct {
        gpuhist_bin_spec b;
        const char *d1, *nd; /* the field as a 1-D call / axis 1 names it */
    } cases[] = {
        {gpuhist_bins_even(0, 0.0, 1.0), "bins:", "axes[1].bins:"},
        {gpuhist_bins_even(2, 1.0, 1.0), "range:", "axes[1].range:"},
        {gpuhist_bins_even(2, -INFINITY, 1.0), "range:", "axes[1].range:"},
        {gpuhist_bins_even(2, 0.0, NAN), "range:", "axes[1].range:"},
        {gpuhist_bins_even(2, -1.7e308, 1.7e308), "range:", "axes[1].range:"},
        {gpuhist_bins_even(2, 0.0, 1e300), "range:", "axes[1].range:"},
        {gpuhist_bins_even(2, -1e300, 0.0), "range:", "axes[1].range:"},
        {gpuhist_bins_edges(2, dup), "edges:", "axes[1].edges:"},
        {gpuhist_bins_edges(2, inf_e), "edges:", "axes[1].edges:"},
        {gpuhist_bins_edges(2, NULL), "edges:", "axes[1].edges:"},
        {gpuhist_bins_integer(2, 0), "bins.kind:", "axes[1].kind:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        check_context("axis checks = 1-D checks, case %zu", i);
        char one[512];
        gpuhist_samples s = gpuhist_samples_1d(pts, GPUHIST_F32, 4);
        gpuhist_result r1 = gpuhist_result_host(counts);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &cases[i].b, &r1), GPUHIST_ERROR_INVALID_ARGUMENT);
        snprintf(one, sizeof one, "%s", gpuhist_last_error(ctx));
        gpuhist_bin_spec ax[2] = {gpuhist_bins_even(2, 0.0, 1.0), cases[i].b};
        gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F32, 2, 2);
        gpuhist_nd_result r;
        memset(&r, 0, sizeof r);
        r.counts = counts;
        CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        /* the 1-D message with the axis's names */
        char want[600];
        const size_t k = strlen(cases[i].d1);
        if (!CHECK_MSG(strncmp(one, cases[i].d1, k) == 0, "1-D message: %s", one))
            continue;
        snprintf(want, sizeof want, "%s%s", cases[i].nd, one + k);
        replace_once(want, sizeof want, "samples.dtype", "points.dtype");
        replace_once(want, sizeof want, "integer sample type", "integer coordinate type");
        replace_once(want, sizeof want, "f32 samples", "f32 points");
        CHECK_EQ_STR(gpuhist_last_error(ctx), want);
    }
}

static void refusals(gpuhist_ctx *ctx)
{
    check_context("refusals");
    float pts[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 0.0f, 0.5f, 0.5f};
    uint64_t counts[64];
    double sums[64];
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    gpuhist_bin_spec ax[GPUHIST_MAX_DIMS + 1];
    for (int a = 0; a <= GPUHIST_MAX_DIMS; ++a)
        ax[a] = gpuhist_bins_even(2, 0.0, 1.0);
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F32, 2, 6);

    CHECK_EQ_INT(gpuhist_histogramdd(NULL, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    expect_error(ctx, NULL, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points");
    expect_error(ctx, &p, NULL, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes");
    expect_error(ctx, &p, ax, NULL, GPUHIST_ERROR_INVALID_ARGUMENT, "result");
    r.counts = NULL;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "result.counts");
    r.counts = counts;
    p.dims = 0;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.dims");
    p.dims = 9;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.dims");
    p.dims = 2;
    p.dtype = (gpuhist_dtype)99;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.dtype");
    p.dtype = GPUHIST_F32;
    p.data = NULL;
    p.columns[0] = pts;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.columns[1]");
    p.data = pts;
    p.location = GPUHIST_MEMORY_DEVICE;
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CUDA) /* maps device points: host
                                                                 memory declared DEVICE */
        expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.data");
    else
        expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_UNSUPPORTED, "points.location");
    p.location = GPUHIST_MEMORY_HOST;

    ax[1].bins = 0;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].bins");
    ax[1] = gpuhist_bins_even(2, 1.0, 1.0);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].range");
    ax[1] = gpuhist_bins_even(2, 0.0, 1e300);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "float32");
    ax[1] = gpuhist_bins_integer(2, 0);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].kind");
    double bad_edges[3] = {0.0, 0.5, 0.5};
    ax[1] = gpuhist_bins_edges(2, bad_edges);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].edges");
    ax[1] = gpuhist_bins_edges(2, NULL);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].edges");
    ax[1] = gpuhist_bins_even(2, 0.0, 1.0);
    ax[1].outliers = GPUHIST_OUTLIERS_CLAMP;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "axes[1].outliers");
    ax[1] = gpuhist_bins_even(3, 0.0, 1e-45); /* float32 edges that do not increase */
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "too many bins");
    ax[0] = gpuhist_bins_even(65536, 0.0, 1.0);
    ax[1] = gpuhist_bins_even(65536, 0.0, 1.0);
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "65536 x 65536 = 4294967296");
    p.dims = 8;
    for (int a = 0; a < 8; ++a)
        ax[a] = gpuhist_bins_even(1u << 31, 0.0, 1.0);
    p.count = 1;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "more than 2^64");
    p.dims = 2;
    p.count = 6;
    for (int a = 0; a <= GPUHIST_MAX_DIMS; ++a)
        ax[a] = gpuhist_bins_even(2, 0.0, 1.0);

    float w[6] = {1, 1, 1, 1, 1, 1};
    p.weights = w;
    p.weight_dtype = GPUHIST_I32;
    r.sums = sums;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "points.weight_dtype");
    p.weight_dtype = GPUHIST_F32;
    r.sums = NULL;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "result.sums");
    p.weights = NULL;
    r.sums = sums;
    expect_error(ctx, &p, ax, &r, GPUHIST_ERROR_INVALID_ARGUMENT, "result.sums");
    r.sums = NULL;

    /* a context held by an open stream answers BUSY and keeps its last message */
    gpuhist_samples lay = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
    gpuhist_bin_spec one_bin = gpuhist_bins_even(1, 0.0, 1.0);
    gpuhist_stream *st = NULL;
    if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, &one_bin, GPUHIST_MEMORY_HOST, &st),
                     GPUHIST_OK)) {
        char before[512];
        snprintf(before, sizeof before, "%s", gpuhist_last_error(ctx));
        CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_BUSY);
        CHECK_EQ_STR(gpuhist_last_error(ctx), before);
        gpuhist_stream_abort(st);
    }

    /* streams: auto range refused at begin; a chunk of another shape or weighting fails the
     * stream, which finish then reports; the context is held while open */
    {
        gpuhist_points lay = gpuhist_points_interleaved(NULL, GPUHIST_F32, 2, 0);
        gpuhist_bin_spec au[2] = {gpuhist_bins_auto(2), gpuhist_bins_even(2, 0.0, 1.0)};
        gpuhist_nd_stream *ns = NULL;
        CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, au, &ns), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "axes[0].range: a streamed histogram");
        CHECK(ns == NULL);
        if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, ax, &ns), GPUHIST_OK)) {
            CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_BUSY);
            gpuhist_points bad3 = gpuhist_points_interleaved(pts, GPUHIST_F32, 3, 2);
            CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &bad3), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_nd_stream_error(ns), "3 f32 coordinates per point");
            CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &p), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_last_error(ctx), "3 f32 coordinates per point");
        }
        if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, ax, &ns), GPUHIST_OK)) {
            gpuhist_points wp = p;
            wp.weights = pts;
            wp.weight_dtype = GPUHIST_F32;
            CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &wp), GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_nd_stream_error(ns), "points.weights");
            gpuhist_nd_stream_abort(ns);
        }
        /* an empty stream: zero counts */
        if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, ax, &ns), GPUHIST_OK) &&
            CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_OK)) {
            for (int j = 0; j < 4; ++j)
                CHECK_EQ_U64(counts[j], 0);
            CHECK_EQ_U64(r.total, 0);
        }
    }

    /* the context still works, and a small known answer */
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_OK);
    /* points (0.1,0.2) (0.3,0.4) (0.5,0.6) (0.7,0.8) (0.9,0) (0.5,0.5) on [0,1) x [0,1) */
    uint64_t want[4] = {2, 0, 1, 3};
    for (int j = 0; j < 4; ++j)
        CHECK_EQ_U64(counts[j], want[j]);
    CHECK_EQ_U64(r.out, 0);
    CHECK_EQ_U64(r.total, 6);
}

/* NaN wins over out; every axis must be inside; last edge inclusive per axis. */
static void tallies(gpuhist_ctx *ctx)
{
    check_context("tallies and NaN precedence");
    double pts[][3] = {{0.0, 0.0, 0.0}, {1.0, 0.0, 0.0},  {NAN, 5.0, 0.0},  {5.0, NAN, 0.0},
                       {0.5, 0.5, 1.0}, {0.5, 0.5, 1.5},  {-1.0, 0.5, 0.5}, {0.5, 2.0, NAN},
                       {0.99, 0.99, 0.99}, {INFINITY, 0.5, 0.5}};
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F64, 3, 10);
    gpuhist_bin_spec ax[3] = {gpuhist_bins_even(2, 0.0, 1.0), gpuhist_bins_even(2, 0.0, 1.0),
                              gpuhist_bins_even(2, 0.0, 1.0)};
    ax[2].last_edge_inclusive = 1;
    uint64_t counts[8];
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    if (!CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_OK))
        return;
    /* (0,0,0) -> bin 0; (1,0,0): axis 0 not inclusive -> out; NaN rows -> nan (3);
     * (0.5,0.5,1.0) -> axis 2 inclusive -> [1][1][1] = 7; (0.5,0.5,1.5) out; (-1,...) out;
     * (0.99...) -> 7; inf -> out */
    uint64_t want[8] = {1, 0, 0, 0, 0, 0, 0, 2};
    for (int j = 0; j < 8; ++j)
        CHECK_EQ_U64(counts[j], want[j]);
    CHECK_EQ_U64(r.nan, 3);
    CHECK_EQ_U64(r.out, 4);
    CHECK_EQ_U64(r.total, 10);
    CHECK_EQ_INT(r.last_edge_inclusive[0], 0);
    CHECK_EQ_INT(r.last_edge_inclusive[2], 1);

    /* auto range per axis: each axis its own finite min and max, last edge inclusive */
    gpuhist_bin_spec au[3] = {gpuhist_bins_auto(2), gpuhist_bins_auto(2), gpuhist_bins_auto(2)};
    if (!CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, au, &r), GPUHIST_OK))
        return;
    CHECK_EQ_F64_BITS(r.lower[0], -1.0);
    CHECK_EQ_F64_BITS(r.upper[0], 5.0);
    CHECK_EQ_F64_BITS(r.lower[1], 0.0);
    CHECK_EQ_F64_BITS(r.upper[1], 5.0);
    CHECK_EQ_F64_BITS(r.lower[2], 0.0);
    CHECK_EQ_F64_BITS(r.upper[2], 1.5);
    CHECK_EQ_U64(r.nan, 3);
    CHECK_EQ_U64(r.out, 1); /* only the infinity */
}

/* A 4096 x 4096 f32 histogram (16M joint bins). */
static void large(gpuhist_ctx *ctx, rng_t *rng)
{
    check_context("4096 x 4096");
    const uint64_t n = 300000, total = 4096u * 4096u;
    float *pts = malloc(n * 2 * sizeof *pts);
    uint64_t *counts = malloc(total * sizeof *counts);
    uint64_t *ref = calloc(total, sizeof *ref);
    for (uint64_t i = 0; i < n; ++i) {
        pts[2 * i] = (float)unit(rng);
        pts[2 * i + 1] = (float)(unit(rng) * unit(rng));
        uint32_t a = (uint32_t)(pts[2 * i] * 4096.0f), b = (uint32_t)(pts[2 * i + 1] * 4096.0f);
        /* 4096 bins over [0, 1): the float edges k/4096 are exact, so the bin is floor(x*4096) */
        ++ref[(uint64_t)a * 4096u + b];
    }
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F32, 2, n);
    gpuhist_bin_spec ax[2] = {gpuhist_bins_even(4096, 0.0, 1.0), gpuhist_bins_even(4096, 0.0, 1.0)};
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    double t = (double)clock();
    if (CHECK_MSG(gpuhist_histogramdd(ctx, &p, ax, &r) == GPUHIST_OK, "%s",
                  gpuhist_last_error(ctx))) {
        CHECK_MSG(memcmp(counts, ref, total * 8) == 0, "4096 x 4096 counts differ");
        CHECK_EQ_U64(r.bins_total, total);
        printf("4096 x 4096: %.2f s of CPU time, strategy %s\n",
               ((double)clock() - t) / CLOCKS_PER_SEC, r.strategy);
    }
    free(pts);
    free(counts);
    free(ref);
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    uint64_t seed;
    gpuhist_ctx *ctx = NULL;
    int rc = nd_test_start(argc, argv, "test_histogramdd_api", &backend, &seed, &ctx);
    if (rc >= 0)
        return rc;
    printf("test_histogramdd_api %s: seed %llu (GPUHIST_TEST_SEED)\n",
           gpuhist_backend_name(backend), (unsigned long long)seed);
    rng_t rng = {seed};
    refusals(ctx);
    same_checks_as_1d(ctx);
    tallies(ctx);
    large(ctx, &rng);
    gpuhist_destroy(ctx);
    return check_exit();
}
