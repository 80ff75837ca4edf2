/*
 * image_tiff.c - TIFF through libtiff (4.5 or later): decoding a file held in memory, every
 * page, and encoding an image.
 *
 * Mechanism: TIFFClientOpenExt over the buffer, with an error handler per handle (so the
 * decoder threads share nothing) that keeps libtiff's first message. Each directory (page) is
 * read into its own image: stripped files scanline by scanline, tiled files tile by tile,
 * samples of separate planes interleaved into pixels. Samples keep their stored values and
 * type: unsigned and signed integers of 8, 16, 32 and 64 bits, IEEE floats of 32 and 64 bits,
 * in host byte order (libtiff swaps big-endian files). Photometric min-is-black, min-is-white
 * (values as stored, not inverted) and RGB are read; JPEG-compressed YCbCr is converted to RGB
 * by libtiff. Extra samples (alpha) are channels like the others.
 * Limits: 1 to 4 samples per pixel; palette, CMYK, Lab and YCbCr without JPEG compression, and
 * bit depths other than 8/16/32/64 (1-bit bilevel, 4-bit, 12-bit) are refused with a message;
 * the page limits of cli_image_alloc are checked before each page is allocated.
 */
#include "image_codec.h"

#include <string.h>

#if GPUHIST_HAVE_TIFF
#include <stdarg.h>
#include <stdlib.h>
#include <tiffio.h>

typedef struct tiff_mem {
    const unsigned char *buf;
    size_t len;
    size_t pos;
    char *err;
    size_t errlen;
    const char *name;
    int have_err;
} tiff_mem;

static tmsize_t mem_read(thandle_t h, void *dst, tmsize_t n)
{
    tiff_mem *m = (tiff_mem *)h;
    if (n < 0)
        return -1;
    size_t left = m->pos < m->len ? m->len - m->pos : 0;
    size_t k = (size_t)n < left ? (size_t)n : left;
    memcpy(dst, m->buf + m->pos, k);
    m->pos += k;
    return (tmsize_t)k;
}

static tmsize_t mem_write(thandle_t h, void *src, tmsize_t n)
{
    (void)h;
    (void)src;
    (void)n;
    return -1;
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence)
{
    tiff_mem *m = (tiff_mem *)h;
    uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
    uint64_t to = base + off; /* toff_t is unsigned: a negative offset arrives wrapped */
    if (to > m->len)
        return (toff_t)-1;
    m->pos = (size_t)to;
    return to;
}

static int mem_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t mem_size(thandle_t h)
{
    return ((tiff_mem *)h)->len;
}

static int mem_map(thandle_t h, void **base, toff_t *size)
{
    (void)h;
    (void)base;
    (void)size;
    return 0;
}

static void mem_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)module;
    tiff_mem *m = user;
    if (!m->have_err) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        /* libtiff often starts with the file name, which the message already has */
        size_t n = strlen(m->name);
        const char *text = strncmp(msg, m->name, n) == 0 && msg[n] == ':' ? msg + n + 1 : msg;
        text += strspn(text, " ");
        snprintf(m->err, m->errlen, "%s: TIFF: %s", m->name, text);
        m->have_err = 1;
    }
    return 1;
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif; /* unknown tags and the like: the samples are unaffected */
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

static int fail(tiff_mem *m, const char *what)
{
    if (!m->have_err) {
        snprintf(m->err, m->errlen, "%s: TIFF: %s", m->name, what);
        m->have_err = 1;
    }
    return CLI_EXIT_FAIL;
}

static int tiff_dtype(uint16_t bits, uint16_t format, gpuhist_dtype *t)
{
    if (format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_VOID) {
        switch (bits) {
        case 8: *t = GPUHIST_U8; return 1;
        case 16: *t = GPUHIST_U16; return 1;
        case 32: *t = GPUHIST_U32; return 1;
        case 64: *t = GPUHIST_U64; return 1;
        }
    } else if (format == SAMPLEFORMAT_INT) {
        switch (bits) {
        case 8: *t = GPUHIST_I8; return 1;
        case 16: *t = GPUHIST_I16; return 1;
        case 32: *t = GPUHIST_I32; return 1;
        case 64: *t = GPUHIST_I64; return 1;
        }
    } else if (format == SAMPLEFORMAT_IEEEFP) {
        switch (bits) {
        case 32: *t = GPUHIST_F32; return 1;
        case 64: *t = GPUHIST_F64; return 1;
        }
    }
    return 0;
}

/* Copy `n` pixels of one plane (`plane` of `spp`, or all samples when contig) into the image
 * row at `dst`. */
static void scatter(unsigned char *dst, const unsigned char *src, uint64_t n, size_t ss,
                    uint32_t spp, int separate, uint32_t plane)
{
    if (!separate) {
        memcpy(dst, src, (size_t)n * ss * spp);
        return;
    }
    for (uint64_t i = 0; i < n; ++i)
        memcpy(dst + (i * spp + plane) * ss, src + i * ss, ss);
}

static int read_page(TIFF *tif, tiff_mem *m, cli_image *img)
{
    uint32_t w = 0, h = 0;
    uint16_t bits = 1, spp = 1, format = SAMPLEFORMAT_UINT, photo = PHOTOMETRIC_MINISBLACK,
             planar = PLANARCONFIG_CONTIG, compression = COMPRESSION_NONE;
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photo))
        photo = spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    char msg[256];
    if (photo == PHOTOMETRIC_YCBCR && compression == COMPRESSION_JPEG) {
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    } else if (photo != PHOTOMETRIC_MINISBLACK && photo != PHOTOMETRIC_MINISWHITE &&
               photo != PHOTOMETRIC_RGB) {
        snprintf(msg, sizeof msg,
                 "photometric interpretation %u is not supported (grey, RGB; no palette, CMYK, "
                 "Lab or YCbCr)",
                 photo);
        return fail(m, msg);
    }
    gpuhist_dtype dtype;
    if (!tiff_dtype(bits, format, &dtype)) {
        snprintf(msg, sizeof msg,
                 "%u-bit samples (sample format %u) are not supported (8, 16, 32 or 64-bit "
                 "integers, 32 or 64-bit floats)",
                 bits, format);
        return fail(m, msg);
    }
    if (spp < 1 || spp > GPUHIST_MAX_CHANNELS) {
        snprintf(msg, sizeof msg, "%u samples per pixel; 1 to %d are supported", spp,
                 GPUHIST_MAX_CHANNELS);
        return fail(m, msg);
    }
    if (cli_image_alloc(img, m->name, w, h, spp, dtype, m->err, m->errlen)) {
        m->have_err = 1;
        return CLI_EXIT_FAIL;
    }
    const size_t ss = gpuhist_dtype_size(dtype);
    const int separate = planar == PLANARCONFIG_SEPARATE && spp > 1;
    const uint32_t planes = separate ? spp : 1;
    const uint64_t src_pixel = separate ? ss : ss * spp;
    if (TIFFIsTiled(tif)) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
        tmsize_t tsize = TIFFTileSize(tif);
        if (tw == 0 || th == 0 || tsize <= 0 || (uint64_t)tsize < (uint64_t)tw * th * src_pixel)
            return fail(m, "bad tile size");
        /* a tile far larger than the page it tiles is a broken header, not an image */
        if ((uint64_t)tsize > (uint64_t)img->row_bytes * h + (UINT64_C(1) << 24)) {
            snprintf(msg, sizeof msg, "tiles of %u x %u pixels for a page of %u x %u", tw, th, w,
                     h);
            return fail(m, msg);
        }
        unsigned char *tile = malloc((size_t)tsize);
        if (!tile)
            return fail(m, "out of memory for a tile");
        for (uint32_t p = 0; p < planes; ++p)
            for (uint32_t y = 0; y < h; y += th)
                for (uint32_t x = 0; x < w; x += tw) {
                    if (TIFFReadTile(tif, tile, x, y, 0, (uint16_t)p) < 0) {
                        free(tile);
                        return fail(m, "cannot read a tile");
                    }
                    uint32_t cw = w - x < tw ? w - x : tw, ch = h - y < th ? h - y : th;
                    for (uint32_t r = 0; r < ch; ++r)
                        scatter(img->pixels + (size_t)(y + r) * img->row_bytes +
                                    (size_t)x * ss * spp,
                                tile + (size_t)r * tw * src_pixel, cw, ss, spp, separate, p);
                }
        free(tile);
    } else {
        tmsize_t lsize = TIFFScanlineSize(tif);
        if (lsize <= 0 || (uint64_t)lsize < (uint64_t)w * src_pixel)
            return fail(m, "bad scanline size");
        unsigned char *line = malloc((size_t)lsize);
        if (!line)
            return fail(m, "out of memory for a scanline");
        for (uint32_t p = 0; p < planes; ++p)
            for (uint32_t y = 0; y < h; ++y) {
                if (TIFFReadScanline(tif, line, y, (uint16_t)p) < 0) {
                    free(line);
                    return fail(m, "cannot read a scanline");
                }
                scatter(img->pixels + (size_t)y * img->row_bytes, line, w, ss, spp, separate,
                        p);
            }
        free(line);
    }
    return CLI_EXIT_OK;
}

static TIFF *open_mem(tiff_mem *m, const char *mode)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, m);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, m);
    /* no single allocation of libtiff's (a strip, a tile) above 2 GiB, whatever a header says
     * (below cli_image_max_bytes when that is set) */
    tmsize_t most = (tmsize_t)1 << 31;
    if (cli_image_max_bytes && cli_image_max_bytes < (uint64_t)most)
        most = (tmsize_t)cli_image_max_bytes;
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, most);
    TIFF *tif = TIFFClientOpenExt(m->name, mode, (thandle_t)m, mem_read, mem_write, mem_seek,
                                  mem_close, mem_size, mem_map, mem_unmap, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}

int cli_decode_tiff(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen)
{
    tiff_mem m = {buf, len, 0, err, errlen, name, 0};
    TIFF *tif = open_mem(&m, "rm");
    if (!tif) {
        fail(&m, "cannot open");
        return CLI_EXIT_FAIL;
    }
    size_t cap = 0;
    int rc = CLI_EXIT_OK;
    do {
        if (out->count == cap) {
            size_t nc = cap ? cap * 2 : 1;
            cli_image *np = realloc(out->page, nc * sizeof *np);
            if (!np) {
                rc = fail(&m, "out of memory");
                break;
            }
            out->page = np;
            cap = nc;
        }
        cli_image *img = &out->page[out->count];
        memset(img, 0, sizeof *img);
        rc = read_page(tif, &m, img);
        ++out->count; /* freed by the caller also on failure */
        if (rc)
            break;
    } while (TIFFReadDirectory(tif));
    /* TIFFReadDirectory returns 0 both at the end and on a broken directory: the handler tells */
    if (rc == CLI_EXIT_OK && m.have_err)
        rc = CLI_EXIT_FAIL;
    TIFFClose(tif);
    if (rc == CLI_EXIT_OK && out->count > 1)
        for (size_t i = 0; i < out->count; ++i)
            snprintf(out->page[i].name, sizeof out->page[i].name, "%s[%zu]", name, i);
    return rc;
}

/* Writing goes to the open FILE of an output (a temporary file renamed when complete). */
typedef struct tiff_file {
    FILE *f;
    char *err;
    size_t errlen;
    int have_err;
    const char *name;
} tiff_file;

static tmsize_t file_read(thandle_t h, void *dst, tmsize_t n)
{
    return (tmsize_t)fread(dst, 1, (size_t)n, ((tiff_file *)h)->f);
}

static tmsize_t file_write(thandle_t h, void *src, tmsize_t n)
{
    return (tmsize_t)fwrite(src, 1, (size_t)n, ((tiff_file *)h)->f);
}

static toff_t file_seek(thandle_t h, toff_t off, int whence)
{
    FILE *f = ((tiff_file *)h)->f;
    if (fseeko(f, (off_t)off, whence) != 0)
        return (toff_t)-1;
    return (toff_t)ftello(f);
}

static toff_t file_size(thandle_t h)
{
    FILE *f = ((tiff_file *)h)->f;
    off_t here = ftello(f);
    fseeko(f, 0, SEEK_END);
    off_t end = ftello(f);
    fseeko(f, here, SEEK_SET);
    return (toff_t)end;
}

static int on_write_error(TIFF *tif, void *user, const char *module, const char *fmt,
                          va_list ap)
{
    (void)tif;
    (void)module;
    tiff_file *t = user;
    if (!t->have_err) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        snprintf(t->err, t->errlen, "TIFF: %s", msg);
        t->have_err = 1;
    }
    return 1;
}

int cli_encode_tiff(FILE *f, const cli_image *img, char *err, size_t errlen)
{
    tiff_file t = {f, err, errlen, 0, "output"};
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        snprintf(err, errlen, "TIFF: out of memory");
        return CLI_EXIT_FAIL;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_write_error, &t);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, &t);
    TIFF *tif = TIFFClientOpenExt(t.name, "w", (thandle_t)&t, file_read, file_write, file_seek,
                                  mem_close, file_size, mem_map, mem_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) {
        if (!t.have_err)
            snprintf(err, errlen, "TIFF: cannot start writing");
        return CLI_EXIT_FAIL;
    }
    gpuhist_dtype d = img->dtype;
    uint16_t format = d == GPUHIST_F32 || d == GPUHIST_F64 ? SAMPLEFORMAT_IEEEFP
                      : d == GPUHIST_I8 || d == GPUHIST_I16 || d == GPUHIST_I32 || d == GPUHIST_I64
                          ? SAMPLEFORMAT_INT
                          : SAMPLEFORMAT_UINT;
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)img->width);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)img->height);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * gpuhist_dtype_size(d)));
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)img->channels);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                 img->channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
    if (img->channels == 2 || img->channels == 4) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    int rc = CLI_EXIT_OK;
    for (uint32_t y = 0; y < img->height && rc == CLI_EXIT_OK; ++y)
        if (TIFFWriteScanline(tif, img->pixels + (size_t)y * img->row_bytes, y, 0) < 0)
            rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_OK && !TIFFWriteDirectory(tif))
        rc = CLI_EXIT_FAIL;
    TIFFClose(tif);
    if (rc == CLI_EXIT_OK && t.have_err)
        rc = CLI_EXIT_FAIL;
    if (rc && !t.have_err)
        snprintf(err, errlen, "TIFF: write error");
    return rc;
}

#else

int cli_decode_tiff(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen)
{
    (void)buf;
    (void)len;
    (void)out;
    snprintf(err, errlen, "%s: TIFF support was not built in (install libtiff-dev and rebuild)",
             name);
    return CLI_EXIT_FAIL;
}

int cli_encode_tiff(FILE *f, const cli_image *img, char *err, size_t errlen)
{
    (void)f;
    (void)img;
    snprintf(err, errlen, "TIFF support was not built in (install libtiff-dev and rebuild)");
    return CLI_EXIT_FAIL;
}

#endif
