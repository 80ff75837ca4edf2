/*
 * bench_matrix.cu - gpuhist-bench --matrix: every cell of the performance matrix
 * (docs/PERFORMANCE.md) on every distribution: the read ceiling, CUB and every CUDA strategy
 * (auto first) on the same device buffer, each checked bit-exact against cpu-reference on a
 * prefix and on the whole buffer against the counts' sums and CUB. One MATRIX line per cell
 * (scripts/gpu-check reads them) and the JSON of bench/results/latest.json, rewritten after
 * every cell.
 */
#include "gpuhist_bench.cuh"

#include <algorithm>
#include <cmath>

/* ---- JSON ------------------------------------------------------------------------------------ */

static std::string jstr(const std::string &s)
{
    std::string o = "\"";
    for (char ch : s) {
        unsigned char c = (unsigned char)ch;
        if (c == '"' || c == '\\') {
            o += '\\';
            o += ch;
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += ch;
        }
    }
    return o + "\"";
}

static std::string jnum(double v)
{
    if (!std::isfinite(v))
        return "null";
    char b[64];
    std::snprintf(b, sizeof b, "%.4g", v);
    if (std::fabs(v) >= 1e4) /* GB/s: keep one decimal rather than an exponent */
        std::snprintf(b, sizeof b, "%.1f", v);
    return b;
}

struct Entry {
    std::string cell, dtype, kind, dist, strategy, requested, verify;
    uint32_t bins = 0, channels = 1, active = 1;
    double ms = 0, gbps = 0, ceiling_gbps = 0, cub_gbps = 0, target = 0;
    int runs = 0;
    bool capped = false, is_auto = false;
    /* auto rows: */
    std::string best_strategy;
    double best_gbps = 0;
    bool extra_10x_cub = false; /* the 2^24 cell's second target */
};

static std::vector<Entry> g_entries;

static std::string entry_json(const Entry &e, bool with_auto_fields)
{
    double cr = e.ceiling_gbps > 0 ? e.gbps / e.ceiling_gbps : 0;
    double vc = e.cub_gbps > 0 ? e.gbps / e.cub_gbps : 0;
    std::string s = "{\"name\": " + jstr(e.cell) + ", \"dtype\": " + jstr(e.dtype) +
                    ", \"kind\": " + jstr(e.kind) + ", \"bins\": " + std::to_string(e.bins) +
                    ", \"dist\": " + jstr(e.dist) +
                    ", \"strategy\": " + jstr(e.strategy) + ", \"gbps\": " + jnum(e.gbps) +
                    ", \"ceiling_ratio\": " + jnum(cr) + ", \"cub_gbps\": " +
                    (e.cub_gbps > 0 ? jnum(e.cub_gbps) : std::string("null")) +
                    ", \"vs_cub\": " + (e.cub_gbps > 0 ? jnum(vc) : std::string("null")) +
                    ", \"target_ceiling_ratio\": " + jnum(e.target);
    s += ", \"channels\": " + std::to_string(e.channels) +
         ", \"active_channels\": " + std::to_string(e.active) +
         ", \"ceiling_gbps\": " + jnum(e.ceiling_gbps) + ", \"ms\": " + jnum(e.ms) +
         ", \"runs\": " + std::to_string(e.runs) + ", \"capped\": " + (e.capped ? "true" : "false") +
         ", \"verified\": " + jstr(e.verify);
    if (with_auto_fields) {
        bool met = cr >= e.target && (!e.extra_10x_cub || (e.cub_gbps > 0 && vc >= 10.0));
        s += ", \"best_strategy\": " + jstr(e.best_strategy) + ", \"best_gbps\": " +
             jnum(e.best_gbps) + ", \"auto_vs_best\": " +
             jnum(e.best_gbps > 0 ? e.gbps / e.best_gbps : 0) +
             ", \"meets_target\": " + (met ? "true" : "false");
        if (e.extra_10x_cub)
            s += ", \"target_vs_cub\": 10";
    } else {
        s += ", \"requested\": " + jstr(e.requested);
    }
    return s + "}";
}

bool g_matrix_complete = false; /* false while the matrix runs or after a fatal error */

void write_json()
{
    /* rewritten after every cell, so a run cut short (timeout, fatal error) leaves what it had */
    if (g_opt.json_path.empty())
        return;
    std::vector<double> ceilings;
    for (const Entry &e : g_entries)
        if (e.is_auto && e.ceiling_gbps > 0)
            ceilings.push_back(e.ceiling_gbps);
    FILE *f = std::fopen(g_opt.json_path.c_str(), "w");
    if (!f) {
        std::fprintf(stderr, "cannot write %s\n", g_opt.json_path.c_str());
        ++g_failures;
        return;
    }
    std::fprintf(f, "{\n  \"device\": %s,\n  \"date\": %s,\n  \"ceiling_gbps\": %s,\n",
                 jstr(g_prop.name).c_str(), jstr(g_date).c_str(), jnum(median(ceilings)).c_str());
    std::fprintf(f, "  \"bytes\": %llu,\n  \"reps\": %d,\n  \"gpuhist_version\": %s,\n",
                 (unsigned long long)g_opt.bytes, g_opt.reps, jstr(gpuhist_version()).c_str());
    std::fprintf(f, "  \"complete\": %s,\n", g_matrix_complete ? "true" : "false");
    std::fprintf(f, "  \"cells\": [\n");
    bool first = true;
    for (const Entry &e : g_entries) {
        if (!e.is_auto)
            continue;
        std::fprintf(f, "%s    %s", first ? "" : ",\n", entry_json(e, true).c_str());
        first = false;
    }
    std::fprintf(f, "\n  ],\n  \"all\": [\n");
    first = true;
    for (const Entry &e : g_entries) {
        if (e.is_auto)
            continue;
        std::fprintf(f, "%s    %s", first ? "" : ",\n", entry_json(e, false).c_str());
        first = false;
    }
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
    if (g_matrix_complete)
        std::printf("wrote %s\n", g_opt.json_path.c_str());
}

void write_json_on_fatal() { write_json(); }

/* ---- the matrix ------------------------------------------------------------------------------ */

struct Cell {
    const char *name;
    HistSpec hs;
    double target[DIST_COUNT];
    bool ten_x_cub;
    bool extra = false;    /* not a matrix cell, no target: runs when --cells / --cell name it */
    uint32_t id_bits = 16; /* i32 / i64 integer ids: the data lie in [0, 2^id_bits) */
};

static std::vector<Cell> matrix_cells()
{
    std::vector<Cell> cells;
    auto add = [&](const char *name, gpuhist_dtype dt, Kind k, uint32_t bins, uint32_t ch,
                   uint32_t act, std::vector<double> tg, bool ten = false, bool extra = false) {
        Cell c;
        c.name = name;
        c.hs.dtype = dt;
        c.hs.kind = k;
        c.hs.bins = bins;
        c.hs.lower = 0.0;
        c.hs.upper = 1.0;
        c.hs.ilower = 0;
        c.hs.channels = ch;
        c.hs.active = act;
        if (k == K_EDGES) {
            /* a quadratic curve: narrow bins near 0, wide near 1; exact in float */
            for (uint32_t i = 0; i <= bins; ++i)
                c.hs.edges.push_back(((double)i / bins) * ((double)i / bins));
        }
        for (int d = 0; d < DIST_COUNT; ++d)
            c.target[d] = tg.size() == 1 ? tg[0] : tg[d];
        c.ten_x_cub = ten;
        c.extra = extra;
        cells.push_back(c);
    };
    /* u8/256: 0.90 on every distribution, hot90 and constant keep their earlier 0.95 */
    add("u8_256", GPUHIST_U8, K_INTEGER, 256, 1, 1, {0.90, 0.95, 0.95, 0.90});
    add("f32_256", GPUHIST_F32, K_EVEN, 256, 1, 1, {0.95});
    add("f32_4096", GPUHIST_F32, K_EVEN, 4096, 1, 1, {0.95});
    add("f32_65536", GPUHIST_F32, K_EVEN, 65536, 1, 1, {0.90});
    add("u16_65536", GPUHIST_U16, K_INTEGER, 65536, 1, 1, {0.90});
    add("f32_1M", GPUHIST_F32, K_EVEN, 1u << 20, 1, 1, {0.50});
    add("f32_256_edges", GPUHIST_F32, K_EDGES, 256, 1, 1, {0.90});
    add("rgba_u8_3x256", GPUHIST_U8, K_INTEGER, 256, 4, 3, {0.75});
    /* half precision: the 65536 bit patterns counted, then folded into the bins */
    add("f16_256", GPUHIST_F16, K_EVEN, 256, 1, 1, {0.90});
    add("bf16_256", GPUHIST_BF16, K_EVEN, 256, 1, 1, {0.90});
    /* 2^24 even bins over [0, 1): every uniform f32 sample (k * 2^-24) lies on a bin's lower
     * edge */
    add("f32_16M", GPUHIST_F32, K_EVEN, 1u << 24, 1, 1, {0.15}, true);
    add("f64_256", GPUHIST_F64, K_EVEN, 256, 1, 1, {0.90});
    /* integer bins from 0 (bincount) over the ids' whole range: i32 ids take u16's values */
    add("i32_65536", GPUHIST_I32, K_INTEGER, 65536, 1, 1, {0.90});
    cells.back().id_bits = 16;
    add("i64_1M", GPUHIST_I64, K_INTEGER, 1u << 20, 1, 1, {0.50});
    cells.back().id_bits = 20;
    /* 16 even bins over [0, 256): 16 byte values a bin */
    add("u8_16", GPUHIST_U8, K_EVEN, 16, 1, 1, {0.90});
    cells.back().hs.upper = 256.0;
    add("f32_1024_edges", GPUHIST_F32, K_EDGES, 1024, 1, 1, {0.75});
    /* Extra cells (no target): other channel layouts, run only when --cells or --cell names them
     * (evidence for the auto policy's choice on them). */
    add("x_rgba_u8_4x256", GPUHIST_U8, K_INTEGER, 256, 4, 4, {0.0}, false, true);
    add("x_rgba_u8_2x256", GPUHIST_U8, K_INTEGER, 256, 4, 2, {0.0}, false, true);
    add("x_rg_u8_2x256", GPUHIST_U8, K_INTEGER, 256, 2, 2, {0.0}, false, true);
    return cells;
}

static const char *kind_name(Kind k)
{
    return k == K_EVEN ? "even" : k == K_EDGES ? "edges" : "integer";
}

/* The comma-separated names of `list`. */
static std::vector<std::string> names_of(const std::string &list)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find(',', start);
        if (end == std::string::npos)
            end = list.size();
        out.push_back(list.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

/* `name` is one of the comma-separated names of `list` (exact match). */
static bool name_listed(const std::string &list, const std::string &name)
{
    for (const std::string &n : names_of(list))
        if (n == name)
            return true;
    return false;
}

/* The prefix check: cpu-reference on a host copy vs `name` on the device prefix. */
struct PrefixRef {
    bool ok = false;
    uint64_t pixels = 0;
    Counts ref;
    std::string err;
};

static PrefixRef prefix_reference(Ctxs &cx, const HistSpec &hs, const void *d, uint64_t pixels)
{
    PrefixRef p;
    size_t px_bytes = gpuhist_dtype_size(hs.dtype) * hs.channels;
    uint64_t want = g_opt.prefix_bytes / px_bytes;
    /* an odd count, so tails and partial vectors are exercised */
    p.pixels = std::min(pixels, want > 8 ? want - 3 : want);
    std::vector<unsigned char> host(p.pixels * px_bytes);
    CK(cudaMemcpy(host.data(), d, host.size(), cudaMemcpyDeviceToHost));
    gpuhist_samples s = hs.samples(host.data(), p.pixels, GPUHIST_MEMORY_HOST);
    gpuhist_status st = run_host_counts(cx.ref, hs, s, p.ref, p.err);
    p.ok = (st == GPUHIST_OK);
    return p;
}

static std::string prefix_check(Ctxs &cx, const char *name, const HistSpec &hs, const void *d,
                                const PrefixRef &pr, bool *unsupported)
{
    *unsupported = false;
    if (!pr.ok)
        return "";
    gpuhist_status st = gpuhist_set_strategy(cx.sync, name);
    if (st != GPUHIST_OK)
        return "set_strategy: " + status_msg(cx.sync, st);
    Counts got;
    std::string err;
    gpuhist_samples s = hs.samples(d, pr.pixels, GPUHIST_MEMORY_DEVICE);
    st = run_host_counts(cx.sync, hs, s, got, err);
    if (st == GPUHIST_ERROR_UNSUPPORTED) {
        *unsupported = true;
        return "";
    }
    if (st != GPUHIST_OK)
        return "prefix run failed: " + err;
    std::string c = compare_counts(got, pr.ref, hs.bins, "gpu", "cpu-reference");
    return c.empty() ? "" : "prefix vs cpu-reference: " + c;
}

/* --cell: 0 when every name it lists is a matrix cell; otherwise says which is not, and 2. */
int matrix_check_cell_names()
{
    if (g_opt.cell_names.empty())
        return 0;
    const std::vector<Cell> cells = matrix_cells();
    std::string all, all_names;
    for (const Cell &c : cells) {
        all += std::string(all.empty() ? "" : ", ") + c.name;
        all_names += std::string(all_names.empty() ? "" : ",") + c.name;
    }
    for (const std::string &n : names_of(g_opt.cell_names)) {
        if (!name_listed(all_names, n)) {
            std::fprintf(stderr, "gpuhist-bench: --cell: no cell named '%s' (cells: %s)\n",
                         n.c_str(), all.c_str());
            return 2;
        }
    }
    return 0;
}

int run_matrix(uint64_t bytes)
{
    print_header("matrix");
    std::printf("input %.3f GB per buffer, device resident; median of >= %d runs (fewer only past "
                "%.1f s per strategy; 2 past %.1f s per run)\n\n",
                bytes / 1e9, g_opt.reps, g_opt.budget_s, g_opt.cap_s);
    std::vector<Cell> cells = matrix_cells();
    Ctxs cx = make_ctxs();
    if (!cx.ok()) {
        fail_note("matrix: cannot create contexts");
        cx.destroy();
        return 1;
    }
    unsigned char *d = nullptr;
    CK(cudaMalloc(&d, bytes + 64));
    CK(cudaMemset(d, 0, bytes + 64));
    std::vector<std::string> strategies = bench_strategies_of(GPUHIST_BACKEND_CUDA);
    /* the cells that run: --cells (substrings; extra cells only when it is given), --cell
     * (exact names, extra cells included) */
    auto runs = [&](const Cell &c) {
        if (!g_opt.cell_names.empty() && !name_listed(g_opt.cell_names, c.name))
            return false;
        if (!filter_match(g_opt.cells, c.name))
            return false;
        return !c.extra || !g_opt.cells.empty() || !g_opt.cell_names.empty();
    };
    size_t max_counts = 0;
    for (const Cell &c : cells)
        if (runs(c))
            max_counts = std::max(max_counts, (size_t)c.hs.bins * c.hs.active);
    alloc_device_counts(max_counts);

    std::printf("MATRIX %-14s %-8s %-24s %8s %6s %6s %8s %7s %7s %s\n", "cell", "dist", "auto ran",
                "GB/s", "ceil", "target", "CUB", "vs CUB", "vs best", "check");
    struct SummaryRow {
        std::string cell, dist, strat;
        double gbps, ratio, target, cub, vs_cub, best_gbps;
        std::string best;
        bool met, ten;
        std::string verify;
        bool extra;
    };
    std::vector<SummaryRow> summary;

    for (const Cell &cell : cells) {
        if (!runs(cell))
            continue;
        const HistSpec &hs = cell.hs;
        size_t ss = gpuhist_dtype_size(hs.dtype);
        uint64_t pixels = bytes / (ss * hs.channels);
        uint64_t in_bytes = pixels * ss * hs.channels;
        for (int dist = 0; dist < DIST_COUNT; ++dist) {
            if (!filter_match(g_opt.dists, dist_names[dist]))
                continue;
            std::printf("== %s [%s] dist=%s: %llu pixels, %.3f GB\n", cell.name,
                        hs.describe().c_str(), dist_names[dist], (unsigned long long)pixels,
                        in_bytes / 1e9);
            if (hs.dtype == GPUHIST_F16 || hs.dtype == GPUHIST_BF16) {
                /* f32's generator (hot value 0.3) rounded to the half type */
                bench_gen_half<<<bench_gen_grid(), 256>>>((uint16_t *)d, pixels * hs.channels,
                                                          dist, g_opt.seed + 977 * dist, 0.3f,
                                                          hs.dtype == GPUHIST_BF16);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
            } else {
                generate(d, hs.dtype, pixels * hs.channels, dist, g_opt.seed + 977 * dist,
                         cell.id_bits);
            }

            /* what the counts of the whole buffer sum to: every sample, except half-precision
             * data, which rounding puts partly on the upper edge (outside the range) */
            uint64_t in_range = pixels;
            if (hs.dtype == GPUHIST_F16 || hs.dtype == GPUHIST_BF16) {
                unsigned long long *d_in = nullptr, h_in = 0;
                CK(cudaMalloc(&d_in, sizeof *d_in));
                CK(cudaMemset(d_in, 0, sizeof *d_in));
                bench_count_half_in<<<bench_gen_grid(), 256>>>(
                    (const uint16_t *)d, pixels, hs.dtype == GPUHIST_BF16, (float)hs.lower,
                    (float)hs.upper, d_in);
                CK(cudaGetLastError());
                CK(cudaMemcpy(&h_in, d_in, sizeof h_in, cudaMemcpyDeviceToHost));
                CK(cudaFree(d_in));
                in_range = h_in;
            }

            Timing ceil_t = measure_ceiling(d, in_bytes);
            double ceil_g = ceil_t.ok ? gbps(in_bytes, ceil_t.ms) : 0;

            /* CUB: time it and keep its counts as the whole-buffer oracle if it proves equal to
             * cpu-reference on the prefix. */
            double cub_g = 0;
            Counts cub_full;
            bool cub_oracle = false;
            std::string cub_why = Cub::unsupported(hs, pixels);
            if (cub_why.empty())
                cub_why = g_cub.too_big(hs, d, pixels);
            PrefixRef pr;
            if (g_opt.verify) {
                pr = prefix_reference(cx, hs, d, pixels);
                if (!pr.ok)
                    fail_note(std::string("cpu-reference failed on the prefix: ") + pr.err);
            }
            if (cub_why.empty()) {
                g_cub.prepare(hs, d, pixels);
                Timing ct = measure(device_timed(
                    [&](std::string &err) { return g_cub.run(hs, d, pixels, err); }));
                if (ct.ok) {
                    cub_g = gbps(in_bytes, ct.ms);
                    cub_full = g_cub.fetch(hs);
                    if (pr.ok) {
                        g_cub.prepare(hs, d, pr.pixels);
                        std::string e2;
                        if (g_cub.run(hs, d, pr.pixels, e2) == CallRes::OK) {
                            Counts cp = g_cub.fetch(hs);
                            cub_oracle =
                                compare_counts(cp, pr.ref, hs.bins, "CUB", "ref").empty();
                        }
                        if (!cub_oracle)
                            std::printf("  note: CUB's binning differs from cpu-reference on the "
                                        "prefix; whole-buffer check is counts' sums only\n");
                    }
                } else {
                    std::printf("  CUB failed: %s\n", ct.err.c_str());
                }
                g_cub.trim();
                Entry e;
                e.cell = cell.name;
                e.dtype = gpuhist_dtype_name(hs.dtype);
                e.kind = kind_name(hs.kind);
                e.dist = dist_names[dist];
                e.strategy = e.requested = "cub";
                e.bins = hs.bins;
                e.channels = hs.channels;
                e.active = hs.active;
                e.ms = ct.ms;
                e.gbps = cub_g;
                e.ceiling_gbps = ceil_g;
                e.cub_gbps = cub_g;
                e.target = cell.target[dist];
                e.runs = ct.runs;
                e.capped = ct.capped;
                e.verify = cub_oracle ? "ok (prefix vs cpu-reference)" : "not checked";
                g_entries.push_back(e);
            } else {
                std::printf("  CUB: not measured (%s)\n", cub_why.c_str());
            }

            std::printf("  %-28s %9s %7s %7s %5s  %s\n", "strategy", "GB/s", "/ceil", "/CUB",
                        "runs", "check");
            std::printf("  %-28s %9.1f %7.3f %7s %5d\n", "read ceiling", ceil_g, 1.0, "",
                        ceil_t.runs);
            if (cub_g > 0)
                std::printf("  %-28s %9.1f %7.3f %7.2f %5s  %s\n", "CUB DeviceHistogram", cub_g,
                            ceil_g > 0 ? cub_g / ceil_g : 0, 1.0, "",
                            cub_oracle ? "= cpu-reference on prefix" : "");

            std::vector<std::string> names;
            names.push_back(""); /* auto first */
            for (const std::string &n : strategies)
                if (filter_match(g_opt.strategies, n))
                    names.push_back(n);
            Entry auto_entry;
            std::string best_name;
            double best_g = 0;
            for (const std::string &n : names) {
                const char *name = n.empty() ? nullptr : n.c_str();
                std::string verify;
                bool unsup = false;
                if (g_opt.verify) {
                    verify = prefix_check(cx, name, hs, d, pr, &unsup);
                    if (unsup) {
                        std::printf("  %-28s %9s\n", n.c_str(), "unsupported");
                        continue;
                    }
                }
                StratRun sr = time_device_strategy(cx.async, name, hs, d, pixels);
                std::string label = n.empty() ? "auto (" + sr.ran + ")" : n;
                if (!sr.t.ok) {
                    if (sr.t.unsupported) {
                        std::printf("  %-28s %9s\n", label.c_str(), "unsupported");
                    } else {
                        std::printf("  %-28s %9s  %s\n", label.c_str(), "ERROR", sr.t.err.c_str());
                        fail_note(std::string(cell.name) + "/" + dist_names[dist] + " " +
                                  label + ": " + sr.t.err);
                    }
                    continue;
                }
                if (g_opt.verify) {
                    std::string sums = sums_check(sr.full, hs.bins, hs.active, in_range);
                    std::string vs_cub =
                        cub_oracle ? compare_counts(sr.full, cub_full, hs.bins, "gpuhist", "CUB")
                                   : "";
                    if (verify.empty() && !sums.empty())
                        verify = "whole buffer: " + sums;
                    if (verify.empty() && !vs_cub.empty())
                        verify = "whole buffer vs CUB: " + vs_cub;
                    if (!verify.empty()) {
                        fail_note(std::string(cell.name) + "/" + dist_names[dist] + " " + label +
                                  ": " + verify);
                        verify = "FAIL: " + verify;
                    } else {
                        verify = cub_oracle ? "ok" : "ok (prefix + sums)";
                    }
                } else {
                    verify = "skipped";
                }
                double g = gbps(in_bytes, sr.t.ms);
                char vs[32] = "-";
                if (cub_g > 0)
                    std::snprintf(vs, sizeof vs, "%.2f", g / cub_g);
                std::printf("  %-28s %9.1f %7.3f %7s %5d%s  %s\n", label.c_str(), g,
                            ceil_g > 0 ? g / ceil_g : 0, vs, sr.t.runs, sr.t.capped ? "*" : " ",
                            verify.c_str());
                Entry e;
                e.cell = cell.name;
                e.dtype = gpuhist_dtype_name(hs.dtype);
                e.kind = kind_name(hs.kind);
                e.dist = dist_names[dist];
                e.strategy = n.empty() ? sr.ran : n;
                e.requested = n.empty() ? "auto" : n;
                e.bins = hs.bins;
                e.channels = hs.channels;
                e.active = hs.active;
                e.ms = sr.t.ms;
                e.gbps = g;
                e.ceiling_gbps = ceil_g;
                e.cub_gbps = cub_g;
                e.target = cell.target[dist];
                e.runs = sr.t.runs;
                e.capped = sr.t.capped;
                e.verify = verify;
                e.extra_10x_cub = cell.ten_x_cub;
                if (n.empty()) {
                    auto_entry = e;
                    auto_entry.is_auto = true;
                } else {
                    g_entries.push_back(e);
                    if (g > best_g) {
                        best_g = g;
                        best_name = n;
                    }
                }
            }
            if (!auto_entry.is_auto) {
                fail_note(std::string(cell.name) + "/" + dist_names[dist] +
                          ": auto did not run");
                continue;
            }
            auto_entry.best_strategy = best_name;
            auto_entry.best_gbps = best_g;
            g_entries.push_back(auto_entry);
            g_entries.back().is_auto = true;
            {
                /* auto also goes into "all", as requested = auto */
                Entry a2 = auto_entry;
                a2.is_auto = false;
                g_entries.push_back(a2);
            }
            double ratio = ceil_g > 0 ? auto_entry.gbps / ceil_g : 0;
            double vs_cub = cub_g > 0 ? auto_entry.gbps / cub_g : 0;
            bool met = ratio >= cell.target[dist] && (!cell.ten_x_cub || vs_cub >= 10.0);
            summary.push_back({cell.name, dist_names[dist], auto_entry.strategy, auto_entry.gbps,
                               ratio, cell.target[dist], cub_g, vs_cub, best_g, best_name, met,
                               cell.ten_x_cub, auto_entry.verify, cell.extra});
            const SummaryRow &r = summary.back();
            /* one MATRIX line per cell as soon as it is measured (scripts/gpu-check greps them;
             * they survive a run cut short) */
            std::printf("MATRIX %-14s %-8s %-24s %8.1f %6.3f %5.2f%s %8.1f %7.2f %7.3f %s\n\n",
                        r.cell.c_str(), r.dist.c_str(), r.strat.c_str(), r.gbps, r.ratio, r.target,
                        r.met ? " " : "*", r.cub, r.vs_cub,
                        r.best_gbps > 0 ? r.gbps / r.best_gbps : 0.0,
                        r.verify.substr(0, 40).c_str());
            write_json();
        }
    }
    CK(cudaFree(d));
    cx.destroy();

    size_t rows = 0, missed = 0; /* extra cells have no target: not counted */
    for (const SummaryRow &r : summary) {
        rows += !r.extra;
        missed += !r.extra && !r.met;
    }
    std::printf("MATRIX device: %s  date: %s  (auto ran = the strategy auto chose; ceil = GB/s / "
                "read ceiling; * = target missed)\n",
                g_prop.name, g_date.c_str());
    std::printf("MATRIX targets met: %zu of %zu; verification failures so far: %d\n",
                rows - missed, rows, g_failures);
    return g_failures ? 1 : 0;
}
