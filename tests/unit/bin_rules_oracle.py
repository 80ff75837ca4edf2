#!/usr/bin/env python3
"""gpuhist_bins_rule_numpy() against numpy.histogram_bin_edges(a, bins=<rule>, range=...).

Draws random arrays for every rule and dtype (normal, uniform, heavy-tailed, few distinct values
(ties), constant, NaN and infinities, n from 1 to 70000, explicit ranges, equal range bounds,
ranges that keep nothing), runs test_bin_rules --batch on them all at once with the rules of
each NumPy major version (1 and 2), and compares:

  * the rules of the installed NumPy's major version, every case:
    - the edges, bit for bit (as float64; float32 data has float32 edges in both; -0.0 ==
      0.0; NumPy 2's f32 data without a range: gpuhist_linspace_f32's): every case must match;
    - the rule's width with NumPy's own (_hist_bin_<rule> of numpy.lib.histograms, in NumPy 2
      numpy.lib._histograms_impl, on the values NumPy keeps): bit for bit for sqrt, rice,
      scott, fd and stone. sturges, doane and auto call np.log2 / np.power, which NumPy may
      compute with its own SIMD code (SVML on AVX-512), so their widths are only counted when
      they differ, not failed (the rerun with that code disabled compares them bit for bit);
    - refusals: where NumPy raises (e.g. a bin count that is not finite), gpuhist must refuse;
      gpuhist may also refuse past its bin cap (2^24 by default);
  * under NumPy 2, NumPy 1.x's rules the same way where NumPy 1.x and 2 give the same edges
    (numpy2_rule_differs tells them apart with NumPy 2's own rule functions; scott's and
    doane's widths over more than 8192 values may then differ in the last bits: the order of
    np.mean / np.std's sums, their edges still compared);
  * under NumPy 1.x, NumPy 2's rules are not compared: NumPy 1.x cannot compute them.

Without a range NumPy refuses data with NaN or infinities; the reference is then NumPy on the
finite values, which is what gpuhist documents (docs/SEMANTICS.md, "Bin-count rules").

usage: bin_rules_oracle.py PATH/TO/test_bin_rules [--seed N] [--cases-per-cell N]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

try:  # NumPy 2 moved numpy/lib/histograms.py to numpy/lib/_histograms_impl.py
    from numpy.lib import _histograms_impl as nh
except ImportError:  # NumPy 1.x
    from numpy.lib import histograms as nh

RULES = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
STRICT_WIDTH = {"sqrt", "rice", "scott", "fd", "stone"}
DTYPES = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64"]
NP = {"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "u32": np.uint32,
      "i32": np.int32, "u64": np.uint64, "i64": np.int64, "f32": np.float32, "f64": np.float64}
CAP = 16777216
NUMPY_MAJOR = 2 if int(np.__version__.split(".")[0]) >= 2 else 1
NUMPY_2 = NUMPY_MAJOR == 2
OTHER_MAJOR = 3 - NUMPY_MAJOR
SUMMED = {"scott", "doane"}  # rules whose width takes np.mean / np.std
NUMPY1_BUFFER = 8192  # NumPy 1.x's add.reduce sums blocks of this many values


def _svml_features():
    """The AVX-512 features whose dispatch makes NumPy use SVML for log2/pow (on here)."""
    try:  # numpy._core since NumPy 2 (numpy.core is a deprecated alias there)
        from numpy._core._multiarray_umath import __cpu_features__ as feats
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as feats
        except ImportError:
            return []
    if not feats.get("AVX512_SKX"):
        return []
    names = ["AVX512F", "AVX512CD", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL",
             "AVX512_SPR", "X86_V4"]  # X86_V4: NumPy 2.5's name of the AVX512_SKX level
    return [n for n in names if feats.get(n)]


SVML_FEATURES = _svml_features()


def draw(rng, dt, kind, n):
    t = NP[dt]
    if kind == "normal":
        x = rng.standard_normal(n) * 10.0 ** rng.integers(0, 5) + rng.integers(-50, 50)
    elif kind == "uniform":
        x = rng.uniform(-1e3, 1e3, n)
    elif kind == "tail":
        x = rng.standard_cauchy(n) * 10
    elif kind == "ties":
        x = rng.integers(0, 4, n) * 7.0 + (rng.integers(-5, 5) if dt[0] != "u" else 3)
    elif kind == "constant":
        x = np.full(n, float(rng.integers(0, 100)))
    elif kind == "wide":
        x = rng.uniform(-1, 1, n) * (2.0 ** 62 if dt in ("i64", "u64") else 2.0 ** 30)
    else:
        raise ValueError(kind)
    if dt[0] == "f":
        x = x.astype(t)
        if rng.integers(0, 3) == 0 and n > 2:
            bad = rng.integers(0, n, max(1, n // 20))
            x[bad] = rng.choice([np.nan, np.inf, -np.inf], len(bad))
        return x
    info = np.iinfo(t)
    if dt[0] == "u":
        x = np.abs(x)
    lo, hi = float(info.min), float(info.max)
    x = np.clip(np.nan_to_num(x), lo, hi)
    x = np.where(x >= hi, float(info.max // 2), x)  # float(hi) may round above the type's max
    if dt in ("i8", "u8") and rng.integers(0, 4) == 0:
        x = rng.integers(info.min, int(info.max) + 1, n)
    return x.astype(t)


def pick_range(rng, x):
    fin = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    choice = rng.integers(0, 6)
    if choice == 0 or len(fin) == 0:
        return (-5.0, 37.5)
    lo, hi = float(np.min(fin)), float(np.max(fin))
    if choice == 1:
        return (lo, hi)
    if choice == 2:  # a part of the data
        a, b = sorted(rng.uniform(lo, hi, 2))
        return (float(a), float(b)) if a < b else (lo, hi + 1.0)
    if choice == 3:  # equal bounds: NumPy widens them by 0.5
        v = float(fin[rng.integers(0, len(fin))])
        return (v, v)
    if choice == 4:  # keeps nothing
        return (hi + 1.0, hi + 2.0)
    return (lo - abs(lo) * 0.3 - 1.0, hi + abs(hi) * 0.1 + 0.25)


def reference(x, rule, rng_):
    """NumPy's edges and width, or the exception it raises."""
    a = x
    if rng_ is None and a.dtype.kind == "f":
        a = a[np.isfinite(a)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            edges = np.histogram_bin_edges(a, bins=rule, range=rng_)
        except (ValueError, OverflowError, MemoryError) as e:
            return None, None, e
        first, last = nh._get_outer_edges(a, rng_)
        kept = a
        if rng_ is not None:
            keep = (a >= first) & (a <= last)
            kept = a[keep]
        width = None
        if kept.size:
            width = float(nh._hist_bin_selectors[rule](kept, (first, last)))
    reference.kept = kept.size
    return edges, width, None


def numpy2_rule_differs(x, rule, rng_, dt):
    """Why NumPy 2's edges for this case may not be NumPy 1.x's (the rules=1 answers are then
    not compared with the installed NumPy 2), or None. NumPy 2 widens an integer rule's width to at least 1, keeps float32 intermediates
    (the automatic range's linspace, min == max widened by 0.5) in float32 (NEP 50), and its
    "auto" is min(max(fd, sqrt / 2), sturges) where NumPy 1's is min(fd, sturges), sturges
    when fd is 0; float64 data with every other rule is binned alike by both."""
    if not NUMPY_2:
        return None
    if dt == "f32":
        return "float32 intermediates"
    a = x
    if rng_ is None and a.dtype.kind == "f":
        a = a[np.isfinite(a)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            first, last = nh._get_outer_edges(a, rng_)
        except ValueError:
            return None
        if rng_ is not None:
            a = a[(a >= first) & (a <= last)]
        if a.size == 0:
            return None
        width = float(nh._hist_bin_selectors[rule](a, (first, last)))
        if rule == "auto":
            fd = float(nh._hist_bin_fd(a, (first, last)))
            sturges = float(nh._hist_bin_sturges(a, (first, last)))
            numpy1 = min(fd, sturges) if fd else sturges
            if width != numpy1:
                return "auto's relaxed fd"
    if a.dtype.kind in "uib" and width and width < 1:  # (negative: a wrapped int8 IQR)
        return "integer width below 1"
    return None


def bits(v):
    v = float(v)
    return np.float64(0.0 if v == 0.0 else v).tobytes()


def compare(cases, results, svml, differs, numpy1_rules):
    """Compare the driver's answers with NumPy; `differs(x, rule, range, dt)` names why a case
    is left out (None: compared). numpy1_rules: the answers are NumPy 1.x's rules checked
    under NumPy 2, whose np.mean / np.std sum more than 8192 values in another order, so
    scott's and doane's widths there may differ in the last bits (their edges still compared).
    @return the failures."""
    failures = []
    # cases, edges equal, widths off, refused, widths off by NumPy 2's order of sums
    per_rule = {r: [0, 0, 0, 0, 0] for r in RULES}
    left_out = {}  # why: cases not compared
    for (rule, dt, kind, n, r, x), res in zip(cases, results):
        label = "%s %s %s n=%d range=%r" % (rule, dt, kind, n, r)
        why = differs(x, rule, r, dt)
        if why:
            left_out[why] = left_out.get(why, 0) + 1
            continue
        edges, width, err = reference(x, rule, r)
        per_rule[rule][0] += 1
        parts = res.split(" ")
        if parts[0] == "err":
            crowded = err is None and not np.all(np.diff(np.asarray(edges, np.float64)) > 0)
            if err is None and not crowded and not (len(edges) - 1 > CAP and "allowed" in res):
                failures.append("%s: gpuhist refused (%s), NumPy gave %d bins"
                                % (label, res, len(edges) - 1))
            else:
                per_rule[rule][3] += 1
            continue
        if err is not None:
            failures.append("%s: NumPy raised %r, gpuhist gave %s bins" % (label, err, parts[1]))
            continue
        bins = int(parts[1])
        got_width = float.fromhex(parts[3])
        got = [float.fromhex(v) for v in parts[5:]]
        want = [float(v) for v in np.asarray(edges, dtype=np.float64)]
        if len(got) != len(want) or any(bits(a) != bits(b) for a, b in zip(got, want)):
            failures.append("%s: %d bins [%r .. %r], NumPy %d bins [%r .. %r] (width %r vs %r)"
                            % (label, bins, got[0], got[-1], len(want) - 1, want[0], want[-1],
                               got_width, width))
            continue
        per_rule[rule][1] += 1
        if width is not None and bits(got_width) != bits(width):
            if numpy1_rules and rule in SUMMED and reference.kept > NUMPY1_BUFFER:
                per_rule[rule][4] += 1
            elif rule in STRICT_WIDTH or not svml:
                failures.append("%s: width %r, NumPy %r (edges equal)" % (label, got_width, width))
            else:
                per_rule[rule][2] += 1
    for rule in RULES:
        c, ok, wd, refused, summed = per_rule[rule]
        print("    %-8s %4d cases: %4d equal edges, %3d refused (NumPy raises, or its edges do not increase or pass the cap)%s%s" %
              (rule, c, ok, refused,
               ", %d widths off in the last bits (NumPy's SIMD log2/pow)" % wd if wd else "",
               ", %d widths off in the last bits (NumPy 2's order of sums)" % summed
               if summed else ""))
    for why, k in sorted(left_out.items()):
        print("    %4d cases not compared: NumPy %s's rules differ from NumPy 1.x's there (%s)"
              % (k, np.__version__, why))
    print("    %d compared, %d not, %d failed" % (
        sum(v[0] for v in per_rule.values()), sum(left_out.values()), len(failures)))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("driver")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("GPUHIST_TEST_SEED", 20240611)))
    ap.add_argument("--cases-per-cell", type=int, default=25)
    ap.add_argument("--no-rerun", action="store_true")
    args = ap.parse_args()
    svml = bool(SVML_FEATURES)
    print("bin_rules_oracle: NumPy %s, seed %d, %s" % (
        np.__version__, args.seed,
        "np.log2/np.power by NumPy's AVX-512 code (SVML)" if svml else "np.log2/np.power by libm"))
    rng = np.random.default_rng(args.seed)
    kinds = ["normal", "uniform", "tail", "ties", "constant", "wide"]
    sizes = [1, 2, 3, 5, 8, 17, 100, 129, 1000, 8191, 8193, 20000]
    cases = []
    with tempfile.TemporaryDirectory() as d:
        lines = []
        for rule in RULES:
            for dt in DTYPES:
                for c in range(args.cases_per_cell):
                    kind = kinds[rng.integers(0, len(kinds))]
                    n = int(sizes[rng.integers(0, len(sizes))])
                    if rule == "stone" and n > 8193:
                        n = 8193  # NumPy's stone is O(n sqrt n)
                    x = draw(rng, dt, kind, n)
                    r = pick_range(rng, x) if rng.integers(0, 2) else None
                    path = os.path.join(d, "c%d.bin" % len(cases))
                    x.astype(x.dtype.newbyteorder("<")).tofile(path)
                    rs = "-" if r is None else "%s %s" % (float(r[0]).hex(), float(r[1]).hex())
                    lines.append("%s %s %s %s\n" % (path, dt, rule, rs))
                    cases.append((rule, dt, kind, n, r, x))
        # A few large ones: chunks past 65536 (float32 means divide in float64 there).
        for rule in ["scott", "doane", "fd", "auto", "sqrt"]:
            for dt in ["f32", "f64", "i32", "u8"]:
                x = draw(rng, dt, "normal", 70001)
                path = os.path.join(d, "c%d.bin" % len(cases))
                x.tofile(path)
                lines.append("%s %s %s -\n" % (path, dt, rule))
                cases.append((rule, dt, "normal", 70001, None, x))
        listing = os.path.join(d, "list.txt")
        with open(listing, "w") as f:
            f.writelines(lines)
        results = {}
        for major in (NUMPY_MAJOR, OTHER_MAJOR):
            outp = os.path.join(d, "out%d.txt" % major)
            p = subprocess.run([args.driver, "--batch", listing, outp, str(major)],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(p.stdout, p.stderr)
                return 1
            with open(outp) as f:
                results[major] = [ln.rstrip("\n") for ln in f]
            if len(results[major]) != len(cases):
                print("driver answered %d of %d cases" % (len(results[major]), len(cases)))
                return 1

    # The installed NumPy's rules: every case.
    print("  rules of NumPy %d (the installed NumPy's), every case:" % NUMPY_MAJOR)
    failures = compare(cases, results[NUMPY_MAJOR], svml, lambda *c: None, False)
    # The other major version's rules, where the installed NumPy can tell them.
    if NUMPY_MAJOR == 2:
        print("  rules of NumPy 1.x, the cases where NumPy 1.x's rules give NumPy 2's edges:")
        failures += ["(rules 1) " + m for m in
                     compare(cases, results[1], svml, numpy2_rule_differs, True)]
    else:
        print("  rules of NumPy 2: not compared (NumPy %s cannot compute them; run this test "
              "under NumPy 2 for them)" % np.__version__)
    for msg in failures[:40]:
        print("FAIL " + msg)
    print("%d failed" % len(failures))
    rc = 1 if failures else 0
    if svml and not args.no_rerun:
        # The same cases again with NumPy's AVX-512 dispatch off: its log2 and pow are then
        # the C library's, and every width must be NumPy's to the bit.
        print("again with NPY_DISABLE_CPU_FEATURES=%s:" % " ".join(SVML_FEATURES))
        sys.stdout.flush()
        env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(SVML_FEATURES))
        again = subprocess.run([sys.executable, __file__, args.driver, "--seed", str(args.seed),
                                "--cases-per-cell", str(args.cases_per_cell), "--no-rerun"],
                               env=env)
        rc = rc or again.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main())
