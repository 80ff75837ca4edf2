/*
 * test_cpu_minmax.c - the CPU min/max pass (src/cpu/minmax.c): the lane loops and the scalar
 * loop against a plain reference loop written here, bit for bit (min, max, the found flag, the
 * sign of a zero min or max), for every dtype the CPU backend's gpuhist_minmax takes.
 *
 * The reference: over the samples in order, the first finite value starts the min and max, a
 * later finite value replaces them only when strictly smaller / larger (so a zero min or max is
 * the first zero of the run); integers widened to int64 (u64 kept as u64). Halves are widened
 * here by their own arithmetic (ldexp), independently of binmap.h.
 *
 * Data: seeded random (seed printed) runs of lengths 0..100 and a few longer ones, at byte
 * offsets 0..7 from an aligned buffer (unaligned starts, every tail length), drawn in modes that
 * reach the hard cases: a mix of NaN, +-inf, +-0, subnormals, extremes and ordinary values; only
 * zeros of both signs with NaN and inf (a zero min and max, lanes disagreeing on its sign); all
 * NaN / non-finite (nothing found); non-negative values with both zeros; narrow integer ranges.
 * Then gpuhist_minmax on the CPU backend with 1 and 2 threads over 24 MiB against the reference
 * (the shares and their merge).
 */
#include "gpuhist.h"
#include "check.h"
#include "cpu_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED 18181818u

static uint64_t rng_state = SEED;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double half_value(uint16_t h, int bf)
{
    if (bf) {
        uint32_t b = (uint32_t)h << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, -24);
    else
        v = ldexp((double)(1024 + m), e - 25);
    return s ? -v : v;
}

/* The value of sample i as a double (floats), int64 or uint64. */
static double fval(gpuhist_dtype t, const unsigned char *p, uint64_t i)
{
    switch (t) {
    case GPUHIST_F32: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    case GPUHIST_F64: {
        double d;
        memcpy(&d, p + 8 * i, 8);
        return d;
    }
    default: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return half_value(h, t == GPUHIST_BF16);
    }
    }
}

static int64_t ival(gpuhist_dtype t, const unsigned char *p, uint64_t i)
{
    switch (t) {
    case GPUHIST_U8: return p[i];
    case GPUHIST_I8: return (int8_t)p[i];
    case GPUHIST_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case GPUHIST_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case GPUHIST_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case GPUHIST_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    default: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    }
}

static int is_float(gpuhist_dtype t)
{
    return t == GPUHIST_F32 || t == GPUHIST_F64 || t == GPUHIST_F16 || t == GPUHIST_BF16;
}

static void reference(gpuhist_dtype t, const unsigned char *p, uint64_t n, gpuhist_cpu_extent *r)
{
    memset(r, 0, sizeof *r);
    for (uint64_t i = 0; i < n; ++i) {
        if (is_float(t)) {
            const double v = fval(t, p, i);
            if (!isfinite(v))
                continue;
            if (!r->found)
                r->fmin = r->fmax = v;
            if (v < r->fmin)
                r->fmin = v;
            if (v > r->fmax)
                r->fmax = v;
        } else if (t == GPUHIST_U64) {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            if (!r->found)
                r->umin = r->umax = v;
            if (v < r->umin)
                r->umin = v;
            if (v > r->umax)
                r->umax = v;
        } else {
            const int64_t v = ival(t, p, i);
            if (!r->found)
                r->imin = r->imax = v;
            if (v < r->imin)
                r->imin = v;
            if (v > r->imax)
                r->imax = v;
        }
        r->found = 1;
    }
}

/* One sample of mode `mode` written at q. */
static void gen(gpuhist_dtype t, int mode, unsigned char *q)
{
    const uint64_t r = rng();
    const int k = (int)(r % 16);
    if (t == GPUHIST_F32) {
        static const float mix[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f,
                                    -1e-45f, 1.17549421e-38f, -3e-40f, 3.4028235e38f,
                                    -3.4028235e38f, 1.0f, -2.5f, 0.5f, 7.0f};
        static const float zer[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY};
        float f;
        if (mode == 0)
            f = k < 12 ? mix[k] : (float)((double)(r >> 11) / 9007199254740992.0 * 200 - 100);
        else if (mode == 1)
            f = zer[k % 5];
        else if (mode == 2)
            f = k % 3 == 0 ? NAN : (k % 3 == 1 ? INFINITY : -INFINITY);
        else
            f = k < 6 ? (k & 1 ? -0.0f : 0.0f) : (k < 8 ? NAN : (float)(r >> 40) * 1e-7f);
        memcpy(q, &f, 4);
    } else if (t == GPUHIST_F64) {
        static const double mix[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 4.9e-324,
                                     -4.9e-324, 2.2250738585072009e-308, -1e-310,
                                     1.7976931348623157e308, -1.7976931348623157e308};
        static const double zer[] = {0.0, -0.0, NAN, INFINITY, -INFINITY};
        double d;
        if (mode == 0)
            d = k < 12 ? mix[k] : (double)(r >> 11) / 9007199254740992.0 * 200 - 100;
        else if (mode == 1)
            d = zer[k % 5];
        else if (mode == 2)
            d = k % 3 == 0 ? NAN : (k % 3 == 1 ? INFINITY : -INFINITY);
        else
            d = k < 6 ? (k & 1 ? -0.0 : 0.0) : (k < 8 ? NAN : (double)(r >> 40) * 1e-7);
        memcpy(q, &d, 8);
    } else if (t == GPUHIST_F16 || t == GPUHIST_BF16) {
        const int bf = t == GPUHIST_BF16;
        const uint16_t inf = bf ? 0x7f80 : 0x7c00, nan = bf ? 0x7fc0 : 0x7e00;
        const uint16_t mix[] = {nan, (uint16_t)(nan | 0x8000), inf, (uint16_t)(inf | 0x8000),
                                0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff};
        const uint16_t zer[] = {0x0000, 0x8000, nan, inf, (uint16_t)(inf | 0x8000)};
        uint16_t h;
        if (mode == 0)
            h = k < 10 ? mix[k] : (uint16_t)(r >> 48);
        else if (mode == 1)
            h = zer[k % 5];
        else if (mode == 2)
            h = k % 3 == 0 ? nan : (k % 3 == 1 ? inf : (uint16_t)(inf | 0x8000));
        else
            h = k < 6 ? (k & 1 ? 0x8000 : 0x0000) : (k < 8 ? nan : (uint16_t)((r >> 48) & 0x7bff));
        memcpy(q, &h, 2);
    } else {
        const size_t size = gpuhist_dtype_size(t);
        uint64_t v = r;
        if (mode == 1)
            v = (uint64_t)(k % 3) - 1; /* -1, 0, 1 */
        else if (mode == 3)
            v = k < 2 ? (k ? ~0ull : 0) : (r >> 62); /* the extremes and small values */
        memcpy(q, &v, size); /* little-endian: the low bytes */
    }
}

static void compare(const char *what, const gpuhist_cpu_extent *a, const gpuhist_cpu_extent *r)
{
    CHECK_EQ_INT(a->found, r->found);
    CHECK_EQ_F64_BITS(a->fmin, r->fmin);
    CHECK_EQ_F64_BITS(a->fmax, r->fmax);
    CHECK_EQ_INT(a->imin, r->imin);
    CHECK_EQ_INT(a->imax, r->imax);
    CHECK_EQ_U64(a->umin, r->umin);
    CHECK_EQ_U64(a->umax, r->umax);
    (void)what;
}

static const gpuhist_dtype all[] = {GPUHIST_U8,  GPUHIST_I8,  GPUHIST_U16, GPUHIST_I16,
                                    GPUHIST_U32, GPUHIST_I32, GPUHIST_U64, GPUHIST_I64,
                                    GPUHIST_F16, GPUHIST_BF16, GPUHIST_F32, GPUHIST_F64};

int main(void)
{
    printf("test_cpu_minmax: seed %u, vector kernels %s\n", SEED,
           getenv("GPUHIST_CPU_SIMD") ? getenv("GPUHIST_CPU_SIMD") : "(default)");
    static unsigned char buf[8 * 5000 + 64] __attribute__((aligned(64)));
    const int ntypes = (int)(sizeof all / sizeof all[0]);
    for (int ti = 0; ti < ntypes; ++ti) {
        const gpuhist_dtype t = all[ti];
        const size_t size = gpuhist_dtype_size(t);
        for (int mode = 0; mode < 4; ++mode)
            for (uint64_t n = 0; n <= 140; ++n)
                for (int off = 0; off < 8; ++off) {
                    const uint64_t len = n <= 100 ? n : 100 + (n - 100) * 97; /* to 3980 */
                    unsigned char *p = buf + off;
                    for (uint64_t i = 0; i < len; ++i)
                        gen(t, mode, p + i * size);
                    gpuhist_cpu_extent ref, lanes, scalar, disp;
                    reference(t, p, len, &ref);
                    gpuhist_cpu_minmax_lanes(t, p, len, &lanes);
                    gpuhist_cpu_minmax_scalar(t, p, len, &scalar);
                    gpuhist_cpu_minmax(t, p, len, &disp);
                    check_context("dtype %d mode %d n %llu offset %d: lanes", (int)t, mode,
                                  (unsigned long long)len, off);
                    compare("lanes", &lanes, &ref);
                    check_context("dtype %d mode %d n %llu offset %d: scalar", (int)t, mode,
                                  (unsigned long long)len, off);
                    compare("scalar", &scalar, &ref);
                    check_context("dtype %d mode %d n %llu offset %d: dispatched", (int)t, mode,
                                  (unsigned long long)len, off);
                    compare("dispatched", &disp, &ref);
                }
    }

    /* gpuhist_minmax over 24 MiB (shares of 4 MiB or more on each thread, then merged). */
    const size_t big = (size_t)24 << 20;
    unsigned char *data = malloc(big + 8);
    gpuhist_ctx *ctx = NULL;
    CHECK(data != NULL);
    CHECK(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) == GPUHIST_OK);
    for (int ti = 0; data && ctx && ti < ntypes; ++ti)
        for (int mode = 0; mode < 4; ++mode) {
            const gpuhist_dtype t = all[ti];
            const size_t size = gpuhist_dtype_size(t);
            const uint64_t n = big / size;
            unsigned char *p = data + 1 + (size_t)mode; /* unaligned */
            for (uint64_t i = 0; i < n; ++i)
                gen(t, mode, p + i * size);
            gpuhist_cpu_extent ref;
            reference(t, p, n, &ref);
            for (int threads = 1; threads <= 2; ++threads) {
                gpuhist_set_threads(ctx, threads);
                gpuhist_samples s;
                memset(&s, 0, sizeof s);
                s.data = p, s.dtype = t, s.count = n, s.location = GPUHIST_MEMORY_HOST;
                double lo = 0, hi = 0;
                int found = -1;
                check_context("gpuhist_minmax dtype %d mode %d threads %d", (int)t, mode, threads);
                CHECK(gpuhist_minmax(ctx, &s, &lo, &hi, &found) == GPUHIST_OK);
                CHECK_EQ_INT(found, ref.found);
                if (!ref.found || !found)
                    continue;
                /* the public result: doubles, integers rounded outwards, -0 reported as 0 */
                double elo, ehi;
                if (is_float(t))
                    elo = ref.fmin + 0.0, ehi = ref.fmax + 0.0;
                else if (t == GPUHIST_U64)
                    elo = (double)ref.umin, ehi = (double)ref.umax;
                else
                    elo = (double)ref.imin, ehi = (double)ref.imax;
                if (t == GPUHIST_U64 || t == GPUHIST_I64) {
                    CHECK(lo <= elo && hi >= ehi);
                } else {
                    CHECK_EQ_F64_BITS(lo + 0.0, elo);
                    CHECK_EQ_F64_BITS(hi + 0.0, ehi);
                }
            }
        }
    gpuhist_destroy(ctx);
    free(data);
    return check_exit();
}
