/*
 * test_semantics_bins.c - EVEN and EDGES bins (docs/SEMANTICS.md): NumPy's edges where a plain
 * multiply is one bin off, float32 edges for f32 samples, a sweep of EVEN specs with samples on
 * and beside every edge (including denormal ranges and the ranges NumPy refuses), EDGES bins on
 * and around their edges for float and integer samples, the last edge half-open or inclusive, and
 * EDGES laid out unevenly in the samples' order keys (crowded, denormal, log-spaced) against a
 * linear search.
 * Runs with the automatic choice and with every CPU strategy forced by name.
 */
#include "semantics.h"

/* NumPy's edges: the cases where a multiply alone is one bin off, and float32 edges. */
static void test_even_numpy(void)
{
    uint64_t counts[10];
    double edges[11], mine[11];
    gpuhist_result r;
    gpuhist_bin_spec b = gpuhist_bins_even(10, 0.0, 1.0);

    /* f64: E = 0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
     * 0.7000000000000001, 0.8, 0.9, 1. (0.3 - 0) * 10 rounds to 3.0, but 0.3 < E[3]: bin 2;
     * likewise 0.6 -> bin 5 and 0.7 -> bin 6 (numpy.histogram agrees). */
    check_context("%s: f64 EVEN(10,0,1) numpy edges", g_strategy);
    const double xd[] = {0.0, 0.1, 0.3, 0x1.3333333333334p-2, 0.6, 0.7, 0.9999999999999999, 1.0};
    gpuhist_samples s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {1, 1, 1, 1, 0, 1, 1, 0, 0, 1};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 1, 0, N(xd));
        my_even_edges(10, 0.0, 1.0, 0, mine);
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        CHECK_EQ_F64_BITS(edges[3], 0x1.3333333333334p-2);
        CHECK_EQ_F64_BITS(edges[6], 0x1.3333333333334p-1);
        CHECK_EQ_F64_BITS(edges[7], 0x1.6666666666667p-1);
    }

    /* f32: the edges are rounded to float: E[7] = (float)0.7000000000000001 = 0.7f, which is
     * BELOW the double edge, so 0.7f is in bin 7 (with double edges it would be bin 6), and the
     * float just below 0.7f is in bin 6. 0.3f and 0.6f sit exactly on their float edges. E[9] =
     * 0.9f < 0.9: 0.9f is in bin 9. numpy.histogram(float32 data) gives the same. */
    check_context("%s: f32 EVEN(10,0,1) float edges", g_strategy);
    const float xf[] = {0.3f, 0.6f, 0.7f, 0x1.666664p-1f /* nextafterf(0.7f, 0) */, 0.9f,
                        0x1.fffffep-1f /* largest float < 1 */, 1.0f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[10] = {0, 0, 0, 1, 0, 0, 2, 1, 0, 2};
        CHECK_COUNTS(counts, exp, 10);
        CHECK_TALLY(&r, 0, 0, 1, 0, N(xf));
        my_even_edges(10, 0.0, 1.0, 1, mine);
        for (int i = 0; i <= 10; ++i)
            CHECK_EQ_F64_BITS(edges[i], mine[i]);
        CHECK_EQ_F64_BITS(edges[3], (double)0.3f);
        CHECK_EQ_F64_BITS(edges[7], (double)0.7f);
        CHECK(edges[7] < 0x1.6666666666667p-1);
    }
}

/*
 * A sweep of EVEN specs: the reported edges must equal NumPy's (computed here), and samples on
 * every edge and on both neighbours of it must land where a linear search over those edges says.
 * Covers odd ranges, many bins, -0.0 as lower, denormal ranges (including NumPy's fallback when
 * the step underflows to 0), and ranges whose rounded edges collide or go down, which must be
 * refused as NumPy refuses them.
 */
typedef struct {
    gpuhist_dtype t;
    uint32_t bins;
    double lower, upper;
} even_case;

static void test_even_sweep(void)
{
    static const even_case cases[] = {
        {GPUHIST_F64, 10, 0.0, 1.0},
        {GPUHIST_F32, 10, 0.0, 1.0},
        {GPUHIST_F64, 7, -3.7, 11.2},
        {GPUHIST_F32, 7, -3.7, 11.2},
        {GPUHIST_F64, 1000, 0.0, 1.0},
        {GPUHIST_F32, 1000, 0.0, 1.0},
        {GPUHIST_F32, 4096, -1.0, 3.0},
        {GPUHIST_F64, 3, -1e-5, 1e-5},
        {GPUHIST_F64, 4, -0.0, 1.0},
        {GPUHIST_F32, 4, -0.0, 1.0},
        {GPUHIST_F64, 4, 0.0, 1e-310},     /* denormal edges */
        {GPUHIST_F64, 4, 0.0, 0x1p-1073},  /* step underflows to 0: linspace's fallback */
        {GPUHIST_F64, 3, -0x1p-1074, 0x1p-1073},
        {GPUHIST_F64, 9, -0x1p-1074, 0x1p-1072},   /* edges go down: refused, as NumPy does */
        {GPUHIST_F32, 100, 1.0, 1.0000001},        /* float edges collide: refused */
        {GPUHIST_F32, 3, 0.0, 1e-38},      /* float denormal edges */
        {GPUHIST_F32, 5, -0x1p-149, 0x1p-147},
        {GPUHIST_F64, 5, 1e300, 1.5e300},
        {GPUHIST_F32, 3, 1e6, 1e6 + 0.5},
        {GPUHIST_I32, 3, -10.0, 10.0},
        {GPUHIST_I32, 7, -1e9, 2e9},
        {GPUHIST_U8, 256, 0.0, 256.0},
        {GPUHIST_U8, 7, 0.5, 250.25},
        {GPUHIST_I16, 33, -32768.0, 32767.0},
        {GPUHIST_U16, 1000, 0.0, 65536.0},
        {GPUHIST_I8, 3, -128.0, 127.0},
        {GPUHIST_U32, 31, 3.0, 4e9},
    };
    enum { MAXB = 4096 };
    static double mine[MAXB + 1], edges[MAXB + 1];
    static uint64_t counts[MAXB], exp[MAXB];
    static unsigned char data[(MAXB + 1) * 6 * 8];
    static double xs[(MAXB + 1) * 6];

    for (size_t c = 0; c < N(cases); ++c) {
        const even_case *k = &cases[c];
        for (int variant = 0; variant < 2; ++variant) {
            int incl = variant, clamp = variant;
            check_context("%s: sweep %s EVEN(%u, %a, %a) incl=%d clamp=%d", g_strategy,
                          gpuhist_dtype_name(k->t), k->bins, k->lower, k->upper, incl, clamp);
            my_even_edges(k->bins, k->lower, k->upper, k->t == GPUHIST_F32, mine);
            int increasing = 1;
            for (uint32_t i = 0; i < k->bins; ++i)
                increasing &= mine[i] < mine[i + 1];
            if (!increasing) {
                /* NumPy refuses edges that do not increase ("Too many bins for data range"):
                 * the call and gpuhist_compute_edges must refuse them too, naming the range. */
                double zero = 0.0;
                gpuhist_samples s = gpuhist_samples_1d(&zero, GPUHIST_F64, 1);
                s.dtype = k->t;
                gpuhist_bin_spec b = gpuhist_bins_even(k->bins, k->lower, k->upper);
                gpuhist_result r = gpuhist_result_host(counts);
                CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, &b, &r), GPUHIST_ERROR_INVALID_ARGUMENT);
                CHECK_CONTAINS(gpuhist_last_error(g_ctx), "too many bins for the range");
                CHECK_EQ_INT(gpuhist_compute_edges(&b, k->t, edges),
                             GPUHIST_ERROR_INVALID_ARGUMENT);
                continue;
            }
            /* Samples: each edge and its neighbours in the sample type. */
            size_t n = 0;
            for (uint32_t i = 0; i <= k->bins; ++i) {
                double e = mine[i];
                if (k->t == GPUHIST_F64) {
                    xs[n++] = e;
                    xs[n++] = nextafter(e, -INFINITY);
                    xs[n++] = nextafter(e, INFINITY);
                } else if (k->t == GPUHIST_F32) {
                    float f = (float)e; /* exact: f32 edges are floats */
                    xs[n++] = f;
                    xs[n++] = nextafterf(f, -INFINITY);
                    xs[n++] = nextafterf(f, INFINITY);
                } else {
                    double lo = k->t == GPUHIST_U8 ? 0 : k->t == GPUHIST_I8 ? -128
                              : k->t == GPUHIST_I16 ? -32768 : k->t == GPUHIST_U16 ? 0
                              : k->t == GPUHIST_U32 ? 0 : -2147483648.0;
                    double hi = k->t == GPUHIST_U8 ? 255 : k->t == GPUHIST_I8 ? 127
                              : k->t == GPUHIST_I16 ? 32767 : k->t == GPUHIST_U16 ? 65535
                              : k->t == GPUHIST_U32 ? 4294967295.0 : 2147483647.0;
                    double cand[4] = {floor(e) - 1, floor(e), ceil(e), ceil(e) + 1};
                    for (int j = 0; j < 4; ++j)
                        if (cand[j] >= lo && cand[j] <= hi)
                            xs[n++] = cand[j];
                }
            }
            memset(exp, 0, sizeof(uint64_t) * k->bins);
            uint64_t under = 0, over = 0;
            for (size_t j = 0; j < n; ++j) {
                put(k->t, data, j, xs[j]);
                int sl = my_slot(mine, k->bins, incl, xs[j]);
                if (sl >= 0)
                    ++exp[sl];
                else if (sl == SLOT_UNDER)
                    ++under;
                else if (sl == SLOT_OVER)
                    ++over;
            }
            if (clamp) {
                exp[0] += under;
                exp[k->bins - 1] += over;
            }
            gpuhist_samples s = gpuhist_samples_1d(data, k->t, n);
            gpuhist_bin_spec b = gpuhist_bins_even(k->bins, k->lower, k->upper);
            b.last_edge_inclusive = incl;
            b.outliers = clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
            gpuhist_result r;
            if (!hist(&s, &b, counts, edges, &r))
                continue;
            int edges_ok = 1;
            for (uint32_t i = 0; i <= k->bins && edges_ok; ++i)
                edges_ok = CHECK_EQ_F64_BITS(edges[i], mine[i]);
            CHECK_COUNTS(counts, exp, k->bins);
            CHECK_TALLY(&r, 0, under, over, 0, n);
            CHECK_EQ_INT(r.last_edge_inclusive, incl);
            double ce[MAXB + 1];
            if (variant == 0 && CHECK_EQ_INT(gpuhist_compute_edges(&b, k->t, ce), GPUHIST_OK))
                for (uint32_t i = 0; i <= k->bins; ++i)
                    if (!CHECK_EQ_F64_BITS(ce[i], mine[i]))
                        break;
        }
    }
}

static void test_edges_kind(void)
{
    const double ex[6] = {-2.0, -0.5, 0.0, 1e-300, 3.0, 1e10};
    gpuhist_bin_spec b = gpuhist_bins_edges(5, ex);
    uint64_t counts[5];
    double edges[6];
    gpuhist_result r;

    check_context("%s: f64 EDGES on and around edges", g_strategy);
    const double xd[] = {-3.0, -INFINITY, -2.0, -1.0, -0.5, -0.0, 0.0, 0x1p-1074, 1e-300,
                         2.9999999999999996, 3.0, 1e10, INFINITY, NAN};
    gpuhist_samples s = gpuhist_samples_1d(xd, GPUHIST_F64, N(xd));
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            /* -2 -1 | -0.5 | -0.0 0 denorm | 1e-300 2.99.. | 3 (+1e10 when inclusive) */
            const uint64_t exp[5] = {2, 1, 3, 2, incl ? 2u : 1u};
            CHECK_COUNTS(counts, exp, 5);
            CHECK_TALLY(&r, 0, 2, incl ? 1 : 2, 1, N(xd));
            for (int i = 0; i < 6; ++i)
                CHECK_EQ_F64_BITS(edges[i], ex[i]);
        }
    }
    b.last_edge_inclusive = 0;

    /* f32 samples are compared with the double edges as they are: the smallest float denormal
     * (1.4e-45) is above 1e-300, so it is in bin 3, not bin 2; 1e10f == 1e10 exactly. */
    check_context("%s: f32 EDGES", g_strategy);
    const float xf[] = {-3.0f, -2.0f, -1.0f, -0.5f, -0.0f, 0.0f, 0x1p-149f, 3.0f, 1e10f};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {2, 1, 2, 1, 1};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 1, 1, 0, N(xf));
    }

    check_context("%s: i32 EDGES", g_strategy);
    const int32_t xi[] = {-3, -2, -1, 0, 1, 2, 3, 2000000000, INT32_MIN, INT32_MAX};
    s = gpuhist_samples_1d(xi, GPUHIST_I32, N(xi));
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[5] = {2, 0, 1, 2, 3};
        CHECK_COUNTS(counts, exp, 5);
        CHECK_TALLY(&r, 0, 2, 0, 0, N(xi));
    }

    /* A single bin; and many bins with every sample exactly on an edge. */
    check_context("%s: EDGES one bin", g_strategy);
    const double one[2] = {1.0, 2.0};
    b = gpuhist_bins_edges(1, one);
    const double x1[] = {0.5, 1.0, 1.5, 2.0};
    s = gpuhist_samples_1d(x1, GPUHIST_F64, N(x1));
    if (hist(&s, &b, counts, edges, &r)) {
        CHECK_EQ_U64(counts[0], 2);
        CHECK_TALLY(&r, 0, 1, 1, 0, 4);
    }

    check_context("%s: EDGES 1000 bins, samples on edges", g_strategy);
    static double many[1001], xm[1001];
    static uint64_t cm[1000];
    static double em[1001];
    for (int i = 0; i <= 1000; ++i)
        many[i] = xm[i] = -500.0 + i * 0.75 + (i % 7) * 1e-3; /* increasing, uneven */
    b = gpuhist_bins_edges(1000, many);
    s = gpuhist_samples_1d(xm, GPUHIST_F64, 1001);
    if (hist(&s, &b, cm, em, &r)) {
        for (int i = 0; i < 1000; ++i)
            if (!CHECK_EQ_U64(cm[i], 1))
                break;
        CHECK_TALLY(&r, 0, 0, 1, 0, 1001);
    }
}

static void test_last_inclusive(void)
{
    uint64_t counts[4];
    double edges[5];
    gpuhist_result r;
    check_context("%s: EVEN last_edge_inclusive", g_strategy);
    const double x[] = {0.0, 3.999, 4.0, 4.0000001, INFINITY};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, N(x));
    gpuhist_bin_spec b = gpuhist_bins_even(4, 0.0, 4.0);
    CHECK_EQ_INT(b.last_edge_inclusive, 0); /* half-open by default in the C API */
    CHECK_EQ_INT(b.outliers, GPUHIST_OUTLIERS_DROP);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[4] = {1, 0, 0, incl ? 2u : 1u};
            CHECK_COUNTS(counts, exp, 4);
            CHECK_TALLY(&r, 0, 0, incl ? 2 : 3, 0, N(x));
            CHECK_EQ_INT(r.last_edge_inclusive != 0, incl);
        }
    }
    check_context("%s: EDGES last_edge_inclusive u8", g_strategy);
    const double e[3] = {0.0, 1.0, 2.0};
    const uint8_t xu[] = {2, 2, 3, 1};
    s = gpuhist_samples_1d(xu, GPUHIST_U8, N(xu));
    b = gpuhist_bins_edges(2, e);
    for (int incl = 0; incl < 2; ++incl) {
        b.last_edge_inclusive = incl;
        if (hist(&s, &b, counts, edges, &r)) {
            const uint64_t exp[2] = {0, incl ? 3u : 1u};
            CHECK_COUNTS(counts, exp, 2);
            CHECK_TALLY(&r, 0, 0, incl ? 1 : 3, 0, N(xu));
        }
    }
    /* f32: the float-rounded last edge is what x is compared with. */
    check_context("%s: f32 EVEN(3, 0, 0.1) inclusive", g_strategy);
    const float xf[] = {0.1f, 0x1.99999cp-4f /* nextafterf(0.1f, 1) */};
    s = gpuhist_samples_1d(xf, GPUHIST_F32, N(xf));
    b = gpuhist_bins_even(3, 0.0, 0.1);
    b.last_edge_inclusive = 1;
    if (hist(&s, &b, counts, edges, &r)) {
        const uint64_t exp[3] = {0, 0, 1};
        CHECK_COUNTS(counts, exp, 3);
        CHECK_TALLY(&r, 0, 0, 1, 0, 2);
        CHECK_EQ_F64_BITS(edges[3], (double)0.1f);
    }
}

/* EDGES whose order keys crowd or spread unevenly (the CPU's cell table over the samples' order
 * keys must give binmap.h's bins whatever the layout): edges a few ulps apart beside edges
 * hundreds of orders of magnitude apart, denormal and signed-zero edges, log-spaced edges;
 * samples on, just below and just above every edge, zeros of both signs, and random doubles
 * spread over the keys (fixed xorshift seed). Counts and tallies against a linear search. */
static void check_edges_against_search(const char *what, const double *e, uint32_t bins)
{
    static double x[40000];
    static uint64_t counts[8192], want[8192];
    uint64_t under = 0, over = 0, nan = 0;
    size_t n = 0;
    for (uint32_t i = 0; i <= bins; ++i) {
        x[n++] = e[i];
        x[n++] = nextafter(e[i], -INFINITY);
        x[n++] = nextafter(e[i], INFINITY);
    }
    x[n++] = 0.0;
    x[n++] = -0.0;
    x[n++] = NAN;
    uint64_t r = 0x9e3779b97f4a7c15ull;
    while (n < sizeof x / sizeof x[0]) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        double v;
        uint64_t bits = r & ~(0x7ffull << 52); /* any sign and mantissa ... */
        bits |= (uint64_t)(1023 - 40 + (r >> 52) % 80) << 52; /* ... exponents 2^-40 .. 2^39 */
        memcpy(&v, &bits, sizeof v);
        x[n++] = v;
    }
    memset(want, 0, sizeof want);
    for (size_t i = 0; i < n; ++i) {
        int k = my_slot(e, bins, 0, x[i]);
        if (k == SLOT_UNDER)
            ++under;
        else if (k == SLOT_OVER)
            ++over;
        else if (k == SLOT_NAN)
            ++nan;
        else
            ++want[k];
    }
    check_context("%s: %s", g_strategy, what);
    gpuhist_bin_spec b = gpuhist_bins_edges(bins, e);
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, n);
    gpuhist_result res;
    if (hist(&s, &b, counts, NULL, &res)) {
        CHECK_COUNTS(counts, want, bins);
        CHECK_TALLY(&res, 0, under, over, nan, n);
    }
}

static void test_edges_cells(void)
{
    static double e[8193];
    /* a crowd of 200 edges one ulp apart at 1.0 between edges at +-1e300 */
    e[0] = -1e300;
    for (int i = 1; i <= 200; ++i)
        e[i] = i == 1 ? 1.0 : nextafter(e[i - 1], INFINITY);
    e[201] = 1e300;
    check_edges_against_search("EDGES crowded at 1.0 between +-1e300", e, 201);
    /* denormal and zero edges around zero, then wide */
    const double z[] = {-1e-300, -0x1p-1074, 0.0, 0x1p-1074, 0x1p-1022, 1e-300, 1.0, 1e300};
    check_edges_against_search("EDGES at denormals and zero", z, 7);
    /* 8192 log-spaced bins from 1e-12 to 1e12 (many per cell at 2^16 cells) */
    for (int i = 0; i <= 8192; ++i)
        e[i] = pow(10.0, -12.0 + 24.0 * i / 8192.0);
    check_edges_against_search("EDGES 8192 log-spaced", e, 8192);
    /* 256 quadratic edges in [0, 1] (the benchmark's uneven spec) */
    for (int i = 0; i <= 256; ++i)
        e[i] = (i / 256.0) * (i / 256.0);
    check_edges_against_search("EDGES 256 quadratic in [0, 1]", e, 256);
    /* two edges only, far apart, and the whole range of negative values */
    const double w[] = {-1e300, -1e-300, -0.0};
    check_edges_against_search("EDGES negative, last edge -0.0", w, 2);
}

int main(void)
{
    static const semantics_test each[] = {test_even_numpy, test_even_sweep, test_edges_kind,
                                          test_last_inclusive, test_edges_cells};
    return semantics_main(NULL, 0, each, N(each));
}
