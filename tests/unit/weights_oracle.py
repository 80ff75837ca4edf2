#!/usr/bin/env python3
"""Weighted histograms against an independent exact computation.

Runs test_weights --dump DIR, then for each case recomputes every sample's bin with NumPy
(searchsorted over the edges gpuhist reports, NumPy's last-edge rule, NaN in no bin, outliers
to the end bins under clamp) and each bin's sum of weights and of squared weights with exact
rationals (fractions.Fraction), rounded once to the nearest double; NaN when the bin has a NaN
weight or both infinities, else the infinity it has. gpuhist's counts and sums must be exactly
those (weights are drawn where squares are exact).

usage: weights_oracle.py PATH/TO/test_weights
"""
import math
import os
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np


def exact(ws):
    nan = any(math.isnan(w) for w in ws)
    pinf = any(w == math.inf for w in ws)
    ninf = any(w == -math.inf for w in ws)
    if nan or (pinf and ninf):
        return math.nan
    if pinf:
        return math.inf
    if ninf:
        return -math.inf
    total = sum((Fraction(w) for w in ws), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or np.float64(a).tobytes() == np.float64(b).tobytes()


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([exe, "--dump", d], capture_output=True, text=True)
        print(p.stdout.strip().splitlines()[0] if p.stdout.strip() else "")
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            return 1
        names = sorted(os.listdir(d), key=lambda s: int(s.split("-")[1].split(".")[0]))
        bad = checked = 0
        for name in names:
            raw = np.fromfile(os.path.join(d, name), dtype="<f8")
            head = raw[:8].view("<u8")
            n, bins, A, C, clamp, wf32, last_incl = (int(v) for v in head[:7])
            at = 8
            x = raw[at:at + n * C].reshape(n, C)
            at += n * C
            w = raw[at:at + n]
            at += n
            edges = raw[at:at + bins + 1]
            at += bins + 1
            counts = raw[at:at + A * bins].view("<u8").reshape(A, bins)
            at += A * bins
            sums = raw[at:at + A * bins].reshape(A, bins)
            at += A * bins
            squares = raw[at:at + A * bins].reshape(A, bins)
            for k in range(A):
                v = x[:, k]
                idx = np.searchsorted(edges, v, side="right") - 1
                if last_incl:
                    idx[v == edges[-1]] = bins - 1
                members = [[] for _ in range(bins)]
                for i in range(n):
                    if math.isnan(v[i]):
                        continue
                    b = int(idx[i])
                    if b < 0 or b >= bins:
                        if not clamp:
                            continue
                        b = 0 if b < 0 else bins - 1
                    members[b].append(float(w[i]))
                for b in range(bins):
                    checked += 1
                    want_c = len(members[b])
                    want_s = exact(members[b])
                    # squares: exact rationals too (the weights are drawn where squares are
                    # exact); a square of an infinity is +inf, of a NaN NaN
                    want_q = exact([math.nan if math.isnan(m) else math.inf if math.isinf(m) else m
                                    for m in members[b]])
                    if all(math.isfinite(m) for m in members[b]):
                        q = sum((Fraction(m) ** 2 for m in members[b]), Fraction(0))
                        try:
                            want_q = float(q)
                        except OverflowError:
                            want_q = math.inf
                    ok = counts[k, b] == want_c and same(sums[k, b], want_s) and same(squares[k, b], want_q)
                    if not ok:
                        bad += 1
                        if bad <= 10:
                            print(f"FAILED: {name} channel {k} bin {b}: count {counts[k, b]} / {want_c}, "
                                  f"sum {sums[k, b]!r} / {want_s!r}, squares {squares[k, b]!r} / {want_q!r}")
        print(f"{len(names)} cases, {checked} bins, {bad} wrong")
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
