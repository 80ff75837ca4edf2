/*
 * scale_mpi.c - gpuhist-scale-mpi: device-resident data under MPI, one GPU per rank (the local
 * rank's GPU). Every rank holds the same N GiB on its GPU; gpuhist_mpi_histogram() counts each
 * part where it is and reduces the counts to rank 0. Rank 0 prints the median wall time (from a
 * barrier before the call to the end of the reduction) and the GB/s of all ranks' data, beside
 * the same call on one rank alone (MPI_COMM_SELF) in the same run. Not a test.
 *
 *   mpirun -n R gpuhist-scale-mpi [--gib N] [--reps K]
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"
#include "gpuhist_mpi.h"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Time `reps` calls over `comm` (after one to warm up); the median, on every rank. */
static double timed(gpuhist_ctx *ctx, MPI_Comm comm, const gpuhist_samples *s,
                    const gpuhist_bin_spec *b, uint64_t *counts, int reps)
{
    double t[64];
    for (int r = 0; r <= reps; ++r) {
        gpuhist_result res = gpuhist_result_host(counts);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        if (gpuhist_mpi_histogram(ctx, comm, 0, s, b, &res) != GPUHIST_OK) {
            fprintf(stderr, "gpuhist-scale-mpi: %s\n", gpuhist_mpi_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(comm);
        if (r > 0)
            t[r - 1] = MPI_Wtime() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    return t[reps / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double gib = 1.0;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--gib"))
            gib = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    }
    if (reps < 1 || reps > 63)
        reps = 5;
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    int ngpu = gpuhist_device_count(GPUHIST_BACKEND_CUDA);
    if (ngpu < 1) {
        if (rank == 0)
            printf("gpuhist-scale-mpi: no CUDA device: skipped\n");
        MPI_Finalize();
        return 77;
    }
    const int dev = local % ngpu;
    gpuhist_ctx *ctx = NULL;
    if (gpuhist_create_on(&ctx, GPUHIST_BACKEND_CUDA, dev) != GPUHIST_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, gpuhist_last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const size_t bytes = (size_t)(gib * (double)(1u << 30)) & ~(size_t)4095;
    unsigned char *host = malloc(bytes);
    uint64_t x = 7;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(host + i, &x, 8);
    }
    void *d = NULL;
    if (cudaSetDevice(dev) != cudaSuccess || cudaMalloc(&d, bytes) != cudaSuccess ||
        cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "rank %d: cannot place %zu bytes on GPU %d\n", rank, bytes, dev);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    gpuhist_samples s = gpuhist_samples_1d(d, GPUHIST_U8, bytes);
    gpuhist_bin_spec b = gpuhist_bins_even(256, 0.0, 256.0);
    uint64_t one[256], all[256];
    double t1 = 0;
    if (rank == 0) /* one rank alone, the same call */
        t1 = timed(ctx, MPI_COMM_SELF, &s, &b, one, reps);
    MPI_Barrier(MPI_COMM_WORLD);
    double tn = timed(ctx, MPI_COMM_WORLD, &s, &b, all, reps);
    if (rank == 0) {
        int same = 1;
        for (int i = 0; i < 256; ++i)
            same = same && all[i] == one[i] * (uint64_t)size;
        printf("mpi device-resident u8/256, %.1f GiB on each of %d ranks (%s): one rank %.3f ms "
               "= %.0f GB/s; %d ranks %.3f ms = %.0f GB/s; ratio %.2f; counts %s\n",
               gib, size, gpuhist_device_name(ctx), t1 * 1e3, (double)bytes / t1 / 1e9, size,
               tn * 1e3, (double)bytes * size / tn / 1e9,
               ((double)bytes * size / tn) / ((double)bytes / t1), same ? "equal" : "DIFFER");
    }
    cudaFree(d);
    free(host);
    gpuhist_destroy(ctx);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
