"""gpuhist.Histogram: a 1-D histogram filled again and again, speaking UHI's PlottableHistogram.

Fixed float64 edges (even bins over a range, or explicit edges); every fill is one library call
that adds its exact counts, tallies and weight sums into the histogram's totals (the library's
result.accumulate): int64 counts and an exact weight state (the unrounded sums of the weights
and of their squares) per sample dtype, memory and weight type, in the library's bins. Reading
(values(), variances(), the tallies) rounds each state's sums once, so weighted fills give the
bits of one fill over all their samples; the strategy and time of the last fill are kept. A
histogram filled with and without weights counts an unweighted sample as weight 1
(boost-histogram's Weight storage does the same).

Binning: a sample is in bin i when E[i] <= x < E[i+1], the last bin also holding x == E[-1]
(numpy.histogram's rule), where E are the float64 edges - for every sample dtype. (np.histogram
of float32 data with a range uses float32 edges instead; see docs/PYTHON.md.)

Device fills (CuPy arrays, torch CUDA tensors) add their counts, tallies and exact weight
state on the device, on the caller's stream, without synchronising, weighted or not: one library
call per fill, no allocation after the first, no extra kernel; reading (values(), underflow, ...)
waits for the device and copies the totals to the host. The UHI protocol
(uhi.typing.plottable.PlottableHistogram): axes, kind, values(), variances(), counts(); conversion: boost_histogram.Histogram(h), hist.Hist(h), h.to_uhi().
"""

from __future__ import annotations

import enum
import operator
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np

from . import _context, _device
from ._api import (BACKEND, NAN, OVERFLOW, SECONDS, STRATEGY, TOTAL, UNDERFLOW,
                   _device_context, host_array, host_minmax, nonfinite_error, remap,
                   samples_for_library)
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


class _Acc:
    """The totals of the fills of one library plan into one memory with one weight type, in the
    library's bins: counts, the tallies (underflow, overflow, nan, total) and, weighted, the
    exact weight state with squares (result.accumulate adds every fill into them). On the host
    (res None) NumPy arrays; beside a CuPy array or torch tensor, arrays of that library on its
    device, allocated at the first fill, whose pointers every later fill passes as they are."""

    __slots__ = ("plan", "args", "res", "wdt", "counts", "stats", "state", "sums", "sq",
                 "counts_ptr", "stats_ptr", "state_ptr")

    def __init__(self, plan: BinPlan, res: Optional[_device.Results], wdt: Optional[str]
                 ) -> None:
        self.plan, self.res, self.wdt = plan, res, wdt
        self.args = plan.args()  # the library's spec, as every fill passes it
        words = _core.weight_state_words(plan.bins, wdt, True) if wdt else 0
        make = np.zeros if res is None else res.zeros
        self.counts = make(plan.bins, np.int64)
        self.stats = make(4, np.int64)
        self.state = make(words, np.int64) if wdt else None
        # host sums the library writes (accumulating synchronously) or only reads the shape of
        # (asynchronous device fills: squares kept)
        self.sums = np.zeros(plan.bins, np.float64) if wdt else None
        self.sq = np.zeros(plan.bins, np.float64) if wdt else None
        self.counts_ptr = self.stats_ptr = self.state_ptr = None
        if res is not None:
            self.counts_ptr = res.pointer(self.counts)
            self.stats_ptr = res.pointer(self.stats)
            self.state_ptr = res.pointer(self.state) if wdt else None

    def read(self) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
        """(counts, tallies, sums, sums of squares) on the host, the sums rounded once from the
        exact state (waits for the device)."""
        if self.res is None:
            counts, stats, state = self.counts, self.stats, self.state
        else:
            self.res.synchronize()
            counts = self.res.to_numpy(self.counts).astype(np.int64)
            stats = self.res.to_numpy(self.stats).astype(np.int64)
            state = None if self.state is None else \
                np.ascontiguousarray(self.res.to_numpy(self.state), dtype=np.int64)
        if state is None:
            return counts, stats, None, None
        sums, sq = np.empty(self.plan.bins), np.empty(self.plan.bins)
        _core.weight_state_sums(state, self.plan.bins, self.wdt, True, bool(self.plan.clamp),
                                sums, sq)
        return counts, stats, sums, sq


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
            # are these float64 edges exactly (rounded to float32 they may even repeat a
            # value, which the library refuses). The float32 linspace (KIND_EVEN_F32_LINSPACE)
            # is not tried: it can equal float64 edges only when they are float32 values, and
            # those are these EVEN edges too (the library's double linspace is NumPy's).
            try:
                lib = _core.compute_edges(KIND_EVEN, n, lo, hi, 0, dtype_name)
            except ValueError:
                lib = None
            if lib is not None and np.array_equal(lib, self._edges):
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
        # fills not yet gathered: one accumulator per (memory, sample dtype, weight dtype)
        self._accs: Dict[Tuple[Any, ...], _Acc] = {}
        self._cache: Optional[Tuple[Any, ...]] = None  # _totals() until the next fill
        return self

    # ---- filling ---------------------------------------------------------------------------

    def fill(self, a: Any, weights: Any = None) -> "Histogram":
        """Add the samples of `a` (any shape; NumPy arrays of every supported dtype, strided or
        byte-swapped, anything np.asarray takes, CuPy arrays, torch CUDA tensors), with one
        weight per sample when `weights` (an array of a's shape, where `a` is). A fill of a
        CuPy array or torch tensor only enqueues its work on the device (weighted or not; unless
        its weights had to be converted to float32/float64 or made contiguous)."""
        self._cache = None
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
        dtype = library_dtype(samples.dtype)
        plan = self._plan(dtype)
        wdt = None if weights is None else "f32" if weights.dtype == np.float32 else "f64"
        key = ("host", dtype, wdt)
        acc = self._accs.get(key)
        if acc is None:
            acc = self._accs[key] = _Acc(plan, None, wdt)
        t = ctx.core.histogram(samples, *acc.args, acc.counts, weights, acc.sums, acc.sq,
                               weight_state=acc.state, as_double=plan.as_double,
                               accumulate=True)
        acc.stats += t[:4]
        self._checked_first(auto, key, t, a)
        return self

    def _checked_first(self, auto: bool, key: Tuple[Any, ...], t: tuple, a: Any) -> None:
        """After a fill: the last fill's figures; a fill that set the range from data holding
        NaN or inf is taken back (it was the only fill) and raises NumPy's error."""
        if auto and (t[NAN] or t[UNDERFLOW] or t[OVERFLOW]):
            del self._accs[key]
            self._unset_range()
            raise nonfinite_error(a)
        self._strategy_used = t[STRATEGY]
        self._backend_used = t[BACKEND]
        self._seconds = t[SECONDS]

    def _unset_range(self) -> None:
        self._even = self._edges = None
        self._plans = {}

    def _flows(self, plan: BinPlan, counts: np.ndarray, t: Any) -> Tuple[int, int]:
        """Underflow and overflow of the user's edges from the tallies and bins of calls."""
        if not plan.clamp:
            return int(t[UNDERFLOW]), int(t[OVERFLOW])
        # clamped: an infinite end has no outliers; a finite end's went to an extra end bin
        e = self._edges
        assert e is not None
        under = 0 if e[0] == -np.inf else int(counts[0])
        over = 0 if e[-1] == np.inf else int(counts[-1])
        return under, over

    def _merge(self, plan: BinPlan, counts: np.ndarray, sums: Optional[np.ndarray],
               sq: Optional[np.ndarray], t: Any) -> None:
        """Add library counts (and sums) of `plan` and tallies t (underflow, overflow, nan,
        total) to the host totals."""
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
        self._total += int(t[TOTAL])

    def _fill_device(self, dev: _device.DeviceArray, weights: Any) -> "Histogram":
        w = None
        if weights is not None:
            w, _ = _device.device_weights(dev, weights)
        if dev.size == 0:  # nothing to add (an empty array has no data pointer to pass)
            return self
        auto = self._edges is None
        if auto:
            ctx = _device_context(dev, self._backend, self._strategy, self._stream, False)

            def finite_minmax() -> Tuple[Any, Any]:
                mn, mx, found = ctx.core.minmax_raw(dev.ptr, dev.dtype, dev.shape,
                                                    dev.strides, True)
                if not found:
                    raise nonfinite_error(dev.obj)
                return dev.np_dtype.type(mn), dev.np_dtype.type(mx)

            first, last, _ = outer_edges(dev.size, None, finite_minmax)
            self._set_even(self._bins, float(first), float(last))
        plan = self._plan(dev.dtype)
        if dev.owner not in ("cupy", "torch"):
            return self._fill_device_to_host(dev, w, plan, auto)
        key = (dev.owner, dev.device_id, dev.dtype, None if w is None else w.dtype)
        acc = self._accs.get(key)
        if acc is None:
            acc = self._accs[key] = _Acc(plan, _device.Results(dev), None if w is None
                                         else w.dtype)
        # the fill that sets the range waits for its tallies (NaN or inf raise); the others
        # only enqueue their work
        ctx = _device_context(dev, self._backend, self._strategy, self._stream, not auto)
        t = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                   *acc.args, acc.counts_ptr, True, acc.stats_ptr, None,
                                   None if w is None else w.ptr, None if w is None else w.dtype,
                                   acc.sums, acc.sq, None, True, acc.state_ptr)
        if w is not None and w.obj is not weights:
            # weights converted to float32/64 or made contiguous: a temporary, freed when this
            # returns, which the queued kernel may not have read yet
            acc.res.synchronize()
        self._checked_first(auto, key, t, dev.obj)
        return self

    def _fill_device_to_host(self, dev: _device.DeviceArray, w: Optional[_device.DeviceArray],
                             plan: BinPlan, auto: bool) -> "Histogram":
        """A device array of another library (DLPack only): nothing can be allocated beside
        it, so the counts (and sums) come back to the host (this fill synchronises)."""
        ctx = _device_context(dev, self._backend, self._strategy, self._stream, False)
        counts = np.empty(plan.bins, np.int64)
        sums = sq = None
        if w is not None:
            sums, sq = np.empty(plan.bins, np.float64), np.empty(plan.bins, np.float64)
        t = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                   *plan.args(), counts.ctypes.data, False, None, None,
                                   None if w is None else w.ptr, None if w is None else w.dtype,
                                   sums, sq)
        if auto and (t[NAN] or t[UNDERFLOW] or t[OVERFLOW]):
            self._unset_range()
            raise nonfinite_error(dev.obj)
        self._merge(plan, counts, sums, sq, t)
        self._strategy_used = t[STRATEGY]
        self._backend_used = t[BACKEND]
        self._seconds = t[SECONDS]
        return self

    def _totals(self) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray],
                               np.ndarray, int]:
        """(entries, sums, sums of squares, [underflow, overflow, nan], total): the host totals
        plus every accumulator's, each weight state's sums rounded once (waits for the device).
        The accumulators stay: later fills keep adding into their exact states. Kept until the
        next fill."""
        if self._cache is not None:
            return self._cache
        entries, flow, total = self._entries.copy(), self._flow.copy(), self._total
        sums = sq = None
        if self.weighted:
            sums = self._entries.astype(np.float64) if self._sums is None else self._sums.copy()
            sq = sums.copy() if self._sums_sq is None else self._sums_sq.copy()
        for acc in self._accs.values():
            counts, stats, s, q = acc.read()
            under, over = self._flows(acc.plan, counts, stats)
            mapped = remap(acc.plan, counts)
            entries += mapped
            flow += (under, over, int(stats[NAN]))
            total += int(stats[TOTAL])
            if sums is not None and sq is not None:
                sums += mapped if s is None else remap(acc.plan, s)
                sq += mapped if q is None else remap(acc.plan, q)
        self._cache = (entries, sums, sq, flow, total)
        return self._cache

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
        return self._sums is not None or any(acc.wdt for acc in self._accs.values())

    @property
    def entries(self) -> np.ndarray:
        """The number of samples in each bin (int64), weighted or not."""
        return self._totals()[0].copy()

    @property
    def sums(self) -> Optional[np.ndarray]:
        """Sum of the weights per bin (float64), None when never filled with weights."""
        sums = self._totals()[1]
        return None if sums is None else sums.copy()

    @property
    def sums_squared(self) -> Optional[np.ndarray]:
        """Sum of the squared weights per bin (float64), None when never weighted."""
        sq = self._totals()[2]
        return None if sq is None else sq.copy()

    @property
    def underflow(self) -> int:
        """Samples below the first edge (-inf included)."""
        return int(self._totals()[3][0])

    @property
    def overflow(self) -> int:
        """Samples above the last edge (+inf included)."""
        return int(self._totals()[3][1])

    @property
    def nan(self) -> int:
        """NaN samples (never binned)."""
        return int(self._totals()[3][2])

    @property
    def total(self) -> int:
        """Every sample filled (binned, outside the edges, or NaN)."""
        return int(self._totals()[4])

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
        axis = {"type": "variable", "edges": self.edges.copy(), "underflow": True,
                "overflow": True, "circular": False}
        if self.weighted:
            storage: Dict[str, Any] = {"type": "weighted", "values": self.sums,
                                       "variances": self.sums_squared}
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
        entries, sums, sq, flow, total = other._totals()
        if sums is not None and self._sums is None:
            self._sums = self._entries.astype(np.float64)
            self._sums_sq = self._sums.copy()
        if self._sums is not None and self._sums_sq is not None:
            self._sums += sums if sums is not None else entries
            self._sums_sq += sq if sq is not None else entries
        self._entries += entries
        self._flow += flow
        self._total += total
        self._cache = None
        return self

    def __add__(self, other: "Histogram") -> "Histogram":
        if not isinstance(other, Histogram):
            return NotImplemented
        out = self.copy()
        out += other
        return out

    def copy(self) -> "Histogram":
        """An independent histogram with the same edges and contents (its totals on the host:
        its weighted sums go on from these rounded sums)."""
        entries, sums, sq, flow, total = self._totals()
        out = Histogram.__new__(Histogram)
        out.__dict__.update(self.__dict__)
        out._plans = dict(self._plans)
        out._entries = entries.copy()
        out._flow = flow.copy()
        out._total = total
        out._sums = None if sums is None else sums.copy()
        out._sums_sq = None if sq is None else sq.copy()
        out._accs = {}
        out._cache = None
        return out

    def __repr__(self) -> str:
        if self._edges is None:
            return f"Histogram({self._bins} bins, range from the first fill)"
        return (f"Histogram({self._bins} bins from {self._edges[0]!r} to {self._edges[-1]!r}, "
                f"total={self.total}, underflow={self.underflow}, overflow={self.overflow}, "
                f"nan={self.nan}{', weighted' if self.weighted else ''})")
