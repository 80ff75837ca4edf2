/*
 * histogramdd.c - gpuhist_histogramdd(): N-D (joint) histograms as a map and a 1-D count.
 *
 * Mechanism: the request is checked axis by axis (messages name "points.<field>" or
 * "axes[a].<field>"); each axis's auto range is resolved from the finite min and max of its
 * coordinates (ndmap.c, CPU threads); each axis gets the one-axis map gpuhist_histogram() would
 * use (ndmap.h, checked edge for edge against gpuhist_compute_edges). Then a stream on the same
 * context counts the joint slots as an INTEGER histogram of the product of the bins starting at 1
 * (slot 0 = nan, the underflow; product + 1 = out, the overflow; see ndmap.h): chunks of a few
 * million points are mapped by CPU threads straight into the stream's staging buffers (weighted:
 * into one buffer of ours, fed with the chunk's weights), so whatever counts a 1-D stream on this
 * context (any backend, strategy, several devices, exact weights) counts the N-D histogram, and
 * the counts go to the caller's buffer as they are.
 * Limits: product of the bins <= 2^31 (the counting's bin limit); host points; outliers dropped.
 */
#define _POSIX_C_SOURCE 200809L
#include "ndmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gpuhist_points gpuhist_points_interleaved(const void *data, gpuhist_dtype dtype, uint32_t dims,
                                          uint64_t count)
{
    gpuhist_points p;
    memset(&p, 0, sizeof p);
    p.data = data;
    p.dtype = dtype;
    p.dims = dims;
    p.count = count;
    p.location = GPUHIST_MEMORY_HOST;
    return p;
}

/* The checks of one axis's spec before its range is resolved (the 1-D rules, named per axis). */
static gpuhist_status check_axis(gpuhist_ctx *ctx, uint32_t a, const gpuhist_bin_spec *b,
                                 gpuhist_dtype dtype)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    if ((unsigned)b->kind > GPUHIST_BINS_INTEGER)
        return gpuhist_fail(ctx, bad, "axes[%u].kind: unknown bin kind %d", a, (int)b->kind);
    if (b->bins == 0)
        return gpuhist_fail(ctx, bad, "axes[%u].bins: the number of bins must be at least 1", a);
    if (b->bins > (1u << 31))
        return gpuhist_fail(ctx, bad, "axes[%u].bins: %u bins is too many (at most 2^31)", a,
                            b->bins);
    if (b->outliers == GPUHIST_OUTLIERS_CLAMP)
        return gpuhist_fail(ctx, bad,
                            "axes[%u].outliers: clamping is not supported in N-D histograms "
                            "(points outside an axis are dropped and tallied as out)",
                            a);
    if (b->outliers != GPUHIST_OUTLIERS_DROP)
        return gpuhist_fail(ctx, bad, "axes[%u].outliers: unknown outlier policy %d", a,
                            (int)b->outliers);
    switch (b->kind) {
    case GPUHIST_BINS_EVEN:
        if (b->auto_range)
            break;
        if (!isfinite(b->lower) || !isfinite(b->upper))
            return gpuhist_fail(ctx, bad, "axes[%u].range: [%g, %g] is not finite", a, b->lower,
                                b->upper);
        if (!(b->lower < b->upper))
            return gpuhist_fail(ctx, bad,
                                "axes[%u].range: lower bound %.17g must be below upper bound "
                                "%.17g",
                                a, b->lower, b->upper);
        if (!isfinite(b->upper - b->lower))
            return gpuhist_fail(ctx, bad, "axes[%u].range: upper - lower overflows a double", a);
        if (dtype == GPUHIST_F32 && (!isfinite((float)b->lower) || !isfinite((float)b->upper)))
            return gpuhist_fail(ctx, bad,
                                "axes[%u].range: [%g, %g] is beyond the float32 range of f32 "
                                "points",
                                a, b->lower, b->upper);
        break;
    case GPUHIST_BINS_EDGES:
        if (!b->edges)
            return gpuhist_fail(ctx, bad, "axes[%u].edges: NULL with %u bins", a, b->bins);
        for (uint32_t i = 0; i <= b->bins; ++i) {
            if (!isfinite(b->edges[i]))
                return gpuhist_fail(ctx, bad, "axes[%u].edges: e[%u] = %g is not finite", a, i,
                                    b->edges[i]);
            if (i > 0 && !(b->edges[i] > b->edges[i - 1]))
                return gpuhist_fail(ctx, bad,
                                    "axes[%u].edges: e[%u] = %.17g is not greater than e[%u] = "
                                    "%.17g (edges must increase strictly)",
                                    a, i, b->edges[i], i - 1, b->edges[i - 1]);
        }
        break;
    case GPUHIST_BINS_INTEGER:
        if (dtype == GPUHIST_F32 || dtype == GPUHIST_F64)
            return gpuhist_fail(ctx, bad,
                                "axes[%u].kind: integer bins need an integer coordinate type, "
                                "but points.dtype is %s (use even bins with a range)",
                                a, gpuhist_dtype_name(dtype));
        break;
    }
    return GPUHIST_OK;
}

/* Is this pointer device memory of the context (only CUDA answers yes)? */
static int on_device(gpuhist_ctx *ctx, const void *p)
{
    return p && ctx->ops->is_device_pointer && ctx->ops->is_device_pointer(ctx, p);
}

/* Everything before the counting, with the context held: checks, the axes' maps (auto ranges
 * resolved) and the result's description. `edge_buf` receives the buffers allocated here. */
static gpuhist_status prepare(gpuhist_ctx *ctx, const gpuhist_points *pts,
                              const gpuhist_bin_spec *axes, gpuhist_nd_result *res,
                              gpuhist_nd_map *map, double **edge_buf)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!pts)
        return gpuhist_fail(ctx, bad, "points: NULL");
    if (!axes)
        return gpuhist_fail(ctx, bad, "axes: NULL (one bin specification per axis)");
    if (!res)
        return gpuhist_fail(ctx, bad, "result: NULL");
    if (!res->counts)
        return gpuhist_fail(ctx, bad, "result.counts: NULL");
    if (pts->dims < 1 || pts->dims > GPUHIST_MAX_DIMS)
        return gpuhist_fail(ctx, bad, "points.dims: %u dimensions; 1 to %d are supported",
                            pts->dims, GPUHIST_MAX_DIMS);
    if ((unsigned)pts->dtype >= GPUHIST_DTYPE_COUNT)
        return gpuhist_fail(ctx, bad, "points.dtype: unknown coordinate type %d",
                            (int)pts->dtype);
    const uint32_t dims = pts->dims;
    const size_t size = gpuhist_dtype_size(pts->dtype);
    if (pts->count > (uint64_t)SIZE_MAX / ((uint64_t)dims * size))
        return gpuhist_fail(ctx, bad, "points.count: %llu points of %u coordinates overflow the "
                            "address space", (unsigned long long)pts->count, dims);
    if (pts->count > 0 && !pts->data)
        for (uint32_t a = 0; a < dims; ++a)
            if (!pts->columns[a])
                return gpuhist_fail(ctx, bad,
                                    "points.columns[%u]: NULL with %llu points (and points.data "
                                    "is NULL)",
                                    a, (unsigned long long)pts->count);
    if ((unsigned)pts->location > GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, bad, "points.location: unknown memory location %d",
                            (int)pts->location);
    int device = pts->location == GPUHIST_MEMORY_DEVICE;
    if (pts->location == GPUHIST_MEMORY_AUTO && pts->count > 0) {
        device = on_device(ctx, pts->data) || on_device(ctx, pts->weights);
        for (uint32_t a = 0; !pts->data && a < dims; ++a)
            device = device || on_device(ctx, pts->columns[a]);
    }
    if (device)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "points.location: N-D histograms read their points in host memory; "
                            "copy device points to the host first");
    if (pts->weights) {
        if (pts->weight_dtype != GPUHIST_F32 && pts->weight_dtype != GPUHIST_F64)
            return gpuhist_fail(ctx, bad,
                                "points.weight_dtype: weights must be f32 or f64, not %s",
                                gpuhist_dtype_name(pts->weight_dtype));
        if (!res->sums)
            return gpuhist_fail(ctx, bad,
                                "result.sums: NULL (a weighted histogram returns its sums there)");
    } else if (res->sums || res->sums_squared) {
        return gpuhist_fail(ctx, bad, "result.%s: given without weights (points.weights is NULL)",
                            res->sums ? "sums" : "sums_squared");
    }

    /* The axes: checks, then the product of the bins against the counting's limit. */
    for (uint32_t a = 0; a < dims; ++a) {
        gpuhist_status st = check_axis(ctx, a, &axes[a], pts->dtype);
        if (st != GPUHIST_OK)
            return st;
    }
    uint64_t total = 1;
    int huge = 0; /* the product overflows 64 bits */
    char shape[GPUHIST_MAX_DIMS * 14 + 1];
    size_t used = 0;
    for (uint32_t a = 0; a < dims; ++a) {
        if (!huge && total > UINT64_MAX / axes[a].bins)
            huge = 1;
        else
            total *= axes[a].bins;
        used += (size_t)snprintf(shape + used, sizeof shape - used, a ? " x %u" : "%u",
                                 axes[a].bins);
    }
    if (huge || total > ((uint64_t)1 << 31)) {
        char product[32];
        if (huge)
            snprintf(product, sizeof product, "more than 2^64");
        else
            snprintf(product, sizeof product, "%llu", (unsigned long long)total);
        return gpuhist_fail(ctx, bad,
                            "axes: %s = %s joint bins is too many (at most 2^31 = 2147483648)",
                            shape, product);
    }

    memset(map, 0, sizeof *map);
    map->dims = dims;
    map->dtype = pts->dtype;
    map->total = (uint32_t)total;
    const int threads = gpuhist_cpu_threads(ctx);
    for (uint32_t a = 0; a < dims; ++a) {
        gpuhist_nd_axis *ax = &map->axis[a];
        if (pts->data) {
            ax->base = (const unsigned char *)pts->data + (size_t)a * size;
            ax->stride = (size_t)dims * size;
        } else {
            ax->base = pts->columns[a];
            ax->stride = size;
        }
        gpuhist_bin_spec spec = axes[a];
        if (spec.kind == GPUHIST_BINS_EVEN && spec.auto_range) {
            double lo = 0.0, hi = 1.0;
            int found = 0;
            if (pts->count > 0)
                gpuhist_nd_minmax(map, a, pts->count, threads, &lo, &hi, &found);
            spec = gpuhist_bins_from_minmax(axes[a].bins, lo, hi, found);
            if (!isfinite(spec.upper - spec.lower))
                return gpuhist_fail(ctx, bad,
                                    "axes[%u].range: the data's range [%g, %g] overflows a "
                                    "double",
                                    a, spec.lower, spec.upper);
        }
        uint64_t edge_bytes = ((uint64_t)spec.bins + 1u) * sizeof(double);
        double *edges = res->edges[a];
        if (!edges) {
            gpuhist_status st = gpuhist_need_host_memory(ctx, edge_bytes, "the edges of an axis");
            if (st != GPUHIST_OK)
                return st;
            edges = edge_buf[a] = malloc((size_t)edge_bytes);
            if (!edges)
                return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                    "axes[%u]: no host memory for %u edges", a, spec.bins + 1u);
        }
        if (gpuhist_compute_edges(&spec, pts->dtype, edges) != GPUHIST_OK)
            return gpuhist_fail(ctx, bad,
                                "axes[%u].range: too many bins for the range: %u even bins over "
                                "[%.17g, %.17g] give %s edges that do not increase; use fewer "
                                "bins or a wider range",
                                a, spec.bins, spec.lower, spec.upper,
                                pts->dtype == GPUHIST_F32 ? "float32" : "f64");
        if (!gpuhist_nd_axis_map(&spec, pts->dtype, edges, &ax->map))
            return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                                "axes[%u]: internal error: the axis map's edges differ from "
                                "gpuhist_compute_edges",
                                a);
        ax->edges = spec.kind == GPUHIST_BINS_EDGES ? spec.edges : NULL;
        if (spec.kind == GPUHIST_BINS_EVEN && pts->dtype == GPUHIST_F32) {
            ax->fast_f32 = 1;
            gpuhist_fe_cert_of(&ax->map, &ax->cert); /* cached per spec */
        }
        res->bins[a] = spec.bins;
        res->lower[a] = edges[0];
        res->upper[a] = edges[spec.bins];
        res->last_edge_inclusive[a] = ax->map.last_inclusive;
    }
    res->dims = dims;
    for (uint32_t a = dims; a < GPUHIST_MAX_DIMS; ++a) {
        res->bins[a] = 0;
        res->lower[a] = res->upper[a] = 0.0;
        res->last_edge_inclusive[a] = 0;
    }
    res->bins_total = total;
    res->out = res->nan = 0;
    res->total = pts->count;
    return GPUHIST_OK;
}

/* Count the joint slots of every point on a stream of `ctx`. */
static gpuhist_status count_slots(gpuhist_ctx *ctx, const gpuhist_points *pts,
                                  const gpuhist_nd_map *map, gpuhist_nd_result *res)
{
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_U32, 0);
    layout.location = GPUHIST_MEMORY_HOST;
    layout.weights = pts->weights;
    layout.weight_dtype = pts->weight_dtype;
    gpuhist_bin_spec spec = gpuhist_bins_integer(map->total, 1);
    gpuhist_stream *st = NULL;
    gpuhist_status rc = gpuhist_stream_begin(ctx, &layout, &spec, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;

    /* The CPU backend counts a submitted chunk before submit returns: one staging buffer does
     * (the others overlap a device's copy and count of one chunk with the mapping of the next). */
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU && !ctx->members)
        gpuhist_stream_limit_slots(st, 1);
    const uint64_t chunk = gpuhist_nd_chunk_points();
    const int threads = gpuhist_cpu_threads(ctx);
    const size_t wsize = pts->weights ? gpuhist_dtype_size(pts->weight_dtype) : 0;
    uint32_t *own = NULL; /* weighted: our buffer (a weighted stream lends none) */
    if (pts->weights && pts->count > 0) {
        uint64_t n = pts->count < chunk ? pts->count : chunk;
        rc = gpuhist_need_host_memory(ctx, n * 4u, "the joint slots of a chunk of points");
        if (rc == GPUHIST_OK && !(own = malloc((size_t)n * 4u)))
            rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                              "no host memory for the joint slots of %llu points",
                              (unsigned long long)n);
    }
    for (uint64_t first = 0; rc == GPUHIST_OK && first < pts->count; first += chunk) {
        uint64_t n = pts->count - first < chunk ? pts->count - first : chunk;
        if (own) {
            gpuhist_nd_map_points(map, first, n, own, threads);
            rc = gpuhist_stream_feed_weighted(
                st, own, (const unsigned char *)pts->weights + first * wsize, n);
        } else {
            void *buf = NULL;
            rc = gpuhist_stream_buffer(st, (size_t)n * 4u, &buf);
            if (rc == GPUHIST_OK) {
                gpuhist_nd_map_points(map, first, n, buf, threads);
                rc = gpuhist_stream_submit(st, buf, n);
            }
        }
    }
    free(own);
    if (rc != GPUHIST_OK) {
        char msg[sizeof ctx->error];
        snprintf(msg, sizeof msg, "%s", gpuhist_stream_error(st));
        gpuhist_stream_abort(st);
        snprintf(ctx->error, sizeof ctx->error, "%s", msg);
        return rc;
    }
    gpuhist_result r = gpuhist_result_host(res->counts);
    r.sums = res->sums;
    r.sums_squared = res->sums_squared;
    rc = gpuhist_stream_finish(st, &r);
    if (rc != GPUHIST_OK)
        return rc;
    res->nan = r.underflow[0];
    res->out = r.overflow[0];
    res->backend = r.backend;
    res->strategy = r.strategy;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_histogramdd(gpuhist_ctx *ctx, const gpuhist_points *points,
                                   const gpuhist_bin_spec *axes, gpuhist_nd_result *result)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    const double t0 = gpuhist_now();
    /* Held while the request is checked and the auto ranges found; the stream then holds it. */
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    ctx->error[0] = '\0';
    gpuhist_nd_map map;
    double *edge_buf[GPUHIST_MAX_DIMS] = {0};
    gpuhist_status rc = prepare(ctx, points, axes, result, &map, edge_buf);
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a)
        free(edge_buf[a]);
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    if (rc != GPUHIST_OK)
        return rc;
    rc = count_slots(ctx, points, &map, result);
    if (rc != GPUHIST_OK) {
        /* A counting failure names the 1-D count: say what it was counting. */
        if (rc != GPUHIST_ERROR_BUSY) {
            char msg[sizeof ctx->error];
            snprintf(msg, sizeof msg, "%s", ctx->error);
            gpuhist_fail(ctx, rc, "counting the %llu joint bins: %s",
                         (unsigned long long)map.total, msg);
        }
        return rc;
    }
    result->seconds = gpuhist_now() - t0;
    return GPUHIST_OK;
}
