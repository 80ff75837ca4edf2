/*
 * test_histogramdd_parts.c - weighted N-D histograms counted in parts: random points (NaN, out
 * of range and on the last edge among them) with adversarial weights (+-1e16 beside 1, tiny,
 * huge, f32 and f64) cut into random parts, each counted with result.weight_state, the states
 * merged with gpuhist_weight_state_add in a random order and rounded once with
 * gpuhist_weight_state_sums: counts, tallies, sums and squares equal one call on all the points
 * bit for bit, and so does the N-D stream's state; a state without weights is refused by name.
 * The first pass of a streamed auto range: gpuhist_points_minmax per part and axis (1-8 axes,
 * interleaved and in columns, NaN, infinities and -0.0 among the coordinates), combined, gives
 * each axis's finite min and max, and gpuhist_bins_from_minmax of them the edges of one auto-range
 * call on all the points; an axis past the points' dims is refused.
 * Weights are summed on the CPU backend only: other backends pass without running it.
 *
 * usage: test_histogramdd_parts cpu|opencl|cuda. Seed: GPUHIST_TEST_SEED (fixed by default,
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

/* One histogramdd of points [first, first + n) of an interleaved f64 array, with weights. */
static gpuhist_status part_call(gpuhist_ctx *ctx, const double *pts, const void *w,
                                gpuhist_dtype wd, uint32_t dims, uint64_t first, uint64_t n,
                                const gpuhist_bin_spec *axes, uint64_t *counts, double *sums,
                                double *squares, int64_t *state, gpuhist_nd_result *r)
{
    gpuhist_points p = gpuhist_points_interleaved(pts + first * dims, GPUHIST_F64, dims, n);
    p.weights = (const unsigned char *)w + first * gpuhist_dtype_size(wd);
    p.weight_dtype = wd;
    memset(r, 0, sizeof *r);
    r->counts = counts;
    r->sums = sums;
    r->sums_squared = squares;
    r->weight_state = state;
    return gpuhist_histogramdd(ctx, &p, axes, r);
}

/* An N-D histogram counted in random parts (some empty) and merged by adding the parts' counts
 * and their result.weight_state in a random order, then rounding once with
 * gpuhist_weight_state_sums: the sums (and squares) equal one call over all the points bit for
 * bit, and so do the tallies; adversarial weights (+-1e16 beside 1, tiny, f32), whose
 * per-part rounded sums would not add up to the whole's. The N-D stream's state too. */
static void parts(gpuhist_ctx *ctx, rng_t *rng)
{
    check_context("parts");
    for (int round = 0; round < 24; ++round) {
        const uint32_t dims = 1 + (uint32_t)below(rng, 3);
        gpuhist_bin_spec axes[3];
        uint64_t B = 1;
        for (uint32_t a = 0; a < dims; ++a) {
            axes[a] = gpuhist_bins_even(1 + (uint32_t)below(rng, 6), 0.0, 1.0);
            axes[a].last_edge_inclusive = 1;
            B *= axes[a].bins;
        }
        const uint64_t n = 1 + below(rng, 3000);
        const gpuhist_dtype wd = below(rng, 2) ? GPUHIST_F64 : GPUHIST_F32;
        const int squares = (int)below(rng, 2);
        double *pts = malloc(n * dims * sizeof *pts);
        void *w = malloc(n * 8);
        for (uint64_t i = 0; i < n * dims; ++i) {
            uint64_t k = below(rng, 40);
            pts[i] = k == 0 ? NAN : k == 1 ? -0.5 : k == 2 ? 1.0 : unit(rng); /* nan, out, edge */
        }
        static const double big[] = {1e16, -1e16, 1.0, -1.0, 3e-300, 0.1, 1e300, -1e300};
        for (uint64_t i = 0; i < n; ++i) {
            double v = below(rng, 2) ? big[below(rng, 8)] : (unit(rng) - 0.5) * 1e3;
            if (wd == GPUHIST_F32) {
                float f = (float)(below(rng, 2) ? v : v * 1e-20);
                memcpy((unsigned char *)w + i * 4, &f, 4);
            } else {
                memcpy((unsigned char *)w + i * 8, &v, 8);
            }
        }
        const size_t words = gpuhist_weight_state_words((uint32_t)B, 1, wd, squares);
        uint64_t *c_all = malloc(B * 8), *c_part = malloc(B * 8), *c_sum = calloc(B, 8);
        double *s_all = malloc(B * 8), *q_all = malloc(B * 8), *s_part = malloc(B * 8);
        double *q_part = malloc(B * 8), *s_merged = malloc(B * 8), *q_merged = malloc(B * 8);
        int64_t *merged = malloc(words * 8), *state = malloc(words * 8);
        gpuhist_nd_result r, rp;
        CHECK_EQ_INT(part_call(ctx, pts, w, wd, dims, 0, n, axes, c_all, s_all,
                               squares ? q_all : NULL, NULL, &r),
                     GPUHIST_OK);
        /* random cut points; parts merged in a random order (each part's state added to the
         * merged one, the first copied) */
        uint64_t cuts[8];
        const int k = 1 + (int)below(rng, 7);
        cuts[0] = 0;
        cuts[k] = n;
        for (int i = 1; i < k; ++i)
            cuts[i] = below(rng, n + 1);
        for (int i = 1; i < k; ++i) /* sort (tiny) */
            for (int j = i + 1; j < k; ++j)
                if (cuts[j] < cuts[i]) {
                    uint64_t t = cuts[i];
                    cuts[i] = cuts[j];
                    cuts[j] = t;
                }
        int order[8];
        for (int i = 0; i < k; ++i)
            order[i] = i;
        for (int i = k - 1; i > 0; --i) {
            int j = (int)below(rng, (uint64_t)i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        uint64_t out = 0, nan = 0, total = 0;
        for (int i = 0; i < k; ++i) {
            const int at = order[i];
            gpuhist_status st =
                part_call(ctx, pts, w, wd, dims, cuts[at], cuts[at + 1] - cuts[at], axes, c_part,
                          s_part, squares ? q_part : NULL, i ? state : merged, &rp);
            if (!CHECK_MSG(st == GPUHIST_OK, "part %d: %s", at, gpuhist_last_error(ctx)))
                break;
            for (uint64_t b = 0; b < B; ++b)
                c_sum[b] += c_part[b];
            out += rp.out;
            nan += rp.nan;
            total += rp.total;
            if (i)
                CHECK_EQ_INT(gpuhist_weight_state_add(merged, state, (uint32_t)B, 1, wd, squares),
                             GPUHIST_OK);
        }
        CHECK_EQ_INT(gpuhist_weight_state_sums(merged, (uint32_t)B, 1, wd, squares,
                                               GPUHIST_OUTLIERS_DROP, s_merged,
                                               squares ? q_merged : NULL),
                     GPUHIST_OK);
        CHECK_MSG(memcmp(c_sum, c_all, B * 8) == 0, "round %d: merged counts differ", round);
        CHECK_MSG(memcmp(s_merged, s_all, B * 8) == 0,
                  "round %d (%u dims, %llu bins, %d parts, %s weights): merged sums differ",
                  round, dims, (unsigned long long)B, k, gpuhist_dtype_name(wd));
        if (squares)
            CHECK_MSG(memcmp(q_merged, q_all, B * 8) == 0, "round %d: merged squares differ",
                      round);
        CHECK_EQ_U64(out, r.out);
        CHECK_EQ_U64(nan, r.nan);
        CHECK_EQ_U64(total, r.total);

        /* the N-D stream's state, rounded, is the one-shot call's sums too */
        gpuhist_points lay = gpuhist_points_interleaved(NULL, GPUHIST_F64, dims, 0);
        lay.weights = w;
        lay.weight_dtype = wd;
        gpuhist_nd_stream *ns = NULL;
        if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &lay, axes, &ns), GPUHIST_OK)) {
            for (int i = 0; i < k; ++i) {
                gpuhist_points p = lay;
                p.data = pts + cuts[i] * dims;
                p.count = cuts[i + 1] - cuts[i];
                p.weights = (const unsigned char *)w + cuts[i] * gpuhist_dtype_size(wd);
                CHECK_EQ_INT(gpuhist_nd_stream_feed(ns, &p), GPUHIST_OK);
            }
            memset(&rp, 0, sizeof rp);
            rp.counts = c_part;
            rp.sums = s_part;
            rp.sums_squared = squares ? q_part : NULL;
            rp.weight_state = state;
            CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &rp), GPUHIST_OK);
            CHECK_EQ_INT(gpuhist_weight_state_sums(state, (uint32_t)B, 1, wd, squares,
                                                   GPUHIST_OUTLIERS_DROP, s_merged,
                                                   squares ? q_merged : NULL),
                         GPUHIST_OK);
            CHECK_MSG(memcmp(s_merged, s_all, B * 8) == 0 && memcmp(s_part, s_all, B * 8) == 0,
                      "round %d: the stream's state or sums differ", round);
        }
        free(pts);
        free(w);
        free(c_all);
        free(c_part);
        free(c_sum);
        free(s_all);
        free(q_all);
        free(s_part);
        free(q_part);
        free(s_merged);
        free(q_merged);
        free(merged);
        free(state);
    }
    /* a state without weights is refused by name, in both calls */
    double pts[4] = {0.1, 0.2, 0.3, 0.4};
    uint64_t counts[4];
    int64_t st4[64];
    gpuhist_bin_spec ax[2] = {gpuhist_bins_even(2, 0.0, 1.0), gpuhist_bins_even(2, 0.0, 1.0)};
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F64, 2, 2);
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    r.weight_state = st4;
    CHECK_EQ_INT(gpuhist_histogramdd(ctx, &p, ax, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
    gpuhist_nd_stream *ns = NULL;
    p.data = NULL;
    p.count = 0;
    if (CHECK_EQ_INT(gpuhist_nd_stream_begin(ctx, &p, ax, &ns), GPUHIST_OK)) {
        CHECK_EQ_INT(gpuhist_nd_stream_finish(ns, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "result.weight_state");
    }
}

/* Per-part min/max of each axis, combined, against a loop and against one auto-range call. */
static void minmax_parts(gpuhist_ctx *ctx, rng_t *rng)
{
    check_context("minmax_parts");
    static const double odd[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e300, -1e300};
    for (int round = 0; round < 16; ++round) {
        const uint32_t dims = 1 + (uint32_t)below(rng, GPUHIST_MAX_DIMS);
        const uint64_t n = 1 + below(rng, 5000);
        const int columns = (int)below(rng, 2);
        double *pts = malloc(n * dims * sizeof *pts);
        double *cols = malloc(n * dims * sizeof *cols);
        if (!CHECK(pts && cols)) {
            free(pts);
            free(cols);
            return;
        }
        for (uint64_t i = 0; i < n * dims; ++i)
            pts[i] = below(rng, 50) ? unit(rng) * 8.0 - 3.0 : odd[below(rng, 7)];
        if (round == 0) /* an axis with nothing finite */
            for (uint64_t i = 0; i < n; ++i)
                pts[i * dims] = NAN;
        for (uint32_t a = 0; a < dims; ++a)
            for (uint64_t i = 0; i < n; ++i)
                cols[a * n + i] = pts[i * dims + a];
        double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
        int found[GPUHIST_MAX_DIMS] = {0};
        for (uint64_t first = 0; first < n;) {
            uint64_t k = 1 + below(rng, n - first);
            gpuhist_points p = gpuhist_points_interleaved(pts + first * dims, GPUHIST_F64, dims, k);
            if (columns) {
                p.data = NULL;
                for (uint32_t a = 0; a < dims; ++a)
                    p.columns[a] = cols + a * n + first;
            }
            for (uint32_t a = 0; a < dims; ++a) {
                double l, h;
                int f;
                if (!CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, a, &l, &h, &f), GPUHIST_OK))
                    break;
                if (f && (!found[a] || l < lo[a]))
                    lo[a] = l;
                if (f && (!found[a] || h > hi[a]))
                    hi[a] = h;
                found[a] |= f;
            }
            first += k;
        }
        gpuhist_bin_spec axes[GPUHIST_MAX_DIMS], resolved[GPUHIST_MAX_DIMS];
        for (uint32_t a = 0; a < dims; ++a) {
            int f = 0;
            double l = 0.0, h = 0.0;
            for (uint64_t i = 0; i < n; ++i) {
                double v = pts[i * dims + a];
                if (!isfinite(v))
                    continue;
                v = v == 0.0 ? 0.0 : v;
                l = f && l <= v ? l : v;
                h = f && h >= v ? h : v;
                f = 1;
            }
            CHECK_EQ_INT(found[a], f);
            if (f)
                CHECK_MSG(lo[a] == l && hi[a] == h && !signbit(lo[a] == 0.0 ? lo[a] : 1.0),
                          "round %d axis %u: min/max %g %g, want %g %g", round, a, lo[a],
                          hi[a], l, h);
            axes[a] = gpuhist_bins_auto(1 + (uint32_t)below(rng, 5));
            resolved[a] = gpuhist_bins_from_minmax(axes[a].bins, lo[a], hi[a], found[a]);
        }
        /* one auto-range call on all the points: the same edges */
        gpuhist_points all = gpuhist_points_interleaved(pts, GPUHIST_F64, dims, n);
        uint64_t B = 1;
        for (uint32_t a = 0; a < dims; ++a)
            B *= axes[a].bins;
        uint64_t *counts = malloc(B * sizeof *counts);
        gpuhist_nd_result r;
        memset(&r, 0, sizeof r);
        r.counts = counts;
        double *edges[GPUHIST_MAX_DIMS] = {0};
        int ok = counts != NULL;
        for (uint32_t a = 0; a < dims && ok; ++a)
            ok = (r.edges[a] = edges[a] = malloc((axes[a].bins + 1u) * sizeof(double))) != NULL;
        if (CHECK(ok) && CHECK_EQ_INT(gpuhist_histogramdd(ctx, &all, axes, &r), GPUHIST_OK)) {
            for (uint32_t a = 0; a < dims; ++a) {
                double want[6];
                CHECK_EQ_INT(gpuhist_compute_edges(&resolved[a], GPUHIST_F64, want), GPUHIST_OK);
                CHECK_MSG(memcmp(want, edges[a], (axes[a].bins + 1u) * sizeof(double)) == 0,
                          "round %d axis %u: edges of the combined min/max differ from the "
                          "call's", round, a);
            }
        }
        double l, h;
        int f;
        CHECK_EQ_INT(gpuhist_points_minmax(ctx, &all, dims, &l, &h, &f),
                     GPUHIST_ERROR_INVALID_ARGUMENT);
        for (uint32_t a = 0; a < dims; ++a)
            free(edges[a]);
        free(counts);
        free(pts);
        free(cols);
    }
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    uint64_t seed;
    gpuhist_ctx *ctx = NULL;
    int rc = nd_test_start(argc, argv, "test_histogramdd_parts", &backend, &seed, &ctx);
    if (rc >= 0)
        return rc;
    printf("test_histogramdd_parts %s: seed %llu (GPUHIST_TEST_SEED)\n",
           gpuhist_backend_name(backend), (unsigned long long)seed);
    rng_t rng = {seed};
    parts(ctx, &rng);
    minmax_parts(ctx, &rng);
    gpuhist_destroy(ctx);
    return check_exit();
}
