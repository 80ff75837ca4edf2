/*
 * gen_data.c - deterministic test inputs for mpi_cli.sh (no Python needed).
 *
 *   gen_data TYPE COUNT SEED OUT [npy|npy-be]
 *
 * Writes COUNT little-endian values of TYPE to OUT (raw), or as a .npy version 1.0 file of
 * shape (COUNT,) ("npy": '<' byte order; "npy-be": '>' byte order, the values byte-swapped).
 * TYPE: u8, u16, i32, f32, f64 (about 1 value in 16 NaN, +inf, -inf or -0.0, the rest spread
 * over [-3, 6)), w64 / w32 (weights as f64 / f32: values that cancel, 1e300 and -1e300, tiny
 * and subnormal ones, and ordinary ones). Value i depends only on SEED and i.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double unit(uint64_t k)
{
    return (double)(k >> 11) * 0x1p-53;
}

static double real_value(uint64_t seed, uint64_t i)
{
    const uint64_t k = mix(seed * 1000003u + i);
    switch (k % 64) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0;
    default: return -3.0 + 9.0 * unit(mix(k));
    }
}

static double weight_value(uint64_t seed, uint64_t i)
{
    static const double w[] = {1e300, -1e300, 1e-300, 3.0, -0.5, 4.9e-324, 1e-310, 0.1,
                               -1e-300, 1e308, -1e308, 0x1p-1000, 1e-40};
    const uint64_t k = mix(seed * 1000003u + i);
    return k % 3 ? w[k % (sizeof w / sizeof w[0])] : unit(mix(k)) - 0.5;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: gen_data TYPE COUNT SEED OUT [npy|npy-be]\n");
        return 2;
    }
    const char *type = argv[1];
    const uint64_t n = strtoull(argv[2], NULL, 10), seed = strtoull(argv[3], NULL, 10);
    const int npy = argc > 5, be = argc > 5 && strcmp(argv[5], "npy-be") == 0;
    size_t size;
    const char *descr;
    if (!strcmp(type, "u8")) size = 1, descr = "|u1";
    else if (!strcmp(type, "u16")) size = 2, descr = be ? ">u2" : "<u2";
    else if (!strcmp(type, "i32")) size = 4, descr = be ? ">i4" : "<i4";
    else if (!strcmp(type, "f32") || !strcmp(type, "w32")) size = 4, descr = be ? ">f4" : "<f4";
    else if (!strcmp(type, "f64") || !strcmp(type, "w64")) size = 8, descr = be ? ">f8" : "<f8";
    else {
        fprintf(stderr, "gen_data: unknown type %s\n", type);
        return 2;
    }
    FILE *f = fopen(argv[4], "wb");
    if (!f) {
        perror(argv[4]);
        return 1;
    }
    if (npy) {
        char dict[160];
        int len = snprintf(dict, sizeof dict,
                           "{'descr': '%s', 'fortran_order': False, 'shape': (%llu,), }", descr,
                           (unsigned long long)n);
        /* magic (6) + version (2) + length (2) + dict + padding + '\n': a multiple of 64 */
        int total = 10 + len + 1;
        int pad = (64 - total % 64) % 64;
        unsigned short hl = (unsigned short)(len + pad + 1);
        fwrite("\x93NUMPY\x01\x00", 1, 8, f);
        fputc(hl & 0xff, f);
        fputc(hl >> 8, f);
        fwrite(dict, 1, (size_t)len, f);
        for (int i = 0; i < pad; ++i)
            fputc(' ', f);
        fputc('\n', f);
    }
    for (uint64_t i = 0; i < n; ++i) {
        unsigned char b[8];
        const uint64_t k = mix(seed * 7919u + i);
        if (!strcmp(type, "u8")) {
            b[0] = (unsigned char)(k & 0xff);
        } else if (!strcmp(type, "u16")) {
            uint16_t v = (uint16_t)(k % 700);
            memcpy(b, &v, 2);
        } else if (!strcmp(type, "i32")) {
            int32_t v = (int32_t)(k % 41) - 20;
            memcpy(b, &v, 4);
        } else if (!strcmp(type, "f32") || !strcmp(type, "w32")) {
            float v = (float)(type[0] == 'f' ? real_value(seed, i) : weight_value(seed, i));
            memcpy(b, &v, 4);
        } else {
            double v = type[0] == 'f' ? real_value(seed, i) : weight_value(seed, i);
            memcpy(b, &v, 8);
        }
        if (be)
            for (size_t a = 0, z = size - 1; a < z; ++a, --z) {
                unsigned char t = b[a];
                b[a] = b[z];
                b[z] = t;
            }
        fwrite(b, 1, size, f);
    }
    return fclose(f) == 0 ? 0 : 1;
}
