/*
 * exit_probe.c - what a process that used the device costs after its work is done, by the
 * way it ends. Creates the context (cudaFree(0)), optionally allocates what the command's
 * stream holds (page-locked staging, device counts), then ends one of four ways:
 *   return  - main returns (exit: atexit handlers, the runtime's teardown, the kernel's)
 *   _exit   - _exit(0) at once (no runtime teardown; the kernel still closes the device)
 *   reset   - cudaDeviceReset, then return
 *   free    - every allocation freed, then return
 * Prints the in-process seconds up to the end; the caller (e2e.py --exit-probe, or a shell
 * loop) times the whole process, so the difference is the cost of ending.
 * usage: exit_probe MODE [STAGING_MIB=64] [DEVICE_MIB=512]
 */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: exit_probe return|_exit|reset|free [STAGING_MIB] [DEVICE_MIB]\n");
        return 2;
    }
    const char *mode = argv[1];
    const size_t staging = (size_t)(argc > 2 ? atol(argv[2]) : 64) << 20;
    const size_t device = (size_t)(argc > 3 ? atol(argv[3]) : 512) << 20;
    const double t0 = now();
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "exit_probe: no device\n");
        return 1;
    }
    const double t_ctx = now();
    void *h = NULL, *d = NULL;
    if (staging && cudaHostAlloc(&h, staging, cudaHostAllocDefault) != cudaSuccess)
        return 1;
    if (device && cudaMalloc(&d, device) != cudaSuccess)
        return 1;
    if (h)
        memset(h, 1, staging);
    if (d && h)
        cudaMemcpy(d, h, staging < device ? staging : device, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    const double t_work = now();
    printf("%s: context %.3f s, allocations and a copy %.3f s", mode, t_ctx - t0, t_work - t_ctx);
    if (strcmp(mode, "_exit") == 0) {
        printf("\n");
        fflush(NULL);
        _exit(0);
    }
    if (strcmp(mode, "reset") == 0)
        cudaDeviceReset();
    if (strcmp(mode, "free") == 0) {
        cudaFreeHost(h);
        cudaFree(d);
    }
    printf(", %s %.3f s\n", mode, now() - t_work);
    return 0;
}
