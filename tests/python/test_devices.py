"""devices=: a host array shared out between several devices gives one device's result bit for
bit (counts, edges, weighted sums). On the CPU backend a number given twice runs two contexts
on the one device, so the sharing and the exact merge are tested anywhere; CUDA, with every
GPU, where there is one."""

from __future__ import annotations

import numpy as np
import pytest

import gpuhist
from conftest import backend_problem, same_bits


@pytest.mark.parametrize("devices", [[0, 0], (0, 0, 0)], ids=["two", "three"])
def test_devices_equal_one(rng, devices):
    x = rng.normal(0.0, 1.0, 200_003).astype(np.float32)
    w = rng.normal(0.0, 1e10, x.size)
    for bins, rng_ in ((64, None), (1000, (-2.0, 2.0)), ("fd", None)):
        one = gpuhist.histogram(x, bins, rng_, backend="cpu")
        many = gpuhist.histogram(x, bins, rng_, backend="cpu", devices=devices)
        same_bits(many[0], one[0])
        same_bits(many[1], one[1])
    same_bits(gpuhist.histogram(x, 50, weights=w, backend="cpu", devices=devices)[0],
              gpuhist.histogram(x, 50, weights=w, backend="cpu")[0])
    same_bits(gpuhist.histogram(x[::3], 50, backend="cpu", devices=devices)[0],
              np.histogram(x[::3], 50)[0])
    ids = rng.integers(0, 5000, 100_001)
    same_bits(gpuhist.bincount(ids, backend="cpu", devices=devices), np.bincount(ids))
    same_bits(gpuhist.bincount(ids, weights=w[:ids.size], backend="cpu", devices=devices),
              gpuhist.bincount(ids, weights=w[:ids.size], backend="cpu"))
    same_bits(gpuhist.histogram_bin_edges(x, "auto", backend="cpu", devices=devices),
              np.histogram_bin_edges(x, "auto"))


def test_devices_errors():
    x = np.arange(10.0)
    with pytest.raises(TypeError, match="devices"):
        gpuhist.histogram(x, devices=3)
    with pytest.raises(ValueError, match="devices"):
        gpuhist.histogram(x, devices=[])
    with pytest.raises(ValueError, match="devices"):
        gpuhist.histogram(x, devices=[0, -1])
    with pytest.raises(gpuhist.GpuhistError, match="device 1"):
        gpuhist.histogram(x, backend="cpu", devices=[0, 1])


def test_devices_all_cuda(rng):
    why = backend_problem("cuda")
    if why:
        pytest.skip(why)
    x = rng.integers(0, 256, 50_000_001, dtype=np.uint8)
    same_bits(gpuhist.histogram(x, 256, (0, 256), backend="cuda", devices="all")[0],
              gpuhist.histogram(x, 256, (0, 256), backend="cuda")[0])
