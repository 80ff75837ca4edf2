/*
 * launch_policy.cu - the CUDA side of launch_policy.h: a kernel's resident blocks per SM, asked
 * of the CUDA runtime once per (kernel, device, block, dynamic shared memory) and remembered for
 * the life of the process, its dynamic shared-memory limit raised once per kernel and device when
 * a launch needs more than the default 48 KiB, and gh_launch_grid, which feeds them to THE grid
 * rule (gh_launch_grid_of). Repeated launches cost no CUDA runtime call on the host path.
 * Limits: 256 configurations and 128 raised limits are remembered; beyond that the runtime is
 * simply asked again.
 */
#include "cuda_internal.cuh"

#include <mutex>

namespace {

/* gpuhist_cuda_blocks_per_sm's memory: small tables, searched linearly (a process uses a few
 * dozen kernel configurations at most); when full, results are simply not remembered. The
 * dynamic shared-memory limit of a kernel is only ever raised (a remembered configuration must
 * stay launchable after a later one asked for less). */
struct occupancy_entry {
    const void *kernel;
    int device, block, per_sm;
    size_t smem;
};
struct smem_limit_entry {
    const void *kernel;
    int device;
    size_t limit;
};
static occupancy_entry g_occupancy[256];
static int g_occupancy_n;
static smem_limit_entry g_smem_limit[128];
static int g_smem_limit_n;
static std::mutex g_occupancy_lock;

/* Raise the dynamic shared-memory limit of `kernel` on `device` to `smem` when it exceeds the
 * default 48 KiB and was not raised that far already; *remember = false when the table is full
 * (the limit is then set again next time). Called with g_occupancy_lock held. */
cudaError_t raise_smem_limit(const void *kernel, int device, size_t smem, bool *remember)
{
    if (smem <= 48u * 1024u)
        return cudaSuccess;
    smem_limit_entry *lim = NULL;
    for (int i = 0; i < g_smem_limit_n && !lim; ++i)
        if (g_smem_limit[i].kernel == kernel && g_smem_limit[i].device == device)
            lim = &g_smem_limit[i];
    if (lim && lim->limit >= smem)
        return cudaSuccess;
    cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    if (lim)
        lim->limit = smem;
    else if (g_smem_limit_n < (int)(sizeof g_smem_limit / sizeof g_smem_limit[0]))
        g_smem_limit[g_smem_limit_n++] = smem_limit_entry{kernel, device, smem};
    else
        *remember = false;
    return cudaSuccess;
}

} /* namespace */

cudaError_t gpuhist_cuda_blocks_per_sm(const void *kernel, int block, size_t smem, int device,
                                       int *per_sm)
{
    std::lock_guard<std::mutex> guard(g_occupancy_lock);
    for (int i = 0; i < g_occupancy_n; ++i) {
        const occupancy_entry &e = g_occupancy[i];
        if (e.kernel == kernel && e.device == device && e.block == block && e.smem == smem) {
            *per_sm = e.per_sm;
            return cudaSuccess;
        }
    }
    bool remember = true; /* false: the limit is not tracked, so set it again next time */
    const cudaError_t le = raise_smem_limit(kernel, device, smem, &remember);
    if (le != cudaSuccess)
        return le;
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem);
    if (e != cudaSuccess)
        return e;
    *per_sm = n;
    if (remember && g_occupancy_n < (int)(sizeof g_occupancy / sizeof g_occupancy[0]))
        g_occupancy[g_occupancy_n++] = occupancy_entry{kernel, device, block, n, smem};
    return cudaSuccess;
}

cudaError_t gpuhist_cuda_smem_limit(const void *kernel, size_t smem, int device)
{
    std::lock_guard<std::mutex> guard(g_occupancy_lock);
    bool remember = true;
    return raise_smem_limit(kernel, device, smem, &remember);
}

int gh_launch_grid(const gh_launch_policy &p, const void *kernel, unsigned threads, size_t smem,
                   int device, int sm_count, int tuned, uint64_t work, cudaError_t *err)
{
    int resident = 0;
    *err = (p.flags & GH_LP_OCCUPANCY)
               ? gpuhist_cuda_blocks_per_sm(kernel, (int)threads, smem, device, &resident)
               : gpuhist_cuda_smem_limit(kernel, smem, device);
    if (*err != cudaSuccess)
        return 0;
    if ((p.flags & GH_LP_OCCUPANCY) && resident < 1) {
        *err = cudaErrorInvalidConfiguration;
        return 0;
    }
    return (int)gh_launch_grid_of(&p, threads, sm_count, resident, tuned, work);
}
