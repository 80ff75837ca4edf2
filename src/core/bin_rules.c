/*
 * bin_rules.c - NumPy's bin-count rules ("auto", "fd", "doane", "scott", "stone", "rice",
 * "sturges", "sqrt"): gpuhist_bins_rule() turns one channel of samples into the even bin spec
 * numpy.histogram_bin_edges(a, bins=<rule>, range=...) would use, with the same edges.
 *
 * Mechanism. NumPy picks the outer edges (the range, or the data's min and max, widened by 0.5
 * each way when they are equal), keeps the values inside them, asks the rule for a bin width
 * and takes ceil((last - first) / width) bins (one bin when the width is 0 or nothing is kept).
 * This file redoes each step with NumPy's arithmetic, operation by operation and in NumPy's
 * types (float32 data stays float32 where NumPy keeps it so, integers are widened to float64
 * where NumPy widens them, signed integer differences wrap where NumPy's do), for either
 * NumPy's rules: NumPy 2's by default, NumPy 1.x's on request (gpuhist_bins_rule_numpy). NumPy 2
 * differs in four places: an integer sample's width is widened to at least 1; NEP 50 keeps
 * float32 data's intermediates in float32 (rice's and scott's widths, stone's candidate widths,
 * min == max widened by 0.5, (last - first) / width when both are float32, and the automatic
 * range's linspace: gpuhist_linspace_f32); `auto` is min(max(fd, sqrt / 2), sturges) instead
 * of min(fd, sturges) (sturges when fd is 0); and np.mean / np.std sum whole arrays pairwise
 * (below). Each step:
 *  - sqrt, sturges, rice need the count and the min and max: without a range they come from
 *    the context's backend (gpuhist_minmax, then a one-bin gpuhist_histogram counts the finite
 *    values), so these rules also run on device memory; with a range, or for 64-bit integers
 *    beyond 2^53 (whose min/max the backend rounds outwards), a host pass finds them.
 *  - scott and doane need the standard deviation (and doane the skewness): host passes over
 *    the kept values summed pairwise (8-way unrolled leaves of at most 128 values, halves
 *    rounded down to a multiple of 8), the leaves read in order from one 8192-value buffer:
 *    NumPy 1.x's buffered add.reduce sums blocks of 8192 values so and adds the block sums in
 *    order; NumPy 2 sums a contiguous array as one (but still in blocks when it widens
 *    integers to float64 for np.mean). So the float64 (float32 for f32 data) sums, means and
 *    deviations are NumPy's bit for bit.
 *  - fd and auto need the 25th and 75th percentiles (linear interpolation between the order
 *    statistics at floor((n-1)q) and the next one): 8/16-bit data is counted per value (a
 *    65536-entry table), wider data is copied (finite, in range values only, 8 bytes each) and
 *    the four ranks are selected in place (quickselect, random pivots: O(n) expected).
 *  - stone minimises its cross-validation estimate over 1 .. max(100, sqrt(n)) bins, each
 *    candidate's counts found by binary search over the sorted copy (or the value table), its
 *    dot product summed in the reference BLAS order.
 * Everything runs on the calling thread, except the backend calls above.
 *
 * Limits. One histogrammed channel (per-channel rules would give each channel other bins,
 * which one spec cannot hold); no weights (NumPy refuses them with a rule too); samples in host
 * memory except for the backend-only case above; at most max_bins bins (default
 * GPUHIST_RULE_DEFAULT_MAX_BINS), never more than 2^31. The copy for fd/auto/stone on types
 * wider than 16 bits costs 8 bytes per kept value and is refused with OUT_OF_MEMORY when it does
 * not fit in the available memory. Where NumPy calls log2 or pow (sturges, doane, rice, scott,
 * fd, auto), this file calls the C library's; NumPy may use its own SIMD versions (SVML on
 * AVX-512 machines), which can differ in the last bit, so a width can differ by an ulp; the
 * bin count, and so every edge, differs only if (last - first) / width falls within such an ulp
 * of an integer. docs/SEMANTICS.md ("Bin-count rules") lists the deliberate differences.
 */
#define _POSIX_C_SOURCE 200809L
#include "bin_rules.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 8192 /* NumPy's ufunc buffer: add.reduce sums blocks of this many values */

enum rule_id { R_AUTO, R_FD, R_DOANE, R_SCOTT, R_STONE, R_RICE, R_STURGES, R_SQRT, R_COUNT };
static const char *const rule_names[R_COUNT] = {"auto",  "fd",   "doane",   "scott",
                                                "stone", "rice", "sturges", "sqrt"};

static int rule_index(const char *name)
{
    for (int i = 0; i < R_COUNT; ++i)
        if (strcmp(name, rule_names[i]) == 0)
            return i;
    return -1;
}

int gpuhist_bin_rule_known(const char *name)
{
    return name && rule_index(name) >= 0;
}

/* ---- the kept values ---------------------------------------------------------------------------- */

/* How values are held once read: every integer type but u64 as int64, u64 as uint64, f32 as
 * float, f64 as double. */
enum value_class { C_INT, C_U64, C_F32, C_F64 };

typedef struct rule_input {
    gpuhist_dtype dtype;
    enum value_class cls;
    const unsigned char *base; /* first sample of the histogrammed channel */
    uint64_t rows, row_length;
    size_t row_stride, pixel_bytes;
    int has_range;
    double lo, hi;   /* kept: lo <= x <= hi (integers compared as float64, as NumPy does) */
    float lo_f, hi_f; /* f32 data: NumPy compares in float32, with the bounds rounded */
    int np2;          /* 1: NumPy 2's rules, 0: NumPy 1.x's */
} rule_input;

typedef union block {
    int64_t i[BLOCK];
    uint64_t u[BLOCK];
    float f[BLOCK];
    double d[BLOCK];
} block;

typedef struct cursor {
    uint64_t row, pixel;
} cursor;

/* Fill `b` with the next kept values (a full block unless the data ends). @return how many. */
static size_t fill(const rule_input *in, cursor *c, block *b)
{
    size_t k = 0;
#define FILL_LOOP(T, FIELD, KEEP)                                                              \
    while (k < BLOCK && c->row < in->rows) {                                                   \
        const unsigned char *p = in->base + c->row * in->row_stride;                           \
        uint64_t j = c->pixel;                                                                 \
        for (; j < in->row_length && k < BLOCK; ++j) {                                         \
            T v;                                                                               \
            memcpy(&v, p + j * in->pixel_bytes, sizeof v);                                     \
            if (KEEP)                                                                          \
                b->FIELD[k++] = v;                                                             \
        }                                                                                      \
        if (j == in->row_length) {                                                             \
            c->row++;                                                                          \
            c->pixel = 0;                                                                      \
        } else {                                                                               \
            c->pixel = j;                                                                      \
        }                                                                                      \
    }
#define INT_KEEP (!in->has_range || ((double)v >= in->lo && (double)v <= in->hi))
    switch (in->dtype) {
    case GPUHIST_U8: FILL_LOOP(uint8_t, i, INT_KEEP) break;
    case GPUHIST_I8: FILL_LOOP(int8_t, i, INT_KEEP) break;
    case GPUHIST_U16: FILL_LOOP(uint16_t, i, INT_KEEP) break;
    case GPUHIST_I16: FILL_LOOP(int16_t, i, INT_KEEP) break;
    case GPUHIST_U32: FILL_LOOP(uint32_t, i, INT_KEEP) break;
    case GPUHIST_I32: FILL_LOOP(int32_t, i, INT_KEEP) break;
    case GPUHIST_I64: FILL_LOOP(int64_t, i, INT_KEEP) break;
    case GPUHIST_U64: FILL_LOOP(uint64_t, u, INT_KEEP) break;
    case GPUHIST_F32:
        FILL_LOOP(float, f, (in->has_range ? (v >= in->lo_f && v <= in->hi_f) : isfinite(v)))
        break;
    case GPUHIST_F64:
        FILL_LOOP(double, d, (in->has_range ? (v >= in->lo && v <= in->hi) : isfinite(v)))
        break;
    default: break;
    }
#undef INT_KEEP
#undef FILL_LOOP
    return k;
}

/* ---- NumPy's pairwise summation ------------------------------------------------------------------- */

/* numpy's pairwise_sum: fewer than 8 values added in order to 0; up to 128 in 8 running sums
 * combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest in order; above, two halves
 * (the first a multiple of 8 long). */
#define PAIRWISE(NAME, T)                                                                      \
    static T NAME(const T *a, size_t n)                                                        \
    {                                                                                          \
        if (n < 8) {                                                                           \
            T res = 0;                                                                         \
            for (size_t i = 0; i < n; ++i)                                                     \
                res += a[i];                                                                   \
            return res;                                                                        \
        } else if (n <= 128) {                                                                 \
            T r[8], res;                                                                       \
            size_t i;                                                                          \
            for (int j = 0; j < 8; ++j)                                                        \
                r[j] = a[j];                                                                   \
            for (i = 8; i < n - (n % 8); i += 8)                                               \
                for (int j = 0; j < 8; ++j)                                                    \
                    r[j] += a[i + (size_t)j];                                                  \
            res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));           \
            for (; i < n; ++i)                                                                 \
                res += a[i];                                                                   \
            return res;                                                                        \
        } else {                                                                               \
            size_t n2 = n / 2;                                                                 \
            n2 -= n2 % 8;                                                                      \
            return NAME(a, n2) + NAME(a + n2, n - n2);                                         \
        }                                                                                      \
    }
PAIRWISE(pairwise_d, double)
PAIRWISE(pairwise_f, float)
#undef PAIRWISE

/* ---- moments (scott, doane) ------------------------------------------------------------------------ */

/* What to sum in a pass over the kept values. */
enum moment_pass { M_VALUES, M_SQUARES, M_CUBES };

/* The kept values of one pass, transformed (x, (x - mean)^2 or ((x - mean) / sigma)^3), read
 * in order a few at a time. */
typedef struct term_reader {
    const rule_input *in;
    block *b;
    cursor c;
    size_t have, at; /* values in b, the next one to use */
    enum moment_pass what;
    double mean, sigma;
    float mean_f, sigma_f;
} term_reader;

static double term_d(const term_reader *r, double x)
{
    if (r->what == M_SQUARES) {
        double d = x - r->mean;
        return d * d;
    }
    if (r->what == M_CUBES)
        return pow((x - r->mean) / r->sigma, 3.0);
    return x;
}

static float term_f(const term_reader *r, float x)
{
    if (r->what == M_SQUARES) {
        float d = x - r->mean_f;
        return d * d;
    }
    if (r->what == M_CUBES)
        return powf((x - r->mean_f) / r->sigma_f, 3.0f);
    return x;
}

/* The next k (at most 128) terms into out_d (float64) or out_f (f32 data). */
static void next_terms(term_reader *r, size_t k, double *out_d, float *out_f)
{
    for (size_t i = 0; i < k;) {
        if (r->at == r->have) {
            r->have = fill(r->in, &r->c, r->b);
            r->at = 0;
        }
        size_t m = r->have - r->at; /* a run from the buffer */
        if (m > k - i)
            m = k - i;
        const size_t j = r->at;
        switch (r->in->cls) {
        case C_F32:
            for (size_t t = 0; t < m; ++t)
                out_f[i + t] = term_f(r, r->b->f[j + t]);
            break;
        case C_F64:
            for (size_t t = 0; t < m; ++t)
                out_d[i + t] = term_d(r, r->b->d[j + t]);
            break;
        case C_U64:
            for (size_t t = 0; t < m; ++t)
                out_d[i + t] = term_d(r, (double)r->b->u[j + t]);
            break;
        default:
            for (size_t t = 0; t < m; ++t)
                out_d[i + t] = term_d(r, (double)r->b->i[j + t]);
            break;
        }
        r->at += m;
        i += m;
    }
}

/* numpy's pairwise_sum over the next n terms of the reader, as one array (NumPy 2's
 * add.reduce of a contiguous array needs no buffer): the same recursion as PAIRWISE, its
 * leaves of at most 128 values read in order. */
#define STREAM_PAIRWISE(NAME, LEAF, T, OUT)                                                    \
    static T NAME(term_reader *r, uint64_t n)                                                  \
    {                                                                                          \
        if (n <= 128) {                                                                        \
            double vd[128];                                                                    \
            float vf[128];                                                                     \
            next_terms(r, (size_t)n, vd, vf);                                                  \
            return LEAF(OUT, (size_t)n);                                                       \
        }                                                                                      \
        uint64_t n2 = n / 2;                                                                   \
        n2 -= n2 % 8;                                                                          \
        T a = NAME(r, n2);                                                                     \
        return a + NAME(r, n - n2);                                                            \
    }
STREAM_PAIRWISE(stream_pairwise_d, pairwise_d, double, vd)
STREAM_PAIRWISE(stream_pairwise_f, pairwise_f, float, vf)
#undef STREAM_PAIRWISE

/*
 * One pass: sum over the n kept values of x (M_VALUES), (x - mean)^2 (M_SQUARES) or
 * ((x - mean) / sigma)^3 (M_CUBES). Integers are widened to float64 first (numpy's std/mean
 * use a float64 accumulator for them); f32 data is summed in float32 (mean_f/sigma_f), the rest
 * in float64 (mean/sigma). The order is NumPy's add.reduce: NumPy 1.x sums blocks of 8192
 * values pairwise and adds the block sums in order (its buffered reduction); NumPy 2 sums the
 * whole array pairwise, except integers widened to float64 (np.mean's sum of an integer
 * array), whose cast still goes through blocks of 8192.
 */
static void moment_sum(const rule_input *in, block *b, uint64_t n, enum moment_pass what,
                       double mean, double sigma, float mean_f, float sigma_f, double *sum_d,
                       float *sum_f)
{
    term_reader r;
    memset(&r, 0, sizeof r);
    r.in = in;
    r.b = b;
    r.what = what;
    r.mean = mean;
    r.sigma = sigma;
    r.mean_f = mean_f;
    r.sigma_f = sigma_f;
    const int whole = in->np2 && !(what == M_VALUES && (in->cls == C_INT || in->cls == C_U64));
    double acc = 0.0;
    float acc_f = 0.0f;
    if (whole && n > 0) {
        if (in->cls == C_F32)
            acc_f = stream_pairwise_f(&r, n);
        else
            acc = stream_pairwise_d(&r, n);
    } else {
        for (uint64_t done = 0; done < n;) {
            const uint64_t k = n - done < BLOCK ? n - done : BLOCK;
            if (in->cls == C_F32)
                acc_f += stream_pairwise_f(&r, k);
            else
                acc += stream_pairwise_d(&r, k);
            done += k;
        }
    }
    *sum_d = acc;
    *sum_f = acc_f;
}

typedef struct moments {
    double std;   /* np.std(x) (float32 data: the float32 value, widened) */
    double mean;  /* np.mean(x) */
    float std_f, mean_f;
} moments;

/* np.std(x) and np.mean(x) of the n kept values, as NumPy computes them. */
static void std_of(const rule_input *in, block *b, uint64_t n, moments *m)
{
    double s;
    float s_f;
    moment_sum(in, b, n, M_VALUES, 0, 0, 0, 0, &s, &s_f);
    const double dn = (double)n;
    if (in->cls == C_F32) {
        /* _var: the float32 sum (a one-element array) divided by the count (an intp scalar),
         * rounded back to float32. NumPy 1.x divides in float32 when the count fits in uint16
         * (value-based casting), else in float64; NumPy 2 always in float64 (the intp scalar
         * is a typed operand). np.mean and the final division are scalar: float64, rounded. */
        float var_mean = (!in->np2 && n < 65536u) ? s_f / (float)n : (float)((double)s_f / dn);
        double q;
        float q_f;
        moment_sum(in, b, n, M_SQUARES, 0, 0, var_mean, 0, &q, &q_f);
        float var = (float)((double)q_f / dn);
        m->std_f = sqrtf(var);
        m->mean_f = (float)((double)s_f / dn);
        m->std = m->std_f;
        m->mean = m->mean_f;
        return;
    }
    double mean = s / dn, q;
    float q_f;
    moment_sum(in, b, n, M_SQUARES, mean, 0, 0, 0, &q, &q_f);
    m->std = sqrt(q / dn);
    m->mean = mean;
    m->std_f = 0.0f;
    m->mean_f = 0.0f;
}

/* ---- order statistics and sorted values (fd, auto, stone) -------------------------------------- */

/*
 * The kept values in order: either a table of distinct values with the running count of values
 * up to each (8/16-bit data: counted per value), or a copy of every kept value (selected or
 * sorted in place). Integers (but u64) are held as int64, u64 as uint64, floats as double.
 */
typedef struct ordered {
    int table;            /* 1: vals_i[0..m) distinct, cum[i] = values <= vals_i[i] */
    enum value_class cls; /* C_INT, C_U64 or C_F64 (f32 values held exactly as doubles) */
    int64_t *vals_i;
    uint64_t *vals_u;
    double *vals_d;
    uint64_t *cum;
    uint64_t m; /* entries */
} ordered;

static void ordered_free(ordered *o)
{
    free(o->vals_i);
    free(o->vals_u);
    free(o->vals_d);
    free(o->cum);
    memset(o, 0, sizeof *o);
}

/* A small deterministic generator for the pivots. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* select_T(a, lo, hi, k): a[k] is the value of rank k of a[lo..hi), smaller ones before it,
 * larger after (three-way partitions around random pivots, then insertion sort). */
#define SELECT(NAME, T)                                                                        \
    static void NAME(T *a, size_t lo, size_t hi, size_t k, uint64_t *seed)                     \
    {                                                                                          \
        while (hi - lo > 16) {                                                                 \
            T x = a[lo + next_random(seed) % (hi - lo)], y = a[lo + next_random(seed) % (hi - lo)], \
              z = a[lo + next_random(seed) % (hi - lo)];                                       \
            T p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));       \
            size_t lt = lo, i = lo, gt = hi;                                                   \
            while (i < gt) {                                                                   \
                T v = a[i];                                                                    \
                if (v < p) {                                                                   \
                    a[i++] = a[lt];                                                            \
                    a[lt++] = v;                                                               \
                } else if (p < v) {                                                            \
                    a[i] = a[--gt];                                                            \
                    a[gt] = v;                                                                 \
                } else {                                                                       \
                    ++i;                                                                       \
                }                                                                              \
            }                                                                                  \
            if (k < lt)                                                                        \
                hi = lt;                                                                       \
            else if (k >= gt)                                                                  \
                lo = gt;                                                                       \
            else                                                                               \
                return;                                                                        \
        }                                                                                      \
        for (size_t i = lo + 1; i < hi; ++i) {                                                 \
            T v = a[i];                                                                        \
            size_t j = i;                                                                      \
            for (; j > lo && v < a[j - 1]; --j)                                                \
                a[j] = a[j - 1];                                                               \
            a[j] = v;                                                                          \
        }                                                                                      \
    }                                                                                          \
    static int NAME##_cmp(const void *pa, const void *pb)                                      \
    {                                                                                          \
        T a, b;                                                                                \
        memcpy(&a, pa, sizeof a);                                                              \
        memcpy(&b, pb, sizeof b);                                                              \
        return (b < a) - (a < b);                                                              \
    }
SELECT(select_i, int64_t)
SELECT(select_u, uint64_t)
SELECT(select_d, double)
#undef SELECT

/* Gather the kept values (count of them) into `o`: a value table for 8/16-bit data, else a copy
 * (checked against the memory available first). */
static gpuhist_status ordered_build(gpuhist_ctx *ctx, const rule_input *in, block *b,
                                    uint64_t count, const char *rule, ordered *o)
{
    memset(o, 0, sizeof *o);
    o->cls = in->cls == C_F32 ? C_F64 : in->cls;
    cursor c = {0, 0};
    size_t k;
    uint32_t small = gpuhist_small_value_count(in->dtype);
    if (small) {
        int64_t base = (in->dtype == GPUHIST_I8) ? -128 : (in->dtype == GPUHIST_I16) ? -32768 : 0;
        uint64_t *tally = calloc(small, sizeof *tally);
        if (!tally)
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "rule '%s': out of memory for a value table", rule);
        while ((k = fill(in, &c, b)) > 0)
            for (size_t i = 0; i < k; ++i)
                tally[b->i[i] - base]++;
        uint64_t m = 0;
        for (uint32_t v = 0; v < small; ++v)
            m += tally[v] != 0;
        o->table = 1;
        o->vals_i = malloc((size_t)(m ? m : 1) * sizeof *o->vals_i);
        o->cum = malloc((size_t)(m ? m : 1) * sizeof *o->cum);
        if (!o->vals_i || !o->cum) {
            free(tally);
            ordered_free(o);
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "rule '%s': out of memory for a value table", rule);
        }
        uint64_t run = 0;
        for (uint32_t v = 0; v < small; ++v)
            if (tally[v]) {
                run += tally[v];
                o->vals_i[o->m] = (int64_t)v + base;
                o->cum[o->m++] = run;
            }
        free(tally);
        return GPUHIST_OK;
    }
    const uint64_t bytes = count * 8u;
    const uint64_t avail = gpuhist_host_memory_available();
    if ((avail != 0 && bytes > avail) || count > SIZE_MAX / 8u)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "rule '%s': the percentiles need a copy of the %llu values (%.2f GiB of "
                            "host memory), only %.2f GiB is available: give a range, or use "
                            "'sturges', 'rice', 'sqrt', 'scott' or 'doane', which need no copy",
                            rule, (unsigned long long)count, (double)bytes / 1073741824.0,
                            (double)avail / 1073741824.0);
    void *copy = malloc((size_t)(count ? count : 1) * 8u);
    if (!copy)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "rule '%s': could not allocate the %.2f GiB copy of the values", rule,
                            (double)bytes / 1073741824.0);
    uint64_t at = 0;
    while ((k = fill(in, &c, b)) > 0) {
        for (size_t i = 0; i < k; ++i) {
            switch (in->cls) {
            case C_INT: ((int64_t *)copy)[at + i] = b->i[i]; break;
            case C_U64: ((uint64_t *)copy)[at + i] = b->u[i]; break;
            case C_F32: ((double *)copy)[at + i] = b->f[i]; break;
            case C_F64: ((double *)copy)[at + i] = b->d[i]; break;
            }
        }
        at += k;
    }
    o->m = at;
    if (o->cls == C_INT)
        o->vals_i = copy;
    else if (o->cls == C_U64)
        o->vals_u = copy;
    else
        o->vals_d = copy;
    return GPUHIST_OK;
}

/* The value of rank r (0-based) of a value table. */
static int64_t table_rank(const ordered *o, uint64_t r)
{
    uint64_t lo = 0, hi = o->m - 1; /* first entry whose running count exceeds r */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (o->cum[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return o->vals_i[lo];
}

/* The values of ranks r and r + 1 (r + 1 < m) of a copy, selected in place (ranks are asked in
 * increasing order: `from` is where the unsorted part starts). */
typedef struct pair {
    int64_t i[2];
    uint64_t u[2];
    double d[2];
} pair;

static void copy_ranks(ordered *o, size_t from, size_t r, pair *out, uint64_t *seed)
{
    size_t m = (size_t)o->m;
    if (o->cls == C_INT) {
        int64_t *a = o->vals_i;
        select_i(a, from, m, r, seed);
        int64_t nx = a[r];
        for (size_t i = r + 1; i < m; ++i)
            nx = (i == r + 1 || a[i] < nx) ? a[i] : nx;
        out->i[0] = a[r];
        out->i[1] = r + 1 < m ? nx : a[r];
    } else if (o->cls == C_U64) {
        uint64_t *a = o->vals_u;
        select_u(a, from, m, r, seed);
        uint64_t nx = a[r];
        for (size_t i = r + 1; i < m; ++i)
            nx = (i == r + 1 || a[i] < nx) ? a[i] : nx;
        out->u[0] = a[r];
        out->u[1] = r + 1 < m ? nx : a[r];
    } else {
        double *a = o->vals_d;
        select_d(a, from, m, r, seed);
        double nx = a[r];
        for (size_t i = r + 1; i < m; ++i)
            nx = (i == r + 1 || a[i] < nx) ? a[i] : nx;
        out->d[0] = a[r];
        out->d[1] = r + 1 < m ? nx : a[r];
    }
}

/* Wrap an integer difference to the sample type, as NumPy's subtract in that type does. */
static int64_t wrap_to_dtype(gpuhist_dtype dt, int64_t d)
{
    switch (dt) {
    case GPUHIST_I8: return (int8_t)(uint8_t)(uint64_t)d;
    case GPUHIST_I16: return (int16_t)(uint16_t)(uint64_t)d;
    case GPUHIST_I32: return (int32_t)(uint32_t)(uint64_t)d;
    default: return d; /* unsigned types: b >= a, no wrap; i64: wrapped by the subtraction */
    }
}

/*
 * np.percentile(x, [75, 25]) difference (the IQR) of the n kept values, 'linear' method:
 * index v = (n - 1) q, a = x[floor(v)], b = x[floor(v) + 1] (both the last value when
 * v >= n - 1), gamma = v - floor(v); diff = b - a in the sample type (wrapping for signed
 * integers, float32 for f32), then a + diff * gamma, or b - diff * (1 - gamma) when
 * gamma >= 0.5, in float64.
 */
static double iqr_of(const rule_input *in, ordered *o, uint64_t n)
{
    static const double qs[2] = {0.25, 0.75}; /* ascending, so selections narrow */
    double p[2];
    size_t from = 0;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (int j = 0; j < 2; ++j) {
        double v = (double)(n - 1) * qs[j];
        double prev = floor(v);
        uint64_t r = (uint64_t)prev;
        double gamma = v - prev;
        int clamp = v >= (double)(n - 1);
        if (clamp) {
            r = n - 1;
            gamma = v + 1.0; /* numpy: previous index -1 */
        }
        pair pr = {{0, 0}, {0, 0}, {0.0, 0.0}};
        if (o->table) {
            pr.i[0] = table_rank(o, r);
            pr.i[1] = clamp ? pr.i[0] : table_rank(o, r + 1);
        } else {
            copy_ranks(o, from, (size_t)r, &pr, &seed);
            from = (size_t)r;
            if (clamp)
                pr.i[1] = pr.i[0], pr.u[1] = pr.u[0], pr.d[1] = pr.d[0];
        }
        double a, b, diff;
        if (o->cls == C_INT) {
            a = (double)pr.i[0];
            b = (double)pr.i[1];
            int64_t d = (int64_t)((uint64_t)pr.i[1] - (uint64_t)pr.i[0]);
            if (in->dtype == GPUHIST_U8 || in->dtype == GPUHIST_U16 || in->dtype == GPUHIST_U32)
                diff = (double)d; /* b >= a: exact */
            else
                diff = (double)wrap_to_dtype(in->dtype, d);
        } else if (o->cls == C_U64) {
            a = (double)pr.u[0];
            b = (double)pr.u[1];
            diff = (double)(pr.u[1] - pr.u[0]);
        } else if (in->cls == C_F32) {
            float fa = (float)pr.d[0], fb = (float)pr.d[1];
            float fd = fb - fa;
            a = fa;
            b = fb;
            diff = fd;
        } else {
            a = pr.d[0];
            b = pr.d[1];
            diff = b - a;
        }
        p[j] = gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
    }
    return p[1] - p[0];
}

/* Kept values below e (or at most e when `inclusive`), compared as NumPy's histogram does: in
 * the edge type (edges of f32 data are floats, held exactly in `e`), integers widened to
 * float64. */
static uint64_t count_below(const ordered *o, double e, int inclusive)
{
    uint64_t lo = 0, hi = o->m; /* first index whose value is not below (not <=) e */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        double v = o->cls == C_INT   ? (double)o->vals_i[mid]
                   : o->cls == C_U64 ? (double)o->vals_u[mid]
                                     : o->vals_d[mid];
        int before = inclusive ? v <= e : v < e;
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (o->table)
        return lo ? o->cum[lo - 1] : 0;
    return lo;
}

/* The reference BLAS ddot (the BLAS this NumPy is linked with here): n mod 5 products first,
 * then five at a time, added left to right. */
static double ref_ddot(const double *x, size_t n)
{
    double t = 0.0;
    size_t m = n % 5, i;
    for (i = 0; i < m; ++i)
        t = t + x[i] * x[i];
    if (n < 5)
        return t;
    for (i = m; i < n; i += 5)
        t = t + x[i] * x[i] + x[i + 1] * x[i + 1] + x[i + 2] * x[i + 2] + x[i + 3] * x[i + 3] +
            x[i + 4] * x[i + 4];
    return t;
}

/* NumPy 2's np.linspace(float32(lower), float32(upper), bins + 1): the arithmetic in float32
 * (its bounds are float32 scalars), edge i = float(float(i * step) + lower) with step =
 * float(float(upper - lower) / bins) (when step is 0: float(float(i / bins) * delta) + lower),
 * the last edge upper. */
static double linspace_f32_edge(uint32_t bins, float lower, float upper, uint32_t i)
{
    if (i >= bins)
        return upper;
    const float delta = upper - lower, step = delta / (float)bins;
    float y = (float)i;
    if (step == 0.0f) {
        y = y / (float)bins;
        y = y * delta;
    } else {
        y = y * step;
    }
    return (float)(y + lower);
}

gpuhist_status gpuhist_linspace_f32(uint32_t bins, double lower, double upper, double *edges)
{
    if (bins == 0 || !edges || !isfinite((float)lower) || !isfinite((float)upper))
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i <= bins; ++i)
        edges[i] = linspace_f32_edge(bins, (float)lower, (float)upper, i);
    for (uint32_t i = 0; i < bins; ++i)
        if (!(edges[i] < edges[i + 1]))
            return GPUHIST_ERROR_INVALID_ARGUMENT;
    return GPUHIST_OK;
}

/*
 * NumPy's stone rule: for nbins = 1 .. max(100, int(sqrt(n))), p = counts / n over even bins
 * of [first, last] (last edge inclusive), J = (2 - (n + 1) p.p) / (ptp / nbins); the first
 * minimum wins; the width is ptp / nbins. NumPy 2 on f32 data: ptp / nbins in float32 (the
 * Python int is rounded to float32), and without a range the candidate histograms' edges are
 * float32 linspaces (their range is the float32 min and max).
 */
static gpuhist_status stone_width(gpuhist_ctx *ctx, const rule_input *in, ordered *o,
                                  uint64_t n, double ptp, double first, double last,
                                  double *width)
{
    const int f32_2 = in->np2 && in->cls == C_F32;
    if (!o->table) {
        size_t m = (size_t)o->m;
        if (o->cls == C_INT)
            qsort(o->vals_i, m, 8, select_i_cmp);
        else if (o->cls == C_U64)
            qsort(o->vals_u, m, 8, select_u_cmp);
        else
            qsort(o->vals_d, m, 8, select_d_cmp);
    }
    uint64_t upper = (uint64_t)sqrt((double)n);
    if (upper < 100)
        upper = 100;
    double *edges = malloc((size_t)(upper + 1) * sizeof *edges);
    double *p = malloc((size_t)upper * sizeof *p);
    if (!edges || !p) {
        free(edges);
        free(p);
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "rule 'stone': out of memory");
    }
    const double dn = (double)n, dn1 = (double)(n + 1);
    double best = 0.0;
    uint64_t best_k = 0;
    for (uint64_t k = 1; k <= upper; ++k) {
        gpuhist_status est;
        if (f32_2 && !in->has_range) {
            est = gpuhist_linspace_f32((uint32_t)k, first, last, edges);
        } else {
            gpuhist_bin_spec s = gpuhist_bins_even((uint32_t)k, first, last);
            s.last_edge_inclusive = 1;
            est = gpuhist_compute_edges(&s, in->dtype, edges);
        }
        if (est != GPUHIST_OK) {
            free(edges);
            free(p);
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "rule 'stone': %llu even bins over [%.17g, %.17g] do not have "
                                "increasing edges (the range is too narrow for the rule)",
                                (unsigned long long)k, first, last);
        }
        uint64_t below = count_below(o, edges[0], 0);
        for (uint64_t i = 0; i < k; ++i) {
            uint64_t next = count_below(o, edges[i + 1], i + 1 == k);
            p[i] = (double)(next - below) / dn;
            below = next;
        }
        double hh = f32_2 ? (double)((float)ptp / (float)k) : ptp / (double)k;
        double j = (2.0 - dn1 * ref_ddot(p, (size_t)k)) / hh;
        if (best_k == 0 || j < best) {
            best = j;
            best_k = k;
        }
    }
    free(edges);
    free(p);
    *width = f32_2 ? (double)((float)ptp / (float)best_k) : ptp / (double)best_k;
    return GPUHIST_OK;
}

/* ---- the call ------------------------------------------------------------------------------------ */

/* Minimum and maximum of the kept values, and how many there are (one host pass). */
typedef struct scan {
    uint64_t count;
    int64_t min_i, max_i;
    uint64_t min_u, max_u;
    double min_d, max_d; /* floats (f32 values exactly) */
} scan;

static void scan_values(const rule_input *in, block *b, scan *s)
{
    cursor c = {0, 0};
    size_t k;
    memset(s, 0, sizeof *s);
    while ((k = fill(in, &c, b)) > 0) {
        for (size_t i = 0; i < k; ++i) {
            int first = s->count == 0 && i == 0;
            switch (in->cls) {
            case C_INT:
                if (first || b->i[i] < s->min_i) s->min_i = b->i[i];
                if (first || b->i[i] > s->max_i) s->max_i = b->i[i];
                break;
            case C_U64:
                if (first || b->u[i] < s->min_u) s->min_u = b->u[i];
                if (first || b->u[i] > s->max_u) s->max_u = b->u[i];
                break;
            case C_F32:
                if (first || b->f[i] < s->min_d) s->min_d = b->f[i];
                if (first || b->f[i] > s->max_d) s->max_d = b->f[i];
                break;
            case C_F64:
                if (first || b->d[i] < s->min_d) s->min_d = b->d[i];
                if (first || b->d[i] > s->max_d) s->max_d = b->d[i];
                break;
            }
        }
        s->count += k;
    }
}

/* _ptp(x) in NumPy's type, as a double: integers exactly (unsigned difference), f32 in float32
 * (it may overflow to inf, as NumPy's does), f64 in double. */
static double ptp_of(const rule_input *in, const scan *s)
{
    switch (in->cls) {
    case C_INT: return (double)((uint64_t)s->max_i - (uint64_t)s->min_i);
    case C_U64: return (double)(s->max_u - s->min_u);
    case C_F32: {
        float hi = (float)s->max_d, lo = (float)s->min_d;
        float d = hi - lo;
        return d;
    }
    default: return s->max_d - s->min_d;
    }
}

static double log2_of_count(uint64_t n) { return log2((double)n); }

/* The width of the simple rules, from the count and ptp only. `f32` (NumPy 2's rules on f32
 * data): rice divides the float32 ptp by a Python float, which NEP 50 makes a float32 division;
 * sqrt and sturges divide by NumPy float64 scalars (np.sqrt, np.log2 of the count): float64. */
static double simple_width(int id, uint64_t n, double ptp, int f32)
{
    const double dn = (double)n;
    switch (id) {
    case R_SQRT: return ptp / sqrt(dn);
    case R_STURGES: return ptp / (log2_of_count(n) + 1.0);
    case R_RICE:
        if (f32)
            return (float)ptp / (float)(2.0 * pow(dn, 1.0 / 3));
        return ptp / (2.0 * pow(dn, 1.0 / 3));
    default: return 0.0;
    }
}

/* The rules that need more than count and ptp, on the host. */
static gpuhist_status host_width(gpuhist_ctx *ctx, int id, const rule_input *in, block *b,
                                 const scan *s, double first, double last, double *width)
{
    const uint64_t n = s->count;
    const double dn = (double)n, ptp = ptp_of(in, s);
    const int f32_2 = in->np2 && in->cls == C_F32; /* NumPy 2: float32 where NEP 50 keeps it */
    gpuhist_status st = GPUHIST_OK;
    switch (id) {
    case R_SQRT:
    case R_STURGES:
    case R_RICE: *width = simple_width(id, n, ptp, f32_2); break;
    case R_SCOTT: {
        moments m;
        std_of(in, b, n, &m);
        /* (24 * np.pi**0.5 / n)**(1/3) is a Python float; times np.std: float64 in NumPy
         * 1.x, float32 for f32 data in NumPy 2 (the Python float is rounded to float32) */
        const double c = pow(24.0 * pow(3.141592653589793, 0.5) /* np.pi**0.5 */ / dn, 1.0 / 3.0);
        *width = f32_2 ? (double)((float)c * m.std_f) : c * m.std;
        break;
    }
    case R_DOANE: {
        *width = 0.0;
        if (n <= 2)
            break;
        double sg1 = sqrt(6.0 * (double)(n - 2) / ((dn + 1.0) * (double)(n + 3)));
        moments m;
        std_of(in, b, n, &m);
        if (!(m.std > 0.0))
            break;
        double sum, g1;
        float sum_f;
        moment_sum(in, b, n, M_CUBES, m.mean, m.std, m.mean_f, m.std_f, &sum, &sum_f);
        if (in->cls == C_F32)
            g1 = (float)((double)sum_f / dn);
        else
            g1 = sum / dn;
        *width = ptp / (1.0 + log2_of_count(n) + log2(1.0 + fabs(g1) / sg1));
        break;
    }
    case R_FD:
    case R_AUTO:
    case R_STONE: {
        if (id == R_STONE && (n <= 1 || ptp == 0.0)) {
            *width = 0.0;
            break;
        }
        ordered o;
        st = ordered_build(ctx, in, b, n, rule_names[id], &o);
        if (st != GPUHIST_OK)
            break;
        if (id == R_STONE) {
            st = stone_width(ctx, in, &o, n, ptp, first, last, width);
        } else {
            double fd = 2.0 * iqr_of(in, &o, n) * pow(dn, -1.0 / 3.0);
            if (id == R_FD) {
                *width = fd;
            } else if (in->np2) {
                /* min(max(fd, sqrt / 2), sturges), Python's min and max (the first argument
                 * unless the second is strictly beyond it) */
                double half_sqrt = simple_width(R_SQRT, n, ptp, 0) / 2.0;
                double sturges = simple_width(R_STURGES, n, ptp, 0);
                double relaxed = half_sqrt > fd ? half_sqrt : fd;
                *width = sturges < relaxed ? sturges : relaxed;
            } else {
                /* min(fd, sturges), sturges when fd is 0 */
                double sturges = simple_width(R_STURGES, n, ptp, 0);
                *width = fd != 0.0 ? (sturges < fd ? sturges : fd) : sturges;
            }
        }
        ordered_free(&o);
        break;
    }
    }
    return st;
}

static int is_device_data(gpuhist_ctx *ctx, const gpuhist_samples *s)
{
    if (s->location == GPUHIST_MEMORY_DEVICE)
        return 1;
    uint64_t pixels = s->rows ? s->rows * s->row_length : s->count;
    return s->location == GPUHIST_MEMORY_AUTO && pixels > 0 &&
           ctx->ops->is_device_pointer(ctx, s->data);
}

/* Count, min and max of the finite values on the context's backend (sqrt, sturges, rice without
 * a range). @return OK, or the backend's error (the caller then tries the host). */
static gpuhist_status backend_scan(gpuhist_ctx *ctx, const gpuhist_samples *samples, double mn,
                                   double mx, uint64_t *count)
{
    gpuhist_bin_spec one = gpuhist_bins_from_minmax(1, mn, mx, 1);
    uint64_t c = 0;
    gpuhist_result r = gpuhist_result_host(&c);
    gpuhist_status st = gpuhist_histogram(ctx, samples, &one, &r);
    if (st == GPUHIST_OK)
        *count = c;
    return st;
}

gpuhist_status gpuhist_bins_rule_info(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                      const char *rule, const double *range,
                                      gpuhist_bin_spec *out, uint32_t max_bins,
                                      int numpy_major, gpuhist_rule_info *info)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (numpy_major != 0 && numpy_major != 1 && numpy_major != 2)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "numpy_major: %d is not 1 or 2 (NumPy 1.x's or NumPy 2's rules; 0: "
                            "the default, NumPy 2's)",
                            numpy_major);
    gpuhist_rule_info scratch_info;
    if (!info)
        info = &scratch_info;
    memset(info, 0, sizeof *info);
    if (!samples)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "samples: NULL");
    if (!out)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "bins rule: out is NULL");
    if (!rule)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "rule: NULL (auto, fd, doane, scott, stone, rice, sturges or sqrt)");
    const int id = rule_index(rule);
    if (id < 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "rule: '%.64s' is not a bin-count rule (auto, fd, doane, scott, "
                            "stone, rice, sturges or sqrt)",
                            rule);

    /* NumPy's rules on float16 data take float16 arithmetic in places (its moments, widths and
     * outer edges); those steps are not reproduced here yet, so half types are refused. */
    if (samples->dtype == GPUHIST_F16 || samples->dtype == GPUHIST_BF16)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "rule '%s': bin-count rules do not take %s samples yet (give the "
                            "number of bins, or widen the samples to f32)",
                            rule, gpuhist_dtype_name(samples->dtype));

    /* Validates the samples (every message names the field) and gives the finite min/max. */
    double mn = 0.0, mx = 0.0;
    int found = 0;
    gpuhist_status st = gpuhist_minmax(ctx, samples, &mn, &mx, &found);
    if (st != GPUHIST_OK)
        return st;
    if (samples->weights)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.weights: the bin-count rules take no weights (NumPy refuses "
                            "them too): find the bins from the samples without weights, then "
                            "histogram with the weights");
    const uint32_t channels = samples->channels ? samples->channels : 1;
    uint32_t channel = 0, active = 0;
    if (samples->channel_mask) {
        for (uint32_t c = 0; c < channels; ++c)
            if (samples->channel_mask & (1u << c)) {
                if (!active)
                    channel = c;
                ++active;
            }
    } else {
        active = samples->active_channels ? samples->active_channels : channels;
    }
    if (active != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.channels: a bin-count rule needs one histogrammed channel, "
                            "not %u (each channel would get its own bins, which one spec cannot "
                            "hold): set channel_mask to the channel to size the bins from",
                            active);

    /* The outer edges (NumPy's _get_outer_edges) and what is kept. */
    rule_input in;
    memset(&in, 0, sizeof in);
    in.dtype = samples->dtype;
    in.np2 = numpy_major != 1;
    in.cls = in.dtype == GPUHIST_F32 ? C_F32 : in.dtype == GPUHIST_F64 ? C_F64
             : in.dtype == GPUHIST_U64 ? C_U64 : C_INT;
    const size_t size = gpuhist_dtype_size(in.dtype);
    in.pixel_bytes = channels * size;
    in.base = (const unsigned char *)samples->data + (size_t)channel * size;
    if (samples->rows) {
        in.rows = samples->rows;
        in.row_length = samples->row_length;
        in.row_stride = samples->row_stride;
    } else {
        in.rows = 1;
        in.row_length = samples->count;
        in.row_stride = 0;
    }
    double first = 0.0, last = 1.0;
    if (range) {
        first = range[0];
        last = range[1];
        if (!isfinite(first) || !isfinite(last))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "range: [%g, %g] is not finite", first, last);
        if (first > last)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "range: lower bound %.17g is above upper bound %.17g", first,
                                last);
        if (first == last) {
            first -= 0.5;
            last += 0.5;
        }
        if (in.dtype == GPUHIST_F32 && (!isfinite((float)first) || !isfinite((float)last)))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "range: [%g, %g] is beyond the float32 range of f32 samples",
                                first, last);
        in.has_range = 1;
        in.lo = first;
        in.hi = last;
        in.lo_f = (float)first;
        in.hi_f = (float)last;
    }
    uint64_t cap = max_bins ? max_bins : GPUHIST_RULE_DEFAULT_MAX_BINS;
    if (cap > (1u << 31))
        cap = 1u << 31;

    /* Count and ptp: on the backend when that is all the rule needs, else on the host. */
    uint64_t count = 0;
    double ptp = 0.0, diff = 0.0, width = 0.0;
    const int simple = id == R_SQRT || id == R_STURGES || id == R_RICE;
    const int wide_int = (in.dtype == GPUHIST_I64 || in.dtype == GPUHIST_U64) &&
                         found && (fabs(mn) >= 0x1p53 || fabs(mx) >= 0x1p53);
    int done = 0;
    if (simple && !range && !wide_int) {
        if (found)
            st = backend_scan(ctx, samples, mn, mx, &count);
        if (st == GPUHIST_OK) {
            if (count > 0) {
                if (in.cls == C_F32) {
                    float d = (float)mx - (float)mn;
                    ptp = d;
                } else {
                    ptp = mx - mn; /* exact: integers below 2^53, or floats */
                }
                if (mn == mx) {
                    first = mn - 0.5;
                    last = mx + 0.5;
                    if (in.np2 && in.cls == C_F32) { /* float32 scalar - 0.5: float32 */
                        first = (float)first;
                        last = (float)last;
                    }
                    diff = last - first;
                    if (in.np2 && in.cls == C_F32)
                        diff = (float)diff;
                } else {
                    first = mn;
                    last = mx;
                    diff = ptp;
                }
                width = simple_width(id, count, ptp, in.np2 && in.cls == C_F32);
            }
            info->on_backend = 1;
            done = 1;
        } else if (is_device_data(ctx, samples)) {
            return st;
        }
    }
    if (!done) {
        if (is_device_data(ctx, samples))
            return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                                "samples.location: the '%s' rule%s reads the samples on the host; "
                                "copy them to host memory first (sqrt, sturges and rice without "
                                "a range run on the device)",
                                rule, range ? " with a range" : "");
        if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
            return GPUHIST_ERROR_BUSY;
        block *b = malloc(sizeof *b);
        if (!b) {
            __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "rule: out of memory");
        }
        scan s;
        scan_values(&in, b, &s);
        count = s.count;
        if (count > 0 && !range) {
            int equal;
            double lo, hi;
            switch (in.cls) {
            case C_INT: equal = s.min_i == s.max_i; lo = (double)s.min_i; hi = (double)s.max_i; break;
            case C_U64: equal = s.min_u == s.max_u; lo = (double)s.min_u; hi = (double)s.max_u; break;
            default: equal = s.min_d == s.max_d; lo = s.min_d; hi = s.max_d; break;
            }
            if (equal) {
                first = lo - 0.5;
                last = hi + 0.5;
                if (in.np2 && in.cls == C_F32) { /* float32 scalar - 0.5: float32 */
                    first = (float)first;
                    last = (float)last;
                }
                diff = last - first;
                if (in.np2 && in.cls == C_F32)
                    diff = (float)diff;
            } else {
                first = lo;
                last = hi;
                diff = ptp_of(&in, &s); /* _unsigned_subtract(max, min) in the data's type */
            }
        } else if (range) {
            diff = last - first;
        }
        if (count > 0)
            st = host_width(ctx, id, &in, b, &s, first, last, &width);
        free(b);
        __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
        if (st != GPUHIST_OK)
            return st;
    }

    info->count = count;
    info->width = width;
    info->first = first;
    info->last = last;
    uint64_t bins = 1;
    if (count > 0 && width != 0.0) {
        /* NumPy 2: an integer sample's width is at least 1 (info keeps the rule's own) */
        double w = width;
        if (in.np2 && (in.cls == C_INT || in.cls == C_U64) && w < 1.0)
            w = 1.0;
        /* delta / width: float32 in NumPy 2 when both are float32 (f32 data without a range,
         * a float32 width: rice, scott, stone); else float64 */
        const int f32_width = in.np2 && in.cls == C_F32 && !range &&
                              (id == R_RICE || id == R_SCOTT || id == R_STONE);
        const double q = f32_width ? (double)((float)diff / (float)w) : diff / w;
        info->quotient = q;
        if (!(q == q) || !isfinite(q))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "rule '%s': the bin count (%.17g - %.17g) / width %.17g is not "
                                "finite (NumPy fails here too)",
                                rule, last, first, w);
        const double c = ceil(q);
        if (!(c >= 1.0))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "rule '%s': the bin count ceil(%.17g) is below 1 (width %.17g; "
                                "NumPy fails or returns no bins here)",
                                rule, q, w);
        if (c > (double)cap)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "rule '%s': %.17g bins of width %.17g over [%.17g, %.17g] is more "
                                "than the %llu allowed (max_bins); give a range or another rule",
                                rule, c, w, first, last, (unsigned long long)cap);
        bins = (uint64_t)c;
    }
    /* Equal bounds past 2^52 (2^23 in float32) stay equal after the widening by 0.5: NumPy
     * returns edges that do not increase, which its histogram then refuses; refuse now. */
    if (!(first < last) ||
        (in.dtype == GPUHIST_F32 && !((float)first < (float)last)))
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "range: [%.17g, %.17g] is too narrow for even bins of %s samples "
                            "(min == max widened by 0.5 rounds back to one value; NumPy's "
                            "histogram refuses it too): give a wider range",
                            first, last, gpuhist_dtype_name(in.dtype));
    /* NumPy 2's float32 linspace (f32 data without a range) must increase too: NumPy 2
     * raises "Too many bins for data range" otherwise */
    if (in.np2 && in.cls == C_F32 && !range) {
        for (uint32_t i = 0; i < (uint32_t)bins; ++i)
            if (!(linspace_f32_edge((uint32_t)bins, (float)first, (float)last, i) <
                  linspace_f32_edge((uint32_t)bins, (float)first, (float)last, i + 1)))
                return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                    "rule '%s': %llu bins over [%.9g, %.9g] do not have "
                                    "increasing float32 edges (NumPy 2: too many bins for the "
                                    "data range): give a range or another rule",
                                    rule, (unsigned long long)bins, first, last);
    }
    *out = gpuhist_bins_even((uint32_t)bins, first, last);
    out->last_edge_inclusive = 1;
    /* NumPy 2's f32 edges without a range: its float32 linspace, a property of the spec */
    out->float32_linspace = in.np2 && in.cls == C_F32 && !range;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_bins_rule(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                 const char *rule, const double *range, gpuhist_bin_spec *out,
                                 uint32_t max_bins)
{
    return gpuhist_bins_rule_info(ctx, samples, rule, range, out, max_bins, 0, NULL);
}

gpuhist_status gpuhist_bins_rule_numpy(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                       const char *rule, const double *range,
                                       gpuhist_bin_spec *out, uint32_t max_bins, int numpy_major)
{
    return gpuhist_bins_rule_info(ctx, samples, rule, range, out, max_bins, numpy_major, NULL);
}
