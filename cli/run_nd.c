/*
 * run_nd.c - the command's N-D (joint) histograms: --dims N, through gpuhist_histogramdd().
 *
 * Input: N coordinates per point, interleaved point after point: raw or text values (N per
 * point, the line structure of text ignored), a flat .npy, or a 2-D .npy of shape (points, N)
 * (C order: interleaved; Fortran order: one column per axis, read in place). --dims auto takes
 * N from a 2-D .npy. A regular raw or .npy file (C order or flat) is read in chunks of about
 * 16 MiB through an N-D stream (gpuhist_nd_stream_*), with its weights read in step, so memory is
 * bounded by a chunk of points, a chunk of weights and the counts; axes of auto range take a
 * first pass over the file (one gpuhist_points_minmax per chunk for all of them, combined: the
 * range a whole read finds). Anything else (text, pipes, Fortran order) is read whole.
 * The bins of the axes come from nd_axes.c (one spec kind for every axis, per-axis lists; without
 * -r/-e/--integer, even bins over each axis's finite min:max, last edge inclusive, as
 * numpy.histogramdd), the output from nd_formats.c (table, CSV, JSON, npy with
 * X.edges<a>.npy, X.sums.npy, X.sums_squared.npy beside it, all complete before any is
 * committed).
 * Limits: the product of the bins at most 2^31 and what host memory holds; --cumulative, clamped
 * outliers, --channels, --plot, images and MPI are refused with N-D.
 */
#include "nd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
 * one; with --dims auto a 2-D one, whose columns set *dims) whose data is all there: then f->fd
 * is open. Anything else (or any doubt) leaves f->fd = -1 and the input is read whole, where
 * every problem is reported. @return CLI_EXIT_* (only a malformed .npy header fails here, with
 * the message the whole read would give).
 */
static int open_streamed(const cli_options *o, uint32_t *dims_io, nd_file *f)
{
    f->fd = -1;
    if (!o->input || strcmp(o->input, "-") == 0 || o->in_format == CLI_IN_TEXT)
        return CLI_EXIT_OK;
    uint32_t dims = *dims_io;
    int fd = open(o->input, O_RDONLY);
    struct stat sb;
    if (fd < 0)
        return CLI_EXIT_OK;
    unsigned char head[16];
    ssize_t got = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? pread(fd, head, sizeof head, 0)
                                                              : -1;
    const uint64_t size = got >= 0 ? (uint64_t)sb.st_size : 0;
    /* a .npy without its magic (forced, or by its name) is read whole: the parser says why */
    int npy = got >= 0 && cli_input_format_detect(o->in_format, o->input, head, (size_t)got) ==
                              CLI_IN_NPY;
    if (got < 0 || (npy && !cli_input_format_signed(CLI_IN_NPY, head, (size_t)got))) {
        close(fd);
        return CLI_EXIT_OK;
    }
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
        if (ok && o->dims_auto) {
            ok = h.ndim == 2 && h.last_dim >= 1 && h.last_dim <= GPUHIST_MAX_DIMS;
            dims = ok ? (uint32_t)h.last_dim : 1u;
        }
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
        if (o->dims_auto) { /* refused by the whole read, with its message */
            close(fd);
            return CLI_EXIT_OK;
        }
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
    *dims_io = dims;
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

/* The next n points of the file into buf (byte-swapped to this machine's order). A short read is
 * an error printed here (a file that shrank while read). @return 0 or -1. */
static int read_points(nd_file *f, unsigned char *buf, uint64_t n, uint32_t dims,
                       const char *name)
{
    const size_t vsize = gpuhist_dtype_size(f->dtype);
    const size_t bytes = (size_t)n * dims * vsize;
    int eof = 0;
    ssize_t got = cli_read_full(f->fd, buf, bytes, &eof);
    if (got != (ssize_t)bytes) {
        cli_error(CLI_EXIT_FAIL, "%s: %s", name,
                  got < 0 ? strerror(errno) : "the file ended early (it shrank while read)");
        return -1;
    }
    if (f->swap)
        reverse_values(buf, n * dims, vsize);
    return 0;
}

/*
 * The auto ranges of the streamed file: a first pass, each chunk's finite min and max of every
 * auto axis (one gpuhist_points_minmax call, one read of the chunk) combined, then each auto
 * axis's spec from them (gpuhist_bins_from_minmax: the spec a whole read resolves). A failure is
 * printed here.
 * @return GPUHIST_OK or the failure's status.
 */
static gpuhist_status stream_auto_ranges(gpuhist_ctx *ctx, nd_file *f, uint32_t dims,
                                         gpuhist_bin_spec *axes, unsigned char *buf,
                                         uint64_t per, const char *name, int verbose)
{
    const double t0 = cli_now();
    uint64_t chunks = 0, calls = 0;
    double lo[GPUHIST_MAX_DIMS], hi[GPUHIST_MAX_DIMS];
    int found[GPUHIST_MAX_DIMS];
    uint32_t autos = 0;
    for (uint32_t a = 0; a < dims; ++a) {
        lo[a] = 0.0, hi[a] = 1.0, found[a] = 0;
        if (axes[a].kind == GPUHIST_BINS_EVEN && axes[a].auto_range)
            autos |= 1u << a;
    }
    if (!autos)
        return GPUHIST_OK;
    if (lseek(f->fd, (off_t)f->offset, SEEK_SET) < 0) {
        cli_error(CLI_EXIT_FAIL, "%s: %s", name, strerror(errno));
        return GPUHIST_ERROR_BACKEND;
    }
    for (uint64_t done = 0; done < f->points;) {
        uint64_t n = f->points - done < per ? f->points - done : per;
        if (read_points(f, buf, n, dims, name))
            return GPUHIST_ERROR_BACKEND;
        gpuhist_points chunk = gpuhist_points_interleaved(buf, f->dtype, dims, n);
        double l[GPUHIST_MAX_DIMS], h[GPUHIST_MAX_DIMS];
        int fd[GPUHIST_MAX_DIMS];
        gpuhist_status st = gpuhist_points_minmax(ctx, &chunk, autos, l, h, fd);
        ++calls;
        if (st != GPUHIST_OK) {
            cli_error(CLI_EXIT_FAIL, "%s: the auto ranges: %s", name, gpuhist_last_error(ctx));
            return st;
        }
        for (uint32_t a = 0; a < dims; ++a)
            if ((autos >> a & 1u) && fd[a])
                cli_minmax_take(&lo[a], &hi[a], &found[a], l[a], h[a]);
        done += n;
        ++chunks;
    }
    for (uint32_t a = 0; a < dims; ++a)
        if (autos >> a & 1u) {
            const int f32_linspace = axes[a].float32_linspace; /* --numpy-rules */
            axes[a] = gpuhist_bins_from_minmax(axes[a].bins, lo[a], hi[a], found[a]);
            axes[a].float32_linspace = f32_linspace;
        }
    if (verbose) {
        char list[GPUHIST_MAX_DIMS * 4 + 1] = "";
        size_t used = 0;
        for (uint32_t a = 0; a < dims; ++a)
            if (autos >> a & 1u)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%u",
                                         used ? "," : "", a);
        cli_note("first pass: the auto ranges of axes %s over %llu points in %llu chunks "
                 "(%llu min/max calls, one per chunk) in %.3f s",
                 list, (unsigned long long)f->points, (unsigned long long)chunks,
                 (unsigned long long)calls, cli_now() - t0);
    }
    return GPUHIST_OK;
}

/* Read the points in chunks of about cli_chunk_bytes() into an N-D stream on `ctx`, with their
 * weights in step when w is open (w->fd >= 0); axes of auto range are resolved first (a first
 * pass). A failure of the library leaves its message in gpuhist_last_error(ctx) and returns its
 * status; a read error or a weights error is printed here (*printed = 1). */
static gpuhist_status count_streamed(const cli_options *o, gpuhist_ctx *ctx, nd_file *f,
                                     uint32_t dims, const gpuhist_bin_spec *axes,
                                     cli_weights *w, gpuhist_nd_result *r, const char *name,
                                     int *printed)
{
    gpuhist_bin_spec use[GPUHIST_MAX_DIMS]; /* axes with their auto ranges resolved */
    memcpy(use, axes, (size_t)dims * sizeof *use);
    const size_t vsize = gpuhist_dtype_size(f->dtype), point = (size_t)dims * vsize;
    const int weighted = w->fd >= 0;
    uint64_t per = cli_chunk_bytes() / point;
    per = per ? per : 1;
    if (per > f->points)
        per = f->points ? f->points : 1;
    *printed = 0;
    unsigned char *buf = malloc((size_t)per * point);
    unsigned char *wbuf = weighted ? malloc((size_t)per * w->size) : NULL;
    if (!buf || (weighted && !wbuf)) {
        free(buf);
        free(wbuf);
        *printed = 1;
        cli_error(CLI_EXIT_FAIL, "%s: out of memory for a chunk of points", name);
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    gpuhist_status rc = stream_auto_ranges(ctx, f, dims, use, buf, per, name, o->verbose);
    if (rc != GPUHIST_OK || lseek(f->fd, (off_t)f->offset, SEEK_SET) < 0) {
        if (rc == GPUHIST_OK)
            cli_error(CLI_EXIT_FAIL, "%s: %s", name, strerror(errno));
        free(buf);
        free(wbuf);
        *printed = 1;
        return rc != GPUHIST_OK ? rc : GPUHIST_ERROR_BACKEND;
    }
    gpuhist_points lay = gpuhist_points_interleaved(NULL, f->dtype, dims, 0);
    if (weighted) {
        lay.weights = wbuf;
        lay.weight_dtype = w->dtype;
    }
    gpuhist_nd_stream *st = NULL;
    rc = gpuhist_nd_stream_begin(ctx, &lay, use, &st);
    cli_progress pg;
    cli_progress_start(&pg, o->progress, "reading", (double)f->points * (double)point);
    for (uint64_t done = 0; rc == GPUHIST_OK && done < f->points;) {
        uint64_t n = f->points - done < per ? f->points - done : per;
        if (read_points(f, buf, n, dims, name) || (weighted && cli_weights_read(w, wbuf, n))) {
            *printed = 1;
            rc = GPUHIST_ERROR_BACKEND;
            break;
        }
        gpuhist_points chunk = gpuhist_points_interleaved(buf, f->dtype, dims, n);
        if (weighted) {
            chunk.weights = wbuf;
            chunk.weight_dtype = w->dtype;
        }
        rc = gpuhist_nd_stream_feed(st, &chunk);
        done += n;
        cli_progress_update(&pg, (double)done * (double)point);
    }
    cli_progress_end(&pg);
    if (rc == GPUHIST_OK && weighted && cli_weights_end(w)) {
        *printed = 1;
        rc = GPUHIST_ERROR_BACKEND;
    }
    /* the library's messages stay in gpuhist_last_error(ctx) for the caller */
    if (st && rc == GPUHIST_OK)
        rc = gpuhist_nd_stream_finish(st, r);
    else
        gpuhist_nd_stream_abort(st);
    free(buf);
    free(wbuf);
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
static int points_layout(const cli_options *o, const cli_input *in, uint32_t *dims,
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

/* Read the points, count them on `ctx` and write the result. */
static int count_nd(const cli_options *o, gpuhist_ctx *ctx)
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
    cli_output out, side[GPUHIST_MAX_DIMS + 2];
    memset(&out, 0, sizeof out);
    memset(side, 0, sizeof side);
    for (int i = 0; i < GPUHIST_MAX_DIMS + 2; ++i)
        side[i].slot = -1;
    int rc;

    /* The bins first when --dims N is given (usage errors before any reading). */
    if (!o->dims_auto && (rc = cli_nd_parse_axes(o, dims, axes, own)))
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

    /* A regular raw or .npy file streams in chunks (memory bounded by a chunk); anything else is
     * read whole. */
    if ((rc = open_streamed(o, &dims, &sf)))
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
    if (o->dims_auto && (rc = cli_nd_parse_axes(o, dims, axes, own)))
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
        if (sf.fd >= 0) { /* read in step with the points' chunks */
            if ((rc = cli_weights_expect(&w, p.count)))
                goto done;
        } else {
            if ((rc = cli_weights_read_all(&w, p.count, &wbuf)))
                goto done;
            p.weights = wbuf;
            p.weight_dtype = w.dtype;
        }
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
        st = count_streamed(o, ctx, &sf, dims, axes, &w, &r, in.name, &printed);
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
                 cli_input_format_name(in.format),
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
        cli_nd_density_of(&r, sums, density);
    FILE *sides[GPUHIST_MAX_DIMS + 2];
    for (int i = 0; i < GPUHIST_MAX_DIMS + 2; ++i)
        sides[i] = side[i].f;
    if ((rc = cli_nd_write(out.f, fmt, &r, axes, p.dtype, sums, squares, density, sides)))
        goto done;
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

int cli_run_nd(const cli_options *o)
{
    if (cli_mpi_on())
        return cli_error(CLI_EXIT_USAGE, "N-D histograms (--dims) do not run under MPI");
    cli_options eff;
    gpuhist_ctx *ctx = NULL;
    int rc = cli_context_options(o, &eff);
    if (rc || (rc = cli_create_context(&eff, &ctx)))
        return rc;
    rc = count_nd(o, ctx);
    gpuhist_destroy(ctx);
    return rc;
}
