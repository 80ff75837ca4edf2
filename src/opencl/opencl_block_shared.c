/*
 * opencl_block_shared.c - opencl-block-shared: privatized, vectorized local-memory histograms.
 *
 * Mechanism (kernels/block_shared.cl): R replicas (power of two <= 8, as many as fit the local
 * budget; 1 on CPU devices, where a work-group runs on one core and replicas only cost) of the
 * active*(bins+3) histogram per work-group, work-item i updating replica i % R; 16-byte vector
 * loads, grid stride (many samples per work-item); 8-bit samples mapped through a 256-entry
 * local slot table; replicas summed and merged with one global atomic per non-zero counter.
 * Work-group size from the kernel (CL_KERNEL_WORK_GROUP_SIZE rounded to the preferred multiple,
 * at most 256), GH_BS_GROUPS_PER_CU work-groups per compute unit.
 * Why fast: few, wide loads; contention spread over replicas; merge cost independent of input.
 * When slow: big histograms (R = 1, few resident work-groups), heavy skew within a replica.
 * Hard limits: active*(bins+3)*4 bytes must fit the device's local memory (less 2 KiB); the
 * supports check refuses bigger histograms (opencl-local-atomic takes them).
 * Data dependence: mild (replicas absorb most same-bin contention).
 * Seed: 004 (local then global atomics), privatization as in 001 §V.B / 002.
 */
#include "opencl_internal.h"

/* Per-work-group local memory for replicas: more replicas cut contention, but each KiB taken
 * lowers the number of resident work-groups; 32 KiB keeps at least 2 per NVIDIA SM (48 KiB
 * per-group limit in OpenCL). */
#define GH_BS_REPLICA_BUDGET (32u << 10)
#define GH_BS_MAX_REPLICAS 8u
#define GH_BS_GROUPS_PER_CU_GPU 8
#define GH_BS_GROUPS_PER_CU_CPU 2

static int gh_bs_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    if (!ctx || ctx->backend != GPUHIST_BACKEND_OPENCL || !ctx->backend_state)
        return 0;
    return (uint64_t)plan->active * plan->slots * sizeof(cl_uint) <=
           gpuhist_opencl_local_budget(ctx);
}

/* Samples per 16-byte vector load (kernels/common.clh's GH_VN). */
static size_t gh_bs_lanes(size_t sample_size)
{
    return 16 / sample_size;
}

static const gpuhist_opencl_program gh_bs_program = {"block_shared.cl", {"gh_block_shared", NULL},
                                                     NULL};

static gpuhist_status gh_bs_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job_,
                                void *out)
{
    const gpuhist_opencl_job *job = job_;
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    cl_mem counters = (cl_mem)out;
    cl_uint total = plan->active * plan->slots;
    size_t budget = gpuhist_opencl_local_budget(ctx);
    if ((size_t)total * sizeof(cl_uint) > budget)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl-block-shared: %u counters do not fit in %zu bytes of local "
                            "memory (use opencl-local-atomic)",
                            total, budget);
    int gpu = (st->type & CL_DEVICE_TYPE_GPU) != 0;
    cl_uint replicas = 1;
    if (gpu) {
        size_t rb = budget < GH_BS_REPLICA_BUDGET ? budget : GH_BS_REPLICA_BUDGET;
        while (replicas < GH_BS_MAX_REPLICAS &&
               (size_t)total * sizeof(cl_uint) * replicas * 2 <= rb)
            replicas *= 2;
    }

    cl_kernel k;
    gpuhist_status s = gpuhist_opencl_kernel(ctx, &gh_bs_program, plan->dtype, 0, &k);
    if (s != GPUHIST_OK)
        return s;
    cl_uint n = job->elements, i = 0;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &job->data);
    GH_OCL_ARG(ctx, k, i++, sizeof n, &n);
    if ((s = gpuhist_opencl_common_args(ctx, k, i, plan, job, &i)) != GPUHIST_OK)
        return s;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &counters);
    GH_OCL_ARG(ctx, k, i++, (size_t)total * replicas * sizeof(cl_uint), NULL);
    GH_OCL_ARG(ctx, k, i++, sizeof total, &total);
    GH_OCL_ARG(ctx, k, i++, sizeof replicas, &replicas);

    size_t wg = gpuhist_opencl_group_size(ctx, k, 256, 0);
    size_t lanes = gh_bs_lanes(plan->sample_size);
    size_t groups = st->compute_units * (gpu ? GH_BS_GROUPS_PER_CU_GPU : GH_BS_GROUPS_PER_CU_CPU);
    size_t needed = ((size_t)n / lanes + wg - 1) / wg; /* one vector per work-item at least */
    if (groups > needed)
        groups = needed;
    /* The last n % lanes samples are taken one per work-item: the grid needs >= lanes items. */
    size_t min_groups = (lanes + wg - 1) / wg;
    if (groups < min_groups)
        groups = min_groups;
    return gpuhist_opencl_launch(ctx, k, groups * wg, wg, "gh_block_shared");
}

const gpuhist_strategy gpuhist_strategy_opencl_block_shared = {
    "opencl-block-shared",
    GPUHIST_BACKEND_OPENCL,
    "004 (local then global atomics); privatization of 001 §V.B, 002",
    "all dtypes, all bin kinds, channels, ROI; channels x (bins + 3) counters must fit in local "
    "memory (about 11700 bins on a 48 KiB device)",
    "replicated local-memory histograms, 16-byte vector loads, 8-bit slot table, global-atomic "
    "merge",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    gh_bs_supports,
    gh_bs_run,
};
