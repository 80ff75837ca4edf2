/*
 * test_half_pairs.c - the exhaustive certificate of half-precision slots (src/core/half_pairs.h
 * and .c, used by cuda-half-pairs) on the host.
 *
 * For f16 and bf16 and a list of EVEN specs (256, 255, 128, 100, 10, 7 and 1 bins over [0, 1),
 * [-3, 5), [-1, 1] and [0, 1] with the last edge inclusive, [1000, 1010], a float16 range
 * beyond 65504, and a few more), each certified estimate is replayed on all 65536 bit patterns
 * and every
 * answer compared with a recount written here: each pattern widened by half_test.h (frexp
 * arithmetic, not the library's bit decoding), compared with the spec's reported edges
 * (binmap.h's gpuhist_reported_edge) by the rule of docs/SEMANTICS.md. Specs whose edges are
 * exact in the half type (a power-of-two step over [0, 1) and [-3, 5), one bin) must certify;
 * which others do is printed. Then the certificate must refuse deliberately wrong estimates
 * (the offset moved by 3/4 of a bin; the underflow clamp moved onto the first edge; a spec of
 * another bin count; the float16 estimate given to bf16 data), and the certificate computed
 * with flush-to-zero and denormals-are-zero set (x86) must be the same as without, as must the
 * cached one. Deterministic: no random input.
 */
#include "half_pairs.h"
#include "internal.h"

#include "check.h"
#include "half_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#else
#define HAVE_MXCSR 0
#endif

static int make_map(gpuhist_binmap *m, gpuhist_dtype dt, uint32_t bins, double lo, double hi,
                    int last_inclusive)
{
    gpuhist_bin_spec b = gpuhist_bins_even(bins, lo, hi);
    gpuhist_binmap_of(&b, dt, lo, hi, last_inclusive, m);
    double prev = gpuhist_reported_edge(m, NULL, 0);
    for (uint32_t i = 1; i <= bins; ++i) { /* plan.c refuses edges that do not increase */
        const double e = gpuhist_reported_edge(m, NULL, i);
        if (!(e > prev))
            return 0;
        prev = e;
    }
    return 1;
}

/* The slot of pattern h under m, recounted from the reported edges. */
static uint32_t recount_slot(const gpuhist_binmap *m, int bf16, uint16_t h)
{
    const double x = bf16 ? test_bf16_value(h) : test_f16_value(h);
    const uint32_t n = m->bins;
    if (x != x)
        return GPUHIST_SLOT_NAN(n);
    if (x < gpuhist_reported_edge(m, NULL, 0))
        return GPUHIST_SLOT_UNDERFLOW(n);
    const double last = gpuhist_reported_edge(m, NULL, n);
    if (x > last || (x == last && !m->last_inclusive))
        return GPUHIST_SLOT_OVERFLOW(n);
    uint32_t lo = 0, hi = n; /* edge[lo] <= x; bin = the last i < n with edge[i] <= x */
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (x >= gpuhist_reported_edge(m, NULL, mid))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Every pattern: the estimate's code is the recounted slot's. */
static void check_all(const gpuhist_binmap *m, const gpuhist_hp_est *e, const char *what)
{
    size_t bad = 0;
    for (uint32_t h = 0; h < 65536u; ++h) {
        const int32_t code = gpuhist_hp_replay(e, h);
        const uint32_t want = recount_slot(m, e->bf16, (uint16_t)h);
        const uint32_t got = code >= 0 && (uint32_t)code < e->codes
                                 ? gpuhist_hp_slot_of_code((uint32_t)code, m->bins)
                                 : 0xFFFFFFFFu;
        if (got != want && bad++ < 3)
            CHECK_MSG(0, "%s: pattern 0x%04x: code %d (slot %u), recount slot %u", what, h,
                      (int)code, got, want);
    }
    CHECK_MSG(bad == 0, "%s: %zu patterns disagree", what, bad);
}

typedef struct {
    uint32_t bins;
    double lo, hi;
    int last_inclusive;
    int must; /* edges exact in both half types: must certify */
} spec;

static const spec specs[] = {
    {256, 0.0, 1.0, 0, 1},      {128, 0.0, 1.0, 0, 1},     {1, 0.0, 1.0, 0, 1},
    {256, -3.0, 5.0, 0, 1},     {1, -3.0, 5.0, 0, 1},      {8, -3.0, 5.0, 0, 1},
    {255, 0.0, 1.0, 0, 0},      {100, 0.0, 1.0, 0, 0},     {7, 0.0, 1.0, 0, 0},
    {10, 0.0, 1.0, 0, 0},       {255, -3.0, 5.0, 0, 0},    {100, -3.0, 5.0, 0, 0},
    {7, -3.0, 5.0, 0, 0},       {256, -1.0, 1.0, 1, 1},    {10, -1.0, 1.0, 1, 0},
    {256, 0.0, 1.0, 1, 1},
    {5, 1000.0, 1010.0, 0, 0},  {256, 0.1, 0.2, 0, 0},     {200, -70000.0, 70000.0, 0, 0},
    {256, 0.0, 1e-3, 0, 0},     {3, -1e-6, 1e-6, 0, 0},
};

static void case_specs(int *certified, int *tried)
{
    for (int bf = 0; bf < 2; ++bf) {
        const gpuhist_dtype dt = bf ? GPUHIST_BF16 : GPUHIST_F16;
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
            const spec *s = &specs[i];
            char what[160];
            snprintf(what, sizeof what, "%s %u even [%g, %g%s", bf ? "bf16" : "f16", s->bins,
                     s->lo, s->hi, s->last_inclusive ? "]" : ")");
            check_context("%s", what);
            gpuhist_binmap m;
            if (!make_map(&m, dt, s->bins, s->lo, s->hi, s->last_inclusive)) {
                printf("%-32s  refused by the plan's edge check\n", what);
                continue;
            }
            gpuhist_hp_est e;
            gpuhist_hp_certify(&m, &e);
            ++*tried;
            printf("%-32s  %s (s %a, k %a, c %a, clamp 0x%04x..0x%04x)\n", what,
                   e.ok ? "certified" : "refused", (double)e.s, (double)e.k, (double)e.c,
                   e.lo2 & 0xFFFFu, e.hi2 & 0xFFFFu);
            if (s->must)
                CHECK_MSG(e.ok, "%s: expected to certify (edges exact in the half type)", what);
            if (!e.ok)
                continue;
            ++*certified;
            check_all(&m, &e, what);
            CHECK_EQ_INT(gpuhist_hp_check(&m, &e), 1);
            /* the cached certificate is the same */
            gpuhist_hp_est c;
            gpuhist_hp_cert_of(&m, &c);
            CHECK(memcmp(&c, &e, sizeof c) == 0);
        }
    }
}

/* Deliberately wrong estimates must be refused. */
static void case_refuse(void)
{
    for (int bf = 0; bf < 2; ++bf) {
        const gpuhist_dtype dt = bf ? GPUHIST_BF16 : GPUHIST_F16;
        check_context("refuse %s", bf ? "bf16" : "f16");
        gpuhist_binmap m;
        CHECK(make_map(&m, dt, 256, 0.0, 1.0, 0));
        gpuhist_hp_est e;
        gpuhist_hp_certify(&m, &e);
        if (!CHECK(e.ok))
            continue;
        gpuhist_hp_est w = e;
        w.c += 0.75f; /* every code moved by 3/4 of a bin: many samples one bin off */
        CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        w = e;
        w.c -= 0x1p-6f; /* a 64th of a bin: only the samples next to an edge move */
        CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        w = e;
        w.lo2 = 0u; /* the clamp lifts every negative value (underflow) to 0.0 (bin 0) */
        CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        w = e;
        w.hi2 = (bf ? 0x7F80u : 0x7C00u) * 0x10001u; /* no upper clamp: +inf's estimate */
        CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        w = e;
        w.bf16 = !bf; /* the other type's estimate */
        CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        /* an inclusive last edge without its step 6 (1.0 counted as overflow), and step 6 on a
         * half-open spec (1.0 counted in the last bin) */
        gpuhist_binmap mi;
        CHECK(make_map(&mi, dt, 256, 0.0, 1.0, 1));
        gpuhist_hp_certify(&mi, &w);
        if (CHECK(w.ok && w.li)) {
            w.li = 0;
            CHECK_EQ_INT(gpuhist_hp_check(&mi, &w), 0);
            w.li = 1;
            CHECK_EQ_INT(gpuhist_hp_check(&m, &w), 0);
        }
        gpuhist_binmap m2;
        CHECK(make_map(&m2, dt, 255, 0.0, 1.0, 0));
        CHECK_EQ_INT(gpuhist_hp_check(&m2, &e), 0); /* another spec */
        /* not EVEN, or not a half type: nothing certifies */
        gpuhist_binmap m3 = m;
        m3.dtype = GH_DT_F32;
        gpuhist_hp_certify(&m3, &w);
        CHECK_EQ_INT(w.ok, 0);
        m3 = m;
        m3.kind = GH_KIND_EDGES;
        gpuhist_hp_certify(&m3, &w);
        CHECK_EQ_INT(w.ok, 0);
        CHECK(make_map(&m3, dt, 257, 0.0, 1.0, 0));
        gpuhist_hp_certify(&m3, &w); /* 260 codes: more than the kernel's tables */
        CHECK_EQ_INT(w.ok, 0);
    }
}

/* With flush-to-zero and denormals-are-zero set, the certificates are the same (the replay
 * runs under the default environment). */
static void case_ftz(void)
{
#if HAVE_MXCSR
    const unsigned saved = _mm_getcsr();
    for (int bf = 0; bf < 2; ++bf) {
        const gpuhist_dtype dt = bf ? GPUHIST_BF16 : GPUHIST_F16;
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
            const spec *s = &specs[i];
            gpuhist_binmap m;
            if (!make_map(&m, dt, s->bins, s->lo, s->hi, s->last_inclusive))
                continue;
            check_context("ftz %s spec %zu", bf ? "bf16" : "f16", i);
            gpuhist_hp_est a, b;
            gpuhist_hp_certify(&m, &a);
            _mm_setcsr(saved | 0x8040u); /* FTZ | DAZ */
            gpuhist_hp_certify(&m, &b);
            const unsigned during = _mm_getcsr();
            _mm_setcsr(saved);
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            CHECK_EQ_INT((int)(during & 0x8040u), 0x8040); /* the caller's mode is restored */
        }
    }
    printf("ftz/daz: certificates unchanged\n");
#else
    printf("ftz/daz: not x86, skipped\n");
#endif
}

int main(void)
{
    int certified = 0, tried = 0;
    case_specs(&certified, &tried);
    printf("%d of %d specs certified\n", certified, tried);
    case_refuse();
    case_ftz();
    return check_exit();
}
