/*
 * hybrid.c - a run that starts counting on the CPU while the device starts: the device context
 * is created on a thread of its own while CPU threads count the file from its start; once the
 * device is ready it takes the pieces they have not claimed and counts them through its stream.
 *
 * Mechanism: cli_hybrid_start starts the device thread (gpuhist_create, as cli_create_context
 * would, with the reason kept when it fails). The run counts on a CPU context meanwhile (the
 * first pass of an auto range, then source.c's counting threads); the counting threads publish
 * their shared cursor in a handover (source.c). The device thread, once its context exists,
 * waits for that, prepares its stream (cli_stream_prepare: staging buffers allocated and
 * page-locked, each kernel the stream runs loaded by one chunk of zeros), begins it and takes
 * the cursor: the threads claim no more pieces and finish
 * those they hold; the device counts [cursor, end) with parallel pread into its staging
 * buffers. Its counts and tallies are added to the CPU's exactly, so the output is that of a
 * one-backend run, bit for bit; the strategy names both parts.
 * When the CPU threads count the whole file before the device is ready, the run does not wait:
 * the output is written and committed, standard output flushed, and the process ends with
 * _exit (cli_hybrid_leave) without tearing the half-started device down.
 * Limits: the device's counts are a second copy of the histogram (fewer than 2^18 counters on
 * this path); a device that fails to start, or whose stream refuses the request, leaves the
 * whole file to the CPU threads (-v says why). Test knob GPUHIST_HYBRID_SPLIT: N makes the
 * device take over at piece N exactly (the threads count pieces [0, N) whenever it is ready);
 * after:N makes the threads wait before piece N until the device has taken the cursor (the
 * taking as in a real run, while the threads count; the split is N or a piece or two later);
 * never keeps the device from ever being ready.
 */
#define _GNU_SOURCE
#include "command.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cli_hybrid {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gpuhist_backend backend; /* what was asked for (auto, cuda, opencl) */
    int threads;             /* -j */
    int never;               /* GPUHIST_HYBRID_SPLIT=never */
    int want_context;        /* cli_hybrid_context waits for the context */
    cli_handover *ho;
    double t0;
    /* written by the device thread; read under mu, or after the join */
    int created;             /* the context exists (or failed): the thread will not block */
    int finished;            /* the thread is done */
    gpuhist_ctx *ctx;        /* the device's context; NULL when it failed */
    int usable;              /* a device backend (auto did not fall back to the CPU) */
    char why[600];           /* why the device counted nothing, when it did not */
    double t_created, t_ready;
    double t_prepared;       /* seconds its stream's preparation took (cli_stream_prepare) */
    int took;                /* the device counted a tail */
    uint64_t from, bytes;    /* its bytes of the data */
    int rc;                  /* its status; msg: its message */
    char msg[1024];
    uint64_t *counts;        /* its result (bins * active) */
    gpuhist_result res;
    char device_name[256];
    char strategy[256];      /* "cpu strategy + device strategy", for the result */
};

int cli_hybrid_wanted(const cli_options *o)
{
    if (cli_mpi_on() || o->devices_given || o->device >= 0 || o->weights ||
        o->in_format == CLI_IN_TEXT || (o->strategy && strcmp(o->strategy, "auto") != 0))
        return 0;
    if (o->backend == GPUHIST_BACKEND_AUTO)
        return gpuhist_backend_compiled(GPUHIST_BACKEND_CUDA);
    return o->start_on_cpu &&
           (o->backend == GPUHIST_BACKEND_CUDA || o->backend == GPUHIST_BACKEND_OPENCL) &&
           gpuhist_backend_compiled(o->backend);
}

/* The device's part: its stream begun, the tail taken and counted, the stream finished. */
static void device_part(cli_hybrid *h, gpuhist_ctx *ctx)
{
    cli_stream_input in, tail;
    gpuhist_samples layout;
    gpuhist_bin_spec spec;
    if (!cli_handover_wait(h->ho, &in, &layout, &spec))
        return; /* the CPU threads were done first, or the file is not counted on threads */
    /* staging buffers page-locked and kernels loaded while the CPU threads count */
    double prepared = 0;
    (void)cli_stream_prepare(ctx, &in, &layout, &spec, &prepared);
    gpuhist_stream *gs = NULL;
    if (gpuhist_stream_begin(ctx, &layout, &spec, GPUHIST_MEMORY_HOST, &gs) != GPUHIST_OK) {
        pthread_mutex_lock(&h->mu);
        snprintf(h->why, sizeof h->why, "its stream: %.500s", gpuhist_last_error(ctx));
        pthread_mutex_unlock(&h->mu);
        return;
    }
    const double ready = cli_now() - h->t0;
    const int took = cli_handover_take(h->ho, &tail);
    pthread_mutex_lock(&h->mu);
    h->t_ready = ready;
    h->t_prepared = prepared;
    h->took = took;
    h->from = took ? tail.data_offset - in.data_offset : 0;
    h->bytes = took ? tail.data_bytes : 0;
    pthread_mutex_unlock(&h->mu);
    if (!took) {
        gpuhist_stream_abort(gs);
        return;
    }
    const size_t n = (size_t)spec.bins * layout.active_channels;
    cli_error_capture_thread(h->msg, sizeof h->msg);
    if (!(h->counts = calloc(n ? n : 1, sizeof *h->counts))) {
        h->rc = cli_error(CLI_EXIT_FAIL, "%s: out of memory for the device's counts", in.name);
        gpuhist_stream_abort(gs);
    } else if ((h->rc = cli_stream_input_count_tail(&tail, gs)) != CLI_EXIT_OK) {
        gpuhist_stream_abort(gs);
    } else {
        h->res = gpuhist_result_host(h->counts);
        if (gpuhist_stream_finish(gs, &h->res) != GPUHIST_OK)
            h->rc = cli_error(CLI_EXIT_FAIL, "%s: %s", in.name, gpuhist_last_error(ctx));
    }
    cli_error_capture_thread(NULL, 0);
}

static void *device_run(void *arg)
{
    cli_hybrid *h = arg;
    gpuhist_ctx *ctx = NULL;
    char why[600] = "";
    gpuhist_status st = gpuhist_create(&ctx, h->backend);
    const char *b = gpuhist_backend_name(h->backend);
    if (st != GPUHIST_OK) {
        char list[512] = "";
        if (st == GPUHIST_ERROR_NO_DEVICE &&
            gpuhist_list_devices(h->backend, list, sizeof list) != GPUHIST_OK && list[0]) {
            list[strcspn(list, "\n")] = 0;
            snprintf(why, sizeof why, "backend %s: no device: %s", b,
                     cli_without_backend_prefix(list, b));
        } else {
            snprintf(why, sizeof why, "backend %s: %s", b, gpuhist_status_string(st));
        }
        ctx = NULL;
    } else if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU) {
        const char *note = gpuhist_backend_note(ctx);
        snprintf(why, sizeof why, "auto found no GPU (%s)", note && *note ? note : "no device");
    } else if (h->threads) {
        (void)gpuhist_set_threads(ctx, h->threads); /* refused only for counts the CPU also
                                                        refuses, reported by its context */
    }
    pthread_mutex_lock(&h->mu);
    /* the test knob: a device that is never ready while the file is counted (the run must not
     * wait for it); only a run that needs its context (cli_hybrid_context) gets it */
    while (h->never && !h->want_context)
        pthread_cond_wait(&h->cv, &h->mu);
    h->ctx = ctx;
    h->usable = ctx && gpuhist_context_backend(ctx) != GPUHIST_BACKEND_CPU;
    memcpy(h->why, why, sizeof why);
    if (ctx)
        snprintf(h->device_name, sizeof h->device_name, "%s", gpuhist_device_name(ctx));
    h->t_created = cli_now() - h->t0;
    h->created = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    if (h->usable && !h->never)
        device_part(h, ctx);
    cli_handover_release(h->ho); /* tests: threads held for the device go on */
    pthread_mutex_lock(&h->mu);
    h->finished = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

cli_hybrid *cli_hybrid_start(const cli_options *eff)
{
    cli_hybrid *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    uint64_t forced = UINT64_MAX, hold = UINT64_MAX;
    const char *k = getenv("GPUHIST_HYBRID_SPLIT");
    if (k && strcmp(k, "never") == 0)
        h->never = 1;
    else if (k && strncmp(k, "after:", 6) == 0)
        hold = strtoull(k + 6, NULL, 10);
    else if (k && *k)
        forced = strtoull(k, NULL, 10);
    if (!(h->ho = cli_handover_new(forced, hold))) {
        free(h);
        return NULL;
    }
    h->backend = eff->backend;
    h->threads = eff->threads;
    h->t0 = cli_now();
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->tid, NULL, device_run, h) != 0) {
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        cli_handover_free(h->ho);
        free(h);
        return NULL;
    }
    return h;
}

void cli_hybrid_attach(cli_hybrid *h, cli_stream_input *si)
{
    si->handover = h->ho;
}

/* Free everything once the device thread has been joined. */
static void hybrid_free(cli_hybrid *h)
{
    if (h->ctx)
        gpuhist_destroy(h->ctx);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    cli_handover_free(h->ho);
    free(h->counts);
    free(h);
}

gpuhist_ctx *cli_hybrid_context(cli_hybrid *h)
{
    cli_handover_close(h->ho, NULL); /* the device thread ends once its context exists */
    pthread_mutex_lock(&h->mu);
    h->want_context = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->tid, NULL);
    gpuhist_ctx *ctx = h->ctx; /* auto's CPU fallback included: a context like any other */
    h->ctx = NULL;
    hybrid_free(h);
    return ctx;
}

int cli_hybrid_wait_part(cli_hybrid *h)
{
    if (!cli_handover_close(h->ho, NULL))
        return CLI_EXIT_OK;
    pthread_mutex_lock(&h->mu);
    while (!h->finished)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
    if (h->rc != CLI_EXIT_OK)
        return cli_error(h->rc, "%s", h->msg);
    return CLI_EXIT_OK;
}

void cli_hybrid_add(cli_hybrid *h, gpuhist_result *r)
{
    if (!h->took || h->rc != CLI_EXIT_OK)
        return;
    const size_t n = (size_t)r->bins * r->channels;
    for (size_t i = 0; i < n; ++i)
        r->counts[i] += h->counts[i];
    for (uint32_t c = 0; c < r->channels; ++c) {
        r->underflow[c] += h->res.underflow[c];
        r->overflow[c] += h->res.overflow[c];
        r->nan[c] += h->res.nan[c];
        r->total[c] += h->res.total[c];
    }
    snprintf(h->strategy, sizeof h->strategy, "%s + %s", r->strategy ? r->strategy : "?",
             h->res.strategy ? h->res.strategy : "?");
    r->strategy = h->strategy;
    r->backend = h->res.backend;
}

int cli_hybrid_took(const cli_hybrid *h)
{
    return h->took && h->rc == CLI_EXIT_OK;
}

const char *cli_hybrid_device_name(const cli_hybrid *h)
{
    return h->device_name;
}

void cli_hybrid_notes(cli_hybrid *h, uint64_t data_bytes)
{
    pthread_mutex_lock(&h->mu);
    const int created = h->created, usable = h->usable, took = h->took;
    const double t_created = h->t_created;
    char why[sizeof h->why];
    memcpy(why, h->why, sizeof why);
    pthread_mutex_unlock(&h->mu);
    const char *b = gpuhist_backend_name(h->backend);
    if (took) {
        cli_note("start on the CPU: the CPU threads counted bytes [0, %llu) of the data, the "
                 "%s device (%s) bytes [%llu, %llu); its context was created in %.3f s, its "
                 "stream prepared in %.3f s and ready at %.3f s",
                 (unsigned long long)h->from, gpuhist_backend_name(h->res.backend),
                 h->device_name, (unsigned long long)h->from,
                 (unsigned long long)(h->from + h->bytes), t_created, h->t_prepared,
                 h->t_ready);
    } else if (!created) {
        cli_note("start on the CPU: the CPU threads counted all %llu bytes before the %s device "
                 "had started (%.3f s); the run does not wait for it",
                 (unsigned long long)data_bytes, b, cli_now() - h->t0);
    } else if (!usable || why[0]) {
        cli_note("start on the CPU: the CPU threads counted all %llu bytes; the device took "
                 "no part: %s",
                 (unsigned long long)data_bytes, why);
    } else {
        cli_note("start on the CPU: the CPU threads counted all %llu bytes; the %s device (%s) "
                 "was created in %.3f s, too late to take a part",
                 (unsigned long long)data_bytes, b, h->device_name, t_created);
    }
}

int cli_hybrid_end(cli_hybrid *h)
{
    cli_handover_close(h->ho, NULL);
    pthread_mutex_lock(&h->mu);
    const int created = h->created;
    pthread_mutex_unlock(&h->mu);
    if (!created)
        return 1; /* still starting: cli_hybrid_leave, once everything else is done */
    pthread_join(h->tid, NULL);
    hybrid_free(h);
    return 0;
}

void cli_hybrid_leave(cli_hybrid *h, int rc)
{
    pthread_mutex_lock(&h->mu);
    const int created = h->created;
    pthread_mutex_unlock(&h->mu);
    if (created) { /* it got its context meanwhile, saw the handover closed and ends */
        pthread_join(h->tid, NULL);
        hybrid_free(h);
        return;
    }
    /* The device thread is still inside the backend's start (the driver's context creation),
     * and it touches nothing of the run any more: the handover is closed, so once its context
     * exists it only sees that and returns. Waiting for it would cost the start the run just
     * avoided, and tearing the process down the normal way (exit: atexit handlers, the
     * runtime's static destructors) would run the driver's teardown under a thread still in
     * its initialisation. So: what main() does after a run (standard output flushed and checked),
     * every stdio stream flushed (the -o output is already committed: renamed into place and
     * closed), then _exit, which ends every thread at once and leaves the device to the
     * kernel, as any process end does. */
    pthread_detach(h->tid); /* it may end while the process does: nobody joins it */
    if (rc == CLI_EXIT_OK)
        rc = cli_flush_stdout();
    fflush(NULL);
    _exit(rc);
}
