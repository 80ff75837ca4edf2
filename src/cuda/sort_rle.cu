/*
 * sort_rle.cu - cuda-sort-rle: histogram by sorting. Counter indices are radix-sorted (CUB),
 * run-length encoded (CUB), and each run's length is added to its counter.
 *
 * Mechanism, per chunk of up to SR_CHUNK samples: a kernel writes each sample's 32-bit counter
 * index (samples of channels that are not histogrammed get the key `counters`, which sorts
 * last and is dropped); cub::DeviceRadixSort::SortKeys sorts them on only the bits needed
 * (ceil(log2(counters + 1))); cub::DeviceRunLengthEncode::Encode produces (key, run length)
 * pairs; a scatter kernel adds each run length to out[key] (keys are distinct within a chunk,
 * so the adds need no atomics). Seed 002 ("sort input by bin, then count run lengths").
 *
 * Why/when fast: no atomics on hot counters at all, so its speed hardly depends on the data
 * distribution (skew makes the encode cheaper), and the number of bins only adds radix passes
 * (8 bits per pass: 2^20 bins = 3 passes). When slow: a radix sort moves every key several
 * times through memory, so it is far below the read bandwidth; it wins only where atomics
 * collapse (huge histograms with hot data). 002 reports 95 GB/s at 64K bins.
 * Limits: fewer than 2^32 - 1 counters; device scratch of ~ 8.5 bytes per sample of a chunk
 * (SR_CHUNK = 2^24 samples: ~ 150 MB) from gpuhist_cuda_scratch. Any dtype, bin kind, 1-4
 * channels.
 * Seed: 002 (sorting-based histogram).
 */
#include "common.cuh"

#include <cub/cub.cuh>

namespace {

/* Samples per sort: large enough to amortise CUB's launches, small enough for the scratch. */
#define SR_CHUNK (1u << 24)

template <typename T, bool MULTI>
__global__ void __launch_bounds__(GH_BLOCK)
    k_keys(gh_kparams p, uint32_t none_key, uint32_t *__restrict__ keys)
{
    const gpuhist_binmap m = p.map;
    const T *__restrict__ data = (const T *)p.data;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t k = p.begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    gh_chan ch;
    if (MULTI)
        ch.init(k, stride, p.channels);
    for (; k < p.end; k += stride) {
        uint32_t c = gh_counter<T, MULTI>(p, &m, data[k], MULTI ? ch.ch : 0u);
        keys[k - p.begin] = c == GH_NONE ? none_key : c;
        if (MULTI)
            ch.advance();
    }
}

__global__ void k_scatter(const uint32_t *__restrict__ unique, const uint32_t *__restrict__ runs,
                          const int *__restrict__ num_runs, uint32_t counters,
                          unsigned long long *__restrict__ out)
{
    const int n = *num_runs;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t key = unique[i];
        if (key < counters)
            out[key] += runs[i]; /* keys are distinct within one encode: no race */
    }
}

inline size_t align256(size_t x)
{
    return (x + 255u) & ~(size_t)255u;
}

gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobp, void *out)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobp;
    if (job->elements == 0)
        return GPUHIST_OK;
    gh_kparams p = gh_make_params(plan, job);
    const uint32_t counters = p.counters;
    int end_bit = 0; /* bits to hold 0..counters (the drop key included) */
    while (end_bit < 32 && ((uint64_t)counters >> end_bit) != 0)
        ++end_bit;
    if (end_bit == 0)
        end_bit = 1;

    const int chunk = (int)(job->elements < SR_CHUNK ? job->elements : SR_CHUNK);
    const size_t max_runs = (uint64_t)counters + 1u < (uint64_t)chunk ? counters + 1u : chunk;

    /* two-phase sizing: CUB's temporary storage for the largest chunk */
    size_t sort_bytes = 0, rle_bytes = 0;
    {
        cub::DoubleBuffer<uint32_t> db(NULL, NULL);
        GPUHIST_CUDA_TRY(ctx,
                         cub::DeviceRadixSort::SortKeys(NULL, sort_bytes, db, chunk, 0, end_bit,
                                                        job->stream),
                         "size cub::DeviceRadixSort");
        GPUHIST_CUDA_TRY(ctx,
                         cub::DeviceRunLengthEncode::Encode(NULL, rle_bytes, (uint32_t *)NULL,
                                                            (uint32_t *)NULL, (uint32_t *)NULL,
                                                            (int *)NULL, chunk, job->stream),
                         "size cub::DeviceRunLengthEncode");
    }
    const size_t temp_bytes = sort_bytes > rle_bytes ? sort_bytes : rle_bytes;
    const size_t keys_bytes = align256((size_t)chunk * sizeof(uint32_t));
    const size_t runs_bytes = align256(max_runs * sizeof(uint32_t));
    const size_t total = 2 * keys_bytes + 2 * runs_bytes + 256 + align256(temp_bytes);
    void *scratch = NULL;
    gpuhist_status rc = gpuhist_cuda_scratch(ctx, total, &scratch);
    if (rc != GPUHIST_OK)
        return rc;
    unsigned char *base = (unsigned char *)scratch;
    uint32_t *keys_a = (uint32_t *)base;
    uint32_t *keys_b = (uint32_t *)(base + keys_bytes);
    uint32_t *unique = (uint32_t *)(base + 2 * keys_bytes);
    uint32_t *runs = (uint32_t *)(base + 2 * keys_bytes + runs_bytes);
    int *num_runs = (int *)(base + 2 * keys_bytes + 2 * runs_bytes);
    void *temp = base + 2 * keys_bytes + 2 * runs_bytes + 256;

    return gh_dispatch(plan, [&](auto tag, auto multi) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        auto kernel = k_keys<T, decltype(multi)::value>;
        cudaError_t err;
        int grid = gh_grid(job, kernel, GH_LP_GRID_STRIDE, 0, (uint64_t)chunk, &err);
        if (!grid)
            return gpuhist_cuda_check(ctx, err, "configure cuda-sort-rle");
        return gh_segments_max(job->elements, (uint64_t)chunk,
                               [&](uint64_t b, uint64_t e) -> gpuhist_status {
            const int n = (int)(e - b);
            p.begin = b;
            p.end = e;
            kernel<<<grid, GH_BLOCK, 0, job->stream>>>(p, counters, keys_a);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-sort-rle keys");
            cub::DoubleBuffer<uint32_t> db(keys_a, keys_b);
            size_t tb = temp_bytes;
            GPUHIST_CUDA_TRY(ctx,
                             cub::DeviceRadixSort::SortKeys(temp, tb, db, n, 0, end_bit,
                                                            job->stream),
                             "cub::DeviceRadixSort::SortKeys");
            tb = temp_bytes;
            GPUHIST_CUDA_TRY(ctx,
                             cub::DeviceRunLengthEncode::Encode(temp, tb, db.Current(), unique,
                                                                runs, num_runs, n, job->stream),
                             "cub::DeviceRunLengthEncode::Encode");
            const int sgrid = gh_fixed_grid(GH_LP_FOLD, job->sm_count, max_runs);
            k_scatter<<<sgrid, GH_BLOCK, 0, job->stream>>>(unique, runs, num_runs, counters,
                                                          (unsigned long long *)out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-sort-rle scatter");
            return GPUHIST_OK;
        });
    });
}

} // namespace

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_sort_rle = {
    "cuda-sort-rle",
    GPUHIST_BACKEND_CUDA,
    "002 (sorting-based)",
    "every dtype but f16/bf16, all bin kinds, any bins, 1-4 channels",
    "CUB radix sort of counter indices + run-length encode + scatter-add; no atomics",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_CHANNELS,
    gh_counters_fit,
    run,
};
