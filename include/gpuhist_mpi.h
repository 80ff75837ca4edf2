/*
 * gpuhist_mpi.h - one exact histogram over the processes of an MPI communicator (the optional
 * gpuhist_mpi library, built when CMake finds MPI; link gpuhist::gpuhist_mpi).
 *
 * Every rank histograms its own samples with its own context (GPU or CPU), and the parts are
 * merged on a root rank: counts and tallies are added as 64-bit integers (MPI_UINT64_T, MPI_SUM),
 * weighted parts as their exact weight states (gpuhist.h, "Exact parts": a user-defined,
 * commutative MPI_Op that adds states with gpuhist_weight_state_add), so the root's counts,
 * tallies and weight sums have the same bits as one gpuhist_histogram() call over the
 * concatenation of the ranks' samples, whatever the number of ranks and however the data is
 * shared out. An automatic range is agreed first: each rank finds its finite min and max, an
 * MPI_Allreduce combines them, and every rank counts with the bins gpuhist_bins_from_minmax()
 * gives for the whole data.
 *
 *     gpuhist_ctx *ctx;                       // one per rank, e.g. on the rank's GPU
 *     gpuhist_create(&ctx, GPUHIST_BACKEND_AUTO);
 *     gpuhist_samples s = gpuhist_samples_1d(my_part, GPUHIST_F32, my_count);
 *     gpuhist_bin_spec b = gpuhist_bins_auto(256);
 *     gpuhist_result r = gpuhist_result_host(counts);
 *     if (gpuhist_mpi_histogram(ctx, MPI_COMM_WORLD, 0, &s, &b, &r) != GPUHIST_OK)
 *         fprintf(stderr, "rank %d: %s\n", gpuhist_mpi_error_rank(), gpuhist_mpi_last_error());
 *
 * Collective calls: every rank of `comm` makes the same call with the same arguments apart from
 * its samples and buffers (same root, bin spec, dtype, histogrammed channels, weighted or not,
 * weight type, squares or not, outlier policy); a difference in any of these that is seen is
 * refused on every rank (INVALID_ARGUMENT) instead of hanging.
 *
 * Errors: a step that can fail on one rank (bad arguments, the local count, memory) is followed
 * by an agreement (an MPI_Allreduce of who failed), so no rank waits in a collective operation
 * that another will never join: every rank returns the same status, and
 * gpuhist_mpi_last_error() gives, on every rank, the message of the lowest-numbered rank that
 * failed (gpuhist_mpi_error_rank() says which). Failures of MPI itself follow the
 * communicator's error handler (by default MPI_ERRORS_ARE_FATAL: the job is aborted).
 *
 * Results: the root's `result` is the whole histogram: counts, tallies (underflow, overflow,
 * nan, total), sums and sums of squares, edges, lower / upper, and seconds, the longest local
 * time of any rank plus the merge. On every other rank `result` describes that rank's own part:
 * its counts, tallies and sums as its local call computed them, with the common edges (the
 * same bins everywhere). With weights and result.weight_state given, the root's state is the
 * merged one, another rank's its own.
 * Limits: counts in host memory only (a device-memory result is refused: MPI reduces host
 * buffers); the samples may be anywhere the context takes them. Not thread-safe beyond MPI's
 * own level: calls on several threads need MPI_THREAD_MULTIPLE and distinct communicators.
 */
#ifndef GPUHIST_MPI_H
#define GPUHIST_MPI_H

#include <mpi.h>

#include "gpuhist.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Histogram of the samples of every rank of `comm`, merged on `root` (see above).
 * `samples` and `spec` as for gpuhist_histogram(); spec->auto_range agrees the range across
 * the ranks (a rank without samples takes part, counting nothing). A rank may pass count 0.
 * @return as gpuhist_histogram(), the same on every rank; BUSY is not retried.
 */
GPUHIST_API gpuhist_status gpuhist_mpi_histogram(gpuhist_ctx *ctx, MPI_Comm comm, int root,
                                                 const gpuhist_samples *samples,
                                                 const gpuhist_bin_spec *spec,
                                                 gpuhist_result *result);

/**
 * The finite min and max of the histogrammed channels of every rank's samples (as
 * gpuhist_minmax() finds them on each), on every rank: *found = 0 when no rank has a finite
 * value. Then gpuhist_bins_from_minmax() gives every rank the same bins.
 * @return as gpuhist_minmax(), the same on every rank.
 */
GPUHIST_API gpuhist_status gpuhist_mpi_minmax(gpuhist_ctx *ctx, MPI_Comm comm,
                                              const gpuhist_samples *samples, double *min,
                                              double *max, int *found);

/**
 * Combine min / max / found that each rank found by itself (over parts it read in pieces, say),
 * in place on every rank: the least min and greatest max of the ranks that found a value.
 * Collective; nothing can fail but MPI itself. @return OK, or INVALID_ARGUMENT (NULL pointer,
 * MPI not initialised, MPI_COMM_NULL) without communicating.
 */
GPUHIST_API gpuhist_status gpuhist_mpi_minmax_merge(MPI_Comm comm, double *min, double *max,
                                                    int *found);

/**
 * Finish a stream on every rank and merge the parts on `root`: the counterpart of
 * gpuhist_stream_finish() for a histogram streamed in parts by several ranks. `ctx` is the
 * stream's context (where the message of a failed finish is), `layout` and `spec` those the
 * stream was begun with (they give the shape of the merge: bins, histogrammed channels, weights
 * and their type). The stream is freed, also on failure. A rank whose part failed before this
 * point passes stream = NULL (ctx, layout and spec may be NULL too): it takes part in the
 * agreement and every rank returns GPUHIST_ERROR_INVALID_ARGUMENT with the message "no stream
 * (this rank failed before the merge)" of that rank, unless a lower rank failed too.
 * With weights, result->sums is required (as for the local finish); the states are merged
 * exactly as gpuhist_mpi_histogram() does. result->counts_location must be HOST.
 * @return as gpuhist_stream_finish(), the same on every rank.
 */
GPUHIST_API gpuhist_status gpuhist_mpi_stream_finish(gpuhist_ctx *ctx, gpuhist_stream *stream,
                                                     MPI_Comm comm, int root,
                                                     const gpuhist_samples *layout,
                                                     const gpuhist_bin_spec *spec,
                                                     gpuhist_result *result);

/** @return the message of the last failed gpuhist_mpi_* call on this thread (the lowest failing
 *  rank's message, the same on every rank), or "" after a success. */
GPUHIST_API const char *gpuhist_mpi_last_error(void);
/** @return the rank (in the call's communicator) whose message gpuhist_mpi_last_error() holds;
 *  -1 after a success. */
GPUHIST_API int gpuhist_mpi_error_rank(void);

#ifdef __cplusplus
}
#endif
#endif
