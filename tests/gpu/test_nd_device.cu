/*
 * test_nd_device.cu - N-D histograms of points in device memory (the CUDA backend's nd_map):
 * every result equals the CPU backend's on a host copy of the same points, bit for bit (counts,
 * nan / out tallies, edges and the auto ranges), for every coordinate type, 1 to 8 dimensions,
 * interleaved points and columns, EVEN (with and without range), EDGES and INTEGER axes, NaN and
 * out-of-range coordinates, the map cut in several pieces, AUTO location detection, the N-D
 * stream fed device chunks; large joint histograms (4096 x 4096 f32: the two-pass count of the
 * points; 4097 x 4096 and i32 3000 x 3000: their slots counted by the 1-D strategies;
 * `test_nd_device large` skips the four random rounds); and the refusals (weights, a host chunk
 * in a device stream).
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

extern "C" void gpuhist_nd_set_chunk_points(uint64_t points); /* internal: the map's pieces */
extern "C" void gpuhist_nd_set_device_fused(int on); /* internal: one-pass count or map + 1-D */

struct Points {
    gpuhist_dtype dtype;
    uint32_t dims;
    uint64_t count;
    std::vector<unsigned char> bytes; /* interleaved */
};

static void put(std::vector<unsigned char> &b, size_t at, gpuhist_dtype dt, double v, int64_t iv)
{
    switch (dt) {
    case GPUHIST_U8: { uint8_t x = (uint8_t)iv; std::memcpy(&b[at], &x, 1); break; }
    case GPUHIST_I8: { int8_t x = (int8_t)iv; std::memcpy(&b[at], &x, 1); break; }
    case GPUHIST_U16: { uint16_t x = (uint16_t)iv; std::memcpy(&b[at], &x, 2); break; }
    case GPUHIST_I16: { int16_t x = (int16_t)iv; std::memcpy(&b[at], &x, 2); break; }
    case GPUHIST_U32: { uint32_t x = (uint32_t)iv; std::memcpy(&b[at], &x, 4); break; }
    case GPUHIST_I32: { int32_t x = (int32_t)iv; std::memcpy(&b[at], &x, 4); break; }
    case GPUHIST_U64: { uint64_t x = (uint64_t)iv; std::memcpy(&b[at], &x, 8); break; }
    case GPUHIST_I64: { int64_t x = iv; std::memcpy(&b[at], &x, 8); break; }
    case GPUHIST_F32: { float x = (float)v; std::memcpy(&b[at], &x, 4); break; }
    default: { std::memcpy(&b[at], &v, 8); break; }
    }
}

static bool is_float(gpuhist_dtype dt) { return dt == GPUHIST_F32 || dt == GPUHIST_F64; }

/* Random points: floats in about [-0.2, 1.2) with some NaN / inf; integers in [-5, 300). */
static Points make_points(std::mt19937_64 &rng, gpuhist_dtype dt, uint32_t dims, uint64_t n)
{
    Points p{dt, dims, n, {}};
    size_t sz = gpuhist_dtype_size(dt);
    p.bytes.assign((size_t)n * dims * sz, 0);
    std::uniform_real_distribution<double> u(-0.2, 1.2);
    std::uniform_int_distribution<int> iu(-5, 300);
    for (uint64_t i = 0; i < n; ++i)
        for (uint32_t a = 0; a < dims; ++a) {
            double v = u(rng);
            uint64_t r = rng() % 1000;
            if (r == 0)
                v = NAN;
            else if (r == 1)
                v = INFINITY;
            else if (r == 2)
                v = 1.0; /* a last edge */
            int64_t iv = iu(rng);
            if (dt == GPUHIST_U8 || dt == GPUHIST_U16 || dt == GPUHIST_U32 || dt == GPUHIST_U64)
                iv = iv < 0 ? -iv : iv;
            put(p.bytes, ((size_t)i * dims + a) * sz, dt, v, iv);
        }
    return p;
}

static std::vector<unsigned char> column_of(const Points &p, uint32_t a)
{
    size_t sz = gpuhist_dtype_size(p.dtype);
    std::vector<unsigned char> c((size_t)p.count * sz);
    for (uint64_t i = 0; i < p.count; ++i)
        std::memcpy(&c[(size_t)i * sz], &p.bytes[((size_t)i * p.dims + a) * sz], sz);
    return c;
}

static std::vector<gpuhist_bin_spec> make_axes(std::mt19937_64 &rng, gpuhist_dtype dt, uint32_t dims,
                                               std::vector<std::vector<double>> &edge_store)
{
    std::vector<gpuhist_bin_spec> axes;
    edge_store.assign(dims, {});
    uint64_t total = 1;
    for (uint32_t a = 0; a < dims; ++a) {
        uint32_t limit = (uint32_t)std::max<uint64_t>(2, (1u << 20) / total);
        uint32_t bins = 1 + (uint32_t)(rng() % std::min<uint32_t>(limit, dims <= 2 ? 300u : 12u));
        int kind = (int)(rng() % 4);
        gpuhist_bin_spec s;
        if (kind == 0) {
            s = is_float(dt) ? gpuhist_bins_even(bins, 0.0, 1.0) : gpuhist_bins_even(bins, 0.0, 280.0);
        } else if (kind == 1) {
            s = gpuhist_bins_auto(bins);
        } else if (kind == 2) {
            auto &e = edge_store[a];
            double lo = is_float(dt) ? 0.05 : 2.0, hi = is_float(dt) ? 1.05 : 250.0;
            for (uint32_t k = 0; k <= bins; ++k) {
                double t = (double)k / bins;
                e.push_back(lo + (hi - lo) * t * t);
            }
            s = gpuhist_bins_edges(bins, e.data());
        } else {
            s = is_float(dt) ? gpuhist_bins_even(bins, -0.1, 0.9) : gpuhist_bins_integer(bins, 3);
        }
        total *= s.bins;
        axes.push_back(s);
    }
    return axes;
}

int main(int argc, char **argv)
{
    /* `large`: only the large joint histograms (the last block) */
    const bool large_only = argc > 1 && std::strcmp(argv[1], "large") == 0;
    int n_dev = 0;
    if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 77;
    }
    const char *se = std::getenv("GPUHIST_TEST_SEED");
    uint64_t seed = se ? std::strtoull(se, nullptr, 10) : 20261127ull;
    std::printf("seed %llu\n", (unsigned long long)seed);
    std::mt19937_64 rng(seed);
    gpuhist_ctx *cpu = nullptr, *cuda = nullptr;
    if (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_create(&cuda, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        std::printf("SKIP: no CUDA context: %s\n", gpuhist_last_error(nullptr));
        return 77;
    }
    const gpuhist_dtype types[] = {GPUHIST_U8, GPUHIST_I8,  GPUHIST_U16, GPUHIST_I16, GPUHIST_U32,
                                   GPUHIST_I32, GPUHIST_U64, GPUHIST_I64, GPUHIST_F32, GPUHIST_F64};
    const uint32_t dims_list[] = {1, 2, 3, 4, 5, 8};
    for (int round = 0; round < (large_only ? 0 : 4); ++round) {
        /* round 1: the map in pieces of 1000 points (the loop over pieces and a partial last);
         * rounds 0-2 count in one pass where the backend can (nd_packed16.cu), round 3 always
         * maps to slots and counts them with the 1-D strategies */
        gpuhist_nd_set_chunk_points(round == 1 ? 250 : 0);
        gpuhist_nd_set_device_fused(round != 3);
        for (gpuhist_dtype dt : types)
            for (uint32_t dims : dims_list) {
                uint64_t n = round == 2 ? 1 + rng() % 7 : 3000 + rng() % 20000;
                Points p = make_points(rng, dt, dims, n);
                std::vector<std::vector<double>> es;
                auto axes = make_axes(rng, dt, dims, es);
                gpuhist_points host = gpuhist_points_interleaved(p.bytes.data(), dt, dims, n);
                Result want = run(cpu, host, axes);
                CHECK(want.st == GPUHIST_OK, "cpu reference failed: %s", want.err.c_str());
                void *d = nullptr;
                CK(cudaMalloc(&d, p.bytes.size()));
                CK(cudaMemcpy(d, p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice));
                gpuhist_points dev = gpuhist_points_interleaved(d, dt, dims, n);
                dev.location = GPUHIST_MEMORY_DEVICE;
                Result got = run(cuda, dev, axes);
                CHECK(same(want, got), "%s dims %u n %llu interleaved: device differs (%s)",
                      gpuhist_dtype_name(dt), dims, (unsigned long long)n, got.err.c_str());
                dev.location = GPUHIST_MEMORY_AUTO; /* detected */
                got = run(cuda, dev, axes);
                CHECK(same(want, got), "%s dims %u AUTO: device differs (%s)",
                      gpuhist_dtype_name(dt), dims, got.err.c_str());
                /* columns */
                std::vector<void *> cols(dims);
                gpuhist_points dc;
                std::memset(&dc, 0, sizeof dc);
                dc.dims = dims, dc.dtype = dt, dc.count = n, dc.location = GPUHIST_MEMORY_DEVICE;
                for (uint32_t a = 0; a < dims; ++a) {
                    auto c = column_of(p, a);
                    CK(cudaMalloc(&cols[a], c.size() ? c.size() : 1));
                    CK(cudaMemcpy(cols[a], c.data(), c.size(), cudaMemcpyHostToDevice));
                    dc.columns[a] = cols[a];
                }
                got = run(cuda, dc, axes);
                CHECK(same(want, got), "%s dims %u columns: device differs (%s)",
                      gpuhist_dtype_name(dt), dims, got.err.c_str());
                ++g_cases;
                for (void *c : cols)
                    CK(cudaFree(c));
                CK(cudaFree(d));
            }
    }
    gpuhist_nd_set_chunk_points(0);
    gpuhist_nd_set_device_fused(1);

    /* skewed points (the one-pass count's hot mode and 16-bit carries: millions of points in a
     * few joint bins), and a u8 RGB stream fed at byte offsets that are not 4-aligned */
    for (int hot = 0; hot < 3; ++hot) {
        const bool rgb = hot != 0;
        const gpuhist_dtype dt = rgb ? GPUHIST_U8 : GPUHIST_F32;
        const uint32_t dims = rgb ? 3 : 2;
        const uint64_t n = 3000001;
        Points p{dt, dims, n, {}};
        size_t sz = gpuhist_dtype_size(dt);
        p.bytes.assign((size_t)n * dims * sz, 0);
        for (uint64_t i = 0; i < n; ++i)
            for (uint32_t a = 0; a < dims; ++a) {
                bool one = hot == 2 || rng() % 10 != 0; /* constant, or 90% one point */
                double v = one ? 0.25 : (double)(rng() % 1000) / 999.0;
                int64_t iv = one ? 77 : (int64_t)(rng() % 256);
                put(p.bytes, ((size_t)i * dims + a) * sz, dt, v, iv);
            }
        std::vector<gpuhist_bin_spec> axes;
        for (uint32_t a = 0; a < dims; ++a)
            axes.push_back(rgb ? gpuhist_bins_even(32, 0.0, 256.0) : gpuhist_bins_even(256, 0.0, 1.0));
        Result want = run(cpu, gpuhist_points_interleaved(p.bytes.data(), dt, dims, n), axes);
        void *d = nullptr;
        CK(cudaMalloc(&d, p.bytes.size()));
        CK(cudaMemcpy(d, p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice));
        gpuhist_points dev = gpuhist_points_interleaved(d, dt, dims, n);
        dev.location = GPUHIST_MEMORY_DEVICE;
        Result got = run(cuda, dev, axes);
        CHECK(same(want, got), "skewed %s x %u (%s): device differs (%s)", gpuhist_dtype_name(dt),
              dims, hot == 2 ? "constant" : "90%", got.err.c_str());
        if (rgb) {
            gpuhist_points layout = gpuhist_points_interleaved(nullptr, dt, dims, 0);
            layout.location = GPUHIST_MEMORY_DEVICE;
            gpuhist_nd_stream *st = nullptr;
            CHECK(gpuhist_nd_stream_begin(cuda, &layout, axes.data(), &st) == GPUHIST_OK,
                  "rgb stream begin: %s", gpuhist_last_error(cuda));
            for (uint64_t at = 0; st && at < n;) {
                uint64_t take = std::min<uint64_t>(n - at, 1 + rng() % 400000);
                gpuhist_points c = gpuhist_points_interleaved((const uint8_t *)d + 3 * at, dt, 3, take);
                c.location = GPUHIST_MEMORY_DEVICE;
                CHECK(gpuhist_nd_stream_feed(st, &c) == GPUHIST_OK, "rgb feed: %s",
                      gpuhist_nd_stream_error(st));
                at += take;
            }
            std::vector<uint64_t> counts(32 * 32 * 32);
            gpuhist_nd_result res;
            std::memset(&res, 0, sizeof res);
            res.counts = counts.data();
            if (st)
                CHECK(gpuhist_nd_stream_finish(st, &res) == GPUHIST_OK, "rgb finish: %s",
                      gpuhist_last_error(cuda));
            CHECK(counts == want.counts && res.nan == want.nan && res.out == want.out,
                  "rgb stream at unaligned offsets differs from the one-shot call");
            CHECK(std::strcmp(res.strategy ? res.strategy : "", "cuda-nd-fused") == 0,
                  "rgb stream counted by %s, not the one-pass count", res.strategy);
        }
        ++g_cases;
        CK(cudaFree(d));
    }

    /* the N-D stream fed device chunks == the one-shot call on the host points */
    {
        Points p = make_points(rng, GPUHIST_F32, 2, 50000);
        std::vector<gpuhist_bin_spec> axes = {gpuhist_bins_even(256, 0.0, 1.0),
                                              gpuhist_bins_even(100, -0.1, 1.1)};
        Result want = run(cpu, gpuhist_points_interleaved(p.bytes.data(), GPUHIST_F32, 2, p.count), axes);
        void *d = nullptr;
        CK(cudaMalloc(&d, p.bytes.size()));
        CK(cudaMemcpy(d, p.bytes.data(), p.bytes.size(), cudaMemcpyHostToDevice));
        gpuhist_points layout = gpuhist_points_interleaved(nullptr, GPUHIST_F32, 2, 0);
        layout.location = GPUHIST_MEMORY_DEVICE;
        gpuhist_nd_stream *st = nullptr;
        CHECK(gpuhist_nd_stream_begin(cuda, &layout, axes.data(), &st) == GPUHIST_OK,
              "stream begin: %s", gpuhist_last_error(cuda));
        uint64_t at = 0;
        while (st && at < p.count) {
            uint64_t take = std::min<uint64_t>(p.count - at, 1 + rng() % 9000);
            gpuhist_points c = gpuhist_points_interleaved((const float *)d + 2 * at, GPUHIST_F32, 2, take);
            c.location = GPUHIST_MEMORY_DEVICE;
            CHECK(gpuhist_nd_stream_feed(st, &c) == GPUHIST_OK, "feed: %s", gpuhist_nd_stream_error(st));
            at += take;
        }
        Result got;
        got.counts.assign(256 * 100, 0);
        got.edges = want.edges; /* not asked below */
        gpuhist_nd_result res;
        std::memset(&res, 0, sizeof res);
        res.counts = got.counts.data();
        if (st)
            CHECK(gpuhist_nd_stream_finish(st, &res) == GPUHIST_OK, "finish: %s", gpuhist_last_error(cuda));
        CHECK(got.counts == want.counts && res.nan == want.nan && res.out == want.out,
              "device stream differs from the one-shot call");
        /* a host chunk in a device stream: refused, named */
        CHECK(gpuhist_nd_stream_begin(cuda, &layout, axes.data(), &st) == GPUHIST_OK, "begin");
        gpuhist_points hc = gpuhist_points_interleaved(p.bytes.data(), GPUHIST_F32, 2, 10);
        hc.location = GPUHIST_MEMORY_AUTO;
        gpuhist_status s = gpuhist_nd_stream_feed(st, &hc);
        CHECK(s == GPUHIST_ERROR_INVALID_ARGUMENT &&
                  std::strstr(gpuhist_nd_stream_error(st), "host memory") != nullptr,
              "host chunk in a device stream: %d %s", (int)s, gpuhist_nd_stream_error(st));
        gpuhist_nd_stream_abort(st);
        /* weights with device points: refused, named */
        std::vector<float> w(10, 1.0f);
        gpuhist_points wp = gpuhist_points_interleaved(d, GPUHIST_F32, 2, 10);
        wp.location = GPUHIST_MEMORY_DEVICE;
        wp.weights = w.data();
        wp.weight_dtype = GPUHIST_F32;
        std::vector<uint64_t> counts(256 * 100);
        std::vector<double> sums(256 * 100);
        gpuhist_nd_result wr;
        std::memset(&wr, 0, sizeof wr);
        wr.counts = counts.data();
        wr.sums = sums.data();
        s = gpuhist_histogramdd(cuda, &wp, axes.data(), &wr);
        CHECK(s == GPUHIST_ERROR_UNSUPPORTED && std::strstr(gpuhist_last_error(cuda), "weights"),
              "weighted device points: %d %s", (int)s, gpuhist_last_error(cuda));
        /* device points on the CPU backend: refused, named */
        gpuhist_points cp = gpuhist_points_interleaved(d, GPUHIST_F32, 2, 10);
        cp.location = GPUHIST_MEMORY_DEVICE;
        s = gpuhist_histogramdd(cpu, &cp, axes.data(), &wr);
        CHECK(s == GPUHIST_ERROR_UNSUPPORTED && std::strstr(gpuhist_last_error(cpu), "CUDA"),
              "device points on the CPU backend: %d %s", (int)s, gpuhist_last_error(cpu));
        CK(cudaFree(d));
    }
    /* Large joint histograms: 4096 x 4096 f32 EVEN (2^24 joint bins: nd_count's two-pass
     * count of the points, cuda-two-pass's wide mode), 4097 x 4096 (past its 2^24: the map
     * and a 1-D count of the slots), i32 INTEGER 3000 x 3000 (the same); points uniform a
     * little beyond the range, with NaN */
    {
        struct big {
            gpuhist_dtype dt;
            uint32_t bx, by;
        } bigs[] = {{GPUHIST_F32, 4096, 4096}, {GPUHIST_F32, 4097, 4096}, {GPUHIST_I32, 3000, 3000}};
        for (const big &b : bigs) {
            const uint64_t n = 2000003;
            const size_t sz = gpuhist_dtype_size(b.dt);
            std::vector<unsigned char> bytes(n * 2 * sz);
            std::uniform_real_distribution<double> u(-0.05, 1.05);
            for (uint64_t k = 0; k < 2 * n; ++k) {
                const uint32_t bins = k % 2 ? b.by : b.bx;
                const double v = (rng() % 1000 == 0) ? NAN : u(rng);
                put(bytes, k * sz, b.dt, v, (int64_t)(u(rng) * bins) - 7);
            }
            std::vector<gpuhist_bin_spec> axes;
            if (b.dt == GPUHIST_F32) {
                axes.push_back(gpuhist_bins_even(b.bx, 0.0, 1.0));
                axes.push_back(gpuhist_bins_even(b.by, 0.0, 1.0));
            } else {
                axes.push_back(gpuhist_bins_integer(b.bx, -3));
                axes.push_back(gpuhist_bins_integer(b.by, 0));
            }
            gpuhist_points host = gpuhist_points_interleaved(bytes.data(), b.dt, 2, n);
            Result want = run(cpu, host, axes);
            CHECK(want.st == GPUHIST_OK, "cpu reference failed: %s", want.err.c_str());
            void *d = nullptr;
            CK(cudaMalloc(&d, bytes.size()));
            CK(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
            gpuhist_points dev = gpuhist_points_interleaved(d, b.dt, 2, n);
            dev.location = GPUHIST_MEMORY_DEVICE;
            Result got = run(cuda, dev, axes);
            CHECK(same(want, got), "%s %u x %u: device differs (%s)", gpuhist_dtype_name(b.dt),
                  b.bx, b.by, got.err.c_str());
            ++g_cases;
            CK(cudaFree(d));
        }
    }
    gpuhist_destroy(cuda);
    gpuhist_destroy(cpu);
    std::printf("%d cases, %d failures\n", g_cases, g_fail);
    return g_fail ? 1 : 0;
}
