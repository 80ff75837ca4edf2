/*
 * serial.c - cpu-serial: seed 001 §IV's single-threaded loop (`bin[location[i]]++`), made fast.
 *
 * Mechanism
 *  - 8-bit samples: count raw values (256 per channel) in sub-tables laid out value-major
 *    (t[value * K + lane]) so the copies of one value share a cache line. Byte j of the sample
 *    stream goes to lane j % K. Two limits shape the tables (seen on AMD Zen 5): stores to
 *    random cache lines retire about one per cycle, and only stores into a few recently written
 *    lines reach two, so a smaller table counts faster; and repeated values are the problem of
 *    the plain loop: each increment of the same counter waits for the previous store
 *    (store-to-load forwarding), so a hot value serialises the loop unless K lanes make K
 *    independent chains. So the loop adapts: every 256 Ki samples it looks at the largest
 *    per-value count of that block and uses a 32-lane table of 32-bit counters (32 KiB; 24
 *    lanes for RGB) when one value took more than 1/8 of the block, else a dense table of
 *    16-bit counters with the fewest lanes the channel layout allows (2; 3 for RGB, 4 for RGBA:
 *    1-2 KiB), flushed before any lane can pass 65535 (its flushes give the check its counts).
 *    Lane l belongs to channel l % C, so interleaved RGB/RGBA pixels need no de-interleaving.
 *    The hot table increments each lane's counter once per iteration of its loop, which keeps
 *    its speed on mostly-one-value data independent of where the loop lands in memory (with two
 *    increments per lane per iteration, 16 lanes, it was not).
 *  - 16-bit samples: raw values (65536 per channel) in 32-bit lanes of 65536 counters, lane-major;
 *    2 lanes (3 for RGB, 4 for RGBA: 512 KiB-1 MiB, L2) on spread-out data, twice as many when
 *    a probe of each 256 Ki-sample block finds the same value recurring in the same lane.
 *  - Raw values are folded into bins once at the end (gpuhist_fold_values), so the per-sample work
 *    is the same for every bin spec, EDGES and clamping included.
 *  - One-channel f32/f64 streams with EVEN bins under a certificate, or with EDGES: mapped 512
 *    samples at a time into a slot buffer, then counted (blocked_count below); the mapping of a
 *    certified EVEN spec is THE TEST in AVX2 (cpu_simd.h, simd_x86.c; chosen at run time, the
 *    scalar loop elsewhere), the scalar rule only for the samples it does not prove.
 *  - Wider types: one typed loop per (dtype, bin kind) - no per-sample switch. EVEN bins use
 *    fast_even.h against a precomputed edge table (float edges for f32 samples, double
 *    otherwise): after the range check against the table's first and last edge, THE estimate
 *    and the certificate's neighbour rule (two edge compares, predicted branches, never a
 *    search; direct specs, e.g. [0, 1) with a power-of-two bin count: no edge at all). Specs the
 *    certificate refuses (huge offsets, subnormal hazards, more than 2^23 / 2^24 bins) take
 *    binmap.h's walk on the table: estimate, compare with E[i], E[i+1], binary search when the
 *    estimate is further off. EDGES use a table of cells over the range (edges_slot: the cell
 *    gives the first candidate bin, then one or two exact compares); INTEGER a subtraction and one range
 *    check. 64-bit integers beyond 2^53 take binmap.h's exact integer-vs-double comparison.
 *  - Counters are 32-bit (half the cache footprint of the uint64 result; 16-bit in the 8-bit
 *    path's cold table, flushed as above) and are flushed into the 64-bit output every 2^30
 *    pixels, before any can overflow.
 * Data dependence: 8-bit input on 90%-one-value data runs as fast as uniform data (instead of
 *    4x slower with 2 lanes); 16-bit data is L2 bound on uniform data and within ~35% on hot
 *    data; wide types slow down on a mostly-repeated value by the store-forwarding chain (one
 *    counter table per channel).
 * Limits: sub-tables take 4 bytes per slot per active channel (in addition to the result; the
 *    8-bit path keeps its 37 KiB of tables on the stack); no limit on the input size.
 * Seed: 001 §IV (CPU baseline); the sub-table idea is the classic remedy of byte histograms
 *    (e.g. zstd's HIST_count_parallel).
 */
#include "cpu_kernels.h"
#include "cpu_simd.h"
#include "fast_even.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* Sub-counters are 32-bit: flush after at most this many pixels (each counter then holds at most
 * 2^30 per lane, far from 2^32). Overridable only so tests can exercise the flush on small data. */
#ifndef GPUHIST_CPU_FLUSH_PIXELS
#define GPUHIST_CPU_FLUSH_PIXELS (1ull << 30)
#endif
#define FLUSH_PIXELS ((uint64_t)GPUHIST_CPU_FLUSH_PIXELS)

int gpuhist_cpu_counts_values(const gpuhist_plan *plan)
{
    return gpuhist_small_value_count(plan->dtype) != 0;
}

size_t gpuhist_cpu_out_entries(const gpuhist_plan *plan)
{
    uint32_t v = gpuhist_small_value_count(plan->dtype);
    return (size_t)plan->active * (v ? v : plan->slots);
}

/* ---- iteration over a pixel range: row segments, flush budget ------------------------------- */

/* Calls seg(state, pointer to the first sample of the segment, pixels) for each row piece of
 * [begin, end), never more than FLUSH_PIXELS between two calls of flush(state), counting the
 * `carried` pixels the sub-counters already hold unflushed; flushes at the end unless `keep`.
 * @return the pixels left unflushed (0 unless keep). */
typedef void (*segment_fn)(void *state, const unsigned char *p, uint64_t pixels);
typedef void (*flush_fn)(void *state);

static uint64_t for_each_segment(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                 void *state, segment_fn seg, flush_fn flush, uint64_t carried,
                                 int keep)
{
    /* Packed rows form one long row: fewer, longer segments. */
    uint64_t len = plan->contiguous ? plan->pixels : plan->row_length;
    size_t pixel_bytes = (size_t)plan->channels * plan->sample_size;
    uint64_t budget = carried < FLUSH_PIXELS ? FLUSH_PIXELS - carried : 0u;
    if (budget == 0) {
        flush(state);
        budget = FLUSH_PIXELS;
    }
    uint64_t pix = begin;
    while (pix < end) {
        uint64_t row = pix / len, col = pix % len;
        uint64_t n = len - col;
        if (n > end - pix)
            n = end - pix;
        if (n > budget)
            n = budget;
        const unsigned char *p = plan->data + row * plan->row_stride + col * pixel_bytes;
        seg(state, p, n);
        pix += n;
        budget -= n;
        if (budget == 0) {
            flush(state);
            budget = FLUSH_PIXELS;
        }
    }
    if (keep)
        return FLUSH_PIXELS - budget;
    flush(state);
    return 0;
}

/* ---- 8-bit raw values ------------------------------------------------------------------------------ */

/* Check the distribution every this many samples (a 256-entry scan: < 1% of the work). */
#define V8_CHECK_SAMPLES (256u * 1024u)
/* A value taking more than 1/V8_HOT_SHARE of a block makes the next block use the hot table. */
#define V8_HOT_SHARE 8u
/* The cold table's counters are 16-bit: it is flushed before any lane could count past this. */
#define V8_COLD_MAX 65535u

/* Two value-major tables (t[value * lanes + lane]): a cold one of 16-bit counters with few lanes
 * (2 for C = 1, 2; 3; 4: at most 2 KiB), and a hot one of 32-bit counters with 32 lanes (24 for
 * RGB), 32 KiB. Only one is used per block; both are flushed. */
typedef struct v8_state {
    uint16_t cold[256 * 4];
    uint32_t hot[256 * 32];
    unsigned cold_lanes, hot_lanes;
    uint32_t cold_fill;  /* bound on every cold lane's count since its last flush */
    int use_hot;         /* the current block counts into `hot` */
    int hot_counted;     /* the hot table counted since the last check */
    int hot_dirty;       /* ... since the last flush */
    uint64_t block;      /* samples since the last distribution check */
    uint32_t seen[256];  /* per-value counts of the cold table's flushes since the last check */
    uint32_t snap[256];  /* per-value totals of the hot table at the last check */
    const gpuhist_plan *plan;
    uint64_t *out;       /* active * 256 */
} v8_state;

/* Lane of byte j is j % K; U bytes per iteration (U a multiple of K and of C). The body is fully
 * unrolled so K and the byte offsets are constants. Called on pixel-aligned pieces only, so the
 * lane of sample j has channel j % C (K is a multiple of C); lane 0 gets the most samples,
 * ceil(n / K). */
#define DEFINE_V8_KERNEL(NAME, T, K, U)                                                          \
    static void NAME(T *restrict t, const unsigned char *restrict p, size_t n)                  \
    {                                                                                            \
        size_t i = 0;                                                                            \
        for (; i + (U) <= n; i += (U)) {                                                         \
            _Pragma("GCC unroll 32") for (unsigned j = 0; j < (U); ++j)                          \
                t[(size_t)p[i + j] * (K) + j % (K)]++;                                           \
        }                                                                                        \
        for (unsigned j = 0; i < n; ++i, ++j)                                                    \
            t[(size_t)p[i] * (K) + j % (K)]++;                                                   \
    }

DEFINE_V8_KERNEL(v8_cold2, uint16_t, 2, 16)
DEFINE_V8_KERNEL(v8_cold3, uint16_t, 3, 24)
DEFINE_V8_KERNEL(v8_cold4, uint16_t, 4, 16)
DEFINE_V8_KERNEL(v8_hot32, uint32_t, 32, 32)
DEFINE_V8_KERNEL(v8_hot24, uint32_t, 24, 24)

/* Adds the table into the result (lane l is channel l % C) and, when `seen` is given, each
 * value's total into seen[value]; then zeroes the table. */
#define DEFINE_V8_FLUSH(NAME, T)                                                                 \
    static void NAME(const v8_state *s, T *t, unsigned k, uint32_t *seen)                       \
    {                                                                                            \
        const gpuhist_plan *plan = s->plan;                                                      \
        unsigned c = plan->channels;                                                             \
        for (unsigned v = 0; v < 256; ++v) {                                                     \
            const T *r = t + (size_t)v * k;                                                      \
            uint32_t all = 0;                                                                    \
            for (unsigned ch = 0; ch < c; ++ch) {                                                \
                uint32_t sum = 0;                                                                \
                for (unsigned l = ch; l < k; l += c)                                             \
                    sum += r[l];                                                                 \
                all += sum;                                                                      \
                int32_t h = plan->channel_slot[ch];                                              \
                if (h >= 0)                                                                      \
                    s->out[(size_t)h * 256u + v] += sum;                                         \
            }                                                                                    \
            if (seen)                                                                            \
                seen[v] += all;                                                                  \
        }                                                                                        \
        memset(t, 0, (size_t)256 * k * sizeof *t);                                               \
    }

DEFINE_V8_FLUSH(v8_flush_cold, uint16_t)
DEFINE_V8_FLUSH(v8_flush_hot, uint32_t)

/* The cold table into the result and `seen`, if it counted anything since its last flush. */
static void v8_settle_cold(v8_state *s)
{
    if (s->cold_fill) {
        v8_flush_cold(s, s->cold, s->cold_lanes, s->seen);
        s->cold_fill = 0;
    }
}

/* The hot table's per-value totals grow until a flush; a check takes their differences. */
static void v8_check(v8_state *s)
{
    v8_settle_cold(s);
    uint32_t top = 0;
    for (unsigned v = 0; v < 256; ++v) {
        uint32_t n = s->seen[v];
        s->seen[v] = 0;
        if (s->hot_counted) {
            const uint32_t *h = s->hot + (size_t)v * s->hot_lanes;
            uint32_t sum = 0; /* modulo 2^32: the block difference below is still exact */
            for (unsigned l = 0; l < s->hot_lanes; ++l)
                sum += h[l];
            n += sum - s->snap[v];
            s->snap[v] = sum;
        }
        top = n > top ? n : top;
    }
    s->hot_counted = 0;
    s->use_hot = (uint64_t)top * V8_HOT_SHARE > s->block;
    s->block = 0;
}

static void v8_segment(void *state, const unsigned char *p, uint64_t pixels)
{
    v8_state *s = state;
    unsigned c = s->plan->channels;
    while (pixels) {
        /* pieces of whole pixels so every piece starts on channel 0 (lane 0); at most one check
         * block, and at most V8_COLD_MAX per cold lane */
        uint64_t piece = s->use_hot ? V8_CHECK_SAMPLES : (uint64_t)V8_COLD_MAX * s->cold_lanes;
        if (piece > V8_CHECK_SAMPLES)
            piece = V8_CHECK_SAMPLES;
        piece /= c;
        uint64_t n = pixels < piece ? pixels : piece;
        size_t samples = (size_t)(n * c);
        if (s->use_hot) {
            if (s->hot_lanes == 32)
                v8_hot32(s->hot, p, samples);
            else
                v8_hot24(s->hot, p, samples);
            s->hot_counted = s->hot_dirty = 1;
        } else {
            unsigned k = s->cold_lanes;
            uint32_t per_lane = (uint32_t)((samples + k - 1) / k);
            if (s->cold_fill + per_lane > V8_COLD_MAX)
                v8_settle_cold(s);
            if (k == 2)
                v8_cold2(s->cold, p, samples);
            else if (k == 3)
                v8_cold3(s->cold, p, samples);
            else
                v8_cold4(s->cold, p, samples);
            s->cold_fill += per_lane;
        }
        p += samples;
        pixels -= n;
        s->block += samples;
        if (s->block >= V8_CHECK_SAMPLES)
            v8_check(s);
    }
}

static void v8_flush(void *state)
{
    v8_state *s = state;
    v8_settle_cold(s);
    if (s->hot_dirty) {
        v8_flush_hot(s, s->hot, s->hot_lanes, NULL);
        memset(s->snap, 0, sizeof s->snap);
        s->hot_dirty = 0;
    }
}

static gpuhist_status count_values8(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                    uint64_t *out)
{
    v8_state s; /* 37 KiB: within any default thread stack */
    memset(&s, 0, sizeof s);
    s.plan = plan;
    s.out = out;
    unsigned c = plan->channels;
    s.cold_lanes = c <= 2 ? 2 : c;
    s.hot_lanes = c == 3 ? 24 : 32;
    for_each_segment(plan, begin, end, &s, v8_segment, v8_flush, 0, 0);
    return GPUHIST_OK;
}

/* ---- 16-bit raw values ----------------------------------------------------------------------------- */

/* 65536 counters per lane, lane-major (t[lane * 65536 + value]) so the cold lanes alone touch
 * only cold_lanes * 256 KiB. Same adaptation as 8-bit data, with a cheaper probe (a 65536-value
 * scan per block would cost more than the block): every V16_CHECK_SAMPLES samples, count in the
 * first V16_PROBE samples how often a sample equals the one cold_lanes before it (i.e. the
 * previous increment of the same counter in the same lane, the store-forwarding chain); more
 * than 1/8 of them switches the block to hot_lanes. */
#define V16_CHECK_SAMPLES (256u * 1024u)
#define V16_PROBE 512u

typedef struct v16_state {
    uint32_t *t;         /* lanes_hot * 65536, lane-major */
    unsigned lanes_cold; /* 2 (C = 1, 2), 3, 4 */
    unsigned lanes_hot;  /* 4 (C = 1, 2), 6 (C = 3), 8 (C = 4) */
    unsigned used;       /* lanes touched since the last flush */
    const gpuhist_plan *plan;
    uint64_t *out;       /* active * 65536 */
} v16_state;

#define DEFINE_V16_KERNEL(NAME, K)                                                               \
    static void NAME(uint32_t *restrict t, const unsigned char *restrict p, size_t n)           \
    {                                                                                            \
        size_t i = 0;                                                                            \
        for (; i + 2 * (K) <= n; i += 2 * (K)) {                                                 \
            _Pragma("GCC unroll 16") for (unsigned j = 0; j < 2 * (K); ++j)                      \
            {                                                                                    \
                uint16_t v;                                                                      \
                memcpy(&v, p + 2 * (i + j), 2);                                                  \
                t[(size_t)(j % (K)) * 65536u + v]++;                                             \
            }                                                                                    \
        }                                                                                        \
        for (unsigned j = 0; i < n; ++i, ++j) {                                                  \
            uint16_t v;                                                                          \
            memcpy(&v, p + 2 * i, 2);                                                            \
            t[(size_t)(j % (K)) * 65536u + v]++;                                                 \
        }                                                                                        \
    }

DEFINE_V16_KERNEL(v16_k2, 2)
DEFINE_V16_KERNEL(v16_k3, 3)
DEFINE_V16_KERNEL(v16_k4, 4)
DEFINE_V16_KERNEL(v16_k6, 6)
DEFINE_V16_KERNEL(v16_k8, 8)

static int v16_is_hot(const unsigned char *p, size_t n, unsigned k)
{
    if (n > V16_PROBE)
        n = V16_PROBE;
    if (n <= k)
        return 0;
    unsigned repeats = 0;
    for (size_t i = k; i < n; ++i) {
        uint16_t a, b;
        memcpy(&a, p + 2 * i, 2);
        memcpy(&b, p + 2 * (i - k), 2);
        repeats += a == b;
    }
    return (size_t)repeats * 8u > n - k;
}

static void v16_segment(void *state, const unsigned char *p, uint64_t pixels)
{
    v16_state *s = state;
    unsigned c = s->plan->channels;
    /* pieces of whole pixels so every piece starts on channel 0 (lane 0) */
    uint64_t piece_pixels = V16_CHECK_SAMPLES / c;
    while (pixels) {
        uint64_t np = pixels < piece_pixels ? pixels : piece_pixels;
        size_t n = (size_t)(np * c);
        unsigned k = v16_is_hot(p, n, s->lanes_cold) ? s->lanes_hot : s->lanes_cold;
        s->used = k > s->used ? k : s->used;
        switch (k) {
        case 2: v16_k2(s->t, p, n); break;
        case 3: v16_k3(s->t, p, n); break;
        case 4: v16_k4(s->t, p, n); break;
        case 6: v16_k6(s->t, p, n); break;
        default: v16_k8(s->t, p, n); break;
        }
        p += 2 * n;
        pixels -= np;
    }
}

static void v16_flush(void *state)
{
    v16_state *s = state;
    const gpuhist_plan *plan = s->plan;
    /* only the lanes in use: a thread's share may be a few MiB, a 2 MiB sweep would show */
    for (unsigned l = 0; l < s->used; ++l) {
        int32_t h = plan->channel_slot[l % plan->channels];
        uint32_t *lane = s->t + (size_t)l * 65536u;
        if (h >= 0) {
            uint64_t *o = s->out + (size_t)h * 65536u;
            for (size_t v = 0; v < 65536u; ++v)
                o[v] += lane[v];
        }
        memset(lane, 0, 65536u * sizeof *lane);
    }
    s->used = 0;
}

static gpuhist_status count_values16(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                     uint64_t *out, gpuhist_cpu_scratch *sc)
{
    v16_state s;
    s.plan = plan;
    s.out = out;
    unsigned c = plan->channels;
    s.lanes_cold = c <= 2 ? 2 : c;
    /* 4 hot lanes, not 8, for one or two channels: the 10% of other values in a hot block spread
     * over all lanes, and 8 x 256 KiB no longer fits L2 (measured: 8 lanes ~10-30% slower) */
    s.lanes_hot = c <= 2 ? 4 : 2 * c;
    s.used = 0;
    /* zero: untouched hot lanes of a fresh table stay unmapped zero pages until a hot block
     * needs them; v16_flush leaves the lanes it used zero again, so sc's table stays zero */
    s.t = gpuhist_cpu_scratch_table(sc, (size_t)s.lanes_hot * 65536u);
    if (!s.t)
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    for_each_segment(plan, begin, end, &s, v16_segment, v16_flush, 0, 0);
    if (!sc)
        free(s.t);
    return GPUHIST_OK;
}

/* ---- slots of wide types ------------------------------------------------------------------------- */

typedef struct slot_state {
    const gpuhist_plan *plan;
    const gpuhist_binmap *m;
    const double *edges; /* EDGES: the caller's edges */
    const float *ef;     /* EVEN, f32 samples: E[0..bins] as float */
    const double *ed;    /* EVEN, other types: E[0..bins] as double */
    gpuhist_fe_cert cert; /* EVEN: fast_even.h's certificate of the spec */
    float ef0, efn;       /* EVEN, f32 samples: E[0] and E[bins] (read without the table) */
    double ed0, edn;      /* EVEN, other types: the same */
    float lower_f, scale_f; /* EVEN: the estimate's constants (binmap), kept in the state */
    double lower, scale;
    uint32_t bins, slots, active, channels;
    size_t off[GPUHIST_MAX_CHANNELS]; /* byte offset of histogram k's sample in a pixel */
    uint32_t *t;         /* active * slots */
    uint64_t *out;
    /* EDGES: the table of cells (edge_cells below) */
    int cell_linear;      /* the map: 1 linear in the value, 0 the order keys */
    double cell_scale;    /* linear: cells / (E[bins] - E[0]) */
    uint64_t cell_key0;   /* keys: order key of E[0] ... */
    unsigned cell_shift;  /* ... and cell = (key - cell_key0) >> cell_shift */
    uint32_t cell_count;  /* cells */
    uint32_t *cell_first; /* cells + 1: inner edges mapped below each cell */
    struct edge_cell *cell; /* cells: each cell's first bin and its one inner edge (below) */
    /* EVEN, one channel: THE TEST's constants for the vector kernels (cpu_simd.h) */
    int simd;
    gpuhist_cpu_test_f32 test_f;
    gpuhist_cpu_test_f64 test_d;
} slot_state;

/* A cell of the EDGES table, for the branch-free form of the walk: the bin is lo when x is below
 * the cell's only inner edge thr, lo + 1 at or above it (thr = +inf: no inner edge). many: more
 * than one inner edge, the walk decides. */
typedef struct edge_cell {
    double thr;
    uint32_t lo;
    uint32_t many;
} edge_cell;

/* i with E[i] <= x < E[i+1], given E[lo] <= x < E[hi] (E non-decreasing). */
#define DEFINE_SEARCH(NAME, T)                                                                   \
    static uint32_t NAME(const T *e, uint32_t lo, uint32_t hi, T x)                              \
    {                                                                                            \
        while (hi - lo > 1u) {                                                                   \
            uint32_t mid = lo + (hi - lo) / 2u;                                                  \
            if (x < e[mid])                                                                      \
                hi = mid;                                                                        \
            else                                                                                 \
                lo = mid;                                                                        \
        }                                                                                        \
        return lo;                                                                               \
    }
DEFINE_SEARCH(search_f, float)
DEFINE_SEARCH(search_d, double)

/* EDGES (uneven bins): a table of cells instead of a binary search over all the edges. A
 * monotone map sends each value of [E[0], E[bins]) to one of C cells (C: a power of two near
 * 4 x bins, at most 2^16); cell c records how many of the inner edges E[1..bins-1] map below
 * c. Since the map is monotone, an edge mapped below x's cell is <= x and an edge mapped above it
 * is > x, so x's bin lies between the count of cell c and that of cell c + 1, and exact
 * comparisons with the true edges, upward from the first, decide it: the result is binmap.h's
 * slot, whatever the map. Two maps, the one that crowds fewer edges into one cell is kept:
 * linear in the value, (x - E[0]) * C / (E[bins] - E[0]) (even-ish edges), or the samples'
 * order keys (the floating-point bits made monotone: exponent, then mantissa; log-spaced edges).
 * A cell holding more than 4 edges is searched by halving between its bounds. Built for each
 * count: O(bins + C). */
static inline uint64_t order_key(double x)
{
    x += 0.0; /* -0.0 -> +0.0: they compare equal */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : b | (1ull << 63);
}

/* The cell of x, E[0] <= x < E[bins] (or an inner edge). */
static inline uint32_t cell_of(const slot_state *s, double x)
{
    if (s->cell_linear) {
        const double f = (x - s->edges[0]) * s->cell_scale; /* >= 0 */
        return f < (double)s->cell_count ? (uint32_t)f : s->cell_count - 1u;
    }
    const uint64_t c = (order_key(x) - s->cell_key0) >> s->cell_shift;
    return c < s->cell_count ? (uint32_t)c : s->cell_count - 1u;
}

/* Fill first[0..C] for the current map; @return the most inner edges of one cell. */
static uint32_t count_cells(slot_state *s, uint32_t *first)
{
    const uint32_t C = s->cell_count;
    memset(first, 0, ((size_t)C + 1u) * sizeof *first);
    for (uint32_t i = 1; i < s->bins; ++i)
        first[cell_of(s, s->edges[i]) + 1u]++;
    uint32_t most = 0;
    for (uint32_t c = 1; c <= C; ++c) {
        most = first[c] > most ? first[c] : most;
        first[c] += first[c - 1u];
    }
    return most; /* first[C] = bins - 1 */
}

/* The cell table for s->edges (s->cell_first); 0 when it cannot be allocated. */
static int edge_cells(slot_state *s)
{
    const double *e = s->edges;
    const uint32_t bins = s->bins;
    uint32_t C = 1;
    while (C < 4u * bins && C < (1u << 16))
        C <<= 1;
    uint32_t *a = malloc(((size_t)C + 1u) * sizeof *a), *b = malloc(((size_t)C + 1u) * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return 0;
    }
    s->cell_count = C;
    /* order keys: cells of 2^shift keys from E[0]'s */
    s->cell_linear = 0;
    s->cell_key0 = order_key(e[0]);
    const uint64_t span = order_key(e[bins]) - s->cell_key0;
    s->cell_shift = 0;
    while ((span >> s->cell_shift) >= C)
        ++s->cell_shift;
    uint32_t crowd_keys = count_cells(s, b);
    /* linear, when the range's width and C / width are finite and nonzero */
    const double width = e[bins] - e[0], scale = (double)C / width;
    uint32_t crowd_linear = UINT32_MAX;
    if (width > 0.0 && width <= DBL_MAX && scale > 0.0 && scale <= DBL_MAX) {
        s->cell_linear = 1;
        s->cell_scale = scale;
        crowd_linear = count_cells(s, a);
    }
    if (crowd_linear <= crowd_keys) {
        s->cell_first = a;
        free(b);
    } else {
        s->cell_linear = 0;
        s->cell_first = b;
        free(a);
    }
    s->cell = malloc((size_t)C * sizeof *s->cell);
    if (!s->cell) {
        free(s->cell_first);
        s->cell_first = NULL;
        return 0;
    }
    for (uint32_t c = 0; c < C; ++c) {
        const uint32_t lo = s->cell_first[c], hi = s->cell_first[c + 1u];
        s->cell[c].lo = lo;
        s->cell[c].many = hi - lo > 1u;
        s->cell[c].thr = hi > lo ? e[lo + 1u] : INFINITY;
    }
    return 1;
}

static inline uint32_t edges_slot(const slot_state *s, double x)
{
    const double *e = s->edges;
    const uint32_t bins = s->bins;
    if (!(x >= e[0]))
        return x != x ? GPUHIST_SLOT_NAN(bins) : GPUHIST_SLOT_UNDERFLOW(bins);
    if (x >= e[bins])
        return (s->m->last_inclusive && x == e[bins]) ? bins - 1u : GPUHIST_SLOT_OVERFLOW(bins);
    const uint32_t c = cell_of(s, x);
    const edge_cell *k = &s->cell[c];
    if (__builtin_expect(!k->many, 1))
        return k->lo + (x >= k->thr ? 1u : 0u); /* no inner edge: thr = inf, the bin is lo */
    uint32_t lo = s->cell_first[c], hi = s->cell_first[c + 1u]; /* lo <= bin <= hi */
    if (__builtin_expect(hi - lo > 4u, 0))
        return search_d(e, lo, hi + 1u, x); /* e[lo] <= x < e[hi + 1] */
    while (lo < hi && x >= e[lo + 1u])
        ++lo;
    return lo;
}

/* EVEN bins the certificate refuses: binmap.h's walk on the edge table (docs/SEMANTICS.md,
 * Bins). The estimate is only a starting point; the answer is decided by exact comparisons with
 * the true edges, so it equals binmap.h's slot whatever the estimate. x >= E[0] makes it >= 0,
 * and an inf/NaN/too-large estimate (tiny or denormal ranges) is clamped and then corrected by
 * the binary search. */
#define DEFINE_EVEN(NAME, T, SEARCH)                                                             \
    static inline uint32_t NAME(const slot_state *s, const T *e, T scale, T x)                   \
    {                                                                                            \
        uint32_t bins = s->bins;                                                                 \
        if (!(x >= e[0]))                                                                        \
            return x != x ? GPUHIST_SLOT_NAN(bins) : GPUHIST_SLOT_UNDERFLOW(bins);               \
        if (x >= e[bins])                                                                        \
            return (s->m->last_inclusive && x == e[bins]) ? bins - 1u                            \
                                                          : GPUHIST_SLOT_OVERFLOW(bins);         \
        T f = (x - e[0]) * scale;                                                                \
        uint32_t i = f < (T)bins ? (uint32_t)f : bins - 1u;                                      \
        i = i < bins - 1u ? i : bins - 1u;                                                       \
        if (x < e[i]) {                                                                          \
            if (i > 0u && x >= e[i - 1u])                                                        \
                return i - 1u;                                                                   \
            return SEARCH(e, 0, bins, x);                                                        \
        }                                                                                        \
        if (i + 1u < bins && x >= e[i + 1u]) {                                                   \
            if (x < e[i + 2u])                                                                   \
                return i + 1u;                                                                   \
            return SEARCH(e, 0, bins, x);                                                        \
        }                                                                                        \
        return i;                                                                                \
    }
DEFINE_EVEN(even_f, float, search_f)
DEFINE_EVEN(even_d, double, search_d)

/* EVEN bins under the spec's certificate (fast_even.h): the range against the table's first and
 * last edge (E[0], E[bins]), then THE estimate, k = min(floor(f), bins - 1). A direct
 * certificate proves k is the bin: no edge is read. Otherwise the certificate bounds the bin to
 * k - 1, k or k + 1 (fast_even.h, THE NEIGHBOUR RULE), decided by E[k] and E[k+1] from the table:
 * two compares whose branches the CPU predicts, so the bin's address waits on no edge load.
 * (Measured on AMD EPYC against THE TEST - an int-to-float conversion, a subtraction and two
 * compares - and the branch-free one-edge rule - an edge load on every increment's address:
 * both slower, ~10% on f64 / i32 with 1000 bins, up to 2x on f32 with 2^20 bins.) */
#define DEFINE_EVEN_CERT(NAME, T, ESTIMATE, LOWER, SCALE, FIRST, LAST, EDGE)                   \
    static inline uint32_t NAME(const slot_state *s, const T *e, T x)                            \
    {                                                                                            \
        uint32_t bins = s->bins;                                                                 \
        (void)e; /* the _calc forms compute their edges */                                       \
        if (!(x >= s->FIRST))                                                                    \
            return x != x ? GPUHIST_SLOT_NAN(bins) : GPUHIST_SLOT_UNDERFLOW(bins);               \
        if (x >= s->LAST)                                                                        \
            return (s->m->last_inclusive && x == s->LAST) ? bins - 1u                            \
                                                          : GPUHIST_SLOT_OVERFLOW(bins);         \
        const T f = ESTIMATE(x, s->LOWER, s->SCALE); /* >= 0: x >= E[0] */                       \
        const uint32_t k = f < (T)bins ? (uint32_t)f : bins - 1u;                                \
        if (s->cert.direct)                                                                      \
            return k;                                                                            \
        /* one rarely taken branch (a select would put the edge loads on the address path);    \
         * below E[k]: k >= 1 since x >= E[0]; at/above E[k+1]: k + 1 < bins since x < E[bins] */ \
        const int below = x < EDGE(k);                                                           \
        if (__builtin_expect(below | (x >= EDGE(k + 1u)), 0))                                    \
            return below ? k - 1u : k + 1u;                                                      \
        return k;                                                                                \
    }
#define EDGE_TABLE(j) e[j]
DEFINE_EVEN_CERT(cert_f, float, gpuhist_fe_estimate_f32, lower_f, scale_f, ef0, efn, EDGE_TABLE)
DEFINE_EVEN_CERT(cert_d, double, gpuhist_fe_estimate_f64, lower, scale, ed0, edn, EDGE_TABLE)
/* The same with the two edges computed (binmap.h's, as the table holds them): for the few
 * samples the vector test does not prove, so that no table of all the edges is built. */
#define EDGE_F32(j) gpuhist_fe_edge_f32(s->m, (j))
#define EDGE_F64(j) gpuhist_even_edge_f64(s->m, (j))
DEFINE_EVEN_CERT(cert_f_calc, float, gpuhist_fe_estimate_f32, lower_f, scale_f, ef0, efn, EDGE_F32)
DEFINE_EVEN_CERT(cert_d_calc, double, gpuhist_fe_estimate_f64, lower, scale, ed0, edn, EDGE_F64)

static inline uint32_t int_slot(const slot_state *s, int64_t x)
{
    uint32_t bins = s->bins;
    if (x < s->m->int_lower)
        return GPUHIST_SLOT_UNDERFLOW(bins);
    uint64_t d = (uint64_t)x - (uint64_t)s->m->int_lower;
    return d < bins ? (uint32_t)d : GPUHIST_SLOT_OVERFLOW(bins);
}

/* Slot expressions, x of the loop's type T. */
#define SLOT_F32_EVEN even_f(s, s->ef, s->m->scale_f, x)
#define SLOT_F64_EVEN even_d(s, s->ed, s->m->scale, x)
#define SLOT_EDGES edges_slot(s, (double)x)
#define SLOT_I32_EVEN even_d(s, s->ed, s->m->scale, (double)x)
#define SLOT_INT int_slot(s, (int64_t)x)
#define SLOT_I64_EVEN                                                                            \
    ((x >= -GH_EXACT_IN_DOUBLE && x <= GH_EXACT_IN_DOUBLE)                                       \
         ? even_d(s, s->ed, s->m->scale, (double)x)                                               \
         : gpuhist_slot_i64(s->m, s->edges, x))
#define SLOT_U64_EVEN                                                                            \
    (x <= (uint64_t)GH_EXACT_IN_DOUBLE ? even_d(s, s->ed, s->m->scale, (double)x)                \
                                       : gpuhist_slot_u64(s->m, s->edges, x))
#define SLOT_F32_CERT cert_f(s, s->ef, x)
#define SLOT_F64_CERT cert_d(s, s->ed, x)
#define SLOT_I32_CERT cert_d(s, s->ed, (double)x)
#define SLOT_I64_CERT                                                                            \
    ((x >= -GH_EXACT_IN_DOUBLE && x <= GH_EXACT_IN_DOUBLE) ? cert_d(s, s->ed, (double)x)         \
                                                           : gpuhist_slot_i64(s->m, s->edges, x))
#define SLOT_U64_CERT                                                                            \
    (x <= (uint64_t)GH_EXACT_IN_DOUBLE ? cert_d(s, s->ed, (double)x)                             \
                                       : gpuhist_slot_u64(s->m, s->edges, x))
#define SLOT_I64_GENERIC gpuhist_slot_i64(s->m, s->edges, x)
#define SLOT_U64_GENERIC gpuhist_slot_u64(s->m, s->edges, x)

/* One typed loop per (dtype, kind): the single-channel case is a plain stream. */
#define DEFINE_SLOT_LOOP(NAME, T, SLOT)                                                          \
    static void NAME(void *state, const unsigned char *p, uint64_t pixels)                       \
    {                                                                                            \
        /* a local copy: the increments through t cannot alias it, so fields stay in registers */ \
        const slot_state local = *(const slot_state *)state;                                     \
        const slot_state *s = &local;                                                            \
        uint32_t *restrict t = s->t;                                                             \
        if (s->channels == 1) {                                                                  \
            for (uint64_t i = 0; i < pixels; ++i) {                                              \
                T x;                                                                             \
                memcpy(&x, p + i * sizeof(T), sizeof(T));                                        \
                t[SLOT]++;                                                                       \
            }                                                                                    \
            return;                                                                              \
        }                                                                                        \
        size_t pixel_bytes = (size_t)s->channels * sizeof(T);                                    \
        for (uint64_t i = 0; i < pixels; ++i, p += pixel_bytes) {                                \
            for (uint32_t k = 0; k < s->active; ++k) {                                           \
                T x;                                                                             \
                memcpy(&x, p + s->off[k], sizeof(T));                                            \
                t[(size_t)k * s->slots + (SLOT)]++;                                              \
            }                                                                                    \
        }                                                                                        \
    }

DEFINE_SLOT_LOOP(f32_even, float, SLOT_F32_EVEN)
DEFINE_SLOT_LOOP(f32_edges, float, SLOT_EDGES)
DEFINE_SLOT_LOOP(f64_even, double, SLOT_F64_EVEN)
DEFINE_SLOT_LOOP(f64_edges, double, SLOT_EDGES)
DEFINE_SLOT_LOOP(i32_even, int32_t, SLOT_I32_EVEN)
DEFINE_SLOT_LOOP(i32_edges, int32_t, SLOT_EDGES)
DEFINE_SLOT_LOOP(i32_int, int32_t, SLOT_INT)
DEFINE_SLOT_LOOP(u32_even, uint32_t, SLOT_I32_EVEN)
DEFINE_SLOT_LOOP(u32_edges, uint32_t, SLOT_EDGES)
DEFINE_SLOT_LOOP(u32_int, uint32_t, SLOT_INT)
DEFINE_SLOT_LOOP(i64_even, int64_t, SLOT_I64_EVEN)
DEFINE_SLOT_LOOP(i64_other, int64_t, SLOT_I64_GENERIC)
DEFINE_SLOT_LOOP(u64_even, uint64_t, SLOT_U64_EVEN)
DEFINE_SLOT_LOOP(u64_other, uint64_t, SLOT_U64_GENERIC)
DEFINE_SLOT_LOOP(f32_cert, float, SLOT_F32_CERT)
DEFINE_SLOT_LOOP(f64_cert, double, SLOT_F64_CERT)
DEFINE_SLOT_LOOP(i32_cert, int32_t, SLOT_I32_CERT)
DEFINE_SLOT_LOOP(u32_cert, uint32_t, SLOT_I32_CERT)
DEFINE_SLOT_LOOP(i64_cert, int64_t, SLOT_I64_CERT)
DEFINE_SLOT_LOOP(u64_cert, uint64_t, SLOT_U64_CERT)

/* ---- one channel: map a block of samples to slots, then count the block ---------------------
 *
 * A single-channel stream is mapped MAP_BLOCK samples at a time into a slot buffer, then the
 * buffer is counted. Apart, the two loops each run at their own limit: the mapping has no store
 * to wait for (and under a certificate it is the vector test of cpu_simd.h, with the scalar rule
 * for the few samples it does not prove), and the increments no longer wait on the mapping's
 * loads and compares. The input is prefetched PREFETCH_AHEAD_BLOCKS blocks ahead: while a block
 * is counted the hardware prefetcher sees no input loads (measured, f32 2^20 even bins on AMD
 * EPYC: 2.3-2.4 GB/s without, 2.9-3.1 with; 4 KiB to 32 KiB ahead alike).
 * Tried for counters beyond L2 (2^20 bins: 4 MiB of counters), all slower on the same machine,
 * same run: the block's counters prefetched for writing while the next block is mapped (2.2
 * against 2.5 GB/s); 16-bit counters with the 2^16 carry in the 32-bit table (2 MiB; 2.7 against
 * 3.0); slots partitioned into buckets of 2^16 counters by their high bits, each bucket counted
 * when full with its counters in L2 (2.0 against 2.4); 8-bit counters with the carry (1 MiB,
 * within 3%, inside the noise); the counters in transparent huge pages (the bare increment loop
 * over 4 MiB ran at 850-960 M/s in 2 MiB and in 4 KiB pages alike). AVX-512 forms of the vector
 * test measured within 2% of the AVX2 ones (f32/4096, f64/256, f32/2^20): the counting, not the
 * mapping, is the limit. */
#define MAP_BLOCK 512u
#define PREFETCH_AHEAD_BLOCKS 8u
/* f64 EVEN under a certificate, with the vector test: blocks of 128 samples (1 KiB), the input
 * 16 blocks (16 KiB) ahead. The mapping and the increments are then short enough for the core
 * to run one block's increments beside the next block's mapping (out of order), where 512-sample
 * blocks run them one after the other (measured, f64 256 even bins on AMD EPYC, same run:
 * 20.2-21.0 GB/s per CPU-second with 512, 21.7-22.2 with 128, 20.3-20.4 with 256). f32 with
 * 2^20 bins runs slower with small blocks (6.7 against 6.3 GB/s: its increments miss L2 and
 * gain nothing from the overlap), so the other loops keep 512. */
#define MAP_BLOCK_F64 128u
#define PREFETCH_AHEAD_BLOCKS_F64 16u

/* t[slot[j]]++ for the block */
static inline void count_block(uint32_t *restrict t, const uint32_t *restrict slot, size_t n)
{
    size_t j = 0;
    for (; j + 4u <= n; j += 4u) {
        t[slot[j]]++;
        t[slot[j + 1u]]++;
        t[slot[j + 2u]]++;
        t[slot[j + 3u]]++;
    }
    for (; j < n; ++j)
        t[slot[j]]++;
}

/* Map n <= MAP_BLOCK samples at p to slots. */
#define DEFINE_MAP_SCALAR(NAME, T, SLOT)                                                         \
    static void NAME(const slot_state *s, const unsigned char *p, size_t n, uint32_t *slot)      \
    {                                                                                            \
        for (size_t j = 0; j < n; ++j) {                                                         \
            T x;                                                                                 \
            memcpy(&x, p + j * sizeof(T), sizeof(T));                                            \
            slot[j] = SLOT;                                                                      \
        }                                                                                        \
    }
DEFINE_MAP_SCALAR(map_f32_cert, float, SLOT_F32_CERT)
DEFINE_MAP_SCALAR(map_f64_cert, double, SLOT_F64_CERT)
DEFINE_MAP_SCALAR(map_f32_edges, float, SLOT_EDGES)
DEFINE_MAP_SCALAR(map_f64_edges, double, SLOT_EDGES)

/* The vector test, then the certificate's scalar rule (cert_f / cert_d: outside, NaN, the
 * neighbour rule) for the samples it did not prove. */
static void map_f32_cert_simd(const slot_state *s, const unsigned char *p, size_t n,
                              uint32_t *slot)
{
    uint32_t miss[MAP_BLOCK];
    const size_t nm = gpuhist_cpu_test_keys_f32(p, n, &s->test_f, slot, miss);
    for (size_t j = 0; j < nm; ++j) {
        float x;
        memcpy(&x, p + (size_t)miss[j] * sizeof x, sizeof x);
        slot[miss[j]] = cert_f_calc(s, NULL, x);
    }
}

static void map_f64_cert_simd(const slot_state *s, const unsigned char *p, size_t n,
                              uint32_t *slot)
{
    uint32_t miss[MAP_BLOCK];
    const size_t nm = gpuhist_cpu_test_keys_f64(p, n, &s->test_d, slot, miss);
    for (size_t j = 0; j < nm; ++j) {
        double x;
        memcpy(&x, p + (size_t)miss[j] * sizeof x, sizeof x);
        slot[miss[j]] = cert_d_calc(s, NULL, x);
    }
}

typedef void (*map_fn)(const slot_state *s, const unsigned char *p, size_t n, uint32_t *slot);

/* The input a few blocks ahead, one prefetch per cache line: while a block's counters are being
 * incremented the hardware prefetcher sees no input loads, and the next map would wait on DRAM. */
static inline void prefetch_input(const unsigned char *p, size_t bytes, size_t ahead,
                                  uint64_t left_bytes)
{
    if (left_bytes < ahead + bytes)
        return;
    for (size_t o = 0; o < bytes; o += 64u)
        __builtin_prefetch(p + ahead + o, 0, 3);
}

/* pixels one-channel samples of `size` bytes at p: map and count block by block, blocks of
 * `block` <= MAP_BLOCK samples, the input prefetched `ahead` blocks ahead. */
static inline void blocked_count(const slot_state *s, map_fn map, size_t size,
                                 const unsigned char *p, uint64_t pixels, const size_t block,
                                 const size_t ahead)
{
    uint32_t *restrict t = s->t;
    uint32_t slot[MAP_BLOCK];
    while (pixels) {
        const size_t n = pixels < block ? (size_t)pixels : block;
        prefetch_input(p, n * size, ahead * n * size, pixels * size);
        map(s, p, n, slot);
        count_block(t, slot, n);
        p += n * size;
        pixels -= n;
    }
}

#define DEFINE_BLOCKED_LOOP(NAME, T, MAP, MAP_SIMD, FALLBACK, BLOCK, AHEAD)                     \
    static void NAME(void *state, const unsigned char *p, uint64_t pixels)                       \
    {                                                                                            \
        const slot_state local = *(const slot_state *)state;                                     \
        if (local.channels != 1) {                                                               \
            FALLBACK(state, p, pixels);                                                          \
            return;                                                                              \
        }                                                                                        \
        blocked_count(&local, local.simd ? MAP_SIMD : MAP, sizeof(T), p, pixels, BLOCK, AHEAD);  \
    }
DEFINE_BLOCKED_LOOP(f32_cert_blocked, float, map_f32_cert, map_f32_cert_simd, f32_cert, MAP_BLOCK,
                    PREFETCH_AHEAD_BLOCKS)
DEFINE_BLOCKED_LOOP(f64_cert_blocked, double, map_f64_cert, map_f64_cert_simd, f64_cert,
                    local.simd ? MAP_BLOCK_F64 : MAP_BLOCK,
                    local.simd ? PREFETCH_AHEAD_BLOCKS_F64 : PREFETCH_AHEAD_BLOCKS)
DEFINE_BLOCKED_LOOP(f32_edges_blocked, float, map_f32_edges, map_f32_edges, f32_edges, MAP_BLOCK,
                    PREFETCH_AHEAD_BLOCKS)
DEFINE_BLOCKED_LOOP(f64_edges_blocked, double, map_f64_edges, map_f64_edges, f64_edges, MAP_BLOCK,
                    PREFETCH_AHEAD_BLOCKS)

static void slot_flush(void *state)
{
    slot_state *s = state;
    size_t n = (size_t)s->active * s->slots;
    for (size_t i = 0; i < n; ++i)
        s->out[i] += s->t[i];
    memset(s->t, 0, n * sizeof *s->t);
}

/* The same for a call of few samples against many entries (at most 1 in 16 entries can be
 * nonzero): only the nonzero sub-counters are added and cleared, in blocks of 16 tested at
 * once, so that the counters and the sub-counters of the other entries are not written (the
 * full flush of a one-sample chunk of 2^20 bins writes 12 MiB, mostly fresh pages). */
static void slot_flush_sparse(void *state)
{
    slot_state *s = state;
    const size_t n = (size_t)s->active * s->slots;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t any = 0;
        for (int k = 0; k < 16; ++k)
            any |= s->t[i + (size_t)k];
        if (!any)
            continue;
        for (size_t k = i; k < i + 16; ++k)
            if (s->t[k]) {
                s->out[k] += s->t[k];
                s->t[k] = 0;
            }
    }
    for (; i < n; ++i)
        if (s->t[i]) {
            s->out[i] += s->t[i];
            s->t[i] = 0;
        }
}

/* certified: the EVEN spec's certificate holds (fast_even.h) */
static segment_fn pick_slot_loop(const gpuhist_plan *plan, int certified)
{
    int kind = plan->map.kind;
    if (kind == GH_KIND_EVEN && certified) {
        switch (plan->dtype) {
        case GPUHIST_F32: return f32_cert_blocked;
        case GPUHIST_F64: return f64_cert_blocked;
        case GPUHIST_I32: return i32_cert;
        case GPUHIST_U32: return u32_cert;
        case GPUHIST_I64: return i64_cert;
        case GPUHIST_U64: return u64_cert;
        default: return NULL;
        }
    }
    switch (plan->dtype) {
    case GPUHIST_F32:
        return kind == GH_KIND_EVEN ? f32_even : f32_edges_blocked;
    case GPUHIST_F64:
        return kind == GH_KIND_EVEN ? f64_even : f64_edges_blocked;
    case GPUHIST_I32:
        return kind == GH_KIND_EVEN ? i32_even : kind == GH_KIND_EDGES ? i32_edges : i32_int;
    case GPUHIST_U32:
        return kind == GH_KIND_EVEN ? u32_even : kind == GH_KIND_EDGES ? u32_edges : u32_int;
    case GPUHIST_I64:
        return kind == GH_KIND_EVEN ? i64_even : i64_other;
    case GPUHIST_U64:
        return kind == GH_KIND_EVEN ? u64_even : u64_other;
    default:
        return NULL;
    }
}

int gpuhist_cpu_even_table_unneeded(const gpuhist_plan *plan)
{
    if (plan->map.kind != GH_KIND_EVEN)
        return 0;
    gpuhist_fe_cert c;
    gpuhist_fe_cert_of(&plan->map, &c); /* cached per spec */
    /* direct: no edge but the first and last; the vector test (one channel, f32/f64): the
     * samples it does not prove compute their two edges (cert_f_calc) */
    return c.ok && (c.direct || (plan->channels == 1 &&
                                 (plan->dtype == GPUHIST_F32 || plan->dtype == GPUHIST_F64) &&
                                 gpuhist_cpu_simd()));
}

void *gpuhist_cpu_even_edge_table(const gpuhist_plan *plan)
{
    /* Exactly binmap.h's edges: E[i] from gpuhist_even_edge_*, so comparisons agree. */
    if (plan->dtype == GPUHIST_F32) {
        float *e = malloc(((size_t)plan->bins + 1) * sizeof *e);
        for (uint32_t i = 0; e && i <= plan->bins; ++i)
            e[i] = gpuhist_even_edge_f32(&plan->map, i);
        return e;
    }
    double *e = malloc(((size_t)plan->bins + 1) * sizeof *e);
    for (uint32_t i = 0; e && i <= plan->bins; ++i)
        e[i] = gpuhist_even_edge_f64(&plan->map, i);
    return e;
}

static gpuhist_status count_slots(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                  uint64_t *out, gpuhist_cpu_scratch *sc)
{
    slot_state s;
    memset(&s, 0, sizeof s);
    s.plan = plan;
    s.m = &plan->map;
    s.edges = plan->edges;
    s.bins = plan->bins;
    s.slots = plan->slots;
    s.active = plan->active;
    s.channels = plan->channels;
    s.out = out;
    for (uint32_t k = 0; k < plan->active; ++k)
        s.off[k] = (size_t)plan->channel_index[k] * plan->sample_size;
    if (plan->map.kind == GH_KIND_EVEN) {
        gpuhist_fe_cert_of(&plan->map, &s.cert); /* cached per spec */
        s.lower_f = plan->map.lower_f;
        s.scale_f = plan->map.scale_f;
        s.lower = plan->map.lower;
        s.scale = plan->map.scale;
        /* the vector test: f32 and f64 samples, one channel, a certificate that holds */
        s.simd = s.cert.ok && plan->channels == 1 &&
                 (plan->dtype == GPUHIST_F32 || plan->dtype == GPUHIST_F64) && gpuhist_cpu_simd();
        s.test_f = (gpuhist_cpu_test_f32){s.lower_f, s.scale_f, (float)plan->bins,
                                          s.cert.t_lo_f, s.cert.t_hi_f};
        s.test_d = (gpuhist_cpu_test_f64){s.lower, s.scale, (double)plan->bins, s.cert.t_lo,
                                          s.cert.t_hi};
    }
    segment_fn loop = pick_slot_loop(plan, s.cert.ok);
    if (!loop)
        return GPUHIST_ERROR_UNSUPPORTED;

    void *edge_table = NULL; /* built here (freed here) when the plan carries none */
    if (plan->map.kind == GH_KIND_EVEN) {
        s.ef0 = gpuhist_even_edge_f32(&plan->map, 0);
        s.efn = gpuhist_even_edge_f32(&plan->map, plan->bins);
        s.ed0 = gpuhist_even_edge_f64(&plan->map, 0);
        s.edn = gpuhist_even_edge_f64(&plan->map, plan->bins);
    }
    /* no table where the loops read no edge but the first and the last */
    if (plan->map.kind == GH_KIND_EVEN && !gpuhist_cpu_even_table_unneeded(plan)) {
        const void *table = plan->even_edge_table;
        if (!table && !(table = edge_table = gpuhist_cpu_even_edge_table(plan)))
            return GPUHIST_ERROR_OUT_OF_MEMORY;
        if (plan->dtype == GPUHIST_F32)
            s.ef = table;
        else
            s.ed = table;
    }
    /* the loops of SLOT_EDGES (f32, f64, i32, u32 samples) */
    if (plan->map.kind == GH_KIND_EDGES && plan->dtype != GPUHIST_I64 &&
        plan->dtype != GPUHIST_U64 && !edge_cells(&s)) {
        free(edge_table);
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    /* zero (slot_flush leaves it zero again), or holding the unflushed counts of this
     * histogram's previous chunk (sc->pending_out == out): they are carried on */
    const size_t n = (size_t)plan->active * plan->slots;
    uint64_t carried = 0;
    if (sc && sc->pending_out) {
        if (sc->pending_out == out && sc->pending_entries == n)
            carried = sc->pending_pixels;
        else
            gpuhist_cpu_settle_entry(sc, 0);
    }
    s.t = gpuhist_cpu_scratch_table(sc, n);
    if (!s.t) {
        free(edge_table);
        free(s.cell_first);
        free(s.cell);
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    const int keep = sc && sc->defer;
    /* few samples for many entries, nothing carried in: the sparse flush */
    const flush_fn flush =
        !carried && (end - begin) * plan->active < n / 16u ? slot_flush_sparse : slot_flush;
    const uint64_t left = for_each_segment(plan, begin, end, &s, loop, flush, carried, keep);
    if (sc) {
        sc->pending_out = keep && left ? out : NULL;
        sc->pending_entries = keep && left ? n : 0u;
        sc->pending_pixels = keep ? left : 0u;
    }
    if (!sc)
        free(s.t);
    free(edge_table);
    free(s.cell_first);
    free(s.cell);
    return GPUHIST_OK;
}

size_t gpuhist_cpu_count_scratch(const gpuhist_plan *plan)
{
    uint32_t values = gpuhist_small_value_count(plan->dtype);
    if (values)
        return (size_t)8u * values * sizeof(uint32_t); /* at most 8 lanes of 32-bit counters */
    size_t edge_table = plan->map.kind == GH_KIND_EVEN    ? ((size_t)plan->bins + 1u) * 8u
                        : plan->map.kind == GH_KIND_EDGES
                            ? ((plan->bins > 8192u ? 65536u : 8u * (size_t)plan->bins) + 1u) * 8u
                                                          : 0u;
    return edge_table + (size_t)plan->active * plan->slots * sizeof(uint32_t);
}

gpuhist_status gpuhist_cpu_count_pixels(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                        uint64_t *out, gpuhist_cpu_scratch *sc)
{
    if (begin >= end)
        return GPUHIST_OK;
    switch (gpuhist_small_value_count(plan->dtype)) {
    case 256u:
        return count_values8(plan, begin, end, out);
    case 65536u:
        return count_values16(plan, begin, end, out, sc);
    default:
        return count_slots(plan, begin, end, out, sc);
    }
}

/* ---- the strategy ------------------------------------------------------------------------------ */

static gpuhist_status serial_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job,
                                 void *out)
{
    (void)job; /* the CPU backend's job is the plan */
    uint64_t *slots = out;
    size_t values_bytes = gpuhist_cpu_counts_values(plan) ? gpuhist_cpu_out_entries(plan) * 8u : 0u;
    gpuhist_status need = gpuhist_need_host_memory(
        ctx, values_bytes + gpuhist_cpu_count_scratch(plan), "cpu-serial: its sub-counters");
    if (need != GPUHIST_OK)
        return need;
    /* the context's scratch of one thread: no fresh pages on each call */
    gpuhist_cpu_scratch *sc = gpuhist_cpu_scratch_for(ctx, 1);
    if (!sc)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "cpu-serial: cannot allocate its scratch");
    if (!gpuhist_cpu_counts_values(plan)) {
        /* a chunk of a histogram: the sub-counters may stay unflushed until the next chunk or
         * the backend's settle (cpu_kernels.h) */
        sc->defer = plan->cpu_defer_flush;
        gpuhist_status st = gpuhist_cpu_count_pixels(plan, 0, plan->pixels, slots, sc);
        sc->defer = 0;
        if (st != GPUHIST_OK)
            return gpuhist_fail(ctx, st, "cpu-serial: cannot allocate %zu sub-counters",
                                gpuhist_cpu_out_entries(plan));
        return GPUHIST_OK;
    }
    /* Raw values, folded into the slots here (not by the backend: the strategy takes every dtype,
     * and only 8/16-bit ones count values). */
    size_t n = gpuhist_cpu_out_entries(plan);
    uint64_t *values = gpuhist_cpu_scratch_hist(sc, n);
    if (!values)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "cpu-serial: cannot allocate %zu value counters", n);
    gpuhist_status st = gpuhist_cpu_count_pixels(plan, 0, plan->pixels, values, sc);
    if (st == GPUHIST_OK)
        gpuhist_fold_values(plan, values, slots);
    if (st != GPUHIST_OK)
        return gpuhist_fail(ctx, st, "cpu-serial: cannot allocate value sub-counters");
    return GPUHIST_OK;
}

const gpuhist_strategy gpuhist_strategy_cpu_serial = {
    .name = "cpu-serial",
    .backend = GPUHIST_BACKEND_CPU,
    .seed = "001 §IV",
    .supports = "all dtypes, all bin kinds, any bins, channels, ROI",
    .summary = "one thread; 8/16-bit: raw values in 32-bit sub-tables (2-8 lanes, adaptive), "
               "wide types: typed loops, estimate+fix against an edge table",
    .dtypes = GPUHIST_ALL_DTYPES,
    .kinds = GPUHIST_ALL_KINDS,
    .max_bins = 0,
    .caps = GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    .supports_fn = NULL,
    .run = serial_run,
};
