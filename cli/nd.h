/*
 * nd.h - what the files of the command's N-D histograms share (not installed): run_nd.c reads
 * the points and counts them, nd_axes.c makes each axis's bins from the per-axis option values,
 * nd_formats.c writes the result; the options are command.h's (the per-axis lists as given:
 * "256,256", "0:1,0:1", "0,1,2;0,5,10").
 */
#ifndef GPUHIST_CLI_ND_H
#define GPUHIST_CLI_ND_H

#include "command.h"

/* The bin spec of every one of `dims` axes from -b, -r, -e, --integer, --last-inclusive into
 * axes[0..dims). Edges read from -e are malloc'd into own[a] (the caller frees them).
 * @return CLI_EXIT_* (message printed). */
int cli_nd_parse_axes(const cli_options *o, uint32_t dims, gpuhist_bin_spec *axes,
                      double **own);

/* NumPy's histogramdd density of `r` (from `sums` when weighted, else the counts) into `out`
 * (r->bins_total values, C order). */
void cli_nd_density_of(const gpuhist_nd_result *r, const double *sums, double *out);

/* Write `r` (its axes `axes`, samples of `dtype`; sums, squares and density where not NULL) as
 * `fmt` to `f`. With -f npy, sides[a] (a < r->dims: the edges of axis a; r->dims: the sums;
 * r->dims + 1: the squares) receive those arrays where not NULL. Write errors are left to the
 * outputs' commit. @return CLI_EXIT_* (message printed: out of memory). */
int cli_nd_write(FILE *f, cli_format fmt, const gpuhist_nd_result *r,
                 const gpuhist_bin_spec *axes, gpuhist_dtype dtype, const double *sums,
                 const double *squares, const double *density, FILE *const *sides);

#endif
