/*
 * registry_opencl.c - the OpenCL backend's part of the strategy registry (core/registry.c lists
 * these after the CPU and CUDA strategies; order matters only for --list-strategies), and its
 * auto policy (core/select.c; the reasons: docs/PERFORMANCE.md, "Why the auto policy picks what
 * it picks").
 */
#include "opencl_internal.h"

extern const gpuhist_strategy gpuhist_strategy_opencl_tree_reduce;
extern const gpuhist_strategy gpuhist_strategy_opencl_local_atomic;
extern const gpuhist_strategy gpuhist_strategy_opencl_block_shared;
extern const gpuhist_strategy gpuhist_strategy_opencl_weighted_local;
extern const gpuhist_strategy gpuhist_strategy_opencl_weighted_global;

const gpuhist_strategy *const gpuhist_opencl_strategies[] = {
    &gpuhist_strategy_opencl_tree_reduce,
    &gpuhist_strategy_opencl_local_atomic,
    &gpuhist_strategy_opencl_block_shared,
    &gpuhist_strategy_opencl_weighted_local,
    &gpuhist_strategy_opencl_weighted_global,
};
const size_t gpuhist_opencl_strategy_count =
    sizeof(gpuhist_opencl_strategies) / sizeof(gpuhist_opencl_strategies[0]);

/* In order; the first rule whose strategy accepts the plan wins. opencl-tree-reduce is never
 * chosen. */
static const gpuhist_rule opencl_rules[] = {
    /* The histogram fits local memory (its supports check): replicated local histograms. */
    {.strategy = &gpuhist_strategy_opencl_block_shared},
    /* Anything else: local or global atomics, any bin count. */
    {.strategy = &gpuhist_strategy_opencl_local_atomic},
    /* Weighted requests (the strategies above do not sum weights; these take nothing else):
     * local-memory records while they fit, else global atomics into the exact records. */
    {.strategy = &gpuhist_strategy_opencl_weighted_local},
    {.strategy = &gpuhist_strategy_opencl_weighted_global},
};
const gpuhist_policy gpuhist_opencl_policy = {opencl_rules,
                                              sizeof opencl_rules / sizeof opencl_rules[0]};
