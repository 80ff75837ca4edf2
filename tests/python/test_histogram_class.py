"""gpuhist.Histogram: repeated fills accumulate exactly; tallies; weights; UHI's
PlottableHistogram protocol (checked with the uhi package when installed) and conversion to
boost-histogram / hist (when installed)."""

from __future__ import annotations

import numpy as np
import pytest

import gpuhist
from conftest import same_bits


def test_fills_accumulate_like_one_histogram(rng):
    h = gpuhist.Histogram(50, (-2.0, 2.0))
    parts = [rng.standard_normal(n) for n in (0, 1, 1000, 33_333, 5)]
    parts.append(np.array([np.nan, np.inf, -np.inf, 2.0, -2.0, 2.5]))
    for p in parts:
        assert h.fill(p) is h
    a = np.concatenate(parts)
    same_bits(h.values(), np.histogram(a, 50, (-2.0, 2.0))[0])
    same_bits(h.edges, np.histogram_bin_edges(a, 50, (-2.0, 2.0)))
    finite = a[~np.isnan(a)]
    assert h.underflow == np.count_nonzero(finite < -2.0)
    assert h.overflow == np.count_nonzero(finite > 2.0)
    assert h.nan == np.count_nonzero(np.isnan(a))
    assert h.total == a.size
    assert h.strategy and h.backend in ("cpu", "cuda", "opencl") and h.seconds >= 0
    same_bits(h.values(flow=True)[[0, -1]], np.array([h.underflow, h.overflow]))


def test_every_dtype_and_layout_against_float64_edges(rng):
    """Samples of every dtype are compared with the histogram's float64 edges (float32 samples
    too: np.histogram of float64 copies of them is the reference)."""
    h = gpuhist.Histogram(37, (-100.0, 100.0))
    total = []
    for dt in (np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float32,
               np.float64, ">f4", ">i4"):
        x = (rng.standard_normal((40, 50)) * 80).astype(dt)
        for v in (x, x[::2, ::3], x.T):
            h.fill(v)
            total.append(v.astype(np.float64).ravel())
    a = np.concatenate(total)
    same_bits(h.values(), np.histogram(a, 37, (-100.0, 100.0))[0])
    # 0.1-wide bins are not exact in float32: explicit float64 edges are used for f32 samples
    h2 = gpuhist.Histogram(10, (0.0, 1.0))
    x = rng.random(10_000).astype(np.float32)
    x[:11] = np.linspace(0, 1, 11).astype(np.float32)
    h2.fill(x)
    same_bits(h2.values(), np.histogram(x.astype(np.float64), 10, (0.0, 1.0))[0])


def test_range_from_the_first_fill(rng):
    a = rng.standard_normal(1000)
    h = gpuhist.Histogram(20)
    assert h.edges.size == 0
    h.fill(a)
    same_bits(h.values(), np.histogram(a, 20)[0])
    same_bits(h.edges, np.histogram_bin_edges(a, 20))
    h.fill(a * 10)  # the range stays: outliers now
    assert h.total == 2000 and h.underflow + h.overflow > 0
    with pytest.raises(ValueError, match="autodetected range"):
        gpuhist.Histogram(5).fill(np.array([1.0, np.nan]))


def test_explicit_edges_with_infinities(rng):
    edges = [-np.inf, -1.0, 0.0, 0.0, 1.0, np.inf]
    h = gpuhist.Histogram(edges)
    a = np.concatenate([rng.standard_normal(1000) * 3, [np.inf, -np.inf, np.nan]])
    h.fill(a).fill(a[::2])
    both = np.concatenate([a, a[::2]])
    same_bits(h.values(), np.histogram(both, edges)[0])
    assert h.underflow == 0 and h.overflow == 0 and h.nan == np.count_nonzero(np.isnan(both))
    h3 = gpuhist.Histogram([-1.0, 0.5, np.inf])
    h3.fill(a)
    assert h3.underflow == np.count_nonzero(a < -1.0) and h3.overflow == 0
    same_bits(h3.values(), np.histogram(a, [-1.0, 0.5, np.inf])[0])


def test_weighted_fills(rng):
    h = gpuhist.Histogram(8, (0.0, 1.0))
    x1, x2 = rng.random(500), rng.random(700)
    w2 = rng.random(700)
    h.fill(x1)  # unweighted first: weight 1 each
    assert not h.weighted
    h.fill(x2, weights=w2)
    assert h.weighted
    c1 = np.histogram(x1, 8, (0, 1))[0]
    s2 = np.histogram(x2, 8, (0, 1), weights=w2)[0]
    q2 = np.histogram(x2, 8, (0, 1), weights=w2 * w2)[0]
    assert np.allclose(h.values(), c1 + s2, rtol=1e-14)
    assert np.allclose(h.variances(), c1 + q2, rtol=1e-14)
    same_bits(h.entries, c1 + np.histogram(x2, 8, (0, 1))[0])
    eff = h.counts()
    assert np.allclose(eff, h.values() ** 2 / h.variances())
    with pytest.raises(ValueError, match="flow"):
        h.values(flow=True)


def test_add_copy_reset(rng):
    a, b = rng.random(100), rng.random(200)
    ha = gpuhist.Histogram(4, (0, 1)).fill(a)
    hb = gpuhist.Histogram(4, (0, 1)).fill(b)
    hc = ha + hb
    same_bits(hc.values(), np.histogram(np.concatenate([a, b]), 4, (0, 1))[0])
    same_bits(ha.values(), np.histogram(a, 4, (0, 1))[0])  # unchanged
    ha += hb
    same_bits(ha.values(), hc.values())
    with pytest.raises(ValueError, match="same edges"):
        ha += gpuhist.Histogram(5, (0, 1)).fill(a)
    ha.reset()
    assert ha.total == 0 and not ha.values().any()


def test_uhi_protocol(rng):
    h = gpuhist.Histogram(10, (0.0, 5.0)).fill(rng.random(100) * 5)
    assert h.kind == gpuhist.Kind.COUNT and h.kind == "COUNT"
    (axis,) = h.axes
    assert len(axis) == 10 and axis[0] == (0.0, 0.5) and axis[-1] == (4.5, 5.0)
    assert list(axis)[3] == axis[3]
    assert axis.traits.circular is False and axis.traits.discrete is False
    same_bits(axis.edges, h.edges)
    same_bits(h.variances(), h.values().astype(np.float64))
    same_bits(h.counts(), h.values())
    plottable = pytest.importorskip("uhi.typing.plottable", reason="uhi is not installed")
    assert isinstance(h, plottable.PlottableHistogram)
    assert isinstance(axis, plottable.PlottableAxisGeneric)
    assert isinstance(axis.traits, plottable.PlottableTraits)
    from uhi.numpy_plottable import ensure_plottable_histogram

    assert ensure_plottable_histogram(h) is h


def test_uhi_serialization(rng):
    pytest.importorskip("uhi", reason="uhi is not installed")
    h = gpuhist.Histogram(6, (-1.0, 1.0)).fill(rng.standard_normal(300))
    data = h.to_uhi()
    try:
        import uhi.schema

        uhi.schema.validate(data)
    except ImportError as e:  # the validator needs fastjsonschema
        print(f"schema validation skipped: {e}")
    bh = pytest.importorskip("boost_histogram", reason="boost-histogram is not installed")
    back = bh.Histogram(data)
    same_bits(np.asarray(back.values()).astype(np.int64), h.values())


def test_boost_histogram_and_hist_conversion(rng):
    bh = pytest.importorskip("boost_histogram", reason="boost-histogram is not installed")
    x = rng.standard_normal(5000)
    h = gpuhist.Histogram(30, (-3.0, 3.0)).fill(x)
    b = bh.Histogram(h)
    same_bits(np.asarray(b.axes[0].edges), h.edges)
    same_bits(np.asarray(b.values()).astype(np.int64), h.values())
    assert b.values(flow=True)[0] == h.underflow and b.values(flow=True)[-1] == h.overflow
    hw = gpuhist.Histogram(30, (-3.0, 3.0)).fill(x, weights=np.full(x.size, 0.5))
    bw = bh.Histogram(hw)
    assert np.allclose(bw.values(), hw.values()) and np.allclose(bw.variances(), hw.variances())
    hist = pytest.importorskip("hist", reason="hist is not installed")
    hh = hist.Hist(h)
    same_bits(np.asarray(hh.values()).astype(np.int64), h.values())


def test_histogram_errors():
    with pytest.raises(ValueError, match="positive"):
        gpuhist.Histogram(0, (0, 1))
    with pytest.raises(ValueError, match="max must be larger than min"):
        gpuhist.Histogram(5, (1, 0))
    with pytest.raises(ValueError, match="monotonically"):
        gpuhist.Histogram([0, 2, 1])
    with pytest.raises(NotImplementedError):
        gpuhist.Histogram("auto")
    with pytest.raises(ValueError, match="backend"):
        gpuhist.Histogram(5, (0, 1), backend="gpu")
    with pytest.raises(ValueError, match="same shape"):
        gpuhist.Histogram(5, (0, 1)).fill(np.zeros(3), weights=np.zeros(4))


def _fsum_bins(x: np.ndarray, w: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each bin's weights summed exactly and rounded once (math.fsum), NumPy's bins."""
    import math
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == edges[-1]] = edges.size - 2
    keep = (x >= edges[0]) & (x <= edges[-1])
    return np.array([math.fsum(w[keep & (idx == b)].tolist()) for b in range(edges.size - 1)])


@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
def test_weighted_fills_add_exactly(rng, backend, wdtype):
    """Weighted fills add into one exact state: the sums (and sums of squares) of many fills
    are those of one fill over all their samples, bit for bit, each the correctly rounded sum
    (math.fsum) of its weights, with heavy cancellation; counts and tallies (NaN, outliers)
    add up exactly; reading between fills changes nothing."""
    edges = np.linspace(-2.0, 2.0, 41)
    parts_x, parts_w = [], []
    for n in (0, 1, 777, 20_000, 3):
        x = rng.standard_normal(n) * 1.5
        x[: n // 50] = np.nan
        w = (np.where(rng.random(n) < 0.5, 1e12, -1e12) + rng.standard_normal(n)).astype(wdtype)
        parts_x.append(x)
        parts_w.append(w)
    h = gpuhist.Histogram(40, (-2.0, 2.0), backend=backend)
    try:
        for i, (x, w) in enumerate(zip(parts_x, parts_w)):
            h.fill(x, weights=w)
            if i == 2:
                h.values()  # a read between fills
    except gpuhist.GpuhistError as err:
        if err.status == "UNSUPPORTED":
            pytest.skip(f"{backend} does not sum weights here: {err}")
        raise
    x, w = np.concatenate(parts_x), np.concatenate(parts_w)
    one = gpuhist.Histogram(40, (-2.0, 2.0), backend=backend).fill(x, weights=w)
    same_bits(h.values(), one.values())
    same_bits(h.variances(), one.variances())
    w64 = w.astype(np.float64)
    same_bits(h.values(), _fsum_bins(x, w64, edges))
    same_bits(h.variances(), _fsum_bins(x, w64 * w64, edges))
    same_bits(h.entries, np.histogram(x, edges)[0])
    finite = x[~np.isnan(x)]
    assert h.nan == np.count_nonzero(np.isnan(x))
    assert h.underflow == np.count_nonzero(finite < -2.0)
    assert h.overflow == np.count_nonzero(finite > 2.0)
    assert h.total == x.size


def test_fills_of_every_plan_add_exactly(rng):
    """Fills through library plans that map bins 1:1 and through those that do not (repeated
    and infinite edges: extra library bins, clamped ends) add their counts, tallies and exact
    weight sums in the library's bins; mixed sample dtypes and weight types; unweighted fills
    after weighted ones count as weight 1."""
    for edges in ([-np.inf, -1.0, 0.0, 0.0, 1.0, np.inf], [-1.0, 0.5, np.inf],
                  [-3.0, -1.0, 0.25, 2.0]):
        h = gpuhist.Histogram(edges)
        xs, ws = [], []
        for dt, wt in ((np.float64, np.float64), (np.float32, np.float32),
                       (np.float64, np.float32), (np.int32, np.float64)):
            x = (rng.standard_normal(5000) * 2).astype(dt)
            w = rng.standard_normal(5000).astype(wt)
            h.fill(x, weights=w)
            xs.append(x.astype(np.float64))
            ws.append(w.astype(np.float64))
        x, w = np.concatenate(xs), np.concatenate(ws)
        e = np.asarray(edges, float)
        want = np.histogram(x, e, weights=w)[0]
        assert np.allclose(h.values(), want, rtol=1e-12, atol=1e-9)
        same_bits(h.entries, np.histogram(x, e)[0])
        assert h.underflow == np.count_nonzero(x < e[0])
        assert h.overflow == np.count_nonzero(x > e[-1])
        extra = rng.standard_normal(100)
        before = h.values()
        h.fill(extra)
        same_bits(h.values(), before + np.histogram(extra, e)[0])


def test_first_fill_sets_the_range_once(rng):
    """The fill that sets the range counts once; one with NaN raises and leaves nothing."""
    a = rng.standard_normal(1000)
    w = rng.random(1000)
    h = gpuhist.Histogram(16)
    h.fill(a, weights=w)
    same_bits(h.entries, np.histogram(a, 16)[0])
    same_bits(h.values(), _fsum_bins(a, w, np.histogram_bin_edges(a, 16)))
    bad = gpuhist.Histogram(16)
    with pytest.raises(ValueError, match="autodetected range"):
        bad.fill(np.array([1.0, np.nan, 2.0]), weights=np.ones(3))
    assert bad.total == 0 and bad.edges.size == 0 and not bad.weighted
    bad.fill(a)
    same_bits(bad.values(), np.histogram(a, 16)[0])
