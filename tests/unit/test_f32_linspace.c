/*
 * test_f32_linspace.c - EVEN bins of f32 samples with float32_linspace (NumPy 2's float32
 * linspace, docs/SEMANTICS.md "Bins") on one backend, every strategy of it.
 *
 * For random specs (float32 bounds from [0, 1) to offsets of 10^6 and narrow widths, 1 to 70000
 * bins, and 2^20): gpuhist_compute_edges of the spec must be gpuhist_linspace_f32's edges bit for
 * bit (or both refuse); then adversarial samples (every edge and 3 floats either side of it, NaN,
 * +-inf, the bounds, random values in and around the range) are histogrammed by every strategy of
 * the backend (forced by name, and the automatic choice; the ones that do not take f32 EVEN bins
 * answer UNSUPPORTED and are counted as skipped), with both last-edge rules and outlier policies,
 * unweighted and with unit weights (the strategies that sum weights), and each answer must equal
 * (a) an independent binary search over gpuhist_linspace_f32's edges, written here, and (b) the
 * CPU backend's cpu-reference. The automatic range (gpuhist_bins_auto: the flag is on) must give
 * the same edges over the data's min and max, and a stream begun with
 * gpuhist_bins_from_minmax's spec the same counts.
 *
 * Usage: test_f32_linspace cpu|cuda|opencl (exit 77 without a device). Seed: GPUHIST_TEST_SEED
 * (fixed by default, printed; "random" for a new one); specs: GPUHIST_F32LS_SPECS (default 60).
 */
#include "gpuhist.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t g_rng;
static uint64_t rnd(void) { return check_splitmix64(&g_rng); }
static double runif(void) { return (double)(rnd() >> 11) * 0x1p-53; }

/* A float32 range lo < hi and a bin count. */
static void pick_spec(double *lo, double *hi, uint32_t *bins, int big)
{
    switch (rnd() % 6) {
    case 0: *lo = 0.0, *hi = 1.0; break;
    case 1: *lo = (runif() - 0.5) * 20, *hi = *lo + runif() * 30 + 1e-3; break;
    case 2: *lo = (runif() - 0.5) * pow(10, (double)(rnd() % 8)); *hi = *lo + pow(10, (double)(rnd() % 10) - 4) * (0.5 + runif()); break;
    case 3: *lo = -runif() * 1000, *hi = runif() * 1000; break;
    case 4: *lo = (double)(int64_t)(rnd() % 2000000) - 1000000; *hi = *lo + (double)(rnd() % 100000 + 1); break;
    default: *lo = ldexp(runif() + 0.5, -(int)(rnd() % 60)); *hi = *lo * (1.0 + runif() * 4); break;
    }
    *lo = (double)(float)*lo;
    *hi = (double)(float)*hi;
    const int r = (int)(rnd() % 10);
    *bins = r < 4 ? 1u + (uint32_t)(rnd() % 300)
          : r < 7 ? 1u + (uint32_t)(rnd() % 5000)
          : r < 9 ? 1u << (rnd() % 17)
                  : 1u + (uint32_t)(rnd() % 70000);
    if (big)
        *bins = 1u << 20;
}

/* The expected slot of x: binary search over the edges e[0..bins] (this file's own). */
static uint32_t slot_of(const double *e, uint32_t bins, int li, float xf)
{
    const double x = (double)xf;
    if (x != x)
        return bins + 2u;
    if (x < e[0])
        return bins;
    if (x > e[bins] || (x == e[bins] && !li))
        return bins + 1u;
    if (x == e[bins])
        return bins - 1u;
    uint32_t lo = 0, hi = bins; /* e[lo] <= x < e[hi] */
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if (x < e[mid])
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

/* Samples: every edge +-3 floats (every `stride`-th edge), specials, the bounds, random. */
static float *make_samples(const double *e, uint32_t bins, uint32_t stride, size_t *n)
{
    const size_t cap = ((size_t)bins / stride + 2) * 7 + 16 + 4096;
    float *x = malloc(cap * sizeof *x);
    size_t k = 0;
    if (!x)
        return NULL;
    for (uint32_t i = 0; i <= bins; ++i) {
        if (i % stride && i != bins)
            continue;
        float v = (float)e[i];
        for (int q = 0; q < 3; ++q)
            v = nextafterf(v, -INFINITY);
        for (int q = -3; q <= 3; ++q, v = nextafterf(v, INFINITY))
            x[k++] = v;
    }
    const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX,
                        (float)e[0], (float)e[bins], 1e-45f, -1e-45f};
    for (size_t q = 0; q < sizeof sp / sizeof sp[0]; ++q)
        x[k++] = sp[q];
    const double w = e[bins] - e[0];
    for (int q = 0; q < 4096; ++q)
        x[k++] = (float)(e[0] + w * (runif() * 1.2 - 0.1));
    for (size_t i = k - 1; i > 0; --i) { /* shuffled */
        const size_t j = (size_t)(rnd() % (i + 1));
        const float t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
    *n = k;
    return x;
}

typedef struct expect {
    uint64_t *counts, under, over, nan, total;
} expect;

static void expected(const double *e, uint32_t bins, const gpuhist_bin_spec *b, const float *x,
                     size_t n, expect *out)
{
    memset(out->counts, 0, (size_t)bins * sizeof *out->counts);
    out->under = out->over = out->nan = 0;
    out->total = n;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t s = slot_of(e, bins, b->last_edge_inclusive, x[i]);
        if (s < bins)
            ++out->counts[s];
        else if (s == bins)
            ++out->under;
        else if (s == bins + 1u)
            ++out->over;
        else
            ++out->nan;
    }
    if (b->outliers == GPUHIST_OUTLIERS_CLAMP) {
        out->counts[0] += out->under;
        out->counts[bins - 1] += out->over;
    }
}

/* One run of `ctx` (weighted: unit f64 weights, sums must equal the counts) against `want` and
 * the edges e. @return 0 ran, 1 unsupported. */
static int run_check(gpuhist_ctx *ctx, const float *x, size_t n, const gpuhist_bin_spec *b,
                     const double *e, const expect *want, int weighted, const double *ones,
                     uint64_t *counts, double *edges, double *sums)
{
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F32, n);
    if (weighted) {
        s.weights = ones;
        s.weight_dtype = GPUHIST_F64;
    }
    gpuhist_result r = gpuhist_result_host(counts);
    r.edges = edges;
    r.sums = weighted ? sums : NULL;
    const gpuhist_status st = gpuhist_histogram(ctx, &s, b, &r);
    if (st == GPUHIST_ERROR_UNSUPPORTED)
        return 1;
    if (!CHECK_MSG(st == GPUHIST_OK, "histogram: %s", gpuhist_last_error(ctx)))
        return 0;
    const uint32_t bins = b->bins;
    uint32_t bad = 0, first = 0;
    for (uint32_t i = 0; i < bins; ++i)
        if (counts[i] != want->counts[i] || (weighted && sums[i] != (double)want->counts[i])) {
            if (!bad++)
                first = i;
        }
    CHECK_MSG(bad == 0, "%s: %u of %u bins differ (first %u: %llu, expected %llu)", r.strategy,
              bad, bins, first, (unsigned long long)counts[first],
              (unsigned long long)want->counts[first]);
    CHECK_EQ_U64(r.underflow[0], want->under);
    CHECK_EQ_U64(r.overflow[0], want->over);
    CHECK_EQ_U64(r.nan[0], want->nan);
    CHECK_EQ_U64(r.total[0], want->total);
    uint32_t ebad = 0;
    for (uint32_t i = 0; i <= bins; ++i)
        ebad += memcmp(&edges[i], &e[i], sizeof e[i]) != 0;
    CHECK_MSG(ebad == 0, "%s: %u reported edges differ from gpuhist_linspace_f32's", r.strategy,
              ebad);
    CHECK_EQ_F64_BITS(r.lower, e[0]);
    CHECK_EQ_F64_BITS(r.upper, e[bins]);
    return 0;
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    if (argc != 2 || !gpuhist_backend_parse(argv[1], &backend) ||
        backend == GPUHIST_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s cpu|cuda|opencl\n", argv[0]);
        return 2;
    }
    const char *se = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = 20261201;
    if (se && strcmp(se, "random") == 0)
        seed = (uint64_t)time(NULL);
    else if (se && *se)
        seed = strtoull(se, NULL, 10);
    g_rng = seed;
    const char *ne = getenv("GPUHIST_F32LS_SPECS");
    const int specs = ne && *ne ? atoi(ne) : 60;
    gpuhist_ctx *ctx = NULL, *ref = NULL;
    gpuhist_status st = gpuhist_create(&ctx, backend);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        printf("skipped: no %s device (%s)\n", argv[1], gpuhist_last_error(NULL));
        return 77;
    }
    if (st != GPUHIST_OK || gpuhist_create(&ref, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(ref, "cpu-reference") != GPUHIST_OK) {
        fprintf(stderr, "no context: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    /* the strategies of the backend, then the automatic choice */
    const char *names[64];
    size_t ns = 0;
    for (size_t i = 0; i < gpuhist_strategy_count() && ns < 63; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == backend)
            names[ns++] = d.name;
    }
    names[ns++] = "auto";
    unsigned long ran[64] = {0}, skipped[64] = {0};
    printf("f32 linspace test: backend %s (%s), %zu strategies, %d specs + 2 of 2^20 bins, seed "
           "%llu (GPUHIST_TEST_SEED)\n",
           argv[1], gpuhist_device_name(ctx), ns - 1, specs, (unsigned long long)seed);

    unsigned long refused = 0, differ_from_double = 0;
    for (int c = 0; c < specs + 2; ++c) {
        double lo, hi;
        uint32_t bins;
        pick_spec(&lo, &hi, &bins, c >= specs);
        gpuhist_bin_spec b = gpuhist_bins_even(bins, lo, hi);
        b.float32_linspace = 1;
        b.last_edge_inclusive = (int)(rnd() % 2);
        b.outliers = rnd() % 2 ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
        check_context("spec %d: [%a, %a] %u bins, last inclusive %d, %s", c, lo, hi, bins,
                      b.last_edge_inclusive,
                      b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop");
        double *e = malloc(((size_t)bins + 1) * sizeof *e);
        double *lib = malloc(((size_t)bins + 1) * sizeof *lib);
        double *edges = malloc(((size_t)bins + 1) * sizeof *edges);
        uint64_t *counts = malloc((size_t)bins * sizeof *counts);
        uint64_t *rc = malloc((size_t)bins * sizeof *rc);
        double *sums = malloc((size_t)bins * sizeof *sums);
        expect want = {malloc((size_t)bins * sizeof(uint64_t)), 0, 0, 0, 0};
        if (!e || !lib || !edges || !counts || !rc || !sums || !want.counts) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        /* 1. the edges: compute_edges == gpuhist_linspace_f32, or both refuse */
        const gpuhist_status s1 = gpuhist_linspace_f32(bins, lo, hi, e);
        const gpuhist_status s2 = gpuhist_compute_edges(&b, GPUHIST_F32, lib);
        CHECK_EQ_INT(s2, s1);
        if (s1 != GPUHIST_OK) {
            ++refused;
            /* every strategy refuses it too */
            const float one = 0.5f;
            gpuhist_samples s = gpuhist_samples_1d(&one, GPUHIST_F32, 1);
            gpuhist_result r = gpuhist_result_host(counts);
            CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
            goto next;
        }
        for (uint32_t i = 0; i <= bins; ++i)
            if (!CHECK_EQ_F64_BITS(lib[i], e[i]))
                break;
        /* the double edges rounded (float32_linspace off) differ somewhere, mostly */
        {
            gpuhist_bin_spec d = b;
            d.float32_linspace = 0;
            if (gpuhist_compute_edges(&d, GPUHIST_F32, lib) == GPUHIST_OK)
                for (uint32_t i = 0; i <= bins; ++i)
                    if (lib[i] != e[i]) {
                        ++differ_from_double;
                        break;
                    }
        }
        /* 2. adversarial samples through every strategy, the reference and the search */
        size_t n;
        float *x = make_samples(e, bins, bins > 100000 ? 61u : 1u, &n);
        double *ones = malloc(n * sizeof *ones);
        if (!x || !ones) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < n; ++i)
            ones[i] = 1.0;
        expected(e, bins, &b, x, n, &want);
        check_context("spec %d: [%a, %a] %u bins, li %d, %s: cpu-reference", c, lo, hi, bins,
                      b.last_edge_inclusive,
                      b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop");
        CHECK_EQ_INT(run_check(ref, x, n, &b, e, &want, 0, ones, rc, edges, sums), 0);
        for (size_t k = 0; k < ns; ++k) {
            if (!CHECK_EQ_INT(gpuhist_set_strategy(ctx, names[k]), GPUHIST_OK))
                continue;
            for (int weighted = 0; weighted <= 1; ++weighted) {
                check_context("spec %d: [%a, %a] %u bins, li %d, %s: %s%s", c, lo, hi, bins,
                              b.last_edge_inclusive,
                              b.outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop", names[k],
                              weighted ? ", weighted" : "");
                if (run_check(ctx, x, n, &b, e, &want, weighted, ones, counts, edges, sums))
                    ++skipped[k];
                else
                    ++ran[k];
            }
        }
        gpuhist_set_strategy(ctx, "auto");
        /* 3. the automatic range over the samples inside [lo, hi] (and NaN, +-inf): the same
         * edges (gpuhist_bins_auto sets the flag) and counts; then a stream of the same data
         * with gpuhist_bins_from_minmax's spec */
        {
            size_t m = 0;
            for (size_t i = 0; i < n; ++i)
                if (!(x[i] >= (float)lo && x[i] <= (float)hi) && isfinite(x[i]))
                    continue;
                else
                    x[m++] = x[i];
            gpuhist_bin_spec a = gpuhist_bins_auto(bins);
            a.outliers = b.outliers;
            CHECK_EQ_INT(a.float32_linspace, 1);
            gpuhist_bin_spec li = b;
            li.last_edge_inclusive = 1;
            expected(e, bins, &li, x, m, &want);
            check_context("spec %d: auto range [%a, %a] %u bins", c, lo, hi, bins);
            CHECK_EQ_INT(run_check(ctx, x, m, &a, e, &want, 0, ones, counts, edges, sums), 0);
            gpuhist_bin_spec fm = gpuhist_bins_from_minmax(bins, lo, hi, 1);
            fm.outliers = b.outliers;
            CHECK_EQ_INT(fm.float32_linspace, 1);
            gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
            gpuhist_stream *sm = NULL;
            check_context("spec %d: stream [%a, %a] %u bins", c, lo, hi, bins);
            if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &layout, &fm, GPUHIST_MEMORY_HOST, &sm),
                             GPUHIST_OK)) {
                for (size_t at = 0; at < m;) {
                    const size_t part = 1 + (size_t)(rnd() % 5000);
                    const size_t take = part < m - at ? part : m - at;
                    CHECK_EQ_INT(gpuhist_stream_feed(sm, x + at, take), GPUHIST_OK);
                    at += take;
                }
                gpuhist_result r = gpuhist_result_host(counts);
                r.edges = edges;
                if (CHECK_EQ_INT(gpuhist_stream_finish(sm, &r), GPUHIST_OK)) {
                    uint32_t bad = 0;
                    for (uint32_t i = 0; i < bins; ++i)
                        bad += counts[i] != want.counts[i];
                    CHECK_MSG(bad == 0, "stream: %u bins differ", bad);
                    for (uint32_t i = 0; i <= bins; ++i)
                        if (!CHECK_EQ_F64_BITS(edges[i], e[i]))
                            break;
                }
            }
        }
        free(x);
        free(ones);
    next:
        free(e), free(lib), free(edges), free(counts), free(rc), free(sums), free(want.counts);
    }
    for (size_t k = 0; k < ns; ++k)
        printf("strategy %-26s ran %3lu, answered UNSUPPORTED %3lu (of unweighted and weighted)\n", names[k], ran[k],
               skipped[k]);
    printf("%d specs: %lu refused (edges that do not increase, as gpuhist_linspace_f32), %lu "
           "whose float32 linspace differs from the rounded double edges\n",
           specs + 2, refused, differ_from_double);
    gpuhist_destroy(ctx);
    gpuhist_destroy(ref);
    return check_exit();
}
