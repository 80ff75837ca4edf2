/*
 * test_property.c - every registered strategy of a backend against cpu-reference, bin by bin.
 *
 *   test_property cpu|cuda|opencl
 *
 * Random specs (dtype, kind, bins, range, last-edge rule, outlier policy, channels and channel
 * subsets, ROI with padded rows) x adversarial data (uniform, constant, one hot value, sorted,
 * all out of range, NaN/inf/-0.0/denormals, values exactly on and next to the edges, the whole
 * bit range, 64-bit values near 2^53 and 2^63) x awkward sizes (0, 1, 15, 17, primes, 4097,
 * ~100k, ~4M for 8/16-bit data) at unaligned addresses. For each case cpu-reference on a CPU
 * context gives the gold answer; then every strategy of the backend under test is forced by name
 * and must reproduce the counts, the tallies (underflow, overflow, nan, total), the channel
 * indices and the edges exactly. A strategy that cannot take a spec answers UNSUPPORTED
 * (counted as skipped), but some strategy of the backend must run every case, and a strategy
 * that claims "all dtypes" must run every plain case (one channel, contiguous, EVEN/EDGES,
 * <= 32 bins; any bins when it also claims "any bins").
 *
 * Environment: GPUHIST_TEST_SEED (the master seed, printed; a fixed one by default, "random" for
 * a new one), GPUHIST_PROPERTY_ITERS (cases),
 * GPUHIST_TEST_CASE (run only this case number: reproduces a failure quickly),
 * GPUHIST_TEST_STRATEGY (only strategies whose name contains this), GPUHIST_TEST_VERBOSE=1,
 * GPUHIST_PROPERTY_MAX_WORK (cap on pixels x histograms x (bins + 3) per case, for slow devices;
 * the ctest entry of the OpenCL backend sets it, as PoCL on a small CI machine is slow).
 * Exit: 0 pass, 1 fail, 77 skipped (no device for the backend).
 */
#include "gpuhist.h"
#include "check.h"
#include "property_cases.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_ITERS 2000
#define DEFAULT_SEED 20261124u
#define MAX_STRATEGIES 64
#define MAX_MISMATCH_REPORTS 30

/* ---- the run ----------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int claims_all_dtypes, claims_any_bins;
    int claims_all_but_half; /* "every dtype but f16/bf16" */
    unsigned long ran, skipped, failed, rejected;
} strat;

typedef struct {
    uint64_t *counts;
    double *edges;
    gpuhist_result r;
} outcome;

static gpuhist_status run_one(gpuhist_ctx *ctx, const tcase *c, outcome *o)
{
    size_t nc = (size_t)c->spec.bins * c->nh;
    memset(o->counts, 0xA5, nc * sizeof *o->counts);
    memset(o->edges, 0xFF, ((size_t)c->spec.bins + 1) * sizeof *o->edges);
    gpuhist_samples s = case_samples(c);
    o->r = gpuhist_result_host(o->counts);
    o->r.edges = o->edges;
    return gpuhist_histogram(ctx, &s, &c->spec, &o->r);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static unsigned long g_reports;

/* Compare a strategy's outcome with the gold. @return 1 if identical. */
static int compare(const tcase *c, const char *name, const outcome *g, const outcome *o)
{
    char what[160] = "";
    uint32_t bins = c->spec.bins;
    size_t nc = (size_t)bins * c->nh;
    size_t bad = nc;
    for (size_t i = 0; i < nc; ++i)
        if (g->counts[i] != o->counts[i]) {
            bad = i;
            break;
        }
    if (bad < nc) {
        snprintf(what, sizeof what, "histogram %zu (channel %u) bin %zu: %llu, gold %llu",
                 bad / bins, c->hist_channel[bad / bins], bad % bins,
                 (unsigned long long)o->counts[bad], (unsigned long long)g->counts[bad]);
    } else if (o->r.channels != g->r.channels || o->r.bins != g->r.bins) {
        snprintf(what, sizeof what, "channels/bins %u/%u, gold %u/%u", o->r.channels, o->r.bins,
                 g->r.channels, g->r.bins);
    } else {
        for (uint32_t k = 0; k < c->nh && !what[0]; ++k) {
            const gpuhist_result *a = &o->r, *b = &g->r;
            if (a->channel_index[k] != b->channel_index[k] || a->underflow[k] != b->underflow[k] ||
                a->overflow[k] != b->overflow[k] || a->nan[k] != b->nan[k] ||
                a->total[k] != b->total[k])
                snprintf(what, sizeof what,
                         "histogram %u: channel/under/over/nan/total %u/%llu/%llu/%llu/%llu, "
                         "gold %u/%llu/%llu/%llu/%llu", k, a->channel_index[k],
                         (unsigned long long)a->underflow[k], (unsigned long long)a->overflow[k],
                         (unsigned long long)a->nan[k], (unsigned long long)a->total[k],
                         b->channel_index[k], (unsigned long long)b->underflow[k],
                         (unsigned long long)b->overflow[k], (unsigned long long)b->nan[k],
                         (unsigned long long)b->total[k]);
        }
        for (uint32_t i = 0; i <= bins && !what[0]; ++i)
            if (!same_bits(o->edges[i], g->edges[i]))
                snprintf(what, sizeof what, "edge %u: %a, gold %a", i, o->edges[i], g->edges[i]);
        if (!what[0] && (!same_bits(o->r.lower, g->r.lower) || !same_bits(o->r.upper, g->r.upper) ||
                         (o->r.last_edge_inclusive != 0) != (g->r.last_edge_inclusive != 0)))
            snprintf(what, sizeof what, "range [%a, %a] incl %d, gold [%a, %a] incl %d",
                     o->r.lower, o->r.upper, o->r.last_edge_inclusive, g->r.lower, g->r.upper,
                     g->r.last_edge_inclusive);
    }
    if (!what[0])
        return 1;
    if (++g_reports <= MAX_MISMATCH_REPORTS) {
        char d[512];
        describe(c, d, sizeof d);
        fprintf(stderr, "MISMATCH %s: %s\n    %s\n", name, what, d);
    }
    return 0;
}

/* Invariants of the gold itself (cpu-reference is checked too, if more lightly). */
static void check_gold(const tcase *c, const outcome *g)
{
    CHECK_EQ_U64(g->r.channels, c->nh);
    CHECK_EQ_U64(g->r.bins, c->spec.bins);
    for (uint32_t k = 0; k < c->nh; ++k) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < c->spec.bins; ++i)
            sum += g->counts[(size_t)k * c->spec.bins + i];
        CHECK_EQ_U64(g->r.channel_index[k], c->hist_channel[k]);
        CHECK_EQ_U64(g->r.total[k], c->pixels);
        if (c->spec.outliers == GPUHIST_OUTLIERS_CLAMP)
            CHECK_EQ_U64(sum + g->r.nan[k], g->r.total[k]);
        else
            CHECK_EQ_U64(sum + g->r.underflow[k] + g->r.overflow[k] + g->r.nan[k], g->r.total[k]);
        if (!is_float(c->t))
            CHECK_EQ_U64(g->r.nan[k], 0);
    }
    for (uint32_t i = 0; i < c->spec.bins; ++i)
        if (!CHECK_MSG(g->edges[i] <= g->edges[i + 1], "gold edges decrease at %u", i))
            break;
}

static int is_plain(const tcase *c, int any_bins)
{
    return c->C == 1 && !c->roi && (c->kind == K_EVEN || c->kind == K_EDGES) &&
           (any_bins ? c->spec.bins <= 65536 : c->spec.bins <= 32);
}

static uint64_t env_u64(const char *name, uint64_t dflt, int *given)
{
    const char *v = getenv(name);
    if (given)
        *given = v && *v;
    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
    gpuhist_backend backend;
    if (argc != 2 || !gpuhist_backend_parse(argv[1], &backend) ||
        backend == GPUHIST_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s cpu|cuda|opencl\n", argv[0]);
        return 2;
    }
    int seed_given = 0, case_given = 0;
    /* A fixed seed by default, so that the suite is deterministic; GPUHIST_TEST_SEED=random
     * draws a new one on purpose (printed, to repeat a failure). */
    const char *seed_env = getenv("GPUHIST_TEST_SEED");
    int random_seed = seed_env && strcmp(seed_env, "random") == 0;
    uint64_t seed = random_seed ? (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32)
                                : env_u64("GPUHIST_TEST_SEED", DEFAULT_SEED, &seed_given);
    uint64_t iters = env_u64("GPUHIST_PROPERTY_ITERS", DEFAULT_ITERS, NULL);
    uint64_t only_case = env_u64("GPUHIST_TEST_CASE", 0, &case_given);
    const char *filter = getenv("GPUHIST_TEST_STRATEGY");
    int verbose = env_u64("GPUHIST_TEST_VERBOSE", 0, NULL) != 0;
    g_max_work = env_u64("GPUHIST_PROPERTY_MAX_WORK", 0, NULL);

    gpuhist_ctx *gold = NULL, *ctx = NULL;
    gpuhist_status st = gpuhist_create(&ctx, backend);
    if (st == GPUHIST_ERROR_NO_DEVICE) {
        char msg[256];
        snprintf(msg, sizeof msg, "no %s device: skipped (%s)",
                 backend == GPUHIST_BACKEND_CUDA ? "CUDA"
                 : backend == GPUHIST_BACKEND_OPENCL ? "OpenCL" : "CPU",
                 ctx ? gpuhist_last_error(ctx) : "gpuhist_create returned NO_DEVICE");
        check_skip(msg);
    }
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create(%s) failed: %s\n", argv[1], gpuhist_status_string(st));
        return 1;
    }
    if (gpuhist_create(&gold, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(gold, "cpu-reference") != GPUHIST_OK) {
        fprintf(stderr, "cannot create the cpu-reference context\n");
        return 1;
    }

    strat S[MAX_STRATEGIES];
    size_t ns = 0;
    for (size_t i = 0; i < gpuhist_strategy_count() && ns < MAX_STRATEGIES; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK || d.backend != backend)
            continue;
        if (filter && *filter && !strstr(d.name, filter))
            continue;
        memset(&S[ns], 0, sizeof S[ns]);
        S[ns].name = d.name;
        S[ns].claims_all_dtypes = d.supports && strstr(d.supports, "all dtypes") != NULL;
        S[ns].claims_any_bins = d.supports && strstr(d.supports, "any bins") != NULL;
        S[ns].claims_all_but_half =
            d.supports && strstr(d.supports, "every dtype but f16/bf16") != NULL;
        ++ns;
    }
    printf("property test: backend %s (%s), %zu strategies, %llu cases, seed %llu%s\n", argv[1],
           gpuhist_device_name(ctx), ns, (unsigned long long)iters, (unsigned long long)seed,
           random_seed  ? " (random: set GPUHIST_TEST_SEED to this to repeat)"
           : seed_given ? " (GPUHIST_TEST_SEED)"
                        : " (the default; GPUHIST_TEST_SEED=N or =random for another)");
    if (g_max_work)
        printf("at most %llu samples x counters per case (GPUHIST_PROPERTY_MAX_WORK)\n",
               (unsigned long long)g_max_work);
    fflush(stdout);
    if (!CHECK_MSG(ns > 0, "no strategy registered for backend %s", argv[1])) {
        gpuhist_destroy(ctx);
        gpuhist_destroy(gold);
        return check_exit();
    }

    outcome g = {0}, o = {0};
    size_t cap = 0;
    unsigned long nruns = 0, unrun = 0;
    for (uint64_t ci = case_given ? only_case : 0; ci < (case_given ? only_case + 1 : iters);
         ++ci) {
        tcase c;
        memset(&c, 0, sizeof c);
        c.index = (unsigned long)ci;
        c.seed = seed;
        rng_t r = {seed ^ (0xD1B54A32D192ED03ull * (ci + 1))};
        int force_big = ci == 0 ? 1 : ci == 1 ? 2 : 0; /* two ~4M cases for value strategies */
        if (!make_case(&c, &r, force_big) || !fill_case(&c, &r)) {
            fprintf(stderr, "out of memory building case %llu\n", (unsigned long long)ci);
            return 1;
        }
        char d[512];
        describe(&c, d, sizeof d);
        check_context("%s", d);
        if (verbose) {
            printf("%s\n", d);
            fflush(stdout);
        }
        size_t need = (size_t)c.spec.bins * (c.nh ? c.nh : 1);
        if (need > cap) {
            free(g.counts), free(o.counts), free(g.edges), free(o.edges);
            cap = need;
            g.counts = malloc(cap * sizeof(uint64_t));
            o.counts = malloc(cap * sizeof(uint64_t));
            g.edges = malloc((cap + 1) * sizeof(double));
            o.edges = malloc((cap + 1) * sizeof(double));
            if (!g.counts || !o.counts || !g.edges || !o.edges) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
        }
        st = run_one(gold, &c, &g);
        /* Not computable: an auto range overflowing a double, or even edges that do not
         * increase (NumPy refuses them): the gold and every strategy must say so. */
        const char *why = auto_range_overflows(&c)  ? "range"
                          : even_edges_collapse(&c) ? "too many bins for the range"
                                                    : NULL;
        if (why) {
            CHECK_EQ_INT(st, GPUHIST_ERROR_INVALID_ARGUMENT);
            CHECK_CONTAINS(gpuhist_last_error(gold), why);
            for (size_t k = 0; k < ns; ++k) {
                if (!CHECK_EQ_INT(gpuhist_set_strategy(ctx, S[k].name), GPUHIST_OK))
                    continue;
                gpuhist_status s2 = run_one(ctx, &c, &o);
                ++S[k].rejected;
                if (!CHECK_MSG(s2 == GPUHIST_ERROR_INVALID_ARGUMENT,
                               "%s: a request the gold refuses (%s) returned %s, expected "
                               "invalid argument", S[k].name, why, gpuhist_status_string(s2)))
                    ++S[k].failed;
            }
            goto next;
        }
        if (!CHECK_MSG(st == GPUHIST_OK, "cpu-reference rejected a valid spec: %s: %s",
                       gpuhist_status_string(st), gpuhist_last_error(gold)))
            goto next;
        check_gold(&c, &g);
        if (backend == GPUHIST_BACKEND_CPU) {
            /* Vary the thread count of the CPU strategies (0 = all cores; more threads than
             * cores; odd counts) so per-thread shares and the merge see uneven splits. The
             * case's own generator is not touched, so specs stay reproducible. */
            static const int threads[] = {0, 1, 2, 3, 5, 8, 13};
            rng_t tr = {r.s ^ 0x5851F42D4C957F2Dull};
            int nt = threads[rbelow(&tr, sizeof threads / sizeof threads[0])];
            CHECK_EQ_INT(gpuhist_set_threads(ctx, nt), GPUHIST_OK);
        }
        int ran = 0;
        for (size_t k = 0; k < ns; ++k) {
            if (!CHECK_EQ_INT(gpuhist_set_strategy(ctx, S[k].name), GPUHIST_OK))
                continue;
            st = run_one(ctx, &c, &o);
            ++nruns;
            if (st == GPUHIST_ERROR_UNSUPPORTED) {
                ++S[k].skipped;
                if ((S[k].claims_all_dtypes || (S[k].claims_all_but_half && !is_half(c.t))) &&
                    is_plain(&c, S[k].claims_any_bins)) {
                    ++S[k].failed;
                    CHECK_MSG(0, "%s claims \"all dtypes\"%s but refused a plain case: %s",
                              S[k].name, S[k].claims_any_bins ? " and \"any bins\"" : "",
                              gpuhist_last_error(ctx));
                }
                continue;
            }
            if (!CHECK_MSG(st == GPUHIST_OK, "%s failed: %s: %s", S[k].name,
                           gpuhist_status_string(st), gpuhist_last_error(ctx))) {
                ++S[k].failed;
                continue;
            }
            ++S[k].ran;
            ++ran;
            CHECK_EQ_STR(o.r.strategy, S[k].name);
            CHECK_EQ_INT(o.r.backend, backend);
            if (!CHECK_MSG(compare(&c, S[k].name, &g, &o), "%s differs from cpu-reference",
                           S[k].name))
                ++S[k].failed;
        }
        if (!ran) {
            ++unrun;
            CHECK_MSG(0, "no %s strategy ran this case", argv[1]);
        }
    next:
        free(c.buf);
        free(c.edges);
    }
    check_context("%s", "");

    printf("\n%-28s %8s %8s %8s %8s\n", "strategy", "ran", "skipped", "rejected", "failed");
    for (size_t k = 0; k < ns; ++k)
        printf("%-28s %8lu %8lu %8lu %8lu\n", S[k].name, S[k].ran, S[k].skipped, S[k].rejected,
               S[k].failed);
    printf("%lu strategy runs; %lu cases no strategy ran; seed %llu\n", nruns, unrun,
           (unsigned long long)seed);
    free(g.counts), free(o.counts), free(g.edges), free(o.edges);
    gpuhist_destroy(ctx);
    gpuhist_destroy(gold);
    return check_exit();
}
