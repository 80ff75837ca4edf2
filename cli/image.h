/*
 * image.h - image files as gpuhist input (not installed): recognising them by their signature,
 * decoding them with the formats' own libraries (libpng, libjpeg-turbo, libtiff, libnetpbm) on
 * a small pool of threads, regions of interest, histogram equalization and writing images.
 *
 * A decoded page is a plain interleaved pixel array in host byte order: `channels` samples per
 * pixel (grey, grey+alpha, RGB, RGBA), rows contiguous. Each format that was not found at build
 * time is still recognised, and refused with a message naming the package to install.
 * Error convention of the decoders: they run on worker threads, so they never print; they
 * write the message (without "gpuhist: ") into `err` and return CLI_EXIT_FAIL, and the reader
 * prints it when the file's turn comes.
 */
#ifndef GPUHIST_CLI_IMAGE_H
#define GPUHIST_CLI_IMAGE_H

#include "cli.h"
#include "image_codec.h"

/* The format whose signature starts `buf` (the first `len` bytes of a file), CLI_IMG_NONE
 * when none does. */
cli_image_format cli_image_sniff(const unsigned char *buf, size_t len);
const char *cli_image_format_name(cli_image_format f);
/* 1 when that format's library was built in. */
int cli_image_format_built(cli_image_format f);
/* The formats built in, for --version: "png, jpeg, tiff, pnm" ("none" when none). */
const char *cli_image_formats_built(void);
/* 1 when `path` is a directory, or a regular file that starts with an image signature. */
int cli_image_path_is_image(const char *path);

/* Decode a whole file held in memory, whatever its format (the signature tells). */
int cli_decode_image(const char *name, const unsigned char *buf, size_t len,
                     cli_image_pages *out, char *err, size_t errlen);

/* ---- the set of images of one run (image.c) ------------------------------------------------ */

/* Files and directories (their regular files, sorted by name, not recursively) decoded in order
 * by up to `threads` worker threads, a few files ahead of the reader. */
typedef struct cli_image_set cli_image_set;

/* Expand the paths (a directory's entries; "-" is standard input, read whole) and start the
 * decoders. Every file must carry an image signature. @return CLI_EXIT_* (message printed). */
int cli_image_set_open(const char *const *paths, size_t npaths, int threads,
                       cli_image_set **out);
/* The next image in order (the pages of a file one after the other): *img points into the set
 * and stays valid until the next call. Every image must have the dtype and channels of the
 * first, else it fails naming the file. *img == NULL at the end. @return CLI_EXIT_* (message
 * printed; the set is then finished). */
int cli_image_set_next(cli_image_set *s, const cli_image **img);
/* Start again from the first image (a second pass); a set of one file keeps its pages and is
 * not decoded again. @return CLI_EXIT_*. */
int cli_image_set_rewind(cli_image_set *s);
size_t cli_image_set_files(const cli_image_set *s);
size_t cli_image_set_pages(const cli_image_set *s);  /* pages handed out by the last pass */
double cli_image_set_bytes(const cli_image_set *s);  /* bytes of the files read */
double cli_image_set_decode_seconds(const cli_image_set *s); /* decoding time, all threads */
int cli_image_set_threads(const cli_image_set *s);
void cli_image_set_close(cli_image_set *s);

/* --roi x,y,w,h */
typedef struct cli_roi {
    int given;
    uint64_t x, y, w, h;
} cli_roi;
/* Parse "x,y,w,h" (w, h >= 1). @return CLI_EXIT_* (message printed, naming `shown`). */
int cli_roi_parse(const char *shown, const char *arg, cli_roi *roi);
/* The samples of `img` (its region of interest when roi->given: rows, row_length and
 * row_stride into the decoded pixels, no copy). A region that does not lie inside the image
 * fails naming the file. @return CLI_EXIT_* (message printed). */
int cli_image_samples(const cli_image *img, const cli_roi *roi, uint32_t active,
                      gpuhist_samples *s);

/* ---- equalize.c ----------------------------------------------------------------------------- */

/* OpenCV's equalizeHist lookup table over `levels` values (256 or 65536) from the counts of one
 * channel: see equalize.c for the rule. */
void cli_equalize_lut(const uint64_t *counts, uint32_t levels, uint32_t *lut);
/* The format --equalize writes for `path` (by its extension): CLI_IMG_PNG, CLI_IMG_TIFF or
 * CLI_IMG_PNM; CLI_IMG_NONE when the extension is not one of those (.png .tif .tiff .pgm .ppm
 * .pnm .pam). */
cli_image_format cli_equalize_format(const char *path);
/* Check --equalize PATH against the image before anything is counted. @return CLI_EXIT_*
 * (message printed). */
int cli_equalize_check(const char *path, const cli_image *img);
/* Write the equalized image (its region of interest when given) to the open output `out`:
 * each histogrammed channel (counts[k] for result channel k = input channel chan[k]) that is not
 * alpha goes through its own lookup table, the other channels are copied. The output is
 * committed only when complete. @return CLI_EXIT_* (message printed). */
int cli_equalize_write(cli_output *out, const cli_image *img, const cli_roi *roi,
                       const uint64_t *counts, uint32_t bins, const uint32_t *chan,
                       uint32_t nchan);

#endif
