/*
 * fast_smem.cu - cuda-fast-smem: per-block 32-bit slot counters in shared memory, fed by 16-byte
 * loads, with bin mapping that needs almost no shared-memory traffic besides the one atomic.
 * Aimed at issue 5's f32 256 / 4096 even bins (>= 0.95 of the read ceiling) and f32 256 uneven
 * explicit edges (>= 0.90); correct for every dtype, bin kind and 1-4 channels that fit.
 *
 * Budget. At the read ceiling an SM takes ~18.8 bytes per clock: 4.7 f32 samples/clk/SM, i.e.
 * ~27 issue slots per sample (4 schedulers) and ~6.8 shared-memory wavefronts per 32 samples.
 * DESIGN.md section 5: one shared atomic per sample on 4096 32-bit counters ran at 0.97 on every
 * distribution, so the atomic fits; what does not fit is the exact edge fix-up done with shared
 * loads (two random LDS per sample cost ~3.5 wavefronts each from bank conflicts) or with double
 * edge arithmetic (I2F/F2F conversions run at 16/clk/SM).
 *
 * f32 EVEN ("certified estimate"). f = (x - lower_f) * scale_f, rounded exactly like binmap.h.
 * Error analysis (u = 2^-24; g(y) = (y - lower) * bins / (upper - lower) the exact map, E(i) the
 * float edges of binmap.h): |g(E(i)) - i| <= 1.01 M u and |f - g(x)| <= (3.01 bins + 1.01 M) u,
 * M = max(|lower|, |upper|) * bins / (upper - lower); plus 2^-149 * bins/(upper-lower) per float
 * subnormal rounding. With eps = 4 (M + bins + 1) u + 2^-147 bins/(upper - lower) (about twice
 * the sum), if 0 <= f < bins - 1 and frac(f) lies in (eps, 1 - eps), then E(i0) < x < E(i0 + 1)
 * for i0 = trunc(f), so i0 is the bin binmap.h's walk returns (edges are non-decreasing; the
 * walk ends at max{i < bins : E(i) <= x} from any start). Otherwise (probability ~2 eps per
 * sample: 0.4% for [0,1) with 4096 bins, 0.03% for 256 bins; always when eps >= 1/4, e.g. huge
 * offsets or denormal ranges) the sample takes binmap.h's exact algorithm with its edges
 * looked up in a shared float table E[0..bins-1] built with gpuhist_even_edge_f32 - the same
 * function - so the result is bit-identical. Fast path: 3 FSETP (NaN/range), FADD, FMUL, FRND,
 * F2I, FADD, 2 FSETP, the counter index and ATOMS: ~15 issue slots, one shared wavefront-ish.
 *
 * f32 EDGES. For float x and a double edge e, x < e <=> x < e_up where e_up is e rounded up to
 * float (__double2float_ru): so binmap.h's binary search runs on a float copy of the edges with
 * the same results (the rare x >= last edge case compares in double for last_edge_inclusive).
 * The float edges are replicated once per lane and interleaved (edge i of lane l at
 * [i * 32 + l]) when bins + 1 <= 320 (40 KiB): every probe of the search then hits the
 * lane's own bank - one wavefront per probe, no conflicts, whatever the data. 256 bins: 8
 * probes + 1 atomic: ~9-10 wavefronts per 32 samples -> predicted ~3.3-3.6 samples/clk/SM, about
 * 0.70-0.75 of the ceiling (short of 0.90: the probes, not the atomics, bind; next step would be
 * resolving the first levels from registers or a certified index table).
 *
 * Other dtypes / kinds: binmap.h's gh_slot (common.cuh) per sample, EDGES from a shared double
 * copy of the edge array. Correct for everything; speed as cuda-block-shared plus vector loads.
 *
 * Counters. R replicas of active * (bins + 3) 32-bit counters (warp w uses copy w % R), R = 4 for
 * <= 1024 counters (spreads hot-bin same-address traffic and bank pressure), else 1. Each block
 * counts at most 2^31 samples per launch (common.cuh: gh_segments), so no counter wraps. Merge:
 * sum of the R copies, one 64-bit global atomic per non-zero counter per block.
 * Loads: 16-byte vectors (LDG.E.128, 4 per thread in flight per iteration) over the aligned
 * body of each launch's element range; the unaligned head/tail (< 16 bytes each) are counted
 * element by element by block 0. Element and vector indices are 64-bit.
 * Limits: R * 4 * active * (bins + 3) + tables must fit the opt-in shared memory (227 KiB on
 * H100/H200: ~28k bins with the f32 EVEN table, ~56k otherwise).
 * Data dependence: atomics merge same-address lanes in hardware (hot data fine per DESIGN.md
 * section 5); the EVEN slow path is taken for samples within eps of an edge.
 * Seed: 001 section V.B, 002 (privatised shared histograms); certified estimate and
 * float-rounded-up edges are new.
 */
#include "common.cuh"

#include <math.h>

namespace {

#define FS_THREADS 256
#define FS_U 4 /* 16-byte vectors per thread per iteration */
#define FS_REP_MAX_COUNTERS 1024u
#define FS_REP 4u
#define FS_LANE_REP_MAX_EDGES 320u /* 32 copies: 40 KiB at most */

enum { FS_GENERIC = 0, FS_F32_EVEN = 1, FS_F32_EDGES = 2 };

struct fs_params {
    gh_kparams k;
    uint32_t reps;      /* counter replicas */
    uint32_t edge_rep;  /* FS_F32_EDGES: 32 (lane-interleaved) or 1 */
    uint32_t fast_ok;   /* FS_F32_EVEN: the certified estimate may be used */
    float eps_lo;       /* frac(f) > eps_lo ... */
    float eps_hi;       /* ... and < eps_hi */
    float fmax;         /* f < fmax (= bins - 1) */
};

/* Exact f32 EVEN slot (see banner); tab = E(0..bins-1) as floats. */
__device__ __forceinline__ uint32_t fs_slot_even_f32(const fs_params &p, const gpuhist_binmap &m,
                                                     const float *tab, float x)
{
    const uint32_t bins = m.bins;
    if (x != x)
        return GPUHIST_SLOT_NAN(bins);
    if (x < m.lower_f)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    if (x >= m.upper_f)
        return (m.last_inclusive && x == m.upper_f) ? bins - 1u : GPUHIST_SLOT_OVERFLOW(bins);
    const float f = __fmul_rn(__fsub_rn(x, m.lower_f), m.scale_f);
    if (p.fast_ok && f >= 0.0f && f < p.fmax) {
        const float t = truncf(f);
        const float fr = __fsub_rn(f, t); /* exact: f < 2^24 */
        if (fr > p.eps_lo && fr < p.eps_hi)
            return (uint32_t)t;
    }
    /* binmap.h's gpuhist_slot_even_f32, edges from the table */
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
        for (uint32_t i = tid; i < m.bins; i += FS_THREADS)
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

    constexpr uint32_t VE = 16u / sizeof(T);
    const T *data = (const T *)kp.data;
    /* Head [begin, vbegin) and tail [vbegin + nvec * VE, end): fewer than VE each. */
    if (blockIdx.x == 0) {
        const uint64_t vend = vbegin + nvec * VE;
        const uint64_t nh = vbegin - kp.begin, nt = kp.end - vend;
        if (tid < nh + nt) {
            const uint64_t k = tid < nh ? kp.begin + tid : vend + (tid - nh);
            count(data[k], MULTI ? (uint32_t)(k % kp.channels) : 0u);
        }
    }
    const uint4 *vec = (const uint4 *)(data + vbegin);
    const uint64_t step = (uint64_t)gridDim.x * (FS_THREADS * FS_U);
    const uint32_t C = kp.channels;
    const uint32_t ph0 = MULTI ? (uint32_t)(vbegin % C) : 0u;
    for (uint64_t base = (uint64_t)blockIdx.x * (FS_THREADS * FS_U); base < nvec; base += step) {
        uint4 v[FS_U];
#pragma unroll
        for (int u = 0; u < FS_U; ++u) {
            const uint64_t i = base + (uint64_t)u * FS_THREADS + tid;
            v[u] = i < nvec ? __ldcs(vec + i) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int u = 0; u < FS_U; ++u) {
            const uint64_t i = base + (uint64_t)u * FS_THREADS + tid;
            if (i >= nvec)
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
                count(w.e[e], ch);
                if (MULTI) {
                    ch += 1u;
                    if (ch == C)
                        ch = 0u;
                }
            }
        }
    }
    __syncthreads();

    for (uint32_t j = tid; j < ncnt; j += FS_THREADS) {
        uint32_t s = 0; /* all replicas together count at most 2^31 samples */
        for (uint32_t r = 0; r < p.reps; ++r)
            s += cnt[r * ncnt + j];
        if (s)
            atomicAdd(out + j, (unsigned long long)s);
    }
}

/* eps of the certified estimate (banner); 0 = not usable. */
static int fs_even_eps(const gpuhist_binmap *m, float *lo, float *hi, float *fmax_out)
{
    const double u = 1.0 / 16777216.0; /* 2^-24 */
    const double B = (double)m->bins;
    const double D = m->upper - m->lower;
    if (m->step_is_zero || !(D > 0.0) || !isfinite(D) || !(m->scale > 0.0) ||
        !isfinite(m->scale) || m->bins < 2u)
        return 0;
    const double bd = B / D;
    const double M = fmax(fabs(m->lower), fabs(m->upper)) * bd;
    const double eps = 4.0 * (M + B + 1.0) * u + ldexp(bd, -147);
    if (!(eps < 0.25))
        return 0;
    float e = (float)eps;
    if ((double)e < eps)
        e = nextafterf(e, 1.0f);
    float h = (float)(1.0 - eps);
    if ((double)h > 1.0 - eps)
        h = nextafterf(h, 0.0f);
    *lo = e;
    *hi = h;
    *fmax_out = (float)(B - 1.0); /* exact: bins < 2^24 when eps < 1/4 */
    return 1;
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
        s += (size_t)plan->bins * 4u;
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

static gpuhist_status fs_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    fs_params p;
    const size_t smem = fs_smem_bytes(plan, &p.reps, &p.edge_rep);
    if (smem == 0 || smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-smem: %u bins x %u channels do not fit shared memory",
                            plan->bins, plan->active);
    p.k = gh_make_params(plan, job);
    p.fast_ok = 0;
    p.eps_lo = 1.0f;
    p.eps_hi = 0.0f;
    p.fmax = 0.0f;
    if (fs_mode(plan) == FS_F32_EVEN)
        p.fast_ok = (uint32_t)fs_even_eps(&plan->map, &p.eps_lo, &p.eps_hi, &p.fmax);
    const int mode = fs_mode(plan);
    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        constexpr bool MULTI = decltype(multi)::value;
        auto launch_with = [&](auto kernel) -> gpuhist_status {
            cudaError_t err;
            const int grid = gh_grid(job, kernel, FS_THREADS, smem, job->elements / FS_U, &err);
            if (grid == 0)
                return gpuhist_cuda_check(ctx, err, "cuda-fast-smem configuration");
            return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
                constexpr uint64_t VE = 16u / sizeof(T);
                /* first 16-byte-aligned element at or after b (data is sizeof(T)-aligned) */
                const uintptr_t a = (uintptr_t)(job->data + b * sizeof(T));
                uint64_t vb = b + ((16u - (a & 15u)) & 15u) / sizeof(T);
                if (vb > e)
                    vb = e;
                const uint64_t nv = (e - vb) / VE;
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
    "rounded-up float edges",
    "all dtypes, every bin kind, 1-4 channels, while the 32-bit counters (x4 replicas up to 1024) "
    "and edge tables fit shared memory",
    "per-block 32-bit shared counters, 16-byte loads; f32 even bins: error-bounded estimate with "
    "exact table fallback near edges; f32 edges: binary search on lane-replicated float edges",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    fs_supports,
    fs_run,
};
