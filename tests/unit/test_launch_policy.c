/*
 * test_launch_policy.c - the CUDA launch policies (src/cuda/launch_policy.h) on the host: for
 * every launch mechanism, the block and grid the policy table and THE grid rule give equal the
 * launch's own formula, written out below independently of the table (the grid-stride rule,
 * the 8-bit strategies' rule, the counter passes of the finish and the absorb, the pitched-gap
 * uncount, the fold, the N-D map, the fused N-D count, the weight normalisation, cuda-two-pass's
 * count and page grouping, sort-rle's scatter). Devices of 1 to 170 SMs, every resident-block
 * count from 1 to 32, the tuning knob unset and set, and work from 0 to 2^40 (edges of every
 * block boundary, plus random values: seed printed, GPUHIST_TEST_SEED overrides).
 * The occupancy itself (asked of the CUDA runtime) is an input here: tests/gpu run the launches.
 */
#include "check.h"
#include "launch_policy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- each launch's grid, written out ---------------------------------------------------- */

/* grid-stride kernels (gh_grid; occupancy per_sm >= 1) */
static uint64_t old_gh_grid(int block, int sm_count, int per_sm, int knob, uint64_t work)
{
    const int cap = knob > 0 ? knob : 8;
    if (per_sm > cap)
        per_sm = cap;
    uint64_t grid = (uint64_t)sm_count * (uint64_t)per_sm;
    uint64_t need = (work + (uint64_t)block * 4u - 1u) / ((uint64_t)block * 4u);
    if (need < grid)
        grid = need;
    if (grid < 1)
        grid = 1;
    return grid;
}

/* the 8-bit strategies (gh8_grid; occupancy per_sm >= 1) */
static uint64_t old_gh8_grid(int sm_count, int per_sm, int knob, uint64_t nvec,
                             uint64_t per_block)
{
    if (knob > 0 && per_sm > knob)
        per_sm = knob;
    uint64_t full = (uint64_t)(sm_count > 0 ? sm_count : 1) * (uint64_t)per_sm;
    uint64_t need = (nvec + per_block - 1) / per_block;
    uint64_t g = need < full ? need : full;
    return g < 1 ? 1 : g;
}

/* the finish's and the absorb's counter passes; the uncount (local: 16 items, 2 per SM) */
static uint64_t old_capped(uint64_t n, uint64_t per_block, int sm_count, unsigned per_sm)
{
    const uint64_t blocks = (n + per_block - 1) / per_block;
    const uint64_t cap = (uint64_t)sm_count * per_sm;
    return blocks < 1 ? 1 : blocks > cap ? cap : blocks;
}

/* cuda-fast-global's add of its partial counters */
static uint64_t old_fg_add(int sm_count, uint32_t ncnt)
{
    uint32_t ag = (ncnt + 255u) / 256u;
    const uint32_t agmax = (uint32_t)sm_count * 8u;
    if (ag > agmax && agmax > 0u)
        ag = agmax;
    return ag;
}

/* nd_packed16.cu's fused count: at most one block per SM */
static uint64_t old_nd_fused(int sms, uint64_t nvec)
{
    const uint64_t need = (nvec + (uint64_t)1024 * 2u - 1u) / ((uint64_t)1024 * 2u);
    return need < (uint64_t)sms ? (need ? need : 1u) : (uint64_t)sms;
}

static uint64_t grid_of(gh_lp_id id, unsigned threads, int sm, int resident, int knob,
                        uint64_t work)
{
    const gh_launch_policy p = gh_launch_policy_of(id);
    return gh_launch_grid_of(&p, threads, sm, resident, knob, work);
}

static unsigned threads_of(gh_lp_id id, size_t smem)
{
    const gh_launch_policy p = gh_launch_policy_of(id);
    return gh_launch_threads(&p, smem);
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int main(void)
{
    const char *env = getenv("GPUHIST_TEST_SEED");
    rng_state = env && *env ? strtoull(env, NULL, 10) : 20261127u;
    if (!rng_state)
        rng_state = 1;
    printf("test_launch_policy: seed %llu\n", (unsigned long long)rng_state);

    /* blocks: the numbers the kernels are compiled with (policy, dynamic shared memory, block) */
    static const struct {
        gh_lp_id id;
        size_t smem;
        unsigned block;
    } blocks[] = {
        {GH_LP_GRID_STRIDE, 0, 256},           {GH_LP_BLOCK_SHARED, 32u * 1024u, 256},
        {GH_LP_BLOCK_SHARED, 32772, 1024},     {GH_LP_OPTIMIZED, 32u * 1024u, 256},
        {GH_LP_OPTIMIZED, 200u * 1024u, 512},  {GH_LP_WEIGHTED_SMEM, 100000, 256},
        {GH_LP_FAST_SMEM, 100000, 256},        {GH_LP_FAST_SMEM_F32, 160000, 1024},
        {GH_LP_FAST_PACKED16, 160000, 1024},   {GH_LP_FAST_GLOBAL, 0, 256},
        {GH_LP_TWO_PASS_PARTITION, 0, 512},    {GH_LP_TWO_PASS_COUNT, 140000, 1024},
        {GH_LP_BYTE_PAIRS, 0, 1024},           {GH_LP_HISTOGRAM64, 0, 128},
        {GH_LP_THREAD_PACKED, 0, 64},          {GH_LP_HISTOGRAM256, 0, 256},
        {GH_LP_FINISH_SMALL, 0, 1024},         {GH_LP_ND_FUSED, 0, 1024},
        {GH_LP_COUNTER_PASS, 0, 256},          {GH_LP_FOLD, 0, 256},
        {GH_LP_UNCOUNT_LOCAL, 49152, 256},     {GH_LP_UNCOUNT_GLOBAL, 0, 256},
        {GH_LP_POINT_MAP, 0, 256},             {GH_LP_WEIGHT_NORMALIZE, 0, 256},
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; ++i) {
        check_context("block of policy %d", (int)blocks[i].id);
        CHECK_EQ_U64(threads_of(blocks[i].id, blocks[i].smem), blocks[i].block);
    }

    static const int sms[] = {1, 2, 7, 16, 66, 108, 114, 132, 144, 170};
    static const int knobs[] = {0, 1, 2, 3, 8, 16, 64};
    uint64_t works[160];
    size_t nw = 0;
    static const uint64_t bases[] = {1, 64, 128, 256, 512, 1024, 1920, 2048, 3072, 4096,
                                     15360, 16384, 1u << 20, 1u << 24, 1ull << 31, 1ull << 40};
    works[nw++] = 0;
    for (size_t i = 0; i < sizeof bases / sizeof bases[0]; ++i) {
        works[nw++] = bases[i] - 1u;
        works[nw++] = bases[i];
        works[nw++] = bases[i] + 1u;
        works[nw++] = bases[i] * 133u + 7u;
    }
    while (nw < sizeof works / sizeof works[0])
        works[nw++] = rng_next() >> (rng_next() % 60u);

    /* the gh_grid mechanisms: (policy, block the launch used, its smem) */
    struct {
        gh_lp_id id;
        int block;
        size_t smem;
    } grid_stride[] = {
        {GH_LP_GRID_STRIDE, 256, 0},        {GH_LP_BLOCK_SHARED, 256, 4096},
        {GH_LP_BLOCK_SHARED, 1024, 65536},  {GH_LP_OPTIMIZED, 256, 1024},
        {GH_LP_OPTIMIZED, 512, 100000},     {GH_LP_WEIGHTED_SMEM, 256, 30000},
        {GH_LP_FAST_SMEM, 256, 20000},      {GH_LP_FAST_SMEM_F32, 1024, 150000},
        {GH_LP_FAST_PACKED16, 1024, 140000}, {GH_LP_FAST_GLOBAL, 256, 0},
        {GH_LP_TWO_PASS_PARTITION, 512, 0},
    };
    /* the gh8_grid mechanisms: (policy, block, vectors per block) */
    struct {
        gh_lp_id id;
        unsigned block;
        uint64_t per_block;
    } bytes[] = {
        {GH_LP_BYTE_PAIRS, 1024, 1024u * 3u},
        {GH_LP_HISTOGRAM64, 128, 128u * 15u},
        {GH_LP_THREAD_PACKED, 64, 64u * 15u},
        {GH_LP_HISTOGRAM256, 256, 256u},
    };
    /* cuda-fast-bytes's blocks and vectors per thread (fb_cfg) */
    static const unsigned fb[][2] = {{128, 4}, {256, 2}, {128, 4}, {256, 4}, {64, 4}};

    for (size_t s = 0; s < sizeof sms / sizeof sms[0]; ++s) {
        const int sm = sms[s];
        for (size_t w = 0; w < nw; ++w) {
            const uint64_t work = works[w];
            check_context("%d SMs, work %llu", sm, (unsigned long long)work);
            for (int per_sm = 1; per_sm <= 32; ++per_sm)
                for (size_t k = 0; k < sizeof knobs / sizeof knobs[0]; ++k) {
                    const int knob = knobs[k];
                    for (size_t g = 0; g < sizeof grid_stride / sizeof grid_stride[0]; ++g) {
                        const unsigned t =
                            threads_of(grid_stride[g].id, grid_stride[g].smem);
                        CHECK_EQ_U64(t, grid_stride[g].block);
                        CHECK_EQ_U64(grid_of(grid_stride[g].id, t, sm, per_sm, knob, work),
                                     old_gh_grid(grid_stride[g].block, sm, per_sm, knob, work));
                    }
                    for (size_t b = 0; b < sizeof bytes / sizeof bytes[0]; ++b)
                        CHECK_EQ_U64(grid_of(bytes[b].id, bytes[b].block, sm, per_sm, knob, work),
                                     old_gh8_grid(sm, per_sm, knob, work, bytes[b].per_block));
                    for (size_t f = 0; f < sizeof fb / sizeof fb[0]; ++f) {
                        gh_launch_policy p = gh_launch_policy_of(GH_LP_FAST_BYTES);
                        p.threads = fb[f][0];
                        p.items_per_thread = fb[f][1];
                        CHECK_EQ_U64(gh_launch_grid_of(&p, p.threads, sm, per_sm, knob, work),
                                     old_gh8_grid(sm, per_sm, knob, work,
                                                  (uint64_t)fb[f][0] * fb[f][1]));
                    }
                }
            /* the grids that ask nothing of the runtime (the knob never applies) */
            for (size_t k = 0; k < sizeof knobs / sizeof knobs[0]; ++k) {
                const int knob = knobs[k];
                if (work >= 1) { /* the callers never launch these over nothing */
                    CHECK_EQ_U64(grid_of(GH_LP_COUNTER_PASS, 256, sm, 0, knob, work),
                                 old_capped(work, 256, sm, 8));
                    CHECK_EQ_U64(grid_of(GH_LP_UNCOUNT_LOCAL, 256, sm, 0, knob, work),
                                 old_capped(work, 256u * 16u, sm, 2));
                    CHECK_EQ_U64(grid_of(GH_LP_UNCOUNT_GLOBAL, 256, sm, 0, knob, work),
                                 old_capped(work, 256, sm, 8));
                    CHECK_EQ_U64(grid_of(GH_LP_FOLD, 256, sm, 0, knob, work),
                                 (work + 255u) / 256u);
                    const uint64_t blocks = (work + 255u) / 256u;
                    CHECK_EQ_U64(grid_of(GH_LP_POINT_MAP, 256, sm, 0, knob, work),
                                 blocks < 65536u ? blocks : 65536u);
                    if (work < (1ull << 32))
                        CHECK_EQ_U64(grid_of(GH_LP_COUNTER_PASS, 256, sm, 0, knob, work),
                                     old_fg_add(sm, (uint32_t)work));
                }
                CHECK_EQ_U64(grid_of(GH_LP_WEIGHT_NORMALIZE, 256, sm, 0, knob, work),
                             old_capped(work, 256, 65535, 1));
                CHECK_EQ_U64(grid_of(GH_LP_ND_FUSED, 1024, sm, 0, knob, work),
                             old_nd_fused(sm, work));
                CHECK_EQ_U64(grid_of(GH_LP_TWO_PASS_COUNT, 1024, sm, 0, knob, work),
                             (uint64_t)sm);
                CHECK_EQ_U64(grid_of(GH_LP_FINISH_SMALL, 1024, sm, 0, knob, work), 1);
            }
        }
    }
    printf("test_launch_policy: %lu checks\n", check_count_);
    return check_exit();
}
