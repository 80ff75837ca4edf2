/*
 * image_png.c - PNG through libpng: decoding a file held in memory, encoding an image.
 *
 * Mechanism: libpng reads from the buffer through a read callback; its errors longjmp back
 * here with the message kept for the caller (one png_struct per call, so the decoder threads
 * never share state). Samples come out as stored: grey, grey+alpha, RGB, RGBA at 8 or 16 bits
 * (16-bit samples swapped to host order); palette images are expanded to RGB (RGBA when they
 * carry transparency); grey of 1, 2 or 4 bits is unpacked to one byte per sample without
 * scaling (values 0 .. 2^depth - 1). No gamma or colour transformation is applied, and a tRNS
 * colour key of grey or RGB images is not turned into an alpha channel. Interlaced images are
 * deinterlaced by libpng. The stream must be complete up to IEND.
 * Limits: the page limits of cli_image_alloc (checked from the header, before any allocation).
 */
#include "image_codec.h"

#include <string.h>

#if GPUHIST_HAVE_PNG
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>

typedef struct png_io {
    const unsigned char *buf;
    size_t len, pos;
    char *err;
    size_t errlen;
    const char *name;
} png_io;

static void on_error(png_structp png, png_const_charp msg)
{
    png_io *io = png_get_error_ptr(png);
    snprintf(io->err, io->errlen, "%s: PNG: %s", io->name, msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png; /* ancillary-chunk warnings (profiles, text) do not change the samples */
    (void)msg;
}

static void on_read(png_structp png, png_bytep dst, png_size_t n)
{
    png_io *io = png_get_io_ptr(png);
    if (n > io->len - io->pos)
        png_error(png, "the file is truncated");
    memcpy(dst, io->buf + io->pos, n);
    io->pos += n;
}

int cli_decode_png(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen)
{
    png_io io = {buf, len, 0, err, errlen, name};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, on_error, on_warning);
    if (!png) {
        snprintf(err, errlen, "%s: PNG: out of memory", name);
        return CLI_EXIT_FAIL;
    }
    png_infop info = png_create_info_struct(png);
    /* volatile: changed between setjmp and a longjmp back */
    cli_image *volatile img = calloc(1, sizeof *img);
    png_bytep *volatile rows = NULL;
    if (!info || !img) {
        png_destroy_read_struct(&png, info ? &info : NULL, NULL);
        free(img);
        snprintf(err, errlen, "%s: PNG: out of memory", name);
        return CLI_EXIT_FAIL;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(rows);
        cli_image_free(img);
        free(img);
        return CLI_EXIT_FAIL;
    }
    png_set_read_fn(png, &io, on_read);
    /* our own limit (cli_image_alloc) replaces libpng's default of 1,000,000 per side */
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if (color == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
        if (png_get_valid(png, info, PNG_INFO_tRNS))
            png_set_tRNS_to_alpha(png);
        depth = 8;
    } else if (depth < 8) {
        png_set_packing(png); /* one byte per sample, values unscaled */
    }
    if (depth == 16) {
        const unsigned short one = 1;
        if (*(const unsigned char *)&one == 1)
            png_set_swap(png); /* PNG is big-endian */
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    uint32_t channels = png_get_channels(png, info);
    gpuhist_dtype dtype = depth == 16 ? GPUHIST_U16 : GPUHIST_U8;
    if (cli_image_alloc(img, name, w, h, channels, dtype, err, errlen)) {
        png_destroy_read_struct(&png, &info, NULL);
        free(img);
        return CLI_EXIT_FAIL;
    }
    if (png_get_rowbytes(png, info) != img->row_bytes)
        png_error(png, "unexpected row size after the transformations");
    rows = malloc(h * sizeof *rows);
    if (!rows)
        png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < h; ++y)
        rows[y] = img->pixels + (size_t)y * img->row_bytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    out->page = img;
    out->count = 1;
    return CLI_EXIT_OK;
}

typedef struct png_wio {
    FILE *f;
    char *err;
    size_t errlen;
} png_wio;

static void on_write_error(png_structp png, png_const_charp msg)
{
    png_wio *io = png_get_error_ptr(png);
    snprintf(io->err, io->errlen, "PNG: %s", msg);
    png_longjmp(png, 1);
}

int cli_encode_png(FILE *f, const cli_image *img, char *err, size_t errlen)
{
    if (img->dtype != GPUHIST_U8 && img->dtype != GPUHIST_U16) {
        snprintf(err, errlen, "PNG holds 8- or 16-bit unsigned samples, not %s",
                 gpuhist_dtype_name(img->dtype));
        return CLI_EXIT_FAIL;
    }
    if (img->width > 0x7fffffff || img->height > 0x7fffffff) {
        snprintf(err, errlen, "PNG: the image is too large for PNG");
        return CLI_EXIT_FAIL;
    }
    png_wio io = {f, err, errlen};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, on_write_error, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(err, errlen, "PNG: out of memory");
        return CLI_EXIT_FAIL;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return CLI_EXIT_FAIL;
    }
    static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height,
                 img->dtype == GPUHIST_U16 ? 16 : 8, types[img->channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (img->dtype == GPUHIST_U16) {
        const unsigned short one = 1;
        if (*(const unsigned char *)&one == 1)
            png_set_swap(png);
    }
    for (uint64_t y = 0; y < img->height; ++y)
        png_write_row(png, img->pixels + y * img->row_bytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return CLI_EXIT_OK;
}

#else

int cli_decode_png(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen)
{
    (void)buf;
    (void)len;
    (void)out;
    snprintf(err, errlen, "%s: PNG support was not built in (install libpng-dev and rebuild)",
             name);
    return CLI_EXIT_FAIL;
}

int cli_encode_png(FILE *f, const cli_image *img, char *err, size_t errlen)
{
    (void)f;
    (void)img;
    snprintf(err, errlen, "PNG support was not built in (install libpng-dev and rebuild)");
    return CLI_EXIT_FAIL;
}

#endif
