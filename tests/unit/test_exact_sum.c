/*
 * test_exact_sum.c - the exact weight accumulator (src/core/exact_sum.h).
 *
 * Without arguments: sums whose correctly rounded value is known by construction (cancellation
 * across the whole range, subnormals, ties to even, overflow, non-finite weights), and random
 * weights over the whole exponent range summed in many orders and chunkings (accumulators merged
 * limb by limb, normalised at random points), which must give the same bits every time. Seed:
 * GPUHIST_TEST_SEED (fixed by default, printed; "random" for a new one).
 *
 * With --sum: reads cases from standard input, one per line ("f64" or "f32" and the weights'
 * bit patterns in hex), and prints each correctly rounded sum's bits in hex: the oracle test
 * (exact_sum_oracle.py) compares them with Python's exact rational sums.
 */
#include "check.h"
#include "../../src/core/exact_sum.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    gh_i64 x[GH_XSUM_LIMBS_F64];
    gh_u32 flags;
} acc64;

static void add64(acc64 *a, double w)
{
    gh_u32 limb = 0;
    gh_i64 d[3] = {0, 0, 0};
    gh_u32 r = gh_xsum_split_f64(w, &limb, d);
    if (r == 1u) {
        a->x[limb] += d[0];
        a->x[limb + 1] += d[1];
        a->x[limb + 2] += d[2];
    } else {
        a->flags |= r;
    }
}

static double result64(const acc64 *a)
{
    if (a->flags)
        return gh_xsum_special(a->flags);
    acc64 c = *a;
    return gh_xsum_to_double(c.x, GH_XSUM_LIMBS_F64, GH_XSUM_BIAS_F64);
}

typedef struct {
    gh_i64 x[GH_XSUM_LIMBS_F32];
    gh_u32 flags;
} acc32;

static void add32(acc32 *a, float w)
{
    gh_u32 limb = 0;
    gh_i64 d[2] = {0, 0};
    gh_u32 r = gh_xsum_split_f32(w, &limb, d);
    if (r == 1u) {
        a->x[limb] += d[0];
        a->x[limb + 1] += d[1];
    } else {
        a->flags |= r;
    }
}

static double result32(const acc32 *a)
{
    if (a->flags)
        return gh_xsum_special(a->flags);
    acc32 c = *a;
    return gh_xsum_to_double(c.x, GH_XSUM_LIMBS_F32, GH_XSUM_BIAS_F32);
}

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static double sum64(const double *w, size_t n)
{
    acc64 a;
    memset(&a, 0, sizeof a);
    for (size_t i = 0; i < n; ++i)
        add64(&a, w[i]);
    return result64(&a);
}

#define SAME(got, want)                                                                       \
    CHECK_MSG(bits(got) == bits(want) || (isnan(got) && isnan(want)), "%a, wanted %a", (got),  \
              (want))

static uint64_t g_rng;
static uint64_t next(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A finite double with a random sign, exponent and significand (subnormals included). */
static double any_double(void)
{
    uint64_t b = next();
    if (((b >> 52) & 0x7FF) == 0x7FF)
        b &= ~((uint64_t)1 << 52);
    double x;
    memcpy(&x, &b, 8);
    return x;
}

static void known_cases(void)
{
    check_context("known sums");
    const double tiny = 0x1p-1074, big = 0x1.fffffffffffffp1023;
    double a[] = {1e308, 1e-308, -1e308};
    SAME(sum64(a, 3), 1e-308);
    double b[] = {big, big, -big, -big, tiny};
    SAME(sum64(b, 5), tiny);
    double c[] = {big, big};
    SAME(sum64(c, 2), INFINITY);
    double c2[] = {-big, -big, big};
    SAME(sum64(c2, 3), -big);
    double d[] = {1.0, 0x1p-53}; /* a tie: to even */
    SAME(sum64(d, 2), 1.0);
    double e[] = {1.0, 0x1p-53, tiny}; /* just above the tie */
    SAME(sum64(e, 3), 1.0 + 0x1p-52);
    double f[] = {1.0 + 0x1p-52, 0x1p-53}; /* a tie from an odd significand: up */
    SAME(sum64(f, 2), 1.0 + 0x1p-51);
    double g[] = {-1.0, -0x1p-53, -tiny};
    SAME(sum64(g, 3), -(1.0 + 0x1p-52));
    double h[] = {0x1p-1022, -tiny}; /* normal minus subnormal: a subnormal, exact */
    SAME(sum64(h, 2), 0x1p-1022 - tiny);
    double i[] = {0.0, -0.0};
    SAME(sum64(i, 2), 0.0);
    double j[] = {0.1, 0.2, 0.3, -0.6}; /* the exact sum of these four doubles is 2^-55 */
    SAME(sum64(j, 4), 0x1p-55);
    double k[] = {INFINITY, 1.0};
    SAME(sum64(k, 2), INFINITY);
    double l[] = {INFINITY, -INFINITY};
    CHECK(isnan(sum64(l, 2)));
    double m[] = {-INFINITY, 5.0, -1e300};
    SAME(sum64(m, 3), -INFINITY);
    double nn[] = {NAN, 1.0};
    CHECK(isnan(sum64(nn, 2)));
    /* 2^40 copies of 1.5 (through a merged limb count, not 2^40 adds): 1.5 * 2^40 */
    acc64 acc;
    memset(&acc, 0, sizeof acc);
    gh_u32 limb;
    gh_i64 dd[3];
    gh_xsum_split_f64(1.5, &limb, dd);
    for (int r = 0; r < 512; ++r) { /* 512 rounds of 2^31 deposits, normalised in between */
        acc.x[limb] += dd[0] * ((gh_i64)1 << 31);
        acc.x[limb + 1] += dd[1] * ((gh_i64)1 << 31);
        acc.x[limb + 2] += dd[2] * ((gh_i64)1 << 31);
        gh_xsum_normalize(acc.x, GH_XSUM_LIMBS_F64);
    }
    SAME(result64(&acc), 1.5 * 0x1p40);
    /* f32 weights: exact in double */
    acc32 s;
    memset(&s, 0, sizeof s);
    add32(&s, 0x1p-149f);
    add32(&s, 3.0e38f);
    add32(&s, -3.0e38f);
    add32(&s, 0.1f);
    SAME(result32(&s), (double)0.1f + 0x1p-149);
    memset(&s, 0, sizeof s);
    for (int r = 0; r < 1000; ++r)
        add32(&s, 0.1f);
    SAME(result32(&s), 1000.0 * (double)0.1f); /* exact: 0.1f has 24 bits, 1000 < 2^10 */
}

static void shuffle(double *w, size_t n)
{
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t)(next() % i);
        double t = w[i - 1];
        w[i - 1] = w[j];
        w[j] = t;
    }
}

/* Random weights in random orders and chunkings: the same bits every time. */
static void invariance(void)
{
    enum { N = 4000 };
    static double w[N];
    for (int round = 0; round < 60; ++round) {
        check_context("invariance round %d", round);
        const int kind = round % 4;
        for (int i = 0; i < N; ++i) {
            double x = any_double();
            if (kind == 1) /* a narrow range, many cancellations */
                x = ldexp((double)(int64_t)(next() >> 11) - 0x1p52, -60);
            else if (kind == 2) /* pairs that cancel exactly, plus a few small ones */
                x = i % 2 ? -w[i - 1] : any_double();
            else if (kind == 3) /* subnormals and the smallest normals */
                x = ldexp((double)(int64_t)(next() >> 11) - 0x1p52, -1100);
            w[i] = x;
        }
        const double want = sum64(w, N);
        for (int order = 0; order < 8; ++order) {
            shuffle(w, N);
            acc64 parts[5];
            memset(parts, 0, sizeof parts);
            for (int i = 0; i < N; ++i) {
                acc64 *p = &parts[next() % 5];
                add64(p, w[i]);
                if (next() % 97 == 0)
                    gh_xsum_normalize(p->x, GH_XSUM_LIMBS_F64);
            }
            for (int k = 1; k < 5; ++k) { /* merge: limb by limb */
                for (int l = 0; l < GH_XSUM_LIMBS_F64; ++l)
                    parts[0].x[l] += parts[k].x[l];
                parts[0].flags |= parts[k].flags;
            }
            SAME(result64(&parts[0]), want);
        }
    }
}

static int oracle_mode(void)
{
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        char *p = line;
        int is32 = strncmp(p, "f32", 3) == 0;
        p += 3;
        acc64 a;
        acc32 b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        for (;;) {
            char *e;
            unsigned long long v = strtoull(p, &e, 16);
            if (e == p)
                break;
            p = e;
            if (is32) {
                uint32_t u = (uint32_t)v;
                float f;
                memcpy(&f, &u, 4);
                add32(&b, f);
            } else {
                uint64_t u = v;
                double d;
                memcpy(&d, &u, 8);
                add64(&a, d);
            }
        }
        double r = is32 ? result32(&b) : result64(&a);
        printf("%016" PRIx64 "\n", bits(r));
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--sum") == 0)
        return oracle_mode();
    const char *s = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = 20261125;
    if (s && strcmp(s, "random") == 0)
        seed = (uint64_t)time(NULL);
    else if (s && *s)
        seed = strtoull(s, NULL, 10);
    printf("exact sum test: seed %" PRIu64 " (GPUHIST_TEST_SEED; \"random\" for a new one)\n",
           seed);
    g_rng = seed;
    known_cases();
    invariance();
    return check_exit();
}
