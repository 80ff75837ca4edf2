/*
 * gpuhist_mpi.c - one exact histogram over the ranks of an MPI communicator
 * (include/gpuhist_mpi.h), through the public API of gpuhist.h only.
 *
 * Mechanism: every rank counts its own samples with its own context; the parts are merged on
 * the root with MPI_Reduce: counts and tallies as MPI_UINT64_T sums (in pieces of at most 2^28
 * values, MPI counts being ints), weighted parts as their exact weight states
 * (result.weight_state) through a commutative user MPI_Op that adds states with
 * gpuhist_weight_state_add. An MPI_Op gets no context, so the state's shape travels with the
 * datatype: each merge builds a contiguous datatype of one whole state and caches its shape on
 * it as an attribute (MPI_Type_set_attr), which the op reads back (MPI_Type_get_attr: a local,
 * non-communicating call, allowed inside an op). No global mutable state is touched during a
 * reduction, so calls on distinct communicators may run on several threads (with
 * MPI_THREAD_MULTIPLE). The op and the keyval are created once (pthread_once) and freed at
 * MPI_Finalize (a delete callback on MPI_COMM_SELF).
 * Agreement: every step that can fail on one rank is followed by agree(): one MPI_Allreduce
 * (MIN) of [the lowest failing rank, the call's signature, its negation], so every rank learns
 * at once whether any rank failed (then the lowest failing rank broadcasts its status and
 * message, and every rank returns them) and whether the ranks made the same call (same phase,
 * root, bins, dtype, channels, weights), which they must for the collectives that follow.
 * Limits: counts in host memory; a weight state travels as one MPI datatype (count 1), so its
 * size in bytes is bounded by what the MPI library moves in one element (Open MPI and MPICH
 * move several GiB); the records of a state are limited to INT_MAX.
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist_mpi.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MESSAGE_BYTES 512

/* The last failure on this thread, as every rank of the failed call reports it. */
static _Thread_local char g_message[MESSAGE_BYTES];
static _Thread_local int g_error_rank = -1;

const char *gpuhist_mpi_last_error(void)
{
    return g_message;
}

int gpuhist_mpi_error_rank(void)
{
    return g_error_rank;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* This rank's state in a call: the first failure is kept. */
typedef struct local {
    gpuhist_status status;
    char message[MESSAGE_BYTES];
} local;

static void fail(local *l, gpuhist_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void fail(local *l, gpuhist_status status, const char *fmt, ...)
{
    if (l->status != GPUHIST_OK)
        return;
    l->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->message, sizeof l->message, fmt, ap);
    va_end(ap);
}

/* A failed library call on ctx: its status and message. */
static void fail_ctx(local *l, gpuhist_status status, const gpuhist_ctx *ctx, const char *what)
{
    const char *m = gpuhist_last_error(ctx);
    fail(l, status, "%s%s", what, m && *m ? m : gpuhist_status_string(status));
}

/* A failure before any communication: the communicator cannot be used, or MPI is not there. */
static gpuhist_status fail_alone(const char *message)
{
    snprintf(g_message, sizeof g_message, "%s", message);
    g_error_rank = -1;
    return GPUHIST_ERROR_INVALID_ARGUMENT;
}

/* MPI initialised and not finalised, and a communicator. @return NULL or what is wrong. */
static const char *usable(MPI_Comm comm, int *rank, int *size)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return "MPI is not initialised (or already finalised)";
    if (comm == MPI_COMM_NULL)
        return "comm: MPI_COMM_NULL";
    MPI_Comm_rank(comm, rank);
    MPI_Comm_size(comm, size);
    return NULL;
}

/* ---- agreement ---------------------------------------------------------------------------- */

/* What every rank must have the same in a step: the step itself, then the call's shape. */
enum {
    SIG_PHASE, SIG_ROOT, SIG_KIND, SIG_BINS, SIG_AUTO, SIG_DTYPE, SIG_CHANNELS, SIG_WEIGHTED,
    SIG_WEIGHT_DTYPE, SIG_SQUARES, SIG_OUTLIERS, SIG_N
};
static const char *const sig_names[SIG_N] = {
    "step", "root", "bin kind", "number of bins", "auto range", "sample type",
    "histogrammed channels", "weights (given or not)", "weight type", "sums of squares (asked or not)",
    "outlier policy"};

/* The steps of a call, so that ranks in different steps (a misuse) are told apart. */
enum { PHASE_MINMAX = 1, PHASE_COUNTED, PHASE_MERGED, PHASE_MINMAX_ONLY };

/* Every rank: did any rank fail, and do the ranks agree on `sig` (NULL on a failed rank)?
 * @return OK, or the lowest failing rank's status (its message in g_message), or
 * INVALID_ARGUMENT when the signatures differ. The same on every rank. */
static gpuhist_status agree(MPI_Comm comm, int rank, int size, const local *l,
                            const int64_t *sig)
{
    int64_t v[1 + 2 * SIG_N], r[1 + 2 * SIG_N];
    v[0] = l->status != GPUHIST_OK ? rank : size;
    for (int i = 0; i < SIG_N; ++i) {
        const int ok = l->status == GPUHIST_OK && sig;
        v[1 + i] = ok ? sig[i] : INT64_MAX;
        v[1 + SIG_N + i] = ok ? -sig[i] : INT64_MAX;
    }
    MPI_Allreduce(v, r, 1 + 2 * SIG_N, MPI_INT64_T, MPI_MIN, comm);
    if (r[0] < size) {
        /* the lowest failing rank tells its status and message */
        const int from = (int)r[0];
        unsigned char buf[4 + MESSAGE_BYTES];
        if (rank == from) {
            int32_t s = (int32_t)l->status;
            memcpy(buf, &s, 4);
            memcpy(buf + 4, l->message, MESSAGE_BYTES);
        }
        MPI_Bcast(buf, (int)sizeof buf, MPI_BYTE, from, comm);
        int32_t s;
        memcpy(&s, buf, 4);
        memcpy(g_message, buf + 4, MESSAGE_BYTES);
        g_message[MESSAGE_BYTES - 1] = 0;
        g_error_rank = from;
        return (gpuhist_status)s;
    }
    for (int i = 0; i < SIG_N; ++i) {
        if (r[1 + i] != -r[1 + SIG_N + i]) {
            if (i == SIG_PHASE)
                snprintf(g_message, sizeof g_message,
                         "the ranks are in different calls or steps (a collective gpuhist_mpi "
                         "call must be made by every rank of the communicator)");
            else
                snprintf(g_message, sizeof g_message,
                         "the ranks disagree on the %s (from %lld to %lld); every rank must make "
                         "the same request",
                         sig_names[i], (long long)r[1 + i], (long long)-r[1 + SIG_N + i]);
            g_error_rank = 0;
            return GPUHIST_ERROR_INVALID_ARGUMENT;
        }
    }
    return GPUHIST_OK;
}

/* The histogrammed channels of a sample description (as the library counts them; a mask with
 * bits beyond the channels is refused by the local call). */
static uint32_t histogrammed(const gpuhist_samples *s)
{
    const uint32_t c = s->channels ? s->channels : 1;
    if (s->channel_mask) {
        uint32_t n = 0;
        for (uint32_t k = 0; k < c && k < 32; ++k)
            n += (s->channel_mask >> k) & 1u;
        return n ? n : 1;
    }
    return s->active_channels && s->active_channels <= c ? s->active_channels : c;
}

static void signature(int64_t *sig, int phase, int root, const gpuhist_samples *s,
                      const gpuhist_bin_spec *b, const gpuhist_result *r)
{
    sig[SIG_PHASE] = phase;
    sig[SIG_ROOT] = root;
    sig[SIG_KIND] = b ? (int64_t)b->kind : -1;
    sig[SIG_BINS] = b ? (int64_t)b->bins : -1;
    sig[SIG_AUTO] = b ? (b->kind == GPUHIST_BINS_EVEN && b->auto_range) : -1;
    sig[SIG_DTYPE] = s->dtype;
    sig[SIG_CHANNELS] = histogrammed(s);
    sig[SIG_WEIGHTED] = s->weights != NULL;
    sig[SIG_WEIGHT_DTYPE] = s->weights ? (int64_t)s->weight_dtype : -1;
    sig[SIG_SQUARES] = s->weights && r ? r->sums_squared != NULL : -1;
    sig[SIG_OUTLIERS] = b ? (int64_t)b->outliers : -1;
}

/* ---- min and max -------------------------------------------------------------------------- */

/* The least min and greatest max over the ranks that found a value (one MPI_Allreduce). */
static void merge_minmax(MPI_Comm comm, double *min, double *max, int *found)
{
    /* -0.0 as 0.0 (gpuhist_minmax's convention), so MIN never chooses between the two */
    double v[2] = {*found ? *min + 0.0 : INFINITY, *found ? -(*max + 0.0) : INFINITY}, r[2];
    MPI_Allreduce(v, r, 2, MPI_DOUBLE, MPI_MIN, comm);
    *found = r[0] != INFINITY;
    *min = *found ? r[0] + 0.0 : 0.0;
    *max = *found ? -r[1] + 0.0 : 0.0;
}

gpuhist_status gpuhist_mpi_minmax_merge(MPI_Comm comm, double *min, double *max, int *found)
{
    int rank, size;
    const char *why = usable(comm, &rank, &size);
    if (why)
        return fail_alone(why);
    if (!min || !max || !found)
        return fail_alone("minmax_merge: min, max and found must not be NULL");
    merge_minmax(comm, min, max, found);
    g_message[0] = 0;
    g_error_rank = -1;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_mpi_minmax(gpuhist_ctx *ctx, MPI_Comm comm, const gpuhist_samples *samples,
                                  double *min, double *max, int *found)
{
    int rank, size;
    const char *why = usable(comm, &rank, &size);
    if (why)
        return fail_alone(why);
    local l = {GPUHIST_OK, ""};
    double lo = 0.0, hi = 0.0;
    int f = 0;
    int64_t sig[SIG_N];
    if (!ctx || !samples || !min || !max || !found) {
        fail(&l, GPUHIST_ERROR_INVALID_ARGUMENT,
             "minmax: ctx, samples, min, max and found must not be NULL");
    } else {
        signature(sig, PHASE_MINMAX_ONLY, 0, samples, NULL, NULL);
        gpuhist_status st = gpuhist_minmax(ctx, samples, &lo, &hi, &f);
        if (st != GPUHIST_OK)
            fail_ctx(&l, st, ctx, "");
    }
    gpuhist_status st = agree(comm, rank, size, &l, l.status == GPUHIST_OK ? sig : NULL);
    if (st != GPUHIST_OK)
        return st;
    merge_minmax(comm, &lo, &hi, &f);
    *min = lo;
    *max = hi;
    *found = f;
    g_message[0] = 0;
    g_error_rank = -1;
    return GPUHIST_OK;
}

/* ---- merging the parts ------------------------------------------------------------------------ */

/* The shape of a weight state, cached on its MPI datatype for the op. */
typedef struct state_shape {
    uint32_t bins, channels;
    gpuhist_dtype weight_dtype;
    int squares;
    size_t words;
} state_shape;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_shape_key = MPI_KEYVAL_INVALID;
static MPI_Op g_add_states = MPI_OP_NULL;
static int g_globals_ok;

/* inout[i] += in[i] for `len` states of the shape cached on the datatype. */
static void add_states(void *in, void *inout, int *len, MPI_Datatype *type)
{
    state_shape *shape = NULL;
    int flag = 0;
    MPI_Type_get_attr(*type, g_shape_key, &shape, &flag);
    if (!flag || !shape) {
        fprintf(stderr, "gpuhist_mpi: a weight state reached the merge without its shape\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    for (int i = 0; i < *len; ++i)
        gpuhist_weight_state_add((int64_t *)inout + (size_t)i * shape->words,
                                 (const int64_t *)in + (size_t)i * shape->words, shape->bins,
                                 shape->channels, shape->weight_dtype, shape->squares);
}

static int free_shape(MPI_Datatype type, int key, void *value, void *extra)
{
    (void)type, (void)key, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

/* At MPI_Finalize (MPI_COMM_SELF's attributes are deleted first): the op and the keyval go. */
static int free_globals(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)value, (void)extra;
    if (g_add_states != MPI_OP_NULL)
        MPI_Op_free(&g_add_states);
    if (g_shape_key != MPI_KEYVAL_INVALID)
        MPI_Type_free_keyval(&g_shape_key);
    return MPI_SUCCESS;
}

static void make_globals(void)
{
    int self_key;
    if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, free_shape, &g_shape_key, NULL) !=
            MPI_SUCCESS ||
        MPI_Op_create(add_states, 1, &g_add_states) != MPI_SUCCESS)
        return;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_globals, &self_key, NULL) ==
        MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, self_key, NULL);
    g_globals_ok = 1;
}

/* One weight state as one MPI element: `records` units of (words / records) int64. */
static int state_type(const state_shape *shape, size_t records, MPI_Datatype *out)
{
    MPI_Datatype unit;
    const size_t per = shape->words / records;
    if (records > INT_MAX || per > INT_MAX)
        return 0;
    if (MPI_Type_contiguous((int)per, MPI_INT64_T, &unit) != MPI_SUCCESS)
        return 0;
    int ok = MPI_Type_contiguous((int)records, unit, out) == MPI_SUCCESS;
    MPI_Type_free(&unit);
    if (!ok)
        return 0;
    state_shape *copy = malloc(sizeof *copy);
    if (!copy || MPI_Type_commit(out) != MPI_SUCCESS ||
        MPI_Type_set_attr(*out, g_shape_key, copy) != MPI_SUCCESS) {
        free(copy);
        MPI_Type_free(out);
        return 0;
    }
    *copy = *shape;
    return 1;
}

/* buf[0..n) summed onto the root (in place there; the other ranks' buf is left as it is). */
static void reduce_u64(MPI_Comm comm, int rank, int root, uint64_t *buf, size_t n)
{
    const size_t step = (size_t)1 << 28;
    for (size_t at = 0; at < n; at += step) {
        const int k = (int)(n - at < step ? n - at : step);
        if (rank == root)
            MPI_Reduce(MPI_IN_PLACE, buf + at, k, MPI_UINT64_T, MPI_SUM, root, comm);
        else
            MPI_Reduce(buf + at, NULL, k, MPI_UINT64_T, MPI_SUM, root, comm);
    }
}

/* The shape of a call's weight state (weights given), for the local result. */
typedef struct merge_plan {
    int weighted;
    state_shape shape;
    int64_t *state;     /* the state the local result writes (the caller's, or own) */
    int own_state;
    gpuhist_outliers outliers;
} merge_plan;

/* Before the local count: the state buffer of a weighted call. */
static void plan_merge(local *l, merge_plan *m, const gpuhist_samples *s, uint32_t bins,
                       gpuhist_outliers outliers, gpuhist_result *r)
{
    memset(m, 0, sizeof *m);
    m->outliers = outliers;
    if (!s->weights)
        return;
    m->weighted = 1;
    m->shape.bins = bins;
    m->shape.channels = histogrammed(s);
    m->shape.weight_dtype = s->weight_dtype;
    m->shape.squares = r->sums_squared != NULL;
    m->shape.words = gpuhist_weight_state_words(bins, m->shape.channels, s->weight_dtype,
                                                m->shape.squares);
    if (m->shape.words == 0)
        return; /* a bad weight type or shape: the local call says which */
    if (r->weight_state) {
        m->state = r->weight_state;
    } else {
        m->state = malloc(m->shape.words * sizeof *m->state);
        m->own_state = 1;
        if (!m->state)
            fail(l, GPUHIST_ERROR_OUT_OF_MEMORY,
                 "out of memory for a weight state of %zu words", m->shape.words);
    }
    r->weight_state = m->state;
}

static void end_merge(merge_plan *m, gpuhist_result *r, int64_t *callers_state)
{
    if (m->own_state)
        free(m->state);
    m->state = NULL;
    r->weight_state = callers_state;
}

/* After every rank counted (agreed): counts, tallies, seconds and weight states onto the root,
 * then the root's sums; a final agreement so every rank returns the same status. */
static gpuhist_status merge(MPI_Comm comm, int rank, int size, int root, merge_plan *m,
                            gpuhist_result *r)
{
    const double t0 = now();
    local l = {GPUHIST_OK, ""};
    const uint32_t C = r->channels;
    reduce_u64(comm, rank, root, r->counts, (size_t)r->bins * C);
    uint64_t t[4 * GPUHIST_MAX_CHANNELS];
    for (uint32_t c = 0; c < C; ++c) {
        t[4 * c] = r->underflow[c];
        t[4 * c + 1] = r->overflow[c];
        t[4 * c + 2] = r->nan[c];
        t[4 * c + 3] = r->total[c];
    }
    reduce_u64(comm, rank, root, t, 4 * (size_t)C);
    double longest = 0.0;
    MPI_Reduce(&r->seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, root, comm);
    if (m->weighted) {
        /* Every rank has the same shape (agreed), so the same type; one that cannot be built
         * (beyond INT_MAX records) cannot be built anywhere. */
        const size_t records = (size_t)m->shape.channels * ((size_t)m->shape.bins + 3u);
        MPI_Datatype type;
        if (!state_type(&m->shape, records, &type)) {
            fail(&l, GPUHIST_ERROR_UNSUPPORTED,
                 "weight state of %zu words: too large for one MPI datatype", m->shape.words);
        } else {
            if (rank == root)
                MPI_Reduce(MPI_IN_PLACE, m->state, 1, type, g_add_states, root, comm);
            else
                MPI_Reduce(m->state, NULL, 1, type, g_add_states, root, comm);
            MPI_Type_free(&type);
            if (rank == root) {
                gpuhist_status st = gpuhist_weight_state_sums(
                    m->state, m->shape.bins, m->shape.channels, m->shape.weight_dtype,
                    m->shape.squares, m->outliers, r->sums, r->sums_squared);
                if (st != GPUHIST_OK)
                    fail(&l, st, "the merged weight state could not be rounded");
            }
        }
    }
    if (rank == root) {
        for (uint32_t c = 0; c < C; ++c) {
            r->underflow[c] = t[4 * c];
            r->overflow[c] = t[4 * c + 1];
            r->nan[c] = t[4 * c + 2];
            r->total[c] = t[4 * c + 3];
        }
        r->seconds = longest + (now() - t0);
    }
    int64_t sig[SIG_N];
    memset(sig, 0, sizeof sig);
    sig[SIG_PHASE] = PHASE_MERGED;
    return agree(comm, rank, size, &l, sig);
}

/* Arguments every entry point checks alike; a failure is recorded, not returned. */
/* The end of a call once this rank has counted (or failed): every rank agrees on the counted
 * step (`sig`, unread on a failed rank), the parts go to the root, the caller's state pointer
 * is given back, and a success clears the last error. */
static gpuhist_status agree_and_merge(MPI_Comm comm, int rank, int size, int root,
                                      const local *l, const int64_t *sig, merge_plan *m,
                                      gpuhist_result *result, int64_t *callers_state)
{
    gpuhist_status st = agree(comm, rank, size, l, l->status == GPUHIST_OK ? sig : NULL);
    if (st == GPUHIST_OK)
        st = merge(comm, rank, size, root, m, result);
    if (result)
        end_merge(m, result, callers_state);
    if (st == GPUHIST_OK) {
        g_message[0] = 0;
        g_error_rank = -1;
    }
    return st;
}

static void check_common(local *l, int root, int size, const gpuhist_result *r)
{
    if (root < 0 || root >= size)
        fail(l, GPUHIST_ERROR_INVALID_ARGUMENT,
             "root: %d is not a rank of the communicator (%d ranks)", root, size);
    else if (r && r->counts_location == GPUHIST_MEMORY_DEVICE)
        fail(l, GPUHIST_ERROR_UNSUPPORTED,
             "result.counts_location: device memory; the merge adds host buffers (give host "
             "counts)");
    else if (r && r->accumulate)
        fail(l, GPUHIST_ERROR_UNSUPPORTED,
             "result.accumulate: the ranks' merge writes the result (accumulate into a second "
             "result on rank root instead)");
}

gpuhist_status gpuhist_mpi_histogram(gpuhist_ctx *ctx, MPI_Comm comm, int root,
                                     const gpuhist_samples *samples, const gpuhist_bin_spec *spec,
                                     gpuhist_result *result)
{
    int rank, size;
    const char *why = usable(comm, &rank, &size);
    if (why)
        return fail_alone(why);
    pthread_once(&g_once, make_globals);
    local l = {GPUHIST_OK, ""};
    if (!g_globals_ok)
        fail(&l, GPUHIST_ERROR_BACKEND, "could not create the MPI op that merges weight states");
    if (!ctx || !samples || !spec || !result)
        fail(&l, GPUHIST_ERROR_INVALID_ARGUMENT,
             "ctx, samples, spec and result must not be NULL");
    else
        check_common(&l, root, size, result);
    gpuhist_status st;
    int64_t sig[SIG_N];
    gpuhist_bin_spec use;
    const int autorange = l.status == GPUHIST_OK && spec->kind == GPUHIST_BINS_EVEN &&
                          spec->auto_range;
    if (l.status == GPUHIST_OK)
        use = *spec;
    if (autorange) {
        /* the range of all the data: local min/max, agreed, combined */
        double lo = 0.0, hi = 0.0;
        int found = 0;
        st = gpuhist_minmax(ctx, samples, &lo, &hi, &found);
        if (st != GPUHIST_OK)
            fail_ctx(&l, st, ctx, "");
        signature(sig, PHASE_MINMAX, root, samples, spec, result);
        if ((st = agree(comm, rank, size, &l, l.status == GPUHIST_OK ? sig : NULL)))
            return st;
        merge_minmax(comm, &lo, &hi, &found);
        use = gpuhist_bins_from_minmax(spec->bins, lo, hi, found);
        use.outliers = spec->outliers;
        use.float32_linspace = spec->float32_linspace;
    }
    merge_plan m;
    int64_t *callers_state = result ? result->weight_state : NULL;
    memset(&m, 0, sizeof m);
    if (l.status == GPUHIST_OK) {
        plan_merge(&l, &m, samples, use.bins, use.outliers, result);
        if (l.status == GPUHIST_OK && (st = gpuhist_histogram(ctx, samples, &use, result)))
            fail_ctx(&l, st, ctx, "");
        signature(sig, PHASE_COUNTED, root, samples, spec, result);
    }
    return agree_and_merge(comm, rank, size, root, &l, sig, &m, result, callers_state);
}

gpuhist_status gpuhist_mpi_stream_finish(gpuhist_ctx *ctx, gpuhist_stream *stream, MPI_Comm comm,
                                         int root, const gpuhist_samples *layout,
                                         const gpuhist_bin_spec *spec, gpuhist_result *result)
{
    int rank, size;
    const char *why = usable(comm, &rank, &size);
    if (why) {
        gpuhist_stream_abort(stream);
        return fail_alone(why);
    }
    pthread_once(&g_once, make_globals);
    local l = {GPUHIST_OK, ""};
    if (!stream)
        fail(&l, GPUHIST_ERROR_INVALID_ARGUMENT, "no stream (this rank failed before the merge)");
    else if (!g_globals_ok)
        fail(&l, GPUHIST_ERROR_BACKEND, "could not create the MPI op that merges weight states");
    else if (!ctx || !layout || !spec || !result)
        fail(&l, GPUHIST_ERROR_INVALID_ARGUMENT, "ctx, layout, spec and result must not be NULL");
    else
        check_common(&l, root, size, result);
    merge_plan m;
    memset(&m, 0, sizeof m);
    int64_t *callers_state = result ? result->weight_state : NULL;
    int64_t sig[SIG_N];
    if (l.status == GPUHIST_OK) {
        plan_merge(&l, &m, layout, spec->bins, spec->outliers, result);
        signature(sig, PHASE_COUNTED, root, layout, spec, result);
    }
    gpuhist_status st;
    if (l.status == GPUHIST_OK) {
        /* a failed finish leaves its message on the context (the stream is gone) */
        if ((st = gpuhist_stream_finish(stream, result)) != GPUHIST_OK)
            fail_ctx(&l, st, ctx, "");
    } else {
        gpuhist_stream_abort(stream);
    }
    return agree_and_merge(comm, rank, size, root, &l, sig, &m, result, callers_state);
}
