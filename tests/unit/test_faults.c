/*
 * test_faults.c - host allocation failure at every allocation site of the library's calls.
 *
 * The test is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so every allocation
 * the library makes goes through the wrappers below, which fail the Nth one when armed. For
 * each workload (a one-shot call on each CPU strategy, a stream fed through buffers, an N-D
 * call with and without weights, an N-D stream, a context creation) it first counts the
 * allocations of a clean run, then runs it once per allocation with that one failing: the call
 * must return OUT_OF_MEMORY (or succeed, when the failed allocation had a fallback) with a
 * message, never crash or return wrong counts, and the same context must give the right counts
 * afterwards. Under AddressSanitizer (scripts/test's sanitizer build) any leak on those error
 * paths fails the run. CPU backend (and OpenCL when present, for context creation and calls,
 * weighted ones included).
 */
#include "gpuhist.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);

static long g_count;     /* allocations seen since arming */
static long g_fail_at;   /* fail the allocation with this number (1-based), 0 = never */
static int g_failed;     /* the armed allocation was failed */

static int should_fail(void)
{
    ++g_count;
    if (g_fail_at && g_count == g_fail_at) {
        g_failed = 1;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }

static void arm(long at)
{
    g_count = 0;
    g_fail_at = at;
    g_failed = 0;
}

enum { PIXELS = 3000, BINS = 37 };
static float g_data[PIXELS];
static uint64_t g_want[BINS];

typedef gpuhist_status (*workload)(gpuhist_ctx *ctx, uint64_t *counts);

static gpuhist_status one_shot(gpuhist_ctx *ctx, uint64_t *counts)
{
    gpuhist_samples s = gpuhist_samples_1d(g_data, GPUHIST_F32, PIXELS);
    gpuhist_bin_spec b = gpuhist_bins_even(BINS, 0.0, 1.0);
    gpuhist_result r = gpuhist_result_host(counts);
    return gpuhist_histogram(ctx, &s, &b, &r);
}

static gpuhist_status streamed(gpuhist_ctx *ctx, uint64_t *counts)
{
    gpuhist_samples lay = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
    gpuhist_bin_spec b = gpuhist_bins_even(BINS, 0.0, 1.0);
    gpuhist_stream *st;
    gpuhist_status rc = gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;
    for (int part = 0; part < 3 && rc == GPUHIST_OK; ++part) {
        void *buf;
        rc = gpuhist_stream_buffer(st, sizeof g_data / 3, &buf);
        if (rc == GPUHIST_OK) {
            memcpy(buf, g_data + part * (PIXELS / 3), sizeof g_data / 3);
            rc = gpuhist_stream_submit(st, buf, PIXELS / 3);
        }
    }
    if (rc == GPUHIST_OK)
        rc = gpuhist_stream_feed(st, g_data, 0);
    if (rc != GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return rc;
    }
    gpuhist_result r = gpuhist_result_host(counts);
    return gpuhist_stream_finish(st, &r);
}

/* N-D (gpuhist_histogramdd) of one axis, whose counts are the 1-D histogram's; unweighted (the
 * stream's lent buffers) and weighted (its own slot buffer and the weight accumulators). */
static gpuhist_status nd_call(gpuhist_ctx *ctx, uint64_t *counts, int weighted)
{
    static float w[PIXELS];
    static double sums[BINS];
    for (int i = 0; i < PIXELS; ++i)
        w[i] = 1.0f;
    gpuhist_points p = gpuhist_points_interleaved(g_data, GPUHIST_F32, 1, PIXELS);
    gpuhist_bin_spec b = gpuhist_bins_even(BINS, 0.0, 1.0);
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    if (weighted) {
        p.weights = w;
        p.weight_dtype = GPUHIST_F32;
        r.sums = sums;
    }
    return gpuhist_histogramdd(ctx, &p, &b, &r);
}
static gpuhist_status nd_plain(gpuhist_ctx *ctx, uint64_t *counts)
{
    return nd_call(ctx, counts, 0);
}
static gpuhist_status nd_weighted(gpuhist_ctx *ctx, uint64_t *counts)
{
    return nd_call(ctx, counts, 1);
}

/* The same, fed as an N-D stream in two chunks. */
static gpuhist_status nd_streamed(gpuhist_ctx *ctx, uint64_t *counts)
{
    gpuhist_points lay = gpuhist_points_interleaved(NULL, GPUHIST_F32, 1, 0);
    gpuhist_bin_spec b = gpuhist_bins_even(BINS, 0.0, 1.0);
    gpuhist_nd_stream *st;
    gpuhist_status rc = gpuhist_nd_stream_begin(ctx, &lay, &b, &st);
    if (rc != GPUHIST_OK)
        return rc;
    gpuhist_points a = gpuhist_points_interleaved(g_data, GPUHIST_F32, 1, PIXELS / 2);
    gpuhist_points z = gpuhist_points_interleaved(g_data + PIXELS / 2, GPUHIST_F32, 1,
                                                  PIXELS - PIXELS / 2);
    if ((rc = gpuhist_nd_stream_feed(st, &a)) != GPUHIST_OK ||
        (rc = gpuhist_nd_stream_feed(st, &z)) != GPUHIST_OK) {
        gpuhist_nd_stream_abort(st);
        return rc;
    }
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    return gpuhist_nd_stream_finish(st, &r);
}

/* Run `w` with every allocation failing in turn; @return the number of allocations. */
static long sweep(const char *name, gpuhist_ctx *ctx, workload w)
{
    uint64_t counts[BINS];
    arm(0);
    if (!CHECK_EQ_INT(w(ctx, counts), GPUHIST_OK))
        return 0;
    long n = g_count;
    for (long k = 1; k <= n; ++k) {
        check_context("%s: allocation %ld of %ld fails", name, k, n);
        memset(counts, 0xA5, sizeof counts);
        arm(k);
        gpuhist_status rc = w(ctx, counts);
        arm(0);
        if (rc == GPUHIST_OK) {
            CHECK(memcmp(counts, g_want, sizeof counts) == 0); /* a fallback: still right */
        } else {
            CHECK_EQ_INT(rc, GPUHIST_ERROR_OUT_OF_MEMORY);
            CHECK(gpuhist_last_error(ctx)[0] != '\0');
        }
        /* the context still works */
        memset(counts, 0, sizeof counts);
        if (CHECK_EQ_INT(w(ctx, counts), GPUHIST_OK))
            CHECK(memcmp(counts, g_want, sizeof counts) == 0);
    }
    printf("%-40s %3ld allocation sites, each failed once\n", name, n);
    return n;
}

int main(void)
{
    for (int i = 0; i < PIXELS; ++i)
        g_data[i] = (float)((i * 7919) % 1000) / 1000.0f;
    for (int i = 0; i < PIXELS; ++i)
        ++g_want[(int)(g_data[i] * BINS) < BINS ? (int)(g_data[i] * BINS) : BINS - 1];
    /* the exact reference: a clean cpu-reference run */
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(ctx, "cpu-reference") != GPUHIST_OK || one_shot(ctx, g_want) != GPUHIST_OK) {
        fprintf(stderr, "cannot run the reference\n");
        return 1;
    }
    static const char *const strategies[] = {"cpu-reference", "cpu-serial", "cpu-threads"};
    for (size_t i = 0; i < sizeof strategies / sizeof strategies[0]; ++i) {
        char name[64];
        CHECK_EQ_INT(gpuhist_set_strategy(ctx, strategies[i]), GPUHIST_OK);
        CHECK_EQ_INT(gpuhist_set_threads(ctx, 3), GPUHIST_OK);
        snprintf(name, sizeof name, "cpu one-shot, %s", strategies[i]);
        sweep(name, ctx, one_shot);
        snprintf(name, sizeof name, "cpu stream, %s", strategies[i]);
        sweep(name, ctx, streamed);
    }
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "auto"), GPUHIST_OK);
    sweep("cpu histogramdd", ctx, nd_plain);
    sweep("cpu histogramdd, weighted", ctx, nd_weighted);
    sweep("cpu N-D stream", ctx, nd_streamed);
    gpuhist_destroy(ctx);

    /* Context creation: every allocation failing in turn gives a clean error, no context. */
    for (long k = 1;; ++k) {
        check_context("gpuhist_create(cpu): allocation %ld fails", k);
        gpuhist_ctx *c = NULL;
        arm(k);
        gpuhist_status rc = gpuhist_create(&c, GPUHIST_BACKEND_CPU);
        int failed = g_failed;
        arm(0);
        if (!failed) {
            CHECK_EQ_INT(rc, GPUHIST_OK);
            gpuhist_destroy(c);
            printf("%-40s %3ld allocation sites, each failed once\n", "gpuhist_create(cpu)", k - 1);
            break;
        }
        if (rc == GPUHIST_OK)
            gpuhist_destroy(c);
        else
            CHECK(c == NULL);
    }

    /* OpenCL, when there is a device: the same sweeps through the other backend. */
    gpuhist_ctx *ocl = NULL;
    if (gpuhist_create(&ocl, GPUHIST_BACKEND_OPENCL) == GPUHIST_OK) {
        sweep("opencl one-shot, auto", ocl, one_shot);
        sweep("opencl stream, auto", ocl, streamed);
        /* weighted: the one-shot call's accumulator and the stream's exact states */
        sweep("opencl histogramdd, weighted", ocl, nd_weighted);
        gpuhist_destroy(ocl);
    } else {
        printf("opencl: no device (%s): its sweeps skipped\n", gpuhist_last_error(NULL));
    }
    return check_exit();
}
