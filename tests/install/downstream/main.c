/* A tiny program using the installed gpuhist: a histogram on the CPU backend, checked. */
#include <gpuhist.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (gpuhist_version_number() / 100 != GPUHIST_VERSION_NUMBER / 100) {
        fprintf(stderr, "header %s but library %s\n", GPUHIST_VERSION_STRING, gpuhist_version());
        return 1;
    }
    gpuhist_ctx *ctx;
    gpuhist_status st = gpuhist_create(&ctx, GPUHIST_BACKEND_CPU);
    if (st != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_create: %s\n", gpuhist_status_string(st));
        return 1;
    }
    const float data[] = {0.1f, 0.2f, 0.6f, 0.99f, 1.0f, -1.0f};
    gpuhist_samples s = gpuhist_samples_1d(data, GPUHIST_F32, 6);
    gpuhist_bin_spec b = gpuhist_bins_even(2, 0.0, 1.0);
    uint64_t counts[2];
    gpuhist_result r = gpuhist_result_host(counts);
    if (gpuhist_histogram(ctx, &s, &b, &r) != GPUHIST_OK) {
        fprintf(stderr, "gpuhist_histogram: %s\n", gpuhist_last_error(ctx));
        return 1;
    }
    int ok = counts[0] == 2 && counts[1] == 2 && r.underflow[0] == 1 && r.overflow[0] == 1 &&
             r.total[0] == 6;
    printf("downstream: gpuhist %s, counts %llu %llu, underflow %llu, overflow %llu: %s\n",
           gpuhist_version(), (unsigned long long)counts[0], (unsigned long long)counts[1],
           (unsigned long long)r.underflow[0], (unsigned long long)r.overflow[0],
           ok ? "ok" : "WRONG");
    gpuhist_destroy(ctx);
    return ok ? 0 : 1;
}
