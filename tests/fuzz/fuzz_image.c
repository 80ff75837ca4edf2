/*
 * fuzz_image.c - the command's image decoders (cli/image*.c: libpng, libjpeg-turbo, libtiff,
 * libnetpbm behind one entry point).
 *
 * The input is a whole file. cli_decode_image() must fail cleanly (a message naming the file,
 * nothing leaked, nothing read outside the buffer) or return pages whose layout is consistent:
 * 1 to 4 channels, a row of width * channels samples, no more than the page limits allow. For
 * each small 8/16-bit page, the equalization table of its first channel is monotonic and maps
 * into the levels, and the page written as PNG and decoded again gives the same samples.
 * Decoded pages are bounded to 64 MiB here (cli_image_max_bytes), so a header that declares a
 * big page is refused instead of allocated.
 * LeakSanitizer ignores allocations made inside libnetpbm: on some malformed PAM headers the
 * library's error exit (pm_error, brought back by longjmp) drops a string it had just
 * duplicated, a byte or so per bad file that no caller can free.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"
#include "image.h"

#include <stdio.h>

static void check_page(const cli_image *p)
{
    FUZZ_CHECK(p->pixels != NULL);
    FUZZ_CHECK(p->channels >= 1 && p->channels <= GPUHIST_MAX_CHANNELS);
    FUZZ_CHECK(p->width >= 1 && p->height >= 1);
    FUZZ_CHECK(p->row_bytes == p->width * p->channels * gpuhist_dtype_size(p->dtype));
    FUZZ_CHECK(p->row_bytes * p->height <= cli_image_max_bytes);
    if (p->dtype != GPUHIST_U8 && p->dtype != GPUHIST_U16)
        return;
    if (p->width * p->height > 4096)
        return;
    /* the equalization table of channel 0 from a plain count */
    const uint32_t levels = p->dtype == GPUHIST_U8 ? 256 : 65536;
    uint64_t *h = calloc(levels, sizeof *h);
    uint32_t *lut = malloc(levels * sizeof *lut);
    FUZZ_CHECK(h && lut);
    for (uint64_t y = 0; y < p->height; ++y)
        for (uint64_t x = 0; x < p->width; ++x) {
            const unsigned char *s = p->pixels + y * p->row_bytes;
            uint32_t v;
            if (levels == 256)
                v = s[x * p->channels];
            else {
                uint16_t v16;
                memcpy(&v16, s + x * p->channels * 2, 2);
                v = v16;
            }
            ++h[v];
        }
    cli_equalize_lut(h, levels, lut);
    for (uint32_t i = 1; i < levels; ++i)
        if (h[i])
            for (uint32_t j = i; j-- > 0;)
                if (h[j]) {
                    FUZZ_CHECK(lut[j] <= lut[i]);
                    break;
                }
    for (uint32_t i = 0; i < levels; ++i)
        FUZZ_CHECK(lut[i] < levels);
    free(h);
    free(lut);
#if GPUHIST_HAVE_PNG
    /* PNG round trip */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    FUZZ_CHECK(f != NULL);
    char err[768];
    FUZZ_CHECK(cli_encode_png(f, p, err, sizeof err) == CLI_EXIT_OK);
    FUZZ_CHECK(fclose(f) == 0);
    cli_image_pages back;
    FUZZ_CHECK(cli_decode_image("round trip", (const unsigned char *)buf, len, &back, err,
                                sizeof err) == CLI_EXIT_OK);
    FUZZ_CHECK(back.count == 1 && back.page[0].width == p->width &&
               back.page[0].height == p->height && back.page[0].channels == p->channels &&
               back.page[0].dtype == p->dtype);
    FUZZ_CHECK(memcmp(back.page[0].pixels, p->pixels, p->row_bytes * p->height) == 0);
    cli_image_pages_free(&back);
    free(buf);
#endif
}

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnetpbm.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_image_max_bytes = 64u << 20;
    cli_image_pages pages;
    char err[768] = "";
    int rc = cli_decode_image("fuzz", data, size, &pages, err, sizeof err);
    if (rc != CLI_EXIT_OK) {
        FUZZ_CHECK(pages.count == 0 && pages.page == NULL);
        FUZZ_CHECK(strncmp(err, "fuzz", 4) == 0);
        return 0;
    }
    FUZZ_CHECK(pages.count >= 1);
    for (size_t i = 0; i < pages.count; ++i)
        check_page(&pages.page[i]);
    cli_image_pages_free(&pages);
    return 0;
}
