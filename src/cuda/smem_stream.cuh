/*
 * smem_f32_stream.cuh - what cuda-fast-smem's two single-channel f32 kernels share (fe_kernel,
 * smem_certified_even.cu; fx_kernel, smem_cell_table.cu): their parameters, the block's loop
 * over 16-byte vectors with two stages of loads in flight, and the launch over a job (head and
 * tail elements by block 0). Both: 1024 threads, one block per SM (FX_THREADS).
 * Limits: f32 samples, one channel; each launch's range is cut by gh_segments, so no block
 * counts more than 2^31 samples in its 32-bit shared counters.
 */
#ifndef GPUHIST_CUDA_SMEM_F32_STREAM_CUH
#define GPUHIST_CUDA_SMEM_F32_STREAM_CUH

#include "common.cuh"

/* FX_THREADS, FE_U, FXE_U: launch_policy.h */

namespace gh_fast_smem {

/* Loop shared by both kernels: the block's chunks of FX_THREADS * U vectors, two stages (U loads
 * each) in flight, then the partial chunk, vector by vector. `each` counts a float; `setup` (table
 * build, ending in __syncthreads) runs once the first stage is on its way, hiding its latency. */
template <int U, class S, class F>
__device__ __forceinline__ void fx_stream(const uint4 *__restrict__ vec, uint64_t nvec, S &&setup,
                                          F &&each)
{
    const uint32_t tid = threadIdx.x;
    const uint64_t CH = (uint64_t)FX_THREADS * U;
    const uint64_t nfull = nvec / CH;
    const uint64_t G = gridDim.x;
    auto body = [&](const uint4(&v)[U]) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            each(__uint_as_float(v[u].x));
            each(__uint_as_float(v[u].y));
            each(__uint_as_float(v[u].z));
            each(__uint_as_float(v[u].w));
        }
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
        each(__uint_as_float(w.x));
        each(__uint_as_float(w.y));
        each(__uint_as_float(w.z));
        each(__uint_as_float(w.w));
    }
}

struct fx_params {
    const uint4 *vec;     /* 16-byte-aligned body of the launch */
    uint64_t nvec;
    const float *head;    /* fewer than 4 elements before the body ... */
    const float *tail;    /* ... and after it, counted by block 0 */
    uint32_t nhead, ntail;
    uint32_t bins, ncnt;  /* ncnt = bins + 3 */
    uint32_t reps;        /* counter replicas per block (warp w uses w % reps) */
    int32_t last_inclusive;
    /* EVEN */
    float lo, sc, h, t_lo; /* lower_f, scale_f; fast_even.h's h_f and t_lo_f */
    gpuhist_binmap map;    /* fe_slow: the outside rule and binmap.h's edges */
    /* EDGES */
    const double *edges;  /* device copy, bins + 1 */
    float cs, ck, cq;     /* q(x) = bits(rz(sat(fma(x, cs, ck)) + cq)), cq = 2^-k */
    uint32_t first;       /* bits(cq) >> sh: cell(x) = (q(x) >> sh) - first */
    uint32_t cells;       /* (bits(1 + cq) >> sh) - first + 1 */
    uint32_t sh;          /* 23 - b: 2^b cells per octave of u + cq */
    uint32_t subs;        /* sub-tables for crowded cells */
};

/* Launch fe_kernel / fx_kernel over the job (head and tail elements by block 0). */
template <typename K>
static gpuhist_status fx_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, K *kernel,
                                fx_params p, size_t smem, void *out)
{
    cudaError_t err;
    const int grid = gh_grid(job, kernel, GH_LP_FAST_SMEM_F32, smem, job->elements / 4u, &err);
    if (grid == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
    return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        const float *d = (const float *)job->data;
        uint64_t nv;
        const uint64_t vb = gh_vec16_body<float>(job->data, b, e, &nv);
        fx_params q = p;
        q.vec = (const uint4 *)(d + vb);
        q.nvec = nv;
        q.head = d + b;
        q.nhead = (uint32_t)(vb - b);
        q.tail = d + vb + nv * 4u;
        q.ntail = (uint32_t)(e - (vb + nv * 4u));
        kernel<<<grid, FX_THREADS, smem, job->stream>>>(q, (unsigned long long *)out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-smem kernel");
        return GPUHIST_OK;
    });
}

/* Run fe_kernel (smem_certified_even.cu) / fx_kernel (smem_cell_table.cu) on the job when they
 * apply to the plan: @return 1 and the status in *st, or 0 (nothing run). p holds the fields
 * fx_try (fast_smem.cu) fills: bins, ncnt, last_inclusive, edges. */
int fe_try(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job, fx_params &p,
           void *out, gpuhist_status *st);
int fx_try_edges(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                 fx_params &p, void *out, gpuhist_status *st);

} /* namespace gh_fast_smem */

#endif
