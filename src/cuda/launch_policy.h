/*
 * launch_policy.h - how every CUDA kernel of the library is launched, as data: one table of
 * launch policies (in the style of CUB's tuning policies), one per launch mechanism, and THE rule
 * that turns a policy, the device and the work into a grid (gh_launch_grid_of).
 *
 * A policy says: threads per block (and a bigger block for kernels whose dynamic shared memory
 * leaves room for few resident blocks), the work items one thread of a block takes before one
 * more block is worth launching, the most blocks per SM the grid uses, an absolute limit on the
 * grid, and two flags: GH_LP_OCCUPANCY (the grid is also capped by the kernel's resident blocks
 * per SM, asked of the runtime once per kernel, device, block and shared memory:
 * gpuhist_cuda_blocks_per_sm, launch_policy.cu, which also raises the kernel's dynamic
 * shared-memory limit once when it needs more than 48 KiB) and GH_LP_TUNABLE (the environment
 * variable GPUHIST_CUDA_BLOCKS_PER_SM, job->blocks_per_sm_cap, replaces the per-SM cap: the
 * benchmark's grid sweep).
 *
 * The numbers kernels are compiled with (block sizes in __launch_bounds__, vectors per thread of
 * their unrolled loops) are the macros of this file, so a kernel and the grid it is launched
 * with cannot disagree. The "work" a caller hands the rule is in the caller's unit (samples,
 * 16-byte vectors, counters), the one items_per_thread counts.
 *
 * Plain C, host only, no CUDA: tests/unit/test_launch_policy.c evaluates the rule on the host for
 * representative devices. Limits: 1-D grids; the 2-D merge grids (byte_common.cuh's gh8_merge,
 * fast_packed16.cu's reduce) and cuda-fast-global's cluster launch size their grids where they
 * are, from the block sizes here.
 */
#ifndef GPUHIST_CUDA_LAUNCH_POLICY_H
#define GPUHIST_CUDA_LAUNCH_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* ---- the numbers kernels are compiled with ------------------------------------------------- */

/* Threads per block of the general strategies: 8 resident blocks per SM stay possible on Hopper
 * when the shared histogram is small. */
#define GH_BLOCK 256
/* Block size of the shared-histogram kernels when their counters exceed GH_BIG_SMEM: a histogram
 * too big for several resident blocks per SM leaves one block per SM, which then needs many
 * threads to keep loads in flight (the kernels are compiled for up to GH_BLOCK_BIG threads). */
#define GH_BLOCK_BIG 1024
#define GH_BIG_SMEM (32u * 1024u)
/* Resident blocks per SM used at most by the grid-stride kernels. 001 §V.B found 2 x SMs best
 * on its GPU; with small shared histograms more resident blocks hide latency better, up to 8 on
 * the H200 (docs/PERFORMANCE.md, "Seed experiments reproduced"; GPUHIST_CUDA_BLOCKS_PER_SM
 * overrides it for a sweep). */
#define GH_BLOCKS_PER_SM_CAP 8
/* cuda-optimized's block when its histogram leaves room for few blocks per SM. */
#define OPT_BLOCK_BIG 512
/* The backend's one-block finish of small histograms (cuda_finish.cu). */
#define GH_SMALL_THREADS 1024
/* The packed 16-bit shared counting engine (packed16.cuh): one block of 1024 threads per SM. */
#define P16_THREADS 1024
#define P16_U 3u  /* cuda-fast-packed16: 16-byte vectors per thread per iteration */
#define ND16_U 2u /* the fused N-D count (nd_packed16.cu): vectors per thread per iteration */
/* cuda-fast-smem: the general kernel, and the single-channel f32 / f64 kernels (one block per
 * SM: their tables want most of shared memory). */
#define FS_THREADS 256
#define FS_U 4 /* 16-byte vectors per thread per iteration */
#define FX_THREADS 1024
#define FE_U 4  /* 16-byte vectors per thread per stage (two stages in flight), even bins */
#define FXE_U 4 /* the same, explicit edges (register budget of 64 at 1024 threads) */
/* cuda-weighted-smem */
#define WS_BLOCK 256
/* cuda-two-pass: the partition pass */
#define TWO_PASS_THREADS 512
/* The 8-bit strategies: cuda-byte-pairs, cuda-histogram64, cuda-thread-packed,
 * cuda-histogram256 (blocks, and vectors per thread that justify a block). */
#define BP_THREADS P16_THREADS /* 1024: one block per SM */
#define BP_U 3u                /* vectors per thread per iteration (packed16's measured choice) */
#define H64_THREADS 128u       /* a multiple of 128: the bank is independent of the value */
#define H64_STEPS 15u          /* vectors per thread between merges: 15 * 16 = 240 <= 255 */
#define THREAD_PACKED_THREADS 64u /* Listing 8's blockDimx: the table is 64 x 64 words */
#define THREAD_PACKED_STEPS 15u   /* vectors per thread between merges: 15 * 16 = 240 <= 255 */
#define H256_THREADS 256u

/* ---- policies ------------------------------------------------------------------------------ */

#define GH_LP_OCCUPANCY 1u /* cap the grid by the kernel's resident blocks per SM */
#define GH_LP_TUNABLE 2u   /* GPUHIST_CUDA_BLOCKS_PER_SM replaces blocks_per_sm */

typedef struct gh_launch_policy {
    unsigned threads;          /* threads per block */
    unsigned threads_big;      /* ... when the dynamic shared memory exceeds big_smem (0: none) */
    unsigned big_smem;
    unsigned items_per_thread; /* the grid is at most ceil(work / (threads * items_per_thread));
                                  0: the work does not bound it */
    unsigned blocks_per_sm;    /* the grid is at most SMs x this (0: no such cap) */
    unsigned max_grid;         /* the grid is at most this (0: no limit) */
    unsigned flags;            /* GH_LP_OCCUPANCY, GH_LP_TUNABLE */
} gh_launch_policy;

/* The launch mechanisms, one policy each (gh_launch_policy_of). */
typedef enum gh_lp_id {
    GH_LP_GRID_STRIDE,      /* grid-stride kernels of GH_BLOCK threads: minmax, global atomics,
                               thread registers, sort-rle keys, weighted global */
    GH_LP_BLOCK_SHARED,     /* one shared histogram per block: block-shared, warp-aggregated,
                               multipass */
    GH_LP_OPTIMIZED,        /* cuda-optimized */
    GH_LP_WEIGHTED_SMEM,    /* cuda-weighted-smem */
    GH_LP_FAST_SMEM,        /* cuda-fast-smem's general kernel (work: 16-byte vectors) */
    GH_LP_FAST_SMEM_F32,    /* cuda-fast-smem's single-channel f32 / f64 kernels (work:
                               16-byte vectors, 4 floats or 2 doubles) */
    GH_LP_FAST_PACKED16,    /* cuda-fast-packed16 (work: groups of 8 samples) */
    GH_LP_FAST_GLOBAL,      /* cuda-fast-global's global route */
    GH_LP_TWO_PASS_PARTITION, /* cuda-two-pass, pass 1 */
    GH_LP_TWO_PASS_COUNT,   /* cuda-two-pass, pass 2: one block per SM, whatever the work */
    GH_LP_BYTE_PAIRS,       /* the 8-bit strategies (work: 16-byte vectors) */
    GH_LP_HISTOGRAM64,
    GH_LP_THREAD_PACKED,
    GH_LP_HISTOGRAM256,
    GH_LP_FAST_BYTES,       /* cuda-fast-bytes: threads and items per (tables, type), fb_cfg */
    GH_LP_COUNTER_PASS,     /* one thread per counter, at most 8 blocks per SM: the finish, the
                               add of another device's counters, cuda-fast-global's add */
    GH_LP_FOLD,             /* one thread per raw-value counter (the fold into slots), the
                               grouping of cuda-two-pass's pages, sort-rle's scatter */
    GH_LP_FINISH_SMALL,     /* the one-block finish of small histograms */
    GH_LP_UNCOUNT_LOCAL,    /* the pitched gaps taken back, totals in shared memory */
    GH_LP_UNCOUNT_GLOBAL,   /* ... one global atomic per gap sample */
    GH_LP_POINT_MAP,        /* one thread per N-D point (map to slots, or count one by one) */
    GH_LP_ND_FUSED,         /* the fused N-D counts (nd_packed16.cu, nd_bytes32.cu): 1 per SM */
    GH_LP_WEIGHT_NORMALIZE, /* one thread per weight record */
    GH_LP_COUNT
} gh_lp_id;

static inline gh_launch_policy gh_launch_policy_of(gh_lp_id id)
{
    /* threads, threads_big, big_smem, items_per_thread, blocks_per_sm, max_grid, flags */
    static const gh_launch_policy table[GH_LP_COUNT] = {
        /* GRID_STRIDE */ {GH_BLOCK, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                           GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* BLOCK_SHARED */ {GH_BLOCK, GH_BLOCK_BIG, GH_BIG_SMEM, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                            GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* OPTIMIZED */ {GH_BLOCK, OPT_BLOCK_BIG, GH_BIG_SMEM, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                         GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* WEIGHTED_SMEM */ {WS_BLOCK, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                             GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* FAST_SMEM */ {FS_THREADS, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                         GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* FAST_SMEM_F32 */ {FX_THREADS, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                             GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* FAST_PACKED16 */ {P16_THREADS, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                             GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* FAST_GLOBAL */ {GH_BLOCK, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                           GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* TWO_PASS_PARTITION */ {TWO_PASS_THREADS, 0u, 0u, 4u, GH_BLOCKS_PER_SM_CAP, 0u,
                                  GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* TWO_PASS_COUNT */ {P16_THREADS, 0u, 0u, 0u, 1u, 0u, 0u},
        /* BYTE_PAIRS */ {BP_THREADS, 0u, 0u, BP_U, 0u, 0u, GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* HISTOGRAM64 */ {H64_THREADS, 0u, 0u, H64_STEPS, 0u, 0u,
                           GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* THREAD_PACKED */ {THREAD_PACKED_THREADS, 0u, 0u, THREAD_PACKED_STEPS, 0u, 0u,
                             GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* HISTOGRAM256 */ {H256_THREADS, 0u, 0u, 1u, 0u, 0u, GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* FAST_BYTES */ {0u, 0u, 0u, 0u, 0u, 0u, GH_LP_OCCUPANCY | GH_LP_TUNABLE},
        /* COUNTER_PASS */ {GH_BLOCK, 0u, 0u, 1u, 8u, 0u, 0u},
        /* FOLD */ {GH_BLOCK, 0u, 0u, 1u, 0u, 0u, 0u},
        /* FINISH_SMALL */ {GH_SMALL_THREADS, 0u, 0u, 0u, 0u, 1u, 0u},
        /* UNCOUNT_LOCAL */ {GH_BLOCK, 0u, 0u, 16u, 2u, 0u, 0u},
        /* UNCOUNT_GLOBAL */ {GH_BLOCK, 0u, 0u, 1u, 8u, 0u, 0u},
        /* POINT_MAP */ {GH_BLOCK, 0u, 0u, 1u, 0u, 65536u, 0u},
        /* ND_FUSED */ {P16_THREADS, 0u, 0u, ND16_U, 1u, 0u, 0u},
        /* WEIGHT_NORMALIZE */ {GH_BLOCK, 0u, 0u, 1u, 0u, 65535u, 0u},
    };
    return table[id];
}

/* Threads per block of a policy for `smem` bytes of dynamic shared memory. */
static inline unsigned gh_launch_threads(const gh_launch_policy *p, size_t smem)
{
    return p->threads_big && smem > p->big_smem ? p->threads_big : p->threads;
}

/* THE grid rule: ceil(work / (threads * items_per_thread)) blocks (when items_per_thread is
 * set), at most sm_count x the per-SM limit (blocks_per_sm, or `tuned` when the policy is
 * GH_LP_TUNABLE and tuned > 0; with GH_LP_OCCUPANCY also at most `resident`, the kernel's
 * resident blocks per SM), at most max_grid, at least 1. */
static inline uint64_t gh_launch_grid_of(const gh_launch_policy *p, unsigned threads,
                                         int sm_count, int resident, int tuned, uint64_t work)
{
    uint64_t grid = UINT64_MAX;
    uint64_t per_sm = p->blocks_per_sm;
    if ((p->flags & GH_LP_TUNABLE) && tuned > 0)
        per_sm = (uint64_t)tuned;
    if (p->flags & GH_LP_OCCUPANCY) {
        const uint64_t r = resident > 0 ? (uint64_t)resident : 0u;
        per_sm = per_sm && per_sm < r ? per_sm : r;
    }
    if (per_sm || (p->flags & GH_LP_OCCUPANCY))
        grid = (uint64_t)(sm_count > 0 ? sm_count : 0) * per_sm;
    if (p->items_per_thread) {
        const uint64_t per_block = (uint64_t)threads * p->items_per_thread;
        const uint64_t need = (work + per_block - 1u) / per_block;
        if (need < grid)
            grid = need;
    }
    if (p->max_grid && grid > p->max_grid)
        grid = p->max_grid;
    return grid < 1u ? 1u : grid;
}

#endif
