/*
 * fast_global.cu - cuda-fast-global: global-memory counters for histograms too large for one
 * block's shared memory (such as f32 with 2^20 even bins), made skew-proof.
 *
 * Problem. cuda-global-atomic does one 64-bit L2 atomic per sample: ~400 GB/s on spread data
 * (L2 atomic throughput, ~100 G scattered atomics/s on the H200) but 5-6 GB/s on hot or constant
 * data, because atomics on one address serialise in its L2 slice (~1.3 G/s per address).
 *
 * Mechanism.
 *  - 16-byte loads (__ldcs, 4 vectors per thread in flight for 4/8-byte types), grid-stride
 *    over the aligned body of each launch's range; block 0 counts the unaligned head/tail
 *    (< 16 bytes each). The walk is common.cuh's gh_vec16_walk, shared with cuda-fast-smem.
 *  - A two-entry per-thread cache of (counter, run count) in registers: entry A keeps the
 *    heavier counter, entry B the most recent other one. A sample equal to A or B only
 *    increments a register; any other sample flushes B to global memory and takes its place;
 *    B and A swap when B's count passes A's. A hot value therefore settles in A and is written
 *    once per thread at the end: constant data issues no atomic in the main loop, hot90 one per
 *    non-hot sample (scattered addresses, which L2 handles at full rate).
 *  - Flushes are warp-synchronous (one per sample step, skipped by __any_sync when no lane
 *    flushes). A cheap hint (key equal to lane^1's or lane^16's) detects duplicate flush
 *    addresses; only then __match_any_sync groups the lanes and the lowest lane of each group
 *    adds the group's sum (shared-memory gather): a few hot values thrashing the cache, and the
 *    final flush of constant data, cost one atomic per warp instead of one per lane.
 *  - Counters: 32-bit partial counters in device scratch (gpuhist_cuda_scratch), zeroed with
 *    cudaMemsetAsync, fire-and-forget RED.32 atomics, then a small kernel adds them into the
 *    uint64 `out`. A launch covers at most 2^31 elements, so no 32-bit counter (and no run
 *    count or group sum) can wrap. If the scratch cannot be had, the same kernel adds straight
 *    into `out` with 64-bit atomics.
 *
 * f32 EVEN (whenever fast_even.h's certificate holds). THE estimate and THE TEST of fast_even.h
 * (two-sided, before any range check: FADD, FMUL, FADD.RM, IADD, ISETP, FADD, FADD, 2 FSETP);
 * a sample that fails it (near an edge, NaN, out of range) takes the outside rule by compares
 * and the one-edge rule, bin = j - 1 + (x >= E(j)), with one edge by binmap.h's own formula in
 * double. Bit-identical to cpu-reference. Specs the certificate refuses take binmap.h per
 * sample (as other dtypes do).
 * Other dtypes / kinds: common.cuh's gh_counter (binmap.h per sample; EDGES binary search on the
 * device edge array through L1/L2). Correct for everything, fast only where atomics bind.
 *
 * Cost (f32 2^20 even): on uniform and bell data one scattered L2 atomic per sample is the
 * bound, as for cuda-global-atomic (RED.32 against RED.64 is not measured); hot90 costs 0.1
 * scattered atomic per sample + the run cache's instructions; constant data no atomic until
 * the end: issue bound (the f32 mapping above is ~12 instructions per sample). The final flush
 * of constant data is one same-address atomic per warp (~8.4k: ~7 us). Measured:
 * docs/PERFORMANCE.md, "CUDA (NVIDIA H200)", cell f32_1M.
 * When slow: spread data over many bins (L2 atomic bound, as cuda-global-atomic); data with
 * 3+ interleaved hot values of similar weight (cache thrash; warp aggregation limits the damage
 * to one atomic per warp per hot value per step).
 * Limits: fewer than 2^32 - 1 counters (common.cuh); scratch of 4 bytes per counter; 1-4
 * channels; launches of at most 2^31 elements.
 * Data dependence: see "When slow"; the f32 fast path computes one edge for samples that fail
 * the test (near an edge).
 * Seed: 001 section V.A (global atomics), 002 (warp-aggregated atomics); the register run
 * cache, the hinted match_any aggregation and the certified f32 estimate are new.
 *
 * cuda-fast-cluster (same file, same kernel body, ROUTE = 1): the counters live in distributed
 * shared memory (sm_90 thread-block clusters). A cluster of S blocks (16 with the non-portable
 * size where cudaOccupancyMaxActiveClusters allows it, else 8, 4, 2), one block of 1024 threads
 * per SM, each block holding P = min(ceil(counters / S), ~56.8k) 32-bit counters in its dynamic
 * shared memory; counter s < S * P is owned by block rank s / P and updated with an atomic on
 * the address cooperative_groups::this_cluster().map_shared_rank() gives; counters beyond the
 * cluster's capacity take the global route. Run cache and warp aggregation as above. Zeroed,
 * then cluster.sync(); at the end cluster.sync() and each block adds its non-zero counters into
 * the (32-bit scratch) global counters. The grid is one wave of resident clusters.
 * 32-bit rather than packed 16-bit counters: 16-bit halves need a hand-off when a half wraps,
 * and the carry-compensation scheme (the thread that wraps the low half subtracts the carry
 * from the high half) is not exact under concurrency - a high-half add landing between
 * the wrap and the compensation sees the spurious carry and may report a wrap that did not
 * happen. With 32-bit counters, f32 2^20 bins keeps ~87% of the slots (909k of 1049k with
 * S = 16) in the cluster; uniform data sends ~13% of its samples to L2 atomics.
 * Cost: 15 of 16 updates cross the SM-to-SM network, whose atomic throughput is the bound on
 * spread data: it measures below cuda-fast-global there (docs/PERFORMANCE.md, "CUDA (NVIDIA
 * H200)", cell f32_1M), so the auto policy does not use it. Hot90/constant as cuda-fast-global
 * (the run cache keeps hot samples off the network). Clusters of 16 may leave SMs idle (GPCs
 * with fewer than 16 free SMs host none), and each launch ends with one global add per non-zero
 * cluster counter (~6.4M for uniform 2^20 bins, ~65 us). Without cluster support it runs as
 * cuda-fast-global.
 */
#include "common.cuh"
#include "fast_even.h"

#include <cooperative_groups.h>
#include <math.h>

namespace {

#define FG_THREADS 256
#define FG_MAX_PER_LAUNCH (1ull << 31) /* elements: no 32-bit counter can wrap */
#define FG_FULL 0xFFFFFFFFu

enum { FG_GENERIC = 0, FG_F32_EVEN = 1 };

/* vectors of 16 bytes per thread per iteration: about 64 bytes in flight per thread */
template <typename T> struct fg_unroll {
    static constexpr int value = sizeof(T) >= 4 ? 4 : (sizeof(T) == 2 ? 2 : 1);
};

/* Exact f32 EVEN slot (see banner): fast_even.h's test, else its one-edge rule. */
__device__ __forceinline__ uint32_t fg_slot_even_f32(const gpuhist_binmap &m, float t_lo,
                                                     float t_hi, float x)
{
    int ok;
    const uint32_t key = gpuhist_fe_key_f32(x, m.lower_f, m.scale_f, m.bins, t_lo, t_hi, 1, &ok);
    if (ok)
        return key;
    return gpuhist_fe_fix_f32(&m, t_lo, 0, x);
}

struct fg_params {
    gh_kparams k;
    float t_lo, t_hi;   /* FG_F32_EVEN: fast_even.h's thresholds (t_lo_f, t_hi_f) */
    uint32_t per_block; /* cluster route: counters held by each block of a cluster (P) */
    uint32_t kdsm;      /* cluster route: counters [0, kdsm) live in the cluster (<= size * P) */
};

/* Threads per block: 256 for the global route; the cluster route has one block per SM (its
 * shared memory is one SM's worth), which then needs 1024 threads to keep loads in flight. */
template <int ROUTE> struct fg_threads {
    static constexpr int value = ROUTE ? 1024 : GH_BLOCK; /* GH_LP_FAST_GLOBAL's block */
};

/* Fire-and-forget global add (RED: no result comes back, so no thread waits on the L2). */
__device__ __forceinline__ void fg_red(unsigned int *p, uint32_t n)
{
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(n) : "memory");
}
__device__ __forceinline__ void fg_red(unsigned long long *p, uint32_t n)
{
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"((unsigned long long)n)
                 : "memory");
}

/* Warp-synchronous flush: every lane of the warp calls it (need = this lane adds n to counter
 * s through add(s, n)). */
template <class ADD>
__device__ __forceinline__ void fg_flush(ADD &&add, bool need, uint32_t s, uint32_t n,
                                         uint32_t lane, uint32_t *wbuf)
{
    if (!__any_sync(FG_FULL, need))
        return;
    const uint32_t key = need ? s : GH_NONE;
    const uint32_t k1 = __shfl_xor_sync(FG_FULL, key, 1);
    const uint32_t k16 = __shfl_xor_sync(FG_FULL, key, 16);
    const bool hint = need && (key == k1 || key == k16);
    if (__any_sync(FG_FULL, hint)) {
        /* duplicates likely: one atomic per distinct address */
        const uint32_t needmask = __ballot_sync(FG_FULL, need);
        const uint32_t grp = __match_any_sync(FG_FULL, key) & needmask;
        wbuf[lane] = n;
        __syncwarp();
        if (need && (grp & ((1u << lane) - 1u)) == 0u) {
            uint32_t sum = 0; /* <= the launch's elements <= 2^31 */
            for (uint32_t g = grp; g; g &= g - 1u)
                sum += wbuf[__ffs(g) - 1];
            add(s, sum);
        }
        __syncwarp();
    } else if (need) {
        add(s, n);
    }
}

template <typename T, bool MULTI, int MODE, typename CT, int ROUTE>
__global__ void __launch_bounds__(fg_threads<ROUTE>::value)
    fg_kernel(const fg_params p, const uint64_t vbegin, const uint64_t nvec,
              CT *__restrict__ out)
{
    constexpr int THREADS = fg_threads<ROUTE>::value;
    __shared__ uint32_t wbufs[THREADS];
    extern __shared__ __align__(16) uint32_t fg_dsm[]; /* cluster route: this block's P counters */
    const gh_kparams &kp = p.k;
    const gpuhist_binmap m = kp.map;
    const uint32_t tid = threadIdx.x, lane = tid & 31u;
    uint32_t *wbuf = wbufs + (tid & ~31u);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (ROUTE) {
        for (uint32_t j = tid; j < p.per_block; j += THREADS)
            fg_dsm[j] = 0u;
        cooperative_groups::this_cluster().sync(); /* every block's counters are zero */
    }
#endif
    /* Counter s gets n: in the cluster's shared memory when it lives there, else global. */
    auto add = [&](uint32_t s, uint32_t n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        if constexpr (ROUTE) {
            if (s < p.kdsm) {
                const uint32_t r = s / p.per_block; /* < cluster size: kdsm <= size * P */
                uint32_t *q = cooperative_groups::this_cluster().map_shared_rank(fg_dsm, r);
                atomicAdd(q + (s - r * p.per_block), n);
                return;
            }
        }
#endif
        fg_red(out + s, n);
    };

    /* the two-entry cache (banner); GH_NONE is never a counter */
    uint32_t a = GH_NONE, ac = 0, b = GH_NONE, bc = 0;

    /* Count one element (c = its counter or GH_NONE); every lane of the warp calls this. */
    auto take = [&](uint32_t c) {
        bool need = false;
        uint32_t fs = 0, fc = 0;
        if (c != GH_NONE) {
            if (c == a) {
                ++ac;
            } else if (c == b) {
                ++bc;
            } else {
                need = bc != 0u;
                fs = b;
                fc = bc;
                b = c;
                bc = 1u;
            }
            if (bc > ac) {
                const uint32_t t = a, tc = ac;
                a = b;
                ac = bc;
                b = t;
                bc = tc;
            }
        }
        fg_flush(add, need, fs, fc, lane, wbuf);
    };
    auto counter = [&](T x, uint32_t ch) -> uint32_t {
        uint32_t s;
        if constexpr (MODE == FG_F32_EVEN)
            s = fg_slot_even_f32(m, p.t_lo, p.t_hi, (float)x);
        else
            s = gh_slot(&m, kp.edges, x);
        if (MULTI) {
            const int32_t bs = gh_base(kp, ch);
            if (bs < 0)
                return GH_NONE;
            s += (uint32_t)bs;
        }
        return s;
    };

    /* ALL_LANES = true: take() is warp-synchronous (fg_flush) */
    gh_vec16_walk<T, MULTI, THREADS, fg_unroll<T>::value, true>(
        kp, vbegin, nvec,
        [&](T x, uint32_t ch, bool valid) { take(valid ? counter(x, ch) : GH_NONE); });
    fg_flush(add, ac != 0u, a, ac, lane, wbuf);
    fg_flush(add, bc != 0u, b, bc, lane, wbuf);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (ROUTE) {
        /* all remote adds into this block's counters are done; afterwards nobody touches
         * another block's shared memory, so blocks may exit in any order */
        cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
        cl.sync();
        const uint32_t first = cl.block_rank() * p.per_block;
        for (uint32_t j = tid; j < p.per_block; j += THREADS) {
            const uint32_t v = fg_dsm[j];
            if (v != 0u && first + j < p.kdsm)
                fg_red(out + (first + j), v);
        }
    }
#endif
}

/* out[i] += part[i] for the 32-bit partial counters. */
__global__ void fg_add(const uint32_t *__restrict__ part, uint32_t n,
                       unsigned long long *__restrict__ out)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t c = part[i];
        if (c)
            out[i] += c;
    }
}

/* The f32 EVEN path when fast_even.h's certificate holds (its thresholds into *c). */
static int fg_mode(const gpuhist_plan *plan, gpuhist_fe_cert *c)
{
    if (plan->dtype != GPUHIST_F32 || plan->map.kind != GH_KIND_EVEN)
        return FG_GENERIC;
    gpuhist_fe_cert_of(&plan->map, c); /* cached per spec */
    return c->ok ? FG_F32_EVEN : FG_GENERIC;
}

/* Cluster geometry of the cluster route for one kernel; 0 when the device cannot run it. */
struct fg_cluster {
    int size;        /* blocks per cluster */
    int clusters;    /* clusters resident at once (the grid is one wave) */
    uint32_t P;      /* counters per block */
    uint32_t kdsm;   /* counters held in the cluster */
    size_t smem;     /* dynamic shared memory per block */
};

template <typename K>
static int fg_cluster_config(const gpuhist_cuda_job *job, K *kernel, uint32_t ncnt,
                             fg_cluster *c)
{
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, job->device) !=
            cudaSuccess ||
        major < 9) {
        (void)cudaGetLastError();
        return 0;
    }
    constexpr int THREADS = fg_threads<1>::value;
    /* static shared memory (the warp gather buffer) comes off the opt-in limit */
    const size_t avail = job->smem_per_block_optin > THREADS * 4u + 1024u
                             ? job->smem_per_block_optin - THREADS * 4u - 1024u
                             : 0u;
    const uint32_t maxP = (uint32_t)(avail / 4u) & ~3u;
    if (maxP < 1024u)
        return 0;
    static const int sizes[] = {16, 8, 4, 2};
    for (int size : sizes) {
        uint32_t P = (uint32_t)(((uint64_t)ncnt + (uint64_t)size - 1u) / (uint64_t)size);
        P = (P + 3u) & ~3u;
        if (P > maxP)
            P = maxP;
        const size_t smem = (size_t)P * 4u;
        if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem) != cudaSuccess ||
            cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed,
                                 size > 8 ? 1 : 0) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        cudaLaunchConfig_t cfg = {};
        cudaLaunchAttribute attr[1] = {};
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)size;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3((unsigned)size, 1, 1);
        cfg.blockDim = dim3(THREADS, 1, 1);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = job->stream;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess || n < 1) {
            (void)cudaGetLastError();
            continue;
        }
        c->size = size;
        c->clusters = n;
        c->P = P;
        const uint64_t k = (uint64_t)size * P;
        c->kdsm = k < ncnt ? (uint32_t)k : ncnt;
        c->smem = smem;
        return 1;
    }
    return 0;
}

/* ROUTE 0: cuda-fast-global; ROUTE 1: cuda-fast-cluster (falls back to route 0 where clusters
 * cannot run). */
template <int ROUTE>
static gpuhist_status fg_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const char *name = ROUTE ? "cuda-fast-cluster" : "cuda-fast-global";
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    const uint32_t ncnt = gh_counters_ok(plan);
    if (ncnt == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "%s: %u bins x %u channels: too many counters", name, plan->bins,
                            plan->active);
    if (job->elements == 0)
        return GPUHIST_OK;
    unsigned long long *out = (unsigned long long *)outv;
    /* 32-bit partial counters when scratch can be had, else straight 64-bit atomics */
    void *scr = NULL;
    if (gpuhist_cuda_scratch(ctx, (size_t)ncnt * 4u, &scr) != GPUHIST_OK)
        scr = NULL;
    uint32_t *part = (uint32_t *)scr;

    fg_params p;
    p.k = gh_make_params(plan, job);
    gpuhist_fe_cert cert;
    const int mode = fg_mode(plan, &cert);
    p.t_lo = mode == FG_F32_EVEN ? cert.t_lo_f : 0.0f;
    p.t_hi = mode == FG_F32_EVEN ? cert.t_hi_f : 0.0f;
    p.per_block = 1u;
    p.kdsm = 0u;
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        constexpr bool MULTI = decltype(multi)::value;
        constexpr uint64_t VE = 16u / sizeof(T);
        constexpr int U = fg_unroll<T>::value;
        /* one launch over [b, e): kernel(q, vb, nv, counters) through launch() */
        auto segments = [&](auto &&launch) -> gpuhist_status {
            return gh_segments_max(
                job->elements, FG_MAX_PER_LAUNCH, [&](uint64_t b, uint64_t e) -> gpuhist_status {
                    uint64_t nv;
                    const uint64_t vb = gh_vec16_body<T>(job->data, b, e, &nv);
                    fg_params q = p;
                    q.k.begin = b;
                    q.k.end = e;
                    if (!part)
                        return launch(q, vb, nv, (unsigned long long *)nullptr);
                    GPUHIST_CUDA_TRY(ctx,
                                     cudaMemsetAsync(part, 0, (size_t)ncnt * 4u, job->stream),
                                     "cuda-fast-global: clear partial counters");
                    gpuhist_status st = launch(q, vb, nv, part);
                    if (st != GPUHIST_OK)
                        return st;
                    const int ag = gh_fixed_grid(GH_LP_COUNTER_PASS, job->sm_count, ncnt);
                    fg_add<<<ag, GH_BLOCK, 0, job->stream>>>(part, ncnt, out);
                    GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-global add kernel");
                    return GPUHIST_OK;
                });
        };
        auto global_route = [&](auto kernel32, auto kernel64) -> gpuhist_status {
            cudaError_t err;
            constexpr int TH = fg_threads<0>::value;
            /* gh_grid wants one block per TH * 4 work items */
            const uint64_t work = job->elements / VE * 4u / (uint64_t)U + 1u;
            const int grid = part ? gh_grid(job, kernel32, GH_LP_FAST_GLOBAL, 0, work, &err)
                                  : gh_grid(job, kernel64, GH_LP_FAST_GLOBAL, 0, work, &err);
            if (grid == 0)
                return gpuhist_cuda_check(ctx, err, "cuda-fast-global configuration");
            return segments([&](const fg_params &q, uint64_t vb, uint64_t nv,
                                auto *cnt) -> gpuhist_status {
                if (cnt == nullptr)
                    kernel64<<<grid, TH, 0, job->stream>>>(q, vb, nv, out);
                else
                    kernel32<<<grid, TH, 0, job->stream>>>(q, vb, nv, part);
                GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-global kernel");
                return GPUHIST_OK;
            });
        };
        /* *ran = 0: the device cannot run clusters of this kernel (nothing was launched) */
        auto cluster_route = [&](auto kernel32, auto kernel64, int *ran) -> gpuhist_status {
            fg_cluster c;
            *ran = part ? fg_cluster_config(job, kernel32, ncnt, &c)
                        : fg_cluster_config(job, kernel64, ncnt, &c);
            if (!*ran)
                return GPUHIST_OK;
            p.per_block = c.P;
            p.kdsm = c.kdsm;
            constexpr int TH = fg_threads<1>::value;
            /* no more clusters than the work needs: TH * U vectors per block and pass */
            const uint64_t nvec_all = job->elements / VE + 1u;
            uint64_t need = (nvec_all + (uint64_t)c.size * TH * U - 1u) /
                            ((uint64_t)c.size * TH * U);
            int clusters = c.clusters;
            if (need < (uint64_t)clusters)
                clusters = need > 0 ? (int)need : 1;
            return segments([&](const fg_params &q, uint64_t vb, uint64_t nv,
                                auto *cnt) -> gpuhist_status {
                cudaLaunchConfig_t cfg = {};
                cudaLaunchAttribute attr[1] = {};
                attr[0].id = cudaLaunchAttributeClusterDimension;
                attr[0].val.clusterDim.x = (unsigned)c.size;
                attr[0].val.clusterDim.y = 1;
                attr[0].val.clusterDim.z = 1;
                cfg.gridDim = dim3((unsigned)(clusters * c.size), 1, 1);
                cfg.blockDim = dim3(TH, 1, 1);
                cfg.dynamicSmemBytes = c.smem;
                cfg.stream = job->stream;
                cfg.attrs = attr;
                cfg.numAttrs = 1;
                cudaError_t e;
                if (cnt == nullptr)
                    e = cudaLaunchKernelEx(&cfg, kernel64, q, vb, nv, out);
                else
                    e = cudaLaunchKernelEx(&cfg, kernel32, q, vb, nv, part);
                GPUHIST_CUDA_TRY(ctx, e, "cuda-fast-cluster launch");
                GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-cluster kernel");
                return GPUHIST_OK;
            });
        };
        auto both = [&](auto k32g, auto k64g, auto k32c, auto k64c) -> gpuhist_status {
            if constexpr (ROUTE != 0) {
                int ran = 0;
                const gpuhist_status st = cluster_route(k32c, k64c, &ran);
                if (ran || st != GPUHIST_OK)
                    return st;
            }
            return global_route(k32g, k64g);
        };
        if constexpr (std::is_same<T, float>::value) {
            if (mode == FG_F32_EVEN)
                return both(fg_kernel<T, MULTI, FG_F32_EVEN, unsigned int, 0>,
                            fg_kernel<T, MULTI, FG_F32_EVEN, unsigned long long, 0>,
                            fg_kernel<T, MULTI, FG_F32_EVEN, unsigned int, 1>,
                            fg_kernel<T, MULTI, FG_F32_EVEN, unsigned long long, 1>);
        }
        return both(fg_kernel<T, MULTI, FG_GENERIC, unsigned int, 0>,
                    fg_kernel<T, MULTI, FG_GENERIC, unsigned long long, 0>,
                    fg_kernel<T, MULTI, FG_GENERIC, unsigned int, 1>,
                    fg_kernel<T, MULTI, FG_GENERIC, unsigned long long, 1>);
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_global = {
    "cuda-fast-global",
    GPUHIST_BACKEND_CUDA,
    "001 section V.A, 002 (warp-aggregated atomics); new: two-entry register run cache, hinted "
    "match_any aggregation, certified f32 estimate",
    "every dtype but f16/bf16, "
    "every bin kind, any bins (fewer than 2^32 - 1 counters), 1-4 channels",
    "global 32-bit partial counters (scratch) fed by 16-byte loads through a per-thread "
    "two-entry run cache and warp-aggregated flushes; f32 even bins: float estimate certified "
    "against every edge on the host, one true edge near edges",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_counters_fit,
    fg_run<0>,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_cluster = {
    "cuda-fast-cluster",
    GPUHIST_BACKEND_CUDA,
    "new: thread-block cluster (sm_90) holding the counters in distributed shared memory",
    "every dtype but f16/bf16, "
    "every bin kind, any bins (fewer than 2^32 - 1 counters), 1-4 channels; "
    "counters beyond the cluster's shared memory go to global memory; without cluster support "
    "it runs as cuda-fast-global",
    "cuda-fast-global's run cache and warp aggregation, but counters live in the 32-bit shared "
    "memory of a cluster of up to 16 blocks (DSMEM atomics), added to global once per block",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_counters_fit,
    fg_run<1>,
};
