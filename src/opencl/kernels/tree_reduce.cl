/*
 * tree_reduce.cl - opencl-tree-reduce: seed 004's hierarchical (binomial tree) reduction.
 *
 * Mechanism: the seed counts one interval per pass: every work-item writes 1 or 0 ("is my sample
 * in [a, b)") to local memory and the work-group sums that array with a binomial tree (the stride
 * halves each step, barrier between steps); the partial sum of each work-group is reduced
 * afterwards. Here a pass handles kk consecutive counters (counter = hist * slots + slot, so
 * under/overflow/NaN and every channel are intervals like the bins; kk = 1 is the seed's one pass
 * per interval, the host makes kk as large as local memory allows): each work-item owns one
 * column of a kk x wg local array and counts into it without atomics (nobody else writes that
 * column), walking G work-groups' share of the job with a grid stride; then kk binomial-tree
 * reductions run side by side. Work-group (g, p) of the launch covers data share g and counter
 * batch p, so one launch runs many passes; gh_tree_sum then adds the G partial sums of each
 * counter into the global counters (one writer per counter: no atomics anywhere).
 *
 * Why / when slow: it reads and maps the whole job once per kk counters, i.e.
 * ceil(active*(bins+3)/kk) times, and each work-group reduces kk*wg cells per pass: fine for
 * hundreds of bins, slow for tens of thousands (65536 bins with kk = 184 on a 48 KiB device:
 * 357 reads of the input). It exists for seed 004's comparison, not for speed.
 * Hard limits: the work-group size is a power of two; partial sums are 32-bit (a job has < 2^31
 * samples).
 * Seed: 004 (hierarchical reduction: binomial tree in local memory, one pass per interval, sums
 * per work-group reduced afterwards).
 */

/* kk = counters per pass (the host sizes it to the local memory: kk * wg * 4 bytes). */
__kernel void gh_tree_count(__global const gh_sample_t *data, uint n, GH_COMMON_PARAMS,
                            uint t_base, uint G, uint kk, __global uint *partials,
                            __local uint *cols)
{
    gpuhist_binmap m = map;
    uint lid = get_local_id(0);
    uint wg = get_local_size(0);
    uint grp = get_group_id(0);
    uint g = grp % G;
    uint p = grp / G;
    uint t0 = t_base + p * kk;

    for (uint k = 0; k < kk; ++k)
        cols[k * wg + lid] = 0u;

    uint stride = G * wg;
    for (uint e = g * wg + lid; e < n; e += stride) {
        int h = gh_hist_of(C == 1u ? 0u : e % C, cs0, cs1, cs2, cs3);
        if (h < 0)
            continue;
        uint t = (uint)h * slots + GH_SLOT(&m, edges, data[e]);
        uint k = t - t0; /* wraps to a huge value when t < t0 */
        if (k < kk)
            cols[k * wg + lid] += 1u;
    }

    for (uint span = wg / 2u; span > 0u; span >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < span)
            for (uint k = 0; k < kk; ++k)
                cols[k * wg + lid] += cols[k * wg + lid + span];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < kk; k += wg)
        partials[((ulong)p * G + g) * kk + k] = cols[k * wg];
}

/* Counter t_base + j (j < count) += the sum of its G partial sums. */
__kernel void gh_tree_sum(__global const uint *partials, uint G, uint kk, uint t_base, uint count,
                          __global gh_count_t *counters)
{
    uint j = (uint)get_global_id(0);
    if (j >= count)
        return;
    uint p = j / kk;
    uint k = j % kk;
    ulong sum = 0;
    for (uint g = 0; g < G; ++g)
        sum += partials[((ulong)p * G + g) * kk + k];
    counters[t_base + j] += (gh_count_t)sum;
}
