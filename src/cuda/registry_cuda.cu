/*
 * registry_cuda.cu - the CUDA backend's part of the strategy registry (core/registry.c lists
 * these after the CPU strategies). Order matters only for --list-strategies.
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
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_smem;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_packed16_f32;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_global;
extern const gpuhist_strategy gpuhist_strategy_cuda_fast_cluster;
extern const gpuhist_strategy gpuhist_strategy_cuda_two_pass;

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
    &gpuhist_strategy_cuda_fast_smem,
    &gpuhist_strategy_cuda_fast_packed16,
    &gpuhist_strategy_cuda_fast_packed16_f32,
    &gpuhist_strategy_cuda_fast_global,
    &gpuhist_strategy_cuda_fast_cluster,
    &gpuhist_strategy_cuda_two_pass,
};
const size_t gpuhist_cuda_strategy_count =
    sizeof(gpuhist_cuda_strategies) / sizeof(gpuhist_cuda_strategies[0]);
}
