/*
 * parts.c - exact parts: the weight state of a histogram counted in parts (devices, processes,
 * Dask chunks), added and rounded without losing a bit (gpuhist.h, "Exact parts").
 *
 * Mechanism: a state is the weight accumulator of exact_sum.h as the backend leaves it
 * (gpuhist_finish_sums writes it to result.weight_state, normalised): per channel and slot, a
 * record of signed 64-bit limbs plus a word of non-finite flags. Adding two states adds their
 * limbs and ORs their flags, then normalises (so a limb never overflows, whatever the number
 * of parts); integer addition is associative and commutative, so the merged state, and the
 * sums rounded once from it, do not depend on how the data was cut or in which order the
 * parts were merged.
 * Limits: the shape (bins, channels, weight type, squares) is the caller's to keep equal.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <string.h>

/* Words of one weight record, 0 for a weight type that is not F32 or F64. */
static size_t sum_record_words(gpuhist_dtype wd)
{
    if (wd == GPUHIST_F32)
        return GH_XSUM_LIMBS_F32 + 1u;
    if (wd == GPUHIST_F64)
        return GH_XSUM_LIMBS_F64 + 1u;
    return 0;
}

static int shape_ok(uint32_t bins, uint32_t channels, gpuhist_dtype wd)
{
    return bins >= 1 && bins <= UINT32_MAX - GPUHIST_EXTRA_SLOTS && channels >= 1 &&
           channels <= GPUHIST_MAX_CHANNELS && sum_record_words(wd) != 0;
}

size_t gpuhist_weight_state_words(uint32_t bins, uint32_t channels, gpuhist_dtype weight_dtype,
                                  int squares)
{
    if (!shape_ok(bins, channels, weight_dtype))
        return 0;
    const size_t records = (size_t)channels * ((size_t)bins + GPUHIST_EXTRA_SLOTS);
    return records * (sum_record_words(weight_dtype) + (squares ? GPUHIST_SQUARE_RECORD : 0));
}

/* into += from for `records` records of `words` words (limbs, then the flags word). */
static void add_records(int64_t *into, const int64_t *from, size_t records, size_t words)
{
    for (size_t r = 0; r < records; ++r) {
        int64_t *a = into + r * words;
        gpuhist_record_add(a, from + r * words, words);
        gh_xsum_normalize(a, (gh_u32)(words - 1));
    }
}

gpuhist_status gpuhist_weight_state_add(int64_t *into, const int64_t *from, uint32_t bins,
                                        uint32_t channels, gpuhist_dtype weight_dtype,
                                        int squares)
{
    if (!into || !from || !shape_ok(bins, channels, weight_dtype))
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    const size_t records = (size_t)channels * ((size_t)bins + GPUHIST_EXTRA_SLOTS);
    const size_t words = sum_record_words(weight_dtype);
    add_records(into, from, records, words);
    if (squares)
        add_records(into + records * words, from + records * words, records,
                    GPUHIST_SQUARE_RECORD);
    return GPUHIST_OK;
}

gpuhist_status gpuhist_weight_state_sums(const int64_t *state, uint32_t bins, uint32_t channels,
                                         gpuhist_dtype weight_dtype, int squares,
                                         gpuhist_outliers outliers, double *sums,
                                         double *sums_squared)
{
    if (!state || !sums || !shape_ok(bins, channels, weight_dtype) ||
        (sums_squared && !squares) ||
        (outliers != GPUHIST_OUTLIERS_DROP && outliers != GPUHIST_OUTLIERS_CLAMP))
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    /* the plan fields gpuhist_finish_sums reads */
    gpuhist_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.bins = bins;
    plan.slots = bins + GPUHIST_EXTRA_SLOTS;
    plan.active = channels;
    plan.outliers = outliers;
    plan.weights = (const unsigned char *)state; /* only "weighted" matters */
    plan.weight_dtype = weight_dtype;
    plan.weight_limbs = weight_dtype == GPUHIST_F32 ? GH_XSUM_LIMBS_F32 : GH_XSUM_LIMBS_F64;
    plan.weight_bias = weight_dtype == GPUHIST_F32 ? GH_XSUM_BIAS_F32 : GH_XSUM_BIAS_F64;
    plan.want_squares = squares != 0;
    gpuhist_result r;
    memset(&r, 0, sizeof r);
    r.sums = sums;
    r.sums_squared = sums_squared;
    gpuhist_finish_sums(&plan, state, &r);
    return GPUHIST_OK;
}
