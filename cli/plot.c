/*
 * plot.c - --plot FILE: the histogram the command computed, drawn with cairo into a PNG, SVG or
 * PDF file (the extension says which).
 *
 * What is drawn. One panel per histogrammed channel, stacked, sharing the x axis (every channel
 * has the same edges), each with its own values axis and colour. Panels rather than channels
 * overlaid with transparency: the channels of an image overlap almost everywhere, and overlaid
 * translucent bars mix their colours there, so no channel's bars can be read alone; stacked
 * panels keep every bar whole and still line the channels up along one x axis.
 *  - x is linear in the edge values: bin i's bar spans [E[i], E[i+1]) as the result reports
 *    them, so uneven edges draw uneven bars. Bars at least 5 units wide are inset by half a
 *    unit on each side, so that the edges show between neighbours of equal height.
 *  - The values axis runs from 0 (or the most negative sum of weights) to the largest value
 *    exactly, so the tallest bar reaches the top of the plot area; with the log scale, from the
 *    power of ten below the smallest positive value. Values drawn: the running totals with
 *    --cumulative, else the density with --density, else the sums of weights with --weights,
 *    else the counts. Empty bins draw nothing.
 *  - Ticks at round numbers (1, 2 or 5 times a power of ten; powers of ten on the log axis, 1,
 *    2 and 5 times them when it spans less than three decades),
 *    labelled with the fewest digits; the x axis is labelled at the edges themselves when there
 *    are at most 16 bins and their labels fit. Under each panel's name: its underflow,
 *    overflow and NaN tallies when nonzero. Below the plot: bins not drawn (values that are not
 *    finite; values <= 0 on the log scale) and how many bins were folded (next paragraph).
 *
 * Many bins. A bin narrower than one unit (a pixel of the PNG, a point of the SVG or PDF) is
 * folded into the unit-wide column of the plot that holds its middle, and each column draws one
 * bar from the baseline to the largest value of its folded bins (and down to the smallest, for
 * negative sums): the area their own bars would have covered, within a unit. The bins are read
 * once, the drawing holds at most one rectangle per column and per wide bin, and touching
 * rectangles of the same height are merged, so 2^20 bins plot in milliseconds into a file of
 * tens of kilobytes.
 *
 * The page is built in parts that a 2-D histogram (a heat map; not built yet) can share:
 * layout_1d places the panels and axes before the surface exists, draw_1d draws each panel
 * (panel_grid, draw_bars, panel_axes), page_text the title, x labels and notes, create_surface
 * and cli_plot_write the file. A heat map adds a layout_2d (one panel per channel whose
 * vertical axis is the second edge axis: an `axis` with the same ticks) and a draw_2d whose
 * cells, folded per unit in the same way, take the place of draw_bars, with a colour scale in
 * place of the values axis; the rest stays as it is.
 *
 * Limits: the width is fixed (960 units; the height follows the number of channels); text goes
 * through cairo's toy font API (fontconfig's sans-serif); a PDF's metadata carry cairo's
 * creation date, so two PDFs of one histogram differ there. One plot per process: after it,
 * cairo's and fontconfig's caches are released (cairo_debug_reset_static_data, FcFini), so
 * that leak checkers find nothing of the drawing's.
 * Built without cairo (GPUHIST_HAVE_CAIRO 0 or undefined), only the extension check remains
 * and every --plot is refused, naming the package.
 */
#include "plot.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(GPUHIST_HAVE_CAIRO) && GPUHIST_HAVE_CAIRO
#define PLOT_CAIRO 1
#include <cairo.h>
#ifdef CAIRO_HAS_SVG_SURFACE
#include <cairo-svg.h>
#endif
#ifdef CAIRO_HAS_PDF_SURFACE
#include <cairo-pdf.h>
#endif
#if defined(GPUHIST_HAVE_FONTCONFIG) && GPUHIST_HAVE_FONTCONFIG
#include <fontconfig/fontconfig.h>
#endif
#else
#define PLOT_CAIRO 0
#endif

/* ---- the file's format ------------------------------------------------------------------------ */

/* The extension of the last name of `path` ("" when none). */
static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    return dot && dot != name ? dot + 1 : "";
}

static int format_built(cli_plot_format f)
{
#if PLOT_CAIRO
    switch (f) {
    case CLI_PLOT_PNG:
#ifdef CAIRO_HAS_PNG_FUNCTIONS
        return 1;
#else
        return 0;
#endif
    case CLI_PLOT_SVG:
#ifdef CAIRO_HAS_SVG_SURFACE
        return 1;
#else
        return 0;
#endif
    case CLI_PLOT_PDF:
#ifdef CAIRO_HAS_PDF_SURFACE
        return 1;
#else
        return 0;
#endif
    default:
        return 0;
    }
#else
    (void)f;
    return 0;
#endif
}

static const char *format_name(cli_plot_format f)
{
    return f == CLI_PLOT_PNG ? "PNG" : f == CLI_PLOT_SVG ? "SVG" : "PDF";
}

const char *cli_plot_formats_built(void)
{
    static char buf[32];
    buf[0] = 0;
    static const cli_plot_format all[] = {CLI_PLOT_PNG, CLI_PLOT_SVG, CLI_PLOT_PDF};
    static const char *names[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 3; ++i)
        if (format_built(all[i])) {
            if (buf[0])
                strcat(buf, ", ");
            strcat(buf, names[i]);
        }
    return buf[0] ? buf : "none";
}

int cli_plot_check(const char *shown, const char *path, cli_plot_format *format)
{
    const char *e = extension(path);
    cli_plot_format f = strcasecmp(e, "png") == 0   ? CLI_PLOT_PNG
                        : strcasecmp(e, "svg") == 0 ? CLI_PLOT_SVG
                        : strcasecmp(e, "pdf") == 0 ? CLI_PLOT_PDF
                                                    : CLI_PLOT_NONE;
    if (f == CLI_PLOT_NONE) {
        if (!*e)
            return cli_error(CLI_EXIT_USAGE,
                             "%s %s: the file name has no extension (.png, .svg or .pdf)", shown,
                             path);
        return cli_error(CLI_EXIT_USAGE,
                         "%s %s: unknown plot extension '.%s' (.png, .svg or .pdf)", shown, path,
                         e);
    }
    if (!PLOT_CAIRO)
        return cli_error(CLI_EXIT_FAIL,
                         "%s %s: plots were not built in (install libcairo2-dev and rebuild)",
                         shown, path);
    if (!format_built(f))
        return cli_error(CLI_EXIT_FAIL, "%s %s: the cairo library was built without %s output",
                         shown, path, format_name(f));
    *format = f;
    return CLI_EXIT_OK;
}

#if !PLOT_CAIRO

int cli_plot_write(cli_output *out, const cli_histogram *h, const cli_plot_options *opt)
{
    (void)h;
    (void)opt;
    return cli_error(CLI_EXIT_FAIL,
                     "--plot %s: plots were not built in (install libcairo2-dev and rebuild)",
                     out->path ? out->path : "-");
}

#else

/* ---- page geometry (units: pixels of the PNG, points of the SVG and PDF) ---------------------- */

enum {
    PAGE_W = 960,
    MARGIN_R = 28,   /* right of the plot areas */
    TITLE_H = 34,    /* the title band */
    HEADER_H = 22,   /* above each plot area: the channel's name and tallies */
    PANEL_GAP = 12,  /* between a plot area and the next panel's header */
    XLABELS_H = 24,  /* the x tick labels under the last plot area */
    XTITLE_H = 20,   /* the x axis' name */
    NOTE_H = 16,     /* each note line */
    BOTTOM = 10,
    FONT = 12,       /* text size */
    TITLE_FONT = 14,
    MAX_TICKS = 64,
    MAX_NOTES = 12,
    WIDE_BAR = 5     /* bars at least this wide are inset by half a unit on each side */
};

/* The plot area's height: one channel gets a tall panel, several share the page. */
static int panel_height(uint32_t channels)
{
    return channels <= 1 ? 380 : channels == 2 ? 260 : 210;
}

typedef struct rgb {
    double r, g, b;
} rgb;

static rgb hex(unsigned v)
{
    rgb c = {((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0};
    return c;
}

static void set_rgb(cairo_t *cr, unsigned v)
{
    rgb c = hex(v);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

/* ---- axes and ticks ---------------------------------------------------------------------------- */

/* A numeric axis: the values lo and hi at the coordinates p0 and p1 (p1 < p0 upwards). */
typedef struct axis {
    double lo, hi;
    int log;       /* log10 scale; lo > 0 */
    double p0, p1;
} axis;

static double axis_map(const axis *a, double v)
{
    double t;
    if (a->log)
        t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    else /* halves: a range of two huge edges of opposite signs does not overflow */
        t = (v * 0.5 - a->lo * 0.5) / (a->hi * 0.5 - a->lo * 0.5);
    return a->p0 + t * (a->p1 - a->p0);
}

typedef struct tick {
    double v;
    char label[40];
} tick;

/* 10^e as the double nearest to it. */
static double pow10i(int e)
{
    char s[16];
    snprintf(s, sizeof s, "1e%d", e);
    return strtod(s, NULL);
}

/* A tick value as people write it: integers in full below 10^9, else the fewest digits that
 * read back as v (shortest.c). buf >= 40 bytes. */
static void number_label(char *buf, double v)
{
    if (v == 0)
        strcpy(buf, "0");
    else if (v == floor(v) && fabs(v) < 1e9)
        snprintf(buf, 40, "%.0f", v);
    else
        cli_shortest_double(buf, v);
}

/* An edge as the table prints it: float32 even-bin edges in the fewest digits of the float32. */
static void edge_label(char *buf, const cli_histogram *h, double v)
{
    if (h->dtype == GPUHIST_F32 && h->kind == GPUHIST_BINS_EVEN && v != 0 && isfinite(v) &&
        fabs(v) <= FLT_MAX && (double)(float)v == v && !(v == floor(v) && fabs(v) < 1e9))
        cli_shortest_float_g(buf, (float)v);
    else
        number_label(buf, v);
}

/* At most `most` ticks at the multiples of a step of 1, 2 or 5 times a power of ten inside
 * [lo, hi] (steps of at least 1 when `integer`), each value the double nearest to the decimal
 * k * step, so that its label is that decimal. @return how many (0 when the range is too fine for
 * round numbers; the caller labels its ends). */
static int round_ticks(double lo, double hi, int most, int integer, tick *t)
{
    static const int mult[3] = {1, 2, 5};
    if (most < 1)
        most = 1;
    if (most > MAX_TICKS)
        most = MAX_TICKS;
    double half = hi * 0.5 - lo * 0.5;
    if (!(half > 0) || !isfinite(half))
        return 0;
    int e = (int)floor(log10(half) + log10(2.0 / most)) - 1; /* 2 * half may overflow */
    if (e < -320)
        e = -320;
    for (; e <= 308; ++e)
        for (int j = 0; j < 3; ++j) {
            double step = mult[j] * pow10i(e);
            if (step == 0 || !isfinite(step) || (integer && step < 1))
                continue;
            double k0 = ceil(lo / step), k1 = floor(hi / step);
            if (!(k1 - k0 + 1 <= most))
                continue;
            if (fabs(k0) > 1e15 || fabs(k1) > 1e15)
                return 0;
            int n = 0;
            for (double k = k0; k <= k1 && n < MAX_TICKS; ++k) {
                char s[48];
                snprintf(s, sizeof s, "%.0fe%d", k * mult[j] + 0.0, e);
                double v = strtod(s, NULL);
                if (v < lo || v > hi)
                    continue;
                t[n].v = v;
                number_label(t[n].label, v);
                ++n;
            }
            return n;
        }
    return 0;
}

/* Powers of ten inside [lo, hi], every s-th one so that there are at most `most`. */
static int log_ticks(double lo, double hi, int most, tick *t)
{
    int e0 = (int)ceil(log10(lo)), e1 = (int)floor(log10(hi));
    while (e0 > -307 && pow10i(e0 - 1) >= lo)
        --e0;
    while (pow10i(e0) < lo)
        ++e0;
    while (e1 < 308 && pow10i(e1 + 1) <= hi)
        ++e1;
    while (e1 > e0 && pow10i(e1) > hi)
        --e1;
    if (most < 1)
        most = 1;
    int n = 0;
    if (e1 - e0 < 2 && most >= 6) {
        /* a range of a decade or two: 1, 2 and 5 times the powers of ten */
        static const int mult[3] = {1, 2, 5};
        for (int e = e0 - 1; e <= e1 && n < MAX_TICKS; ++e)
            for (int j = 0; j < 3; ++j) {
                char s[16];
                snprintf(s, sizeof s, "%de%d", mult[j], e);
                double v = strtod(s, NULL);
                if (v >= lo && v <= hi) {
                    t[n].v = v;
                    number_label(t[n].label, v);
                    ++n;
                }
            }
        return n;
    }
    int s = 1;
    while ((e1 - e0) / s + 1 > most)
        ++s;
    for (int e = e0; e <= e1 && n < MAX_TICKS; e += s) {
        t[n].v = pow10i(e);
        number_label(t[n].label, t[n].v);
        ++n;
    }
    return n;
}

/* ---- what is drawn ---------------------------------------------------------------------------- */

static double value_at(const cli_histogram *h, size_t k)
{
    if (h->cumulative)
        return (double)h->cumulative[k];
    if (h->density)
        return h->density[k];
    if (h->sums)
        return h->sums[k];
    return (double)h->counts[k];
}

static const char *values_name(const cli_histogram *h)
{
    if (h->cumulative)
        return "cumulative count";
    if (h->density)
        return h->sums ? "density (of the weights)" : "density";
    if (h->sums)
        return "sum of weights";
    return "count";
}

typedef struct panel {
    uint32_t channel;       /* the histogram's index in the result */
    char name[32];          /* "" for a lone unnamed channel */
    unsigned colour;        /* 0xRRGGBB */
    char tallies[160];      /* "underflow 3 (not drawn); NaN 1 (not binned)", or "" */
    axis y;
    tick yt[MAX_TICKS];
    int nyt;
    int top, bottom;        /* the plot area's rows [top, bottom) */
    uint64_t not_finite;    /* bins whose value is NaN or infinite: not drawn */
    uint64_t not_positive;  /* log scale: bins whose value is below 0: not drawn */
    int negative;           /* some value below 0 (sums of weights) */
} panel;

static void name_channel(panel *p, const cli_histogram *h, const cli_plot_options *opt)
{
    static const unsigned palette[4] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728};
    const gpuhist_result *r = h->result;
    uint32_t k = r->channel_index[p->channel];
    if (opt->image_channels >= 3) {
        static const char *names[4] = {"R", "G", "B", "A"};
        static const unsigned colours[4] = {0xd62728, 0x2ca02c, 0x1f77b4, 0x7f7f7f};
        snprintf(p->name, sizeof p->name, "%s", names[k & 3]);
        p->colour = colours[k & 3];
    } else if (opt->image_channels >= 1) {
        snprintf(p->name, sizeof p->name, "%s", k == 0 ? "grey" : "alpha");
        p->colour = k == 0 ? 0x4d4d4d : 0x9a9a9a;
    } else {
        if (r->channels > 1 || h->per_channel)
            snprintf(p->name, sizeof p->name, "channel %u", k);
        p->colour = palette[k & 3];
    }
}

static void describe_tallies(panel *p, const gpuhist_result *r, gpuhist_outliers outliers)
{
    uint32_t c = p->channel;
    char *s = p->tallies;
    size_t n = sizeof p->tallies, len = 0;
    s[0] = 0;
    if (r->underflow[c] || r->overflow[c]) {
        if (r->underflow[c])
            len += (size_t)snprintf(s + len, n - len, "underflow %llu",
                                    (unsigned long long)r->underflow[c]);
        if (r->overflow[c])
            len += (size_t)snprintf(s + len, n - len, "%soverflow %llu", len ? ", " : "",
                                    (unsigned long long)r->overflow[c]);
        len += (size_t)snprintf(s + len, n - len, "%s",
                                outliers == GPUHIST_OUTLIERS_CLAMP ? " (in the end bins)"
                                                                   : " (not drawn)");
    }
    if (r->nan[c] && len < n)
        snprintf(s + len, n - len, "%sNaN %llu (never binned)", len ? "; " : "",
                 (unsigned long long)r->nan[c]);
}

/* The values axis of panel p: its range, what cannot be drawn, its ticks. */
static void values_axis(panel *p, const cli_histogram *h, int log_scale, int height)
{
    const uint32_t bins = h->result->bins;
    const size_t base = (size_t)p->channel * bins;
    double mn = 0, mx = 0, minpos = INFINITY, maxpos = 0;
    for (uint32_t i = 0; i < bins; ++i) {
        double v = value_at(h, base + i);
        if (!isfinite(v)) {
            ++p->not_finite;
            continue;
        }
        if (v < mn)
            mn = v;
        if (v > mx)
            mx = v;
        if (v > 0) {
            if (v < minpos)
                minpos = v;
            if (v > maxpos)
                maxpos = v;
        } else if (v < 0 && log_scale) {
            ++p->not_positive;
        }
    }
    p->negative = mn < 0;
    p->y.p0 = p->bottom;
    p->y.p1 = p->top;
    int most = height / 30;
    int integer = !h->density && !h->sums;
    if (log_scale) {
        p->y.log = 1;
        if (maxpos > 0) {
            /* the power of ten below the smallest positive value: every bar has a height */
            int e = (int)ceil(log10(minpos));
            while (e > -306 && pow10i(e - 1) >= minpos)
                --e;
            while (pow10i(e) < minpos)
                ++e;
            p->y.lo = pow10i(e - 1 < -307 ? -307 : e - 1);
            p->y.hi = maxpos;
        } else {
            p->y.lo = 1;
            p->y.hi = 10;
        }
        p->nyt = log_ticks(p->y.lo, p->y.hi, most, p->yt);
    } else {
        p->y.lo = mn;
        p->y.hi = mx > mn ? mx : mn + 1;
        p->nyt = round_ticks(p->y.lo, p->y.hi, most, integer, p->yt);
    }
}

/* Rectangles of one colour, merged while they touch and have the same top and bottom. */
typedef struct rects {
    cairo_t *cr;
    double x0, x1, ya, yb;
    int open;
    uint64_t count;
} rects;

static void rects_flush(rects *r)
{
    if (r->open) {
        cairo_rectangle(r->cr, r->x0, r->ya, r->x1 - r->x0, r->yb - r->ya);
        ++r->count;
    }
    r->open = 0;
}

static void rects_add(rects *r, double x0, double x1, double ya, double yb)
{
    if (r->open && x0 == r->x1 && ya == r->ya && yb == r->yb) {
        r->x1 = x1;
        return;
    }
    rects_flush(r);
    r->x0 = x0;
    r->x1 = x1;
    r->ya = ya;
    r->yb = yb;
    r->open = 1;
}

/* Per unit-wide column: the least and greatest value of the bins folded into it. */
typedef struct columns {
    int n;
    double *lo, *hi;
    unsigned char *set;
} columns;

/* The bars of panel p (see the banner). @return the rectangles drawn; *folded counts the bins
 * folded into columns. */
static uint64_t draw_bars(cairo_t *cr, const cli_histogram *h, const panel *p, const axis *x,
                          columns *col, uint64_t *folded)
{
    const uint32_t bins = h->result->bins;
    const size_t base = (size_t)p->channel * bins;
    const double *E = h->edges;
    const double v0 = p->y.log ? p->y.lo : 0.0;  /* where bars start */
    const double y0 = axis_map(&p->y, v0);
    rects r = {cr, 0, 0, 0, 0, 0, 0};
    memset(col->set, 0, (size_t)col->n);
    *folded = 0;
    double xa = axis_map(x, E[0]);
    for (uint32_t i = 0; i < bins; ++i) {
        double xb = axis_map(x, E[i + 1]);
        double v = value_at(h, base + i);
        if (isfinite(v) && (p->y.log ? v > 0 : v != 0)) {
            if (xb - xa >= 1.0) {
                double inset = xb - xa >= WIDE_BAR ? 0.5 : 0.0;
                double yv = axis_map(&p->y, v);
                rects_add(&r, xa + inset, xb - inset, yv < y0 ? yv : y0, yv < y0 ? y0 : yv);
            } else {
                int k = (int)floor((xa + xb) * 0.5 - x->p0);
                k = k < 0 ? 0 : k >= col->n ? col->n - 1 : k;
                if (!col->set[k]) {
                    col->set[k] = 1;
                    col->lo[k] = col->hi[k] = v;
                } else {
                    if (v < col->lo[k])
                        col->lo[k] = v;
                    if (v > col->hi[k])
                        col->hi[k] = v;
                }
                ++*folded;
            }
        }
        xa = xb;
    }
    rects_flush(&r);
    for (int k = 0; k < col->n; ++k) {
        if (!col->set[k])
            continue;
        double top = axis_map(&p->y, col->hi[k] > v0 ? col->hi[k] : v0);
        double bottom = axis_map(&p->y, p->y.log || col->lo[k] > v0 ? v0 : col->lo[k]);
        rects_add(&r, x->p0 + k, x->p0 + k + 1, top, bottom);
    }
    rects_flush(&r);
    set_rgb(cr, p->colour);
    cairo_fill(cr);
    return r.count;
}

/* ---- text ------------------------------------------------------------------------------------- */

static void font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static double text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t te;
    cairo_text_extents(cr, s, &te);
    return te.x_advance;
}

/* Text at (x, baseline y): align 0 left, 1 centred, 2 right. */
static void text_at(cairo_t *cr, double x, double y, int align, const char *s)
{
    double w = align ? text_width(cr, s) : 0;
    cairo_move_to(cr, x - (align == 1 ? w / 2 : align == 2 ? w : 0), y);
    cairo_show_text(cr, s);
}

/* x tick labels fit when each keeps 10 units from the next. */
static int labels_fit(cairo_t *cr, const axis *x, const tick *t, int n)
{
    double prev_end = -INFINITY;
    for (int i = 0; i < n; ++i) {
        double w = text_width(cr, t[i].label), c = axis_map(x, t[i].v);
        if (c - w / 2 < prev_end + 10)
            return 0;
        prev_end = c + w / 2;
    }
    return 1;
}

/* ---- the page --------------------------------------------------------------------------------- */

typedef struct sink {
    FILE *f;
    int failed;
} sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
    sink *s = closure;
    if (length && fwrite(data, 1, length, s->f) != length) {
        s->failed = errno ? errno : EIO;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

/* Where everything goes, found before the surface exists (an SVG or PDF surface needs its size
 * when it is created): the panels with their values axes, the x axis and its ticks, the notes. */
typedef struct page {
    const cli_histogram *h;
    const cli_plot_options *opt;
    uint32_t npanels;
    panel *pan;
    int width, height;
    int x0, x1;            /* the plot areas' columns [x0, x1) */
    int title_h;
    axis x;
    tick xt[MAX_TICKS];
    int nxt;
    char notes[MAX_NOTES][200];
    int nnotes;
    uint64_t narrow;       /* bins narrower than a unit (folded) */
} page;

/* The x ticks: the edges themselves when few and their labels fit, else round numbers; the
 * two ends of a range too fine for round numbers. */
static void x_ticks(page *pg, cairo_t *m)
{
    const cli_histogram *h = pg->h;
    const uint32_t bins = h->result->bins;
    pg->nxt = 0;
    if (bins <= 16) {
        for (uint32_t i = 0; i <= bins; ++i) {
            pg->xt[i].v = h->edges[i];
            edge_label(pg->xt[i].label, h, h->edges[i]);
        }
        pg->nxt = (int)bins + 1;
        if (!labels_fit(m, &pg->x, pg->xt, pg->nxt))
            pg->nxt = 0;
    }
    for (int most = (pg->x1 - pg->x0) / 70; pg->nxt == 0 && most >= 1; --most) {
        pg->nxt = round_ticks(pg->x.lo, pg->x.hi, most, h->kind == GPUHIST_BINS_INTEGER, pg->xt);
        if (pg->nxt == 0 || labels_fit(m, &pg->x, pg->xt, pg->nxt) || most == 1)
            break;
        pg->nxt = 0;
    }
    if (pg->nxt == 0) {
        pg->xt[0].v = pg->x.lo;
        pg->xt[1].v = pg->x.hi;
        edge_label(pg->xt[0].label, h, pg->x.lo);
        edge_label(pg->xt[1].label, h, pg->x.hi);
        pg->nxt = 2;
    }
}

/* The notes under the plot: bins folded into columns, bins not drawn. */
static void page_notes(page *pg)
{
    const cli_histogram *h = pg->h;
    const uint32_t bins = h->result->bins;
    pg->narrow = 0;
    double xa = axis_map(&pg->x, h->edges[0]);
    for (uint32_t i = 0; i < bins; ++i) {
        double xb = axis_map(&pg->x, h->edges[i + 1]);
        pg->narrow += xb - xa < 1.0;
        xa = xb;
    }
    int negative = 0;
    for (uint32_t c = 0; c < pg->npanels; ++c)
        negative |= pg->pan[c].negative && !pg->opt->log_scale;
    pg->nnotes = 0;
    if (pg->narrow)
        snprintf(pg->notes[pg->nnotes++], sizeof pg->notes[0],
                 "%llu of %u bins are narrower than one of the %d columns of the plot: each "
                 "column shows %s of its bins",
                 (unsigned long long)pg->narrow, bins, pg->x1 - pg->x0,
                 negative ? "the least and the greatest value" : "the greatest value");
    for (uint32_t c = 0; c < pg->npanels && pg->nnotes < MAX_NOTES - 1; ++c) {
        const panel *p = &pg->pan[c];
        char who[40] = "";
        if (p->name[0])
            snprintf(who, sizeof who, "%s: ", p->name);
        if (p->not_finite)
            snprintf(pg->notes[pg->nnotes++], sizeof pg->notes[0],
                     "%s%llu bin(s) with values that are not finite (NaN or infinite) not drawn",
                     who, (unsigned long long)p->not_finite);
        if (p->not_positive)
            snprintf(pg->notes[pg->nnotes++], sizeof pg->notes[0],
                     "%s%llu bin(s) with values below 0 not drawn on the log scale", who,
                     (unsigned long long)p->not_positive);
    }
}

/* The layout of a 1-D histogram: a panel per channel, each with its values axis (whose labels
 * set the left margin), the x axis shared. `m` measures text. */
static void layout_1d(page *pg, cairo_t *m)
{
    const cli_histogram *h = pg->h;
    const int ph = panel_height(pg->npanels);
    pg->title_h = pg->opt->title ? TITLE_H : 12;
    font(m, FONT, 0);
    double ylabel_w = 0;
    for (uint32_t c = 0; c < pg->npanels; ++c) {
        panel *p = &pg->pan[c];
        p->channel = c;
        p->top = pg->title_h + HEADER_H + (int)c * (HEADER_H + ph + PANEL_GAP);
        p->bottom = p->top + ph;
        name_channel(p, h, pg->opt);
        describe_tallies(p, h->result, pg->opt->outliers);
        values_axis(p, h, pg->opt->log_scale, ph);
        for (int i = 0; i < p->nyt; ++i) {
            double w = text_width(m, p->yt[i].label);
            if (w > ylabel_w)
                ylabel_w = w;
        }
    }
    pg->width = PAGE_W;
    pg->x0 = (int)ceil(12 + FONT + 10 + ylabel_w + 8);
    pg->x1 = PAGE_W - MARGIN_R;
    axis x = {h->edges[0], h->edges[h->result->bins], 0, pg->x0, pg->x1};
    pg->x = x;
    x_ticks(pg, m);
    page_notes(pg);
    pg->height = pg->pan[pg->npanels - 1].bottom + XLABELS_H + XTITLE_H + pg->nnotes * NOTE_H +
                 BOTTOM;
}

/* A panel's axes: the grid (behind what is drawn after it), or the frame, tick marks and
 * labels (over it). Lines on pixel centres, so that the PNG's are crisp. */
static void panel_grid(cairo_t *cr, const page *pg, const panel *p)
{
    set_rgb(cr, 0xe8e8e8);
    for (int i = 0; i < p->nyt; ++i) {
        double yy = floor(axis_map(&p->y, p->yt[i].v)) + 0.5;
        if (yy > p->top && yy < p->bottom) {
            cairo_move_to(cr, pg->x0, yy);
            cairo_line_to(cr, pg->x1, yy);
        }
    }
    for (int i = 0; i < pg->nxt; ++i) {
        double xx = floor(axis_map(&pg->x, pg->xt[i].v)) + 0.5;
        if (xx > pg->x0 && xx < pg->x1) {
            cairo_move_to(cr, xx, p->top);
            cairo_line_to(cr, xx, p->bottom);
        }
    }
    cairo_stroke(cr);
}

static void panel_axes(cairo_t *cr, const page *pg, const panel *p, const char *values)
{
    const int x0 = pg->x0, x1 = pg->x1;
    /* header: the channel's name in its colour, the tallies on the right */
    if (p->name[0]) {
        font(cr, FONT, 1);
        set_rgb(cr, p->colour);
        text_at(cr, x0, p->top - 7, 0, p->name);
    }
    if (p->tallies[0]) {
        font(cr, FONT, 0);
        set_rgb(cr, 0x404040);
        text_at(cr, x1, p->top - 7, 2, p->tallies);
    }
    /* the frame just outside the plot area, tick marks */
    set_rgb(cr, 0x404040);
    cairo_rectangle(cr, x0 - 0.5, p->top - 0.5, x1 - x0 + 1, p->bottom - p->top + 1);
    for (int i = 0; i < p->nyt; ++i) {
        double yy = floor(axis_map(&p->y, p->yt[i].v)) + 0.5;
        cairo_move_to(cr, x0 - 5, yy);
        cairo_line_to(cr, x0 - 0.5, yy);
    }
    for (int i = 0; i < pg->nxt; ++i) {
        double xx = floor(axis_map(&pg->x, pg->xt[i].v)) + 0.5;
        cairo_move_to(cr, xx, p->bottom + 0.5);
        cairo_line_to(cr, xx, p->bottom + 5);
    }
    cairo_stroke(cr);
    /* the values' labels and the axis' name, turned */
    font(cr, FONT, 0);
    set_rgb(cr, 0x202020);
    for (int i = 0; i < p->nyt; ++i)
        text_at(cr, x0 - 8, axis_map(&p->y, p->yt[i].v) + FONT * 0.35, 2, p->yt[i].label);
    cairo_save(cr);
    cairo_move_to(cr, 12 + FONT, (p->top + p->bottom) / 2.0 + text_width(cr, values) / 2);
    cairo_rotate(cr, -M_PI / 2);
    cairo_show_text(cr, values);
    cairo_restore(cr);
}

/* The title, the x labels under the last panel (kept inside the page), the x axis' name and
 * the notes. */
static void page_text(cairo_t *cr, const page *pg)
{
    const cli_histogram *h = pg->h;
    const uint32_t bins = h->result->bins;
    if (pg->opt->title) {
        char title[600];
        snprintf(title, sizeof title, "%s: %u bin%s of %s%s", pg->opt->title, bins,
                 bins == 1 ? "" : "s", gpuhist_dtype_name(h->dtype),
                 pg->opt->log_scale ? ", log scale" : "");
        set_rgb(cr, 0x202020);
        font(cr, TITLE_FONT, 1);
        text_at(cr, 12, 22, 0, title);
    }
    const int last = pg->pan[pg->npanels - 1].bottom;
    font(cr, FONT, 0);
    set_rgb(cr, 0x202020);
    for (int i = 0; i < pg->nxt; ++i) {
        double wl = text_width(cr, pg->xt[i].label), xx = axis_map(&pg->x, pg->xt[i].v) - wl / 2;
        if (xx + wl > pg->width - 4)
            xx = pg->width - 4 - wl;
        if (xx < 4)
            xx = 4;
        cairo_move_to(cr, xx, last + 8 + FONT);
        cairo_show_text(cr, pg->xt[i].label);
    }
    text_at(cr, (pg->x0 + pg->x1) / 2.0, last + XLABELS_H + FONT + 2, 1,
            h->kind == GPUHIST_BINS_INTEGER ? "value (one bin per integer)" : "value");
    set_rgb(cr, 0x505050);
    for (int i = 0; i < pg->nnotes; ++i)
        text_at(cr, 12, last + XLABELS_H + XTITLE_H + NOTE_H * (i + 1) - 2, 0, pg->notes[i]);
}

/* Draw a 1-D page on `cr`: per panel the grid, the bars (clipped to the plot area), the axes.
 * @return the rectangles of bars; *folded the bins folded into columns, over the panels. */
static uint64_t draw_1d(cairo_t *cr, const page *pg, columns *col, uint64_t *folded)
{
    char values[64];
    snprintf(values, sizeof values, "%s%s", values_name(pg->h), pg->opt->log_scale ? " (log)"
                                                                                   : "");
    uint64_t nrects = 0;
    *folded = 0;
    for (uint32_t c = 0; c < pg->npanels; ++c) {
        const panel *p = &pg->pan[c];
        panel_grid(cr, pg, p);
        cairo_save(cr);
        cairo_rectangle(cr, pg->x0, p->top, pg->x1 - pg->x0, p->bottom - p->top);
        cairo_clip(cr);
        uint64_t f = 0;
        nrects += draw_bars(cr, pg->h, p, &pg->x, col, &f);
        *folded += f;
        cairo_restore(cr);
        panel_axes(cr, pg, p, values);
    }
    page_text(cr, pg);
    return nrects;
}

/* A surface of the page's size in the format asked for, writing through `snk` (SVG, PDF; a
 * PNG is written from its image at the end). NULL when the format was not built in. */
static cairo_surface_t *create_surface(const page *pg, sink *snk)
{
    cairo_surface_t *s = NULL;
    switch (pg->opt->format) {
    case CLI_PLOT_PNG:
        s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pg->width, pg->height);
        break;
    case CLI_PLOT_SVG:
#ifdef CAIRO_HAS_SVG_SURFACE
        s = cairo_svg_surface_create_for_stream(sink_write, snk, pg->width, pg->height);
#if CAIRO_VERSION >= CAIRO_VERSION_ENCODE(1, 16, 0)
        cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX);
#endif
#endif
        break;
    case CLI_PLOT_PDF:
#ifdef CAIRO_HAS_PDF_SURFACE
        s = cairo_pdf_surface_create_for_stream(sink_write, snk, pg->width, pg->height);
#if CAIRO_VERSION >= CAIRO_VERSION_ENCODE(1, 16, 0)
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "gpuhist");
        if (pg->opt->title)
            cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, pg->opt->title);
#endif
#endif
        break;
    default:
        break;
    }
    return s;
}

int cli_plot_write(cli_output *out, const cli_histogram *h, const cli_plot_options *opt)
{
    const gpuhist_result *r = h->result;
    const char *path = out->path ? out->path : "-";
    const double t_start = cli_now();
    if (r->channels == 0 || r->bins == 0)
        return cli_error(CLI_EXIT_FAIL, "--plot %s: no histogram to draw", path);
    page pg;
    memset(&pg, 0, sizeof pg);
    pg.h = h;
    pg.opt = opt;
    pg.npanels = r->channels;
    pg.pan = calloc(pg.npanels, sizeof *pg.pan);
    columns col = {0, calloc(PAGE_W, sizeof(double)), calloc(PAGE_W, sizeof(double)),
                   calloc(PAGE_W, 1)};
    cairo_surface_t *measure_s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *m = cairo_create(measure_s);
    cairo_surface_t *surface = NULL;
    cairo_t *cr = NULL;
    sink snk = {out->f, 0};
    int rc = CLI_EXIT_OK;
    if (!pg.pan || !col.lo || !col.hi || !col.set || cairo_status(m) != CAIRO_STATUS_SUCCESS) {
        rc = cli_error(CLI_EXIT_FAIL, "--plot %s: out of memory", path);
        goto done;
    }
    layout_1d(&pg, m);
    col.n = pg.x1 - pg.x0;

    surface = create_surface(&pg, &snk);
    if (!surface || cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        rc = cli_error(CLI_EXIT_FAIL, "--plot %s: cannot create the %s surface: %s", path,
                       format_name(opt->format),
                       surface ? cairo_status_to_string(cairo_surface_status(surface))
                               : "not built in");
        goto done;
    }
    cr = cairo_create(surface);
    set_rgb(cr, 0xffffff);
    cairo_paint(cr);
    cairo_set_line_width(cr, 1.0);
    uint64_t folded = 0;
    uint64_t nrects = draw_1d(cr, &pg, &col, &folded);
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        rc = cli_error(CLI_EXIT_FAIL, "--plot %s: cannot draw: %s", path,
                       cairo_status_to_string(cairo_status(cr)));
        goto done;
    }
    cairo_destroy(cr);
    cr = NULL;
    cairo_status_t st;
    if (opt->format == CLI_PLOT_PNG) {
        st = cairo_surface_write_to_png_stream(surface, sink_write, &snk);
    } else {
        cairo_surface_finish(surface); /* writes the document through sink_write */
        st = cairo_surface_status(surface);
    }
    if (st != CAIRO_STATUS_SUCCESS || snk.failed) {
        rc = cli_error(CLI_EXIT_FAIL, "--plot %s: write error: %s", path,
                       snk.failed ? strerror(snk.failed) : cairo_status_to_string(st));
        goto done;
    }
    if (opt->verbose) {
        cli_note("plot: %s: %s, %d x %d %s, %u panel(s), %llu rectangle(s) of bars, drawn in "
                 "%.3f s",
                 path, format_name(opt->format), pg.width, pg.height,
                 opt->format == CLI_PLOT_PNG ? "pixels" : "points", pg.npanels,
                 (unsigned long long)nrects, cli_now() - t_start);
        for (uint32_t c = 0; c < pg.npanels; ++c) {
            const panel *p = &pg.pan[c];
            cli_note("plot: panel %u: area x %d..%d, y %d..%d, values %.17g..%.17g%s%s%s", c,
                     pg.x0, pg.x1, p->top, p->bottom, p->y.lo, p->y.hi,
                     p->y.log ? " (log)" : "", p->tallies[0] ? "; noted: " : "", p->tallies);
        }
        if (folded)
            cli_note("plot: %llu bin(s) of %u panel(s) folded into the %d columns (the "
                     "greatest value of each)",
                     (unsigned long long)folded, pg.npanels, col.n);
    }

done:
    if (cr)
        cairo_destroy(cr);
    if (surface)
        cairo_surface_destroy(surface);
    cairo_destroy(m);
    cairo_surface_destroy(measure_s);
    free(pg.pan);
    free(col.lo);
    free(col.hi);
    free(col.set);
    /* The command draws one plot: cairo's caches (fonts, fontconfig's patterns) go now, so a
     * leak checker sees no memory left behind by the drawing. */
    cairo_debug_reset_static_data();
#if defined(GPUHIST_HAVE_FONTCONFIG) && GPUHIST_HAVE_FONTCONFIG
    FcFini();
#endif
    return rc;
}

#endif
