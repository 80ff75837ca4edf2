/*
 * test_semantics_integers.c - every sample type, and integer samples compared exactly
 * (docs/SEMANTICS.md): empty inputs of each dtype, one small data set in every dtype under EVEN,
 * EDGES, INTEGER and automatic bins, INTEGER bins at the ends of each integer type (8 to 64
 * bits, unsigned above 2^63, negative lowers with unsigned samples), and 64-bit integers against
 * double edges where converting the sample to a double would round it across an edge.
 * Runs with the automatic choice and with every CPU strategy forced by name.
 */
#include "semantics.h"

static void test_count_zero(void)
{
    uint64_t counts[4 * 8];
    double edges[9];
    gpuhist_result r;
    char buf[16] = {0};
    for (int t = 0; t < GPUHIST_DTYPE_COUNT; ++t) {
        check_context("%s: count 0, %s", g_strategy, gpuhist_dtype_name((gpuhist_dtype)t));
        gpuhist_samples s = gpuhist_samples_1d(buf, (gpuhist_dtype)t, 0);
        gpuhist_bin_spec b = gpuhist_bins_even(8, 0.0, 8.0);
        if (hist(&s, &b, counts, edges, &r)) {
            static const uint64_t zero[8];
            CHECK_COUNTS(counts, zero, 8);
            CHECK_TALLY(&r, 0, 0, 0, 0, 0);
        }
        /* Several channels, no pixels. */
        s.channels = 4;
        if (hist(&s, &b, counts, edges, &r)) {
            static const uint64_t zero[32];
            CHECK_COUNTS(counts, zero, 32);
            for (unsigned k = 0; k < 4; ++k)
                CHECK_TALLY(&r, k, 0, 0, 0, 0);
        }
        /* No data pointer is needed when there is no data. */
        s = gpuhist_samples_1d(NULL, (gpuhist_dtype)t, 0);
        if (hist(&s, &b, counts, edges, &r))
            CHECK_TALLY(&r, 0, 0, 0, 0, 0);
    }
}

/* The same small data set in every dtype, under EVEN, EDGES and INTEGER bins. */
static void test_all_dtypes(void)
{
    static const double common[] = {0, 1, 2, 3, 5, 7, 8, 9};
    for (int ti = 0; ti < GPUHIST_DTYPE_COUNT; ++ti) {
        gpuhist_dtype t = (gpuhist_dtype)ti;
        unsigned char data[16 * 8];
        size_t n = 0;
        for (size_t i = 0; i < N(common); ++i)
            put(t, data, n++, common[i]);
        int neg = is_signed(t) || is_float(t);
        if (neg) {
            put(t, data, n++, -1.0);
            put_extreme(t, data, n++, 0); /* lowest value: below every range here */
        } else {
            put_extreme(t, data, n++, 1); /* largest value: above every range here */
        }
        if (is_float(t)) {
            put(t, data, n++, 7.75);
            put(t, data, n++, 2.5);
        }
        gpuhist_samples s = gpuhist_samples_1d(data, t, n);
        uint64_t counts[10];
        double edges[11];
        gpuhist_result r;

        /* EVEN(4, 0, 8): edges 0 2 4 6 8. */
        check_context("%s: %s EVEN(4,0,8)", g_strategy, gpuhist_dtype_name(t));
        gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 8.0);
        if (hist(&s, &b, counts, edges, &r)) {
            uint64_t exp[4] = {2, 2, 1, 1}; /* 0 1 | 2 3 | 5 | 7 */
            if (is_float(t)) {
                exp[1] += 1; /* 2.5 */
                exp[3] += 1; /* 7.75 */
            }
            CHECK_COUNTS(counts, exp, 4);
            CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 2 : 3, 0, n);
            for (int i = 0; i <= 4; ++i)
                CHECK_EQ_F64_BITS(edges[i], 2.0 * i);
            CHECK(r.last_edge_inclusive == 0);
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 8.0);
        }

        /* EDGES {-0.5, 1, 2.5, 100}. */
        check_context("%s: %s EDGES", g_strategy, gpuhist_dtype_name(t));
        const double ex[4] = {-0.5, 1.0, 2.5, 100.0};
        b = gpuhist_bins_edges(3, ex);
        if (hist(&s, &b, counts, edges, &r)) {
            uint64_t exp[3] = {1, 2, 5}; /* 0 | 1 2 | 3 5 7 8 9 */
            if (is_float(t))
                exp[2] += 2; /* 2.5 (on the edge) and 7.75 */
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 0 : 1, 0, n);
            for (int i = 0; i < 4; ++i)
                CHECK_EQ_F64_BITS(edges[i], ex[i]);
        }

        /* INTEGER(10, 0): bincount (integers only). */
        if (!is_float(t)) {
            check_context("%s: %s INTEGER(10,0)", g_strategy, gpuhist_dtype_name(t));
            b = gpuhist_bins_integer(10, 0);
            if (hist(&s, &b, counts, edges, &r)) {
                const uint64_t exp[10] = {1, 1, 1, 1, 0, 1, 0, 1, 1, 1};
                CHECK_COUNTS(counts, exp, 10);
                CHECK_TALLY(&r, 0, neg ? 2 : 0, neg ? 0 : 1, 0, n);
                for (int i = 0; i <= 10; ++i)
                    CHECK_EQ_F64_BITS(edges[i], (double)i);
            }
        }

        /* Auto range over 0 1 2 3 5 7 8 9 alone: [0, 9], edges 0 3 6 9, last edge inclusive. */
        check_context("%s: %s auto(3)", g_strategy, gpuhist_dtype_name(t));
        s.count = N(common);
        b = gpuhist_bins_auto(3);
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[3] = {3, 2, 3};
            CHECK_COUNTS(counts, exp, 3);
            CHECK_TALLY(&r, 0, 0, 0, 0, N(common));
            CHECK_EQ_F64_BITS(r.lower, 0.0);
            CHECK_EQ_F64_BITS(r.upper, 9.0);
            CHECK(r.last_edge_inclusive != 0);
            for (int i = 0; i <= 3; ++i)
                CHECK_EQ_F64_BITS(edges[i], 3.0 * i);
        }
    }
}

static void test_integer(void)
{
    uint64_t counts[256];
    double edges[257];
    gpuhist_result r;
    gpuhist_samples s;
    gpuhist_bin_spec b;

    check_context("%s: u8 INTEGER(256, 0)", g_strategy);
    uint8_t u8v[257];
    for (int i = 0; i < 256; ++i)
        u8v[i] = (uint8_t)i;
    u8v[256] = 7;
    s = gpuhist_samples_1d(u8v, GPUHIST_U8, 257);
    b = gpuhist_bins_integer(256, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        for (int i = 0; i < 256; ++i)
            if (!CHECK_EQ_U64(counts[i], i == 7 ? 2 : 1))
                break;
        CHECK_TALLY(&r, 0, 0, 0, 0, 257);
        CHECK_EQ_F64_BITS(edges[0], 0.0);
        CHECK_EQ_F64_BITS(edges[256], 256.0);
    }

    check_context("%s: i8 INTEGER(256, -128)", g_strategy);
    const int8_t i8v[] = {-128, -1, 0, 127, 127};
    s = gpuhist_samples_1d(i8v, GPUHIST_I8, N(i8v));
    b = gpuhist_bins_integer(256, -128);
    if (hist(&s, &b, counts, edges, &r)) {
        uint64_t exp[256] = {0};
        exp[0] = 1, exp[127] = 1, exp[128] = 1, exp[255] = 2;
        CHECK_COUNTS(counts, exp, 256);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(i8v));
        CHECK_EQ_F64_BITS(edges[0], -128.0);
        CHECK_EQ_F64_BITS(edges[256], 128.0);
    }

    check_context("%s: i16 INTEGER(10, -5) DROP/CLAMP", g_strategy);
    const int16_t i16v[] = {-6, -5, 4, 5, INT16_MIN, INT16_MAX, 0};
    s = gpuhist_samples_1d(i16v, GPUHIST_I16, N(i16v));
    b = gpuhist_bins_integer(10, -5);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(i16v));
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], -5.0 + i);
    }
    b.outliers = GPUHIST_OUTLIERS_CLAMP;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {3, 0, 0, 0, 0, 1, 0, 0, 0, 3};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(i16v));
    }

    check_context("%s: i32 INTEGER(3, INT32_MIN)", g_strategy);
    const int32_t i32v[] = {INT32_MIN, INT32_MIN + 2, INT32_MIN + 3, INT32_MAX, 0};
    s = gpuhist_samples_1d(i32v, GPUHIST_I32, N(i32v));
    b = gpuhist_bins_integer(3, INT32_MIN);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(i32v));
    }

    check_context("%s: u32 INTEGER(10, 4294967290)", g_strategy);
    const uint32_t u32v[] = {4294967295u, 4294967289u, 0u, 4294967290u};
    s = gpuhist_samples_1d(u32v, GPUHIST_U32, N(u32v));
    b = gpuhist_bins_integer(10, 4294967290LL);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 2, 0, 0, N(u32v));
    }

    check_context("%s: i64 INTEGER(4, INT64_MIN)", g_strategy);
    const int64_t i64a[] = {INT64_MIN, INT64_MIN + 3, INT64_MIN + 4, -1, INT64_MAX};
    s = gpuhist_samples_1d(i64a, GPUHIST_I64, N(i64a));
    b = gpuhist_bins_integer(4, INT64_MIN);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(i64a));
    }

    check_context("%s: i64 INTEGER(3, INT64_MAX-2)", g_strategy);
    const int64_t i64b[] = {INT64_MAX, INT64_MAX - 3, INT64_MIN, 0, INT64_MAX - 2};
    s = gpuhist_samples_1d(i64b, GPUHIST_I64, N(i64b));
    b = gpuhist_bins_integer(3, INT64_MAX - 2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 3, 0, 0, N(i64b));
    }

    check_context("%s: i64 INTEGER(4, 2^53-2)", g_strategy);
    const int64_t i64c[] = {I53 - 2, I53 + 1, I53 + 2, I53 - 3, I53};
    s = gpuhist_samples_1d(i64c, GPUHIST_I64, N(i64c));
    b = gpuhist_bins_integer(4, I53 - 2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 1, 1, 0, N(i64c));
    }

    /* u64 above 2^63: bins INT64_MAX-1, INT64_MAX, 2^63, 2^63+1 (the last bins lie above what
     * an int64 can hold, which is fine for u64 samples). */
    check_context("%s: u64 INTEGER(4, INT64_MAX-1)", g_strategy);
    const uint64_t u64a[] = {(uint64_t)INT64_MAX - 1, (uint64_t)INT64_MAX, 1ull << 63,
                             (1ull << 63) + 1, (1ull << 63) + 2, UINT64_MAX, 0,
                             (1ull << 53) + 1};
    s = gpuhist_samples_1d(u64a, GPUHIST_U64, N(u64a));
    b = gpuhist_bins_integer(4, INT64_MAX - 1);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[4] = {1, 1, 1, 1};
        CHECK_COUNTS(counts, exp, 4);
        CHECK_TALLY(&r, 0, 2, 2, 0, N(u64a));
    }

    check_context("%s: u64 INTEGER(5, 0)", g_strategy);
    const uint64_t u64b[] = {1ull << 63, 4, UINT64_MAX, 0, (1ull << 53) + 1};
    s = gpuhist_samples_1d(u64b, GPUHIST_U64, N(u64b));
    b = gpuhist_bins_integer(5, 0);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {1, 0, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(u64b));
    }

    /* A negative lower with unsigned samples: bins -3 .. 1. */
    check_context("%s: u64/u8 INTEGER(5, -3)", g_strategy);
    const uint64_t u64c[] = {0, 1, 2, UINT64_MAX, 1ull << 63};
    s = gpuhist_samples_1d(u64c, GPUHIST_U64, N(u64c));
    b = gpuhist_bins_integer(5, -3);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {0, 0, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 3, 0, N(u64c));
        CHECK_EQ_F64_BITS(edges[0], -3.0);
    }
    const uint8_t u8c[] = {0, 1, 2, 255};
    s = gpuhist_samples_1d(u8c, GPUHIST_U8, N(u8c));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {0, 0, 0, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 0, 2, 0, N(u8c));
    }
}

/* 64-bit integers compared exactly with double edges, where converting the sample to double
 * would round it across an edge. */
static void test_int64_exact(void)
{
    uint64_t counts[8];
    double edges[9];
    gpuhist_result r;
    gpuhist_samples s;
    gpuhist_bin_spec b;

    check_context("%s: i64 EDGES {0, 2^53, 2^54}", g_strategy);
    const double e1[3] = {0.0, TWO53, 2.0 * TWO53};
    const int64_t x1[] = {I53 - 1, I53, I53 + 1, 2 * I53 - 1, 2 * I53, 2 * I53 + 1};
    s = gpuhist_samples_1d(x1, GPUHIST_I64, N(x1));
    b = gpuhist_bins_edges(2, e1);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {1, 3};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 2, 0, N(x1));
    }

    /* (double)(2^53 + 3) rounds to 2^53 + 4, the edge; exactly it is below it: bin 0. */
    check_context("%s: i64/u64 EDGES {0, 2^53+4, 2^60}", g_strategy);
    const double e2[3] = {0.0, TWO53 + 4.0, 0x1p60};
    const int64_t x2[] = {I53 + 3, I53 + 4, I53 + 5, I53 + 2};
    s = gpuhist_samples_1d(x2, GPUHIST_I64, N(x2));
    b = gpuhist_bins_edges(2, e2);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x2));
    }
    const uint64_t x2u[] = {(uint64_t)I53 + 3, (uint64_t)I53 + 4, (uint64_t)I53 + 5,
                            (uint64_t)I53 + 2};
    s = gpuhist_samples_1d(x2u, GPUHIST_U64, N(x2u));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x2u));
    }

    /* The last edge 2^53 + 4: 2^53 + 3 is inside, 2^53 + 4 is on it. */
    check_context("%s: i64 EDGES {0, 2^53+4} last edge", g_strategy);
    const double e3[2] = {0.0, TWO53 + 4.0};
    const int64_t x3[] = {I53 + 3, I53 + 4, I53 + 5};
    s = gpuhist_samples_1d(x3, GPUHIST_I64, N(x3));
    b = gpuhist_bins_edges(1, e3);
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 1);
        CHECK_TALLY(&r, 0, 0, 2, 0, 3);
    }
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 0, 1, 0, 3);
    }

    /* Near 2^63: INT64_MAX < 2^63 (its double is 2^63); INT64_MIN + 1023 < -2^63 + 1024 (its
     * double is -2^63 + 1024). */
    check_context("%s: i64 EDGES {-2^63, -2^63+1024, 0, 2^63}", g_strategy);
    const double e4[4] = {-TWO63, -TWO63 + 1024.0, 0.0, TWO63};
    const int64_t x4[] = {INT64_MIN, INT64_MIN + 1023, INT64_MIN + 1024, INT64_MIN + 1025, -1,
                          0, INT64_MAX};
    s = gpuhist_samples_1d(x4, GPUHIST_I64, N(x4));
    b = gpuhist_bins_edges(3, e4);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {2, 3, 2};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x4));
    }

    /* u64: 2^63 - 1 < 2^63 (its double is 2^63); UINT64_MAX < 2^64 (its double is 2^64). */
    check_context("%s: u64 EDGES {2^63, 2^64}", g_strategy);
    const double e5[2] = {TWO63, TWO64};
    const uint64_t x5[] = {(1ull << 63) - 1, 1ull << 63, UINT64_MAX, 0, (1ull << 63) + 1};
    s = gpuhist_samples_1d(x5, GPUHIST_U64, N(x5));
    b = gpuhist_bins_edges(1, e5);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            CHECK_EQ_U64(counts[0], 3);
            CHECK_TALLY(&r, 0, 2, 0, 0, N(x5));
        }
    }

    check_context("%s: u64 EVEN(2, 0, 2^64)", g_strategy);
    const uint64_t x6[] = {0, (1ull << 63) - 1, 1ull << 63, UINT64_MAX};
    s = gpuhist_samples_1d(x6, GPUHIST_U64, N(x6));
    b = gpuhist_bins_even(2, 0.0, TWO64);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x6));
        CHECK_EQ_F64_BITS(edges[1], TWO63);
    }

    check_context("%s: i64 EVEN(2, -2^63, 2^63)", g_strategy);
    const int64_t x7[] = {INT64_MIN, -1, 0, INT64_MAX};
    s = gpuhist_samples_1d(x7, GPUHIST_I64, N(x7));
    b = gpuhist_bins_even(2, -TWO63, TWO63);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[2] = {2, 2};
        CHECK_COUNTS(counts, exp, 2);
        CHECK_TALLY(&r, 0, 0, 0, 0, N(x7));
    }

    check_context("%s: i64 EVEN(2, 2^53, 2^53+8)", g_strategy);
    const int64_t x8[] = {I53 - 1, I53, I53 + 3, I53 + 4, I53 + 7, I53 + 8, I53 + 9};
    s = gpuhist_samples_1d(x8, GPUHIST_I64, N(x8));
    b = gpuhist_bins_even(2, TWO53, TWO53 + 8.0);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[2] = {2, incl ? 3u : 2u};
            CHECK_COUNTS(counts, exp, 2);
            CHECK_TALLY(&r, 0, 1, incl ? 1 : 2, 0, N(x8));
            CHECK_EQ_F64_BITS(edges[1], TWO53 + 4.0);
        }
    }

    /* EVEN(3, -2^63, 2^63): interior edges are large integral doubles; e - 1, e, e + 1 as
     * int64 must land in bins i-1, i, i. Edges computed here, NumPy's way. */
    check_context("%s: i64 EVEN(3, -2^63, 2^63) around interior edges", g_strategy);
    double mine[4];
    my_even_edges(3, -TWO63, TWO63, 0, mine);
    int64_t x9[6];
    for (int i = 1; i <= 2; ++i) {
        int64_t e = (int64_t)mine[i]; /* exact: |e| < 2^63 and integral */
        x9[(i - 1) * 3 + 0] = e - 1;
        x9[(i - 1) * 3 + 1] = e;
        x9[(i - 1) * 3 + 2] = e + 1;
    }
    s = gpuhist_samples_1d(x9, GPUHIST_I64, 6);
    b = gpuhist_bins_even(3, -TWO63, TWO63);
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {1, 3, 2};
        CHECK_COUNTS(counts, exp, 3);
        for (int i = 0; i <= 3; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
    }
}

int main(void)
{
    static const semantics_test each[] = {test_count_zero, test_all_dtypes, test_integer,
                                          test_int64_exact};
    return semantics_main(NULL, 0, each, N(each));
}
