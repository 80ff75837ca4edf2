/*
 * ndmap.h - the map pass of N-D histograms: points to joint slots (internal, not installed).
 *
 * An N-D histogram is a map followed by an ordinary 1-D count. Each axis maps its coordinate to a
 * slot with the one-axis functions of binmap.h (the same map gpuhist_histogram() uses); the joint
 * slot of a point is the row-major combination of its axes' bins (last axis fastest), or "out"
 * when some axis has its coordinate outside that axis's edges, or "nan" when some coordinate is
 * NaN (NaN wins over out). The joint slots are written as u32 values that an INTEGER spec of
 * `total` bins starting at 1 counts directly:
 *
 *   0                 nan   (the counting's underflow)
 *   1 .. total        joint bin j as j + 1
 *   total + 1         out   (the counting's overflow)
 *
 * so the counts land in the caller's buffer as they are and the two tallies are the counting's
 * underflow and overflow. Limits: total <= 2^31 (the counting's bin limit). Points in host memory
 * are mapped here on CPU threads, points in device memory by the backend's nd_map operation.
 */
#ifndef GPUHIST_NDMAP_H
#define GPUHIST_NDMAP_H

#include "internal.h"
#include "fast_even.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One axis of a map: its one-axis bin map and where its coordinates are. */
typedef struct gpuhist_nd_axis {
    gpuhist_binmap map;        /* binmap.h; map.bins is the axis's bin count */
    const double *edges;       /* EDGES: the spec's bins + 1 edges; NULL otherwise */
    const unsigned char *base; /* the coordinate of point 0 (any alignment) */
    size_t stride;             /* bytes from one point's coordinate to the next point's */
    int fast_f32;              /* f32 EVEN: binned by fast_even.h's certified estimate (the same
                                  slots as binmap.h, by that header's proof) */
    gpuhist_fe_cert cert;      /* fast_f32: the spec's certificate (gpuhist_fe_cert_of) */
} gpuhist_nd_axis;

typedef struct gpuhist_nd_map {
    uint32_t dims;
    gpuhist_dtype dtype;
    uint32_t total; /* product of the axes' bins, 1 .. 2^31 */
    gpuhist_nd_axis axis[GPUHIST_MAX_DIMS];
} gpuhist_nd_map;

/* The slot values of nan and out for a map of `total` joint bins (see the banner). */
#define GPUHIST_ND_SLOT_NAN 0u
#define GPUHIST_ND_SLOT_OUT(total) ((uint32_t)(total) + 1u)

/* Sentinels while the axes are combined (joint bins are < total <= 2^31). */
#define GPUHIST_ND_OUT 0xfffffffeu
#define GPUHIST_ND_NAN 0xffffffffu

/* The combination of one more axis into a point's running slot `cur` (0 before the first axis):
 * s is the axis's binmap.h slot of the coordinate among `bins` bins. NaN wins over out. The one
 * definition for the CPU threads (ndmap.c) and the device map (src/cuda/nd_map.cu). */
GH_FN gh_u32 gpuhist_nd_combine(gh_u32 cur, gh_u32 s, gh_u32 bins)
{
    if (s < bins)
        return cur < GPUHIST_ND_OUT ? cur * bins + s : cur;
    if (s == GPUHIST_SLOT_NAN(bins))
        return GPUHIST_ND_NAN;
    return cur != GPUHIST_ND_NAN ? GPUHIST_ND_OUT : cur;
}

/* The running slot after the last axis, encoded as the banner says. */
GH_FN gh_u32 gpuhist_nd_encode(gh_u32 cur, gh_u32 total)
{
    return cur < GPUHIST_ND_OUT    ? cur + 1u
           : cur == GPUHIST_ND_OUT ? GPUHIST_ND_SLOT_OUT(total)
                                   : GPUHIST_ND_SLOT_NAN;
}

/*
 * The one-axis map of a resolved spec (auto range already replaced by its range and last edge
 * rule): gpuhist_binmap_of(), the map gpuhist_histogram()'s plan gives the same spec. The spec
 * must have passed gpuhist_compute_edges(), whose `edges` (bins + 1) are checked against the map
 * here: each reported edge of the map must equal them bit for bit.
 * @return 1 when they agree, 0 otherwise.
 */
int gpuhist_nd_axis_map(const gpuhist_bin_spec *spec, gpuhist_dtype dtype, const double *edges,
                        gpuhist_binmap *out);

/* Map points [first, first + n) of `map` into slots[0 .. n), with up to `threads` threads. */
void gpuhist_nd_map_points(const gpuhist_nd_map *map, uint64_t first, uint64_t n,
                           uint32_t *slots, int threads);

/*
 * Finite min and max of the coordinates of each axis a in the mask `axes` (bit a; base/stride of
 * map->axis[a]) over points [0, n), as auto range finds them for one axis (64-bit integers
 * rounded outwards to doubles, -0.0 reported as 0.0), in min[a], max[a], found[a] (0 when no
 * coordinate is finite); other entries untouched. Axes of interleaved points are found in one
 * pass over the points.
 */
void gpuhist_nd_minmax(const gpuhist_nd_map *map, uint32_t axes, uint64_t n, int threads,
                       double *min, double *max, int *found);

/* Device points mapped and counted in one pass by the backend (nd_count) when it can (1, the
 * default), or always mapped to slots and counted by a 1-D stream (0); for tests of both. */
void gpuhist_nd_set_device_fused(int on);

/* Points per chunk of the map pass (0 restores the default); for tests of chunk boundaries. */
void gpuhist_nd_set_chunk_points(uint64_t points);
uint64_t gpuhist_nd_chunk_points(void);

#ifdef __cplusplus
}
#endif
#endif
