/*
 * text.c - text numbers as samples (--text input, -e @FILE): tokens separated by white space
 * or commas, '#' to the end of the line a comment, each token parsed as the sample type (strtod
 * for floats, rounded once to float16 or bfloat16 for those types; integers exactly, refused
 * out of the type's range), messages naming the line and the token.
 *
 * A text above 4 MiB is cut at line ends into one piece per core, parsed on threads and
 * joined in order; the first problem of the whole text is the one reported.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The float16 nearest d, ties to even (NumPy's astype(float16) of a double); +-inf beyond its
 * range, with *overflow set when d was finite. */
static uint16_t text_f16(double d, int *overflow)
{
    const uint16_t sign = signbit(d) ? 0x8000u : 0u;
    const double a = fabs(d);
    if (a != a)
        return 0x7e00u;
    if (a >= 65520.0) {
        *overflow = isfinite(a);
        return sign | 0x7c00u;
    }
    if (a < 0x1p-14) /* subnormal: a multiple of 2^-24 (0x400 is the smallest normal) */
        return sign | (uint16_t)nearbyint(a * 0x1p24);
    int k;
    double m = nearbyint(ldexp(frexp(a, &k), 11)); /* a = m * 2^(k - 11), m in [1024, 2048] */
    if (m == 2048.0) {
        m = 1024.0;
        ++k;
    }
    return sign | (uint16_t)((k + 14) << 10) | (uint16_t)((int)m - 1024);
}

/* The bfloat16 of d rounded to float first, then to bfloat16 ties to even (what ml_dtypes and
 * torch give for a double); *overflow set when a finite d becomes infinite. */
static uint16_t text_bf16(double d, int *overflow)
{
    const float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (f != f)
        return 0x7fc0u;
    const uint32_t low = u & 0xffffu;
    uint32_t high = u >> 16;
    if (low > 0x8000u || (low == 0x8000u && (high & 1u)))
        ++high;
    if ((high & 0x7fffu) == 0x7f80u && isfinite(d))
        *overflow = 1;
    return (uint16_t)high;
}

static int is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == '\f' || c == '\v' ||
           c == '#';
}

static void printable(char *tok)
{
    for (char *p = tok; *p; ++p)
        if ((unsigned char)*p < 32 || (unsigned char)*p > 126)
            *p = '?';
}

/* One piece of a text: [begin, end) starting on line `line`, parsed into its own array. On a
 * problem, parsing stops and `problem` / `tok` / `line` say what and where (printed by the caller,
 * which reports the first problem of the whole text). */
typedef struct text_piece {
    const char *begin, *end;
    unsigned long line;
    gpuhist_dtype dtype;
    cli_progress *bar; /* the first piece drives the progress bar, scaled to the whole text */
    double scale;
    const char *text;
    unsigned char *vals;
    uint64_t n;
    const char *problem; /* NULL: parsed; "out of memory" is reported as such */
    int is_oom;
    int untyped;         /* the message does not name the type (not a token of the type at all) */
    char tok[80];
} text_piece;

static void *parse_piece(void *arg)
{
    text_piece *pc = arg;
    const gpuhist_dtype dtype = pc->dtype;
    size_t size = gpuhist_dtype_size(dtype);
    size_t cap = 4096;
    unsigned char *vals = malloc(cap * size);
    pc->vals = NULL;
    pc->n = 0;
    pc->problem = NULL;
    pc->is_oom = 0;
    pc->untyped = 0;
    if (!vals) {
        pc->is_oom = 1;
        return NULL;
    }
    uint64_t n = 0;
    unsigned long line = pc->line;
    const char *p = pc->begin, *end = pc->end;
    int is_float = dtype == GPUHIST_F32 || dtype == GPUHIST_F64 || dtype == GPUHIST_F16 ||
                   dtype == GPUHIST_BF16;
    int is_signed = dtype == GPUHIST_I8 || dtype == GPUHIST_I16 || dtype == GPUHIST_I32 ||
                    dtype == GPUHIST_I64;
    char *tok = pc->tok;
    const char *problem = NULL;

    while (p < end) {
        char c = *p;
        if (c == '\n') {
            ++line;
            ++p;
            continue;
        }
        if (c == '#') {
            while (p < end && *p != '\n')
                ++p;
            continue;
        }
        if (is_sep(c)) {
            ++p;
            continue;
        }
        const char *t = p;
        while (p < end && !is_sep(*p))
            ++p;
        size_t tl = (size_t)(p - t);
        if (tl >= sizeof pc->tok) {
            memcpy(tok, t, 40);
            strcpy(tok + 40, "...");
            problem = "is not a number";
            pc->untyped = 1;
            break;
        }
        memcpy(tok, t, tl);
        tok[tl] = 0;
        if (strlen(tok) != tl) { /* a NUL byte: binary data read as text */
            problem = "is not a number (binary data? use -t)";
            pc->untyped = 1;
            break;
        }

        if (n == cap) {
            unsigned char *nv = realloc(vals, 2 * cap * size);
            if (!nv) {
                pc->is_oom = 1;
                break;
            }
            vals = nv;
            cap *= 2;
        }
        unsigned char *dst = vals + n * size;
        char *e;
        errno = 0;
        if (is_float) {
            /* strtof for f32: one correct rounding, not two via double. */
            if (dtype == GPUHIST_F32) {
                float v = strtof(tok, &e);
                if (*e || e == tok)
                    problem = "is not a number";
                else if (errno == ERANGE && isinf(v))
                    problem = "is out of range for f32";
                memcpy(dst, &v, 4);
            } else if (dtype == GPUHIST_F16 || dtype == GPUHIST_BF16) {
                /* parsed as a double, then rounded once to the half type */
                double v = strtod(tok, &e);
                int over = 0;
                uint16_t h = dtype == GPUHIST_F16 ? text_f16(v, &over) : text_bf16(v, &over);
                if (*e || e == tok)
                    problem = "is not a number";
                else if (over || (errno == ERANGE && isinf(v)))
                    problem = "is out of range";
                memcpy(dst, &h, 2);
            } else {
                double v = strtod(tok, &e);
                if (*e || e == tok)
                    problem = "is not a number";
                else if (errno == ERANGE && isinf(v))
                    problem = "is out of range for f64";
                memcpy(dst, &v, 8);
            }
        } else if (is_signed) {
            long long v = strtoll(tok, &e, 10);
            if (*e || e == tok) {
                errno = 0;
                double d = strtod(tok, &e);
                (void)d;
                problem = (*e || e == tok) ? "is not a number" : "is not an integer";
            } else {
                long long lo = dtype == GPUHIST_I8 ? INT8_MIN : dtype == GPUHIST_I16 ? INT16_MIN
                               : dtype == GPUHIST_I32 ? INT32_MIN : INT64_MIN;
                long long hi = dtype == GPUHIST_I8 ? INT8_MAX : dtype == GPUHIST_I16 ? INT16_MAX
                               : dtype == GPUHIST_I32 ? INT32_MAX : INT64_MAX;
                if (errno == ERANGE || v < lo || v > hi)
                    problem = "is out of range";
                int8_t v8 = (int8_t)v;
                int16_t v16 = (int16_t)v;
                int32_t v32 = (int32_t)v;
                int64_t v64 = (int64_t)v;
                memcpy(dst, size == 1 ? (void *)&v8 : size == 2 ? (void *)&v16
                            : size == 4 ? (void *)&v32 : (void *)&v64, size);
            }
        } else {
            unsigned long long v = 0;
            if (tok[0] == '-') {
                problem = "is negative";
                e = tok;
            } else {
                v = strtoull(tok, &e, 10);
            }
            if (!problem && (*e || e == tok)) {
                errno = 0;
                double d = strtod(tok, &e);
                (void)d;
                problem = (*e || e == tok) ? "is not a number" : "is not an integer";
            } else if (!problem) {
                unsigned long long hi = dtype == GPUHIST_U8 ? UINT8_MAX : dtype == GPUHIST_U16
                                        ? UINT16_MAX : dtype == GPUHIST_U32 ? UINT32_MAX
                                        : UINT64_MAX;
                if (errno == ERANGE || v > hi)
                    problem = "is out of range";
                uint8_t v8 = (uint8_t)v;
                uint16_t v16 = (uint16_t)v;
                uint32_t v32 = (uint32_t)v;
                uint64_t v64 = (uint64_t)v;
                memcpy(dst, size == 1 ? (void *)&v8 : size == 2 ? (void *)&v16
                            : size == 4 ? (void *)&v32 : (void *)&v64, size);
            }
        }
        if (problem)
            break;
        ++n;
        if (pc->bar && (n & 0xffff) == 0)
            cli_progress_update(pc->bar, (double)(p - pc->begin) * pc->scale);
    }
    pc->line = line;
    pc->problem = problem;
    if (problem || pc->is_oom) {
        free(vals);
        return NULL;
    }
    pc->vals = vals;
    pc->n = n;
    return NULL;
}

/* Texts above this size are cut into one piece per core, at line ends (a comment never spans a
 * line end, so every piece parses alone), and parsed in parallel. */
#define TEXT_PIECE_MIN ((size_t)4 << 20)
#define TEXT_MAX_PIECES 64

int cli_parse_text(const char *name, const char *text, size_t len, gpuhist_dtype dtype,
                   int progress, int fail_status, void **out, uint64_t *count)
{
    return cli_parse_text_at(name, text, len, 1, dtype, progress, fail_status, out, count);
}

int cli_parse_text_at(const char *name, const char *text, size_t len, unsigned long first_line,
                      gpuhist_dtype dtype, int progress, int fail_status, void **out,
                      uint64_t *count)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int np = (int)(len / TEXT_PIECE_MIN);
    if (np > cores)
        np = (int)cores;
    if (np > TEXT_MAX_PIECES)
        np = TEXT_MAX_PIECES;
    if (np < 1)
        np = 1;
    text_piece pc[TEXT_MAX_PIECES];
    pthread_t tid[TEXT_MAX_PIECES];
    int started[TEXT_MAX_PIECES] = {0};
    cli_progress bar;
    cli_progress_start(&bar, progress, "parsing text", (double)len);
    /* cut points: the first line end at or after i * len / np */
    const char *end = text + len, *at = text;
    unsigned long line = first_line;
    int k = 0;
    for (; k < np && at < end; ++k) {
        const char *cut = k + 1 < np ? text + len / (size_t)np * (size_t)(k + 1) : end;
        if (cut < at)
            cut = at;
        const char *nl = cut < end ? memchr(cut, '\n', (size_t)(end - cut)) : NULL;
        const char *stop = k + 1 < np && nl ? nl + 1 : end;
        memset(&pc[k], 0, sizeof pc[k]);
        pc[k].begin = at;
        pc[k].end = stop;
        pc[k].line = line;
        pc[k].dtype = dtype;
        pc[k].text = text;
        for (const char *q = at; (q = memchr(q, '\n', (size_t)(stop - q))) != NULL; ++q)
            ++line;
        at = stop;
    }
    np = k > 0 ? k : 1;
    if (k == 0) { /* empty text */
        memset(&pc[0], 0, sizeof pc[0]);
        pc[0].begin = pc[0].end = text;
        pc[0].line = first_line;
        pc[0].dtype = dtype;
    }
    pc[0].bar = &bar;
    pc[0].scale = pc[0].end > pc[0].begin ? (double)len / (double)(pc[0].end - pc[0].begin) : 1.0;
    for (int i = 1; i < np; ++i)
        started[i] = pthread_create(&tid[i], NULL, parse_piece, &pc[i]) == 0;
    for (int i = 1; i < np; ++i)
        if (!started[i])
            parse_piece(&pc[i]);
    parse_piece(&pc[0]);
    for (int i = 1; i < np; ++i)
        if (started[i])
            pthread_join(tid[i], NULL);
    cli_progress_end(&bar);

    /* the first problem in text order, else the pieces joined */
    int rc = CLI_EXIT_OK;
    uint64_t total = 0;
    for (int i = 0; i < np && rc == CLI_EXIT_OK; ++i) {
        if (pc[i].is_oom) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: out of memory", name);
        } else if (pc[i].problem) {
            printable(pc[i].tok);
            if (pc[i].untyped)
                rc = cli_error(fail_status, "%s:%lu: '%s' %s", name, pc[i].line, pc[i].tok,
                               pc[i].problem);
            else
                rc = cli_error(fail_status, "%s:%lu: '%s' %s for type %s", name, pc[i].line,
                               pc[i].tok, pc[i].problem, gpuhist_dtype_name(dtype));
        }
        total += pc[i].n;
    }
    size_t size = gpuhist_dtype_size(dtype);
    unsigned char *vals = NULL;
    if (rc == CLI_EXIT_OK) {
        vals = np == 1 ? pc[0].vals : malloc(total ? total * size : 1);
        if (!vals) {
            rc = cli_error(CLI_EXIT_FAIL, "%s: out of memory", name);
        } else if (np > 1) {
            uint64_t at_n = 0;
            for (int i = 0; i < np; ++i) {
                memcpy(vals + at_n * size, pc[i].vals, (size_t)(pc[i].n * size));
                at_n += pc[i].n;
            }
        }
    }
    for (int i = 0; i < np; ++i)
        if (!(np == 1 && rc == CLI_EXIT_OK))
            free(pc[i].vals);
    if (rc)
        return rc;
    *out = vals;
    *count = total;
    return CLI_EXIT_OK;
}
