/*
 * nd_formats.c - an N-D histogram written out: table (the non-empty bins, one per row, with
 * each axis's bin and its edges), CSV (every bin, row-major: bin index and edges per axis, then
 * count[, sum, sum_sq, density]), JSON (shape, edges per axis, counts and the other arrays
 * nested as the shape), npy (counts as a uint64 array of the histogram's shape; the edges of
 * each axis, the sums and the sums of squares as .npy files beside it); and NumPy's
 * histogramdd density they carry.
 *
 * Everything goes through the writers' output buffer (cli.h's cli_obuf). Rows are built from
 * edge strings formatted once per axis, so a 4096 x 4096 CSV costs little more than its bytes;
 * the table's and the CSV's rows and the items of the JSON's nested arrays are formatted on the
 * writers' threads (cli_obuf_rows: the bytes of one loop over all rows). Values are the
 * shortest decimals that read back exactly; non-finite ones "nan"/"inf" (JSON: "NaN"/"Infinity"
 * strings).
 */
#include "nd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the histogram object and its formats -------------------------------------------------- */

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

/* idx from joint bin j's axis indices to joint bin j + 1's (the last axis fastest). */
static void next_index(const gpuhist_nd_result *r, uint32_t *idx)
{
    for (uint32_t a = r->dims; a-- > 0;) {
        if (++idx[a] < r->bins[a])
            return;
        idx[a] = 0;
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

/* Rows [first, end) of the table (the non-empty ones of those joint bins; cli_obuf_rows_fn). */
static void table_rows(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const nd_hist *h = arg;
    const gpuhist_nd_result *r = h->r;
    uint32_t idx[GPUHIST_MAX_DIMS];
    for (uint64_t j = first; j < end; ++j) {
        if (!r->counts[j] && !(h->sums && h->sums[j] != 0.0))
            continue;
        unravel(r, j, idx);
        char *p = cli_obuf_room(b, (size_t)r->dims * 90 + 3 * 40 + 32);
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
        cli_obuf_done(b, p);
    }
}

/* Rows [first, end) of the CSV, every joint bin (cli_obuf_rows_fn). */
static void csv_rows(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const nd_hist *h = arg;
    const gpuhist_nd_result *r = h->r;
    uint32_t idx[GPUHIST_MAX_DIMS];
    const double *vals[3] = {h->sums, h->squares, h->density};
    unravel(r, first, idx);
    for (uint64_t j = first; j < end; ++j, next_index(r, idx)) {
        char *p = cli_obuf_room(b, (size_t)r->dims * 80 + 3 * 40 + 32);
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
        cli_obuf_done(b, p);
    }
}

static void write_table(cli_obuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    char k[64];
    cli_obuf_printf(b,
                    "# %u-D histogram of %s points: %llu points, %llu counted, %llu out of "
                    "range, %llu NaN\n",
                    r->dims, gpuhist_dtype_name(h->dtype), (unsigned long long)r->total,
                    (unsigned long long)(r->total - r->out - r->nan), (unsigned long long)r->out,
                    (unsigned long long)r->nan);
    for (uint32_t a = 0; a < r->dims; ++a) {
        char lo[40], hi[40];
        cli_format_double(lo, sizeof lo, r->lower[a]);
        cli_format_double(hi, sizeof hi, r->upper[a]);
        cli_obuf_printf(b, "# axis %u: %u %s, [%s, %s%s\n", a, r->bins[a],
                        kind_text(&h->axes[a], k, sizeof k), lo, hi,
                        r->last_edge_inclusive[a] ? "] (last edge inclusive)" : ")");
    }
    cli_obuf_printf(b, "# %llu bins (", (unsigned long long)r->bins_total);
    for (uint32_t a = 0; a < r->dims; ++a)
        cli_obuf_printf(b, a ? " x %u" : "%u", r->bins[a]);
    cli_obuf_puts(b,
                  "); the non-empty ones, one per row: each axis's bin and interval, then count");
    if (h->sums)
        cli_obuf_puts(b, ", sum");
    if (h->squares)
        cli_obuf_puts(b, ", sum_sq");
    if (h->density)
        cli_obuf_puts(b, ", density");
    cli_obuf_puts(b, "\n");
    cli_obuf_rows(b, table_rows, h, r->bins_total);
}

static void write_csv(cli_obuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    for (uint32_t a = 0; a < r->dims; ++a)
        cli_obuf_printf(b, "%sbin%u,lower%u,upper%u", a ? "," : "", a, a, a);
    cli_obuf_puts(b, ",count");
    if (h->sums)
        cli_obuf_puts(b, ",sum");
    if (h->squares)
        cli_obuf_puts(b, ",sum_sq");
    if (h->density)
        cli_obuf_puts(b, ",density");
    cli_obuf_puts(b, "\n");
    cli_obuf_rows(b, csv_rows, h, r->bins_total);
}

/* One of the JSON's arrays of the histogram's shape: the counts (u) or doubles (d). */
typedef struct json_array {
    const gpuhist_nd_result *r;
    const uint64_t *u;
    const double *d;
} json_array;

/* The JSON's arrays are handed to the writers' threads in rows of JSON_ROW items: an item is a
 * few bytes, and a range of rows a thread formats at once must be long enough to outweigh
 * handing it over. An item takes at most JSON_ITEM bytes (a comma, 8 brackets each way, a
 * number's 32-byte buffer). */
enum { JSON_ROW = 8, JSON_ITEM = 64 };

/* Rows [first, end) of a json_array as nested JSON arrays (cli_obuf_rows_fn): item j with the
 * comma before it, a bracket opened before it for every axis whose index starts at j and one
 * closed after it for every axis whose index ends there, so the text depends on j alone. Room
 * is asked for a batch of items at a time. */
static void json_items(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const json_array *t = arg;
    const gpuhist_nd_result *r = t->r;
    const uint32_t D = r->dims;
    const uint64_t last = end * JSON_ROW < r->bins_total ? end * JSON_ROW : r->bins_total;
    uint32_t idx[GPUHIST_MAX_DIMS];
    unravel(r, first * JSON_ROW, idx);
    for (uint64_t j = first * JSON_ROW; j < last;) {
        char *p = cli_obuf_room(b, CLI_OBUF_ROOM);
        const uint64_t batch = CLI_OBUF_ROOM / JSON_ITEM;
        const uint64_t stop = last - j < batch ? last : j + batch;
        for (; j < stop; ++j) {
            uint32_t opens = 0, closes = 0;
            while (opens < D && idx[D - 1 - opens] == 0)
                ++opens;
            while (closes < D && idx[D - 1 - closes] + 1 == r->bins[D - 1 - closes])
                ++closes;
            if (j > 0)
                *p++ = ',';
            for (uint32_t k = 0; k < opens; ++k)
                *p++ = '[';
            if (t->u)
                p = cli_put_u64(p, t->u[j]);
            else
                p += value_text(p, t->d[j], 1);
            for (uint32_t k = 0; k < closes; ++k)
                *p++ = ']';
            next_index(r, idx);
        }
        cli_obuf_done(b, p);
    }
}

static void json_nested(cli_obuf *b, const gpuhist_nd_result *r, const uint64_t *u,
                        const double *d)
{
    const json_array t = {r, u, d};
    cli_obuf_rows(b, json_items, &t, (r->bins_total + JSON_ROW - 1) / JSON_ROW);
}

static void write_json(cli_obuf *b, const nd_hist *h)
{
    const gpuhist_nd_result *r = h->r;
    cli_obuf_printf(b, "{\"dims\": %u, \"shape\": [", r->dims);
    for (uint32_t a = 0; a < r->dims; ++a)
        cli_obuf_printf(b, a ? ", %u" : "%u", r->bins[a]);
    cli_obuf_printf(b, "], \"dtype\": \"%s\", \"edges\": [", gpuhist_dtype_name(h->dtype));
    for (uint32_t a = 0; a < r->dims; ++a) {
        cli_obuf_puts(b, a ? ", [" : "[");
        for (uint32_t i = 0; i <= r->bins[a]; ++i) {
            char *p = cli_obuf_room(b, 40);
            if (i)
                *p++ = ',';
            cli_obuf_done(b, put_edge(p, h, a, i));
        }
        cli_obuf_puts(b, "]");
    }
    cli_obuf_puts(b, "], \"last_edge_inclusive\": [");
    for (uint32_t a = 0; a < r->dims; ++a)
        cli_obuf_printf(b, "%s%s", a ? ", " : "", r->last_edge_inclusive[a] ? "true" : "false");
    cli_obuf_puts(b, "],\n\"counts\": ");
    json_nested(b, r, r->counts, NULL);
    const double *vals[3] = {h->sums, h->squares, h->density};
    const char *names[3] = {"sums", "sums_squared", "density"};
    for (int v = 0; v < 3; ++v)
        if (vals[v]) {
            cli_obuf_printf(b, ",\n\"%s\": ", names[v]);
            json_nested(b, r, NULL, vals[v]);
        }
    cli_obuf_printf(b, ",\n\"out\": %llu, \"nan\": %llu, \"total\": %llu, \"backend\": \"%s\", "
                    "\"strategy\": \"%s\", \"seconds\": %.6f}\n",
                    (unsigned long long)r->out, (unsigned long long)r->nan,
                    (unsigned long long)r->total, gpuhist_backend_name(r->backend),
                    r->strategy ? r->strategy : "?", r->seconds);
}

/* The .npy shape of the counts (edges_axis < 0: the histogram's shape, "(3, 2)", "(5,)") or of
 * the edges of axis edges_axis ("(4,)"). shape: at least NPY_SHAPE bytes. */
enum { NPY_SHAPE = GPUHIST_MAX_DIMS * 14 + 8 };
static const char *npy_shape(const gpuhist_nd_result *r, int edges_axis, char *shape)
{
    size_t n = 0;
    shape[n++] = '(';
    if (edges_axis >= 0) {
        n += (size_t)snprintf(shape + n, NPY_SHAPE - n, "%u,", r->bins[edges_axis] + 1u);
    } else {
        for (uint32_t a = 0; a < r->dims; ++a)
            n += (size_t)snprintf(shape + n, NPY_SHAPE - n, r->dims == 1 ? "%u," : a ? ", %u"
                                                                                   : "%u",
                                  r->bins[a]);
    }
    shape[n++] = ')';
    shape[n] = 0;
    return shape;
}

/* Array `what` as a .npy file: -1 the counts, 0..dims-1 the edges of that axis,
 * GPUHIST_MAX_DIMS the sums, GPUHIST_MAX_DIMS + 1 the sums of squares. */
static void write_npy(FILE *f, const nd_hist *h, int what)
{
    cli_obuf buf, *b = &buf;
    cli_obuf_open(b, f);
    const gpuhist_nd_result *r = h->r;
    char shape[NPY_SHAPE];
    if (what < 0) {
        cli_obuf_npy_header(b, "<u8", npy_shape(r, -1, shape));
        cli_obuf_le64(b, r->counts, r->bins_total);
    } else if (what < GPUHIST_MAX_DIMS) {
        cli_obuf_npy_header(b, "<f8", npy_shape(r, what, shape));
        cli_obuf_le64(b, r->edges[what], r->bins[what] + 1u);
    } else {
        cli_obuf_npy_header(b, "<f8", npy_shape(r, -1, shape));
        cli_obuf_le64(b, what == GPUHIST_MAX_DIMS ? h->sums : h->squares, r->bins_total);
    }
    cli_obuf_close(b);
}

/* The total of the sums as NumPy 2's hist.sum() adds them in histogramdd, where hist is the
 * core of an array with an outlier bin at each end of every axis (a view whose axes do not merge):
 * its iterator takes, after dropping axes of one bin, the innermost axes whose bins fit its
 * buffer of 8192 values (at least the innermost axis, however long), and hands the sum loop
 * chunks of as many of those blocks as fit the buffer (one when a block alone is larger) along
 * the next axis out, never across that axis's end; each chunk is summed pairwise and the chunks'
 * sums are added in C order. Measured against NumPy 2.4 and 2.5 on 2- to 4-axis shapes, inner
 * axes shorter and longer than the buffer (tests/numpy_crosscheck.py); NumPy 1.x instead sums
 * the values in C order in runs of 8192 across the axes' ends, which can differ in the last bit
 * above 8192 bins. */
static double numpy_total(const gpuhist_nd_result *r, const double *sums)
{
    const uint64_t buffer = 8192;
    uint64_t shape[GPUHIST_MAX_DIMS];
    uint32_t d = 0;
    for (uint32_t a = 0; a < r->dims; ++a)
        if (r->bins[a] != 1)
            shape[d++] = r->bins[a];
    if (d <= 1)
        return cli_pairwise_sum(sums, r->bins_total, 1);
    uint32_t i = d - 1;
    uint64_t block = shape[d - 1];
    while (i > 0 && block * shape[i - 1] <= buffer)
        block *= shape[--i];
    if (i == 0)
        return cli_pairwise_sum(sums, r->bins_total, 1);
    const uint64_t outer = shape[i - 1];
    const uint64_t per_chunk = block < buffer ? buffer / block : 1;
    const uint64_t runs = r->bins_total / (outer * block);
    double total = 0.0;
    int first = 1;
    for (uint64_t run = 0; run < runs; ++run) {
        const double *p = sums + run * outer * block;
        for (uint64_t j = 0; j < outer; j += per_chunk) {
            const uint64_t n = (outer - j < per_chunk ? outer - j : per_chunk) * block;
            const double s = cli_pairwise_sum(p + j * block, n, 1);
            total = first ? s : total + s;
            first = 0;
        }
    }
    return total;
}

/* NumPy's histogramdd density: the counts (or sums) divided by each axis's bin widths in turn
 * (axis 0 first), then by their total: the exact integer count, or the sums' total as NumPy 2's
 * sum() adds them (numpy_total above). A total of 0 gives NaN. */
void cli_nd_density_of(const gpuhist_nd_result *r, const double *sums, double *out)
{
    double total;
    if (sums) {
        total = numpy_total(r, sums);
    } else {
        uint64_t t = 0;
        for (uint64_t j = 0; j < r->bins_total; ++j)
            t += r->counts[j];
        total = (double)t;
    }
    uint32_t idx[GPUHIST_MAX_DIMS];
    unravel(r, 0, idx);
    for (uint64_t j = 0; j < r->bins_total; ++j, next_index(r, idx)) {
        double v = sums ? sums[j] : (double)r->counts[j];
        for (uint32_t a = 0; a < r->dims; ++a)
            v = v / (r->edges[a][idx[a] + 1] - r->edges[a][idx[a]]);
        out[j] = v / total;
    }
}

int cli_nd_write(FILE *f, cli_format fmt, const gpuhist_nd_result *r,
                 const gpuhist_bin_spec *axes, gpuhist_dtype dtype, const double *sums,
                 const double *squares, const double *density, FILE *const *sides)
{
    nd_hist h;
    memset(&h, 0, sizeof h);
    h.r = r;
    h.axes = axes;
    h.dtype = dtype;
    h.sums = sums;
    h.squares = squares;
    h.density = density;
    int rc;
    if (fmt != CLI_FMT_NPY && (rc = make_edge_texts(&h))) {
        free_edge_texts(&h);
        return rc;
    }
    const uint32_t dims = r->dims;
    if (fmt == CLI_FMT_NPY) {
        write_npy(f, &h, -1);
        for (uint32_t a = 0; a < dims + 2u; ++a)
            if (sides[a])
                write_npy(sides[a], &h,
                          a < dims ? (int)a : a == dims ? GPUHIST_MAX_DIMS : GPUHIST_MAX_DIMS + 1);
    } else {
        cli_obuf b;
        cli_obuf_open(&b, f);
        if (fmt == CLI_FMT_CSV)
            write_csv(&b, &h);
        else if (fmt == CLI_FMT_JSON)
            write_json(&b, &h);
        else
            write_table(&b, &h);
        cli_obuf_close(&b);
    }
    free_edge_texts(&h);
    return CLI_EXIT_OK;
}
