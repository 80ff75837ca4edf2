#!/usr/bin/env python3
"""N-D peers on the device, for the cells of gpuhist-nd-bench (same sizes, uniform data):
cupy.histogramdd / histogram2d on device arrays, torch.histogramdd (CPU tensors only in torch;
timed on a host copy when it refuses CUDA tensors) - each skipped cleanly when missing.
Prints one line per peer and case: median ms of --reps calls, GB/s of points read.

usage: nd_peers.py [--points-mib 2048] [--reps 5]
"""
import argparse
import time


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points-mib", type=int, default=2048)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    nbytes = args.points_mib << 20
    cases = [("f32 pairs, 256 x 256 even", "f32", 2, 256, (0.0, 1.0)),
             ("f32 pairs, 4096 x 4096 even", "f32", 2, 4096, (0.0, 1.0)),
             ("u8 RGB, 32 x 32 x 32 even", "u8", 3, 32, (0.0, 256.0))]
    try:
        import cupy as cp
    except Exception as e:  # no cupy / no GPU
        cp = None
        print(f"cupy: skipped ({e.__class__.__name__}: {e})")
    try:
        import torch
    except Exception as e:
        torch = None
        print(f"torch: skipped ({e.__class__.__name__}: {e})")
    for name, dt, dims, bins, rng in cases:
        size = 4 if dt == "f32" else 1
        n = nbytes // (size * dims)
        if cp is not None:
            g = cp.random.default_rng(2026)
            if dt == "f32":
                a = g.random((n, dims), dtype=cp.float32)
            else:
                a = g.integers(0, 256, size=(n, dims), dtype=cp.uint8)
            try:
                def run():
                    if dims == 2:
                        h = cp.histogram2d(a[:, 0], a[:, 1], bins=bins, range=[rng, rng])[0]
                    else:
                        h = cp.histogramdd(a, bins=bins, range=[rng] * dims)[0]
                    cp.cuda.Device().synchronize()
                    return h
                run()
                ts = []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    run()
                    ts.append(time.perf_counter() - t0)
                ms = median(ts) * 1e3
                print(f"cupy  | {name:30s} | {ms:9.3f} ms | {n * size * dims / ms / 1e6:7.1f} GB/s")
            except Exception as e:
                print(f"cupy  | {name:30s} | failed: {e.__class__.__name__}: {str(e)[:100]}")
            if torch is not None:
                t = torch.as_tensor(a, device="cuda")
                for dev in ("cuda", "cpu"):
                    try:
                        x = t if dev == "cuda" else t[: min(n, 1 << 24)].cpu()
                        x = x.float()
                        def trun():
                            h = torch.histogramdd(x, bins=[bins] * dims, range=list(rng) * dims)
                            if dev == "cuda":
                                torch.cuda.synchronize()
                            return h
                        trun()
                        ts = []
                        for _ in range(max(1, args.reps if dev == "cuda" else 1)):
                            t0 = time.perf_counter()
                            trun()
                            ts.append(time.perf_counter() - t0)
                        ms = median(ts) * 1e3
                        m = x.shape[0]
                        print(f"torch {dev} | {name:30s} | {ms:9.3f} ms | {m * size * dims / ms / 1e6:7.1f} GB/s "
                              f"({m} points{'; as float32' if dt == 'u8' else ''})")
                    except Exception as e:
                        print(f"torch {dev} | {name:30s} | failed: {e.__class__.__name__}: {str(e)[:100]}")
            del a
            cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
