/*
 * test_mpi_api.c - the gpuhist_mpi layer against one process, bit for bit (run under mpirun
 * with any number of ranks; the CPU backend, one thread per rank).
 *
 * Every rank generates the same deterministic global data (a counter-based generator: value i
 * depends only on i and the seed), takes its share [r*P/N, (r+1)*P/N) and calls the collective
 * function; every rank then computes the one-process histogram of the whole data with
 * gpuhist_histogram and checks: on the root, counts, tallies, edges, lower/upper and the
 * weight sums (and sums of squares) equal it bit for bit; on the other ranks, the result is
 * the histogram of the rank's own share with the common edges. Cases: auto range with
 * NaN/inf/-0.0 and ranks holding nothing, 0 samples in all, even bins on f32 with channels,
 * explicit edges, integer bins, the clamp policy, f64 weights that cancel (1e300, -1e300,
 * 1e-300, subnormals) with squares, f32 weights, a weight state of megabytes, a root other than
 * 0, streams, min/max. Then the
 * error rule: a bad request on one rank, ranks that disagree, a rank without a stream: every
 * rank returns the same status and the lowest failing rank's message, and nobody hangs.
 * Exit 0 when every check passes (on every rank), 1 otherwise.
 */
#include "gpuhist_mpi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_fails, g_checks;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        ++g_checks;                                                                               \
        if (!(cond)) {                                                                            \
            ++g_fails;                                                                            \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", g_rank, __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
        }                                                                                         \
    } while (0)

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double unit(uint64_t seed, uint64_t i)
{
    return (double)(mix(seed * 0x100000001b3ull + i) >> 11) * 0x1p-53;
}

/* Sample i of the global data (value of channel c of pixel i / channels). */
static double value(uint64_t seed, uint64_t i)
{
    switch (mix(seed ^ (i * 7919u)) % 64) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0;
    default: return -3.0 + 9.0 * unit(seed, i);
    }
}

/* Weight of pixel i: values that cancel and tiny ones, so a rounded partial sum would show. */
static double weight(uint64_t seed, uint64_t i)
{
    static const double w[] = {1e300, -1e300, 1e-300, 3.0, -0.5, 4.9e-324, 1e-310, 0.1, -1e-300,
                               1.7976931348623157e308, -1.7976931348623157e308, 0x1p-1000};
    uint64_t k = mix(seed + i * 31u);
    return k % 3 ? w[k % (sizeof w / sizeof w[0])] : unit(seed, i) - 0.5;
}

typedef struct request {
    const char *name;
    gpuhist_dtype dtype;
    uint64_t pixels;        /* P */
    uint32_t channels, active;
    gpuhist_bin_spec spec;
    double edges[8];
    int weighted;           /* 0, or GPUHIST_F32 / GPUHIST_F64 + 1 */
    int squares;
    int root;
    int stream;             /* 1: streamed in chunks of 7 pixels, gpuhist_mpi_stream_finish */
    uint64_t seed;
} request;

typedef struct data {
    void *samples, *weights;
    uint64_t pixels;
} data;

static void make(const request *q, uint64_t first, uint64_t pixels, data *d)
{
    const size_t size = gpuhist_dtype_size(q->dtype);
    const uint64_t n = pixels * q->channels;
    d->pixels = pixels;
    d->samples = malloc(n * size + 1);
    unsigned char *p = d->samples;
    for (uint64_t k = 0; k < n; ++k) {
        const uint64_t i = first * q->channels + k;
        const double v = value(q->seed, i);
        switch (q->dtype) {
        case GPUHIST_F32: { float f = (float)v; memcpy(p + k * 4, &f, 4); break; }
        case GPUHIST_F64: memcpy(p + k * 8, &v, 8); break;
        case GPUHIST_U8: p[k] = (unsigned char)(mix(q->seed + i) & 0xff); break;
        default: { int32_t x = (int32_t)(mix(q->seed + i) % 41) - 20; memcpy(p + k * 4, &x, 4); }
        }
    }
    d->weights = NULL;
    if (q->weighted) {
        const gpuhist_dtype wd = (gpuhist_dtype)(q->weighted - 1);
        d->weights = malloc(pixels * 8 + 8); /* non-NULL even for no pixels */
        for (uint64_t k = 0; k < pixels; ++k) {
            const double w = weight(q->seed, first + k);
            if (wd == GPUHIST_F32) {
                float f = (float)w;
                memcpy((char *)d->weights + k * 4, &f, 4);
            } else {
                memcpy((char *)d->weights + k * 8, &w, 8);
            }
        }
    }
}

static gpuhist_samples describe(const request *q, const data *d)
{
    gpuhist_samples s = gpuhist_samples_1d(d->samples, q->dtype, d->pixels);
    s.channels = q->channels;
    s.active_channels = q->active;
    s.location = GPUHIST_MEMORY_HOST;
    if (q->weighted) {
        s.weights = d->weights;
        s.weight_dtype = (gpuhist_dtype)(q->weighted - 1);
    }
    return s;
}

typedef struct outcome {
    gpuhist_result r;
    uint64_t *counts;
    double *edges, *sums, *squares;
} outcome;

static void alloc_outcome(const request *q, outcome *o)
{
    const size_t n = (size_t)q->spec.bins * q->active;
    o->counts = calloc(n, 8);
    o->edges = calloc(q->spec.bins + 1u, 8);
    o->sums = q->weighted ? calloc(n, 8) : NULL;
    o->squares = q->weighted && q->squares ? calloc(n, 8) : NULL;
    o->r = gpuhist_result_host(o->counts);
    o->r.edges = o->edges;
    o->r.sums = o->sums;
    o->r.sums_squared = o->squares;
}

static void free_outcome(outcome *o)
{
    free(o->counts);
    free(o->edges);
    free(o->sums);
    free(o->squares);
}

static void free_data(data *d)
{
    free(d->samples);
    free(d->weights);
}

/* One process: the whole data, or the rank's share. */
static int single(gpuhist_ctx *ctx, const request *q, const data *d, outcome *o)
{
    gpuhist_samples s = describe(q, d);
    alloc_outcome(q, o);
    gpuhist_status st = gpuhist_histogram(ctx, &s, &q->spec, &o->r);
    CHECK(st == GPUHIST_OK, "%s: one process: %s", q->name, gpuhist_last_error(ctx));
    return st == GPUHIST_OK;
}

static int same_bits(const double *a, const double *b, size_t n)
{
    return (a == NULL) == (b == NULL) && (!a || memcmp(a, b, n * sizeof *a) == 0);
}

static void compare(const request *q, const outcome *got, const outcome *want, const char *what)
{
    const size_t n = (size_t)q->spec.bins * q->active;
    CHECK(got->r.bins == want->r.bins && got->r.channels == want->r.channels,
          "%s: %s: shape %u x %u, wanted %u x %u", q->name, what, got->r.bins, got->r.channels,
          want->r.bins, want->r.channels);
    CHECK(memcmp(got->counts, want->counts, n * 8) == 0, "%s: %s: counts differ", q->name, what);
    CHECK(same_bits(got->edges, want->edges, q->spec.bins + 1u), "%s: %s: edges differ", q->name,
          what);
    for (uint32_t c = 0; c < q->active; ++c)
        CHECK(got->r.underflow[c] == want->r.underflow[c] &&
                  got->r.overflow[c] == want->r.overflow[c] && got->r.nan[c] == want->r.nan[c] &&
                  got->r.total[c] == want->r.total[c],
              "%s: %s: tallies of channel %u differ (total %llu, wanted %llu)", q->name, what, c,
              (unsigned long long)got->r.total[c], (unsigned long long)want->r.total[c]);
    CHECK(memcmp(&got->r.lower, &want->r.lower, 8) == 0 &&
              memcmp(&got->r.upper, &want->r.upper, 8) == 0 &&
              got->r.last_edge_inclusive == want->r.last_edge_inclusive,
          "%s: %s: range [%.17g, %.17g], wanted [%.17g, %.17g]", q->name, what, got->r.lower,
          got->r.upper, want->r.lower, want->r.upper);
    if (q->weighted) {
        CHECK(same_bits(got->sums, want->sums, n), "%s: %s: sums differ", q->name, what);
        CHECK(same_bits(got->squares, want->squares, n), "%s: %s: sums of squares differ",
              q->name, what);
    }
}

static void run_request(gpuhist_ctx *ctx, const request *q)
{
    const uint64_t first = q->pixels * (uint64_t)g_rank / (uint64_t)g_size;
    const uint64_t end = q->pixels * (uint64_t)(g_rank + 1) / (uint64_t)g_size;
    data whole, mine;
    make(q, 0, q->pixels, &whole);
    make(q, first, end - first, &mine);
    outcome want, got;
    if (!single(ctx, q, &whole, &want)) {
        free_data(&whole);
        free_data(&mine);
        free_outcome(&want);
        return;
    }
    alloc_outcome(q, &got);
    gpuhist_samples s = describe(q, &mine);
    gpuhist_status st;
    if (q->stream) {
        gpuhist_samples layout = s;
        layout.data = NULL;
        layout.count = 0;
        gpuhist_stream *gs = NULL;
        st = gpuhist_stream_begin(ctx, &layout, &q->spec, GPUHIST_MEMORY_HOST, &gs);
        CHECK(st == GPUHIST_OK, "%s: begin: %s", q->name, gpuhist_last_error(ctx));
        const size_t pb = gpuhist_dtype_size(q->dtype) * q->channels;
        const size_t wb = q->weighted == GPUHIST_F32 + 1 ? 4 : 8;
        for (uint64_t at = 0; st == GPUHIST_OK && at < mine.pixels; at += 7) {
            const uint64_t k = mine.pixels - at < 7 ? mine.pixels - at : 7;
            const char *p = (const char *)mine.samples + at * pb;
            st = q->weighted ? gpuhist_stream_feed_weighted(gs, p, (char *)mine.weights + at * wb, k)
                             : gpuhist_stream_feed(gs, p, k);
        }
        st = gpuhist_mpi_stream_finish(ctx, gs, MPI_COMM_WORLD, q->root, &layout, &q->spec, &got.r);
    } else {
        st = gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, q->root, &s, &q->spec, &got.r);
    }
    CHECK(st == GPUHIST_OK, "%s: mpi: %s (rank %d)", q->name, gpuhist_mpi_last_error(),
          gpuhist_mpi_error_rank());
    if (st == GPUHIST_OK) {
        if (g_rank == q->root) {
            compare(q, &got, &want, "root");
        } else {
            /* the rank's own part, with the common bins */
            request local = *q;
            if (q->spec.auto_range)
                local.spec = gpuhist_bins_even(q->spec.bins, want.r.lower, want.r.upper),
                local.spec.last_edge_inclusive = 1, local.spec.outliers = q->spec.outliers;
            outcome part;
            if (single(ctx, &local, &mine, &part))
                compare(&local, &got, &part, "own part");
            free_outcome(&part);
        }
    }
    free_outcome(&got);
    free_outcome(&want);
    free_data(&whole);
    free_data(&mine);
}

/* Every rank must get `want` and the same message, from rank `from`. */
static void expect_failure(gpuhist_status st, gpuhist_status want, int from, const char *needle,
                           const char *what)
{
    CHECK(st == want, "%s: status %d, wanted %d (%s)", what, (int)st, (int)want,
          gpuhist_mpi_last_error());
    CHECK(gpuhist_mpi_error_rank() == from, "%s: error rank %d, wanted %d", what,
          gpuhist_mpi_error_rank(), from);
    CHECK(strstr(gpuhist_mpi_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", what,
          gpuhist_mpi_last_error(), needle);
    /* the same message on every rank: compare with rank 0's */
    char mine[512], root[512];
    snprintf(mine, sizeof mine, "%s", gpuhist_mpi_last_error());
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(strcmp(mine, root) == 0, "%s: message '%s' differs from rank 0's '%s'", what, mine,
          root);
}

static void errors(gpuhist_ctx *ctx)
{
    double x[4] = {1, 2, 3, 4};
    uint64_t counts[16];
    double sums[16];
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, 4);
    gpuhist_result r = gpuhist_result_host(counts);
    const int last = g_size - 1;

    /* the last rank asks for 0 bins: its validation fails, everyone hears it */
    gpuhist_bin_spec b = gpuhist_bins_even(g_rank == last ? 0 : 4, 0.0, 4.0);
    expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r),
                   GPUHIST_ERROR_INVALID_ARGUMENT, last, "bins", "bad spec on the last rank");

    /* with auto range, the last rank's min/max fails (no data): before the min/max exchange */
    b = gpuhist_bins_auto(4);
    s.data = g_rank == last ? NULL : x;
    expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r),
                   GPUHIST_ERROR_INVALID_ARGUMENT, last, "samples.data",
                   "no data on the last rank, auto range");
    s.data = x;

    /* every rank fails: the lowest one's message */
    s.data = NULL;
    b = gpuhist_bins_even(4, 0.0, 4.0);
    expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r),
                   GPUHIST_ERROR_INVALID_ARGUMENT, 0, "samples.data", "NULL data everywhere");
    s.data = x;

    /* a root that is not a rank */
    expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, g_size, &s, &b, &r),
                   GPUHIST_ERROR_INVALID_ARGUMENT, 0, "root", "root out of range");

    /* counts in device memory are refused */
    r.counts_location = GPUHIST_MEMORY_DEVICE;
    expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r),
                   GPUHIST_ERROR_UNSUPPORTED, 0, "counts_location", "device counts");
    r.counts_location = GPUHIST_MEMORY_HOST;

    if (g_size > 1) {
        /* the ranks disagree on the bins, or on the auto range: refused, no hang */
        b = gpuhist_bins_even(g_rank == last ? 3 : 4, 0.0, 4.0);
        expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r),
                       GPUHIST_ERROR_INVALID_ARGUMENT, 0, "number of bins", "bins disagree");
        b = g_rank == last ? gpuhist_bins_auto(4) : gpuhist_bins_even(4, 0.0, 4.0);
        gpuhist_status st = gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r);
        CHECK(st == GPUHIST_ERROR_INVALID_ARGUMENT, "auto range on one rank only: status %d (%s)",
              (int)st, gpuhist_mpi_last_error());
        /* weights on some ranks only */
        double w[4] = {1, 1, 1, 1};
        gpuhist_samples sw = s;
        sw.weights = g_rank == last ? NULL : w;
        sw.weight_dtype = GPUHIST_F64;
        r.sums = g_rank == last ? NULL : sums;
        b = gpuhist_bins_even(4, 0.0, 4.0);
        expect_failure(gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &sw, &b, &r),
                       GPUHIST_ERROR_INVALID_ARGUMENT, 0, "weights", "weights disagree");
        r.sums = NULL;
    }

    /* a stream: the last rank failed before the merge and has none */
    gpuhist_samples layout = gpuhist_samples_1d(NULL, GPUHIST_F64, 0);
    b = gpuhist_bins_even(4, 0.0, 4.0);
    gpuhist_stream *gs = NULL;
    if (g_rank != last) {
        CHECK(gpuhist_stream_begin(ctx, &layout, &b, GPUHIST_MEMORY_HOST, &gs) == GPUHIST_OK,
              "begin: %s", gpuhist_last_error(ctx));
        gpuhist_stream_feed(gs, x, 4);
    }
    expect_failure(gpuhist_mpi_stream_finish(ctx, gs, MPI_COMM_WORLD, 0, &layout, &b, &r),
                   GPUHIST_ERROR_INVALID_ARGUMENT, last, "no stream", "a rank without a stream");
    /* the context is free again (the stream was freed on every rank) */
    gpuhist_status st = gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r);
    CHECK(st == GPUHIST_OK, "after the failures: %s", gpuhist_mpi_last_error());
    CHECK(gpuhist_mpi_error_rank() == -1 && gpuhist_mpi_last_error()[0] == 0,
          "a success leaves the message empty");
    if (g_rank == 0)
        CHECK(r.total[0] == 4u * (uint64_t)g_size, "after the failures: total %llu",
              (unsigned long long)r.total[0]);
}

static void minmax(gpuhist_ctx *ctx)
{
    /* rank r holds r + 1 values -r .. 0 .. r*10; the last rank holds only NaN */
    double x[8];
    int n = 0;
    if (g_rank == g_size - 1 && g_size > 1) {
        x[n++] = NAN;
    } else {
        x[n++] = -(double)g_rank;
        x[n++] = 10.0 * g_rank;
    }
    gpuhist_samples s = gpuhist_samples_1d(x, GPUHIST_F64, (uint64_t)n);
    double lo = 1, hi = 1;
    int found = 0;
    gpuhist_status st = gpuhist_mpi_minmax(ctx, MPI_COMM_WORLD, &s, &lo, &hi, &found);
    const int top = g_size > 1 ? g_size - 2 : 0;
    CHECK(st == GPUHIST_OK && found && lo == -(double)top && hi == 10.0 * top,
          "minmax: [%g, %g] found %d, wanted [%d, %d]", lo, hi, found, -top, 10 * top);
    /* nothing anywhere */
    s.count = 0;
    st = gpuhist_mpi_minmax(ctx, MPI_COMM_WORLD, &s, &lo, &hi, &found);
    CHECK(st == GPUHIST_OK && !found, "minmax of nothing: found %d", found);
    /* merge of values found elsewhere: -0.0 and 0.0 agree on 0.0 */
    lo = g_rank % 2 ? -0.0 : 0.0;
    hi = lo;
    found = 1;
    st = gpuhist_mpi_minmax_merge(MPI_COMM_WORLD, &lo, &hi, &found);
    CHECK(st == GPUHIST_OK && found && lo == 0.0 && !signbit(lo) && hi == 0.0 && !signbit(hi),
          "merge of zeros: [%g, %g]", lo, hi);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "rank %d: no CPU context\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    gpuhist_set_threads(ctx, 1);

    static const double e[] = {-2.5, -1.0, 0.0, 0.25, 1.0, 4.0};
    request qs[] = {
        {"f64 auto", GPUHIST_F64, 1001, 1, 1, gpuhist_bins_auto(17), {0}, 0, 0, 0, 0, 1},
        {"f64 auto, fewer pixels than ranks", GPUHIST_F64, 2, 1, 1, gpuhist_bins_auto(5), {0}, 0,
         0, 0, 0, 2},
        {"f64 auto, no pixels", GPUHIST_F64, 0, 1, 1, gpuhist_bins_auto(3), {0}, 0, 0, 0, 0, 3},
        {"f32 even, 3 channels, 2 histogrammed", GPUHIST_F32, 997, 3, 2,
         gpuhist_bins_even(10, -1.0, 2.0), {0}, 0, 0, 0, 0, 4},
        {"f64 edges, clamp", GPUHIST_F64, 1003, 1, 1, gpuhist_bins_edges(5, e), {0}, 0, 0, 0, 0,
         5},
        {"i32 integer, root last", GPUHIST_I32, 999, 1, 1, gpuhist_bins_integer(30, -12), {0}, 0,
         0, -1, 0, 6},
        {"u8 integer", GPUHIST_U8, 4099, 1, 1, gpuhist_bins_integer(256, 0), {0}, 0, 0, 0, 0, 7},
        {"f64 weights f64, squares, auto", GPUHIST_F64, 1009, 1, 1, gpuhist_bins_auto(9), {0},
         GPUHIST_F64 + 1, 1, 0, 0, 8},
        {"f64 weights f64, squares, clamp, 2 channels", GPUHIST_F64, 1013, 2, 2,
         gpuhist_bins_even(6, -1.0, 1.0), {0}, GPUHIST_F64 + 1, 1, 0, 0, 9},
        {"f32 weights f32, root last", GPUHIST_F32, 1019, 1, 1, gpuhist_bins_even(8, -2.0, 5.0),
         {0}, GPUHIST_F32 + 1, 0, -1, 0, 10},
        {"stream f32 even", GPUHIST_F32, 1021, 1, 1, gpuhist_bins_even(12, -3.0, 6.0), {0}, 0, 0,
         0, 1, 11},
        {"stream f64 weights, squares, 3 channels", GPUHIST_F64, 1031, 3, 3,
         gpuhist_bins_even(7, -2.0, 4.0), {0}, GPUHIST_F64 + 1, 1, 0, 1, 12},
        {"stream, fewer pixels than ranks", GPUHIST_F64, 1, 1, 1, gpuhist_bins_even(4, 0.0, 1.0),
         {0}, GPUHIST_F64 + 1, 1, -1, 1, 13},
        /* a state of 5.5 MB: 5003 slots x 2 channels x (69 + 69) words */
        {"f64 weights, 5000 bins, 2 channels, squares", GPUHIST_F64, 20011, 2, 2,
         gpuhist_bins_even(5000, -3.0, 6.0), {0}, GPUHIST_F64 + 1, 1, 0, 0, 14},
    };
    qs[4].spec.outliers = GPUHIST_OUTLIERS_CLAMP;
    qs[8].spec.outliers = GPUHIST_OUTLIERS_CLAMP;
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; ++i) {
        if (qs[i].root < 0)
            qs[i].root = g_size - 1;
        run_request(ctx, &qs[i]);
    }
    minmax(ctx);
    errors(ctx);
    gpuhist_destroy(ctx);

    int fails = 0;
    MPI_Allreduce(&g_fails, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0)
        printf("test_mpi_api: %d ranks, %d checks per rank, %d failures in all\n", g_size,
               g_checks, fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
