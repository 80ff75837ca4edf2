/*
 * weights.c - the weights of the gpuhist command (--weights FILE): one per pixel, in pixel
 * order, read in step with the data.
 *
 * Input: a .npy of float32 or float64 (recognised by its magic; any shape in C order, either
 * byte order), or raw little-endian samples of --weights-type (f32, f64). A regular file is read
 * with pread() at the offset of each piece's first pixel; a pipe or standard input is read in
 * order, its first bytes telling .npy from raw.
 * Streamed (cli_weights_feed): each piece of data is fed with its weights in pieces of at most
 * a chunk of weights (memory: one chunk, whatever the input size; a weight may be 8 bytes for
 * a 1-byte pixel, so a data window is cut finer). Read whole (cli_weights_read_all) when the
 * data is read whole.
 * Share (cli_weights_share, an MPI rank's range of pixels): the weights of that range only.
 * Counts: the number of weights must equal the number of pixels. When both are known before
 * reading (regular files) a difference fails at once; else when the weights run out the rest of
 * the data is only counted, and when the data runs out the rest of a weights pipe is counted,
 * so the message gives both numbers ("W: 999 weights for 1000 pixels").
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

static int count_error(const cli_weights *w, uint64_t weights, uint64_t pixels)
{
    return cli_error(CLI_EXIT_FAIL, "%s: %llu weights for %llu pixels", w->name,
                     (unsigned long long)weights, (unsigned long long)pixels);
}

static int weight_size_error(const cli_weights *w, uint64_t bytes)
{
    return cli_error(CLI_EXIT_FAIL,
                     "%s: size %llu bytes is not a multiple of the weight size %zu (%s; choose "
                     "the type with --weights-type)",
                     w->name, (unsigned long long)bytes, w->size, gpuhist_dtype_name(w->dtype));
}

static int truncated_error(const cli_weights *w, uint64_t have)
{
    return cli_error(CLI_EXIT_FAIL,
                     "%s: truncated .npy: the header's shape needs %llu bytes of data, the "
                     "input has %llu",
                     w->name, (unsigned long long)(w->count * w->size), (unsigned long long)have);
}

static void swap_weights(unsigned char *p, uint64_t n, size_t size)
{
    for (uint64_t i = 0; i < n; ++i, p += size)
        for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* pread() exactly `len` bytes at `at`. @return CLI_EXIT_*. */
static int pread_all(const cli_weights *w, unsigned char *dst, uint64_t at, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(w->fd, dst + done, len - done, (off_t)(at + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        if (n == 0)
            return cli_error(CLI_EXIT_FAIL,
                             "%s: the file became shorter while being read (at byte %llu)",
                             w->name, (unsigned long long)(at + done));
        done += (size_t)n;
    }
    return CLI_EXIT_OK;
}

/* The header of a .npy whose first `got` bytes are at `first`; the rest of the header is read
 * from the file (pread at 0) or the pipe (in order). */
static int open_npy(cli_weights *w, int have_type, gpuhist_dtype type, const unsigned char *first,
                    size_t got, uint64_t file_size)
{
    size_t hsize = cli_npy_header_size(first, got);
    if (hsize < got)
        hsize = got; /* no magic, an unknown version or a short file: the parser says which */
    if (w->is_regular && hsize > file_size)
        hsize = (size_t)file_size;
    unsigned char *h = malloc(hsize ? hsize : 1);
    if (!h)
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the .npy header", w->name);
    int rc = CLI_EXIT_OK;
    size_t have = got;
    memcpy(h, first, got);
    if (w->is_regular) {
        rc = pread_all(w, h, 0, hsize);
        have = hsize;
    } else if (hsize > got) {
        int eof = 0;
        ssize_t more = cli_read_full(w->fd, h + got, hsize - got, &eof);
        if (more < 0)
            rc = cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        else
            have += (size_t)more;
    }
    cli_npy_info info;
    if (rc == CLI_EXIT_OK)
        rc = cli_npy_parse_weights_header(w->name, h, have, &info);
    free(h);
    if (rc)
        return rc;
    if (info.fortran && info.ndim > 1)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: a Fortran-order .npy of weights does not hold them in pixel order "
                         "(save it in C order)",
                         w->name);
    if (have_type && type != info.dtype)
        return cli_error(CLI_EXIT_USAGE,
                         "--weights-type %s conflicts with the dtype '%s' (%s) in the header of "
                         "%s; leave out --weights-type",
                         gpuhist_dtype_name(type), info.descr, gpuhist_dtype_name(info.dtype),
                         w->name);
    w->is_npy = 1;
    w->dtype = info.dtype;
    w->size = gpuhist_dtype_size(info.dtype);
    w->swap = info.swap;
    w->data_offset = info.data_offset;
    w->count = info.count;
    w->count_known = 1;
    if (info.count_overflow || info.count > UINT64_MAX / w->size)
        return cli_error(CLI_EXIT_FAIL, "%s: the .npy shape holds more weights than a file can",
                         w->name);
    if (w->is_regular && info.count > (file_size - info.data_offset) / w->size)
        return truncated_error(w, file_size - info.data_offset);
    return CLI_EXIT_OK;
}

int cli_weights_open(const char *path, int have_type, gpuhist_dtype type, cli_weights *w)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->expect = UINT64_MAX;
    int from_stdin = !path || strcmp(path, "-") == 0;
    snprintf(w->name, sizeof w->name, "%s", from_stdin ? "standard input" : path);
    if (from_stdin) {
        w->fd = 0;
    } else {
        w->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (w->fd < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: cannot open: %s", w->name, strerror(errno));
        w->owns_fd = 1;
    }
    struct stat sb;
    if (fstat(w->fd, &sb) != 0)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot stat: %s", w->name, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return cli_error(CLI_EXIT_FAIL, "%s: is a directory", w->name);
    w->is_regular = S_ISREG(sb.st_mode);
    w->dtype = have_type ? type : GPUHIST_F64;
    w->size = gpuhist_dtype_size(w->dtype);
    w->swap = !cli_host_little_endian();

    /* The first bytes: the .npy magic and the header's length. */
    unsigned char first[12];
    size_t got = 0;
    if (w->is_regular) {
        ssize_t n = sb.st_size ? pread(w->fd, first, sizeof first, 0) : 0;
        if (n < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        got = (size_t)n;
    } else {
        int eof = 0;
        ssize_t n = cli_read_full(w->fd, first, sizeof first, &eof);
        if (n < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        got = (size_t)n;
    }
    size_t n = from_stdin ? 0 : strlen(path);
    int named_npy = n >= 4 && strcmp(path + n - 4, ".npy") == 0;
    if ((got >= 6 && memcmp(first, npy_magic, 6) == 0) || (w->is_regular && named_npy))
        return open_npy(w, have_type, type, first, got, (uint64_t)sb.st_size);

    /* Raw samples of --weights-type. */
    if (w->is_regular) {
        uint64_t size = (uint64_t)sb.st_size;
        if (size % w->size)
            return weight_size_error(w, size);
        w->count = size / w->size;
        w->count_known = 1;
    } else {
        memcpy(w->prefix, first, got); /* weights: handed out first */
        w->nprefix = got;
    }
    return CLI_EXIT_OK;
}

int cli_weights_expect(cli_weights *w, uint64_t pixels)
{
    w->expect = pixels;
    if (w->count_known && w->count != pixels)
        return count_error(w, w->count, pixels);
    return CLI_EXIT_OK;
}

/* Read up to `k` of the next weights into dst. *got < k only at the end of the weights.
 * @return CLI_EXIT_*. */
static int take(cli_weights *w, unsigned char *dst, uint64_t k, uint64_t *got)
{
    *got = 0;
    if (w->count_known && k > w->count - w->next)
        k = w->count - w->next;
    if (k == 0)
        return CLI_EXIT_OK;
    const size_t bytes = (size_t)(k * w->size);
    if (w->is_regular) {
        int rc = pread_all(w, dst, w->data_offset + w->next * w->size, bytes);
        if (rc)
            return rc;
        *got = k;
    } else {
        size_t have = w->nprefix < bytes ? w->nprefix : bytes;
        memcpy(dst, w->prefix, have);
        memmove(w->prefix, w->prefix + have, w->nprefix - have);
        w->nprefix -= have;
        int eof = 0;
        ssize_t n = have < bytes ? cli_read_full(w->fd, dst + have, bytes - have, &eof) : 0;
        if (n < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        have += (size_t)n;
        const uint64_t before = w->next * w->size;
        if (have % w->size)
            return weight_size_error(w, before + have);
        if (w->count_known && have < bytes)
            return truncated_error(w, before + have);
        *got = have / w->size;
    }
    if (w->swap)
        swap_weights(dst, *got, w->size);
    w->next += *got;
    return CLI_EXIT_OK;
}

int cli_weights_feed(cli_weights *w, gpuhist_stream *st, const void *data, uint64_t pixels,
                     size_t pixel_bytes, const char *data_name)
{
    const unsigned char *p = data;
    if (!w->buf && pixels && !w->exhausted) {
        size_t chunk = cli_chunk_bytes();
        w->cap = chunk / w->size;
        if (!(w->buf = malloc(chunk)))
            return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the weights", w->name);
    }
    while (pixels) {
        if (w->exhausted) { /* only counted, for the message */
            w->pixels += pixels;
            return CLI_EXIT_OK;
        }
        uint64_t k = pixels < w->cap ? pixels : w->cap, got;
        int rc = take(w, w->buf, k, &got);
        if (rc)
            return rc;
        if (got && gpuhist_stream_feed_weighted(st, p, w->buf, got) != GPUHIST_OK)
            return cli_error(CLI_EXIT_FAIL, "%s: %s", data_name, gpuhist_stream_error(st));
        w->pixels += got;
        p += got * pixel_bytes;
        pixels -= got;
        if (got < k) {
            w->exhausted = 1;
            if (w->expect != UINT64_MAX)
                return count_error(w, w->next, w->expect);
        }
    }
    return CLI_EXIT_OK;
}

int cli_weights_read(cli_weights *w, void *dst, uint64_t k)
{
    uint64_t got = 0;
    int rc = take(w, dst, k, &got);
    w->pixels += k;
    if (rc == CLI_EXIT_OK && got < k) {
        w->exhausted = 1;
        rc = count_error(w, w->next, w->expect != UINT64_MAX ? w->expect : w->pixels);
    }
    return rc;
}

int cli_weights_end(cli_weights *w)
{
    if (w->exhausted)
        return count_error(w, w->next, w->pixels);
    if (w->count_known)
        return w->count == w->next ? CLI_EXIT_OK : count_error(w, w->count, w->pixels);
    /* A raw pipe: count what is left. */
    uint64_t bytes = w->nprefix;
    unsigned char sink[65536];
    for (int eof = 0; !eof;) {
        ssize_t n = cli_read_full(w->fd, sink, sizeof sink, &eof);
        if (n < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", w->name, strerror(errno));
        bytes += (uint64_t)n;
    }
    if (bytes % w->size)
        return weight_size_error(w, w->next * w->size + bytes);
    if (bytes)
        return count_error(w, w->next + bytes / w->size, w->pixels);
    return CLI_EXIT_OK;
}

int cli_weights_read_all(cli_weights *w, uint64_t pixels, void **out)
{
    *out = NULL;
    int rc = cli_weights_expect(w, pixels);
    if (rc)
        return rc;
    if (pixels > (uint64_t)SIZE_MAX / w->size)
        return cli_error(CLI_EXIT_FAIL, "%s: %llu weights are too many for this machine", w->name,
                         (unsigned long long)pixels);
    unsigned char *buf = malloc(pixels ? (size_t)(pixels * w->size) : 1);
    if (!buf) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, (double)pixels * (double)w->size);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for %llu weights (%s)", w->name,
                         (unsigned long long)pixels, sz);
    }
    uint64_t got = 0;
    while (got < pixels) { /* in chunks: a read() or pread() may stop at 2 GiB */
        uint64_t k = pixels - got, n;
        if (k > ((uint64_t)1 << 30) / w->size)
            k = ((uint64_t)1 << 30) / w->size;
        if ((rc = take(w, buf + got * w->size, k, &n)))
            break;
        got += n;
        if (n < k)
            break;
    }
    if (rc == CLI_EXIT_OK && got < pixels)
        rc = count_error(w, got, pixels);
    w->pixels = pixels;
    if (rc == CLI_EXIT_OK)
        rc = cli_weights_end(w);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return CLI_EXIT_OK;
}

void cli_weights_share(cli_weights *w, uint64_t first, uint64_t pixels)
{
    /* a regular file whose count was checked against the whole data: the window moves */
    w->data_offset += first * w->size;
    w->count = pixels;
    w->expect = pixels;
    w->next = 0;
}

void cli_weights_close(cli_weights *w)
{
    if (w->fd >= 0 && w->owns_fd)
        close(w->fd);
    w->fd = -1;
    free(w->buf);
    w->buf = NULL;
}
