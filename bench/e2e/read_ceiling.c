/*
 * read_ceiling.c - the file read ceiling for the end-to-end benchmark: the fastest parallel
 * reader we can write over a file (pread by T threads into reused buffers, nothing else done
 * with the bytes), and for comparison one thread reading into one reused buffer.
 *
 * usage: read_ceiling FILE [THREADS...]   prints "threads T: X GB/s" for each T (default 1 4 8 16)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SLICE ((size_t)8 << 20)

typedef struct {
    int fd;
    uint64_t size;
    int t, nthreads;
    int ok;
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Thread t reads slices t, t + T, t + 2T, ... into its own reused buffer. */
static void *reader(void *arg)
{
    job *j = arg;
    unsigned char *buf = malloc(SLICE);
    j->ok = buf != NULL;
    for (uint64_t at = (uint64_t)j->t * SLICE; buf && at < j->size;
         at += (uint64_t)j->nthreads * SLICE) {
        size_t want = j->size - at < SLICE ? (size_t)(j->size - at) : SLICE;
        if (pread(j->fd, buf, want, (off_t)at) != (ssize_t)want) {
            j->ok = 0;
            break;
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [THREADS...]\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 1;
    }
    int defaults[] = {1, 4, 8, 16};
    int nt = argc > 2 ? argc - 2 : 4;
    for (int k = 0; k < nt; ++k) {
        int T = argc > 2 ? atoi(argv[k + 2]) : defaults[k];
        if (T < 1 || T > 256)
            continue;
        double best = 1e30;
        for (int rep = 0; rep < 3; ++rep) {
            pthread_t tid[256];
            job j[256];
            double t0 = now();
            for (int t = 0; t < T; ++t) {
                j[t] = (job){fd, (uint64_t)sb.st_size, t, T, 0};
                pthread_create(&tid[t], NULL, reader, &j[t]);
            }
            int ok = 1;
            for (int t = 0; t < T; ++t) {
                pthread_join(tid[t], NULL);
                ok &= j[t].ok;
            }
            double dt = now() - t0;
            if (!ok) {
                fprintf(stderr, "%s: read failed\n", argv[1]);
                return 1;
            }
            best = dt < best ? dt : best;
        }
        printf("threads %d: %.2f GB/s (%.3f s for %.2f GiB, best of 3)\n", T,
               (double)sb.st_size / best / 1e9, best, (double)sb.st_size / 1073741824.0);
    }
    close(fd);
    return 0;
}
