/*
 * common.cuh - device helpers every general CUDA strategy uses (C++ only, never seen by C).
 *
 * A strategy receives a job (cuda_internal.cuh): `elements` samples of plan->dtype, contiguous,
 * aligned to the sample size, starting on a pixel boundary. Element k of the job belongs to input
 * channel k % C; plan->channel_slot[c] says which histogram that channel feeds (or -1: skipped).
 * Strategies count *counters*: histogram h's slot s is counter h * slots + s, with the slot given
 * by binmap.h (the one definition of the right answer, shared with the CPU reference).
 *
 * Everything here is index-safe for jobs of more than 2^32 samples: element indices are 64-bit;
 * counter indices are 32-bit because gh_counters_ok() refuses plans with 2^32 - 1 or more
 * counters (4 channels x 2^30 bins would already be 32 GiB of uint64 counts).
 *
 * 32-bit shared counters: a launch hands each block at most GH_MAX_PER_BLOCK samples (the host
 * loop gh_segments() cuts bigger jobs into several launches), so no shared or register counter can
 * wrap before the block adds it into the 64-bit global counters.
 */
#ifndef GPUHIST_CUDA_COMMON_CUH
#define GPUHIST_CUDA_COMMON_CUH

#include "cuda_internal.cuh"

#include <stdint.h>
#include <stdio.h>
#include <type_traits>

/* "This sample is not counted" (its channel is not histogrammed). */
#define GH_NONE 0xFFFFFFFFu

/* A block (or thread) is handed at most this many samples per launch: < 2^32 with margin. */
#define GH_MAX_PER_BLOCK (1ull << 31)

/* Block sizes (GH_BLOCK, GH_BLOCK_BIG) and every launch policy: launch_policy.h. */

/* Kernel parameters common to the slot-counting strategies (passed by value). */
struct gh_kparams {
    gpuhist_binmap map;        /* binmap.h */
    const double *edges;       /* device copy of the EDGES array, NULL otherwise */
    const unsigned char *data; /* the job's first sample */
    uint64_t begin, end;       /* element range of this launch, indices into the job */
    uint32_t channels;         /* C */
    uint32_t slots;            /* bins + 3 */
    uint32_t counters;         /* active * slots */
    int32_t base[GPUHIST_MAX_CHANNELS]; /* first counter of input channel c's histogram, or -1 */
};

/* Counter count of a plan if it fits the 32-bit counter indices, else 0. */
static inline uint32_t gh_counters_ok(const gpuhist_plan *plan)
{
    uint64_t n = (uint64_t)plan->active * (uint64_t)plan->slots;
    return n < 0xFFFFFFFFull && plan->slots > plan->bins ? (uint32_t)n : 0u;
}

static inline gh_kparams gh_make_params(const gpuhist_plan *plan, const gpuhist_cuda_job *job)
{
    gh_kparams p;
    p.map = plan->map;
    p.edges = job->edges;
    p.data = job->data;
    p.begin = 0;
    p.end = job->elements;
    p.channels = plan->channels;
    p.slots = plan->slots;
    p.counters = plan->active * plan->slots;
    for (int c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        p.base[c] = (c < (int)plan->channels && plan->channel_slot[c] >= 0)
                        ? (int32_t)((uint32_t)plan->channel_slot[c] * plan->slots)
                        : -1;
    return p;
}

/* ---- dtype dispatch (host) ------------------------------------------------------------------ */

template <typename T> struct gh_tag {
    typedef T type;
};

/* Call f(gh_tag<T>(), std::integral_constant<bool, MULTI>()) for the plan's sample type T and
 * MULTI = (channels > 1). Single-channel kernels then carry no channel arithmetic at all. */
template <class F> static gpuhist_status gh_dispatch(const gpuhist_plan *plan, F &&f)
{
    const bool multi = plan->channels > 1;
#define GH_CASE(DT, T)                                                                         \
    case DT:                                                                                   \
        return multi ? f(gh_tag<T>(), std::true_type()) : f(gh_tag<T>(), std::false_type());
    switch (plan->dtype) {
        GH_CASE(GPUHIST_U8, uint8_t)
        GH_CASE(GPUHIST_I8, int8_t)
        GH_CASE(GPUHIST_U16, uint16_t)
        GH_CASE(GPUHIST_I16, int16_t)
        GH_CASE(GPUHIST_U32, uint32_t)
        GH_CASE(GPUHIST_I32, int32_t)
        GH_CASE(GPUHIST_U64, uint64_t)
        GH_CASE(GPUHIST_I64, int64_t)
        GH_CASE(GPUHIST_F32, float)
        GH_CASE(GPUHIST_F64, double)
    default:
        break;
    }
#undef GH_CASE
    return GPUHIST_ERROR_UNSUPPORTED;
}

/* Half-precision samples as their 16-bit patterns: the types gh_dispatch_half passes. A kernel
 * loads them as it loads any T; gh_slot (below) widens them exactly to float (binmap.h). */
struct gh_f16 {
    uint16_t bits;
};
struct gh_bf16 {
    uint16_t bits;
};

/* gh_dispatch for f16 / bf16 plans (gh_f16 / gh_bf16), for the kernels written for them too
 * (cuda-global-atomic, the backend's minmax); UNSUPPORTED for every other dtype. */
template <class F> static gpuhist_status gh_dispatch_half(const gpuhist_plan *plan, F &&f)
{
    const bool multi = plan->channels > 1;
    if (plan->dtype == GPUHIST_F16)
        return multi ? f(gh_tag<gh_f16>(), std::true_type())
                     : f(gh_tag<gh_f16>(), std::false_type());
    if (plan->dtype == GPUHIST_BF16)
        return multi ? f(gh_tag<gh_bf16>(), std::true_type())
                     : f(gh_tag<gh_bf16>(), std::false_type());
    return GPUHIST_ERROR_UNSUPPORTED;
}

/* ---- slot of one sample, per type (device) --------------------------------------------------- */

/* Integers of up to 32 bits and i64 go through the signed 64-bit path (exact beyond 2^53),
 * u64 through its own (values above 2^63), floats through the float paths: the same functions,
 * in the same order, as the CPU reference. */
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   uint8_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   int8_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   uint16_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   int16_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   uint32_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   int32_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   uint64_t x)
{
    return gpuhist_slot_u64(m, e, (gh_u64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   int64_t x)
{
    return gpuhist_slot_i64(m, e, (gh_i64)x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   float x)
{
    return gpuhist_slot_f32(m, e, x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   double x)
{
    return gpuhist_slot_f64(m, e, x);
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   gh_f16 x)
{
    return gpuhist_slot_f32(m, e, gpuhist_f16_to_f32(x.bits));
}
static __device__ __forceinline__ uint32_t gh_slot(const gpuhist_binmap *m, const double *e,
                                                   gh_bf16 x)
{
    return gpuhist_slot_f32(m, e, gpuhist_bf16_to_f32(x.bits));
}

/* First counter of input channel ch's histogram, or -1. Selected with compares, not an indexed
 * load, so the kernel parameter array is never copied to local memory. */
static __device__ __forceinline__ int32_t gh_base(const gh_kparams &p, uint32_t ch)
{
    int32_t b = p.base[0];
    b = ch == 1u ? p.base[1] : b;
    b = ch == 2u ? p.base[2] : b;
    b = ch == 3u ? p.base[3] : b;
    return b;
}

/* Counter of sample x of input channel ch, or GH_NONE when that channel is not histogrammed. */
template <typename T, bool MULTI>
static __device__ __forceinline__ uint32_t gh_counter(const gh_kparams &p, const gpuhist_binmap *m,
                                                      T x, uint32_t ch)
{
    if (!MULTI)
        return gh_slot(m, p.edges, x);
    int32_t b = gh_base(p, ch);
    if (b < 0)
        return GH_NONE;
    return (uint32_t)b + gh_slot(m, p.edges, x);
}

/* Channel of element k, tracked incrementally along a loop of constant stride (one 64-bit
 * modulo per thread instead of one per sample). */
struct gh_chan {
    uint32_t ch, step, C;
    __device__ __forceinline__ void init(uint64_t k, uint64_t stride, uint32_t channels)
    {
        C = channels;
        ch = (uint32_t)(k % channels);
        step = (uint32_t)(stride % channels);
    }
    __device__ __forceinline__ void advance()
    {
        ch += step;
        if (ch >= C)
            ch -= C;
    }
};

/* Shared-memory increment at a 32-bit shared address (__cvta_generic_to_shared): no return
 * value, no 64-bit address (cuda-fast-smem, cuda-byte-pairs). */
static __device__ __forceinline__ void gh_red_shared(uint32_t a)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(a) : "memory");
}

/* The same, adding n. */
static __device__ __forceinline__ void gh_red_shared_add(uint32_t a, uint32_t n)
{
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(a), "r"(n) : "memory");
}

/* The same when n is non-zero (a predicated add, no branch). */
static __device__ __forceinline__ void gh_red_shared_add_nz(uint32_t a, uint32_t n)
{
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t"
                 "@p red.shared.add.u32 [%0], %1;\n\t}" ::"r"(a), "r"(n)
                 : "memory");
}

/* ---- kernel skeletons (device) --------------------------------------------------------------- */

/* The per-block privatised slot histogram of cuda-block-shared, cuda-warp-aggregated and
 * cuda-optimized, kept in `counters` 32-bit shared counters sh[]. Two calls around the kernel's
 * counting loop rather than one taking the loop as a lambda: the lambda form changes the
 * loop's register allocation and scheduling (nvcc 13.0, sm_90), these compile to the same SASS
 * as the code written out. gh_block_zero: zero sh, then wait for the whole block. */
static __device__ __forceinline__ void gh_block_zero(uint32_t *sh, uint32_t counters)
{
    for (uint32_t i = threadIdx.x; i < counters; i += blockDim.x)
        sh[i] = 0u;
    __syncthreads();
}

/* gh_block_merge: once the whole block has counted, add each non-zero counter into the 64-bit
 * global counters with one atomic. */
static __device__ __forceinline__ void gh_block_merge(const uint32_t *sh, uint32_t counters,
                                                      unsigned long long *__restrict__ out)
{
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < counters; i += blockDim.x) {
        uint32_t v = sh[i];
        if (v)
            atomicAdd(&out[i], (unsigned long long)v);
    }
}

/* Block 0's share of a 16-byte-vector walk over the launch's range [kp.begin, kp.end): the
 * unaligned head [begin, vbegin) and tail [vbegin + nvec * VE, end), fewer than VE = 16 /
 * sizeof(T) elements each, one per thread: f(k, true) with k the element's index. ALL_LANES:
 * every thread of block 0 calls f, with (0, false) where it has no element (warp-synchronous f). */
template <typename T, bool ALL_LANES, class F>
static __device__ __forceinline__ void gh_vec16_loose(const gh_kparams &kp, uint64_t vbegin,
                                                      uint64_t nvec, F &&f)
{
    constexpr uint32_t VE = 16u / sizeof(T);
    const uint32_t tid = threadIdx.x;
    if (blockIdx.x == 0) {
        const uint64_t vend = vbegin + nvec * VE;
        const uint64_t nh = vbegin - kp.begin, nt = kp.end - vend;
        const bool valid = tid < nh + nt;
        if (ALL_LANES || valid) {
            uint64_t k = 0;
            if (valid)
                k = tid < nh ? kp.begin + tid : vend + (tid - nh);
            f(k, valid);
        }
    }
}

/*
 * The element walk of cuda-fast-smem and cuda-fast-global: f(x, ch, valid) for every element x
 * of the launch's range [kp.begin, kp.end), ch its input channel (0 unless MULTI), by a kernel
 * of THREADS threads per block.
 *  - Block 0 first takes the unaligned head and tail (gh_vec16_loose).
 *  - Then the 16-byte-aligned body, nvec vectors from element vbegin: each block takes chunks of
 *    THREADS * U vectors, grid-stride; a thread issues its U streaming loads (__ldcs: read once,
 *    keep out of L1) before using any, so U loads are in flight per thread.
 * ALL_LANES: f is warp-synchronous, so every thread calls it at every step (block 0's head/tail
 * step and each vector's VE elements), with valid = false (x meaningless) where it has no
 * element. Otherwise f is only called for real elements (valid = true).
 */
template <typename T, bool MULTI, int THREADS, int U, bool ALL_LANES, class F>
static __device__ __forceinline__ void gh_vec16_walk(const gh_kparams &kp, uint64_t vbegin,
                                                     uint64_t nvec, F &&f)
{
    constexpr uint32_t VE = 16u / sizeof(T);
    const uint32_t tid = threadIdx.x;
    const T *data = (const T *)kp.data;
    gh_vec16_loose<T, ALL_LANES>(kp, vbegin, nvec, [&](uint64_t k, bool valid) {
        T x = T();
        uint32_t ch = 0;
        if (valid) {
            x = data[k];
            ch = MULTI ? (uint32_t)(k % kp.channels) : 0u;
        }
        f(x, ch, valid);
    });
    const uint4 *vec = (const uint4 *)(data + vbegin);
    const uint64_t step = (uint64_t)gridDim.x * (THREADS * U);
    const uint32_t C = kp.channels;
    const uint32_t ph0 = MULTI ? (uint32_t)(vbegin % C) : 0u;
    /* base is block-uniform: with ALL_LANES every lane runs every iteration */
    for (uint64_t base = (uint64_t)blockIdx.x * (THREADS * U); base < nvec; base += step) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const uint64_t i = base + (uint64_t)u * THREADS + tid;
            v[u] = i < nvec ? __ldcs(vec + i) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const uint64_t i = base + (uint64_t)u * THREADS + tid;
            const bool valid = i < nvec;
            if (!ALL_LANES && !valid)
                continue;
            union {
                uint4 v;
                T e[VE];
            } w;
            w.v = v[u];
            uint32_t ch = 0;
            if (MULTI) /* channel of element vbegin + i * VE */
                ch = (uint32_t)((ph0 + (i % C) * (VE % C)) % C);
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e) {
                f(w.e[e], ch, valid);
                if (MULTI) {
                    ch += 1u;
                    if (ch == C)
                        ch = 0u;
                }
            }
        }
    }
}

/* ---- host helpers ----------------------------------------------------------------------------- */

/* Grid of `kernel` for a job under launch policy `id` (launch_policy.h: gh_launch_grid) with
 * `smem` bytes of dynamic shared memory over `work` items of the policy's unit; the block is
 * gh_launch_threads of the policy.
 * @return 0 and a CUDA error in *err when the kernel cannot be configured. */
template <typename K>
static int gh_grid(const gpuhist_cuda_job *job, K *kernel, gh_lp_id id, size_t smem,
                   uint64_t work, cudaError_t *err)
{
    const gh_launch_policy p = gh_launch_policy_of(id);
    return gh_launch_grid(p, (const void *)kernel, gh_launch_threads(&p, smem), smem,
                          job->device, job->sm_count, job->blocks_per_sm_cap, work, err);
}

/* Threads per block of policy `id` for `smem` bytes of dynamic shared memory. */
static inline int gh_block_of(gh_lp_id id, size_t smem)
{
    const gh_launch_policy p = gh_launch_policy_of(id);
    return (int)gh_launch_threads(&p, smem);
}

/* Launch `launch(begin, end)` over [0, elements) in segments of at most max_per_launch items;
 * gh_segments: small enough that none of `grid` blocks counts more than GH_MAX_PER_BLOCK samples
 * in 32-bit counters. */
template <class L>
static gpuhist_status gh_segments_max(uint64_t elements, uint64_t max_per_launch, L &&launch)
{
    if (max_per_launch < 1)
        max_per_launch = 1;
    for (uint64_t b = 0; b < elements; b += max_per_launch) {
        uint64_t e = elements - b > max_per_launch ? b + max_per_launch : elements;
        gpuhist_status st = launch(b, e);
        if (st != GPUHIST_OK)
            return st;
    }
    return GPUHIST_OK;
}
template <class L> static gpuhist_status gh_segments(uint64_t elements, int grid, L &&launch)
{
    return gh_segments_max(elements, (uint64_t)grid * GH_MAX_PER_BLOCK, launch);
}

/* The host half of gh_vec16_walk: the first 16-byte-aligned element vb of the launch range
 * [b, e) (the job's data is aligned to sizeof(T), which divides 16), and in *nv the whole
 * 16-byte vectors from there; [b, vb) and [vb + *nv * 16 / sizeof(T), e) are the head and tail. */
template <typename T>
static inline uint64_t gh_vec16_body(const unsigned char *data, uint64_t b, uint64_t e,
                                     uint64_t *nv)
{
    const uintptr_t a = (uintptr_t)(data + b * sizeof(T));
    uint64_t vb = b + ((16u - (a & 15u)) & 15u) / sizeof(T);
    if (vb > e)
        vb = e;
    *nv = (e - vb) / (16u / sizeof(T));
    return vb;
}

/* Does the plan fit 32-bit counter indices? (The supports_fn of the strategies that count in
 * global memory.) */
static inline int gh_counters_fit(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    (void)ctx;
    return gh_counters_ok(plan) != 0;
}

/* Do `counters` 32-bit counters fit in the opt-in shared memory of the context's device? (The
 * supports_fn of the gh_block_setup strategies.) */
static inline int gh_fits_shared(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    uint32_t n = gh_counters_ok(plan);
    return n != 0 && (size_t)n * 4u <= gpuhist_cuda_smem_optin(ctx);
}

/* Kernel parameters and dynamic shared memory (4 bytes per counter) of strategy `name`, whose
 * blocks keep every counter in shared memory (gh_block_zero / gh_block_merge); fails when that
 * exceeds the device's opt-in shared memory per block. */
static inline gpuhist_status gh_block_setup(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                            const gpuhist_cuda_job *job, const char *name,
                                            gh_kparams *p, size_t *smem)
{
    *p = gh_make_params(plan, job);
    *smem = (size_t)p->counters * sizeof(uint32_t);
    if (*smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s: %zu bytes of counters exceed shared memory (%zu)", name, *smem,
                            job->smem_per_block_optin);
    return GPUHIST_OK;
}

/* "a b" in buf: a gpuhist_cuda_check message that names the strategy (built on error paths
 * only, so that the happy path formats nothing). */
static inline const char *gh_what(char (&buf)[96], const char *a, const char *b)
{
    snprintf(buf, sizeof buf, "%s %s", a, b);
    return buf;
}

/*
 * run() of cuda-block-shared and cuda-warp-aggregated: kernel = pick(gh_tag<T>(), multi), taking
 * (gh_kparams, out), grid-stride over each gh_segments range of the job with GH_LP_BLOCK_SHARED's
 * threads and the counters in dynamic shared memory (gh_block_setup). `name` is the strategy's.
 */
template <class Pick>
static gpuhist_status gh_block_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp,
                                   void *out, const char *name, Pick &&pick)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p;
    size_t smem;
    const gpuhist_status st = gh_block_setup(ctx, plan, job, name, &p, &smem);
    if (st != GPUHIST_OK)
        return st;
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        auto kernel = pick(tag, multi);
        cudaError_t err;
        char what[96];
        const int block = gh_block_of(GH_LP_BLOCK_SHARED, smem);
        int grid = gh_grid(job, kernel, GH_LP_BLOCK_SHARED, smem, job->elements, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, gh_what(what, "configure", name));
        return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
            p.begin = b;
            p.end = e;
            kernel<<<grid, block, smem, job->stream>>>(p, (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, gh_what(what, name, "kernel"));
            return GPUHIST_OK;
        });
    });
}

#endif
