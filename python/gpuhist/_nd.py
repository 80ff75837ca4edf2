"""numpy.histogramdd and numpy.histogram2d on the gpuhist library (gpuhist_histogramdd).

NumPy's rules are resolved here, with NumPy's own functions where they decide a value: the edges
of every axis are exactly numpy.histogramdd's (np.linspace over the range or the data's min and
max, or the given arrays), the last bin of every axis is closed, and the density is computed by
NumPy's expression on an array laid out as NumPy's. The library counts the points, in place when
the sample is C- or Fortran-contiguous. 64-bit integer coordinates are compared as NumPy
compares them (rounded to float64, when that can matter: a float64 copy of the sample is
counted). Differences from NumPy (docs/PYTHON.md): sums of weights are correctly rounded (NumPy
adds in array order), and edges that repeat a value are refused.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _context, _core
from ._api import host_array, samples_for_library

# the library's kinds of bins (gpuhist_bin_kind), as the binding takes them (_plan's KIND_*):
# _F32_LINSPACE is EVEN with float32_linspace (NumPy 2's float32 edges of f32 samples)
_EVEN, _EDGES, _F32_LINSPACE = 0, 1, 3
_MAX_DIMS = 8
_MAX_JOINT_BINS = 2**31
_range = builtins.range  # `range` is a parameter name below, as in NumPy


def _outer_edges(a: np.ndarray, rng: Any) -> Tuple[Any, Any]:
    """numpy.lib.histograms._get_outer_edges: the range, or the data's min and max."""
    if rng is not None:
        first_edge, last_edge = rng
        if first_edge > last_edge:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
            raise ValueError(f"supplied range of [{first_edge}, {last_edge}] is not finite")
    elif a.size == 0:
        first_edge, last_edge = 0, 1
    else:
        first_edge, last_edge = a.min(), a.max()
        if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
            raise ValueError(f"autodetected range of [{first_edge}, {last_edge}] is not finite")
    if first_edge == last_edge:
        first_edge = first_edge - 0.5
        last_edge = last_edge + 0.5
    return first_edge, last_edge


def _edges(sample: np.ndarray, bins: Any, rng: Any) -> Tuple[List[np.ndarray], List[Any]]:
    """numpy.histogramdd's edges of every axis (its checks and messages), and the bins argument
    of each axis."""
    D = sample.shape[1]
    try:
        M = len(bins)
        if M != D:
            # NumPy's message, as the installed NumPy words it (NumPy 1 has a double space)
            np.histogramdd(np.empty((0, D)), bins=[1] * M)
            raise ValueError("The dimension of bins must be equal to the dimension of the "
                             "sample x.")
    except TypeError:
        bins = D * [bins]
    if rng is None:
        rng = (None,) * D
    elif len(rng) != D:
        raise ValueError("range argument must have one entry per dimension")
    edges: List[np.ndarray] = []
    for i in range(D):
        if np.ndim(bins[i]) == 0:
            if bins[i] < 1:
                raise ValueError(f"`bins[{i}]` must be positive, when an integer")
            smin, smax = _outer_edges(sample[:, i], rng[i])
            try:
                n = operator.index(bins[i])
            except TypeError as e:
                raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
            edges.append(np.linspace(smin, smax, n + 1))
        elif np.ndim(bins[i]) == 1:
            e = np.asarray(bins[i])
            if np.any(e[:-1] > e[1:]):
                raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
            edges.append(e)
        else:
            raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
    return edges, list(bins)


def _axis_spec(edges: np.ndarray, i: int, lib_dtype: np.dtype, even: Optional[Tuple[Any, Any]],
               f32_linspace_first: Optional[bool] = None) -> tuple:
    """The library's spec of axis i with exactly these edges, last edge inclusive: even bins
    when the library's even edges for this sample type are these edges bit for bit (faster),
    else the edges themselves.

    even: the (first, last) edge of a linspace axis, None for an array of edges. f32 samples
    have two kinds of even edges, both float32 values: the double linspace rounded (EVEN) and
    NumPy 2's float32 linspace (EVEN with float32_linspace, _F32_LINSPACE); both are tried, the
    float32 linspace first when f32_linspace_first (default: NumPy's edges are float32, i.e.
    NumPy computed them in float32). Edges that are not all float32 values are neither."""
    e = np.asarray(edges, dtype=np.float64)
    if not np.all(np.isfinite(e)):
        raise ValueError(f"gpuhist: bins[{i}]: the edges must be finite")
    if np.any(e[:-1] >= e[1:]):
        raise ValueError(f"gpuhist: bins[{i}]: repeated edges are not supported (the edges "
                         f"must increase strictly)")
    n = e.size - 1
    if even is not None and float(even[0]) < float(even[1]):
        lo, hi = float(even[0]), float(even[1])
        kinds = [_EVEN]
        if lib_dtype == np.float32:
            with np.errstate(over="ignore"):  # (beyond float32: inf, unequal)
                f32_values = np.array_equal(e.astype(np.float32), e)
            if not f32_values:
                kinds = []  # the library's float edges cannot be these
            else:
                if f32_linspace_first is None:
                    f32_linspace_first = np.asarray(edges).dtype == np.float32
                kinds = [_F32_LINSPACE, _EVEN] if f32_linspace_first else \
                    [_EVEN, _F32_LINSPACE]
        for kind in kinds:
            try:
                mine = _core.compute_edges(kind, n, lo, hi, 0, lib_dtype.name)
            except Exception:  # noqa: BLE001 - not representable as these even bins
                continue
            if np.array_equal(mine, e):
                return (kind, n, lo, hi, None, 0, True)
    return (_EDGES, n, 0.0, 0.0, np.ascontiguousarray(e), 0, True)


def _numpy_rounds_int64(dtype: np.dtype, edges: List[np.ndarray]) -> bool:
    """Whether NumPy's float64 comparisons of 64-bit integer coordinates can differ from the
    library's exact ones: some axis's edges are not integers (searchsorted then compares in
    float64) and reach 2^53 in magnitude (below that every integer it meets is a double, and
    a coordinate beyond 2^53 is beyond every edge, rounded or not)."""
    if dtype.kind not in "ui" or dtype.itemsize != 8:
        return False
    for e in edges:
        e = np.asarray(e)
        if e.size and np.result_type(dtype, e.dtype).kind not in "ui" and \
                float(np.max(np.abs(e.astype(np.float64)))) >= 2.0**53:
            return True
    return False


def weight_name(weights: np.ndarray) -> str:
    """The library's type of these weights ('f32' or 'f64', as _count passes them)."""
    if weights.dtype.kind not in "biuf":
        raise TypeError(f"gpuhist: weights of dtype {weights.dtype} are not supported "
                        f"(real numbers only)")
    return "f32" if weights.dtype == np.float32 else "f64"


def _count(sample: np.ndarray, edges: List[np.ndarray], axis_bins: List[Any], joint: int,
           weights: Optional[np.ndarray], backend: str, strategy: Optional[str],
           want_state: bool = False
           ) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray], tuple]:
    """The library's count of host points `sample` (N, D) over NumPy's `edges` (a bin count in
    axis_bins[i]: linspace edges, maybe the library's even bins): (int64 counts of the `joint`
    bins in row-major order, float64 sums with weights, the exact weight state (with
    want_state: weight_state_words(joint, weight_name(weights), False) int64), the call's
    (out, nan, total, strategy, backend, seconds))."""
    D = sample.shape[1]
    lib, _ = samples_for_library(sample, warn=False)
    if not (lib.flags.c_contiguous or lib.flags.f_contiguous) or not lib.dtype.isnative:
        lib = np.ascontiguousarray(lib, dtype=lib.dtype.newbyteorder("="))
    if _numpy_rounds_int64(lib.dtype, edges):
        # NumPy places 64-bit integers among float64 edges in float64 (searchsorted in the
        # common type), where the library would compare them exactly: count the float64
        # values NumPy compares (a copy, as NumPy's own conversion)
        lib = lib.astype(np.float64)
    specs = []
    for i in _range(D):
        even = None
        if np.ndim(axis_bins[i]) == 0:  # linspace edges: maybe the library's even bins
            even = (edges[i][0], edges[i][-1])
        specs.append(_axis_spec(edges[i], i, lib.dtype, even))
    w = None
    state = None
    if weights is not None:
        wname = weight_name(weights)
        wt = np.float32 if wname == "f32" else np.float64
        # C order, native, aligned (a chunk unpickled on a worker may be unaligned)
        w = np.require(weights, np.dtype(wt).newbyteorder("="), ["C", "A"])
        if want_state:
            state = np.empty(_core.weight_state_words(joint, wname, False), np.int64)
    ctx = _context.get(_context.resolve_backend(backend, strategy, w is not None), -1, strategy)
    counts = np.empty(joint, np.int64)
    sums = np.empty(joint, np.float64) if w is not None else None
    tallies = ctx.core.histogramdd(lib, specs, counts, w, sums, state)
    return counts, sums, state, tallies


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Optional[bool] = None,
                weights: Any = None, *, backend: str = "auto", strategy: Optional[str] = None
                ) -> Tuple[np.ndarray, List[np.ndarray]]:
    """Compute the multidimensional histogram of some data: numpy.histogramdd, counted by the
    gpuhist library.

    Parameters and return values are numpy.histogramdd's: `sample` an (N, D) array or a
    sequence of D arrays of N values; `bins` an int, one int or array of edges per axis;
    `range` one (lower, upper) or None per axis; `density`; `weights` N values. Returns (H,
    edges): H a float64 array of shape (bins per axis) (the correctly rounded sums with
    weights), edges a list of each axis's edges, NumPy's arrays bit for bit. D is 1 to 8 and the
    product of the bins at most 2^31. Keyword-only: backend ('auto', 'cpu', 'cuda', 'opencl';
    weighted too) and strategy (a name from
    gpuhist.strategies()). Host arrays only.
    """
    try:
        N, D = sample.shape
    except (AttributeError, ValueError):
        sample = np.atleast_2d(sample).T
        N, D = sample.shape
    sample = host_array(sample)
    if weights is not None:
        weights = np.asarray(weights)
    edges, axis_bins = _edges(sample, bins, range)
    nbin = np.array([e.size + 1 for e in edges], np.intp)
    shape = tuple(int(b) - 2 for b in nbin)
    if D > _MAX_DIMS:
        raise ValueError(f"gpuhist: {D} dimensions; the library counts 1 to {_MAX_DIMS}")
    joint = 1
    for s in shape:
        joint *= max(s, 0)
    if joint > _MAX_JOINT_BINS:
        raise ValueError(f"gpuhist: {' x '.join(map(str, shape))} = {joint} joint bins is too "
                         f"many (at most 2^31)")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != N):
        raise ValueError("The weights and list don't have the same length.")

    if joint == 0:  # an axis of fewer than two edges: nothing to count
        hist = np.zeros(shape, np.float64)
    else:
        counts, sums, _, _ = _count(sample, edges, axis_bins, joint, weights, backend, strategy)
        hist = (counts if sums is None else sums).astype(np.float64, copy=False)
        hist = hist.reshape(shape)

    if density:
        hist = _density(hist, edges)
    return hist, edges


def _density(hist: np.ndarray, edges: List[np.ndarray]) -> np.ndarray:
    """numpy.histogramdd's density of the counts `hist` over `edges`."""
    # NumPy's expression on NumPy's layout (the core of an array with an outlier bin at each
    # end of every axis), so that hist.sum() adds in the same order
    D = len(edges)
    nbin = np.array([e.size + 1 for e in edges], np.intp)
    padded = np.zeros(nbin, np.float64)
    core = D * (slice(1, -1),)
    padded[core] = hist
    hist = padded[core]
    s = hist.sum()
    for i in _range(D):
        dshape = np.ones(D, int)
        dshape[i] = nbin[i] - 2
        hist = hist / np.diff(edges[i]).reshape(dshape)
    hist /= s
    return hist


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,
                density: Optional[bool] = None, weights: Any = None, *, backend: str = "auto",
                strategy: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compute the bi-dimensional histogram of two data samples: numpy.histogram2d, counted by
    the gpuhist library (histogramdd of [x, y]). Returns (H, xedges, yedges) as NumPy does."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        xedges = yedges = np.asarray(bins)
        bins = [xedges, yedges]
    hist, edges = histogramdd([x, y], bins, range, density, weights, backend=backend,
                              strategy=strategy)
    return hist, edges[0], edges[1]


__all__: Sequence[str] = ("histogramdd", "histogram2d")
