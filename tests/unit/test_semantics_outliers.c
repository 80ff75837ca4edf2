/*
 * test_semantics_outliers.c - outliers, special values and tallies (docs/SEMANTICS.md): the DROP
 * and CLAMP policies with their underflow / overflow / NaN tallies, NaNs of every kind,
 * infinities, -0.0 and denormals, and the automatic range (infinities and NaN ignored, constant
 * data, f32 edges, 64-bit extremes, maxima no double holds, no finite data at all).
 * Runs with the automatic choice and with every CPU strategy forced by name.
 */
#include "semantics.h"

static void test_outliers(void)
{
    uint64_t counts[4];
    double edges[5];
    gpuhist_result r;
    const double x[] = {-1.0, -INFINITY, 0.0, 1.0, 2.5, 4.0, 5.0, INFINITY, NAN, -NAN};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 4.0);

    check_context("%s: DROP", g_strategy);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 1, 1, 0};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
    check_context("%s: CLAMP", g_strategy);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 1, 1, 3}; /* NaN is never binned, even clamped */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
    check_context("%s: CLAMP + inclusive", g_strategy);
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {3, 1, 1, 3};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 2, 2, N(x)); /* 4.0 is in the last bin, not an outlier */
    }

    check_context("%s: i8 EDGES CLAMP", g_strategy);
    const double e[3] = {-10.0, 0.0, 10.0};
    const int8_t xi[] = {-128, -11, -10, -1, 0, 9, 10, 127};
    s = gpuhist_samples_1d(xi, GPUHIST_I8, N(xi));
    b = gpuhist_bins_edges(2, e);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {4, 4};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(xi));
    }
    /* One bin, CLAMP: everything but NaN lands in it. */
    check_context("%s: one bin CLAMP", g_strategy);
    s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    b = gpuhist_bins_even(1, 0.0, 4.0);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 8);
        CHECK_TALLY(&r, 0, 2, 3, 2, N(x));
    }
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static double f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void test_specials(void)
{
    uint64_t counts[2];
    double edges[3];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_even(2, -1.0, 1.0);

    /* NaNs of every kind (quiet, signalling payload, negative) go to nan; -0.0, +0.0, the
     * positive denormals and 0.5 are in bin 1 ([0, 1)); the negative denormal and -0.5 are in
     * bin 0. */
    check_context("%s: f32 specials", g_strategy);
    const float xf[] = {NAN, f32_bits(0x7fa00000u), f32_bits(0xffc00001u), -INFINITY, INFINITY,
                        -0.0f, 0.0f, 0x1p-149f, FLT_MIN / 2, -0x1p-149f, -0.5f, 0.5f};
    gpuhist_samples s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 5};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xf));
    }
    check_context("%s: f64 specials", g_strategy);
    const double xd[] = {NAN, f64_bits(0x7ff4000000000000ull), f64_bits(0xfff8000000000001ull),
                         -INFINITY, INFINITY, -0.0, 0.0, 0x1p-1074, DBL_MIN / 2, -0x1p-1074,
                         -0.5, 0.5};
    s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 5};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xd));
    }
    /* CLAMP moves the infinities into the end bins, never the NaNs. */
    check_context("%s: f64 specials CLAMP", g_strategy);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {3, 6};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 1, 1, 3, N(xd));
    }
    /* -0.0 equals 0.0: at the lower edge it is in bin 0, at the upper edge it is the edge. */
    check_context("%s: -0.0 at the edges", g_strategy);
    const double z[] = {-0.0};
    s = gpuhist_samples_1d(z, GPUHIST_F64, 1);
    b = gpuhist_bins_even(2, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    b = gpuhist_bins_even(2, -1.0, 0.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 0);
        CHECK_TALLY(&r, 0, 0, 1, 0, 1);
    }
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    const float zf[] = {-0.0f};
    s = gpuhist_samples_1d(zf, GPUHIST_F32, 1);
    b = gpuhist_bins_even(2, 0.0, 1.0);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 0, 0, 1);
    }
    const double ez[3] = {-1.0, -0.0, 1.0};
    b = gpuhist_bins_edges(2, ez);
    const double zz[] = {0.0, -0.0};
    s = gpuhist_samples_1d(zz, GPUHIST_F64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[1], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    /* All NaN: nothing binned, nan == total. */
    check_context("%s: all NaN EVEN", g_strategy);
    const double an[5] = {NAN, NAN, NAN, NAN, NAN};
    s = gpuhist_samples_1d(an, GPUHIST_F64, 5);
    b = gpuhist_bins_even(2, -1.0, 1.0);
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {0, 0};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 5, 5);
    }
}

static void test_auto_range(void)
{
    uint64_t counts[8];
    double edges[9];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_auto(4);
    CHECK(b.auto_range != 0);

    check_context("%s: auto: infinities and NaN ignored for the range", g_strategy);
    const double x[] = {1.0, 5.0, 3.0, INFINITY, NAN, -INFINITY};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 1, 1}; /* 1 | - | 3 | 5 (last edge inclusive) */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 1, 1, 1, N(x));
        CHECK_EQ_F64_BITS(r.lower, 1.0);
        CHECK_EQ_F64_BITS(r.upper, 5.0);
        CHECK(r.last_edge_inclusive != 0);
        for (int i = 0; i <= 4; ++i)
            CHECK_EQ_F64_BITS(edges[i], 1.0 + i);
    }

    /* min == max: [min - 0.5, max + 0.5]; numpy.histogram([7, 7, 7], 2) -> [0, 3]. */
    check_context("%s: auto: constant data", g_strategy);
    const double c7[] = {7.0, 7.0, 7.0};
    s = gpuhist_samples_1d(c7, GPUHIST_F64, 3);
    b = gpuhist_bins_auto(2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {0, 3};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 3);
        CHECK_EQ_F64_BITS(r.lower, 6.5);
        CHECK_EQ_F64_BITS(r.upper, 7.5);
        CHECK_EQ_F64_BITS(edges[1], 7.0);
    }
    const int32_t cm3[] = {-3, -3};
    s = gpuhist_samples_1d(cm3, GPUHIST_I32, 2);
    b = gpuhist_bins_auto(4);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {0, 0, 2, 0}; /* edges -3.5 -3.25 -3 -2.75 -2.5 */
        CHECK_COUNTS(counts, exp, 4);
        CHECK_EQ_F64_BITS(r.lower, -3.5);
        CHECK_EQ_F64_BITS(r.upper, -2.5);
    }
    /* Constant data with infinities and NaN around it. */
    const float cf[] = {INFINITY, 2.0f, NAN, 2.0f, -INFINITY};
    s = gpuhist_samples_1d(cf, GPUHIST_F32, N(cf));
    b = gpuhist_bins_auto(1);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 1, 1, 1, N(cf));
        CHECK_EQ_F64_BITS(r.lower, 1.5);
        CHECK_EQ_F64_BITS(r.upper, 2.5);
    }

    /* f32 auto, NumPy 1.x's edges (float32_linspace off): range from float min/max, edges in
     * double rounded to float (computed here). */
    check_context("%s: auto: f32 edges (NumPy 1.x)", g_strategy);
    const float xf[] = {0.1f, 0.7f, 0.35f, 0.3f, 0.5f, 0.6f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    b = gpuhist_bins_auto(6);
    b.float32_linspace = 0;
    if (hist(&s, &b, counts, edges, &r)) {
        double mine[7];
        uint64_t exp[6] = {0};
        my_even_edges(6, (double)0.1f, (double)0.7f, 1, mine);
        for (int i = 0; i <= 6; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        for (size_t j = 0; j < N(xf); ++j) {
            int sl = my_slot(mine, 6, 1, xf[j]);
            if (CHECK(sl >= 0))
                ++exp[sl];
        }
        CHECK_COUNTS(counts, exp, 6);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(xf));
    }

    /* f32 auto, the default (float32_linspace on): NumPy 2's float32 linspace over the float min
     * and max (computed here), which differs from the edges above in the last bit (0.2 and 0.5
     * fall on the other side of an edge). */
    check_context("%s: auto: f32 edges (NumPy 2)", g_strategy);
    b = gpuhist_bins_auto(6);
    CHECK_EQ_INT(b.float32_linspace, 1);
    const float xf2[] = {0.1f, 0.7f, 0.35f, 0.3f, 0.5f, 0.6f, 0.2f, 0.4f, 0.19999999f};
    s = gpuhist_samples_1d(xf2, GPUHIST_F32, N(xf2));
    if (hist(&s, &b, counts, edges, &r)) {
        double mine[7], old[7];
        uint64_t exp[6] = {0};
        my_linspace_f32_edges(6, (double)0.1f, (double)0.7f, mine);
        my_even_edges(6, (double)0.1f, (double)0.7f, 1, old);
        int differ = 0;
        for (int i = 0; i <= 6; ++i) {
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
            differ |= mine[i] != old[i];
        }
        CHECK(differ);
        for (size_t j = 0; j < N(xf2); ++j) {
            int sl = my_slot(mine, 6, 1, xf2[j]);
            if (CHECK(sl >= 0))
                ++exp[sl];
        }
        CHECK_COUNTS(counts, exp, 6);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(xf2));
        CHECK_EQ_F64_BITS(r.lower, (double)0.1f);
        CHECK_EQ_F64_BITS(r.upper, (double)0.7f);
    }
    /* constant f32 data: [x - 0.5, x + 0.5] (in float32), then the float32 linspace */
    const float cf2[] = {0.1f, 0.1f};
    s = gpuhist_samples_1d(cf2, GPUHIST_F32, N(cf2));
    b = gpuhist_bins_auto(7);
    if (hist(&s, &b, counts, edges, &r)) {
        double mine[8];
        const volatile float lo = 0.1f - 0.5f, hi = 0.1f + 0.5f;
        my_linspace_f32_edges(7, (double)lo, (double)hi, mine);
        for (int i = 0; i <= 7; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        const int sl = my_slot(mine, 7, 1, 0.1f);
        for (int i = 0; i < 7; ++i)
            CHECK_EQ_U64(counts[i], i == sl ? 2u : 0u);
    }

    /* 64-bit extremes: the range is [-2^63, 2^63] (INT64_MAX as a double is 2^63). */
    check_context("%s: auto: i64 extremes", g_strategy);
    const int64_t xi[] = {INT64_MIN, INT64_MAX, 0};
    s = gpuhist_samples_1d(xi, GPUHIST_I64, N(xi));
    b = gpuhist_bins_auto(2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {1, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(xi));
    }
    const uint64_t xu[] = {0, UINT64_MAX};
    s = gpuhist_samples_1d(xu, GPUHIST_U64, N(xu));
    b = gpuhist_bins_auto(1);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    /* The range comes from the data, so every finite sample must be binned, even a maximum
     * that no double can hold: 2^53 + 1 becomes the double 2^53, yet numpy.histogram([0,
     * 2**53+1], 1) counts both. A range that leaves the data's own maximum out as overflow is a
     * wrong answer. */
    check_context("%s: auto: max not representable as a double", g_strategy);
    const int64_t xm[] = {0, I53 + 1};
    s = gpuhist_samples_1d(xm, GPUHIST_I64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }
    const int64_t xn[] = {-I53 - 1, 0}; /* and a minimum: -2^53 - 1 becomes -2^53 */
    s = gpuhist_samples_1d(xn, GPUHIST_I64, 2);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, 2);
    }

    /* No finite value at all (empty, all NaN, only infinities): a valid empty histogram with a
     * finite range; NumPy uses [0, 1] for empty data. */
    check_context("%s: auto: no finite data", g_strategy);
    const double nn[] = {NAN, NAN, INFINITY, -INFINITY};
    for (int variant = 0; variant < 3; ++variant) {
        uint64_t n = variant == 0 ? 0 : variant == 1 ? 2 : 4;
        s = gpuhist_samples_1d(nn, GPUHIST_F64, n);
        b = gpuhist_bins_auto(3);
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[3] = {0, 0, 0};
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, variant == 2 ? 1 : 0, variant == 2 ? 1 : 0,
                        variant == 0 ? 0 : 2, n);
            CHECK(isfinite(r.lower) && isfinite(r.upper) && r.lower < r.upper);
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 1.0);
        }
    }
}

int main(void)
{
    static const semantics_test each[] = {test_outliers, test_specials, test_auto_range};
    return semantics_main(NULL, 0, each, N(each));
}
