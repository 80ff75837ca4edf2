/*
 * cpu_backend.c - the CPU backend: host memory only; runs a strategy once over the whole plan,
 * folds raw-value counts when the strategy counts values, applies the outlier policy.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void read_cpu_model(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ')
                    colon++;
                snprintf(buf, size, "%s", colon);
                buf[strcspn(buf, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

static gpuhist_status cpu_open(gpuhist_ctx *ctx, int device)
{
    if (device != 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE,
                            "cpu: device %d does not exist (the CPU backend has device 0 only)",
                            device);
    char model[96];
    read_cpu_model(model, sizeof model);
    snprintf(ctx->device_name, sizeof ctx->device_name, "CPU%s%s (%d threads)",
             model[0] ? ": " : "", model, gpuhist_cpu_threads(ctx));
    return GPUHIST_OK;
}

static void cpu_close(gpuhist_ctx *ctx)
{
    (void)ctx;
}

static gpuhist_status cpu_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo,
                                 double *hi, int *found)
{
    (void)ctx;
    *found = 0;
    int is_float = plan->dtype == GPUHIST_F32 || plan->dtype == GPUHIST_F64;
    double fmin = INFINITY, fmax = -INFINITY;
    int64_t imin = INT64_MAX, imax = INT64_MIN;
    uint64_t umin = UINT64_MAX, umax = 0;
    for (uint64_t r = 0; r < plan->rows; ++r) {
        for (uint64_t px = 0; px < plan->row_length; ++px) {
            const unsigned char *pixel = gpuhist_pixel_ptr(plan, r, px);
            for (uint32_t k = 0; k < plan->active; ++k) {
                const unsigned char *p = pixel + plan->channel_index[k] * plan->sample_size;
                gpuhist_sample_value v = gpuhist_read_sample(plan->dtype, p);
                if (v.is_float) {
                    if (!isfinite(v.f))
                        continue;
                    fmin = v.f < fmin ? v.f : fmin;
                    fmax = v.f > fmax ? v.f : fmax;
                } else if (v.is_unsigned64) {
                    umin = v.u < umin ? v.u : umin;
                    umax = v.u > umax ? v.u : umax;
                } else {
                    imin = v.i < imin ? v.i : imin;
                    imax = v.i > imax ? v.i : imax;
                }
                *found = 1;
            }
        }
    }
    if (!*found)
        return GPUHIST_OK;
    if (is_float) {
        *lo = fmin;
        *hi = fmax;
    } else if (plan->dtype == GPUHIST_U64) {
        *lo = gpuhist_u64_to_double_down(umin);
        *hi = gpuhist_u64_to_double_up(umax);
    } else {
        *lo = gpuhist_i64_to_double_down(imin);
        *hi = gpuhist_i64_to_double_up(imax);
    }
    return GPUHIST_OK;
}

static const gpuhist_strategy *cpu_choose(gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    /* Threads pay off once each thread has a few hundred thousand samples to amortise the
     * fork/join and the merge of its private histogram (measured: docs/PERFORMANCE.md, CPU). */
    uint64_t samples = plan->pixels * plan->active;
    int threads = gpuhist_cpu_threads(ctx);
    const char *order[3] = {"cpu-serial", "cpu-reference", NULL};
    if (threads > 1 && samples >= (uint64_t)threads * 262144u && plan->bins <= (1u << 22)) {
        order[0] = "cpu-threads";
        order[1] = "cpu-serial";
        order[2] = "cpu-reference";
    }
    for (int i = 0; i < 3 && order[i]; ++i) {
        const gpuhist_strategy *s = gpuhist_registry_find(order[i]);
        if (s && gpuhist_strategy_accepts(ctx, s, plan))
            return s;
    }
    return gpuhist_registry_find("cpu-reference");
}

static gpuhist_status cpu_execute(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_strategy *s, gpuhist_result *result)
{
    size_t nslots = (size_t)plan->active * plan->slots;
    uint64_t *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "cpu: cannot allocate %zu bin counters", nslots);
    gpuhist_status st;
    if (s->caps & GPUHIST_CAP_VALUES) {
        size_t nvalues = (size_t)plan->active * gpuhist_small_value_count(plan->dtype);
        uint64_t *values = calloc(nvalues, sizeof *values);
        if (!values) {
            free(slots);
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "cpu: cannot allocate %zu value counters", nvalues);
        }
        st = s->run(ctx, plan, plan, values);
        if (st == GPUHIST_OK)
            gpuhist_fold_values(plan, values, slots);
        free(values);
    } else {
        st = s->run(ctx, plan, plan, slots);
    }
    if (st == GPUHIST_OK)
        gpuhist_finish_slots(plan, slots, result->counts, result);
    free(slots);
    return st;
}

static int cpu_is_device_pointer(gpuhist_ctx *ctx, const void *data)
{
    (void)ctx;
    (void)data;
    return 0;
}

const gpuhist_backend_ops gpuhist_cpu_backend = {
    .id = GPUHIST_BACKEND_CPU,
    .open = cpu_open,
    .close = cpu_close,
    .minmax = cpu_minmax,
    .choose = cpu_choose,
    .execute = cpu_execute,
    .is_device_pointer = cpu_is_device_pointer,
};
