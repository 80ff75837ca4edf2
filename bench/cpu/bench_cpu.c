/*
 * gpuhist-bench-cpu - throughput of the CPU strategies beside their CPU peers (NumPy,
 * fast_histogram, boost_histogram with threads), measured in the same run on the same bytes.
 *
 * For each cell (default: u8 / 256 values, u16 / 65536 values, f32 / 4096 and 2^20 even bins,
 * f64 / 256 even bins, f64 / 256 uneven edges) it generates the input once (default 256 MiB, so
 * caches do not flatter), checks cpu-serial and cpu-threads against cpu-reference on a prefix
 * (cpu-reference is slow on purpose), times cpu-serial and cpu-threads through the public API
 * (median of --runs timed calls after one warm-up; GB/s = input bytes / median seconds) and
 * checks that they returned the same counts, times cpu-threads at 1, 2, 4, ... threads up to
 * the core count (efficiency = speed-up over 1 thread / threads), and runs peers_bench.py on the
 * same bytes (written to a temporary file, loaded with numpy.fromfile), which times every peer
 * it finds installed and says which it did not. Then one table per cell, per core: gpuhist
 * against the best peer per core (a peer's GB/s / the threads it used), with docs/PERFORMANCE.md's
 * CPU targets marked met or not. This is a benchmark, not a test: it asserts nothing about speed
 * (it fails only when counts differ).
 *
 * usage: gpuhist-bench-cpu [--size MiB] [--runs N] [--dist uniform|hot|constant]
 *                          [--cases LIST] [--threads-max N] [--no-peers] [--python EXE]
 *                          [--peers-script PATH] [--json FILE] [--stat median|min]
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GPUHIST_BENCH_PEERS_SCRIPT
#define GPUHIST_BENCH_PEERS_SCRIPT "peers_bench.py"
#endif

#define MAX_STRATEGIES 16
#define MAX_SCALING 16
#define MAX_PEERS 8
/* cpu-serial and cpu-threads are checked against cpu-reference on this many leading bytes */
#define REFERENCE_BYTES (4u << 20)

typedef struct bench_case {
    const char *name;     /* short id for --cases */
    const char *label;    /* table label */
    gpuhist_dtype dtype;
    const char *np_dtype; /* NumPy's name */
    gpuhist_bin_kind kind;
    uint32_t bins;
    double lower, upper;  /* EVEN range; INTEGER: lower = 0 */
    const char *np_op;    /* "bincount" or "histogram" */
} bench_case;

static const bench_case CASES[] = {
    {"u8", "u8, 256 values", GPUHIST_U8, "uint8", GPUHIST_BINS_INTEGER, 256, 0, 256, "bincount"},
    {"u16", "u16, 65536 values", GPUHIST_U16, "uint16", GPUHIST_BINS_INTEGER, 65536, 0, 65536,
     "bincount"},
    {"f32_4096", "f32, 4096 even", GPUHIST_F32, "float32", GPUHIST_BINS_EVEN, 4096, 0.0, 1.0,
     "histogram"},
    {"f32_1m", "f32, 2^20 even", GPUHIST_F32, "float32", GPUHIST_BINS_EVEN, 1u << 20, 0.0, 1.0,
     "histogram"},
    {"f64", "f64, 256 even", GPUHIST_F64, "float64", GPUHIST_BINS_EVEN, 256, 0.0, 1.0,
     "histogram"},
    /* uneven edges: E[i] = (i / 256)^2 in [0, 1] (the peers: (arange(257) / 256.0) ** 2, the
     * same doubles) */
    {"f64e", "f64, 256 uneven edges", GPUHIST_F64, "float64", GPUHIST_BINS_EDGES, 256, 0.0, 1.0,
     "histogram_quadratic_edges"},
    /* not in the default list */
    {"f32", "f32, 256 even", GPUHIST_F32, "float32", GPUHIST_BINS_EVEN, 256, 0.0, 1.0,
     "histogram"},
    {"f64_1024", "f64, 1024 even", GPUHIST_F64, "float64", GPUHIST_BINS_EVEN, 1024, 0.0, 1.0,
     "histogram"},
    {"i32", "i32, 1000 integer", GPUHIST_I32, "int32", GPUHIST_BINS_INTEGER, 1000, 0, 1000,
     "bincount"},
};
#define DEFAULT_CASES "u8,u16,f32_4096,f32_1m,f64,f64e"
#define NCASES (sizeof CASES / sizeof CASES[0])

typedef struct options {
    double size_mib;
    int runs;
    const char *dist;
    const char *cases;
    int threads_max;
    int peers;
    const char *python;
    const char *script;
    const char *json;
    int use_min; /* --stat min: fastest run instead of the median (for busy machines) */
} options;

typedef struct case_result {
    const bench_case *c;
    int nstrat;
    const char *strat[MAX_STRATEGIES];
    double gbps[MAX_STRATEGIES];
    double cpu_gbps[MAX_STRATEGIES]; /* GB per CPU-second of the process (all its threads) */
    int mismatch[MAX_STRATEGIES];
    int nscale;
    int scale_threads[MAX_SCALING];
    double scale_gbps[MAX_SCALING];
    int npeers;
    char peer[MAX_PEERS][32];     /* package */
    char peer_call[MAX_PEERS][128];
    int peer_threads[MAX_PEERS];  /* 0: skipped, peer_note says why */
    double peer_gbps[MAX_PEERS];
    double peer_cpu_gbps[MAX_PEERS]; /* GB per CPU-second of the peer's process */
    char peer_note[MAX_PEERS][128];
    int reference_ok;             /* 1 equal to cpu-reference on the prefix, 0 differs, -1 n/a */
    double load_end;              /* 1-minute load average after the cell */
    double steal;                 /* share of the machine's CPU time the hypervisor took during
                                     the cell (/proc/stat), -1 where unknown */
    double bytes;
} case_result;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint64_t rng(void)
{
    /* xorshift64*: fast enough to fill GiBs */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Fill n samples: uniform over the case's range; "hot": 90% one value (the middle of the range)
 * and 10% uniform; "constant": all the middle value. */
static void generate(const bench_case *c, void *buf, size_t n, const char *dist)
{
    int hot = strcmp(dist, "hot") == 0, constant = strcmp(dist, "constant") == 0;
    double span = c->upper - c->lower;
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = rng();
        int mid = constant || (hot && (r >> 32) % 10u != 0u); /* 90% */
        double u = mid ? 0.5 : (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
        double x = c->lower + u * span;
        switch (c->dtype) {
        case GPUHIST_U8: ((uint8_t *)buf)[i] = (uint8_t)x; break;
        case GPUHIST_U16: ((uint16_t *)buf)[i] = (uint16_t)x; break;
        case GPUHIST_I32: ((int32_t *)buf)[i] = (int32_t)x; break;
        case GPUHIST_F32: ((float *)buf)[i] = (float)x; break;
        case GPUHIST_F64: ((double *)buf)[i] = x; break;
        default: break;
        }
    }
}

static gpuhist_bin_spec spec_of(const bench_case *c)
{
    if (c->kind == GPUHIST_BINS_INTEGER)
        return gpuhist_bins_integer(c->bins, (int64_t)c->lower);
    if (c->kind == GPUHIST_BINS_EDGES) {
        static double quadratic[257];
        for (uint32_t i = 0; i <= 256; ++i)
            quadratic[i] = (i / 256.0) * (i / 256.0);
        return gpuhist_bins_edges(256, quadratic);
    }
    return gpuhist_bins_even(c->bins, c->lower, c->upper);
}

/* --stat min: the fastest of the timed runs instead of their median. */
static int use_min_stat;

/* The statistic of `runs` timings (the median, or the fastest with --stat min); sorts v. */
static double stat_of(double *v, int runs)
{
    double m = median(v, runs);
    return use_min_stat ? v[0] : m;
}

/* Seconds of CPU time of the whole process so far, every thread's (as Python's
 * time.process_time, which peers_bench.py uses). */
static double process_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Median (or fastest) wall seconds of `runs` timed calls after one warm-up, and in *cpu_s the
 * same statistic of the CPU seconds the process spent in them (all threads); counts of the last
 * call in `counts`. */
static double time_strategy(gpuhist_ctx *ctx, const gpuhist_samples *s, const gpuhist_bin_spec *b,
                            uint64_t *counts, int runs, int *failed, double *cpu_s)
{
    double t[64], c[64];
    if (runs > 64)
        runs = 64;
    *failed = 0;
    for (int i = -1; i < runs; ++i) {
        gpuhist_result r = gpuhist_result_host(counts);
        double c0 = process_cpu_s(), t0 = now_s();
        gpuhist_status st = gpuhist_histogram(ctx, s, b, &r);
        double dt = now_s() - t0, dc = process_cpu_s() - c0;
        if (st != GPUHIST_OK) {
            fprintf(stderr, "gpuhist-bench-cpu: %s\n", gpuhist_last_error(ctx));
            *failed = 1;
            return 0.0;
        }
        if (i >= 0) {
            t[i] = dt;
            c[i] = dc;
        }
    }
    if (cpu_s)
        *cpu_s = stat_of(c, runs);
    return stat_of(t, runs);
}

/* Copies the JSON string value of "key" in line into out (empty when absent). */
static void json_str(const char *line, const char *key, char *out, size_t size)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    out[0] = '\0';
    const char *p = strstr(line, pat);
    if (!p)
        return;
    p += strlen(pat);
    size_t len = strcspn(p, "\"");
    if (len >= size)
        len = size - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

static double json_num(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(line, pat);
    return p ? atof(p + strlen(pat)) : 0.0;
}

/* Run the peers' script on the data: one line per peer call (or per missing peer). */
static void run_peers(const options *o, const bench_case *c, const void *buf, size_t bytes,
                      case_result *res)
{
    const char *tmpdir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/gpuhist-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(res->peer_note[0], sizeof res->peer_note[0], "cannot create a temporary file");
        snprintf(res->peer[0], sizeof res->peer[0], "peers");
        res->npeers = 1;
        return;
    }
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(buf, 1, bytes, f) == bytes;
    if (f)
        ok = (fclose(f) == 0) && ok;
    if (!ok) {
        unlink(path);
        snprintf(res->peer_note[0], sizeof res->peer_note[0], "cannot write a temporary file");
        snprintf(res->peer[0], sizeof res->peer[0], "peers");
        res->npeers = 1;
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %s %s %u %.17g %.17g %d %d %s 2>&1", o->python,
             o->script, path, c->np_dtype, c->np_op, c->bins, c->lower, c->upper, o->runs,
             o->threads_max, o->use_min ? "min" : "median");
    FILE *p = popen(cmd, "r");
    char line[4096];
    int any = 0;
    while (p && fgets(line, sizeof line, p)) {
        if (!strstr(line, "\"peer\": ") || res->npeers >= MAX_PEERS)
            continue;
        any = 1;
        int k = res->npeers++;
        json_str(line, "peer", res->peer[k], sizeof res->peer[k]);
        json_str(line, "skipped", res->peer_note[k], sizeof res->peer_note[k]);
        json_str(line, "call", res->peer_call[k], sizeof res->peer_call[k]);
        double sec = json_num(line, "seconds");
        if (!res->peer_note[k][0] && sec > 0) {
            res->peer_threads[k] = (int)json_num(line, "threads");
            res->peer_gbps[k] = (double)bytes / sec / 1e9;
            double cpu = json_num(line, "cpu_seconds");
            res->peer_cpu_gbps[k] = cpu > 0 ? (double)bytes / cpu / 1e9 : 0.0;
        }
    }
    if (p)
        pclose(p);
    unlink(path);
    if (!any) {
        snprintf(res->peer[0], sizeof res->peer[0], "peers");
        snprintf(res->peer_note[0], sizeof res->peer_note[0], "%.40s did not run %.60s", o->python,
                 o->script);
        res->npeers = 1;
    }
}

/* ---- the memory read ceiling: what t threads reading the input's bytes deliver ----------------
 * Each thread sums its slice as 64-bit words with four accumulators (no counter stores: the
 * loads alone); threads are created per run, as a cpu-threads call forks its workers. The
 * scaling table prints it beside cpu-threads, so an efficiency below 1 can be told apart from a
 * machine whose memory stops scaling first. */
typedef struct sum_job {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} sum_job;

static void *sum_run(void *arg)
{
    sum_job *j = arg;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= j->n; i += 4) {
        s0 += j->p[i];
        s1 += j->p[i + 1];
        s2 += j->p[i + 2];
        s3 += j->p[i + 3];
    }
    for (; i < j->n; ++i)
        s0 += j->p[i];
    j->sum = s0 + s1 + s2 + s3;
    return NULL;
}

/* GB/s of the read ceiling with `threads` threads over `bytes` of buf (the statistic of `runs`
 * runs after one warm-up), or 0 if a thread cannot be created. */
static double read_ceiling(const void *buf, size_t bytes, int threads, int runs)
{
    if (threads < 1 || threads > 256)
        return 0.0;
    size_t words = bytes / 8, per = (words + (size_t)threads - 1) / (size_t)threads;
    double t[64];
    if (runs > 64)
        runs = 64;
    volatile uint64_t sink = 0;
    for (int r = -1; r < runs; ++r) {
        sum_job jobs[256];
        pthread_t tid[256];
        double t0 = now_s();
        int made = 0;
        for (int k = 0; k < threads; ++k) {
            size_t b = (size_t)k * per < words ? (size_t)k * per : words;
            size_t e = b + per < words ? b + per : words;
            jobs[k].p = (const uint64_t *)buf + b;
            jobs[k].n = e - b;
            jobs[k].sum = 0;
            if (k > 0 && pthread_create(&tid[k], NULL, sum_run, &jobs[k]) != 0)
                break;
            made = k + 1;
        }
        if (made < threads) {
            for (int k = 1; k < made; ++k)
                pthread_join(tid[k], NULL);
            return 0.0;
        }
        sum_run(&jobs[0]);
        for (int k = 1; k < threads; ++k)
            pthread_join(tid[k], NULL);
        double dt = now_s() - t0;
        for (int k = 0; k < threads; ++k)
            sink += jobs[k].sum;
        if (r >= 0)
            t[r] = dt;
    }
    (void)sink;
    const double sec = stat_of(t, runs);
    return sec > 0 ? (double)(words * 8) / sec / 1e9 : 0.0;
}

static int case_selected(const options *o, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = o->cases; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len;
        if (*p == ',')
            ++p;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpuhist-bench-cpu [options]\n"
            "  --size MIB           input size per case (default 256)\n"
            "  --runs N             timed runs per measurement, median reported (default 5)\n"
            "  --dist D             uniform (default) | hot (90%% one value) | constant\n"
            "  --cases LIST         comma list of u8,u16,f32_4096,f32_1m,f64,f64e,f32,f64_1024,"
            "i32\n                       (default " DEFAULT_CASES ")\n"
            "  --threads-max N      largest cpu-threads count in the scaling table (default: "
            "cores)\n"
            "  --no-peers           do not time the peers\n"
            "  --python EXE         Python interpreter with the peers (default python3)\n"
            "  --peers-script PATH  peers_bench.py (default: the one beside the executable)\n"
            "  --json FILE          also write the results as JSON\n"
            "  --stat median|min    statistic of the timed runs (default median; min on a busy "
            "machine)\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--size") == 0 && v)
            o->size_mib = atof(v);
        else if (strcmp(a, "--runs") == 0 && v)
            o->runs = atoi(v);
        else if (strcmp(a, "--dist") == 0 && v)
            o->dist = v;
        else if (strcmp(a, "--cases") == 0 && v)
            o->cases = v;
        else if (strcmp(a, "--threads-max") == 0 && v)
            o->threads_max = atoi(v);
        else if (strcmp(a, "--python") == 0 && v)
            o->python = v;
        else if (strcmp(a, "--peers-script") == 0 && v)
            o->script = v;
        else if (strcmp(a, "--json") == 0 && v)
            o->json = v;
        else if (strcmp(a, "--stat") == 0 && v && (!strcmp(v, "min") || !strcmp(v, "median")))
            o->use_min = strcmp(v, "min") == 0;
        else if (strcmp(a, "--no-peers") == 0) {
            o->peers = 0;
            takes = 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "gpuhist-bench-cpu: bad option '%s'\n", a);
            usage(stderr);
            return 0;
        }
        i += takes;
    }
    if (!(o->size_mib > 0) || o->runs < 1 || o->runs > 64 ||
        (strcmp(o->dist, "uniform") && strcmp(o->dist, "hot") && strcmp(o->dist, "constant"))) {
        fprintf(stderr, "gpuhist-bench-cpu: --size > 0, 1 <= --runs <= 64, --dist "
                        "uniform|hot|constant\n");
        return 0;
    }
    return 1;
}

/* The best peer per core of a cell (GB/s / threads used); -1 when no peer ran. */
static int best_peer(const case_result *r, double *per_core)
{
    int best = -1;
    *per_core = 0.0;
    for (int k = 0; k < r->npeers; ++k) {
        if (r->peer_threads[k] < 1)
            continue;
        double g = r->peer_gbps[k] / r->peer_threads[k];
        if (g > *per_core) {
            *per_core = g;
            best = k;
        }
    }
    return best;
}

/* The same by GB per CPU-second. */
static int best_peer_cpu(const case_result *r, double *per_cpu)
{
    int best = -1;
    *per_cpu = 0.0;
    for (int k = 0; k < r->npeers; ++k) {
        if (r->peer_threads[k] < 1 || !(r->peer_cpu_gbps[k] > *per_cpu))
            continue;
        *per_cpu = r->peer_cpu_gbps[k];
        best = k;
    }
    return best;
}

static double cpu_gbps_of(const case_result *r, const char *strategy)
{
    for (int k = 0; k < r->nstrat; ++k)
        if (strcmp(r->strat[k], strategy) == 0)
            return r->cpu_gbps[k];
    return 0.0;
}

static double gbps_of(const case_result *r, const char *strategy)
{
    for (int k = 0; k < r->nstrat; ++k)
        if (strcmp(r->strat[k], strategy) == 0)
            return r->gbps[k];
    return 0.0;
}

static double numpy_gbps(const case_result *r)
{
    for (int k = 0; k < r->npeers; ++k)
        if (strcmp(r->peer[k], "numpy") == 0 && r->peer_threads[k] > 0)
            return r->peer_gbps[k];
    return 0.0;
}

static void write_json(const options *o, const char *model, long cores, const char *date,
                       double load_start, case_result *res, int nres, const double *ceiling)
{
    FILE *f = fopen(o->json, "w");
    if (!f) {
        fprintf(stderr, "gpuhist-bench-cpu: cannot write %s\n", o->json);
        return;
    }
    fprintf(f, "{\n  \"machine\": \"%s\", \"cores\": %ld, \"date\": \"%s\", \"load_start\": %.2f,\n",
            model, cores, date, load_start);
    fprintf(f,
            "  \"gpuhist\": \"%s\", \"size_mib\": %g, \"runs\": %d, \"stat\": \"%s\", "
            "\"dist\": \"%s\",\n",
            gpuhist_version(), o->size_mib, o->runs, o->use_min ? "min" : "median", o->dist);
    fprintf(f, "  \"read_ceiling\": [");
    for (int k = 0; nres && k < res[0].nscale; ++k)
        fprintf(f, "%s{\"threads\": %d, \"gbps\": %.4f}", k ? ", " : "", res[0].scale_threads[k],
                ceiling[k]);
    fprintf(f, "],\n");
    fprintf(f, "  \"cases\": [\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        fprintf(f, "    {\"case\": \"%s\", \"bytes\": %.0f, \"load_end\": %.2f, "
                   "\"steal\": %.4f, \"reference_ok\": %d, \"gbps\": {",
                r->c->name, r->bytes, r->load_end, r->steal, r->reference_ok);
        for (int s = 0; s < r->nstrat; ++s)
            fprintf(f, "%s\"%s\": %.4f", s ? ", " : "", r->strat[s], r->gbps[s]);
        fprintf(f, "}, \"gbps_per_cpu_s\": {");
        for (int k = 0; k < r->nstrat; ++k)
            fprintf(f, "%s\"%s\": %.4f", k ? ", " : "", r->strat[k], r->cpu_gbps[k]);
        fprintf(f, "},\n     \"peers\": [");
        for (int k = 0; k < r->npeers; ++k)
            fprintf(f, "%s{\"peer\": \"%s\", \"call\": \"%s\", \"threads\": %d, \"gbps\": %.4f, "
                       "\"gbps_per_cpu_s\": %.4f, \"skipped\": \"%s\"}",
                    k ? ", " : "", r->peer[k], r->peer_call[k], r->peer_threads[k],
                    r->peer_gbps[k], r->peer_cpu_gbps[k], r->peer_note[k]);
        fprintf(f, "],\n     \"threads_scaling\": [");
        for (int s = 0; s < r->nscale; ++s)
            fprintf(f, "%s{\"threads\": %d, \"gbps\": %.4f, \"efficiency\": %.4f}", s ? ", " : "",
                    r->scale_threads[s], r->scale_gbps[s],
                    r->scale_gbps[0] > 0
                        ? r->scale_gbps[s] / r->scale_gbps[0] / r->scale_threads[s]
                        : 0.0);
        fprintf(f, "]}%s\n", i + 1 < nres ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    fclose(f);
}

/* The machine's stolen and total CPU time so far, in clock ticks (/proc/stat's "cpu" line:
 * user nice system idle iowait irq softirq steal ...); 0 where unreadable. Steal is time a
 * virtual CPU was ready to run while the hypervisor ran something else: threads of one call
 * then wait for each other. */
static void cpu_ticks(unsigned long long *steal, unsigned long long *total)
{
    unsigned long long v[8] = {0};
    *steal = *total = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; ++i)
            *total += v[i];
        *steal = v[7];
    }
    fclose(f);
}

static double load_average(void)
{
    double l = -1.0;
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf", &l) != 1)
            l = -1.0;
        fclose(la);
    }
    return l;
}

/* Counts of `strategy` on the first `n` samples equal cpu-reference's: 1, 0, or -1 on error. */
static int check_prefix(gpuhist_ctx *ctx, const bench_case *c, const void *buf, size_t n,
                        const gpuhist_bin_spec *b, const char *strategy)
{
    uint64_t *ref = calloc(c->bins, sizeof *ref), *got = calloc(c->bins, sizeof *got);
    gpuhist_samples s = gpuhist_samples_1d(buf, c->dtype, n);
    s.location = GPUHIST_MEMORY_HOST;
    int ok = -1;
    if (ref && got) {
        gpuhist_result r1 = gpuhist_result_host(ref), r2 = gpuhist_result_host(got);
        if (gpuhist_set_strategy(ctx, "cpu-reference") == GPUHIST_OK &&
            gpuhist_histogram(ctx, &s, b, &r1) == GPUHIST_OK &&
            gpuhist_set_strategy(ctx, strategy) == GPUHIST_OK &&
            gpuhist_histogram(ctx, &s, b, &r2) == GPUHIST_OK)
            ok = memcmp(ref, got, (size_t)c->bins * sizeof *ref) == 0;
    }
    free(ref);
    free(got);
    return ok;
}

int main(int argc, char **argv)
{
    options o = {256.0, 5, "uniform", DEFAULT_CASES, 0, 1, "python3", GPUHIST_BENCH_PEERS_SCRIPT,
                 NULL, 0};
    /* Prefer the copy next to the executable (the build tree may have moved to another machine). */
    static char beside[4096];
    ssize_t len = readlink("/proc/self/exe", beside, sizeof beside - 32);
    if (len > 0) {
        beside[len] = '\0';
        char *slash = strrchr(beside, '/');
        if (slash) {
            strcpy(slash + 1, "peers_bench.py");
            if (access(beside, R_OK) == 0)
                o.script = beside;
        }
    }
    if (!parse_args(argc, argv, &o))
        return 2;
    use_min_stat = o.use_min;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    if (o.threads_max < 1)
        o.threads_max = (int)cores;

    gpuhist_ctx *ctx;
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK) {
        fprintf(stderr, "gpuhist-bench-cpu: cannot create a CPU context\n");
        return 1;
    }
    /* timed: the fast strategies (cpu-reference only checks them, on a prefix) */
    const char *strat[] = {"cpu-serial", "cpu-threads"};
    const int nstrat = 2;

    /* The CPU backend's device name says the model (/proc/cpuinfo) and its thread count; a copy,
     * as the JSON is written after the context is gone. */
    char model[256], date[64];
    snprintf(model, sizeof model, "%s", gpuhist_device_name(ctx));
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&tt));
    printf("gpuhist %s CPU benchmark\n", gpuhist_version());
    printf("machine: %s, %ld online CPUs; %s\n", model, cores, date);
    printf("input: %.0f MiB per case, %s data; %s of %d runs after 1 warm-up; GB/s = input "
           "bytes / wall time of one call; cpu-threads column: %d threads\n",
           o.size_mib, o.dist, o.use_min ? "fastest" : "median", o.runs, o.threads_max);
    double load_start = load_average();
    printf("load average (1 min) at start: %.2f%s\n\n", load_start,
           load_start > 0.5 * (double)cores ? "  (busy machine: timings are pessimistic)" : "");

    case_result res[NCASES];
    int nres = 0, any_mismatch = 0;
    /* the read ceiling per thread count of the scaling table, over the first case's input */
    double ceiling[MAX_SCALING] = {0};
    for (size_t ci = 0; ci < NCASES; ++ci) {
        const bench_case *c = &CASES[ci];
        if (!case_selected(&o, c->name))
            continue;
        case_result *r = &res[nres++];
        memset(r, 0, sizeof *r);
        unsigned long long steal0, total0;
        cpu_ticks(&steal0, &total0);
        r->c = c;
        size_t ss = gpuhist_dtype_size(c->dtype);
        size_t n = (size_t)(o.size_mib * 1048576.0) / ss;
        if (n == 0)
            n = 1;
        size_t bytes = n * ss;
        r->bytes = (double)bytes;
        void *buf = malloc(bytes);
        uint64_t *counts = malloc((size_t)c->bins * sizeof *counts);
        uint64_t *first = malloc((size_t)c->bins * sizeof *first);
        if (!buf || !counts || !first) {
            fprintf(stderr, "gpuhist-bench-cpu: cannot allocate %zu bytes\n", bytes);
            return 1;
        }
        fprintf(stderr, "[%s] generating %zu samples...\n", c->name, n);
        generate(c, buf, n, o.dist);
        gpuhist_samples s = gpuhist_samples_1d(buf, c->dtype, n);
        s.location = GPUHIST_MEMORY_HOST;
        gpuhist_bin_spec b = spec_of(c);

        gpuhist_set_threads(ctx, o.threads_max);
        size_t prefix = REFERENCE_BYTES / ss < n ? REFERENCE_BYTES / ss : n;
        r->reference_ok = 1;
        for (int k = 0; k < nstrat; ++k) {
            int ok = check_prefix(ctx, c, buf, prefix, &b, strat[k]);
            if (ok != 1) {
                r->reference_ok = ok;
                any_mismatch = 1;
            }
        }
        for (int k = 0; k < nstrat; ++k) {
            fprintf(stderr, "[%s] %s...\n", c->name, strat[k]);
            r->strat[r->nstrat] = strat[k];
            gpuhist_set_strategy(ctx, strat[k]);
            int failed;
            double cpu_s = 0;
            double sec = time_strategy(ctx, &s, &b, counts, o.runs, &failed, &cpu_s);
            r->gbps[r->nstrat] = failed ? 0.0 : (double)bytes / sec / 1e9;
            r->cpu_gbps[r->nstrat] = failed || cpu_s <= 0 ? 0.0 : (double)bytes / cpu_s / 1e9;
            if (!failed) {
                if (k == 0)
                    memcpy(first, counts, (size_t)c->bins * sizeof *first);
                else if (memcmp(first, counts, (size_t)c->bins * sizeof *first) != 0)
                    r->mismatch[r->nstrat] = any_mismatch = 1;
            }
            r->nstrat++;
        }
        /* thread scaling: 1, 2, 4, ... and the maximum itself */
        gpuhist_set_strategy(ctx, "cpu-threads");
        for (int t = 1; r->nscale < MAX_SCALING; t *= 2) {
            int th = t < o.threads_max ? t : o.threads_max;
            fprintf(stderr, "[%s] cpu-threads x%d...\n", c->name, th);
            gpuhist_set_threads(ctx, th);
            int failed;
            double sec = time_strategy(ctx, &s, &b, counts, o.runs, &failed, NULL);
            r->scale_threads[r->nscale] = th;
            r->scale_gbps[r->nscale++] = failed ? 0.0 : (double)bytes / sec / 1e9;
            if (th == o.threads_max)
                break;
        }
        if (nres == 1) {
            fprintf(stderr, "[%s] memory read ceiling...\n", c->name);
            for (int k = 0; k < r->nscale; ++k)
                ceiling[k] = read_ceiling(buf, bytes, r->scale_threads[k], o.runs);
        }
        gpuhist_set_threads(ctx, 0);
        if (o.peers) {
            fprintf(stderr, "[%s] peers...\n", c->name);
            run_peers(&o, c, buf, bytes, r);
        }
        r->load_end = load_average();
        unsigned long long steal1, total1;
        cpu_ticks(&steal1, &total1);
        r->steal = total1 > total0 ? (double)(steal1 - steal0) / (double)(total1 - total0) : -1.0;
        free(buf);
        free(counts);
        free(first);
    }
    gpuhist_destroy(ctx);

    /* ---- per cell: gpuhist, then every peer ---- */
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        char steal[48] = "";
        if (r->steal >= 0.0)
            snprintf(steal, sizeof steal, "; CPU time stolen by the hypervisor %.1f%%",
                     100.0 * r->steal);
        printf("%s (load average after the cell: %.2f%s)%s\n", r->c->label, r->load_end, steal,
               r->reference_ok == 1 ? ""
                                    : "  COUNTS DIFFER FROM cpu-reference ON THE PREFIX");
        for (int k = 0; k < r->nstrat; ++k) {
            int th = strcmp(r->strat[k], "cpu-threads") == 0 ? o.threads_max : 1;
            printf("  %-70s %2d thr %8.3f GB/s %8.3f per core %8.3f per CPU-s%s\n", r->strat[k], th,
                   r->gbps[k], r->gbps[k] / th, r->cpu_gbps[k],
                   r->mismatch[k] ? "  COUNTS DIFFER FROM cpu-serial" : "");
        }
        for (int k = 0; k < r->npeers; ++k) {
            if (r->peer_threads[k] < 1)
                printf("  %-70s skipped: %s\n", r->peer[k], r->peer_note[k]);
            else
                printf("  %-70.70s %2d thr %8.3f GB/s %8.3f per core %8.3f per CPU-s\n",
                       r->peer_call[k], r->peer_threads[k], r->peer_gbps[k],
                       r->peer_gbps[k] / r->peer_threads[k], r->peer_cpu_gbps[k]);
        }
    }
    printf("\n(GB/s of input per wall second; per CPU-s: GB of input per CPU-second the process "
           "spent, all its threads, which other jobs on the machine do not dilute; all gpuhist "
           "counts compared with cpu-reference on the first %u MiB "
           "and with each other on the whole input)\n\n",
           REFERENCE_BYTES >> 20);

    /* ---- scaling table ---- */
    printf("cpu-threads scaling: GB/s (efficiency = speed-up over 1 thread / threads)\n");
    printf("%-24s", "case");
    if (nres)
        for (int s = 0; s < res[0].nscale; ++s)
            printf(" %13d thr", res[0].scale_threads[s]);
    printf("\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        printf("%-24s", r->c->label);
        for (int s = 0; s < r->nscale; ++s) {
            double eff = r->scale_gbps[0] > 0
                             ? r->scale_gbps[s] / r->scale_gbps[0] / r->scale_threads[s]
                             : 0.0;
            printf(" %8.2f (%.2f)", r->scale_gbps[s], eff);
        }
        printf("\n");
    }
    if (nres) {
        printf("%-24s", "memory read ceiling");
        for (int s = 0; s < res[0].nscale; ++s)
            printf(" %8.2f (%.2f)", ceiling[s],
                   ceiling[0] > 0 ? ceiling[s] / ceiling[0] / res[0].scale_threads[s] : 0.0);
        printf("\n(the ceiling: as many threads summing the first case's input as 64-bit words, "
               "no stores; a case at or near it is bound by the memory, not by the threads)\n");
    }

    /* ---- the targets of docs/PERFORMANCE.md ("## CPU"), per core, this run only ---- */
    printf("\ntargets, per core (gpuhist: cpu-serial on 1 core and cpu-threads / %d; best peer: "
           "its GB/s / its threads):\n",
           o.threads_max);
    printf("%-24s %9s %9s %9s %-34s %7s %7s  %s\n", "case", "serial", "threads/c", "best/core",
           "best peer", "serial/", "thr/", ">= 2x best peer per core");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        double peer;
        int bp = best_peer(r, &peer);
        double ser = gbps_of(r, "cpu-serial"), thr = gbps_of(r, "cpu-threads") / o.threads_max;
        if (bp < 0) {
            printf("%-24s %9.3f %9.3f %9s %-34s %7s %7s  no peer ran\n", r->c->label, ser, thr,
                   "-", "-", "-", "-");
            continue;
        }
        double a = ser / peer, t = thr / peer;
        printf("%-24s %9.3f %9.3f %9.3f %-34.34s %6.2fx %6.2fx  %s\n", r->c->label, ser, thr,
               peer, r->peer_call[bp], a, t,
               a >= 2.0 && t >= 2.0 ? "met" : "NOT met");
    }
    printf("\nthe same per CPU-second (GB of input / CPU seconds of the process, all threads):\n");
    printf("%-24s %9s %9s %9s %-34s %7s %7s  %s\n", "case", "serial", "threads", "best",
           "best peer", "serial/", "thr/", ">= 2x best peer per CPU-s");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        double peer;
        int bp = best_peer_cpu(r, &peer);
        double ser = cpu_gbps_of(r, "cpu-serial"), thr = cpu_gbps_of(r, "cpu-threads");
        if (bp < 0) {
            printf("%-24s %9.3f %9.3f %9s %-34s %7s %7s  no peer ran\n", r->c->label, ser, thr,
                   "-", "-", "-", "-");
            continue;
        }
        double a = ser / peer, t = thr / peer;
        printf("%-24s %9.3f %9.3f %9.3f %-34.34s %6.2fx %6.2fx  %s\n", r->c->label, ser, thr,
               peer, r->peer_call[bp], a, t, a >= 2.0 && t >= 2.0 ? "met" : "NOT met");
    }
    printf("\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        double ser = gbps_of(r, "cpu-serial"), thr = gbps_of(r, "cpu-threads") / o.threads_max;
        if (r->c->dtype == GPUHIST_U8)
            printf("target u8/256 >= 8 GB/s per core: serial %.2f, threads %.2f per core, "
                   "%.2f per CPU-s: %s\n",
                   ser, thr, cpu_gbps_of(r, "cpu-threads"),
                   ser >= 8.0 && thr >= 8.0 ? "met" : "NOT met");
        double np = numpy_gbps(r);
        if (r->c->kind == GPUHIST_BINS_EDGES && np > 0)
            printf("target uneven edges >= 2x numpy: serial %.2fx, threads per core %.2fx: %s\n",
                   ser / np, thr / np, ser / np >= 2.0 && thr / np >= 2.0 ? "met" : "NOT met");
    }
    if (nres && res[0].nscale > 1) {
        double worst = 1e9;
        int th = 0;
        for (int i = 0; i < nres; ++i) {
            case_result *r = &res[i];
            double eff = r->scale_gbps[0] > 0 ? r->scale_gbps[r->nscale - 1] / r->scale_gbps[0] /
                                                    r->scale_threads[r->nscale - 1]
                                              : 0.0;
            th = r->scale_threads[r->nscale - 1];
            worst = eff < worst ? eff : worst;
        }
        printf("target linear scaling (efficiency >= 0.8 at %d threads): worst cell %.2f: %s\n",
               th, worst, worst >= 0.8 ? "met" : "NOT met");
    }
    if (o.json)
        write_json(&o, model, cores, date, load_start, res, nres, ceiling);
    if (any_mismatch) {
        fprintf(stderr, "gpuhist-bench-cpu: some strategies returned different counts\n");
        return 1;
    }
    return 0;
}
