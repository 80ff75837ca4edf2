/*
 * nd.c - the command's N-D (joint) histograms: --dims N, through gpuhist_histogramdd().
 *
 * Input: N coordinates per point, interleaved point after point: raw or text values (N per
 * point, the line structure of text ignored), a flat .npy, or a 2-D .npy of shape (points, N)
 * (C order: interleaved; Fortran order: one column per axis, read in place). --dims auto takes
 * N from a 2-D .npy. A regular raw or .npy file (C order or flat) whose axes all have their
 * bins given (-r, -e, --integer) and no weights is read in chunks of about 16 MiB through an N-D
 * stream (gpuhist_nd_stream_*), so memory is bounded by one chunk and the counts; anything else
 * (auto ranges, text, pipes, Fortran order, weights) is read whole.
 * Bins: one spec kind for every axis, with per-axis values separated by commas (-b 256,256,
 * -r 0:1,0:1, --integer 0,0) or, for edges, by semicolons (-e '0,1,2;0,5,10'); one value applies
 * to every axis. Without -r/-e/--integer every axis gets even bins over its coordinates' finite
 * min:max, last edge inclusive (numpy.histogramdd's default range); 10 bins per axis unless -b.
 * Output (one histogram object, four formats): table (the non-empty bins, one per row, with
 * each axis's bin and its edges), CSV (every bin, row-major: bin index and edges per axis, then
 * count[, sum, sum_sq, density]), JSON (shape, edges per axis, counts and the other arrays
 * nested as the shape), npy (counts as a uint64 array of the histogram's shape; edges of axis a
 * in X.edges<a>.npy, sums in X.sums.npy, X.sums_squared.npy). Row texts are built from edge
 * strings formatted once per axis, so a 4096 x 4096 CSV costs little more than its bytes.
 * Limits: the product of the bins at most 2^31 and what host memory holds; --cumulative, clamped
 * outliers, --channels, --plot, images and MPI are refused with N-D.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- per-axis option values ------------------------------------------------------------------ */

/* Split `s` at `sep` into at most `max` malloc'd pieces. @return the count, -1 beyond max. */
static int split(const char *s, char sep, char **out, int max)
{
    int n = 0;
    for (const char *p = s;;) {
        const char *q = strchr(p, sep);
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (n == max) {
            for (int i = 0; i < n; ++i)
                free(out[i]);
            return -1;
        }
        out[n] = malloc(len + 1);
        if (!out[n]) {
            for (int i = 0; i < n; ++i)
                free(out[i]);
            return -1;
        }
        memcpy(out[n], p, len);
        out[n][len] = 0;
        ++n;
        if (!q)
            break;
        p = q + 1;
    }
    return n;
}

static void free_pieces(char **p, int n)
{
    for (int i = 0; i < n; ++i)
        free(p[i]);
}

/* Split an option's per-axis list: one item (for every axis) or one per axis. */
static int axis_items(const char *opt, const char *arg, char sep, uint32_t dims, char **items,
                      int *n)
{
    *n = split(arg, sep, items, GPUHIST_MAX_DIMS);
    if (*n < 0)
        return cli_error(CLI_EXIT_USAGE, "%s %s: more than %d axes", opt, arg, GPUHIST_MAX_DIMS);
    if (*n != 1 && (uint32_t)*n != dims) {
        int rc = cli_error(CLI_EXIT_USAGE,
                           "%s %s: %d values for --dims %u (give one for every axis, or one per "
                           "axis)",
                           opt, arg, *n, dims);
        free_pieces(items, *n);
        return rc;
    }
    return CLI_EXIT_OK;
}

/* The edges of one axis: "E0,E1,..." or "@FILE". *out malloc'd. */
static int axis_edges(const char *item, uint32_t axis, double **out, uint32_t *bins)
{
    char where[64];
    snprintf(where, sizeof where, "-e: axis %u", axis);
    return cli_parse_edges(item, where, 1u << 31, out, bins);
}

/* The bin spec of every axis from -b, -r, -e, --integer, --last-inclusive. */
static int parse_axes(const cli_nd_options *o, uint32_t dims, gpuhist_bin_spec *axes,
                      double **own)
{
    char *items[GPUHIST_MAX_DIMS];
    int n, rc;
    uint32_t bins[GPUHIST_MAX_DIMS];
    for (uint32_t a = 0; a < dims; ++a)
        bins[a] = 10; /* numpy.histogramdd's default */
    if (o->bins_arg) {
        if ((rc = axis_items("-b", o->bins_arg, ',', dims, items, &n)))
            return rc;
        for (uint32_t a = 0; a < dims; ++a) {
            uint64_t u;
            const char *it = items[n == 1 ? 0 : a];
            if (!cli_parse_u64(it, &u) || u < 1 || u > (1u << 31)) {
                rc = cli_error(CLI_EXIT_USAGE,
                               "-b %s: axis %u: expected a number of bins from 1 to %u, got '%s'",
                               o->bins_arg, a, 1u << 31, it);
                free_pieces(items, n);
                return rc;
            }
            bins[a] = (uint32_t)u;
        }
        free_pieces(items, n);
    }
    if (o->range_arg) {
        if ((rc = axis_items("-r", o->range_arg, ',', dims, items, &n)))
            return rc;
        for (uint32_t a = 0; a < dims; ++a) {
            const char *it = items[n == 1 ? 0 : a];
            const char *colon = strchr(it, ':');
            double lo = 0, hi = 0;
            const char *why = "is not LO:HI";
            if (colon && !strchr(colon + 1, ':')) {
                char lo_s[80];
                size_t len = (size_t)(colon - it);
                if (len < sizeof lo_s) {
                    memcpy(lo_s, it, len);
                    lo_s[len] = 0;
                    why = cli_double_problem(lo_s, &lo);
                    if (!why)
                        why = cli_double_problem(colon + 1, &hi);
                    if (!why && !(lo < hi))
                        why = "has LO not below HI";
                }
            }
            if (why) {
                rc = cli_error(CLI_EXIT_USAGE, "-r %s: axis %u: '%s' %s", o->range_arg, a, it,
                               why);
                free_pieces(items, n);
                return rc;
            }
            axes[a] = gpuhist_bins_even(bins[a], lo, hi);
            axes[a].last_edge_inclusive = o->last_inclusive;
        }
        free_pieces(items, n);
    } else if (o->integer_arg) {
        if (!o->bins_arg)
            return cli_error(CLI_EXIT_USAGE,
                             "--integer with --dims needs -b (the number of values per axis)");
        if ((rc = axis_items("--integer", o->integer_arg, ',', dims, items, &n)))
            return rc;
        for (uint32_t a = 0; a < dims; ++a) {
            int64_t lo;
            const char *it = items[n == 1 ? 0 : a];
            if (!cli_parse_i64(it, &lo)) {
                rc = cli_error(CLI_EXIT_USAGE, "--integer %s: axis %u: expected an integer, got "
                               "'%s'", o->integer_arg, a, it);
                free_pieces(items, n);
                return rc;
            }
            axes[a] = gpuhist_bins_integer(bins[a], lo);
        }
        free_pieces(items, n);
    } else if (o->edges_arg) {
        if ((rc = axis_items("-e", o->edges_arg, ';', dims, items, &n)))
            return rc;
        for (uint32_t a = 0; a < dims; ++a) {
            uint32_t b = 0;
            if (n == 1 && a > 0) {
                axes[a] = axes[0];
                continue;
            }
            if ((rc = axis_edges(items[a], a, &own[a], &b))) {
                free_pieces(items, n);
                return rc;
            }
            axes[a] = gpuhist_bins_edges(b, own[a]);
            axes[a].last_edge_inclusive = o->last_inclusive;
        }
        free_pieces(items, n);
    } else {
        for (uint32_t a = 0; a < dims; ++a)
            axes[a] = gpuhist_bins_auto(bins[a]);
    }
    return CLI_EXIT_OK;
}

/* ---- output buffer ----------------------------------------------------------------------------- */

typedef struct nbuf {
    FILE *f;
    char *p, *end, *start;
} nbuf;
enum { NBUF_SIZE = 1 << 20 };

static void nb_flush(nbuf *b)
{
    if (b->p > b->start)
        fwrite(b->start, 1, (size_t)(b->p - b->start), b->f);
    b->p = b->start;
}
/* Room for n more bytes (n <= NBUF_SIZE). */
static char *nb_room(nbuf *b, size_t n)
{
    if ((size_t)(b->end - b->p) < n)
        nb_flush(b);
    return b->p;
}
static void nb_put(nbuf *b, const char *s, size_t n)
{
    while (n) {
        size_t k = n < NBUF_SIZE ? n : NBUF_SIZE;
        char *p = nb_room(b, k);
        memcpy(p, s, k);
        b->p += k;
        s += k;
        n -= k;
    }
}
static void nb_puts(nbuf *b, const char *s) { nb_put(b, s, strlen(s)); }
static void nb_printf(nbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    nb_put(b, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* A double as text: shortest round-trip; non-finite as "nan"/"inf"/"-inf" (JSON: strings). */
static size_t value_text(char *buf, double v, int json)
{
    if (!isfinite(v)) {
        const char *w = isnan(v) ? (json ? "\"NaN\"" : "nan")
                        : v > 0  ? (json ? "\"Infinity\"" : "inf")
                                 : (json ? "\"-Infinity\"" : "-inf");
        size_t n = strlen(w);
        memcpy(buf, w, n + 1);
        return n;
    }
    return cli_shortest_double(buf, v);
}

/* ---- the histogram object and its formats ------------------------------------------------------ */

typedef struct nd_hist {
    const gpuhist_nd_result *r;
    const gpuhist_bin_spec *axes;
    gpuhist_dtype dtype;
    const double *sums, *squares, *density;
    /* per axis: the edge strings, one after another, and where each starts */
    char *edge_text[GPUHIST_MAX_DIMS];
    size_t *edge_at[GPUHIST_MAX_DIMS];
} nd_hist;

static void free_edge_texts(nd_hist *h)
{
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a) {
        free(h->edge_text[a]);
        free(h->edge_at[a]);
        h->edge_text[a] = NULL;
        h->edge_at[a] = NULL;
    }
}

static int make_edge_texts(nd_hist *h)
{
    for (uint32_t a = 0; a < h->r->dims; ++a) {
        uint32_t n = h->r->bins[a] + 1u;
        h->edge_text[a] = malloc((size_t)n * 32);
        h->edge_at[a] = malloc(((size_t)n + 1) * sizeof(size_t));
        if (!h->edge_text[a] || !h->edge_at[a])
            return cli_error(CLI_EXIT_FAIL, "out of memory for the edges of axis %u", a);
        size_t at = 0;
        for (uint32_t i = 0; i < n; ++i) {
            h->edge_at[a][i] = at;
            at += cli_shortest_double(h->edge_text[a] + at, h->r->edges[a][i]);
        }
        h->edge_at[a][n] = at;
    }
    return CLI_EXIT_OK;
}

static char *put_edge(char *p, const nd_hist *h, uint32_t a, uint32_t i)
{
    size_t s = h->edge_at[a][i], n = h->edge_at[a][i + 1] - s;
    memcpy(p, h->edge_text[a] + s, n);
    return p + n;
}

/* Axis bin indices of joint bin j (row-major, last axis fastest). */
static void unravel(const gpuhist_nd_result *r, uint64_t j, uint32_t *idx)
{
    for (uint32_t a = r->dims; a-- > 0;) {
        idx[a] = (uint32_t)(j % r->bins[a]);
        j /= r->bins[a];
    }
}

static const char *kind_text(const gpuhist_bin_spec *s, char *buf, size_t size)
{
    if (s->kind == GPUHIST_BINS_INTEGER)
        snprintf(buf, size, "integer bins from %lld", (long long)s->integer_lower);
    else if (s->kind == GPUHIST_BINS_EDGES)
        snprintf(buf, size, "explicit edges");
    else if (s->auto_range)
        snprintf(buf, size, "even bins over the data's min:max");
    else
        snprintf(buf, size, "even bins");
    return buf;
}

static void write_table(nbuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    char k[64];
    nb_printf(b, "# %u-D histogram of %s points: %llu points, %llu counted, %llu out of range, "
                 "%llu NaN\n",
              r->dims, gpuhist_dtype_name(h->dtype), (unsigned long long)r->total,
              (unsigned long long)(r->total - r->out - r->nan), (unsigned long long)r->out,
              (unsigned long long)r->nan);
    for (uint32_t a = 0; a < r->dims; ++a) {
        char lo[40], hi[40];
        cli_format_double(lo, sizeof lo, r->lower[a]);
        cli_format_double(hi, sizeof hi, r->upper[a]);
        nb_printf(b, "# axis %u: %u %s, [%s, %s%s\n", a, r->bins[a],
                  kind_text(&h->axes[a], k, sizeof k), lo, hi,
                  r->last_edge_inclusive[a] ? "] (last edge inclusive)" : ")");
    }
    nb_printf(b, "# %llu bins (", (unsigned long long)r->bins_total);
    for (uint32_t a = 0; a < r->dims; ++a)
        nb_printf(b, a ? " x %u" : "%u", r->bins[a]);
    nb_puts(b, "); the non-empty ones, one per row: each axis's bin and interval, then count");
    if (h->sums)
        nb_puts(b, ", sum");
    if (h->squares)
        nb_puts(b, ", sum_sq");
    if (h->density)
        nb_puts(b, ", density");
    nb_puts(b, "\n");
    uint32_t idx[GPUHIST_MAX_DIMS];
    for (uint64_t j = 0; j < r->bins_total; ++j) {
        if (!r->counts[j] && !(h->sums && h->sums[j] != 0.0))
            continue;
        unravel(r, j, idx);
        char *p = nb_room(b, (size_t)r->dims * 90 + 3 * 40 + 32);
        for (uint32_t a = 0; a < r->dims; ++a) {
            p = cli_put_u64(p, idx[a]);
            *p++ = ' ';
            *p++ = '[';
            p = put_edge(p, h, a, idx[a]);
            *p++ = ',';
            *p++ = ' ';
            p = put_edge(p, h, a, idx[a] + 1);
            *p++ = (idx[a] + 1 == r->bins[a] && r->last_edge_inclusive[a]) ? ']' : ')';
            *p++ = ' ';
            *p++ = ' ';
        }
        p = cli_put_u64(p, r->counts[j]);
        const double *vals[3] = {h->sums, h->squares, h->density};
        for (int v = 0; v < 3; ++v)
            if (vals[v]) {
                *p++ = ' ';
                p += value_text(p, vals[v][j], 0);
            }
        *p++ = '\n';
        b->p = p;
    }
}

static void write_csv(nbuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    for (uint32_t a = 0; a < r->dims; ++a)
        nb_printf(b, "%sbin%u,lower%u,upper%u", a ? "," : "", a, a, a);
    nb_puts(b, ",count");
    if (h->sums)
        nb_puts(b, ",sum");
    if (h->squares)
        nb_puts(b, ",sum_sq");
    if (h->density)
        nb_puts(b, ",density");
    nb_puts(b, "\n");
    uint32_t idx[GPUHIST_MAX_DIMS];
    const double *vals[3] = {h->sums, h->squares, h->density};
    for (uint64_t j = 0; j < r->bins_total; ++j) {
        unravel(r, j, idx);
        char *p = nb_room(b, (size_t)r->dims * 80 + 3 * 40 + 32);
        for (uint32_t a = 0; a < r->dims; ++a) {
            if (a)
                *p++ = ',';
            p = cli_put_u64(p, idx[a]);
            *p++ = ',';
            p = put_edge(p, h, a, idx[a]);
            *p++ = ',';
            p = put_edge(p, h, a, idx[a] + 1);
        }
        *p++ = ',';
        p = cli_put_u64(p, r->counts[j]);
        for (int v = 0; v < 3; ++v)
            if (vals[v]) {
                *p++ = ',';
                p += value_text(p, vals[v][j], 0);
            }
        *p++ = '\n';
        b->p = p;
    }
}

/* An array of the histogram's shape as nested JSON arrays. */
static void json_nested(nbuf *b, const gpuhist_nd_result *r, const uint64_t *u, const double *d)
{
    uint32_t idx[GPUHIST_MAX_DIMS];
    uint32_t D = r->dims;
    for (uint64_t j = 0; j < r->bins_total; ++j) {
        unravel(r, j, idx);
        /* open a bracket for every axis whose index restarts here */
        uint32_t opens = 0;
        while (opens < D && idx[D - 1 - opens] == 0)
            ++opens;
        char *p = nb_room(b, 64);
        if (j > 0)
            *p++ = ',';
        for (uint32_t k = 0; k < (j == 0 ? D : opens); ++k)
            *p++ = '[';
        if (u)
            p = cli_put_u64(p, u[j]);
        else
            p += value_text(p, d[j], 1);
        /* close one for every axis whose index ends here */
        uint32_t closes = 0;
        while (closes < D && idx[D - 1 - closes] + 1 == r->bins[D - 1 - closes])
            ++closes;
        for (uint32_t k = 0; k < closes; ++k)
            *p++ = ']';
        b->p = p;
    }
}

static void write_json(nbuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    nb_printf(b, "{\"dims\": %u, \"shape\": [", r->dims);
    for (uint32_t a = 0; a < r->dims; ++a)
        nb_printf(b, a ? ", %u" : "%u", r->bins[a]);
    nb_printf(b, "], \"dtype\": \"%s\", \"edges\": [", gpuhist_dtype_name(h->dtype));
    for (uint32_t a = 0; a < r->dims; ++a) {
        nb_puts(b, a ? ", [" : "[");
        for (uint32_t i = 0; i <= r->bins[a]; ++i) {
            char *p = nb_room(b, 40);
            if (i)
                *p++ = ',';
            p = put_edge(p, h, a, i);
            b->p = p;
        }
        nb_puts(b, "]");
    }
    nb_puts(b, "], \"last_edge_inclusive\": [");
    for (uint32_t a = 0; a < r->dims; ++a)
        nb_printf(b, "%s%s", a ? ", " : "", r->last_edge_inclusive[a] ? "true" : "false");
    nb_puts(b, "],\n\"counts\": ");
    json_nested(b, r, r->counts, NULL);
    const double *vals[3] = {h->sums, h->squares, h->density};
    const char *names[3] = {"sums", "sums_squared", "density"};
    for (int v = 0; v < 3; ++v)
        if (vals[v]) {
            nb_printf(b, ",\n\"%s\": ", names[v]);
            json_nested(b, r, NULL, vals[v]);
        }
    nb_printf(b, ",\n\"out\": %llu, \"nan\": %llu, \"total\": %llu, \"backend\": \"%s\", "
                 "\"strategy\": \"%s\", \"seconds\": %.6f}\n",
              (unsigned long long)r->out, (unsigned long long)r->nan,
              (unsigned long long)r->total, gpuhist_backend_name(r->backend),
              r->strategy ? r->strategy : "?", r->seconds);
}

/* .npy format 1.0 (2.0 when the header outgrows 65535 bytes: never here). */
static void npy_header(nbuf *b, const char *descr, const gpuhist_nd_result *r, int edges_axis)
{
    char shape[GPUHIST_MAX_DIMS * 14 + 8];
    size_t n = 0;
    shape[n++] = '(';
    if (edges_axis >= 0) {
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%u,", r->bins[edges_axis] + 1u);
    } else {
        for (uint32_t a = 0; a < r->dims; ++a)
            n += (size_t)snprintf(shape + n, sizeof shape - n, r->dims == 1 ? "%u," : a ? ", %u"
                                                                                      : "%u",
                                  r->bins[a]);
    }
    shape[n++] = ')';
    shape[n] = 0;
    char dict[256];
    int d = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
    int pad = (64 - (10 + d + 1) % 64) % 64;
    int hlen = d + pad + 1;
    char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, (char)(hlen & 0xff), (char)(hlen >> 8)};
    nb_put(b, pre, sizeof pre);
    nb_put(b, dict, (size_t)d);
    for (int i = 0; i < pad; ++i)
        nb_put(b, " ", 1);
    nb_put(b, "\n", 1);
}

static void put_words(nbuf *b, const void *words, uint64_t n)
{
    if (cli_host_little_endian()) {
        nb_put(b, words, (size_t)n * 8);
        return;
    }
    const unsigned char *w = words;
    for (uint64_t i = 0; i < n; ++i) {
        char *p = nb_room(b, 8);
        for (int k = 0; k < 8; ++k)
            p[k] = (char)w[8 * i + 7 - k];
        b->p = p + 8;
    }
}

/* Array `what` as a .npy file: -1 the counts, 0..dims-1 the edges of that axis,
 * GPUHIST_MAX_DIMS the sums, GPUHIST_MAX_DIMS + 1 the sums of squares. */
static void write_npy(nbuf *b, FILE *f, const nd_hist *h, int what)
{
    b->f = f;
    const gpuhist_nd_result *r = h->r;
    if (what < 0) {
        npy_header(b, "<u8", r, -1);
        put_words(b, r->counts, r->bins_total);
    } else if (what < GPUHIST_MAX_DIMS) {
        npy_header(b, "<f8", r, what);
        put_words(b, r->edges[what], r->bins[what] + 1u);
    } else {
        npy_header(b, "<f8", r, -1);
        put_words(b, what == GPUHIST_MAX_DIMS ? h->sums : h->squares, r->bins_total);
    }
    nb_flush(b);
}

/* NumPy's histogramdd density: the counts (or sums) divided by each axis's bin widths in turn
 * (axis 0 first), then by their total: the exact integer count, or the sums' total as NumPy's
 * sum() adds them: in C order, through its iterator's buffer of 8192 values (np.getbufsize()),
 * each buffer summed pairwise (8 accumulators up to 128 values, halves above) and the buffers'
 * sums added in order (checked against NumPy 1.24 on shapes of up to 63000 bins). A total of 0
 * gives NaN. */
static double pairwise(const double *a, uint64_t n)
{
    if (n < 8) {
        double s = -0.0;
        for (uint64_t i = 0; i < n; ++i)
            s += a[i];
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; ++k)
            r[k] = a[k];
        uint64_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; ++k)
                r[k] += a[i + (uint64_t)k];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i)
            s += a[i];
        return s;
    }
    uint64_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

static void density_of(const gpuhist_nd_result *r, const double *sums, double *out)
{
    double total;
    if (sums) {
        const uint64_t block = 8192;
        total = pairwise(sums, r->bins_total < block ? r->bins_total : block);
        for (uint64_t k = block; k < r->bins_total; k += block)
            total += pairwise(sums + k, r->bins_total - k < block ? r->bins_total - k : block);
    } else {
        uint64_t t = 0;
        for (uint64_t j = 0; j < r->bins_total; ++j)
            t += r->counts[j];
        total = (double)t;
    }
    uint32_t idx[GPUHIST_MAX_DIMS];
    for (uint64_t j = 0; j < r->bins_total; ++j) {
        unravel(r, j, idx);
        double v = sums ? sums[j] : (double)r->counts[j];
        for (uint32_t a = 0; a < r->dims; ++a)
            v = v / (r->edges[a][idx[a] + 1] - r->edges[a][idx[a]]);
        out[j] = v / total;
    }
}

/* ---- streamed input ------------------------------------------------------------------------------ */

/* A regular file of interleaved points read in chunks through an N-D stream. */
typedef struct nd_file {
    int fd;                   /* -1: not streamed (read whole) */
    gpuhist_dtype dtype;
    int swap;                 /* big-endian .npy: reverse each value */
    uint64_t offset, points;
    cli_input_format format;
} nd_file;

/*
 * Can the input be streamed? A regular raw or .npy file (a C-order (points, dims) array or a flat
 * one) whose data is all there, the bins of every axis given, no weights: then f->fd is open.
 * Anything else (or any doubt) leaves f->fd = -1 and the input is read whole, where every
 * problem is reported. @return CLI_EXIT_* (only a malformed .npy header fails here, with the
 * message the whole read would give).
 */
static int open_streamed(const cli_nd_options *o, uint32_t dims, nd_file *f)
{
    f->fd = -1;
    if (o->dims_auto || o->weights || !(o->range_arg || o->edges_arg || o->integer_arg) ||
        !o->input || strcmp(o->input, "-") == 0 || o->in_format == CLI_IN_TEXT)
        return CLI_EXIT_OK;
    int fd = open(o->input, O_RDONLY);
    struct stat sb;
    if (fd < 0)
        return CLI_EXIT_OK;
    unsigned char head[16];
    ssize_t got = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? pread(fd, head, sizeof head, 0)
                                                              : -1;
    const uint64_t size = got >= 0 ? (uint64_t)sb.st_size : 0;
    int npy = got >= 6 && memcmp(head, "\x93NUMPY", 6) == 0;
    size_t len = strlen(o->input);
    int named_npy = len > 4 && strcmp(o->input + len - 4, ".npy") == 0;
    if (got < 0 || (o->in_format == CLI_IN_NPY && !npy) || (o->in_format == CLI_IN_AUTO &&
                                                            !npy && named_npy)) {
        close(fd);
        return CLI_EXIT_OK;
    }
    if (o->in_format == CLI_IN_RAW)
        npy = 0;
    if (npy) {
        size_t hs = cli_npy_header_size(head, (size_t)got);
        unsigned char *hb = hs && hs <= size ? malloc(hs) : NULL;
        cli_npy_info h;
        int ok = hb && pread(fd, hb, hs, 0) == (ssize_t)hs;
        if (ok && cli_npy_parse_header(o->input, hb, hs, &h)) {
            free(hb);
            close(fd);
            return CLI_EXIT_FAIL;
        }
        free(hb);
        uint64_t vsize = ok ? gpuhist_dtype_size(h.dtype) : 1;
        ok = ok && !h.count_overflow && !(o->have_type && o->type != h.dtype) &&
             (h.ndim == 1 || (h.ndim == 2 && !h.fortran && h.last_dim == dims)) &&
             h.count % dims == 0 && h.data_offset <= size &&
             h.count <= (size - h.data_offset) / vsize;
        if (!ok) {
            close(fd);
            return CLI_EXIT_OK;
        }
        f->dtype = h.dtype;
        f->swap = h.swap;
        f->offset = h.data_offset;
        f->points = h.count / dims;
        f->format = CLI_IN_NPY;
    } else {
        f->dtype = o->have_type ? o->type : GPUHIST_U8;
        uint64_t point = (uint64_t)dims * gpuhist_dtype_size(f->dtype);
        if (size % point) {
            close(fd);
            return CLI_EXIT_OK;
        }
        f->swap = !cli_host_little_endian() && gpuhist_dtype_size(f->dtype) > 1;
        f->offset = 0;
        f->points = size / point;
        f->format = CLI_IN_RAW;
    }
    f->fd = fd;
    return CLI_EXIT_OK;
}

static void reverse_values(unsigned char *p, uint64_t n, size_t size)
{
    for (uint64_t i = 0; i < n; ++i, p += size)
        for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Read the points in chunks of about cli_chunk_bytes() into an N-D stream on `ctx`. A failure of
 * the library leaves its message in gpuhist_last_error(ctx) and returns its status; a read error
 * is printed here (*printed = 1). */
static gpuhist_status count_streamed(const cli_nd_options *o, gpuhist_ctx *ctx, nd_file *f,
                                     uint32_t dims, const gpuhist_bin_spec *axes,
                                     gpuhist_nd_result *r, const char *name, int *printed)
{
    const size_t vsize = gpuhist_dtype_size(f->dtype), point = (size_t)dims * vsize;
    uint64_t per = cli_chunk_bytes() / point;
    per = per ? per : 1;
    if (per > f->points)
        per = f->points ? f->points : 1;
    *printed = 0;
    unsigned char *buf = malloc((size_t)per * point);
    if (!buf || lseek(f->fd, (off_t)f->offset, SEEK_SET) < 0) {
        free(buf);
        *printed = 1;
        cli_error(CLI_EXIT_FAIL, "%s: %s", name, buf ? strerror(errno) : "out of memory");
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    gpuhist_points lay = gpuhist_points_interleaved(NULL, f->dtype, dims, 0);
    gpuhist_nd_stream *st = NULL;
    gpuhist_status rc = gpuhist_nd_stream_begin(ctx, &lay, axes, &st);
    cli_progress pg;
    cli_progress_start(&pg, o->progress, "reading", (double)f->points * (double)point);
    for (uint64_t done = 0; rc == GPUHIST_OK && done < f->points;) {
        uint64_t n = f->points - done < per ? f->points - done : per;
        int eof = 0;
        ssize_t got = cli_read_full(f->fd, buf, (size_t)n * point, &eof);
        if (got != (ssize_t)(n * point)) {
            cli_error(CLI_EXIT_FAIL, "%s: %s", name,
                      got < 0 ? strerror(errno) : "the file ended early (it shrank while read)");
            *printed = 1;
            rc = GPUHIST_ERROR_BACKEND;
            break;
        }
        if (f->swap)
            reverse_values(buf, n * dims, vsize);
        gpuhist_points chunk = gpuhist_points_interleaved(buf, f->dtype, dims, n);
        rc = gpuhist_nd_stream_feed(st, &chunk);
        done += n;
        cli_progress_update(&pg, (double)done * (double)point);
    }
    cli_progress_end(&pg);
    /* the library's messages stay in gpuhist_last_error(ctx) for the caller */
    if (st && rc == GPUHIST_OK)
        rc = gpuhist_nd_stream_finish(st, r);
    else
        gpuhist_nd_stream_abort(st);
    free(buf);
    return rc;
}

/* ---- the run ----------------------------------------------------------------------------------- */

/* Write one byte of every page of a fresh allocation (volatile: a compiler may not drop it or
 * turn it into calloc), so that the system counts the pages as used. */
static void touch_pages(void *p, size_t n)
{
    volatile unsigned char *b = p;
    for (size_t i = 0; i < n; i += 4096)
        b[i] = 0;
}

/* The points' layout from the input read whole: dims (--dims auto from a 2-D .npy), interleaved
 * or (Fortran-order .npy) columns. */
static int points_layout(const cli_nd_options *o, const cli_input *in, uint32_t *dims,
                         gpuhist_points *p)
{
    int fortran = 0;
    if (in->format == CLI_IN_NPY) {
        cli_npy_info h;
        if (cli_npy_parse_header(in->name, in->block, (size_t)in->bytes_read, &h))
            return CLI_EXIT_FAIL;
        if (h.ndim == 2) {
            if (o->dims_auto) {
                if (h.last_dim < 1 || h.last_dim > GPUHIST_MAX_DIMS)
                    return cli_error(CLI_EXIT_FAIL,
                                     "%s: a .npy of shape (%llu, %llu): --dims auto needs 1 to "
                                     "%d columns",
                                     in->name, (unsigned long long)h.first_dim,
                                     (unsigned long long)h.last_dim, GPUHIST_MAX_DIMS);
                *dims = (uint32_t)h.last_dim;
            } else if (h.last_dim != *dims) {
                return cli_error(CLI_EXIT_FAIL,
                                 "%s: a .npy of shape (%llu, %llu) holds %llu coordinates per "
                                 "point, not --dims %u",
                                 in->name, (unsigned long long)h.first_dim,
                                 (unsigned long long)h.last_dim, (unsigned long long)h.last_dim,
                                 *dims);
            }
            fortran = h.fortran;
        } else if (h.ndim != 1 || o->dims_auto) {
            return cli_error(CLI_EXIT_FAIL,
                             "%s: a .npy of %d dimensions: --dims %s reads a 2-D array (points, "
                             "coordinates)%s",
                             in->name, h.ndim, o->dims_auto ? "auto" : "N",
                             o->dims_auto ? "" : " or a flat one of interleaved coordinates");
        }
    } else if (o->dims_auto) {
        return cli_error(CLI_EXIT_USAGE,
                         "--dims auto takes the dimensions from a 2-D .npy; %s is %s input: give "
                         "--dims N",
                         in->name, in->format == CLI_IN_TEXT ? "text" : "raw");
    }
    if (in->samples % *dims)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: %llu values is not a whole number of points of %u coordinates "
                         "(--dims %u)",
                         in->name, (unsigned long long)in->samples, *dims, *dims);
    uint64_t n = in->samples / *dims;
    memset(p, 0, sizeof *p);
    p->dims = *dims;
    p->dtype = in->dtype;
    p->count = n;
    p->location = GPUHIST_MEMORY_HOST;
    if (fortran) {
        size_t size = gpuhist_dtype_size(in->dtype);
        for (uint32_t a = 0; a < *dims; ++a)
            p->columns[a] = (const unsigned char *)in->data + (size_t)a * n * size;
    } else {
        p->data = in->data;
    }
    return CLI_EXIT_OK;
}

int cli_nd_run(const cli_nd_options *o, gpuhist_ctx *ctx)
{
    uint32_t dims = o->dims;
    gpuhist_bin_spec axes[GPUHIST_MAX_DIMS];
    double *own[GPUHIST_MAX_DIMS] = {0};
    cli_input in;
    memset(&in, 0, sizeof in);
    cli_weights w;
    memset(&w, 0, sizeof w);
    w.fd = -1;
    nd_file sf;
    memset(&sf, 0, sizeof sf);
    sf.fd = -1;
    void *wbuf = NULL;
    gpuhist_nd_result r;
    memset(&r, 0, sizeof r);
    double *sums = NULL, *squares = NULL, *density = NULL;
    nd_hist h;
    memset(&h, 0, sizeof h);
    cli_output out, side[GPUHIST_MAX_DIMS + 2];
    memset(&out, 0, sizeof out);
    memset(side, 0, sizeof side);
    for (int i = 0; i < GPUHIST_MAX_DIMS + 2; ++i)
        side[i].slot = -1;
    int rc;

    /* The bins first when --dims N is given (usage errors before any reading). */
    if (!o->dims_auto && (rc = parse_axes(o, dims, axes, own)))
        goto done;
    cli_output_set_input(o->input);
    if (o->weights)
        cli_output_protect(o->weights, "weights");
    if ((rc = cli_output_open(&out, o->output)))
        goto done;
    cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
    if (fmt == CLI_FMT_NPY && cli_isatty(out.f)) {
        rc = cli_error(CLI_EXIT_USAGE, "-f npy writes binary data: give -o FILE.npy, or send "
                                       "standard output to a file or a pipe");
        goto done;
    }

    /* A regular raw or .npy file with every axis's bins given streams in chunks (memory
     * bounded by one chunk); anything else is read whole. */
    if ((rc = open_streamed(o, dims, &sf)))
        goto done;
    gpuhist_points p;
    if (sf.fd >= 0) {
        snprintf(in.name, sizeof in.name, "%s", o->input);
        in.format = sf.format;
        in.dtype = sf.dtype;
        in.samples = sf.points * dims;
        p = gpuhist_points_interleaved(NULL, sf.dtype, dims, sf.points);
    } else {
        cli_read_options ro = {o->input, o->in_format, o->have_type, o->type, 1, o->progress,
                               0, 0};
        if ((rc = cli_read_input(&ro, &in)) || (rc = points_layout(o, &in, &dims, &p)))
            goto done;
    }
    if (o->dims_auto && (rc = parse_axes(o, dims, axes, own)))
        goto done;

    /* Sides of -f npy: edges of every axis, the sums (only beside a regular file). */
    if (fmt == CLI_FMT_NPY && out.tmp) {
        for (uint32_t a = 0; a < dims + 2u; ++a) {
            if (a == dims && !o->weights)
                break;
            if (a == dims + 1 && !o->squares)
                break;
            char what[16];
            snprintf(what, sizeof what, a < dims ? "edges%u" : a == dims ? "sums" : "sums_squared",
                     a);
            char *path = cli_npy_side_path(out.path, what);
            if (!path) {
                rc = cli_error(CLI_EXIT_FAIL, "out of memory");
                goto done;
            }
            rc = cli_output_open(&side[a], path);
            free(path);
            if (rc)
                goto done;
        }
    } else if (fmt == CLI_FMT_NPY && o->weights) {
        rc = cli_error(CLI_EXIT_USAGE, "-f npy with --weights writes the sums to a file beside the "
                                       "counts: give -o FILE.npy (a regular file)");
        goto done;
    }

    if (o->weights) {
        if ((rc = cli_weights_open(o->weights, o->have_weights_type, o->weights_type, &w)))
            goto done;
        if (w.count_known && w.count != p.count) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: %llu weights for %llu points (one per point)",
                           w.name, (unsigned long long)w.count, (unsigned long long)p.count);
            goto done;
        }
        if ((rc = cli_weights_read_all(&w, p.count, &wbuf)))
            goto done;
        p.weights = wbuf;
        p.weight_dtype = w.dtype;
    }

    /* The joint bins: their product, and the memory of the arrays of that size. */
    uint64_t total = 1;
    char shape[GPUHIST_MAX_DIMS * 14];
    size_t sl = 0;
    int huge = 0;
    for (uint32_t a = 0; a < dims; ++a) {
        if (total > UINT64_MAX / axes[a].bins)
            huge = 1;
        else
            total *= axes[a].bins;
        sl += (size_t)snprintf(shape + sl, sizeof shape - sl, a ? " x %u" : "%u", axes[a].bins);
    }
    if (huge || total > ((uint64_t)1 << 31)) {
        char product[32] = "more than 2^64";
        if (!huge)
            snprintf(product, sizeof product, "%llu", (unsigned long long)total);
        rc = cli_error(CLI_EXIT_USAGE,
                       "%s = %s joint bins is too many (at most 2^31 = 2147483648 in all)", shape,
                       product);
        goto done;
    }
    /* the arrays of the result, and at least as much again for the library's counters */
    int arrays = 2 + (o->weights != NULL) + o->squares + o->density;
    uint64_t need = total * 8u * (uint64_t)arrays, avail = gpuhist_host_memory_available();
    if (avail && need > avail) {
        rc = cli_error(CLI_EXIT_FAIL,
                       "%s = %llu bins: too many for memory: the counts%s and the library's "
                       "counters need at least %.1f GiB, %.1f GiB is available",
                       shape, (unsigned long long)total, o->weights ? ", sums" : "",
                       (double)need / 1073741824.0, (double)avail / 1073741824.0);
        goto done;
    }
    r.counts = malloc((size_t)total * 8u);
    if (o->weights) {
        sums = r.sums = malloc((size_t)total * 8u);
        if (o->squares)
            squares = r.sums_squared = malloc((size_t)total * 8u);
    }
    if (o->density)
        density = malloc((size_t)total * 8u);
    int short_of = !r.counts || (o->weights && !sums) || (o->squares && !squares) ||
                   (o->density && !density);
    for (uint32_t a = 0; a < dims && !short_of; ++a)
        short_of = !(r.edges[a] = malloc(((size_t)axes[a].bins + 1u) * sizeof(double)));
    if (short_of) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory for %llu bins", (unsigned long long)total);
        goto done;
    }
    /* Touched now, so that the memory the library's counters will need is checked against
     * what is left (untouched pages are not counted as used), instead of the process being
     * killed when both fill up. */
    touch_pages(r.counts, (size_t)total * 8u);
    if (sums)
        touch_pages(sums, (size_t)total * 8u);
    if (squares)
        touch_pages(squares, (size_t)total * 8u);

    gpuhist_status st;
    int printed = 0;
    double t_read = cli_now();
    if (sf.fd >= 0)
        st = count_streamed(o, ctx, &sf, dims, axes, &r, in.name, &printed);
    else
        st = gpuhist_histogramdd(ctx, &p, axes, &r);
    if (sf.fd >= 0)
        in.seconds = cli_now() - t_read;
    if (st != GPUHIST_OK && printed) {
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    if (st != GPUHIST_OK) {
        /* a strategy forced onto what it cannot do, or weights on a backend that does not
         * sum them, is a conflict of options (as in 1-D) */
        int status = st == GPUHIST_ERROR_UNSUPPORTED && (o->strategy || o->weights)
                         ? CLI_EXIT_USAGE
                         : CLI_EXIT_FAIL;
        rc = cli_error(status, "%s: %s", in.name, gpuhist_last_error(ctx));
        goto done;
    }
    if (o->verbose) {
        cli_note("input: %s, %s, %llu points of %u %s coordinates (%s), %s in %.3f s", in.name,
                 in.format == CLI_IN_NPY ? ".npy" : in.format == CLI_IN_TEXT ? "text" : "raw",
                 (unsigned long long)p.count, dims, gpuhist_dtype_name(p.dtype),
                 p.data || sf.fd >= 0 ? "interleaved" : "columns",
                 sf.fd >= 0 ? "streamed in chunks and counted" : "read whole", in.seconds);
        cli_note("backend: %s, device: %s", gpuhist_backend_name(r.backend),
                 gpuhist_device_name(ctx));
        cli_note("strategy: %s (counting the joint bins)", r.strategy ? r.strategy : "?");
        cli_note("time: %.6f s; tallies: %llu out, %llu nan, %llu total", r.seconds,
                 (unsigned long long)r.out, (unsigned long long)r.nan,
                 (unsigned long long)r.total);
    }
    if (density)
        density_of(&r, sums, density);
    h.r = &r;
    h.axes = axes;
    h.dtype = p.dtype;
    h.sums = sums;
    h.squares = squares;
    h.density = density;
    if (fmt != CLI_FMT_NPY && (rc = make_edge_texts(&h)))
        goto done;
    nbuf b = {out.f, NULL, NULL, NULL};
    b.start = b.p = malloc(NBUF_SIZE);
    if (!b.start) {
        rc = cli_error(CLI_EXIT_FAIL, "out of memory");
        goto done;
    }
    b.end = b.start + NBUF_SIZE;
    if (fmt == CLI_FMT_NPY) {
        write_npy(&b, out.f, &h, -1);
        for (uint32_t a = 0; a < dims + 2u; ++a)
            if (side[a].f)
                write_npy(&b, side[a].f, &h,
                          a < dims ? (int)a : a == dims ? GPUHIST_MAX_DIMS : GPUHIST_MAX_DIMS + 1);
    } else {
        if (fmt == CLI_FMT_CSV)
            write_csv(&b, &h);
        else if (fmt == CLI_FMT_JSON)
            write_json(&b, &h);
        else
            write_table(&b, &h);
        nb_flush(&b);
    }
    free(b.start);
    /* every side complete before any is committed */
    for (uint32_t a = 0; a < dims + 2u && rc == CLI_EXIT_OK; ++a)
        if (side[a].f && (fflush(side[a].f) != 0 || ferror(side[a].f)))
            rc = cli_error(CLI_EXIT_FAIL, "%s: write error: %s", side[a].path,
                           strerror(errno ? errno : EIO));
    if (rc == CLI_EXIT_OK)
        rc = cli_output_commit(&out);
    for (uint32_t a = 0; a < dims + 2u && rc == CLI_EXIT_OK; ++a)
        if (side[a].f)
            rc = cli_output_commit(&side[a]);
done:
    if (rc) {
        cli_output_abort(&out);
        for (int i = 0; i < GPUHIST_MAX_DIMS + 2; ++i)
            cli_output_abort(&side[i]);
    }
    free_edge_texts(&h);
    if (sf.fd >= 0)
        close(sf.fd);
    cli_input_free(&in);
    cli_weights_close(&w);
    free(wbuf);
    free(r.counts);
    for (uint32_t a = 0; a < GPUHIST_MAX_DIMS; ++a) {
        free(r.edges[a]);
        free(own[a]);
    }
    free(sums);
    free(squares);
    free(density);
    return rc;
}
