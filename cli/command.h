/*
 * command.h - what the files of the command's runs share (not installed): the parsed options
 * and the steps every run takes with them (the context, the bin specification, the result
 * arrays and the columns derived from them).
 *
 * The command is a pipeline of files, each doing one thing:
 *   main.c         which run: demo, --help, --version, a listing, N-D, images or samples
 *   options.c      the option table, --help's text, parsing, and the checks between options
 *   listings.c     --list-strategies and --list-devices
 *   context.c      the library context the options ask for (backend, devices, threads,
 *                  strategy), with the command's messages
 *   bins.c         the bin specification of a 1-D run (defaults per sample type)
 *   result.c       the result arrays (memory checked first), --density and --cumulative
 *   run_samples.c  one histogram of raw, .npy or text samples: streamed or read whole, with
 *                  weights and under MPI
 *   hybrid.c       a file counted on the CPU while the device starts (-B auto)
 *   run_images.c   one histogram of image files, or one per page (--each), --equalize
 *   run_nd.c       N-D histograms (--dims), with nd_axes.c (bins) and nd_formats.c
 *   detach.c       a run that may use a GPU returns when its output is complete, leaving the
 *                  device's release to a child process
 * Errors follow cli.h: one "gpuhist: ..." line, and the exit status returned.
 */
#ifndef GPUHIST_CLI_COMMAND_H
#define GPUHIST_CLI_COMMAND_H

#include "cli.h"
#include "image.h"
#include "plot.h"

/* Every option as given (options.c); what is not given keeps the default that
 * cli_parse_options sets. */
typedef struct cli_options {
    const char *input;
    int have_input;
    const char **inputs;       /* every positional argument (several only for images) */
    size_t ninputs;
    int image;                 /* --image */
    int each;                  /* --each */
    cli_roi roi;               /* --roi */
    const char *equalize;      /* --equalize OUT */
    cli_input_format in_format;
    int have_type;
    gpuhist_dtype type;
    int have_bins;
    uint32_t bins;
    const char *bins_rule;     /* -b RULE: NumPy's bin-count rule (bins.c's cli_rule_spec) */
    int numpy_rules;           /* --numpy-rules 1|2; 0: 2 (-b RULE's rules; the float32 edges
                                  of f32 data without -r) */
    int have_range;
    double lo, hi;
    const char *edges_arg;
    int have_integer;
    int64_t integer_lo;
    int last_inclusive;
    gpuhist_outliers outliers;
    const char *weights;      /* --weights FILE, NULL = unweighted */
    int have_weights_type;
    gpuhist_dtype weights_type;
    int squares;
    int density;
    int cumulative;
    int have_channels;
    uint32_t channels, active;
    uint32_t dims;             /* --dims N (N-D histogram, run_nd.c); 0 = 1-D */
    int dims_auto;             /* --dims auto */
    const char *bins_arg, *range_arg, *integer_arg; /* -b, -r, --integer as given */
    const char *axis_list;     /* the first of them given as a per-axis list (needs --dims) */
    gpuhist_backend backend;
    int backend_given;
    int device;
    int devices_given;         /* --devices: 1 = a list in devices[], 2 = all */
    int ndevices;
    int devices[64];
    const char *strategy;
    int threads;
    cli_format format;
    const char *output;
    const char *plot;          /* --plot FILE */
    cli_plot_format plot_format;
    int plot_log;              /* --plot-log */
    int verbose;
    int progress;
    int version, help, list_strategies, list_devices;
    int mpi;                   /* --mpi (MPI also starts by itself under a launcher) */
    int start_on_cpu;          /* --start-on-cpu: -B cuda|opencl count on the CPU while the
                                  device starts (auto does by default) */
} cli_options;

/* ---- options.c ------------------------------------------------------------------------------- */

/* Parse argv into `o` (o->inputs is calloc'd: free it) and check the options against each other.
 * @return CLI_EXIT_* (message printed). */
int cli_parse_options(int argc, char **argv, cli_options *o);
/* --help: the usage text on standard output. @return CLI_EXIT_* (message printed). */
int cli_print_help(void);

/* ---- listings.c ------------------------------------------------------------------------------ */

/* --list-strategies as a table (as wide as the terminal) or, with -f json, a JSON array. */
int cli_list_strategies(cli_format format);
/* --list-devices: each backend's devices (only -B's when given). */
int cli_list_devices(const cli_options *o);
/* `s` as a JSON string, quoted and escaped. */
void cli_json_string(FILE *f, const char *s);

/* ---- context.c ------------------------------------------------------------------------------- */

/* The options a run creates its context with: `o`, with auto moved to the CPU backend for
 * --weights (the backend that sums them). @return CLI_EXIT_* (message printed). */
int cli_context_options(const cli_options *o, cli_options *eff);
/* The context for -B, --device / --devices, -j and -s. @return CLI_EXIT_* (message printed;
 * *ctx NULL or destroyed on failure). */
int cli_create_context(const cli_options *o, gpuhist_ctx **ctx);
/* A library message without the backend's name in front ("cuda: no device" -> "no device"). */
const char *cli_without_backend_prefix(const char *why, const char *backend);

/* ---- hybrid.c: counting on the CPU while the device starts ----------------------------------- */

typedef struct cli_hybrid cli_hybrid;
/* Whether the options let a run start on the CPU: -B auto with CUDA built in (or -B cuda|opencl
 * with --start-on-cpu), no --device/--devices, weights, MPI, forced strategy or text. */
int cli_hybrid_wanted(const cli_options *o);
/* Start creating the device context of eff's backend on a thread of its own. NULL when no
 * thread could start (the caller creates its context as usual). */
cli_hybrid *cli_hybrid_start(const cli_options *eff);
/* The input is not counted on CPU threads: wait for the device thread's context and end it.
 * @return the context (auto's CPU fallback included), or NULL when it failed (the caller creates
 * one as usual, which reports why). h is freed. */
gpuhist_ctx *cli_hybrid_context(cli_hybrid *h);
/* The run's input may be handed over to the device (si->handover). */
void cli_hybrid_attach(cli_hybrid *h, cli_stream_input *si);
/* After the CPU threads are done: wait for the device's part when it took one. @return
 * CLI_EXIT_* (its message printed when it failed). */
int cli_hybrid_wait_part(cli_hybrid *h);
/* Add the device's counts and tallies into r (the CPU's finished result) and name both parts:
 * r->strategy "CPU's + device's", r->backend the device's. Nothing when it counted nothing. */
void cli_hybrid_add(cli_hybrid *h, gpuhist_result *r);
/* The device counted a part (then cli_hybrid_device_name names it). */
int cli_hybrid_took(const cli_hybrid *h);
const char *cli_hybrid_device_name(const cli_hybrid *h);
/* -v: which bytes each part counted, or why the device took none. */
void cli_hybrid_notes(cli_hybrid *h, uint64_t data_bytes);
/* The run is over (after cli_hybrid_wait_part, or on failure): the device takes nothing more.
 * Joins and frees everything and returns 0, or returns 1 when the device is still starting:
 * then the caller finishes (output committed, memory freed) and calls cli_hybrid_leave. */
int cli_hybrid_end(cli_hybrid *h);
/* Last of all: a device that got its context meanwhile is joined and freed (and this returns);
 * one still starting is left behind: the process ends with status rc at once (see hybrid.c). */
void cli_hybrid_leave(cli_hybrid *h, int rc);

/* ---- bins.c ---------------------------------------------------------------------------------- */

/* u8, i8, u16 and i16: the types whose default bins are one per value. */
int cli_is_small_int(gpuhist_dtype t);
/* The bin specification of the options for the samples `in` (its dtype and name; its data for
 * --integer without -b on 32/64-bit samples): the edges `edges` (edge_bins bins) of -e when
 * given. @return CLI_EXIT_* (message printed). */
int cli_build_spec(const cli_options *o, const cli_input *in, const double *edges,
                   uint32_t edge_bins, gpuhist_bin_spec *spec);
/* -b RULE: the bins NumPy's rule (NumPy o->numpy_rules' rules, default 2) gives the samples `s`
 * the run histograms (read whole, host memory; `name` for messages), with -r's range when
 * given; f32 samples without a range under NumPy 2 get NumPy 2's float32 edges (the spec's
 * float32_linspace), counted as even bins. @return CLI_EXIT_* (message printed). */
int cli_rule_spec(const cli_options *o, gpuhist_ctx *ctx, const char *name,
                  const gpuhist_samples *s, gpuhist_bin_spec *spec);

/* ---- result.c -------------------------------------------------------------------------------- */

/* Allocate the counts and edges (and the sums with --weights, the squares with --squares) of
 * `spec` for o->active channels, once the host memory is known to hold them. @return CLI_EXIT_*
 * (message printed; what was allocated is the caller's to free). */
int cli_alloc_result(const cli_options *o, const gpuhist_bin_spec *spec, uint64_t **counts,
                     double **edges, double **sums, double **squares);
/* `bytes` of memory for a result array (zeroed when `zero`); 4 MiB or more on transparent huge
 * pages where the kernel grants them. Freed with free(); NULL when out of memory. */
void *cli_result_array(size_t bytes, int zero);
/* NumPy's pairwise summation of n doubles `stride` apart (its pairwise_sum: 8 partial sums up
 * to 128 values, halves above), the order of NumPy 2's sum() of a contiguous array. */
double cli_pairwise_sum(const double *a, size_t n, size_t stride);
/* NumPy's density of each channel of `r` into `out` (bins x channels). */
void cli_density_of(const gpuhist_result *r, const uint64_t *counts, const double *sums,
                    const double *edges, double *out);
/* The running totals of each channel's counts (np.cumsum) into `out` (bins x channels). */
void cli_cumulative_of(const gpuhist_result *r, const uint64_t *counts, uint64_t *out);

/* ---- run_samples.c, run_images.c, run_nd.c --------------------------------------------------- */

/* One histogram of the input's samples (raw, .npy or text), written where the options say. */
int cli_run_samples(const cli_options *o);
/* Whether the run reads images: --image, or every input a directory or an image file.
 * @return CLI_EXIT_* (message printed: inputs that mix images and others, image options on
 * other input). */
int cli_image_inputs(const cli_options *o, int *images);
/* The histogram(s) of the image inputs, written where the options say. */
int cli_run_images(const cli_options *o);
/* An N-D histogram of the input's points (--dims), written where the options say (run_nd.c). */
int cli_run_nd(const cli_options *o);

/* detach.c: before a run that may use a GPU, fork; the parent waits for the child's status and
 * exits with it (never returns); the child returns and runs the command. */
void cli_detach_start(const cli_options *o);
/* The run's status `rc`, sent to a waiting parent after standard output and error are flushed
 * and pointed at /dev/null; the device is released when the child exits. @return rc. */
int cli_detach_end(int rc);

#endif
