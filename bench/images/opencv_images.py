#!/usr/bin/env python3
"""OpenCV and the gpuhist command on images, beside gpuhist-images (device-resident).

usage: opencv_images.py --gpuhist PATH [--backend cuda|cpu] [--reps N] [--dir DIR] [--set N]
                        [--case TEXT] [--sets-only]

Makes the images of gpuhist-images (NumPy, seed 24): 8-bit grey 7680x4320 (uniform and 90% one
value), 9248x6936 (64 MP), RGBA 7680x4320, 16-bit grey 7680x4320, writes each as PNG and TIFF
(uncompressed) and times, median of --reps:
  - cv2.calcHist on the array in memory (CPU), and cv2.cuda.calcHist on a GpuMat when this
    OpenCV has CUDA (8-bit grey; the upload is not timed);
  - from file: cv2.imread alone (the decoding), cv2.imread + calcHist, and the command
    (`gpuhist --backend B -f npy -o /dev/null FILE`, one process: start, decode, count);
and checks that the command's counts equal np.bincount's. --case TEXT keeps the cases whose name
contains TEXT (repeatable); --sets-only leaves out the single-file table.
--set N (N > 0): also a directory of N files of each case and format (PNG, TIFF, JPEG for 8-bit),
the set streamed through the command (`gpuhist -v DIR`: it decodes on its worker threads while
it counts). Printed per set: the decoding alone (cv2.imread of every file on one thread, and
on the command's decode-thread count in parallel), the command's wall time minus its fixed cost
(the same command on one 64x64 image of the format), its own -v split (decoding thread-seconds,
counting seconds), and decode-bound = (wall - fixed) / (decoding on that many threads): near 1
when decoding, not counting, is the limit. A benchmark, not a test.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def med(f, reps):
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2] * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuhist", required=True)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--set", type=int, default=0)
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--sets-only", action="store_true")
    a = ap.parse_args()
    import cv2
    rng = np.random.default_rng(24)
    cases = []
    g = rng.integers(0, 256, (4320, 7680), dtype=np.uint8)
    cases.append(("u8 grey 7680x4320 uniform", g))
    hot = g.copy()
    hot[rng.random(hot.shape) < 0.9] = 77
    cases.append(("u8 grey 7680x4320 90% one value", hot))
    cases.append(("u8 grey 9248x6936 uniform", rng.integers(0, 256, (6936, 9248), np.uint8)))
    cases.append(("u8 RGBA 7680x4320 uniform", rng.integers(0, 256, (4320, 7680, 4), np.uint8)))
    cases.append(("u16 grey 7680x4320", rng.integers(0, 65536, (4320, 7680), np.uint16)))
    # the image formats this gpuhist was built with (`gpuhist --version`: "images: png, jpeg")
    ver = subprocess.run([a.gpuhist, "--version"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    built = set(f.strip(" )\n") for f in ver.split("images:")[1].split(",")) if "images:" in ver \
        else set()
    a.formats = {"png": "png" in built, "tif": "tiff" in built, "jpg": "jpeg" in built}
    if a.case:
        cases = [(n, img) for n, img in cases if any(t in n for t in a.case)]
    cuda = hasattr(cv2, "cuda") and cv2.cuda.getCudaEnabledDeviceCount() > 0
    tmp = a.dir or tempfile.mkdtemp(prefix="gpuhist-images-")
    os.makedirs(tmp, exist_ok=True)
    print("OpenCV %s (cv2.cuda: %s), gpuhist %s, backend %s; ms, median of %d" % (
        cv2.__version__, "yes" if cuda else "no", a.gpuhist, a.backend, a.reps))
    print("%-34s %10s %10s | %-4s %10s %12s %10s  counts" % (
        "case", "calcHist", "cv2.cuda", "file", "imread", "imread+hist", "gpuhist"))
    bad = 0
    for name, img in ([] if a.sets_only else cases):
        C = 1 if img.ndim == 2 else img.shape[2]
        levels = 256 if img.dtype == np.uint8 else 65536
        chans = [img] if C == 1 else cv2.split(img)

        def calc():
            for ch in chans:
                cv2.calcHist([ch], [0], None, [levels], [0, levels])
        t_calc = med(calc, a.reps)
        t_cuda = float("nan")
        if cuda and img.dtype == np.uint8 and C == 1:
            gm = cv2.cuda_GpuMat()
            gm.upload(img)
            t_cuda = med(lambda: cv2.cuda.calcHist(gm), a.reps)
        want = np.stack([np.bincount(ch.ravel(), minlength=levels) for ch in chans])
        for ext in ("png", "tif"):
            if not a.formats[ext]:
                print("%-34s (%s: not built into this gpuhist)" % (name, ext))
                continue
            path = os.path.join(tmp, "%s.%s" % (name.replace(" ", "_").replace("%", "pc"), ext))
            # OpenCV writes BGR(A): give it the channels reversed so the file holds R, G, B, A
            if not cv2.imwrite(path, img if C == 1 else img[..., [2, 1, 0, 3]],
                               [cv2.IMWRITE_TIFF_COMPRESSION, 1] if ext == "tif" else []):
                sys.exit("opencv_images.py: cannot write %s" % path)
            t_read = med(lambda: cv2.imread(path, cv2.IMREAD_UNCHANGED), a.reps)

            def read_hist():
                m = cv2.imread(path, cv2.IMREAD_UNCHANGED)
                for ch in ([m] if m.ndim == 2 else cv2.split(m)):
                    cv2.calcHist([ch], [0], None, [levels], [0, levels])
            t_rh = med(read_hist, a.reps)
            cmd = [a.gpuhist, "--backend", a.backend, "-f", "npy", "-o", "/dev/null", path]
            t_cmd = med(lambda: subprocess.run(cmd, check=True), a.reps)
            out = subprocess.run([a.gpuhist, "--backend", a.backend, "-f", "npy", path],
                                 check=True, stdout=subprocess.PIPE).stdout
            got = np.load(__import__("io").BytesIO(out)).reshape(C, levels)
            ok = np.array_equal(got, want)
            bad += not ok
            print("%-34s %10.2f %10.3f | %-4s %10.2f %12.2f %10.2f  %s" % (
                name, t_calc, t_cuda, ext, t_read, t_rh, t_cmd, "equal" if ok else "DIFFER"))
    if a.set > 0:
        bad += image_sets(a, cases, tmp, cv2)
    sys.exit(1 if bad else 0)


def image_sets(a, cases, tmp, cv2):
    """--set N: a directory of N files per case and format, streamed through the command."""
    import re
    from concurrent.futures import ThreadPoolExecutor
    bad = 0
    print("\nsets of %d files, ms (median of %d): decoding on 1 thread / on the command's T "
          "threads; the command: wall, fixed cost (one 64x64 image), its -v split" % (
              a.set, a.reps))
    print("%-34s %-4s %9s %11s | %9s %7s %10s %9s %3s | %s" % (
        "case", "fmt", "decode 1", "decode T", "command", "fixed", "decode t-s", "counting",
        "T", "decode-bound"))
    for name, img in cases:
        C = 1 if img.ndim == 2 else img.shape[2]
        levels = 256 if img.dtype == np.uint8 else 65536
        fmts = ("png", "tif", "jpg") if img.dtype == np.uint8 and C == 1 else ("png", "tif")
        want = np.zeros((C, levels), np.int64)
        for c in range(C):
            want[c] = np.bincount((img if C == 1 else img[..., c]).ravel(), minlength=levels)
        for ext in fmts:
            if not a.formats[ext]:
                print("%-34s %-4s not built into this gpuhist" % (name, ext))
                continue
            d = os.path.join(tmp, "set_%s_%s" % (name.replace(" ", "_").replace("%", "pc"), ext))
            os.makedirs(d, exist_ok=True)
            bgr = img if C == 1 else img[..., [2, 1, 0, 3]]
            params = [cv2.IMWRITE_TIFF_COMPRESSION, 1] if ext == "tif" else []
            if ext == "jpg":
                params = [cv2.IMWRITE_JPEG_QUALITY, 95]
            first = os.path.join(d, "f0000.%s" % ext)
            if not cv2.imwrite(first, bgr, params):
                sys.exit("opencv_images.py: cannot write %s" % first)
            files = [first]
            with open(first, "rb") as f:
                blob = f.read()
            for i in range(1, a.set):
                files.append(os.path.join(d, "f%04d.%s" % (i, ext)))
                with open(files[-1], "wb") as f:
                    f.write(blob)
            small = os.path.join(tmp, "small_%s_%s.%s" % (C, img.dtype.name, ext))
            cv2.imwrite(small, bgr[:64, :64], params)
            if ext == "jpg":  # lossy: the decoded file is what the command must count
                dec = cv2.imread(first, cv2.IMREAD_UNCHANGED)
                want = np.bincount(dec.ravel(), minlength=levels)[None, :] * a.set
            else:
                want_set = want * a.set
            cmd = [a.gpuhist, "--backend", a.backend, "-f", "npy", "-o", os.devnull, "-v"]
            # the command's decode-thread count, from its own -v line
            r = subprocess.run(cmd + [d], check=True, stderr=subprocess.PIPE, text=True).stderr
            m = re.search(r"decoded by (\d+) thread\(s\) in ([0-9.]+) s of their time, "
                          r"counted in ([0-9.]+) s, ([0-9.]+) s in all", r)
            T = int(m.group(1)) if m else 1
            t_dec1 = med(lambda: [cv2.imread(p, cv2.IMREAD_UNCHANGED) for p in files], a.reps)
            with ThreadPoolExecutor(T) as ex:
                t_decT = med(lambda: list(ex.map(
                    lambda p: cv2.imread(p, cv2.IMREAD_UNCHANGED), files)), a.reps)
            t_cmd = med(lambda: subprocess.run(cmd + [d], check=True,
                                               stderr=subprocess.DEVNULL), a.reps)
            t_fixed = med(lambda: subprocess.run(cmd + [small], check=True,
                                                 stderr=subprocess.DEVNULL), a.reps)
            dec_ts, cnt = (float(m.group(2)) * 1e3, float(m.group(3)) * 1e3) if m else (
                float("nan"), float("nan"))
            out = subprocess.run([a.gpuhist, "--backend", a.backend, "-f", "npy", d],
                                 check=True, stdout=subprocess.PIPE).stdout
            got = np.load(__import__("io").BytesIO(out)).reshape(C, levels)
            ok = np.array_equal(got, want if ext == "jpg" else want_set)
            bad += not ok
            print("%-34s %-4s %9.1f %11.1f | %9.1f %7.1f %10.1f %9.1f %3d | %.2f%s" % (
                name, ext, t_dec1, t_decT, t_cmd, t_fixed, dec_ts, cnt, T,
                (t_cmd - t_fixed) / t_decT, "" if ok else "  counts DIFFER"))
    return bad


if __name__ == "__main__":
    main()
