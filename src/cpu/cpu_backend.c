/*
 * cpu_backend.c - the CPU backend: host memory only; runs a strategy over the plan (or over each
 * chunk of a stream, adding into the same counters), folds raw-value counts when the strategy
 * counts values, applies the outlier policy.
 *
 * The context's state (ctx->backend_state, from open to close) keeps the 64-bit counters, the
 * exact weight accumulator and the counting threads' scratch (cpu_kernels.h, scratch.c; with
 * cpu-weighted's private records) from one histogram to the next, so that a
 * call of the same size as the last takes no fresh pages from the kernel: page faults and the
 * clearing of fresh pages cost as much as the counting with 2^20 bins on two threads, and glibc
 * returns large blocks to the kernel on free. What it relies on: a context runs one call or
 * stream at a time (the busy flag, SEMANTICS.md), so the state needs no lock; each thread of a
 * call touches only its own scratch entry. When a histogram ends holding more than CPU_KEEP_BYTES, all of it
 * is freed then (a one-off huge histogram does not stay in memory); gpuhist_destroy frees the
 * rest.
 */
#define _GNU_SOURCE
#include "cpu_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void read_cpu_model(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ')
                    colon++;
                snprintf(buf, size, "%s", colon);
                buf[strcspn(buf, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

static gpuhist_status cpu_state_new(gpuhist_ctx *ctx);
static void cpu_state_free(gpuhist_ctx *ctx);

static gpuhist_status cpu_open(gpuhist_ctx *ctx, int device)
{
    if (device != 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE,
                            "cpu: device %d does not exist (the CPU backend has device 0 only)",
                            device);
    char model[96];
    read_cpu_model(model, sizeof model);
    snprintf(ctx->device_name, sizeof ctx->device_name, "CPU%s%s (%d threads)",
             model[0] ? ": " : "", model, gpuhist_cpu_threads(ctx));
    return cpu_state_new(ctx);
}

static void cpu_close(gpuhist_ctx *ctx)
{
    cpu_state_free(ctx);
}

/* ---- min and max: minmax.c's lane loops on all cores, any layout -------------------------- */

static gpuhist_status cpu_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo,
                                 double *hi, int *found)
{
    uint32_t mask = 0; /* the histogrammed channels, together */
    for (uint32_t k = 0; k < plan->active; ++k)
        mask |= 1u << plan->channel_index[k];
    gpuhist_cpu_layout l = {plan->data, plan->dtype, plan->channels, plan->rows,
                            plan->row_length, plan->row_stride};
    if (plan->contiguous) /* rows back to back: one row */
        l.rows = 1, l.row_length = plan->pixels;
    gpuhist_cpu_extent e;
    gpuhist_cpu_minmax_rows(&l, 1, &mask, gpuhist_cpu_threads(ctx), &e);
    *found = e.found;
    if (e.found)
        gpuhist_cpu_extent_range(plan->dtype, &e, lo, hi);
    return GPUHIST_OK;
}

/* Counters of a histogram in progress (one per context: a context runs one at a time). */
typedef struct cpu_counters {
    uint64_t *slots;  /* active * slots */
    uint64_t *values; /* active * 256 / 65536 when the strategy counts raw values, else NULL */
    void *edge_table; /* EVEN: the edges in the edge type, shared by every chunk and thread */
    int64_t *wacc;    /* weighted: the exact weight accumulator (plan->weight_acc layout) */
    size_t nslots, nvalues;
} cpu_counters;

/* Scratch kept after a histogram ends while it takes at most this much (counters and every
 * thread's tables): 2^20 bins on 16 threads take about 200 MiB. The environment variable
 * GPUHIST_CPU_KEEP_MIB sets another limit in MiB (0: free everything after each histogram), so
 * that tests run the release path. */
#define CPU_KEEP_BYTES ((size_t)256 << 20)

static size_t cpu_keep_bytes(void)
{
    const char *e = getenv("GPUHIST_CPU_KEEP_MIB");
    if (!e || !*e)
        return CPU_KEEP_BYTES;
    char *end;
    unsigned long long mib = strtoull(e, &end, 10);
    return *end == '\0' && mib < ((size_t)-1 >> 20) ? (size_t)mib << 20 : CPU_KEEP_BYTES;
}

/* ctx->backend_state of a CPU context. */
typedef struct cpu_state {
    gpuhist_cpu_scratch_set scratch; /* first: scratch.c finds it at ctx->backend_state */
    cpu_counters c;          /* the histogram in progress, when open */
    int open;
    uint64_t *slots_buf;     /* c.slots' memory, kept: slots_cap entries */
    uint64_t *values_buf;    /* c.values' memory, kept: values_cap entries */
    int64_t *wacc_buf;       /* c.wacc's memory, kept: wacc_cap words */
    size_t slots_cap, values_cap, wacc_cap;
} cpu_state;

static gpuhist_status cpu_state_new(gpuhist_ctx *ctx)
{
    ctx->backend_state = calloc(1, sizeof(cpu_state));
    return ctx->backend_state ? GPUHIST_OK
                              : gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                             "cpu: cannot allocate the context's state");
}

/* Free every kept buffer (the counters of no open histogram). */
static void cpu_state_release(cpu_state *k)
{
    gpuhist_cpu_scratch_release(&k->scratch);
    free(k->slots_buf);
    free(k->values_buf);
    free(k->wacc_buf);
    k->slots_buf = k->values_buf = NULL;
    k->wacc_buf = NULL;
    k->slots_cap = k->values_cap = k->wacc_cap = 0;
}

static size_t cpu_state_bytes(const cpu_state *k)
{
    return (k->slots_cap + k->values_cap + k->wacc_cap) * 8u +
           gpuhist_cpu_scratch_bytes(&k->scratch);
}

size_t gpuhist_cpu_kept_bytes(const gpuhist_ctx *ctx)
{
    if (!ctx || ctx->backend != GPUHIST_BACKEND_CPU || ctx->member_count > 0 ||
        !ctx->backend_state)
        return 0;
    return cpu_state_bytes(ctx->backend_state);
}

/* Zeroed counters of `entries` from a kept buffer (grown when too small); NULL when out of memory.
 * n == 0 gives NULL without failing (no buffer needed). */
static uint64_t *kept_counters(uint64_t **buf, size_t *cap, size_t entries)
{
    return entries ? *buf = gpuhist_cpu_kept_zero(*buf, cap, entries, sizeof **buf, 1) : NULL;
}

/* The same for the weight accumulator (int64 words). */
static int64_t *kept_words(int64_t **buf, size_t *cap, size_t words)
{
    return words ? *buf = gpuhist_cpu_kept_zero(*buf, cap, words, sizeof **buf, 1) : NULL;
}

/* End the histogram in progress (if any); free the kept buffers when they take too much. */
static void cpu_stream_abort(gpuhist_ctx *ctx)
{
    cpu_state *k = ctx->backend_state;
    if (!k)
        return;
    gpuhist_cpu_settle(&k->scratch, 1); /* unflushed sub-counters of an abandoned histogram */
    if (k->open) {
        free(k->c.edge_table);
        memset(&k->c, 0, sizeof k->c);
        k->open = 0;
    }
    if (cpu_state_bytes(k) > cpu_keep_bytes())
        cpu_state_release(k);
}

static void cpu_state_free(gpuhist_ctx *ctx)
{
    cpu_state *k = ctx->backend_state;
    if (!k)
        return;
    cpu_stream_abort(ctx);
    cpu_state_release(k);
    free(k);
    ctx->backend_state = NULL;
}

static gpuhist_status cpu_stream_begin(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                       const gpuhist_strategy *s)
{
    cpu_stream_abort(ctx);
    cpu_state *k = ctx->backend_state;
    size_t nslots = (size_t)plan->active * plan->slots;
    size_t nvalues = (s->caps & GPUHIST_CAP_VALUES)
                         ? (size_t)plan->active * gpuhist_small_value_count(plan->dtype)
                         : 0u;
    char what[160];
    snprintf(what, sizeof what, "cpu: %u bins x %u channel(s)", plan->bins, plan->active);
    const size_t nweights = gpuhist_weight_acc_words(plan);
    gpuhist_status st =
        gpuhist_need_host_memory(ctx, (uint64_t)(nslots + nvalues + nweights) * 8u, what);
    if (st != GPUHIST_OK)
        return st;
    cpu_counters *c = &k->c;
    k->open = 1;
    c->nslots = nslots;
    c->nvalues = nvalues;
    c->slots = kept_counters(&k->slots_buf, &k->slots_cap, nslots);
    if (c->slots && nvalues)
        c->values = kept_counters(&k->values_buf, &k->values_cap, nvalues);
    if (c->slots && nweights)
        c->wacc = kept_words(&k->wacc_buf, &k->wacc_cap, nweights);
    /* many even bins: their edge table once, not once per chunk and thread */
    if (c->slots && plan->map.kind == GH_KIND_EVEN && plan->bins >= 4096 &&
        !gpuhist_small_value_count(plan->dtype) && !gpuhist_cpu_even_table_unneeded(plan))
        c->edge_table = gpuhist_cpu_even_edge_table(plan); /* NULL: each call builds its own */
    if (!c->slots || (nvalues && !c->values) || (nweights && !c->wacc)) {
        cpu_stream_abort(ctx);
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "cpu: cannot allocate %zu bin counters", nslots + nvalues + nweights);
    }
    return GPUHIST_OK;
}

static gpuhist_status cpu_stream_count(gpuhist_ctx *ctx, const gpuhist_plan *chunk,
                                       const gpuhist_strategy *s)
{
    cpu_counters *c = &((cpu_state *)ctx->backend_state)->c;
    if (chunk->pixels == 0)
        return GPUHIST_OK;
    gpuhist_plan p = *chunk;
    p.even_edge_table = c->edge_table;
    p.weight_acc = c->wacc;
    p.cpu_defer_flush = 1; /* settled at finish and absorb */
    return s->run(ctx, &p, &p, c->values ? c->values : c->slots);
}

static gpuhist_status cpu_stream_finish(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                        const gpuhist_strategy *s, gpuhist_result *result)
{
    (void)s;
    cpu_state *k = ctx->backend_state;
    cpu_counters *c = &k->c;
    gpuhist_cpu_settle(&k->scratch, 0); /* the last chunks' sub-counters into the counters */
    if (c->values)
        gpuhist_fold_values(plan, c->values, c->slots);
    gpuhist_finish_slots(plan, c->slots, result->counts, result);
    if (c->wacc)
        gpuhist_finish_sums(plan, c->wacc, result);
    cpu_stream_abort(ctx);
    return GPUHIST_OK;
}

/* Several contexts on the CPU (gpuhist_create_multi with one device number twice): add the
 * counters of `from`'s histogram (same plan and strategy, unweighted) into `ctx`'s. */
static gpuhist_status cpu_stream_absorb(gpuhist_ctx *ctx, gpuhist_ctx *from)
{
    cpu_state *kc = ctx->backend_state, *kf = from->backend_state;
    cpu_counters *c = kc && kc->open ? &kc->c : NULL, *f = kf && kf->open ? &kf->c : NULL;
    if (!c || !f || c->nslots != f->nslots || c->nvalues != f->nvalues || c->wacc || f->wacc)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "cpu: the histograms of two contexts do not match (internal)");
    gpuhist_cpu_settle(&kf->scratch, 0); /* from's unflushed sub-counters into its counters */
    for (size_t i = 0; i < c->nslots; ++i)
        c->slots[i] += f->slots[i];
    for (size_t i = 0; i < c->nvalues; ++i)
        c->values[i] += f->values[i];
    return GPUHIST_OK;
}

/* The one-shot call is a stream of one chunk. */
static gpuhist_status cpu_execute(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                  const gpuhist_strategy *s, gpuhist_result *result)
{
    gpuhist_status st = cpu_stream_begin(ctx, plan, s);
    if (st == GPUHIST_OK)
        st = cpu_stream_count(ctx, plan, s);
    if (st == GPUHIST_OK)
        return cpu_stream_finish(ctx, plan, s, result);
    cpu_stream_abort(ctx);
    return st;
}

static int cpu_is_device_pointer(gpuhist_ctx *ctx, const void *data)
{
    (void)ctx;
    (void)data;
    return 0;
}

const gpuhist_backend_ops gpuhist_cpu_backend = {
    .id = GPUHIST_BACKEND_CPU,
    .open = cpu_open,
    .close = cpu_close,
    .minmax = cpu_minmax,
    .policy = &gpuhist_cpu_policy,
    .execute = cpu_execute,
    .is_device_pointer = cpu_is_device_pointer,
    .stream_begin = cpu_stream_begin,
    .stream_count = cpu_stream_count,
    .stream_finish = cpu_stream_finish,
    .stream_abort = cpu_stream_abort,
    .stream_absorb = cpu_stream_absorb,
};
