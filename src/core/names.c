/*
 * names.c - names and versions: status strings, the sample-type table, backend names, and the
 * convenience constructors of specs, sample descriptions and results.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names and versions ------------------------------------------------------------------------ */

const char *gpuhist_version(void) { return GPUHIST_VERSION_STRING; }
unsigned gpuhist_version_number(void) { return GPUHIST_VERSION_NUMBER; }

const char *gpuhist_status_string(gpuhist_status status)
{
    switch (status) {
    case GPUHIST_OK: return "ok";
    case GPUHIST_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GPUHIST_ERROR_UNSUPPORTED: return "unsupported by the chosen strategy or backend";
    case GPUHIST_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GPUHIST_ERROR_NO_DEVICE: return "no device for this backend";
    case GPUHIST_ERROR_BACKEND: return "backend failure";
    case GPUHIST_ERROR_UNKNOWN_STRATEGY: return "unknown strategy";
    case GPUHIST_ERROR_BUILD: return "kernel build failed";
    case GPUHIST_ERROR_BUSY: return "context in use by another thread";
    }
    return "unknown status";
}

static const struct {
    const char *name, *alias;
    size_t size;
} dtype_table[GPUHIST_DTYPE_COUNT] = {
    {"u8", "uint8", 1},   {"i8", "int8", 1},    {"u16", "uint16", 2}, {"i16", "int16", 2},
    {"u32", "uint32", 4}, {"i32", "int32", 4},  {"u64", "uint64", 8}, {"i64", "int64", 8},
    {"f32", "float32", 4}, {"f64", "float64", 8}, {"f16", "float16", 2}, {"bf16", "bfloat16", 2},
};

const char *gpuhist_dtype_name(gpuhist_dtype d)
{
    return (unsigned)d < GPUHIST_DTYPE_COUNT ? dtype_table[d].name : "?";
}

size_t gpuhist_dtype_size(gpuhist_dtype d)
{
    return (unsigned)d < GPUHIST_DTYPE_COUNT ? dtype_table[d].size : 0;
}

int gpuhist_dtype_parse(const char *name, gpuhist_dtype *out)
{
    if (!name)
        return 0;
    for (int d = 0; d < GPUHIST_DTYPE_COUNT; ++d) {
        if (strcmp(name, dtype_table[d].name) == 0 || strcmp(name, dtype_table[d].alias) == 0) {
            if (out)
                *out = (gpuhist_dtype)d;
            return 1;
        }
    }
    return 0;
}

static const char *const backend_names[] = {"auto", "cpu", "cuda", "opencl"};

const char *gpuhist_backend_name(gpuhist_backend b)
{
    return (unsigned)b < 4 ? backend_names[b] : "?";
}

int gpuhist_backend_parse(const char *name, gpuhist_backend *out)
{
    for (int b = 0; name && b < 4; ++b) {
        if (strcmp(name, backend_names[b]) == 0) {
            if (out)
                *out = (gpuhist_backend)b;
            return 1;
        }
    }
    return 0;
}

int gpuhist_backend_compiled(gpuhist_backend b)
{
    switch (b) {
    case GPUHIST_BACKEND_AUTO:
    case GPUHIST_BACKEND_CPU: return 1;
    case GPUHIST_BACKEND_CUDA: return GPUHIST_HAVE_CUDA;
    case GPUHIST_BACKEND_OPENCL: return GPUHIST_HAVE_OPENCL;
    }
    return 0;
}

/* ---- convenience constructors -------------------------------------------------------------------- */

gpuhist_bin_spec gpuhist_bins_even(uint32_t bins, double lower, double upper)
{
    gpuhist_bin_spec s;
    memset(&s, 0, sizeof s);
    s.kind = GPUHIST_BINS_EVEN;
    s.bins = bins;
    s.lower = lower;
    s.upper = upper;
    return s;
}

gpuhist_bin_spec gpuhist_bins_auto(uint32_t bins)
{
    gpuhist_bin_spec s = gpuhist_bins_even(bins, 0.0, 0.0);
    s.auto_range = 1;
    s.last_edge_inclusive = 1;
    s.float32_linspace = 1;
    return s;
}

gpuhist_bin_spec gpuhist_bins_edges(uint32_t bins, const double *edges)
{
    gpuhist_bin_spec s = gpuhist_bins_even(bins, 0.0, 0.0);
    s.kind = GPUHIST_BINS_EDGES;
    s.edges = edges;
    return s;
}

gpuhist_bin_spec gpuhist_bins_integer(uint32_t bins, int64_t lower)
{
    gpuhist_bin_spec s = gpuhist_bins_even(bins, 0.0, 0.0);
    s.kind = GPUHIST_BINS_INTEGER;
    s.integer_lower = lower;
    return s;
}

gpuhist_samples gpuhist_samples_1d(const void *data, gpuhist_dtype dtype, uint64_t count)
{
    gpuhist_samples s;
    memset(&s, 0, sizeof s);
    s.data = data;
    s.dtype = dtype;
    s.count = count;
    s.channels = 1;
    return s;
}

gpuhist_result gpuhist_result_host(uint64_t *counts)
{
    gpuhist_result r;
    memset(&r, 0, sizeof r);
    r.counts = counts;
    r.counts_location = GPUHIST_MEMORY_HOST;
    return r;
}

