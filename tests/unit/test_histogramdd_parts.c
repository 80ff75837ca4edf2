/*
 * test_histogramdd_parts.c - weighted N-D histograms counted in parts: random points (NaN, out
 * of range and on the last edge among them) with adversarial weights (+-1e16 beside 1, tiny,
 * huge, f32 and f64) cut into random parts, each counted with result.weight_state, the states
 * merged with gpuhist_weight_state_add in a random order and rounded once with
 * gpuhist_weight_state_sums: counts, tallies, sums and squares equal one call on all the points
 * bit for bit, and so does the N-D stream's state; a state without weights is refused by name.
 * The first pass of a streamed auto range: gpuhist_points_minmax per part for a mask of axes
 * (every subset of 1-8 axes, interleaved and in columns, f64 and f32, NaN, infinities and -0.0
 * among the coordinates), combined, gives each asked axis's finite min and max of a plain loop
 * and leaves the others alone, and gpuhist_bins_from_minmax of them the edges of one auto-range
 * call on all the points; the same on 1-8 CPU threads over 2M points (CPU backend); an empty
 * mask, a mask past the points' dims, NULL arrays, points or columns are refused by name with
 * nothing written.
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

/* Sentinels of the entries gpuhist_points_minmax must leave alone. */
#define UNTOUCHED_MIN (-777.0)
#define UNTOUCHED_MAX 777.0
#define UNTOUCHED_FOUND (-5)

/* The finite min and max of axis a of interleaved points, by a plain loop (-0.0 as 0.0). */
static int loop_minmax(const double *pts, uint32_t dims, uint64_t n, uint32_t a, double *lo,
                       double *hi)
{
    int f = 0;
    double l = 0.0, h = 1.0;
    for (uint64_t i = 0; i < n; ++i) {
        double v = pts[i * dims + a];
        if (!isfinite(v))
            continue;
        v = v == 0.0 ? 0.0 : v;
        l = f && l <= v ? l : v;
        h = f && h >= v ? h : v;
        f = 1;
    }
    *lo = l, *hi = h;
    return f;
}

/* The points [first, first + k) of the round as gpuhist_points of `dtype` (interleaved, or one
 * column per axis), from the f64 (pts, cols) or f32 (pts32, cols32) copies. */
static gpuhist_points part_points(gpuhist_dtype dtype, const double *pts, const double *cols,
                                  const float *pts32, const float *cols32, uint32_t dims,
                                  uint64_t n, uint64_t first, uint64_t k, int columns)
{
    const int f32 = dtype == GPUHIST_F32;
    gpuhist_points p = gpuhist_points_interleaved(
        f32 ? (const void *)(pts32 + first * dims) : (const void *)(pts + first * dims), dtype,
        dims, k);
    if (columns) {
        p.data = NULL;
        for (uint32_t a = 0; a < dims; ++a)
            p.columns[a] = f32 ? (const void *)(cols32 + a * n + first)
                               : (const void *)(cols + a * n + first);
    }
    return p;
}

/* The first pass in parts: for every non-empty subset of the axes (a mask), one
 * gpuhist_points_minmax call per part, combined, gives each asked axis's finite min and max of a
 * plain loop over all the points, and leaves the other entries as they were; the full mask's
 * specs (gpuhist_bins_from_minmax) give the edges of one auto-range call on all the points.
 * 1-8 axes (each twice), interleaved and columns, f64 and f32, NaN, infinities, -0.0 and
 * +-1e300 (f64) among the coordinates, an axis with nothing finite. */
static void minmax_parts(gpuhist_ctx *ctx, rng_t *rng)
{
    check_context("minmax_parts");
    static const double odd[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e300, -1e300};
    for (int round = 0; round < 32; ++round) {
        const uint32_t dims = 1 + (uint32_t)(round % GPUHIST_MAX_DIMS);
        const int columns = round / GPUHIST_MAX_DIMS % 2;
        const gpuhist_dtype dtype = round / (2 * GPUHIST_MAX_DIMS) ? GPUHIST_F32 : GPUHIST_F64;
        const uint64_t n = 1 + below(rng, dims > 5 ? 1500 : 5000);
        double *pts = malloc(n * dims * sizeof *pts);
        double *cols = malloc(n * dims * sizeof *cols);
        float *pts32 = malloc(n * dims * sizeof *pts32);
        float *cols32 = malloc(n * dims * sizeof *cols32);
        if (!CHECK(pts && cols && pts32 && cols32)) {
            free(pts);
            free(cols);
            free(pts32);
            free(cols32);
            return;
        }
        for (uint64_t i = 0; i < n * dims; ++i) {
            pts[i] = below(rng, 50) ? unit(rng) * 8.0 - 3.0 : odd[below(rng, 7)];
            if (dtype == GPUHIST_F32) /* the f32 values, exactly, in both copies */
                pts[i] = (double)(float)(fabs(pts[i]) == 1e300 ? pts[i] * 1e-270 : pts[i]);
        }
        if (round % 5 == 0) /* an axis with nothing finite */
            for (uint64_t i = 0; i < n; ++i)
                pts[i * dims] = NAN;
        for (uint64_t i = 0; i < n * dims; ++i)
            pts32[i] = (float)pts[i];
        for (uint32_t a = 0; a < dims; ++a)
            for (uint64_t i = 0; i < n; ++i) {
                cols[a * n + i] = pts[i * dims + a];
                cols32[a * n + i] = pts32[i * dims + a];
            }
        double want_lo[GPUHIST_MAX_DIMS], want_hi[GPUHIST_MAX_DIMS];
        int want_f[GPUHIST_MAX_DIMS];
        for (uint32_t a = 0; a < dims; ++a)
            want_f[a] = loop_minmax(pts, dims, n, a, &want_lo[a], &want_hi[a]);
        /* the parts, fixed for the round: random cuts */
        uint64_t cuts[64], nparts = 0;
        for (uint64_t first = 0; first < n && nparts < 63;) {
            uint64_t k = nparts == 62 ? n - first : 1 + below(rng, n - first);
            cuts[nparts++] = first;
            first += k;
        }
        cuts[nparts] = n;
        double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
        int found[GPUHIST_MAX_DIMS];
        const uint32_t all_axes = (1u << dims) - 1u;
        for (uint32_t mask = 1; mask <= all_axes; ++mask) {
            for (uint32_t a = 0; a < dims; ++a)
                lo[a] = UNTOUCHED_MIN, hi[a] = UNTOUCHED_MAX, found[a] = 0;
            for (uint64_t q = 0; q < nparts; ++q) {
                gpuhist_points p = part_points(dtype, pts, cols, pts32, cols32, dims, n, cuts[q],
                                               cuts[q + 1] - cuts[q], columns);
                double l[GPUHIST_MAX_DIMS], h[GPUHIST_MAX_DIMS];
                int f[GPUHIST_MAX_DIMS];
                for (uint32_t a = 0; a < dims; ++a)
                    l[a] = UNTOUCHED_MIN, h[a] = UNTOUCHED_MAX, f[a] = UNTOUCHED_FOUND;
                if (!CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, mask, l, h, f), GPUHIST_OK)) {
                    printf("  round %d mask 0x%x: %s\n", round, mask, gpuhist_last_error(ctx));
                    break;
                }
                for (uint32_t a = 0; a < dims; ++a) {
                    if (!(mask >> a & 1u)) {
                        CHECK_MSG(l[a] == UNTOUCHED_MIN && h[a] == UNTOUCHED_MAX &&
                                      f[a] == UNTOUCHED_FOUND,
                                  "round %d mask 0x%x: axis %u not asked but written", round,
                                  mask, a);
                        continue;
                    }
                    CHECK_MSG(f[a] == 0 || f[a] == 1, "round %d mask 0x%x axis %u: found %d",
                              round, mask, a, f[a]);
                    if (!f[a]) {
                        CHECK_MSG(l[a] == 0.0 && h[a] == 1.0,
                                  "round %d mask 0x%x axis %u: nothing found gives %g %g, "
                                  "want 0 1", round, mask, a, l[a], h[a]);
                        continue;
                    }
                    if (!found[a] || l[a] < lo[a])
                        lo[a] = l[a];
                    if (!found[a] || h[a] > hi[a])
                        hi[a] = h[a];
                    found[a] = 1;
                }
            }
            for (uint32_t a = 0; a < dims; ++a) {
                if (!(mask >> a & 1u))
                    continue;
                CHECK_EQ_INT(found[a], want_f[a]);
                if (want_f[a])
                    CHECK_MSG(lo[a] == want_lo[a] && hi[a] == want_hi[a] &&
                                  !signbit(lo[a]) == !signbit(want_lo[a]) &&
                                  !signbit(hi[a]) == !signbit(want_hi[a]),
                              "round %d mask 0x%x axis %u: min/max %g %g, want %g %g", round,
                              mask, a, lo[a], hi[a], want_lo[a], want_hi[a]);
            }
        }
        /* the full mask's specs against one auto-range call on all the points (lo, hi and
         * found hold the full mask's combination: the last mask of the loop) */
        gpuhist_bin_spec axes[GPUHIST_MAX_DIMS], resolved[GPUHIST_MAX_DIMS];
        uint64_t B = 1;
        for (uint32_t a = 0; a < dims; ++a) {
            axes[a] = gpuhist_bins_auto(1 + (uint32_t)below(rng, 5));
            resolved[a] = gpuhist_bins_from_minmax(axes[a].bins, lo[a], hi[a], found[a]);
            B *= axes[a].bins;
        }
        gpuhist_points whole = part_points(dtype, pts, cols, pts32, cols32, dims, n, 0, n,
                                           columns);
        uint64_t *counts = malloc(B * sizeof *counts);
        gpuhist_nd_result r;
        memset(&r, 0, sizeof r);
        r.counts = counts;
        double *edges[GPUHIST_MAX_DIMS] = {0};
        int ok = counts != NULL;
        for (uint32_t a = 0; a < dims && ok; ++a)
            ok = (r.edges[a] = edges[a] = malloc((axes[a].bins + 1u) * sizeof(double))) != NULL;
        if (CHECK(ok) && CHECK_EQ_INT(gpuhist_histogramdd(ctx, &whole, axes, &r), GPUHIST_OK)) {
            for (uint32_t a = 0; a < dims; ++a) {
                double want[6];
                CHECK_EQ_INT(gpuhist_compute_edges(&resolved[a], dtype, want), GPUHIST_OK);
                CHECK_MSG(memcmp(want, edges[a], (axes[a].bins + 1u) * sizeof(double)) == 0,
                          "round %d axis %u: edges of the combined min/max differ from the "
                          "call's", round, a);
            }
        }
        for (uint32_t a = 0; a < dims; ++a)
            free(edges[a]);
        free(counts);
        free(pts);
        free(cols);
        free(pts32);
        free(cols32);
    }
}

/* Many points on several CPU threads (CPU backend): the same min and max as a plain loop for
 * every thread count, interleaved and columns, each mask of 3 axes. */
static void minmax_threads(gpuhist_ctx *ctx, rng_t *rng)
{
    check_context("minmax_threads");
    const uint32_t dims = 3;
    const uint64_t n = (uint64_t)1 << 21; /* 48 MiB of f64 points: several threads' shares */
    double *pts = malloc(n * dims * sizeof *pts);
    double *cols = malloc(n * dims * sizeof *cols);
    if (!CHECK(pts && cols)) {
        free(pts);
        free(cols);
        return;
    }
    for (uint64_t i = 0; i < n * dims; ++i)
        pts[i] = below(rng, 1000) ? unit(rng) * 2.0 - 1.0 : NAN;
    pts[(n - 1) * dims + 1] = 5.0;  /* the maximum of axis 1 at the very end */
    pts[2] = -7.0;                   /* the minimum of axis 2 at the very start */
    for (uint32_t a = 0; a < dims; ++a)
        for (uint64_t i = 0; i < n; ++i)
            cols[a * n + i] = pts[i * dims + a];
    double want_lo[3], want_hi[3];
    int want_f[3];
    for (uint32_t a = 0; a < dims; ++a)
        want_f[a] = loop_minmax(pts, dims, n, a, &want_lo[a], &want_hi[a]);
    static const int threads[] = {1, 2, 3, 8};
    for (int t = 0; t < 4; ++t) {
        CHECK_EQ_INT(gpuhist_set_threads(ctx, threads[t]), GPUHIST_OK);
        for (int columns = 0; columns < 2; ++columns)
            for (uint32_t mask = 1; mask < 8u; ++mask) {
                gpuhist_points p =
                    part_points(GPUHIST_F64, pts, cols, NULL, NULL, dims, n, 0, n, columns);
                double l[3] = {UNTOUCHED_MIN, UNTOUCHED_MIN, UNTOUCHED_MIN};
                double h[3] = {UNTOUCHED_MAX, UNTOUCHED_MAX, UNTOUCHED_MAX};
                int f[3] = {UNTOUCHED_FOUND, UNTOUCHED_FOUND, UNTOUCHED_FOUND};
                if (!CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, mask, l, h, f), GPUHIST_OK))
                    continue;
                for (uint32_t a = 0; a < dims; ++a)
                    CHECK_MSG(mask >> a & 1u ? f[a] == want_f[a] && l[a] == want_lo[a] &&
                                                   h[a] == want_hi[a]
                                             : f[a] == UNTOUCHED_FOUND && l[a] == UNTOUCHED_MIN,
                              "%d threads, columns %d, mask 0x%x, axis %u: %g %g %d, want %g %g "
                              "%d", threads[t], columns, mask, a, l[a], h[a], f[a], want_lo[a],
                              want_hi[a], want_f[a]);
            }
    }
    CHECK_EQ_INT(gpuhist_set_threads(ctx, 0), GPUHIST_OK);
    free(pts);
    free(cols);
}

/* The refusals, each by name, with nothing written: an empty mask, a mask naming an axis past
 * the points' dims, NULL arrays, NULL points, a NULL column of an asked axis (one not asked is
 * not looked at); no points answer found = 0 over [0, 1]. */
static void minmax_errors(gpuhist_ctx *ctx)
{
    check_context("minmax_errors");
    double pts[6] = {0.5, -2.0, 3.0, 1.5, NAN, 4.0}; /* 3 points of 2 axes */
    gpuhist_points p = gpuhist_points_interleaved(pts, GPUHIST_F64, 2, 3);
    double l[GPUHIST_MAX_DIMS], h[GPUHIST_MAX_DIMS];
    int f[GPUHIST_MAX_DIMS];
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
#define RESET()                                                                                    \
    for (int i = 0; i < GPUHIST_MAX_DIMS; ++i)                                                     \
    l[i] = UNTOUCHED_MIN, h[i] = UNTOUCHED_MAX, f[i] = UNTOUCHED_FOUND
#define UNWRITTEN() (l[0] == UNTOUCHED_MIN && l[1] == UNTOUCHED_MIN && f[0] == UNTOUCHED_FOUND)
    RESET();
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 0u, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "axes: an empty mask");
    CHECK(UNWRITTEN());
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 1u << 2, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "names axis 2 of points of 2 dimensions");
    CHECK(UNWRITTEN());
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 0x3u | 1u << 31, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "names axis 31");
    CHECK(UNWRITTEN());
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 1u, NULL, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "min: NULL");
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 1u, l, NULL, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "max: NULL");
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 1u, l, h, NULL), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "found: NULL");
    CHECK(UNWRITTEN());
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, NULL, 1u, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "points: NULL");
    CHECK_EQ_INT(gpuhist_points_minmax(NULL, &p, 1u, l, h, f), bad);
    gpuhist_points nine = gpuhist_points_interleaved(pts, GPUHIST_F64, GPUHIST_MAX_DIMS + 1, 0);
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &nine, 1u, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "points.dims");
    CHECK(UNWRITTEN());
    /* columns: a NULL column asked for is refused, one not asked is not read */
    double c0[3] = {0.5, 3.0, NAN};
    gpuhist_points c = gpuhist_points_interleaved(NULL, GPUHIST_F64, 2, 3);
    c.columns[0] = c0;
    CHECK_EQ_INT(gpuhist_points_minmax(ctx, &c, 0x3u, l, h, f), bad);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "points.columns[1]: NULL");
    CHECK(UNWRITTEN());
    if (CHECK_EQ_INT(gpuhist_points_minmax(ctx, &c, 0x1u, l, h, f), GPUHIST_OK))
        CHECK(f[0] == 1 && l[0] == 0.5 && h[0] == 3.0 && f[1] == UNTOUCHED_FOUND);
    /* the hand-computed answer of the interleaved points */
    RESET();
    if (CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 0x3u, l, h, f), GPUHIST_OK))
        CHECK(f[0] == 1 && l[0] == 0.5 && h[0] == 3.0 && f[1] == 1 && l[1] == -2.0 &&
              h[1] == 4.0 && f[2] == UNTOUCHED_FOUND);
    /* no points: nothing found, [0, 1] */
    RESET();
    p.count = 0;
    if (CHECK_EQ_INT(gpuhist_points_minmax(ctx, &p, 0x2u, l, h, f), GPUHIST_OK))
        CHECK(f[1] == 0 && l[1] == 0.0 && h[1] == 1.0 && f[0] == UNTOUCHED_FOUND);
#undef RESET
#undef UNWRITTEN
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
    if (backend == GPUHIST_BACKEND_CPU)
        minmax_threads(ctx, &rng);
    minmax_errors(ctx);
    gpuhist_destroy(ctx);
    return check_exit();
}
