/*
 * bench_seeds.cu - gpuhist-bench --seeds: the seed experiments' tables measured again, beside
 * CUB and the read ceiling: 001 Table I (256-bin histograms of random bytes at five sizes, CPU
 * and GPU), 000 (histogram64 / histogram256), 002's table (naive vs optimised, uniform and hot
 * data, 256 and 64K bins) and 001's blocks-per-SM sweep, when the CUDA backend reads such a
 * setting from the environment (--blocks-env).
 */
#include "gpuhist_bench.cuh"

#include <cstdlib>

int run_seeds(bool quick)
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
