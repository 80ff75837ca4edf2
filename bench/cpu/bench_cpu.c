/*
 * gpuhist-bench-cpu - throughput of the CPU strategies beside NumPy, measured in the same run.
 *
 * For each case (u8 / 256 values, u16 / 65536 values, f32 / 256 even bins, f64 / 1024 even bins,
 * i32 / 1000 integer bins) it generates the input once (default 256 MiB, so caches do not
 * flatter), then times every CPU strategy of the registry through the public API (median of
 * --runs timed calls after one warm-up; GB/s = input bytes / median seconds), checks that all
 * strategies returned the same counts, times cpu-threads at 1, 2, 4, ... threads up to the
 * core count (efficiency = speed-up over 1 thread / threads), and times numpy.bincount /
 * numpy.histogram on the same bytes (written to a temporary file, loaded by numpy_bench.py with
 * numpy.fromfile). This is a benchmark, not a test: it asserts nothing about speed.
 *
 * usage: gpuhist-bench-cpu [--size MiB] [--runs N] [--dist uniform|hot|constant]
 *                          [--cases u8,u16,f32,f64,i32,f64e] [--threads-max N] [--no-numpy]
 *                          [--python EXE] [--numpy-script PATH] [--json FILE]
 *                          [--stat median|min]
 */
#define _POSIX_C_SOURCE 200809L
#include "gpuhist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef GPUHIST_BENCH_NUMPY_SCRIPT
#define GPUHIST_BENCH_NUMPY_SCRIPT "numpy_bench.py"
#endif

#define MAX_STRATEGIES 16
#define MAX_SCALING 16

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
    {"f32", "f32, 256 even", GPUHIST_F32, "float32", GPUHIST_BINS_EVEN, 256, 0.0, 1.0,
     "histogram"},
    {"f64", "f64, 1024 even", GPUHIST_F64, "float64", GPUHIST_BINS_EVEN, 1024, 0.0, 1.0,
     "histogram"},
    {"i32", "i32, 1000 integer", GPUHIST_I32, "int32", GPUHIST_BINS_INTEGER, 1000, 0, 1000,
     "bincount"},
    /* uneven edges: E[i] = (i / 256)^2 in [0, 1] (numpy: (arange(257) / 256.0) ** 2, the same
     * doubles) */
    {"f64e", "f64, 256 uneven edges", GPUHIST_F64, "float64", GPUHIST_BINS_EDGES, 256, 0.0, 1.0,
     "histogram_quadratic_edges"},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

typedef struct options {
    double size_mib;
    int runs;
    const char *dist;
    const char *cases;
    int threads_max;
    int numpy;
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
    int mismatch[MAX_STRATEGIES];
    int nscale;
    int scale_threads[MAX_SCALING];
    double scale_gbps[MAX_SCALING];
    double numpy_gbps; /* 0 when skipped */
    char numpy_call[128];
    char numpy_note[160];
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

/* Median seconds of `runs` timed calls after one warm-up; counts of the last call in `counts`. */
static int use_min_stat;

static double time_strategy(gpuhist_ctx *ctx, const gpuhist_samples *s, const gpuhist_bin_spec *b,
                            uint64_t *counts, int runs, int *failed)
{
    double t[64];
    if (runs > 64)
        runs = 64;
    *failed = 0;
    for (int i = -1; i < runs; ++i) {
        gpuhist_result r = gpuhist_result_host(counts);
        double t0 = now_s();
        gpuhist_status st = gpuhist_histogram(ctx, s, b, &r);
        double dt = now_s() - t0;
        if (st != GPUHIST_OK) {
            fprintf(stderr, "gpuhist-bench-cpu: %s\n", gpuhist_last_error(ctx));
            *failed = 1;
            return 0.0;
        }
        if (i >= 0)
            t[i] = dt;
    }
    double m = median(t, runs); /* sorts t */
    return use_min_stat ? t[0] : m;
}

/* Run the NumPy script on the data; fills numpy_gbps or a note saying why it was skipped. */
static void run_numpy(const options *o, const bench_case *c, const void *buf, size_t bytes,
                      case_result *res)
{
    const char *tmpdir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/gpuhist-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(res->numpy_note, sizeof res->numpy_note, "cannot create a temporary file");
        return;
    }
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(buf, 1, bytes, f) == bytes;
    if (f)
        ok = (fclose(f) == 0) && ok;
    if (!ok) {
        unlink(path);
        snprintf(res->numpy_note, sizeof res->numpy_note, "cannot write %zu bytes to a temporary file",
                 bytes);
        return;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' %s %s %u %.17g %.17g %d %s 2>&1", o->python,
             o->script, path, c->np_dtype, c->np_op, c->bins, c->lower, c->upper, o->runs,
             o->use_min ? "min" : "median");
    FILE *p = popen(cmd, "r");
    char line[4096] = "";
    if (p) {
        size_t got = fread(line, 1, sizeof line - 1, p);
        line[got] = '\0';
        pclose(p);
    }
    unlink(path);
    const char *m = strstr(line, "\"seconds\": ");
    if (!m) {
        const char *e = strstr(line, "\"error\": \"");
        line[strcspn(line, "\n")] = '\0';
        snprintf(res->numpy_note, sizeof res->numpy_note, "numpy skipped: %.120s",
                 e ? e + 10 : (line[0] ? line : "python did not run"));
        char *q = strchr(res->numpy_note, '"');
        if (q)
            *q = '\0';
        return;
    }
    double sec = atof(m + 11);
    if (sec > 0)
        res->numpy_gbps = (double)bytes / sec / 1e9;
    const char *call = strstr(line, "\"call\": \"");
    if (call) {
        call += 9;
        size_t len = strcspn(call, "\"");
        if (len >= sizeof res->numpy_call)
            len = sizeof res->numpy_call - 1;
        memcpy(res->numpy_call, call, len);
        res->numpy_call[len] = '\0';
    }
}

static int case_selected(const options *o, const char *name)
{
    if (!o->cases)
        return 1;
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
            "  --cases LIST         comma list of u8,u16,f32,f64,i32 (default all)\n"
            "  --threads-max N      largest cpu-threads count in the scaling table (default: "
            "cores)\n"
            "  --no-numpy           do not time NumPy\n"
            "  --python EXE         Python interpreter for NumPy (default python3)\n"
            "  --numpy-script PATH  numpy_bench.py (default: the source tree's)\n"
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
        else if (strcmp(a, "--numpy-script") == 0 && v)
            o->script = v;
        else if (strcmp(a, "--json") == 0 && v)
            o->json = v;
        else if (strcmp(a, "--stat") == 0 && v && (!strcmp(v, "min") || !strcmp(v, "median")))
            o->use_min = strcmp(v, "min") == 0;
        else if (strcmp(a, "--no-numpy") == 0) {
            o->numpy = 0;
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

static void write_json(const options *o, const char *model, long cores, const char *date,
                       case_result *res, int nres)
{
    FILE *f = fopen(o->json, "w");
    if (!f) {
        fprintf(stderr, "gpuhist-bench-cpu: cannot write %s\n", o->json);
        return;
    }
    fprintf(f, "{\n  \"machine\": \"%s\", \"cores\": %ld, \"date\": \"%s\",\n", model, cores,
            date);
    fprintf(f,
            "  \"gpuhist\": \"%s\", \"size_mib\": %g, \"runs\": %d, \"stat\": \"%s\", "
            "\"dist\": \"%s\",\n",
            gpuhist_version(), o->size_mib, o->runs, o->use_min ? "min" : "median", o->dist);
    fprintf(f, "  \"cases\": [\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        fprintf(f, "    {\"case\": \"%s\", \"bytes\": %.0f, \"gbps\": {", r->c->name, r->bytes);
        for (int s = 0; s < r->nstrat; ++s)
            fprintf(f, "%s\"%s\": %.4f", s ? ", " : "", r->strat[s], r->gbps[s]);
        fprintf(f, "},\n     \"numpy\": {\"call\": \"%s\", \"gbps\": %.4f, \"note\": \"%s\"},\n",
                r->numpy_call, r->numpy_gbps, r->numpy_note);
        fprintf(f, "     \"threads_scaling\": [");
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

int main(int argc, char **argv)
{
    options o = {256.0, 5, "uniform", NULL, 0, 1, "python3", GPUHIST_BENCH_NUMPY_SCRIPT, NULL, 0};
    /* Prefer the copy next to the executable (the build tree may have moved to another machine). */
    static char beside[4096];
    ssize_t len = readlink("/proc/self/exe", beside, sizeof beside - 32);
    if (len > 0) {
        beside[len] = '\0';
        char *slash = strrchr(beside, '/');
        if (slash) {
            strcpy(slash + 1, "numpy_bench.py");
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
    const char *strat[MAX_STRATEGIES];
    int nstrat = 0;
    for (size_t i = 0; i < gpuhist_strategy_count() && nstrat < MAX_STRATEGIES; ++i) {
        gpuhist_strategy_desc d;
        if (gpuhist_strategy_info(i, &d) == GPUHIST_OK && d.backend == GPUHIST_BACKEND_CPU)
            strat[nstrat++] = d.name;
    }

    /* The CPU backend's device name says the model (/proc/cpuinfo) and its thread count; a copy,
     * as the JSON is written after the context is gone. */
    char model[256], date[64];
    snprintf(model, sizeof model, "%s", gpuhist_device_name(ctx));
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&tt));
    printf("gpuhist %s CPU benchmark\n", gpuhist_version());
    printf("machine: %s, %ld online CPUs; %s\n", model, cores, date);
    printf("input: %.0f MiB per case, %s data; %s of %d runs after 1 warm-up; GB/s = input "
           "bytes / wall time of gpuhist_histogram(); cpu-threads column: all %ld CPUs\n",
           o.size_mib, o.dist, o.use_min ? "fastest" : "median", o.runs, cores);
    double load[1] = {0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf", &load[0]) == 1)
            printf("load average (1 min) at start: %.2f%s\n", load[0],
                   load[0] > 0.5 * (double)cores ? "  (busy machine: timings are pessimistic)" : "");
        fclose(la);
    }
    printf("\n");

    case_result res[NCASES];
    int nres = 0, any_mismatch = 0;
    for (size_t ci = 0; ci < NCASES; ++ci) {
        const bench_case *c = &CASES[ci];
        if (!case_selected(&o, c->name))
            continue;
        case_result *r = &res[nres++];
        memset(r, 0, sizeof *r);
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

        gpuhist_set_threads(ctx, 0);
        for (int k = 0; k < nstrat; ++k) {
            fprintf(stderr, "[%s] %s...\n", c->name, strat[k]);
            r->strat[r->nstrat] = strat[k];
            gpuhist_set_strategy(ctx, strat[k]);
            int failed;
            double sec = time_strategy(ctx, &s, &b, counts, o.runs, &failed);
            r->gbps[r->nstrat] = failed ? 0.0 : (double)bytes / sec / 1e9;
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
            double sec = time_strategy(ctx, &s, &b, counts, o.runs, &failed);
            r->scale_threads[r->nscale] = th;
            r->scale_gbps[r->nscale++] = failed ? 0.0 : (double)bytes / sec / 1e9;
            if (th == o.threads_max)
                break;
        }
        gpuhist_set_threads(ctx, 0);
        if (o.numpy) {
            fprintf(stderr, "[%s] numpy...\n", c->name);
            run_numpy(&o, c, buf, bytes, r);
        } else {
            snprintf(r->numpy_note, sizeof r->numpy_note, "numpy skipped (--no-numpy)");
        }
        free(buf);
        free(counts);
        free(first);
    }
    gpuhist_destroy(ctx);

    /* ---- throughput table ---- */
    printf("%-20s", "case");
    for (int k = 0; k < nstrat; ++k)
        printf(" %14s", strat[k]);
    printf(" %10s", "numpy");
    for (int k = 0; k < nstrat; ++k)
        if (strcmp(strat[k], "cpu-reference") != 0)
            printf(" %9.9s/np", strat[k] + (strncmp(strat[k], "cpu-", 4) == 0 ? 4 : 0));
    printf("   numpy call\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        printf("%-20s", r->c->label);
        for (int k = 0; k < r->nstrat; ++k)
            printf(" %13.2f%s", r->gbps[k], r->mismatch[k] ? "!" : " ");
        if (r->numpy_gbps > 0)
            printf(" %10.3f", r->numpy_gbps);
        else
            printf(" %10s", "-");
        for (int k = 0; k < r->nstrat; ++k) {
            if (strcmp(r->strat[k], "cpu-reference") == 0)
                continue;
            if (r->numpy_gbps > 0)
                printf(" %11.1fx", r->gbps[k] / r->numpy_gbps);
            else
                printf(" %12s", "-");
        }
        printf("   %s\n", r->numpy_gbps > 0 ? r->numpy_call : r->numpy_note);
    }
    printf("(GB/s; '!' = counts differ from %s; x/np = ratio to NumPy on the same data)\n\n",
           nstrat ? strat[0] : "?");

    /* ---- scaling table ---- */
    printf("cpu-threads scaling: GB/s (efficiency = speed-up over 1 thread / threads)\n");
    printf("%-20s", "case");
    if (nres)
        for (int s = 0; s < res[0].nscale; ++s)
            printf(" %13d thr", res[0].scale_threads[s]);
    printf("\n");
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        printf("%-20s", r->c->label);
        for (int s = 0; s < r->nscale; ++s) {
            double eff = r->scale_gbps[0] > 0
                             ? r->scale_gbps[s] / r->scale_gbps[0] / r->scale_threads[s]
                             : 0.0;
            printf(" %8.2f (%.2f)", r->scale_gbps[s], eff);
        }
        printf("\n");
    }
    /* ---- the targets of docs/PERFORMANCE.md, in one place ---- */
    for (int i = 0; i < nres; ++i) {
        case_result *r = &res[i];
        if (r->c->dtype != GPUHIST_U8)
            continue;
        for (int k = 0; k < r->nstrat; ++k)
            if (strcmp(r->strat[k], "cpu-serial") == 0 && r->numpy_gbps > 0)
                printf("\ntarget cpu-serial u8/256 >= 8x numpy.bincount: %.1fx\n",
                       r->gbps[k] / r->numpy_gbps);
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
        printf("target cpu-threads efficiency >= 0.8 at %d threads: worst case %.2f\n", th, worst);
    }
    if (o.json)
        write_json(&o, model, cores, date, res, nres);
    if (any_mismatch) {
        fprintf(stderr, "gpuhist-bench-cpu: some strategies returned different counts\n");
        return 1;
    }
    return 0;
}
