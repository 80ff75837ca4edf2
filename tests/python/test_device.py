"""Device arrays: CuPy arrays and torch CUDA tensors, zero-copy through the CUDA array interface
and DLPack, results on the same device as the same array type, work on the caller's stream.

These need a CUDA GPU, a library built with CUDA, and CuPy or torch: each test skips, printing
why, when one is missing (scripts/gpu-check runs them on the device machine).
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuhist
from conftest import backend_problem, same_bits


def need_cuda() -> None:
    problem = backend_problem("cuda")
    if problem:
        print(f"skipping: {problem}")
        pytest.skip(problem)


def need(module: str):
    try:
        mod = __import__(module)
    except ImportError:
        print(f"skipping: {module} is not installed")
        pytest.skip(f"{module} is not installed")
    need_cuda()
    return mod


def test_cupy_histogram_bincount(rng):
    cp = need("cupy")
    a = rng.standard_normal(1_000_000).astype(np.float32)
    d = cp.asarray(a)
    for bins, range in [(256, (-4, 4)), (100, None), ([-2, -1, 0, 0.5, 3], None), ("sqrt", None)]:
        hist, edges = gpuhist.histogram(d, bins, range)
        assert isinstance(hist, cp.ndarray) and isinstance(edges, cp.ndarray)
        want = np.histogram(a, bins, range)
        same_bits(cp.asnumpy(hist), want[0])
        same_bits(cp.asnumpy(edges), want[1])
    u = rng.integers(0, 1000, 100_000).astype(np.int32)
    same_bits(cp.asnumpy(gpuhist.bincount(cp.asarray(u), minlength=1200)),
              np.bincount(u, minlength=1200))
    # a strided view (rows of contiguous samples) and a non-contiguous one
    m = cp.asarray(a[:640_000].reshape(800, 800))
    same_bits(cp.asnumpy(gpuhist.histogram(m[::2, :], 50, (-3, 3))[0]),
              np.histogram(a[:640_000].reshape(800, 800)[::2, :], 50, (-3, 3))[0])
    with pytest.raises(ValueError, match="contiguous"):
        gpuhist.histogram(m[:, ::2], 50, (-3, 3))


def test_cupy_stream_and_repeated_fills(rng):
    cp = need("cupy")
    stream = cp.cuda.Stream(non_blocking=True)
    h = gpuhist.Histogram(100, (0.0, 1.0))
    parts = [rng.random(1_000_000).astype(np.float32) for _ in range(5)]
    with stream:
        for p in parts:
            h.fill(cp.asarray(p))  # counted and added on the device, no host synchronisation
    stream.synchronize()
    same_bits(h.values(), np.histogram(np.concatenate(parts).astype(np.float64), 100,
                                       (0.0, 1.0))[0])
    assert h.total == 5_000_000


def test_torch_cuda_tensors(rng):
    torch = need("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    a = rng.standard_normal(500_000)
    t = torch.from_numpy(a).cuda()
    hist, edges = gpuhist.histogram(t, 64, (-3, 3))
    assert isinstance(hist, torch.Tensor) and hist.is_cuda and hist.dtype == torch.int64
    same_bits(hist.cpu().numpy(), np.histogram(a, 64, (-3, 3))[0])
    same_bits(edges.cpu().numpy(), np.histogram_bin_edges(a, 64, (-3, 3)))
    x = torch.randint(0, 300, (100_000,), device="cuda")
    same_bits(gpuhist.bincount(x).cpu().numpy(), np.bincount(x.cpu().numpy()))
    d = gpuhist.histogram(t, 10, density=True)[0]
    assert np.allclose(d.cpu().numpy(), np.histogram(a, 10, density=True)[0])
    with pytest.raises(ValueError, match="cannot read a CUDA device array"):
        gpuhist.histogram(t, 10, backend="cpu")


def test_dlpack_only_producer(rng):
    cp = need("cupy")

    class OnlyDLPack:  # a producer with DLPack but no __cuda_array_interface__
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, stream=None):
            return self.arr.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    a = rng.integers(0, 256, 100_000, dtype=np.uint8)
    hist, _ = gpuhist.histogram(OnlyDLPack(cp.asarray(a)), 256, (0, 256))
    same_bits(np.asarray(hist), np.histogram(a, 256, (0, 256))[0])  # host counts: NumPy


def test_int64_beyond_2_53_on_the_device(rng):
    # NumPy rounds 64-bit integers to float64 before binning (docs/SEMANTICS.md); a device
    # array beyond 2^53 is converted on its device and counted as NumPy counts the host copy
    p53, p63 = 2**53, 2**63
    base = np.array([p53 + k for k in range(-3, 4)] + [-(p53 + 1), p63 - 1, -p63, 0, 2**60 + 1],
                    np.int64)
    a = rng.choice(base, 100_000)
    for mod in ("cupy", "torch"):
        try:
            lib = __import__(mod)
        except ImportError:
            print(f"skipping {mod}: not installed")
            continue
        need_cuda()
        d = lib.asarray(a) if mod == "cupy" else lib.from_numpy(a).cuda()
        for bins, r in [(7, None), (4, (-p53 - 1, p53 + 1)), (5, (0.0, float(p63)))]:
            hist, edges = gpuhist.histogram(d, bins, r)
            host = (lambda x: lib.asnumpy(x)) if mod == "cupy" else (lambda x: x.cpu().numpy())
            want = np.histogram(a, bins, r)
            same_bits(host(hist), want[0])
            same_bits(host(edges), want[1])


def fsum_bins(x: np.ndarray, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each bin's weights summed exactly and rounded once (math.fsum), NumPy's bins."""
    import math
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == edges[-1]] = edges.size - 2
    keep = (x >= edges[0]) & (x <= edges[-1])
    return np.array([math.fsum(w[keep & (idx == b)].tolist()) for b in range(edges.size - 1)])


def test_device_weights(rng):
    """Weights on the device beside device samples: the library's weighted count on the CUDA
    backend, sums correctly rounded (== fsum), returned as the array library's arrays, and a
    weighted Histogram fill on the device equal to the same fill on the host copies. Skips,
    saying so, when this library's CUDA backend does not sum weights (UNSUPPORTED)."""
    x = rng.standard_normal(300_000)
    w = np.where(rng.random(x.size) < 0.5, 1e16, -1e16) + rng.standard_normal(x.size)
    edges = np.linspace(-3, 3, 65)
    want = fsum_bins(x, w, edges)
    ran = False
    for mod in ("cupy", "torch"):
        try:
            lib = __import__(mod)
        except ImportError:
            print(f"skipping {mod}: not installed")
            continue
        need_cuda()
        if mod == "cupy":
            dx, dw, host = lib.asarray(x), lib.asarray(w), lib.asnumpy
        else:
            dx, dw = lib.from_numpy(x).cuda(), lib.from_numpy(w).cuda()
            host = lambda t: t.cpu().numpy()  # noqa: E731
        try:
            hist, e = gpuhist.histogram(dx, 64, (-3, 3), weights=dw)
        except gpuhist.GpuhistError as err:
            if err.status == "UNSUPPORTED":
                print(f"skipping: the CUDA backend does not sum weights here: {err}")
                pytest.skip(f"the CUDA backend does not sum weights here: {err}")
            raise
        ran = True
        same_bits(host(hist), want)
        same_bits(host(e), edges)
        # float32 weights: sums returned as float32, as NumPy does
        w32 = w.astype(np.float32)
        dw32 = lib.asarray(w32) if mod == "cupy" else lib.from_numpy(w32).cuda()
        h32 = gpuhist.histogram(dx, 64, (-3, 3), weights=dw32)[0]
        same_bits(host(h32), fsum_bins(x, w32.astype(np.float64), edges).astype(np.float32))
        # bincount with device weights
        ids = rng.integers(0, 100, x.size)
        di = lib.asarray(ids) if mod == "cupy" else lib.from_numpy(ids).cuda()
        got = host(gpuhist.bincount(di, weights=dw, minlength=120))
        same_bits(got, gpuhist.bincount(ids, weights=w, minlength=120))
        # a weighted Histogram filled on the device equals the one filled on the host
        hd = gpuhist.Histogram(64, (-3.0, 3.0)).fill(dx, weights=dw).fill(dx)
        hh = gpuhist.Histogram(64, (-3.0, 3.0)).fill(x, weights=w).fill(x)
        same_bits(hd.values(), hh.values())
        same_bits(hd.variances(), hh.variances())
        with pytest.raises(TypeError, match="host"):
            gpuhist.histogram(dx, 64, (-3, 3), weights=w)  # host weights, device samples
        with pytest.raises(ValueError, match="same shape"):
            gpuhist.histogram(dx, 64, (-3, 3), weights=dw[:-1])
    if not ran:
        pytest.skip("neither CuPy nor torch is installed")


def _device_libs():
    """(name, to_device, synchronize, spin(ms)) of CuPy and torch where installed (skips,
    saying why, when neither is)."""
    libs = []
    try:
        import cupy as cp

        spin_kernel = cp.RawKernel(r"""
extern "C" __global__ void gpuhist_test_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}""", "gpuhist_test_spin")
        rate = cp.cuda.runtime.getDeviceProperties(0).get("clockRate", 0) or 2_000_000

        def cp_spin(ms: float) -> None:
            spin_kernel((1,), (1,), (np.int64(rate * ms),))

        libs.append(("cupy", cp.asarray, lambda: cp.cuda.get_current_stream().synchronize(),
                     cp_spin))
    except ImportError:
        print("cupy: not installed")
    try:
        import torch

        if torch.cuda.is_available():
            rate = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0) or 2_000_000
            libs.append(("torch", lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
                         lambda: torch.cuda.current_stream().synchronize(),
                         lambda ms: torch.cuda._sleep(int(rate * ms))))
    except ImportError:
        print("torch: not installed")
    if not libs:
        pytest.skip("neither CuPy nor torch (with CUDA) is installed")
    need_cuda()
    return libs


@pytest.mark.parametrize("edges", [None, [-np.inf, -1.0, 0.0, 0.0, 1.0, np.inf]])
def test_histogram_device_fills_accumulate(rng, edges):
    """Histogram.fill on CuPy arrays / torch tensors adds counts, tallies and the exact weight
    state on the device (result.accumulate): the totals of many fills (unweighted, f32 and f64
    weights, NaN and outliers, reads between fills) equal the same fills of host copies on the
    CPU backend bit for bit, and the weighted sums are those of one fill over all the samples
    (plans mapping bins 1:1 and plans with extra library bins and clamped ends)."""
    for name, to_dev, sync, _ in _device_libs():
        make = (lambda: gpuhist.Histogram(100, (0.0, 1.0))) if edges is None else \
            (lambda: gpuhist.Histogram(edges))
        hd, hh, one = make(), make(), make()
        xs, ws = [], []
        for i, (n, wt) in enumerate([(100_000, np.float32), (1, np.float32), (0, np.float32),
                                     (250_000, np.float32), (77_777, np.float32)]):
            x = (rng.random(n) * 1.2 - 0.1).astype(np.float32)
            x[: n // 100] = np.nan
            w = (rng.standard_normal(n) * 1e6).astype(wt)
            hd.fill(to_dev(x), weights=to_dev(w))
            hh.fill(x, weights=w)
            xs.append(x)
            ws.append(w)
            if i == 1:
                hd.values()  # a read between fills
        extra = rng.random(5000).astype(np.float32)
        hd.fill(to_dev(extra))  # unweighted after weighted: weight 1 each
        hh.fill(extra)
        sync()
        one.fill(np.concatenate(xs), weights=np.concatenate(ws)).fill(extra)
        for h in (hh, one):
            same_bits(hd.values(), h.values())
            same_bits(hd.variances(), h.variances())
            same_bits(hd.entries, h.entries)
            assert (hd.underflow, hd.overflow, hd.nan, hd.total) == \
                (h.underflow, h.overflow, h.nan, h.total), name
        # f64 weights and unweighted-only histograms
        h64, hh64 = make(), make()
        u, hu = make(), make()
        for _ in range(3):
            x = rng.standard_normal(50_000)
            w = rng.standard_normal(50_000)
            h64.fill(to_dev(x), weights=to_dev(w))
            hh64.fill(x, weights=w)
            u.fill(to_dev(x))
            hu.fill(x)
        same_bits(h64.values(), hh64.values())
        same_bits(h64.variances(), hh64.variances())
        same_bits(u.values(), hu.values())
        assert (u.underflow, u.overflow, u.nan, u.total) == \
            (hu.underflow, hu.overflow, hu.nan, hu.total)
        # weights the array library converts (float16, a strided view): the fill waits for
        # its work before the converted copy goes
        hc, hhc = make(), make()
        x = rng.standard_normal(40_000)
        w16 = rng.standard_normal(80_000).astype(np.float16)
        hc.fill(to_dev(x), weights=to_dev(w16)[::2])
        hhc.fill(x, weights=w16[::2])
        same_bits(hc.values(), hhc.values())
        same_bits(hc.variances(), hhc.variances())


def test_histogram_device_fills_do_not_wait(rng):
    """A device fill, weighted or not, only enqueues its work: on a stream kept busy by a
    200 ms spin kernel, 20 fills return in less than half of that; the totals are right."""
    import time
    for name, to_dev, sync, spin in _device_libs():
        x = rng.random(1 << 20).astype(np.float32)
        w = rng.random(1 << 20).astype(np.float32)
        dx, dw = to_dev(x), to_dev(w)
        for weighted in (False, True):
            h = gpuhist.Histogram(100, (0.0, 1.0))
            h.fill(dx, weights=dw if weighted else None)  # the buffers are made here
            sync()
            spin(200.0)
            t0 = time.perf_counter()
            for _ in range(20):
                h.fill(dx, weights=dw if weighted else None)
            took = time.perf_counter() - t0
            sync()
            spun = time.perf_counter() - t0
            print(f"{name}, weighted={weighted}: 20 fills took {took * 1e3:.2f} ms on a stream "
                  f"busy for {spun * 1e3:.2f} ms")
            assert took < spun / 2, f"{name}: the fills waited ({took:.4f} s of {spun:.4f} s)"
            ref = gpuhist.Histogram(100, (0.0, 1.0), backend="cpu")
            for _ in range(21):
                ref.fill(x, weights=w if weighted else None)
            same_bits(h.values(), ref.values())


@pytest.mark.parametrize("bins", [256, 4096, 2**20])
def test_repeated_calls_with_edges_written_between(rng, bins):
    """A number of bins over a given range is planned once and its edges kept on the device
    (per stream); each call returns fresh hist and edges arrays, so writing into them between
    calls changes nothing, on the current stream and on another one."""
    from gpuhist import _plan

    _plan.clear_plan_cache()
    a = rng.random(1_000_000).astype(np.float32)
    u = rng.integers(0, 256, 1_000_000).astype(np.uint8)
    for name, to_device, synchronize, _ in _device_libs():
        for data, r in ((a, (0.0, 1.0)), (u, (0, 256))):
            want_n, want_e = np.histogram(data, bins, r)
            d = to_device(data)
            seen = []
            for i in range(4):
                if name == "cupy" and i >= 2:
                    import cupy as cp

                    with cp.cuda.Stream(non_blocking=True) as s:  # another stream's own copy
                        n, e = gpuhist.histogram(d, bins, r)
                        e2 = gpuhist.histogram_bin_edges(d, bins, r)
                    s.synchronize()
                else:
                    n, e = gpuhist.histogram(d, bins, r)
                    e2 = gpuhist.histogram_bin_edges(d, bins, r)
                    synchronize()
                got_n = n.cpu().numpy() if name == "torch" else n.get()
                got_e = e.cpu().numpy() if name == "torch" else e.get()
                got_e2 = e2.cpu().numpy() if name == "torch" else e2.get()
                same_bits(got_n, want_n)
                same_bits(got_e, want_e)
                same_bits(got_e2, want_e)
                seen += [e, e2]  # kept alive: each call's edges are arrays of their own
                ptrs = {x.data_ptr() if name == "torch" else x.data.ptr for x in seen}
                assert len(ptrs) == len(seen)
                e[:] = -1  # the caller owns these: the next call must not see the writes
                e2[:] = 7
                n[:] = -1
                synchronize()
    _plan.clear_plan_cache()


def _small_type(dtype):
    """(type's max, non-negative values, bins of the whole type) of a bool/8/16-bit dtype."""
    if np.dtype(dtype).kind == "b":
        return 1, 2, 256
    info = np.iinfo(dtype)
    return int(info.max), int(info.max) + 1, 2 ** (8 * np.dtype(dtype).itemsize)


def test_bincount_small_types_on_the_device(rng):
    """bincount of bool and 8/16-bit CuPy arrays / torch tensors (one count over a bin per value
    of the type, no min/max pass; weighted 16-bit: the min/max pass): NumPy's result bit for
    bit, as the array library's int64 (float64 with weights) array on the device, for values up
    to the type's max, minlength below / at / above the range, weights (multiples of 1/8: any
    order of addition gives NumPy's bits), empty arrays, views, negative values (NumPy's
    ValueError and message)."""
    for name, to_dev, sync, spin in _device_libs():
        host = (lambda t: t.cpu().numpy()) if name == "torch" else (lambda a: a.get())
        for dtype in (np.bool_, np.uint8, np.int8, np.uint16, np.int16):
            top, nonneg, whole = _small_type(dtype)
            try:
                to_dev(np.zeros(2, dtype))
            except (TypeError, RuntimeError, KeyError) as e:
                print(f"{name}: no {np.dtype(dtype).name} device arrays here ({e}); skipped")
                continue
            print(f"{name} {np.dtype(dtype).name}")
            for values in (rng.integers(0, min(top, 40) + 1, 200_000),
                           rng.integers(0, top + 1, 200_000), np.full(50_000, top),
                           np.zeros(1000, np.int64), np.array([min(top, 3)])):
                x = values.astype(dtype)
                dx = to_dev(x)
                for minlength in (0, 1, nonneg - 1, nonneg, nonneg + 1, whole, whole + 300):
                    got = gpuhist.bincount(dx, minlength=minlength)
                    assert type(got) is type(dx) and str(got.dtype).endswith("int64")
                    same_bits(host(got), np.bincount(x, minlength=minlength))
                w = rng.integers(-64, 65, x.size) / 8.0
                for wt in (w, w.astype(np.float32)):
                    try:
                        got = gpuhist.bincount(dx, to_dev(wt), minlength=top + 2)
                    except gpuhist.GpuhistError as err:
                        if err.status != "UNSUPPORTED":
                            raise
                        print(f"{name}: the CUDA backend does not sum weights here: {err}")
                        continue
                    assert type(got) is type(dx)
                    same_bits(host(got), np.bincount(x, wt, minlength=top + 2))
            for minlength in (0, 5, whole + 1):
                empty = to_dev(np.zeros(0, dtype))
                same_bits(host(gpuhist.bincount(empty, minlength=minlength)),
                          np.bincount(np.zeros(0, dtype), minlength=minlength))
            x = rng.integers(0, top + 1, 100_001).astype(dtype)
            dx = to_dev(x)
            same_bits(host(gpuhist.bincount(dx[3:-5])), np.bincount(x[3:-5]))
            if name == "cupy":  # torch has no negative strides
                same_bits(host(gpuhist.bincount(dx[::-1], minlength=9)),
                          np.bincount(x[::-1], minlength=9))
            with pytest.raises(ValueError, match="contiguous"):
                gpuhist.bincount(dx[::2])  # device arrays: contiguous (or rows) only
            if np.dtype(dtype).kind == "i":
                for value, where in ((-1, 0), (int(np.iinfo(dtype).min), 50_000), (-3, 100_000)):
                    bad = x.copy()
                    bad[where] = value
                    with pytest.raises(ValueError) as want:
                        np.bincount(bad)
                    for kw in ({}, {"minlength": 4}):
                        with pytest.raises(ValueError) as got_err:
                            gpuhist.bincount(to_dev(bad), **kw)
                        assert str(got_err.value) == str(want.value)


def test_bincount_small_types_wait_for_their_stream(rng):
    """The one host synchronisation of a u8/i16 device bincount reads the counts on the stream
    they were counted on: with that stream (the current one, or another one given as stream=)
    kept busy by a 100 ms spin kernel, the result is still NumPy's."""
    for name, to_dev, sync, spin in _device_libs():
        host = (lambda t: t.cpu().numpy()) if name == "torch" else (lambda a: a.get())
        for dtype in (np.uint8, np.int16):
            x = rng.integers(0, 200, 1 << 22).astype(dtype)
            dx = to_dev(x)
            want = np.bincount(x, minlength=7)
            sync()
            if name == "cupy":
                import cupy as cp

                other = cp.cuda.Stream(non_blocking=True)
                with other:
                    spin(100.0)
                    same_bits(host(gpuhist.bincount(dx, minlength=7)), want)  # current stream
                    spin(100.0)
                same_bits(host(gpuhist.bincount(dx, minlength=7, stream=other)), want)
            else:
                import torch

                other = torch.cuda.Stream()
                with torch.cuda.stream(other):
                    spin(100.0)
                    same_bits(host(gpuhist.bincount(dx, minlength=7)), want)
                    spin(100.0)
                same_bits(host(gpuhist.bincount(dx, minlength=7, stream=other)), want)
            sync()
