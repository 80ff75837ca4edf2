/*
 * writers.c - output of the gpuhist command: table (bars on a terminal), CSV, JSON and .npy.
 *
 * Edges are printed as the shortest decimal that reads back as the exact double (shortest.c),
 * so scripts can compare them with NumPy's edges with ==; so are the sums of weights (and of
 * their squares) of --weights, after the counts: "nan", "inf", "-inf" when not finite (NaN
 * without its sign bit), in JSON the strings "NaN", "Infinity", "-Infinity" (JSON has no such
 * numbers; those strings are what JavaScript's Number() and Python's float() read).
 * Every writer builds its text in one large buffer and hands it to stdio in big pieces: a
 * histogram of 2^20 bins is written in tens of milliseconds, so the output never costs more than
 * the histogram. Each edge is converted once (in CSV and the table the upper edge of bin i is the
 * lower edge of bin i + 1); the table first measures its columns in a pass that only converts
 * the edges (and the sums), without writing them: on several cores when there are many edges.
 * Many rows (table and CSV rows, JSON array items: 2^16 or more) are formatted on several
 * threads (cli_obuf_rows): each format's one row loop takes a range of rows and a buffer, each
 * thread formats ranges of 8192 rows into buffers of its own, and the calling thread writes the
 * buffers in row order, so the bytes are those of one loop over all rows (GPUHIST_WRITER_THREADS
 * sets the thread count; 1 formats every row on the calling thread). At most 2 buffers a thread
 * are held at once; a range whose buffer cannot be allocated is formatted by the writing thread
 * straight into the output. The buffer and the row threads are the N-D writers' too (cli.h's
 * cli_obuf, nd_formats.c).
 */
#include "cli.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the output buffer ----------------------------------------------------------------------- */

enum {
    OBUF_SIZE = 1 << 20, /* what is handed to fwrite at once */
    OBUF_SMALL = 1 << 14 /* the buffer when 1 MiB cannot be had */
};

void cli_obuf_open(cli_obuf *b, FILE *f)
{
    static char small[OBUF_SMALL];
    b->f = f;
    b->len = 0;
    b->failed = 0;
    b->buf = malloc(OBUF_SIZE);
    b->owned = b->buf != NULL;
    b->cap = b->owned ? OBUF_SIZE : sizeof small;
    if (!b->owned)
        b->buf = small;
}

/* A memory buffer of `cap` (>= CLI_OBUF_ROOM) bytes to start with; failed when even that cannot
 * be had. */
static void ob_open_mem(cli_obuf *b, size_t cap)
{
    b->f = NULL;
    b->len = 0;
    b->buf = malloc(cap);
    b->owned = b->buf != NULL;
    b->cap = b->buf ? cap : 0;
    b->failed = b->buf == NULL;
}

/* Errors are left in f's error flag, which cli_output_commit checks. */
static void ob_flush(cli_obuf *b)
{
    if (!b->f)
        return; /* a memory buffer keeps its text */
    if (b->len)
        fwrite(b->buf, 1, b->len, b->f);
    b->len = 0;
}

void cli_obuf_close(cli_obuf *b)
{
    ob_flush(b);
    if (b->owned)
        free(b->buf);
    b->buf = NULL;
}

/* A memory buffer: room for n more bytes, its size doubled as needed. When it cannot grow it is
 * marked failed and its text starts again at its beginning (every later write too), so that
 * writes stay inside it; the writing thread then formats those rows again itself. @return
 * whether the room is there. */
static int ob_grow(cli_obuf *b, size_t n)
{
    if (!b->failed) {
        size_t cap = b->cap ? b->cap : CLI_OBUF_ROOM;
        while (cap - b->len < n)
            cap *= 2;
        char *p = realloc(b->buf, cap);
        if (p) {
            b->buf = p;
            b->cap = cap;
            b->owned = 1;
            return 1;
        }
        b->failed = 1;
    }
    b->len = 0;
    return b->cap >= n;
}

/* A pointer to at least n (<= CLI_OBUF_ROOM) free bytes; cli_obuf_done() says how many were
 * used. */
char *cli_obuf_room(cli_obuf *b, size_t n)
{
    if (b->cap - b->len < n) {
        if (b->f)
            ob_flush(b);
        else if (!ob_grow(b, n)) {
            /* a failed buffer without even n bytes (none allocated): a scratch area of this
             * thread's, whose text is dropped */
            static _Thread_local char sink[CLI_OBUF_ROOM];
            return sink;
        }
    }
    return b->buf + b->len;
}

void cli_obuf_done(cli_obuf *b, const char *end)
{
    if (b->buf && end >= b->buf && end <= b->buf + b->cap)
        b->len = (size_t)(end - b->buf);
    if (b->failed)
        b->len = 0; /* a failed memory buffer keeps nothing */
}

void cli_obuf_put(cli_obuf *b, const void *s, size_t n)
{
    if (n > CLI_OBUF_ROOM) {
        if (b->f) {
            ob_flush(b);
            fwrite(s, 1, n, b->f);
            return;
        }
        if (!ob_grow(b, n) || b->failed)
            return;
        memcpy(b->buf + b->len, s, n);
        b->len += n;
        return;
    }
    char *p = cli_obuf_room(b, n);
    memcpy(p, s, n);
    cli_obuf_done(b, p + n);
}

void cli_obuf_puts(cli_obuf *b, const char *s)
{
    cli_obuf_put(b, s, strlen(s));
}

void cli_obuf_printf(cli_obuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = cli_obuf_room(b, CLI_OBUF_ROOM);
    int n = vsnprintf(p, CLI_OBUF_ROOM, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n < CLI_OBUF_ROOM) {
        cli_obuf_done(b, p + n);
        return;
    }
    if (!b->f) { /* a memory buffer: grown to the text's length */
        if (!ob_grow(b, (size_t)n + 1) || b->failed)
            return;
        va_start(ap, fmt);
        vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t)n;
        return;
    }
    /* Longer than a piece (a long strategy name): straight to the stream. */
    ob_flush(b);
    va_start(ap, fmt);
    vfprintf(b->f, fmt, ap);
    va_end(ap);
}

/* ---- rows formatted on several threads ---------------------------------------------------- */

enum {
    ROWS_PARALLEL = 1 << 16, /* fewer rows: formatted on the calling thread */
    ROWS_PER_PIECE = 8192,   /* rows a thread formats into one buffer */
    ROWS_MAX_THREADS = 16
};

/* -j's limit (0: none), set by cli_writers_threads(). */
static int g_threads_limit;

void cli_writers_threads(int n)
{
    g_threads_limit = n > 0 ? n : 0;
}

/* Formatting threads: GPUHIST_WRITER_THREADS (1 and up), else the cores; at most -j's count and
 * at most 16. */
static int writer_threads(void)
{
    const char *e = getenv("GPUHIST_WRITER_THREADS");
    long n = 0;
    if (e && *e) {
        char *end;
        n = strtol(e, &end, 10);
        if (*end || n < 1)
            n = 0;
    }
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (g_threads_limit && n > g_threads_limit)
        n = g_threads_limit;
    return n < 1 ? 1 : n > ROWS_MAX_THREADS ? ROWS_MAX_THREADS : (int)n;
}

/* The ring of buffers between the formatting threads and the writing one: piece i goes into
 * slot i % nslots once piece i - nslots has been written. */
typedef struct rows_job {
    cli_obuf_rows_fn fn;
    const void *arg;
    uint64_t rows, pieces;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next;    /* the next piece to claim (under mu) */
    uint64_t written; /* pieces written so far, in order (under mu) */
    int nslots;
    cli_obuf slot[2 * ROWS_MAX_THREADS];
    uint64_t ready[2 * ROWS_MAX_THREADS]; /* 1 + the piece whose text the slot holds (under mu) */
} rows_job;

static uint64_t piece_end(const rows_job *j, uint64_t i)
{
    const uint64_t end = (i + 1) * ROWS_PER_PIECE;
    return end < j->rows ? end : j->rows;
}

static void *rows_worker(void *p)
{
    rows_job *j = p;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        const uint64_t i = j->next;
        if (i >= j->pieces)
            break;
        j->next = i + 1;
        while (i >= j->written + (uint64_t)j->nslots) /* its slot holds an unwritten piece */
            pthread_cond_wait(&j->cv, &j->mu);
        pthread_mutex_unlock(&j->mu);
        cli_obuf *b = &j->slot[i % (uint64_t)j->nslots];
        b->len = 0;
        if (!b->failed)
            j->fn(b, j->arg, i * ROWS_PER_PIECE, piece_end(j, i));
        pthread_mutex_lock(&j->mu);
        j->ready[i % (uint64_t)j->nslots] = i + 1;
        pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Rows [0, rows) of fn into b: the same bytes as fn(b, arg, 0, rows), on several threads when
 * there are many rows. */
void cli_obuf_rows(cli_obuf *b, cli_obuf_rows_fn fn, const void *arg, uint64_t rows)
{
    const int t = rows >= ROWS_PARALLEL ? writer_threads() : 1;
    rows_job *j = t > 1 ? calloc(1, sizeof *j) : NULL;
    if (!j) {
        fn(b, arg, 0, rows);
        return;
    }
    j->fn = fn;
    j->arg = arg;
    j->rows = rows;
    j->pieces = (rows + ROWS_PER_PIECE - 1) / ROWS_PER_PIECE;
    j->nslots = 2 * t;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    for (int k = 0; k < j->nslots; ++k)
        ob_open_mem(&j->slot[k], (size_t)1 << 16);
    pthread_t tid[ROWS_MAX_THREADS];
    int started = 0;
    for (int k = 0; k < t; ++k)
        if (pthread_create(&tid[started], NULL, rows_worker, j) == 0)
            ++started;
    if (!started) { /* no thread could start: every row here */
        fn(b, arg, 0, rows);
    } else {
        for (uint64_t i = 0; i < j->pieces; ++i) {
            const int k = (int)(i % (uint64_t)j->nslots);
            pthread_mutex_lock(&j->mu);
            while (j->ready[k] != i + 1)
                pthread_cond_wait(&j->cv, &j->mu);
            pthread_mutex_unlock(&j->mu);
            if (j->slot[k].failed) /* out of memory there: these rows formatted here */
                fn(b, arg, i * ROWS_PER_PIECE, piece_end(j, i));
            else
                cli_obuf_put(b, j->slot[k].buf, j->slot[k].len);
            pthread_mutex_lock(&j->mu);
            j->written = i + 1;
            pthread_cond_broadcast(&j->cv);
            pthread_mutex_unlock(&j->mu);
        }
        for (int k = 0; k < started; ++k)
            pthread_join(tid[k], NULL);
    }
    for (int k = 0; k < j->nslots; ++k)
        if (j->slot[k].owned)
            free(j->slot[k].buf);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

/* The rows' number texts: buffers of TEXT_MAX bytes (every text is shorter), copied whole into
 * a row (one fixed-size copy, no library call per number; the bytes past the text are
 * overwritten by what follows or lie past the row's end), so a row asks for TEXT_MAX bytes of
 * room more than its text. */
enum { TEXT_MAX = 40 };

/* s (a TEXT_MAX-byte buffer holding n bytes of text) right-aligned in `width` columns (all of s
 * when it is longer); p has room for the padding and TEXT_MAX bytes. */
static char *put_right(char *p, const char *s, size_t n, int width)
{
    for (int i = (int)n; i < width; ++i)
        *p++ = ' ';
    memcpy(p, s, TEXT_MAX);
    return p + n;
}

static char *put_u64_right(char *p, uint64_t v, int width)
{
    for (int i = cli_u64_digits(v); i < width; ++i)
        *p++ = ' ';
    return cli_put_u64(p, v);
}

/* ---- shared ---------------------------------------------------------------------------------- */

static const char *kind_name(gpuhist_bin_kind k)
{
    return k == GPUHIST_BINS_EVEN ? "even" : k == GPUHIST_BINS_EDGES ? "edges" : "integer";
}

static uint64_t sum_tally(const uint64_t *t, uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < n; ++i)
        s += t[i];
    return s;
}

static int named_channels(const cli_histogram *h)
{
    return h->result->channels > 1 || h->per_channel;
}

/* A sum of weights: the shortest decimal that reads back as it; "nan" for any NaN. buf >= 32
 * bytes. @return the length. */
static size_t sum_text(char *buf, double v)
{
    if (isnan(v)) {
        memcpy(buf, "nan", 4);
        return 3;
    }
    return cli_shortest_double(buf, v);
}

/* The same in JSON, where not-finite values are strings. */
static size_t json_sum_text(char *buf, double v)
{
    const char *word = isnan(v) ? "\"NaN\"" : isinf(v) ? (v > 0 ? "\"Infinity\"" : "\"-Infinity\"")
                                                       : NULL;
    if (!word)
        return cli_shortest_double(buf, v);
    size_t n = strlen(word);
    memcpy(buf, word, n + 1);
    return n;
}

/* The arrays after the counts, in column order: the sums, the sums of squares, the density. */
#define CLI_VALUE_ARRAYS 3
static int value_arrays(const cli_histogram *h, const double *arr[CLI_VALUE_ARRAYS],
                        const char *names[CLI_VALUE_ARRAYS])
{
    int n = 0;
    if (h->sums) {
        arr[n] = h->sums;
        names[n++] = "sum";
    }
    if (h->sums && h->sums_squared) {
        arr[n] = h->sums_squared;
        names[n++] = "sum_sq";
    }
    if (h->density) {
        arr[n] = h->density;
        names[n++] = "density";
    }
    return n;
}

/* ---- table ----------------------------------------------------------------------------------- */

/* Draw a bar of count/max * width cells. @return the cells drawn. */
static int put_bar(cli_obuf *b, uint64_t count, uint64_t max, int width, int utf8)
{
    if (max == 0 || width <= 0)
        return 0;
    /* Eighth-of-a-cell resolution in UTF-8; a non-zero count always shows something. */
    int res = utf8 ? 8 : 1;
    uint64_t units = (uint64_t)((double)count / (double)max * width * res + 0.5);
    if (count > 0 && units == 0)
        units = 1;
    static const char *eighths[8] = {"", "\u258f", "\u258e", "\u258d",
                                     "\u258c", "\u258b", "\u258a", "\u2589"};
    const char *full = utf8 ? "\u2588" : "#";
    size_t full_len = strlen(full);
    for (uint64_t i = 0; i < units / res; ++i) {
        char *p = cli_obuf_room(b, 8);
        memcpy(p, full, full_len);
        cli_obuf_done(b, p + full_len);
    }
    if (utf8)
        cli_obuf_puts(b, eighths[units % 8]);
    return (int)(units / res) + (utf8 && units % 8 ? 1 : 0);
}

/* For people: float32 even-bin edges (which are exactly float32 values) in the fewest digits
 * that identify the float32, "1.8026654" rather than its double expansion "1.80266535282135".
 * CSV and JSON keep the exact doubles. buf >= 32 bytes. @return the length. */
static size_t table_edge(char *buf, const cli_histogram *h, double v)
{
    if (h->dtype == GPUHIST_F32 && h->kind == GPUHIST_BINS_EVEN && v != 0 && isfinite(v) &&
        fabs(v) <= FLT_MAX && (double)(float)v == v)
        return cli_shortest_float_g(buf, (float)v);
    return cli_shortest_double(buf, v);
}

/* The widest lower edge (of edges [0, bins)) and upper edge (of [1, bins]) of edges [first,
 * end), and the widest text of each value array (sums, density) over entries [vfirst, vend):
 * one conversion per number, nothing written. */
typedef struct edge_widths {
    const cli_histogram *h;
    uint32_t first, end, bins;
    int lo, hi;
    int narr;
    const double *arr[CLI_VALUE_ARRAYS];
    size_t vfirst, vend;
    int wv[CLI_VALUE_ARRAYS];
} edge_widths;

static void *measure_edges(void *arg)
{
    edge_widths *w = arg;
    char a[40];
    for (uint32_t i = w->first; i < w->end; ++i) {
        int n = (int)table_edge(a, w->h, w->h->edges[i]);
        if (i < w->bins && n > w->lo)
            w->lo = n;
        if (i > 0 && n > w->hi)
            w->hi = n;
    }
    for (int k = 0; k < w->narr; ++k)
        for (size_t i = w->vfirst; i < w->vend; ++i) {
            int n = (int)sum_text(a, w->arr[k][i]);
            if (n > w->wv[k])
                w->wv[k] = n;
        }
    return NULL;
}

/* The lower and upper columns' widths (at least *lo, *hi) and the value arrays' (at least
 * wv[k]): the numbers split between up to 16 threads when there are many edges (2^20 edges:
 * ~1 us each on one core), else on this one. */
static void table_widths(const cli_histogram *h, uint32_t bins, int *lo, int *hi, int narr,
                         const double *const arr[CLI_VALUE_ARRAYS], int wv[CLI_VALUE_ARRAYS])
{
    enum { MAX_T = 16, PER_THREAD = 1 << 16 };
    int t = bins >= 2 * PER_THREAD ? writer_threads() : 1;
    if ((uint64_t)t * PER_THREAD > (uint64_t)bins + 1u)
        t = (int)(((uint64_t)bins + 1u) / PER_THREAD) + 1;
    edge_widths w[MAX_T];
    pthread_t tid[MAX_T];
    int started[MAX_T] = {0};
    const uint64_t edges = (uint64_t)bins + 1u;
    const size_t values = (size_t)bins * h->result->channels;
    for (int k = 0; k < t; ++k) {
        w[k] = (edge_widths){h,
                             (uint32_t)(edges * (uint64_t)k / (uint64_t)t),
                             (uint32_t)(edges * (uint64_t)(k + 1) / (uint64_t)t),
                             bins,
                             *lo,
                             *hi,
                             narr,
                             {arr[0], arr[1], arr[2]},
                             values / (size_t)t * (size_t)k,
                             k + 1 < t ? values / (size_t)t * (size_t)(k + 1) : values,
                             {wv[0], wv[1], wv[2]}};
        if (k > 0)
            started[k] = pthread_create(&tid[k], NULL, measure_edges, &w[k]) == 0;
    }
    measure_edges(&w[0]);
    for (int k = 1; k < t; ++k) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            measure_edges(&w[k]); /* no thread: its share here */
    }
    for (int k = 0; k < t; ++k) {
        *lo = w[k].lo > *lo ? w[k].lo : *lo;
        *hi = w[k].hi > *hi ? w[k].hi : *hi;
        for (int j = 0; j < narr; ++j)
            wv[j] = w[k].wv[j] > wv[j] ? w[k].wv[j] : wv[j];
    }
}

/* What every row of a table needs: the columns' widths, the arrays after the counts, the bars. */
typedef struct table_layout {
    const cli_histogram *h;
    int wbin, wlo, whi, wc, wq, narr;
    const double *arr[CLI_VALUE_ARRAYS];
    int wv[CLI_VALUE_ARRAYS];
    int bars, barw, utf8;
    uint64_t max; /* the largest count: a full bar */
    size_t row;   /* the most bytes of a row without its bars */
} table_layout;

/* Rows [first, end) of the table (cli_obuf_rows_fn). */
static void table_rows(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const table_layout *t = arg;
    const cli_histogram *h = t->h;
    const uint32_t bins = h->result->bins, nch = h->result->channels;
    char text[2][TEXT_MAX], *a = text[0], *e = text[1];
    size_t alen = table_edge(a, h, h->edges[first]);
    for (uint32_t i = (uint32_t)first; i < end; ++i) {
        size_t elen = table_edge(e, h, h->edges[i + 1]);
        char *p = cli_obuf_room(b, t->row);
        p = put_u64_right(p, i, t->wbin);
        *p++ = ' ';
        *p++ = ' ';
        p = put_right(p, a, alen, t->wlo);
        *p++ = ' ';
        *p++ = ' ';
        p = put_right(p, e, elen, t->whi);
        for (uint32_t c = 0; c < nch; ++c) {
            *p++ = ' ';
            *p++ = ' ';
            p = put_u64_right(p, h->counts[(size_t)c * bins + i], t->wc);
        }
        for (uint32_t c = 0; h->cumulative && c < nch; ++c) {
            *p++ = ' ';
            *p++ = ' ';
            p = put_u64_right(p, h->cumulative[(size_t)c * bins + i], t->wq);
        }
        for (int k = 0; k < t->narr; ++k)
            for (uint32_t c = 0; c < nch; ++c) {
                char v[TEXT_MAX];
                size_t vlen = sum_text(v, t->arr[k][(size_t)c * bins + i]);
                *p++ = ' ';
                *p++ = ' ';
                p = put_right(p, v, vlen, t->wv[k]);
            }
        if (!t->bars) {
            *p++ = '\n';
            cli_obuf_done(b, p);
        } else {
            cli_obuf_done(b, p);
            for (uint32_t c = 0; c < nch; ++c) {
                uint64_t v = h->counts[(size_t)c * bins + i];
                cli_obuf_puts(b, c ? " " : "  ");
                int cells = put_bar(b, v, t->max, t->barw, t->utf8);
                /* Pad each channel's bar so the next one starts in its own column. */
                for (int s = cells; c + 1 < nch && s < t->barw; ++s)
                    cli_obuf_puts(b, " ");
            }
            cli_obuf_puts(b, "\n");
        }
        char *swap = a; /* this row's upper edge is the next row's lower edge */
        a = e;
        e = swap;
        alen = elen;
    }
}

static void write_table(cli_obuf *b, const cli_histogram *h, int bars, int columns)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;

    /* Column widths: one pass that converts each edge (not writing it) and looks at the
     * largest count, which has the most digits. */
    int wbin = cli_u64_digits(bins ? bins - 1 : 0), wlo = 5, whi = 5, wc = 5;
    if (wbin < 3)
        wbin = 3;
    uint64_t max = 0;
    for (size_t i = 0; i < (size_t)bins * nch; ++i)
        if (h->counts[i] > max)
            max = h->counts[i];
    if (cli_u64_digits(max) > wc)
        wc = cli_u64_digits(max);
    if (nch > 1 && wc < 7)
        wc = 7;
    /* --cumulative: as wide as the largest running total (the last) or the column's name */
    int wq = 0;
    if (h->cumulative) {
        wq = (int)strlen("cumulative") + (named_channels(h) ? 2 : 0);
        for (uint32_t c = 0; c < nch; ++c)
            if (bins && cli_u64_digits(h->cumulative[(size_t)c * bins + bins - 1]) > wq)
                wq = cli_u64_digits(h->cumulative[(size_t)c * bins + bins - 1]);
    }
    /* The sums' columns: as wide as their longest number (and their names); the edge columns
     * as their longest edge: measured together. */
    const double *arr[CLI_VALUE_ARRAYS] = {NULL, NULL, NULL};
    const char *aname[CLI_VALUE_ARRAYS];
    int narr = value_arrays(h, arr, aname), wv[CLI_VALUE_ARRAYS] = {0, 0, 0};
    for (int k = 0; k < narr; ++k)
        wv[k] = (int)strlen(aname[k]) + (named_channels(h) ? 2 : 0);
    table_widths(h, bins, &wlo, &whi, narr, arr, wv);

    cli_obuf_printf(b, "%*s  %*s  %*s", wbin, "bin", wlo, "lower", whi, "upper");
    for (uint32_t c = 0; c < nch; ++c) {
        char name[24] = "count";
        if (named_channels(h))
            snprintf(name, sizeof name, "count_%u", c);
        cli_obuf_printf(b, "  %*s", wc, name);
    }
    for (uint32_t c = 0; h->cumulative && c < nch; ++c) {
        char name[24] = "cumulative";
        if (named_channels(h))
            snprintf(name, sizeof name, "cumulative_%u", c);
        cli_obuf_printf(b, "  %*s", wq, name);
    }
    for (int k = 0; k < narr; ++k)
        for (uint32_t c = 0; c < nch; ++c) {
            char name[24];
            if (named_channels(h))
                snprintf(name, sizeof name, "%s_%u", aname[k], c);
            else
                snprintf(name, sizeof name, "%s", aname[k]);
            cli_obuf_printf(b, "  %*s", wv[k], name);
        }
    cli_obuf_puts(b, "\n");
    int used = wbin + 2 + wlo + 2 + whi + (int)nch * (wc + 2) + 2 + (wq ? (int)nch * (wq + 2) : 0);
    for (int k = 0; k < narr; ++k)
        used += (int)nch * (wv[k] + 2);
    int barw = bars ? (columns - used - 1) / (int)nch - (nch > 1 ? 1 : 0) : 0;
    if (barw < 8)
        barw = bars ? 8 : 0;
    int utf8 = cli_utf8();

    /* A row: at most 10 + 24 + 24 digits and signs, four channels of 20 and of three value
     * arrays of 24, the gaps. */
    size_t row = (size_t)wbin + wlo + whi + nch * ((size_t)wc + 2) + nch * ((size_t)wq + 2) + 8;
    for (int k = 0; k < narr; ++k)
        row += nch * ((size_t)wv[k] + 2);
    row += TEXT_MAX; /* put_right's whole-buffer copies */
    table_layout t = {h, wbin, wlo, whi, wc, wq, narr, {arr[0], arr[1], arr[2]},
                      {wv[0], wv[1], wv[2]}, bars, barw, utf8, max, row};
    cli_obuf_rows(b, table_rows, &t, bins);
    for (uint32_t c = 0; c < nch; ++c) {
        if (named_channels(h))
            cli_obuf_printf(b, "channel %u: ", r->channel_index[c]);
        cli_obuf_printf(b, "underflow %llu, overflow %llu, nan %llu, total %llu\n",
                        (unsigned long long)r->underflow[c], (unsigned long long)r->overflow[c],
                        (unsigned long long)r->nan[c], (unsigned long long)r->total[c]);
    }
    cli_obuf_printf(b, "%s bins are [lower, upper)%s; backend %s, strategy %s\n",
                    kind_name(h->kind),
                    r->last_edge_inclusive ? ", the last one includes its upper edge" : "",
                    gpuhist_backend_name(r->backend), r->strategy ? r->strategy : "?");
}

/* ---- CSV ------------------------------------------------------------------------------------- */

/* What every CSV row needs. */
typedef struct csv_layout {
    const cli_histogram *h;
    int narr;
    const double *arr[CLI_VALUE_ARRAYS];
    size_t row; /* the most bytes of a row */
} csv_layout;

/* Rows [first, end) of the CSV (cli_obuf_rows_fn). */
static void csv_rows(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const csv_layout *t = arg;
    const cli_histogram *h = t->h;
    const uint32_t bins = h->result->bins, nch = h->result->channels;
    char text[2][TEXT_MAX], *a = text[0], *e = text[1];
    size_t alen = cli_shortest_double(a, h->edges[first]);
    for (uint32_t i = (uint32_t)first; i < end; ++i) {
        size_t elen = cli_shortest_double(e, h->edges[i + 1]);
        char *p = cli_obuf_room(b, t->row);
        p = cli_put_u64(p, i);
        *p++ = ',';
        memcpy(p, a, TEXT_MAX); /* whole buffers: see TEXT_MAX */
        p += alen;
        *p++ = ',';
        memcpy(p, e, TEXT_MAX);
        p += elen;
        for (uint32_t c = 0; c < nch; ++c) {
            *p++ = ',';
            p = cli_put_u64(p, h->counts[(size_t)c * bins + i]);
        }
        for (uint32_t c = 0; h->cumulative && c < nch; ++c) {
            *p++ = ',';
            p = cli_put_u64(p, h->cumulative[(size_t)c * bins + i]);
        }
        for (int k = 0; k < t->narr; ++k)
            for (uint32_t c = 0; c < nch; ++c) {
                *p++ = ',';
                p += sum_text(p, t->arr[k][(size_t)c * bins + i]);
            }
        *p++ = '\n';
        cli_obuf_done(b, p);
        char *swap = a; /* this row's upper edge is the next row's lower edge */
        a = e;
        e = swap;
        alen = elen;
    }
}

static void write_csv(cli_obuf *b, const cli_histogram *h)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;
    const double *arr[CLI_VALUE_ARRAYS] = {NULL, NULL, NULL};
    const char *aname[CLI_VALUE_ARRAYS];
    int narr = value_arrays(h, arr, aname);
    cli_obuf_puts(b, "bin,lower,upper");
    if (named_channels(h))
        for (uint32_t c = 0; c < nch; ++c)
            cli_obuf_printf(b, ",count_%u", c);
    else
        cli_obuf_puts(b, ",count");
    if (h->cumulative) {
        if (named_channels(h))
            for (uint32_t c = 0; c < nch; ++c)
                cli_obuf_printf(b, ",cumulative_%u", c);
        else
            cli_obuf_puts(b, ",cumulative");
    }
    for (int k = 0; k < narr; ++k) {
        if (named_channels(h))
            for (uint32_t c = 0; c < nch; ++c)
                cli_obuf_printf(b, ",%s_%u", aname[k], c);
        else
            cli_obuf_printf(b, ",%s", aname[k]);
    }
    cli_obuf_puts(b, "\n");
    csv_layout t = {h, narr, {arr[0], arr[1], arr[2]},
                    10 + 2 * 32 + 2 * nch * 21 + (size_t)narr * nch * 33 + 4 + TEXT_MAX};
    cli_obuf_rows(b, csv_rows, &t, bins);
}

/* ---- JSON ------------------------------------------------------------------------------------ */

/* Items [first, end) of a JSON array of integers (cli_obuf_rows_fn; arg: the integers). */
static void json_u64_items(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const uint64_t *v = arg;
    for (uint64_t i = first; i < end; ++i) {
        char *p = cli_obuf_room(b, 24);
        if (i) {
            *p++ = ',';
            *p++ = ' ';
        }
        cli_obuf_done(b, cli_put_u64(p, v[i]));
    }
}

/* A JSON array of doubles and how its numbers are written (json_sum_text: sums and densities,
 * cli_shortest_double: edges). */
typedef struct json_doubles {
    const double *v;
    size_t (*text)(char *buf, double v);
} json_doubles;

/* Items [first, end) of a JSON array of doubles (cli_obuf_rows_fn; arg: a json_doubles). */
static void json_double_items(cli_obuf *b, const void *arg, uint64_t first, uint64_t end)
{
    const json_doubles *d = arg;
    for (uint64_t i = first; i < end; ++i) {
        char *p = cli_obuf_room(b, 40);
        if (i) {
            *p++ = ',';
            *p++ = ' ';
        }
        cli_obuf_done(b, p + d->text(p, d->v[i]));
    }
}

static void json_u64_array(cli_obuf *b, const uint64_t *v, size_t n)
{
    cli_obuf_puts(b, "[");
    cli_obuf_rows(b, json_u64_items, v, n);
    cli_obuf_puts(b, "]");
}

static void json_sum_array(cli_obuf *b, const double *v, size_t n)
{
    const json_doubles d = {v, json_sum_text};
    cli_obuf_puts(b, "[");
    cli_obuf_rows(b, json_double_items, &d, n);
    cli_obuf_puts(b, "]");
}

/* "KEY": integers laid out as the counts: one array, or one per channel with --channels. */
static void json_u64_field(cli_obuf *b, const cli_histogram *h, const char *key, const uint64_t *v)
{
    uint32_t bins = h->result->bins, nch = h->result->channels;
    cli_obuf_printf(b, ",\n  \"%s\": ", key);
    if (h->per_channel) {
        cli_obuf_puts(b, "[");
        for (uint32_t c = 0; c < nch; ++c) {
            cli_obuf_puts(b, c ? ", " : "");
            json_u64_array(b, v + (size_t)c * bins, bins);
        }
        cli_obuf_puts(b, "]");
    } else {
        json_u64_array(b, v, bins);
    }
}

/* "KEY": the array, or one array per channel with --channels (as "counts"). */
static void json_sums(cli_obuf *b, const cli_histogram *h, const char *key, const double *v)
{
    uint32_t bins = h->result->bins, nch = h->result->channels;
    cli_obuf_printf(b, ",\n  \"%s\": ", key);
    if (h->per_channel) {
        cli_obuf_puts(b, "[");
        for (uint32_t c = 0; c < nch; ++c) {
            cli_obuf_puts(b, c ? ", " : "");
            json_sum_array(b, v + (size_t)c * bins, bins);
        }
        cli_obuf_puts(b, "]");
    } else {
        json_sum_array(b, v, bins);
    }
}

static void write_json(cli_obuf *b, const cli_histogram *h)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;
    cli_obuf_puts(b, "{\n  \"edges\": [");
    const json_doubles edges = {h->edges, cli_shortest_double};
    cli_obuf_rows(b, json_double_items, &edges, (uint64_t)bins + 1u);
    cli_obuf_puts(b, "]");
    json_u64_field(b, h, "counts", h->counts);
    if (h->cumulative)
        json_u64_field(b, h, "cumulative", h->cumulative);
    if (h->sums)
        json_sums(b, h, "sums", h->sums);
    if (h->sums && h->sums_squared)
        json_sums(b, h, "sums_squared", h->sums_squared);
    if (h->density)
        json_sums(b, h, "density", h->density);
    cli_obuf_printf(b,
                    ",\n  \"underflow\": %llu,\n  \"overflow\": %llu,\n  \"nan\": %llu,\n"
                    "  \"total\": %llu,\n",
                    (unsigned long long)sum_tally(r->underflow, nch),
                    (unsigned long long)sum_tally(r->overflow, nch),
                    (unsigned long long)sum_tally(r->nan, nch),
                    (unsigned long long)sum_tally(r->total, nch));
    /* The strategy and backend names are fixed identifiers: no JSON escaping needed. */
    cli_obuf_printf(b, "  \"backend\": \"%s\",\n  \"strategy\": \"%s\",\n",
                    gpuhist_backend_name(r->backend), r->strategy ? r->strategy : "");
    cli_obuf_printf(b, "  \"dtype\": \"%s\",\n  \"kind\": \"%s\",\n  \"bins\": %u,\n",
                    gpuhist_dtype_name(h->dtype), kind_name(h->kind), bins);
    cli_obuf_printf(b, "  \"last_edge_inclusive\": %s,\n",
                    r->last_edge_inclusive ? "true" : "false");
    if (h->per_channel) {
        uint64_t idx[GPUHIST_MAX_CHANNELS];
        for (uint32_t c = 0; c < nch; ++c)
            idx[c] = r->channel_index[c];
        cli_obuf_puts(b, "  \"channel_index\": ");
        json_u64_array(b, idx, nch);
        cli_obuf_puts(b, ",\n  \"underflow_per_channel\": ");
        json_u64_array(b, r->underflow, nch);
        cli_obuf_puts(b, ",\n  \"overflow_per_channel\": ");
        json_u64_array(b, r->overflow, nch);
        cli_obuf_puts(b, ",\n  \"nan_per_channel\": ");
        json_u64_array(b, r->nan, nch);
        cli_obuf_puts(b, ",\n  \"total_per_channel\": ");
        json_u64_array(b, r->total, nch);
        cli_obuf_puts(b, ",\n");
    }
    cli_obuf_printf(b, "  \"seconds\": %.9f\n}\n", r->seconds);
}

/* ---- .npy ------------------------------------------------------------------------------------ */

/* Format 1.0: magic, version, header length (little-endian u16), then the header dict padded
 * with spaces and ended by a newline so that the data starts at a multiple of 64, as NumPy
 * writes it. */
void cli_obuf_npy_header(cli_obuf *b, const char *descr, const char *shape)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr, shape);
    int pad = (64 - (10 + n + 1) % 64) % 64;
    int hlen = n + pad + 1;
    char pre[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, (char)(hlen & 0xff), (char)(hlen >> 8)};
    cli_obuf_put(b, pre, sizeof pre);
    cli_obuf_put(b, dict, (size_t)n);
    char *p = cli_obuf_room(b, (size_t)pad + 1);
    memset(p, ' ', (size_t)pad);
    p[pad] = '\n';
    cli_obuf_done(b, p + pad + 1);
}

void cli_obuf_le64(cli_obuf *b, const void *words, size_t n)
{
    if (cli_host_little_endian()) {
        cli_obuf_put(b, words, n * 8);
        return;
    }
    const unsigned char *w = words;
    for (size_t i = 0; i < n; ++i) {
        unsigned char *p = (unsigned char *)cli_obuf_room(b, 8);
        for (int k = 0; k < 8; ++k)
            p[k] = w[8 * i + 7 - k];
        cli_obuf_done(b, (char *)p + 8);
    }
}

/* The shape of the counts: (bins,), or (channels, bins) with --channels. */
static void counts_shape(const cli_histogram *h, char *shape, size_t size)
{
    if (h->per_channel)
        snprintf(shape, size, "(%u, %u)", h->result->channels, h->result->bins);
    else
        snprintf(shape, size, "(%u,)", h->result->bins);
}

static void write_npy_counts(cli_obuf *b, const cli_histogram *h)
{
    char shape[48];
    counts_shape(h, shape, sizeof shape);
    cli_obuf_npy_header(b, "<u8", shape);
    cli_obuf_le64(b, h->counts, (size_t)h->result->channels * h->result->bins);
}

/* Side array `which` (CLI_NPY_EDGES, _SUMS, _SUMS_SQUARED) as a .npy '<f8' array. */
static void write_npy_side(FILE *f, const cli_histogram *h, int which)
{
    cli_obuf b;
    cli_obuf_open(&b, f);
    char shape[48];
    if (which == CLI_NPY_EDGES) {
        snprintf(shape, sizeof shape, "(%llu,)", (unsigned long long)h->result->bins + 1);
        cli_obuf_npy_header(&b, "<f8", shape);
        cli_obuf_le64(&b, h->edges, (size_t)h->result->bins + 1);
    } else {
        counts_shape(h, shape, sizeof shape);
        cli_obuf_npy_header(&b, "<f8", shape);
        cli_obuf_le64(&b, which == CLI_NPY_SUMS ? h->sums : h->sums_squared,
                      (size_t)h->result->channels * h->result->bins);
    }
    cli_obuf_close(&b);
}

char *cli_npy_side_path(const char *path, const char *what)
{
    size_t n = strlen(path), w = strlen(what);
    if (n > 4 && strcmp(path + n - 4, ".npy") == 0)
        n -= 4;
    char *s = malloc(n + 1 + w + sizeof ".npy");
    if (s) {
        memcpy(s, path, n);
        s[n] = '.';
        memcpy(s + n + 1, what, w);
        memcpy(s + n + 1 + w, ".npy", sizeof ".npy");
    }
    return s;
}

int cli_npy_open_sides(const cli_output *counts, int sums, int squares, cli_output *side)
{
    static const char *const what[CLI_NPY_SIDES] = {"edges", "sums", "sums_squared"};
    memset(side, 0, CLI_NPY_SIDES * sizeof *side);
    for (int i = 0; i < CLI_NPY_SIDES; ++i)
        side[i].slot = -1;
    if (cli_isatty(counts->f))
        return cli_error(CLI_EXIT_USAGE, "-f npy writes binary data: give -o FILE.npy, or send "
                                         "standard output to a file or a pipe");
    if (!counts->tmp) {
        /* standard output, a device or a FIFO: the counts only, which would lose the sums */
        if (sums)
            return cli_error(CLI_EXIT_USAGE,
                             "-f npy with --weights writes the sums to a file beside the counts: "
                             "give -o FILE.npy (a regular file)");
        return CLI_EXIT_OK;
    }
    const int want[CLI_NPY_SIDES] = {1, sums, sums && squares};
    for (int i = 0; i < CLI_NPY_SIDES; ++i) {
        if (!want[i])
            continue;
        char *path = cli_npy_side_path(counts->path, what[i]);
        if (!path)
            return cli_error(CLI_EXIT_FAIL, "%s: out of memory", counts->path);
        int rc = cli_output_open(&side[i], path);
        free(path);
        if (rc)
            return rc;
    }
    return CLI_EXIT_OK;
}

/* Flush o's stream. @return CLI_EXIT_OK, or CLI_EXIT_FAIL with the message printed. */
static int flushed(cli_output *o)
{
    errno = 0;
    if (fflush(o->f) == 0 && !ferror(o->f))
        return CLI_EXIT_OK;
    return cli_error(CLI_EXIT_FAIL, "%s: write error: %s", o->path, strerror(errno ? errno : EIO));
}

int cli_npy_commit(cli_output *counts, cli_output *side, const cli_histogram *h)
{
    for (int i = 0; i < CLI_NPY_SIDES; ++i)
        if (side[i].f)
            write_npy_side(side[i].f, h, i);
    /* All written in full before any replaces its target. */
    int rc = flushed(counts);
    for (int i = 0; i < CLI_NPY_SIDES && !rc; ++i)
        if (side[i].f)
            rc = flushed(&side[i]);
    if (!rc)
        rc = cli_output_commit(counts);
    if (rc) {
        cli_output_abort(counts);
        for (int i = 0; i < CLI_NPY_SIDES; ++i)
            cli_output_abort(&side[i]);
        return rc;
    }
    for (int i = 0; i < CLI_NPY_SIDES; ++i)
        if (side[i].f && !rc)
            rc = cli_output_commit(&side[i]);
        else
            cli_output_abort(&side[i]); /* unused, or after a failed commit */
    return rc;
}

void cli_note_tallies(const cli_histogram *h)
{
    const gpuhist_result *r = h->result;
    for (uint32_t c = 0; c < r->channels; ++c) {
        char ch[32] = "";
        if (named_channels(h))
            snprintf(ch, sizeof ch, "channel %u: ", r->channel_index[c]);
        cli_note("%sunderflow %llu, overflow %llu, nan %llu, total %llu", ch,
                 (unsigned long long)r->underflow[c], (unsigned long long)r->overflow[c],
                 (unsigned long long)r->nan[c], (unsigned long long)r->total[c]);
    }
}

/* ---- entry ----------------------------------------------------------------------------------- */

void cli_write_histogram(FILE *f, cli_format format, const cli_histogram *h, int bars, int columns)
{
    cli_obuf b;
    cli_obuf_open(&b, f);
    if (format == CLI_FMT_CSV)
        write_csv(&b, h);
    else if (format == CLI_FMT_JSON)
        write_json(&b, h);
    else if (format == CLI_FMT_NPY)
        write_npy_counts(&b, h);
    else
        write_table(&b, h, bars, columns);
    cli_obuf_close(&b);
}
