/*
 * test_cuda_bins.cu - CUDA-only tests of large and uneven bin specifications, through the
 * public API (plus the CUDA runtime for device buffers).
 *
 * Cases:
 *   many_bins    2^17..2^20 bins (several 65536-key buckets of cuda-two-pass): f32 even on the
 *                certified and the checked grid, f64, i32 / i64 / u64 integer (u64 ids across
 *                2^63), uneven edges; uniform with
 *                outliers, 90% one value, constant; every CUDA strategy, and cuda-two-pass with
 *                small segments (GPUHIST_CUDA_TWO_PASS_SEGMENT) and an unaligned start; past
 *                28 buckets (cuda-two-pass's wide mode, up to 2^24 bins: f32 on the certified
 *                and the checked grid, f64, i32 and i64 integer) cuda-two-pass and auto only, and
 *                cuda-two-pass with regions sized from a sample of the chunks, and halved
 *                (GPUHIST_CUDA_TWO_PASS_SAMPLE / _SQUEEZE: the overflow path)
 *   edge_cells   f32 uneven edges through cuda-fast-smem's one-load cell table: the benchmark's
 *                quadratic edges (the 4-octave cell map, crowded cells -> sub-tables), the same
 *                narrow at 1 (linear map), log-spaced over six decades, 1024 quadratic bins,
 *                clusters of edges a few ulps apart in more cells than there are sub-tables
 *                (-> the search), one bin, 500 bins, edges past FLT_MAX; samples on every edge
 *                and up to 6 ulps either side, uniform, NaN / inf; every CUDA strategy
 *   edges1024    f32 uneven edges at 1000-1024 bins, where cuda-fast-smem's cell table holds
 *                two thresholds per entry (maps k = 1, 4, 6; the crowded set and the one past
 *                FLT_MAX take one-threshold entries): quadratic (the benchmark's edges, a 1024
 *                whose last cell holds only overflow, and a shifted 1000), random gaps between
 *                floats, pairs of edges in every cell, 900 of 1024 crowded in one region,
 *                log-spaced, and 1023 edges with the last past FLT_MAX; both last-edge rules;
 *                samples on every edge and up to 6 ulps either side, uniform and 5% beyond, 30%
 *                of them one value, NaN / inf, an unaligned start; every CUDA strategy
 * Every result is compared bin by bin with the CPU reference (or the known answer), with the
 * tallies (underflow, overflow, nan, total). Exit 77 (ctest: skipped) without a GPU.
 */
#include "cuda_test.cuh"

/* Samples of which `hot_pct` percent are the same value (one inside the range). */
static void make_hot(std::vector<unsigned char> &buf, gpuhist_dtype dt, int hot_pct, double v)
{
    size_t sz = gpuhist_dtype_size(dt), n = buf.size() / sz;
    for (size_t i = 0; i < n; ++i) {
        if ((int)(rnd() % 100) >= hot_pct)
            continue;
        unsigned char *p = &buf[i * sz];
        if (dt == GPUHIST_F32) { float f = (float)v; memcpy(p, &f, 4); }
        else if (dt == GPUHIST_F64) memcpy(p, &v, 8);
        else if (dt == GPUHIST_I32) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
        else if (dt == GPUHIST_I64) { int64_t x = (int64_t)v; memcpy(p, &x, 8); }
        else if (dt == GPUHIST_U64) { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); }
    }
}

static void case_many_bins(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = 6000011;
    std::vector<double> edges(300001);
    for (size_t i = 0; i < edges.size(); ++i) /* uneven: denser towards 0 */
        edges[i] = -2.0 + 4.0 * ((double)i / 300000.0) * ((double)i / 300000.0);
    struct mb {
        gpuhist_dtype dt;
        gpuhist_bin_spec b;
        double lo, hi, hot;
        const char *what;
    } cases[] = {
        {GPUHIST_F32, gpuhist_bins_even(1u << 20, 0.0, 1.0), 0.0, 1.0, 0.3, "f32 2^20 [0,1)"},
        {GPUHIST_F32, gpuhist_bins_even(1000003, -3.3, 7.1), -3.3, 7.1, 2.5, "f32 1000003 bins"},
        {GPUHIST_F64, gpuhist_bins_even(200000, -1.0, 1.0), -1.0, 1.0, 0.25, "f64 200000 bins"},
        {GPUHIST_I32, gpuhist_bins_integer(131073, -1000), -1000.0, 130073.0, 7.0,
         "i32 131073 integer bins"},
        {GPUHIST_F32, gpuhist_bins_edges(300000, edges.data()), -2.0, 2.0, 0.5,
         "f32 300000 edges"},
        /* ids (cuda-two-pass's integer map): i64 with negative ids; u64 ids on both sides of
         * 2^63 (a lower bound 2^63 - 2^19, so bins past INT64_MAX are in range) */
        {GPUHIST_I64, gpuhist_bins_integer(1048576, -300000), -300000.0, 748576.0, -17.0,
         "i64 2^20 integer bins"},
        {GPUHIST_U64, gpuhist_bins_integer(1000003, INT64_MAX - 524287), 9223372036854251520.0,
         9223372036855251968.0, 9223372036854775808.0, "u64 1000003 integer bins across 2^63"},
        /* wide mode */
        {GPUHIST_F32, gpuhist_bins_even(1u << 24, 0.0, 1.0), -0.1, 1.1, 0.3, "f32 2^24 [0,1)"},
        {GPUHIST_F32, gpuhist_bins_even(5000011, -1.5, 2.5), -1.6, 2.6, 0.7,
         "f32 5000011 bins"},
        {GPUHIST_F64, gpuhist_bins_even(2000003, -1.0, 1.0), -1.0, 1.0, 0.25,
         "f64 2000003 bins"},
        {GPUHIST_I32, gpuhist_bins_integer(3000017, -5000), -6000.0, 3000017.0, 77.0,
         "i32 3000017 integer bins"},
        {GPUHIST_I64, gpuhist_bins_integer(2500000, -1000000), -1000000.0, 1500000.0, 3.0,
         "i64 2500000 integer bins"},
    };
    for (const mb &c : cases) {
        for (int hot : {0, 90, 100}) {
            std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
            make_hot(h, c.dt, hot, c.hot);
            gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
            expected e = reference(&hs, &c.b);
            void *base = NULL;
            const size_t sz = gpuhist_dtype_size(c.dt);
            gpuhist_samples ds = hs;
            ds.data = to_device(h.data(), h.size(), 0, &base);
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[96];
            snprintf(what, sizeof what, "many_bins %s, %d%% one value", c.what, hot);
            if (hot == 0 && c.b.bins <= 28u * 65536u) {
                all_strategies(ctx, &ds, &c.b, e, 0, what);
            } else {
                if (c.b.bins > 28u * 65536u) {
                    check_context("%s, auto", what);
                    one_strategy(ctx, "auto", &ds, &c.b, e);
                }
                check_context("%s, cuda-two-pass", what);
                one_strategy(ctx, "cuda-two-pass", &ds, &c.b, e);
            }
            /* Small segments (several pass pairs into the same counters) and a start that is
             * not 16-byte aligned (head and tail samples outside the vector loop). */
            setenv("GPUHIST_CUDA_TWO_PASS_SEGMENT", "1048583", 1);
            check_context("%s, cuda-two-pass, small segments, offset start", what);
            gpuhist_samples os = ds;
            os.data = (const unsigned char *)ds.data + sz;
            os.count = n - 3;
            gpuhist_samples ohs = hs;
            ohs.data = h.data() + sz;
            ohs.count = n - 3;
            one_strategy(ctx, "cuda-two-pass", &os, &c.b, reference(&ohs, &c.b));
            unsetenv("GPUHIST_CUDA_TWO_PASS_SEGMENT");
            if (c.b.bins > 28u * 65536u) {
                /* Wide mode's regions from a sample of the chunks (one in 3), then halved: keys
                 * past a region go to out by global atomics. */
                setenv("GPUHIST_CUDA_TWO_PASS_SAMPLE", "3", 1);
                check_context("%s, cuda-two-pass, sampled regions", what);
                one_strategy(ctx, "cuda-two-pass", &ds, &c.b, e);
                setenv("GPUHIST_CUDA_TWO_PASS_SQUEEZE", "1", 1);
                check_context("%s, cuda-two-pass, sampled and halved regions", what);
                one_strategy(ctx, "cuda-two-pass", &ds, &c.b, e);
                unsetenv("GPUHIST_CUDA_TWO_PASS_SAMPLE");
                check_context("%s, cuda-two-pass, counted and halved regions", what);
                one_strategy(ctx, "cuda-two-pass", &ds, &c.b, e);
                unsetenv("GPUHIST_CUDA_TWO_PASS_SQUEEZE");
            }
            gpuhist_set_strategy(ctx, "auto");
            check_context("%s", "");
            cudaFree(base);
        }
    }
    gpuhist_destroy(ctx);
}

/* f32 samples on and around every edge (+-6 ulps), uniform over [lo, hi] and 5% beyond, NaN and
 * infinities. */
static std::vector<float> around_edges(const std::vector<double> &edges, size_t n_uniform,
                                       double lo, double hi)
{
    std::vector<float> x;
    for (double e : edges) {
        float f = (float)e;
        for (int k = 0; k < 6; ++k)
            f = nextafterf(f, -INFINITY);
        for (int k = 0; k <= 12; ++k, f = nextafterf(f, INFINITY))
            x.push_back(f);
    }
    for (size_t i = 0; i < n_uniform; ++i) {
        const double u = (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
        x.push_back((float)(lo + (hi - lo) * (u * 1.1 - 0.05)));
    }
    x.push_back(NAN);
    x.push_back(INFINITY);
    x.push_back(-INFINITY);
    x.push_back(-0.0f);
    std::shuffle(x.begin(), x.end(), std::mt19937(12345));
    return x;
}

static void case_edge_cells(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    struct ec {
        std::vector<double> edges;
        const char *what;
    };
    std::vector<ec> cases;
    { /* the benchmark's cell: quadratic, narrow bins near 0 */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(((double)i / 256) * ((double)i / 256));
        cases.push_back({e, "256 quadratic edges"});
    }
    { /* 100 clusters of 5 edges 1..3 ulps apart: 100 crowded cells, more than the sub-tables */
        std::vector<double> e;
        for (int c = 0; c < 100; ++c) {
            float f = (float)(-50.0 + c * 1.01);
            for (int k = 0; k < 5; ++k) {
                e.push_back((double)f);
                f = nextafterf(nextafterf(f, INFINITY), INFINITY);
            }
        }
        cases.push_back({e, "100 clusters of 5 edges"});
    }
    { /* 500 bins, mixed widths, edges between floats (rounded up on the device) */
        std::vector<double> e;
        double v = -3.0;
        for (int i = 0; i <= 500; ++i) {
            e.push_back(v);
            v += (i % 7 == 0) ? 1e-9 : 0.01 + 0.001 * (i % 13);
        }
        cases.push_back({e, "500 mixed edges"});
    }
    { /* narrow bins towards 1 instead: the linear map stays the best */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(1.0 - ((double)(256 - i) / 256) * ((double)(256 - i) / 256));
        cases.push_back({e, "256 quadratic edges, narrow at 1"});
    }
    { /* log-spaced over six decades: edges on many octave boundaries of the finer maps */
        std::vector<double> e;
        for (int i = 0; i <= 256; ++i)
            e.push_back(pow(10.0, -6.0 + 6.0 * i / 256));
        cases.push_back({e, "256 log-spaced edges"});
    }
    { /* 1024 quadratic bins: the finest maps no longer fit beside 1027 x 8 counters */
        std::vector<double> e;
        for (int i = 0; i <= 1024; ++i)
            e.push_back(((double)i / 1024) * ((double)i / 1024) * 8.0 - 4.0);
        cases.push_back({e, "1024 quadratic edges"});
    }
    cases.push_back({{-1.0, 2.5}, "one bin"});
    cases.push_back({{-1.0, 0.0, 1.0, 1e39}, "last edge past FLT_MAX"});
    for (const ec &c : cases) {
        const double lo = c.edges.front(), hi = std::min(c.edges.back(), 1e30);
        std::vector<float> x = around_edges(c.edges, 400000, lo, hi);
        const uint32_t bins = (uint32_t)c.edges.size() - 1u;
        const gpuhist_bin_spec b = gpuhist_bins_edges(bins, c.edges.data());
        gpuhist_samples hs = gpuhist_samples_1d(x.data(), GPUHIST_F32, x.size());
        expected e = reference(&hs, &b);
        void *base = NULL;
        gpuhist_samples ds = hs;
        ds.data = to_device(x.data(), x.size() * 4, 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        char what[96];
        snprintf(what, sizeof what, "edge_cells %s", c.what);
        all_strategies(ctx, &ds, &b, e, 0, what);
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

/* 1000-1024 uneven edges (cuda-fast-smem's two-threshold cell entries: both position fields,
 * their equal positions, the sub-tables of crowded cells and the search past them). */
static void case_edges1024(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    struct ec {
        std::vector<double> edges;
        const char *what;
    };
    std::vector<ec> cases;
    { /* the benchmark's f32_1024_edges cell: (i/1024)^2 */
        std::vector<double> e;
        for (int i = 0; i <= 1024; ++i)
            e.push_back(((double)i / 1024) * ((double)i / 1024));
        cases.push_back({e, "1024 quadratic edges"});
    }
    { /* quadratic over [-4.33, -3.713]: the last edge's threshold falls short of the map's last
       * cell, which holds only overflow (an empty cell whose base is bins + 1) */
        std::vector<double> e;
        for (int i = 0; i <= 1024; ++i)
            e.push_back(-4.33 + 0.617 * ((double)i / 1024) * ((double)i / 1024));
        cases.push_back({e, "1024 quadratic edges, empty last cell"});
    }
    { /* 1000 quadratic over [-4, 4] */
        std::vector<double> e;
        for (int i = 0; i <= 1000; ++i)
            e.push_back(((double)i / 1000) * ((double)i / 1000) * 8.0 - 4.0);
        cases.push_back({e, "1000 quadratic edges"});
    }
    { /* random gaps from 1e-9 to 0.02: edges between floats, 0 to many per cell */
        std::vector<double> e;
        double v = -3.0;
        for (int i = 0; i <= 1000; ++i) {
            e.push_back(v);
            v += 1e-9 + 0.02 * (double)(rnd() >> 11) * (1.0 / 9007199254740992.0);
        }
        cases.push_back({e, "1000 random edges"});
    }
    { /* 512 pairs 1e-5 apart, 0.01 between pairs: two thresholds in most cells */
        std::vector<double> e;
        for (int i = 0; i < 512; ++i) {
            e.push_back(i * 0.01);
            e.push_back(i * 0.01 + 1e-5);
        }
        e.push_back(5.12);
        cases.push_back({e, "1024 edges in pairs"});
    }
    { /* 900 edges in [0.5, 0.5001), the rest 0.01 apart: crowded cells past the sub-tables */
        std::vector<double> e;
        for (int i = 0; i < 900; ++i)
            e.push_back(0.5 + 1e-4 * i / 900.0);
        for (int i = 0; i <= 124; ++i)
            e.push_back(0.5 + 1e-4 + (i + 1) * 0.01);
        cases.push_back({e, "1024 edges, 900 crowded"});
    }
    { /* log-spaced over six decades */
        std::vector<double> e;
        for (int i = 0; i <= 1024; ++i)
            e.push_back(pow(10.0, -6.0 + 6.0 * i / 1024));
        cases.push_back({e, "1024 log-spaced edges"});
    }
    { /* integers, then an edge past FLT_MAX */
        std::vector<double> e;
        for (int i = 0; i < 1023; ++i)
            e.push_back(i);
        e.push_back(1e39);
        cases.push_back({e, "1023 edges, last past FLT_MAX"});
    }
    for (const ec &c : cases) {
        const double lo = c.edges.front(), hi = std::min(c.edges.back(), 1e30);
        std::vector<float> x = around_edges(c.edges, 400000, lo, hi);
        x.resize(x.size() * 10 / 7, (float)(lo + 0.3 * (hi - lo))); /* 30%: one value, in a run */
        const uint32_t bins = (uint32_t)c.edges.size() - 1u;
        for (int incl = 1; incl >= 0; --incl) {
            gpuhist_bin_spec b = gpuhist_bins_edges(bins, c.edges.data());
            b.last_edge_inclusive = incl;
            for (size_t off = 0; off <= 1; ++off) { /* off = 1: head and tail samples */
                gpuhist_samples hs = gpuhist_samples_1d(x.data() + off, GPUHIST_F32,
                                                        x.size() - 2 * off);
                expected e = reference(&hs, &b);
                void *base = NULL;
                gpuhist_samples ds = hs;
                ds.data = to_device(hs.data, hs.count * 4, off * 4, &base);
                ds.location = GPUHIST_MEMORY_DEVICE;
                char what[128];
                snprintf(what, sizeof what, "edges1024 %s, last edge %s, offset %zu", c.what,
                         incl ? "inclusive" : "exclusive", off);
                all_strategies(ctx, &ds, &b, e, 0, what);
                cudaFree(base);
            }
        }
    }
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const cuda_case cases[] = {
        {"many_bins", case_many_bins},
        {"edge_cells", case_edge_cells},
        {"edges1024", case_edges1024},
    };
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
