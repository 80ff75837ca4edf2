#!/usr/bin/env python3
"""Time the CPU peers of gpuhist on the data file gpuhist-bench-cpu wrote (same bytes, same run,
same machine): NumPy, fast_histogram (one thread) and boost_histogram (one thread and THREADS).

usage: peers_bench.py FILE DTYPE OP BINS LOWER UPPER RUNS THREADS [median|min]
  DTYPE  a NumPy dtype name (uint8, uint16, int32, float32, float64)
  OP     bincount  one bin per value from 0 (numpy.bincount(a, minlength=BINS); the others with
                   BINS unit bins over [0, BINS))
         histogram BINS even bins over [LOWER, UPPER)
         histogram_quadratic_edges  uneven edges (arange(BINS + 1) / BINS) ** 2
Prints one JSON object per line, one per peer call:
  {"peer": name, "version": v, "call": ..., "threads": T, "seconds": median (or fastest),
   "min_s": ..., "median_s": ..., "cpu_seconds": the same statistic of the process's CPU time}
or {"peer": name, "skipped": reason} when the package is missing or has no such histogram
(exit status 0 either way, so the caller can report the reason).
Every call builds its result from scratch (a new boost Histogram each time), as gpuhist's does.
The load (numpy.fromfile) is not timed; one warm-up call precedes the RUNS timed calls.
"""
import json
import sys
import time


def pick(values, stat):
    values = sorted(values)
    n = len(values)
    med = values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])
    return (values[0] if stat == "min" else med), med, values[0]


def timed(fn, runs, stat):
    """Wall seconds and CPU seconds of the process (every thread: time.process_time)."""
    fn()
    times, cpus = [], []
    for _ in range(runs):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    sec, med, fastest = pick(times, stat)
    return {"seconds": sec, "median_s": med, "min_s": fastest,
            "cpu_seconds": pick(cpus, stat)[0]}


def emit(obj):
    print(json.dumps(obj))
    sys.stdout.flush()


def main():
    path, dtype, op, bins, lower, upper, runs, threads = sys.argv[1:9]
    stat = sys.argv[9] if len(sys.argv) > 9 else "median"
    bins, runs, threads = int(bins), int(runs), max(1, int(threads))
    lo, hi = float(lower), float(upper)
    try:
        import numpy as np
    except ImportError as e:
        for peer in ("numpy", "fast_histogram", "boost_histogram"):
            emit({"peer": peer, "skipped": "numpy is not installed (%s)" % e})
        return 0
    a = np.fromfile(path, dtype=np.dtype(dtype))
    edges = None
    if op == "histogram_quadratic_edges":
        edges = (np.arange(bins + 1) / float(bins)) ** 2
    elif op == "bincount":
        lo, hi = 0.0, float(bins)

    # NumPy
    if op == "bincount":
        call, fn = "numpy.bincount(a, minlength=%d)" % bins, lambda: np.bincount(a, minlength=bins)
    elif edges is not None:
        call = "numpy.histogram(a, bins=(arange(%d) / %d.0) ** 2)" % (bins + 1, bins)
        fn = lambda: np.histogram(a, bins=edges)  # noqa: E731
    else:
        call = "numpy.histogram(a, bins=%d, range=(%g, %g))" % (bins, lo, hi)
        fn = lambda: np.histogram(a, bins=bins, range=(lo, hi))  # noqa: E731
    r = {"peer": "numpy", "version": np.__version__, "call": call, "threads": 1}
    r.update(timed(fn, runs, stat))
    emit(r)

    # fast_histogram: even bins only, one thread
    try:
        import fast_histogram as fh
    except ImportError as e:
        emit({"peer": "fast_histogram", "skipped": "not installed (%s)" % e})
    else:
        if edges is not None:
            emit({"peer": "fast_histogram", "skipped": "has no uneven edges"})
        else:
            r = {"peer": "fast_histogram", "version": getattr(fh, "__version__", "?"),
                 "call": "fast_histogram.histogram1d(a, %d, (%g, %g))" % (bins, lo, hi),
                 "threads": 1}
            r.update(timed(lambda: fh.histogram1d(a, bins, (lo, hi)), runs, stat))
            emit(r)

    # boost_histogram: Integer / Regular / Variable axis, threads 1 and THREADS
    try:
        import boost_histogram as bh
    except ImportError as e:
        emit({"peer": "boost_histogram", "skipped": "not installed (%s)" % e})
        return 0
    if op == "bincount":
        axis_call, make = "axis.Integer(0, %d)" % bins, lambda: bh.axis.Integer(0, bins)
    elif edges is not None:
        axis_call, make = "axis.Variable(edges)", lambda: bh.axis.Variable(edges)
    else:
        axis_call = "axis.Regular(%d, %g, %g)" % (bins, lo, hi)
        make = lambda: bh.axis.Regular(bins, lo, hi)  # noqa: E731
    for t in sorted({1, threads}):
        def fill(t=t):
            h = bh.Histogram(make())
            h.fill(a, threads=t)
            return h
        r = {"peer": "boost_histogram", "version": bh.__version__,
             "call": "boost_histogram.Histogram(%s).fill(a, threads=%d)" % (axis_call, t),
             "threads": t}
        r.update(timed(fill, runs, stat))
        emit(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
