/*
 * test_semantics_validation.c - the refusals of docs/SEMANTICS.md's validation rules: bad bin
 * counts, ranges, edges, kinds and enums, missing pointers, impossible geometry (strides, channels,
 * masks), unknown or foreign strategies, and contexts (bad arguments, a backend not compiled in,
 * AUTO's fallback), each with the status it must return and, where there is one, an error message
 * that names the field; and a context that still works after them. Runs once, on a CPU context.
 */
#include "semantics.h"

/* Expect `got` to be status `want` and the context's message to name the field: to contain one
 * of the words (w2, w3 optional). */
static void expect_error_(const char *file, int line, gpuhist_status got, gpuhist_status want,
                          const char *w1, const char *w2, const char *w3)
{
    const char *msg = gpuhist_last_error(g_ctx);
    if (!check_eq_i64_(file, line, "status", "expected", got, want))
        return;
    ++check_count_;
    if (!msg || !(strstr(msg, w1) || (w2 && strstr(msg, w2)) || (w3 && strstr(msg, w3))))
        check_fail_(file, line, "error message \"%s\" names none of \"%s\" \"%s\" \"%s\"",
                    msg ? msg : "(null)", w1, w2 ? w2 : "", w3 ? w3 : "");
}
#define EXPECT_ERROR(got, want, w1, w2)                                                        \
    expect_error_(__FILE__, __LINE__, (got), (want), (w1), (w2), NULL)
#define EXPECT_ERROR3(got, want, w1, w2, w3)                                                   \
    expect_error_(__FILE__, __LINE__, (got), (want), (w1), (w2), (w3))

static gpuhist_status run_bad(const gpuhist_samples *s, const gpuhist_bin_spec *b)
{
    uint64_t counts[64];
    gpuhist_result r = gpuhist_result_host(counts);
    return gpuhist_histogram(g_ctx, s, b, &r);
}

static void test_validation(void)
{
    const gpuhist_status INV = GPUHIST_ERROR_INVALID_ARGUMENT;
    float data[64] = {0};
    gpuhist_samples s = gpuhist_samples_1d(data, GPUHIST_F32, 16);
    gpuhist_bin_spec b;

    check_context("validation: bins");
    b = gpuhist_bins_even(0, 0.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    b = gpuhist_bins_auto(0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    const double e2[3] = {0.0, 1.0, 2.0};
    b = gpuhist_bins_edges(0, e2);
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    b = gpuhist_bins_integer(0, 0);
    s.dtype = GPUHIST_I32;
    EXPECT_ERROR(run_bad(&s, &b), INV, "bins", NULL);
    s.dtype = GPUHIST_F32;
    /* Too many bins for any memory (the caller's buffer here is 64 counts: a library that took
     * this would write far past it, so only a refusal is acceptable). */
    b = gpuhist_bins_even(UINT32_MAX, 0.0, 1.0);
    {
        gpuhist_status st = run_bad(&s, &b);
        if (st == GPUHIST_ERROR_OUT_OF_MEMORY)
            CHECK(1);
        else
            EXPECT_ERROR(st, INV, "bins", NULL);
    }

    check_context("validation: range");
    b = gpuhist_bins_even(4, 1.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    b = gpuhist_bins_even(4, 2.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    b = gpuhist_bins_even(4, NAN, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", NULL);
    b = gpuhist_bins_even(4, 0.0, NAN);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);
    b = gpuhist_bins_even(4, -INFINITY, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", NULL);
    b = gpuhist_bins_even(4, 0.0, INFINITY);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);
    /* Finite bounds whose width overflows: NumPy's edges would be NaN/inf. */
    b = gpuhist_bins_even(4, -DBL_MAX, DBL_MAX);
    EXPECT_ERROR(run_bad(&s, &b), INV, "lower", "upper");
    /* f32 samples: an upper bound beyond FLT_MAX rounds to an infinite float edge. */
    b = gpuhist_bins_even(4, 0.0, 1e39);
    EXPECT_ERROR(run_bad(&s, &b), INV, "upper", NULL);

    check_context("validation: edges");
    const double bad_eq[4] = {0.0, 1.0, 1.0, 2.0};
    const double bad_dec[3] = {0.0, 2.0, 1.0};
    const double bad_nan[3] = {0.0, NAN, 1.0};
    const double bad_inf[3] = {0.0, 1.0, INFINITY};
    const double bad_ninf[3] = {-INFINITY, 0.0, 1.0};
    b = gpuhist_bins_edges(3, bad_eq);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_dec);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_nan);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_inf);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, bad_ninf);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);
    b = gpuhist_bins_edges(2, NULL);
    EXPECT_ERROR(run_bad(&s, &b), INV, "edges", NULL);

    check_context("validation: kinds and enums");
    b = gpuhist_bins_integer(4, 0);
    /* INTEGER bins with float samples: the field is the kind (docs/SEMANTICS.md's message says
     * "integer bins: sample type f32 is not an integer type") or the dtype. */
    EXPECT_ERROR3(run_bad(&s, &b), INV, "dtype", "kind", "integer bins");
    s.dtype = GPUHIST_F64;
    EXPECT_ERROR3(run_bad(&s, &b), INV, "dtype", "kind", "integer bins");
    s.dtype = (gpuhist_dtype)GPUHIST_DTYPE_COUNT;
    b = gpuhist_bins_even(4, 0.0, 1.0);
    EXPECT_ERROR(run_bad(&s, &b), INV, "dtype", NULL);
    s.dtype = GPUHIST_F32;
    b.kind = (gpuhist_bin_kind)7;
    EXPECT_ERROR(run_bad(&s, &b), INV, "kind", NULL);
    b = gpuhist_bins_even(4, 0.0, 1.0);
    b.outliers = (gpuhist_outliers)9;
    EXPECT_ERROR(run_bad(&s, &b), INV, "outliers", NULL);

    check_context("validation: pointers");
    b = gpuhist_bins_even(4, 0.0, 1.0);
    gpuhist_samples sn = gpuhist_samples_1d(NULL, GPUHIST_F32, 5);
    EXPECT_ERROR(run_bad(&sn, &b), INV, "data", NULL);
    sn.count = 0;
    sn.rows = 2;
    sn.row_length = 2;
    sn.row_stride = 8;
    EXPECT_ERROR(run_bad(&sn, &b), INV, "data", NULL);
    gpuhist_result r = gpuhist_result_host(NULL);
    EXPECT_ERROR(gpuhist_histogram(g_ctx, &s, &b, &r), INV, "counts", NULL);
    uint64_t counts[8];
    r = gpuhist_result_host(counts);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, NULL, &b, &r), INV);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, NULL, &r), INV);
    CHECK_EQ_INT(gpuhist_histogram(g_ctx, &s, &b, NULL), INV);
    CHECK_EQ_INT(gpuhist_histogram(NULL, &s, &b, &r), INV);

    check_context("validation: geometry");
    gpuhist_samples sr = gpuhist_samples_1d(data, GPUHIST_F32, 0);
    sr.rows = 2;
    sr.row_length = 4;
    sr.row_stride = 15; /* a row is 16 bytes */
    EXPECT_ERROR(run_bad(&sr, &b), INV, "row_stride", "stride");
    sr.channels = 2;
    sr.row_stride = 31; /* a row is 32 bytes */
    EXPECT_ERROR(run_bad(&sr, &b), INV, "row_stride", "stride");
    gpuhist_samples sc = s;
    sc.channels = 5;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channels", NULL);
    sc.channels = 2;
    sc.active_channels = 3;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "active_channels", NULL);
    sc.active_channels = 0;
    sc.channel_mask = 0x4; /* channel 2 of a 2-channel input */
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channel_mask", NULL);
    sc.channel_mask = 0x10;
    sc.channels = 4;
    EXPECT_ERROR(run_bad(&sc, &b), INV, "channel_mask", NULL);

    check_context("validation: the context still works after errors");
    sc = s;
    CHECK_EQ_INT(run_bad(&sc, &b), GPUHIST_OK);

    check_context("validation: strategies");
    EXPECT_ERROR(gpuhist_set_strategy(g_ctx, "no-such-strategy"), GPUHIST_ERROR_UNKNOWN_STRATEGY,
                 "no-such-strategy", NULL);
    const char *other = NULL;
    for (size_t i = 0; i < gpuhist_strategy_count(); ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend != GPUHIST_BACKEND_CPU) {
            other = d.name;
            break;
        }
    }
    if (other) {
        gpuhist_status st = gpuhist_set_strategy(g_ctx, other);
        CHECK_MSG(st == INV || st == GPUHIST_ERROR_UNSUPPORTED,
                  "forcing \"%s\" (another backend) on a CPU context returned %d", other, (int)st);
        CHECK_CONTAINS(gpuhist_last_error(g_ctx), other);
    } else {
        /* Only the CPU backend is compiled in: a CUDA strategy's name is unknown here. */
        gpuhist_status st = gpuhist_set_strategy(g_ctx, "cuda-global-atomic");
        CHECK_MSG(st == GPUHIST_ERROR_UNKNOWN_STRATEGY || st == INV, "got %d", (int)st);
    }
    /* A failed set_strategy leaves the automatic choice in place; "auto" and NULL restore it. */
    CHECK_EQ_INT(run_bad(&s, &b), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, "cpu-reference"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, "auto"), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(g_ctx, NULL), GPUHIST_OK);
    CHECK_EQ_INT(gpuhist_set_strategy(NULL, "auto"), INV);

    check_context("validation: contexts");
    CHECK_EQ_INT(gpuhist_create(NULL, GPUHIST_BACKEND_CPU), INV);
    gpuhist_ctx *c2 = (gpuhist_ctx *)&c2;
    CHECK_EQ_INT(gpuhist_create(&c2, (gpuhist_backend)42), INV);
    CHECK(c2 == NULL);
    gpuhist_destroy(NULL);
    if (!gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA)) {
        c2 = (gpuhist_ctx *)&c2;
        CHECK_EQ_INT(gpuhist_create(&c2, GPUHIST_BACKEND_CUDA), GPUHIST_ERROR_NO_DEVICE);
        CHECK(c2 == NULL);
    }
    CHECK_EQ_INT(gpuhist_context_backend(g_ctx), GPUHIST_BACKEND_CPU);
    CHECK(gpuhist_device_name(g_ctx) != NULL && gpuhist_device_name(g_ctx)[0] != 0);
    CHECK(gpuhist_backend_note(g_ctx) != NULL);
    CHECK(gpuhist_build_log(g_ctx) != NULL);
    gpuhist_ctx *ac = NULL;
    if (CHECK_EQ_INT(gpuhist_create(&ac, GPUHIST_BACKEND_AUTO), GPUHIST_OK)) {
        gpuhist_backend be = gpuhist_context_backend(ac);
        CHECK(be != GPUHIST_BACKEND_AUTO);
        if (be == GPUHIST_BACKEND_CPU && !gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA))
            CHECK(gpuhist_backend_note(ac)[0] != 0); /* says why it is not CUDA */
        gpuhist_destroy(ac);
    }
}

int main(void)
{
    static const semantics_test once[] = {test_validation};
    return semantics_main(once, N(once), NULL, 0);
}
