#!/usr/bin/env python3
"""bench/python/compare.py - gpuhist's Python API against NumPy (and CuPy, torch, fast_histogram,
boost_histogram when installed) on the same arrays, in the same run.

    python3 bench/python/compare.py                 # 256 MiB per array, every backend found
    python3 bench/python/compare.py --mib 1024 --repeat 7 --backends cpu,cuda

Cells (the issue's): u8 with 256 bins (histogram over [0, 256) and bincount), f32 with 4096
even bins, f32 with 2^20 even bins, uniform data; plus small repeated fills (1 M f32 samples
into a 100-bin gpuhist.Histogram, with and without weights). Each figure is the median of
--repeat runs after one warm-up, in GB/s of input read (the samples' bytes / seconds), printed
beside the device it ran on; every gpuhist result is checked equal to NumPy's before it is timed
(weighted sums: to within rounding). Device arrays (CuPy, torch CUDA) are timed with the
stream synchronised after each call. Benchmarks are not tests: nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

import gpuhist


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return f"{platform.processor() or 'CPU'} ({os.cpu_count()} cores)"


def timed(fn: Callable[[], Any], repeat: int, sync: Callable[[], None] = lambda: None
          ) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Table:
    def __init__(self) -> None:
        self.rows: List[Tuple[str, str, str, float, float, Optional[float]]] = []

    def add(self, case: str, impl: str, device: str, seconds: float, nbytes: int,
            numpy_seconds: Optional[float]) -> None:
        ratio = numpy_seconds / seconds if numpy_seconds else None
        self.rows.append((case, impl, device, seconds, nbytes / seconds / 1e9, ratio))
        r = f"{ratio:7.1f}x" if ratio else "      - "
        print(f"{case:<26} {impl:<30} {seconds * 1e3:10.2f} ms {nbytes / seconds / 1e9:8.2f} "
              f"GB/s {r}  [{device}]", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=256, help="MiB per array (default 256)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    ap.add_argument("--backends", default="", help="gpuhist backends (default: all usable)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fills", type=int, default=200, help="repeated fills to time")
    ap.add_argument("--fills-only", action="store_true", help="only the small repeated fills")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    n8 = args.mib << 20
    n32 = n8 // 4
    u8 = rng.integers(0, 256, n8, dtype=np.uint8)
    f32 = rng.random(n32, dtype=np.float32)
    cpu = cpu_name()
    print(f"gpuhist {gpuhist.__version__}, NumPy {np.__version__}, Python "
          f"{platform.python_version()}; {args.mib} MiB per array; median of {args.repeat}; "
          f"seed {args.seed}")
    print(f"host: {cpu}")

    backends = [b for b in (args.backends.split(",") if args.backends else
                            ["cpu", "opencl", "cuda"]) if b]
    usable = []
    for b in backends:
        if not gpuhist.backends().get(b):
            print(f"gpuhist backend {b}: not built in")
            continue
        try:
            gpuhist.histogram(u8[:1000], 256, (0, 256), backend=b)
            usable.append((b, gpuhist.device_name(b)))
        except gpuhist.GpuhistError as e:
            print(f"gpuhist backend {b}: {e}")
    print(f"{'case':<26} {'implementation':<30} {'median':>13} {'input':>13} {'vs NumPy':>8}")

    t = Table()
    cells: List[Tuple[str, np.ndarray, Any, Any]] = [
        ("u8 256 bins", u8, 256, (0, 256)),
        ("f32 4096 bins", f32, 4096, (0.0, 1.0)),
        ("f32 2^20 bins", f32, 1 << 20, (0.0, 1.0)),
    ]
    for case, a, bins, rng_ in ([] if args.fills_only else cells):
        want = np.histogram(a, bins, rng_)[0]
        t_np = timed(lambda: np.histogram(a, bins, rng_), args.repeat)
        t.add(case, "numpy.histogram", cpu, t_np, a.nbytes, None)
        for b, dev in usable:
            got = gpuhist.histogram(a, bins, rng_, backend=b)[0]
            if not np.array_equal(got, want):
                print(f"MISMATCH: gpuhist {b} {case}", file=sys.stderr)
                return 1
            s = timed(lambda: gpuhist.histogram(a, bins, rng_, backend=b), args.repeat)
            t.add(case, f"gpuhist.histogram [{b}]", dev, s, a.nbytes, t_np)
        peers(t, case, a, bins, rng_, args.repeat, cpu, t_np, want)
        if a.dtype == np.uint8:
            t_bc = timed(lambda: np.bincount(a, minlength=256), args.repeat)
            t.add("u8 bincount", "numpy.bincount", cpu, t_bc, a.nbytes, None)
            for b, dev in usable:
                assert np.array_equal(gpuhist.bincount(a, minlength=256, backend=b),
                                      np.bincount(a, minlength=256))
                s = timed(lambda: gpuhist.bincount(a, minlength=256, backend=b), args.repeat)
                t.add("u8 bincount", f"gpuhist.bincount [{b}]", dev, s, a.nbytes, t_bc)
        device_peers(t, case, a, bins, rng_, args.repeat, t_np, want)

    # small repeated fills: 1 M f32 samples into a 100-bin histogram
    small = f32[: 1 << 20]
    w = rng.random(small.size)
    fills = args.fills
    per_np = timed(lambda: np.histogram(small, 100, (0.0, 1.0)), fills)
    t.add("1M f32 fill, 100 bins", "numpy.histogram", cpu, per_np, small.nbytes, None)
    per_npw = timed(lambda: np.histogram(small, 100, (0.0, 1.0), weights=w), fills // 4 or 1)
    t.add("1M f32 fill+w, 100 bins", "numpy.histogram weights", cpu, per_npw, small.nbytes, None)
    per_np128 = timed(lambda: np.histogram(small, 128, (0.0, 1.0)), fills)
    t.add("1M f32 fill, 128 bins", "numpy.histogram", cpu, per_np128, small.nbytes, None)
    for b, dev in usable:
        # 100 bins over [0, 1): edges k/100 are not float32 values, so float32 samples are
        # compared with the float64 edges (explicit edges, binary search); 128 bins: even bins
        for nb, ref in ((100, per_np), (128, per_np128)):
            h = gpuhist.Histogram(nb, (0.0, 1.0), backend=b)
            s = timed(lambda: h.fill(small), fills)
            t.add(f"1M f32 fill, {nb} bins", f"gpuhist.Histogram.fill [{b}]", dev, s,
                  small.nbytes, ref)
        if b == "cpu":
            hw = gpuhist.Histogram(100, (0.0, 1.0), backend=b)
            s = timed(lambda: hw.fill(small, weights=w), fills // 4 or 1)
            t.add("1M f32 fill+w, 100 bins", f"gpuhist.Histogram.fill w [{b}]", dev, s,
                  small.nbytes, per_npw)
    return 0


def peers(t: Table, case: str, a: np.ndarray, bins: int, rng_: Any, repeat: int, cpu: str,
          t_np: float, want: np.ndarray) -> None:
    """fast_histogram and boost_histogram (threads) on the host, when installed."""
    try:
        import fast_histogram  # noqa: PLC0415

        if a.dtype != np.uint8:  # fast_histogram casts u8 to f64 first: skip that cell
            s = timed(lambda: fast_histogram.histogram1d(a, bins, rng_), repeat)
            t.add(case, "fast_histogram.histogram1d", cpu, s, a.nbytes, t_np)
    except ImportError:
        pass
    try:
        import boost_histogram as bh  # noqa: PLC0415

        def run() -> Any:
            h = bh.Histogram(bh.axis.Regular(bins, *rng_))
            h.fill(a, threads=os.cpu_count())
            return h

        s = timed(run, repeat)
        t.add(case, f"boost_histogram ({os.cpu_count()} threads)", cpu, s, a.nbytes, t_np)
    except ImportError:
        pass


def device_peers(t: Table, case: str, a: np.ndarray, bins: int, rng_: Any, repeat: int,
                 t_np: float, want: np.ndarray) -> None:
    """gpuhist on device arrays beside CuPy and torch, when a GPU and they are there."""
    try:
        import cupy as cp  # noqa: PLC0415

        d = cp.asarray(a)
        sync = cp.cuda.get_current_stream().synchronize
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        assert np.array_equal(cp.asnumpy(gpuhist.histogram(d, bins, rng_)[0]), want)
        t.add(case, "gpuhist (cupy array)", dev,
              timed(lambda: gpuhist.histogram(d, bins, rng_), repeat, sync), a.nbytes, t_np)
        t.add(case, "cupy.histogram", dev,
              timed(lambda: cp.histogram(d, bins, rng_), repeat, sync), a.nbytes, t_np)
        if a.dtype == np.uint8:
            t.add(case, "cupy.bincount", dev,
                  timed(lambda: cp.bincount(d, minlength=256), repeat, sync), a.nbytes, t_np)
        del d
    except ImportError:
        pass
    except Exception as e:  # noqa: BLE001 - no GPU: say so and go on
        print(f"cupy: {e}")
    try:
        import torch  # noqa: PLC0415

        if not torch.cuda.is_available():
            return
        d = torch.from_numpy(a).cuda()
        sync = torch.cuda.synchronize
        dev = torch.cuda.get_device_name(0)
        t.add(case, "gpuhist (torch tensor)", dev,
              timed(lambda: gpuhist.histogram(d, bins, rng_), repeat, sync), a.nbytes, t_np)
        if a.dtype == np.uint8:
            t.add(case, "torch.bincount", dev,
                  timed(lambda: torch.bincount(d, minlength=256), repeat, sync), a.nbytes, t_np)
        else:
            t.add(case, "torch.histc", dev,
                  timed(lambda: torch.histc(d, bins, *rng_), repeat, sync), a.nbytes, t_np)
        del d
    except ImportError:
        pass


if __name__ == "__main__":
    sys.exit(main())
