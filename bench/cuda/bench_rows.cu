/*
 * bench_rows.cu - the rows of the seed tables (--seeds, --opencl): one way of computing one
 * histogram each (gpuhist on device or host data, CUB, the read ceiling), timed, checked against
 * an oracle or the sums, and printed as a table of ms, GB/s and ratios to the ceiling and CUB.
 */
#include "gpuhist_bench.cuh"

HistSpec u8_256()
{
    HistSpec h;
    h.dtype = GPUHIST_U8;
    h.kind = K_INTEGER;
    h.bins = 256;
    return h;
}

/* gpuhist on device data, checked against `oracle` (when non-empty) or the sums. */
Row device_row(Ctxs &cx, const char *label, const char *name, const HistSpec &hs,
               const void *d, uint64_t pixels, const Counts *oracle)
{
    Row row;
    row.label = label;
    StratRun sr = time_device_strategy(cx.async, name, hs, d, pixels);
    row.t = sr.t;
    row.ran = sr.ran;
    if (!sr.t.ok)
        return row;
    if (oracle && !oracle->counts.empty())
        row.check = compare_counts(sr.full, *oracle, hs.bins, "gpuhist", "oracle");
    else if (hs.kind == K_INTEGER && hs.bins >= 256 && hs.dtype == GPUHIST_U8)
        row.check = sums_check(sr.full, hs.bins, hs.active, pixels);
    return row;
}

/* gpuhist on host data (any backend), timed by the host clock. */
Row host_row(gpuhist_ctx *ctx, const char *label, const char *name, const HistSpec &hs,
             const void *h, uint64_t pixels, const Counts *oracle)
{
    Row row;
    row.label = label;
    if (!ctx) {
        row.t.err = "no context";
        return row;
    }
    gpuhist_status st = gpuhist_set_strategy(ctx, name);
    if (st != GPUHIST_OK) {
        row.t.err = status_msg(ctx, st);
        row.t.unsupported = true;
        return row;
    }
    gpuhist_samples s = hs.samples(h, pixels, GPUHIST_MEMORY_HOST);
    Counts got;
    std::string *ran = &row.ran;
    row.t = measure(host_timed([&, ran](std::string &err) {
        gpuhist_status s2 = run_host_counts(ctx, hs, s, got, err, ran);
        if (s2 == GPUHIST_ERROR_UNSUPPORTED)
            return CallRes::UNSUPPORTED;
        return s2 == GPUHIST_OK ? CallRes::OK : CallRes::FAIL;
    }));
    if (row.t.ok) {
        if (oracle && !oracle->counts.empty())
            row.check = compare_counts(got, *oracle, hs.bins, "gpuhist", "oracle");
        else
            for (uint32_t c = 0; c < got.channels; ++c)
                if (got.total[c] != pixels)
                    row.check = "total " + std::to_string(got.total[c]) + " != " +
                                std::to_string(pixels);
    }
    return row;
}

Row cub_row(const HistSpec &hs, const void *d, uint64_t pixels, Counts *out)
{
    Row row;
    row.label = "CUB DeviceHistogram";
    std::string why = Cub::unsupported(hs, pixels);
    if (!why.empty()) {
        row.t.err = why;
        row.t.unsupported = true;
        return row;
    }
    g_cub.prepare(hs, d, pixels);
    row.t = measure(device_timed([&](std::string &err) { return g_cub.run(hs, d, pixels, err); }));
    if (row.t.ok && out)
        *out = g_cub.fetch(hs);
    return row;
}

Row ceiling_row(const void *d, uint64_t bytes)
{
    Row row;
    row.label = "read ceiling (16-byte loads)";
    row.t = measure_ceiling(d, bytes);
    return row;
}

void check_row(const Row &r, const char *table)
{
    if (!r.t.ok && !r.t.unsupported)
        fail_note(std::string(table) + " " + r.label + ": " + r.t.err);
    if (r.t.ok && !r.check.empty())
        fail_note(std::string(table) + " " + r.label + ": " + r.check);
}

void print_rows_gbps(const std::vector<Row> &rows, uint64_t bytes, double ceil_g,
                     double cub_g, const char *seed_col_name,
                     const std::vector<std::string> &seed_col)
{
    std::printf("  %-36s %9s %9s %7s %7s %5s  %-14s %s\n", "method", "ms", "GB/s", "/ceil", "/CUB",
                "runs", seed_col_name, "check");
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row &r = rows[i];
        std::string lab = r.label;
        if (!r.ran.empty() && lab.find("auto") != std::string::npos)
            lab += " (" + r.ran + ")";
        const char *seedv = i < seed_col.size() ? seed_col[i].c_str() : "";
        if (!r.t.ok) {
            std::printf("  %-36s %9s %9s %7s %7s %5s  %-14s %s\n", lab.c_str(),
                        r.t.unsupported ? "n/a" : "ERROR", "", "", "", "", seedv,
                        r.t.err.substr(0, 80).c_str());
            continue;
        }
        double g = gbps(bytes, r.t.ms);
        std::printf("  %-36s %9.3f %9.1f %7.3f %7.2f %4d%s  %-14s %s\n", lab.c_str(), r.t.ms, g,
                    ceil_g > 0 ? g / ceil_g : 0, cub_g > 0 ? g / cub_g : 0, r.t.runs,
                    r.t.capped ? "*" : " ", seedv, r.check.empty() ? "ok" : r.check.c_str());
    }
}
