"""float32 data binned by a number of bins: gpuhist.histogram against the installed NumPy, bit for
bit, and the plan it makes.

Without a range NumPy 2 computes the edges as np.linspace of the float32 min and max in float32
(NEP 50), NumPy 1.x in float64 then rounded to float32; a range of Python floats gives the float64
linspace in both, a range of np.float32 scalars the float32 one under NumPy 2. The package plans
each as fast even bins (the library's float32_linspace, or its double edges rounded), not as
explicit edges, and must count as NumPy does: the samples are every edge and its neighbours 3
float ulps either way, the data's min and max, and random values (seed GPUHIST_TEST_SEED).
"""

from __future__ import annotations

import numpy as np
import pytest

import gpuhist
from conftest import same_bits
from gpuhist import _plan


def around_edges(edges: np.ndarray) -> np.ndarray:
    """Every edge and the floats 1 to 3 ulps either side of it."""
    e = edges.astype(np.float32)
    out = [e]
    up, down = e.copy(), e.copy()
    for _ in range(3):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def random_case(rng: np.random.Generator) -> tuple:
    """A float32 range (lo < hi, a random scale and offset) and a bin count up to 70000."""
    scale = 10.0 ** rng.uniform(-6, 6)
    lo = np.float32(rng.uniform(-1, 1) * scale * rng.choice([0.0, 1.0, 100.0]))
    hi = np.float32(lo + np.float32(rng.uniform(0.01, 2) * scale))
    bins = int(rng.choice([1, 2, 3, 7, 10, 64, 100, 255, 256, 1000, 4097, 70000,
                           int(rng.integers(1, 70001))]))
    return lo, hi, bins


def numpy_or_error(a: np.ndarray, bins: int, range=None):
    try:
        return np.histogram(a, bins, range=range)
    except ValueError as exc:  # too many bins for the range (NumPy 2)
        return exc


@pytest.mark.parametrize("given", ["auto", "python floats", "float32 scalars"])
def test_f32_even_bins_match_numpy(rng: np.random.Generator, given: str) -> None:
    kinds = {}
    for _ in range(60):
        lo, hi, bins = random_case(rng)
        rng_arg = None if given == "auto" else \
            (float(lo), float(hi)) if given == "python floats" else (lo, hi)
        try:
            want_edges = np.histogram_bin_edges(np.array([lo, hi], np.float32), bins,
                                                range=rng_arg)
        except ValueError:  # too many bins for the range (NumPy 2)
            continue
        if np.any(want_edges[:-1] >= want_edges[1:]):
            continue  # NumPy 2 refuses these (and NumPy 1.x bins with them); not this test's
        body = rng.uniform(float(lo), float(hi), 2000).astype(np.float32)
        a = np.concatenate([[lo, hi], around_edges(want_edges), body]).astype(np.float32)
        if rng_arg is None:  # the data's min and max are the range
            a = a[(a >= lo) & (a <= hi)]
        want = numpy_or_error(a, bins, rng_arg)
        if isinstance(want, Exception):
            with pytest.raises(ValueError):
                gpuhist.histogram(a, bins, range=rng_arg)
            continue
        counts, edges = gpuhist.histogram(a, bins, range=rng_arg)
        same_bits(counts, want[0])
        same_bits(edges, want[1])
        plan = _plan.plan_bins(bins, rng_arg, a.dtype, a.size, False,
                               lambda: (a.min(), a.max()))
        kinds[plan.kind] = kinds.get(plan.kind, 0) + 1
    # every case is planned as even bins (the fast path): the float32 linspace where NumPy 2
    # computes in float32, the double edges elsewhere
    f32_linspace = _plan.NUMPY_2 and given != "python floats"
    want_kind = _plan.KIND_EVEN_F32_LINSPACE if f32_linspace else _plan.KIND_EVEN
    assert set(kinds) == {want_kind}, kinds


def test_f32_auto_range_constant_and_outliers() -> None:
    # min == max: widened by 0.5 (in float32 under NumPy 2); NaN and inf: NumPy refuses the
    # automatic range, and so does the package
    for v in (np.float32(0.1), np.float32(-3.75), np.float32(1e6 + 0.25)):
        a = np.full(5, v, np.float32)
        for bins in (1, 3, 10):
            counts, edges = gpuhist.histogram(a, bins)
            want = np.histogram(a, bins)
            same_bits(counts, want[0])
            same_bits(edges, want[1])
    a = np.array([0.0, 1.0, np.nan], np.float32)
    with pytest.raises(ValueError):
        np.histogram(a, 4)
    with pytest.raises(ValueError):
        gpuhist.histogram(a, 4)
