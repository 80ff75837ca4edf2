/*
 * context.c - contexts: opening a backend (AUTO falls back to the CPU, saying why), the
 * context's settings and what it reports, and the device listing.
 */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

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
    char error[sizeof create_error];
} member_open;

static void *open_member(void *arg)
{
    member_open *m = arg;
    m->status = gpuhist_create_on(&m->ctx, m->backend, m->device);
    if (m->status != GPUHIST_OK)
        memcpy(m->error, create_error, sizeof m->error); /* this thread's message */
    return NULL;
}

gpuhist_status gpuhist_create_multi(gpuhist_ctx **out, gpuhist_backend backend,
                                    const int *devices, int count)
{
    if (!out) {
        snprintf(create_error, sizeof create_error, "gpuhist_create_multi: out is NULL");
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (count < 0 || (count > 0 && !devices)) {
        snprintf(create_error, sizeof create_error,
                 "devices: %s", count < 0 ? "a negative count" : "NULL with a count above 0");
        return GPUHIST_ERROR_INVALID_ARGUMENT;
    }
    if ((unsigned)backend > GPUHIST_BACKEND_OPENCL) {
        snprintf(create_error, sizeof create_error, "backend: unknown value %d", (int)backend);
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
        snprintf(create_error, sizeof create_error, "cannot allocate a context");
        return GPUHIST_ERROR_OUT_OF_MEMORY;
    }
    ctx->members = members;
    ctx->ops = &gpuhist_multi_ops;
    member_open *open = calloc((size_t)n, sizeof *open);
    if (!open) {
        gpuhist_destroy(ctx);
        snprintf(create_error, sizeof create_error, "cannot allocate a context");
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
            memcpy(create_error, open[m].error, sizeof create_error);
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
        gpuhist_cpu_backend.open(&tmp, 0);
        snprintf(buf, size, "0: %s\n", tmp.device_name);
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
