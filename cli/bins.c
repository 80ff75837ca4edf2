/*
 * bins.c - the bin specification of a 1-D run from the options and the samples' type: -e's
 * edges, --integer (one bin per value from LO; without -b up to the largest value, the type's
 * for 8/16-bit samples, the data's otherwise, as numpy.bincount), -r with -b (one bin per value
 * of an integer range of 8/16-bit samples without -b), one bin per value of 8/16-bit samples,
 * else 256 bins over the data's min:max (the auto range, found by the run); and -b RULE, a bin
 * count by one of NumPy's rules over the samples read whole (cli_rule_spec).
 *
 * Limits: --integer without -b refuses more than 2^26 bins (give -b). A rule takes one
 * histogrammed channel, no weights, and the data in memory (gpuhist_bins_rule_numpy's limits).
 */
#include "command.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_is_small_int(gpuhist_dtype t)
{
    return t == GPUHIST_U8 || t == GPUHIST_I8 || t == GPUHIST_U16 || t == GPUHIST_I16;
}

static void small_int_limits(gpuhist_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case GPUHIST_U8: *lo = 0; *hi = 255; break;
    case GPUHIST_I8: *lo = -128; *hi = 127; break;
    case GPUHIST_U16: *lo = 0; *hi = 65535; break;
    default: *lo = -32768; *hi = 32767; break;
    }
}

/* Largest histogrammed value of 32/64-bit integer data. @return 0 when there is none. Used for
 * --integer without -b. */
static int data_max_integer(const cli_input *in, uint32_t C, uint32_t A, int64_t *out,
                            int *above_i64)
{
    size_t size = gpuhist_dtype_size(in->dtype);
    const unsigned char *p = in->data;
    int found = 0;
    *above_i64 = 0;
    int64_t best = INT64_MIN;
    for (uint64_t i = 0; i < in->samples; ++i, p += size) {
        if (i % C >= A)
            continue;
        int64_t v;
        switch (in->dtype) {
        case GPUHIST_U32: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        case GPUHIST_I32: { int32_t x; memcpy(&x, p, 4); v = x; break; }
        case GPUHIST_U64: {
            uint64_t x;
            memcpy(&x, p, 8);
            if (x > (uint64_t)INT64_MAX) {
                *above_i64 = 1;
                return 1;
            }
            v = (int64_t)x;
            break;
        }
        case GPUHIST_I64: { memcpy(&v, p, 8); break; }
        default: { /* 8/16-bit and float types never come here */
            v = 0;
            break;
        }
        }
        if (!found || v > best)
            best = v;
        found = 1;
    }
    *out = best;
    return found;
}

/* The number of --integer bins without -b: up to the data's maximum, like numpy.bincount. */
#define CLI_MAX_AUTO_INTEGER_BINS (1u << 26)

static int integer_default_bins(const cli_options *o, const cli_input *in, uint32_t *bins)
{
    if (cli_is_small_int(in->dtype)) {
        int64_t lo, hi;
        small_int_limits(in->dtype, &lo, &hi);
        if (o->integer_lo > hi)
            return cli_error(CLI_EXIT_USAGE, "--integer %lld: above the largest %s value %lld",
                             (long long)o->integer_lo, gpuhist_dtype_name(in->dtype),
                             (long long)hi);
        double n = (double)hi - (double)o->integer_lo + 1.0;
        if (n > CLI_MAX_AUTO_INTEGER_BINS)
            return cli_error(CLI_EXIT_USAGE, "--integer %lld: too many bins up to %lld; give -b",
                             (long long)o->integer_lo, (long long)hi);
        *bins = (uint32_t)n;
        return CLI_EXIT_OK;
    }
    int64_t max;
    int above;
    if (!data_max_integer(in, o->channels, o->active, &max, &above) ||
        (!above && max < o->integer_lo)) {
        *bins = 1; /* nothing at or above LO: one (empty) bin, the smallest valid histogram */
        return CLI_EXIT_OK;
    }
    double n = above ? INFINITY : (double)max - (double)o->integer_lo + 1.0;
    if (n > CLI_MAX_AUTO_INTEGER_BINS)
        return cli_error(CLI_EXIT_USAGE,
                         "--integer %lld: %s's maximum value needs more than %u bins; give -b",
                         (long long)o->integer_lo, in->name, CLI_MAX_AUTO_INTEGER_BINS);
    *bins = (uint32_t)(max - o->integer_lo + 1);
    return CLI_EXIT_OK;
}

int cli_build_spec(const cli_options *o, const cli_input *in, const double *edges,
                      uint32_t edge_bins, gpuhist_bin_spec *spec)
{
    gpuhist_dtype t = in->dtype;
    if (o->bins_rule) /* (run_samples.c takes rules through cli_rule_spec) */
        return cli_error(CLI_EXIT_USAGE, "-b %s: a bin-count rule takes raw, .npy or text "
                                         "samples, not images", o->bins_rule);
    if (edges) {
        *spec = gpuhist_bins_edges(edge_bins, edges);
    } else if (o->have_integer) {
        if (t == GPUHIST_F32 || t == GPUHIST_F64)
            return cli_error(CLI_EXIT_USAGE,
                             "--integer needs integer samples, %s holds %s (give -t, or use "
                             "-r LO:HI -b N for unit-wide bins)",
                             in->name, gpuhist_dtype_name(t));
        uint32_t bins = o->bins;
        if (!o->have_bins) {
            int rc = integer_default_bins(o, in, &bins);
            if (rc)
                return rc;
        }
        *spec = gpuhist_bins_integer(bins, o->integer_lo);
    } else if (o->have_range) {
        uint32_t bins = o->bins;
        if (!o->have_bins) {
            bins = 256;
            /* One bin per value of an integer range of 8/16-bit data. */
            double w = o->hi - o->lo;
            if (cli_is_small_int(t) && o->lo == floor(o->lo) && o->hi == floor(o->hi) && w >= 1 &&
                w <= 65536)
                bins = (uint32_t)w;
        }
        *spec = gpuhist_bins_even(bins, o->lo, o->hi);
    } else if (cli_is_small_int(t)) {
        int64_t lo, hi;
        small_int_limits(t, &lo, &hi);
        if (o->have_bins)
            *spec = gpuhist_bins_even(o->bins, (double)lo, (double)hi + 1.0);
        else
            *spec = gpuhist_bins_integer((uint32_t)(hi - lo + 1), lo);
    } else {
        *spec = gpuhist_bins_auto(o->have_bins ? o->bins : 256);
        /* f32 data: NumPy 2's float32 edges by default, NumPy 1.x's with --numpy-rules 1 */
        spec->float32_linspace = o->numpy_rules != 1;
    }
    spec->outliers = o->outliers;
    if (o->last_inclusive)
        spec->last_edge_inclusive = 1;
    return CLI_EXIT_OK;
}

int cli_rule_spec(const cli_options *o, gpuhist_ctx *ctx, const char *name,
                  const gpuhist_samples *s, gpuhist_bin_spec *spec)
{
    const double range[2] = {o->lo, o->hi};
    const int major = o->numpy_rules ? o->numpy_rules : 2;
    gpuhist_status st = gpuhist_bins_rule_numpy(ctx, s, o->bins_rule,
                                                o->have_range ? range : NULL, spec, 0, major);
    if (st != GPUHIST_OK)
        return cli_error(st == GPUHIST_ERROR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : CLI_EXIT_FAIL,
                         "%s: -b %s: %s", name, o->bins_rule, gpuhist_last_error(ctx));
    /* NumPy 2's rules give f32 data without a range NumPy 2's float32 edges (np.linspace of the
     * float32 min and max): the spec says so (float32_linspace), still fast even bins */
    const int f32_edges = spec->float32_linspace && s->dtype == GPUHIST_F32;
    spec->outliers = o->outliers;
    if (o->last_inclusive)
        spec->last_edge_inclusive = 1;
    if (o->verbose)
        cli_note("bins: -b %s (NumPy %d's rule) gave %u bins over [%.17g, %.17g]%s", o->bins_rule,
                 major, spec->bins, spec->lower, spec->upper, f32_edges ? " (float32 edges)" : "");
    return CLI_EXIT_OK;
}
