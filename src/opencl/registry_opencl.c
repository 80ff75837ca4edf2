/*
 * registry_opencl.c - the OpenCL backend's part of the strategy registry (core/registry.c lists
 * these after the CPU and CUDA strategies). Order matters only for --list-strategies.
 */
#include "opencl_internal.h"

extern const gpuhist_strategy gpuhist_strategy_opencl_tree_reduce;
extern const gpuhist_strategy gpuhist_strategy_opencl_local_atomic;
extern const gpuhist_strategy gpuhist_strategy_opencl_block_shared;

const gpuhist_strategy *const gpuhist_opencl_strategies[] = {
    &gpuhist_strategy_opencl_tree_reduce,
    &gpuhist_strategy_opencl_local_atomic,
    &gpuhist_strategy_opencl_block_shared,
};
const size_t gpuhist_opencl_strategy_count =
    sizeof(gpuhist_opencl_strategies) / sizeof(gpuhist_opencl_strategies[0]);
