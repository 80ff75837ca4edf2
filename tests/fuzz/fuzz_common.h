/*
 * fuzz_common.h - what the fuzz harnesses share: the libFuzzer entry point's declaration, a
 * check that aborts (so both libFuzzer and the corpus replay report it), and a reader of the
 * fuzz input as a stream of typed values (zeros once it runs out).
 */
#ifndef GPUHIST_FUZZ_COMMON_H
#define GPUHIST_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which, then abort (libFuzzer saves the input as a crash). Said on
 * stdout too, as scripts/fuzz closes the stderr of the code under test. */
#define FUZZ_CHECK(cond)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            printf("%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);               \
            fflush(stdout);                                                                    \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);      \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

typedef struct {
    const uint8_t *p;
    size_t left;
} fuzz_bytes;

static inline uint64_t fuzz_take(fuzz_bytes *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t byte = 0;
        if (b->left) {
            byte = *b->p++;
            b->left--;
        }
        v |= byte << (8 * i);
    }
    return v;
}
static inline uint8_t fuzz_u8(fuzz_bytes *b) { return (uint8_t)fuzz_take(b, 1); }
static inline uint32_t fuzz_u32(fuzz_bytes *b) { return (uint32_t)fuzz_take(b, 4); }
static inline uint64_t fuzz_u64(fuzz_bytes *b) { return fuzz_take(b, 8); }
static inline double fuzz_f64(fuzz_bytes *b)
{
    uint64_t u = fuzz_u64(b);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

#endif
