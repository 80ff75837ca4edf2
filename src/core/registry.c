/*
 * registry.c - the single list of algorithms: every strategy of every compiled backend.
 *
 * Each backend contributes a static table (src/<backend>/registry_<backend>.c[u]); this file
 * only concatenates them. The CLI's --list-strategies, the tests and the benchmarks iterate over
 * this list, so registering a strategy is all it takes to have it tested and benchmarked.
 */
#include "internal.h"

#include <string.h>

typedef struct {
    const gpuhist_strategy *const *list;
    const size_t *count;
} backend_table;

static const backend_table tables[] = {
    {gpuhist_cpu_strategies, &gpuhist_cpu_strategy_count},
#if GPUHIST_HAVE_CUDA
    {gpuhist_cuda_strategies, &gpuhist_cuda_strategy_count},
#endif
#if GPUHIST_HAVE_OPENCL
    {gpuhist_opencl_strategies, &gpuhist_opencl_strategy_count},
#endif
};

size_t gpuhist_registry_size(void)
{
    size_t n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t)
        n += *tables[t].count;
    return n;
}

const gpuhist_strategy *gpuhist_registry_at(size_t i)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
        if (i < *tables[t].count)
            return tables[t].list[i];
        i -= *tables[t].count;
    }
    return NULL;
}

const gpuhist_strategy *gpuhist_registry_find(const char *name)
{
    size_t n = gpuhist_registry_size();
    for (size_t i = 0; i < n; ++i) {
        const gpuhist_strategy *s = gpuhist_registry_at(i);
        if (strcmp(s->name, name) == 0)
            return s;
    }
    return NULL;
}

int gpuhist_strategy_accepts(const gpuhist_ctx *ctx, const gpuhist_strategy *s,
                             const gpuhist_plan *plan)
{
    if (!(s->dtypes & GPUHIST_DTYPE_BIT(plan->dtype)))
        return 0;
    if (!(s->kinds & GPUHIST_KIND_BIT(plan->map.kind)))
        return 0;
    if (s->max_bins && plan->bins > s->max_bins)
        return 0;
    if (plan->channels > 1 && !(s->caps & GPUHIST_CAP_CHANNELS))
        return 0;
    if ((s->caps & GPUHIST_CAP_VALUES) && gpuhist_small_value_count(plan->dtype) == 0)
        return 0;
    if (plan->weights && !(s->caps & GPUHIST_CAP_WEIGHTS))
        return 0;
    if (s->supports_fn && !s->supports_fn(ctx, plan))
        return 0;
    return 1;
}

size_t gpuhist_strategy_count(void)
{
    return gpuhist_registry_size();
}

gpuhist_status gpuhist_strategy_info(size_t i, gpuhist_strategy_desc *out)
{
    const gpuhist_strategy *s = gpuhist_registry_at(i);
    if (!s || !out)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    out->name = s->name;
    out->backend = s->backend;
    out->seed = s->seed;
    out->supports = s->supports;
    out->summary = s->summary;
    return GPUHIST_OK;
}
