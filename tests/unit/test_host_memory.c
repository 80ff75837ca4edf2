/*
 * test_host_memory.c - the host memory check (gpuhist_need_host_memory, src/core/common.c) with
 * its cached reading: a small request right after another is granted; a request larger than the
 * memory available is refused every time, also straight after small requests were granted from
 * the cache, with the message naming what needed the memory, how much, and what is available;
 * the same after the cache has expired (100 ms).
 */
#define _GNU_SOURCE
#include "gpuhist.h"
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void)
{
    gpuhist_ctx *ctx = NULL;
    CHECK(gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) == GPUHIST_OK);
    if (!ctx)
        return check_exit();
    const uint64_t avail = gpuhist_host_memory_available();
    printf("test_host_memory: %.2f GiB available now\n", (double)avail / 1073741824.0);
    for (int i = 0; i < 1000; ++i)
        CHECK(gpuhist_need_host_memory(ctx, 4096, "small") == GPUHIST_OK);
    if (avail == 0 || avail > UINT64_MAX / 4) {
        printf("no reading of the available memory: refusals not tested\n");
        gpuhist_destroy(ctx);
        return check_exit();
    }
    for (int round = 0; round < 2; ++round) {
        check_context("round %d", round);
        CHECK(gpuhist_need_host_memory(ctx, 4096, "small") == GPUHIST_OK);
        CHECK(gpuhist_need_host_memory(ctx, avail * 3, "the test's big table") ==
              GPUHIST_ERROR_OUT_OF_MEMORY);
        const char *msg = gpuhist_last_error(ctx);
        CHECK_MSG(strstr(msg, "the test's big table needs ") == msg, "message: %s", msg);
        CHECK_MSG(strstr(msg, "GiB of host memory, only ") != NULL, "message: %s", msg);
        CHECK_MSG(strstr(msg, "GiB is available") != NULL, "message: %s", msg);
        CHECK(gpuhist_need_host_memory(ctx, 4096, "small") == GPUHIST_OK);
        CHECK(gpuhist_need_host_memory(ctx, avail * 3, "again") == GPUHIST_ERROR_OUT_OF_MEMORY);
        /* past the cache's life */
        struct timespec ts = {0, 150000000};
        nanosleep(&ts, NULL);
    }
    gpuhist_destroy(ctx);
    return check_exit();
}
