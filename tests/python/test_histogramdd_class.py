"""gpuhist.HistogramDD: N-D fills accumulating through gpuhist_nd_result.accumulate.

Points cut into random parts and filled one part at a time give numpy.histogramdd's counts
exactly and, weighted, the correctly rounded sums (math.fsum per bin, each point placed by
numpy's rule computed here with searchsorted) and the bits of one gpuhist.histogramdd call on
all the points; the tallies (out, nan, total) are counted here too. UHI: axes, kind, values(),
variances(), counts(); boost_histogram / hist conversions where installed. Device fills are in
test_histogramdd_device.py. Seed: conftest.SEED.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import gpuhist
from conftest import same_bits


def _bins_of(points: np.ndarray, edges) -> tuple:
    """numpy.histogramdd's bin of each point (searchsorted, the last edge closed), and which
    points are inside every axis and have no NaN coordinate: computed here, independently."""
    inside = np.ones(points.shape[0], bool)
    idx = []
    for i, e in enumerate(edges):
        x = points[:, i].astype(np.float64)
        b = np.searchsorted(e, x, side="right") - 1
        b[x == e[-1]] = e.size - 2
        ok = (x >= e[0]) & (x <= e[-1])
        inside &= ok
        idx.append(np.where(ok, b, 0))
    return tuple(idx), inside


def _exact_square_sum(w: np.ndarray) -> float:
    """The sum of the exact squares of `w`, rounded once (inf beyond the doubles)."""
    total = sum((Fraction(float(v)) ** 2 for v in w), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf


def _parts(rng, n: int):
    k = int(rng.integers(1, 7))
    cuts = np.sort(rng.integers(0, n + 1, k - 1))
    return np.split(np.arange(n), cuts)


def _points(rng, n: int, D: int, dtype) -> np.ndarray:
    if np.dtype(dtype).kind in "ui":
        return rng.integers(0, 12, (n, D)).astype(dtype)
    p = rng.random((n, D))
    k = rng.integers(0, 40, (n, D))
    p[k == 0] = np.nan
    p[k == 1] = -0.5
    p[k == 2] = 1.0
    p[k == 3] = 1.5
    return p.astype(dtype)


def _axes(rng, D: int, integer: bool):
    bins, ranges = [], []
    for _ in range(D):
        n = int(rng.integers(1, 8))
        if integer:
            bins.append(n)
            ranges.append((1.0, 1.0 + n))
        elif rng.integers(0, 3) == 0:
            bins.append(np.cumsum(np.r_[0.0, 0.25 / n + rng.random(n) / n]))
            ranges.append(None)
        else:
            bins.append(n)
            ranges.append((0.0, 1.0))
    return bins, ranges


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_fills_in_parts_equal_numpy(rng, backend, dtype):
    for _ in range(6):
        D = int(rng.integers(1, 5))
        n = int(rng.integers(1, 5000))
        pts = _points(rng, n, D, dtype)
        bins, ranges = _axes(rng, D, np.dtype(dtype).kind in "ui")
        h = gpuhist.HistogramDD(bins, ranges, backend=backend)
        for part in _parts(rng, n):
            if D > 1 and rng.integers(0, 2):
                h.fill(pts[part])  # one (N, D) array
            else:
                h.fill(*[pts[part, i] for i in range(D)])
        want, edges = np.histogramdd(pts, bins, [r for r in ranges] if any(ranges) else None)
        for got_e, want_e in zip(h.edges, edges):
            same_bits(got_e, np.asarray(want_e, np.float64))
        same_bits(h.values().astype(np.float64), want)
        assert h.values().dtype == np.int64 and h.values().shape == want.shape
        idx, inside = _bins_of(pts, h.edges)
        nan = int(np.isnan(pts.astype(np.float64)).any(axis=1).sum())
        assert h.total == n
        assert h.nan == nan
        assert h.out == n - nan - int(inside.sum())
        assert h.backend == backend


@pytest.mark.parametrize("wdtype", [np.float64, np.float32])
def test_weighted_fills_exact(rng, backend, wdtype):
    big = np.array([1e16, -1e16, 1.0, -1.0, 3e-300, 0.1, 1e300, -1e300])
    if wdtype == np.float32:  # the float32 extremes instead of the float64 ones
        big = np.array([1e16, -1e16, 1.0, -1.0, 1e-40, 0.1, 3e38, -3e38])
    for _ in range(6):
        D = int(rng.integers(1, 4))
        n = int(rng.integers(1, 4000))
        pts = _points(rng, n, D, np.float64)
        bins, ranges = _axes(rng, D, False)
        w = np.where(rng.integers(0, 2, n) == 1, big[rng.integers(0, 8, n)],
                     (rng.random(n) - 0.5) * 1e3)
        if wdtype == np.float32:
            w = np.where(rng.integers(0, 2, n) == 1, w, w * 1e-20)
        w = w.astype(wdtype)
        h = gpuhist.HistogramDD(bins, ranges, backend=backend)
        for part in _parts(rng, n):
            h.fill(*[pts[part, i] for i in range(D)], weight=w[part])
        # one library call on all the points
        one, _ = gpuhist.histogramdd(pts, bins, ranges if any(r is not None for r in ranges)
                                     else None, weights=w, backend=backend)
        same_bits(h.values(), one)
        # math.fsum per bin (squares: exact, rounded once), the points placed here
        idx, inside = _bins_of(pts, h.edges)
        nan = np.isnan(pts).any(axis=1)
        sums = np.zeros(h.shape)
        sq = np.zeros(h.shape)
        flat = np.ravel_multi_index(idx, h.shape)
        keep = inside & ~nan
        for j in np.unique(flat[keep]):
            sel = keep & (flat == j)
            wj = w[sel].astype(np.float64)
            sums.flat[j] = math.fsum(wj)
            sq.flat[j] = _exact_square_sum(wj)
        same_bits(h.values(), sums)
        same_bits(h.variances(), sq)
        same_bits(h.entries.ravel(), np.bincount(flat[keep], minlength=sums.size)
                  .astype(np.int64))
        assert h.total == n and h.nan == int(nan.sum())
        assert h.out == n - int(nan.sum()) - int(keep.sum())


def test_unweighted_then_weighted(rng):
    """Unweighted points count as weight 1 once the histogram is weighted."""
    x, y = rng.random(1000), rng.random(1000)
    w = rng.integers(1, 5, 1000).astype(np.float64)
    h = gpuhist.HistogramDD(4, [(0, 1), (0, 1)], backend="cpu")
    h.fill(x[:400], y[:400])
    assert not h.weighted
    h.fill(x[400:], y[400:], weight=w[400:])
    assert h.weighted
    ww = np.r_[np.ones(400), w[400:]]
    want, _ = np.histogramdd(np.c_[x, y], 4, [(0, 1), (0, 1)], weights=ww)
    same_bits(h.values(), want)  # small integers: NumPy's sums are exact too
    want_sq, _ = np.histogramdd(np.c_[x, y], 4, [(0, 1), (0, 1)], weights=ww * ww)
    same_bits(h.variances(), want_sq)
    same_bits(h.counts(), np.divide(want**2, want_sq, out=np.zeros_like(want),
                                    where=want_sq != 0))
    h.reset()
    assert h.total == 0 and not h.weighted and h.values().sum() == 0


def test_uhi(rng):
    h = gpuhist.HistogramDD([3, np.array([0.0, 0.5, 2.0])], [(0, 1), None], backend="cpu")
    h.fill([0.1, 0.5, 0.9, 0.2, np.nan], [0.1, 1.0, 2.0, 3.0, 0.0])
    assert h.kind == gpuhist.Kind.COUNT
    assert [len(a) for a in h.axes] == [3, 2]
    same_bits(h.axes[1].edges, np.array([0.0, 0.5, 2.0]))
    assert h.axes[0][1] == pytest.approx((1 / 3, 2 / 3))
    same_bits(h.values(), np.array([[1, 0], [0, 1], [0, 1]], np.int64))
    same_bits(h.variances(), h.values().astype(np.float64))
    assert (h.out, h.nan, h.total) == (1, 1, 5)
    with pytest.raises(ValueError, match="flow"):
        h.values(flow=True)
    try:
        from uhi.typing.plottable import PlottableHistogram  # noqa: PLC0415
    except ImportError:
        print("uhi: not installed; the protocol check is skipped")
    else:
        assert isinstance(h, PlottableHistogram)


def test_boost_histogram_and_hist(rng):
    bh = pytest.importorskip("boost_histogram")
    x, y = rng.random(2000), rng.random(2000) * 3
    w = rng.random(2000)
    for weight in (None, w):
        h = gpuhist.HistogramDD((5, 6), [(0, 1), (0, 3)], backend="cpu")
        h.fill(x, y, weight=weight)
        b = bh.Histogram(h)
        ref = bh.Histogram(bh.axis.Regular(5, 0, 1), bh.axis.Regular(6, 0, 3),
                           storage=bh.storage.Weight() if weight is not None
                           else bh.storage.Int64())
        ref.fill(x, y, weight=weight) if weight is not None else ref.fill(x, y)
        np.testing.assert_allclose(b.values(), ref.values(), rtol=1e-12)
        if weight is not None:
            np.testing.assert_allclose(b.variances(), ref.variances(), rtol=1e-12)
        try:
            import hist  # noqa: PLC0415
        except ImportError:
            print("hist: not installed")
        else:
            np.testing.assert_allclose(hist.Hist(h).values(), ref.values(), rtol=1e-12)


def test_refusals():
    with pytest.raises(ValueError, match="range"):
        gpuhist.HistogramDD(10)
    with pytest.raises(ValueError, match="no range"):
        gpuhist.HistogramDD([10, 5], [(0, 1), None])
    with pytest.raises(ValueError, match="increasing"):
        gpuhist.HistogramDD([np.array([0.0, 2.0, 1.0])])
    with pytest.raises(ValueError, match="joint bins"):
        gpuhist.HistogramDD([2**16, 2**16], [(0, 1), (0, 1)])
    h = gpuhist.HistogramDD((2, 2), [(0, 1), (0, 1)], backend="cpu")
    with pytest.raises(ValueError, match="coordinate arrays"):
        h.fill([0.1])
    with pytest.raises(ValueError, match="differ in size"):
        h.fill([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="same length"):
        h.fill([0.1, 0.2], [0.3, 0.4], weight=[1.0])
    with pytest.raises(TypeError, match="not both"):
        h.fill([0.1], [0.2], weight=[1.0], weights=[1.0])
    assert h.total == 0  # nothing was added by the refused fills


def test_float32_even_axes_at_edges(rng, backend):
    """float32 points on and beside the edges of axes whose float64 edges are float32 values
    (counted as even bins) and of axes whose edges are not (counted by the edges): NumPy's
    counts."""
    edges = np.linspace(0.0, 1.0, 9).astype(np.float32)
    near = np.concatenate([edges, np.nextafter(edges, np.float32(-1)),
                           np.nextafter(edges, np.float32(2))])
    x = rng.choice(near, 50_000).astype(np.float32)
    y = rng.choice(np.linspace(0.0, 1.0, 21).astype(np.float32), 50_000)
    h = gpuhist.HistogramDD((8, 20), [(0, 1), (0, 1)], backend=backend)
    h.fill(x[:20_000], y[:20_000]).fill(x[20_000:], y[20_000:])
    want, _ = np.histogramdd(np.c_[x, y], (8, 20), [(0, 1), (0, 1)])
    same_bits(h.values().astype(np.float64), want)
