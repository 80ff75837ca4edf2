/*
 * edges.c - bin edges as the command's user gives them (-e, and each axis of the N-D -e): a
 * list "E0,E1,..." (commas, white space around the numbers) or "@FILE" (read like --text input:
 * white space, commas, '#' comments), then checked: at least 2, finite, strictly increasing, at
 * most a caller's number of bins. An empty item of a list is refused rather than skipped.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_check_edges(const char *name, const double *e, uint64_t n, uint64_t max_bins)
{
    if (n < 2)
        return cli_error(CLI_EXIT_USAGE, "%s: need at least 2 edges, got %llu", name,
                         (unsigned long long)n);
    if (n - 1 > max_bins)
        return cli_error(CLI_EXIT_USAGE, "%s: %llu edges, more than %llu bins", name,
                         (unsigned long long)n, (unsigned long long)max_bins);
    for (uint64_t i = 0; i < n; ++i) {
        if (!isfinite(e[i]))
            return cli_error(CLI_EXIT_USAGE, "%s: edge %llu is not finite", name,
                             (unsigned long long)i);
        if (i && !(e[i] > e[i - 1])) {
            char a[40], b[40];
            cli_format_double(a, sizeof a, e[i - 1]);
            cli_format_double(b, sizeof b, e[i]);
            return cli_error(CLI_EXIT_USAGE,
                             "%s: edges must be strictly increasing (edge %llu = %s after %s)",
                             name, (unsigned long long)i, b, a);
        }
    }
    return CLI_EXIT_OK;
}

/* The numbers of -e E0,E1,...: separated by commas, with white space allowed around them. An
 * empty item (a stray comma, "0,1," or "0,,1") is refused rather than skipped: it is more likely
 * a lost edge than a typing habit. *out is malloc'd. @return CLI_EXIT_* (message printed). */
static int parse_edge_list(const char *name, const char *arg, double **out, uint64_t *count)
{
    size_t cap = 1;
    for (const char *p = arg; *p; ++p)
        cap += *p == ',';
    double *e = malloc(cap * sizeof *e);
    if (!e)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    uint64_t n = 0;
    for (const char *p = arg;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t')) {
            ++p;
            --len;
        }
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            --len;
        char item[80];
        const char *why = NULL;
        if (len == 0) {
            free(e);
            return cli_error(CLI_EXIT_USAGE, "%s: edge %llu is empty (a stray comma?)", name,
                             (unsigned long long)n);
        } else if (len >= sizeof item) {
            snprintf(item, sizeof item, "%.40s...", p);
            why = "is not a number";
        } else {
            memcpy(item, p, len);
            item[len] = 0;
            why = cli_double_problem(item, &e[n]);
        }
        if (why) {
            free(e);
            return cli_error(CLI_EXIT_USAGE, "%s: '%s' %s", name, item, why);
        }
        ++n;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = e;
    *count = n;
    return CLI_EXIT_OK;
}

int cli_parse_edges(const char *arg, const char *name, uint64_t max_bins, double **edges,
                    uint32_t *bins)
{
    void *vals;
    uint64_t n;
    int rc;
    if (arg[0] == '@') {
        /* A file of edges reads like --text input (white space, commas, '#' comments). */
        char *text;
        size_t len;
        name = arg + 1;
        rc = cli_slurp(name, "the edges", 0, &text, &len);
        if (rc)
            return CLI_EXIT_USAGE;
        rc = cli_parse_text(name, text, len, GPUHIST_F64, 0, CLI_EXIT_USAGE, &vals, &n);
        free(text);
    } else {
        double *list = NULL;
        rc = parse_edge_list(name, arg, &list, &n);
        vals = list;
    }
    if (rc)
        return rc;
    double *e = vals;
    if ((rc = cli_check_edges(name, e, n, max_bins))) {
        free(vals);
        return rc;
    }
    *edges = e;
    *bins = (uint32_t)(n - 1);
    return CLI_EXIT_OK;
}
