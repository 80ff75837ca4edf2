/*
 * result.c - the arrays a 1-D result is written from: the counts and edges (the sums and the
 * sums of squares with --weights, --squares), allocated only once the host memory is known to
 * hold them, and the columns derived from them: NumPy's density (--density) and the running
 * totals (--cumulative).
 *
 * The density's total of weighted sums adds them in NumPy 2's order (pairwise over the whole
 * array), so it equals NumPy 2's to the last bit on the same sums (NumPy 1.x adds buffers of 8192
 * values, which can differ in the last bit above 8192 bins: docs/SEMANTICS.md).
 * Arrays of 4 MiB or more are asked for in 2 MiB-aligned blocks marked for transparent huge
 * pages (Linux, where the system leaves them to madvise): the counts and the edges of 2^20 bins
 * then take 8 page faults, not 4096 (docs/PERFORMANCE.md, "Output of 2^20 bins"). They are
 * freed with free().
 */
#include "command.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *cli_result_array(size_t bytes, int zero)
{
    enum { BIG = 4 << 20 };
    const size_t huge = (size_t)2 << 20;
    if (bytes < (size_t)BIG || bytes > SIZE_MAX - huge)
        return zero ? calloc(1, bytes ? bytes : 1) : malloc(bytes ? bytes : 1);
    const size_t rounded = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
    if (!p)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE); /* advice: refused, the pages are small ones */
#endif
    if (zero)
        memset(p, 0, bytes);
    return p;
}

/* The counts and edges (and with weights the sums, and the sums of squares) are written in
 * full: check they fit before asking for them (the kernel grants big allocations lazily and
 * kills the process later instead). */
int cli_alloc_result(const cli_options *o, const gpuhist_bin_spec *spec, uint64_t **counts,
                        double **edges, double **sums, double **squares)
{
    double arrays = 1.0 + (o->weights ? 1.0 : 0.0) + (o->squares ? 1.0 : 0.0);
    double need = ((double)spec->bins * o->active * arrays + (double)spec->bins + 1.0) * 8.0;
    double avail = (double)gpuhist_host_memory_available();
    if (avail > 0 && need > avail) {
        char a[32], b[32];
        cli_format_bytes(a, sizeof a, need);
        cli_format_bytes(b, sizeof b, avail);
        return cli_error(CLI_EXIT_FAIL,
                         "%u bins x %u channel(s): the counts and edges%s need %s of memory, "
                         "only %s is available (use fewer bins)",
                         spec->bins, o->active, o->weights ? " and sums" : "", a, b);
    }
    const size_t n = (size_t)spec->bins * o->active;
    *counts = cli_result_array(n * sizeof **counts, 1);
    *edges = cli_result_array(((size_t)spec->bins + 1) * sizeof **edges, 0);
    if (o->weights)
        *sums = cli_result_array(n * sizeof **sums, 1);
    if (o->squares)
        *squares = cli_result_array(n * sizeof **squares, 1);
    if (!*counts || !*edges || (o->weights && !*sums) || (o->squares && !*squares))
        return cli_error(CLI_EXIT_FAIL, "out of memory for %u bins", spec->bins);
    return CLI_EXIT_OK;
}

/* NumPy's pairwise summation of doubles (8 partial sums up to 128 values, halves above). NumPy
 * 2's n.sum() of a contiguous array applies it to the whole array (NumPy 1.x to each buffer of
 * 8192 values, adding the buffers' sums in order), so a total matches NumPy 2's n.sum() bit for
 * bit on the same values. */
double cli_pairwise_sum(const double *a, size_t n, size_t stride)
{
    if (n < 8) {
        double r = -0.0;
        for (size_t i = 0; i < n; ++i)
            r += a[i * stride];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; ++k)
            r[k] = a[(size_t)k * stride];
        size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int k = 0; k < 8; ++k)
                r[k] += a[(i + (size_t)k) * stride];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i)
            res += a[i * stride];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return cli_pairwise_sum(a, n2, stride) + cli_pairwise_sum(a + n2 * stride, n - n2, stride);
}

/* NumPy's density (np.histogram(..., density=True)): n / diff(edges) / n.sum(), channel by
 * channel, with n the counts (their total an exact integer, converted to double as NumPy's
 * division does) or the sums of weights (their total by NumPy 2's pairwise summation). A total
 * of 0 gives NaN, as in NumPy. */
void cli_density_of(const gpuhist_result *r, const uint64_t *counts, const double *sums,
                       const double *edges, double *out)
{
    const uint32_t bins = r->bins;
    for (uint32_t c = 0; c < r->channels; ++c) {
        const uint64_t *n = counts + (size_t)c * bins;
        const double *w = sums ? sums + (size_t)c * bins : NULL;
        double total;
        if (w) {
            total = cli_pairwise_sum(w, bins, 1);
        } else {
            uint64_t t = 0;
            for (uint32_t i = 0; i < bins; ++i)
                t += n[i];
            total = (double)t;
        }
        for (uint32_t i = 0; i < bins; ++i) {
            const double db = edges[i + 1] - edges[i];
            const double v = w ? w[i] : (double)n[i];
            out[(size_t)c * bins + i] = v / db / total;
        }
    }
}

void cli_cumulative_of(const gpuhist_result *r, const uint64_t *counts, uint64_t *out)
{
    for (uint32_t c = 0; c < r->channels; ++c) {
        uint64_t t = 0;
        for (uint32_t i = 0; i < r->bins; ++i)
            out[(size_t)c * r->bins + i] = t += counts[(size_t)c * r->bins + i];
    }
}
