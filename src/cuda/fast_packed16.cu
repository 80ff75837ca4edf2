/*
 * fast_packed16.cu - cuda-fast-packed16 (u16/i16/f16/bf16, the 65536 raw values: a half sample's
 * key is its bit pattern, decoded by the backend's fold) and
 * cuda-fast-packed16-f32 (f32, EVEN bins up to ~115k slots) and cuda-fast-packed16-ids (i32/u32/
 * i64/u64 on INTEGER bins up to ~115k slots: bincount of ids; each id's slot is binmap.h's one
 * subtraction and compare): 16-bit counters packed two per 32-bit word so a 65536-counter
 * histogram fits one block's shared memory (128 KiB of the 227 KiB opt-in on H100/H200). Built
 * for u16/65536 and f32 with 65536 even bins (target: 0.75 of the read ceiling), then i32 ids
 * over 65536 values (the matrix cell i32_65536: target 0.90; H100: 0.89 uniform and bell, 0.80
 * hot90, 0.90 constant, where cuda-fast-global's L2 atomics gave 0.09-0.55).
 *
 * Counting (exact, no scheduling assumption). Key k (raw value, or slot) lives in half k & 1 of
 * word k >> 1. Every thread adds inc = r << 16*(k&1) (1 <= r <= 32768) with a shared atomicAdd
 * and NEVER subtracts. Shared atomics on one word are linearisable, so with L and H the true
 * totals added to the low / high key of a word, the word always holds T = L' + 65536 H' mod 2^32
 * (L', H' the totals so far). Each add moves T by less than 2^32 and the low sum by less than
 * 2^16, so it crosses at most one multiple of 2^16 (low adds) and of 2^32. The thread that does
 * an add sees old and old + inc and knows exactly whether its add carried out of the low half
 * (low add and (old & 0xffff) + r > 0xffff) or out of the word (old + inc < old, 32 bits):
 *   low carry:   out[k] += 0x10000 and out[k + 1] -= 1 (the carry landed in the high half);
 *   word carry:  out[high key] += 0x10000 (the high half wrapped; its carry is lost);
 * and at the end (W & 0xffff) goes to out[low key] and (W >> 16) to out[high key] (through the
 * partial rows of the epilogue, below).
 * Proof: the low half always equals L' mod 2^16, so the block sees floor(L / 2^16) = C low
 * carries and the low total is (W & 0xffff) + 65536 C = L. The word is L mod 2^16 + 65536 (C + H)
 * mod 2^32, so W >> 16 = (C + H) mod 2^16 and there were floor((C + H) / 2^16) word carries:
 * the high total is (C + H) mod 2^16 + 65536 floor((C + H) / 2^16) - C = H. The 64-bit global
 * counters are summed mod 2^64 and the true counts are below 2^64, so a transient "-1" is
 * harmless. Cost: a carry flips bit 15 or bit 31 of the word (old half >= 2^16 - r >= 2^15,
 * new half < r <= 2^15), so each sample costs IADD + LOP3 (acc |= old ^ (old + inc)) and one
 * test per 16-byte vector; only a vector whose acc has bit 15/31 set (about 2 per 65536 counts of
 * a key) re-examines its samples exactly (p16_wrap). The phantom high half of an odd key count
 * only ever receives low carries and is never reported. Unlike a hand-off that subtracts from
 * the word once a half passes a threshold, this needs no bound on what other threads add
 * between an atomic and a subtract.
 * Atomics of one vector are issued back to back (no branch on an old value in between), so
 * each thread keeps 8 (u16) / 4 (f32) shared atomics in flight.
 *
 * Hot values (one atomic per sample on these counters runs hot or constant data at ~510-560
 * GB/s: an atomic whose old value is used serialises same-address lanes; docs/PERFORMANCE.md,
 * "Hardware facts the CUDA strategies rely on"). Each warp runs an iteration (24 u16 / 12 f32
 * samples per thread) in one of two modes, chosen warp-uniformly:
 *   plain: one atomic per sample, nothing else; after the iteration probe() counts the lanes
 *     whose last key equals their previous iteration's last key and turns the warp hot at >= 4
 *     (uniform u16: ~32/65536 of lanes per iteration, hot90: ~26 lanes);
 *   hot (f32 slots): each thread keeps one hot key hk; the atomic stays unconditional (ptxas
 *     wraps a predicated atomic in a branch) but a sample equal to hk goes, with the same inc, to
 *     the thread's own dummy word after the counters (thread t's is in bank t % 32, so hot lanes
 *     never meet on one
 *     address; the dummy counts the hits, at most 32 per half: no carry, no false carry flag).
 *     After the iteration the dummy is read and cleared and the hits flushed: one REDUX and one
 *     atomic per warp when all 32 lanes hold the same hk (r <= 1024), else one atomic per lane
 *     (r <= 32); hk becomes the lane's last key when it had fewer than 8 hits; the warp returns
 *     to plain after an iteration with fewer than 64 hits. When the whole warp's vectors of a
 *     step are all hk (constant data), the step issues no atomic: a register counts the hits,
 *     flushed with the dummy (measured: docs/PERFORMANCE.md, "u16, 65536 bins").
 *   hot (u16 values, packed16.cuh's count_hot_halves): one hot key per warp; a word-level test
 *     makes a mask of each lane's misses, the hits only add to a register, and the misses are
 *     counted in rounds, one atomic per lane and round (lanes without a miss add 0 to their
 *     dummy), from the lane's vectors staged in its own shared-memory row: ~6 rounds per 24
 *     samples on 90%-one-value data instead of 24 atomics. Hot warps flush every 8 iterations.
 *     Measured against the per-sample hot mode: docs/PERFORMANCE.md, "u16, 65536 bins".
 * Weak spot: data with a few (2-20) equally frequent values, where the misses of hot mode
 * still meet on a few addresses.
 *
 * Epilogue. Each block copies its counter words (coalesced 16-byte stores) to a row of device
 * scratch. Launched cooperatively where it can be (one block per SM, all resident), the kernel
 * then sums the rows itself after a grid-wide barrier, each block a slice of the keys across
 * every row (p16_reduce_fused): one 64-bit atomic per non-zero key. Otherwise p16_reduce, a
 * kernel of its own, sums 16 rows per thread and does one atomic per non-zero half per 16 blocks
 * (~0.6M global atomics instead of 8.6M, 132 blocks x 65536 halves); on the H100 it took 15.5 us
 * at 22% occupancy after 383 us of counting 1 GiB of u16 (docs/PERFORMANCE.md, "Where the short
 * cells' time goes"). Without scratch the blocks add straight into out.
 *
 * f32 slots: THE estimate and THE TEST of fast_even.h (three float operations and an integer
 * compare per sample on direct specs, two more subtractions and compares otherwise; the
 * certificate is measured on every edge on the host, once per spec); samples failing the test
 * take binmap.h's exact path. A sample that fails is rare: the certificate's thresholds are the
 * estimate's worst error at any edge, not an a-priori bound (which, at 65536 bins, would send a
 * few % of uniform samples - nearly every warp-step - to the double-precision walk, ~116
 * instructions per sample).
 *
 * The counting engine (atomics, carry test, hot-key dummies, warp modes) lives in packed16.cuh,
 * shared with cuda-two-pass.
 *
 * Loads: 16-byte vectors, 3 per thread per iteration, the next iteration's loaded before this
 * one is counted (P16_U: measured against 2 and 4), unaligned head/tail by block 0. Single
 * channel only (the backend deinterleaves). 1024 threads, one block per SM (128 KiB + 4 KiB of
 * dummies, + 48 KiB of staging rows for u16), 64 registers, no spills.
 * Cost (H200, from the SASS; thread-instructions per sample incl. loads, loop and flush): u16
 * plain ~9 (key, address 2, inc 2, ATOMS, carry test 2 + ~1 per vector and iteration), hot ~11
 * (+ compare, select); f32 DIRECT plain ~15 (+ FADD, FMUL, FADD.RM, IADD, ISETP to map; ~2.5 per
 * 4-sample vector), hot ~17. f32 65536 at 0.75 needs 3.2 samples/clk/SM: ~50 thread-instr/clk
 * (~1.6 of 4 warp-IPC) and 3.2 random ATOMS lanes/clk; u16 at 0.75 needs 6.4 samples/clk/SM,
 * i.e. 6.4 random ATOMS lanes/clk, with ~3.5-way bank conflicts on spread data. Measured:
 * docs/PERFORMANCE.md, "CUDA (NVIDIA H200)", cells u16_65536 and f32_65536.
 * Seed: 002 (privatised shared histograms), after the packed 16-bit counter probe in
 * docs/PERFORMANCE.md ("Hardware facts the CUDA strategies rely on"); carry accounting, hot-key
 * dummies with warp modes, partial-row epilogue and the certified grid are new.
 */
#include "fast_even.h"
#include "packed16.cuh"

#include <cooperative_groups.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

namespace {

enum { P16_U16 = 0, P16_F32_DIRECT = 1, P16_F32_CUT = 2, P16_I32 = 3, P16_U32 = 4, P16_I64 = 5,
       P16_U64 = 6 };

/* The sample type of each mode. */
template <int MODE> struct p16_sample {
    typedef float type;
};
template <> struct p16_sample<P16_U16> {
    typedef uint16_t type;
};
template <> struct p16_sample<P16_I32> {
    typedef int32_t type;
};
template <> struct p16_sample<P16_U32> {
    typedef uint32_t type;
};
template <> struct p16_sample<P16_I64> {
    typedef int64_t type;
};
template <> struct p16_sample<P16_U64> {
    typedef uint64_t type;
};
__host__ __device__ constexpr bool p16_is_int(int mode)
{
    return mode >= P16_I32;
}

/* P16_U (launch_policy.h), 16-byte vectors per thread per iteration, prefetched one iteration
 * ahead: 3 prefetched is the best overall on u16/65536 (against 2 prefetched and 4 loaded then
 * counted) and on f32/65536 (against 6 loaded then counted); 4 prefetched spill on f32 (32 bytes
 * of stack at 64 registers). Measured: docs/PERFORMANCE.md, "Measurements behind the CUDA
 * sources". */

struct p16_params {
    gh_kparams k;
    uint32_t nkeys; /* 65536 values, or bins + 3 slots */
    uint32_t bins;  /* f32 */
    float lower_f, scale_f;
    float t_lo, t_hi; /* P16_F32_CUT: THE TEST's thresholds (fast_even.h) */
};

/* The partial rows summed inside the counting kernel, launched cooperatively (one block per SM,
 * all resident): after a grid-wide barrier block b sums uint4s [b n4 / G, (b + 1) n4 / G) of
 * every row (at most P16_FUSED_SPAN of them, so that each has at least 4 threads) in registers,
 * P16_THREADS / span rows apart, the threads of one uint4 meet in shared accumulators (the block's
 * counters are in its row by then), and one 64-bit atomic per non-zero key goes to out: no second
 * launch, and every SM reads a slice of the rows (p16_reduce as a kernel of its own: 15.5 us at
 * 22% occupancy for 132 rows of 65536 keys, H100). The rows are read through L2 (__ldcg): other
 * SMs wrote them. */
#define P16_FUSED_SPAN 256u
__device__ __forceinline__ void p16_reduce_fused(const uint4 *__restrict__ part, uint32_t n4,
                                                 uint32_t nkeys, unsigned long long *out,
                                                 uint32_t *acc)
{
    const uint32_t tid = threadIdx.x, G = gridDim.x;
    const uint32_t j0 = (uint32_t)((uint64_t)n4 * blockIdx.x / G);
    const uint32_t span = (uint32_t)((uint64_t)n4 * (blockIdx.x + 1u) / G) - j0;
    __syncthreads(); /* this block's row is copied out of acc's words */
    for (uint32_t i = tid; i < 8u * span; i += P16_THREADS)
        acc[i] = 0u;
    cooperative_groups::this_grid().sync(); /* every block's row is written */
    if (span != 0u) {
        const uint32_t groups = P16_THREADS / span, j = tid % span, g = tid / span;
        if (g < groups) {
            p16_halves h;
            for (uint32_t r = g; r < G; r += groups)
                h.add(__ldcg(part + (uint64_t)r * n4 + j0 + j));
#pragma unroll
            for (uint32_t i = 0; i < 4u; ++i) {
                if (h.lo[i])
                    atomicAdd(acc + 8u * j + 2u * i, h.lo[i]);
                if (h.hi[i])
                    atomicAdd(acc + 8u * j + 2u * i + 1u, h.hi[i]);
            }
        }
    }
    __syncthreads();
    /* acc[8 j + 2 i + half] holds key 8 (j0 + j) + 2 i + half */
    for (uint32_t i = tid; i < 8u * span; i += P16_THREADS) {
        const uint32_t v = acc[i], k = 8u * j0 + i;
        if (v && k < nkeys)
            atomicAdd(out + k, (unsigned long long)v);
    }
}

template <int MODE>
__global__ void __launch_bounds__(P16_THREADS, 1)
    p16_kernel(const __grid_constant__ p16_params p, const uint64_t vbegin, const uint64_t nvec,
               unsigned long long *__restrict__ out, uint4 *__restrict__ part, const int fused)
{
    extern __shared__ __align__(16) uint32_t p16_w[];
    const uint32_t tid = threadIdx.x;
    p16_engine eng;
    eng.init(p16_w, out, p.nkeys, tid);
    eng.zero(tid);
    __syncthreads();

    typedef typename p16_sample<MODE>::type T;
    constexpr uint32_t VE = 16u / sizeof(T);
    /* 24 / 12 samples per thread per iteration; the next iteration's vectors are loaded before
     * this one is counted (the engine's PF) */
    constexpr uint32_t U = P16_U;
    const T *data = (const T *)p.k.data;

    /* THE TEST of fast_even.h on an f32 sample; ok = its key is binmap.h's slot. */
    auto fast_key = [&](float x, bool &ok) -> uint32_t {
        int good;
        const uint32_t key = gpuhist_fe_key_f32(x, p.lower_f, p.scale_f, p.bins, p.t_lo, p.t_hi,
                                                MODE == P16_F32_CUT, &good);
        ok = good != 0;
        return key;
    };
    auto key_of = [&](T x) -> uint32_t {
        if constexpr (MODE == P16_U16) {
            return (uint32_t)x;
        } else if constexpr (MODE == P16_U64) {
            return gpuhist_slot_u64(&p.k.map, p.k.edges, x);
        } else if constexpr (p16_is_int(MODE)) {
            return gpuhist_slot_integer_i64(p.k.map.int_lower, p.k.map.bins, (long long)x);
        } else {
            bool ok;
            const uint32_t key = fast_key(x, ok);
            return ok ? key : gpuhist_slot_even_f32(&p.k.map, x);
        }
    };

    gh_vec16_loose<T, false>(p.k, vbegin, nvec,
                             [&](uint64_t k, bool) { eng.add_one(key_of(data[k]), 1u); });

    /* The VE keys of one 16-byte vector. */
    auto keys = [&](const uint4 vv, uint32_t(&key)[VE]) {
        union {
            uint4 v;
            T e[VE];
        } w;
        w.v = vv;
        if constexpr (MODE == P16_U16 || p16_is_int(MODE)) {
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e)
                key[e] = key_of(w.e[e]);
        } else {
            bool all_ok = true;
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e) {
                bool ok;
                key[e] = fast_key(w.e[e], ok);
                all_ok = all_ok && ok;
            }
            if (__builtin_expect(!all_ok, 0)) {
                /* One out-of-line-ish copy of the exact path per vector, not per sample. */
#pragma unroll 1
                for (uint32_t e = 0; e < VE; ++e) {
                    float x = w.e[0];
#pragma unroll
                    for (uint32_t j = 1; j < VE; ++j)
                        x = j == e ? w.e[j] : x;
                    bool ok;
                    (void)fast_key(x, ok);
                    if (!ok) {
                        const uint32_t k = gpuhist_slot_even_f32(&p.k.map, x);
#pragma unroll
                        for (uint32_t j = 0; j < VE; ++j)
                            key[j] = j == e ? k : key[j];
                    }
                }
            }
        }
    };
    const uint4 *vec = (const uint4 *)(data + vbegin);
    const uint64_t per_block = (uint64_t)P16_THREADS * U;
    /* The engine's hot mode (packed16.cuh): u16 keys are the halves of the vectors, counted by
     * count_hot_halves (hits in registers, misses in rounds; lean vote and flush). f32 keeps the
     * per-sample hot mode with a vote per vector and a flush per iteration: with the lean one its
     * kernels spill (16-22 bytes at 64 registers) and measured 0.77-0.82 of the read ceiling on
     * f32/65536 against 0.82-0.87 (H200, same run). */
    constexpr bool U16 = MODE == P16_U16;
    eng.run<U, VE, true, U16, U16>((uint64_t)blockIdx.x * per_block,
                                   (uint64_t)gridDim.x * per_block, nvec,
                         tid, [&](uint64_t i) { return __ldcs(vec + i); }, keys);
    __syncthreads();

    if (part) {
        /* Coalesced copy of the halves to this block's partial row; p16_reduce sums the rows
         * (one 64-bit global atomic per half and block would be 8.6M atomics at 132 blocks). */
        const uint32_t n4 = p16_row4(p.nkeys);
        uint4 *row = part + (uint64_t)blockIdx.x * n4;
        for (uint32_t j = tid; j < n4; j += P16_THREADS)
            row[j] = ((const uint4 *)p16_w)[j];
        if (fused)
            p16_reduce_fused(part, n4, p.nkeys, out, p16_w);
        return;
    }
    eng.add_to_out(tid);
}

/* out[2j] += sum of the low halves of word j over the rows [y * P16_ROWS, ...), out[2j+1] the
 * high halves: blockIdx.y splits the rows so that enough loads are in flight. A half is below
 * 2^16, so P16_ROWS of them fit 32 bits. */
#define P16_ROWS 16u
__global__ void __launch_bounds__(256)
    p16_reduce(const uint4 *__restrict__ part, const uint32_t rows, const uint32_t n4,
               const uint32_t nkeys, unsigned long long *__restrict__ out)
{
    const uint32_t j4 = blockIdx.x * 256u + threadIdx.x;
    if (j4 >= n4)
        return;
    const uint32_t r0 = blockIdx.y * P16_ROWS;
    const uint32_t r1 = rows - r0 < P16_ROWS ? rows : r0 + P16_ROWS;
    p16_halves h;
#pragma unroll 8
    for (uint32_t r = r0; r < r1; ++r)
        h.add(__ldcs(part + (uint64_t)r * n4 + j4));
    h.to_out(j4, nkeys, out);
}

static int p16_supports_f32(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 && plan->slots > plan->bins && plan->slots < 0x40000000u &&
           p16_smem(plan->slots) <= gpuhist_cuda_smem_optin(ctx);
}

static int p16_supports_u16(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 &&
           p16_smem_halves(65536u, P16_U) <= gpuhist_cuda_smem_optin(ctx);
}

/* Whether the rows can be summed inside the kernel (p16_reduce_fused): a cooperative launch of
 * `grid` blocks must be possible (the device supports it and that many blocks are resident at
 * once) and each block's slice of the rows at most P16_FUSED_SPAN uint4s wide. Testing knob:
 * GPUHIST_CUDA_P16_FUSED=0 keeps p16_reduce as a kernel of its own. */
static int p16_can_fuse(const gpuhist_cuda_job *job, const void *kernel, int grid, size_t smem,
                        uint32_t n4)
{
    const char *env = getenv("GPUHIST_CUDA_P16_FUSED");
    if (env && strcmp(env, "0") == 0)
        return 0;
    if (grid < 1 || (n4 + (uint32_t)grid - 1u) / (uint32_t)grid > P16_FUSED_SPAN)
        return 0;
    int coop = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, job->device) != cudaSuccess ||
        !coop)
        return 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, P16_THREADS, smem) !=
        cudaSuccess)
        return 0;
    return (int64_t)per_sm * job->sm_count >= grid;
}

template <int MODE>
static gpuhist_status p16_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, p16_params p,
                                 void *out)
{
    auto kernel = p16_kernel<MODE>;
    const size_t smem = MODE == P16_U16 ? p16_smem_halves(p.nkeys, P16_U) : p16_smem(p.nkeys);
    if (smem > job->smem_per_block_optin)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16: %zu bytes of shared memory needed", smem);
    cudaError_t err;
    const int grid = gh_grid(job, kernel, GH_LP_FAST_PACKED16, smem, job->elements / 8u, &err);
    if (grid == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-fast-packed16 configuration");
    typedef typename p16_sample<MODE>::type T;
    /* Partial rows when scratch can be had, else the blocks add straight into out. */
    const uint32_t n4 = p16_row4(p.nkeys);
    void *scr = NULL;
    if (gpuhist_cuda_scratch(ctx, (size_t)grid * n4 * sizeof(uint4), &scr) != GPUHIST_OK)
        scr = NULL;
    uint4 *part = (uint4 *)scr;
    const int fused = part != NULL && p16_can_fuse(job, (const void *)kernel, grid, smem, n4);
    return gh_segments(job->elements, grid, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        uint64_t nv;
        const uint64_t vb = gh_vec16_body<T>(job->data, b, e, &nv);
        p16_params q = p;
        q.k.begin = b;
        q.k.end = e;
        unsigned long long *o = (unsigned long long *)out;
        if (fused) {
            void *args[] = {(void *)&q, (void *)&vb, (void *)&nv, (void *)&o, (void *)&part,
                            (void *)&fused};
            GPUHIST_CUDA_TRY(ctx,
                             cudaLaunchCooperativeKernel((const void *)kernel, grid, P16_THREADS,
                                                         args, smem, job->stream),
                             "cuda-fast-packed16 kernel (cooperative)");
            return GPUHIST_OK;
        }
        kernel<<<grid, P16_THREADS, smem, job->stream>>>(q, vb, nv, o, part, 0);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-packed16 kernel");
        if (part) {
            const dim3 rgrid((n4 + 255u) / 256u, ((uint32_t)grid + P16_ROWS - 1u) / P16_ROWS);
            p16_reduce<<<rgrid, 256, 0, job->stream>>>(part, (uint32_t)grid, n4, p.nkeys,
                                                       (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-fast-packed16 reduce");
        }
        return GPUHIST_OK;
    });
}

/* The kernel parameters of a one-channel plan of nkeys counters (the job's range and map). */
static p16_params p16_params_of(const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                                uint32_t nkeys)
{
    p16_params p;
    memset(&p, 0, sizeof p);
    p.k = gh_make_params(plan, job);
    p.nkeys = nkeys;
    p.bins = plan->bins;
    return p;
}

/* 32/64-bit integer samples on INTEGER bins: (bins + 3) 16-bit slot counters, as f32's. */
static int p16_supports_ids(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return plan->channels == 1 && plan->map.kind == GH_KIND_INTEGER &&
           plan->slots < 0x40000000u && p16_smem(plan->slots) <= gpuhist_cuda_smem_optin(ctx);
}

static gpuhist_status p16_run_ids(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                                  void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    if (plan->channels != 1 || plan->map.kind != GH_KIND_INTEGER)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16-ids: one channel of INTEGER bins only");
    const p16_params p = p16_params_of(plan, job, plan->slots);
    switch (plan->dtype) {
    case GPUHIST_I32:
        return p16_launch<P16_I32>(ctx, job, p, out);
    case GPUHIST_U32:
        return p16_launch<P16_U32>(ctx, job, p, out);
    case GPUHIST_I64:
        return p16_launch<P16_I64>(ctx, job, p, out);
    case GPUHIST_U64:
        return p16_launch<P16_U64>(ctx, job, p, out);
    default:
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16-ids: 32/64-bit integer samples only");
    }
}

static gpuhist_status p16_run_u16(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                                  void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    if (plan->channels != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16: interleaved channels are not handled");
    return p16_launch<P16_U16>(ctx, job, p16_params_of(plan, job, 65536u), out);
}

static gpuhist_status p16_run_f32(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                                  void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    if (plan->channels != 1)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-fast-packed16: interleaved channels are not handled");
    p16_params p = p16_params_of(plan, job, plan->slots);
    p.lower_f = plan->map.lower_f;
    p.scale_f = plan->map.scale_f;
    gpuhist_fe_cert c; /* fast_even.h, cached per spec; refused: nothing passes, all exact */
    gpuhist_fe_cert_of(&plan->map, &c);
    p.t_lo = c.t_lo_f;
    p.t_hi = c.t_hi_f;
    if (c.direct)
        return p16_launch<P16_F32_DIRECT>(ctx, job, p, out);
    return p16_launch<P16_F32_CUT>(ctx, job, p, out);
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16 = {
    "cuda-fast-packed16",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), packed 16-bit counter probe (docs/PERFORMANCE.md); "
    "new: carry accounting, hot-key registers",
    "u16/i16/f16/bf16, every bin spec (counts the 65536 values or bit patterns, the backend "
    "folds them into bins); one channel",
    "16-bit counters packed two per word in 128 KiB of shared memory, exact carry accounting "
    "into 64-bit global counters; on skewed data one hot value per warp counted in registers "
    "and the other samples' atomics issued in rounds, 16-byte loads",
    GPUHIST_DTYPE_BIT(GPUHIST_U16) | GPUHIST_DTYPE_BIT(GPUHIST_I16) | GPUHIST_CUDA_HALF_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES,
    p16_supports_u16,
    p16_run_u16,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_f32 = {
    "cuda-fast-packed16-f32",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), packed 16-bit counter probe (docs/PERFORMANCE.md); "
    "new: carry accounting, hot-key registers, certified grid",
    "f32, even bins while (bins + 3) 16-bit counters fit shared memory (~115k on H100/H200); one "
    "channel",
    "16-bit slot counters packed two per word in shared memory with exact carry accounting, "
    "hot-key registers, f32 estimate certified against every edge on the host (exact binmap "
    "fallback for the rest)",
    GPUHIST_DTYPE_BIT(GPUHIST_F32),
    GPUHIST_KIND_BIT(GPUHIST_BINS_EVEN),
    0,
    0,
    p16_supports_f32,
    p16_run_f32,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_ids = {
    "cuda-fast-packed16-ids",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), packed 16-bit counter probe (docs/PERFORMANCE.md); "
    "new: carry accounting, hot-key registers",
    "i32/u32/i64/u64, INTEGER bins while (bins + 3) 16-bit counters fit shared memory (~115k on "
    "H100/H200); one channel",
    "16-bit slot counters packed two per word in shared memory with exact carry accounting, "
    "hot-key registers, each id's slot by one subtraction and compare (binmap.h)",
    GPUHIST_DTYPE_BIT(GPUHIST_I32) | GPUHIST_DTYPE_BIT(GPUHIST_U32) |
        GPUHIST_DTYPE_BIT(GPUHIST_I64) | GPUHIST_DTYPE_BIT(GPUHIST_U64),
    GPUHIST_KIND_BIT(GPUHIST_BINS_INTEGER),
    0,
    0,
    p16_supports_ids,
    p16_run_ids,
};
