/*
 * test_fast_even.c - the fast EVEN certificate (src/core/fast_even.h/.c) against binmap.h,
 * near-exhaustively: for many random specs (f32 edges - the double edges rounded, or NumPy 2's
 * float32 linspace on half of the f32 specs, its edges checked against gpuhist_linspace_f32 - and
 * f64 edges, ranges from [0, 1) to subnormal
 * widths and offsets of 10^6, 1 to 70000 bins, both last-edge rules), every float/double within
 * 3 ulps of every edge, random and special samples, through every form a fast path uses: the
 * host test, an emulation of the CUDA test (its round-down add by fesetround), the direct and
 * symmetric forms, the one-edge rule with and without the edge table, the CPU's neighbour rule
 * and direct form, in both domains. A second pass certifies and runs with flush-to-zero and
 * denormals-are-zero set (x86: what a host built with -ffast-math or a DAZ device would do).
 * Every answer must be binmap.h's slot.
 *
 * Seed: GPUHIST_TEST_SEED (fixed by default, printed; "random" for a new one); specs per pass:
 * GPUHIST_FAST_EVEN_SPECS (default 2000, a few seconds); FE_BIG=1 adds specs of 2^20 .. 2^24 bins.
 */
#define _POSIX_C_SOURCE 200809L
#include "fast_even.h"
#include "gpuhist.h"
#include <fenv.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HAVE_CSR 1
#else
#define HAVE_CSR 0
#define _mm_getcsr() 0u
#define _mm_setcsr(x) ((void)(x))
#endif
static int ftz_cert, ftz_run;

static long long nchk, npass_test, npass_sym, npass_test64, nfail;
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static double runif(void) { return (rnd() >> 11) * 0x1p-53; }

/* The map plan.c makes of an EVEN spec; lin: f32 edges are NumPy 2's float32 linspace
 * (float32_linspace), checked here against gpuhist_linspace_f32. @return 0 when the plan refuses
 * the spec (edges that do not increase). */
static int make_map(gpuhist_binmap *m, double lower, double upper, uint32_t bins, int f32, int li,
                    int lin)
{
    if (lin) {
        lower = (double)(float)lower;
        upper = (double)(float)upper;
    }
    memset(m, 0, sizeof *m);
    m->kind = GH_KIND_EVEN; m->dtype = f32 ? GH_DT_F32 : GH_DT_F64; m->bins = bins;
    m->last_inclusive = li; m->edge_is_f32 = f32;
    m->lower = lower; m->upper = upper; m->delta = upper - lower;
    m->step = m->delta / (double)bins; m->step_is_zero = m->step == 0.0;
    m->scale = (double)bins / m->delta;
    m->lower_f = (float)lower; m->upper_f = (float)upper; m->scale_f = (float)m->scale;
    if (lin) {
        m->edge_linspace_f32 = 1;
        m->delta_f = m->upper_f - m->lower_f;
        m->step_f = m->delta_f / (float)bins;
        m->step_is_zero = m->step_f == 0.0f;
    }
    if (!(lower < upper) || !isfinite(m->delta)) return 0;
    if (f32 && (!isfinite(m->lower_f) || !isfinite(m->upper_f))) return 0;
    int increase = 1;
    double prev = gpuhist_reported_edge(m, NULL, 0);
    for (uint32_t i = 1; i <= bins && increase; ++i) { double e = gpuhist_reported_edge(m, NULL, i); if (!(e > prev)) increase = 0; prev = e; }
    if (lin) { /* binmap.h's float32 linspace is gpuhist_linspace_f32's (bin_rules.c's own code) */
        double *want = malloc(((size_t)bins + 1) * sizeof *want);
        int ok = want && gpuhist_linspace_f32(bins, lower, upper, want) == GPUHIST_OK;
        if (ok != increase) { printf("FAIL gpuhist_linspace_f32 %s [%a, %a) bins %u\n", ok ? "accepts" : "refuses", lower, upper, bins); ++nfail; }
        for (uint32_t i = 0; ok && increase && i <= bins; ++i) {
            double e = gpuhist_reported_edge(m, NULL, i);
            if (memcmp(&e, &want[i], sizeof e) != 0) { printf("FAIL linspace edge %u of [%a, %a) bins %u: %a, gpuhist_linspace_f32 %a\n", i, lower, upper, bins, e, want[i]); ++nfail; break; }
        }
        free(want);
    }
    return increase;
}

/* CUDA's gpuhist_fe_key_f32 / _sym, emulated: add.rm by the rounding mode */
static uint32_t dev_key(float x, const gpuhist_binmap *m, float tlo, float thi, int cut, float h, int sym, int *ok)
{
    volatile float t = x - m->lower_f; volatile float f = t * m->scale_f;
    fesetround(FE_DOWNWARD); volatile float r = f + 8388608.0f; fesetround(FE_TONEAREST);
    uint32_t b; float rr = r; memcpy(&b, &rr, 4); uint32_t key = b - 0x4B000000u;
    if (sym) { volatile float q = rr - 8388607.5f; volatile float d = f - q; *ok = key < m->bins && fabsf(d) < h; return key; }
    int good = key < m->bins;
    if (cut) { volatile float q = rr - 8388608.0f; volatile float fr = f - q; good = good && fr > tlo && fr < thi; }
    *ok = good; return key;
}

/* CUDA's gpuhist_fe_key_f64, emulated: __dadd_rd by the rounding mode, the words of r */
static uint32_t dev_key64(double x, const gpuhist_binmap *m, double tlo, double thi, int cut, int *ok)
{
    volatile double t = x - m->lower; volatile double f = t * m->scale;
    fesetround(FE_DOWNWARD); volatile double r = f + 4503599627370496.0; fesetround(FE_TONEAREST);
    uint64_t b; double rr = r; memcpy(&b, &rr, 8);
    uint32_t key = (uint32_t)b;
    int good = (uint32_t)(b >> 32) == 0x43300000u && key < m->bins;
    if (cut) { volatile double q = rr - 4503599627370496.0; volatile double fr = f - q; good = good && fr > tlo && fr < thi; }
    *ok = good; return key;
}

static void fail(const char *what, const gpuhist_binmap *m, double x, uint32_t got, uint32_t want)
{
    if (nfail++ < 20)
        printf("FAIL %s: [%.17g, %.17g) bins %u f32 %d lin %d li %d x %.17g (%a) got %u want %u\n", what, m->lower, m->upper, m->bins, m->edge_is_f32, m->edge_linspace_f32, m->last_inclusive, x, x, got, want);
}

static void check_f32(const gpuhist_binmap *m, const gpuhist_fe_cert *c, const float *tab, float x)
{
    uint32_t ref = gpuhist_slot_even_f32(m, x);
    int ok; uint32_t k;
    ++nchk;
    k = gpuhist_fe_key_f32(x, m->lower_f, m->scale_f, m->bins, c->t_lo_f, c->t_hi_f, 1, &ok);
    if (ok) { ++npass_test; if (k != ref) fail("host test", m, x, k, ref); }
    if (ftz_run) goto host_only;
    int okd; uint32_t kd = dev_key(x, m, c->t_lo_f, c->t_hi_f, 1, 0, 0, &okd);
    if (okd != ok) fail("device/host test differ", m, x, okd, ok);
    if (okd && kd != ref) fail("device test", m, x, kd, ref);
    if (c->direct) {
        k = gpuhist_fe_key_f32(x, m->lower_f, m->scale_f, m->bins, 0, 0, 0, &ok);
        if (ok && k != ref) fail("host direct", m, x, k, ref);
        kd = dev_key(x, m, 0, 0, 0, 0, 0, &okd);
        if (okd && kd != ref) fail("device direct", m, x, kd, ref);
        if (okd != ok) fail("device/host direct differ", m, x, okd, ok);
    }
    if (c->h_f > 0) {
        k = gpuhist_fe_key_sym_f32(x, m->lower_f, m->scale_f, m->bins, c->h_f, &ok);
        if (ok) { ++npass_sym; if (k != ref) fail("host sym", m, x, k, ref); }
        kd = dev_key(x, m, 0, 0, 0, c->h_f, 1, &okd);
        if (okd && kd != ref) fail("device sym", m, x, kd, ref);
        if (okd != ok) fail("device/host sym differ", m, x, okd, ok);
    }
host_only:
    k = gpuhist_fe_slot_f32(m, c, x);
    if (k != ref) fail("slot", m, x, k, ref);
    if (c->ok) {
        k = gpuhist_fe_fix_f32(m, c->t_lo_f, 0, x);
        if (k != ref) fail("fix", m, x, k, ref);
        if (c->direct) {
            int okd2; uint32_t kd2 = dev_key(x, m, 0, 0, 0, 0, 0, &okd2);
            uint32_t k2 = okd2 ? kd2 : gpuhist_fe_fix_f32(m, c->t_lo_f, 1, x);
            if (k2 != ref) fail("direct + fix", m, x, k2, ref);
        }
        if (x >= m->lower_f && x < m->upper_f) {
            float f = gpuhist_fe_estimate_f32(x, m->lower_f, m->scale_f);
            uint32_t j = gpuhist_fe_pivot_f32(f, m->bins, c->t_lo_f);
            k = j - 1u + (x >= tab[j]);
            if (k != ref) fail("pivot table", m, x, k, ref);
            if (c->direct) { uint32_t d = f < (float)m->bins ? (uint32_t)f : m->bins - 1u; d = d < m->bins ? d : m->bins - 1u; if (d != ref) fail("cpu direct", m, x, d, ref); }
        }
    }
}

static void check_f64(const gpuhist_binmap *m, const gpuhist_fe_cert *c, const double *tab, double x)
{
    uint32_t ref = gpuhist_slot_even_f64(m, x);
    ++nchk;
    uint32_t k;
    /* fast_even.h's double-domain test, slot and fix (any x: NaN, infinities, out of range) */
    {
        int ok, okd;
        k = gpuhist_fe_key_f64(x, m->lower, m->scale, m->bins, c->t_lo, c->t_hi, 1, &ok);
        if (ok) { ++npass_test64; if (k != ref) fail("host test64", m, x, k, ref); }
        if (!ftz_run) {
            uint32_t kd = dev_key64(x, m, c->t_lo, c->t_hi, 1, &okd);
            if (okd != ok) fail("device/host test64 differ", m, x, okd, ok);
            if (okd && kd != ref) fail("device test64", m, x, kd, ref);
        }
        if (c->direct) {
            k = gpuhist_fe_key_f64(x, m->lower, m->scale, m->bins, 0, 0, 0, &ok);
            if (ok && k != ref) fail("host direct64", m, x, k, ref);
            if (!ftz_run) {
                uint32_t kd = dev_key64(x, m, 0, 0, 0, &okd);
                if (okd && kd != ref) fail("device direct64", m, x, kd, ref);
                if (okd != ok) fail("device/host direct64 differ", m, x, okd, ok);
                uint32_t k2 = okd ? kd : gpuhist_fe_fix_f64(m, c->t_lo, 1, x);
                if (k2 != ref) fail("direct64 + fix", m, x, k2, ref);
            }
        }
        k = gpuhist_fe_slot_f64(m, c, x);
        if (k != ref) fail("slot64", m, x, k, ref);
        if (c->ok) {
            k = gpuhist_fe_fix_f64(m, c->t_lo, 0, x);
            if (k != ref) fail("fix64", m, x, k, ref);
        }
    }
    if (c->ok && x >= m->lower && x < m->upper) {
        double f = gpuhist_fe_estimate_f64(x, m->lower, m->scale);
        uint32_t jp = gpuhist_fe_pivot_f64(f, m->bins, c->t_lo);
        if (jp - 1u + (x >= tab[jp]) != ref) fail("pivot64 (fast_even.h) table", m, x, jp - 1u + (x >= tab[jp]), ref);
        uint32_t key = f < (double)m->bins ? (uint32_t)f : m->bins;
        double fr = f - (double)key;
        /* the one-edge rule in the double domain */
        uint32_t j = key + (fr > c->t_lo ? 1u : 0u);
        j = j < m->bins ? j : m->bins;
        k = j - 1u + (x >= tab[j]);
        if (k != ref) fail("pivot64 table", m, x, k, ref);
        /* the neighbour rule (cpu-serial): k' = min(key, bins - 1), then E[k'] and E[k'+1] */
        uint32_t kk = key < m->bins ? key : m->bins - 1u;
        uint32_t nb = x < tab[kk] ? kk - 1u : (kk + 1u < m->bins && x >= tab[kk + 1u]) ? kk + 1u : kk;
        if (nb != ref) fail("neighbour64", m, x, nb, ref);
        if (key < m->bins && fr > c->t_lo && fr < c->t_hi) { ++npass_test; if (key != ref) fail("test64", m, x, key, ref); }
        if (c->direct) { uint32_t d = key < m->bins ? key : m->bins - 1u; if (d != ref) fail("cpu direct64", m, x, d, ref); }
    }
}

static double pick_bound(int style, double *lo, double *hi)
{
    switch (style) {
    case 0: *lo = 0; *hi = 1; break;
    case 1: *lo = (runif() - 0.5) * 20; *hi = *lo + runif() * 30 + 1e-3; break;
    case 2: *lo = (runif() - 0.5) * pow(10, (int)(rnd() % 12)); *hi = *lo + pow(10, (double)(int)(rnd() % 14) - 6) * (0.5 + runif()); break;
    case 3: *lo = -runif() * 1000; *hi = runif() * 1000; break;
    case 4: *lo = ldexp(runif(), -(int)(rnd() % 140)); *hi = *lo + ldexp(runif() + 0.01, -(int)(rnd() % 140)); if (rnd() % 2) { double t = -*hi; *hi = -*lo; *lo = t; } break;
    case 5: *lo = (double)(int64_t)(rnd() % 2000000) - 1000000; *hi = *lo + (double)(rnd() % 100000 + 1); break;
    default: *lo = -1; *hi = 1; break;
    }
    return 0;
}

/* CUDA's gpuhist_fe_key_f32_wide, emulated: floor by conversion (F2I.FLOOR saturates: 0 for
 * f < 0 and NaN, which then fail f >= 0) */
static uint32_t dev_key_wide(float x, const gpuhist_binmap *m, float tlo, float thi, int cut, int *ok)
{
    volatile float t = x - m->lower_f; volatile float f = t * m->scale_f;
    uint32_t key = f >= 0.0f ? (f >= 4294967296.0f ? 0xFFFFFFFFu : (uint32_t)floorf(f)) : 0u;
    int good = f >= 0.0f && key < m->bins;
    if (cut) { volatile float q = (float)key; volatile float fr = f - q; good = good && fr > tlo && fr < thi; }
    *ok = good; return key;
}

/* Wide certificates (f32, 2^23 < bins <= 2^24): every sample within K ulps of every `stride`-th
 * edge and of the first and last 3000, random and special samples, through the wide key's host
 * form, its CUDA emulation (cut and, when direct, direct) and the one-edge rule. `must`: the
 * spec must be certified (the benchmark's [0, 1) with 2^24 bins). */
static int check_wide(double lo, double hi, uint32_t bins, int li, uint32_t stride, int must,
                      int lin)
{
    gpuhist_binmap m;
    if (!make_map(&m, lo, hi, bins, 1, li, lin)) {
        printf("wide spec [%g, %g) bins %u lin %d: refused by the plan\n", lo, hi, bins, lin);
        return must;
    }
    gpuhist_fe_cert c;
    gpuhist_fe_certify_f32_wide(&m, &c);
    printf("wide spec [%g, %g) bins %u li %d lin %d: ok %d direct %d t_lo %g t_hi %g\n", lo, hi, bins, li, lin, c.ok, c.direct, c.t_lo, c.t_hi);
    if (!c.ok)
        return must;
    long long n = 0, pass = 0, bad = 0;
    gpuhist_fe_cert narrow;
    gpuhist_fe_certify(&m, &narrow);
    if (narrow.ok) { printf("FAIL the narrow certificate took %u bins\n", bins); ++bad; }
    for (uint32_t i = 0; i <= bins; ++i) {
        if (i > 3000 && i + 3000 < bins && i % stride) continue;
        float x = gpuhist_even_edge_f32(&m, i);
        for (int q = 0; q < 3; ++q) x = nextafterf(x, -INFINITY);
        for (int q = -3; q <= 3; ++q, x = nextafterf(x, INFINITY)) {
            for (int rep = 0; rep < 2; ++rep) {
                float y = rep ? (float)(lo + (hi - lo) * (runif() * 1.2 - 0.1)) : x;
                uint32_t ref = gpuhist_slot_even_f32(&m, y);
                int ok, okd; ++n;
                uint32_t k = gpuhist_fe_key_f32_wide(y, m.lower_f, m.scale_f, bins, c.t_lo_f, c.t_hi_f, 1, &ok);
                uint32_t kd = dev_key_wide(y, &m, c.t_lo_f, c.t_hi_f, 1, &okd);
                if (ok) { ++pass; if (k != ref) { fail("wide host test", &m, y, k, ref); ++bad; } }
                if (okd && kd != ref) { fail("wide device test", &m, y, kd, ref); ++bad; }
                if (ok != okd) { fail("wide device/host differ", &m, y, okd, ok); ++bad; }
                uint32_t kf = okd ? kd : gpuhist_fe_fix_f32(&m, c.t_lo_f, 0, y);
                if (kf != ref) { fail("wide test + fix", &m, y, kf, ref); ++bad; }
                if (c.direct) {
                    kd = dev_key_wide(y, &m, 0, 0, 0, &okd);
                    kf = okd ? kd : gpuhist_fe_fix_f32(&m, c.t_lo_f, 1, y);
                    if (kf != ref) { fail("wide direct + fix", &m, y, kf, ref); ++bad; }
                }
            }
        }
    }
    static const uint32_t sp[] = {0x7fc00000u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0x80000000u, 0, 1, 0x80000001u, 0x7f7fffffu, 0xff7fffffu, 0x4b800000u, 0x4b7fffffu};
    for (unsigned q = 0; q < sizeof sp / 4; ++q) {
        float y; memcpy(&y, &sp[q], 4);
        uint32_t ref = gpuhist_slot_even_f32(&m, y);
        int okd; uint32_t kd = dev_key_wide(y, &m, c.t_lo_f, c.t_hi_f, 1, &okd);
        uint32_t kf = okd ? kd : gpuhist_fe_fix_f32(&m, c.t_lo_f, 0, y);
        ++n;
        if (kf != ref) { fail("wide special", &m, y, kf, ref); ++bad; }
    }
    printf("  samples %lld, passed the wide test %lld (%.2f%%), failures %lld\n", n, pass, 100.0 * pass / (n ? n : 1), bad);
    nfail += bad;
    return bad != 0;
}

static int run_pass(int specs, int K);

int main(void)
{
    const char *e = getenv("GPUHIST_TEST_SEED");
    uint64_t seed = 20261125;
    if (e && strcmp(e, "random") == 0)
        seed = (uint64_t)time(NULL);
    else if (e && *e)
        seed = strtoull(e, NULL, 10);
    rs = seed * 2654435761u + 88172645463325252ull;
    e = getenv("GPUHIST_FAST_EVEN_SPECS");
    int specs = e && *e ? atoi(e) : 2000;
    printf("fast_even test: seed %" PRIu64 " (GPUHIST_TEST_SEED; \"random\" for a new one), %d specs a pass\n",
           seed, specs);
    int bad = run_pass(specs, 3);
    /* wide certificates: the benchmark's cell and offset, narrow-band and inclusive specs */
    nfail = 0;
    for (int lin = 0; lin <= 1; ++lin) { /* the double edges rounded, NumPy 2's linspace */
        bad |= check_wide(0, 1, 1u << 24, 0, 4099, 1, lin);
        bad |= check_wide(0, 1, 1u << 24, 1, 4099, 0, lin);
        bad |= check_wide(-3.7, 12.9, (1u << 24) - 5, 0, 4099, 0, lin);
        bad |= check_wide(0, 16, (1u << 23) + 1, 1, 4099, 0, lin);
        bad |= check_wide(1000, 1001, 1u << 24, 0, 4099, 0, lin);
        bad |= check_wide(-1, 1, 12345679, 0, 4099, 0, lin);
    }
    if (HAVE_CSR) { /* certificates and samples under FTZ/DAZ */
        ftz_cert = ftz_run = 1;
        bad |= run_pass(specs / 4 + 1, 3);
    }
    return bad;
}

static int run_pass(int specs, int K)
{
    nchk = npass_test = npass_sym = npass_test64 = nfail = 0;
    long nok = 0, ndirect = 0, nspec = 0, nlin = 0, nlin_ok = 0;
    double tcert = 0;
    static const struct { double lo, hi; uint32_t b; int f32, lin; } big[] = {
        {0, 1, 1u << 20, 1, 0}, {0.1, 0.9, 1u << 20, 1, 0}, {-3.7, 12.9, (1u << 22) + 7, 1, 0}, {0, 10, 1u << 23, 1, 0},
        {-1000, 1000, (1u << 23) - 3, 1, 0}, {0, 1, 1u << 24, 0, 0}, {-3.7, 12.9, (1u << 24) - 5, 0, 0}, {1e6, 1e6 + 1, 1u << 20, 0, 0},
        {0, 1, 1u << 20, 1, 1}, {0.1, 0.9, 1u << 20, 1, 1}, {-3.7, 12.9, (1u << 22) + 7, 1, 1}, {-1000, 1000, (1u << 23) - 3, 1, 1}};
    int nbig = getenv("FE_BIG") ? (int)(sizeof big / sizeof big[0]) : 0;
    for (int s = -nbig; s < specs; ++s) {
        int f32 = s % 2 == 0;
        int lin = s % 4 == 0; /* half the f32 specs: NumPy 2's float32 linspace */
        double lo, hi; pick_bound((int)(rnd() % 7), &lo, &hi);
        uint32_t bins;
        int r = (int)(rnd() % 10);
        if (r < 4) bins = 1u + (uint32_t)(rnd() % 300);
        else if (r < 7) bins = 1u + (uint32_t)(rnd() % 5000);
        else if (r < 9) bins = 1u << (rnd() % 17);
        else bins = 1u + (uint32_t)(rnd() % 70000);
        if (s < 0) { lo = big[s + nbig].lo; hi = big[s + nbig].hi; bins = big[s + nbig].b; f32 = big[s + nbig].f32; lin = big[s + nbig].lin; }
        gpuhist_binmap m;
        if (!make_map(&m, lo, hi, bins, f32, (int)(rnd() % 2), lin)) { if (s < 0) printf("big spec %d refused by the plan\n", s + nbig); continue; }
        ++nspec;
        gpuhist_fe_cert c;
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        unsigned csr = _mm_getcsr();
        if (ftz_cert) _mm_setcsr(csr | 0x8040);
        gpuhist_fe_certify(&m, &c);
        _mm_setcsr(csr);
        { gpuhist_fe_cert c2; gpuhist_fe_certify(&m, &c2);
          if (c2.ok != c.ok || c2.t_lo != c.t_lo || c2.t_hi != c.t_hi || c2.direct != c.direct)
            printf("note: the certificate under FTZ/DAZ differs (allowed: each is checked against its own run): [%a, %a) bins %u f32 %d: ftz ok %d direct %d t %a %a / ieee ok %d direct %d t %a %a\n", lo, hi, bins, f32, c.ok, c.direct, c.t_lo, c.t_hi, c2.ok, c2.direct, c2.t_lo, c2.t_hi); }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        tcert += (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
        nok += c.ok; ndirect += c.direct;
        nlin += lin; nlin_ok += lin && c.ok;
        if (s < 0) printf("big spec [%g, %g) bins %u f32 %d lin %d: ok %d direct %d t_lo %g t_hi %g h %g\n", lo, hi, bins, f32, lin, c.ok, c.direct, c.t_lo, c.t_hi, c.h_f);
        if (ftz_run) _mm_setcsr(csr | 0x8040);
        if (f32) {
            float *tab = malloc((bins + 1) * sizeof *tab);
            for (uint32_t i = 0; i <= bins; ++i) tab[i] = gpuhist_even_edge_f32(&m, i);
            for (uint32_t i = 0; i <= bins; ++i) {
                float x = tab[i];
                for (int q = 0; q < K; ++q) x = nextafterf(x, -INFINITY);
                for (int q = -K; q <= K; ++q, x = nextafterf(x, INFINITY)) check_f32(&m, &c, tab, x);
            }
            for (int q = 0; q < 2000; ++q) { float x = (float)(lo + (hi - lo) * (runif() * 1.2 - 0.1)); check_f32(&m, &c, tab, x); }
            static const uint32_t sp[] = {0x7fc00000u, 0xffc00000u, 0x7f800000u, 0xff800000u, 0x80000000u, 0, 1, 0x80000001u, 0x007fffffu, 0x7f7fffffu, 0xff7fffffu, 0x00800000u};
            for (unsigned q = 0; q < sizeof sp / 4; ++q) { float x; memcpy(&x, &sp[q], 4); check_f32(&m, &c, tab, x); }
            for (int q = 0; q < 200; ++q) { uint32_t u = (uint32_t)rnd(); float x; memcpy(&x, &u, 4); check_f32(&m, &c, tab, x); }
            free(tab);
            _mm_setcsr(csr);
        } else {
            double *tab = malloc((bins + 1) * sizeof *tab);
            for (uint32_t i = 0; i <= bins; ++i) tab[i] = gpuhist_even_edge_f64(&m, i);
            for (uint32_t i = 0; i <= bins; ++i) {
                double x = tab[i];
                for (int q = 0; q < K; ++q) x = nextafter(x, -INFINITY);
                for (int q = -K; q <= K; ++q, x = nextafter(x, INFINITY)) check_f64(&m, &c, tab, x);
                double fl = floor(tab[i]);
                for (int q = -1; q <= 2; ++q) check_f64(&m, &c, tab, fl + q);
            }
            for (int q = 0; q < 2000; ++q) { double x = lo + (hi - lo) * (runif() * 1.2 - 0.1); check_f64(&m, &c, tab, x); check_f64(&m, &c, tab, floor(x)); }
            static const uint64_t sp64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull, 0x8000000000000000ull, 0, 1, 0x8000000000000001ull, 0x000fffffffffffffull, 0x7fefffffffffffffull, 0xffefffffffffffffull, 0x0010000000000000ull, 0x4330000000000000ull, 0xc330000000000000ull, 0x41f0000000000000ull};
            for (unsigned q = 0; q < sizeof sp64 / 8; ++q) { double x; memcpy(&x, &sp64[q], 8); check_f64(&m, &c, tab, x); }
            for (int q = 0; q < 200; ++q) { uint64_t u = rnd(); double x; memcpy(&x, &u, 8); check_f64(&m, &c, tab, x); }
            /* samples whose estimate lands near 2^32 and 2^52 (the device key's word test) */
            for (int q = 0; q < 8; ++q) { double x = m.lower + ldexp(1.0, 30 + 4 * q) / m.scale; check_f64(&m, &c, tab, x); check_f64(&m, &c, tab, nextafter(x, INFINITY)); check_f64(&m, &c, tab, nextafter(x, -INFINITY)); }
            free(tab);
            _mm_setcsr(csr);
        }
    }
    printf("float32 linspace specs %ld, certified %ld\n", nlin, nlin_ok);
    printf("specs %ld certified %ld direct %ld; samples %lld, passed test %lld (%.2f%%), sym %lld, double test %lld; failures %lld; cert time %.3f s\n",
           nspec, nok, ndirect, nchk, npass_test, 100.0 * npass_test / (nchk ? nchk : 1), npass_sym, npass_test64, nfail, tcert);
    return nfail != 0;
}
