/*
 * gpuhist-bench - the CUDA benchmark: the performance matrix (cells and targets:
 * docs/PERFORMANCE.md) and the seed experiments, measured through the public API against CUB
 * DeviceHistogram and the read ceiling on the same device-resident buffer in the same run.
 *
 *   gpuhist-bench --matrix [--bytes 1G] [--json bench/results/latest.json]
 *   gpuhist-bench --seeds            001 Table I, 000 histogram64 vs histogram256, 002's table,
 *                                    001's blocks-per-SM sweep (when the library exposes it)
 *   gpuhist-bench --opencl           004: OpenCL strategies on 100M host floats beside CUDA
 *   gpuhist-bench --quick            everything on small sizes (smoke run)
 *   gpuhist-bench --list             the registered strategies
 *
 * Method: data is generated on the device by a hash PRNG
 * (never managed memory, never zeros); every timed call is bracketed by CUDA events on the stream
 * the context uses, after warm-up (one run, then more until --warmup-ms of them have passed,
 * default 20); the figure is the median of >= --reps runs (fewer, >= 3, only for a strategy
 * whose runs would exceed --budget seconds; 2 when one run exceeds --cap seconds;
 * the JSON records the number of runs). GB/s = input bytes / time. The read ceiling is the best of
 * a few grid sizes of a plain 16-byte-load kernel over the same bytes.
 *
 * Every measured strategy is also checked: bit-exact against cpu-reference on a prefix of the
 * very buffer it is timed on (host counts and tallies), and on the whole buffer its counts must sum
 * to the sample count and equal CUB's where CUB's binning is proven equal on that prefix.
 * A verification failure makes the exit status 1; missing a performance target does not.
 */
#include "bench_common.cuh"

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#ifndef GPUHIST_BENCH_BLOCKS_ENV
#define GPUHIST_BENCH_BLOCKS_ENV "" /* set by CMake when src/cuda reads such a variable */
#endif

/* ------------------------------------------------------------------------------------------ */
/* Options                                                                                     */
/* ------------------------------------------------------------------------------------------ */

struct Opts {
    bool matrix = false, seeds = false, opencl = false, quick = false, list = false;
    uint64_t bytes = 1ull << 30;        /* matrix / 000 input size */
    uint64_t prefix_bytes = 16ull << 20; /* cpu-reference check size */
    int reps = 10;
    double cap_s = 2.0;    /* a run slower than this is timed only twice */
    double budget_s = 2.0; /* fewer (>= 3) runs when reps runs would take longer */
    double warmup_ms = 20.0; /* untimed runs until this much time has passed (>= 2 runs) */
    std::string json_path;
    std::string cells, dists, strategies; /* comma-separated substring filters */
    int device = 0;
    uint64_t seed = 20240611;
    bool verify = true;
    std::string blocks_env = GPUHIST_BENCH_BLOCKS_ENV;
    uint64_t opencl_n = 100000000ull;
    uint64_t seed002_n = 100000000ull;
    double table1_scale = 1.0;
};

static Opts g_opt;
static int g_failures = 0; /* verification failures and unexpected errors */

static void fail_note(const std::string &what)
{
    ++g_failures;
    std::printf("  !! %s\n", what.c_str());
}

static bool filter_match(const std::string &filter, const std::string &name)
{
    if (filter.empty())
        return true;
    size_t start = 0;
    while (start <= filter.size()) {
        size_t end = filter.find(',', start);
        if (end == std::string::npos)
            end = filter.size();
        std::string tok = filter.substr(start, end - start);
        if (!tok.empty() && name.find(tok) != std::string::npos)
            return true;
        start = end + 1;
    }
    return false;
}

static uint64_t parse_size(const char *s)
{
    char *end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || v < 0) {
        std::fprintf(stderr, "bad size '%s'\n", s);
        std::exit(2);
    }
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    case '\0': break;
    default: std::fprintf(stderr, "bad size suffix in '%s'\n", s); std::exit(2);
    }
    return (uint64_t)v;
}

/* ------------------------------------------------------------------------------------------ */
/* Device, stream, events                                                                      */
/* ------------------------------------------------------------------------------------------ */

static cudaDeviceProp g_prop;
static cudaStream_t g_stream;
static cudaEvent_t g_ev0, g_ev1;
static std::string g_date;

static void print_header(const char *what)
{
    std::printf("device: %s\n", g_prop.name);
    std::printf("date: %s\n", g_date.c_str());
    std::printf("gpuhist %s, %d SMs, compute capability %d.%d, %.1f GiB, L2 %d MiB | %s\n",
                gpuhist_version(), g_prop.multiProcessorCount, g_prop.major, g_prop.minor,
                (double)g_prop.totalGlobalMem / (1u << 30), g_prop.l2CacheSize >> 20, what);
}

/* ------------------------------------------------------------------------------------------ */
/* Timing                                                                                      */
/* ------------------------------------------------------------------------------------------ */

enum class CallRes { OK, UNSUPPORTED, FAIL };

struct Timing {
    bool ok = false, unsupported = false, capped = false;
    std::string err;
    double ms = 0; /* median */
    int runs = 0;
};

static double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One timed call: ms receives its duration. */
using OneRun = std::function<CallRes(double &ms, std::string &err)>;

static Timing measure(const OneRun &one)
{
    Timing t;
    double ms = 0;
    std::string err;
    CallRes r = one(ms, err); /* warm-up 1: module load, allocations, first-touch */
    if (r != CallRes::OK) {
        t.unsupported = (r == CallRes::UNSUPPORTED);
        t.err = err;
        return t;
    }
    double t0 = ms;
    /* More warm-up runs, until warmup_ms of them have passed (every measurement alike: the
     * ceiling, CUB, auto, each strategy). After two warm-up runs only, the first timed runs of
     * an instruction-heavy kernel are still slow (f32/4096 with cuda-fast-smem:
     * docs/PERFORMANCE.md, "f32, 4096 even bins"). The last run's time decides how many runs
     * fit. */
    if (t0 < 500.0) {
        double spent = 0;
        int n = 0;
        do {
            if (one(ms, err) != CallRes::OK) {
                t.err = err;
                return t;
            }
            spent += ms;
            ++n;
        } while (spent < g_opt.warmup_ms && n < 1000);
        t0 = ms;
    }
    int runs = g_opt.reps;
    if (t0 > g_opt.cap_s * 1000.0) {
        runs = 2;
        t.capped = true;
    } else if (t0 * runs > g_opt.budget_s * 1000.0) {
        runs = std::max(3, (int)(g_opt.budget_s * 1000.0 / std::max(t0, 1e-3)));
        runs = std::min(runs, g_opt.reps);
    }
    std::vector<double> v;
    for (int i = 0; i < runs; ++i) {
        if (one(ms, err) != CallRes::OK) {
            t.err = "failed on a timed run: " + err;
            return t;
        }
        v.push_back(ms);
    }
    t.ok = true;
    t.ms = median(v);
    t.runs = runs;
    return t;
}

/* Device work on g_stream bracketed by events; `f` must only enqueue (or run synchronously). */
static OneRun device_timed(std::function<CallRes(std::string &)> f)
{
    return [f](double &ms, std::string &err) -> CallRes {
        CK(cudaEventRecord(g_ev0, g_stream));
        CallRes r = f(err);
        if (r != CallRes::OK) {
            /* A sticky device error (illegal address...) cannot be survived: CK exits. */
            CK(cudaStreamSynchronize(g_stream));
            return r;
        }
        CK(cudaEventRecord(g_ev1, g_stream));
        CK(cudaEventSynchronize(g_ev1));
        float f_ms = 0;
        CK(cudaEventElapsedTime(&f_ms, g_ev0, g_ev1));
        ms = f_ms;
        return CallRes::OK;
    };
}

/* Synchronous work timed by the host clock (CPU backend, host input, OpenCL). */
static OneRun host_timed(std::function<CallRes(std::string &)> f)
{
    return [f](double &ms, std::string &err) -> CallRes {
        CK(cudaDeviceSynchronize());
        auto a = std::chrono::steady_clock::now();
        CallRes r = f(err);
        CK(cudaDeviceSynchronize());
        auto b = std::chrono::steady_clock::now();
        ms = std::chrono::duration<double, std::milli>(b - a).count();
        return r;
    };
}

static double gbps(uint64_t bytes, double ms) { return ms > 0 ? (double)bytes / (ms * 1e6) : 0.0; }

/* ------------------------------------------------------------------------------------------ */
/* Histogram specifications                                                                    */
/* ------------------------------------------------------------------------------------------ */

enum Kind { K_EVEN, K_EDGES, K_INTEGER };

struct HistSpec {
    gpuhist_dtype dtype = GPUHIST_U8;
    Kind kind = K_INTEGER;
    uint32_t bins = 256;
    double lower = 0, upper = 1; /* EVEN */
    int64_t ilower = 0;          /* INTEGER */
    uint32_t channels = 1, active = 1;
    std::vector<double> edges; /* EDGES */

    gpuhist_bin_spec spec() const
    {
        switch (kind) {
        case K_EVEN: return gpuhist_bins_even(bins, lower, upper);
        case K_EDGES: return gpuhist_bins_edges(bins, edges.data());
        default: return gpuhist_bins_integer(bins, ilower);
        }
    }
    gpuhist_samples samples(const void *data, uint64_t pixels, gpuhist_memory where) const
    {
        gpuhist_samples s;
        std::memset(&s, 0, sizeof s);
        s.data = data;
        s.dtype = dtype;
        s.count = pixels;
        s.channels = channels;
        s.active_channels = active;
        s.location = where;
        return s;
    }
    std::string describe() const
    {
        char b[160];
        const char *k = kind == K_EVEN ? "even" : kind == K_EDGES ? "edges" : "integer";
        if (channels > 1)
            std::snprintf(b, sizeof b, "%s x%u ch (%u active), %u %s bins", gpuhist_dtype_name(dtype),
                          channels, active, bins, k);
        else
            std::snprintf(b, sizeof b, "%s, %u %s bins", gpuhist_dtype_name(dtype), bins, k);
        return b;
    }
};

/* Host counts + tallies of one computation. */
struct Counts {
    std::vector<uint64_t> counts;
    uint32_t channels = 0;
    uint64_t under[GPUHIST_MAX_CHANNELS] = {}, over[GPUHIST_MAX_CHANNELS] = {},
             nan[GPUHIST_MAX_CHANNELS] = {}, total[GPUHIST_MAX_CHANNELS] = {};
    bool have_tallies = false;
};

/* "" when equal; otherwise what differs (first difference, how many). */
static std::string compare_counts(const Counts &a, const Counts &b, uint32_t bins,
                                  const char *an, const char *bn)
{
    char msg[320];
    if (a.counts.size() != b.counts.size()) {
        std::snprintf(msg, sizeof msg, "%s has %zu counts, %s %zu", an, a.counts.size(), bn,
                      b.counts.size());
        return msg;
    }
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < a.counts.size(); ++i)
        if (a.counts[i] != b.counts[i] && diff++ == 0)
            first = i;
    if (diff) {
        std::snprintf(msg, sizeof msg,
                      "%zu of %zu counts differ; first: channel %zu bin %zu: %s %llu, %s %llu",
                      diff, a.counts.size(), first / bins, first % bins, an,
                      (unsigned long long)a.counts[first], bn, (unsigned long long)b.counts[first]);
        return msg;
    }
    if (a.have_tallies && b.have_tallies) {
        for (uint32_t c = 0; c < a.channels; ++c) {
            if (a.under[c] != b.under[c] || a.over[c] != b.over[c] || a.nan[c] != b.nan[c] ||
                a.total[c] != b.total[c]) {
                std::snprintf(msg, sizeof msg,
                              "channel %u tallies differ (under/over/nan/total): %s %llu/%llu/%llu/%llu, "
                              "%s %llu/%llu/%llu/%llu",
                              c, an, (unsigned long long)a.under[c], (unsigned long long)a.over[c],
                              (unsigned long long)a.nan[c], (unsigned long long)a.total[c], bn,
                              (unsigned long long)b.under[c], (unsigned long long)b.over[c],
                              (unsigned long long)b.nan[c], (unsigned long long)b.total[c]);
                return msg;
            }
        }
    }
    return "";
}

static std::string status_msg(gpuhist_ctx *ctx, gpuhist_status st)
{
    std::string m = gpuhist_status_string(st);
    const char *e = ctx ? gpuhist_last_error(ctx) : nullptr;
    if (e && *e)
        m += std::string(": ") + e;
    return m;
}

/* A synchronous call writing host counts (samples anywhere). */
static gpuhist_status run_host_counts(gpuhist_ctx *ctx, const HistSpec &hs,
                                      const gpuhist_samples &s, Counts &out, std::string &err,
                                      std::string *ran = nullptr)
{
    out.counts.assign((size_t)hs.bins * hs.active, ~0ull); /* poison: every count must be written */
    gpuhist_bin_spec spec = hs.spec();
    gpuhist_result r = gpuhist_result_host(out.counts.data());
    gpuhist_status st = gpuhist_histogram(ctx, &s, &spec, &r);
    if (st != GPUHIST_OK) {
        err = status_msg(ctx, st);
        return st;
    }
    out.channels = r.channels;
    for (uint32_t c = 0; c < r.channels && c < GPUHIST_MAX_CHANNELS; ++c) {
        out.under[c] = r.underflow[c];
        out.over[c] = r.overflow[c];
        out.nan[c] = r.nan[c];
        out.total[c] = r.total[c];
    }
    out.have_tallies = true;
    if (ran)
        *ran = r.strategy ? r.strategy : "?";
    return GPUHIST_OK;
}

static gpuhist_ctx *make_ctx(gpuhist_backend b, bool async_device)
{
    gpuhist_ctx *ctx = nullptr;
    gpuhist_status st = gpuhist_create_on(&ctx, b, b == GPUHIST_BACKEND_CPU ? 0 : g_opt.device);
    if (st != GPUHIST_OK) {
        std::printf("  cannot create a %s context: %s\n", gpuhist_backend_name(b),
                    gpuhist_status_string(st));
        return nullptr;
    }
    if (async_device) {
        if (gpuhist_set_stream(ctx, (void *)g_stream) != GPUHIST_OK ||
            gpuhist_set_async(ctx, 1) != GPUHIST_OK) {
            std::printf("  cannot set stream/async: %s\n", gpuhist_last_error(ctx));
            gpuhist_destroy(ctx);
            return nullptr;
        }
    }
    return ctx;
}

/* ------------------------------------------------------------------------------------------ */
/* Data generation                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* The hot / constant value of each dtype: inside one bin of every cell (bin 97 of 256 for u8,
 * 0.3 lies strictly inside a bin for every power-of-two bin count over [0, 1)). */
static const uint32_t HOT_U8 = 97, HOT_U16 = 40000;
static const float HOT_F32 = 0.3f;

static void generate(void *d, gpuhist_dtype dtype, uint64_t elements, int dist, uint64_t seed)
{
    int grid = bench_gen_grid();
    switch (dtype) {
    case GPUHIST_U8:
        bench_gen_u8<<<grid, 256>>>((uint8_t *)d, elements, dist, seed, HOT_U8);
        break;
    case GPUHIST_U16:
        bench_gen_u16<<<grid, 256>>>((uint16_t *)d, elements, dist, seed, HOT_U16);
        break;
    case GPUHIST_F32:
        bench_gen_f32<<<grid, 256>>>((float *)d, elements, dist, seed, HOT_F32);
        break;
    default:
        std::fprintf(stderr, "generate: dtype %s not supported\n", gpuhist_dtype_name(dtype));
        std::exit(2);
    }
    CK_LAUNCH("data generator");
    CK(cudaDeviceSynchronize());
}

/* ------------------------------------------------------------------------------------------ */
/* Read ceiling                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Streams the buffer with 16-byte loads, four in flight per thread, folding them into a value
 * that decides a (never taken) store, so no load can be optimised away. */
__global__ void __launch_bounds__(256) read_ceiling_kernel(const uint4 *__restrict__ p,
                                                           uint64_t n16, unsigned *sink)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
        acc += (a.x ^ a.y ^ a.z ^ a.w) + (b.x ^ b.y ^ b.z ^ b.w) + (c.x ^ c.y ^ c.z ^ c.w) +
               (d.x ^ d.y ^ d.z ^ d.w);
    }
    for (; i < n16; i += stride) {
        uint4 a = p[i];
        acc += a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9E3779B9u)
        sink[0] = acc;
}

static unsigned *g_sink;

/* Best median over a few grid sizes (blocks of 256 threads per SM). */
static Timing measure_ceiling(const void *d, uint64_t bytes)
{
    uint64_t n16 = bytes / 16;
    Timing best;
    for (int per_sm : {4, 8, 16}) {
        int grid = g_prop.multiProcessorCount * per_sm;
        Timing t = measure(device_timed([=](std::string &) {
            read_ceiling_kernel<<<grid, 256, 0, g_stream>>>((const uint4 *)d, n16, g_sink);
            CK_LAUNCH("read ceiling kernel");
            return CallRes::OK;
        }));
        if (t.ok && (!best.ok || t.ms < best.ms))
            best = t;
    }
    return best;
}

/* ------------------------------------------------------------------------------------------ */
/* CUB DeviceHistogram                                                                          */
/* ------------------------------------------------------------------------------------------ */

struct Cub {
    void *temp = nullptr;
    size_t temp_cap = 0;
    unsigned *counts = nullptr; /* active * bins, 32-bit counters (CUB's CounterT) */
    size_t counts_cap = 0;
    float *levels = nullptr;
    size_t levels_cap = 0;

    /* Why this spec has no CUB equivalent, or "" if it has one. */
    static std::string unsupported(const HistSpec &hs, uint64_t pixels)
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
        }
        if (((hs.channels == 4 && hs.active >= 2) || (hs.channels == 2 && hs.active == 2)) &&
            hs.dtype == GPUHIST_U8 && hs.kind == K_INTEGER && hs.ilower == 0)
            return "";
        return "no matching DeviceHistogram call";
    }

    /* u8 interleaved, the first A of C channels histogrammed (integer bins from 0). */
    template <int C, int A>
    cudaError_t multi(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
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
    cudaError_t call(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
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
        int lo = hs.kind == K_INTEGER ? 0 : (int)hs.lower;
        int hi = hs.kind == K_INTEGER ? (int)hs.bins : (int)hs.upper;
        if (hs.dtype == GPUHIST_U8)
            return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const uint8_t *)d, counts,
                                                       nl, lo, hi, n, s);
        return cub::DeviceHistogram::HistogramEven(d_temp, bytes, (const uint16_t *)d, counts, nl,
                                                   lo, hi, n, s);
    }

    /* Size temp storage, counters and levels for this spec (outside any timing). */
    void prepare(const HistSpec &hs, const void *d, uint64_t pixels)
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

    CallRes run(const HistSpec &hs, const void *d, uint64_t pixels, std::string &err)
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

    Counts fetch(const HistSpec &hs)
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
};

static Cub g_cub;

/* ------------------------------------------------------------------------------------------ */
/* gpuhist strategies, device resident                                                         */
/* ------------------------------------------------------------------------------------------ */

static uint64_t *g_dcounts; /* device counts of the async context */
static size_t g_dcounts_cap;

struct StratRun {
    std::string requested, ran;
    Timing t;
    Counts full; /* counts of the last timed run (no tallies: async) */
};

/* Time `name` (nullptr = auto) on device samples with device counts, asynchronously. */
static StratRun time_device_strategy(gpuhist_ctx *actx, const char *name, const HistSpec &hs,
                                     const void *d, uint64_t pixels)
{
    StratRun sr;
    sr.requested = name ? name : "auto";
    gpuhist_status st = gpuhist_set_strategy(actx, name);
    if (st != GPUHIST_OK) {
        sr.t.err = status_msg(actx, st);
        sr.t.unsupported = (st == GPUHIST_ERROR_UNKNOWN_STRATEGY);
        return sr;
    }
    size_t nc = (size_t)hs.bins * hs.active;
    if (nc > g_dcounts_cap) {
        sr.t.err = "bench: device counts buffer too small";
        return sr;
    }
    gpuhist_samples s = hs.samples(d, pixels, GPUHIST_MEMORY_DEVICE);
    gpuhist_bin_spec spec = hs.spec();
    std::string *ran = &sr.ran;
    /* poison, so counts a strategy failed to write cannot pass as the previous strategy's */
    CK(cudaMemset(g_dcounts, 0xFF, nc * sizeof(uint64_t)));
    sr.t = measure(device_timed([&, ran](std::string &err) {
        gpuhist_result r;
        std::memset(&r, 0, sizeof r);
        r.counts = g_dcounts;
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        gpuhist_status s2 = gpuhist_histogram(actx, &s, &spec, &r);
        if (s2 == GPUHIST_ERROR_UNSUPPORTED) {
            err = status_msg(actx, s2);
            return CallRes::UNSUPPORTED;
        }
        if (s2 != GPUHIST_OK) {
            err = status_msg(actx, s2);
            return CallRes::FAIL;
        }
        *ran = r.strategy ? r.strategy : (name ? name : "auto");
        return CallRes::OK;
    }));
    if (sr.t.ok) {
        CK(cudaStreamSynchronize(g_stream));
        sr.full.counts.resize(nc);
        CK(cudaMemcpy(sr.full.counts.data(), g_dcounts, nc * sizeof(uint64_t),
                      cudaMemcpyDeviceToHost));
        sr.full.channels = hs.active;
    }
    return sr;
}

static std::string sums_check(const Counts &c, uint32_t bins, uint32_t active, uint64_t expect)
{
    for (uint32_t ch = 0; ch < active; ++ch) {
        uint64_t sum = 0;
        for (uint32_t b = 0; b < bins; ++b)
            sum += c.counts[(size_t)ch * bins + b];
        if (sum != expect) {
            char m[160];
            std::snprintf(m, sizeof m, "channel %u: counts sum to %llu, expected %llu", ch,
                          (unsigned long long)sum, (unsigned long long)expect);
            return m;
        }
    }
    return "";
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                        */
/* ------------------------------------------------------------------------------------------ */

static std::string jstr(const std::string &s)
{
    std::string o = "\"";
    for (char ch : s) {
        unsigned char c = (unsigned char)ch;
        if (c == '"' || c == '\\') {
            o += '\\';
            o += ch;
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += ch;
        }
    }
    return o + "\"";
}

static std::string jnum(double v)
{
    if (!std::isfinite(v))
        return "null";
    char b[64];
    std::snprintf(b, sizeof b, "%.4g", v);
    if (std::fabs(v) >= 1e4) /* GB/s: keep one decimal rather than an exponent */
        std::snprintf(b, sizeof b, "%.1f", v);
    return b;
}

struct Entry {
    std::string cell, dtype, dist, strategy, requested, verify;
    uint32_t bins = 0, channels = 1, active = 1;
    double ms = 0, gbps = 0, ceiling_gbps = 0, cub_gbps = 0, target = 0;
    int runs = 0;
    bool capped = false, is_auto = false;
    /* auto rows: */
    std::string best_strategy;
    double best_gbps = 0;
    bool extra_10x_cub = false; /* the 2^20 cell's second target */
};

static std::vector<Entry> g_entries;

static std::string entry_json(const Entry &e, bool with_auto_fields)
{
    double cr = e.ceiling_gbps > 0 ? e.gbps / e.ceiling_gbps : 0;
    double vc = e.cub_gbps > 0 ? e.gbps / e.cub_gbps : 0;
    std::string s = "{\"name\": " + jstr(e.cell) + ", \"dtype\": " + jstr(e.dtype) +
                    ", \"bins\": " + std::to_string(e.bins) + ", \"dist\": " + jstr(e.dist) +
                    ", \"strategy\": " + jstr(e.strategy) + ", \"gbps\": " + jnum(e.gbps) +
                    ", \"ceiling_ratio\": " + jnum(cr) + ", \"cub_gbps\": " +
                    (e.cub_gbps > 0 ? jnum(e.cub_gbps) : std::string("null")) +
                    ", \"vs_cub\": " + (e.cub_gbps > 0 ? jnum(vc) : std::string("null")) +
                    ", \"target_ceiling_ratio\": " + jnum(e.target);
    s += ", \"channels\": " + std::to_string(e.channels) +
         ", \"active_channels\": " + std::to_string(e.active) +
         ", \"ceiling_gbps\": " + jnum(e.ceiling_gbps) + ", \"ms\": " + jnum(e.ms) +
         ", \"runs\": " + std::to_string(e.runs) + ", \"capped\": " + (e.capped ? "true" : "false") +
         ", \"verified\": " + jstr(e.verify);
    if (with_auto_fields) {
        bool met = cr >= e.target && (!e.extra_10x_cub || (e.cub_gbps > 0 && vc >= 10.0));
        s += ", \"best_strategy\": " + jstr(e.best_strategy) + ", \"best_gbps\": " +
             jnum(e.best_gbps) + ", \"auto_vs_best\": " +
             jnum(e.best_gbps > 0 ? e.gbps / e.best_gbps : 0) +
             ", \"meets_target\": " + (met ? "true" : "false");
        if (e.extra_10x_cub)
            s += ", \"target_vs_cub\": 10";
    } else {
        s += ", \"requested\": " + jstr(e.requested);
    }
    return s + "}";
}

static bool g_matrix_complete = false; /* false while the matrix runs or after a fatal error */

static void write_json()
{
    /* rewritten after every cell, so a run cut short (timeout, fatal error) leaves what it had */
    if (g_opt.json_path.empty())
        return;
    std::vector<double> ceilings;
    for (const Entry &e : g_entries)
        if (e.is_auto && e.ceiling_gbps > 0)
            ceilings.push_back(e.ceiling_gbps);
    FILE *f = std::fopen(g_opt.json_path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "cannot write %s\n", g_opt.json_path.c_str());
        ++g_failures;
        return;
    }
    std::fprintf(f, "{\n  \"device\": %s,\n  \"date\": %s,\n  \"ceiling_gbps\": %s,\n",
                 jstr(g_prop.name).c_str(), jstr(g_date).c_str(), jnum(median(ceilings)).c_str());
    std::fprintf(f, "  \"bytes\": %llu,\n  \"gpuhist_version\": %s,\n  \"complete\": %s,\n",
                 (unsigned long long)g_opt.bytes, jstr(gpuhist_version()).c_str(),
                 g_matrix_complete ? "true" : "false");
    std::fprintf(f, "  \"cells\": [\n");
    bool first = true;
    for (const Entry &e : g_entries) {
        if (!e.is_auto)
            continue;
        std::fprintf(f, "%s    %s", first ? "" : ",\n", entry_json(e, true).c_str());
        first = false;
    }
    std::fprintf(f, "\n  ],\n  \"all\": [\n");
    first = true;
    for (const Entry &e : g_entries) {
        if (e.is_auto)
            continue;
        std::fprintf(f, "%s    %s", first ? "" : ",\n", entry_json(e, false).c_str());
        first = false;
    }
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
    if (g_matrix_complete)
        std::printf("wrote %s\n", g_opt.json_path.c_str());
}

static void write_json_on_fatal() { write_json(); }

/* ------------------------------------------------------------------------------------------ */
/* The matrix                                                                                   */
/* ------------------------------------------------------------------------------------------ */

struct Cell {
    const char *name;
    HistSpec hs;
    double target[DIST_COUNT];
    bool ten_x_cub;
    bool extra = false; /* not a matrix cell: no target, runs only when --cells names it */
};

static std::vector<Cell> matrix_cells()
{
    std::vector<Cell> cells;
    auto add = [&](const char *name, gpuhist_dtype dt, Kind k, uint32_t bins, uint32_t ch,
                   uint32_t act, std::vector<double> tg, bool ten = false, bool extra = false) {
        Cell c;
        c.name = name;
        c.hs.dtype = dt;
        c.hs.kind = k;
        c.hs.bins = bins;
        c.hs.lower = 0.0;
        c.hs.upper = 1.0;
        c.hs.ilower = 0;
        c.hs.channels = ch;
        c.hs.active = act;
        if (k == K_EDGES) {
            /* a quadratic curve: narrow bins near 0, wide near 1; exact in float */
            for (uint32_t i = 0; i <= bins; ++i)
                c.hs.edges.push_back(((double)i / bins) * ((double)i / bins));
        }
        for (int d = 0; d < DIST_COUNT; ++d)
            c.target[d] = tg.size() == 1 ? tg[0] : tg[d];
        c.ten_x_cub = ten;
        c.extra = extra;
        cells.push_back(c);
    };
    add("u8_256", GPUHIST_U8, K_INTEGER, 256, 1, 1, {0.75, 0.95, 0.95, 0.75});
    add("f32_256", GPUHIST_F32, K_EVEN, 256, 1, 1, {0.95});
    add("f32_4096", GPUHIST_F32, K_EVEN, 4096, 1, 1, {0.95});
    add("f32_65536", GPUHIST_F32, K_EVEN, 65536, 1, 1, {0.75});
    add("u16_65536", GPUHIST_U16, K_INTEGER, 65536, 1, 1, {0.75});
    add("f32_1M", GPUHIST_F32, K_EVEN, 1u << 20, 1, 1, {0.25}, true);
    add("f32_256_edges", GPUHIST_F32, K_EDGES, 256, 1, 1, {0.90});
    add("rgba_u8_3x256", GPUHIST_U8, K_INTEGER, 256, 4, 3, {0.75});
    /* Extra cells (no target): other channel layouts, run only when --cells names them
     * (evidence for the auto policy's choice on them). */
    add("x_rgba_u8_4x256", GPUHIST_U8, K_INTEGER, 256, 4, 4, {0.0}, false, true);
    add("x_rgba_u8_2x256", GPUHIST_U8, K_INTEGER, 256, 4, 2, {0.0}, false, true);
    add("x_rg_u8_2x256", GPUHIST_U8, K_INTEGER, 256, 2, 2, {0.0}, false, true);
    return cells;
}

struct Ctxs {
    gpuhist_ctx *async = nullptr; /* device in / device out, async, g_stream: timing */
    gpuhist_ctx *sync = nullptr;  /* host counts + tallies: verification */
    gpuhist_ctx *ref = nullptr;   /* CPU cpu-reference */
    bool ok() const { return async && sync && ref; }
    void destroy()
    {
        gpuhist_destroy(async);
        gpuhist_destroy(sync);
        gpuhist_destroy(ref);
        async = sync = ref = nullptr;
    }
};

static Ctxs make_ctxs()
{
    Ctxs c;
    c.async = make_ctx(GPUHIST_BACKEND_CUDA, true);
    c.sync = make_ctx(GPUHIST_BACKEND_CUDA, false);
    c.ref = make_ctx(GPUHIST_BACKEND_CPU, false);
    if (c.ref && gpuhist_set_strategy(c.ref, "cpu-reference") != GPUHIST_OK) {
        std::printf("  cpu-reference not registered (%s); checking against CPU auto instead\n",
                    gpuhist_last_error(c.ref));
    }
    return c;
}

static void alloc_device_counts(size_t n)
{
    if (n <= g_dcounts_cap)
        return;
    if (g_dcounts)
        CK(cudaFree(g_dcounts));
    CK(cudaMalloc(&g_dcounts, n * sizeof(uint64_t)));
    g_dcounts_cap = n;
}

/* The prefix check: cpu-reference on a host copy vs `name` on the device prefix. */
struct PrefixRef {
    bool ok = false;
    uint64_t pixels = 0;
    Counts ref;
    std::string err;
};

static PrefixRef prefix_reference(Ctxs &cx, const HistSpec &hs, const void *d, uint64_t pixels)
{
    PrefixRef p;
    size_t px_bytes = gpuhist_dtype_size(hs.dtype) * hs.channels;
    uint64_t want = g_opt.prefix_bytes / px_bytes;
    /* an odd count, so tails and partial vectors are exercised */
    p.pixels = std::min(pixels, want > 8 ? want - 3 : want);
    std::vector<unsigned char> host(p.pixels * px_bytes);
    CK(cudaMemcpy(host.data(), d, host.size(), cudaMemcpyDeviceToHost));
    gpuhist_samples s = hs.samples(host.data(), p.pixels, GPUHIST_MEMORY_HOST);
    gpuhist_status st = run_host_counts(cx.ref, hs, s, p.ref, p.err);
    p.ok = (st == GPUHIST_OK);
    return p;
}

static std::string prefix_check(Ctxs &cx, const char *name, const HistSpec &hs, const void *d,
                                const PrefixRef &pr, bool *unsupported)
{
    *unsupported = false;
    if (!pr.ok)
        return "";
    gpuhist_status st = gpuhist_set_strategy(cx.sync, name);
    if (st != GPUHIST_OK)
        return "set_strategy: " + status_msg(cx.sync, st);
    Counts got;
    std::string err;
    gpuhist_samples s = hs.samples(d, pr.pixels, GPUHIST_MEMORY_DEVICE);
    st = run_host_counts(cx.sync, hs, s, got, err);
    if (st == GPUHIST_ERROR_UNSUPPORTED) {
        *unsupported = true;
        return "";
    }
    if (st != GPUHIST_OK)
        return "prefix run failed: " + err;
    std::string c = compare_counts(got, pr.ref, hs.bins, "gpu", "cpu-reference");
    return c.empty() ? "" : "prefix vs cpu-reference: " + c;
}

static int run_matrix(uint64_t bytes)
{
    print_header("matrix");
    std::printf("input %.3f GB per buffer, device resident; median of >= %d runs (fewer only past "
                "%.1f s per strategy; 2 past %.1f s per run)\n\n",
                bytes / 1e9, g_opt.reps, g_opt.budget_s, g_opt.cap_s);
    Ctxs cx = make_ctxs();
    if (!cx.ok()) {
        fail_note("matrix: cannot create contexts");
        cx.destroy();
        return 1;
    }
    unsigned char *d = nullptr;
    CK(cudaMalloc(&d, bytes + 64));
    CK(cudaMemset(d, 0, bytes + 64));
    std::vector<std::string> strategies = bench_strategies_of(GPUHIST_BACKEND_CUDA);
    std::vector<Cell> cells = matrix_cells();
    size_t max_counts = 0;
    for (const Cell &c : cells)
        max_counts = std::max(max_counts, (size_t)c.hs.bins * c.hs.active);
    alloc_device_counts(max_counts);

    std::printf("MATRIX %-14s %-8s %-24s %8s %6s %6s %8s %7s %7s %s\n", "cell", "dist", "auto ran",
                "GB/s", "ceil", "target", "CUB", "vs CUB", "vs best", "check");
    struct SummaryRow {
        std::string cell, dist, strat;
        double gbps, ratio, target, cub, vs_cub, best_gbps;
        std::string best;
        bool met, ten;
        std::string verify;
        bool extra;
    };
    std::vector<SummaryRow> summary;

    for (const Cell &cell : cells) {
        if (!filter_match(g_opt.cells, cell.name) || (cell.extra && g_opt.cells.empty()))
            continue;
        const HistSpec &hs = cell.hs;
        size_t ss = gpuhist_dtype_size(hs.dtype);
        uint64_t pixels = bytes / (ss * hs.channels);
        uint64_t in_bytes = pixels * ss * hs.channels;
        for (int dist = 0; dist < DIST_COUNT; ++dist) {
            if (!filter_match(g_opt.dists, dist_names[dist]))
                continue;
            std::printf("== %s [%s] dist=%s: %llu pixels, %.3f GB\n", cell.name,
                        hs.describe().c_str(), dist_names[dist], (unsigned long long)pixels,
                        in_bytes / 1e9);
            generate(d, hs.dtype, pixels * hs.channels, dist, g_opt.seed + 977 * dist);

            Timing ceil_t = measure_ceiling(d, in_bytes);
            double ceil_g = ceil_t.ok ? gbps(in_bytes, ceil_t.ms) : 0;

            /* CUB: time it and keep its counts as the whole-buffer oracle if it proves equal to
             * cpu-reference on the prefix. */
            double cub_g = 0;
            Counts cub_full;
            bool cub_oracle = false;
            std::string cub_why = Cub::unsupported(hs, pixels);
            PrefixRef pr;
            if (g_opt.verify) {
                pr = prefix_reference(cx, hs, d, pixels);
                if (!pr.ok)
                    fail_note(std::string("cpu-reference failed on the prefix: ") + pr.err);
            }
            if (cub_why.empty()) {
                g_cub.prepare(hs, d, pixels);
                Timing ct = measure(device_timed(
                    [&](std::string &err) { return g_cub.run(hs, d, pixels, err); }));
                if (ct.ok) {
                    cub_g = gbps(in_bytes, ct.ms);
                    cub_full = g_cub.fetch(hs);
                    if (pr.ok) {
                        g_cub.prepare(hs, d, pr.pixels);
                        std::string e2;
                        if (g_cub.run(hs, d, pr.pixels, e2) == CallRes::OK) {
                            Counts cp = g_cub.fetch(hs);
                            cub_oracle =
                                compare_counts(cp, pr.ref, hs.bins, "CUB", "ref").empty();
                        }
                        if (!cub_oracle)
                            std::printf("  note: CUB's binning differs from cpu-reference on the "
                                        "prefix; whole-buffer check is counts' sums only\n");
                    }
                } else {
                    std::printf("  CUB failed: %s\n", ct.err.c_str());
                }
                Entry e;
                e.cell = cell.name;
                e.dtype = gpuhist_dtype_name(hs.dtype);
                e.dist = dist_names[dist];
                e.strategy = e.requested = "cub";
                e.bins = hs.bins;
                e.channels = hs.channels;
                e.active = hs.active;
                e.ms = ct.ms;
                e.gbps = cub_g;
                e.ceiling_gbps = ceil_g;
                e.cub_gbps = cub_g;
                e.target = cell.target[dist];
                e.runs = ct.runs;
                e.capped = ct.capped;
                e.verify = cub_oracle ? "ok (prefix vs cpu-reference)" : "not checked";
                g_entries.push_back(e);
            } else {
                std::printf("  CUB: not measured (%s)\n", cub_why.c_str());
            }

            std::printf("  %-28s %9s %7s %7s %5s  %s\n", "strategy", "GB/s", "/ceil", "/CUB",
                        "runs", "check");
            std::printf("  %-28s %9.1f %7.3f %7s %5d\n", "read ceiling", ceil_g, 1.0, "",
                        ceil_t.runs);
            if (cub_g > 0)
                std::printf("  %-28s %9.1f %7.3f %7.2f %5s  %s\n", "CUB DeviceHistogram", cub_g,
                            ceil_g > 0 ? cub_g / ceil_g : 0, 1.0, "",
                            cub_oracle ? "= cpu-reference on prefix" : "");

            std::vector<std::string> names;
            names.push_back(""); /* auto first */
            for (const std::string &n : strategies)
                if (filter_match(g_opt.strategies, n))
                    names.push_back(n);
            Entry auto_entry;
            std::string best_name;
            double best_g = 0;
            for (const std::string &n : names) {
                const char *name = n.empty() ? nullptr : n.c_str();
                std::string verify;
                bool unsup = false;
                if (g_opt.verify) {
                    verify = prefix_check(cx, name, hs, d, pr, &unsup);
                    if (unsup) {
                        std::printf("  %-28s %9s\n", n.c_str(), "unsupported");
                        continue;
                    }
                }
                StratRun sr = time_device_strategy(cx.async, name, hs, d, pixels);
                std::string label = n.empty() ? "auto (" + sr.ran + ")" : n;
                if (!sr.t.ok) {
                    if (sr.t.unsupported) {
                        std::printf("  %-28s %9s\n", label.c_str(), "unsupported");
                    } else {
                        std::printf("  %-28s %9s  %s\n", label.c_str(), "ERROR", sr.t.err.c_str());
                        fail_note(std::string(cell.name) + "/" + dist_names[dist] + " " +
                                  label + ": " + sr.t.err);
                    }
                    continue;
                }
                if (g_opt.verify) {
                    std::string sums = sums_check(sr.full, hs.bins, hs.active, pixels);
                    std::string vs_cub =
                        cub_oracle ? compare_counts(sr.full, cub_full, hs.bins, "gpuhist", "CUB")
                                   : "";
                    if (verify.empty() && !sums.empty())
                        verify = "whole buffer: " + sums;
                    if (verify.empty() && !vs_cub.empty())
                        verify = "whole buffer vs CUB: " + vs_cub;
                    if (!verify.empty()) {
                        fail_note(std::string(cell.name) + "/" + dist_names[dist] + " " + label +
                                  ": " + verify);
                        verify = "FAIL: " + verify;
                    } else {
                        verify = cub_oracle ? "ok" : "ok (prefix + sums)";
                    }
                } else {
                    verify = "skipped";
                }
                double g = gbps(in_bytes, sr.t.ms);
                char vs[32] = "-";
                if (cub_g > 0)
                    std::snprintf(vs, sizeof vs, "%.2f", g / cub_g);
                std::printf("  %-28s %9.1f %7.3f %7s %5d%s  %s\n", label.c_str(), g,
                            ceil_g > 0 ? g / ceil_g : 0, vs, sr.t.runs, sr.t.capped ? "*" : " ",
                            verify.c_str());
                Entry e;
                e.cell = cell.name;
                e.dtype = gpuhist_dtype_name(hs.dtype);
                e.dist = dist_names[dist];
                e.strategy = n.empty() ? sr.ran : n;
                e.requested = n.empty() ? "auto" : n;
                e.bins = hs.bins;
                e.channels = hs.channels;
                e.active = hs.active;
                e.ms = sr.t.ms;
                e.gbps = g;
                e.ceiling_gbps = ceil_g;
                e.cub_gbps = cub_g;
                e.target = cell.target[dist];
                e.runs = sr.t.runs;
                e.capped = sr.t.capped;
                e.verify = verify;
                e.extra_10x_cub = cell.ten_x_cub;
                if (n.empty()) {
                    auto_entry = e;
                    auto_entry.is_auto = true;
                } else {
                    g_entries.push_back(e);
                    if (g > best_g) {
                        best_g = g;
                        best_name = n;
                    }
                }
            }
            if (!auto_entry.is_auto) {
                fail_note(std::string(cell.name) + "/" + dist_names[dist] +
                          ": auto did not run");
                continue;
            }
            auto_entry.best_strategy = best_name;
            auto_entry.best_gbps = best_g;
            g_entries.push_back(auto_entry);
            g_entries.back().is_auto = true;
            {
                /* auto also goes into "all", as requested = auto */
                Entry a2 = auto_entry;
                a2.is_auto = false;
                g_entries.push_back(a2);
            }
            double ratio = ceil_g > 0 ? auto_entry.gbps / ceil_g : 0;
            double vs_cub = cub_g > 0 ? auto_entry.gbps / cub_g : 0;
            bool met = ratio >= cell.target[dist] && (!cell.ten_x_cub || vs_cub >= 10.0);
            summary.push_back({cell.name, dist_names[dist], auto_entry.strategy, auto_entry.gbps,
                               ratio, cell.target[dist], cub_g, vs_cub, best_g, best_name, met,
                               cell.ten_x_cub, auto_entry.verify, cell.extra});
            const SummaryRow &r = summary.back();
            /* one MATRIX line per cell as soon as it is measured (scripts/gpu-check greps them;
             * they survive a run cut short) */
            std::printf("MATRIX %-14s %-8s %-24s %8.1f %6.3f %5.2f%s %8.1f %7.2f %7.3f %s\n\n",
                        r.cell.c_str(), r.dist.c_str(), r.strat.c_str(), r.gbps, r.ratio, r.target,
                        r.met ? " " : "*", r.cub, r.vs_cub,
                        r.best_gbps > 0 ? r.gbps / r.best_gbps : 0.0,
                        r.verify.substr(0, 40).c_str());
            write_json();
        }
    }
    CK(cudaFree(d));
    cx.destroy();

    size_t rows = 0, missed = 0; /* extra cells have no target: not counted */
    for (const SummaryRow &r : summary) {
        rows += !r.extra;
        missed += !r.extra && !r.met;
    }
    std::printf("MATRIX device: %s  date: %s  (auto ran = the strategy auto chose; ceil = GB/s / "
                "read ceiling; * = target missed)\n",
                g_prop.name, g_date.c_str());
    std::printf("MATRIX targets met: %zu of %zu; verification failures so far: %d\n",
                rows - missed, rows, g_failures);
    return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Seed experiments                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* A row of a seed table: one way of computing one histogram. */
struct Row {
    std::string label;
    Timing t;
    std::string check; /* "" ok */
    std::string ran;
};

static HistSpec u8_256()
{
    HistSpec h;
    h.dtype = GPUHIST_U8;
    h.kind = K_INTEGER;
    h.bins = 256;
    return h;
}

/* gpuhist on device data, checked against `oracle` (when non-empty) or the sums. */
static Row device_row(Ctxs &cx, const char *label, const char *name, const HistSpec &hs,
                      const void *d, uint64_t pixels, const Counts *oracle)
{
    Row row;
    row.label = label;
    StratRun sr = time_device_strategy(cx.async, name, hs, d, pixels);
    row.t = sr.t;
    row.ran = sr.ran;
    if (!sr.t.ok)
        return row;
    if (oracle && !oracle->counts.empty())
        row.check = compare_counts(sr.full, *oracle, hs.bins, "gpuhist", "oracle");
    else if (hs.kind == K_INTEGER && hs.bins >= 256 && hs.dtype == GPUHIST_U8)
        row.check = sums_check(sr.full, hs.bins, hs.active, pixels);
    return row;
}

/* gpuhist on host data (any backend), timed by the host clock. */
static Row host_row(gpuhist_ctx *ctx, const char *label, const char *name, const HistSpec &hs,
                    const void *h, uint64_t pixels, const Counts *oracle)
{
    Row row;
    row.label = label;
    if (!ctx) {
        row.t.err = "no context";
        return row;
    }
    gpuhist_status st = gpuhist_set_strategy(ctx, name);
    if (st != GPUHIST_OK) {
        row.t.err = status_msg(ctx, st);
        row.t.unsupported = true;
        return row;
    }
    gpuhist_samples s = hs.samples(h, pixels, GPUHIST_MEMORY_HOST);
    Counts got;
    std::string *ran = &row.ran;
    row.t = measure(host_timed([&, ran](std::string &err) {
        gpuhist_status s2 = run_host_counts(ctx, hs, s, got, err, ran);
        if (s2 == GPUHIST_ERROR_UNSUPPORTED)
            return CallRes::UNSUPPORTED;
        return s2 == GPUHIST_OK ? CallRes::OK : CallRes::FAIL;
    }));
    if (row.t.ok) {
        if (oracle && !oracle->counts.empty())
            row.check = compare_counts(got, *oracle, hs.bins, "gpuhist", "oracle");
        else
            for (uint32_t c = 0; c < got.channels; ++c)
                if (got.total[c] != pixels)
                    row.check = "total " + std::to_string(got.total[c]) + " != " +
                                std::to_string(pixels);
    }
    return row;
}

static Row cub_row(const HistSpec &hs, const void *d, uint64_t pixels, Counts *out)
{
    Row row;
    row.label = "CUB DeviceHistogram";
    std::string why = Cub::unsupported(hs, pixels);
    if (!why.empty()) {
        row.t.err = why;
        row.t.unsupported = true;
        return row;
    }
    g_cub.prepare(hs, d, pixels);
    row.t = measure(device_timed([&](std::string &err) { return g_cub.run(hs, d, pixels, err); }));
    if (row.t.ok && out)
        *out = g_cub.fetch(hs);
    return row;
}

static Row ceiling_row(const void *d, uint64_t bytes)
{
    Row row;
    row.label = "read ceiling (16-byte loads)";
    row.t = measure_ceiling(d, bytes);
    return row;
}

static void check_row(const Row &r, const char *table)
{
    if (!r.t.ok && !r.t.unsupported)
        fail_note(std::string(table) + " " + r.label + ": " + r.t.err);
    if (r.t.ok && !r.check.empty())
        fail_note(std::string(table) + " " + r.label + ": " + r.check);
}

static void print_rows_gbps(const std::vector<Row> &rows, uint64_t bytes, double ceil_g,
                            double cub_g, const char *seed_col_name,
                            const std::vector<std::string> &seed_col)
{
    std::printf("  %-36s %9s %9s %7s %7s %5s  %-14s %s\n", "method", "ms", "GB/s", "/ceil", "/CUB",
                "runs", seed_col_name, "check");
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row &r = rows[i];
        std::string lab = r.label;
        if (!r.ran.empty() && lab.find("auto") != std::string::npos)
            lab += " (" + r.ran + ")";
        const char *seedv = i < seed_col.size() ? seed_col[i].c_str() : "";
        if (!r.t.ok) {
            std::printf("  %-36s %9s %9s %7s %7s %5s  %-14s %s\n", lab.c_str(),
                        r.t.unsupported ? "n/a" : "ERROR", "", "", "", "", seedv,
                        r.t.err.substr(0, 80).c_str());
            continue;
        }
        double g = gbps(bytes, r.t.ms);
        std::printf("  %-36s %9.3f %9.1f %7.3f %7.2f %4d%s  %-14s %s\n", lab.c_str(), r.t.ms, g,
                    ceil_g > 0 ? g / ceil_g : 0, cub_g > 0 ? g / cub_g : 0, r.t.runs,
                    r.t.capped ? "*" : " ", seedv, r.check.empty() ? "ok" : r.check.c_str());
    }
}

static int run_seeds(bool quick)
{
    print_header("seed experiments");
    Ctxs cx = make_ctxs();
    if (!cx.ok()) {
        fail_note("seeds: cannot create contexts");
        cx.destroy();
        return 1;
    }
    gpuhist_ctx *cpu = make_ctx(GPUHIST_BACKEND_CPU, false);
    alloc_device_counts(65536 * 4);

    /* ---- 001 Table I ---------------------------------------------------------------------- */
    {
        const int mb[5] = {50, 100, 200, 300, 400};
        double scale = quick ? 1.0 / 50 : g_opt.table1_scale;
        uint64_t maxb = (uint64_t)(400.0 * scale * (1 << 20));
        std::printf("\n=== seed 001 Table I: 256-bin histogram of random bytes, times in ms "
                    "(MB = 2^20 bytes%s)\n",
                    quick ? "; quick: sizes / 50" : "");
        std::printf("GPU rows are device resident (CUDA events); CPU rows and the host-input row "
                    "are wall time on host memory\n");
        unsigned char *d = nullptr;
        CK(cudaMalloc(&d, maxb + 64));
        generate(d, GPUHIST_U8, maxb, DIST_UNIFORM, g_opt.seed + 1);
        std::vector<unsigned char> h(maxb);
        CK(cudaMemcpy(h.data(), d, maxb, cudaMemcpyDeviceToHost));
        HistSpec hs = u8_256();
        const char *labels[] = {"gpuhist cpu-serial",          "gpuhist cpu-threads",
                                "cuda-global-atomic (seed: global)",
                                "cuda-block-shared (seed: shared)", "cuda-block-shared, host input",
                                "gpuhist auto (device)",       "CUB DeviceHistogram",
                                "read ceiling"};
        const char *seedrow[] = {"Core 2 Duo: 170 350 690 1050 1390", "", "GT 610: 140.9 281 569.3 841.1 1122.2",
                                 "GT 610: 38.8 74.1 147.8 220 316.3", "", "", "", ""};
        const int nrows = 8;
        std::vector<std::vector<Row>> grid(nrows);
        for (int si = 0; si < 5; ++si) {
            uint64_t n = (uint64_t)(mb[si] * scale * (1 << 20));
            Counts cubc;
            Row cub = cub_row(hs, d, n, &cubc);
            const Counts *orc = cub.t.ok ? &cubc : nullptr;
            grid[0].push_back(host_row(cpu, labels[0], "cpu-serial", hs, h.data(), n, orc));
            grid[1].push_back(host_row(cpu, labels[1], "cpu-threads", hs, h.data(), n, orc));
            grid[2].push_back(device_row(cx, labels[2], "cuda-global-atomic", hs, d, n, orc));
            grid[3].push_back(device_row(cx, labels[3], "cuda-block-shared", hs, d, n, orc));
            grid[4].push_back(host_row(cx.sync, labels[4], "cuda-block-shared", hs, h.data(), n, orc));
            grid[5].push_back(device_row(cx, labels[5], nullptr, hs, d, n, orc));
            grid[6].push_back(cub);
            grid[7].push_back(ceiling_row(d, n));
        }
        std::printf("  %-36s", "size (MB)");
        for (int si = 0; si < 5; ++si)
            std::printf(" %10.4g", mb[si] * scale);
        std::printf("   seed (2013)\n");
        for (int r = 0; r < nrows; ++r) {
            std::printf("  %-36s", labels[r]);
            for (int si = 0; si < 5; ++si) {
                const Row &x = grid[r][si];
                check_row(x, "001");
                if (x.t.ok)
                    std::printf(" %10.3f", x.t.ms);
                else
                    std::printf(" %10s", x.t.unsupported ? "n/a" : "ERROR");
            }
            std::printf("   %s\n", seedrow[r]);
        }
        for (int r = 0; r < nrows; ++r)
            for (int si = 0; si < 5; ++si)
                if (!grid[r][si].t.ok && !grid[r][si].t.err.empty()) {
                    std::printf("  (%s @%d: %s)\n", labels[r], mb[si], grid[r][si].t.err.c_str());
                    break;
                }
        std::printf("  sums: every row above is checked bin by bin against CUB on the same "
                    "bytes (total = size)%s\n", g_failures ? "; see !! lines" : "");
        CK(cudaFree(d));
    }

    /* ---- 000: histogram64 / histogram256 ------------------------------------------------- */
    {
        uint64_t n = g_opt.bytes;
        std::printf("\n=== seed 000: histogram64 / histogram256 on %.3f GB of uniform random bytes "
                    "(device resident)\n", n / 1e9);
        std::printf("seed: G80, histogram64 ~10 GB/s data-independent; histogram256 data-dependent\n");
        unsigned char *d = nullptr;
        CK(cudaMalloc(&d, n + 64));
        generate(d, GPUHIST_U8, n, DIST_UNIFORM, g_opt.seed + 2);
        Row ceil = ceiling_row(d, n);
        double ceil_g = ceil.t.ok ? gbps(n, ceil.t.ms) : 0;
        struct V {
            const char *name;
            int bins;
        } vs[] = {{"cuda-histogram64", 64}, {"cuda-histogram64-atomic", 64},
                  {"cuda-histogram256", 256}, {"cuda-histogram256-tagged", 256}};
        for (int bins : {64, 256}) {
            /* 64 bins of bytes = value >> 2: even bins over [0, 256) (what the SDK sample does);
             * 256 bins: one per value. */
            HistSpec hs = u8_256();
            if (bins == 64) {
                hs.kind = K_EVEN;
                hs.bins = 64;
                hs.lower = 0;
                hs.upper = 256;
            }
            Counts cubc;
            Row cub = cub_row(hs, d, n, &cubc);
            double cub_g = cub.t.ok ? gbps(n, cub.t.ms) : 0;
            std::vector<Row> rows;
            for (const V &v : vs)
                if (v.bins == bins)
                    rows.push_back(device_row(cx, v.name, v.name, hs, d, n, cub.t.ok ? &cubc : nullptr));
            rows.push_back(device_row(cx, "gpuhist auto", nullptr, hs, d, n, cub.t.ok ? &cubc : nullptr));
            rows.push_back(cub);
            rows.push_back(ceil);
            std::printf(" %s:\n", hs.describe().c_str());
            for (const Row &r : rows)
                check_row(r, "000");
            print_rows_gbps(rows, n, ceil_g, cub_g, "", {});
        }
        CK(cudaFree(d));
    }

    /* ---- 002's table --------------------------------------------------------------------- */
    {
        uint64_t n = quick ? 4000000ull : g_opt.seed002_n;
        std::printf("\n=== seed 002's table: %llu elements, device resident\n", (unsigned long long)n);
        unsigned char *d = nullptr;
        CK(cudaMalloc(&d, n * 4 + 64));
        struct Case {
            const char *title;
            gpuhist_dtype dt;
            int dist;
            Kind kind;
            uint32_t bins;
            std::vector<const char *> strats;
            std::vector<std::string> seedv;
        } cases[] = {
            {"256 bins, u8 uniform", GPUHIST_U8, DIST_UNIFORM, K_INTEGER, 256,
             {"cuda-global-atomic", "cuda-optimized", "cuda-block-shared", "cuda-warp-aggregated"},
             {"naive 2.1 GB/s", "opt. 320 GB/s"}},
            {"256 bins, u8 hot bin (90% of samples)", GPUHIST_U8, DIST_HOT90, K_INTEGER, 256,
             {"cuda-global-atomic", "cuda-optimized", "cuda-block-shared", "cuda-warp-aggregated"},
             {"naive 0.3 GB/s", "opt. 85 GB/s"}},
            {"64K bins, u16 uniform (one per value)", GPUHIST_U16, DIST_UNIFORM, K_INTEGER, 65536,
             {"cuda-global-atomic", "cuda-sort-rle", "cuda-multipass", "cuda-block-shared"},
             {"naive 1.8 GB/s", "sort 95 GB/s"}},
            {"64K bins, f32 uniform (even over [0,1))", GPUHIST_F32, DIST_UNIFORM, K_EVEN, 65536,
             {"cuda-global-atomic", "cuda-sort-rle", "cuda-multipass", "cuda-block-shared"},
             {"naive 1.8 GB/s", "sort 95 GB/s"}},
        };
        for (Case &c : cases) {
            HistSpec hs;
            hs.dtype = c.dt;
            hs.kind = c.kind;
            hs.bins = c.bins;
            hs.lower = 0;
            hs.upper = 1;
            uint64_t in_bytes = n * gpuhist_dtype_size(c.dt);
            generate(d, c.dt, n, c.dist, g_opt.seed + 3);
            Counts cubc;
            Row cub = cub_row(hs, d, n, &cubc);
            double cub_g = cub.t.ok ? gbps(in_bytes, cub.t.ms) : 0;
            Row ceil = ceiling_row(d, in_bytes);
            double ceil_g = ceil.t.ok ? gbps(in_bytes, ceil.t.ms) : 0;
            std::vector<Row> rows;
            for (const char *s : c.strats)
                rows.push_back(device_row(cx, s, s, hs, d, n, cub.t.ok ? &cubc : nullptr));
            rows.push_back(device_row(cx, "gpuhist auto", nullptr, hs, d, n, cub.t.ok ? &cubc : nullptr));
            rows.push_back(cub);
            rows.push_back(ceil);
            std::printf(" %s (%.3f GB):\n", c.title, in_bytes / 1e9);
            for (const Row &r : rows)
                check_row(r, "002");
            print_rows_gbps(rows, in_bytes, ceil_g, cub_g, "seed (002)", c.seedv);
        }
        CK(cudaFree(d));
    }

    /* ---- 001 block count: grid = k x SMs ----------------------------------------------------- */
    {
        std::printf("\n=== seed 001 block count: cuda-block-shared, grid = k x SMs, u8 256 bins\n");
        if (g_opt.blocks_env.empty()) {
            std::printf("  skipped: the CUDA backend exposes no blocks-per-SM setting (build with "
                        "one read from an environment variable, or pass --blocks-env NAME)\n");
        } else {
            uint64_t n = g_opt.bytes;
            unsigned char *d = nullptr;
            CK(cudaMalloc(&d, n + 64));
            generate(d, GPUHIST_U8, n, DIST_UNIFORM, g_opt.seed + 4);
            HistSpec hs = u8_256();
            Counts cubc;
            Row cub = cub_row(hs, d, n, &cubc);
            Row ceil = ceiling_row(d, n);
            std::vector<Row> rows;
            std::string old = getenv(g_opt.blocks_env.c_str()) ? getenv(g_opt.blocks_env.c_str()) : "";
            for (int k : {1, 2, 4, 8}) {
                setenv(g_opt.blocks_env.c_str(), std::to_string(k).c_str(), 1);
                Ctxs c2; /* fresh contexts: the variable may be read when a context opens */
                c2.async = make_ctx(GPUHIST_BACKEND_CUDA, true);
                std::string lab = "cuda-block-shared, " + g_opt.blocks_env + "=" + std::to_string(k);
                if (c2.async)
                    rows.push_back(device_row(c2, lab.c_str(), "cuda-block-shared", hs, d, n,
                                              cub.t.ok ? &cubc : nullptr));
                gpuhist_destroy(c2.async);
            }
            if (old.empty())
                unsetenv(g_opt.blocks_env.c_str());
            else
                setenv(g_opt.blocks_env.c_str(), old.c_str(), 1);
            rows.push_back(cub);
            rows.push_back(ceil);
            for (const Row &r : rows)
                check_row(r, "001-blocks");
            print_rows_gbps(rows, n, ceil.t.ok ? gbps(n, ceil.t.ms) : 0,
                            cub.t.ok ? gbps(n, cub.t.ms) : 0, "", {});
            CK(cudaFree(d));
        }
    }
    gpuhist_destroy(cpu);
    cx.destroy();
    std::printf("\nSEEDS verification failures: %d\n", g_failures);
    return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Seed 004 on OpenCL                                                                           */
/* ------------------------------------------------------------------------------------------ */

#if GPUHIST_BENCH_HAVE_OPENCL
extern "C" double gpuhist_opencl_last_kernel_seconds(const gpuhist_ctx *ctx);
#endif

static int run_opencl(uint64_t n)
{
    print_header("seed 004 (OpenCL)");
    if (!gpuhist_backend_compiled(GPUHIST_BACKEND_OPENCL)) {
        std::printf("OPENCL skipped: the library was built without the OpenCL backend\n");
        return 77;
    }
    char list[2048] = "";
    if (gpuhist_list_devices(GPUHIST_BACKEND_OPENCL, list, sizeof list) == GPUHIST_OK)
        std::printf("OpenCL devices:\n%s\n", list);
    gpuhist_ctx *ocl = nullptr;
    gpuhist_status st = gpuhist_create(&ocl, GPUHIST_BACKEND_OPENCL);
    if (st != GPUHIST_OK) {
        fail_note(std::string("cannot create an OpenCL context: ") + gpuhist_status_string(st));
        return 1;
    }
    std::printf("OpenCL device used: %s\n", gpuhist_device_name(ocl));
    Ctxs cx = make_ctxs();
    gpuhist_ctx *cpu = make_ctx(GPUHIST_BACKEND_CPU, false);
    if (!cx.ok() || !cpu) {
        fail_note("opencl: cannot create CUDA/CPU contexts");
        gpuhist_destroy(ocl);
        gpuhist_destroy(cpu);
        cx.destroy();
        return 1;
    }
    alloc_device_counts(256);
    float *d = nullptr;
    CK(cudaMalloc(&d, n * 4 + 64));
    generate(d, GPUHIST_F32, n, DIST_UNIFORM, g_opt.seed + 5);
    std::vector<float> h(n);
    CK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
    uint64_t bytes = n * 4;
    std::printf("\n=== seed 004: %llu uniform floats in [0, 1), even bins; OpenCL and 'host input' "
                "rows are wall time INCLUDING the host-to-device transfer; 'device' rows are "
                "CUDA-event time on device-resident data\n",
                (unsigned long long)n);
    std::vector<std::string> ocl_names = bench_strategies_of(GPUHIST_BACKEND_OPENCL);
    std::vector<std::string> cuda_names = bench_strategies_of(GPUHIST_BACKEND_CUDA);
    for (uint32_t bins : {16u, 256u}) {
        HistSpec hs;
        hs.dtype = GPUHIST_F32;
        hs.kind = K_EVEN;
        hs.bins = bins;
        hs.lower = 0;
        hs.upper = 1;
        /* oracle: the CPU backend's own choice on the same host floats */
        Counts oracle;
        std::string err;
        gpuhist_set_strategy(cpu, nullptr);
        gpuhist_samples hsm = hs.samples(h.data(), n, GPUHIST_MEMORY_HOST);
        if (run_host_counts(cpu, hs, hsm, oracle, err) != GPUHIST_OK) {
            fail_note("CPU oracle failed: " + err);
            oracle.counts.clear();
        }
        std::vector<Row> rows;
        for (const std::string &s : ocl_names)
            if (filter_match(g_opt.strategies, s))
                rows.push_back(host_row(ocl, s.c_str(), s.c_str(), hs, h.data(), n, &oracle));
        rows.push_back(host_row(ocl, "opencl auto", nullptr, hs, h.data(), n, &oracle));
#if GPUHIST_BENCH_HAVE_OPENCL
        /* The rows above include the pageable host-to-device copy (~10 GB/s), which hides the
         * kernels; the backend records its kernels' device time (OpenCL profiling events). */
        for (const std::string &s : ocl_names) {
            if (!filter_match(g_opt.strategies, s) || gpuhist_set_strategy(ocl, s.c_str()) != GPUHIST_OK)
                continue;
            std::vector<double> ks;
            for (int rep = 0; rep < 5; ++rep) {
                Counts got;
                std::string err;
                if (run_host_counts(ocl, hs, hsm, got, err) != GPUHIST_OK)
                    break;
                ks.push_back(gpuhist_opencl_last_kernel_seconds(ocl));
            }
            if (ks.empty())
                continue;
            std::sort(ks.begin(), ks.end());
            double kms = ks[ks.size() / 2] * 1e3;
            std::printf("OPENCL-KERNEL %u bins  %-22s kernels only %9.3f ms  %8.1f GB/s\n", bins,
                        s.c_str(), kms, kms > 0 ? bytes / (kms * 1e6) : 0.0);
        }
#endif
        for (const std::string &s : cuda_names) {
            if (!filter_match(g_opt.strategies, s))
                continue;
            std::string lab = s + ", host input";
            rows.push_back(host_row(cx.sync, lab.c_str(), s.c_str(), hs, h.data(), n, &oracle));
        }
        rows.push_back(host_row(cx.sync, "cuda auto, host input", nullptr, hs, h.data(), n, &oracle));
        for (const std::string &s : cuda_names) {
            if (!filter_match(g_opt.strategies, s))
                continue;
            std::string lab = s + ", device";
            rows.push_back(device_row(cx, lab.c_str(), s.c_str(), hs, d, n, &oracle));
        }
        rows.push_back(device_row(cx, "cuda auto, device", nullptr, hs, d, n, &oracle));
        Row cub = cub_row(hs, d, n, nullptr);
        cub.label = "CUB, device";
        rows.push_back(cub);
        Row ceil = ceiling_row(d, bytes);
        rows.push_back(ceil);
        std::printf(" %u bins (%.3f GB of input):\n", bins, bytes / 1e9);
        for (const Row &r : rows)
            check_row(r, "004");
        print_rows_gbps(rows, bytes, ceil.t.ok ? gbps(bytes, ceil.t.ms) : 0,
                        cub.t.ok ? gbps(bytes, cub.t.ms) : 0, "", {});
    }
    CK(cudaFree(d));
    gpuhist_destroy(ocl);
    gpuhist_destroy(cpu);
    cx.destroy();
    std::printf("\nOPENCL verification failures: %d\n", g_failures);
    return g_failures ? 1 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* main                                                                                        */
/* ------------------------------------------------------------------------------------------ */

static void usage()
{
    std::printf(
        "usage: gpuhist-bench MODE... [options]\n"
        "modes:  --matrix  --seeds  --opencl  --quick (all, small)  --list\n"
        "options:\n"
        "  --bytes N          matrix / seed-000 input size (suffix K, M, G; default 1G)\n"
        "  --json PATH        write the matrix JSON to PATH\n"
        "  --reps N           timed runs per measurement (default 10)\n"
        "  --cap S            a run slower than S seconds is timed only twice (default 2)\n"
        "  --budget S         fewer runs (>= 3) when reps runs exceed S seconds (default 2)\n"
        "  --warmup-ms MS     untimed runs before each measurement: until MS of them (default 20)\n"
        "  --prefix-bytes N   size of the cpu-reference check (default 16M)\n"
        "  --cells a,b        only cells whose name contains a or b (matrix)\n"
        "  --dists a,b        only these distributions (matrix)\n"
        "  --strategies a,b   only strategies whose name contains a or b (auto always runs)\n"
        "  --no-verify        skip the correctness checks\n"
        "  --device N         CUDA device (default 0)\n"
        "  --seed N           data seed\n"
        "  --blocks-env NAME  the blocks-per-SM variable of the CUDA backend (default: %s)\n"
        "  --opencl-n N       floats for --opencl (default 100000000)\n"
        "  --seed002-n N      elements for seed 002's table (default 100000000)\n"
        "  --table1-scale X   scale seed 001's sizes (default 1)\n",
        *GPUHIST_BENCH_BLOCKS_ENV ? GPUHIST_BENCH_BLOCKS_ENV : "none found in src/cuda");
}

int main(int argc, char **argv)
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0); /* logs stay readable when a run is cut short */
    Opts &o = g_opt;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> const char * {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--matrix") o.matrix = true;
        else if (a == "--seeds") o.seeds = true;
        else if (a == "--opencl") o.opencl = true;
        else if (a == "--quick") o.quick = true;
        else if (a == "--list") o.list = true;
        else if (a == "--bytes") o.bytes = parse_size(next());
        else if (a == "--json") o.json_path = next();
        else if (a == "--reps") o.reps = std::max(1, std::atoi(next()));
        else if (a == "--cap") o.cap_s = std::atof(next());
        else if (a == "--warmup-ms") o.warmup_ms = std::atof(next());
        else if (a == "--budget") o.budget_s = std::atof(next());
        else if (a == "--prefix-bytes") o.prefix_bytes = parse_size(next());
        else if (a == "--cells") o.cells = next();
        else if (a == "--dists") o.dists = next();
        else if (a == "--strategies") o.strategies = next();
        else if (a == "--no-verify") o.verify = false;
        else if (a == "--device") o.device = std::atoi(next());
        else if (a == "--seed") o.seed = std::strtoull(next(), nullptr, 0);
        else if (a == "--blocks-env") o.blocks_env = next();
        else if (a == "--opencl-n") o.opencl_n = parse_size(next());
        else if (a == "--seed002-n") o.seed002_n = parse_size(next());
        else if (a == "--table1-scale") o.table1_scale = std::atof(next());
        else if (a == "-h" || a == "--help") { usage(); return 0; }
        else {
            std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
            usage();
            return 2;
        }
    }
    if (o.list) {
        size_t n = gpuhist_strategy_count();
        for (size_t i = 0; i < n; ++i) {
            gpuhist_strategy_desc d;
            if (gpuhist_strategy_info(i, &d) == GPUHIST_OK)
                std::printf("%-28s %-7s %s | %s\n", d.name, gpuhist_backend_name(d.backend),
                            d.supports ? d.supports : "", d.summary ? d.summary : "");
        }
        if (!o.matrix && !o.seeds && !o.opencl && !o.quick)
            return 0;
    }
    if (!o.matrix && !o.seeds && !o.opencl && !o.quick)
        o.matrix = true;
    if (o.bytes < 4096) {
        std::fprintf(stderr, "--bytes must be at least 4096\n");
        return 2;
    }
    if (!gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA)) {
        std::printf("gpuhist was built without the CUDA backend: nothing to measure\n");
        return 77;
    }
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        std::printf("no CUDA device (%s): nothing to measure\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    CK(cudaSetDevice(o.device));
    CK(cudaGetDeviceProperties(&g_prop, o.device));
    CK(cudaStreamCreate(&g_stream));
    CK(cudaEventCreate(&g_ev0));
    CK(cudaEventCreate(&g_ev1));
    CK(cudaMalloc(&g_sink, 16));
    g_date = bench_now_string();

    int rc = 0;
    auto merge = [&](int r) {
        if (r == 1 || (r != 0 && r != 77 && rc == 0))
            rc = r;
    };
    if (o.quick) {
        Opts saved = o;
        o.bytes = std::min<uint64_t>(o.bytes, 16ull << 20);
        o.prefix_bytes = std::min<uint64_t>(o.prefix_bytes, 2ull << 20);
        o.reps = std::min(o.reps, 3);
        bench_on_fatal = write_json_on_fatal;
        merge(run_matrix(o.bytes));
        bench_on_fatal = nullptr;
        g_matrix_complete = true;
        write_json();
        std::printf("\n");
        merge(run_seeds(true));
        std::printf("\n");
        merge(run_opencl(std::min<uint64_t>(o.opencl_n, 2000000)));
        o = saved;
    } else {
        if (o.matrix) {
            bench_on_fatal = write_json_on_fatal;
            merge(run_matrix(o.bytes));
            bench_on_fatal = nullptr;
            g_matrix_complete = true;
            write_json();
        }
        if (o.seeds) {
            std::printf("\n");
            merge(run_seeds(false));
        }
        if (o.opencl) {
            std::printf("\n");
            int r = run_opencl(o.opencl_n);
            if (r == 77 && !o.matrix && !o.seeds)
                return 77;
            merge(r);
        }
    }
    std::printf("\ngpuhist-bench: %s (%d verification failures or errors)\n",
                rc == 0 ? "OK" : "FAILED", g_failures);
    return rc;
}
