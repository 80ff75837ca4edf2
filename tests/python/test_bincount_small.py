"""gpuhist.bincount of bool and 8/16-bit integers (one INTEGER bin per value of the type, no
min/max pass) against numpy.bincount, bit for bit, on host arrays and every usable backend.

Weights are multiples of 1/8 of small magnitude wherever NumPy's own sums are the reference: any
order of addition gives the same double, so NumPy's sums (in array order) and the library's
(correctly rounded) are the same bits. Weights that make the order matter are compared with the
min/max path (the request bincount makes for wider types) and with math.fsum. Device arrays
(CuPy, torch) are in test_device.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gpuhist
from gpuhist import _api, _context
from conftest import same_bits

SMALL = [np.bool_, np.uint8, np.int8, np.uint16, np.int16]


def ids(t: object) -> str:
    return np.dtype(t).name


def type_info(dtype: object):
    """(type's max, number of non-negative values, number of values)."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return 1, 2, 256  # counted as uint8: 256 bins
    info = np.iinfo(d)
    return int(info.max), int(info.max) + 1, 2 ** (8 * d.itemsize)


def dyadic(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(-64, 65, n) / 8.0


def check(x: np.ndarray, backend: str, **kw) -> None:
    """gpuhist.bincount(x, **kw) is numpy.bincount's: same bits, or the same error and message."""
    try:
        want = np.bincount(x, **kw)
    except Exception as e:  # noqa: BLE001 - whatever NumPy raises, so must we
        with pytest.raises(type(e)) as got:
            gpuhist.bincount(x, **kw, backend=backend)
        assert str(got.value) == str(e), (x.dtype, kw)
        return
    same_bits(gpuhist.bincount(x, **kw, backend=backend), want)


@pytest.mark.parametrize("dtype", SMALL, ids=ids)
def test_values_minlength_weights(rng, backend, dtype):
    top, nonneg, whole = type_info(dtype)
    n = 30_000
    datasets = {
        "small values": rng.integers(0, min(top, 50) + 1, n),
        "every non-negative value": rng.integers(0, top + 1, n),
        "all the type's max": np.full(n, top),
        "all zero": np.zeros(n, np.int64),
        "one sample": np.array([min(top, 9)]),
    }
    for name, values in datasets.items():
        x = values.astype(dtype)
        print(f"{backend} {np.dtype(dtype).name}: {name}")
        for minlength in (0, 1, nonneg - 1, nonneg, nonneg + 1, whole, whole + 300):
            check(x, backend, minlength=minlength)
        for minlength in (0, nonneg + 1, whole + 300):  # (16-bit weights: 65536 slow bins)
            check(x, backend, weights=dyadic(rng, x.size), minlength=minlength)
        check(x, backend, weights=dyadic(rng, x.size).astype(np.float32))
        check(x, backend, weights=rng.integers(-5, 6, x.size))  # integer weights


@pytest.mark.parametrize("dtype", SMALL, ids=ids)
def test_layouts(rng, backend, dtype):
    """Views counted without a Python-level copy: strided, reversed, offset, a column of a 2-D
    array, the other byte order."""
    top, _, _ = type_info(dtype)
    x = rng.integers(0, top + 1, 40_000).astype(dtype)
    grid = rng.integers(0, top + 1, (500, 7)).astype(dtype)
    low = rng.integers(0, min(top, 300) + 1, 40_000).astype(dtype)  # (weights: fewer bins)
    for a, b in ((x, grid), (low, low.reshape(5000, 8))):
        for view in (a[::3], a[::-1], a[5:-7], a[1::2][::-5], b[:, 3], b[::2, 6]):
            if a is x:
                check(view, backend)
            else:
                check(view, backend, weights=dyadic(rng, view.size), minlength=3)
    check(x[::-3], backend, minlength=top + 3)
    if np.dtype(dtype).itemsize > 1:
        swapped = x.astype(x.dtype.newbyteorder())
        check(swapped, backend, minlength=5)
        check(swapped[::-2], backend, weights=dyadic(rng, swapped[::-2].size))


@pytest.mark.parametrize("dtype", [np.int8, np.int16], ids=ids)
def test_negative_values_raise_numpys_error(rng, backend, dtype):
    info = np.iinfo(dtype)
    x = rng.integers(0, int(info.max) + 1, 10_000).astype(dtype)
    for value in (-1, int(info.min), -7):
        for where in (0, x.size // 2, x.size - 1):
            bad = x.copy()
            bad[where] = value
            check(bad, backend)
            check(bad, backend, minlength=3)
            check(bad, backend, weights=dyadic(rng, bad.size), minlength=int(info.max) + 9)
            check(bad[where:where + 1], backend)
    check(np.full(100, info.min, dtype), backend)


@pytest.mark.parametrize("dtype", SMALL, ids=ids)
def test_empty(backend, dtype):
    _, nonneg, whole = type_info(dtype)
    x = np.zeros(0, dtype)
    for minlength in (0, 5, nonneg + 1, whole + 1):
        check(x, backend, minlength=minlength)
        check(x, backend, weights=np.zeros(0), minlength=minlength)
    check(np.zeros(10, dtype)[3:3], backend)


@pytest.mark.parametrize("dtype", SMALL, ids=ids)
def test_weighted_bits_as_the_min_max_path(rng, monkeypatch, backend, dtype):
    """Weights whose sums depend on the order of addition: the whole-range request gives the
    bits of the min/max path (bins up to the max only) and each value's math.fsum."""
    top, _, _ = type_info(dtype)
    x = rng.integers(0, min(top, 300) + 1, 20_000).astype(dtype)
    for w in (rng.standard_normal(x.size) * 10.0 ** rng.integers(-8, 9, x.size),
              np.where(rng.random(x.size) < 0.01, 1e16, 1.0) * rng.choice([-1.0, 1.0], x.size),
              rng.random(x.size).astype(np.float32)):
        got = gpuhist.bincount(x, w, minlength=3, backend=backend)
        values = x.astype(np.int64)
        fsums = [math.fsum(w[values == v].astype(np.float64)) for v in range(got.size)]
        same_bits(got, np.array(fsums))
        with monkeypatch.context() as m:
            m.setattr(_api, "whole_range", lambda dtype, weighted: None)
            same_bits(gpuhist.bincount(x, w, minlength=3, backend=backend), got)


class CountingCore:
    """A library context's methods, counting the min/max and counting calls."""

    def __init__(self, core):
        self.core = core
        self.calls = []

    def __getattr__(self, name):
        method = getattr(self.core, name)
        if not callable(method):
            return method

        def counted(*args, **kwargs):
            self.calls.append(name)
            return method(*args, **kwargs)
        return counted


def test_one_library_call_without_min_max(rng, monkeypatch, backend):
    """8/16-bit samples: one counting call and no min/max pass (16-bit with weights, and wider
    types, keep the min/max pass)."""
    cores = []
    real_get = _context.get

    def get(*args, **kwargs):
        ctx = real_get(*args, **kwargs)

        class Proxy:
            core = CountingCore(ctx.core)
        cores.append(Proxy.core)
        return Proxy()
    monkeypatch.setattr(_context, "get", get)
    cases = [(np.uint8, False, ["histogram"]), (np.int8, True, ["histogram"]),
             (np.bool_, True, ["histogram"]), (np.uint16, False, ["histogram"]),
             (np.int16, False, ["histogram"]), (np.int16, True, ["minmax", "histogram"]),
             (np.int32, False, ["minmax", "histogram"])]
    for dtype, weighted, calls in cases:
        x = rng.integers(0, 2 if dtype is np.bool_ else 100, 5000).astype(dtype)
        w = rng.random(x.size) if weighted else None
        cores.clear()
        got = gpuhist.bincount(x, w, backend=backend)
        assert [c for core in cores for c in core.calls] == calls, (dtype, weighted)
        if w is None:
            same_bits(got, np.bincount(x))
