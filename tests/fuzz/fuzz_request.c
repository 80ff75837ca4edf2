/*
 * fuzz_request.c - validation and execution of gpuhist_histogram() on the CPU backend.
 *
 * The input describes a whole request: sample type (unknown values included), channels,
 * active channels or a channel mask, a contiguous array or a region of interest with padded
 * (or too short) rows, sizes that overflow the address space, memory locations, the bin kind,
 * bins (0, too many, or up to 70000), ranges and edges from raw bits or from friendlier
 * choices, auto range, the last-edge rule, the outlier policy, an edges output buffer, weights
 * (none, f32, f64, with squares), the CPU strategy and the thread count, and then the sample
 * bytes. Every buffer handed to the library
 * is exactly as large as the request says it is (so AddressSanitizer catches any access beyond
 * it); requests whose sizes overflow are not backed by memory and must be refused.
 *
 * Checked: the call returns OK, INVALID_ARGUMENT or UNSUPPORTED (OUT_OF_MEMORY only when the
 * host says so), with a message when it fails; overflowing geometry is refused; an accepted
 * request reports the bins, channels and totals it was given, its tallies add up, and
 * cpu-reference returns the same counts, tallies, channel indices, range and edges bit for bit
 * (and gpuhist_compute_edges() the same edges); a refused request is refused by cpu-reference
 * too (unweighted); a weighted request gives the same sums, bit for bit, with another thread
 * count, and the counts of the same request without weights. Sizes stay small (<= 4096
 * pixels, <= 70000 bins) so that one input takes milliseconds.
 */
#include "gpuhist.h"
#include "fuzz_common.h"

#include <float.h>
#include <math.h>

#define MAX_PIXELS 4096
#define MAX_BINS 70000    /* beyond 65536: the paths for 16-bit data with more bins */
#define MAX_EDGE_BINS 4096
#define MAX_STRATEGIES 32

static gpuhist_ctx *g_ctx;
static const char *g_strategies[MAX_STRATEGIES];
static size_t g_nstrategies;
static int g_verbose; /* GPUHIST_FUZZ_VERBOSE=1: one line per input (for checking seeds) */

static void init(void)
{
    if (g_ctx)
        return;
    FUZZ_CHECK(gpuhist_create(&g_ctx, GPUHIST_BACKEND_CPU) == GPUHIST_OK);
    for (size_t i = 0; i < gpuhist_strategy_count() && g_nstrategies < MAX_STRATEGIES; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CPU)
            g_strategies[g_nstrategies++] = d.name;
    }
    FUZZ_CHECK(g_nstrategies > 0);
    const char *v = getenv("GPUHIST_FUZZ_VERBOSE");
    g_verbose = v && *v == '1';
}

/* A double: raw bits, or a value near the places where binning is delicate. */
static double pick_double(fuzz_bytes *b)
{
    static const double special[] = {0.0,  -0.0,     1.0,     -1.0,     0.5,      INFINITY,
                                     -INFINITY, NAN, DBL_MAX, -DBL_MAX, FLT_MAX,  -FLT_MAX,
                                     DBL_MIN, 4.9406564584124654e-324, 9007199254740992.0,
                                     9223372036854775808.0, 18446744073709551616.0, 255.5,
                                     65535.5, -128.5};
    uint8_t mode = fuzz_u8(b);
    switch (mode % 8) {
    case 0: return fuzz_f64(b);
    case 1: return (double)(int8_t)fuzz_u8(b);
    case 2: return (double)(int16_t)fuzz_take(b, 2) / 256.0;
    case 3: return ldexp((mode & 0x80) ? -1.0 : 1.0, (int)(fuzz_u8(b) % 160) - 40);
    case 4: return special[fuzz_u8(b) % (sizeof special / sizeof special[0])];
    case 5: return nextafter(special[fuzz_u8(b) % (sizeof special / sizeof special[0])],
                             (mode & 0x80) ? INFINITY : -INFINITY);
    default: return (double)(int32_t)fuzz_u32(b) / (double)(1 + fuzz_u8(b));
    }
}

static int64_t pick_int64(fuzz_bytes *b)
{
    uint8_t mode = fuzz_u8(b);
    switch (mode % 5) {
    case 0: return (int64_t)fuzz_u64(b);
    case 1: return INT64_MIN + (int64_t)fuzz_u8(b);
    case 2: return INT64_MAX - (int64_t)fuzz_u8(b);
    case 3: return ((int64_t)1 << 53) - 128 + (int64_t)fuzz_u8(b);
    default: return (int64_t)(int16_t)fuzz_take(b, 2);
    }
}

static int popcount32(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        ++n;
    return n;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    fuzz_bytes in = {data, size};

    /* ---- the samples ---- */
    gpuhist_samples s;
    memset(&s, 0, sizeof s);
    uint8_t t = fuzz_u8(&in) % 12;
    s.dtype = t < GPUHIST_DTYPE_COUNT ? (gpuhist_dtype)t : t == 10 ? GPUHIST_DTYPE_COUNT
                                                                   : (gpuhist_dtype)-1;
    const int dtype_ok = t < GPUHIST_DTYPE_COUNT;
    const size_t sample_size = dtype_ok ? gpuhist_dtype_size(s.dtype) : 1;
    s.channels = fuzz_u8(&in) % 6; /* 5: too many */
    s.active_channels = fuzz_u8(&in) % 6;
    uint8_t m = fuzz_u8(&in);
    s.channel_mask = (m & 1) ? (uint32_t)(m >> 1) % 32 : 0;
    const uint32_t channels = s.channels ? s.channels : 1;
    int hists = -1; /* histograms the call writes; -1: the channel setup is invalid */
    if (channels <= GPUHIST_MAX_CHANNELS) {
        if (s.channel_mask)
            hists = (s.channel_mask >> channels) ? -1 : popcount32(s.channel_mask);
        else
            hists = s.active_channels > channels ? -1
                    : (int)(s.active_channels ? s.active_channels : channels);
    }
    const uint64_t pixel_bytes = (uint64_t)channels * sample_size;

    size_t need = 0;        /* bytes the samples span */
    uint64_t pixels = 0;    /* pixels the call sees */
    int must_refuse = 0;    /* a field the library must reject */
    uint8_t geometry = fuzz_u8(&in) % 8;
    if (geometry <= 4) {
        /* Mostly short arrays (the library's loops are slow under the fuzzer's
         * instrumentation), sometimes long ones (thread shares, counter flushes). */
        s.count = geometry <= 2 ? fuzz_u8(&in) : fuzz_take(&in, 2) % (MAX_PIXELS + 1);
        pixels = s.count;
        need = (size_t)(s.count * pixel_bytes);
    } else if (geometry <= 6) {
        s.rows = 1 + fuzz_u8(&in) % 8;
        s.row_length = fuzz_u8(&in) % 65;
        const size_t row_bytes = (size_t)(s.row_length * pixel_bytes);
        if (geometry == 6 && row_bytes > 0 && s.rows > 1) {
            s.row_stride = row_bytes - 1 - fuzz_u8(&in) % row_bytes; /* too short */
            must_refuse = 1;
        } else
            s.row_stride = row_bytes + fuzz_u8(&in) % 17;
        pixels = s.rows * s.row_length;
        need = s.row_stride >= row_bytes && pixels ? (s.rows - 1) * s.row_stride + row_bytes : 0;
    } else {
        /* Sizes beyond the address space, with no memory behind them. With one byte per
         * pixel, count and row_length cannot overflow: use the other two then. */
        must_refuse = 1;
        uint8_t o = fuzz_u8(&in) % 4;
        if (pixel_bytes == 1 && o < 2)
            o += 2;
        switch (o) {
        case 0: s.count = UINT64_MAX / pixel_bytes + 1 + fuzz_u8(&in); break;
        case 1:
            s.rows = 2;
            s.row_length = UINT64_MAX / pixel_bytes + 1 + fuzz_u8(&in);
            s.row_stride = 64;
            break;
        case 2: /* stride x (rows - 1) overflows */
            s.rows = ((uint64_t)1 << 40) + fuzz_u8(&in);
            s.row_length = 1;
            s.row_stride = (size_t)1 << 30;
            break;
        default: /* rows x row_length overflows */
            s.rows = ((uint64_t)1 << 33) + fuzz_u8(&in);
            s.row_length = (uint64_t)1 << 32;
            s.row_stride = (size_t)(s.row_length * pixel_bytes);
            break;
        }
    }
    uint8_t where = fuzz_u8(&in) % 8;
    s.location = where == 0   ? GPUHIST_MEMORY_AUTO
                 : where == 2 ? GPUHIST_MEMORY_DEVICE /* refused: CPU context */
                 : where == 3 ? (gpuhist_memory)7
                              : GPUHIST_MEMORY_HOST;

    /* ---- the bins ---- */
    gpuhist_bin_spec spec;
    memset(&spec, 0, sizeof spec);
    uint8_t k = fuzz_u8(&in) % 8;
    spec.kind = k <= 2 ? GPUHIST_BINS_EVEN : k <= 4 ? GPUHIST_BINS_EDGES
                : k <= 6 ? GPUHIST_BINS_INTEGER : (gpuhist_bin_kind)3;
    uint8_t bsel = fuzz_u8(&in) % 8;
    uint32_t max_bins = spec.kind == GPUHIST_BINS_EDGES ? MAX_EDGE_BINS : MAX_BINS;
    spec.bins = bsel == 0   ? 0
                : bsel == 1 ? 1
                : bsel <= 5 ? 1 + (uint32_t)fuzz_take(&in, 2) % 300
                : bsel == 6 ? 1 + fuzz_u32(&in) % max_bins
                            : (1u << 31) + 1 + fuzz_u32(&in) % 1000; /* too many: refused */
    const int bins_backed = spec.bins >= 1 && spec.bins <= MAX_BINS;
    uint8_t flags = fuzz_u8(&in);
    spec.auto_range = flags & 1;
    spec.last_edge_inclusive = (flags >> 1) & 1;
    spec.outliers = (gpuhist_outliers)(((flags >> 2) & 3) == 3 ? 2 : ((flags >> 2) & 3) == 2);
    spec.lower = pick_double(&in);
    spec.upper = (flags & 0x10) ? spec.lower + fabs(pick_double(&in)) : pick_double(&in);
    spec.integer_lower = pick_int64(&in);
    double *edges = NULL;
    if (spec.kind == GPUHIST_BINS_EDGES && bins_backed) {
        edges = malloc(((size_t)spec.bins + 1) * sizeof *edges);
        FUZZ_CHECK(edges != NULL);
        uint8_t how = fuzz_u8(&in) % 4;
        edges[0] = pick_double(&in);
        double step = ldexp(1.0, (int)(fuzz_u8(&in) % 80) - 40);
        for (uint32_t i = 1; i <= spec.bins; ++i) {
            if (how == 0)
                edges[i] = pick_double(&in); /* mostly not increasing: refused */
            else if (how == 1)
                edges[i] = nextafter(edges[i - 1], INFINITY); /* adjacent doubles */
            else
                edges[i] = edges[i - 1] + step * (1 + fuzz_u8(&in) % 4);
        }
        spec.edges = edges;
    } else if (spec.kind == GPUHIST_BINS_EDGES && spec.bins > MAX_BINS) {
        static const double two[2] = {0.0, 1.0};
        spec.edges = two; /* never read: the bin count is refused first */
    }

    /* ---- the result ---- */
    const size_t ncounts = bins_backed && hists > 0 ? (size_t)spec.bins * (size_t)hists : 1;
    uint64_t *counts = malloc(ncounts * sizeof *counts);
    uint64_t *counts_ref = malloc(ncounts * sizeof *counts);
    FUZZ_CHECK(counts && counts_ref);
    gpuhist_result r = gpuhist_result_host(counts);
    gpuhist_result rr = gpuhist_result_host(counts_ref);
    uint8_t rflags = fuzz_u8(&in);
    double *edges_out = NULL, *edges_ref = NULL;
    if ((rflags & 1) && bins_backed) {
        edges_out = malloc(((size_t)spec.bins + 1) * sizeof(double));
        edges_ref = malloc(((size_t)spec.bins + 1) * sizeof(double));
        FUZZ_CHECK(edges_out && edges_ref);
        r.edges = edges_out;
        rr.edges = edges_ref;
    }
    uint8_t cl = (rflags >> 1) % 8;
    r.counts_location = cl == 0   ? GPUHIST_MEMORY_AUTO
                        : cl == 2 ? GPUHIST_MEMORY_DEVICE /* refused: CPU context */
                        : cl == 3 ? (gpuhist_memory)9
                                  : GPUHIST_MEMORY_HOST;
    rr.counts_location = r.counts_location;

    /* ---- how ---- */
    uint8_t how = fuzz_u8(&in);
    const size_t si = how % (g_nstrategies + 1);
    const char *strategy = si < g_nstrategies ? g_strategies[si] : "auto";
    FUZZ_CHECK(gpuhist_set_strategy(g_ctx, strategy) == GPUHIST_OK);
    FUZZ_CHECK(gpuhist_set_threads(g_ctx, 1 + (how >> 6) % 3) == GPUHIST_OK);

    /* ---- the sample bytes: the rest of the input, repeated; exactly `need` of them, at an
     * address of any alignment, ending where the allocation ends ---- */
    const size_t misalign = fuzz_u8(&in) % 8;
    unsigned char *block = malloc(need + misalign + 1);
    FUZZ_CHECK(block != NULL);
    unsigned char *bytes = block + misalign + 1;
    for (size_t i = 0; i < need; ++i)
        bytes[i] = in.left ? in.p[i % in.left] : (unsigned char)(i * 131u + (i >> 8));
    s.data = bytes;

    /* ---- weights (rflags bits 4-5): none, f32, f64, f64 with squares; one per pixel, from the
     * sample bytes, exactly as many bytes as the pixels need (none behind refused sizes) ---- */
    const int wkind = (rflags >> 4) & 3;
    unsigned char *wblock = NULL;
    double *sums = NULL, *squares = NULL;
    if (wkind) {
        const size_t wsize = wkind == 1 ? 4 : 8;
        const int backed = pixels <= MAX_PIXELS * 64u;
        wblock = malloc(backed && pixels ? (size_t)pixels * wsize : 1);
        FUZZ_CHECK(wblock != NULL);
        for (size_t i = 0; backed && i < (size_t)pixels * wsize; ++i)
            wblock[i] = need ? bytes[(i * 7u) % need] : (unsigned char)i;
        s.weights = wblock;
        s.weight_dtype = wkind == 1 ? GPUHIST_F32 : GPUHIST_F64;
        sums = malloc(ncounts * sizeof *sums);
        squares = malloc(ncounts * sizeof *squares);
        FUZZ_CHECK(sums && squares);
        r.sums = sums;
        r.sums_squared = wkind == 3 ? squares : NULL;
    }

    gpuhist_status st = gpuhist_histogram(g_ctx, &s, &spec, &r);
    FUZZ_CHECK(st == GPUHIST_OK || st == GPUHIST_ERROR_INVALID_ARGUMENT ||
               st == GPUHIST_ERROR_UNSUPPORTED || st == GPUHIST_ERROR_OUT_OF_MEMORY);
    if (st != GPUHIST_OK)
        FUZZ_CHECK(gpuhist_last_error(g_ctx)[0] != '\0');
    must_refuse |= !dtype_ok || hists < 0 || !bins_backed || (unsigned)spec.kind > 2 ||
                   (unsigned)spec.outliers > 1 || where == 2 || where == 3 || cl == 2 || cl == 3;
    if (must_refuse)
        FUZZ_CHECK(st == GPUHIST_ERROR_INVALID_ARGUMENT);

    if (g_verbose)
        printf("%s %s, %u bins of kind %d, %llu pixels x %u channels: %s %s\n", strategy,
               dtype_ok ? gpuhist_dtype_name(s.dtype) : "?", spec.bins, (int)spec.kind,
               (unsigned long long)pixels, channels, gpuhist_status_string(st),
               gpuhist_last_error(g_ctx));
    if (wkind && st == GPUHIST_OK) {
        /* the same bits with another thread count */
        double *again = malloc(ncounts * sizeof *again);
        uint64_t *counts2 = malloc(ncounts * sizeof *counts2);
        FUZZ_CHECK(again && counts2);
        gpuhist_result r2 = r;
        r2.counts = counts2;
        r2.sums = again;
        r2.sums_squared = NULL;
        r2.edges = NULL;
        FUZZ_CHECK(gpuhist_set_threads(g_ctx, 1 + (how >> 6) % 3 == 1 ? 3 : 1) == GPUHIST_OK);
        FUZZ_CHECK(gpuhist_histogram(g_ctx, &s, &spec, &r2) == GPUHIST_OK);
        FUZZ_CHECK(memcmp(again, sums, ncounts * sizeof *again) == 0);
        FUZZ_CHECK(memcmp(counts2, counts, ncounts * sizeof *counts2) == 0);
        free(again);
        free(counts2);
    }
    /* the reference counts the same request without weights (cpu-reference sums none) */
    s.weights = NULL;
    FUZZ_CHECK(gpuhist_set_strategy(g_ctx, "cpu-reference") == GPUHIST_OK);
    gpuhist_status st_ref = gpuhist_histogram(g_ctx, &s, &spec, &rr);
    if (st == GPUHIST_ERROR_INVALID_ARGUMENT && !wkind)
        FUZZ_CHECK(st_ref == GPUHIST_ERROR_INVALID_ARGUMENT);
    if (st == GPUHIST_OK) {
        FUZZ_CHECK(st_ref == GPUHIST_OK);
        FUZZ_CHECK(r.bins == spec.bins && (int)r.channels == hists);
        FUZZ_CHECK(r.backend == GPUHIST_BACKEND_CPU && r.strategy != NULL);
        FUZZ_CHECK(memcmp(counts, counts_ref, ncounts * sizeof *counts) == 0);
        for (int h = 0; h < hists; ++h) {
            FUZZ_CHECK(r.channel_index[h] == rr.channel_index[h]);
            FUZZ_CHECK(r.underflow[h] == rr.underflow[h] && r.overflow[h] == rr.overflow[h]);
            FUZZ_CHECK(r.nan[h] == rr.nan[h] && r.total[h] == rr.total[h]);
            FUZZ_CHECK(r.total[h] == pixels);
            uint64_t sum = 0;
            for (uint32_t i = 0; i < spec.bins; ++i)
                sum += counts[(size_t)h * spec.bins + i];
            const uint64_t outside = spec.outliers == GPUHIST_OUTLIERS_DROP
                                         ? r.underflow[h] + r.overflow[h] : 0;
            FUZZ_CHECK(sum + r.nan[h] + outside == r.total[h]);
        }
        FUZZ_CHECK(same_bits(r.lower, rr.lower) && same_bits(r.upper, rr.upper));
        FUZZ_CHECK(r.last_edge_inclusive == rr.last_edge_inclusive);
        if (edges_out) {
            FUZZ_CHECK(memcmp(edges_out, edges_ref, ((size_t)spec.bins + 1) * sizeof(double)) ==
                       0);
            FUZZ_CHECK(same_bits(edges_out[0], r.lower) &&
                       same_bits(edges_out[spec.bins], r.upper));
            if (!(spec.kind == GPUHIST_BINS_EVEN && spec.auto_range)) {
                double *computed = malloc(((size_t)spec.bins + 1) * sizeof(double));
                FUZZ_CHECK(computed != NULL);
                FUZZ_CHECK(gpuhist_compute_edges(&spec, s.dtype, computed) == GPUHIST_OK);
                FUZZ_CHECK(memcmp(computed, edges_out, ((size_t)spec.bins + 1) *
                                                           sizeof(double)) == 0);
                free(computed);
            }
        }
    }

    free(block);
    free(wblock);
    free(sums);
    free(squares);
    free(edges);
    free(edges_out);
    free(edges_ref);
    free(counts);
    free(counts_ref);
    return 0;
}
