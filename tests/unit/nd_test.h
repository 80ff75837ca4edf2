/*
 * nd_test.h - what the N-D tests (test_histogramdd*.c) share: a reproducible random number
 * generator (splitmix64) and the start of a program: the backend from argv[1], the seed from
 * GPUHIST_TEST_SEED (fixed by default, printed; "random" for a new one) and a context.
 *
 * Header-only, like check.h: each test is one translation unit.
 */
#ifndef GPUHIST_TEST_ND_TEST_H
#define GPUHIST_TEST_ND_TEST_H

#include "gpuhist.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ND_TEST_DEFAULT_SEED 20261126u

typedef struct {
    uint64_t s;
} rng_t;

static CHECK_UNUSED uint64_t next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static CHECK_UNUSED uint64_t below(rng_t *r, uint64_t n) { return n ? next(r) % n : 0; }
static CHECK_UNUSED double unit(rng_t *r) { return (double)(next(r) >> 11) * 0x1p-53; }

/* Parse `program cpu|opencl|cuda`, pick the seed and create a context on that backend.
 * @return -1 to go on, else the exit status (2: usage, 77: no device, 1: no context). */
static CHECK_UNUSED int nd_test_start(int argc, char **argv, const char *program,
                                      gpuhist_backend *backend, uint64_t *seed,
                                      gpuhist_ctx **ctx)
{
    *backend = GPUHIST_BACKEND_CPU;
    if (argc > 1 && !gpuhist_backend_parse(argv[1], backend)) {
        fprintf(stderr, "usage: %s cpu|opencl|cuda\n", program);
        return 2;
    }
    const char *env = getenv("GPUHIST_TEST_SEED");
    *seed = env && strcmp(env, "random") == 0 ? (uint64_t)time(NULL)
            : env && *env                    ? strtoull(env, NULL, 0)
                                             : ND_TEST_DEFAULT_SEED;
    gpuhist_status cs = gpuhist_create(ctx, *backend);
    if (cs == GPUHIST_ERROR_NO_DEVICE) {
        printf("no %s device: skipped (%s)\n", gpuhist_backend_name(*backend),
               gpuhist_last_error(NULL));
        return 77;
    }
    if (cs != GPUHIST_OK) {
        fprintf(stderr, "cannot create a context: %s\n", gpuhist_last_error(NULL));
        return 1;
    }
    return -1;
}

#endif
