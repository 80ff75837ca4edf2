/*
 * cpu-reference - the gold every other strategy is compared with, bin by bin.
 *
 * Mechanism: one plain loop over rows, pixels and histogrammed channels; each sample is read
 * with memcpy (any alignment) and located by a binary search over the reported edges
 * (gpuhist_reported_edge, i.e. the edges the semantics define), with exact comparisons:
 * floating samples are compared as doubles (exact for f32 and f64), 64-bit integers with
 * gpuhist_cmp_*_f64 (no rounding of the integer). INTEGER bins use 128-bit subtraction.
 * It deliberately does NOT use the estimate-and-fix mapping the fast strategies use, so the
 * property tests check that mapping against an independent route to the same answer.
 *
 * Limits: none (any dtype, kind, bin count, channels, ROI). Speed: slow on purpose
 * (O(log bins) edge evaluations per sample); about 20-50 M samples/s.
 * Seed: 001 §IV (the CPU baseline: bin[location[i]]++).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

/* How a sample compares with an edge: -1, 0, 1 for <, ==, >. */
static int compare(const gpuhist_sample_value *x, double edge)
{
    if (x->is_float)
        return x->f < edge ? -1 : (x->f > edge ? 1 : 0);
    if (x->is_unsigned64)
        return gpuhist_cmp_u64_f64(x->u, edge);
    return gpuhist_cmp_i64_f64(x->i, edge);
}

static uint32_t reference_slot(const gpuhist_plan *plan, const gpuhist_sample_value *x)
{
    const gpuhist_binmap *m = &plan->map;
    uint32_t bins = plan->bins;

    if (x->is_float && isnan(x->f))
        return GPUHIST_SLOT_NAN(bins);

    if (m->kind == GH_KIND_INTEGER) {
        __int128 v = x->is_unsigned64 ? (__int128)x->u : (__int128)x->i;
        __int128 d = v - (__int128)m->int_lower;
        if (d < 0)
            return GPUHIST_SLOT_UNDERFLOW(bins);
        return d < (__int128)bins ? (uint32_t)d : GPUHIST_SLOT_OVERFLOW(bins);
    }

    double first = gpuhist_reported_edge(m, plan->edges, 0);
    double last = gpuhist_reported_edge(m, plan->edges, bins);
    if (compare(x, first) < 0)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    int c = compare(x, last);
    if (c > 0 || (c == 0 && !m->last_inclusive))
        return GPUHIST_SLOT_OVERFLOW(bins);
    if (c == 0)
        return bins - 1;
    /* Largest i with E[i] <= x: E[lo] <= x < E[hi]. */
    uint32_t lo = 0, hi = bins;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (compare(x, gpuhist_reported_edge(m, plan->edges, mid)) < 0)
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

static gpuhist_status reference_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job,
                                    void *out)
{
    (void)ctx;
    (void)job;
    uint64_t *slots = out;
    for (uint64_t r = 0; r < plan->rows; ++r) {
        for (uint64_t px = 0; px < plan->row_length; ++px) {
            const unsigned char *pixel = gpuhist_pixel_ptr(plan, r, px);
            for (uint32_t k = 0; k < plan->active; ++k) {
                const unsigned char *p = pixel + plan->channel_index[k] * plan->sample_size;
                gpuhist_sample_value x = gpuhist_read_sample(plan->dtype, p);
                slots[(size_t)k * plan->slots + reference_slot(plan, &x)] += 1;
            }
        }
    }
    return GPUHIST_OK;
}

const gpuhist_strategy gpuhist_strategy_cpu_reference = {
    .name = "cpu-reference",
    .backend = GPUHIST_BACKEND_CPU,
    .seed = "001 §IV",
    .supports = "all dtypes, all bin kinds, any bins, channels, ROI",
    .summary = "plain loop + binary search over the edges with exact compares: the gold",
    .dtypes = GPUHIST_ALL_DTYPES,
    .kinds = GPUHIST_ALL_KINDS,
    .max_bins = 0,
    .caps = GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    .supports_fn = NULL,
    .run = reference_run,
};
