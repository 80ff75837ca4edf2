/*
 * test_faults_cuda.c - CUDA runtime failures at every call site of the CUDA backend.
 *
 * The test is linked with -Wl,--wrap for the CUDA runtime calls the backend makes (device and
 * page-locked allocation, copies, memsets, event records, synchronisations, launch checks,
 * cluster launches, kernel attributes, event creation), so every such call of the library goes
 * through the wrappers below, which fail the Nth one when armed: allocations with
 * cudaErrorMemoryAllocation, everything else with cudaErrorLaunchOutOfResources (a non-sticky
 * error, as a failed launch or copy reports; a sticky error such as an illegal address leaves
 * the process's CUDA context unusable, and no library can recover from that).
 *
 * For every CUDA strategy (the first of a few specs it accepts) and each workload - a one-shot
 * call on pageable host data cut into several staging chunks, one on page-locked host data, a
 * stream fed through lent buffers and a feed, and an auto-range call - it counts the wrapped
 * calls of a clean run, then runs it once per call with that one failing. The call must return
 * OUT_OF_MEMORY (an allocation) or BACKEND (anything else) with a message, or succeed with the
 * right counts (the failed call was one whose result is not needed, e.g. clearing an error);
 * and the same context must give the right counts afterwards. Context creation is swept the
 * same way. compute-sanitizer memcheck over this test (scripts/gpu-check) finds device leaks on
 * the error paths.
 *
 * GPUHIST_FAULTS_AUTO_ONLY=1 sweeps the automatic choice only (for the sanitizer run). Exit 77
 * (skipped) without a CUDA device.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "gpuhist.h"
#include "check.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the wrappers ------------------------------------------------------------------------------ */

static long g_count;   /* wrapped calls seen since arming */
static long g_fail_at; /* fail the call with this number (1-based), 0 = never */
static int g_failed;   /* the armed call was failed */
static int g_failed_alloc;

static int should_fail(int alloc)
{
    ++g_count;
    if (g_fail_at && g_count == g_fail_at) {
        g_failed = 1;
        g_failed_alloc = alloc;
        return 1;
    }
    return 0;
}

#define FAIL_ALLOC cudaErrorMemoryAllocation
#define FAIL_OTHER cudaErrorLaunchOutOfResources

cudaError_t __real_cudaMalloc(void **p, size_t n);
cudaError_t __real_cudaMallocHost(void **p, size_t n);
cudaError_t __real_cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                   cudaStream_t s);
cudaError_t __real_cudaMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w,
                                     size_t h, enum cudaMemcpyKind k, cudaStream_t s);
cudaError_t __real_cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s);
cudaError_t __real_cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t __real_cudaEventSynchronize(cudaEvent_t e);
cudaError_t __real_cudaStreamSynchronize(cudaStream_t s);
cudaError_t __real_cudaDeviceSynchronize(void);
cudaError_t __real_cudaGetLastError(void);
cudaError_t __real_cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags);
cudaError_t __real_cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute a, int v);
cudaError_t __real_cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f, void **args);

cudaError_t __wrap_cudaMalloc(void **p, size_t n)
{
    if (should_fail(1)) {
        *p = NULL;
        return FAIL_ALLOC;
    }
    return __real_cudaMalloc(p, n);
}
cudaError_t __wrap_cudaMallocHost(void **p, size_t n)
{
    if (should_fail(1)) {
        *p = NULL;
        return FAIL_ALLOC;
    }
    return __real_cudaMallocHost(p, n);
}
cudaError_t __wrap_cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                   cudaStream_t s)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaMemcpyAsync(dst, src, n, k, s);
}
cudaError_t __wrap_cudaMemcpy2DAsync(void *dst, size_t dp, const void *src, size_t sp, size_t w,
                                     size_t h, enum cudaMemcpyKind k, cudaStream_t s)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaMemcpy2DAsync(dst, dp, src, sp, w, h, k, s);
}
cudaError_t __wrap_cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaMemsetAsync(p, v, n, s);
}
cudaError_t __wrap_cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaEventRecord(e, s);
}
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t e)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaEventSynchronize(e);
}
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t s)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaStreamSynchronize(s);
}
cudaError_t __wrap_cudaDeviceSynchronize(void)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaDeviceSynchronize();
}
/* The launch check after every <<<...>>>: failing it is what a failed launch looks like. */
cudaError_t __wrap_cudaGetLastError(void)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaGetLastError();
}
cudaError_t __wrap_cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaEventCreateWithFlags(e, flags);
}
cudaError_t __wrap_cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute a, int v)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaFuncSetAttribute(f, a, v);
}
cudaError_t __wrap_cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f, void **args)
{
    return should_fail(0) ? FAIL_OTHER : __real_cudaLaunchKernelExC(c, f, args);
}

static void arm(long at)
{
    g_count = 0;
    g_fail_at = at;
    g_failed = g_failed_alloc = 0;
}

/* ---- the workloads ----------------------------------------------------------------------------- */

enum { PIXELS = 6000, MAX_BINS = 1 << 17 };

typedef struct {
    gpuhist_dtype dtype;
    uint32_t bins;
    const void *data;    /* pageable */
    void *locked;        /* the same bytes in gpuhist_host_alloc memory */
    size_t bytes;
    uint64_t *want;      /* bins counts from cpu-reference */
    uint64_t want_under, want_over, want_nan;
    uint64_t *want_auto; /* auto range (bins), cpu-reference */
} spec_case;

static float g_f32[PIXELS];
static uint8_t g_u8[PIXELS];
static uint16_t g_u16[PIXELS];

typedef gpuhist_status (*workload)(gpuhist_ctx *ctx, const spec_case *c, uint64_t *counts,
                                   gpuhist_result *r);

static gpuhist_bin_spec spec_of(const spec_case *c)
{
    if (c->dtype == GPUHIST_F32)
        return gpuhist_bins_even(c->bins, 0.0, 1.0);
    return gpuhist_bins_even(c->bins, 0.0, c->dtype == GPUHIST_U8 ? 256.0 : 65536.0);
}

static gpuhist_status one_shot_pageable(gpuhist_ctx *ctx, const spec_case *c, uint64_t *counts,
                                        gpuhist_result *r)
{
    gpuhist_samples s = gpuhist_samples_1d(c->data, c->dtype, PIXELS);
    gpuhist_bin_spec b = spec_of(c);
    *r = gpuhist_result_host(counts);
    return gpuhist_histogram(ctx, &s, &b, r);
}

static gpuhist_status one_shot_locked(gpuhist_ctx *ctx, const spec_case *c, uint64_t *counts,
                                      gpuhist_result *r)
{
    gpuhist_samples s = gpuhist_samples_1d(c->locked, c->dtype, PIXELS);
    gpuhist_bin_spec b = spec_of(c);
    *r = gpuhist_result_host(counts);
    return gpuhist_histogram(ctx, &s, &b, r);
}

static gpuhist_status auto_range(gpuhist_ctx *ctx, const spec_case *c, uint64_t *counts,
                                 gpuhist_result *r)
{
    gpuhist_samples s = gpuhist_samples_1d(c->data, c->dtype, PIXELS);
    gpuhist_bin_spec b = gpuhist_bins_auto(c->bins);
    *r = gpuhist_result_host(counts);
    return gpuhist_histogram(ctx, &s, &b, r);
}

static gpuhist_status streamed(gpuhist_ctx *ctx, const spec_case *c, uint64_t *counts,
                               gpuhist_result *r)
{
    gpuhist_samples lay = gpuhist_samples_1d(NULL, c->dtype, 0);
    gpuhist_bin_spec b = spec_of(c);
    gpuhist_stream *st;
    gpuhist_status rc = gpuhist_stream_begin(ctx, &lay, &b, GPUHIST_MEMORY_HOST, &st);
    if (rc != GPUHIST_OK)
        return rc;
    const size_t third = c->bytes / 3, px = PIXELS / 3;
    for (int part = 0; part < 2 && rc == GPUHIST_OK; ++part) {
        void *buf;
        rc = gpuhist_stream_buffer(st, third, &buf);
        if (rc == GPUHIST_OK) {
            memcpy(buf, (const unsigned char *)c->data + part * third, third);
            rc = gpuhist_stream_submit(st, buf, px);
        }
    }
    if (rc == GPUHIST_OK)
        rc = gpuhist_stream_feed(st, (const unsigned char *)c->data + 2 * third, PIXELS - 2 * px);
    if (rc != GPUHIST_OK) {
        gpuhist_stream_abort(st);
        return rc;
    }
    *r = gpuhist_result_host(counts);
    return gpuhist_stream_finish(st, r);
}

static int right(const spec_case *c, workload w, const uint64_t *counts, const gpuhist_result *r)
{
    if (w == auto_range)
        return memcmp(counts, c->want_auto, c->bins * sizeof *counts) == 0;
    return memcmp(counts, c->want, c->bins * sizeof *counts) == 0 &&
           r->underflow[0] == c->want_under && r->overflow[0] == c->want_over &&
           r->nan[0] == c->want_nan && r->total[0] == PIXELS;
}

/* Run `w` with every wrapped CUDA call failing in turn; @return the number of calls. */
static long sweep(const char *name, gpuhist_ctx *ctx, const spec_case *c, workload w,
                  uint64_t *counts)
{
    gpuhist_result r;
    arm(0);
    check_context("%s: clean run", name);
    if (!CHECK_EQ_INT(w(ctx, c, counts, &r), GPUHIST_OK) || !CHECK(right(c, w, counts, &r)))
        return 0;
    const long n = g_count;
    long errors = 0;
    for (long k = 1; k <= n; ++k) {
        check_context("%s: CUDA call %ld of %ld fails", name, k, n);
        memset(counts, 0xA5, c->bins * sizeof *counts);
        arm(k);
        gpuhist_status rc = w(ctx, c, counts, &r);
        const int alloc = g_failed_alloc;
        arm(0);
        if (rc == GPUHIST_OK) {
            CHECK(right(c, w, counts, &r)); /* the failed call was not needed: still right */
        } else {
            ++errors;
            CHECK_EQ_INT(rc, alloc ? GPUHIST_ERROR_OUT_OF_MEMORY : GPUHIST_ERROR_BACKEND);
            CHECK(strstr(gpuhist_last_error(ctx), "cuda") != NULL);
        }
        /* the context still works */
        memset(counts, 0, c->bins * sizeof *counts);
        if (CHECK_EQ_INT(w(ctx, c, counts, &r), GPUHIST_OK))
            CHECK(right(c, w, counts, &r));
    }
    printf("%-58s %4ld CUDA calls, each failed once: %ld errors, %ld harmless\n", name, n, errors,
           n - errors);
    return n;
}

static void reference(spec_case *c)
{
    gpuhist_ctx *cpu;
    if (gpuhist_create(&cpu, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_strategy(cpu, "cpu-reference") != GPUHIST_OK) {
        fprintf(stderr, "cannot create the CPU reference context\n");
        exit(1);
    }
    gpuhist_result r;
    if (one_shot_pageable(cpu, c, c->want, &r) != GPUHIST_OK ||
        auto_range(cpu, c, c->want_auto, &r) != GPUHIST_OK) {
        fprintf(stderr, "cpu-reference failed: %s\n", gpuhist_last_error(cpu));
        exit(1);
    }
    one_shot_pageable(cpu, c, c->want, &r);
    c->want_under = r.underflow[0];
    c->want_over = r.overflow[0];
    c->want_nan = r.nan[0];
    gpuhist_destroy(cpu);
}

int main(void)
{
    /* A small staging chunk: one-shot host inputs go through several chunks, so a failure can
     * land in the middle of an input (read when the context is created). */
    setenv("GPUHIST_CUDA_CHUNK_BYTES", "4096", 1);
    gpuhist_ctx *ctx = NULL;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CUDA) != GPUHIST_OK) {
        check_skip(gpuhist_last_error(NULL));
    }
    printf("device: %s\n", gpuhist_device_name(ctx));

    for (int i = 0; i < PIXELS; ++i) {
        uint32_t h = (uint32_t)i * 2654435761u;
        g_f32[i] = (float)(h >> 8) * 0x1p-24f;
        g_u8[i] = (uint8_t)(h >> 24);
        g_u16[i] = (uint16_t)(h >> 16);
    }
    g_f32[7] = NAN;
    g_f32[11] = -0.5f;
    g_f32[13] = 1.0f;
    g_f32[17] = INFINITY;

    spec_case cases[] = {
        {GPUHIST_F32, 37, g_f32, NULL, sizeof g_f32, NULL, 0, 0, 0, NULL},
        {GPUHIST_F32, 100000, g_f32, NULL, sizeof g_f32, NULL, 0, 0, 0, NULL},
        {GPUHIST_U8, 256, g_u8, NULL, sizeof g_u8, NULL, 0, 0, 0, NULL},
        {GPUHIST_U16, 65536, g_u16, NULL, sizeof g_u16, NULL, 0, 0, 0, NULL},
    };
    const size_t ncases = sizeof cases / sizeof cases[0];
    uint64_t *counts = malloc(MAX_BINS * sizeof *counts);
    for (size_t i = 0; i < ncases; ++i) {
        cases[i].want = calloc(cases[i].bins, sizeof(uint64_t));
        cases[i].want_auto = calloc(cases[i].bins, sizeof(uint64_t));
        if (!counts || !cases[i].want || !cases[i].want_auto ||
            gpuhist_host_alloc(ctx, cases[i].bytes, &cases[i].locked) != GPUHIST_OK) {
            fprintf(stderr, "out of memory setting up\n");
            return 1;
        }
        memcpy(cases[i].locked, cases[i].data, cases[i].bytes);
        reference(&cases[i]);
    }

    static const struct {
        const char *name;
        workload w;
    } loads[] = {{"one-shot pageable", one_shot_pageable},
                 {"one-shot page-locked", one_shot_locked},
                 {"stream", streamed},
                 {"auto range", auto_range}};

    /* Every CUDA strategy, on the first case it accepts; then auto on every case. */
    long calls = 0;
    const size_t ns = gpuhist_strategy_count();
    const char *only_auto = getenv("GPUHIST_FAULTS_AUTO_ONLY");
    for (size_t si = 0; si <= ns; ++si) {
        const char *sname = "auto";
        if (si < ns) {
            if (only_auto && *only_auto && strcmp(only_auto, "0") != 0)
                continue;
            gpuhist_strategy_desc d;
            if (gpuhist_strategy_info(si, &d) != GPUHIST_OK || d.backend != GPUHIST_BACKEND_CUDA)
                continue;
            sname = d.name;
        }
        CHECK_EQ_INT(gpuhist_set_strategy(ctx, sname), GPUHIST_OK);
        for (size_t ci = 0; ci < ncases; ++ci) {
            gpuhist_result r;
            arm(0);
            if (one_shot_pageable(ctx, &cases[ci], counts, &r) != GPUHIST_OK)
                continue; /* the strategy does not take this spec */
            for (size_t li = 0; li < sizeof loads / sizeof loads[0]; ++li) {
                char name[160];
                snprintf(name, sizeof name, "%s, %s/%u, %s", sname,
                         cases[ci].dtype == GPUHIST_F32 ? "f32"
                         : cases[ci].dtype == GPUHIST_U8 ? "u8"
                                                         : "u16",
                         cases[ci].bins, loads[li].name);
                calls += sweep(name, ctx, &cases[ci], loads[li].w, counts);
            }
            if (si < ns)
                break;
        }
    }
    gpuhist_set_strategy(ctx, "auto");
    for (size_t i = 0; i < ncases; ++i)
        gpuhist_host_free(ctx, cases[i].locked);
    gpuhist_destroy(ctx);

    /* Context creation: every CUDA call failing in turn gives a clean error and no context. */
    for (long k = 1;; ++k) {
        check_context("gpuhist_create(cuda): CUDA call %ld fails", k);
        gpuhist_ctx *c = NULL;
        arm(k);
        gpuhist_status rc = gpuhist_create(&c, GPUHIST_BACKEND_CUDA);
        const int failed = g_failed;
        arm(0);
        if (!failed) {
            CHECK_EQ_INT(rc, GPUHIST_OK);
            gpuhist_destroy(c);
            printf("%-58s %4ld CUDA calls, each failed once\n", "gpuhist_create(cuda)", k - 1);
            break;
        }
        if (rc == GPUHIST_OK) {
            gpuhist_destroy(c);
        } else {
            CHECK(c == NULL);
            CHECK(gpuhist_last_error(NULL)[0] != '\0');
        }
    }
    printf("%ld CUDA calls failed in turn\n", calls);
    for (size_t i = 0; i < ncases; ++i) {
        free(cases[i].want);
        free(cases[i].want_auto);
    }
    free(counts);
    return check_exit();
}
