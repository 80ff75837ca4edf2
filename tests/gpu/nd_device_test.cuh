/*
 * nd_device_test.cuh - what the N-D device tests (test_nd_device.cu, test_nd_two_pass.cu) share:
 * the failure count and CHECK / CK, and one gpuhist_histogramdd call into a Result (status,
 * message, strategy, counts, edges, tallies; counts and edges pre-filled with junk so a missed
 * write shows) with the bit-for-bit comparison of two Results.
 *
 * Header-only: each test is one translation unit.
 */
#ifndef GPUHIST_TEST_ND_DEVICE_TEST_CUH
#define GPUHIST_TEST_ND_DEVICE_TEST_CUH

#include "gpuhist.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int g_fail = 0, g_cases = 0;

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                    \
            std::printf(__VA_ARGS__);                                                           \
            std::printf("\n");                                                                  \
            ++g_fail;                                                                           \
        }                                                                                       \
    } while (0)

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            std::printf("FATAL %s: %s\n", #x, cudaGetErrorString(e_));                          \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

struct Result {
    gpuhist_status st = GPUHIST_OK;
    std::string err, strategy;
    std::vector<uint64_t> counts;
    std::vector<std::vector<double>> edges;
    uint64_t nan = 0, out = 0, total = 0;
};

inline uint64_t total_of(const std::vector<gpuhist_bin_spec> &axes)
{
    uint64_t t = 1;
    for (auto &a : axes)
        t *= a.bins;
    return t;
}

/* One N-D histogram of pts into a Result (host counts). */
inline Result run(gpuhist_ctx *ctx, const gpuhist_points &pts,
                  const std::vector<gpuhist_bin_spec> &axes)
{
    Result r;
    r.counts.assign(total_of(axes), 0xDEADBEEF);
    r.edges.resize(axes.size());
    gpuhist_nd_result res;
    std::memset(&res, 0, sizeof res);
    res.counts = r.counts.data();
    for (size_t a = 0; a < axes.size(); ++a) {
        r.edges[a].assign(axes[a].bins + 1, -7.0);
        res.edges[a] = r.edges[a].data();
    }
    r.st = gpuhist_histogramdd(ctx, &pts, axes.data(), &res);
    r.err = gpuhist_last_error(ctx);
    r.strategy = res.strategy ? res.strategy : "";
    r.nan = res.nan, r.out = res.out, r.total = res.total;
    return r;
}

/* Status, counts, tallies and the edges' bits equal. */
inline bool same(const Result &a, const Result &b)
{
    if (a.st != b.st || a.counts != b.counts || a.nan != b.nan || a.out != b.out ||
        a.total != b.total)
        return false;
    for (size_t i = 0; i < a.edges.size(); ++i)
        if (std::memcmp(a.edges[i].data(), b.edges[i].data(), a.edges[i].size() * 8) != 0)
            return false;
    return true;
}

#endif
