/*
 * bench_weighted.cu - gpuhist-weighted-bench: weighted histograms on CUDA, the issue's cell
 * "f32 samples + f32 weights, 256 even bins, every distribution" (target: 0.6 of the read
 * ceiling, bytes read = samples + weights), against the device's read ceiling over the same
 * bytes in the same run.
 *
 * For each sample distribution (bench_common.cuh: uniform, hot90, constant, bell over [0, 1))
 * and weight kind (uniform in (0, 1); one value, 1.5; spread over 2^-60 .. 2^60 with both signs),
 * every strategy that sums weights (auto, cuda-weighted-smem, cuda-weighted-global) is timed:
 * samples and weights device-resident, counts and sums to host memory (the call synchronises),
 * median of --reps calls (cuda-weighted-global: at most 3) after two warm-up calls, CUDA events
 * around each. Optional --squares asks for the sums of squares too.
 * Checked: the counts add up to the samples, and a 1M-sample prefix gives the CPU backend's
 * counts and sums bit for bit (exit 1 when not).
 * Prints one line per case: ms, GB/s of samples + weights, ratio to the read ceiling.
 * usage: gpuhist-weighted-bench [--reps N] [--mib M (per array, default 1024)] [--bins B]
 *                               [--squares] [--only TEXT]
 * --only runs the cases whose "distribution, weights, strategy" line contains TEXT (e.g.
 * "constant w 1.5 cuda-weighted-smem"), for profiling one cell.
 */
#include "bench_common.cuh"

#include <algorithm>
#include <cmath>

/* Weights: 0 uniform in (0, 1) (k * 2^-24, k >= 1), 1 constant 1.5, 2 sign * 2^(-60..60) * (1, 2). */
static __global__ void gen_weights(float *p, uint64_t n, int kind, uint64_t seed)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t h = bench_mix64(i ^ (seed * 0x2545F4914F6CDD1Dull));
        float v;
        if (kind == 1)
            v = 1.5f;
        else if (kind == 2)
            v = ldexpf(1.0f + (float)(h & 0xFFFFFF) * (1.0f / 16777216.0f),
                       (int)((h >> 24) % 121) - 60) *
                ((h >> 40) & 1 ? -1.0f : 1.0f);
        else
            v = (float)((uint32_t)(h & 0xFFFFFF) | 1u) * (1.0f / 16777216.0f);
        p[i] = v;
    }
}

static __global__ void read_all(const uint4 *p, uint64_t n, unsigned *sink)
{
    unsigned acc = 0;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u)
        *sink = acc;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* The best of a few grid sizes of a plain 16-byte-load kernel over `bytes` at p (ms). */
static double read_ceiling_ms(const void *p, size_t bytes, int reps)
{
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    unsigned *sink = nullptr;
    CK(cudaMalloc(&sink, 4));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    double best = 1e30;
    for (int per_sm : {2, 4, 8, 16}) {
        std::vector<double> t;
        for (int r = 0; r < reps + 1; ++r) {
            CK(cudaEventRecord(a));
            read_all<<<sms * per_sm, 512>>>((const uint4 *)p, bytes / 16, sink);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r)
                t.push_back(ms);
        }
        best = std::min(best, median(t));
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(sink);
    return best;
}

int main(int argc, char **argv)
{
    int reps = 10, squares = 0;
    uint64_t mib = 1024;
    uint32_t bins = 256;
    const char *only = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::max(1, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = std::max(1ull, strtoull(argv[++i], nullptr, 10));
        else if (!strcmp(argv[i], "--bins") && i + 1 < argc)
            bins = (uint32_t)std::max(1l, strtol(argv[++i], nullptr, 10));
        else if (!strcmp(argv[i], "--squares"))
            squares = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr,
                         "usage: %s [--reps N] [--mib M] [--bins B] [--squares] [--only TEXT]\n",
                         argv[0]);
            return 2;
        }
    }
    gpuhist_ctx *cuda = nullptr, *cpu = nullptr;
    if (gpuhist_create(&cuda, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        std::printf("no CUDA device\n");
        return 77;
    }
    if (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK)
        return 3;
    const uint64_t n = mib << 18; /* floats per array */
    float *buf = nullptr;         /* samples, then weights: one buffer for the read ceiling */
    CK(cudaMalloc(&buf, 2 * n * sizeof(float)));
    float *x = buf, *w = buf + n;
    const double bytes = 8.0 * (double)n;
    const double ceil_ms = read_ceiling_ms(buf, 2 * n * sizeof(float), reps);
    std::printf("device: %s; %llu f32 samples + %llu f32 weights (%.2f GB), %u even bins%s\n",
                gpuhist_device_name(cuda), (unsigned long long)n, (unsigned long long)n,
                bytes / 1e9, bins, squares ? ", squares" : "");
    std::printf("read ceiling: %.3f ms, %.1f GB/s\n", ceil_ms, bytes / ceil_ms / 1e6);
    const gpuhist_bin_spec spec = gpuhist_bins_even(bins, 0.0, 1.0);
    const uint64_t prefix = std::min<uint64_t>(n, 1u << 20);
    std::vector<float> hx(prefix), hw(prefix);
    std::vector<uint64_t> counts(bins), ref_counts(bins);
    std::vector<double> sums(bins), sq(bins), ref_sums(bins), ref_sq(bins);
    static const char *const wnames[] = {"w uniform", "w 1.5", "w spread"};
    static const char *const strategies[] = {"auto", "cuda-weighted-smem", "cuda-weighted-global"};
    int failures = 0;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int dist = 0; dist < DIST_COUNT; ++dist) {
        bench_gen_f32<<<bench_gen_grid(), 256>>>(x, n, dist, 11 + dist, 0.3f);
        CK_LAUNCH("generate samples");
        for (int wk = 0; wk < 3; ++wk) {
            gen_weights<<<bench_gen_grid(), 256>>>(w, n, wk, 7 + wk);
            CK_LAUNCH("generate weights");
            CK(cudaDeviceSynchronize());
            /* the CPU backend on a prefix: the bits every strategy must give */
            CK(cudaMemcpy(hx.data(), x, prefix * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hw.data(), w, prefix * 4, cudaMemcpyDeviceToHost));
            gpuhist_samples hs = gpuhist_samples_1d(hx.data(), GPUHIST_F32, prefix);
            hs.weights = hw.data();
            hs.weight_dtype = GPUHIST_F32;
            gpuhist_result rr = gpuhist_result_host(ref_counts.data());
            rr.sums = ref_sums.data();
            rr.sums_squared = ref_sq.data();
            if (gpuhist_histogram(cpu, &hs, &spec, &rr) != GPUHIST_OK) {
                std::printf("  !! cpu: %s\n", gpuhist_last_error(cpu));
                return 3;
            }
            for (const char *name : strategies) {
                char label[96];
                std::snprintf(label, sizeof label, "%s %s %s", dist_names[dist], wnames[wk], name);
                if (only && !std::strstr(label, only))
                    continue;
                gpuhist_set_strategy(cuda, name);
                /* check on the prefix (device samples, host results) */
                gpuhist_samples ds = gpuhist_samples_1d(x, GPUHIST_F32, prefix);
                ds.weights = w;
                ds.weight_dtype = GPUHIST_F32;
                gpuhist_result r = gpuhist_result_host(counts.data());
                r.sums = sums.data();
                r.sums_squared = sq.data();
                gpuhist_status st = gpuhist_histogram(cuda, &ds, &spec, &r);
                if (st != GPUHIST_OK) {
                    std::printf("  %-8s %-9s %-22s %s\n", dist_names[dist], wnames[wk], name,
                                gpuhist_last_error(cuda));
                    continue;
                }
                const bool same = counts == ref_counts &&
                                  !memcmp(sums.data(), ref_sums.data(), bins * 8) &&
                                  !memcmp(sq.data(), ref_sq.data(), bins * 8);
                if (!same) {
                    std::printf("  !! %s %s %s: prefix differs from the CPU backend\n",
                                dist_names[dist], wnames[wk], name);
                    ++failures;
                }
                /* timed: the whole buffer */
                ds.count = n;
                r.sums_squared = squares ? sq.data() : nullptr;
                /* the global fallback serialises on skewed data: fewer calls */
                const int calls = std::strstr(name, "global") ? std::min(reps, 3) : reps;
                std::vector<double> t;
                for (int k = 0; k < calls + 2; ++k) {
                    CK(cudaEventRecord(a));
                    st = gpuhist_histogram(cuda, &ds, &spec, &r);
                    CK(cudaEventRecord(b));
                    CK(cudaEventSynchronize(b));
                    float ms = 0;
                    CK(cudaEventElapsedTime(&ms, a, b));
                    if (k >= 2)
                        t.push_back(ms);
                }
                uint64_t total = 0;
                for (uint64_t c : counts)
                    total += c;
                total += r.underflow[0] + r.overflow[0] + r.nan[0];
                if (st != GPUHIST_OK || total != n) {
                    std::printf("  !! %s %s %s: %llu samples counted of %llu\n", dist_names[dist],
                                wnames[wk], name, (unsigned long long)total,
                                (unsigned long long)n);
                    ++failures;
                }
                const double ms = median(t);
                std::printf("  %-8s %-9s %-22s %8.3f ms %7.1f GB/s  %.2f of the ceiling  (%s)\n",
                            dist_names[dist], wnames[wk], name, ms, bytes / ms / 1e6,
                            ceil_ms / ms, r.strategy ? r.strategy : "?");
            }
        }
    }
    cudaFree(buf);
    gpuhist_destroy(cuda);
    gpuhist_destroy(cpu);
    std::printf("%s\n", failures ? "FAILED: results differ (above)" : "all results checked");
    return failures ? 1 : 0;
}
