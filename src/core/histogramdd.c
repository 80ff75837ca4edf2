/*
 * histogramdd.c - gpuhist_histogramdd(): N-D (joint) histograms as a map and a 1-D count.
 *
 * gpuhist_nd_stream_*(): the same fed in chunks.
 *
 * Mechanism: the request is checked axis by axis (messages name "points.<field>" or
 * "axes[a].<field>"); each axis's auto range is resolved from the finite min and max of its
 * coordinates (ndmap.c, CPU threads; one-shot calls only); each axis gets the one-axis map
 * gpuhist_histogram() would use (ndmap.h, checked edge for edge against gpuhist_compute_edges).
 * Then a 1-D stream on the same context counts the joint slots as an INTEGER histogram of the
 * product of the bins starting at 1 (slot 0 = nan, the underflow; product + 1 = out, the
 * overflow; see ndmap.h): chunks of a few million points are mapped by CPU threads straight into
 * the stream's staging buffers (weighted: into one buffer of ours, fed with the chunk's weights),
 * so whatever counts a 1-D stream on this context (any backend, strategy, several devices, exact
 * weights) counts the N-D histogram, and the counts go to the caller's buffer as they are. The
 * one-shot call is the N-D stream fed once; a stream's result equals the one-shot call's on the
 * concatenation of its chunks, bit for bit (the 1-D stream's guarantee).
 * Points in device memory (CUDA, one device, unweighted) are mapped on the device by the
 * backend's nd_map operation instead (src/cuda/nd_map.cu, the same ndmap.h definitions), and the
 * 1-D stream counts its device buffer of slots; their auto ranges come from gpuhist_minmax.
 * A one-shot call's stored DEVICE counts are offered to the backend's fused count at begin, which
 * may count the joint bins straight into them (CUDA's two-pass count of past 2^17 joint bins:
 * no copy of the counts at the end); not when they share bytes with the points.
 * gpuhist_points_minmax(): the first pass of an auto range over points that come in parts: the
 * asked axes of host points in one pass (ndmap.c, CPU threads, on every backend, as the one-shot
 * call's auto range), device points axis by axis through gpuhist_minmax (the backends have no
 * multi-axis min/max).
 * Limits: product of the bins <= 2^31 (the counting's bin limit); outliers dropped; a stream
 * needs its ranges at begin.
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

/* Axis a's spec: the 1-D checks (plan.c) with the axis's field names; N-D refuses CLAMP. */
static gpuhist_status check_axis(gpuhist_ctx *ctx, uint32_t a, const gpuhist_bin_spec *b,
                                 gpuhist_dtype dtype)
{
    char kind[32], bins[32], outliers[32], range[32], edges[32];
    snprintf(kind, sizeof kind, "axes[%u].kind", a);
    snprintf(bins, sizeof bins, "axes[%u].bins", a);
    snprintf(outliers, sizeof outliers, "axes[%u].outliers", a);
    snprintf(range, sizeof range, "axes[%u].range", a);
    snprintf(edges, sizeof edges, "axes[%u].edges", a);
    const gpuhist_spec_fields f = {
        kind, bins, outliers, range, edges, "points.dtype", "coordinate", "points",
        "clamping is not supported in N-D histograms (points outside an axis are dropped and "
        "tallied as out)",
    };
    return gpuhist_check_spec(ctx, b, dtype, &f);
}

/* Is this pointer device memory of the context (only CUDA answers yes)? */
static int on_device(gpuhist_ctx *ctx, const void *p)
{
    return p && ctx->ops->is_device_pointer && ctx->ops->is_device_pointer(ctx, p);
}

/* Points in device memory: mapped by the backend's nd_map (CUDA, one device), unweighted. */
static gpuhist_status check_device_points(gpuhist_ctx *ctx, const gpuhist_points *pts)
{
    if (!ctx->ops->nd_map)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "points.location: N-D points in device memory need a context of the "
                            "CUDA backend on one device; copy them to the host for this one");
    if (pts->weights)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "points.weights: weighted N-D histograms of points in device memory "
                            "are not supported; copy the points and weights to the host");
    return GPUHIST_OK;
}

/* Are the coordinates of the axes in `axes` (a mask) in device memory (given, or detected for
 * AUTO)? */
static int axes_on_device(gpuhist_ctx *ctx, const gpuhist_points *pts, uint32_t axes)
{
    if (pts->location == GPUHIST_MEMORY_DEVICE)
        return 1;
    if (pts->location != GPUHIST_MEMORY_AUTO || pts->count == 0)
        return 0;
    int device = on_device(ctx, pts->data);
    for (uint32_t a = 0; !pts->data && a < pts->dims; ++a)
        device = device || ((axes >> a & 1u) && on_device(ctx, pts->columns[a]));
    return device;
}

/* Are the points (coordinates or weights) in device memory (given, or detected for AUTO)? */
static int points_on_device(gpuhist_ctx *ctx, const gpuhist_points *pts)
{
    return axes_on_device(ctx, pts, ~0u) ||
           (pts->location == GPUHIST_MEMORY_AUTO && pts->count > 0 &&
            on_device(ctx, pts->weights));
}

/* What every use of points checks first: present, dims, dtype, location. */
static gpuhist_status check_kind(gpuhist_ctx *ctx, const gpuhist_points *pts)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!pts)
        return gpuhist_fail(ctx, bad, "points: NULL");
    if (pts->dims < 1 || pts->dims > GPUHIST_MAX_DIMS)
        return gpuhist_fail(ctx, bad, "points.dims: %u dimensions; 1 to %d are supported",
                            pts->dims, GPUHIST_MAX_DIMS);
    if ((unsigned)pts->dtype >= GPUHIST_DTYPE_COUNT)
        return gpuhist_fail(ctx, bad, "points.dtype: unknown coordinate type %d",
                            (int)pts->dtype);
    if ((unsigned)pts->location > GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, bad, "points.location: unknown memory location %d",
                            (int)pts->location);
    return GPUHIST_OK;
}

/* The layout of points (everything but the data): dims, dtype, location, weight type. */
static gpuhist_status check_layout(gpuhist_ctx *ctx, const gpuhist_points *pts)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    gpuhist_status kind = check_kind(ctx, pts);
    if (kind != GPUHIST_OK)
        return kind;
    if (pts->location == GPUHIST_MEMORY_DEVICE) {
        gpuhist_status st = check_device_points(ctx, pts);
        if (st != GPUHIST_OK)
            return st;
    }
    if (pts->weights && pts->weight_dtype != GPUHIST_F32 && pts->weight_dtype != GPUHIST_F64)
        return gpuhist_fail(ctx, bad, "points.weight_dtype: weights must be f32 or f64, not %s",
                            gpuhist_dtype_name(pts->weight_dtype));
    return GPUHIST_OK;
}

/* The points themselves: the count fits the address space, every axis has data, host memory. */
static gpuhist_status check_data(gpuhist_ctx *ctx, const gpuhist_points *pts)
{
    const uint32_t dims = pts->dims;
    const size_t size = gpuhist_dtype_size(pts->dtype);
    if (pts->count > (uint64_t)SIZE_MAX / ((uint64_t)dims * size))
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "points.count: %llu points of %u coordinates overflow the address "
                            "space",
                            (unsigned long long)pts->count, dims);
    if (pts->count > 0 && !pts->data)
        for (uint32_t a = 0; a < dims; ++a)
            if (!pts->columns[a])
                return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                    "points.columns[%u]: NULL with %llu points (and points.data "
                                    "is NULL)",
                                    a, (unsigned long long)pts->count);
    if (pts->location == GPUHIST_MEMORY_AUTO && points_on_device(ctx, pts))
        return check_device_points(ctx, pts);
    /* declared device memory is checked: the map kernel would fault on anything else */
    if (pts->location == GPUHIST_MEMORY_DEVICE && pts->count > 0) {
        if (pts->data && !on_device(ctx, pts->data))
            return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                "points.data: not device memory of the context's device "
                                "(points.location is DEVICE)");
        for (uint32_t a = 0; !pts->data && a < dims; ++a)
            if (!on_device(ctx, pts->columns[a]))
                return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                    "points.columns[%u]: not device memory of the context's "
                                    "device (points.location is DEVICE)",
                                    a);
    }
    return GPUHIST_OK;
}

/* Every axis's spec, then the product of the bins against the counting's limit. */
static gpuhist_status check_axes(gpuhist_ctx *ctx, const gpuhist_points *pts,
                                 const gpuhist_bin_spec *axes, int stream, uint32_t *total_out)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!axes)
        return gpuhist_fail(ctx, bad, "axes: NULL (one bin specification per axis)");
    const uint32_t dims = pts->dims;
    for (uint32_t a = 0; a < dims; ++a) {
        gpuhist_status st = check_axis(ctx, a, &axes[a], pts->dtype);
        if (st != GPUHIST_OK)
            return st;
        if (stream && axes[a].kind == GPUHIST_BINS_EVEN && axes[a].auto_range)
            return gpuhist_fail(ctx, bad,
                                "axes[%u].range: a streamed histogram needs its ranges before "
                                "the first chunk: auto range is not possible (find each axis's "
                                "min and max first, then give the ranges)",
                                a);
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
    *total_out = (uint32_t)total;
    return GPUHIST_OK;
}

/* Where the result's buffers are (counts_location, device_stats) and what accumulating needs. */
static gpuhist_status check_result_memory(gpuhist_ctx *ctx, const gpuhist_nd_result *res,
                                          int weighted)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    if ((unsigned)res->counts_location > GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, bad, "result.counts_location: unknown memory location %d",
                            (int)res->counts_location);
    if (res->counts_location == GPUHIST_MEMORY_DEVICE) {
        if (!on_device(ctx, res->counts))
            return gpuhist_fail(ctx, bad,
                                "result.counts: not device memory of the context's device "
                                "(result.counts_location is DEVICE)");
        if (res->device_stats && !on_device(ctx, res->device_stats))
            return gpuhist_fail(ctx, bad,
                                "result.device_stats: not device memory of the context's device");
    } else if (res->device_stats) {
        return gpuhist_fail(ctx, bad,
                            "result.device_stats: given with counts in host memory (device "
                            "tallies go with result.counts_location DEVICE)");
    }
    if (weighted && res->accumulate && !res->weight_state)
        return gpuhist_fail(ctx, bad,
                            "result.weight_state: NULL with result.accumulate (weighted sums "
                            "accumulate exactly in the state: give one, zeroed before the first "
                            "call)");
    return GPUHIST_OK;
}

/* Do `total` counts at `counts` share bytes with the points' coordinates? (Then they are not
 * counted into directly: the points must be read whole before the counts are written.) */
static int counts_overlap_points(const gpuhist_points *pts, const uint64_t *counts,
                                 uint64_t total)
{
    const uintptr_t c0 = (uintptr_t)counts, c1 = c0 + total * 8u;
    const uint64_t size = gpuhist_dtype_size(pts->dtype);
    for (uint32_t a = 0; a < (pts->data ? 1u : pts->dims); ++a) {
        const uintptr_t p0 = (uintptr_t)(pts->data ? pts->data : pts->columns[a]);
        const uintptr_t p1 = p0 + pts->count * size * (pts->data ? pts->dims : 1u);
        if (p0 < c1 && c0 < p1)
            return 1;
    }
    return 0;
}

/* ---- the N-D stream: the axes' maps and a 1-D stream of joint slots ---------------------------- */

struct gpuhist_nd_stream {
    gpuhist_ctx *ctx;
    gpuhist_nd_map map;               /* axes' maps; bases and strides are each chunk's */
    double *edges[GPUHIST_MAX_DIMS];  /* each axis's edges (EDGES axes map with them) */
    gpuhist_stream *st;               /* the 1-D count of the joint slots */
    int device;                       /* points in device memory: mapped by ops->nd_map */
    int fused;                        /* device points counted by ops->nd_count (no 1-D
                                         stream; the context held by this stream) */
    gpuhist_memory counts_location;   /* of the result: DEVICE only for a one-shot call */
    uint64_t *direct;                 /* the one-shot call's stored DEVICE counts, offered to
                                         the fused count at begin, or NULL */
    const void *weighted;             /* non-NULL: weighted (fed with feed_weighted) */
    gpuhist_dtype weight_dtype;
    uint32_t *own;                    /* weighted: the slots of a chunk (no lent buffers) */
    uint64_t own_points;
    uint64_t points;                  /* fed so far */
    double t0;
    gpuhist_status failed;            /* first error, sticky */
    char error[512];
};

static void nd_free(gpuhist_nd_stream *nd)
{
    if (nd->fused)
        __atomic_clear(&nd->ctx->busy, __ATOMIC_RELEASE);
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a)
        free(nd->edges[a]);
    free(nd->own);
    free(nd);
}

static gpuhist_status nd_fail(gpuhist_nd_stream *nd, gpuhist_status st)
{
    if (nd->failed == GPUHIST_OK) {
        nd->failed = st;
        snprintf(nd->error, sizeof nd->error, "%s", nd->ctx->error);
    }
    return st;
}

/* The axes' maps for resolved specs (no auto range left), into a new N-D stream object (the
 * 1-D stream not begun yet). With the context held. */
static gpuhist_status nd_build(gpuhist_ctx *ctx, const gpuhist_points *layout,
                               const gpuhist_bin_spec *resolved, uint32_t total,
                               gpuhist_nd_stream **out)
{
    *out = NULL;
    gpuhist_nd_stream *nd = calloc(1, sizeof *nd);
    if (!nd)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "N-D: out of host memory");
    nd->ctx = ctx;
    nd->t0 = gpuhist_now();
    nd->map.dims = layout->dims;
    nd->map.dtype = layout->dtype;
    nd->map.total = total;
    nd->weighted = layout->weights;
    nd->weight_dtype = layout->weight_dtype;
    for (uint32_t a = 0; a < layout->dims; ++a) {
        const gpuhist_bin_spec *spec = &resolved[a];
        gpuhist_nd_axis *ax = &nd->map.axis[a];
        uint64_t edge_bytes = ((uint64_t)spec->bins + 1u) * sizeof(double);
        gpuhist_status st = gpuhist_need_host_memory(ctx, edge_bytes, "the edges of an axis");
        if (st == GPUHIST_OK && !(nd->edges[a] = malloc((size_t)edge_bytes)))
            st = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                              "axes[%u]: no host memory for %u edges", a, spec->bins + 1u);
        if (st == GPUHIST_OK && gpuhist_compute_edges(spec, layout->dtype, nd->edges[a]) !=
                                    GPUHIST_OK)
            st = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                              "axes[%u].range: too many bins for the range: %u even bins over "
                              "[%.17g, %.17g] give %s edges that do not increase; use fewer "
                              "bins or a wider range",
                              a, spec->bins, spec->lower, spec->upper,
                              layout->dtype == GPUHIST_F16 ? "float16"
                              : layout->dtype == GPUHIST_F32 || layout->dtype == GPUHIST_BF16
                                  ? "float32"
                                  : "f64");
        if (st == GPUHIST_OK && !gpuhist_nd_axis_map(spec, layout->dtype, nd->edges[a], &ax->map))
            st = gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                              "axes[%u]: internal error: the axis map's edges differ from "
                              "gpuhist_compute_edges",
                              a);
        if (st != GPUHIST_OK) {
            nd_free(nd);
            return st;
        }
        ax->edges = spec->kind == GPUHIST_BINS_EDGES ? nd->edges[a] : NULL;
        if (spec->kind == GPUHIST_BINS_EVEN && layout->dtype == GPUHIST_F32) {
            ax->fast_f32 = 1;
            gpuhist_fe_cert_of(&ax->map, &ax->cert); /* cached per spec */
        }
    }
    *out = nd;
    return GPUHIST_OK;
}

/* Device points counted in one pass by the backend (nd_count) when the tests allow it. */
static int nd_fused_on = 1;
void gpuhist_nd_set_device_fused(int on) { nd_fused_on = on; }

/* Begin the count of the joint slots on nd->ctx (which takes the context): the backend's fused
 * count of device points when it takes the map, else a 1-D stream. */
static gpuhist_status nd_open(gpuhist_nd_stream *nd)
{
    gpuhist_ctx *ctx = nd->ctx;
    if (nd->device && ctx->ops->nd_count && nd_fused_on) {
        if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
            return GPUHIST_ERROR_BUSY;
        gpuhist_status rc = ctx->ops->nd_count(ctx, &nd->map, 0, 0, nd->direct);
        if (rc == GPUHIST_OK) {
            nd->fused = 1;
            return GPUHIST_OK;
        }
        __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
        if (rc != GPUHIST_ERROR_UNSUPPORTED)
            return rc;
        ctx->error[0] = '\0'; /* too many joint bins for it: the 1-D count below */
    }
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_U32, 0);
    layout.location = nd->device ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    layout.weights = nd->weighted;
    layout.weight_dtype = nd->weight_dtype;
    gpuhist_bin_spec spec = gpuhist_bins_integer(nd->map.total, 1);
    const gpuhist_memory where =
        nd->counts_location == GPUHIST_MEMORY_DEVICE ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    gpuhist_status rc = gpuhist_stream_begin(ctx, &layout, &spec, where, &nd->st);
    if (rc != GPUHIST_OK)
        return rc;
    /* The CPU backend counts a submitted chunk before submit returns: one staging buffer does
     * (the others overlap a device's copy and count of one chunk with the mapping of the next). */
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU && !ctx->members)
        gpuhist_stream_limit_slots(nd->st, 1);
    return GPUHIST_OK;
}

/* Map and count the points of one chunk (checked), in pieces of the map's chunk size. */
static gpuhist_status nd_count(gpuhist_nd_stream *nd, const gpuhist_points *pts)
{
    gpuhist_ctx *ctx = nd->ctx;
    gpuhist_nd_map map = nd->map;
    const size_t size = gpuhist_dtype_size(map.dtype);
    for (uint32_t a = 0; a < map.dims; ++a) {
        if (pts->data) {
            map.axis[a].base = (const unsigned char *)pts->data + (size_t)a * size;
            map.axis[a].stride = (size_t)map.dims * size;
        } else {
            map.axis[a].base = pts->columns[a];
            map.axis[a].stride = size;
        }
    }
    if (nd->fused) {
        /* (n = 0 would be the operation's begin, which zeroes the counters: an empty chunk
         * adds nothing) */
        gpuhist_status rc =
            pts->count ? ctx->ops->nd_count(ctx, &map, 0, pts->count, NULL) : GPUHIST_OK;
        if (rc != GPUHIST_OK)
            return nd_fail(nd, rc);
        nd->points += pts->count;
        return GPUHIST_OK;
    }
    if (nd->device) {
        /* the backend maps each piece on the device; the count reads its buffer after it */
        const uint64_t piece = gpuhist_nd_chunk_points() * 4u;
        gpuhist_status rc = GPUHIST_OK;
        for (uint64_t first = 0; rc == GPUHIST_OK && first < pts->count; first += piece) {
            uint64_t n = pts->count - first < piece ? pts->count - first : piece;
            const void *slots = NULL;
            rc = ctx->ops->nd_map(ctx, &map, first, n, &slots);
            if (rc == GPUHIST_OK && (rc = gpuhist_stream_feed(nd->st, slots, n)) != GPUHIST_OK)
                snprintf(ctx->error, sizeof ctx->error, "%s", gpuhist_stream_error(nd->st));
        }
        if (rc != GPUHIST_OK)
            return nd_fail(nd, rc);
        nd->points += pts->count;
        return GPUHIST_OK;
    }
    const uint64_t chunk = gpuhist_nd_chunk_points();
    const int threads = gpuhist_cpu_threads(ctx);
    const size_t wsize = nd->weighted ? gpuhist_dtype_size(nd->weight_dtype) : 0;
    gpuhist_status rc = GPUHIST_OK;
    if (nd->weighted && pts->count > 0 && nd->own_points < chunk &&
        nd->own_points < pts->count) {
        uint64_t n = pts->count < chunk ? pts->count : chunk;
        free(nd->own);
        nd->own = NULL;
        nd->own_points = 0;
        rc = gpuhist_need_host_memory(ctx, n * 4u, "the joint slots of a chunk of points");
        if (rc == GPUHIST_OK && !(nd->own = malloc((size_t)n * 4u)))
            rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                              "no host memory for the joint slots of %llu points",
                              (unsigned long long)n);
        if (rc == GPUHIST_OK)
            nd->own_points = n;
    }
    for (uint64_t first = 0; rc == GPUHIST_OK && first < pts->count; first += chunk) {
        uint64_t n = pts->count - first < chunk ? pts->count - first : chunk;
        if (nd->weighted) {
            gpuhist_nd_map_points(&map, first, n, nd->own, threads);
            rc = gpuhist_stream_feed_weighted(
                nd->st, nd->own, (const unsigned char *)pts->weights + first * wsize, n);
        } else {
            void *buf = NULL;
            rc = gpuhist_stream_buffer(nd->st, (size_t)n * 4u, &buf);
            if (rc == GPUHIST_OK) {
                gpuhist_nd_map_points(&map, first, n, buf, threads);
                rc = gpuhist_stream_submit(nd->st, buf, n);
            }
        }
    }
    if (rc != GPUHIST_OK) {
        /* the 1-D stream's message, for this stream's */
        snprintf(ctx->error, sizeof ctx->error, "%s", gpuhist_stream_error(nd->st));
        return nd_fail(nd, rc);
    }
    nd->points += pts->count;
    return GPUHIST_OK;
}

/* The result: counts, sums, tallies by the 1-D finish; the axes' edges and description. The
 * stream is freed whatever happens. */
static gpuhist_status nd_finish(gpuhist_nd_stream *nd, gpuhist_nd_result *res)
{
    gpuhist_ctx *ctx = nd->ctx;
    gpuhist_status rc = nd->failed;
    if (rc == GPUHIST_OK && !res)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "result: NULL");
    if (rc == GPUHIST_OK && !res->counts)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "result.counts: NULL");
    if (rc == GPUHIST_OK && nd->weighted && !res->sums)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.sums: NULL (a weighted histogram returns its sums there)");
    if (rc == GPUHIST_OK && !nd->weighted && (res->sums || res->sums_squared || res->weight_state))
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.%s: given without weights (points.weights is NULL)",
                          res->sums ? "sums" : res->sums_squared ? "sums_squared" : "weight_state");
    if (rc == GPUHIST_OK && nd->counts_location != GPUHIST_MEMORY_DEVICE) /* else checked */
        rc = check_result_memory(ctx, res, nd->weighted != NULL);
    if (rc == GPUHIST_OK && res->counts_location == GPUHIST_MEMORY_DEVICE &&
        nd->counts_location != GPUHIST_MEMORY_DEVICE)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.counts_location: DEVICE counts are written by "
                          "gpuhist_histogramdd() only (a stream's result is in host memory)");
    if (rc != GPUHIST_OK) {
        if (nd->failed != GPUHIST_OK)
            snprintf(ctx->error, sizeof ctx->error, "%s", nd->error);
        gpuhist_stream_abort(nd->st);
        nd_free(nd);
        return rc;
    }
    const int device_counts = nd->counts_location == GPUHIST_MEMORY_DEVICE;
    /* DEVICE counts with an asynchronous context: only enqueued, no tallies on the host */
    const int async = device_counts && ctx->async;
    const int add = res->accumulate;
    gpuhist_result r = gpuhist_result_host(res->counts);
    r.counts_location = device_counts ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    r.device_stats = res->device_stats;
    r.accumulate = add; /* counts, device_stats and weight_state added into by the 1-D finish */
    r.sums = res->sums;
    r.sums_squared = res->sums_squared;
    r.weight_state = res->weight_state; /* the joint bins' 1-D state: the N-D state */
    if (nd->fused && device_counts) {
        /* the joint bins stored or added on the device; the tallies from the counters when
         * the call waits */
        uint64_t tallies[2]; /* nan, out: the counts stay on the device */
        rc = ctx->ops->nd_collect
                 ? ctx->ops->nd_collect(ctx, res->counts, res->device_stats, nd->points, add)
                 : gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                                "result.counts_location: this backend cannot write N-D counts "
                                "to device memory");
        if (rc == GPUHIST_OK && !async)
            rc = ctx->ops->nd_count(ctx, NULL, 0, 2, tallies);
        if (rc == GPUHIST_OK && !async) {
            r.underflow[0] = tallies[0];
            r.overflow[0] = tallies[1];
        }
        r.backend = ctx->backend;
        r.strategy = "cuda-nd-fused";
    } else if (nd->fused) {
        /* the counters in ndmap.h's encoding: nan, the bins, out. Stored: the bins straight
         * into the caller's buffer, then the two tallies; added: all of them through ours */
        const uint64_t total = nd->map.total;
        uint64_t tallies[2] = {0, 0}; /* nan, out */
        if (!add) {
            rc = ctx->ops->nd_count(ctx, NULL, 1, total, res->counts);
            if (rc == GPUHIST_OK)
                rc = ctx->ops->nd_count(ctx, NULL, 0, 2, tallies);
        } else {
            uint64_t *all = NULL;
            rc = gpuhist_need_host_memory(ctx, (total + 2u) * 8u,
                                          "the counts of the joint slots");
            if (rc == GPUHIST_OK && !(all = malloc((size_t)(total + 2u) * 8u)))
                rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                  "no host memory for %llu counts",
                                  (unsigned long long)total + 2u);
            if (rc == GPUHIST_OK)
                rc = ctx->ops->nd_count(ctx, NULL, 0, 0, all);
            if (rc == GPUHIST_OK) {
                for (uint64_t i = 0; i < total; ++i)
                    res->counts[i] += all[i + 1u];
                tallies[0] = all[0];
                tallies[1] = all[total + 1u];
            }
            free(all);
        }
        if (rc == GPUHIST_OK) {
            r.underflow[0] = tallies[0];
            r.overflow[0] = tallies[1];
            r.backend = ctx->backend;
            r.strategy = "cuda-nd-fused";
        }
    } else {
        rc = gpuhist_stream_finish(nd->st, &r);
    }
    if (rc == GPUHIST_OK) {
        const gpuhist_nd_map *m = &nd->map;
        res->dims = m->dims;
        res->bins_total = m->total;
        for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a) {
            int on = a < m->dims;
            uint32_t bins = on ? m->axis[a].map.bins : 0;
            res->bins[a] = bins;
            res->lower[a] = on ? nd->edges[a][0] : 0.0;
            res->upper[a] = on ? nd->edges[a][bins] : 0.0;
            res->last_edge_inclusive[a] = on ? m->axis[a].map.last_inclusive : 0;
            if (on && res->edges[a])
                memcpy(res->edges[a], nd->edges[a], ((size_t)bins + 1u) * sizeof(double));
        }
        if (!async) { /* the call's tallies (accumulating: added to the result's) */
            res->nan = (add ? res->nan : 0u) + r.underflow[0];
            res->out = (add ? res->out : 0u) + r.overflow[0];
            res->total = (add ? res->total : 0u) + nd->points;
        }
        res->backend = r.backend;
        res->strategy = r.strategy;
        res->seconds = gpuhist_now() - nd->t0;
    }
    nd_free(nd);
    return rc;
}

gpuhist_status gpuhist_nd_stream_begin(gpuhist_ctx *ctx, const gpuhist_points *layout,
                                       const gpuhist_bin_spec *axes, gpuhist_nd_stream **out)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (out)
        *out = NULL;
    /* Held while the request is checked; the 1-D stream then holds it until finish. */
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    ctx->error[0] = '\0';
    uint32_t total = 0;
    gpuhist_nd_stream *nd = NULL;
    gpuhist_status rc = !out ? gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: out is NULL")
                             : check_layout(ctx, layout);
    if (rc == GPUHIST_OK)
        rc = check_axes(ctx, layout, axes, 1, &total);
    if (rc == GPUHIST_OK)
        rc = nd_build(ctx, layout, axes, total, &nd);
    if (rc == GPUHIST_OK)
        nd->device = layout->location == GPUHIST_MEMORY_DEVICE;
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    if (rc == GPUHIST_OK && (rc = nd_open(nd)) != GPUHIST_OK)
        nd_free(nd);
    if (rc == GPUHIST_OK)
        *out = nd;
    return rc;
}

gpuhist_status gpuhist_nd_stream_feed(gpuhist_nd_stream *nd, const gpuhist_points *chunk)
{
    if (!nd)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (nd->failed != GPUHIST_OK)
        return nd->failed;
    gpuhist_ctx *ctx = nd->ctx;
    gpuhist_status rc = check_layout(ctx, chunk);
    if (rc == GPUHIST_OK && (chunk->dims != nd->map.dims || chunk->dtype != nd->map.dtype))
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "points: %u %s coordinates per point, but the stream was begun with "
                          "%u %s",
                          chunk->dims, gpuhist_dtype_name(chunk->dtype), nd->map.dims,
                          gpuhist_dtype_name(nd->map.dtype));
    if (rc == GPUHIST_OK && !chunk->weights != !nd->weighted)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          nd->weighted ? "points.weights: NULL in a weighted stream"
                                       : "points.weights: given to a stream begun without them");
    if (rc == GPUHIST_OK && nd->weighted && chunk->weight_dtype != nd->weight_dtype)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "points.weight_dtype: %s, but the stream was begun with %s",
                          gpuhist_dtype_name(chunk->weight_dtype),
                          gpuhist_dtype_name(nd->weight_dtype));
    if (rc == GPUHIST_OK)
        rc = check_data(ctx, chunk);
    if (rc == GPUHIST_OK && chunk->count > 0 && points_on_device(ctx, chunk) != nd->device)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          nd->device ? "points: in host memory, but the stream was begun for "
                                       "points in device memory (points.location DEVICE)"
                                     : "points: in device memory, but the stream was begun for "
                                       "points in host memory (begin with points.location "
                                       "DEVICE)");
    if (rc != GPUHIST_OK)
        return nd_fail(nd, rc);
    return nd_count(nd, chunk);
}

gpuhist_status gpuhist_nd_stream_finish(gpuhist_nd_stream *nd, gpuhist_nd_result *result)
{
    if (!nd)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    return nd_finish(nd, result);
}

void gpuhist_nd_stream_abort(gpuhist_nd_stream *nd)
{
    if (!nd)
        return;
    gpuhist_stream_abort(nd->st);
    nd_free(nd);
}

const char *gpuhist_nd_stream_error(const gpuhist_nd_stream *nd)
{
    if (!nd)
        return "";
    return nd->failed != GPUHIST_OK ? nd->error : nd->ctx->error;
}

/* ---- the one-shot call ------------------------------------------------------------------------- */

/* Checks and auto ranges with the context held; the axes' maps in a new N-D stream object. */
static gpuhist_status prepare(gpuhist_ctx *ctx, const gpuhist_points *pts,
                              const gpuhist_bin_spec *axes, const gpuhist_nd_result *res,
                              const gpuhist_bin_spec *device_ranges, gpuhist_nd_stream **out)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    uint32_t total = 0;
    gpuhist_status st = check_layout(ctx, pts);
    if (st == GPUHIST_OK && !axes)
        st = gpuhist_fail(ctx, bad, "axes: NULL (one bin specification per axis)");
    if (st == GPUHIST_OK && !res)
        st = gpuhist_fail(ctx, bad, "result: NULL");
    if (st == GPUHIST_OK && !res->counts)
        st = gpuhist_fail(ctx, bad, "result.counts: NULL");
    if (st == GPUHIST_OK)
        st = check_data(ctx, pts);
    if (st == GPUHIST_OK && pts->weights && !res->sums)
        st = gpuhist_fail(ctx, bad,
                          "result.sums: NULL (a weighted histogram returns its sums there)");
    if (st == GPUHIST_OK && !pts->weights && (res->sums || res->sums_squared || res->weight_state))
        st = gpuhist_fail(ctx, bad, "result.%s: given without weights (points.weights is NULL)",
                          res->sums           ? "sums"
                          : res->sums_squared ? "sums_squared"
                                              : "weight_state");
    if (st == GPUHIST_OK)
        st = check_result_memory(ctx, res, pts->weights != NULL);
    /* DEVICE counts are counted on the device: the points must be there (an empty call with
     * AUTO location is taken as device points) */
    const int device_counts = st == GPUHIST_OK && res->counts_location == GPUHIST_MEMORY_DEVICE;
    const int device = st == GPUHIST_OK &&
                       (points_on_device(ctx, pts) ||
                        (device_counts && pts->count == 0 &&
                         pts->location == GPUHIST_MEMORY_AUTO));
    if (device_counts && !device)
        st = gpuhist_fail(ctx, bad,
                          "result.counts_location: DEVICE counts need points in device memory "
                          "(points.location DEVICE); copy the counts for host points");
    if (st == GPUHIST_OK && device && pts->location == GPUHIST_MEMORY_AUTO)
        st = check_device_points(ctx, pts);
    if (st == GPUHIST_OK)
        st = check_axes(ctx, pts, axes, 0, &total);
    if (st != GPUHIST_OK)
        return st;

    /* Auto ranges: each axis's finite min and max over all points (the 1-D rules). */
    gpuhist_bin_spec resolved[GPUHIST_MAX_DIMS];
    gpuhist_nd_map probe; /* bases and strides only, for the min/max pass */
    memset(&probe, 0, sizeof probe);
    probe.dims = pts->dims;
    probe.dtype = pts->dtype;
    const size_t size = gpuhist_dtype_size(pts->dtype);
    const int threads = gpuhist_cpu_threads(ctx);
    uint32_t autos = 0; /* the auto axes, found in one pass over interleaved points */
    double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
    int found[GPUHIST_MAX_DIMS];
    for (uint32_t a = 0; a < pts->dims; ++a) {
        lo[a] = 0.0, hi[a] = 1.0, found[a] = 0;
        if (!(axes[a].kind == GPUHIST_BINS_EVEN && axes[a].auto_range))
            continue;
        probe.axis[a].base = pts->data ? (const unsigned char *)pts->data + (size_t)a * size
                                       : pts->columns[a];
        probe.axis[a].stride = pts->data ? (size_t)pts->dims * size : size;
        autos |= 1u << a;
    }
    if (!device_ranges && autos && pts->count > 0)
        gpuhist_nd_minmax(&probe, autos, pts->count, threads, lo, hi, found);
    for (uint32_t a = 0; a < pts->dims; ++a) {
        resolved[a] = axes[a];
        if (!(autos >> a & 1u))
            continue;
        if (device_ranges)
            resolved[a] = device_ranges[a];
        else
            resolved[a] = gpuhist_bins_from_minmax(axes[a].bins, lo[a], hi[a], found[a]);
        resolved[a].float32_linspace = axes[a].float32_linspace; /* f32: the edges asked */
        if (!isfinite(resolved[a].upper - resolved[a].lower))
            return gpuhist_fail(ctx, bad,
                                "axes[%u].range: the data's range [%g, %g] overflows a double",
                                a, resolved[a].lower, resolved[a].upper);
    }
    st = nd_build(ctx, pts, resolved, total, out);
    if (st == GPUHIST_OK) {
        (*out)->device = device;
        (*out)->counts_location = device_counts ? GPUHIST_MEMORY_DEVICE : GPUHIST_MEMORY_HOST;
    }
    return st;
}

/* The axes' columns of device points as 1-D samples for gpuhist_minmax (held by it): one channel
 * of the interleaved points (up to 4 channels), a strided view of one coordinate per row (more
 * dimensions), or the axis's column. */
static gpuhist_samples axis_samples(const gpuhist_points *points, uint32_t axis)
{
    const size_t size = gpuhist_dtype_size(points->dtype);
    gpuhist_samples s;
    if (!points->data) {
        s = gpuhist_samples_1d(points->columns[axis], points->dtype, points->count);
    } else if (points->dims <= GPUHIST_MAX_CHANNELS) {
        s = gpuhist_samples_1d(points->data, points->dtype, points->count);
        s.channels = points->dims;
        s.channel_mask = 1u << axis;
    } else {
        s = gpuhist_samples_1d((const unsigned char *)points->data + (size_t)axis * size,
                               points->dtype, 0);
        s.rows = points->count;
        s.row_length = 1;
        s.row_stride = (size_t)points->dims * size;
    }
    s.location = points->location;
    return s;
}

/* The checks of gpuhist_points_minmax (context held): the layout, the mask, the arrays and the
 * data pointers; weights are not looked at. */
static gpuhist_status check_minmax(gpuhist_ctx *ctx, const gpuhist_points *pts, uint32_t axes,
                                   const double *min, const double *max, const int *found)
{
    const gpuhist_status bad = GPUHIST_ERROR_INVALID_ARGUMENT;
    gpuhist_status kind = check_kind(ctx, pts);
    if (kind != GPUHIST_OK)
        return kind;
    if (axes == 0)
        return gpuhist_fail(ctx, bad, "axes: an empty mask (bit a asks for axis a)");
    if (axes >> pts->dims != 0)
        return gpuhist_fail(ctx, bad,
                            "axes: mask 0x%x names axis %u of points of %u dimensions (bit a "
                            "asks for axis a, a < dims)",
                            axes, 31u - (uint32_t)__builtin_clz(axes), pts->dims);
    if (!min || !max || !found)
        return gpuhist_fail(ctx, bad, "%s: NULL (one entry per axis of the points)",
                            !min ? "min" : !max ? "max" : "found");
    const size_t size = gpuhist_dtype_size(pts->dtype);
    if (pts->count > (uint64_t)SIZE_MAX / ((uint64_t)pts->dims * size))
        return gpuhist_fail(ctx, bad,
                            "points.count: %llu points of %u coordinates overflow the address "
                            "space",
                            (unsigned long long)pts->count, pts->dims);
    if (pts->count > 0 && !pts->data)
        for (uint32_t a = 0; a < pts->dims; ++a)
            if ((axes >> a & 1u) && !pts->columns[a])
                return gpuhist_fail(ctx, bad,
                                    "points.columns[%u]: NULL with %llu points (and points.data "
                                    "is NULL)",
                                    a, (unsigned long long)pts->count);
    return GPUHIST_OK;
}

gpuhist_status gpuhist_points_minmax(gpuhist_ctx *ctx, const gpuhist_points *points,
                                    uint32_t axes, double *min, double *max, int *found)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    ctx->error[0] = '\0';
    gpuhist_status st = check_minmax(ctx, points, axes, min, max, found);
    double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
    int got[GPUHIST_MAX_DIMS];
    const int device = st == GPUHIST_OK && axes_on_device(ctx, points, axes);
    if (st == GPUHIST_OK && !device) {
        /* host memory, on every backend: one pass over the points for all the asked axes (the
         * one-shot call's auto range) */
        gpuhist_nd_map probe; /* bases and strides only */
        memset(&probe, 0, sizeof probe);
        probe.dims = points->dims;
        probe.dtype = points->dtype;
        const size_t size = gpuhist_dtype_size(points->dtype);
        for (uint32_t a = 0; a < points->dims; ++a) {
            lo[a] = 0.0, hi[a] = 1.0, got[a] = 0;
            if (!(axes >> a & 1u) || points->count == 0)
                continue;
            probe.axis[a].base = points->data
                                     ? (const unsigned char *)points->data + (size_t)a * size
                                     : points->columns[a];
            probe.axis[a].stride = points->data ? (size_t)points->dims * size : size;
        }
        if (points->count > 0)
            gpuhist_nd_minmax(&probe, axes, points->count, gpuhist_cpu_threads(ctx), lo, hi,
                              got);
    }
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    /* device memory: the backend's min/max, one axis after another (gpuhist_minmax holds the
     * context itself) */
    for (uint32_t a = 0; st == GPUHIST_OK && device && a < points->dims; ++a) {
        lo[a] = 0.0, hi[a] = 1.0, got[a] = 0;
        if (!(axes >> a & 1u))
            continue;
        gpuhist_samples s = axis_samples(points, a);
        st = gpuhist_minmax(ctx, &s, &lo[a], &hi[a], &got[a]);
        if (st != GPUHIST_OK && st != GPUHIST_ERROR_BUSY) {
            char msg[sizeof ctx->error];
            snprintf(msg, sizeof msg, "%s", ctx->error);
            st = gpuhist_fail(ctx, st, "axis %u of device points: %s", a, msg);
        }
    }
    if (st != GPUHIST_OK)
        return st;
    /* written only on success, and only the asked axes */
    for (uint32_t a = 0; a < points->dims; ++a) {
        if (!(axes >> a & 1u))
            continue;
        found[a] = got[a];
        min[a] = got[a] ? lo[a] + 0.0 : 0.0;
        max[a] = got[a] ? hi[a] + 0.0 : 1.0;
    }
    return GPUHIST_OK;
}

/* The auto ranges of points in device memory, found by the backend (gpuhist_points_minmax, which
 * holds the context itself) before the call holds it. */
static gpuhist_status device_auto_ranges(gpuhist_ctx *ctx, const gpuhist_points *pts,
                                         const gpuhist_bin_spec *axes, gpuhist_bin_spec *ranges)
{
    gpuhist_points dev = *pts;
    dev.location = GPUHIST_MEMORY_DEVICE;
    uint32_t autos = 0;
    for (uint32_t a = 0; a < pts->dims; ++a) {
        ranges[a] = axes[a];
        if (axes[a].kind == GPUHIST_BINS_EVEN && axes[a].auto_range)
            autos |= 1u << a;
    }
    if (!autos)
        return GPUHIST_OK;
    double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
    int found[GPUHIST_MAX_DIMS];
    gpuhist_status st = gpuhist_points_minmax(ctx, &dev, autos, lo, hi, found);
    if (st != GPUHIST_OK) {
        char msg[sizeof ctx->error];
        snprintf(msg, sizeof msg, "%s", ctx->error);
        return gpuhist_fail(ctx, st, "axes: the auto ranges of device points: %s", msg);
    }
    for (uint32_t a = 0; a < pts->dims; ++a)
        if (autos >> a & 1u) {
            ranges[a] = gpuhist_bins_from_minmax(axes[a].bins, lo[a], hi[a], found[a]);
            ranges[a].float32_linspace = axes[a].float32_linspace;
        }
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
    /* Device points' auto ranges come from the backend, which holds the context itself. */
    gpuhist_bin_spec ranges[GPUHIST_MAX_DIMS];
    const gpuhist_bin_spec *device_ranges = NULL;
    if (points && axes && check_layout(ctx, points) == GPUHIST_OK &&
        check_data(ctx, points) == GPUHIST_OK && points_on_device(ctx, points)) {
        __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
        gpuhist_status st = device_auto_ranges(ctx, points, axes, ranges);
        if (st != GPUHIST_OK)
            return st;
        if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
            return GPUHIST_ERROR_BUSY;
        ctx->error[0] = '\0';
        device_ranges = ranges;
    }
    gpuhist_nd_stream *nd = NULL;
    gpuhist_status rc = prepare(ctx, points, axes, result, device_ranges, &nd);
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    if (rc != GPUHIST_OK)
        return rc;
    const uint32_t total = nd->map.total;
    nd->t0 = t0; /* the whole call's time, auto ranges included */
    if (nd->counts_location == GPUHIST_MEMORY_DEVICE && !result->accumulate &&
        !counts_overlap_points(points, result->counts, total))
        nd->direct = result->counts;
    if ((rc = nd_open(nd)) != GPUHIST_OK) {
        nd_free(nd);
    } else if ((rc = nd_count(nd, points)) != GPUHIST_OK) {
        gpuhist_nd_stream_abort(nd);
    } else {
        rc = nd_finish(nd, result);
    }
    /* A counting failure names the 1-D count: say what it was counting. */
    if (rc != GPUHIST_OK && rc != GPUHIST_ERROR_BUSY) {
        char msg[sizeof ctx->error];
        snprintf(msg, sizeof msg, "%s", ctx->error);
        gpuhist_fail(ctx, rc, "counting the %llu joint bins: %s", (unsigned long long)total,
                     msg);
    }
    return rc;
}
