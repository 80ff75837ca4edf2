/*
 * byte_pairs.cu - cuda-byte-pairs: u8/i8 counted two bytes at a time (one channel, or the
 * interleaved layouts below), and cuda-half-pairs: f16/bf16 samples' certified bin codes counted
 * two at a time by the same engine (end of this banner). Built for u8/256 and RGBA data, whose
 * uniform and bell samples every per-byte strategy leaves near 0.52-0.70 of the read ceiling on
 * the H200: one shared atomic per byte at ~8.4 lane-updates per clock per SM is the bound
 * (docs/PERFORMANCE.md, "Hardware facts the CUDA strategies rely on"; the same GB/s on an H100,
 * whose lower ceiling it meets at 0.76).
 *
 * Mechanism. The two bytes a (even offset) and b (odd offset) of each aligned 16-bit half-word
 * are one key k = a | b << 8 of a 65536-entry pair histogram P: one shared atomic counts two
 * samples. The value histogram is h[v] = sum_b P[v | b << 8] + sum_a P[a | v << 8] (every byte
 * is the low or the high byte of exactly one pair). P lives in 128 KiB of shared memory as 16-bit
 * counters packed two per word, with packed16.cuh's exact carry accounting (the atomic's old
 * value shows every carry out of a half; see fast_packed16.cu's banner for the proof), except
 * that a carry of key k is added to the 256 value counters of both its bytes (h is linear in P).
 * Pairs of skewed data collide on few keys, and an atomic whose old value is used serialises
 * same-address lanes (u16 hot90: 0.61 of the ceiling). So each warp also has its own 256-value
 * table of 32-bit counters fed by red.shared (no old value: same-address lanes merge, which is
 * how cuda-histogram256 reaches 0.96 on hot90), and counts each iteration of 3 vectors per
 * thread in one of three warp-uniform modes:
 *   pairs: 8 keys per 16-byte vector, 8 atomics with return and one carry test per vector;
 *   bytes: 16 red.shared per vector into the warp's table (one channel: two tables per warp,
 *   even and odd bytes, so a warp's back-to-back reds alternate between two addresses of a hot
 *   value; each byte's address is one PRMT and one IMAD);
 *   run: all the warp's 384 words of the iteration are one word w0 (constant data, one repeated
 *   pixel): each histogrammed byte of w0 gets 384 with one red.shared.add, no atomic per byte.
 * Before counting an iteration the warp counts the lanes whose first and last pair keys (of
 * their first and last vector, 32 KiB apart) are equal (uniform bytes: ~32 / 65536 lanes, bell
 * ~0.002, 90% one value ~21): when all 32 do, it tests for a run (12 compares per lane and a
 * vote, so only data that repeats at both ends pays for the test); else four or more count the
 * iteration in bytes mode. (Deciding from the previous iteration's keys instead would count
 * each warp's first iteration in pairs mode: on 90%-one-value data its 24 atomics with return on
 * one address serialise, ~16x the cost of an iteration, with ~165 iterations per warp on 1 GiB.
 * Measured: docs/PERFORMANCE.md, "Measurements behind the CUDA sources".)
 * Epilogue: each block folds P's halves (both directions, bank-conflict-free reads, no warp
 * reductions) and the warp tables into 256 sums and adds them to `out` with 256 64-bit global
 * atomics. A block none of whose warps counted in pairs mode (90%-one-value data, runs) skips
 * P's fold: P is still zero, and the fold is most of an image-sized call's fixed cost.
 * Results against cuda-histogram256 and CUB: docs/PERFORMANCE.md, "CUDA (NVIDIA H200)", cells
 * u8_256 and rgba_u8_3x256.
 * Fixed cost: the fold above reads P's high-byte sums without warp reductions or atomics (one
 * warp reduction and one shared atomic per value would be 64 dependent steps per thread, ~8 us
 * of a call); measured by timing 256 MiB, 1 GiB and 4 GiB (docs/PERFORMANCE.md, "The fixed cost
 * of a call" and "u8, 256 bins").
 * What bounds bytes mode (ncu; docs/PERFORMANCE.md, "u8, 256 bins"): on hot90 every red is in
 * bytes mode (1 GiB / 32 shared atomic instructions), yet each costs more shared wavefronts
 * than histogram256's, and MIO throttle is the main stall, with 32 resident warps per SM against
 * histogram256's 48. Forcing bytes mode everywhere gains little on hot90 / constant and loses
 * ~40% on uniform; forcing pairs mode everywhere collapses hot90 / constant (same-address
 * atomics with return serialise). Two register sets used alternately avoid copying the
 * prefetched vectors each iteration (12 moves). 3 vectors per thread are as fast as 4 (which
 * lose 3% on bell) and faster than 2, and __ldcs loads are within 1% of L1::no_allocate and
 * __ldg: so 3 vectors and __ldcs.
 * The hot value is not counted in registers: a zero-byte test of w ^ h per word with a loop
 * over each lane's other bytes diverges (151 warp instructions per warp-vector, more than the
 * 128 issue slots a vector's 32 clocks at the read ceiling hold), and compacting the words that
 * hold another byte into a per-warp queue (ballot + popc) saves shared wavefronts but adds more
 * instructions; both measured slower (docs/PERFORMANCE.md, "u8, 256 bins"). A hit count added
 * with a register operand (red.shared.add r) from 32 lanes on one address is not merged like an
 * add of 1 (ATOMS.POPC.INC): ~40 wavefronts.
 * Interleaved channels (RGBA and the like). A pair needs its two bytes' histograms to be told
 * apart, so the low byte of a key counts in one histogram and the high byte in another: P's rows
 * sum to the first, its columns to the second, and a carry goes to each byte's own histogram.
 *   2 channels, both histogrammed: every half-word is one pixel, one pair, as above.
 *   4 channels, 2-4 histogrammed: each 32-bit word is one pixel (16 % 4 == 0, so byte p of every
 *   word is on the same channel for a whole launch). Its first two histogrammed bytes, taken out
 *   with one PRMT, are the pair; the others (RGBA 3 of 4: B) go to the warp's byte table with
 *   red.shared. 3 of 4: 2 shared operations per pixel instead of 3; 4 of 4: 3 instead of 4
 *   (measured against histogram256: docs/PERFORMANCE.md, "RGBA u8, 3 of 4 channels").
 *   The byte tables hold nout = active * 256 counters and are shared by two warps, so that
 *   four channels still fit (32 x 4 KiB would not). 3 channels (no fixed phase in a vector) and
 *   one histogrammed channel of 2 or 4 (nothing to pair) are declined.
 * One channel: two byte tables per warp rather than one (fewer instructions and red bank
 * conflicts, faster on every distribution) or three (225 KiB of shared memory: slower on every
 * distribution), and each byte's address from one PRMT and one IMAD; an L2 prefetch of the
 * iteration after next (prefetch.global.L2, no registers) is slower. What is left of the gap to
 * histogram256 on hot90 is occupancy: held to byte-pairs' 32 warps per SM
 * (GPUHIST_CUDA_BLOCKS_PER_SM=4), histogram256 loses its lead there. Measured:
 * docs/PERFORMANCE.md, "u8, 256 bins" and "Measurements behind the CUDA sources".
 * Limits: 193 KiB of shared memory for one channel, 162-196 KiB for several (one block of 1024
 * threads per SM; a device with less opt-in shared memory, sm_80's 163 KiB, declines one channel
 * and auto takes cuda-histogram256), at most 2^26 vectors per block per launch (the 32-bit
 * per-block sums).
 * Loads: 16-byte vectors of the aligned body, the next iteration's loaded before this one is
 * counted; the unaligned head and tail (< 16 bytes each) by byte_common.cuh's gh8_loose_kernel.
 * Key sources. The engine (bp_kernel: loads, the vote, the three modes, the atomics and their
 * carry test) does not know what it counts: a key source turns vectors into pair keys and
 * table addresses and owns the fold (bp_bytes for the byte layouts above, compiled to the same
 * machine code as the engine written for bytes alone; bp_halves for cuda-half-pairs, below).
 *
 * cuda-half-pairs: f16 / bf16 samples, one channel, EVEN bins up to 256, counted two per atomic
 * by the same engine. Built for the f16_256 and bf16_256 cells, where cuda-fast-packed16 (one
 * atomic with return per 2-byte sample on the 65536 raw patterns) is held near 0.9 of the read
 * ceiling by the ~8.4 shared lane-updates per clock per SM. Each sample's code (half_pairs.h: NaN,
 * underflow, the bins, overflow; W = bins + 3 codes) is arithmetic: both halves of a 32-bit
 * word clamped by one max.NaN and one min.NaN of the packed type, each widened exactly to float
 * (f16: cvt; bf16: a shift or a mask), then one fma.rm and a cvt.rmi (specs that need the nudge:
 * one more fma.rm, f16 also a LOP3; an inclusive last edge that is a value of the type: + a min,
 * a compare and a subtraction; each form a kernel of its own). The estimate is certified on the
 * host for all 65536 bit patterns of the spec (gpuhist_hp_cert_of, once per spec and process),
 * so the kernel has no test and no exact path; specs that do not certify are declined and auto
 * counts them with cuda-fast-packed16.
 * The word's two codes are one key c0 + W c1 < W^2 <= 67081 of the packed 16-bit pair histogram
 * (33541 words, 131 KiB); a carry of key k goes to both its codes' slots (k / W and k % W), the
 * phantom half after the last key (W^2 odd) only ever receives a low carry and is never read.
 * Bytes mode: 8 red.shared per vector into the warp's two tables of W counters (even and odd
 * samples); run mode: the repeated word's two codes get 384 each; the vote compares the codes
 * of the first and last word of the iteration (so data that piles into one bin with varied bit
 * patterns goes to bytes mode too), and pairs mode reuses those two keys. Fold: four threads
 * per code over partners p = q (mod 4), both directions, plus the tables; then each code's sum
 * goes to its slot. Head and tail (< 8 samples each) by hp_loose_kernel with binmap.h's exact
 * rule.
 * Measured (H100, 1 GiB device-resident, 256 even bins over [0, 1), gpuhist-bench --matrix):
 * f16 0.950 / 0.968 / 0.974 / 0.944 and bf16 0.958 / 0.929 / 0.973 / 0.952 of the read ceiling
 * (uniform / hot90 / constant / bell; cuda-fast-packed16 0.85-0.93 on the same cells):
 * docs/PERFORMANCE.md, "The new cells, 2026-11-27 13:16Z". Not profiled with ncu yet; the
 * estimate of what bounds it, from the PTX: per 16-byte vector in pairs mode 32
 * instructions of codes without the nudge (4 words x (2 HMNMX2, 2 widen, 2 FFMA, 2 F2I); 48
 * with it), 4 IMAD for the keys and ~7 per atomic (inc, address, ATOMS, carry accumulation):
 * ~8 thread-instructions a sample (10 nudged) against byte-pairs' ~3.5, and one shared atomic
 * per two samples instead of one per sample. At the H100's read ceiling (~5.7 samples per clock
 * per SM) that is ~1.4 (1.8) of the 4 warp-instructions an SM issues per clock, 2.9 ATOMS lanes
 * per clock against the ~8.4 limit, and 5.7 F2I per clock of the 16 the conversion unit takes:
 * issue, not the atomics, is the likely bound. 64 registers at 1024 threads, no spills (ptxas,
 * sm_90).
 * Limits: bins + 3 <= 259 (197 KiB of shared memory at 256 bins: 33541 pair words, 64 tables and
 * the sums of 259 counters; a device with less opt-in shared memory declines), at most 2^26
 * vectors per block per launch (2^29 samples: the 32-bit per-block sums), the specs
 * half_pairs.h certifies (not: bins narrower than an ulp, edges next to float16 midpoints;
 * test_half_pairs prints its list), unweighted, one channel (the backend
 * deinterleaves no half data for it: several channels go to cuda-global-atomic).
 * Seed: 002 (privatised shared histograms), 000 (histogram256's per-warp tables); counting pairs
 * of samples with one atomic and the exhaustively certified arithmetic slot are new.
 */
#include "byte_common.cuh"
#include "half_pairs.h"
#include "packed16.cuh"

namespace {

/* BP_THREADS (1024: one block per SM), BP_U: launch_policy.h */
#define BP_WARPS (BP_THREADS / 32u)
#define BP_PAIR_WORDS 32768u   /* 65536 16-bit pair counters */
#define BP_SWITCH 4u           /* lanes with a repeated pair key that turn a warp to bytes */
#define BP_BLOCK_VECTORS (1u << 26) /* per block and launch: < 2^32 bytes, 32-bit sums */

/* Warps per byte table: one channel, every warp its own (the measured layout); several, two
 * warps share one so that four channels' tables still fit (32 x 4 KiB would not). */
__host__ __device__ constexpr uint32_t bp_warps_per_table(int C)
{
    return C == 1 ? 1u : 2u;
}

/* Byte tables per warp: one channel, two (byte j of a vector goes to table j % 2), so that the
 * back-to-back reds of bytes mode alternate between two addresses of the hot value (measured
 * against one and three in the banner). Several channels: one table per two warps (see
 * bp_warps_per_table). */
__host__ __device__ constexpr uint32_t bp_tables_per_warp(int C)
{
    return C == 1 ? 2u : 1u;
}

/* Shared memory of the bytes kernels: pair words, the byte tables (nout counters each), the
 * block's nout sums. */
static inline size_t bp_smem(int C, uint32_t nout)
{
    return ((size_t)BP_PAIR_WORDS +
            (BP_WARPS / bp_warps_per_table(C) * bp_tables_per_warp(C) + 1u) * nout) *
           4u;
}

/* Where a launch's keys come from (C > 1; one channel needs none of it). Output key = histogram
 * * 256 + byte value, as in byte_common.cuh. */
struct bp_layout {
    uint32_t lo, hi;    /* key offsets of a pair's low and high byte */
    uint32_t pair_sel;  /* C == 4: PRMT selector moving the pair's two bytes to bits 0-15 */
    gh8_live live;      /* C == 4: the histogrammed bytes of a word (i >= 2: outside the pair) */
    uint32_t nout;      /* active * 256 */
};

/* packed16.cuh's p16_wrap for pair keys: the exact carry accounting of one add (rare path).
 * carry(k, d) moves d (mod 2^64) into the counts of both values of pair key k; the low carry of
 * an even key goes to k + 1 unless that is the phantom half after the last key (has_next). */
template <class Carry>
__device__ __forceinline__ void bp_wrap(Carry &&carry, uint32_t k, uint32_t old, uint32_t inc,
                                        bool has_next = true)
{
    const uint32_t now = old + inc;
    if (k & 1u) {
        if (now < old) /* the high half wrapped */
            carry(k, 0x10000ull);
    } else if ((old & 0xffffu) + inc > 0xffffu) { /* the low half carried into the high half */
        carry(k, 0x10000ull);
        if (has_next)
            carry(k + 1u, now < old ? 0xffffull : ~0ull);
    }
}

/*
 * Key sources: what the pair engine (bp_kernel) counts. A source turns the 16-byte vectors of
 * the body into NK pair keys per vector (pairs mode), into table addresses of single values
 * (bytes mode and the run mode's word), says how a carry of a key reaches `out`, and folds the
 * block's pair counters and tables into `out` (the epilogue). Everything else - loads, modes,
 * the vote, the atomics and the carry test - is the engine's, the same for every source.
 *   bp_bytes<C, NLW>: u8/i8 bytes in C interleaved channels (the layouts above), 256 values a
 *     table, 65536 pair keys.
 *   bp_halves<BF16>: f16/bf16 samples mapped to half_pairs.h's certified codes (bins + 3 of
 *     them, W), one channel: the two halves of each 32-bit word are one pair, key
 *     c0 + W * c1 < W^2 <= 67081.
 */

/* C: interleaved channels (1, 2 or 4); NLW: histogrammed bytes per 32-bit word (C == 4: 2..4,
 * else 4). C <= 2: every half-word is a pair; C == 4: each word (one pixel) gives one pair, its
 * first two histogrammed bytes, and its other NLW - 2 histogrammed bytes go to the byte table. */
template <int C, int NLW> struct bp_bytes {
    static_assert(C == 1 || C == 2 || C == 4, "16-byte vectors need a fixed channel phase");
    static_assert(C == 4 ? NLW >= 2 && NLW <= 4 : NLW == 4, "a pair needs two bytes");
    static constexpr uint32_t TW = bp_warps_per_table(C);
    static constexpr uint32_t TPW = bp_tables_per_warp(C);
    static constexpr uint32_t NK = C <= 2 ? 8u : 4u; /* pair keys per vector */
    static constexpr uint32_t NRUN = C == 4 ? (uint32_t)NLW : 4u; /* run mode: bytes of w0 */
    bp_layout L;

    __device__ __forceinline__ uint32_t pair_words() const { return BP_PAIR_WORDS; }
    __device__ __forceinline__ uint32_t nout() const { return C == 1 ? GH8_VALUES : L.nout; }
    __device__ __forceinline__ uint32_t lo() const { return C == 1 ? 0u : L.lo; }
    __device__ __forceinline__ uint32_t hi() const { return C == 1 ? 0u : L.hi; }
    __device__ __forceinline__ bool has_next(uint32_t) const { return true; }

    /* the warp-table address of histogrammed byte b of word x (table t of the warp's TPW) */
    __device__ __forceinline__ uint32_t byte_at(uint32_t mine, uint32_t x, uint32_t b,
                                                uint32_t t = 0u) const
    {
        if constexpr (C <= 2) /* PRMT + IMAD: one integer-pipe instruction a byte, not 3 */
            return mine + ((b & 1u) ? hi() : lo()) * 4u + __byte_perm(x, 0u, 0x4440u | b) * 4u +
                   t * GH8_VALUES * 4u;
        else
            return mine + (L.live.off[b] + __byte_perm(x, 0u, L.live.sel[b])) * 4u;
    }
    __device__ __forceinline__ uint32_t pair_key(const uint32_t (&w)[4], uint32_t e) const
    {
        if constexpr (C <= 2)
            return (w[e >> 1] >> (16u * (e & 1u))) & 0xffffu;
        else
            return __byte_perm(w[e], 0u, L.pair_sel);
    }
    /* bytes mode: each histogrammed byte of the vector into the warp's table */
    __device__ __forceinline__ void count_values(uint32_t mine, const uint4 v) const
    {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (uint32_t i = 0; i < 4u; ++i)
#pragma unroll
            for (uint32_t b = 0; b < (uint32_t)NLW; ++b)
                gh_red_shared(byte_at(mine, w[i], b, (4u * i + b) % TPW));
    }
    /* pairs mode, after the vector's atomics: the bytes outside the pairs (C == 4, NLW > 2) */
    __device__ __forceinline__ void count_unpaired(uint32_t mine, const uint32_t (&w)[4]) const
    {
#pragma unroll
        for (uint32_t i = 0; i < 4u; ++i)
#pragma unroll
            for (uint32_t b = 2; b < (C == 4 ? (uint32_t)NLW : 2u); ++b)
                gh_red_shared(byte_at(mine, w[i], b));
    }
    /* run mode: value i < NRUN of the word w0 that fills the warp's iteration, n times */
    __device__ __forceinline__ void count_run(uint32_t mine, uint32_t w0, uint32_t i,
                                              uint32_t n) const
    {
        gh_red_shared_add(byte_at(mine, w0, i), n);
    }
    __device__ __forceinline__ void carry(unsigned long long *out, uint32_t k,
                                          unsigned long long d) const
    {
        atomicAdd(out + lo() + (k & 0xffu), d);
        atomicAdd(out + hi() + (k >> 8), d);
    }

    /* Fold: thread t sums value v = t % 256 over its quarter q = t / 256 of the pairs, as the low
     * byte (pairs v | b << 8: lanes on consecutive v read 16 consecutive words) and as the high
     * byte (pairs a | v << 8, a walked from a lane-dependent start: lanes 2 apart in a, so the
     * warp's 32 reads are in 32 banks). One channel: plus the warp tables of its quarter of the
     * warps; several: each of the nout keys sums its counters over the tables. (One warp
     * reduction and one shared atomic per v for the high-byte sums would cost ~8 us of a 1 GiB
     * call: docs/PERFORMANCE.md, "u8, 256 bins".) P is zero when `paired` is not set. */
    __device__ __forceinline__ void epilogue(const uint32_t *bp_w, const uint32_t *tables,
                                             uint32_t *sums, uint32_t tid, uint32_t paired,
                                             unsigned long long *out) const
    {
        constexpr uint32_t NT = BP_WARPS / TW;
        const uint32_t nout_ = nout(), lo_ = lo(), hi_ = hi();
        const uint32_t v = tid & 0xffu, q = tid >> 8;
        auto half = [&](uint32_t k) { return (bp_w[k >> 1] >> (16u * (k & 1u))) & 0xffffu; };
        uint32_t s_lo = 0u, s_hi = 0u;
        /* A block that never counted in pairs mode (skewed data, small inputs counted in bytes
         * mode) left P zero: its fold, the fixed cost of an image-sized call, is skipped. */
        if (paired) {
#pragma unroll 8
            for (uint32_t i = 0; i < 64u; ++i) {
                s_lo += half(v | (q * 64u + i) << 8);
                s_hi += half((q * 64u + ((i + 2u * v) & 63u)) | v << 8);
            }
        }
        if constexpr (C == 1) {
            for (uint32_t wi = q * (BP_WARPS / 4u); wi < (q + 1u) * (BP_WARPS / 4u); ++wi)
                for (uint32_t t = 0; t < TPW; ++t)
                    s_lo += tables[(wi * TPW + t) * GH8_VALUES + v];
            atomicAdd(sums + v, s_lo + s_hi);
        } else {
            atomicAdd(sums + lo_ + v, s_lo);
            atomicAdd(sums + hi_ + v, s_hi);
            for (uint32_t key = tid; key < nout_; key += BP_THREADS) {
                uint32_t t = 0u;
                for (uint32_t ti = 0; ti < NT; ++ti)
                    t += tables[ti * nout_ + key];
                if (t)
                    atomicAdd(sums + key, t);
            }
        }
        __syncthreads();
        for (uint32_t key = tid; key < nout_; key += BP_THREADS)
            if (sums[key])
                atomicAdd(out + key, (unsigned long long)sums[key]);
    }
};

/* One channel of f16 (BF16 = false) or bf16 samples: half_pairs.h's codes (LI: its step 6, an
 * inclusive last edge; NUDGE: k != 0). The low half of each 32-bit word (the even sample) is the
 * pair's first code, the high half its second. */
template <bool BF16, bool LI, bool NUDGE> struct bp_halves {
    static constexpr uint32_t TW = 1u;  /* each warp its own two tables (even, odd samples) */
    static constexpr uint32_t TPW = 2u;
    static constexpr uint32_t NK = 4u;  /* pairs (words) per vector */
    static constexpr uint32_t NRUN = 2u;
    gpuhist_hp_est e;

    __device__ __forceinline__ uint32_t pair_words() const { return (e.codes * e.codes + 1u) / 2u; }
    __device__ __forceinline__ uint32_t nout() const { return e.codes; }
    /* the last key's high half is a phantom when W^2 is odd: never reported */
    __device__ __forceinline__ bool has_next(uint32_t k) const
    {
        return k + 1u < e.codes * e.codes;
    }

    /* The codes of the word's two samples (half_pairs.h): both halves clamped by one max.NaN and
     * one min.NaN of the packed type, each widened exactly, then the estimate. */
    __device__ __forceinline__ void codes(uint32_t x, uint32_t &c0, uint32_t &c1) const
    {
        float y0, y1;
        if constexpr (BF16) {
            asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(x) : "r"(x), "r"(e.lo2));
            asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(x) : "r"(x), "r"(e.hi2));
            y0 = __uint_as_float(x << 16);
            y1 = __uint_as_float(x & 0xffff0000u);
        } else {
            asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(x) : "r"(x), "r"(e.lo2));
            asm("min.NaN.f16x2 %0, %1, %2;" : "=r"(x) : "r"(x), "r"(e.hi2));
            asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\t"
                "cvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
                : "=f"(y0), "=f"(y1)
                : "r"(x));
        }
        c0 = (uint32_t)gpuhist_hp_code(y0, &e, BF16, LI, NUDGE);
        c1 = (uint32_t)gpuhist_hp_code(y1, &e, BF16, LI, NUDGE);
    }
    __device__ __forceinline__ uint32_t pair_key(const uint32_t (&w)[4], uint32_t i) const
    {
        uint32_t c0, c1;
        codes(w[i], c0, c1);
        return c0 + e.codes * c1;
    }
    /* bytes mode: each sample into the warp's table of its parity (back-to-back reds on a hot
     * value alternate between two addresses, as for bytes) */
    __device__ __forceinline__ void count_values(uint32_t mine, const uint4 v) const
    {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (uint32_t i = 0; i < 4u; ++i) {
            uint32_t c0, c1;
            codes(w[i], c0, c1);
            gh_red_shared(mine + c0 * 4u);
            gh_red_shared((mine + e.codes * 4u) + c1 * 4u); /* base: loop-invariant */
        }
    }
    __device__ __forceinline__ void count_unpaired(uint32_t, const uint32_t (&)[4]) const {}
    __device__ __forceinline__ void count_run(uint32_t mine, uint32_t w0, uint32_t i,
                                              uint32_t n) const
    {
        uint32_t c0, c1;
        codes(w0, c0, c1);
        gh_red_shared_add(mine + (i ? c1 : c0) * 4u, n);
    }
    __device__ __forceinline__ void carry(unsigned long long *out, uint32_t k,
                                          unsigned long long d) const
    {
        const uint32_t c1 = k / e.codes, c0 = k - c1 * e.codes;
        atomicAdd(out + gpuhist_hp_slot_of_code(c0, e.bins), d);
        atomicAdd(out + gpuhist_hp_slot_of_code(c1, e.bins), d);
    }

    /* Fold: W codes, four threads per code (the rest of the 1024 threads take the W past 256):
     * thread (v, q) sums code v over partners p = q (mod 4), as the first code of pair
     * v + W p and as the second of p + W v, plus the tables of its quarter of the warps; then
     * each code's sum goes to its slot. The fold is a fixed cost per block (~W^2 / 1024 reads
     * of two halves a thread), skipped when the block never counted pairs. */
    __device__ __forceinline__ void epilogue(const uint32_t *bp_w, const uint32_t *tables,
                                             uint32_t *sums, uint32_t tid, uint32_t paired,
                                             unsigned long long *out) const
    {
        const uint32_t W = e.codes;
        auto half = [&](uint32_t k) { return (bp_w[k >> 1] >> (16u * (k & 1u))) & 0xffffu; };
        for (uint32_t idx = tid; idx < 4u * W; idx += BP_THREADS) {
            const uint32_t q = idx / W, v = idx - q * W;
            uint32_t s = 0u;
            if (paired)
                for (uint32_t p = q; p < W; p += 4u)
                    s += half(v + W * p) + half(p + W * v);
            for (uint32_t wi = q * (BP_WARPS / 4u); wi < (q + 1u) * (BP_WARPS / 4u); ++wi)
                s += tables[(wi * TPW) * W + v] + tables[(wi * TPW + 1u) * W + v];
            atomicAdd(sums + v, s);
        }
        __syncthreads();
        for (uint32_t c = tid; c < W; c += BP_THREADS)
            if (sums[c])
                atomicAdd(out + gpuhist_hp_slot_of_code(c, e.bins),
                          (unsigned long long)sums[c]);
    }
};

/* Shared memory: pair words, the tables (nout counters each), the block's nout sums. */
template <class Src> static inline size_t bp_smem_of(uint32_t pair_words, uint32_t nout)
{
    return ((size_t)pair_words + (BP_WARPS / Src::TW * Src::TPW + 1u) * (size_t)nout) * 4u;
}

/* The pair engine over the vectors of a launch, counting the keys of Src. */
template <class Src>
__global__ void __launch_bounds__(BP_THREADS, 1)
    bp_kernel(const uint4 *__restrict__ vec, const uint32_t nvec, const Src src,
              unsigned long long *__restrict__ out)
{
    constexpr uint32_t TW = Src::TW, NT = BP_WARPS / TW;
    constexpr uint32_t TPW = Src::TPW;
    constexpr uint32_t NK = Src::NK; /* pair keys per vector */
    const uint32_t nout = src.nout();
    const uint32_t pair_words = src.pair_words();
    extern __shared__ __align__(16) uint32_t bp_w[];
    uint32_t *tables = bp_w + pair_words;
    uint32_t *sums = tables + NT * TPW * nout;
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    __shared__ uint32_t paired; /* some warp of the block counted in pairs mode: P is not zero */
    for (uint32_t i = tid; i < pair_words + (NT * TPW + 1u) * nout; i += BP_THREADS)
        bp_w[i] = 0u;
    if (tid == 0)
        paired = 0u;
    __syncthreads();
    const uint32_t mine = (uint32_t)__cvta_generic_to_shared(tables + warp / TW * TPW * nout);

    /* pairs mode: NK keys, NK atomics back to back, one carry test (packed16.cuh's count); the
     * values outside the pairs (bytes, C == 4, NLW > 2) into the warp's table. The vote's keys
     * (first: key 0 of the iteration's first vector, last: key NK - 1 of its last) are passed
     * in, not recomputed (half codes cost ~7 instructions a sample; nvcc does not merge the
     * inline PTX they are made of). */
    auto count_pairs = [&](const uint4 v, bool is_first, bool is_last, uint32_t kf,
                           uint32_t kl) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
        uint32_t key[NK], old[NK], acc = 0u;
#pragma unroll
        for (uint32_t e = 0; e < NK; ++e) {
            key[e] = is_first && e == 0u       ? kf
                     : is_last && e == NK - 1u ? kl
                                               : src.pair_key(w, e);
            const uint32_t inc = (key[e] & 1u) * 0xffffu + 1u;
            old[e] = atomicAdd(bp_w + (key[e] >> 1), inc);
            acc |= old[e] ^ (old[e] + inc);
        }
        src.count_unpaired(mine, w);
        if (acc & P16_CARRY_BITS) {
#pragma unroll
            for (uint32_t e = 0; e < NK; ++e) {
                uint32_t k = key[e];
                asm volatile("" : "+r"(k)); /* keep the straight-line part free of this path */
                const uint32_t inc = (k & 1u) ? 0x10000u : 1u;
                if ((old[e] ^ (old[e] + inc)) & P16_CARRY_BITS)
                    bp_wrap([&](uint32_t kk, unsigned long long d) { src.carry(out, kk, d); },
                            k, old[e], inc, src.has_next(k));
            }
        }
    };

    /* Full iterations: BP_U vectors per thread, block-uniform trip count, so warps are converged
     * at the vote; the next iteration's vectors are loaded before this one is counted, into the
     * other of two register sets (one set copied into the other each iteration cost 12 moves
     * and ~7% more instructions). */
    const uint32_t per_iter = BP_THREADS * BP_U;
    const uint32_t step = gridDim.x * per_iter;
    uint32_t base = blockIdx.x * per_iter;
    auto full = [&](uint32_t b) { return b < nvec && nvec - b >= per_iter; };
    auto load = [&](uint4(&v)[BP_U], uint32_t at) {
#pragma unroll
        for (uint32_t u = 0; u < BP_U; ++u)
            v[u] = __ldcs(vec + at + u * BP_THREADS + tid);
    };
    auto count = [&](const uint4(&v)[BP_U]) {
        /* the warp's mode for these vectors (see the banner) */
        const uint32_t wf[4] = {v[0].x, v[0].y, v[0].z, v[0].w};
        const uint32_t wl[4] = {v[BP_U - 1u].x, v[BP_U - 1u].y, v[BP_U - 1u].z, v[BP_U - 1u].w};
        const uint32_t kf = src.pair_key(wf, 0u), kl = src.pair_key(wl, NK - 1u);
        const bool repeat = kf == kl;
        const uint32_t rep = __ballot_sync(0xffffffffu, repeat);
        if (rep == 0xffffffffu) {
            /* every lane repeats: when all the warp's words are one word w0 (constant data,
             * one repeated pixel), its values are added BP_U * 4 * 32 times each, no atomic per
             * value */
            const uint32_t w0 = __shfl_sync(0xffffffffu, v[0].x, 0);
            bool same = true;
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                same = same && v[u].x == w0 && v[u].y == w0 && v[u].z == w0 && v[u].w == w0;
            if (__all_sync(0xffffffffu, same)) {
                if (lane < Src::NRUN)
                    src.count_run(mine, w0, lane, BP_U * 4u * 32u);
                return;
            }
        }
        if (__popc(rep) >= BP_SWITCH) {
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                src.count_values(mine, v[u]);
        } else {
            if (lane == 0)
                paired = 1u;
#pragma unroll
            for (uint32_t u = 0; u < BP_U; ++u)
                count_pairs(v[u], u == 0u, u == BP_U - 1u, kf, kl);
        }
    };
    uint4 va[BP_U], vb[BP_U];
    if (full(base))
        load(va, base);
    while (full(base)) { /* base + step cannot wrap: nvec <= 2^30 */
        base += step;
        const bool more_b = full(base);
        if (more_b)
            load(vb, base);
        count(va);
        if (!more_b)
            break;
        base += step;
        const bool more_a = full(base);
        if (more_a)
            load(va, base);
        count(vb);
    }
    /* at most one partial iteration per block: values mode, vector by vector */
    for (uint32_t i = base + tid; base < nvec && i < nvec && i - base < per_iter; i += BP_THREADS)
        src.count_values(mine, __ldcs(vec + i));
    __syncthreads();

    src.epilogue(bp_w, tables, sums, tid, paired, out);
}

/* The kernel's channel layout: C = 1, 2 with both channels histogrammed, or 4 with 2+ of them
 * (3 channels have no fixed phase in a 16-byte vector; one of 2 or 4 has no pair). 0: none. */
static int bp_histogrammed(const gpuhist_plan *plan)
{
    if (plan->channels == 1)
        return 1;
    const int n = (int)plan->active;
    if (plan->channels == 2)
        return n == 2 ? 2 : 0;
    return plan->channels == 4 && n >= 2 ? n : 0;
}

static int bp_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    const int n = bp_histogrammed(plan);
    return n > 0 && bp_smem((int)plan->channels, (uint32_t)n * GH8_VALUES) <=
                        gpuhist_cuda_smem_optin(ctx);
}

/* The layout of a launch whose first byte is on channel phase0. */
static bp_layout bp_layout_of(const gh8_keys &k, unsigned phase0)
{
    bp_layout L = {};
    L.nout = k.nout;
    L.live = gh8_live_bytes(k, phase0);
    /* C <= 2: bytes 0 and 1 of a half-word; C == 4: the first two histogrammed bytes */
    L.lo = L.live.off[0];
    L.hi = L.live.off[1];
    L.pair_sel = 0x4400u | (L.live.sel[1] & 0xfu) << 4 | (L.live.sel[0] & 0xfu);
    return L;
}

/* Grid and launches of the bytes kernel of key source Src over the job's body (gh8_drive). */
template <class Src>
static gpuhist_status bp_go(gpuhist_ctx *ctx, const gpuhist_cuda_job *job, const gh8_keys &k,
                            unsigned long long *out)
{
    auto kernel = bp_kernel<Src>;
    const size_t smem = bp_smem((int)k.channels, k.nout);
    unsigned grid = 1;
    gpuhist_status st = gh8_grid(ctx, job, kernel, gh_launch_policy_of(GH_LP_BYTE_PAIRS), smem,
                                 job->elements / GH8_VEC, &grid, "cuda-byte-pairs");
    if (st != GPUHIST_OK)
        return st;
    return gh8_drive(ctx, job, k, out, (uint64_t)grid * BP_BLOCK_VECTORS,
                     [&](const uint4 *vec, unsigned nvec, unsigned phase0) -> gpuhist_status {
                         kernel<<<grid, BP_THREADS, smem, job->stream>>>(
                             vec, nvec, Src{bp_layout_of(k, phase0)}, out);
                         GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-byte-pairs kernel");
                         return GPUHIST_OK;
                     });
}

static gpuhist_status bp_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    unsigned long long *out = (unsigned long long *)outv;
    const int n = bp_histogrammed(plan);
    if (n == 0)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-byte-pairs: %u channels with %u histogrammed are not handled "
                            "(1, 2 of 2, or 2+ of 4)",
                            plan->channels, plan->active);
    gh8_keys k = {};
    gpuhist_status st = gh8_keys_of(ctx, plan, &k);
    if (st != GPUHIST_OK)
        return st;
    return k.channels == 1 ? bp_go<bp_bytes<1, 4>>(ctx, job, k, out)
           : k.channels == 2 ? bp_go<bp_bytes<2, 4>>(ctx, job, k, out)
           : n == 2          ? bp_go<bp_bytes<4, 2>>(ctx, job, k, out)
           : n == 3          ? bp_go<bp_bytes<4, 3>>(ctx, job, k, out)
                             : bp_go<bp_bytes<4, 4>>(ctx, job, k, out);
}

/* ---- cuda-half-pairs ------------------------------------------------------------------------ */

/* Shared memory of the halves kernel for W = bins + 3 codes. */
static inline size_t hp_smem(uint32_t W)
{
    return bp_smem_of<bp_halves<false, false, false>>((W * W + 1u) / 2u, W);
}

/* The unaligned head and tail samples of a job (< 8 each), straight into `out` by binmap.h's
 * exact rule (no estimate needed for 14 samples). */
static __global__ void hp_loose_kernel(const uint16_t *head, unsigned nhead, const uint16_t *tail,
                                       unsigned ntail, const gpuhist_binmap map,
                                       unsigned long long *out)
{
    const unsigned t = threadIdx.x;
    uint32_t h;
    if (t < nhead)
        h = head[t];
    else if (t - nhead < ntail)
        h = tail[t - nhead];
    else
        return;
    atomicAdd(out + gpuhist_slot_small_value(&map, NULL, h), 1ull);
}

/* One channel of f16 / bf16 samples on EVEN bins whose half_pairs.h estimate certifies, while
 * the W^2 / 2 pair words and 65 tables of W counters fit a block's shared memory. */
static int hp_supports(const gpuhist_ctx *ctx, const gpuhist_plan *plan)
{
    if (plan->channels != 1 || plan->map.kind != GH_KIND_EVEN ||
        plan->slots > GPUHIST_HP_MAX_CODES || hp_smem(plan->slots) > gpuhist_cuda_smem_optin(ctx))
        return 0;
    gpuhist_hp_est e; /* cached per spec: the 65536 patterns are checked once */
    gpuhist_hp_cert_of(&plan->map, &e);
    return e.ok;
}

template <bool BF16, bool LI, bool NUDGE>
static gpuhist_status hp_go(gpuhist_ctx *ctx, const gpuhist_plan *plan,
                            const gpuhist_cuda_job *job, const gpuhist_hp_est &e,
                            unsigned long long *out)
{
    auto kernel = bp_kernel<bp_halves<BF16, LI, NUDGE>>;
    const size_t smem = hp_smem(e.codes);
    const uint64_t n = job->elements;
    if (n == 0)
        return GPUHIST_OK;
    /* head: the samples before the first 16-byte boundary (data is 2-byte aligned) */
    const uintptr_t addr = (uintptr_t)job->data;
    uint64_t head = ((GH8_VEC - addr % GH8_VEC) % GH8_VEC) / 2u;
    if (head > n)
        head = n;
    const uint64_t nvec = (n - head) / 8u, tail = n - head - nvec * 8u;
    const uint16_t *samples = (const uint16_t *)job->data;
    if (head + tail > 0) {
        hp_loose_kernel<<<1, 32, 0, job->stream>>>(samples, (unsigned)head,
                                                   samples + head + nvec * 8u, (unsigned)tail,
                                                   plan->map, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-half-pairs head/tail kernel");
    }
    if (nvec == 0)
        return GPUHIST_OK;
    unsigned grid = 1;
    gpuhist_status st = gh8_grid(ctx, job, kernel, gh_launch_policy_of(GH_LP_BYTE_PAIRS), smem,
                                 nvec, &grid, "cuda-half-pairs");
    if (st != GPUHIST_OK)
        return st;
    uint64_t cap = (uint64_t)grid * BP_BLOCK_VECTORS; /* the 32-bit per-block sums */
    if (cap > GH8_MAX_LAUNCH_VECTORS)
        cap = GH8_MAX_LAUNCH_VECTORS;
    const uint4 *body = (const uint4 *)(samples + head);
    const bp_halves<BF16, LI, NUDGE> src{e};
    for (uint64_t v0 = 0; v0 < nvec; v0 += cap) {
        const uint64_t m = nvec - v0 < cap ? nvec - v0 : cap;
        kernel<<<grid, BP_THREADS, smem, job->stream>>>(body + v0, (uint32_t)m, src, out);
        GPUHIST_CUDA_LAUNCH_CHECK(ctx, "cuda-half-pairs kernel");
    }
    return GPUHIST_OK;
}

static gpuhist_status hp_run(gpuhist_ctx *ctx, const gpuhist_plan *plan, const void *jobv,
                             void *outv)
{
    const gpuhist_cuda_job *job = (const gpuhist_cuda_job *)jobv;
    gpuhist_hp_est e;
    if (plan->channels == 1 && plan->map.kind == GH_KIND_EVEN &&
        plan->slots <= GPUHIST_HP_MAX_CODES)
        gpuhist_hp_cert_of(&plan->map, &e);
    else
        e.ok = 0;
    if (!e.ok)
        return gpuhist_fail(ctx, GPUHIST_ERROR_UNSUPPORTED,
                            "cuda-half-pairs: one channel of at most 256 even bins whose "
                            "half-precision estimate certifies on every bit pattern only");
    unsigned long long *out = (unsigned long long *)outv;
    /* the kernel of the spec's form (half_pairs.h): type, step 6, nudge */
    auto by_nudge = [&](auto bf16, auto li) -> gpuhist_status {
        constexpr bool B = decltype(bf16)::value, L = decltype(li)::value;
        return e.k != 0.0f ? hp_go<B, L, true>(ctx, plan, job, e, out)
                           : hp_go<B, L, false>(ctx, plan, job, e, out);
    };
    auto by_li = [&](auto bf16) -> gpuhist_status {
        return e.li ? by_nudge(bf16, std::true_type()) : by_nudge(bf16, std::false_type());
    };
    return plan->dtype == GPUHIST_BF16 ? by_li(std::true_type()) : by_li(std::false_type());
}

} /* namespace */

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_byte_pairs = {
    "cuda-byte-pairs",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), 000 (per-warp tables); new: two bytes per atomic",
    "u8/i8, every bin spec (counts the 256 values, the backend folds them into bins); one "
    "channel, 2 of 2 interleaved, or 2-4 of 4 (RGBA)",
    "pairs of bytes as one key of a 65536-entry packed 16-bit shared histogram (one atomic per "
    "two samples, exact carries), per-warp 256-value red.shared tables while the data is skewed",
    GPUHIST_INT8_DTYPES,
    GPUHIST_ALL_KINDS,
    0,
    GPUHIST_CAP_VALUES | GPUHIST_CAP_CHANNELS,
    bp_supports,
    bp_run,
};

extern "C" const gpuhist_strategy gpuhist_strategy_cuda_half_pairs = {
    "cuda-half-pairs",
    GPUHIST_BACKEND_CUDA,
    "002 (privatised shared histograms), 000 (per-warp tables); new: two half-precision "
    "samples per atomic, an exhaustively certified arithmetic slot",
    "f16/bf16, one channel, even bins up to 256 whose arithmetic slot agrees with the exact "
    "rule on all 65536 bit patterns (checked on the host once per spec)",
    "each sample's slot by clamp, widen and one or two fused multiply-adds (certified on every "
    "bit pattern), two slots as one key of a packed 16-bit shared pair histogram (cuda-byte-pairs' "
    "engine), per-warp red.shared slot tables while the data is skewed",
    GPUHIST_CUDA_HALF_DTYPES,
    GPUHIST_KIND_BIT(GPUHIST_BINS_EVEN),
    256,
    0,
    hp_supports,
    hp_run,
};
