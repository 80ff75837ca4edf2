/*
 * two_pass.cu - cuda-two-pass: histograms of 2^17 .. 2^24 bins (built for f32 with 2^20 even
 * bins, then 2^24) as two streaming passes, so that no sample ever costs an L2 atomic.
 *
 * Why. Past one block's shared memory the counters live in L2 (cuda-fast-global: one scattered
 * L2 atomic per sample, ~400 GB/s of f32 on spread data on the H200) or in a cluster's
 * distributed shared memory (cuda-fast-cluster: 316 GB/s, the SM-to-SM network is the limit).
 * Splitting the key instead of the counters keeps every count in a block's own shared memory:
 * a slot s < bins is bucket s >> 16 and key s & 0xffff, and a bucket's 65536 keys fit one
 * block's shared memory as packed 16-bit counters (packed16.cuh, 128 KiB).
 *
 * Pass 1 (tp_partition, 512 threads, tiles of 4096 samples, grid-stride over tiles). Each thread
 * loads 8 samples (16 for 8-bit types) with 16-byte loads (__ldcs; the next tile's are loaded while
 * this one is ranked) and maps them to slots: binmap.h per sample (common.cuh's gh_slot), or for
 * f32 EVEN bins fast_even.h's estimate and test (3 float operations per sample, direct; binmap.h's
 * exact path for a thread's whole vector only when one of its samples fails the test, so the common
 * case has no branch per sample), or for 16/32/64-bit integer ids on INTEGER bins binmap.h's one
 * subtraction and compare (TP_MAP_IDS). A key's digit is its bucket, or one of the three outlier
 * slots, or "not a sample" (past the ragged end, or a reference-key hit, below). Its rank within
 * its digit is the answer of a shared atomic on the tile's digit counter, issued as soon as the key
 * is known ("not a sample" counts on the lane's own sink word: no serialised same-address atomics
 * on skewed data). One barrier completes the counts; every warp then scans the 32 counters itself
 * (no barrier waits for one warp's scan), warp 0 takes the pages, every thread stages its bin keys
 * in bucket order in shared memory, and after a second barrier the tile is copied out as contiguous
 * runs of 16-bit keys (2 bytes per sample written) into pages of 8192 keys: two barriers per tile,
 * the counters double-buffered by tile parity. Each block owns a pool of pages (sized from its tile
 * count: no global allocator, no atomic whose answer a tile waits for) and keeps one open page per
 * bucket; a run that does not fit takes the open page's rest and one fresh page (a tile's run is
 * never longer than a page), whose bucket it records in a page table. Outliers (underflow,
 * overflow, NaN) are only counted: their digit counts per tile, a register accumulates them, one
 * atomic per block adds them to out. When the block ends, the rest of each open page is filled with
 * key 0 and that many are subtracted from the bucket's key 0 in out (64-bit counters modulo 2^64:
 * exact), so every used page is full. Samples equal to a reference key (thread 0's first key of the
 * block's previous tile: the hot value of skewed data) become "not a sample" and are only counted
 * (a warp sum per tile into shared memory, one atomic per run of one reference): hot90 data writes
 * and re-reads only its other 10%. A tile made only of the reference (constant data) stages and
 * writes nothing: the barrier that completes the counts is a __syncthreads_and of "all my keys
 * equal it".
 * Wide mode (29 to 256 buckets: up to 2^24 bins). Per-block pools would leave up to a page per
 * block and bucket unfilled (256 x 16 KiB x ~260 blocks: more than the data), so the pages come
 * from one region per bucket instead, sized before pass 1: tp_digits counts the samples per
 * digit of one chunk in 16 of the segment (chunks of 2048 vectors; every vector when that
 * would be under 64 chunks), so it reads a sixteenth of the data instead of all of it
 * (per-warp shared counters, runs of one digit added at once); tp_regions gives each bucket
 * its count, or its estimate plus six standard deviations and two pages, in page units (f32
 * specs past 2^23 bins map their samples under fast_even.h's wide certificate: keys by
 * gpuhist_fe_key_f32_wide, whose floor is a conversion; without it every sample took binmap.h's
 * walk in double, which ncu showed as 88% of pass 1's instructions on 2^24 bins), and pass 1
 * reserves each tile's run of a bucket in its region with one global atomic on the bucket's
 * cursor (a tile has at most 256 runs, reserved by 256 threads at once). Keys a region has no
 * room for (an estimate that fell short: data whose chunks differ) are counted into out by a
 * global atomic each, so an estimate costs time, never a count. The tile's digit counts (260)
 * are scanned by each warp into its own shared row (a lane sums 9 digits, a shuffle scan, the
 * row written), so the two barriers per tile stay. tp_seal then pads each bucket's last page
 * with key 0, takes that many off its key 0 and marks its pages; pass 2 is unchanged. Traffic
 * per f32 sample: 4 + 0.25 bytes read, 2 written, 2 read again. Measured (H100, f32 2^24 bins
 * over [0, 1), 1 GiB, wide certificate): 0.193 / 0.235 / 0.561 / 0.154 of the read ceiling on
 * uniform / hot90 / constant / bell (target 0.15; every sample counted first: 0.164 / 0.193 /
 * 0.368 / 0.135); 4096 x 4096 f32 pairs, device counts: 0.258-0.262 (counted first:
 * 0.203; copied into the caller's counts at the end: 0.245-0.249). Tried and
 * slower: a block holding 128 keys of a bucket's region at a time (one cursor atomic per ~16
 * tiles instead of per tile): 4096 x 4096 0.213, 2^24 bell 0.130. Without a certificate
 * (binmap.h's walk per sample) it was 0.074-0.109: pass 1 then ran 1336 SASS instructions per
 * warp and tile, issue bound (0.77 warps issued per scheduler, DRAM 19%).
 * Between the passes (tp_group), the used pages are listed bucket by bucket.
 * Pass 2 (tp_count, 1024 threads, one block per SM). The page lists are cut into equal ranges,
 * one per block; a block counts each bucket part of its range into packed 16-bit shared counters
 * (packed16.cuh: carry accounting, per-sample hot-key dummies against skewed data, flushed
 * every 8 iterations) and adds the non-zero
 * ones to out with 64-bit atomics: at most (blocks + buckets) x 65536 atomics per pass,
 * independent of the input size.
 *
 * Traffic per f32 sample: 4 bytes read, 2 written, 2 read again (plus ~3% padding): the pair
 * cannot exceed half the read ceiling; the cell's target is a quarter.
 * Design choices, each measured against the alternative on the H200 (docs/PERFORMANCE.md,
 * "f32, 2^20 even bins" and "Measurements behind the CUDA sources"):
 * - ranks by shared atomics, not cub::BlockRadixRank or its ballot-matching variant: the CUB
 *   rank's counter scan (17 packed lanes per thread per tile) costs ~30 instructions per sample,
 *   an atomic rank ~5, and on Hopper's ~8 shared lane-updates per clock per SM the atomics of
 *   1 GiB of f32 take ~120 us, hidden under the rest of pass 1;
 * - two barriers per tile (per-warp scans, counts complete at the barrier that ends the tile
 *   before) rather than four: fewer barrier stalls, higher issue utilisation;
 * - the certified map without a branch per sample (fewer instructions on every distribution);
 * - 8 samples per thread (16 spill at 64 registers), the next tile loaded while this one is
 *   ranked;
 * - the reference-key exclusion: a few % on uniform and bell for a large gain on hot90;
 * - pass 2 adds to out with atomics: partial rows for a reduce kernel are no faster;
 * - constant data pays 8 sink atomics per thread per tile; skipping the ranks after a one-key
 *   tile needs a second inlined copy of the mapping loop, which spills and costs uniform more.
 * What bounds it (ncu, uniform): pass 1 runs ~59 thread-instructions per sample at ~2/3 issue
 * utilisation, its stalls spread over barrier, short scoreboard and math-pipe throttle:
 * instruction bound. Bell is slower in both passes: more same-address rank atomics on the
 * middle buckets (pass 1), mio throttle on the packed counters (pass 2). i64 ids over 2^20
 * values (H100, ncu): pass 1 moves its 8 + 2 bytes per id at 73% of the DRAM peak, near its
 * traffic; pass 2, a quarter of the time, reads its keys at half the DRAM rate (0.496 / 0.601 /
 * 0.869 / 0.460 of the read ceiling on uniform / hot90 / constant / bell).
 * Next: pass 2 on bell (mio throttle on the packed counters); the copy-out's per-key
 * destination lookup (~12 instructions per key).
 * Key sources (tp_src_*). Pass 1 and tp_digits take their keys from a source: the plan's samples
 * (this strategy), or N-D points whose key is the point's joint slot (nd_device.cuh's per-axis
 * map, ndmap.h's combination; nd_packed16.cu's nd_count past the fused count's slots calls
 * gh_tp_nd_count): interleaved f32 pairs of certified axes two per 16-byte vector (8 bytes read
 * per key: the data's two reads, one per pass, are 16 of a point's 20 bytes of traffic), any
 * other f32 / f64 chunk point by point, gathered as its unit is loaded. N-D outliers go to the
 * outlier slots: out at bins + 0, NaN at bins + 2, which the N-D count may keep apart from the
 * joint bins (tp_params.outliers: the joint bins then go straight into the caller's device
 * counts, no copy at the end). No slot array is written or read.
 * Limits: one channel; ceil(bins / 65536) <= 256 buckets (2^24 bins; 8-bit samples: 28, paged
 * mode only); paged mode up to 28
 * buckets (1.8M bins: with the 4 extra digits, 32 digit counters: one warp's scan);
 * scratch of ~2.1 bytes per sample of a segment plus 16 KiB per block and bucket (paged) or per
 * bucket (wide), plus a 4-byte page-list entry per page and bucket (segments of at most 2^28
 * samples, halved while the scratch cannot be allocated, down to 2^20).
 * Seed: none of the seeds (their sort-based route, cuda-sort-rle, sorts whole keys); this is a
 * one-digit radix partition (ranks by shared atomics) feeding 002's privatised shared
 * histograms.
 */
#include "fast_even.h"
#include "nd_device.cuh"
#include "packed16.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

#define TP_THREADS TWO_PASS_THREADS /* launch_policy.h */
#define TP_PAGE 8192u                       /* 16-bit keys per page (16 KiB) */
#define TP_PAGE_VEC (TP_PAGE / 8u)          /* 16-byte vectors per page */
#define TP_MAX_PAGED 28u                    /* paged mode: + 4 digits fit 5 radix bits */
#define TP_MAX_BUCKETS 256u                 /* wide mode: 2^24 bins */
#define TP_WIDE_DIGITS (TP_MAX_BUCKETS + 4u)
#define TP_WIDE_SLICE 9u                    /* digits per lane in a warp's scan: 32 x 9 >= 260 */
#define TP_DIGITS_U 4u                      /* tp_digits: 16-byte vectors per thread in flight */
#define TP_SAMPLE_CHUNK 2048u               /* tp_digits: vectors per sampled chunk (32 KiB) */
#define TP_SAMPLE_STRIDE 16u                /* tp_digits: one chunk in 16 counted ... */
#define TP_SAMPLE_MIN_CHUNKS 64u            /* ... when that still counts 64 chunks or more */
#define TP_SEGMENT_MAX (1ull << 28)         /* samples per pass pair */
#define TP_SEGMENT_MIN (1ull << 20)
#define TP_COUNT_U 4u                       /* pass 2: vectors per thread per iteration */

/* f32 EVEN: fast_even.h's test, direct or cut; WIDE: a wide certificate (more than 2^23 bins),
 * its key by gpuhist_fe_key_f32_wide */
enum { TP_MAP_GENERIC = 0, TP_MAP_F32_DIRECT = 1, TP_MAP_F32_CUT = 2, TP_MAP_F32_WIDE_DIRECT = 3,
       TP_MAP_F32_WIDE_CUT = 4, TP_MAP_IDS = 5 };
/* TP_MAP_IDS: 16/32/64-bit integer samples on INTEGER bins (bincount of ids): binmap.h's one
 * subtraction and compare per id, every vector mapped whole, instead of gh_slot's general map
 * (whose other kinds' code made the i64 partition kernel spill: 112 bytes, ptxas, sm_90). */


struct tp_params {
    gh_kparams k;
    uint32_t bins, buckets; /* buckets = ceil(bins / 65536) */
    float lower_f, scale_f, t_lo, t_hi; /* f32 EVEN: fast_even.h's estimate and test */
    int cert_ok;                        /* f32 EVEN: the certificate holds (one-edge rule) */
    uint32_t pool;          /* pages per pass-1 block: block b owns [b pool, (b + 1) pool) */
    uint32_t *page_bucket;  /* device, one per page: its bucket, or TP_NO_BUCKET (unused) */
    uint16_t *arena;        /* device: grid * pool pages of TP_PAGE keys */
    uint32_t *cursor;       /* wide mode, device: each bucket's next free arena index */
    const uint32_t *region_end; /* wide mode, device: the arena index past bucket d's region */
    /* where the three outlier slots are added (underflow, overflow, NaN: bins + 0 .. 2); out +
     * bins unless the caller keeps them apart from the bins (an N-D count straight into the
     * caller's buffer of joint bins) */
    unsigned long long *outliers;
};

#define TP_NO_BUCKET 0xFFFFFFFFu
/* The rank's last digit: "not a sample" (past the ragged end, or a reference-key hit), neither
 * written nor counted by the rank's consumer. */
#define TP_NOT_A_SAMPLE(nb) (((nb) + 3u) << 16)

/* fast_even.h's test on an f32 sample under the map's certificate: its key, ok = the key is
 * binmap.h's slot. */
template <int MAP>
__device__ __forceinline__ uint32_t tp_fe_key(const tp_params &p, float x, int *ok)
{
    constexpr int cut = MAP == TP_MAP_F32_CUT || MAP == TP_MAP_F32_WIDE_CUT;
    if constexpr (MAP == TP_MAP_F32_WIDE_DIRECT || MAP == TP_MAP_F32_WIDE_CUT)
        return gpuhist_fe_key_f32_wide(x, p.lower_f, p.scale_f, p.bins, p.t_lo, p.t_hi, cut, ok);
    else
        return gpuhist_fe_key_f32(x, p.lower_f, p.scale_f, p.bins, p.t_lo, p.t_hi, cut, ok);
}

/* TP_MAP_IDS: the slot of an integer id (binmap.h's INTEGER rule). */
template <typename T> __device__ __forceinline__ uint32_t tp_id_slot(const tp_params &p, T x)
{
    if constexpr (std::is_same<T, uint64_t>::value)
        return gpuhist_slot_integer_u64(p.k.map.int_lower, p.bins, x);
    else
        return gpuhist_slot_integer_i64(p.k.map.int_lower, p.bins, (long long)x);
}

template <typename T, int MAP>
__device__ __forceinline__ uint32_t tp_slot(const tp_params &p, T x)
{
    if constexpr (MAP == TP_MAP_IDS) {
        return tp_id_slot<T>(p, x);
    } else if constexpr (MAP != TP_MAP_GENERIC) {
        int ok;
        const uint32_t key = tp_fe_key<MAP>(p, x, &ok);
        if (__builtin_expect(ok, 1))
            return key;
        /* the one-edge rule where the certificate holds (samples on an edge fail a cut test:
         * binmap.h's walk in double for each cost ~60 instructions), else binmap.h */
        constexpr int direct = MAP == TP_MAP_F32_DIRECT || MAP == TP_MAP_F32_WIDE_DIRECT;
        return p.cert_ok ? gpuhist_fe_fix_f32(&p.k.map, p.t_lo, direct, x)
                         : gpuhist_slot_even_f32(&p.k.map, x);
    } else {
        return gh_slot(&p.k.map, p.k.edges, x);
    }
}

/* Pass-1 key of a slot: the slot itself when it is a bin (digit s >> 16, key s & 0xffff), else
 * the outlier's digit. */
__device__ __forceinline__ uint32_t tp_key(const tp_params &p, uint32_t s)
{
    return s < p.bins ? s : (p.buckets + (s - p.bins)) << 16;
}

/* The slot of a pass-1 key (inverse of tp_key). */
__device__ __forceinline__ uint32_t tp_slot_of_key(const tp_params &p, uint32_t key)
{
    return key < p.bins ? key : p.bins + (key >> 16) - p.buckets;
}

/* The counter of slot s: a bin in out, an outlier slot at p.outliers. */
__device__ __forceinline__ unsigned long long *tp_counter(const tp_params &p,
                                                          unsigned long long *out, uint32_t s)
{
    return s < p.bins ? out + s : p.outliers + (s - p.bins);
}

/* Pass-1 keys of one 16-byte vector's samples. f32 certified maps test the whole vector with
 * fast_even.h (a passing key is a bin: its own pass-1 key) and take binmap.h's path (tp_slot) for
 * the vector only when a sample fails, so the common case has no branch per sample; other maps
 * take tp_slot per sample. */
template <typename T, int MAP, uint32_t VE>
__device__ __forceinline__ void tp_vector_keys(const tp_params &p, const T (&e)[VE],
                                               uint32_t (&key)[VE])
{
    constexpr bool certified = MAP != TP_MAP_GENERIC && MAP != TP_MAP_IDS;
    bool ok = certified;
    if constexpr (certified) {
#pragma unroll
        for (uint32_t i = 0; i < VE; ++i) {
            int good;
            key[i] = tp_fe_key<MAP>(p, e[i], &good);
            ok = ok && good;
        }
    }
    if (!ok) {
#pragma unroll
        for (uint32_t i = 0; i < VE; ++i)
            key[i] = tp_key(p, tp_slot<T, MAP>(p, e[i]));
    }
}

/* Samples per thread per tile: 8 (16 for 8-bit types: one vector). With 16 f32 samples the
 * keys, their ranks and the prefetch spill at 64 registers (120 bytes of stack, ptxas). */
template <typename T> __host__ __device__ constexpr uint32_t tp_items()
{
    return sizeof(T) == 1 ? 16u : 8u;
}

/* Where the ranks of one bucket's run in a tile go: ranks below lim to arena index a0 + rank (the
 * open page's rest), the others to a1 + rank (a fresh page). */
struct __align__(16) tp_dest {
    uint32_t a0, lim, a1, unused;
};

/* ---- key sources: where pass 1 and tp_digits take their keys from ------------------------------
 * A source says what one 16-byte unit of a segment's body holds: load (unit v of the body that
 * starts at element vbegin; element = the unit type's size), VE keys (keys: all of them; key:
 * one, for sources mapped only where the element is valid, WHOLE false), the slot of a loose
 * element k of the head or tail (slot: binmap.h's numbering, outliers at bins + 0 / 1 / 2), the
 * keys per thread and tile (ITEMS), whether it has a wide mode (CAN_WIDE), and on the host where
 * a launch range's body lies (body). The kernels and the host loop are the same for every
 * source. */

/* The samples of a 1-D plan (the strategy's own input). */
template <typename T, int MAP> struct tp_src_samples {
    typedef T unit;
    static constexpr uint32_t VE = 16u / sizeof(T);
    static constexpr uint32_t ITEMS = tp_items<T>();
    static constexpr bool WHOLE = MAP != TP_MAP_GENERIC; /* certified and ids maps: whole vectors */
    /* 8-bit samples have no wide mode: their 8192-sample tiles' stage and the warps' scan rows
     * would pass the 48 KiB of static shared memory (tp_supports refuses them) */
    static constexpr bool CAN_WIDE = sizeof(T) > 1;
    union vec {
        uint4 v;
        T e[VE];
    };
    __device__ __forceinline__ uint4 load(const tp_params &p, uint64_t vbegin, uint64_t v) const
    {
        return __ldcs((const uint4 *)((const T *)p.k.data + vbegin) + v);
    }
    __device__ __forceinline__ void keys(const tp_params &p, const uint4 v,
                                         uint32_t (&key)[VE]) const
    {
        vec w;
        w.v = v;
        tp_vector_keys<T, MAP, VE>(p, w.e, key);
    }
    __device__ __forceinline__ uint32_t key(const tp_params &p, const uint4 v, uint32_t e) const
    {
        vec w;
        w.v = v;
        return tp_key(p, tp_slot<T, MAP>(p, w.e[e]));
    }
    __device__ __forceinline__ uint32_t slot(const tp_params &p, uint64_t k) const
    {
        return tp_slot<T, MAP>(p, ((const T *)p.k.data)[k]);
    }
    static uint64_t body(const unsigned char *data, uint64_t b, uint64_t e, uint64_t *nvec)
    {
        return gh_vec16_body<T>(data, b, e, nvec);
    }
};

/* N-D points: a point's key is its joint slot (nd_device.cuh's per-axis map and ndmap.h's
 * combination, as nd_map.cu writes them), bins 0 .. total - 1, "out" at outlier 0 and NaN at
 * outlier 2 (binmap.h's underflow and NaN slots of `total` bins): no slot array. */
__device__ __forceinline__ uint32_t tp_nd_slot(uint32_t cur, uint32_t total)
{
    return cur < GPUHIST_ND_OUT    ? cur
           : cur == GPUHIST_ND_OUT ? GPUHIST_SLOT_UNDERFLOW(total)
                                   : GPUHIST_SLOT_NAN(total);
}

/* Interleaved f32 pairs, 8-byte aligned, both axes certified (fast_even.h): two points per
 * 16-byte vector, their keys by the certified estimate (the cut test, as the fused count's),
 * the general map of both points only when one coordinate fails it. p.k.data: point 0. */
struct tp_src_nd_pairs {
    gpuhist_nd_map m;
    typedef uint2 unit; /* a point */
    static constexpr uint32_t VE = 2u;
    /* 4 points per thread and tile: the 1-D f32 tile's 32 bytes of data per thread (8 points
     * spill at 64 registers: 112 bytes of stores in the wide kernel, ptxas, sm_90) */
    static constexpr uint32_t ITEMS = 4u;
    static constexpr bool WHOLE = true;
    static constexpr bool CAN_WIDE = true;
    __device__ __forceinline__ uint32_t general(float x, float y) const
    {
        uint32_t cur =
            gpuhist_nd_combine(0u, nd_axis_slot<float>(m.axis[0], x), m.axis[0].map.bins);
        cur = gpuhist_nd_combine(cur, nd_axis_slot<float>(m.axis[1], y), m.axis[1].map.bins);
        return tp_nd_slot(cur, m.total);
    }
    __device__ __forceinline__ uint4 load(const tp_params &p, uint64_t vbegin, uint64_t v) const
    {
        return __ldcs((const uint4 *)((const uint2 *)p.k.data + vbegin) + v);
    }
    __device__ __forceinline__ void keys(const tp_params &p, const uint4 v,
                                         uint32_t (&key)[VE]) const
    {
        const float c[4] = {__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                            __uint_as_float(v.w)};
        bool ok = true;
#pragma unroll
        for (uint32_t j = 0; j < VE; ++j) {
            uint32_t cur = 0;
#pragma unroll
            for (uint32_t a = 0; a < 2u; ++a) {
                const gpuhist_nd_axis &ax = m.axis[a];
                int good;
                const uint32_t k = gpuhist_fe_key_f32(c[2u * j + a], ax.map.lower_f,
                                                      ax.map.scale_f, ax.map.bins, ax.cert.t_lo_f,
                                                      ax.cert.t_hi_f, 1, &good);
                ok = ok && good;
                cur = cur * ax.map.bins + k;
            }
            key[j] = cur; /* a joint bin (< total): its own key */
        }
        if (!ok) {
#pragma unroll
            for (uint32_t j = 0; j < VE; ++j)
                key[j] = tp_key(p, general(c[2u * j], c[2u * j + 1u]));
        }
    }
    __device__ __forceinline__ uint32_t slot(const tp_params &p, uint64_t k) const
    {
        const float *xy = (const float *)p.k.data + 2u * k;
        return general(xy[0], xy[1]);
    }
    static uint64_t body(const unsigned char *data, uint64_t b, uint64_t e, uint64_t *nvec)
    {
        return gh_vec16_body<uint2>(data, b, e, nvec);
    }
};

/* N-D points of coordinate type T in any layout (columns, any alignment, any dimensions): one
 * point per unit, its key computed as it is loaded (the coordinates gathered at m's bases and
 * strides, point `first` + k of m for element k). Correct for every chunk, not fast. */
template <typename T> struct tp_src_nd_points {
    gpuhist_nd_map m;
    uint64_t first;
    typedef uint4 unit; /* 16 bytes: one unit per element, no loose head or tail */
    static constexpr uint32_t VE = 1u;
    static constexpr uint32_t ITEMS = 8u;
    static constexpr bool WHOLE = true;
    static constexpr bool CAN_WIDE = true;
    __device__ __forceinline__ uint32_t slot(const tp_params &, uint64_t k) const
    {
        uint32_t cur = 0;
        for (uint32_t a = 0; a < m.dims; ++a) {
            const gpuhist_nd_axis &ax = m.axis[a];
            T x;
            memcpy(&x, ax.base + (first + k) * ax.stride, sizeof x);
            cur = gpuhist_nd_combine(cur, nd_axis_slot<T>(ax, x), ax.map.bins);
        }
        return tp_nd_slot(cur, m.total);
    }
    __device__ __forceinline__ uint4 load(const tp_params &p, uint64_t vbegin, uint64_t v) const
    {
        return make_uint4(tp_key(p, slot(p, vbegin + v)), 0u, 0u, 0u);
    }
    __device__ __forceinline__ void keys(const tp_params &, const uint4 v,
                                         uint32_t (&key)[VE]) const
    {
        key[0] = v.x;
    }
    static uint64_t body(const unsigned char *, uint64_t b, uint64_t e, uint64_t *nvec)
    {
        *nvec = e - b;
        return b;
    }
};

template <class SRC, bool WIDE>
__global__ void __launch_bounds__(TP_THREADS, 2)
    tp_partition(const __grid_constant__ tp_params p, const __grid_constant__ SRC src,
                 const uint64_t vbegin, const uint64_t nvec, unsigned long long *__restrict__ out)
{
    /* buckets, 3 outlier slots, "not a sample": <= 28 + 4 paged, <= 256 + 4 wide */
    constexpr uint32_t DIGITS = WIDE ? TP_WIDE_DIGITS : 32u;
    constexpr uint32_t NDST = WIDE ? TP_MAX_BUCKETS : TP_MAX_PAGED;
    constexpr uint32_t ITEMS = SRC::ITEMS;
    constexpr uint32_t TILE = TP_THREADS * ITEMS;
    static_assert(TILE <= TP_PAGE, "a tile's run of one bucket needs at most one fresh page");
    constexpr uint32_t VE = SRC::VE;
    constexpr uint32_t NV = ITEMS / VE;           /* vectors per thread per tile */
    constexpr uint32_t TV = TP_THREADS * NV;         /* vectors per tile */
    static_assert(NV * VE == ITEMS, "whole vectors per thread");
    /* The tile's bin keys in bucket order, then a word per thread where its other keys go. */
    __shared__ uint32_t s_stage[TILE + TP_THREADS];
    __shared__ uint32_t s_cnt[2][DIGITS]; /* the tile's samples per digit (by parity) */
    __shared__ uint32_t s_sink[32];       /* "not a sample" atomics: a word per lane, never read */
    __shared__ tp_dest s_dst[NDST];
    /* wide mode: each warp's exclusive scan of the tile's digit counts */
    __shared__ uint32_t s_first[WIDE ? TP_THREADS / 32u : 1u][WIDE ? DIGITS : 1u];
    __shared__ uint32_t s_next_page, s_run_key, s_run_n;
    __shared__ uint32_t s_ref[2];  /* thread 0's first key of the last two tiles (by parity) */
    __shared__ uint32_t s_hits[2]; /* samples of the tile equal to its reference (by parity) */

    const uint32_t tid = threadIdx.x;
    const uint32_t nb = p.buckets;
    if (tid == 0u) {
        s_next_page = blockIdx.x * p.pool;
        s_run_n = 0u;
        s_run_key = 0u;
    }

    /* The unaligned head and tail (block 0): counted straight into out. */
    gh_vec16_loose<typename SRC::unit, false>(p.k, vbegin, nvec, [&](uint64_t k, bool) {
        atomicAdd(tp_counter(p, out, src.slot(p, k)), 1ull);
    });

    /* Thread d < nb owns bucket d's open page: the arena index of its next free key and how
     * many keys are left in it. Thread nb + o counts outlier slot bins + o. Thread 0 keeps the
     * run (s_run_key, s_run_n) of the reference-key hits (constant data: nothing staged or
     * written; in shared memory, as registers are scarce). */
    uint32_t off = 0, room = 0, outliers = 0;
    /* 32-bit tile indices (registers are scarce): a segment has at most 2^28 samples. */
    const uint32_t ntiles = (uint32_t)((nvec + TV - 1u) / TV);
    /* Register double buffer: tile t + grid is loaded while tile t is ranked and written. */
    uint4 next[NV];
    auto load_tile = [&](uint32_t t) {
#pragma unroll
        for (uint32_t u = 0; u < NV; ++u) {
            const uint64_t v = (uint64_t)t * TV + u * TP_THREADS + tid;
            next[u] = v < nvec ? src.load(p, vbegin, v) : make_uint4(0u, 0u, 0u, 0u);
        }
    };
    if (blockIdx.x < ntiles)
        load_tile(blockIdx.x);
    /* Keys of tile t with the samples equal to `ref` (thread 0's first key of the block's tile
     * before) taken out: they become "not a sample" and are only counted (warp sums into
     * s_hits[par]), so hot90 data writes and re-reads only its other 10%. Each key's rank
     * within its digit is a shared atomic's answer (s_cnt[par]); "not a sample" counts on the
     * lane's own sink word, so hot90's excluded majority costs no serialised same-address
     * atomics. Returns whether the whole tile is `ref` (constant data, from the second tile
     * on): the barrier that ends the tile before is a __syncthreads_and, so the test needs no
     * barrier of its own, and such a tile skips the rest (its counts stay zero). */
    uint32_t keys[ITEMS], rank[ITEMS];
    const uint32_t lane = tid & 31u;
    auto keys_of = [&](uint32_t t, uint32_t ref, uint32_t par) -> bool {
        const bool full = (uint64_t)(t + 1u) * TV <= nvec;
        uint4 cur[NV];
#pragma unroll
        for (uint32_t u = 0; u < NV; ++u)
            cur[u] = next[u];
        if (t + gridDim.x < ntiles)
            load_tile(t + gridDim.x);
        uint32_t diff = 0, hits = 0;
#pragma unroll
        for (uint32_t u = 0; u < NV; ++u) {
            const bool valid = full || (uint64_t)t * TV + u * TP_THREADS + tid < nvec;
            uint32_t key[VE];
            /* every lane maps its whole vector (past the end: zeros, then dropped) */
            if constexpr (SRC::WHOLE)
                src.keys(p, cur[u], key);
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e) {
                uint32_t k = TP_NOT_A_SAMPLE(nb);
                if constexpr (SRC::WHOLE)
                    k = valid ? key[e] : k;
                else if (valid)
                    k = src.key(p, cur[u], e);
                if (u == 0u && e == 0u && tid == 0u) /* the next tile's reference */
                    s_ref[par ^ 1u] = k == TP_NOT_A_SAMPLE(nb) ? TP_NO_BUCKET : k;
                diff |= k ^ ref;
                hits += k == ref ? 1u : 0u;
                const uint32_t kr = k == ref ? TP_NOT_A_SAMPLE(nb) : k;
                keys[u * VE + e] = kr;
                uint32_t *const counter =
                    kr != TP_NOT_A_SAMPLE(nb) ? &s_cnt[par][kr >> 16] : &s_sink[lane];
                rank[u * VE + e] = atomicAdd(counter, 1u);
            }
        }
        hits = __reduce_add_sync(0xffffffffu, hits);
        if ((tid & 31u) == 0u && hits != 0u)
            atomicAdd(&s_hits[par], hits);
        return full && diff == 0u;
    };
    /* Thread d < nb takes the pages of bucket d's run in the tile (ranks [first, first + c)):
     * the open page's rest, then a fresh page. Threads nb .. nb + 2 count the outliers. */
    auto take_pages = [&](uint32_t first, uint32_t c) {
        if (tid >= nb) {
            outliers += c;
        } else if constexpr (WIDE) {
            /* Reserve the run in the bucket's region (sized by tp_digits' count or estimate);
             * the keys of a reservation that passes the region's end (a1) are counted straight
             * into out by copy_out. */
            tp_dest dst;
            dst.a0 = (c ? atomicAdd(p.cursor + tid, c) : 0u) - first;
            dst.lim = 0xFFFFFFFFu;
            dst.a1 = p.region_end[tid];
            dst.unused = 0u;
            s_dst[tid] = dst;
        } else {
            const uint32_t head = c < room ? c : room;
            tp_dest dst;
            dst.a0 = off - first;
            dst.lim = first + head;
            dst.a1 = 0u;
            dst.unused = 0u;
            if (c > room) {
                /* The rest goes to a fresh page of the block's pool (c <= TILE <= TP_PAGE).
                 * The pool cannot run out: the block takes at most ceil(its samples of the
                 * bucket / TP_PAGE) pages per bucket (see tp_pool). */
                const uint32_t rest = c - room;
                const uint32_t pg = atomicAdd(&s_next_page, 1u);
                p.page_bucket[pg] = tid;
                dst.a1 = pg * TP_PAGE - (first + head);
                off = pg * TP_PAGE + rest;
                room = TP_PAGE - rest;
            } else {
                off += c;
                room -= c;
            }
            s_dst[tid] = dst;
        }
    };
    /* After the barrier that completes the tile's counts: every warp scans them itself (so
     * no barrier waits for one warp's scan), warp 0 also takes the pages, and every thread
     * stages its bin keys in bucket order. Returns how many keys the tile has of bins. */
    auto stage_tile = [&](uint32_t par) -> uint32_t {
        if constexpr (WIDE) {
            /* Each warp scans the DIGITS counts itself into its own row (lane l: digits
             * [9 l, 9 l + 9), conflict-free as 9 is odd), read twice to spare registers. */
            uint32_t *const row = s_first[tid >> 5];
            uint32_t sum = 0;
#pragma unroll
            for (uint32_t j = 0; j < TP_WIDE_SLICE; ++j) {
                const uint32_t d = lane * TP_WIDE_SLICE + j;
                sum += d < DIGITS ? s_cnt[par][d] : 0u;
            }
            uint32_t incl = sum;
#pragma unroll
            for (uint32_t o = 1; o < 32u; o <<= 1) {
                const uint32_t v = __shfl_up_sync(0xffffffffu, incl, o);
                incl += lane >= o ? v : 0u;
            }
            uint32_t at = incl - sum;
#pragma unroll
            for (uint32_t j = 0; j < TP_WIDE_SLICE; ++j) {
                const uint32_t d = lane * TP_WIDE_SLICE + j;
                if (d < DIGITS) {
                    row[d] = at;
                    at += s_cnt[par][d];
                }
            }
            __syncwarp();
            if (tid < nb + 3u)
                take_pages(row[tid], s_cnt[par][tid]);
#pragma unroll
            for (uint32_t i = 0; i < ITEMS; ++i) {
                const uint32_t pos = row[keys[i] >> 16] + rank[i];
                s_stage[keys[i] < p.bins ? pos : TILE + tid] = keys[i];
            }
            return row[nb];
        }
        const uint32_t c = s_cnt[par][lane];
        uint32_t incl = c;
#pragma unroll
        for (uint32_t o = 1; o < 32u; o <<= 1) {
            const uint32_t v = __shfl_up_sync(0xffffffffu, incl, o);
            incl += lane >= o ? v : 0u;
        }
        const uint32_t first = incl - c;
        if (tid < nb + 3u)
            take_pages(first, c);
#pragma unroll
        for (uint32_t i = 0; i < ITEMS; ++i) {
            const uint32_t at = __shfl_sync(0xffffffffu, first, keys[i] >> 16) + rank[i];
            s_stage[keys[i] < p.bins ? at : TILE + tid] = keys[i];
        }
        return __shfl_sync(0xffffffffu, first, nb);
    };
    /* After the barrier that completes the stage: warp 0 clears the tile's counts (read by
     * every warp before that barrier; used again by the tile after next) and every thread
     * copies the bin keys out in order, as contiguous runs of the pages. */
    auto copy_out = [&](uint32_t par, uint32_t nin) {
        for (uint32_t d = tid; d < DIGITS; d += TP_THREADS)
            s_cnt[par][d] = 0u;
        for (uint32_t j = tid; j < nin; j += TP_THREADS) {
            const uint32_t key = s_stage[j];
            const tp_dest dst = s_dst[key >> 16];
            if constexpr (WIDE) {
                /* past the region (an estimate fell short): the key is its slot */
                const uint32_t at = dst.a0 + j;
                if (__builtin_expect(at < dst.a1, 1))
                    p.arena[at] = (uint16_t)key;
                else
                    atomicAdd(out + key, 1ull);
            } else {
                p.arena[(j < dst.lim ? dst.a0 : dst.a1) + j] = (uint16_t)key;
            }
        }
    };
    for (uint32_t d = tid; d < 2u * DIGITS; d += TP_THREADS)
        s_cnt[d / DIGITS][d % DIGITS] = 0u;
    if (tid == 0u) {
        s_ref[0] = TP_NO_BUCKET; /* (keys are < 2^21: no key equals it) */
        s_hits[0] = s_hits[1] = 0u;
    }
    __syncthreads();
    uint32_t par = 0; /* s_ref[par]: thread 0's first key of the tile before */
    for (uint32_t t = blockIdx.x; t < ntiles; t += gridDim.x, par ^= 1u) {
        const uint32_t ref = s_ref[par];
        const bool same = keys_of(t, ref, par);
        /* Ends the tile before (this one overwrites its stage and s_dst), completes this one's
         * counts and decides whether it is all `ref`. */
        const bool one = __syncthreads_and(same) != 0;
        if (tid == 0u) {
            /* The tile's samples equal to ref: a run of one key, one atomic per run. */
            const uint32_t n = s_hits[par];
            s_hits[par] = 0u;
            if (n != 0u) {
                if (s_run_n != 0u && s_run_key != ref) {
                    atomicAdd(tp_counter(p, out, tp_slot_of_key(p, s_run_key)),
                              (unsigned long long)s_run_n);
                    s_run_n = 0u;
                }
                s_run_key = ref;
                s_run_n += n;
            }
        }
        if (!one) {
            const uint32_t nin = stage_tile(par);
            __syncthreads();
            copy_out(par, nin);
        }
    }
    __syncthreads(); /* the last copy-out has read the stage and s_dst */
    if (tid == 0u && s_run_n != 0u)
        atomicAdd(tp_counter(p, out, tp_slot_of_key(p, s_run_key)), (unsigned long long)s_run_n);

    /* Fill the open pages with key 0 and take as many off each bucket's key 0 (wide mode:
     * tp_seal does it per bucket). */
    if (WIDE) {
        if (tid >= nb && tid < nb + 3u && outliers)
            atomicAdd(p.outliers + (tid - nb), (unsigned long long)outliers);
        return;
    }
    if (tid < nb) {
        s_dst[tid].a0 = off;
        s_dst[tid].lim = room;
        if (room)
            atomicAdd(out + (uint64_t)tid * 65536u, 0ull - room);
    } else if (tid < nb + 3u && outliers) {
        atomicAdd(p.outliers + (tid - nb), (unsigned long long)outliers);
    }
    __syncthreads();
    for (uint32_t d = 0; d < nb; ++d)
        for (uint32_t j = tid; j < s_dst[d].lim; j += TP_THREADS)
            p.arena[s_dst[d].a0 + j] = 0u;
}

/* Vectors of the sampled chunks: chunks of TP_SAMPLE_CHUNK vectors, chunk 0, stride, 2 stride,
 * ... of a body of nvec vectors (all of them with stride 1). */
__host__ __device__ static inline uint64_t tp_sampled_vectors(uint64_t nvec, uint32_t stride)
{
    const uint64_t span = (uint64_t)TP_SAMPLE_CHUNK * stride;
    const uint64_t full = nvec / span, rest = nvec % span;
    return full * TP_SAMPLE_CHUNK + (rest < TP_SAMPLE_CHUNK ? rest : TP_SAMPLE_CHUNK);
}

/* Wide mode, before pass 1: the samples per digit (bucket or outlier) of the segment's vector
 * body, or of its sampled chunks (stride > 1: one chunk of TP_SAMPLE_CHUNK vectors in stride),
 * into total[], which sizes each bucket's region. Per-warp counters in shared memory; a thread
 * adds runs of one digit at once (constant data: one atomic per thread). */
template <class SRC>
__global__ void __launch_bounds__(256)
    tp_digits(const __grid_constant__ tp_params p, const __grid_constant__ SRC src,
              const uint64_t vbegin, const uint64_t nvec, const uint32_t sample_stride,
              uint32_t *__restrict__ total)
{
    constexpr uint32_t VE = SRC::VE;
    __shared__ uint32_t s_n[8][TP_WIDE_DIGITS];
    const uint32_t tid = threadIdx.x;
    for (uint32_t d = tid; d < 8u * TP_WIDE_DIGITS; d += 256u)
        s_n[d / TP_WIDE_DIGITS][d % TP_WIDE_DIGITS] = 0u;
    __syncthreads();
    uint32_t *const mine = s_n[tid >> 5];
    uint32_t last = 0, run = 0;
    /* TP_DIGITS_U vectors per thread loaded before any is mapped: enough bytes in flight to
     * stream at the read ceiling */
    const uint64_t stride = (uint64_t)gridDim.x * 256u;
    const uint64_t ns = tp_sampled_vectors(nvec, sample_stride);
    /* sampled vector i: chunk i / TP_SAMPLE_CHUNK of the sample, sample_stride chunks apart */
    auto vector_of = [&](uint64_t i) {
        return (i / TP_SAMPLE_CHUNK) * TP_SAMPLE_CHUNK * sample_stride + i % TP_SAMPLE_CHUNK;
    };
    for (uint64_t i0 = (uint64_t)blockIdx.x * 256u + tid; i0 < ns; i0 += stride * TP_DIGITS_U) {
        uint4 v[TP_DIGITS_U];
#pragma unroll
        for (uint32_t u = 0; u < TP_DIGITS_U; ++u) {
            const uint64_t i = i0 + u * stride;
            v[u] = i < ns ? src.load(p, vbegin, vector_of(i)) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (uint32_t u = 0; u < TP_DIGITS_U; ++u) {
            if (i0 + u * stride >= ns)
                break;
            uint32_t key[VE];
            src.keys(p, v[u], key); /* as pass 1 */
#pragma unroll
            for (uint32_t e = 0; e < VE; ++e) {
                const uint32_t d = key[e] >> 16;
                if (d != last) {
                    if (run)
                        atomicAdd(mine + last, run);
                    last = d;
                    run = 0;
                }
                ++run;
            }
        }
    }
    if (run)
        atomicAdd(mine + last, run);
    __syncthreads();
    for (uint32_t d = tid; d < TP_WIDE_DIGITS; d += 256u) {
        uint32_t n = 0;
#pragma unroll
        for (uint32_t r = 0; r < 8u; ++r)
            n += s_n[r][d];
        if (n)
            atomicAdd(total + d, n);
    }
}

/* Wide mode: bucket d's region is pages [start[d], end[d] / TP_PAGE) of the arena's npages,
 * buckets in order; cursor[d] its first free key. Counted (sampled == body): ceil(total[d] /
 * TP_PAGE) pages, room for every key. Sampled: the estimate total[d] * body / sampled plus six
 * of its standard deviations (sampling as Poisson: sqrt(estimate * body / sampled)) and two
 * pages; keys past a region are counted by pass 1 with global atomics, so a short estimate
 * (skewed chunks, or the arena's end) costs time, never a count. squeeze (a test knob) halves
 * every region, so that every input takes that path. */
__global__ void tp_regions(const uint32_t *__restrict__ total, const uint32_t nb,
                           const uint64_t body, const uint64_t sampled, const uint32_t npages,
                           const int squeeze, uint32_t *__restrict__ start,
                           uint32_t *__restrict__ end, uint32_t *__restrict__ cursor)
{
    if (threadIdx.x != 0u)
        return;
    uint32_t at = 0;
    for (uint32_t d = 0; d < nb; ++d) {
        uint64_t keys = total[d];
        if (sampled < body && keys) {
            const double f = (double)body / (double)sampled;
            const double est = (double)keys * f;
            keys = (uint64_t)(est + 6.0 * sqrt(est * f)) + 2u * TP_PAGE;
        }
        uint64_t pages = (keys + TP_PAGE - 1u) / TP_PAGE;
        if (squeeze)
            pages /= 2u;
        if (pages > npages - at)
            pages = npages - at;
        start[d] = at;
        cursor[d] = at * TP_PAGE;
        at += (uint32_t)pages;
        end[d] = at * TP_PAGE;
    }
}

/* Wide mode, after pass 1 (one block per bucket): fill the rest of the bucket's last used page
 * with key 0, take as many off the bucket's key 0 (64-bit counters modulo 2^64: exact), and
 * mark its used pages (the region's unused pages, left by reference-key hits, stay
 * TP_NO_BUCKET). */
__global__ void __launch_bounds__(256)
    tp_seal(const uint32_t *__restrict__ start, const uint32_t *__restrict__ end,
            const uint32_t *__restrict__ cursor,
            uint16_t *__restrict__ arena, uint32_t *__restrict__ page_bucket,
            unsigned long long *__restrict__ out)
{
    const uint32_t d = blockIdx.x, tid = threadIdx.x;
    const uint32_t last = cursor[d] < end[d] ? cursor[d] : end[d]; /* past it: counted */
    const uint32_t used = last - start[d] * TP_PAGE;
    const uint32_t pages = (used + TP_PAGE - 1u) / TP_PAGE;
    const uint32_t pad = pages * TP_PAGE - used;
    for (uint32_t j = tid; j < pad; j += 256u)
        arena[last + j] = 0u;
    if (tid == 0u && pad)
        atomicAdd(out + (uint64_t)d * 65536u, 0ull - pad);
    for (uint32_t i = tid; i < pages; i += 256u)
        page_bucket[start[d] + i] = d;
}

/* Between the passes: list the used pages bucket by bucket (lists[d * npages + i], list_len[d]),
 * one thread per page, one atomic per warp and bucket (__match_any_sync: on constant data every
 * page has the same bucket). The order within a bucket does not matter. */
__global__ void __launch_bounds__(256)
    tp_group(const uint32_t *__restrict__ page_bucket, const uint32_t npages,
             uint32_t *__restrict__ lists, uint32_t *__restrict__ list_len)
{
    const uint32_t pg = blockIdx.x * 256u + threadIdx.x;
    const uint32_t d = pg < npages ? page_bucket[pg] : TP_NO_BUCKET;
    const uint32_t peers = __match_any_sync(0xffffffffu, d);
    if (d == TP_NO_BUCKET)
        return;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t leader = __ffs(peers) - 1u;
    uint32_t base = 0;
    if (lane == leader)
        base = atomicAdd(list_len + d, (uint32_t)__popc(peers));
    base = __shfl_sync(peers, base, leader);
    lists[(uint64_t)d * npages + base + __popc(peers & ((1u << lane) - 1u))] = pg;
}

/* Pass 2: one block per SM; block b counts pages [b P / grid, (b + 1) P / grid) of the
 * bucket-by-bucket page order, one bucket part at a time. */
__global__ void __launch_bounds__(P16_THREADS, 1)
    tp_count(const uint16_t *__restrict__ arena, const uint32_t *__restrict__ lists,
             const uint32_t *__restrict__ list_len, const uint32_t npages, const uint32_t bins,
             const uint32_t nb, unsigned long long *__restrict__ out)
{
    extern __shared__ __align__(16) uint32_t tp_w[];
    __shared__ uint32_t s_start[TP_MAX_BUCKETS + 1u];
    const uint32_t tid = threadIdx.x;
    if (tid == 0u) {
        uint32_t s = 0;
        for (uint32_t d = 0; d < nb; ++d) {
            s_start[d] = s;
            s += list_len[d];
        }
        s_start[nb] = s;
    }
    __syncthreads();
    const uint64_t P = s_start[nb];
    const uint32_t r0 = (uint32_t)(P * blockIdx.x / gridDim.x);
    const uint32_t r1 = (uint32_t)(P * (blockIdx.x + 1u) / gridDim.x);
    const uint4 *pages = (const uint4 *)arena;
    for (uint32_t d = 0; d < nb; ++d) {
        const uint32_t lo = r0 > s_start[d] ? r0 : s_start[d];
        const uint32_t hi = r1 < s_start[d + 1u] ? r1 : s_start[d + 1u];
        if (lo >= hi)
            continue;
        const uint32_t nkeys = bins - d * 65536u < 65536u ? bins - d * 65536u : 65536u;
        p16_engine eng;
        eng.init(tp_w, out + (uint64_t)d * 65536u, nkeys, tid);
        eng.zero(tid);
        __syncthreads();
        const uint32_t *list = lists + (uint64_t)d * npages + (lo - s_start[d]);
        eng.run<TP_COUNT_U, 8u>(
            0, (uint64_t)P16_THREADS * TP_COUNT_U, (uint64_t)(hi - lo) * TP_PAGE_VEC, tid,
            [&](uint64_t i) {
                const uint32_t pg = list[i / TP_PAGE_VEC];
                return __ldcs(pages + (uint64_t)pg * TP_PAGE_VEC + (i % TP_PAGE_VEC));
            },
            [](const uint4 v, uint32_t(&key)[8]) {
                const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (uint32_t e = 0; e < 4u; ++e) {
                    key[2u * e] = w[e] & 0xffffu;
                    key[2u * e + 1u] = w[e] >> 16;
                }
            });
        __syncthreads();
        eng.add_to_out(tid);
        __syncthreads(); /* before the next bucket zeroes the counters */
    }
}

/* ---- host ----------------------------------------------------------------------------------- */

static uint32_t tp_buckets(uint32_t bins)
{
    return (uint32_t)(((uint64_t)bins + 65535u) / 65536u);
}

static int tp_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    const uint32_t nb = tp_buckets(plan->bins);
    const uint32_t max_nb = gpuhist_dtype_size(plan->dtype) > 1u ? TP_MAX_BUCKETS : TP_MAX_PAGED;
    return plan->channels == 1 && gh_counters_ok(plan) != 0 && nb >= 1u && nb <= max_nb &&
           p16_smem(65536u) <= gpuhist_cuda_smem_optin(ctx);
}

/* Pages per pass-1 block: a block ranks at most ceil(ntiles / grid) tiles of `tile` samples and
 * takes, per bucket, ceil(its samples of the bucket / TP_PAGE) pages: at most
 * floor(samples / TP_PAGE) + buckets in all. */
static uint32_t tp_pool(uint64_t ntiles, uint32_t grid, uint32_t tile, uint32_t nb)
{
    const uint64_t tiles = (ntiles + grid - 1u) / grid;
    return (uint32_t)(tiles * tile / TP_PAGE + nb);
}

/* Wide mode: pages of a segment of `samples`: counted, every bucket's region rounds up by < 1
 * page; estimated (tp_regions), a bucket's margin is two pages and six standard deviations (for
 * 256 buckets of 2^28 samples sampled one in 16, about 24 pages in all). */
static uint32_t tp_wide_pages(uint64_t samples, uint32_t nb)
{
    const uint64_t pages = (samples + TP_PAGE - 1u) / TP_PAGE;
    return (uint32_t)(pages + pages / 16u + 4u * nb);
}

/* Wide mode: tp_digits' sample stride for a body of nvec vectors (1: count every vector).
 * Testing knobs: GPUHIST_CUDA_TWO_PASS_SAMPLE=S samples one chunk in S whatever the size;
 * GPUHIST_CUDA_TWO_PASS_SQUEEZE=1 halves every region (tp_regions), so keys overflow. */
static uint32_t tp_sample_stride(uint64_t nvec)
{
    const char *env = getenv("GPUHIST_CUDA_TWO_PASS_SAMPLE");
    if (env && *env) {
        const unsigned long v = strtoul(env, NULL, 10);
        if (v >= 1u && v <= 1024u)
            return (uint32_t)v;
    }
    const uint64_t chunks = (nvec + TP_SAMPLE_CHUNK - 1u) / TP_SAMPLE_CHUNK;
    return chunks / TP_SAMPLE_STRIDE >= TP_SAMPLE_MIN_CHUNKS ? TP_SAMPLE_STRIDE : 1u;
}

static int tp_squeeze(void)
{
    const char *env = getenv("GPUHIST_CUDA_TWO_PASS_SQUEEZE");
    return env && strcmp(env, "1") == 0;
}

struct tp_layout {
    uint32_t npages;
    /* byte offsets into the scratch, and its size; digits/starts/ends/cursors: wide mode */
    size_t page_bucket, list_len, digits, starts, ends, cursors, lists, arena, total;
};

static tp_layout tp_layout_for(uint32_t npages, uint32_t nb)
{
    tp_layout l;
    l.npages = npages;
    l.page_bucket = 0;
    l.list_len = ((size_t)npages * 4u + 255u) & ~(size_t)255u;
    l.digits = l.list_len + TP_MAX_BUCKETS * 4u;
    l.starts = l.digits + ((TP_WIDE_DIGITS * 4u + 255u) & ~255u);
    l.ends = l.starts + TP_MAX_BUCKETS * 4u;
    l.cursors = l.ends + TP_MAX_BUCKETS * 4u;
    l.lists = l.cursors + TP_MAX_BUCKETS * 4u;
    l.arena = l.lists + (((size_t)nb * npages * 4u + 255u) & ~(size_t)255u);
    l.total = l.arena + (size_t)npages * TP_PAGE * 2u;
    return l;
}

/* Both passes over job->elements elements of the key source src (the job's data where the
 * source reads it), added into out. */
template <class SRC>
static gpuhist_status tp_launch(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, const SRC &src,
                                tp_params p, unsigned long long *out)
{
    constexpr uint32_t TILE = TP_THREADS * SRC::ITEMS;
    constexpr uint64_t VE = SRC::VE;
    if (!p.outliers)
        p.outliers = out + p.bins;
    const bool wide = p.buckets > TP_MAX_PAGED;
    auto part = wide ? tp_partition<SRC, SRC::CAN_WIDE> : tp_partition<SRC, false>;
    cudaError_t err;
    const int grid1 =
        gh_grid(job, part, GH_LP_TWO_PASS_PARTITION, 0, job->elements / SRC::ITEMS, &err);
    if (grid1 == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-two-pass partition configuration");
    const size_t smem2 = p16_smem(65536u);
    const int grid2 = gh_launch_grid(gh_launch_policy_of(GH_LP_TWO_PASS_COUNT),
                                     (const void *)tp_count, P16_THREADS, smem2, job->device,
                                     job->sm_count, 0, 0, &err);
    if (grid2 == 0)
        return gpuhist_cuda_check(ctx, err, "cuda-two-pass count configuration");

    /* The biggest segment whose scratch can be had. Testing knob: GPUHIST_CUDA_TWO_PASS_SEGMENT
     * (samples) forces smaller segments, i.e. several pass pairs per job. */
    uint64_t seg = TP_SEGMENT_MAX;
    const char *env = getenv("GPUHIST_CUDA_TWO_PASS_SEGMENT");
    if (env && *env) {
        const unsigned long long v = strtoull(env, NULL, 10);
        if (v >= 1u && v < seg)
            seg = v;
    }
    if (job->elements < seg)
        seg = job->elements;
    if (seg < 1u)
        seg = 1u;
    void *scr = NULL;
    tp_layout lay;
    for (;;) {
        /* a segment's vector body has at most seg / VE vectors: ceil(.. / TILE * VE) tiles */
        const uint64_t ntiles = (seg + TILE - 1u) / TILE;
        lay = tp_layout_for(wide ? tp_wide_pages(seg, p.buckets)
                                 : tp_pool(ntiles, (uint32_t)grid1, TILE, p.buckets) *
                                       (uint32_t)grid1,
                            p.buckets);
        if (gpuhist_cuda_scratch(ctx, lay.total, &scr) == GPUHIST_OK)
            break;
        if (seg <= TP_SEGMENT_MIN)
            return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                "cuda-two-pass: cannot allocate %zu bytes of device scratch",
                                lay.total);
        seg /= 2u;
    }
    unsigned char *base = (unsigned char *)scr;
    p.page_bucket = (uint32_t *)(base + lay.page_bucket);
    p.arena = (uint16_t *)(base + lay.arena);
    uint32_t *list_len = (uint32_t *)(base + lay.list_len);
    uint32_t *lists = (uint32_t *)(base + lay.lists);
    uint32_t *digits = (uint32_t *)(base + lay.digits);
    uint32_t *starts = (uint32_t *)(base + lay.starts);
    uint32_t *ends = (uint32_t *)(base + lay.ends);
    p.cursor = (uint32_t *)(base + lay.cursors);
    p.region_end = ends;
    const int squeeze = tp_squeeze();

    return gh_segments_max(job->elements, seg, [&](uint64_t b, uint64_t e) -> gpuhist_status {
        uint64_t nvec;
        const uint64_t vb = SRC::body(job->data, b, e, &nvec);
        const uint64_t ntiles = (nvec * VE + TILE - 1u) / TILE;
        tp_params q = p;
        q.k.begin = b;
        q.k.end = e;
        q.pool = tp_pool(ntiles, (uint32_t)grid1, TILE, p.buckets);
        const uint32_t npages = wide ? tp_wide_pages(nvec * VE, p.buckets)
                                     : q.pool * (uint32_t)grid1; /* <= lay.npages */
        GPUHIST_CUDA_TRY(ctx,
                         cudaMemsetAsync(p.page_bucket, 0xff, (size_t)npages * 4u, job->stream),
                         "cuda-two-pass: clear the page table");
        GPUHIST_CUDA_TRY(ctx, cudaMemsetAsync(list_len, 0, TP_MAX_BUCKETS * 4u, job->stream),
                         "cuda-two-pass: clear the list lengths");
        if (wide) {
            /* Wide mode: each bucket gets a region of the arena sized by a count of its samples
             * (a sample of the body's chunks when it is large: a sixteenth of a read instead
             * of a whole one), and pass 1 reserves every run in it; tp_seal pads the last page. */
            GPUHIST_CUDA_TRY(ctx, cudaMemsetAsync(digits, 0, TP_WIDE_DIGITS * 4u, job->stream),
                             "cuda-two-pass: clear the digit counts");
            const uint32_t stride = tp_sample_stride(nvec);
            const uint64_t ns = tp_sampled_vectors(nvec, stride);
            const int dgrid = gh_fixed_grid(GH_LP_COUNTER_PASS, job->sm_count, ns);
            tp_digits<SRC><<<dgrid, 256, 0, job->stream>>>(q, src, vb, nvec, stride, digits);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass digits kernel");
            tp_regions<<<1, 32, 0, job->stream>>>(digits, p.buckets, nvec * VE, ns * VE, npages,
                                                  squeeze, starts, ends, q.cursor);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass regions kernel");
        }
        part<<<grid1, TP_THREADS, 0, job->stream>>>(q, src, vb, nvec, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass partition kernel");
        if (wide) {
            tp_seal<<<p.buckets, 256, 0, job->stream>>>(starts, ends, q.cursor, p.arena,
                                                        p.page_bucket, out);
            GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass seal kernel");
        }
        const int ggrid = gh_fixed_grid(GH_LP_FOLD, job->sm_count, npages);
        tp_group<<<ggrid, GH_BLOCK, 0, job->stream>>>(p.page_bucket, npages, lists, list_len);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass group kernel");
        tp_count<<<grid2, P16_THREADS, smem2, job->stream>>>(p.arena, lists, list_len, npages,
                                                             p.bins, p.buckets, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-two-pass count kernel");
        return GPUHIST_OK;
    });
}

static gpuhist_status tp_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    if (!tp_supports(ctx, plan))
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-two-pass: one channel and at most %u x 65536 bins (%u for "
                            "8-bit samples)",
                            TP_MAX_BUCKETS, TP_MAX_PAGED);
    unsigned long long *out = (unsigned long long *)outv;
    tp_params p;
    memset(&p, 0, sizeof p);
    p.k = gh_make_params(plan, job);
    p.bins = plan->bins;
    p.buckets = tp_buckets(plan->bins);
    if (plan->dtype == GPUHIST_F32 && plan->map.kind == GH_KIND_EVEN) {
        gpuhist_fe_cert c; /* fast_even.h, cached per spec; refused: nothing passes */
        gpuhist_fe_cert_of(&plan->map, &c);
        p.lower_f = plan->map.lower_f;
        p.scale_f = plan->map.scale_f;
        p.t_lo = c.t_lo_f;
        p.t_hi = c.t_hi_f;
        p.cert_ok = c.ok;
        if (!c.ok && plan->bins > GPUHIST_FE_MAX_BINS_F32) {
            /* past 2^23 bins: the wide certificate, keys by a conversion floor */
            gpuhist_fe_cert_wide_of(&plan->map, &c);
            if (c.ok) {
                p.t_lo = c.t_lo_f;
                p.t_hi = c.t_hi_f;
                p.cert_ok = 1;
                if (c.direct)
                    return tp_launch(ctx, job, tp_src_samples<float, TP_MAP_F32_WIDE_DIRECT>(),
                                     p, out);
                return tp_launch(ctx, job, tp_src_samples<float, TP_MAP_F32_WIDE_CUT>(), p, out);
            }
        }
        if (c.direct)
            return tp_launch(ctx, job, tp_src_samples<float, TP_MAP_F32_DIRECT>(), p, out);
        return tp_launch(ctx, job, tp_src_samples<float, TP_MAP_F32_CUT>(), p, out);
    }
    const bool ids = plan->map.kind == GH_KIND_INTEGER;
    return gh_dispatch(plan, [&](auto tag, auto) -> gpuhist_status {
        typedef typename decltype(tag)::type T;
        if constexpr (std::is_integral<T>::value && sizeof(T) >= 2) {
            if (ids)
                return tp_launch(ctx, job, tp_src_samples<T, TP_MAP_IDS>(), p, out);
        }
        return tp_launch(ctx, job, tp_src_samples<T, TP_MAP_GENERIC>(), p, out);
    });
}

} // namespace

/* ---- N-D points (nd_packed16.cu's nd_count past the fused count's slots) --------------------- */

int gh_tp_nd_supports(const gpuhist_ctx *ctx, const gpuhist_nd_map *m)
{
    return (m->dtype == GPUHIST_F32 || m->dtype == GPUHIST_F64) && m->total >= 1u &&
           tp_buckets(m->total) <= TP_MAX_BUCKETS &&
           p16_smem(65536u) <= gpuhist_cuda_smem_optin(ctx);
}

gpuhist_status gh_tp_nd_count(gpuhist_ctx *ctx, const gpuhist_nd_map &m, uint64_t first,
                              uint64_t n, unsigned long long *out, unsigned long long *outliers)
{
    if (n == 0)
        return GPUHIST_OK;
    gpuhist_cuda_job job;
    memset(&job, 0, sizeof job);
    job.stream = (cudaStream_t)ctx->stream;
    job.device = ctx->device;
    job.sm_count = gpuhist_cuda_sm_count(ctx);
    job.smem_per_block_optin = gpuhist_cuda_smem_optin(ctx);
    job.pixels = job.elements = n;
    tp_params p;
    memset(&p, 0, sizeof p);
    p.bins = m.total;
    p.buckets = tp_buckets(m.total);
    p.outliers = outliers;
    const unsigned char *b0 = m.axis[0].base + first * m.axis[0].stride;
    p.k.data = b0; /* the pairs' point 0 (the other sources gather at m's bases) */
    p.k.end = n;
    p.k.channels = 1u;
    p.k.slots = m.total + 3u;
    p.k.counters = p.k.slots;
    /* f32 pairs of certified axes, interleaved and 8-byte aligned: two points per vector */
    bool pairs = m.dtype == GPUHIST_F32 && m.dims == 2u && m.axis[0].stride == 8u &&
                 m.axis[1].stride == 8u && m.axis[1].base == m.axis[0].base + 4 &&
                 ((uintptr_t)b0 & 7u) == 0u;
    for (uint32_t a = 0; pairs && a < 2u; ++a)
        pairs = m.axis[a].fast_f32 && m.axis[a].cert.ok;
    if (pairs) {
        tp_src_nd_pairs src;
        src.m = m;
        job.data = b0;
        return tp_launch(ctx, &job, src, p, out);
    }
    job.data = b0;
    if (m.dtype == GPUHIST_F32) {
        tp_src_nd_points<float> src;
        src.m = m;
        src.first = first;
        return tp_launch(ctx, &job, src, p, out);
    }
    if (m.dtype == GPUHIST_F64) {
        tp_src_nd_points<double> src;
        src.m = m;
        src.first = first;
        return tp_launch(ctx, &job, src, p, out);
    }
    return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                        "N-D: the two-pass count takes f32 and f64 points, not %s",
                        gpuhist_dtype_name(m.dtype));
}

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_two_pass = {
    "cuda-two-pass",
    GPUHIST_BACKEND_CUDA,
    "none (new): a one-digit radix partition (shared-atomic ranks) feeding 002's privatised "
    "shared histograms",
    "every dtype but f16/bf16, every bin spec with at most 256 x 65536 = 2^24 bins (8-bit "
    "samples: 28 x 65536); one channel",
    "pass 1 partitions the samples' slots by their high bits into pages of 16-bit keys, pass 2 "
    "counts each 65536-key bucket in packed 16-bit shared counters: no L2 atomic per sample",
    GPUHIST_CUDA_SLOT_DTYPES,
    GPUHIST_ALL_KINDS,
    TP_MAX_BUCKETS * 65536u,
    0,
    tp_supports,
    tp_run,
};
