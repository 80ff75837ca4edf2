"""gpuhist.histogram and gpuhist.histogram_bin_edges against NumPy, bit for bit.

Every dtype x bins (a number, edges) x range (automatic, given) x data (random, on the edges,
constant, with NaN/inf, type extremes) x layout (contiguous, strided, transposed, reversed,
byte-swapped, broadcast, 0-d); NumPy's errors with NumPy's messages; the backends built here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpuhist
from conftest import same_bits

INT_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64]
FLOAT_TYPES = [np.float32, np.float64]
ALL_TYPES = INT_TYPES + FLOAT_TYPES


def sample(rng: np.random.Generator, dtype: type, n: int) -> np.ndarray:
    """Random values of dtype: the whole range of small types, +-1e6 (ints) or a wide spread
    (floats) otherwise, with a few repeats and extremes."""
    dt = np.dtype(dtype)
    if dt.kind in "ui":
        info = np.iinfo(dt)
        lo, hi = (info.min, info.max) if dt.itemsize <= 2 else (max(info.min, -10**6), 10**6)
        a = rng.integers(lo, hi, n, endpoint=True, dtype=dt)
        if n > 4:
            a[:2] = (lo, hi)
        return a
    a = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e6], n)).astype(dt)
    if n > 4:
        a[1] = a[0]  # a repeat
        a[2] = -0.0
    return a


def check(a, bins, range=None, **kw) -> None:
    """gpuhist.histogram == np.histogram bit for bit, or the same error and message."""
    try:
        want = np.histogram(a, bins, range, **{k: v for k, v in kw.items()
                                               if k in ("density", "weights")})
    except ValueError as e:
        with pytest.raises(ValueError) as got_e:
            gpuhist.histogram(a, bins, range, **kw)
        assert str(got_e.value) == str(e)
        return
    if isinstance(bins, int) and np.any(want[1][:-1] >= want[1][1:]):
        # NumPy 1 counts with edges that do not increase; gpuhist raises NumPy 2's error
        with pytest.raises(ValueError, match="Too many bins for data range"):
            gpuhist.histogram(a, bins, range, **kw)
        return
    got = gpuhist.histogram(a, bins, range, **kw)
    same_bits(got[0], want[0])
    same_bits(got[1], want[1])
    same_bits(gpuhist.histogram_bin_edges(a, bins, range, backend=kw.get("backend", "auto")),
              np.histogram_bin_edges(a, bins, range))


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("bins", [1, 7, 256, 1000])
def test_even_bins_auto_range(rng, dtype, bins):
    for n in (0, 1, 17, 10_000):
        check(sample(rng, dtype, n), bins)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_even_bins_given_range(rng, dtype):
    a = sample(rng, dtype, 20_000)
    lo, hi = float(np.min(a)), float(np.max(a))
    mid = (lo + hi) / 2
    for range in [(lo, hi), (lo, mid), (mid, hi + 1), (0, 100), (-3.5, 2.25), (5, 5)]:
        for bins in (1, 10, 33, 4096):
            check(a, bins, range)
    # ranges as NumPy scalars and ints steer NumPy's edge dtype: the same here
    check(a, 10, (np.float32(-1.5), np.float32(100.25)))
    check(a, 10, (np.float64(-1.5), np.float64(100.25)))
    check(a, 10, (np.int16(-7), np.int16(300)))


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_samples_on_the_edges(rng, dtype):
    """Samples equal to every edge (and one step either side) land where NumPy puts them."""
    for bins, range in [(10, (0, 100)), (256, (-1, 255)), (7, (0.1, 0.7)), (1000, (-3, 3))]:
        edges = np.histogram_bin_edges(np.zeros(1, dtype), bins, range)
        vals = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)])
        if np.dtype(dtype).kind in "ui":
            info = np.iinfo(dtype)
            vals = np.round(vals)
            vals = vals[(vals >= info.min) & (vals <= info.max)]
        with np.errstate(over="ignore", invalid="ignore"):
            a = vals.astype(dtype)
        check(np.concatenate([a, sample(rng, dtype, 100)]), bins, range)


@pytest.mark.parametrize("dtype", FLOAT_TYPES, ids=lambda t: np.dtype(t).name)
def test_nan_and_inf(rng, dtype):
    a = sample(rng, dtype, 5000)
    a[::7] = np.nan
    a[::11] = np.inf
    a[::13] = -np.inf
    check(a, 20, (-1, 1))
    check(a, [-np.inf, -1, 0, 1, np.inf])
    # an automatic range over NaN or inf: NumPy's error and message
    for bad in (np.nan, np.inf, -np.inf):
        b = sample(rng, dtype, 100)
        b[5] = bad
        with pytest.raises(ValueError) as want:
            np.histogram(b, 10)
        with pytest.raises(ValueError) as got:
            gpuhist.histogram(b, 10)
        assert str(got.value) == str(want.value)
        with pytest.raises(ValueError):
            gpuhist.histogram_bin_edges(b, 10)
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        gpuhist.histogram(np.full(10, np.nan, dtype), 3)


def test_constant_and_extreme_data():
    for dtype in ALL_TYPES:
        for v in (0, 1, 100):
            check(np.full(1000, v, dtype), 10)
    for dtype in INT_TYPES:
        info = np.iinfo(dtype)
        a = np.array([info.min, info.max, info.min, 0 if info.min == 0 else -1], dtype)
        if np.dtype(dtype).itemsize < 8:
            check(a, 5)
            check(a, 256, (float(info.min), float(info.max)))
    # 64-bit integers up to 2^53 compare exactly in NumPy too
    a = np.array([2**53 - 1, 2**53, -(2**53), 12345], dtype=np.int64)
    check(a, 8)
    check(a, [-(2**53), 0, 2**52, 2**53])
    for v in (1e-300, -1.7e308, 1.7e308, 3.4e38):
        check(np.array([v, v / 2, 0.0]), 4)
    check(np.array([1e-40, 0.0], np.float32), 3)


def test_subnormal_range_where_numpy_fails():
    """NumPy's bin scale overflows over a subnormal range (an IndexError inside NumPy); the
    library's exact rule still bins every sample where its edges say."""
    a = np.array([1e-310, 5e-311, 0.0, 3e-311, 7e-311])
    hist, edges = gpuhist.histogram(a, 4)
    same_bits(edges, np.histogram_bin_edges(a, 4))
    slot = np.searchsorted(edges, a, side="right") - 1
    slot[a == edges[-1]] = 3
    assert np.array_equal(hist, np.bincount(slot, minlength=4))


def test_too_many_bins_for_the_range():
    """Edges that do not increase (bins crowded into a subnormal range) raise NumPy 2's
    ValueError; NumPy 1 counted with them (a documented difference)."""
    for a, bins in [(np.array([0.0, 5e-324]), 4), (np.array([1e-45, 0.0], np.float32), 3)]:
        with pytest.raises(ValueError, match="Too many bins for data range"):
            gpuhist.histogram(a, bins)
        if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
            with pytest.raises(ValueError, match="Too many bins for data range"):
                np.histogram(a, bins)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_explicit_edges(rng, dtype):
    a = sample(rng, dtype, 10_000)
    lo, hi = float(np.min(a)), float(np.max(a))
    edge_sets = [
        np.linspace(lo, hi, 50),
        np.sort(rng.uniform(lo, hi, 30)),
        np.array([lo, (lo + hi) / 2, hi]),
        [0, 1, 2, 3, 10, 100],  # ints
        np.array([-1.5, 0.25, 7.75], np.float32),
        np.array([0, 0, 1, 1, 2, 2]),  # repeated edges: empty bins, NumPy's last-bin rule
        np.array([lo, lo]),  # one empty-width bin holding x == lo
        np.array([-np.inf, 0, np.inf]),
        np.array([-np.inf, -np.inf, 10]),
        np.array([-5, 3, np.inf]),
        np.array([-np.inf, np.inf]),
        [5.0],  # one edge: an empty histogram
        [],
    ]
    for e in edge_sets:
        check(a, e)


def test_layouts(rng):
    """Strided, transposed, reversed, byte-swapped and broadcast arrays: counted in place, as
    rows, or through bounded buffers - always NumPy's counts."""
    base = rng.standard_normal((64, 300)).astype(np.float32)
    views = {
        "contiguous 2-D": base,
        "rows [::2]": base[::2],
        "row slice [:, 10:290]": base[:, 10:290],
        "short rows [:, :5]": base[:, :5],
        "transposed": base.T,
        "reversed": base[::-1, ::-1],
        "every 3rd": base.ravel()[::3],
        "every 3rd reversed": base.ravel()[::-3],
        "fortran": np.asfortranarray(base),
        "byte-swapped": base.astype(">f4"),
        "byte-swapped strided": base.astype(">f4")[::3, 1::2],
        "broadcast": np.broadcast_to(base[0], (50, 300)),
        "0-d": np.float32(0.5) * np.ones((), np.float32),
        "3-D sliced": base.reshape(8, 8, 300)[:, ::3, ::2],
        "unaligned": np.frombuffer(b"\0" + base.tobytes(), np.float32, count=1000, offset=1),
    }
    for name, v in views.items():
        for bins, range in [(16, (-2, 2)), (16, None), ([-3, -1, 0, 0.5, 2], None)]:
            got = gpuhist.histogram(v, bins, range)
            want = np.histogram(v, bins, range)
            assert np.array_equal(got[0], want[0]), name
            same_bits(got[1], want[1])
    for dt in (">i2", ">u4", ">i8", ">f8", "<f8"):
        a = (rng.standard_normal(5000) * 1000).astype(dt)
        check(a, 30)
        check(a[::-2], 30, (-500, 500))


def test_random_requests(rng):
    """Random dtype x bins (number, sorted edges, rule) x range x layout x weights, 150 times."""
    layouts = [lambda v: v, lambda v: v[::2], lambda v: v[::-1],
               lambda v: v.astype(v.dtype.newbyteorder()), lambda v: v.reshape(-1, 10)[:, 2:]]
    for trial in range(150):
        dtype = ALL_TYPES[rng.integers(len(ALL_TYPES))]
        n = int(rng.choice([0, 1, 10, 1000, 20_000]))
        n -= n % 10
        a = layouts[rng.integers(len(layouts))](sample(rng, dtype, n))
        lo, hi = (float(np.min(a)), float(np.max(a))) if a.size else (0.0, 1.0)
        kind = rng.integers(3)
        if kind == 0:
            bins = int(rng.integers(1, 3000))
        elif kind == 1:
            bins = np.sort(rng.uniform(lo - 1, hi + 1, int(rng.integers(2, 60))))
        else:
            bins = str(rng.choice(["sqrt", "rice", "sturges"]))  # counts from n alone
        span = None if kind == 1 or rng.random() < 0.5 else \
            tuple(sorted(rng.uniform(lo - 1, hi + 1, 2)))
        w = rng.random(a.shape) if kind != 2 and rng.random() < 0.3 else None
        if w is None:
            check(a, bins, span)
            continue
        want = np.histogram(a, bins, span, weights=w)
        got = gpuhist.histogram(a, bins, span, weights=w)
        same_bits(got[1], want[1])
        assert np.allclose(got[0], want[0], rtol=1e-12, atol=1e-12), trial


def test_no_copy_of_contiguous_native_arrays(rng):
    """A contiguous native array and row-strided views reach the library in place: the
    library sees them as one run or as rows (gpuhist._core.layout, the extension's rule)."""
    from gpuhist import _core

    assert _core.layout((1000,), (8,), 8, False) == (0, 1000, 0, 0, 0)
    assert _core.layout((100, 64), (1024, 8), 8, False) == (0, 0, 100, 64, 1024)
    assert _core.layout((64, 100), (8, 512), 8, True) == (0, 6400, 0, 0, 0)  # transposed
    assert _core.layout((64, 100), (8, 512), 8, False) is None  # weighted: C order needed
    assert _core.layout((10,), (-8,), 8, True) == (-72, 10, 0, 0, 0)  # reversed
    assert _core.layout((10,), (24,), 8, True) is None  # strided 1-D: buffers
    assert _core.layout((50, 300), (0, 4), 4, True) is None  # broadcast: buffers


def test_bool_and_float16(rng):
    b = rng.random(1000) < 0.3
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = gpuhist.histogram(b, 2)
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = np.histogram(b, 2)
    same_bits(got[0], want[0])
    same_bits(got[1], want[1])
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
    h = (rng.standard_normal(3000) * 10).astype(np.float16)
    check(h, 20)
    check(h, 20, (-5, 5))


RULES = ["auto", "fd", "doane", "rice", "scott", "sqrt", "stone", "sturges"]


@pytest.mark.parametrize("rule", RULES)
def test_bin_rules(rng, rule):
    """Rule names: the library's bin count (gpuhist_bins_rule_numpy, the installed NumPy's
    rules), NumPy's edges. The widths of sturges/doane/auto go through log2/pow, whose last bit
    NumPy's SIMD code may compute otherwise (docs/SEMANTICS.md): there the bin count may differ
    by one, rarely."""
    cases = [
        (rng.standard_normal(5000), None),
        (rng.standard_normal(5000).astype(np.float32), None),
        ((rng.standard_normal(3000) * 50).astype(np.int32), None),
        (rng.integers(0, 256, 4000, dtype=np.uint8), None),
        (rng.standard_normal(5000), (-1.0, 2.0)),
        (rng.random(1000)[::2], (0.25, 0.75)),
        (rng.standard_normal(2000).astype(">f8"), None),
        (np.zeros(0), None),
        (np.full(50, 3.0), None),
    ]
    for a, range in cases:
        want = np.histogram(a, rule, range)
        got = gpuhist.histogram(a, rule, range)
        if rule in ("sturges", "doane", "auto") and got[0].size != want[0].size:
            assert abs(got[0].size - want[0].size) <= 1, (rule, a.dtype, range)
            continue
        same_bits(got[0], want[0])
        same_bits(got[1], want[1])
        same_bits(gpuhist.histogram_bin_edges(a, rule, range),
                  np.histogram_bin_edges(a, rule, range))
    b = rng.standard_normal(100)
    b[3] = np.nan
    with pytest.raises(ValueError, match="autodetected range"):
        gpuhist.histogram(b, rule)  # NumPy raises for NaN without a range: so does gpuhist


def test_bin_rules_follow_installed_numpy(rng):
    """The rule's bin count is the installed NumPy's where NumPy 1.x and 2 differ: integer
    widths below 1 (NumPy 2 widens them to 1), float32 intermediates (rice, scott, stone, and
    without a range the float32 linspace), auto's relaxed fd (NumPy 2: max(fd, sqrt / 2)), and
    np.std summed over more than 8192 values; bit for bit (rules without log2/pow, or whose
    log2 only picks between widths)."""
    ints = np.arange(1000, dtype=np.int32) % 7
    tight = np.concatenate([np.linspace(0, 1e-3, 500), [-100.0, 100.0]])
    f32 = (rng.standard_normal(3000) * 3.3 + 0.7).astype(np.float32)
    big = rng.standard_normal(20000) * 1e3 + 1e7
    cases = [(ints, r, None) for r in ("fd", "rice", "scott", "sqrt", "stone")]
    cases += [(ints, "fd", (0.0, 6.0)), (tight, "auto", None), (tight, "fd", None)]
    cases += [(f32, r, rg) for r in ("rice", "scott", "stone", "sqrt", "fd")
              for rg in (None, (-2.0, 3.0))]
    cases += [(big, "scott", None), (big.astype(np.float32), "scott", None)]
    for a, rule, range in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stone: "may be suboptimal"
            want = np.histogram(a, rule, range)
            got = gpuhist.histogram(a, rule, range)
        same_bits(got[1], want[1])
        same_bits(got[0], want[0])


def test_lists_and_scalars():
    check([1, 2, 2, 3, 5], 4)
    check([[0.5, 1.5], [2.5, 3.5]], [0, 1, 2, 4])
    check(7, 3)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_density(rng, dtype):
    a = sample(rng, dtype, 3000)
    check(a, 17, density=True)
    check(a, [-1000, -1, 0, 1, 1e6], density=True)
    check(a, 5, (0, 1), density=True)
    check(np.zeros(0, dtype), 4, density=True)  # 0/0: NaN, as NumPy


def test_backends_and_strategies(rng, backend):
    """The same counts on every backend built here, and for every strategy of it."""
    a = rng.standard_normal(50_000).astype(np.float32)
    u = rng.integers(0, 256, 50_000, dtype=np.uint8)
    check(a, 100, (-3, 3), backend=backend)
    check(a, [-2, -1, 0, 0.5, 3], backend=backend)
    check(u, 256, (0, 256), backend=backend)
    for s in gpuhist.strategies():
        if s["backend"] != backend:
            continue
        for x, bins, range in [(a, 64, (-3, 3)), (u, 256, (0, 256)), (u, 7, None)]:
            try:
                got = gpuhist.histogram(x, bins, range, strategy=s["name"])
            except gpuhist.GpuhistError as e:  # a forced strategy may refuse a request
                assert e.status == "UNSUPPORTED", (s["name"], e)
                continue
            assert np.array_equal(got[0], np.histogram(x, bins, range)[0]), s["name"]


def test_errors_like_numpy(rng):
    a = rng.random(100)
    cases = [
        dict(bins=0), dict(bins=-3), dict(bins=2.5), dict(bins=[[1, 2], [3, 4]]),
        dict(bins=[3, 2, 1]), dict(bins=5, range=(1, 0)), dict(bins=5, range=(0, np.inf)),
        dict(bins=5, range=(np.nan, 1)), dict(bins="nonsense"),
        dict(bins="auto", weights=np.ones(100)), dict(bins=5, weights=np.ones(99)),
    ]
    for kw in cases:
        with pytest.raises(Exception) as want:
            np.histogram(a, **kw)
        with pytest.raises(Exception) as got:
            gpuhist.histogram(a, **kw)
        assert type(got.value) is type(want.value), kw
        assert str(got.value) == str(want.value), kw


def test_errors_of_the_library_and_binding(rng):
    a = rng.random(100)
    with pytest.raises(ValueError, match="strategy: no strategy named 'nope'"):
        gpuhist.histogram(a, 5, strategy="nope")
    with pytest.raises(ValueError, match="backend"):
        gpuhist.histogram(a, 5, backend="tpu")
    cuda_strategy = next((s["name"] for s in gpuhist.strategies() if s["backend"] == "cuda"),
                         None)
    if cuda_strategy:  # a strategy of another backend than the one asked for
        with pytest.raises(ValueError, match="belongs to the cuda backend"):
            gpuhist.histogram(a, 5, backend="cpu", strategy=cuda_strategy)
    with pytest.raises(TypeError, match="complex128 are not supported"):
        gpuhist.histogram(a.astype(complex), 5)
    with pytest.raises(TypeError, match="object are not supported"):
        gpuhist.histogram(np.array([1, None, 3], dtype=object), 5)
    with pytest.raises(TypeError, match="weights of dtype complex128"):
        gpuhist.histogram(a, 5, weights=a.astype(complex))
    with pytest.raises(MemoryError):
        gpuhist.histogram(a, 2**33)
    with pytest.raises(ValueError, match="Too many bins for data range"):
        gpuhist.histogram(np.array([1.0, np.nextafter(1.0, 2)]), 10)
    with pytest.raises(ValueError, match="not exactly a float64"):
        gpuhist.histogram(np.arange(5), np.array([0, 2**60 + 1], np.int64))
    # a library error keeps its status and message
    from gpuhist import _core

    ctx = _core.Context("cpu")
    with pytest.raises(ValueError, match="edges") as e:
        ctx.histogram(a, 1, 2, 0.0, 0.0, np.array([0.0, 2.0, 1.0]), 0, False, False,
                      np.zeros(2, np.int64))
    assert e.value.status == "INVALID_ARGUMENT"


def test_threads_share_nothing(rng):
    """Calls from several threads at once (each thread has its own library context, the GIL
    is released while counting) give the single-threaded counts."""
    import concurrent.futures

    a = rng.standard_normal(400_000)
    want = np.histogram(a, 100, (-4, 4))[0]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: gpuhist.histogram(a, 100, (-4, 4))[0], range(8)))
    for r in results:
        assert np.array_equal(r, want)


def test_torch_cpu_tensor():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    t = torch.arange(100, dtype=torch.float32)
    check(t.numpy(), 10)
    same_bits(gpuhist.histogram(t, 10)[0], np.histogram(t.numpy(), 10)[0])
