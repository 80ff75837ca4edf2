/* registry_cpu.c - the CPU backend's part of the strategy registry. */
#include "internal.h"

extern const gpuhist_strategy gpuhist_strategy_cpu_reference;
extern const gpuhist_strategy gpuhist_strategy_cpu_serial;
extern const gpuhist_strategy gpuhist_strategy_cpu_threads;

const gpuhist_strategy *const gpuhist_cpu_strategies[] = {
    &gpuhist_strategy_cpu_reference,
    &gpuhist_strategy_cpu_serial,
    &gpuhist_strategy_cpu_threads,
};
const size_t gpuhist_cpu_strategy_count =
    sizeof gpuhist_cpu_strategies / sizeof gpuhist_cpu_strategies[0];
