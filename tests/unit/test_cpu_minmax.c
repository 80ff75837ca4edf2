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
 * (the shares and their merge). Interleaved runs (sample i of channel i % C): C = 1-8, every
 * channel subset for C <= 4, one result per subset from one call, runs that end inside a pixel.
 * Rows with gaps (a region of interest) and whole pixels of 1-4 channels on 1-3 threads, through
 * gpuhist_cpu_minmax_rows and gpuhist_minmax; N-D axes (2-8) through gpuhist_nd_minmax:
 * interleaved records, records with the axes permuted (the per-axis path), columns; 0, 1, 2, 3,
 * 17, 1001 and ~9 MiB of points.
 */
#include "gpuhist.h"
#include "check.h"
#include "cpu_kernels.h"
#include "ndmap.h"

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

/* Adds the samples of the channels in `mask` of a run of m interleaved samples (sample i of
 * channel i % C) to r, in order. */
static void ref_add(gpuhist_dtype t, const unsigned char *p, uint64_t m, uint32_t C,
                    uint32_t mask, gpuhist_cpu_extent *r)
{
    uint32_t c = 0;
    for (uint64_t i = 0; i < m; ++i, c = c + 1 == C ? 0 : c + 1) {
        if (!(mask >> c & 1u))
            continue;
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

static void reference(gpuhist_dtype t, const unsigned char *p, uint64_t n, gpuhist_cpu_extent *r)
{
    memset(r, 0, sizeof *r);
    ref_add(t, p, n, 1, 1, r);
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

/* ---- interleaved channels, rows, N-D axes ---------------------------------------------------- */

/* The masks of a run of C channels: every subset for C <= 4; else each channel alone, all of them
 * and two drawn ones. */
static uint32_t masks_of(uint32_t C, uint32_t *masks)
{
    uint32_t n = 0;
    if (C <= 4) {
        for (uint32_t k = 1; k < (1u << C); ++k)
            masks[n++] = k;
        return n;
    }
    for (uint32_t c = 0; c < C; ++c)
        masks[n++] = 1u << c;
    masks[n++] = (1u << C) - 1u;
    masks[n++] = (uint32_t)(rng() % ((1u << C) - 1u)) + 1u;
    masks[n++] = (uint32_t)(rng() % ((1u << C) - 1u)) + 1u;
    return n;
}

/* gpuhist_cpu_minmax_channels (lanes, scalar, dispatched) against ref_add: every dtype and mode,
 * 1-8 channels, every mask (or a choice for 5-8), lengths 0..40 and around the lane counts (not
 * always whole pixels), unaligned starts. */
static void test_channels(unsigned char *buf)
{
    static const uint64_t longer[] = {63, 64, 65, 95, 96, 97, 191, 192, 193, 255, 449, 1001, 2999};
    const int ntypes = (int)(sizeof all / sizeof all[0]);
    static const int offs[] = {0, 1, 3, 5};
    for (int ti = 0; ti < ntypes; ++ti) {
        const gpuhist_dtype t = all[ti];
        const size_t size = gpuhist_dtype_size(t);
        for (int mode = 0; mode < 4; ++mode)
            for (uint32_t C = 1; C <= 8; ++C) {
                uint32_t masks[16];
                const uint32_t nm = masks_of(C, masks);
                for (int li = 0; li < 41 + (int)(sizeof longer / sizeof longer[0]); ++li)
                    for (int oi = 0; oi < 4; ++oi) {
                        const uint64_t m = li <= 40 ? (uint64_t)li : longer[li - 41];
                        unsigned char *p = buf + offs[oi];
                        for (uint64_t i = 0; i < m; ++i)
                            gen(t, mode, p + i * size);
                        gpuhist_cpu_extent lanes[16], scalar[16], disp[16], ref;
                        gpuhist_cpu_minmax_channels_lanes(t, p, m, C, nm, masks, lanes);
                        gpuhist_cpu_minmax_channels_scalar(t, p, m, C, nm, masks, scalar);
                        gpuhist_cpu_minmax_channels(t, p, m, C, nm, masks, disp);
                        for (uint32_t o = 0; o < nm; ++o) {
                            memset(&ref, 0, sizeof ref);
                            ref_add(t, p, m, C, masks[o], &ref);
                            check_context("channels: dtype %d mode %d C %u mask %#x m %llu "
                                          "offset %d: lanes",
                                          (int)t, mode, C, masks[o], (unsigned long long)m,
                                          offs[oi]);
                            compare("lanes", &lanes[o], &ref);
                            check_context("channels: dtype %d mode %d C %u mask %#x m %llu "
                                          "offset %d: scalar",
                                          (int)t, mode, C, masks[o], (unsigned long long)m,
                                          offs[oi]);
                            compare("scalar", &scalar[o], &ref);
                            check_context("channels: dtype %d mode %d C %u mask %#x m %llu "
                                          "offset %d: dispatched",
                                          (int)t, mode, C, masks[o], (unsigned long long)m,
                                          offs[oi]);
                            compare("dispatched", &disp[o], &ref);
                        }
                    }
            }
    }
}

/* The public auto range of an extent, as the backends report it. */
static void expected_range(gpuhist_dtype t, const gpuhist_cpu_extent *r, double *lo, double *hi)
{
    if (is_float(t))
        *lo = r->fmin + 0.0, *hi = r->fmax + 0.0;
    else if (t == GPUHIST_U64)
        *lo = gpuhist_u64_to_double_down(r->umin), *hi = gpuhist_u64_to_double_up(r->umax);
    else
        *lo = gpuhist_i64_to_double_down(r->imin), *hi = gpuhist_i64_to_double_up(r->imax);
}

/* gpuhist_minmax of s against the reference extent ref: found, and the range bit for bit. */
static void check_minmax(gpuhist_ctx *ctx, const gpuhist_samples *s, const gpuhist_cpu_extent *ref)
{
    double lo = 0, hi = 0, elo = 0, ehi = 0;
    int found = -1;
    CHECK(gpuhist_minmax(ctx, s, &lo, &hi, &found) == GPUHIST_OK);
    CHECK_EQ_INT(found, ref->found);
    if (ref->found && found) {
        expected_range(s->dtype, ref, &elo, &ehi);
        CHECK_EQ_F64_BITS(lo, elo);
        CHECK_EQ_F64_BITS(hi, ehi);
    }
}

/* Rows with gaps (a region of interest: the gap bytes, random samples of the mode, must not
 * count) on 1-3 threads through gpuhist_cpu_minmax_rows and the CPU backend's gpuhist_minmax,
 * and N-D axes through gpuhist_nd_minmax (interleaved, columns, permuted records), 2-8 axes,
 * against ref_add; ~9 MiB runs so that two threads share them (in mode 1 zeros of both signs
 * lie on both sides of the share boundary). */
static void test_rows_and_axes(unsigned char *data, size_t bytes, gpuhist_ctx *ctx)
{
    const int ntypes = (int)(sizeof all / sizeof all[0]);
    for (int ti = 0; ti < ntypes; ++ti)
        for (int mode = 0; mode < 2; ++mode) { /* the mix; zeros of both signs */
            const gpuhist_dtype t = all[ti];
            const size_t size = gpuhist_dtype_size(t);
            unsigned char *base = data + 1; /* unaligned */
            for (size_t i = 0; i + size <= bytes - 8; i += size)
                gen(t, mode, base + i);
            /* rows: channels 1-4, row stride = the pixels + 5 bytes */
            for (uint32_t C = 1; C <= 4; ++C) {
                const uint64_t rows = 61;
                const size_t row_bytes = ((bytes - 8) / rows - 5) / (C * size) * (C * size);
                const uint64_t row_length = row_bytes / (C * size);
                const size_t stride = row_bytes + 5;
                const uint32_t mask = C == 1 ? 1u : (C == 4 ? 0xbu : (1u << (C - 1)) | 1u);
                gpuhist_cpu_extent ref, roi, whole;
                memset(&ref, 0, sizeof ref);
                memset(&whole, 0, sizeof whole);
                for (uint64_t r = 0; r < rows; ++r)
                    ref_add(t, base + r * stride, row_length * C, C, mask, &ref);
                roi = ref;
                for (int threads = 1; threads <= 3; ++threads) {
                    ref = roi;
                    gpuhist_cpu_layout l = {base, t, C, rows, row_length, stride};
                    gpuhist_cpu_extent got;
                    gpuhist_cpu_minmax_rows(&l, 1, &mask, threads, &got);
                    check_context("rows: dtype %d mode %d C %u mask %#x threads %d", (int)t,
                                  mode, C, mask, threads);
                    compare("rows", &got, &ref);
                    /* the same through the backend (the histogrammed channels: the mask) */
                    gpuhist_set_threads(ctx, threads);
                    gpuhist_samples s;
                    memset(&s, 0, sizeof s);
                    s.data = base, s.dtype = t, s.rows = rows, s.row_length = row_length;
                    s.row_stride = stride, s.channels = C, s.channel_mask = mask;
                    s.location = GPUHIST_MEMORY_HOST;
                    check_context("gpuhist_minmax ROI: dtype %d mode %d C %u mask %#x threads %d",
                                  (int)t, mode, C, mask, threads);
                    check_minmax(ctx, &s, &ref);
                    /* contiguous pixels (the rows' bytes as one run) */
                    s.rows = 0, s.count = (bytes - 8) / (C * size);
                    if (threads == 1) {
                        memset(&whole, 0, sizeof whole);
                        ref_add(t, base, s.count * C, C, mask, &whole);
                    }
                    ref = whole;
                    check_context("gpuhist_minmax pixels: dtype %d mode %d C %u threads %d",
                                  (int)t, mode, C, threads);
                    check_minmax(ctx, &s, &ref);
                }
            }
            /* N-D points: dims 2-8, interleaved records (axis a at a, or permuted), columns */
            for (uint32_t dims = 2; dims <= 8; ++dims) {
                const uint64_t big = (bytes - 8) / (dims * size);
                const uint64_t counts[] = {0, 1, 2, 3, 17, 1001, big};
                /* the ~9 MiB case for 3 and 8 axes (two lane families) */
                const int ncounts = dims == 3 || dims == 8 ? 7 : 6;
                for (int ci = 0; ci < ncounts; ++ci)
                    for (int layout = 0; layout < 3; ++layout) {
                        const uint64_t n = counts[ci];
                        gpuhist_nd_map map;
                        memset(&map, 0, sizeof map);
                        map.dims = dims, map.dtype = t;
                        uint32_t pos[GPUHIST_MAX_DIMS];
                        for (uint32_t a = 0; a < dims; ++a) {
                            pos[a] = layout == 1 ? (a * 3 + 1) % dims : a; /* 1: permuted */
                            if (layout == 1 && dims % 3 == 0)
                                pos[a] = dims - 1 - a;
                            if (layout == 2) { /* columns: n samples each, one after another */
                                map.axis[a].base = base + (size_t)a * n * size;
                                map.axis[a].stride = size;
                            } else {
                                map.axis[a].base = base + (size_t)pos[a] * size;
                                map.axis[a].stride = (size_t)dims * size;
                            }
                        }
                        const uint32_t every = (1u << dims) - 1u;
                        const uint32_t axes = ci % 2 ? every : 0x55u & every;
                        gpuhist_cpu_extent ref[GPUHIST_MAX_DIMS];
                        memset(ref, 0, sizeof ref);
                        for (uint32_t a = 0; a < dims; ++a) {
                            if (!(axes >> a & 1u))
                                continue;
                            if (layout == 2)
                                ref_add(t, map.axis[a].base, n, 1, 1, &ref[a]);
                            else
                                ref_add(t, base, n * dims, dims, 1u << pos[a], &ref[a]);
                        }
                        for (int threads = 1; threads <= 2; ++threads) {
                            double lo[8], hi[8];
                            int found[8];
                            for (int a = 0; a < 8; ++a)
                                lo[a] = hi[a] = -7.0, found[a] = -1;
                            gpuhist_nd_minmax(&map, axes, n, threads, lo, hi, found);
                            for (uint32_t a = 0; a < dims; ++a) {
                                check_context("nd: dtype %d mode %d dims %u layout %d n %llu "
                                              "axis %u threads %d",
                                              (int)t, mode, dims, layout, (unsigned long long)n,
                                              a, threads);
                                if (!(axes >> a & 1u)) {
                                    CHECK_EQ_INT(found[a], -1); /* untouched */
                                    continue;
                                }
                                CHECK_EQ_INT(found[a], ref[a].found);
                                if (ref[a].found && found[a]) {
                                    double elo, ehi;
                                    expected_range(t, &ref[a], &elo, &ehi);
                                    CHECK_EQ_F64_BITS(lo[a], elo);
                                    CHECK_EQ_F64_BITS(hi[a], ehi);
                                }
                            }
                        }
                    }
            }
        }
}

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
    if (data && ctx) {
        test_channels(buf);
        test_rows_and_axes(data, ((size_t)9 << 20) + 8, ctx);
    }
    gpuhist_destroy(ctx);
    free(data);
    return check_exit();
}
