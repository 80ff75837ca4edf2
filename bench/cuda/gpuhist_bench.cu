/*
 * gpuhist-bench - the CUDA benchmark: the performance matrix (cells and targets:
 * docs/PERFORMANCE.md) and the seed experiments, measured through the public API against CUB
 * DeviceHistogram and the read ceiling on the same device-resident buffer in the same run.
 *
 *   gpuhist-bench --matrix [--bytes 1G] [--json bench/results/latest.json] [--cell NAME,...]
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
 *
 * This file: the options, the device and main(); gpuhist_bench.cuh lists the others.
 */
#include "gpuhist_bench.cuh"

#include <algorithm>
#include <cstdlib>
#include <string>

/* ---- options --------------------------------------------------------------------------------- */

Opts g_opt;
int g_failures = 0; /* verification failures and unexpected errors */

void fail_note(const std::string &what)
{
    ++g_failures;
    std::printf("  !! %s\n", what.c_str());
}

bool filter_match(const std::string &filter, const std::string &name)
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

/* ---- device, stream, events ------------------------------------------------------------------ */

cudaDeviceProp g_prop;
cudaStream_t g_stream;
cudaEvent_t g_ev0, g_ev1;
std::string g_date;

void print_header(const char *what)
{
    std::printf("device: %s\n", g_prop.name);
    std::printf("date: %s\n", g_date.c_str());
    std::printf("gpuhist %s, %d SMs, compute capability %d.%d, %.1f GiB, L2 %d MiB | %s\n",
                gpuhist_version(), g_prop.multiProcessorCount, g_prop.major, g_prop.minor,
                (double)g_prop.totalGlobalMem / (1u << 30), g_prop.l2CacheSize >> 20, what);
}

/* ---- main ------------------------------------------------------------------------------------ */

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
        "  --cell NAME[,NAME] only the cells of exactly these names (matrix; extra cells too)\n"
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
        else if (a == "--cell") o.cell_names = next();
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
    if (matrix_check_cell_names() != 0)
        return 2;
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

