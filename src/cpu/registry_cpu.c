/*
 * registry_cpu.c - the CPU backend's part of the strategy registry, and its auto policy
 * (core/select.c; the measurements behind it: docs/PERFORMANCE.md, "Why the auto policy picks
 * what it picks").
 */
#include "internal.h"

extern const gpuhist_strategy gpuhist_strategy_cpu_reference;
extern const gpuhist_strategy gpuhist_strategy_cpu_serial;
extern const gpuhist_strategy gpuhist_strategy_cpu_threads;
extern const gpuhist_strategy gpuhist_strategy_cpu_weighted;

const gpuhist_strategy *const gpuhist_cpu_strategies[] = {
    &gpuhist_strategy_cpu_reference,
    &gpuhist_strategy_cpu_serial,
    &gpuhist_strategy_cpu_threads,
    &gpuhist_strategy_cpu_weighted,
};
const size_t gpuhist_cpu_strategy_count =
    sizeof gpuhist_cpu_strategies / sizeof gpuhist_cpu_strategies[0];

/* In order; the first rule whose conditions hold and whose strategy accepts the plan wins. */
static const gpuhist_rule cpu_rules[] = {
    /* Several threads, each with 256 Ki samples at least, up to 2^22 bins: cpu-threads. */
    {.strategy = &gpuhist_strategy_cpu_threads,
     .max_bins = 1u << 22,
     .samples_per_thread = 262144u},
    /* Anything else: one thread. */
    {.strategy = &gpuhist_strategy_cpu_serial},
    /* Weighted requests (the only CPU strategy that sums weights). */
    {.strategy = &gpuhist_strategy_cpu_weighted},
    /* Safety net. */
    {.strategy = &gpuhist_strategy_cpu_reference},
};
const gpuhist_policy gpuhist_cpu_policy = {cpu_rules, sizeof cpu_rules / sizeof cpu_rules[0]};
