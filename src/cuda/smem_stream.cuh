/*
 * smem_stream.cuh - what cuda-fast-smem's single-channel kernels share (fe_kernel<float> and
 * fe_kernel<double>, smem_certified_even.cu; fx_kernel, smem_cell_table.cu): their parameters,
 * the block's loop over 16-byte vectors with two stages of loads in flight, and the launch over a
 * job (head and tail elements by block 0). All: 1024 threads, one block per SM (FX_THREADS).
 * Limits: f32 or f64 samples (four or two per 16-byte vector), one channel; each launch's range
 * is cut by gh_segments, so no block counts more than 2^31 samples in its 32-bit shared
 * counters.
 */
#ifndef GPUHIST_CUDA_SMEM_STREAM_CUH
#define GPUHIST_CUDA_SMEM_STREAM_CUH

#include "common.cuh"

/* FX_THREADS, FE_U, FXE_U: launch_policy.h */

namespace gh_fast_smem {

/* The samples of one 16-byte vector, in memory order, each handed to `each`: four floats or two
 * doubles (little-endian: a double's low word comes first). */
template <typename T, class F> __device__ __forceinline__ void fx_each_of(const uint4 &w, F &&each)
{
    if constexpr (sizeof(T) == 4) {
        each(__uint_as_float(w.x));
        each(__uint_as_float(w.y));
        each(__uint_as_float(w.z));
        each(__uint_as_float(w.w));
    } else {
        each(__hiloint2double((int)w.y, (int)w.x));
        each(__hiloint2double((int)w.w, (int)w.z));
    }
}

/* Loop shared by the kernels: the block's chunks of FX_THREADS * U vectors, two stages (U loads
 * each) in flight, then the partial chunk, vector by vector. `each` counts a sample of type T
 * (float or double); `setup` (table build, ending in __syncthreads) runs once the first stage is
 * on its way, hiding its latency. */
template <int U, typename T = float, class S, class F>
__device__ __forceinline__ void fx_stream(const uint4 *__restrict__ vec, uint64_t nvec, S &&setup,
                                          F &&each)
{
    const uint32_t tid = threadIdx.x;
    const uint64_t CH = (uint64_t)FX_THREADS * U;
    const uint64_t nfull = nvec / CH;
    const uint64_t G = gridDim.x;
    auto body = [&](const uint4(&v)[U]) {
#pragma unroll
        for (int u = 0; u < U; ++u)
            fx_each_of<T>(v[u], each);
    };
    auto load = [&](uint4(&v)[U], uint64_t c) {
        const uint4 *q = vec + c * CH + tid;
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = __ldcs(q + u * FX_THREADS);
    };
    uint64_t c = blockIdx.x;
    uint4 a[U], b[U];
    if (c < nfull)
        load(a, c);
    setup();
    while (c < nfull) {
        if (c + G < nfull)
            load(b, c + G);
        body(a);
        c += G;
        if (c >= nfull)
            break;
        if (c + G < nfull)
            load(a, c + G);
        body(b);
        c += G;
    }
    /* partial chunk: vectors [nfull * CH, nvec) spread over all blocks */
    for (uint64_t i = nfull * CH + (uint64_t)blockIdx.x * FX_THREADS + tid; i < nvec;
         i += G * FX_THREADS) {
        const uint4 w = __ldcs(vec + i);
        fx_each_of<T>(w, each);
    }
}

struct fx_params {
    const uint4 *vec;     /* 16-byte-aligned body of the launch */
    uint64_t nvec;
    const void *head;     /* fewer than 16 bytes of elements before the body ... */
    const void *tail;     /* ... and after it, counted by block 0 */
    uint32_t nhead, ntail;
    uint32_t bins, ncnt;  /* ncnt = bins + 3 */
    uint32_t reps;        /* counter replicas per block (warp w uses w % reps) */
    int32_t last_inclusive;
    /* EVEN */
    float lo, sc, h, t_lo; /* f32: lower_f, scale_f; fast_even.h's h_f and t_lo_f */
    double lo_d, sc_d;     /* f64: lower, scale (the double domain's estimate) */
    double t_lo_d, t_hi_d; /* f64: the double certificate's t_lo, t_hi */
    gpuhist_binmap map;    /* fe_slow: the outside rule and binmap.h's edges */
    /* EDGES */
    const double *edges;  /* device copy, bins + 1 */
    float cs, ck, cq;     /* q(x) = bits(rz(sat(fma(x, cs, ck)) + cq)), cq = 2^-k */
    uint32_t first;       /* bits(cq) >> sh: cell(x) = (q(x) >> sh) - first */
    uint32_t cells;       /* (bits(1 + cq) >> sh) - first + 1 */
    uint32_t sh;          /* 23 - b: 2^b cells per octave of u + cq */
    uint32_t subs;        /* sub-tables for crowded cells */

    /* Element i < nhead + ntail of the head and tail, as a T (the launch's sample type). */
    template <typename T> __device__ __forceinline__ T end_sample(uint32_t i) const
    {
        return i < nhead ? ((const T *)head)[i] : ((const T *)tail)[i - nhead];
    }
};

/* Launch fe_kernel / fx_kernel over the job of T samples (head and tail elements by block 0). */
template <typename T, typename K>
static gpuhist_status fx_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, K *kernel,
                                fx_params p, size_t smem, void *out)
{
    constexpr uint64_t PER_VEC = 16u / sizeof(T);
    cudaError_t err;
    const int grid =
        gh_grid(job, kernel, GH_LP_FAST_SMEM_F32, smem, job->elements / PER_VEC, &err);
    if (grid == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
    return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        const T *d = (const T *)job->data;
        uint64_t nv;
        const uint64_t vb = gh_vec16_body<T>(job->data, b, e, &nv);
        fx_params q = p;
        q.vec = (const uint4 *)(d + vb);
        q.nvec = nv;
        q.head = d + b;
        q.nhead = (uint32_t)(vb - b);
        q.tail = d + vb + nv * PER_VEC;
        q.ntail = (uint32_t)(e - (vb + nv * PER_VEC));
        kernel<<<grid, FX_THREADS, smem, job->stream>>>(q, (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-smem kernel");
        return GPUHIST_OK;
    });
}

/* Run fe_kernel (smem_certified_even.cu: f32 or f64 EVEN) / fx_kernel (smem_cell_table.cu: f32
 * EDGES) on the job when they apply to the plan: @return 1 and the status in *st, or 0 (nothing
 * run). p holds the fields fx_try (fast_smem.cu) fills: bins, ncnt, last_inclusive, edges. */
int fe_try(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job, fx_params &p,
           void *out, gpuhist_status *st);
int fx_try_edges(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                 fx_params &p, void *out, gpuhist_status *st);

} /* namespace gh_fast_smem */

#endif
