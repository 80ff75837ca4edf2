/*
 * test_cuda_data.cu - CUDA-only tests of the data-dependent modes of the byte and packed
 * 16-bit strategies, through the public API (plus the CUDA runtime for device buffers).
 *
 * Cases:
 *   byte_channels 400 MiB of u8 in every layout cuda-byte-pairs pairs (one channel; 2 of 2; 2, 3,
 *                4 of 4 under several masks), aligned and unaligned starts, five byte values so
 *                the pair counters carry; every CUDA strategy
 *   byte_runs    192 MiB of u8 that switches cuda-byte-pairs between its modes (runs of one word,
 *                vectors framed by one pair, one value with stray bytes, random) in the layouts
 *                of byte_channels, aligned and unaligned; every CUDA strategy
 *   u16_skew     skewed u16 through cuda-fast-packed16's hot modes, its partial rows summed in
 *                the counting kernel and by a kernel of their own (GPUHIST_CUDA_P16_FUSED=0),
 *                and cuda-two-pass' pass 2 on two hot values
 * Every result is compared bin by bin with the CPU reference (or the known answer), with the
 * tallies (underflow, overflow, nan, total). Exit 77 (ctest: skipped) without a GPU.
 */
#include "cuda_test.cuh"

/* An interleaved 8-bit layout: channels, channel mask, active channels (as gpuhist_samples). */
struct byte_layout {
    uint32_t C, mask, active;
};

/* The bytes of h in each layout, from an aligned and an unaligned device start (+3: a launch
 * phase other than 0), through every CUDA strategy against the CPU reference. */
static void check_byte_layouts(gpuhist_ctx *ctx, const std::vector<unsigned char> &h,
                               const byte_layout *layouts, size_t nlayouts, const char *label)
{
    const size_t bytes = h.size();
    gpuhist_bin_spec b = gpuhist_bins_integer(256, 0);
    void *base[2];
    const size_t offsets[2] = {0, 3};
    void *d[2];
    for (int o = 0; o < 2; ++o)
        d[o] = to_device(h.data(), bytes, offsets[o], &base[o]);
    for (size_t li = 0; li < nlayouts; ++li) {
        const byte_layout &l = layouts[li];
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_U8, bytes / l.C);
        hs.location = GPUHIST_MEMORY_HOST;
        hs.channels = l.C;
        hs.channel_mask = l.mask;
        hs.active_channels = l.active;
        expected e = reference(&hs, &b);
        for (int o = 0; o < 2; ++o) {
            gpuhist_samples ds = hs;
            ds.data = d[o];
            ds.location = GPUHIST_MEMORY_DEVICE;
            char what[96];
            snprintf(what, sizeof what, "%s C=%u mask=%x active=%u +%zu", label, l.C, l.mask,
                     l.active, offsets[o]);
            all_strategies(ctx, &ds, &b, e, 1, what);
        }
    }
    cudaFree(base[0]);
    cudaFree(base[1]);
}

/* 8-bit data in every layout cuda-byte-pairs counts as pairs (one channel; 2 of 2; 2, 3 and 4
 * of 4 under several masks, so the pair is not always R,G), from an aligned and an unaligned
 * start (a launch phase other than 0). Five byte values in a period of 5 bytes: ~100k samples of
 * each pair key per block, so its 16-bit counters carry. */
static void case_byte_channels(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t bytes = 400ull << 20;
    std::vector<unsigned char> h(bytes);
    for (size_t i = 0; i < bytes; ++i)
        h[i] = (unsigned char)(i % 5 * 37 + 11);
    static const byte_layout layouts[] = {{4, 0, 3},   {4, 0, 4}, {4, 0x5, 0}, {4, 0xA, 0},
                                          {4, 0xE, 0}, {2, 0, 0}, {1, 0, 0}};
    check_byte_layouts(ctx, h, layouts, sizeof layouts / sizeof layouts[0], "byte_channels");
    gpuhist_destroy(ctx);
}

/* 8-bit data that drives cuda-byte-pairs through each of its counting modes within one call, in
 * six of byte_channels' layouts: in each 1 MiB, 256 KiB of one repeated 32-bit word (four
 * different bytes, a new word per MiB: the word-run mode), 256 KiB of vectors that start and end
 * with the same pair but hold random bytes between (every lane of a warp repeats its pair key,
 * yet the words differ: bytes mode), 256 KiB of one value with a stray byte every 4099 bytes
 * (the run test fails now and then), 256 KiB of random bytes (pairs mode). */
static void case_byte_runs(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t bytes = 192ull << 20, mib = 1u << 20, quarter = mib / 4;
    std::vector<unsigned char> h(bytes);
    for (size_t i = 0; i < bytes; ++i) {
        const size_t m = i / mib, r = i % mib;
        unsigned char x;
        if (r < quarter)
            x = (unsigned char)((m * 4 + i % 4) * 29 + 3);
        else if (r < 2 * quarter)
            x = (i % 16 < 2 || i % 16 >= 14) ? 9 : (unsigned char)rnd();
        else if (r < 3 * quarter)
            x = i % 4099 == 0 ? (unsigned char)rnd() : 0x5A;
        else
            x = (unsigned char)rnd();
        h[i] = x;
    }
    static const byte_layout layouts[] = {{4, 0, 3},   {4, 0, 4}, {4, 0x5, 0},
                                          {4, 0xE, 0}, {2, 0, 0}, {1, 0, 0}};
    check_byte_layouts(ctx, h, layouts, sizeof layouts / sizeof layouts[0], "byte_runs");
    gpuhist_destroy(ctx);
}

/* Skewed 16-bit data through cuda-fast-packed16's hot mode (and auto): 4 Mi-sample stretches of
 * 90% one value, one value, two values of 45% each (the miss path carries out of 16-bit halves),
 * uniform values, runs of 1024 equal values, and 97% of a value that moves every 64 Ki samples,
 * so warps switch between plain and hot mode, move their hot key, skip whole iterations and
 * count misses in rounds. 22 iterations of every block of a 132-SM grid (the H100 and the H200)
 * leave a block's last hot iteration unflushed at the loop's end; the other size ends on a
 * partial iteration. Then cuda-two-pass with two hot f32 values, so that its pass 2 (the same
 * engine) counts the one its reference-key exclusion lets through in hot mode. */
static void case_u16_skew(void)
{
    gpuhist_ctx *ctx = cuda_ctx();
    const size_t it = 132ull * 24576ull;
    for (size_t n : {22 * it, 22 * it - 777}) {
        std::vector<uint16_t> h(n);
        for (size_t i = 0; i < n; ++i) {
            const uint32_t r = (uint32_t)rnd(), pct = (r >> 16) % 100;
            uint16_t x = (uint16_t)r;
            switch ((i >> 22) % 6) {
            case 0: x = pct < 90 ? 40000 : x; break;
            case 1: x = 123; break;
            case 2: x = pct < 45 ? 7 : pct < 90 ? 65535 : x; break;
            case 3: break;
            case 4: x = (uint16_t)(i >> 10); break;
            default: x = pct < 97 ? (uint16_t)(2 * (i >> 16) + 1) : x; break;
            }
            h[i] = x;
        }
        void *base = NULL;
        gpuhist_samples hs = gpuhist_samples_1d(h.data(), GPUHIST_U16, n);
        gpuhist_samples ds = hs;
        ds.data = to_device(h.data(), n * 2, 0, &base);
        ds.location = GPUHIST_MEMORY_DEVICE;
        const gpuhist_bin_spec specs[] = {gpuhist_bins_integer(65536, 0),
                                          gpuhist_bins_even(1000, 0.0, 65536.0)};
        for (const gpuhist_bin_spec &b : specs) {
            const expected e = reference(&hs, &b);
            for (const char *name : {"auto", "cuda-fast-packed16"}) {
                check_context("u16_skew n=%zu, %u bins, %s", n, b.bins, name);
                one_strategy(ctx, name, &ds, &b, e);
            }
            /* the partial rows summed by a kernel of their own, not inside the counting one */
            setenv("GPUHIST_CUDA_P16_FUSED", "0", 1);
            check_context("u16_skew n=%zu, %u bins, rows reduced apart", n, b.bins);
            one_strategy(ctx, "cuda-fast-packed16", &ds, &b, e);
            unsetenv("GPUHIST_CUDA_P16_FUSED");
        }
        cudaFree(base);
    }
    const size_t n = 6000011;
    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i) {
        const uint32_t r = (uint32_t)rnd(), pct = (r >> 24) % 100;
        f[i] = pct < 45 ? 0.3f : pct < 90 ? 0.7f : (float)(r & 0xffffff) * (1.0f / 16777216.0f);
    }
    const gpuhist_bin_spec b = gpuhist_bins_even(1u << 20, 0.0, 1.0);
    gpuhist_samples hs = gpuhist_samples_1d(f.data(), GPUHIST_F32, n);
    void *base = NULL;
    gpuhist_samples ds = hs;
    ds.data = to_device(f.data(), n * 4, 0, &base);
    ds.location = GPUHIST_MEMORY_DEVICE;
    check_context("u16_skew: f32 2^20 bins, two values of 45%%, %s", "cuda-two-pass");
    one_strategy(ctx, "cuda-two-pass", &ds, &b, reference(&hs, &b));
    gpuhist_set_strategy(ctx, "auto");
    check_context("%s", "");
    cudaFree(base);
    gpuhist_destroy(ctx);
}

int main(int argc, char **argv)
{
    static const cuda_case cases[] = {
        {"byte_channels", case_byte_channels},
        {"byte_runs", case_byte_runs},
        {"u16_skew", case_u16_skew},
    };
    return cuda_test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
