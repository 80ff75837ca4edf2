/*
 * test_threads.c - the library's thread-safety contract on the CPU backend.
 *
 *  1. Distinct contexts are independent: THREADS threads, each with its own CPU context (itself
 *     running 2 worker threads), histogram the same data with every CPU strategy in turn, and
 *     every result equals the single-threaded run's, bit for bit.
 *  2. One context shared by THREADS threads: a pthread barrier releases them together into
 *     gpuhist_histogram() on the shared context, round after round. Every call returns OK (then
 *     with exactly the single-threaded counts) or GPUHIST_ERROR_BUSY (then having written
 *     nothing); every round has at least one OK; BUSY must be seen at least once.
 *  3. The guard is released on every return path: failed calls are followed by successful ones.
 *
 * The threads record what they saw and the main thread checks it (check.h's counters are not
 * shared between threads). Data come from a fixed seed (printed). Built and run under
 * ThreadSanitizer by scripts/test's sanitizer part as well.
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"
#include "check.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define SAMPLES (1u << 18)
#define BINS 256
#define SEED 0x7e57u
#define ROUNDS_MIN 16    /* shared-context rounds always run */
#define ROUNDS_MAX 400   /* ... and more, until a BUSY has been seen */
#define MAX_STRATEGIES 64

static float g_data[SAMPLES];
static uint64_t g_expect[BINS];
static gpuhist_result g_expect_result;
static const char *g_strategies[MAX_STRATEGIES]; /* CPU strategies, then "auto" */
static size_t g_nstrategies;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static gpuhist_samples samples(void) { return gpuhist_samples_1d(g_data, GPUHIST_F32, SAMPLES); }
/* Range [-0.25, 1.25) over data in [-0.5, 1.5) with NaNs: every tally is nonzero. */
static gpuhist_bin_spec spec(void) { return gpuhist_bins_even(BINS, -0.25, 1.25); }

/* @return 1 when `r`/`counts` equal the single-threaded result. */
static int same_as_expected(const gpuhist_result *r, const uint64_t *counts)
{
    return r->bins == BINS && r->channels == 1 &&
           memcmp(counts, g_expect, sizeof g_expect) == 0 &&
           r->underflow[0] == g_expect_result.underflow[0] &&
           r->overflow[0] == g_expect_result.overflow[0] &&
           r->nan[0] == g_expect_result.nan[0] && r->total[0] == g_expect_result.total[0];
}

/* ---- 1. a context per thread ---------------------------------------------------------------- */

typedef struct {
    int index;
    int runs, unsupported, wrong, failed;
    char first_problem[256];
} own_job;

static void *own_context_thread(void *arg)
{
    own_job *job = arg;
    gpuhist_ctx *ctx = NULL;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_threads(ctx, 2) != GPUHIST_OK) {
        job->failed++;
        snprintf(job->first_problem, sizeof job->first_problem, "gpuhist_create: %s",
                 gpuhist_last_error(ctx));
        gpuhist_destroy(ctx);
        return NULL;
    }
    uint64_t counts[BINS];
    /* Every strategy, each thread starting at a different one so that different strategies
     * run at the same moment. */
    for (size_t k = 0; k < g_nstrategies; ++k) {
        const char *name = g_strategies[(k + (size_t)job->index) % g_nstrategies];
        if (gpuhist_set_strategy(ctx, name) != GPUHIST_OK) {
            job->failed++;
            continue;
        }
        gpuhist_samples s = samples();
        gpuhist_bin_spec b = spec();
        gpuhist_result r = gpuhist_result_host(counts);
        gpuhist_status st = gpuhist_histogram(ctx, &s, &b, &r);
        if (st == GPUHIST_ERROR_UNSUPPORTED) {
            job->unsupported++;
            continue;
        }
        job->runs++;
        if (st != GPUHIST_OK || !same_as_expected(&r, counts)) {
            if (st != GPUHIST_OK)
                job->failed++;
            else
                job->wrong++;
            if (!job->first_problem[0])
                snprintf(job->first_problem, sizeof job->first_problem, "%s: %s (%s)", name,
                         gpuhist_status_string(st),
                         st != GPUHIST_OK ? gpuhist_last_error(ctx) : "counts differ");
        }
    }
    gpuhist_destroy(ctx);
    return NULL;
}

static void test_context_per_thread(void)
{
    pthread_t tid[THREADS];
    own_job jobs[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int t = 0; t < THREADS; ++t) {
        jobs[t].index = t;
        if (!CHECK(pthread_create(&tid[t], NULL, own_context_thread, &jobs[t]) == 0))
            return;
    }
    for (int t = 0; t < THREADS; ++t)
        pthread_join(tid[t], NULL);
    for (int t = 0; t < THREADS; ++t) {
        check_context("context per thread, thread %d: %s", t, jobs[t].first_problem);
        CHECK_EQ_INT(jobs[t].failed, 0);
        CHECK_EQ_INT(jobs[t].wrong, 0);
        CHECK(jobs[t].runs >= 2); /* at least auto and one forced strategy ran */
    }
    check_context("%s", "");
    printf("context per thread: %d threads x %zu strategies, %d runs, all equal to the "
           "single-threaded counts\n",
           THREADS, g_nstrategies, jobs[0].runs);
}

/* ---- 2. one context shared by every thread -------------------------------------------------- */

typedef struct {
    gpuhist_ctx *ctx;
    pthread_barrier_t *barrier;
    int ok, busy, other, wrong, touched, rounds;
    int *ok_in_round; /* per round: 1 when this thread's call returned OK */
} shared_job;

/* Whether the rounds stop: written by the main thread while the workers wait at a barrier. */
static int g_stop_rounds;

/* Every round has three barriers (THREADS workers + the main thread): start, end (the main
 * thread then reads the workers' tallies and decides), and decision published. */
static void *shared_context_thread(void *arg)
{
    shared_job *job = arg;
    uint64_t counts[BINS];
    for (int round = 0;; ++round) {
        pthread_barrier_wait(job->barrier); /* start: every worker calls at once */
        for (int i = 0; i < BINS; ++i)
            counts[i] = 0xdeadbeefu;
        gpuhist_samples s = samples();
        gpuhist_bin_spec b = spec();
        gpuhist_result r = gpuhist_result_host(counts);
        r.bins = 12345;
        gpuhist_status st = gpuhist_histogram(job->ctx, &s, &b, &r);
        if (st == GPUHIST_OK) {
            job->ok++;
            job->ok_in_round[round] = 1;
            if (!same_as_expected(&r, counts))
                job->wrong++;
        } else if (st == GPUHIST_ERROR_BUSY) {
            job->busy++;
            /* A refused call writes nothing. */
            if (r.bins != 12345 || counts[0] != 0xdeadbeefu || counts[BINS - 1] != 0xdeadbeefu)
                job->touched++;
        } else {
            job->other++;
        }
        job->rounds = round + 1;
        pthread_barrier_wait(job->barrier); /* end */
        pthread_barrier_wait(job->barrier); /* decision published */
        if (g_stop_rounds)
            return NULL;
    }
}

static void test_shared_context(void)
{
    gpuhist_ctx *ctx = NULL;
    if (!CHECK(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) == GPUHIST_OK))
        return;
    /* One worker thread per call keeps each call long enough for the others to collide. */
    CHECK(gpuhist_set_threads(ctx, 1) == GPUHIST_OK);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, THREADS + 1);
    static int ok_in_round[THREADS][ROUNDS_MAX];
    memset(ok_in_round, 0, sizeof ok_in_round);
    shared_job jobs[THREADS];
    pthread_t tid[THREADS];
    memset(jobs, 0, sizeof jobs);
    g_stop_rounds = 0;
    for (int t = 0; t < THREADS; ++t) {
        jobs[t].ctx = ctx;
        jobs[t].barrier = &barrier;
        jobs[t].ok_in_round = ok_in_round[t];
        if (pthread_create(&tid[t], NULL, shared_context_thread, &jobs[t]) != 0) {
            /* The others would wait at the barrier for ever. */
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    /* The main thread is the (THREADS + 1)-th party of every barrier and decides, while the
     * workers wait, whether another round runs: after ROUNDS_MIN rounds, once BUSY was seen. */
    int rounds = 0;
    for (;;) {
        pthread_barrier_wait(&barrier); /* start */
        pthread_barrier_wait(&barrier); /* end */
        ++rounds;
        int busy = 0;
        for (int t = 0; t < THREADS; ++t)
            busy += jobs[t].busy;
        g_stop_rounds = (rounds >= ROUNDS_MIN && busy > 0) || rounds == ROUNDS_MAX;
        pthread_barrier_wait(&barrier); /* decision published */
        if (g_stop_rounds)
            break;
    }
    for (int t = 0; t < THREADS; ++t)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&barrier);

    int ok = 0, busy = 0, rounds_without_ok = 0;
    for (int t = 0; t < THREADS; ++t) {
        check_context("shared context, thread %d", t);
        CHECK_EQ_INT(jobs[t].other, 0);   /* only OK or BUSY */
        CHECK_EQ_INT(jobs[t].wrong, 0);   /* never a wrong count */
        CHECK_EQ_INT(jobs[t].touched, 0); /* BUSY wrote nothing */
        CHECK_EQ_INT(jobs[t].rounds, rounds);
        ok += jobs[t].ok;
        busy += jobs[t].busy;
    }
    for (int r = 0; r < rounds; ++r) {
        int any = 0;
        for (int t = 0; t < THREADS; ++t)
            any |= ok_in_round[t][r];
        rounds_without_ok += !any;
    }
    check_context("shared context");
    CHECK_EQ_INT(rounds_without_ok, 0);
    CHECK_MSG(busy > 0, "no call saw GPUHIST_ERROR_BUSY in %d rounds of %d threads", rounds,
              THREADS);
    CHECK_EQ_INT(ok + busy, rounds * THREADS);
    /* Nothing failed, so the context holds no error; and it is free again. */
    CHECK_EQ_STR(gpuhist_last_error(ctx), "");
    uint64_t counts[BINS];
    gpuhist_samples s = samples();
    gpuhist_bin_spec b = spec();
    gpuhist_result r = gpuhist_result_host(counts);
    CHECK(gpuhist_histogram(ctx, &s, &b, &r) == GPUHIST_OK && same_as_expected(&r, counts));
    check_context("%s", "");
    printf("shared context: %d rounds x %d threads: %d OK (all exact), %d BUSY\n", rounds,
           THREADS, ok, busy);
    gpuhist_destroy(ctx);
}

/* ---- 3. the guard is released on every return path ------------------------------------------- */

static void test_release_on_error(gpuhist_ctx *ctx)
{
    uint64_t counts[BINS];
    gpuhist_samples s = samples();
    gpuhist_bin_spec b = spec();
    gpuhist_result r = gpuhist_result_host(counts);
    CHECK_EQ_INT(gpuhist_histogram(NULL, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(gpuhist_histogram(ctx, NULL, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    gpuhist_bin_spec bad = spec();
    bad.bins = 0;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &bad, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "bins");
    gpuhist_samples bad_s = samples();
    bad_s.dtype = (gpuhist_dtype)99;
    CHECK_EQ_INT(gpuhist_histogram(ctx, &bad_s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    gpuhist_bin_spec integer = gpuhist_bins_integer(BINS, 0);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &integer, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    /* A failure from deeper inside the call: the auto range of these data overflows. */
    const double wide[2] = {-1e308, 1e308};
    gpuhist_samples ws = gpuhist_samples_1d(wide, GPUHIST_F64, 2);
    gpuhist_bin_spec autob = gpuhist_bins_auto(BINS);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &ws, &autob, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_CONTAINS(gpuhist_last_error(ctx), "range");
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &b, &r), GPUHIST_OK);
    CHECK(same_as_expected(&r, counts));
    CHECK_EQ_STR(gpuhist_status_string(GPUHIST_ERROR_BUSY), "context in use by another thread");
}

int main(void)
{
    uint64_t state = SEED;
    printf("seed 0x%x, %u f32 samples, %d bins, %d threads\n", SEED, SAMPLES, BINS, THREADS);
    for (uint32_t i = 0; i < SAMPLES; ++i) {
        uint64_t x = splitmix(&state);
        /* 1 in 64 is NaN; the rest uniform in [-0.5, 1.5). */
        g_data[i] = (x & 63) == 0 ? (float)NAN : (float)((double)(x >> 11) * 0x1p-53 * 2.0 - 0.5);
    }

    gpuhist_ctx *ctx = NULL;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create(cpu): %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    /* The expected answer: cpu-reference, single-threaded, before any thread starts. */
    gpuhist_set_threads(ctx, 1);
    CHECK(gpuhist_set_strategy(ctx, "cpu-reference") == GPUHIST_OK);
    gpuhist_samples s = samples();
    gpuhist_bin_spec b = spec();
    g_expect_result = gpuhist_result_host(g_expect);
    if (!CHECK(gpuhist_histogram(ctx, &s, &b, &g_expect_result) == GPUHIST_OK))
        return check_exit();
    CHECK(g_expect_result.underflow[0] > 0 && g_expect_result.overflow[0] > 0 &&
          g_expect_result.nan[0] > 0);
    gpuhist_set_strategy(ctx, NULL);

    for (size_t i = 0; i < gpuhist_strategy_count() && g_nstrategies + 1 < MAX_STRATEGIES; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CPU)
            g_strategies[g_nstrategies++] = d.name;
    }
    g_strategies[g_nstrategies++] = "auto";

    test_release_on_error(ctx);
    gpuhist_destroy(ctx);
    test_context_per_thread();
    test_shared_context();
    return check_exit();
}
