/*
 * test_semantics.c - one unit test per rule of docs/SEMANTICS.md (samples, bins, outliers and
 * tallies, auto range, validation), through the public API only.
 *
 * Every expected count here is worked out by hand (or, for the edge sweeps, by an independent
 * implementation of NumPy's edge formula and a linear search written in this file), never read
 * back from the library. The bin tests run once per CPU strategy (forced by name) and once with
 * the automatic choice, so a CPU strategy that breaks a rule fails here with its name attached;
 * the validation and API tests run once.
 *
 * Build note: compiled with -ffp-contract=off, like the library, so that `i * step + lower`
 * below is two roundings (NumPy's) and not one fused multiply-add.
 */
#include "gpuhist.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TWO53 9007199254740992.0
#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0
#define I53 ((int64_t)9007199254740992LL)

static gpuhist_ctx *g_ctx;
static const char *g_strategy = "auto"; /* forced CPU strategy, or "auto" */
static unsigned long g_skipped;

/* Bytes per sample, written down independently of gpuhist_dtype_size(). */
static const size_t SZ[GPUHIST_DTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

static int is_float(gpuhist_dtype t) { return t == GPUHIST_F32 || t == GPUHIST_F64; }
static int is_signed(gpuhist_dtype t)
{
    return t == GPUHIST_I8 || t == GPUHIST_I16 || t == GPUHIST_I32 || t == GPUHIST_I64;
}

/* Store v (integral and representable, or any value for floats) as sample i of type t. */
static void put(gpuhist_dtype t, void *base, size_t i, double v)
{
    unsigned char *p = (unsigned char *)base + i * SZ[t];
    switch (t) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I8: { int8_t x = (int8_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I16: { int16_t x = (int16_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U64: { uint64_t x = (uint64_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I64: { int64_t x = (int64_t)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_F32: { float x = (float)v; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_F64: memcpy(p, &v, sizeof v); break;
    default: break;
    }
}

/* Store the smallest (lowest) or the largest value of type t as sample i. */
static void put_extreme(gpuhist_dtype t, void *base, size_t i, int largest)
{
    unsigned char *p = (unsigned char *)base + i * SZ[t];
    switch (t) {
    case GPUHIST_U8: { uint8_t x = largest ? UINT8_MAX : 0; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I8: { int8_t x = largest ? INT8_MAX : INT8_MIN; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U16: { uint16_t x = largest ? UINT16_MAX : 0; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I16: { int16_t x = largest ? INT16_MAX : INT16_MIN; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U32: { uint32_t x = largest ? UINT32_MAX : 0; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I32: { int32_t x = largest ? INT32_MAX : INT32_MIN; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_U64: { uint64_t x = largest ? UINT64_MAX : 0; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_I64: { int64_t x = largest ? INT64_MAX : INT64_MIN; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_F32: { float x = largest ? FLT_MAX : -FLT_MAX; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_F64: { double x = largest ? DBL_MAX : -DBL_MAX; memcpy(p, &x, sizeof x); break; }
    default: break;
    }
}

static uint32_t n_hists(const gpuhist_samples *s)
{
    uint32_t c = s->channels ? s->channels : 1, n = 0;
    if (s->channel_mask) {
        for (uint32_t k = 0; k < c; ++k)
            n += (s->channel_mask >> k) & 1u;
        return n;
    }
    return s->active_channels ? s->active_channels : c;
}

static uint64_t n_pixels(const gpuhist_samples *s)
{
    return s->rows ? s->rows * s->row_length : s->count;
}

/*
 * Run one histogram on g_ctx with g_strategy. @return 1 when it ran (then the result is checked
 * for the invariants that hold for every input), 0 when the forced strategy does not take this
 * spec (UNSUPPORTED: counted as skipped) or when it failed (a check failure is recorded).
 * `counts` needs bins * histograms entries, `edges` bins + 1; both are filled with garbage first
 * so that an entry the library forgets to write shows up.
 */
static int hist(const gpuhist_samples *s, const gpuhist_bin_spec *b, uint64_t *counts,
                double *edges, gpuhist_result *r)
{
    uint32_t nh = n_hists(s);
    memset(counts, 0xA5, (size_t)b->bins * nh * sizeof *counts);
    if (edges)
        memset(edges, 0xFF, ((size_t)b->bins + 1) * sizeof *edges); /* NaN pattern */
    *r = gpuhist_result_host(counts);
    r->edges = edges;
    gpuhist_status st = gpuhist_histogram(g_ctx, s, b, r);
    if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(g_strategy, "auto") != 0) {
        ++g_skipped;
        return 0;
    }
    if (!CHECK_MSG(st == GPUHIST_OK, "gpuhist_histogram returned %d (%s): %s", (int)st,
                   gpuhist_status_string(st), gpuhist_last_error(g_ctx)))
        return 0;
    if (strcmp(g_strategy, "auto") != 0)
        CHECK_EQ_STR(r->strategy, g_strategy);
    CHECK(r->strategy != NULL);
    CHECK_EQ_INT(r->backend, GPUHIST_BACKEND_CPU);
    CHECK_EQ_U64(r->bins, b->bins);
    CHECK_EQ_U64(r->channels, nh);
    for (uint32_t k = 0; k < nh && k < GPUHIST_MAX_CHANNELS; ++k) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < b->bins; ++i)
            sum += counts[(size_t)k * b->bins + i];
        CHECK_EQ_U64(r->total[k], n_pixels(s));
        /* Every sample is in exactly one of: a bin, underflow, overflow, NaN (CLAMP moves the
         * outliers into the end bins and still reports them). */
        if (b->outliers == GPUHIST_OUTLIERS_CLAMP)
            CHECK_EQ_U64(sum + r->nan[k], r->total[k]);
        else
            CHECK_EQ_U64(sum + r->underflow[k] + r->overflow[k] + r->nan[k], r->total[k]);
    }
    return 1;
}

static int check_counts_(const char *file, int line, const uint64_t *got, const uint64_t *exp,
                         size_t n)
{
    ++check_count_;
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != exp[i]) {
            check_fail_(file, line, "counts[%zu] = %" PRIu64 ", expected %" PRIu64, i, got[i],
                        exp[i]);
            return 0;
        }
    }
    return 1;
}
#define CHECK_COUNTS(got, exp, n) check_counts_(__FILE__, __LINE__, (got), (exp), (n))

static void check_tally_(const char *file, int line, const gpuhist_result *r, unsigned k,
                         uint64_t under, uint64_t over, uint64_t nan_, uint64_t total)
{
    check_eq_u64_(file, line, "underflow", "expected", r->underflow[k], under);
    check_eq_u64_(file, line, "overflow", "expected", r->overflow[k], over);
    check_eq_u64_(file, line, "nan", "expected", r->nan[k], nan_);
    check_eq_u64_(file, line, "total", "expected", r->total[k], total);
}
#define CHECK_TALLY(r, k, under, over, nan_, total)                                            \
    check_tally_(__FILE__, __LINE__, (r), (k), (under), (over), (nan_), (total))

/* ---- independent edge computation and bin lookup ----------------------------------------------- */

/* NumPy's linspace edges for EVEN bins, rounded to the edge type (float for f32 samples). */
static void my_even_edges(uint32_t bins, double lower, double upper, int f32, double *e)
{
    double delta = upper - lower;
    double step = delta / bins;
    for (uint32_t i = 0; i < bins; ++i) {
        double v;
        if (step == 0.0) {
            double t = (double)i / (double)bins;
            v = t * delta;
            v = v + lower;
        } else {
            v = (double)i * step;
            v = v + lower;
        }
        e[i] = v;
    }
    e[bins] = upper;
    if (f32)
        for (uint32_t i = 0; i <= bins; ++i)
            e[i] = (double)(float)e[i];
}

enum { SLOT_UNDER = -1, SLOT_OVER = -2, SLOT_NAN = -3 };

/* Bin of x (exactly representable as a double) by linear search: the largest i with e[i] <= x. */
static int my_slot(const double *e, uint32_t bins, int last_inclusive, double x)
{
    if (isnan(x))
        return SLOT_NAN;
    if (x < e[0])
        return SLOT_UNDER;
    if (x > e[bins] || (x == e[bins] && !last_inclusive))
        return SLOT_OVER;
    if (x == e[bins])
        return (int)bins - 1;
    for (int i = (int)bins - 1; i >= 0; --i)
        if (e[i] <= x)
            return i;
    return SLOT_UNDER; /* not reached */
}

/* ---- tests: API basics ----------------------------------------------------------------------- */

static void test_version_status(void)
{
    check_context("version/status");
    CHECK_EQ_STR(gpuhist_version(), GPUHIST_VERSION_STRING);
    CHECK_EQ_U64(gpuhist_version_number(), GPUHIST_VERSION_NUMBER);
    CHECK_EQ_U64(GPUHIST_VERSION_NUMBER, 100);
    const char *s[8];
    for (int i = 0; i < 8; ++i) {
        s[i] = gpuhist_status_string((gpuhist_status)i);
        if (CHECK_MSG(s[i] != NULL && s[i][0] != 0, "status string %d empty", i))
            for (int j = 0; j < i; ++j)
                CHECK_MSG(strcmp(s[i], s[j]) != 0, "status %d and %d share \"%s\"", i, j, s[i]);
    }
    CHECK(s[0] && strstr(s[0], "ok") != NULL);
    CHECK(s[1] && strstr(s[1], "invalid") != NULL);
    const char *bad = gpuhist_status_string((gpuhist_status)1234);
    CHECK(bad != NULL && bad[0] != 0);
}

static void test_dtype_names(void)
{
    static const char *shortn[] = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32",
                                   "f64"};
    static const char *longn[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32",
                                  "uint64", "int64", "float32", "float64"};
    check_context("dtype names");
    for (int t = 0; t < GPUHIST_DTYPE_COUNT; ++t) {
        gpuhist_dtype d = (gpuhist_dtype)99;
        CHECK_EQ_STR(gpuhist_dtype_name((gpuhist_dtype)t), shortn[t]);
        CHECK_EQ_U64(gpuhist_dtype_size((gpuhist_dtype)t), SZ[t]);
        CHECK(gpuhist_dtype_parse(shortn[t], &d) == 1 && d == (gpuhist_dtype)t);
        d = (gpuhist_dtype)99;
        CHECK_MSG(gpuhist_dtype_parse(longn[t], &d) == 1 && d == (gpuhist_dtype)t,
                  "parse \"%s\"", longn[t]);
    }
    gpuhist_dtype d = GPUHIST_U8;
    CHECK(gpuhist_dtype_parse("u7", &d) == 0);
    CHECK(gpuhist_dtype_parse("", &d) == 0);
    CHECK(gpuhist_dtype_parse("f16x", &d) == 0);
    CHECK_EQ_STR(gpuhist_dtype_name(GPUHIST_DTYPE_COUNT), "?");
    CHECK_EQ_STR(gpuhist_dtype_name((gpuhist_dtype)-1), "?");
    CHECK_EQ_U64(gpuhist_dtype_size(GPUHIST_DTYPE_COUNT), 0);

    static const char *bn[] = {"auto", "cpu", "cuda", "opencl"};
    for (int b = 0; b < 4; ++b) {
        gpuhist_backend be = (gpuhist_backend)99;
        CHECK_EQ_STR(gpuhist_backend_name((gpuhist_backend)b), bn[b]);
        CHECK(gpuhist_backend_parse(bn[b], &be) == 1 && be == (gpuhist_backend)b);
    }
    gpuhist_backend be;
    CHECK(gpuhist_backend_parse("metal", &be) == 0);
    CHECK(gpuhist_backend_compiled(GPUHIST_BACKEND_AUTO));
    CHECK(gpuhist_backend_compiled(GPUHIST_BACKEND_CPU));

    /* The registry: every entry described, names unique, cpu-reference present. */
    size_t n = gpuhist_strategy_count();
    int have_ref = 0;
    for (size_t i = 0; i < n; ++i) {
        gpuhist_strategy_desc a;
        if (!CHECK(gpuhist_strategy_info(i, &a) == GPUHIST_OK))
            continue;
        CHECK(a.name && a.name[0] && a.seed && a.supports && a.summary);
        CHECK(gpuhist_backend_compiled(a.backend));
        if (a.name && strcmp(a.name, "cpu-reference") == 0)
            have_ref = a.backend == GPUHIST_BACKEND_CPU;
        for (size_t j = 0; j < i; ++j) {
            gpuhist_strategy_desc b;
            if (gpuhist_strategy_info(j, &b) == GPUHIST_OK && a.name && b.name)
                CHECK_MSG(strcmp(a.name, b.name) != 0, "strategy name \"%s\" twice", a.name);
        }
    }
    CHECK(have_ref);
    gpuhist_strategy_desc a;
    CHECK_EQ_INT(gpuhist_strategy_info(n, &a), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(gpuhist_strategy_info(0, NULL), GPUHIST_ERROR_INVALID_ARGUMENT);
}

static void test_compute_edges(void)
{
    check_context("gpuhist_compute_edges");
    double e[11], mine[11];
    gpuhist_bin_spec b = gpuhist_bins_even(10, 0.0, 1.0);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F64, e), GPUHIST_OK);
    my_even_edges(10, 0.0, 1.0, 0, mine);
    for (int i = 0; i <= 10; ++i)
        CHECK_EQ_F64_BITS(e[i], mine[i]);
    CHECK_EQ_F64_BITS(e[3], 0x1.3333333333334p-2); /* 3 * 0.1 = 0.30000000000000004 */
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F32, e), GPUHIST_OK);
    my_even_edges(10, 0.0, 1.0, 1, mine);
    for (int i = 0; i <= 10; ++i)
        CHECK_EQ_F64_BITS(e[i], mine[i]);
    CHECK_EQ_F64_BITS(e[7], (double)0.7f);
    CHECK_EQ_F64_BITS(e[9], (double)0.9f);
    /* Integer samples use double edges. */
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_U8, e), GPUHIST_OK);
    CHECK_EQ_F64_BITS(e[3], 0x1.3333333333334p-2);

    const double ex[4] = {-1.5, 0.0, 2.0, 1e10};
    b = gpuhist_bins_edges(3, ex);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F32, e), GPUHIST_OK);
    for (int i = 0; i < 4; ++i)
        CHECK_EQ_F64_BITS(e[i], ex[i]);

    b = gpuhist_bins_integer(3, -5);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_I16, e), GPUHIST_OK);
    for (int i = 0; i < 4; ++i)
        CHECK_EQ_F64_BITS(e[i], -5.0 + i);

    b = gpuhist_bins_even(0, 0.0, 1.0);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F64, e), GPUHIST_ERROR_INVALID_ARGUMENT);
}

/* ---- tests: binning (run for every CPU strategy) ---------------------------------------------- */

static void test_count_zero(void)
{
    uint64_t counts[4 * 8];
    double edges[9];
    gpuhist_result r;
    char buf[16] = {0};
    for (int t = 0; t < GPUHIST_DTYPE_COUNT; ++t) {
        check_context("%s: count 0, %s", g_strategy, gpuhist_dtype_name((gpuhist_dtype)t));
        gpuhist_samples s = gpuhist_samples_1d(buf, (gpuhist_dtype)t, 0);
        gpuhist_bin_spec b = gpuhist_bins_even(8, 0.0, 8.0);
        if (hist(&s, &b, counts, edges, &r)) {
            static const uint64_t zero[8];
            CHECK_COUNTS(counts, zero, 8);
            CHECK_TALLY(&r, 0, 0, 0, 0, 0);
        }
        /* Several channels, no pixels. */
        s.channels = 4;
        if (hist(&s, &b, counts, edges, &r)) {
            static const uint64_t zero[32];
            CHECK_COUNTS(counts, zero, 32);
            for (unsigned k = 0; k < 4; ++k)
                CHECK_TALLY(&r, k, 0, 0, 0, 0);
        }
        /* No data pointer is needed when there is no data. */
        s = gpuhist_samples_1d(NULL, (gpuhist_dtype)t, 0);
        if (hist(&s, &b, counts, edges, &r))
            CHECK_TALLY(&r, 0, 0, 0, 0, 0);
    }
}

/* The same small data set in every dtype, under EVEN, EDGES and INTEGER bins. */
static void test_all_dtypes(void)
{
    static const double common[] = {0, 1, 2, 3, 5, 7, 8, 9};
    for (int ti = 0; ti < GPUHIST_DTYPE_COUNT; ++ti) {
        gpuhist_dtype t = (gpuhist_dtype)ti;
        unsigned char data[16 * 8];
        size_t n = 0;
        for (size_t i = 0; i < N(common); ++i)
            put(t, data, n++, common[i]);
        int neg = is_signed(t) || is_float(t);
        if (neg) {
            put(t, data, n++, -1.0);
            put_extreme(t, data, n++, 0); /* lowest value: below every range here */
        } else {
            put_extreme(t, data, n++, 1); /* largest value: above every range here */
        }
        if (is_float(t)) {
            put(t, data, n++, 7.75);
            put(t, data, n++, 2.5);
        }
        gpuhist_samples s = gpuhist_samples_1d(data, t, n);
        uint64_t counts[10];
        double edges[11];
        gpuhist_result r;

        /* EVEN(4, 0, 8): edges 0 2 4 6 8. */
        check_context("%s: %s EVEN(4,0,8)", g_strategy, gpuhist_dtype_name(t));
        gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 8.0);
        if (hist(&s, &b, counts, edges, &r)) {
            uint64_t exp[4] = {2, 2, 1, 1}; /* 0 1 | 2 3 | 5 | 7 */
            if (is_float(t)) {
                exp[1] += 1; /* 2.5 */
                exp[3] += 1; /* 7.75 */
            }
            CHECK_COUNTS(counts, exp, 4);
            CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 2 : 3, 0, n);
            for (int i = 0; i <= 4; ++i)
                CHECK_EQ_F64_BITS(edges[i], 2.0 * i);
            CHECK(r.last_edge_inclusive == 0);
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 8.0);
        }

        /* EDGES {-0.5, 1, 2.5, 100}. */
        check_context("%s: %s EDGES", g_strategy, gpuhist_dtype_name(t));
        const double ex[4] = {-0.5, 1.0, 2.5, 100.0};
        b = gpuhist_bins_edges(3, ex);
        if (hist(&s, &b, counts, edges, &r)) {
            uint64_t exp[3] = {1, 2, 5}; /* 0 | 1 2 | 3 5 7 8 9 */
            if (is_float(t))
                exp[2] += 2; /* 2.5 (on the edge) and 7.75 */
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 0 : 1, 0, n);
            for (int i = 0; i < 4; ++i)
                CHECK_EQ_F64_BITS(edges[i], ex[i]);
        }

        /* INTEGER(10, 0): bincount (integers only). */
        if (!is_float(t)) {
            check_context("%s: %s INTEGER(10,0)", g_strategy, gpuhist_dtype_name(t));
            b = gpuhist_bins_integer(10, 0);
            if (hist(&s, &b, counts, edges, &r)) {
                const uint64_t exp[10] = {1, 1, 1, 1, 0, 1, 0, 1, 1, 1};
                CHECK_COUNTS(counts, exp, 10);
                CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 0 : 1, 0, n);
                for (int i = 0; i <= 10; ++i)
                    CHECK_EQ_F64_BITS(edges[i], (double)i);
            }
        }

        /* Auto range over 0 1 2 3 5 7 8 9 alone: [0, 9], edges 0 3 6 9, last edge inclusive. */
        check_context("%s: %s auto(3)", g_strategy, gpuhist_dtype_name(t));
        s.count = N(common);
        b = gpuhist_bins_auto(3);
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[3] = {3, 2, 3};
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, 0, 0, 0, N(common));
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 9.0);
            CHECK(r.last_edge_inclusive != 0);
            for (int i = 0; i <= 3; ++i)
                CHECK_EQ_F64_BITS(edges[i], 3.0 * i);
        }
    }
}

/* NumPy's edges: the cases where a multiply alone is one bin off, and float32 edges. */
static void test_even_numpy(void)
{
    uint64_t counts[10];
    double edges[11], mine[11];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_even(10, 0.0, 1.0);

    /* f64: E = 0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
     * 0.7000000000000001, 0.8, 0.9, 1. (0.3 - 0) * 10 rounds to 3.0, but 0.3 < E[3]: bin 2;
     * likewise 0.6 -> bin 5 and 0.7 -> bin 6 (numpy.histogram agrees). */
    check_context("%s: f64 EVEN(10,0,1) numpy edges", g_strategy);
    const double xd[] = {0.0, 0.1, 0.3, 0x1.3333333333334p-2, 0.6, 0.7, 0.9999999999999999, 1.0};
    gpuhist_samples s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 1, 1, 1, 0, 1, 1, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 1, 0, N(xd));
        my_even_edges(10, 0.0, 1.0, 0, mine);
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        CHECK_EQ_F64_BITS(edges[3], 0x1.3333333333334p-2);
        CHECK_EQ_F64_BITS(edges[6], 0x1.3333333333334p-1);
        CHECK_EQ_F64_BITS(edges[7], 0x1.6666666666667p-1);
    }

    /* f32: the edges are rounded to float: E[7] = (float)0.7000000000000001 = 0.7f, which is
     * BELOW the double edge, so 0.7f is in bin 7 (with double edges it would be bin 6), and the
     * float just below 0.7f is in bin 6. 0.3f and 0.6f sit exactly on their float edges. E[9] =
     * 0.9f < 0.9: 0.9f is in bin 9. numpy.histogram(float32 data) gives the same. */
    check_context("%s: f32 EVEN(10,0,1) float edges", g_strategy);
    const float xf[] = {0.3f, 0.6f, 0.7f, 0x1.666664p-1f /* nextafterf(0.7f, 0) */, 0.9f,
                        0x1.fffffep-1f /* largest float < 1 */, 1.0f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {0, 0, 0, 1, 0, 0, 2, 1, 0, 2};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 1, 0, N(xf));
        my_even_edges(10, 0.0, 1.0, 1, mine);
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        CHECK_EQ_F64_BITS(edges[3], (double)0.3f);
        CHECK_EQ_F64_BITS(edges[7], (double)0.7f);
        CHECK(edges[7] < 0x1.6666666666667p-1);
    }
}

/*
 * A sweep of EVEN specs: the reported edges must equal NumPy's (computed here), and samples on
 * every edge and on both neighbours of it must land where a linear search over those edges says.
 * Covers odd ranges, many bins, -0.0 as lower, denormal ranges (including NumPy's fallback when
 * the step underflows to 0), and ranges whose rounded edges collide or go down, which must be
 * refused as NumPy refuses them.
 */
typedef struct {
    gpuhist_dtype t;
    uint32_t bins;
    double lower, upper;
} even_case;

static void test_even_sweep(void)
{
    static const even_case cases[] = {
        {GPUHIST_F64, 10, 0.0, 1.0},
        {GPUHIST_F32, 10, 0.0, 1.0},
        {GPUHIST_F64, 7, -3.7, 11.2},
        {GPUHIST_F32, 7, -3.7, 11.2},
        {GPUHIST_F64, 1000, 0.0, 1.0},
        {GPUHIST_F32, 1000, 0.0, 1.0},
        {GPUHIST_F32, 4096, -1.0, 3.0},
        {GPUHIST_F64, 3, -1e-5, 1e-5},
        {GPUHIST_F64, 4, -0.0, 1.0},
        {GPUHIST_F32, 4, -0.0, 1.0},
        {GPUHIST_F64, 4, 0.0, 1e-310},     /* denormal edges */
        {GPUHIST_F64, 4, 0.0, 0x1p-1073},  /* step underflows to 0: linspace's fallback */
        {GPUHIST_F64, 3, -0x1p-1074, 0x1p-1073},
        {GPUHIST_F64, 9, -0x1p-1074, 0x1p-1072},   /* edges go down: refused, as NumPy does */
        {GPUHIST_F32, 100, 1.0, 1.0000001},        /* float edges collide: refused */
        {GPUHIST_F32, 3, 0.0, 1e-38},      /* float denormal edges */
        {GPUHIST_F32, 5, -0x1p-149, 0x1p-147},
        {GPUHIST_F64, 5, 1e300, 1.5e300},
        {GPUHIST_F32, 3, 1e6, 1e6 + 0.5},
        {GPUHIST_I32, 3, -10.0, 10.0},
        {GPUHIST_I32, 7, -1e9, 2e9},
        {GPUHIST_U8, 256, 0.0, 256.0},
        {GPUHIST_U8, 7, 0.5, 250.25},
        {GPUHIST_I16, 33, -32768.0, 32767.0},
        {GPUHIST_U16, 1000, 0.0, 65536.0},
        {GPUHIST_I8, 3, -128.0, 127.0},
        {GPUHIST_U32, 31, 3.0, 4e9},
    };
    enum { MAXB = 4096 };
    static double mine[MAXB + 1], edges[MAXB + 1];
    static uint64_t counts[MAXB], exp[MAXB];
    static unsigned char data[(MAXB + 1) * 6 * 8];
    static double xs[(MAXB + 1) * 6];

    for (size_t c = 0; c < N(cases); ++c) {
        const even_case *k = &cases[c];
        for (int variant = 0; variant < 2; ++variant) {
            int incl = variant, clamp = variant;
            check_context("%s: sweep %s EVEN(%u, %a, %a) incl=%d clamp=%d", g_strategy,
                          gpuhist_dtype_name(k->t), k->bins, k->lower, k->upper, incl, clamp);
            my_even_edges(k->bins, k->lower, k->upper, k->t == GPUHIST_F32, mine);
            int increasing = 1;
            for (uint32_t i = 0; i < k->bins; ++i)
                increasing &= mine[i] < mine[i + 1];
            if (!increasing) {
                /* NumPy refuses edges that do not increase ("Too many bins for data range"):
                 * the call and gpuhist_compute_edges must refuse them too, naming the range. */
                double zero = 0.0;
                gpuhist_samples s = gpuhist_samples_1d(&zero, GPUHIST_F64, 1);
                s.dtype = k->t;
                gpuhist_bin_spec b = gpuhist_bins_even(k->bins, k->lower, k->upper);
                gpuhist_result r = gpuhist_result_host(counts);
                CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
                CHECK_CONTAINS(gpuhist_last_error(g_ctx), "too many bins for the range");
                CHECK_EQ_INT(gpuhist_compute_edges(&b, k->t, edges),
                             GPUHIST_ERROR_INVALID_ARGUMENT);
                continue;
            }
            /* Samples: each edge and its neighbours in the sample type. */
            size_t n = 0;
            for (uint32_t i = 0; i <= k->bins; ++i) {
                double e = mine[i];
                if (k->t == GPUHIST_F64) {
                    xs[n++] = e;
                    xs[n++] = nextafter(e, -INFINITY);
                    xs[n++] = nextafter(e, INFINITY);
                } else if (k->t == GPUHIST_F32) {
                    float f = (float)e; /* exact: f32 edges are floats */
                    xs[n++] = f;
                    xs[n++] = nextafterf(f, -INFINITY);
                    xs[n++] = nextafterf(f, INFINITY);
                } else {
                    double lo = k->t == GPUHIST_U8 ? 0 : k->t == GPUHIST_I8 ? -128
                              : k->t == GPUHIST_I16 ? -32768 : k->t == GPUHIST_U16 ? 0
                              : k->t == GPUHIST_U32 ? 0 : -2147483648.0;
                    double hi = k->t == GPUHIST_U8 ? 255 : k->t == GPUHIST_I8 ? 127
                              : k->t == GPUHIST_I16 ? 32767 : k->t == GPUHIST_U16 ? 65535
                              : k->t == GPUHIST_U32 ? 4294967295.0 : 2147483647.0;
                    double cand[4] = {floor(e) - 1, floor(e), ceil(e), ceil(e) + 1};
                    for (int j = 0; j < 4; ++j)
                        if (cand[j] >= lo && cand[j] <= hi)
                            xs[n++] = cand[j];
                }
            }
            memset(exp, 0, sizeof(uint64_t) * k->bins);
            uint64_t under = 0, over = 0;
            for (size_t j = 0; j < n; ++j) {
                put(k->t, data, j, xs[j]);
                int sl = my_slot(mine, k->bins, incl, xs[j]);
                if (sl >= 0)
                    ++exp[sl];
                else if (sl == SLOT_UNDER)
                    ++under;
                else if (sl == SLOT_OVER)
                    ++over;
            }
            if (clamp) {
                exp[0] += under;
                exp[k->bins - 1] += over;
            }
            gpuhist_samples s = gpuhist_samples_1d(data, k->t, n);
            gpuhist_bin_spec b = gpuhist_bins_even(k->bins, k->lower, k->upper);
            b.last_edge_inclusive = incl;
            b.outliers = clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
            gpuhist_result r;
            if (!hist(&s, &b, counts, edges, &r))
                continue;
            int edges_ok = 1;
            for (uint32_t i = 0; i <= k->bins && edges_ok; ++i)
                edges_ok = CHECK_EQ_F64_BITS(edges[i], mine[i]);
            CHECK_COUNTS(counts, exp, k->bins);
            CHECK_TALLY(&r, 0, under, over, 0, n);
            CHECK_EQ_INT(r.last_edge_inclusive, incl);
            double ce[MAXB + 1];
            if (variant == 0 && CHECK_EQ_INT(gpuhist_compute_edges(&b, k->t, ce), GPUHIST_OK))
                for (uint32_t i = 0; i <= k->bins; ++i)
                    if (!CHECK_EQ_F64_BITS(ce[i], mine[i]))
                        break;
        }
    }
}

static void test_edges_kind(void)
{
    const double ex[6] = {-2.0, -0.5, 0.0, 1e-300, 3.0, 1e10};
    gpuhist_bin_spec b = gpuhist_bins_edges(5, ex);
    uint64_t counts[5];
    double edges[6];
    gpuhist_result r;

    check_context("%s: f64 EDGES on and around edges", g_strategy);
    const double xd[] = {-3.0, -INFINITY, -2.0, -1.0, -0.5, -0.0, 0.0, 0x1p-1074, 1e-300,
                         2.9999999999999996, 3.0, 1e10, INFINITY, NAN};
    gpuhist_samples s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            /* -2 -1 | -0.5 | -0.0 0 denorm | 1e-300 2.99.. | 3 (+1e10 when inclusive) */
            const uint64_t exp[5] = {2, 1, 3, 2, incl ? 2u : 1u};
            CHECK_COUNTS(counts, exp, 5);
            CHECK_TALLY(&r, 0, 2, incl ? 1 : 2, 1, N(xd));
            for (int i = 0; i < 6; ++i)
                CHECK_EQ_F64_BITS(edges[i], ex[i]);
        }
    }
    b.last_edge_inclusive = 0;

    /* f32 samples are compared with the double edges as they are: the smallest float denormal
     * (1.4e-45) is above 1e-300, so it is in bin 3, not bin 2; 1e10f == 1e10 exactly. */
    check_context("%s: f32 EDGES", g_strategy);
    const float xf[] = {-3.0f, -2.0f, -1.0f, -0.5f, -0.0f, 0.0f, 0x1p-149f, 3.0f, 1e10f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {2, 1, 2, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 1, 1, 0, N(xf));
    }

    check_context("%s: i32 EDGES", g_strategy);
    const int32_t xi[] = {-3, -2, -1, 0, 1, 2, 3, 2000000000, INT32_MIN, INT32_MAX};
    s = gpuhist_samples_1d(xi, GPUHIST_I32, N(xi));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {2, 0, 1, 2, 3};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 2, 0, 0, N(xi));
    }

    /* A single bin; and many bins with every sample exactly on an edge. */
    check_context("%s: EDGES one bin", g_strategy);
    const double one[2] = {1.0, 2.0};
    b = gpuhist_bins_edges(1, one);
    const double x1[] = {0.5, 1.0, 1.5, 2.0};
    s = gpuhist_samples_1d(x1, GPUHIST_F64, N(x1));
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 1, 1, 0, 4);
    }

    check_context("%s: EDGES 1000 bins, samples on edges", g_strategy);
    static double many[1001], xm[1001];
    static uint64_t cm[1000];
    static double em[1001];
    for (int i = 0; i <= 1000; ++i)
        many[i] = xm[i] = -500.0 + i * 0.75 + (i % 7) * 1e-3; /* increasing, uneven */
    b = gpuhist_bins_edges(1000, many);
    s = gpuhist_samples_1d(xm, GPUHIST_F64, 1001);
    if (hist(&s, &b, cm, em, &r)) {
        for (int i = 0; i < 1000; ++i)
            if (!CHECK_EQ_U64(cm[i], 1))
                break;
        CHECK_TALLY(&r, 0, 0, 1, 0, 1001);
    }
}

static void test_integer(void)
{
    uint64_t counts[256];
    double edges[257];
    gpuhist_result r;
    gpuhist_samples s;
    gpuhist_bin_spec b;

    check_context("%s: u8 INTEGER(256, 0)", g_strategy);
    uint8_t u8v[257];
    for (int i = 0; i < 256; ++i)
        u8v[i] = (uint8_t)i;
    u8v[256] = 7;
    s = gpuhist_samples_1d(u8v, GPUHIST_U8, 257);
    b = gpuhist_bins_integer(256, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        for (int i = 0; i < 256; ++i)
            if (!CHECK_EQ_U64(counts[i], i == 7 ? 2 : 1))
                break;
        CHECK_TALLY(&r, 0, 0, 0, 0, 257);
        CHECK_EQ_F64_BITS(edges[0], 0.0);
        CHECK_EQ_F64_BITS(edges[256], 256.0);
    }

    check_context("%s: i8 INTEGER(256, -128)", g_strategy);
    const int8_t i8v[] = {-128, -1, 0, 127, 127};
    s = gpuhist_samples_1d(i8v, GPUHIST_I8, N(i8v));
    b = gpuhist_bins_integer(256, -128);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[256] = {0};
        exp[0] = 1, exp[127] = 1, exp[128] = 1, exp[255] = 2;
        CHECK_COUNTS(counts, exp, 256);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(i8v));
        CHECK_EQ_F64_BITS(edges[0], -128.0);
        CHECK_EQ_F64_BITS(edges[256], 128.0);
    }

    check_context("%s: i16 INTEGER(10, -5) DROP/CLAMP", g_strategy);
    const int16_t i16v[] = {-6, -5, 4, 5, INT16_MIN, INT16_MAX, 0};
    s = gpuhist_samples_1d(i16v, GPUHIST_I16, N(i16v));
    b = gpuhist_bins_integer(10, -5);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(i16v));
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], -5.0 + i);
    }
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {3, 0, 0, 0, 0, 1, 0, 0, 0, 3};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(i16v));
    }

    check_context("%s: i32 INTEGER(3, INT32_MIN)", g_strategy);
    const int32_t i32v[] = {INT32_MIN, INT32_MIN + 2, INT32_MIN + 3, INT32_MAX, 0};
    s = gpuhist_samples_1d(i32v, GPUHIST_I32, N(i32v));
    b = gpuhist_bins_integer(3, INT32_MIN);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(i32v));
    }

    check_context("%s: u32 INTEGER(10, 4294967290)", g_strategy);
    const uint32_t u32v[] = {4294967295u, 4294967289u, 0u, 4294967290u};
    s = gpuhist_samples_1d(u32v, GPUHIST_U32, N(u32v));
    b = gpuhist_bins_integer(10, 4294967290LL);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 0, 0, N(u32v));
    }

    check_context("%s: i64 INTEGER(4, INT64_MIN)", g_strategy);
    const int64_t i64a[] = {INT64_MIN, INT64_MIN + 3, INT64_MIN + 4, -1, INT64_MAX};
    s = gpuhist_samples_1d(i64a, GPUHIST_I64, N(i64a));
    b = gpuhist_bins_integer(4, INT64_MIN);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(i64a));
    }

    check_context("%s: i64 INTEGER(3, INT64_MAX-2)", g_strategy);
    const int64_t i64b[] = {INT64_MAX, INT64_MAX - 3, INT64_MIN, 0, INT64_MAX - 2};
    s = gpuhist_samples_1d(i64b, GPUHIST_I64, N(i64b));
    b = gpuhist_bins_integer(3, INT64_MAX - 2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 3, 0, 0, N(i64b));
    }

    check_context("%s: i64 INTEGER(4, 2^53-2)", g_strategy);
    const int64_t i64c[] = {I53 - 2, I53 + 1, I53 + 2, I53 - 3, I53};
    s = gpuhist_samples_1d(i64c, GPUHIST_I64, N(i64c));
    b = gpuhist_bins_integer(4, I53 - 2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 1, 1, 0, N(i64c));
    }

    /* u64 above 2^63: bins INT64_MAX-1, INT64_MAX, 2^63, 2^63+1 (the last bins lie above what
     * an int64 can hold, which is fine for u64 samples). */
    check_context("%s: u64 INTEGER(4, INT64_MAX-1)", g_strategy);
    const uint64_t u64a[] = {(uint64_t)INT64_MAX - 1, (uint64_t)INT64_MAX, 1ull << 63,
                             (1ull << 63) + 1, (1ull << 63) + 2, UINT64_MAX, 0,
                             (1ull << 53) + 1};
    s = gpuhist_samples_1d(u64a, GPUHIST_U64, N(u64a));
    b = gpuhist_bins_integer(4, INT64_MAX - 1);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 1, 1, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(u64a));
    }

    check_context("%s: u64 INTEGER(5, 0)", g_strategy);
    const uint64_t u64b[] = {1ull << 63, 4, UINT64_MAX, 0, (1ull << 53) + 1};
    s = gpuhist_samples_1d(u64b, GPUHIST_U64, N(u64b));
    b = gpuhist_bins_integer(5, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {1, 0, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(u64b));
    }

    /* A negative lower with unsigned samples: bins -3 .. 1. */
    check_context("%s: u64/u8 INTEGER(5, -3)", g_strategy);
    const uint64_t u64c[] = {0, 1, 2, UINT64_MAX, 1ull << 63};
    s = gpuhist_samples_1d(u64c, GPUHIST_U64, N(u64c));
    b = gpuhist_bins_integer(5, -3);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {0, 0, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(u64c));
        CHECK_EQ_F64_BITS(edges[0], -3.0);
    }
    const uint8_t u8c[] = {0, 1, 2, 255};
    s = gpuhist_samples_1d(u8c, GPUHIST_U8, N(u8c));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {0, 0, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 2, 0, N(u8c));
    }
}

/* 64-bit integers compared exactly with double edges, where converting the sample to double
 * would round it across an edge. */
static void test_int64_exact(void)
{
    uint64_t counts[8];
    double edges[9];
    gpuhist_result r;
    gpuhist_samples s;
    gpuhist_bin_spec b;

    check_context("%s: i64 EDGES {0, 2^53, 2^54}", g_strategy);
    const double e1[3] = {0.0, TWO53, 2.0 * TWO53};
    const int64_t x1[] = {I53 - 1, I53, I53 + 1, 2 * I53 - 1, 2 * I53, 2 * I53 + 1};
    s = gpuhist_samples_1d(x1, GPUHIST_I64, N(x1));
    b = gpuhist_bins_edges(2, e1);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {1, 3};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 2, 0, N(x1));
    }

    /* (double)(2^53 + 3) rounds to 2^53 + 4, the edge; exactly it is below it: bin 0. */
    check_context("%s: i64/u64 EDGES {0, 2^53+4, 2^60}", g_strategy);
    const double e2[3] = {0.0, TWO53 + 4.0, 0x1p60};
    const int64_t x2[] = {I53 + 3, I53 + 4, I53 + 5, I53 + 2};
    s = gpuhist_samples_1d(x2, GPUHIST_I64, N(x2));
    b = gpuhist_bins_edges(2, e2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x2));
    }
    const uint64_t x2u[] = {(uint64_t)I53 + 3, (uint64_t)I53 + 4, (uint64_t)I53 + 5,
                            (uint64_t)I53 + 2};
    s = gpuhist_samples_1d(x2u, GPUHIST_U64, N(x2u));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x2u));
    }

    /* The last edge 2^53 + 4: 2^53 + 3 is inside, 2^53 + 4 is on it. */
    check_context("%s: i64 EDGES {0, 2^53+4} last edge", g_strategy);
    const double e3[2] = {0.0, TWO53 + 4.0};
    const int64_t x3[] = {I53 + 3, I53 + 4, I53 + 5};
    s = gpuhist_samples_1d(x3, GPUHIST_I64, N(x3));
    b = gpuhist_bins_edges(1, e3);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 2, 0, 3);
    }
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 1, 0, 3);
    }

    /* Near 2^63: INT64_MAX < 2^63 (its double is 2^63); INT64_MIN + 1023 < -2^63 + 1024 (its
     * double is -2^63 + 1024). */
    check_context("%s: i64 EDGES {-2^63, -2^63+1024, 0, 2^63}", g_strategy);
    const double e4[4] = {-TWO63, -TWO63 + 1024.0, 0.0, TWO63};
    const int64_t x4[] = {INT64_MIN, INT64_MIN + 1023, INT64_MIN + 1024, INT64_MIN + 1025, -1,
                          0, INT64_MAX};
    s = gpuhist_samples_1d(x4, GPUHIST_I64, N(x4));
    b = gpuhist_bins_edges(3, e4);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {2, 3, 2};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x4));
    }

    /* u64: 2^63 - 1 < 2^63 (its double is 2^63); UINT64_MAX < 2^64 (its double is 2^64). */
    check_context("%s: u64 EDGES {2^63, 2^64}", g_strategy);
    const double e5[2] = {TWO63, TWO64};
    const uint64_t x5[] = {(1ull << 63) - 1, 1ull << 63, UINT64_MAX, 0, (1ull << 63) + 1};
    s = gpuhist_samples_1d(x5, GPUHIST_U64, N(x5));
    b = gpuhist_bins_edges(1, e5);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            CHECK_EQ_U64(counts[0], 3);
            CHECK_TALLY(&r, 0, 2, 0, 0, N(x5));
        }
    }

    check_context("%s: u64 EVEN(2, 0, 2^64)", g_strategy);
    const uint64_t x6[] = {0, (1ull << 63) - 1, 1ull << 63, UINT64_MAX};
    s = gpuhist_samples_1d(x6, GPUHIST_U64, N(x6));
    b = gpuhist_bins_even(2, 0.0, TWO64);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x6));
        CHECK_EQ_F64_BITS(edges[1], TWO63);
    }

    check_context("%s: i64 EVEN(2, -2^63, 2^63)", g_strategy);
    const int64_t x7[] = {INT64_MIN, -1, 0, INT64_MAX};
    s = gpuhist_samples_1d(x7, GPUHIST_I64, N(x7));
    b = gpuhist_bins_even(2, -TWO63, TWO63);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x7));
    }

    check_context("%s: i64 EVEN(2, 2^53, 2^53+8)", g_strategy);
    const int64_t x8[] = {I53 - 1, I53, I53 + 3, I53 + 4, I53 + 7, I53 + 8, I53 + 9};
    s = gpuhist_samples_1d(x8, GPUHIST_I64, N(x8));
    b = gpuhist_bins_even(2, TWO53, TWO53 + 8.0);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[2] = {2, incl ? 3u : 2u};
            CHECK_COUNTS(counts, exp, 2);
            CHECK_TALLY(&r, 0, 1, incl ? 1 : 2, 0, N(x8));
            CHECK_EQ_F64_BITS(edges[1], TWO53 + 4.0);
        }
    }

    /* EVEN(3, -2^63, 2^63): interior edges are large integral doubles; e - 1, e, e + 1 as
     * int64 must land in bins i-1, i, i. Edges computed here, NumPy's way. */
    check_context("%s: i64 EVEN(3, -2^63, 2^63) around interior edges", g_strategy);
    double mine[4];
    my_even_edges(3, -TWO63, TWO63, 0, mine);
    int64_t x9[6];
    for (int i = 1; i <= 2; ++i) {
        int64_t e = (int64_t)mine[i]; /* exact: |e| < 2^63 and integral */
        x9[(i - 1) * 3 + 0] = e - 1;
        x9[(i - 1) * 3 + 1] = e;
        x9[(i - 1) * 3 + 2] = e + 1;
    }
    s = gpuhist_samples_1d(x9, GPUHIST_I64, 6);
    b = gpuhist_bins_even(3, -TWO63, TWO63);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 3, 2};
        CHECK_COUNTS(counts, exp, 3);
        for (int i = 0; i <= 3; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
    }
}

static void test_last_inclusive(void)
{
    uint64_t counts[4];
    double edges[5];
    gpuhist_result r;
    check_context("%s: EVEN last_edge_inclusive", g_strategy);
    const double x[] = {0.0, 3.999, 4.0, 4.0000001, INFINITY};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 4.0);
    CHECK_EQ_INT(b.last_edge_inclusive, 0); /* half-open by default in the C API */
    CHECK_EQ_INT(b.outliers, GPUHIST_OUTLIERS_DROP);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[4] = {1, 0, 0, incl ? 2u : 1u};
            CHECK_COUNTS(counts, exp, 4);
            CHECK_TALLY(&r, 0, 0, incl ? 2 : 3, 0, N(x));
            CHECK_EQ_INT(r.last_edge_inclusive != 0, incl);
        }
    }
    check_context("%s: EDGES last_edge_inclusive u8", g_strategy);
    const double e[3] = {0.0, 1.0, 2.0};
    const uint8_t xu[] = {2, 2, 3, 1};
    s = gpuhist_samples_1d(xu, GPUHIST_U8, N(xu));
    b = gpuhist_bins_edges(2, e);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[2] = {0, incl ? 3u : 1u};
            CHECK_COUNTS(counts, exp, 2);
            CHECK_TALLY(&r, 0, 0, incl ? 1 : 3, 0, N(xu));
        }
    }
    /* f32: the float-rounded last edge is what x is compared with. */
    check_context("%s: f32 EVEN(3, 0, 0.1) inclusive", g_strategy);
    const float xf[] = {0.1f, 0x1.99999cp-4f /* nextafterf(0.1f, 1) */};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    b = gpuhist_bins_even(3, 0.0, 0.1);
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {0, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 1, 0, 2);
        CHECK_EQ_F64_BITS(edges[3], (double)0.1f);
    }
}

static void test_outliers(void)
{
    uint64_t counts[4];
    double edges[5];
    gpuhist_result r;
    const double x[] = {-1.0, -INFINITY, 0.0, 1.0, 2.5, 4.0, 5.0, INFINITY, NAN, -NAN};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 4.0);

    check_context("%s: DROP", g_strategy);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 1, 1, 0};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
    check_context("%s: CLAMP", g_strategy);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 1, 1, 3}; /* NaN is never binned, even clamped */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
    check_context("%s: CLAMP + inclusive", g_strategy);
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 1, 1, 3};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 2, 2, N(x)); /* 4.0 is in the last bin, not an outlier */
    }

    check_context("%s: i8 EDGES CLAMP", g_strategy);
    const double e[3] = {-10.0, 0.0, 10.0};
    const int8_t xi[] = {-128, -11, -10, -1, 0, 9, 10, 127};
    s = gpuhist_samples_1d(xi, GPUHIST_I8, N(xi));
    b = gpuhist_bins_edges(2, e);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {4, 4};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(xi));
    }
    /* One bin, CLAMP: everything but NaN lands in it. */
    check_context("%s: one bin CLAMP", g_strategy);
    s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    b = gpuhist_bins_even(1, 0.0, 4.0);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 8);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static double f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void test_specials(void)
{
    uint64_t counts[2];
    double edges[3];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_even(2, -1.0, 1.0);

    /* NaNs of every kind (quiet, signalling payload, negative) go to nan; -0.0, +0.0, the
     * positive denormals and 0.5 are in bin 1 ([0, 1)); the negative denormal and -0.5 are in
     * bin 0. */
    check_context("%s: f32 specials", g_strategy);
    const float xf[] = {NAN, f32_bits(0x7fa00000u), f32_bits(0xffc00001u), -INFINITY, INFINITY,
                        -0.0f, 0.0f, 0x1p-149f, FLT_MIN / 2, -0x1p-149f, -0.5f, 0.5f};
    gpuhist_samples s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 5};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xf));
    }
    check_context("%s: f64 specials", g_strategy);
    const double xd[] = {NAN, f64_bits(0x7ff4000000000000ull), f64_bits(0xfff8000000000001ull),
                         -INFINITY, INFINITY, -0.0, 0.0, 0x1p-1074, DBL_MIN / 2, -0x1p-1074,
                         -0.5, 0.5};
    s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 5};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xd));
    }
    /* CLAMP moves the infinities into the end bins, never the NaNs. */
    check_context("%s: f64 specials CLAMP", g_strategy);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {3, 6};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xd));
    }
    /* -0.0 equals 0.0: at the lower edge it is in bin 0, at the upper edge it is the edge. */
    check_context("%s: -0.0 at the edges", g_strategy);
    const double z[] = {-0.0};
    s = gpuhist_samples_1d(z, GPUHIST_F64, 1);
    b = gpuhist_bins_even(2, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    b = gpuhist_bins_even(2, -1.0, 0.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 0);
        CHECK_TALLY(&r, 0, 0, 1, 0, 1);
    }
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    const float zf[] = {-0.0f};
    s = gpuhist_samples_1d(zf, GPUHIST_F32, 1);
    b = gpuhist_bins_even(2, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    const double ez[3] = {-1.0, -0.0, 1.0};
    b = gpuhist_bins_edges(2, ez);
    const double zz[] = {0.0, -0.0};
    s = gpuhist_samples_1d(zz, GPUHIST_F64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    /* All NaN: nothing binned, nan == total. */
    check_context("%s: all NaN EVEN", g_strategy);
    const double an[5] = {NAN, NAN, NAN, NAN, NAN};
    s = gpuhist_samples_1d(an, GPUHIST_F64, 5);
    b = gpuhist_bins_even(2, -1.0, 1.0);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {0, 0};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 5, 5);
    }
}

static void test_auto_range(void)
{
    uint64_t counts[8];
    double edges[9];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_auto(4);
    CHECK(b.auto_range != 0);

    check_context("%s: auto: infinities and NaN ignored for the range", g_strategy);
    const double x[] = {1.0, 5.0, 3.0, INFINITY, NAN, -INFINITY};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 1, 1}; /* 1 | - | 3 | 5 (last edge inclusive) */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 1, 1, 1, N(x));
        CHECK_EQ_F64_BITS(r.lower, 1.0);
        CHECK_EQ_F64_BITS(r.upper, 5.0);
        CHECK(r.last_edge_inclusive != 0);
        for (int i = 0; i <= 4; ++i)
            CHECK_EQ_F64_BITS(edges[i], 1.0 + i);
    }

    /* min == max: [min - 0.5, max + 0.5]; numpy.histogram([7, 7, 7], 2) -> [0, 3]. */
    check_context("%s: auto: constant data", g_strategy);
    const double c7[] = {7.0, 7.0, 7.0};
    s = gpuhist_samples_1d(c7, GPUHIST_F64, 3);
    b = gpuhist_bins_auto(2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {0, 3};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 3);
        CHECK_EQ_F64_BITS(r.lower, 6.5);
        CHECK_EQ_F64_BITS(r.upper, 7.5);
        CHECK_EQ_F64_BITS(edges[1], 7.0);
    }
    const int32_t cm3[] = {-3, -3};
    s = gpuhist_samples_1d(cm3, GPUHIST_I32, 2);
    b = gpuhist_bins_auto(4);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {0, 0, 2, 0}; /* edges -3.5 -3.25 -3 -2.75 -2.5 */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_EQ_F64_BITS(r.lower, -3.5);
        CHECK_EQ_F64_BITS(r.upper, -2.5);
    }
    /* Constant data with infinities and NaN around it. */
    const float cf[] = {INFINITY, 2.0f, NAN, 2.0f, -INFINITY};
    s = gpuhist_samples_1d(cf, GPUHIST_F32, N(cf));
    b = gpuhist_bins_auto(1);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 1, 1, 1, N(cf));
        CHECK_EQ_F64_BITS(r.lower, 1.5);
        CHECK_EQ_F64_BITS(r.upper, 2.5);
    }

    /* f32 auto: range from float min/max, edges rounded to float (computed here). */
    check_context("%s: auto: f32 edges", g_strategy);
    const float xf[] = {0.1f, 0.7f, 0.35f, 0.3f, 0.5f, 0.6f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    b = gpuhist_bins_auto(6);
    if (hist(&s, &b, counts, edges, &r)) {
        double mine[7];
        uint64_t exp[6] = {0};
        my_even_edges(6, (double)0.1f, (double)0.7f, 1, mine);
        for (int i = 0; i <= 6; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        for (size_t j = 0; j < N(xf); ++j) {
            int sl = my_slot(mine, 6, 1, xf[j]);
            if (CHECK(sl >= 0))
                ++exp[sl];
        }
        CHECK_COUNTS(counts, exp, 6);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(xf));
    }

    /* 64-bit extremes: the range is [-2^63, 2^63] (INT64_MAX as a double is 2^63). */
    check_context("%s: auto: i64 extremes", g_strategy);
    const int64_t xi[] = {INT64_MIN, INT64_MAX, 0};
    s = gpuhist_samples_1d(xi, GPUHIST_I64, N(xi));
    b = gpuhist_bins_auto(2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {1, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(xi));
    }
    const uint64_t xu[] = {0, UINT64_MAX};
    s = gpuhist_samples_1d(xu, GPUHIST_U64, N(xu));
    b = gpuhist_bins_auto(1);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    /* The range comes from the data, so every finite sample must be binned, even a maximum
     * that no double can hold: 2^53 + 1 becomes the double 2^53, yet numpy.histogram([0,
     * 2**53+1], 1) counts both. A range that leaves the data's own maximum out as overflow is a
     * wrong answer. */
    check_context("%s: auto: max not representable as a double", g_strategy);
    const int64_t xm[] = {0, I53 + 1};
    s = gpuhist_samples_1d(xm, GPUHIST_I64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    const int64_t xn[] = {-I53 - 1, 0}; /* and a minimum: -2^53 - 1 becomes -2^53 */
    s = gpuhist_samples_1d(xn, GPUHIST_I64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }

    /* No finite value at all (empty, all NaN, only infinities): a valid empty histogram with a
     * finite range; NumPy uses [0, 1] for empty data. */
    check_context("%s: auto: no finite data", g_strategy);
    const double nn[] = {NAN, NAN, INFINITY, -INFINITY};
    for (int variant = 0; variant < 3; ++variant) {
        uint64_t n = variant == 0 ? 0 : variant == 1 ? 2 : 4;
        s = gpuhist_samples_1d(nn, GPUHIST_F64, n);
        b = gpuhist_bins_auto(3);
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[3] = {0, 0, 0};
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, variant == 2 ? 1 : 0, variant == 2 ? 1 : 0,
                        variant == 0 ? 0 : 2, n);
            CHECK(isfinite(r.lower) && isfinite(r.upper) && r.lower < r.upper);
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 1.0);
        }
    }
}

static void test_channels(void)
{
    uint64_t counts[4 * 32];
    double edges[33];
    gpuhist_result r;
    /* u8, C = 3: channel c of pixel p is 10 * c + p. */
    uint8_t px[4 * 3];
    for (int p = 0; p < 4; ++p)
        for (int c = 0; c < 3; ++c)
            px[p * 3 + c] = (uint8_t)(10 * c + p);
    gpuhist_samples s = gpuhist_samples_1d(px, GPUHIST_U8, 4);
    s.channels = 3;
    gpuhist_bin_spec b = gpuhist_bins_integer(32, 0);

    static const struct {
        uint32_t active, mask, n, idx[3];
    } sel[] = {
        {0, 0, 3, {0, 1, 2}}, {3, 0, 3, {0, 1, 2}}, {2, 0, 2, {0, 1, 0}}, {1, 0, 1, {0, 0, 0}},
        {0, 5, 2, {0, 2, 0}}, {0, 4, 1, {2, 0, 0}}, {0, 6, 2, {1, 2, 0}}, {2, 4, 1, {2, 0, 0}},
    };
    for (size_t i = 0; i < N(sel); ++i) {
        check_context("%s: u8 C=3 active=%u mask=%#x", g_strategy, sel[i].active, sel[i].mask);
        s.active_channels = sel[i].active;
        s.channel_mask = sel[i].mask; /* the mask wins over active_channels */
        if (!hist(&s, &b, counts, edges, &r))
            continue;
        CHECK_EQ_U64(r.channels, sel[i].n);
        for (uint32_t k = 0; k < sel[i].n; ++k) {
            uint32_t c = sel[i].idx[k];
            uint64_t exp[32] = {0};
            for (int p = 0; p < 4; ++p)
                exp[10 * c + p] = 1;
            CHECK_EQ_U64(r.channel_index[k], c);
            CHECK_COUNTS(counts + k * 32, exp, 32);
            CHECK_TALLY(&r, k, 0, 0, 0, 4);
        }
    }

    /* f32, C = 4, mask 0b1010: NaN and out-of-range values in channels 0 and 2 must not show in
     * the tallies of channels 1 and 3. */
    check_context("%s: f32 C=4 mask 0xa", g_strategy);
    const float f4[] = {NAN, 0.5f, -9.0f, 3.5f, NAN, 1.5f, 99.0f, 3.25f,
                        NAN, -1.0f, 99.0f, INFINITY, NAN, 2.0f, -9.0f, 0.0f, NAN, 1.0f, 7.0f, NAN};
    s = gpuhist_samples_1d(f4, GPUHIST_F32, 5);
    s.channels = 4;
    s.channel_mask = 0xa;
    b = gpuhist_bins_even(4, 0.0, 4.0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e1[4] = {1, 2, 1, 0}; /* 0.5 1.5 -1 2 1 */
        const uint64_t e3[4] = {1, 0, 0, 2}; /* 3.5 3.25 inf 0 NaN */
        CHECK_EQ_U64(r.channels, 2);
        CHECK_EQ_U64(r.channel_index[0], 1);
        CHECK_EQ_U64(r.channel_index[1], 3);
        CHECK_COUNTS(counts, e1, 4);
        CHECK_COUNTS(counts + 4, e3, 4);
        CHECK_TALLY(&r, 0, 1, 0, 0, 5);
        CHECK_TALLY(&r, 1, 0, 1, 1, 5);
    }
    /* C = 4, all four; i16 with negative values, EVEN bins. */
    check_context("%s: i16 C=4 all", g_strategy);
    const int16_t i4[] = {-4, 0, 3, 100, -3, 1, -100, 2, 0, 0, 0, 0};
    s = gpuhist_samples_1d(i4, GPUHIST_I16, 3);
    s.channels = 4;
    b = gpuhist_bins_even(2, -4.0, 4.0); /* edges -4 0 4 */
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e0[2] = {2, 1}, e1[2] = {0, 3}, e2[2] = {0, 2}, e3[2] = {0, 2};
        CHECK_COUNTS(counts + 0, e0, 2);
        CHECK_COUNTS(counts + 2, e1, 2);
        CHECK_COUNTS(counts + 4, e2, 2);
        CHECK_COUNTS(counts + 6, e3, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 3);
        CHECK_TALLY(&r, 2, 1, 0, 0, 3);
        CHECK_TALLY(&r, 3, 0, 1, 0, 3);
    }
    /* channels == 0 means one channel. */
    check_context("%s: channels 0 means 1", g_strategy);
    s = gpuhist_samples_1d(i4, GPUHIST_I16, 12);
    s.channels = 0;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e[2] = {2, 8};
        CHECK_EQ_U64(r.channels, 1);
        CHECK_COUNTS(counts, e, 2);
        CHECK_TALLY(&r, 0, 1, 1, 0, 12);
    }
}

static void test_roi(void)
{
    uint64_t counts[4 * 16];
    double edges[17];
    gpuhist_result r;
    /* u16, 3 rows of 5 pixels, row stride 13 bytes (3 bytes of 0x0F garbage after each row: a
     * read of them would give 0x0F0F = 3855, an overflow), starting at an odd address. */
    unsigned char buf[1 + 3 * 13];
    memset(buf, 0x0F, sizeof buf);
    for (int row = 0; row < 3; ++row)
        for (int p = 0; p < 5; ++p) {
            uint16_t v = (uint16_t)(row * 5 + p);
            memcpy(buf + 1 + row * 13 + p * 2, &v, 2);
        }
    gpuhist_samples s = gpuhist_samples_1d(buf + 1, GPUHIST_U16, 0);
    s.rows = 3;
    s.row_length = 5;
    s.row_stride = 13;
    gpuhist_bin_spec b = gpuhist_bins_integer(16, 0);
    check_context("%s: u16 ROI 3x5 stride 13 unaligned", g_strategy);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[16];
        for (int i = 0; i < 16; ++i)
            exp[i] = i < 15;
        CHECK_COUNTS(counts, exp, 16);
        CHECK_TALLY(&r, 0, 0, 0, 0, 15);
    }
    /* `count` is ignored for a ROI. */
    s.count = 1000;
    if (hist(&s, &b, counts, edges, &r))
        CHECK_TALLY(&r, 0, 0, 0, 0, 15);

    /* f32 C=2, first channel only, 4 rows of 3 pixels, stride 29 bytes (5 bytes of 0xFF: NaN
     * bytes), data at offset 3. Channel 0 of pixel (row, p) is row + 0.25 * p, channel 1 NaN. */
    check_context("%s: f32 ROI C=2 A=1 stride 29", g_strategy);
    unsigned char fb[3 + 4 * 29];
    memset(fb, 0xFF, sizeof fb);
    for (int row = 0; row < 4; ++row)
        for (int p = 0; p < 3; ++p) {
            float v0 = (float)row + 0.25f * p, v1 = NAN;
            memcpy(fb + 3 + row * 29 + p * 8, &v0, 4);
            memcpy(fb + 3 + row * 29 + p * 8 + 4, &v1, 4);
        }
    s = gpuhist_samples_1d(fb + 3, GPUHIST_F32, 0);
    s.rows = 4;
    s.row_length = 3;
    s.row_stride = 29;
    s.channels = 2;
    s.active_channels = 1;
    b = gpuhist_bins_even(4, 0.0, 4.0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 3, 3, 3};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 0, 0, 0, 12);
    }
    /* Both channels: the NaN channel counts 12 NaN, never the padding. */
    s.active_channels = 0;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_TALLY(&r, 0, 0, 0, 0, 12);
        CHECK_TALLY(&r, 1, 0, 0, 12, 12);
    }

    /* f64 C=3, mask 0b110, 2 rows of 3 pixels, stride 80 (8 bytes padding), offset 5. */
    check_context("%s: f64 ROI C=3 mask 6 stride 80", g_strategy);
    unsigned char db[5 + 2 * 80];
    memset(db, 0x3F, sizeof db); /* garbage doubles of about 0.49: inside the range */
    for (int row = 0; row < 2; ++row)
        for (int p = 0; p < 3; ++p)
            for (int c = 0; c < 3; ++c) {
                double v = c == 0 ? -5.0 : c == 1 ? 1.5 + p : 0.5 + row;
                memcpy(db + 5 + row * 80 + (p * 3 + c) * 8, &v, 8);
            }
    s = gpuhist_samples_1d(db + 5, GPUHIST_F64, 0);
    s.rows = 2;
    s.row_length = 3;
    s.row_stride = 80;
    s.channels = 3;
    s.channel_mask = 6;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t e1[4] = {0, 2, 2, 2}, e2[4] = {3, 3, 0, 0};
        CHECK_COUNTS(counts, e1, 4);
        CHECK_COUNTS(counts + 4, e2, 4);
        CHECK_TALLY(&r, 0, 0, 0, 0, 6);
        CHECK_TALLY(&r, 1, 0, 0, 0, 6);
        CHECK_EQ_U64(r.channel_index[0], 1);
        CHECK_EQ_U64(r.channel_index[1], 2);
    }

    /* A stride equal to the row (packed rows) and a single row. */
    check_context("%s: ROI packed and one row", g_strategy);
    const int32_t iv[] = {0, 1, 2, 3, 4, 5};
    s = gpuhist_samples_1d(iv, GPUHIST_I32, 0);
    s.rows = 2;
    s.row_length = 3;
    s.row_stride = 12;
    b = gpuhist_bins_integer(6, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[6] = {1, 1, 1, 1, 1, 1};
        CHECK_COUNTS(counts, exp, 6);
    }
    s.rows = 1;
    s.row_length = 4;
    s.row_stride = 16;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[6] = {1, 1, 1, 1, 0, 0};
        CHECK_COUNTS(counts, exp, 6);
        CHECK_TALLY(&r, 0, 0, 0, 0, 4);
    }
    /* Rows of zero pixels: nothing to count. */
    s.rows = 3;
    s.row_length = 0;
    s.row_stride = 16;
    if (hist(&s, &b, counts, edges, &r))
        CHECK_TALLY(&r, 0, 0, 0, 0, 0);
}

/* A larger input with a known answer, so strategies that work in blocks or threads are
 * exercised past their block sizes (all counts are derived from the index). */
static void test_large_known(void)
{
    enum { NN = 1000003 };
    uint8_t *u = malloc(NN + 7);
    float *f = malloc(sizeof(float) * NN);
    if (!CHECK(u && f)) {
        free(u);
        free(f);
        return;
    }
    for (uint32_t i = 0; i < NN; ++i)
        u[3 + i] = (uint8_t)(i % 251);
    /* Three threads (cpu-threads gives each at least 256K samples): uneven shares. */
    CHECK_EQ_INT(gpuhist_set_threads(g_ctx, 3), GPUHIST_OK);
    uint64_t counts[256];
    double edges[257];
    gpuhist_result r;
    check_context("%s: u8 1000003 samples i %% 251, unaligned", g_strategy);
    gpuhist_samples s = gpuhist_samples_1d(u + 3, GPUHIST_U8, NN);
    gpuhist_bin_spec b = gpuhist_bins_integer(256, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[256] = {0};
        for (uint32_t v = 0; v < 251; ++v)
            exp[v] = NN / 251 + (v < NN % 251);
        CHECK_COUNTS(counts, exp, 256);
    }
    check_context("%s: u8 1000003 samples, EVEN(7, 10, 200)", g_strategy);
    b = gpuhist_bins_even(7, 10.0, 200.0);
    if (hist(&s, &b, counts, edges, &r)) {
        double e[8];
        uint64_t exp[7] = {0}, under = 0, over = 0;
        my_even_edges(7, 10.0, 200.0, 0, e);
        for (uint32_t v = 0; v < 251; ++v) {
            uint64_t m = NN / 251 + (v < NN % 251);
            int sl = my_slot(e, 7, 0, v);
            if (sl >= 0)
                exp[sl] += m;
            else if (sl == SLOT_UNDER)
                under += m;
            else
                over += m;
        }
        CHECK_COUNTS(counts, exp, 7);
        CHECK_TALLY(&r, 0, under, over, 0, NN);
    }
    check_context("%s: f32 1000003 samples, every 7th NaN", g_strategy);
    for (uint32_t i = 0; i < NN; ++i)
        f[i] = i % 7 == 3 ? NAN : (float)(i % 1000) * 0.001f;
    s = gpuhist_samples_1d(f, GPUHIST_F32, NN);
    b = gpuhist_bins_even(10, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        double e[11];
        uint64_t exp[10] = {0}, nan_ = 0;
        my_even_edges(10, 0.0, 1.0, 1, e);
        for (uint32_t i = 0; i < NN; ++i) {
            int sl = my_slot(e, 10, 0, f[i]);
            if (sl >= 0)
                ++exp[sl];
            else if (CHECK(sl == SLOT_NAN))
                ++nan_;
        }
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 0, nan_, NN);
    }
    CHECK_EQ_INT(gpuhist_set_threads(g_ctx, 0), GPUHIST_OK);
    free(u);
    free(f);
}

/* ---- validation (run once) -------------------------------------------------------------------- */

/* Expect `got` to be status `want` and the context's message to name the field: to contain one
 * of the words (w2, w3 optional). */
static void expect_error_(const char *file, int line, gpuhist_status got, gpuhist_status want,
                          const char *w1, const char *w2, const char *w3)
{
    const char *msg = gpuhist_last_error(g_ctx);
    if (!check_eq_i64_(file, line, "status", "expected", got, want))
        return;
    ++check_count_;
    if (!msg || !(strstr(msg, w1) || (w2 && strstr(msg, w2)) || (w3 && strstr(msg, w3))))
        check_fail_(file, line, "error message \"%s\" names none of \"%s\" \"%s\" \"%s\"",
                    msg ? msg : "(null)", w1, w2 ? w2 : "", w3 ? w3 : "");
}
#define EXPECT_ERROR(got, want, w1, w2)                                                        \
    expect_error_(__FILE__, __LINE__, (got), (want), (w1), (w2), NULL)
#define EXPECT_ERROR3(got, want, w1, w2, w3)                                                   \
    expect_error_(__FILE__, __LINE__, (got), (want), (w1), (w2), (w3))

static gpuhist_status run_bad(const gpuhist_samples *s, const gpuhist_bin_spec *b)
{
    uint64_t counts[64];
    gpuhist_result r = gpuhist_result_host(counts);
    return gpuhist_histogram(g_ctx, s, b, &r);
}

static void test_validation(void)
{
    const gpuhist_status INV = GPUHIST_ERROR_INVALID_ARGUMENT;
    float data[64] = {0};
    gpuhist_samples s = gpuhist_samples_1d(data, GPUHIST_F32, 16);
    gpuhist_bin_spec b;

    check_context("validation: bins");
    b = gpuhist_bins_even(0, 0.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    b = gpuhist_bins_auto(0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    const double e2[3] = {0.0, 1.0, 2.0};
    b = gpuhist_bins_edges(0, e2);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    b = gpuhist_bins_integer(0, 0);
    s.dtype = GPUHIST_I32;
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    s.dtype = GPUHIST_F32;
    /* Too many bins for any memory (the caller's buffer here is 64 counts: a library that took
     * this would write far past it, so only a refusal is acceptable). */
    b = gpuhist_bins_even(UINT32_MAX, 0.0, 1.0);
    {
        gpuhist_status st = run_bad(&s, &b);
        if (st == GPUHIST_ERROR_OUT_OF_MEMORY)
            CHECK(1);
        else
            EXPECT_ERROR(st, INV, "bins", NULL);
    }

    check_context("validation: range");
    b = gpuhist_bins_even(4, 1.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    b = gpuhist_bins_even(4, 2.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    b = gpuhist_bins_even(4, NAN, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", NULL);
    b = gpuhist_bins_even(4, 0.0, NAN);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);
    b = gpuhist_bins_even(4, -INFINITY, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", NULL);
    b = gpuhist_bins_even(4, 0.0, INFINITY);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);
    /* Finite bounds whose width overflows: NumPy's edges would be NaN/inf. */
    b = gpuhist_bins_even(4, -DBL_MAX, DBL_MAX);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    /* f32 samples: an upper bound beyond FLT_MAX rounds to an infinite float edge. */
    b = gpuhist_bins_even(4, 0.0, 1e39);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);

    check_context("validation: edges");
    const double bad_eq[4] = {0.0, 1.0, 1.0, 2.0};
    const double bad_dec[3] = {0.0, 2.0, 1.0};
    const double bad_nan[3] = {0.0, NAN, 1.0};
    const double bad_inf[3] = {0.0, 1.0, INFINITY};
    const double bad_ninf[3] = {-INFINITY, 0.0, 1.0};
    b = gpuhist_bins_edges(3, bad_eq);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_dec);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_nan);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_inf);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_ninf);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, NULL);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);

    check_context("validation: kinds and enums");
    b = gpuhist_bins_integer(4, 0);
    /* INTEGER bins with float samples: the field is the kind (docs/SEMANTICS.md's message says
     * "integer bins: sample type f32 is not an integer type") or the dtype. */
    EXPECT_ERROR3(run_bad(&s, &b), INV, "dtype", "kind", "integer bins");
    s.dtype = GPUHIST_F64;
    EXPECT_ERROR3(run_bad(&s, &b), INV, "dtype", "kind", "integer bins");
    s.dtype = (gpuhist_dtype)GPUHIST_DTYPE_COUNT;
    b = gpuhist_bins_even(4, 0.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "dtype", NULL);
    s.dtype = GPUHIST_F32;
    b.kind = (gpuhist_bin_kind)7;
    EXPECT_ERROR(run_bad(&s, &b), INV, "kind", NULL);
    b = gpuhist_bins_even(4, 0.0, 1.0);
    b.outliers = (gpuhist_outliers)9;
    EXPECT_ERROR(run_bad(&s, &b), INV, "outliers", NULL);

    check_context("validation: pointers");
    b = gpuhist_bins_even(4, 0.0, 1.0);
    gpuhist_samples sn = gpuhist_samples_1d(NULL, GPUHIST_F32, 5);
    EXPECT_ERROR(run_bad(&sn, &b), INV, "data", NULL);
    sn.count = 0;
    sn.rows = 2;
    sn.row_length = 2;
    sn.row_stride = 8;
    EXPECT_ERROR(run_bad(&sn, &b), INV, "data", NULL);
    gpuhist_result r = gpuhist_result_host(NULL);
    EXPECT_ERROR(gpuhist_histogram(g_ctx, &s, &b, &r), INV, "counts", NULL);
    uint64_t counts[8];
    r = gpuhist_result_host(counts);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, NULL, &b, &r), INV);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, NULL, &r), INV);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, &b, NULL), INV);
    CHECK_EQ_INT(gpuhist_histogram(NULL, &s, &b, &r), INV);

    check_context("validation: geometry");
    gpuhist_samples sr = gpuhist_samples_1d(data, GPUHIST_F32, 0);
    sr.rows = 2;
    sr.row_length = 4;
    sr.row_stride = 15; /* a row is 16 bytes */
    EXPECT_ERROR(run_bad(&sr, &b), INV, "row_stride", "stride");
    sr.channels = 2;
    sr.row_stride = 31; /* a row is 32 bytes */
    EXPECT_ERROR(run_bad(&sr, &b), INV, "row_stride", "stride");
    gpuhist_samples sc = s;
    sc.channels = 5;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channels", NULL);
    sc.channels = 2;
    sc.active_channels = 3;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "active_channels", NULL);
    sc.active_channels = 0;
    sc.channel_mask = 0x4; /* channel 2 of a 2-channel input */
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channel_mask", NULL);
    sc.channel_mask = 0x10;
    sc.channels = 4;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channel_mask", NULL);

    check_context("validation: the context still works after errors");
    sc = s;
    CHECK_EQ_INT(run_bad(&sc, &b), GPUHIST_OK);

    check_context("validation: strategies");
    EXPECT_ERROR(gpuhist_set_strategy(g_ctx, "no-such-strategy"), GPUHIST_ERROR_UNKNOWN_STRATEGY,
                 "no-such-strategy", NULL);
    const char *other = NULL;
    for (size_t i = 0; i < gpuhist_strategy_count(); ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend != GPUHIST_BACKEND_CPU) {
            other = d.name;
            break;
        }
    }
    if (other) {
        gpuhist_status st = gpuhist_set_strategy(g_ctx, other);
        CHECK_MSG(st == INV || st == GPUHIST_ERROR_UNSUPPORTED,
                  "forcing \"%s\" (another backend) on a CPU context returned %d", other, (int)st);
        CHECK_CONTAINS(gpuhist_last_error(g_ctx), other);
    } else {
        /* Only the CPU backend is compiled in: a CUDA strategy's name is unknown here. */
        gpuhist_status st = gpuhist_set_strategy(g_ctx, "cuda-global-atomic");
        CHECK_MSG(st == GPUHIST_ERROR_UNKNOWN_STRATEGY || st == INV, "got %d", (int)st);
    }
    /* A failed set_strategy leaves the automatic choice in place; "auto" and NULL restore it. */
    CHECK_EQ_INT(run_bad(&s, &b), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, "cpu-reference"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, "auto"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, NULL), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(NULL, "auto"), INV);

    check_context("validation: contexts");
    CHECK_EQ_INT(gpuhist_create(NULL, GPUHIST_BACKEND_CPU), INV);
    gpuhist_ctx *c2 = (gpuhist_ctx *)&c2;
    CHECK_EQ_INT(gpuhist_create(&c2, (gpuhist_backend)42), INV);
    CHECK(c2 == NULL);
    gpuhist_destroy(NULL);
    if (!gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA)) {
        c2 = (gpuhist_ctx *)&c2;
        CHECK_EQ_INT(gpuhist_create(&c2, GPUHIST_BACKEND_CUDA), GPUHIST_ERROR_NO_DEVICE);
        CHECK(c2 == NULL);
    }
    CHECK_EQ_INT(gpuhist_context_backend(g_ctx), GPUHIST_BACKEND_CPU);
    CHECK(gpuhist_device_name(g_ctx) != NULL && gpuhist_device_name(g_ctx)[0] != 0);
    CHECK(gpuhist_backend_note(g_ctx) != NULL);
    CHECK(gpuhist_build_log(g_ctx) != NULL);
    gpuhist_ctx *ac = NULL;
    if (CHECK_EQ_INT(gpuhist_create(&ac, GPUHIST_BACKEND_AUTO), GPUHIST_OK)) {
        gpuhist_backend be = gpuhist_context_backend(ac);
        CHECK(be != GPUHIST_BACKEND_AUTO);
        if (be == GPUHIST_BACKEND_CPU && !gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA))
            CHECK(gpuhist_backend_note(ac)[0] != 0); /* says why it is not CUDA */
        gpuhist_destroy(ac);
    }
}

int main(void)
{
    if (gpuhist_create(&g_ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
    printf("gpuhist %s, %s\n", gpuhist_version(), gpuhist_device_name(g_ctx));
    test_version_status();
    test_dtype_names();
    test_compute_edges();
    test_validation();

    /* The binning tests: automatic choice first, then every CPU strategy forced by name. */
    const char *names[64];
    size_t nn = 0;
    names[nn++] = "auto";
    for (size_t i = 0; i < gpuhist_strategy_count() && nn < 64; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CPU)
            names[nn++] = d.name;
    }
    for (size_t i = 0; i < nn; ++i) {
        g_strategy = names[i];
        unsigned long before = check_failures_, skipped = g_skipped;
        if (!CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, i == 0 ? "auto" : names[i]), GPUHIST_OK))
            continue;
        test_count_zero();
        test_all_dtypes();
        test_even_numpy();
        test_even_sweep();
        test_edges_kind();
        test_integer();
        test_int64_exact();
        test_last_inclusive();
        test_outliers();
        test_specials();
        test_auto_range();
        test_channels();
        test_roi();
        test_large_known();
        printf("strategy %-16s %s (%lu cases skipped as unsupported)\n", names[i],
               check_failures_ == before ? "ok" : "FAILED", g_skipped - skipped);
    }
    check_context("%s", "");
    gpuhist_destroy(g_ctx);
    return check_exit();
}
