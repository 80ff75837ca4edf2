"""The plan cache (gpuhist._plan.plan_bins(cache=True)): a number of bins over a given range is
planned once and reused; the edges handed to the caller are fresh arrays each call, so writing
into them changes nothing later; range values that NumPy's edges tell apart (their types, the
sign of zero) get plans of their own; the cache stays bounded. Every result is compared with
NumPy's, bit for bit (host arrays, the cpu backend; the device side is in test_device.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuhist
from gpuhist import _plan
from conftest import same_bits


@pytest.fixture(autouse=True)
def empty_cache():
    _plan.clear_plan_cache()
    yield
    _plan.clear_plan_cache()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int64])
@pytest.mark.parametrize("bins", [256, 4096, 2**20])
def test_repeated_calls_with_edges_written_between(rng, dtype, bins):
    a = (rng.random(50_000) * 200).astype(dtype)
    rng_ = (0.0, 200.0)
    want_n, want_e = np.histogram(a, bins, rng_)
    seen = []
    for _ in range(3):
        n, e = gpuhist.histogram(a, bins, rng_, backend="cpu")
        same_bits(n, want_n)
        same_bits(e, want_e)
        assert e.flags.writeable and all(e is not s for s in seen)
        seen.append(e)
        e[:] = -1  # the caller owns the edges: the next call must not see this
        n[:] = -1
    e = gpuhist.histogram_bin_edges(a, bins, rng_, backend="cpu")
    same_bits(e, want_e)
    e[:] = 5
    same_bits(gpuhist.histogram_bin_edges(a, bins, rng_, backend="cpu"), want_e)
    d, e = gpuhist.histogram(a, bins, rng_, density=True, backend="cpu")
    same_bits(d, np.histogram(a, bins, rng_, density=True)[0])
    same_bits(e, want_e)


def test_range_values_numpy_tells_apart(rng):
    a32 = rng.standard_normal(20_000).astype(np.float32)
    a64 = a32.astype(np.float64)
    a16 = rng.integers(-3, 3, 20_000).astype(np.int16)
    ranges = [(0, 1), (0.0, 1.0), (-0.0, 1.0), (np.float32(0), np.float32(1)),
              (np.float64(-0.0), np.float64(1)), (np.int8(0), np.int64(1)), (-2, 2),
              (0.1, 0.7), (np.float32(0.1), np.float32(0.7)), (np.float16(0.1), 0.7),
              (1, 1), (1.0, 1.0)]
    for _ in range(2):  # the second round takes every plan from the cache
        for data in (a32, a64, a16):
            for r in ranges:
                for bins in (7, np.int64(7), 64):
                    n, e = gpuhist.histogram(data, bins, r, backend="cpu")
                    wn, we = np.histogram(data, bins, r)
                    same_bits(n, wn)
                    same_bits(e, we)


def _near(values, dtype, steps=3):
    """Every value of dtype within `steps` representable steps of each of `values`."""
    out = []
    for v in values:
        if dtype.kind == "f":
            x = np.array([v], dtype)
            lo = hi = x
            for _ in range(steps):
                lo = np.nextafter(lo, dtype.type(-np.inf))
                hi = np.nextafter(hi, dtype.type(np.inf))
                out += [lo, hi]
        else:
            x = np.array([int(np.floor(v)) + d for d in range(-steps, steps + 2)], np.float64)
        out.append(x)
    out = np.concatenate([np.asarray(o, np.float64) for o in out])
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        out = np.clip(out, info.min, info.max)
    return out.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int16, np.uint8])
def test_range_keeps_numpys_samples(rng, dtype):
    """NumPy keeps first <= x <= last compared with the range's values, then bins among its
    edges, which need not hold those values (NumPy 2's linspace in a float16 range's type,
    NumPy 1's float32 edges of a float64 range): samples between the two ends, on either side,
    with few and many bins, are counted where NumPy counts them (or not at all)."""
    dt = np.dtype(dtype)
    ranges = [(np.float16(0.1), 0.7), (0.1, np.float16(0.7)), (np.float16(0.3), 0.7),
              (np.float16(0.1), np.float32(0.7)), (np.float32(0.1), np.float16(0.7)),
              (np.float16(0.0), 2049.0), (np.float16(-2.2), np.float16(250.9)),
              (np.float16(1.3), 251.0), (0.1, 0.7), (np.float32(0.3), 0.9)]
    for r in ranges:
        for bins in (1, 7, 4096):
            try:
                want_e = np.histogram_bin_edges(np.zeros(0, dt), bins, r)
            except ValueError:
                continue  # edges NumPy 2 refuses (too many bins for the range)
            if not np.all(want_e[:-1] < want_e[1:]):
                continue  # NumPy 1.x bins with them; the library refuses them (SEMANTICS)
            ends = [float(r[0]), float(r[1]), float(want_e[0]), float(want_e[-1]),
                    float(want_e[1]), float(want_e[-2])]
            near = _near(ends, dt)
            with np.errstate(over="ignore", invalid="ignore"):
                bulk = (rng.random(3000) * (float(r[1]) - float(r[0])) * 1.2
                        + float(r[0]) - 0.1 * (float(r[1]) - float(r[0])))
            if dt.kind in "ui":
                info = np.iinfo(dt)
                bulk = np.clip(np.round(bulk), info.min, info.max)
            a = np.concatenate([near, bulk.astype(dt)])
            rng.shuffle(a)
            try:
                wn, we = np.histogram(a, bins, r)
            except (ValueError, IndexError) as e:  # NumPy's own index errors at the ends
                with pytest.raises(Exception):
                    gpuhist.histogram(a, bins, r, backend="cpu")
                continue
            n, e = gpuhist.histogram(a, bins, r, backend="cpu")
            same_bits(n, wn)
            same_bits(e, we)
            w = rng.standard_normal(a.size)
            n, _ = gpuhist.histogram(a, bins, r, weights=w, backend="cpu")
            assert np.allclose(n, np.histogram(a, bins, r, weights=w)[0], rtol=1e-12, atol=1e-12)


def test_cached_plan_is_frozen_and_bounded(rng):
    dt = np.dtype(np.float32)
    p = _plan.plan_bins(100, (0.0, 1.0), dt, 10, False, lambda: (0, 1), cache=True)
    assert p is _plan.plan_bins(100, (0.0, 1.0), dt, 10, False, lambda: (0, 1), cache=True)
    assert p.frozen and not p.np_edges.flags.writeable
    with pytest.raises(AttributeError):
        p.bins = 3
    with pytest.raises(ValueError):
        p.np_edges[0] = 1
    # without cache=True, or with data-dependent arguments, plans are built each time
    assert p is not _plan.plan_bins(100, (0.0, 1.0), dt, 10, False, lambda: (0, 1))
    assert not _plan.plan_bins(100, None, dt, 10, False, lambda: (0, 1), cache=True).frozen
    assert not _plan.plan_bins(np.linspace(0, 1, 5), None, dt, 10, False, lambda: (0, 1),
                               cache=True).frozen
    for bins in range(1, 3 * _plan.PLAN_CACHE_ENTRIES):
        _plan.plan_bins(bins, (0.0, 1.0), dt, 10, False, lambda: (0, 1), cache=True)
    assert len(_plan._plan_cache) == _plan.PLAN_CACHE_ENTRIES
    # a plan whose edges take more than half the cache's bytes is never kept
    big = _plan.PLAN_CACHE_BYTES // 8  # float64 edges: bins + 1 of them
    p = _plan.plan_bins(big, (0, 1), np.dtype(np.int64), 10, False, lambda: (0, 1), cache=True)
    assert not p.frozen
    assert sum(b for _, b in _plan._plan_cache.values()) <= _plan.PLAN_CACHE_BYTES
    # the errors are NumPy's, every time (a refused plan is not kept)
    for _ in range(2):
        with pytest.raises(ValueError, match="max must be larger"):
            gpuhist.histogram(np.zeros(3), 4, (1, 0), backend="cpu")
        with pytest.raises(ValueError, match="not finite"):
            gpuhist.histogram(np.zeros(3), 4, (0, np.nan), backend="cpu")
