/*
 * bench_cub.cu - the peer every table is measured against: CUB DeviceHistogram (from the CUDA
 * toolkit) on the same device-resident buffer, with 32-bit counters. Only the specifications CUB
 * has a call for are measured (Cub::unsupported says why not); its counts serve as the
 * whole-buffer oracle once they equal cpu-reference's on the prefix.
 */
#include "gpuhist_bench.cuh"

#include <cub/device/device_histogram.cuh>

#include <climits>
#include <cmath>

Cub g_cub;

/* Why this spec has no CUB equivalent, or "" if it has one. */
std::string Cub::unsupported(const HistSpec &hs, uint64_t pixels)
{
    if (pixels * hs.channels > (uint64_t)INT_MAX)
        return "more than INT_MAX samples";
    if (pixels > (uint64_t)UINT_MAX)
        return "counts could pass 2^32";
    if (hs.channels == 1) {
        if ((hs.dtype == GPUHIST_U8 || hs.dtype == GPUHIST_U16) && hs.kind == K_INTEGER &&
            hs.ilower == 0)
            return "";
        if ((hs.dtype == GPUHIST_U8 || hs.dtype == GPUHIST_U16) && hs.kind == K_EVEN &&
            hs.lower == std::floor(hs.lower) && hs.upper == std::floor(hs.upper) &&
            hs.lower >= 0 && hs.upper <= 65536)
            return "";
        if (hs.dtype == GPUHIST_F32 && (hs.kind == K_EVEN || hs.kind == K_EDGES))
            return "";
        if (hs.dtype == GPUHIST_F64 && hs.kind == K_EVEN)
            return "";
        /* integer ids: unit-width levels from ilower (int levels must hold ilower + bins) */
        if (hs.dtype == GPUHIST_I64 && hs.kind == K_INTEGER)
            return "";
        if (hs.dtype == GPUHIST_I32 && hs.kind == K_INTEGER &&
            hs.ilower + (int64_t)hs.bins <= (int64_t)INT_MAX && hs.ilower >= (int64_t)INT_MIN)
            return "";
    }
    if (((hs.channels == 4 && hs.active >= 2) || (hs.channels == 2 && hs.active == 2)) &&
        hs.dtype == GPUHIST_U8 && hs.kind == K_INTEGER && hs.ilower == 0)
        return "";
    return "no matching DeviceHistogram call";
}

/* u8 interleaved, the first A of C channels histogrammed (integer bins from 0). */
template <int C, int A>
cudaError_t Cub::multi(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
                       uint64_t pixels, cudaStream_t s)
{
    ::cuda::std::array<unsigned *, A> h;
    ::cuda::std::array<int, A> lv, lo, hi;
    for (int a = 0; a < A; ++a) {
        h[a] = counts + (size_t)a * hs.bins;
        lv[a] = (int)hs.bins + 1;
        lo[a] = 0;
        hi[a] = (int)hs.bins;
    }
    return cub::DeviceHistogram::MultiHistogramEven<C, A>(d_temp, bytes, (const uint8_t *)d,
                                                           h, lv, lo, hi, (int)pixels, s);
}

/* d_temp == nullptr: size query. */
cudaError_t Cub::call(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
                      uint64_t pixels, cudaStream_t s)
{
    int n = (int)(pixels * hs.channels);
    int nl = (int)hs.bins + 1;
    if (hs.channels == 4 && hs.active == 3)
        return multi<4, 3>(d_temp, bytes, hs, d, pixels, s);
    if (hs.channels == 4 && hs.active == 4)
        return multi<4, 4>(d_temp, bytes, hs, d, pixels, s);
    if (hs.channels == 4)
        return multi<4, 2>(d_temp, bytes, hs, d, pixels, s);
    if (hs.channels == 2)
        return multi<2, 2>(d_temp, bytes, hs, d, pixels, s);
    if (hs.dtype == GPUHIST_F32 && hs.kind == K_EDGES)
        return cub::DeviceHistogram::HistogramRange(d_temp, bytes, (const float *)d, counts, nl,
                                                    (const float *)levels, n, s);
    if (hs.dtype == GPUHIST_F32)
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const float *)d, counts, nl,
                                                   (float)hs.lower, (float)hs.upper, n, s);
    if (hs.dtype == GPUHIST_F64)
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const double *)d, counts, nl,
                                                   hs.lower, hs.upper, n, s);
    if (hs.dtype == GPUHIST_I32)
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const int32_t *)d, counts, nl,
                                                   (int32_t)hs.ilower,
                                                   (int32_t)(hs.ilower + hs.bins), n, s);
    if (hs.dtype == GPUHIST_I64)
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const int64_t *)d, counts, nl,
                                                   hs.ilower, hs.ilower + (int64_t)hs.bins, n, s);
    int lo = hs.kind == K_INTEGER ? 0 : (int)hs.lower;
    int hi = hs.kind == K_INTEGER ? (int)hs.bins : (int)hs.upper;
    if (hs.dtype == GPUHIST_U8)
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const uint8_t *)d, counts,
                                                   nl, lo, hi, n, s);
    return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const uint16_t *)d, counts, nl,
                                               lo, hi, n, s);
}

/* Why CUB's temporary storage for this call cannot be had or used, or "" if it fits. CUB keeps
 * one privatised copy of the counters per thread block in global memory past 256 bins, so with
 * 2^24 bins it may ask for tens of GB; a failed cudaMalloc would end the run. */
std::string Cub::too_big(const HistSpec &hs, const void *d, uint64_t pixels)
{
    size_t need = 0;
    cudaError_t e = call(nullptr, need, hs, d, pixels, g_stream);
    if (e != cudaSuccess)
        return std::string("size query failed: ") + cudaGetErrorString(e);
    /* CUB indexes its privatised copies with int offsets: past 2^31 counters in all (2^24 bins
     * x 528 blocks on an H100: compute-sanitizer saw its sweep kernel write 8.3 GB before its
     * storage) it writes outside the storage instead of failing */
    if (need / 4u > (size_t)INT32_MAX) {
        char m[160];
        std::snprintf(m, sizeof m, "its %.1f GB of privatised counters pass CUB's 32-bit offsets",
                      need / 1e9);
        return m;
    }
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const size_t margin = 512ull << 20; /* the strategies' scratch and counters */
    const size_t have = free_b + temp_cap; /* prepare() frees the current temp first */
    if (need + margin > have) {
        char m[160];
        std::snprintf(m, sizeof m, "temporary storage %.1f GB does not fit the %.1f GB free",
                      need / 1e9, have / 1e9);
        return m;
    }
    return "";
}

/* Give back temporary storage above 1 GiB (the strategies timed after CUB need the memory). */
void Cub::trim()
{
    if (temp && temp_cap > (1ull << 30)) {
        CK(cudaFree(temp));
        temp = nullptr;
        temp_cap = 0;
    }
}

/* Size temp storage, counters and levels for this spec (outside any timing). */
void Cub::prepare(const HistSpec &hs, const void *d, uint64_t pixels)
{
    size_t nc = (size_t)hs.bins * hs.active;
    if (nc > counts_cap) {
        if (counts)
            CK(cudaFree(counts));
        CK(cudaMalloc(&counts, nc * sizeof(unsigned)));
        counts_cap = nc;
    }
    if (hs.kind == K_EDGES) {
        if (hs.edges.size() > levels_cap) {
            if (levels)
                CK(cudaFree(levels));
            CK(cudaMalloc(&levels, hs.edges.size() * sizeof(float)));
            levels_cap = hs.edges.size();
        }
        /* the same rounding gpuhist applies for f32 samples: edges to float */
        std::vector<float> f(hs.edges.begin(), hs.edges.end());
        CK(cudaMemcpy(levels, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    size_t need = 0;
    CK(call(nullptr, need, hs, d, pixels, g_stream));
    if (need > temp_cap) {
        if (temp)
            CK(cudaFree(temp));
        CK(cudaMalloc(&temp, need));
        temp_cap = need;
    }
}

CallRes Cub::run(const HistSpec &hs, const void *d, uint64_t pixels, std::string &err)
{
    size_t bytes = temp_cap;
    cudaError_t e = call(temp, bytes, hs, d, pixels, g_stream);
    if (e != cudaSuccess) {
        err = std::string("CUB: ") + cudaGetErrorString(e);
        return CallRes::FAIL;
    }
    CK_LAUNCH("CUB DeviceHistogram");
    return CallRes::OK;
}

Counts Cub::fetch(const HistSpec &hs)
{
    size_t nc = (size_t)hs.bins * hs.active;
    std::vector<unsigned> h(nc);
    CK(cudaStreamSynchronize(g_stream));
    CK(cudaMemcpy(h.data(), counts, nc * sizeof(unsigned), cudaMemcpyDeviceToHost));
    Counts c;
    c.counts.assign(h.begin(), h.end());
    c.channels = hs.active;
    return c;
}
