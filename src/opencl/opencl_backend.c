/*
 * opencl_backend.c - the OpenCL backend: device selection, programs, buffers, chunked execution.
 *
 * Devices are numbered by one flat index over every platform's devices (all device types): GPUs
 * first, then accelerators, then CPUs, each group in the order the ICD loader reports them, so
 * device 0 (the default) is a GPU wherever there is one; gpuhist_opencl_list_devices() prints
 * that numbering.
 * A context owns its cl_context, an in-order queue, the programs built so far (one per strategy
 * source and sample type, built on first use: PoCL takes seconds per build) and its buffers.
 *
 * execute(): input (always host memory) goes to the device in chunks of at most 256 MiB (and
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE) of whole pixels; strided ROI rows are packed on the way with
 * clEnqueueWriteBufferRect. Each chunk is one job for the strategy (opencl_internal.h). Counters
 * are 64-bit on the device when it has 64-bit global atomics, else 32-bit and drained into host
 * uint64 after every chunk (a chunk has < 2^31 samples, so they cannot overflow). Weighted
 * plans: each job's weights (one per pixel) are uploaded beside its samples, the strategy adds
 * into a device exact accumulator (exact_sum.h's records, zeroed per call), which is read back
 * once and rounded on the host (gpuhist_finish_sums): the CPU backend's bits.
 *
 * Two environment variables exist to exercise those paths on any device (tests only):
 * GPUHIST_OPENCL_COUNTERS32=1 forces the 32-bit counters, GPUHIST_OPENCL_CHUNK_BYTES=<n> lowers
 * the chunk size (so that small inputs and ROIs are split into many jobs).
 */
#include "opencl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

/* Chunk size: large enough to amortise a launch, small enough to leave device memory for
 * others and to keep jobs far below 2^31 samples. */
#define GH_OCL_CHUNK_BYTES ((size_t)256 << 20)
#define GH_OCL_MAX_PLATFORMS 16
#define GH_OCL_MAX_DEVICES 64

/* The embedded source named `name`, NULL when there is none. */
static const char *gh_ocl_source_text(const char *name)
{
    for (const gpuhist_opencl_source *s = gpuhist_opencl_sources; s->name; ++s)
        if (strcmp(s->name, name) == 0)
            return s->text;
    return NULL;
}

static void gh_ocl_collect_events(gpuhist_opencl_state *st, int completed);

/* ---- errors ------------------------------------------------------------------------------------ */

const char *gpuhist_opencl_error_name(cl_int err)
{
    switch (err) {
#define GH_E(x)                                                                                \
    case x:                                                                                    \
        return #x;
        GH_E(CL_SUCCESS)
        GH_E(CL_DEVICE_NOT_FOUND)
        GH_E(CL_DEVICE_NOT_AVAILABLE)
        GH_E(CL_COMPILER_NOT_AVAILABLE)
        GH_E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        GH_E(CL_OUT_OF_RESOURCES)
        GH_E(CL_OUT_OF_HOST_MEMORY)
        GH_E(CL_PROFILING_INFO_NOT_AVAILABLE)
        GH_E(CL_MEM_COPY_OVERLAP)
        GH_E(CL_IMAGE_FORMAT_MISMATCH)
        GH_E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        GH_E(CL_BUILD_PROGRAM_FAILURE)
        GH_E(CL_MAP_FAILURE)
        GH_E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        GH_E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        GH_E(CL_COMPILE_PROGRAM_FAILURE)
        GH_E(CL_LINKER_NOT_AVAILABLE)
        GH_E(CL_LINK_PROGRAM_FAILURE)
        GH_E(CL_DEVICE_PARTITION_FAILED)
        GH_E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        GH_E(CL_INVALID_VALUE)
        GH_E(CL_INVALID_DEVICE_TYPE)
        GH_E(CL_INVALID_PLATFORM)
        GH_E(CL_INVALID_DEVICE)
        GH_E(CL_INVALID_CONTEXT)
        GH_E(CL_INVALID_QUEUE_PROPERTIES)
        GH_E(CL_INVALID_COMMAND_QUEUE)
        GH_E(CL_INVALID_HOST_PTR)
        GH_E(CL_INVALID_MEM_OBJECT)
        GH_E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        GH_E(CL_INVALID_IMAGE_SIZE)
        GH_E(CL_INVALID_SAMPLER)
        GH_E(CL_INVALID_BINARY)
        GH_E(CL_INVALID_BUILD_OPTIONS)
        GH_E(CL_INVALID_PROGRAM)
        GH_E(CL_INVALID_PROGRAM_EXECUTABLE)
        GH_E(CL_INVALID_KERNEL_NAME)
        GH_E(CL_INVALID_KERNEL_DEFINITION)
        GH_E(CL_INVALID_KERNEL)
        GH_E(CL_INVALID_ARG_INDEX)
        GH_E(CL_INVALID_ARG_VALUE)
        GH_E(CL_INVALID_ARG_SIZE)
        GH_E(CL_INVALID_KERNEL_ARGS)
        GH_E(CL_INVALID_WORK_DIMENSION)
        GH_E(CL_INVALID_WORK_GROUP_SIZE)
        GH_E(CL_INVALID_WORK_ITEM_SIZE)
        GH_E(CL_INVALID_GLOBAL_OFFSET)
        GH_E(CL_INVALID_EVENT_WAIT_LIST)
        GH_E(CL_INVALID_EVENT)
        GH_E(CL_INVALID_OPERATION)
        GH_E(CL_INVALID_GL_OBJECT)
        GH_E(CL_INVALID_BUFFER_SIZE)
        GH_E(CL_INVALID_MIP_LEVEL)
        GH_E(CL_INVALID_GLOBAL_WORK_SIZE)
        GH_E(CL_INVALID_PROPERTY)
        GH_E(CL_INVALID_IMAGE_DESCRIPTOR)
        GH_E(CL_INVALID_COMPILER_OPTIONS)
        GH_E(CL_INVALID_LINKER_OPTIONS)
        GH_E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef GH_E
    case CL_PLATFORM_NOT_FOUND_KHR:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
        return "unknown OpenCL error";
    }
}

gpuhist_status gpuhist_opencl_fail(gpuhist_ctx *ctx, cl_int err, const char *what)
{
    gpuhist_status st = (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY)
                            ? GPUHIST_ERROR_OUT_OF_MEMORY
                            : GPUHIST_ERROR_BACKEND;
    return gpuhist_fail(ctx, st, "opencl: %s: %s (%d)", what, gpuhist_opencl_error_name(err),
                        (int)err);
}

/* ---- device enumeration ------------------------------------------------------------------------ */

typedef struct gh_ocl_devlist {
    cl_uint count;
    cl_platform_id platform[GH_OCL_MAX_DEVICES];
    cl_device_id device[GH_OCL_MAX_DEVICES];
} gh_ocl_devlist;

/* Every device of every platform, in order. *what receives the failing call on error. */
static cl_int gh_ocl_enumerate(gh_ocl_devlist *list, const char **what)
{
    cl_platform_id plats[GH_OCL_MAX_PLATFORMS];
    cl_uint nplat = 0;
    list->count = 0;
    *what = "clGetPlatformIDs";
    cl_int err = clGetPlatformIDs(GH_OCL_MAX_PLATFORMS, plats, &nplat);
    if (err != CL_SUCCESS)
        return err;
    if (nplat > GH_OCL_MAX_PLATFORMS)
        nplat = GH_OCL_MAX_PLATFORMS;
    for (cl_uint p = 0; p < nplat; ++p) {
        cl_uint room = GH_OCL_MAX_DEVICES - list->count, ndev = 0;
        if (room == 0)
            break;
        err = clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, room, list->device + list->count, &ndev);
        if (err == CL_DEVICE_NOT_FOUND)
            continue; /* a platform without devices is not an error */
        if (err != CL_SUCCESS) {
            *what = "clGetDeviceIDs";
            return err;
        }
        if (ndev > room)
            ndev = room;
        for (cl_uint d = 0; d < ndev; ++d)
            list->platform[list->count + d] = plats[p];
        list->count += ndev;
    }
    /* Stable reorder: GPUs, accelerators, then everything else (CPU OpenCL such as PoCL). */
    gh_ocl_devlist sorted;
    sorted.count = 0;
    for (int rank = 0; rank < 3; ++rank) {
        for (cl_uint i = 0; i < list->count; ++i) {
            cl_device_type t = 0;
            if (clGetDeviceInfo(list->device[i], CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS)
                t = 0;
            int r = (t & CL_DEVICE_TYPE_GPU) ? 0 : (t & CL_DEVICE_TYPE_ACCELERATOR) ? 1 : 2;
            if (r != rank)
                continue;
            sorted.platform[sorted.count] = list->platform[i];
            sorted.device[sorted.count] = list->device[i];
            sorted.count++;
        }
    }
    *list = sorted;
    return CL_SUCCESS;
}

static void gh_ocl_string(cl_platform_id p, cl_device_id d, cl_uint param, char *buf, size_t size)
{
    cl_int err = p ? clGetPlatformInfo(p, param, size, buf, NULL)
                   : clGetDeviceInfo(d, param, size, buf, NULL);
    if (err != CL_SUCCESS || size == 0)
        snprintf(buf, size, "?");
    else
        buf[size - 1] = '\0';
}

static const char *gh_ocl_type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return "GPU";
    if (t & CL_DEVICE_TYPE_CPU)
        return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return "accelerator";
    return "other";
}

static gpuhist_status gh_ocl_no_platform(gpuhist_ctx *ctx, cl_int err, const char *what)
{
    return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE,
                        "opencl: no OpenCL platform found (%s: %s); install an OpenCL driver "
                        "registered with the ICD loader (e.g. pocl-opencl-icd)",
                        what, gpuhist_opencl_error_name(err));
}

int gpuhist_opencl_device_count(void)
{
    gh_ocl_devlist list;
    const char *what;
    return gh_ocl_enumerate(&list, &what) == CL_SUCCESS ? (int)list.count : 0;
}

gpuhist_status gpuhist_opencl_list_devices(char *buf, size_t size)
{
    gh_ocl_devlist list;
    const char *what;
    if (buf && size)
        buf[0] = '\0';
    cl_int err = gh_ocl_enumerate(&list, &what);
    if (err != CL_SUCCESS || list.count == 0)
        return GPUHIST_ERROR_NO_DEVICE;
    size_t used = 0;
    for (cl_uint i = 0; i < list.count && buf && used < size; ++i) {
        char pname[128], dname[128];
        cl_device_type type = 0;
        gh_ocl_string(list.platform[i], NULL, CL_PLATFORM_NAME, pname, sizeof pname);
        gh_ocl_string(NULL, list.device[i], CL_DEVICE_NAME, dname, sizeof dname);
        if (clGetDeviceInfo(list.device[i], CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
            type = 0;
        int n = snprintf(buf + used, size - used, "%u: %s: %s (%s)\n", i, pname, dname,
                         gh_ocl_type_name(type));
        if (n < 0)
            break;
        used += (size_t)n;
    }
    return GPUHIST_OK;
}

/* ---- open / close -------------------------------------------------------------------------------- */

static void gh_ocl_release_buffers(gpuhist_opencl_state *st)
{
    cl_mem *bufs[] = {&st->data_buf, &st->counters,    &st->edges,  &st->placeholder,
                      &st->scratch,  &st->weights_buf, &st->acc_buf};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        if (*bufs[i]) {
            clReleaseMemObject(*bufs[i]);
            *bufs[i] = NULL;
        }
    st->data_cap = st->counters_cap = st->edges_cap = st->scratch_cap = 0;
    st->weights_cap = st->acc_cap = 0;
}

static void gh_ocl_close(gpuhist_ctx *ctx)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    if (st) {
        if (st->queue)
            clFinish(st->queue);
        for (int s = 0; s < GH_OCL_MAX_PROGRAMS; ++s)
            for (int d = 0; d < GPUHIST_DTYPE_COUNT; ++d) {
                for (int k = 0; k < GH_OCL_MAX_KERNELS; ++k)
                    if (st->kernels[s][d][k])
                        clReleaseKernel(st->kernels[s][d][k]);
                if (st->programs[s][d])
                    clReleaseProgram(st->programs[s][d]);
            }
        gh_ocl_collect_events(st, 0);
        free(st->events);
        gh_ocl_release_buffers(st);
        if (st->queue)
            clReleaseCommandQueue(st->queue);
        if (st->context)
            clReleaseContext(st->context);
        free(st);
        ctx->backend_state = NULL;
    }
    free(ctx->build_log);
    ctx->build_log = NULL;
}

static int gh_ocl_has_extension(cl_device_id dev, const char *name)
{
    size_t len = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return 0;
    char *ext = malloc(len + 1);
    if (!ext)
        return 0;
    int found = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, len, ext, NULL) == CL_SUCCESS) {
        ext[len] = '\0';
        size_t nl = strlen(name);
        for (const char *p = ext; (p = strstr(p, name)) != NULL; p += nl)
            if ((p == ext || p[-1] == ' ') && (p[nl] == ' ' || p[nl] == '\0')) {
                found = 1;
                break;
            }
    }
    free(ext);
    return found;
}

static gpuhist_status gh_ocl_open(gpuhist_ctx *ctx, int device)
{
    gh_ocl_devlist list;
    const char *what;
    cl_int err = gh_ocl_enumerate(&list, &what);
    if (err != CL_SUCCESS)
        return gh_ocl_no_platform(ctx, err, what);
    if (list.count == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE, "opencl: no OpenCL device found");
    if (device < 0 || (cl_uint)device >= list.count)
        return gpuhist_fail(ctx, GPUHIST_ERROR_NO_DEVICE,
                            "opencl: no device %d (%u OpenCL device%s: 0..%u, see "
                            "--list-devices)",
                            device, list.count, list.count == 1 ? "" : "s", list.count - 1);

    gpuhist_opencl_state *st = calloc(1, sizeof *st);
    if (!st)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY, "opencl: out of host memory");
    ctx->backend_state = st;
    st->platform = list.platform[device];
    st->device = list.device[device];

    char pname[64], dname[96];
    gh_ocl_string(st->platform, NULL, CL_PLATFORM_NAME, pname, sizeof pname);
    gh_ocl_string(NULL, st->device, CL_DEVICE_NAME, dname, sizeof dname);
    snprintf(ctx->device_name, sizeof ctx->device_name, "%.56s: %.68s", pname, dname);

    gpuhist_status status = GPUHIST_OK;
#define GH_OPEN_TRY(call, what_)                                                               \
    do {                                                                                       \
        cl_int e_ = (call);                                                                    \
        if (e_ != CL_SUCCESS) {                                                                \
            status = gpuhist_opencl_fail(ctx, e_, (what_));                                    \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)
    GH_OPEN_TRY(clGetDeviceInfo(st->device, CL_DEVICE_TYPE, sizeof st->type, &st->type, NULL),
                "clGetDeviceInfo(CL_DEVICE_TYPE)");
    GH_OPEN_TRY(clGetDeviceInfo(st->device, CL_DEVICE_MAX_COMPUTE_UNITS,
                                sizeof st->compute_units, &st->compute_units, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)");
    GH_OPEN_TRY(clGetDeviceInfo(st->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                sizeof st->max_work_group, &st->max_work_group, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
    GH_OPEN_TRY(clGetDeviceInfo(st->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof st->local_mem,
                                &st->local_mem, NULL),
                "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
    GH_OPEN_TRY(clGetDeviceInfo(st->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof st->max_alloc,
                                &st->max_alloc, NULL),
                "clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    if (st->compute_units == 0)
        st->compute_units = 1;
    if (st->max_work_group == 0)
        st->max_work_group = 1;
    st->has_fp64 = gh_ocl_has_extension(st->device, "cl_khr_fp64");
    st->counter64 = gh_ocl_has_extension(st->device, "cl_khr_int64_base_atomics");
    cl_bool little = CL_TRUE;
    if (clGetDeviceInfo(st->device, CL_DEVICE_ENDIAN_LITTLE, sizeof little, &little, NULL) !=
        CL_SUCCESS)
        little = CL_FALSE;
    st->little_endian = little == CL_TRUE;
    const char *env = getenv("GPUHIST_OPENCL_COUNTERS32");
    if (env && atoi(env) != 0)
        st->counter64 = 0;
    st->chunk_bytes = GH_OCL_CHUNK_BYTES;
    env = getenv("GPUHIST_OPENCL_CHUNK_BYTES");
    if (env && strtoull(env, NULL, 10) > 0 && strtoull(env, NULL, 10) < GH_OCL_CHUNK_BYTES)
        st->chunk_bytes = (size_t)strtoull(env, NULL, 10);

    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)st->platform, 0};
    st->context = clCreateContext(props, 1, &st->device, NULL, NULL, &err);
    GH_OPEN_TRY(err, "clCreateContext");
    /* Profiling costs one timestamp pair per launch; it gives the benchmark kernel-only times. */
    st->queue = clCreateCommandQueue(st->context, st->device, CL_QUEUE_PROFILING_ENABLE, &err);
    GH_OPEN_TRY(err, "clCreateCommandQueue");
    st->placeholder = clCreateBuffer(st->context, CL_MEM_READ_ONLY, sizeof(double), NULL, &err);
    GH_OPEN_TRY(err, "clCreateBuffer(placeholder)");
    return GPUHIST_OK;
#undef GH_OPEN_TRY
fail:
    gh_ocl_close(ctx);
    return status;
}

/* ---- programs and kernels ------------------------------------------------------------------------ */

static gpuhist_status gh_ocl_build(gpuhist_ctx *ctx, int src, gpuhist_dtype dtype)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    const gpuhist_opencl_program *program = st->program_of[src];
    /* binmap.h, common.clh, the program's header (if any), its source */
    const char *names[4] = {"binmap.h", "common.clh", program->header, program->source};
    const char *texts[4];
    cl_uint ntexts = 0;
    for (int i = 0; i < 4; ++i) {
        if (!names[i])
            continue;
        texts[ntexts] = gh_ocl_source_text(names[i]);
        if (!texts[ntexts])
            return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                                "opencl: kernel source %s is not embedded in this build",
                                names[i]);
        ++ntexts;
    }
    cl_int err;
    cl_program prog = clCreateProgramWithSource(st->context, ntexts, texts, NULL, &err);
    if (err != CL_SUCCESS)
        return gpuhist_opencl_fail(ctx, err, "clCreateProgramWithSource");
    char options[128];
    /* OpenCL C 1.2: unqualified pointers (binmap.h's `const gpuhist_binmap *`) are private.
     * No fast-math flags: the slots must be exact. */
    snprintf(options, sizeof options, "-cl-std=CL1.2 -DGH_DT=%d -DGH_COUNTER64=%d", (int)dtype,
             st->counter64);
    err = clBuildProgram(prog, 1, &st->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        free(ctx->build_log);
        ctx->build_log = NULL;
        if (clGetProgramBuildInfo(prog, st->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
                CL_SUCCESS &&
            len > 0) {
            ctx->build_log = malloc(len + 1);
            if (ctx->build_log) {
                if (clGetProgramBuildInfo(prog, st->device, CL_PROGRAM_BUILD_LOG, len,
                                          ctx->build_log, NULL) != CL_SUCCESS)
                    len = 0;
                ctx->build_log[len] = '\0';
            }
        }
        clReleaseProgram(prog);
        if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS ||
            err == CL_COMPILER_NOT_AVAILABLE)
            return gpuhist_fail(ctx, GPUHIST_ERROR_BUILD,
                                "opencl: clBuildProgram(%s, %s): %s (the compiler log is in "
                                "gpuhist_build_log())",
                                program->source, gpuhist_dtype_name(dtype),
                                gpuhist_opencl_error_name(err));
        return gpuhist_opencl_fail(ctx, err, "clBuildProgram");
    }
    for (int k = 0; k < GH_OCL_MAX_KERNELS; ++k) {
        const char *name = program->kernels[k];
        if (!name)
            continue;
        st->kernels[src][dtype][k] = clCreateKernel(prog, name, &err);
        if (err != CL_SUCCESS) {
            for (int j = 0; j < k; ++j)
                if (st->kernels[src][dtype][j]) {
                    clReleaseKernel(st->kernels[src][dtype][j]);
                    st->kernels[src][dtype][j] = NULL;
                }
            clReleaseProgram(prog);
            return gpuhist_opencl_fail(ctx, err, "clCreateKernel");
        }
    }
    st->programs[src][dtype] = prog;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_opencl_kernel(gpuhist_ctx *ctx, const gpuhist_opencl_program *program,
                                     gpuhist_dtype dtype, int index, cl_kernel *out)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    /* the program's cache slot: the one it was given on first use, else the next free one */
    int src = 0;
    while (src < GH_OCL_MAX_PROGRAMS && st->program_of[src] && st->program_of[src] != program)
        ++src;
    if (src == GH_OCL_MAX_PROGRAMS)
        return gpuhist_fail(ctx, GPUHIST_ERROR_BACKEND,
                            "opencl: more than %d kernel programs (GH_OCL_MAX_PROGRAMS)",
                            GH_OCL_MAX_PROGRAMS);
    st->program_of[src] = program;
    if (!st->programs[src][dtype]) {
        gpuhist_status s = gh_ocl_build(ctx, src, dtype);
        if (s != GPUHIST_OK)
            return s;
    }
    *out = st->kernels[src][dtype][index];
    return GPUHIST_OK;
}

/* ---- helpers for the strategies ------------------------------------------------------------------- */

static gpuhist_status gh_ocl_ensure(gpuhist_ctx *ctx, cl_mem *buf, size_t *cap, size_t bytes,
                                    cl_mem_flags flags, const char *what)
{
    if (*buf && *cap >= bytes)
        return GPUHIST_OK;
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    if (*buf) {
        clReleaseMemObject(*buf);
        *buf = NULL;
        *cap = 0;
    }
    if (bytes > st->max_alloc)
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "opencl: %s needs %zu bytes, more than the device's largest "
                            "allocation (%llu bytes)",
                            what, bytes, (unsigned long long)st->max_alloc);
    cl_int err;
    *buf = clCreateBuffer(st->context, flags, bytes ? bytes : 1, NULL, &err);
    if (err != CL_SUCCESS) {
        *buf = NULL;
        char w[96];
        snprintf(w, sizeof w, "clCreateBuffer(%s, %zu bytes)", what, bytes);
        return gpuhist_opencl_fail(ctx, err, w);
    }
    *cap = bytes;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_opencl_scratch(gpuhist_ctx *ctx, size_t bytes, cl_mem *out)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    gpuhist_status s = gh_ocl_ensure(ctx, &st->scratch, &st->scratch_cap, bytes,
                                     CL_MEM_READ_WRITE, "scratch");
    *out = st->scratch;
    return s;
}

size_t gpuhist_opencl_group_size(gpuhist_ctx *ctx, cl_kernel kernel, size_t cap, int pow2)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    size_t kwg = 0, pref = 0;
    if (clGetKernelWorkGroupInfo(kernel, st->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                 NULL) != CL_SUCCESS ||
        kwg == 0)
        kwg = st->max_work_group;
    if (clGetKernelWorkGroupInfo(kernel, st->device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof pref, &pref, NULL) != CL_SUCCESS)
        pref = 1;
    size_t wg = cap;
    if (wg > kwg)
        wg = kwg;
    if (wg > st->max_work_group)
        wg = st->max_work_group;
    if (pow2) {
        size_t p = 1;
        while (p * 2 <= wg)
            p *= 2;
        wg = p;
    } else if (pref > 1 && wg >= pref) {
        wg -= wg % pref;
    }
    return wg ? wg : 1;
}

size_t gpuhist_opencl_local_budget(const gpuhist_ctx *ctx)
{
    const gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    /* Leave 2 KiB for the kernels' own local arrays (the 8-bit slot table) and the runtime. */
    return st->local_mem > 4096 ? (size_t)st->local_mem - 2048 : 0;
}

gpuhist_status gpuhist_opencl_common_args(gpuhist_ctx *ctx, cl_kernel kernel, cl_uint first,
                                          const gpuhist_plan *plan,
                                          const gpuhist_opencl_job *job, cl_uint *next)
{
    cl_uint i = first;
    cl_uint slots = plan->slots, C = plan->channels;
    GH_OCL_ARG(ctx, kernel, i++, sizeof(gpuhist_binmap), &plan->map);
    GH_OCL_ARG(ctx, kernel, i++, sizeof(cl_mem), &job->edges);
    GH_OCL_ARG(ctx, kernel, i++, sizeof slots, &slots);
    GH_OCL_ARG(ctx, kernel, i++, sizeof C, &C);
    for (uint32_t c = 0; c < GPUHIST_MAX_CHANNELS; ++c) {
        cl_int cs = c < plan->channels ? plan->channel_slot[c] : -1;
        GH_OCL_ARG(ctx, kernel, i++, sizeof cs, &cs);
    }
    *next = i;
    return GPUHIST_OK;
}

gpuhist_status gpuhist_opencl_launch(gpuhist_ctx *ctx, cl_kernel kernel, size_t global,
                                     size_t local, const char *what)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    cl_event ev = NULL;
    int timed = st->nevents < st->events_cap;
    if (!timed) {
        size_t cap = st->events_cap ? st->events_cap * 2 : 64;
        cl_event *grown = realloc(st->events, cap * sizeof *grown);
        if (grown) {
            st->events = grown;
            st->events_cap = cap;
            timed = 1;
        }
    }
    cl_int err = clEnqueueNDRangeKernel(st->queue, kernel, 1, NULL, &global,
                                        local ? &local : NULL, 0, NULL, timed ? &ev : NULL);
    if (err == CL_SUCCESS) {
        if (timed && ev)
            st->events[st->nevents++] = ev;
        else
            st->kernel_seconds = -1; /* one launch untimed: the total would lie */
    }
    if (err != CL_SUCCESS) {
        char w[96];
        snprintf(w, sizeof w, "clEnqueueNDRangeKernel(%s)", what);
        return gpuhist_opencl_fail(ctx, err, w);
    }
    return GPUHIST_OK;
}

/* Sum the recorded launches' device time (after clFinish) and release their events. */
static void gh_ocl_collect_events(gpuhist_opencl_state *st, int completed)
{
    double total = 0;
    for (size_t i = 0; i < st->nevents; ++i) {
        cl_ulong t0 = 0, t1 = 0;
        if (completed &&
            clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0,
                                    NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1,
                                    NULL) == CL_SUCCESS &&
            t1 >= t0)
            total += (double)(t1 - t0) * 1e-9;
        else
            completed = 0;
        clReleaseEvent(st->events[i]);
    }
    st->nevents = 0;
    if (!completed)
        st->kernel_seconds = -1;
    else if (st->kernel_seconds >= 0)
        st->kernel_seconds = total;
}

double gpuhist_opencl_last_kernel_seconds(const gpuhist_ctx *ctx)
{
    if (!ctx || ctx->backend != GPUHIST_BACKEND_OPENCL || !ctx->backend_state)
        return -1;
    return gpuhist_opencl_state_of(ctx)->kernel_seconds;
}

/* ---- minmax ---------------------------------------------------------------------------------------- */

/* OpenCL input is always host memory: the CPU backend's scan (finite values, 64-bit integers
 * rounded outward) is exactly what is needed. */
static gpuhist_status gh_ocl_minmax(gpuhist_ctx *ctx, const gpuhist_plan *plan, double *lo,
                                    double *hi, int *found)
{
    return gpuhist_cpu_backend.minmax(ctx, plan, lo, hi, found);
}

/* ---- execute --------------------------------------------------------------------------------------- */

/* Counters of 32 bits: add them to the host totals and zero them for the next job. */
static gpuhist_status gh_ocl_drain32(gpuhist_ctx *ctx, uint32_t total, uint32_t *tmp,
                                     uint64_t *slots)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    GH_OCL_TRY(ctx,
               clEnqueueReadBuffer(st->queue, st->counters, CL_TRUE, 0, (size_t)total * 4, tmp,
                                   0, NULL, NULL),
               "clEnqueueReadBuffer(counters)");
    for (uint32_t i = 0; i < total; ++i)
        slots[i] += tmp[i];
    cl_uint zero = 0;
    GH_OCL_TRY(ctx,
               clEnqueueFillBuffer(st->queue, st->counters, &zero, sizeof zero, 0,
                                   (size_t)total * 4, 0, NULL, NULL),
               "clEnqueueFillBuffer(counters)");
    return GPUHIST_OK;
}

/* The weight accumulator: `words` int64 on the device, zeroed. */
static gpuhist_status gh_ocl_zero_acc(gpuhist_ctx *ctx, size_t words)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    gpuhist_status status = gh_ocl_ensure(ctx, &st->acc_buf, &st->acc_cap, words * 8u,
                                          CL_MEM_READ_WRITE, "weight sums");
    if (status != GPUHIST_OK)
        return status;
    cl_uchar zero = 0;
    GH_OCL_TRY(ctx,
               clEnqueueFillBuffer(st->queue, st->acc_buf, &zero, 1, 0, words * 8u, 0, NULL,
                                   NULL),
               "clEnqueueFillBuffer(weight sums)");
    return GPUHIST_OK;
}

static gpuhist_status gh_ocl_execute_jobs(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                          const gpuhist_strategy *s, uint64_t *slots,
                                          uint32_t *tmp32)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    uint32_t total = plan->active * plan->slots;
    size_t csize = st->counter64 ? sizeof(cl_ulong) : sizeof(cl_uint);
    gpuhist_status status;

    status = gh_ocl_ensure(ctx, &st->counters, &st->counters_cap, (size_t)total * csize,
                           CL_MEM_READ_WRITE, "counters");
    if (status != GPUHIST_OK)
        return status;
    cl_uchar zero = 0;
    GH_OCL_TRY(ctx,
               clEnqueueFillBuffer(st->queue, st->counters, &zero, 1, 0, (size_t)total * csize,
                                   0, NULL, NULL),
               "clEnqueueFillBuffer(counters)");

    gpuhist_opencl_job job;
    memset(&job, 0, sizeof job);
    job.edges = st->placeholder;
    if (plan->map.kind == GH_KIND_EDGES) {
        size_t eb = ((size_t)plan->bins + 1) * sizeof(double);
        status = gh_ocl_ensure(ctx, &st->edges, &st->edges_cap, eb, CL_MEM_READ_ONLY, "edges");
        if (status != GPUHIST_OK)
            return status;
        GH_OCL_TRY(ctx,
                   clEnqueueWriteBuffer(st->queue, st->edges, CL_TRUE, 0, eb, plan->edges, 0,
                                        NULL, NULL),
                   "clEnqueueWriteBuffer(edges)");
        job.edges = st->edges;
    }

    /* Chunks of whole pixels. Packed rows are one long row. */
    size_t pixel_bytes = (size_t)plan->channels * plan->sample_size;
    size_t row_bytes = (size_t)plan->row_length * pixel_bytes;
    uint64_t rows = plan->contiguous ? 1 : plan->rows;
    uint64_t row_length = plan->contiguous ? plan->pixels : plan->row_length;
    size_t cap = st->chunk_bytes;
    if (cap > st->max_alloc)
        cap = (size_t)st->max_alloc;
    uint64_t chunk_pixels = cap / pixel_bytes;
    if (chunk_pixels == 0)
        chunk_pixels = 1;
    if (chunk_pixels * plan->channels >= GH_OCL_MAX_JOB_ELEMENTS)
        chunk_pixels = (GH_OCL_MAX_JOB_ELEMENTS - 1) / plan->channels;
    uint64_t want = plan->pixels < chunk_pixels ? plan->pixels : chunk_pixels;
    status = gh_ocl_ensure(ctx, &st->data_buf, &st->data_cap, (size_t)want * pixel_bytes,
                           CL_MEM_READ_ONLY, "samples");
    if (status != GPUHIST_OK)
        return status;
    job.data = st->data_buf;
    /* weights: one per pixel, the job's run of them beside its samples */
    const size_t wsize = plan->weights ? gpuhist_dtype_size(plan->weight_dtype) : 0;
    if (plan->weights) {
        status = gh_ocl_ensure(ctx, &st->weights_buf, &st->weights_cap, (size_t)want * wsize,
                               CL_MEM_READ_ONLY, "weights");
        if (status != GPUHIST_OK)
            return status;
        job.weights = st->weights_buf;
    }

    uint64_t row = 0, pix = 0;
    while (row < rows) {
        uint64_t npix;
        const uint64_t first = row * row_length + pix; /* the chunk's first pixel */
        if (pix == 0 && rows > 1 && row_length <= chunk_pixels) {
            /* Several whole rows, packed on the way by a rectangular copy. */
            uint64_t nrows = chunk_pixels / row_length;
            if (nrows > rows - row)
                nrows = rows - row;
            size_t origin[3] = {0, 0, 0};
            size_t region[3] = {row_bytes, (size_t)nrows, 1};
            GH_OCL_TRY(ctx,
                       clEnqueueWriteBufferRect(st->queue, st->data_buf, CL_TRUE, origin, origin,
                                                region, row_bytes, 0, plan->row_stride, 0,
                                                plan->data + row * plan->row_stride, 0, NULL,
                                                NULL),
                       "clEnqueueWriteBufferRect(samples)");
            npix = nrows * row_length;
            row += nrows;
        } else {
            /* A run of pixels within one row (or of the packed input). */
            npix = row_length - pix;
            if (npix > chunk_pixels)
                npix = chunk_pixels;
            const unsigned char *src = plan->data + row * plan->row_stride + pix * pixel_bytes;
            GH_OCL_TRY(ctx,
                       clEnqueueWriteBuffer(st->queue, st->data_buf, CL_TRUE, 0,
                                            (size_t)npix * pixel_bytes, src, 0, NULL, NULL),
                       "clEnqueueWriteBuffer(samples)");
            pix += npix;
            if (pix == row_length) {
                pix = 0;
                ++row;
            }
        }
        if (npix == 0)
            continue;
        if (plan->weights)
            GH_OCL_TRY(ctx,
                       clEnqueueWriteBuffer(st->queue, st->weights_buf, CL_TRUE, 0,
                                            (size_t)npix * wsize, plan->weights + first * wsize,
                                            0, NULL, NULL),
                       "clEnqueueWriteBuffer(weights)");
        job.pixels = (uint32_t)npix;
        job.elements = (uint32_t)(npix * plan->channels);
        status = s->run(ctx, plan, &job, (void *)st->counters);
        if (status != GPUHIST_OK)
            return status;
        if (!st->counter64) {
            status = gh_ocl_drain32(ctx, total, tmp32, slots);
            if (status != GPUHIST_OK)
                return status;
        }
    }
    if (st->counter64) {
        GH_OCL_TRY(ctx,
                   clEnqueueReadBuffer(st->queue, st->counters, CL_TRUE, 0,
                                       (size_t)total * sizeof(cl_ulong), slots, 0, NULL, NULL),
                   "clEnqueueReadBuffer(counters)");
    }
    GH_OCL_TRY(ctx, clFinish(st->queue), "clFinish");
    return GPUHIST_OK;
}

static gpuhist_status gh_ocl_execute(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                                     const gpuhist_strategy *s, gpuhist_result *result)
{
    gpuhist_opencl_state *st = gpuhist_opencl_state_of(ctx);
    if (result->counts_location == GPUHIST_MEMORY_DEVICE)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl: counts in device memory are not supported by the OpenCL "
                            "backend (use host counts)");
    if (plan->data_on_device)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl: samples must be in host memory for the OpenCL backend");
    if (!st->has_fp64)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl: device '%s' lacks cl_khr_fp64, which gpuhist's exact bin "
                            "mapping needs (edges are computed and compared in double)",
                            ctx->device_name);
    uint64_t total64 = (uint64_t)plan->active * plan->slots;
    if (total64 > UINT32_MAX)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "opencl: %llu counters (channels x (bins + 3)) exceed 2^32",
                            (unsigned long long)total64);
    uint32_t total = (uint32_t)total64;

    uint64_t *slots = calloc(total, sizeof *slots);
    uint32_t *tmp32 = st->counter64 ? NULL : malloc((size_t)total * sizeof *tmp32);
    if (!slots || (!st->counter64 && !tmp32)) {
        free(slots);
        free(tmp32);
        return gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                            "opencl: out of host memory for %u counters", total);
    }
    gpuhist_status status = GPUHIST_OK;
    st->kernel_seconds = 0;
    /* weighted: the exact accumulator on the device (zeroed here, added to by the strategy's
     * jobs), then on the host for the one rounding */
    gpuhist_plan wplan = *plan;
    const size_t words = gpuhist_weight_acc_words(plan);
    int64_t *acc = NULL;
    if (plan->weights) {
        status = gpuhist_need_host_memory(ctx, (uint64_t)words * 8u,
                                          "opencl: the weight sums' accumulator");
        if (status == GPUHIST_OK && !(acc = calloc(words ? words : 1, sizeof *acc)))
            status = gpuhist_fail(ctx, GPUHIST_ERROR_OUT_OF_MEMORY,
                                  "opencl: out of host memory for the weight sums' accumulator "
                                  "(%zu words)",
                                  words);
        if (status == GPUHIST_OK && plan->pixels > 0)
            status = gh_ocl_zero_acc(ctx, words);
        wplan.weight_acc = (void *)st->acc_buf;
    }
    if (status == GPUHIST_OK && plan->pixels > 0)
        status = gh_ocl_execute_jobs(ctx, &wplan, s, slots, tmp32);
    if (status == GPUHIST_OK && plan->weights && plan->pixels > 0) {
        cl_int err = clEnqueueReadBuffer(st->queue, st->acc_buf, CL_TRUE, 0, words * 8u, acc, 0,
                                         NULL, NULL);
        if (err != CL_SUCCESS)
            status = gpuhist_opencl_fail(ctx, err, "clEnqueueReadBuffer(weight sums)");
    }
    if (status != GPUHIST_OK) {
        clFinish(st->queue); /* nothing may still read the caller's memory */
    } else {
        gpuhist_finish_slots(plan, slots, result->counts, result);
        gpuhist_finish_sums(&wplan, acc, result);
    }
    gh_ocl_collect_events(st, status == GPUHIST_OK);
    free(slots);
    free(tmp32);
    free(acc);
    return status;
}

static int gh_ocl_is_device_pointer(gpuhist_ctx *ctx, const void *data)
{
    (void)ctx;
    (void)data;
    return 0; /* OpenCL buffers are not addresses: samples are always host memory */
}

/* No stream ops: a stream runs execute() per chunk and the core adds the results. */
const gpuhist_backend_ops gpuhist_opencl_backend = {
    .id = GPUHIST_BACKEND_OPENCL,
    .open = gh_ocl_open,
    .close = gh_ocl_close,
    .minmax = gh_ocl_minmax,
    .policy = &gpuhist_opencl_policy,
    .execute = gh_ocl_execute,
    .is_device_pointer = gh_ocl_is_device_pointer,
};
