/*
 * test_nd_two_pass.cu - N-D histograms of device points past the fused count's slots, counted
 * by cuda-two-pass's passes with each point's joint slot as its key (two_pass.cu's N-D key
 * sources: f32 pairs of certified axes two per vector, any other f32 / f64 chunk point by point):
 * every result equals the CPU backend's on a host copy of the same points, bit for bit (counts,
 * nan / out / total tallies, edges), and the map + 1-D count of the same device points.
 * Cases (argument): f32_4096 (4096 x 4096 f32 even: interleaved and 8-byte aligned, interleaved
 * at an odd float, columns; 1000 x 1000, the two passes' paged mode; constant and all-NaN
 * points: the reference-key runs; the wide mode's regions sampled and halved:
 * GPUHIST_CUDA_TWO_PASS_SAMPLE / _SQUEEZE), f32_4097 (4097 x 4096: past 2^24 joint bins, the map + 1-D
 * count), f64 (f64 pairs 4096 x 4096 and 3000 x 2000 with an EDGES axis, f64 and f32 points of
 * 3 axes), stream (an N-D stream of several device chunks of both layouts and odd starts, and
 * small segments: GPUHIST_CUDA_TWO_PASS_SEGMENT), device (counts and device_stats in device
 * memory, stored - counted straight into the caller's buffer, then with
 * GPUHIST_CUDA_ND_DIRECT=0 through the backend's counters - and accumulated; stored without
 * device_stats, then host counts; stored into a buffer that holds the points). Points: uniform a little beyond the range, 1 in 500
 * coordinates NaN, 1 in 700 +-inf, and some exactly on edges.
 * Seed: GPUHIST_TEST_SEED (default 20261127), printed. Exits 77 without a GPU.
 */
#include "nd_device_test.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" void gpuhist_nd_set_device_fused(int on); /* internal: one-pass count or map + 1-D */

static gpuhist_ctx *g_cpu = nullptr, *g_cuda = nullptr;
static std::mt19937_64 g_rng;

/* n interleaved points of `dims` coordinates of type dt (F32 / F64) for these axes: uniform over
 * each axis's range widened by 5% on each side, 1 in 500 NaN, 1 in 700 +-inf, 1 in 50 exactly
 * on one of the axis's edges (even axes). MODE 1: every point the same; MODE 2: all NaN. */
static std::vector<unsigned char> make_points(gpuhist_dtype dt, uint32_t dims, uint64_t n,
                                              const std::vector<gpuhist_bin_spec> &axes,
                                              int mode = 0)
{
    const size_t sz = gpuhist_dtype_size(dt);
    std::vector<unsigned char> b((size_t)n * dims * sz);
    std::uniform_real_distribution<double> u(-0.05, 1.05);
    for (uint64_t k = 0; k < n * dims; ++k) {
        const gpuhist_bin_spec &ax = axes[k % dims];
        double lo = ax.kind == GPUHIST_BINS_EDGES ? ax.edges[0] : ax.lower;
        double hi = ax.kind == GPUHIST_BINS_EDGES ? ax.edges[ax.bins] : ax.upper;
        double v = lo + (hi - lo) * u(g_rng);
        const uint64_t r = g_rng() % 35000;
        if (r % 500 == 0)
            v = NAN;
        else if (r % 700 == 1)
            v = r & 2 ? INFINITY : -INFINITY;
        else if (r % 50 == 3 && ax.kind == GPUHIST_BINS_EVEN)
            v = lo + (hi - lo) * (double)(g_rng() % (ax.bins + 1)) / ax.bins;
        if (mode == 1)
            v = k % dims ? 0.25 : 0.75;
        else if (mode == 2)
            v = NAN;
        if (dt == GPUHIST_F32) {
            float f = (float)v;
            std::memcpy(&b[k * sz], &f, 4);
        } else {
            std::memcpy(&b[k * sz], &v, 8);
        }
    }
    return b;
}

/* Device copy of host bytes at `offset` bytes into a fresh buffer (odd alignments). */
struct DevBuf {
    unsigned char *base = nullptr;
    unsigned char *at = nullptr;
    DevBuf(const void *host, size_t bytes, size_t offset = 0)
    {
        CK(cudaMalloc(&base, bytes + offset + 16));
        at = base + offset;
        CK(cudaMemcpy(at, host, bytes, cudaMemcpyHostToDevice));
    }
    ~DevBuf() { cudaFree(base); }
};

/* The columns of interleaved points. */
static std::vector<std::vector<unsigned char>> columns_of(const std::vector<unsigned char> &b,
                                                          size_t sz, uint32_t dims, uint64_t n)
{
    std::vector<std::vector<unsigned char>> c(dims, std::vector<unsigned char>((size_t)n * sz));
    for (uint64_t i = 0; i < n; ++i)
        for (uint32_t a = 0; a < dims; ++a)
            std::memcpy(&c[a][(size_t)i * sz], &b[((size_t)i * dims + a) * sz], sz);
    return c;
}

/* The CPU result of interleaved host points against the device's on `dev` (the fused count,
 * which must be the two-pass one when `fused` is expected, and the map + 1-D count). */
static void compare(const char *what, const std::vector<unsigned char> &host, gpuhist_dtype dt,
                    uint32_t dims, uint64_t n, const gpuhist_points &dev,
                    const std::vector<gpuhist_bin_spec> &axes, bool fused)
{
    gpuhist_points hp = gpuhist_points_interleaved(host.data(), dt, dims, n);
    Result want = run(g_cpu, hp, axes);
    CHECK(want.st == GPUHIST_OK, "%s: cpu reference failed: %s", what, want.err.c_str());
    CHECK(want.total == n, "%s: cpu total %llu", what, (unsigned long long)want.total);
    Result got = run(g_cuda, dev, axes);
    CHECK(got.st == GPUHIST_OK, "%s: device failed: %s", what, got.err.c_str());
    CHECK(same(want, got), "%s: device differs from the CPU (nan %llu/%llu out %llu/%llu)", what,
          (unsigned long long)got.nan, (unsigned long long)want.nan,
          (unsigned long long)got.out, (unsigned long long)want.out);
    CHECK(!fused || got.strategy == "cuda-nd-fused", "%s: counted by %s, not the two-pass count",
          what, got.strategy.c_str());
    gpuhist_nd_set_device_fused(0);
    Result mapped = run(g_cuda, dev, axes);
    gpuhist_nd_set_device_fused(1);
    CHECK(same(want, mapped), "%s: the map + 1-D count differs (%s)", what, mapped.err.c_str());
    std::printf("%s: %llu points, nan %llu, out %llu, %s\n", what, (unsigned long long)n,
                (unsigned long long)want.nan, (unsigned long long)want.out, got.strategy.c_str());
    ++g_cases;
}

/* Interleaved at `offset` bytes and as columns. */
static void both_layouts(const char *what, gpuhist_dtype dt, uint32_t dims, uint64_t n,
                         const std::vector<gpuhist_bin_spec> &axes, size_t offset, bool fused,
                         int mode = 0)
{
    const size_t sz = gpuhist_dtype_size(dt);
    std::vector<unsigned char> host = make_points(dt, dims, n, axes, mode);
    DevBuf d(host.data(), host.size(), offset);
    gpuhist_points dp = gpuhist_points_interleaved(d.at, dt, dims, n);
    dp.location = GPUHIST_MEMORY_DEVICE;
    std::string name = std::string(what) + ", interleaved at +" + std::to_string(offset);
    compare(name.c_str(), host, dt, dims, n, dp, axes, fused);
    auto cols = columns_of(host, sz, dims, n);
    std::vector<DevBuf *> dc;
    gpuhist_points cp = gpuhist_points_interleaved(nullptr, dt, dims, n);
    for (uint32_t a = 0; a < dims; ++a) {
        dc.push_back(new DevBuf(cols[a].data(), cols[a].size(), a * sz));
        cp.columns[a] = dc.back()->at;
    }
    cp.data = nullptr;
    cp.location = GPUHIST_MEMORY_DEVICE;
    name = std::string(what) + ", columns";
    compare(name.c_str(), host, dt, dims, n, cp, axes, fused);
    for (DevBuf *b : dc)
        delete b;
}

static std::vector<gpuhist_bin_spec> even2(uint32_t bx, uint32_t by)
{
    return {gpuhist_bins_even(bx, 0.0, 1.0), gpuhist_bins_even(by, 0.0, 1.0)};
}

static void case_f32_4096()
{
    const uint64_t n = 3000017;
    both_layouts("f32 4096 x 4096", GPUHIST_F32, 2, n, even2(4096, 4096), 0, true);
    both_layouts("f32 4096 x 4096 (odd float)", GPUHIST_F32, 2, n, even2(4096, 4096), 4, true);
    both_layouts("f32 4096 x 4096 (+8 bytes)", GPUHIST_F32, 2, 1000003, even2(4096, 4096), 8,
                 true);
    /* even ranges whose certificate is cut, not direct */
    std::vector<gpuhist_bin_spec> odd = {gpuhist_bins_even(3000, -0.3, 0.7),
                                         gpuhist_bins_even(5000, 0.1, 1.3)};
    both_layouts("f32 3000 x 5000 [-0.3, 0.7) x [0.1, 1.3)", GPUHIST_F32, 2, n, odd, 0, true);
    both_layouts("f32 1000 x 1000 (paged mode)", GPUHIST_F32, 2, n, even2(1000, 1000), 0, true);
    both_layouts("f32 4096 x 4096, constant points", GPUHIST_F32, 2, 1000003, even2(4096, 4096),
                 0, true, 1);
    both_layouts("f32 4096 x 4096, all NaN", GPUHIST_F32, 2, 1000003, even2(4096, 4096), 0, true,
                 2);
    both_layouts("f32 4096 x 4096, 5 points", GPUHIST_F32, 2, 5, even2(4096, 4096), 0, true);
    /* the wide mode's regions from a sample of the chunks (one in 3), and halved: points past
     * a region counted by global atomics */
    setenv("GPUHIST_CUDA_TWO_PASS_SAMPLE", "3", 1);
    both_layouts("f32 4096 x 4096, sampled regions", GPUHIST_F32, 2, n, even2(4096, 4096), 0,
                 true);
    setenv("GPUHIST_CUDA_TWO_PASS_SQUEEZE", "1", 1);
    both_layouts("f32 4096 x 4096, sampled and halved regions", GPUHIST_F32, 2, n,
                 even2(4096, 4096), 0, true);
    both_layouts("f32 4096 x 4096, constant points, halved regions", GPUHIST_F32, 2, 1000003,
                 even2(4096, 4096), 0, true, 1);
    unsetenv("GPUHIST_CUDA_TWO_PASS_SAMPLE");
    unsetenv("GPUHIST_CUDA_TWO_PASS_SQUEEZE");
}

static void case_f32_4097()
{
    /* 16781312 joint bins: past the two passes' 2^24, counted by the map + 1-D count */
    both_layouts("f32 4097 x 4096", GPUHIST_F32, 2, 2000003, even2(4097, 4096), 0, false);
}

static void case_f64()
{
    const uint64_t n = 2000003;
    both_layouts("f64 4096 x 4096", GPUHIST_F64, 2, n, even2(4096, 4096), 0, true);
    std::vector<double> e(2001);
    for (size_t k = 0; k < e.size(); ++k) {
        const double t = (double)k / 2000.0;
        e[k] = -1.0 + 3.0 * t * t;
    }
    std::vector<gpuhist_bin_spec> ax = {gpuhist_bins_even(3000, 0.0, 1.0),
                                        gpuhist_bins_edges(2000, e.data())};
    both_layouts("f64 3000 x 2000 (EDGES)", GPUHIST_F64, 2, n, ax, 8, true);
    std::vector<gpuhist_bin_spec> three = {gpuhist_bins_even(256, 0.0, 1.0),
                                           gpuhist_bins_even(256, -1.0, 1.0),
                                           gpuhist_bins_even(200, 0.0, 2.0)};
    both_layouts("f64 256 x 256 x 200", GPUHIST_F64, 3, n, three, 0, true);
    both_layouts("f32 256 x 256 x 200", GPUHIST_F32, 3, n, three, 4, true);
}

/* An N-D stream of device chunks (both layouts, odd starts) against the CPU's one-shot result
 * on the concatenation; then the one-shot device call under small two-pass segments. */
static void case_stream()
{
    const std::vector<gpuhist_bin_spec> axes = even2(4096, 4096);
    const uint64_t n = 4000037;
    std::vector<unsigned char> host = make_points(GPUHIST_F32, 2, n, axes);
    gpuhist_points hp = gpuhist_points_interleaved(host.data(), GPUHIST_F32, 2, n);
    Result want = run(g_cpu, hp, axes);
    CHECK(want.st == GPUHIST_OK, "stream: cpu reference failed: %s", want.err.c_str());
    DevBuf d(host.data(), host.size());
    auto cols = columns_of(host, 4, 2, n);
    DevBuf cx(cols[0].data(), cols[0].size()), cy(cols[1].data(), cols[1].size());
    gpuhist_points layout = gpuhist_points_interleaved(nullptr, GPUHIST_F32, 2, 0);
    layout.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_nd_stream *st = nullptr;
    gpuhist_status s = gpuhist_nd_stream_begin(g_cuda, &layout, axes.data(), &st);
    CHECK(s == GPUHIST_OK, "stream begin: %s", gpuhist_last_error(g_cuda));
    /* chunks: aligned, odd starts (a point at a 4-byte boundary is still 8-byte aligned: the
     * odd ones start at an odd point of an 8-aligned buffer, so every interleaved chunk takes
     * the vector path with a loose head and tail), a column chunk, an empty one */
    const uint64_t cuts[] = {0, 1, 1000001, 1000001, 1733337, 2500000, 3999999, n};
    int k = 0;
    for (size_t i = 0; s == GPUHIST_OK && i + 1 < sizeof cuts / sizeof cuts[0]; ++i, ++k) {
        const uint64_t a = cuts[i], c = cuts[i + 1] - cuts[i];
        gpuhist_points ch = gpuhist_points_interleaved(d.at + a * 8, GPUHIST_F32, 2, c);
        if (k == 3) {
            ch.data = nullptr;
            ch.columns[0] = cx.at + a * 4;
            ch.columns[1] = cy.at + a * 4;
        }
        ch.location = GPUHIST_MEMORY_DEVICE;
        s = gpuhist_nd_stream_feed(st, &ch);
        CHECK(s == GPUHIST_OK, "stream feed %zu: %s", i, gpuhist_last_error(g_cuda));
    }
    Result got;
    got.counts.assign(total_of(axes), 0xDEADBEEF);
    got.edges.assign(2, std::vector<double>(4097, -7.0));
    gpuhist_nd_result res;
    std::memset(&res, 0, sizeof res);
    res.counts = got.counts.data();
    res.edges[0] = got.edges[0].data();
    res.edges[1] = got.edges[1].data();
    if (st) {
        got.st = gpuhist_nd_stream_finish(st, &res);
        got.nan = res.nan, got.out = res.out, got.total = res.total;
        CHECK(got.st == GPUHIST_OK, "stream finish: %s", gpuhist_last_error(g_cuda));
        CHECK(same(want, got), "stream of %d device chunks differs from the CPU", k);
        CHECK(res.strategy && std::string(res.strategy) == "cuda-nd-fused",
              "stream counted by %s", res.strategy ? res.strategy : "?");
        ++g_cases;
    }
    /* several pass pairs per chunk */
    setenv("GPUHIST_CUDA_TWO_PASS_SEGMENT", "300007", 1);
    gpuhist_points dp = gpuhist_points_interleaved(d.at, GPUHIST_F32, 2, n);
    dp.location = GPUHIST_MEMORY_DEVICE;
    Result seg = run(g_cuda, dp, axes);
    unsetenv("GPUHIST_CUDA_TWO_PASS_SEGMENT");
    CHECK(same(want, seg), "segments of 300007 points differ from the CPU (%s)", seg.err.c_str());
    ++g_cases;
    std::printf("stream: %d chunks and segments of 300007 points: %llu points\n", k,
                (unsigned long long)n);
}

/* Counts and tallies in device memory (one-shot calls), stored then accumulated: `nx` x `ny`
 * f32 even bins. */
static void case_device(uint32_t nx, uint32_t ny)
{
    const std::vector<gpuhist_bin_spec> axes = even2(nx, ny);
    const uint64_t n = 3000017, total = total_of(axes);
    std::vector<unsigned char> host = make_points(GPUHIST_F32, 2, n, axes);
    gpuhist_points hp = gpuhist_points_interleaved(host.data(), GPUHIST_F32, 2, n);
    Result want = run(g_cpu, hp, axes);
    DevBuf d(host.data(), host.size());
    gpuhist_points dp = gpuhist_points_interleaved(d.at, GPUHIST_F32, 2, n);
    dp.location = GPUHIST_MEMORY_DEVICE;
    uint64_t *dc = nullptr, *ds = nullptr;
    CK(cudaMalloc(&dc, total * 8));
    CK(cudaMalloc(&ds, 4 * 8));
    CK(cudaMemset(dc, 0xAB, total * 8));
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
        gpuhist_nd_result res;
        std::memset(&res, 0, sizeof res);
        res.counts = dc;
        res.counts_location = GPUHIST_MEMORY_DEVICE;
        res.device_stats = ds;
        res.accumulate = accumulate;
        if (accumulate) { /* the first call's tallies, added into */
            res.nan = want.nan, res.out = want.out, res.total = want.total;
        }
        gpuhist_status s = gpuhist_histogramdd(g_cuda, &dp, axes.data(), &res);
        CHECK(s == GPUHIST_OK, "device counts: %s", gpuhist_last_error(g_cuda));
        const uint64_t times = accumulate ? 2 : 1;
        std::vector<uint64_t> got(total), stats(4);
        CK(cudaMemcpy(got.data(), dc, total * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(stats.data(), ds, 4 * 8, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (uint64_t i = 0; i < total && ok; ++i)
            ok = got[i] == times * want.counts[i];
        CHECK(ok, "device counts (accumulate %d) differ from the CPU's", accumulate);
        CHECK(res.nan == times * want.nan && res.out == times * want.out &&
                  res.total == times * n,
              "device counts (accumulate %d): tallies %llu %llu %llu", accumulate,
              (unsigned long long)res.nan, (unsigned long long)res.out,
              (unsigned long long)res.total);
        CHECK(stats[0] == times * want.nan && stats[1] == times * want.out && stats[2] == 0 &&
                  stats[3] == times * n,
              "device_stats (accumulate %d): %llu %llu %llu %llu", accumulate,
              (unsigned long long)stats[0], (unsigned long long)stats[1],
              (unsigned long long)stats[2], (unsigned long long)stats[3]);
        CHECK(res.strategy && std::string(res.strategy) == "cuda-nd-fused", "counted by %s",
              res.strategy ? res.strategy : "?");
        ++g_cases;
    }
    /* Stored without device_stats (the counts alone), then a call with host counts on the same
     * context (the next count begins with its own counters) */
    {
        gpuhist_nd_result res;
        std::memset(&res, 0, sizeof res);
        res.counts = dc;
        res.counts_location = GPUHIST_MEMORY_DEVICE;
        CK(cudaMemset(dc, 0x5C, total * 8));
        gpuhist_status s = gpuhist_histogramdd(g_cuda, &dp, axes.data(), &res);
        CHECK(s == GPUHIST_OK, "device counts, no device_stats: %s", gpuhist_last_error(g_cuda));
        std::vector<uint64_t> got(total);
        CK(cudaMemcpy(got.data(), dc, total * 8, cudaMemcpyDeviceToHost));
        bool ok = got == want.counts;
        CHECK(ok && res.nan == want.nan && res.out == want.out && res.total == n,
              "device counts without device_stats differ from the CPU's");
        Result host = run(g_cuda, dp, axes);
        CHECK(host.counts == want.counts && host.nan == want.nan && host.out == want.out,
              "host counts after device counts differ from the CPU's");
        g_cases += 2;
    }
    /* Counts that share the points' bytes (the points at the start of the counts' buffer): the
     * points are read whole before any count is written */
    {
        uint64_t *shared = nullptr;
        CK(cudaMalloc(&shared, total * 8));
        CK(cudaMemcpy(shared, host.data(), host.size(), cudaMemcpyHostToDevice));
        gpuhist_points sp = gpuhist_points_interleaved(shared, GPUHIST_F32, 2, n);
        sp.location = GPUHIST_MEMORY_DEVICE;
        gpuhist_nd_result res;
        std::memset(&res, 0, sizeof res);
        res.counts = shared;
        res.counts_location = GPUHIST_MEMORY_DEVICE;
        gpuhist_status s = gpuhist_histogramdd(g_cuda, &sp, axes.data(), &res);
        CHECK(s == GPUHIST_OK, "counts over the points: %s", gpuhist_last_error(g_cuda));
        std::vector<uint64_t> got(total);
        CK(cudaMemcpy(got.data(), shared, total * 8, cudaMemcpyDeviceToHost));
        CHECK(got == want.counts && res.nan == want.nan && res.out == want.out,
              "counts written over their own points differ from the CPU's");
        CK(cudaFree(shared));
        ++g_cases;
    }
    CK(cudaFree(dc));
    CK(cudaFree(ds));
    std::printf("device %u x %u: counts and device_stats stored and accumulated, stored alone, "
                "over the points\n", nx, ny);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 77;
    }
    const char *se = std::getenv("GPUHIST_TEST_SEED");
    const uint64_t seed = se ? std::strtoull(se, nullptr, 10) : 20261127ull;
    std::printf("seed %llu\n", (unsigned long long)seed);
    g_rng.seed(seed);
    if (gpuhist_create(&g_cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_create(&g_cuda, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        std::printf("SKIP: no CUDA context: %s\n", gpuhist_last_error(nullptr));
        return 77;
    }
    if (!std::strcmp(which, "f32_4096"))
        case_f32_4096();
    else if (!std::strcmp(which, "f32_4097"))
        case_f32_4097();
    else if (!std::strcmp(which, "f64"))
        case_f64();
    else if (!std::strcmp(which, "stream"))
        case_stream();
    else if (!std::strcmp(which, "device")) {
        /* stored counts counted straight into the caller's buffer (3000 x 2000: a last bucket
         * of the two passes partly past the bins), then through the backend's counters */
        case_device(4096, 4096);
        case_device(3000, 2000);
        setenv("GPUHIST_CUDA_ND_DIRECT", "0", 1);
        case_device(4096, 4096);
        unsetenv("GPUHIST_CUDA_ND_DIRECT");
    }
    else {
        std::printf("usage: test_nd_two_pass f32_4096|f32_4097|f64|stream|device\n");
        return 2;
    }
    gpuhist_destroy(g_cuda);
    gpuhist_destroy(g_cpu);
    std::printf("%d cases, %d failures\n", g_cases, g_fail);
    return g_fail ? 1 : 0;
}
