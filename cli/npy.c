/*
 * npy.c - the .npy format's header (versions 1, 2 and 3): the magic, the header's length, the
 * Python dict literal ({'descr': ..., 'fortran_order': ..., 'shape': (...)}) read by a small
 * scanner that accepts what numpy.save writes and any other valid literal, the dtype string
 * mapped to a gpuhist dtype (bool as u8, either byte order: *swap says the bytes must be
 * reversed on this host; '<V2' refused with the way round), and the checks of a header against
 * the command's options and the bytes the file holds.
 *
 * Limits: structured, object, string, datetime, void and complex dtypes and other float sizes
 * are refused, each by name; the product of the shape must fit in 64 bits. The data is never read here: readers.c (whole inputs),
 * source.c (streams) and run_nd.c (N-D points) read it from the offset given.
 */
#include "cli.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

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
