"""gpuhist.bincount against numpy.bincount, and weighted histograms against exact sums.

Weighted sums are the library's correctly rounded sums (exact, then rounded once): they are
compared with math.fsum (also correctly rounded) over the samples NumPy puts in each bin, and
with NumPy's own sums to within a few ulps (NumPy adds in array order, or cumulates and takes
differences for explicit edges).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpuhist
from conftest import backend_problem, same_bits


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                                   np.int64, np.bool_], ids=lambda t: np.dtype(t).name)
def test_bincount_dtypes(rng, dtype):
    hi = 2 if dtype is np.bool_ else 1000 if np.dtype(dtype).itemsize > 1 else 100
    x = rng.integers(0, hi, 20_000).astype(dtype)
    for minlength in (0, 1, 5, hi + 7):
        same_bits(gpuhist.bincount(x, minlength=minlength), np.bincount(x, minlength=minlength))
    same_bits(gpuhist.bincount(x[::3]), np.bincount(x[::3]))
    same_bits(gpuhist.bincount(x.astype(x.dtype.newbyteorder())),
              np.bincount(x.astype(x.dtype.newbyteorder())))


def test_bincount_small_cases():
    for x, kw in [([], {}), ([], {"minlength": 4}), ([0], {}), ([3, 3, 1], {}),
                  ([5], {"minlength": 2}), (np.zeros(0, np.int32), {"minlength": 3}),
                  ([1, 2], {"weights": [0.5, 0.25]}), ([], {"weights": []}),
                  (np.array([1, 2], np.uint8), {"minlength": 300}),
                  (np.array([0, 0], np.int16), {}), (np.array([255], np.uint8), {}),
                  (np.array([7, 7], np.int8), {"weights": np.array([0.5, 2.0], np.float32)})]:
        same_bits(gpuhist.bincount(x, **kw), np.bincount(x, **kw))


def test_bincount_errors_like_numpy():
    cases = [
        (np.array([1.0, 2.0]), {}), (np.zeros(0, np.float64), {}),
        (np.array([[1, 2]]), {}), (np.array(3), {}), (np.array([1, -1]), {}),
        (np.array([1, 2]), {"minlength": -1}), (np.array([1, 2]), {"weights": [1.0]}),
        (np.array([3, -1], np.int8), {}), (np.array([-32768], np.int16), {}),
        (np.array([1, 2], np.uint64), {}),  # NumPy 1 refuses uint64, NumPy 2 counts them
    ]
    for x, kw in cases:
        try:
            want = np.bincount(x, **kw)
        except Exception as e:  # noqa: BLE001 - whatever NumPy raises, so must we
            with pytest.raises(type(e)) as got:
                gpuhist.bincount(x, **kw)
            assert str(got.value) == str(e), (x, kw)
        else:
            same_bits(gpuhist.bincount(x, **kw), want)


def exact_sums(x: np.ndarray, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """math.fsum of the weights NumPy's rule puts in each bin (E[i] <= x < E[i+1], the last
    bin closed), x and edges compared exactly."""
    x, w = x.ravel(), w.ravel().astype(np.float64)
    out = np.empty(edges.size - 1)
    for i in range(edges.size - 1):
        inside = (x >= edges[i]) & ((x < edges[i + 1]) if i < edges.size - 2
                                    else (x <= edges[i + 1]))
        out[i] = math.fsum(w[inside])
    return out


@pytest.mark.parametrize("wdtype", [np.float64, np.float32, np.int32, np.int64, np.uint8],
                         ids=lambda t: np.dtype(t).name)
def test_weighted_histogram_exact(rng, wdtype):
    x = rng.standard_normal(20_000)
    if np.dtype(wdtype).kind == "f":
        # spread magnitudes so that the order of additions matters
        w = (rng.standard_normal(x.size) * 10.0 ** rng.integers(-8, 9, x.size)).astype(wdtype)
    else:
        w = rng.integers(0, 100, x.size).astype(wdtype)
    for bins, range in [(10, (-2, 2)), (37, None), ([-3, -1, 0, 0.1, 2.5], None)]:
        got, edges = gpuhist.histogram(x, bins, range, weights=w)
        want, want_edges = np.histogram(x, bins, range, weights=w)
        same_bits(edges, want_edges)
        assert got.dtype == want.dtype  # the weights' dtype, as NumPy
        exact = exact_sums(x, w, np.asarray(edges, np.float64)).astype(wdtype)
        same_bits(got, exact)
        if np.dtype(wdtype).kind == "f":
            scale = np.abs(w).astype(np.float64).sum()
            assert np.allclose(got, want, rtol=0, atol=scale * 1e-6 if wdtype == np.float32
                               else scale * 1e-13)
        else:
            same_bits(got, want)  # integer sums below 2^53 are exact in NumPy too


def test_weighted_layouts_and_density(rng):
    x = rng.standard_normal((200, 300)).astype(np.float32)
    w = rng.random((200, 300))
    for xv, wv in [(x, w), (x[::2], w[::2]), (x.T, w.T), (x.astype(">f4"), w.astype(">f8")),
                   (x[:, ::3], w[:, ::3]), (x, w.astype(np.float32))]:
        got, edges = gpuhist.histogram(xv, 25, (-3, 3), weights=wv)
        same_bits(got, exact_sums(xv, wv, edges.astype(np.float64)).astype(wv.dtype))
        d = gpuhist.histogram(xv, 25, (-3, 3), weights=wv, density=True)[0]
        db = np.array(np.diff(edges), float)
        same_bits(d, got / db / got.sum())  # NumPy's density formula on these sums
        assert np.allclose(d, np.histogram(xv, 25, (-3, 3), weights=wv, density=True)[0])


def test_weighted_nonfinite_and_nan_samples():
    x = np.array([0.1, 0.2, np.nan, 0.7, 0.8, 0.9])
    w = np.array([1.0, np.inf, 5.0, np.nan, 2.0, -1.0])
    got = gpuhist.histogram(x, 2, (0, 1), weights=w)[0]
    assert got[0] == np.inf and np.isnan(got[1])  # a NaN sample adds nothing
    got = gpuhist.histogram(np.array([0.5, 0.5]), 1, (0, 1),
                            weights=np.array([np.inf, -np.inf]))[0]
    assert np.isnan(got[0])


def test_bincount_weights_exact(rng):
    x = rng.integers(0, 50, 30_000)
    w = rng.standard_normal(x.size) * 10.0 ** rng.integers(-10, 10, x.size)
    got = gpuhist.bincount(x, w)
    exact = np.array([math.fsum(w[x == i]) for i in range(50)])
    same_bits(got, exact)
    assert np.allclose(got, np.bincount(x, w), rtol=0, atol=np.abs(w).sum() * 1e-13)
    same_bits(gpuhist.bincount(x, w.astype(np.float32), minlength=60),
              np.array([math.fsum(w.astype(np.float32)[x == i].astype(np.float64))
                        for i in range(60)]))


def test_weights_on_each_backend(rng):
    """The CPU backend sums weights (cpu-weighted), CUDA and OpenCL too with the same bits (where
    a device is usable), 'auto' is either."""
    x = rng.random(1000)
    w = rng.random(1000)
    h = gpuhist.Histogram(10, (0, 1), backend="cpu")
    h.fill(x, weights=w)
    assert h.backend == "cpu" and h.strategy == "cpu-weighted"
    want = gpuhist.histogram(x, 10, (0, 1), weights=w, backend="cpu")[0]
    same_bits(gpuhist.histogram(x, 10, (0, 1), weights=w)[0], want)  # 'auto'
    if not backend_problem("cuda"):
        same_bits(gpuhist.histogram(x, 10, (0, 1), weights=w, backend="cuda")[0], want)
    if gpuhist.backends()["opencl"] and not backend_problem("opencl"):
        same_bits(gpuhist.histogram(x, 10, (0, 1), weights=w, backend="opencl")[0], want)
