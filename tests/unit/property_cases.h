/*
 * property_cases.h - the cases of the property suite (test_property.c): a reproducible random
 * number generator (splitmix64), the dtypes' ranges and stores, and one random case: a spec
 * (dtype, kind, bins, range or edges, last-edge rule, outlier policy), a layout (channels and
 * channel subsets, ROI with padded rows, an unaligned start) and adversarial data (uniform,
 * constant, one hot value, sorted, all out of range, NaN/inf/-0.0/denormals, values exactly on
 * and next to the edges, the whole bit range, 64-bit values near 2^53 and 2^63) of an awkward
 * size, with the predicates that say which cases a request may refuse (an auto range that
 * overflows, EVEN edges that collapse in the sample type).
 *
 * Header-only, like check.h: the suite is one translation unit.
 */
#ifndef GPUHIST_TEST_PROPERTY_CASES_H
#define GPUHIST_TEST_PROPERTY_CASES_H

#include "gpuhist.h"
#include "half_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TWO53 9007199254740992.0
#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

/* ---- random numbers (splitmix64: tiny, good enough, reproducible everywhere) ------------------- */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnext(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint32_t rbelow(rng_t *r, uint32_t n) { return n ? (uint32_t)(rnext(r) % n) : 0; }
static double runif(rng_t *r) { return (double)(rnext(r) >> 11) * 0x1p-53; } /* [0, 1) */
/* Uniform in [a, b] without computing b - a (which may overflow). */
static double rrange(rng_t *r, double a, double b)
{
    double u = runif(r);
    return a * (1.0 - u) + b * u;
}
static int rchance(rng_t *r, double p) { return runif(r) < p; }

/* ---- dtypes ------------------------------------------------------------------------------------ */

static const size_t SZ[GPUHIST_DTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 2, 2};
static const double TMIN[GPUHIST_DTYPE_COUNT] = {0, -128, 0, -32768, 0, -2147483648.0, 0, -TWO63,
                                                 -FLT_MAX, -DBL_MAX, -65504.0, -0x1.fep127};
static const double TMAX[GPUHIST_DTYPE_COUNT] = {255, 127, 65535, 32767, 4294967295.0,
                                                 2147483647.0, TWO64, TWO63, FLT_MAX, DBL_MAX,
                                                 65504.0, 0x1.fep127};
static const int64_t IMIN[GPUHIST_DTYPE_COUNT] = {0, INT8_MIN, 0, INT16_MIN, 0, INT32_MIN, 0,
                                                  INT64_MIN, 0, 0, 0, 0};
static const int64_t IMAX[GPUHIST_DTYPE_COUNT] = {UINT8_MAX, INT8_MAX, UINT16_MAX, INT16_MAX,
                                                  UINT32_MAX, INT32_MAX, INT64_MAX, INT64_MAX,
                                                  0, 0, 0, 0};

static int is_float(gpuhist_dtype t)
{
    return t == GPUHIST_F32 || t == GPUHIST_F64 || t == GPUHIST_F16 || t == GPUHIST_BF16;
}
static int is_half(gpuhist_dtype t) { return t == GPUHIST_F16 || t == GPUHIST_BF16; }
static uint16_t half_bits(gpuhist_dtype t, double x)
{
    return t == GPUHIST_F16 ? test_f16_bits(x) : test_bf16_bits(x);
}
static double half_value(gpuhist_dtype t, uint16_t h)
{
    return t == GPUHIST_F16 ? test_f16_value(h) : test_bf16_value(h);
}
static int is_small(gpuhist_dtype t) { return t <= GPUHIST_I16; }

/* Store signed integer v in integer type t, saturating at the type's limits. */
static void store_i(gpuhist_dtype t, unsigned char *p, int64_t v)
{
    if (t == GPUHIST_U64) {
        uint64_t u = v < 0 ? 0 : (uint64_t)v;
        memcpy(p, &u, 8);
        return;
    }
    if (v < IMIN[t])
        v = IMIN[t];
    if (v > IMAX[t])
        v = IMAX[t];
    switch (t) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case GPUHIST_I8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case GPUHIST_I16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case GPUHIST_U32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
    case GPUHIST_I64: memcpy(p, &v, 8); break;
    default: break;
    }
}

/* Store unsigned integer u in integer type t, saturating. */
static void store_u(gpuhist_dtype t, unsigned char *p, uint64_t u)
{
    if (t == GPUHIST_U64)
        memcpy(p, &u, 8);
    else
        store_i(t, p, u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u);
}

/* Store floor(x) + delta (integer types, saturating) or x (float types). */
static void store_d(gpuhist_dtype t, unsigned char *p, double x, int delta)
{
    if (is_half(t)) {
        uint16_t h = half_bits(t, x);
        memcpy(p, &h, 2);
        return;
    }
    if (t == GPUHIST_F32) {
        float f = (float)x;
        memcpy(p, &f, 4);
        return;
    }
    if (t == GPUHIST_F64) {
        memcpy(p, &x, 8);
        return;
    }
    if (x != x)
        x = 0;
    x = floor(x);
    if (t == GPUHIST_U64) {
        uint64_t u = x < 0 ? 0 : x >= TWO64 ? UINT64_MAX : (uint64_t)x;
        if (delta < 0)
            u = u < (uint64_t)-delta ? 0 : u - (uint64_t)-delta;
        else
            u = u > UINT64_MAX - (uint64_t)delta ? UINT64_MAX : u + (uint64_t)delta;
        memcpy(p, &u, 8);
        return;
    }
    int64_t v = x < -TWO63 ? INT64_MIN : x >= TWO63 ? INT64_MAX : (int64_t)x;
    if (delta < 0)
        v = v < INT64_MIN - delta ? INT64_MIN : v + delta;
    else
        v = v > INT64_MAX - delta ? INT64_MAX : v + delta;
    store_i(t, p, v);
}

/* ---- a case -------------------------------------------------------------------------------------- */

enum { K_EVEN, K_EDGES, K_INTEGER, K_AUTO };
static const char *KIND_NAME[] = {"EVEN", "EDGES", "INTEGER", "auto"};
enum {
    G_UNIFORM, G_CONST, G_HOT, G_SORTED, G_OUTSIDE, G_SPECIAL, G_EDGES, G_FULL, G_NEAR, G_COUNT
};
static const char *GEN_NAME[] = {"uniform", "constant", "hot", "sorted", "outside",
                                 "specials", "on-edges", "full-bits", "near-2^53/2^63"};

typedef struct {
    unsigned long index;
    uint64_t seed;
    gpuhist_dtype t;
    int kind, gen;
    gpuhist_bin_spec spec;
    double *edges;     /* EDGES: the spec's edges; else the computed ones (for on-edge data) */
    int have_edges;
    uint32_t C, active, mask, nh;
    uint32_t hist_channel[GPUHIST_MAX_CHANNELS];
    int roi;
    uint64_t pixels, rows, row_length;
    size_t stride, row_bytes, offset, bytes;
    unsigned char *buf; /* allocation; the data start at buf + offset */
    unsigned char hot[8];
    double glo, ghi;    /* value range the generators aim at */
} tcase;

static void describe(const tcase *c, char *out, size_t n)
{
    const gpuhist_bin_spec *b = &c->spec;
    int k = snprintf(out, n, "case %lu (seed %llu): %s %s bins=%u", c->index,
                     (unsigned long long)c->seed, gpuhist_dtype_name(c->t), KIND_NAME[c->kind],
                     b->bins);
    if (c->kind == K_EVEN)
        k += snprintf(out + k, n - k, " range=[%.17g, %.17g)", b->lower, b->upper);
    else if (c->kind == K_EDGES)
        k += snprintf(out + k, n - k, " edges=[%.17g .. %.17g]", c->edges[0],
                      c->edges[b->bins]);
    else if (c->kind == K_INTEGER)
        k += snprintf(out + k, n - k, " lower=%lld", (long long)b->integer_lower);
    if (c->t == GPUHIST_F32 && (c->kind == K_EVEN || c->kind == K_AUTO))
        k += snprintf(out + k, n - k, " f32-edges=%s", b->float32_linspace ? "linspace" : "double");
    k += snprintf(out + k, n - k, " incl=%d %s C=%u active=%u mask=%#x", b->last_edge_inclusive,
                  b->outliers == GPUHIST_OUTLIERS_CLAMP ? "CLAMP" : "DROP", c->C, c->active,
                  c->mask);
    if (c->roi)
        k += snprintf(out + k, n - k, " roi=%llux%llu stride=%zu", (unsigned long long)c->rows,
                      (unsigned long long)c->row_length, c->stride);
    else
        k += snprintf(out + k, n - k, " pixels=%llu", (unsigned long long)c->pixels);
    snprintf(out + k, n - k, " offset=%zu data=%s", c->offset, GEN_NAME[c->gen]);
}

static const uint32_t BIN_CHOICES[] = {1, 2, 3, 31, 32, 33, 64, 255, 256, 257, 1000, 4096, 65536};
static const uint64_t SIZE_CHOICES[] = {0, 1, 2, 15, 17, 31, 97, 251, 1021, 4093, 4097, 8191,
                                        65537, 100003};

static uint32_t pick_bins(rng_t *r)
{
    if (rchance(r, 0.01))
        return 1u << 20;
    if (rchance(r, 0.1))
        return 1 + rbelow(r, 5000);
    return BIN_CHOICES[rbelow(r, sizeof BIN_CHOICES / sizeof BIN_CHOICES[0])];
}

/* A finite, non-empty EVEN range suited to dtype t. */
static void pick_range(rng_t *r, gpuhist_dtype t, uint32_t bins, double *lo, double *hi)
{
    int f = is_float(t);
    int wide = t == GPUHIST_U64 || t == GPUHIST_I64 || t == GPUHIST_F64;
    double a, b;
    switch (rbelow(r, 6)) {
    case 0: /* the natural range */
        if (f) {
            a = -1.0, b = 1.0;
        } else {
            a = TMIN[t];
            b = t == GPUHIST_U64 || t == GPUHIST_I64 ? TMAX[t] : TMAX[t] + 1.0;
        }
        break;
    case 1: { /* a random sub-range (ints: a bit beyond the type too) */
        if (f) {
            double s = pow(10.0, t == GPUHIST_F16 ? rrange(r, -5, 4) : rrange(r, -6, 6));
            a = s * rrange(r, -1, 1);
            b = a + s * pow(10.0, rrange(r, -3, 1));
        } else {
            double ext = (TMAX[t] - TMIN[t]) * 0.1;
            a = rrange(r, TMIN[t] - ext, TMAX[t] + ext);
            b = rrange(r, TMIN[t] - ext, TMAX[t] + ext);
            if (rchance(r, 0.5)) {
                a = floor(a);
                b = floor(b);
            }
            if (a > b) {
                double x = a;
                a = b, b = x;
            }
        }
        break;
    }
    case 2: /* half-integer bounds, about one integer per bin or a few */
        a = floor(rrange(r, f ? -1000 : TMIN[t], f ? 1000 : TMAX[t])) + 0.5;
        b = a + (double)bins * (double)(1 + rbelow(r, 3)) * (rchance(r, 0.5) ? 1.0 : 0.37);
        break;
    case 3: /* around 2^53 or 2^63 (64-bit types; f32: around 2^24; f16: 2^11; bf16: 2^8) */
        if (t == GPUHIST_F16 || t == GPUHIST_BF16) {
            double c2 = t == GPUHIST_F16 ? 2048.0 : 256.0;
            a = c2 - rbelow(r, 16), b = c2 + 1 + rbelow(r, 16);
        } else if (t == GPUHIST_F32) {
            a = 16777216.0 - rbelow(r, 64), b = 16777216.0 + 1 + rbelow(r, 64);
        } else if (wide) {
            double m = rchance(r, 0.5) ? 4 + rbelow(r, 100) : ldexp(1.0, 10 + (int)rbelow(r, 30));
            double centre = t == GPUHIST_U64 && rchance(r, 0.5) ? TWO63 : TWO53;
            if (t == GPUHIST_I64 && rchance(r, 0.3))
                centre = -centre;
            a = centre - m, b = centre + m;
            if (t == GPUHIST_I64 && rchance(r, 0.2))
                a = TWO63 - ldexp(1.0, 20), b = TWO63;
        } else {
            a = TMAX[t] - 3 - rbelow(r, 10), b = TMAX[t] + 1 + rbelow(r, 3);
        }
        break;
    case 4: /* denormal ranges for floats; a narrow range for ints */
        if (t == GPUHIST_F16) {
            a = rchance(r, 0.5) ? 0.0 : -0x1p-24;
            b = rchance(r, 0.5) ? 1e-6 : 0x1p-21;
        } else if (t == GPUHIST_F32 || t == GPUHIST_BF16) {
            a = rchance(r, 0.5) ? 0.0 : -0x1p-147;
            b = rchance(r, 0.5) ? 1e-40 : 0x1p-146;
        } else if (t == GPUHIST_F64) {
            a = rchance(r, 0.5) ? 0.0 : -0x1p-1074;
            b = rchance(r, 0.5) ? 1e-310 : 0x1p-1072;
        } else {
            a = TMIN[t] + rbelow(r, 5);
            b = a + 1 + rbelow(r, 7);
        }
        break;
    default: /* huge */
        if (t == GPUHIST_F16)
            a = -60000.0, b = 65000.0;
        else if (t == GPUHIST_F32 || t == GPUHIST_BF16)
            a = -1e38, b = 1e38;
        else if (t == GPUHIST_F64)
            a = -1e300, b = 1e300;
        else
            a = -1e20, b = 1e20;
        break;
    }
    if (t == GPUHIST_F16) { /* bounds beyond float16 are refused: covered by the API tests */
        a = a < -65504.0 ? -65504.0 : a > 65000.0 ? 65000.0 : a;
        b = b > 65504.0 ? 65504.0 : b;
    }
    if (!(a < b))
        b = nextafter(a, INFINITY);
    *lo = a, *hi = b;
}

/* bins + 1 strictly increasing finite edges over about [lo, hi]; sometimes float- or integer-
 * valued so that samples can sit exactly on them, sometimes with ulp-sized bins. */
static void pick_edges(rng_t *r, gpuhist_dtype t, uint32_t bins, double lo, double hi, double *e)
{
    int mode = (int)rbelow(r, 3); /* 0: doubles, 1: float-valued, 2: integer-valued */
    double w = (hi - lo) / bins;
    if (!(w > 0) || !isfinite(w))
        w = 1.0;
    e[0] = lo;
    for (uint32_t i = 1; i <= bins; ++i) {
        double step = rchance(r, 0.05) ? 0.0 : w * rrange(r, 0.25, 1.75);
        double v = e[i - 1] + step;
        if (mode == 1 && fabs(v) < FLT_MAX)
            v = (double)(float)v;
        else if (mode == 2)
            v = floor(v);
        if (!(v > e[i - 1])) {
            if (mode == 1 && fabs(e[i - 1]) < FLT_MAX)
                v = (double)nextafterf((float)e[i - 1], INFINITY);
            else if (mode == 2 && fabs(e[i - 1]) < TWO53)
                v = e[i - 1] + 1.0;
            else
                v = nextafter(e[i - 1], INFINITY);
        }
        e[i] = v;
    }
    (void)t;
}

static uint64_t g_max_work; /* GPUHIST_PROPERTY_MAX_WORK: 0 = no cap */

/* Fill in a case from its own generator state. */
static int make_case(tcase *c, rng_t *r, int force_big)
{
    memset(c->hot, 0, sizeof c->hot);
    c->t = (gpuhist_dtype)rbelow(r, GPUHIST_DTYPE_COUNT);
    c->kind = (int)rbelow(r, 4);
    if (c->kind == K_INTEGER && is_float(c->t))
        c->kind = K_EVEN;
    c->gen = (int)rbelow(r, G_COUNT);
    uint32_t bins = pick_bins(r);

    /* Geometry. */
    uint64_t pixels = SIZE_CHOICES[rbelow(r, sizeof SIZE_CHOICES / sizeof SIZE_CHOICES[0])];
    c->C = rchance(r, 0.5) ? 1 : 1 + rbelow(r, 4);
    if (force_big || (is_small(c->t) && rchance(r, 0.005))) {
        if (force_big == 1)
            c->t = GPUHIST_U8;
        else if (force_big == 2)
            c->t = GPUHIST_U16;
        if (c->kind == K_EVEN && force_big)
            c->kind = K_INTEGER;
        pixels = 4000037;
        c->C = 1;
        if (bins > 65536)
            bins = 65536;
    } else if (rchance(r, 0.025)) {
        /* Large enough for cpu-threads to split the work (it wants >= 256K samples per thread)
         * and for GPU strategies to run many blocks, in every dtype. */
        pixels = 1300021;
        if (c->C > 2)
            c->C = 2;
    }
    if (bins >= (1u << 20) && c->C > 2)
        c->C = 2;
    c->active = 0, c->mask = 0;
    if (c->C > 1) {
        if (rchance(r, 0.4))
            c->active = rbelow(r, c->C + 1);
        else if (rchance(r, 0.5))
            c->mask = 1 + rbelow(r, (1u << c->C) - 1);
    }
    c->nh = 0;
    for (uint32_t k = 0; k < c->C; ++k) {
        int on = c->mask ? (int)((c->mask >> k) & 1u) : (c->active ? k < c->active : 1);
        if (on)
            c->hist_channel[c->nh++] = k;
    }
    /* Slow devices (PoCL on a shared CPU) and strategies whose work grows with samples x bins
     * (opencl-tree-reduce reads the input once per 16 counters) need a cap on samples x counters
     * per case; it shrinks the input, never the bins, and draws no random numbers, so a seed
     * gives the same specs with or without it. */
    if (g_max_work && pixels * c->nh * ((uint64_t)bins + 3) > g_max_work)
        pixels = g_max_work / (c->nh * ((uint64_t)bins + 3));
    c->row_bytes = 0;
    c->roi = rchance(r, 0.25);
    if (c->roi) {
        c->rows = 1 + rbelow(r, 40);
        c->row_length = pixels / c->rows;
        c->pixels = c->rows * c->row_length;
        c->row_bytes = c->row_length * c->C * SZ[c->t];
        c->stride = c->row_bytes + (rchance(r, 0.2) ? 0 : 1 + rbelow(r, 64));
    } else {
        c->rows = 1, c->row_length = pixels, c->pixels = pixels;
        c->row_bytes = pixels * c->C * SZ[c->t];
        c->stride = c->row_bytes;
    }
    c->offset = rbelow(r, 8);
    c->bytes = c->rows * c->stride;

    /* Bins. */
    gpuhist_bin_spec *b = &c->spec;
    double lo, hi;
    pick_range(r, c->t, bins, &lo, &hi);
    c->edges = NULL;
    c->have_edges = 0;
    switch (c->kind) {
    case K_EVEN:
        *b = gpuhist_bins_even(bins, lo, hi);
        break;
    case K_EDGES:
        c->edges = malloc(sizeof(double) * ((size_t)bins + 1));
        if (!c->edges)
            return 0;
        pick_edges(r, c->t, bins, lo, hi, c->edges);
        *b = gpuhist_bins_edges(bins, c->edges);
        lo = c->edges[0], hi = c->edges[bins];
        break;
    case K_INTEGER: {
        int64_t il;
        switch (rbelow(r, 4)) {
        case 0: il = IMIN[c->t]; break;
        case 1: il = -(int64_t)rbelow(r, 1000); break;
        case 2:
            il = (int64_t)floor(rrange(r, (double)IMIN[c->t], (double)IMAX[c->t]) / 2.0);
            break;
        default: il = c->t == GPUHIST_U64 ? INT64_MAX - bins : IMAX[c->t] - bins / 2; break;
        }
        if (il > INT64_MAX - (int64_t)bins)
            il = INT64_MAX - (int64_t)bins;
        *b = gpuhist_bins_integer(bins, il);
        lo = (double)il, hi = (double)il + bins;
        break;
    }
    default:
        *b = gpuhist_bins_auto(bins);
        break;
    }
    b->last_edge_inclusive = c->kind == K_AUTO ? 0 : (int)rbelow(r, 2);
    b->outliers = rchance(r, 0.5) ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
    if (c->kind == K_AUTO && rchance(r, 0.3))
        b->last_edge_inclusive = 1;
    /* f32 edges: NumPy 2's float32 linspace (auto's default) or the double edges rounded (even's
     * default), each on about half the EVEN and auto cases; drawn from a side generator so
     * that the case stream of a seed stays what it was */
    if (c->kind == K_EVEN || c->kind == K_AUTO) {
        rng_t side = {r->s ^ 0x9E3779B97F4A7C15ull};
        b->float32_linspace = (int)(rnext(&side) >> 63);
    }

    /* Edges for the on-edge generator (EVEN, INTEGER: computed through the public API). */
    if (c->kind == K_EDGES) {
        c->have_edges = 1;
    } else if (c->kind != K_AUTO && c->gen == G_EDGES) {
        c->edges = malloc(sizeof(double) * ((size_t)bins + 1));
        if (!c->edges)
            return 0;
        c->have_edges = gpuhist_compute_edges(b, c->t, c->edges) == GPUHIST_OK;
    }
    /* What the generators aim at: the spec's range, or a type-appropriate one for auto. */
    if (c->kind == K_AUTO) {
        pick_range(r, c->t, bins, &lo, &hi);
    }
    c->glo = lo, c->ghi = hi;
    return 1;
}

/* One sample of the case's generator into p. */
static void gen_sample(tcase *c, rng_t *r, uint64_t i, uint64_t n, unsigned char *p)
{
    gpuhist_dtype t = c->t;
    double lo = c->glo, hi = c->ghi;
    int gen = c->gen;
    if (gen == G_HOT && rchance(r, 0.1))
        gen = G_UNIFORM;
    switch (gen) {
    case G_CONST:
    case G_HOT:
        memcpy(p, c->hot, SZ[t]);
        return;
    case G_SORTED: {
        double u = n > 1 ? (double)i / (double)(n - 1) : 0.5;
        store_d(t, p, lo * (1.0 - u) + hi * u, 0);
        return;
    }
    case G_OUTSIDE: {
        double w = hi - lo;
        if (!isfinite(w))
            w = fabs(hi);
        double x = rchance(r, 0.5) ? lo - w * rrange(r, 0.001, 2.0) - 1.0
                                   : hi + w * rrange(r, 0.0, 2.0);
        if (rchance(r, 0.1))
            x = rchance(r, 0.5) ? lo : hi; /* on the bounds */
        store_d(t, p, x, is_float(t) ? 0 : (x == lo ? -1 : 0));
        return;
    }
    case G_SPECIAL:
        if (is_half(t)) {
            /* NaNs, infinities, zeros, subnormals, the largest values: any bit pattern */
            static const uint16_t f16[] = {0x7e00u, 0xfe00u, 0x7c01u, 0x7c00u, 0xfc00u, 0x8000u,
                                           0x0000u, 0x0001u, 0x8001u, 0x03ffu, 0x7bffu, 0xfbffu,
                                           0x0400u};
            static const uint16_t bf16[] = {0x7fc0u, 0xffc0u, 0x7f81u, 0x7f80u, 0xff80u, 0x8000u,
                                            0x0000u, 0x0001u, 0x8001u, 0x007fu, 0x7f7fu, 0xff7fu,
                                            0x0080u};
            if (rchance(r, 0.3)) {
                store_d(t, p, rrange(r, lo, hi), 0);
                return;
            }
            uint16_t u = rchance(r, 0.4) ? (uint16_t)rnext(r)
                                         : (t == GPUHIST_F16 ? f16 : bf16)[rbelow(r, 13)];
            memcpy(p, &u, 2);
        } else if (t == GPUHIST_F32) {
            static const uint32_t bits[] = {0x7fc00000u, 0xffc00000u, 0x7fa00001u, 0x7f800000u,
                                            0xff800000u, 0x80000000u, 0x00000000u, 0x00000001u,
                                            0x80000001u, 0x007fffffu, 0x7f7fffffu, 0xff7fffffu,
                                            0x00800000u};
            uint32_t u = rchance(r, 0.3) ? (uint32_t)(rnext(r) & 0x807fffffu)
                                         : bits[rbelow(r, sizeof bits / sizeof bits[0])];
            if (rchance(r, 0.3)) {
                store_d(t, p, rrange(r, lo, hi), 0);
                return;
            }
            memcpy(p, &u, 4);
        } else if (t == GPUHIST_F64) {
            static const uint64_t bits[] = {
                0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff4000000000001ull,
                0x7ff0000000000000ull, 0xfff0000000000000ull, 0x8000000000000000ull, 0,
                1, 0x8000000000000001ull, 0x000fffffffffffffull, 0x7fefffffffffffffull,
                0xffefffffffffffffull, 0x0010000000000000ull};
            uint64_t u = rchance(r, 0.3) ? (rnext(r) & 0x800fffffffffffffull)
                                         : bits[rbelow(r, sizeof bits / sizeof bits[0])];
            if (rchance(r, 0.3)) {
                store_d(t, p, rrange(r, lo, hi), 0);
                return;
            }
            memcpy(p, &u, 8);
        } else {
            switch (rbelow(r, 6)) {
            case 0: store_i(t, p, IMIN[t]); break;
            case 1: if (t == GPUHIST_U64) store_u(t, p, UINT64_MAX); else store_i(t, p, IMAX[t]); break;
            case 2: store_i(t, p, 0); break;
            case 3: store_i(t, p, -1); break;
            case 4: store_i(t, p, 1); break;
            default: store_d(t, p, rrange(r, lo, hi), 0); break;
            }
        }
        return;
    case G_EDGES:
        if (c->have_edges) {
            double e = c->edges[rbelow(r, c->spec.bins + 1)];
            int d = (int)rbelow(r, 3) - 1;
            if (t == GPUHIST_F64) {
                double x = d ? nextafter(e, d * INFINITY) : e;
                memcpy(p, &x, 8);
            } else if (is_half(t)) {
                /* the edge's nearest half, and its neighbours in bit-pattern order */
                uint16_t h = (uint16_t)(half_bits(t, e) + d);
                memcpy(p, &h, 2);
            } else if (t == GPUHIST_F32) {
                float f = (float)e;
                if (d)
                    f = nextafterf(f, d * INFINITY);
                memcpy(p, &f, 4);
            } else {
                /* floor(e) - 1, floor(e), floor(e) + 1 and the ceiling. */
                if (d == 1 && rchance(r, 0.5))
                    store_d(t, p, ceil(e), 0);
                else
                    store_d(t, p, e, d);
            }
            return;
        }
        break; /* auto: no edges known in advance; uniform data hits min and max anyway */
    case G_FULL: {
        uint64_t u = rnext(r);
        memcpy(p, &u, SZ[t]); /* every bit pattern: all integers; NaN/inf/denormals for floats */
        return;
    }
    case G_NEAR:
        if (t == GPUHIST_I64) {
            static const int64_t base[] = {INT64_C(9007199254740992), -INT64_C(9007199254740992),
                                           INT64_MAX, INT64_MIN, INT64_C(1) << 62, 0};
            int64_t b0 = base[rbelow(r, sizeof base / sizeof base[0])];
            int64_t off = (int64_t)rbelow(r, 6001) - 3000;
            int64_t v = off < 0 ? (b0 < INT64_MIN - off ? INT64_MIN : b0 + off)
                                : (b0 > INT64_MAX - off ? INT64_MAX : b0 + off);
            store_i(t, p, v);
        } else if (t == GPUHIST_U64) {
            static const uint64_t base[] = {UINT64_C(9007199254740992), UINT64_C(1) << 63,
                                            UINT64_MAX, UINT64_C(1) << 62, 0};
            uint64_t b0 = base[rbelow(r, sizeof base / sizeof base[0])];
            int64_t off = (int64_t)rbelow(r, 6001) - 3000;
            uint64_t v = off < 0 ? (b0 < (uint64_t)-off ? 0 : b0 - (uint64_t)-off)
                                 : (b0 > UINT64_MAX - (uint64_t)off ? UINT64_MAX
                                                                    : b0 + (uint64_t)off);
            store_u(t, p, v);
        } else if (t == GPUHIST_F64) {
            static const double base[] = {TWO53, -TWO53, TWO63, -TWO63, TWO64, DBL_MAX, 1.0};
            double x = base[rbelow(r, sizeof base / sizeof base[0])];
            int k = (int)rbelow(r, 9) - 4;
            for (; k < 0; ++k)
                x = nextafter(x, -INFINITY);
            for (; k > 0; --k)
                x = nextafter(x, INFINITY);
            memcpy(p, &x, 8);
        } else if (is_half(t)) {
            static const double base[] = {2048.0, -2048.0, 65504.0, 256.0, 1.0, 0x1p-14};
            uint16_t h = half_bits(t, base[rbelow(r, sizeof base / sizeof base[0])]);
            h = (uint16_t)(h + (int)rbelow(r, 9) - 4);
            memcpy(p, &h, 2);
        } else if (t == GPUHIST_F32) {
            static const float base[] = {16777216.0f, -16777216.0f, 0x1p63f, FLT_MAX, 1.0f,
                                         FLT_MIN};
            float x = base[rbelow(r, sizeof base / sizeof base[0])];
            int k = (int)rbelow(r, 9) - 4;
            for (; k < 0; ++k)
                x = nextafterf(x, -INFINITY);
            for (; k > 0; --k)
                x = nextafterf(x, INFINITY);
            memcpy(p, &x, 4);
        } else {
            int64_t v = rchance(r, 0.5) ? IMIN[t] + rbelow(r, 4) : IMAX[t] - rbelow(r, 4);
            store_i(t, p, v);
        }
        return;
    default:
        break;
    }
    /* G_UNIFORM (and fallbacks): uniform over the aimed range, 5% beyond on both sides. */
    double w = hi - lo;
    if (c->kind == K_INTEGER) {
        int64_t il = c->spec.integer_lower;
        int64_t span = (int64_t)c->spec.bins + (int64_t)c->spec.bins / 10 + 4;
        int64_t off = (int64_t)(rnext(r) % (uint64_t)span) - (int64_t)c->spec.bins / 20 - 2;
        if (t == GPUHIST_U64 && il >= 0) {
            uint64_t u = off < 0 ? ((uint64_t)il < (uint64_t)-off ? 0 : (uint64_t)il - (uint64_t)-off)
                                 : (uint64_t)il + (uint64_t)off;
            store_u(t, p, u);
        } else {
            int64_t v = off < 0 ? (il < INT64_MIN - off ? INT64_MIN : il + off)
                                : (il > INT64_MAX - off ? INT64_MAX : il + off);
            store_i(t, p, v);
        }
        return;
    }
    double x = isfinite(w) ? rrange(r, lo - 0.05 * w, hi + 0.05 * w) : rrange(r, lo, hi);
    store_d(t, p, x, 0);
}

/* Fill the case's buffer: samples in the rows, random garbage in the row padding and in the
 * bytes before the start (they must never be read as samples). */
static int fill_case(tcase *c, rng_t *r)
{
    c->buf = malloc(c->bytes + c->offset + 8);
    if (!c->buf)
        return 0;
    for (size_t i = 0; i < c->bytes + c->offset + 8; ++i)
        c->buf[i] = (unsigned char)rnext(r);
    /* The hot / constant value. */
    {
        int g = c->gen;
        c->gen = G_UNIFORM;
        gen_sample(c, r, 0, 1, c->hot);
        c->gen = g;
    }
    uint64_t n = c->pixels * c->C, i = 0;
    unsigned char *d = c->buf + c->offset;
    for (uint64_t row = 0; row < c->rows; ++row)
        for (uint64_t s = 0; s < c->row_length * c->C; ++s, ++i)
            gen_sample(c, r, i, n, d + row * c->stride + s * SZ[c->t]);
    return 1;
}

/* Auto range over f64 data whose finite min and max are more than DBL_MAX apart: NumPy's edges
 * cannot be computed (upper - lower overflows), so the library rejects the call. @return 1 when
 * that is the case (then every strategy must reject it the same way). */
static int auto_range_overflows(const tcase *c)
{
    if (c->kind != K_AUTO || c->t != GPUHIST_F64)
        return 0;
    double lo = INFINITY, hi = -INFINITY;
    const unsigned char *d = c->buf + c->offset;
    for (uint64_t row = 0; row < c->rows; ++row)
        for (uint64_t px = 0; px < c->row_length; ++px)
            for (uint32_t k = 0; k < c->nh; ++k) {
                double x;
                memcpy(&x, d + row * c->stride + (px * c->C + c->hist_channel[k]) * 8, 8);
                if (isfinite(x)) {
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
            }
    return lo <= hi && !isfinite(hi - lo);
}

/* The range an EVEN or auto case resolves to, by NumPy's rules, computed here independently of
 * the library: the spec's bounds, or the data's finite min and max (64-bit integers converted
 * rounding outwards), min == max widened by 0.5 each way. @return 0 when there is no range to
 * check (other kinds). */
static int resolved_even_range(const tcase *c, double *lo, double *hi)
{
    if (c->kind == K_EVEN) {
        *lo = c->spec.lower, *hi = c->spec.upper;
        return 1;
    }
    if (c->kind != K_AUTO)
        return 0;
    long double mn = INFINITY, mx = -INFINITY;
    const unsigned char *d = c->buf + c->offset;
    for (uint64_t row = 0; row < c->rows; ++row)
        for (uint64_t px = 0; px < c->row_length; ++px)
            for (uint32_t k = 0; k < c->nh; ++k) {
                const unsigned char *p = d + row * c->stride + (px * c->C + c->hist_channel[k]) * SZ[c->t];
                long double x;
                switch (c->t) {
                case GPUHIST_U8: x = *p; break;
                case GPUHIST_I8: x = (int8_t)*p; break;
                case GPUHIST_U16: { uint16_t v; memcpy(&v, p, 2); x = v; break; }
                case GPUHIST_I16: { int16_t v; memcpy(&v, p, 2); x = v; break; }
                case GPUHIST_U32: { uint32_t v; memcpy(&v, p, 4); x = v; break; }
                case GPUHIST_I32: { int32_t v; memcpy(&v, p, 4); x = v; break; }
                case GPUHIST_U64: { uint64_t v; memcpy(&v, p, 8); x = v; break; }
                case GPUHIST_I64: { int64_t v; memcpy(&v, p, 8); x = v; break; }
                case GPUHIST_F32: { float v; memcpy(&v, p, 4); x = v; break; }
                case GPUHIST_F16:
                case GPUHIST_BF16: { uint16_t v; memcpy(&v, p, 2); x = half_value(c->t, v); break; }
                default: { double v; memcpy(&v, p, 8); x = v; break; }
                }
                if (isfinite((double)x)) {
                    mn = x < mn ? x : mn;
                    mx = x > mx ? x : mx;
                }
            }
    if (!(mn <= mx)) { /* no finite value: [0, 1] */
        *lo = 0.0, *hi = 1.0;
        return 1;
    }
    double a = (double)mn, b = (double)mx;
    if ((long double)a > mn)
        a = nextafter(a, -INFINITY);
    if ((long double)b < mx)
        b = nextafter(b, INFINITY);
    a += 0.0, b += 0.0;
    if (a == b)
        a -= 0.5, b += 0.5;
    *lo = a, *hi = b;
    return 1;
}

/* NumPy 2's float32 linspace of f32 data with an automatic range (the spec's float32_linspace,
 * which gpuhist_bins_auto sets), computed here in float, one rounded operation at a time: 1 when
 * its edges do not increase strictly (a float range that overflows included). */
static int linspace_f32_collapses(uint32_t bins, double lo, double hi)
{
    const volatile float L = (float)lo, U = (float)hi;
    const volatile float delta = U - L;
    const volatile float step = delta / (float)bins;
    volatile float prev = L;
    for (uint32_t i = 1; i <= bins; ++i) {
        volatile float y = (float)i;
        if (i == bins) {
            y = U;
        } else if (step == 0.0f) {
            y = y / (float)bins;
            y = y * delta;
            y = y + L;
        } else {
            y = y * step;
            y = y + L;
        }
        if (!(y > prev))
            return 1;
        prev = y;
    }
    return 0;
}

/* NumPy refuses even bins whose edges (numpy.linspace in double, then rounded to float32 for
 * float32 samples; in float32 for f32 data with an automatic range under NumPy 2) do not
 * increase strictly: "Too many bins for data range". */
static int even_edges_collapse(const tcase *c)
{
    double lo, hi;
    if (!resolved_even_range(c, &lo, &hi) || !isfinite(hi - lo))
        return 0;
    const uint32_t bins = c->spec.bins;
    if (c->t == GPUHIST_F32 && c->spec.float32_linspace)
        return linspace_f32_collapses(bins, lo, hi);
    const double delta = hi - lo, step = delta / bins;
    /* edge types: float for f32 and bf16, float16 for f16 (NumPy's astype(float16)) */
    const int f32 = c->t == GPUHIST_F32 || c->t == GPUHIST_BF16, f16 = c->t == GPUHIST_F16;
    double prev = f32 ? (double)(float)lo : f16 ? test_f16_value(test_f16_bits(lo)) : lo;
    for (uint32_t i = 1; i <= bins; ++i) {
        double e = i == bins ? hi : step == 0.0 ? (double)i / bins * delta + lo : i * step + lo;
        if (f32)
            e = (double)(float)e;
        else if (f16)
            e = test_f16_value(test_f16_bits(e));
        if (!(e > prev))
            return 1;
        prev = e;
    }
    return 0;
}

static gpuhist_samples case_samples(const tcase *c)
{
    gpuhist_samples s = gpuhist_samples_1d(c->buf + c->offset, c->t, c->pixels);
    if (c->roi) {
        s.count = 0;
        s.rows = c->rows;
        s.row_length = c->row_length;
        s.row_stride = c->stride;
    }
    s.channels = c->C;
    s.active_channels = c->active;
    s.channel_mask = c->mask;
    return s;
}

#endif
