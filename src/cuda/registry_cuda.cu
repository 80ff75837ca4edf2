/*
 * registry_cuda.cu - the CUDA backend's part of the strategy registry (core/registry.c lists
 * these after the CPU strategies; order matters only for --list-strategies), and its auto policy
 * (core/select.c; the measurements behind each rule: docs/PERFORMANCE.md, "Why the auto policy
 * picks what it picks").
 */
#include "cuda_internal.cuh"

extern "C" {
extern const gpuhist_strategy gpuhist_strategy_cuda_global_atomic;
extern const gpuhist_strategy gpuhist_strategy_cuda_block_shared;
extern const gpuhist_strategy gpuhist_strategy_cuda_warp_aggregated;
extern const gpuhist_strategy gpuhist_strategy_cuda_thread_registers;
extern const gpuhist_strategy gpuhist_strategy_cuda_histogram64;
extern const gpuhist_strategy gpuhist_strategy_cuda_histogram64_atomic;
extern const gpuhist_strategy gpuhist_strategy_cuda_histogram256;
extern const gpuhist_strategy gpuhist_strategy_cuda_histogram256_tagged;
extern const gpuhist_strategy gpuhist_strategy_cuda_thread_packed;
extern const gpuhist_strategy gpuhist_strategy_cuda_sort_rle;
extern const gpuhist_strategy gpuhist_strategy_cuda_multipass;
extern const gpuhist_strategy gpuhist_strategy_cuda_optimized;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_bytes;
extern const gpuhist_strategy gpuhist_strategy_cuda_byte_pairs;
extern const gpuhist_strategy gpuhist_strategy_cuda_half_pairs;
extern const gpuhist_strategy gpuhist_strategy_cuda_one_launch;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_smem;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_f32;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_ids;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_global;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_cluster;
extern const gpuhist_strategy gpuhist_strategy_cuda_two_pass;
extern const gpuhist_strategy gpuhist_strategy_cuda_weighted_smem;
extern const gpuhist_strategy gpuhist_strategy_cuda_weighted_global;

const gpuhist_strategy *const gpuhist_cuda_strategies[] = {
    &gpuhist_strategy_cuda_global_atomic,
    &gpuhist_strategy_cuda_block_shared,
    &gpuhist_strategy_cuda_warp_aggregated,
    &gpuhist_strategy_cuda_thread_registers,
    &gpuhist_strategy_cuda_histogram64,
    &gpuhist_strategy_cuda_histogram64_atomic,
    &gpuhist_strategy_cuda_histogram256,
    &gpuhist_strategy_cuda_histogram256_tagged,
    &gpuhist_strategy_cuda_thread_packed,
    &gpuhist_strategy_cuda_sort_rle,
    &gpuhist_strategy_cuda_multipass,
    &gpuhist_strategy_cuda_optimized,
    &gpuhist_strategy_cuda_fast_bytes,
    &gpuhist_strategy_cuda_byte_pairs,
    &gpuhist_strategy_cuda_half_pairs,
    &gpuhist_strategy_cuda_fast_smem,
    &gpuhist_strategy_cuda_fast_packed16,
    &gpuhist_strategy_cuda_fast_packed16_f32,
    &gpuhist_strategy_cuda_fast_packed16_ids,
    &gpuhist_strategy_cuda_fast_global,
    &gpuhist_strategy_cuda_fast_cluster,
    &gpuhist_strategy_cuda_two_pass,
    &gpuhist_strategy_cuda_weighted_smem,
    &gpuhist_strategy_cuda_weighted_global,
    &gpuhist_strategy_cuda_one_launch,
};
const size_t gpuhist_cuda_strategy_count =
    sizeof(gpuhist_cuda_strategies) / sizeof(gpuhist_cuda_strategies[0]);

/*
 * In order; the first rule whose conditions hold and whose strategy accepts the plan wins (what
 * each strategy takes: its masks and supports check). Columns: strategy, dtypes, bin kinds,
 * min bins, max bins, samples per CPU thread, max samples; 0 imposes nothing.
 */
static const gpuhist_rule cuda_rules[] = {
    /* Device-resident calls up to image sizes: counted and finished in one launch (the fixed
     * cost of a count and a finish kernel, and of a 2-D copy or a gap kernel, is most of such
     * a call). */
    {&gpuhist_strategy_cuda_one_launch, 0, 0, 0, 0, 0, 1u << 22},
    /* 8-bit data in the layouts it takes: two bytes per packed 16-bit shared atomic. */
    {&gpuhist_strategy_cuda_byte_pairs, 0, 0, 0, 0, 0, 0},
    /* 8-bit data in the other layouts: per-warp 256-value shared histograms. */
    {&gpuhist_strategy_cuda_histogram256, 0, 0, 0, 0, 0, 0},
    /* f16/bf16 on even bins up to 256 whose arithmetic slot certifies on all 65536 bit
     * patterns: two samples' slots per packed 16-bit shared atomic (byte-pairs' engine); other
     * specs fall through to the raw bit patterns of the next rule. */
    {&gpuhist_strategy_cuda_half_pairs, GPUHIST_CUDA_HALF_DTYPES,
     GPUHIST_KIND_BIT(GPUHIST_BINS_EVEN), 0, 256, 0, 0},
    /* 16-bit data: 65536 packed 16-bit shared counters. */
    {&gpuhist_strategy_cuda_fast_packed16, 0, 0, 0, 0, 0, 0},
    /* Slots that fit one block's shared memory: 32-bit shared counters. */
    {&gpuhist_strategy_cuda_fast_smem, 0, 0, 0, 0, 0, 0},
    /* f32 even bins past that, while 16-bit counters fit a block: packed 16-bit counters. */
    {&gpuhist_strategy_cuda_fast_packed16_f32, 0, 0, 0, 0, 0, 0},
    /* 32/64-bit ids on INTEGER bins past that, while 16-bit counters fit a block. */
    {&gpuhist_strategy_cuda_fast_packed16_ids, 0, 0, 0, 0, 0, 0},
    /* f32 even bins past one block (only those measured): radix partition + packed counters. */
    {&gpuhist_strategy_cuda_two_pass, GPUHIST_DTYPE_BIT(GPUHIST_F32),
     GPUHIST_KIND_BIT(GPUHIST_BINS_EVEN), 65537, 0, 0, 0},
    /* 32/64-bit ids past a block (bincount; the slots of large N-D histograms): the same. On
     * i64 ids over 2^20 values it measured 0.46-0.87 of the read ceiling (H100) against
     * cuda-fast-global's 0.21-0.88: ahead on uniform and bell (0.21), behind on 90% one id
     * (0.60 against 0.74), which auto cannot see before it reads the data. */
    {&gpuhist_strategy_cuda_two_pass,
     GPUHIST_DTYPE_BIT(GPUHIST_I32) | GPUHIST_DTYPE_BIT(GPUHIST_U32) |
         GPUHIST_DTYPE_BIT(GPUHIST_I64) | GPUHIST_DTYPE_BIT(GPUHIST_U64),
     GPUHIST_KIND_BIT(GPUHIST_BINS_INTEGER), 65537, 0, 0, 0},
    /* Everything larger: global partial counters behind a per-thread run cache. */
    {&gpuhist_strategy_cuda_fast_global, 0, 0, 0, 0, 0, 0},
    /* Safety nets, for a plan that every rule above declines. */
    {&gpuhist_strategy_cuda_block_shared, 0, 0, 0, 0, 0, 0},
    {&gpuhist_strategy_cuda_multipass, 0, 0, 0, 1u << 17, 0, 0},
    {&gpuhist_strategy_cuda_sort_rle, 0, 0, 0, 0, 0, 0},
    {&gpuhist_strategy_cuda_global_atomic, 0, 0, 0, 0, 0, 0},
    /* Weighted requests (only these sum weights; every rule above declines them): per-block
     * records in shared memory while they fit, else global records. */
    {&gpuhist_strategy_cuda_weighted_smem, 0, 0, 0, 0, 0, 0},
    {&gpuhist_strategy_cuda_weighted_global, 0, 0, 0, 0, 0, 0},
};
const gpuhist_policy gpuhist_cuda_policy = {cuda_rules, sizeof cuda_rules / sizeof cuda_rules[0]};
}
