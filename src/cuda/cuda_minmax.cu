/*
 * cuda_minmax.cu - the finite minimum and maximum of the samples on the device (auto range):
 * each sample to an order-preserving 64-bit key, warp reductions, two global atomics per warp.
 * Exact for every dtype: integers stay integers (64-bit ones rounded outward at the end),
 * floats are widened exactly, -0.0 is +0.0, NaN and infinities are skipped.
 */
#include "cuda_jobs.cuh"

#include <type_traits>

#define GH_SIGN64 0x8000000000000000ull

namespace gh_backend {

/* Order-preserving 64-bit keys: min/max of keys = min/max of values, exactly. Integers stay
 * integers (a 64-bit value is converted to double only at the very end, as the CPU does);
 * floats are widened to double (exact; f16/bf16 through float) and -0.0 is taken as +0.0. */
__device__ __forceinline__ bool gh_mm_key(int64_t x, unsigned long long *k)
{
    *k = (unsigned long long)x ^ GH_SIGN64;
    return true;
}
__device__ __forceinline__ bool gh_mm_key(uint64_t x, unsigned long long *k)
{
    *k = x;
    return true;
}
__device__ __forceinline__ bool gh_mm_key(double d, unsigned long long *k)
{
    if (!isfinite(d))
        return false;
    if (d == 0.0)
        d = 0.0;
    unsigned long long b = (unsigned long long)__double_as_longlong(d);
    *k = (b & GH_SIGN64) ? ~b : (b | GH_SIGN64);
    return true;
}
template <typename T> __device__ __forceinline__ bool gh_mm_key_of(T x, unsigned long long *k)
{
    if constexpr (std::is_same<T, gh_f16>::value)
        return gh_mm_key((double)gpuhist_f16_to_f32(x.bits), k);
    else if constexpr (std::is_same<T, gh_bf16>::value)
        return gh_mm_key((double)gpuhist_bf16_to_f32(x.bits), k);
    else if constexpr (std::is_floating_point<T>::value)
        return gh_mm_key((double)x, k);
    else if constexpr (std::is_signed<T>::value)
        return gh_mm_key((int64_t)x, k);
    else
        return gh_mm_key((uint64_t)x, k);
}

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK) k_minmax(gh_kparams p, unsigned long long *mm)
{
    const T *data = (const T *)p.data;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t k = p.begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    gh_chan ch;
    if (MULTI)
        ch.init(k, stride, p.channels);
    unsigned long long lo = ~0ull, hi = 0ull, key;
    for (; k < p.end; k += stride) {
        if (!MULTI || gh_base(p, ch.ch) >= 0) {
            if (gh_mm_key_of<T>(data[k], &key)) {
                lo = key < lo ? key : lo;
                hi = key > hi ? key : hi;
            }
        }
        if (MULTI)
            ch.advance();
    }
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long l2 = __shfl_xor_sync(0xffffffffu, lo, o);
        unsigned long long h2 = __shfl_xor_sync(0xffffffffu, hi, o);
        lo = l2 < lo ? l2 : lo;
        hi = h2 > hi ? h2 : hi;
    }
    /* lo <= hi iff the warp saw a finite value */
    if ((threadIdx.x & 31u) == 0 && lo <= hi) {
        atomicMin(&mm[0], lo);
        atomicMax(&mm[1], hi);
    }
}

/* Key back to a double; 64-bit integers round down for the minimum and up for the maximum so
 * every sample stays inside the auto range (internal.h). */
static double decode_key(gpuhist_dtype dt, unsigned long long k, int round_up)
{
    switch (dt) {
    case GPUHIST_F32:
    case GPUHIST_F64:
    case GPUHIST_F16:
    case GPUHIST_BF16: {
        unsigned long long b = (k & GH_SIGN64) ? (k & ~GH_SIGN64) : ~k;
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    case GPUHIST_I8:
    case GPUHIST_I16:
    case GPUHIST_I32:
    case GPUHIST_I64: {
        int64_t v = (int64_t)(k ^ GH_SIGN64);
        return round_up ? gpuhist_i64_to_double_up(v) : gpuhist_i64_to_double_down(v);
    }
    default:
        return round_up ? gpuhist_u64_to_double_up(k) : gpuhist_u64_to_double_down(k);
    }
}

gpuhist_status cuda_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo, double *hi,
                           int *found)
{
    cuda_state *st = state_of(ctx);
    cudaStream_t s = stream_of(ctx);
    *found = 0;
    GPUHIST_CUDA_TRY(ctx, cudaSetDevice(st->device), "cudaSetDevice");
    st->h_minmax[0] = ~0ull;
    st->h_minmax[1] = 0ull;
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->d_minmax, st->h_minmax, 2 * sizeof(unsigned long long),
                                     cudaMemcpyHostToDevice, s),
                     "initialise min/max");
    gpuhist_plan unweighted = *plan; /* the range needs no weights staged */
    unweighted.weights = NULL;
    gpuhist_status rc = for_each_job(ctx, &unweighted, [&](const gpuhist_cuda_job &job) {
        gh_kparams p = gh_make_params(plan, &job);
        auto launch = [&](auto tag, auto multi) -> gpuhist_status {
            typedef typename decltype(tag)::type T;
            auto kernel = k_minmax<T, decltype(multi)::value>;
            cudaError_t err;
            int grid = gh_grid(&job, kernel, GH_LP_GRID_STRIDE, 0, job.elements, &err);
            if (!grid)
                return gpuhist_cuda_check(ctx, err, "configure minmax kernel");
            kernel<<<grid, GH_BLOCK, 0, job.stream>>>(p, st->d_minmax);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "minmax kernel");
            return GPUHIST_OK;
        };
        /* f16/bf16: bit patterns widened exactly to float, then keyed as any float */
        if (GPUHIST_DTYPE_BIT(plan->dtype) & GPUHIST_CUDA_HALF_DTYPES)
            return gh_dispatch_half(plan, launch);
        return gh_dispatch(plan, launch);
    });
    if (rc != GPUHIST_OK)
        return rc;
    GPUHIST_CUDA_TRY(ctx,
                     cudaMemcpyAsync(st->h_minmax, st->d_minmax, 2 * sizeof(unsigned long long),
                                     cudaMemcpyDeviceToHost, s),
                     "read min/max");
    GPUHIST_CUDA_TRY(ctx, cudaStreamSynchronize(s), "minmax");
    if (st->h_minmax[0] <= st->h_minmax[1]) {
        *found = 1;
        *lo = decode_key(plan->dtype, st->h_minmax[0], 0);
        *hi = decode_key(plan->dtype, st->h_minmax[1], 1);
    }
    return GPUHIST_OK;
}

} /* namespace gh_backend */
