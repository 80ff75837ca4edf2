"""gpuhist.HistogramDD: an N-D histogram filled again and again, speaking UHI with several axes.

Fixed float64 edges per axis (numpy.histogramdd's: np.linspace over each axis's range, or the
given arrays; the last bin of every axis closed); every fill is one library call
(gpuhist_histogramdd with gpuhist_nd_result.accumulate) that adds its exact counts, tallies and
weight state into the histogram's totals: int64 joint counts and an exact weight state (the
unrounded sums of the weights and of their squares) per coordinate dtype, memory and weight
type. Reading rounds each state's sums once, so weighted fills give the bits of one fill over
all their points. Unweighted points count as weight 1 once the histogram is weighted.

Device fills (CuPy arrays, torch CUDA tensors, unweighted) add their counts and tallies on the
device, on the caller's stream, without synchronising: one library call per fill, no allocation
after the first (the library's device points are unweighted: a weighted device fill copies its
points and weights to the host and waits). Reading waits for the device and copies the totals.
Limits: the range of every axis is needed up front (no range from the first fill); at most 8
axes and 2^31 joint bins; outliers are dropped and tallied (`out`, `nan`), not kept per axis.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _context, _core, _device
from ._api import _device_context, host_array, samples_for_library
from ._histogram import Axis, Kind
from ._nd import (_MAX_DIMS, _MAX_JOINT_BINS, _axis_spec, _numpy_rounds_int64,
                  weight_name)

_range = builtins.range  # `range` is a parameter name below, as in NumPy
# the tallies of a fill as the library returns them
_OUT, _NAN, _TOTAL, _STRATEGY, _BACKEND, _SECONDS = range(6)


class _AccDD:
    """The totals of the fills of one coordinate dtype into one memory with one weight type:
    joint counts, the tallies (out, nan, total) and, weighted, the exact weight state with
    squares, which the library adds every fill into. On the host NumPy arrays; beside a CuPy
    array or torch tensor, arrays of that library on its device (counts and 4 tallies: nan,
    out, 0, total), whose pointers every fill passes as they are."""

    __slots__ = ("specs", "joint", "res", "wdt", "counts", "stats", "state", "sums", "sq",
                 "counts_ptr", "stats_ptr", "tallies")

    def __init__(self, specs: List[tuple], joint: int, res: Optional[_device.Results],
                 wdt: Optional[str]) -> None:
        self.specs, self.joint, self.res, self.wdt = specs, joint, res, wdt
        make = np.zeros if res is None else res.zeros
        self.counts = make(joint, np.int64)
        self.stats = res.zeros(4, np.int64) if res is not None else None
        self.state = np.zeros(_core.weight_state_words(joint, wdt, True), np.int64) \
            if wdt else None
        self.sums = np.zeros(joint, np.float64) if wdt else None
        self.sq = np.zeros(joint, np.float64) if wdt else None
        self.counts_ptr = self.stats_ptr = None
        if res is not None:
            self.counts_ptr = res.pointer(self.counts)
            self.stats_ptr = res.pointer(self.stats)
        self.tallies = [0, 0, 0]  # out, nan, total (host fills)

    def read(self) -> Tuple[np.ndarray, Tuple[int, int, int], Optional[np.ndarray],
                            Optional[np.ndarray]]:
        """(joint counts, (out, nan, total), sums, sums of squares) on the host, the sums
        rounded once from the exact state (waits for the device)."""
        if self.res is not None:
            self.res.synchronize()
            counts = self.res.to_numpy(self.counts).astype(np.int64)
            nan, out, _, total = (int(v) for v in self.res.to_numpy(self.stats))
            return counts, (out, nan, total), None, None
        tallies = (self.tallies[0], self.tallies[1], self.tallies[2])
        if self.state is None:
            return self.counts.copy(), tallies, None, None
        sums, sq = np.empty(self.joint), np.empty(self.joint)
        _core.weight_state_sums(self.state, self.joint, self.wdt, True, False, sums, sq)
        return self.counts.copy(), tallies, sums, sq


class HistogramDD:
    """An N-D histogram with fixed edges, filled with gpuhist again and again.

    HistogramDD(bins, range=None, *, backend='auto', strategy=None, stream=None)

    bins and range as numpy.histogramdd takes them: bins an int (every axis) or one int or
    array of increasing edges per axis (the number of axes is then len(bins)); range one
    (lower, upper) per axis, needed for every axis given by a number of bins. With bins a
    single int, range gives the number of axes.

    fill(x, y, ..., weight=None): one coordinate array per axis (equal sizes; any shape,
    flattened), or one (N, D) array; weight one value per point.
    """

    def __init__(self, bins: Any = 10, range: Any = None, *, backend: str = "auto",
                 strategy: Optional[str] = None, stream: Any = None) -> None:
        _context.check_backend(backend)
        self._backend, self._strategy, self._stream = backend, strategy, stream
        if isinstance(bins, str):
            raise TypeError("gpuhist.HistogramDD: bins must be a number or one number or edge "
                            "array per axis")
        try:
            per_axis = list(bins)
        except TypeError:
            if range is None:
                raise ValueError("gpuhist.HistogramDD: a number of bins needs a range per "
                                 "axis (range=[(lo, hi), ...]); the edges are fixed up front"
                                 ) from None
            per_axis = [bins] * len(range)
        D = len(per_axis)
        if not 1 <= D <= _MAX_DIMS:
            raise ValueError(f"gpuhist.HistogramDD: {D} axes; 1 to {_MAX_DIMS} are supported")
        if range is None:
            range = [None] * D
        if len(range) != D:
            raise ValueError("range argument must have one entry per dimension")
        edges: List[np.ndarray] = []
        self._even: List[bool] = []
        # per axis: NumPy computed its linspace in float32 (NumPy 2, a range of float32
        # scalars), so f32 coordinates try the library's float32 linspace first
        self._f32_linspace: List[bool] = []
        for i in _range(D):
            b = per_axis[i]
            if np.ndim(b) == 0:
                try:
                    n = operator.index(b)
                except TypeError as e:
                    raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from e
                if n < 1:
                    raise ValueError(f"`bins[{i}]` must be positive, when an integer")
                if range[i] is None:
                    raise ValueError(f"gpuhist.HistogramDD: axis {i} has a number of bins and "
                                     f"no range; give range[{i}] = (lower, upper)")
                lo, hi = range[i]
                if lo > hi:
                    raise ValueError("max must be larger than min in range parameter.")
                if not (np.isfinite(lo) and np.isfinite(hi)):
                    raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
                if lo == hi:
                    lo, hi = lo - 0.5, hi + 0.5
                e = np.linspace(lo, hi, n + 1)
                self._even.append(True)
                self._f32_linspace.append(e.dtype == np.float32)
            elif np.ndim(b) == 1:
                e = np.asarray(b)
                if e.size < 2:
                    raise ValueError(f"`bins[{i}]` needs at least two edges")
                if np.any(e[:-1] > e[1:]):
                    raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an "
                                     f"array")
                self._even.append(False)
                self._f32_linspace.append(False)
            else:
                raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")
            e = np.asarray(e, dtype=np.float64)
            if not np.all(np.isfinite(e)) or np.any(e[:-1] >= e[1:]):
                raise ValueError(f"gpuhist.HistogramDD: bins[{i}]: the edges must be finite "
                                 f"and increase strictly")
            e.setflags(write=False)
            edges.append(e)
        self._edges = edges
        self._shape = tuple(e.size - 1 for e in edges)
        joint = 1
        for s in self._shape:
            joint *= s
        if joint > _MAX_JOINT_BINS:
            raise ValueError(f"gpuhist: {' x '.join(map(str, self._shape))} = {joint} joint "
                             f"bins is too many (at most 2^31)")
        self._joint = joint
        self._specs: Dict[str, List[tuple]] = {}
        self._strategy_used = self._backend_used = ""
        self._seconds = 0.0
        self.reset()

    # ---- set-up ----------------------------------------------------------------------------

    def _specs_for(self, dtype: np.dtype) -> List[tuple]:
        """The library's spec of every axis for coordinates of `dtype` (even bins where the
        library's even edges are these edges bit for bit, else the edges)."""
        specs = self._specs.get(dtype.name)
        if specs is None:
            specs = [_axis_spec(e, i, dtype, (e[0], e[-1]) if self._even[i] else None,
                                self._f32_linspace[i])
                     for i, e in enumerate(self._edges)]
            self._specs[dtype.name] = specs
        return specs

    def reset(self) -> "HistogramDD":
        """Zero the counts, sums and tallies (the edges stay)."""
        self._accs: Dict[Tuple[Any, ...], _AccDD] = {}
        self._cache: Optional[Tuple[Any, ...]] = None
        return self

    # ---- filling ---------------------------------------------------------------------------

    def fill(self, *coords: Any, weight: Any = None, weights: Any = None) -> "HistogramDD":
        """Add points: one coordinate array per axis (x, y, ...; equal sizes, any shape), or
        one (N, D) array; weight (or weights) one value per point. NumPy arrays of every
        supported dtype, anything np.asarray takes, CuPy arrays and torch CUDA tensors (which
        only enqueue their work, unweighted)."""
        if weight is not None and weights is not None:
            raise TypeError("gpuhist.HistogramDD.fill: weight or weights, not both")
        w = weight if weight is not None else weights
        D = len(self._edges)
        self._cache = None
        if len(coords) == 1 and D > 1:
            dev = _device.lookup(coords[0], _context.stream_pointer(self._stream))
            if dev is not None:
                if len(dev.shape) != 2 or dev.shape[1] != D:
                    raise ValueError(f"gpuhist.HistogramDD.fill: one array of shape (N, {D}) "
                                     f"or {D} coordinate arrays")
                return self._fill_device(None, dev, w)
            a = host_array(coords[0])
            if a.ndim != 2 or a.shape[1] != D:
                raise ValueError(f"gpuhist.HistogramDD.fill: one array of shape (N, {D}) or "
                                 f"{D} coordinate arrays")
            return self._fill_host(a, w)
        if len(coords) != D:
            raise ValueError(f"gpuhist.HistogramDD.fill: {len(coords)} coordinate arrays for "
                             f"{D} axes")
        devs = [_device.lookup(c, _context.stream_pointer(self._stream)) for c in coords]
        if all(d is not None for d in devs):
            return self._fill_device(devs, None, w)
        if any(d is not None for d in devs):
            raise TypeError("gpuhist.HistogramDD.fill: some coordinates on a device, some on "
                            "the host; pass them all in one memory")
        cols = [host_array(c).ravel() for c in coords]
        if any(c.size != cols[0].size for c in cols):
            raise ValueError("gpuhist.HistogramDD.fill: the coordinate arrays differ in size")
        dtype = np.result_type(*cols)
        sample = np.empty((cols[0].size, D), dtype=dtype, order="F")
        for i, c in enumerate(cols):
            sample[:, i] = c
        return self._fill_host(sample, w)

    def _fill_host(self, sample: np.ndarray, w: Any) -> "HistogramDD":
        N = sample.shape[0]
        lib, _ = samples_for_library(sample, warn=False)
        if not (lib.flags.c_contiguous or lib.flags.f_contiguous) or not lib.dtype.isnative:
            lib = np.ascontiguousarray(lib, dtype=lib.dtype.newbyteorder("="))
        if _numpy_rounds_int64(lib.dtype, self._edges):
            lib = lib.astype(np.float64)  # NumPy compares these in float64
        wdt = None
        if w is not None:
            w = host_array(w)
            if w.size != N:
                raise ValueError("The weights and list don't have the same length.")
            wdt = weight_name(w)
            w = np.require(w.ravel(), np.dtype(np.float32 if wdt == "f32" else np.float64)
                           .newbyteorder("="), ["C", "A"])
        if N == 0:
            return self
        key = ("host", lib.dtype.name, wdt)
        acc = self._accs.get(key)
        if acc is None:
            acc = self._accs[key] = _AccDD(self._specs_for(lib.dtype), self._joint, None, wdt)
        ctx = _context.get(_context.resolve_backend(self._backend, self._strategy,
                                                    w is not None), -1, self._strategy,
                           _context.stream_pointer(self._stream))
        t = ctx.core.histogramdd(lib, acc.specs, acc.counts, w, acc.sums, acc.state,
                                 sums_squared=acc.sq, accumulate=True)
        acc.tallies[0] += int(t[_OUT])
        acc.tallies[1] += int(t[_NAN])
        acc.tallies[2] += int(t[_TOTAL])
        self._last(t)
        return self

    def _last(self, t: tuple) -> None:
        self._strategy_used, self._backend_used = t[_STRATEGY], t[_BACKEND]
        self._seconds = t[_SECONDS]

    def _fill_device(self, devs: Optional[List[_device.DeviceArray]],
                     whole: Optional[_device.DeviceArray], w: Any) -> "HistogramDD":
        first = whole if whole is not None else devs[0]  # type: ignore[index]
        if w is not None or first.owner not in ("cupy", "torch") or \
                _numpy_rounds_int64(first.np_dtype, self._edges):
            # weighted device points, another library's arrays, or 64-bit integers NumPy
            # rounds: counted from the host (this fill waits)
            return self._fill_via_host(devs, whole, w)
        if whole is not None:
            if whole.strides is not None and tuple(whole.strides) != \
                    (whole.shape[1] * whole.np_dtype.itemsize, whole.np_dtype.itemsize):
                return self._fill_via_host(devs, whole, w)
            count, columns, dtype = int(whole.shape[0]), whole.ptr, whole.np_dtype
        else:
            assert devs is not None
            if any(d.np_dtype != first.np_dtype or d.device_id != first.device_id or
                   d.owner != first.owner or d.size != first.size for d in devs):
                raise ValueError("gpuhist.HistogramDD.fill: device coordinates must share one "
                                 "dtype, size and device")
            if any(not _contiguous(d) for d in devs):
                return self._fill_via_host(devs, whole, w)
            count, columns, dtype = first.size, [d.ptr for d in devs], first.np_dtype
        if count == 0:
            return self
        key = (first.owner, first.device_id, dtype.name)
        acc = self._accs.get(key)
        if acc is None:
            acc = self._accs[key] = _AccDD(self._specs_for(dtype), self._joint,
                                           _device.Results(first), None)
        ctx = _device_context(first, self._backend, self._strategy, self._stream, True)
        t = ctx.core.histogramdd_raw(columns, first.dtype, count, acc.specs, acc.counts_ptr,
                                     True, acc.stats_ptr, accumulate=True)
        self._last(t)
        return self

    def _fill_via_host(self, devs: Optional[List[_device.DeviceArray]],
                       whole: Optional[_device.DeviceArray], w: Any) -> "HistogramDD":
        """Device coordinates (and weights) copied to the host and filled from there."""
        def to_host(x: Any) -> np.ndarray:
            if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
                return x.get()
            if hasattr(x, "cpu"):
                return x.detach().cpu().numpy()
            return np.from_dlpack(x)

        if w is not None and _device.lookup(w) is not None:
            w = to_host(w)
        if whole is not None:
            return self._fill_host(to_host(whole.obj), w)
        assert devs is not None
        return self.fill(*[to_host(d.obj) for d in devs], weight=w)

    # ---- totals ----------------------------------------------------------------------------

    def _totals(self) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray],
                               Tuple[int, int, int]]:
        """(joint counts, sums, sums of squares, (out, nan, total)) over every accumulator
        (waits for the device); kept until the next fill."""
        if self._cache is not None:
            return self._cache
        counts = np.zeros(self._joint, np.int64)
        weighted = self.weighted
        sums = np.zeros(self._joint) if weighted else None
        sq = np.zeros(self._joint) if weighted else None
        out = nan = total = 0
        for acc in self._accs.values():
            c, (o, n, t), s, q = acc.read()
            counts += c
            out, nan, total = out + o, nan + n, total + t
            if sums is not None and sq is not None:
                sums += c if s is None else s
                sq += c if q is None else q
        self._cache = (counts, sums, sq, (out, nan, total))
        return self._cache

    # ---- results ---------------------------------------------------------------------------

    @property
    def edges(self) -> List[np.ndarray]:
        """Each axis's float64 edges."""
        return list(self._edges)

    @property
    def shape(self) -> Tuple[int, ...]:
        """Bins per axis."""
        return self._shape

    @property
    def weighted(self) -> bool:
        return any(acc.wdt for acc in self._accs.values())

    @property
    def entries(self) -> np.ndarray:
        """The number of points in each bin (int64, shape `shape`), weighted or not."""
        return self._totals()[0].reshape(self._shape).copy()

    @property
    def sums(self) -> Optional[np.ndarray]:
        """Sum of the weights per bin (float64), None when never filled with weights."""
        s = self._totals()[1]
        return None if s is None else s.reshape(self._shape).copy()

    @property
    def sums_squared(self) -> Optional[np.ndarray]:
        """Sum of the squared weights per bin (float64), None when never weighted."""
        q = self._totals()[2]
        return None if q is None else q.reshape(self._shape).copy()

    @property
    def out(self) -> int:
        """Points with a coordinate outside its axis (and none NaN)."""
        return self._totals()[3][0]

    @property
    def nan(self) -> int:
        """Points with a NaN coordinate."""
        return self._totals()[3][1]

    @property
    def total(self) -> int:
        """Every point filled."""
        return self._totals()[3][2]

    @property
    def strategy(self) -> str:
        """The library strategy of the last fill ('' before any)."""
        return self._strategy_used

    @property
    def backend(self) -> str:
        """The backend of the last fill ('' before any)."""
        return self._backend_used

    @property
    def seconds(self) -> float:
        """Wall time of the last fill's library call (0 for an asynchronous device fill's
        work still queued)."""
        return self._seconds

    # ---- UHI PlottableHistogram ------------------------------------------------------------

    @property
    def axes(self) -> Tuple[Axis, ...]:
        return tuple(Axis(e) for e in self._edges)

    @property
    def kind(self) -> Kind:
        return Kind.COUNT

    def _no_flow(self, flow: bool) -> None:
        if flow:
            raise ValueError("gpuhist.HistogramDD: points outside the axes are tallied "
                             "together (out, nan), not per axis: flow=True is not available")

    def values(self, flow: bool = False) -> np.ndarray:
        """Counts (int64) or, once weighted, sums of weights (float64), shape `shape`."""
        self._no_flow(flow)
        v = self.sums if self.weighted else self.entries
        assert v is not None
        return v

    def variances(self, flow: bool = False) -> np.ndarray:
        """Poisson variances: the counts, or the sums of squared weights once weighted."""
        self._no_flow(flow)
        v = self.sums_squared if self.weighted else self.entries.astype(np.float64)
        assert v is not None
        return v

    def counts(self, flow: bool = False) -> np.ndarray:
        """Entries per bin: the counts, or sum(w)^2 / sum(w^2) once weighted (UHI)."""
        self._no_flow(flow)
        if not self.weighted:
            return self.entries
        s, q = self.sums, self.sums_squared
        assert s is not None and q is not None
        return np.divide(s**2, q, out=np.zeros_like(s), where=q != 0)

    # ---- conversion ------------------------------------------------------------------------

    def _to_boost_histogram_(self) -> Any:
        """A boost_histogram.Histogram with the same edges (Variable axes) and contents (Int64
        storage, or Weight storage once weighted); its flow bins stay empty (the outliers are
        tallied together: `out`, `nan`)."""
        import boost_histogram as bh  # noqa: PLC0415

        axes = [bh.axis.Variable(e) for e in self._edges]
        h = bh.Histogram(*axes,
                         storage=bh.storage.Weight() if self.weighted else bh.storage.Int64())
        view = h.view(flow=False)
        if self.weighted:
            view.value[...] = self.sums
            view.variance[...] = self.sums_squared
        else:
            view[...] = self.entries
        return h

    def __repr__(self) -> str:
        shape = " x ".join(map(str, self._shape))
        return (f"HistogramDD({shape} bins, total={self.total}, out={self.out}, "
                f"nan={self.nan}{', weighted' if self.weighted else ''})")


def _contiguous(d: _device.DeviceArray) -> bool:
    """A device array whose values lie one after another (C order)."""
    if d.strides is None:
        return True
    step = d.np_dtype.itemsize
    for n, s in zip(reversed(d.shape), reversed(d.strides)):
        if n > 1 and s != step:
            return False
        step *= n
    return True


__all__: Sequence[str] = ("HistogramDD",)
