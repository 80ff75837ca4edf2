/*
 * test_histogramdd.c - gpuhist_histogramdd() against an independent brute-force reference.
 *
 * Random cases: 1 to 8 dimensions, every coordinate type, per axis even bins with a range or
 * auto range, explicit edges or integer bins, last edge inclusive or not; coordinates drawn from
 * the axis's edges themselves, their neighbours, NaN, infinities, far outliers and random values;
 * interleaved points or one array per axis; no weights, f32 or f64 weights, with or without
 * squares; random chunkings of the map pass. The reference bins each coordinate by a binary
 * search over the edges gpuhist_compute_edges() gives (comparisons in long double, exact for
 * every type here), or by integer arithmetic for integer bins, combines them row-major with NaN
 * before out, and sums dyadic weights exactly in double; full-precision weights are checked
 * against gpuhist_histogram() of the reference's joint slots (the library's 1-D exact sums).
 * Also: interleaved == columns, threads 1 == many, a context of two devices and the N-D stream
 * in random chunks bit for bit, a 1-D histogramdd equals gpuhist_histogram() with the same spec,
 * auto range per axis. The refusals and known answers are test_histogramdd_api.c's, weighted
 * parts merged through their weight states test_histogramdd_parts.c's.
 *
 * usage: test_histogramdd cpu|opencl|cuda. Seed: GPUHIST_TEST_SEED (fixed by default, printed;
 * "random" for a new one); GPUHIST_ND_CASES: how many random cases. Exit 77 without a device.
 */
#include "gpuhist.h"
#include "check.h"
#include "ndmap.h"
#include "half_test.h"
#include "nd_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is_float(gpuhist_dtype t)
{
    return t == GPUHIST_F32 || t == GPUHIST_F64 || t == GPUHIST_F16 || t == GPUHIST_BF16;
}

/* The range of values of an integer type, as long doubles (exact). */
static void type_range(gpuhist_dtype t, long double *lo, long double *hi)
{
    switch (t) {
    case GPUHIST_U8: *lo = 0; *hi = 255; break;
    case GPUHIST_I8: *lo = -128; *hi = 127; break;
    case GPUHIST_U16: *lo = 0; *hi = 65535; break;
    case GPUHIST_I16: *lo = -32768; *hi = 32767; break;
    case GPUHIST_U32: *lo = 0; *hi = 4294967295.0L; break;
    case GPUHIST_I32: *lo = -2147483648.0L; *hi = 2147483647.0L; break;
    case GPUHIST_U64: *lo = 0; *hi = 18446744073709551615.0L; break;
    case GPUHIST_I64: *lo = -9223372036854775808.0L; *hi = 9223372036854775807.0L; break;
    case GPUHIST_F32: *lo = -FLT_MAX; *hi = FLT_MAX; break;
    case GPUHIST_F16: *lo = -65504.0L; *hi = 65504.0L; break;
    case GPUHIST_BF16: *lo = -0x1.fep127L; *hi = 0x1.fep127L; break;
    default: *lo = -DBL_MAX; *hi = DBL_MAX; break;
    }
}

/* Store v (a long double already a value of the type, or NaN/inf for floats) as type t. */
static void put(gpuhist_dtype t, unsigned char *p, long double v)
{
    switch (t) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case GPUHIST_I8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case GPUHIST_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case GPUHIST_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case GPUHIST_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case GPUHIST_I64: { int64_t x = (int64_t)v; memcpy(p, &x, 8); break; }
    case GPUHIST_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
    case GPUHIST_F16: { uint16_t x = test_f16_bits((double)v); memcpy(p, &x, 2); break; }
    case GPUHIST_BF16: { uint16_t x = test_bf16_bits((double)v); memcpy(p, &x, 2); break; }
    default: { double x = (double)v; memcpy(p, &x, 8); break; }
    }
}

/* Read a coordinate back exactly (long double holds every 64-bit integer and every double). */
static long double get(gpuhist_dtype t, const unsigned char *p)
{
    switch (t) {
    case GPUHIST_U8: { uint8_t x; memcpy(&x, p, 1); return x; }
    case GPUHIST_I8: { int8_t x; memcpy(&x, p, 1); return x; }
    case GPUHIST_U16: { uint16_t x; memcpy(&x, p, 2); return x; }
    case GPUHIST_I16: { int16_t x; memcpy(&x, p, 2); return x; }
    case GPUHIST_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case GPUHIST_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case GPUHIST_U64: { uint64_t x; memcpy(&x, p, 8); return (long double)x; }
    case GPUHIST_I64: { int64_t x; memcpy(&x, p, 8); return (long double)x; }
    case GPUHIST_F32: { float x; memcpy(&x, p, 4); return x; }
    case GPUHIST_F16: { uint16_t x; memcpy(&x, p, 2); return test_f16_value(x); }
    case GPUHIST_BF16: { uint16_t x; memcpy(&x, p, 2); return test_bf16_value(x); }
    default: { double x; memcpy(&x, p, 8); return x; }
    }
}

/* Clamp a long double to the values of an integer type and truncate (floats: round to type). */
static long double to_type(gpuhist_dtype t, long double v)
{
    long double lo, hi;
    type_range(t, &lo, &hi);
    if (isnan(v) || isinf(v))
        return is_float(t) ? v : lo;
    if (v < lo)
        v = lo;
    if (v > hi)
        v = hi;
    if (!is_float(t))
        return truncl(v);
    if (t == GPUHIST_F16)
        return test_f16_value(test_f16_bits((double)v));
    if (t == GPUHIST_BF16)
        return test_bf16_value(test_bf16_bits((double)v));
    return t == GPUHIST_F32 ? (long double)(float)v : (long double)(double)v;
}

/* ---- the reference -------------------------------------------------------------------------- */

#define REF_NAN (-1)
#define REF_OUT (-2)

/* Bin of x on an axis: integer bins by arithmetic, else a binary search over the edges. */
static int64_t ref_bin(const gpuhist_bin_spec *b, const double *e, int last_inclusive,
                       long double x)
{
    if (isnan(x))
        return REF_NAN;
    uint32_t n = b->bins;
    if (b->kind == GPUHIST_BINS_INTEGER) {
        long double d = x - (long double)b->integer_lower; /* exact: both within 2^64 */
        if (x < (long double)b->integer_lower || d >= (long double)n)
            return REF_OUT;
        return (int64_t)d;
    }
    if (x < (long double)e[0] || x > (long double)e[n])
        return REF_OUT;
    if (x == (long double)e[n])
        return last_inclusive ? (int64_t)n - 1 : REF_OUT;
    uint32_t lo = 0, hi = n; /* e[lo] <= x < e[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x < (long double)e[mid])
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

typedef struct nd_case {
    uint32_t dims;
    gpuhist_dtype dtype;
    uint64_t count;
    gpuhist_bin_spec axes[GPUHIST_MAX_DIMS];
    double *spec_edges[GPUHIST_MAX_DIMS]; /* EDGES axes: their edges */
    unsigned char *inter;                 /* count x dims */
    unsigned char *cols[GPUHIST_MAX_DIMS];
    gpuhist_dtype wtype;                  /* F32/F64; weights NULL = none */
    void *weights;
    int dyadic;                           /* weights k/8 with |k| <= 64: exact sums in double */
    int squares;
} nd_case;

/* The edges of each axis as the reference sees them, auto range resolved independently. */
static int ref_edges(const nd_case *c, uint32_t a, double *edges, gpuhist_bin_spec *resolved)
{
    gpuhist_bin_spec s = c->axes[a];
    if (s.kind == GPUHIST_BINS_EVEN && s.auto_range) {
        int found = 0;
        long double lo = 0, hi = 0;
        size_t size = gpuhist_dtype_size(c->dtype);
        for (uint64_t i = 0; i < c->count; ++i) {
            long double x = get(c->dtype, c->cols[a] + i * size);
            if (!isfinite(x))
                continue;
            if (!found || x < lo)
                lo = x;
            if (!found || x > hi)
                hi = x;
            found = 1;
        }
        /* 64-bit integers: rounded outwards to doubles */
        double dlo = (double)lo, dhi = (double)hi;
        if ((long double)dlo > lo)
            dlo = nextafter(dlo, -INFINITY);
        if ((long double)dhi < hi)
            dhi = nextafter(dhi, INFINITY);
        s = gpuhist_bins_from_minmax(s.bins, dlo, dhi, found);
    }
    *resolved = s;
    return gpuhist_compute_edges(&s, c->dtype, edges) == GPUHIST_OK;
}

/* ---- case generation ---------------------------------------------------------------------- */

static gpuhist_dtype random_dtype(rng_t *r) { return (gpuhist_dtype)below(r, GPUHIST_DTYPE_COUNT); }

/* A bin spec for axis a of type t with `bins` bins. */
static gpuhist_bin_spec random_axis(rng_t *r, gpuhist_dtype t, uint32_t bins, double **own)
{
    long double tlo, thi;
    type_range(t, &tlo, &thi);
    int kind = (int)below(r, is_float(t) ? 3 : 4); /* 0 even, 1 auto, 2 edges, 3 integer */
    gpuhist_bin_spec s;
    *own = NULL;
    if (kind == 3) {
        int64_t lower;
        if (t == GPUHIST_U64 && below(r, 3) == 0)
            lower = (int64_t)(UINT64_MAX - 1000u); /* bins past INT64_MAX */
        else if (t == GPUHIST_I64 && below(r, 3) == 0)
            lower = INT64_MIN + (int64_t)below(r, 50);
        else
            lower = (int64_t)below(r, 40) - (tlo < 0 ? 20 : 0);
        s = gpuhist_bins_integer(bins, lower);
    } else if (kind == 1) {
        s = gpuhist_bins_auto(bins);
    } else {
        double lo, hi;
        int pick = (int)below(r, 4);
        if (pick == 0 && !is_float(t) && gpuhist_dtype_size(t) == 8) {
            /* near the ends of 64-bit integers, beyond 2^53 */
            lo = t == GPUHIST_U64 ? 1.8446744073709e19 - 1e6 * bins : -9.2233720368547e18;
            hi = t == GPUHIST_U64 ? 1.8446744073709e19 : -9.2233720368547e18 + 1e6 * bins;
        } else if (pick == 1 && is_float(t)) {
            lo = t == GPUHIST_F16 ? -1e-6 : -1e-30; /* float16: subnormal */
            hi = t == GPUHIST_F16 ? 3e-6 : 3e-30;
        } else {
            lo = -50.0 + (double)below(r, 60);
            if (tlo >= 0 && lo < 0)
                lo = 0.0;
            hi = lo + 1.0 + unit(r) * 200.0;
        }
        if (kind == 0) {
            s = gpuhist_bins_even(bins, lo, hi);
        } else {
            double *e = malloc((bins + 1u) * sizeof *e);
            for (uint32_t i = 0; i <= bins; ++i)
                e[i] = lo + (hi - lo) * ((double)i + 0.8 * unit(r)) / (double)bins;
            e[0] = lo;
            e[bins] = hi;
            for (uint32_t i = 1; i <= bins; ++i)
                if (!(e[i] > e[i - 1]))
                    e[i] = nextafter(e[i - 1], INFINITY);
            if (!is_float(t) && below(r, 2)) /* integer-valued edges: points land on them */
                for (uint32_t i = 0; i <= bins; ++i)
                    e[i] = i ? fmax(floor(e[i]), e[i - 1] + 1.0) : floor(e[i]);
            s = gpuhist_bins_edges(bins, e);
            *own = e;
        }
        s.last_edge_inclusive = (int)below(r, 2);
    }
    return s;
}

/* A coordinate for axis a: mostly near or on its edges, some special values. */
static long double random_coord(rng_t *r, gpuhist_dtype t, const gpuhist_bin_spec *s,
                                const double *edges)
{
    uint64_t k = below(r, 20);
    if (is_float(t) && k == 0)
        return NAN;
    if (is_float(t) && k == 1)
        return below(r, 2) ? INFINITY : -INFINITY;
    long double tlo, thi;
    type_range(t, &tlo, &thi);
    if (k == 2)
        return to_type(t, below(r, 2) ? tlo : thi);
    long double e0, en;
    if (s->kind == GPUHIST_BINS_INTEGER) {
        e0 = (long double)s->integer_lower;
        en = e0 + s->bins;
    } else if (edges) {
        e0 = edges[0];
        en = edges[s->bins];
    } else { /* auto range: anything */
        e0 = -100;
        en = 100;
    }
    if (k < 9 && edges && s->kind != GPUHIST_BINS_INTEGER) {
        long double e = edges[below(r, s->bins + 1u)];
        long double v = e;
        if (k == 4)
            v = is_float(t) ? (long double)nextafter((double)e, -INFINITY) : e - 1;
        if (k == 5)
            v = is_float(t) ? (long double)nextafter((double)e, INFINITY) : e + 1;
        if (t == GPUHIST_F32 && (k == 4 || k == 5))
            v = (long double)nextafterf((float)e, k == 4 ? -INFINITY : INFINITY);
        return to_type(t, v);
    }
    long double span = en - e0;
    long double v = e0 - span * 0.1L + span * 1.2L * (long double)unit(r);
    return to_type(t, v);
}

static void free_case(nd_case *c)
{
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a) {
        free(c->spec_edges[a]);
        free(c->cols[a]);
    }
    free(c->inter);
    free(c->weights);
    memset(c, 0, sizeof *c);
}

/* ---- running and checking one case --------------------------------------------------------- */

typedef struct run_out {
    gpuhist_status st;
    gpuhist_nd_result r;
    uint64_t *counts;
    double *sums, *squares;
    double *edges[GPUHIST_MAX_DIMS];
} run_out;

static void run(gpuhist_ctx *ctx, const nd_case *c, int interleaved, run_out *o)
{
    memset(o, 0, sizeof *o);
    uint64_t total = 1;
    for (uint32_t a = 0; a < c->dims; ++a)
        total *= c->axes[a].bins;
    o->counts = malloc(total * sizeof *o->counts);
    gpuhist_points p;
    memset(&p, 0, sizeof p);
    p.dims = c->dims;
    p.dtype = c->dtype;
    p.count = c->count;
    if (interleaved)
        p.data = c->inter;
    else
        for (uint32_t a = 0; a < c->dims; ++a)
            p.columns[a] = c->cols[a];
    p.location = GPUHIST_MEMORY_HOST;
    o->r.counts = o->counts;
    if (c->weights) {
        p.weights = c->weights;
        p.weight_dtype = c->wtype;
        o->sums = malloc(total * sizeof *o->sums);
        o->r.sums = o->sums;
        if (c->squares) {
            o->squares = malloc(total * sizeof *o->squares);
            o->r.sums_squared = o->squares;
        }
    }
    for (uint32_t a = 0; a < c->dims; ++a) {
        o->edges[a] = malloc((c->axes[a].bins + 1u) * sizeof(double));
        o->r.edges[a] = o->edges[a];
    }
    o->st = gpuhist_histogramdd(ctx, &p, c->axes, &o->r);
}

/* The same histogram through gpuhist_nd_stream_*: `axes` without auto range, the points cut
 * into random chunks, each interleaved or in columns at random. */
static void run_streamed(gpuhist_ctx *ctx, const nd_case *c, const gpuhist_bin_spec *axes,
                         rng_t *r, run_out *o)
{
    memset(o, 0, sizeof *o);
    uint64_t total = 1;
    for (uint32_t a = 0; a < c->dims; ++a)
        total *= axes[a].bins;
    o->counts = malloc(total * sizeof *o->counts);
    o->r.counts = o->counts;
    gpuhist_points lay;
    memset(&lay, 0, sizeof lay);
    lay.dims = c->dims;
    lay.dtype = c->dtype;
    lay.weights = c->weights;
    lay.weight_dtype = c->wtype;
    if (c->weights) {
        o->sums = malloc(total * sizeof *o->sums);
        o->r.sums = o->sums;
        if (c->squares) {
            o->squares = malloc(total * sizeof *o->squares);
            o->r.sums_squared = o->squares;
        }
    }
    for (uint32_t a = 0; a < c->dims; ++a) {
        o->edges[a] = malloc((axes[a].bins + 1u) * sizeof(double));
        o->r.edges[a] = o->edges[a];
    }
    gpuhist_nd_stream *st = NULL;
    o->st = gpuhist_nd_stream_begin(ctx, &lay, axes, &st);
    if (o->st != GPUHIST_OK)
        return;
    size_t size = gpuhist_dtype_size(c->dtype), ws = c->weights ? gpuhist_dtype_size(c->wtype) : 0;
    for (uint64_t first = 0; first < c->count && o->st == GPUHIST_OK;) {
        uint64_t n = below(r, 3) == 0 ? 1 + below(r, 7) : 1 + below(r, c->count - first);
        if (c->weights && n < c->count / 16) /* a weighted chunk costs O(bins) (see main) */
            n = c->count / 16;
        if (n > c->count - first)
            n = c->count - first;
        gpuhist_points p = lay;
        p.count = n;
        if (below(r, 2)) {
            p.data = c->inter + first * c->dims * size;
        } else {
            for (uint32_t a = 0; a < c->dims; ++a)
                p.columns[a] = c->cols[a] + first * size;
        }
        if (c->weights)
            p.weights = (const unsigned char *)c->weights + first * ws;
        o->st = gpuhist_nd_stream_feed(st, &p);
        first += n;
    }
    if (o->st != GPUHIST_OK) {
        gpuhist_nd_stream_abort(st);
        return;
    }
    o->st = gpuhist_nd_stream_finish(st, &o->r);
}

static void free_out(run_out *o)
{
    free(o->counts);
    free(o->sums);
    free(o->squares);
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a)
        free(o->edges[a]);
}

static double weight_of(const nd_case *c, uint64_t i)
{
    if (c->wtype == GPUHIST_F32)
        return ((const float *)c->weights)[i];
    return ((const double *)c->weights)[i];
}

/* Compare two runs bit for bit (counts, sums, tallies, edges). */
static void same_runs(const nd_case *c, const run_out *x, const run_out *y, uint64_t total,
                      const char *what)
{
    if (!CHECK_MSG(x->st == GPUHIST_OK && y->st == GPUHIST_OK, "%s: status %d / %d", what,
                   (int)x->st, (int)y->st))
        return;
    CHECK_MSG(memcmp(x->counts, y->counts, total * 8) == 0, "%s: counts differ", what);
    if (c->weights)
        CHECK_MSG(memcmp(x->sums, y->sums, total * 8) == 0, "%s: sums differ", what);
    if (c->weights && c->squares)
        CHECK_MSG(memcmp(x->squares, y->squares, total * 8) == 0, "%s: squares differ", what);
    CHECK_EQ_U64(x->r.out, y->r.out);
    CHECK_EQ_U64(x->r.nan, y->r.nan);
    for (uint32_t a = 0; a < c->dims; ++a)
        CHECK_MSG(memcmp(x->edges[a], y->edges[a], (c->axes[a].bins + 1u) * 8) == 0,
                  "%s: edges of axis %u differ", what, a);
}

static void check_case(gpuhist_ctx *ctx, gpuhist_ctx *one, gpuhist_ctx *multi, const nd_case *c,
                       rng_t *r)
{
    uint64_t total = 1;
    for (uint32_t a = 0; a < c->dims; ++a)
        total *= c->axes[a].bins;
    double *edges[GPUHIST_MAX_DIMS] = {0};
    gpuhist_bin_spec resolved[GPUHIST_MAX_DIMS];
    for (uint32_t a = 0; a < c->dims; ++a) {
        edges[a] = malloc((c->axes[a].bins + 1u) * sizeof(double));
        int ok = ref_edges(c, a, edges[a], &resolved[a]);
        if (!ok && c->axes[a].auto_range) {
            /* f64 coordinates from -DBL_MAX to DBL_MAX, or one value FLT_MAX whose range cannot
             * be widened: refused, as in 1-D */
            run_out o;
            run(ctx, c, 1, &o);
            CHECK_EQ_INT(o.st, GPUHIST_ERROR_INVALID_ARGUMENT);
            char field[32];
            snprintf(field, sizeof field, "axes[%u].range", a);
            CHECK_CONTAINS(gpuhist_last_error(ctx), field);
            free_out(&o);
            goto done;
        }
        if (!CHECK_MSG(ok, "reference edges of axis %u: kind %d, %u bins, [%.17g, %.17g]", a,
                       (int)resolved[a].kind, resolved[a].bins, resolved[a].lower,
                       resolved[a].upper))
            goto done;
    }
    /* The reference. */
    uint64_t *ref = calloc(total, sizeof *ref);
    double *ref_sums = calloc(total, sizeof *ref_sums);
    double *ref_sq = calloc(total, sizeof *ref_sq);
    uint32_t *slots = malloc((c->count ? c->count : 1) * sizeof *slots);
    uint64_t ref_out = 0, ref_nan = 0;
    size_t size = gpuhist_dtype_size(c->dtype);
    for (uint64_t i = 0; i < c->count; ++i) {
        int nan = 0, out = 0;
        uint64_t j = 0;
        for (uint32_t a = 0; a < c->dims; ++a) {
            long double x = get(c->dtype, c->cols[a] + i * size);
            int li = resolved[a].kind != GPUHIST_BINS_INTEGER && resolved[a].last_edge_inclusive;
            int64_t b = ref_bin(&resolved[a], edges[a], li, x);
            if (b == REF_NAN)
                nan = 1;
            else if (b == REF_OUT)
                out = 1;
            else
                j = j * c->axes[a].bins + (uint64_t)b;
        }
        if (nan) {
            ++ref_nan;
            slots[i] = 0;
        } else if (out) {
            ++ref_out;
            slots[i] = (uint32_t)total + 1u;
        } else {
            ++ref[j];
            slots[i] = (uint32_t)j + 1u;
            if (c->weights) {
                double w = weight_of(c, i);
                ref_sums[j] += w;
                ref_sq[j] += w * w;
            }
        }
    }

    run_out o;
    int interleaved = (int)below(r, 2);
    run(ctx, c, interleaved, &o);
    if (!CHECK_MSG(o.st == GPUHIST_OK, "status %d: %s", (int)o.st, gpuhist_last_error(ctx)))
        goto free_all;
    CHECK_EQ_U64(o.r.dims, c->dims);
    CHECK_EQ_U64(o.r.bins_total, total);
    CHECK_EQ_U64(o.r.total, c->count);
    CHECK_EQ_U64(o.r.out, ref_out);
    CHECK_EQ_U64(o.r.nan, ref_nan);
    CHECK(o.r.strategy != NULL);
    for (uint32_t a = 0; a < c->dims; ++a) {
        CHECK_EQ_U64(o.r.bins[a], c->axes[a].bins);
        CHECK_MSG(memcmp(o.edges[a], edges[a], (c->axes[a].bins + 1u) * 8) == 0,
                  "edges of axis %u differ from the reference", a);
        CHECK_EQ_F64_BITS(o.r.lower[a], edges[a][0]);
        CHECK_EQ_F64_BITS(o.r.upper[a], edges[a][c->axes[a].bins]);
    }
    uint64_t bad = 0;
    for (uint64_t j = 0; j < total; ++j)
        if (o.counts[j] != ref[j] && bad++ < 5)
            CHECK_MSG(0, "bin %llu: count %llu, reference %llu", (unsigned long long)j,
                      (unsigned long long)o.counts[j], (unsigned long long)ref[j]);
    if (c->weights && c->dyadic) {
        for (uint64_t j = 0; j < total; ++j) {
            if (memcmp(&o.sums[j], &ref_sums[j], 8) != 0 && bad++ < 5)
                CHECK_MSG(0, "bin %llu: sum %.17g, reference %.17g", (unsigned long long)j,
                          o.sums[j], ref_sums[j]);
            if (c->squares && memcmp(&o.squares[j], &ref_sq[j], 8) != 0 && bad++ < 5)
                CHECK_MSG(0, "bin %llu: sum of squares %.17g, reference %.17g",
                          (unsigned long long)j, o.squares[j], ref_sq[j]);
        }
    } else if (c->weights) {
        /* full-precision weights: the library's 1-D exact sums of the reference's slots */
        gpuhist_samples s = gpuhist_samples_1d(slots, GPUHIST_U32, c->count);
        s.weights = c->weights;
        s.weight_dtype = c->wtype;
        gpuhist_bin_spec spec = gpuhist_bins_integer((uint32_t)total, 1);
        uint64_t *cnt = malloc(total * 8);
        double *sm = malloc(total * 8), *sq = malloc(total * 8);
        gpuhist_result r1 = gpuhist_result_host(cnt);
        r1.sums = sm;
        r1.sums_squared = c->squares ? sq : NULL;
        if (CHECK(gpuhist_histogram(one, &s, &spec, &r1) == GPUHIST_OK)) {
            CHECK_MSG(memcmp(sm, o.sums, total * 8) == 0, "sums differ from the 1-D sums");
            if (c->squares)
                CHECK_MSG(memcmp(sq, o.squares, total * 8) == 0,
                          "squares differ from the 1-D squares");
        }
        free(cnt);
        free(sm);
        free(sq);
    }

    /* The other layout, and other thread counts, bit for bit. */
    run_out o2;
    run(ctx, c, !interleaved, &o2);
    same_runs(c, &o, &o2, total, "interleaved vs columns");
    free_out(&o2);
    /* a context over two devices (two contexts on device 0): the stream's chunks go to both */
    if (multi) {
        run(multi, c, interleaved, &o2);
        same_runs(c, &o, &o2, total, "two devices");
        free_out(&o2);
    }
    /* streamed in random chunks (auto ranges given as the reference resolved them) */
    run_streamed(ctx, c, resolved, r, &o2);
    same_runs(c, &o, &o2, total, "streamed");
    CHECK_EQ_U64(o2.r.total, c->count);
    free_out(&o2);
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU) {
        int t = 1 + (int)below(r, 7);
        gpuhist_set_threads(ctx, t);
        run(ctx, c, interleaved, &o2);
        gpuhist_set_threads(ctx, 0);
        same_runs(c, &o, &o2, total, "another thread count");
        free_out(&o2);
    }

    /* 1-D: gpuhist_histogram() with the same spec on the one column. */
    if (c->dims == 1) {
        gpuhist_samples s = gpuhist_samples_1d(c->cols[0], c->dtype, c->count);
        if (c->weights) {
            s.weights = c->weights;
            s.weight_dtype = c->wtype;
        }
        uint64_t *cnt = malloc(total * 8);
        double *sm = malloc(total * 8), *e1 = malloc((total + 1) * 8);
        gpuhist_result r1 = gpuhist_result_host(cnt);
        r1.edges = e1;
        r1.sums = c->weights ? sm : NULL;
        gpuhist_status st1 = gpuhist_histogram(ctx, &s, &c->axes[0], &r1);
        if (c->weights && (c->dtype == GPUHIST_F16 || c->dtype == GPUHIST_BF16) &&
            gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CUDA) {
            /* CUDA's weighted strategies do not read half samples: the 1-D call is refused by
             * name (docs/SEMANTICS.md), while the N-D call above maps them on the host and
             * counts u32 slots; its sums were checked against the reference */
            CHECK_EQ_INT(st1, GPUHIST_ERROR_UNSUPPORTED);
            CHECK_CONTAINS(gpuhist_last_error(ctx), "weighted");
        } else if (CHECK_MSG(st1 == GPUHIST_OK, "1-D: %s", gpuhist_last_error(ctx))) {
            CHECK_MSG(memcmp(cnt, o.counts, total * 8) == 0, "1-D counts differ");
            CHECK_MSG(memcmp(e1, o.edges[0], (total + 1) * 8) == 0, "1-D edges differ");
            CHECK_EQ_U64(r1.underflow[0] + r1.overflow[0], o.r.out);
            CHECK_EQ_U64(r1.nan[0], o.r.nan);
            CHECK_EQ_INT(r1.last_edge_inclusive, o.r.last_edge_inclusive[0]);
            if (c->weights)
                CHECK_MSG(memcmp(sm, o.sums, total * 8) == 0, "1-D sums differ");
        }
        free(cnt);
        free(sm);
        free(e1);
    }
free_all:
    free_out(&o);
    free(ref);
    free(ref_sums);
    free(ref_sq);
    free(slots);
done:
    for (uint32_t a = 0; a < c->dims; ++a)
        free(edges[a]);
}

/* Build a random case: its axes first (edges known), then its points. */
static void make_case(rng_t *r, nd_case *c)
{
    memset(c, 0, sizeof *c);
    c->dims = 1 + (uint32_t)below(r, GPUHIST_MAX_DIMS);
    c->dtype = random_dtype(r);
    uint64_t budget = 20000; /* joint bins */
    for (uint32_t a = 0; a < c->dims; ++a) {
        uint32_t maxb = (uint32_t)(budget > 40 ? 40 : budget);
        uint32_t bins = 1 + (uint32_t)below(r, maxb);
        budget /= bins;
        if (budget < 1)
            budget = 1;
        c->axes[a] = random_axis(r, c->dtype, bins, &c->spec_edges[a]);
    }
    uint64_t sizes[] = {0, 1, 7, 500, 3000, 70000};
    c->count = sizes[below(r, 6)];
    size_t size = gpuhist_dtype_size(c->dtype);
    c->inter = malloc(c->count * c->dims * size + 1);
    for (uint32_t a = 0; a < c->dims; ++a) {
        c->cols[a] = malloc(c->count * size + 1);
        double *e = NULL;
        if (!(c->axes[a].kind == GPUHIST_BINS_EVEN && c->axes[a].auto_range)) {
            e = malloc((c->axes[a].bins + 1u) * sizeof *e);
            if (gpuhist_compute_edges(&c->axes[a], c->dtype, e) != GPUHIST_OK) {
                free(e);
                e = NULL;
            }
        }
        for (uint64_t i = 0; i < c->count; ++i) {
            long double v = random_coord(r, c->dtype, &c->axes[a], e);
            put(c->dtype, c->cols[a] + i * size, v);
            memcpy(c->inter + (i * c->dims + a) * size, c->cols[a] + i * size, size);
        }
        free(e);
    }
    int w = (int)below(r, 3);
    if (w) {
        c->wtype = w == 1 ? GPUHIST_F32 : GPUHIST_F64;
        c->dyadic = (int)below(r, 2);
        c->squares = (int)below(r, 2);
        size_t ws = gpuhist_dtype_size(c->wtype);
        c->weights = malloc(c->count * ws + 1);
        for (uint64_t i = 0; i < c->count; ++i) {
            double v = c->dyadic ? ((double)below(r, 129) - 64.0) / 8.0
                                 : (unit(r) - 0.3) * pow(2.0, (double)below(r, 40) - 20.0);
            if (c->wtype == GPUHIST_F32) {
                float f = (float)v;
                memcpy((unsigned char *)c->weights + i * 4, &f, 4);
            } else {
                memcpy((unsigned char *)c->weights + i * 8, &v, 8);
            }
        }
    }
}

static void describe(const nd_case *c, int i)
{
    char buf[400];
    size_t n = (size_t)snprintf(buf, sizeof buf, "case %d: %s, %u dims, %llu points, axes", i,
                                gpuhist_dtype_name(c->dtype), c->dims,
                                (unsigned long long)c->count);
    for (uint32_t a = 0; a < c->dims && n < sizeof buf; ++a) {
        const gpuhist_bin_spec *s = &c->axes[a];
        const char *k = s->kind == GPUHIST_BINS_INTEGER ? "int"
                        : s->kind == GPUHIST_BINS_EDGES ? "edges"
                        : s->auto_range                 ? "auto"
                                                        : "even";
        n += (size_t)snprintf(buf + n, sizeof buf - n, " %s%u%s", k, s->bins,
                              s->last_edge_inclusive ? "]" : ")");
    }
    if (c->weights && n < sizeof buf)
        snprintf(buf + n, sizeof buf - n, ", %s weights%s%s", gpuhist_dtype_name(c->wtype),
                 c->dyadic ? " (dyadic)" : "", c->squares ? " + squares" : "");
    check_context("%s", buf);
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    uint64_t seed;
    gpuhist_ctx *ctx = NULL, *one = NULL, *multi = NULL;
    int rc = nd_test_start(argc, argv, "test_histogramdd", &backend, &seed, &ctx);
    if (rc >= 0)
        return rc;
    const char *cases_env = getenv("GPUHIST_ND_CASES");
    int cases = cases_env && *cases_env ? atoi(cases_env) : 300;
    if (gpuhist_create(&one, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "cannot create contexts: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    const int twice[2] = {0, 0};
    if (gpuhist_create_multi(&multi, backend, twice, 2) != GPUHIST_OK) {
        fprintf(stderr, "cannot create a context of two devices: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    printf("test_histogramdd %s: seed %llu (GPUHIST_TEST_SEED), %d cases\n",
           gpuhist_backend_name(backend), (unsigned long long)seed, cases);
    rng_t rng = {seed};
    for (int i = 0; i < cases; ++i) {
        nd_case c;
        make_case(&rng, &c);
        /* chunks of the map pass: the default, or small ones that cut the points anywhere */
        uint64_t chunk = below(&rng, 2) ? 0 : 1 + below(&rng, 5000);
        /* a weighted stream's chunk costs O(bins) on the CPU backend (its accumulator is
         * normalised per chunk): at most ~16 chunks there */
        if (chunk && c.weights && chunk < c.count / 16)
            chunk = c.count / 16;
        gpuhist_nd_set_chunk_points(chunk);
        describe(&c, i);
        check_case(ctx, one, multi, &c, &rng);
        gpuhist_nd_set_chunk_points(0);
        free_case(&c);
    }
    gpuhist_destroy(ctx);
    gpuhist_destroy(one);
    gpuhist_destroy(multi);
    return check_exit();
}
