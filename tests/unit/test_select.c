/*
 * test_select.c - the automatic choice of strategy, plan by plan, against the policy stated here.
 *
 * The expected choice of each backend is written out below independently of the library's rule
 * tables (src/<backend>/registry_<backend>.*): the CPU's work-per-thread threshold, OpenCL's
 * order of preference, CUDA's rule list. Where a rule depends on whether a strategy can run a
 * plan, the library is asked by forcing that strategy by name (gpuhist_stream_begin refuses with
 * UNSUPPORTED "... cannot histogram ..." when it cannot), so the expectation holds on any device
 * (local or shared memory sizes differ). A deliberate change of a policy changes this file too.
 *
 * Plans: every dtype x bin kind (even over [0, 1), even over [-3e38, 3e38], explicit edges,
 * integer) x channel layouts (1, 2, 3, 4 interleaved; all or some histogrammed) x bin counts
 * (a fixed list, plus each side of the largest count that the size-limited strategies accept on
 * this device); the choice is read from result.strategy of an empty stream (chosen as for a
 * large input) and, on the CPU and CUDA, of a call on a few pixels; on the CPU also of calls
 * on each side of the work-per-thread threshold at 1, 2 and 3 threads.
 *
 * usage: test_select cpu|cuda|opencl [--list]   (--list prints every plan and its choice)
 * Exit 77 without a device.
 */
#include "gpuhist.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BINS ((1u << 22) + 1u)
#define D(t) (1u << (t))
#define ANY_DTYPE 0xFFFFFFFFu
#define ANY_KIND 7u
#define NO_LIMIT 0xFFFFFFFFu

static gpuhist_backend g_backend;
static int g_list;
static double *g_edges;       /* 0, 1, 2, ... MAX_BINS */
static uint64_t *g_counts;    /* MAX_BINS * 4 */
static unsigned char *g_zero; /* zero samples for the calls */
static unsigned long g_cases, g_invalid;

/* ---- plans ----------------------------------------------------------------------------------- */

typedef struct {
    uint32_t channels, mask; /* mask 0: all channels */
    const char *name;
} layout;

static const layout layouts[] = {
    {1, 0, "1 channel"},       {2, 0, "2 of 2"},       {2, 0x1, "channel 0 of 2"},
    {3, 0, "3 of 3"},          {3, 0x1, "channel 0 of 3"}, {4, 0, "4 of 4"},
    {4, 0x7, "channels 0-2 of 4"}, {4, 0x6, "channels 1-2 of 4"}, {4, 0x8, "channel 3 of 4"},
};
#define N_LAYOUTS (sizeof layouts / sizeof layouts[0])

enum { EVEN_UNIT, EVEN_WIDE, EDGES, INTEGER, N_SPECS };
static const char *const spec_names[N_SPECS] = {"even [0, 1)", "even [-3e38, 3e38]", "edges",
                                                "integer"};

static uint32_t active_of(const layout *l)
{
    if (!l->mask)
        return l->channels;
    uint32_t n = 0;
    for (uint32_t m = l->mask; m; m &= m - 1)
        ++n;
    return n;
}

static gpuhist_bin_spec make_spec(int spec, uint32_t bins)
{
    switch (spec) {
    case EVEN_UNIT: return gpuhist_bins_even(bins, 0.0, 1.0);
    case EVEN_WIDE: return gpuhist_bins_even(bins, -3.0e38, 3.0e38);
    case EDGES: return gpuhist_bins_edges(bins, g_edges);
    default: return gpuhist_bins_integer(bins, 0);
    }
}

static gpuhist_samples make_samples(gpuhist_dtype dtype, const layout *l, uint64_t pixels)
{
    gpuhist_samples s = gpuhist_samples_1d(pixels ? g_zero : NULL, dtype, pixels);
    s.channels = l->channels;
    s.channel_mask = l->mask;
    s.location = GPUHIST_MEMORY_HOST;
    return s;
}

/* ---- what the library does ------------------------------------------------------------------- */

/* 1: strategy `name` accepts the plan, 0: it refuses it, -1: the request is invalid whatever
 * the strategy (not reported: the limits search meets integer bins of float types), -2:
 * something else failed (reported). */
static int accepts(gpuhist_ctx *ctx, const char *name, const gpuhist_samples *s,
                   const gpuhist_bin_spec *spec)
{
    if (!CHECK_MSG(gpuhist_set_strategy(ctx, name) == GPUHIST_OK, "forcing %s: %s", name,
                   gpuhist_last_error(ctx)))
        return -2;
    gpuhist_stream *st = NULL;
    gpuhist_status rc = gpuhist_stream_begin(ctx, s, spec, GPUHIST_MEMORY_HOST, &st);
    gpuhist_set_strategy(ctx, "auto");
    if (rc == GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return 1;
    }
    if (rc == GPUHIST_ERROR_UNSUPPORTED && strstr(gpuhist_last_error(ctx), "cannot histogram"))
        return 0;
    if (rc == GPUHIST_ERROR_INVALID_ARGUMENT)
        return -1;
    CHECK_MSG(0, "forcing %s: %s: %s", name, gpuhist_status_string(rc), gpuhist_last_error(ctx));
    return -2;
}

/* The automatic choice for a stream of this layout (as for a large input), or for a call on
 * `pixels` zero pixels. NULL when the library refuses the request as invalid (not a question of
 * strategy: the bins do not fit the range or the type); "(failed)" on another failure. */
static const char *chosen(gpuhist_ctx *ctx, const gpuhist_samples *s, const gpuhist_bin_spec *spec,
                          int stream)
{
    gpuhist_result r = gpuhist_result_host(g_counts);
    gpuhist_status rc;
    if (stream) {
        gpuhist_stream *st = NULL;
        rc = gpuhist_stream_begin(ctx, s, spec, GPUHIST_MEMORY_HOST, &st);
        if (rc == GPUHIST_OK)
            rc = gpuhist_stream_finish(st, &r);
    } else {
        rc = gpuhist_histogram(ctx, s, spec, &r);
    }
    if (rc == GPUHIST_ERROR_INVALID_ARGUMENT)
        return NULL;
    if (!CHECK_MSG(rc == GPUHIST_OK, "auto: %s: %s", gpuhist_status_string(rc),
                   gpuhist_last_error(ctx)))
        return "(failed)";
    return r.strategy;
}

/* ---- the policies ---------------------------------------------------------------------------- */

/* A rule: strategy `name` for these dtypes, bin kinds and bin counts, if it accepts the plan. */
typedef struct {
    uint32_t dtypes, kinds, min_bins, max_bins;
    const char *name;
} rule;

/* CUDA: the first rule whose conditions hold and whose strategy accepts the plan; then the first
 * CUDA strategy of the registry that accepts it. */
static const rule cuda_rules[] = {
    /* device-resident calls of at most 2^22 samples only: never the host samples made here */
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-one-launch"},
    {D(GPUHIST_U8) | D(GPUHIST_I8), ANY_KIND, 1, NO_LIMIT, "cuda-byte-pairs"},
    {D(GPUHIST_U8) | D(GPUHIST_I8), ANY_KIND, 1, NO_LIMIT, "cuda-histogram256"},
    {D(GPUHIST_F16) | D(GPUHIST_BF16), D(GPUHIST_BINS_EVEN), 1, 256, "cuda-half-pairs"},
    {D(GPUHIST_U16) | D(GPUHIST_I16), ANY_KIND, 1, NO_LIMIT, "cuda-fast-packed16"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-fast-smem"},
    {D(GPUHIST_F32), D(GPUHIST_BINS_EVEN), 1, NO_LIMIT, "cuda-fast-packed16-f32"},
    {D(GPUHIST_I32) | D(GPUHIST_U32) | D(GPUHIST_I64) | D(GPUHIST_U64),
     D(GPUHIST_BINS_INTEGER), 1, NO_LIMIT, "cuda-fast-packed16-ids"},
    {D(GPUHIST_F32), D(GPUHIST_BINS_EVEN), 65537, 256u * 65536u, "cuda-two-pass"},
    {D(GPUHIST_I32) | D(GPUHIST_U32) | D(GPUHIST_I64) | D(GPUHIST_U64), D(GPUHIST_BINS_INTEGER),
     65537, 256u * 65536u, "cuda-two-pass"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-fast-global"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-block-shared"},
    {ANY_DTYPE, ANY_KIND, 1, 1u << 17, "cuda-multipass"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-sort-rle"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-global-atomic"},
    /* weighted plans (not generated here: every rule above takes the unweighted ones) */
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-weighted-smem"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cuda-weighted-global"},
};

/* OpenCL: block-shared while the histogram fits local memory, else local-atomic. */
static const rule opencl_rules[] = {
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "opencl-block-shared"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "opencl-local-atomic"},
    /* weighted plans (not generated here: the rules above take every unweighted plan) */
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "opencl-weighted-local"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "opencl-weighted-global"},
};

/* CPU: threads once every thread has 256 Ki samples and the bins are at most 2^22, else one
 * thread (cpu-reference only if neither accepts). */
static const rule cpu_threaded[] = {
    {ANY_DTYPE, ANY_KIND, 1, 1u << 22, "cpu-threads"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cpu-serial"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cpu-reference"},
};
static const rule cpu_single[] = {
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cpu-serial"},
    {ANY_DTYPE, ANY_KIND, 1, NO_LIMIT, "cpu-reference"},
};
#define CPU_SAMPLES_PER_THREAD 262144u

static const char *first_rule(gpuhist_ctx *ctx, const rule *rules, size_t n,
                              const gpuhist_samples *s, const gpuhist_bin_spec *spec)
{
    for (size_t i = 0; i < n; ++i) {
        const rule *r = &rules[i];
        if (!(r->dtypes & D(s->dtype)) || !(r->kinds & D(spec->kind)) || spec->bins < r->min_bins ||
            spec->bins > r->max_bins)
            continue;
        int a = accepts(ctx, r->name, s, spec);
        if (a < 0)
            return "(failed)";
        if (a)
            return r->name;
    }
    return NULL;
}

/* The expected choice; `samples` is the plan's pixels x histogrammed channels, `threads` the CPU
 * threads set on the context. */
static const char *expected(gpuhist_ctx *ctx, int threads, uint64_t samples,
                            const gpuhist_samples *s, const gpuhist_bin_spec *spec)
{
    const char *e;
    switch (g_backend) {
    case GPUHIST_BACKEND_CPU:
        if (threads > 1 && samples >= (uint64_t)threads * CPU_SAMPLES_PER_THREAD)
            e = first_rule(ctx, cpu_threaded, sizeof cpu_threaded / sizeof cpu_threaded[0], s,
                           spec);
        else
            e = first_rule(ctx, cpu_single, sizeof cpu_single / sizeof cpu_single[0], s, spec);
        return e ? e : "cpu-reference";
    case GPUHIST_BACKEND_OPENCL:
        e = first_rule(ctx, opencl_rules, sizeof opencl_rules / sizeof opencl_rules[0], s, spec);
        return e ? e : "opencl-local-atomic";
    default:
        e = first_rule(ctx, cuda_rules, sizeof cuda_rules / sizeof cuda_rules[0], s, spec);
        if (e)
            return e;
        for (size_t i = 0; i < gpuhist_strategy_count(); ++i) {
            gpuhist_strategy_desc d;
            if (gpuhist_strategy_info(i, &d) != GPUHIST_OK || d.backend != GPUHIST_BACKEND_CUDA)
                continue;
            int a = accepts(ctx, d.name, s, spec);
            if (a < 0)
                return "(failed)";
            if (a)
                return d.name;
        }
        return "(none)";
    }
}

/* ---- the cases ------------------------------------------------------------------------------- */

static void check_choice(gpuhist_ctx *ctx, int threads, gpuhist_dtype dtype, const layout *l,
                         int spec_i, uint32_t bins, uint64_t pixels, int stream)
{
    gpuhist_samples s = make_samples(dtype, l, stream ? 0 : pixels);
    gpuhist_bin_spec spec = make_spec(spec_i, bins);
    check_context("%s, %d thread(s), %s, %s, %u bins, %s, %s", gpuhist_backend_name(g_backend),
                  threads, gpuhist_dtype_name(dtype), l->name, bins, spec_names[spec_i],
                  stream ? "stream" : "call");
    const char *got = chosen(ctx, &s, &spec, stream);
    if (g_list)
        printf("%s %u %-3s %-18s %-18s %8u %-6s %10llu -> %s\n", gpuhist_backend_name(g_backend),
               threads, gpuhist_dtype_name(dtype), l->name, spec_names[spec_i], bins,
               stream ? "stream" : "call", (unsigned long long)pixels, got ? got : "(invalid)");
    if (!got) {
        ++g_invalid;
        return;
    }
    ++g_cases;
    /* a stream is chosen for as a large input: 2^28 pixels */
    const uint64_t samples = (stream ? (uint64_t)1 << 28 : pixels) * active_of(l);
    const char *want = expected(ctx, threads, samples, &s, &spec);
    CHECK_EQ_STR(got, want);
}

static int contains(const uint32_t *v, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; ++i)
        if (v[i] == x)
            return 1;
    return 0;
}

/* The largest bin count strategy `name` accepts for this dtype, layout and bin kind, when it
 * accepts 1 bin and not MAX_BINS (0 otherwise); acceptance is taken as monotone in the bins. */
static uint32_t largest_accepted(gpuhist_ctx *ctx, const char *name, gpuhist_dtype dtype,
                                 const layout *l, int spec_i)
{
    gpuhist_samples s = make_samples(dtype, l, 0);
    gpuhist_bin_spec lo_spec = make_spec(spec_i, 1), hi_spec = make_spec(spec_i, MAX_BINS);
    if (accepts(ctx, name, &s, &lo_spec) != 1 || accepts(ctx, name, &s, &hi_spec) != 0)
        return 0;
    uint32_t lo = 1, hi = MAX_BINS; /* lo accepted, hi refused */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        gpuhist_bin_spec sp = make_spec(spec_i, mid);
        int a = accepts(ctx, name, &s, &sp);
        if (a < 0)
            return 0;
        if (a)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static const gpuhist_dtype all_dtypes[] = {GPUHIST_U8,  GPUHIST_I8,  GPUHIST_U16, GPUHIST_I16,
                                           GPUHIST_U32, GPUHIST_I32, GPUHIST_U64, GPUHIST_I64,
                                           GPUHIST_F32, GPUHIST_F64};
#define N_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

/* Every dtype x bin kind x layout x bin count of the list and of this device's limits. */
static void check_plans(gpuhist_ctx *ctx, int threads)
{
    static const uint32_t fixed[] = {1,     2,     100,   255,    256,    257,    1000,
                                     1021,  1024,  4093,  4096,   8189,   8192,   12000,
                                     16384, 32768, 57000, 65533,  65536,  65537,  100000,
                                     115000, 131072, 131073, 262144};
    /* strategies whose acceptance depends on the bins and the device */
    static const char *const limited_cuda[] = {"cuda-block-shared", "cuda-fast-smem",
                                               "cuda-fast-packed16-f32", NULL};
    static const char *const limited_opencl[] = {"opencl-block-shared", NULL};
    const char *const *limited = g_backend == GPUHIST_BACKEND_CUDA     ? limited_cuda
                                 : g_backend == GPUHIST_BACKEND_OPENCL ? limited_opencl
                                                                       : NULL;
    static const gpuhist_dtype probe_dtypes[] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_F32,
                                                 GPUHIST_F64};
    for (size_t li = 0; li < N_LAYOUTS; ++li) {
        const layout *l = &layouts[li];
        uint32_t bins[sizeof fixed / sizeof fixed[0] + 256];
        size_t nb = 0;
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
            bins[nb++] = fixed[i];
        for (size_t k = 0; limited && limited[k]; ++k)
            for (size_t d = 0; d < sizeof probe_dtypes / sizeof probe_dtypes[0]; ++d)
                for (int sp = 0; sp < N_SPECS; ++sp) {
                    uint32_t b = largest_accepted(ctx, limited[k], probe_dtypes[d], l, sp);
                    for (uint32_t x = b; b && x <= b + 1 && nb + 2 <= sizeof bins / sizeof bins[0];
                         ++x)
                        if (!contains(bins, nb, x))
                            bins[nb++] = x;
                }
        for (size_t d = 0; d < N_DTYPES; ++d)
            for (int sp = 0; sp < N_SPECS; ++sp)
                for (size_t b = 0; b < nb; ++b) {
                    check_choice(ctx, threads, all_dtypes[d], l, sp, bins[b], 0, 1);
                    /* a call on a few pixels (OpenCL: a kernel run each, so on small plans only) */
                    if (g_backend != GPUHIST_BACKEND_OPENCL ||
                        (bins[b] <= 4096 && (li == 0 || li == 5)))
                        check_choice(ctx, threads, all_dtypes[d], l, sp, bins[b], 5, 0);
                }
    }
    /* Many bins: one channel, four of four for f32; even and integer bins. */
    static const uint32_t many[] = {1u << 20, 28u * 65536u, 28u * 65536u + 1u, 1u << 22,
                                    (1u << 22) + 1u};
    static const gpuhist_dtype many_dtypes[] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_I64, GPUHIST_F32,
                                                GPUHIST_F64};
    for (size_t b = 0; b < sizeof many / sizeof many[0]; ++b) {
        for (size_t d = 0; d < sizeof many_dtypes / sizeof many_dtypes[0]; ++d) {
            check_choice(ctx, threads, many_dtypes[d], &layouts[0], EVEN_UNIT, many[b], 0, 1);
            check_choice(ctx, threads, many_dtypes[d], &layouts[0], INTEGER, many[b], 0, 1);
        }
        check_choice(ctx, threads, GPUHIST_F32, &layouts[5], EVEN_UNIT, many[b], 0, 1);
        check_choice(ctx, threads, GPUHIST_F32, &layouts[0], EVEN_UNIT, many[b], 5, 0);
    }
}

/* CPU: calls on each side of `threads` x 256 Ki samples, at 1, 2 and 3 threads. */
static void check_cpu_sizes(gpuhist_ctx *ctx)
{
    for (int t = 1; t <= 3; ++t) {
        gpuhist_set_threads(ctx, t);
        const uint64_t need = (uint64_t)(t > 1 ? t : 2) * CPU_SAMPLES_PER_THREAD;
        for (size_t d = 0; d < N_DTYPES; ++d)
            for (size_t li = 0; li < N_LAYOUTS; ++li) {
                const layout *l = &layouts[li];
                if (li != 0 && li != 5 && li != 6)
                    continue;
                const uint32_t a = active_of(l);
                const uint64_t at = (need + a - 1) / a; /* the fewest pixels reaching `need` */
                check_choice(ctx, t, all_dtypes[d], l, EVEN_UNIT, 256, at - 1, 0);
                check_choice(ctx, t, all_dtypes[d], l, EVEN_UNIT, 256, at, 0);
                if (all_dtypes[d] == GPUHIST_U8 || all_dtypes[d] == GPUHIST_F32) {
                    check_choice(ctx, t, all_dtypes[d], l, INTEGER, 1u << 22, at, 0);
                    check_choice(ctx, t, all_dtypes[d], l, INTEGER, (1u << 22) + 1u, at, 0);
                }
            }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || !gpuhist_backend_parse(argv[1], &g_backend) ||
        g_backend == GPUHIST_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s cpu|cuda|opencl [--list]\n", argv[0]);
        return 2;
    }
    g_list = argc > 2 && strcmp(argv[2], "--list") == 0;
    gpuhist_ctx *ctx = NULL;
    gpuhist_status cs = gpuhist_create(&ctx, g_backend);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no %s device: skipped (%s)\n", argv[1], gpuhist_last_error(NULL));
        return 77;
    }
    if (cs != GPUHIST_OK) {
        fprintf(stderr, "cannot create a context: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    printf("selection test: backend %s (%s)\n", argv[1], gpuhist_device_name(ctx));

    g_edges = malloc(((size_t)MAX_BINS + 1) * sizeof *g_edges);
    g_counts = malloc((size_t)MAX_BINS * 4 * sizeof *g_counts);
    /* the CPU threshold calls: up to 3 x 256 Ki samples of 8 bytes in 4 channels */
    g_zero = calloc((size_t)3 * CPU_SAMPLES_PER_THREAD * 4, 8);
    if (!g_edges || !g_counts || !g_zero) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (uint32_t i = 0; i <= MAX_BINS; ++i)
        g_edges[i] = (double)i;

    if (g_backend == GPUHIST_BACKEND_CPU) {
        gpuhist_set_threads(ctx, 2);
        check_plans(ctx, 2);
        check_cpu_sizes(ctx);
    } else {
        check_plans(ctx, 0);
    }
    printf("%lu plans checked; %lu requests invalid (integer bins of float samples, too many "
           "bins for the range)\n",
           g_cases, g_invalid);
    gpuhist_destroy(ctx);
    free(g_edges);
    free(g_counts);
    free(g_zero);
    return check_exit();
}
