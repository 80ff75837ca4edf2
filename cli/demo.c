/*
 * demo.c - `gpuhist demo`: the main job on built-in data, so a newcomer sees it work.
 *
 * It generates a synthetic 8-bit "image" (default 64 MiB, bell-shaped values: the mean of four
 * uniform bytes) and a float32 signal (two overlapping peaks), histograms them with the chosen
 * backend (auto by default: CUDA when a GPU is usable, else the CPU), prints the tables (with bars
 * when standard output is a terminal, like the command's tables) and what ran, and checks every
 * count against the cpu-reference strategy. The data come from a fixed-seed generator, so every
 * run and every machine sees the same numbers.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D_BACKEND = 1, D_DEVICE, D_STRATEGY, D_THREADS, D_SIZE, D_VERBOSE, D_HELP };

static const cli_optdef demo_defs[] = {
    {"backend", 'B', 1, D_BACKEND}, {"device", 0, 1, D_DEVICE}, {"strategy", 's', 1, D_STRATEGY},
    {"threads", 'j', 1, D_THREADS}, {"size", 0, 1, D_SIZE},     {"verbose", 'v', 0, D_VERBOSE},
    {"help", 'h', 0, D_HELP},       {NULL, 0, 0, 0},
};

static const char demo_usage[] =
    "usage: gpuhist demo [OPTIONS]\n"
    "Histogram built-in data (a synthetic 8-bit image and a float32 signal), print the tables,\n"
    "what ran and how fast, and check the counts against the cpu-reference strategy.\n"
    "  -B, --backend B     auto (default) | cuda | opencl | cpu\n"
    "      --device N      device number of the backend\n"
    "  -s, --strategy S    force a strategy (see gpuhist --list-strategies)\n"
    "  -j, --threads N     CPU threads (default: all cores)\n"
    "      --size MIB      size of each data set in MiB (default 64)\n"
    "  -v, --verbose       also print the device list note\n";

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    /* xorshift64*: fast, fixed seed, plenty for synthetic data. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static double rng_unit(void)
{
    return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct demo_job {
    const char *title;
    gpuhist_samples samples;
    gpuhist_bin_spec spec;
    double bytes;
    int show_table;
    /* Instead of a second cpu-reference pass: the expected counts, from an already checked
     * finer histogram (NULL = compare with cpu-reference). */
    const uint64_t *expected;
    const char *expected_from;
    uint64_t *keep;  /* receives a copy of the counts (bins entries), or NULL */
} demo_job;

/* `columns` > 0: draw bars that wide (standard output is a terminal); 0: no bars. */
static int run_job(gpuhist_ctx *ctx, gpuhist_ctx *ref, const demo_job *job, int columns)
{
    uint32_t bins = job->spec.bins;
    uint64_t *counts = calloc(bins, sizeof *counts);
    uint64_t *ref_counts = calloc(bins, sizeof *ref_counts);
    double *edges = malloc((bins + 1) * sizeof *edges);
    int rc = CLI_EXIT_OK;
    if (!counts || !ref_counts || !edges) {
        rc = cli_error(CLI_EXIT_FAIL, "demo: out of memory");
        goto done;
    }
    gpuhist_result r = gpuhist_result_host(counts);
    r.edges = edges;
    if (gpuhist_histogram(ctx, &job->samples, &job->spec, &r) != GPUHIST_OK) {
        rc = cli_error(CLI_EXIT_FAIL, "demo: %s: %s", job->title, gpuhist_last_error(ctx));
        goto done;
    }
    gpuhist_result rr = gpuhist_result_host(ref_counts);
    int same;
    if (job->expected) {
        same = memcmp(counts, job->expected, bins * sizeof *counts) == 0 &&
               r.total[0] == job->samples.count && r.underflow[0] == 0 && r.overflow[0] == 0;
    } else {
        if (gpuhist_histogram(ref, &job->samples, &job->spec, &rr) != GPUHIST_OK) {
            rc = cli_error(CLI_EXIT_FAIL, "demo: cpu-reference: %s", gpuhist_last_error(ref));
            goto done;
        }
        same = memcmp(counts, ref_counts, bins * sizeof *counts) == 0 &&
               r.underflow[0] == rr.underflow[0] && r.overflow[0] == rr.overflow[0] &&
               r.nan[0] == rr.nan[0] && r.total[0] == rr.total[0];
    }
    if (job->keep)
        memcpy(job->keep, counts, bins * sizeof *counts);

    printf("\n== %s\n", job->title);
    if (job->show_table) {
        cli_histogram h = {&r, counts, edges, job->samples.dtype, job->spec.kind, 0, NULL, NULL,
                           NULL, NULL};
        cli_write_histogram(stdout, CLI_FMT_TABLE, &h, columns > 0, columns > 0 ? columns : 80);
    }
    printf("ran on %s (%s), strategy %s: %.3f ms, %.2f GB/s\n", gpuhist_backend_name(r.backend),
           gpuhist_device_name(ctx), r.strategy ? r.strategy : "?", r.seconds * 1e3,
           r.seconds > 0 ? job->bytes / r.seconds / 1e9 : 0.0);
    if (same && job->expected) {
        printf("check: all %u bins equal %s\n", bins, job->expected_from);
    } else if (same) {
        printf("check: all %u bins and the underflow/overflow/nan/total counts equal "
               "cpu-reference's (%.3f ms)\n",
               bins, rr.seconds * 1e3);
    } else {
        rc = cli_error(CLI_EXIT_FAIL, "demo: %s: counts differ from %s (a bug: please report "
                       "it with the output of gpuhist --version)",
                       job->title, job->expected ? job->expected_from : "cpu-reference");
    }
done:
    free(counts);
    free(ref_counts);
    free(edges);
    return rc;
}

int cli_demo(int argc, char **argv)
{
    gpuhist_backend backend = GPUHIST_BACKEND_AUTO;
    int device = -1, threads = 0, verbose = 0;
    const char *strategy = NULL;
    uint64_t mib = 64, u;
    cli_getopt g;
    cli_getopt_init(&g, argc, argv);
    for (;;) {
        int id = cli_getopt_next(&g, demo_defs);
        if (id == CLI_OPT_END)
            break;
        if (id == CLI_OPT_ERROR)
            return CLI_EXIT_USAGE;
        switch (id) {
        case CLI_OPT_POSITIONAL:
            return cli_error(CLI_EXIT_USAGE, "demo takes no file ('%s'); see gpuhist demo --help",
                             g.arg);
        case D_BACKEND:
            if (!gpuhist_backend_parse(g.arg, &backend))
                return cli_error(CLI_EXIT_USAGE, "%s: unknown backend '%s' (auto cuda opencl cpu)",
                                 g.shown, g.arg);
            break;
        case D_DEVICE:
            if (!cli_parse_u64(g.arg, &u) || u > 4096)
                return cli_error(CLI_EXIT_USAGE, "%s: expected a device number, got '%s'", g.shown,
                                 g.arg);
            device = (int)u;
            break;
        case D_STRATEGY:
            strategy = g.arg;
            break;
        case D_THREADS:
            if (!cli_parse_u64(g.arg, &u) || u > 65536)
                return cli_error(CLI_EXIT_USAGE, "%s: expected a number of threads, got '%s'",
                                 g.shown, g.arg);
            threads = (int)u;
            break;
        case D_SIZE:
            if (!cli_parse_u64(g.arg, &u) || u < 1 || u > 65536)
                return cli_error(CLI_EXIT_USAGE, "%s: expected MiB from 1 to 65536, got '%s'",
                                 g.shown, g.arg);
            mib = u;
            break;
        case D_VERBOSE:
            verbose = 1;
            break;
        case D_HELP:
            fputs(demo_usage, stdout);
            return CLI_EXIT_OK;
        }
    }

    gpuhist_ctx *ctx = NULL, *ref = NULL;
    gpuhist_status st = device >= 0 ? gpuhist_create_on(&ctx, backend, device)
                                    : gpuhist_create(&ctx, backend);
    if (st == GPUHIST_ERROR_NO_DEVICE && device >= 0 && gpuhist_backend_compiled(backend))
        return cli_error(CLI_EXIT_FAIL, "demo: backend %s: no device %d (see gpuhist "
                         "--list-devices)", gpuhist_backend_name(backend), device);
    if (st != GPUHIST_OK)
        return cli_error(CLI_EXIT_FAIL, "demo: backend %s: %s%s", gpuhist_backend_name(backend),
                         gpuhist_status_string(st),
                         gpuhist_backend_compiled(backend) ? "" : " (not compiled into this build)");
    /* AUTO falls back to the CPU when CUDA cannot open the device, and the CPU is device 0 only:
     * a device that does not exist must not pass unnoticed. */
    if (device > 0 && backend == GPUHIST_BACKEND_AUTO &&
        gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU) {
        const char *note = gpuhist_backend_note(ctx);
        int rc = cli_error(CLI_EXIT_FAIL,
                           "demo: --device %d: no such device (%s, which has only device 0; see "
                           "gpuhist --list-devices)",
                           device, note && *note ? note : "auto uses the CPU");
        gpuhist_destroy(ctx);
        return rc;
    }
    if (threads)
        gpuhist_set_threads(ctx, threads);
    if (strategy && gpuhist_set_strategy(ctx, strategy) != GPUHIST_OK) {
        int rc = cli_error(CLI_EXIT_USAGE, "demo: --strategy %s: %s", strategy,
                           gpuhist_last_error(ctx));
        gpuhist_destroy(ctx);
        return rc;
    }
    if (gpuhist_create(&ref, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(ref, "cpu-reference") != GPUHIST_OK) {
        gpuhist_destroy(ctx);
        gpuhist_destroy(ref);
        return cli_error(CLI_EXIT_FAIL, "demo: cannot create the cpu-reference context");
    }

    size_t bytes = (size_t)mib << 20;
    unsigned char *image = malloc(bytes);
    float *signal = malloc(bytes);
    if (!image || !signal) {
        free(image);
        free(signal);
        gpuhist_destroy(ctx);
        gpuhist_destroy(ref);
        return cli_error(CLI_EXIT_FAIL, "demo: out of memory for 2 x %llu MiB",
                         (unsigned long long)mib);
    }
    double t0 = cli_now();
    /* Bell-shaped pixels: the mean of four uniform bytes (Irwin-Hall), two pixels per draw. */
    for (size_t i = 0; i + 1 < bytes; i += 2) {
        uint64_t x = rng_next();
        unsigned a = (unsigned)((x & 0xff) + (x >> 8 & 0xff) + (x >> 16 & 0xff) + (x >> 24 & 0xff));
        unsigned b = (unsigned)((x >> 32 & 0xff) + (x >> 40 & 0xff) + (x >> 48 & 0xff) +
                                (x >> 56 & 0xff));
        image[i] = (unsigned char)(a >> 2);
        image[i + 1] = (unsigned char)(b >> 2);
    }
    if (bytes & 1)
        image[bytes - 1] = 128;
    /* Two peaks: 70 % around 2.0 (sd 0.5), 30 % around 4.5 (sd 0.8); Box-Muller pairs. */
    size_t nf = bytes / sizeof(float);
    for (size_t i = 0; i < nf; i += 2) {
        double u1 = rng_unit(), u2 = rng_unit();
        double rad = sqrt(-2.0 * log(1.0 - u1));
        double z0 = rad * cos(6.283185307179586 * u2), z1 = rad * sin(6.283185307179586 * u2);
        signal[i] = (float)(rng_unit() < 0.7 ? 2.0 + 0.5 * z0 : 4.5 + 0.8 * z0);
        if (i + 1 < nf)
            signal[i + 1] = (float)(rng_unit() < 0.7 ? 2.0 + 0.5 * z1 : 4.5 + 0.8 * z1);
    }
    double gen = cli_now() - t0;

    char sz[32];
    cli_format_bytes(sz, sizeof sz, (double)bytes);
    printf("gpuhist %s demo: two built-in data sets of %s each (generated in %.2f s)\n",
           gpuhist_version(), sz, gen);
    printf("backend %s -> %s on %s\n", gpuhist_backend_name(backend),
           gpuhist_backend_name(gpuhist_context_backend(ctx)), gpuhist_device_name(ctx));
    const char *note = gpuhist_backend_note(ctx);
    if (note && *note)
        printf("note: %s\n", note);
    if (verbose) {
        static char list[8192];
        list[0] = 0;
        if (gpuhist_list_devices(gpuhist_context_backend(ctx), list, sizeof list) == GPUHIST_OK)
            printf("devices:\n%s", list);
    }

    int columns = cli_isatty(stdout) ? cli_terminal_columns() : 0;
    demo_job jobs[3];
    memset(jobs, 0, sizeof jobs);
    char t0s[160], t1s[160], t2s[160];
    snprintf(t0s, sizeof t0s,
             "8-bit image, %s (bell-shaped pixels), 256 bins: one per value, the CLI's default", sz);
    jobs[0].title = t0s;
    jobs[0].samples = gpuhist_samples_1d(image, GPUHIST_U8, bytes);
    jobs[0].spec = gpuhist_bins_integer(256, 0);
    jobs[0].bytes = (double)bytes;
    snprintf(t1s, sizeof t1s, "the same image, 32 even bins over [0, 256)");
    jobs[1].title = t1s;
    jobs[1].samples = jobs[0].samples;
    jobs[1].spec = gpuhist_bins_even(32, 0.0, 256.0);
    jobs[1].bytes = (double)bytes;
    jobs[1].show_table = 1;
    /* Bin i of 32 holds the values 8i .. 8i+7: the checked 256-bin counts, folded by 8. */
    uint64_t per_value[256], folded[32];
    jobs[0].keep = per_value;
    jobs[1].expected = folded;
    jobs[1].expected_from = "the checked 256-bin counts folded by 8";
    snprintf(t2s, sizeof t2s,
             "float32 signal, %llu samples (two peaks), 24 bins over the data's min:max (auto)",
             (unsigned long long)nf);
    jobs[2].title = t2s;
    jobs[2].samples = gpuhist_samples_1d(signal, GPUHIST_F32, nf);
    jobs[2].spec = gpuhist_bins_auto(24);
    jobs[2].bytes = (double)nf * sizeof(float);
    jobs[2].show_table = 1;

    int rc = CLI_EXIT_OK;
    for (int j = 0; j < 3 && rc == CLI_EXIT_OK; ++j) {
        rc = run_job(ctx, ref, &jobs[j], columns);
        if (j == 0)
            for (int b = 0; b < 32; ++b) {
                folded[b] = 0;
                for (int v = 0; v < 8; ++v)
                    folded[b] += per_value[8 * b + v];
            }
    }
    if (rc == CLI_EXIT_OK)
        printf("\nNext: gpuhist --help; gpuhist -t f32 -b 100 -r 0:1 data.bin; "
               "gpuhist --list-strategies\n");
    free(image);
    free(signal);
    gpuhist_destroy(ctx);
    gpuhist_destroy(ref);
    return rc;
}
