/*
 * main.c - the gpuhist command: options (DESIGN.md §8), bin specification, one library call.
 *
 * Order of work, chosen so that mistakes cost nothing: every option is checked first (exit 2),
 * then the context is created and a forced strategy checked, and only then is a possibly huge
 * input read. The output file is written under a temporary name and renamed when complete.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_TYPE = 1, O_TEXT, O_RAW, O_NPY, O_BINS, O_RANGE, O_EDGES, O_INTEGER, O_LAST_INCLUSIVE,
    O_OUTLIERS, O_CHANNELS, O_BACKEND, O_DEVICE, O_LIST_DEVICES, O_STRATEGY, O_LIST_STRATEGIES,
    O_THREADS, O_FORMAT, O_OUTPUT, O_VERBOSE, O_NO_PROGRESS, O_VERSION, O_HELP
};

static const cli_optdef option_defs[] = {
    {"type", 't', 1, O_TYPE},
    {"text", 0, 0, O_TEXT},
    {"raw", 0, 0, O_RAW},
    {"npy", 0, 0, O_NPY},
    {"bins", 'b', 1, O_BINS},
    {"range", 'r', 1, O_RANGE},
    {"edges", 'e', 1, O_EDGES},
    {"integer", 0, 1, O_INTEGER},
    {"last-inclusive", 0, 0, O_LAST_INCLUSIVE},
    {"outliers", 0, 1, O_OUTLIERS},
    {"channels", 0, 1, O_CHANNELS},
    {"backend", 'B', 1, O_BACKEND},
    {"device", 0, 1, O_DEVICE},
    {"list-devices", 0, 0, O_LIST_DEVICES},
    {"strategy", 's', 1, O_STRATEGY},
    {"list-strategies", 0, 0, O_LIST_STRATEGIES},
    {"threads", 'j', 1, O_THREADS},
    {"format", 'f', 1, O_FORMAT},
    {"output", 'o', 1, O_OUTPUT},
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
    "Execution\n"
    "  -B, --backend B         auto (default) | cuda | opencl | cpu\n"
    "      --device N          device number of the backend (see --list-devices)\n"
    "  -s, --strategy S        force a strategy; --list-strategies shows them all\n"
    "  -j, --threads N         CPU threads (default: all cores)\n"
    "Output\n"
    "  -f, --format F          table (default; bars when stdout is a terminal) | csv | json\n"
    "  -o, --output FILE       write there (only once complete) instead of standard output\n"
    "  -v, --verbose           backend, device, strategy, time, throughput on stderr\n"
    "      --no-progress       no progress bar on stderr (drawn only on a terminal after ~1 s)\n"
    "      --list-strategies   the registered strategies (name, backend, seed, supports)\n"
    "      --list-devices      the devices of each backend (-B to pick one)\n"
    "      --version, --help\n"
    "\n"
    "Exit status: 0 success, 2 usage error, 1 any other error (one-line message on stderr).\n"
    "JSON: {\"edges\", \"counts\" (one array per channel with --channels), \"underflow\",\n"
    "\"overflow\", \"nan\", \"total\", \"backend\", \"strategy\", ...}. CSV: bin,lower,upper,count.\n";

typedef struct options {
    const char *input;
    int have_input;
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
    int have_channels;
    uint32_t channels, active;
    gpuhist_backend backend;
    int backend_given;
    int device;
    const char *strategy;
    int threads;
    cli_format format;
    const char *output;
    int verbose;
    int progress;
    int version, help, list_strategies, list_devices;
} options;

/* Display width of a UTF-8 string (one column per code point). */
static int utf8_width(const char *s)
{
    int w = 0;
    for (; *s; ++s)
        if (((unsigned char)*s & 0xc0) != 0x80)
            ++w;
    return w;
}

static void put_padded(FILE *f, const char *s, int width)
{
    fputs(s, f);
    for (int w = utf8_width(s); w < width; ++w)
        fputc(' ', f);
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
    int wn = 8, wb = 7, ws = 4, wsup = 8;
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        if (utf8_width(d.name) > wn)
            wn = utf8_width(d.name);
        if (utf8_width(gpuhist_backend_name(d.backend)) > wb)
            wb = utf8_width(gpuhist_backend_name(d.backend));
        if (d.seed && utf8_width(d.seed) > ws)
            ws = utf8_width(d.seed);
        if (d.supports && utf8_width(d.supports) > wsup)
            wsup = utf8_width(d.supports);
    }
    /* One strategy per line, name first, so scripts can take the first column. */
    put_padded(stdout, "strategy", wn + 2);
    put_padded(stdout, "backend", wb + 2);
    put_padded(stdout, "seed", ws + 2);
    put_padded(stdout, "supports", wsup + 2);
    fputs("mechanism\n", stdout);
    for (size_t i = 0; i < n; ++i) {
        if (gpuhist_strategy_info(i, &d) != GPUHIST_OK)
            continue;
        put_padded(stdout, d.name, wn + 2);
        put_padded(stdout, gpuhist_backend_name(d.backend), wb + 2);
        put_padded(stdout, d.seed ? d.seed : "", ws + 2);
        put_padded(stdout, d.supports ? d.supports : "", wsup + 2);
        fputs(d.summary ? d.summary : "", stdout);
        fputc('\n', stdout);
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

static int parse_range(const char *s, double *lo, double *hi)
{
    /* "LO:HI"; the colon after the first number (numbers never contain ':'). */
    const char *colon = strchr(s, ':');
    if (!colon || strchr(colon + 1, ':'))
        return 0;
    char a[128];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof a)
        return 0;
    memcpy(a, s, n);
    a[n] = 0;
    return cli_parse_double(a, lo) && cli_parse_double(colon + 1, hi);
}

static int parse_edges(const char *arg, double **edges, uint32_t *bins)
{
    char *text;
    size_t len;
    const char *name = "--edges";
    char namebuf[600];
    int rc;
    if (arg[0] == '@') {
        snprintf(namebuf, sizeof namebuf, "%s", arg + 1);
        name = namebuf;
        rc = cli_slurp(arg + 1, "the edges", 0, &text, &len);
        if (rc)
            return CLI_EXIT_USAGE;
    } else {
        len = strlen(arg);
        text = malloc(len + 1);
        if (!text)
            return cli_error(CLI_EXIT_FAIL, "out of memory");
        memcpy(text, arg, len + 1);
    }
    void *vals;
    uint64_t n;
    rc = cli_parse_text(name, text, len, GPUHIST_F64, 0, CLI_EXIT_USAGE, &vals, &n);
    free(text);
    if (rc)
        return rc;
    double *e = vals;
    if (n < 2 || n - 1 > UINT32_MAX) {
        free(vals);
        return cli_error(CLI_EXIT_USAGE, "%s: need at least 2 edges, got %llu", name,
                         (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; ++i) {
        if (!isfinite(e[i])) {
            free(vals);
            return cli_error(CLI_EXIT_USAGE, "%s: edge %llu is not finite", name,
                             (unsigned long long)i);
        }
        if (i && !(e[i] > e[i - 1])) {
            char a[40], b[40];
            cli_format_double(a, sizeof a, e[i - 1]);
            cli_format_double(b, sizeof b, e[i]);
            free(vals);
            return cli_error(CLI_EXIT_USAGE,
                             "%s: edges must be strictly increasing (edge %llu = %s after %s)",
                             name, (unsigned long long)i, b, a);
        }
    }
    *edges = e;
    *bins = (uint32_t)(n - 1);
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

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
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
            if (o->have_input)
                return cli_error(CLI_EXIT_USAGE, "more than one input ('%s' and '%s')", o->input,
                                 a);
            o->input = a;
            o->have_input = 1;
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
            /* the library's limit (gpuhist_bin_spec.bins <= 2^31) */
            if (!cli_parse_u64(a, &u) || u < 1 || u > (1u << 31))
                return cli_error(CLI_EXIT_USAGE, "%s: expected a number of bins from 1 to %u, got '%s'",
                                 g.shown, 1u << 31, a);
            o->bins = (uint32_t)u;
            o->have_bins = 1;
            break;
        case O_RANGE:
            if (!parse_range(a, &o->lo, &o->hi))
                return cli_error(CLI_EXIT_USAGE, "%s: expected LO:HI with finite numbers, got '%s'",
                                 g.shown, a);
            if (!(o->lo < o->hi))
                return cli_error(CLI_EXIT_USAGE, "%s %s: LO must be below HI", g.shown, a);
            o->have_range = 1;
            break;
        case O_EDGES:
            o->edges_arg = a;
            break;
        case O_INTEGER:
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
        case O_BACKEND:
            if (!gpuhist_backend_parse(a, &o->backend))
                return cli_error(CLI_EXIT_USAGE, "%s: unknown backend '%s' (auto cuda opencl cpu)",
                                 g.shown, a);
            o->backend_given = 1;
            break;
        case O_DEVICE:
            if (!cli_parse_u64(a, &u) || u > 4096)
                return cli_error(CLI_EXIT_USAGE, "%s: expected a device number, got '%s'", g.shown, a);
            o->device = (int)u;
            break;
        case O_LIST_DEVICES:
            o->list_devices = 1;
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
            else
                return cli_error(CLI_EXIT_USAGE, "%s: expected table, csv or json, got '%s'", g.shown, a);
            break;
        case O_OUTPUT:
            if (!*a)
                return cli_error(CLI_EXIT_USAGE, "%s: empty file name", g.shown);
            o->output = a;
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
    if (!o->have_channels)
        o->channels = o->active = 1;
    if (o->have_range + (o->edges_arg != NULL) + o->have_integer > 1)
        return cli_error(CLI_EXIT_USAGE, "--range, --edges and --integer conflict (give one)");
    if (o->edges_arg && o->have_bins)
        return cli_error(CLI_EXIT_USAGE, "--bins conflicts with --edges (the edges give the bins)");
    if (o->in_format == CLI_IN_NPY && o->have_type)
        return cli_error(CLI_EXIT_USAGE, "--npy takes the type from the header; leave out --type");
    return CLI_EXIT_OK;
}

static int create_context(const options *o, gpuhist_ctx **ctx)
{
    gpuhist_status st = o->device >= 0 ? gpuhist_create_on(ctx, o->backend, o->device)
                                       : gpuhist_create(ctx, o->backend);
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

static int run(const options *o)
{
    double *edges_in = NULL;
    uint32_t edge_bins = 0;
    gpuhist_ctx *ctx = NULL;
    cli_input in;
    memset(&in, 0, sizeof in);
    uint64_t *counts = NULL;
    double *edges_out = NULL;
    int rc;

    if (o->edges_arg && (rc = parse_edges(o->edges_arg, &edges_in, &edge_bins)))
        return rc;
    if ((rc = create_context(o, &ctx))) {
        free(edges_in);
        return rc;
    }

    /* The output's temporary file first: an unwritable destination fails before a big read. */
    cli_output out;
    if ((rc = cli_output_open(&out, o->output))) {
        free(edges_in);
        gpuhist_destroy(ctx);
        return rc;
    }

    cli_read_options ro = {o->input, o->in_format, o->have_type, o->type, o->channels, o->progress};
    if ((rc = cli_read_input(&ro, &in)))
        goto done;
    if (in.samples % o->channels) {
        rc = cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %u channels", in.name,
                       (unsigned long long)in.samples, o->channels);
        goto done;
    }

    gpuhist_bin_spec spec;
    if ((rc = build_spec(o, &in, edges_in, edge_bins, &spec)))
        goto done;

    gpuhist_samples s = gpuhist_samples_1d(in.data, in.dtype, in.samples / o->channels);
    s.channels = o->channels;
    s.active_channels = o->active;
    s.location = GPUHIST_MEMORY_HOST;

    counts = calloc((size_t)spec.bins * o->active, sizeof *counts);
    edges_out = malloc(((size_t)spec.bins + 1) * sizeof *edges_out);
    if (!counts || !edges_out) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory for %u bins", spec.bins);
        goto done;
    }
    gpuhist_result r = gpuhist_result_host(counts);
    r.edges = edges_out;
    gpuhist_status st = gpuhist_histogram(ctx, &s, &spec, &r);
    if (st != GPUHIST_OK) {
        /* A strategy forced onto a request it cannot do is a conflict of options. */
        int status = st == GPUHIST_ERROR_UNSUPPORTED && o->strategy ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
        rc = cli_error(status, "%s: %s", in.name, gpuhist_last_error(ctx));
        goto done;
    }

    if (o->verbose) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, in.bytes_read);
        double bytes = (double)in.samples * (double)gpuhist_dtype_size(in.dtype);
        cli_note("input: %s, %s %s, %llu samples of %s, read in %.3f s", in.name,
                 in.format == CLI_IN_NPY ? ".npy" : in.format == CLI_IN_TEXT ? "text" : "raw", sz,
                 (unsigned long long)in.samples, gpuhist_dtype_name(in.dtype), in.seconds);
        cli_note("backend: %s, device: %s", gpuhist_backend_name(r.backend),
                 gpuhist_device_name(ctx));
        const char *note = gpuhist_backend_note(ctx);
        if (note && *note)
            cli_note("note: %s", note);
        cli_note("strategy: %s", r.strategy ? r.strategy : "?");
        cli_note("time: %.6f s, throughput: %.2f GB/s", r.seconds,
                 r.seconds > 0 ? bytes / r.seconds / 1e9 : 0.0);
    }

    cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
    int to_stdout = !o->output || strcmp(o->output, "-") == 0;
    int bars = fmt == CLI_FMT_TABLE && to_stdout && cli_isatty(stdout);
    cli_histogram h = {&r, counts, edges_out, in.dtype, spec.kind, o->have_channels};
    cli_write_histogram(out.f, fmt, &h, bars, bars ? cli_terminal_columns() : 80);
    rc = cli_output_commit(&out);

done:
    if (rc)
        cli_output_abort(&out); /* after commit failure it is already clean: a no-op */
    cli_input_free(&in);
    free(counts);
    free(edges_out);
    free(edges_in);
    gpuhist_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "demo") == 0)
        return cli_demo(argc - 1, argv + 1);
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    if (o.help) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (o.version) {
        printf("gpuhist %s (library %s; backends: cpu%s%s)\n", GPUHIST_VERSION_STRING,
               gpuhist_version(), gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA) ? ", cuda" : "",
               gpuhist_backend_compiled(GPUHIST_BACKEND_OPENCL) ? ", opencl" : "");
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
    return run(&o);
}
