/*
 * test_cpu_pieces.c - cpu-threads' pieces (src/cpu/threads.c): the pixels cut into about 8
 * pieces per thread, claimed in turn from a shared counter, each thread's slot loops keeping
 * their sub-counters unflushed from one of its pieces to the next and settling them after its
 * last. Every case equals cpu-reference's counts and tallies, with pieces and with one fixed
 * share per thread (GPUHIST_CPU_THREADS_PIECES=0), on 2, 3 and 7 threads.
 *
 * The inputs are large enough that the calls are cut into more pieces than threads (a piece
 * holds at least 256 Ki samples, and at least 64 per counter for raw 8/16-bit values: u16
 * needs 4 Mi samples a piece, so its input has 16 Mi), with a ragged last piece. Constant runs
 * longer than a piece make one sub-counter take the counts of many pieces of a thread, where a
 * deferred flush that forgot the earlier pieces would wrap. Data come from a fixed seed
 * (printed).
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 0x91ece5u
#define N_U8 ((12u << 20) + 12345u)  /* 12 Mi + a ragged tail */
#define N_U16 ((16u << 20) + 777u)   /* pieces of 4 Mi: more than 2 or 3 threads */
#define N_F32 ((4u << 20) + 4099u)
#define N_F64 ((3u << 20) + 17u)
#define N_RGB ((3u << 20) + 5u)      /* pixels of 3 bytes */
#define EDGES_BINS 16u

static uint64_t g_rng = SEED;
static uint64_t rng(void) { return check_splitmix64(&g_rng); }
static double unit(void) { return (double)(rng() >> 11) * (1.0 / 9007199254740992.0); }

typedef struct tcase {
    const char *name;
    gpuhist_samples s;
    gpuhist_bin_spec b;
    uint32_t bins, channels;
    uint64_t *expect;
    gpuhist_result expect_r;
} tcase;

/* n values of `width` bytes (1: u8, 2: u16) at p: runs of one value (each up to `run` long)
 * alternating with random values, so whole pieces of some threads see one value. */
static void fill_runs(void *p, size_t width, size_t n, size_t run)
{
    size_t i = 0;
    while (i < n) {
        size_t len = 1u + (size_t)(rng() % run);
        const int constant = (rng() & 1u) != 0;
        const uint16_t v = (uint16_t)(rng() >> 48);
        for (size_t j = 0; j < len && i < n; ++j, ++i) {
            const uint16_t x = constant ? v : (uint16_t)(rng() >> 48);
            if (width == 1)
                ((uint8_t *)p)[i] = (uint8_t)(x >> 8);
            else
                ((uint16_t *)p)[i] = x;
        }
    }
}

/* cpu-reference's result of case c, on a context of its own. */
static void expect_of(tcase *c)
{
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

/* Case c by cpu-threads on `threads` threads, pieces on or off; compared with cpu-reference. */
static void run_case(gpuhist_ctx *ctx, const tcase *c, int threads, int pieces)
{
    if (pieces)
        unsetenv("GPUHIST_CPU_THREADS_PIECES");
    else
        setenv("GPUHIST_CPU_THREADS_PIECES", "0", 1);
    const size_t n = (size_t)c->bins * c->channels;
    uint64_t *got = malloc(n * sizeof *got);
    if (!got)
        exit(1);
    memset(got, 0xa5, n * sizeof *got); /* every counter must be written */
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-threads"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_threads(ctx, threads), GPUHIST_OK);
    gpuhist_result r = gpuhist_result_host(got);
    const gpuhist_status st = gpuhist_histogram(ctx, &c->s, &c->b, &r);
    if (!CHECK_EQ_INT(st, GPUHIST_OK))
        fprintf(stderr, "  %s: %s\n", c->name, gpuhist_last_error(ctx));
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i)
        bad += got[i] != c->expect[i];
    if (!CHECK_EQ_U64(bad, 0))
        fprintf(stderr, "  %s, %d threads, %s: %zu counters differ from cpu-reference\n",
                c->name, threads, pieces ? "pieces" : "fixed shares", bad);
    for (uint32_t ch = 0; ch < c->channels; ++ch) {
        CHECK_EQ_U64(r.underflow[ch], c->expect_r.underflow[ch]);
        CHECK_EQ_U64(r.overflow[ch], c->expect_r.overflow[ch]);
        CHECK_EQ_U64(r.nan[ch], c->expect_r.nan[ch]);
        CHECK_EQ_U64(r.total[ch], c->expect_r.total[ch]);
    }
    free(got);
}

int main(void)
{
    printf("test_cpu_pieces: seed 0x%x\n", SEED);
    uint8_t *u8 = malloc(N_U8);
    uint16_t *u16 = malloc((size_t)N_U16 * sizeof *u16);
    float *f32 = malloc((size_t)N_F32 * sizeof *f32);
    double *f64 = malloc((size_t)N_F64 * sizeof *f64);
    uint8_t *rgb = malloc((size_t)N_RGB * 3u);
    if (!u8 || !u16 || !f32 || !f64 || !rgb) {
        fprintf(stderr, "test_cpu_pieces: out of memory\n");
        return 1;
    }
    fill_runs(u8, 1, N_U8, 3u << 20);     /* runs up to 3 Mi: longer than a piece (0.5-2 Mi) */
    fill_runs(u16, 2, N_U16, 6u << 20);  /* runs up to 6 Mi: longer than a piece (4 Mi) */
    fill_runs(rgb, 1, (size_t)N_RGB * 3u, 2u << 20);
    for (size_t i = 0; i < N_F32; ++i) {
        /* a hot value over most of the first half, spread data with outliers and NaN after */
        const double u = -0.05 + 1.1 * unit();
        f32[i] = i < N_F32 / 2u && (rng() % 8u) ? 0.3f : (i % 1001u == 3u) ? NAN : (float)u;
    }
    double edges[EDGES_BINS + 1];
    for (uint32_t i = 0; i <= EDGES_BINS; ++i) /* uneven: (i / 16)^2 */
        edges[i] = ((double)i / EDGES_BINS) * ((double)i / EDGES_BINS);
    for (size_t i = 0; i < N_F64; ++i) {
        const double u = unit();
        f64[i] = (i % 997u == 1u) ? NAN : -0.02 + 1.04 * u * u;
    }

    tcase cases[6];
    memset(cases, 0, sizeof cases);
    cases[0] = (tcase){"u8, 256 values", gpuhist_samples_1d(u8, GPUHIST_U8, N_U8),
                       gpuhist_bins_integer(256, 0), 256, 1, NULL, {0}};
    cases[1] = (tcase){"u16, 65536 values", gpuhist_samples_1d(u16, GPUHIST_U16, N_U16),
                       gpuhist_bins_integer(65536, 0), 65536, 1, NULL, {0}};
    cases[2] = (tcase){"f32, 4096 even", gpuhist_samples_1d(f32, GPUHIST_F32, N_F32),
                       gpuhist_bins_even(4096, 0.0, 1.0), 4096, 1, NULL, {0}};
    cases[3] = (tcase){"f32, 2^20 even", gpuhist_samples_1d(f32, GPUHIST_F32, N_F32),
                       gpuhist_bins_even(1u << 20, 0.0, 1.0), 1u << 20, 1, NULL, {0}};
    cases[4] = (tcase){"f64, 16 uneven edges", gpuhist_samples_1d(f64, GPUHIST_F64, N_F64),
                       gpuhist_bins_edges(EDGES_BINS, edges), EDGES_BINS, 1, NULL, {0}};
    gpuhist_samples s_rgb = gpuhist_samples_1d(rgb, GPUHIST_U8, N_RGB);
    s_rgb.channels = 3;
    cases[5] = (tcase){"u8 RGB, 256 values", s_rgb, gpuhist_bins_integer(256, 0), 256, 3, NULL,
                       {0}};
    const size_t ncases = sizeof cases / sizeof cases[0];
    for (size_t k = 0; k < ncases; ++k)
        expect_of(&cases[k]);

    gpuhist_ctx *ctx = NULL;
    CHECK_EQ_INT(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU), GPUHIST_OK);
    if (!ctx)
        return check_exit();
    static const int threads[] = {2, 3, 7};
    for (size_t k = 0; k < ncases; ++k)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t)
            for (int pieces = 1; pieces >= 0; --pieces)
                run_case(ctx, &cases[k], threads[t], pieces);
    unsetenv("GPUHIST_CPU_THREADS_PIECES");
    gpuhist_destroy(ctx);
    for (size_t k = 0; k < ncases; ++k)
        free(cases[k].expect);
    free(u8);
    free(u16);
    free(f32);
    free(f64);
    free(rgb);
    return check_exit();
}
