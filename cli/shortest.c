/*
 * shortest.c - number printing for the command's output: the shortest decimal that reads back
 * as exactly a given double (or float32), and unsigned integers in decimal.
 *
 * Mechanism: Ryu, after Ulf Adams, "Ryu: Fast Float-to-String Conversion", PLDI 2018. A finite
 * nonzero v = m * 2^e has a rounding interval: every real number inside it reads back (strtod,
 * round to nearest, ties to even) as v; its ends are v -/+ half the gap to each neighbour, and
 * they belong to it exactly when m is even. The ends and v itself, scaled by 4 so that they are
 * integers, are multiplied by 2^e / 10^q (q chosen from e alone so that no answer is skipped)
 * through one 64 x 128-bit product with a 125-bit approximation of 5^-q (e >= 0) or 5^-e
 * (e < 0), which yields the exact integer parts of the three scaled values. Decimal digits are
 * then removed from all three while the interval's ends still differ after the removal: what
 * is left is the shortest length with a decimal inside the interval, and v rounded to that
 * length (half to even, with a flag telling whether the removed digits were all zeros) is the
 * answer; it is nudged up by one unit when rounding fell on or below an excluded lower end.
 * The 125-bit multipliers are computed exactly on first use with a few lines of big-integer
 * arithmetic (5^i by repeated multiplication; floor(2^j / 5^i) by exact repeated division by
 * 5^13, since floor(floor(x / a) / b) = floor(x / ab)), so no generated table is kept in the
 * source. float32 values go through the same code: their 24-bit significands and exponents lie
 * inside the double's, and the paper's bounds only need upper limits on both.
 *
 * Limits: finite nonzero values take the fast path except the powers of two above the smallest
 * normal (significand field 0), whose interval is lopsided (the gap below is half the gap
 * above). The command's text is the shortest *correctly rounded* digits (%.{p}e for p = 1, 2,
 * ... until strtod gives v back); for these values that is one digit longer than Ryu's answer
 * for 46 double and 3 float32 magnitudes, so all 2045 double and 253 float32 magnitudes of this
 * kind take that loop (microseconds each) and every value keeps one text.
 * Zero, infinities and NaN print as printf's %g does. Needs unsigned __int128 (GCC, Clang).
 * Thread-safe: the tables are built under pthread_once.
 */
#include "cli.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- integers -------------------------------------------------------------------------------- */

static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

int cli_u64_digits(uint64_t v)
{
    int n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* Write the `n` digits of v (n = cli_u64_digits(v), or more for leading zeros) ending at
 * out + n. */
static void put_digits(char *out, uint64_t v, int n)
{
    char *p = out + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    while (p > out)
        *--p = '0';
}

char *cli_put_u64(char *out, uint64_t v)
{
    int n = cli_u64_digits(v);
    put_digits(out, v, n);
    return out + n;
}

/* ---- the multipliers ------------------------------------------------------------------------- */

/* 5^i scaled to 125 bits (i < POW5_SIZE, for e < 0) and 2^j / 5^i + 1 scaled to about 125 bits
 * (i < INV_SIZE, for e >= 0): the paper's tables, [i][0] the low and [i][1] the high 64 bits. */
#define POW5_BITS 125
#define POW5_INV_BITS 125
#define POW5_SIZE 326
#define INV_SIZE 342
static uint64_t pow5_mul[POW5_SIZE][2];
static uint64_t pow5_inv_mul[INV_SIZE][2];
/* Built once, by whichever thread converts first (the writers convert on several threads). */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* Little-endian 32-bit limbs; 5^341 and 2^(792 + 125) fit in 32 limbs. */
#define LIMBS 32
typedef struct big {
    uint32_t w[LIMBS];
} big;

static int big_bits(const big *a)
{
    for (int i = LIMBS - 1; i >= 0; --i)
        if (a->w[i])
            return 32 * i + 32 - __builtin_clz(a->w[i]);
    return 0;
}

static void big_mul_small(big *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < LIMBS; ++i) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
}

static void big_div_small(big *a, uint32_t d)
{
    uint64_t rem = 0;
    for (int i = LIMBS - 1; i >= 0; --i) {
        uint64_t t = (rem << 32) | a->w[i];
        a->w[i] = (uint32_t)(t / d);
        rem = t % d;
    }
}

/* Bits [shift, shift + 128) of a (shift may be negative: a shifted left), as two 64-bit words. */
static void big_window(const big *a, int shift, uint64_t out[2])
{
    out[0] = out[1] = 0;
    for (int b = 0; b < 128; ++b) {
        int src = b + shift;
        if (src < 0 || src >= 32 * LIMBS)
            continue;
        if (a->w[src / 32] >> (src % 32) & 1)
            out[b / 64] |= (uint64_t)1 << (b % 64);
    }
}

static void build_tables(void)
{
    big p5;
    memset(&p5, 0, sizeof p5);
    p5.w[0] = 1;
    for (int i = 0; i < INV_SIZE; ++i) {
        int bits = big_bits(&p5); /* = ceil(log2(5^i)), 1 for i = 0 */
        if (i < POW5_SIZE)
            big_window(&p5, bits - POW5_BITS, pow5_mul[i]);
        /* floor(2^(bits - 1 + POW5_INV_BITS) / 5^i) + 1 */
        big q;
        memset(&q, 0, sizeof q);
        int j = bits - 1 + POW5_INV_BITS;
        q.w[j / 32] = (uint32_t)1 << (j % 32);
        int left = i;
        for (; left >= 13; left -= 13)
            big_div_small(&q, 1220703125u); /* 5^13 */
        uint32_t rest = 1;
        while (left--)
            rest *= 5;
        big_div_small(&q, rest);
        big_window(&q, 0, pow5_inv_mul[i]);
        if (++pow5_inv_mul[i][0] == 0)
            ++pow5_inv_mul[i][1];
        big_mul_small(&p5, 5);
    }
}

/* ---- the core -------------------------------------------------------------------------------- */

/* floor(log10(2^e)) for 0 <= e <= 1650; floor(log10(5^e)) for 0 <= e <= 2620; ceil(log2(5^e))
 * (1 for e = 0) for 0 <= e <= 3528: fixed-point approximations exact over those ranges. */
static uint32_t log10_pow2(int32_t e) { return ((uint32_t)e * 78913) >> 18; }
static uint32_t log10_pow5(int32_t e) { return ((uint32_t)e * 732923) >> 20; }
static int32_t pow5_bits(int32_t e) { return (int32_t)((((uint32_t)e * 1217359) >> 19) + 1); }

static unsigned pow5_factor(uint64_t v)
{
    /* v * inverse(5) mod 2^64 is v / 5 when 5 divides v, and then it is <= (2^64 - 1) / 5. */
    const uint64_t inv5 = 14757395258967641293u, max_div5 = 3689348814741910323u;
    unsigned n = 0;
    for (;;) {
        v *= inv5;
        if (v > max_div5)
            return n;
        ++n;
    }
}

/* floor(m * mul / 2^j), 64 <= j; the result fits in 64 bits by the choice of j. */
static uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int32_t j)
{
    unsigned __int128 lo = (unsigned __int128)m * mul[0];
    unsigned __int128 hi = (unsigned __int128)m * mul[1];
    return (uint64_t)(((lo >> 64) + hi) >> (j - 64));
}

typedef struct decimal {
    uint64_t digits; /* no trailing zeros */
    int32_t exp10;   /* value = digits * 10^exp10 */
} decimal;

/* The shortest decimal inside the rounding interval of m2 * 2^e2 (m2 the full significand,
 * e2 its binary exponent), nearest to the value among those. The interval must be symmetric:
 * the callers send the lopsided powers of two to the %.{p}e loop (see the banner). */
static decimal shortest(uint64_t m2, int32_t e2)
{
    pthread_once(&tables_once, build_tables);
    e2 -= 2; /* the interval's ends below are 4 * m2 -/+ 2: two more bits */
    const int accept_ends = (m2 & 1) == 0;
    const uint64_t mv = 4 * m2, mp = mv + 2, mm = mv - 2;
    uint64_t vr, vp, vm;
    int32_t e10;
    int vm_zeros = 0, vr_zeros = 0; /* the digits removed so far from vm / vr were all zeros */

    if (e2 >= 0) {
        const uint32_t q = log10_pow2(e2) - (e2 > 3);
        e10 = (int32_t)q;
        const int32_t k = POW5_INV_BITS + pow5_bits((int32_t)q) - 1;
        const int32_t i = -e2 + (int32_t)q + k;
        vr = mul_shift(mv, pow5_inv_mul[q], i);
        vp = mul_shift(mp, pow5_inv_mul[q], i);
        vm = mul_shift(mm, pow5_inv_mul[q], i);
        if (q <= 21) {
            /* The product is exact (10^q divides it) iff 5^q divides the scaled value, as 2^q
             * divides 2^e2 already; at most one of mv - 2, mv, mv + 2 is a multiple of 5. */
            if (mv % 5 == 0)
                vr_zeros = pow5_factor(mv) >= q;
            else if (accept_ends)
                vm_zeros = pow5_factor(mm) >= q;
            else
                vp -= pow5_factor(mp) >= q; /* an excluded upper end is not a candidate */
        }
    } else {
        const uint32_t q = log10_pow5(-e2) - (-e2 > 1);
        e10 = (int32_t)q + e2;
        const int32_t i = -e2 - (int32_t)q;
        const int32_t k = pow5_bits(i) - POW5_BITS;
        const int32_t j = (int32_t)q - k;
        vr = mul_shift(mv, pow5_mul[i], j);
        vp = mul_shift(mp, pow5_mul[i], j);
        vm = mul_shift(mm, pow5_mul[i], j);
        if (q <= 1) {
            /* mv has at least two trailing zero bits, mp and mm at least one. */
            vr_zeros = 1;
            if (accept_ends)
                vm_zeros = 1;
            else
                --vp;
        } else if (q < 63) {
            /* Exact iff 2^q divides mv (5^q divides 5^-e2 already). */
            vr_zeros = (mv & (((uint64_t)1 << q) - 1)) == 0;
        }
    }

    int32_t removed = 0;
    unsigned last = 0; /* the last digit removed from vr */
    uint64_t out;
    if (vm_zeros || vr_zeros) {
        /* The exact case: ties and an included lower end need to know the removed digits. */
        while (vp / 10 > vm / 10) {
            vm_zeros &= vm % 10 == 0;
            vr_zeros &= last == 0;
            last = (unsigned)(vr % 10);
            vr /= 10;
            vp /= 10;
            vm /= 10;
            ++removed;
        }
        if (vm_zeros) {
            /* The lower end is a candidate: keep removing zeros from it while that stays so. */
            while (vm % 10 == 0) {
                vr_zeros &= last == 0;
                last = (unsigned)(vr % 10);
                vr /= 10;
                vp /= 10;
                vm /= 10;
                ++removed;
            }
        }
        if (vr_zeros && last == 5 && vr % 2 == 0)
            last = 4; /* exactly half way: round to even */
        out = vr + ((vr == vm && (!accept_ends || !vm_zeros)) || last >= 5);
    } else {
        int round_up = 0;
        if (vp / 100 > vm / 100) {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while (vp / 10 > vm / 10) {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            ++removed;
        }
        out = vr + (vr == vm || round_up);
    }
    decimal d = {out, e10 + removed};
    while (d.digits % 10 == 0 && d.digits) {
        d.digits /= 10;
        ++d.exp10;
    }
    return d;
}

/* ---- layouts --------------------------------------------------------------------------------- */

/* "d.ddde+XX" (printf's %e with the digits given and at least two exponent digits). */
static size_t put_scientific(char *out, uint64_t digits, int n, int x)
{
    char *p = out;
    put_digits(p + 1, digits, n);
    p[0] = p[1];
    if (n > 1) {
        p[1] = '.';
        p += n + 1;
    } else {
        p += 1;
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    unsigned ax = (unsigned)(x < 0 ? -x : x);
    if (ax >= 100)
        *p++ = (char)('0' + ax / 100);
    memcpy(p, digit_pairs + 2 * (ax % 100), 2);
    p += 2;
    *p = 0;
    return (size_t)(p - out);
}

/* The digits written out in full, the decimal point after the first x + 1 of them (x < 0: "0."
 * and -x - 1 zeros first; x >= n: zeros pad the integer). */
static size_t put_positional(char *out, uint64_t digits, int n, int x)
{
    char *p = out;
    if (x < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < -x - 1; ++z)
            *p++ = '0';
        put_digits(p, digits, n);
        p += n;
    } else if (x + 1 >= n) {
        put_digits(p, digits, n);
        p += n;
        for (int z = n; z < x + 1; ++z)
            *p++ = '0';
    } else {
        put_digits(p + 1, digits, n);
        memmove(p, p + 1, (size_t)x + 1);
        p[x + 1] = '.';
        p += n + 1;
    }
    *p = 0;
    return (size_t)(p - out);
}

/* The lopsided powers of two (see the banner): %.{p}e for p = 1, 2, ... until it reads back,
 * then Python repr's layout. */
static size_t slow_double(char *buf, double v)
{
    int digits = 17;
    char tmp[48];
    for (int p = 1; p <= 17; ++p) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
        if (strtod(tmp, NULL) == v) {
            digits = p;
            break;
        }
    }
    snprintf(tmp, sizeof tmp, "%.*e", digits - 1, v);
    int exp = atoi(strchr(tmp, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int decimals = digits - 1 - exp;
        return (size_t)snprintf(buf, 32, "%.*f", decimals > 0 ? decimals : 0, v);
    }
    return (size_t)snprintf(buf, 32, "%s", tmp);
}

static size_t slow_float_g(char *buf, float v)
{
    for (int p = 1; p <= 9; ++p) {
        int n = snprintf(buf, 32, "%.*g", p, (double)v);
        if (strtof(buf, NULL) == v)
            return (size_t)n;
    }
    return (size_t)snprintf(buf, 32, "%.9g", (double)v);
}

/* printf's %g of zeros, infinities and NaN: "0", "-0", "inf", "-inf", "nan", "-nan" (the sign
 * bit decides), written directly: sums and densities of many empty bins are mostly zeros. */
static size_t special(char *buf, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const char *word = v != v ? "nan" : v == 0.0 ? "0" : "inf";
    char *p = buf;
    if (bits >> 63)
        *p++ = '-';
    const size_t n = strlen(word);
    memcpy(p, word, n + 1);
    return (size_t)(p - buf) + n;
}

size_t cli_shortest_double(char *buf, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    const uint64_t mant = bits & (((uint64_t)1 << 52) - 1);
    const uint32_t bexp = (uint32_t)(bits >> 52) & 0x7ff;
    if (bexp == 0x7ff || (bexp == 0 && mant == 0))
        return special(buf, v);
    if (mant == 0 && bexp > 1)
        return slow_double(buf, v);
    char *p = buf;
    if (bits >> 63)
        *p++ = '-';
    decimal d = bexp == 0 ? shortest(mant, 1 - 1023 - 52)
                          : shortest(mant | (uint64_t)1 << 52, (int32_t)bexp - 1023 - 52);
    int n = cli_u64_digits(d.digits);
    int x = d.exp10 + n - 1; /* the exponent %e would print */
    if (x >= -4 && x < 16)
        return (size_t)(p - buf) + put_positional(p, d.digits, n, x);
    return (size_t)(p - buf) + put_scientific(p, d.digits, n, x);
}

size_t cli_shortest_float_g(char *buf, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    const uint32_t mant = bits & ((1u << 23) - 1);
    const uint32_t bexp = (bits >> 23) & 0xff;
    if (bexp == 0xff || (bexp == 0 && mant == 0))
        return special(buf, (double)v);
    if (mant == 0 && bexp > 1)
        return slow_float_g(buf, v);
    char *p = buf;
    if (bits >> 31)
        *p++ = '-';
    decimal d = bexp == 0 ? shortest(mant, 1 - 127 - 23)
                          : shortest(mant | 1u << 23, (int32_t)bexp - 127 - 23);
    int n = cli_u64_digits(d.digits);
    int x = d.exp10 + n - 1;
    /* %.{n}g: an exponent when x < -4 or x >= the precision, which is n (no trailing zeros). */
    if (x < -4 || x >= n)
        return (size_t)(p - buf) + put_scientific(p, d.digits, n, x);
    return (size_t)(p - buf) + put_positional(p, d.digits, n, x);
}
