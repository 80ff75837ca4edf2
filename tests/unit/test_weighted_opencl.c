/*
 * test_weighted_opencl.c - weighted histograms on OpenCL (opencl-weighted-local,
 * opencl-weighted-global and the auto choice) against the CPU backend (cpu-weighted, whose sums
 * weights_oracle.py checks against exact rationals), bit for bit: counts, tallies, sums, sums of
 * squares and the exact weight state. `test_weighted_opencl <case>`; exit 77 (ctest: skipped)
 * without an OpenCL device.
 *
 * Cases:
 *   random   random requests: every sample type (f16 and bf16 too), EVEN / EDGES / INTEGER bins
 *            from 1 to 3000 (past the local records of f64 weights), 1-4 channels with subsets,
 *            strided ROIs, both outlier policies, f32 and f64 weights with and without squares;
 *            weights over a few octaves, over the whole exponent range (subnormals, overflow to
 *            inf for f32), cancelling pairs of 2^90, non-finite ones now and then, one constant
 *            value, zeros of both signs, near the largest finite value; data uniform with NaN,
 *            constant (one hot bin) or sorted
 *   known    answers known exactly: 1e300 + 1 - 1e300 = 1, 2^-1074 x 3, f32 subnormals, +inf
 *            and -inf (NaN), NaN weights, DBL_MAX x 2 (+inf), DBL_MAX x 2 - DBL_MAX, -0.0 x 5
 *            (+0), 2^20 x FLT_MAX; each under every weighted strategy, then against the CPU
 *   many     2^20 + 7 samples in one bin: f32 weight 1.5 (and its square 2.25) and f64 weights
 *            2^-1074, several flush rounds per work-group; against the formula and the CPU
 *   streams  weighted streams cut into random chunks against one CPU call
 *   knobs    a context with 32-bit counters and the 64-bit additions made of two 32-bit atomics
 *            (GPUHIST_OPENCL_COUNTERS32=1) and 4 KiB jobs (GPUHIST_OPENCL_CHUNK_BYTES): random
 *            requests, known answers and streams again
 * Seed: GPUHIST_TEST_SEED (printed), a fixed one by default. Cases per run: GPUHIST_WOCL_CASES.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "gpuhist.h"
#include "check.h"
#include "half_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x5EED0F3A9E3779B9ull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static uint64_t below(uint64_t n) { return n ? rnd() % n : 0; }
static double unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

static gpuhist_ctx *make_ctx(gpuhist_backend b)
{
    gpuhist_ctx *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, b);
    if (b == GPUHIST_BACKEND_OPENCL && (st == GPUHIST_ERROR_NO_DEVICE ||
                                        st == GPUHIST_ERROR_UNSUPPORTED)) {
        printf("no OpenCL device: skipped (%s)\n", gpuhist_last_error(ctx));
        check_skip("no OpenCL device");
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create: %s\n", gpuhist_status_string(st));
        exit(1);
    }
    return ctx;
}

static const char *const ocl_names[] = {"auto", "opencl-weighted-local", "opencl-weighted-global"};
#define NNAMES 3

/* ---- one request ---------------------------------------------------------------------------- */

typedef struct request {
    gpuhist_dtype dtype, wdtype;
    uint32_t channels, mask, bins;
    gpuhist_bin_kind kind;
    gpuhist_outliers outliers;
    uint64_t row_length, rows;
    size_t stride; /* bytes between rows */
    int squares;
    unsigned char *data; /* rows * stride bytes */
    unsigned char *w;    /* pixels * weight size */
    double *edges;
} request;

static uint64_t pixels_of(const request *q) { return q->row_length * q->rows; }
static uint32_t active_of(const request *q)
{
    return q->mask ? (uint32_t)__builtin_popcount(q->mask) : q->channels;
}
static void request_free(request *q)
{
    free(q->data);
    free(q->w);
    free(q->edges);
    memset(q, 0, sizeof *q);
}

static gpuhist_bin_spec spec_of(const request *q)
{
    const int half = q->dtype == GPUHIST_F16 || q->dtype == GPUHIST_BF16;
    gpuhist_bin_spec b = q->kind == GPUHIST_BINS_EVEN    ? gpuhist_bins_even(q->bins, -1.0, 3.0)
                         : q->kind == GPUHIST_BINS_EDGES ? gpuhist_bins_edges(q->bins, q->edges)
                                                         : gpuhist_bins_integer(q->bins, -2);
    if (half && q->kind == GPUHIST_BINS_EVEN && q->bins > 1000) /* float16 edges stay distinct */
        b = gpuhist_bins_even(q->bins, -1.0, 1000.0);
    b.outliers = q->outliers;
    return b;
}

static gpuhist_samples samples_of(const request *q, const void *d, const void *w)
{
    gpuhist_samples s = gpuhist_samples_1d(d, q->dtype, pixels_of(q));
    s.channels = q->channels;
    s.channel_mask = q->mask;
    if (q->rows > 1) {
        s.rows = q->rows;
        s.row_length = q->row_length;
        s.row_stride = q->stride;
    }
    s.weights = w;
    s.weight_dtype = q->wdtype;
    return s;
}

typedef struct outcome {
    gpuhist_status st;
    size_t n, words;
    uint64_t *counts;
    double *sums, *sq;
    int64_t *state;
    gpuhist_result r;
} outcome;

static void outcome_init(outcome *o, const request *q)
{
    memset(o, 0, sizeof *o);
    o->n = (size_t)q->bins * active_of(q);
    o->words = gpuhist_weight_state_words(q->bins, active_of(q), q->wdtype, q->squares);
    o->counts = malloc(o->n * sizeof *o->counts);
    o->sums = malloc(o->n * sizeof *o->sums);
    o->sq = malloc(o->n * sizeof *o->sq);
    o->state = malloc((o->words ? o->words : 1) * sizeof *o->state);
    for (size_t i = 0; i < o->n; ++i) {
        o->counts[i] = 0xdeadbeefull;
        o->sums[i] = o->sq[i] = -7.0;
    }
    for (size_t i = 0; i < o->words; ++i)
        o->state[i] = 77;
    o->r = gpuhist_result_host(o->counts);
    o->r.sums = o->sums;
    o->r.sums_squared = q->squares ? o->sq : NULL;
    o->r.weight_state = o->state;
}

static void outcome_free(outcome *o)
{
    free(o->counts);
    free(o->sums);
    free(o->sq);
    free(o->state);
}

static void run(gpuhist_ctx *ctx, const request *q, outcome *o)
{
    outcome_init(o, q);
    const gpuhist_samples s = samples_of(q, q->data, q->w);
    const gpuhist_bin_spec b = spec_of(q);
    o->st = gpuhist_histogram(ctx, &s, &b, &o->r);
}

static size_t differ_f64(const double *a, const double *b, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        if (memcmp(&a[i], &b[i], 8) != 0 && bad++ < 4)
            CHECK_MSG(0, "[%zu] = %a, expected %a", i, b[i], a[i]);
    return bad;
}

/* b (OpenCL) against a (the CPU backend), bit for bit. */
static void same(const outcome *a, const outcome *b, int squares)
{
    if (!CHECK_MSG(a->st == GPUHIST_OK && b->st == GPUHIST_OK, "status %d / %d", (int)a->st,
                   (int)b->st))
        return;
    size_t bad = 0;
    for (size_t i = 0; i < a->n; ++i)
        if (a->counts[i] != b->counts[i] && bad++ < 4)
            CHECK_MSG(0, "count[%zu] = %llu, expected %llu", i,
                      (unsigned long long)b->counts[i], (unsigned long long)a->counts[i]);
    CHECK_MSG(bad == 0, "%zu counts differ", bad);
    for (uint32_t k = 0; k < a->r.channels; ++k) {
        CHECK_EQ_U64(b->r.underflow[k], a->r.underflow[k]);
        CHECK_EQ_U64(b->r.overflow[k], a->r.overflow[k]);
        CHECK_EQ_U64(b->r.nan[k], a->r.nan[k]);
        CHECK_EQ_U64(b->r.total[k], a->r.total[k]);
    }
    CHECK_MSG(differ_f64(a->sums, b->sums, a->n) == 0, "weight sums differ in their bits");
    if (squares)
        CHECK_MSG(differ_f64(a->sq, b->sq, a->n) == 0, "sums of squares differ in their bits");
    CHECK_MSG(memcmp(a->state, b->state, a->words * sizeof *a->state) == 0,
              "the exact weight states differ");
}

/* ---- random requests ------------------------------------------------------------------------ */

static double weight_value(int mode, size_t i)
{
    const double sign = (rnd() & 1) ? -1.0 : 1.0;
    switch (mode) {
    case 0: return sign * ldexp(1.0 + unit(), (int)below(12) - 6);
    case 1: return sign * ldexp(unit(), (int)below(2200) - 1100); /* f32: 0, subnormal or inf */
    case 2: { /* cancelling pairs and small change */
        const double big = ldexp(1.0 + (double)(i / 2 % 7), 90);
        return (i & 1) ? -big : (i % 5 == 0 ? unit() : big);
    }
    case 3: {
        const uint64_t r = below(64);
        return r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : sign * unit();
    }
    case 4: return 1.5;
    case 5: return (rnd() & 1) ? -0.0 : 0.0;
    default: return sign * (1.0 - unit() * 1e-3) * (below(2) ? DBL_MAX : (double)FLT_MAX);
    }
}

static void put_weight(request *q, size_t i, double v)
{
    if (q->wdtype == GPUHIST_F32) {
        const float f = (float)v;
        memcpy(q->w + i * 4, &f, 4);
    } else {
        memcpy(q->w + i * 8, &v, 8);
    }
}

/* A sample value for data mode: 0 uniform over the range and outside (NaN now and then),
 * 1 constant, 2 sorted. */
static double data_value(int mode, size_t i, size_t n)
{
    if (mode == 1)
        return 0.7;
    if (mode == 2)
        return -1.5 + 5.0 * (double)i / (double)(n ? n : 1);
    return below(40) == 0 ? NAN : -1.5 + 5.0 * unit();
}

static void store(gpuhist_dtype dt, unsigned char *p, double x)
{
    switch (dt) {
    case GPUHIST_F32: { const float f = (float)x; memcpy(p, &f, 4); break; }
    case GPUHIST_F64: memcpy(p, &x, 8); break;
    case GPUHIST_F16: { const uint16_t h = test_f16_bits(x); memcpy(p, &h, 2); break; }
    case GPUHIST_BF16: { const uint16_t h = test_bf16_bits(x); memcpy(p, &h, 2); break; }
    default: {
        /* integers: the range -2 .. 3000 scaled from [-1.5, 3.5) */
        const int64_t v = isnan(x) ? 0 : (int64_t)floor((x + 1.5) * 700.0) - 2;
        switch (dt) {
        case GPUHIST_U8: { const uint8_t u = (uint8_t)v; memcpy(p, &u, 1); break; }
        case GPUHIST_I8: { const int8_t u = (int8_t)v; memcpy(p, &u, 1); break; }
        case GPUHIST_U16: { const uint16_t u = (uint16_t)v; memcpy(p, &u, 2); break; }
        case GPUHIST_I16: { const int16_t u = (int16_t)v; memcpy(p, &u, 2); break; }
        case GPUHIST_U32: { const uint32_t u = (uint32_t)v; memcpy(p, &u, 4); break; }
        case GPUHIST_I32: { const int32_t u = (int32_t)v; memcpy(p, &u, 4); break; }
        case GPUHIST_U64: { const uint64_t u = (uint64_t)v; memcpy(p, &u, 8); break; }
        default: memcpy(p, &v, 8); break;
        }
    }
    }
}

/* A random request; `contiguous`: one row (streams take whole contiguous pixels); `small`:
 * at most 70000 pixels (4 KiB jobs). */
static void random_request(request *q, int index, int contiguous, int small)
{
    static const gpuhist_dtype dts[] = {
        GPUHIST_F32, GPUHIST_F32, GPUHIST_F64, GPUHIST_U8,  GPUHIST_I8,  GPUHIST_U16, GPUHIST_I16,
        GPUHIST_U32, GPUHIST_I32, GPUHIST_I64, GPUHIST_U64, GPUHIST_F16, GPUHIST_BF16};
    static const uint32_t bin_choices[] = {1, 2, 7, 64, 256, 256, 700, 3000};
    static const uint64_t sizes[] = {1, 31, 1000, 4099, 65537, 300001};
    memset(q, 0, sizeof *q);
    q->dtype = dts[below(sizeof dts / sizeof dts[0])];
    q->wdtype = below(3) ? GPUHIST_F32 : GPUHIST_F64;
    q->bins = bin_choices[below(sizeof bin_choices / sizeof bin_choices[0])];
    const int is_float = q->dtype == GPUHIST_F32 || q->dtype == GPUHIST_F64 ||
                         q->dtype == GPUHIST_F16 || q->dtype == GPUHIST_BF16;
    q->kind = (gpuhist_bin_kind)below(3);
    if (q->kind == GPUHIST_BINS_INTEGER && is_float)
        q->kind = GPUHIST_BINS_EVEN;
    if (q->kind == GPUHIST_BINS_EDGES) {
        const double lo = is_float ? -1.0 : -2.0, hi = is_float ? 3.0 : 3000.0;
        q->edges = malloc(((size_t)q->bins + 1) * sizeof *q->edges);
        for (uint32_t i = 0; i <= q->bins; ++i) /* uneven: quadratic */
            q->edges[i] = lo + (hi - lo) * ((double)i / q->bins) * ((double)i / q->bins);
    }
    q->outliers = below(2) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
    q->channels = below(3) ? 1 : 1 + (uint32_t)below(4);
    q->mask = q->channels > 1 && below(2) ? (uint32_t)(1 + below((1u << q->channels) - 1)) : 0;
    q->squares = (int)below(2);
    q->row_length = sizes[below(small ? 4 : sizeof sizes / sizeof sizes[0])];
    q->rows = 1;
    const size_t size = gpuhist_dtype_size(q->dtype), pb = (size_t)q->channels * size;
    if (!contiguous && below(4) == 0 && q->row_length > 31) { /* a strided ROI */
        q->rows = 1 + below(7);
        q->row_length = q->row_length / q->rows + 1;
    }
    q->stride = (size_t)q->row_length * pb + (q->rows > 1 ? pb * below(5) + below(3) : 0);
    q->data = calloc(q->stride * q->rows + 1, 1);
    const int dmode = below(4) == 0 ? 1 : (int)below(3);
    const int wmode = (int)below(7);
    const uint64_t n = pixels_of(q);
    for (uint64_t r = 0; r < q->rows; ++r)
        for (uint64_t px = 0; px < q->row_length; ++px)
            for (uint32_t c = 0; c < q->channels; ++c)
                store(q->dtype, q->data + r * q->stride + (px * q->channels + c) * size,
                      data_value(dmode, (size_t)(r * q->row_length + px), (size_t)n));
    q->w = malloc(n * gpuhist_dtype_size(q->wdtype) + 1);
    for (uint64_t i = 0; i < n; ++i)
        put_weight(q, (size_t)i, weight_value(wmode, (size_t)i));
    check_context("request %d: %s x %u channel(s) mask %x, %u %s bins, %s, %llu x %llu pixels, "
                  "%s weights mode %d%s, data mode %d",
                  index, gpuhist_dtype_name(q->dtype), q->channels, q->mask, q->bins,
                  q->kind == GPUHIST_BINS_EVEN    ? "even"
                  : q->kind == GPUHIST_BINS_EDGES ? "edge"
                                                  : "integer",
                  q->outliers == GPUHIST_OUTLIERS_CLAMP ? "clamp" : "drop",
                  (unsigned long long)q->rows, (unsigned long long)q->row_length,
                  gpuhist_dtype_name(q->wdtype), wmode, q->squares ? ", squares" : "", dmode);
}

/* The request on the CPU, then on OpenCL under every weighted strategy and auto. */
static void check_request(gpuhist_ctx *cpu, gpuhist_ctx *ocl, const request *q)
{
    outcome ref;
    run(cpu, q, &ref);
    if (ref.st != GPUHIST_OK) { /* a request the library refuses: OpenCL refuses it alike */
        CHECK_MSG(ref.st == GPUHIST_ERROR_INVALID_ARGUMENT, "cpu: %s", gpuhist_last_error(cpu));
        outcome o;
        run(ocl, q, &o);
        CHECK_EQ_INT(o.st, ref.st);
        outcome_free(&o);
        outcome_free(&ref);
        return;
    }
    for (int k = 0; k < NNAMES; ++k) {
        const char *name = ocl_names[k];
        if (!CHECK_EQ_INT(gpuhist_set_strategy(ocl, name), GPUHIST_OK))
            continue;
        outcome o;
        run(ocl, q, &o);
        if (o.st == GPUHIST_ERROR_UNSUPPORTED && k == 1) {
            /* records past the local budget: the forced local strategy says so */
            CHECK_CONTAINS(gpuhist_last_error(ocl), "opencl-weighted-local cannot histogram");
            outcome_free(&o);
            continue;
        }
        if (CHECK_MSG(o.st == GPUHIST_OK, "%s: %s", name, gpuhist_last_error(ocl))) {
            if (k)
                CHECK_EQ_STR(o.r.strategy, name);
            else
                CHECK(strncmp(o.r.strategy, "opencl-weighted-", 16) == 0);
            same(&ref, &o, q->squares);
        }
        outcome_free(&o);
    }
    gpuhist_set_strategy(ocl, "auto");
    outcome_free(&ref);
}

static int cases_from_env(int fallback)
{
    const char *e = getenv("GPUHIST_WOCL_CASES");
    return e && atoi(e) > 0 ? atoi(e) : fallback;
}

static void random_cases(gpuhist_ctx *cpu, gpuhist_ctx *ocl, int cases, int base, int small)
{
    for (int i = 0; i < cases; ++i) {
        request q;
        random_request(&q, base + i, 0, small);
        check_request(cpu, ocl, &q);
        request_free(&q);
    }
}

static void case_random(void)
{
    gpuhist_ctx *ocl = make_ctx(GPUHIST_BACKEND_OPENCL), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    random_cases(cpu, ocl, cases_from_env(40), 0, 0);
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
}

/* ---- known answers -------------------------------------------------------------------------- */

/* f32 samples of 0.5 (bin 1 of [-1, 3) in 4) with the weights w[0..n). */
static void one_bin(request *q, gpuhist_dtype wd, const double *w, size_t n)
{
    memset(q, 0, sizeof *q);
    q->dtype = GPUHIST_F32;
    q->wdtype = wd;
    q->channels = 1;
    q->bins = 4;
    q->kind = GPUHIST_BINS_EVEN;
    q->outliers = GPUHIST_OUTLIERS_DROP;
    q->row_length = n;
    q->rows = 1;
    q->stride = n * 4;
    q->squares = 1;
    q->data = malloc(n * 4 + 1);
    q->w = malloc(n * 8 + 1);
    for (size_t i = 0; i < n; ++i) {
        store(GPUHIST_F32, q->data + i * 4, 0.5);
        put_weight(q, i, w[i]);
    }
}

static void known(gpuhist_ctx *cpu, gpuhist_ctx *ocl, const char *what, gpuhist_dtype wd,
                  const double *w, size_t n, double sum)
{
    check_context("known: %s", what);
    request q;
    one_bin(&q, wd, w, n);
    for (int k = 0; k < NNAMES; ++k) {
        gpuhist_set_strategy(ocl, ocl_names[k]);
        outcome o;
        run(ocl, &q, &o);
        if (CHECK_MSG(o.st == GPUHIST_OK, "%s: %s", ocl_names[k], gpuhist_last_error(ocl))) {
            CHECK_EQ_F64_BITS(o.sums[1], sum);
            CHECK_EQ_U64(o.counts[1], n);
            CHECK_EQ_F64_BITS(o.sums[0], 0.0);
        }
        outcome_free(&o);
    }
    gpuhist_set_strategy(ocl, "auto");
    check_request(cpu, ocl, &q);
    request_free(&q);
}

static void known_answers(gpuhist_ctx *cpu, gpuhist_ctx *ocl)
{
    const double tiny = ldexp(1.0, -1074);
    const double a[] = {1e300, 1.0, -1e300};
    known(cpu, ocl, "1e300 + 1 - 1e300", GPUHIST_F64, a, 3, 1.0);
    const double b[] = {tiny, tiny, tiny};
    known(cpu, ocl, "3 x 2^-1074", GPUHIST_F64, b, 3, 3 * tiny);
    const double c[] = {ldexp(1.0, -149), ldexp(3.0, -149)};
    known(cpu, ocl, "f32 subnormals", GPUHIST_F32, c, 2, ldexp(4.0, -149));
    const double d[] = {1.0, INFINITY, -INFINITY};
    known(cpu, ocl, "+inf and -inf", GPUHIST_F32, d, 3, NAN);
    const double e[] = {1.0, NAN};
    known(cpu, ocl, "NaN", GPUHIST_F64, e, 2, NAN);
    const double f[] = {1.0, -INFINITY, 5.0};
    known(cpu, ocl, "-inf", GPUHIST_F64, f, 3, -INFINITY);
    const double g[] = {DBL_MAX, DBL_MAX};
    known(cpu, ocl, "DBL_MAX x 2", GPUHIST_F64, g, 2, INFINITY);
    const double h[] = {DBL_MAX, DBL_MAX, -DBL_MAX};
    known(cpu, ocl, "DBL_MAX x 2 - DBL_MAX", GPUHIST_F64, h, 3, DBL_MAX);
    const double z[] = {-0.0, -0.0, -0.0, -0.0, -0.0};
    known(cpu, ocl, "-0.0 x 5", GPUHIST_F32, z, 5, 0.0);
    const double t[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    known(cpu, ocl, "0.1 x 10 (f64)", GPUHIST_F64, t, 10, 1.0);
    const size_t nf = (size_t)1 << 20;
    double *fm = malloc(nf * sizeof *fm);
    for (size_t i = 0; i < nf; ++i)
        fm[i] = (double)FLT_MAX;
    known(cpu, ocl, "FLT_MAX x 2^20", GPUHIST_F32, fm, nf, (double)FLT_MAX * 1048576.0);
    free(fm);
}

static void case_known(void)
{
    gpuhist_ctx *ocl = make_ctx(GPUHIST_BACKEND_OPENCL), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    known_answers(cpu, ocl);
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
}

/* ---- many samples in one bin ---------------------------------------------------------------- */

static void case_many(void)
{
    gpuhist_ctx *ocl = make_ctx(GPUHIST_BACKEND_OPENCL), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    const size_t n = ((size_t)1 << 20) + 7;
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; ++i)
        w[i] = 1.5;
    request q;
    one_bin(&q, GPUHIST_F32, w, n);
    for (int k = 0; k < NNAMES; ++k) {
        check_context("many: 2^20 + 7 x 1.5 (f32), %s", ocl_names[k]);
        gpuhist_set_strategy(ocl, ocl_names[k]);
        outcome o;
        run(ocl, &q, &o);
        if (CHECK_MSG(o.st == GPUHIST_OK, "%s", gpuhist_last_error(ocl))) {
            CHECK_EQ_U64(o.counts[1], n);
            CHECK_EQ_F64_BITS(o.sums[1], 1.5 * (double)n);
            CHECK_EQ_F64_BITS(o.sq[1], 2.25 * (double)n);
        }
        outcome_free(&o);
    }
    check_context("many: 2^20 + 7 x 1.5 (f32) against the cpu");
    gpuhist_set_strategy(ocl, "auto");
    check_request(cpu, ocl, &q);
    request_free(&q);
    for (size_t i = 0; i < n; ++i)
        w[i] = ldexp(1.0, -1074);
    one_bin(&q, GPUHIST_F64, w, n);
    for (int k = 0; k < NNAMES; ++k) {
        check_context("many: 2^20 + 7 x 2^-1074 (f64), %s", ocl_names[k]);
        gpuhist_set_strategy(ocl, ocl_names[k]);
        outcome o;
        run(ocl, &q, &o);
        if (CHECK_MSG(o.st == GPUHIST_OK, "%s", gpuhist_last_error(ocl))) {
            CHECK_EQ_U64(o.counts[1], n);
            CHECK_EQ_F64_BITS(o.sums[1], ldexp((double)n, -1074));
            CHECK_EQ_F64_BITS(o.sq[1], 0.0);
        }
        outcome_free(&o);
    }
    gpuhist_set_strategy(ocl, "auto");
    request_free(&q);
    free(w);
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
}

/* ---- streams --------------------------------------------------------------------------------- */

static void stream_request(gpuhist_ctx *cpu, gpuhist_ctx *ocl, const request *q, int index)
{
    outcome ref;
    run(cpu, q, &ref);
    if (ref.st != GPUHIST_OK) { /* refused requests: case_random */
        outcome_free(&ref);
        return;
    }
    const size_t pb = (size_t)q->channels * gpuhist_dtype_size(q->dtype);
    const size_t ws = gpuhist_dtype_size(q->wdtype);
    const uint64_t n = pixels_of(q);
    for (int k = 0; k < NNAMES; ++k) {
        check_context("streams %d: %s, %s x %u, %u bins, %s weights, %llu pixels", index,
                      ocl_names[k], gpuhist_dtype_name(q->dtype), q->channels, q->bins,
                      gpuhist_dtype_name(q->wdtype), (unsigned long long)n);
        gpuhist_set_strategy(ocl, ocl_names[k]);
        gpuhist_samples lay = samples_of(q, NULL, q->w);
        lay.count = 0;
        lay.stream_no_squares = !q->squares; /* no square records when the finish takes none */
        const gpuhist_bin_spec b = spec_of(q);
        gpuhist_stream *st = NULL;
        gpuhist_status rc = gpuhist_stream_begin(ocl, &lay, &b, GPUHIST_MEMORY_HOST, &st);
        if (rc == GPUHIST_ERROR_UNSUPPORTED && k == 1) /* past the local budget */
            continue;
        if (!CHECK_MSG(rc == GPUHIST_OK, "begin: %s", gpuhist_last_error(ocl)))
            continue;
        uint64_t done = 0;
        while (done < n && rc == GPUHIST_OK) {
            uint64_t c = 1 + below(n / 3 + 2);
            if (c > n - done)
                c = n - done;
            rc = gpuhist_stream_feed_weighted(st, q->data + done * pb, q->w + done * ws, c);
            done += c;
        }
        if (!CHECK_MSG(rc == GPUHIST_OK, "feed: %s", gpuhist_stream_error(st))) {
            gpuhist_stream_abort(st);
            continue;
        }
        outcome o;
        outcome_init(&o, q);
        o.st = gpuhist_stream_finish(st, &o.r);
        CHECK_MSG(o.st == GPUHIST_OK, "finish: %s", gpuhist_last_error(ocl));
        same(&ref, &o, q->squares);
        outcome_free(&o);
    }
    gpuhist_set_strategy(ocl, "auto");
    outcome_free(&ref);
}

static void stream_cases(gpuhist_ctx *cpu, gpuhist_ctx *ocl, int cases, int base, int small)
{
    for (int i = 0; i < cases; ++i) {
        request q;
        random_request(&q, base + i, 1, small);
        stream_request(cpu, ocl, &q, base + i);
        request_free(&q);
    }
}

static void case_streams(void)
{
    gpuhist_ctx *ocl = make_ctx(GPUHIST_BACKEND_OPENCL), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    stream_cases(cpu, ocl, cases_from_env(40) / 2, 1000, 0);
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
}

/* ---- 32-bit counters, emulated 64-bit additions, tiny jobs ---------------------------------- */

static void case_knobs(void)
{
    setenv("GPUHIST_OPENCL_COUNTERS32", "1", 1);
    setenv("GPUHIST_OPENCL_CHUNK_BYTES", "4096", 1);
    gpuhist_ctx *ocl = make_ctx(GPUHIST_BACKEND_OPENCL), *cpu = make_ctx(GPUHIST_BACKEND_CPU);
    unsetenv("GPUHIST_OPENCL_COUNTERS32");
    unsetenv("GPUHIST_OPENCL_CHUNK_BYTES");
    known_answers(cpu, ocl);
    random_cases(cpu, ocl, cases_from_env(40) / 4, 2000, 1);
    stream_cases(cpu, ocl, cases_from_env(40) / 8, 3000, 1);
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
}

int main(int argc, char **argv)
{
    const char *seed = getenv("GPUHIST_TEST_SEED");
    if (seed && *seed)
        rng_state = strtoull(seed, NULL, 0) | 1u;
    printf("test_weighted_opencl: seed 0x%llx (GPUHIST_TEST_SEED)\n",
           (unsigned long long)rng_state);
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {
        {"random", case_random}, {"known", case_known}, {"many", case_many},
        {"streams", case_streams}, {"knobs", case_knobs},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        if (argc == 2 && !strcmp(argv[1], cases[i].name)) {
            cases[i].run();
            return check_exit();
        }
    fprintf(stderr, "usage: %s CASE, CASE one of:", argv[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}
