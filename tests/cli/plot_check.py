#!/usr/bin/env python3
"""Checks of the command's plots (--plot), run by the `plot` section of cli_test.sh.

usage: plot_check.py GPUHIST WORKDIR

Every case writes its data with a fixed seed (printed), computes the histogram it expects here
(Python's own binning, not the command's output), runs `gpuhist -v --plot` and checks:
  - the file's format: PNG signature, chunk CRCs, IHDR size = the size -v reports; SVG parses
    as XML with an <svg> root of that size, the bars' <path> in the channel's colour and the
    glyphs of the text; PDF header, one page of that MediaBox, startxref pointing at the xref
    table, %%EOF;
  - the PNG's pixels: in the plot area -v reports, each bin's column is the bar colour exactly
    from the baseline up to the bin's value (the tallest bin reaching the top of the plot area)
    and not above it, an empty bin's column has no pixel of the bar colour, uneven edges give
    bars of those widths, and bins narrower than a column fold into the column's greatest
    value;
  - the values axis -v reports (0 .. the largest value; the log scale's decade below the least
    positive value), the tallies noted, the sizes and drawing time of 2^20 bins.
Only the standard library: the PNG is decoded with zlib (Pillow is used when present, as a
faster decoder of the same file).
"""
import math
import os
import random
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SEED = 20261126
fails = 0
checks = 0


def check(cond, what):
    global fails, checks
    checks += 1
    if not cond:
        fails += 1
        print("FAIL:", what)


# ---- running the command ---------------------------------------------------------------------

def run(args):
    p = subprocess.run([G] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def plot(args, path):
    """Run with -v --plot path; @return (size, panels) as -v reports them."""
    rc, out, err = run(["-B", "cpu", "-v", "-o", os.devnull, "--plot", path] + args)
    check(rc == 0, "%s: exit %d: %s" % (" ".join(args), rc, err[-400:]))
    m = re.search(r"plot: .*: (PNG|SVG|PDF), (\d+) x (\d+) (pixels|points), (\d+) panel\(s\), "
                  r"(\d+) rectangle\(s\) of bars, drawn in ([0-9.]+) s", err)
    check(m is not None, "%s: no plot note in -v: %s" % (path, err[-400:]))
    if not m:
        return None
    panels = []
    for p in re.finditer(r"plot: panel (\d+): area x (\d+)\.\.(\d+), y (\d+)\.\.(\d+), values "
                         r"(\S+)\.\.(\S+?)( \(log\))?(?:; noted: (.*))?$", err, re.M):
        panels.append(dict(x0=int(p.group(2)), x1=int(p.group(3)), y0=int(p.group(4)),
                           y1=int(p.group(5)), lo=float(p.group(6)), hi=float(p.group(7)),
                           log=p.group(8) is not None, noted=p.group(9) or ""))
    info = dict(fmt=m.group(1), w=int(m.group(2)), h=int(m.group(3)), rects=int(m.group(6)),
                seconds=float(m.group(7)), panels=panels, stderr=err)
    check(len(panels) == int(m.group(5)), "%s: %d panel notes for %s panels" %
          (path, len(panels), m.group(5)))
    return info


# ---- the files -------------------------------------------------------------------------------

def png_chunks(data):
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "PNG signature")
    pos, chunks = 8, []
    while pos + 12 <= len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        typ, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        check(zlib.crc32(typ + body) & 0xFFFFFFFF == crc, "PNG chunk %r CRC" % typ)
        chunks.append((typ, body))
        pos += 12 + n
    check(pos == len(data), "PNG: bytes after the last chunk")
    check(chunks and chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND", "PNG: IHDR ... IEND")
    return chunks


def read_png(path):
    """@return (width, height, rows of (r, g, b) tuples)."""
    data = open(path, "rb").read()
    chunks = png_chunks(data)
    w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", chunks[0][1])
    check(depth == 8 and ctype in (2, 6) and inter == 0, "PNG: 8-bit RGB(A), got %d/%d" %
          (depth, ctype))
    try:
        from PIL import Image
        im = Image.open(path).convert("RGB")
        px = im.load()
        return w, h, lambda x, y: px[x, y]
    except ImportError:
        pass
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(b for t, b in chunks if t == b"IDAT"))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, lambda x, y: tuple(rows[y][x * bpp:x * bpp + 3])


def check_png_file(path, info):
    w, h, px = read_png(path)
    check((w, h) == (info["w"], info["h"]), "%s: IHDR %d x %d, -v says %d x %d" %
          (path, w, h, info["w"], info["h"]))
    return px


def check_svg(path, info, colours):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, "%s: not XML: %s" % (path, e))
        return
    ns = "{http://www.w3.org/2000/svg}"
    check(root.tag == ns + "svg", "%s: root %s" % (path, root.tag))
    size = (re.sub(r"(px|pt)$", "", root.get("width", "")),
            re.sub(r"(px|pt)$", "", root.get("height", "")))
    check(size == (str(info["w"]), str(info["h"])), "%s: size %s, -v says %d x %d" %
          (path, size, info["w"], info["h"]))
    check(root.get("viewBox") == "0 0 %d %d" % (info["w"], info["h"]), "%s: viewBox %s" %
          (path, root.get("viewBox")))
    paths = [e for e in root.iter(ns + "path")]
    check(len(list(root.iter(ns + "use"))) > 0 and len(list(root.iter(ns + "symbol"))) > 0,
          "%s: no glyphs (symbol/use) for the text" % path)
    for c in colours:
        fill = "fill:rgb(%s)" % ",".join(
            ("%f" % (100 * ((c >> s) & 255) / 255)).rstrip("0").rstrip(".") + "%"
            for s in (16, 8, 0))
        bars = [p for p in paths if fill in (p.get("style") or "")]
        check(len(bars) >= 1, "%s: no path filled with %s" % (path, fill))
        # rectangles: one closed subpath ("Z") each; at most what -v counted for all the panels
        n = sum(p.get("d", "").count("Z") for p in bars)
        check(0 < n <= info["rects"], "%s: %d rectangles in %s, -v says %d" %
              (path, n, fill, info["rects"]))


def check_pdf(path, info):
    data = open(path, "rb").read()
    check(data.startswith(b"%PDF-1."), "%s: header %r" % (path, data[:8]))
    check(data.rstrip(b"\r\n").endswith(b"%%EOF"), "%s: no %%%%EOF at the end" % path)
    check(len(re.findall(rb"/Type\s*/Page\b", data)) == 1, "%s: not one page" % path)
    check(re.search(rb"/MediaBox\s*\[\s*0 0 %d %d\s*\]" % (info["w"], info["h"]), data)
          is not None, "%s: MediaBox is not 0 0 %d %d" % (path, info["w"], info["h"]))
    m = re.search(rb"startxref\s+(\d+)\s+%%EOF\s*$", data)
    check(m is not None and data[int(m.group(1)):].startswith(b"xref"),
          "%s: startxref does not point at the xref table" % path)


# ---- the bars --------------------------------------------------------------------------------

def hexrgb(c):
    return ((c >> 16) & 255, (c >> 8) & 255, c & 255)


def check_bars(px, panel, edges, values, colour, what):
    """Each bin's column (or each folded column) is `colour` exactly where its bar covers whole
    pixels and nowhere above; empty bins have no pixel of `colour`."""
    x0, x1, y0, y1 = panel["x0"], panel["x1"], panel["y0"], panel["y1"]
    lo, hi, log = panel["lo"], panel["hi"], panel["log"]
    col = hexrgb(colour)
    E0, En = edges[0], edges[-1]

    def xmap(e):
        return x0 + (e * 0.5 - E0 * 0.5) / (En * 0.5 - E0 * 0.5) * (x1 - x0)

    def ymap(v):
        if log:
            t = (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            t = (v - lo) / (hi - lo)
        return y1 - t * (y1 - y0)

    def drawable(v):
        return math.isfinite(v) and (v > 0 if log else v != 0)

    base = y1 if log else ymap(0.0)
    ncols = x1 - x0
    folded = [None] * ncols   # (least, greatest) of the folded bins of each column
    bad = 0
    wide = 0
    for i, v in enumerate(values):
        xa, xb = xmap(edges[i]), xmap(edges[i + 1])
        if xb - xa < 1.0:
            if drawable(v):
                k = min(max(int(math.floor((xa + xb) * 0.5 - x0)), 0), ncols - 1)
                f = folded[k]
                folded[k] = (v, v) if f is None else (min(f[0], v), max(f[1], v))
            continue
        wide += 1
        c = int(math.floor((xa + xb) * 0.5))
        if drawable(v):
            t = ymap(v)
            bad += column_wrong(px, c, y0, y1, min(t, base), max(t, base), col)
            row = y1 - 1 if log else int(math.floor(base)) - 1
            if (log or v > 0) and t <= row:
                # the bar's own width: its run of colour on its lowest whole row starts and
                # ends within a unit and a half of its edges (less the gap of wide bars)
                a = c
                while a > x0 and px(a - 1, row) == col:
                    a -= 1
                b = c
                while b < x1 - 1 and px(b + 1, row) == col:
                    b += 1
                # neighbours of the same colour touch narrow bars: only wide ones are checked
                if xb - xa >= 5:
                    if abs(a - (xa + 0.5)) > 1.5 or abs(b + 1 - (xb - 0.5)) > 1.5:
                        bad += 1
                        if bad < 5:
                            print("  bin %d spans x %d..%d, edges at %.2f..%.2f" %
                                  (i, a, b + 1, xa, xb))
        else:
            bad += column_wrong(px, c, y0, y1, None, None, col)
    for k, f in enumerate(folded):
        if f is None:
            continue
        top = ymap(max(f[1], 0.0) if not log else f[1])
        bottom = base if log else ymap(min(f[0], 0.0))
        bad += column_wrong(px, x0 + k, y0, y1, top, bottom, col)
    check(bad == 0, "%s: %d columns wrong" % (what, bad))
    return wide, sum(f is not None for f in folded)


def column_wrong(px, x, y0, y1, top, bottom, col):
    """1 when column x of the plot area is not `col` exactly on the rows wholly inside
    [top, bottom], or is `col` on a row wholly outside it (top None: an empty bin)."""
    for y in range(y0, y1):
        inside = top is not None and y >= top - 1e-9 and y + 1 <= bottom + 1e-9
        outside = top is None or y + 1 <= top + 1e-9 or y >= bottom - 1e-9
        p = px(x, y)
        if (inside and p != col) or (outside and p == col):
            print("  column %d row %d: %s (bar %s..%s)" % (x, y, p, top, bottom))
            return 1
    return 0


# ---- the cases -------------------------------------------------------------------------------

def hist(data, edges):
    """Counts per bin (E[i] <= x < E[i+1], the last edge inclusive when `incl`)."""
    import bisect
    n = len(edges) - 1
    counts, under, over, nan = [0] * n, 0, 0, 0
    for x in data:
        if x != x:
            nan += 1
        elif x < edges[0]:
            under += 1
        elif x >= edges[-1]:
            over += 1
        else:
            counts[bisect.bisect_right(edges, x) - 1] += 1
    return counts, under, over, nan


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def axis_expected(values, log):
    fin = [v for v in values if math.isfinite(v)]
    if log:
        pos = [v for v in fin if v > 0]
        e = math.ceil(math.log10(min(pos)))
        while float("1e%d" % (e - 1)) >= min(pos):
            e -= 1
        while float("1e%d" % e) < min(pos):
            e += 1
        return float("1e%d" % (e - 1)), max(pos)
    lo, hi = min([0.0] + fin), max([0.0] + fin)
    return lo, hi if hi > lo else lo + 1


def check_axis(panel, values, what):
    lo, hi = axis_expected(values, panel["log"])
    check((panel["lo"], panel["hi"]) == (lo, hi), "%s: values axis %r..%r, expected %r..%r" %
          (what, panel["lo"], panel["hi"], lo, hi))


def main():
    global G
    G, work = sys.argv[1], sys.argv[2]
    os.chdir(work)
    print("plot_check: seed %d" % SEED)
    rnd = random.Random(SEED)
    blue, orange, green = 0x1F77B4, 0xFF7F0E, 0x2CA02C

    # 1. u8, 256 bins, values 100..109 left out (empty bins): PNG, SVG, PDF; log scale.
    u8 = [v for v in (min(255, max(0, int(rnd.gauss(128, 40)))) for _ in range(20000))
          if not 100 <= v < 110]
    open("u8.bin", "wb").write(bytes(u8))
    counts = [u8.count(v) for v in range(256)]
    edges = list(range(257))
    info = plot(["u8.bin"], "u8.png")
    if info:
        px = check_png_file("u8.png", info)
        check_axis(info["panels"][0], counts, "u8")
        check_bars(px, info["panels"][0], edges, counts, blue, "u8.png")
        check(info["panels"][0]["noted"] == "", "u8: noted %r" % info["panels"][0]["noted"])
        check(os.path.getsize("u8.png") < 60000, "u8.png: %d bytes" % os.path.getsize("u8.png"))
    info = plot(["u8.bin"], "u8.svg")
    if info:
        check_svg("u8.svg", info, [blue])
    info = plot(["u8.bin"], "u8.pdf")
    if info:
        check_pdf("u8.pdf", info)
    info = plot(["--plot-log", "u8.bin"], "u8log.png")
    if info:
        px = check_png_file("u8log.png", info)
        check_axis(info["panels"][0], counts, "u8 log")
        check_bars(px, info["panels"][0], edges, counts, blue, "u8log.png")

    # 2. The simplest case: counts 0, 5, 10, 0 over 4 bins.
    open("four.bin", "wb").write(bytes([1] * 5 + [2] * 10))
    info = plot(["-b", "4", "-r", "0:4", "four.bin"], "four.png")
    if info:
        px = check_png_file("four.png", info)
        p = info["panels"][0]
        check((p["lo"], p["hi"]) == (0, 10), "four: values %r..%r" % (p["lo"], p["hi"]))
        check_bars(px, p, [0, 1, 2, 3, 4], [0, 5, 10, 0], blue, "four.png")
        # the tallest bar fills its column from the top row of the plot area to the bottom one
        c = (p["x0"] * 3 + p["x1"] * 5) // 8
        check(all(px(c, y) == hexrgb(blue) for y in range(p["y0"], p["y1"])),
              "four: bin 2 does not reach the top of the plot area")
        check(px(c, p["y0"] - 3) != hexrgb(blue), "four: bin 2 goes above the plot area")

    # 3. f32, uneven edges, outliers and NaN (noted); SVG and PDF too.
    edges32 = [-3, -1, -0.5, 0, 0.25, 0.5, 1, 3]
    x = [f32(rnd.gauss(0, 1)) for _ in range(30000)] + [50.0] * 7 + [-60.0] * 3 + [math.nan] * 2
    open("f32.bin", "wb").write(struct.pack("<%df" % len(x), *x))
    counts, under, over, nan = hist(x, edges32)
    args = ["-t", "f32", "-e", ",".join(str(e) for e in edges32), "f32.bin"]
    info = plot(args, "f32.png")
    if info:
        px = check_png_file("f32.png", info)
        p = info["panels"][0]
        check_axis(p, counts, "f32")
        check_bars(px, p, edges32, counts, blue, "f32.png")
        want = "underflow %d, overflow %d (not drawn); NaN %d (never binned)" % (under, over, nan)
        check(p["noted"] == want, "f32: noted %r, expected %r" % (p["noted"], want))
    info = plot(["--outliers", "clamp"] + args, "f32clamp.png")
    if info:
        p = info["panels"][0]
        clamped = counts[:]
        clamped[0] += under
        clamped[-1] += over
        check_axis(p, clamped, "f32 clamp")
        check_bars(check_png_file("f32clamp.png", info), p, edges32, clamped, blue, "f32clamp")
        check(p["noted"].startswith("underflow %d, overflow %d (in the end bins)" % (under, over)),
              "f32 clamp: noted %r" % p["noted"])
    for ext in ("svg", "pdf"):
        info = plot(args, "f32." + ext)
        if info:
            (check_svg("f32.svg", info, [blue]) if ext == "svg" else check_pdf("f32.pdf", info))

    # 4. Three channels: one panel each, in its colour, with its own axis.
    rgb = [rnd.randrange(256) for _ in range(3 * 4000)]
    rgb[0::3] = [v // 2 for v in rgb[0::3]]          # channel 0 only in 0..127
    open("rgb.bin", "wb").write(bytes(rgb))
    info = plot(["--channels", "3", "rgb.bin"], "rgb.png")
    if info:
        px = check_png_file("rgb.png", info)
        check(len(info["panels"]) == 3, "rgb: %d panels" % len(info["panels"]))
        for c, colour in enumerate((blue, orange, green)):
            if c < len(info["panels"]):
                cc = [rgb[c::3].count(v) for v in range(256)]
                check_axis(info["panels"][c], cc, "rgb channel %d" % c)
                check_bars(px, info["panels"][c], list(range(257)), cc, colour, "rgb.png %d" % c)
    info = plot(["--channels", "3", "rgb.bin"], "rgb.svg")
    if info:
        check_svg("rgb.svg", info, [blue, orange, green])
    info = plot(["--channels", "3", "rgb.bin"], "rgb.pdf")
    if info:
        check_pdf("rgb.pdf", info)

    # 5. An image (the PNG plotted above, read back as an RGB image): R, G, B panels.
    rc, ver, _ = run(["--version"])
    if re.search(r"images: .*png", ver):
        w, h, px = read_png("four.png")
        chans = [[0] * 256 for _ in range(3)]
        for yy in range(h):
            for xx in range(w):
                for c, v in enumerate(px(xx, yy)):
                    chans[c][v] += 1
        info = plot(["four.png"], "image.png")
        if info:
            px2 = check_png_file("image.png", info)
            for c, colour in enumerate((0xD62728, 0x2CA02C, 0x1F77B4)):
                check_axis(info["panels"][c], chans[c], "image channel %d" % c)
                check_bars(px2, info["panels"][c], list(range(257)), chans[c], colour,
                           "image.png %d" % c)
    else:
        print("plot_check: PNG images not built in: the image case left out")

    # 6. 2^20 bins: folded into the columns (the greatest value of each), fast, small files.
    n = 1 << 20
    big = [f32(rnd.random()) for _ in range(300000)]
    open("big.bin", "wb").write(struct.pack("<%df" % len(big), *big))
    counts = [0] * n
    for v in big:
        if v < 1:
            counts[int(v * n)] += 1              # v * 2^20 is exact: edges i / 2^20
    bedges = [i / n for i in range(n + 1)]
    for ext in ("png", "svg", "pdf"):
        info = plot(["-t", "f32", "-b", str(n), "-r", "0:1", "big.bin"], "big." + ext)
        if not info:
            continue
        size = os.path.getsize("big." + ext)
        check(size < 250000, "big.%s: %d bytes" % (ext, size))
        check(info["seconds"] < 2.0, "big.%s: drawn in %.3f s" % (ext, info["seconds"]))
        check(info["rects"] <= 2 * (info["panels"][0]["x1"] - info["panels"][0]["x0"]),
              "big.%s: %d rectangles" % (ext, info["rects"]))
        if ext == "png":
            px = check_png_file("big.png", info)
            check_axis(info["panels"][0], counts, "big")
            wide, cols = check_bars(px, info["panels"][0], bedges, counts, blue, "big.png")
            check(wide == 0 and cols == info["panels"][0]["x1"] - info["panels"][0]["x0"],
                  "big: %d wide bins, %d columns" % (wide, cols))
            check("folded into the" in info["stderr"], "big: no folding note in -v")
        elif ext == "svg":
            check_svg("big.svg", info, [blue])
        else:
            check_pdf("big.pdf", info)
        print("plot_check: 2^20 bins: %s %d bytes, drawn in %.3f s" % (ext, size, info["seconds"]))

    # 7. Weights (sums, negative ones too), density, cumulative: the values drawn.
    xs = [rnd.uniform(0, 4) for _ in range(3000)]
    ws = [rnd.uniform(-1, 3) for _ in range(3000)]
    open("x.f64", "wb").write(struct.pack("<%dd" % len(xs), *xs))
    open("w.f64", "wb").write(struct.pack("<%dd" % len(ws), *ws))
    from fractions import Fraction
    sums = [Fraction(0)] * 8
    cnt = [0] * 8
    for v, w in zip(xs, ws):
        sums[int(v * 2)] += Fraction(w)
        cnt[int(v * 2)] += 1
    sums = [float(s) for s in sums]
    e8 = [i / 2 for i in range(9)]
    base = ["-t", "f64", "-b", "8", "-r", "0:4", "x.f64"]
    info = plot(["--weights", "w.f64"] + base, "w.png")
    if info:
        check_axis(info["panels"][0], sums, "weights")
        check_bars(check_png_file("w.png", info), info["panels"][0], e8, sums, blue, "w.png")
    cum = [sum(cnt[:i + 1]) for i in range(8)]
    info = plot(["--cumulative"] + base, "cum.png")
    if info:
        check_axis(info["panels"][0], cum, "cumulative")
        check_bars(check_png_file("cum.png", info), info["panels"][0], e8, cum, blue, "cum.png")
    dens = [c / 0.5 / len(xs) for c in cnt]
    info = plot(["--density"] + base, "dens.png")
    if info:
        p = info["panels"][0]
        check(p["lo"] == 0 and abs(p["hi"] - max(dens)) <= 1e-15, "density: %r..%r" %
              (p["lo"], p["hi"]))
        check_bars(check_png_file("dens.png", info), p, e8, dens, blue, "dens.png")

    print("plot_check: %d checks, %d failures" % (checks, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
