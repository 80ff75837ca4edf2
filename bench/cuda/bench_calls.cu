/*
 * bench_calls.cu - the gpuhist calls every mode makes, through the public API: contexts (timing on
 * the benchmark's stream, asynchronous, device in and out; verification with host counts and
 * tallies; the CPU's cpu-reference), a synchronous call into host counts, a strategy timed on
 * device-resident data, and the comparisons of two results (counts, tallies, sums).
 */
#include "gpuhist_bench.cuh"

/* ---- results and their comparison ------------------------------------------------------------ */

/* "" when equal; otherwise what differs (first difference, how many). */
std::string compare_counts(const Counts &a, const Counts &b, uint32_t bins,
                           const char *an, const char *bn)
{
    char msg[320];
    if (a.counts.size() != b.counts.size()) {
        std::snprintf(msg, sizeof msg, "%s has %zu counts, %s %zu", an, a.counts.size(), bn,
                      b.counts.size());
        return msg;
    }
    size_t diff = 0, first = 0;
    for (size_t i = 0; i < a.counts.size(); ++i)
        if (a.counts[i] != b.counts[i] && diff++ == 0)
            first = i;
    if (diff) {
        std::snprintf(msg, sizeof msg,
                      "%zu of %zu counts differ; first: channel %zu bin %zu: %s %llu, %s %llu",
                      diff, a.counts.size(), first / bins, first % bins, an,
                      (unsigned long long)a.counts[first], bn, (unsigned long long)b.counts[first]);
        return msg;
    }
    if (a.have_tallies && b.have_tallies) {
        for (uint32_t c = 0; c < a.channels; ++c) {
            if (a.under[c] != b.under[c] || a.over[c] != b.over[c] || a.nan[c] != b.nan[c] ||
                a.total[c] != b.total[c]) {
                std::snprintf(msg, sizeof msg,
                              "channel %u tallies differ (under/over/nan/total): %s %llu/%llu/%llu/%llu, "
                              "%s %llu/%llu/%llu/%llu",
                              c, an, (unsigned long long)a.under[c], (unsigned long long)a.over[c],
                              (unsigned long long)a.nan[c], (unsigned long long)a.total[c], bn,
                              (unsigned long long)b.under[c], (unsigned long long)b.over[c],
                              (unsigned long long)b.nan[c], (unsigned long long)b.total[c]);
                return msg;
            }
        }
    }
    return "";
}

std::string status_msg(gpuhist_ctx *ctx, gpuhist_status st)
{
    std::string m = gpuhist_status_string(st);
    const char *e = ctx ? gpuhist_last_error(ctx) : nullptr;
    if (e && *e)
        m += std::string(": ") + e;
    return m;
}

/* ---- contexts and calls ---------------------------------------------------------------------- */

/* A synchronous call writing host counts (samples anywhere). */
gpuhist_status run_host_counts(gpuhist_ctx *ctx, const HistSpec &hs,
                               const gpuhist_samples &s, Counts &out, std::string &err,
                               std::string *ran)
{
    out.counts.assign((size_t)hs.bins * hs.active, ~0ull); /* poison: every count must be written */
    gpuhist_bin_spec spec = hs.spec();
    gpuhist_result r = gpuhist_result_host(out.counts.data());
    gpuhist_status st = gpuhist_histogram(ctx, &s, &spec, &r);
    if (st != GPUHIST_OK) {
        err = status_msg(ctx, st);
        return st;
    }
    out.channels = r.channels;
    for (uint32_t c = 0; c < r.channels && c < GPUHIST_MAX_CHANNELS; ++c) {
        out.under[c] = r.underflow[c];
        out.over[c] = r.overflow[c];
        out.nan[c] = r.nan[c];
        out.total[c] = r.total[c];
    }
    out.have_tallies = true;
    if (ran)
        *ran = r.strategy ? r.strategy : "?";
    return GPUHIST_OK;
}

gpuhist_ctx *make_ctx(gpuhist_backend b, bool async_device)
{
    gpuhist_ctx *ctx = nullptr;
    gpuhist_status st = gpuhist_create_on(&ctx, b, b == GPUHIST_BACKEND_CPU ? 0 : g_opt.device);
    if (st != GPUHIST_OK) {
        std::printf("  cannot create a %s context: %s\n", gpuhist_backend_name(b),
                    gpuhist_status_string(st));
        return nullptr;
    }
    if (async_device) {
        if (gpuhist_set_stream(ctx, (void *)g_stream) != GPUHIST_OK ||
            gpuhist_set_async(ctx, 1) != GPUHIST_OK) {
            std::printf("  cannot set stream/async: %s\n", gpuhist_last_error(ctx));
            gpuhist_destroy(ctx);
            return nullptr;
        }
    }
    return ctx;
}

Ctxs make_ctxs()
{
    Ctxs c;
    c.async = make_ctx(GPUHIST_BACKEND_CUDA, true);
    c.sync = make_ctx(GPUHIST_BACKEND_CUDA, false);
    c.ref = make_ctx(GPUHIST_BACKEND_CPU, false);
    if (c.ref && gpuhist_set_strategy(c.ref, "cpu-reference") != GPUHIST_OK) {
        std::printf("  cpu-reference not registered (%s); checking against CPU auto instead\n",
                    gpuhist_last_error(c.ref));
    }
    return c;
}

/* ---- gpuhist strategies, device resident ----------------------------------------------------- */

static uint64_t *g_dcounts; /* device counts of the async context */
static size_t g_dcounts_cap;

void alloc_device_counts(size_t n)
{
    if (n <= g_dcounts_cap)
        return;
    if (g_dcounts)
        CK(cudaFree(g_dcounts));
    CK(cudaMalloc(&g_dcounts, n * sizeof(uint64_t)));
    g_dcounts_cap = n;
}

/* Time `name` (nullptr = auto) on device samples with device counts, asynchronously. */
StratRun time_device_strategy(gpuhist_ctx *actx, const char *name, const HistSpec &hs,
                              const void *d, uint64_t pixels)
{
    StratRun sr;
    sr.requested = name ? name : "auto";
    gpuhist_status st = gpuhist_set_strategy(actx, name);
    if (st != GPUHIST_OK) {
        sr.t.err = status_msg(actx, st);
        sr.t.unsupported = (st == GPUHIST_ERROR_UNKNOWN_STRATEGY);
        return sr;
    }
    size_t nc = (size_t)hs.bins * hs.active;
    if (nc > g_dcounts_cap) {
        sr.t.err = "bench: device counts buffer too small";
        return sr;
    }
    gpuhist_samples s = hs.samples(d, pixels, GPUHIST_MEMORY_DEVICE);
    gpuhist_bin_spec spec = hs.spec();
    std::string *ran = &sr.ran;
    /* poison, so counts a strategy failed to write cannot pass as the previous strategy's */
    CK(cudaMemset(g_dcounts, 0xFF, nc * sizeof(uint64_t)));
    sr.t = measure(device_timed([&, ran](std::string &err) {
        gpuhist_result r;
        std::memset(&r, 0, sizeof r);
        r.counts = g_dcounts;
        r.counts_location = GPUHIST_MEMORY_DEVICE;
        gpuhist_status s2 = gpuhist_histogram(actx, &s, &spec, &r);
        if (s2 == GPUHIST_ERROR_UNSUPPORTED) {
            err = status_msg(actx, s2);
            return CallRes::UNSUPPORTED;
        }
        if (s2 != GPUHIST_OK) {
            err = status_msg(actx, s2);
            return CallRes::FAIL;
        }
        *ran = r.strategy ? r.strategy : (name ? name : "auto");
        return CallRes::OK;
    }));
    if (sr.t.ok) {
        CK(cudaStreamSynchronize(g_stream));
        sr.full.counts.resize(nc);
        CK(cudaMemcpy(sr.full.counts.data(), g_dcounts, nc * sizeof(uint64_t),
                      cudaMemcpyDeviceToHost));
        sr.full.channels = hs.active;
    }
    return sr;
}

std::string sums_check(const Counts &c, uint32_t bins, uint32_t active, uint64_t expect)
{
    for (uint32_t ch = 0; ch < active; ++ch) {
        uint64_t sum = 0;
        for (uint32_t b = 0; b < bins; ++b)
            sum += c.counts[(size_t)ch * bins + b];
        if (sum != expect) {
            char m[160];
            std::snprintf(m, sizeof m, "channel %u: counts sum to %llu, expected %llu", ch,
                          (unsigned long long)sum, (unsigned long long)expect);
            return m;
        }
    }
    return "";
}
