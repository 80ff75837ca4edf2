"""gpuhist.HistogramDD on device arrays (CuPy arrays, torch CUDA tensors): fills add their joint
counts and tallies on the device through gpuhist_nd_result.accumulate (DEVICE counts,
device_stats), in parts equal to numpy.histogramdd on all the points, without waiting for the
device; weighted device fills (counted from the host) give the bits of one host call.

These need a CUDA GPU, a library built with CUDA, and CuPy or torch: each test skips, printing
why, when one is missing (scripts/gpu-check runs them on the device machine, label `gpu`).
Seed: conftest.SEED.
"""

from __future__ import annotations

import time

import numpy as np

import gpuhist
from conftest import same_bits
from test_device import _device_libs


def test_device_fills_in_parts_equal_numpy(rng):
    for name, to_dev, sync, _ in _device_libs():
        # joint bins within the fused count (5 x 6 x 7) and beyond it (600 x 400: the map to
        # slots and the 1-D count), interleaved and in columns, f32, f64, u8
        for shape, dtype in [((5, 6, 7), np.float32), ((600, 400), np.float64),
                             ((16, 16), np.uint8), ((4, 3), np.float32)]:
            D = len(shape)
            n = 300_001
            if dtype == np.uint8:
                pts = rng.integers(0, 20, (n, D)).astype(np.uint8)
                ranges = [(2.0, 18.0)] * D
            else:
                pts = rng.random((n, D)).astype(dtype)
                pts[::97, 0] = np.nan
                pts[::89, D - 1] = 1.5
                ranges = [(0.0, 1.0)] * D
            h = gpuhist.HistogramDD(list(shape), ranges)
            cuts = [0, 1000, 1000, 150_000, n]
            for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
                if i % 2:
                    h.fill(to_dev(np.ascontiguousarray(pts[a:b])))  # one (N, D) array
                else:
                    h.fill(*[to_dev(np.ascontiguousarray(pts[a:b, k])) for k in range(D)])
            sync()
            want, _ = np.histogramdd(pts, list(shape), ranges)
            same_bits(h.values().astype(np.float64), want)
            nan = int(np.isnan(pts.astype(np.float64)).any(axis=1).sum())
            assert (h.total, h.nan) == (n, nan), name
            assert h.out == n - nan - int(want.sum()), name
            print(f"{name} {shape} {np.dtype(dtype).name}: strategy {h.strategy}")


def test_device_fills_do_not_wait(rng):
    """20 unweighted device fills on a stream kept busy by a 200 ms spin kernel return in less
    than half of that; the totals are right."""
    for name, to_dev, sync, spin in _device_libs():
        x = rng.random(1 << 20).astype(np.float32)
        y = rng.random(1 << 20).astype(np.float32)
        dx, dy = to_dev(x), to_dev(y)
        for shape in [(20, 30), (600, 400)]:  # the fused count, and the map + 1-D count
            h = gpuhist.HistogramDD(list(shape), [(0.0, 1.0), (0.0, 1.0)])
            h.fill(dx, dy)  # the buffers are made here
            sync()
            spin(200.0)
            t0 = time.perf_counter()
            for _ in range(20):
                h.fill(dx, dy)
            took = time.perf_counter() - t0
            sync()
            spun = time.perf_counter() - t0
            print(f"{name} {shape}: 20 fills took {took * 1e3:.2f} ms on a stream busy for "
                  f"{spun * 1e3:.2f} ms")
            assert took < spun / 2, f"{name} {shape}: the fills waited ({took:.4f} s of " \
                                    f"{spun:.4f} s)"
            want, _ = np.histogramdd(np.c_[x, y], list(shape), [(0.0, 1.0), (0.0, 1.0)])
            same_bits(h.values().astype(np.float64), want * 21)


def test_weighted_device_fills(rng):
    for name, to_dev, sync, _ in _device_libs():
        pts = rng.random((100_000, 2))
        w = (rng.random(100_000) - 0.5) * 1e6
        h = gpuhist.HistogramDD((30, 20), [(0.0, 1.0), (0.0, 1.0)])
        h.fill(to_dev(pts[:40_000, 0].copy()), to_dev(pts[:40_000, 1].copy()),
               weight=to_dev(w[:40_000]))
        h.fill(to_dev(pts[40_000:]), weight=to_dev(w[40_000:]))
        one, _ = gpuhist.histogramdd(pts, (30, 20), [(0.0, 1.0), (0.0, 1.0)], weights=w,
                                     backend="cpu")
        same_bits(h.values(), one)
        assert h.total == 100_000, name
