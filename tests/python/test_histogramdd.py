"""gpuhist.histogramdd and gpuhist.histogram2d against NumPy, bit for bit.

Every dtype x dimensions (1..8) x bins (a number, one per axis, edge arrays, mixed) x range
(automatic, given, partly given) x data (random, on the edges, NaN/inf with a range, constant
axes, empty) x layout (C order, Fortran order, strided, byte-swapped, a list of 1-D arrays);
weights (dyadic: NumPy's sums are exact too; full precision: the correctly rounded sums, checked
with math.fsum), density; NumPy's errors with NumPy's messages and gpuhist's own limits; the
backends built here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpuhist
from conftest import same_bits

TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64,
         np.float16, np.float32, np.float64, np.bool_]


def points(rng: np.random.Generator, dtype: type, n: int, d: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, (n, d)).astype(bool)
    if dt.kind in "ui":
        info = np.iinfo(dt)
        lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
        return rng.integers(lo, hi, (n, d), endpoint=True).astype(dt)
    return (rng.standard_normal((n, d)) * rng.choice([0.5, 3.0], d)).astype(dt)


def same_nd(got, want) -> None:
    hist, edges = got
    whist, wedges = want
    same_bits(hist, whist)
    assert len(edges) == len(wedges)
    for e, w in zip(edges, wedges):
        same_bits(e, w)


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_dtypes_auto_and_range(rng: np.random.Generator, dtype: type) -> None:
    for d in (1, 2, 3):
        x = points(rng, dtype, 3001, d)
        bins = [int(b) for b in rng.integers(1, 9, d)]
        same_nd(gpuhist.histogramdd(x, bins), np.histogramdd(x, bins))
        rng_ = [(-1.5, 2.5)] * d if np.dtype(dtype) != np.bool_ else [(0, 1)] * d
        same_nd(gpuhist.histogramdd(x, 5, rng_), np.histogramdd(x, 5, rng_))


@pytest.mark.parametrize("d", [1, 2, 4, 6, 8])
def test_dimensions(rng: np.random.Generator, d: int) -> None:
    x = rng.uniform(-1, 1, (5000, d))
    bins = [int(b) for b in rng.integers(1, 5, d)]
    same_nd(gpuhist.histogramdd(x, bins), np.histogramdd(x, bins))
    # a range on some axes only
    rng_ = [None if i % 2 else (-0.5, 0.75) for i in range(d)]
    same_nd(gpuhist.histogramdd(x, bins, rng_), np.histogramdd(x, bins, rng_))


def test_edges_and_mixed_bins(rng: np.random.Generator) -> None:
    x = rng.uniform(-1, 2, (20000, 3))
    e0 = np.array([-1.0, -0.25, 0.0, 0.5, 2.0])
    e2 = np.array([0, 1, 2])  # integer edges
    x[::5, 0] = rng.choice(e0, x[::5, 0].size)  # on the edges, the last one included
    x[::7, 2] = 2.0
    bins = [e0, 4, e2]
    same_nd(gpuhist.histogramdd(x, bins), np.histogramdd(x, bins))
    same_nd(gpuhist.histogramdd(x, bins, [None, (0, 1), None]),
            np.histogramdd(x, bins, [None, (0, 1), None]))


def test_points_on_linspace_edges(rng: np.random.Generator) -> None:
    for dtype in (np.float32, np.float64, np.int32):
        rng_ = [(0, 10), (-3, 7)]
        x = points(rng, dtype, 4000, 2) % 11
        e = [np.linspace(*rng_[i], 8) for i in range(2)]
        x = x.astype(dtype)
        if np.dtype(dtype).kind == "f":
            x[::3, 0] = rng.choice(e[0], x[::3, 0].size).astype(dtype)
            x[::4, 1] = rng.choice(e[1], x[::4, 1].size).astype(dtype)
        same_nd(gpuhist.histogramdd(x, 7, rng_), np.histogramdd(x, 7, rng_))


def test_nan_inf_with_range(rng: np.random.Generator) -> None:
    for dtype in (np.float32, np.float64):
        x = rng.normal(0, 1, (3000, 2)).astype(dtype)
        x[::11, 0] = np.nan
        x[::13, 1] = np.inf
        x[::17, 1] = -np.inf
        same_nd(gpuhist.histogramdd(x, (6, 4), [(-2, 2), (-1, 3)]),
                np.histogramdd(x, (6, 4), [(-2, 2), (-1, 3)]))


def test_constant_axis_and_empty() -> None:
    x = np.ones((100, 2))
    x[:, 1] = np.arange(100)
    same_nd(gpuhist.histogramdd(x, 3), np.histogramdd(x, 3))
    for d in (1, 2):
        e = np.zeros((0, d))
        same_nd(gpuhist.histogramdd(e, 4), np.histogramdd(e, 4))
    # an axis of one edge: no bins
    x = np.ones((10, 2))
    same_nd(gpuhist.histogramdd(x, [np.array([0.5]), 3]),
            np.histogramdd(x, [np.array([0.5]), 3]))


def test_layouts(rng: np.random.Generator) -> None:
    x = rng.normal(0, 1, (4000, 3))
    want = np.histogramdd(x, (5, 3, 4))
    for view in (np.asfortranarray(x), x[::-1], np.ascontiguousarray(x.T).T,
                 x.astype(x.dtype.newbyteorder(">")), np.vstack([x, x])[::2]):
        same_nd(gpuhist.histogramdd(view, (5, 3, 4)), np.histogramdd(view, (5, 3, 4)))
    same_nd(gpuhist.histogramdd([x[:, 0], x[:, 1], x[:, 2]], (5, 3, 4)), want)
    same_nd(gpuhist.histogramdd(x.T.tolist(), (5, 3, 4)), want)  # a list: one item per axis


def test_weights_dyadic_exact(rng: np.random.Generator) -> None:
    x = rng.uniform(0, 1, (20000, 2))
    for wt in (np.float64, np.float32, np.int32):
        w = (rng.integers(-64, 65, 20000) / 8.0).astype(wt)
        if wt == np.int32:
            w = rng.integers(-5, 6, 20000).astype(wt)
        same_nd(gpuhist.histogramdd(x, (6, 5), weights=w), np.histogramdd(x, (6, 5), weights=w))
        same_nd(gpuhist.histogramdd(x, (6, 5), weights=w, density=True),
                np.histogramdd(x, (6, 5), weights=w, density=True))


def test_weights_correctly_rounded(rng: np.random.Generator) -> None:
    """Full-precision weights: each bin's sum is the correctly rounded sum (math.fsum), which
    NumPy's array-order sums approach within rounding."""
    x = rng.uniform(0, 1, (5000, 2))
    w = rng.standard_normal(5000) * 2.0 ** rng.integers(-30, 30, 5000)
    hist, edges = gpuhist.histogramdd(x, (3, 4), weights=w)
    # each point's bin: the last edge at or below it (the last edge closes the last bin)
    ix = np.minimum(np.searchsorted(edges[0], x[:, 0], side="right") - 1, 2)
    iy = np.minimum(np.searchsorted(edges[1], x[:, 1], side="right") - 1, 3)
    for i in range(3):
        for j in range(4):
            sel = (ix == i) & (iy == j)
            assert hist[i, j] == math.fsum(w[sel]), (i, j)
    np.testing.assert_allclose(hist, np.histogramdd(x, (3, 4), weights=w)[0], rtol=1e-9,
                               atol=1e-12)


def test_density(rng: np.random.Generator) -> None:
    for d in (1, 2, 3):
        x = rng.normal(0, 1, (7000, d))
        same_nd(gpuhist.histogramdd(x, 5, density=True), np.histogramdd(x, 5, density=True))
    x = rng.normal(0, 1, (7000, 2)).astype(np.float32)
    e = [np.array([-3, -1, 0, 0.5, 3]), np.array([-2.0, 0.0, 2.0])]
    same_nd(gpuhist.histogramdd(x, e, density=True), np.histogramdd(x, e, density=True))


def test_histogram2d(rng: np.random.Generator) -> None:
    x, y = rng.normal(0, 1, 9000), rng.uniform(-1, 1, 9000)
    for bins in (10, [7, 3], np.linspace(-2, 2, 6), [np.linspace(-3, 3, 4), 5]):
        got = gpuhist.histogram2d(x, y, bins)
        want = np.histogram2d(x, y, bins)
        for g, w in zip(got, want):
            same_bits(g, w)
    got = gpuhist.histogram2d(x, y, 8, [[-1, 1], [-0.5, 0.5]], density=True,
                              weights=np.ones(9000))
    want = np.histogram2d(x, y, 8, [[-1, 1], [-0.5, 0.5]], density=True, weights=np.ones(9000))
    for g, w in zip(got, want):
        same_bits(g, w)
    with pytest.raises(ValueError, match="x and y must have the same length"):
        gpuhist.histogram2d(x, y[:-1])


def _same_error(call, np_call) -> None:
    with pytest.raises(Exception) as mine:
        call()
    with pytest.raises(Exception) as theirs:
        np_call()
    assert type(mine.value) is type(theirs.value)
    assert str(mine.value) == str(theirs.value)


def test_numpy_errors(rng: np.random.Generator) -> None:
    x = rng.normal(0, 1, (100, 2))
    nan = x.copy()
    nan[3, 1] = np.nan
    for args, kw in (((x, [3, 4, 5]), {}), ((x, 3, [(0, 1)]), {}), ((x, 0), {}),
                     ((x, 2.5), {}), ((x, [np.array([1.0, 0.0]), 3]), {}),
                     ((x, [np.ones((2, 2)), 3]), {}), ((nan, 3), {}),
                     ((x, 3, [(1, 0), None]), {}), ((x, 3, [(0, np.inf), None]), {}),
                     ((x, 3), {"weights": np.ones(99)})):
        _same_error(lambda: gpuhist.histogramdd(*args, **kw),
                    lambda: np.histogramdd(*args, **kw))


def test_gpuhist_limits(rng: np.random.Generator) -> None:
    x = rng.normal(0, 1, (100, 2))
    with pytest.raises(ValueError, match="repeated edges"):
        gpuhist.histogramdd(x, [np.array([0.0, 1.0, 1.0, 2.0]), 3])
    with pytest.raises(ValueError, match="65536 x 65536 = 4294967296 joint bins"):
        gpuhist.histogramdd(x, 65536, [(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="1 to 8"):
        gpuhist.histogramdd(rng.normal(0, 1, (10, 9)), 2)


def test_backends(backend: str, rng: np.random.Generator) -> None:
    x = rng.normal(0, 1, (30000, 3)).astype(np.float32)
    same_nd(gpuhist.histogramdd(x, (16, 8, 4), backend=backend),
            np.histogramdd(x, (16, 8, 4)))
    u = rng.integers(0, 256, (30000, 3)).astype(np.uint8)
    same_nd(gpuhist.histogramdd(u, 32, [(0, 256)] * 3, backend=backend),
            np.histogramdd(u, 32, [(0, 256)] * 3))
