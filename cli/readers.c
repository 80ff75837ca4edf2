/*
 * readers.c - input of the gpuhist command: raw typed samples, .npy files, text numbers.
 *
 * The whole input goes into one host buffer and then into one gpuhist_histogram() call: the
 * library splits work for devices itself, and one call is what makes counts exact and the
 * reported time honest. Reading is done in large chunks (16 MiB) so a progress bar can be drawn
 * for big files; a regular file is read straight into a buffer of its size.
 *
 * Byte order: raw input is little-endian (swapped on a big-endian host). .npy files carry their
 * byte order in the dtype; big-endian arrays ('>i4', '>f8', ...) are byte-swapped after reading,
 * so any .npy NumPy writes with a supported dtype is read.
 */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define CHUNK ((size_t)16 << 20)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int is_stdin(const char *path)
{
    return path == NULL || strcmp(path, "-") == 0;
}

/* Give up a read that cli_slurp started: free the buffer, close the file (never stdin) and end
 * the progress bar, so the caller's message starts on a clean line. */
static void slurp_abandon(FILE *f, char *buf, cli_progress *bar)
{
    free(buf);
    if (f != stdin)
        fclose(f);
    cli_progress_end(bar);
}

static int slurp_read_error(FILE *f, char *buf, cli_progress *bar, const char *name)
{
    const int e = errno;
    slurp_abandon(f, buf, bar);
    return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", name, e ? strerror(e) : "I/O error");
}

int cli_slurp(const char *path, const char *what, int progress, char **buf_out, size_t *len_out)
{
    const char *name = is_stdin(path) ? "standard input" : path;
    FILE *f = is_stdin(path) ? stdin : fopen(path, "rb");
    if (!f)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot open: %s", name, strerror(errno));

    size_t cap = CHUNK;
    double total = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            if (f != stdin)
                fclose(f);
            return cli_error(CLI_EXIT_FAIL, "%s: is a directory", name);
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0) {
            if ((unsigned long long)st.st_size >= (unsigned long long)SIZE_MAX) {
                if (f != stdin)
                    fclose(f);
                return cli_error(CLI_EXIT_FAIL, "%s: too large for this machine", name);
            }
            /* Exactly the file plus the NUL terminator, so big files are never copied. */
            cap = (size_t)st.st_size + 1;
            total = (double)st.st_size;
        }
    }

    char *buf = malloc(cap);
    if (!buf) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, (double)cap);
        if (f != stdin)
            fclose(f);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory reading %s (%s)", name, what, sz);
    }
    char label[96];
    snprintf(label, sizeof label, "reading %.60s", name);
    cli_progress bar;
    cli_progress_start(&bar, progress, label, total);

    size_t len = 0;
    for (;;) {
        if (cap - len < 2) {
            /* Full: at the end of a regular file of the size fstat gave, or a pipe. Look one
             * byte ahead so a file read exactly to its end is never copied into a bigger
             * buffer. */
            int c = fgetc(f);
            if (c == EOF) {
                if (ferror(f))
                    return slurp_read_error(f, buf, &bar, name);
                break;
            }
            ungetc(c, f);
            /* More data (a pipe, or a file that grew): double the buffer. */
            size_t ncap = cap * 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                slurp_abandon(f, buf, &bar);
                return cli_error(CLI_EXIT_FAIL, "%s: out of memory reading %s", name, what);
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - 1 - len;
        if (want > CHUNK)
            want = CHUNK;
        size_t got = fread(buf + len, 1, want, f);
        len += got;
        cli_progress_update(&bar, (double)len);
        if (got < want) {
            if (ferror(f))
                return slurp_read_error(f, buf, &bar, name);
            break; /* end of file */
        }
    }
    cli_progress_end(&bar);
    if (f != stdin)
        fclose(f);
    buf[len] = 0;
    *buf_out = buf;
    *len_out = len;
    return CLI_EXIT_OK;
}

static void swap_bytes(void *data, uint64_t n, size_t size)
{
    unsigned char *p = data;
    if (size < 2)
        return;
    for (uint64_t i = 0; i < n; ++i, p += size)
        for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* ---- .npy ------------------------------------------------------------------------------------ */

typedef struct {
    const char *p, *end;
} scanner;

static void skip_ws(scanner *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        ++s->p;
}

static int accept(scanner *s, char c)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        ++s->p;
        return 1;
    }
    return 0;
}

/* A Python string literal 'abc' or "abc" (no escapes occur in .npy headers). */
static int scan_string(scanner *s, char *out, size_t cap)
{
    skip_ws(s);
    if (s->p >= s->end || (*s->p != '\'' && *s->p != '"'))
        return 0;
    char q = *s->p++;
    size_t n = 0;
    while (s->p < s->end && *s->p != q) {
        if (n + 1 < cap)
            out[n++] = *s->p;
        ++s->p;
    }
    if (s->p >= s->end)
        return 0;
    ++s->p;
    out[n] = 0;
    return 1;
}

static int scan_word(scanner *s, const char *w)
{
    skip_ws(s);
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) >= n && memcmp(s->p, w, n) == 0) {
        s->p += n;
        return 1;
    }
    return 0;
}

/* Skip any value we do not need (future header keys), strings and brackets aware. */
static int skip_value(scanner *s)
{
    int depth = 0;
    skip_ws(s);
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '\'' || c == '"') {
            char tmp[8];
            if (!scan_string(s, tmp, sizeof tmp))
                return 0;
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0)
                return 1;
            --depth;
        } else if (c == ',' && depth == 0)
            return 1;
        ++s->p;
    }
    return 0;
}

typedef struct {
    char descr[64];
    int structured;
    int fortran;
    int ndim;
    uint64_t first_dim, last_dim; /* shape[0] and shape[ndim - 1] (0 for a scalar) */
    uint64_t count;
    int count_overflow;
    int negative_dim;       /* parsing stopped at a negative dimension */
    unsigned long long negative_value;
} npy_header;

static int parse_npy_dict(const char *text, size_t len, npy_header *h)
{
    scanner s = {text, text + len};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    memset(h, 0, sizeof *h);
    if (!accept(&s, '{'))
        return 0;
    for (;;) {
        if (accept(&s, '}'))
            break;
        char key[64];
        if (!scan_string(&s, key, sizeof key) || !accept(&s, ':'))
            return 0;
        if (strcmp(key, "descr") == 0) {
            skip_ws(&s);
            if (s.p < s.end && *s.p == '[') {
                h->structured = 1;
                if (!skip_value(&s))
                    return 0;
            } else if (!scan_string(&s, h->descr, sizeof h->descr))
                return 0;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (scan_word(&s, "True"))
                h->fortran = 1;
            else if (scan_word(&s, "False"))
                h->fortran = 0;
            else
                return 0;
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            if (!accept(&s, '('))
                return 0;
            h->count = 1;
            h->ndim = 0;
            while (!accept(&s, ')')) {
                /* A decimal integer with an optional sign (what Python's literal syntax allows),
                 * read within the header's bytes: the buffer need not be NUL-terminated. */
                skip_ws(&s);
                int negative = 0;
                if (s.p < s.end && (*s.p == '-' || *s.p == '+'))
                    negative = *s.p++ == '-';
                if (s.p >= s.end || *s.p < '0' || *s.p > '9')
                    return 0;
                unsigned long long d = 0;
                for (; s.p < s.end && *s.p >= '0' && *s.p <= '9'; ++s.p) {
                    unsigned digit = (unsigned)(*s.p - '0');
                    if (d > (ULLONG_MAX - digit) / 10)
                        return 0; /* beyond 64 bits: not a size */
                    d = d * 10 + digit;
                }
                if (negative && d != 0) {
                    h->negative_dim = 1;
                    h->negative_value = d;
                    return 0;
                }
                if (d != 0 && h->count > UINT64_MAX / d)
                    h->count_overflow = 1;
                h->count *= d;
                if (h->ndim == 0)
                    h->first_dim = d;
                h->last_dim = d;
                ++h->ndim;
                if (!accept(&s, ',')) {
                    if (!accept(&s, ')'))
                        return 0;
                    break;
                }
            }
            have_shape = 1;
        } else if (!skip_value(&s))
            return 0;
        if (!accept(&s, ',')) {
            if (!accept(&s, '}'))
                return 0;
            break;
        }
    }
    return have_descr && have_fortran && have_shape;
}

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

/* Map a NumPy dtype string ('<f4', '|u1', '>i8', '|b1') to a gpuhist dtype; *swap is set when
 * the bytes must be reversed for this host. @return 1, or 0 with `why` filled in. */
static int npy_dtype(const char *descr, gpuhist_dtype *out, int *swap, char *why, size_t why_size)
{
    char order = descr[0];
    const char *p = descr;
    if (order == '<' || order == '>' || order == '|' || order == '=')
        ++p;
    else
        order = '=';
    char kind = p[0];
    char *end = (char *)p;
    long size = kind ? strtol(p + 1, &end, 10) : 0;
    if (kind == 'O' || kind == 'U' || kind == 'S' || kind == 'M' || kind == 'm' || kind == 'V' ||
        kind == 'c') {
        /* Reported below by kind, whatever the size says. */
    } else if (!kind || p[1] == 0 || *end != 0) {
        snprintf(why, why_size, "dtype '%s' is not understood", descr);
        return 0;
    }
    static const gpuhist_dtype ints[4] = {GPUHIST_I8, GPUHIST_I16, GPUHIST_I32, GPUHIST_I64};
    static const gpuhist_dtype uints[4] = {GPUHIST_U8, GPUHIST_U16, GPUHIST_U32, GPUHIST_U64};
    int lg = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    if ((kind == 'i' || kind == 'u') && lg >= 0)
        *out = kind == 'i' ? ints[lg] : uints[lg];
    else if (kind == 'f' && size == 4)
        *out = GPUHIST_F32;
    else if (kind == 'f' && size == 8)
        *out = GPUHIST_F64;
    else if (kind == 'f' && size == 2)
        *out = GPUHIST_F16;
    else if (kind == 'b' && size == 1)
        *out = GPUHIST_U8; /* bool: histogrammed as the values 0 and 1 */
    else {
        const char *what = kind == 'V' && size == 2
                               ? "void; a bfloat16 array saved by ml_dtypes has this dtype, "
                                 "which does not say so: write its raw bytes (a.tofile) and "
                                 "read them with -t bf16"
                           : kind == 'f'              ? "this float size is not supported"
                           : kind == 'c'              ? "complex numbers are not supported"
                           : kind == 'O'              ? "object arrays are not supported"
                           : kind == 'U' || kind == 'S' ? "strings are not supported"
                           : kind == 'M' || kind == 'm' ? "datetimes are not supported"
                           : kind == 'V'              ? "void (raw record) dtypes are not supported"
                                                        : "unsupported dtype";
        snprintf(why, why_size,
                 "dtype '%s': %s (supported: bool, int8..int64, uint8..uint64, float16, float32, "
                 "float64)",
                 descr, what);
        return 0;
    }
    int little_host = cli_host_little_endian();
    *swap = size > 1 && ((order == '>' && little_host) || (order == '<' && !little_host));
    return 1;
}

size_t cli_npy_header_size(const unsigned char *buf, size_t len)
{
    if (len < 10 || memcmp(buf, npy_magic, 6) != 0)
        return 0;
    if (buf[6] == 1)
        return 10 + (buf[8] | (size_t)buf[9] << 8);
    if ((buf[6] == 2 || buf[6] == 3) && len >= 12)
        return 12 + (buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 |
                     (size_t)buf[11] << 24);
    return 0;
}

/* Weights: float32 or float64 only. @return 1, or 0 with `why` filled in. */
static int npy_weight_dtype(const char *descr, gpuhist_dtype *out, int *swap, char *why,
                            size_t why_size)
{
    if (npy_dtype(descr, out, swap, why, why_size) && (*out == GPUHIST_F32 || *out == GPUHIST_F64))
        return 1;
    snprintf(why, why_size,
             "weights must be float32 or float64 ('<f4', '<f8', '>f4', '>f8'), not dtype '%s'",
             descr);
    return 0;
}

static int parse_header(const char *name, const unsigned char *buf, size_t len, int weights,
                        cli_npy_info *out)
{
    memset(out, 0, sizeof *out);
    if (len < 10 || memcmp(buf, npy_magic, 6) != 0)
        return cli_error(CLI_EXIT_FAIL, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    unsigned major = buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return cli_error(CLI_EXIT_FAIL, "%s: malformed .npy: truncated header", name);
        hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hstart = 12;
    } else {
        return cli_error(CLI_EXIT_FAIL, "%s: .npy format version %u is not supported (1, 2, 3 are)",
                         name, major);
    }
    if (hlen > len - hstart)
        return cli_error(CLI_EXIT_FAIL, "%s: malformed .npy: header longer than the file", name);
    npy_header h;
    if (!parse_npy_dict((const char *)buf + hstart, hlen, &h)) {
        if (h.negative_dim)
            return cli_error(CLI_EXIT_FAIL,
                             "%s: invalid .npy header: the shape has a negative dimension (-%llu)",
                             name, h.negative_value);
        return cli_error(CLI_EXIT_FAIL,
                         "%s: malformed .npy header (expected a dict with descr, fortran_order, "
                         "shape)",
                         name);
    }
    if (h.structured)
        return cli_error(CLI_EXIT_FAIL, "%s: structured .npy dtypes are not supported%s", name,
                         weights ? " (weights must be float32 or float64)" : "");
    char why[192];
    if (!(weights ? npy_weight_dtype : npy_dtype)(h.descr, &out->dtype, &out->swap, why,
                                                  sizeof why))
        return cli_error(CLI_EXIT_FAIL, "%s: %s", name, why);
    out->count = h.count;
    out->count_overflow = h.count_overflow;
    out->data_offset = hstart + hlen;
    out->fortran = h.fortran;
    out->ndim = h.ndim;
    out->first_dim = h.first_dim;
    out->last_dim = h.last_dim;
    out->version = major;
    snprintf(out->descr, sizeof out->descr, "%s", h.descr);
    return CLI_EXIT_OK;
}

int cli_npy_parse_header(const char *name, const unsigned char *buf, size_t len,
                         cli_npy_info *out)
{
    return parse_header(name, buf, len, 0, out);
}

int cli_npy_parse_weights_header(const char *name, const unsigned char *buf, size_t len,
                                 cli_npy_info *out)
{
    return parse_header(name, buf, len, 1, out);
}

int cli_npy_check(const cli_read_options *opt, const char *name, const cli_npy_info *h,
                  uint64_t have)
{
    if (h->fortran && h->ndim > 1 && opt->channels > 1)
        /* Channels must be the fastest-varying axis; Fortran order interleaves them otherwise.
         * Without channels the order does not matter to a histogram. */
        return cli_error(CLI_EXIT_FAIL,
                         "%s: a Fortran-order .npy cannot be read with --channels (save it in C "
                         "order)",
                         name);
    if (h->fortran && h->ndim > 1 && opt->weighted)
        /* Weights go to pixels in C order; the file holds them in column order. */
        return cli_error(CLI_EXIT_FAIL,
                         "%s: a Fortran-order .npy cannot be read with --weights (save it in C "
                         "order)",
                         name);
    if (opt->have_type && opt->type != h->dtype)
        return cli_error(CLI_EXIT_USAGE,
                         "--type %s conflicts with the dtype '%s' (%s) in the header of %s; leave "
                         "out --type, or add --raw to read the file as raw bytes",
                         gpuhist_dtype_name(opt->type), h->descr, gpuhist_dtype_name(h->dtype),
                         name);
    size_t size = gpuhist_dtype_size(h->dtype);
    if (h->count_overflow || h->count > have / size)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: truncated .npy: the header's shape needs %s%llu bytes of data, the "
                         "file has %llu",
                         name, h->count_overflow ? "more than " : "",
                         (unsigned long long)(h->count_overflow ? UINT64_MAX : h->count * size),
                         (unsigned long long)have);
    return CLI_EXIT_OK;
}

int cli_size_error(const char *name, uint64_t bytes, gpuhist_dtype dtype, uint32_t channels)
{
    size_t size = gpuhist_dtype_size(dtype);
    if (channels <= 1)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: size %llu bytes is not a multiple of the sample size %zu (%s; "
                         "choose the type with -t)",
                         name, (unsigned long long)bytes, size, gpuhist_dtype_name(dtype));
    return cli_error(CLI_EXIT_FAIL,
                     "%s: size %llu bytes is not a multiple of the pixel size %zu (%u channels "
                     "of %s)",
                     name, (unsigned long long)bytes, size * channels, channels,
                     gpuhist_dtype_name(dtype));
}

static int read_npy(const cli_read_options *opt, cli_input *in, char *buf, size_t len)
{
    const char *name = in->name;
    cli_npy_info h;
    int rc = cli_npy_parse_header(name, (const unsigned char *)buf, len, &h);
    if (rc || (rc = cli_npy_check(opt, name, &h, (uint64_t)(len - h.data_offset))))
        return rc;
    size_t size = gpuhist_dtype_size(h.dtype);
    /* Data after the array (np.save called repeatedly on one file) is ignored, as np.load does. */
    in->data = buf + h.data_offset;
    in->samples = h.count;
    in->dtype = h.dtype;
    if (h.swap)
        swap_bytes(in->data, in->samples, size);
    return CLI_EXIT_OK;
}

/* ---- text ------------------------------------------------------------------------------------ */

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

/* ---- the input ------------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

void cli_input_free(cli_input *in)
{
    free(in->block);
    in->block = NULL;
    in->data = NULL;
}

int cli_read_input(const cli_read_options *opt, cli_input *in)
{
    memset(in, 0, sizeof *in);
    snprintf(in->name, sizeof in->name, "%s", is_stdin(opt->path) ? "standard input" : opt->path);
    double t0 = cli_now();
    char *buf;
    size_t len;
    int rc = cli_slurp(opt->path, "the input", opt->progress, &buf, &len);
    if (rc)
        return rc;
    in->bytes_read = (double)len;

    cli_input_format fmt = opt->format;
    if (fmt == CLI_IN_AUTO) {
        if (len >= 6 && memcmp(buf, npy_magic, 6) == 0)
            fmt = CLI_IN_NPY;
        else if (!is_stdin(opt->path) && ends_with(opt->path, ".npy"))
            fmt = CLI_IN_NPY; /* named .npy but no magic: say so rather than read junk */
        else
            fmt = CLI_IN_RAW;
    }
    in->format = fmt;

    if (fmt == CLI_IN_NPY) {
        rc = read_npy(opt, in, buf, len);
        if (rc) {
            free(buf);
            return rc;
        }
        in->block = buf;
    } else if (fmt == CLI_IN_TEXT) {
        in->dtype = opt->have_type ? opt->type : GPUHIST_F64;
        void *vals;
        rc = cli_parse_text(in->name, buf, len, in->dtype, opt->progress, CLI_EXIT_FAIL, &vals,
                            &in->samples);
        free(buf);
        if (rc)
            return rc;
        in->block = in->data = vals;
    } else {
        in->dtype = opt->have_type ? opt->type : GPUHIST_U8;
        size_t size = gpuhist_dtype_size(in->dtype);
        size_t pixel = size * (opt->channels ? opt->channels : 1);
        if (len % pixel) {
            free(buf);
            return cli_size_error(in->name, len, in->dtype, opt->channels);
        }
        in->block = in->data = buf;
        in->samples = len / size;
        if (!cli_host_little_endian())
            swap_bytes(in->data, in->samples, size);
    }
    in->seconds = cli_now() - t0;
    return CLI_EXIT_OK;
}
