/*
 * block_shared.cl - opencl-block-shared: a privatized, vectorized local-memory histogram.
 *
 * Mechanism: each work-group keeps R replicas (R a power of two <= 8, as many as fit the local
 * budget) of the active*slots histogram in local memory; work-item i updates replica i % R, so
 * neighbouring work-items hitting the same bin mostly hit different addresses. Work-items read
 * 16 bytes at a time (uchar16 ... double2: GH_VN samples per load, consecutive work-items on
 * consecutive vectors, coalesced) with a grid stride, so each handles many samples. 8-bit samples
 * are mapped through a 256-entry slot table built by the work-group in local memory (one binmap
 * call per value instead of one per sample). At the end each work-group sums its replicas and adds
 * each non-zero counter to the global histogram with one global atomic. The host picks the
 * work-group size from the kernel (CL_KERNEL_WORK_GROUP_SIZE, rounded to the preferred multiple)
 * and about 8 work-groups per compute unit.
 *
 * Why fast: one 16-byte load per GH_VN samples, local atomics spread over R replicas, and a merge
 * cost of R*slots local reads + slots global atomics per work-group, independent of the input.
 * When slow: large bin counts shrink R to 1 and occupancy falls with the local memory per
 * work-group; heavily skewed data still serialises within a replica.
 * Hard limits: active*slots*4 bytes must fit in the local budget (the host checks); local
 * counters are 32-bit, safe because a job has < 2^31 samples.
 * Seed: 004 (local atomics then global atomics), with the privatization of 001 §V.B / 002.
 */

__kernel void gh_block_shared(__global const gh_sample_t *data, uint n, GH_COMMON_PARAMS,
                              __global gh_count_t *counters, __local uint *lh, uint total,
                              uint replicas)
{
#if GH_IS_8BIT
    __local uint lut[256];
#endif
    gpuhist_binmap m = map;
    uint lid = get_local_id(0);
    uint lsize = get_local_size(0);
    for (uint i = lid; i < total * replicas; i += lsize)
        lh[i] = 0u;
#if GH_IS_8BIT
    for (uint v = lid; v < 256u; v += lsize)
        lut[v] = GH_SLOT(&m, edges, (gh_sample_t)v);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    __local uint *mine = lh + (lid & (replicas - 1u)) * total;
    uint gsize = (uint)get_global_size(0);
    uint nvec = n / GH_VN;
    for (uint v = (uint)get_global_id(0); v < nvec; v += gsize) {
        union {
            gh_vec_t v;
            gh_sample_t s[GH_VN];
        } u;
        u.v = GH_VLOAD(v, data);
        uint c = C == 1u ? 0u : (v * GH_VN) % C;
#pragma unroll
        for (uint j = 0; j < GH_VN; ++j) {
            int h = gh_hist_of(c, cs0, cs1, cs2, cs3);
            if (++c == C)
                c = 0u;
            if (h < 0)
                continue;
#if GH_IS_8BIT
            uint s = lut[(uchar)u.s[j]];
#else
            uint s = GH_SLOT(&m, edges, u.s[j]);
#endif
            atomic_inc(&mine[(uint)h * slots + s]);
        }
    }
    /* The last n % GH_VN samples, one per work-item. */
    uint tail = nvec * GH_VN + (uint)get_global_id(0);
    if (tail < n) {
        int h = gh_hist_of(C == 1u ? 0u : tail % C, cs0, cs1, cs2, cs3);
        if (h >= 0) {
#if GH_IS_8BIT
            uint s = lut[(uchar)data[tail]];
#else
            uint s = GH_SLOT(&m, edges, data[tail]);
#endif
            atomic_inc(&mine[(uint)h * slots + s]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint i = lid; i < total; i += lsize) {
        uint sum = 0u;
        for (uint r = 0; r < replicas; ++r)
            sum += lh[r * total + i];
        if (sum != 0u)
            GH_GLOBAL_ADD(&counters[i], sum);
    }
}
