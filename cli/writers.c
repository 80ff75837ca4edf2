/*
 * writers.c - output of the gpuhist command: table (bars on a terminal), CSV, JSON, and the
 * output file that only appears once it is complete.
 *
 * Edges are printed as the shortest decimal that reads back as the exact double (see
 * cli_format_double), so scripts can compare them with NumPy's edges with ==.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int ulen(uint64_t v)
{
    char b[32];
    return snprintf(b, sizeof b, "%llu", (unsigned long long)v);
}

/* Draw a bar of count/max * width cells. @return the cells drawn. */
static int put_bar(FILE *f, uint64_t count, uint64_t max, int width, int utf8)
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
    for (uint64_t i = 0; i < units / res; ++i)
        fputs(utf8 ? "\u2588" : "#", f);
    if (utf8)
        fputs(eighths[units % 8], f);
    return (int)(units / res) + (utf8 && units % 8 ? 1 : 0);
}

/* For people: float32 even-bin edges (which are exactly float32 values) in the fewest digits
 * that identify the float32, "1.8026654" rather than its double expansion "1.80266535282135".
 * CSV and JSON keep the exact doubles. */
static void table_edge(char *buf, size_t size, const cli_histogram *h, double v)
{
    if (h->dtype == GPUHIST_F32 && h->kind == GPUHIST_BINS_EVEN && (double)(float)v == v &&
        v != 0 && isfinite(v)) {
        for (int p = 1; p <= 9; ++p) {
            snprintf(buf, size, "%.*g", p, v);
            if (strtof(buf, NULL) == (float)v)
                return;
        }
    }
    cli_format_double(buf, size, v);
}

static void write_table(FILE *f, const cli_histogram *h, int bars, int columns)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;
    char a[40], b[40];

    int wbin = ulen(bins ? bins - 1 : 0), wlo = 5, whi = 5, wc = 5;
    if (wbin < 3)
        wbin = 3;
    uint64_t max = 0;
    for (uint32_t i = 0; i < bins; ++i) {
        table_edge(a, sizeof a, h, h->edges[i]);
        table_edge(b, sizeof b, h, h->edges[i + 1]);
        if ((int)strlen(a) > wlo)
            wlo = (int)strlen(a);
        if ((int)strlen(b) > whi)
            whi = (int)strlen(b);
        for (uint32_t c = 0; c < nch; ++c) {
            uint64_t v = h->counts[(size_t)c * bins + i];
            if (ulen(v) > wc)
                wc = ulen(v);
            if (v > max)
                max = v;
        }
    }
    if (nch > 1 && wc < 7)
        wc = 7;

    fprintf(f, "%*s  %*s  %*s", wbin, "bin", wlo, "lower", whi, "upper");
    for (uint32_t c = 0; c < nch; ++c) {
        if (nch > 1 || h->per_channel) {
            char name[24];
            snprintf(name, sizeof name, "count_%u", c);
            fprintf(f, "  %*s", wc, name);
        } else {
            fprintf(f, "  %*s", wc, "count");
        }
    }
    fputc('\n', f);
    int used = wbin + 2 + wlo + 2 + whi + (int)nch * (wc + 2) + 2;
    int barw = bars ? (columns - used - 1) / (int)nch - (nch > 1 ? 1 : 0) : 0;
    if (barw < 8)
        barw = bars ? 8 : 0;
    int utf8 = cli_utf8();

    for (uint32_t i = 0; i < bins; ++i) {
        table_edge(a, sizeof a, h, h->edges[i]);
        table_edge(b, sizeof b, h, h->edges[i + 1]);
        fprintf(f, "%*u  %*s  %*s", wbin, i, wlo, a, whi, b);
        for (uint32_t c = 0; c < nch; ++c)
            fprintf(f, "  %*llu", wc, (unsigned long long)h->counts[(size_t)c * bins + i]);
        if (bars) {
            for (uint32_t c = 0; c < nch; ++c) {
                uint64_t v = h->counts[(size_t)c * bins + i];
                fputs(c ? " " : "  ", f);
                int cells = put_bar(f, v, max, barw, utf8);
                /* Pad each channel's bar so the next one starts in its own column. */
                if (c + 1 < nch && barw > cells)
                    fprintf(f, "%*s", barw - cells, "");
            }
        }
        fputc('\n', f);
    }
    for (uint32_t c = 0; c < nch; ++c) {
        if (nch > 1 || h->per_channel)
            fprintf(f, "channel %u: ", r->channel_index[c]);
        fprintf(f, "underflow %llu, overflow %llu, nan %llu, total %llu\n",
                (unsigned long long)r->underflow[c], (unsigned long long)r->overflow[c],
                (unsigned long long)r->nan[c], (unsigned long long)r->total[c]);
    }
    fprintf(f, "%s bins are [lower, upper)%s; backend %s, strategy %s\n", kind_name(h->kind),
            r->last_edge_inclusive ? ", the last one includes its upper edge" : "",
            gpuhist_backend_name(r->backend), r->strategy ? r->strategy : "?");
}

static void write_csv(FILE *f, const cli_histogram *h)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;
    char a[40], b[40];
    fputs("bin,lower,upper", f);
    if (nch > 1 || h->per_channel)
        for (uint32_t c = 0; c < nch; ++c)
            fprintf(f, ",count_%u", c);
    else
        fputs(",count", f);
    fputc('\n', f);
    for (uint32_t i = 0; i < bins; ++i) {
        cli_format_double(a, sizeof a, h->edges[i]);
        cli_format_double(b, sizeof b, h->edges[i + 1]);
        fprintf(f, "%u,%s,%s", i, a, b);
        for (uint32_t c = 0; c < nch; ++c)
            fprintf(f, ",%llu", (unsigned long long)h->counts[(size_t)c * bins + i]);
        fputc('\n', f);
    }
}

static void json_u64_array(FILE *f, const uint64_t *v, uint32_t n)
{
    fputc('[', f);
    for (uint32_t i = 0; i < n; ++i)
        fprintf(f, i ? ", %llu" : "%llu", (unsigned long long)v[i]);
    fputc(']', f);
}

static void write_json(FILE *f, const cli_histogram *h)
{
    const gpuhist_result *r = h->result;
    uint32_t bins = r->bins, nch = r->channels;
    char a[40];
    fputs("{\n  \"edges\": [", f);
    for (uint32_t i = 0; i <= bins; ++i) {
        cli_format_double(a, sizeof a, h->edges[i]);
        fprintf(f, i ? ", %s" : "%s", a);
    }
    fputs("],\n  \"counts\": ", f);
    if (h->per_channel) {
        fputc('[', f);
        for (uint32_t c = 0; c < nch; ++c) {
            fputs(c ? ", " : "", f);
            json_u64_array(f, h->counts + (size_t)c * bins, bins);
        }
        fputc(']', f);
    } else {
        json_u64_array(f, h->counts, bins);
    }
    fprintf(f,
            ",\n  \"underflow\": %llu,\n  \"overflow\": %llu,\n  \"nan\": %llu,\n"
            "  \"total\": %llu,\n",
            (unsigned long long)sum_tally(r->underflow, nch),
            (unsigned long long)sum_tally(r->overflow, nch),
            (unsigned long long)sum_tally(r->nan, nch), (unsigned long long)sum_tally(r->total, nch));
    /* The strategy and backend names are fixed identifiers: no JSON escaping needed. */
    fprintf(f, "  \"backend\": \"%s\",\n  \"strategy\": \"%s\",\n", gpuhist_backend_name(r->backend),
            r->strategy ? r->strategy : "");
    fprintf(f, "  \"dtype\": \"%s\",\n  \"kind\": \"%s\",\n  \"bins\": %u,\n",
            gpuhist_dtype_name(h->dtype), kind_name(h->kind), bins);
    fprintf(f, "  \"last_edge_inclusive\": %s,\n", r->last_edge_inclusive ? "true" : "false");
    if (h->per_channel) {
        uint64_t idx[GPUHIST_MAX_CHANNELS];
        for (uint32_t c = 0; c < nch; ++c)
            idx[c] = r->channel_index[c];
        fputs("  \"channel_index\": ", f);
        json_u64_array(f, idx, nch);
        fputs(",\n  \"underflow_per_channel\": ", f);
        json_u64_array(f, r->underflow, nch);
        fputs(",\n  \"overflow_per_channel\": ", f);
        json_u64_array(f, r->overflow, nch);
        fputs(",\n  \"nan_per_channel\": ", f);
        json_u64_array(f, r->nan, nch);
        fputs(",\n  \"total_per_channel\": ", f);
        json_u64_array(f, r->total, nch);
        fputs(",\n", f);
    }
    fprintf(f, "  \"seconds\": %.9f\n}\n", r->seconds);
}

void cli_write_histogram(FILE *f, cli_format format, const cli_histogram *h, int bars, int columns)
{
    if (format == CLI_FMT_CSV)
        write_csv(f, h);
    else if (format == CLI_FMT_JSON)
        write_json(f, h);
    else
        write_table(f, h, bars, columns);
}

/* ---- output file ----------------------------------------------------------------------------- */

int cli_output_open(cli_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (path == NULL || strcmp(path, "-") == 0) {
        o->f = stdout;
        return CLI_EXIT_OK;
    }
    size_t n = strlen(path);
    o->path = malloc(n + 1);
    o->tmp = malloc(n + 16);
    if (!o->path || !o->tmp) {
        free(o->path);
        free(o->tmp);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory", path);
    }
    memcpy(o->path, path, n + 1);
    /* The temporary lives beside the target so rename() is atomic (same file system). */
    snprintf(o->tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        int e = errno;
        free(o->path);
        free(o->tmp);
        o->path = o->tmp = NULL;
        return cli_error(CLI_EXIT_FAIL, "%s: cannot create the output file: %s", path,
                         strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode a plain fopen() would have. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        free(o->path);
        free(o->tmp);
        o->path = o->tmp = NULL;
        return cli_error(CLI_EXIT_FAIL, "%s: cannot write: %s", path, strerror(e));
    }
    return CLI_EXIT_OK;
}

void cli_output_abort(cli_output *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

int cli_output_commit(cli_output *o)
{
    if (o->f == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            return cli_error(CLI_EXIT_FAIL, "standard output: write error: %s", strerror(errno));
        o->f = NULL;
        return CLI_EXIT_OK;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        int rc = cli_error(CLI_EXIT_FAIL, "%s: write error: %s", o->path, strerror(e));
        cli_output_abort(o);
        return rc;
    }
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return CLI_EXIT_OK;
}
