/*
 * multi.c - a context over several devices (gpuhist_create_multi): one ordinary context per
 * device (its members) does the work; this file cuts the input into shares, runs them in
 * parallel and merges the parts exactly.
 *
 * Mechanism:
 *  - one-shot host input: the request is validated once (gpuhist_prepare on the first member,
 *    so messages are those of one device), the pixels (rows of a region of interest) are cut
 *    into one contiguous share per device, with the weights of those pixels; an auto range is
 *    the min of the shares' minima and the max of their maxima (gpuhist_bins_from_minmax, the
 *    spec auto range itself uses); every share is counted by gpuhist_histogram() on its member,
 *    on a host thread of its own (each member stages its share through its own page-locked
 *    buffers on its own device); then counts and tallies are added and the weight states are
 *    added exactly (parts.c) and rounded once. Counts are sums of per-sample decisions and
 *    clamping commutes with the sum, so the result equals one device's, bit for bit.
 *  - device input or device counts: the whole call runs on the member whose device holds the
 *    samples (else the first): data is never moved between devices.
 *  - streams: every member runs a stream of its own; host chunks and lent buffers go to the
 *    members in turn, device chunks to the member holding them, so their copies and counts
 *    overlap across devices; at finish, where the backend can (ops->stream_absorb: CUDA peer
 *    copies, CPU host adds) the first member adds every other member's counters into its own
 *    on its device and finishes alone, so one copy of the counts leaves the devices; otherwise
 *    (weighted streams, backends without it) every member finishes in parallel and the parts
 *    are added as above.
 * Limits: counts of a multi-device stream are returned in host memory; a CUDA stream handle
 * belongs to one device, so gpuhist_set_stream is refused (each device uses its default
 * stream); a member's failure fails the whole call, with its message prefixed by its device.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy member `m`'s last error into the multi context, naming the device when `name_device`. */
static gpuhist_status member_failed(gpuhist_ctx *ctx, int m, const char *msg, gpuhist_status st,
                                   int name_device)
{
    if (name_device)
        gpuhist_fail(ctx, st, "device %d: %s", ctx->members[m]->device, msg);
    else
        gpuhist_fail(ctx, st, "%s", msg);
    return st;
}

/* The member whose device holds `data`, or -1 (host memory, or not known to any member). */
static int holder_of(gpuhist_ctx *ctx, const void *data, gpuhist_memory location)
{
    if (location == GPUHIST_MEMORY_HOST || !data)
        return -1;
    for (int m = 0; m < ctx->member_count; ++m) {
        gpuhist_ctx *c = ctx->members[m];
        if (c->ops->is_device_pointer && c->ops->is_device_pointer(c, data))
            return m;
    }
    return -1;
}

/* ---- the context's own operations: the members hold everything -------------------------------- */

static void *destroy_member(void *arg)
{
    gpuhist_destroy(*(gpuhist_ctx **)arg);
    return NULL;
}

/* The members are released in parallel (freeing page-locked staging is slow on a GPU). */
static void multi_close(gpuhist_ctx *ctx)
{
    if (ctx->multi_cache)
        gpuhist_host_free(ctx->members[0], ctx->multi_cache);
    ctx->multi_cache = NULL;
    gpuhist_fork_join(ctx->members, sizeof *ctx->members, ctx->member_count, destroy_member);
    free(ctx->members);
    ctx->members = NULL;
    ctx->member_count = 0;
}

static int multi_is_device_pointer(gpuhist_ctx *ctx, const void *data)
{
    return holder_of(ctx, data, GPUHIST_MEMORY_AUTO) >= 0;
}

/* Page-locked memory of the first device; CUDA maps page-locked memory into every device's
 * address space (unified addressing), so every member copies from it by DMA. */
static gpuhist_status multi_host_alloc(gpuhist_ctx *ctx, size_t bytes, void **out)
{
    gpuhist_status st = gpuhist_host_alloc(ctx->members[0], bytes, out);
    return st == GPUHIST_OK ? st : member_failed(ctx, 0, ctx->members[0]->error, st, 0);
}

static void multi_host_free(gpuhist_ctx *ctx, void *p)
{
    gpuhist_host_free(ctx->members[0], p);
}


/* ---- shares ----------------------------------------------------------------------------------- */

typedef struct share {
    gpuhist_ctx *ctx;           /* the member that counts it */
    gpuhist_samples samples;    /* its part of the input */
    gpuhist_bin_spec spec;
    gpuhist_result result;
    int active;                 /* has pixels (or is the one share of an empty input) */
    gpuhist_status status;
    double mn, mx;              /* minmax */
    int found;
    gpuhist_stream *stream;     /* a stream part to finish */
} share;

/* Element a_i of the cut of n items into `parts` nearly equal runs: i * n / parts, exactly. */
static uint64_t cut_at(uint64_t n, int parts, int i)
{
    const uint64_t q = n / (uint64_t)parts, r = n % (uint64_t)parts;
    return q * (uint64_t)i + ((uint64_t)i < r ? (uint64_t)i : r);
}

/* Cut host samples, whose geometry `geo` gpuhist_prepare has checked, into ctx's shares. */
static void cut_shares(gpuhist_ctx *ctx, const gpuhist_plan *geo, const gpuhist_samples *s,
                       share *sh)
{
    const int n = ctx->member_count;
    const size_t wsize = s->weights ? gpuhist_dtype_size(s->weight_dtype) : 0;
    const size_t pixel_bytes = (size_t)geo->channels * geo->sample_size;
    const int by_rows = geo->rows > 1; /* rows of a region of interest, else one run of pixels */
    const uint64_t items = by_rows ? geo->rows : geo->pixels;
    const int one = items < (uint64_t)n; /* too small to share: one call, which describes the
                                            bins even when there is no pixel */
    for (int i = 0; i < n; ++i) {
        const uint64_t a = one ? 0 : cut_at(items, n, i);
        const uint64_t b = one ? (i == 0 ? items : 0) : cut_at(items, n, i + 1);
        const size_t data_at = by_rows ? a * geo->row_stride : a * pixel_bytes;
        const size_t weight_at = (by_rows ? a * geo->row_length : a) * wsize;
        gpuhist_samples part = *s;
        part.data = (const unsigned char *)s->data + data_at;
        part.weights = s->weights ? (const unsigned char *)s->weights + weight_at : NULL;
        if (by_rows) {
            part.rows = b - a;
        } else if (!one) {
            part.count = b - a;
            part.rows = 0;
            part.row_length = 0;
            part.row_stride = 0;
        }
        sh[i].ctx = ctx->members[i];
        sh[i].samples = part;
        sh[i].active = i == 0 || b > a;
    }
}

static void *share_minmax(void *arg)
{
    share *sh = arg;
    if (sh->active)
        sh->status = gpuhist_minmax(sh->ctx, &sh->samples, &sh->mn, &sh->mx, &sh->found);
    return NULL;
}

static void *share_histogram(void *arg)
{
    share *sh = arg;
    if (sh->active)
        sh->status = gpuhist_histogram(sh->ctx, &sh->samples, &sh->spec, &sh->result);
    return NULL;
}

static void *share_finish(void *arg)
{
    share *sh = arg;
    sh->status = gpuhist_stream_finish(sh->stream, &sh->result);
    return NULL;
}

/* The first failed share's status, its message on ctx (naming its device). */
static gpuhist_status shares_status(gpuhist_ctx *ctx, const share *sh)
{
    for (int i = 0; i < ctx->member_count; ++i)
        if (sh[i].active && sh[i].status != GPUHIST_OK)
            return member_failed(ctx, i, gpuhist_last_error(sh[i].ctx), sh[i].status,
                                 ctx->member_count > 1);
    return GPUHIST_OK;
}

/* The finite min and max over the cut shares (each found on its member, in parallel): the
 * min of their minima, the max of their maxima; *found = 0 when no share has a finite value. */
static gpuhist_status shares_minmax(gpuhist_ctx *ctx, share *sh, double *min, double *max,
                                    int *found)
{
    gpuhist_fork_join(sh, sizeof *sh, ctx->member_count, share_minmax);
    gpuhist_status st = shares_status(ctx, sh);
    *found = 0;
    for (int i = 0; st == GPUHIST_OK && i < ctx->member_count; ++i) {
        if (!sh[i].active || !sh[i].found)
            continue;
        if (!*found || sh[i].mn < *min)
            *min = sh[i].mn;
        if (!*found || sh[i].mx > *max)
            *max = sh[i].mx;
        *found = 1;
    }
    return st;
}

/* Validate a host request on the first member and give its geometry. */
static gpuhist_status check_host_request(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                         const gpuhist_bin_spec *spec, gpuhist_plan *geo)
{
    gpuhist_bin_spec v = *spec;
    if (v.kind == GPUHIST_BINS_EVEN && v.auto_range) { /* the range comes later, from the data */
        v.auto_range = 0;
        v.lower = 0.0;
        v.upper = 1.0;
    }
    const gpuhist_strategy *s;
    gpuhist_ctx *m0 = ctx->members[0];
    gpuhist_status st = gpuhist_prepare(m0, samples, &v, GPUHIST_MEMORY_HOST, 0, geo, &s);
    if (st != GPUHIST_OK)
        return member_failed(ctx, 0, m0->error, st, 0);
    return GPUHIST_OK;
}

/* ---- the one-shot call and the min/max ------------------------------------------------------ */

static gpuhist_status multi_minmax(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                    double *min, double *max, int *found)
{
    ctx->error[0] = '\0';
    if (!samples || !min || !max || !found)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "minmax: samples, min, max and found must not be NULL");
    int h = holder_of(ctx, samples->data, samples->location);
    if (h >= 0 || samples->location == GPUHIST_MEMORY_DEVICE) {
        h = h < 0 ? 0 : h;
        gpuhist_status st = gpuhist_minmax(ctx->members[h], samples, min, max, found);
        return st == GPUHIST_OK ? st : member_failed(ctx, h, ctx->members[h]->error, st, 0);
    }
    gpuhist_plan geo;
    gpuhist_bin_spec one = gpuhist_bins_even(1, 0.0, 1.0);
    gpuhist_status st = check_host_request(ctx, samples, &one, &geo);
    if (st != GPUHIST_OK)
        return st;
    const int n = ctx->member_count;
    share *sh = calloc((size_t)n, sizeof *sh);
    if (!sh)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "minmax: out of host memory");
    cut_shares(ctx, &geo, samples, sh);
    st = shares_minmax(ctx, sh, min, max, found);
    free(sh);
    return st;
}

/* Buffers of the shares 1..n-1 (share 0 writes into the caller's result). */
typedef struct part_buffers {
    uint64_t *counts;
    double *sums, *squares;
    int64_t *states;
    size_t count_n, state_words;
} part_buffers;

/* The parts' buffers: one block, page-locked on a GPU backend (counts come back by DMA), kept by
 * the context for its next calls (touched pages, no new allocation per call). */
static gpuhist_status alloc_parts(gpuhist_ctx *ctx, const gpuhist_plan *geo,
                                  const gpuhist_result *result, int n, part_buffers *pb)
{
    memset(pb, 0, sizeof *pb);
    pb->count_n = (size_t)geo->active * geo->bins;
    const int squares = result->sums_squared != NULL;
    pb->state_words = geo->weights ? gpuhist_weight_state_words(geo->bins, geo->active,
                                                                geo->weight_dtype, squares)
                                   : 0;
    const size_t counts = (size_t)(n - 1) * pb->count_n;
    const size_t doubles = geo->weights ? counts * (squares ? 2u : 1u) : 0;
    const size_t states = geo->weights ? (size_t)n * pb->state_words : 0;
    const size_t bytes = (counts + doubles + states) * 8u + 8u;
    if (ctx->multi_cache_size < bytes) {
        gpuhist_host_free(ctx->members[0], ctx->multi_cache);
        ctx->multi_cache = NULL;
        ctx->multi_cache_size = 0;
        gpuhist_status st = gpuhist_host_alloc(ctx->members[0], bytes, &ctx->multi_cache);
        if (st != GPUHIST_OK)
            return member_failed(ctx, 0, ctx->members[0]->error, st, 0);
        ctx->multi_cache_size = bytes;
    }
    pb->counts = ctx->multi_cache;
    if (geo->weights) {
        pb->sums = (double *)(pb->counts + counts);
        pb->squares = squares ? pb->sums + counts : NULL;
        pb->states = (int64_t *)(pb->sums + doubles);
    }
    return GPUHIST_OK;
}

/* Each share's result: share 0 writes the caller's buffers, the others their own. */
static void point_results(const gpuhist_result *result, share *sh, int n,
                          const part_buffers *pb)
{
    for (int i = 0; i < n; ++i) {
        gpuhist_result *r = &sh[i].result;
        *r = gpuhist_result_host(i == 0 ? result->counts : pb->counts + (size_t)(i - 1) * pb->count_n);
        r->edges = i == 0 ? result->edges : NULL;
        if (pb->state_words) {
            r->sums = i == 0 ? result->sums : pb->sums + (size_t)(i - 1) * pb->count_n;
            if (result->sums_squared)
                r->sums_squared =
                    i == 0 ? result->sums_squared : pb->squares + (size_t)(i - 1) * pb->count_n;
            r->weight_state = pb->states + (size_t)i * pb->state_words;
        }
    }
    /* accumulating: share 0 adds into the caller's counts, tallies and state; the other
     * parts are added to them by merge_parts */
    gpuhist_result *r0 = &sh[0].result;
    r0->accumulate = result->accumulate;
    if (result->accumulate) {
        memcpy(r0->underflow, result->underflow, sizeof r0->underflow);
        memcpy(r0->overflow, result->overflow, sizeof r0->overflow);
        memcpy(r0->nan, result->nan, sizeof r0->nan);
        memcpy(r0->total, result->total, sizeof r0->total);
        if (pb->state_words)
            r0->weight_state = result->weight_state;
    }
}

/* Add the parts of the active shares into share 0's result and the caller's `result`. */
static void merge_parts(const gpuhist_plan *geo, gpuhist_outliers outliers, share *sh, int n,
                        const part_buffers *pb, gpuhist_result *result)
{
    gpuhist_result *r0 = &sh[0].result;
    const int squares = result->sums_squared != NULL;
    for (int i = 1; i < n; ++i) {
        if (!sh[i].active)
            continue;
        const gpuhist_result *ri = &sh[i].result;
        const uint64_t *c = pb->counts + (size_t)(i - 1) * pb->count_n;
        for (size_t j = 0; j < pb->count_n; ++j)
            result->counts[j] += c[j];
        for (uint32_t k = 0; k < geo->active; ++k) {
            r0->underflow[k] += ri->underflow[k];
            r0->overflow[k] += ri->overflow[k];
            r0->nan[k] += ri->nan[k];
            r0->total[k] += ri->total[k];
        }
        if (pb->state_words)
            gpuhist_weight_state_add(r0->weight_state, ri->weight_state, geo->bins, geo->active,
                                     geo->weight_dtype, squares);
    }
    if (pb->state_words) {
        gpuhist_weight_state_sums(r0->weight_state, geo->bins, geo->active, geo->weight_dtype,
                                  squares, outliers, result->sums, result->sums_squared);
        if (result->weight_state && result->weight_state != r0->weight_state)
            memcpy(result->weight_state, r0->weight_state,
                   pb->state_words * sizeof *result->weight_state);
    }
    /* what one call reports: bins, channels, range, backend, strategy, tallies */
    gpuhist_result out = *r0;
    out.counts = result->counts;
    out.counts_location = result->counts_location;
    out.edges = result->edges;
    out.device_stats = result->device_stats;
    out.sums = result->sums;
    out.sums_squared = result->sums_squared;
    out.weight_state = result->weight_state;
    out.accumulate = result->accumulate;
    *result = out;
}

static gpuhist_status multi_histogram(gpuhist_ctx *ctx, const gpuhist_samples *samples,
                                       const gpuhist_bin_spec *spec, gpuhist_result *result)
{
    const double t0 = gpuhist_now();
    /* device data or device counts: one device does it all */
    int h = holder_of(ctx, samples->data, samples->location);
    if (h >= 0 || samples->location == GPUHIST_MEMORY_DEVICE ||
        result->counts_location == GPUHIST_MEMORY_DEVICE) {
        h = h < 0 ? 0 : h;
        gpuhist_status st = gpuhist_histogram(ctx->members[h], samples, spec, result);
        return st == GPUHIST_OK ? st : member_failed(ctx, h, ctx->members[h]->error, st, 0);
    }
    gpuhist_plan geo;
    gpuhist_status st = check_host_request(ctx, samples, spec, &geo);
    if (st == GPUHIST_OK)
        st = gpuhist_check_sums(ctx, &geo, result);
    if (st != GPUHIST_OK)
        return st;
    const int n = ctx->member_count;
    share *sh = calloc((size_t)n, sizeof *sh);
    if (!sh)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "out of host memory");
    part_buffers pb;
    st = alloc_parts(ctx, &geo, result, n, &pb);
    if (st == GPUHIST_OK) {
        cut_shares(ctx, &geo, samples, sh);
        gpuhist_bin_spec use = *spec;
        if (spec->kind == GPUHIST_BINS_EVEN && spec->auto_range) {
            double mn = 0.0, mx = 0.0;
            int found = 0;
            st = shares_minmax(ctx, sh, &mn, &mx, &found);
            use = gpuhist_bins_from_minmax(spec->bins, mn, mx, found);
            use.outliers = spec->outliers;
            use.float32_linspace = spec->float32_linspace;
        }
        for (int i = 0; i < n; ++i)
            sh[i].spec = use;
        point_results(result, sh, n, &pb);
    }
    if (st == GPUHIST_OK) {
        gpuhist_fork_join(sh, sizeof *sh, n, share_histogram);
        st = shares_status(ctx, sh);
    }
    if (st == GPUHIST_OK) {
        merge_parts(&geo, spec->outliers, sh, n, &pb, result);
        result->seconds = gpuhist_now() - t0;
    }
    free(sh);
    return st;
}

/* ---- streams ------------------------------------------------------------------------------------ */

typedef struct gpuhist_multi_stream {
    gpuhist_ctx *ctx;
    int n;
    gpuhist_stream **parts;       /* one stream per member */
    gpuhist_memory location;      /* of fed data */
    int turn;                     /* the member the next host chunk or lent buffer goes to */
    int per_part;                 /* staging buffers each part lends (the ring stays 4 deep) */
    void **lent;                  /* lent buffers (n * GPUHIST_STREAM_SLOTS) and their part */
    int *lent_part;
    int weighted;
    gpuhist_dtype weight_dtype;
    gpuhist_outliers outliers;
    double t0;
} gpuhist_multi_stream;

static gpuhist_status part_failed(gpuhist_multi_stream *ms, int p, gpuhist_status st)
{
    return member_failed(ms->ctx, p, gpuhist_stream_error(ms->parts[p]), st, ms->n > 1);
}

static void multi_stream_abort(void *state)
{
    gpuhist_multi_stream *ms = state;
    if (!ms)
        return;
    for (int p = 0; p < ms->n; ++p)
        gpuhist_stream_abort(ms->parts[p]);
    free(ms->parts);
    free(ms->lent);
    free(ms->lent_part);
    free(ms);
}

static gpuhist_status multi_stream_begin(gpuhist_ctx *ctx, const gpuhist_samples *layout,
                                          const gpuhist_bin_spec *spec,
                                          gpuhist_memory counts_location, void **out)
{
    *out = NULL;
    if (counts_location == GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "counts_location: a stream over %d devices returns its counts in "
                            "host memory",
                            ctx->member_count);
    const int n = ctx->member_count;
    gpuhist_multi_stream *ms = calloc(1, sizeof *ms);
    if (ms) {
        ms->parts = calloc((size_t)n, sizeof *ms->parts);
        ms->lent = calloc((size_t)n * GPUHIST_STREAM_SLOTS, sizeof *ms->lent);
        ms->lent_part = calloc((size_t)n * GPUHIST_STREAM_SLOTS, sizeof *ms->lent_part);
    }
    if (!ms || !ms->parts || !ms->lent || !ms->lent_part) {
        multi_stream_abort(ms);
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "stream: out of host memory");
    }
    ms->ctx = ctx;
    ms->n = n;
    ms->location = layout->location;
    ms->weighted = layout->weights != NULL;
    ms->weight_dtype = layout->weight_dtype;
    ms->outliers = spec->outliers;
    ms->t0 = gpuhist_now();
    /* The parts share out the ring of staging buffers one device would have (4 buffers; one
     * per part when there are more parts): buffers filled in turn and reused soon stay in the
     * host's caches, where a ring as many times larger as there are devices did not, and the
     * reading into them slowed down by half. */
    ms->per_part = GPUHIST_STREAM_SLOTS / n > 1 ? GPUHIST_STREAM_SLOTS / n : 1;
    for (int p = 0; p < n; ++p) {
        gpuhist_status st = gpuhist_stream_begin(ctx->members[p], layout, spec,
                                                 GPUHIST_MEMORY_HOST, &ms->parts[p]);
        if (st != GPUHIST_OK) {
            /* the first member's message is the one a single device would give */
            member_failed(ctx, p, ctx->members[p]->error, st, p > 0);
            multi_stream_abort(ms);
            return st;
        }
        gpuhist_stream_limit_slots(ms->parts[p], ms->per_part);
    }
    *out = ms;
    return GPUHIST_OK;
}

static gpuhist_status multi_stream_feed(void *state, const void *data, const void *weights,
                                        uint64_t pixels)
{
    gpuhist_multi_stream *ms = state;
    int p = holder_of(ms->ctx, data, ms->location);
    if (p < 0) {
        p = ms->turn;
        ms->turn = (ms->turn + 1) % ms->n;
    }
    /* (stream.c has checked that weights come exactly with a weighted stream) */
    gpuhist_status st = ms->weighted
                            ? gpuhist_stream_feed_weighted(ms->parts[p], data, weights, pixels)
                            : gpuhist_stream_feed(ms->parts[p], data, pixels);
    return st == GPUHIST_OK ? st : part_failed(ms, p, st);
}

static gpuhist_status multi_stream_buffer(void *state, size_t min_bytes, void **buf)
{
    gpuhist_multi_stream *ms = state;
    /* the next part in turn that has a buffer left to lend */
    int p = -1, free_entry = -1;
    for (int k = 0; k < ms->n && p < 0; ++k) {
        const int q = (ms->turn + k) % ms->n;
        int held = 0;
        for (int i = 0; i < ms->n * GPUHIST_STREAM_SLOTS; ++i)
            held += ms->lent[i] && ms->lent_part[i] == q;
        if (held < ms->per_part)
            p = q;
    }
    for (int i = 0; i < ms->n * GPUHIST_STREAM_SLOTS && free_entry < 0; ++i)
        if (!ms->lent[i])
            free_entry = i;
    if (p < 0 || free_entry < 0)
        return gpuhist_fail(ms->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "stream: all %d staging buffers are lent: submit one first",
                            ms->n * ms->per_part);
    gpuhist_status st = gpuhist_stream_buffer(ms->parts[p], min_bytes, buf);
    if (st != GPUHIST_OK)
        return part_failed(ms, p, st);
    ms->turn = (p + 1) % ms->n;
    ms->lent[free_entry] = *buf;
    ms->lent_part[free_entry] = p;
    return GPUHIST_OK;
}

static gpuhist_status multi_stream_submit(void *state, void *buf, uint64_t pixels)
{
    gpuhist_multi_stream *ms = state;
    for (int i = 0; buf && i < ms->n * GPUHIST_STREAM_SLOTS; ++i) {
        if (ms->lent[i] != buf)
            continue;
        const int p = ms->lent_part[i];
        ms->lent[i] = NULL;
        gpuhist_status st = gpuhist_stream_submit(ms->parts[p], buf, pixels);
        return st == GPUHIST_OK ? st : part_failed(ms, p, st);
    }
    return gpuhist_fail(ms->ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                        "stream: buf is not a buffer lent by gpuhist_stream_buffer");
}

/* Can every part's counters be added into part 0's where they are (ops->stream_absorb)? */
static int absorbable(const gpuhist_multi_stream *ms)
{
    for (int p = 1; p < ms->n; ++p)
        if (!gpuhist_stream_can_absorb(ms->parts[0], ms->parts[p]))
            return 0;
    return 1;
}

/* Part 0 takes the counters of every other part on its device (peer copies and one add per
 * part, queued behind each part's work), then finishes into `result`: one copy of the counts to
 * the host instead of one per device and a sum on the host. */
static gpuhist_status finish_on_first(gpuhist_multi_stream *ms, gpuhist_result *result)
{
    gpuhist_status st = GPUHIST_OK;
    for (int p = 1; p < ms->n && st == GPUHIST_OK; ++p)
        if ((st = gpuhist_stream_absorb(ms->parts[0], ms->parts[p])) != GPUHIST_OK)
            st = part_failed(ms, 0, st);
    if (st == GPUHIST_OK) {
        st = gpuhist_stream_finish(ms->parts[0], result);
        ms->parts[0] = NULL; /* freed by its finish */
        if (st != GPUHIST_OK)
            st = member_failed(ms->ctx, 0, ms->ctx->members[0]->error, st, ms->n > 1);
    }
    /* the others are released after part 0's finish has waited for the adds that read their
     * counters, so releasing them waits for nothing and part 0's finish did not wait for them */
    for (int p = 1; p < ms->n; ++p) {
        gpuhist_stream_abort(ms->parts[p]);
        ms->parts[p] = NULL;
    }
    return st;
}

static gpuhist_status multi_stream_finish(void *state, gpuhist_result *result)
{
    gpuhist_multi_stream *ms = state;
    gpuhist_ctx *ctx = ms->ctx;
    const int n = ms->n;
    gpuhist_status st = GPUHIST_OK;
    if (!result || !result->counts)
        st = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          result ? "result.counts: NULL" : "result: NULL");
    else if (result->counts_location == GPUHIST_MEMORY_DEVICE)
        st = gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                          "result.counts_location: differs from the one given at begin");
    /* the shape of the parts, for the buffers of parts 1..n-1 and the merge */
    gpuhist_plan geo;
    memset(&geo, 0, sizeof geo);
    gpuhist_stream_shape(ms->parts[0], &geo.bins, &geo.active);
    geo.weights = ms->weighted ? (const unsigned char *)ms : NULL; /* only "weighted" matters */
    geo.weight_dtype = ms->weight_dtype;
    if (st == GPUHIST_OK)
        st = gpuhist_check_sums(ctx, &geo, result);
    if (st == GPUHIST_OK && absorbable(ms)) {
        st = finish_on_first(ms, result);
        if (st == GPUHIST_OK)
            result->seconds = gpuhist_now() - ms->t0;
        multi_stream_abort(ms);
        return st;
    }
    share *sh = st == GPUHIST_OK ? calloc((size_t)n, sizeof *sh) : NULL;
    if (st == GPUHIST_OK && !sh)
        st = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "stream: out of host memory");
    part_buffers pb;
    memset(&pb, 0, sizeof pb);
    if (st == GPUHIST_OK && (st = alloc_parts(ctx, &geo, result, n, &pb)) == GPUHIST_OK)
        point_results(result, sh, n, &pb);
    if (st != GPUHIST_OK) {
        for (int p = 0; p < n; ++p)
            gpuhist_stream_abort(ms->parts[p]);
    } else {
        /* every device finishes (waits, folds, copies its counts back) at the same time */
        for (int p = 0; p < n; ++p) {
            sh[p].active = 1;
            sh[p].ctx = ctx->members[p];
            sh[p].stream = ms->parts[p];
        }
        gpuhist_fork_join(sh, sizeof *sh, n, share_finish);
        st = shares_status(ctx, sh); /* a part's message is on its member after finish */
    }
    for (int p = 0; p < n; ++p)
        ms->parts[p] = NULL; /* freed by its finish or abort */
    if (st == GPUHIST_OK) {
        merge_parts(&geo, ms->outliers, sh, n, &pb, result);
        result->seconds = gpuhist_now() - ms->t0;
    }
    free(sh);
    multi_stream_abort(ms);
    return st;
}

/* ---- the context ------------------------------------------------------------------------------ */

static const gpuhist_request_ops multi_requests = {
    .histogram = multi_histogram,
    .minmax = multi_minmax,
    .stream_begin = multi_stream_begin,
    .stream_feed = multi_stream_feed,
    .stream_buffer = multi_stream_buffer,
    .stream_submit = multi_stream_submit,
    .stream_finish = multi_stream_finish,
    .stream_abort = multi_stream_abort,
};

/* The public calls come as whole requests (requests); of the backend operations only those a
 * caller may reach on the context itself. */
static const gpuhist_backend_ops multi_ops = {
    .id = GPUHIST_BACKEND_AUTO,
    .close = multi_close,
    .is_device_pointer = multi_is_device_pointer,
    .host_alloc = multi_host_alloc,
    .host_free = multi_host_free,
    .requests = &multi_requests,
};

/* "2 x NVIDIA H100 80GB HBM3 (devices 0,1)", or the names joined by " + " when they differ. */
static void multi_device_name(gpuhist_ctx *ctx)
{
    char list[64] = "";
    int same = 1;
    size_t used = 0;
    for (int m = 0; m < ctx->member_count; ++m) {
        same = same && strcmp(ctx->members[m]->device_name, ctx->members[0]->device_name) == 0;
        if (used < sizeof list) {
            int w = snprintf(list + used, sizeof list - used, "%s%d", m ? "," : "",
                             ctx->members[m]->device);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    if (same) {
        snprintf(ctx->device_name, sizeof ctx->device_name, "%d x %.80s (devices %.30s)",
                 ctx->member_count, ctx->members[0]->device_name, list);
        return;
    }
    used = 0;
    ctx->device_name[0] = '\0';
    for (int m = 0; m < ctx->member_count && used < sizeof ctx->device_name; ++m) {
        int w = snprintf(ctx->device_name + used, sizeof ctx->device_name - used, "%s%s",
                         m ? " + " : "", ctx->members[m]->device_name);
        used += w > 0 ? (size_t)w : 0;
    }
}

/* One member of a multi-device context, opened on a thread of its own: opening a device (the
 * driver's context, its first allocations) takes a good part of a second on a GPU, and the
 * devices open in parallel. */
typedef struct member_open {
    gpuhist_backend backend;
    int device;
    gpuhist_ctx *ctx;
    gpuhist_status status;
    char error[512];
} member_open;

static void *open_member(void *arg)
{
    member_open *m = arg;
    m->status = gpuhist_create_on(&m->ctx, m->backend, m->device);
    if (m->status != GPUHIST_OK)
        snprintf(m->error, sizeof m->error, "%s", gpuhist_last_error(NULL)); /* this thread's */
    return NULL;
}

gpuhist_status gpuhist_create_multi(gpuhist_ctx **out, gpuhist_backend backend,
                                    const int *devices, int count)
{
    if (!out) {
        gpuhist_create_failed("gpuhist_create_multi: out is NULL");
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (count < 0 || (count > 0 && !devices)) {
        gpuhist_create_failed("devices: %s", count < 0 ? "a negative count"
                                                       : "NULL with a count above 0");
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    if ((unsigned)backend > GPUHIST_BACKEND_OPENCL) {
        gpuhist_create_failed("backend: unknown value %d", (int)backend);
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    char note[sizeof ((gpuhist_ctx *)0)->note] = "";
    if (backend == GPUHIST_BACKEND_AUTO) {
        /* CUDA when it has a device, else the CPU, saying why (as gpuhist_create does) */
        if (gpuhist_device_count(GPUHIST_BACKEND_CUDA) > 0) {
            backend = GPUHIST_BACKEND_CUDA;
        } else {
            if (count <= 1)
                return gpuhist_create_on(out, GPUHIST_BACKEND_AUTO, count ? devices[0] : 0);
            gpuhist_ctx *probe = NULL;
            if (gpuhist_create(&probe, GPUHIST_BACKEND_AUTO) == GPUHIST_OK)
                snprintf(note, sizeof note, "%s", probe->note);
            gpuhist_destroy(probe);
            backend = GPUHIST_BACKEND_CPU;
        }
    }
    int n = count;
    if (n == 0) {
        n = gpuhist_device_count(backend);
        if (n == 0) /* the backend's own message */
            return gpuhist_create(out, backend);
    }
    if (n == 1)
        return gpuhist_create_on(out, backend, devices ? devices[0] : 0);
    gpuhist_ctx *ctx = calloc(1, sizeof *ctx);
    gpuhist_ctx **members = calloc((size_t)n, sizeof *members);
    if (!ctx || !members) {
        free(ctx);
        free(members);
        gpuhist_create_failed("cannot allocate a context");
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    ctx->members = members;
    ctx->ops = &multi_ops;
    member_open *open = calloc((size_t)n, sizeof *open);
    if (!open) {
        gpuhist_destroy(ctx);
        gpuhist_create_failed("cannot allocate a context");
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    for (int m = 0; m < n; ++m) {
        open[m].backend = backend;
        open[m].device = devices ? devices[m] : m;
    }
    gpuhist_fork_join(open, sizeof *open, n, open_member);
    gpuhist_status failed = GPUHIST_OK;
    for (int m = 0; m < n; ++m) {
        members[m] = open[m].ctx;
        if (open[m].status != GPUHIST_OK && failed == GPUHIST_OK) {
            failed = open[m].status; /* the first failing member's message */
            gpuhist_create_failed("%s", open[m].error);
        }
    }
    ctx->member_count = n;
    free(open);
    if (failed != GPUHIST_OK) {
        gpuhist_destroy(ctx); /* (NULL members are skipped) */
        return failed;
    }
    ctx->backend = backend;
    ctx->device = members[0]->device;
    memcpy(ctx->note, note, sizeof ctx->note);
    if (backend == GPUHIST_BACKEND_CPU) /* the cores are shared by the members */
        gpuhist_set_threads(ctx, 0);
    multi_device_name(ctx);
    *out = ctx;
    return GPUHIST_OK;
}
