/*
 * stream.c - streamed histograms: begin, feed chunks, finish (gpuhist.h, "Streaming").
 *
 * Mechanism: the request is validated and planned once (plan.c; the strategy is chosen as for a
 * large input), then every chunk is counted with the same plan, its data fields replaced by the
 * chunk's. Backends with stream ops keep their counters between chunks (CPU: host counters;
 * CUDA: device counters, chunks copied through page-locked staging buffers and counted
 * asynchronously); the others run their one-shot execute() per chunk and the counts,
 * tallies and exact weight states (parts.c) are added here, the sums rounded once at finish. Counts are sums of per-sample decisions, so any chunking gives the
 * counts of one call on the concatenation, bit for bit (clamped outliers included: clamping
 * adds under/overflow to the end bins, which commutes with the sum).
 * Limits: the range must be known at begin (no auto range); chunks hold whole pixels.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct gpuhist_stream {
    gpuhist_ctx *ctx;
    gpuhist_plan plan;              /* data fields empty; each chunk gets a copy */
    const gpuhist_strategy *s;
    gpuhist_memory location;        /* of fed data */
    gpuhist_memory counts_location;
    double *edges;                  /* EDGES: the stream's copy of the spec's edges */
    int native;                     /* the backend keeps the counters (stream ops) */
    int core_slots;                 /* slot buffers are malloc'd here (else the backend's) */
    gpuhist_status failed;          /* first error, sticky */
    char error[512];
    double t0;
    uint64_t pixels;                /* fed so far */
    /* core-held state when the backend has no stream ops */
    uint64_t *acc, *tmp;            /* active * bins counts */
    uint64_t tally[4][GPUHIST_MAX_CHANNELS];
    int64_t *wacc, *wtmp;           /* weighted: the exact states (sums and squares), added */
    double *wsums;                  /* weighted: a chunk's rounded sums and squares (unused) */
    /* staging buffers lent by gpuhist_stream_buffer */
    void *slot_buf[GPUHIST_STREAM_SLOTS];
    size_t slot_size[GPUHIST_STREAM_SLOTS];
    int slot_held[GPUHIST_STREAM_SLOTS];
    int next_slot;                  /* lend slots in turn, so a refill waits on the oldest copy */
    int slot_limit;                 /* slots 0..slot_limit-1 are lent (gpuhist_stream_limit_slots) */
    void *multi;                    /* a context of several devices: the state of its streams
                                       (ctx->ops->requests, multi.c) */
};

void gpuhist_stream_shape(const gpuhist_stream *st, uint32_t *bins, uint32_t *active)
{
    *bins = st->plan.bins;
    *active = st->plan.active;
}

static gpuhist_status stream_fail(gpuhist_stream *st, gpuhist_status status)
{
    if (st->failed == GPUHIST_OK) {
        st->failed = status;
        memcpy(st->error, st->ctx->error, sizeof st->error);
    }
    return status;
}

int gpuhist_stream_can_absorb(const gpuhist_stream *into, const gpuhist_stream *from)
{
    return into && from && into->native && from->native && !into->multi && !from->multi &&
           into->ctx->ops == from->ctx->ops && into->ctx->ops->stream_absorb &&
           into->s == from->s && into->plan.bins == from->plan.bins &&
           into->plan.active == from->plan.active && !into->plan.weights &&
           !from->plan.weights && into->failed == GPUHIST_OK && from->failed == GPUHIST_OK;
}

void gpuhist_stream_limit_slots(gpuhist_stream *st, int slots)
{
    st->slot_limit = slots < 1 ? 1 : slots > GPUHIST_STREAM_SLOTS ? GPUHIST_STREAM_SLOTS : slots;
}

gpuhist_status gpuhist_stream_absorb(gpuhist_stream *into, gpuhist_stream *from)
{
    gpuhist_status rc = into->ctx->ops->stream_absorb(into->ctx, from->ctx);
    if (rc != GPUHIST_OK)
        return stream_fail(into, rc);
    into->pixels += from->pixels;
    return GPUHIST_OK;
}

static void stream_free(gpuhist_stream *st)
{
    gpuhist_ctx *ctx = st->ctx;
    if (st->multi)
        ctx->ops->requests->stream_abort(st->multi);
    if (st->native && ctx->ops->stream_abort)
        ctx->ops->stream_abort(ctx);
    if (st->core_slots)
        for (int i = 0; i < GPUHIST_STREAM_SLOTS; ++i)
            free(st->slot_buf[i]);
    free(st->edges);
    free(st->acc);
    free(st->tmp);
    free(st->wacc);
    free(st->wtmp);
    free(st->wsums);
    __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
    free(st);
}

gpuhist_status gpuhist_stream_begin(gpuhist_ctx *ctx, const gpuhist_samples *layout,
                                    const gpuhist_bin_spec *spec, gpuhist_memory counts_location,
                                    gpuhist_stream **out)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (out)
        *out = NULL;
    /* The stream holds the context from begin to finish, as one long call does. */
    if (__atomic_test_and_set(&ctx->busy, __ATOMIC_ACQUIRE))
        return GPUHIST_ERROR_BUSY;
    ctx->error[0] = '\0';
    const char *missing = !out ? "stream: out is NULL" : !layout ? "samples: NULL"
                          : !spec ? "bins: NULL specification" : NULL;
    if (missing) {
        gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "%s", missing);
        __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    gpuhist_stream *st = calloc(1, sizeof *st);
    if (!st) {
        __atomic_clear(&ctx->busy, __ATOMIC_RELEASE);
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "stream: out of host memory");
    }
    st->ctx = ctx;
    st->t0 = gpuhist_now();
    st->slot_limit = GPUHIST_STREAM_SLOTS;
    if (ctx->ops->requests) {
        gpuhist_status rc = ctx->ops->requests->stream_begin(ctx, layout, spec, counts_location,
                                                             &st->multi);
        if (rc != GPUHIST_OK) {
            stream_free(st);
            return rc;
        }
        /* what the checks of feed() read; the parts hold the plans */
        st->plan.weights = (const unsigned char *)layout->weights;
        st->plan.want_squares = layout->weights && !layout->stream_no_squares;
        st->plan.channels = layout->channels ? layout->channels : 1;
        st->plan.sample_size = gpuhist_dtype_size(layout->dtype);
        *out = st;
        return GPUHIST_OK;
    }

    /* The plan of an empty input with this layout: pixels come with each chunk. */
    gpuhist_samples s0 = *layout;
    s0.data = NULL;
    s0.count = 0;
    s0.rows = 0;
    gpuhist_status rc = GPUHIST_OK;
    gpuhist_bin_spec sp = *spec;
    if (spec->kind == GPUHIST_BINS_EDGES && spec->edges && spec->bins > 0) {
        st->edges = malloc(((size_t)spec->bins + 1) * sizeof *st->edges);
        if (!st->edges)
            rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "stream: out of host memory");
        else
            memcpy(st->edges, spec->edges, ((size_t)spec->bins + 1) * sizeof *st->edges);
        sp.edges = st->edges;
    }
    if (rc == GPUHIST_OK)
        rc = gpuhist_prepare(ctx, &s0, &sp, counts_location, 1, &st->plan, &st->s);
    /* a weighted stream: its chunks bring their weights; squares are summed too unless the
     * layout leaves them out (the result that asks for them only comes at finish) */
    st->plan.want_squares = st->plan.weights != NULL && !layout->stream_no_squares;
    /* (gpuhist_prepare has checked layout->location: known, and DEVICE only on CUDA) */
    st->location = layout->location;
    st->counts_location = counts_location;
    st->core_slots = !(ctx->ops->stream_begin && ctx->ops->stream_buffer);
    if (rc == GPUHIST_OK && ctx->ops->stream_begin) {
        st->native = 1; /* from here on, abort() releases what begin() took */
        rc = ctx->ops->stream_begin(ctx, &st->plan, st->s);
    } else if (rc == GPUHIST_OK) {
        size_t n = (size_t)st->plan.active * st->plan.bins;
        const size_t words = gpuhist_weight_acc_words(&st->plan); /* 0 unweighted */
        rc = gpuhist_need_host_memory(ctx, (uint64_t)n * 16u + (uint64_t)words * 16u +
                                               (st->plan.weights ? (uint64_t)n * 16u : 0u),
                                      "stream: the counts");
        if (rc == GPUHIST_OK) {
            st->acc = calloc(n, sizeof *st->acc);
            st->tmp = malloc(n * sizeof *st->tmp);
            if (!st->acc || !st->tmp)
                rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                  "stream: cannot allocate %zu counts", n);
        }
        if (rc == GPUHIST_OK && st->plan.weights) {
            st->wacc = calloc(words, sizeof *st->wacc);
            st->wtmp = malloc(words * sizeof *st->wtmp);
            st->wsums = malloc(2 * n * sizeof *st->wsums);
            if (!st->wacc || !st->wtmp || !st->wsums)
                rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                  "stream: cannot allocate the weight states (%zu words)", words);
        }
    }
    if (rc != GPUHIST_OK) {
        stream_free(st);
        return rc;
    }
    *out = st;
    return GPUHIST_OK;
}

/* The plan of one chunk: `pixels` contiguous pixels at `data`. */
static gpuhist_plan chunk_plan(const gpuhist_stream *st, const void *data, uint64_t pixels,
                               int on_device)
{
    gpuhist_plan c = st->plan;
    c.weights = NULL; /* gpuhist_stream_feed_weighted sets them */
    c.data = (const unsigned char *)data;
    c.pixels = pixels;
    c.rows = 1;
    c.row_length = pixels;
    c.row_stride = (size_t)(pixels * c.channels * c.sample_size);
    c.contiguous = 1;
    c.data_on_device = on_device;
    return c;
}

/* Count a chunk through the backend's one-shot execute() and add it up here. */
static gpuhist_status count_by_execute(gpuhist_stream *st, const gpuhist_plan *chunk)
{
    gpuhist_ctx *ctx = st->ctx;
    gpuhist_result r = gpuhist_result_host(st->tmp);
    size_t n = (size_t)st->plan.active * st->plan.bins;
    if (chunk->weights) { /* the chunk's exact state (squares too when the stream sums them) */
        r.sums = st->wsums;
        r.sums_squared = st->plan.want_squares ? st->wsums + n : NULL;
        r.weight_state = st->wtmp;
    }
    gpuhist_result_describe(ctx, chunk, st->s, &r);
    gpuhist_status rc = ctx->ops->execute(ctx, chunk, st->s, &r);
    if (rc != GPUHIST_OK)
        return rc;
    if (chunk->weights)
        gpuhist_weight_state_add(st->wacc, st->wtmp, st->plan.bins, st->plan.active,
                                 st->plan.weight_dtype, st->plan.want_squares);
    for (size_t i = 0; i < n; ++i)
        st->acc[i] += st->tmp[i];
    for (uint32_t k = 0; k < st->plan.active; ++k) {
        st->tally[0][k] += r.underflow[k];
        st->tally[1][k] += r.overflow[k];
        st->tally[2][k] += r.nan[k];
        st->tally[3][k] += r.total[k];
    }
    return GPUHIST_OK;
}

static gpuhist_status check_chunk(gpuhist_stream *st, const void *data, uint64_t pixels)
{
    if (st->failed != GPUHIST_OK)
        return st->failed;
    if (pixels && !data)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: data is NULL with %llu pixels",
                                            (unsigned long long)pixels));
    uint64_t pixel_bytes = (uint64_t)st->plan.channels * st->plan.sample_size;
    if (pixels > SIZE_MAX / pixel_bytes)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: %llu pixels overflow the address space",
                                            (unsigned long long)pixels));
    return GPUHIST_OK;
}

static gpuhist_status feed(gpuhist_stream *st, const void *data, const void *weights,
                           uint64_t pixels)
{
    gpuhist_status rc = check_chunk(st, data, pixels);
    if (rc != GPUHIST_OK)
        return rc;
    if (!weights != !st->plan.weights)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            st->plan.weights
                                                ? "stream: a weighted stream is fed with "
                                                  "gpuhist_stream_feed_weighted (weights NULL)"
                                                : "stream: weights given to a stream begun "
                                                  "without weights"));
    if (pixels == 0)
        return GPUHIST_OK;
    if (st->multi) {
        rc = st->ctx->ops->requests->stream_feed(st->multi, data, weights, pixels);
        return rc == GPUHIST_OK ? rc : stream_fail(st, rc);
    }
    gpuhist_ctx *ctx = st->ctx;
    int on_device = st->location == GPUHIST_MEMORY_DEVICE ||
                    (st->location == GPUHIST_MEMORY_AUTO && ctx->ops->is_device_pointer(ctx, data));
    gpuhist_plan chunk = chunk_plan(st, data, pixels, on_device);
    chunk.weights = (const unsigned char *)weights;
    rc = st->native ? ctx->ops->stream_count(ctx, &chunk, st->s) : count_by_execute(st, &chunk);
    st->pixels += pixels;
    return rc == GPUHIST_OK ? rc : stream_fail(st, rc);
}

gpuhist_status gpuhist_stream_feed(gpuhist_stream *st, const void *data, uint64_t pixels)
{
    if (!st)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    return feed(st, data, NULL, pixels);
}

gpuhist_status gpuhist_stream_feed_weighted(gpuhist_stream *st, const void *data,
                                            const void *weights, uint64_t pixels)
{
    if (!st)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!weights && st->plan.weights && pixels)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: weights is NULL with %llu pixels",
                                            (unsigned long long)pixels));
    return feed(st, data, weights ? weights : st->plan.weights, pixels);
}

gpuhist_status gpuhist_stream_buffer(gpuhist_stream *st, size_t min_bytes, void **buf)
{
    if (!st)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!buf)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: buf is NULL"));
    *buf = NULL;
    if (st->failed != GPUHIST_OK)
        return st->failed;
    if (st->plan.weights)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: a weighted stream is fed with "
                                            "gpuhist_stream_feed_weighted, not lent buffers"));
    if (st->multi) {
        gpuhist_status rc =
            st->ctx->ops->requests->stream_buffer(st->multi, min_bytes ? min_bytes : 1, buf);
        return rc == GPUHIST_OK ? rc : stream_fail(st, rc);
    }
    int slot = -1;
    for (int i = 0; i < st->slot_limit && slot < 0; ++i) {
        int j = (st->next_slot + i) % st->slot_limit;
        if (!st->slot_held[j])
            slot = j;
    }
    if (slot >= 0)
        st->next_slot = (slot + 1) % st->slot_limit;
    if (slot < 0)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: all %d staging buffers are lent: submit "
                                            "one first",
                                            st->slot_limit));
    if (min_bytes == 0)
        min_bytes = 1;
    gpuhist_ctx *ctx = st->ctx;
    gpuhist_status rc = GPUHIST_OK;
    if (!st->core_slots) {
        rc = ctx->ops->stream_buffer(ctx, slot, min_bytes, &st->slot_buf[slot]);
    } else if (st->slot_size[slot] < min_bytes) {
        free(st->slot_buf[slot]);
        st->slot_size[slot] = 0;
        rc = gpuhist_need_host_memory(ctx, min_bytes, "stream: a staging buffer");
        if (rc == GPUHIST_OK && !(st->slot_buf[slot] = malloc(min_bytes)))
            rc = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                              "stream: cannot allocate a %zu-byte staging buffer", min_bytes);
        if (rc == GPUHIST_OK)
            st->slot_size[slot] = min_bytes;
    }
    if (rc != GPUHIST_OK)
        return stream_fail(st, rc);
    st->slot_held[slot] = 1;
    *buf = st->slot_buf[slot];
    return GPUHIST_OK;
}

gpuhist_status gpuhist_stream_submit(gpuhist_stream *st, void *buf, uint64_t pixels)
{
    if (!st)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (st->multi) {
        if (st->failed != GPUHIST_OK)
            return st->failed;
        gpuhist_status rc = st->ctx->ops->requests->stream_submit(st->multi, buf, pixels);
        return rc == GPUHIST_OK ? rc : stream_fail(st, rc);
    }
    int slot = -1;
    for (int i = 0; i < GPUHIST_STREAM_SLOTS && slot < 0; ++i)
        if (st->slot_held[i] && st->slot_buf[i] == buf)
            slot = i;
    if (slot < 0)
        return stream_fail(st, gpuhist_fail(st->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                                            "stream: buf is not a buffer lent by "
                                            "gpuhist_stream_buffer"));
    st->slot_held[slot] = 0;
    gpuhist_status rc = check_chunk(st, buf, pixels);
    if (rc != GPUHIST_OK || pixels == 0)
        return rc;
    gpuhist_ctx *ctx = st->ctx;
    gpuhist_plan chunk = chunk_plan(st, buf, pixels, 0);
    if (!st->core_slots)
        rc = ctx->ops->stream_submit(ctx, &chunk, st->s, slot);
    else if (st->native)
        rc = ctx->ops->stream_count(ctx, &chunk, st->s);
    else
        rc = count_by_execute(st, &chunk);
    st->pixels += pixels;
    return rc == GPUHIST_OK ? rc : stream_fail(st, rc);
}

gpuhist_status gpuhist_stream_finish(gpuhist_stream *st, gpuhist_result *result)
{
    if (!st)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    gpuhist_ctx *ctx = st->ctx;
    gpuhist_status rc = st->failed;
    if (rc == GPUHIST_OK && result && result->sums_squared && st->plan.weights &&
        !st->plan.want_squares)
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.sums_squared: the stream was begun without squares "
                          "(layout.stream_no_squares)");
    if (st->multi) {
        if (rc == GPUHIST_OK) {
            rc = ctx->ops->requests->stream_finish(st->multi, result);
            st->multi = NULL; /* freed by its finish */
        } else if (st->failed != GPUHIST_OK) {
            memcpy(ctx->error, st->error, sizeof ctx->error);
        }
        stream_free(st);
        return rc;
    }
    if (rc == GPUHIST_OK && (!result || !result->counts))
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          result ? "result.counts: NULL" : "result: NULL");
    if (rc == GPUHIST_OK && result->counts_location != st->counts_location &&
        !(result->counts_location == GPUHIST_MEMORY_AUTO &&
          st->counts_location == GPUHIST_MEMORY_HOST))
        rc = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.counts_location: differs from the one given at begin");
    if (rc == GPUHIST_OK)
        rc = gpuhist_check_sums(ctx, &st->plan, result);
    if (rc == GPUHIST_OK) {
        gpuhist_result_describe(ctx, &st->plan, st->s, result);
        if (st->native) {
            gpuhist_plan whole = st->plan; /* the totals are of every pixel fed */
            whole.pixels = st->pixels;
            whole.row_length = st->pixels;
            rc = ctx->ops->stream_finish(ctx, &whole, st->s, result);
        } else {
            /* accumulating: added into the caller's counts and tallies (zeroed by describe
             * otherwise) */
            const size_t n = (size_t)st->plan.active * st->plan.bins;
            if (result->accumulate)
                for (size_t i = 0; i < n; ++i)
                    result->counts[i] += st->acc[i];
            else
                memcpy(result->counts, st->acc, n * sizeof *st->acc);
            for (uint32_t k = 0; k < st->plan.active; ++k) {
                result->underflow[k] += st->tally[0][k];
                result->overflow[k] += st->tally[1][k];
                result->nan[k] += st->tally[2][k];
                result->total[k] += st->tally[3][k];
            }
            /* the chunks' exact states, rounded once (nothing unweighted) */
            gpuhist_finish_sums(&st->plan, st->wacc, result);
        }
    }
    if (rc == GPUHIST_OK) {
        gpuhist_result_edges(&st->plan, result);
        result->seconds = gpuhist_now() - st->t0;
    } else if (st->failed != GPUHIST_OK) {
        memcpy(ctx->error, st->error, sizeof ctx->error);
    }
    stream_free(st);
    return rc;
}

void gpuhist_stream_abort(gpuhist_stream *st)
{
    if (st)
        stream_free(st);
}

const char *gpuhist_stream_error(const gpuhist_stream *st)
{
    if (!st)
        return "";
    return st->failed != GPUHIST_OK ? st->error : st->ctx->error;
}
