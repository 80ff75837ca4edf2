/*
 * image_codec.c - decoded pages: their allocation, refused before anything is allocated when the
 * page declares no pixels, more than CLI_IMAGE_MAX_PIXELS, or more bytes than the memory
 * available (or cli_image_max_bytes), and their release.
 */
#include "image_codec.h"

#include <stdlib.h>
#include <string.h>

uint64_t cli_image_max_bytes = 0;

int cli_image_alloc(cli_image *img, const char *name, uint64_t width, uint64_t height,
                    uint32_t channels, gpuhist_dtype dtype, char *err, size_t errlen)
{
    memset(img, 0, sizeof *img);
    snprintf(img->name, sizeof img->name, "%s", name);
    if (width == 0 || height == 0) {
        snprintf(err, errlen, "%s: the image has no pixels (%llu x %llu)", name,
                 (unsigned long long)width, (unsigned long long)height);
        return CLI_EXIT_FAIL;
    }
    if (channels < 1 || channels > GPUHIST_MAX_CHANNELS) {
        snprintf(err, errlen, "%s: %u samples per pixel; 1 to %d are supported", name, channels,
                 GPUHIST_MAX_CHANNELS);
        return CLI_EXIT_FAIL;
    }
    if (width > CLI_IMAGE_MAX_PIXELS || height > CLI_IMAGE_MAX_PIXELS / width) {
        snprintf(err, errlen,
                 "%s: the image declares %llu x %llu pixels, above the limit of %llu pixels "
                 "(2^32)",
                 name, (unsigned long long)width, (unsigned long long)height,
                 (unsigned long long)CLI_IMAGE_MAX_PIXELS);
        return CLI_EXIT_FAIL;
    }
    size_t pixel = channels * gpuhist_dtype_size(dtype);
    uint64_t bytes = width * height * pixel; /* <= 2^32 * 4 * 8: no overflow */
    uint64_t avail = gpuhist_host_memory_available();
    if (cli_image_max_bytes && (!avail || cli_image_max_bytes < avail))
        avail = cli_image_max_bytes;
    if ((avail && bytes > avail) || bytes > SIZE_MAX) {
        char a[32], b[32];
        cli_format_bytes(a, sizeof a, (double)bytes);
        cli_format_bytes(b, sizeof b, (double)avail);
        snprintf(err, errlen,
                 "%s: the image declares %llu x %llu pixels (%s decoded), more than the %s of "
                 "memory available",
                 name, (unsigned long long)width, (unsigned long long)height, a, b);
        return CLI_EXIT_FAIL;
    }
    img->pixels = malloc((size_t)bytes);
    if (!img->pixels) {
        snprintf(err, errlen, "%s: out of memory for %llu x %llu pixels", name,
                 (unsigned long long)width, (unsigned long long)height);
        return CLI_EXIT_FAIL;
    }
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->dtype = dtype;
    img->row_bytes = (size_t)(width * pixel);
    return CLI_EXIT_OK;
}

void cli_image_free(cli_image *img)
{
    free(img->pixels);
    img->pixels = NULL;
}

void cli_image_pages_free(cli_image_pages *p)
{
    for (size_t i = 0; i < p->count; ++i)
        cli_image_free(&p->page[i]);
    free(p->page);
    p->page = NULL;
    p->count = 0;
}
