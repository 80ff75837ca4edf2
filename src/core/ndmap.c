/*
 * ndmap.c - the map pass of N-D histograms (ndmap.h): points to u32 joint slots on CPU threads,
 * and the per-axis finite min/max of auto range.
 *
 * Mechanism: a chunk of points is cut into one contiguous share per thread; each thread walks its
 * share in blocks of a few thousand points and, for each block, runs the axes one after another
 * (one loop per axis and coordinate type, so the type dispatch is outside the loop and the block's
 * slots stay in the L1 cache): slot = slot * bins + bin of the axis, with "out" and "nan" kept as
 * two sentinels above every joint bin, and the last axis writes the encoding of ndmap.h. Every
 * axis's bin is binmap.h's one-axis slot, so an N-D axis bins exactly as a 1-D histogram does
 * (f32 EVEN axes through fast_even.h's certified estimate, which gives binmap.h's slot by its
 * proof, as the CPU strategies' fast paths do). The auto range's min/max pass is the CPU
 * backend's (src/cpu/minmax.c): interleaved points as pixels of one sample per axis, every auto
 * axis found in one pass over them; columns one by one.
 * Limits: host memory; the slots are deterministic, so any thread count gives the same slots.
 */
#define _POSIX_C_SOURCE 200809L
#include "ndmap.h"
#include "cpu/cpu_kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Points per thread block: slots and a block of each axis's coordinates stay in cache. */
#define ND_BLOCK 4096u
/* Default points per chunk of the map pass (16 MiB of slots). */
#define ND_CHUNK_DEFAULT ((uint64_t)1 << 22)
/* Fewest points per thread worth starting a thread for. */
#define ND_MIN_PER_THREAD 65536u

static uint64_t nd_chunk = 0;

void gpuhist_nd_set_chunk_points(uint64_t points) { nd_chunk = points; }
uint64_t gpuhist_nd_chunk_points(void) { return nd_chunk ? nd_chunk : ND_CHUNK_DEFAULT; }

/* ---- the one-axis map -------------------------------------------------------------------------- */

int gpuhist_nd_axis_map(const gpuhist_bin_spec *b, gpuhist_dtype dtype, const double *edges,
                        gpuhist_binmap *out)
{
    gpuhist_binmap *m = out;
    gpuhist_binmap_of(b, dtype, b->lower, b->upper, b->last_edge_inclusive, m);
    const double *own = b->kind == GPUHIST_BINS_EDGES ? b->edges : NULL;
    for (uint32_t i = 0; i <= b->bins; ++i) {
        double e = gpuhist_reported_edge(m, own, i);
        if (memcmp(&e, &edges[i], sizeof e) != 0)
            return 0;
    }
    return 1;
}

/* ---- the map pass ------------------------------------------------------------------------------ */

/* One loop per coordinate type: bin of each point's coordinate on this axis, combined into its
 * slot. first: the slot starts here; last: write the final encoding (ndmap.h). */
#define ND_AXIS_LOOP(NAME, CTYPE, SLOT)                                                          \
    static void NAME(const gpuhist_nd_axis *ax, uint64_t first, uint32_t n, uint32_t *slots,  \
                     int is_first, int is_last, uint32_t total)                                \
    {                                                                                          \
        const gpuhist_binmap *m = &ax->map;                                                    \
        const double *e = ax->edges;                                                           \
        const uint32_t bins = m->bins;                                                         \
        const unsigned char *p = ax->base + first * ax->stride;                                \
        (void)e;                                                                               \
        for (uint32_t k = 0; k < n; ++k, p += ax->stride) {                                    \
            CTYPE x;                                                                           \
            memcpy(&x, p, sizeof x);                                                           \
            uint32_t cur = gpuhist_nd_combine(is_first ? 0u : slots[k], SLOT, bins);          \
            if (is_last)                                                                       \
                cur = gpuhist_nd_encode(cur, total);                                           \
            slots[k] = cur;                                                                    \
        }                                                                                      \
    }

ND_AXIS_LOOP(axis_u8, uint8_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_i8, int8_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_u16, uint16_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_i16, int16_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_u32, uint32_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_i32, int32_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_u64, uint64_t, gpuhist_slot_u64(m, e, (gh_u64)x))
ND_AXIS_LOOP(axis_i64, int64_t, gpuhist_slot_i64(m, e, (gh_i64)x))
ND_AXIS_LOOP(axis_f32, float, gpuhist_slot_f32(m, e, x))
ND_AXIS_LOOP(axis_f64, double, gpuhist_slot_f64(m, e, x))
ND_AXIS_LOOP(axis_f32_even, float, gpuhist_fe_slot_f32(m, &ax->cert, x))
ND_AXIS_LOOP(axis_f16, uint16_t, gpuhist_slot_f32(m, e, gpuhist_f16_to_f32(x)))
ND_AXIS_LOOP(axis_bf16, uint16_t, gpuhist_slot_f32(m, e, gpuhist_bf16_to_f32(x)))

typedef void (*nd_axis_fn)(const gpuhist_nd_axis *, uint64_t, uint32_t, uint32_t *, int, int,
                           uint32_t);

static nd_axis_fn axis_fn(const gpuhist_nd_axis *ax, gpuhist_dtype d)
{
    if (ax->fast_f32)
        return axis_f32_even;
    switch (d) {
    case GPUHIST_U8: return axis_u8;
    case GPUHIST_I8: return axis_i8;
    case GPUHIST_U16: return axis_u16;
    case GPUHIST_I16: return axis_i16;
    case GPUHIST_U32: return axis_u32;
    case GPUHIST_I32: return axis_i32;
    case GPUHIST_U64: return axis_u64;
    case GPUHIST_I64: return axis_i64;
    case GPUHIST_F32: return axis_f32;
    case GPUHIST_F16: return axis_f16;
    case GPUHIST_BF16: return axis_bf16;
    default: return axis_f64;
    }
}

typedef struct map_share {
    const gpuhist_nd_map *map;
    uint64_t first, n; /* points of the input */
    uint32_t *slots;   /* n slots */
} map_share;

static void *map_run(void *arg)
{
    const map_share *sh = arg;
    const gpuhist_nd_map *map = sh->map;
    nd_axis_fn fn[GPUHIST_MAX_DIMS];
    for (uint32_t a = 0; a < map->dims; ++a)
        fn[a] = axis_fn(&map->axis[a], map->dtype);
    for (uint64_t done = 0; done < sh->n; done += ND_BLOCK) {
        uint32_t n = (uint32_t)(sh->n - done < ND_BLOCK ? sh->n - done : ND_BLOCK);
        for (uint32_t a = 0; a < map->dims; ++a)
            fn[a](&map->axis[a], sh->first + done, n, sh->slots + done, a == 0,
                  a + 1 == map->dims, map->total);
    }
    return NULL;
}

enum { ND_MAX_THREADS = 256 };

static int share_count(uint64_t n, int threads)
{
    uint64_t t = n / ND_MIN_PER_THREAD;
    if (t > (uint64_t)threads)
        t = (uint64_t)threads;
    if (t > ND_MAX_THREADS)
        t = ND_MAX_THREADS;
    return t < 1 ? 1 : (int)t;
}

void gpuhist_nd_map_points(const gpuhist_nd_map *map, uint64_t first, uint64_t n,
                           uint32_t *slots, int threads)
{
    map_share sh[ND_MAX_THREADS];
    int t = share_count(n, threads);
    for (int i = 0; i < t; ++i) {
        uint64_t a = n * (uint64_t)i / (uint64_t)t, b = n * (uint64_t)(i + 1) / (uint64_t)t;
        sh[i] = (map_share){map, first + a, b - a, slots + a};
    }
    gpuhist_fork_join(sh, sizeof sh[0], t, map_run);
}

/* ---- finite min and max of the axes ---------------------------------------------------------- */

void gpuhist_nd_minmax(const gpuhist_nd_map *map, uint32_t axes, uint64_t n, int threads,
                       double *min, double *max, int *found)
{
    const size_t size = gpuhist_dtype_size(map->dtype);
    gpuhist_cpu_extent e[GPUHIST_MAX_DIMS];
    memset(e, 0, sizeof e);
    /* interleaved points (every axis of the mask in one record of dims coordinates): one pass
     * with one result per axis */
    uintptr_t record = 0;
    int interleaved = map->dims <= GPUHIST_CPU_MINMAX_OUTS;
    uint32_t masks[GPUHIST_MAX_DIMS], nout = 0;
    for (uint32_t a = 0; a < map->dims; ++a) {
        if (!(axes >> a & 1u))
            continue;
        const gpuhist_nd_axis *ax = &map->axis[a];
        const uintptr_t r = (uintptr_t)ax->base - (uintptr_t)a * size;
        interleaved &= ax->stride == (size_t)map->dims * size && (!nout || r == record);
        record = r;
        masks[nout++] = 1u << a;
    }
    if (n > 0 && nout > 0 && interleaved) {
        gpuhist_cpu_extent got[GPUHIST_MAX_DIMS];
        gpuhist_cpu_layout l = {(const void *)record, map->dtype, map->dims, 1, n, 0};
        gpuhist_cpu_minmax_rows(&l, nout, masks, threads, got);
        for (uint32_t a = 0, o = 0; a < map->dims; ++a)
            if (axes >> a & 1u)
                e[a] = got[o++];
    } else if (n > 0) {
        for (uint32_t a = 0; a < map->dims; ++a) {
            if (!(axes >> a & 1u))
                continue;
            const gpuhist_nd_axis *ax = &map->axis[a];
            const uint32_t one = 1;
            const uint64_t c = ax->stride / size;
            if (ax->stride % size == 0 && c >= 1 && c <= GPUHIST_CPU_MINMAX_OUTS) {
                /* points 0 .. n-2 as pixels of c samples whose first is this axis's, then the
                 * last point's coordinate alone (the bytes after it may not exist) */
                gpuhist_cpu_layout l = {ax->base, map->dtype, (uint32_t)c, 1, n - 1, 0};
                gpuhist_cpu_extent last;
                gpuhist_cpu_minmax_rows(&l, 1, &one, threads, &e[a]);
                gpuhist_cpu_minmax(map->dtype, ax->base + (n - 1) * ax->stride, 1, &last);
                gpuhist_cpu_extent_merge(&e[a], &last);
            } else { /* any other stride: one point per row */
                gpuhist_cpu_layout l = {ax->base, map->dtype, 1, n, 1, ax->stride};
                gpuhist_cpu_minmax_rows(&l, 1, &one, threads, &e[a]);
            }
        }
    }
    for (uint32_t a = 0; a < map->dims; ++a) {
        if (!(axes >> a & 1u))
            continue;
        found[a] = e[a].found;
        min[a] = max[a] = 0.0;
        if (e[a].found) {
            gpuhist_cpu_extent_range(map->dtype, &e[a], &min[a], &max[a]);
            min[a] += 0.0, max[a] += 0.0;
        }
    }
}
