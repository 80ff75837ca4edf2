/*
 * threads.c - cpu-threads: one private histogram per thread, fork/join, merge (seed 003, intro:
 * "the only viable way to parallelize histograms on multicore CPUs").
 *
 * Mechanism: the pixels are cut into pieces (about 8 per thread; T = the context's thread count,
 * fewer for small inputs) that the T threads claim in turn from a shared counter; thread t counts
 * its pieces with cpu-serial's loops (cpu_kernels.h) into its own uint64 histogram, which lives
 * in its own cache; thread 0 is the calling thread and counts straight into the result. After
 * the join the T - 1 private histograms are added to the result, by a second fork/join over
 * column ranges when they are large (65536-value or many-bin histograms), else by the calling
 * thread.
 * Why fast: no sharing and no atomics while counting (one atomic per piece claimed); each thread
 *    streams contiguous pieces, so the loop is the serial one and the speed-up is linear until
 *    memory bandwidth or the merge (T * active * bins additions) dominates; a thread on a slower
 *    or stolen CPU claims fewer pieces instead of holding the call back.
 * When slow: small inputs (so each thread gets at least MIN_SAMPLES_PER_THREAD samples, else
 *    fewer threads are used) and huge bin counts (T private tables to allocate, zero and merge).
 * Memory: each thread's 32-bit sub-counters and private histogram are the context's scratch
 *    (cpu_kernels.h), kept from call to call: allocated and zeroed by the thread that uses them,
 *    so a call takes no fresh pages. With fresh tables on each call (2^20 even f32 bins, two
 *    threads: two 4 MiB tables and an 8 MiB private histogram), the two threads took their page
 *    faults at once and ran slower than one thread.
 * Limits: T - 1 extra histograms of active * (slots or 256 / 65536 values) uint64 each.
 * Data dependence: as cpu-serial; on skewed data every thread sees the skew in its own table.
 * Seed: 003 (intro, privatized per-thread histograms on CPUs), 001 §IV for the inner loop.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_kernels.h"

#include <stdlib.h>
#include <string.h>

/* Below this many samples per thread the fork/join and merge cost more than they save
 * (a thread start is ~20-50 us; 64 Ki u8 samples take ~15 us on one core). */
#define MIN_SAMPLES_PER_THREAD (256u * 1024u)
/* Merge with threads only when there is this much to add (entries x private histograms): e.g.
 * u16 with 16 threads is 15 x 65536 additions, ~0.5 ms serially, ~10% of a 256 MiB run. */
#define PARALLEL_MERGE_ADDS (1u << 18)

/* Pieces a call's pixels are cut into, claimed in turn by the threads (share.next): a thread
 * that runs slower (a virtual CPU the hypervisor takes away, a smaller core of a hybrid CPU)
 * takes fewer, instead of the whole call waiting for its fixed share. About PIECES_PER_THREAD
 * per thread, none below MIN_SAMPLES_PER_THREAD samples, and for raw 8/16-bit values (whose
 * loops flush their sub-counters at the end of every piece) at least 64 samples per counter
 * of their table, unless that leaves fewer pieces than threads (then the fixed shares' size).
 * GPUHIST_CPU_THREADS_PIECES=0: one fixed share per thread. */
#define PIECES_PER_THREAD 8u

typedef struct share {
    const gpuhist_plan *plan;
    uint64_t begin, end;
    uint64_t *next;  /* pieces: the next unclaimed piece (shared), or NULL: [begin, end) */
    uint64_t piece;  /* pixels per piece */
    uint64_t *out;  /* thread 0: the result; others: set by the thread, its private histogram */
    gpuhist_cpu_scratch *sc; /* this thread's scratch */
    size_t entries; /* counters of a private histogram */
    gpuhist_status status;
    /* merge phase */
    uint64_t *const *priv;
    int npriv;
    size_t lo, hi;
} share;

static void *count_share(void *arg)
{
    share *s = arg;
    if (!s->out && !(s->out = gpuhist_cpu_scratch_hist(s->sc, s->entries))) {
        s->status = GPUHIST_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    if (!s->next) {
        s->status = gpuhist_cpu_count_pixels(s->plan, s->begin, s->end, s->out, s->sc);
        return NULL;
    }
    /* The slot loops may leave their sub-counters unflushed from one piece to the next (the
     * same output: cpu_kernels.h); settled into this thread's output after its last piece. */
    s->sc->defer = 1;
    const uint64_t pixels = s->plan->pixels;
    for (;;) {
        const uint64_t k = __atomic_fetch_add(s->next, 1u, __ATOMIC_RELAXED);
        const uint64_t b = k * s->piece;
        if (b >= pixels)
            break;
        const uint64_t e = pixels - b < s->piece ? pixels : b + s->piece;
        s->status = gpuhist_cpu_count_pixels(s->plan, b, e, s->out, s->sc);
        if (s->status != GPUHIST_OK)
            break;
    }
    s->sc->defer = 0;
    gpuhist_cpu_settle_entry(s->sc, 0);
    return NULL;
}

/* Pixels per piece of a call of `nthreads` threads (see PIECES_PER_THREAD), or 0: fixed
 * shares. */
static uint64_t piece_pixels(const gpuhist_plan *plan, int nthreads)
{
    const char *env = getenv("GPUHIST_CPU_THREADS_PIECES");
    if ((env && strcmp(env, "0") == 0) || nthreads < 2)
        return 0;
    const uint64_t per_pixel = plan->active ? plan->active : 1u;
    uint64_t least = MIN_SAMPLES_PER_THREAD;
    const uint32_t values = gpuhist_small_value_count(plan->dtype);
    if (values && least < 64u * (uint64_t)values)
        least = 64u * (uint64_t)values;
    least = (least + per_pixel - 1u) / per_pixel;
    uint64_t piece = plan->pixels / ((uint64_t)nthreads * PIECES_PER_THREAD);
    piece = piece > least ? piece : least;
    /* never fewer pieces than threads: at worst, the fixed shares' size */
    const uint64_t share = (plan->pixels + (uint64_t)nthreads - 1u) / (uint64_t)nthreads;
    return piece < share ? piece : share;
}

static void *merge_share(void *arg)
{
    share *s = arg;
    for (int t = 0; t < s->npriv; ++t) {
        const uint64_t *p = s->priv[t];
        for (size_t i = s->lo; i < s->hi; ++i)
            s->out[i] += p[i];
    }
    return NULL;
}

/* Threads for this plan: the context's, fewer for small inputs. */
static int threads_for(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    uint64_t pixels = plan->pixels;
    uint64_t samples = pixels * plan->active;
    int nthreads = gpuhist_cpu_threads(ctx);
    uint64_t useful = samples / MIN_SAMPLES_PER_THREAD;
    if ((uint64_t)nthreads > useful)
        nthreads = useful > 1 ? (int)useful : 1;
    if ((uint64_t)nthreads > pixels)
        nthreads = (int)(pixels ? pixels : 1);
    return nthreads;
}

/* T - 1 private histograms, a value histogram when values are counted, T counting scratches. */
static size_t threads_host_bytes(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    size_t t = (size_t)threads_for(ctx, plan);
    size_t entries = gpuhist_cpu_out_entries(plan) * 8u;
    size_t values = gpuhist_cpu_counts_values(plan) ? entries : 0u;
    return (t - 1u) * entries + values + t * gpuhist_cpu_count_scratch(plan);
}

static gpuhist_status threads_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *job,
                                  void *out)
{
    (void)job; /* the CPU backend's job is the plan */
    uint64_t pixels = plan->pixels;
    int nthreads = threads_for(ctx, plan);
    gpuhist_status need = gpuhist_need_host_memory(ctx, threads_host_bytes(ctx, plan),
                                                   "cpu-threads: its private histograms");
    if (need != GPUHIST_OK)
        return need;

    int values = gpuhist_cpu_counts_values(plan);
    size_t entries = gpuhist_cpu_out_entries(plan);
    gpuhist_status st = GPUHIST_OK;

    gpuhist_cpu_scratch *sc = gpuhist_cpu_scratch_for(ctx, nthreads);
    share *shares = calloc((size_t)nthreads, sizeof *shares);
    uint64_t **priv = calloc((size_t)nthreads, sizeof *priv);
    /* Raw values are counted into a value histogram then folded into `out` (see serial.c). */
    uint64_t *result = out;
    if (sc && values && !(result = gpuhist_cpu_scratch_hist(&sc[0], entries))) {
        st = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                          "cpu-threads: cannot allocate %zu value counters", entries);
        goto done;
    }
    if (!sc || !shares || !priv) {
        st = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                          "cpu-threads: cannot allocate the state of %d threads", nthreads);
        goto done;
    }

    for (int t = 0; t < nthreads; ++t) {
        shares[t].plan = plan;
        shares[t].begin = pixels / (uint64_t)nthreads * (uint64_t)t +
                          (uint64_t)t * (pixels % (uint64_t)nthreads) / (uint64_t)nthreads;
        shares[t].out = t == 0 ? result : NULL; /* the others take their private histogram */
        shares[t].sc = &sc[t];
        shares[t].entries = entries;
    }
    for (int t = 0; t < nthreads; ++t)
        shares[t].end = t + 1 < nthreads ? shares[t + 1].begin : pixels;
    uint64_t next_piece = 0;
    const uint64_t piece = piece_pixels(plan, nthreads);
    if (piece) {
        for (int t = 0; t < nthreads; ++t) {
            shares[t].next = &next_piece;
            shares[t].piece = piece;
        }
    }
    gpuhist_fork_join(shares, sizeof *shares, nthreads, count_share);
    for (int t = 0; t < nthreads; ++t) {
        if (shares[t].status != GPUHIST_OK) {
            st = gpuhist_fail(ctx, shares[t].status,
                              "cpu-threads: thread %d could not allocate its counters", t);
            goto done;
        }
        priv[t] = shares[t].out;
    }

    if (nthreads > 1) {
        int mergers = 1;
        if ((uint64_t)entries * (uint64_t)(nthreads - 1) >= PARALLEL_MERGE_ADDS &&
            entries >= 1024u * (size_t)nthreads)
            mergers = nthreads;
        for (int t = 0; t < mergers; ++t) {
            shares[t].priv = (uint64_t *const *)priv + 1;
            shares[t].npriv = nthreads - 1;
            shares[t].out = result;
            shares[t].lo = entries / (size_t)mergers * (size_t)t;
            shares[t].hi = t + 1 < mergers ? entries / (size_t)mergers * (size_t)(t + 1) : entries;
        }
        gpuhist_fork_join(shares, sizeof *shares, mergers, merge_share);
    }
    if (values)
        gpuhist_fold_values(plan, result, out);

done:
    free(priv);
    free(shares);
    return st;
}

const gpuhist_strategy gpuhist_strategy_cpu_threads = {
    .name = "cpu-threads",
    .backend = GPUHIST_BACKEND_CPU,
    .seed = "003 intro, 001 §IV",
    .supports = "all dtypes, all bin kinds, any bins, channels, ROI",
    .summary = "one private histogram per thread over contiguous pieces claimed in turn "
               "(cpu-serial's loops), pthreads fork/join, merge",
    .dtypes = GPUHIST_ALL_DTYPES,
    .kinds = GPUHIST_ALL_KINDS,
    .max_bins = 0,
    .caps = GPUHIST_CAP_CHANNELS | GPUHIST_CAP_ROI,
    .supports_fn = NULL,
    .run = threads_run,
};
