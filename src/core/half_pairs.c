/*
 * half_pairs.c - the host side of half_pairs.h: the estimate of an EVEN spec for f16 / bf16
 * samples, certified on all 65536 bit patterns against binmap.h, and a process-wide cache of the
 * last few certificates.
 *
 * Mechanism: binmap.h's slot of every pattern (gpuhist_slot_small_value, THE rule) is computed
 * once into a table of codes; each candidate estimate is replayed pattern by pattern with the
 * same operations as the kernel (half_pairs.h's gpuhist_hp_code, after the clamp) and the first
 * one that agrees everywhere is kept. Both run under an environment set here (hp_env_enter):
 * IEEE defaults with flush-to-zero and denormals-are-zero cleared (x86 MXCSR, AArch64 FPCR: a
 * host program may have set them, and binmap.h's compares of subnormal bf16 values would then
 * change too), round to nearest for the slots and toward -inf for the replay, so its fmaf is
 * the device's fma.rm.f32 bit for bit, subnormal bf16 samples included. The caller's
 * environment is restored. Built with -ffp-contract=off like the rest of the library.
 * Limits: EVEN maps of f16 / bf16 samples with bins + 3 <= GPUHIST_HP_MAX_CODES; everything else
 * is refused (ok = 0).
 * Cost: 65536 exact slots (a few ms) and at most HP_CANDIDATES replays of 65536 estimates (each
 * stops at its first disagreement), once per spec and process.
 */
#define _POSIX_C_SOURCE 200809L
#include "half_pairs.h"

#include <fenv.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

/* Save the caller's floating-point environment and set IEEE defaults: round to nearest, no
 * flush-to-zero, no denormals-are-zero (fesetenv(FE_DFL_ENV) alone keeps those bits on some C
 * libraries). */
static void hp_env_enter(fenv_t *saved)
{
    fegetenv(saved);
    fesetenv(FE_DFL_ENV);
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(_mm_getcsr() & ~0x8040u); /* FTZ (bit 15), DAZ (bit 6) */
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ volatile("msr fpcr, %0" ::"r"(fpcr & ~(1ul << 24))); /* FZ */
#endif
    fesetround(FE_TONEAREST);
}

static void hp_env_leave(const fenv_t *saved)
{
    fesetenv(saved);
}

/* The float value of a 16-bit pattern of the type. */
static float half_value(int bf16, uint32_t h)
{
    return bf16 ? gpuhist_bf16_to_f32(h) : gpuhist_f16_to_f32(h);
}

/* gpuhist_hp_replay under an environment set by the caller (rounding toward -inf). */
static gh_i32 replay(const gpuhist_hp_est *e, gh_u32 h)
{
    float x = half_value(e->bf16, h & 0xFFFFu);
    if (x == x) { /* max.NaN then min.NaN: a NaN stays NaN; which zero survives never matters
                     (both give the same code: n = 0 and y * s = 0) */
        const float xl = half_value(e->bf16, e->lo2 & 0xFFFFu);
        const float xh = half_value(e->bf16, e->hi2 & 0xFFFFu);
        if (x < xl)
            x = xl;
        if (x > xh)
            x = xh;
    }
    return gpuhist_hp_code(x, e, e->bf16, e->li, e->k != 0.0f);
}

gh_i32 gpuhist_hp_replay(const gpuhist_hp_est *e, gh_u32 h)
{
    fenv_t saved;
    hp_env_enter(&saved);
    fesetround(FE_DOWNWARD);
    const gh_i32 code = replay(e, h);
    hp_env_leave(&saved);
    return code;
}

static int half_map(const gpuhist_binmap *m)
{
    return m->kind == GH_KIND_EVEN && (m->dtype == GH_DT_F16 || m->dtype == GH_DT_BF16) &&
           m->bins >= 1u && m->bins + 3u <= GPUHIST_HP_MAX_CODES;
}

/* codes[h] = the code of binmap.h's slot of pattern h. */
static void expected_codes(const gpuhist_binmap *m, uint16_t *codes)
{
    for (uint32_t h = 0; h < 65536u; ++h)
        codes[h] = (uint16_t)gpuhist_hp_code_of_slot(gpuhist_slot_small_value(m, NULL, h), m->bins);
}

/* 1 when e agrees with codes[] on every pattern; under hp_env_enter's environment (caller). */
static int agrees(const gpuhist_hp_est *e, const uint16_t *codes)
{
    fesetround(FE_DOWNWARD);
    int ok = 1;
    for (uint32_t h = 0; h < 65536u && ok; ++h)
        ok = replay(e, h) == (gh_i32)codes[h];
    fesetround(FE_TONEAREST);
    return ok;
}

int gpuhist_hp_check(const gpuhist_binmap *m, const gpuhist_hp_est *e)
{
    if (!half_map(m) || e->bins != m->bins || e->codes != m->bins + 3u ||
        e->bf16 != (m->dtype == GH_DT_BF16))
        return 0;
    uint16_t *codes = (uint16_t *)malloc(65536u * sizeof *codes);
    if (!codes)
        return 0;
    fenv_t saved;
    hp_env_enter(&saved);
    expected_codes(m, codes);
    const int ok = agrees(e, codes);
    hp_env_leave(&saved);
    free(codes);
    return ok;
}

/* The clamp bounds: XL the largest underflow value, XH the smallest overflow value, as 16-bit
 * patterns (-inf / +inf when there is none); from the codes, so they are binmap.h's. */
static void clamp_bounds(int bf16, const uint16_t *codes, uint32_t bins, uint32_t *xl,
                         uint32_t *xh)
{
    const uint32_t inf = bf16 ? 0x7F80u : 0x7C00u;
    uint32_t lo = inf | 0x8000u, hi = inf;
    float lov = -INFINITY, hiv = INFINITY;
    for (uint32_t h = 0; h < 65536u; ++h) {
        const float x = half_value(bf16, h);
        if (codes[h] == GPUHIST_HP_CODE_UNDER && x > lov) {
            lov = x;
            lo = h;
        } else if (codes[h] == bins + GPUHIST_HP_CODE_BIN0 && x < hiv) {
            hiv = x;
            hi = h;
        }
    }
    *xl = lo;
    *xh = hi;
}

/* Candidates tried in order: c moved by these many float ulps, without the nudge (the kernel
 * is one fma shorter), then with it. */
static const int hp_c_steps[] = {0, 1, -1, 2, -2};
#define HP_CANDIDATES (2 * (int)(sizeof hp_c_steps / sizeof hp_c_steps[0]))

void gpuhist_hp_certify(const gpuhist_binmap *m, gpuhist_hp_est *e)
{
    memset(e, 0, sizeof *e);
    e->bf16 = m->dtype == GH_DT_BF16;
    e->bins = m->bins;
    e->codes = m->bins + 3u;
    if (!half_map(m) || m->step_is_zero || !isfinite(m->lower) || !isfinite(m->scale) ||
        !(m->scale > 0.0))
        return;
    const float s = (float)m->scale;
    const double c0 = 2.0 - (double)s * m->lower;
    if (!isfinite(s) || !(s > 0.0f) || !isfinite((float)c0))
        return;
    uint16_t *codes = (uint16_t *)malloc(65536u * sizeof *codes);
    if (!codes)
        return;
    fenv_t saved;
    hp_env_enter(&saved);
    expected_codes(m, codes);
    uint32_t xl, xh;
    clamp_bounds(e->bf16, codes, m->bins, &xl, &xh);
    e->lo2 = xl | xl << 16;
    e->hi2 = xh | xh << 16;
    e->s = s;
    /* an inclusive last edge that is a value of the type: step 6 takes it back (f16 edges are
     * float16 values; a bf16 one is a float whose low 16 bits are zero) */
    uint32_t ub;
    memcpy(&ub, &m->upper_f, sizeof ub);
    e->li = m->last_inclusive && (!e->bf16 || (ub & 0xFFFFu) == 0u);
    e->li_y = e->li ? m->upper_f : 0.0f;
    for (int i = 0; i < HP_CANDIDATES && !e->ok; ++i) {
        const int step = hp_c_steps[i % (HP_CANDIDATES / 2)];
        float c = (float)c0;
        for (int j = 0; j < (step < 0 ? -step : step); ++j)
            c = nextafterf(c, step < 0 ? -INFINITY : INFINITY);
        e->c = c;
        e->k = i < HP_CANDIDATES / 2 ? 0.0f : (e->bf16 ? s * 0x1p-12f : s * 0x1p-11f);
        e->ok = isfinite(e->k) && agrees(e, codes);
    }
    hp_env_leave(&saved);
    free(codes);
}

/* ---- the cache ------------------------------------------------------------------------------- */

/* What a certificate depends on: the whole map (binmap.h's layout has no padding bytes, and
 * gpuhist_binmap_of zeroes the fields a kind leaves unused). */
typedef gpuhist_binmap hp_key;

#define HP_CACHE 8

static pthread_mutex_t hp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int used;
    hp_key key;
    gpuhist_hp_est est;
} hp_cache[HP_CACHE];
static unsigned hp_next;

void gpuhist_hp_cert_of(const gpuhist_binmap *m, gpuhist_hp_est *e)
{
    if (!half_map(m)) {
        memset(e, 0, sizeof *e);
        return;
    }
    const hp_key k = *m;
    pthread_mutex_lock(&hp_lock);
    /* computed under the lock: callers that need the same new spec wait for one certification */
    for (unsigned i = 0; i < HP_CACHE; ++i)
        if (hp_cache[i].used && memcmp(&hp_cache[i].key, &k, sizeof k) == 0) {
            *e = hp_cache[i].est;
            pthread_mutex_unlock(&hp_lock);
            return;
        }
    const unsigned slot = hp_next++ % HP_CACHE;
    gpuhist_hp_certify(m, &hp_cache[slot].est);
    hp_cache[slot].used = 1;
    hp_cache[slot].key = k;
    *e = hp_cache[slot].est;
    pthread_mutex_unlock(&hp_lock);
}
