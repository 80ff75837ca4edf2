#!/usr/bin/env python3
"""The exact weight accumulator against exact rational arithmetic.

Generates cases (random weights over the whole exponent range, subnormals, cancellation down to
the last bit, ties, sums near the overflow threshold; f64 and f32 weights), has test_exact_sum
--sum round each sum, and compares its bits with float(sum of Fractions): Python rounds a
Fraction to the nearest double, ties to even, so this is the correctly rounded sum computed
independently. Seed fixed by default (printed); GPUHIST_TEST_SEED=random for a new one.

usage: exact_sum_oracle.py PATH/TO/test_exact_sum
"""
import os
import random
import struct
import subprocess
import sys
import time
from fractions import Fraction


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_f32_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def rounded(total):
    try:
        return float(total)
    except OverflowError:
        return float("inf") if total > 0 else float("-inf")


def main():
    exe = sys.argv[1]
    s = os.environ.get("GPUHIST_TEST_SEED", "")
    seed = int(time.time()) if s == "random" else int(s) if s else 20261125
    print(f"exact sum oracle: seed {seed} (GPUHIST_TEST_SEED; \"random\" for a new one)")
    r = random.Random(seed)
    cases = []

    def any_f64():
        while True:
            b = r.getrandbits(64)
            if (b >> 52) & 0x7FF != 0x7FF:
                return struct.unpack("<d", struct.pack("<Q", b))[0]

    for i in range(1500):
        kind = i % 6
        n = r.choice([1, 2, 3, 7, 50, 400])
        if kind == 0:  # anything finite
            w = [any_f64() for _ in range(n)]
        elif kind == 1:  # one magnitude, many cancellations
            e = r.randint(-1074, 970)
            w = [r.choice([-1, 1]) * r.getrandbits(53) * 2.0 ** e if e > -1022 else
                 r.choice([-1, 1]) * r.getrandbits(52) * 2.0 ** -1074 for _ in range(n)]
        elif kind == 2:  # big values that cancel exactly, leaving small ones
            big = [any_f64() for _ in range(n)]
            w = big + [-x for x in big] + [r.uniform(-1, 1) * 2.0 ** r.randint(-1074, 0) for _ in range(3)]
            r.shuffle(w)
        elif kind == 3:  # a tie or near-tie at the last bit of 1.0 .. 2^k
            k = r.randint(-1000, 1000)
            base = (1 + r.getrandbits(52) * 2.0 ** -52) * 2.0 ** k
            w = [base, 2.0 ** (k - 53) * r.choice([1, -1])]
            if r.random() < 0.5:
                w.append(2.0 ** (k - 53 - r.randint(1, 900)) * r.choice([1, -1]))
        elif kind == 4:  # near the overflow threshold
            w = [1.7976931348623157e308 * r.uniform(0.4, 1) * r.choice([1, 1, -1]) for _ in range(n % 5 + 1)]
        else:  # subnormal results
            w = [r.getrandbits(52) * 2.0 ** -1074 * r.choice([1, -1]) for _ in range(n)]
        cases.append(("f64", w))
    for i in range(500):  # f32 weights
        n = r.choice([1, 2, 5, 100, 1000])
        w = []
        for _ in range(n):
            while True:
                b = r.getrandbits(32)
                if (b >> 23) & 0xFF != 0xFF:
                    break
            w.append(from_f32_bits(b))
        if i % 2:
            w += [-x for x in w[: n // 2]]
        cases.append(("f32", w))

    lines = []
    for t, w in cases:
        if t == "f64":
            lines.append("f64 " + " ".join("%x" % f64_bits(x) for x in w))
        else:
            lines.append("f32 " + " ".join("%x" % f32_bits(x) for x in w))
    out = subprocess.run([exe, "--sum"], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.split()
    if len(out) != len(cases):
        print(f"FAILED: {len(out)} results for {len(cases)} cases")
        return 1
    bad = 0
    for (t, w), got in zip(cases, out):
        want = rounded(sum((Fraction(x) for x in w), Fraction(0)))
        if int(got, 16) != f64_bits(want):
            bad += 1
            if bad <= 10:
                print(f"FAILED: {t} sum of {len(w)} weights: got {got}, wanted {f64_bits(want):016x} ({want!r})")
    print(f"{len(cases)} sums, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
