/*
 * pitched_gaps.cuh - a pitched device region counted in place as one span, its row gaps taken
 * back afterwards (pitched_gaps.cu): what cuda_stream_count asks of it.
 */
#ifndef GPUHIST_CUDA_PITCHED_GAPS_CUH
#define GPUHIST_CUDA_PITCHED_GAPS_CUH

#include "cuda_backend.cuh"

namespace gh_backend {

struct gap_span {
    gpuhist_plan span;   /* the region as one contiguous run of pixels */
    uint64_t gap_rows;   /* rows followed by a gap (all but the last) */
    uint32_t gap_pixels; /* pixels of one gap */
    size_t row_bytes;
};

/* Whether `plan` is a pitched device region to count in place; if so its span and gaps. */
bool gap_span_of(const gpuhist_plan *plan, gap_span *g);
/* Take back the gaps' samples from the counters `out` the strategy added the span into. */
gpuhist_status uncount_gaps(gpuhist_ctx *ctx, const gpuhist_plan *chunk, const gap_span &g,
                            void *out);

} /* namespace gh_backend */

#endif
