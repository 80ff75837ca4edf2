/*
 * context.c - contexts: opening a backend (AUTO falls back to the CPU, saying why), the
 * context's settings and what it reports, and the device listing.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdarg.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gpuhist_backend_ops *backend_ops(gpuhist_backend b)
{
    switch (b) {
    case GPUHIST_BACKEND_CPU: return &gpuhist_cpu_backend;
#if GPUHIST_HAVE_CUDA
    case GPUHIST_BACKEND_CUDA: return &gpuhist_cuda_backend;
#endif
#if GPUHIST_HAVE_OPENCL
    case GPUHIST_BACKEND_OPENCL: return &gpuhist_opencl_backend;
#endif
    default: return NULL;
    }
}

/* ---- contexts ------------------------------------------------------------------------------------- */

/* Errors of gpuhist_create(), which has no context to hold them: gpuhist_last_error(NULL). */
static _Thread_local char create_error[512];

void gpuhist_create_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(create_error, sizeof create_error, fmt, ap);
    va_end(ap);
}

static gpuhist_status open_backend(gpuhist_ctx *ctx, gpuhist_backend b, int device)
{
    const gpuhist_backend_ops *ops = backend_ops(b);
    if (!ops)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE,
                            "%s: backend not compiled into this build of gpuhist",
                            gpuhist_backend_name(b));
    gpuhist_status st = ops->open(ctx, device);
    if (st == GPUHIST_OK) {
        ctx->backend = b;
        ctx->ops = ops;
    }
    return st;
}

gpuhist_status gpuhist_create_on(gpuhist_ctx **out, gpuhist_backend backend, int device)
{
    if (!out) {
        snprintf(create_error, sizeof create_error, "gpuhist_create: out is NULL");
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if ((unsigned)backend > GPUHIST_BACKEND_OPENCL) {
        snprintf(create_error, sizeof create_error, "backend: unknown value %d", (int)backend);
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    if (device < 0) {
        snprintf(create_error, sizeof create_error, "device: %d is negative", device);
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    gpuhist_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(create_error, sizeof create_error, "cannot allocate a context");
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    ctx->device = device;
    gpuhist_status st;
    if (backend == GPUHIST_BACKEND_AUTO) {
        /* A GPU when one is usable; otherwise the CPU, saying why. */
        st = open_backend(ctx, GPUHIST_BACKEND_CUDA, device);
        if (st != GPUHIST_OK) {
            snprintf(ctx->note, sizeof ctx->note, "%s; using the CPU", ctx->error);
            ctx->error[0] = '\0';
            st = open_backend(ctx, GPUHIST_BACKEND_CPU, 0);
        }
    } else {
        st = open_backend(ctx, backend, device);
    }
    if (st != GPUHIST_OK) {
        snprintf(create_error, sizeof create_error, "%s", ctx->error);
        free(ctx->build_log);
        free(ctx);
        return st;
    }
    *out = ctx;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_create(gpuhist_ctx **out, gpuhist_backend backend)
{
    return gpuhist_create_on(out, backend, 0);
}

int gpuhist_device_count(gpuhist_backend backend)
{
    switch (backend) {
    case GPUHIST_BACKEND_CPU: return 1;
#if GPUHIST_HAVE_CUDA
    case GPUHIST_BACKEND_CUDA: return gpuhist_cuda_device_count();
#endif
#if GPUHIST_HAVE_OPENCL
    case GPUHIST_BACKEND_OPENCL: return gpuhist_opencl_device_count();
#endif
    default: return 0;
    }
}

int gpuhist_context_device_count(const gpuhist_ctx *ctx)
{
    return !ctx ? 0 : ctx->members ? ctx->member_count : 1;
}

int gpuhist_context_device(const gpuhist_ctx *ctx, int i)
{
    if (!ctx || i < 0 || i >= gpuhist_context_device_count(ctx))
        return -1;
    return ctx->members ? ctx->members[i]->device : ctx->device;
}

void gpuhist_destroy(gpuhist_ctx *ctx)
{
    if (!ctx)
        return;
    if (ctx->ops && ctx->ops->nd_release && ctx->nd_state)
        ctx->ops->nd_release(ctx);
    if (ctx->ops && ctx->ops->close)
        ctx->ops->close(ctx);
    free(ctx->build_log);
    free(ctx);
}

gpuhist_backend gpuhist_context_backend(const gpuhist_ctx *ctx)
{
    return ctx ? ctx->backend : GPUHIST_BACKEND_AUTO;
}

const char *gpuhist_device_name(const gpuhist_ctx *ctx) { return ctx ? ctx->device_name : ""; }
const char *gpuhist_backend_note(const gpuhist_ctx *ctx) { return ctx ? ctx->note : ""; }
const char *gpuhist_last_error(const gpuhist_ctx *ctx) { return ctx ? ctx->error : create_error; }

const char *gpuhist_build_log(const gpuhist_ctx *ctx)
{
    return ctx && ctx->build_log ? ctx->build_log : "";
}

gpuhist_status gpuhist_set_strategy(gpuhist_ctx *ctx, const char *name)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (!name || strcmp(name, "auto") == 0) {
        for (int m = 0; m < ctx->member_count; ++m)
            ctx->members[m]->forced = NULL;
        ctx->forced = NULL;
        return GPUHIST_OK;
    }
    const gpuhist_strategy *s = gpuhist_registry_find(name);
    if (!s)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNKNOWN_STRATEGY,
                            "strategy: no strategy named '%s' (see --list-strategies)", name);
    if (s->backend != ctx->backend)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "strategy: '%s' belongs to the %s backend, this context runs on %s",
                            name, gpuhist_backend_name(s->backend),
                            gpuhist_backend_name(ctx->backend));
    for (int m = 0; m < ctx->member_count; ++m)
        gpuhist_set_strategy(ctx->members[m], name);
    ctx->forced = s;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_set_threads(gpuhist_ctx *ctx, int threads)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (threads < 0 || threads > 4096)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "threads: %d is not in 0..4096", threads);
    ctx->threads = threads;
    /* CPU devices of one context share the cores: each gets its part of them */
    for (int m = 0; m < ctx->member_count; ++m) {
        int t = threads;
        if (ctx->backend == GPUHIST_BACKEND_CPU) {
            t = (threads ? threads : gpuhist_cpu_threads(NULL)) / ctx->member_count;
            t = t < 1 ? 1 : t;
        }
        ctx->members[m]->threads = t;
    }
    return GPUHIST_OK;
}

gpuhist_status gpuhist_set_stream(gpuhist_ctx *ctx, void *cuda_stream)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    if (cuda_stream && ctx->backend != GPUHIST_BACKEND_CUDA)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "stream: a CUDA stream needs the CUDA backend (context is %s)",
                            gpuhist_backend_name(ctx->backend));
    if (cuda_stream && ctx->members)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT,
                            "stream: a CUDA stream belongs to one device; a context of %d "
                            "devices uses each device's default stream",
                            ctx->member_count);
    ctx->stream = cuda_stream;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_set_async(gpuhist_ctx *ctx, int async)
{
    if (!ctx)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    ctx->async = async != 0;
    for (int m = 0; m < ctx->member_count; ++m)
        ctx->members[m]->async = ctx->async;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_list_devices(gpuhist_backend backend, char *buf, size_t size)
{
    if (!buf || size == 0)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    buf[0] = '\0';
    switch (backend) {
    case GPUHIST_BACKEND_CPU: {
        gpuhist_ctx tmp;
        memset(&tmp, 0, sizeof tmp);
        if (gpuhist_cpu_backend.open(&tmp, 0) != GPUHIST_OK)
            return GPUHIST_ERROR_OUT_OF_MEMORY; /* the CPU backend's open fails only there */
        snprintf(buf, size, "0: %s\n", tmp.device_name);
        gpuhist_cpu_backend.close(&tmp);
        return GPUHIST_OK;
    }
#if GPUHIST_HAVE_CUDA
    case GPUHIST_BACKEND_CUDA: return gpuhist_cuda_list_devices(buf, size);
#endif
#if GPUHIST_HAVE_OPENCL
    case GPUHIST_BACKEND_OPENCL: return gpuhist_opencl_list_devices(buf, size);
#endif
    default:
        snprintf(buf, size, "%s: backend not compiled into this build of gpuhist\n",
                 gpuhist_backend_name(backend));
        return GPUHIST_ERROR_NO_DEVICE;
    }
}


gpuhist_status gpuhist_host_alloc(gpuhist_ctx *ctx, size_t bytes, void **out)
{
    if (!ctx || !out)
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (bytes == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_INVALID_ARGUMENT, "host_alloc: 0 bytes");
    gpuhist_status st = gpuhist_need_host_memory(ctx, bytes, "host_alloc");
    if (st != GPUHIST_OK)
        return st;
    if (ctx->ops->host_alloc)
        return ctx->ops->host_alloc(ctx, bytes, out);
    if (!(*out = malloc(bytes)))
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "host_alloc: cannot allocate %zu bytes", bytes);
    return GPUHIST_OK;
}

void gpuhist_host_free(gpuhist_ctx *ctx, void *p)
{
    if (!ctx || !p)
        return;
    if (ctx->ops->host_free)
        ctx->ops->host_free(ctx, p);
    else
        free(p);
}
