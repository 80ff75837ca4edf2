/*
 * test_semantics_api.c - the API around the histogram call (docs/SEMANTICS.md): version and status
 * strings, dtype and backend names and their parsing, the strategy registry's descriptions, and
 * gpuhist_compute_edges (NumPy's edges for EVEN bins, float edges for f32 samples, the EDGES and
 * INTEGER edges as given). Runs once, on a CPU context.
 */
#include "semantics.h"

static void test_version_status(void)
{
    check_context("version/status");
    CHECK_EQ_STR(gpuhist_version(), GPUHIST_VERSION_STRING);
    CHECK_EQ_U64(gpuhist_version_number(), GPUHIST_VERSION_NUMBER);
    CHECK_EQ_U64(GPUHIST_VERSION_NUMBER, 100);
    const char *s[8];
    for (int i = 0; i < 8; ++i) {
        s[i] = gpuhist_status_string((gpuhist_status)i);
        if (CHECK_MSG(s[i] != NULL && s[i][0] != 0, "status string %d empty", i))
            for (int j = 0; j < i; ++j)
                CHECK_MSG(strcmp(s[i], s[j]) != 0, "status %d and %d share \"%s\"", i, j, s[i]);
    }
    CHECK(s[0] && strstr(s[0], "ok") != NULL);
    CHECK(s[1] && strstr(s[1], "invalid") != NULL);
    const char *bad = gpuhist_status_string((gpuhist_status)1234);
    CHECK(bad != NULL && bad[0] != 0);
}

static void test_dtype_names(void)
{
    static const char *shortn[] = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32",
                                   "f64", "f16", "bf16"};
    static const char *longn[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32",
                                  "uint64", "int64", "float32", "float64", "float16",
                                  "bfloat16"};
    check_context("dtype names");
    for (int t = 0; t < GPUHIST_DTYPE_COUNT; ++t) {
        gpuhist_dtype d = (gpuhist_dtype)99;
        CHECK_EQ_STR(gpuhist_dtype_name((gpuhist_dtype)t), shortn[t]);
        CHECK_EQ_U64(gpuhist_dtype_size((gpuhist_dtype)t), SZ[t]);
        CHECK(gpuhist_dtype_parse(shortn[t], &d) == 1 && d == (gpuhist_dtype)t);
        d = (gpuhist_dtype)99;
        CHECK_MSG(gpuhist_dtype_parse(longn[t], &d) == 1 && d == (gpuhist_dtype)t,
                  "parse \"%s\"", longn[t]);
    }
    gpuhist_dtype d = GPUHIST_U8;
    CHECK(gpuhist_dtype_parse("u7", &d) == 0);
    CHECK(gpuhist_dtype_parse("", &d) == 0);
    CHECK(gpuhist_dtype_parse("f16x", &d) == 0);
    CHECK_EQ_STR(gpuhist_dtype_name(GPUHIST_DTYPE_COUNT), "?");
    CHECK_EQ_STR(gpuhist_dtype_name((gpuhist_dtype)-1), "?");
    CHECK_EQ_U64(gpuhist_dtype_size(GPUHIST_DTYPE_COUNT), 0);

    static const char *bn[] = {"auto", "cpu", "cuda", "opencl"};
    for (int b = 0; b < 4; ++b) {
        gpuhist_backend be = (gpuhist_backend)99;
        CHECK_EQ_STR(gpuhist_backend_name((gpuhist_backend)b), bn[b]);
        CHECK(gpuhist_backend_parse(bn[b], &be) == 1 && be == (gpuhist_backend)b);
    }
    gpuhist_backend be;
    CHECK(gpuhist_backend_parse("metal", &be) == 0);
    CHECK(gpuhist_backend_compiled(GPUHIST_BACKEND_AUTO));
    CHECK(gpuhist_backend_compiled(GPUHIST_BACKEND_CPU));

    /* The registry: every entry described, names unique, cpu-reference present. */
    size_t n = gpuhist_strategy_count();
    int have_ref = 0;
    for (size_t i = 0; i < n; ++i) {
        gpuhist_strategy_desc a;
        if (!CHECK(gpuhist_strategy_info(i, &a) == GPUHIST_OK))
            continue;
        CHECK(a.name && a.name[0] && a.seed && a.supports && a.summary);
        CHECK(gpuhist_backend_compiled(a.backend));
        if (a.name && strcmp(a.name, "cpu-reference") == 0)
            have_ref = a.backend == GPUHIST_BACKEND_CPU;
        for (size_t j = 0; j < i; ++j) {
            gpuhist_strategy_desc b;
            if (gpuhist_strategy_info(j, &b) == GPUHIST_OK && a.name && b.name)
                CHECK_MSG(strcmp(a.name, b.name) != 0, "strategy name \"%s\" twice", a.name);
        }
    }
    CHECK(have_ref);
    gpuhist_strategy_desc a;
    CHECK_EQ_INT(gpuhist_strategy_info(n, &a), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(gpuhist_strategy_info(0, NULL), GPUHIST_ERROR_INVALID_ARGUMENT);
}

static void test_compute_edges(void)
{
    check_context("gpuhist_compute_edges");
    double e[11], mine[11];
    gpuhist_bin_spec b = gpuhist_bins_even(10, 0.0, 1.0);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F64, e), GPUHIST_OK);
    my_even_edges(10, 0.0, 1.0, 0, mine);
    for (int i = 0; i <= 10; ++i)
        CHECK_EQ_F64_BITS(e[i], mine[i]);
    CHECK_EQ_F64_BITS(e[3], 0x1.3333333333334p-2); /* 3 * 0.1 = 0.30000000000000004 */
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F32, e), GPUHIST_OK);
    my_even_edges(10, 0.0, 1.0, 1, mine);
    for (int i = 0; i <= 10; ++i)
        CHECK_EQ_F64_BITS(e[i], mine[i]);
    CHECK_EQ_F64_BITS(e[7], (double)0.7f);
    CHECK_EQ_F64_BITS(e[9], (double)0.9f);
    /* Integer samples use double edges. */
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_U8, e), GPUHIST_OK);
    CHECK_EQ_F64_BITS(e[3], 0x1.3333333333334p-2);

    const double ex[4] = {-1.5, 0.0, 2.0, 1e10};
    b = gpuhist_bins_edges(3, ex);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F32, e), GPUHIST_OK);
    for (int i = 0; i < 4; ++i)
        CHECK_EQ_F64_BITS(e[i], ex[i]);

    b = gpuhist_bins_integer(3, -5);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_I16, e), GPUHIST_OK);
    for (int i = 0; i < 4; ++i)
        CHECK_EQ_F64_BITS(e[i], -5.0 + i);

    b = gpuhist_bins_even(0, 0.0, 1.0);
    CHECK_EQ_INT(gpuhist_compute_edges(&b, GPUHIST_F64, e), GPUHIST_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    static const semantics_test once[] = {test_version_status, test_dtype_names,
                                          test_compute_edges};
    return semantics_main(once, N(once), NULL, 0);
}
