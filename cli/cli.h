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

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* ---- util.c ---------------------------------------------------------------------------------- */

/* Print "gpuhist: <message>\n" on stderr. @return `status`, for `return cli_error(...)`. */
int cli_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print "gpuhist: <message>\n" on stderr (verbose / notes). */
void cli_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

double cli_now(void);                 /* monotonic seconds */
int cli_isatty(FILE *f);
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
} cli_read_options;

/* Read the whole input into one buffer. @return CLI_EXIT_* (message printed). */
int cli_read_input(const cli_read_options *opt, cli_input *in);
void cli_input_free(cli_input *in);

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int cli_slurp(const char *path, const char *what, int progress, char **buf, size_t *len);

/* Parse text numbers (white space / commas / '#' comments) as `dtype`. `name` prefixes the
 * messages ("name:LINE: ..."). On failure returns `fail_status`. *out is malloc'd. */
int cli_parse_text(const char *name, const char *text, size_t len, gpuhist_dtype dtype,
                   int progress, int fail_status, void **out, uint64_t *count);

/* ---- writers.c ------------------------------------------------------------------------------- */

typedef enum cli_format { CLI_FMT_DEFAULT = 0, CLI_FMT_TABLE, CLI_FMT_CSV, CLI_FMT_JSON } cli_format;

typedef struct cli_histogram {
    const gpuhist_result *result; /* bins, channels, tallies, backend, strategy, seconds */
    const uint64_t *counts;       /* result->channels * result->bins */
    const double *edges;          /* bins + 1 */
    gpuhist_dtype dtype;
    gpuhist_bin_kind kind;
    int per_channel;              /* --channels given: counts is an array of arrays */
} cli_histogram;

/* Write the histogram in `format` to `f`; `bars` draws bars (table only, `columns` wide). */
void cli_write_histogram(FILE *f, cli_format format, const cli_histogram *h, int bars,
                         int columns);

/* Output file: written to a temporary file beside `path` and renamed over it on success, so a
 * failed run never leaves a half-written output. path NULL or "-" = stdout. */
typedef struct cli_output {
    FILE *f;
    char *path;
    char *tmp;
} cli_output;
int cli_output_open(cli_output *o, const char *path);
int cli_output_commit(cli_output *o);  /* flush, close, rename; @return CLI_EXIT_* */
void cli_output_abort(cli_output *o);  /* close and remove the temporary file */

/* ---- demo.c ---------------------------------------------------------------------------------- */

int cli_demo(int argc, char **argv);

#endif
