/*
 * gpuhist-sanitize-driver - runs every CUDA strategy (and auto) once per small case, for
 * compute-sanitizer (memcheck, racecheck) to watch, and checks each result bit for bit against
 * cpu-reference on the same bytes, so a run under the sanitizer is also a correctness run.
 *
 *   gpuhist-sanitize-driver [--quick] [--sizes a,b,c] [--strategy SUBSTR] [--case SUBSTR]
 *
 * Cases cover every dtype, the three binning kinds, tiny to 2^20 bins, channels with an active
 * subset and a channel mask, a strided ROI, an unaligned device pointer, the clamp policy and the
 * inclusive last edge. The data are raw random bits (NaN, inf, -0.0, denormals, extreme
 * integers) with every 7th sample pulled into [0, 1000) so in-range bins get hits; the `-runs`
 * cases set the first half of the buffer to one byte value (cuda-byte-pairs' run mode). Sizes: 1,
 * 17 and 50021 pixels (--quick: 4099 only, for racecheck, which is slow; --sizes a,b,c to choose).
 * Weighted: each case also runs the strategies that sum weights (and auto) with f32 and then
 * f64 weights of raw random bits (NaN, inf, subnormals, every third one a small integer), counts
 * and sums and sums of squares compared bit for bit with the CPU backend's (cpu-weighted).
 * Exit status: 0 all equal; 1 a mismatch or an error; 77 no CUDA device.
 */
#include "bench_common.cuh"

#include <cstring>
#include <string>
#include <vector>

enum Kind { K_EVEN, K_EDGES, K_INTEGER };

struct Case {
    const char *name;
    gpuhist_dtype dt;
    Kind kind;
    uint32_t bins;
    double lo, hi;
    int64_t ilo;
    uint32_t channels, active, mask;
    uint64_t roi_rows;  /* 0 = contiguous */
    size_t roi_pad;     /* extra bytes per row */
    size_t offset;      /* bytes from an aligned base: unaligned pointers */
    int clamp, inclusive;
    int runs;           /* 1: the first half of the buffer is one byte value (cuda-byte-pairs'
                           run mode needs whole 48 KiB iterations of one word) */
};

static const Case kCases[] = {
    /* name                 dtype          kind       bins     lo     hi   ilo  ch act mask rows pad off cl inc runs */
    {"u8-int256",           GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u8-even64",           GPUHIST_U8,  K_EVEN,    64,      0,     256,   0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u8-even16",           GPUHIST_U8,  K_EVEN,    16,      0,     256,   0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u8-even10-inexact",   GPUHIST_U8,  K_EVEN,    10,      3,     250,   0,   1, 0, 0, 0, 0, 0, 0, 1, 0},
    {"i8-int256",           GPUHIST_I8,  K_INTEGER, 256,     0,     0,     -128,1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u16-int65536",        GPUHIST_U16, K_INTEGER, 65536,   0,     0,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u16-int65536-unalign",GPUHIST_U16, K_INTEGER, 65536,   0,     0,     0,   1, 0, 0, 0, 0, 1, 0, 0, 0},
    {"i16-even1000",        GPUHIST_I16, K_EVEN,    1000,    -500,  500,   0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"i32-int1000",         GPUHIST_I32, K_INTEGER, 1000,    0,     0,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u32-even32",          GPUHIST_U32, K_EVEN,    32,      0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"i64-int100",          GPUHIST_I64, K_INTEGER, 100,     0,     0,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u64-even50",          GPUHIST_U64, K_EVEN,    50,      0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-even256",         GPUHIST_F32, K_EVEN,    256,     0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-even4096",        GPUHIST_F32, K_EVEN,    4096,    0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-even65536",       GPUHIST_F32, K_EVEN,    65536,   0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-even1M",          GPUHIST_F32, K_EVEN,    1u << 20,0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-edges100",        GPUHIST_F32, K_EDGES,   100,     0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-even256-clamp",   GPUHIST_F32, K_EVEN,    256,     100,   200,   0,   1, 0, 0, 0, 0, 0, 1, 0, 0},
    {"f32-even7-inclusive", GPUHIST_F32, K_EVEN,    7,       0,     999,   0,   1, 0, 0, 0, 0, 0, 0, 1, 0},
    {"f32-roi",             GPUHIST_F32, K_EVEN,    256,     0,     1000,  0,   1, 0, 0, 37, 12, 0, 0, 0, 0},
    {"f32-unaligned",       GPUHIST_F32, K_EVEN,    256,     0,     1000,  0,   1, 0, 0, 0, 0, 2, 0, 0, 0},
    {"f64-even300",         GPUHIST_F64, K_EVEN,    300,     0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f64-edges33",         GPUHIST_F64, K_EDGES,   33,      0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"rgba-u8-3of4",        GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   4, 3, 0, 0, 0, 0, 0, 0, 0},
    {"rgb-u8-mask101",      GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   3, 0, 5, 0, 0, 0, 0, 0, 0},
    {"rgba-u8-roi",         GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   4, 4, 0, 29, 5, 0, 0, 0, 0},
    {"rgba-u8-maskA-unalign",GPUHIST_U8, K_INTEGER, 256,     0,     0,     0,   4, 0, 10, 0, 0, 3, 0, 0, 0},
    {"rg-u8-int256",        GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   2, 0, 0, 0, 0, 0, 0, 0, 0},
    {"u8-runs",             GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   1, 0, 0, 0, 0, 0, 0, 0, 1},
    {"rgba-u8-3of4-runs",   GPUHIST_U8,  K_INTEGER, 256,     0,     0,     0,   4, 3, 0, 0, 0, 0, 0, 0, 1},
    {"rg-f32-even100",      GPUHIST_F32, K_EVEN,    100,     0,     1000,  0,   2, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-edges1024",       GPUHIST_F32, K_EDGES,   1024,    0,     1000,  0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f32-edges1000-unalign",GPUHIST_F32,K_EDGES,   1000,    0,     1000,  0,   1, 0, 0, 0, 0, 1, 0, 1, 0},
    {"f16-even256-unit",    GPUHIST_F16, K_EVEN,    256,     0,     1,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
    {"f16-even100-unalign", GPUHIST_F16, K_EVEN,    100,     -3,    5,     0,   1, 0, 0, 0, 0, 1, 0, 0, 0},
    {"bf16-even256-unit",   GPUHIST_BF16,K_EVEN,    256,     0,     1,     0,   1, 0, 0, 0, 0, 0, 0, 0, 0},
};

struct Out {
    std::vector<uint64_t> counts;
    gpuhist_result r;
};

static gpuhist_status run(gpuhist_ctx *ctx, const gpuhist_samples &s, const gpuhist_bin_spec &b,
                          size_t ncounts, Out &o)
{
    o.counts.assign(ncounts, 0xDEADBEEFDEADBEEFull); /* poison: every count must be written */
    o.r = gpuhist_result_host(o.counts.data());
    return gpuhist_histogram(ctx, &s, &b, &o.r);
}

static std::string diff(const Out &a, const Out &ref, uint32_t bins)
{
    char m[256];
    for (size_t i = 0; i < ref.counts.size(); ++i)
        if (a.counts[i] != ref.counts[i]) {
            std::snprintf(m, sizeof m, "histogram %zu bin %zu: %llu, cpu-reference %llu", i / bins,
                          i % bins, (unsigned long long)a.counts[i],
                          (unsigned long long)ref.counts[i]);
            return m;
        }
    for (uint32_t c = 0; c < ref.r.channels; ++c)
        if (a.r.underflow[c] != ref.r.underflow[c] || a.r.overflow[c] != ref.r.overflow[c] ||
            a.r.nan[c] != ref.r.nan[c] || a.r.total[c] != ref.r.total[c]) {
            std::snprintf(m, sizeof m, "histogram %u tallies (under/over/nan/total) %llu/%llu/%llu/%llu, "
                          "cpu-reference %llu/%llu/%llu/%llu", c,
                          (unsigned long long)a.r.underflow[c], (unsigned long long)a.r.overflow[c],
                          (unsigned long long)a.r.nan[c], (unsigned long long)a.r.total[c],
                          (unsigned long long)ref.r.underflow[c], (unsigned long long)ref.r.overflow[c],
                          (unsigned long long)ref.r.nan[c], (unsigned long long)ref.r.total[c]);
            return m;
        }
    if (a.r.channels != ref.r.channels)
        return "number of histograms differs";
    return "";
}

int main(int argc, char **argv)
{
    std::string sfilter, cfilter;
    std::vector<uint64_t> sizes = {1, 17, 50021};
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--quick") {
            sizes = {4099};
        } else if (a == "--sizes" && i + 1 < argc) {
            sizes.clear();
            for (char *p = argv[++i]; *p;) {
                char *end = nullptr;
                sizes.push_back(std::strtoull(p, &end, 10));
                p = (*end == ',') ? end + 1 : end;
                if (end == p && *p)
                    break;
            }
        }
        else if (a == "--strategy" && i + 1 < argc)
            sfilter = argv[++i];
        else if (a == "--case" && i + 1 < argc)
            cfilter = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--quick] [--sizes a,b,c] [--strategy SUBSTR] [--case SUBSTR]\n",
                         argv[0]);
            return 2;
        }
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("no CUDA device: nothing to check\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\ndate: %s\n", prop.name, bench_now_string().c_str());

    gpuhist_ctx *gpu = nullptr, *gpu_async = nullptr, *ref = nullptr, *wref = nullptr;
    if (gpuhist_create(&gpu, GPUHIST_BACKEND_CUDA) != GPUHIST_OK ||
        gpuhist_create(&gpu_async, GPUHIST_BACKEND_CUDA) != GPUHIST_OK ||
        gpuhist_create(&ref, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_create(&wref, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        std::printf("cannot create contexts\n");
        return 1;
    }
    if (gpuhist_set_strategy(ref, "cpu-reference") != GPUHIST_OK)
        std::printf("warning: cpu-reference not registered; comparing with CPU auto\n");
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    gpuhist_set_stream(gpu_async, (void *)stream);
    gpuhist_set_async(gpu_async, 1);

    std::vector<std::string> names = bench_strategies_of(GPUHIST_BACKEND_CUDA);
    names.insert(names.begin(), std::string()); /* "" = auto */

    const size_t max_bytes = 8u << 20;
    unsigned char *d = nullptr;
    CK(cudaMalloc(&d, max_bytes));
    uint64_t *dcounts = nullptr;
    CK(cudaMalloc(&dcounts, 256 * 4 * sizeof(uint64_t)));
    std::vector<unsigned char> h(max_bytes), hw(max_bytes);
    unsigned char *dw = nullptr; /* weights */
    CK(cudaMalloc(&dw, max_bytes));

    int failures = 0, runs = 0, unsupported = 0;
    for (const Case &c : kCases) {
        if (!cfilter.empty() && std::string(c.name).find(cfilter) == std::string::npos)
            continue;
        size_t ss = gpuhist_dtype_size(c.dt);
        std::vector<double> edges;
        gpuhist_bin_spec spec;
        if (c.kind == K_EVEN) {
            spec = gpuhist_bins_even(c.bins, c.lo, c.hi);
        } else if (c.kind == K_EDGES) {
            for (uint32_t i = 0; i <= c.bins; ++i) {
                double t = (double)i / c.bins;
                edges.push_back(c.lo + (c.hi - c.lo) * t * t);
            }
            spec = gpuhist_bins_edges(c.bins, edges.data());
        } else {
            spec = gpuhist_bins_integer(c.bins, c.ilo);
        }
        spec.outliers = c.clamp ? GPUHIST_OUTLIERS_CLAMP : GPUHIST_OUTLIERS_DROP;
        spec.last_edge_inclusive = c.inclusive;
        for (uint64_t n : sizes) {
            gpuhist_samples s;
            std::memset(&s, 0, sizeof s);
            s.dtype = c.dt;
            s.channels = c.channels;
            s.active_channels = c.active;
            s.channel_mask = c.mask;
            size_t px = ss * c.channels;
            size_t total;
            if (c.roi_rows) {
                s.rows = c.roi_rows;
                s.row_length = (n + c.roi_rows - 1) / c.roi_rows;
                s.row_stride = s.row_length * px + c.roi_pad;
                total = s.rows * s.row_stride;
            } else {
                s.count = n;
                total = n * px;
            }
            if (total + c.offset + 16 > max_bytes) {
                std::printf("case %s n=%llu too large for the driver buffer\n", c.name,
                            (unsigned long long)n);
                ++failures;
                continue;
            }
            bench_gen_bits<<<64, 256>>>(d, total + c.offset + 16, (uint32_t)ss,
                                        c.dt == GPUHIST_F32 || c.dt == GPUHIST_F64, n * 131 + c.bins);
            CK_LAUNCH("bench_gen_bits");
            if (c.runs)
                CK(cudaMemset(d, 0x5A, (total + c.offset) / 2));
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), d, total + c.offset, cudaMemcpyDeviceToHost));
            uint32_t hists = c.mask ? (uint32_t)__builtin_popcount(c.mask)
                                    : (c.active ? c.active : c.channels);
            size_t ncounts = (size_t)c.bins * hists;

            Out want;
            s.data = h.data() + c.offset;
            s.location = GPUHIST_MEMORY_HOST;
            gpuhist_status st = run(ref, s, spec, ncounts, want);
            if (st != GPUHIST_OK) {
                std::printf("FAIL %s n=%llu: cpu-reference: %s: %s\n", c.name, (unsigned long long)n,
                            gpuhist_status_string(st), gpuhist_last_error(ref));
                ++failures;
                continue;
            }
            for (const std::string &name : names) {
                const char *sn = name.empty() ? nullptr : name.c_str();
                if (!sfilter.empty() && (name.empty() || name.find(sfilter) == std::string::npos))
                    continue;
                gpuhist_set_strategy(gpu, sn);
                s.data = d + c.offset;
                s.location = GPUHIST_MEMORY_DEVICE;
                Out got;
                st = run(gpu, s, spec, ncounts, got);
                ++runs;
                const char *label = sn ? sn : "auto";
                if (st == GPUHIST_ERROR_UNSUPPORTED) {
                    ++unsupported;
                    continue;
                }
                if (st != GPUHIST_OK) {
                    std::printf("FAIL %-26s %-22s n=%-6llu %s: %s\n", label, c.name,
                                (unsigned long long)n, gpuhist_status_string(st), gpuhist_last_error(gpu));
                    ++failures;
                    cudaError_t e = cudaDeviceSynchronize();
                    if (e != cudaSuccess) {
                        std::printf("FATAL: device error after %s: %s\n", label, cudaGetErrorString(e));
                        return 1;
                    }
                    continue;
                }
                std::string dm = diff(got, want, c.bins);
                if (!dm.empty()) {
                    std::printf("FAIL %-26s %-22s n=%-6llu %s\n", label, c.name, (unsigned long long)n,
                                dm.c_str());
                    ++failures;
                }
                /* device in / device out, asynchronous, on a stream: the path the benchmark times */
                if (ncounts <= 256 * 4 && !c.roi_rows) {
                    gpuhist_set_strategy(gpu_async, sn);
                    gpuhist_result r;
                    std::memset(&r, 0, sizeof r);
                    r.counts = dcounts;
                    r.counts_location = GPUHIST_MEMORY_DEVICE;
                    CK(cudaMemsetAsync(dcounts, 0xAB, ncounts * sizeof(uint64_t), stream));
                    st = gpuhist_histogram(gpu_async, &s, &spec, &r);
                    if (st != GPUHIST_OK) {
                        std::printf("FAIL %-26s %-22s n=%-6llu async device counts: %s: %s\n", label,
                                    c.name, (unsigned long long)n, gpuhist_status_string(st),
                                    gpuhist_last_error(gpu_async));
                        ++failures;
                    } else {
                        std::vector<uint64_t> dc(ncounts);
                        CK(cudaStreamSynchronize(stream));
                        CK(cudaMemcpy(dc.data(), dcounts, ncounts * sizeof(uint64_t),
                                      cudaMemcpyDeviceToHost));
                        if (dc != want.counts) {
                            std::printf("FAIL %-26s %-22s n=%-6llu async device counts differ from "
                                        "cpu-reference\n", label, c.name, (unsigned long long)n);
                            ++failures;
                        }
                    }
                }
            }
            /* weighted: f32 then f64 weights, device data and weights against the CPU backend */
            const uint64_t pixels = c.roi_rows ? s.rows * s.row_length : n;
            for (int wd = 0; wd < 2; ++wd) {
                const gpuhist_dtype wt = wd ? GPUHIST_F64 : GPUHIST_F32;
                const size_t ws = gpuhist_dtype_size(wt);
                if (pixels * ws + 16 > max_bytes)
                    continue;
                bench_gen_bits<<<64, 256>>>(dw, pixels * ws + 16, (uint32_t)ws, 1, n * 7 + wd);
                CK_LAUNCH("bench_gen_bits");
                CK(cudaMemcpy(hw.data(), dw, pixels * ws, cudaMemcpyDeviceToHost));
                std::vector<double> wsum(ncounts), wsq(ncounts), gsum(ncounts), gsq(ncounts);
                Out wwant;
                wwant.counts.assign(ncounts, 0);
                wwant.r = gpuhist_result_host(wwant.counts.data());
                wwant.r.sums = wsum.data();
                wwant.r.sums_squared = wsq.data();
                s.data = h.data() + c.offset;
                s.location = GPUHIST_MEMORY_HOST;
                s.weights = hw.data();
                s.weight_dtype = wt;
                st = gpuhist_histogram(wref, &s, &spec, &wwant.r);
                if (st != GPUHIST_OK) {
                    std::printf("FAIL %s n=%llu: cpu weighted: %s\n", c.name, (unsigned long long)n,
                                gpuhist_last_error(wref));
                    ++failures;
                    s.weights = nullptr;
                    continue;
                }
                for (const std::string &name : names) {
                    if (!name.empty() && name.find("weighted") == std::string::npos)
                        continue;
                    if (!sfilter.empty() && (name.empty() || name.find(sfilter) == std::string::npos))
                        continue;
                    const char *label = name.empty() ? "auto" : name.c_str();
                    gpuhist_set_strategy(gpu, name.empty() ? nullptr : name.c_str());
                    s.data = d + c.offset;
                    s.weights = dw;
                    s.location = GPUHIST_MEMORY_DEVICE;
                    Out got;
                    got.counts.assign(ncounts, 0xDEADBEEFDEADBEEFull);
                    got.r = gpuhist_result_host(got.counts.data());
                    got.r.sums = gsum.data();
                    got.r.sums_squared = gsq.data();
                    st = gpuhist_histogram(gpu, &s, &spec, &got.r);
                    ++runs;
                    if (st == GPUHIST_ERROR_UNSUPPORTED) {
                        ++unsupported;
                        continue;
                    }
                    std::string dm = st != GPUHIST_OK ? gpuhist_last_error(gpu)
                                                      : diff(got, wwant, c.bins);
                    if (dm.empty() && (std::memcmp(gsum.data(), wsum.data(), ncounts * 8) ||
                                       std::memcmp(gsq.data(), wsq.data(), ncounts * 8)))
                        dm = "weight sums differ from the CPU backend's bits";
                    if (!dm.empty()) {
                        std::printf("FAIL %-26s %-22s n=%-6llu %s weights: %s\n", label, c.name,
                                    (unsigned long long)n, gpuhist_dtype_name(wt), dm.c_str());
                        ++failures;
                    }
                }
                s.weights = nullptr;
            }
        }
        std::printf("case %-22s done (%d failures so far)\n", c.name, failures);
    }
    CK(cudaDeviceSynchronize());
    CK(cudaFree(d));
    CK(cudaFree(dcounts));
    CK(cudaFree(dw));
    CK(cudaStreamDestroy(stream));
    gpuhist_destroy(gpu);
    gpuhist_destroy(gpu_async);
    gpuhist_destroy(ref);
    gpuhist_destroy(wref);
    std::printf("SANITIZE-DRIVER: %d runs, %d unsupported, %d failures\n", runs, unsupported, failures);
    return failures ? 1 : 0;
}
