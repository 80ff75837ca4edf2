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
 * in random chunks bit for bit, a 1-D histogramdd equals
 * gpuhist_histogram() with the same spec, auto range per axis, a 4096 x 4096 histogram, and the
 * refusals (each message naming its field); weighted parts merged through result.weight_state
 * (gpuhist_weight_state_add / _sums) equal one call on all the points.
 *
 * usage: test_histogramdd cpu|opencl|cuda. Seed: GPUHIST_TEST_SEED (fixed by default, printed;
 * "random" for a new one); GPUHIST_ND_CASES: how many random cases. Exit 77 without a device.
 */
#include "gpuhist.h"
#include "check.h"
#include "ndmap.h"
#include "half_test.h"

#include <float.h>
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
    if (c->weights && gpuhist_context_backend(ctx) != GPUHIST_BACKEND_CPU) {
        /* only the CPU backend sums weights: refused as a 1-D weighted request is */
        CHECK_EQ_INT(o.st, GPUHIST_ERROR_UNSUPPORTED);
        CHECK_CONTAINS(gpuhist_last_error(ctx), "sums weights");
        goto free_all;
    }
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
        if (CHECK_MSG(gpuhist_histogram(ctx, &s, &c->axes[0], &r1) == GPUHIST_OK, "1-D: %s",
                      gpuhist_last_error(ctx))) {
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

/* ---- fixed cases --------------------------------------------------------------------------- */

static void expect_error(gpuhist_ctx *ctx, const gpuhist_points *p, const gpuhist_bin_spec *axes,
                         gpuhist_nd_result *r, gpuhist_status want, const char *needle)
{
    gpuhist_status st = gpuhist_histogramdd(ctx, p, axes, r);
    CHECK_EQ_INT(st, want);
    CHECK_CONTAINS(gpuhist_last_error(ctx), needle);
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

/* ---- parts merged through weight states ----------------------------------------------------- */

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
    if (gpuhist_context_backend(ctx) != GPUHIST_BACKEND_CPU)
        return; /* weights: the CPU backend (others refuse weighted requests, checked above) */
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

int main(int argc, char **argv)
{
    gpuhist_backend backend = GPUHIST_BACKEND_CPU;
    if (argc > 1 && !gpuhist_backend_parse(argv[1], &backend)) {
        fprintf(stderr, "usage: test_histogramdd cpu|opencl|cuda\n");
        return 2;
    }
    const char *env = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = env && strcmp(env, "random") == 0 ? (uint64_t)time(NULL)
                    : env && *env                    ? strtoull(env, NULL, 0)
                                                     : 20261126u;
    const char *cases_env = getenv("GPUHIST_ND_CASES");
    int cases = cases_env && *cases_env ? atoi(cases_env) : 300;
    gpuhist_ctx *ctx = NULL, *one = NULL, *multi = NULL;
    gpuhist_status cs = gpuhist_create(&ctx, backend);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no %s device: skipped (%s)\n", gpuhist_backend_name(backend),
               gpuhist_last_error(NULL));
        return 77;
    }
    if (cs != GPUHIST_OK || gpuhist_create(&one, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
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
    refusals(ctx);
    tallies(ctx);
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
    large(ctx, &rng);
    parts(ctx, &rng);
    gpuhist_destroy(ctx);
    gpuhist_destroy(one);
    gpuhist_destroy(multi);
    return check_exit();
}
