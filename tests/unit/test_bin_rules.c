/*
 * test_bin_rules.c - gpuhist_bins_rule(): NumPy's bin-count rules (CPU backend).
 *
 *   test_bin_rules                    refusals, known NumPy values, layouts, and random data whose
 *                                     spec must count every kept value (seed printed; fixed
 *                                     unless GPUHIST_TEST_SEED is set)
 *   test_bin_rules --batch LIST OUT [NUMPY]
 *                                     for bin_rules_oracle.py, NUMPY's rules (1 or 2; default
 *                                     2: gpuhist_bins_rule_numpy): one case per line of LIST
 *                                     ("PATH DTYPE RULE -" or "PATH DTYPE RULE LO HI", the bounds
 *                                     as C hex floats; PATH holds raw little-endian samples);
 *                                     writes one line per case to OUT: "ok BINS COUNT WIDTH
 *                                     ONBACKEND E0 E1 ... EBINS" (doubles as hex floats) or
 *                                     "err STATUS MESSAGE"; the edges are NumPy's (NumPy 2, f32
 *                                     without a range: gpuhist_linspace_f32)
 */
#define _POSIX_C_SOURCE 200809L
#include "bin_rules.h"
#include "check.h"
#include "gpuhist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RULES[] = {"auto", "fd", "doane", "scott", "stone", "rice", "sturges",
                                    "sqrt"};
#define NRULES 8

/* ---- batch mode (the oracle's driver) ---------------------------------------------------------- */

static int batch(const char *list, const char *outpath, int numpy_major)
{
    FILE *in = fopen(list, "r"), *out = fopen(outpath, "w");
    if (!in || !out) {
        fprintf(stderr, "cannot open %s or %s\n", list, outpath);
        return 2;
    }
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK)
        return 2;
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        char path[3000], dt[16], rule[32], lo_s[64] = "", hi_s[64] = "";
        int nf = sscanf(line, "%2999s %15s %31s %63s %63s", path, dt, rule, lo_s, hi_s);
        if (nf < 4)
            continue;
        gpuhist_dtype dtype;
        if (!gpuhist_dtype_parse(dt, &dtype)) {
            fprintf(out, "err 1 bad dtype %s\n", dt);
            continue;
        }
        FILE *f = fopen(path, "rb");
        if (!f) {
            fprintf(out, "err 1 cannot open %s\n", path);
            continue;
        }
        fseek(f, 0, SEEK_END);
        long bytes = ftell(f);
        fseek(f, 0, SEEK_SET);
        void *data = malloc(bytes > 0 ? (size_t)bytes : 1);
        size_t got = bytes > 0 ? fread(data, 1, (size_t)bytes, f) : 0;
        fclose(f);
        uint64_t n = got / gpuhist_dtype_size(dtype);
        gpuhist_samples s = gpuhist_samples_1d(n ? data : NULL, dtype, n);
        double range[2];
        int has_range = nf >= 5 && strcmp(lo_s, "-") != 0;
        if (has_range) {
            range[0] = strtod(lo_s, NULL);
            range[1] = strtod(hi_s, NULL);
        }
        gpuhist_bin_spec spec;
        gpuhist_rule_info info;
        gpuhist_status st =
            gpuhist_bins_rule_info(ctx, &s, rule, has_range ? range : NULL, &spec, 0,
                                   numpy_major, &info);
        if (st == GPUHIST_OK) {
            double *edges = malloc(((size_t)spec.bins + 1) * sizeof *edges);
            if (numpy_major != 1 && dtype == GPUHIST_F32 && !has_range)
                st = gpuhist_linspace_f32(spec.bins, spec.lower, spec.upper, edges);
            else
                st = gpuhist_compute_edges(&spec, dtype, edges);
            if (st != GPUHIST_OK) {
                fprintf(out, "err %d compute_edges refused the spec\n", (int)st);
            } else {
                fprintf(out, "ok %u %llu %a %d", spec.bins, (unsigned long long)info.count,
                        info.width, info.on_backend);
                for (uint32_t i = 0; i <= spec.bins; ++i)
                    fprintf(out, " %a", edges[i]);
                fputc('\n', out);
            }
            free(edges);
        } else {
            const char *msg = gpuhist_last_error(ctx);
            fprintf(out, "err %d ", (int)st);
            for (const char *c = msg; *c; ++c)
                fputc(*c == '\n' ? ' ' : *c, out);
            fputc('\n', out);
        }
        free(data);
    }
    gpuhist_destroy(ctx);
    fclose(in);
    fclose(out);
    return 0;
}

/* ---- unit tests ------------------------------------------------------------------------------------ */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }
static double rnd_normal(void)
{
    double u = rnd_unit() + 0x1p-60, v = rnd_unit();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static gpuhist_status rule_of(gpuhist_ctx *ctx, const gpuhist_samples *s, const char *rule,
                              const double *range, gpuhist_bin_spec *spec)
{
    return gpuhist_bins_rule(ctx, s, rule, range, spec, 0);
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void test_refusals(gpuhist_ctx *ctx)
{
    check_context("refusals");
    double x[4] = {1, 2, 3, 4};
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, 4);
    gpuhist_bin_spec spec;
    CHECK_EQ_INT(gpuhist_bins_rule(NULL, &s, "auto", NULL, &spec, 0),
                 GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(rule_of(ctx, &s, "Auto", NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "not a bin-count rule"));
    CHECK_EQ_INT(rule_of(ctx, &s, NULL, NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(rule_of(ctx, NULL, "fd", NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(gpuhist_bins_rule(ctx, &s, "fd", NULL, NULL, 0), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(gpuhist_bin_rule_known("stone") && gpuhist_bin_rule_known("sqrt"));
    CHECK(!gpuhist_bin_rule_known("50") && !gpuhist_bin_rule_known(NULL) &&
          !gpuhist_bin_rule_known("STURGES"));

    double bad[2] = {3, 1};
    CHECK_EQ_INT(rule_of(ctx, &s, "sqrt", bad, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "range"));
    double inf[2] = {0, INFINITY};
    CHECK_EQ_INT(rule_of(ctx, &s, "sqrt", inf, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "not finite"));
    float xf[2] = {0, 1};
    gpuhist_samples sf = gpuhist_samples_1d(xf, GPUHIST_F32, 2);
    double huge[2] = {0, 1e39};
    CHECK_EQ_INT(rule_of(ctx, &sf, "sqrt", huge, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "float32"));

    /* weights: NumPy raises TypeError for a rule with weights */
    double w[4] = {1, 1, 1, 1};
    gpuhist_samples sw = s;
    sw.weights = w;
    sw.weight_dtype = GPUHIST_F64;
    CHECK_EQ_INT(rule_of(ctx, &sw, "auto", NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "weights"));

    /* several channels: refused, one picked by channel_mask: fine */
    double px[8] = {1, 10, 2, 20, 3, 30, 4, 40};
    gpuhist_samples sc = gpuhist_samples_1d(px, GPUHIST_F64, 4);
    sc.channels = 2;
    CHECK_EQ_INT(rule_of(ctx, &sc, "sturges", NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "one histogrammed channel"));
    sc.channel_mask = 2;
    CHECK_EQ_INT(rule_of(ctx, &sc, "sturges", NULL, &spec), GPUHIST_OK);
    CHECK_EQ_F64_BITS(spec.lower, 10.0);
    CHECK_EQ_F64_BITS(spec.upper, 40.0);

    /* invalid samples: the message of gpuhist_minmax */
    gpuhist_samples sn = gpuhist_samples_1d(NULL, GPUHIST_F64, 5);
    CHECK_EQ_INT(rule_of(ctx, &sn, "fd", NULL, &spec), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "samples.data"));

    /* the cap: fd on data whose IQR is tiny against its range */
    enum { N = 1000 };
    static double t[N];
    for (int i = 0; i < N; ++i)
        t[i] = 1.0 + i * 1e-9;
    t[0] = -1e6;
    t[N - 1] = 1e6;
    gpuhist_samples st = gpuhist_samples_1d(t, GPUHIST_F64, N);
    CHECK_EQ_INT(gpuhist_bins_rule(ctx, &st, "fd", NULL, &spec, 1000),
                 GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "more than the 1000 allowed"));
    CHECK_EQ_INT(gpuhist_bins_rule(ctx, &st, "fd", NULL, &spec, 0), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "16777216"));
    double near[2] = {0.5, 1.5}; /* with a range the outliers go: numpy gives 10023400 bins */
    CHECK_EQ_INT(gpuhist_bins_rule(ctx, &st, "fd", near, &spec, 0), GPUHIST_OK);
    CHECK_EQ_INT(spec.bins, 10023400);

    /* int8 percentiles wrap as NumPy's do: for {-100, 100} the difference 200 wraps to -56,
     * the IQR becomes 228 (percentiles 114 and -114) and the rule gives 1 bin (2 unwrapped) */
    int8_t w8[2] = {-100, 100};
    gpuhist_samples s8 = gpuhist_samples_1d(w8, GPUHIST_I8, 2);
    CHECK_EQ_INT(rule_of(ctx, &s8, "fd", NULL, &spec), GPUHIST_OK);
    CHECK_EQ_INT(spec.bins, 1);
}

static void test_known(gpuhist_ctx *ctx)
{
    /* numpy.histogram_bin_edges(np.arange(100, dtype=np.int32), bins=rule) */
    static const uint32_t want[NRULES] = {8, 5, 8, 5, 1, 10, 8, 10};
    int32_t a[100];
    for (int i = 0; i < 100; ++i)
        a[i] = i;
    gpuhist_samples s = gpuhist_samples_1d(a, GPUHIST_I32, 100);
    for (int r = 0; r < NRULES; ++r) {
        check_context("known arange(100) %s", RULES[r]);
        gpuhist_bin_spec spec;
        CHECK_EQ_INT(rule_of(ctx, &s, RULES[r], NULL, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, want[r]);
        CHECK_EQ_F64_BITS(spec.lower, 0.0);
        CHECK_EQ_F64_BITS(spec.upper, 99.0);
        CHECK(spec.last_edge_inclusive);
    }
    /* [1,2,2,3,3,3,4,4,4,4,50] with range (0, 10): 50 is dropped */
    static const uint32_t want_b[NRULES] = {15, 7, 18, 7, 334, 15, 15, 11};
    double b[11] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 50};
    gpuhist_samples sb = gpuhist_samples_1d(b, GPUHIST_F64, 11);
    double range[2] = {0, 10};
    for (int r = 0; r < NRULES; ++r) {
        check_context("known range(0,10) %s", RULES[r]);
        gpuhist_bin_spec spec;
        CHECK_EQ_INT(rule_of(ctx, &sb, RULES[r], range, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, want_b[r]);
        CHECK_EQ_F64_BITS(spec.lower, 0.0);
        CHECK_EQ_F64_BITS(spec.upper, 10.0);
    }
    /* constant, empty, all-NaN, equal range bounds */
    for (int r = 0; r < NRULES; ++r) {
        check_context("degenerate %s", RULES[r]);
        gpuhist_bin_spec spec;
        uint8_t c[3] = {5, 5, 5};
        gpuhist_samples sc = gpuhist_samples_1d(c, GPUHIST_U8, 3);
        CHECK_EQ_INT(rule_of(ctx, &sc, RULES[r], NULL, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, 1);
        CHECK_EQ_F64_BITS(spec.lower, 4.5);
        CHECK_EQ_F64_BITS(spec.upper, 5.5);
        gpuhist_samples se = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
        CHECK_EQ_INT(rule_of(ctx, &se, RULES[r], NULL, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, 1);
        CHECK_EQ_F64_BITS(spec.lower, 0.0);
        CHECK_EQ_F64_BITS(spec.upper, 1.0);
        double nan[3] = {NAN, INFINITY, -INFINITY};
        gpuhist_samples sn = gpuhist_samples_1d(nan, GPUHIST_F64, 3);
        CHECK_EQ_INT(rule_of(ctx, &sn, RULES[r], NULL, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, 1);
        CHECK_EQ_F64_BITS(spec.upper, 1.0);
        double eq[2] = {2, 2};
        CHECK_EQ_INT(rule_of(ctx, &sc, RULES[r], eq, &spec), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, 1);
        CHECK_EQ_F64_BITS(spec.lower, 1.5);
        CHECK_EQ_F64_BITS(spec.upper, 2.5);
    }
}

/* NumPy 2's rules (the default) against NumPy 1.x's (numpy_major 1), on values printed by
 * numpy.histogram_bin_edges under NumPy 1.24.2 and 2.5.2. */
static void test_numpy_versions(gpuhist_ctx *ctx)
{
    /* int32 i % 7, i < 1000: every width below 1 is widened to 1 by NumPy 2 (6 bins) */
    static const uint32_t want1[NRULES] = {11, 8, 11, 9, 100, 20, 11, 32};
    static int32_t a[1000];
    for (int i = 0; i < 1000; ++i)
        a[i] = i % 7;
    gpuhist_samples s = gpuhist_samples_1d(a, GPUHIST_I32, 1000);
    for (int r = 0; r < NRULES; ++r) {
        check_context("numpy versions: int32 i %% 7, %s", RULES[r]);
        gpuhist_bin_spec spec;
        CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &s, RULES[r], NULL, &spec, 0, 1), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, want1[r]);
        CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &s, RULES[r], NULL, &spec, 0, 2), GPUHIST_OK);
        CHECK_EQ_INT(spec.bins, 6);
        CHECK_EQ_INT(rule_of(ctx, &s, RULES[r], NULL, &spec), GPUHIST_OK); /* the default: 2 */
        CHECK_EQ_INT(spec.bins, 6);
    }
    /* auto on 500 values within 1e-3 plus -100 and 100: NumPy 1.x takes fd (1583170 bins),
     * NumPy 2 max(fd, sqrt / 2) (45 bins); fd alone is the same in both */
    static double b[502];
    for (int i = 0; i < 500; ++i)
        b[i] = 0.0 + (double)i * (1e-3 / 499.0); /* np.zeros(500) + np.linspace(0, 1e-3, 500) */
    b[500] = -100.0;
    b[501] = 100.0;
    gpuhist_samples sb = gpuhist_samples_1d(b, GPUHIST_F64, 502);
    gpuhist_bin_spec spec;
    check_context("numpy versions: auto's relaxed fd");
    CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sb, "auto", NULL, &spec, 0, 1), GPUHIST_OK);
    CHECK_EQ_INT(spec.bins, 1583170);
    CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sb, "auto", NULL, &spec, 0, 2), GPUHIST_OK);
    CHECK_EQ_INT(spec.bins, 45);
    CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sb, "fd", NULL, &spec, 0, 2), GPUHIST_OK);
    CHECK_EQ_INT(spec.bins, 1583170);
    /* another version is refused, naming the argument */
    CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sb, "fd", NULL, &spec, 0, 3),
                 GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK(contains(gpuhist_last_error(ctx), "numpy_major"));

    /* 20000 values of an LCG (x = (s >> 11) * 2^-53 * 1000 + 1e6, the same in Python gave
     * NumPy's widths): scott's float64 width takes np.std's whole-array sum in NumPy 2 (the last
     * bit differs from NumPy 1.x's blocks of 8192), its float32 width and rice's are float32
     * in NumPy 2; the widths NumPy 1.24.2 and 2.5.2 give (_hist_bin_scott / _rice) */
    {
        enum { NL = 20000 };
        static double xd[NL];
        static float xf[NL];
        uint64_t st = 12345;
        for (int i = 0; i < NL; ++i) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            xd[i] = (double)(st >> 11) * 0x1p-53 * 1000.0 + 1e6;
            xf[i] = (float)xd[i];
        }
        gpuhist_samples sd = gpuhist_samples_1d(xd, GPUHIST_F64, NL);
        gpuhist_samples sf = gpuhist_samples_1d(xf, GPUHIST_F32, NL);
        gpuhist_rule_info info;
        static const struct {
            int f32, major;
            const char *rule;
            double width;
            uint32_t bins;
        } w[] = {
            {0, 1, "scott", 0x1.28fb6d427df99p+5, 27}, {0, 2, "scott", 0x1.28fb6d427df9ap+5, 27},
            {1, 1, "scott", 0x1.28fb6890dab83p+5, 27}, {1, 2, "scott", 0x1.28fb68p+5, 27},
            {1, 1, "rice", 0x1.26b8f710478bep+4, 55},  {1, 2, "rice", 0x1.26b8f6p+4, 55},
        };
        for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
            check_context("numpy versions: %s %s rules %d", w[i].rule, w[i].f32 ? "f32" : "f64",
                          w[i].major);
            CHECK_EQ_INT(gpuhist_bins_rule_info(ctx, w[i].f32 ? &sf : &sd, w[i].rule, NULL, &spec,
                                                0, w[i].major, &info),
                         GPUHIST_OK);
            CHECK_EQ_F64_BITS(info.width, w[i].width);
            CHECK_EQ_INT(spec.bins, w[i].bins);
        }
    }
    /* float32 min == max widened by 0.5: float32 in NumPy 2 (edges -0.4f, 0.6f in both) */
    {
        float c[5] = {0.1f, 0.1f, 0.1f, 0.1f, 0.1f};
        gpuhist_samples sc = gpuhist_samples_1d(c, GPUHIST_F32, 5);
        check_context("numpy versions: f32 min == max");
        CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sc, "sqrt", NULL, &spec, 0, 2), GPUHIST_OK);
        CHECK_EQ_F64_BITS(spec.lower, (double)-0.4f);
        CHECK_EQ_F64_BITS(spec.upper, (double)0.6f);
        CHECK_EQ_INT(gpuhist_bins_rule_numpy(ctx, &sc, "sqrt", NULL, &spec, 0, 1), GPUHIST_OK);
        CHECK_EQ_F64_BITS(spec.lower, (double)0.1f - 0.5);
        CHECK_EQ_F64_BITS(spec.upper, (double)0.1f + 0.5);
    }

    /* NumPy 2's float32 linspace: np.linspace(np.float32(lo), np.float32(hi), 21) */
    check_context("numpy versions: gpuhist_linspace_f32");
    double e[21];
    const double lo = -0x1.40f3bp+3, hi = 0x1.25f7dep+3;
    CHECK_EQ_INT(gpuhist_linspace_f32(20, lo, hi, e), GPUHIST_OK);
    CHECK_EQ_F64_BITS(e[0], lo);
    CHECK_EQ_F64_BITS(e[3], -0x1.c96d82p+2);
    CHECK_EQ_F64_BITS(e[7], -0x1.a6eb5cp+1); /* the double linspace rounds to -0x1.a6eb60p+1 */
    CHECK_EQ_F64_BITS(e[20], hi);
    gpuhist_bin_spec even = gpuhist_bins_even(20, lo, hi);
    CHECK_EQ_INT(gpuhist_compute_edges(&even, GPUHIST_F32, e), GPUHIST_OK);
    CHECK_EQ_F64_BITS(e[7], -0x1.a6eb6p+1);
    CHECK_EQ_INT(gpuhist_linspace_f32(0, lo, hi, e), GPUHIST_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_INT(gpuhist_linspace_f32(4, 1.0, 1.0 + 0x1p-23, e), GPUHIST_ERROR_INVALID_ARGUMENT);
}

/* Random data of every type and layout: the spec counts every kept value; a ROI and an
 * interleaved channel give the spec of the same values stored contiguously. */
static void test_random(gpuhist_ctx *ctx, int cases)
{
    static const gpuhist_dtype types[] = {GPUHIST_U8,  GPUHIST_I8,  GPUHIST_U16, GPUHIST_I16,
                                          GPUHIST_U32, GPUHIST_I32, GPUHIST_U64, GPUHIST_I64,
                                          GPUHIST_F32, GPUHIST_F64};
    for (int c = 0; c < cases; ++c) {
        gpuhist_dtype dt = types[rnd() % 10];
        const char *rule = RULES[rnd() % NRULES];
        size_t size = gpuhist_dtype_size(dt);
        uint64_t n = 1 + rnd() % 3000;
        double scale = pow(10.0, (double)(rnd() % 6));
        unsigned char *flat = malloc(n * size), *inter = malloc(n * size * 3);
        for (uint64_t i = 0; i < n; ++i) {
            double v = rnd_normal() * scale + (rnd() % 4 == 0 ? 50.0 : 0.0);
            unsigned char buf[8];
            switch (dt) {
            case GPUHIST_U8: { uint8_t t = (uint8_t)(int)fabs(fmod(v, 256)); memcpy(buf, &t, 1); break; }
            case GPUHIST_I8: { int8_t t = (int8_t)fmod(v, 128); memcpy(buf, &t, 1); break; }
            case GPUHIST_U16: { uint16_t t = (uint16_t)(int)fabs(fmod(v, 65536)); memcpy(buf, &t, 2); break; }
            case GPUHIST_I16: { int16_t t = (int16_t)fmod(v, 32768); memcpy(buf, &t, 2); break; }
            case GPUHIST_U32: { uint32_t t = (uint32_t)fabs(v); memcpy(buf, &t, 4); break; }
            case GPUHIST_I32: { int32_t t = (int32_t)v; memcpy(buf, &t, 4); break; }
            case GPUHIST_U64: { uint64_t t = (uint64_t)fabs(v); memcpy(buf, &t, 8); break; }
            case GPUHIST_I64: { int64_t t = (int64_t)v; memcpy(buf, &t, 8); break; }
            case GPUHIST_F32: { float t = (float)v; if (rnd() % 50 == 0) t = NAN; memcpy(buf, &t, 4); break; }
            default: { if (rnd() % 50 == 0) v = NAN; memcpy(buf, &v, 8); break; }
            }
            memcpy(flat + i * size, buf, size);
            memset(inter + i * size * 3, 0x55, size * 3);
            memcpy(inter + (i * 3 + 1) * size, buf, size);
        }
        double range[2] = {-scale, scale * 2};
        const double *rp = rnd() % 2 ? range : NULL;
        check_context("random case %d: %s %s n=%llu range=%s", c, gpuhist_dtype_name(dt), rule,
                      (unsigned long long)n, rp ? "yes" : "no");
        gpuhist_samples s = gpuhist_samples_1d(flat, dt, n);
        gpuhist_bin_spec spec, spec2, spec3;
        gpuhist_rule_info info;
        gpuhist_status st = gpuhist_bins_rule_info(ctx, &s, rule, rp, &spec, 0, 0, &info);
        gpuhist_samples si = gpuhist_samples_1d(inter, dt, n);
        si.channels = 3;
        si.channel_mask = 2;
        gpuhist_status st2 = rule_of(ctx, &si, rule, rp, &spec2);
        /* the same pixels as a region of interest of n/r rows (plus the rest contiguously) */
        CHECK_EQ_INT(st2, st);
        if (st != GPUHIST_OK) {
            /* only the rule's own figures may refuse random data (too many bins) */
            CHECK(contains(gpuhist_last_error(ctx), "allowed") ||
                  contains(gpuhist_last_error(ctx), "below 1"));
            free(flat);
            free(inter);
            continue;
        }
        CHECK_EQ_INT(spec2.bins, spec.bins);
        CHECK_EQ_F64_BITS(spec2.lower, spec.lower);
        CHECK_EQ_F64_BITS(spec2.upper, spec.upper);
        if (n % 3 == 0) {
            gpuhist_samples sr = gpuhist_samples_1d(inter, dt, 0);
            sr.channels = 3;
            sr.channel_mask = 2;
            sr.rows = 3;
            sr.row_length = n / 3;
            sr.row_stride = (size_t)(n / 3) * size * 3;
            CHECK_EQ_INT(rule_of(ctx, &sr, rule, rp, &spec3), GPUHIST_OK);
            CHECK_EQ_INT(spec3.bins, spec.bins);
        }
        /* the spec histograms every kept value */
        uint64_t *counts = calloc(spec.bins, sizeof *counts);
        gpuhist_result r = gpuhist_result_host(counts);
        CHECK_EQ_INT(gpuhist_histogram(ctx, &s, &spec, &r), GPUHIST_OK);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < spec.bins; ++i)
            sum += counts[i];
        if (dt != GPUHIST_I64 && dt != GPUHIST_U64) /* (exact vs NumPy's float64 compare) */
            CHECK_EQ_U64(sum, info.count);
        free(counts);
        free(flat);
        free(inter);
    }
}

int main(int argc, char **argv)
{
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--batch") == 0)
        return batch(argv[2], argv[3], argc == 5 ? atoi(argv[4]) : 2);
    const char *seed_env = getenv("GPUHIST_TEST_SEED");
    rng_state = seed_env ? strtoull(seed_env, NULL, 0) : 20240611ull;
    printf("test_bin_rules: seed %llu (GPUHIST_TEST_SEED)\n", (unsigned long long)rng_state);
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "no CPU context\n");
        return 1;
    }
    test_refusals(ctx);
    test_known(ctx);
    test_numpy_versions(ctx);
    test_random(ctx, 400);
    gpuhist_destroy(ctx);
    return check_exit();
}
