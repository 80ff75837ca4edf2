#!/usr/bin/env python3
"""bench/python/compare.py - gpuhist's Python API against NumPy, fast_histogram, boost_histogram,
CuPy and torch, on the same arrays, in the same run.

    python3 bench/python/compare.py                       # the issue's cells, 1 GiB arrays
    python3 bench/python/compare.py --mib 64 --repeat 3   # smaller (CPU machines)
    python3 bench/python/compare.py --backends cpu,cuda --no-fills
    python3 bench/python/compare.py --c-bench build/bench/cuda/gpuhist-capi-cells

Cells: u8 with 256 bins over [0, 256) (histogram, and bincount), f32 with 4096 even bins over
[0, 1), f32 with 2^20 even bins over [0, 1); uniform data; --mib MiB per array (default 1024).

- Host arrays (NumPy): numpy.histogram / numpy.bincount (the reference of every ratio),
  gpuhist.histogram / gpuhist.bincount on every usable backend (cpu: all cores; cuda: the
  host array copied and counted by the library's pipeline; opencl), fast_histogram.histogram1d,
  boost_histogram with all cores (fill(threads=)), torch on CPU tensors (torch.histc,
  torch.histogram, torch.bincount).
- Device arrays (a GPU): gpuhist.histogram / bincount on a CuPy array and on a torch CUDA
  tensor (in place, results on the device), the library call alone on the same pointer
  (_core.Context.histogram_raw: the binding without the Python layer's planning and result
  objects; its ratio to gpuhist is the Python layer's cost), cupy.histogram / cupy.bincount,
  torch.histc / torch.bincount on the tensor (torch.histogram has no CUDA implementation);
  and the host-to-device copy rates of the u8 array from pageable and pinned memory (CuPy's
  set()), the ceiling of gpuhist [cuda] on host arrays.
- The C API on the same device cells (--c-bench PATH: the built gpuhist-capi-cells, run in
  this process's run after the device arrays are freed: gpuhist_histogram() from C, strategy
  auto, device counts, the default stream synchronised after each call, timed as here; its
  data are uniform like these, not the same bytes), and each device gpuhist figure's ratio to
  it: binding / C API (the Python issue's target: >= 0.9 on device arrays).
- Small repeated fills on the host (1 M f32 samples into a 100- and a 128-bin
  gpuhist.Histogram): see bench/python/fills.py for the device case and its overhead.

Each figure is the median of --repeat runs after one warm-up (fewer when a run takes more than
a tenth of 10 s), in GB/s of input read (the samples' bytes / seconds); device calls are timed
with the stream synchronised after each call. NumPy is timed on the first --numpy-mib MiB of
each array (default 256; its time is linear in the samples), and the ratios are of GB/s. Every gpuhist result is checked equal to NumPy's before it is timed (a mismatch stops the
run); a peer whose counts differ from NumPy's is timed and marked "(differs)". A peer that is
not installed, or a device part without a GPU, is skipped, saying so. The table printed last
has every figure with its ratio to NumPy's on the same cell and, for device arrays, gpuhist's
ratio to the best device peer. Benchmarks are not tests: nothing is asserted about speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

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


BUDGET_S = 10.0  # per figure: fewer runs when one run is slow
C_API = "C API gpuhist_histogram"  # the rows of --c-bench


def timed(fn: Callable[[], Any], repeat: int, sync: Callable[[], None] = lambda: None
          ) -> float:
    t0 = time.perf_counter()
    fn()
    sync()
    warm = time.perf_counter() - t0
    repeat = max(1, min(repeat, int(BUDGET_S / max(warm, 1e-9))))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Table:
    """Every figure of the run; printed as it comes and as one table at the end."""

    def __init__(self) -> None:
        self.rows: List[Dict[str, Any]] = []
        self.numpy: Dict[str, float] = {}  # NumPy's GB/s of each cell
        self.skipped: List[str] = []

    def add(self, case: str, where: str, impl: str, device: str, seconds: float, nbytes: int,
            note: str = "") -> None:
        gbs = nbytes / seconds / 1e9
        if impl.startswith("numpy."):
            self.numpy.setdefault(case, gbs)
        ref = self.numpy.get(case)
        row = dict(case=case, where=where, impl=impl, device=device, seconds=seconds,
                   gbs=gbs, ratio=gbs / ref if ref else None, note=note)
        self.rows.append(row)
        r = f"{row['ratio']:8.1f}x" if row["ratio"] else "       - "
        print(f"{case:<24} {where:<6} {impl:<34} {seconds * 1e3:10.2f} ms {row['gbs']:8.2f} GB/s"
              f" {r}  [{device}]{' ' + note if note else ''}", flush=True)

    def c_api(self, case: str) -> float:
        """The C API's GB/s on this device cell (0 when not timed)."""
        for r in self.rows:
            if r["case"] == case and r["impl"].startswith(C_API):
                return float(r["gbs"])
        return 0.0

    def skip(self, what: str) -> None:
        if what not in self.skipped:
            self.skipped.append(what)
            print(f"skipped: {what}", flush=True)

    def print_table(self) -> None:
        print()
        print("| cell | arrays | implementation | device | ms | GB/s | x NumPy | gpuhist / best "
              "device peer | binding / C API |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in self.rows:
            vs_peer = vs_c = ""
            binding = r["where"] == "device" and (r["impl"].startswith("gpuhist") or
                                                  r["impl"].startswith("library call"))
            if r["where"] == "device" and r["impl"].startswith("gpuhist"):
                peers = [p["gbs"] for p in self.rows if p["case"] == r["case"] and
                         p["where"] == "device" and not p["impl"].startswith("gpuhist") and
                         not p["impl"].startswith("library call") and
                         not p["impl"].startswith(C_API)]
                if peers:
                    vs_peer = f"{r['gbs'] / max(peers):.1f}x"
            c_api = self.c_api(r["case"])
            if binding and c_api:
                vs_c = f"{r['gbs'] / c_api:.2f}"
            ratio = f"{r['ratio']:.1f}x" if r["ratio"] else "-"
            note = f" {r['note']}" if r["note"] else ""
            print(f"| {r['case']} | {r['where']} | {r['impl']}{note} | {r['device']} | "
                  f"{r['seconds'] * 1e3:.2f} | {r['gbs']:.2f} | {ratio} | {vs_peer} | {vs_c} |")
        cells = [c for c in dict.fromkeys(r["case"] for r in self.rows) if self.c_api(c)]
        if cells:
            print()
            print("binding / C API on device arrays (target >= 0.9):")
            for c in cells:
                parts = [f"{r['impl']} {r['gbs'] / self.c_api(c):.2f}" for r in self.rows
                         if r["case"] == c and r["where"] == "device" and
                         (r["impl"].startswith("gpuhist") or r["impl"].startswith("library"))]
                print(f"  {c}: " + ("; ".join(parts) if parts else "no binding figure"))
        if self.skipped:
            print()
            print("skipped: " + "; ".join(self.skipped))


def same(got: Any, want: np.ndarray) -> bool:
    g = np.asarray(got)
    return g.shape == want.shape and np.array_equal(g.astype(np.float64),
                                                    want.astype(np.float64))


# ---- host arrays ------------------------------------------------------------------------------

def numpy_rows(t: Table, cells: list, repeat: int, cpu: str, numpy_mib: int) -> None:
    """NumPy's figures (the reference of the ratios), on the first numpy_mib MiB of each array
    (NumPy's time grows linearly with the samples; 2^20 bins over 1 GiB takes a minute a run)."""
    for case, a, bins, rng_ in cells:
        p = a[: (numpy_mib << 20) // a.itemsize]
        note = f"(first {numpy_mib} MiB)" if p.size < a.size else ""
        t.add(case, "host", "numpy.histogram", cpu,
              timed(lambda: np.histogram(p, bins, rng_), repeat), p.nbytes, note)
        if a.dtype == np.uint8:
            t.add("u8 bincount", "host", "numpy.bincount", cpu,
                  timed(lambda: np.bincount(p, minlength=256), repeat), p.nbytes, note)


def host_cells(t: Table, cells: list, usable: list, repeat: int, cpu: str) -> None:
    for case, a, bins, rng_ in cells:
        want = np.histogram(a, bins, rng_)[0]
        for b, dev in usable:
            got = gpuhist.histogram(a, bins, rng_, backend=b)[0]
            if not same(got, want):
                raise SystemExit(f"MISMATCH: gpuhist.histogram [{b}] on {case}")
            t.add(case, "host", f"gpuhist.histogram [{b}]", dev,
                  timed(lambda: gpuhist.histogram(a, bins, rng_, backend=b), repeat), a.nbytes)
        host_peers(t, case, a, bins, rng_, repeat, cpu, want)
        if a.dtype == np.uint8:
            bc = "u8 bincount"
            want_bc = np.bincount(a, minlength=256)
            for b, dev in usable:
                if not same(gpuhist.bincount(a, minlength=256, backend=b), want_bc):
                    raise SystemExit(f"MISMATCH: gpuhist.bincount [{b}]")
                t.add(bc, "host", f"gpuhist.bincount [{b}]", dev,
                      timed(lambda: gpuhist.bincount(a, minlength=256, backend=b), repeat),
                      a.nbytes)
            torch_host_bincount(t, bc, a, repeat, cpu, want_bc)


def host_peers(t: Table, case: str, a: np.ndarray, bins: int, rng_: Any, repeat: int, cpu: str,
               want: np.ndarray) -> None:
    """fast_histogram, boost_histogram (all cores) and torch on CPU tensors, when installed."""
    try:
        import fast_histogram  # noqa: PLC0415

        got = fast_histogram.histogram1d(a, bins, rng_)
        t.add(case, "host", "fast_histogram.histogram1d", cpu,
              timed(lambda: fast_histogram.histogram1d(a, bins, rng_), repeat), a.nbytes,
              "" if same(got, want) else "(differs)")
    except ImportError:
        t.skip("fast_histogram (not installed)")
    try:
        import boost_histogram as bh  # noqa: PLC0415

        threads = os.cpu_count() or 1

        def run() -> Any:
            h = bh.Histogram(bh.axis.Regular(bins, *rng_))
            h.fill(a, threads=threads)
            return h

        got = run().values()
        t.add(case, "host", f"boost_histogram ({threads} threads)", cpu, timed(run, repeat),
              a.nbytes, "" if same(got, want) else "(differs)")
    except ImportError:
        t.skip("boost_histogram (not installed)")
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        t.skip("torch (not installed)")
        return
    x = torch.from_numpy(a)
    if a.dtype == np.float32:
        got = torch.histc(x, bins, *rng_).numpy()
        t.add(case, "host", "torch.histc (cpu)", cpu,
              timed(lambda: torch.histc(x, bins, *rng_), repeat), a.nbytes,
              "" if same(got, want) else "(differs)")
        got = torch.histogram(x, bins, range=rng_)[0].numpy()
        t.add(case, "host", "torch.histogram (cpu)", cpu,
              timed(lambda: torch.histogram(x, bins, range=rng_), repeat), a.nbytes,
              "" if same(got, want) else "(differs)")


def torch_host_bincount(t: Table, case: str, a: np.ndarray, repeat: int, cpu: str,
                        want: np.ndarray) -> None:
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return
    x = torch.from_numpy(a)
    got = torch.bincount(x, minlength=256).numpy()
    t.add(case, "host", "torch.bincount (cpu)", cpu,
          timed(lambda: torch.bincount(x, minlength=256), repeat), a.nbytes,
          "" if same(got, want) else "(differs)")


# ---- device arrays -------------------------------------------------------------------------

def library_call(d: Any, bins: int, rng_: Any) -> Callable[[], Any]:
    """The library call alone on the device array's pointer (even bins, counts on the device,
    asynchronous): what gpuhist.histogram adds its Python layer to."""
    from gpuhist import _device  # noqa: PLC0415
    from gpuhist._api import _device_context  # noqa: PLC0415
    from gpuhist._plan import plan_bins  # noqa: PLC0415

    dev = _device.lookup(d)
    assert dev is not None
    ctx = _device_context(dev, "cuda", None, None, False)
    plan = plan_bins(bins, rng_, dev.np_dtype, dev.size, False, lambda: (0, 1))
    res = _device.Results(dev)
    counts = res.empty(plan.bins, np.int64)
    ptr = res.pointer(counts)
    ctx.configure(None, _device.current_stream(dev), True)
    args = plan.args()

    def call() -> Any:
        return ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True, *args,
                                      ptr, True)

    return call


def device_cells(t: Table, cells: list, repeat: int) -> None:
    have_cuda = bool(gpuhist.backends().get("cuda"))
    if not have_cuda:
        t.skip("gpuhist on device arrays (the CUDA backend is not built in)")
    try:
        import cupy as cp  # noqa: PLC0415

        if cp.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
    except Exception as e:  # noqa: BLE001 - no CuPy or no GPU
        cp = None
        t.skip(f"cupy ({type(e).__name__}: {e})")
    try:
        import torch  # noqa: PLC0415

        if not torch.cuda.is_available():
            torch = None
            t.skip("torch on CUDA (no CUDA device)")
    except ImportError:
        torch = None
        t.skip("torch (not installed)")
    if cp is not None:
        # the host-to-device copy rates, the ceiling of gpuhist [cuda] on host arrays (the
        # issue's target: at least 0.8 of them)
        a = cells[0][1]
        dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        sync = cp.cuda.get_current_stream().synchronize
        d = cp.empty(a.shape, a.dtype)
        t.add("h2d copy", "host", "cupy set() from pageable memory", dev,
              timed(lambda: d.set(a), repeat, sync), a.nbytes)
        mem = cp.cuda.alloc_pinned_memory(a.nbytes)
        pinned = np.frombuffer(mem, a.dtype, a.size)
        pinned[:] = a
        t.add("h2d copy", "host", "cupy set() from pinned memory", dev,
              timed(lambda: d.set(pinned), repeat, sync), a.nbytes)
        del d, pinned, mem
        cp.get_default_memory_pool().free_all_blocks()
    for case, a, bins, rng_ in cells:
        want = np.histogram(a, bins, rng_)[0]
        want_bc = np.bincount(a, minlength=256) if a.dtype == np.uint8 else None
        if cp is not None:
            d = cp.asarray(a)
            sync = cp.cuda.get_current_stream().synchronize
            dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
            if have_cuda:
                if not same(cp.asnumpy(gpuhist.histogram(d, bins, rng_)[0]), want):
                    raise SystemExit(f"MISMATCH: gpuhist.histogram (cupy) on {case}")
                t.add(case, "device", "gpuhist.histogram (cupy array)", dev,
                      timed(lambda: gpuhist.histogram(d, bins, rng_), repeat, sync), a.nbytes)
                t.add(case, "device", "library call alone (cupy pointer)", dev,
                      timed(library_call(d, bins, rng_), repeat, sync), a.nbytes)
            got = cp.asnumpy(cp.histogram(d, bins, rng_)[0])
            t.add(case, "device", "cupy.histogram", dev,
                  timed(lambda: cp.histogram(d, bins, rng_), repeat, sync), a.nbytes,
                  "" if same(got, want) else "(differs)")
            if want_bc is not None:
                bc = "u8 bincount"
                if have_cuda:
                    if not same(cp.asnumpy(gpuhist.bincount(d, minlength=256)), want_bc):
                        raise SystemExit("MISMATCH: gpuhist.bincount (cupy)")
                    t.add(bc, "device", "gpuhist.bincount (cupy array)", dev,
                          timed(lambda: gpuhist.bincount(d, minlength=256), repeat, sync),
                          a.nbytes)
                t.add(bc, "device", "cupy.bincount", dev,
                      timed(lambda: cp.bincount(d, minlength=256), repeat, sync), a.nbytes)
            del d
            cp.get_default_memory_pool().free_all_blocks()
        if torch is not None:
            d = torch.from_numpy(a).cuda()
            sync = torch.cuda.synchronize
            dev = torch.cuda.get_device_name(0)
            if have_cuda:
                if not same(gpuhist.histogram(d, bins, rng_)[0].cpu().numpy(), want):
                    raise SystemExit(f"MISMATCH: gpuhist.histogram (torch) on {case}")
                t.add(case, "device", "gpuhist.histogram (torch tensor)", dev,
                      timed(lambda: gpuhist.histogram(d, bins, rng_), repeat, sync), a.nbytes)
            try:
                got = torch.histc(d, bins, *rng_).cpu().numpy()
                t.add(case, "device", "torch.histc", dev,
                      timed(lambda: torch.histc(d, bins, *rng_), repeat, sync), a.nbytes,
                      "" if same(got, want) else "(differs)")
            except RuntimeError as e:  # histc of an integer tensor, on some versions
                t.skip(f"torch.histc on {a.dtype} ({str(e).splitlines()[0]})")
            if want_bc is not None:
                bc = "u8 bincount"
                if have_cuda:
                    t.add(bc, "device", "gpuhist.bincount (torch tensor)", dev,
                          timed(lambda: gpuhist.bincount(d, minlength=256), repeat, sync),
                          a.nbytes)
                t.add(bc, "device", "torch.bincount", dev,
                      timed(lambda: torch.bincount(d, minlength=256), repeat, sync), a.nbytes)
            del d
            torch.cuda.empty_cache()


def c_api_cells(t: Table, path: str, mib: int, repeat: int) -> None:
    """The C API's figures on the device cells: gpuhist-capi-cells (bench/cuda/capi_cells.cu)
    run with the same MiB and repeat count, its CAPI lines added as rows (and its CAPIHOST
    lines, the same cells on a pageable host array, as host rows)."""
    import subprocess  # noqa: PLC0415

    p = subprocess.run([path, "--mib", str(mib), "--repeat", str(repeat)],
                       capture_output=True, text=True, check=False)
    if p.returncode == 77:
        t.skip(f"the C API cells ({p.stdout.strip() or 'no CUDA device'})")
        return
    if p.returncode != 0:
        raise SystemExit(f"compare.py: --c-bench {path} failed (exit {p.returncode}): "
                         f"{(p.stderr or p.stdout).strip()}")
    rows = 0
    for line in p.stdout.splitlines():
        f = line.split("\t")
        if len(f) == 6 and f[0] == "CAPI":
            t.add(f[1], "device", f"{C_API} (device pointer)", f[5], float(f[2]), int(f[3]),
                  f"[{f[4]}]")
            rows += 1
        elif len(f) == 6 and f[0] == "CAPIHOST":
            t.add(f[1], "host", f"{C_API} (pageable host array) [cuda]", f[5], float(f[2]),
                  int(f[3]), f"[{f[4]}]")
    if rows == 0:
        raise SystemExit(f"compare.py: --c-bench {path} printed no CAPI line: {p.stdout!r}")


# ---- small repeated fills on the host ----------------------------------------------------------

def host_fills(t: Table, f32: np.ndarray, usable: list, fills: int, cpu: str,
               rng: np.random.Generator) -> None:
    small = f32[: 1 << 20]
    w = rng.random(small.size)
    for nb in (100, 128):
        case = f"1M f32 fill, {nb} bins"
        t.add(case, "host", "numpy.histogram", cpu,
              timed(lambda: np.histogram(small, nb, (0.0, 1.0)), fills), small.nbytes)
        for b, dev in usable:
            # 100 bins over [0, 1): edges k/100 are not float32 values, so float32 samples are
            # compared with the float64 edges (explicit edges, binary search); 128: even bins
            h = gpuhist.Histogram(nb, (0.0, 1.0), backend=b)
            t.add(case, "host", f"gpuhist.Histogram.fill [{b}]", dev,
                  timed(lambda: h.fill(small), fills), small.nbytes)
    case = "1M f32 fill+w, 100 bins"
    t.add(case, "host", "numpy.histogram weights", cpu,
          timed(lambda: np.histogram(small, 100, (0.0, 1.0), weights=w), fills // 4 or 1),
          small.nbytes)
    hw = gpuhist.Histogram(100, (0.0, 1.0), backend="cpu")
    t.add(case, "host", "gpuhist.Histogram.fill w [cpu]", cpu,
          timed(lambda: hw.fill(small, weights=w), fills // 4 or 1), small.nbytes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="MiB per array (default 1024)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    ap.add_argument("--backends", default="", help="gpuhist backends for host arrays "
                    "(default: every usable one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fills", type=int, default=200, help="repeated host fills to time")
    ap.add_argument("--no-fills", action="store_true", help="skip the host fills")
    ap.add_argument("--no-host", action="store_true", help="skip the host-array cells")
    ap.add_argument("--no-device", action="store_true", help="skip the device-array cells")
    ap.add_argument("--c-bench", metavar="PATH", default="",
                    help="the built gpuhist-capi-cells: time the C API on the device cells and "
                    "print binding / C API per cell")
    ap.add_argument("--numpy-mib", type=int, default=256,
                    help="time NumPy on the first MiB of each array (default 256)")
    args = ap.parse_args()
    if args.c_bench and not (os.path.isfile(args.c_bench) and os.access(args.c_bench, os.X_OK)):
        ap.error(f"--c-bench {args.c_bench}: not an executable file (build gpuhist-capi-cells "
                 f"with -DGPUHIST_CUDA=ON)")

    rng = np.random.default_rng(args.seed)
    n8 = args.mib << 20
    u8 = rng.integers(0, 256, n8, dtype=np.uint8)
    f32 = rng.random(n8 // 4, dtype=np.float32)
    cpu = cpu_name()
    print(f"gpuhist {gpuhist.__version__}, NumPy {np.__version__}, Python "
          f"{platform.python_version()}; {args.mib} MiB per array; median of {args.repeat}; "
          f"seed {args.seed}")
    print(f"host: {cpu}")
    t = Table()
    usable = []
    for b in [b for b in (args.backends.split(",") if args.backends else
                          ["cpu", "opencl", "cuda"]) if b]:
        if not gpuhist.backends().get(b):
            t.skip(f"gpuhist backend {b} (not built in)")
            continue
        try:
            gpuhist.histogram(u8[:1000], 256, (0, 256), backend=b)
            usable.append((b, gpuhist.device_name(b)))
        except gpuhist.GpuhistError as e:
            t.skip(f"gpuhist backend {b} ({e})")
    print(f"{'cell':<24} {'arrays':<6} {'implementation':<34} {'median':>13} {'input':>13} "
          f"{'x NumPy':>9}")
    cells: List[Tuple[str, np.ndarray, Any, Any]] = [
        ("u8 256 bins", u8, 256, (0, 256)),
        ("f32 4096 bins", f32, 4096, (0.0, 1.0)),
        ("f32 2^20 bins", f32, 1 << 20, (0.0, 1.0)),
    ]
    numpy_rows(t, cells, args.repeat, cpu, args.numpy_mib)  # the reference of every ratio
    if not args.no_host:
        host_cells(t, cells, usable, args.repeat, cpu)
    if not args.no_device:
        device_cells(t, cells, args.repeat)
        if args.c_bench:
            c_api_cells(t, args.c_bench, args.mib, args.repeat)
    if not args.no_fills:
        host_fills(t, f32, usable, args.fills, cpu, rng)
    t.print_table()
    return 0


if __name__ == "__main__":
    sys.exit(main())
