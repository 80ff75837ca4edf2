/*
 * image_jpeg.c - JPEG through libjpeg-turbo: decoding a file held in memory.
 *
 * Mechanism: jpeg_mem_src over the buffer, errors longjmp back here with libjpeg's message
 * (one decompress object per call, so the decoder threads share nothing). Grey JPEGs decode to
 * one channel, colour (YCbCr, RGB) to RGB with libjpeg's defaults (the accurate integer DCT,
 * fancy upsampling: what Pillow and OpenCV get from the same library). Any warning (premature
 * end of data, corrupt data skipped) fails the file: libjpeg would otherwise fill the missing
 * part with grey and carry on, and those pixels would be counted as if they were the image's.
 * Limits: 8-bit samples (the library's precision); CMYK/YCCK is refused; the page limits of
 * cli_image_alloc are checked from the header, before the decoder allocates anything.
 */
#include "image_codec.h"

#if GPUHIST_HAVE_JPEG
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char *err;
    size_t errlen;
    const char *name;
} jpeg_err;

static void on_error_exit(j_common_ptr cinfo)
{
    jpeg_err *e = (jpeg_err *)cinfo->err;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    snprintf(e->err, e->errlen, "%s: JPEG: %s", e->name, msg);
    longjmp(e->jump, 1);
}

/* Warnings (level -1) fail the file; trace messages (level >= 0) are ignored. */
static void on_emit(j_common_ptr cinfo, int level)
{
    if (level < 0)
        on_error_exit(cinfo);
}

int cli_decode_jpeg(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen)
{
    struct jpeg_decompress_struct cinfo;
    jpeg_err e;
    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_error_exit;
    e.pub.emit_message = on_emit;
    e.err = err;
    e.errlen = errlen;
    e.name = name;
    cli_image *volatile img = calloc(1, sizeof *img);
    if (!img) {
        snprintf(err, errlen, "%s: JPEG: out of memory", name);
        return CLI_EXIT_FAIL;
    }
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&cinfo);
        cli_image_free(img);
        free(img);
        return CLI_EXIT_FAIL;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, buf, (unsigned long)len);
    jpeg_read_header(&cinfo, TRUE);
    uint32_t channels;
    switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE:
        cinfo.out_color_space = JCS_GRAYSCALE;
        channels = 1;
        break;
    case JCS_YCbCr:
    case JCS_RGB:
        cinfo.out_color_space = JCS_RGB;
        channels = 3;
        break;
    default:
        snprintf(err, errlen, "%s: JPEG: CMYK/YCCK images are not supported (grey or colour)",
                 name);
        jpeg_destroy_decompress(&cinfo);
        free(img);
        return CLI_EXIT_FAIL;
    }
    if (cli_image_alloc(img, name, cinfo.image_width, cinfo.image_height, channels, GPUHIST_U8,
                        err, errlen)) {
        jpeg_destroy_decompress(&cinfo);
        free(img);
        return CLI_EXIT_FAIL;
    }
    jpeg_start_decompress(&cinfo);
    if ((uint32_t)cinfo.output_components != channels || cinfo.output_width != img->width ||
        cinfo.output_height != img->height) {
        snprintf(err, errlen, "%s: JPEG: unexpected output layout", name);
        longjmp(e.jump, 1);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = img->pixels + (size_t)cinfo.output_scanline * img->row_bytes;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    out->page = img;
    out->count = 1;
    return CLI_EXIT_OK;
}

#else

int cli_decode_jpeg(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen)
{
    (void)buf;
    (void)len;
    (void)out;
    snprintf(err, errlen, "%s: JPEG support was not built in (install libjpeg-dev and rebuild)",
             name);
    return CLI_EXIT_FAIL;
}

#endif
