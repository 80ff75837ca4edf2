/*
 * image_codec.h - what the image decoders and encoders share (not installed): the decoded page
 * (a plain interleaved pixel array in host byte order: `channels` samples per pixel - grey,
 * grey+alpha, RGB, RGBA - rows contiguous), its allocation with the size limits, and one
 * decoder / encoder per library (image_png.c, image_jpeg.c, image_tiff.c, image_pnm.c), each
 * built only when its library was found (GPUHIST_HAVE_*). The command's use of images (the set
 * of files, regions, equalization) is image.h, above this.
 * Error convention: decoders run on worker threads, so they never print; they write the message
 * (without "gpuhist: ") into `err` and return CLI_EXIT_FAIL.
 */
#ifndef GPUHIST_CLI_IMAGE_CODEC_H
#define GPUHIST_CLI_IMAGE_CODEC_H

#include "cli.h"

#ifndef GPUHIST_HAVE_PNG
#define GPUHIST_HAVE_PNG 0
#endif
#ifndef GPUHIST_HAVE_JPEG
#define GPUHIST_HAVE_JPEG 0
#endif
#ifndef GPUHIST_HAVE_TIFF
#define GPUHIST_HAVE_TIFF 0
#endif
#ifndef GPUHIST_HAVE_NETPBM
#define GPUHIST_HAVE_NETPBM 0
#endif

/* The most pixels one decoded page may declare (refused before any allocation). */
#define CLI_IMAGE_MAX_PIXELS (UINT64_C(1) << 32)
/* The most bytes one decoded page may take: 0 (the command) = the memory available; the fuzz
 * harness sets a small bound so that a header declaring a big page is refused there too. */
extern uint64_t cli_image_max_bytes;

typedef enum cli_image_format {
    CLI_IMG_NONE = 0,
    CLI_IMG_PNG,
    CLI_IMG_JPEG,
    CLI_IMG_TIFF,
    CLI_IMG_PNM /* PBM, PGM, PPM, PAM (P1 ... P7) */
} cli_image_format;

/* One decoded image (one page of a multi-page TIFF). */
typedef struct cli_image {
    char name[600];          /* the file, with "[N]" for page N (from 0) of a multi-page TIFF */
    gpuhist_dtype dtype;     /* u8, u16 (also i8, i16, u32, i32, f32, f64 from TIFF) */
    uint32_t channels;       /* 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    uint64_t width, height;
    unsigned char *pixels;   /* malloc'd; rows contiguous, row_bytes each */
    size_t row_bytes;
    cli_image_format format;
} cli_image;

/* Allocate img->pixels for width x height pixels of `channels` samples of `dtype`, refusing
 * empty images, more than CLI_IMAGE_MAX_PIXELS pixels and more than the memory available, with
 * the message in err. @return CLI_EXIT_*. */
int cli_image_alloc(cli_image *img, const char *name, uint64_t width, uint64_t height,
                    uint32_t channels, gpuhist_dtype dtype, char *err, size_t errlen);
void cli_image_free(cli_image *img);

/* The pages a decoder returns (one, or all the pages of a TIFF). */
typedef struct cli_image_pages {
    cli_image *page;
    size_t count;
} cli_image_pages;
void cli_image_pages_free(cli_image_pages *p);

/* The decoders: `buf` holds the whole file `name`. @return CLI_EXIT_* (message in err). */
int cli_decode_png(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen);
int cli_decode_jpeg(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen);
int cli_decode_tiff(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                    char *err, size_t errlen);
int cli_decode_pnm(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen);
/* The encoders (equalize.c writes through them): `img` to the open file `f` (PNG and PNM write
 * u8/u16; TIFF also the other sample types). @return CLI_EXIT_* (message in err). */
int cli_encode_png(FILE *f, const cli_image *img, char *err, size_t errlen);
int cli_encode_tiff(FILE *f, const cli_image *img, char *err, size_t errlen);
int cli_encode_pnm(FILE *f, const cli_image *img, int pam, char *err, size_t errlen);

#endif
