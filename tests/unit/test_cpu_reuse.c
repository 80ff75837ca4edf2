/*
 * test_cpu_reuse.c - the CPU backend's scratch kept in the context from call to call
 * (src/cpu/cpu_backend.c, cpu_kernels.h): calls of different dtypes, bin counts, strategies and
 * thread counts one after another on ONE context give exactly what cpu-reference gives on a
 * fresh context for each case (counts and tallies).
 *
 * The sequence is run twice on the same context, with a stream and a weighted call between the
 * passes (other users of the kept counters), and with a failing call (a bad bin spec) between
 * cases; a reused table left non-zero, or sized for an earlier case, shows as wrong counts.
 * cpu-serial's deferred flush: streams fed in chunks keep the 32-bit sub-counters unflushed
 * between chunks (cpu_kernels.h); streams of 2^20 bins, 4096 bins and RGB in 7 chunks equal
 * the expected counts, and after a stream abandoned with counts still unflushed, or finished,
 * the next calls of other sizes on the context are exact.
 * Then, on Linux, a repeat of the largest call (2^20 even bins, cpu-threads on 2 threads) must
 * take (almost) no fresh pages: its minor page faults are compared with the 2^20 x 4 bytes x 2
 * + 2^20 x 8 x 2 bytes of tables that fresh allocations would fault in. Skipped when
 * GPUHIST_CPU_KEEP_MIB limits what is kept (the same test registered with GPUHIST_CPU_KEEP_MIB=0
 * runs the release path: everything freed after each histogram, allocated again by the next),
 * and in sanitizer builds (their own allocations fault pages on every call).
 *
 * Data come from a fixed seed (printed). Each thread of cpu-threads takes at least 256 Ki
 * samples, so the inputs hold 1.25 Mi samples (up to 4 threads run).
 */
#define _DEFAULT_SOURCE
#include "gpuhist.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/resource.h>
#endif
/* The page-fault check counts the process's faults: sanitizers' own allocations (quarantine,
 * shadow memory, thread set-up) fault pages on every call, so it is skipped under them. */
#define SANITIZED CHECK_SANITIZED /* check.h */

#define SEED 0xc0ffee21u
#define PIXELS (5u << 18) /* 1.25 Mi */
#define EDGES_BINS 16u

static uint64_t g_rng = SEED;
static uint64_t rng(void) { return check_splitmix64(&g_rng); }
static double unit(void) { return (double)(rng() >> 11) * (1.0 / 9007199254740992.0); }

static float *g_f32;
static double *g_f64;
static uint8_t *g_u8;  /* PIXELS * 3: RGB for the 3-channel case, the first PIXELS for u8 */
static uint16_t *g_u16;
static int32_t *g_i32;
static double g_edges[EDGES_BINS + 1];

typedef struct tcase {
    const char *name;
    gpuhist_samples s;
    gpuhist_bin_spec b;
    uint32_t bins, channels;
    uint64_t *expect; /* bins * channels */
    gpuhist_result expect_r;
} tcase;

enum { C_F32_1M, C_F32_4096, C_F32_17, C_F64_EDGES, C_U8, C_U16, C_RGB, C_I32, NCASES };
static tcase g_cases[NCASES];

static void make_data(void)
{
    g_f32 = malloc((size_t)PIXELS * sizeof *g_f32);
    g_f64 = malloc((size_t)PIXELS * sizeof *g_f64);
    g_u8 = malloc((size_t)PIXELS * 3u);
    g_u16 = malloc((size_t)PIXELS * sizeof *g_u16);
    g_i32 = malloc((size_t)PIXELS * sizeof *g_i32);
    if (!g_f32 || !g_f64 || !g_u8 || !g_u16 || !g_i32) {
        fprintf(stderr, "test_cpu_reuse: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < PIXELS; ++i) {
        /* [-0.05, 1.05): outliers on both sides; a NaN now and then */
        double u = -0.05 + 1.1 * unit();
        g_f32[i] = (i % 997u == 5u) ? NAN : (float)u;
        g_f64[i] = (i % 991u == 7u) ? NAN : u * u;
        g_u16[i] = (uint16_t)(rng() >> 48);
        g_i32[i] = (int32_t)(rng() % 1200u) - 100;
    }
    for (size_t i = 0; i < (size_t)PIXELS * 3u; ++i) /* skewed: a third of the bytes are 7 */
        g_u8[i] = (rng() % 3u == 0u) ? 7u : (uint8_t)(rng() >> 56);
    for (uint32_t i = 0; i <= EDGES_BINS; ++i) /* uneven: (i / 16)^2 */
        g_edges[i] = ((double)i / EDGES_BINS) * ((double)i / EDGES_BINS);
}

static void set_case(int k, const char *name, gpuhist_samples s, gpuhist_bin_spec b,
                     uint32_t bins, uint32_t channels)
{
    g_cases[k].name = name;
    g_cases[k].s = s;
    g_cases[k].b = b;
    g_cases[k].bins = bins;
    g_cases[k].channels = channels;
}

static void make_cases(void)
{
    set_case(C_F32_1M, "f32, 2^20 even", gpuhist_samples_1d(g_f32, GPUHIST_F32, PIXELS),
             gpuhist_bins_even(1u << 20, 0.0, 1.0), 1u << 20, 1);
    set_case(C_F32_4096, "f32, 4096 even", gpuhist_samples_1d(g_f32, GPUHIST_F32, PIXELS),
             gpuhist_bins_even(4096, 0.0, 1.0), 4096, 1);
    set_case(C_F32_17, "f32, 17 even over [0.1, 0.9)",
             gpuhist_samples_1d(g_f32, GPUHIST_F32, PIXELS), gpuhist_bins_even(17, 0.1, 0.9), 17,
             1);
    set_case(C_F64_EDGES, "f64, 16 uneven edges", gpuhist_samples_1d(g_f64, GPUHIST_F64, PIXELS),
             gpuhist_bins_edges(EDGES_BINS, g_edges), EDGES_BINS, 1);
    set_case(C_U8, "u8, 256 values", gpuhist_samples_1d(g_u8, GPUHIST_U8, PIXELS),
             gpuhist_bins_even(256, 0.0, 256.0), 256, 1);
    set_case(C_U16, "u16, 65536 values", gpuhist_samples_1d(g_u16, GPUHIST_U16, PIXELS),
             gpuhist_bins_even(65536, 0.0, 65536.0), 65536, 1);
    gpuhist_samples rgb = gpuhist_samples_1d(g_u8, GPUHIST_U8, PIXELS);
    rgb.channels = 3;
    set_case(C_RGB, "u8 RGB, 100 bins over [0, 200)", rgb, gpuhist_bins_even(100, 0.0, 200.0),
             100, 3);
    set_case(C_I32, "i32, 1000 integer bins from 0",
             gpuhist_samples_1d(g_i32, GPUHIST_I32, PIXELS), gpuhist_bins_integer(1000, 0), 1000,
             1);
}

/* Each case's expected result: cpu-reference on a context of its own. */
static void make_expected(void)
{
    for (int k = 0; k < NCASES; ++k) {
        tcase *c = &g_cases[k];
        gpuhist_ctx *ctx = NULL;
        CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK);
        if (!ctx)
            exit(1);
        CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-reference"), GPUHIST_OK);
        c->expect = calloc((size_t)c->bins * c->channels, sizeof *c->expect);
        if (!c->expect)
            exit(1);
        c->expect_r = gpuhist_result_host(c->expect);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &c->s, &c->b, &c->expect_r), GPUHIST_OK);
        gpuhist_destroy(ctx);
    }
}

/* A result of case c (counts in got) against cpu-reference's: every counter and tally. */
static void check_case(const tcase *c, const uint64_t *got, const gpuhist_result *r,
                       const char *how)
{
    size_t bad = 0;
    for (size_t i = 0; i < (size_t)c->bins * c->channels; ++i)
        bad += got[i] != c->expect[i];
    if (bad)
        fprintf(stderr, "  %s, %s: %zu counters differ from cpu-reference\n", c->name, how, bad);
    CHECK_EQ_U64(bad, 0);
    for (uint32_t ch = 0; ch < c->channels; ++ch) {
        CHECK_EQ_U64(r->underflow[ch], c->expect_r.underflow[ch]);
        CHECK_EQ_U64(r->overflow[ch], c->expect_r.overflow[ch]);
        CHECK_EQ_U64(r->nan[ch], c->expect_r.nan[ch]);
        CHECK_EQ_U64(r->total[ch], c->expect_r.total[ch]);
    }
}

/* One call of case k with `strategy` on `threads` threads on the shared context; compared. */
static void run_case(gpuhist_ctx *ctx, int k, const char *strategy, int threads)
{
    tcase *c = &g_cases[k];
    size_t n = (size_t)c->bins * c->channels;
    uint64_t *got = malloc(n * sizeof *got);
    if (!got)
        exit(1);
    memset(got, 0xa5, n * sizeof *got); /* no stale zeros: every counter must be written */
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, strategy), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, threads), GPUHIST_OK);
    gpuhist_result r = gpuhist_result_host(got);
    gpuhist_status st = gpuhist_histogram(ctx, &c->s, &c->b, &r);
    CHECK_EQ_INT(st, GPUHIST_OK);
    if (st != GPUHIST_OK)
        fprintf(stderr, "  %s: %s\n", c->name, gpuhist_last_error(ctx));
    char how[64];
    snprintf(how, sizeof how, "%s x%d", strategy, threads);
    check_case(c, got, &r, how);
    free(got);
}

/* A call that fails validation (edges not increasing) between two good ones. */
static void failing_call(gpuhist_ctx *ctx)
{
    const double bad_edges[3] = {0.0, 1.0, 0.5};
    gpuhist_bin_spec b = gpuhist_bins_edges(2, bad_edges);
    uint64_t counts[2];
    gpuhist_result r = gpuhist_result_host(counts);
    gpuhist_samples s = gpuhist_samples_1d(g_f32, GPUHIST_F32, PIXELS);
    CHECK(gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK);
}

/* A stream of the f32 2^20 case in 5 chunks on the shared context; compared with the expected. */
static void stream_case(gpuhist_ctx *ctx)
{
    tcase *c = &g_cases[C_F32_1M];
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-threads"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, 2), GPUHIST_OK);
    gpuhist_stream *st = NULL;
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &c->s, &c->b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    if (!st)
        return;
    const uint64_t chunk = PIXELS / 5u;
    for (uint64_t at = 0; at < PIXELS; at += chunk) {
        uint64_t n = PIXELS - at < chunk ? PIXELS - at : chunk;
        CHECK_EQ_INT(gpuhist_stream_feed(st, g_f32 + at, n), GPUHIST_OK);
    }
    uint64_t *got = calloc((size_t)c->bins, sizeof *got);
    if (!got)
        exit(1);
    gpuhist_result r = gpuhist_result_host(got);
    CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
    CHECK_EQ_INT(memcmp(got, c->expect, (size_t)c->bins * sizeof *got), 0);
    CHECK_EQ_U64(r.nan[0], c->expect_r.nan[0]);
    free(got);
}

/* Case k streamed in `chunks` chunks with `strategy` on one thread; with `abandon`, the stream
 * is aborted after half its chunks instead (nothing to compare). */
static void stream_chunks(gpuhist_ctx *ctx, int k, const char *strategy, int chunks, int abandon)
{
    tcase *c = &g_cases[k];
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, strategy), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, 1), GPUHIST_OK);
    gpuhist_stream *st = NULL;
    CHECK_EQ_INT(gpuhist_stream_begin(ctx, &c->s, &c->b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK);
    if (!st)
        return;
    const size_t pixel = gpuhist_dtype_size(c->s.dtype) * (c->s.channels ? c->s.channels : 1u);
    const uint64_t chunk = PIXELS / (uint64_t)chunks + 1u;
    for (uint64_t at = 0; at < PIXELS; at += chunk) {
        if (abandon && at >= PIXELS / 2u) {
            gpuhist_stream_abort(st);
            return;
        }
        uint64_t n = PIXELS - at < chunk ? PIXELS - at : chunk;
        CHECK_EQ_INT(gpuhist_stream_feed(st, (const unsigned char *)c->s.data + at * pixel, n),
                     GPUHIST_OK);
    }
    size_t nc = (size_t)c->bins * (c->channels ? c->channels : 1u);
    uint64_t *got = malloc(nc * sizeof *got);
    if (!got)
        exit(1);
    memset(got, 0xa5, nc * sizeof *got);
    gpuhist_result r = gpuhist_result_host(got);
    CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
    char how[64];
    snprintf(how, sizeof how, "streamed by %s in %d chunks", strategy, chunks);
    check_case(c, got, &r, how);
    free(got);
}

/* cpu-serial's sub-counters left unflushed between chunks, then settled, dropped or handed on. */
static void deferred_case(gpuhist_ctx *ctx)
{
    stream_chunks(ctx, C_F32_1M, "cpu-serial", 7, 0);
    stream_chunks(ctx, C_F32_1M, "cpu-serial", 7, 1); /* abandoned with counts unflushed */
    run_case(ctx, C_F32_4096, "cpu-serial", 1);       /* a smaller table next: exact */
    stream_chunks(ctx, C_F32_4096, "cpu-serial", 7, 1);
    run_case(ctx, C_F32_1M, "cpu-serial", 1);         /* a larger table next: exact */
    stream_chunks(ctx, C_RGB, "cpu-serial", 7, 0);
    stream_chunks(ctx, C_F32_1M, "cpu-serial", 2, 0);
    run_case(ctx, C_F32_1M, "cpu-threads", 2);
    stream_chunks(ctx, C_F64_EDGES, "cpu-serial", 5, 0);
}

/* A weighted call (unit weights: sums equal counts) on the shared context. */
static void weighted_case(gpuhist_ctx *ctx)
{
    tcase *c = &g_cases[C_F32_4096];
    float *w = malloc((size_t)PIXELS * sizeof *w);
    uint64_t *got = calloc(c->bins, sizeof *got);
    double *sums = calloc(c->bins, sizeof *sums);
    if (!w || !got || !sums)
        exit(1);
    for (size_t i = 0; i < PIXELS; ++i)
        w[i] = 1.0f;
    gpuhist_samples s = c->s;
    s.weights = w;
    s.weight_dtype = GPUHIST_F32;
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, NULL), GPUHIST_OK);
    gpuhist_result r = gpuhist_result_host(got);
    r.sums = sums;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &c->b, &r), GPUHIST_OK);
    size_t bad = 0;
    for (uint32_t i = 0; i < c->bins; ++i)
        bad += got[i] != c->expect[i] || sums[i] != (double)c->expect[i];
    CHECK_EQ_U64(bad, 0);
    free(w);
    free(got);
    free(sums);
}

static void sequence(gpuhist_ctx *ctx)
{
    run_case(ctx, C_F32_1M, "cpu-threads", 2);
    run_case(ctx, C_F32_4096, "cpu-threads", 4);
    run_case(ctx, C_F32_1M, "cpu-serial", 1);
    failing_call(ctx);
    run_case(ctx, C_U16, "cpu-threads", 3);
    run_case(ctx, C_U8, "cpu-threads", 2);
    run_case(ctx, C_F64_EDGES, "cpu-threads", 2);
    run_case(ctx, C_F32_1M, "cpu-threads", 1);
    run_case(ctx, C_U16, "cpu-serial", 1);
    run_case(ctx, C_F32_1M, "cpu-threads", 4);
    failing_call(ctx);
    run_case(ctx, C_F32_17, "cpu-threads", 4);
    run_case(ctx, C_RGB, "cpu-threads", 2);
    run_case(ctx, C_I32, "cpu-threads", 3);
    run_case(ctx, C_RGB, "cpu-serial", 1);
    run_case(ctx, C_F32_1M, "cpu-threads", 2);
    run_case(ctx, C_U8, "cpu-serial", 1);
    run_case(ctx, C_F32_4096, "cpu-serial", 1);
    run_case(ctx, C_I32, "cpu-threads", 2);
}

#if defined(__linux__)
static long minor_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}
#endif

int main(void)
{
    const char *keep = getenv("GPUHIST_CPU_KEEP_MIB");
    printf("test_cpu_reuse: seed 0x%x, %u pixels, GPUHIST_CPU_KEEP_MIB=%s\n", SEED, PIXELS,
           keep ? keep : "(unset)");
    make_data();
    make_cases();
    make_expected();

    gpuhist_ctx *ctx = NULL;
    CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!ctx)
        return 1;
    sequence(ctx);
    stream_case(ctx);
    weighted_case(ctx);
    deferred_case(ctx);
    sequence(ctx);

#if defined(__linux__)
    if (SANITIZED) {
        printf("test_cpu_reuse: page-fault check skipped (built with a sanitizer)\n");
    } else if (!keep || !*keep) {
        /* the same call as the one before: every table it needs is kept */
        run_case(ctx, C_F32_1M, "cpu-threads", 2);
        long f0 = minor_faults();
        run_case(ctx, C_F32_1M, "cpu-threads", 2);
        long faults = minor_faults() - f0;
        /* fresh tables: 2 x 4 MiB of 32-bit counters, an 8 MiB private histogram, 8 MiB of
         * counters: 6144 pages of 4 KiB */
        printf("test_cpu_reuse: minor page faults of a repeated 2^20-bin call: %ld\n", faults);
        CHECK(faults < 256);
    }
#endif
    gpuhist_destroy(ctx);
    for (int k = 0; k < NCASES; ++k)
        free(g_cases[k].expect);
    free(g_f32);
    free(g_f64);
    free(g_u8);
    free(g_u16);
    free(g_i32);
    return check_exit();
}
