/*
 * run_images.c - the command on image files: one histogram of every page of every file (a
 * directory's files in name order), or one per page with --each (the table, CSV or JSON of
 * each labelled with its image), the plot, and --equalize's image.
 *
 * image.c decodes the files on worker threads while this thread counts each page with one
 * gpuhist_histogram call (--roi as the samples' region) and adds the counts exactly. The bins
 * follow the first image's sample type as for raw samples; an auto range (float TIFF without
 * -r) is found by a first pass over all the images. --each writes into a temporary file first,
 * so the output is only created once every image was counted.
 */
#include "command.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether the run reads images: --image, or every input a directory or a file with an image
 * signature (--raw, --npy and --text say otherwise). Several inputs must all be images.
 * @return CLI_EXIT_* (message printed). */
int cli_image_inputs(const cli_options *o, int *images)
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
        cli_json_string(f, name);
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
static int write_image_histogram(FILE *f, const cli_options *o, const gpuhist_result *r,
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
        cli_density_of(r, counts, NULL, edges, density);
    if (cumulative)
        cli_cumulative_of(r, counts, cumulative);
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
int cli_run_images(const cli_options *o)
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
        (rc = cli_create_context(o, &ctx)))
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
    cli_options eo = *o;
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
    if (o->have_integer && !o->have_bins && !cli_is_small_int(dtype)) {
        rc = cli_error(CLI_EXIT_USAGE, "--integer on %s samples of images needs -b N",
                       gpuhist_dtype_name(dtype));
        goto done;
    }
    cli_input in;
    memset(&in, 0, sizeof in);
    in.dtype = dtype;
    snprintf(in.name, sizeof in.name, "%.*s", (int)sizeof in.name - 1, img->name);
    gpuhist_bin_spec spec;
    if ((rc = cli_build_spec(&eo, &in, edges_in, edge_bins, &spec)))
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
        a.float32_linspace = spec.float32_linspace; /* --numpy-rules */
        spec = a;
        if (!isfinite(spec.upper - spec.lower)) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: range: the data's range [%g, %g] overflows a double",
                           in.name, spec.lower, spec.upper);
            goto done;
        }
    }
    if ((rc = cli_alloc_result(&eo, &spec, &counts, &edges_out, &no_sums, &no_squares)))
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
