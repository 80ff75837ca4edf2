/*
 * inprocess_cpu.c - the in-process counting time of a file's data on the CPU backend, for the
 * end-to-end CPU target (the command's wall time against counting alone): the file is read into
 * memory first (not timed), then gpuhist_histogram runs on it; median of 5 after a warm-up, in
 * wall seconds and in CPU seconds of the process (all its threads: the counting's cost, which a
 * loaded machine does not inflate as much as the wall time).
 *
 * usage: gpuhist-inprocess-cpu FILE TYPE BINS LO HI   (TYPE u8 with BINS 0: one bin per value)
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    gpuhist_dtype t;
    if (argc < 6 || !gpuhist_dtype_parse(argv[2], &t)) {
        fprintf(stderr, "usage: %s FILE TYPE BINS LO HI\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 1;
    }
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 1;
    }
    fclose(f);
    uint32_t bins = (uint32_t)atol(argv[3]);
    gpuhist_bin_spec b = bins ? gpuhist_bins_even(bins, atof(argv[4]), atof(argv[5]))
                              : gpuhist_bins_integer(256, 0);
    if (!bins)
        bins = 256;
    uint64_t *counts = malloc(bins * sizeof *counts);
    gpuhist_ctx *ctx;
    if (!counts || gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK)
        return 1;
    gpuhist_samples s = gpuhist_samples_1d(buf, t, (uint64_t)size / gpuhist_dtype_size(t));
    double times[6], cpu[6];
    const char *strategy = "?";
    for (int i = 0; i < 6; ++i) {
        gpuhist_result r = gpuhist_result_host(counts);
        double t0 = now(), c0 = cpu_now();
        if (gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK) {
            fprintf(stderr, "%s\n", gpuhist_last_error(ctx));
            return 1;
        }
        times[i] = now() - t0;
        cpu[i] = cpu_now() - c0;
        strategy = r.strategy;
    }
    qsort(times + 1, 5, sizeof times[0], cmp);
    qsort(cpu + 1, 5, sizeof cpu[0], cmp);
    printf("in-process counting: %.4f s = %.2f GB/s (%s, %s, median of 5), %.4f CPU-s\n",
           times[3], (double)size / times[3] / 1e9, strategy, gpuhist_device_name(ctx), cpu[3]);
    gpuhist_destroy(ctx);
    free(counts);
    free(buf);
    return 0;
}
