#!/usr/bin/env python3
"""End-to-end benchmark: the gpuhist command on files in the page cache, beside the hardware
ceilings and the peers a user would reach for, measured in the same run.

For each case (u8/256, f32/4096, f32/2^20; 1 GiB, and 16 GiB with --big) it reports the wall time
and peak resident memory of `gpuhist` (median of --reps runs; the file is read once first so it is
in the page cache), the histogram throughput (bytes / (wall - the device's start: the context's
creation and release and, under -B cuda, the stream's preparation before the data flows, as the
command itself reports them with -v in the same run)), the file read ceiling
(bench/e2e/read_ceiling: parallel pread), pinned and pageable host-to-device bandwidth and the
host-array figures (bench/cuda/e2e_host.cu), numpy (fromfile + bincount / histogram) and torch
(fromfile -> cuda -> histc). Every gpuhist result on a 1 GiB file is compared with numpy's
counts; on a larger one (numpy would need it whole in memory) with the CPU backend's counts of
the same file (the CPU backend's own run is not compared: "-").

--backend takes a comma-separated list (default cuda,auto): each case runs under each, in turn,
on the same file. auto starts on the CPU while the device starts (SEMANTICS.md, "Starting on the
CPU"): its "fixed cost" is the command on a 4 KiB file, which then never waits for the device.
A backend written NAME:nodetach runs -B NAME with GPUHIST_DETACH=0: the command in one process,
which also waits for the device's release (cli/detach.c), for a comparison in the same run; one
written NAME@STRATEGY (or NAME:nodetach@STRATEGY) forces that strategy (-s), e.g.
cuda,cuda@cuda-fast-global to compare auto's choice for the streamed chunks with another.

--sizes picks the file sizes in GiB (default 1, or 1,16 with --big), e.g. --sizes 16 for the
16 GiB cases alone.

usage: e2e.py BUILD_DIR [--dir /dev/shm/gpuhist-e2e] [--big] [--sizes 1,16] [--reps 3]
              [--backend cuda,auto] [--no-peers]
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def run_measured(cmd, stdout=subprocess.DEVNULL, env=None):
    """Run cmd (a gpuhist command with -v); return (wall seconds, peak RSS in MiB, exit status,
    seconds of the device's start: context creation + release and, under -B cuda, the stream's
    preparation before the data flows). The peak is the command's own "peak memory" line
    (VmHWM of its address space): rusage would also count this Python process's pages, inherited
    until exec. Creation and release are the command's own figures for this run (the CUDA start
    varies by 0.1 s from one process to the next)."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    err = p.stderr.decode(errors="replace")
    peak = float("nan")
    start = 0.0
    global last_phases
    last_phases = [l for l in err.splitlines()
                   if any(k in l for k in ("streamed:", "first pass", "throughput", "prepared in",
                                          "since main began", "released in"))]
    for line in err.splitlines():
        if "peak memory:" in line:
            peak = float(line.split("peak memory:")[1].split()[0])
        # the device's start: its context, and (-B cuda) its stream prepared before the data
        # flows (staging page-locked, kernels loaded); with -B auto the preparation runs while
        # the CPU counts, off the critical path, and is not subtracted
        for key in ("context created in", "context released in", "device stream prepared in"):
            if key in line:
                start += float(line.split(key)[1].split()[0])
    if p.returncode != 0:
        print(f"  FAILED ({p.returncode}): {' '.join(cmd)}: {err.strip()}")
    return wall, peak, p.returncode, start


last_phases = []  # the command's own phase lines (-v) of the latest run


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def make_file(path, dtype, gib):
    size = int(gib * (1 << 30))
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    rng = np.random.default_rng(2026)
    piece = 1 << 28
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(piece, left)
            if dtype == np.uint8:
                rng.integers(0, 256, size=n, dtype=np.uint8).tofile(f)
            else:
                rng.random(n // 4, dtype=np.float32).tofile(f)
            left -= n


def numpy_counts(path, dtype, bins, auto=False):
    a = np.fromfile(path, dtype=dtype)
    if dtype == np.uint8:
        return np.bincount(a, minlength=256)
    return np.histogram(a, bins=bins, range=None if auto else (0.0, 1.0))[0]


def csv_counts(cmd):
    """The counts column of the command's CSV output (it fails loudly if the command does)."""
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return np.array([int(l.split(",")[-1]) for l in res.stdout.splitlines()[1:]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--dir", default="/dev/shm/gpuhist-e2e")
    ap.add_argument("--big", action="store_true", help="also 16 GiB files")
    ap.add_argument("--sizes", default=None, help="file sizes in GiB, comma-separated (1, 16)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--backend", default="cuda,auto",
                    help="comma-separated -B values, each case under each (default cuda,auto)")
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args()
    backends = [b for b in args.backend.split(",") if b]
    g = os.path.join(args.build, "cli", "gpuhist")
    ceiling_bin = os.path.join(args.build, "bench", "e2e", "gpuhist-read-ceiling")
    host_bin = os.path.join(args.build, "bench", "cuda", "gpuhist-e2e-host")
    for need in (g, ceiling_bin):
        if not os.access(need, os.X_OK):
            sys.exit(f"e2e.py: {need} is not built (build {args.build} first)")
    os.makedirs(args.dir, exist_ok=True)

    pinned = None
    if any(b.split(":")[0] == "cuda" for b in backends) and os.path.exists(host_bin):
        out = subprocess.run([host_bin, "4"], capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip())
        for l in out.stdout.splitlines():
            if l.startswith("h2d pinned:"):
                pinned = float(l.split()[2])

    sizes = [int(x) for x in args.sizes.split(",") if x] if args.sizes else [1] + ([16] if args.big else [])
    # (file, dtype, bins, options, label); "auto": no range, the command's first pass finds it
    cases = [("u8", np.uint8, 256, [], ""), ("f32", np.float32, 4096, ["-t", "f32", "-b", "4096", "-r", "0:1"], ""),
             ("f32", np.float32, 4096, ["-t", "f32", "-b", "4096"], " auto"),
             ("f32", np.float32, 1 << 20, ["-t", "f32", "-b", "1048576", "-r", "0:1"], "")]
    rows = []
    for gib in sizes:
        for name, dtype, bins, opts, label in cases:
            path = os.path.join(args.dir, f"{name}-{gib}g.bin")
            make_file(path, dtype, gib)
            size = os.path.getsize(path)
            with open(path, "rb") as f:  # into the page cache
                while f.read(1 << 26):
                    pass
            cpu_counts = None  # past 1 GiB: the CPU backend's counts, the reference of the others
            out = subprocess.run([ceiling_bin, path, "1", "8", "16"], capture_output=True, text=True).stdout
            ceiling = max(float(l.split()[2]) for l in out.splitlines() if l.startswith("threads"))
            for be_arg in backends:
                spec, _, strategy = be_arg.partition("@")
                be, _, how = spec.partition(":")
                env = dict(os.environ, GPUHIST_DETACH="0") if how == "nodetach" else None
                sopt = ["-s", strategy] if strategy else []
                fmt = ["-f", "csv"]
                cmd = [g, "-B", be, "-v"] + sopt + opts + fmt + ["-o", os.devnull, path]
                walls, rss, counting = [], [], []
                for _ in range(args.reps):
                    w, m, rc, st = run_measured(cmd, env=env)
                    walls.append(w)
                    rss.append(m)
                    counting.append(w - st)
                wall = median(walls)
                phases = list(last_phases)  # this case's own phase lines (-v), before the tiny runs
                # the command's fixed cost in this run: the same command on a 4 KiB file of the
                # same type (process start and exit, CUDA start and teardown, staging set-up)
                tiny = os.path.join(args.dir, f"{name}-tiny.bin")
                with open(tiny, "wb") as f:
                    f.write(np.zeros(4096 // np.dtype(dtype).itemsize, dtype=dtype).tobytes())
                tiny_cmd = [g, "-B", be] + sopt + opts + ["-f", "csv", "-o", os.devnull, tiny]
                if label == " auto":
                    tiny_cmd = [g, "-B", be] + sopt + ["-t", "f32", "-b", "4096", "-r", "0:1", "-f",
                                                       "csv", "-o", os.devnull, tiny]
                fixed = median([run_measured(tiny_cmd, env=env)[0] for _ in range(max(args.reps, 5))])
                phase = float("nan")
                for l in phases:
                    if "read and count" in l:
                        phase = float(l.split("read and count")[1].split()[0])
                    if "first pass" in l:
                        phase += float(l.split(" in ")[-1].split()[0]) if "a first pass" in l else 0.0
                # correctness: the counts against numpy's (1 GiB), or the CPU backend's (larger)
                ok = "-"
                if gib == 1:
                    got = csv_counts([g, "-B", be] + sopt + opts + ["-f", "csv", path])
                    ok = "ok" if np.array_equal(got, numpy_counts(path, dtype, bins, label == " auto")) else "MISMATCH"
                elif be != "cpu" or strategy:
                    # NumPy would need the whole file in memory: the CPU backend (itself checked
                    # against NumPy) counts it instead, once per case
                    if cpu_counts is None:
                        cpu_counts = csv_counts([g, "-B", "cpu"] + opts + ["-f", "csv", path])
                    got = csv_counts([g, "-B", be] + sopt + opts + ["-f", "csv", path])
                    ok = "ok=cpu" if np.array_equal(got, cpu_counts) else "MISMATCH"
                hist_s = median(counting)
                for l in phases:
                    print("  " + l.strip(), flush=True)
                by_fixed = size / (wall - fixed) / 1e9 if wall > fixed else float("nan")
                limit = min(x for x in (ceiling or float("inf"), pinned or float("inf")))
                rows.append((f"{name}/{bins}{label} {gib} GiB -B {be_arg}", wall, size / hist_s / 1e9, ceiling, max(rss), ok,
                             fixed, by_fixed, size / phase / 1e9, limit))
                print(f"{name}/{bins}{label} {gib} GiB -B {be_arg}: wall {wall:.3f} s, histogram {size / hist_s / 1e9:.2f} GB/s, "
                      f"read ceiling {ceiling} GB/s, peak RSS {max(rss):.0f} MiB, counts {ok}; fixed cost (4 KiB "
                      f"file) {fixed:.3f} s, size / (wall - fixed) {by_fixed:.2f} GB/s, read and count phase "
                      f"{size / phase / 1e9:.2f} GB/s", flush=True)
            if args.no_peers or gib != 1 or label:
                continue
            t0 = time.perf_counter()
            numpy_counts(path, dtype, bins)
            tn = time.perf_counter() - t0
            print(f"  numpy fromfile + {'bincount' if dtype == np.uint8 else 'histogram'}: {tn:.3f} s = "
                  f"{size / tn / 1e9:.2f} GB/s", flush=True)
            try:
                import torch
                def torch_run():
                    a = torch.from_numpy(np.fromfile(path, dtype=dtype)).cuda()
                    if dtype == np.uint8:
                        h = torch.bincount(a.long() if False else a.to(torch.int64), minlength=256)
                    else:
                        h = torch.histc(a, bins=bins, min=0.0, max=1.0)
                    torch.cuda.synchronize()
                    return h
                torch_run()
                t0 = time.perf_counter()
                torch_run()
                tt = time.perf_counter() - t0
                print(f"  torch fromfile -> cuda -> {'bincount' if dtype == np.uint8 else 'histc'}: {tt:.3f} s = "
                      f"{size / tt / 1e9:.2f} GB/s", flush=True)
            except Exception as e:  # no torch or no GPU
                print(f"  torch: skipped ({e.__class__.__name__}: {e})")
    print(f"\npinned h2d {pinned} GB/s; 'limit' = min(read ceiling, pinned h2d); throughputs are file bytes over "
          "(wall - the command's own context creation and release and, -B cuda, stream preparation), "
          "(wall - the same command's wall on a 4 KiB "
          "file), and the read and count phase (with the auto range's first pass)")
    print("case | wall s | histogram GB/s | read ceiling GB/s | peak RSS MiB | counts | fixed s | GB/s by fixed "
          "| phase GB/s | limit GB/s | by fixed / limit | phase / limit")
    for r in rows:
        print(f"{r[0]} | {r[1]:.3f} | {r[2]:.2f} | {r[3]} | {r[4]:.0f} | {r[5]} | {r[6]:.3f} | {r[7]:.2f} | "
              f"{r[8]:.2f} | {r[9]:.2f} | {r[7] / r[9]:.2f} | {r[8] / r[9]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
