/*
 * cpu_kernels.h - the counting loops of cpu-serial, shared with cpu-threads (not installed).
 *
 * Both CPU strategies count a contiguous range of pixels [begin, end) of a plan (pixel index =
 * row * row_length + column) into a host uint64_t array that they ADD to:
 *  - 8/16-bit dtypes: raw values, active * 256 or active * 65536 counters (GPUHIST_CAP_VALUES;
 *    the backend folds them into slots with gpuhist_fold_values);
 *  - every other dtype: slots, active * plan->slots counters (binmap.h).
 * A thread of cpu-threads calls gpuhist_cpu_count_pixels() on its share, so the two strategies
 * run exactly the same inner loops and cannot disagree.
 */
#ifndef GPUHIST_CPU_KERNELS_H
#define GPUHIST_CPU_KERNELS_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* @return 1 when the CPU strategies count raw values for this plan (8/16-bit dtypes). */
int gpuhist_cpu_counts_values(const gpuhist_plan *plan);

/* @return the number of uint64 counters of `out` for this plan (active * values or slots). */
size_t gpuhist_cpu_out_entries(const gpuhist_plan *plan);

/* E[0..bins] of an EVEN plan in its edge type (float for f32 samples, else double), malloc'd;
 * NULL when out of memory. Set it as plan->even_edge_table to spare each call building it. */
void *gpuhist_cpu_even_edge_table(const gpuhist_plan *plan);

/* @return 1 when the CPU loops of this EVEN plan read no edge table, so none need be built: a
 * direct certificate (fast_even.h: E[0] and E[bins] are all they compare with), or the vector
 * test of one-channel f32/f64 samples (the few samples it does not prove compute their edges). */
int gpuhist_cpu_even_table_unneeded(const gpuhist_plan *plan);

/* @return the bytes of scratch gpuhist_cpu_count_pixels() allocates for this plan (at most). */
size_t gpuhist_cpu_count_scratch(const gpuhist_plan *plan);

/*
 * Scratch a counting thread keeps from call to call, so that a call takes no fresh pages from the
 * kernel (page faults, page clearing: with a 2^20-bin histogram these took more time than the
 * counting of 256 MiB on two threads). A context holds one per thread (cpu_backend.c); a context
 * runs one call at a time (SEMANTICS.md), and thread t of a call touches only entry t.
 *  - table: 32-bit sub-counters of gpuhist_cpu_count_pixels(), ALL ZERO between uses: each flush
 *    of the counting loops adds what it counted to the output and zeroes it. Except while
 *    pending_out is set: cpu-serial's slot loops, asked to (defer), leave the last chunk's
 *    counts there for the next chunk of the same histogram, so a chunk of 2 MiB does not pay a
 *    flush of 2^20 counters; gpuhist_cpu_settle() adds them (or drops them) before the result
 *    is read, and a call for another output or size settles them first.
 *  - hist: a 64-bit histogram, zeroed on each use by the thread that uses it: the private
 *    histogram of a thread of cpu-threads, or the raw-value histogram of the calling thread.
 *  - records: cpu-weighted's private counts and exact weight records (weighted.c), ALL ZERO
 *    between uses: each merge of a piece adds them into the result and zeroes them.
 */
typedef struct gpuhist_cpu_scratch {
    uint32_t *table;
    size_t table_entries;
    int defer;                /* set by cpu-serial around a chunk of a histogram */
    uint64_t *pending_out;    /* NULL, or the output the table's unflushed counts belong to */
    size_t pending_entries;   /* their number of counters */
    uint64_t pending_pixels;  /* the pixels they count (the flush budget carries them) */
    uint64_t *hist;
    size_t hist_entries;
    int64_t *records;
    size_t records_words;
} gpuhist_cpu_scratch;

/* A context's scratch entries (scratch.c): the first member of the CPU backend's state. */
typedef struct gpuhist_cpu_scratch_set {
    gpuhist_cpu_scratch *entry; /* n of them, entry t for counting thread t */
    int n;
} gpuhist_cpu_scratch_set;

/* The context's scratch for `threads` counting threads (entry t for thread t), grown as needed
 * and kept until the histogram ends (then freed when the context keeps too much, see
 * cpu_backend.c) or the context is destroyed. NULL when out of memory. */
gpuhist_cpu_scratch *gpuhist_cpu_scratch_for(gpuhist_ctx *ctx, int threads);

/* An entry's unflushed sub-counters (pending_out) added into their output, or, with `discard`,
 * dropped; its table is all zero again. */
void gpuhist_cpu_settle_entry(gpuhist_cpu_scratch *sc, int discard);
/* The same for every entry of the set. */
void gpuhist_cpu_settle(gpuhist_cpu_scratch_set *set, int discard);

/* Free every entry's memory and the entries (the set is empty again). */
void gpuhist_cpu_scratch_release(gpuhist_cpu_scratch_set *set);

/* The bytes the set's tables and histograms hold. */
size_t gpuhist_cpu_scratch_bytes(const gpuhist_cpu_scratch_set *set);

/* A kept buffer of at least n elements of `size` bytes: buf when it holds n (*cap elements; its
 * first n zeroed when `clear`), else a fresh calloc'd (zero) one with buf freed. NULL when out of
 * memory (buf freed, *cap 0). The one growth rule of the CPU backend's kept buffers. */
void *gpuhist_cpu_kept_zero(void *buf, size_t *cap, size_t n, size_t size, int clear);

/* At least `entries` zero 32-bit counters: sc's table (grown when too small), or when sc is NULL
 * a fresh calloc'd table the caller frees. NULL when out of memory. */
uint32_t *gpuhist_cpu_scratch_table(gpuhist_cpu_scratch *sc, size_t entries);

/* sc's 64-bit histogram, grown to at least `entries` and its first `entries` zeroed (by the
 * calling thread). NULL when out of memory. */
uint64_t *gpuhist_cpu_scratch_hist(gpuhist_cpu_scratch *sc, size_t entries);

/* sc's weighted records, at least `words` int64, all zero (grown when too small: the old ones
 * freed, fresh zero ones allocated). The user leaves them all zero again. NULL when out of
 * memory. */
int64_t *gpuhist_cpu_scratch_records(gpuhist_cpu_scratch *sc, size_t words);

/* The bytes a CPU context keeps between histograms (its counters, accumulator and every
 * thread's scratch), for tests of the keep limit; 0 for a context of another backend. */
size_t gpuhist_cpu_kept_bytes(const gpuhist_ctx *ctx);

/*
 * Add the counts of pixels [begin, end) of `plan` (host data, any alignment, any row stride,
 * interleaved channels) to `out` (gpuhist_cpu_out_entries() uint64 counters).
 * Uses 32-bit private sub-counters, flushed to `out` before they can overflow: sc's table (left
 * all zero again), or a table of its own when sc is NULL.
 * @return GPUHIST_OK, or GPUHIST_ERROR_OUT_OF_MEMORY if the sub-counters cannot be allocated
 *         (nothing has been added to `out` then).
 */
gpuhist_status gpuhist_cpu_count_pixels(const gpuhist_plan *plan, uint64_t begin, uint64_t end,
                                        uint64_t *out, gpuhist_cpu_scratch *sc);

/* The finite min and max of contiguous one-channel samples (minmax.c): floats in fmin/fmax
 * (found = some value is finite), u64 in umin/umax, other integers in imin/imax (found = n > 0);
 * the fields of other types stay 0. */
typedef struct gpuhist_cpu_extent {
    double fmin, fmax;
    int64_t imin, imax;
    uint64_t umin, umax;
    int found;
} gpuhist_cpu_extent;

/* n samples at data (any alignment): the lane loops (AVX2 when gpuhist_cpu_simd()), or with
 * GPUHIST_CPU_SIMD=0 the scalar loop. Both give the same bits (minmax.c). */
void gpuhist_cpu_minmax(gpuhist_dtype dtype, const void *data, uint64_t n,
                        gpuhist_cpu_extent *out);
/* The two forms, for tests. */
void gpuhist_cpu_minmax_lanes(gpuhist_dtype dtype, const void *data, uint64_t n,
                              gpuhist_cpu_extent *out);
void gpuhist_cpu_minmax_scalar(gpuhist_dtype dtype, const void *data, uint64_t n,
                               gpuhist_cpu_extent *out);

/*
 * Interleaved channels: m samples at data (any alignment), sample i of channel i % channels
 * (1 to 8 for the lane loops; the scalar loop takes up to 32). Result o (of nout) is the extent of
 * the samples of the channels in masks[o] (bit c: channel c) together, the same bits as the scalar
 * loop over them in order. m need not be a multiple of channels. Dispatched as
 * gpuhist_cpu_minmax(); the two forms for tests.
 */
void gpuhist_cpu_minmax_channels(gpuhist_dtype dtype, const void *data, uint64_t m,
                                 uint32_t channels, uint32_t nout, const uint32_t *masks,
                                 gpuhist_cpu_extent *outs);
void gpuhist_cpu_minmax_channels_lanes(gpuhist_dtype dtype, const void *data, uint64_t m,
                                       uint32_t channels, uint32_t nout, const uint32_t *masks,
                                       gpuhist_cpu_extent *outs);
void gpuhist_cpu_minmax_channels_scalar(gpuhist_dtype dtype, const void *data, uint64_t m,
                                        uint32_t channels, uint32_t nout, const uint32_t *masks,
                                        gpuhist_cpu_extent *outs);

/* acc = the extent of acc's run followed by next's (of equal values, acc's stays). */
void gpuhist_cpu_extent_merge(gpuhist_cpu_extent *acc, const gpuhist_cpu_extent *next);

/* An extent as an auto range: floats as they are, 64-bit integers rounded outwards
 * (gpuhist_i64_to_double_down/up). Only when e->found. */
void gpuhist_cpu_extent_range(gpuhist_dtype dtype, const gpuhist_cpu_extent *e, double *lo,
                              double *hi);

/* Pixels of `channels` samples in rows: pixel x of row r starts at
 * data + r * row_stride + x * channels * sample size. */
typedef struct gpuhist_cpu_layout {
    const void *data;
    gpuhist_dtype dtype;
    uint32_t channels; /* 1 .. 8 */
    uint64_t rows, row_length;
    size_t row_stride;
} gpuhist_cpu_layout;

/* The most results of one gpuhist_cpu_minmax_rows() call. */
#define GPUHIST_CPU_MINMAX_OUTS 8

/* The extents of every pixel of `l` (nout results, up to GPUHIST_CPU_MINMAX_OUTS, masks as for
 * gpuhist_cpu_minmax_channels()) with up to `threads` threads (4 MiB of samples at least each);
 * the same bits as one scalar loop over the pixels in row-major order. */
void gpuhist_cpu_minmax_rows(const gpuhist_cpu_layout *l, uint32_t nout, const uint32_t *masks,
                             int threads, gpuhist_cpu_extent *outs);

#ifdef __cplusplus
}
#endif
#endif
