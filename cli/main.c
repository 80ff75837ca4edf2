/*
 * main.c - the gpuhist command: options (README.md, "Using the command"), the bin
 * specification, the run (the input, and its weights, streamed through the library or read
 * whole), the output.
 *
 * Order of work, chosen so that mistakes cost nothing: every option is checked first (exit 2),
 * then the context is created and a forced strategy checked, the output opened, the input and
 * the weights opened (their counts compared when both are known, a backend that cannot sum
 * weights refused), and only then is a possibly huge input read. The output goes through
 * output.c: a file only appears once it is complete.
 * Under an MPI launcher (mpi.c) every rank runs this on its share of the input's pixels
 * (share_out), meeting the others at agreements before each collective step; rank 0 writes.
 */
#include "cli.h"
#include "image.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    O_TYPE = 1, O_TEXT, O_RAW, O_NPY, O_BINS, O_RANGE, O_EDGES, O_INTEGER, O_LAST_INCLUSIVE,
    O_OUTLIERS, O_CHANNELS, O_BACKEND, O_DEVICE, O_LIST_DEVICES, O_STRATEGY, O_LIST_STRATEGIES,
    O_THREADS, O_FORMAT, O_OUTPUT, O_VERBOSE, O_NO_PROGRESS, O_VERSION, O_HELP, O_WEIGHTS,
    O_WEIGHTS_TYPE, O_SQUARES, O_DENSITY, O_CUMULATIVE, O_DEVICES, O_MPI, O_IMAGE, O_ROI, O_EACH,
    O_EQUALIZE, O_PLOT, O_PLOT_LOG, O_DIMS
};

static const cli_optdef option_defs[] = {
    {"type", 't', 1, O_TYPE},
    {"text", 0, 0, O_TEXT},
    {"raw", 0, 0, O_RAW},
    {"npy", 0, 0, O_NPY},
    {"image", 0, 0, O_IMAGE},
    {"roi", 0, 1, O_ROI},
    {"each", 0, 0, O_EACH},
    {"equalize", 0, 1, O_EQUALIZE},
    {"bins", 'b', 1, O_BINS},
    {"range", 'r', 1, O_RANGE},
    {"edges", 'e', 1, O_EDGES},
    {"integer", 0, 1, O_INTEGER},
    {"last-inclusive", 0, 0, O_LAST_INCLUSIVE},
    {"outliers", 0, 1, O_OUTLIERS},
    {"channels", 0, 1, O_CHANNELS},
    {"dims", 0, 1, O_DIMS},
    {"weights", 0, 1, O_WEIGHTS},
    {"weights-type", 0, 1, O_WEIGHTS_TYPE},
    {"squares", 0, 0, O_SQUARES},
    {"density", 0, 0, O_DENSITY},
    {"cumulative", 0, 0, O_CUMULATIVE},
    {"backend", 'B', 1, O_BACKEND},
    {"device", 0, 1, O_DEVICE},
    {"devices", 0, 1, O_DEVICES},
    {"mpi", 0, 0, O_MPI},
    {"list-devices", 0, 0, O_LIST_DEVICES},
    {"strategy", 's', 1, O_STRATEGY},
    {"list-strategies", 0, 0, O_LIST_STRATEGIES},
    {"threads", 'j', 1, O_THREADS},
    {"format", 'f', 1, O_FORMAT},
    {"output", 'o', 1, O_OUTPUT},
    {"plot", 0, 1, O_PLOT},
    {"plot-log", 0, 0, O_PLOT_LOG},
    {"log-scale", 0, 0, O_PLOT_LOG},
    {"verbose", 'v', 0, O_VERBOSE},
    {"no-progress", 0, 0, O_NO_PROGRESS},
    {"version", 0, 0, O_VERSION},
    {"help", 'h', 0, O_HELP},
    {NULL, 0, 0, 0},
};

static const char usage_text[] =
    "usage: gpuhist [OPTIONS] [FILE | -]     histogram of a file (or standard input)\n"
    "       gpuhist demo [OPTIONS]          histogram built-in data and show what it did\n"
    "\n"
    "Input\n"
    "  -t, --type T            u8 i8 u16 i16 u32 i32 u64 i64 f32 f64: raw little-endian samples\n"
    "                          (default: from the .npy header; else u8; f64 for --text)\n"
    "      --text              input is text numbers separated by white space or commas\n"
    "                          ('#' starts a comment)\n"
    "      --raw, --npy        force the input format (default: .npy when the file starts with\n"
    "                          the .npy magic, raw otherwise); big-endian .npy is byte-swapped\n"
    "Images (PNG, JPEG, TIFF, PGM/PPM/PAM: recognised by their signature; --version lists\n"
    "      those built in; each image's channels are the histogram's channels)\n"
    "  FILE|DIR ...            several images, or a directory's: one histogram of them all\n"
    "      --image             the input is an image (standard input too)\n"
    "      --each              one histogram per image (per page of a multi-page TIFF)\n"
    "      --roi X,Y,W,H       only the region of W x H pixels at column X, row Y\n"
    "      --equalize OUT      write the histogram-equalized image (OpenCV's equalizeHist,\n"
    "                          per colour channel; 8/16-bit) as .png, .tif or .pgm/.ppm/.pam\n"
    "Bins (default: one bin per value for 8/16-bit integers, else 256 bins over the data's\n"
    "      min:max with the last edge inclusive, as numpy.histogram does)\n"
    "  -b, --bins N            number of bins (with -r on 8/16-bit integers: default HI-LO)\n"
    "  -r, --range LO:HI       even bins over [LO,HI)\n"
    "  -e, --edges E0,E1,...   explicit strictly increasing edges (or @FILE, one edge per line)\n"
    "      --integer LO        one bin per integer value from LO (numpy.bincount); the default\n"
    "                          bins reach the data's maximum (the type's for 8/16-bit types)\n"
    "      --last-inclusive    put HI into the last bin (NumPy's rule)\n"
    "      --outliers P        drop (default) | clamp (into the first / last bin)\n"
    "      --channels C[:A]    interleaved samples, C channels, first A histogrammed\n"
    "N-D (joint) histograms (numpy.histogramdd; files stream when every axis has its bins)\n"
    "      --dims N            points of N coordinates (1..8), interleaved: raw or text values\n"
    "                          N per point, a 2-D .npy of shape (points, N), or a flat .npy;\n"
    "                          --dims auto: N from a 2-D .npy. One value per axis, or one for\n"
    "                          all: -b 256,256 -r 0:1,0:5 | --integer 0,0 | -e '0,1,2;0,5,10'\n"
    "                          (default: 10 bins per axis over its min:max, last edge\n"
    "                          inclusive). Output: table (non-empty bins), csv (every bin),\n"
    "                          json (nested as the shape), npy (X.edges0.npy... beside)\n"
    "Weights (summed per bin, exactly; on the CPU backend, which auto then uses)\n"
    "      --weights FILE      one weight per pixel, in pixel order: a .npy of float32 or\n"
    "                          float64, else raw little-endian samples of --weights-type\n"
    "      --weights-type T    f32 | f64 (default): the type of raw weights\n"
    "      --squares           also output the sums of the squared weights\n"
    "      --density           also output NumPy's density: count (or sum) / bin width / total\n"
    "      --cumulative        also output the running totals of the counts (np.cumsum)\n"
    "Execution\n"
    "  -B, --backend B         auto (default) | cuda | opencl | cpu\n"
    "      --device N          device number of the backend (see --list-devices)\n"
    "      --devices L         several devices at once: all, or numbers (0,1); the input is\n"
    "                          shared out between them and the counts added exactly\n"
    "  -s, --strategy S        force a strategy; --list-strategies shows them all\n"
    "  -j, --threads N         CPU threads (default: all cores)\n"
#if GPUHIST_HAVE_MPI
    "      --mpi               one rank of an MPI job (implied under mpirun / srun): each rank\n"
    "                          reads its share of FILE, rank 0 writes the merged histogram\n"
#endif
    "Output\n"
    "  -f, --format F          table (default; bars when stdout is a terminal) | csv | json |\n"
    "                          npy (counts as uint64 .npy; with -o X.npy the edges go to\n"
    "                          X.edges.npy, the sums to X.sums.npy and X.sums_squared.npy;\n"
    "                          tallies on stderr with -v)\n"
    "  -o, --output FILE       write there (only once complete) instead of standard output\n"
    "      --plot FILE         also draw the histogram into FILE: .png, .svg or .pdf (one\n"
    "                          panel per channel; the values drawn are the sums with\n"
    "                          --weights, else the counts; --density, --cumulative instead)\n"
    "      --plot-log          the plot's values on a log scale (also --log-scale)\n"
    "  -v, --verbose           backend, device, strategy, time, throughput on stderr\n"
    "      --no-progress       no progress bar on stderr (drawn only on a terminal after ~1 s)\n"
    "      --list-strategies   the registered strategies (name, backend, seed, supports)\n"
    "      --list-devices      the devices of each backend (-B to pick one)\n"
    "      --version, --help\n"
    "\n"
    "Exit status: 0 success, 2 usage error, 1 any other error (one-line message on stderr).\n"
    "JSON: {\"edges\", \"counts\" (one array per channel with --channels), \"underflow\",\n"
    "\"overflow\", \"nan\", \"total\", \"backend\", \"strategy\", ...}; with --weights \"sums\"\n"
    "(and \"sums_squared\"), shaped as \"counts\". CSV: bin,lower,upper,count[,sum[,sum_sq]].\n";

typedef struct options {
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
    uint32_t dims;             /* --dims N (N-D histogram, nd.c); 0 = 1-D */
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
} options;

/* Display width of the first `n` bytes of a UTF-8 string (one column per code point). */
static int utf8_width_n(const char *s, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n && s[i]; ++i)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            ++w;
    return w;
}

static int utf8_width(const char *s)
{
    return utf8_width_n(s, strlen(s));
}

static void put_padded(FILE *f, const char *s, int width)
{
    fputs(s, f);
    for (int w = utf8_width(s); w < width; ++w)
        fputc(' ', f);
}

/* `label` then `text`, word-wrapped into `width` columns starting where the cursor is; further
 * lines start after `indent` spaces, 2 more when there is a label (a hanging indent). A word
 * longer than a line gets a line of its own. Ends with a newline. */
static void put_wrapped(FILE *f, const char *label, const char *text, int indent, int width)
{
    int hang = label[0] ? 2 : 0;
    fputs(label, f);
    int col = utf8_width(label);
    int fresh = 1; /* no word on this line yet */
    for (const char *p = text;;) {
        while (*p == ' ')
            ++p;
        if (!*p)
            break;
        size_t n = strcspn(p, " ");
        int w = utf8_width_n(p, n);
        if (!fresh && col + 1 + w > width) {
            fprintf(f, "\n%*s", indent + hang, "");
            col = hang;
            fresh = 1;
        }
        if (!fresh) {
            fputc(' ', f);
            ++col;
        }
        fwrite(p, 1, n, f);
        col += w;
        fresh = 0;
        p += n;
    }
    fputc('\n', f);
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static int list_strategies(cli_format format)
{
    size_t n = gpuhist_strategy_count();
    gpuhist_strategy_desc d;
    if (format == CLI_FMT_JSON) {
        fputs("[\n", stdout);
        for (size_t i = 0; i < n; ++i) {
            if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
                continue;
            fputs("  {\"name\": ", stdout);
            json_string(stdout, d.name);
            fprintf(stdout, ", \"backend\": \"%s\", \"seed\": ", gpuhist_backend_name(d.backend));
            json_string(stdout, d.seed ? d.seed : "");
            fputs(", \"supports\": ", stdout);
            json_string(stdout, d.supports ? d.supports : "");
            fputs(", \"summary\": ", stdout);
            json_string(stdout, d.summary ? d.summary : "");
            fputs(i + 1 < n ? "},\n" : "}\n", stdout);
        }
        fputs("]\n", stdout);
        return CLI_EXIT_OK;
    }
    /* A table as wide as the terminal (80 columns when not writing to one): name and backend,
     * then the mechanism, what it supports and its seed, word-wrapped in the third column.
     * Each strategy's first line starts with its name and backend, so scripts can take the
     * first two columns of the lines that do not start with a space; -f json has it all. */
    int columns = cli_isatty(stdout) ? cli_terminal_columns() : 80;
    int wn = utf8_width("strategy"), wb = utf8_width("backend");
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        if (utf8_width(d.name) > wn)
            wn = utf8_width(d.name);
        if (utf8_width(gpuhist_backend_name(d.backend)) > wb)
            wb = utf8_width(gpuhist_backend_name(d.backend));
    }
    int indent = wn + 2 + wb + 2;
    int width = columns - indent;
    /* Too narrow for a third column: the description goes under the name, indented by 2. */
    int below = width < 30;
    if (below) {
        indent = 2;
        width = columns - indent < 30 ? 30 : columns - indent;
    }
    put_padded(stdout, "strategy", wn + 2);
    if (below)
        fputs("backend", stdout);
    else
        put_padded(stdout, "backend", wb + 2);
    fputs(below ? "\n  mechanism, supports, seed\n" : "mechanism, supports, seed\n", stdout);
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        put_padded(stdout, d.name, wn + 2);
        if (below)
            fprintf(stdout, "%s\n%*s", gpuhist_backend_name(d.backend), indent, "");
        else
            put_padded(stdout, gpuhist_backend_name(d.backend), wb + 2);
        put_wrapped(stdout, "", d.summary ? d.summary : "", indent, width);
        fprintf(stdout, "%*s", indent, "");
        put_wrapped(stdout, "supports: ", d.supports ? d.supports : "", indent, width);
        fprintf(stdout, "%*s", indent, "");
        put_wrapped(stdout, "seed: ", d.seed ? d.seed : "", indent, width);
    }
    return CLI_EXIT_OK;
}

/* The library's reasons start with the backend's name; do not say it twice. */
static const char *without_prefix(const char *why, const char *backend)
{
    size_t n = strlen(backend);
    if (strncmp(why, backend, n) == 0 && why[n] == ':')
        for (why += n + 1; *why == ' '; ++why)
            ;
    return why;
}

static int list_devices(const options *o)
{
    gpuhist_backend all[] = {GPUHIST_BACKEND_CPU, GPUHIST_BACKEND_CUDA, GPUHIST_BACKEND_OPENCL};
    int rc = CLI_EXIT_OK;
    static char buf[16384];
    for (int k = 0; k < 3; ++k) {
        gpuhist_backend b = all[k];
        if (o->backend_given && o->backend != GPUHIST_BACKEND_AUTO && b != o->backend)
            continue;
        const char *name = gpuhist_backend_name(b);
        if (!gpuhist_backend_compiled(b)) {
            printf("%s: not compiled into this build\n", name);
            if (o->backend_given && o->backend == b)
                rc = cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build", name);
            continue;
        }
        buf[0] = 0;
        gpuhist_status st = gpuhist_list_devices(b, buf, sizeof buf);
        for (size_t n = strlen(buf); n && (buf[n - 1] == '\n' || buf[n - 1] == ' '); --n)
            buf[n - 1] = 0;
        if (st != GPUHIST_OK) {
            printf("%s: no device%s%s\n", name, buf[0] ? ": " : "", without_prefix(buf, name));
            if (o->backend_given && o->backend == b)
                rc = cli_error(CLI_EXIT_FAIL, "backend %s: no device", name);
            continue;
        }
        printf("%s:\n", name);
        /* Indent each line of the library's list under its backend. */
        for (char *line = buf; *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = 0;
            if (*line)
                printf("  %s\n", line);
            if (!nl)
                break;
            line = nl + 1;
        }
    }
    return rc;
}

/* ---- option values ----------------------------------------------------------------------------- */

/* -r LO:HI; `shown` is the option as written. @return CLI_EXIT_* (message printed). */
static int parse_range(const char *shown, const char *s, double *lo, double *hi)
{
    /* "LO:HI"; the colon after the first number (numbers never contain ':'). */
    const char *colon = strchr(s, ':');
    char a[128];
    size_t n = colon ? (size_t)(colon - s) : 0;
    if (!colon || strchr(colon + 1, ':') || n == 0 || n >= sizeof a || !colon[1])
        return cli_error(CLI_EXIT_USAGE, "%s: expected LO:HI with finite numbers, got '%s'", shown,
                         s);
    memcpy(a, s, n);
    a[n] = 0;
    const char *bad = a;
    const char *why = cli_double_problem(a, lo);
    if (!why) {
        bad = colon + 1;
        why = cli_double_problem(bad, hi);
    }
    if (why)
        return cli_error(CLI_EXIT_USAGE, "%s %s: '%s' %s", shown, s, bad, why);
    if (!(*lo < *hi))
        return cli_error(CLI_EXIT_USAGE, "%s %s: LO must be below HI", shown, s);
    return CLI_EXIT_OK;
}

static int is_small_int(gpuhist_dtype t)
{
    return t == GPUHIST_U8 || t == GPUHIST_I8 || t == GPUHIST_U16 || t == GPUHIST_I16;
}

static void small_int_limits(gpuhist_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case GPUHIST_U8: *lo = 0; *hi = 255; break;
    case GPUHIST_I8: *lo = -128; *hi = 127; break;
    case GPUHIST_U16: *lo = 0; *hi = 65535; break;
    default: *lo = -32768; *hi = 32767; break;
    }
}

/* Largest histogrammed value of 32/64-bit integer data. @return 0 when there is none. Used for
 * --integer without -b. */
static int data_max_integer(const cli_input *in, uint32_t C, uint32_t A, int64_t *out,
                            int *above_i64)
{
    size_t size = gpuhist_dtype_size(in->dtype);
    const unsigned char *p = in->data;
    int found = 0;
    *above_i64 = 0;
    int64_t best = INT64_MIN;
    for (uint64_t i = 0; i < in->samples; ++i, p += size) {
        if (i % C >= A)
            continue;
        int64_t v;
        switch (in->dtype) {
        case GPUHIST_U32: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
        case GPUHIST_I32: { int32_t x; memcpy(&x, p, 4); v = x; break; }
        case GPUHIST_U64: {
            uint64_t x;
            memcpy(&x, p, 8);
            if (x > (uint64_t)INT64_MAX) {
                *above_i64 = 1;
                return 1;
            }
            v = (int64_t)x;
            break;
        }
        case GPUHIST_I64: { memcpy(&v, p, 8); break; }
        default: { /* 8/16-bit and float types never come here */
            v = 0;
            break;
        }
        }
        if (!found || v > best)
            best = v;
        found = 1;
    }
    *out = best;
    return found;
}

/* The number of --integer bins without -b: up to the data's maximum, like numpy.bincount. */
#define CLI_MAX_AUTO_INTEGER_BINS (1u << 26)

static int integer_default_bins(const options *o, const cli_input *in, uint32_t *bins)
{
    if (is_small_int(in->dtype)) {
        int64_t lo, hi;
        small_int_limits(in->dtype, &lo, &hi);
        if (o->integer_lo > hi)
            return cli_error(CLI_EXIT_USAGE, "--integer %lld: above the largest %s value %lld",
                             (long long)o->integer_lo, gpuhist_dtype_name(in->dtype),
                             (long long)hi);
        double n = (double)hi - (double)o->integer_lo + 1.0;
        if (n > CLI_MAX_AUTO_INTEGER_BINS)
            return cli_error(CLI_EXIT_USAGE, "--integer %lld: too many bins up to %lld; give -b",
                             (long long)o->integer_lo, (long long)hi);
        *bins = (uint32_t)n;
        return CLI_EXIT_OK;
    }
    int64_t max;
    int above;
    if (!data_max_integer(in, o->channels, o->active, &max, &above) ||
        (!above && max < o->integer_lo)) {
        *bins = 1; /* nothing at or above LO: one (empty) bin, the smallest valid histogram */
        return CLI_EXIT_OK;
    }
    double n = above ? INFINITY : (double)max - (double)o->integer_lo + 1.0;
    if (n > CLI_MAX_AUTO_INTEGER_BINS)
        return cli_error(CLI_EXIT_USAGE,
                         "--integer %lld: %s's maximum value needs more than %u bins; give -b",
                         (long long)o->integer_lo, in->name, CLI_MAX_AUTO_INTEGER_BINS);
    *bins = (uint32_t)(max - o->integer_lo + 1);
    return CLI_EXIT_OK;
}

static int build_spec(const options *o, const cli_input *in, const double *edges,
                      uint32_t edge_bins, gpuhist_bin_spec *spec)
{
    gpuhist_dtype t = in->dtype;
    if (edges) {
        *spec = gpuhist_bins_edges(edge_bins, edges);
    } else if (o->have_integer) {
        if (t == GPUHIST_F32 || t == GPUHIST_F64)
            return cli_error(CLI_EXIT_USAGE,
                             "--integer needs integer samples, %s holds %s (give -t, or use "
                             "-r LO:HI -b N for unit-wide bins)",
                             in->name, gpuhist_dtype_name(t));
        uint32_t bins = o->bins;
        if (!o->have_bins) {
            int rc = integer_default_bins(o, in, &bins);
            if (rc)
                return rc;
        }
        *spec = gpuhist_bins_integer(bins, o->integer_lo);
    } else if (o->have_range) {
        uint32_t bins = o->bins;
        if (!o->have_bins) {
            bins = 256;
            /* One bin per value of an integer range of 8/16-bit data. */
            double w = o->hi - o->lo;
            if (is_small_int(t) && o->lo == floor(o->lo) && o->hi == floor(o->hi) && w >= 1 &&
                w <= 65536)
                bins = (uint32_t)w;
        }
        *spec = gpuhist_bins_even(bins, o->lo, o->hi);
    } else if (is_small_int(t)) {
        int64_t lo, hi;
        small_int_limits(t, &lo, &hi);
        if (o->have_bins)
            *spec = gpuhist_bins_even(o->bins, (double)lo, (double)hi + 1.0);
        else
            *spec = gpuhist_bins_integer((uint32_t)(hi - lo + 1), lo);
    } else {
        *spec = gpuhist_bins_auto(o->have_bins ? o->bins : 256);
    }
    spec->outliers = o->outliers;
    if (o->last_inclusive)
        spec->last_edge_inclusive = 1;
    return CLI_EXIT_OK;
}

/* ---- main -------------------------------------------------------------------------------------- */

static int parse_devices(const char *shown, const char *a, options *o);

/* Two output paths name one file: the same file when both exist, else the same name in the
 * same directory (the directories' links resolved). */
static int same_output(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea || eb)
        return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    if (strcmp(na ? na + 1 : a, nb ? nb + 1 : b) != 0)
        return 0;
    char da[4096], db[4096];
    snprintf(da, sizeof da, "%.*s", na ? (int)(na - a) + 1 : 1, na ? a : ".");
    snprintf(db, sizeof db, "%.*s", nb ? (int)(nb - b) + 1 : 1, nb ? b : ".");
    char *ra = realpath(da, NULL), *rb = realpath(db, NULL);
    int same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
    static const char *no_inputs[1];
    o->inputs = argc > 0 ? calloc((size_t)argc, sizeof *o->inputs) : no_inputs;
    if (!o->inputs)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    o->progress = 1;
    o->outliers = GPUHIST_OUTLIERS_DROP;
    o->backend = GPUHIST_BACKEND_AUTO;
    cli_getopt g;
    cli_getopt_init(&g, argc, argv);
    for (;;) {
        int id = cli_getopt_next(&g, option_defs);
        if (id == CLI_OPT_END)
            break;
        if (id == CLI_OPT_ERROR)
            return CLI_EXIT_USAGE;
        const char *a = g.arg;
        uint64_t u;
        int64_t i64;
        switch (id) {
        case CLI_OPT_POSITIONAL:
            /* several inputs are images (checked when the run starts) */
            if (!o->have_input)
                o->input = a;
            o->inputs[o->ninputs++] = a;
            o->have_input = 1;
            break;
        case O_IMAGE:
            o->image = 1;
            break;
        case O_EACH:
            o->each = 1;
            break;
        case O_ROI: {
            int rc = cli_roi_parse(g.shown, a, &o->roi);
            if (rc)
                return rc;
            break;
        }
        case O_EQUALIZE:
            if (!*a)
                return cli_error(CLI_EXIT_USAGE, "%s: empty file name", g.shown);
            o->equalize = a;
            break;
        case O_TYPE:
            if (!gpuhist_dtype_parse(a, &o->type))
                return cli_error(CLI_EXIT_USAGE,
                                 "%s: unknown type '%s' (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64)",
                                 g.shown, a);
            o->have_type = 1;
            break;
        case O_TEXT:
        case O_RAW:
        case O_NPY: {
            cli_input_format f = id == O_TEXT ? CLI_IN_TEXT : id == O_RAW ? CLI_IN_RAW : CLI_IN_NPY;
            if (o->in_format && o->in_format != f)
                return cli_error(CLI_EXIT_USAGE, "--text, --raw and --npy conflict (give one)");
            o->in_format = f;
            break;
        }
        case O_BINS:
            o->bins_arg = a;
            o->have_bins = 1;
            if (strchr(a, ',')) { /* per axis: nd.c reads it */
                o->axis_list = o->axis_list ? o->axis_list : g.shown;
                break;
            }
            /* the library's limit (gpuhist_bin_spec.bins <= 2^31) */
            if (!cli_parse_u64(a, &u) || u < 1 || u > (1u << 31))
                return cli_error(CLI_EXIT_USAGE, "%s: expected a number of bins from 1 to %u, got '%s'",
                                 g.shown, 1u << 31, a);
            o->bins = (uint32_t)u;
            o->have_bins = 1;
            break;
        case O_RANGE: {
            o->range_arg = a;
            o->have_range = 1;
            if (strchr(a, ',')) {
                o->axis_list = o->axis_list ? o->axis_list : g.shown;
                break;
            }
            int rc = parse_range(g.shown, a, &o->lo, &o->hi);
            if (rc)
                return rc;
            o->have_range = 1;
            break;
        }
        case O_EDGES:
            o->edges_arg = a;
            break;
        case O_INTEGER:
            o->integer_arg = a;
            o->have_integer = 1;
            if (strchr(a, ',')) {
                o->axis_list = o->axis_list ? o->axis_list : g.shown;
                break;
            }
            if (!cli_parse_i64(a, &i64))
                return cli_error(CLI_EXIT_USAGE, "%s: expected an integer, got '%s'", g.shown, a);
            o->integer_lo = i64;
            o->have_integer = 1;
            break;
        case O_LAST_INCLUSIVE:
            o->last_inclusive = 1;
            break;
        case O_OUTLIERS:
            if (strcmp(a, "drop") == 0)
                o->outliers = GPUHIST_OUTLIERS_DROP;
            else if (strcmp(a, "clamp") == 0)
                o->outliers = GPUHIST_OUTLIERS_CLAMP;
            else
                return cli_error(CLI_EXIT_USAGE, "%s: expected drop or clamp, got '%s'", g.shown, a);
            break;
        case O_CHANNELS: {
            char c[32];
            snprintf(c, sizeof c, "%s", a);
            char *colon = strchr(c, ':');
            uint64_t C, A;
            if (colon)
                *colon = 0;
            if (!cli_parse_u64(c, &C) || (colon && !cli_parse_u64(colon + 1, &A)) || strlen(a) > 20)
                return cli_error(CLI_EXIT_USAGE, "%s: expected C or C:A, got '%s'", g.shown, a);
            if (!colon)
                A = C;
            if (C < 1 || C > GPUHIST_MAX_CHANNELS || A < 1 || A > C)
                return cli_error(CLI_EXIT_USAGE,
                                 "%s %s: need 1 <= A <= C <= %d (C channels, first A histogrammed)",
                                 g.shown, a, GPUHIST_MAX_CHANNELS);
            o->channels = (uint32_t)C;
            o->active = (uint32_t)A;
            o->have_channels = 1;
            break;
        }
        case O_DIMS:
            if (strcmp(a, "auto") == 0) {
                o->dims_auto = 1;
                o->dims = 1;
            } else if (!cli_parse_u64(a, &u) || u < 1 || u > GPUHIST_MAX_DIMS) {
                return cli_error(CLI_EXIT_USAGE, "%s: expected 1 to %d dimensions or auto, got '%s'",
                                 g.shown, GPUHIST_MAX_DIMS, a);
            } else {
                o->dims = (uint32_t)u;
                o->dims_auto = 0;
            }
            break;
        case O_WEIGHTS:
            if (!*a)
                return cli_error(CLI_EXIT_USAGE, "%s: empty file name", g.shown);
            o->weights = a;
            break;
        case O_WEIGHTS_TYPE:
            if (strcmp(a, "f32") == 0 || strcmp(a, "float32") == 0)
                o->weights_type = GPUHIST_F32;
            else if (strcmp(a, "f64") == 0 || strcmp(a, "float64") == 0)
                o->weights_type = GPUHIST_F64;
            else
                return cli_error(CLI_EXIT_USAGE, "%s: expected f32 or f64, got '%s'", g.shown, a);
            o->have_weights_type = 1;
            break;
        case O_SQUARES:
            o->squares = 1;
            break;
        case O_DENSITY:
            o->density = 1;
            break;
        case O_CUMULATIVE:
            o->cumulative = 1;
            break;
        case O_BACKEND:
            if (!gpuhist_backend_parse(a, &o->backend))
                return cli_error(CLI_EXIT_USAGE, "%s: unknown backend '%s' (auto cuda opencl cpu)",
                                 g.shown, a);
            o->backend_given = 1;
            break;
        case O_DEVICE:
            if (o->devices_given)
                return cli_error(CLI_EXIT_USAGE, "--device and --devices conflict (give one)");
            if (!cli_parse_u64(a, &u) || u > 4096)
                return cli_error(CLI_EXIT_USAGE, "%s: expected a device number, got '%s'", g.shown, a);
            o->device = (int)u;
            break;
        case O_DEVICES: {
            if (o->device >= 0)
                return cli_error(CLI_EXIT_USAGE, "--device and --devices conflict (give one)");
            int rc = parse_devices(g.shown, a, o);
            if (rc != CLI_EXIT_OK)
                return rc;
            break;
        }
        case O_LIST_DEVICES:
            o->list_devices = 1;
            break;
        case O_MPI:
            o->mpi = 1;
            break;
        case O_STRATEGY:
            o->strategy = a;
            break;
        case O_LIST_STRATEGIES:
            o->list_strategies = 1;
            break;
        case O_THREADS:
            if (!cli_parse_u64(a, &u) || u > 65536)
                return cli_error(CLI_EXIT_USAGE, "%s: expected a number of threads (0 = all cores), got '%s'",
                                 g.shown, a);
            o->threads = (int)u;
            break;
        case O_FORMAT:
            if (strcmp(a, "table") == 0)
                o->format = CLI_FMT_TABLE;
            else if (strcmp(a, "csv") == 0)
                o->format = CLI_FMT_CSV;
            else if (strcmp(a, "json") == 0)
                o->format = CLI_FMT_JSON;
            else if (strcmp(a, "npy") == 0)
                o->format = CLI_FMT_NPY;
            else
                return cli_error(CLI_EXIT_USAGE,
                                 "%s: expected table, csv or json, or npy (binary), got '%s'",
                                 g.shown, a);
            break;
        case O_OUTPUT:
            if (!*a)
                return cli_error(CLI_EXIT_USAGE, "%s: empty file name", g.shown);
            o->output = a;
            break;
        case O_PLOT: {
            if (!*a)
                return cli_error(CLI_EXIT_USAGE, "%s: empty file name", g.shown);
            int rc = cli_plot_check(g.shown, a, &o->plot_format);
            if (rc)
                return rc;
            o->plot = a;
            break;
        }
        case O_PLOT_LOG:
            o->plot_log = 1;
            break;
        case O_VERBOSE:
            o->verbose = 1;
            break;
        case O_NO_PROGRESS:
            o->progress = 0;
            break;
        case O_VERSION:
            o->version = 1;
            break;
        case O_HELP:
            o->help = 1;
            break;
        }
    }
    if (o->axis_list && !o->dims)
        return cli_error(CLI_EXIT_USAGE, "%s: a list of values per axis needs --dims N (an N-D "
                                         "histogram)", o->axis_list);
    if (o->dims) {
        /* what an N-D histogram does not do */
        const char *no = o->have_channels ? "--channels" : o->outliers == GPUHIST_OUTLIERS_CLAMP
                         ? "--outliers clamp" : o->cumulative ? "--cumulative" : o->plot ? "--plot"
                         : o->image ? "--image" : o->each ? "--each" : o->roi.given ? "--roi"
                         : o->equalize ? "--equalize" : o->mpi ? "--mpi" : NULL;
        if (no)
            return cli_error(CLI_EXIT_USAGE, "%s does not apply to N-D histograms (--dims)", no);
    }
    if (!o->have_channels)
        o->channels = o->active = 1;
    if (o->have_range + (o->edges_arg != NULL) + o->have_integer > 1)
        return cli_error(CLI_EXIT_USAGE, "--range, --edges and --integer conflict (give one)");
    if (o->edges_arg && o->have_bins)
        return cli_error(CLI_EXIT_USAGE, "--bins conflicts with --edges (the edges give the bins)");
    if (o->in_format == CLI_IN_NPY && o->have_type)
        return cli_error(CLI_EXIT_USAGE, "--npy takes the type from the header; leave out --type");
    if (o->squares && !o->weights)
        return cli_error(CLI_EXIT_USAGE, "--squares needs --weights (the squares of what?)");
    if (o->have_weights_type && !o->weights)
        return cli_error(CLI_EXIT_USAGE, "--weights-type needs --weights");
    if (o->image && o->in_format)
        return cli_error(CLI_EXIT_USAGE, "--image conflicts with --text, --raw and --npy");
    if (o->equalize && (o->have_bins || o->have_range || o->edges_arg || o->have_integer))
        return cli_error(CLI_EXIT_USAGE, "--equalize counts one bin per value: leave out -b, -r, "
                                         "-e and --integer");
    if (o->equalize && o->each)
        return cli_error(CLI_EXIT_USAGE, "--equalize takes one image; it conflicts with --each");
    if (o->each && o->format == CLI_FMT_NPY)
        return cli_error(CLI_EXIT_USAGE, "--each is written by the table, CSV and JSON formats, "
                                         "not -f npy");
    if ((o->density || o->cumulative) && o->format == CLI_FMT_NPY)
        return cli_error(CLI_EXIT_USAGE,
                         "--%s is written by the table, CSV and JSON formats, not -f npy",
                         o->density ? "density" : "cumulative");
    if (o->plot_log && !o->plot)
        return cli_error(CLI_EXIT_USAGE, "--plot-log needs --plot FILE");
    if (o->plot && o->each)
        return cli_error(CLI_EXIT_USAGE, "--plot draws one histogram; it conflicts with --each");
    if (o->plot && o->output && same_output(o->plot, o->output))
        return cli_error(CLI_EXIT_USAGE, "--plot %s: the same file as --output %s", o->plot,
                         o->output);
    if (o->plot && o->equalize && same_output(o->plot, o->equalize))
        return cli_error(CLI_EXIT_USAGE, "--plot %s: the same file as --equalize %s", o->plot,
                         o->equalize);
    return CLI_EXIT_OK;
}

/* --devices all | N,N,... (a number twice: two contexts on that device) */
static int parse_devices(const char *shown, const char *a, options *o)
{
    o->ndevices = 0;
    if (strcmp(a, "all") == 0) {
        o->devices_given = 2;
        return CLI_EXIT_OK;
    }
    const char *p = a;
    for (;;) {
        size_t len = strcspn(p, ",");
        char tok[32];
        uint64_t u;
        if (len == 0 || len >= sizeof tok)
            return cli_error(CLI_EXIT_USAGE, "%s: expected 'all' or device numbers such as 0,1, "
                                             "got '%s'", shown, a);
        memcpy(tok, p, len);
        tok[len] = 0;
        if (!cli_parse_u64(tok, &u) || u > 4096)
            return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not a device number", shown, tok);
        if (o->ndevices == (int)(sizeof o->devices / sizeof o->devices[0]))
            return cli_error(CLI_EXIT_USAGE, "%s: more than %d devices", shown, o->ndevices);
        o->devices[o->ndevices++] = (int)u;
        if (!p[len])
            break;
        p += len + 1;
    }
    o->devices_given = 1;
    return CLI_EXIT_OK;
}

static int create_context(const options *o, gpuhist_ctx **ctx)
{
    gpuhist_status st;
    if (o->devices_given)
        st = gpuhist_create_multi(ctx, o->backend, o->devices_given == 1 ? o->devices : NULL,
                                  o->devices_given == 1 ? o->ndevices : 0);
    else
        st = o->device >= 0 ? gpuhist_create_on(ctx, o->backend, o->device)
                            : gpuhist_create(ctx, o->backend);
    if (st != GPUHIST_OK && o->devices_given) {
        if (st == GPUHIST_ERROR_NO_DEVICE && !gpuhist_backend_compiled(o->backend))
            return cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build",
                             gpuhist_backend_name(o->backend));
        return cli_error(CLI_EXIT_FAIL, "--devices: %s (see --list-devices)",
                         gpuhist_last_error(NULL));
    }
    if (st != GPUHIST_OK) {
        const char *b = gpuhist_backend_name(o->backend);
        if (st == GPUHIST_ERROR_NO_DEVICE && !gpuhist_backend_compiled(o->backend))
            return cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build", b);
        if (st == GPUHIST_ERROR_NO_DEVICE && o->device >= 0)
            return cli_error(CLI_EXIT_FAIL, "backend %s: no device %d (see --list-devices)", b,
                             o->device);
        if (st == GPUHIST_ERROR_NO_DEVICE && o->backend != GPUHIST_BACKEND_AUTO) {
            /* The context is gone with its message; the device list says why (driver, ...). */
            char why[512] = "";
            if (gpuhist_list_devices(o->backend, why, sizeof why) != GPUHIST_OK && why[0]) {
                why[strcspn(why, "\n")] = 0;
                return cli_error(CLI_EXIT_FAIL, "backend %s: no device: %s", b,
                                 without_prefix(why, b));
            }
        }
        return cli_error(CLI_EXIT_FAIL, "backend %s: %s", b, gpuhist_status_string(st));
    }
    /* AUTO falls back to the CPU when CUDA cannot open the device, and the CPU ignores the
     * number: a device that does not exist must not pass unnoticed. The CPU is device 0. */
    int max_device = o->device;
    for (int i = 0; o->devices_given == 1 && i < o->ndevices; ++i)
        max_device = o->devices[i] > max_device ? o->devices[i] : max_device;
    if (o->devices_given == 1 && max_device > 0 &&
        gpuhist_context_backend(*ctx) == GPUHIST_BACKEND_CPU) {
        const char *note = gpuhist_backend_note(*ctx);
        int rc = cli_error(CLI_EXIT_FAIL,
                           "--devices: no device %d (%s, which has only device 0; see "
                           "--list-devices)",
                           max_device, note && *note ? note : "the CPU backend");
        gpuhist_destroy(*ctx);
        *ctx = NULL;
        return rc;
    }
    if (o->device > 0 && o->backend == GPUHIST_BACKEND_AUTO &&
        gpuhist_context_backend(*ctx) == GPUHIST_BACKEND_CPU) {
        /* The note says why CUDA was not used ("...; using the CPU"). */
        const char *note = gpuhist_backend_note(*ctx);
        int rc = cli_error(CLI_EXIT_FAIL,
                           "--device %d: no such device (%s, which has only device 0; see "
                           "--list-devices)",
                           o->device, note && *note ? note : "auto uses the CPU");
        gpuhist_destroy(*ctx);
        *ctx = NULL;
        return rc;
    }
    if (o->threads && gpuhist_set_threads(*ctx, o->threads) != GPUHIST_OK) {
        int rc = cli_error(CLI_EXIT_USAGE, "--threads %d: %s", o->threads, gpuhist_last_error(*ctx));
        gpuhist_destroy(*ctx);
        return rc;
    }
    if (o->strategy && strcmp(o->strategy, "auto") != 0) {
        st = gpuhist_set_strategy(*ctx, o->strategy);
        if (st != GPUHIST_OK) {
            int rc;
            if (st == GPUHIST_ERROR_UNKNOWN_STRATEGY)
                rc = cli_error(CLI_EXIT_USAGE, "--strategy %s: no such strategy (see --list-strategies)",
                               o->strategy);
            else
                rc = cli_error(CLI_EXIT_USAGE, "--strategy %s: %s", o->strategy,
                               gpuhist_last_error(*ctx));
            gpuhist_destroy(*ctx);
            return rc;
        }
    }
    return CLI_EXIT_OK;
}

/* The input can be streamed: raw, .npy or text whose bins do not depend on the data (auto range
 * and bincount up to the data's maximum need the data first: a regular raw or .npy file gets a
 * first pass for them, the rest is read whole). */
static int streamable(const options *o, const cli_stream_input *si, int have_edges)
{
    if (si->format != CLI_IN_RAW && si->format != CLI_IN_NPY && si->format != CLI_IN_TEXT)
        return 0;
    if (have_edges || o->have_range)
        return 1;
    if (si->format == CLI_IN_TEXT) /* no first pass over text: parsing is the slow part */
        return o->have_integer ? o->have_bins || is_small_int(si->dtype) : is_small_int(si->dtype);
    if (o->have_integer)
        return o->have_bins || is_small_int(si->dtype);
    if (is_small_int(si->dtype))
        return 1;
    /* auto range: a first pass over the mapped file finds it (not for byte-swapped data; a
     * pipe cannot be read twice) */
    return si->is_regular && !si->swap;
}

/* The counts and edges (and with weights the sums, and the sums of squares) are written in
 * full: check they fit before asking for them (the kernel grants big allocations lazily and
 * kills the process later instead). */
static int alloc_result(const options *o, const gpuhist_bin_spec *spec, uint64_t **counts,
                        double **edges, double **sums, double **squares)
{
    double arrays = 1.0 + (o->weights ? 1.0 : 0.0) + (o->squares ? 1.0 : 0.0);
    double need = ((double)spec->bins * o->active * arrays + (double)spec->bins + 1.0) * 8.0;
    double avail = (double)gpuhist_host_memory_available();
    if (avail > 0 && need > avail) {
        char a[32], b[32];
        cli_format_bytes(a, sizeof a, need);
        cli_format_bytes(b, sizeof b, avail);
        return cli_error(CLI_EXIT_FAIL,
                         "%u bins x %u channel(s): the counts and edges%s need %s of memory, "
                         "only %s is available (use fewer bins)",
                         spec->bins, o->active, o->weights ? " and sums" : "", a, b);
    }
    const size_t n = (size_t)spec->bins * o->active;
    *counts = calloc(n, sizeof **counts);
    *edges = malloc(((size_t)spec->bins + 1) * sizeof **edges);
    if (o->weights)
        *sums = calloc(n, sizeof **sums);
    if (o->squares)
        *squares = calloc(n, sizeof **squares);
    if (!*counts || !*edges || (o->weights && !*sums) || (o->squares && !*squares))
        return cli_error(CLI_EXIT_FAIL, "out of memory for %u bins", spec->bins);
    return CLI_EXIT_OK;
}

/* --weights on a backend that cannot sum them is refused before the input is read, with the
 * library's reason: a stream of the same layout is begun (and aborted) on a one-bin spec. A
 * forced strategy is left to the real call, whose message names the request's bins. */
static int check_weighted_backend(const options *o, gpuhist_ctx *ctx, gpuhist_dtype dtype,
                                  gpuhist_dtype weight_dtype)
{
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU ||
        (o->strategy && strcmp(o->strategy, "auto") != 0))
        return CLI_EXIT_OK;
    gpuhist_samples layout = gpuhist_samples_1d(NULL, dtype, 0);
    layout.channels = o->channels;
    layout.active_channels = o->active;
    layout.location = GPUHIST_MEMORY_HOST;
    layout.weights = &layout; /* non-NULL: a weighted stream */
    layout.weight_dtype = weight_dtype;
    gpuhist_bin_spec probe = gpuhist_bins_even(1, 0.0, 1.0);
    gpuhist_stream *gs;
    gpuhist_status st = gpuhist_stream_begin(ctx, &layout, &probe, GPUHIST_MEMORY_HOST, &gs);
    if (st == GPUHIST_OK)
        gpuhist_stream_abort(gs);
    if (st == GPUHIST_ERROR_UNSUPPORTED)
        return cli_error(CLI_EXIT_USAGE, "--weights: %s", gpuhist_last_error(ctx));
    return CLI_EXIT_OK; /* any other failure comes again, and is reported, in the real call */
}

/* Open the weights beside the open input `si`. A pipe cannot be read twice: the weights may not
 * come from the one the data comes from (--weights /dev/stdin with the data on standard input).
 * When both counts are known already, a difference fails here, before anything is read. */
static int open_weights(const options *o, const cli_stream_input *si, cli_weights *w)
{
    struct stat ws, ds;
    int from_stdin = strcmp(o->weights, "-") == 0;
    if ((from_stdin ? fstat(0, &ws) : stat(o->weights, &ws)) == 0 && !S_ISREG(ws.st_mode) &&
        fstat(si->fd, &ds) == 0 && ws.st_dev == ds.st_dev && ws.st_ino == ds.st_ino)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights %s: the data comes from the same pipe; the weights need a "
                         "file or a pipe of their own",
                         o->weights);
    int rc = cli_weights_open(o->weights, o->have_weights_type, o->weights_type, w);
    if (rc == CLI_EXIT_OK && si->is_regular &&
        (si->format == CLI_IN_RAW || si->format == CLI_IN_NPY))
        rc = cli_weights_expect(w, si->data_bytes / si->pixel_bytes);
    return rc;
}

/* NumPy's pairwise summation of doubles (8 partial sums up to 128 values, halves above). Its
 * n.sum() applies it to each buffer of 8192 values (np.getbufsize()) and adds the buffers' sums
 * in order, so a total matches n.sum() bit for bit on the same values. */
static double pairwise_sum(const double *a, size_t n, size_t stride)
{
    if (n < 8) {
        double r = -0.0;
        for (size_t i = 0; i < n; ++i)
            r += a[i * stride];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; ++k)
            r[k] = a[(size_t)k * stride];
        size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; ++k)
                r[k] += a[(i + (size_t)k) * stride];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i)
            res += a[i * stride];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2, stride) + pairwise_sum(a + n2 * stride, n - n2, stride);
}

/* NumPy's density (np.histogram(..., density=True)): n / diff(edges) / n.sum(), channel by
 * channel, with n the counts (their total an exact integer, converted to double as NumPy's
 * division does) or the sums of weights (their total by NumPy's pairwise summation). A total of
 * 0 gives NaN, as in NumPy. */
static void density_of(const gpuhist_result *r, const uint64_t *counts, const double *sums,
                       const double *edges, double *out)
{
    const uint32_t bins = r->bins;
    for (uint32_t c = 0; c < r->channels; ++c) {
        const uint64_t *n = counts + (size_t)c * bins;
        const double *w = sums ? sums + (size_t)c * bins : NULL;
        double total;
        if (w) {
            total = pairwise_sum(w, bins < 8192 ? bins : 8192, 1);
            for (uint32_t k = 8192; k < bins; k += 8192)
                total += pairwise_sum(w + k, bins - k < 8192 ? bins - k : 8192, 1);
        } else {
            uint64_t t = 0;
            for (uint32_t i = 0; i < bins; ++i)
                t += n[i];
            total = (double)t;
        }
        for (uint32_t i = 0; i < bins; ++i) {
            const double db = edges[i + 1] - edges[i];
            const double v = w ? w[i] : (double)n[i];
            out[(size_t)c * bins + i] = v / db / total;
        }
    }
}

/* Under MPI with several ranks: each rank keeps its share of the pixels of the input (and of
 * the weights). Only what is streamed from a regular raw or .npy file can be shared out; the
 * rest (pipes, text, inputs read whole) is a usage error, the same on every rank. */
static int share_out(const options *o, cli_stream_input *si, cli_weights *w, int have_edges)
{
    const int n = cli_mpi_ranks();
    if (!si->is_regular)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: a pipe is read once, in order: %d MPI ranks cannot share it out "
                         "(give a regular file)",
                         si->name, n);
    if (si->format == CLI_IN_TEXT)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: --text input cannot be shared out between %d MPI ranks (give raw "
                         "or .npy samples)",
                         si->name, n);
    if (!streamable(o, si, have_edges))
        return cli_error(CLI_EXIT_USAGE,
                         "%s: %s reads the input whole, which %d MPI ranks cannot share out "
                         "(give %s)",
                         si->name,
                         o->have_integer ? "--integer without -b on 32/64-bit samples"
                                         : "the auto range of byte-swapped .npy data",
                         n, o->have_integer ? "-b N" : "-r LO:HI or -e");
    if (o->weights && !w->is_regular)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights %s: a pipe cannot be shared out between %d MPI ranks (give "
                         "a regular file)",
                         w->name, n);
    uint64_t first, count;
    cli_mpi_share(si->data_bytes / si->pixel_bytes, &first, &count);
    cli_stream_input_share(si, first, count);
    if (o->weights)
        cli_weights_share(w, first, count);
    return CLI_EXIT_OK;
}

/* What every MPI rank must see alike before they count together: the input's size and type,
 * the bins. */
static uint64_t mpi_key(const cli_stream_input *si, const gpuhist_bin_spec *spec)
{
    const uint64_t v[] = {si->shared ? si->whole_bytes : si->data_bytes, (uint64_t)si->dtype,
                          si->pixel_bytes, (uint64_t)spec->kind, spec->bins,
                          (uint64_t)spec->auto_range};
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i)
        h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

static int run(const options *o)
{
    double *edges_in = NULL;
    uint32_t edge_bins = 0;
    gpuhist_ctx *ctx = NULL;
    cli_input in;
    memset(&in, 0, sizeof in);
    cli_stream_input si;
    memset(&si, 0, sizeof si);
    si.fd = -1;
    cli_weights w;
    memset(&w, 0, sizeof w);
    w.fd = -1;
    void *weights_whole = NULL;
    uint64_t *counts = NULL;
    double *edges_out = NULL, *sums = NULL, *squares = NULL;
    int weights_streamed = 0;
    int rc;

    /* Weights are summed on the CPU backend only: auto goes there straight away, rather than
     * starting a device it would then have to give up. */
    options eff = *o;
    if (o->weights && o->backend == GPUHIST_BACKEND_AUTO) {
        if (o->device > 0)
            return cli_error(CLI_EXIT_FAIL,
                             "--device %d: no such device (--weights runs on the CPU backend, "
                             "which has only device 0)",
                             o->device);
        eff.backend = GPUHIST_BACKEND_CPU;
    }
    if (o->edges_arg && (rc = cli_parse_edges(o->edges_arg, "--edges", UINT32_MAX, &edges_in, &edge_bins)))
        return rc;
    /* MPI ranks on one host: a device each (when there are several), the cores shared out */
    if (cli_mpi_on() && o->device < 0 && !o->devices_given)
        eff.device = cli_mpi_device(eff.backend);
    double ctx_t0 = cli_now();
    rc = create_context(&eff, &ctx);
    double ctx_seconds = cli_now() - ctx_t0;
    if (rc) {
        free(edges_in);
        return rc;
    }
    if (cli_mpi_threads() && !o->threads && gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU)
        gpuhist_set_threads(ctx, cli_mpi_threads());

    /* The output first: an unwritable destination, or one that is the input itself, fails
     * before a big read. */
    cli_output out, sides[CLI_NPY_SIDES], plot;
    memset(&out, 0, sizeof out);
    memset(sides, 0, sizeof sides);
    memset(&plot, 0, sizeof plot);
    cli_output_set_input(o->input);
    if (o->weights)
        cli_output_protect(o->weights, "weights");
    /* under MPI, rank 0 alone writes */
    if (cli_mpi_rank() == 0 && (rc = cli_output_open(&out, o->output))) {
        free(edges_in);
        gpuhist_destroy(ctx);
        return rc;
    }
    if (cli_mpi_rank() == 0 && o->format == CLI_FMT_NPY &&
        (rc = cli_npy_open_sides(&out, o->weights != NULL, o->squares, sides)))
        goto done;
    if (cli_mpi_rank() == 0 && o->plot && (rc = cli_output_open(&plot, o->plot)))
        goto done;

    cli_read_options ro = {o->input, o->in_format, o->have_type, o->type, o->channels, o->progress,
                           /* a pipe is streamed whatever its format when the bins are known */
                           edges_in != NULL || o->have_range || (o->have_integer && o->have_bins),
                           o->weights != NULL};
    if ((rc = cli_stream_input_open(&ro, &si)))
        goto done;
    if (o->weights && ((rc = open_weights(o, &si, &w)) ||
                       (rc = check_weighted_backend(o, ctx, si.dtype, w.dtype))))
        goto done;
    if (cli_mpi_ranks() > 1 && (rc = share_out(o, &si, &w, edges_in != NULL)))
        goto done;
    int merged = 0; /* the result was merged over MPI ranks (cli_mpi_stream_finish) */
    gpuhist_bin_spec spec;
    gpuhist_result r;
    gpuhist_status st;
    if (streamable(o, &si, edges_in != NULL)) {
        /* Raw, .npy or text, bins known: streamed in chunks, memory bounded; the weights are
         * read in step. */
        in.dtype = si.dtype;
        in.format = si.format;
        snprintf(in.name, sizeof in.name, "%s", si.name);
        if ((rc = build_spec(o, &in, edges_in, edge_bins, &spec)))
            goto done;
        /* MPI: every rank is ready and sees the same input and bins (else all stop here) */
        if ((rc = cli_mpi_agree(CLI_EXIT_OK, mpi_key(&si, &spec))))
            goto done;
        if (spec.kind == GPUHIST_BINS_EVEN && spec.auto_range) {
            double lo = 0, hi = 0, t_mm = cli_now();
            int found = 0;
            /* MPI: each rank's pass over its share, then the min and max of them all */
            rc = cli_stream_input_minmax(&si, ctx, o->channels, o->active, &lo, &hi, &found);
            if ((rc = cli_mpi_agree(rc, 0)) || (rc = cli_mpi_minmax(&lo, &hi, &found)))
                goto done;
            gpuhist_bin_spec a = gpuhist_bins_from_minmax(spec.bins, lo, hi, found);
            a.outliers = spec.outliers;
            spec = a;
            if (o->verbose)
                cli_note("auto range: a first pass found [%.17g, %.17g] in %.3f s", spec.lower,
                         spec.upper, cli_now() - t_mm);
            if (!isfinite(spec.upper - spec.lower)) {
                rc = cli_error(CLI_EXIT_FAIL,
                               "%s: range: the data's range [%g, %g] overflows a double",
                               in.name, spec.lower, spec.upper);
                goto done;
            }
        }
        if ((rc = alloc_result(o, &spec, &counts, &edges_out, &sums, &squares)))
            goto done;
        gpuhist_samples layout = gpuhist_samples_1d(NULL, si.dtype, 0);
        layout.channels = o->channels;
        layout.active_channels = o->active;
        layout.location = GPUHIST_MEMORY_HOST;
        if (o->weights) {
            layout.weights = &w; /* non-NULL: a weighted stream */
            layout.weight_dtype = w.dtype;
            si.weights = &w;
            weights_streamed = 1;
        }
        gpuhist_stream *gs;
        double t0 = cli_now();
        st = gpuhist_stream_begin(ctx, &layout, &spec, GPUHIST_MEMORY_HOST, &gs);
        if (st == GPUHIST_OK) {
            double t1 = cli_now();
            rc = cli_stream_input_run(&si, gs,
                                      gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU,
                                      o->progress);
            if (rc == CLI_EXIT_OK && o->weights)
                rc = cli_weights_end(&w);
            if ((rc = cli_mpi_agree(rc, 0))) { /* MPI: every rank read its share */
                gpuhist_stream_abort(gs);
                goto done;
            }
            double t2 = cli_now();
            r = gpuhist_result_host(counts);
            r.edges = edges_out;
            r.sums = sums;
            r.sums_squared = squares;
            /* MPI: the parts merged onto rank 0 (every rank returns the same status) */
            merged = cli_mpi_on();
            st = merged ? cli_mpi_stream_finish(ctx, gs, &layout, &spec, &r)
                        : gpuhist_stream_finish(gs, &r);
            if (o->verbose)
                cli_note("streamed: begin %.3f s, read and count %.3f s, finish %.3f s "
                         "(context created in %.3f s)",
                         t1 - t0, t2 - t1, cli_now() - t2, ctx_seconds);
        }
        /* under MPI: the whole input's (rank 0's share: -v's "mpi:" line) */
        const uint64_t data_bytes = si.shared ? si.whole_bytes : si.data_bytes;
        in.samples = data_bytes / si.sample_size;
        in.bytes_read = (double)(si.format == CLI_IN_TEXT ? si.text_bytes : data_bytes);
        in.seconds = si.seconds;
    } else {
        /* Pipes and text whose bins need the data first: the input is read whole, and so are
         * the weights. (The descriptor opened above stays open until then: closing a FIFO's
         * only reader would discard what its writer sent.) */
        rc = cli_read_input(&ro, &in);
        cli_stream_input_close(&si);
        if (rc)
            goto done;
        if (in.samples % o->channels) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %u channels",
                           in.name, (unsigned long long)in.samples, o->channels);
            goto done;
        }
        if (o->weights && (rc = cli_weights_read_all(&w, in.samples / o->channels,
                                                     &weights_whole)))
            goto done;
        if ((rc = build_spec(o, &in, edges_in, edge_bins, &spec)) ||
            (rc = alloc_result(o, &spec, &counts, &edges_out, &sums, &squares)))
            goto done;
        gpuhist_samples s = gpuhist_samples_1d(in.data, in.dtype, in.samples / o->channels);
        s.channels = o->channels;
        s.active_channels = o->active;
        s.location = GPUHIST_MEMORY_HOST;
        s.weights = weights_whole;
        s.weight_dtype = w.dtype;
        r = gpuhist_result_host(counts);
        r.edges = edges_out;
        r.sums = sums;
        r.sums_squared = squares;
        st = gpuhist_histogram(ctx, &s, &spec, &r);
    }
    if (st != GPUHIST_OK) {
        /* A strategy forced onto a request it cannot do, or weights on a backend that does not
         * sum them, is a conflict of options. */
        int status = st == GPUHIST_ERROR_UNSUPPORTED && (o->strategy || o->weights)
                         ? CLI_EXIT_USAGE
                         : CLI_EXIT_FAIL;
        char why[640];
        rc = cli_error(status, "%s: %s", in.name,
                       merged ? cli_mpi_error(why, sizeof why) : gpuhist_last_error(ctx));
        goto done;
    }
    if (cli_mpi_rank() > 0)
        goto done; /* rank 0 writes the merged histogram */

    if (o->verbose) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, in.bytes_read);
        double bytes = (double)in.samples * (double)gpuhist_dtype_size(in.dtype);
        cli_note("input: %s, %s %s, %llu samples of %s, read in %.3f s", in.name,
                 in.format == CLI_IN_NPY ? ".npy" : in.format == CLI_IN_TEXT ? "text" : "raw", sz,
                 (unsigned long long)in.samples, gpuhist_dtype_name(in.dtype), in.seconds);
        if (cli_mpi_on())
            cli_note("mpi: %d ranks, the parts merged on rank 0, which read pixels [%llu, %llu) "
                     "of %llu",
                     cli_mpi_ranks(), (unsigned long long)si.share_first,
                     (unsigned long long)(si.share_first + si.data_bytes / si.pixel_bytes),
                     (unsigned long long)(in.samples / o->channels));
        if (o->weights)
            cli_note("weights: %s, %s, %llu of %s, %s", w.name, w.is_npy ? ".npy" : "raw",
                     (unsigned long long)w.next, gpuhist_dtype_name(w.dtype),
                     weights_streamed ? "streamed with the data" : "read whole");
        cli_note("backend: %s, device: %s", gpuhist_backend_name(r.backend),
                 gpuhist_device_name(ctx));
        const char *note = gpuhist_backend_note(ctx);
        if (note && *note)
            cli_note("note: %s", note);
        if (o->weights && o->backend == GPUHIST_BACKEND_AUTO)
            cli_note("note: --weights: auto uses the CPU backend, the one that sums weights");
        cli_note("strategy: %s", r.strategy ? r.strategy : "?");
        cli_note("time: %.6f s, throughput: %.2f GB/s", r.seconds,
                 r.seconds > 0 ? bytes / r.seconds / 1e9 : 0.0);
        double peak = cli_peak_memory_mib();
        if (peak > 0)
            cli_note("peak memory: %.0f MiB resident", peak);
    }

    cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
    int bars = fmt == CLI_FMT_TABLE && out.f == stdout && cli_isatty(stdout);
    double *density = NULL;
    if (o->density) {
        density = malloc((size_t)r.bins * r.channels * sizeof *density);
        if (!density) {
            rc = cli_error(CLI_EXIT_FAIL, "out of memory for the density of %u bins", r.bins);
            goto done;
        }
        density_of(&r, counts, sums, edges_out, density);
    }
    uint64_t *cumulative = NULL;
    if (o->cumulative) {
        cumulative = malloc((size_t)r.bins * r.channels * sizeof *cumulative);
        if (!cumulative) {
            free(density);
            rc = cli_error(CLI_EXIT_FAIL, "out of memory for the running totals of %u bins",
                           r.bins);
            goto done;
        }
        for (uint32_t c = 0; c < r.channels; ++c) {
            uint64_t t = 0;
            for (uint32_t i = 0; i < r.bins; ++i)
                cumulative[(size_t)c * r.bins + i] = t += counts[(size_t)c * r.bins + i];
        }
    }
    cli_histogram h = {&r, counts, edges_out, in.dtype, spec.kind, o->have_channels, sums,
                       squares, density, cumulative};
    if (fmt == CLI_FMT_NPY && o->verbose)
        cli_note_tallies(&h);
    /* the plot first: when it fails, nothing has gone to standard output */
    if (o->plot) {
        cli_plot_options po = {o->plot_format, o->plot_log, o->outliers, 0, in.name, o->verbose};
        rc = cli_plot_write(&plot, &h, &po);
    }
    if (rc == CLI_EXIT_OK)
        cli_write_histogram(out.f, fmt, &h, bars, bars ? cli_terminal_columns() : 80);
    if (rc == CLI_EXIT_OK)
        rc = sides[CLI_NPY_EDGES].f ? cli_npy_commit(&out, sides, &h) : cli_output_commit(&out);
    if (rc == CLI_EXIT_OK && o->plot)
        rc = cli_output_commit(&plot);
    free(density);
    free(cumulative);

done:
    if (rc) {
        cli_output_abort(&out); /* after commit failure it is already clean: a no-op */
        for (int i = 0; i < CLI_NPY_SIDES; ++i)
            cli_output_abort(&sides[i]);
        cli_output_abort(&plot);
    }
    cli_input_free(&in);
    cli_stream_input_close(&si);
    cli_weights_close(&w);
    free(weights_whole);
    free(counts);
    free(edges_out);
    free(sums);
    free(squares);
    free(edges_in);
    double d0 = cli_now();
    gpuhist_destroy(ctx);
    if (o->verbose && rc == CLI_EXIT_OK)
        cli_note("context released in %.3f s", cli_now() - d0);
    return rc;
}

/* An N-D histogram (--dims): the context as for 1-D, then nd.c. */
static int run_nd(const options *o)
{
    if (cli_mpi_on())
        return cli_error(CLI_EXIT_USAGE, "N-D histograms (--dims) do not run under MPI");
    options eff = *o;
    if (o->weights && o->backend == GPUHIST_BACKEND_AUTO) {
        if (o->device > 0)
            return cli_error(CLI_EXIT_FAIL,
                             "--device %d: no such device (--weights runs on the CPU backend, "
                             "which has only device 0)",
                             o->device);
        eff.backend = GPUHIST_BACKEND_CPU; /* the backend that sums weights */
    }
    gpuhist_ctx *ctx = NULL;
    int rc = create_context(&eff, &ctx);
    if (rc)
        return rc;
    cli_nd_options nd = {o->dims, o->dims_auto, o->input, o->in_format, o->have_type, o->type,
                         o->bins_arg, o->range_arg, o->edges_arg, o->integer_arg,
                         o->last_inclusive, o->weights, o->have_weights_type, o->weights_type,
                         o->squares, o->density, o->format, o->output, o->strategy, o->verbose,
                         o->progress};
    rc = cli_nd_run(&nd, ctx);
    gpuhist_destroy(ctx);
    return rc;
}

/* ---- images ------------------------------------------------------------------------------------ */

/* Whether the run reads images: --image, or every input a directory or a file with an image
 * signature (--raw, --npy and --text say otherwise). Several inputs must all be images.
 * @return CLI_EXIT_* (message printed). */
static int image_inputs(const options *o, int *images)
{
    *images = 0;
    if (o->image) {
        *images = 1;
        return CLI_EXIT_OK;
    }
    size_t n = 0;
    const char *other = NULL;
    for (size_t i = 0; o->in_format == CLI_IN_AUTO && i < o->ninputs; ++i) {
        if (cli_image_path_is_image(o->inputs[i]))
            ++n;
        else if (!other)
            other = o->inputs[i];
    }
    if (o->ninputs > 0 && n == o->ninputs) {
        *images = 1;
        return CLI_EXIT_OK;
    }
    if (o->ninputs > 1 && n == 0)
        return cli_error(CLI_EXIT_USAGE, "more than one input ('%s' and '%s')", o->inputs[0],
                         o->inputs[1]);
    if (o->ninputs > 1) {
        struct stat st;
        if (stat(other, &st) != 0)
            return cli_error(CLI_EXIT_FAIL, "%s: %s", other, strerror(errno));
        return cli_error(CLI_EXIT_FAIL,
                         "%s: not an image (several inputs must all be images: PNG, JPEG, TIFF, "
                         "PNM, or directories of them)",
                         other);
    }
    if (o->each || o->roi.given || o->equalize)
        return cli_error(CLI_EXIT_USAGE,
                         "--%s is for image input, and %s is not an image (--image says it is)",
                         o->each ? "each" : o->roi.given ? "roi" : "equalize",
                         strcmp(o->input, "-") == 0 ? "standard input" : o->input);
    return CLI_EXIT_OK;
}

/* The CSV quoting of a field (RFC 4180) when it needs it. */
static void csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* One histogram of --each, written to `f` with its image's name: the table under a line
 * "image: NAME", CSV rows led by an `image` column (the header only before the first), JSON
 * objects with an "image" key in one array (`index` 0 opens it; the caller closes it). */
static int write_labelled(FILE *f, cli_format fmt, const cli_histogram *h, const char *name,
                          size_t index)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    cli_write_histogram(m, fmt, h, 0, 80);
    if (fclose(m) != 0 || !text) {
        free(text);
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    if (fmt == CLI_FMT_CSV) {
        char *line = text;
        for (int first = 1; *line; first = 0) {
            char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
            if (first && index == 0) {
                fputs("image,", f);
                fwrite(line, 1, n, f);
            } else if (!first) {
                csv_field(f, name);
                fputc(',', f);
                fwrite(line, 1, n, f);
            }
            line += n;
        }
    } else if (fmt == CLI_FMT_JSON) {
        const char *body = text + strspn(text, " \n");
        if (*body == '{')
            ++body;
        fputs(index == 0 ? "[\n" : ",\n", f);
        fputs("{\"image\": ", f);
        json_string(f, name);
        fputs(",", f);
        size_t n = strlen(body);
        while (n && body[n - 1] == '\n')
            --n;
        fwrite(body, 1, n, f);
    } else {
        if (index > 0)
            fputc('\n', f);
        fprintf(f, "image: %s\n", name);
        fputs(text, f);
    }
    free(text);
    return CLI_EXIT_OK;
}

/* The table, CSV or JSON of one histogram (with --density and --cumulative columns), to `f`,
 * labelled with the image's name when `name` is given (--each). */
static int write_image_histogram(FILE *f, const options *o, const gpuhist_result *r,
                                 const uint64_t *counts, const double *edges,
                                 const gpuhist_bin_spec *spec, gpuhist_dtype dtype,
                                 int per_channel, const char *name, size_t index, int bars,
                                 cli_output *plot, const cli_plot_options *po)
{
    const size_t n = (size_t)r->bins * r->channels;
    double *density = NULL;
    uint64_t *cumulative = NULL;
    if ((o->density && !(density = malloc(n * sizeof *density))) ||
        (o->cumulative && !(cumulative = malloc(n * sizeof *cumulative)))) {
        free(density);
        return cli_error(CLI_EXIT_FAIL, "out of memory for %u bins", r->bins);
    }
    if (density)
        density_of(r, counts, NULL, edges, density);
    for (uint32_t c = 0; cumulative && c < r->channels; ++c) {
        uint64_t t = 0;
        for (uint32_t i = 0; i < r->bins; ++i)
            cumulative[(size_t)c * r->bins + i] = t += counts[(size_t)c * r->bins + i];
    }
    cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
    cli_histogram h = {r, counts, edges, dtype, spec->kind, per_channel, NULL, NULL, density,
                       cumulative};
    /* the plot first: when it fails, nothing has gone to standard output */
    int rc = plot ? cli_plot_write(plot, &h, po) : CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK && name)
        rc = write_labelled(f, fmt, &h, name, index);
    else if (rc == CLI_EXIT_OK) {
        if (fmt == CLI_FMT_NPY && o->verbose)
            cli_note_tallies(&h);
        cli_write_histogram(f, fmt, &h, bars, bars ? cli_terminal_columns() : 80);
    }
    free(density);
    free(cumulative);
    return rc;
}

/* Add one image's histogram `p` (counts `pc`) into the running total `t` (counts `tc`). */
static void add_result(gpuhist_result *t, uint64_t *tc, const gpuhist_result *p,
                       const uint64_t *pc, int first)
{
    const size_t n = (size_t)p->bins * p->channels;
    for (size_t i = 0; i < n; ++i)
        tc[i] = first ? pc[i] : tc[i] + pc[i];
    uint64_t *keep = t->counts;
    double *edges = t->edges;
    double seconds = first ? 0 : t->seconds;
    gpuhist_result prev = *t;
    *t = *p;
    t->counts = keep;
    t->edges = edges;
    t->seconds = seconds + p->seconds;
    for (uint32_t c = 0; !first && c < p->channels; ++c) {
        t->underflow[c] += prev.underflow[c];
        t->overflow[c] += prev.overflow[c];
        t->nan[c] += prev.nan[c];
        t->total[c] += prev.total[c];
    }
}

/* The command on images (image.c decodes them on worker threads while this thread counts):
 * one histogram of every page of every file, or one per page with --each; --equalize writes
 * the equalized image. The bins follow the first image's sample type as for raw samples; an
 * auto range (float TIFF without -r) is found by a first pass over all the images. */
static int run_images(const options *o)
{
    if (o->have_type)
        return cli_error(CLI_EXIT_USAGE, "--type: images carry their own sample type");
    if (o->weights)
        return cli_error(CLI_EXIT_USAGE, "--weights is for raw or .npy input, not images");
    if (cli_mpi_ranks() > 1)
        return cli_error(CLI_EXIT_USAGE,
                         "images are not shared out between %d MPI ranks (run one process)",
                         cli_mpi_ranks());
    if (o->equalize && o->ninputs > 1)
        return cli_error(CLI_EXIT_USAGE, "--equalize takes one image, got %zu inputs",
                         o->ninputs);
    double *edges_in = NULL;
    uint32_t edge_bins = 0;
    int rc;
    if (o->edges_arg && (rc = cli_parse_edges(o->edges_arg, "--edges", UINT32_MAX, &edges_in, &edge_bins)))
        return rc;
    cli_image_set *set = NULL;
    gpuhist_ctx *ctx = NULL;
    cli_output out, eq, plot;
    memset(&out, 0, sizeof out);
    memset(&eq, 0, sizeof eq);
    memset(&plot, 0, sizeof plot);
    out.slot = eq.slot = plot.slot = -1;
    uint64_t *counts = NULL, *part = NULL;
    double *edges_out = NULL, *no_sums = NULL, *no_squares = NULL;
    FILE *each_tmp = NULL;
    double t_start = cli_now();
    if ((rc = cli_image_set_open(o->inputs, o->ninputs, 0, &set)) ||
        (rc = create_context(o, &ctx)))
        goto done;
    cli_output_set_input(o->input);
    for (size_t i = 1; i < o->ninputs; ++i)
        cli_output_protect(o->inputs[i], "input");
    if ((rc = cli_output_open(&out, o->output)) ||
        (o->equalize && (rc = cli_output_open(&eq, o->equalize))) ||
        (o->plot && (rc = cli_output_open(&plot, o->plot))))
        goto done;

    const cli_image *img;
    if ((rc = cli_image_set_next(set, &img)))
        goto done;
    if (!img) {
        rc = cli_error(CLI_EXIT_FAIL, "no images");
        goto done;
    }
    /* The channels of the images are the histogram's; --channels C:A must name as many. */
    options eo = *o;
    eo.channels = img->channels;
    eo.active = o->have_channels ? o->active : img->channels;
    if (o->have_channels && o->channels != img->channels) {
        rc = cli_error(CLI_EXIT_USAGE, "--channels %u:%u: %s has %u channel(s)", o->channels,
                       o->active, img->name, img->channels);
        goto done;
    }
    const int per_channel = o->have_channels || img->channels > 1;
    const gpuhist_dtype dtype = img->dtype;
    if (o->equalize && (rc = cli_equalize_check(o->equalize, img)))
        goto done;
    if (o->have_integer && !o->have_bins && !is_small_int(dtype)) {
        rc = cli_error(CLI_EXIT_USAGE, "--integer on %s samples of images needs -b N",
                       gpuhist_dtype_name(dtype));
        goto done;
    }
    cli_input in;
    memset(&in, 0, sizeof in);
    in.dtype = dtype;
    snprintf(in.name, sizeof in.name, "%.*s", (int)sizeof in.name - 1, img->name);
    gpuhist_bin_spec spec;
    if ((rc = build_spec(&eo, &in, edges_in, edge_bins, &spec)))
        goto done;
    if (spec.kind == GPUHIST_BINS_EVEN && spec.auto_range) {
        /* a first pass: the finite min and max of every image (of its region) */
        double lo = 0, hi = 0;
        int found = 0;
        for (; img; rc = cli_image_set_next(set, &img)) {
            gpuhist_samples s;
            double a, b;
            int f;
            if ((rc = cli_image_samples(img, &o->roi, eo.active, &s)))
                goto done;
            if (gpuhist_minmax(ctx, &s, &a, &b, &f) != GPUHIST_OK) {
                rc = cli_error(CLI_EXIT_FAIL, "%s: %s", img->name, gpuhist_last_error(ctx));
                goto done;
            }
            if (f) {
                lo = found && lo < a ? lo : a;
                hi = found && hi > b ? hi : b;
                found = 1;
            }
        }
        if (rc || (rc = cli_image_set_rewind(set)) || (rc = cli_image_set_next(set, &img)))
            goto done;
        gpuhist_bin_spec a = gpuhist_bins_from_minmax(spec.bins, lo, hi, found);
        a.outliers = spec.outliers;
        spec = a;
        if (!isfinite(spec.upper - spec.lower)) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: range: the data's range [%g, %g] overflows a double",
                           in.name, spec.lower, spec.upper);
            goto done;
        }
    }
    if ((rc = alloc_result(&eo, &spec, &counts, &edges_out, &no_sums, &no_squares)))
        goto done;
    part = calloc((size_t)spec.bins * eo.active, sizeof *part);
    if (!part) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory for %u bins", spec.bins);
        goto done;
    }
    if (o->each && !(each_tmp = tmpfile())) {
        rc = cli_error(CLI_EXIT_FAIL, "cannot create a temporary file: %s", strerror(errno));
        goto done;
    }
    gpuhist_result total = gpuhist_result_host(counts);
    total.edges = edges_out;
    size_t pages = 0;
    double t_count = 0;
    for (; img; rc = cli_image_set_next(set, &img)) {
        if (o->equalize && pages == 1) {
            rc = cli_error(CLI_EXIT_USAGE, "--equalize takes one image; %s has several pages",
                           o->input);
            goto done;
        }
        gpuhist_samples s;
        if ((rc = cli_image_samples(img, &o->roi, eo.active, &s)))
            goto done;
        gpuhist_result r = gpuhist_result_host(part);
        r.edges = edges_out;
        double t0 = cli_now();
        gpuhist_status st = gpuhist_histogram(ctx, &s, &spec, &r);
        t_count += cli_now() - t0;
        if (st != GPUHIST_OK) {
            rc = cli_error(st == GPUHIST_ERROR_UNSUPPORTED && o->strategy ? CLI_EXIT_USAGE
                                                                          : CLI_EXIT_FAIL,
                           "%s: %s", img->name, gpuhist_last_error(ctx));
            goto done;
        }
        if (o->each && (rc = write_image_histogram(each_tmp, o, &r, part, edges_out, &spec, dtype,
                                                   per_channel, img->name, pages, 0, NULL,
                                                   NULL)))
            goto done;
        add_result(&total, counts, &r, part, pages == 0);
        ++pages;
    }
    if (rc)
        goto done;
    if (o->verbose) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, cli_image_set_bytes(set));
        cli_note("input: %zu image file(s), %zu page(s), %s, %u channel(s) of %s%s; decoded by "
                 "%d thread(s) in %.3f s of their time, counted in %.3f s, %.3f s in all",
                 cli_image_set_files(set), pages, sz, img ? img->channels : eo.channels,
                 gpuhist_dtype_name(dtype), o->roi.given ? " (region of interest)" : "",
                 cli_image_set_threads(set), cli_image_set_decode_seconds(set), t_count,
                 cli_now() - t_start);
        cli_note("backend: %s, device: %s", gpuhist_backend_name(total.backend),
                 gpuhist_device_name(ctx));
        const char *note = gpuhist_backend_note(ctx);
        if (note && *note)
            cli_note("note: %s", note);
        cli_note("strategy: %s", total.strategy ? total.strategy : "?");
    }
    if (o->each) {
        cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
        if (fmt == CLI_FMT_JSON)
            fputs("\n]\n", each_tmp);
        rewind(each_tmp);
        char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, each_tmp)) > 0)
            fwrite(buf, 1, n, out.f);
        if (ferror(each_tmp)) {
            rc = cli_error(CLI_EXIT_FAIL, "temporary file: read error");
            goto done;
        }
    } else {
        int bars = (o->format ? o->format : CLI_FMT_TABLE) == CLI_FMT_TABLE && out.f == stdout &&
                   cli_isatty(stdout);
        char title[600];
        if (o->ninputs > 1)
            snprintf(title, sizeof title, "%s and %zu more", o->inputs[0], o->ninputs - 1);
        else
            snprintf(title, sizeof title, "%s", o->input);
        cli_plot_options po = {o->plot_format, o->plot_log, o->outliers, eo.channels, title,
                               o->verbose};
        if ((rc = write_image_histogram(out.f, o, &total, counts, edges_out, &spec, dtype,
                                        per_channel, NULL, 0, bars, o->plot ? &plot : NULL,
                                        &po)))
            goto done;
    }
    if (o->equalize) {
        /* the one image again (kept by the set, not decoded twice) */
        if ((rc = cli_image_set_rewind(set)) || (rc = cli_image_set_next(set, &img)))
            goto done;
        rc = cli_equalize_write(&eq, img, &o->roi, counts, spec.bins, total.channel_index,
                                total.channels);
        if (rc)
            goto done;
    }
    rc = cli_output_commit(&out);
    if (rc == CLI_EXIT_OK && o->plot)
        rc = cli_output_commit(&plot);

done:
    if (rc) {
        cli_output_abort(&out);
        cli_output_abort(&eq);
        cli_output_abort(&plot);
    }
    if (each_tmp)
        fclose(each_tmp);
    cli_image_set_close(set);
    free(counts);
    free(part);
    free(edges_out);
    free(edges_in);
    gpuhist_destroy(ctx);
    return rc;
}

static int dispatch_options(options *o);

static int dispatch(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "demo") == 0)
        return cli_demo(argc - 1, argv + 1);
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc == CLI_EXIT_OK)
        rc = dispatch_options(&o);
    if (argc > 0)
        free((void *)o.inputs);
    return rc;
}

static int dispatch_options(options *op)
{
    options o = *op;
    int rc;
    if (o.mpi && (rc = cli_mpi_start(NULL, NULL)))
        return rc;
    if (cli_mpi_rank() > 0) { /* rank 0 speaks for all */
        o.verbose = 0;
        o.progress = 0;
    }
    if (o.help) {
        /* longer than stdio's buffer: a failed write is seen here, with its errno */
        if (fputs(usage_text, stdout) == EOF)
            return cli_error(CLI_EXIT_FAIL, "standard output: write error: %s", strerror(errno));
        return CLI_EXIT_OK;
    }
    if (o.version) {
        printf("gpuhist %s (library %s; backends: cpu%s%s; plots: %s; images: %s)\n",
               GPUHIST_VERSION_STRING, gpuhist_version(),
               gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA) ? ", cuda" : "",
               gpuhist_backend_compiled(GPUHIST_BACKEND_OPENCL) ? ", opencl" : "",
               cli_plot_formats_built(), cli_image_formats_built());
        return CLI_EXIT_OK;
    }
    if (o.list_strategies)
        return list_strategies(o.format);
    if (o.list_devices)
        return list_devices(&o);
    if (!o.have_input) {
        if (cli_isatty(stdin))
            return cli_error(CLI_EXIT_USAGE,
                             "no input: give a FILE, or - for standard input (try 'gpuhist demo' "
                             "or 'gpuhist --help')");
        o.input = "-";
    }
    if (o.dims) {
        if (o.ninputs > 1)
            return cli_error(CLI_EXIT_USAGE, "--dims reads one input, not %zu", o.ninputs);
        if (o.weights && strcmp(o.weights, "-") == 0 && strcmp(o.input, "-") == 0)
            return cli_error(CLI_EXIT_USAGE,
                             "--weights -: the data comes from standard input; the weights need "
                             "a file of their own");
        return run_nd(&o);
    }
    int images = 0;
    if ((rc = image_inputs(&o, &images)))
        return rc;
    if (images)
        return run_images(&o);
    if (o.weights && strcmp(o.weights, "-") == 0 && strcmp(o.input, "-") == 0)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights -: the data comes from standard input; the weights need a "
                         "file of their own");
    return run(&o);
}

int main(int argc, char **argv)
{
    int rc = CLI_EXIT_OK;
    /* Started by an MPI launcher (and built with MPI): every rank runs the command on its share
     * of the input (mpi.c). Never for the demo; never without a launcher or --mpi. */
    if (cli_mpi_launched() && !(argc > 1 && strcmp(argv[1], "demo") == 0))
        rc = cli_mpi_start(&argc, &argv);
    if (rc == CLI_EXIT_OK)
        rc = dispatch(argc, argv);
    /* Whatever went to standard output (a histogram, a listing, --help) must have arrived:
     * "gpuhist --list-strategies > /dev/full" fails. After another error, that one is reported. */
    if (rc == CLI_EXIT_OK)
        rc = cli_flush_stdout();
    /* MPI: the last agreement (every rank exits with the same status) and MPI_Finalize */
    return cli_mpi_end(rc);
}
