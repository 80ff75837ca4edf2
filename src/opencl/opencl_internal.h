/*
 * opencl_internal.h - what the OpenCL backend (opencl_backend.c) and the OpenCL strategies share.
 *
 * Data handed to the OpenCL backend is always host memory. execute() copies it to a device buffer
 * in chunks (contiguous runs of whole pixels, strided ROI rows packed with
 * clEnqueueWriteBufferRect), so a strategy's run() always sees one *job*: a packed, aligned,
 * device-resident run of `elements` samples starting on a pixel boundary (element k is channel
 * k % C), with fewer than 2^31 elements (32-bit indices and local counters cannot overflow).
 *
 * run() ADDS the job's slot counts into `out` (a cl_mem cast to void *): active * slots counters
 * of type gh_count_t, which is ulong when the device has cl_khr_int64_base_atomics (the backend
 * reads them back once at the end) and uint otherwise (the backend reads them back and
 * accumulates them into uint64 after every job, so they cannot overflow either).
 *
 * Programs: the program of a strategy = binmap.h + kernels/common.clh + kernels/<strategy>.cl,
 * built with -DGH_DT=<dtype> -DGH_COUNTER64=<0|1>, lazily, once per context (cached in the
 * backend state with its kernels).
 */
#ifndef GPUHIST_OPENCL_INTERNAL_H
#define GPUHIST_OPENCL_INTERNAL_H

#include "internal.h"

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include <stddef.h>
#include <stdint.h>

/* The kernel sources of the strategies (index into the program cache). */
enum {
    GH_OCL_SRC_LOCAL_ATOMIC = 0,
    GH_OCL_SRC_BLOCK_SHARED,
    GH_OCL_SRC_TREE_REDUCE,
    GH_OCL_SRC_COUNT
};
#define GH_OCL_MAX_KERNELS 2 /* kernels per source */

/* Jobs never exceed this many samples: 32-bit element indices and local counters are safe. */
#define GH_OCL_MAX_JOB_ELEMENTS (1u << 31)

typedef struct gpuhist_opencl_job {
    cl_mem data;        /* the job's samples at offset 0 (buffer base: aligned for vectors) */
    uint32_t elements;  /* pixels * channels */
    uint32_t pixels;
    cl_mem edges;       /* EDGES: bins + 1 doubles; otherwise a 1-double placeholder */
} gpuhist_opencl_job;

typedef struct gpuhist_opencl_state {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_device_type type;
    int has_fp64;
    int counter64;            /* cl_khr_int64_base_atomics: 64-bit global counters */
    cl_uint compute_units;
    size_t max_work_group;    /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_ulong local_mem;       /* CL_DEVICE_LOCAL_MEM_SIZE */
    cl_ulong max_alloc;       /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
    size_t chunk_bytes;       /* input bytes per job (before max_alloc) */
    cl_program programs[GH_OCL_SRC_COUNT][GPUHIST_DTYPE_COUNT];
    cl_kernel kernels[GH_OCL_SRC_COUNT][GPUHIST_DTYPE_COUNT][GH_OCL_MAX_KERNELS];
    /* Buffers reused across calls (grown on demand). */
    cl_mem data_buf;
    size_t data_cap;
    cl_mem counters;
    size_t counters_cap;
    cl_mem edges;
    size_t edges_cap;
    cl_mem placeholder;       /* 1 double: the edges argument when the spec has no edge array */
    cl_mem scratch;           /* strategy scratch (tree-reduce partial sums) */
    size_t scratch_cap;
    /* Kernel timing of the last execute() (profiling events of every launch). */
    cl_event *events;
    size_t nevents, events_cap;
    double kernel_seconds;    /* -1 when unknown */
} gpuhist_opencl_state;

/* "CL_OUT_OF_RESOURCES", ... for an OpenCL error code. */
const char *gpuhist_opencl_error_name(cl_int err);

/* Record "opencl: <what>: <error name>" on ctx; returns BACKEND (OUT_OF_MEMORY for allocation
 * failures). */
gpuhist_status gpuhist_opencl_fail(gpuhist_ctx *ctx, cl_int err, const char *what);

#define GH_OCL_TRY(ctx, call, what)                                                            \
    do {                                                                                       \
        cl_int e_ = (call);                                                                    \
        if (e_ != CL_SUCCESS)                                                                  \
            return gpuhist_opencl_fail((ctx), e_, (what));                                     \
    } while (0)

/* Set kernel argument `index` (value of `size` bytes at `ptr`, or local memory when ptr is NULL). */
#define GH_OCL_ARG(ctx, kernel, index, size, ptr)                                              \
    GH_OCL_TRY(ctx, clSetKernelArg((kernel), (index), (size), (ptr)), "clSetKernelArg")

/* The kernel `index` of strategy source `src` for the plan's dtype, building the program on
 * first use. BUILD (log in ctx->build_log) or BACKEND on failure. */
gpuhist_status gpuhist_opencl_kernel(gpuhist_ctx *ctx, int src, gpuhist_dtype dtype, int index,
                                     cl_kernel *out);

/* A device scratch buffer of at least `bytes`, owned by the context. */
gpuhist_status gpuhist_opencl_scratch(gpuhist_ctx *ctx, size_t bytes, cl_mem *out);

/* Work-group size for `kernel`: at most `cap`, a multiple of the kernel's preferred multiple
 * when possible; with `pow2`, a power of two. */
size_t gpuhist_opencl_group_size(gpuhist_ctx *ctx, cl_kernel kernel, size_t cap, int pow2);

/* Set the arguments shared by every slot kernel, from index `first`: map (by value), edges,
 * slots, C, and the histogram of each of the 4 channels (channel_slot, -1 = not histogrammed).
 * @return the next free argument index via *next. */
gpuhist_status gpuhist_opencl_common_args(gpuhist_ctx *ctx, cl_kernel kernel, cl_uint first,
                                          const gpuhist_plan *plan,
                                          const gpuhist_opencl_job *job, cl_uint *next);

/* Enqueue a 1-D kernel and check it. */
gpuhist_status gpuhist_opencl_launch(gpuhist_ctx *ctx, cl_kernel kernel, size_t global,
                                     size_t local, const char *what);

/* Local memory budget a kernel may take for its histograms (bytes). */
size_t gpuhist_opencl_local_budget(const gpuhist_ctx *ctx);

/* Device time of the kernels of the last successful gpuhist_histogram() on an OpenCL context
 * (sum of the launches' profiling intervals: transfers excluded), or -1. For the benchmark,
 * which compares it with CUDA's device-resident timings; not part of the public API. */
double gpuhist_opencl_last_kernel_seconds(const gpuhist_ctx *ctx);

static inline gpuhist_opencl_state *gpuhist_opencl_state_of(const gpuhist_ctx *ctx)
{
    return (gpuhist_opencl_state *)ctx->backend_state;
}

#endif
