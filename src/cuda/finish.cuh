/*
 * finish.cuh - the last step of every CUDA histogram, shared by the backend's finish kernels
 * (cuda_finish.cu) and the strategies that finish in their own launch (GPUHIST_CAP_FINISH,
 * one_launch.cu): the outlier policy (CLAMP adds the underflow / overflow slots to the end
 * bins), the counts, and the four tallies per channel (underflow, overflow, nan, total) written
 * where the caller wants them.
 */
#ifndef GPUHIST_CUDA_FINISH_CUH
#define GPUHIST_CUDA_FINISH_CUH

#include "common.cuh"

/* Where the finish writes: counts (active * bins), the tallies (4 per channel: underflow,
 * overflow, nan, total) and optionally the caller's device copy of them; `add`: counts and the
 * caller's tallies are added into (result.accumulate), the backend's own tallies (this call's,
 * for the host) still stored. */
struct gh_finish_out {
    unsigned long long *counts;
    unsigned long long *stats;
    unsigned long long *user_stats;
    unsigned long long pixels;
    uint32_t S, bins, active;
    int clamp, add;
};

/* Outlier policy, counts and tallies from slot counters `slots` (S per channel, 64- or 32-bit,
 * global or shared memory), by the threads [first, first + nthreads) of the grid. */
template <typename Counter>
__device__ __forceinline__ void gh_finish(const Counter *slots, const gh_finish_out &o,
                                          uint64_t first, uint64_t nthreads)
{
    const uint32_t bins = o.bins, S = o.S;
    const uint64_t n = (uint64_t)o.active * bins;
    for (uint64_t i = first; i < n; i += nthreads) {
        uint32_t h = (uint32_t)(i / bins), b = (uint32_t)(i % bins);
        const Counter *sl = slots + (uint64_t)h * S;
        unsigned long long v = sl[b];
        if (o.clamp) {
            if (b == 0)
                v += sl[GPUHIST_SLOT_UNDERFLOW(bins)];
            if (b == bins - 1u)
                v += sl[GPUHIST_SLOT_OVERFLOW(bins)];
        }
        o.counts[i] = o.add ? o.counts[i] + v : v;
    }
    if (first < o.active) {
        const uint32_t h = (uint32_t)first;
        const Counter *sl = slots + (uint64_t)h * S;
        unsigned long long t[4] = {sl[GPUHIST_SLOT_UNDERFLOW(bins)], sl[GPUHIST_SLOT_OVERFLOW(bins)],
                                   sl[GPUHIST_SLOT_NAN(bins)], o.pixels};
        for (int j = 0; j < 4; ++j) {
            o.stats[4 * h + j] = t[j];
            if (o.user_stats)
                o.user_stats[4 * h + j] = o.add ? o.user_stats[4 * h + j] + t[j] : t[j];
        }
    }
}

#endif
