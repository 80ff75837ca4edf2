/*
 * bench_images.cu - image histograms on the device: gpuhist against NPP (nppiHistogramEven,
 * the _Ctx functions) and CUB DeviceHistogram in the same run, on the same device buffers.
 *
 * Cases (issue "Images": the sizes where the fixed cost of a call decides, not bandwidth):
 * 8-bit grey 64x64 (the fixed cost alone), 1920x1080 (an HD frame), 7680x4320 uniform and
 * with 90% of the pixels one value, 9248x6936 (64 MP) uniform, RGBA 7680x4320 (all 4
 * channels), 16-bit grey 7680x4320 with 65536 bins. Each image is made on the device (a hash
 * of the index) with a row pitch from cudaMallocPitch, and counted as a region of interest
 * (rows, row_length, row_stride) by gpuhist, with the pitch by NPP, and row by row-pitched CUB (HistogramEven with num_row_pixels, num_rows,
 * row_stride_bytes). Counts are compared: gpuhist's 64-bit counts against NPP's and CUB's
 * 32-bit ones, bin by bin (a mismatch is reported and the exit status is 1).
 * Timing: host wall time of one call plus the stream synchronisation (what a caller waits
 * for), the median of --reps calls after --warmup calls; and the device time alone (CUDA
 * events around the call, median) so that the fixed host cost per call shows as the
 * difference. Results go to stdout as a table, and as JSON with --json FILE.
 * --strategies: each CUDA strategy forced in turn as well (a row each, the asynchronous call,
 * counts checked).
 * --case TEXT: only the cases whose name contains TEXT (for a profiler's timeline).
 * Limits: one GPU; NPP only when built with it (GPUHIST_BENCH_NPP).
 */
#include "gpuhist.h"

#include <cuda_runtime.h>
#include <cub/device/device_histogram.cuh>
#if GPUHIST_BENCH_NPP
#include <nppi_statistics_functions.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            std::fprintf(stderr, "FATAL: %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_),         \
                         __FILE__, __LINE__);                                                   \
            std::exit(3);                                                                       \
        }                                                                                       \
    } while (0)

static int g_reps = 50, g_warmup = 10;
static bool g_strategies = false;
static cudaStream_t g_stream;

__device__ __forceinline__ uint32_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* Pixel rows of `row_bytes` at `pitch`: 8-bit samples uniform or 90% one value (hot >= 0). */
__global__ void fill8(uint8_t *d, size_t pitch, size_t row_bytes, size_t rows, int hot)
{
    size_t n = row_bytes * rows;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / row_bytes, c = i % row_bytes;
        uint32_t h = mix(i);
        d[r * pitch + c] = hot >= 0 && h % 10 != 0 ? (uint8_t)hot : (uint8_t)(h >> 8);
    }
}

__global__ void fill16(uint16_t *d, size_t pitch_elems, size_t row_elems, size_t rows)
{
    size_t n = row_elems * rows;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        d[(i / row_elems) * pitch_elems + i % row_elems] = (uint16_t)(mix(i) >> 7);
}

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

struct Timing {
    bool ok = false;
    double wall_ms = 0, device_ms = 0;
    std::string err;
};

/* `call` enqueues (or runs) one histogram on g_stream; @return "" or an error. */
static Timing time_calls(const std::function<std::string()> &call)
{
    Timing t;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> wall, dev;
    for (int i = 0; i < g_warmup + g_reps; ++i) {
        double t0 = now_ms();
        CK(cudaEventRecord(e0, g_stream));
        std::string err = call();
        CK(cudaEventRecord(e1, g_stream));
        CK(cudaStreamSynchronize(g_stream));
        double t1 = now_ms();
        if (!err.empty()) {
            t.err = err;
            break;
        }
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= g_warmup) {
            wall.push_back(t1 - t0);
            dev.push_back(ms);
        }
    }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    if (!t.err.empty())
        return t;
    std::sort(wall.begin(), wall.end());
    std::sort(dev.begin(), dev.end());
    t.ok = true;
    t.wall_ms = wall[wall.size() / 2];
    t.device_ms = dev[dev.size() / 2];
    return t;
}

/* Host time of one call: `call` run 200 times back to back (a synchronisation only at the end),
 * the wall time divided by the calls, in microseconds. For an asynchronous call this is the cost
 * of enqueueing it; when the device is the slower side it is the device time instead. */
static double enqueue_us(const std::function<std::string()> &call)
{
    const int n = 200;
    CK(cudaStreamSynchronize(g_stream));
    double t0 = now_ms();
    for (int i = 0; i < n; ++i)
        if (!call().empty())
            return -1;
    double t1 = now_ms();
    CK(cudaStreamSynchronize(g_stream));
    return (t1 - t0) * 1e3 / n;
}

struct Case {
    const char *name;
    int width, height, channels, bits, hot;
    bool packed; /* rows back to back (cudaMalloc) instead of cudaMallocPitch's pitch */
};

struct Row {
    std::string name;
    Timing gh, gha, npp, cub; /* gha: gpuhist with gpuhist_set_async(1), tallies on the device */
    double gh_enqueue_us = 0, gha_enqueue_us = 0, cub_enqueue_us = 0; /* host time per call */
    bool npp_match = false, cub_match = false;
    double mpix = 0;
    std::vector<std::pair<std::string, Timing>> forced; /* --strategies: each CUDA strategy */
};

static bool same_counts(const std::vector<uint64_t> &a, const std::vector<int32_t> &b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != (uint64_t)(uint32_t)b[i])
            return false;
    return true;
}

#if GPUHIST_BENCH_NPP
static NppStreamContext npp_context()
{
    NppStreamContext c;
    std::memset(&c, 0, sizeof c);
    int dev = 0;
    CK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    c.hStream = g_stream;
    c.nCudaDeviceId = dev;
    c.nMultiProcessorCount = p.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
    c.nSharedMemPerBlock = p.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = p.major;
    c.nCudaDevAttrComputeCapabilityMinor = p.minor;
    CK(cudaStreamGetFlags(g_stream, &c.nStreamFlags));
    return c;
}
#endif

static Row run_case(gpuhist_ctx *ctx, const Case &k)
{
    Row row;
    row.name = k.name;
    const int C = k.channels;
    const size_t ss = k.bits / 8;
    const size_t row_bytes = (size_t)k.width * C * ss;
    const uint32_t bins = k.bits == 8 ? 256 : 65536;
    row.mpix = (double)k.width * k.height / 1e6;
    void *img;
    size_t pitch;
    if (k.packed) {
        CK(cudaMalloc(&img, row_bytes * k.height));
        pitch = row_bytes;
    } else {
        CK(cudaMallocPitch(&img, &pitch, row_bytes, k.height));
    }
    if (k.bits == 8)
        fill8<<<1024, 256, 0, g_stream>>>((uint8_t *)img, pitch, row_bytes, k.height, k.hot);
    else
        fill16<<<1024, 256, 0, g_stream>>>((uint16_t *)img, pitch / 2, row_bytes / 2, k.height);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(g_stream));

    /* gpuhist: the image as a region of interest, counts in device memory */
    uint64_t *d_counts;
    CK(cudaMalloc(&d_counts, (size_t)bins * C * sizeof(uint64_t)));
    gpuhist_samples s = gpuhist_samples_1d(img, k.bits == 8 ? GPUHIST_U8 : GPUHIST_U16, 0);
    s.rows = k.height;
    s.row_length = k.width;
    s.row_stride = pitch;
    s.channels = C;
    s.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_bin_spec spec = gpuhist_bins_integer(bins, 0);
    /* one call with counts on the device; tallies to the host (stats NULL) or left on the
     * device at `stats` */
    auto gh_call = [&](uint64_t *stats) -> std::string {
        gpuhist_result r = gpuhist_result_host(d_counts);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        r.device_stats = stats;
        if (gpuhist_histogram(ctx, &s, &spec, &r) != GPUHIST_OK)
            return gpuhist_last_error(ctx);
        return "";
    };
    auto gh_sync = [&]() { return gh_call(nullptr); };
    row.gh = time_calls(gh_sync);
    std::vector<uint64_t> gh((size_t)bins * C);
    CK(cudaMemcpy(gh.data(), d_counts, gh.size() * 8, cudaMemcpyDeviceToHost));
    /* the same call left asynchronous (counts and tallies stay on the device, no wait inside
     * the call), as CUB and NPP are: its device time has no host round trip in it */
    uint64_t *d_stats;
    CK(cudaMalloc(&d_stats, 4u * C * sizeof(uint64_t)));
    auto gh_async = [&]() { return gh_call(d_stats); };
    gpuhist_set_async(ctx, 1);
    row.gha = time_calls(gh_async);
    row.gha_enqueue_us = enqueue_us(gh_async);
    gpuhist_set_async(ctx, 0);
    row.gh_enqueue_us = enqueue_us(gh_sync);
    {
        std::vector<uint64_t> f(gh.size());
        CK(cudaMemcpy(f.data(), d_counts, f.size() * 8, cudaMemcpyDeviceToHost));
        if (f != gh)
            row.gha.err = "ASYNC COUNTS DIFFER", row.gha.ok = false;
    }
    /* every CUDA strategy forced in turn (those that refuse the request are left out), timed
     * as the asynchronous call above and checked against the automatic choice's counts */
    gpuhist_set_async(ctx, 1);
    for (size_t i = 0; g_strategies && i < gpuhist_strategy_count(); ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK || d.backend != GPUHIST_BACKEND_CUDA ||
            gpuhist_set_strategy(ctx, d.name) != GPUHIST_OK)
            continue;
        Timing t = time_calls(gh_async);
        if (t.ok) {
            std::vector<uint64_t> f(gh.size());
            CK(cudaMemcpy(f.data(), d_counts, f.size() * 8, cudaMemcpyDeviceToHost));
            if (f != gh)
                t.err = "COUNTS DIFFER";
        }
        row.forced.emplace_back(d.name, t);
    }
    gpuhist_set_async(ctx, 0);
    gpuhist_set_strategy(ctx, "auto");
    CK(cudaFree(d_stats));

    /* CUB: row-pitched HistogramEven / MultiHistogramEven<4, 4> */
    int32_t *d_hist;
    CK(cudaMalloc(&d_hist, (size_t)bins * C * sizeof(int32_t)));
    void *d_temp = nullptr;
    size_t temp_bytes = 0;
    auto cub_call = [&](void *t, size_t &tb) -> cudaError_t {
        if (k.bits == 16)
            return cub::DeviceHistogram::HistogramEven(t, tb, (const uint16_t *)img, d_hist,
                                                       (int)bins + 1, 0, (int)bins, k.width,
                                                       k.height, pitch, g_stream);
        if (C == 1)
            return cub::DeviceHistogram::HistogramEven(t, tb, (const uint8_t *)img, d_hist,
                                                       (int)bins + 1, 0, (int)bins, k.width,
                                                       k.height, pitch, g_stream);
        ::cuda::std::array<int32_t *, 4> h4;
        ::cuda::std::array<int, 4> nl, lo, hi;
        for (int a = 0; a < 4; ++a) {
            h4[a] = d_hist + (size_t)a * bins;
            nl[a] = (int)bins + 1;
            lo[a] = 0;
            hi[a] = (int)bins;
        }
        return cub::DeviceHistogram::MultiHistogramEven<4, 4>(
            t, tb, (const uint8_t *)img, h4, nl, lo, hi, k.width, k.height, pitch, g_stream);
    };
    CK(cub_call(nullptr, temp_bytes));
    CK(cudaMalloc(&d_temp, temp_bytes));
    auto cub_once = [&]() -> std::string {
        cudaError_t e = cub_call(d_temp, temp_bytes);
        return e == cudaSuccess ? "" : cudaGetErrorString(e);
    };
    row.cub = time_calls(cub_once);
    row.cub_enqueue_us = enqueue_us(cub_once);
    std::vector<int32_t> h32((size_t)bins * C);
    CK(cudaMemcpy(h32.data(), d_hist, h32.size() * 4, cudaMemcpyDeviceToHost));
    row.cub_match = same_counts(gh, h32);
    CK(cudaFree(d_temp));

#if GPUHIST_BENCH_NPP
    NppStreamContext nc = npp_context();
    NppiSize roi = {k.width, k.height};
    size_t nbytes = 0;
    NppStatus ns;
    int nl[4] = {(int)bins + 1, (int)bins + 1, (int)bins + 1, (int)bins + 1};
    if (k.bits == 16)
        ns = nppiHistogramEvenGetBufferSize_16u_C1R_Ctx(roi, (int)bins + 1, &nbytes, nc);
    else if (C == 1)
        ns = nppiHistogramEvenGetBufferSize_8u_C1R_Ctx(roi, (int)bins + 1, &nbytes, nc);
    else
        ns = nppiHistogramEvenGetBufferSize_8u_C4R_Ctx(roi, nl, &nbytes, nc);
    if (ns != NPP_SUCCESS) {
        row.npp.err = "buffer size: NppStatus " + std::to_string((int)ns);
    } else {
        Npp8u *nbuf;
        CK(cudaMalloc(&nbuf, nbytes ? nbytes : 1));
        CK(cudaMemset(d_hist, 0, h32.size() * 4));
        row.npp = time_calls([&]() -> std::string {
            NppStatus st;
            if (k.bits == 16)
                st = nppiHistogramEven_16u_C1R_Ctx((const Npp16u *)img, (int)pitch, roi, d_hist,
                                                   (int)bins + 1, 0, (int)bins, nbuf, nc);
            else if (C == 1)
                st = nppiHistogramEven_8u_C1R_Ctx((const Npp8u *)img, (int)pitch, roi, d_hist,
                                                  (int)bins + 1, 0, (int)bins, nbuf, nc);
            else {
                Npp32s *h4[4] = {d_hist, d_hist + bins, d_hist + 2 * bins, d_hist + 3 * bins};
                Npp32s lo[4] = {0, 0, 0, 0};
                Npp32s hi[4] = {(Npp32s)bins, (Npp32s)bins, (Npp32s)bins, (Npp32s)bins};
                st = nppiHistogramEven_8u_C4R_Ctx((const Npp8u *)img, (int)pitch, roi, h4, nl,
                                                  lo, hi, nbuf, nc);
            }
            return st == NPP_SUCCESS ? "" : "NppStatus " + std::to_string((int)st);
        });
        CK(cudaMemcpy(h32.data(), d_hist, h32.size() * 4, cudaMemcpyDeviceToHost));
        row.npp_match = row.npp.ok && same_counts(gh, h32);
        CK(cudaFree(nbuf));
    }
#else
    row.npp.err = "not built with NPP";
#endif
    CK(cudaFree(d_hist));
    CK(cudaFree(d_counts));
    CK(cudaFree(img));
    return row;
}

static void cell(const Timing &t)
{
    if (t.ok)
        std::printf(" %8.4f %8.4f |", t.wall_ms, t.device_ms);
    else
        std::printf(" %17s |", "-");
}

int main(int argc, char **argv)
{
    const char *json = nullptr, *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            g_reps = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc)
            g_warmup = std::max(0, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!std::strcmp(argv[i], "--strategies"))
            g_strategies = true;
        else if (!std::strcmp(argv[i], "--case") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: gpuhist-images [--reps N] [--warmup N] [--json FILE] "
                         "[--strategies] [--case TEXT]\n");
            return 2;
        }
    }
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        std::fprintf(stderr, "gpuhist-images: no CUDA device: %s\n", gpuhist_last_error(nullptr));
        return 77;
    }
    gpuhist_set_stream(ctx, g_stream);
    const Case cases[] = {
        {"u8 grey 64x64 (the fixed cost)", 64, 64, 1, 8, -1, false},
        {"u8 grey 1920x1080 (HD frame)", 1920, 1080, 1, 8, -1, false},
        {"u8 grey 7680x4320 uniform", 7680, 4320, 1, 8, -1, false},
        {"u8 grey 7680x4320 90% one value", 7680, 4320, 1, 8, 77, false},
        {"u8 grey 9248x6936 uniform", 9248, 6936, 1, 8, -1, false},
        {"u8 grey 9248x6936 packed rows", 9248, 6936, 1, 8, -1, true},
        {"u8 RGBA 7680x4320 uniform", 7680, 4320, 4, 8, -1, false},
        {"u16 grey 7680x4320 65536 bins", 7680, 4320, 1, 16, -1, false},
    };
    std::printf("device: %s; median of %d calls after %d; ms: wall (call + sync) / device "
                "(events)\n",
                gpuhist_device_name(ctx), g_reps, g_warmup);
    std::printf("%-34s | %-17s | %-17s | %-17s | %-17s | counts equal\n", "case", "gpuhist",
                "gpuhist async", "NPP", "CUB");
    std::vector<Row> rows;
    int bad = 0;
    for (const Case &k : cases) {
        if (only && !std::strstr(k.name, only))
            continue;
        Row r = run_case(ctx, k);
        std::printf("%-34s |", r.name.c_str());
        cell(r.gh);
        cell(r.gha);
        cell(r.npp);
        cell(r.cub);
        std::printf(" NPP %s, CUB %s\n", r.npp.ok ? (r.npp_match ? "yes" : "NO") : r.npp.err.c_str(),
                    r.cub.ok ? (r.cub_match ? "yes" : "NO") : r.cub.err.c_str());
        if (!r.gh.ok)
            std::printf("  gpuhist failed: %s\n", r.gh.err.c_str());
        if (!r.gha.ok)
            std::printf("  gpuhist async failed: %s\n", r.gha.err.c_str());
        std::printf("  host us per call, 200 back to back: gpuhist %.1f, gpuhist async %.1f, CUB "
                    "%.1f\n",
                    r.gh_enqueue_us, r.gha_enqueue_us, r.cub_enqueue_us);
        for (const auto &f : r.forced) {
            std::printf("  %-32s |", f.first.c_str());
            cell(f.second);
            std::printf(" %s\n", f.second.ok ? (f.second.err.empty() ? "" : f.second.err.c_str())
                                              : f.second.err.c_str());
            bad += f.second.ok && !f.second.err.empty();
        }
        bad += !r.gh.ok || (r.npp.ok && !r.npp_match) || (r.cub.ok && !r.cub_match);
        rows.push_back(r);
    }
    if (json) {
        FILE *f = std::fopen(json, "w");
        if (!f) {
            std::perror(json);
            return 1;
        }
        std::fprintf(f, "{\"device\": \"%s\", \"reps\": %d, \"cases\": [\n",
                     gpuhist_device_name(ctx), g_reps);
        for (size_t i = 0; i < rows.size(); ++i) {
            const Row &r = rows[i];
            std::fprintf(f,
                         "  {\"case\": \"%s\", \"mpix\": %.3f, \"gpuhist_wall_ms\": %.5f, "
                         "\"gpuhist_device_ms\": %.5f, \"gpuhist_async_device_ms\": %.5f, "
                         "\"npp_wall_ms\": %.5f, "
                         "\"npp_device_ms\": %.5f, \"cub_wall_ms\": %.5f, "
                         "\"cub_device_ms\": %.5f, \"npp_equal\": %s, \"cub_equal\": %s}%s\n",
                         r.name.c_str(), r.mpix, r.gh.wall_ms, r.gh.device_ms, r.gha.device_ms,
                         r.npp.wall_ms,
                         r.npp.device_ms, r.cub.wall_ms, r.cub.device_ms,
                         r.npp_match ? "true" : "false", r.cub_match ? "true" : "false",
                         i + 1 < rows.size() ? "," : "");
        }
        std::fprintf(f, "]}\n");
        std::fclose(f);
    }
    gpuhist_destroy(ctx);
    CK(cudaStreamDestroy(g_stream));
    return bad ? 1 : 0;
}
