/*
 * equalize.c - histogram equalization (--equalize OUT): OpenCV's equalizeHist rule applied to
 * each colour channel through a lookup table, and the result written as an image.
 *
 * The rule (OpenCV's imgproc equalizeHist, followed operation by operation so that 8-bit grey
 * output equals cv2.equalizeHist byte for byte): with h the channel's counts over L levels
 * (256 for 8-bit samples, 65536 for 16-bit), i0 the lowest level that occurs and N the pixels:
 * when h[i0] == N (one value only) every pixel keeps that value; else
 *   scale = (float)(L - 1) / (float)(N - h[i0])           (single precision, as OpenCV's)
 *   lut[i0] = 0, lut[i] = saturate(round_half_even((float)(cdf[i] - cdf[i0]) * scale))
 * where cdf is the running total of h. Colour images: each of R, G, B (the histogrammed
 * channels) gets its own table; alpha (the second channel of grey+alpha, the fourth of RGBA)
 * and channels left out by --channels are copied unchanged.
 * Output: the image, or its region of interest with --roi, in the input's sample type, as PNG,
 * TIFF or PGM/PPM/PAM by the extension of OUT, written to a temporary file and renamed only
 * when complete (output.c).
 * Limits: 8- and 16-bit unsigned samples; the float rounding follows OpenCV's also for images
 * above 2^24 pixels, where (float) of a count rounds.
 */
#include "image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cli_equalize_lut(const uint64_t *h, uint32_t levels, uint32_t *lut)
{
    uint32_t i0 = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < levels; ++i)
        total += h[i];
    while (i0 < levels && h[i0] == 0)
        ++i0;
    if (i0 == levels || h[i0] == total) {
        for (uint32_t i = 0; i < levels; ++i)
            lut[i] = i0 == levels ? i : i0;
        return;
    }
    const float scale = (float)(levels - 1) / (float)(total - h[i0]);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < i0; ++i)
        lut[i] = 0; /* no pixel has these values */
    lut[i0] = 0;
    for (uint32_t i = i0 + 1; i < levels; ++i) {
        sum += h[i];
        const float v = (float)sum * scale;
        long r = lrintf(v); /* OpenCV's cvRound: to nearest, ties to even */
        lut[i] = r < 0 ? 0 : r > (long)(levels - 1) ? levels - 1 : (uint32_t)r;
    }
}

static const char *extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

cli_image_format cli_equalize_format(const char *path)
{
    const char *e = extension(path);
    if (strcasecmp(e, "png") == 0)
        return CLI_IMG_PNG;
    if (strcasecmp(e, "tif") == 0 || strcasecmp(e, "tiff") == 0)
        return CLI_IMG_TIFF;
    if (strcasecmp(e, "pgm") == 0 || strcasecmp(e, "ppm") == 0 || strcasecmp(e, "pnm") == 0 ||
        strcasecmp(e, "pam") == 0)
        return CLI_IMG_PNM;
    return CLI_IMG_NONE;
}

int cli_equalize_check(const char *path, const cli_image *img)
{
    cli_image_format f = cli_equalize_format(path);
    const char *e = extension(path);
    if (f == CLI_IMG_NONE)
        return cli_error(CLI_EXIT_USAGE,
                         "--equalize %s: unknown image extension '%s' (.png, .tif, .tiff, .pgm, "
                         ".ppm, .pnm, .pam; JPEG would not keep the equalized values)",
                         path, e);
    if (!cli_image_format_built(f))
        return cli_error(CLI_EXIT_FAIL,
                         "--equalize %s: %s support was not built in (install %s and rebuild)",
                         path, cli_image_format_name(f),
                         f == CLI_IMG_PNG ? "libpng-dev" : f == CLI_IMG_TIFF ? "libtiff-dev"
                                                                              : "libnetpbm-dev");
    if (img->dtype != GPUHIST_U8 && img->dtype != GPUHIST_U16)
        return cli_error(CLI_EXIT_USAGE,
                         "--equalize: %s holds %s samples; equalization needs 8- or 16-bit "
                         "unsigned samples",
                         img->name, gpuhist_dtype_name(img->dtype));
    if (f == CLI_IMG_PNM && strcasecmp(e, "pam") != 0) {
        int want = strcasecmp(e, "pgm") == 0 ? 1 : strcasecmp(e, "ppm") == 0 ? 3 : 0;
        if ((want && (int)img->channels != want) ||
            (!want && img->channels != 1 && img->channels != 3))
            return cli_error(CLI_EXIT_USAGE,
                             "--equalize %s: .%s cannot hold the %u channel(s) of %s (use .pam "
                             "or .png)",
                             path, e, img->channels, img->name);
    }
    return CLI_EXIT_OK;
}

int cli_equalize_write(cli_output *out, const cli_image *img, const cli_roi *roi,
                       const uint64_t *counts, uint32_t bins, const uint32_t *chan,
                       uint32_t nchan)
{
    const uint64_t x0 = roi && roi->given ? roi->x : 0, y0 = roi && roi->given ? roi->y : 0;
    const uint64_t w = roi && roi->given ? roi->w : img->width;
    const uint64_t h = roi && roi->given ? roi->h : img->height;
    const uint32_t C = img->channels;
    const uint32_t levels = img->dtype == GPUHIST_U8 ? 256 : 65536;
    if (bins != levels) {
        cli_output_abort(out);
        return cli_error(CLI_EXIT_FAIL, "--equalize: %u bins, not one per value", bins);
    }
    /* one table per channel; NULL = copied */
    uint32_t *lut[GPUHIST_MAX_CHANNELS] = {NULL, NULL, NULL, NULL};
    const uint32_t alpha = C == 2 ? 1 : C == 4 ? 3 : UINT32_MAX;
    int rc = CLI_EXIT_OK;
    for (uint32_t k = 0; k < nchan && rc == CLI_EXIT_OK; ++k) {
        if (chan[k] >= C || chan[k] == alpha)
            continue;
        if (!(lut[chan[k]] = malloc(levels * sizeof(uint32_t))))
            rc = cli_error(CLI_EXIT_FAIL, "out of memory for the equalization table");
        else
            cli_equalize_lut(counts + (size_t)k * bins, levels, lut[chan[k]]);
    }
    cli_image eq;
    char err[768];
    if (rc == CLI_EXIT_OK &&
        cli_image_alloc(&eq, img->name, w, h, C, img->dtype, err, sizeof err) != CLI_EXIT_OK)
        rc = cli_error(CLI_EXIT_FAIL, "%s", err);
    if (rc == CLI_EXIT_OK) {
        const size_t ss = gpuhist_dtype_size(img->dtype);
        for (uint64_t y = 0; y < h; ++y) {
            const unsigned char *src = img->pixels + (y0 + y) * img->row_bytes + x0 * C * ss;
            unsigned char *dst = eq.pixels + y * eq.row_bytes;
            if (ss == 1) {
                for (uint64_t i = 0; i < w * C; ++i) {
                    const uint32_t *t = lut[i % C];
                    dst[i] = t ? (unsigned char)t[src[i]] : src[i];
                }
            } else {
                for (uint64_t i = 0; i < w * C; ++i) {
                    uint16_t v;
                    memcpy(&v, src + 2 * i, 2);
                    const uint32_t *t = lut[i % C];
                    if (t)
                        v = (uint16_t)t[v];
                    memcpy(dst + 2 * i, &v, 2);
                }
            }
        }
        const cli_image_format f = cli_equalize_format(out->path);
        if (f == CLI_IMG_PNG)
            rc = cli_encode_png(out->f, &eq, err, sizeof err);
        else if (f == CLI_IMG_TIFF)
            rc = cli_encode_tiff(out->f, &eq, err, sizeof err);
        else
            rc = cli_encode_pnm(out->f, &eq, strcasecmp(extension(out->path), "pam") == 0, err,
                                sizeof err);
        if (rc)
            rc = cli_error(CLI_EXIT_FAIL, "--equalize %s: %s", out->path, err);
        cli_image_free(&eq);
    }
    for (uint32_t c = 0; c < GPUHIST_MAX_CHANNELS; ++c)
        free(lut[c]);
    if (rc) {
        cli_output_abort(out);
        return rc;
    }
    return cli_output_commit(out);
}
