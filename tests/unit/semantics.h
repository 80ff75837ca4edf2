/*
 * semantics.h - what the semantics tests (test_semantics_*.c, one rule group of
 * docs/SEMANTICS.md each) share: the CPU context, a histogram call that checks the invariants every
 * result must hold, count and tally checks, an independent computation of NumPy's edges with a
 * linear-search bin lookup, and the driver that runs a program's tests.
 *
 * Every expected count in these tests is worked out by hand (or, for the edge sweeps, by the
 * independent edge formula and linear search below), never read back from the library. The bin
 * tests run once with the automatic choice and once per CPU strategy (forced by name), so a CPU
 * strategy that breaks a rule fails with its name attached; the API and validation tests run once.
 *
 * Header-only, like check.h: each test is one translation unit and the state is static.
 *
 * Build note: the tests are compiled with -ffp-contract=off, like the library, so that
 * `i * step + lower` below is two roundings (NumPy's) and not one fused multiply-add.
 */
#ifndef GPUHIST_TEST_SEMANTICS_H
#define GPUHIST_TEST_SEMANTICS_H

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
static const size_t SZ[GPUHIST_DTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2};

static CHECK_UNUSED int is_float(gpuhist_dtype t)
{
    return t == GPUHIST_F32 || t == GPUHIST_F64 || t == GPUHIST_F16 || t == GPUHIST_BF16;
}

/* float16 / bfloat16 bit patterns, written here independently of the library. */
#include "half_test.h"
static CHECK_UNUSED int is_signed(gpuhist_dtype t)
{
    return t == GPUHIST_I8 || t == GPUHIST_I16 || t == GPUHIST_I32 || t == GPUHIST_I64;
}

/* Store v (integral and representable, or any value for floats) as sample i of type t. */
static CHECK_UNUSED void put(gpuhist_dtype t, void *base, size_t i, double v)
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
    case GPUHIST_F16: { uint16_t x = test_f16_bits(v); memcpy(p, &x, sizeof x); break; }
    case GPUHIST_BF16: { uint16_t x = test_bf16_bits(v); memcpy(p, &x, sizeof x); break; }
    default: break;
    }
}

/* Store the smallest (lowest) or the largest value of type t as sample i. */
static CHECK_UNUSED void put_extreme(gpuhist_dtype t, void *base, size_t i, int largest)
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
    case GPUHIST_F16: { uint16_t x = largest ? 0x7bffu : 0xfbffu; memcpy(p, &x, sizeof x); break; }
    case GPUHIST_BF16: { uint16_t x = largest ? 0x7f7fu : 0xff7fu; memcpy(p, &x, sizeof x); break; }
    default: break;
    }
}

static CHECK_UNUSED uint32_t n_hists(const gpuhist_samples *s)
{
    uint32_t c = s->channels ? s->channels : 1, n = 0;
    if (s->channel_mask) {
        for (uint32_t k = 0; k < c; ++k)
            n += (s->channel_mask >> k) & 1u;
        return n;
    }
    return s->active_channels ? s->active_channels : c;
}

static CHECK_UNUSED uint64_t n_pixels(const gpuhist_samples *s)
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
static CHECK_UNUSED int hist(const gpuhist_samples *s, const gpuhist_bin_spec *b,
                             uint64_t *counts, double *edges, gpuhist_result *r)
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

static CHECK_UNUSED int check_counts_(const char *file, int line, const uint64_t *got,
                                      const uint64_t *exp, size_t n)
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

static CHECK_UNUSED void check_tally_(const char *file, int line, const gpuhist_result *r,
                                      unsigned k, uint64_t under, uint64_t over, uint64_t nan_,
                                      uint64_t total)
{
    check_eq_u64_(file, line, "underflow", "expected", r->underflow[k], under);
    check_eq_u64_(file, line, "overflow", "expected", r->overflow[k], over);
    check_eq_u64_(file, line, "nan", "expected", r->nan[k], nan_);
    check_eq_u64_(file, line, "total", "expected", r->total[k], total);
}
#define CHECK_TALLY(r, k, under, over, nan_, total)                                            \
    check_tally_(__FILE__, __LINE__, (r), (k), (under), (over), (nan_), (total))

/* ---- independent edge computation and bin lookup --------------------------------------------- */

/* NumPy's linspace edges for EVEN bins, rounded to the edge type (float for f32 samples). */
/* NumPy 2's np.linspace(float32(lower), float32(upper), bins + 1) in float32 (f32 data with an
 * automatic range: the spec's float32_linspace), one rounded float operation at a time. */
static CHECK_UNUSED void my_linspace_f32_edges(uint32_t bins, double lower, double upper,
                                               double *e)
{
    const volatile float L = (float)lower, U = (float)upper;
    const volatile float delta = U - L;
    const volatile float step = delta / (float)bins;
    for (uint32_t i = 0; i < bins; ++i) {
        volatile float v = (float)i;
        if (step == 0.0f) {
            v = v / (float)bins;
            v = v * delta;
        } else {
            v = v * step;
        }
        v = v + L;
        e[i] = (double)v;
    }
    e[bins] = (double)U;
}

static CHECK_UNUSED void my_even_edges(uint32_t bins, double lower, double upper, int f32,
                                       double *e)
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
static CHECK_UNUSED int my_slot(const double *e, uint32_t bins, int last_inclusive, double x)
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

/* ---- the driver ------------------------------------------------------------------------------ */

typedef void (*semantics_test)(void);

/*
 * The main() of a semantics test: open a CPU context, run the tests of `once` on it, then the
 * tests of `each` with the automatic choice first and then with every CPU strategy forced by name
 * (a line per strategy: ok or FAILED, and how many cases it did not take). @return check_exit().
 */
static CHECK_UNUSED int semantics_main(const semantics_test *once, size_t n_once,
                                       const semantics_test *each, size_t n_each)
{
    if (gpuhist_create(&g_ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
    printf("gpuhist %s, %s\n", gpuhist_version(), gpuhist_device_name(g_ctx));
    for (size_t t = 0; t < n_once; ++t)
        once[t]();

    const char *names[64];
    size_t nn = 0;
    names[nn++] = "auto";
    for (size_t i = 0; n_each && i < gpuhist_strategy_count() && nn < 64; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CPU)
            names[nn++] = d.name;
    }
    for (size_t i = 0; n_each && i < nn; ++i) {
        g_strategy = names[i];
        unsigned long before = check_failures_, skipped = g_skipped;
        if (!CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, i == 0 ? "auto" : names[i]), GPUHIST_OK))
            continue;
        for (size_t t = 0; t < n_each; ++t)
            each[t]();
        printf("strategy %-16s %s (%lu cases skipped as unsupported)\n", names[i],
               check_failures_ == before ? "ok" : "FAILED", g_skipped - skipped);
    }
    check_context("%s", "");
    gpuhist_destroy(g_ctx);
    return check_exit();
}

#endif
