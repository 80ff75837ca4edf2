/*
 * check.h - the assertion macros of gpuhist's C tests.
 *
 * A failed check prints file:line, the expression, both values and the current context (set with
 * check_context(), e.g. the strategy or the case being run), counts the failure and goes on, so
 * one run reports every broken case instead of the first one. A test's main() ends with
 * `return check_exit();`: 0 when everything passed, 1 otherwise. check_skip() exits 77, which
 * ctest reads as "skipped" (SKIP_RETURN_CODE).
 *
 * Header-only on purpose: each test is one translation unit, and the state is static.
 */
#ifndef GPUHIST_TEST_CHECK_H
#define GPUHIST_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long check_failures_;
static unsigned long check_count_;
static char check_context_[512];
/* After this many reported failures only the count goes on, so a systematic bug does not bury
 * the first (most useful) messages under a million lines. */
#define CHECK_MAX_REPORTS 200

#if defined(__GNUC__)
#define CHECK_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define CHECK_UNUSED __attribute__((unused))
#else
#define CHECK_PRINTF(a, b)
#define CHECK_UNUSED
#endif

/* Describe what is being tested; printed with every failure until changed. */
static CHECK_UNUSED CHECK_PRINTF(1, 2) void check_context(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(check_context_, sizeof check_context_, fmt, ap);
    va_end(ap);
}

static CHECK_UNUSED CHECK_PRINTF(3, 4) void check_fail_(const char *file, int line,
                                                        const char *fmt, ...)
{
    ++check_failures_;
    if (check_failures_ > CHECK_MAX_REPORTS)
        return;
    va_list ap;
    fprintf(stderr, "%s:%d: FAILED: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (check_context_[0])
        fprintf(stderr, "  [%s]", check_context_);
    fputc('\n', stderr);
    if (check_failures_ == CHECK_MAX_REPORTS)
        fprintf(stderr, "(further failures are counted, not printed)\n");
}

/* Each macro evaluates its arguments once and yields 1 when the check passed (so a test can
 * stop early: `if (!CHECK(p != NULL)) return;`). */
static CHECK_UNUSED int check_true_(const char *file, int line, int ok, const char *expr)
{
    ++check_count_;
    if (!ok)
        check_fail_(file, line, "%s", expr);
    return ok;
}
#define CHECK(cond) check_true_(__FILE__, __LINE__, (cond) ? 1 : 0, #cond)

static CHECK_UNUSED CHECK_PRINTF(4, 5) int check_msg_(const char *file, int line, int ok,
                                                      const char *fmt, ...)
{
    ++check_count_;
    if (ok)
        return 1;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    check_fail_(file, line, "%s", msg);
    return 0;
}
/* CHECK_MSG(cond, fmt, ...): on failure print the formatted message instead of the expression. */
#define CHECK_MSG(cond, ...) check_msg_(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)

static CHECK_UNUSED int check_eq_u64_(const char *file, int line, const char *ea, const char *eb,
                                      uint64_t a, uint64_t b)
{
    ++check_count_;
    if (a == b)
        return 1;
    check_fail_(file, line, "%s == %s: %" PRIu64 " != %" PRIu64, ea, eb, a, b);
    return 0;
}
#define CHECK_EQ_U64(a, b) check_eq_u64_(__FILE__, __LINE__, #a, #b, (uint64_t)(a), (uint64_t)(b))

static CHECK_UNUSED int check_eq_i64_(const char *file, int line, const char *ea, const char *eb,
                                      int64_t a, int64_t b)
{
    ++check_count_;
    if (a == b)
        return 1;
    check_fail_(file, line, "%s == %s: %" PRId64 " != %" PRId64, ea, eb, a, b);
    return 0;
}
#define CHECK_EQ_INT(a, b) check_eq_i64_(__FILE__, __LINE__, #a, #b, (int64_t)(a), (int64_t)(b))

/* Bit-for-bit equality of doubles (so -0.0 != 0.0 and the last bit matters); %a shows the bits. */
static CHECK_UNUSED int check_eq_f64_bits_(const char *file, int line, const char *ea,
                                           const char *eb, double a, double b)
{
    uint64_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ++check_count_;
    if (ua == ub)
        return 1;
    check_fail_(file, line, "%s == %s (bitwise): %a (%.17g) != %a (%.17g)", ea, eb, a, a, b, b);
    return 0;
}
#define CHECK_EQ_F64_BITS(a, b) check_eq_f64_bits_(__FILE__, __LINE__, #a, #b, (a), (b))

static CHECK_UNUSED int check_eq_str_(const char *file, int line, const char *ea, const char *eb,
                                      const char *a, const char *b)
{
    ++check_count_;
    if (a && b && strcmp(a, b) == 0)
        return 1;
    check_fail_(file, line, "%s == %s: \"%s\" != \"%s\"", ea, eb, a ? a : "(null)",
                b ? b : "(null)");
    return 0;
}
#define CHECK_EQ_STR(a, b) check_eq_str_(__FILE__, __LINE__, #a, #b, (a), (b))

/* `hay` contains `needle` (e.g. an error message naming the bad field). */
static CHECK_UNUSED int check_contains_(const char *file, int line, const char *ehay,
                                        const char *hay, const char *needle)
{
    ++check_count_;
    if (hay && strstr(hay, needle))
        return 1;
    check_fail_(file, line, "%s = \"%s\" does not mention \"%s\"", ehay, hay ? hay : "(null)",
                needle);
    return 0;
}
#define CHECK_CONTAINS(hay, needle) check_contains_(__FILE__, __LINE__, #hay, (hay), (needle))

/* Exit 77: ctest reports the test as skipped (SKIP_RETURN_CODE 77). */
static CHECK_UNUSED void check_skip(const char *why)
{
    printf("%s\n", why);
    fflush(stdout);
    exit(77);
}

static CHECK_UNUSED int check_exit(void)
{
    if (check_failures_) {
        fprintf(stderr, "%lu of %lu checks FAILED\n", check_failures_, check_count_);
        return 1;
    }
    printf("all %lu checks passed\n", check_count_);
    return 0;
}

/* CHECK_SANITIZED: 1 in AddressSanitizer / ThreadSanitizer / MemorySanitizer builds, whose own
 * allocations fault pages and slow calls (tests that count page faults skip that check). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHECK_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                      \
    __has_feature(memory_sanitizer)
#define CHECK_SANITIZED 1
#endif
#endif
#ifndef CHECK_SANITIZED
#define CHECK_SANITIZED 0
#endif

/* splitmix64: the next value of the generator whose state is *s (a test's fixed seed). */
static CHECK_UNUSED uint64_t check_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
