/*
 * nd_bytes32.cu - N-D histograms of interleaved u8 points (RGB pixels and the like) counted in
 * one pass with 32-bit shared counters (nd_packed16.cu's nd_count path takes them first when
 * the counters fit).
 *
 * Mechanism: one block per SM of P16_THREADS threads keeps a 32-bit counter per encoded joint
 * slot (ndmap.h: 0 nan, 1..total the bins, total + 1 out) and, per axis, a table of each byte
 * value's share of the joint slot (nd_device.cuh's nd_u8_share_table: the same slot function as
 * every N-D path), so a point's slot is the sum of DIMS lookups. When every table is a shift
 * (power-of-two even bins over [0, 256): the block checks each entry) the slot is computed with
 * shifts and multiplies instead, and shared memory serves only the adds (the lookups' bank
 * conflicts bound the table path: H100, RGB 32^3, about 0.51 of the read ceiling). A thread
 * reads G points as L 16-byte words (2-D: 8 points in 1, 3-D: 16 in 3, 4-D: 4 in 1), the next
 * group loaded before this one is counted. Consecutive points of a thread that share a slot are
 * added as one run (one shared add when the slot changes: a flat image region costs one add per
 * run, not one per pixel, and a warp does not pile onto one address); other points add 1 each.
 * Adds are plain red.shared (no carry test: a block counts fewer than 2^31 points per launch).
 * At the end each non-zero counter goes to the 64-bit global counters with one atomic.
 * Limits: u8 points of 2 to 4 coordinates, interleaved, the chunk 16-byte aligned; the counters
 * and tables within the device's shared memory (about 56k joint slots on H100 / H200); the points
 * after the last whole group go to the point-by-point kernel (nd_packed16.cu).
 * Against nd_packed16's engine on u8 RGB 32^3 (H100): no 16-bit halves, carry tests or hot-key
 * votes per point; the packed engine was bound by instruction issue there.
 */
#include "nd_device.cuh"

namespace {

/* Points of DIMS bytes per group of whole 16-byte words. */
template <uint32_t DIMS> struct nb32_shape {
    static constexpr uint32_t L = DIMS == 3u ? 3u : 1u; /* 16-byte words per group */
    static constexpr uint32_t G = 16u * L / DIMS;       /* points per group */
};

/* Launches count at most this many groups per block: < 2^31 points, so no 32-bit counter can
 * wrap. */
#define ND_B32_GROUPS_PER_BLOCK (1ull << 26)

template <uint32_t DIMS>
__global__ void __launch_bounds__(P16_THREADS, 1)
    k_nd_bytes32(const __grid_constant__ gpuhist_nd_map m, const uint4 *__restrict__ base,
                 const uint64_t ngroups, unsigned long long *__restrict__ out,
                 const uint32_t nkeys)
{
    typedef nb32_shape<DIMS> SH;
    extern __shared__ __align__(16) uint32_t nb32_w[];
    uint32_t *lut = nb32_w + ((nkeys + 3u) & ~3u);
    const uint32_t tid = threadIdx.x;
    for (uint32_t i = tid; i < nkeys; i += P16_THREADS)
        nb32_w[i] = 0u;
    nd_u8_share_table(m, DIMS, lut, tid, P16_THREADS);
    __syncthreads();
    /* SHIFT: every axis's table is (x >> sft) * stride (+1 on axis 0) for all 256 values (a
     * power-of-two number of even bins over [0, 256), as in most image histograms), checked
     * entry by entry against the table: then a point's slot is computed, not looked up */
    uint32_t sft[DIMS], str[DIMS];
    bool shift_ok = true;
#pragma unroll
    for (uint32_t a = 0; a < DIMS; ++a) {
        const uint32_t b = m.axis[a].map.bins;
        shift_ok = shift_ok && b != 0u && (b & (b - 1u)) == 0u && b <= 256u;
        sft[a] = 8u - (uint32_t)(__ffs((int)b) - 1);
        str[a] = 1u;
        for (uint32_t c = a + 1u; c < DIMS; ++c)
            str[a] *= m.axis[c].map.bins;
    }
    for (uint32_t i = tid; shift_ok && i < DIMS * 256u; i += P16_THREADS) {
        const uint32_t a = i >> 8, x = i & 255u;
        uint32_t want = 0u;
#pragma unroll
        for (uint32_t c = 0; c < DIMS; ++c)
            if (c == a)
                want = (x >> sft[c]) * str[c] + (c == 0u ? 1u : 0u);
        shift_ok = lut[i] == want;
    }
    shift_ok = __syncthreads_and(shift_ok) != 0;
    const uint32_t out_key = GPUHIST_ND_SLOT_OUT(m.total);
    const uint32_t cbase = (uint32_t)__cvta_generic_to_shared(nb32_w);
    uint32_t run_key = 0u, run = 0u; /* the thread's current run of one slot */
    auto count = [&](const uint4 (&g)[SH::L], auto shift) {
        uint32_t w[4u * SH::L];
#pragma unroll
        for (uint32_t l = 0; l < SH::L; ++l) {
            w[4u * l] = g[l].x;
            w[4u * l + 1u] = g[l].y;
            w[4u * l + 2u] = g[l].z;
            w[4u * l + 3u] = g[l].w;
        }
#pragma unroll
        for (uint32_t j = 0; j < SH::G; ++j) {
            uint32_t k = decltype(shift)::value ? 1u : 0u;
#pragma unroll
            for (uint32_t a = 0; a < DIMS; ++a) {
                const uint32_t b = j * DIMS + a; /* byte of the group */
                const uint32_t x = (w[b >> 2] >> (8u * (b & 3u))) & 0xFFu;
                if constexpr (decltype(shift)::value)
                    k += (x >> sft[a]) * str[a];
                else
                    k += lut[a * 256u + x];
            }
            if constexpr (!decltype(shift)::value)
                k = k < GH_ND_U8_OUT ? k : out_key;
            const bool same = k == run_key;
            /* the run that ends here */
            gh_red_shared_add_nz(cbase + 4u * run_key, same ? 0u : run);
            run = same ? run + 1u : 1u;
            run_key = k;
        }
    };
    auto loop = [&](auto shift) {
        const uint64_t step = (uint64_t)gridDim.x * P16_THREADS;
        uint64_t gi = (uint64_t)blockIdx.x * P16_THREADS + tid;
        uint4 nx[SH::L];
        if (gi < ngroups)
#pragma unroll
            for (uint32_t l = 0; l < SH::L; ++l)
                nx[l] = __ldcs(base + gi * SH::L + l);
        for (; gi < ngroups; gi += step) {
            uint4 g[SH::L];
#pragma unroll
            for (uint32_t l = 0; l < SH::L; ++l)
                g[l] = nx[l];
            if (gi + step < ngroups)
#pragma unroll
                for (uint32_t l = 0; l < SH::L; ++l)
                    nx[l] = __ldcs(base + (gi + step) * SH::L + l);
            count(g, shift);
        }
    };
    if (shift_ok)
        loop(std::true_type());
    else
        loop(std::false_type());
    gh_red_shared_add_nz(cbase + 4u * run_key, run);
    __syncthreads();
    for (uint32_t i = tid; i < nkeys; i += P16_THREADS) {
        const uint32_t c = nb32_w[i];
        if (c)
            atomicAdd(out + i, (unsigned long long)c);
    }
}

/* Shared memory for nkeys counters and DIMS tables. */
size_t nb32_smem(uint32_t nkeys, uint32_t dims)
{
    return ((size_t)((nkeys + 3u) & ~3u) + (size_t)dims * 256u) * 4u;
}

template <uint32_t DIMS>
gpuhist_status nb32_launch(gpuhist_ctx *ctx, const gpuhist_nd_map &m, const uint4 *base,
                           uint64_t ngroups, unsigned long long *counters, uint32_t nkeys)
{
    auto kernel = k_nd_bytes32<DIMS>;
    const size_t smem = nb32_smem(nkeys, DIMS);
    cudaError_t err;
    const int grid = gh_launch_grid(gh_launch_policy_of(GH_LP_ND_FUSED), (const void *)kernel,
                                    P16_THREADS, smem, ctx->device, gpuhist_cuda_sm_count(ctx),
                                    0, ngroups, &err);
    if (!grid)
        return gpuhist_cuda_check(ctx, err, "N-D: shared memory of the u8 count");
    const uint64_t most = (uint64_t)grid * ND_B32_GROUPS_PER_BLOCK;
    for (uint64_t g0 = 0; g0 < ngroups; g0 += most) {
        const uint64_t n = ngroups - g0 < most ? ngroups - g0 : most;
        kernel<<<grid, P16_THREADS, smem, gh_nd_stream(ctx)>>>(
            m, base + g0 * nb32_shape<DIMS>::L, n, counters, nkeys);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "N-D: u8 points, 32-bit counters");
    }
    return GPUHIST_OK;
}

} /* namespace */

/* See nd_device.cuh. */
int gh_nd_bytes32_count(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first, uint64_t n,
                        unsigned long long *counters, uint32_t nkeys, uint64_t *done,
                        gpuhist_status *rc)
{
    const unsigned char *start = m.axis[0].base + first * m.axis[0].stride;
    if (m.dims < 2u || m.dims > 4u || ((uintptr_t)start & 15u) != 0u ||
        nb32_smem(nkeys, m.dims) > gpuhist_cuda_smem_optin(ctx))
        return 0;
    const uint4 *base = (const uint4 *)start;
    switch (m.dims) {
    case 2:
        *done = n / nb32_shape<2>::G * nb32_shape<2>::G;
        *rc = nb32_launch<2>(ctx, m, base, n / nb32_shape<2>::G, counters, nkeys);
        return 1;
    case 3:
        *done = n / nb32_shape<3>::G * nb32_shape<3>::G;
        *rc = nb32_launch<3>(ctx, m, base, n / nb32_shape<3>::G, counters, nkeys);
        return 1;
    default:
        *done = n / nb32_shape<4>::G * nb32_shape<4>::G;
        *rc = nb32_launch<4>(ctx, m, base, n / nb32_shape<4>::G, counters, nkeys);
        return 1;
    }
}
