/*
 * optimized.cu - cuda-optimized: seed 002's combined kernel, for every dtype: 16-byte vector
 * loads, several vectors in flight per thread (ILP), warp-aggregated shared atomics into a
 * per-block slot histogram, merged with global atomics.
 *
 * Mechanism: the job is split into a scalar head (up to the first 16-byte boundary), a body of
 * 16-byte vectors (16 / sizeof(T) samples each) and a scalar tail. Each thread loads U vectors
 * (U = 2 for 1- and 2-byte types, 4 otherwise) before using any, so U loads are in flight; every
 * sample of them is mapped to its counter and added with the __match_any_sync leader scheme of
 * cuda-warp-aggregated (one shared atomic per distinct counter per warp). Head and tail (fewer
 * than 2 vectors of samples) go straight to global atomics in a one-block kernel.
 * Seed: 002 ("optimized": privatisation + warp aggregation + vectorized loads + ILP).
 *
 * Why/when fast: one 16-byte load per 16 bytes keeps the memory system busy with few
 * instructions, and skewed data collapses into few atomics. When slow: uniformly spread data
 * still pays one match instruction and one shared atomic per sample (the Hopper shared-atomic
 * ceiling applies: docs/PERFORMANCE.md, "Hardware facts the CUDA strategies rely on"), and
 * multi-channel input adds channel bookkeeping per sample.
 * Limits: 4 * active * (bins + 3) bytes within the opt-in shared memory per block; a block counts
 * at most 2^30 samples per launch (32-bit shared counters). Any dtype, bin kind, 1-4 channels.
 */
#include "common.cuh"

namespace {

template <typename T> struct vec16 {
    enum { N = 16 / sizeof(T) };
    union {
        uint4 v;
        T t[N];
    };
};

/* Vectors in flight per thread. */
template <typename T> struct ilp {
    enum { U = sizeof(T) <= 2 ? 2 : 4 };
};


template <typename T, bool MULTI>
__global__ void __launch_bounds__(OPT_BLOCK_BIG, 1)
    k_optimized(gh_kparams p, uint64_t head, uint64_t vbegin, uint64_t vend,
                unsigned long long *__restrict__ out)
{
    enum { N = vec16<T>::N, U = ilp<T>::U };
    extern __shared__ uint32_t sh[];
    gh_block_zero(sh, p.counters);

    const gpuhist_binmap m = p.map;
    const uint4 *__restrict__ vecs = (const uint4 *)(p.data + head * sizeof(T));
    const uint32_t lane = threadIdx.x & 31u;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x; /* in vectors */
    /* iteration t covers vectors [t * U * stride, (t + 1) * U * stride) of the launch: thread
     * g takes g + j * stride for j < U. The loop runs on the warp's first vector so that all
     * lanes stay converged for __match_any_sync. */
    uint64_t wbase = vbegin + (uint64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u);
    const uint64_t wstride = stride * U;

    /* channel of a vector's first sample, tracked incrementally (MULTI only) */
    uint32_t ch0 = 0, step_j = 0, step_w = 0, C = p.channels;
    if (MULTI) {
        ch0 = (uint32_t)((head + (wbase + lane) * N) % C);
        step_j = (uint32_t)((stride * N) % C);
        step_w = (uint32_t)((step_j * (uint64_t)U) % C);
    }

    for (; wbase < vend; wbase += wstride) {
        vec16<T> x[U];
        bool valid[U];
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const uint64_t v = wbase + lane + (uint64_t)j * stride;
            valid[j] = v < vend;
            if (valid[j])
                x[j].v = __ldg(vecs + v);
        }
        uint32_t cj = ch0;
#pragma unroll
        for (int j = 0; j < U; ++j) {
            uint32_t ce = cj;
#pragma unroll
            for (int e = 0; e < N; ++e) {
                uint32_t c = GH_NONE;
                if (valid[j])
                    c = gh_counter<T, MULTI>(p, &m, x[j].t[e], ce);
                const uint32_t peers = __match_any_sync(0xffffffffu, c);
                if (c != GH_NONE && lane == (uint32_t)(__ffs(peers) - 1))
                    atomicAdd(&sh[c], (uint32_t)__popc(peers));
                if (MULTI) {
                    ++ce;
                    if (ce == C)
                        ce = 0;
                }
            }
            if (MULTI) {
                cj += step_j;
                if (cj >= C)
                    cj -= C;
            }
        }
        if (MULTI) {
            ch0 += step_w;
            if (ch0 >= C)
                ch0 -= C;
        }
    }
    gh_block_merge(sh, p.counters, out);
}

/* The scalar head [0, head) and tail [tail, end) of a job: at most 2 * 16 samples. */
template <typename T, bool MULTI>
__global__ void k_optimized_edges(gh_kparams p, uint64_t head, uint64_t tail,
                                  unsigned long long *__restrict__ out)
{
    const gpuhist_binmap m = p.map;
    const T *__restrict__ data = (const T *)p.data;
    const uint64_t n_tail = p.end - tail;
    for (uint64_t i = threadIdx.x; i < head + n_tail; i += blockDim.x) {
        const uint64_t k = i < head ? i : tail + (i - head);
        const uint32_t c =
            gh_counter<T, MULTI>(p, &m, data[k], MULTI ? (uint32_t)(k % p.channels) : 0u);
        if (c != GH_NONE)
            atomicAdd(&out[c], 1ull);
    }
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p;
    size_t smem;
    const gpuhist_status st = gh_block_setup(ctx, plan, job, "cuda-optimized", &p, &smem);
    if (st != GPUHIST_OK)
        return st;
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        constexpr bool M = decltype(multi)::value;
        const uint64_t N = vec16<T>::N;
        /* the job is aligned to sizeof(T), which divides 16: the head is whole samples */
        const uint64_t mis = (uintptr_t)job->data & 15u;
        uint64_t head = mis ? (16u - mis) / sizeof(T) : 0u;
        if (head > job->elements)
            head = job->elements;
        const uint64_t nvec = (job->elements - head) / N;
        const uint64_t tail = head + nvec * N;

        p.begin = 0;
        p.end = job->elements;
        if (head > 0 || tail < job->elements) {
            k_optimized_edges<T, M><<<1, 64, 0, job->stream>>>(p, head, tail,
                                                               (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-optimized head/tail");
        }
        if (nvec == 0)
            return GPUHIST_OK;
        auto kernel = k_optimized<T, M>;
        cudaError_t err;
        const int block = gh_block_of(GH_LP_OPTIMIZED, smem);
        int grid = gh_grid(job, kernel, GH_LP_OPTIMIZED, smem, nvec * N / 4u, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, "configure cuda-optimized");
        /* at most 2^30 samples per block per launch (a warp may overshoot by U vectors) */
        const uint64_t max_vecs = (uint64_t)grid * ((GH_MAX_PER_BLOCK / 2u) / N);
        return gh_segments_max(nvec, max_vecs, [&](uint64_t b, uint64_t e) -> gpuhist_status {
            kernel<<<grid, block, smem, job->stream>>>(p, head, b, e,
                                                          (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-optimized kernel");
            return GPUHIST_OK;
        });
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_optimized = {
    "cuda-optimized",
    GPUHIST_BACKEND_CUDA,
    "002 (optimized: privatisation + warp aggregation + vector loads + ILP)",
    "every dtype but f16/bf16, "
    "all bin kinds, 1-4 channels; 4*(bins+3)*channels bytes within shared memory",
    "16-byte loads, ILP, warp-aggregated shared atomics, global merge",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_fits_shared,
    run,
};
