/*
 * test_f64_even.cu - f64 samples with even bins through cuda-fast-smem's certified kernel
 * (fe_kernel<double>, src/cuda/smem_certified_even.cu) and its fallback, against cpu-reference
 * bit for bit, counts and tallies.
 *
 * Which path runs is decided by the spec's double-domain certificate (fast_even.h): the test
 * computes it on the host with the library's own plan mapping (gpuhist_binmap_of) and
 * gpuhist_fe_certify and asserts the class each case is meant for, so a case cannot drift to
 * another path unnoticed:
 *   direct    certificates with t_lo < 0 and t_hi >= 1 (fe_kernel<double, true>: key < bins
 *             alone): [0, 1) with 256 bins (the benchmark's cell), 1024 bins, [0, 3) 3 bins,
 *             [1, 1 + 2^-42) 1024 bins (one ulp per bin)
 *   checked   certificates that hold but are not direct (fe_kernel<double, false>: the two-sided
 *             test, then the one-edge rule): [-8, 8) 4096, [-3.7, 12.9) 1000, [0.1, 0.9) 255,
 *             [1e6, 1e6 + 1e-6) 1000 (thresholds far from 0 and 1), [1e15, 1e15 + 1000) 999
 *   refused   certificates refused (subnormal hazards): fs_kernel's binmap.h walk, as before:
 *             [-1e-300, 1e-300) 64, [1e-308, 2e-308) 10, [0, 1e-305) 1000, [-1, 1e-320) 7
 * Samples: every edge and 3 doubles either side, floor/ceil-like neighbours, uniform over the
 * range and 10% beyond each side, NaN of both signs, +-inf, +-0.0, +-smallest subnormal,
 * +-largest subnormal, +-DBL_MAX, lower and upper themselves, random bit patterns, shuffled with
 * a fixed seed; 2.5 M samples (full chunks of the kernel's two-stage loop and a partial one), at
 * a 16-byte-aligned device address, at +8 bytes (one head element) with an odd count (one tail
 * element), and from host memory; both last-edge rules. Every CUDA strategy (auto and
 * cuda-fast-smem included) is compared with cpu-reference.
 * Seed: fixed (rng_state of cuda_test.cuh, printed). Exit 77 (skipped) without a GPU.
 */
#include "cuda_test.cuh"

#include "fast_even.h"
#include "internal.h"

#include <float.h>

enum { CERT_DIRECT, CERT_CHECKED, CERT_REFUSED };

struct f64_spec {
    double lo, hi;
    uint32_t bins;
};

static const char *cert_name(int k)
{
    return k == CERT_DIRECT ? "direct" : k == CERT_CHECKED ? "checked" : "refused";
}

/* The certificate class of an f64 EVEN spec, as cuda-fast-smem's plan sees it. */
static int cert_class(const f64_spec &s, int last_inclusive)
{
    const gpuhist_bin_spec b = gpuhist_bins_even(s.bins, s.lo, s.hi);
    gpuhist_binmap m;
    gpuhist_binmap_of(&b, GPUHIST_F64, s.lo, s.hi, last_inclusive, &m);
    gpuhist_fe_cert c;
    gpuhist_fe_certify(&m, &c);
    if (!c.ok)
        return CERT_REFUSED;
    return c.direct ? CERT_DIRECT : CERT_CHECKED;
}

static double from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, 8);
    return x;
}

/* Adversarial samples for [lo, hi) with `bins` even bins (binmap.h's edges), n in all. */
static std::vector<double> make_samples(const f64_spec &s, size_t n)
{
    gpuhist_binmap m;
    const gpuhist_bin_spec b = gpuhist_bins_even(s.bins, s.lo, s.hi);
    gpuhist_binmap_of(&b, GPUHIST_F64, s.lo, s.hi, 0, &m);
    std::vector<double> x;
    x.reserve(n);
    for (uint32_t i = 0; i <= s.bins; ++i) {
        double e = gpuhist_even_edge_f64(&m, i);
        for (int k = 0; k < 3; ++k)
            e = nextafter(e, -INFINITY);
        for (int k = 0; k <= 6; ++k, e = nextafter(e, INFINITY))
            x.push_back(e);
    }
    static const uint64_t special[] = {
        0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000000ull,
        0xfff0000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull,
        0x0000000000000001ull, 0x8000000000000001ull, 0x000fffffffffffffull,
        0x800fffffffffffffull, 0x7fefffffffffffffull, 0xffefffffffffffffull,
        0x0010000000000000ull, 0x7ff0000000000001ull};
    for (int rep = 0; rep < 50; ++rep) {
        for (uint64_t u : special)
            x.push_back(from_bits(u));
        x.push_back(s.lo);
        x.push_back(s.hi);
    }
    for (int k = 0; k < 20000; ++k)
        x.push_back(from_bits(rnd()));
    while (x.size() < n) {
        const double u = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
        x.push_back(s.lo + (s.hi - s.lo) * (u * 1.2 - 0.1));
    }
    x.resize(n);
    std::shuffle(x.begin(), x.end(), std::mt19937(20261127));
    return x;
}

static void run_specs(const f64_spec *specs, size_t count, int want)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = 2500001; /* odd: a tail element at +8 bytes */
    for (size_t i = 0; i < count; ++i) {
        const f64_spec &s = specs[i];
        std::vector<double> x = make_samples(s, n);
        for (int li = 0; li <= 1; ++li) {
            char what[160];
            snprintf(what, sizeof what, "[%.17g, %.17g) %u bins, last %s", s.lo, s.hi, s.bins,
                     li ? "inclusive" : "exclusive");
            check_context("%s", what);
            const int got = cert_class(s, li);
            if (!CHECK_MSG(got == want, "certificate %s, the case is for %s", cert_name(got),
                           cert_name(want)))
                continue;
            gpuhist_bin_spec b = gpuhist_bins_even(s.bins, s.lo, s.hi);
            b.last_edge_inclusive = li;
            for (size_t off = 0; off <= 8; off += 8) {
                const size_t m = off ? n : n - 1; /* aligned: an even count; +8: odd */
                gpuhist_samples hs = gpuhist_samples_1d(x.data(), GPUHIST_F64, m);
                expected e = reference(&hs, &b);
                void *base = NULL;
                gpuhist_samples ds = hs;
                ds.data = to_device(x.data(), m * 8, off, &base);
                ds.location = GPUHIST_MEMORY_DEVICE;
                char w2[200];
                snprintf(w2, sizeof w2, "f64 %s %s, device +%zu, %zu samples", cert_name(want),
                         what, off, m);
                all_strategies(ctx, &ds, &b, e, 0, w2);
                if (off == 8) {
                    snprintf(w2, sizeof w2, "f64 %s %s, host memory",
                             cert_name(want), what);
                    all_strategies(ctx, &hs, &b, e, 0, w2);
                }
                cudaFree(base);
            }
        }
    }
    check_context("%s", "");
    gpuhist_destroy(ctx);
}

static void case_direct(void)
{
    static const f64_spec s[] = {{0.0, 1.0, 256},
                                 {0.0, 1.0, 1024},
                                 {0.0, 3.0, 3},
                                 {1.0, 1.0 + 1024.0 * DBL_EPSILON, 1024}};
    run_specs(s, sizeof s / sizeof s[0], CERT_DIRECT);
}

static void case_checked(void)
{
    static const f64_spec s[] = {{-8.0, 8.0, 4096},
                                 {-3.7, 12.9, 1000},
                                 {0.1, 0.9, 255},
                                 {1e6, 1e6 + 1e-6, 1000},
                                 {1e15, 1e15 + 1000.0, 999}};
    run_specs(s, sizeof s / sizeof s[0], CERT_CHECKED);
}

static void case_refused(void)
{
    static const f64_spec s[] = {{-1e-300, 1e-300, 64},
                                 {1e-308, 2e-308, 10},
                                 {0.0, 1e-305, 1000},
                                 {-1.0, 1e-320, 7}};
    run_specs(s, sizeof s / sizeof s[0], CERT_REFUSED);
}

int main(int argc, char **argv)
{
    printf("test_f64_even: fixed seed %llu\n", (unsigned long long)rng_state);
    static const cuda_case cases[] = {
        {"direct", case_direct},
        {"checked", case_checked},
        {"refused", case_refused},
    };
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
