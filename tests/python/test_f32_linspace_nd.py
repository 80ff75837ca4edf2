"""float32 coordinates on even axes: gpuhist.histogramdd, histogram2d, HistogramDD and
gpuhist.dask.histogramdd against the installed NumPy, bit for bit, and the library spec each
axis gets (every backend built here, and device fills where CuPy or torch is); gpuhist.Histogram
against its float64 edges.

numpy.histogramdd builds an axis's edges as np.linspace over the range or the data's min and
max, with no dtype: NumPy 2 computes it in float32 when both ends are float32 (no range, or a
range of np.float32 scalars, or one np.float32 end and a Python float), NumPy 1.x and a range of
Python floats in float64. An axis whose NumPy edges are float32 must be the library's
float32_linspace (the fast even bins); float64 edges that are all float32 values must be even
bins, any other float64 edges explicit edges. The samples are every edge and the floats 3 ulps
either side of it on every axis, the range's ends and random values (seed GPUHIST_TEST_SEED).
"""

from __future__ import annotations

from typing import Any, List, Optional

import numpy as np
import pytest

import gpuhist
from conftest import same_bits
from gpuhist import _nd, _plan
from test_f32_linspace import around_edges

GIVEN = ["auto", "python floats", "float32 scalars", "float32 low, python float high"]


def f32_values(e: np.ndarray) -> bool:
    e = np.asarray(e, np.float64)
    with np.errstate(over="ignore"):
        return bool(np.array_equal(e.astype(np.float32), e))


def want_kind(numpy_edges: np.ndarray) -> int:
    """The spec an axis with these NumPy edges must get for float32 coordinates."""
    if numpy_edges.dtype == np.float32:
        return _plan.KIND_EVEN_F32_LINSPACE
    return _plan.KIND_EVEN if f32_values(numpy_edges) else _plan.KIND_EDGES


def random_axis(rng: np.random.Generator, big: bool) -> tuple:
    """A float32 range (lo < hi, a random scale and offset) and a bin count (up to 70000 when
    big, else up to 256)."""
    scale = 10.0 ** rng.uniform(-6, 6)
    lo = np.float32(rng.uniform(-1, 1) * scale * rng.choice([0.0, 1.0, 100.0]))
    hi = np.float32(lo + np.float32(rng.uniform(0.01, 2) * scale))
    choices = [1, 2, 3, 7, 10, 64, 100, 255, 256]
    if big:
        choices += [1000, 4097, 70000, int(rng.integers(1, 70001))]
    return lo, hi, int(rng.choice(choices))


def range_arg(given: str, lo: np.float32, hi: np.float32) -> Any:
    if given == "auto":
        return None
    if given == "python floats":
        return (float(lo), float(hi))
    if given == "float32 scalars":
        return (lo, hi)
    return (lo, float(hi))


def points_around(rng: np.random.Generator, edges: List[np.ndarray], axes: list,
                  auto: bool) -> np.ndarray:
    """(N, D) float32 points whose column i holds every edge of axis i with 3 ulps either side,
    the range's ends and random values, in random order (clipped into the range when the range
    is the data's: then its min and max are the range's ends)."""
    cols = []
    for e, (lo, hi, _) in zip(edges, axes):
        body = rng.uniform(float(lo), float(hi), 500).astype(np.float32)
        cols.append(np.concatenate([[lo, hi], around_edges(e), body]).astype(np.float32))
    n = max(c.size for c in cols)
    out = np.empty((n, len(cols)), np.float32)
    for i, (c, (lo, hi, _)) in enumerate(zip(cols, axes)):
        c = np.resize(rng.permutation(c), n)
        c[:2] = lo, hi  # (a permutation may have repeated a part without the ends)
        out[:, i] = np.clip(c, lo, hi) if auto else c
    return out


def numpy_edges(axes: list, rng_arg: Any) -> List[np.ndarray]:
    """numpy.histogramdd's edges for data whose min and max are the axes' lo and hi."""
    ends = np.array([[a[0] for a in axes], [a[1] for a in axes]], np.float32)
    return np.histogramdd(ends, [a[2] for a in axes], range=rng_arg)[1]


def random_case(rng: np.random.Generator, given: str) -> Optional[tuple]:
    """Two random axes (the first of many bins) with the range as `given`, NumPy's edges and the
    points around them: (bins, rng_arg, want_edges, x), or None when NumPy's edges repeat."""
    axes = [random_axis(rng, big=(i == 0)) for i in range(2)]
    rng_arg = [range_arg(given, a[0], a[1]) for a in axes]
    want_edges = numpy_edges(axes, rng_arg)
    if any(np.any(e[:-1] >= e[1:]) for e in want_edges):
        return None
    x = points_around(rng, want_edges, axes, False)
    return [a[2] for a in axes], rng_arg, want_edges, x


@pytest.fixture
def spec_log(monkeypatch: pytest.MonkeyPatch) -> list:
    """The (kind, ...) spec of every axis that gpuhist.histogramdd passes to the library."""
    log: list = []
    real = _nd._axis_spec

    def logged(*args: Any, **kwargs: Any) -> tuple:
        spec = real(*args, **kwargs)
        log.append(spec)
        return spec
    monkeypatch.setattr(_nd, "_axis_spec", logged)
    return log


def check_kinds(specs: list, edges: List[np.ndarray]) -> None:
    got = [s[0] for s in specs]
    want = [want_kind(e) for e in edges]
    assert got == want, (got, want, [e.dtype for e in edges])


@pytest.mark.parametrize("given", GIVEN)
@pytest.mark.parametrize("D", [1, 2, 3])
def test_histogramdd_f32_axes_match_numpy(rng: np.random.Generator, spec_log: list,
                                          given: str, D: int) -> None:
    kinds = set()
    for case in range(24 if D < 3 else 12):
        # one axis may have many bins, the others few (joint bins stay small)
        axes = [random_axis(rng, big=(i == 0 and D < 3)) for i in range(D)]
        rng_arg = None if given == "auto" else [range_arg(given, a[0], a[1]) for a in axes]
        want_edges = numpy_edges(axes, rng_arg)
        if any(np.any(e[:-1] >= e[1:]) for e in want_edges):
            continue  # edges that repeat a value: refused by the package (docs/PYTHON.md)
        x = points_around(rng, want_edges, axes, given == "auto")
        density = case % 4 == 3
        want = np.histogramdd(x, [a[2] for a in axes], range=rng_arg, density=density)
        spec_log.clear()
        H, edges = gpuhist.histogramdd(x, [a[2] for a in axes], range=rng_arg,
                                       density=density)
        same_bits(H, want[0])
        assert len(edges) == D
        for got_e, want_e in zip(edges, want[1]):
            same_bits(got_e, want_e)
        check_kinds(spec_log, want[1])
        kinds.update(s[0] for s in spec_log)
    f32_linspace = _plan.NUMPY_2 and given != "python floats"
    assert (_plan.KIND_EVEN_F32_LINSPACE in kinds) == f32_linspace, kinds
    if f32_linspace:
        assert kinds == {_plan.KIND_EVEN_F32_LINSPACE}, kinds


@pytest.mark.parametrize("given", GIVEN)
def test_histogram2d_f32_match_numpy(rng: np.random.Generator, spec_log: list,
                                     given: str) -> None:
    for case in range(16):
        axes = [random_axis(rng, big=(i == case % 2)) for i in range(2)]
        rng_arg = None if given == "auto" else [range_arg(given, a[0], a[1]) for a in axes]
        want_edges = numpy_edges(axes, rng_arg)
        if any(np.any(e[:-1] >= e[1:]) for e in want_edges):
            continue
        x = points_around(rng, want_edges, axes, given == "auto")
        bins = [axes[0][2], axes[1][2]]
        w = rng.integers(-4, 5, x.shape[0]).astype(np.float64) / 4 if case % 3 == 1 else None
        want = np.histogram2d(x[:, 0], x[:, 1], bins, range=rng_arg, weights=w)
        spec_log.clear()
        got = gpuhist.histogram2d(x[:, 0], x[:, 1], bins, range=rng_arg, weights=w)
        for g, want_part in zip(got, want):
            same_bits(g, want_part)
        check_kinds(spec_log, want[1:])


def test_histogramdd_f32_constant_axes(spec_log: list) -> None:
    # min == max on an axis: NumPy widens it by 0.5 (in float32 under NumPy 2)
    for v in (np.float32(0.1), np.float32(-3.75), np.float32(1e6 + 0.25)):
        x = np.stack([np.full(9, v, np.float32),
                      np.linspace(-1, 1, 9).astype(np.float32)], axis=1)
        for bins in (1, 3, 10):
            spec_log.clear()
            want = np.histogramdd(x, bins)
            got = gpuhist.histogramdd(x, bins)
            same_bits(got[0], want[0])
            for g, e in zip(got[1], want[1]):
                same_bits(g, e)
            check_kinds(spec_log, want[1])


def test_histogramdd_f32_linspace_needs_f32_samples(spec_log: list) -> None:
    # float32 edges (NumPy 2, a range of float32 scalars) with float64 coordinates: the float32
    # linspace is the library's edges of f32 samples only, so float64 ones take the edges
    r = [(np.float32(0.1), np.float32(0.7))]
    for dt in (np.float64, np.float32):
        x = np.linspace(0.05, 0.75, 301).astype(dt)[:, None]
        x = np.concatenate([x, np.float32(0.7)[None, None].astype(dt)])
        spec_log.clear()
        want = np.histogramdd(x, 10, range=r)
        got = gpuhist.histogramdd(x, 10, range=r)
        same_bits(got[0], want[0])
        same_bits(got[1][0], want[1][0])
        kind = spec_log[0][0]
        if dt == np.float32:
            assert kind == want_kind(want[1][0])
        elif want[1][0].dtype == np.float32:
            assert kind == _plan.KIND_EDGES  # (not 0.1 and 0.7 in double, rounded)


@pytest.mark.parametrize("given", GIVEN[1:])
def test_histogramdd_class_f32_axes(rng: np.random.Generator, given: str) -> None:
    """HistogramDD's edges are numpy.histogramdd's over the ranges as given; its f32 fills use
    the same specs as gpuhist.histogramdd, and f64 fills of the same points count the same."""
    kinds = set()
    for _ in range(16):
        case = random_case(rng, given)
        if case is None:
            continue
        bins, rng_arg, want_edges, x = case
        want, _ = np.histogramdd(x, bins, range=rng_arg)
        h = gpuhist.HistogramDD(bins, range=rng_arg)
        h.fill(x[:, 0], x[:, 1])
        for got_e, want_e in zip(h.edges, want_edges):
            same_bits(got_e, want_e.astype(np.float64))
        same_bits(h.entries, want.astype(np.int64))
        specs = h._accs[("host", "float32", None)].specs
        check_kinds(specs, want_edges)
        kinds.update(s[0] for s in specs)
        h.fill(x.astype(np.float64))
        same_bits(h.entries, 2 * want.astype(np.int64))
    f32_linspace = _plan.NUMPY_2 and given != "python floats"
    assert (_plan.KIND_EVEN_F32_LINSPACE in kinds) == f32_linspace, kinds


@pytest.mark.parametrize("given", GIVEN)
def test_histogram_class_f32_float64_edges(rng: np.random.Generator, given: str) -> None:
    """gpuhist.Histogram keeps float64 edges, np.linspace over the range (or the first fill's
    min and max) as Python floats, for every sample dtype: float32 fills equal np.histogram of
    their float64 values. Its plan for f32 samples is even bins exactly when those edges are
    float32 values (the library's float32 linspace matches no other float64 linspace)."""
    for _ in range(30):
        lo, hi, bins = random_axis(rng, big=True)
        rng_arg = range_arg(given, lo, hi)
        edges = np.linspace(float(lo), float(hi), bins + 1)
        if np.any(edges[:-1] >= edges[1:]):
            continue
        x = points_around(rng, [edges], [(lo, hi, bins)], given == "auto")[:, 0]
        h = gpuhist.Histogram(bins, rng_arg)
        h.fill(x)
        want = np.histogram(x.astype(np.float64), bins, (float(lo), float(hi)))
        same_bits(h.edges, want[1])
        same_bits(h.entries, want[0].astype(np.int64))
        plan = h._plan("f32")
        assert plan.kind == (_plan.KIND_EVEN if f32_values(edges) else _plan.KIND_EDGES)


def test_histogram_class_f32_crowded_range() -> None:
    # 100 float64 edges over 8 float32 steps: rounded to float32 they repeat (the library
    # refuses those even bins), so f32 fills take the float64 edges themselves
    lo, hi = 1.0, 1.0 + 2.0**-20
    edges = np.linspace(lo, hi, 101)
    x = around_edges(np.array([lo, hi]))
    x = np.concatenate([x, np.arange(1.0, 1.0 + 2.0**-20, 2.0**-23, dtype=np.float32)])
    h = gpuhist.Histogram(100, (lo, hi)).fill(x.astype(np.float32))
    same_bits(h.edges, edges)
    same_bits(h.entries, np.histogram(x.astype(np.float64), 100, (lo, hi))[0].astype(np.int64))
    assert h._plan("f32").kind == _plan.KIND_EDGES


@pytest.mark.parametrize("given", GIVEN[1:])
def test_dask_histogramdd_f32_ranges(rng: np.random.Generator, spec_log: list,
                                     given: str) -> None:
    """gpuhist.dask.histogramdd: NumPy's counts and edges; its chunks, weighted or not, are
    planned as gpuhist.histogramdd plans them (skips without dask)."""
    da = pytest.importorskip("dask.array")
    import gpuhist.dask as gd  # noqa: PLC0415

    for k in range(6):
        case = random_case(rng, given)
        if case is None:
            continue
        bins, rng_arg, _, x = case
        # dyadic weights: NumPy's sums in array order are exact too
        w = rng.integers(-4, 5, x.shape[0]).astype(np.float64) / 4 if k % 2 else None
        want = np.histogramdd(x, bins, range=rng_arg, weights=w)
        chunks = x.shape[0] // 3 + 1
        spec_log.clear()
        hist, edges = gd.histogramdd(da.from_array(x, chunks=(chunks, 2)), bins, range=rng_arg,
                                     weights=None if w is None else da.from_array(w, chunks))
        same_bits(hist.compute(), want[0])
        for got_e, want_e in zip(edges, want[1]):
            same_bits(got_e, want_e)
        assert spec_log, "no chunk was counted through _nd._axis_spec"
        for i in range(0, len(spec_log), 2):
            check_kinds(spec_log[i:i + 2], want[1])


def test_f32_linspace_axes_on_each_backend(rng: np.random.Generator, backend: str) -> None:
    """The float32-linspace axes counted by each backend built here (host points): joint bins
    within a device's fused count and beyond it, NumPy's counts."""
    for shape in ((5, 7), (600, 400), (3, 4, 5)):
        for given in ("auto", "float32 scalars"):
            axes = []
            for n in shape:
                lo, hi, _ = random_axis(rng, big=False)
                axes.append((lo, hi, n))
            rng_arg = None if given == "auto" else [range_arg(given, a[0], a[1]) for a in axes]
            want_edges = numpy_edges(axes, rng_arg)
            if any(np.any(e[:-1] >= e[1:]) for e in want_edges):
                continue
            x = points_around(rng, want_edges, axes, given == "auto")
            want = np.histogramdd(x, list(shape), range=rng_arg)
            got = gpuhist.histogramdd(x, list(shape), range=rng_arg, backend=backend)
            same_bits(got[0], want[0])


def test_histogramdd_class_f32_linspace_device_fills(rng: np.random.Generator) -> None:
    """HistogramDD fills of CuPy arrays / torch CUDA tensors with float32-scalar ranges (the
    float32 linspace under NumPy 2) equal numpy.histogramdd (skips without a device library)."""
    from test_device import _device_libs  # noqa: PLC0415

    for name, to_dev, sync, _ in _device_libs():
        for shape in ((5, 6, 7), (600, 400)):
            axes = []
            for n in shape:
                lo, hi, _ = random_axis(rng, big=False)
                axes.append((lo, hi, n))
            rng_arg = [(a[0], a[1]) for a in axes]
            want_edges = numpy_edges(axes, rng_arg)
            if any(np.any(e[:-1] >= e[1:]) for e in want_edges):
                continue
            x = points_around(rng, want_edges, axes, False)
            h = gpuhist.HistogramDD(list(shape), rng_arg)
            h.fill(to_dev(np.ascontiguousarray(x)))
            h.fill(*[to_dev(np.ascontiguousarray(x[:, k])) for k in range(len(shape))])
            sync()
            want, _ = np.histogramdd(x, list(shape), range=rng_arg)
            same_bits(h.entries, 2 * want.astype(np.int64))
            specs = next(acc.specs for key, acc in h._accs.items() if key[0] == name)
            check_kinds(specs, want_edges)
            print(f"{name} {shape}: strategy {h.strategy}, kinds {[s[0] for s in specs]}")
