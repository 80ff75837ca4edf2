#!/usr/bin/env python3
"""Time NumPy on the data file gpuhist-bench-cpu wrote (same bytes, same run, same machine).

usage: numpy_bench.py FILE DTYPE OP BINS LOWER UPPER RUNS [median|min]
  DTYPE  a NumPy dtype name (uint8, uint16, int32, float32, float64)
  OP     bincount (one bin per value from 0: numpy.bincount(a, minlength=BINS))
         histogram (numpy.histogram(a, bins=BINS, range=(LOWER, UPPER)))
         histogram_quadratic_edges (numpy.histogram(a, bins=(arange(BINS+1) / BINS) ** 2))
Prints one JSON object: {"numpy": version, "call": ..., "seconds": median (or fastest) time,
"median_s": ..., "min_s": ..., "times_s": [...]}
or {"error": "..."} (exit status 0 either way, so the caller can report the reason).
The load (numpy.fromfile) is not timed; one warm-up call precedes the RUNS timed calls.
"""
import json
import sys
import time


def main():
    try:
        import numpy as np
    except ImportError as e:  # the benchmark skips NumPy with this message
        print(json.dumps({"error": "numpy is not installed (%s)" % e}))
        return 0
    path, dtype, op, bins, lower, upper, runs = sys.argv[1:8]
    stat = sys.argv[8] if len(sys.argv) > 8 else "median"
    bins, runs = int(bins), int(runs)
    a = np.fromfile(path, dtype=np.dtype(dtype))
    if op == "bincount":
        call = "numpy.bincount(a, minlength=%d)" % bins
        fn = lambda: np.bincount(a, minlength=bins)  # noqa: E731
    elif op == "histogram_quadratic_edges":
        edges = (np.arange(bins + 1) / float(bins)) ** 2
        call = "numpy.histogram(a, bins=(arange(%d) / %d.0) ** 2)" % (bins + 1, bins)
        fn = lambda: np.histogram(a, bins=edges)  # noqa: E731
    else:
        lo, hi = float(lower), float(upper)
        call = "numpy.histogram(a, bins=%d, range=(%g, %g))" % (bins, lo, hi)
        fn = lambda: np.histogram(a, bins=bins, range=(lo, hi))  # noqa: E731
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    print(json.dumps({"numpy": np.__version__, "call": call,
                      "seconds": times[0] if stat == "min" else median,
                      "median_s": median, "min_s": times[0], "times_s": times}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
