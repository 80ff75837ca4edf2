/*
 * test_half_pairs_cuda.cu - cuda-half-pairs (f16 / bf16 samples counted two per packed 16-bit
 * shared atomic, with the exhaustively certified slots of src/core/half_pairs.h) against
 * cpu-reference, bit for bit, through the public API; and auto's choice between it and
 * cuda-fast-packed16.
 * `test_half_pairs_cuda <case>` runs one case; exit 77 (ctest: skipped) without a GPU.
 *
 * Specs: 256, 255, 100, 7 and 1 even bins over [0, 1) and [-3, 5), 256 over [-1, 1] and [0, 1]
 * with the last edge inclusive (all certify: the host certificate of test_half_pairs.c accepts
 * them, so here cuda-half-pairs must take them and auto must choose it), and a spec that
 * refuses (256 bins over [0, 0.001): bins narrower than an ulp): cuda-half-pairs refuses it by
 * name ("cannot histogram"), auto takes cuda-fast-packed16, and the counts are still exact.
 *
 * Cases:
 *   bins     every spec, f16 and bf16: 2^22 + 7 samples (every bit pattern: NaN, +-inf, +-0,
 *            subnormals; in-range values; values next to every edge; out-of-range values),
 *            host data, device data at element offsets 0, 1, 3 and 7, counts on host and on
 *            device: cuda-half-pairs forced and auto, counts, tallies and range
 *   skew     90% one value, constant data (in range, NaN, overflow), runs of constant words
 *            mixed with uniform data (the engine's run, bytes and pairs modes), and 2^27
 *            samples whose words 1 and 2 of every 16-byte vector are two pair keys of one
 *            shared word while words 0 and 3 differ (pairs mode throughout: every packed
 *            counter's low half carries into its high half and the high half wraps)
 *   sizes    odd sample counts (0 to 2^20 + 3) at element offsets 0 to 7, host and device
 *   stream   a stream fed device chunks of random odd sizes at odd offsets, forced and auto
 * Seed 0x4A1F9A125EEDull (printed).
 */
#include <gpuhist.h>

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <string>
#include <vector>

#include "../unit/half_test.h"
#include "cuda_test.cuh"

static const uint64_t SEED = 0x4A1F9A125EEDull;
static const char *const HP = "cuda-half-pairs";

static const gpuhist_dtype HALVES[2] = {GPUHIST_F16, GPUHIST_BF16};

static uint16_t bits_of(gpuhist_dtype dt, double x)
{
    return dt == GPUHIST_F16 ? test_f16_bits(x) : test_bf16_bits(x);
}

/* ---- specs ----------------------------------------------------------------------------------- */

struct spec_case {
    std::string what;
    gpuhist_bin_spec b;
    bool certifies; /* cuda-half-pairs must take it (else must refuse it) */
};

static std::vector<spec_case> specs(void)
{
    std::vector<spec_case> v;
    const uint32_t bins[] = {256, 255, 100, 7, 1};
    const double ranges[][2] = {{0.0, 1.0}, {-3.0, 5.0}};
    for (const auto &r : ranges)
        for (uint32_t n : bins) {
            char w[96];
            snprintf(w, sizeof w, "%u even [%g, %g)", n, r[0], r[1]);
            v.push_back({w, gpuhist_bins_even(n, r[0], r[1]), true});
        }
    v.push_back({"256 even [0, 0.001) (refused: bins below an ulp)",
                 gpuhist_bins_even(256, 0.0, 0.001), false});
    for (double lo : {-1.0, 0.0}) { /* NumPy's inclusive last edge: half_pairs.h's step 6 */
        gpuhist_bin_spec b = gpuhist_bins_even(256, lo, 1.0);
        b.last_edge_inclusive = 1;
        v.push_back({lo < 0 ? "256 even [-1, 1]" : "256 even [0, 1]", b, true});
    }
    return v;
}

/* ---- data ------------------------------------------------------------------------------------ */

/* Every bit pattern, then values next to each edge of [lo, hi) with `bins` bins (the edge
 * rounded to the type and its two neighbours), then values spread over the range and 20%
 * beyond, up to n samples. */
static std::vector<uint16_t> mixed(gpuhist_dtype dt, size_t n, double lo, double hi,
                                   uint32_t bins)
{
    std::vector<uint16_t> v;
    v.reserve(n);
    for (uint32_t h = 0; h < 65536u && v.size() < n; ++h)
        v.push_back((uint16_t)h);
    for (uint32_t i = 0; i <= bins && v.size() + 3 <= n; ++i) {
        const uint16_t e = bits_of(dt, lo + (hi - lo) * i / bins);
        v.push_back(e);
        v.push_back((uint16_t)(e + 1u)); /* the neighbours in magnitude */
        v.push_back((uint16_t)(e - 1u));
    }
    while (v.size() < n) {
        const uint64_t r = rnd();
        const double u = (double)(r >> 11) * 0x1p-53;
        v.push_back(bits_of(dt, lo + (hi - lo) * (u * 1.4 - 0.2)));
    }
    return v;
}

/* ---- running and comparing ------------------------------------------------------------------- */

static bool certified_fallback(const char *strategy)
{
    return !strcmp(strategy, "cuda-fast-packed16");
}

/* `name` on s (counts on host or device) against e. For HP: OK with e's counts when the spec
 * certifies, else a refusal naming the spec. For auto: e's counts, and the strategy HP when the
 * spec certifies (and one_launch does not take the call), else cuda-fast-packed16. */
static void run_one(gpuhist_ctx *ctx, const char *name, const gpuhist_samples *s,
                    const spec_case &sc, const expected &e, bool counts_on_device,
                    bool check_choice)
{
    check_context("%s %s, %s, %s, counts on %s", gpuhist_dtype_name(s->dtype), sc.what.c_str(),
                  s->location == GPUHIST_MEMORY_DEVICE ? "device" : "host", name,
                  counts_on_device ? "device" : "host");
    const size_t n = e.counts.size();
    std::vector<uint64_t> counts(n, 0xdeadbeefull);
    uint64_t *d_counts = NULL;
    if (counts_on_device) {
        CUDA_OK(cudaMalloc(&d_counts, n * sizeof(uint64_t)));
        CUDA_OK(cudaMemset(d_counts, 0xab, n * sizeof(uint64_t)));
    }
    if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK))
        return;
    gpuhist_result r = gpuhist_result_host(counts_on_device ? d_counts : counts.data());
    if (counts_on_device)
        r.counts_location = GPUHIST_MEMORY_DEVICE;
    const gpuhist_status st = gpuhist_histogram(ctx, s, &sc.b, &r);
    const bool forced = strcmp(name, "auto") != 0;
    if (forced && !sc.certifies) {
        CHECK_MSG(st == GPUHIST_ERROR_UNSUPPORTED &&
                      strstr(gpuhist_last_error(ctx), "cannot histogram"),
                  "expected a refusal, got %s: %s", gpuhist_status_string(st),
                  gpuhist_last_error(ctx));
    } else if (CHECK_MSG(st == GPUHIST_OK, "status %s: %s", gpuhist_status_string(st),
                         gpuhist_last_error(ctx))) {
        if (counts_on_device)
            CUDA_OK(cudaMemcpy(counts.data(), d_counts, n * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost));
        compare(e, r, counts.data(), 1);
        if (forced)
            CHECK_EQ_STR(r.strategy, name);
        else if (check_choice && sc.certifies)
            CHECK_EQ_STR(r.strategy, HP);
        else if (check_choice)
            CHECK_MSG(certified_fallback(r.strategy), "auto chose %s, not cuda-fast-packed16",
                      r.strategy);
    }
    gpuhist_set_strategy(ctx, "auto");
    cudaFree(d_counts);
    check_context("%s", "");
}

/* HP and auto on host data and on device copies at element offsets 0, 1, 3, 7. auto's choice
 * is checked where one_launch cannot take the call (host data, or more than 2^22 samples). */
static void every_place(gpuhist_ctx *ctx, const std::vector<uint16_t> &v, gpuhist_dtype dt,
                        const spec_case &sc, bool counts_on_device_too)
{
    gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
    s.location = GPUHIST_MEMORY_HOST;
    const expected e = reference(&s, &sc.b);
    for (const char *name : {HP, "auto"})
        run_one(ctx, name, &s, sc, e, false, true);
    for (size_t off : {0, 1, 3, 7}) {
        void *base = NULL;
        s.data = to_device(v.data(), v.size() * 2, off * 2, &base);
        s.location = GPUHIST_MEMORY_DEVICE;
        for (const char *name : {HP, "auto"}) {
            run_one(ctx, name, &s, sc, e, false, v.size() > (1u << 22));
            if (counts_on_device_too && off == 1)
                run_one(ctx, name, &s, sc, e, true, v.size() > (1u << 22));
        }
        cudaFree(base);
    }
}

/* ---- cases ----------------------------------------------------------------------------------- */

static void case_bins(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = ((size_t)1 << 22) + 7;
    for (gpuhist_dtype dt : HALVES)
        for (const spec_case &sc : specs()) {
            const std::vector<uint16_t> v =
                mixed(dt, n, sc.b.lower, sc.b.upper, sc.b.bins);
            every_place(ctx, v, dt, sc, true);
        }
    gpuhist_destroy(ctx);
}

static void case_skew(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const spec_case sc = {"256 even [0, 1)", gpuhist_bins_even(256, 0.0, 1.0), true};
    const size_t n = ((size_t)1 << 24) + 5;
    for (gpuhist_dtype dt : HALVES) {
        const uint16_t hot = bits_of(dt, 0.3), nan = dt == GPUHIST_F16 ? 0x7e00u : 0x7fc0u;
        const uint16_t big = bits_of(dt, 7.5);
        /* 90% one value */
        std::vector<uint16_t> v(n);
        for (size_t i = 0; i < n; ++i) {
            const uint64_t r = rnd();
            v[i] = (r % 10u) ? hot : (uint16_t)(r >> 24);
        }
        check_context("%s hot90", gpuhist_dtype_name(dt));
        every_place(ctx, v, dt, sc, false);
        /* constant: in range, NaN, overflow */
        for (uint16_t c : {hot, nan, big}) {
            std::fill(v.begin(), v.end(), c);
            every_place(ctx, v, dt, sc, false);
        }
        /* runs: 4 KiB-aligned blocks of one constant word, of hot data, of uniform bits */
        for (size_t i = 0; i < n; i += 2048) {
            const uint64_t kind = rnd() % 3u;
            const uint16_t c = (uint16_t)rnd();
            for (size_t j = i; j < n && j < i + 2048; ++j) {
                const uint64_t r = rnd();
                v[j] = kind == 0 ? c : kind == 1 ? ((r % 10u) ? hot : (uint16_t)(r >> 24))
                                                 : (uint16_t)(r >> 24);
            }
        }
        every_place(ctx, v, dt, sc, false);
    }
    /* Carries: words 1 and 2 of every vector hold pair keys K and K + 1 of one packed word (bins
     * 10 and 11 with bin 20: codes 12 + 259 * 22 = 5710 and 5711), words 0 and 3 two other pairs
     * that differ, so no lane votes for bytes mode; 2^27 samples (2^24 vectors) put ~127000
     * counts on K and on K + 1 in each of 132 blocks (one per SM; fewer SMs, more): each low
     * half carries into the high half, and each high half wraps. */
    for (gpuhist_dtype dt : HALVES) {
        const size_t m = (size_t)1 << 27;
        std::vector<uint16_t> v(m);
        auto mid = [&](int bin) { return bits_of(dt, (bin + 0.5) / 256.0); };
        for (size_t i = 0; i < m; i += 8) {
            const uint16_t w[8] = {mid(100), mid(200), mid(10), mid(20), mid(11), mid(20),
                                   mid(201), mid(101)};
            memcpy(&v[i], w, sizeof w);
        }
        check_context("%s carries", gpuhist_dtype_name(dt));
        gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
        s.location = GPUHIST_MEMORY_HOST;
        const expected e = reference(&s, &sc.b);
        void *base = NULL;
        s.data = to_device(v.data(), v.size() * 2, 0, &base);
        s.location = GPUHIST_MEMORY_DEVICE;
        run_one(ctx, HP, &s, sc, e, false, true);
        run_one(ctx, "auto", &s, sc, e, true, true);
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

static void case_sizes(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const spec_case sc = {"100 even [-3, 5)", gpuhist_bins_even(100, -3.0, 5.0), true};
    const size_t sizes[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 1000, 4097, 65537,
                            (1u << 20) + 3};
    for (gpuhist_dtype dt : HALVES) {
        const std::vector<uint16_t> all = mixed(dt, (1u << 20) + 3, -3.0, 5.0, 100);
        for (size_t sz : sizes) {
            std::vector<uint16_t> v(all.begin(), all.begin() + sz);
            every_place(ctx, v, dt, sc, sz == 17);
        }
    }
    gpuhist_destroy(ctx);
}

static void case_stream(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const spec_case sc = {"255 even [0, 1)", gpuhist_bins_even(255, 0.0, 1.0), true};
    for (gpuhist_dtype dt : HALVES) {
        const std::vector<uint16_t> v = mixed(dt, (1u << 23) + 11, 0.0, 1.0, 255);
        gpuhist_samples s = gpuhist_samples_1d(v.data(), dt, v.size());
        s.location = GPUHIST_MEMORY_HOST;
        const expected e = reference(&s, &sc.b);
        unsigned char *dev = NULL;
        CUDA_OK(cudaMalloc((void **)&dev, v.size() * 2 + 16));
        for (const char *name : {HP, "auto"}) {
            check_context("stream %s %s", gpuhist_dtype_name(dt), name);
            gpuhist_set_strategy(ctx, name);
            gpuhist_samples layout = gpuhist_samples_1d(NULL, dt, 0);
            layout.location = GPUHIST_MEMORY_DEVICE;
            gpuhist_stream *st = NULL;
            if (!CHECK_MSG(gpuhist_stream_begin(ctx, &layout, &sc.b, GPUHIST_MEMORY_HOST, &st) ==
                               GPUHIST_OK,
                           "%s", gpuhist_last_error(ctx)))
                continue;
            size_t done = 0;
            while (done < v.size()) {
                size_t take = (size_t)(rnd() % 1500001u) + 1u;
                if (rnd() % 4 == 0)
                    take = (size_t)(rnd() % 17u) + 1u;
                take = std::min(take, v.size() - done);
                const size_t off = (size_t)(rnd() % 8u); /* element offset of the chunk */
                CUDA_OK(cudaMemcpy(dev + off * 2, &v[done], take * 2, cudaMemcpyHostToDevice));
                if (!CHECK_MSG(gpuhist_stream_feed(st, dev + off * 2, take) == GPUHIST_OK, "%s",
                               gpuhist_stream_error(st)))
                    break;
                done += take;
            }
            std::vector<uint64_t> counts(e.counts.size());
            gpuhist_result r = gpuhist_result_host(counts.data());
            if (CHECK_MSG(gpuhist_stream_finish(st, &r) == GPUHIST_OK, "%s",
                          gpuhist_last_error(ctx))) {
                compare(e, r, counts.data(), 1);
                CHECK_EQ_STR(r.strategy, HP);
            }
        }
        cudaFree(dev);
    }
    gpuhist_set_strategy(ctx, "auto");
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    rng_state = SEED;
    printf("seed 0x%llx\n", (unsigned long long)SEED);
    static const cuda_case cases[] = {
        {"bins", case_bins}, {"skew", case_skew}, {"sizes", case_sizes}, {"stream", case_stream}};
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
