/*
 * test_cuda_layout.cu - CUDA-only tests of sample layouts, through the public API (plus the
 * CUDA runtime for device buffers).
 *
 * Cases:
 *   channels_roi interleaved channels (subset mask) in a strided ROI, odd strides (rows not
 *                aligned to the sample size), host and device data, small staging chunks
 *   unaligned    device pointers not aligned to the sample size, multi-byte types
 *   small_calls  device-resident calls of at most 2^22 samples, which auto counts with
 *                cuda-one-launch (one block or several, pitched rows read in place,
 *                channels, every bin kind, CLAMP, NaN and outliers), synchronous and
 *                asynchronous with the tallies on the device, the same context again and
 *                again (its counters left zero); one sample more goes to another strategy
 * Every result is compared bin by bin with the CPU reference (or the known answer), with the
 * tallies (underflow, overflow, nan, total). Exit 77 (ctest: skipped) without a GPU.
 */
#include "cuda_test.cuh"

/* A region of rows `pad` bytes apart beyond their pixels, random samples of make_data in `h`,
 * described as host samples. */
static gpuhist_samples region(gpuhist_dtype dt, uint32_t C, uint32_t mask, uint32_t active,
                              uint64_t row_len, uint64_t rows, size_t pad, double lo, double hi,
                              std::vector<unsigned char> &h)
{
    const size_t sz = gpuhist_dtype_size(dt);
    const size_t stride = row_len * C * sz + pad;
    const size_t bytes = stride * rows;
    h = make_data(dt, (bytes + sz - 1) / sz, lo, hi);
    h.resize(bytes);
    gpuhist_samples hs;
    memset(&hs, 0, sizeof hs);
    hs.data = h.data();
    hs.dtype = dt;
    hs.row_length = row_len;
    hs.rows = rows;
    hs.row_stride = stride;
    hs.channels = C;
    hs.active_channels = active;
    hs.channel_mask = mask;
    hs.location = GPUHIST_MEMORY_HOST;
    return hs;
}

/* Every CUDA strategy and auto against cpu-reference on a region, its data on the device and on
 * the host. may_refuse: when the CPU backend refuses the spec for this region (e.g. NumPy 2's
 * float32 edges over a range wider than the largest float, as NumPy 2 refuses them), every CUDA
 * strategy and auto must refuse it too, with INVALID_ARGUMENT (else a refusal fails the test,
 * as reference() does). */
static void roi_check(gpuhist_ctx *ctx, gpuhist_dtype dt, uint32_t C, uint32_t mask,
                      uint32_t active, uint64_t row_len, uint64_t rows, size_t pad,
                      const gpuhist_bin_spec *b, double lo, double hi, const char *tag,
                      bool may_refuse)
{
    std::vector<unsigned char> h;
    const gpuhist_samples hs = region(dt, C, mask, active, row_len, rows, pad, lo, hi, h);
    void *base;
    gpuhist_samples ds = hs;
    ds.data = to_device(h.data(), h.size(), 0, &base);
    ds.location = GPUHIST_MEMORY_DEVICE;
    char what[128];
    snprintf(what, sizeof what, "%s %s C=%u mask=%x active=%u %llux%llu pad %zu", tag,
             gpuhist_dtype_name(dt), C, mask, active, (unsigned long long)row_len,
             (unsigned long long)rows, pad);
    gpuhist_status cpu_st = GPUHIST_OK;
    std::vector<uint64_t> counts((size_t)b->bins * C);
    gpuhist_result r = gpuhist_result_host(counts.data());
    if (may_refuse) {
        gpuhist_ctx *cpu = NULL;
        if (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
            fprintf(stderr, "cannot create a CPU context\n");
            exit(1);
        }
        cpu_st = gpuhist_histogram(cpu, &hs, b, &r);
        gpuhist_destroy(cpu);
    }
    if (cpu_st == GPUHIST_OK) {
        const expected e = reference(&hs, b);
        all_strategies(ctx, &ds, b, e, 1, what);
        all_strategies(ctx, &hs, b, e, 0, what);
        cudaFree(base);
        return;
    }
    printf("%s: refused on the CPU (%s); every CUDA strategy must refuse it\n", what,
           gpuhist_status_string(cpu_st));
    check_context("%s, cpu", what);
    CHECK_EQ_INT(cpu_st, GPUHIST_ERROR_INVALID_ARGUMENT);
    for (const char *name : cuda_strategies()) {
        check_context("%s, %s", what, name);
        if (!CHECK(gpuhist_set_strategy(ctx, name) == GPUHIST_OK))
            continue;
        for (const gpuhist_samples *s : {&hs, (const gpuhist_samples *)&ds}) {
            r = gpuhist_result_host(counts.data());
            const gpuhist_status st = gpuhist_histogram(ctx, s, b, &r);
            CHECK_MSG(st == GPUHIST_ERROR_INVALID_ARGUMENT ||
                          (st == GPUHIST_ERROR_UNSUPPORTED && strcmp(name, "auto") != 0),
                      "status %s: %s", gpuhist_status_string(st), gpuhist_last_error(ctx));
        }
    }
    gpuhist_set_strategy(ctx, "auto");
    check_context("%s", "");
    cudaFree(base);
}

static void roi_case(gpuhist_ctx *ctx, gpuhist_dtype dt, uint32_t C, uint32_t mask,
                     uint32_t active, uint64_t row_len, uint64_t rows, size_t pad,
                     const gpuhist_bin_spec *b, double lo, double hi, const char *tag)
{
    roi_check(ctx, dt, C, mask, active, row_len, rows, pad, b, lo, hi, tag, false);
}

static void roi_suite(gpuhist_ctx *ctx, const char *tag)
{
    gpuhist_bin_spec b256 = gpuhist_bins_even(256, 0.0, 65536.0);
    gpuhist_bin_spec b50 = gpuhist_bins_even(50, -1.0, 1.0);
    gpuhist_bin_spec bauto = gpuhist_bins_auto(33); /* NumPy 2's float32 edges */
    gpuhist_bin_spec bauto1 = bauto;                /* NumPy 1.x's: double edges rounded */
    bauto1.float32_linspace = 0;
    roi_case(ctx, GPUHIST_U16, 4, 0xB, 0, 101, 37, 22, &b256, 0, 65536, tag);
    roi_case(ctx, GPUHIST_U16, 4, 0xB, 0, 101, 37, 23, &b256, 0, 65536, tag); /* odd stride */
    roi_case(ctx, GPUHIST_F32, 3, 0, 2, 333, 29, 12, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_F32, 3, 0x4, 0, 333, 29, 8, &bauto, -1, 1, tag);
    /* rows 5 bytes past their pixels: most rows start off the float grid, so their floats are
     * shifted bit patterns, spanning about -3.4e38 .. 3.4e38 (with the default seed), whose
     * float32 linspace overflows (refused, as by NumPy 2); NumPy 1.x's edges take any finite
     * range */
    roi_check(ctx, GPUHIST_F32, 3, 0x4, 0, 333, 29, 5, &bauto, -1, 1, tag, true);
    roi_case(ctx, GPUHIST_F32, 3, 0x4, 0, 333, 29, 5, &bauto1, -1, 1, tag);
    roi_case(ctx, GPUHIST_U8, 4, 0, 3, 640, 48, 64, &b256, 0, 256, tag);
    roi_case(ctx, GPUHIST_F64, 2, 0, 0, 1000, 7, 8, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_I64, 1, 0, 0, 999, 11, 0, &b50, -1e6, 1e6, tag); /* packed rows */
    /* gaps of whole pixels, at most a quarter of the stride (an image's row pitch): raw-value
     * and slot counters, signed values, channels */
    gpuhist_bin_spec bu8 = gpuhist_bins_integer(256, 0);
    gpuhist_bin_spec bi8 = gpuhist_bins_even(17, -128.0, 128.0);
    gpuhist_bin_spec bu16 = gpuhist_bins_integer(65536, 0);
    roi_case(ctx, GPUHIST_U8, 1, 0, 0, 1000, 40, 24, &bu8, 0, 256, tag);
    roi_case(ctx, GPUHIST_I8, 1, 0, 0, 777, 33, 7, &bi8, -128, 128, tag);
    roi_case(ctx, GPUHIST_U16, 1, 0, 0, 500, 21, 64, &bu16, 0, 65536, tag);
    roi_case(ctx, GPUHIST_F32, 1, 0, 0, 900, 25, 16, &b50, -1, 1, tag);
    roi_case(ctx, GPUHIST_U8, 4, 0, 0, 300, 19, 40, &bu8, 0, 256, tag);
}

static void case_channels_roi(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    roi_suite(ctx, "default chunk");
    gpuhist_destroy(ctx);
    /* small staging chunks: rows split across chunks, many chunks, both staging buffers */
    setenv("GPUHIST_CUDA_CHUNK_BYTES", "1000", 1);
    ctx = cuda_ctx();
    roi_suite(ctx, "1000-byte chunks");
    gpuhist_destroy(ctx);
    unsetenv("GPUHIST_CUDA_CHUNK_BYTES");
}

static void case_unaligned(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const gpuhist_dtype dts[] = {GPUHIST_U16, GPUHIST_I16, GPUHIST_I32, GPUHIST_F32,
                                 GPUHIST_U64, GPUHIST_F64, GPUHIST_U8};
    for (gpuhist_dtype dt : dts) {
        for (size_t off : {1, 3, 4, 6}) {
            const size_t n = 100003;
            const size_t sz = gpuhist_dtype_size(dt);
            std::vector<unsigned char> h = make_data(dt, n, -1000.0, 1000.0);
            std::vector<unsigned char> hu(h.size() + off);
            memcpy(hu.data() + off, h.data(), h.size());
            gpuhist_samples hs = gpuhist_samples_1d(hu.data() + off, dt, n);
            hs.location = GPUHIST_MEMORY_HOST;
            gpuhist_bin_spec b = gpuhist_bins_even(300, -900.0, 900.0);
            expected e = reference(&hs, &b);
            void *base;
            gpuhist_samples ds = hs;
            ds.data = to_device(h.data(), h.size(), off, &base);
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[64];
            snprintf(what, sizeof what, "unaligned %s +%zu (size %zu)", gpuhist_dtype_name(dt),
                     off, sz);
            all_strategies(ctx, &ds, &b, e, 0, what);
            /* also as a 3-channel image: the copy to aligned scratch keeps the channel phase */
            {
                gpuhist_samples d3 = ds, h3 = hs;
                d3.count = h3.count = n / 3;
                d3.channels = h3.channels = 3;
                expected e3 = reference(&h3, &b);
                all_strategies(ctx, &d3, &b, e3, 0, what);
            }
            cudaFree(base);
        }
    }
    gpuhist_destroy(ctx);
}

/* One small device-resident call by auto: the strategy it took (one-launch when the plan has
 * at most 2^22 samples), counts and tallies against cpu-reference, synchronously and then
 * asynchronously with the tallies left on the device. */
static void small_call(gpuhist_ctx *ctx, gpuhist_dtype dt, uint32_t C, uint32_t mask,
                       uint64_t row_len, uint64_t rows, size_t pad, gpuhist_bin_spec b,
                       double lo, double hi, const char *want)
{
    std::vector<unsigned char> h;
    const gpuhist_samples hs = region(dt, C, mask, 0, row_len, rows, pad, lo, hi, h);
    const size_t bytes = h.size();
    expected e = reference(&hs, &b);
    void *base;
    gpuhist_samples ds = hs;
    ds.data = to_device(h.data(), bytes, 0, &base);
    ds.location = GPUHIST_MEMORY_DEVICE;
    check_context("small %s C=%u mask=%x %llux%llu pad %zu, %u bins kind %d outliers %d",
                  gpuhist_dtype_name(dt), C, mask, (unsigned long long)row_len,
                  (unsigned long long)rows, pad, b.bins, (int)b.kind, (int)b.outliers);
    const size_t n = e.counts.size();
    uint64_t *d_counts = NULL, *d_stats = NULL;
    CUDA_OK(cudaMalloc(&d_counts, n * sizeof(uint64_t)));
    CUDA_OK(cudaMalloc(&d_stats, 4 * GPUHIST_MAX_CHANNELS * sizeof(uint64_t)));
    std::vector<uint64_t> counts(n);
    for (int async = 0; async < 2; ++async) {
        CUDA_OK(cudaMemset(d_counts, 0xab, n * sizeof(uint64_t)));
        gpuhist_result r = gpuhist_result_host(d_counts);
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        if (async)
            r.device_stats = d_stats;
        gpuhist_set_async(ctx, async);
        gpuhist_status st = gpuhist_histogram(ctx, &ds, &b, &r);
        gpuhist_set_async(ctx, 0);
        if (!CHECK_MSG(st == GPUHIST_OK, "%s", gpuhist_last_error(ctx)))
            break;
        CHECK_EQ_STR(r.strategy, want);
        CUDA_OK(cudaMemcpy(counts.data(), d_counts, n * 8, cudaMemcpyDeviceToHost));
        if (async) { /* the tallies are on the device: 4 per histogram */
            std::vector<uint64_t> t(4 * e.r.channels);
            CUDA_OK(cudaMemcpy(t.data(), d_stats, t.size() * 8, cudaMemcpyDeviceToHost));
            for (uint32_t k = 0; k < e.r.channels; ++k) {
                r.underflow[k] = t[4 * k];
                r.overflow[k] = t[4 * k + 1];
                r.nan[k] = t[4 * k + 2];
                r.total[k] = t[4 * k + 3];
            }
        }
        compare(e, r, counts.data(), 1);
    }
    cudaFree(d_counts);
    cudaFree(d_stats);
    cudaFree(base);
}

static void case_small_calls(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const char *one = "cuda-one-launch";
    gpuhist_bin_spec clamp = gpuhist_bins_even(50, -1.0, 1.0);
    clamp.outliers = GPUHIST_OUTLIERS_CLAMP;
    const double edges[] = {-1.0, -0.5, -0.25, 0.0, 1e-3, 0.5, 0.75, 1.0};
    /* a pitched 64x64 grey image, as cudaMallocPitch lays it out (rows 512 bytes apart) */
    small_call(ctx, GPUHIST_U8, 1, 0, 64, 64, 448, gpuhist_bins_integer(256, 0), 0, 256, one);
    small_call(ctx, GPUHIST_U8, 4, 0x7, 61, 17, 12, gpuhist_bins_integer(256, 0), 0, 256, one);
    small_call(ctx, GPUHIST_I8, 1, 0, 999, 3, 1, gpuhist_bins_even(17, -128.0, 128.0), -128,
               128, one);
    small_call(ctx, GPUHIST_U16, 1, 0, 300, 10, 2, gpuhist_bins_even(4096, 0.0, 65536.0), 0,
               65536, one);
    small_call(ctx, GPUHIST_I32, 2, 0, 100, 50, 8, gpuhist_bins_even(300, -900.0, 900.0), -1000,
               1000, one);
    small_call(ctx, GPUHIST_F32, 1, 0, 1000, 7, 4, clamp, -1, 1, one);
    small_call(ctx, GPUHIST_F32, 3, 0x5, 333, 29, 12, gpuhist_bins_edges(7, edges), -1, 1, one);
    small_call(ctx, GPUHIST_F64, 1, 0, 4096, 16, 0, gpuhist_bins_even(4093, -1.0, 1.0), -1, 1,
               one);
    small_call(ctx, GPUHIST_U64, 1, 0, 1, 1, 0, gpuhist_bins_even(10, 0.0, 10.0), 0, 10, one);
    small_call(ctx, GPUHIST_I64, 1, 0, 65536, 1, 0, gpuhist_bins_even(100, -1e6, 1e6), -1e6,
               1e6, one);
    /* several blocks, the last one finishing: an HD frame in a 2048-byte pitch, 4 channels,
     * CLAMP, edges, and exactly 2^22 samples */
    small_call(ctx, GPUHIST_U8, 1, 0, 1920, 1080, 128, gpuhist_bins_integer(256, 0), 0, 256,
               one);
    small_call(ctx, GPUHIST_U16, 4, 0, 700, 400, 8, gpuhist_bins_even(1000, 0.0, 65536.0), 0,
               65536, one);
    small_call(ctx, GPUHIST_F32, 1, 0, 4096, 300, 16, clamp, -1, 1, one);
    small_call(ctx, GPUHIST_F64, 2, 0x2, 3001, 333, 0, gpuhist_bins_edges(7, edges), -1, 1,
               one);
    small_call(ctx, GPUHIST_U8, 1, 0, 2048, 2048, 0, gpuhist_bins_integer(256, 0), 0, 256, one);
    /* one sample past 2^22: the usual strategies (the first u8 rule) */
    small_call(ctx, GPUHIST_U8, 1, 0, (1u << 22) + 1u, 1, 0, gpuhist_bins_integer(256, 0), 0,
               256, "cuda-byte-pairs");
    /* more counters than one block's 48 KiB: the next rule */
    small_call(ctx, GPUHIST_F32, 1, 0, 1000, 1, 0, gpuhist_bins_even(20000, -1.0, 1.0), -1, 1,
               "cuda-fast-smem");
    check_context("%s", "");
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const cuda_case cases[] = {
        {"channels_roi", case_channels_roi},
        {"unaligned", case_unaligned},
        {"small_calls", case_small_calls},
    };
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
