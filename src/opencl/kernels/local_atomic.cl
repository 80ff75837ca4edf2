/*
 * local_atomic.cl - opencl-local-atomic: seed 004 ("Atomic based reduction"), generalized.
 *
 * Mechanism: each work-group zeroes a histogram of all active*slots counters in local memory,
 * its work-items walk the job with a grid stride (several samples each, scalar loads), map each
 * sample with binmap.h and atomic_inc the local counter; after a barrier the work-group adds its
 * non-zero counters to the global ones with one global atomic each. The seed's kernel handled one
 * sample per work-item, bins <= work-group size and computed the bin with a plain division (one
 * bin off at edges); here any number of groups, any number of samples per work-item, exact slots
 * and every slot (bins + under/overflow + NaN, per channel).
 * When the histogram does not fit in local memory (gh_global_atomic) every sample does one global
 * atomic instead: correct for any bin count.
 *
 * Why fast: local atomics are cheap and the global merge costs one atomic per non-zero counter
 * per work-group. When slow: skewed data (every work-item hits the same local counter, the
 * atomics serialise); very large bin counts (the global-atomic kernel: one global atomic per
 * sample, collapsing on hot bins).
 * Hard limits: local counters are 32-bit, safe because a job has < 2^31 samples; the local
 * variant needs active*slots*4 bytes of local memory.
 * Seed: 004 (atomic based reduction: atomic_inc on local sums, atomic_add into global sums).
 */

__kernel void gh_local_atomic(__global const gh_sample_t *data, uint n, GH_COMMON_PARAMS,
                              __global gh_count_t *counters, __local uint *lh, uint total)
{
    gpuhist_binmap m = map;
    uint lid = get_local_id(0);
    uint lsize = get_local_size(0);
    for (uint i = lid; i < total; i += lsize)
        lh[i] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

    uint stride = (uint)get_global_size(0);
    for (uint e = (uint)get_global_id(0); e < n; e += stride) {
        int h = gh_hist_of(C == 1u ? 0u : e % C, cs0, cs1, cs2, cs3);
        if (h < 0)
            continue;
        uint s = GH_SLOT(&m, edges, data[e]);
        atomic_inc(&lh[(uint)h * slots + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint i = lid; i < total; i += lsize) {
        uint v = lh[i];
        if (v != 0u)
            GH_GLOBAL_ADD(&counters[i], v);
    }
}

/* The histogram does not fit in local memory: one global atomic per sample. */
__kernel void gh_global_atomic(__global const gh_sample_t *data, uint n, GH_COMMON_PARAMS,
                               __global gh_count_t *counters)
{
    gpuhist_binmap m = map;
    uint stride = (uint)get_global_size(0);
    for (uint e = (uint)get_global_id(0); e < n; e += stride) {
        int h = gh_hist_of(C == 1u ? 0u : e % C, cs0, cs1, cs2, cs3);
        if (h < 0)
            continue;
        uint s = GH_SLOT(&m, edges, data[e]);
        GH_GLOBAL_ADD(&counters[(ulong)h * slots + s], 1u);
    }
}
