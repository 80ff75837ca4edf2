/*
 * gpuhist_bench.cuh - what the files of gpuhist-bench share (one binary; gpuhist_bench.cu says
 * what it measures and how):
 *
 *   gpuhist_bench.cu   options, the device, main (each mode, and --quick: every mode, small)
 *   bench_timing.cu    the timing protocol (warm-up, median), data generation, the read ceiling
 *   bench_calls.cu     gpuhist calls: contexts, host / device counts, their comparisons
 *   bench_cub.cu       the peer: CUB DeviceHistogram on the same device buffer
 *   bench_matrix.cu    --matrix: the performance matrix, its prefix check and its JSON
 *   bench_rows.cu      the rows of the seed tables (gpuhist, CUB, the ceiling) and how they print
 *   bench_seeds.cu     --seeds: 001 Table I, 000, 002's table, 001's blocks-per-SM sweep
 *   bench_opencl.cu    --opencl: seed 004, OpenCL strategies beside CUDA
 *
 * Only bench_timing.cu launches bench_common.cuh's generator kernels (through generate()).
 */
#ifndef GPUHIST_BENCH_CUH
#define GPUHIST_BENCH_CUH

#include "bench_common.cuh"

#include <functional>
#include <string>
#include <vector>

#ifndef GPUHIST_BENCH_BLOCKS_ENV
#define GPUHIST_BENCH_BLOCKS_ENV "" /* set by CMake when src/cuda reads such a variable */
#endif

/* ---- options and the device (gpuhist_bench.cu) ----------------------------------------------- */

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
    std::string cell_names;               /* --cell: comma-separated exact cell names */
    int device = 0;
    uint64_t seed = 20240611;
    bool verify = true;
    std::string blocks_env = GPUHIST_BENCH_BLOCKS_ENV;
    uint64_t opencl_n = 100000000ull;
    uint64_t seed002_n = 100000000ull;
    double table1_scale = 1.0;
};

extern Opts g_opt;
extern int g_failures; /* verification failures and unexpected errors */

/* Count a failure and print it as a "  !! " line. */
void fail_note(const std::string &what);
/* `name` contains one of the comma-separated substrings of `filter` (an empty filter: all). */
bool filter_match(const std::string &filter, const std::string &name);

extern cudaDeviceProp g_prop;
extern cudaStream_t g_stream;
extern cudaEvent_t g_ev0, g_ev1;
extern std::string g_date;

/* The device, date and library lines that open every mode's output. */
void print_header(const char *what);

/* ---- timing (bench_timing.cu) ---------------------------------------------------------------- */

enum class CallRes { OK, UNSUPPORTED, FAIL };

struct Timing {
    bool ok = false, unsupported = false, capped = false;
    std::string err;
    double ms = 0; /* median */
    int runs = 0;
};

double median(std::vector<double> v);

/* One timed call: ms receives its duration. */
using OneRun = std::function<CallRes(double &ms, std::string &err)>;

/* Warm-up, then the median of the timed runs (their number set by --reps, --budget, --cap). */
Timing measure(const OneRun &one);
/* Device work on g_stream bracketed by events; `f` must only enqueue (or run synchronously). */
OneRun device_timed(std::function<CallRes(std::string &)> f);
/* Synchronous work timed by the host clock (CPU backend, host input, OpenCL). */
OneRun host_timed(std::function<CallRes(std::string &)> f);

inline double gbps(uint64_t bytes, double ms) { return ms > 0 ? (double)bytes / (ms * 1e6) : 0.0; }

/* `elements` samples of `dtype` (u8, u16, f32, f64; i32 and i64 as integer ids in
 * [0, 2^id_bits), 16 <= id_bits <= 31) at `d`, distribution `dist` (enum Dist). */
void generate(void *d, gpuhist_dtype dtype, uint64_t elements, int dist, uint64_t seed,
              uint32_t id_bits = 16);

extern unsigned *g_sink; /* the read ceiling kernel's (never written) output */
/* The read ceiling of `bytes` at `d`: best median over a few grid sizes. */
Timing measure_ceiling(const void *d, uint64_t bytes);

/* ---- histogram specifications and gpuhist calls (bench_calls.cu) ----------------------------- */

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
std::string compare_counts(const Counts &a, const Counts &b, uint32_t bins, const char *an,
                           const char *bn);
/* The status string and the context's last error. */
std::string status_msg(gpuhist_ctx *ctx, gpuhist_status st);
/* A synchronous call writing host counts (samples anywhere). */
gpuhist_status run_host_counts(gpuhist_ctx *ctx, const HistSpec &hs, const gpuhist_samples &s,
                               Counts &out, std::string &err, std::string *ran = nullptr);
/* A context on --device (async_device: on g_stream, asynchronous); nullptr, said, on failure. */
gpuhist_ctx *make_ctx(gpuhist_backend b, bool async_device);

struct StratRun {
    std::string requested, ran;
    Timing t;
    Counts full; /* counts of the last timed run (no tallies: async) */
};

/* Time `name` (nullptr = auto) on device samples with device counts, asynchronously. */
StratRun time_device_strategy(gpuhist_ctx *actx, const char *name, const HistSpec &hs,
                              const void *d, uint64_t pixels);
/* "" when every channel's counts sum to `expect`; otherwise the first that does not. */
std::string sums_check(const Counts &c, uint32_t bins, uint32_t active, uint64_t expect);

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

Ctxs make_ctxs();
/* The device counts time_device_strategy writes: at least n of them. */
void alloc_device_counts(size_t n);

/* ---- the peer: CUB DeviceHistogram (bench_cub.cu) -------------------------------------------- */

struct Cub {
    void *temp = nullptr;
    size_t temp_cap = 0;
    unsigned *counts = nullptr; /* active * bins, 32-bit counters (CUB's CounterT) */
    size_t counts_cap = 0;
    float *levels = nullptr;
    size_t levels_cap = 0;

    /* Why this spec has no CUB equivalent, or "" if it has one. */
    static std::string unsupported(const HistSpec &hs, uint64_t pixels);
    /* u8 interleaved, the first A of C channels histogrammed (integer bins from 0). */
    template <int C, int A>
    cudaError_t multi(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
                      uint64_t pixels, cudaStream_t s);
    /* Why the temporary storage of this call does not fit the free device memory, or "". */
    std::string too_big(const HistSpec &hs, const void *d, uint64_t pixels);
    /* Free temporary storage above 1 GiB. */
    void trim();
    /* d_temp == nullptr: size query. */
    cudaError_t call(void *d_temp, size_t &bytes, const HistSpec &hs, const void *d,
                     uint64_t pixels, cudaStream_t s);
    /* Size temp storage, counters and levels for this spec (outside any timing). */
    void prepare(const HistSpec &hs, const void *d, uint64_t pixels);
    CallRes run(const HistSpec &hs, const void *d, uint64_t pixels, std::string &err);
    Counts fetch(const HistSpec &hs);
};

extern Cub g_cub;

/* ---- the modes (bench_matrix.cu, bench_seeds.cu, bench_opencl.cu) ---------------------------- */

extern bool g_matrix_complete; /* false while the matrix runs or after a fatal error */
/* The matrix JSON (--json), rewritten after every cell. */
void write_json();
void write_json_on_fatal();

/* --cell: 0 when every name it lists is a matrix cell; otherwise says which is not, and 2. */
int matrix_check_cell_names();
int run_matrix(uint64_t bytes);
int run_seeds(bool quick);
int run_opencl(uint64_t n);

/* ---- the rows of the seed tables (bench_rows.cu) --------------------------------------------- */

/* A row of a seed table: one way of computing one histogram. */
struct Row {
    std::string label;
    Timing t;
    std::string check; /* "" ok */
    std::string ran;
};

/* u8 samples, 256 integer bins from 0. */
HistSpec u8_256();
/* gpuhist on device data, checked against `oracle` (when non-empty) or the sums. */
Row device_row(Ctxs &cx, const char *label, const char *name, const HistSpec &hs, const void *d,
               uint64_t pixels, const Counts *oracle);
/* gpuhist on host data (any backend), timed by the host clock. */
Row host_row(gpuhist_ctx *ctx, const char *label, const char *name, const HistSpec &hs,
             const void *h, uint64_t pixels, const Counts *oracle);
/* CUB on device data; its counts into `out` when it ran and `out` is set. */
Row cub_row(const HistSpec &hs, const void *d, uint64_t pixels, Counts *out);
Row ceiling_row(const void *d, uint64_t bytes);
/* A failed row or a failed check: fail_note, naming the table. */
void check_row(const Row &r, const char *table);
/* The rows as a table: ms, GB/s, ratios to the ceiling and CUB, runs, a seed column, the check. */
void print_rows_gbps(const std::vector<Row> &rows, uint64_t bytes, double ceil_g, double cub_g,
                     const char *seed_col_name, const std::vector<std::string> &seed_col);

#endif
