/*
 * select.c - which strategy runs a plan, for every backend.
 *
 * A backend's auto policy is data: an ordered table of rules (gpuhist_rule, internal.h) in
 * src/<backend>/registry_<backend>.*, next to its list of strategies. A rule names a registered
 * strategy and the plans it is preferred for (dtypes, bin kinds, a bin range, enough work for
 * several CPU threads, at most so many samples); the strategy's own gpuhist_strategy_accepts()
 * says whether it can run the plan. The first rule whose conditions hold and whose strategy
 * accepts wins; a strategy forced by name is a policy of one rule without conditions. The measurements behind each
 * backend's rules are in docs/PERFORMANCE.md ("Why the auto policy picks what it picks").
 */
#include "internal.h"

static int rule_applies(const gpuhist_ctx *ctx, const gpuhist_rule *r, const gpuhist_plan *plan)
{
    if (r->dtypes && !(r->dtypes & GPUHIST_DTYPE_BIT(plan->dtype)))
        return 0;
    if (r->kinds && !(r->kinds & GPUHIST_KIND_BIT(plan->map.kind)))
        return 0;
    if (plan->bins < r->min_bins || (r->max_bins && plan->bins > r->max_bins))
        return 0;
    if (r->max_samples && plan->pixels * plan->active > r->max_samples)
        return 0;
    if (r->samples_per_thread) {
        const int threads = gpuhist_cpu_threads(ctx);
        if (threads < 2 ||
            plan->pixels * plan->active < (uint64_t)threads * r->samples_per_thread)
            return 0;
    }
    return gpuhist_strategy_accepts(ctx, r->strategy, plan);
}

static const gpuhist_strategy *first_rule(const gpuhist_ctx *ctx, const gpuhist_rule *rules,
                                          size_t count, const gpuhist_plan *plan)
{
    for (size_t i = 0; i < count; ++i)
        if (rule_applies(ctx, &rules[i], plan))
            return rules[i].strategy;
    return NULL;
}

const gpuhist_strategy *gpuhist_select(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    if (ctx->forced) {
        const gpuhist_rule asked = {ctx->forced, 0, 0, 0, 0, 0, 0};
        return first_rule(ctx, &asked, 1, plan);
    }
    const gpuhist_policy *p = ctx->ops->policy;
    const gpuhist_strategy *s = p ? first_rule(ctx, p->rules, p->count, plan) : NULL;
    if (s)
        return s;
    /* Safety net for a plan that every rule declines: any strategy of the backend that can. */
    const size_t n = gpuhist_registry_size();
    for (size_t i = 0; i < n; ++i) {
        s = gpuhist_registry_at(i);
        if (s->backend == ctx->backend && gpuhist_strategy_accepts(ctx, s, plan))
            return s;
    }
    return NULL;
}
