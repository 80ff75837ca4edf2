/*
 * common.c - small helpers shared by the core and the backends: error recording, thread count,
 * the value fold and the outlier policy, generic sample access, a clock.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

gpuhist_status gpuhist_fail(gpuhist_ctx *ctx, gpuhist_status status, const char *fmt, ...)
{
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* The online core count, read again at most once a second: sysconf reads a /sys file (~6 us),
 * which small calls paid every time; cores come and go rarely. */
int gpuhist_cpu_threads(const gpuhist_ctx *ctx)
{
    static _Atomic long online;
    static _Atomic long long read_at_ms;
    if (ctx && ctx->threads > 0)
        return ctx->threads;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const long long now_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    long n = atomic_load_explicit(&online, memory_order_relaxed);
    if (n <= 0 || now_ms - atomic_load_explicit(&read_at_ms, memory_order_relaxed) >= 1000) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        if (n <= 0)
            n = 1;
        atomic_store_explicit(&online, n, memory_order_relaxed);
        atomic_store_explicit(&read_at_ms, now_ms, memory_order_relaxed);
    }
    return (int)n;
}

uint32_t gpuhist_small_value_count(gpuhist_dtype dtype)
{
    switch (dtype) {
    case GPUHIST_U8:
    case GPUHIST_I8:
        return 256u;
    case GPUHIST_U16:
    case GPUHIST_I16:
    case GPUHIST_F16:
    case GPUHIST_BF16:
        return 65536u;
    default:
        return 0u;
    }
}

void gpuhist_fold_values(const gpuhist_plan *plan, const uint64_t *values, uint64_t *slots)
{
    uint32_t nvalues = gpuhist_small_value_count(plan->dtype);
    for (uint32_t v = 0; v < nvalues; ++v) {
        uint32_t slot = gpuhist_slot_small_value(&plan->map, plan->edges, v);
        for (uint32_t k = 0; k < plan->active; ++k)
            slots[(size_t)k * plan->slots + slot] += values[(size_t)k * nvalues + v];
    }
}

void gpuhist_finish_slots(const gpuhist_plan *plan, const uint64_t *slots, uint64_t *counts,
                          gpuhist_result *result)
{
    uint32_t bins = plan->bins;
    const int add = result->accumulate; /* add into counts and tallies (gpuhist.h) */
    for (uint32_t k = 0; k < plan->active; ++k) {
        const uint64_t *s = slots + (size_t)k * plan->slots;
        uint64_t *c = counts + (size_t)k * bins;
        if (add) {
            for (uint32_t i = 0; i < bins; ++i)
                c[i] += s[i];
        } else {
            memcpy(c, s, (size_t)bins * sizeof *c);
        }
        uint64_t under = s[GPUHIST_SLOT_UNDERFLOW(bins)];
        uint64_t over = s[GPUHIST_SLOT_OVERFLOW(bins)];
        if (plan->outliers == GPUHIST_OUTLIERS_CLAMP) {
            c[0] += under;
            c[bins - 1] += over;
        }
        const uint64_t t[4] = {under, over, s[GPUHIST_SLOT_NAN(bins)], plan->pixels};
        uint64_t *out[4] = {&result->underflow[k], &result->overflow[k], &result->nan[k],
                            &result->total[k]};
        for (int j = 0; j < 4; ++j)
            *out[j] = (add ? *out[j] : 0u) + t[j];
    }
}

size_t gpuhist_weight_acc_words(const gpuhist_plan *plan)
{
    if (!plan->weights)
        return 0;
    const size_t records = (size_t)plan->active * plan->slots;
    return records * (GPUHIST_SUM_RECORD(plan) + (plan->want_squares ? GPUHIST_SQUARE_RECORD : 0));
}

void gpuhist_record_add(int64_t *a, const int64_t *b, size_t words)
{
    for (size_t i = 0; i + 1 < words; ++i)
        a[i] += b[i];
    a[words - 1] |= b[words - 1];
}

/* One bin's sum from its record (copied: rounding works in place). */
static double record_sum(const int64_t *rec, size_t words, int bias, int64_t *scratch)
{
    const gh_u32 flags = (gh_u32)rec[words - 1];
    if (flags)
        return gh_xsum_special(flags);
    memcpy(scratch, rec, (words - 1) * sizeof *scratch);
    return gh_xsum_to_double(scratch, (gh_u32)(words - 1), bias);
}

/* Sums of one kind (weights or squares) of every bin of every channel: `acc` holds active *
 * slots records of `words` int64. */
static void finish_records(const gpuhist_plan *plan, const int64_t *acc, size_t words, int bias,
                           double *out)
{
    const uint32_t bins = plan->bins;
    int64_t scratch[GH_XSUM_LIMBS_F64 + 1], low[GH_XSUM_LIMBS_F64 + 1],
        high[GH_XSUM_LIMBS_F64 + 1];
    for (uint32_t k = 0; k < plan->active; ++k) {
        const int64_t *r = acc + (size_t)k * plan->slots * words;
        double *o = out + (size_t)k * bins;
        for (uint32_t i = 0; i < bins; ++i)
            o[i] = record_sum(r + (size_t)i * words, words, bias, scratch);
        if (plan->outliers == GPUHIST_OUTLIERS_CLAMP) {
            /* the outliers' weights join the end bins exactly, before the one rounding */
            memcpy(low, r, words * sizeof *low);
            gpuhist_record_add(low, r + (size_t)GPUHIST_SLOT_UNDERFLOW(bins) * words, words);
            memcpy(high, r + (size_t)(bins - 1) * words, words * sizeof *high);
            if (bins == 1)
                memcpy(high, low, words * sizeof *high);
            gpuhist_record_add(high, r + (size_t)GPUHIST_SLOT_OVERFLOW(bins) * words, words);
            o[0] = record_sum(low, words, bias, scratch);
            o[bins - 1] = record_sum(high, words, bias, scratch);
        }
    }
}

/* `records` records of `words` int64 from `acc` into `out`, normalised: copied, or added
 * (limbs added, flags OR'ed) when accumulating. */
static void export_records(int64_t *out, const int64_t *acc, size_t records, size_t words,
                           int add)
{
    if (!add)
        memcpy(out, acc, records * words * sizeof *out);
    for (size_t r = 0; r < records; ++r) {
        if (add)
            gpuhist_record_add(out + r * words, acc + r * words, words);
        gh_xsum_normalize(out + r * words, (gh_u32)(words - 1));
    }
}

/* result->weight_state: the records of the accumulator, normalised (added into the state when
 * accumulating), squares only when the result asks for them (parts.c reads this layout). */
static void export_state(const gpuhist_plan *plan, const int64_t *acc, gpuhist_result *result)
{
    const size_t records = (size_t)plan->active * plan->slots;
    const size_t sum_words = GPUHIST_SUM_RECORD(plan);
    const int add = result->accumulate;
    export_records(result->weight_state, acc, records, sum_words, add);
    if (plan->want_squares && result->sums_squared)
        export_records(result->weight_state + records * sum_words, acc + records * sum_words,
                       records, GPUHIST_SQUARE_RECORD, add);
}

void gpuhist_finish_sums(const gpuhist_plan *plan, const int64_t *acc, gpuhist_result *result)
{
    if (!plan->weights)
        return;
    if (result->weight_state) {
        export_state(plan, acc, result);
        if (result->accumulate) /* the sums of everything added so far */
            acc = result->weight_state;
    }
    const size_t sum_words = GPUHIST_SUM_RECORD(plan);
    finish_records(plan, acc, sum_words, plan->weight_bias, result->sums);
    if (plan->want_squares && result->sums_squared)
        finish_records(plan, acc + (size_t)plan->active * plan->slots * sum_words,
                       GPUHIST_SQUARE_RECORD, GH_XSUM_BIAS_F64, result->sums_squared);
}

gpuhist_sample_value gpuhist_read_sample(gpuhist_dtype dtype, const void *p)
{
    gpuhist_sample_value x = {0, 0, 0.0, 0, 0};
    switch (dtype) {
    case GPUHIST_U8: { uint8_t v; memcpy(&v, p, 1); x.i = v; break; }
    case GPUHIST_I8: { int8_t v; memcpy(&v, p, 1); x.i = v; break; }
    case GPUHIST_U16: { uint16_t v; memcpy(&v, p, 2); x.i = v; break; }
    case GPUHIST_I16: { int16_t v; memcpy(&v, p, 2); x.i = v; break; }
    case GPUHIST_U32: { uint32_t v; memcpy(&v, p, 4); x.i = v; break; }
    case GPUHIST_I32: { int32_t v; memcpy(&v, p, 4); x.i = v; break; }
    case GPUHIST_I64: { int64_t v; memcpy(&v, p, 8); x.i = v; break; }
    case GPUHIST_U64: { uint64_t v; memcpy(&v, p, 8); x.u = v; x.is_unsigned64 = 1; break; }
    case GPUHIST_F32: { float v; memcpy(&v, p, 4); x.f = v; x.is_float = 1; break; }
    case GPUHIST_F64: { double v; memcpy(&v, p, 8); x.f = v; x.is_float = 1; break; }
    case GPUHIST_F16: { uint16_t v; memcpy(&v, p, 2); x.f = gpuhist_f16_to_f32(v); x.is_float = 1; break; }
    case GPUHIST_BF16: { uint16_t v; memcpy(&v, p, 2); x.f = gpuhist_bf16_to_f32(v); x.is_float = 1; break; }
    default: break;
    }
    return x;
}

uint32_t gpuhist_slot_of(const gpuhist_plan *plan, const void *p)
{
    const gpuhist_binmap *m = &plan->map;
    const double *e = plan->edges;
    switch (plan->dtype) {
    case GPUHIST_U8: { uint8_t v; memcpy(&v, p, 1); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_I8: { int8_t v; memcpy(&v, p, 1); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_U16: { uint16_t v; memcpy(&v, p, 2); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_I16: { int16_t v; memcpy(&v, p, 2); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_U32: { uint32_t v; memcpy(&v, p, 4); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_I32: { int32_t v; memcpy(&v, p, 4); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_U64: { uint64_t v; memcpy(&v, p, 8); return gpuhist_slot_u64(m, e, v); }
    case GPUHIST_I64: { int64_t v; memcpy(&v, p, 8); return gpuhist_slot_i64(m, e, v); }
    case GPUHIST_F32: { float v; memcpy(&v, p, 4); return gpuhist_slot_f32(m, e, v); }
    case GPUHIST_F64: { double v; memcpy(&v, p, 8); return gpuhist_slot_f64(m, e, v); }
    case GPUHIST_F16: { uint16_t v; memcpy(&v, p, 2); return gpuhist_slot_f32(m, e, gpuhist_f16_to_f32(v)); }
    case GPUHIST_BF16: { uint16_t v; memcpy(&v, p, 2); return gpuhist_slot_f32(m, e, gpuhist_bf16_to_f32(v)); }
    default: return GPUHIST_SLOT_NAN(plan->bins);
    }
}

double gpuhist_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double gpuhist_i64_to_double_down(int64_t x)
{
    double d = (double)x;
    if (gpuhist_cmp_i64_f64(x, d) < 0) /* rounded up: step one double down */
        d = nextafter(d, -INFINITY);
    return d;
}

double gpuhist_i64_to_double_up(int64_t x)
{
    double d = (double)x;
    if (gpuhist_cmp_i64_f64(x, d) > 0)
        d = nextafter(d, INFINITY);
    return d;
}

double gpuhist_u64_to_double_down(uint64_t x)
{
    double d = (double)x;
    if (gpuhist_cmp_u64_f64(x, d) < 0)
        d = nextafter(d, -INFINITY);
    return d;
}

double gpuhist_u64_to_double_up(uint64_t x)
{
    double d = (double)x;
    if (gpuhist_cmp_u64_f64(x, d) > 0)
        d = nextafter(d, INFINITY);
    return d;
}

/* ---- host memory ---------------------------------------------------------------------------- */

/* A cgroup (v2, else v1) limit minus its usage; UINT64_MAX when there is no limit. */
static uint64_t cgroup_headroom(void)
{
    static const char *const pairs[][2] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; ++i) {
        unsigned long long limit, used;
        FILE *f = fopen(pairs[i][0], "r");
        if (!f)
            continue;
        int ok = fscanf(f, "%llu", &limit) == 1; /* "max" (no limit) does not scan */
        fclose(f);
        if (!ok)
            return UINT64_MAX;
        f = fopen(pairs[i][1], "r");
        if (!f)
            return UINT64_MAX;
        ok = fscanf(f, "%llu", &used) == 1;
        fclose(f);
        if (!ok || limit >= (1ull << 62))
            return UINT64_MAX;
        return limit > used ? limit - used : 0;
    }
    return UINT64_MAX;
}

uint64_t gpuhist_host_memory_available(void)
{
    uint64_t avail = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kib;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
                avail = (uint64_t)kib * 1024u;
                break;
            }
        fclose(f);
    }
#ifdef _SC_AVPHYS_PAGES
    if (avail == 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0)
            avail = (uint64_t)pages * (uint64_t)size;
    }
#endif
    uint64_t cg = cgroup_headroom();
    if (avail == 0)
        return cg == UINT64_MAX ? 0 : cg;
    return cg < avail ? cg : avail;
}

/*
 * The last answer of gpuhist_host_memory_available() and when it was read (CLOCK_MONOTONIC ns),
 * shared by every context of the process. Reading /proc/meminfo and the cgroup files costs
 * 50-100 us, as much as a small histogram; a request of at most half the last answer, asked
 * within HOST_MEMORY_TTL_NS of it, is granted from the cache. Any other request reads afresh, so
 * a request that does not fit is always refused on a fresh reading (the same rule and message as
 * without the cache); the margin covers what others may have taken since the last reading.
 */
#define HOST_MEMORY_TTL_NS 100000000ull
static pthread_mutex_t host_memory_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t host_memory_avail, host_memory_when;
static int host_memory_known;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

gpuhist_status gpuhist_need_host_memory(gpuhist_ctx *ctx, uint64_t bytes, const char *what)
{
    const uint64_t now = monotonic_ns();
    pthread_mutex_lock(&host_memory_lock);
    const int fresh = host_memory_known && now - host_memory_when < HOST_MEMORY_TTL_NS;
    const uint64_t cached = host_memory_avail;
    pthread_mutex_unlock(&host_memory_lock);
    if (fresh && (cached == 0 || bytes <= cached / 2))
        return GPUHIST_OK;
    uint64_t avail = gpuhist_host_memory_available();
    pthread_mutex_lock(&host_memory_lock);
    host_memory_avail = avail;
    host_memory_when = monotonic_ns();
    host_memory_known = 1;
    pthread_mutex_unlock(&host_memory_lock);
    if (avail == 0 || bytes <= avail)
        return GPUHIST_OK;
    return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                        "%s needs %.1f GiB of host memory, only %.1f GiB is available: use fewer "
                        "bins or channels",
                        what, (double)bytes / 1073741824.0, (double)avail / 1073741824.0);
}

void gpuhist_fork_join(void *shares, size_t size, int n, void *(*fn)(void *))
{
    enum { ON_STACK = 64 };
    pthread_t stack_tids[ON_STACK];
    int stack_started[ON_STACK];
    pthread_t *tids = stack_tids;
    int *started = stack_started;
    unsigned char *at = shares;
    if (n > ON_STACK) {
        tids = malloc((size_t)n * sizeof *tids);
        started = malloc((size_t)n * sizeof *started);
    }
    const int threads = tids && started; /* else every share runs on the caller */
    for (int t = 1; t < n; ++t)
        if (threads)
            started[t] = pthread_create(&tids[t], NULL, fn, at + (size_t)t * size) == 0;
    fn(at);
    for (int t = 1; t < n; ++t) {
        if (threads && started[t])
            pthread_join(tids[t], NULL);
        else
            fn(at + (size_t)t * size);
    }
    if (n > ON_STACK) {
        free(tids);
        free(started);
    }
}
