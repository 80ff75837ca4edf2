#!/usr/bin/env python3
"""Write the seed corpus of the fuzz harnesses: tests/fuzz/corpus/<harness>/seed-*.

    python3 tests/fuzz/make_corpus.py        # needs NumPy for the .npy seeds

The seeds are checked in; this script says how they were made and remakes them (it only
writes files named seed-*, so inputs found by fuzzing, named otherwise, stay). The .npy seeds
are files NumPy writes (format versions 1, 2 and 3; several dtypes, byte orders and shapes)
plus hand-made broken headers. The request seeds follow the byte layout fuzz_request.c reads.
"""
import io
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# ---- .npy headers ---------------------------------------------------------------------------

def npy_seeds():
    import numpy as np
    from numpy.lib import format as npf

    def save(name, arr, version=None):
        buf = io.BytesIO()
        if version is None:
            np.save(buf, arr, allow_pickle=False)
        else:
            npf.write_array(buf, arr, version=version, allow_pickle=False)
        write("fuzz_npy_header", name, buf.getvalue())

    save("u8-1d", np.arange(12, dtype=np.uint8))
    save("i8", np.array([-128, -1, 0, 127], dtype=np.int8))
    save("u16-be", np.arange(5, dtype=">u2"))
    save("i16-2d", np.arange(6, dtype="<i2").reshape(2, 3))
    save("u32", np.array([0, 1, 2**32 - 1], dtype=np.uint32))
    save("i32-be-3d", np.arange(8, dtype=">i4").reshape(2, 2, 2))
    save("u64", np.array([0, 2**64 - 1], dtype=np.uint64))
    save("i64", np.array([-2**63, 2**53 + 1], dtype=np.int64))
    save("f32-nan", np.array([0.5, np.nan, np.inf, -0.0], dtype=np.float32))
    save("f64-be", np.array([1.5, -2.25], dtype=">f8"))
    save("f64-fortran", np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)))
    save("bool", np.array([True, False, True]))
    save("scalar", np.array(7, dtype=np.int32))
    save("empty", np.zeros((0,), dtype=np.float32))
    save("empty-2d", np.zeros((3, 0), dtype=np.uint8))
    save("rgb", np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    save("v2", np.arange(4, dtype=np.float32), version=(2, 0))
    save("v3", np.arange(4, dtype=np.int16), version=(3, 0))
    save("f16", np.arange(3, dtype=np.float16))
    save("c8", np.arange(2, dtype=np.complex64))
    save("str", np.array(["ab", "c"]))
    save("datetime", np.array(["2020-01-01"], dtype="datetime64[D]"))
    save("structured", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
    save("void", np.zeros(2, dtype="V3"))

    def raw(name, header, data=b"", version=1):
        h = header.encode("latin-1")
        pre = 10 if version == 1 else 12
        h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
        size = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
        write("fuzz_npy_header", name, b"\x93NUMPY" + bytes([version, 0]) + size + h + data)

    raw("negative-shape", "{'descr': '<i4', 'fortran_order': False, 'shape': (-5,), }")
    raw("negative-zero", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, -0), }")
    raw("plus-sign", "{'descr': '<i2', 'fortran_order': False, 'shape': (+2,), }", b"\1\0\2\0")
    raw("overflow-shape", "{'descr': '<f8', 'fortran_order': False, "
        "'shape': (4294967296, 4294967296, 2), }")
    raw("huge-dim", "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }")
    raw("truncated-data", "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", b"\0" * 7)
    raw("extra-key", "{'descr': '<u1', 'extra': [1, (2, '3')], 'fortran_order': False, "
        "'shape': (3,), }", b"abc")
    raw("missing-shape", "{'descr': '<u1', 'fortran_order': False, }")
    raw("bad-order", "{'descr': '<u1', 'fortran_order': Maybe, 'shape': (1,), }", b"x")
    raw("double-quotes", '{"descr": "|u1", "fortran_order": false, "shape": (1,)}', b"x")
    raw("unterminated", "{'descr': '<u1, 'fortran_order': False, 'shape': (1,), }")
    raw("long-descr", "{'descr': '<" + "i" * 100 + "', 'fortran_order': False, 'shape': (1,), }")
    raw("descr-no-order", "{'descr': 'f8', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8)
    raw("v2-raw", "{'descr': '>u4', 'fortran_order': True, 'shape': (2, 1), }", b"\0\0\0\1" * 2,
        version=2)
    write("fuzz_npy_header", "version-9", b"\x93NUMPY\x09\x00\x10\x00")
    write("fuzz_npy_header", "no-magic", b"hello")
    write("fuzz_npy_header", "v2-short", b"\x93NUMPY\x02\x00\x10\x00\x00")
    write("fuzz_npy_header", "length-past-end", b"\x93NUMPY\x01\x00\xff\xff{'descr'")


# ---- text -----------------------------------------------------------------------------------

def text_seeds():
    # First byte: sample type (0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 u64, 7 i64, 8 f32,
    # 9 f64) + 0x80 for a usage failure status; then the text.
    seeds = {
        "f64-basic": (9, b"1 2.5 -3e10\n4,5,6\n"),
        "f64-comments": (9, b"# header\n1.5 # one\n\n  2.5\r\n#end"),
        "f64-special": (9, b"nan inf -inf -0.0 1e-320 1e400"),
        "f32-round": (8, b"0.1 16777217 3.4028235e38 3.5e38 1e-46"),
        "u8-range": (0, b"0 255 256"),
        "u8-negative": (0, b"1 -1"),
        "i8-range": (1, b"-128 127 -129"),
        "u16": (2, b"65535,0,1"),
        "i16": (3, b"-32768 32767"),
        "u32-float": (4, b"1 2.5"),
        "i32": (5, b"-2147483648 2147483647 2147483648"),
        "u64-max": (6, b"18446744073709551615 18446744073709551616"),
        "i64-min": (7, b"-9223372036854775808 9223372036854775807"),
        "hex": (9, b"0x10 0x1p-3"),
        "binary": (9, b"1 2\x003 4"),
        "long-token": (9, b"1" * 100),
        "empty": (9, b""),
        "separators": (0x80 | 9, b",,,\t\f\v 7 ,, 8"),
        "junk": (0x80 | 5, b"12abc"),
    }
    for name, (t, text) in seeds.items():
        write("fuzz_text", name, bytes([t]) + text)


# ---- numbers and options --------------------------------------------------------------------

def numbers_getopt_seeds():
    numbers = {
        "u64": b"12345", "u64-max": b"18446744073709551615", "u64-over": b"18446744073709551616",
        "negative": b"-5", "plus": b"+7", "space": b" 5", "double": b"0.1", "exp": b"-2.5e-3",
        "huge": b"1e400", "tiny": b"1e-400", "hexfloat": b"0x1p-1074", "nan": b"nan",
        "inf": b"-inf", "i64-min": b"-9223372036854775808", "junk": b"12x", "empty": b"",
    }
    for name, s in numbers.items():
        write("fuzz_numbers_getopt", "num-" + name, b"\0" + s)
    # Raw double bit patterns through the printer (mode 0, eight bytes).
    for name, v in {"third": 1 / 3, "denormal": 5e-324, "big": 1.7976931348623157e308,
                    "edge": 1e16, "small": 1e-5, "negzero": -0.0}.items():
        write("fuzz_numbers_getopt", "bits-" + name, b"\0" + struct.pack("<d", v))
    argvs = {
        "basic": [b"-b", b"100", b"--range=0:1", b"file.bin"],
        "inline": [b"-b100", b"-v", b"--", b"-x", b"-"],
        "edges": [b"--edges", b"0,1,10,1e3", b"--text", b"-e1,2"],
        "errors": [b"--verbose=1", b"--unknown", b"-vb5", b"-q", b"-r"],
        "values": [b"-i", b"-9223372036854775808", b"-t", b"float32", b"--type=u99",
                   b"--range", b"1e400:2"],
        "empty-args": [b"", b"--", b""],
        "long-name": [b"--" + b"x" * 100 + b"=1"],
    }
    for name, args in argvs.items():
        write("fuzz_numbers_getopt", "argv-" + name, b"\1" + b"\0".join(args))


# ---- requests -------------------------------------------------------------------------------

U8, I8, U16, I16, U32, I32, U64, I64, F32, F64 = range(10)


def d_raw(v):
    """pick_double mode 0: raw bits."""
    return bytes([0]) + struct.pack("<d", v)


def d_int(v):
    """pick_double mode 1: a small integer."""
    return bytes([1, v & 0xFF])


def i_small(v):
    """pick_int64 mode 4: an int16."""
    return bytes([4]) + struct.pack("<h", v)


def request(dtype, samples_bytes, *, channels=1, active=0, mask=None, count=None, roi=None,
            where=1, kind=0, bins=256, flags=0, lower=d_int(0), upper=d_raw(256.0),
            integer_lower=i_small(0), edges=None, rflags=1 | (1 << 1), how=3, misalign=0,
            overflow=None):
    out = bytes([dtype, channels, active, 1 | (mask << 1) if mask is not None else 0])
    if overflow is not None:
        out += bytes([7, overflow, 0])
    elif roi is not None:
        rows, row_length, pad = roi
        out += bytes([5, rows - 1, row_length, pad])
    else:
        out += bytes([3]) + struct.pack("<H", count)
    out += bytes([where, {0: 0, 1: 3, 2: 5, 3: 7}[kind]])
    if bins == 0:
        out += bytes([0])
    elif bins == 1:
        out += bytes([1])
    elif bins <= 300:
        out += bytes([2]) + struct.pack("<H", bins - 1)
    elif bins < 2**31:
        out += bytes([6]) + struct.pack("<I", bins - 1)
    else:
        out += bytes([7]) + struct.pack("<I", 0)
    out += bytes([flags]) + lower + upper + integer_lower
    if edges is not None:
        out += edges
    out += bytes([rflags, how, misalign])
    return out + samples_bytes


def request_seeds():
    write("fuzz_request", "u8-256", request(U8, bytes(range(256)), count=1000))
    write("fuzz_request", "u8-auto-threads",
          request(U8, bytes([3, 3, 3, 200, 7]), count=4000, flags=1, bins=10, how=2 | (2 << 6)))
    floats = struct.pack("<8f", 0.0, 0.25, 1.0, float("nan"), float("inf"), -0.0, 0.999, 1e-40)
    write("fuzz_request", "f32-even", request(F32, floats, count=64, bins=4, lower=d_raw(0.0),
                                              upper=d_raw(1.0), how=1))
    write("fuzz_request", "f32-auto-inclusive",
          request(F32, floats, count=8, bins=100, flags=1 | 2, misalign=3))
    doubles = struct.pack("<6d", -1.0, 0.0, 0.5, 2.0, 9.99, float("-inf"))
    edges = bytes([2]) + d_int(-1) + bytes([40, 0, 1, 2, 3, 0])  # steps of 2^0 x (1..4)
    write("fuzz_request", "f64-edges",
          request(F64, doubles, count=30, kind=1, bins=5, edges=edges, how=1))
    adjacent = bytes([1]) + d_raw(1.0) + bytes([0])
    write("fuzz_request", "f64-adjacent-edges",
          request(F64, struct.pack("<2d", 1.0, 1.0000000000000002), count=2, kind=1, bins=3,
                  edges=adjacent))
    write("fuzz_request", "i16-integer",
          request(I16, struct.pack("<4h", -500, -1, 0, 499), count=100, kind=2, bins=1000,
                  integer_lower=i_small(-500)))
    write("fuzz_request", "u16-70000-bins",
          request(U16, struct.pack("<3H", 0, 65535, 1234), count=600, kind=2, bins=70000))
    write("fuzz_request", "rgba-roi",
          request(U8, bytes(range(0, 256, 3)), channels=4, active=3, roi=(4, 16, 5), bins=16,
                  lower=d_int(0), upper=d_raw(256.0), misalign=5))
    write("fuzz_request", "channel-mask",
          request(I8, bytes(range(256)), channels=4, mask=0b1010, count=50, bins=8,
                  lower=d_int(-128), upper=d_int(127)))
    write("fuzz_request", "i64-near-2p53",
          request(I64, struct.pack("<2q", 2**53, 2**53 + 1), count=10, kind=2, bins=64,
                  integer_lower=bytes([3, 100])))
    write("fuzz_request", "u64-even-huge",
          request(U64, struct.pack("<2Q", 0, 2**64 - 1), count=20, bins=3, lower=d_raw(0.0),
                  upper=d_raw(1.8446744073709552e19)))
    write("fuzz_request", "clamp",
          request(I32, struct.pack("<3i", -100, 5, 100), count=9, bins=4, flags=2 << 2,
                  lower=d_int(0), upper=d_int(10)))
    write("fuzz_request", "overflow-count", request(U32, b"", overflow=0))
    write("fuzz_request", "overflow-stride", request(U8, b"", overflow=2))
    write("fuzz_request", "bad-dtype", request(10, b"\1", count=1))
    write("fuzz_request", "bad-kind", request(U8, b"\1", count=1, kind=3))
    write("fuzz_request", "zero-bins", request(U8, b"\1", count=1, bins=0))
    write("fuzz_request", "too-many-bins", request(U8, b"\1", count=1, bins=2**31 + 1))
    write("fuzz_request", "device-location", request(U8, b"\1", count=1, where=2))


# ---- images ----------------------------------------------------------------------------------

def image_seeds():
    """Small images of every format and layout the decoders read (Pillow; the netpbm variants
    and PAM by hand), and a few broken ones."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(7)

    def pil(name, img, fmt, **kw):
        buf = io.BytesIO()
        img.save(buf, fmt, **kw)
        write("fuzz_image", name, buf.getvalue())

    g = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    rgb = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    rgba = rng.integers(0, 256, (3, 5, 4), dtype=np.uint8)
    g16 = rng.integers(0, 65536, (4, 3), dtype=np.uint16)
    pil("g8.png", Image.fromarray(g), "PNG")
    pil("la.png", Image.fromarray(rng.integers(0, 256, (3, 4, 2), dtype=np.uint8), "LA"), "PNG")
    pil("rgb.png", Image.fromarray(rgb), "PNG")
    pil("rgba.png", Image.fromarray(rgba, "RGBA"), "PNG")
    pil("g16.png", Image.fromarray(g16, "I;16"), "PNG")
    pil("pal.png", Image.fromarray(rgb).convert("P", palette=Image.ADAPTIVE, colors=4), "PNG")
    pil("g1.png", Image.fromarray(g).convert("1"), "PNG")
    pil("interlaced.png", Image.fromarray(rgb), "PNG", interlace=1)
    pil("g8.jpg", Image.fromarray(g), "JPEG", quality=50)
    pil("rgb.jpg", Image.fromarray(rgb), "JPEG", quality=50)
    pil("progressive.jpg", Image.fromarray(rgb), "JPEG", progressive=True)
    pil("g8.tif", Image.fromarray(g), "TIFF")
    pil("rgb-deflate.tif", Image.fromarray(rgb), "TIFF", compression="tiff_adobe_deflate")
    pil("g16.tif", Image.fromarray(g16, "I;16"), "TIFF")
    pil("f32.tif", Image.fromarray(rng.random((3, 4), dtype=np.float32), "F"), "TIFF")
    pil("pages.tif", Image.fromarray(g), "TIFF", save_all=True,
        append_images=[Image.fromarray(g[::-1])])
    pil("bilevel.tif", Image.fromarray(g).convert("1"), "TIFF")
    write("fuzz_image", "g8.pgm", b"P5\n7 5\n255\n" + g.tobytes())
    write("fuzz_image", "plain.pgm", b"P2\n2 2\n1000\n0 1\n999 1000\n")
    write("fuzz_image", "rgb.ppm", b"P6\n6 4\n255\n" + rgb.tobytes())
    write("fuzz_image", "g16.pgm", b"P5\n3 4\n65535\n" + g16.astype(">u2").tobytes())
    write("fuzz_image", "p1.pbm", b"P1\n3 2\n0 1 0\n1 1 0\n")
    write("fuzz_image", "rgba.pam",
          b"P7\nWIDTH 5\nHEIGHT 3\nDEPTH 4\nMAXVAL 255\nTUPLTYPE RGB_ALPHA\nENDHDR\n" +
          rgba.tobytes())
    write("fuzz_image", "truncated.png", open(os.path.join(CORPUS, "fuzz_image",
                                                           "seed-rgb.png"), "rb").read()[:60])
    write("fuzz_image", "truncated.tif", open(os.path.join(CORPUS, "fuzz_image",
                                                           "seed-g8.tif"), "rb").read()[:40])
    write("fuzz_image", "huge.pgm", b"P5\n100000 100000\n255\n\0")


def main():
    try:
        image_seeds()
    except ImportError:
        print("NumPy or Pillow not found: image seeds not written", file=sys.stderr)
    text_seeds()
    numbers_getopt_seeds()
    request_seeds()
    try:
        npy_seeds()
    except ImportError:
        print("NumPy not found: .npy seeds not written", file=sys.stderr)
    for h in sorted(os.listdir(CORPUS)):
        print(h, len(os.listdir(os.path.join(CORPUS, h))), "files")


if __name__ == "__main__":
    main()
