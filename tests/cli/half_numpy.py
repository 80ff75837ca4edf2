#!/usr/bin/env python3
"""half_numpy.py - every float16 and every bfloat16 value through the gpuhist command, against
NumPy.

The input is all 65536 bit patterns of the type (NaNs, infinities, zeros and subnormals included)
as one raw little-endian file. For each bin spec (even bins with a range, the automatic range,
explicit edges) the command's edges, counts and tallies (underflow, overflow, NaN, total) must be:

- float16 (docs/SEMANTICS.md, "Half precision"): numpy.histogram's on the float16 array, edges
  and counts, wherever NumPy's own counts agree with its edges (bin i holds E[i] <= x < E[i+1],
  the last bin also E[n]); NumPy computes its bin-index estimate in float16 in some paths (NumPy
  1.x always, NumPy 2 with an automatic range), which puts samples more than one bin off for
  many bins: there the command must give the counts NumPy's edges define (np.searchsorted), and
  the case is reported. Automatic ranges: the edges NumPy computes for that range given
  explicitly (NumPy 2 computes auto-range edges in float16 arithmetic; gpuhist does not).
- bfloat16: NumPy's histogram of the values widened to float32 (NumPy has no bfloat16): float32
  edges. ml_dtypes, where installed, checks the widening itself.

Usage: half_numpy.py --gpuhist PATH [--backend cpu|opencl|cuda] [--strategies] [--may-refuse]
--may-refuse leaves out the forced strategies that refuse a half type by name, and lets a forced
strategy decline the specs outside its limits (cuda-half-pairs: even bins whose arithmetic slot
is certified), counted and listed; it must still run at least one case of each type.
Exit 0 when every case matches; 1 on a mismatch; 77 (skip) when the backend is unavailable.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

warnings.simplefilter("ignore")  # NumPy's float16 overflow warnings in its own index estimate

EVEN_CASES = [  # (bins, (lo, hi))
    (1, (-1.0, 1.0)),
    (7, (-1.0, 1.0)),
    (10, (0.1, 1000.3)),
    (256, (-1.0, 1.0)),
    (256, (-65504.0, 65504.0)),
    (256, (0.0, 1.0)),
    (100, (-3e-5, 2e-5)),      # subnormal float16 edges
    (5, (1000.0, 1010.0)),     # edges on every other float16 (spacing 0.5 there)
    (1000, (-300.0, 700.0)),
    (4096, (-2.0, 2.0)),
    (2048, (0.1, 1000.3)),
]
AUTO_BINS = [1, 3, 256, 1000]
EDGES_CASES = [
    [-1.0, -0.5, 0.0, 0.25, 1.0],
    [0.1, 0.2, 0.30000001, 1000.0, 65504.0],
    [-65504.0, -1e-7, 0.0, 6e-8, 1e-4, 2048.0, 2049.0, 2050.0],
]


def run(gpuhist, path, dtype, args, backend, strategy):
    cmd = [gpuhist, "-t", dtype, "-f", "json", "--last-inclusive", "-B", backend] + args
    if strategy:
        cmd += ["-s", strategy]
    cmd.append(path)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), None


def edge_rule(x, edges):
    """Counts and tallies NumPy's edges define: E[i] <= x < E[i+1], the last bin closed."""
    e = np.asarray(edges, dtype=np.float64)
    v = x.astype(np.float64)
    nan = int(np.isnan(v).sum())
    v = v[~np.isnan(v)]
    under = int((v < e[0]).sum())
    over = int((v > e[-1]).sum())
    v = v[(v >= e[0]) & (v <= e[-1])]
    idx = np.searchsorted(e, v, side="right") - 1
    idx[idx == len(e) - 1] -= 1
    return np.bincount(idx, minlength=len(e) - 1), under, over, nan


class Checker:
    def __init__(self):
        self.failures = 0
        self.cases = 0
        self.notes = []
        # --may-refuse: a forced strategy may decline a spec outside its limits ("cannot
        # histogram ... samples into ..."); each such case is counted, and a forced strategy
        # must still run at least one case of each half type
        self.may_decline = False
        self.declined = {}
        self.ran = {}

    def compare(self, what, got, err, edges, counts, under, over, nan, total):
        key = " ".join(what.split()[:3])  # dtype, backend, strategy (when one is forced)
        if got is None and self.may_decline and "cannot histogram" in (err or ""):
            self.declined[key] = self.declined.get(key, 0) + 1
            return
        self.cases += 1
        self.ran[key] = self.ran.get(key, 0) + 1
        if got is None:
            self.failures += 1
            print(f"FAIL {what}: the command failed: {err}")
            return
        problems = []
        ge = np.array(got["edges"], dtype=np.float64)
        if ge.shape != np.shape(edges) or not np.array_equal(ge, np.asarray(edges, np.float64)):
            k = int(np.argmax(ge != np.asarray(edges, np.float64))) if ge.shape == np.shape(
                edges) else -1
            problems.append(f"edges differ (first at {k})")
        gc = np.array(got["counts"], dtype=np.int64)
        if gc.shape != np.shape(counts) or not np.array_equal(gc, counts):
            bad = np.nonzero(gc != counts)[0] if gc.shape == np.shape(counts) else []
            problems.append(f"counts differ in {len(bad)} bins (first {bad[:5]})")
        for name, want in (("underflow", under), ("overflow", over), ("nan", nan),
                           ("total", total)):
            if got[name] != want:
                problems.append(f"{name} {got[name]}, expected {want}")
        if problems:
            self.failures += 1
            print(f"FAIL {what}: " + "; ".join(problems))


def rule_even(data, n, lo, hi, edge_type):
    """The documented rule: NumPy's linspace in double over [lo, hi], rounded to the edge type;
    None when those edges do not increase strictly (refused)."""
    e = np.linspace(lo, hi, n + 1).astype(edge_type)
    if np.any(e[:-1] >= e[1:]):
        return None
    return e


def even_case(chk, what, gpuhist, path, data, dtype, args, n, lo, hi, edge_type, total,
              backend, strategy):
    """One even-bin case: the rule's edges checked against NumPy's own (where NumPy computes
    edges of that type and does not fail), the command against the rule."""
    e = rule_even(data, n, lo, hi, edge_type)
    fin = data[np.isfinite(data)]
    try:
        c_np, e_np = np.histogram(fin, n, range=(lo, hi))
    except (ValueError, IndexError) as exc:
        c_np, e_np = None, None
        chk.notes.append(f"{dtype} {what}: NumPy {np.__version__} fails ({str(exc)[:60]}); "
                         f"compared with the rule")
    if e_np is not None and e_np.dtype != edge_type:
        chk.notes.append(f"{dtype} {what}: NumPy {np.__version__} computes {e_np.dtype} edges "
                         f"(a bound of magnitude 65000 or more, NumPy 1.x); compared with the "
                         f"{np.dtype(edge_type).name} rule")
        e_np = None
    got, err = run(gpuhist, path, dtype, args, backend, strategy)
    tag = f"{dtype} {backend}" + (f" {strategy}" if strategy else "") + " " + what
    if e is None:
        chk.cases += 1
        if got is not None or "too many bins" not in (err or ""):
            chk.failures += 1
            print(f"FAIL {tag}: the edges do not increase; expected a refusal, got "
                  f"{'a result' if got else err}")
        return
    if e_np is not None:
        if not np.array_equal(e_np, e):
            chk.failures += 1
            print(f"FAIL {tag}: NumPy's edges are not the rule's (test assumption)")
    ref, under, over, nan = edge_rule(data, e)
    if c_np is not None and e_np is not None and not np.array_equal(c_np, ref):
        chk.notes.append(f"{dtype} {what}: NumPy {np.__version__}'s counts disagree with its own "
                         f"edges in {int((c_np != ref).sum())} bins (its float16 index "
                         f"estimate); compared with the edges' counts")
    chk.compare(tag, got, err, e.astype(np.float64), ref, under, over, nan, total)


def check_f16(chk, gpuhist, path, backend, strategy):
    allv = np.arange(65536, dtype=np.uint16).view(np.float16)
    fin = allv[np.isfinite(allv)]
    tag = f"f16 {backend}" + (f" {strategy}" if strategy else "")
    for n, (lo, hi) in EVEN_CASES:
        even_case(chk, f"{n} bins over [{lo}, {hi}]", gpuhist, path, allv, "f16",
                  ["-b", str(n), "-r", f"{lo!r}:{hi!r}"], n, lo, hi, np.float16, 65536,
                  backend, strategy)
    # automatic range: the finite min and max (min == max widened by 0.5), the rule's edges
    for n in AUTO_BINS:
        for sub in (fin, fin[(fin > -700) & (fin < 300)], fin[fin == np.float16(3.0)]):
            lo, hi = float(sub.min()), float(sub.max())
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            what = f"auto {n} bins over [{lo}, {hi}] ({len(sub)} values)"
            with tempfile.NamedTemporaryFile(suffix=".raw", delete=False) as f:
                f.write(sub.astype("<f2").tobytes())
            try:
                e = rule_even(sub, n, lo, hi, np.float16)
                try:
                    np_auto = np.histogram_bin_edges(sub, n)
                except ValueError:  # NumPy 2: float16 arithmetic can collapse edges
                    np_auto = None
                if e is not None and not np.array_equal(np_auto, e):
                    chk.notes.append(f"f16 {what}: NumPy {np.__version__}'s automatic-range "
                                     f"edges are not those of the same range given explicitly "
                                     f"(NumPy 2: float16 arithmetic)")
                even_case(chk, what, gpuhist, f.name, sub, "f16", ["-b", str(n)], n, lo, hi,
                          np.float16, len(sub), backend, strategy)
            finally:
                os.unlink(f.name)
    for e in EDGES_CASES:
        edges = np.array(e, dtype=np.float64)
        c_np, _ = np.histogram(fin, bins=edges)
        ref, under, over, nan = edge_rule(allv, edges)
        if not np.array_equal(c_np, ref):
            chk.failures += 1
            print(f"FAIL f16 edges {e}: NumPy's counts are not its edges' (test assumption)")
        got, err = run(gpuhist, path, "f16", ["-e", ",".join(repr(x) for x in e)], backend,
                       strategy)
        chk.compare(f"{tag} edges {e}", got, err, edges, c_np, under, over, nan, 65536)


def check_bf16(chk, gpuhist, path, backend, strategy):
    bits = np.arange(65536, dtype=np.uint32)
    wide = (bits << 16).view(np.float32)  # bfloat16 widened to float32, exactly
    try:
        import ml_dtypes  # noqa: F401
        mw = np.arange(65536, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)
        same = (mw.view(np.uint32) == wide.view(np.uint32)) | (np.isnan(mw) & np.isnan(wide))
        if not same.all():
            chk.failures += 1
            print("FAIL bf16: ml_dtypes widens bfloat16 differently from the upper half of a "
                  "float32")
    except ImportError:
        chk.notes.append("bf16: ml_dtypes not installed; widening checked by definition only")
    fin = wide[np.isfinite(wide)]
    cases = [(7, (-1.0, 1.0)), (256, (-3e38, 3e38)), (256, (0.0, 1.0)), (1000, (-300.0, 700.0)),
             (4096, (-2.0, 2.0)), (50, (1e-39, 1e-38))]
    for n, (lo, hi) in cases:
        even_case(chk, f"{n} bins over [{lo}, {hi}]", gpuhist, path, wide, "bf16",
                  ["-b", str(n), "-r", f"{lo!r}:{hi!r}"], n, lo, hi, np.float32, 65536,
                  backend, strategy)
    # automatic range: float32 linspace of the double range, as for f32 samples
    for n in AUTO_BINS:
        lo, hi = float(fin.min()), float(fin.max())
        even_case(chk, f"auto {n} bins", gpuhist, path, wide, "bf16", ["-b", str(n)], n, lo, hi,
                  np.float32, 65536, backend, strategy)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuhist", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--strategies", action="store_true",
                    help="also force each of the backend's strategies")
    ap.add_argument("--may-refuse", action="store_true",
                    help="leave out (and list) the forced strategies that refuse a half type "
                         "by name; without it a refusal is a failure")
    a = ap.parse_args()
    probe = subprocess.run([a.gpuhist, "-B", a.backend, "--list-strategies"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: backend {a.backend}: {probe.stderr.strip()}")
        return 77
    with tempfile.NamedTemporaryFile(suffix=".raw") as f:
        f.write(b"\0\0")
        f.flush()
        got, err = run(a.gpuhist, f.name, "f16", ["-b", "1", "-r", "0:1"], a.backend, None)
    if got is None and any(w in (err or "") for w in ("not compiled into this build",
                                                      "no CUDA-capable device",
                                                      "driver not loaded", "no OpenCL")):
        print(f"SKIP: backend {a.backend}: {err}")
        return 77
    strategies = [None]
    if a.strategies:
        for line in probe.stdout.splitlines():
            w = line.split()
            if w and w[0].startswith(a.backend + "-") and "weighted" not in w[0]:
                strategies.append(w[0])
    if a.may_refuse:
        # strategies that refuse a half type by name (their dtype masks) are left out, listed
        refused = []
        with tempfile.NamedTemporaryFile(suffix=".raw") as f:
            f.write(b"\0\0")
            f.flush()
            for s in strategies[1:]:
                for dt in ("f16", "bf16"):
                    got, err = run(a.gpuhist, f.name, dt, ["-b", "1", "-r", "0:1"], a.backend, s)
                    if got is None and f"cannot histogram {dt} samples" in (err or ""):
                        refused.append(s)
                        break
        strategies = [s for s in strategies if s not in refused]
        print(f"refusing half samples by name: {refused}")
        if a.strategies and len(strategies) < 2:
            print("FAIL: every forced strategy refuses half samples")
            return 1
    print(f"NumPy {np.__version__}; backend {a.backend}; strategies "
          f"{[s or 'auto' for s in strategies]}")
    chk = Checker()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "all.raw")
        with open(path, "wb") as f:
            f.write(np.arange(65536, dtype="<u2").tobytes())
        for s in strategies:
            chk.may_decline = a.may_refuse and s is not None
            check_f16(chk, a.gpuhist, path, a.backend, s)
            check_bf16(chk, a.gpuhist, path, a.backend, s)
            for dt in ("f16", "bf16"):
                key = f"{dt} {a.backend} {s}" if s else None
                if key and key in chk.declined:
                    print(f"{key}: declined {chk.declined[key]} spec(s) outside its limits, "
                          f"ran {chk.ran.get(key, 0)}")
                    if not chk.ran.get(key):
                        chk.failures += 1
                        print(f"FAIL {key}: declined every case")
    for n in sorted(set(chk.notes)):
        print("note:", n)
    print(f"{chk.cases - chk.failures} passed, {chk.failures} failed")
    return 1 if chk.failures else 0


if __name__ == "__main__":
    sys.exit(main())
