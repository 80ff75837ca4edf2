/*
 * fast_even.c - the host side of fast_even.h: the certificate of an EVEN bin spec, computed in
 * one pass over its edges, and a process-wide cache of the last few certificates.
 *
 * Mechanism: for every edge E_i (binmap.h's own function) and its predecessor pred(E_i) in the
 * domain, evaluate THE estimate of fast_even.h (the same inline function the CPU loops use and
 * the same IEEE operations the CUDA kernels run), and keep t_lo = max(a_i - i) and
 * t_hi = min(b_i - (i - 1)) (fast_even.h's banner has the proof). The differences are exact
 * where they matter (Sterbenz: i/2 <= a <= 2i) and bounded conservatively elsewhere.
 * Built with -ffp-contract=off like the rest of the library, so the host estimate is the device's.
 * Limits: bins <= 2^23 (f32 samples) or 2^24 (double domain); see fast_even.h for the refusals.
 * Cost: about 5 ns per bin on one core (fast_even.h); the cache makes it once per spec and
 * process. Hazard checks run in full only near the first edge and near zero: past E_1 the
 * difference and the product only grow.
 */
#define _POSIX_C_SOURCE 200809L
#include "fast_even.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

/*
 * Subnormal hazards, tested on the bits (a host that treats subnormal inputs as zero, DAZ, would
 * otherwise compare them as zero and see nothing). An estimate whose input, difference or
 * product is subnormal, or close enough to the subnormal range that a flushing host (FTZ, with
 * either rule for detecting tininess) could round it differently, is refused: the margin is
 * 2^-120 (f32) / 2^-1000 (double) instead of the smallest normal. A subnormal input x cannot
 * change x - lower when |lower| >= 2^-100 (f32) / 2^-960 (double): its contribution is below half
 * an ulp of lower, so a flushing host computes the same difference.
 */
static uint32_t bits_f32(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static uint64_t bits_f64(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* |v| < 2^e (e >= the domain's smallest normal exponent; zero included) */
static int below_f32(float v, int e)
{
    return ((bits_f32(v) & 0x7FFFFFFFu) >> 23) < (uint32_t)(127 + e);
}

static int below_f64(double v, int e)
{
    return ((bits_f64(v) & 0x7FFFFFFFFFFFFFFFull) >> 52) < (uint64_t)(1023 + e);
}

static int zero_f32(float v)
{
    return (bits_f32(v) & 0x7FFFFFFFu) == 0u;
}

static int zero_f64(double v)
{
    return (bits_f64(v) & 0x7FFFFFFFFFFFFFFFull) == 0u;
}

/* 0 < |v| < 2^e; subnormal when e is the smallest normal exponent */
static int tiny_f32(float v, int e)
{
    return !zero_f32(v) && below_f32(v, e);
}

static int tiny_f64(double v, int e)
{
    return !zero_f64(v) && below_f64(v, e);
}

/* x != y as numbers (+0 = -0), on the bits */
static int differ_f32(float x, float y)
{
    return bits_f32(x) != bits_f32(y) && !(zero_f32(x) && zero_f32(y));
}

static int differ_f64(double x, double y)
{
    return bits_f64(x) != bits_f64(y) && !(zero_f64(x) && zero_f64(y));
}

/* 1 when the estimate at x meets a subnormal hazard (above). */
static int hazard_f32(float x, float L, float S)
{
    if (tiny_f32(x, -126) && below_f32(L, -100))
        return 1;
    const float t = x - L;
    if (zero_f32(t) ? differ_f32(x, L) : below_f32(t, -120))
        return 1;
    const float p = t * S;
    return zero_f32(p) ? !zero_f32(t) : below_f32(p, -120);
}

static int hazard_f64(double x, double L, double S)
{
    if (tiny_f64(x, -1022) && below_f64(L, -960))
        return 1;
    const double t = x - L;
    if (zero_f64(t) ? differ_f64(x, L) : below_f64(t, -1000))
        return 1;
    const double p = t * S;
    return zero_f64(p) ? !zero_f64(t) : below_f64(p, -1000);
}

static void refuse(gpuhist_fe_cert *c, int f32)
{
    memset(c, 0, sizeof *c);
    c->t_lo = INFINITY;
    c->t_hi = -INFINITY;
    c->t_lo_f = INFINITY;
    c->t_hi_f = -INFINITY;
    c->f32 = f32;
}

/* The largest float / double below e (e finite). */
static float pred_f32(float e)
{
    uint32_t b = bits_f32(e);
    if (e > 0.0f)
        b -= 1u;
    else if (zero_f32(e))
        b = 0x80000001u; /* -2^-149 */
    else
        b += 1u;
    memcpy(&e, &b, sizeof b);
    return e;
}

static double pred_f64(double e)
{
    uint64_t b = bits_f64(e);
    if (e > 0.0)
        b -= 1u;
    else if (zero_f64(e))
        b = 0x8000000000000001ull;
    else
        b += 1u;
    memcpy(&e, &b, sizeof b);
    return e;
}

/* An upper bound of a - i (a = an estimate below E_i, i >= 0 an integer): exact when
 * i/2 <= a <= 2i (Sterbenz); above 2i the rounded difference is still >= i >= 1 (refused
 * anyway); below i/2 the difference is below -1/2, and -1/2 bounds it. */
static double above_minus(double a, double i)
{
    if (i == 0.0 || a >= 0.5 * i)
        return a - i;
    return -0.5;
}

/* A lower bound of b - n (b = the estimate at E_(n+1), n >= 0 an integer): exact when
 * n/2 <= b <= 2n; above 2n, n bounds it; below n/2 the difference is below -1/2, so the spec is
 * refused (-inf). */
static double below_minus(double b, double n)
{
    if (n == 0.0)
        return b;
    if (b > 2.0 * n)
        return n;
    if (b >= 0.5 * n)
        return b - n;
    return -INFINITY;
}

/* The f32 domain: float edges, f = fl32(fl32(x - lower_f) * scale_f). f16 and bf16 samples are
 * floats too (widened): their edges are binmap.h's (float16 values for f16), and a certificate
 * over every float below and above each edge covers them. */
static void certify_f32(const gpuhist_binmap *m, gpuhist_fe_cert *c, uint32_t max_bins)
{
    refuse(c, 1);
    const uint32_t B = m->bins;
    const float L = m->lower_f, U = m->upper_f, S = m->scale_f;
    if (m->step_is_zero || B < 1u || B > max_bins || !isfinite(L) ||
        !isfinite(U) || !(L < U) || !isfinite(S) || !(S >= FLT_MIN) || tiny_f32(S, -126) ||
        tiny_f32(L, -126))
        return;
    /* the float32 linspace (binmap.h): its step (and so every product i * step, i >= 1) kept
     * clear of the subnormal range, where a flushing host would compute other edges */
    const int lin = m->edge_linspace_f32 != 0;
    if (lin && !(isfinite(m->delta_f) && m->step_f >= 0x1p-120f))
        return;
    double amax = -INFINITY, bmin = INFINITY;
    float prev = L;
    for (uint32_t i = 0; i <= B; ++i) {
        float E = L;
        if (i == B) {
            E = U;
        } else if (lin && i > 0u) {
            /* binmap.h's float32 linspace edge i * step_f + lower_f, refused where the sum (exact
             * in double when it is that small) is near the subnormal range (a flushing host
             * would round it to 0); the product is normal (step_f above) */
            const float p = (float)i * m->step_f;
            if (tiny_f64((double)p + (double)L, -120))
                return;
            E = gpuhist_even_edge_f32(m, i);
        } else if (i > 0u) {
            /* binmap.h's gpuhist_even_edge_f32, refused where the double edge rounds to a float
             * near the subnormal range (a flushing host would round it to 0) */
            const double ed = gpuhist_even_edge_f64(m, i);
            if (tiny_f64(ed, -120))
                return;
            E = m->edge_is_f16 ? gpuhist_round_f16(ed) : (float)ed;
        }
        if (!(E >= prev))
            return;
        prev = E;
        /* x - lower and the product grow with x, so past E_1 (>= E_1 > lower) only a subnormal
         * input can be a hazard, and only near 0: the full check at i <= 1 and |E| < 2^-100 */
        const int full = i <= 1u || below_f32(E, -100);
        if (i < B) {
            const float P = pred_f32(E);
            /* i = 0: P < lower, so a host flush of the difference or the product only raises a_0
             * toward 0 (conservative, see fast_even.h); a subnormal P read as 0 (DAZ) raises it
             * too when lower = 0, and would lower it when lower > 0 */
            if (full && (i > 0u ? hazard_f32(P, L, S) : tiny_f32(P, -126) && !zero_f32(L)))
                return;
            const float a = gpuhist_fe_estimate_f32(P, L, S);
            if (a != a || a == INFINITY)
                return;
            /* a negative a_0 has no key at all (fast_even.h): it bounds nothing */
            if (i > 0u || !(a < 0.0f)) {
                const double d = above_minus((double)a, (double)i);
                amax = d > amax ? d : amax;
            }
        }
        if (i > 0u) {
            if (full && hazard_f32(E, L, S))
                return;
            const float b = gpuhist_fe_estimate_f32(E, L, S);
            if (!isfinite(b))
                return;
            const double d = below_minus((double)b, (double)(i - 1u));
            bmin = d < bmin ? d : bmin;
        }
        if (!(amax < 1.0) || !(bmin > 0.0))
            return;
    }
    if (!(amax < bmin))
        return;
    /* thresholds in float: t_lo up, t_hi down, never subnormal */
    float lo = (float)amax;
    if ((double)lo < amax)
        lo = nextafterf(lo, INFINITY);
    if (lo != 0.0f && fabsf(lo) < FLT_MIN)
        lo = lo > 0.0f ? FLT_MIN : 0.0f;
    float hi = (float)bmin;
    if ((double)hi > bmin)
        hi = nextafterf(hi, -INFINITY);
    if (hi != 0.0f && fabsf(hi) < FLT_MIN)
        hi = hi > 0.0f ? 0.0f : -FLT_MIN;
    /* the one-edge rule needs t_lo_f < 1 and t_lo_f < t_hi (fast_even.h) */
    if (!(lo < 1.0f) || !((double)lo < bmin))
        return;
    c->t_lo = amax;
    c->t_hi = bmin;
    c->t_lo_f = lo;
    c->t_hi_f = hi;
    c->direct = amax < 0.0 && bmin >= 1.0;
    c->ok = 1;
    /* symmetric form: (1/2 - h, 1/2 + h) within (t_lo_f, t_hi_f), checked exactly in double
     * (0.5 +- h is exact there for h >= 2^-29); key + 1/2 must be exact: bins <= 2^22 */
    if (B <= (1u << 22)) {
        const double hd = fmin(0.5 - (double)lo, (double)hi - 0.5);
        float h = hd > 0.0 ? (float)hd : 0.0f;
        while (h >= 0x1p-29f && !(0.5 - (double)h >= (double)lo && 0.5 + (double)h <= (double)hi))
            h = nextafterf(h, 0.0f);
        c->h_f = h >= 0x1p-29f ? h : 0.0f;
    }
}

/* The double domain: double edges, f = fl64(fl64(x - lower) * scale). */
static void certify_f64(const gpuhist_binmap *m, gpuhist_fe_cert *c)
{
    refuse(c, 0);
    const uint32_t B = m->bins;
    const double L = m->lower, U = m->upper, S = m->scale;
    if (m->step_is_zero || B < 1u || B > GPUHIST_FE_MAX_BINS_F64 || !isfinite(L) ||
        !isfinite(U) || !(L < U) || !isfinite(S) || !(S >= DBL_MIN) || tiny_f64(S, -1022) ||
        tiny_f64(L, -1022))
        return;
    double amax = -INFINITY, bmin = INFINITY;
    double prev = L;
    for (uint32_t i = 0; i <= B; ++i) {
        const double E = gpuhist_even_edge_f64(m, i); /* E_0 = lower, E_bins = upper */
        if (tiny_f64(E, -1000))
            return;
        if (!(E >= prev))
            return;
        prev = E;
        const int full = i <= 1u || below_f64(E, -960); /* as in certify_f32 */
        if (i < B) {
            const double P = pred_f64(E);
            if (full && (i > 0u ? hazard_f64(P, L, S) : tiny_f64(P, -1022) && !zero_f64(L)))
                return;
            const double a = gpuhist_fe_estimate_f64(P, L, S);
            if (a != a || a == INFINITY)
                return;
            if (i > 0u || !(a < 0.0)) {
                const double d = above_minus(a, (double)i);
                amax = d > amax ? d : amax;
            }
        }
        if (i > 0u) {
            if (full && hazard_f64(E, L, S))
                return;
            const double b = gpuhist_fe_estimate_f64(E, L, S);
            if (!isfinite(b))
                return;
            const double d = below_minus(b, (double)(i - 1u));
            bmin = d < bmin ? d : bmin;
        }
        if (!(amax < 1.0) || !(bmin > 0.0))
            return;
    }
    if (amax != 0.0 && fabs(amax) < DBL_MIN) /* never subnormal: t_lo up, t_hi down */
        amax = amax > 0.0 ? DBL_MIN : 0.0;
    if (bmin < DBL_MIN)
        return;
    if (!(amax < bmin))
        return;
    c->t_lo = amax;
    c->t_hi = bmin;
    c->direct = amax < 0.0 && bmin >= 1.0;
    c->ok = 1;
}

void gpuhist_fe_certify(const gpuhist_binmap *m, gpuhist_fe_cert *c)
{
    if (m->kind != GH_KIND_EVEN) {
        refuse(c, m->edge_is_f32 != 0);
        return;
    }
    if (m->edge_is_f32)
        certify_f32(m, c, GPUHIST_FE_MAX_BINS_F32);
    else
        certify_f64(m, c);
}

void gpuhist_fe_certify_f32_wide(const gpuhist_binmap *m, gpuhist_fe_cert *c)
{
    if (m->kind != GH_KIND_EVEN || !m->edge_is_f32) {
        refuse(c, m->edge_is_f32 != 0);
        return;
    }
    certify_f32(m, c, GPUHIST_FE_MAX_BINS_F32_WIDE);
}

/* ---- the cache ------------------------------------------------------------------------------- */

/* What a certificate depends on: the whole map (binmap.h's layout has no padding bytes, and
 * gpuhist_binmap_of zeroes the fields a kind leaves unused) and which certificate. */
_Static_assert(sizeof(gpuhist_binmap) == 6 * 8 + 14 * 4,
               "gpuhist_binmap has padding bytes: the certificate caches (here and half_pairs.c) "
               "compare it with memcmp");
typedef struct fe_key {
    gpuhist_binmap map;
    gh_i32 wide, unused; /* wide: the wide certificate's entry (gpuhist_fe_cert_wide_of) */
} fe_key;

static void key_of(const gpuhist_binmap *m, fe_key *k)
{
    memset(k, 0, sizeof *k);
    k->map = *m;
}

#define FE_CACHE 8

/* Per spec: the certificate, and whether its reported edges strictly increase (plan.c's scan),
 * each computed at most once. */
static pthread_mutex_t fe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int used;
    fe_key key;
    int cert_known, edges_known, edges_increase;
    gpuhist_fe_cert cert;
} fe_cache[FE_CACHE];
static unsigned fe_next;

/* Under fe_lock: the entry of k, made (nothing known yet) when missing. */
static unsigned fe_entry(const fe_key *k)
{
    for (unsigned i = 0; i < FE_CACHE; ++i)
        if (fe_cache[i].used && memcmp(&fe_cache[i].key, k, sizeof *k) == 0)
            return i;
    const unsigned slot = fe_next++ % FE_CACHE;
    memset(&fe_cache[slot], 0, sizeof fe_cache[slot]);
    fe_cache[slot].used = 1;
    fe_cache[slot].key = *k;
    return slot;
}

static void cert_cached(const gpuhist_binmap *m, gpuhist_fe_cert *c, int wide)
{
    if (m->kind != GH_KIND_EVEN) {
        refuse(c, m->edge_is_f32 != 0);
        return;
    }
    fe_key k;
    key_of(m, &k);
    k.wide = wide;
    pthread_mutex_lock(&fe_lock);
    /* computed under the lock: the threads of one call that all need a new spec wait for one
     * certification instead of each doing it */
    const unsigned i = fe_entry(&k);
    if (!fe_cache[i].cert_known) {
        if (wide)
            gpuhist_fe_certify_f32_wide(m, &fe_cache[i].cert);
        else
            gpuhist_fe_certify(m, &fe_cache[i].cert);
        fe_cache[i].cert_known = 1;
    }
    *c = fe_cache[i].cert;
    pthread_mutex_unlock(&fe_lock);
}

void gpuhist_fe_cert_of(const gpuhist_binmap *m, gpuhist_fe_cert *c)
{
    cert_cached(m, c, 0);
}

void gpuhist_fe_cert_wide_of(const gpuhist_binmap *m, gpuhist_fe_cert *c)
{
    cert_cached(m, c, 1);
}

int gpuhist_fe_edges_increase(const gpuhist_binmap *m, int (*scan)(const gpuhist_binmap *m))
{
    fe_key k;
    key_of(m, &k);
    pthread_mutex_lock(&fe_lock);
    const unsigned i = fe_entry(&k);
    if (!fe_cache[i].edges_known) {
        fe_cache[i].edges_increase = scan(m);
        fe_cache[i].edges_known = 1;
    }
    const int ok = fe_cache[i].edges_increase;
    pthread_mutex_unlock(&fe_lock);
    return ok;
}
