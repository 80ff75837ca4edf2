/*
 * bench_opencl.cu - gpuhist-bench --opencl: seed 004, the OpenCL strategies on host floats
 * (wall time including the transfer, and the kernels alone from OpenCL profiling events) beside
 * the CUDA strategies on host and on device-resident data, CUB and the read ceiling; every row
 * checked against the CPU backend's counts. Exits 77 when the library has no OpenCL backend.
 */
#include "gpuhist_bench.cuh"

#include <algorithm>

#if GPUHIST_BENCH_HAVE_OPENCL
extern "C" double gpuhist_opencl_last_kernel_seconds(const gpuhist_ctx *ctx);
#endif

int run_opencl(uint64_t n)
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
