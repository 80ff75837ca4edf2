#!/usr/bin/env python3
"""bench/python/fills.py - small repeated fills: the cost of one fill above the kernel's.

    python3 bench/python/fills.py                    # 1 M f32 samples (+ f32 weights), 100 bins
    python3 bench/python/fills.py --fills 2000 --samples 1048576 --bins 100

The case physics fitters and coffea-style analyses run thousands of times a second: 1 M float32
samples with float32 weights filled into a 100-bin histogram over [0, 1), again and again,
accumulating on the device with no host synchronisation between fills. Each implementation
fills `--fills` times into one accumulator:

  gpuhist     gpuhist.Histogram(100, (0.0, 1.0)).fill(x[, weights=w]) on a CuPy array (and a
              torch tensor): each fill is one library call that adds its counts, tallies and
              exact weight state into the histogram's buffers on the device (result.accumulate),
              weighted or not, without waiting for the device;
  cupy        acc += cupy.histogram(x, 100, (0, 1)[, weights=w])[0];
  torch       acc += torch.histc(x, 100, 0, 1) (unweighted; torch.histc takes no weights), and
              weighted acc += torch.bincount(bin, weights=w, minlength=100) with bin computed
              as (x * 100).long() on the samples inside [0, 1) (torch.histogram has no CUDA
              implementation).

Figures per implementation (median of --repeat rounds; microseconds per fill):

  kernel   the GPU time of one fill's work, measured with CUDA events without a profiler: a
           spin kernel that keeps the GPU busy for ~10 ms is enqueued first, then the start
           event, the fill, the end event. The host enqueues the whole fill while the GPU is
           still spinning, so the two events bracket the fill's kernels back to back, without
           the host's launch gaps: kernel = the device time the fill needs, and nothing else.
           (If the fill call itself takes longer than the spin, it waited for the GPU - it
           synchronises - and the figure is marked "sync".)
  wall     N fills back to back, one synchronisation at the end, divided by N: what a loop of
           fills costs.
  host     the same N fill calls timed until the last one returns (no synchronisation): the
           host's cost of one fill (Python, the binding, the launches).
  over     wall - kernel: the overhead per fill above the kernel time (the issue's target is
           at most 20 us for gpuhist).

Every gpuhist total is checked before any timing: counts against N x numpy.histogram of the
float64 samples over the same float64 edges; weighted sums bit for bit against the exact sum of
N copies of the samples' weights, rounded once (the CPU backend's exact weight state of one fill
added N times with gpuhist's exact state addition), and to 1e-9 relative against NumPy.
Without a GPU (or without CuPy/torch) the device rows are skipped, saying why, and the host rows
(NumPy arrays: gpuhist on the CPU backend beside numpy.histogram; wall and host only) still run.
Benchmarks are not tests: nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

import gpuhist

SPIN_MS = 10.0


class Row:
    def __init__(self, impl: str, device: str, kernel: Optional[float], wall: float,
                 host: float, note: str = "") -> None:
        self.impl, self.device, self.kernel, self.wall, self.host, self.note = (
            impl, device, kernel, wall, host, note)

    def line(self) -> str:
        k = f"{self.kernel * 1e6:9.1f}" if self.kernel is not None else "        -"
        over = (f"{(self.wall - self.kernel) * 1e6:9.1f}" if self.kernel is not None
                else "        -")
        return (f"{self.impl:<44} {k} {self.wall * 1e6:9.1f} {self.host * 1e6:9.1f} {over}  "
                f"[{self.device}]{' ' + self.note if self.note else ''}")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


HEADER = f"{'implementation':<44} {'kernel':>9} {'wall':>9} {'host':>9} {'over':>9}  (us/fill)"


def exact_sums(x: np.ndarray, w: np.ndarray, bins: int, fills: int) -> np.ndarray:
    """The sums of `fills` fills of (x, w), each bin's exact sum rounded once: one fill's exact
    weight state on the CPU backend, added to itself `fills` times (exactly), then rounded."""
    from gpuhist import _context, _core  # noqa: PLC0415

    ctx = _context.get("cpu")
    # the library request the Histogram makes for these samples (its float64 edges)
    plan = gpuhist.Histogram(bins, (0.0, 1.0), backend="cpu")._plan("f32" if x.dtype ==
                                                                    np.float32 else "f64")
    wdt = "f32" if w.dtype == np.float32 else "f64"
    words = _core.weight_state_words(plan.bins, wdt, True)
    one = np.zeros(words, np.int64)
    counts = np.zeros(plan.bins, np.int64)
    sums, sq = np.zeros(plan.bins), np.zeros(plan.bins)
    ctx.core.histogram(x, *plan.args(), counts, w, sums, sq, weight_state=one)
    total = np.zeros(words, np.int64)
    for _ in range(fills):
        _core.weight_state_add(total, one, plan.bins, wdt, True)
    _core.weight_state_sums(total, plan.bins, wdt, True, bool(plan.clamp), sums, sq)
    return sums if plan.src is None else sums[plan.src]


def loop_times(fill: Callable[[], Any], sync: Callable[[], None], n: int, repeat: int
               ) -> Tuple[float, float]:
    """(wall per fill, host per fill): medians over `repeat` rounds of n fills."""
    walls, hosts = [], []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fill()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        hosts.append((t1 - t0) / n)
        walls.append((t2 - t0) / n)
    return statistics.median(walls), statistics.median(hosts)


# ---- the device: spin kernel and events, through CuPy or torch ------------------------------

class Cuda:
    """Events, the spin kernel and synchronisation on the current stream of CuPy or torch."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        if lib == "cupy":
            import cupy as cp  # noqa: PLC0415

            self.cp = cp
            self.name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            self.spin_kernel = cp.RawKernel(r"""
extern "C" __global__ void gpuhist_bench_spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}""", "gpuhist_bench_spin")
            rate_khz = cp.cuda.runtime.getDeviceProperties(0).get("clockRate", 0)
        else:
            import torch  # noqa: PLC0415

            self.torch = torch
            self.name = torch.cuda.get_device_name(0)
            rate_khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0)
        # cycles for SPIN_MS at the clock rate the device reports (2 GHz when it reports none),
        # then scaled once by the spin's measured time
        self.cycles = int((rate_khz or 2_000_000) * SPIN_MS)
        self.sync()
        e0 = self.event()
        self.spin()
        e1 = self.event()
        took = self.elapsed(e0, e1)
        if took > 0:
            self.cycles = int(self.cycles * (SPIN_MS / 1e3) / took)

    def sync(self) -> None:
        if self.lib == "cupy":
            self.cp.cuda.get_current_stream().synchronize()
        else:
            self.torch.cuda.current_stream().synchronize()

    def event(self) -> Any:
        if self.lib == "cupy":
            e = self.cp.cuda.Event()
            e.record()
            return e
        e = self.torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def elapsed(self, a: Any, b: Any) -> float:
        b.synchronize()
        if self.lib == "cupy":
            return self.cp.cuda.get_elapsed_time(a, b) / 1e3
        return a.elapsed_time(b) / 1e3

    def spin(self) -> None:
        if self.lib == "cupy":
            self.spin_kernel((1,), (1,), (np.int64(self.cycles),))
        else:
            self.torch.cuda._sleep(self.cycles)

    def kernel_time(self, fill: Callable[[], Any], repeat: int) -> Tuple[float, bool]:
        """(median device time of one fill's work, whether a fill call outlasted the spin)."""
        times, waited = [], False
        for _ in range(repeat):
            self.sync()
            self.spin()
            e0 = self.event()
            h0 = time.perf_counter()
            fill()
            h1 = time.perf_counter()
            e1 = self.event()
            times.append(self.elapsed(e0, e1))
            waited |= (h1 - h0) * 1e3 > SPIN_MS * 0.8
        return statistics.median(times), waited


def device_rows(args: argparse.Namespace, x_host: np.ndarray, w_host: np.ndarray,
                want_counts: np.ndarray, want_sums: np.ndarray, exact: np.ndarray) -> List[Row]:
    rows: List[Row] = []
    n, bins = args.fills, args.bins
    have_cupy = have_torch = False
    try:
        import cupy as cp  # noqa: PLC0415

        have_cupy = cp.cuda.runtime.getDeviceCount() > 0
    except Exception as e:  # noqa: BLE001 - no CuPy or no GPU: say so
        print(f"cupy: skipped ({type(e).__name__}: {e})")
    try:
        import torch  # noqa: PLC0415

        have_torch = torch.cuda.is_available()
        if not have_torch:
            print("torch: skipped (no CUDA device)")
    except ImportError as e:
        print(f"torch: skipped ({e})")
    if not gpuhist.backends().get("cuda"):
        print("gpuhist: the CUDA backend is not built in: gpuhist device rows skipped")

    def gpuhist_rows(lib: str, cuda: Cuda, x: Any, w: Any) -> None:
        if not gpuhist.backends().get("cuda"):
            return
        for weighted in (False, True):
            label = f"gpuhist.Histogram.fill ({lib}{', f32 weights' if weighted else ''})"
            h = gpuhist.Histogram(bins, (0.0, 1.0))
            fill = (lambda: h.fill(x, weights=w)) if weighted else (lambda: h.fill(x))
            try:
                for _ in range(n):
                    fill()
                cuda.sync()
            except (NotImplementedError, gpuhist.GpuhistError, TypeError, ValueError) as e:
                print(f"{label}: skipped ({type(e).__name__}: {e})")
                continue
            got = h.values()
            if weighted:
                ok = np.allclose(got, n * want_sums, rtol=1e-9, atol=0) and \
                    got.tobytes() == exact.tobytes()
            else:
                ok = np.array_equal(got, n * want_counts)
            if not ok:
                print(f"MISMATCH: {label}: {got[:5]} ...", file=sys.stderr)
                raise SystemExit(1)
            kernel, waited = cuda.kernel_time(fill, args.repeat * 3)
            wall, host = loop_times(fill, cuda.sync, n, args.repeat)
            rows.append(Row(label, cuda.name, kernel, wall, host,
                            f"strategy {h.strategy}" + (" (sync)" if waited else "")))
            print(rows[-1].line(), flush=True)

    if have_cupy:
        import cupy as cp  # noqa: PLC0415

        cuda = Cuda("cupy")
        x, w = cp.asarray(x_host), cp.asarray(w_host)
        gpuhist_rows("cupy", cuda, x, w)
        for weighted in (False, True):
            acc = cp.zeros(bins, cp.float64 if weighted else cp.int64)

            def fill(weighted: bool = weighted, acc: Any = acc) -> None:
                acc.__iadd__(cp.histogram(x, bins, (0.0, 1.0),
                                          weights=w if weighted else None)[0])

            kernel, waited = cuda.kernel_time(fill, args.repeat * 3)
            wall, host = loop_times(fill, cuda.sync, n, args.repeat)
            rows.append(Row(f"cupy.histogram{' weights' if weighted else ''} + acc", cuda.name,
                            kernel, wall, host, "(sync)" if waited else ""))
            print(rows[-1].line(), flush=True)
        del x, w
    if have_torch:
        import torch  # noqa: PLC0415

        cuda = Cuda("torch")
        x = torch.from_numpy(x_host).cuda()
        w = torch.from_numpy(w_host).cuda()
        gpuhist_rows("torch", cuda, x, w)
        acc = torch.zeros(bins, dtype=torch.float32, device="cuda")

        def histc() -> None:
            acc.add_(torch.histc(x, bins, 0.0, 1.0))

        accw = torch.zeros(bins, dtype=torch.float64, device="cuda")

        def bincount_w() -> None:
            inside = (x >= 0) & (x < 1)
            idx = (x * bins).long().clamp_(0, bins - 1)
            accw.add_(torch.bincount(idx, weights=torch.where(inside, w, torch.zeros_like(w)),
                                     minlength=bins))

        for label, fill in (("torch.histc + acc", histc),
                            ("torch.bincount weights + acc", bincount_w)):
            kernel, waited = cuda.kernel_time(fill, args.repeat * 3)
            wall, host = loop_times(fill, cuda.sync, n, args.repeat)
            rows.append(Row(label, cuda.name, kernel, wall, host, "(sync)" if waited else ""))
            print(rows[-1].line(), flush=True)
    return rows


def host_rows(args: argparse.Namespace, x: np.ndarray, w: np.ndarray, want_counts: np.ndarray,
              want_sums: np.ndarray) -> List[Row]:
    """NumPy arrays: gpuhist's CPU backend beside numpy.histogram (no kernel time)."""
    rows: List[Row] = []
    n, bins = max(1, args.fills // 10), args.bins
    cpu = cpu_name()
    nothing = lambda: None  # noqa: E731
    for weighted in (False, True):
        h = gpuhist.Histogram(bins, (0.0, 1.0), backend="cpu")
        fill = (lambda: h.fill(x, weights=w)) if weighted else (lambda: h.fill(x))
        for _ in range(n):
            fill()
        got = h.values()
        ok = (np.allclose(got, n * want_sums, rtol=1e-9, atol=0) and
              got.tobytes() == exact_sums(x, w, bins, n).tobytes() if weighted
              else np.array_equal(got, n * want_counts))
        if not ok:
            print(f"MISMATCH: gpuhist cpu fill (weighted={weighted})", file=sys.stderr)
            raise SystemExit(1)
        wall, host = loop_times(fill, nothing, n, args.repeat)
        rows.append(Row(f"gpuhist.Histogram.fill (numpy{', f32 weights' if weighted else ''})",
                        "cpu backend", None, wall, host, f"strategy {h.strategy}"))
        print(rows[-1].line(), flush=True)
        npfill = ((lambda: np.histogram(x, bins, (0.0, 1.0), weights=w)) if weighted
                  else (lambda: np.histogram(x, bins, (0.0, 1.0))))
        wall, host = loop_times(npfill, nothing, n, args.repeat)
        rows.append(Row(f"numpy.histogram{' weights' if weighted else ''}", cpu, None, wall,
                        host))
        print(rows[-1].line(), flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=1 << 20, help="samples per fill (1 Mi)")
    ap.add_argument("--bins", type=int, default=100)
    ap.add_argument("--fills", type=int, default=1000, help="fills per timed loop")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (median)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-host", action="store_true", help="skip the NumPy-array rows")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    x = rng.random(args.samples, dtype=np.float32)
    w = rng.random(args.samples, dtype=np.float32)
    edges = np.linspace(0.0, 1.0, args.bins + 1)
    x64 = x.astype(np.float64)
    want_counts = np.histogram(x64, edges)[0]
    want_sums = np.histogram(x64, edges, weights=w.astype(np.float64))[0]
    print(f"gpuhist {gpuhist.__version__}, NumPy {np.__version__}, Python "
          f"{platform.python_version()}; {args.samples} f32 samples (+ f32 weights) into "
          f"{args.bins} bins over [0, 1); {args.fills} fills per loop; median of {args.repeat};"
          f" seed {args.seed}; spin {SPIN_MS} ms")
    print(HEADER)
    exact = exact_sums(x, w, args.bins, args.fills)
    rows = device_rows(args, x, w, want_counts, want_sums, exact)
    if not args.no_host:
        rows += host_rows(args, x, w, want_counts, want_sums)
    print()
    print("| implementation | device | kernel us | wall us/fill | host us/fill | overhead us |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        k = f"{r.kernel * 1e6:.1f}" if r.kernel is not None else "-"
        o = f"{(r.wall - r.kernel) * 1e6:.1f}" if r.kernel is not None else "-"
        print(f"| {r.impl}{' ' + r.note if r.note else ''} | {r.device} | {k} | "
              f"{r.wall * 1e6:.1f} | {r.host * 1e6:.1f} | {o} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
