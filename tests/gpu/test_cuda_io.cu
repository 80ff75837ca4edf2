/*
 * test_cuda_io.cu - CUDA-only tests of where data and counts live and how calls follow each
 * other, through the public API (plus the CUDA runtime for device buffers).
 *
 * Cases:
 *   big_u8       > 2^32 u8 samples in one call (device memory filled by a kernel), every CUDA
 *                strategy, counts against the known fill pattern; then all one value, so one bin
 *                holds more than 2^32 counts; both also fed to a stream in 7 chunks
 *   device_io    device samples -> device counts for several dtypes / kinds / policies and auto
 *                range, every CUDA strategy, against cpu-reference on a host copy
 *   async        the same with a user stream, gpuhist_set_async and device_stats
 *   host_chunks  host input larger than one 256 MiB staging chunk
 *   reuse        asynchronous calls back to back on one context through every finish path
 *   multi_device a context over every GPU (two on GPU 0 when there is one): parts already on
 *                each GPU fed to one stream, a one-shot call on one GPU's data (host and device
 *                counts), a host array shared out (even and auto range), lent buffers in turn
 * Every result is compared bin by bin with the CPU reference (or the known answer), with the
 * tallies (underflow, overflow, nan, total). Exit 77 (ctest: skipped) without a GPU.
 */
#include "cuda_test.cuh"

__global__ void fill_mod(unsigned char *p, uint64_t n, uint32_t mod)
{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        p[i] = (unsigned char)(i % mod);
}

/* Feed n device bytes at d to a stream in 7 uneven chunks; compare with e (auto strategy). */
static void streamed_big(gpuhist_ctx *ctx, const unsigned char *d, uint64_t n,
                         const gpuhist_bin_spec *b, const expected &e, const char *label)
{
    check_context("%s", label);
    gpuhist_samples lay = gpuhist_samples_1d(NULL, GPUHIST_U8, 0);
    lay.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_stream *st = NULL;
    if (!CHECK_EQ_INT(gpuhist_stream_begin(ctx, &lay, b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK))
        return;
    uint64_t done = 0;
    for (int k = 0; k < 7; ++k) {
        uint64_t take = k == 6 ? n - done : n / 7 + (uint64_t)k * 4099;
        CHECK_EQ_INT(gpuhist_stream_feed(st, d + done, take), GPUHIST_OK);
        done += take;
    }
    std::vector<unsigned long long> c(b->bins);
    gpuhist_result r = gpuhist_result_host((uint64_t *)c.data());
    if (!CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK))
        return;
    for (uint32_t i = 0; i < b->bins; ++i)
        if (!CHECK_EQ_U64(c[i], e.counts[i]))
            break;
    CHECK_EQ_U64(r.total[0], n);
}

static void case_big_u8(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const uint64_t n = 4500000000ull; /* > 2^32 */
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < n + (2ull << 30)) {
        fprintf(stderr, "big_u8 needs %.1f GiB of free device memory, %.1f free\n",
                (double)(n + (2ull << 30)) / 1073741824.0, (double)free_b / 1073741824.0);
        check_skip("not enough device memory");
    }
    unsigned char *d = NULL;
    CUDA_OK(cudaMalloc(&d, n));
    fill_mod<<<1024, 256>>>(d, n, 251);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());

    gpuhist_samples s = gpuhist_samples_1d(d, GPUHIST_U8, n);
    s.location = GPUHIST_MEMORY_DEVICE;
    gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 256.0);
    expected e;
    e.counts.assign(256, 0);
    for (uint32_t v = 0; v < 251; ++v)
        e.counts[v] = (n - 1 - v) / 251 + 1;
    memset(&e.r, 0, sizeof e.r);
    e.r.bins = 256;
    e.r.channels = 1;
    e.r.total[0] = n;
    e.r.lower = 0.0;
    e.r.upper = 256.0;
    all_strategies(ctx, &s, &b, e, 0, "big_u8 pattern");

    /* the same through a stream: the device array fed in 7 uneven chunks */
    streamed_big(ctx, d, n, &b, e, "big_u8 pattern, streamed");

    /* one value everywhere: bin 7 holds n > 2^32 */
    CUDA_OK(cudaMemset(d, 7, n));
    std::fill(e.counts.begin(), e.counts.end(), 0);
    e.counts[7] = n;
    all_strategies(ctx, &s, &b, e, 1, "big_u8 constant");
    streamed_big(ctx, d, n, &b, e, "big_u8 constant, streamed");

    /* one bin of 4 (64 values each): the value-folding strategies at > 2^32 too */
    gpuhist_bin_spec b4 = gpuhist_bins_even(4, 0.0, 256.0);
    e.counts.assign(4, 0);
    e.counts[0] = n;
    e.r.bins = 4;
    all_strategies(ctx, &s, &b4, e, 0, "big_u8 constant, 4 bins");
    cudaFree(d);
    gpuhist_destroy(ctx);
}

struct spec_case {
    gpuhist_dtype dt;
    gpuhist_bin_spec b;
    double lo, hi; /* data range */
};

static std::vector<double> uneven_edges(uint32_t bins, double lo, double hi)
{
    std::vector<double> e(bins + 1);
    double x = lo;
    for (uint32_t i = 0; i <= bins; ++i) {
        e[i] = x;
        x += (hi - lo) / bins * (0.5 + (double)(rnd() % 1000) / 1000.0);
    }
    return e;
}

static std::vector<spec_case> spec_cases(std::vector<double> &edges_store)
{
    std::vector<spec_case> v;
    edges_store = uneven_edges(17, -3.0, 5.0);
    v.push_back({GPUHIST_F32, gpuhist_bins_even(1000, -1.0, 1.0), -1.0, 1.0});
    v.push_back({GPUHIST_F32, gpuhist_bins_even(7, -1.0, 1.0), -1.0, 1.0});
    v.push_back({GPUHIST_F64, gpuhist_bins_edges(17, edges_store.data()), -3.0, 5.0});
    v.push_back({GPUHIST_I32, gpuhist_bins_integer(300, -150), -200.0, 200.0});
    v.push_back({GPUHIST_U64, gpuhist_bins_even(5000, 0.0, 1e12), 0.0, 1e12});
    v.push_back({GPUHIST_I64, gpuhist_bins_auto(100), -1e15, 1e15});
    v.push_back({GPUHIST_F32, gpuhist_bins_auto(64), -10.0, 10.0});
    v.push_back({GPUHIST_U16, gpuhist_bins_even(100000, 0.0, 65536.0), 0.0, 65536.0});
    v.push_back({GPUHIST_I8, gpuhist_bins_integer(256, -128), -128.0, 128.0});
    v.push_back({GPUHIST_U8, gpuhist_bins_even(10, 20.0, 200.0), 0.0, 256.0});
    gpuhist_bin_spec clamp = gpuhist_bins_even(31, -0.5, 0.5);
    clamp.outliers = GPUHIST_OUTLIERS_CLAMP;
    clamp.last_edge_inclusive = 1;
    v.push_back({GPUHIST_F64, clamp, -0.5, 0.5});
    return v;
}

static void case_device_io(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    std::vector<double> edges;
    for (const spec_case &c : spec_cases(edges)) {
        const size_t n = 1000003;
        std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
        hs.location = GPUHIST_MEMORY_HOST;
        expected e = reference(&hs, &c.b);
        void *base;
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), h.size(), 0, &base);
        ds.location = GPUHIST_MEMORY_AUTO; /* detected from the pointer attributes */
        char what[64];
        snprintf(what, sizeof what, "device_io %s bins %u kind %d", gpuhist_dtype_name(c.dt),
                 c.b.bins, (int)c.b.kind);
        all_strategies(ctx, &ds, &c.b, e, 1, what);
        all_strategies(ctx, &ds, &c.b, e, 0, what);
        /* host samples through the staging path */
        all_strategies(ctx, &hs, &c.b, e, 0, what);
        cudaFree(base);
    }
    gpuhist_destroy(ctx);
}

static void case_async(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(gpuhist_set_stream(ctx, (void *)stream) == GPUHIST_OK);
    CHECK(gpuhist_set_async(ctx, 1) == GPUHIST_OK);
    std::vector<double> edges;
    for (const spec_case &c : spec_cases(edges)) {
        if (c.b.auto_range)
            continue;
        const size_t n = 777777;
        std::vector<unsigned char> h = make_data(c.dt, n, c.lo, c.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), c.dt, n);
        expected e = reference(&hs, &c.b);
        void *base;
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), h.size(), 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        uint64_t *d_counts, *d_stats;
        CUDA_OK(cudaMalloc(&d_counts, e.counts.size() * 8));
        CUDA_OK(cudaMalloc(&d_stats, 4 * GPUHIST_MAX_CHANNELS * 8));
        for (const char *name : cuda_strategies()) {
            check_context("async %s bins %u, %s", gpuhist_dtype_name(c.dt), c.b.bins, name);
            gpuhist_set_strategy(ctx, name);
            CUDA_OK(cudaMemsetAsync(d_counts, 0xcd, e.counts.size() * 8, stream));
            CUDA_OK(cudaMemsetAsync(d_stats, 0xcd, 4 * GPUHIST_MAX_CHANNELS * 8, stream));
            gpuhist_result r = gpuhist_result_host(d_counts);
            r.counts_location = GPUHIST_MEMORY_DEVICE;
            r.device_stats = d_stats;
            gpuhist_status st = gpuhist_histogram(ctx, &ds, &c.b, &r);
            if (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0)
                continue;
            if (!CHECK_MSG(st == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
                continue;
            CUDA_OK(cudaStreamSynchronize(stream));
            std::vector<uint64_t> counts(e.counts.size()), stats(4 * GPUHIST_MAX_CHANNELS);
            CUDA_OK(cudaMemcpy(counts.data(), d_counts, counts.size() * 8,
                               cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(stats.data(), d_stats, stats.size() * 8, cudaMemcpyDeviceToHost));
            for (uint32_t k = 0; k < e.r.channels; ++k) {
                r.underflow[k] = stats[4 * k + 0];
                r.overflow[k] = stats[4 * k + 1];
                r.nan[k] = stats[4 * k + 2];
                r.total[k] = stats[4 * k + 3];
            }
            compare(e, r, counts.data(), 1);
        }
        gpuhist_set_strategy(ctx, "auto");
        cudaFree(d_counts);
        cudaFree(d_stats);
        cudaFree(base);
    }
    check_context("%s", "");
    gpuhist_destroy(ctx);
    cudaStreamDestroy(stream);
}

static void case_host_chunks(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t n = 70000001; /* 280 MB of f32: more than one 256 MiB chunk */
    std::vector<unsigned char> h = make_data(GPUHIST_F32, n, -5.0, 5.0);
    gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_F32, n);
    hs.location = GPUHIST_MEMORY_HOST;
    gpuhist_bin_spec b = gpuhist_bins_even(4096, -4.0, 4.0);
    expected e = reference(&hs, &b);
    all_strategies(ctx, &hs, &b, e, 0, "host_chunks f32");
    all_strategies(ctx, &hs, &b, e, 1, "host_chunks f32");
    gpuhist_bin_spec ba = gpuhist_bins_auto(1000);
    expected ea = reference(&hs, &ba);
    check_context("host_chunks auto range");
    std::vector<uint64_t> counts(1000);
    gpuhist_result r = gpuhist_result_host(counts.data());
    if (CHECK(gpuhist_histogram(ctx, &hs, &ba, &r) == GPUHIST_OK))
        compare(ea, r, counts.data(), 1);
    gpuhist_destroy(ctx);
}

/* One context, asynchronous calls back to back with no synchronisation between them, whose
 * counters take every path of the backend's finish (raw values folded by one block or by the
 * multi-block fold, slot counters finished by one block or by the multi-block finish) and are
 * zeroed by the previous call's finish instead of a memset; then the same on a second stream
 * (a change of stream), then synchronous calls. Every result must equal the cpu-reference. */
static void case_reuse(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    cudaStream_t streams[2];
    for (cudaStream_t &st : streams)
        CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    struct one {
        gpuhist_dtype dt;
        gpuhist_bin_spec b;
        double lo, hi;
        uint32_t channels;
    };
    gpuhist_bin_spec clamp = gpuhist_bins_even(300, -1.0, 1.0);
    clamp.outliers = GPUHIST_OUTLIERS_CLAMP;
    const std::vector<one> specs = {
        {GPUHIST_U8, gpuhist_bins_integer(256, 0), 0.0, 256.0, 1},          /* small values */
        {GPUHIST_U16, gpuhist_bins_integer(65536, 0), 0.0, 65536.0, 1},     /* big values */
        {GPUHIST_F32, gpuhist_bins_even(4096, -1.0, 1.0), -1.0, 1.0, 1},    /* small slots */
        {GPUHIST_F32, gpuhist_bins_even(1u << 17, -1.0, 1.0), -1.0, 1.0, 1}, /* big slots */
        {GPUHIST_U8, gpuhist_bins_even(10, 20.0, 200.0), 0.0, 256.0, 4},    /* 4 x 256 values */
        {GPUHIST_F32, clamp, -1.0, 1.0, 1},                                 /* clamp, small */
        {GPUHIST_I16, gpuhist_bins_even(7, -100.0, 100.0), -200.0, 200.0, 2}, /* small slots of
                                                                                 big values */
    };
    struct run {
        expected e;
        void *base;
        uint64_t *d_counts, *d_stats;
        gpuhist_samples ds;
    };
    std::vector<run> runs;
    for (const one &o : specs) {
        const size_t pixels = 300001;
        std::vector<unsigned char> h = make_data(o.dt, pixels * o.channels, o.lo, o.hi);
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), o.dt, pixels);
        hs.channels = o.channels;
        run r;
        r.e = reference(&hs, &o.b);
        r.ds = hs;
        r.ds.data = to_device(h.data(), h.size(), 0, &r.base);
        r.ds.location = GPUHIST_MEMORY_DEVICE;
        CUDA_OK(cudaMalloc(&r.d_counts, r.e.counts.size() * 8));
        CUDA_OK(cudaMalloc(&r.d_stats, 4 * GPUHIST_MAX_CHANNELS * 8));
        runs.push_back(r);
    }
    auto check_run = [&](const run &r, const gpuhist_result &res) {
        std::vector<uint64_t> counts(r.e.counts.size()), stats(4 * GPUHIST_MAX_CHANNELS);
        CUDA_OK(cudaMemcpy(counts.data(), r.d_counts, counts.size() * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(stats.data(), r.d_stats, stats.size() * 8, cudaMemcpyDeviceToHost));
        gpuhist_result x = res;
        for (uint32_t k = 0; k < r.e.r.channels; ++k) {
            x.underflow[k] = stats[4 * k + 0];
            x.overflow[k] = stats[4 * k + 1];
            x.nan[k] = stats[4 * k + 2];
            x.total[k] = stats[4 * k + 3];
        }
        compare(r.e, x, counts.data(), 1);
    };
    CHECK(gpuhist_set_async(ctx, 1) == GPUHIST_OK);
    /* rounds: 0, 1 on stream 0; 2 on stream 1; 3 back on stream 0; order shuffled per round */
    for (int round = 0; round < 4; ++round) {
        cudaStream_t st = streams[round == 2 ? 1 : 0];
        CHECK(gpuhist_set_stream(ctx, (void *)st) == GPUHIST_OK);
        std::vector<size_t> order(runs.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        for (size_t i = order.size(); i > 1; --i) /* Fisher-Yates */
            std::swap(order[i - 1], order[rnd() % i]);
        std::vector<gpuhist_result> res(runs.size());
        for (size_t i : order) {
            check_context("reuse round %d, spec %zu (%s, %u bins)", round, i,
                          gpuhist_dtype_name(specs[i].dt), specs[i].b.bins);
            CUDA_OK(cudaMemsetAsync(runs[i].d_counts, 0xcd, runs[i].e.counts.size() * 8, st));
            res[i] = gpuhist_result_host(runs[i].d_counts);
            res[i].counts_location = GPUHIST_MEMORY_DEVICE;
            res[i].device_stats = runs[i].d_stats;
            gpuhist_status s = gpuhist_histogram(ctx, &runs[i].ds, &specs[i].b, &res[i]);
            CHECK_MSG(s == GPUHIST_OK, "%s", gpuhist_last_error(ctx));
            /* a call that fails validation in between leaves nothing behind */
            gpuhist_bin_spec bad = gpuhist_bins_even(0, 0.0, 1.0);
            CHECK(gpuhist_histogram(ctx, &runs[i].ds, &bad, &res[i]) ==
                  GPUHIST_ERROR_INVALID_ARGUMENT);
        }
        CUDA_OK(cudaStreamSynchronize(st));
        for (size_t i = 0; i < runs.size(); ++i) {
            check_context("reuse round %d, spec %zu result", round, i);
            check_run(runs[i], res[i]);
        }
    }
    /* synchronous, host counts, after the asynchronous rounds */
    CHECK(gpuhist_set_async(ctx, 0) == GPUHIST_OK);
    CHECK(gpuhist_set_stream(ctx, NULL) == GPUHIST_OK);
    for (size_t i = 0; i < runs.size(); ++i) {
        check_context("reuse sync, spec %zu", i);
        std::vector<uint64_t> counts(runs[i].e.counts.size(), 0xdeadbeefull);
        gpuhist_result r = gpuhist_result_host(counts.data());
        if (CHECK_MSG(gpuhist_histogram(ctx, &runs[i].ds, &specs[i].b, &r) == GPUHIST_OK, "%s",
                      gpuhist_last_error(ctx)))
            compare(runs[i].e, r, counts.data(), 1);
    }
    check_context("%s", "");
    for (run &r : runs) {
        cudaFree(r.d_counts);
        cudaFree(r.d_stats);
        cudaFree(r.base);
    }
    gpuhist_destroy(ctx);
    for (cudaStream_t st : streams)
        cudaStreamDestroy(st);
}

/* A context over every GPU (two contexts on GPU 0 when there is one): data that already lives
 * on each GPU is fed to one stream and counted where it is; a one-shot call on device data of
 * the last GPU runs there; a host array shared out; all against cpu-reference. */
static void case_multi_device(void)
{
    int ngpu = gpuhist_device_count(GPUHIST_BACKEND_CUDA);
    if (ngpu == 0)
        check_skip("no CUDA device");
    std::vector<int> devs;
    for (int d = 0; d < (ngpu > 1 ? ngpu : 2); ++d)
        devs.push_back(ngpu > 1 ? d : 0);
    gpuhist_ctx *ctx = NULL;
    if (!CHECK_EQ_INT(gpuhist_create_multi(&ctx, GPUHIST_BACKEND_CUDA, devs.data(), (int)devs.size()),
                      GPUHIST_OK)) {
        fprintf(stderr, "%s\n", gpuhist_last_error(NULL));
        return;
    }
    printf("multi_device: %s\n", gpuhist_device_name(ctx));
    const size_t per = ((size_t)96 << 20) + 13; /* f32 samples per device part */
    std::vector<unsigned char> host = make_data(GPUHIST_F32, per * devs.size(), -0.1, 1.1);
    gpuhist_samples hs = gpuhist_samples_1d(host.data(), GPUHIST_F32, per * devs.size());
    gpuhist_bin_spec b = gpuhist_bins_even(4096, 0.0, 1.0);
    expected e = reference(&hs, &b);
    std::vector<uint64_t> counts(b.bins);

    /* each part on its device */
    std::vector<void *> parts(devs.size());
    for (size_t i = 0; i < devs.size(); ++i) {
        CUDA_OK(cudaSetDevice(devs[i]));
        CUDA_OK(cudaMalloc(&parts[i], per * 4));
        CUDA_OK(cudaMemcpy(parts[i], host.data() + i * per * 4, per * 4, cudaMemcpyHostToDevice));
    }
    check_context("multi_device: device parts fed to one stream");
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_F32, 0);
    gpuhist_stream *st = NULL;
    if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &st), GPUHIST_OK)) {
        for (size_t i = 0; i < devs.size(); ++i)
            CHECK_EQ_INT(gpuhist_stream_feed(st, parts[i], per), GPUHIST_OK);
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
        compare(e, r, counts.data(), 1);
    }
    check_context("multi_device: one-shot on the last device's part");
    {
        gpuhist_samples ds = gpuhist_samples_1d(parts.back(), GPUHIST_F32, per);
        gpuhist_samples hpart = gpuhist_samples_1d(host.data() + (devs.size() - 1) * per * 4,
                                                   GPUHIST_F32, per);
        expected ep = reference(&hpart, &b);
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &ds, &b, &r), GPUHIST_OK);
        compare(ep, r, counts.data(), 1);
        /* counts on that device too */
        void *dcounts = NULL;
        CUDA_OK(cudaSetDevice(devs.back()));
        CUDA_OK(cudaMalloc(&dcounts, b.bins * 8));
        r = gpuhist_result_host((uint64_t *)dcounts);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        CHECK_EQ_INT(gpuhist_histogram(ctx, &ds, &b, &r), GPUHIST_OK);
        std::vector<uint64_t> back(b.bins);
        CUDA_OK(cudaMemcpy(back.data(), dcounts, b.bins * 8, cudaMemcpyDeviceToHost));
        CHECK(back == ep.counts);
        cudaFree(dcounts);
    }
    check_context("multi_device: host array shared out, auto range, lent buffers");
    {
        gpuhist_result r = gpuhist_result_host(counts.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &hs, &b, &r), GPUHIST_OK);
        compare(e, r, counts.data(), 1);
        gpuhist_bin_spec ab = gpuhist_bins_auto(1000);
        expected ea = reference(&hs, &ab);
        std::vector<uint64_t> c2(ab.bins);
        r = gpuhist_result_host(c2.data());
        CHECK_EQ_INT(gpuhist_histogram(ctx, &hs, &ab, &r), GPUHIST_OK);
        compare(ea, r, c2.data(), 1);
        /* lent page-locked buffers, in turn to the devices */
        if (CHECK_EQ_INT(gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &st),
                         GPUHIST_OK)) {
            const size_t chunk = (size_t)7 << 20;
            for (size_t at = 0; at < per * devs.size(); at += chunk) {
                size_t k = std::min(chunk, per * devs.size() - at);
                void *buf = NULL;
                if (!CHECK_EQ_INT(gpuhist_stream_buffer(st, k * 4, &buf), GPUHIST_OK))
                    break;
                memcpy(buf, host.data() + at * 4, k * 4);
                CHECK_EQ_INT(gpuhist_stream_submit(st, buf, k), GPUHIST_OK);
            }
            r = gpuhist_result_host(counts.data());
            CHECK_EQ_INT(gpuhist_stream_finish(st, &r), GPUHIST_OK);
            compare(e, r, counts.data(), 1);
        }
    }
    for (size_t i = 0; i < devs.size(); ++i) {
        cudaSetDevice(devs[i]);
        cudaFree(parts[i]);
    }
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const cuda_case cases[] = {
        {"big_u8", case_big_u8},
        {"device_io", case_device_io},
        {"async", case_async},
        {"host_chunks", case_host_chunks},
        {"reuse", case_reuse},
        {"multi_device", case_multi_device},
    };
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
