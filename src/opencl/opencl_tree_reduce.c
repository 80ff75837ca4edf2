/*
 * opencl_tree_reduce.c - opencl-tree-reduce: seed 004's hierarchical (binomial tree) reduction.
 *
 * Mechanism (kernels/tree_reduce.cl): atomic-free. Each pass counts kk consecutive counters
 * (counter = channel's histogram * (bins+3) + slot): every work-item counts into its own column of
 * a kk x wg local array, the work-group sums each row with a binomial tree (stride halving,
 * barrier per step) and writes kk partial sums; work-group (g, p) of a launch covers data share g
 * (of G) and counter batch p, so one launch runs many passes. gh_tree_sum then adds the G partial
 * sums of each counter into the global counters (one writer per counter).
 * kk: the seed runs one pass per interval (kk = 1; GPUHIST_OPENCL_TREE_K=1 reproduces that for
 * the seed's comparison); by default kk fills the local memory: kk = budget / (4 * wg), with small
 * work-groups (64 on GPUs, 16 on CPUs) because both the number of input reads and the reduction
 * work per pass grow with wg.
 * Why / when slow: the input is read and mapped ceil(active*(bins+3)/kk) times (kk = 184 on a
 * 48 KiB NVIDIA device: 256 bins = 2 reads, 65536 bins = 357 reads), and the trees cost
 * G * wg * active*(bins+3) additions in all: fast enough for hundreds of bins, slow for tens of
 * thousands. The auto policy never picks it.
 * Hard limits: work-group size a power of two; 32-bit partial sums (jobs < 2^31 samples).
 * Data dependence: none (no atomics, same work for any distribution).
 * Seed: 004 (hierarchical reduction).
 */
#include "opencl_internal.h"

#include <stdlib.h>

#define GH_TREE_MAX_GROUPS (1u << 18)               /* work-groups per launch */
#define GH_TREE_MAX_PARTIALS ((size_t)64 << 20)     /* bytes of partial sums per launch */
#define GH_TREE_DATA_GROUPS_PER_CU 4
#define GH_TREE_WG_GPU 64
#define GH_TREE_WG_CPU 16

/* kernels/tree_reduce.cl: per-group counts (0), then their sums (1) */
static const gpuhist_opencl_program gh_tr_program = {"tree_reduce.cl",
                                                     {"gh_tree_count", "gh_tree_sum"}, NULL};

static gpuhist_status gh_tr_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job_,
                                void *out)
{
    const gpuhist_opencl_job *job = job_;
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    cl_mem counters = (cl_mem)out;
    cl_uint total = plan->active * plan->slots;
    cl_kernel kc, ks;
    gpuhist_status s;
    if ((s = gpuhist_opencl_kernel(ctx, &gh_tr_program, plan->dtype, 0, &kc)) != GPUHIST_OK ||
        (s = gpuhist_opencl_kernel(ctx, &gh_tr_program, plan->dtype, 1, &ks)) != GPUHIST_OK)
        return s;

    size_t budget = gpuhist_opencl_local_budget(ctx);
    size_t want = (st->type & CL_DEVICE_TYPE_GPU) ? GH_TREE_WG_GPU : GH_TREE_WG_CPU;
    size_t wg = gpuhist_opencl_group_size(ctx, kc, want, 1);
    cl_uint kk = (cl_uint)(budget / (wg * sizeof(cl_uint)));
    const char *env = getenv("GPUHIST_OPENCL_TREE_K");
    if (env && atoi(env) > 0 && (cl_uint)atoi(env) < kk)
        kk = (cl_uint)atoi(env);
    if (kk > total)
        kk = total;
    if (kk == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl-tree-reduce: %zu bytes of local memory cannot hold one row "
                            "of %zu work-items",
                            budget, wg);
    cl_uint n = job->elements;
    cl_uint G = (cl_uint)(st->compute_units * GH_TREE_DATA_GROUPS_PER_CU);
    cl_uint needed = (cl_uint)((n + wg - 1) / wg);
    if (G > needed)
        G = needed;
    if (G == 0)
        G = 1;
    cl_uint passes = (total + kk - 1) / kk;
    size_t per_launch = GH_TREE_MAX_GROUPS / G;
    size_t by_bytes = GH_TREE_MAX_PARTIALS / ((size_t)G * kk * sizeof(cl_uint));
    if (per_launch > by_bytes)
        per_launch = by_bytes;
    if (per_launch == 0)
        per_launch = 1;
    if (per_launch > passes)
        per_launch = passes;
    cl_mem partials;
    if ((s = gpuhist_opencl_scratch(ctx, per_launch * G * kk * sizeof(cl_uint), &partials)) !=
        GPUHIST_OK)
        return s;

    cl_uint i = 0;
    GH_OCL_ARG(ctx, kc, i++, sizeof(cl_mem), &job->data);
    GH_OCL_ARG(ctx, kc, i++, sizeof n, &n);
    if ((s = gpuhist_opencl_common_args(ctx, kc, i, plan, job, &i)) != GPUHIST_OK)
        return s;
    cl_uint arg_base = i;
    GH_OCL_ARG(ctx, kc, arg_base + 1, sizeof G, &G);
    GH_OCL_ARG(ctx, kc, arg_base + 2, sizeof kk, &kk);
    GH_OCL_ARG(ctx, kc, arg_base + 3, sizeof(cl_mem), &partials);
    GH_OCL_ARG(ctx, kc, arg_base + 4, (size_t)kk * wg * sizeof(cl_uint), NULL);
    GH_OCL_ARG(ctx, ks, 0, sizeof(cl_mem), &partials);
    GH_OCL_ARG(ctx, ks, 1, sizeof G, &G);
    GH_OCL_ARG(ctx, ks, 2, sizeof kk, &kk);
    GH_OCL_ARG(ctx, ks, 5, sizeof(cl_mem), &counters);

    for (cl_uint p0 = 0; p0 < passes; p0 += (cl_uint)per_launch) {
        cl_uint np = passes - p0 < per_launch ? passes - p0 : (cl_uint)per_launch;
        cl_uint t_base = p0 * kk;
        cl_uint count = total - t_base;
        if ((uint64_t)np * kk < count)
            count = np * kk;
        GH_OCL_ARG(ctx, kc, arg_base, sizeof t_base, &t_base);
        if ((s = gpuhist_opencl_launch(ctx, kc, (size_t)np * G * wg, wg, "gh_tree_count")) !=
            GPUHIST_OK)
            return s;
        GH_OCL_ARG(ctx, ks, 3, sizeof t_base, &t_base);
        GH_OCL_ARG(ctx, ks, 4, sizeof count, &count);
        if ((s = gpuhist_opencl_launch(ctx, ks, count, 0, "gh_tree_sum")) != GPUHIST_OK)
            return s;
    }
    return GPUHIST_OK;
}

const gpuhist_strategy gpuhist_strategy_opencl_tree_reduce = {
    "opencl-tree-reduce",
    GPUHIST_BACKEND_OPENCL,
    "004 (hierarchical reduction)",
    "all dtypes, all bin kinds, any bins, channels, ROI; one pass over the input per batch of "
    "intervals that fits local memory: slow for tens of thousands of bins",
    "atomic-free binomial-tree reduction in local memory, one pass per batch of intervals",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    NULL,
    gh_tr_run,
};
