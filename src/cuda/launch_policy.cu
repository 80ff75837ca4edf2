/*
 * launch_policy.cu - occupancy of a kernel configuration (resident blocks per SM), asked of the
 * CUDA runtime once per (kernel, device, block, dynamic shared memory) and remembered for the
 * life of the process, with the kernel's dynamic shared-memory limit raised once when a
 * configuration needs more than the default 48 KiB. Limits: 256 configurations and 128 raised
 * limits are remembered; beyond that the runtime is simply asked again.
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
    if (smem > 48u * 1024u) {
        smem_limit_entry *lim = NULL;
        for (int i = 0; i < g_smem_limit_n && !lim; ++i)
            if (g_smem_limit[i].kernel == kernel && g_smem_limit[i].device == device)
                lim = &g_smem_limit[i];
        if (!lim || lim->limit < smem) {
            cudaError_t e = cudaFuncSetAttribute(
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess)
                return e;
            if (lim)
                lim->limit = smem;
            else if (g_smem_limit_n < (int)(sizeof g_smem_limit / sizeof g_smem_limit[0]))
                g_smem_limit[g_smem_limit_n++] = smem_limit_entry{kernel, device, smem};
            else
                remember = false;
        }
    }
    int n = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem);
    if (e != cudaSuccess)
        return e;
    *per_sm = n;
    if (remember && g_occupancy_n < (int)(sizeof g_occupancy / sizeof g_occupancy[0]))
        g_occupancy[g_occupancy_n++] = occupancy_entry{kernel, device, block, n, smem};
    return cudaSuccess;
}
