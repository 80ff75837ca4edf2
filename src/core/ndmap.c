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
 * proof, as the CPU strategies' fast paths do).
 * Limits: host memory; the slots are deterministic, so any thread count gives the same slots.
 */
#define _POSIX_C_SOURCE 200809L
#include "ndmap.h"

#include <math.h>
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

/* ---- finite min and max of one axis ------------------------------------------------------------ */

typedef struct minmax_share {
    const gpuhist_nd_axis *ax;
    gpuhist_dtype dtype;
    uint64_t first, n;
    int found;
    double fmin, fmax;   /* floats */
    int64_t imin, imax;  /* signed integers */
    uint64_t umin, umax; /* u64 */
} minmax_share;

#define ND_MINMAX_INT(CTYPE, LO, HI)                                                            \
    do {                                                                                        \
        for (uint64_t k = 0; k < sh->n; ++k, p += ax->stride) {                                 \
            CTYPE x;                                                                            \
            memcpy(&x, p, sizeof x);                                                            \
            if (!sh->found) {                                                                   \
                sh->LO = sh->HI = x;                                                            \
                sh->found = 1;                                                                  \
            } else if (x < sh->LO) {                                                            \
                sh->LO = x;                                                                     \
            } else if (x > sh->HI) {                                                            \
                sh->HI = x;                                                                     \
            }                                                                                   \
        }                                                                                       \
    } while (0)

#define ND_MINMAX_FLOAT(CTYPE) ND_MINMAX_WIDEN(CTYPE, CTYPE, )

/* CTYPE read, widened to WTYPE by WIDEN (f16 / bf16 bit patterns to float). */
#define ND_MINMAX_WIDEN(CTYPE, WTYPE, WIDEN)                                                    \
    do {                                                                                        \
        for (uint64_t k = 0; k < sh->n; ++k, p += ax->stride) {                                 \
            CTYPE raw;                                                                          \
            memcpy(&raw, p, sizeof raw);                                                        \
            const WTYPE x = WIDEN(raw);                                                         \
            if (!isfinite(x))                                                                   \
                continue;                                                                       \
            if (!sh->found) {                                                                   \
                sh->fmin = sh->fmax = x;                                                        \
                sh->found = 1;                                                                  \
            } else if (x < sh->fmin) {                                                          \
                sh->fmin = x;                                                                   \
            } else if (x > sh->fmax) {                                                          \
                sh->fmax = x;                                                                   \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static void *minmax_run(void *arg)
{
    minmax_share *sh = arg;
    const gpuhist_nd_axis *ax = sh->ax;
    const unsigned char *p = ax->base + sh->first * ax->stride;
    sh->found = 0;
    switch (sh->dtype) {
    case GPUHIST_U8: ND_MINMAX_INT(uint8_t, imin, imax); break;
    case GPUHIST_I8: ND_MINMAX_INT(int8_t, imin, imax); break;
    case GPUHIST_U16: ND_MINMAX_INT(uint16_t, imin, imax); break;
    case GPUHIST_I16: ND_MINMAX_INT(int16_t, imin, imax); break;
    case GPUHIST_U32: ND_MINMAX_INT(uint32_t, imin, imax); break;
    case GPUHIST_I32: ND_MINMAX_INT(int32_t, imin, imax); break;
    case GPUHIST_I64: ND_MINMAX_INT(int64_t, imin, imax); break;
    case GPUHIST_U64: ND_MINMAX_INT(uint64_t, umin, umax); break;
    case GPUHIST_F32: ND_MINMAX_FLOAT(float); break;
    case GPUHIST_F16: ND_MINMAX_WIDEN(uint16_t, float, gpuhist_f16_to_f32); break;
    case GPUHIST_BF16: ND_MINMAX_WIDEN(uint16_t, float, gpuhist_bf16_to_f32); break;
    default: ND_MINMAX_FLOAT(double); break;
    }
    return NULL;
}

void gpuhist_nd_minmax(const gpuhist_nd_map *map, uint32_t axis, uint64_t n, int threads,
                       double *min, double *max, int *found)
{
    minmax_share sh[ND_MAX_THREADS];
    int t = share_count(n, threads);
    for (int i = 0; i < t; ++i) {
        uint64_t a = n * (uint64_t)i / (uint64_t)t, b = n * (uint64_t)(i + 1) / (uint64_t)t;
        memset(&sh[i], 0, sizeof sh[i]);
        sh[i].ax = &map->axis[axis];
        sh[i].dtype = map->dtype;
        sh[i].first = a;
        sh[i].n = b - a;
    }
    gpuhist_fork_join(sh, sizeof sh[0], t, minmax_run);
    minmax_share all;
    memset(&all, 0, sizeof all);
    for (int i = 0; i < t; ++i) {
        if (!sh[i].found)
            continue;
        if (!all.found) {
            all = sh[i];
            continue;
        }
        all.fmin = fmin(all.fmin, sh[i].fmin);
        all.fmax = fmax(all.fmax, sh[i].fmax);
        all.imin = sh[i].imin < all.imin ? sh[i].imin : all.imin;
        all.imax = sh[i].imax > all.imax ? sh[i].imax : all.imax;
        all.umin = sh[i].umin < all.umin ? sh[i].umin : all.umin;
        all.umax = sh[i].umax > all.umax ? sh[i].umax : all.umax;
    }
    *found = all.found;
    *min = *max = 0.0;
    if (!all.found)
        return;
    switch (map->dtype) {
    case GPUHIST_F32:
    case GPUHIST_F64:
    case GPUHIST_F16:
    case GPUHIST_BF16:
        *min = all.fmin + 0.0;
        *max = all.fmax + 0.0;
        break;
    case GPUHIST_U64:
        *min = gpuhist_u64_to_double_down(all.umin);
        *max = gpuhist_u64_to_double_up(all.umax);
        break;
    default:
        *min = gpuhist_i64_to_double_down(all.imin);
        *max = gpuhist_i64_to_double_up(all.imax);
        break;
    }
}
