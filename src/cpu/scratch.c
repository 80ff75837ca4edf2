/*
 * scratch.c - the CPU counting threads' scratch kept from call to call (cpu_kernels.h's
 * gpuhist_cpu_scratch): one entry per counting thread (32-bit sub-counters, a 64-bit histogram,
 * cpu-weighted's private records), grown on demand, released by the backend
 * (cpu_backend.c) when a histogram ends holding too much or the context is destroyed.
 *
 * The set lives at the start of the CPU context's state (ctx->backend_state begins with a
 * gpuhist_cpu_scratch_set, cpu_backend.c's cpu_state), so the strategies reach it from the
 * context without depending on the backend's file. Thread t of a call touches only entry t; a
 * context runs one call at a time (SEMANTICS.md), so no lock.
 */
#include "cpu_kernels.h"

#include <stdlib.h>
#include <string.h>

gpuhist_cpu_scratch *gpuhist_cpu_scratch_for(gpuhist_ctx *ctx, int threads)
{
    gpuhist_cpu_scratch_set *k = ctx->backend_state;
    if (!k || threads < 1)
        return NULL;
    if (threads > k->n) {
        gpuhist_cpu_scratch *n = realloc(k->entry, (size_t)threads * sizeof *n);
        if (!n)
            return NULL;
        memset(n + k->n, 0, (size_t)(threads - k->n) * sizeof *n);
        k->entry = n;
        k->n = threads;
    }
    return k->entry;
}

void gpuhist_cpu_settle_entry(gpuhist_cpu_scratch *sc, int discard)
{
    if (!sc->pending_out)
        return;
    if (!discard)
        for (size_t i = 0; i < sc->pending_entries; ++i)
            sc->pending_out[i] += sc->table[i];
    memset(sc->table, 0, sc->pending_entries * sizeof *sc->table);
    sc->pending_out = NULL;
    sc->pending_entries = 0;
    sc->pending_pixels = 0;
}

void gpuhist_cpu_settle(gpuhist_cpu_scratch_set *set, int discard)
{
    for (int t = 0; t < set->n; ++t)
        gpuhist_cpu_settle_entry(&set->entry[t], discard);
}

void gpuhist_cpu_scratch_release(gpuhist_cpu_scratch_set *set)
{
    for (int t = 0; t < set->n; ++t) {
        free(set->entry[t].table);
        free(set->entry[t].hist);
        free(set->entry[t].records);
    }
    free(set->entry);
    set->entry = NULL;
    set->n = 0;
}

size_t gpuhist_cpu_scratch_bytes(const gpuhist_cpu_scratch_set *set)
{
    size_t b = 0;
    for (int t = 0; t < set->n; ++t)
        b += set->entry[t].table_entries * 4u + set->entry[t].hist_entries * 8u +
             set->entry[t].records_words * 8u;
    return b;
}

void *gpuhist_cpu_kept_zero(void *buf, size_t *cap, size_t n, size_t size, int clear)
{
    if (*cap < n) {
        free(buf);
        *cap = 0;
        if (!(buf = calloc(n, size)))
            return NULL;
        *cap = n;
        return buf;
    }
    if (clear)
        memset(buf, 0, n * size);
    return buf;
}

uint32_t *gpuhist_cpu_scratch_table(gpuhist_cpu_scratch *sc, size_t entries)
{
    if (!sc)
        return calloc(entries ? entries : 1u, sizeof(uint32_t));
    /* calloc: zero, and the invariant (all zero between uses) holds from here on */
    return sc->table = gpuhist_cpu_kept_zero(sc->table, &sc->table_entries, entries,
                                             sizeof(uint32_t), 0);
}

uint64_t *gpuhist_cpu_scratch_hist(gpuhist_cpu_scratch *sc, size_t entries)
{
    return sc->hist =
               gpuhist_cpu_kept_zero(sc->hist, &sc->hist_entries, entries, sizeof(uint64_t), 1);
}

int64_t *gpuhist_cpu_scratch_records(gpuhist_cpu_scratch *sc, size_t words)
{
    /* calloc: zero, and the invariant (all zero between uses) holds from here on */
    return sc->records = gpuhist_cpu_kept_zero(sc->records, &sc->records_words, words,
                                               sizeof(int64_t), 0);
}
