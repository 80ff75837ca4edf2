/*
 * run_samples.c - one histogram of a file's (or standard input's) samples: raw, .npy or text,
 * with their weights, through the library, written as the options say.
 *
 * Order of work, chosen so that mistakes cost nothing: the context is created and a forced
 * strategy checked, the output opened, the input and the weights opened (their counts compared
 * when both are known, a backend that cannot sum weights refused), and only then is a possibly
 * huge input read. Input whose bins are known before the data (or found by a first pass over a
 * regular file) streams in chunks through a gpuhist stream (source.c), memory bounded, the
 * weights read in step; the rest is read whole. The output goes through output.c: a file only
 * appears once it is complete.
 * Under an MPI launcher (mpi.c) every rank runs this on its share of the input's pixels
 * (share_out), meeting the others at agreements before each collective step; rank 0 writes.
 */
#include "command.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The input can be streamed: raw, .npy or text whose bins do not depend on the data (auto range
 * and bincount up to the data's maximum need the data first: a regular raw or .npy file gets a
 * first pass for them, the rest is read whole). */
static int streamable(const cli_options *o, const cli_stream_input *si, int have_edges)
{
    if (si->format != CLI_IN_RAW && si->format != CLI_IN_NPY && si->format != CLI_IN_TEXT)
        return 0;
    if (o->bins_rule) /* a rule reads every sample first */
        return 0;
    if (have_edges || o->have_range)
        return 1;
    if (si->format == CLI_IN_TEXT) /* no first pass over text: parsing is the slow part */
        return o->have_integer ? o->have_bins || cli_is_small_int(si->dtype) : cli_is_small_int(si->dtype);
    if (o->have_integer)
        return o->have_bins || cli_is_small_int(si->dtype);
    if (cli_is_small_int(si->dtype))
        return 1;
    /* auto range: a first pass over the file finds it (not for byte-swapped data; a
     * pipe cannot be read twice) */
    return si->is_regular && !si->swap;
}

/* --weights on a backend that cannot sum them is refused before the input is read, with the
 * library's reason: a stream of the same layout is begun (and aborted) on a one-bin spec. A
 * forced strategy is left to the real call, whose message names the request's bins. */
static int check_weighted_backend(const cli_options *o, gpuhist_ctx *ctx, gpuhist_dtype dtype,
                                  gpuhist_dtype weight_dtype)
{
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU ||
        (o->strategy && strcmp(o->strategy, "auto") != 0))
        return CLI_EXIT_OK;
    gpuhist_samples layout = gpuhist_samples_1d(NULL, dtype, 0);
    layout.channels = o->channels;
    layout.active_channels = o->active;
    layout.location = GPUHIST_MEMORY_HOST;
    layout.weights = &layout; /* non-NULL: a weighted stream */
    layout.weight_dtype = weight_dtype;
    gpuhist_bin_spec probe = gpuhist_bins_even(1, 0.0, 1.0);
    gpuhist_stream *gs;
    gpuhist_status st = gpuhist_stream_begin(ctx, &layout, &probe, GPUHIST_MEMORY_HOST, &gs);
    if (st == GPUHIST_OK)
        gpuhist_stream_abort(gs);
    if (st == GPUHIST_ERROR_UNSUPPORTED)
        return cli_error(CLI_EXIT_USAGE, "--weights: %s", gpuhist_last_error(ctx));
    return CLI_EXIT_OK; /* any other failure comes again, and is reported, in the real call */
}

/* Open the weights beside the open input `si`. A pipe cannot be read twice: the weights may not
 * come from the one the data comes from (--weights /dev/stdin with the data on standard input).
 * When both counts are known already, a difference fails here, before anything is read. */
static int open_weights(const cli_options *o, const cli_stream_input *si, cli_weights *w)
{
    struct stat ws, ds;
    int from_stdin = strcmp(o->weights, "-") == 0;
    if ((from_stdin ? fstat(0, &ws) : stat(o->weights, &ws)) == 0 && !S_ISREG(ws.st_mode) &&
        fstat(si->fd, &ds) == 0 && ws.st_dev == ds.st_dev && ws.st_ino == ds.st_ino)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights %s: the data comes from the same pipe; the weights need a "
                         "file or a pipe of their own",
                         o->weights);
    int rc = cli_weights_open(o->weights, o->have_weights_type, o->weights_type, w);
    if (rc == CLI_EXIT_OK && si->is_regular &&
        (si->format == CLI_IN_RAW || si->format == CLI_IN_NPY))
        rc = cli_weights_expect(w, si->data_bytes / si->pixel_bytes);
    return rc;
}

/* Under MPI with several ranks: each rank keeps its share of the pixels of the input (and of
 * the weights). Only what is streamed from a regular raw or .npy file can be shared out; the
 * rest (pipes, text, inputs read whole) is a usage error, the same on every rank. */
static int share_out(const cli_options *o, cli_stream_input *si, cli_weights *w, int have_edges)
{
    const int n = cli_mpi_ranks();
    if (!si->is_regular)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: a pipe is read once, in order: %d MPI ranks cannot share it out "
                         "(give a regular file)",
                         si->name, n);
    if (si->format == CLI_IN_TEXT)
        return cli_error(CLI_EXIT_USAGE,
                         "%s: --text input cannot be shared out between %d MPI ranks (give raw "
                         "or .npy samples)",
                         si->name, n);
    if (!streamable(o, si, have_edges))
        return cli_error(CLI_EXIT_USAGE,
                         "%s: %s reads the input whole, which %d MPI ranks cannot share out "
                         "(give %s)",
                         si->name,
                         o->have_integer ? "--integer without -b on 32/64-bit samples"
                                         : "the auto range of byte-swapped .npy data",
                         n, o->have_integer ? "-b N" : "-r LO:HI or -e");
    if (o->weights && !w->is_regular)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights %s: a pipe cannot be shared out between %d MPI ranks (give "
                         "a regular file)",
                         w->name, n);
    uint64_t first, count;
    cli_mpi_share(si->data_bytes / si->pixel_bytes, &first, &count);
    cli_stream_input_share(si, first, count);
    if (o->weights)
        cli_weights_share(w, first, count);
    return CLI_EXIT_OK;
}

/* What every MPI rank must see alike before they count together: the input's size and type,
 * the bins. */
static uint64_t mpi_key(const cli_stream_input *si, const gpuhist_bin_spec *spec)
{
    const uint64_t v[] = {si->shared ? si->whole_bytes : si->data_bytes, (uint64_t)si->dtype,
                          si->pixel_bytes, (uint64_t)spec->kind, spec->bins,
                          (uint64_t)spec->auto_range};
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i)
        h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

/* A run that started on the CPU ends before counting (a failure): the device takes nothing; a
 * device still starting is not waited for. @return rc. */
static int hybrid_over(cli_hybrid **h, int rc)
{
    if (*h && cli_hybrid_end(*h))
        cli_hybrid_leave(*h, rc);
    *h = NULL;
    return rc;
}

/* The input is not counted on CPU threads: the run takes the device's context, as if it had
 * been created up front (a failed start is reported as cli_create_context reports it). */
static int use_device(cli_hybrid **h, const cli_options *eff, gpuhist_ctx **ctx)
{
    gpuhist_ctx *dev = cli_hybrid_context(*h);
    *h = NULL;
    gpuhist_destroy(*ctx);
    *ctx = dev;
    if (dev)
        return CLI_EXIT_OK;
    return cli_create_context(eff, ctx);
}

int cli_run_samples(const cli_options *o)
{
    double *edges_in = NULL;
    uint32_t edge_bins = 0;
    gpuhist_ctx *ctx = NULL;
    cli_input in;
    memset(&in, 0, sizeof in);
    cli_stream_input si;
    memset(&si, 0, sizeof si);
    si.fd = -1;
    cli_weights w;
    memset(&w, 0, sizeof w);
    w.fd = -1;
    void *weights_whole = NULL;
    uint64_t *counts = NULL;
    double *edges_out = NULL, *sums = NULL, *squares = NULL;
    int weights_streamed = 0;
    int rc;

    cli_options eff;
    if ((rc = cli_context_options(o, &eff)))
        return rc;
    if (o->edges_arg && (rc = cli_parse_edges(o->edges_arg, "--edges", UINT32_MAX, &edges_in, &edge_bins)))
        return rc;
    /* MPI ranks on one host: a device each (when there are several), the cores shared out */
    if (cli_mpi_on() && o->device < 0 && !o->devices_given)
        eff.device = cli_mpi_device(eff.backend);
    /* a cold file starts coming in while the device starts */
    cli_readahead(o->input);
    double ctx_t0 = cli_now();
    /* Start on the CPU: the device context is created on a thread of its own while the run
     * counts on a CPU context (hybrid.c); an input that cannot be counted that way takes the
     * device's context once it exists (use_device). */
    cli_hybrid *hybrid = cli_hybrid_wanted(&eff) ? cli_hybrid_start(&eff) : NULL;
    if (hybrid) {
        cli_options cpu = eff;
        cpu.backend = GPUHIST_BACKEND_CPU;
        rc = cli_create_context(&cpu, &ctx);
    } else {
        rc = cli_create_context(&eff, &ctx);
    }
    double ctx_seconds = cli_now() - ctx_t0;
    if (rc) {
        free(edges_in);
        return hybrid_over(&hybrid, rc);
    }
    if (cli_mpi_threads() && !o->threads && gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU)
        gpuhist_set_threads(ctx, cli_mpi_threads());

    /* The output first: an unwritable destination, or one that is the input itself, fails
     * before a big read. */
    cli_output out, sides[CLI_NPY_SIDES], plot;
    memset(&out, 0, sizeof out);
    memset(sides, 0, sizeof sides);
    memset(&plot, 0, sizeof plot);
    cli_output_set_input(o->input);
    if (o->weights)
        cli_output_protect(o->weights, "weights");
    /* under MPI, rank 0 alone writes */
    if (cli_mpi_rank() == 0 && (rc = cli_output_open(&out, o->output))) {
        free(edges_in);
        gpuhist_destroy(ctx);
        return hybrid_over(&hybrid, rc);
    }
    if (cli_mpi_rank() == 0 && o->format == CLI_FMT_NPY &&
        (rc = cli_npy_open_sides(&out, o->weights != NULL, o->squares, sides)))
        goto done;
    if (cli_mpi_rank() == 0 && o->plot && (rc = cli_output_open(&plot, o->plot)))
        goto done;

    cli_read_options ro = {o->input, o->in_format, o->have_type, o->type, o->channels, o->progress,
                           /* a pipe is streamed whatever its format when the bins are known */
                           !o->bins_rule && (edges_in != NULL || o->have_range ||
                                             (o->have_integer && o->have_bins)),
                           o->weights != NULL};
    if ((rc = cli_stream_input_open(&ro, &si)))
        goto done;
    if (o->weights && ((rc = open_weights(o, &si, &w)) ||
                       (rc = check_weighted_backend(o, ctx, si.dtype, w.dtype))))
        goto done;
    if (cli_mpi_ranks() > 1 && (rc = share_out(o, &si, &w, edges_in != NULL)))
        goto done;
    int merged = 0; /* the result was merged over MPI ranks (cli_mpi_stream_finish) */
    gpuhist_bin_spec spec;
    gpuhist_result r;
    gpuhist_status st;
    if (streamable(o, &si, edges_in != NULL)) {
        /* Raw, .npy or text, bins known: streamed in chunks, memory bounded; the weights are
         * read in step. */
        in.dtype = si.dtype;
        in.format = si.format;
        snprintf(in.name, sizeof in.name, "%s", si.name);
        if ((rc = cli_build_spec(o, &in, edges_in, edge_bins, &spec)))
            goto done;
        /* Start on the CPU only where the CPU backend counts the file on its threads (the
         * handover is theirs); else the device's context runs everything, as without it. */
        gpuhist_samples probe = gpuhist_samples_1d(NULL, si.dtype, 0);
        probe.channels = o->channels;
        probe.active_channels = o->active;
        si.layout = &probe;
        si.spec = &spec;
        /* (and, as measured, below 2^18 counters: the device's part is a second copy of the
         * histogram, added at the end) */
        const int on_threads =
            cli_stream_input_on_threads(&si) &&
            (uint64_t)spec.bins * cli_stream_input_histograms(&si) < ((uint64_t)1 << 18);
        si.layout = NULL;
        si.spec = NULL;
        if (hybrid && (si.format == CLI_IN_TEXT || !on_threads) &&
            (rc = use_device(&hybrid, &eff, &ctx)))
            goto done;
        /* MPI: every rank is ready and sees the same input and bins (else all stop here) */
        if ((rc = cli_mpi_agree(CLI_EXIT_OK, mpi_key(&si, &spec))))
            goto done;
        if (spec.kind == GPUHIST_BINS_EVEN && spec.auto_range) {
            double lo = 0, hi = 0, t_mm = cli_now();
            int found = 0;
            /* MPI: each rank's pass over its share, then the min and max of them all */
            si.cpu_threads = o->threads ? o->threads : cli_mpi_threads();
            rc = cli_stream_input_minmax(&si, ctx, o->channels, o->active, &lo, &hi, &found);
            if ((rc = cli_mpi_agree(rc, 0)) || (rc = cli_mpi_minmax(&lo, &hi, &found)))
                goto done;
            gpuhist_bin_spec a = gpuhist_bins_from_minmax(spec.bins, lo, hi, found);
            a.outliers = spec.outliers;
            a.float32_linspace = spec.float32_linspace; /* --numpy-rules */
            spec = a;
            if (o->verbose)
                cli_note("auto range: a first pass found [%.17g, %.17g] in %.3f s", spec.lower,
                         spec.upper, cli_now() - t_mm);
            if (!isfinite(spec.upper - spec.lower)) {
                rc = cli_error(CLI_EXIT_FAIL,
                               "%s: range: the data's range [%g, %g] overflows a double",
                               in.name, spec.lower, spec.upper);
                goto done;
            }
        }
        if ((rc = cli_alloc_result(o, &spec, &counts, &edges_out, &sums, &squares)))
            goto done;
        gpuhist_samples layout = gpuhist_samples_1d(NULL, si.dtype, 0);
        layout.channels = o->channels;
        layout.active_channels = o->active;
        layout.location = GPUHIST_MEMORY_HOST;
        if (o->weights) {
            layout.weights = &w; /* non-NULL: a weighted stream */
            layout.weight_dtype = w.dtype;
            layout.stream_no_squares = !o->squares; /* known now: no square records kept */
            si.weights = &w;
            weights_streamed = 1;
        }
        /* the CPU backend counts a file on threads of its own contexts (one device; MPI
         * merges the stream's counts, so not under MPI) */
        if (gpuhist_context_device_count(ctx) == 1 && !cli_mpi_on()) {
            si.cpu_threads = o->threads;
            si.layout = &layout;
            si.spec = &spec;
            si.strategy = o->strategy;
        }
        if (hybrid)
            cli_hybrid_attach(hybrid, &si);
        /* a device's stream starts with its staging buffers page-locked and its kernels
         * loaded, so that the read and count below pay neither (timed apart) */
        double prepared = 0;
        const int prepped = cli_stream_prepare(ctx, &si, &layout, &spec, &prepared);
        gpuhist_stream *gs;
        double t0 = cli_now();
        st = gpuhist_stream_begin(ctx, &layout, &spec, GPUHIST_MEMORY_HOST, &gs);
        if (st == GPUHIST_OK) {
            double t1 = cli_now();
            rc = cli_stream_input_run(&si, gs,
                                      gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU,
                                      o->progress);
            /* the device's part, when it took one (a failure nearest the start is reported:
             * the CPU threads' pieces come first) */
            if (hybrid) {
                int dev_rc = cli_hybrid_wait_part(hybrid);
                if (rc == CLI_EXIT_OK)
                    rc = dev_rc;
                si.seconds = cli_now() - t1; /* both parts read and counted */
            }
            if (rc == CLI_EXIT_OK && o->weights)
                rc = cli_weights_end(&w);
            if ((rc = cli_mpi_agree(rc, 0))) { /* MPI: every rank read its share */
                gpuhist_stream_abort(gs);
                goto done;
            }
            double t2 = cli_now();
            r = gpuhist_result_host(counts);
            r.edges = edges_out;
            r.sums = sums;
            r.sums_squared = squares;
            /* MPI: the parts merged onto rank 0 (every rank returns the same status) */
            merged = cli_mpi_on();
            st = merged ? cli_mpi_stream_finish(ctx, gs, &layout, &spec, &r)
                        : gpuhist_stream_finish(gs, &r);
            if (st == GPUHIST_OK)
                cli_stream_input_add_side(&si, &r);
            if (st == GPUHIST_OK && hybrid)
                cli_hybrid_add(hybrid, &r);
            if (o->verbose)
                cli_note("streamed: begin %.3f s, read and count %.3f s, finish %.3f s "
                         "(context created in %.3f s)",
                         t1 - t0, t2 - t1, cli_now() - t2, ctx_seconds);
            if (o->verbose && prepped)
                cli_note("device stream prepared in %.3f s before it began (staging buffers "
                         "page-locked, kernels loaded by one chunk of zeros)",
                         prepared);
            if (o->verbose && hybrid && st == GPUHIST_OK)
                cli_hybrid_notes(hybrid, si.data_bytes);
        }
        /* under MPI: the whole input's (rank 0's share: -v's "mpi:" line) */
        const uint64_t data_bytes = si.shared ? si.whole_bytes : si.data_bytes;
        in.samples = data_bytes / si.sample_size;
        in.bytes_read = (double)(si.format == CLI_IN_TEXT ? si.text_bytes : data_bytes);
        in.seconds = si.seconds;
    } else {
        /* Pipes and text whose bins need the data first: the input is read whole, and so are
         * the weights. (The descriptor opened above stays open until then: closing a FIFO's
         * only reader would discard what its writer sent.) */
        if (hybrid && (rc = use_device(&hybrid, &eff, &ctx)))
            goto done;
        rc = cli_read_input(&ro, &in);
        cli_stream_input_close(&si);
        if (rc)
            goto done;
        if (in.samples % o->channels) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %u channels",
                           in.name, (unsigned long long)in.samples, o->channels);
            goto done;
        }
        if (o->weights && (rc = cli_weights_read_all(&w, in.samples / o->channels,
                                                     &weights_whole)))
            goto done;
        gpuhist_samples s = gpuhist_samples_1d(in.data, in.dtype, in.samples / o->channels);
        s.channels = o->channels;
        s.active_channels = o->active;
        s.location = GPUHIST_MEMORY_HOST;
        s.weights = weights_whole;
        s.weight_dtype = w.dtype;
        if ((rc = o->bins_rule ? cli_rule_spec(o, ctx, in.name, &s, &spec)
                               : cli_build_spec(o, &in, edges_in, edge_bins, &spec)) ||
            (rc = cli_alloc_result(o, &spec, &counts, &edges_out, &sums, &squares)))
            goto done;
        r = gpuhist_result_host(counts);
        r.edges = edges_out;
        r.sums = sums;
        r.sums_squared = squares;
        st = gpuhist_histogram(ctx, &s, &spec, &r);
    }
    if (st != GPUHIST_OK) {
        /* A strategy forced onto a request it cannot do, or weights on a backend that does not
         * sum them, is a conflict of options. */
        int status = st == GPUHIST_ERROR_UNSUPPORTED && (o->strategy || o->weights)
                         ? CLI_EXIT_USAGE
                         : CLI_EXIT_FAIL;
        char why[640];
        rc = cli_error(status, "%s: %s", in.name,
                       merged ? cli_mpi_error(why, sizeof why) : gpuhist_last_error(ctx));
        goto done;
    }
    if (cli_mpi_rank() > 0)
        goto done; /* rank 0 writes the merged histogram */

    if (o->verbose) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, in.bytes_read);
        double bytes = (double)in.samples * (double)gpuhist_dtype_size(in.dtype);
        cli_note("input: %s, %s %s, %llu samples of %s, read in %.3f s", in.name,
                 cli_input_format_name(in.format), sz,
                 (unsigned long long)in.samples, gpuhist_dtype_name(in.dtype), in.seconds);
        if (cli_mpi_on())
            cli_note("mpi: %d ranks, the parts merged on rank 0, which read pixels [%llu, %llu) "
                     "of %llu",
                     cli_mpi_ranks(), (unsigned long long)si.share_first,
                     (unsigned long long)(si.share_first + si.data_bytes / si.pixel_bytes),
                     (unsigned long long)(in.samples / o->channels));
        if (o->weights)
            cli_note("weights: %s, %s, %llu of %s, %s", w.name, w.is_npy ? ".npy" : "raw",
                     (unsigned long long)w.next, gpuhist_dtype_name(w.dtype),
                     weights_streamed ? "streamed with the data" : "read whole");
        if (hybrid && cli_hybrid_took(hybrid))
            cli_note("backend: cpu + %s, device: %s + %s", gpuhist_backend_name(r.backend),
                     gpuhist_device_name(ctx), cli_hybrid_device_name(hybrid));
        else
            cli_note("backend: %s, device: %s", gpuhist_backend_name(r.backend),
                     gpuhist_device_name(ctx));
        const char *note = gpuhist_backend_note(ctx);
        if (note && *note)
            cli_note("note: %s", note);
        if (o->weights && o->backend == GPUHIST_BACKEND_AUTO)
            cli_note("note: --weights: auto uses the CPU backend, the one that sums weights");
        cli_note("strategy: %s", r.strategy ? r.strategy : "?");
        cli_note("time: %.6f s, throughput: %.2f GB/s", r.seconds,
                 r.seconds > 0 ? bytes / r.seconds / 1e9 : 0.0);
        double peak = cli_peak_memory_mib();
        if (peak > 0)
            cli_note("peak memory: %.0f MiB resident", peak);
    }

    cli_format fmt = o->format ? o->format : CLI_FMT_TABLE;
    int bars = fmt == CLI_FMT_TABLE && out.f == stdout && cli_isatty(stdout);
    double *density = NULL;
    if (o->density) {
        density = cli_result_array((size_t)r.bins * r.channels * sizeof *density, 0);
        if (!density) {
            rc = cli_error(CLI_EXIT_FAIL, "out of memory for the density of %u bins", r.bins);
            goto done;
        }
        cli_density_of(&r, counts, sums, edges_out, density);
    }
    uint64_t *cumulative = NULL;
    if (o->cumulative) {
        cumulative = cli_result_array((size_t)r.bins * r.channels * sizeof *cumulative, 0);
        if (!cumulative) {
            free(density);
            rc = cli_error(CLI_EXIT_FAIL, "out of memory for the running totals of %u bins",
                           r.bins);
            goto done;
        }
        cli_cumulative_of(&r, counts, cumulative);
    }
    cli_histogram h = {&r, counts, edges_out, in.dtype, spec.kind, o->have_channels, sums,
                       squares, density, cumulative};
    if (fmt == CLI_FMT_NPY && o->verbose)
        cli_note_tallies(&h);
    /* the plot first: when it fails, nothing has gone to standard output */
    if (o->plot) {
        cli_plot_options po = {o->plot_format, o->plot_log, o->outliers, 0, in.name, o->verbose};
        rc = cli_plot_write(&plot, &h, &po);
    }
    if (rc == CLI_EXIT_OK)
        cli_write_histogram(out.f, fmt, &h, bars, bars ? cli_terminal_columns() : 80);
    if (rc == CLI_EXIT_OK)
        rc = sides[CLI_NPY_EDGES].f ? cli_npy_commit(&out, sides, &h) : cli_output_commit(&out);
    if (rc == CLI_EXIT_OK && o->plot)
        rc = cli_output_commit(&plot);
    free(density);
    free(cumulative);

done:
    if (rc) {
        cli_output_abort(&out); /* after commit failure it is already clean: a no-op */
        for (int i = 0; i < CLI_NPY_SIDES; ++i)
            cli_output_abort(&sides[i]);
        cli_output_abort(&plot);
    }
    /* the device takes nothing more; one still starting is not waited for (below) */
    int exit_now = hybrid && cli_hybrid_end(hybrid);
    if (exit_now && o->verbose)
        cli_note("the device is still starting: the run ends without waiting for it");
    cli_input_free(&in);
    cli_stream_input_close(&si);
    cli_weights_close(&w);
    free(weights_whole);
    free(counts);
    free(edges_out);
    free(sums);
    free(squares);
    free(edges_in);
    double d0 = cli_now();
    gpuhist_destroy(ctx);
    if (o->verbose && rc == CLI_EXIT_OK) {
        cli_note("context released in %.3f s", cli_now() - d0);
        cli_note_lifetime();
    }
    if (exit_now)
        cli_hybrid_leave(hybrid, rc);
    return rc;
}
