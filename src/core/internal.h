/*
 * internal.h - what the core, the backends and the strategies share (not installed).
 *
 * Flow of gpuhist_histogram():
 *   1. core/plan.c checks the samples and the spec (messages name the field), builds a
 *      gpuhist_plan (geometry, channels, the binmap of binmap.h, the edges), resolves the auto
 *      range with the backend's minmax() (finite values only) and picks the strategy
 *      (core/select.c: the one forced by name, or the first rule of the backend's policy whose
 *      strategy accepts the plan; core/registry.c holds the list of strategies);
 *   2. the backend's execute() runs the strategy and writes the final counts and tallies:
 *      strategies count *slots* (bins + 3 per channel, see binmap.h) or, for the value-counting
 *      strategies of 8/16-bit data, raw values (256 / 65536 per channel), which the backend folds
 *      into slots; then the outlier policy is applied (gpuhist_finish_slots, below).
 */
#ifndef GPUHIST_INTERNAL_H
#define GPUHIST_INTERNAL_H

#include "gpuhist.h"
#include "binmap.h"
#include "exact_sum.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the request, resolved ------------------------------------------------------------------ */

typedef struct gpuhist_plan {
    gpuhist_dtype dtype;
    size_t sample_size;          /* bytes per sample */
    const unsigned char *data;   /* first sample of the first row */
    int data_on_device;          /* 1: `data` is device memory of the context's device */
    uint64_t row_length;         /* pixels per row (contiguous input: all pixels, one row) */
    uint64_t rows;               /* >= 1 */
    size_t row_stride;           /* bytes between row starts (contiguous: row_length*C*size) */
    int contiguous;              /* rows == 1 or rows packed back to back */
    uint64_t pixels;             /* row_length * rows */
    uint32_t channels;           /* interleaved channels C (1..4) */
    uint32_t active;             /* histogrammed channels A (1..C) */
    uint32_t channel_index[GPUHIST_MAX_CHANNELS]; /* input channel of histogram k */
    int32_t channel_slot[GPUHIST_MAX_CHANNELS];   /* histogram of input channel c, or -1 */
    gpuhist_binmap map;          /* see binmap.h */
    const double *edges;         /* EDGES: bins + 1 host doubles (NULL otherwise) */
    const void *even_edge_table; /* EVEN, CPU backend: E[0..bins] in the edge type (float for f32
                                    samples, else double), built once per histogram so chunks
                                    and threads do not each rebuild it; NULL: built per call */
    int cpu_defer_flush;         /* CPU backend, set for each chunk of a histogram: cpu-serial
                                    may keep its 32-bit sub-counters unflushed between chunks
                                    (the backend settles them before the result is read) */
    uint32_t bins;
    uint32_t slots;              /* bins + GPUHIST_EXTRA_SLOTS */
    gpuhist_outliers outliers;
    /* Weights (exact_sum.h): one per pixel, contiguous; NULL = unweighted. */
    const unsigned char *weights;
    gpuhist_dtype weight_dtype;  /* F32 or F64 */
    uint32_t weight_limbs;       /* GH_XSUM_LIMBS_F32 / _F64 of the sums */
    int weight_bias;             /* GH_XSUM_BIAS_F32 / _F64 */
    int want_squares;            /* sums of squares too (always in the f64 format) */
    void *weight_acc;            /* set by the backend for each run: active * slots sum records
                                    (weight_limbs limbs + 1 flags word, int64), then, with
                                    want_squares, active * slots square records
                                    (GH_XSUM_LIMBS_F64 + 1) */
} gpuhist_plan;

/* int64 words of one slot's sum record and square record (limbs + the non-finite flags). */
#define GPUHIST_SUM_RECORD(plan) ((size_t)(plan)->weight_limbs + 1u)
#define GPUHIST_SQUARE_RECORD ((size_t)GH_XSUM_LIMBS_F64 + 1u)
/* int64 words of a plan's whole weight accumulator (0 unweighted). */
size_t gpuhist_weight_acc_words(const gpuhist_plan *plan);

/* Number of distinct raw values of an 8/16-bit dtype (256 / 65536; f16 and bf16 included: their
 * bit patterns are counted and folded like u16's), 0 for wider types. */
uint32_t gpuhist_small_value_count(gpuhist_dtype dtype);

/* ---- strategies -------------------------------------------------------------------------------- */

/* Capability bits of a strategy. */
enum {
    GPUHIST_CAP_CHANNELS = 1u << 0, /* handles channels > 1 (interleaved) itself */
    GPUHIST_CAP_ROI = 1u << 1,      /* handles strided rows itself (else the backend compacts) */
    GPUHIST_CAP_VALUES = 1u << 2,   /* counts raw 8/16-bit values; the backend folds them */
    GPUHIST_CAP_WEIGHTS = 1u << 3,  /* also sums weights into plan->weight_acc */
    GPUHIST_CAP_FINISH = 1u << 4    /* CUDA: counts a whole call and writes its counts and
                                       tallies itself, in one launch (the job's finish) */
};

#define GPUHIST_DTYPE_BIT(d) (1u << (d))
#define GPUHIST_ALL_DTYPES ((1u << GPUHIST_DTYPE_COUNT) - 1u)
#define GPUHIST_INT8_DTYPES (GPUHIST_DTYPE_BIT(GPUHIST_U8) | GPUHIST_DTYPE_BIT(GPUHIST_I8))
#define GPUHIST_SMALL_DTYPES                                                                   \
    (GPUHIST_INT8_DTYPES | GPUHIST_DTYPE_BIT(GPUHIST_U16) | GPUHIST_DTYPE_BIT(GPUHIST_I16))
#define GPUHIST_KIND_BIT(k) (1u << (k))
#define GPUHIST_ALL_KINDS 7u

typedef struct gpuhist_strategy gpuhist_strategy;

/*
 * Run a strategy. `out` is backend memory (CPU: host; CUDA: device; OpenCL: a cl_mem cast to
 * void *), zeroed by the caller, of `active * slots` uint64 counters (or `active * values` for
 * GPUHIST_CAP_VALUES strategies). The strategy ADDS into it, so a backend may call it repeatedly
 * on chunks of the input. `job` is the backend's description of the (chunk of) input; for the CPU
 * backend it is the plan itself.
 */
typedef gpuhist_status (*gpuhist_run_fn)(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                         const void *job, void *out);
/* Optional finer check than the masks below. @return 1 if the strategy can run this plan. */
typedef int (*gpuhist_supports_fn)(const gpuhist_ctx *ctx, const gpuhist_plan *plan);

struct gpuhist_strategy {
    const char *name;
    gpuhist_backend backend;
    const char *seed;      /* "001 §V.B, 002" */
    const char *supports;  /* in words, for --list-strategies */
    const char *summary;   /* mechanism in one line */
    uint32_t dtypes;       /* GPUHIST_DTYPE_BIT mask */
    uint32_t kinds;        /* GPUHIST_KIND_BIT mask */
    uint32_t max_bins;     /* 0 = no limit */
    uint32_t caps;         /* GPUHIST_CAP_* */
    gpuhist_supports_fn supports_fn; /* NULL = the masks decide */
    gpuhist_run_fn run;
};

/* The registry: every strategy of every compiled backend, in one table (registry.c). */
size_t gpuhist_registry_size(void);
const gpuhist_strategy *gpuhist_registry_at(size_t i);
const gpuhist_strategy *gpuhist_registry_find(const char *name);
/* @return 1 if `s` can run `plan` (dtype, kind, bins, backend capabilities, supports_fn). */
int gpuhist_strategy_accepts(const gpuhist_ctx *ctx, const gpuhist_strategy *s,
                             const gpuhist_plan *plan);

/* ---- choosing the strategy (select.c) ------------------------------------------------------------ */

/*
 * One rule of a backend's auto policy: prefer `strategy` for the plans that meet the rule's
 * conditions. The conditions are preferences only; what a strategy can run is stated by the
 * strategy alone (its masks, max_bins, caps and supports_fn: gpuhist_strategy_accepts), which
 * the selection asks as well. A zero field imposes nothing.
 */
typedef struct gpuhist_rule {
    const gpuhist_strategy *strategy;
    uint32_t dtypes;             /* GPUHIST_DTYPE_BIT mask: only for these dtypes */
    uint32_t kinds;              /* GPUHIST_KIND_BIT mask: only for these bin kinds */
    uint32_t min_bins, max_bins; /* only for bins in [min_bins, max_bins] */
    uint32_t samples_per_thread; /* only with several CPU threads (gpuhist_cpu_threads) and at
                                    least this many samples (pixels x histogrammed channels)
                                    for each */
    uint64_t max_samples;        /* only for at most this many samples (pixels x histogrammed
                                    channels; a stream counts as large) */
} gpuhist_rule;

/* A backend's auto policy: its rules in order of preference (src/<backend>/registry_*). */
typedef struct gpuhist_policy {
    const gpuhist_rule *rules;
    size_t count;
} gpuhist_policy;

/*
 * The strategy that runs `plan`: the one forced by name (ctx->forced) when it accepts the plan;
 * without one, the strategy of the first rule of the backend's policy whose conditions hold and
 * whose strategy accepts the plan, else the first of the backend's registered strategies that
 * accepts it. NULL when there is none.
 */
const gpuhist_strategy *gpuhist_select(const gpuhist_ctx *ctx, const gpuhist_plan *plan);

/* ---- backends ------------------------------------------------------------------------------------ */

struct gpuhist_nd_map; /* ndmap.h */

typedef struct gpuhist_backend_ops {
    gpuhist_backend id;
    /* Open the device; fill ctx->device_name and ctx->backend_state. NO_DEVICE when absent. */
    gpuhist_status (*open)(gpuhist_ctx *ctx, int device);
    void (*close)(gpuhist_ctx *ctx);
    /* Finite min and max of the histogrammed channels; *found = 0 when there is no finite value. */
    gpuhist_status (*minmax)(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo, double *hi,
                             int *found);
    /* The auto policy: which strategy for which plan, as data (gpuhist_select). */
    const gpuhist_policy *policy;
    /* Run `s` over the whole input and write the final counts and tallies into `result`
     * (counts on host or device as result->counts_location says; tallies unless async). */
    gpuhist_status (*execute)(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                              const gpuhist_strategy *s, gpuhist_result *result);
    /* Is `data` device memory of this backend? (only CUDA answers yes) */
    int (*is_device_pointer)(gpuhist_ctx *ctx, const void *data);

    /* Streaming (stream.c), optional: without stream_begin the core runs execute() on each
     * chunk and adds the results up on the host. begin: zero the counters of `plan` (pixels 0).
     * count: add a chunk, described by a copy of the plan whose data/pixels/rows/row_stride/
     * data_on_device are the chunk's; host data may be reused by the caller on return.
     * buffer/submit (optional): staging buffer `slot` (0..GPUHIST_STREAM_SLOTS-1) made at least
     * `bytes` and free of pending work, which the caller fills; then submit counts it (zero-copy
     * feeding; without them the core uses malloc'd buffers and count()).
     * finish: counts and tallies into `result` as execute() does. abort: drop the counters. */
    gpuhist_status (*stream_begin)(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                   const gpuhist_strategy *s);
    gpuhist_status (*stream_count)(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                   const gpuhist_strategy *s);
    gpuhist_status (*stream_buffer)(gpuhist_ctx *ctx, int slot, size_t bytes, void **buf);
    gpuhist_status (*stream_submit)(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                    const gpuhist_strategy *s, int slot);
    gpuhist_status (*stream_finish)(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                    const gpuhist_strategy *s, gpuhist_result *result);
    void (*stream_abort)(gpuhist_ctx *ctx);

    /* Staging host memory (gpuhist_host_alloc), optional: NULL means malloc / free. */
    gpuhist_status (*host_alloc)(gpuhist_ctx *ctx, size_t bytes, void **out);
    void (*host_free)(gpuhist_ctx *ctx, void *p);

    /* Several devices (multi.c), optional: add the counters of the histogram open on `from` (a
     * context of the same backend, maybe on another device, begun with the same plan and
     * strategy) into the one open on `ctx`, on the device, ordered after `from`'s queued work;
     * the caller then aborts `from`'s histogram. One device then finishes for all, instead of
     * each copying its counts to the host for a host-side sum. */
    gpuhist_status (*stream_absorb)(gpuhist_ctx *ctx, gpuhist_ctx *from);

    /* Whole requests, taken before any planning by a context that plans and runs them itself:
     * a context of several devices (multi.c). NULL for the backends. */
    const struct gpuhist_request_ops *requests;

    /* N-D points in device memory (histogramdd.c), optional: map points [first, first + n) of
     * `map` (coordinates in device memory; an EDGES axis's edges on the host) to their joint
     * slots (ndmap.h) in a device buffer of the backend's, enqueued on the context's stream
     * ahead of the count that reads them; *slots is that buffer, rewritten by the next call.
     * nd_release frees the buffers (ctx->nd_state). */
    gpuhist_status (*nd_map)(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map, uint64_t first,
                             uint64_t n, const void **slots);
    void (*nd_release)(gpuhist_ctx *ctx);
    /* N-D points in device memory mapped and counted in one pass, optional: with n = 0, begin
     * (UNSUPPORTED when the map's total + 2 slots do not fit; else the counters are zeroed;
     * `collect`, when not NULL, is the caller's DEVICE counts (total entries, stored, not
     * sharing bytes with the points), which the backend may zero and count the joint bins into
     * directly: nd_collect on the same buffer then writes only the tallies, and the joint bins
     * cannot be copied to the host); with n > 0, add points [first, first + n) of `map` to the counters;
     * with map NULL, copy to the host `collect`, waiting for the device: with first = 0 and
     * n = 0 the total + 2 counters (ndmap.h's encoding); with first = 0 and n = 2 nan and out
     * (collect[0], collect[1]); with first = 1 and n = total the joint bins. */
    gpuhist_status (*nd_count)(gpuhist_ctx *ctx, const struct gpuhist_nd_map *map,
                               uint64_t first, uint64_t n, uint64_t *collect);
    /* The fused count's joint bins into device memory, optional (with nd_count): store, or add
     * (add nonzero), them into the device `counts` (total entries) and, when `stats` is not NULL,
     * nan, out, 0 and `points` into its 4 device words; enqueued on the context's stream, not
     * waited for. */
    gpuhist_status (*nd_collect)(gpuhist_ctx *ctx, uint64_t *counts, uint64_t *stats,
                                 uint64_t points, int add);
} gpuhist_backend_ops;

/* The public calls as a context of several devices takes them (multi.c), once the context is
 * held (busy) and its error cleared; messages go to ctx->error. A stream's state is its own. */
typedef struct gpuhist_request_ops {
    gpuhist_status (*histogram)(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                const gpuhist_bin_spec *spec, gpuhist_result *result);
    gpuhist_status (*minmax)(gpuhist_ctx *ctx, const gpuhist_samples *samples, double *min,
                             double *max, int *found);
    gpuhist_status (*stream_begin)(gpuhist_ctx *ctx, const gpuhist_samples *layout,
                                   const gpuhist_bin_spec *spec, gpuhist_memory counts_location,
                                   void **state);
    gpuhist_status (*stream_feed)(void *state, const void *data, const void *weights,
                                  uint64_t pixels);
    gpuhist_status (*stream_buffer)(void *state, size_t min_bytes, void **buf);
    gpuhist_status (*stream_submit)(void *state, void *buf, uint64_t pixels);
    /* frees the state, whatever it returns */
    gpuhist_status (*stream_finish)(void *state, gpuhist_result *result);
    void (*stream_abort)(void *state);
} gpuhist_request_ops;

extern const gpuhist_backend_ops gpuhist_cpu_backend;
extern const gpuhist_strategy *const gpuhist_cpu_strategies[]; /* src/cpu/registry_cpu.c */
extern const size_t gpuhist_cpu_strategy_count;
extern const gpuhist_policy gpuhist_cpu_policy;
#if GPUHIST_HAVE_CUDA
extern const gpuhist_backend_ops gpuhist_cuda_backend;
extern const gpuhist_strategy *const gpuhist_cuda_strategies[]; /* src/cuda/registry_cuda.cu */
extern const size_t gpuhist_cuda_strategy_count;
extern const gpuhist_policy gpuhist_cuda_policy;
gpuhist_status gpuhist_cuda_list_devices(char *buf, size_t size);
int gpuhist_cuda_device_count(void);
#endif
#if GPUHIST_HAVE_OPENCL
extern const gpuhist_backend_ops gpuhist_opencl_backend;
extern const gpuhist_strategy *const gpuhist_opencl_strategies[]; /* src/opencl/registry_opencl.c */
extern const size_t gpuhist_opencl_strategy_count;
extern const gpuhist_policy gpuhist_opencl_policy;
gpuhist_status gpuhist_opencl_list_devices(char *buf, size_t size);
int gpuhist_opencl_device_count(void);
#endif

/* ---- the context --------------------------------------------------------------------------------- */

struct gpuhist_ctx {
    gpuhist_backend backend;             /* resolved: CPU, CUDA or OPENCL */
    const gpuhist_backend_ops *ops;
    const gpuhist_strategy *forced;      /* NULL = auto */
    int threads;                         /* CPU threads, 0 = all cores */
    int device;                          /* device index asked for */
    void *stream;                        /* CUDA stream (cudaStream_t) */
    int async;
    void *backend_state;                 /* owned by the backend (buffers, queues, programs) */
    void *nd_state;                      /* the backend's buffers of ops->nd_map, or NULL */
    char device_name[128];
    char note[640];                      /* why AUTO chose this backend */
    char error[512];                     /* last error message */
    char *build_log;                     /* OpenCL build log (malloc'd) or NULL */
    /* A context over several devices (gpuhist_create_multi, multi.c): one context per device,
     * which do the work; this one only routes and merges (its ops, in multi.c, take whole
     * requests: ops->requests). */
    gpuhist_ctx **members;
    int member_count;
    void *multi_cache;                   /* the parts' buffers, kept between calls (multi.c) */
    size_t multi_cache_size;
    /* Nonzero while a call (gpuhist_histogram, gpuhist_minmax) or an open stream holds the
     * context; set and cleared only with __atomic_test_and_set / __atomic_clear (C and C++
     * both include this header). */
    unsigned char busy;
};

/* ---- several devices (multi.c) ------------------------------------------------------------------ */

/* Sets this thread's gpuhist_last_error(NULL), the message of a failed context creation. */
void gpuhist_create_failed(const char *fmt, ...);
/* The bins and histogrammed channels of a stream (stream.c). */
void gpuhist_stream_shape(const gpuhist_stream *st, uint32_t *bins, uint32_t *active);
/* Lend at most `slots` staging buffers (1..GPUHIST_STREAM_SLOTS) from this stream. */
void gpuhist_stream_limit_slots(gpuhist_stream *st, int slots);
/* Can `into` take over the counters of `from` on the device (ops->stream_absorb)? Both open
 * native streams of one backend with that op, the same plan shape and strategy, unweighted,
 * neither failed. */
int gpuhist_stream_can_absorb(const gpuhist_stream *into, const gpuhist_stream *from);
/* Add `from`'s counters and pixels into `into`; `from` must still be aborted by the caller. */
gpuhist_status gpuhist_stream_absorb(gpuhist_stream *into, gpuhist_stream *from);

/* Staging buffers a stream may lend at once (gpuhist_stream_buffer). */
#define GPUHIST_STREAM_SLOTS 4

/* How the checks of a bin spec name its fields in messages: a 1-D call's ("bins", "range",
 * "edges", "samples.dtype") or an N-D axis's ("axes[a].bins", ..., "points.dtype"). */
typedef struct gpuhist_spec_fields {
    const char *kind, *bins, *outliers, *range, *edges; /* the spec's fields */
    const char *dtype_field; /* the field holding the value type: "samples.dtype" */
    const char *value_type;  /* "sample" / "coordinate" (integer bins need an integer ...) */
    const char *values;      /* "samples" / "points" (a bound beyond the range of f32 ...) */
    const char *clamp_refused; /* NULL, or why GPUHIST_OUTLIERS_CLAMP is refused */
} gpuhist_spec_fields;

/* THE checks of a bin spec before its auto range is resolved (plan.c): kind, bin count,
 * outlier policy, a given range (finite, ordered, within the edge type of `dtype`), edges
 * (finite, strictly increasing), integer bins on integer types. 1-D calls and each N-D axis. */
gpuhist_status gpuhist_check_spec(gpuhist_ctx *ctx, const gpuhist_bin_spec *spec,
                                  gpuhist_dtype dtype, const gpuhist_spec_fields *fields);

/* THE binmap (binmap.h) of a resolved spec for samples of `dtype`: EVEN over [lower, upper],
 * EDGES from spec->edges, INTEGER from spec->integer_lower (plan.c; N-D axes use it too). */
void gpuhist_binmap_of(const gpuhist_bin_spec *spec, gpuhist_dtype dtype, double lower,
                       double upper, int last_inclusive, gpuhist_binmap *map);

/* Validate a request and build its plan and strategy (plan.c). `stream` nonzero: for a streamed
 * histogram (no data yet: samples->data and count are ignored; auto range is refused). */
gpuhist_status gpuhist_prepare(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                               const gpuhist_bin_spec *spec, gpuhist_memory counts_location,
                               int stream, gpuhist_plan *plan, const gpuhist_strategy **strategy);
/* The result fields known from the plan (bins, channels, range, backend, strategy; tallies 0),
 * and the edges when result->edges is set (histogram.c). */
void gpuhist_result_describe(const gpuhist_ctx *ctx, const gpuhist_plan *plan,
                             const gpuhist_strategy *s, gpuhist_result *result);
void gpuhist_result_edges(const gpuhist_plan *plan, gpuhist_result *result);

/* Record a formatted error on ctx and return `status` (so callers can `return gpuhist_fail(...)`). */
gpuhist_status gpuhist_fail(gpuhist_ctx *ctx, gpuhist_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- helpers shared by backends ------------------------------------------------------------------- */

/* Number of CPU threads to use (ctx->threads, or all online cores). */
int gpuhist_cpu_threads(const gpuhist_ctx *ctx);

/* Fold a raw-value histogram (active * values, values = 256 or 65536) into slots
 * (active * slots, added to). Host memory. */
void gpuhist_fold_values(const gpuhist_plan *plan, const uint64_t *values, uint64_t *slots);

/* From host slot counters (active * slots): apply the outlier policy and write counts (host
 * memory, active * bins) and the tallies of `result`. */
void gpuhist_finish_slots(const gpuhist_plan *plan, const uint64_t *slots, uint64_t *counts,
                          gpuhist_result *result);
/* From a host weight accumulator (plan->weight_acc layout, normalised or not): the outlier
 * policy, then result->sums (and sums_squared when asked), each rounded once. */
void gpuhist_finish_sums(const gpuhist_plan *plan, const int64_t *acc, gpuhist_result *result);
/* Add weight record b into record a of `words` int64 (limbs added, the flags word OR'ed). */
void gpuhist_record_add(int64_t *a, const int64_t *b, size_t words);
/* result.sums is given exactly when the plan is weighted. @return OK or INVALID_ARGUMENT. */
gpuhist_status gpuhist_check_sums(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_result *result);

/* One host sample read at any alignment, widened without loss: f32/f64 into `f`, u64 into `u`,
 * every other integer type into `i`. */
typedef struct gpuhist_sample_value {
    int is_float;      /* value in `f` */
    int is_unsigned64; /* value in `u` */
    double f;
    int64_t i;
    uint64_t u;
} gpuhist_sample_value;
gpuhist_sample_value gpuhist_read_sample(gpuhist_dtype dtype, const void *p);

/* The slot of the sample at `p` (host memory, any alignment) of dtype plan->dtype. */
uint32_t gpuhist_slot_of(const gpuhist_plan *plan, const void *p);

/* Address of pixel `pixel` of row `row` (host or device address arithmetic). */
static inline const unsigned char *gpuhist_pixel_ptr(const gpuhist_plan *plan, uint64_t row,
                                                     uint64_t pixel)
{
    return plan->data + row * plan->row_stride + pixel * plan->channels * plan->sample_size;
}

/* Auto range of 64-bit integer data: the integer min converted rounding down and the max
 * rounding up, so that every sample lies inside [lower, upper] exactly (a plain conversion can
 * round the minimum up past itself above 2^53). Backends' minmax() must use these. */
double gpuhist_i64_to_double_down(int64_t x);
double gpuhist_i64_to_double_up(int64_t x);
double gpuhist_u64_to_double_down(uint64_t x);
double gpuhist_u64_to_double_up(uint64_t x);

/* OK when `bytes` of host memory fit in what is available now (always OK when that cannot be
 * told); else OUT_OF_MEMORY with a message "<what> needs X GiB of host memory, only Y ...". Called
 * before large allocations, which the kernel would otherwise grant lazily and then kill the
 * process for. */
gpuhist_status gpuhist_need_host_memory(gpuhist_ctx *ctx, uint64_t bytes, const char *what);

/* Run fn on each of n shares of `size` bytes at `shares`: shares 1 .. n-1 on new threads, share
 * 0 on the calling thread, then join. A share whose thread cannot start runs on the caller
 * (slower, still correct). */
void gpuhist_fork_join(void *shares, size_t size, int n, void *(*fn)(void *));

/* Monotonic wall clock in seconds. */
double gpuhist_now(void);

#ifdef __cplusplus
}
#endif
#endif
