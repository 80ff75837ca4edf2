/*
 * nd_map.cu - the map pass of N-D histograms for points in device memory (the backend's nd_map
 * operation; histogramdd.c drives it).
 *
 * Mechanism: one thread per point walks the axes: each coordinate is binned by binmap.h's
 * one-axis slot (f32 EVEN axes through fast_even.h's certified estimate, which gives the same
 * slot by its proof, as the CPU map does), combined and encoded by ndmap.h's
 * gpuhist_nd_combine / gpuhist_nd_encode: the same definitions the CPU threads use, so a device
 * map equals the host map slot for slot. The slots go to a device buffer of this file's, which
 * the core then feeds to the 1-D stream as device data: the count is enqueued on the same CUDA
 * stream after the map, and the next map after that count, so one buffer serves every chunk.
 * Edges of EDGES axes are copied to the device once per histogram (a host copy is kept to see
 * whether the next call's edges are the same).
 * Limits: one map pass and one count (the slots make a round trip through device memory: 4
 * bytes written and read per point beside the coordinates); interleaved points or one column
 * per axis, any alignment of the coordinate type; the map struct is a kernel parameter (8 axes
 * fit the 4 KB parameter space).
 */
#include "nd_device.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

/* Points [first, first + n) of m to slots[0 .. n). */
template <typename T>
__global__ void k_nd_map(const gpuhist_nd_map m, uint64_t first, uint64_t n, uint32_t *slots)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        slots[k] = nd_point_slot<T>(m, first + k);
    }
}

} /* namespace */

gh_nd_state *gh_nd_state_of(gpuhist_ctx *ctx)
{
    if (!ctx->nd_state)
        ctx->nd_state = calloc(1, sizeof(gh_nd_state));
    return (gh_nd_state *)ctx->nd_state;
}

/* Edges of axis a on the device (copied when they differ from the last copy). */
static gpuhist_status nd_edges(gpuhist_ctx *ctx, gh_nd_state *s, uint32_t a, const double *host,
                        size_t count, const double **dev)
{
    const size_t bytes = count * sizeof(double);
    if (s->edge_count[a] == count && s->host_copy[a] && memcmp(s->host_copy[a], host, bytes) == 0) {
        *dev = s->edges[a];
        return GPUHIST_OK;
    }
    if (s->edge_count[a] < count) {
        cudaStreamSynchronize(gh_nd_stream(ctx)); /* a previous map may still read the old ones */
        cudaFree(s->edges[a]);
        free(s->host_copy[a]);
        s->edges[a] = NULL;
        s->edge_count[a] = 0;
        s->host_copy[a] = (double *)malloc(bytes);
        if (!s->host_copy[a])
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "N-D: no host memory for %zu edges",
                                count);
        GPUHIST_CUDA_TRY(ctx, cudaMalloc(&s->edges[a], bytes), "N-D: device edges");
    } else {
        cudaStreamSynchronize(gh_nd_stream(ctx));
    }
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(s->edges[a], host, bytes, cudaMemcpyHostToDevice,
                                     gh_nd_stream(ctx)),
                     "N-D: copy edges to the device");
    memcpy(s->host_copy[a], host, bytes);
    s->edge_count[a] = count;
    *dev = s->edges[a];
    return GPUHIST_OK;
}

gpuhist_status gh_nd_device_edges(gpuhist_ctx *ctx, gh_nd_state *s, gpuhist_nd_map *m)
{
    for (uint32_t a = 0; a < m->dims; ++a)
        if (m->axis[a].edges) {
            gpuhist_status rc = nd_edges(ctx, s, a, m->axis[a].edges,
                                         (size_t)m->axis[a].map.bins + 1u, &m->axis[a].edges);
            if (rc != GPUHIST_OK)
                return rc;
        }
    return GPUHIST_OK;
}


extern "C" gpuhist_status gpuhist_cuda_nd_map(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map,
                                              uint64_t first, uint64_t n, const void **slots)
{
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(ctx->device), "cudaSetDevice");
    gh_nd_state *s = gh_nd_state_of(ctx);
    if (!s)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "N-D: out of host memory");
    gpuhist_nd_map m = *map;
    gpuhist_status rc = gh_nd_device_edges(ctx, s, &m);
    if (rc != GPUHIST_OK)
        return rc;
    const size_t bytes = (size_t)n * sizeof(uint32_t);
    if (s->slots_size < bytes) {
        cudaStreamSynchronize(gh_nd_stream(ctx)); /* the last count may still read the old buffer */
        cudaFree(s->slots);
        s->slots = NULL;
        s->slots_size = 0;
        GPUHIST_CUDA_TRY(ctx, cudaMalloc(&s->slots, bytes), "N-D: device slots");
        s->slots_size = bytes;
    }
    if (n > 0) {
        const int grid = gh_fixed_grid(GH_LP_POINT_MAP, 0, n);
        cudaStream_t strm = gh_nd_stream(ctx);
        switch (m.dtype) {
        case GPUHIST_U8: k_nd_map<uint8_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_I8: k_nd_map<int8_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_U16: k_nd_map<uint16_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_I16: k_nd_map<int16_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_U32: k_nd_map<uint32_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_I32: k_nd_map<int32_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_U64: k_nd_map<uint64_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_I64: k_nd_map<int64_t><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_F32: k_nd_map<float><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        case GPUHIST_F64: k_nd_map<double><<<grid, GH_BLOCK, 0, strm>>>(m, first, n, s->slots); break;
        default:
            return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                                "N-D: device points of type %s are not supported",
                                gpuhist_dtype_name(m.dtype));
        }
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: map points to joint slots");
    }
    *slots = s->slots;
    return GPUHIST_OK;
}

extern "C" void gpuhist_cuda_nd_release(gpuhist_ctx *ctx)
{
    gh_nd_state *s = (gh_nd_state *)ctx->nd_state;
    if (!s)
        return;
    cudaSetDevice(ctx->device);
    cudaStreamSynchronize(gh_nd_stream(ctx));
    cudaFree(s->slots);
    cudaFree(s->counters);
    cudaFree(s->tallies);
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a) {
        cudaFree(s->edges[a]);
        free(s->host_copy[a]);
    }
    free(s);
    ctx->nd_state = NULL;
}
