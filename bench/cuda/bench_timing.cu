/*
 * bench_timing.cu - how gpuhist-bench times: warm-up runs until --warmup-ms have passed, then the
 * median of --reps timed runs (fewer past --budget, two past --cap); device work bracketed by CUDA
 * events on the benchmark's stream, host work by the host clock. Also the data every mode times
 * (generated on the device by bench_common.cuh's hash PRNG; the f64 and integer-id generators,
 * which only the matrix uses, are here) and the read ceiling: a plain 16-byte-load kernel over
 * the same bytes, the best of a few grid sizes.
 */
#include "gpuhist_bench.cuh"

#include <algorithm>
#include <chrono>

/* ---- timing ---------------------------------------------------------------------------------- */

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing measure(const OneRun &one)
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
OneRun device_timed(std::function<CallRes(std::string &)> f)
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
OneRun host_timed(std::function<CallRes(std::string &)> f)
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

/* ---- data generation ------------------------------------------------------------------------- */

/* The hot / constant value of each dtype: inside one bin of every cell (bin 97 of 256 for u8,
 * bin 6 of 16 even bins over [0, 256); 0.3 lies strictly inside a bin for every power-of-two
 * bin count over [0, 1), and inside a bin of the quadratic edges of every edges cell). Integer
 * ids over 2^b values: 40000 scaled to the range (40000 for b = 16, like u16). */
static const uint32_t HOT_U8 = 97, HOT_U16 = 40000;
static const float HOT_F32 = 0.3f;
static const double HOT_F64 = 0.3;

/* f64 in [0, 1), f32's distributions with f64's precision: uniform = k * 2^-53 (53 random bits,
 * exact, never 1.0); bell = (sum of four 51-bit uniforms) * 2^-53, whose sum < 2^53 is exact. */
static __global__ void bench_gen_f64(double *p, uint64_t n, int dist, uint64_t seed, double hot)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
        double v;
        if (dist == DIST_CONSTANT ||
            (dist == DIST_HOT90 && (uint32_t)(h >> 32) < BENCH_HOT_THRESHOLD)) {
            v = hot;
        } else if (dist == DIST_BELL) {
            const uint64_t h2 = bench_mix64(h ^ 0x5851F42D4C957F2Dull);
            const uint64_t h3 = bench_mix64(h2 ^ 0x5851F42D4C957F2Dull);
            const uint64_t h4 = bench_mix64(h3 ^ 0x5851F42D4C957F2Dull);
            v = (double)((h >> 13) + (h2 >> 13) + (h3 >> 13) + (h4 >> 13)) * 0x1p-53;
        } else {
            v = (double)(h >> 11) * 0x1p-53;
        }
        p[i] = v;
    }
}

/* Integer ids (bincount data) in [0, 2^bits), bits <= 32, as i32 or i64: u16's distributions
 * widened. uniform = the low `bits` bits of the hash; hot90 / constant use `hot`; bell = the mean
 * of four `bits`-bit uniforms (from one hash while 4 * bits <= 64: for bits = 16 the very values
 * of bench_gen_u16; else two from each of two hashes). */
template <typename T>
static __global__ void bench_gen_ids(T *p, uint64_t n, int dist, uint64_t seed, uint64_t hot,
                                     uint32_t bits)
{
    const uint64_t mask = (1ull << bits) - 1u;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t h = bench_mix64(i ^ (seed * 0xD1B54A32D192ED03ull));
        uint64_t v;
        if (dist == DIST_CONSTANT ||
            (dist == DIST_HOT90 && (uint32_t)(h >> 32) < BENCH_HOT_THRESHOLD)) {
            v = hot;
        } else if (dist == DIST_BELL) {
            uint64_t c, d;
            if (4 * bits <= 64) {
                c = h >> (2 * bits);
                d = h >> (3 * bits);
            } else {
                const uint64_t h2 = bench_mix64(h ^ 0x5851F42D4C957F2Dull);
                c = h2;
                d = h2 >> bits;
            }
            v = ((h & mask) + ((h >> bits) & mask) + (c & mask) + (d & mask)) >> 2;
        } else {
            v = h & mask;
        }
        p[i] = (T)v;
    }
}

void generate(void *d, gpuhist_dtype dtype, uint64_t elements, int dist, uint64_t seed,
              uint32_t id_bits)
{
    int grid = bench_gen_grid();
    if ((dtype == GPUHIST_I32 || dtype == GPUHIST_I64) && (id_bits < 16 || id_bits > 31)) {
        std::fprintf(stderr, "generate: ids of %u bits not supported (16 to 31)\n", id_bits);
        std::exit(2);
    }
    const uint64_t hot_id = (uint64_t)HOT_U16 << (id_bits - 16);
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
    case GPUHIST_F64:
        bench_gen_f64<<<grid, 256>>>((double *)d, elements, dist, seed, HOT_F64);
        break;
    case GPUHIST_I32:
        bench_gen_ids<<<grid, 256>>>((int32_t *)d, elements, dist, seed, hot_id, id_bits);
        break;
    case GPUHIST_I64:
        bench_gen_ids<<<grid, 256>>>((int64_t *)d, elements, dist, seed, hot_id, id_bits);
        break;
    default:
        std::fprintf(stderr, "generate: dtype %s not supported\n", gpuhist_dtype_name(dtype));
        std::exit(2);
    }
    CK_LAUNCH("data generator");
    CK(cudaDeviceSynchronize());
}

/* ---- read ceiling ---------------------------------------------------------------------------- */

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

unsigned *g_sink;

/* Best median over a few grid sizes (blocks of 256 threads per SM). */
Timing measure_ceiling(const void *d, uint64_t bytes)
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
