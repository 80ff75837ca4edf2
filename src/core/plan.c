/*
 * plan.c - validation of a request and its plan: sample geometry and channels, the bin spec,
 * the bin map (binmap.h) and its edges, where data and counts live, the auto range, and the
 * strategy. Every message names the field at fault.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "fast_even.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- validation and the plan ---------------------------------------------------------------------- */

static int is_float_dtype(gpuhist_dtype d)
{
    return d == GPUHIST_F32 || d == GPUHIST_F64 || d == GPUHIST_F16 || d == GPUHIST_BF16;
}

/* Samples whose EVEN edges are float values (binmap.h: edge_is_f32). */
static int float_edge_dtype(gpuhist_dtype d)
{
    return d == GPUHIST_F32 || d == GPUHIST_F16 || d == GPUHIST_BF16;
}

/* Geometry and channels of the samples. */
static gpuhist_status plan_samples(gpuhist_ctx *ctx, const gpuhist_samples *s, gpuhist_plan *p)
{
    if ((unsigned)s->dtype >= GPUHIST_DTYPE_COUNT)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.dtype: unknown sample type %d", (int)s->dtype);
    /* The CUDA strategies that sum weights do not read half-precision samples (the unweighted
     * ones that count 16-bit values do). */
    if ((s->dtype == GPUHIST_F16 || s->dtype == GPUHIST_BF16) && s->weights && ctx &&
        ctx->backend == GPUHIST_BACKEND_CUDA)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "samples.dtype: weighted %s samples are not supported by the cuda "
                            "backend yet (the cpu backend takes them)",
                            gpuhist_dtype_name(s->dtype));
    p->dtype = s->dtype;
    p->sample_size = gpuhist_dtype_size(s->dtype);
    p->channels = s->channels ? s->channels : 1;
    if (p->channels > GPUHIST_MAX_CHANNELS)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.channels: %u channels, at most %d are supported",
                            p->channels, GPUHIST_MAX_CHANNELS);
    for (uint32_t c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        p->channel_slot[c] = -1;
    p->active = 0;
    if (s->channel_mask) {
        if (s->channel_mask >> p->channels)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.channel_mask: 0x%x names a channel beyond the %u "
                                "channels",
                                s->channel_mask, p->channels);
        for (uint32_t c = 0; c < p->channels; ++c)
            if (s->channel_mask & (1u << c))
                p->channel_index[p->active++] = c;
    } else {
        uint32_t a = s->active_channels ? s->active_channels : p->channels;
        if (a > p->channels)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.active_channels: %u is more than the %u channels", a,
                                p->channels);
        for (uint32_t c = 0; c < a; ++c)
            p->channel_index[p->active++] = c;
    }
    for (uint32_t k = 0; k < p->active; ++k)
        p->channel_slot[p->channel_index[k]] = (int32_t)k;

    uint64_t pixel_bytes = (uint64_t)p->channels * p->sample_size;
    if (s->rows == 0) {
        p->rows = 1;
        p->row_length = s->count;
        if (s->count > UINT64_MAX / pixel_bytes)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.count: %llu pixels overflow the address space",
                                (unsigned long long)s->count);
        p->row_stride = (size_t)(s->count * pixel_bytes);
        p->contiguous = 1;
    } else {
        p->rows = s->rows;
        p->row_length = s->row_length;
        if (s->row_length > UINT64_MAX / pixel_bytes)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.row_length: %llu pixels overflow the address space",
                                (unsigned long long)s->row_length);
        uint64_t row_bytes = s->row_length * pixel_bytes;
        if ((uint64_t)s->row_stride < row_bytes)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.row_stride: %zu bytes is smaller than a row (%llu "
                                "pixels x %u channels x %zu bytes = %llu bytes)",
                                s->row_stride, (unsigned long long)s->row_length, p->channels,
                                p->sample_size, (unsigned long long)row_bytes);
        if (s->rows > 1 && (uint64_t)s->row_stride > UINT64_MAX / (s->rows - 1))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.row_stride: %zu x %llu rows overflows the address space",
                                s->row_stride, (unsigned long long)s->rows);
        p->row_stride = s->row_stride;
        p->contiguous = (s->rows == 1 || (uint64_t)s->row_stride == row_bytes);
    }
    if (p->rows > 1 && p->row_length > UINT64_MAX / p->rows)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.rows: rows x row_length overflows");
    p->pixels = p->row_length * p->rows;
    if (p->pixels == 0)
        p->rows = p->row_length == 0 ? 1 : p->rows;
    if (!s->data && p->pixels > 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.data: NULL with %llu samples",
                            (unsigned long long)p->pixels);
    p->data = s->data;
    if (s->weights) {
        if (s->weight_dtype != GPUHIST_F32 && s->weight_dtype != GPUHIST_F64)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "samples.weight_dtype: weights must be f32 or f64, not %s",
                                gpuhist_dtype_name(s->weight_dtype));
        p->weights = s->weights;
        p->weight_dtype = s->weight_dtype;
        p->weight_limbs = s->weight_dtype == GPUHIST_F32 ? GH_XSUM_LIMBS_F32 : GH_XSUM_LIMBS_F64;
        p->weight_bias = s->weight_dtype == GPUHIST_F32 ? GH_XSUM_BIAS_F32 : GH_XSUM_BIAS_F64;
    }
    return GPUHIST_OK;
}

/* The field names of a 1-D call's spec in messages. */
static const gpuhist_spec_fields spec_fields_1d = {
    "bins.kind", "bins", "bins.outliers", "range", "edges",
    "samples.dtype", "sample", "samples", NULL,
};

/* The bin spec, before auto range is resolved: one check for a 1-D call's spec and each N-D
 * axis (histogramdd.c), its messages naming the fields as `f` says. */
gpuhist_status gpuhist_check_spec(gpuhist_ctx *ctx, const gpuhist_bin_spec *b,
                                  gpuhist_dtype dtype, const gpuhist_spec_fields *f)
{
    if ((unsigned)b->kind > GPUHIST_BINS_INTEGER)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "%s: unknown bin kind %d", f->kind, (int)b->kind);
    if (b->bins == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "%s: the number of bins must be at least 1", f->bins);
    if (b->bins > (1u << 31))
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "%s: %u bins is too many (at most 2^31)", f->bins, b->bins);
    if (f->clamp_refused && b->outliers == GPUHIST_OUTLIERS_CLAMP)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "%s: %s", f->outliers,
                            f->clamp_refused);
    if ((unsigned)b->outliers > GPUHIST_OUTLIERS_CLAMP)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "%s: unknown outlier policy %d", f->outliers, (int)b->outliers);
    switch (b->kind) {
    case GPUHIST_BINS_EVEN:
        if (b->auto_range)
            break;
        if (!isfinite(b->lower))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: lower bound %g is not finite", f->range, b->lower);
        if (!isfinite(b->upper))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: upper bound %g is not finite", f->range, b->upper);
        if (!(b->lower < b->upper))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: lower bound %.17g must be below upper bound %.17g",
                                f->range, b->lower, b->upper);
        if (!isfinite(b->upper - b->lower))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: upper - lower overflows a double (%g - %g)", f->range,
                                b->upper, b->lower);
        /* f32 (and bf16) samples use float edges, f16 samples float16 edges: a bound past the
         * edge type's largest value would become an infinite edge. */
        if (float_edge_dtype(dtype) &&
            !isfinite(dtype == GPUHIST_F16 ? gpuhist_round_f16(b->lower) : (float)b->lower))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: lower bound %g is beyond the %s range of %s %s", f->range,
                                b->lower, dtype == GPUHIST_F16 ? "float16" : "float32",
                                gpuhist_dtype_name(dtype), f->values);
        if (float_edge_dtype(dtype) &&
            !isfinite(dtype == GPUHIST_F16 ? gpuhist_round_f16(b->upper) : (float)b->upper))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: upper bound %g is beyond the %s range of %s %s", f->range,
                                b->upper, dtype == GPUHIST_F16 ? "float16" : "float32",
                                gpuhist_dtype_name(dtype), f->values);
        break;
    case GPUHIST_BINS_EDGES:
        if (!b->edges)
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: NULL with %u bins", f->edges, b->bins);
        for (uint32_t i = 0; i <= b->bins; ++i) {
            if (!isfinite(b->edges[i]))
                return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                    "%s: e[%u] = %g is not finite", f->edges, i, b->edges[i]);
            if (i > 0 && !(b->edges[i] > b->edges[i - 1]))
                return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                    "%s: e[%u] = %.17g is not greater than e[%u] = %.17g "
                                    "(edges must increase strictly)",
                                    f->edges, i, b->edges[i], i - 1, b->edges[i - 1]);
        }
        break;
    case GPUHIST_BINS_INTEGER:
        /* Bins past INT64_MAX are fine: u64 samples can land there. */
        if (is_float_dtype(dtype))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "%s: integer bins need an integer %s type, but %s is %s (use "
                                "even bins with a range)",
                                f->kind, f->value_type, f->dtype_field,
                                gpuhist_dtype_name(dtype));
        break;
    }
    return GPUHIST_OK;
}

void gpuhist_binmap_of(const gpuhist_bin_spec *b, gpuhist_dtype dtype, double lower,
                       double upper, int last_inclusive, gpuhist_binmap *m)
{
    memset(m, 0, sizeof *m);
    m->kind = (gh_i32)b->kind;
    m->dtype = (gh_i32)dtype;
    m->bins = b->bins;
    m->last_inclusive = last_inclusive && b->kind != GPUHIST_BINS_INTEGER;
    m->edge_is_f32 = (b->kind == GPUHIST_BINS_EVEN && float_edge_dtype(dtype));
    m->edge_is_f16 = (b->kind == GPUHIST_BINS_EVEN && dtype == GPUHIST_F16);
    m->edge_linspace_f32 =
        (b->kind == GPUHIST_BINS_EVEN && dtype == GPUHIST_F32 && b->float32_linspace);
    switch (b->kind) {
    case GPUHIST_BINS_EVEN:
        if (m->edge_linspace_f32) { /* the linspace runs between the float bounds */
            lower = (double)(float)lower;
            upper = (double)(float)upper;
        }
        m->lower = lower;
        m->upper = upper;
        m->delta = upper - lower;
        m->step = m->delta / (double)b->bins;
        m->step_is_zero = (m->step == 0.0);
        m->scale = (double)b->bins / m->delta;
        m->lower_f = m->edge_is_f16 ? gpuhist_round_f16(lower) : (float)lower;
        m->upper_f = m->edge_is_f16 ? gpuhist_round_f16(upper) : (float)upper;
        m->scale_f = (float)m->scale;
        if (m->edge_linspace_f32) { /* NumPy 2's float32 linspace (binmap.h) */
            m->delta_f = m->upper_f - m->lower_f;
            m->step_f = m->delta_f / (float)b->bins;
            m->step_is_zero = (m->step_f == 0.0f);
        }
        break;
    case GPUHIST_BINS_EDGES:
        m->lower = b->edges[0];
        m->upper = b->edges[b->bins];
        break;
    case GPUHIST_BINS_INTEGER:
        m->int_lower = b->integer_lower;
        m->lower = (double)b->integer_lower;
        m->upper = (double)b->integer_lower + (double)b->bins;
        break;
    }
}

/* Fill plan->map (and the plan's bins, edges, outliers) for a resolved spec. */
static void plan_binmap(gpuhist_plan *p, const gpuhist_bin_spec *b, double lower, double upper,
                        int last_inclusive)
{
    gpuhist_binmap_of(b, p->dtype, lower, upper, last_inclusive, &p->map);
    if (b->kind == GPUHIST_BINS_EDGES)
        p->edges = b->edges;
    p->bins = b->bins;
    p->slots = b->bins + GPUHIST_EXTRA_SLOTS;
    p->outliers = b->outliers;
}

/*
 * NumPy refuses even bins whose edges, in the edge type, do not increase strictly ("Too many bins
 * for data range"): subnormal ranges, or more bins than representable values in the range. So do
 * we, for explicit and auto ranges alike. Each computed edge is within 3.1u*M + one subnormal of
 * lower + i*step in double (M = max(|lower|, |upper|), u = 2^-53), plus u_e*M + one subnormal of
 * the edge type after rounding to float; a step above 8 (u_e*M + its smallest subnormal) therefore
 * proves the edges increase without looking at them. The float32 linspace (edge_linspace_f32):
 * i * step_f + lower_f rounded twice in float is within 3u_e*M (+ two half subnormals) of its
 * exact value, and step_f * bins within 2.1u_e*|upper - lower| of upper - lower, so a finite
 * step_f above the same bound proves it too (a normal one: a subnormal step_f is off by up to
 * half a subnormal, which bins * step_f multiplies). Only ranges that fail this test, all of
 * them tiny, crowded or (float32 linspace) overflowing float, pay the scan of every edge, once
 * per spec (remembered with the spec's fast_even.h certificate).
 */
/* The first i >= 1 whose reported edge is not above edge i - 1; 0 when every edge increases. */
static uint32_t first_flat_edge(const gpuhist_binmap *m)
{
    double prev = gpuhist_reported_edge(m, NULL, 0);
    for (uint32_t i = 1; i <= m->bins; ++i) {
        double e = gpuhist_reported_edge(m, NULL, i);
        if (!(e > prev))
            return i;
        prev = e;
    }
    return 0;
}

static int even_edges_increase(const gpuhist_binmap *m)
{
    return first_flat_edge(m) == 0;
}

static gpuhist_status check_even_edges(gpuhist_ctx *ctx, const gpuhist_plan *p)
{
    const gpuhist_binmap *m = &p->map;
    if (m->kind != GH_KIND_EVEN)
        return GPUHIST_OK;
    const double mag = fmax(fabs(m->lower), fabs(m->upper));
    const double u = m->edge_is_f16 ? 0x1p-11 : m->edge_is_f32 ? 0x1p-24 : 0x1p-53;
    const double tiny = m->edge_is_f16 ? 0x1p-24 : m->edge_is_f32 ? 0x1p-149 : 0x1p-1074;
    /* the float32 linspace's bound needs a normal step_f (a subnormal one is off by up to half
     * a subnormal, bins times over) and a finite delta_f */
    const double step = !m->edge_linspace_f32 ? m->step
                        : isfinite(m->delta_f) && m->step_f >= 0x1p-126f ? (double)m->step_f
                                                                          : 0.0;
    if (!m->step_is_zero && step > 8.0 * (u * mag + tiny))
        return GPUHIST_OK;
    /* the scan, once per spec (f32 [0, 1) with 2^24 bins is crowded: ~20 ms a call otherwise);
     * a spec that fails is scanned again for the message */
    if (gpuhist_fe_edges_increase(m, even_edges_increase))
        return GPUHIST_OK;
    const uint32_t i = first_flat_edge(m);
    if (i == 0)
        return GPUHIST_OK;
    if (m->edge_linspace_f32)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "range: too many bins for the range: NumPy 2's float32 edges of %u "
                            "even bins over [%.9g, %.9g] (float32_linspace) do not increase "
                            "(e[%u] = %.9g, e[%u] = %.9g; NumPy 2 refuses them too); use fewer "
                            "bins, a range, or NumPy 1.x's edges (float32_linspace = 0)",
                            m->bins, m->lower, m->upper, i - 1,
                            gpuhist_reported_edge(m, NULL, i - 1), i,
                            gpuhist_reported_edge(m, NULL, i));
    return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                        "range: too many bins for the range: %u even bins over [%.17g, %.17g] "
                        "give %s edges that do not increase (e[%u] = %.17g, e[%u] = %.17g); use "
                        "fewer bins or a wider range",
                        m->bins, m->lower, m->upper,
                        m->edge_is_f16 ? "float16" : m->edge_is_f32 ? "float32" : "f64", i - 1,
                        gpuhist_reported_edge(m, NULL, i - 1), i,
                        gpuhist_reported_edge(m, NULL, i));
}

gpuhist_status gpuhist_compute_edges(const gpuhist_bin_spec *spec, gpuhist_dtype dtype,
                                     double *edges)
{
    if (!spec || !edges || (unsigned)dtype >= GPUHIST_DTYPE_COUNT)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    gpuhist_status st = gpuhist_check_spec(NULL, spec, dtype, &spec_fields_1d);
    if (st != GPUHIST_OK)
        return st;
    if (spec->kind == GPUHIST_BINS_EVEN && spec->auto_range)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    gpuhist_plan p;
    memset(&p, 0, sizeof p);
    p.dtype = dtype;
    plan_binmap(&p, spec, spec->lower, spec->upper, spec->last_edge_inclusive);
    if ((st = check_even_edges(NULL, &p)) != GPUHIST_OK)
        return st;
    for (uint32_t i = 0; i <= spec->bins; ++i)
        edges[i] = gpuhist_reported_edge(&p.map, p.edges, i);
    return GPUHIST_OK;
}


/* Where the samples live: plan->data_on_device. */
static gpuhist_status plan_location(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                    gpuhist_plan *plan)
{
    switch (samples->location) {
    case GPUHIST_MEMORY_AUTO:
        plan->data_on_device =
            plan->pixels > 0 && ctx->ops->is_device_pointer(ctx, samples->data);
        break;
    case GPUHIST_MEMORY_HOST: plan->data_on_device = 0; break;
    case GPUHIST_MEMORY_DEVICE: plan->data_on_device = 1; break;
    default:
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.location: unknown memory location %d",
                            (int)samples->location);
    }
    if (plan->data_on_device && ctx->backend != GPUHIST_BACKEND_CUDA)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "samples.location: device memory needs the CUDA backend (context "
                            "is %s)",
                            gpuhist_backend_name(ctx->backend));
    return GPUHIST_OK;
}

/* NumPy's auto range: the finite min and max, last edge inclusive; no finite value gives
 * [0, 1], min == max gives [min - 0.5, max + 0.5]. Backends may see -0.0 and 0.0 in either
 * order: +0.0 is reported either way. */
gpuhist_bin_spec gpuhist_bins_from_minmax(uint32_t bins, double min, double max, int found)
{
    double lower = min + 0.0, upper = max + 0.0;
    if (!found) {
        lower = 0.0;
        upper = 1.0;
    } else if (lower == upper) {
        lower -= 0.5;
        upper += 0.5;
    }
    gpuhist_bin_spec s = gpuhist_bins_even(bins, lower, upper);
    s.last_edge_inclusive = 1;
    s.float32_linspace = 1;
    return s;
}

static gpuhist_status minmax_held(gpuhist_ctx *ctx, const gpuhist_samples *samples, double *min,
                                  double *max, int *found)
{
    ctx->error[0] = '\0';
    if (!samples || !min || !max || !found)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "minmax: samples, min, max and found must not be NULL");
    gpuhist_plan plan;
    memset(&plan, 0, sizeof plan);
    gpuhist_status st = plan_samples(ctx, samples, &plan);
    if (st == GPUHIST_OK)
        st = plan_location(ctx, samples, &plan);
    if (st != GPUHIST_OK)
        return st;
    gpuhist_bin_spec b = gpuhist_bins_auto(1);
    plan_binmap(&plan, &b, 0.0, 1.0, 1);
    *found = 0;
    if (plan.pixels == 0)
        return GPUHIST_OK;
    st = ctx->ops->minmax(ctx, &plan, min, max, found);
    *min += 0.0;
    *max += 0.0;
    return st;
}

gpuhist_status gpuhist_minmax(gpuhist_ctx *ctx, const gpuhist_samples *samples, double *min,
                              double *max, int *found)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    gpuhist_status st = ctx->ops->requests /* several devices */
                            ? ctx->ops->requests->minmax(ctx, samples, min, max, found)
                            : minmax_held(ctx, samples, min, max, found);
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    return st;
}

/* ---- the whole plan -------------------------------------------------------------------------------- */

gpuhist_status gpuhist_prepare(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                               const gpuhist_bin_spec *spec, gpuhist_memory counts_location,
                               int stream, gpuhist_plan *plan, const gpuhist_strategy **strategy)
{
    memset(plan, 0, sizeof *plan);
    gpuhist_status st = plan_samples(ctx, samples, plan);
    if (st != GPUHIST_OK)
        return st;
    st = gpuhist_check_spec(ctx, spec, plan->dtype, &spec_fields_1d);
    if (st != GPUHIST_OK)
        return st;

    /* Where the data and the counts live. */
    if ((st = plan_location(ctx, samples, plan)) != GPUHIST_OK)
        return st;
    if ((unsigned)counts_location > GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.counts_location: unknown memory location %d",
                            (int)counts_location);
    if (counts_location == GPUHIST_MEMORY_DEVICE &&
        ctx->backend != GPUHIST_BACKEND_CUDA)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.counts_location: device memory needs the CUDA backend "
                            "(context is %s)",
                            gpuhist_backend_name(ctx->backend));

    /* Resolve the range. */
    double lower = spec->lower, upper = spec->upper;
    int last_inclusive = spec->last_edge_inclusive != 0;
    if (spec->kind == GPUHIST_BINS_EVEN && spec->auto_range && stream)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "range: a streamed histogram needs its range before the first "
                            "chunk: auto range is not possible (find the data's min and max "
                            "first, e.g. with a pass over the data, then give the range)");
    if (spec->kind == GPUHIST_BINS_EVEN && spec->auto_range) {
        /* NumPy's rules: finite min/max, last edge inclusive, empty -> [0, 1],
         * min == max -> [min - 0.5, max + 0.5]. */
        plan_binmap(plan, spec, 0.0, 1.0, 1); /* provisional, for minmax() */
        int found = 0;
        st = ctx->ops->minmax(ctx, plan, &lower, &upper, &found);
        if (st != GPUHIST_OK)
            return st;
        gpuhist_bin_spec r = gpuhist_bins_from_minmax(spec->bins, lower + 0.0, upper + 0.0, found);
        lower = r.lower;
        upper = r.upper;
        last_inclusive = 1;
        if (!isfinite(upper - lower))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "range: the data's range [%g, %g] overflows a double", lower,
                                upper);
    }
    plan_binmap(plan, spec, lower, upper, last_inclusive);
    if ((st = check_even_edges(ctx, plan)) != GPUHIST_OK)
        return st;

    /* The strategy: the one forced by name, or the backend's auto policy (select.c). A stream's
     * size is unknown: it is chosen for as a large input (chunks are large). */
    uint64_t pixels = plan->pixels;
    if (stream)
        plan->pixels = (uint64_t)1 << 28;
    const gpuhist_strategy *s = gpuhist_select(ctx, plan);
    plan->pixels = pixels;
    if (!s && ctx->forced)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "strategy: %s cannot histogram %s samples into %u %s bins with "
                            "%u channel(s)%s (it supports: %s)",
                            ctx->forced->name, gpuhist_dtype_name(plan->dtype), plan->bins,
                            spec->kind == GPUHIST_BINS_EVEN    ? "even"
                            : spec->kind == GPUHIST_BINS_EDGES ? "explicit-edge"
                                                               : "integer",
                            plan->channels, plan->weights ? " and weights" : "",
                            ctx->forced->supports);
    if (!s && plan->weights)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s: no strategy of this backend sums weights (the CPU backend "
                            "does)",
                            gpuhist_backend_name(ctx->backend));
    if (!s)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s: no strategy can histogram %s samples into %u bins",
                            gpuhist_backend_name(ctx->backend), gpuhist_dtype_name(plan->dtype),
                            plan->bins);
    *strategy = s;
    return GPUHIST_OK;
}
