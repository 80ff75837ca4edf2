/*
 * nd_device.cuh - what the device's N-D counting shares (nd_map.cu: map to slots, then the 1-D
 * count; nd_packed16.cu: map and count in one pass): one axis's slot of a coordinate
 * (binmap.h's one-axis slot for its type, f32 EVEN axes through fast_even.h's certified
 * estimate, the same slot by its proof, as the CPU map ndmap.c bins them), a point's encoded
 * joint slot, and the per-context buffers (ctx->nd_state, made and freed by nd_map.cu); the
 * two-pass count of N-D points (two_pass.cu) that nd_count uses past the fused count's slots.
 */
#ifndef GPUHIST_CUDA_ND_DEVICE_CUH
#define GPUHIST_CUDA_ND_DEVICE_CUH

#include "common.cuh"
#include "ndmap.h"

template <typename T>
__device__ __forceinline__ uint32_t nd_axis_slot(const gpuhist_nd_axis &ax, T x)
{
    if constexpr (std::is_same<T, float>::value)
        return ax.fast_f32 ? gpuhist_fe_slot_f32(&ax.map, &ax.cert, x)
                           : gpuhist_slot_f32(&ax.map, ax.edges, x);
    else if constexpr (std::is_same<T, double>::value)
        return gpuhist_slot_f64(&ax.map, ax.edges, x);
    else if constexpr (std::is_same<T, uint64_t>::value)
        return gpuhist_slot_u64(&ax.map, ax.edges, (gh_u64)x);
    else
        return gpuhist_slot_i64(&ax.map, ax.edges, (gh_i64)x);
}

/* u8 points: a table per axis of each byte value's share of the encoded joint slot (ndmap.h):
 * the axis's slot times the bins of the axes after it (+1 on axis 0: the encoding's first bin),
 * or GH_ND_U8_OUT when the value is outside the axis. A point's encoded slot is the sum of its
 * coordinates' shares when that sum is below GH_ND_U8_OUT, else the out slot (up to 4 axes:
 * 4 x 2^29 + slots < 2^32). Built by the block (threads tid of nthreads), dims x 256 words. */
#define GH_ND_U8_OUT (1u << 29)
__device__ __forceinline__ void nd_u8_share_table(const gpuhist_nd_map &m, uint32_t dims,
                                                  uint32_t *lut, uint32_t tid, uint32_t nthreads)
{
    for (uint32_t i = tid; i < dims * 256u; i += nthreads) {
        const uint32_t a = i >> 8;
        const uint32_t slot = nd_axis_slot<uint8_t>(m.axis[a], (uint8_t)(i & 255u));
        uint32_t stride = 1u;
        for (uint32_t b = a + 1u; b < dims; ++b)
            stride *= m.axis[b].map.bins;
        lut[i] = slot < m.axis[a].map.bins ? slot * stride + (a == 0u ? 1u : 0u) : GH_ND_U8_OUT;
    }
}

/* The encoded joint slot (ndmap.h) of point k of m (each axis's coordinate at its base + k *
 * its stride: interleaved points or columns, any alignment). */
template <typename T>
__device__ __forceinline__ uint32_t nd_point_slot(const gpuhist_nd_map &m, uint64_t k)
{
    uint32_t cur = 0;
    for (uint32_t a = 0; a < m.dims; ++a) {
        const gpuhist_nd_axis &ax = m.axis[a];
        T x;
        memcpy(&x, ax.base + k * ax.stride, sizeof x);
        cur = gpuhist_nd_combine(cur, nd_axis_slot<T>(ax, x), ax.map.bins);
    }
    return gpuhist_nd_encode(cur, m.total);
}

/* A context's device buffers for N-D points (ctx->nd_state). */
struct gh_nd_state {
    uint32_t *slots; /* nd_map: the slots of the last piece */
    size_t slots_size;
    double *edges[GPUHIST_MAX_DIMS];     /* device copies of EDGES axes' edges */
    double *host_copy[GPUHIST_MAX_DIMS]; /* what was copied there */
    size_t edge_count[GPUHIST_MAX_DIMS];
    unsigned long long *counters; /* nd_count: the 64-bit counters of the joint slots */
    size_t counters_size;
    uint32_t nkeys; /* slots counted: total + 2 */
    /* nd_count past the fused count's slots (two_pass.cu): the joint bins and out where the
     * fused count has them (counters + 1 is the two passes' out), NaN at counters[total + 3]
     * instead of counters[0] (which stays 0) */
    int two_pass;
    /* A two-pass count straight into the caller's device counts (the one-shot call's stored
     * result): the joint bins there, the outlier slots in `tallies` (out, -, NaN); NULL else */
    unsigned long long *direct;
    unsigned long long *tallies; /* 3 device words, made on first use */
    /* where the count's nan and out tallies are: counters[0] and counters[total + 1] (fused),
     * counters[total + 3] and counters[total + 1] (two-pass), tallies[2] and tallies[0]
     * (direct) */
    unsigned long long *nan_word, *out_word;
};

/* The context's state (made on first use; NULL when out of host memory). */
gh_nd_state *gh_nd_state_of(gpuhist_ctx *ctx);
/* m's EDGES axes pointed at device copies of their edges (copied when they changed). */
gpuhist_status gh_nd_device_edges(gpuhist_ctx *ctx, gh_nd_state *s, gpuhist_nd_map *m);

inline cudaStream_t gh_nd_stream(const gpuhist_ctx *ctx) { return (cudaStream_t)ctx->stream; }

/* nd_bytes32.cu: count the whole groups of points [first, first + n) of an interleaved u8 map
 * into counters (nkeys of them) with 32-bit shared counters. @return 0 when it cannot take the
 * chunk (dimensions, alignment, shared memory); else 1, the status in *rc and the points it
 * counted in *done (the rest, fewer than a group, are the caller's). */
int gh_nd_bytes32_count(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first, uint64_t n,
                        unsigned long long *counters, uint32_t nkeys, uint64_t *done,
                        gpuhist_status *rc);

/* two_pass.cu: N-D points counted by cuda-two-pass's passes, each point's key its joint slot
 * (no slot array). Supports: f32 and f64 points of at most 2^24 joint bins on a device whose
 * shared memory holds pass 2's counters. Count: points [first, first + n) of m (coordinates in
 * device memory, EDGES axes' edges on the device) added into out: joint bin j at out[j]; out at
 * outliers[0], NaN at outliers[2] (binmap.h's underflow and NaN slots of total bins; outliers[1]
 * is never written). Enqueued on the context's stream. */
int gh_tp_nd_supports(const gpuhist_ctx *ctx, const gpuhist_nd_map *m);
gpuhist_status gh_tp_nd_count(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first,
                              uint64_t n, unsigned long long *out, unsigned long long *outliers);

#endif
