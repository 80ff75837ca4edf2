/*
 * nd_axes.c - the bins of every axis of an N-D histogram from the command's per-axis option
 * values: -b, -r and --integer take one value for every axis or a comma-separated list of one
 * per axis (-b 256,256 -r 0:1,0:5), -e a ';'-separated list of edge lists (-e '0,1,2;0,5,10'),
 * each edge list read as -e's (util.c). Without -r, -e or --integer every axis gets even bins
 * over its coordinates' min:max (numpy.histogramdd's default range); 10 bins unless -b.
 * Messages name the option and the axis ("-r 0:1,x: axis 1: 'x' is not LO:HI").
 */
#include "nd.h"

#include <stdlib.h>
#include <string.h>

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

int cli_nd_parse_axes(const cli_options *o, uint32_t dims, gpuhist_bin_spec *axes,
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
        for (uint32_t a = 0; a < dims; ++a) {
            axes[a] = gpuhist_bins_auto(bins[a]);
            /* f32 points: NumPy 2's float32 edges, NumPy 1.x's with --numpy-rules 1 */
            axes[a].float32_linspace = o->numpy_rules != 1;
        }
    }
    return CLI_EXIT_OK;
}
