/*
 * cli.h - what the parts of the gpuhist command share (not installed).
 *
 * Error convention: every function that can fail prints exactly one line "gpuhist: ..." on
 * stderr naming the file / option / line, and returns the exit status the command should end
 * with (CLI_EXIT_FAIL or CLI_EXIT_USAGE); CLI_EXIT_OK on success. main() only propagates it.
 */
#ifndef GPUHIST_CLI_H
#define GPUHIST_CLI_H

#include "gpuhist.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* ---- util.c ---------------------------------------------------------------------------------- */

/* Print "gpuhist: <message>\n" on stderr. @return `status`, for `return cli_error(...)`. */
int cli_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Keep cli_error's messages instead of printing them (on: under MPI, see mpi.c): the first one
 * is kept, cli_error_captured() returns it (NULL when none). */
void cli_error_capture(int on);
const char *cli_error_captured(void);
/* Keep the calling thread's cli_error messages in buf (len bytes; the first one only) instead of
 * printing them; len 0 prints them again. Other threads are not affected. */
void cli_error_capture_thread(char *buf, size_t len);
/* Print "gpuhist: <message>\n" on stderr (verbose / notes). */
void cli_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* -v's lifetime line: cli_mark_main() at the top of main, cli_note_lifetime() at the end of a
 * run (the time since main began, and the process's age when it did). */
void cli_mark_main(void);
void cli_note_lifetime(void);
double cli_now(void);                 /* monotonic seconds */
double cli_peak_memory_mib(void);     /* peak resident memory of this process, 0 if unknown */
int cli_isatty(FILE *f);
void cli_no_terminal(void);          /* from now on cli_isatty() answers 0 (MPI ranks) */
int cli_terminal_columns(void);       /* of stdout, 80 when unknown */
int cli_utf8(void);                   /* the locale environment asks for UTF-8 */
int cli_host_little_endian(void);

/* Shortest decimal that reads back as exactly `v` (%.17g at worst). buf >= 32 bytes. */
void cli_format_double(char *buf, size_t size, double v);
/* "64.0 MiB" */
void cli_format_bytes(char *buf, size_t size, double bytes);

/* Strict number parsing of a whole string (no trailing junk); @return 1 on success. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_i64(const char *s, int64_t *out);
int cli_parse_double(const char *s, double *out); /* finite only */
/* Like cli_parse_double; @return NULL on success, else what is wrong with `s`, to follow it in
 * a message: "is not a number", "is beyond the range of a double", "is not finite". */
const char *cli_double_problem(const char *s, double *out);

/* Flush standard output. @return CLI_EXIT_OK, or CLI_EXIT_FAIL after printing "standard
 * output: write error: ..." when anything written to it was lost (a full disk, a closed pipe). */
int cli_flush_stdout(void);

/* Command-line options: "--name VALUE", "--name=VALUE", "-x VALUE", "-xVALUE"; "--" ends
 * options; "-" is a positional argument (standard input). */
typedef struct cli_optdef {
    const char *name;  /* long name without "--" */
    char short_name;   /* 0 = none */
    int has_arg;
    int id;
} cli_optdef;
enum { CLI_OPT_END = -1, CLI_OPT_POSITIONAL = -2, CLI_OPT_ERROR = -3 };
typedef struct cli_getopt {
    int argc;
    char **argv;
    int i;
    int no_more_options;
    const char *arg;   /* the option's value, or the positional argument */
    char shown[64];    /* the option as the user wrote it, for messages */
} cli_getopt;
void cli_getopt_init(cli_getopt *g, int argc, char **argv);
/* @return the matched definition's id, CLI_OPT_POSITIONAL, CLI_OPT_END, or CLI_OPT_ERROR (an
 * unknown option or a missing value; the message is printed; exit with CLI_EXIT_USAGE). */
int cli_getopt_next(cli_getopt *g, const cli_optdef *defs);

/* Progress bar on stderr: shown only when stderr is a terminal, enabled, and the work has
 * already taken more than about a second (so short runs print nothing at all). */
typedef struct cli_progress {
    int enabled;
    const char *label;
    double total;   /* units of work (bytes); 0 = unknown */
    double start;
    double last_draw;
    int drawn;
} cli_progress;
void cli_progress_start(cli_progress *p, int enabled, const char *label, double total);
void cli_progress_update(cli_progress *p, double done);
void cli_progress_end(cli_progress *p);

/* ---- edges.c --------------------------------------------------------------------------------- */

/* Check bin edges: at least 2 and at most max_bins + 1 of them, finite, strictly increasing;
 * `name` starts each message. @return CLI_EXIT_* (message printed). */
int cli_check_edges(const char *name, const double *e, uint64_t n, uint64_t max_bins);
/* Bin edges from "E0,E1,..." (commas, white space around the numbers; an empty item refused) or
 * "@FILE" (read like --text input), checked by cli_check_edges. Messages start with `name` (with
 * the file's name for a file). *edges malloc'd. @return CLI_EXIT_* (message printed). */
int cli_parse_edges(const char *arg, const char *name, uint64_t max_bins, double **edges,
                    uint32_t *bins);

/* ---- shortest.c ------------------------------------------------------------------------------ */

/* The shortest decimal that reads back (strtod) as exactly `v`, nearest to v among those, laid
 * out as cli_format_double documents (Ryu; see shortest.c). buf >= 32 bytes; NUL-terminated.
 * @return its length. */
size_t cli_shortest_double(char *buf, double v);
/* The same for a float32 (strtof), laid out as printf's %.{digits}g: "1e+06", "0.1", "3.4e+38".
 * buf >= 32 bytes. @return its length. */
size_t cli_shortest_float_g(char *buf, float v);
/* The number of decimal digits of v (1 for 0). */
int cli_u64_digits(uint64_t v);
/* v in decimal at `out` (no NUL). @return the end. */
char *cli_put_u64(char *out, uint64_t v);

/* ---- readers.c ------------------------------------------------------------------------------- */

typedef enum cli_input_format {
    CLI_IN_AUTO = 0, /* .npy when the file starts with the .npy magic, else raw */
    CLI_IN_RAW,
    CLI_IN_NPY,
    CLI_IN_TEXT
} cli_input_format;

typedef struct cli_input {
    void *data;             /* malloc'd: the samples, host byte order */
    void *block;            /* malloc'd block `data` points into (free this) */
    uint64_t samples;       /* number of values (pixels * channels) */
    gpuhist_dtype dtype;
    cli_input_format format;/* what was actually read */
    double bytes_read;      /* size of the input as read */
    double seconds;         /* time spent reading and decoding */
    char name[512];         /* for messages: the path or "standard input" */
} cli_input;

typedef struct cli_read_options {
    const char *path;       /* NULL or "-" = standard input */
    cli_input_format format;
    int have_type;          /* -t given */
    gpuhist_dtype type;
    uint32_t channels;      /* pixel size check for raw input */
    int progress;           /* allow a progress bar */
    int sniff_pipe;         /* a pipe will be streamed whatever its format: cli_stream_input_open
                               reads its first bytes to tell .npy from raw */
    int weighted;           /* --weights: pixels are matched to weights in C order, so a
                               Fortran-order .npy of more than one dimension is refused */
} cli_read_options;

/* The format of an input: `forced` unless CLI_IN_AUTO, else the format whose signature starts
 * `head` (the first `len` bytes), else the one whose file name ending `path` has (not for
 * standard input), else CLI_IN_RAW. */
cli_input_format cli_input_format_detect(cli_input_format forced, const char *path,
                                         const unsigned char *head, size_t len);
/* Whether `head` starts with the signature of format `f` (0 for formats without one). */
int cli_input_format_signed(cli_input_format f, const unsigned char *head, size_t len);
/* ".npy", "text", "raw": the format's name in messages and -v lines. */
const char *cli_input_format_name(cli_input_format f);

/* Read the whole input into one buffer. @return CLI_EXIT_* (message printed). */
int cli_read_input(const cli_read_options *opt, cli_input *in);
void cli_input_free(cli_input *in);

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int cli_slurp(const char *path, const char *what, int progress, char **buf, size_t *len);
/* "NAME: size N bytes is not a multiple of the sample (pixel) size ..." @return CLI_EXIT_FAIL. */
int cli_size_error(const char *name, uint64_t bytes, gpuhist_dtype dtype, uint32_t channels);

/* ---- text.c ---------------------------------------------------------------------------------- */

/* Parse text numbers (white space / commas / '#' comments) as `dtype`. `name` prefixes the
 * messages ("name:LINE: ..."). On failure returns `fail_status`. *out is malloc'd. */
int cli_parse_text(const char *name, const char *text, size_t len, gpuhist_dtype dtype,
                   int progress, int fail_status, void **out, uint64_t *count);
/* The same for a part of a longer text that starts on line `first_line` (for the messages). */
int cli_parse_text_at(const char *name, const char *text, size_t len, unsigned long first_line,
                      gpuhist_dtype dtype, int progress, int fail_status, void **out,
                      uint64_t *count);

/* ---- npy.c ----------------------------------------------------------------------------------- */

/* A .npy header (format versions 1, 2, 3), as cli_npy_parse_header() reads it. */
typedef struct cli_npy_info {
    gpuhist_dtype dtype;    /* the samples' type (bool reads as u8) */
    int swap;               /* the data's byte order is not the host's: reverse each sample */
    uint64_t count;         /* values in the array: the product of the shape */
    int count_overflow;     /* that product does not fit in 64 bits (count is meaningless) */
    size_t data_offset;     /* where the data starts: magic, version, length and header */
    int fortran;            /* fortran_order is True */
    int ndim;               /* dimensions of the shape (0 for a scalar) */
    uint64_t first_dim;     /* shape[0] (0 for a scalar) */
    uint64_t last_dim;      /* shape[ndim - 1]: the columns of a 2-D array (0 for a scalar) */
    unsigned version;       /* the format's major version */
    char descr[64];         /* the dtype string as written, e.g. "<f4" */
} cli_npy_info;

/* The size of the .npy preamble plus header (= the data offset) from the first bytes of a file
 * (10 for version 1, 12 for versions 2 and 3 are enough). Prints nothing. @return 0 when `buf`
 * is too short to tell, lacks the magic, or has an unknown version. */
size_t cli_npy_header_size(const unsigned char *buf, size_t len);

/* Parse the .npy header at the start of `buf`, which holds the first `len` bytes of a file:
 * the whole file, or at least the header (cli_npy_header_size() bytes); the data itself is not
 * looked at, so checking that the file holds count * size bytes is the caller's job. `name`
 * prefixes the messages. @return CLI_EXIT_* (message printed); *out is filled on success. */
int cli_npy_parse_header(const char *name, const unsigned char *buf, size_t len,
                         cli_npy_info *out);

/* The same for a .npy of weights: only float32 and float64 ('<f4', '<f8', '>f4', '>f8') are
 * accepted, any other dtype is refused with a message saying so. */
int cli_npy_parse_weights_header(const char *name, const unsigned char *buf, size_t len,
                                 cli_npy_info *out);

/* The checks of a parsed .npy header against the options (Fortran order with channels or
 * weights, a conflicting -t) and against the `have` bytes of data the file holds.
 * @return CLI_EXIT_*. */
int cli_npy_check(const cli_read_options *opt, const char *name, const cli_npy_info *h,
                  uint64_t have);

/* The bytes of a chunk (util.c): 16 MiB, or GPUHIST_CHUNK_MIB (1..1024) for measurements and
 * tests. */
size_t cli_chunk_bytes(void);
/* A first pass over data in parts: take a part's finite min a and max b into *lo, *hi (min of
 * mins, max of maxes; *found: some part had a finite value). gpuhist_minmax reports -0.0 as 0.0,
 * so the order the parts come in never changes the result. */
void cli_minmax_take(double *lo, double *hi, int *found, double a, double b);
/* read() into dst until `want` bytes or the end of the input (*eof set then) (util.c).
 * @return the bytes read, or -1 with errno. */
ssize_t cli_read_full(int fd, void *dst, size_t want, int *eof);

/* ---- source.c -------------------------------------------------------------------------------- */

struct cli_weights;

/* Binary input (raw or .npy) to be streamed through the library in chunks. */
/* The rest of a file handed over from the CPU counting threads to a device (source.c). */
typedef struct cli_handover cli_handover;

typedef struct cli_stream_input {
    int fd;
    int owns_fd;
    int is_regular;          /* a regular file (else a pipe, terminal, device: read in order) */
    cli_input_format format; /* RAW, NPY or TEXT; a pipe not declared --raw or --text is AUTO
                                unless sniffed (cli_read_options.sniff_pipe) */
    gpuhist_dtype dtype;
    size_t sample_size, pixel_bytes;
    int swap;                /* reverse the bytes of each sample (big-endian .npy) */
    uint64_t data_offset;    /* where the samples start in the file */
    uint64_t data_bytes;     /* bytes of samples (a raw pipe or text: known after the run) */
    uint64_t text_bytes;     /* text: the bytes of text read */
    int bounded;             /* a .npy pipe: exactly data_bytes follow its header */
    unsigned char prefix[16];/* a sniffed pipe's first bytes that are samples */
    size_t nprefix;
    double seconds;          /* time spent reading and counting */
    struct cli_weights *weights; /* set before cli_stream_input_run for a weighted stream: each
                                    chunk is fed with its pixels' weights (own buffers, never
                                    lent ones); NULL = unweighted */
    int shared;              /* cli_stream_input_share narrowed the data to a range of pixels */
    uint64_t whole_bytes;    /* then: the data bytes of the whole input */
    uint64_t share_first;    /* and the first pixel of the range */
    int cpu_threads;         /* CPU backend: threads of the first pass and of the counting
                                (0: one per core) */
    /* CPU backend, set before cli_stream_input_run to count a regular raw or .npy file on
     * counting threads (source.c): the stream's layout, bins and --strategy (NULL: auto). Their
     * counts and tallies are then in side (counts: side_counts), for cli_stream_input_add_side;
     * layout NULL: everything is fed to the run's stream. */
    const gpuhist_samples *layout;
    const gpuhist_bin_spec *spec;
    const char *strategy;
    uint64_t *side_counts;
    gpuhist_result side;
    cli_handover *handover;  /* the counting threads may hand the rest of the file over to a
                                device (a run that starts on the CPU, hybrid.c); NULL: never */
    char name[512];
} cli_stream_input;

/* Open the input and, for a regular file, read its format, type and size (messages as
 * cli_read_input gives them). Text is only opened; a pipe is sniffed when asked (a .npy header
 * read, else raw), else only opened (a pipe declared --raw takes its type from -t).
 * @return CLI_EXIT_*. */
int cli_stream_input_open(const cli_read_options *opt, cli_stream_input *in);
/* Ask the kernel, from a thread of its own, to start reading the first part of `path` (a
 * regular file; nothing for "-" or anything else) into the page cache, so that a cold file's
 * first chunks arrive while the device starts. Never fails. */
void cli_readahead(const char *path);
/* Read the whole input into the open stream `st` (see source.c). @return CLI_EXIT_*. */
int cli_stream_input_run(cli_stream_input *in, gpuhist_stream *st, int cpu_backend, int progress);
void cli_stream_input_close(cli_stream_input *in);
/* Add what the counting threads counted (in->side) into r, the run's stream's finished result,
 * and free it; nothing when they did not run. */
void cli_stream_input_add_side(cli_stream_input *in, gpuhist_result *r);
/* The histograms a pixel of `in`'s layout (set) feeds: its channel mask's, its active channels,
 * or all its channels. */
uint32_t cli_stream_input_histograms(const cli_stream_input *in);
/* Whether cli_stream_input_run counts `in` (a regular raw or .npy file; the layout and spec set)
 * on CPU counting threads when the backend is the CPU: not byte-swapped, unweighted, the
 * histograms' copies on every counting thread within COUNT_THREADS_MAX_BYTES (12 bytes a
 * counter). */
int cli_stream_input_on_threads(const cli_stream_input *in);

/* The handover (source.c): the counting threads claim pieces of the file from one cursor; a
 * device that becomes ready takes the pieces not yet claimed, [cursor, end), and the threads
 * claim no more. For the tests (GPUHIST_HYBRID_SPLIT): forced_split fixes the cursor instead
 * (the threads count pieces [0, forced_split), the device the rest); hold_at makes the threads
 * wait before claiming piece hold_at or later until the device took the cursor or gave up
 * (cli_handover_release). UINT64_MAX: neither. @return NULL when out of memory. */
cli_handover *cli_handover_new(uint64_t forced_split, uint64_t hold_at);
/* Device side: it will take nothing (or has taken): threads held by hold_at go on. */
void cli_handover_release(cli_handover *h);
/* Free it; only once neither side uses it any more. */
void cli_handover_free(cli_handover *h);
/* Device side: wait until the counting threads start on a file; then *in is a copy of its
 * input, *layout and *spec copies of what it is counted with, and 1 is returned; 0 when the
 * handover was closed first and holds no tail for the device. */
int cli_handover_wait(cli_handover *h, cli_stream_input *in, gpuhist_samples *layout,
                      gpuhist_bin_spec *spec);
/* Device side, once ready: take the pieces the threads have not claimed. *tail is the input
 * narrowed to their bytes (layout unset: read with pread into staging). @return 1 when there
 * are such bytes (the device must count them), 0 when none are left or it was closed. */
int cli_handover_take(cli_handover *h, cli_stream_input *tail);
/* Close it (the threads are done, or the file was not counted on threads): a device takes
 * nothing from now on. Idempotent. @return 1 when a device took a tail, its first byte of the
 * data in *from (may be NULL). */
int cli_handover_close(cli_handover *h, uint64_t *from);
/* Count a tail from cli_handover_take into `st` (parallel pread into the stream's staging
 * buffers, no progress bar). @return CLI_EXIT_* (message through cli_error). */
int cli_stream_input_count_tail(const cli_stream_input *tail, gpuhist_stream *st);
/* Prepare a device context (CUDA, OpenCL; one device) for the stream of `layout` and `spec`
 * that will read `in`: a stream is begun, its staging buffers lent at the size the feeds will
 * ask for (so they are allocated and page-locked now), one chunk of zeros of the first chunk's
 * size counted through the first (so every kernel the stream runs, counting and finish, is
 * loaded), finished and thrown away; the counters are left zero for the next stream. Costs
 * paid here are not paid inside the stream that follows. Best effort: a failure is met again,
 * and reported, by that stream. *seconds: the time taken. @return 1 when prepared, 0 when
 * skipped (CPU backend, weights, text, several devices) or failed. */
int cli_stream_prepare(gpuhist_ctx *ctx, const cli_stream_input *in,
                       const gpuhist_samples *layout, const gpuhist_bin_spec *spec,
                       double *seconds);
/* Narrow an open regular raw or .npy input to pixels [first, first + pixels) of its data (whole
 * pixels, so channels never split): the run, the first pass and their reads see only those
 * (an MPI rank's share). */
void cli_stream_input_share(cli_stream_input *in, uint64_t first, uint64_t pixels);
/* The finite min and max of the histogrammed channels of a regular file (a first pass for the
 * auto range, through gpuhist_minmax on `ctx`). @return CLI_EXIT_*. */
int cli_stream_input_minmax(const cli_stream_input *in, gpuhist_ctx *ctx, uint32_t channels,
                            uint32_t active, double *lo, double *hi, int *found);

/* ---- weights.c ------------------------------------------------------------------------------- */

/* --weights FILE: one weight per pixel, in pixel order. A .npy of float32 or float64 (any shape
 * in C order, any byte order; recognised by its magic) or raw little-endian samples of
 * --weights-type (f32 or f64). A regular file is read with pread() at each chunk's offset; a
 * pipe (or standard input) is read in order. */
typedef struct cli_weights {
    int fd;
    int owns_fd;
    int is_regular;
    int is_npy;
    gpuhist_dtype dtype;     /* GPUHIST_F32 or GPUHIST_F64 */
    size_t size;             /* 4 or 8 */
    int swap;                /* reverse the bytes of each weight */
    uint64_t data_offset;    /* where the weights start in a regular file */
    uint64_t count;          /* weights the input holds, when count_known */
    int count_known;         /* a regular file or a .npy pipe (its header says) */
    unsigned char prefix[16];/* a raw pipe's first bytes, read to tell .npy from raw */
    size_t nprefix;
    uint64_t next;           /* weights handed out so far */
    uint64_t pixels;         /* pixels seen by cli_weights_feed (also those past the end) */
    uint64_t expect;         /* the data's pixels when known before reading, else UINT64_MAX */
    int exhausted;           /* the weights ended before the data */
    unsigned char *buf;      /* a chunk's weights */
    size_t cap;
    char name[512];
} cli_weights;

/* Open the weights (path "-" = standard input) and read what tells their type and count (a
 * .npy header; the size of a regular file). @return CLI_EXIT_* (message printed). */
int cli_weights_open(const char *path, int have_type, gpuhist_dtype type, cli_weights *w);
/* The data holds `pixels` pixels, known before it is read: a different count of weights fails
 * now ("W: 999 weights for 1000 pixels"), and cli_weights_feed fails as soon as they run out.
 * @return CLI_EXIT_*. */
int cli_weights_expect(cli_weights *w, uint64_t pixels);
/* Feed `pixels` pixels at `data` (pixel_bytes each) to the weighted stream `st` with their
 * weights, the next ones in order, in pieces of at most a chunk of weights. When the weights run
 * out, the pixels after them are only counted (for the message of cli_weights_end), or, with the
 * count expected, it fails at once. `data_name` names the data in the stream's messages.
 * @return CLI_EXIT_*. */
int cli_weights_feed(cli_weights *w, gpuhist_stream *st, const void *data, uint64_t pixels,
                     size_t pixel_bytes, const char *data_name);
/* The next `k` weights into dst (k * w->size bytes), for data read in step with them (the N-D
 * stream): fewer than k left is an error naming both counts. @return CLI_EXIT_*. */
int cli_weights_read(cli_weights *w, void *dst, uint64_t k);
/* After the last feed: the weights must have ended exactly with the data (the rest of a pipe is
 * read to count it). @return CLI_EXIT_*. */
int cli_weights_end(cli_weights *w);
/* All the weights, for data of `pixels` pixels read whole: *out is malloc'd (host byte order).
 * @return CLI_EXIT_* (a different count fails with the message above). */
int cli_weights_read_all(cli_weights *w, uint64_t pixels, void **out);
void cli_weights_close(cli_weights *w);
/* After cli_weights_expect on a regular file: keep only the weights of pixels [first, first +
 * pixels), the share of the data cli_stream_input_share kept. */
void cli_weights_share(cli_weights *w, uint64_t first, uint64_t pixels);

/* ---- writers.c ------------------------------------------------------------------------------- */

typedef enum cli_format {
    CLI_FMT_DEFAULT = 0,
    CLI_FMT_TABLE,
    CLI_FMT_CSV,
    CLI_FMT_JSON,
    CLI_FMT_NPY /* the counts as a .npy array (uint64 '<u8'); the edges, sums and sums of
                   squares in files beside it (cli_npy_open_sides, cli_npy_commit) */
} cli_format;

typedef struct cli_histogram {
    const gpuhist_result *result; /* bins, channels, tallies, backend, strategy, seconds */
    const uint64_t *counts;       /* result->channels * result->bins */
    const double *edges;          /* bins + 1 */
    gpuhist_dtype dtype;
    gpuhist_bin_kind kind;
    int per_channel;              /* --channels given: counts is an array of arrays */
    const double *sums;           /* --weights: the sums of weights, laid out as counts; NULL */
    const double *sums_squared;   /* --squares: the sums of squared weights; NULL */
    const double *density;        /* --density: NumPy's density, laid out as counts; NULL */
    const uint64_t *cumulative;   /* --cumulative: running totals of the counts; NULL */
} cli_histogram;

/* At most n threads format a large histogram's rows (-j; 0: no limit beyond the cores). */
void cli_writers_threads(int n);

/* The writers' output buffer (writers.c; nd_formats.c writes through it too): text is built in
 * a buffer of 1 MiB (16 KiB when that cannot be had) and handed to the stream in big pieces.
 * Ask for room with cli_obuf_room (at most CLI_OBUF_ROOM bytes at a time), write into it and
 * say where the text ends with cli_obuf_done; or cli_obuf_put / puts / printf. Write errors are
 * left in the stream's error flag. The fields are writers.c's. */
enum { CLI_OBUF_ROOM = 1 << 12 };
typedef struct cli_obuf {
    FILE *f;     /* NULL: a memory buffer (the writers' threads), grown instead of flushed */
    char *buf;
    size_t len, cap;
    int owned;   /* buf is malloc'd */
    int failed;  /* a memory buffer that could not grow: its text is incomplete */
} cli_obuf;
void cli_obuf_open(cli_obuf *b, FILE *f);
void cli_obuf_close(cli_obuf *b);       /* flush to the stream and free the buffer */
char *cli_obuf_room(cli_obuf *b, size_t n);
void cli_obuf_done(cli_obuf *b, const char *end);
void cli_obuf_put(cli_obuf *b, const void *s, size_t n);
void cli_obuf_puts(cli_obuf *b, const char *s);
void cli_obuf_printf(cli_obuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A .npy format 1.0 header into b, as NumPy writes it: an array of `descr` ("<u8", "<f8") and
 * `shape` ("(5,)", "(3, 2)"), C order; the data that follows starts at a multiple of 64. */
void cli_obuf_npy_header(cli_obuf *b, const char *descr, const char *shape);
/* n 64-bit words (uint64 or the bits of doubles) into b in little-endian order. */
void cli_obuf_le64(cli_obuf *b, const void *words, size_t n);

/* Rows [first, end) of some format appended to b (cli_obuf_room / cli_obuf_done, or any
 * cli_obuf writer); arg: the format's layout. Each row's text depends on its index alone. */
typedef void (*cli_obuf_rows_fn)(cli_obuf *b, const void *arg, uint64_t first, uint64_t end);
/* Rows [0, rows) of fn appended to b in order: the bytes of one fn(b, arg, 0, rows), formatted
 * on the writers' threads in ranges of 8192 rows when there are 2^16 rows or more. */
void cli_obuf_rows(cli_obuf *b, cli_obuf_rows_fn fn, const void *arg, uint64_t rows);

/* Write the histogram in `format` to `f`; `bars` draws bars (table only, `columns` wide). */
void cli_write_histogram(FILE *f, cli_format format, const cli_histogram *h, int bars,
                         int columns);

/* -f npy: the arrays written beside the counts, each a .npy '<f8' file: the edges (bins + 1),
 * the sums of weights and the sums of their squares (shaped as the counts). */
enum { CLI_NPY_EDGES = 0, CLI_NPY_SUMS, CLI_NPY_SUMS_SQUARED, CLI_NPY_SIDES };
/* The file of side `what` ("edges", "sums", "sums_squared") beside counts file `path`:
 * "X.npy" -> "X.edges.npy", another name gets ".edges.npy" appended. @return malloc'd; NULL when
 * out of memory. */
char *cli_npy_side_path(const char *path, const char *what);
/* After cli_output_open(counts, ...): refuse a terminal (CLI_EXIT_USAGE); when the counts go to
 * a regular file, open the edges file beside it, and the sums / sums_squared files when asked;
 * else leave every side's f NULL (the counts only), which is refused (CLI_EXIT_USAGE) when sums
 * are asked for, as they would be lost. `side` (CLI_NPY_SIDES of them) is zeroed first.
 * @return CLI_EXIT_* (message printed). */
struct cli_output;
int cli_npy_open_sides(const struct cli_output *counts, int sums, int squares,
                       struct cli_output *side);
/* Write the side arrays, then commit every output only once all are written in full; on
 * failure all are aborted. @return CLI_EXIT_* (message printed). */
int cli_npy_commit(struct cli_output *counts, struct cli_output *side, const cli_histogram *h);
/* The tallies (underflow, overflow, nan, total; per channel) on stderr, for -v with -f npy. */
void cli_note_tallies(const cli_histogram *h);

/* ---- output.c -------------------------------------------------------------------------------- */

/* Output (-o PATH). A regular file, or a path that does not exist yet, is written to a temporary
 * file beside it (beside the final target of a symbolic link) and renamed over it only when
 * complete, so a failed or interrupted run never leaves a half-written file; a device, FIFO or
 * socket is written straight to. PATH NULL or "-" (or a name of standard output itself, such as
 * /dev/stdout) = standard output. Refused: a directory, and the input file (see
 * cli_output_set_input). Up to 12 outputs may be open at once; SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE remove their temporary files before the signal ends the process. */
typedef struct cli_output {
    FILE *f;
    char *path;      /* as given, for messages */
    char *target;    /* the file the temporary is renamed over (links followed) */
    const char *tmp; /* the temporary file; NULL when written straight to */
    int slot;        /* tmp's entry in the table the signal handler cleans up */
} cli_output;
/* The file the input is read from (NULL or "-" = standard input), which no output may replace:
 * cli_output_open refuses it (same device and inode, so also through links) with
 * CLI_EXIT_USAGE. Call before cli_output_open; it forgets the files protected before. */
void cli_output_set_input(const char *input_path);
/* One more file no output may replace (the weights), `what` naming it in the message. */
void cli_output_protect(const char *path, const char *what);
int cli_output_open(cli_output *o, const char *path); /* @return CLI_EXIT_* (message printed) */
int cli_output_commit(cli_output *o);  /* flush, close, rename; @return CLI_EXIT_* */
void cli_output_abort(cli_output *o);  /* close and remove the temporary file */

/* ---- mpi.c ------------------------------------------------------------------------------------ */

/* The command under an MPI launcher (mpi.c has the mechanism). Built without MPI, MPI is never
 * on and these do nothing (cli_mpi_start refuses --mpi). */
int cli_mpi_built(void);      /* the command was built with MPI */
int cli_mpi_launched(void);   /* started by an MPI launcher (its environment), GPUHIST_MPI != 0 */
/* MPI_Init; rank > 0: standard output to /dev/null; every rank's messages kept for the
 * agreements. @return CLI_EXIT_*. */
int cli_mpi_start(int *argc, char ***argv);
int cli_mpi_on(void);
int cli_mpi_rank(void);       /* 0 when MPI is off */
int cli_mpi_ranks(void);      /* 1 when MPI is off */
/* Collective (every rank, in the same order): `rc` is this rank's CLI_EXIT_* so far, `key` what
 * must be equal on every rank that has not failed. @return the status of the lowest failing rank
 * (which alone prints its kept message), CLI_EXIT_FAIL for keys that differ, else CLI_EXIT_OK.
 * A failure agreed is final. Without MPI: rc. */
int cli_mpi_agree(int rc, uint64_t key);
/* The last agreement and MPI_Finalize. @return the status to exit with. */
int cli_mpi_end(int rc);
/* This rank's share of `total` pixels: [floor(total * r / N), floor(total * (r + 1) / N)). */
void cli_mpi_share(uint64_t total, uint64_t *first, uint64_t *count);
/* The device of this rank on `backend` (its rank among the ranks of this host, modulo the
 * devices), -1 when one rank per host or one device. */
int cli_mpi_device(gpuhist_backend backend);
/* CPU threads for this rank (the cores shared out between the ranks of this host); 0 = all. */
int cli_mpi_threads(void);
/* The auto range's min / max / found of every rank combined (collective). @return CLI_EXIT_*. */
int cli_mpi_minmax(double *lo, double *hi, int *found);
/* gpuhist_mpi_stream_finish onto rank 0 (collective); without MPI gpuhist_stream_finish. */
gpuhist_status cli_mpi_stream_finish(gpuhist_ctx *ctx, gpuhist_stream *st,
                                     const gpuhist_samples *layout, const gpuhist_bin_spec *spec,
                                     gpuhist_result *r);
/* The message of a failed cli_mpi_stream_finish ("rank R: " in front when not rank 0's). */
const char *cli_mpi_error(char *buf, size_t size);

/* ---- demo.c ---------------------------------------------------------------------------------- */

int cli_demo(int argc, char **argv);

#endif
