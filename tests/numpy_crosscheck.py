#!/usr/bin/env python3
"""NumPy cross-check of the gpuhist command.

Drives the `gpuhist` CLI (JSON output) on random float32 / float64 / integer data and compares
counts, edges and the underflow / overflow / nan / total tallies with numpy.histogram and
numpy.bincount, exactly (integers equal, edges equal as doubles).

Covered: explicit ranges (half-open and NumPy's last-edge-inclusive rule), the automatic range,
explicit edges, bincount with and without a lower bound and a bin count, CLAMP outliers,
interleaved channels, 8/16-bit defaults (one bin per value), data exactly on the edges, NaN and
infinities, awkward sizes, and every input path (.npy little and big endian, raw, text); f64
even bins under each kind of fast_even.h certificate (direct, checked, refused).
N-D (--dims): numpy.histogramdd / histogram2d counts, edges, weights and density on float64
points (ranges, auto range, edges, points on edges, NaN, infinities), float32 points (the 1-D
edges per axis, histogramdd's counts on them), a u8 RGB 32^3 joint histogram, integer bins and
64-bit integers, from 2-D .npy in C and Fortran order, raw and text.

Usage:
    numpy_crosscheck.py --gpuhist build/cli/gpuhist [--backend cpu|cuda|opencl|auto]
                        [--strategy NAME|all] [--quick] [--seed N] [-v]
Exit status: 0 all equal, 1 a mismatch or failure, 77 when the backend has no device (skipped).

Notes on matching NumPy exactly (see docs/SEMANTICS.md):
  * numpy.histogram always puts x == upper into the last bin, so gpuhist is run with
    --last-inclusive when compared against it.
  * Automatic range: NumPy 2 builds float32 data's edges *in float32* (its min/max are float32
    scalars, so linspace runs in float32), NumPy 1.x in float64, rounded to float32; gpuhist
    follows either (--numpy-rules 2, the default, or 1). The reference is the installed NumPy's
    own np.histogram(x, bins) on the finite values (NumPy refuses to auto-range data with NaN or
    infinities; gpuhist ignores them), run with --numpy-rules set to its major version; the other
    NumPy's edges are checked against a model of them (f32_linspace_model, or NumPy's float64
    linspace of the Python-float min and max).
  * numpy.histogram decides which samples to keep by comparing with the *unrounded* range
    (Python floats), and only then bins with the float32 edges. For a range that is not exactly
    representable in float32, a float32 sample equal to the rounded end edge can be kept by one
    and not the other. gpuhist's rule is the edges it reports. Explicit ranges used with float32
    data here are therefore float32-exact (so both rules agree); the edges are still compared.
  * NumPy converts 64-bit integers to float64 before comparing, which is inexact above 2^53;
    gpuhist compares exactly. Integer data here stays below 2^53 in magnitude.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

SKIP = 77
NUMPY_2 = int(np.__version__.split(".")[0]) >= 2
NUMPY_MAJOR = 2 if NUMPY_2 else 1
BUFFER = 8192  # NumPy's iterator buffer (np.getbufsize())


def pairwise_total(a):
    """NumPy's pairwise sum of a contiguous 1-D float64 array, built from NumPy's own sums:
    every NumPy sums up to 8192 contiguous values pairwise in one piece (NumPy 1.x sums longer
    arrays buffer by buffer), and pairwise summation splits longer arrays into two halves, the
    first a multiple of 8 values."""
    if a.size <= BUFFER:
        return a.sum()
    n2 = a.size // 2
    n2 -= n2 % 8
    return pairwise_total(a[:n2]) + pairwise_total(a[n2:])


def numpy2_total(h):
    """NumPy 2's hist.sum() in histogramdd (hist the core of an array with an outlier bin at
    each end of every axis), the order gpuhist follows (docs/SEMANTICS.md): axes of one bin
    dropped, the innermost axes whose bins fit the buffer (at least one) make a block, chunks of
    as many blocks as fit the buffer (at least one) along the next axis out, never across its
    end, each summed pairwise, the chunks' sums added in C order."""
    shape = [k for k in h.shape if k != 1]
    flat = np.ascontiguousarray(h, dtype=np.float64).reshape(-1)
    i = len(shape) - 1
    block = shape[-1] if shape else 1
    while i > 0 and block * shape[i - 1] <= BUFFER:
        i -= 1
        block *= shape[i]
    if i <= 0:
        return pairwise_total(flat)
    outer = shape[i - 1]
    per_chunk = max(1, BUFFER // block)
    total = None
    for run in flat.reshape(-1, outer * block):
        for j in range(0, outer, per_chunk):
            t = pairwise_total(run[j * block:(j + per_chunk) * block])
            total = t if total is None else total + t
    return total


class Checker:
    def __init__(self, args, workdir):
        self.gpuhist = args.gpuhist
        self.backend = args.backend
        self.strategies = [None]
        self.verbose = args.verbose
        self.workdir = workdir
        self.cases = 0
        self.runs = 0
        self.failures = []
        self.declined = 0
        self.file_no = 0

    # ---- running gpuhist --------------------------------------------------------------------

    def cli(self, cli_args, path, strategy):
        cmd = [self.gpuhist, "-f", "json", "--no-progress", "-B", self.backend] + cli_args
        if strategy:
            cmd += ["-s", strategy]
        cmd.append(path)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.runs += 1
        if self.verbose:
            print(" ".join(cmd), file=sys.stderr)
        return cmd, proc

    def save(self, data, how):
        """Write `data` the way `how` says; return (path, extra CLI arguments)."""
        self.file_no += 1
        base = os.path.join(self.workdir, "d%d" % self.file_no)
        if how == "npy":
            np.save(base + ".npy", data)
            return base + ".npy", []
        if how == "npy-be":
            np.save(base + ".npy", data.astype(data.dtype.newbyteorder(">")))
            return base + ".npy", []
        if how == "raw":
            data.astype(data.dtype.newbyteorder("<")).tofile(base + ".bin")
            return base + ".bin", ["-t", data.dtype.name]
        if how == "text":
            # Text must read back to the same values: repr-exact formats.
            if data.dtype.kind == "f":
                fmt = "%.9g" if data.dtype == np.float32 else "%.17g"
                np.savetxt(base + ".txt", data.reshape(-1), fmt=fmt)
            else:
                np.savetxt(base + ".txt", data.reshape(-1), fmt="%d")
            return base + ".txt", ["--text", "-t", data.dtype.name]
        raise ValueError(how)

    # ---- one case -----------------------------------------------------------------------------

    def check(self, name, data, cli_args, expect, how="npy", channels=None):
        """Run gpuhist on `data` with `cli_args`; `expect` is a list (one per histogrammed channel)
        of dicts with counts, edges, underflow, overflow, nan, total."""
        self.cases += 1
        path, extra = self.save(data, how)
        for strategy in self.strategies:
            cmd, proc = self.cli(extra + cli_args, path, strategy)
            label = "%s [%s, %s, %s]" % (name, how, self.backend, strategy or "auto")
            if proc.returncode != 0:
                # Exit 2 for a forced strategy here means it declined this request (unsupported);
                # the same arguments are valid, as the auto run shows.
                if strategy and proc.returncode == 2:
                    self.declined += 1
                    continue
                self.fail(label, "exit %d: %s" % (proc.returncode, proc.stderr.strip()), cmd)
                continue
            try:
                got = json.loads(proc.stdout)
            except ValueError as e:
                self.fail(label, "bad JSON: %s" % e, cmd)
                continue
            self.compare(label, got, expect, channels is not None, cmd)

    def compare(self, label, got, expect, per_channel, cmd):
        counts = got["counts"] if per_channel else [got["counts"]]
        problems = []
        if len(counts) != len(expect):
            problems.append("%d histograms, expected %d" % (len(counts), len(expect)))
        edges = np.array(got["edges"], dtype=np.float64)
        ref_edges = np.asarray(expect[0]["edges"], dtype=np.float64)
        if edges.shape != ref_edges.shape or not np.array_equal(edges, ref_edges):
            bad = "?"
            if edges.shape == ref_edges.shape:
                i = int(np.nonzero(edges != ref_edges)[0][0])
                bad = "edge %d: %r vs numpy %r" % (i, edges[i], ref_edges[i])
            problems.append("edges differ (%d vs %d values; %s)" % (len(edges), len(ref_edges), bad))
        for c, (g, e) in enumerate(zip(counts, expect)):
            ref = [int(v) for v in e["counts"]]
            if g != ref:
                diff = [i for i in range(min(len(g), len(ref))) if g[i] != ref[i]][:5]
                problems.append("channel %d counts differ (%d vs %d bins; first bins %s: %s vs %s)"
                                % (c, len(g), len(ref), diff, [g[i] for i in diff],
                                   [ref[i] for i in diff]))
        for key in ("underflow", "overflow", "nan", "total"):
            want = sum(int(e[key]) for e in expect)
            if got[key] != want:
                problems.append("%s %d, numpy %d" % (key, got[key], want))
        if problems:
            self.fail(label, "; ".join(problems), cmd)

    def fail(self, label, why, cmd):
        self.failures.append(label)
        print("FAIL %s: %s\n     %s" % (label, why, " ".join(cmd)))


# ---- references ------------------------------------------------------------------------------


def tallies(x, lo_edge, hi_edge, last_inclusive):
    """underflow / overflow / nan / total of samples x against the first and last edge."""
    xf = x.astype(np.float64) if x.dtype.kind == "f" else x
    nan = int(np.count_nonzero(np.isnan(xf))) if x.dtype.kind == "f" else 0
    under = int(np.count_nonzero(xf < lo_edge))
    over = int(np.count_nonzero(xf > hi_edge if last_inclusive else xf >= hi_edge))
    return dict(underflow=under, overflow=over, nan=nan, total=int(x.size))


def ref_histogram(x, bins, rng_lo=None, rng_hi=None, edges=None, last_inclusive=True,
                  clamp=False):
    """numpy.histogram, plus the tallies gpuhist reports, plus gpuhist's rules where they are
    options (half-open last bin, CLAMP)."""
    finite_or_nan = x
    if edges is not None:
        counts, e = np.histogram(finite_or_nan, bins=np.asarray(edges, dtype=np.float64))
    else:
        counts, e = np.histogram(finite_or_nan, bins=bins, range=(rng_lo, rng_hi))
    counts = counts.astype(np.int64)
    e64 = e.astype(np.float64)
    t = tallies(x, e64[0], e64[-1], last_inclusive)
    if not last_inclusive:
        # NumPy always includes the last edge; the half-open rule moves those samples out.
        on_last = int(np.count_nonzero(x.astype(np.float64) == e64[-1]))
        counts[-1] -= on_last
    if clamp:
        counts[0] += t["underflow"]
        counts[-1] += t["overflow"]
    return dict(counts=counts, edges=e64, **t)


def ref_bincount(x, lo, bins):
    x = x.astype(np.int64)
    inside = x[(x >= lo) & (x < lo + bins)]
    counts = np.bincount(inside - lo, minlength=bins)
    return dict(counts=counts, edges=np.arange(lo, lo + bins + 1, dtype=np.float64),
                underflow=int(np.count_nonzero(x < lo)),
                overflow=int(np.count_nonzero(x >= lo + bins)), nan=0, total=int(x.size))


def f32_exact(v):
    return float(np.float32(v))


def f32_linspace_model(lo, hi, bins):
    """NumPy 2's edges of float32 data without a range, in float32 array arithmetic (the same
    under either NumPy): np.linspace(float32(lo), float32(hi), bins + 1) computed in float32."""
    L, U = np.float32(lo), np.float32(hi)
    with np.errstate(all="ignore"):
        delta = np.float32(U - L)
        step = np.float32(delta / np.float32(bins))
        y = np.arange(bins + 1, dtype=np.float32)
        y = (y / np.float32(bins)) * delta if step == 0 else y * step
        y = y + L
    y[-1] = U
    return y.astype(np.float64)


def around_edges(e, dtype, lo, hi):
    """The edges e as `dtype` and their neighbours 1 to 3 ulps away, kept within [lo, hi]."""
    e = np.asarray(e).astype(dtype)
    out, up, down = [e], e, e
    for _ in range(3):
        up = np.nextafter(up, dtype(np.inf))
        down = np.nextafter(down, dtype(-np.inf))
        out += [up, down]
    v = np.concatenate(out)
    return v[(v >= lo) & (v <= hi)]


# ---- the cases -------------------------------------------------------------------------------


def run_cases(ck, rng, quick):
    sizes = [1, 2, 17, 1000, 65537] + ([] if quick else [1000003])
    float_types = [np.float32, np.float64]
    ways = ["npy", "raw", "npy-be", "text"]

    def float_data(dtype, n, kind):
        if kind == "normal":
            x = rng.normal(0.3, 1.7, n)
        elif kind == "uniform":
            x = rng.uniform(-3, 5, n)
        elif kind == "constant":
            x = np.full(n, 1.25)
        else:  # specials: NaN, infinities, -0.0, tiny denormals mixed into normal data
            x = rng.normal(0, 2, n)
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324, -5e-324])
            idx = rng.integers(0, n, max(1, n // 10))
            x[idx] = specials[rng.integers(0, len(specials), len(idx))]
        return x.astype(dtype)

    # 1. Even bins over an explicit range (float32-exact, see the module notes), last edge
    #    inclusive as NumPy, then half-open as gpuhist's default.
    for dtype in float_types:
        for n in sizes:
            for kind in ("normal", "uniform", "constant", "specials"):
                bins = int(rng.choice([1, 3, 7, 64, 256, 1000, 4097]))
                lo = f32_exact(rng.uniform(-4, 0))
                hi = f32_exact(lo + rng.uniform(0.5, 8))
                x = float_data(dtype, n, kind)
                how = ways[ck.cases % len(ways)] if n <= 65537 else "npy"
                ck.check("even %s n=%d %s bins=%d range=%r:%r" % (np.dtype(dtype).name, n, kind,
                                                                   bins, lo, hi),
                         x, ["-b", str(bins), "-r", "%r:%r" % (lo, hi), "--last-inclusive"],
                         [ref_histogram(x, bins, lo, hi)], how=how)
                if quick and kind != "specials":
                    continue  # --quick: the half-open rule once per size
                ck.check("even half-open %s n=%d %s bins=%d" % (np.dtype(dtype).name, n, kind, bins),
                         x, ["-b", str(bins), "-r", "%r:%r" % (lo, hi)],
                         [ref_histogram(x, bins, lo, hi, last_inclusive=False)])

    # 2. Samples exactly on the edges (the float32 edges NumPy builds), and next to them.
    for dtype in float_types:
        for bins in (10, 100, 255):
            lo, hi = -1.0, f32_exact(2.3)
            _, e = np.histogram(np.zeros(1, dtype=dtype), bins=bins, range=(lo, hi))
            e = e.astype(dtype)
            picks = e[rng.integers(0, len(e), 5000)]
            near = np.concatenate([picks, np.nextafter(picks, dtype(-np.inf)),
                                   np.nextafter(picks, dtype(np.inf))]).astype(dtype)
            ck.check("on-edges %s bins=%d" % (np.dtype(dtype).name, bins), near,
                     ["-b", str(bins), "-r", "%r:%r" % (lo, hi), "--last-inclusive"],
                     [ref_histogram(near, bins, lo, hi)])

    # 3. Automatic range (the default for float data): the installed NumPy's np.histogram(x,
    #    bins) on the finite values, with --numpy-rules set to its major version (on the CPU
    #    backend also without it: the default); "edges" adds NumPy's every edge and its
    #    neighbours 3 ulps either way. The other NumPy's rule is checked against its model (every
    #    kind on the CPU backend, "edges" on the others): NumPy 1.x's edges are
    #    NumPy's float64 linspace of the Python-float min and max (rounded to float32), NumPy 2's
    #    f32_linspace_model (checked against NumPy 2 itself when it is installed).
    major = NUMPY_MAJOR
    for dtype in float_types:
        for n in sizes:
            for kind in ("normal", "constant", "specials", "edges"):
                x = float_data(dtype, n, "normal" if kind == "edges" else kind)
                finite = x[np.isfinite(x)]
                if finite.size == 0:
                    continue
                bins = int(rng.choice([1, 10, 256, 999, 4097, 65536]))
                if kind == "edges":
                    e = np.histogram_bin_edges(finite, bins)
                    x = np.concatenate([x, around_edges(e, dtype, finite.min(), finite.max())])
                    rng.shuffle(x)
                    finite = x[np.isfinite(x)]
                counts, e = np.histogram(finite, bins)
                e64 = e.astype(np.float64)
                mine = dict(counts=counts.astype(np.int64), edges=e64,
                            **tallies(x, e64[0], e64[-1], True))
                lo, hi = float(finite.min()), float(finite.max())
                if lo == hi:  # NumPy 1.x widens in float64, NumPy 2 float32 data in float32
                    lo, hi = lo - 0.5, hi + 0.5  # (f32_linspace_model rounds them to float32)
                if major == 2:
                    other = ref_histogram(x, bins, lo, hi)  # NumPy 1.x's edges
                else:
                    model = (f32_linspace_model(lo, hi, bins) if dtype == np.float32
                             else np.histogram_bin_edges(finite, bins).astype(np.float64))
                    other = dict(counts=np.histogram(finite, model)[0].astype(np.int64),
                                 edges=model, **tallies(x, model[0], model[-1], True))
                if major == 2 and dtype == np.float32 and \
                        not np.array_equal(f32_linspace_model(lo, hi, bins), e64):
                    ck.fail("auto f32 model n=%d %s bins=%d" % (n, kind, bins),
                            "f32_linspace_model differs from NumPy 2's edges", [])
                how = "npy" if n > 1000 else ways[ck.cases % len(ways)]
                name = "auto %s n=%d %s bins=%d" % (np.dtype(dtype).name, n, kind, bins)
                ck.check(name + " (NumPy %d)" % major, x,
                         ["-b", str(bins), "--numpy-rules", str(major)], [mine], how=how)
                # the option's plumbing on the CPU backend; a device backend (each run pays the
                # device's start) maps the other NumPy's edges where it matters, on "edges"
                if ck.backend == "cpu":
                    ck.check(name + " (default)", x, ["-b", str(bins)],
                             [mine if major == 2 else other], how=how)
                if ck.backend == "cpu" or kind == "edges":
                    ck.check(name + " (NumPy %d's rule)" % (3 - major), x,
                             ["-b", str(bins), "--numpy-rules", str(3 - major)], [other],
                             how=how)

    # 4. Explicit edges (not evenly spaced), float and integer data.
    for dtype in float_types + [np.int32, np.int64]:
        for n in sizes[:5]:
            k = int(rng.integers(2, 60))
            edges = np.unique(np.round(rng.uniform(-5, 5, k), 3))
            if len(edges) < 2:
                continue
            if np.dtype(dtype).kind == "f":
                x = float_data(dtype, n, "specials" if n > 10 else "normal")
            else:
                x = rng.integers(-6, 7, n).astype(dtype)
            arg = ",".join(repr(float(v)) for v in edges)
            ck.check("edges %s n=%d k=%d" % (np.dtype(dtype).name, n, len(edges)), x,
                     ["-e", arg, "--last-inclusive"], [ref_histogram(x, None, edges=edges)])
            if quick and n != 1000:
                continue
            ck.check("edges half-open %s n=%d" % (np.dtype(dtype).name, n), x, ["-e", arg],
                     [ref_histogram(x, None, edges=edges, last_inclusive=False)])

    # 5. Integer data: even bins over a range and the automatic range.
    int_types = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
    for dtype in int_types:
        info = np.iinfo(dtype)
        top = min(int(info.max), 2**40)
        bottom = max(int(info.min), -2**40)
        for n in sizes[:5]:
            x = rng.integers(bottom, top, n, dtype=np.int64, endpoint=True).astype(dtype)
            bins = int(rng.choice([1, 5, 100, 256]))
            lo = float(rng.integers(bottom, 0) if bottom < 0 else 0)
            hi = float(top // 2 + 1)
            ck.check("even %s n=%d bins=%d" % (np.dtype(dtype).name, n, bins), x,
                     ["-b", str(bins), "-r", "%r:%r" % (lo, hi), "--last-inclusive"],
                     [ref_histogram(x, bins, lo, hi)], how=ways[ck.cases % len(ways)])
            if np.dtype(dtype).itemsize >= 4:
                mn, mx = float(x.min()), float(x.max())
                if mn == mx:
                    mn, mx = mn - 0.5, mx + 0.5
                ck.check("auto %s n=%d bins=%d" % (np.dtype(dtype).name, n, bins), x,
                         ["-b", str(bins)], [ref_histogram(x, bins, mn, mx)])

    # 6. 8/16-bit defaults: one bin per value over the whole type (no options at all).
    for dtype in (np.uint8, np.int8, np.uint16, np.int16):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, 100003, endpoint=True).astype(dtype)
        ck.check("default %s" % np.dtype(dtype).name, x, [],
                 [ref_bincount(x, int(info.min), int(info.max) - int(info.min) + 1)])

    # 7. bincount: --integer 0 without -b reaches the maximum; with a lower bound and -b.
    for dtype in (np.int32, np.uint32, np.int64, np.uint16, np.uint8):
        for n in sizes[:5]:
            x = rng.integers(0, 300 if np.dtype(dtype).itemsize > 1 else 255, n).astype(dtype)
            ref = np.bincount(x.astype(np.int64))
            if np.dtype(dtype).itemsize >= 4:
                ck.check("bincount %s n=%d" % (np.dtype(dtype).name, n), x, ["--integer", "0"],
                         [dict(counts=ref, edges=np.arange(len(ref) + 1, dtype=np.float64),
                               underflow=0, overflow=0, nan=0, total=n)])
            lo, bins = int(rng.integers(-3, 50)), int(rng.integers(1, 400))
            ck.check("bincount %s n=%d lo=%d bins=%d" % (np.dtype(dtype).name, n, lo, bins), x,
                     ["--integer", str(lo), "-b", str(bins)], [ref_bincount(x, lo, bins)],
                     how=ways[ck.cases % len(ways)])

    # 8. CLAMP outliers.
    for dtype in float_types + [np.int32]:
        x = (float_data(dtype, 20011, "specials") if np.dtype(dtype).kind == "f"
             else rng.integers(-100, 100, 20011).astype(dtype))
        ck.check("clamp %s" % np.dtype(dtype).name, x,
                 ["-b", "13", "-r", "-1.5:2.25", "--outliers", "clamp", "--last-inclusive"],
                 [ref_histogram(x, 13, -1.5, 2.25, clamp=True)])

    # 9. Interleaved channels: C channels, first A histogrammed, one histogram each.
    for dtype, C, A in ((np.uint8, 3, 3), (np.uint8, 4, 3), (np.float32, 2, 1),
                        (np.uint16, 4, 4), (np.float64, 3, 2)):
        pixels = 30011
        if np.dtype(dtype).kind == "f":
            x = rng.normal(0, 1, pixels * C).astype(dtype)
            args = ["--channels", "%d:%d" % (C, A), "-b", "50", "-r", "-2:2", "--last-inclusive"]
            refs = [ref_histogram(x.reshape(-1, C)[:, c], 50, -2.0, 2.0) for c in range(A)]
        else:
            info = np.iinfo(dtype)
            x = rng.integers(0, info.max, pixels * C, endpoint=True).astype(dtype)
            args = ["--channels", "%d:%d" % (C, A)]
            refs = [ref_bincount(x.reshape(-1, C)[:, c], 0, int(info.max) + 1) for c in range(A)]
        ck.check("channels %s %d:%d" % (np.dtype(dtype).name, C, A), x.reshape(-1, C), args, refs,
                 channels=C)

    # 10. f64 even bins under each kind of double-domain certificate (fast_even.h; on CUDA
    #     cuda-fast-smem's certified f64 kernel takes the first two, its general kernel the
    #     third): direct ([0, 1) with 256 bins), checked ([-3.7, 12.9) with 1000), refused
    #     (subnormal hazards: [-1e-300, 1e-300) with 64). Samples on and next to every edge,
    #     uniform over the range and beyond, specials; both last-edge rules.
    for lo, hi, bins in ((0.0, 1.0, 256), (-3.7, 12.9, 1000), (-1e-300, 1e-300, 64)):
        _, e = np.histogram(np.zeros(1), bins=bins, range=(lo, hi))
        near = np.concatenate([e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf)])
        width = hi - lo
        x = np.concatenate([np.repeat(near, 3),
                            rng.uniform(lo - 0.1 * width, hi + 0.1 * width,
                                        20000 if quick else 300001),
                            np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 5e-324,
                                      -5e-324, 2.2250738585072009e-308, 1.7976931348623157e308,
                                      -1.7976931348623157e308, lo, hi])])
        rng.shuffle(x)
        rng_arg = "%r:%r" % (lo, hi)
        ck.check("f64 certificate [%r, %r) bins=%d" % (lo, hi, bins), x,
                 ["-b", str(bins), "-r", rng_arg, "--last-inclusive"],
                 [ref_histogram(x, bins, lo, hi)])
        ck.check("f64 certificate half-open [%r, %r) bins=%d" % (lo, hi, bins), x,
                 ["-b", str(bins), "-r", rng_arg],
                 [ref_histogram(x, bins, lo, hi, last_inclusive=False)])

    # 11. NumPy's bin-count rules (-b RULE): against the installed NumPy's own
    #     np.histogram(x, rule[, range]) (its counts and edges), --numpy-rules set to its major
    #     version; f32 (NumPy 2: float32 edges without a range), f64, i32, i16 and u8 data,
    #     normal, uniform and a tight bulk with a few far values (fd and auto then differ), with
    #     and without a range. NumPy refuses non-finite data with a rule: finite data only.
    major = NUMPY_MAJOR
    rules = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
    n = 3000 if quick else 40000
    for dtype in (np.float32, np.float64, np.int32, np.int16, np.uint8):
        for kind in ("normal", "uniform", "bulk"):
            if kind == "normal":
                x = rng.normal(0.3, 1.7, n)
            elif kind == "uniform":
                x = rng.uniform(-3, 5, n)
            else:
                x = np.concatenate([rng.normal(1, 0.01, n - 20), rng.uniform(-50, 50, 20)])
            if np.dtype(dtype).kind in "iu":
                info = np.iinfo(dtype)
                x = np.clip(np.round(x * 10) + (100 if dtype == np.uint8 else 0), info.min,
                            info.max)
                lo, hi = (80.0, 160.0) if dtype == np.uint8 else (-25.0, 40.0)
            else:
                lo, hi = f32_exact(-2.5), f32_exact(4.0)
            x = x.astype(dtype)
            for rule in rules:
                for ranged in (False, True):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # stone: "may be suboptimal"
                        counts, e = (np.histogram(x, rule, range=(lo, hi)) if ranged
                                     else np.histogram(x, rule))
                    e64 = e.astype(np.float64)
                    expect = dict(counts=counts.astype(np.int64), edges=e64,
                                  **tallies(x, e64[0], e64[-1], True))
                    args = ["-b", rule, "--numpy-rules", str(major)]
                    if ranged:
                        args += ["-r", "%r:%r" % (lo, hi)]
                    ck.check("rule %s %s %s%s (NumPy %d)" % (rule, np.dtype(dtype).name, kind,
                                                            " range" if ranged else "", major),
                             x, args, [expect], how="npy")


# ---- N-D histograms (--dims) -------------------------------------------------------------------


def check_nd(ck, name, pts, args, ref_counts, ref_edges=None, how="npy", weights=None,
             ref_sums=None, ref_density=None, f32_edges_of=None):
    """Run `gpuhist --dims D` on points `pts` (n, D) and compare with NumPy's histogramdd results:
    counts (and sums, density) exactly, the edges of each axis exactly. For float32 points the
    edges are the library's 1-D edges (numpy.histogram_bin_edges of each column: f32_edges_of
    gives (bins, range) per axis) and the counts numpy.histogramdd's on those edges."""
    ck.cases += 1
    ck.file_no += 1
    base = os.path.join(ck.workdir, "nd%d" % ck.file_no)
    D = pts.shape[1]
    if how == "npy":
        path, extra = base + ".npy", ["--dims", str(D)]
        np.save(path, pts)
    elif how == "fortran":
        path, extra = base + ".npy", ["--dims", "auto"]
        np.save(path, np.asfortranarray(pts))
    elif how == "raw":
        path, extra = base + ".bin", ["--dims", str(D), "-t", DT_NAMES[pts.dtype.name]]
        pts.astype(pts.dtype.newbyteorder("<")).tofile(path)
    else:  # text
        path, extra = base + ".txt", ["--dims", str(D), "--text", "-t", DT_NAMES[pts.dtype.name]]
        with open(path, "w") as f:
            for row in pts:
                f.write(" ".join(repr(float(v)) if pts.dtype.kind == "f" else str(int(v))
                                 for v in row) + "\n")
    if weights is not None:
        wpath = base + ".w.npy"
        np.save(wpath, weights)
        extra += ["--weights", wpath]
    for strategy in ck.strategies:
        cmd, proc = ck.cli(extra + args, path, strategy)
        label = "%s [%s, %s, %s]" % (name, how, ck.backend, strategy or "auto")
        if proc.returncode != 0:
            if strategy and proc.returncode == 2:
                ck.declined += 1
                continue
            ck.fail(label, "exit %d: %s" % (proc.returncode, proc.stderr.strip()), cmd)
            continue
        got = json.loads(proc.stdout)
        problems = []
        edges = [np.array(e, dtype=np.float64) for e in got["edges"]]
        want_edges = ref_edges
        if f32_edges_of is not None:
            # auto: the edges of the NumPy whose rules were asked (--numpy-rules, default 2):
            # the installed one's, else their model
            mode = (int(args[args.index("--numpy-rules") + 1]) if "--numpy-rules" in args
                    else 2)
            want_edges = [np.histogram_bin_edges(pts[:, a], bins=b, range=r).astype(np.float64)
                          if r != "auto" else
                          np.histogram_bin_edges(pts[:, a], bins=b).astype(np.float64)
                          if mode == NUMPY_MAJOR else
                          f32_linspace_model(pts[:, a].min(), pts[:, a].max(), b)
                          if mode == 2 else
                          np.linspace(float(pts[:, a].min()), float(pts[:, a].max()), b + 1)
                          .astype(np.float32).astype(np.float64)
                          for a, (b, r) in enumerate(f32_edges_of)]
            # the counts: numpy.histogramdd on the edges the library reports
            ref_counts = np.histogramdd(pts, bins=edges)[0]
        if want_edges is not None:
            for a in range(D):
                if edges[a].shape != want_edges[a].shape or not np.array_equal(edges[a],
                                                                               want_edges[a]):
                    problems.append("axis %d edges differ" % a)
        counts = np.array(got["counts"], dtype=np.float64)
        if counts.shape != ref_counts.shape or not np.array_equal(counts, ref_counts):
            problems.append("counts differ (%s vs numpy %s; %s)" % (
                counts.shape, ref_counts.shape,
                "" if counts.shape != ref_counts.shape
                else "%d bins" % int(np.count_nonzero(counts != ref_counts))))
        for key, ref in (("sums", ref_sums), ("density", ref_density)):
            if ref is None:
                continue
            v = np.array(got[key], dtype=np.float64)
            if v.shape != ref.shape or not np.array_equal(v, ref, equal_nan=True):
                problems.append("%s differ" % key)
        total = int(counts.sum())
        nan = int(np.count_nonzero(np.isnan(pts).any(axis=1))) if pts.dtype.kind == "f" else 0
        if got["total"] != len(pts) or got["nan"] != nan or \
                got["out"] != len(pts) - nan - total:
            problems.append("tallies out %d nan %d total %d; numpy: %d points, %d NaN, %d counted"
                            % (got["out"], got["nan"], got["total"], len(pts), nan, total))
        if problems:
            ck.fail(label, "; ".join(problems), cmd)


DT_NAMES = {"uint8": "u8", "int8": "i8", "uint16": "u16", "int16": "i16", "uint32": "u32",
            "int32": "i32", "uint64": "u64", "int64": "i64", "float32": "f32", "float64": "f64"}


def run_nd_cases(ck, rng, quick):
    ways = ["npy", "fortran", "raw", "text"]
    n = 20011 if quick else 100003
    # 1. float64, explicit ranges on every axis (NumPy's closed last bin: --last-inclusive),
    #    points on the edges, outside, infinite and NaN; 1 to 4 dimensions.
    for D in (1, 2, 3, 4):
        bins = [int(b) for b in rng.integers(1, 12, D)]
        rngs = [(float(lo), float(lo) + float(w)) for lo, w in
                zip(rng.uniform(-2, 1, D), rng.uniform(0.5, 3, D))]
        pts = rng.uniform(-3, 4, (n, D))
        for a in range(D):
            e = np.linspace(rngs[a][0], rngs[a][1], bins[a] + 1)
            pts[::7, a] = rng.choice(e, len(pts[::7, a]))  # exactly on the edges
        pts[5, 0], pts[6, D - 1], pts[9, 0] = np.inf, -np.inf, np.nan
        pts[11, D - 1] = np.nan
        ref, ref_e = np.histogramdd(pts, bins=bins, range=rngs)
        args = ["-b", ",".join(map(str, bins)),
                "-r", ",".join("%r:%r" % r for r in rngs), "--last-inclusive"]
        check_nd(ck, "nd f64 range D=%d" % D, pts, args, ref, ref_e, how=ways[D % 4])
    # 2. float64 auto range (no NaN: NumPy refuses to auto-range it), and histogram2d.
    pts = rng.normal(0, 1, (n, 2))
    ref, ex, ey = np.histogram2d(pts[:, 0], pts[:, 1], bins=(17, 5))
    check_nd(ck, "nd f64 auto (histogram2d)", pts, ["-b", "17,5"], ref, [ex, ey])
    pts = rng.normal(0, 1, (n, 3))
    pts[:, 2] = 4.0  # one value on an axis: widened by 0.5 each way
    ref, ref_e = np.histogramdd(pts, bins=(3, 4, 2))
    check_nd(ck, "nd f64 auto, constant axis", pts, ["-b", "3,4,2"], ref, ref_e, how="fortran")
    # 3. explicit edges per axis.
    pts = rng.uniform(-1, 2, (n, 2))
    e0, e1 = np.array([-1, -0.5, 0, 0.25, 2.0]), np.array([0, 0.1, 0.3, 1.0])
    pts[::5, 1] = 0.3
    ref, ref_e = np.histogramdd(pts, bins=[e0, e1])
    check_nd(ck, "nd f64 edges", pts,
             ["-e", "%s;%s" % (",".join(repr(float(v)) for v in e0),
                               ",".join(repr(float(v)) for v in e1)),
              "--last-inclusive"], ref, ref_e, how="raw")
    # 4. float32: the library's edges are numpy.histogram's (float32 edges), the counts
    #    numpy.histogramdd's on them.
    pts = rng.uniform(-0.5, 1.5, (n, 3)).astype(np.float32)
    pts[::3, 0] = np.float32(0.25)
    pts[7, 1] = np.nan
    check_nd(ck, "nd f32 range", pts, ["-b", "8,3,5", "-r", "0:1,-0.5:0.5,0:1.5",
                                       "--last-inclusive"], None,
             f32_edges_of=[(8, (0.0, 1.0)), (3, (-0.5, 0.5)), (5, (0.0, 1.5))])
    # auto range: the edges of the installed NumPy's numpy.histogram_bin_edges with
    # --numpy-rules set to its major version (NumPy 2: a float32 linspace of the float32 min
    # and max, which is also NumPy 2's histogramdd's; NumPy 1.x: the double linspace, rounded);
    # under NumPy 2 also without the option; the other NumPy's edges against their model
    pts = rng.normal(0, 1, (n, 2)).astype(np.float32)
    for rules in ([], ["--numpy-rules", "1"], ["--numpy-rules", "2"]):
        check_nd(ck, "nd f32 auto %s" % (" ".join(rules) or "(default)"), pts,
                 ["-b", "7,9"] + rules, None, how="raw", f32_edges_of=[(7, "auto"), (9, "auto")])
    if NUMPY_2:
        dd = np.histogramdd(pts, bins=(7, 9))[1]
        if not all(np.array_equal(dd[a], np.histogram_bin_edges(pts[:, a], b))
                   for a, b in enumerate((7, 9))):
            ck.fail("nd f32 auto", "NumPy 2's histogramdd edges differ from its histogram's", [])
    # 5. integers: u8 RGB joint histogram 32 x 32 x 32, i16 with integer bins, i64 ranges.
    rgb = rng.integers(0, 256, (n, 3)).astype(np.uint8)
    ref, ref_e = np.histogramdd(rgb, bins=32, range=[(0, 256)] * 3)
    check_nd(ck, "nd u8 rgb 32^3", rgb, ["-b", "32", "-r", "0:256"], ref, ref_e)
    x = rng.integers(-20, 20, (n, 2)).astype(np.int16)
    ref, ref_e = np.histogramdd(x, bins=[np.arange(-10, 11), np.arange(0, 6)])
    # integer bins are half-open [v, v+1): the last edge not inclusive, unlike histogramdd, so
    # the reference bins each value by hand instead
    ref = np.zeros((20, 5))
    for a, b in x.astype(np.int64):
        if -10 <= a < 10 and 0 <= b < 5:
            ref[a + 10, b] += 1
    check_nd(ck, "nd i16 integer bins", x, ["--integer", "-10,0", "-b", "20,5"], ref,
             [np.arange(-10, 11, dtype=np.float64), np.arange(0, 6, dtype=np.float64)],
             how="text")
    x = rng.integers(-(2 ** 40), 2 ** 40, (n, 2)).astype(np.int64)
    ref, ref_e = np.histogramdd(x, bins=(6, 11), range=[(-2.0 ** 39, 2.0 ** 40), (-1e12, 1e12)])
    check_nd(ck, "nd i64 range", x, ["-b", "6,11", "-r", "%r:%r,%r:%r" % (-2.0 ** 39, 2.0 ** 40,
                                                                          -1e12, 1e12),
                                     "--last-inclusive"], ref, ref_e)
    # 6. dyadic weights (sums exact in any order, so NumPy's are exact too; the CPU backend
    #    sums weights, the others refuse them) and density.
    pts = rng.uniform(0, 1, (n, 2))
    w = rng.integers(-64, 65, n) / 8.0
    ref, ref_e = np.histogramdd(pts, bins=(6, 4), range=[(0, 1), (0, 1)], weights=w)
    cnt = np.histogramdd(pts, bins=(6, 4), range=[(0, 1), (0, 1)])[0]
    dens = np.histogramdd(pts, bins=(6, 4), range=[(0, 1), (0, 1)], weights=w, density=True)[0]
    if ck.backend in ("cpu", "auto"):
        check_nd(ck, "nd f64 weights + density", pts,
                 ["-b", "6,4", "-r", "0:1", "--last-inclusive", "--density"], cnt, ref_e,
                 weights=w, ref_sums=ref, ref_density=dens)
    # full-precision weights: gpuhist's sums are correctly rounded (NumPy's may differ in the
    # last bits), so the density is checked as the installed NumPy computes it from gpuhist's
    # own sums, bit for bit: one point at the centre of every bin weighted with that bin's sum,
    # given to np.histogramdd / np.histogram (a bin's sum of one weight is that weight). gpuhist
    # adds the total in NumPy 2's order; NumPy 1.x adds more than 8192 values in another order,
    # so under NumPy 1.x those shapes get NumPy's expression with NumPy 2's total
    # (numpy2_total, built from NumPy's own sums), and under NumPy 2 numpy2_total must equal
    # NumPy's own total (the model gpuhist implements).
    if ck.backend in ("cpu", "auto"):
        pts = rng.uniform(0, 1, (n, 3))
        w = rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)
        ck.cases += 1
        ck.file_no += 1
        path, wpath = [os.path.join(ck.workdir, "nd%d%s.npy" % (ck.file_no, t)) for t in ("", "w")]
        np.save(wpath, w)
        for bins in ((50, 300), (3, 9000), (90, 91), (20, 30, 40), (4, 3000, 3), (2, 1, 9000)):
            np.save(path, np.ascontiguousarray(pts[:, :len(bins)]))
            cmd, proc = ck.cli(["--dims", str(len(bins)), "-b", ",".join(map(str, bins)), "-r",
                                "0:1", "--last-inclusive", "--weights", wpath, "--density"],
                               path, None)
            label = "nd density of full-precision weights %s" % (bins,)
            if proc.returncode != 0:
                ck.fail(label, proc.stderr.strip(), cmd)
                continue
            got = json.loads(proc.stdout, parse_int=float)  # "-0": -0.0
            sums = np.array(got["sums"], dtype=np.float64).reshape(bins)
            edges = [np.array(e, dtype=np.float64) for e in got["edges"]]
            centres = [(e[:-1] + e[1:]) / 2 for e in edges]
            grid = np.stack(np.meshgrid(*centres, indexing="ij"), -1).reshape(-1, len(bins))
            want = np.histogramdd(grid, bins=edges, weights=sums.reshape(-1), density=True)[0]
            padded = np.zeros([k + 2 for k in bins])
            core = padded[(slice(1, -1),) * len(bins)]
            core[...] = sums
            if NUMPY_2 and numpy2_total(sums) != core.sum():
                ck.fail(label, "NumPy %s's total is not numpy2_total's: the order gpuhist "
                        "follows is not this NumPy's" % np.__version__, cmd)
            if not NUMPY_2 and sums.size > BUFFER:
                h = sums
                for i, e in enumerate(edges):
                    shape = np.ones(len(bins), int)
                    shape[i] = bins[i]
                    h = h / np.diff(e).reshape(shape)
                want = h / numpy2_total(sums)
            if not np.array_equal(np.array(got["density"], dtype=np.float64).view(np.uint64),
                                  want.view(np.uint64)):
                ck.fail(label, "density differs from NumPy's on the same sums", cmd)
        # the same for 1-D (np.histogram's n / diff(edges) / n.sum())
        np.save(path, pts[:, 0])
        for bins in (1548, 8192, 8193, 20000):
            cmd, proc = ck.cli(["-b", str(bins), "-r", "0:1", "--last-inclusive", "--weights",
                                wpath, "--density"], path, None)
            label = "1-D density of full-precision weights, %d bins" % bins
            if proc.returncode != 0:
                ck.fail(label, proc.stderr.strip(), cmd)
                continue
            got = json.loads(proc.stdout, parse_int=float)  # "-0": -0.0
            sums = np.array(got["sums"], dtype=np.float64)
            edges = np.array(got["edges"], dtype=np.float64)
            want, want_e = np.histogram((edges[:-1] + edges[1:]) / 2, bins=bins, range=(0, 1),
                                        weights=sums, density=True)
            if not np.array_equal(edges, want_e):
                ck.fail(label, "edges differ from NumPy's", cmd)
            if NUMPY_2 and pairwise_total(sums) != sums.sum():
                ck.fail(label, "NumPy %s's total is not pairwise over the whole array"
                        % np.__version__, cmd)
            if not NUMPY_2 and bins > BUFFER:
                want = sums / np.diff(edges) / pairwise_total(sums)
            if not np.array_equal(np.array(got["density"], dtype=np.float64).view(np.uint64),
                                  want.view(np.uint64)):
                ck.fail(label, "density differs from NumPy's on the same sums", cmd)
    pts = rng.normal(0, 1, (n, 3))
    dens = np.histogramdd(pts, bins=(5, 6, 7), density=True)[0]
    ref, ref_e = np.histogramdd(pts, bins=(5, 6, 7))
    check_nd(ck, "nd f64 density", pts, ["-b", "5,6,7", "--density"], ref, ref_e,
             ref_density=dens, how="fortran")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpuhist", required=True, help="path of the gpuhist command")
    ap.add_argument("--backend", default="cpu", choices=["auto", "cpu", "cuda", "opencl"])
    ap.add_argument("--strategy", default=None,
                    help="force a strategy, or 'all': every strategy of the backend in turn")
    ap.add_argument("--quick", action="store_true",
                    help="skip the largest size and most half-open repeats (for backends that "
                         "compile kernels in every process, like OpenCL)")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    if args.backend != "auto":
        probe = subprocess.run([args.gpuhist, "--list-devices", "-B", args.backend],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if probe.returncode != 0:
            print("SKIP: backend %s unavailable: %s" % (args.backend, probe.stderr.strip()))
            return SKIP

    with tempfile.TemporaryDirectory(prefix="gpuhist-numpy-") as work:
        ck = Checker(args, work)
        if args.strategy == "all":
            listing = subprocess.run([args.gpuhist, "--list-strategies", "-f", "json"],
                                     stdout=subprocess.PIPE, check=True, text=True)
            ck.strategies = [s["name"] for s in json.loads(listing.stdout)
                             if args.backend == "auto" or s["backend"] == args.backend]
        elif args.strategy:
            ck.strategies = [args.strategy]
        rng = np.random.default_rng(args.seed)
        run_cases(ck, rng, args.quick)
        run_nd_cases(ck, rng, args.quick)

    print("numpy %s, backend %s, strategies %s: %d cases, %d gpuhist runs, %d declined, %d failed"
          % (np.__version__, args.backend, ",".join(s or "auto" for s in ck.strategies), ck.cases,
             ck.runs, ck.declined, len(ck.failures)))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
