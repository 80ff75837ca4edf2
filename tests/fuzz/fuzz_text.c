/*
 * fuzz_text.c - the text-number parser of the gpuhist command (--text input, -e @file edges).
 *
 * Input: one byte choosing the sample type and the failure status, then the text (not
 * NUL-terminated: the parser must stay within its length). When the text is accepted, the
 * number of values is at most the number of tokens it can hold, and the first values printed
 * back as text (exact formats) parse again to the same bits.
 */
#include "cli.h"
#include "fuzz_common.h"
#include "../unit/half_test.h"

#include <inttypes.h>
#include <math.h>

#define ROUND_TRIP 16

static int same_value(gpuhist_dtype dtype, const unsigned char *a, const unsigned char *b)
{
    if (dtype == GPUHIST_F32) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        return (isnan(x) && isnan(y)) || memcmp(&x, &y, 4) == 0;
    }
    if (dtype == GPUHIST_F64) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (isnan(x) && isnan(y)) || memcmp(&x, &y, 8) == 0;
    }
    if (dtype == GPUHIST_F16 || dtype == GPUHIST_BF16) {
        uint16_t x, y;
        memcpy(&x, a, 2);
        memcpy(&y, b, 2);
        const uint16_t exp = dtype == GPUHIST_F16 ? 0x7c00u : 0x7f80u;
        const int nx = (x & exp) == exp && (x & (uint16_t)~(exp | 0x8000u)) != 0;
        const int ny = (y & exp) == exp && (y & (uint16_t)~(exp | 0x8000u)) != 0;
        return (nx && ny) || x == y; /* NaN payloads are not kept */
    }
    return memcmp(a, b, gpuhist_dtype_size(dtype)) == 0;
}

/* Print value i as text that reads back exactly. */
static int print_value(char *buf, size_t cap, gpuhist_dtype dtype, const unsigned char *p)
{
    uint16_t u16;
    int16_t i16;
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    int64_t i64;
    float f32;
    double f64;
    switch (dtype) {
    case GPUHIST_U8: return snprintf(buf, cap, "%u", (unsigned)*p);
    case GPUHIST_I8: return snprintf(buf, cap, "%d", (int)(int8_t)*p);
    case GPUHIST_U16: memcpy(&u16, p, 2); return snprintf(buf, cap, "%u", (unsigned)u16);
    case GPUHIST_I16: memcpy(&i16, p, 2); return snprintf(buf, cap, "%d", (int)i16);
    case GPUHIST_U32: memcpy(&u32, p, 4); return snprintf(buf, cap, "%" PRIu32, u32);
    case GPUHIST_I32: memcpy(&i32, p, 4); return snprintf(buf, cap, "%" PRId32, i32);
    case GPUHIST_U64: memcpy(&u64, p, 8); return snprintf(buf, cap, "%" PRIu64, u64);
    case GPUHIST_I64: memcpy(&i64, p, 8); return snprintf(buf, cap, "%" PRId64, i64);
    case GPUHIST_F32: memcpy(&f32, p, 4); return snprintf(buf, cap, "%.9g", (double)f32);
    /* a half value is exact in double: its digits read back to the same bits */
    case GPUHIST_F16: memcpy(&u16, p, 2); return snprintf(buf, cap, "%.17g", test_f16_value(u16));
    case GPUHIST_BF16: memcpy(&u16, p, 2); return snprintf(buf, cap, "%.17g", test_bf16_value(u16));
    default: memcpy(&f64, p, 8); return snprintf(buf, cap, "%.17g", f64);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const gpuhist_dtype dtype = (gpuhist_dtype)(data[0] % GPUHIST_DTYPE_COUNT);
    const int fail_status = data[0] & 0x80 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    const char *text = (const char *)data + 1;
    const size_t len = size - 1;
    void *vals = NULL;
    uint64_t n = 0;
    int rc = cli_parse_text("fuzz.txt", text, len, dtype, 0, fail_status, &vals, &n);
    FUZZ_CHECK(rc == CLI_EXIT_OK || rc == fail_status || rc == CLI_EXIT_FAIL);
    if (rc != CLI_EXIT_OK)
        return 0;
    FUZZ_CHECK(vals != NULL);
    /* Each value takes a token of at least one byte and a separator between tokens. */
    FUZZ_CHECK(n <= (len + 1) / 2);

    const size_t size1 = gpuhist_dtype_size(dtype);
    char again[ROUND_TRIP * 40];
    size_t used = 0;
    uint64_t k = n < ROUND_TRIP ? n : ROUND_TRIP;
    for (uint64_t i = 0; i < k; ++i) {
        int w = print_value(again + used, sizeof again - used, dtype,
                            (const unsigned char *)vals + i * size1);
        FUZZ_CHECK(w > 0 && (size_t)w < sizeof again - used - 1);
        used += (size_t)w;
        again[used++] = i % 3 == 2 ? '\n' : ',';
    }
    void *vals2 = NULL;
    uint64_t n2 = 0;
    FUZZ_CHECK(cli_parse_text("again.txt", again, used, dtype, 0, CLI_EXIT_FAIL, &vals2, &n2) ==
               CLI_EXIT_OK);
    FUZZ_CHECK(n2 == k);
    for (uint64_t i = 0; i < k; ++i)
        FUZZ_CHECK(same_value(dtype, (const unsigned char *)vals + i * size1,
                              (const unsigned char *)vals2 + i * size1));
    free(vals2);
    free(vals);
    return 0;
}
