/*
 * opencl_weighted.c - opencl-weighted-local and opencl-weighted-global: weighted histograms on
 * OpenCL, counts and exact sums of the weights and of their squares, the CPU backend's bits.
 *
 * Mechanism (kernels/weighted.cl, with src/core/exact_sum.h): the backend hands each job its
 * weights (job->weights) and the exact accumulator (plan->weight_acc, a cl_mem of int64 records,
 * zeroed per call and rounded once on the host by gpuhist_finish_sums). Every addition into it
 * is an integer addition, so no order, work-group count, chunking or device changes a bit.
 *   opencl-weighted-local: per work-group counts, flags and the sums as 32-bit pieces of 12-13
 *   bits in local memory (32-bit local atomics: OpenCL 1.2 core), flushed into the accumulator
 *   every 2^17 pixels per work-group (each piece as two 64-bit additions). Squares in local
 *   memory too when they fit, else straight to the global records.
 *   opencl-weighted-global: each weight's 2-3 digits (and its square's) straight into the
 *   records with 64-bit global atomics; any bin count.
 * 64-bit global additions: atom_add with cl_khr_int64_base_atomics, else two 32-bit atomic_adds
 * with the low word's carry (the same final value); GPUHIST_OPENCL_COUNTERS32=1 takes the second
 * path on any device. A little-endian device is required (the 32-bit halves of a limb, and the
 * flags word's low half); the strategies refuse others. After each launch the records are
 * normalised (one work-item per record), so no limb takes 2^31 deposits in between.
 *
 * Limits: f32 or f64 weights (unweighted plans, when forced: counts only); every dtype (f16 and
 * bf16 widened exactly), bin kind, channels, ROI (rows packed by the backend). Local: 4 * (2 + pieces)
 * bytes per counter (pieces: f32 weights 24, f64 162; + 47 / 162 with squares) in the local
 * budget: on a 48 KiB device about 450 counters for f32 weights, 70 for f64 (the local
 * variant refuses more; the global one takes them).
 * When slow: skewed data serialises on one counter's local atomics (no sub-group sums in
 * OpenCL 1.2); the global variant does 2-6 global atomics per sample (emulated: twice that).
 * Seed: 004 (local then global atomics), with the exact integer digits of exact_sum.h.
 */
#include "opencl_internal.h"

#define GH_W_GROUPS_PER_CU_GPU 4
#define GH_W_GROUPS_PER_CU_CPU 2
/* Pixels per launch of the global kernel: at most 2 deposits per pixel into a limb (a square's
 * hi and lo) keep it below 2^31 deposits between normalisations. */
#define GH_WG_LAUNCH_PIXELS (1u << 28)

static const gpuhist_opencl_program gh_w_program = {
    "weighted.cl",
    {"gh_weighted_local", "gh_weighted_global", "gh_weighted_normalize"},
    "exact_sum.h"};

/* Pieces per counter of the local windows (kernels/weighted.cl). */
static uint32_t gh_w_sum_pieces(const gpuhist_plan *plan)
{
    return plan->weight_dtype == GPUHIST_F32 ? 24u : 162u;
}
static uint32_t gh_w_square_pieces(const gpuhist_plan *plan)
{
    return plan->weight_dtype == GPUHIST_F32 ? 47u : 162u;
}

/* Squares: none (0), in local memory (1), straight to the global records (2); the local bytes
 * the plan needs, 0 when its sums do not fit the local budget. */
static size_t gh_w_local_bytes(const gpuhist_ctx *ctx, const gpuhist_plan *plan, cl_uint *sq)
{
    const uint64_t N = (uint64_t)plan->active * plan->slots;
    const size_t budget = gpuhist_opencl_local_budget(ctx);
    uint64_t bytes = plan->weights ? N * 4u * (2u + gh_w_sum_pieces(plan)) : N * 4u;
    *sq = plan->weights && plan->want_squares ? 1u : 0u;
    if (*sq == 1u && bytes + N * 4u * gh_w_square_pieces(plan) <= budget)
        return (size_t)(bytes + N * 4u * gh_w_square_pieces(plan));
    if (*sq == 1u)
        *sq = 2u;
    return bytes <= budget ? (size_t)bytes : 0;
}

static int gh_w_usable(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    if (!ctx || ctx->backend != GPUHIST_BACKEND_OPENCL || !ctx->backend_state)
        return 0;
    return !plan->weights || (gpuhist_opencl_state_of(ctx)->little_endian &&
                              (plan->weight_dtype == GPUHIST_F32 ||
                               plan->weight_dtype == GPUHIST_F64));
}

static int gh_wl_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    cl_uint sq;
    return gh_w_usable(ctx, plan) && gh_w_local_bytes(ctx, plan, &sq) != 0;
}

static int gh_wg_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    return gh_w_usable(ctx, plan);
}

/* Normalise every record of the accumulator (sums, then squares). */
static gpuhist_status gh_w_normalize(gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    if (!plan->weights)
        return GPUHIST_OK;
    cl_kernel k;
    gpuhist_status s = gpuhist_opencl_kernel(ctx, &gh_w_program, plan->dtype, 2, &k);
    if (s != GPUHIST_OK)
        return s;
    cl_mem acc = (cl_mem)plan->weight_acc;
    const cl_uint records = plan->active * plan->slots;
    const size_t wg = gpuhist_opencl_group_size(ctx, k, 64, 0);
    const size_t global = ((size_t)records + wg - 1) / wg * wg;
    for (int part = 0; part < (plan->want_squares ? 2 : 1); ++part) {
        const cl_ulong offset = part ? (cl_ulong)records * GPUHIST_SUM_RECORD(plan) : 0;
        const cl_uint words = part ? (cl_uint)GPUHIST_SQUARE_RECORD
                                   : (cl_uint)GPUHIST_SUM_RECORD(plan);
        GH_OCL_ARG(ctx, k, 0, sizeof(cl_mem), &acc);
        GH_OCL_ARG(ctx, k, 1, sizeof offset, &offset);
        GH_OCL_ARG(ctx, k, 2, sizeof records, &records);
        GH_OCL_ARG(ctx, k, 3, sizeof words, &words);
        s = gpuhist_opencl_launch(ctx, k, global, wg, "gh_weighted_normalize");
        if (s != GPUHIST_OK)
            return s;
    }
    return GPUHIST_OK;
}

/* Work-groups for `items` work-items of `wg`: a few per compute unit, no more than needed. */
static size_t gh_w_groups(gpuhist_ctx *ctx, uint64_t items, size_t wg)
{
    const gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    size_t groups = st->compute_units *
                    ((st->type & CL_DEVICE_TYPE_GPU) ? GH_W_GROUPS_PER_CU_GPU
                                                     : GH_W_GROUPS_PER_CU_CPU);
    const uint64_t needed = (items + wg - 1) / wg;
    if (groups > needed)
        groups = (size_t)needed;
    return groups ? groups : 1;
}

static gpuhist_status gh_w_check(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                 const gpuhist_opencl_job *job, const char *name)
{
    if (plan->weights && (!job->weights || !plan->weight_acc))
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "%s: no device weights or accumulator (internal)", name);
    return GPUHIST_OK;
}

static gpuhist_status gh_wl_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job_,
                                void *out)
{
    const gpuhist_opencl_job *job = job_;
    gpuhist_status s = gh_w_check(ctx, plan, job, "opencl-weighted-local");
    if (s != GPUHIST_OK || job->pixels == 0)
        return s;
    cl_uint sq;
    const size_t lbytes = gh_w_local_bytes(ctx, plan, &sq);
    if (!lbytes)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl-weighted-local: %u bins x %u channel(s)%s do not fit in %zu "
                            "bytes of local memory (opencl-weighted-global takes them)",
                            plan->bins, plan->active,
                            !plan->weights                       ? ""
                            : plan->weight_dtype == GPUHIST_F32 ? " of f32 weight sums"
                                                                : " of f64 weight sums",
                            gpuhist_opencl_local_budget(ctx));
    cl_kernel k;
    if ((s = gpuhist_opencl_kernel(ctx, &gh_w_program, plan->dtype, 0, &k)) != GPUHIST_OK)
        return s;
    /* unweighted (counts only): any valid buffers stand for the weights and the records */
    cl_mem counters = (cl_mem)out;
    cl_mem acc = plan->weights ? (cl_mem)plan->weight_acc : counters;
    cl_mem weights = plan->weights ? job->weights : job->data;
    const cl_uint pixels = job->pixels, N = plan->active * plan->slots;
    const cl_uint wk = !plan->weights ? 0u : plan->weight_dtype == GPUHIST_F32 ? 1u : 2u;
    const cl_uint sum_words = (cl_uint)GPUHIST_SUM_RECORD(plan);
    const cl_ulong sq_offset = (cl_ulong)N * sum_words;
    cl_uint i = 0;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &job->data);
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &weights);
    GH_OCL_ARG(ctx, k, i++, sizeof pixels, &pixels);
    if ((s = gpuhist_opencl_common_args(ctx, k, i, plan, job, &i)) != GPUHIST_OK)
        return s;
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &counters);
    GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &acc);
    GH_OCL_ARG(ctx, k, i++, sizeof sq_offset, &sq_offset);
    GH_OCL_ARG(ctx, k, i++, lbytes, NULL);
    GH_OCL_ARG(ctx, k, i++, sizeof N, &N);
    GH_OCL_ARG(ctx, k, i++, sizeof wk, &wk);
    GH_OCL_ARG(ctx, k, i++, sizeof sq, &sq);
    GH_OCL_ARG(ctx, k, i++, sizeof sum_words, &sum_words);
    /* a power of two, so that a work-group's share of a round (2^17 pixels) is whole groups */
    const size_t wg = gpuhist_opencl_group_size(ctx, k, 256, 1);
    const size_t groups = gh_w_groups(ctx, pixels, wg);
    if ((s = gpuhist_opencl_launch(ctx, k, groups * wg, wg, "gh_weighted_local")) != GPUHIST_OK)
        return s;
    /* Deposits per limb in this launch: at most 6 per flushed round (the pieces overlapping
     * it) per work-group, rounds = pixels / (groups * 2^17) + 1; squares straight to the global
     * records (sq 2): at most 2 per pixel, and a job has at most 2^28 pixels (the backend's
     * 256 MiB chunks). Both far below 2^31. */
    return gh_w_normalize(ctx, plan);
}

static gpuhist_status gh_wg_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job_,
                                void *out)
{
    const gpuhist_opencl_job *job = job_;
    gpuhist_status s = gh_w_check(ctx, plan, job, "opencl-weighted-global");
    if (s != GPUHIST_OK || job->pixels == 0)
        return s;
    cl_kernel k;
    if ((s = gpuhist_opencl_kernel(ctx, &gh_w_program, plan->dtype, 1, &k)) != GPUHIST_OK)
        return s;
    cl_mem counters = (cl_mem)out;
    cl_mem acc = plan->weights ? (cl_mem)plan->weight_acc : counters;
    cl_mem weights = plan->weights ? job->weights : job->data;
    const cl_uint wk = !plan->weights ? 0u : plan->weight_dtype == GPUHIST_F32 ? 1u : 2u;
    const cl_uint squares = plan->weights && plan->want_squares ? 1u : 0u;
    const cl_uint sum_words = (cl_uint)GPUHIST_SUM_RECORD(plan);
    const cl_ulong sq_offset = (cl_ulong)plan->active * plan->slots * sum_words;
    const size_t wg = gpuhist_opencl_group_size(ctx, k, 256, 0);
    for (cl_uint first = 0; first < job->pixels;) {
        const cl_uint count = job->pixels - first < GH_WG_LAUNCH_PIXELS ? job->pixels - first
                                                                         : GH_WG_LAUNCH_PIXELS;
        cl_uint i = 0;
        GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &job->data);
        GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &weights);
        GH_OCL_ARG(ctx, k, i++, sizeof first, &first);
        GH_OCL_ARG(ctx, k, i++, sizeof count, &count);
        if ((s = gpuhist_opencl_common_args(ctx, k, i, plan, job, &i)) != GPUHIST_OK)
            return s;
        GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &counters);
        GH_OCL_ARG(ctx, k, i++, sizeof(cl_mem), &acc);
        GH_OCL_ARG(ctx, k, i++, sizeof sq_offset, &sq_offset);
        GH_OCL_ARG(ctx, k, i++, sizeof wk, &wk);
        GH_OCL_ARG(ctx, k, i++, sizeof squares, &squares);
        GH_OCL_ARG(ctx, k, i++, sizeof sum_words, &sum_words);
        const size_t groups = gh_w_groups(ctx, count, wg) * 4u; /* latency: more in flight */
        if ((s = gpuhist_opencl_launch(ctx, k, groups * wg, wg, "gh_weighted_global")) !=
            GPUHIST_OK)
            return s;
        if ((s = gh_w_normalize(ctx, plan)) != GPUHIST_OK)
            return s;
        first += count;
    }
    return GPUHIST_OK;
}

const gpuhist_strategy gpuhist_strategy_opencl_weighted_local = {
    "opencl-weighted-local",
    GPUHIST_BACKEND_OPENCL,
    "004 (local then global atomics), exact sums",
    "all dtypes, all bin kinds, channels, ROI; weights f32/f64 (counts only without); the "
    "records must fit local memory (about 450 counters for f32 weights, 70 for f64, on a 48 KiB "
    "device)",
    "per-work-group counts and exact weight pieces (32-bit local atomics) flushed to the exact "
    "accumulator",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI | GPUHIST_CAP_WEIGHTS,
    gh_wl_supports,
    gh_wl_run,
};

const gpuhist_strategy gpuhist_strategy_opencl_weighted_global = {
    "opencl-weighted-global",
    GPUHIST_BACKEND_OPENCL,
    "001 §V.A (global atomics), exact sums",
    "all dtypes, all bin kinds, any bins, channels, ROI; weights f32/f64 (counts only without)",
    "exact weight digits added straight into the global accumulator (64-bit atomics, or pairs "
    "of 32-bit ones)",
    GPUHIST_ALL_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI | GPUHIST_CAP_WEIGHTS,
    gh_wg_supports,
    gh_wg_run,
};
