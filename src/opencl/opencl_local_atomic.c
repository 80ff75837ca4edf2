/*
 * opencl_local_atomic.c - opencl-local-atomic: seed 004's atomic-based reduction, generalized.
 *
 * Mechanism (kernels/local_atomic.cl): one local-memory histogram of all active*(bins+3) counters
 * per work-group, local atomic_inc per sample (scalar loads, grid stride: many samples per
 * work-item), then one global atomic per non-zero counter per work-group. When the histogram does
 * not fit the local budget, one global atomic per sample instead (any bin count).
 * Why fast: cheap local atomics, merge cost independent of the input size.
 * When slow: skewed data (atomics on one counter serialise); histograms beyond local memory
 * (one global atomic per sample, collapsing on hot bins).
 * Hard limits: none beyond the backend's (< 2^32 counters); 32-bit local counters are safe since
 * a job has < 2^31 samples.
 * Data dependence: throughput falls with skew. Seed: 004 (atomic based reduction).
 */
#include "opencl_internal.h"

/* Work-groups per compute unit: enough to hide latency on GPUs; CPUs run a group per core. */
#define GH_LA_GROUPS_PER_CU_GPU 4
#define GH_LA_GROUPS_PER_CU_CPU 2

/* kernels/local_atomic.cl: counters in local memory (0), or in global memory (1) */
static const gpuhist_opencl_program gh_la_program = {"local_atomic.cl",
                                                     {"gh_local_atomic", "gh_global_atomic"}, NULL};

static gpuhist_status gh_la_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job_,
                                void *out)
{
    const gpuhist_opencl_job *job = job_;
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    cl_mem counters = (cl_mem)out;
    cl_uint total = plan->active * plan->slots;
    size_t lbytes = (size_t)total * sizeof(cl_uint);
    int local = lbytes <= gpuhist_opencl_local_budget(ctx);
    cl_kernel k;
    gpuhist_status s = gpuhist_opencl_kernel(ctx, &gh_la_program, plan->dtype, local ? 0 : 1, &k);
    if (s != GPUHIST_OK)
        return s;

    cl_uint n = job->elements, i = 0;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &job->data);
    GH_OCL_ARG(ctx, k, i++, sizeof n, &n);
    if ((s = gpuhist_opencl_common_args(ctx, k, i, plan, job, &i)) != GPUHIST_OK)
        return s;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &counters);
    if (local) {
        GH_OCL_ARG(ctx, k, i++, lbytes, NULL);
        GH_OCL_ARG(ctx, k, i++, sizeof total, &total);
    }

    size_t wg = gpuhist_opencl_group_size(ctx, k, 256, 0);
    size_t per_cu = (st->type & CL_DEVICE_TYPE_GPU) ? GH_LA_GROUPS_PER_CU_GPU
                                                    : GH_LA_GROUPS_PER_CU_CPU;
    size_t groups = st->compute_units * per_cu;
    size_t needed = (n + wg - 1) / wg;
    if (groups > needed)
        groups = needed;
    if (groups == 0)
        groups = 1;
    return gpuhist_opencl_launch(ctx, k, groups * wg, wg,
                                 local ? "gh_local_atomic" : "gh_global_atomic");
}

const gpuhist_strategy gpuhist_strategy_opencl_local_atomic = {
    "opencl-local-atomic",
    GPUHIST_BACKEND_OPENCL,
    "004 (atomic based reduction)",
    "all dtypes, all bin kinds, any bins (local memory when the histogram fits, else global "
    "atomics), channels, ROI",
    "local-memory atomic histogram per work-group, merged with global atomics",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    NULL,
    gh_la_run,
};
