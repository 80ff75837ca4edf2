/*
 * register_probe.c - can the device read a page-cache file by DMA with no copy on the host?
 * Maps FILE read-only and, window by window, page-locks the mapping in place
 * (cudaHostRegister with cudaHostRegisterReadOnly) and copies it to the device, then unlocks
 * it. Prints, in GB/s of file bytes:
 *   - register + unregister alone, one thread and T threads (windows shared out);
 *   - the pipeline: T threads lock windows ahead while one stream copies the locked ones to
 *     the device (what the command's reader would do instead of pread into staging);
 *   - for scale: pinned host-to-device of a cudaHostAlloc buffer, and what four 16 MiB
 *     page-locked buffers (the command's staging ring) cost to allocate.
 * usage: register_probe FILE [WINDOW_MIB=64] [THREADS=4]
 */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "register_probe: %s: %s\n", #x, cudaGetErrorString(e_));            \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char *g_map;
static uint64_t g_size, g_window;
static uint64_t g_windows;

typedef struct {
    int t, n;
} reg_job;

/* Bytes of window w (the last one may be short). */
static uint64_t window_len(uint64_t w)
{
    uint64_t at = w * g_window;
    return g_size - at < g_window ? g_size - at : g_window;
}

/* windows t, t + n, ...: lock and unlock each */
static void *reg_only(void *arg)
{
    reg_job *j = arg;
    CK(cudaSetDevice(0));
    for (uint64_t w = (uint64_t)j->t; w < g_windows; w += (uint64_t)j->n) {
        CK(cudaHostRegister(g_map + w * g_window, window_len(w), cudaHostRegisterReadOnly));
        CK(cudaHostUnregister(g_map + w * g_window));
    }
    return NULL;
}

/* pipeline state: window w is locked when locked[w] = 1 (set by a locker thread) */
static volatile int *g_locked;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static volatile uint64_t g_copied; /* windows whose copy finished (unlocked by the copier) */
static int g_ahead;                /* windows locked ahead of the copy at most */

static void *locker(void *arg)
{
    reg_job *j = arg;
    CK(cudaSetDevice(0));
    for (uint64_t w = (uint64_t)j->t; w < g_windows; w += (uint64_t)j->n) {
        pthread_mutex_lock(&g_lock);
        while (w >= g_copied + (uint64_t)g_ahead)
            pthread_cond_wait(&g_cond, &g_lock);
        pthread_mutex_unlock(&g_lock);
        CK(cudaHostRegister(g_map + w * g_window, window_len(w), cudaHostRegisterReadOnly));
        pthread_mutex_lock(&g_lock);
        g_locked[w] = 1;
        pthread_cond_broadcast(&g_cond);
        pthread_mutex_unlock(&g_lock);
    }
    return NULL;
}

/* Unlock window `unlocked` (its copy has finished) and let the lockers move on past it.
 * @return the windows unlocked now. */
static uint64_t unlock_next(uint64_t unlocked)
{
    CK(cudaHostUnregister(g_map + unlocked * g_window));
    pthread_mutex_lock(&g_lock);
    g_copied = unlocked + 1;
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_lock);
    return unlocked + 1;
}

/* Start n threads running fn on jobs {i, n}. */
static void start_threads(int n, void *(*fn)(void *), pthread_t *th, reg_job *jobs)
{
    for (int i = 0; i < n; ++i) {
        jobs[i] = (reg_job){i, n};
        pthread_create(&th[i], NULL, fn, &jobs[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: register_probe FILE [WINDOW_MIB] [THREADS]\n");
        return 2;
    }
    g_window = (uint64_t)(argc > 2 ? atoi(argv[2]) : 64) << 20;
    int T = argc > 3 ? atoi(argv[3]) : 4;
    int fd = open(argv[1], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 1;
    }
    g_size = (uint64_t)sb.st_size;
    g_windows = (g_size + g_window - 1) / g_window;
    g_map = mmap(NULL, g_size, PROT_READ, MAP_SHARED, fd, 0);
    if (g_map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    CK(cudaSetDevice(0));
    int ro = 0;
    CK(cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0));
    printf("read-only registration supported: %d; file %.2f GiB, window %llu MiB\n", ro,
           g_size / 1073741824.0, (unsigned long long)(g_window >> 20));
    unsigned char *dev[2];
    CK(cudaMalloc((void **)&dev[0], g_window));
    CK(cudaMalloc((void **)&dev[1], g_window));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    /* what page-locked staging costs to make: four 16 MiB buffers, as the command's ring */
    {
        void *ring[4];
        double a0 = now();
        for (int i = 0; i < 4; ++i)
            CK(cudaHostAlloc(&ring[i], (size_t)16 << 20, cudaHostAllocDefault));
        double a1 = now();
        for (int i = 0; i < 4; ++i)
            CK(cudaFreeHost(ring[i]));
        printf("cudaHostAlloc of 4 x 16 MiB: %.1f ms (cudaFreeHost %.1f ms)\n", (a1 - a0) * 1e3,
               (now() - a1) * 1e3);
    }
    /* pinned host-to-device for scale */
    void *pin;
    CK(cudaHostAlloc(&pin, g_window, cudaHostAllocDefault));
    double t0 = now();
    for (int i = 0; i < 32; ++i)
        CK(cudaMemcpyAsync(dev[i & 1], pin, g_window, cudaMemcpyHostToDevice, s));
    CK(cudaStreamSynchronize(s));
    printf("pinned h2d: %.2f GB/s\n", 32.0 * g_window / (now() - t0) / 1e9);
    CK(cudaFreeHost(pin));

    int counts[3] = {1, T, 2 * T};
    for (int k = 0; k < 3; ++k) {
        int n = counts[k];
        pthread_t th[64];
        reg_job jobs[64];
        t0 = now();
        start_threads(n, reg_only, th, jobs);
        for (int i = 0; i < n; ++i)
            pthread_join(th[i], NULL);
        printf("register + unregister, %2d threads: %.2f GB/s\n", n, g_size / (now() - t0) / 1e9);
    }

    for (int k = 1; k < 3; ++k) {
        int n = counts[k];
        g_ahead = 2 * n + 2;
        g_locked = calloc(g_windows, sizeof(int));
        g_copied = 0;
        cudaEvent_t *done = calloc(g_windows, sizeof(cudaEvent_t));
        pthread_t th[64];
        reg_job jobs[64];
        t0 = now();
        start_threads(n, locker, th, jobs);
        uint64_t unlocked = 0;
        for (uint64_t w = 0; w < g_windows; ++w) {
            /* the lockers may lock window w only when fewer than g_ahead are still locked */
            while (w >= unlocked + (uint64_t)g_ahead) {
                CK(cudaEventSynchronize(done[unlocked]));
                unlocked = unlock_next(unlocked);
            }
            pthread_mutex_lock(&g_lock);
            while (!g_locked[w])
                pthread_cond_wait(&g_cond, &g_lock);
            pthread_mutex_unlock(&g_lock);
            CK(cudaMemcpyAsync(dev[w & 1], g_map + w * g_window, window_len(w),
                               cudaMemcpyHostToDevice, s));
            CK(cudaEventCreateWithFlags(&done[w], cudaEventDisableTiming));
            CK(cudaEventRecord(done[w], s));
            /* unlock the windows whose copies finished, keeping the copy engine fed */
            while (unlocked < w && cudaEventQuery(done[unlocked]) == cudaSuccess)
                unlocked = unlock_next(unlocked);
        }
        CK(cudaStreamSynchronize(s));
        while (unlocked < g_windows)
            unlocked = unlock_next(unlocked);
        for (int i = 0; i < n; ++i)
            pthread_join(th[i], NULL);
        printf("lock ahead (%2d threads) + copy to device: %.2f GB/s\n", n,
               g_size / (now() - t0) / 1e9);
        for (uint64_t w = 0; w < g_windows; ++w)
            cudaEventDestroy(done[w]);
        free(done);
        free((void *)g_locked);
    }
    return 0;
}
