/*
 * test_cpu_weighted_reuse.c - cpu-weighted's private records and the CPU backend's weight
 * accumulator kept in the context from call to call (src/cpu/weighted.c, cpu_backend.c,
 * scratch.c).
 *
 * 1. Reuse: a sequence of weighted calls drawn from a fixed seed (printed), of different sizes
 *    (1 .. 300000 pixels, so 1 to 4 threads run), bin kinds and counts (1 .. 4096 even f32
 *    bins, uneven f64 edges, integer i32 bins, 3-channel u8), weight types (f32, f64), with and
 *    without squares, thread counts 1-4, some with NaN and infinite weights (their flags must
 *    not outlive the call), on ONE context, each compared bit for bit (counts, tallies, sums,
 *    squares) with the same call on a fresh context. Between them: unweighted cpu-threads calls
 *    (the same scratch entries' other tables), weighted streams in chunks and failing calls.
 * 2. Bounded memory (gpuhist_cpu_kept_bytes, cpu_kernels.h): after every call the context keeps
 *    at most the keep limit (GPUHIST_CPU_KEEP_MIB, default 256 MiB); with the default limit, a
 *    weighted call keeps exactly its counters, its accumulator and the records of its threads
 *    but the first, and repeating it or making smaller calls keeps no more.
 * 3. No fresh pages (Linux, default limit, no sanitizer): a repeated 2^15-bin call with f64 sums
 *    and squares on 2 threads takes (almost) no minor page faults, against the ~17800 pages of
 *    fresh records and accumulator (too large for glibc to reuse freed heap: it maps them).
 * Registered also with GPUHIST_CPU_KEEP_MIB=0 (all freed after each histogram) and =1 (the
 * large calls freed, the small kept).
 */
#define _DEFAULT_SOURCE
#include "gpuhist.h"
#include "check.h"
#include "cpu_kernels.h" /* gpuhist_cpu_kept_bytes */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/resource.h>
#endif
#define SANITIZED CHECK_SANITIZED /* check.h */

#define SEED 0x3eed5a11u
#define PIXELS 300000u
#define CALLS 90
#define EDGES_BINS 16u
#define MAX_BINS 4096u
#define MAX_CH 3u
#define HUGE_BINS (1u << 15)

static uint64_t g_rng = SEED;
static uint64_t rng(void) { return check_splitmix64(&g_rng); }
static double unit(void) { return (double)(rng() >> 11) * (1.0 / 9007199254740992.0); }

static float *g_f32, *g_w32, *g_w32s; /* samples, weights, weights with NaN / inf */
static double *g_f64, *g_w64, *g_w64s;
static uint8_t *g_rgb; /* PIXELS * 3 */
static int32_t *g_i32;
static double g_edges[EDGES_BINS + 1];
static size_t g_keep_limit;

static void make_data(void)
{
    g_f32 = malloc(PIXELS * sizeof *g_f32);
    g_w32 = malloc(PIXELS * sizeof *g_w32);
    g_w32s = malloc(PIXELS * sizeof *g_w32s);
    g_f64 = malloc(PIXELS * sizeof *g_f64);
    g_w64 = malloc(PIXELS * sizeof *g_w64);
    g_w64s = malloc(PIXELS * sizeof *g_w64s);
    g_rgb = malloc(PIXELS * 3u);
    g_i32 = malloc(PIXELS * sizeof *g_i32);
    if (!g_f32 || !g_w32 || !g_w32s || !g_f64 || !g_w64 || !g_w64s || !g_rgb || !g_i32) {
        fprintf(stderr, "test_cpu_weighted_reuse: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < PIXELS; ++i) {
        const double u = -0.05 + 1.1 * unit(); /* outliers on both sides, a NaN now and then */
        g_f32[i] = (i % 997u == 5u) ? NAN : (float)u;
        g_f64[i] = (i % 991u == 7u) ? NAN : u * u;
        g_i32[i] = (int32_t)(rng() % 1200u) - 100;
        /* weights of both signs and very different magnitudes: the sums cancel */
        const double w = (unit() - 0.3) * ldexp(1.0, (int)(rng() % 40u) - 20);
        g_w64[i] = w;
        g_w32[i] = (float)w;
        g_w64s[i] = (i % 4099u == 11u) ? NAN : (i % 2053u == 3u) ? INFINITY : w;
        g_w32s[i] = (float)g_w64s[i];
    }
    for (size_t i = 0; i < PIXELS * 3u; ++i)
        g_rgb[i] = (rng() % 3u == 0u) ? 7u : (uint8_t)(rng() >> 56);
    for (uint32_t i = 0; i <= EDGES_BINS; ++i)
        g_edges[i] = ((double)i / EDGES_BINS) * ((double)i / EDGES_BINS);
    const char *keep = getenv("GPUHIST_CPU_KEEP_MIB");
    g_keep_limit = keep && *keep ? (size_t)strtoull(keep, NULL, 10) << 20 : (size_t)256 << 20;
}

/* One weighted request: what a call and its fresh-context twin are given. */
typedef struct request {
    char what[160];
    gpuhist_samples s;
    gpuhist_bin_spec b;
    uint32_t bins, channels;
    int squares, threads;
} request;

static const uint32_t EVEN_BINS[] = {1, 17, 100, 4096};
static const uint64_t SIZES[] = {1, 1000, 1024, 4096, 65535, 65536, 131073, 200003, PIXELS};

static request draw(void)
{
    request q;
    memset(&q, 0, sizeof q);
    const uint64_t n = SIZES[rng() % (sizeof SIZES / sizeof SIZES[0])];
    const uint64_t at = n == PIXELS ? 0 : rng() % (PIXELS - n);
    const int kind = (int)(rng() % 6u); /* 0-2: f32 even, 3: f64 edges, 4: i32, 5: RGB */
    const int f64w = (int)(rng() % 2u), special = rng() % 4u == 0u;
    q.squares = (int)(rng() % 2u);
    q.threads = 1 + (int)(rng() % 4u);
    q.channels = 1;
    const char *samples;
    if (kind <= 2) {
        q.bins = EVEN_BINS[rng() % 4u];
        q.s = gpuhist_samples_1d(g_f32 + at, GPUHIST_F32, n);
        q.b = gpuhist_bins_even(q.bins, 0.0, 1.0);
        samples = "f32 even";
    } else if (kind == 3) {
        q.bins = EDGES_BINS;
        q.s = gpuhist_samples_1d(g_f64 + at, GPUHIST_F64, n);
        q.b = gpuhist_bins_edges(EDGES_BINS, g_edges);
        samples = "f64 edges";
    } else if (kind == 4) {
        q.bins = 1000;
        q.s = gpuhist_samples_1d(g_i32 + at, GPUHIST_I32, n);
        q.b = gpuhist_bins_integer(1000, 0);
        samples = "i32 integer";
    } else {
        q.bins = 100;
        q.channels = 3;
        q.s = gpuhist_samples_1d(g_rgb + at * 3u, GPUHIST_U8, n);
        q.s.channels = 3;
        q.b = gpuhist_bins_even(100, 0.0, 200.0);
        samples = "u8 RGB";
    }
    if (f64w) {
        q.s.weights = (special ? g_w64s : g_w64) + at;
        q.s.weight_dtype = GPUHIST_F64;
    } else {
        q.s.weights = (special ? g_w32s : g_w32) + at;
        q.s.weight_dtype = GPUHIST_F32;
    }
    snprintf(q.what, sizeof q.what, "%s, %u bins, %llu pixels at %llu, %s weights%s%s, %d threads",
             samples, q.bins, (unsigned long long)n, (unsigned long long)at, f64w ? "f64" : "f32",
             special ? " (NaN/inf)" : "", q.squares ? ", squares" : "", q.threads);
    return q;
}

typedef struct answer {
    uint64_t counts[MAX_BINS * MAX_CH];
    double sums[MAX_BINS * MAX_CH], squares[MAX_BINS * MAX_CH];
    gpuhist_result r;
} answer;

/* q on ctx (cpu-weighted, q's threads) into a (filled with junk first: all must be written). */
static gpuhist_status run(gpuhist_ctx *ctx, const request *q, answer *a)
{
    memset(a, 0xa5, sizeof *a);
    a->r = gpuhist_result_host(a->counts);
    a->r.sums = a->sums;
    a->r.sums_squared = q->squares ? a->squares : NULL;
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-weighted"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, q->threads), GPUHIST_OK);
    return gpuhist_histogram(ctx, &q->s, &q->b, &a->r);
}

static int same(const request *q, const answer *x, const answer *y)
{
    const size_t n = (size_t)q->bins * q->channels;
    int ok = memcmp(x->counts, y->counts, n * sizeof x->counts[0]) == 0 &&
             memcmp(x->sums, y->sums, n * sizeof x->sums[0]) == 0 &&
             (!q->squares || memcmp(x->squares, y->squares, n * sizeof x->squares[0]) == 0);
    for (uint32_t c = 0; c < q->channels; ++c)
        ok = ok && x->r.underflow[c] == y->r.underflow[c] &&
             x->r.overflow[c] == y->r.overflow[c] && x->r.nan[c] == y->r.nan[c] &&
             x->r.total[c] == y->r.total[c];
    return ok;
}

static answer g_got, g_want;

/* q on the shared context and on a fresh one: the same bits. */
/* q on a fresh CPU context, into g_want: the answer a call with nothing kept gives. */
static void fresh_answer(const request *q)
{
    gpuhist_ctx *fresh = NULL;
    CHECK_EQ_INT(gpuhist_create(&fresh, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!fresh)
        exit(1);
    CHECK_EQ_INT(run(fresh, q, &g_want), GPUHIST_OK);
    gpuhist_destroy(fresh);
}

static void compare(gpuhist_ctx *shared, const request *q, int i)
{
    gpuhist_status st = run(shared, q, &g_got);
    CHECK_EQ_INT(st, GPUHIST_OK);
    if (st != GPUHIST_OK)
        fprintf(stderr, "  call %d (%s): %s\n", i, q->what, gpuhist_last_error(shared));
    fresh_answer(q);
    const int ok = same(q, &g_got, &g_want);
    if (!ok)
        fprintf(stderr, "  call %d (%s): differs from a fresh context's\n", i, q->what);
    CHECK(ok);
    const size_t kept = gpuhist_cpu_kept_bytes(shared);
    if (kept > g_keep_limit)
        fprintf(stderr, "  call %d (%s): %zu bytes kept, limit %zu\n", i, q->what, kept,
                g_keep_limit);
    CHECK(kept <= g_keep_limit);
}

/* An unweighted cpu-threads call (other tables of the same scratch entries) after compare() of
 * the same request: its counts are the weighted call's (g_want). */
static void unweighted_call(gpuhist_ctx *ctx, request q)
{
    q.s.weights = NULL;
    answer *a = &g_got;
    memset(a, 0xa5, sizeof *a);
    a->r = gpuhist_result_host(a->counts);
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-threads"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, q.threads), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &q.s, &q.b, &a->r), GPUHIST_OK);
    CHECK_EQ_INT(memcmp(a->counts, g_want.counts, (size_t)q.bins * q.channels * 8u), 0);
}

/* A weighted call that fails validation (a weight type that is not f32/f64). */
static void failing_call(gpuhist_ctx *ctx, request q)
{
    q.s.weight_dtype = GPUHIST_I32;
    CHECK(run(ctx, &q, &g_got) != GPUHIST_OK);
}

/* q streamed in 3 chunks on the shared context: the same bits as one call on a fresh one. */
static void stream_call(gpuhist_ctx *ctx, const request *q)
{
    fresh_answer(q);
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-weighted"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, q->threads), GPUHIST_OK);
    gpuhist_stream *st = NULL;
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &q->s, &q->b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    if (!st)
        return;
    const uint64_t n = q->s.count, chunk = n / 3u + 1u;
    const size_t px = (size_t)gpuhist_dtype_size(q->s.dtype) * q->channels;
    const size_t wz = q->s.weight_dtype == GPUHIST_F32 ? 4u : 8u;
    for (uint64_t at = 0; at < n; at += chunk) {
        const uint64_t k = n - at < chunk ? n - at : chunk;
        CHECK_EQ_INT(gpuhist_stream_feed_weighted(st, (const char *)q->s.data + at * px,
                                                  (const char *)q->s.weights + at * wz, k),
                     GPUHIST_OK);
    }
    answer *a = &g_got;
    memset(a, 0xa5, sizeof *a);
    a->r = gpuhist_result_host(a->counts);
    a->r.sums = a->sums;
    a->r.sums_squared = q->squares ? a->squares : NULL;
    CHECK_EQ_INT(gpuhist_stream_finish(st, &a->r), GPUHIST_OK);
    const int ok = same(q, a, &g_want);
    if (!ok)
        fprintf(stderr, "  stream (%s): differs from one call on a fresh context\n", q->what);
    CHECK(ok);
}

/* Part 2: exactly what a weighted call keeps, and no growth on repeats or smaller calls. */
static void bounded(void)
{
    gpuhist_ctx *ctx = NULL;
    CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!ctx)
        exit(1);
    CHECK_EQ_U64(gpuhist_cpu_kept_bytes(ctx), 0);
    const char *keep = getenv("GPUHIST_CPU_KEEP_MIB");
    const int keep_set = keep && *keep;
    request big;
    memset(&big, 0, sizeof big);
    snprintf(big.what, sizeof big.what, "f32 even, 4096 bins, f64 weights, squares, 2 threads");
    big.bins = MAX_BINS;
    big.channels = 1;
    big.squares = 1;
    big.threads = 2;
    big.s = gpuhist_samples_1d(g_f32, GPUHIST_F32, PIXELS);
    big.s.weights = g_w64;
    big.s.weight_dtype = GPUHIST_F64;
    big.b = gpuhist_bins_even(MAX_BINS, 0.0, 1.0);
    CHECK_EQ_INT(run(ctx, &big, &g_got), GPUHIST_OK);
    /* counters (slots), accumulator (sum + square record per slot), thread 1's records (count,
     * sum and square records per slot); thread 0 adds into the result */
    const size_t slots = MAX_BINS + 3u;
    const size_t state = gpuhist_weight_state_words(MAX_BINS, 1, GPUHIST_F64, 1);
    const size_t expect = (slots + state + (slots + state)) * 8u;
    const size_t kept = gpuhist_cpu_kept_bytes(ctx);
    printf("test_cpu_weighted_reuse: kept after a 4096-bin f64 call on 2 threads: %zu bytes "
           "(expected %zu, or 0 when over the limit of %zu)\n",
           kept, expect, g_keep_limit);
    CHECK_EQ_U64(kept, expect <= g_keep_limit ? expect : 0u);
    request small = big; /* fewer bins, f32 weights: fits in what the big call keeps */
    small.bins = 100;
    small.b = gpuhist_bins_even(100, 0.0, 1.0);
    small.s.weights = g_w32;
    small.s.weight_dtype = GPUHIST_F32;
    small.squares = 0;
    /* alone, on 2 threads: counters, accumulator, thread 1's counts and records */
    const size_t small_state = gpuhist_weight_state_words(100, 1, GPUHIST_F32, 0);
    const size_t small_alone = (103u + small_state) * 2u * 8u;
    for (int i = 0; i < 20; ++i) {
        CHECK_EQ_INT(run(ctx, i % 2 ? &small : &big, &g_got), GPUHIST_OK);
        const size_t want = expect <= g_keep_limit ? expect
                            : i % 2 && small_alone <= g_keep_limit ? small_alone
                                                                   : 0u;
        CHECK_EQ_U64(gpuhist_cpu_kept_bytes(ctx), want);
    }
    /* a one-channel small call alone on a fresh context: kept unless the limit is 0 */
    gpuhist_ctx *c2 = NULL;
    CHECK_EQ_INT(gpuhist_create(&c2, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!c2)
        exit(1);
    small.threads = 1;
    CHECK_EQ_INT(run(c2, &small, &g_got), GPUHIST_OK);
    const size_t small_expect = (103u + small_state) * 8u; /* one thread: no private records */
    CHECK_EQ_U64(gpuhist_cpu_kept_bytes(c2), small_expect <= g_keep_limit ? small_expect : 0u);
    gpuhist_destroy(c2);

#if defined(__linux__)
    /* Part 3 */
    if (SANITIZED) {
        printf("test_cpu_weighted_reuse: page-fault check skipped (built with a sanitizer)\n");
    } else if (!keep_set) {
        /* 2^15 bins: 36 MiB of records and as much accumulator, above glibc's largest mmap
         * threshold (32 MiB), so fresh ones would be mapped and faulted in on every call */
        request huge = big;
        huge.bins = HUGE_BINS;
        huge.b = gpuhist_bins_even(HUGE_BINS, 0.0, 1.0);
        const size_t pages = (gpuhist_weight_state_words(HUGE_BINS, 1, GPUHIST_F64, 1) * 2u +
                              HUGE_BINS + 3u) * 8u / 4096u;
        static uint64_t counts[HUGE_BINS];
        static double sums[HUGE_BINS], squares[HUGE_BINS];
        gpuhist_result r = gpuhist_result_host(counts);
        r.sums = sums;
        r.sums_squared = squares;
        CHECK_EQ_INT(gpuhist_histogram(ctx, &huge.s, &huge.b, &r), GPUHIST_OK);
        struct rusage u0, u1;
        getrusage(RUSAGE_SELF, &u0);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &huge.s, &huge.b, &r), GPUHIST_OK);
        getrusage(RUSAGE_SELF, &u1);
        const long faults = u1.ru_minflt - u0.ru_minflt;
        printf("test_cpu_weighted_reuse: minor page faults of a repeated 2^15-bin f64 call on 2 "
               "threads: %ld (fresh records and accumulator: %zu pages)\n",
               faults, pages);
        CHECK(faults < 64);
    }
#endif
    gpuhist_destroy(ctx);
}

int main(void)
{
    const char *keep = getenv("GPUHIST_CPU_KEEP_MIB");
    printf("test_cpu_weighted_reuse: seed 0x%x, %d calls, GPUHIST_CPU_KEEP_MIB=%s\n", SEED, CALLS,
           keep ? keep : "(unset)");
    make_data();
    gpuhist_ctx *ctx = NULL;
    CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!ctx)
        return 1;
    for (int i = 0; i < CALLS; ++i) {
        const request q = draw();
        compare(ctx, &q, i);
        if (i % 10 == 3)
            unweighted_call(ctx, q);
        if (i % 10 == 6)
            failing_call(ctx, q);
        if (i % 15 == 9)
            stream_call(ctx, &q);
    }
    gpuhist_destroy(ctx);
    bounded();
    free(g_f32);
    free(g_w32);
    free(g_w32s);
    free(g_f64);
    free(g_w64);
    free(g_w64s);
    free(g_rgb);
    free(g_i32);
    return check_exit();
}
