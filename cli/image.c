/*
 * image.c - image files as the command's input: the table of image formats (name, whether its
 * library was built in, the Debian package that brings it, its signature test, its decoder),
 * recognising a file by its signature and decoding a file held in memory with its format's
 * library (image_png.c, image_jpeg.c, image_tiff.c, image_pnm.c). The set of files of one run
 * and the threads that decode them: image_set.c; regions of interest: image_roi.c.
 *
 * Limits: a format whose library was not found at build time is still recognised, and refused
 * with a message naming the package to install.
 */#include "image.h"

#include <stdlib.h>
#include <string.h>

/* ---- the formats ------------------------------------------------------------------------------ */

static int is_png(const unsigned char *b, size_t n)
{
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    return n >= 8 && memcmp(b, png, 8) == 0;
}

static int is_jpeg(const unsigned char *b, size_t n)
{
    return n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff;
}

/* classic TIFF (42) and BigTIFF (43), either byte order */
static int is_tiff(const unsigned char *b, size_t n)
{
    return n >= 4 && ((b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                      (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43)));
}

static int is_pnm(const unsigned char *b, size_t n)
{
    return n >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7' &&
           (b[2] == ' ' || b[2] == '\t' || b[2] == '\n' || b[2] == '\r');
}

/* One row per format, in the order signatures are tried and --version lists them: a new format
 * is its decoder (image_<format>.c, declared in image_codec.h), its CLI_IMG_ value, its
 * signature test above and a row here. */
static const struct image_format {
    cli_image_format id;
    const char *name;      /* in messages */
    const char *lower;     /* in --version */
    int built;             /* its library was found at build time (cmake/images.cmake) */
    const char *package;   /* the Debian package that brings the library */
    int (*signature)(const unsigned char *b, size_t n);
    int (*decode)(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                  char *err, size_t errlen);
} formats[] = {
    {CLI_IMG_PNG, "PNG", "png", GPUHIST_HAVE_PNG, "libpng-dev", is_png, cli_decode_png},
    {CLI_IMG_JPEG, "JPEG", "jpeg", GPUHIST_HAVE_JPEG, "libjpeg-dev", is_jpeg, cli_decode_jpeg},
    {CLI_IMG_TIFF, "TIFF", "tiff", GPUHIST_HAVE_TIFF, "libtiff-dev", is_tiff, cli_decode_tiff},
    {CLI_IMG_PNM, "PNM", "pnm", GPUHIST_HAVE_NETPBM, "libnetpbm-dev", is_pnm, cli_decode_pnm},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const struct image_format *format_of(cli_image_format f)
{
    for (size_t i = 0; i < NFORMATS; ++i)
        if (formats[i].id == f)
            return &formats[i];
    return NULL;
}

cli_image_format cli_image_sniff(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < NFORMATS; ++i)
        if (formats[i].signature(b, n))
            return formats[i].id;
    return CLI_IMG_NONE;
}

const char *cli_image_format_name(cli_image_format f)
{
    const struct image_format *d = format_of(f);
    return d ? d->name : "image";
}

int cli_image_format_built(cli_image_format f)
{
    const struct image_format *d = format_of(f);
    return d ? d->built : 0;
}

const char *cli_image_formats_built(void)
{
    static char buf[64];
    buf[0] = 0;
    for (size_t i = 0; i < NFORMATS; ++i)
        if (formats[i].built) {
            if (buf[0])
                strcat(buf, ", ");
            strcat(buf, formats[i].lower);
        }
    return buf[0] ? buf : "none";
}


int cli_decode_image(const char *name, const unsigned char *buf, size_t len,
                     cli_image_pages *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cli_image_format f = cli_image_sniff(buf, len);
    if (f == CLI_IMG_NONE) {
        char names[128] = "";
        for (size_t i = 0; i < NFORMATS; ++i)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i == 0 ? "" : i + 1 < NFORMATS ? ", " : " or ", formats[i].name);
        snprintf(err, errlen, "%s: not an image (no %s signature)", name, names);
        return CLI_EXIT_FAIL;
    }
    const struct image_format *d = format_of(f);
    if (!d->built) {
        snprintf(err, errlen, "%s: %s support was not built in (install %s and rebuild)", name,
                 d->name, d->package);
        return CLI_EXIT_FAIL;
    }
    int rc = d->decode(name, buf, len, out, err, errlen);
    if (rc)
        cli_image_pages_free(out);
    else
        for (size_t i = 0; i < out->count; ++i)
            out->page[i].format = f;
    return rc;
}
