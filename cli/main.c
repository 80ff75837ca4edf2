/*
 * main.c - the gpuhist command's entry: which run the options ask for (the demo, --help,
 * --version, a listing, an N-D histogram, images, or samples) and the end every run shares
 * (standard output flushed, the MPI ranks' last agreement, a detached run's status sent). The
 * files of each step are listed in command.h.
 */
#include "command.h"

#include <stdlib.h>
#include <string.h>

static int dispatch_options(cli_options *o);

static int dispatch(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "demo") == 0)
        return cli_demo(argc - 1, argv + 1);
    cli_options o;
    int rc = cli_parse_options(argc, argv, &o);
    if (rc == CLI_EXIT_OK)
        rc = dispatch_options(&o);
    if (argc > 0)
        free((void *)o.inputs);
    return rc;
}

static int dispatch_options(cli_options *op)
{
    cli_options o = *op;
    int rc;
    if (o.mpi && (rc = cli_mpi_start(NULL, NULL)))
        return rc;
    if (cli_mpi_rank() > 0) { /* rank 0 speaks for all */
        o.verbose = 0;
        o.progress = 0;
    }
    cli_writers_threads(o.threads); /* -j bounds the output's formatting threads too */
    if (o.help)
        return cli_print_help();
    if (o.version) {
        printf("gpuhist %s (library %s; backends: cpu%s%s; plots: %s; images: %s)\n",
               GPUHIST_VERSION_STRING, gpuhist_version(),
               gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA) ? ", cuda" : "",
               gpuhist_backend_compiled(GPUHIST_BACKEND_OPENCL) ? ", opencl" : "",
               cli_plot_formats_built(), cli_image_formats_built());
        return CLI_EXIT_OK;
    }
    if (o.list_strategies)
        return cli_list_strategies(o.format);
    if (o.list_devices)
        return cli_list_devices(&o);
    cli_detach_start(&o); /* from here on, in the child when the run may use a GPU */
    if (!o.have_input) {
        if (cli_isatty(stdin))
            return cli_error(CLI_EXIT_USAGE,
                             "no input: give a FILE, or - for standard input (try 'gpuhist demo' "
                             "or 'gpuhist --help')");
        o.input = "-";
    }
    if (o.dims) {
        if (o.ninputs > 1)
            return cli_error(CLI_EXIT_USAGE, "--dims reads one input, not %zu", o.ninputs);
        if (o.weights && strcmp(o.weights, "-") == 0 && strcmp(o.input, "-") == 0)
            return cli_error(CLI_EXIT_USAGE,
                             "--weights -: the data comes from standard input; the weights need "
                             "a file of their own");
        return cli_run_nd(&o);
    }
    int images = 0;
    if ((rc = cli_image_inputs(&o, &images)))
        return rc;
    if (images)
        return cli_run_images(&o);
    if (o.weights && strcmp(o.weights, "-") == 0 && strcmp(o.input, "-") == 0)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights -: the data comes from standard input; the weights need a "
                         "file of their own");
    return cli_run_samples(&o);
}

int main(int argc, char **argv)
{
    int rc = CLI_EXIT_OK;
    cli_mark_main();
    /* Started by an MPI launcher (and built with MPI): every rank runs the command on its share
     * of the input (mpi.c). Never for the demo; never without a launcher or --mpi. */
    if (cli_mpi_launched() && !(argc > 1 && strcmp(argv[1], "demo") == 0))
        rc = cli_mpi_start(&argc, &argv);
    if (rc == CLI_EXIT_OK)
        rc = dispatch(argc, argv);
    /* Whatever went to standard output (a histogram, a listing, --help) must have arrived:
     * "gpuhist --list-strategies > /dev/full" fails. After another error, that one is reported. */
    if (rc == CLI_EXIT_OK)
        rc = cli_flush_stdout();
    /* MPI: the last agreement (every rank exits with the same status) and MPI_Finalize */
    rc = cli_mpi_end(rc);
    /* a detached run: the status to the waiting parent, the device released behind it */
    return cli_detach_end(rc);
}
