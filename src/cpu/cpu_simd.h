/*
 * cpu_simd.h - vector forms of THE TEST of fast_even.h for the CPU strategies (not installed).
 *
 * Mechanism: the kernels map a run of single-channel samples to their EVEN keys, several samples
 * per instruction, with exactly the IEEE operations of fast_even.h's host form (subtract, then
 * multiply, each rounded to nearest; the key by truncation of a non-negative estimate; the
 * fraction f - key, exact), and report which samples did not pass the test. The caller maps those
 * with its exact scalar rule, so the keys it counts are binmap.h's slots bit for bit.
 * Limits: x86-64 with AVX2 only (chosen at run time, gpuhist_cpu_simd()); elsewhere the kernels
 *    are absent and gpuhist_cpu_simd() is 0, and the callers use their scalar loops. Samples may
 *    be unaligned. The environment variable GPUHIST_CPU_SIMD=0 turns the kernels off (tests run
 *    the scalar loops that way on machines that have AVX2).
 */
#ifndef GPUHIST_CPU_SIMD_H
#define GPUHIST_CPU_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* THE TEST's constants in the f32 domain (fast_even.h: lower_f, scale_f, t_lo_f, t_hi_f) and
 * bins as a float (exact: bins <= 2^23 for a certificate that holds). */
typedef struct gpuhist_cpu_test_f32 {
    float lower, scale, bins, t_lo, t_hi;
} gpuhist_cpu_test_f32;

/* The same in the double domain (lower, scale, t_lo, t_hi; bins <= 2^24). */
typedef struct gpuhist_cpu_test_f64 {
    double lower, scale, bins, t_lo, t_hi;
} gpuhist_cpu_test_f64;

/* @return 1 when the AVX2 kernels below may be called on this machine (decided once). */
int gpuhist_cpu_simd(void);

/*
 * key[i] = floor of the estimate of sample i (f32 samples at p, n of them, any alignment) for
 * every sample that passes THE TEST (x >= lower, 0 <= f < bins, t_lo < f - key < t_hi); the
 * indices of the others, ascending, go to miss[] (their key[] is unspecified).
 * @return the number of misses. Only when gpuhist_cpu_simd().
 */
size_t gpuhist_cpu_test_keys_f32(const unsigned char *p, size_t n, const gpuhist_cpu_test_f32 *c,
                                 uint32_t *key, uint32_t *miss);

/* The same for f64 samples in the double domain. */
size_t gpuhist_cpu_test_keys_f64(const unsigned char *p, size_t n, const gpuhist_cpu_test_f64 *c,
                                 uint32_t *key, uint32_t *miss);

#endif
