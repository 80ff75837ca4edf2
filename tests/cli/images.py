#!/usr/bin/env python3
"""Images for the `images` section of cli_test.sh, with their expected histograms.

usage: images.py gen DIR          write the images and NAME.expect files into DIR
       images.py same IMAGE REF   IMAGE (read back with OpenCV / Pillow) equals REF.npy
       images.py check            exit 0 when NumPy, Pillow and OpenCV import, else 77

The images are written by well-kept encoders (Pillow, OpenCV) or, for the netpbm variants,
byte by byte from their specification; the expected counts come from the arrays written (for
JPEG: from Pillow's decoding of the file, the same libjpeg-turbo defaults). A NAME.expect file
holds the count columns of `gpuhist -f csv`, one line per bin. Random data uses fixed seeds.
Equalization references: cv2.equalizeHist for 8 bits; for 16 bits the same rule (OpenCV's
float arithmetic, written out below) over 65536 levels.
"""
import os
import struct
import sys
import zlib

SEED = 20261126


def check():
    try:
        import cv2  # noqa: F401
        import numpy  # noqa: F401
        from PIL import Image  # noqa: F401
    except ImportError as e:
        print("images.py: %s" % e)
        sys.exit(77)


def counts_of(a, levels):
    """Counts per channel of an (h, w) or (h, w, c) integer array: one line per level."""
    import numpy as np
    a = a.reshape(a.shape[0], a.shape[1], -1)
    cols = [np.bincount(a[..., c].ravel().astype(np.int64), minlength=levels)
            for c in range(a.shape[2])]
    return "".join(",".join(str(int(c[i])) for c in cols) + "\n" for i in range(levels))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def png_chunk(kind, data):
    c = kind + data
    return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xffffffff)


def raw_png(width, height, rows_data):
    """A grey 8-bit PNG with any IHDR size (for 0 x 0 and huge declared sizes)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
            png_chunk(b"IDAT", zlib.compress(rows_data)) + png_chunk(b"IEND", b""))


def eq16(a):
    """OpenCV's equalizeHist rule over 65536 levels, in its float32 arithmetic."""
    import numpy as np
    h = np.bincount(a.ravel(), minlength=65536).astype(np.int64)
    i0 = int(np.nonzero(h)[0][0])
    total = int(a.size)
    if h[i0] == total:
        return np.full_like(a, i0)
    scale = np.float32(65535.0) / np.float32(total - h[i0])
    lut = np.zeros(65536, np.int64)
    s = np.cumsum(h) - np.cumsum(h)[i0]
    v = s.astype(np.float32) * scale
    lut[:] = np.clip(np.rint(v), 0, 65535).astype(np.int64)
    lut[:i0 + 1] = 0
    return lut[a].astype(np.uint16)


def gen(d):
    import cv2
    import numpy as np
    from PIL import Image
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(SEED)
    print("images.py: seed %d" % SEED)

    def P(name):
        return os.path.join(d, name)

    # 8-bit: grey, grey+alpha, RGB, RGBA through Pillow's PNG encoder; a skewed grey image so
    # that equalization moves the values.
    g8 = np.clip(rng.normal(90, 30, (61, 47)), 0, 255).astype(np.uint8)
    ga8 = rng.integers(0, 256, (13, 17, 2), dtype=np.uint8)
    rgb8 = rng.integers(0, 256, (23, 29, 3), dtype=np.uint8)
    rgba8 = rng.integers(0, 256, (19, 11, 4), dtype=np.uint8)
    Image.fromarray(g8).save(P("g8.png"))
    Image.fromarray(ga8, "LA").save(P("ga8.png"))
    Image.fromarray(rgb8).save(P("rgb8.png"))
    Image.fromarray(rgba8, "RGBA").save(P("rgba8.png"))
    write(P("g8.expect"), counts_of(g8, 256))
    write(P("ga8.expect"), counts_of(ga8, 256))
    write(P("rgb8.expect"), counts_of(rgb8, 256))
    write(P("rgba8.expect"), counts_of(rgba8, 256))
    write(P("rgba8_3.expect"), counts_of(rgba8[..., :3], 256))
    # --roi 3,2,5,4: columns 3..7, rows 2..5
    write(P("rgb8_roi.expect"), counts_of(rgb8[2:6, 3:8], 256))
    write(P("g8_cum.expect"), "".join("%d,%d\n" % (c, s) for c, s in zip(
        np.bincount(g8.ravel(), minlength=256), np.cumsum(np.bincount(g8.ravel(), minlength=256)))))

    # 16-bit PNG: grey through Pillow, RGB and RGBA through OpenCV (which takes BGR order)
    g16 = rng.integers(0, 65536, (9, 14), dtype=np.uint16)
    rgb16 = rng.integers(0, 65536, (7, 5, 3), dtype=np.uint16)
    rgba16 = rng.integers(0, 65536, (6, 4, 4), dtype=np.uint16)
    Image.fromarray(g16, "I;16").save(P("g16.png"))
    cv2.imwrite(P("rgb16.png"), rgb16[..., ::-1])
    cv2.imwrite(P("rgba16.png"), rgba16[..., [2, 1, 0, 3]])
    write(P("g16.expect"), counts_of(g16, 65536))
    write(P("rgb16.expect"), counts_of(rgb16, 65536))
    write(P("rgba16.expect"), counts_of(rgba16, 65536))

    # palette PNG (expanded to RGB) and 1-bit grey PNG (values 0 and 1)
    pal = Image.fromarray(rgb8).convert("P", palette=Image.ADAPTIVE, colors=16)
    pal.save(P("pal.png"))
    write(P("pal.expect"), counts_of(np.array(pal.convert("RGB")), 256))
    bits = rng.integers(0, 2, (10, 21), dtype=np.uint8)
    Image.fromarray(bits * 255).convert("1").save(P("g1.png"))
    write(P("g1.expect"), counts_of(bits, 256))

    # JPEG: grey and colour; expected from Pillow's decoding of the same file
    Image.fromarray(g8).save(P("g8.jpg"), quality=85)
    Image.fromarray(rgb8).save(P("rgb8.jpg"), quality=85)
    write(P("g8jpg.expect"), counts_of(np.array(Image.open(P("g8.jpg"))), 256))
    write(P("rgb8jpg.expect"), counts_of(np.array(Image.open(P("rgb8.jpg")).convert("RGB")), 256))

    # TIFF: 8/16-bit grey, RGB, RGBA, 16-bit RGB (OpenCV), float32, 3 pages
    Image.fromarray(g8).save(P("g8.tif"))
    Image.fromarray(g16, "I;16").save(P("g16.tif"))
    Image.fromarray(rgb8).save(P("rgb8.tif"))
    Image.fromarray(rgba8, "RGBA").save(P("rgba8.tif"))
    cv2.imwrite(P("rgb16.tif"), rgb16[..., ::-1])
    f32 = rng.random((12, 10), dtype=np.float32)
    Image.fromarray(f32, "F").save(P("f32.tif"))
    write(P("f32.expect"), "".join("%d\n" % c for c in
                                   np.histogram(f32, bins=10, range=(0.0, 1.0))[0]))
    write(P("f32auto.expect"), "".join("%d\n" % c for c in np.histogram(
        f32, bins=8, range=(float(f32.min()), float(f32.max())))[0]))
    pages = [rng.integers(0, 256, (5, 6), dtype=np.uint8) for _ in range(3)]
    Image.fromarray(pages[0]).save(P("pages.tif"), save_all=True,
                                   append_images=[Image.fromarray(p) for p in pages[1:]])
    write(P("pages.expect"), counts_of(np.concatenate([p.ravel() for p in pages])
                                       .reshape(1, -1), 256))
    write(P("pages_each.expect"), "".join(
        "pages.tif[%d],%d\n" % (k, c) for k, p in enumerate(pages)
        for c in np.bincount(p.ravel(), minlength=256)))
    # 1-bit bilevel TIFF: a depth gpuhist refuses
    Image.fromarray(bits * 255).convert("1").save(P("bilevel.tif"))

    # PGM / PPM / PAM, written from the netpbm specification (big-endian 16-bit samples)
    with open(P("g8.pgm"), "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (g8.shape[1], g8.shape[0]) + g8.tobytes())
    with open(P("g16.pgm"), "wb") as f:
        f.write(b"P5\n%d %d\n65535\n" % (g16.shape[1], g16.shape[0]) + g16.astype(">u2").tobytes())
    m1000 = rng.integers(0, 1001, (4, 8), dtype=np.uint16)
    with open(P("m1000.pgm"), "wb") as f:
        f.write(b"P5\n8 4\n1000\n" + m1000.astype(">u2").tobytes())
    write(P("m1000.expect"), counts_of(m1000, 65536))
    with open(P("plain.pgm"), "w") as f:
        f.write("P2\n# a comment\n%d %d\n255\n" % (g8.shape[1], g8.shape[0]))
        f.write("\n".join(" ".join(str(v) for v in row) for row in g8) + "\n")
    with open(P("rgb8.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (rgb8.shape[1], rgb8.shape[0]) + rgb8.tobytes())
    with open(P("rgba8.pam"), "wb") as f:
        f.write(b"P7\nWIDTH %d\nHEIGHT %d\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n"
                % (rgba8.shape[1], rgba8.shape[0]) + rgba8.tobytes())
    with open(P("rgb16.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n65535\n" % (rgb16.shape[1], rgb16.shape[0]) +
                rgb16.astype(">u2").tobytes())

    # several files, a directory (sorted by name), and one with other channels
    os.makedirs(P("dir"), exist_ok=True)
    parts = [rng.integers(0, 256, (4 + k, 3), dtype=np.uint8) for k in range(3)]
    for k, p in enumerate(parts):
        Image.fromarray(p).save(P("dir/%c.png" % "cab"[k]))
    order = sorted(range(3), key=lambda k: "cab"[k])
    write(P("dir.expect"), counts_of(np.concatenate([p.ravel() for p in parts]).reshape(1, -1),
                                     256))
    write(P("dir_each.expect"), "".join(
        "dir/%c.png,%d\n" % ("cab"[k], c) for k in order
        for c in np.bincount(parts[k].ravel(), minlength=256)))
    write(P("two.expect"), counts_of(np.concatenate([g8.ravel(), g8.ravel()]).reshape(1, -1),
                                     256))
    os.makedirs(P("mixed"), exist_ok=True)
    Image.fromarray(parts[0]).save(P("mixed/a.png"))
    Image.fromarray(rgb8).save(P("mixed/b.png"))

    # 1 x 1, 0 x 0, a huge declared size, damaged files
    Image.fromarray(np.array([[200]], np.uint8)).save(P("one.png"))
    with open(P("empty.png"), "wb") as f:
        f.write(raw_png(0, 0, b""))
    with open(P("huge.png"), "wb") as f:
        f.write(raw_png(100000, 100000, b"\0" * 100001))
    with open(P("empty.pgm"), "wb") as f:
        f.write(b"P5\n0 0\n255\n")
    for name in ("g8.png", "g8.jpg", "g8.tif"):
        data = open(P(name), "rb").read()
        stem, ext = name.split(".")
        with open(P("trunc.%s" % ext), "wb") as f:
            f.write(data[:len(data) // 2])
        bad = bytearray(data)
        if ext == "png":       # a changed byte of image data: the IDAT CRC fails
            i = data.index(b"IDAT") + 20
            bad[i] ^= 0xff
        elif ext == "jpg":     # a marker inside the entropy-coded data
            i = data.index(b"\xff\xda") + 40
            bad[i:i + 4] = b"\xff\xd9\xff\xc4"
        else:                  # the first directory's offset points past the end
            bad[4:8] = struct.pack("<I", len(data) + 1000)
        with open(P("corrupt.%s" % ext), "wb") as f:
            f.write(bytes(bad))

    # equalization references
    np.save(P("eq_g8.npy"), cv2.equalizeHist(g8))
    np.save(P("eq_g8_roi.npy"), cv2.equalizeHist(np.ascontiguousarray(g8[5:25, 4:34])))
    np.save(P("eq_rgb8.npy"), np.stack([cv2.equalizeHist(rgb8[..., c]) for c in range(3)], -1))
    eq_rgba = rgba8.copy()
    for c in range(3):
        eq_rgba[..., c] = cv2.equalizeHist(rgba8[..., c])
    np.save(P("eq_rgba8.npy"), eq_rgba)  # alpha copied
    const = np.full((6, 7), 77, np.uint8)
    Image.fromarray(const).save(P("const.png"))
    np.save(P("eq_const.npy"), cv2.equalizeHist(const))
    np.save(P("eq_g16.npy"), eq16(g16))
    # a larger, skewed 8-bit image (non-trivial rounding in the float rule)
    big = np.clip(rng.gamma(2.0, 20.0, (300, 257)), 0, 255).astype(np.uint8)
    Image.fromarray(big).save(P("big.png"))
    np.save(P("eq_big.npy"), cv2.equalizeHist(big))


def read_back(path):
    import cv2
    import numpy as np
    from PIL import Image
    if path.lower().endswith((".png", ".tif", ".tiff")):
        a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if a is not None and a.ndim == 3:
            a = a[..., [2, 1, 0, 3][:a.shape[2]] if a.shape[2] == 4 else [2, 1, 0]]
        return a
    if path.lower().endswith(".pam"):  # Pillow reads no PAM: its header, then the samples
        data = open(path, "rb").read()
        end = data.index(b"ENDHDR\n") + 7
        head = dict(line.split(b" ", 1) for line in data[:end].split(b"\n")[1:-2])
        w, h, c = int(head[b"WIDTH"]), int(head[b"HEIGHT"]), int(head[b"DEPTH"])
        dt = np.uint8 if int(head[b"MAXVAL"]) < 256 else np.dtype(">u2")
        return np.frombuffer(data[end:], dt).reshape(h, w, c).astype(
            np.uint8 if dt == np.uint8 else np.uint16)
    return np.array(Image.open(path))


def same(path, ref):
    import numpy as np
    a = read_back(path)
    b = np.load(ref)
    if a is None or a.shape != b.shape or a.dtype != b.dtype:
        print("images.py: %s: %s %s, reference %s %s" % (
            path, None if a is None else a.shape, None if a is None else a.dtype, b.shape,
            b.dtype))
        sys.exit(1)
    diff = np.count_nonzero(a != b)
    if diff:
        print("images.py: %s: %d of %d samples differ from %s" % (path, diff, a.size, ref))
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check()
    elif sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif sys.argv[1] == "same":
        same(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: images.py gen DIR | same IMAGE REF.npy | check")
