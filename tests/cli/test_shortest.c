/*
 * test_shortest.c - cli/shortest.c (Ryu) against the slow definition of the same text, kept
 * here as the oracle: %.{p}e for p = 1, 2, ... 17 until strtod reads the text back as the same
 * double, then Python repr's layout (cli_format_double), and for float32 table edges %.{p}g for
 * p = 1 ... 9 until strtof reads it back. Every value must print as the same text, and read
 * back exactly.
 *
 * Values: random bit patterns (every exponent, NaN and infinity included), random subnormals,
 * every power of two with its neighbours, integers, k / 10^n and k * 10^n, float32 values
 * widened, and NumPy-style even-bin edges lo + i * ((hi - lo) / bins) in double and float32;
 * float32 random patterns and powers of two through the table's float32 layout; integers through
 * cli_put_u64 against %llu.
 *
 * Environment: GPUHIST_TEST_SEED (printed; a fixed one by default), GPUHIST_SHORTEST_SCALE (a
 * multiplier of the number of random values; 1 by default: about 2.5 million values, 13 s
 * on a 2-core machine).
 */
#include "cli.h"
#include "check.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

/* splitmix64 */
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static float f_from_bits(uint32_t b)
{
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* ---- the oracles: the slow definitions of the same text ------------------------------------- */

static void oracle_double(char *buf, size_t size, double v)
{
    if (!isfinite(v) || v == 0) {
        snprintf(buf, size, "%g", v);
        return;
    }
    int digits = 17;
    char tmp[48];
    for (int p = 1; p <= 17; ++p) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v) {
            digits = p;
            break;
        }
    }
    snprintf(tmp, sizeof tmp, "%.*e", digits - 1, v);
    int exp = atoi(strchr(tmp, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int decimals = digits - 1 - exp;
        snprintf(buf, size, "%.*f", decimals > 0 ? decimals : 0, v);
    } else {
        snprintf(buf, size, "%s", tmp);
    }
}

/* The table's float32 edges (finite, nonzero). */
static void oracle_float_g(char *buf, size_t size, float v)
{
    for (int p = 1; p <= 9; ++p) {
        snprintf(buf, size, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            return;
    }
    oracle_double(buf, size, (double)v);
}

/* ---- comparisons ----------------------------------------------------------------------------- */

static unsigned long n_double, n_float;

static void check_double(double v)
{
    char want[64], got[64];
    oracle_double(want, sizeof want, v);
    size_t n = cli_shortest_double(got, v);
    ++n_double;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (!CHECK_MSG(strcmp(want, got) == 0 && n == strlen(got),
                   "double 0x%016" PRIx64 " (%a): shortest.c \"%s\" (length %zu), oracle \"%s\"",
                   bits, v, got, n, want))
        return;
    if (isfinite(v))
        CHECK_MSG(strtod(got, NULL) == v, "double 0x%016" PRIx64 ": \"%s\" reads back as %a",
                  bits, got, strtod(got, NULL));
}

static void check_float(float v)
{
    if (!isfinite(v) || v == 0)
        return;
    char want[64], got[64];
    oracle_float_g(want, sizeof want, v);
    size_t n = cli_shortest_float_g(got, v);
    ++n_float;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (CHECK_MSG(strcmp(want, got) == 0 && n == strlen(got),
                  "float 0x%08" PRIx32 " (%a): shortest.c \"%s\", oracle \"%s\"", bits, (double)v,
                  got, want))
        CHECK_MSG(strtof(got, NULL) == v, "float 0x%08" PRIx32 ": \"%s\" reads back wrong", bits,
                  got);
}

static void check_u64(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    char *end = cli_put_u64(got, v);
    *end = 0;
    CHECK_MSG(strcmp(want, got) == 0 && cli_u64_digits(v) == (int)strlen(want),
              "u64 %s: cli_put_u64 \"%s\", cli_u64_digits %d", want, got, cli_u64_digits(v));
}

/* ---- the values ------------------------------------------------------------------------------ */

static void fixed_cases(void)
{
    static const struct {
        double v;
        const char *text;
    } known[] = {
        {0.0, "0"},
        {-0.0, "-0"},
        {0.1, "0.1"},
        {0.3, "0.3"},
        {0.1 + 0.2, "0.30000000000000004"},
        {1.0, "1"},
        {-2.5, "-2.5"},
        {100.0, "100"},
        {1e15, "1000000000000000"},
        {1e16, "1e+16"},
        {123456789012345678.0, "1.2345678901234568e+17"},
        {1e-4, "0.0001"},
        {1.5e-5, "1.5e-05"},
        {1e300, "1e+300"},
        {5e-324, "5e-324"},
        {DBL_MAX, "1.7976931348623157e+308"},
        {DBL_MIN, "2.2250738585072014e-308"},
        {9007199254740993.0, "9007199254740992"},
        {1.0 / 3.0, "0.3333333333333333"},
        {(double)0.1f, "0.10000000149011612"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
    };
    char got[64];
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
        cli_shortest_double(got, known[i].v);
        CHECK_EQ_STR(got, known[i].text);
        check_double(known[i].v);
    }
    /* NaN as printf's %g prints it, its sign bit included (no round trip to check) */
    CHECK_EQ_INT((int)cli_shortest_double(got, NAN), 3);
    CHECK_EQ_STR(got, "nan");
    CHECK_EQ_INT((int)cli_shortest_double(got, copysign(NAN, -1.0)), 4);
    CHECK_EQ_STR(got, "-nan");
    CHECK_EQ_INT((int)cli_shortest_float_g(got, NAN), 3);
    CHECK_EQ_STR(got, "nan");
    CHECK_EQ_INT((int)cli_shortest_float_g(got, -0.0f), 2);
    CHECK_EQ_STR(got, "-0");
    CHECK_EQ_INT((int)cli_shortest_float_g(got, -INFINITY), 4);
    CHECK_EQ_STR(got, "-inf");
    static const struct {
        float v;
        const char *text;
    } known_f[] = {{0.1f, "0.1"},       {1e6f, "1e+06"},       {1234567.0f, "1234567"},
                   {1.5e7f, "1.5e+07"}, {-3.4e38f, "-3.4e+38"}, {1e-45f, "1e-45"},
                   {0.0001f, "0.0001"}, {1.8026654f, "1.8026654"}};
    for (size_t i = 0; i < sizeof known_f / sizeof known_f[0]; ++i) {
        cli_shortest_float_g(got, known_f[i].v);
        CHECK_EQ_STR(got, known_f[i].text);
        check_float(known_f[i].v);
    }
    static const uint64_t ints[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999,
                                    4294967295u, 4294967296u, 999999999999999999u,
                                    1000000000000000000u, 9999999999999999999u,
                                    10000000000000000000u, UINT64_MAX};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        check_u64(ints[i]);
}

static void powers_of_two(void)
{
    /* Every exponent field with significands 0, 1, 2, 3 and the three largest, both signs:
     * the lopsided intervals and their neighbours. */
    const uint64_t m = ((uint64_t)1 << 52) - 1;
    const uint64_t mants[] = {0, 1, 2, 3, m, m - 1, m - 2};
    for (uint64_t e = 0; e < 2047; ++e)
        for (size_t k = 0; k < sizeof mants / sizeof mants[0]; ++k)
            for (uint64_t s = 0; s < 2; ++s)
                check_double(from_bits(s << 63 | e << 52 | mants[k]));
    const uint32_t fm = (1u << 23) - 1;
    const uint32_t fmants[] = {0, 1, 2, 3, fm, fm - 1, fm - 2};
    for (uint32_t e = 0; e < 255; ++e)
        for (size_t k = 0; k < sizeof fmants / sizeof fmants[0]; ++k)
            for (uint32_t s = 0; s < 2; ++s) {
                float f = f_from_bits(s << 31 | e << 23 | fmants[k]);
                check_float(f);
                check_double((double)f);
            }
}

static void random_values(unsigned long scale)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                   1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
                                   1e18, 1e19, 1e20, 1e21, 1e22};
    for (unsigned long i = 0; i < 250000 * scale; ++i)
        check_double(from_bits(rnd())); /* any pattern: NaN, infinity, subnormal, normal */
    for (unsigned long i = 0; i < 150000 * scale; ++i)
        check_double(from_bits((rnd() & ((uint64_t)1 << 63 | (((uint64_t)1 << 52) - 1)))));
    for (unsigned long i = 0; i < 200000 * scale; ++i) {
        uint64_t r = rnd();
        check_double((double)(r >> (r & 63)));                         /* integers, all sizes */
        check_double((double)(int64_t)(rnd() % 2000001) - 1000000.0); /* small integers */
    }
    for (unsigned long i = 0; i < 150000 * scale; ++i) {
        /* k / 10^n and k * 10^n: the decimal inputs people type as ranges and edges. */
        uint64_t k = rnd() % 100000000;
        int n = (int)(rnd() % 23);
        check_double((double)k / pow10[n]);
        check_double((double)k * pow10[n]);
        check_double(-(double)k / pow10[n] / 1e20);
    }
    for (unsigned long i = 0; i < 250000 * scale; ++i) {
        float f = f_from_bits((uint32_t)rnd());
        check_double((double)f); /* float32 values widened */
        check_float(f);
    }
    for (unsigned long i = 0; i < 100000 * scale; ++i) {
        /* Subnormal float32. */
        float f = f_from_bits((uint32_t)rnd() & 0x807fffffu);
        check_float(f);
    }
    for (unsigned long c = 0; c < 200 * scale; ++c) {
        /* NumPy's even edges: lo + i * ((hi - lo) / bins), in double and rounded to float32. */
        double lo = (double)(int64_t)(rnd() % 2001 - 1000) / pow10[rnd() % 4];
        double hi = lo + (double)(rnd() % 100000 + 1) / pow10[rnd() % 6];
        uint32_t bins = (uint32_t)(rnd() % 5000 + 1);
        double step = (hi - lo) / bins;
        for (uint32_t i = 0; i <= bins; ++i) {
            double e = lo + i * step;
            check_double(e);
            check_float((float)e);
            check_double((double)(float)e);
        }
    }
    for (unsigned long i = 0; i < 200000 * scale; ++i) {
        uint64_t r = rnd();
        check_u64(r >> (r & 63));
    }
}

int main(void)
{
    const char *seed_env = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = seed_env && *seed_env ? strtoull(seed_env, NULL, 0) : 20261124;
    const char *scale_env = getenv("GPUHIST_SHORTEST_SCALE");
    unsigned long scale = scale_env && *scale_env ? strtoul(scale_env, NULL, 0) : 1;
    if (scale < 1)
        scale = 1;
    printf("test_shortest: seed %" PRIu64 "%s, scale %lu\n", seed,
           seed_env && *seed_env ? " (GPUHIST_TEST_SEED)" : " (set GPUHIST_TEST_SEED to change)",
           scale);
    fflush(stdout);
    rng_state = seed;
    fixed_cases();
    powers_of_two();
    random_values(scale);
    printf("%lu doubles and %lu float32 values printed as the oracle prints them\n", n_double,
           n_float);
    return check_exit();
}
