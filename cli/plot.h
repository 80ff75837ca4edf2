/*
 * plot.h - the command's histogram drawn into a PNG, SVG or PDF file (--plot FILE), with cairo
 * (plot.c). The plot is written beside the normal output, from the same result object
 * (cli_histogram), through an output of output.c (a temporary file renamed when complete).
 * Built without cairo, plot.c is stubs and cli_plot_check refuses every path.
 */
#ifndef GPUHIST_CLI_PLOT_H
#define GPUHIST_CLI_PLOT_H

#include "cli.h"

typedef enum cli_plot_format {
    CLI_PLOT_NONE = 0,
    CLI_PLOT_PNG,
    CLI_PLOT_SVG,
    CLI_PLOT_PDF
} cli_plot_format;

typedef struct cli_plot_options {
    cli_plot_format format;    /* from cli_plot_check */
    int log_scale;             /* --plot-log: a log10 axis for the values */
    gpuhist_outliers outliers; /* what the under/overflow note says: not drawn, or in the end
                                  bins (clamp) */
    uint32_t image_channels;   /* the channels are an image's: 1 grey, 2 grey + alpha, 3 RGB,
                                  4 RGBA (their colours and names); 0 = not an image */
    const char *title;         /* the input's name; NULL = no title */
    int verbose;               /* notes on stderr: the size, each plot area, what was folded */
} cli_plot_options;

/* The format PATH asks for by its extension (.png, .svg, .pdf, any case), checked with the
 * options, before anything is read. @return CLI_EXIT_OK; CLI_EXIT_USAGE for another extension;
 * CLI_EXIT_FAIL when plots (or that format of cairo's) were not built in. Message printed,
 * naming `shown` (the option as written) and the path. */
int cli_plot_check(const char *shown, const char *path, cli_plot_format *format);

/* Draw `h` into out->f (opened by cli_output_open; the caller commits or aborts it). Every
 * histogrammed channel is drawn; the values are, in this order of precedence, h->cumulative,
 * h->density, h->sums, else the counts. @return CLI_EXIT_* (message printed, naming out->path). */
int cli_plot_write(cli_output *out, const cli_histogram *h, const cli_plot_options *opt);

/* "png, svg, pdf" (what was built in), or "none", for --version. */
const char *cli_plot_formats_built(void);

#endif
