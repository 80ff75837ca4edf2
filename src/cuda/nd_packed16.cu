/*
 * nd_packed16.cu - N-D histograms of device points mapped and counted in one pass (the
 * backend's nd_count operation; histogramdd.c uses it when the joint slots fit).
 *
 * Mechanism: packed16.cuh's engine (16-bit counters, two per shared word, carries moved to the
 * 64-bit global counters exactly, hot-key mode for skewed data) counts the encoded joint slots
 * (ndmap.h: 0 nan, 1..total the bins, total + 1 out) of the points, which nd_device.cuh computes
 * from each coordinate with binmap.h's one-axis slots (f32 EVEN axes by the certified estimate,
 * each axis's map in registers, a point whose every coordinate is certified inside its axis
 * combined without the out/NaN cases; u8 coordinates through a table per axis of each value's
 * share of the joint slot, built with that same slot function, so a point's slot is the sum of
 * its lookups): no slot ever leaves the SM, so a point costs its coordinates' bytes only.
 * Interleaved u8, u16, f32 and f64 points of 2 to 4 coordinates (f64: 2; u8 whose 32-bit
 * counters fit go to nd_bytes32.cu first) are read as vectors of P points in whole
 * 32-bit words (the most points in at most 16 bytes: f32 pairs 2, u8 RGB 4); any other chunk
 * (columns, an unaligned start, other types or dimensions) is mapped point by point and added
 * with one global atomic each (correct, not fast). One block per SM of 1024 threads, each
 * block's halves added to the global counters at its end.
 * Past that (more joint bins than the engine's shared memory holds), f32 and f64 points of at
 * most 2^24 joint bins are counted by cuda-two-pass's two passes with each point's joint slot
 * as its key (two_pass.cu, gh_tp_nd_count: no slot array written or read); the joint bins and
 * out land where this file's counters have them, NaN at counters[total + 3] (gh_nd_state); or,
 * when begin is given the one-shot call's stored device counts, the joint bins go straight
 * there and the tallies into three words of their own (nd_collect then copies nothing).
 * Limits: total + 2 <= the keys whose packed words and the engine's per-thread dummies fit the
 * device's shared memory (p16_smem: about 112k slots on H100 / H200), and < 2^17; else the
 * two-pass count (f32 / f64, total <= 2^24); above that the core maps to slots and counts them
 * with the 1-D strategies (nd_map.cu).
 */
#include "nd_device.cuh"
#include "packed16.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

/* ND16_U (launch_policy.h) 16-byte vectors per thread per iteration (the engine's U), the next
 * iteration's loaded before this one is counted (PF): without it a block has one iteration's
 * loads in flight and then none while it counts. H100, 2 GiB device points (same run): f32 pairs
 * 256 x 256 0.70 of the read ceiling without, 0.76 with; u8 RGB 32^3 0.51 / 0.52; U = 1: 0.61 /
 * 0.47 without, 0.72 / 0.50 with. */

/* Points per vector for points of DIMS coordinates of type T: the most points whose bytes are
 * whole 32-bit words and at most 16; 0 if none. Fused kernels exist for u8, u16, f32 and f64
 * (the types of images and coordinates; the others take the per-point path). */
template <typename T, uint32_t DIMS> __host__ __device__ constexpr uint32_t nd16_points()
{
    if constexpr (!(std::is_same<T, uint8_t>::value || std::is_same<T, uint16_t>::value ||
                    std::is_same<T, float>::value || std::is_same<T, double>::value))
        return 0u;
    constexpr uint32_t ps = (uint32_t)sizeof(T) * DIMS;
    uint32_t best = 0u;
    for (uint32_t p = 1u; p * ps <= 16u; ++p)
        if ((p * ps) % 4u == 0u)
            best = p;
    return best;
}

/* FAST (f32 only): every axis is binned by its certificate (fast_f32, cert.ok). */
template <typename T, uint32_t DIMS, bool FAST>
__global__ void __launch_bounds__(P16_THREADS, 1)
    k_nd_packed16(const __grid_constant__ gpuhist_nd_map m, const unsigned char *__restrict__ base,
                  const uint64_t nvec, unsigned long long *__restrict__ out, const uint32_t nkeys)
{
    constexpr uint32_t P = nd16_points<T, DIMS>();
    constexpr uint32_t PB = (uint32_t)sizeof(T) * DIMS;  /* bytes of a point */
    constexpr uint32_t WORDS = P * PB / 4u;              /* 32-bit words of a vector */
    static_assert(P > 0u && WORDS <= 4u, "unsupported point layout");
    extern __shared__ __align__(16) uint32_t nd16_w[];
    const uint32_t tid = threadIdx.x;
    p16_engine eng;
    eng.init(nd16_w, out, nkeys, tid);
    eng.zero(tid);
    /* u8: each axis's 256 slots in a table after the engine's words (built with the same slot
     * function, so a lookup is the slot) */
    uint32_t *lut = nd16_w + p16_dummy(nkeys) + P16_THREADS;
    if constexpr (std::is_same<T, uint8_t>::value)
        nd_u8_share_table(m, DIMS, lut, tid, P16_THREADS);
    __syncthreads();
    const uint32_t out_key = GPUHIST_ND_SLOT_OUT(m.total);
    /* FAST: each axis's map and certificate in registers, not re-read per point */
    float lo[DIMS], sc[DIMS], tlo[DIMS], thi[DIMS];
    uint32_t nb[DIMS];
#pragma unroll
    for (uint32_t a = 0; a < DIMS; ++a) {
        lo[a] = m.axis[a].map.lower_f;
        sc[a] = m.axis[a].map.scale_f;
        tlo[a] = m.axis[a].cert.t_lo_f;
        thi[a] = m.axis[a].cert.t_hi_f;
        nb[a] = m.axis[a].map.bins;
    }

    const uint32_t *words = (const uint32_t *)base;
    auto load = [&](uint64_t i) -> uint4 {
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        const uint32_t *w = words + i * WORDS;
        if constexpr (WORDS == 4u) {
            if ((((uintptr_t)w) & 15u) == 0u)
                return __ldcs((const uint4 *)w);
        }
        v.x = __ldcs(w);
        if constexpr (WORDS > 1u)
            v.y = __ldcs(w + 1);
        if constexpr (WORDS > 2u)
            v.z = __ldcs(w + 2);
        if constexpr (WORDS > 3u)
            v.w = __ldcs(w + 3);
        return v;
    };
    auto keys = [&](const uint4 vv, uint32_t(&key)[P]) {
        unsigned char b[16];
        memcpy(b, &vv, 16);
#pragma unroll
        for (uint32_t j = 0; j < P; ++j) {
            T x[DIMS];
#pragma unroll
            for (uint32_t a = 0; a < DIMS; ++a)
                memcpy(&x[a], b + j * PB + a * sizeof(T), sizeof(T));
            if constexpr (std::is_same<T, uint8_t>::value) {
                uint32_t k = 0;
#pragma unroll
                for (uint32_t a = 0; a < DIMS; ++a)
                    k += lut[a * 256u + x[a]];
                key[j] = k < GH_ND_U8_OUT ? k : out_key;
                continue;
            }
            if constexpr (FAST) {
                /* every coordinate certified inside its axis: the joint slot without the
                 * combine's out/NaN cases; any other point takes the general rule below */
                uint32_t cur = 0;
                int all = 1;
#pragma unroll
                for (uint32_t a = 0; a < DIMS; ++a) {
                    int ok;
                    const uint32_t k = gpuhist_fe_key_f32(x[a], lo[a], sc[a], nb[a], tlo[a],
                                                          thi[a], 1, &ok);
                    all &= ok;
                    cur = cur * nb[a] + k;
                }
                if (all) {
                    key[j] = cur + 1u;
                    continue;
                }
            }
            uint32_t cur = 0;
#pragma unroll
            for (uint32_t a = 0; a < DIMS; ++a)
                cur = gpuhist_nd_combine(cur, nd_axis_slot<T>(m.axis[a], x[a]),
                                         m.axis[a].map.bins);
            key[j] = gpuhist_nd_encode(cur, m.total);
        }
    };
    const uint64_t per_block = (uint64_t)P16_THREADS * ND16_U;
    eng.run<ND16_U, P, true, true, false>((uint64_t)blockIdx.x * per_block,
                                           (uint64_t)gridDim.x * per_block, nvec, tid, load, keys);
    __syncthreads();
    eng.add_to_out(tid);
}

/* Points [first, first + n) of m, any layout: one global atomic per point. */
template <typename T>
__global__ void k_nd_atomic(const gpuhist_nd_map m, uint64_t first, uint64_t n,
                            unsigned long long *__restrict__ out)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        atomicAdd(out + nd_point_slot<T>(m, first + k), 1ull);
    }
}

/* Room after the engine's words for u8 points' slot tables (4 axes x 256 slots), reserved for
 * every type so that one size decides whether a map fits. */
#define ND16_LUT_BYTES ((size_t)4u * 256u * 4u)

/* The engine's shared memory for nkeys slots; 0 when it and the tables do not fit. */
size_t nd16_smem(gpuhist_ctx *ctx, uint32_t nkeys)
{
    if (nkeys >= (1u << 17))
        return 0;
    const size_t bytes = p16_smem(nkeys);
    return bytes + ND16_LUT_BYTES <= gpuhist_cuda_smem_optin(ctx) ? bytes : 0;
}

/* Launch the fused kernel for DIMS coordinates of T over the aligned vectors of points
 * [first, first + n); the points left over (fewer than a vector) go to k_nd_atomic. */
template <typename T, uint32_t DIMS>
gpuhist_status nd16_launch(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first, uint64_t n,
                           gh_nd_state *s)
{
    constexpr uint32_t P = nd16_points<T, DIMS>();
    bool fast = std::is_same<T, float>::value;
    for (uint32_t a = 0; a < DIMS; ++a)
        fast = fast && m.axis[a].fast_f32 && m.axis[a].cert.ok;
    auto kernel = fast ? k_nd_packed16<T, DIMS, std::is_same<T, float>::value>
                       : k_nd_packed16<T, DIMS, false>;
    const size_t smem = nd16_smem(ctx, s->nkeys) + ND16_LUT_BYTES;
    const uint64_t nvec = n / P;
    cudaError_t err;
    const int grid = gh_launch_grid(gh_launch_policy_of(GH_LP_ND_FUSED), (const void *)kernel, P16_THREADS, smem,
                                    ctx->device, gpuhist_cuda_sm_count(ctx), 0, nvec, &err);
    if (!grid)
        return gpuhist_cuda_check(ctx, err, "N-D: shared memory of the fused count");
    const unsigned char *base = m.axis[0].base + first * m.axis[0].stride;
    kernel<<<grid, P16_THREADS, smem, gh_nd_stream(ctx)>>>(m, base, nvec, s->counters, s->nkeys);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: fused map and count");
    const uint64_t rest = n - nvec * P;
    if (rest) {
        k_nd_atomic<T><<<1, 256, 0, gh_nd_stream(ctx)>>>(m, first + nvec * P, rest, s->counters);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: the points after the last vector");
    }
    return GPUHIST_OK;
}

/* The fused kernel for this chunk's type and dimensions, if there is one: @return 1 and the
 * status in *rc, or 0. */
template <typename T>
int nd16_try(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first, uint64_t n,
             gh_nd_state *s, gpuhist_status *rc)
{
    switch (m.dims) {
    case 2:
        if constexpr (nd16_points<T, 2>() > 0u) {
            *rc = nd16_launch<T, 2>(ctx, m, first, n, s);
            return 1;
        }
        return 0;
    case 3:
        if constexpr (nd16_points<T, 3>() > 0u) {
            *rc = nd16_launch<T, 3>(ctx, m, first, n, s);
            return 1;
        }
        return 0;
    case 4:
        if constexpr (nd16_points<T, 4>() > 0u) {
            *rc = nd16_launch<T, 4>(ctx, m, first, n, s);
            return 1;
        }
        return 0;
    default: return 0;
    }
}

template <typename T>
gpuhist_status nd16_count(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first, uint64_t n,
                          gh_nd_state *s)
{
    /* interleaved (every axis one element after the previous, points dims apart), 4-byte
     * aligned: vectors of whole words */
    const size_t size = sizeof(T);
    bool interleaved = true;
    for (uint32_t a = 0; a < m.dims; ++a)
        interleaved = interleaved && m.axis[a].stride == size * m.dims &&
                      m.axis[a].base == m.axis[0].base + a * size;
    const uintptr_t start = (uintptr_t)(m.axis[0].base + first * m.axis[0].stride);
    gpuhist_status rc = GPUHIST_OK;
    if constexpr (std::is_same<T, uint8_t>::value) {
        uint64_t done = 0;
        if (interleaved &&
            gh_nd_bytes32_count(ctx, m, first, n, s->counters, s->nkeys, &done, &rc)) {
            if (rc != GPUHIST_OK || done == n)
                return rc;
            k_nd_atomic<T><<<1, 256, 0, gh_nd_stream(ctx)>>>(m, first + done, n - done,
                                                             s->counters);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: the points after the last group");
            return GPUHIST_OK;
        }
    }
    if (interleaved && start % 4u == 0u && nd16_try<T>(ctx, m, first, n, s, &rc))
        return rc;
    const int grid = gh_fixed_grid(GH_LP_POINT_MAP, 0, n);
    k_nd_atomic<T><<<grid, GH_BLOCK, 0, gh_nd_stream(ctx)>>>(m, first, n, s->counters);
    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: map and count point by point");
    return GPUHIST_OK;
}

} /* namespace */

/* See internal.h (nd_count): begin (n = 0: can the fused count or the two-pass count take this
 * map? zero the counters; a two-pass count takes a given `collect`, the caller's device counts,
 * as its joint bins and zeroes them instead), count a chunk, or collect (map NULL: the total + 2
 * counters, nan and out (n = 2) or the joint bins (first = 1) to the host, waiting for the
 * device). */
extern "C" gpuhist_status gpuhist_cuda_nd_count(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map,
                                                uint64_t first, uint64_t n, uint64_t *collect)
{
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(ctx->device), "cudaSetDevice");
    gh_nd_state *s = gh_nd_state_of(ctx);
    if (!s)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "N-D: out of host memory");
    cudaStream_t strm = gh_nd_stream(ctx);
    if (!map) {
        if (s->direct && n != 2u)
            return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                                "N-D: the counts were counted into the caller's device buffer");
        if (first == 1u) { /* the joint bins */
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(collect, s->counters + 1,
                                             (size_t)n * sizeof(unsigned long long),
                                             cudaMemcpyDeviceToHost, strm),
                             "N-D: copy the counts to the host");
        } else if (n == 2u) { /* the tallies only: nan, out */
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(collect, s->nan_word,
                                             sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                             strm),
                             "N-D: copy the nan tally to the host");
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(collect + 1, s->out_word,
                                             sizeof(unsigned long long), cudaMemcpyDeviceToHost,
                                             strm),
                             "N-D: copy the out tally to the host");
        } else {
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemcpyAsync(collect, s->counters,
                                             (size_t)s->nkeys * sizeof(unsigned long long),
                                             cudaMemcpyDeviceToHost, strm),
                             "N-D: copy the counts to the host");
            if (s->two_pass)
                GPUHIST_CUDA_TRY(ctx,
                                 cudaMemcpyAsync(collect, s->nan_word,
                                                 sizeof(unsigned long long),
                                                 cudaMemcpyDeviceToHost, strm),
                                 "N-D: copy the nan tally to the host");
        }
        GPUHIST_CUDA_TRY(ctx, cudaStreamSynchronize(strm), "N-D: histogram");
        return GPUHIST_OK;
    }
    if (n == 0) {
        const uint32_t nkeys = map->total + 2u;
        const int fused = map->total <= (1u << 17) && nd16_smem(ctx, nkeys);
        const int two_pass = !fused && gh_tp_nd_supports(ctx, map);
        if (!fused && !two_pass)
            return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                                "N-D: %u joint bins do not fit the fused count", map->total);
        s->nkeys = nkeys;
        s->two_pass = two_pass;
        s->direct = NULL;
        /* testing knob: GPUHIST_CUDA_ND_DIRECT=0 counts into our counters and copies */
        const char *knob = getenv("GPUHIST_CUDA_ND_DIRECT");
        if (two_pass && collect && !(knob && *knob == '0')) {
            /* the joint bins counted where the caller wants them: no copy at the end */
            if (!s->tallies)
                GPUHIST_CUDA_TRY(ctx, cudaMalloc(&s->tallies, 3u * sizeof(unsigned long long)),
                                 "N-D: device tallies");
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemsetAsync(collect, 0,
                                             (size_t)map->total * sizeof(unsigned long long),
                                             strm),
                             "N-D: zero the counts");
            GPUHIST_CUDA_TRY(ctx,
                             cudaMemsetAsync(s->tallies, 0, 3u * sizeof(unsigned long long),
                                             strm),
                             "N-D: zero the tallies");
            s->direct = (unsigned long long *)collect;
            s->out_word = s->tallies;
            s->nan_word = s->tallies + 2;
            return GPUHIST_OK;
        }
        /* two-pass: two more words, the outlier slots after out (NaN in the last) */
        const size_t bytes = ((size_t)nkeys + (two_pass ? 2u : 0u)) * sizeof(unsigned long long);
        if (s->counters_size < bytes) {
            cudaStreamSynchronize(strm);
            cudaFree(s->counters);
            s->counters = NULL;
            s->counters_size = 0;
            GPUHIST_CUDA_TRY(ctx, cudaMalloc(&s->counters, bytes), "N-D: device counters");
            s->counters_size = bytes;
        }
        s->out_word = s->counters + (nkeys - 1u);
        s->nan_word = two_pass ? s->counters + (nkeys + 1u) : s->counters;
        GPUHIST_CUDA_TRY(ctx, cudaMemsetAsync(s->counters, 0, bytes, strm),
                         "N-D: zero the counters");
        return GPUHIST_OK;
    }
    gpuhist_nd_map m = *map;
    gpuhist_status rc = gh_nd_device_edges(ctx, s, &m);
    if (rc != GPUHIST_OK)
        return rc;
    if (s->direct)
        return gh_tp_nd_count(ctx, m, first, n, s->direct, s->tallies);
    if (s->two_pass)
        return gh_tp_nd_count(ctx, m, first, n, s->counters + 1, s->counters + 1 + m.total);
    switch (m.dtype) {
    case GPUHIST_U8: return nd16_count<uint8_t>(ctx, m, first, n, s);
    case GPUHIST_I8: return nd16_count<int8_t>(ctx, m, first, n, s);
    case GPUHIST_U16: return nd16_count<uint16_t>(ctx, m, first, n, s);
    case GPUHIST_I16: return nd16_count<int16_t>(ctx, m, first, n, s);
    case GPUHIST_U32: return nd16_count<uint32_t>(ctx, m, first, n, s);
    case GPUHIST_I32: return nd16_count<int32_t>(ctx, m, first, n, s);
    case GPUHIST_U64: return nd16_count<uint64_t>(ctx, m, first, n, s);
    case GPUHIST_I64: return nd16_count<int64_t>(ctx, m, first, n, s);
    case GPUHIST_F32: return nd16_count<float>(ctx, m, first, n, s);
    case GPUHIST_F64: return nd16_count<double>(ctx, m, first, n, s);
    default:
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "N-D: device points of type %s are not supported",
                            gpuhist_dtype_name(m.dtype));
    }
}
