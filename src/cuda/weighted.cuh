/*
 * weighted.cuh - what the weighted CUDA strategies (weighted_smem.cu, weighted_global.cu) and
 * the device weight accumulator (weight_acc.cu) share: the weight of a sample split into the
 * integer digits of src/core/exact_sum.h, and the rule that keeps the accumulator's 64-bit
 * limbs from overflowing.
 *
 * The accumulator (plan->weight_acc, device memory of the backend's, zeroed at begin) has the
 * host layout (internal.h): active * slots sum records of weight_limbs limbs + a flags word,
 * then, with squares, active * slots square records of GH_XSUM_LIMBS_F64 limbs + flags. Limb i
 * counts units of 2^(32 i - bias). Every addition into it is an integer atomic, so its value
 * after any set of deposits is the same whatever their order: the sums are exact, and the host
 * rounds them once (gpuhist_finish_sums) to the same bits as the CPU backend.
 *
 * Overflow: a limb starts in [0, 2^32) after normalising (weight_acc.cu) and every deposit adds
 * less than 2^32 in magnitude, so it may take GH_W_DEPOSITS_MAX deposits before the next
 * normalisation. job->weight_deposits (the backend's, per histogram) counts a bound on the
 * deposits any one limb has taken; gh_w_reserve normalises before a launch that could pass it
 * (GPUHIST_CUDA_WEIGHT_DEPOSITS, a testing knob, lowers the bound: 1 normalises before every
 * launch).
 *
 * Weights of NaN samples are not summed (those samples are in no bin), those of outliers are;
 * non-finite weights set flags (GH_XSUM_*), OR'ed into the record's flags word.
 */
#ifndef GPUHIST_CUDA_WEIGHTED_CUH
#define GPUHIST_CUDA_WEIGHTED_CUH

#include "common.cuh"
#include "fast_even.h"

#include <stdlib.h>
#include <string.h>

/* Deposits a limb may take between normalisations: (2^31 - 1) * (2^32 - 1) + 2^32 < 2^63. */
#define GH_W_DEPOSITS_MAX ((1ull << 31) - 2u)

/* The weight type of a kernel (template parameter). */
enum { GH_WK_NONE = 0, GH_WK_F32 = 1, GH_WK_F64 = 2 };

extern "C" {
/* Normalise every record of the device accumulator plan->weight_acc on `strm` (weight_acc.cu):
 * limbs 0 .. n-2 into [0, 2^32), carries into the next limb. */
gpuhist_status gpuhist_cuda_weight_normalize(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                             cudaStream_t strm);
/* Add the device accumulator plan->weight_acc into `state` (device memory, a weight state of
 * the plan's shape, with squares when `squares`: gpuhist_weight_state_words), normalising both,
 * on `strm` (weight_acc.cu): what an accumulating call's finish does instead of copying the
 * sums back. */
gpuhist_status gpuhist_cuda_weight_accumulate(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                              void *state, int squares, cudaStream_t strm);
}

/* Before a launch that adds at most `deposits` into any one limb (<= GH_W_DEPOSITS_MAX):
 * normalise the accumulator first when the limbs could otherwise overflow. */
static inline gpuhist_status gh_w_reserve(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                          const gpuhist_cuda_job *job, uint64_t deposits)
{
    if (!plan->weights)
        return GPUHIST_OK;
    /* Testing knob: a smaller bound (1: normalise before every launch) */
    uint64_t most = GH_W_DEPOSITS_MAX;
    const char *env = getenv("GPUHIST_CUDA_WEIGHT_DEPOSITS");
    if (env && *env) {
        const unsigned long long v = strtoull(env, NULL, 10);
        most = v >= 1 && v < most ? (uint64_t)v : most;
    }
    uint64_t local = 0; /* no counter from the backend: normalise before every launch */
    uint64_t *n = job->weight_deposits ? job->weight_deposits : &local;
    if (!job->weight_deposits || *n + deposits > most) {
        gpuhist_status st = gpuhist_cuda_weight_normalize(ctx, plan, job->stream);
        if (st != GPUHIST_OK)
            return st;
        *n = 0;
    }
    *n += deposits;
    return GPUHIST_OK;
}

/* Kernel parameters of the weighted strategies (weighted_global.cu, weighted_smem.cu). */
struct gh_wparams {
    gh_kparams k;
    gpuhist_fe_cert cert; /* FE: fast_even.h's certificate of the spec */
    const unsigned char *weights;
    unsigned long long *sums, *squares; /* the accumulator's records */
    uint64_t pixel_begin, pixel_end;    /* pixels of the job this launch counts */
    uint32_t sum_words, nan_slot;
};

/* *p for a job of a weighted plan (the launch range left zero); @return whether f32 EVEN bins
 * take fast_even.h's certified estimate (FE: its certificate is in p->cert). */
static inline bool gh_w_params_of(const gpuhist_plan *plan, const gpuhist_cuda_job *job,
                                  gh_wparams *p)
{
    memset(p, 0, sizeof *p);
    p->k = gh_make_params(plan, job);
    const bool fe = plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EVEN;
    if (fe)
        gpuhist_fe_cert_of(&plan->map, &p->cert); /* cached per spec */
    p->weights = job->weights;
    p->sum_words = (uint32_t)GPUHIST_SUM_RECORD(plan);
    p->sums = (unsigned long long *)plan->weight_acc;
    p->squares = p->sums ? p->sums + (uint64_t)plan->active * plan->slots * p->sum_words : NULL;
    p->nan_slot = GPUHIST_SLOT_NAN(plan->bins);
    return fe;
}

/* A weight as an integer: m * 2^pos units of the record's smallest value (exact_sum.h), its
 * sign, and r: 1 a deposit, 0 zero (nothing), or the GH_XSUM_* flag of a non-finite weight. */
struct gh_wsplit {
    unsigned long long m;
    uint32_t pos, r;
    bool neg;
};

/* A binary float weight's bit pattern (U: uint32_t or unsigned long long; MBITS fraction bits,
 * EMAX the all-ones exponent) in units of its smallest subnormal. */
template <typename U, uint32_t MBITS, uint32_t EMAX>
static __device__ __forceinline__ gh_wsplit gh_w_split(U bits)
{
    gh_wsplit s;
    const uint32_t e = (uint32_t)(bits >> MBITS) & EMAX;
    s.m = bits & (U)((1ull << MBITS) - 1u);
    s.neg = (bits >> (8u * sizeof(U) - 1u)) != 0u;
    s.pos = 0;
    if (e == EMAX)
        s.r = s.m ? GH_XSUM_NAN : s.neg ? GH_XSUM_NEG_INF : GH_XSUM_POS_INF;
    else
        s.r = (e == 0u && s.m == 0u) ? 0u : 1u;
    if (e && e != EMAX) {
        s.m |= 1ull << MBITS;
        s.pos = e - 1u;
    }
    return s;
}

/* f32 weight (bit pattern): units of 2^-149 (GH_XSUM_BIAS_F32). */
static __device__ __forceinline__ gh_wsplit gh_w_split_f32(uint32_t bits)
{
    return gh_w_split<uint32_t, 23u, 0xFFu>(bits);
}

/* f64 weight (bit pattern): units of 2^-1074 (GH_XSUM_BIAS_F64). */
static __device__ __forceinline__ gh_wsplit gh_w_split_f64(unsigned long long bits)
{
    return gh_w_split<unsigned long long, 52u, 0x7FFu>(bits);
}

/* The square of an f32 weight, exactly, in the f64 record's units (2^-1074): m^2 (< 2^48) at
 * 2 pos + 776 (w^2 = m^2 2^(2 pos - 298)); the square of +-inf is +inf, of NaN NaN: the deposit
 * exact_sum.h's caller makes of the double w * w. */
static __device__ __forceinline__ gh_wsplit gh_w_square_f32(const gh_wsplit &w)
{
    gh_wsplit s;
    s.neg = false;
    s.r = w.r == GH_XSUM_NEG_INF ? GH_XSUM_POS_INF : w.r;
    s.m = w.r == 1u ? w.m * w.m : 0ull;
    s.pos = w.r == 1u ? 2u * w.pos + 776u : 0u;
    return s;
}

/* The square of an f64 weight as the two doubles hi = w * w and lo = fma(w, w, -hi) (lo only
 * when hi is finite), as the CPU backend sums them: exact unless lo is below the subnormal
 * range, and then rounded the same way on every device. */
static __device__ __forceinline__ void gh_w_square_f64(double w, gh_wsplit *hi, gh_wsplit *lo)
{
    const double h = __dmul_rn(w, w);
    *hi = gh_w_split_f64((unsigned long long)__double_as_longlong(h));
    lo->r = 0u;
    lo->m = 0ull;
    lo->pos = 0u;
    lo->neg = false;
    if (hi->r == 1u) {
        const double l = __fma_rn(w, w, -h);
        *lo = gh_w_split_f64((unsigned long long)__double_as_longlong(l));
    }
}

/* Add m * 2^pos (negated when neg) into the 32-bit-unit limbs of a global record: up to three
 * digits, one 64-bit atomic each (exact_sum.h's split). */
static __device__ __forceinline__ void gh_w_add_global(unsigned long long *rec, unsigned long long m,
                                                       uint32_t pos, bool neg)
{
    const uint32_t limb = pos >> 5, s = pos & 31u;
    const unsigned long long lo = m << s;
    const unsigned long long d[3] = {lo & 0xFFFFFFFFull, lo >> 32,
                                     s ? m >> (64u - s) : 0ull};
#pragma unroll
    for (int k = 0; k < 3; ++k)
        if (d[k])
            atomicAdd(rec + limb + k, neg ? 0ull - d[k] : d[k]);
}

/* The deposits of v * 2^bit (|v| < 2^31) into a record's limbs: v * 2^(bit mod 32) < 2^62 in
 * magnitude, split into its low 32 bits (*lo, for limb bit / 32) and the signed rest (*hi, for
 * the next limb). */
static __device__ __forceinline__ void gh_w_piece_split(int32_t v, uint32_t bit,
                                                        unsigned long long *lo, long long *hi)
{
    const long long t = (long long)v * (long long)(1ull << (bit & 31u));
    *lo = (unsigned long long)t & 0xFFFFFFFFull;
    *hi = t >> 32; /* arithmetic: t = hi * 2^32 + lo */
}

/* Add v * 2^bit (|v| < 2^31) into the limbs of a global record (gh_w_piece_split). */
static __device__ __forceinline__ void gh_w_add_global_piece(unsigned long long *rec, int32_t v,
                                                             uint32_t bit)
{
    const uint32_t limb = bit >> 5;
    unsigned long long lo;
    long long hi;
    gh_w_piece_split(v, bit, &lo, &hi);
    if (lo)
        atomicAdd(rec + limb, lo);
    if (hi)
        atomicAdd(rec + limb + 1u, (unsigned long long)hi);
}

#endif
