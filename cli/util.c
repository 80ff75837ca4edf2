/*
 * util.c - small helpers of the gpuhist command: messages, clocks, terminals, number parsing and
 * printing, the progress bar, the chunk size and full reads.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Under MPI (mpi.c) the messages of every rank are kept, the first one only, and printed by the
 * agreement that follows, once for all the ranks. */
static int g_capture;
static int g_captured;
static char g_capture_buf[1024];

void cli_error_capture(int on)
{
    g_capture = on;
}

const char *cli_error_captured(void)
{
    return g_captured ? g_capture_buf : NULL;
}

/* A thread that works beside the command's main thread (the device's part of a run that starts
 * on the CPU, hybrid.c) keeps its messages in a buffer of its own: the main thread decides
 * which one is printed. */
static _Thread_local char *t_capture;
static _Thread_local size_t t_capture_len;

void cli_error_capture_thread(char *buf, size_t len)
{
    t_capture = len ? buf : NULL;
    t_capture_len = len;
    if (t_capture)
        t_capture[0] = '\0';
}

int cli_error(int status, const char *fmt, ...)
{
    va_list ap;
    if (t_capture) {
        if (!t_capture[0]) {
            va_start(ap, fmt);
            vsnprintf(t_capture, t_capture_len, fmt, ap);
            va_end(ap);
        }
        return status;
    }
    if (g_capture) {
        if (!g_captured) {
            va_start(ap, fmt);
            vsnprintf(g_capture_buf, sizeof g_capture_buf, fmt, ap);
            va_end(ap);
            g_captured = 1;
        }
        return status;
    }
    fputs("gpuhist: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

void cli_note(const char *fmt, ...)
{
    va_list ap;
    fputs("gpuhist: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* When main began (cli_now), and the process's age then (-1: unknown). */
static double g_main_t0, g_age_at_main = -1;

/* The process's age: now (CLOCK_BOOTTIME) less its start time (/proc/self/stat field 22, in
 * clock ticks since boot); -1 where that cannot be read (not Linux). */
static double process_age(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    unsigned long long start = 0;
    int field = 2;
    for (; p && *p && field < 22; ++p)
        if (*p == ' ')
            ++field;
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec ts;
    if (!p || sscanf(p, "%llu", &start) != 1 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts))
        return -1;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - (double)start / (double)hz;
}

void cli_mark_main(void)
{
    g_main_t0 = cli_now();
    g_age_at_main = process_age();
}

void cli_note_lifetime(void)
{
    if (g_age_at_main >= 0)
        cli_note("%.3f s since main began; the process was %.2f s old then (loading; the clock "
                 "ticks of /proc are 10 ms)",
                 cli_now() - g_main_t0, g_age_at_main);
    else
        cli_note("%.3f s since main began", cli_now() - g_main_t0);
}

/* Set by cli_no_terminal(): the standard streams are never taken for a terminal. */
static int g_no_terminal;

void cli_no_terminal(void)
{
    g_no_terminal = 1;
}

int cli_isatty(FILE *f)
{
    if (g_no_terminal)
        return 0;
    return isatty(fileno(f));
}

int cli_terminal_columns(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    uint64_t c;
    if (env && cli_parse_u64(env, &c) && c >= 20 && c <= 1000)
        return (int)c;
    return 80;
}

int cli_utf8(void)
{
    /* The first of LC_ALL, LC_CTYPE, LANG that is set decides, as in setlocale(). */
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3; ++i) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "utf8") ||
                   strstr(v, "UTF8");
    }
    return 0;
}

int cli_host_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

void cli_format_double(char *buf, size_t size, double v)
{
    /* The fewest significant digits that read back exactly (edges are exact doubles, float32
     * edges widened, and scripts compare them with NumPy's using ==), laid out like Python's
     * repr: positional for 1e-4 <= |v| < 1e16, else with an exponent (shortest.c). */
    char tmp[32];
    cli_shortest_double(tmp, v);
    snprintf(buf, size, "%s", tmp);
}

void cli_format_bytes(char *buf, size_t size, double bytes)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f B", bytes);
    else
        snprintf(buf, size, "%.1f %s", bytes, unit[u]);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

int cli_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return 0;
    *out = (int64_t)v;
    return 1;
}

const char *cli_double_problem(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return "is not a number";
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s)
        return "is not a number";
    /* strtod gives +-HUGE_VAL (inf) with ERANGE for 1e400; a tiny 1e-400 underflows towards 0
     * (also ERANGE) and is accepted as the nearest double, as NumPy reads it. */
    if (errno == ERANGE && fabs(v) > 1.0)
        return "is beyond the range of a double";
    if (!isfinite(v))
        return "is not finite";
    *out = v;
    return NULL;
}

int cli_parse_double(const char *s, double *out)
{
    return cli_double_problem(s, out) == NULL;
}

int cli_flush_stdout(void)
{
    /* fflush reports a failed write (ENOSPC, EPIPE with SIGPIPE ignored, EBADF); glibc keeps the
     * unwritten bytes, so a write that failed earlier fails again here with the same errno. The
     * error flag catches the rest. */
    errno = 0;
    int e = fflush(stdout) != 0 ? errno : 0;
    if (!e && ferror(stdout))
        e = EIO;
    if (e)
        return cli_error(CLI_EXIT_FAIL, "standard output: write error: %s", strerror(e));
    return CLI_EXIT_OK;
}

/* ---- progress bar ---------------------------------------------------------------------------- */

void cli_progress_start(cli_progress *p, int enabled, const char *label, double total)
{
    p->enabled = enabled && cli_isatty(stderr);
    p->label = label;
    p->total = total;
    p->start = cli_now();
    p->last_draw = 0.0;
    p->drawn = 0;
}

void cli_progress_update(cli_progress *p, double done)
{
    if (!p->enabled)
        return;
    double now = cli_now();
    /* Nothing for the first second (short runs stay silent), then at most 10 redraws/s. */
    if (now - p->start < 1.0 || now - p->last_draw < 0.1)
        return;
    p->last_draw = now;
    p->drawn = 1;
    char done_s[32];
    cli_format_bytes(done_s, sizeof done_s, done);
    if (p->total > 0) {
        double frac = done / p->total;
        if (frac > 1.0)
            frac = 1.0;
        const int width = 30;
        int fill = (int)(frac * width);
        char bar[64];
        for (int i = 0; i < width; ++i)
            bar[i] = i < fill ? '#' : '.';
        bar[width] = 0;
        double rate = done / (now - p->start);
        double eta = rate > 0 ? (p->total - done) / rate : 0;
        fprintf(stderr, "\r%s [%s] %3.0f%% %s  %.0fs left  ", p->label, bar, 100.0 * frac, done_s,
                eta);
    } else {
        fprintf(stderr, "\r%s %s  ", p->label, done_s);
    }
    fflush(stderr);
}

void cli_progress_end(cli_progress *p)
{
    if (p->enabled && p->drawn) {
        /* Clear the line so the next message starts clean. */
        fprintf(stderr, "\r%*s\r", 79, "");
        fflush(stderr);
    }
    p->drawn = 0;
}

/* ---- options --------------------------------------------------------------------------------- */

void cli_getopt_init(cli_getopt *g, int argc, char **argv)
{
    memset(g, 0, sizeof *g);
    g->argc = argc;
    g->argv = argv;
    g->i = 1;
}

int cli_getopt_next(cli_getopt *g, const cli_optdef *defs)
{
    for (;;) {
        if (g->i >= g->argc)
            return CLI_OPT_END;
        char *a = g->argv[g->i++];
        g->arg = NULL;
        if (g->no_more_options || a[0] != '-' || a[1] == 0) {
            g->arg = a;
            return CLI_OPT_POSITIONAL;
        }
        if (strcmp(a, "--") == 0) {
            g->no_more_options = 1;
            continue;
        }
        const cli_optdef *d = NULL;
        const char *inline_arg = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t n = eq ? (size_t)(eq - name) : strlen(name);
            for (const cli_optdef *p = defs; p->name; ++p)
                if (strlen(p->name) == n && strncmp(p->name, name, n) == 0)
                    d = p;
            snprintf(g->shown, sizeof g->shown, "--%.*s", (int)(n < 40 ? n : 40), name);
            if (!d)
                return cli_error(CLI_OPT_ERROR, "unknown option '%s' (see --help)", g->shown);
            if (eq) {
                if (!d->has_arg)
                    return cli_error(CLI_OPT_ERROR, "option %s takes no value", g->shown);
                inline_arg = eq + 1;
            }
        } else {
            for (const cli_optdef *p = defs; p->name; ++p)
                if (p->short_name && p->short_name == a[1])
                    d = p;
            snprintf(g->shown, sizeof g->shown, "-%c", a[1]);
            if (!d)
                return cli_error(CLI_OPT_ERROR, "unknown option '%s' (see --help)", g->shown);
            if (a[2]) {
                if (!d->has_arg)
                    return cli_error(CLI_OPT_ERROR, "option %s takes no value (got '%s')",
                                     g->shown, a);
                inline_arg = a + 2;
            }
        }
        if (d->has_arg) {
            if (inline_arg)
                g->arg = inline_arg;
            else if (g->i < g->argc)
                g->arg = g->argv[g->i++];
            else
                return cli_error(CLI_OPT_ERROR, "option %s needs a value", g->shown);
        }
        return d->id;
    }
}

double cli_peak_memory_mib(void)
{
    /* VmHWM: the peak resident set of this address space (rusage's maxrss would also count
     * the parent's pages inherited until exec). */
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0.0;
    char line[256];
    double kib = 0.0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kib) == 1)
            break;
    fclose(f);
    return kib / 1024.0;
}

/* Chunk size: large enough that per-chunk costs (a thread start per reader, a copy and a kernel
 * launch) vanish, small enough that the four page-locked staging buffers are quick to allocate
 * (pinning runs at a few GB/s) and far below the memory bound. GPUHIST_CHUNK_MIB overrides it
 * for measurements. */
void cli_minmax_take(double *lo, double *hi, int *found, double a, double b)
{
    if (!*found || a < *lo)
        *lo = a;
    if (!*found || b > *hi)
        *hi = b;
    *found = 1;
}

size_t cli_chunk_bytes(void)
{
    const char *e = getenv("GPUHIST_CHUNK_MIB");
    long mib = e && *e ? strtol(e, NULL, 10) : 16;
    if (mib < 1 || mib > 1024)
        mib = 16;
    return (size_t)mib << 20;
}

/* read() into dst until `want` bytes or the end of the input. */
ssize_t cli_read_full(int fd, void *dst, size_t want, int *eof)
{
    size_t have = 0;
    while (have < want) {
        ssize_t n = read(fd, (unsigned char *)dst + have, want - have);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0) {
            *eof = 1;
            break;
        }
        have += (size_t)n;
    }
    return (ssize_t)have;
}
