/*
 * gpuhist.h - the whole public C API of gpuhist.
 *
 * gpuhist computes exact histograms of large numeric arrays on CUDA GPUs, OpenCL devices and
 * CPUs. Every backend and every strategy returns bit-identical counts to the CPU reference.
 *
 * Typical use:
 *
 *     gpuhist_ctx *ctx;
 *     if (gpuhist_create(&ctx, GPUHIST_BACKEND_AUTO) != GPUHIST_OK) ...
 *     gpuhist_samples s = gpuhist_samples_1d(data, GPUHIST_F32, n);
 *     gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 1.0);
 *     uint64_t counts[256];
 *     gpuhist_result r = gpuhist_result_host(counts);
 *     if (gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK)
 *         fprintf(stderr, "%s\n", gpuhist_last_error(ctx));
 *     gpuhist_destroy(ctx);
 *
 * Semantics (identical everywhere; docs/SEMANTICS.md has the details):
 *  - EVEN bins use NumPy's edges: d[i] = lower + i * ((upper - lower) / bins) in double for
 *    0 <= i < bins, d[bins] = upper, then rounded to the edge type (float for f32 samples, double
 *    otherwise); for f32 samples with float32_linspace (the automatic range's default), NumPy 2's
 *    linspace computed in float32 instead. Sample x is in bin i iff E[i] <= x < E[i+1], compared
 *    exactly.
 *  - EDGES bins: bins + 1 strictly increasing finite doubles, same rule (binary search).
 *  - INTEGER bins: bin = x - lower for integer x in [lower, lower + bins) (bincount).
 *  - NaN is never binned; underflow / overflow / nan / total are always reported.
 *
 * Thread safety: a context is used by one thread at a time; distinct contexts are independent.
 * gpuhist_histogram() enforces it: a call on a context another thread's call holds returns
 * GPUHIST_ERROR_BUSY. The other calls taking a context must not overlap a call on it.
 */
#ifndef GPUHIST_H
#define GPUHIST_H

#include <stddef.h>
#include <stdint.h>

#define GPUHIST_VERSION_MAJOR 0
#define GPUHIST_VERSION_MINOR 1
#define GPUHIST_VERSION_PATCH 0
#define GPUHIST_VERSION_NUMBER \
    (GPUHIST_VERSION_MAJOR * 10000 + GPUHIST_VERSION_MINOR * 100 + GPUHIST_VERSION_PATCH)
#define GPUHIST_VERSION_STRING "0.1.0"

/* Most interleaved channels a sample description may have (RGBA). */
#define GPUHIST_MAX_CHANNELS 4

#if defined(_WIN32) && defined(GPUHIST_SHARED_BUILD)
#define GPUHIST_API __declspec(dllexport)
#elif defined(__GNUC__)
#define GPUHIST_API __attribute__((visibility("default")))
#else
#define GPUHIST_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Version and status                                                                          */
/* ------------------------------------------------------------------------------------------ */

/** @return the library's version as "MAJOR.MINOR.PATCH" (static string). */
GPUHIST_API const char *gpuhist_version(void);
/** @return GPUHIST_VERSION_NUMBER of the library actually linked. */
GPUHIST_API unsigned gpuhist_version_number(void);

/* Status codes. The values are stable: new codes are only ever appended. */
typedef enum gpuhist_status {
    GPUHIST_OK = 0,
    GPUHIST_ERROR_INVALID_ARGUMENT = 1, /* a bad field in a spec or sample description */
    GPUHIST_ERROR_UNSUPPORTED = 2,      /* the chosen strategy/backend cannot do this request */
    GPUHIST_ERROR_OUT_OF_MEMORY = 3,    /* host or device allocation failed */
    GPUHIST_ERROR_NO_DEVICE = 4,        /* backend not built in, no driver, or no device */
    GPUHIST_ERROR_BACKEND = 5,          /* a driver/runtime call or a kernel failed */
    GPUHIST_ERROR_UNKNOWN_STRATEGY = 6, /* no registered strategy has that name */
    GPUHIST_ERROR_BUILD = 7,            /* run-time kernel compilation failed (log available) */
    GPUHIST_ERROR_BUSY = 8              /* the context is in use by another thread's call */
} gpuhist_status;

/** @return a short static description of a status code ("invalid argument", ...). */
GPUHIST_API const char *gpuhist_status_string(gpuhist_status status);

/* ------------------------------------------------------------------------------------------ */
/* Sample types                                                                                */
/* ------------------------------------------------------------------------------------------ */

typedef enum gpuhist_dtype {
    GPUHIST_U8 = 0,
    GPUHIST_I8,
    GPUHIST_U16,
    GPUHIST_I16,
    GPUHIST_U32,
    GPUHIST_I32,
    GPUHIST_U64,
    GPUHIST_I64,
    GPUHIST_F32,
    GPUHIST_F64,
    GPUHIST_F16,  /* IEEE binary16 (NumPy's float16) */
    GPUHIST_BF16, /* bfloat16: the upper 16 bits of a float32 */
    GPUHIST_DTYPE_COUNT
} gpuhist_dtype;
/*
 * Half-precision samples are widened exactly to float and binned as f32 samples are, with one
 * difference for F16: EVEN edges are rounded to float16 (NumPy's edges for float16 data), not to
 * float32. BF16 samples follow the f32 rules exactly (NumPy has no bfloat16). NaN is never binned,
 * as for every float type (docs/SEMANTICS.md, "Half precision").
 */

/** @return "u8", "i8", ... "f64", "f16", "bf16"; "?" for an out-of-range value. */
GPUHIST_API const char *gpuhist_dtype_name(gpuhist_dtype dtype);
/** @return the size of one sample in bytes, 0 for an out-of-range value. */
GPUHIST_API size_t gpuhist_dtype_size(gpuhist_dtype dtype);
/** Parse "u8".."f64", "f16", "bf16" (also "uint8", "float32", "float16", "bfloat16", ...).
 * @return 1 on success, 0 if unknown. */
GPUHIST_API int gpuhist_dtype_parse(const char *name, gpuhist_dtype *out);

/* ------------------------------------------------------------------------------------------ */
/* Bin specification                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef enum gpuhist_bin_kind {
    GPUHIST_BINS_EVEN = 0, /* `bins` equal-width bins over [lower, upper) (NumPy's edges) */
    GPUHIST_BINS_EDGES,    /* explicit edges e[0..bins], strictly increasing, finite */
    GPUHIST_BINS_INTEGER   /* one bin per integer value from integer_lower (bincount) */
} gpuhist_bin_kind;

typedef enum gpuhist_outliers {
    GPUHIST_OUTLIERS_DROP = 0, /* samples outside the edges are counted only as under/overflow */
    GPUHIST_OUTLIERS_CLAMP     /* ...and also added to the first / last bin */
} gpuhist_outliers;

typedef struct gpuhist_bin_spec {
    gpuhist_bin_kind kind;
    uint32_t bins;           /* number of bins, >= 1 */
    double lower, upper;     /* EVEN: the range; lower < upper, both finite */
    int auto_range;          /* EVEN: nonzero = lower/upper from the data's finite min/max,
                                last edge inclusive, min == max gives [min-0.5, max+0.5] */
    const double *edges;     /* EDGES: bins + 1 values, host memory, read during the call only */
    int64_t integer_lower;   /* INTEGER: value of bin 0 (may be negative) */
    int last_edge_inclusive; /* nonzero: x == last edge goes to the last bin (NumPy's rule) */
    gpuhist_outliers outliers;
    int float32_linspace;    /* EVEN, F32 samples only: nonzero = NumPy 2's edges of float32 data
                                without a range: np.linspace(float32(lower), float32(upper),
                                bins + 1) computed in float32 (gpuhist_linspace_f32's edges,
                                still counted as fast EVEN bins); 0 = NumPy 1.x's and an explicit
                                range's: computed in double, rounded to float. Ignored for every
                                other sample type (f16, bf16, f64, integers) and bin kind.
                                gpuhist_bins_auto and gpuhist_bins_from_minmax set it */
} gpuhist_bin_spec;

/** Even bins over [lower, upper), half-open, outliers dropped (float32_linspace off: the edges of
 *  NumPy given an explicit range). */
GPUHIST_API gpuhist_bin_spec gpuhist_bins_even(uint32_t bins, double lower, double upper);
/** Even bins over the data's finite [min, max], last edge inclusive (NumPy's default), with
 *  NumPy 2's float32 edges for f32 samples (float32_linspace on; set it to 0 for NumPy 1.x's). */
GPUHIST_API gpuhist_bin_spec gpuhist_bins_auto(uint32_t bins);
/** Explicit edges (bins + 1 values; the pointer must stay valid during gpuhist_histogram). */
GPUHIST_API gpuhist_bin_spec gpuhist_bins_edges(uint32_t bins, const double *edges);
/** One bin per integer value lower, lower+1, ..., lower+bins-1. */
GPUHIST_API gpuhist_bin_spec gpuhist_bins_integer(uint32_t bins, int64_t lower);

/* ------------------------------------------------------------------------------------------ */
/* Sample description                                                                          */
/* ------------------------------------------------------------------------------------------ */

typedef enum gpuhist_memory {
    GPUHIST_MEMORY_AUTO = 0, /* samples: detect (CUDA pointer attributes); counts: host */
    GPUHIST_MEMORY_HOST,
    GPUHIST_MEMORY_DEVICE    /* memory of the context's device (CUDA device pointer) */
} gpuhist_memory;

/*
 * Samples are `channels` interleaved values per pixel (1..4). Either a contiguous array of
 * `count` pixels (rows == 0), or a region of interest of `rows` rows of `row_length` pixels
 * each, row r starting at (const char *)data + r * row_stride (row_stride in bytes, at least
 * row_length * channels * sample size). The histogrammed channels are the first
 * `active_channels` (0 = all), or exactly those in `channel_mask` (bit c = channel c) when it is
 * nonzero. The data may be unaligned. It is only read.
 */
typedef struct gpuhist_samples {
    const void *data;
    gpuhist_dtype dtype;
    uint64_t count;           /* pixels, when rows == 0 (ignored for a ROI) */
    uint64_t row_length;      /* ROI: pixels per row */
    uint64_t rows;            /* ROI: number of rows; 0 = contiguous `count` pixels */
    size_t row_stride;        /* ROI: bytes from one row start to the next */
    uint32_t channels;        /* interleaved channels per pixel, 1..4 (0 means 1) */
    uint32_t active_channels; /* histogram the first A channels (0 means all) */
    uint32_t channel_mask;    /* nonzero: histogram exactly these channels instead */
    gpuhist_memory location;  /* where `data` lives; AUTO detects */
    /* Optional weights (see "Weights" below): NULL = unweighted. */
    const void *weights;      /* one per pixel, contiguous, in pixel order (a ROI's pixels row
                                 after row), in the same memory as `data` */
    gpuhist_dtype weight_dtype; /* GPUHIST_F32 or GPUHIST_F64 */
    /* gpuhist_stream_begin's layout of a weighted stream only: nonzero leaves the sums of
     * squares out (their exact records are most of the stream's state: about 6x less memory
     * and work with f32 weights); a finish that then asks for them is refused. 0 (the default)
     * sums them, so that the finish may ask. Ignored elsewhere. */
    int stream_no_squares;
} gpuhist_samples;

/*
 * Weights: each pixel's weight is added to the bin of each of its histogrammed samples
 * (result.sums, required with weights), and its square to result.sums_squared when given. Sums
 * are exact and rounded once: each is the double nearest the exact sum of its weights (ties to
 * even), so the bits are the same on every run, strategy, backend, thread count and chunking.
 * A bin whose weights include NaN, or both +inf and -inf, sums to NaN; else an infinite weight
 * makes it that infinity; an exact sum beyond the double range is +-inf. Squares of f64 weights
 * are exact unless they fall below the subnormal range (each then rounded once) or overflow.
 * NaN samples add nothing; with GPUHIST_OUTLIERS_CLAMP the weights of outliers go to the end
 * bins like their counts. Counts are computed as without weights.
 */

/** A contiguous array of `count` single-channel samples in host (or detected) memory. */
GPUHIST_API gpuhist_samples gpuhist_samples_1d(const void *data, gpuhist_dtype dtype,
                                               uint64_t count);

/* ------------------------------------------------------------------------------------------ */
/* Backends and strategies                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef enum gpuhist_backend {
    GPUHIST_BACKEND_AUTO = 0, /* CUDA when a usable GPU is present, else CPU (reason noted) */
    GPUHIST_BACKEND_CPU,
    GPUHIST_BACKEND_CUDA,
    GPUHIST_BACKEND_OPENCL
} gpuhist_backend;

/** @return "auto", "cpu", "cuda" or "opencl". */
GPUHIST_API const char *gpuhist_backend_name(gpuhist_backend backend);
/** Parse a backend name. @return 1 on success, 0 if unknown. */
GPUHIST_API int gpuhist_backend_parse(const char *name, gpuhist_backend *out);
/** @return nonzero when the backend was compiled into this library (AUTO and CPU always). */
GPUHIST_API int gpuhist_backend_compiled(gpuhist_backend backend);

/* A registered strategy, as listed by gpuhist_strategy_info(). All strings are static. */
typedef struct gpuhist_strategy_desc {
    const char *name;     /* e.g. "cuda-block-shared" */
    gpuhist_backend backend;
    const char *seed;     /* the seed document and section it comes from */
    const char *supports; /* what it accepts, in words ("all dtypes, any bins", ...) */
    const char *summary;  /* one line: its mechanism */
} gpuhist_strategy_desc;

/** @return the number of registered strategies (all backends compiled in). */
GPUHIST_API size_t gpuhist_strategy_count(void);
/** Describe strategy i (0 <= i < count). @return GPUHIST_OK or INVALID_ARGUMENT. */
GPUHIST_API gpuhist_status gpuhist_strategy_info(size_t i, gpuhist_strategy_desc *out);

/* ------------------------------------------------------------------------------------------ */
/* Context                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct gpuhist_ctx gpuhist_ctx;

/**
 * Create a context on a backend. AUTO picks CUDA when a GPU is usable and otherwise the CPU,
 * recording why in gpuhist_backend_note(). Asking for CUDA or OpenCL explicitly fails with
 * GPUHIST_ERROR_NO_DEVICE when that backend is not compiled in or finds no device.
 * @param out receives the context (NULL on failure); free it with gpuhist_destroy().
 * @return GPUHIST_OK, NO_DEVICE, OUT_OF_MEMORY, BACKEND or INVALID_ARGUMENT.
 */
GPUHIST_API gpuhist_status gpuhist_create(gpuhist_ctx **out, gpuhist_backend backend);
/** Like gpuhist_create() on device `device` (CUDA ordinal / OpenCL device index, see
 *  gpuhist_list_devices). */
GPUHIST_API gpuhist_status gpuhist_create_on(gpuhist_ctx **out, gpuhist_backend backend,
                                             int device);
/** Release the context and everything it owns. NULL is accepted. */
GPUHIST_API void gpuhist_destroy(gpuhist_ctx *ctx);

/**
 * Create a context over several devices of one backend: `devices` lists `count` device numbers
 * (as gpuhist_create_on() takes them; the same number twice gives two contexts on one device),
 * or devices == NULL / count == 0 for every device the backend has (CUDA: every visible GPU).
 * AUTO means CUDA when it has a usable device, else the CPU (one device).
 * What runs where:
 *  - host samples with host counts (gpuhist_histogram, gpuhist_minmax): the pixels (rows of a
 *    region of interest) are cut into one contiguous share per device, counted in parallel (one
 *    host thread per device, each with its own staging), and the counts, tallies and exact
 *    weight sums are added: the result equals the one-device result bit for bit;
 *  - streams (gpuhist_stream_*): host chunks go to the devices in turn, device chunks to the
 *    device that holds them (so data already spread over several GPUs is counted where it is,
 *    in parallel); finish adds the parts;
 *  - anything else (device samples, counts in device memory): the whole call runs on one
 *    device, the one holding the samples, else the first.
 * Settings (strategy, async) apply to every device; CPU threads are shared out between CPU
 * devices; gpuhist_set_stream() is refused (a CUDA stream belongs to one device: each device
 * works on its own default stream). A stream's counts are in host memory; it lends up to 4
 * buffers at once (one per device when there are more than 4 devices), in turn from the
 * devices, as one device's stream does.
 * The message of a failure on one device of several starts with "device N: ".
 * With one device (count == 1, or one found) this is gpuhist_create_on().
 * @return as gpuhist_create(); the message names the device that failed.
 */
GPUHIST_API gpuhist_status gpuhist_create_multi(gpuhist_ctx **out, gpuhist_backend backend,
                                                const int *devices, int count);
/** @return the number of devices the context spans (1 unless made by gpuhist_create_multi). */
GPUHIST_API int gpuhist_context_device_count(const gpuhist_ctx *ctx);
/** @return the device number of the context's i-th device (0 <= i < device count), else -1. */
GPUHIST_API int gpuhist_context_device(const gpuhist_ctx *ctx, int i);
/** @return the number of devices `backend` has here (CPU: 1; 0 when none or not compiled). */
GPUHIST_API int gpuhist_device_count(gpuhist_backend backend);

/** @return the backend the context runs on (never AUTO). */
GPUHIST_API gpuhist_backend gpuhist_context_backend(const gpuhist_ctx *ctx);
/** @return the device's name ("CPU (16 threads)", "NVIDIA H100 80GB HBM3", ...). */
GPUHIST_API const char *gpuhist_device_name(const gpuhist_ctx *ctx);
/** @return why AUTO chose this backend (e.g. "cuda: no CUDA-capable device"), or "". */
GPUHIST_API const char *gpuhist_backend_note(const gpuhist_ctx *ctx);
/** @return the message of the last failed call on this context, naming the bad field; with
 *  ctx == NULL, the message of this thread's last failed gpuhist_create()/_create_on(). */
GPUHIST_API const char *gpuhist_last_error(const gpuhist_ctx *ctx);
/** @return the run-time compiler log of the last failed kernel build (OpenCL), or "". */
GPUHIST_API const char *gpuhist_build_log(const gpuhist_ctx *ctx);

/** Force a strategy by name ("auto" or NULL restores automatic choice). It must belong to the
 *  context's backend. @return OK, UNKNOWN_STRATEGY or INVALID_ARGUMENT. */
GPUHIST_API gpuhist_status gpuhist_set_strategy(gpuhist_ctx *ctx, const char *name);
/** CPU threads for the CPU backend (0 = all cores). */
GPUHIST_API gpuhist_status gpuhist_set_threads(gpuhist_ctx *ctx, int threads);
/** CUDA: the cudaStream_t (passed as void *) all device work is ordered on (NULL = default).
 *  The context's device scratch is shared by its calls, so the first call after a change of
 *  stream waits for the device (cudaDeviceSynchronize) before it enqueues anything. */
GPUHIST_API gpuhist_status gpuhist_set_stream(gpuhist_ctx *ctx, void *cuda_stream);
/** CUDA: nonzero lets gpuhist_histogram() return before the work finishes when both samples and
 *  counts are in device memory (synchronise the stream before reading counts). */
GPUHIST_API gpuhist_status gpuhist_set_async(gpuhist_ctx *ctx, int async);

/** @return the bytes of host memory available to this process now (MemAvailable, bounded by a
 *  cgroup limit), 0 when that cannot be told. Calls needing more refuse with OUT_OF_MEMORY. */
GPUHIST_API uint64_t gpuhist_host_memory_available(void);

/** Host memory for staging data to the context's device: page-locked on CUDA (copied to the GPU
 *  by DMA, straight from where it is), plain host memory elsewhere. Free it with
 *  gpuhist_host_free() on the same context. @return OK, OUT_OF_MEMORY or INVALID_ARGUMENT. */
GPUHIST_API gpuhist_status gpuhist_host_alloc(gpuhist_ctx *ctx, size_t bytes, void **out);
/** Free memory from gpuhist_host_alloc(). NULL is accepted. */
GPUHIST_API void gpuhist_host_free(gpuhist_ctx *ctx, void *p);

/** Write a human-readable list of the devices of a backend to `buf` (one per line, numbered as
 *  gpuhist_create_on() expects). @return OK or NO_DEVICE. */
GPUHIST_API gpuhist_status gpuhist_list_devices(gpuhist_backend backend, char *buf, size_t size);

/* ------------------------------------------------------------------------------------------ */
/* Result                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/*
 * The caller owns every buffer. counts receives bins uint64 values per histogrammed channel,
 * channel after channel (channel k's bin i at counts[k * bins + i]). When counts_location is
 * DEVICE, counts is a device pointer of the context's device; with gpuhist_set_async(ctx, 1) and
 * device samples, the call only enqueues work on the context's stream and the per-channel
 * tallies below are not filled in (pass device_stats to receive them on the device instead:
 * 4 uint64 per channel: underflow, overflow, nan, total).
 */
typedef struct gpuhist_result {
    /* in */
    uint64_t *counts;               /* required: bins * (histogrammed channels) entries */
    gpuhist_memory counts_location; /* HOST (AUTO means HOST) or DEVICE */
    double *edges;                  /* optional host buffer of bins + 1: the edges used */
    uint64_t *device_stats;         /* optional device buffer (see above) */
    double *sums;                   /* with samples.weights: host, bins * channels weight sums */
    double *sums_squared;           /* optional, with weights: sums of the squared weights */
    int64_t *weight_state;          /* optional, with weights: host buffer receiving the exact,
                                       unrounded sums (gpuhist_weight_state_words() int64), for
                                       merging histograms counted in parts ("Exact parts");
                                       with accumulate: required, and where the counts are */
    int accumulate;                 /* nonzero: add into counts, tallies, device_stats and
                                       weight_state instead of overwriting them (see below) */
    /* out */
    uint32_t bins;                  /* bins per channel */
    uint32_t channels;              /* number of histograms written */
    uint32_t channel_index[GPUHIST_MAX_CHANNELS]; /* which input channel each one is */
    uint64_t underflow[GPUHIST_MAX_CHANNELS];     /* samples below the first edge */
    uint64_t overflow[GPUHIST_MAX_CHANNELS];      /* samples at/above the last edge */
    uint64_t nan[GPUHIST_MAX_CHANNELS];           /* NaN samples (never binned) */
    uint64_t total[GPUHIST_MAX_CHANNELS];         /* all samples of the channel */
    double lower, upper;            /* EVEN: the range used (after auto range) */
    int last_edge_inclusive;        /* the rule applied (auto range turns it on) */
    gpuhist_backend backend;        /* the backend that ran */
    const char *strategy;           /* the strategy that ran (static string) */
    double seconds;                 /* wall time of the computation, transfers included */
} gpuhist_result;

/*
 * Accumulating (result.accumulate nonzero): the call adds what it counts into the buffers
 * instead of overwriting them, so repeated calls fill one histogram: counts[i] += (host or
 * device memory), the result's tallies underflow / overflow / nan / total += (keep the same
 * result between calls; gpuhist_result_host() starts them at 0), device_stats +=, and with
 * weights the call's exact sums are added into weight_state (required: the sums accumulate
 * exactly there, never as rounded doubles), which lies where the counts are: host memory, or
 * device memory with counts_location DEVICE. Zero the state before the first call (all zeros
 * is empty); its shape is gpuhist_weight_state_words(bins, channels, weight_dtype,
 * sums_squared != NULL). sums (and sums_squared) then receive the accumulated state's sums,
 * each rounded once: N accumulating calls give the counts, tallies and sums of one call over
 * the concatenation of their samples, bit for bit. With device samples, DEVICE counts and
 * gpuhist_set_async(ctx, 1), a call (weighted or not) only enqueues its work: the tallies of
 * the result, sums and sums_squared are not written (sums_squared non-NULL still says the state
 * holds squares); read the sums later with gpuhist_weight_state_sums() on a host copy of the
 * state. On CUDA the finish adds into the counts, tallies and state on the device (no extra
 * launch, no copy). Edges, range, backend, strategy and seconds are written as usual.
 * gpuhist_stream_finish() honours it as well.
 */

/** A result writing `counts` in host memory. */
GPUHIST_API gpuhist_result gpuhist_result_host(uint64_t *counts);

/**
 * Compute the histogram of `samples` with bins `spec` into `result`.
 * Counts are exact 64-bit integers whatever the number of samples.
 * @return GPUHIST_OK; INVALID_ARGUMENT (message names the field); UNSUPPORTED (a forced strategy
 *         cannot do this spec); OUT_OF_MEMORY; BACKEND (driver or kernel failure); on failure the
 *         counts buffer may have been partly written but the result fields are not meaningful.
 *         BUSY: the context is held by another thread's call in progress or by an open
 *         stream; this call did nothing (no buffer written, gpuhist_last_error() not changed)
 *         and may be retried. Give each thread its own context to histogram in parallel.
 */
GPUHIST_API gpuhist_status gpuhist_histogram(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                             const gpuhist_bin_spec *spec,
                                             gpuhist_result *result);

/**
 * The finite min and max of the histogrammed channels of `samples`, as auto range finds them
 * (64-bit integers rounded outwards to doubles, -0.0 reported as 0.0); *found = 0 when no value
 * is finite. A first pass over data that comes in parts: combine the parts' results (min of
 * mins, max of maxes), then gpuhist_bins_from_minmax() gives the spec auto range would use.
 * @return OK, INVALID_ARGUMENT, BACKEND or BUSY.
 */
GPUHIST_API gpuhist_status gpuhist_minmax(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                          double *min, double *max, int *found);
/** Even bins over the range auto range chooses for data with this min and max (NumPy's rules:
 *  [0, 1] when nothing was found, min == max widened by 0.5 each way; last edge inclusive), with
 *  float32_linspace on as gpuhist_bins_auto has it (for f32 data the widening by 0.5 is then
 *  float32's: the bounds are rounded to float). */
GPUHIST_API gpuhist_bin_spec gpuhist_bins_from_minmax(uint32_t bins, double min, double max,
                                                      int found);

/* ------------------------------------------------------------------------------------------ */
/* Exact parts                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * A histogram counted in parts (on several devices, processes or Dask workers) is merged
 * exactly: counts and tallies are 64-bit integers to add; the weight sums are merged as their
 * exact states (result.weight_state), never as rounded doubles, so the merged sums have the
 * same bits as one call over all the data, whatever the number of parts and their order.
 * A state holds, per histogrammed channel and per slot (the bins, then underflow, overflow and
 * NaN), one record of signed 64-bit limbs and a flags word for the weights (f32: 11 words, f64:
 * 69) and, when squares are asked, one of 69 words for the squares after all the weight
 * records. Its layout is the same on every backend and host (native byte order).
 */

/** @return the int64 words of a weight state: `bins` bins, `channels` histogrammed channels,
 *  weights of `weight_dtype` (F32 or F64), with (nonzero) or without sums of squares; 0 for a
 *  bad argument. */
GPUHIST_API size_t gpuhist_weight_state_words(uint32_t bins, uint32_t channels,
                                              gpuhist_dtype weight_dtype, int squares);
/** Add the state `from` into `into` (same shape), exactly; the order of additions never
 *  matters. @return OK or INVALID_ARGUMENT. */
GPUHIST_API gpuhist_status gpuhist_weight_state_add(int64_t *into, const int64_t *from,
                                                    uint32_t bins, uint32_t channels,
                                                    gpuhist_dtype weight_dtype, int squares);
/** The sums (bins * channels doubles) and, when `sums_squared` is non-NULL (the state must
 *  have squares), the sums of squares of a state, each rounded once, with the outlier policy
 *  applied as gpuhist_histogram() does. @return OK or INVALID_ARGUMENT. */
GPUHIST_API gpuhist_status gpuhist_weight_state_sums(const int64_t *state, uint32_t bins,
                                                     uint32_t channels, gpuhist_dtype weight_dtype,
                                                     int squares, gpuhist_outliers outliers,
                                                     double *sums, double *sums_squared);

/* ------------------------------------------------------------------------------------------ */
/* Bin-count rules                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* The bin count gpuhist_bins_rule() allows when max_bins is 0 (2^24 bins: 128 MiB of counts). */
#define GPUHIST_RULE_DEFAULT_MAX_BINS 16777216u

/** @return nonzero when `name` is one of NumPy's bin-count rules: "auto", "fd", "doane",
 *  "scott", "stone", "rice", "sturges", "sqrt" (exact, lower case; NULL gives 0). */
GPUHIST_API int gpuhist_bin_rule_known(const char *name);

/**
 * The even bins numpy.histogram_bin_edges(a, bins=rule, range=range) uses under NumPy 2 (NumPy
 * 1.x's: gpuhist_bins_rule_numpy below), as a spec: `rule`
 * is one of the names above, `a` the one histogrammed channel of `samples` (set channel_mask
 * to pick one of several), `range` NULL or two doubles {lower, upper} (lower <= upper, finite;
 * equal bounds are widened by 0.5 each way, as NumPy does). Writes to *out an EVEN spec with
 * last_edge_inclusive set, lower/upper the outer edges (the range, else the data's finite min
 * and max, widened by 0.5 when equal, [0, 1] when no value is finite) and the rule's bin count,
 * ceil((upper - lower) / width), 1 when the width is 0 or no value is kept, and for f32 samples
 * without a range under NumPy 2's rules float32_linspace set: its edges (gpuhist_compute_edges)
 * are NumPy's, bit for bit (docs/SEMANTICS.md, "Bin-count rules", has the exceptions). The values the rule sees are the finite ones inside the range (NumPy's
 * comparisons: float32 for f32 samples, float64 for integers).
 * Cost: sqrt, sturges and rice without a range: a min/max and a one-bin histogram on the
 * context's backend (host or device memory). Every other case reads the samples on the host
 * (device memory is refused with UNSUPPORTED): scott 3 passes, doane 4; fd, auto and stone on
 * samples wider than 16 bits copy the kept values (8 bytes each; refused with OUT_OF_MEMORY
 * when more than gpuhist_host_memory_available()), fd/auto select 4 ranks in it (O(n)), stone
 * sorts it and evaluates max(100, sqrt(n)) candidate bin counts.
 * @param max_bins the most bins accepted (0: GPUHIST_RULE_DEFAULT_MAX_BINS; at most 2^31).
 * @return OK; INVALID_ARGUMENT (unknown rule, bad range, weights given, more than one channel,
 *         a bin count above max_bins or not finite: the message names the figure);
 *         UNSUPPORTED (device memory where the host must read); OUT_OF_MEMORY; BACKEND; BUSY.
 */
GPUHIST_API gpuhist_status gpuhist_bins_rule(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                             const char *rule, const double *range,
                                             gpuhist_bin_spec *out, uint32_t max_bins);
/**
 * gpuhist_bins_rule() with the rules of a NumPy major version: `numpy_major` 2 (or 0, the
 * default) gives NumPy 2's rules, 1 NumPy 1.x's (1.26 and before), which differ in the bin count
 * where NumPy 2 widens an integer sample's width to at least 1, keeps float32 intermediates in
 * float32, takes `auto` as min(max(fd, sqrt / 2), sturges) and sums np.mean / np.std over the
 * whole array (docs/SEMANTICS.md, "Bin-count rules"). @return as gpuhist_bins_rule(), and
 * INVALID_ARGUMENT for another numpy_major.
 */
GPUHIST_API gpuhist_status gpuhist_bins_rule_numpy(gpuhist_ctx *ctx,
                                                   const gpuhist_samples *samples,
                                                   const char *rule, const double *range,
                                                   gpuhist_bin_spec *out, uint32_t max_bins,
                                                   int numpy_major);
/**
 * NumPy 2's np.linspace(float32(lower), float32(upper), bins + 1), the edges NumPy 2 gives f32
 * samples without a range (a number of bins or a rule): the arithmetic in float32, edge i =
 * float(float(i * step) + lower), step = float(float(upper - lower) / bins), the last edge
 * upper. They are the edges of an EVEN spec with float32_linspace on f32 samples (as
 * gpuhist_compute_edges gives them; without it, NumPy 1.x's and those of a given range, computed
 * in double): histogram with such a spec, last edge inclusive, to count as NumPy 2 does.
 * @param edges bins + 1 doubles. @return OK, or INVALID_ARGUMENT (no bins, bounds beyond
 *         float32, or edges that do not increase strictly: NumPy 2 refuses those too).
 */
GPUHIST_API gpuhist_status gpuhist_linspace_f32(uint32_t bins, double lower, double upper,
                                                double *edges);

/* ------------------------------------------------------------------------------------------ */
/* Streaming                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/*
 * A histogram of data that arrives in chunks (a file, a pipe, a producer): begin, feed chunks
 * of whole pixels in any number and size, finish. The counts and tallies equal those of one
 * gpuhist_histogram() call on the concatenation of the chunks, bit for bit, whatever the
 * chunking. The range must be known at begin: auto range is refused (find the min and max
 * first: gpuhist_minmax() over the parts, then gpuhist_bins_from_minmax()). While a stream is
 * open its context serves only that stream (other calls on it fail with BUSY); one thread at a
 * time.
 *
 * Two ways to feed: gpuhist_stream_feed() with your buffer (host or device memory; reusable as
 * soon as the call returns), or gpuhist_stream_buffer() + gpuhist_stream_submit() to fill the
 * stream's own staging buffers (page-locked on CUDA) and skip a copy; up to 4 may be held at
 * once. On CUDA, chunks are copied and counted asynchronously while the caller reads the next.
 * Any error leaves the stream failed: later calls return it; finish or abort still free it.
 */
typedef struct gpuhist_stream gpuhist_stream;

/**
 * Begin a streamed histogram on `ctx`. `layout` gives dtype, channels, active_channels /
 * channel_mask and location (its data, count and ROI fields are ignored), and for a weighted
 * stream weights (any non-NULL pointer), weight_dtype and stream_no_squares; `spec` as for
 * gpuhist_histogram() except auto range; counts will go to `counts_location` (HOST or DEVICE).
 * @return OK, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY, BACKEND or BUSY.
 */
GPUHIST_API gpuhist_status gpuhist_stream_begin(gpuhist_ctx *ctx, const gpuhist_samples *layout,
                                                const gpuhist_bin_spec *spec,
                                                gpuhist_memory counts_location,
                                                gpuhist_stream **out);
/** Count `pixels` contiguous pixels at `data` (memory as layout->location says; AUTO detects). */
GPUHIST_API gpuhist_status gpuhist_stream_feed(gpuhist_stream *stream, const void *data,
                                               uint64_t pixels);
/** The same with one weight per pixel (layout->weight_dtype), for a stream begun with a layout
 *  whose `weights` is non-NULL (any value: it only says the stream is weighted). A weighted
 *  stream is fed only this way (no lent buffers). */
GPUHIST_API gpuhist_status gpuhist_stream_feed_weighted(gpuhist_stream *stream, const void *data,
                                                        const void *weights, uint64_t pixels);
/** Lend a staging buffer of at least `min_bytes` (host memory, page-locked on CUDA); it stays
 *  the stream's: hand it back with gpuhist_stream_submit(). */
GPUHIST_API gpuhist_status gpuhist_stream_buffer(gpuhist_stream *stream, size_t min_bytes,
                                                 void **buf);
/** Count the first `pixels` pixels of a buffer from gpuhist_stream_buffer() (0 just returns it). */
GPUHIST_API gpuhist_status gpuhist_stream_submit(gpuhist_stream *stream, void *buf,
                                                 uint64_t pixels);
/** Write the counts, tallies and edges into `result` (as gpuhist_histogram() does) and free the
 *  stream, also on failure. result->seconds is the time from begin to finish. */
GPUHIST_API gpuhist_status gpuhist_stream_finish(gpuhist_stream *stream, gpuhist_result *result);
/** Free the stream without a result. NULL is accepted. */
GPUHIST_API void gpuhist_stream_abort(gpuhist_stream *stream);
/** @return the message of the stream's failure, or of its context's last error. */
GPUHIST_API const char *gpuhist_stream_error(const gpuhist_stream *stream);

/* ------------------------------------------------------------------------------------------ */
/* N-D histograms                                                                              */
/* ------------------------------------------------------------------------------------------ */

/*
 * A joint histogram of points of 1 to GPUHIST_MAX_DIMS coordinates (NumPy's histogramdd; 2-D is
 * dims = 2). Each axis has its own bin spec (EVEN with or without auto range, EDGES, INTEGER) and
 * bins its coordinate exactly as gpuhist_histogram() bins a sample with that spec (same edges,
 * same comparisons, last edge inclusive when the spec says so; auto range is the finite min and
 * max of that axis's coordinates over all points). A point is counted in the joint bin of its
 * axes' bins, row-major (last axis fastest: counts[((i0 * b1) + i1) * b2 + i2] for 3-D), when
 * every coordinate is inside its axis's edges; otherwise it is tallied: `nan` when some
 * coordinate is NaN (NaN wins), else `out` when some coordinate is outside its axis. Outliers are
 * always dropped (CLAMP is refused). Weights as for gpuhist_histogram(): exact sums, rounded
 * once, the same bits on every backend, thread count and chunking (the weights of tallied points
 * are not reported).
 * Mechanism: CPU threads map the points to joint slots (u32), which the context counts as a 1-D
 * INTEGER histogram of the product of the bins (a stream on the same context: every backend,
 * strategy and device set counts them). Points in device memory (a CUDA context of one device,
 * unweighted) are mapped on the device by the same rules and counted there; their auto ranges
 * come from gpuhist_minmax on the device.
 * Limits: the product of the axes' bins at most 2^31; device points only on one CUDA device and
 * without weights.
 * Parts: N-D histograms counted apart (chunks on Dask workers, files, ranks) with the same axes
 * merge exactly: counts, out, nan and total add; weighted parts return result.weight_state, a
 * 1-D weight state of B = bins_total bins and one channel (gpuhist_weight_state_words(B, 1,
 * weight_dtype, sums_squared != NULL) int64; its bins are the joint bins in row-major order, its
 * underflow and overflow slots hold the weights of the nan and out points), merged with
 * gpuhist_weight_state_add(into, from, B, 1, ...) and rounded with gpuhist_weight_state_sums(
 * state, B, 1, weight_dtype, squares, GPUHIST_OUTLIERS_DROP, sums, sums_squared) into the sums
 * one call over all the points gives, bit for bit.
 */
#define GPUHIST_MAX_DIMS 8

typedef struct gpuhist_points {
    uint32_t dims;                          /* coordinates per point, 1..GPUHIST_MAX_DIMS */
    gpuhist_dtype dtype;                    /* of every coordinate */
    uint64_t count;                         /* points */
    const void *data;                       /* interleaved: count x dims values, point after
                                               point (a row-major (count, dims) array); NULL:
                                               the points are in `columns` */
    const void *columns[GPUHIST_MAX_DIMS];  /* when data is NULL: one array of count values per
                                               axis (ignored when data is set) */
    gpuhist_memory location;                /* HOST, DEVICE (a CUDA context of one device,
                                               no weights) or AUTO (detected) */
    const void *weights;                    /* optional: one per point (host), NULL = none */
    gpuhist_dtype weight_dtype;             /* GPUHIST_F32 or GPUHIST_F64 */
} gpuhist_points;

typedef struct gpuhist_nd_result {
    /* in (the caller owns every buffer; host memory unless counts_location says otherwise) */
    uint64_t *counts;                       /* required: bins_total entries, row-major */
    gpuhist_memory counts_location;         /* HOST (AUTO means HOST) or DEVICE: counts in
                                               device memory of a CUDA context of one device,
                                               for points in device memory (one-shot calls) */
    uint64_t *device_stats;                 /* optional, with DEVICE counts: 4 device words,
                                               nan, out, 0, total (the 1-D layout) */
    int accumulate;                         /* nonzero: add into counts, out / nan / total,
                                               device_stats and weight_state instead of
                                               overwriting them (see below) */
    double *edges[GPUHIST_MAX_DIMS];        /* optional, per axis: bins + 1 edges used */
    double *sums;                           /* with weights (required): bins_total sums */
    double *sums_squared;                   /* optional, with weights: sums of squares */
    int64_t *weight_state;                  /* optional, with weights: receives the exact,
                                               unrounded sums, a state of bins_total bins and
                                               one channel ("Exact parts"; see below) */
    /* out */
    uint32_t dims;
    uint32_t bins[GPUHIST_MAX_DIMS];        /* per axis */
    uint64_t bins_total;                    /* product of bins */
    double lower[GPUHIST_MAX_DIMS];         /* first and last edge of each axis (auto range */
    double upper[GPUHIST_MAX_DIMS];         /* resolved) */
    int last_edge_inclusive[GPUHIST_MAX_DIMS]; /* the rule applied on each axis */
    uint64_t out;                           /* points with a coordinate outside its axis (and
                                               none NaN) */
    uint64_t nan;                           /* points with a NaN coordinate */
    uint64_t total;                         /* all points */
    gpuhist_backend backend;                /* that counted the joint slots */
    const char *strategy;                   /* the strategy that counted them (static string) */
    double seconds;                         /* wall time of the whole call */
} gpuhist_nd_result;

/*
 * Accumulating N-D calls (result.accumulate nonzero) follow gpuhist_result's contract: the call
 * adds its counts into `counts` (host, or device with counts_location DEVICE), its tallies into
 * out / nan / total (keep the same result between calls, zeroed before the first) and
 * device_stats, and with weights its exact sums into weight_state (required then: zeroed before
 * the first call, gpuhist_weight_state_words(bins_total, 1, weight_dtype, sums_squared != NULL)
 * int64); sums (and sums_squared) receive the accumulated state's sums, rounded once. N
 * accumulating calls give the counts, tallies and sums of one call over the concatenation of
 * their points, bit for bit. gpuhist_nd_stream_finish() honours it (host counts only).
 * DEVICE counts: device points on a CUDA context of one device (unweighted, as device points
 * are); with gpuhist_set_async(ctx, 1) the call only enqueues its work on the context's stream
 * (counts and device_stats added on the device, out / nan / total of the result not written:
 * read device_stats), else it waits and writes them as usual. Edges, ranges, bins, backend,
 * strategy and seconds are written as usual. Stored (not accumulated) DEVICE counts may be
 * counted into directly, so a call that fails may leave them partly written, as
 * gpuhist_histogram()'s counts may be.
 */

/** Points of `dims` interleaved coordinates per point (a row-major (count, dims) array). */
GPUHIST_API gpuhist_points gpuhist_points_interleaved(const void *data, gpuhist_dtype dtype,
                                                      uint32_t dims, uint64_t count);

/**
 * The N-D histogram of `points` with one bin spec per axis (`axes[0 .. dims)`) into `result`.
 * @return GPUHIST_OK; INVALID_ARGUMENT (the message names the field, e.g. "axes[1].bins", or
 *         the product of the bins when it exceeds 2^31); UNSUPPORTED (device points on a
 *         context other than one CUDA device, or with weights; weights
 *         on a backend that does not sum them; a forced strategy that cannot count u32 integer
 *         bins); OUT_OF_MEMORY; BACKEND; BUSY (the context is in use; nothing was done).
 */
GPUHIST_API gpuhist_status gpuhist_histogramdd(gpuhist_ctx *ctx, const gpuhist_points *points,
                                               const gpuhist_bin_spec *axes,
                                               gpuhist_nd_result *result);

/**
 * The finite min and max of each axis a in the mask `axes` (bit a asks for axis a) of `points`
 * (interleaved or columns, host or device memory), as gpuhist_minmax() finds them, in min[a],
 * max[a] and found[a] (arrays of points->dims entries; found[a] = 0, min 0 and max 1 when no
 * coordinate of the axis is finite or there are no points); entries of axes not in the mask are
 * left untouched, and nothing is written on an error. The first pass of an N-D auto range over
 * data that comes in parts: combine the parts' results per axis (min of mins, max of maxes),
 * then gpuhist_bins_from_minmax() gives the axis's spec. Host memory (any backend): one pass
 * over the points for all the asked axes, on CPU threads. Device memory: the backend's min/max,
 * one axis after another. Weights are ignored.
 * @return OK; INVALID_ARGUMENT (an empty mask, a mask naming an axis >= points->dims, a NULL
 *         array, or bad points; the message names it); BACKEND; BUSY (nothing was done).
 */
GPUHIST_API gpuhist_status gpuhist_points_minmax(gpuhist_ctx *ctx, const gpuhist_points *points,
                                                 uint32_t axes, double *min, double *max,
                                                 int *found);

/*
 * N-D histograms fed in chunks: begin with the layout (dims, dtype, location; `weights` non-NULL
 * for a weighted stream, with weight_dtype; data, columns and count are ignored) and one spec per
 * axis (auto range refused: give the ranges); feed chunks of points (each interleaved or in
 * columns, with their weights); finish writes the result as gpuhist_histogramdd() does, equal
 * bit for bit to one call on the concatenation of the chunks. While open, the stream holds its
 * context (other calls on it answer BUSY). Any error leaves the stream failed: later calls return
 * it; finish or abort still free it.
 */
typedef struct gpuhist_nd_stream gpuhist_nd_stream;
/** @return OK, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY, BACKEND or BUSY. */
GPUHIST_API gpuhist_status gpuhist_nd_stream_begin(gpuhist_ctx *ctx, const gpuhist_points *layout,
                                                   const gpuhist_bin_spec *axes,
                                                   gpuhist_nd_stream **out);
/** Count `chunk->count` points (same dims, dtype and weighting as the layout). */
GPUHIST_API gpuhist_status gpuhist_nd_stream_feed(gpuhist_nd_stream *stream,
                                                  const gpuhist_points *chunk);
/** Write the result (as gpuhist_histogramdd; seconds from begin) and free the stream, also on
 *  failure. */
GPUHIST_API gpuhist_status gpuhist_nd_stream_finish(gpuhist_nd_stream *stream,
                                                    gpuhist_nd_result *result);
/** Free the stream without a result. NULL is accepted. */
GPUHIST_API void gpuhist_nd_stream_abort(gpuhist_nd_stream *stream);
/** @return the message of the stream's failure, or of its context's last error. */
GPUHIST_API const char *gpuhist_nd_stream_error(const gpuhist_nd_stream *stream);

/**
 * The edges gpuhist_histogram() would use for this spec and sample type (INTEGER bin i covers
 * [lower + i, lower + i + 1)); with float32_linspace and F32, gpuhist_linspace_f32's. Writes
 * spec->bins + 1 doubles to `edges`. Auto range is not resolved here (read result.edges after
 * the call instead). @return OK or INVALID_ARGUMENT.
 */
GPUHIST_API gpuhist_status gpuhist_compute_edges(const gpuhist_bin_spec *spec, gpuhist_dtype dtype,
                                                 double *edges);

#ifdef __cplusplus
}
#endif
#endif
