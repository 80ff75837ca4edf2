/*
 * context.c - the library context a run of the command counts with: the backend (-B), one
 * device (--device) or several (--devices), CPU threads (-j) and a forced strategy (-s), each
 * refusal turned into the command's message (a backend not compiled in, a device that does not
 * exist, even where auto fell back to the CPU, an unknown or unfit strategy).
 */
#include "command.h"

#include <string.h>

/* The library's reasons start with the backend's name; do not say it twice. */
const char *cli_without_backend_prefix(const char *why, const char *backend)
{
    size_t n = strlen(backend);
    if (strncmp(why, backend, n) == 0 && why[n] == ':')
        for (why += n + 1; *why == ' '; ++why)
            ;
    return why;
}

int cli_context_options(const cli_options *o, cli_options *eff)
{
    *eff = *o;
    /* auto sums weights on the CPU backend, which takes every weighted request (CUDA refuses
     * f16/bf16 samples with weights); the GPU backends give the same bits when asked for by
     * name (-B cuda / -B opencl). Chosen before any device is started. */
    if (o->weights && o->backend == GPUHIST_BACKEND_AUTO) {
        if (o->device > 0)
            return cli_error(CLI_EXIT_FAIL,
                             "--device %d: no such device (--weights runs on the CPU backend, "
                             "which has only device 0)",
                             o->device);
        eff->backend = GPUHIST_BACKEND_CPU;
    }
    return CLI_EXIT_OK;
}

int cli_create_context(const cli_options *o, gpuhist_ctx **ctx)
{
    gpuhist_status st;
    if (o->devices_given)
        st = gpuhist_create_multi(ctx, o->backend, o->devices_given == 1 ? o->devices : NULL,
                                  o->devices_given == 1 ? o->ndevices : 0);
    else
        st = o->device >= 0 ? gpuhist_create_on(ctx, o->backend, o->device)
                            : gpuhist_create(ctx, o->backend);
    if (st != GPUHIST_OK && o->devices_given) {
        if (st == GPUHIST_ERROR_NO_DEVICE && !gpuhist_backend_compiled(o->backend))
            return cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build",
                             gpuhist_backend_name(o->backend));
        return cli_error(CLI_EXIT_FAIL, "--devices: %s (see --list-devices)",
                         gpuhist_last_error(NULL));
    }
    if (st != GPUHIST_OK) {
        const char *b = gpuhist_backend_name(o->backend);
        if (st == GPUHIST_ERROR_NO_DEVICE && !gpuhist_backend_compiled(o->backend))
            return cli_error(CLI_EXIT_FAIL, "backend %s is not compiled into this build", b);
        if (st == GPUHIST_ERROR_NO_DEVICE && o->device >= 0)
            return cli_error(CLI_EXIT_FAIL, "backend %s: no device %d (see --list-devices)", b,
                             o->device);
        if (st == GPUHIST_ERROR_NO_DEVICE && o->backend != GPUHIST_BACKEND_AUTO) {
            /* The context is gone with its message; the device list says why (driver, ...). */
            char why[512] = "";
            if (gpuhist_list_devices(o->backend, why, sizeof why) != GPUHIST_OK && why[0]) {
                why[strcspn(why, "\n")] = 0;
                return cli_error(CLI_EXIT_FAIL, "backend %s: no device: %s", b,
                                 cli_without_backend_prefix(why, b));
            }
        }
        return cli_error(CLI_EXIT_FAIL, "backend %s: %s", b, gpuhist_status_string(st));
    }
    /* AUTO falls back to the CPU when CUDA cannot open the device, and the CPU ignores the
     * number: a device that does not exist must not pass unnoticed. The CPU is device 0. */
    int max_device = o->device;
    for (int i = 0; o->devices_given == 1 && i < o->ndevices; ++i)
        max_device = o->devices[i] > max_device ? o->devices[i] : max_device;
    if (o->devices_given == 1 && max_device > 0 &&
        gpuhist_context_backend(*ctx) == GPUHIST_BACKEND_CPU) {
        const char *note = gpuhist_backend_note(*ctx);
        int rc = cli_error(CLI_EXIT_FAIL,
                           "--devices: no device %d (%s, which has only device 0; see "
                           "--list-devices)",
                           max_device, note && *note ? note : "the CPU backend");
        gpuhist_destroy(*ctx);
        *ctx = NULL;
        return rc;
    }
    if (o->device > 0 && o->backend == GPUHIST_BACKEND_AUTO &&
        gpuhist_context_backend(*ctx) == GPUHIST_BACKEND_CPU) {
        /* The note says why CUDA was not used ("...; using the CPU"). */
        const char *note = gpuhist_backend_note(*ctx);
        int rc = cli_error(CLI_EXIT_FAIL,
                           "--device %d: no such device (%s, which has only device 0; see "
                           "--list-devices)",
                           o->device, note && *note ? note : "auto uses the CPU");
        gpuhist_destroy(*ctx);
        *ctx = NULL;
        return rc;
    }
    if (o->threads && gpuhist_set_threads(*ctx, o->threads) != GPUHIST_OK) {
        int rc = cli_error(CLI_EXIT_USAGE, "--threads %d: %s", o->threads, gpuhist_last_error(*ctx));
        gpuhist_destroy(*ctx);
        return rc;
    }
    if (o->strategy && strcmp(o->strategy, "auto") != 0) {
        st = gpuhist_set_strategy(*ctx, o->strategy);
        if (st != GPUHIST_OK) {
            int rc;
            if (st == GPUHIST_ERROR_UNKNOWN_STRATEGY)
                rc = cli_error(CLI_EXIT_USAGE, "--strategy %s: no such strategy (see --list-strategies)",
                               o->strategy);
            else
                rc = cli_error(CLI_EXIT_USAGE, "--strategy %s: %s", o->strategy,
                               gpuhist_last_error(*ctx));
            gpuhist_destroy(*ctx);
            return rc;
        }
    }
    return CLI_EXIT_OK;
}
