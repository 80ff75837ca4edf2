/*
 * options.c - the command's options: the table cli_getopt reads, the text of --help, the
 * parsing of each value (one "gpuhist: OPTION: ..." message and exit status 2 for a bad one),
 * and the checks between options, all before anything is opened or read.
 *
 * Values whose meaning needs more than the option itself are kept as given: -e (edges.c reads
 * the list or the file when the run starts), per-axis lists of -b, -r and --integer (nd_axes.c
 * reads them, and they need --dims).
 */
#include "command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    O_TYPE = 1, O_TEXT, O_RAW, O_NPY, O_BINS, O_RANGE, O_EDGES, O_INTEGER, O_LAST_INCLUSIVE,
    O_OUTLIERS, O_CHANNELS, O_BACKEND, O_DEVICE, O_LIST_DEVICES, O_STRATEGY, O_LIST_STRATEGIES,
    O_THREADS, O_FORMAT, O_OUTPUT, O_VERBOSE, O_NO_PROGRESS, O_VERSION, O_HELP, O_WEIGHTS,
    O_WEIGHTS_TYPE, O_SQUARES, O_DENSITY, O_CUMULATIVE, O_DEVICES, O_MPI, O_IMAGE, O_ROI, O_EACH,
    O_EQUALIZE, O_PLOT, O_PLOT_LOG, O_DIMS, O_START_ON_CPU, O_NUMPY_RULES
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
    {"numpy-rules", 0, 1, O_NUMPY_RULES},
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
    {"start-on-cpu", 0, 0, O_START_ON_CPU},
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
    "  -t, --type T            u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 f16 bf16: raw little-endian\n"
    "                          samples (default: from the .npy header; else u8; f64 for --text)\n"
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
    "  -b, --bins RULE         NumPy's bin-count rule: auto fd doane scott stone rice sturges\n"
    "                          sqrt (the data is read whole, as NumPy needs it; not with\n"
    "                          --weights, --channels, --integer or --dims)\n"
    "      --numpy-rules V     2 (default): NumPy 2's -b RULE rules, and NumPy 2's float32\n"
    "                          edges (a float32 linspace) for f32 data without -r; 1: NumPy\n"
    "                          1.x's (1.26 and before): other rules on f32 and integer data,\n"
    "                          and f32 edges computed in double, then rounded\n"
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
    "Weights (summed per bin exactly; auto: on the CPU; -B cuda|opencl: on the GPU, same bits)\n"
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
    "  -j, --threads N         CPU threads: counting and output formatting (default: all cores)\n"
    "      --start-on-cpu      -B cuda|opencl: count a file on CPU threads while the device\n"
    "                          starts, the device counts the rest (auto does this by default)\n"
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

int cli_print_help(void)
{
    /* longer than stdio's buffer: a failed write is seen here, with its errno */
    if (fputs(usage_text, stdout) == EOF)
        return cli_error(CLI_EXIT_FAIL, "standard output: write error: %s", strerror(errno));
    return CLI_EXIT_OK;
}

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

static int parse_devices(const char *shown, const char *a, cli_options *o);

int cli_parse_options(int argc, char **argv, cli_options *o)
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
                                 "%s: unknown type '%s' (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 f16 "
                                 "bf16)",
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
            o->bins_rule = NULL;
            if (gpuhist_bin_rule_known(a)) { /* a rule: bins.c's cli_rule_spec reads the data */
                o->bins_rule = a;
                o->bins = 0;
                break;
            }
            if (strchr(a, ',')) { /* per axis: nd_axes.c reads it */
                o->axis_list = o->axis_list ? o->axis_list : g.shown;
                break;
            }
            /* the library's limit (gpuhist_bin_spec.bins <= 2^31) */
            if (!cli_parse_u64(a, &u) || u < 1 || u > (1u << 31))
                return cli_error(CLI_EXIT_USAGE,
                                 "%s: expected a number of bins from 1 to %u or a rule (auto, "
                                 "fd, doane, scott, stone, rice, sturges, sqrt), got '%s'",
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
        case O_NUMPY_RULES:
            if (strcmp(a, "1") != 0 && strcmp(a, "2") != 0)
                return cli_error(CLI_EXIT_USAGE, "%s: expected 1 or 2 (NumPy's major version), "
                                                 "got '%s'", g.shown, a);
            o->numpy_rules = a[0] - '0';
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
        case O_START_ON_CPU:
            o->start_on_cpu = 1;
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
    if (o->bins_rule) {
        /* what NumPy's rules do not take (numpy.histogram refuses weights with a rule;
         * histogramdd takes no rule) or what cannot read the data whole */
        const char *no = o->have_integer ? "--integer" : o->dims ? "--dims"
                         : o->weights ? "--weights" : o->have_channels && o->active > 1
                         ? "--channels with more than one histogrammed channel"
                         : o->image ? "--image" : o->each ? "--each" : o->mpi ? "--mpi"
                         : o->devices_given ? "--devices" : o->start_on_cpu ? "--start-on-cpu"
                         : NULL;
        if (no)
            return cli_error(CLI_EXIT_USAGE, "-b %s (a bin-count rule) conflicts with %s",
                             o->bins_rule, no);
    }
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
    if (o->start_on_cpu) {
        /* what a run that starts on the CPU cannot be: said, never silently ignored */
        const char *with = o->backend_given && o->backend == GPUHIST_BACKEND_CPU ? "-B cpu"
                           : o->device >= 0                                     ? "--device"
                           : o->devices_given                                   ? "--devices"
                           : o->weights                                         ? "--weights"
                           : o->strategy && strcmp(o->strategy, "auto") != 0    ? "--strategy"
                           : o->in_format == CLI_IN_TEXT                        ? "--text"
                           : o->dims                                            ? "--dims"
                           : o->image                                           ? "--image"
                           : o->mpi                                             ? "--mpi"
                                                                                : NULL;
        if (with)
            return cli_error(CLI_EXIT_USAGE,
                             "--start-on-cpu conflicts with %s (it counts a raw or .npy file on "
                             "one device with the auto strategy, unweighted)",
                             with);
    }
    return CLI_EXIT_OK;
}

/* --devices all | N,N,... (a number twice: two contexts on that device) */
static int parse_devices(const char *shown, const char *a, cli_options *o)
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
