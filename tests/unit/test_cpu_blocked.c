/*
 * test_cpu_blocked.c - the one-channel f32/f64 loops of cpu-serial and cpu-threads (a block of
 * samples mapped to slots, THE TEST of fast_even.h in AVX2 where the CPU has it, the scalar rule
 * with computed edges for the samples it does not prove; EDGES cells with their one inner edge)
 * against cpu-reference, bin by bin and tally by tally.
 *
 * The samples are the ones those paths decide differently: every edge E_i of the spec and its
 * neighbours 1 and 2 units in the last place away (where the estimate is not proved and the
 * computed edges decide), NaN, infinities, the first and last edge, values outside the range,
 * plus uniform values, in a fixed shuffled order (seed printed), at an unaligned address so the
 * vector loads and the scalar tails both run. Specs: EVEN with direct certificates ([0, 1) with
 * 2^k bins) and with certificates that need the neighbour rule (odd bin counts, offset ranges,
 * 2^20 bins), last edge inclusive or not; EDGES with crowded cells (quadratic and log-spaced
 * edges). ctest runs it twice: as is, and with GPUHIST_CPU_SIMD=0 (the scalar loops).
 */
#include "gpuhist.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 20261127u

static uint64_t rng_state = SEED;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* E_i of NumPy's linspace rule (docs/SEMANTICS.md): lower + i * ((upper - lower) / bins), the
 * last one upper; rounded to float for f32 samples. Only used to place samples near edges: the
 * answer comes from cpu-reference. */
static double edge_of(double lower, double upper, uint32_t bins, uint32_t i)
{
    return i == bins ? upper : lower + (double)i * ((upper - lower) / (double)bins);
}

/* n samples (f32 or f64) around the edges in e[0..nedges-1]. @return the count written. */
static size_t fill(int f32, const double *e, uint32_t nedges, double lower, double upper,
                   void *buf, size_t cap)
{
    size_t n = 0;
/* buf is deliberately misaligned: samples are copied in, not stored through a typed pointer */
#define PUT(v)                                                                                     \
    do {                                                                                           \
        if (n < cap) {                                                                             \
            if (f32) {                                                                             \
                const float x_ = (float)(v);                                                       \
                memcpy((unsigned char *)buf + 4u * n++, &x_, 4);                                   \
            } else {                                                                               \
                const double x_ = (v);                                                             \
                memcpy((unsigned char *)buf + 8u * n++, &x_, 8);                                   \
            }                                                                                      \
        }                                                                                          \
    } while (0)
    for (uint32_t i = 0; i < nedges; ++i) {
        if (f32) {
            float x = (float)e[i], up = x, dn = x;
            PUT(x);
            for (int k = 0; k < 2; ++k) {
                up = nextafterf(up, INFINITY);
                dn = nextafterf(dn, -INFINITY);
                PUT(up);
                PUT(dn);
            }
        } else {
            double x = e[i], up = x, dn = x;
            PUT(x);
            for (int k = 0; k < 2; ++k) {
                up = nextafter(up, INFINITY);
                dn = nextafter(dn, -INFINITY);
                PUT(up);
                PUT(dn);
            }
        }
    }
    const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e300, -1e300};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i)
        PUT(special[i]);
    const double span = upper - lower;
    while (n < cap) {
        const double u = (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
        PUT(lower - 0.05 * span + 1.1 * span * u);
    }
    /* shuffle: edge samples spread over vectors and tails */
    const size_t size = f32 ? 4u : 8u;
    unsigned char tmp[8];
    for (size_t i = n; i > 1; --i) {
        const size_t j = (size_t)(rng() % i);
        unsigned char *a = (unsigned char *)buf + (i - 1) * size, *b = (unsigned char *)buf + j * size;
        memcpy(tmp, a, size);
        memcpy(a, b, size);
        memcpy(b, tmp, size);
    }
#undef PUT
    return n;
}

static void compare(gpuhist_ctx *ctx, const void *data, int f32, size_t n,
                    const gpuhist_bin_spec *b, uint32_t bins)
{
    uint64_t *ref = calloc(bins, sizeof *ref), *got = calloc(bins, sizeof *got);
    if (!ref || !got) {
        fprintf(stderr, "test_cpu_blocked: out of memory\n");
        exit(1);
    }
    gpuhist_samples s = gpuhist_samples_1d(data, f32 ? GPUHIST_F32 : GPUHIST_F64, n);
    s.location = GPUHIST_MEMORY_HOST;
    gpuhist_result rr = gpuhist_result_host(ref);
    CHECK_EQ_INT(gpuhist_set_strategy(ctx, "cpu-reference"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_histogram(ctx, &s, b, &rr), GPUHIST_OK);
    static const char *const strategies[] = {"cpu-serial", "cpu-threads"};
    for (int k = 0; k < 2; ++k) {
        memset(got, 0, bins * sizeof *got);
        gpuhist_result rg = gpuhist_result_host(got);
        CHECK_EQ_INT(gpuhist_set_strategy(ctx, strategies[k]), GPUHIST_OK);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, b, &rg), GPUHIST_OK);
        uint32_t bad = 0;
        for (uint32_t i = 0; i < bins; ++i)
            bad += ref[i] != got[i];
        CHECK_EQ_U64(bad, 0);
        CHECK_EQ_U64(rg.underflow[0], rr.underflow[0]);
        CHECK_EQ_U64(rg.overflow[0], rr.overflow[0]);
        CHECK_EQ_U64(rg.nan[0], rr.nan[0]);
    }
    free(ref);
    free(got);
}

int main(void)
{
    const char *simd = getenv("GPUHIST_CPU_SIMD");
    printf("test_cpu_blocked: seed %u, GPUHIST_CPU_SIMD=%s\n", SEED, simd ? simd : "(unset)");
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "test_cpu_blocked: no CPU context\n");
        return 1;
    }
    gpuhist_set_threads(ctx, 3);
    const size_t cap = (size_t)3u << 20; /* cpu-threads uses several threads from 768 Ki */
    unsigned char *mem = malloc(cap * 8u + 8u);
    double *e = malloc(((size_t)(1u << 20) + 1u) * sizeof *e);
    if (!mem || !e)
        return 1;
    void *buf = mem + 4; /* unaligned for f64, and off a 32-byte boundary for f32 */

    static const struct {
        uint32_t bins;
        double lower, upper;
    } even[] = {
        {256, 0.0, 1.0},          /* direct */
        {4096, 0.0, 1.0},         /* direct, bins >= 4096 (the backend's table rule) */
        {1000, 0.0, 1.0},         /* neighbour rule */
        {4099, -3.7, 5.1},        /* neighbour rule, bins >= 4096 */
        {1u << 20, 0.1, 0.9},     /* many bins, offset range */
        {7, 1e6, 1e6 + 3.0},      /* large offset against the bin width */
    };
    for (int f32 = 0; f32 < 2; ++f32) {
        for (size_t c = 0; c < sizeof even / sizeof even[0]; ++c) {
            for (int inclusive = 0; inclusive < 2; ++inclusive) {
                const uint32_t bins = even[c].bins;
                for (uint32_t i = 0; i <= bins; ++i)
                    e[i] = edge_of(even[c].lower, even[c].upper, bins, i);
                size_t want = (size_t)(bins + 1u) * 5u + 4096u;
                const size_t n = fill(f32, e, bins + 1u, even[c].lower, even[c].upper, buf,
                                      want < cap ? want : cap);
                gpuhist_bin_spec b = gpuhist_bins_even(bins, even[c].lower, even[c].upper);
                b.last_edge_inclusive = inclusive;
                check_context("%s EVEN %u bins [%g, %g) inclusive=%d, %zu samples",
                              f32 ? "f32" : "f64", bins, even[c].lower, even[c].upper, inclusive, n);
                compare(ctx, buf, f32, n, &b, bins);
            }
        }
        /* EDGES: quadratic (crowded near 0) and log-spaced */
        for (int kind = 0; kind < 2; ++kind) {
            const uint32_t bins = 256;
            for (uint32_t i = 0; i <= bins; ++i)
                e[i] = kind == 0 ? (i / 256.0) * (i / 256.0) : pow(10.0, -6.0 + 8.0 * i / 256.0);
            if (f32) /* float edges, so the samples next to them are exact neighbours */
                for (uint32_t i = 0; i <= bins; ++i)
                    e[i] = (double)(float)e[i];
            const size_t n = fill(f32, e, bins + 1u, e[0], e[bins], buf, (size_t)1u << 20);
            gpuhist_bin_spec b = gpuhist_bins_edges(bins, e);
            check_context("%s EDGES %s, %zu samples", f32 ? "f32" : "f64",
                          kind ? "log-spaced" : "quadratic", n);
            compare(ctx, buf, f32, n, &b, bins);
        }
    }
    free(mem);
    free(e);
    gpuhist_destroy(ctx);
    return check_exit();
}
