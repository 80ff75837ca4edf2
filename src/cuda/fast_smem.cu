/*
 * fast_smem.cu - cuda-fast-smem: per-block 32-bit slot counters in shared memory, fed by 16-byte
 * loads, with bin mapping that needs almost no shared-memory traffic besides the one atomic.
 * Built for f32 with 256 / 4096 even bins (target: 0.95 of the read ceiling) and 256 uneven
 * explicit edges (target: 0.90); correct for every dtype, bin kind and 1-4 channels that fit.
 *
 * Budget. At the read ceiling an SM takes ~17-19 bytes per clock: ~4.5 f32 samples/clk/SM. Four
 * schedulers issue 128 thread-instructions/clk, so at a realistic ~70% issue rate the mapping
 * may cost ~20 instructions per sample at most. Shared atomics cap near 8.4 lane-updates/clk/SM
 * (docs/PERFORMANCE.md, "Hardware facts the CUDA strategies rely on"): one per sample fits.
 *
 * Single-channel kernels (fe_kernel, fx_kernel) do the f32 cases above and f64 even bins;
 * everything else (other dtypes, channels > 1, specs outside their proven range) runs the
 * general fs_kernel. Both: 1024 threads, one block per SM, two stages of 4 x 16-byte loads in
 * flight per thread (the next stage is issued before the current one is counted), counters
 * replicated per warp group (warp w uses copy w % R), red.shared at a 32-bit shared address.
 *
 * fe_kernel (f32 or f64 EVEN, fast_even.h's certified estimate in the samples' domain; f64
 * whenever its certificate holds): smem_certified_even.cu. fx_kernel
 * (f32 EDGES, bins <= 1024, the one-load cell table; entries of one threshold, or of two where
 * the edges crowd one-threshold cells, as at 1024 quadratic edges): smem_cell_table.cu. What the
 * two share (parameters, the two-stage load loop, the launch): smem_stream.cuh.
 *
 * fs_kernel (general). f32 EVEN outside fe_kernel's range: fast_even.h's test (two-sided, before
 * any range check), then NaN / outside by compares and the one-edge rule on a shared float edge
 * table E[0..bins]; specs the certificate refuses take binmap.h's walk on the table. f32 EDGES
 * past 1024 bins or without a finite cell map: binmap.h's binary search on float edges rounded up
 * (the rule above), lane-replicated when bins + 1 <= 320. Other dtypes / kinds: binmap.h's gh_slot
 * (common.cuh) per sample, EDGES from a shared double copy of the edge array. fs_kernel keeps
 * R = 4 counter copies for <= 1024 counters, else 1.
 *
 * Counters: each block counts at most 2^31 samples per launch (common.cuh: gh_segments), so no
 * 32-bit counter wraps. Merge: sum of the copies, one 64-bit global atomic per non-zero counter
 * per block. Loads cover the 16-byte-aligned body of each launch's element range; the unaligned
 * head/tail (< 16 bytes each) are counted element by element by block 0 (fs_kernel's walk is
 * common.cuh's gh_vec16_walk, shared with cuda-fast-global). Element and vector indices are
 * 64-bit.
 * Limits: fs_kernel: R * 4 * active * (bins + 3) + tables must fit the opt-in shared memory (227
 * KiB on H100/H200). fe_kernel: (bins + 3) * 4 * R (R <= 16, chosen to stay <= 160 KiB) must fit.
 * Data dependence: atomics merge same-address lanes in hardware (hot data runs as fast as
 * spread data: docs/PERFORMANCE.md, "CUDA (NVIDIA H200)"); fe_kernel's slow path is taken for
 * samples that fail fast_even.h's test (near an edge), fx_kernel's for samples in crowded cells
 * (many narrow bins) and below the first edge.
 * Exactness: the kernels are checked against cpu-reference on the GPU (tests/gpu edge_cells,
 * whose edge sets pick k = 0, 1 and 4, and the property suite). The f32 EVEN forms are
 * fast_even.h's, checked against binmap.h by a CPU emulation of the device arithmetic (its
 * banner); the float-threshold rule of fx_kernel by a CPU emulation of the slot logic (float ops
 * without contraction, fmaf): ~9e7 EDGES evaluations over ~3000 edge sets
 * (quadratic, random, sub-ulp clusters, clumps, edges past FLT_MAX, both last-edge rules, 257 to
 * 1025 cells): no mismatch; its two-threshold entries by a port of their build and lookup
 * (the host fx_q): ~3e8 evaluations over 9 edge sets of 1-1024 bins (quadratic, random gaps,
 * 900 crowded, clusters, log-spaced, past FLT_MAX), every map k = 0-6, b = 7-9, 0 / 4 / 64
 * sub-tables of 8 or 16 sub-cells, both last-edge rules, samples on and +-6 ulps around every
 * edge, uniform, random bit patterns: no mismatch (tests/gpu edges1024 checks the kernel itself).
 * Seed: 001 section V.B, 002 (privatised shared histograms); certified estimate, float-rounded
 * edge thresholds and the monotone cell table are new.
 */
#include "common.cuh"
#include "fast_even.h"
#include "smem_stream.cuh"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* FS_THREADS, FS_U: launch_policy.h */
#define FS_REP_MAX_COUNTERS 1024u
#define FS_REP 4u
#define FS_LANE_REP_MAX_EDGES 320u /* 32 copies: 40 KiB at most */

enum { FS_GENERIC = 0, FS_F32_EVEN = 1, FS_F32_EDGES = 2 };

struct fs_params {
    gh_kparams k;
    uint32_t reps;      /* counter replicas */
    uint32_t edge_rep;  /* FS_F32_EDGES: 32 (lane-interleaved) or 1 */
    uint32_t cert_ok;   /* FS_F32_EVEN: fast_even.h's certificate holds */
    float t_lo, t_hi;   /* FS_F32_EVEN: its thresholds (t_lo_f, t_hi_f) */
};

/* Exact f32 EVEN slot (see banner); tab = E(0..bins) as floats. */
__device__ __forceinline__ uint32_t fs_slot_even_f32(const fs_params &p, const gpuhist_binmap &m,
                                                     const float *tab, float x)
{
    const uint32_t bins = m.bins;
    if (p.cert_ok) { /* THE TEST first: it also rejects NaN and out-of-range samples */
        int ok;
        const uint32_t key =
            gpuhist_fe_key_f32(x, m.lower_f, m.scale_f, bins, p.t_lo, p.t_hi, 1, &ok);
        if (ok)
            return key;
    }
    uint32_t outside;
    if (gpuhist_even_f32_outside(&m, x, &outside))
        return outside;
    const float f = gpuhist_fe_estimate_f32(x, m.lower_f, m.scale_f);
    if (p.cert_ok) { /* the one-edge rule */
        const uint32_t j = gpuhist_fe_pivot_f32(f, bins, p.t_lo);
        return j - 1u + (x >= tab[j] ? 1u : 0u);
    }
    /* refused: binmap.h's gpuhist_slot_even_f32, edges from the table */
    uint32_t i;
    if (f < (float)bins)
        i = gpuhist_clamp_estimate((double)f, bins);
    else
        i = gpuhist_clamp_estimate(((double)x - m.lower) * m.scale, bins);
    while (i > 0u && x < tab[i])
        --i;
    while (i + 1u < bins && x >= tab[i + 1u])
        ++i;
    return i;
}

/* Exact f32 EDGES slot: binmap.h's gpuhist_slot_edges_f64 on float edges rounded up. */
__device__ __forceinline__ uint32_t fs_slot_edges_f32(const gpuhist_binmap &m, const float *tab,
                                                      uint32_t rep, uint32_t lane, float x)
{
    const uint32_t bins = m.bins;
    if (x != x)
        return GPUHIST_SLOT_NAN(bins);
    if (x < tab[lane])
        return GPUHIST_SLOT_UNDERFLOW(bins);
    if (!(x < tab[bins * rep + lane])) /* (double)x >= e[bins] */
        return (m.last_inclusive && (double)x == m.upper) ? bins - 1u
                                                          : GPUHIST_SLOT_OVERFLOW(bins);
    uint32_t lo = 0, hi = bins;
    while (hi - lo > 1u) {
        const uint32_t mid = lo + (hi - lo) / 2u;
        if (x < tab[mid * rep + lane])
            hi = mid;
        else
            lo = mid;
    }
    return lo;
}

template <typename T, bool MULTI, int MODE>
__global__ void __launch_bounds__(FS_THREADS)
    fs_kernel(const fs_params p, const uint64_t vbegin, const uint64_t nvec,
              unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char fs_smem[];
    const gh_kparams &kp = p.k;
    const gpuhist_binmap m = kp.map;
    const uint32_t ncnt = kp.counters;
    uint32_t *cnt = (uint32_t *)fs_smem;
    unsigned char *tables = fs_smem + (((size_t)p.reps * ncnt * 4u + 15u) & ~(size_t)15u);
    const uint32_t tid = threadIdx.x, lane = tid & 31u;

    for (uint32_t i = tid; i < p.reps * ncnt; i += FS_THREADS)
        cnt[i] = 0u;
    const float *ftab = (const float *)tables;
    const double *dedges = kp.edges;
    if (MODE == FS_F32_EVEN) {
        float *t = (float *)tables;
        for (uint32_t i = tid; i <= m.bins; i += FS_THREADS) /* E(bins) = upper_f */
            t[i] = gpuhist_even_edge_f32(&m, i);
    } else if (MODE == FS_F32_EDGES) {
        float *t = (float *)tables;
        const uint32_t n = (m.bins + 1u) * p.edge_rep;
        for (uint32_t i = tid; i < n; i += FS_THREADS)
            t[i] = __double2float_ru(kp.edges[i / p.edge_rep]);
    } else if (m.kind == GH_KIND_EDGES) {
        double *t = (double *)tables;
        for (uint32_t i = tid; i <= m.bins; i += FS_THREADS)
            t[i] = kp.edges[i];
        dedges = t;
    }
    __syncthreads();

    uint32_t *mycnt = cnt + ((tid >> 5) % p.reps) * ncnt;
    const uint32_t elane = MODE == FS_F32_EDGES && p.edge_rep > 1u ? lane : 0u;
    auto count = [&](T x, uint32_t ch) {
        uint32_t s;
        if (MODE == FS_F32_EVEN)
            s = fs_slot_even_f32(p, m, ftab, (float)x);
        else if (MODE == FS_F32_EDGES)
            s = fs_slot_edges_f32(m, ftab, p.edge_rep, elane, (float)x);
        else
            s = gh_slot(&m, dedges, x);
        if (MULTI) {
            const int32_t b = gh_base(kp, ch);
            if (b < 0)
                return;
            s += (uint32_t)b;
        }
        atomicAdd(mycnt + s, 1u);
    };

    gh_vec16_walk<T, MULTI, FS_THREADS, FS_U, false>(kp, vbegin, nvec,
                                                     [&](T x, uint32_t ch, bool) { count(x, ch); });
    __syncthreads();

    for (uint32_t j = tid; j < ncnt; j += FS_THREADS) {
        uint32_t s = 0; /* all replicas together count at most 2^31 samples */
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

static int fs_mode(const gpuhist_plan *plan)
{
    if (plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EVEN)
        return FS_F32_EVEN;
    if (plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EDGES)
        return FS_F32_EDGES;
    return FS_GENERIC;
}

/* Shared memory of a plan; 0 if its counters overflow 32-bit indices. */
static size_t fs_smem_bytes(const gpuhist_plan *plan, uint32_t *reps, uint32_t *edge_rep)
{
    const uint32_t n = gh_counters_ok(plan);
    if (n == 0)
        return 0;
    *reps = n <= FS_REP_MAX_COUNTERS ? FS_REP : 1u;
    *edge_rep = 1;
    size_t s = (((size_t)*reps * n * 4u) + 15u) & ~(size_t)15u;
    switch (fs_mode(plan)) {
    case FS_F32_EVEN:
        s += ((size_t)plan->bins + 1u) * 4u;
        break;
    case FS_F32_EDGES:
        *edge_rep = plan->bins + 1u <= FS_LANE_REP_MAX_EDGES ? 32u : 1u;
        s += ((size_t)plan->bins + 1u) * 4u * *edge_rep;
        break;
    default:
        if (plan->map.kind == GH_KIND_EDGES)
            s += ((size_t)plan->bins + 1u) * 8u;
        break;
    }
    return s;
}

static int fs_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    uint32_t r, e;
    const size_t s = fs_smem_bytes(plan, &r, &e);
    return s != 0 && s <= gpuhist_cuda_smem_optin(ctx);
}

/* Run the single-channel kernels when they apply (f32 even bins and edges, f64 even bins):
 * @return 1 and the status in *st, or 0 (nothing run) when they do not. */
static int fx_try(gpuhist_ctx *ctx, const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                  void *out, gpuhist_status *st)
{
    const int f64_even = plan->dtype == GPUHIST_F64 && plan->map.kind == GH_KIND_EVEN;
    if ((plan->dtype != GPUHIST_F32 && !f64_even) || plan->channels != 1u ||
        plan->active != 1u || gh_counters_ok(plan) == 0)
        return 0;
    gh_fast_smem::fx_params p;
    memset(&p, 0, sizeof p);
    p.bins = plan->bins;
    p.ncnt = plan->bins + 3u;
    p.last_inclusive = plan->map.last_inclusive;
    p.edges = job->edges;
    if (plan->map.kind == GH_KIND_EVEN)
        return gh_fast_smem::fe_try(ctx, plan, job, p, out, st);
    if (plan->map.kind == GH_KIND_EDGES && job->edges)
        return gh_fast_smem::fx_try_edges(ctx, plan, job, p, out, st);
    return 0;
}

static gpuhist_status fs_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    gpuhist_status fx_st;
    if (fx_try(ctx, plan, job, out, &fx_st))
        return fx_st;
    fs_params p;
    const size_t smem = fs_smem_bytes(plan, &p.reps, &p.edge_rep);
    if (smem == 0 || smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-smem: %u bins x %u channels do not fit shared memory",
                            plan->bins, plan->active);
    p.k = gh_make_params(plan, job);
    const int mode = fs_mode(plan);
    gpuhist_fe_cert c; /* fast_even.h, cached per spec */
    gpuhist_fe_cert_of(&plan->map, &c);
    p.cert_ok = mode == FS_F32_EVEN && c.ok ? 1u : 0u;
    p.t_lo = c.t_lo_f;
    p.t_hi = c.t_hi_f;
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        constexpr bool MULTI = decltype(multi)::value;
        auto launch_with = [&](auto kernel) -> gpuhist_status {
            cudaError_t err;
            const int grid = gh_grid(job, kernel, GH_LP_FAST_SMEM, smem, job->elements / FS_U, &err);
            if (grid == 0)
                return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
            return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
                uint64_t nv;
                const uint64_t vb = gh_vec16_body<T>(job->data, b, e, &nv);
                fs_params q = p;
                q.k.begin = b;
                q.k.end = e;
                kernel<<<grid, FS_THREADS, smem, job->stream>>>(q, vb, nv,
                                                                (unsigned long long *)out);
                GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-smem kernel");
                return GPUHIST_OK;
            });
        };
        if constexpr (std::is_same<T, float>::value) {
            if (mode == FS_F32_EVEN)
                return launch_with(fs_kernel<T, MULTI, FS_F32_EVEN>);
            if (mode == FS_F32_EDGES)
                return launch_with(fs_kernel<T, MULTI, FS_F32_EDGES>);
        }
        return launch_with(fs_kernel<T, MULTI, FS_GENERIC>);
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_smem = {
    "cuda-fast-smem",
    GPUHIST_BACKEND_CUDA,
    "001 section V.B, 002 (privatised shared histograms); new: certified f32 estimate, "
    "rounded-up float edges, monotone cell table",
    "every dtype but f16/bf16, "
    "every bin kind, 1-4 channels, while the 32-bit counters (x4 replicas up to 1024) "
    "and edge tables fit shared memory",
    "per-block 32-bit shared counters, 16-byte loads; f32 even bins: estimate certified against "
    "every edge on the host, an exact one-edge fix-up near edges; f32 edges: one-load monotone "
    "cell table whose entries decide one or two edges by a carry (sub-tables, then a search, "
    "in crowded cells)",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    fs_supports,
    fs_run,
};
