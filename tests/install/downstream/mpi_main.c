/* A tiny MPI program using the installed gpuhist_mpi: every rank histograms its own samples,
 * rank 0 checks the merged counts. */
#include <gpuhist.h>
#include <gpuhist_mpi.h>

#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const float data[] = {0.1f, 0.6f, 0.7f}; /* per rank: one in bin 0, two in bin 1 */
    gpuhist_samples s = gpuhist_samples_1d(data, GPUHIST_F32, 3);
    gpuhist_bin_spec b = gpuhist_bins_even(2, 0.0, 1.0);
    uint64_t counts[2];
    gpuhist_result r = gpuhist_result_host(counts);
    int ok = gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r) == GPUHIST_OK;
    if (rank == 0) {
        ok = ok && counts[0] == (uint64_t)size && counts[1] == 2u * (uint64_t)size;
        printf("downstream_mpi: %d ranks, counts %llu %llu: %s\n", size,
               (unsigned long long)counts[0], (unsigned long long)counts[1], ok ? "ok" : "WRONG");
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    gpuhist_destroy(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}
