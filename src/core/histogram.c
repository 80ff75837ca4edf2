/*
 * histogram.c - gpuhist_histogram(): the one-shot call, a plan (plan.c) run by the backend.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gpuhist_result_describe(const gpuhist_ctx *ctx, const gpuhist_plan *plan,
                             const gpuhist_strategy *s, gpuhist_result *result)
{
    result->bins = plan->bins;
    result->channels = plan->active;
    for (uint32_t k = 0; k < GPUHIST_MAX_CHANNELS; ++k) {
        result->channel_index[k] = k < plan->active ? plan->channel_index[k] : 0;
        if (!result->accumulate) /* accumulating: the finish adds into the tallies */
            result->underflow[k] = result->overflow[k] = result->nan[k] = result->total[k] = 0;
    }
    result->lower = gpuhist_reported_edge(&plan->map, plan->edges, 0);
    result->upper = gpuhist_reported_edge(&plan->map, plan->edges, plan->bins);
    result->last_edge_inclusive = plan->map.last_inclusive;
    result->backend = ctx->backend;
    result->strategy = s->name;
}

gpuhist_status gpuhist_check_sums(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_result *result)
{
    if (plan->weights && !result->sums)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.sums: NULL (a weighted histogram returns its sums there)");
    if (!plan->weights && (result->sums || result->sums_squared || result->weight_state))
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.%s: given without weights (samples.weights is NULL)",
                            result->sums           ? "sums"
                            : result->sums_squared ? "sums_squared"
                                                   : "weight_state");
    if (plan->weights && result->accumulate && !result->weight_state)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "result.weight_state: NULL with result.accumulate (weighted sums "
                            "accumulate exactly in the state: give one, zeroed before the first "
                            "call)");
    return GPUHIST_OK;
}

void gpuhist_result_edges(const gpuhist_plan *plan, gpuhist_result *result)
{
    if (result->edges)
        for (uint32_t i = 0; i <= plan->bins; ++i)
            result->edges[i] = gpuhist_reported_edge(&plan->map, plan->edges, i);
}

/* ---- the call -------------------------------------------------------------------------------------- */

/* gpuhist_histogram() once the context is held by this call (see the end of the file). */
static gpuhist_status histogram_held(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                     const gpuhist_bin_spec *spec, gpuhist_result *result)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    ctx->error[0] = '\0';
    if (!samples)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "samples: NULL");
    if (!spec)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "bins: NULL specification");
    if (!result)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "result: NULL");
    if (!result->counts)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "result.counts: NULL");
    if (ctx->ops->requests) /* several devices */
        return ctx->ops->requests->histogram(ctx, samples, spec, result);
    double t0 = gpuhist_now();

    gpuhist_plan plan;
    const gpuhist_strategy *s;
    gpuhist_status st = gpuhist_prepare(ctx, samples, spec, result->counts_location, 0, &plan, &s);
    if (st != GPUHIST_OK)
        return st;
    if ((st = gpuhist_check_sums(ctx, &plan, result)) != GPUHIST_OK)
        return st;
    plan.want_squares = result->sums_squared != NULL;
    gpuhist_result_describe(ctx, &plan, s, result);
    st = ctx->ops->execute(ctx, &plan, s, result);
    if (st != GPUHIST_OK)
        return st;
    gpuhist_result_edges(&plan, result);
    result->seconds = gpuhist_now() - t0;
    return GPUHIST_OK;
}

/* A context is used by one thread at a time. A call that finds it held by another call fails
 * at once with BUSY and touches nothing of the context: its last error, scratch buffers and
 * device state belong to the call in progress. */
gpuhist_status gpuhist_histogram(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                 const gpuhist_bin_spec *spec, gpuhist_result *result)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    gpuhist_status st = histogram_held(ctx, samples, spec, result);
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    return st;
}

