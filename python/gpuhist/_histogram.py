"""gpuhist.Histogram: a 1-D histogram filled again and again, speaking UHI's PlottableHistogram.

Fixed float64 edges (even bins over a range, or explicit edges); every fill is one library call
whose exact counts are added to the totals (int64), together with the underflow / overflow /
NaN tallies; the strategy and time of the last fill are kept. Weighted fills keep the sums of
the weights and of their squares (float64; each fill's sums are correctly rounded, then added
across fills in float64). A histogram filled with and without weights counts an unweighted
sample as weight 1 (boost-histogram's Weight storage does the same).

Binning: a sample is in bin i when E[i] <= x < E[i+1], the last bin also holding x == E[-1]
(numpy.histogram's rule), where E are the float64 edges - for every sample dtype. (np.histogram
of float32 data with a range uses float32 edges instead; see docs/PYTHON.md.)

Device fills (CuPy arrays, torch CUDA tensors) add their counts on the device, on the caller's
stream, without synchronising; reading the counts (values(), underflow, ...) copies them to the
host. The UHI protocol (uhi.typing.plottable.PlottableHistogram): axes, kind, values(),
variances(), counts(); conversion: boost_histogram.Histogram(h), hist.Hist(h), h.to_uhi().
"""

from __future__ import annotations

import enum
import operator
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from . import _context, _device
from ._api import (BACKEND, NAN, OVERFLOW, SECONDS, STRATEGY, UNDERFLOW, host_array,
                   host_minmax, nonfinite_error, remap, run_host, samples_for_library)
from ._plan import (KIND_EDGES, KIND_EVEN, BinPlan, check_memory, edges_plan,
                    exact_float64_edges, library_dtype, outer_edges)
from . import _core


class Kind(str, enum.Enum):
    """UHI's histogram kinds."""

    COUNT = "COUNT"
    MEAN = "MEAN"


class Traits:
    """UHI axis traits: a continuous, non-circular axis."""

    __slots__ = ("circular", "discrete")

    def __init__(self, circular: bool = False, discrete: bool = False) -> None:
        self.circular = circular
        self.discrete = discrete

    def __repr__(self) -> str:
        return f"Traits(circular={self.circular}, discrete={self.discrete})"


class Axis:
    """The histogram's axis: its float64 edges; axis[i] is bin i's (lower, upper)."""

    __slots__ = ("_edges", "traits")

    def __init__(self, edges: np.ndarray) -> None:
        self._edges = edges
        self.traits = Traits()

    @property
    def edges(self) -> np.ndarray:
        return self._edges

    @property
    def centers(self) -> np.ndarray:
        return (self._edges[:-1] + self._edges[1:]) / 2

    @property
    def widths(self) -> np.ndarray:
        return np.diff(self._edges)

    def __len__(self) -> int:
        return self._edges.size - 1

    def __getitem__(self, index: int) -> Tuple[float, float]:
        n = len(self)
        i = operator.index(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"bin {index} of an axis of {n} bins")
        return float(self._edges[i]), float(self._edges[i + 1])

    def __iter__(self) -> Iterator[Tuple[float, float]]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Axis) and np.array_equal(self._edges, other._edges)

    def __hash__(self) -> int:
        return hash(self._edges.tobytes())

    def __repr__(self) -> str:
        return f"Axis({len(self)} bins from {self._edges[0]!r} to {self._edges[-1]!r})"


class Histogram:
    """A 1-D histogram with fixed edges, filled with gpuhist again and again.

    Histogram(bins=10, range=None, *, backend='auto', strategy=None, stream=None)

    bins: a number of even bins over `range` = (lower, upper), or an array of increasing
    edges (range is then ignored, as in NumPy). With a number of bins and no range, the first
    fill sets the range from its data as numpy.histogram does (finite min and max; NaN or inf
    raise ValueError).
    """

    def __init__(self, bins: Any = 10, range: Any = None, *, backend: str = "auto",
                 strategy: Optional[str] = None, stream: Any = None) -> None:
        _context.check_backend(backend)
        self._backend = backend
        self._strategy = strategy
        self._stream = stream
        self._plans: Dict[str, BinPlan] = {}
        self._even: Optional[Tuple[int, float, float]] = None
        self._edges: Optional[np.ndarray] = None
        self._bins = 0
        if isinstance(bins, str):
            raise NotImplementedError("gpuhist.Histogram: a rule name needs data; pass a "
                                      "number of bins or the edges "
                                      "gpuhist.histogram_bin_edges(a, rule) gives")
        if np.ndim(bins) == 0:
            try:
                n = operator.index(bins)
            except TypeError as e:
                raise TypeError("`bins` must be an integer or an array") from e
            if n < 1:
                raise ValueError("`bins` must be positive, when an integer")
            self._bins = n
            if range is not None:
                lo, hi, _ = outer_edges(1, range, lambda: (0, 1))
                self._set_even(n, float(lo), float(hi))
        elif np.ndim(bins) == 1:
            e = np.asarray(bins)
            if e.size < 2:
                raise ValueError("gpuhist.Histogram: edges need at least two values")
            if np.any(e[:-1] > e[1:]):
                raise ValueError("`bins` must increase monotonically, when an array")
            self._edges = exact_float64_edges(e)
            self._edges.setflags(write=False)
            self._bins = self._edges.size - 1
        else:
            raise ValueError("`bins` must be 1d, when an array")
        check_memory(self._bins)
        self._strategy_used = ""
        self._backend_used = ""
        self._seconds = 0.0
        self.reset()

    # ---- set-up ----------------------------------------------------------------------------

    def _set_even(self, n: int, lo: float, hi: float) -> None:
        self._even = (n, lo, hi)
        self._edges = np.linspace(lo, hi, n + 1)
        if np.any(self._edges[:-1] >= self._edges[1:]):
            raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized "
                             f"bins.")
        self._edges.setflags(write=False)

    def _plan(self, dtype_name: str) -> BinPlan:
        """The library request binning `dtype_name` samples by the float64 edges."""
        plan = self._plans.get(dtype_name)
        if plan is not None:
            return plan
        assert self._edges is not None
        if self._even is not None:
            n, lo, hi = self._even
            plan = BinPlan()
            plan.out_bins = plan.bins = n
            plan.last_inclusive = True
            plan.np_edges = self._edges
            # the library's even edges are float32 for f32 samples: usable only when they
            # are these float64 edges exactly
            lib = _core.compute_edges(KIND_EVEN, n, lo, hi, 0, dtype_name)
            if np.array_equal(lib, self._edges):
                plan.kind, plan.lower, plan.upper = KIND_EVEN, lo, hi
            else:
                plan.kind, plan.edges = KIND_EDGES, np.array(self._edges)
        else:
            plan = edges_plan(self._edges)
        self._plans[dtype_name] = plan
        return plan

    def reset(self) -> "Histogram":
        """Zero the counts, sums and tallies (the edges stay)."""
        self._entries = np.zeros(self._bins, np.int64)
        self._sums: Optional[np.ndarray] = None
        self._sums_sq: Optional[np.ndarray] = None
        self._flow = np.zeros(3, np.int64)  # underflow, overflow, nan
        self._total = 0
        self._device: List[Tuple[_device.Results, Any, Any]] = []  # (results, counts, stats)
        return self

    # ---- filling ---------------------------------------------------------------------------

    def fill(self, a: Any, weights: Any = None) -> "Histogram":
        """Add the samples of `a` (any shape; NumPy arrays of every supported dtype, strided or
        byte-swapped, anything np.asarray takes, CuPy arrays, torch CUDA tensors), with one
        weight per sample when `weights` (an array of a's shape, where `a` is: a weighted
        fill of a device array returns its sums to the host, so it synchronises)."""
        dev = _device.lookup(a, _context.stream_pointer(self._stream))
        if dev is not None:
            return self._fill_device(dev, weights)
        a = host_array(a)
        samples, rules_dtype = samples_for_library(a, warn=False)
        if weights is not None:
            weights = host_array(weights)
            if weights.shape != a.shape:
                raise ValueError("weights should have the same shape as a.")
        ctx = _context.get(_context.resolve_backend(self._backend, self._strategy,
                                                    weights is not None), -1, self._strategy,
                           _context.stream_pointer(self._stream))
        auto = self._edges is None
        if auto:
            if a.size == 0:
                return self
            first, last, _ = outer_edges(a.size, None,
                                         lambda: host_minmax(ctx, samples, rules_dtype))
            self._set_even(self._bins, float(first), float(last))
        plan = self._plan(library_dtype(samples.dtype))
        counts, sums, sq, t = run_host(ctx, plan, samples, weights, squares=True)
        if auto and (t[NAN] or t[UNDERFLOW] or t[OVERFLOW]):
            self._unset_range()
            raise nonfinite_error(a)  # NaN or inf in the data that sets the range, as NumPy
        self._add(plan, counts, sums, sq, t)
        return self

    def _unset_range(self) -> None:
        self._even = self._edges = None
        self._plans = {}

    def _flows(self, plan: BinPlan, counts: np.ndarray, t: tuple) -> Tuple[int, int]:
        """Underflow and overflow of the user's edges from a call's tallies and bins."""
        if not plan.clamp:
            return int(t[UNDERFLOW]), int(t[OVERFLOW])
        # clamped: an infinite end has no outliers; a finite end's went to an extra end bin
        e = self._edges
        assert e is not None
        under = 0 if e[0] == -np.inf else int(counts[0])
        over = 0 if e[-1] == np.inf else int(counts[-1])
        return under, over

    def _add(self, plan: BinPlan, counts: np.ndarray, sums: Optional[np.ndarray],
             sq: Optional[np.ndarray], t: tuple) -> None:
        under, over = self._flows(plan, counts, t)
        mapped = remap(plan, counts)
        if sums is not None and self._sums is None:
            # the first weighted fill: earlier unweighted fills count as weight 1
            self._sums = self._entries.astype(np.float64)
            self._sums_sq = self._sums.copy()
        if self._sums is not None:
            assert self._sums_sq is not None
            if sums is not None and sq is not None:
                self._sums += remap(plan, sums)
                self._sums_sq += remap(plan, sq)
            else:
                self._sums += mapped
                self._sums_sq += mapped
        self._entries += mapped
        self._flow += (under, over, int(t[NAN]))
        self._total += int(t[3])
        self._strategy_used = t[STRATEGY]
        self._backend_used = t[BACKEND]
        self._seconds = t[SECONDS]

    def _fill_device(self, dev: _device.DeviceArray, weights: Any) -> "Histogram":
        from ._api import _device_context  # noqa: PLC0415

        w = None
        if weights is not None:
            w, _ = _device.device_weights(dev, weights)
        res = _device.Results(dev)
        ctx = _device_context(dev, self._backend, self._strategy, self._stream, False)
        if self._edges is None:
            if dev.size == 0:
                return self

            def finite_minmax() -> Tuple[Any, Any]:
                mn, mx, found = ctx.core.minmax_raw(dev.ptr, dev.dtype, dev.shape,
                                                    dev.strides, True)
                if not found:
                    raise nonfinite_error(dev.obj)
                return dev.np_dtype.type(mn), dev.np_dtype.type(mx)

            first, last, _ = outer_edges(dev.size, None, finite_minmax)
            self._set_even(self._bins, float(first), float(last))
            # the tallies must be read now: NaN or inf in the data that sets the range raise
            plan = self._plan(dev.dtype)
            ctx.configure(ctx.strategy, ctx.stream, False)
            counts = res.empty(plan.bins, np.int64)
            t = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                       *plan.args(), res.pointer(counts), False)
            if t[NAN] or t[UNDERFLOW] or t[OVERFLOW]:
                self._unset_range()
                raise nonfinite_error(dev.obj)
        plan = self._plan(dev.dtype)
        if w is not None:
            # weighted: the library returns the sums (and squares) on the host, so this fill
            # synchronises; they are added on the host as a host fill's are
            ctx.configure(ctx.strategy, ctx.stream, False)
            counts = np.empty(plan.bins, np.int64)
            sums, sq = np.empty(plan.bins, np.float64), np.empty(plan.bins, np.float64)
            t = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                       *plan.args(), counts.ctypes.data, False, None, None,
                                       w.ptr, w.dtype, sums, sq)
            self._add(plan, counts, sums, sq, t)
            return self
        ctx.configure(ctx.strategy, ctx.stream, res.on_device)
        counts = res.empty(plan.bins, np.int64)
        stats = res.empty(4, np.int64) if res.on_device else None
        t = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                   *plan.args(), res.pointer(counts), res.on_device,
                                   res.pointer(stats) if stats is not None else None)
        if not res.on_device:  # counts came back to the host: add them now
            self._add(plan, counts, None, None, t)
            return self
        if plan.clamp:
            # the user's flows are the dropped end bins (finite ends) or none (infinite ends)
            assert self._edges is not None
            stats[0] = counts[0] if self._edges[0] != -np.inf else 0
            stats[1] = counts[-1] if self._edges[-1] != np.inf else 0
        mapped = res.remap(counts, plan.out_bins, plan.src, plan.dst, np.int64)
        for r, acc, st in self._device:
            if r.owner == res.owner and r.dev.device_id == dev.device_id:
                acc += mapped  # accumulate on the device, on its stream
                st += stats
                break
        else:
            self._device.append((res, mapped, stats))
        self._strategy_used = t[STRATEGY]
        self._backend_used = t[BACKEND]
        self._seconds = t[SECONDS]
        return self

    def _gather_device(self) -> None:
        """Bring the device totals to the host (synchronises with their streams)."""
        for res, acc, stats in self._device:
            c = res.to_numpy(acc).astype(np.int64)
            s = res.to_numpy(stats).astype(np.int64)
            self._entries += c
            if self._sums is not None and self._sums_sq is not None:
                self._sums += c
                self._sums_sq += c
            # device_stats: underflow, overflow, nan, total (clamped plans: fixed in _fill_device)
            self._flow += (s[0], s[1], s[2])
            self._total += int(s[3])
        self._device = []

    # ---- results ---------------------------------------------------------------------------

    @property
    def edges(self) -> np.ndarray:
        """The float64 edges (bins + 1), or an empty array before a range is known."""
        return self._edges if self._edges is not None else np.empty(0)

    @property
    def bins(self) -> int:
        return self._bins

    @property
    def weighted(self) -> bool:
        return self._sums is not None

    @property
    def entries(self) -> np.ndarray:
        """The number of samples in each bin (int64), weighted or not."""
        self._gather_device()
        return self._entries.copy()

    @property
    def sums(self) -> Optional[np.ndarray]:
        """Sum of the weights per bin (float64), None when never filled with weights."""
        self._gather_device()
        return None if self._sums is None else self._sums.copy()

    @property
    def sums_squared(self) -> Optional[np.ndarray]:
        """Sum of the squared weights per bin (float64), None when never weighted."""
        self._gather_device()
        return None if self._sums_sq is None else self._sums_sq.copy()

    @property
    def underflow(self) -> int:
        """Samples below the first edge (-inf included)."""
        self._gather_device()
        return int(self._flow[0])

    @property
    def overflow(self) -> int:
        """Samples above the last edge (+inf included)."""
        self._gather_device()
        return int(self._flow[1])

    @property
    def nan(self) -> int:
        """NaN samples (never binned)."""
        self._gather_device()
        return int(self._flow[2])

    @property
    def total(self) -> int:
        """Every sample filled (binned, outside the edges, or NaN)."""
        self._gather_device()
        return int(self._total)

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
        """Wall time of the last fill's library call, transfers included."""
        return self._seconds

    # ---- UHI PlottableHistogram ------------------------------------------------------------

    @property
    def axes(self) -> Tuple[Axis]:
        return (Axis(self.edges),)

    @property
    def kind(self) -> Kind:
        return Kind.COUNT

    def _with_flow(self, inner: np.ndarray, flow: bool) -> np.ndarray:
        if not flow:
            return inner
        if self.weighted:
            raise ValueError("gpuhist.Histogram: the weights of outliers are not kept "
                             "(flow=True needs an unweighted histogram)")
        return np.concatenate([[self.underflow], inner, [self.overflow]])

    def values(self, flow: bool = False) -> np.ndarray:
        """Counts (int64) or, once weighted, sums of weights (float64); flow=True adds the
        underflow and overflow bins at either end (unweighted only)."""
        inner = self.sums if self.weighted else self.entries
        assert inner is not None
        return self._with_flow(inner, flow)

    def variances(self, flow: bool = False) -> np.ndarray:
        """Poisson variances: the counts, or the sums of squared weights once weighted."""
        inner = self.sums_squared if self.weighted else self.entries.astype(np.float64)
        assert inner is not None
        return self._with_flow(inner, flow)

    def counts(self, flow: bool = False) -> np.ndarray:
        """Entries per bin: the counts, or the effective counts sum(w)^2 / sum(w^2) once
        weighted (UHI's definition)."""
        if not self.weighted:
            return self._with_flow(self.entries, flow)
        s, q = self.sums, self.sums_squared
        assert s is not None and q is not None
        return self._with_flow(
            np.divide(s**2, q, out=np.zeros_like(s), where=q != 0), flow)

    # ---- conversion and merging ------------------------------------------------------------

    def to_uhi(self) -> Dict[str, Any]:
        """UHI's serialization (uhi.io / uhi.schema): a variable axis and an int or weighted
        storage. boost_histogram.Histogram(h.to_uhi()) reads it back."""
        self._gather_device()
        axis = {"type": "variable", "edges": self.edges.copy(), "underflow": True,
                "overflow": True, "circular": False}
        if self.weighted:
            assert self._sums is not None and self._sums_sq is not None
            storage: Dict[str, Any] = {"type": "weighted", "values": self._sums.copy(),
                                       "variances": self._sums_sq.copy()}
        else:
            storage = {"type": "int", "values": self.values(flow=True)}
        return {"uhi_schema": 1, "writer_info": {"gpuhist": {"version": _core.library_version}},
                "axes": [axis], "storage": storage}

    def _to_boost_histogram_(self) -> Any:
        """A boost_histogram.Histogram with the same edges and contents (Variable axis;
        Int64 storage with flow bins, or Weight storage once weighted)."""
        import boost_histogram as bh  # noqa: PLC0415

        h = bh.Histogram(bh.axis.Variable(self.edges),
                         storage=bh.storage.Weight() if self.weighted else bh.storage.Int64())
        view = h.view(flow=True)
        if self.weighted:
            view.value[1:-1] = self.sums
            view.variance[1:-1] = self.sums_squared
        else:
            view[:] = self.values(flow=True)
        return h

    def __iadd__(self, other: "Histogram") -> "Histogram":
        if not isinstance(other, Histogram):
            return NotImplemented
        if self._edges is None or other._edges is None or \
                not np.array_equal(self._edges, other._edges):
            raise ValueError("gpuhist.Histogram: only histograms with the same edges add up")
        self._gather_device()
        other._gather_device()
        if other._sums is not None and self._sums is None:
            self._sums = self._entries.astype(np.float64)
            self._sums_sq = self._sums.copy()
        if self._sums is not None and self._sums_sq is not None:
            self._sums += other._sums if other._sums is not None else other._entries
            self._sums_sq += other._sums_sq if other._sums_sq is not None else other._entries
        self._entries += other._entries
        self._flow += other._flow
        self._total += other._total
        return self

    def __add__(self, other: "Histogram") -> "Histogram":
        if not isinstance(other, Histogram):
            return NotImplemented
        out = self.copy()
        out += other
        return out

    def copy(self) -> "Histogram":
        self._gather_device()
        out = Histogram.__new__(Histogram)
        out.__dict__.update(self.__dict__)
        out._plans = dict(self._plans)
        out._entries = self._entries.copy()
        out._flow = self._flow.copy()
        out._sums = None if self._sums is None else self._sums.copy()
        out._sums_sq = None if self._sums_sq is None else self._sums_sq.copy()
        out._device = []
        return out

    def __repr__(self) -> str:
        if self._edges is None:
            return f"Histogram({self._bins} bins, range from the first fill)"
        return (f"Histogram({self._bins} bins from {self._edges[0]!r} to {self._edges[-1]!r}, "
                f"total={self.total}, underflow={self.underflow}, overflow={self.overflow}, "
                f"nan={self.nan}{', weighted' if self.weighted else ''})")
