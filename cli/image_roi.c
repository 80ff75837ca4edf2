/*
 * image_roi.c - regions of interest (--roi X,Y,W,H): the option's value checked, and an image's
 * region (or the whole image) as the samples of one gpuhist_histogram call (rows of W pixels,
 * the image's row pitch as their stride, the first `active` channels histogrammed).
 */
#include "image.h"

#include <stdlib.h>
#include <string.h>

int cli_roi_parse(const char *shown, const char *arg, cli_roi *roi)
{
    uint64_t v[4];
    const char *p = arg;
    for (int i = 0; i < 4; ++i) {
        size_t n = strcspn(p, ",");
        char tok[32];
        if (n == 0 || n >= sizeof tok || (i < 3 && p[n] != ',') || (i == 3 && p[n]))
            return cli_error(CLI_EXIT_USAGE, "%s: expected x,y,w,h (4 whole numbers), got '%s'",
                             shown, arg);
        memcpy(tok, p, n);
        tok[n] = 0;
        if (!cli_parse_u64(tok, &v[i]))
            return cli_error(CLI_EXIT_USAGE, "%s %s: '%s' is not a whole number", shown, arg,
                             tok);
        p += n + (p[n] == ',');
    }
    if (v[2] == 0 || v[3] == 0)
        return cli_error(CLI_EXIT_USAGE, "%s %s: the width and height must be at least 1", shown,
                         arg);
    roi->given = 1;
    roi->x = v[0];
    roi->y = v[1];
    roi->w = v[2];
    roi->h = v[3];
    return CLI_EXIT_OK;
}

int cli_image_samples(const cli_image *img, const cli_roi *roi, uint32_t active,
                      gpuhist_samples *s)
{
    const size_t pixel = img->channels * gpuhist_dtype_size(img->dtype);
    if (roi && roi->given) {
        if (roi->x >= img->width || roi->w > img->width - roi->x || roi->y >= img->height ||
            roi->h > img->height - roi->y)
            return cli_error(CLI_EXIT_FAIL,
                             "%s: --roi %llu,%llu,%llu,%llu does not lie inside the image "
                             "(%llu x %llu pixels)",
                             img->name, (unsigned long long)roi->x, (unsigned long long)roi->y,
                             (unsigned long long)roi->w, (unsigned long long)roi->h,
                             (unsigned long long)img->width, (unsigned long long)img->height);
        *s = gpuhist_samples_1d(img->pixels + roi->y * img->row_bytes + roi->x * pixel,
                                img->dtype, 0);
        s->rows = roi->h;
        s->row_length = roi->w;
        s->row_stride = img->row_bytes;
    } else {
        *s = gpuhist_samples_1d(img->pixels, img->dtype, img->width * img->height);
    }
    s->channels = img->channels;
    s->active_channels = active;
    s->location = GPUHIST_MEMORY_HOST;
    return CLI_EXIT_OK;
}
