/*
 * mpi.c - the gpuhist command under an MPI launcher: `mpirun -n N gpuhist [OPTIONS] FILE`.
 *
 * Mechanism: when the command was built with MPI (GPUHIST_HAVE_MPI) and started by a launcher
 * (its environment: OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK, PMI_SIZE) or with --mpi, MPI is
 * initialised and every rank runs the same command on its own share of the pixels (main.c asks
 * cli_mpi_share; source.c and weights.c read only that range). The parts are merged on rank 0
 * by the gpuhist_mpi layer, which alone writes the output; the standard output of the other
 * ranks goes to /dev/null, and they print no notes.
 * Errors: every rank keeps its messages instead of printing them (cli_error_capture), and the
 * command meets at agreements (cli_mpi_agree: one MPI_Allreduce of who failed and with what
 * status) before every collective step and at the end, so a rank that fails never leaves the
 * others waiting in a collective: once any rank has failed, every rank exits with the status of
 * the lowest failing rank, which alone prints its message ("rank R: " in front when R > 0).
 * A failure agreed is final: later agreements return it without communicating, so a rank that
 * left early (at the end agreement) and the others (at an agreement inside the run) meet once.
 * Without MPI (no launcher, GPUHIST_MPI=0 in the environment, or a build without MPI) nothing
 * here does anything: the command behaves as a single process.
 * Limits: one communicator (MPI_COMM_WORLD); the root is rank 0.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GPUHIST_HAVE_MPI
#include "gpuhist_mpi.h"

static int g_on;
static int g_rank, g_size = 1, g_local_rank, g_local_size = 1;
static int g_failed;          /* the agreed status, once a rank has failed */

int cli_mpi_launched(void)
{
    const char *off = getenv("GPUHIST_MPI");
    if (off && strcmp(off, "0") == 0)
        return 0;
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

int cli_mpi_start(int *argc, char ***argv)
{
    if (g_on)
        return CLI_EXIT_OK;
    int init = 0;
    MPI_Initialized(&init);
    if (!init && MPI_Init(argc, argv) != MPI_SUCCESS)
        return cli_error(CLI_EXIT_FAIL, "mpi: MPI_Init failed");
    g_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    /* the ranks on this host: one device each, and a share of the cores */
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(node, &g_local_rank);
        MPI_Comm_size(node, &g_local_size);
        MPI_Comm_free(&node);
    }
    cli_error_capture(1);
    /* the standard streams are the launcher's (Open MPI gives rank 0 a pseudo-terminal whatever
     * mpirun's own output is): never a terminal, so the output does not depend on it */
    cli_no_terminal();
    if (g_rank > 0 && !freopen("/dev/null", "w", stdout))
        return cli_error(CLI_EXIT_FAIL, "mpi: rank %d: cannot send standard output to /dev/null",
                         g_rank);
    return CLI_EXIT_OK;
}

int cli_mpi_built(void)
{
    return 1;
}

int cli_mpi_on(void)
{
    return g_on;
}

int cli_mpi_rank(void)
{
    return g_rank;
}

int cli_mpi_ranks(void)
{
    return g_size;
}

/* The lowest failing rank prints its message, once for every rank. */
static void say(int from, int status)
{
    if (g_rank != from)
        return;
    const char *m = cli_error_captured();
    char prefix[32] = "";
    if (g_size > 1 && from > 0)
        snprintf(prefix, sizeof prefix, "rank %d: ", from);
    if (m)
        fprintf(stderr, "gpuhist: %s%s\n", prefix, m);
    else
        fprintf(stderr, "gpuhist: %sfailed (exit status %d)\n", prefix, status);
    fflush(stderr);
}

int cli_mpi_agree(int rc, uint64_t key)
{
    if (!g_on)
        return rc;
    if (g_failed)
        return g_failed;
    /* [lowest failing rank and its status, the key, minus the key], all by MIN */
    const int64_t k = (int64_t)(key & (((uint64_t)1 << 62) - 1));
    int64_t v[3] = {rc ? (int64_t)g_rank * 4 + rc : INT64_MAX, rc ? INT64_MAX : k,
                    rc ? INT64_MAX : -k};
    int64_t r[3];
    MPI_Allreduce(v, r, 3, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    if (r[0] != INT64_MAX) {
        const int from = (int)(r[0] / 4), status = (int)(r[0] % 4);
        say(from, status);
        return g_failed = status;
    }
    if (r[1] != -r[2]) {
        /* the ranks read different inputs (another file of the same name on another host) */
        if (g_rank == 0) {
            fprintf(stderr, "gpuhist: mpi: the ranks do not see the same input (its size, type "
                            "or bins differ from rank to rank)\n");
            fflush(stderr);
        }
        return g_failed = CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cli_mpi_end(int rc)
{
    if (!g_on)
        return rc;
    rc = cli_mpi_agree(rc, 0);
    MPI_Finalize();
    g_on = 0;
    return rc;
}

void cli_mpi_share(uint64_t total, uint64_t *first, uint64_t *count)
{
    /* floor(total * r / n), without overflow: q * r + floor(m * r / n), m < n */
    const uint64_t n = (uint64_t)g_size, q = total / n, m = total % n;
    const uint64_t a = q * (uint64_t)g_rank + m * (uint64_t)g_rank / n;
    const uint64_t b = q * (uint64_t)(g_rank + 1) + m * (uint64_t)(g_rank + 1) / n;
    *first = a;
    *count = b - a;
}

int cli_mpi_device(gpuhist_backend backend)
{
    if (!g_on || g_local_size <= 1)
        return -1;
    if (backend == GPUHIST_BACKEND_AUTO)
        backend = GPUHIST_BACKEND_CUDA;
    if (backend == GPUHIST_BACKEND_CPU || !gpuhist_backend_compiled(backend))
        return -1;
    const int n = gpuhist_device_count(backend);
    return n > 1 ? g_local_rank % n : -1;
}

int cli_mpi_threads(void)
{
    if (!g_on || g_local_size <= 1)
        return 0;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const long per = cores / g_local_size;
    return per < 1 ? 1 : (int)per;
}

int cli_mpi_minmax(double *lo, double *hi, int *found)
{
    if (!g_on)
        return CLI_EXIT_OK;
    if (gpuhist_mpi_minmax_merge(MPI_COMM_WORLD, lo, hi, found) != GPUHIST_OK)
        return cli_error(CLI_EXIT_FAIL, "mpi: %s", gpuhist_mpi_last_error());
    return CLI_EXIT_OK;
}

gpuhist_status cli_mpi_stream_finish(gpuhist_ctx *ctx, gpuhist_stream *st,
                                     const gpuhist_samples *layout, const gpuhist_bin_spec *spec,
                                     gpuhist_result *r)
{
    return gpuhist_mpi_stream_finish(ctx, st, MPI_COMM_WORLD, 0, layout, spec, r);
}

const char *cli_mpi_error(char *buf, size_t size)
{
    const int from = gpuhist_mpi_error_rank();
    if (g_size > 1 && from > 0)
        snprintf(buf, size, "rank %d: %s", from, gpuhist_mpi_last_error());
    else
        snprintf(buf, size, "%s", gpuhist_mpi_last_error());
    return buf;
}

#else /* built without MPI: a single process, always */

int cli_mpi_launched(void) { return 0; }
int cli_mpi_start(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return cli_error(CLI_EXIT_USAGE,
                     "--mpi: this gpuhist was built without MPI (configure with GPUHIST_MPI=ON)");
}
int cli_mpi_built(void) { return 0; }
int cli_mpi_on(void) { return 0; }
int cli_mpi_rank(void) { return 0; }
int cli_mpi_ranks(void) { return 1; }
int cli_mpi_agree(int rc, uint64_t key) { (void)key; return rc; }
int cli_mpi_end(int rc) { return rc; }
void cli_mpi_share(uint64_t total, uint64_t *first, uint64_t *count)
{
    *first = 0;
    *count = total;
}
int cli_mpi_device(gpuhist_backend backend) { (void)backend; return -1; }
int cli_mpi_threads(void) { return 0; }
int cli_mpi_minmax(double *lo, double *hi, int *found)
{
    (void)lo, (void)hi, (void)found;
    return CLI_EXIT_OK;
}
gpuhist_status cli_mpi_stream_finish(gpuhist_ctx *ctx, gpuhist_stream *st,
                                     const gpuhist_samples *layout, const gpuhist_bin_spec *spec,
                                     gpuhist_result *r)
{
    (void)ctx, (void)layout, (void)spec;
    return gpuhist_stream_finish(st, r);
}
const char *cli_mpi_error(char *buf, size_t size)
{
    snprintf(buf, size, "%s", "");
    return buf;
}

#endif
