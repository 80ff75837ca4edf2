/*
 * image_pnm.c - PBM, PGM, PPM and PAM (P1 ... P7) through libnetpbm: decoding a file held in
 * memory, encoding an image.
 *
 * Mechanism: the buffer is opened as a FILE (fmemopen) and read with pnm_readpaminit /
 * pnm_readpamrow, which handle every variant (plain and raw, any maxval, PAM tuple types).
 * libnetpbm reports errors by pm_error, which would end the process: a jump buffer
 * (pm_setjmpbuf) brings it back here, and a message function keeps the text. Both are global
 * state of the library, so one mutex serialises every use of it: PNM files decode one at a time
 * even with several decoder threads.
 * Samples keep their stored values (not rescaled to the maxval): u8 when maxval <= 255, else
 * u16; PBM reads as 0 (black) and 1 (white). The PAM depth (1 to 4) is the channel count.
 * Limits: the page limits of cli_image_alloc are checked from the header before any row is
 * allocated; only the first image of a file is read (netpbm streams of several images are
 * refused rather than partly read).
 */
#include "image_codec.h"

#include <string.h>

#if GPUHIST_HAVE_NETPBM
#include <netpbm/pam.h>
#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>

#define PAM_SIZE_TO_TUPLE_TYPE \
    (offsetof(struct pam, tuple_type) + sizeof(((struct pam *)0)->tuple_type))

static pthread_mutex_t netpbm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t netpbm_once = PTHREAD_ONCE_INIT;
static char netpbm_msg[512]; /* under netpbm_lock */

static void keep_message(const char *msg)
{
    snprintf(netpbm_msg, sizeof netpbm_msg, "%s", msg);
    size_t n = strlen(netpbm_msg);
    while (n && (netpbm_msg[n - 1] == '\n' || netpbm_msg[n - 1] == ' '))
        netpbm_msg[--n] = 0;
}

static void quiet_message(const char *msg)
{
    (void)msg;
}

static void netpbm_init(void)
{
    pm_init("gpuhist", 0);
    pm_setusererrormsgfn(keep_message);
    pm_setusermessagefn(quiet_message);
}

int cli_decode_pnm(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen)
{
    pthread_once(&netpbm_once, netpbm_init);
    cli_image *img = calloc(1, sizeof *img);
    if (!img) {
        snprintf(err, errlen, "%s: out of memory", name);
        return CLI_EXIT_FAIL;
    }
    FILE *f = fmemopen((void *)buf, len, "r");
    if (!f) {
        free(img);
        snprintf(err, errlen, "%s: PNM: cannot open the buffer", name);
        return CLI_EXIT_FAIL;
    }
    pthread_mutex_lock(&netpbm_lock);
    jmp_buf jump;
    jmp_buf *saved;
    struct pam pam;
    tuple *volatile row = NULL;
    volatile int rc = CLI_EXIT_FAIL;
    netpbm_msg[0] = 0;
    pm_setjmpbufsave(&jump, &saved);
    if (setjmp(jump) != 0) {
        snprintf(err, errlen, "%s: PNM: %s", name, netpbm_msg[0] ? netpbm_msg : "read error");
        goto done;
    }
    /* the members up to tuple_type (what PAM_STRUCT_SIZE(tuple_type) says, without its null
     * pointer arithmetic); the later ones (comments, allocation depth) stay unused */
    memset(&pam, 0, sizeof pam);
    pnm_readpaminit(f, &pam, PAM_SIZE_TO_TUPLE_TYPE);
    if (pam.depth < 1 || pam.depth > GPUHIST_MAX_CHANNELS) {
        snprintf(err, errlen, "%s: PNM: depth %u; 1 to %d channels are supported", name,
                 pam.depth, GPUHIST_MAX_CHANNELS);
        goto done;
    }
    if (pam.maxval < 1 || pam.maxval > 65535) {
        snprintf(err, errlen, "%s: PNM: maxval %lu; 1 to 65535 are supported", name,
                 (unsigned long)pam.maxval);
        goto done;
    }
    gpuhist_dtype dtype = pam.maxval <= 255 ? GPUHIST_U8 : GPUHIST_U16;
    if (cli_image_alloc(img, name, (uint64_t)pam.width, (uint64_t)pam.height, pam.depth, dtype,
                        err, errlen))
        goto done;
    row = pnm_allocpamrow(&pam);
    for (uint64_t y = 0; y < img->height; ++y) {
        pnm_readpamrow(&pam, row);
        unsigned char *dst = img->pixels + y * img->row_bytes;
        for (uint64_t x = 0; x < img->width; ++x)
            for (uint32_t c = 0; c < img->channels; ++c) {
                sample v = row[x][c];
                if (dtype == GPUHIST_U8)
                    dst[x * img->channels + c] = (unsigned char)v;
                else {
                    uint16_t v16 = (uint16_t)v;
                    memcpy(dst + (x * img->channels + c) * 2, &v16, 2);
                }
            }
    }
    /* Another image after this one (a netpbm stream) would be left unread: refuse it. */
    int eof = 0;
    pnm_nextimage(f, &eof);
    if (!eof) {
        snprintf(err, errlen,
                 "%s: PNM: the file holds more than one image (give them as separate files)",
                 name);
        goto done;
    }
    rc = CLI_EXIT_OK;
done:
    if (row)
        pnm_freepamrow(row);
    pm_setjmpbuf(saved);
    pthread_mutex_unlock(&netpbm_lock);
    fclose(f);
    if (rc) {
        cli_image_free(img);
        free(img);
        return CLI_EXIT_FAIL;
    }
    out->page = img;
    out->count = 1;
    return CLI_EXIT_OK;
}

int cli_encode_pnm(FILE *f, const cli_image *img, int pam_format, char *err, size_t errlen)
{
    pthread_once(&netpbm_once, netpbm_init);
    if (img->dtype != GPUHIST_U8 && img->dtype != GPUHIST_U16) {
        snprintf(err, errlen, "PNM holds 8- or 16-bit unsigned samples, not %s",
                 gpuhist_dtype_name(img->dtype));
        return CLI_EXIT_FAIL;
    }
    if (!pam_format && img->channels != 1 && img->channels != 3) {
        snprintf(err, errlen, "PGM/PPM hold grey or RGB; %u channels need .pam", img->channels);
        return CLI_EXIT_FAIL;
    }
    static const char *types[5] = {"", "GRAYSCALE", "GRAYSCALE_ALPHA", "RGB", "RGB_ALPHA"};
    pthread_mutex_lock(&netpbm_lock);
    jmp_buf jump;
    jmp_buf *saved;
    struct pam pam;
    tuple *volatile row = NULL;
    volatile int rc = CLI_EXIT_FAIL;
    netpbm_msg[0] = 0;
    pm_setjmpbufsave(&jump, &saved);
    if (setjmp(jump) != 0) {
        snprintf(err, errlen, "PNM: %s", netpbm_msg[0] ? netpbm_msg : "write error");
        goto done;
    }
    memset(&pam, 0, sizeof pam);
    pam.size = sizeof pam;
    pam.len = PAM_SIZE_TO_TUPLE_TYPE;
    pam.file = f;
    pam.width = (int)img->width;
    pam.height = (int)img->height;
    pam.depth = img->channels;
    pam.maxval = img->dtype == GPUHIST_U8 ? 255 : 65535;
    pam.plainformat = 0;
    pam.format = pam_format ? PAM_FORMAT : img->channels == 1 ? RPGM_FORMAT : RPPM_FORMAT;
    snprintf(pam.tuple_type, sizeof pam.tuple_type, "%s", types[img->channels]);
    pnm_writepaminit(&pam);
    row = pnm_allocpamrow(&pam);
    for (uint64_t y = 0; y < img->height; ++y) {
        const unsigned char *src = img->pixels + y * img->row_bytes;
        for (uint64_t x = 0; x < img->width; ++x)
            for (uint32_t c = 0; c < img->channels; ++c) {
                if (img->dtype == GPUHIST_U8)
                    row[x][c] = src[x * img->channels + c];
                else {
                    uint16_t v;
                    memcpy(&v, src + (x * img->channels + c) * 2, 2);
                    row[x][c] = v;
                }
            }
        pnm_writepamrow(&pam, row);
    }
    rc = CLI_EXIT_OK;
done:
    if (row)
        pnm_freepamrow(row);
    pm_setjmpbuf(saved);
    pthread_mutex_unlock(&netpbm_lock);
    return rc;
}

#else

int cli_decode_pnm(const char *name, const unsigned char *buf, size_t len, cli_image_pages *out,
                   char *err, size_t errlen)
{
    (void)buf;
    (void)len;
    (void)out;
    snprintf(err, errlen, "%s: PNM support was not built in (install libnetpbm-dev and rebuild)",
             name);
    return CLI_EXIT_FAIL;
}

int cli_encode_pnm(FILE *f, const cli_image *img, int pam, char *err, size_t errlen)
{
    (void)f;
    (void)img;
    (void)pam;
    snprintf(err, errlen, "PNM support was not built in (install libnetpbm-dev and rebuild)");
    return CLI_EXIT_FAIL;
}

#endif
