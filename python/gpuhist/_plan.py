"""NumPy's binning rules, resolved into a request for the C library.

numpy.histogram's result depends on more than the edges' values: the dtype of the edges (float32
for float32 data, float64 for integers, whatever NumPy's type promotion gives for the range's
types), the last edge being inclusive, and its checks and messages. This module reproduces the
*decisions* of numpy/lib/histograms.py (`_get_outer_edges`, `_get_bin_edges`) by calling NumPy
itself (np.result_type, np.linspace), so the edges are NumPy's own bits whatever NumPy version is
installed, then picks the library request that bins exactly as NumPy does:

- even bins (gpuhist_bins_even) when the library's edges (gpuhist_compute_edges) are bit for bit
  NumPy's - the fast path; for float32 data also with the spec's float32_linspace (NumPy 2's
  float32 linspace: an automatic range, or a range of float32 scalars, under NumPy 2);
- else explicit edges (gpuhist_bins_edges) holding NumPy's edges (e.g. float64 edges with
  float32 data);
- explicit edge arrays with repeated or infinite edges (which the library refuses) become
  strictly increasing finite library edges plus a map back to NumPy's bins: a repeated edge is an
  empty bin; the last bin's upper edge e[n] becomes nextafter(e[n], +inf) so that x == e[n] falls
  inside without last-edge rules; an infinite end becomes a finite edge with the clamp policy,
  and the other end gets one extra bin that swallows its outliers and is dropped.

No sample is binned here: the C library bins every one.
"""

from __future__ import annotations

import math
import operator
import threading
from collections import OrderedDict
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _core

KIND_EVEN, KIND_EDGES, KIND_INTEGER = 0, 1, 2
# even bins whose f32 edges are NumPy 2's float32 linspace (the spec's float32_linspace)
KIND_EVEN_F32_LINSPACE = 3
NUMPY_2 = int(np.__version__.split(".")[0]) >= 2
# The bin-count rules the library follows (gpuhist_bins_rule_numpy): the installed NumPy's.
NUMPY_MAJOR = 2 if NUMPY_2 else 1
MAX_BINS = 2**32 - 1

# NumPy's bin rule names (numpy.histogram_bin_edges); the library computes their bin counts.
BIN_RULES = ("auto", "fd", "doane", "rice", "scott", "sqrt", "stone", "sturges")


class BinPlan:
    """A library request (kind, bins, range or edges, policy) and how to read NumPy's bins out
    of its counts: out[dst] = lib[src] (identity when src is None)."""

    __slots__ = ("kind", "bins", "lower", "upper", "edges", "integer_lower", "last_inclusive",
                 "clamp", "out_bins", "src", "dst", "np_edges", "auto_range", "as_double",
                 "device_edges", "frozen")

    def __init__(self) -> None:
        self.kind = KIND_EVEN
        self.bins = 0
        self.lower = 0.0
        self.upper = 0.0
        self.edges: Optional[np.ndarray] = None
        self.integer_lower = 0
        self.last_inclusive = True
        self.clamp = False
        self.out_bins = 0
        self.src: Optional[np.ndarray] = None
        self.dst: Optional[np.ndarray] = None
        self.np_edges: Any = None
        self.auto_range = False
        # 64-bit integer samples binned as NumPy bins them: (lo, hi), the samples NumPy keeps,
        # each binned as its nearest float64 (_core.Context.histogram's as_double); None: the
        # library's exact comparisons give NumPy's bins
        self.as_double: Optional[Tuple[int, int]] = None
        # a cached plan (plan_bins(cache=True)) is shared between calls: frozen, its arrays
        # read-only, and device_edges holds np_edges already copied to a device, keyed by
        # (array library, device, stream) (see _device.Results.edges)
        self.device_edges: Optional[dict] = None
        self.frozen = False

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "frozen", False):
            raise AttributeError("gpuhist: a cached BinPlan is shared and cannot change")
        object.__setattr__(self, name, value)

    def freeze(self) -> "BinPlan":
        """Make the plan shareable: its arrays read-only, its fields fixed."""
        for a in (self.edges, self.src, self.dst, self.np_edges):
            if isinstance(a, np.ndarray):
                a.flags.writeable = False
        self.device_edges = {}
        self.frozen = True
        return self

    def returned_edges(self) -> Any:
        """np_edges as handed to a caller: a copy of a shared (cached) plan's, which the caller
        may write into."""
        return self.np_edges.copy() if self.frozen else self.np_edges

    def args(self) -> Tuple[int, int, float, float, Optional[np.ndarray], int, bool, bool]:
        """The library's spec, as _core.Context.histogram takes it after the samples."""
        return (self.kind, self.bins, self.lower, self.upper, self.edges, self.integer_lower,
                self.last_inclusive, self.clamp)


def library_dtype(dtype: np.dtype) -> str:
    """The library's name of a NumPy sample dtype ('u8'..'f64'); TypeError otherwise."""
    kind, size = dtype.kind, dtype.itemsize
    if kind == "b":
        return "u8"
    if kind in "ui" and size in (1, 2, 4, 8):
        return f"{kind}{size * 8}"
    if kind == "f" and size in (4, 8):
        return f"f{size * 8}"
    raise TypeError(f"gpuhist: samples of dtype {dtype} are not supported "
                    f"(bool, uint8..int64, float32, float64)")


def check_memory(bins: int, bytes_per_bin: int = 24) -> None:
    """MemoryError before allocating the results of a request that cannot fit."""
    if bins > MAX_BINS:
        raise MemoryError(f"gpuhist: {bins} bins; the library counts at most {MAX_BINS} bins "
                          f"per histogram")
    available = _core.host_memory_available()
    need = bins * bytes_per_bin
    if available and need > available:
        raise MemoryError(f"gpuhist: {bins} bins need about {need / 2**30:.1f} GiB of host "
                          f"memory, {available / 2**30:.1f} GiB are available")


def outer_edges(size: int, rng: Any, finite_minmax: Callable[[], Tuple[Any, Any]]
                ) -> Tuple[Any, Any, bool]:
    """numpy's _get_outer_edges: (first_edge, last_edge, auto_range), same errors.

    finite_minmax() gives the data's finite min and max as NumPy scalars of the data's dtype
    (a.min() and a.max() when the data is finite) and raises NumPy's error when nothing is
    finite; auto_range tells the caller to check the data had no NaN or inf (NumPy raises then).
    """
    auto = False
    if rng is not None:
        first_edge, last_edge = rng
        if first_edge > last_edge:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
            raise ValueError(f"supplied range of [{first_edge}, {last_edge}] is not finite")
    elif size == 0:
        first_edge, last_edge = 0, 1
    else:
        first_edge, last_edge = finite_minmax()
        auto = True
    if first_edge == last_edge:
        first_edge = first_edge - 0.5
        last_edge = last_edge + 0.5
    return first_edge, last_edge, auto


def check_bins_string(bins: str, weighted: bool) -> None:
    """NumPy's checks on a bin rule name, with NumPy's messages."""
    if bins not in BIN_RULES:
        raise ValueError(f"{bins!r} is not a valid estimator for `bins`")
    if weighted:
        raise TypeError("Automated estimation of the number of bins is not supported for "
                        "weighted data")


def even_plan(n: int, first_edge: Any, last_edge: Any, dtype: np.dtype, auto: bool) -> BinPlan:
    """Even bins as numpy.histogram builds them for data of `dtype` (already NumPy-checked)."""
    check_memory(n)
    proto = np.empty(0, dtype=dtype)
    bin_type = np.result_type(first_edge, last_edge, proto)
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    np_edges = np.linspace(first_edge, last_edge, n + 1, endpoint=True, dtype=bin_type)
    if n > 0 and np.any(np_edges[:-1] >= np_edges[1:]):
        # NumPy 2's message (NumPy 1 bins with such edges; the library refuses them)
        raise ValueError(f"Too many bins for data range. Cannot create {n} finite-sized bins.")
    plan = BinPlan()
    plan.out_bins = n
    plan.bins = n
    plan.np_edges = np_edges
    plan.auto_range = auto
    plan.last_inclusive = True
    if bin_type not in (np.float16, np.float32, np.float64):
        raise TypeError(f"gpuhist: bin edges of dtype {bin_type} are not supported "
                        f"(float32, float64)")
    lib_name = "f32" if dtype == np.float16 else library_dtype(dtype)  # f16: widened
    edges64 = np_edges.astype(np.float64)
    # the library's EVEN edges are float for f32 samples, double otherwise
    lib_edge_type = np.float32 if lib_name == "f32" else np.float64
    if bin_type == lib_edge_type:
        lower, upper = float(first_edge), float(last_edge)
        # float32 data: NumPy 2 computes the linspace in float32 when both ends are float32
        # (an automatic range); either kind of library edge is tried, the likelier first
        kinds = [KIND_EVEN]
        if lib_name == "f32" and dtype == np.float32:
            f32_ends = NUMPY_2 and np.result_type(first_edge, last_edge) == np.float32
            kinds = [KIND_EVEN_F32_LINSPACE, KIND_EVEN] if f32_ends else \
                [KIND_EVEN, KIND_EVEN_F32_LINSPACE]
        for kind in kinds:
            try:
                lib = _core.compute_edges(kind, n, lower, upper, 0, lib_name)
            except ValueError:  # (the float32 linspace's edges may not increase)
                continue
            if np.array_equal(lib, edges64):
                plan.kind = kind
                plan.lower, plan.upper = lower, upper
                return plan
    plan.kind = KIND_EDGES
    plan.edges = edges64
    return plan


def exact_float64_edges(bin_edges: np.ndarray) -> np.ndarray:
    """Edges as float64, refusing values a double cannot hold exactly (the library's edges are
    doubles; rounding one would move samples between bins)."""
    kind = bin_edges.dtype.kind
    if kind == "O":
        values = bin_edges.tolist()
        try:
            e = np.array([float(v) for v in values], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("gpuhist: bin edges must be real numbers") from exc
        inexact = [v for v, f in zip(values, e.tolist()) if f == f and f != v]
    elif kind in "buif":
        e = bin_edges.astype(np.float64)
        inexact = []
        if kind in "ui":
            big = (bin_edges > 2**53) | (bin_edges < -(2**53))
            inexact = [int(v) for v, f in zip(bin_edges[big].tolist(), e[big].tolist())
                       if int(f) != int(v)]
        elif kind == "f" and bin_edges.dtype.itemsize > 8:
            inexact = bin_edges[e.astype(bin_edges.dtype) != bin_edges].tolist()
    else:
        raise TypeError(f"gpuhist: bin edges of dtype {bin_edges.dtype} are not supported "
                        f"(real numbers)")
    if inexact:
        raise ValueError(f"gpuhist: bin edge {inexact[0]!r} is not exactly a float64 (the "
                         f"library compares samples with float64 edges)")
    if np.isnan(e).any():
        raise ValueError("gpuhist: bin edges must not be NaN")
    return e


def edges_plan(bin_edges: np.ndarray) -> BinPlan:
    """Explicit, non-decreasing edges (at least 2) as NumPy bins with them: bin i is
    [e[i], e[i+1]), the last one [e[n-1], e[n]]."""
    e = exact_float64_edges(bin_edges)
    n = e.size - 1
    check_memory(n)
    plan = BinPlan()
    plan.out_bins = n
    plan.np_edges = bin_edges
    plan.kind = KIND_EDGES
    if np.all(e[:-1] < e[1:]) and np.isfinite(e[0]) and np.isfinite(e[-1]):
        # the common case: the library's own rule (last edge inclusive)
        plan.bins = n
        plan.edges = e
        plan.last_inclusive = True
        return plan
    if n >= 2 and e[n - 1] == np.inf:
        raise NotImplementedError("gpuhist: a last bin [inf, inf] is not supported")
    top = np.nextafter(e[n], np.inf)  # x <= e[n]  <=>  x < top (no double between them)
    uppers = np.concatenate([e[1:n], [top]])
    nonempty = uppers > e[:n]
    lib = np.unique(np.concatenate([e[:n], [top]]))
    src = np.searchsorted(lib, e[:n][nonempty])
    dst = np.nonzero(nonempty)[0]
    low_inf, high_inf = lib[0] == -np.inf, lib[-1] == np.inf
    clamp = bool(low_inf or high_inf)
    if clamp:
        if lib.size == 2 and low_inf and high_inf:
            lib = np.array([0.0, 1.0])  # one bin holding every sample but NaN
        else:
            lib = lib.copy()
            if low_inf:
                lib[0] = np.nextafter(lib[1], -np.inf)
            if high_inf:
                lib[-1] = np.nextafter(lib[-2], np.inf)
        # the finite end's outliers go to an extra bin, dropped, instead of the end bin
        if not low_inf:
            lib = np.concatenate([[np.nextafter(lib[0], -np.inf)], lib])
            src = src + 1
        if not high_inf:
            lib = np.concatenate([lib, [np.nextafter(lib[-1], np.inf)]])
        if not np.all(np.isfinite(lib)) or not np.all(lib[:-1] < lib[1:]):
            raise NotImplementedError("gpuhist: these bin edges reach the end of the float64 "
                                      "range; the library needs finite edges around them")
    plan.bins = lib.size - 1
    plan.edges = lib
    plan.last_inclusive = False
    plan.clamp = clamp
    if not (plan.bins == n and np.array_equal(src, np.arange(n))):
        plan.src, plan.dst = src, dst
    return plan


EXACT_DOUBLE_INTEGERS = 2**53  # every integer of magnitude up to 2^53 is a float64


def _first_true(lo: int, hi: int, pred: Callable[[int], bool]) -> int:
    """The least x in [lo, hi] where the monotone pred turns true, hi + 1 if it never does."""
    while lo <= hi:
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


def numpy_int64_rule(plan: BinPlan, dtype: np.dtype, outer: Optional[Tuple[Any, Any]],
                     edge_dtype: Optional[np.dtype] = None) -> Optional[Tuple[int, int]]:
    """How NumPy bins 64-bit integer samples, where that differs from the library's exact
    comparisons: plan.as_double's (lo, hi), or None.

    numpy.histogram compares 64-bit integers with float64 edges after rounding them to float64:
    with even bins (a number of bins or a rule) it keeps the samples x with first_edge <= x <=
    last_edge (NumPy's comparison of the array with those values: exact for integer values,
    in float64 for float values) and bins float64(x) of the kept ones; with an array of edges it
    places float64(x) among them (searchsorted in the common type; exact when the edges are
    integers of a type that promotes to an integer type). The library compares the integer
    itself, which gives the same bins as long as every library edge is below 2^53 in
    magnitude: a sample beyond 2^53 is then beyond every edge whether rounded or not. `outer`:
    the (first_edge, last_edge) NumPy keeps between (None: an array of edges, or an automatic
    range, which keeps everything).
    """
    if dtype.kind not in "ui" or dtype.itemsize != 8 or plan.bins == 0:
        return None
    lib = plan.edges if plan.kind == KIND_EDGES else np.array([plan.lower, plan.upper])
    if lib is None or float(np.max(np.abs(lib))) < EXACT_DOUBLE_INTEGERS:
        return None
    if edge_dtype is not None and np.result_type(dtype, edge_dtype).kind in "ui":
        return None  # integer edges: NumPy's searchsorted compares exactly too
    info = np.iinfo(dtype)
    dmin, dmax = int(info.min), int(info.max)
    if outer is None:
        return (dmin, dmax)
    first_edge, last_edge = outer
    probe = np.zeros(1, dtype)

    def at_least_first(x: int) -> bool:
        probe[0] = x
        return bool((probe >= first_edge)[0])

    def above_last(x: int) -> bool:
        probe[0] = x
        return not bool((probe <= last_edge)[0])

    lo = _first_true(dmin, dmax, at_least_first)
    hi = _first_true(dmin, dmax, above_last) - 1
    if lo > hi:
        return (dmax, dmin)  # nothing kept: every sample is below lo or above hi
    return (lo, hi)


def _ordinal_codec(dtype: np.dtype) -> Tuple[int, int, Callable[[int], Any]]:
    """The values of a float or (below 64 bits) integer dtype as consecutive integers in
    their order: (least, greatest, value_of); value_of(k) is a one-element array."""
    probe = np.zeros(1, dtype)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)

        def int_value(k: int) -> Any:
            probe[0] = k
            return probe
        return int(info.min), int(info.max), int_value
    utype = np.dtype("u%d" % dtype.itemsize)
    bits = probe.view(utype)
    sign = 1 << (8 * dtype.itemsize - 1)
    inf = int(np.array([np.inf], dtype).view(utype)[0])

    def float_value(k: int) -> Any:
        bits[0] = k if k >= 0 else (-k) | sign
        return probe
    return -inf, inf, float_value


def numpy_keep_rule(plan: BinPlan, dtype: np.dtype, first_edge: Any, last_edge: Any) -> None:
    """Even bins over a given range keep NumPy's samples, not those of its edges.

    numpy.histogram keeps the samples x with first_edge <= x <= last_edge, compared as NumPy
    compares the array with the range's values, and bins only those among its edges, putting a
    kept sample above the last edge into the last bin. The edges are np.linspace's, which need
    not hold the range's values: NumPy 2 computes the linspace in the range's own type (a
    float16 start with a Python float stop gives float16 edges, even for float32 samples,
    while the comparison rounds the stop to float32), NumPy 1.x rounds a float64 range to
    float32 edges. Where the samples the comparisons keep are not those between the edges,
    the plan becomes explicit edges that start at the least kept sample and end at the
    greatest (the bins beyond them empty): NumPy's counts."""
    if plan.bins == 0 or dtype.kind not in "uif" or (dtype.kind in "ui" and dtype.itemsize == 8):
        return  # 64-bit integers: numpy_int64_rule
    least, greatest, value = _ordinal_codec(dtype)
    e = plan.edges if plan.kind == KIND_EDGES else np.asarray(plan.np_edges, np.float64)
    first, last = float(e[0]), float(e[-1])
    with np.errstate(invalid="ignore"):
        keep_lo = _first_true(least, greatest, lambda k: bool((value(k) >= first_edge)[0]))
        keep_hi = _first_true(least, greatest, lambda k: not bool((value(k) <= last_edge)[0])) - 1
        lib_lo = _first_true(least, greatest, lambda k: float(value(k)[0]) >= first)
        lib_hi = _first_true(least, greatest, lambda k: float(value(k)[0]) > last) - 1
    if keep_lo == lib_lo and keep_hi == lib_hi:
        return
    n = e.size - 1
    if keep_lo > keep_hi:  # nothing kept: every bin empty
        plan.src = plan.dst = np.zeros(0, np.intp)
        return
    lo, hi = float(value(keep_lo)[0]), float(value(keep_hi)[0])
    # NumPy's bins of the least and greatest kept samples (one above the last edge: the last)
    j = min(max(int(np.searchsorted(e, lo, "right")) - 1, 0), n - 1)
    k = min(max(int(np.searchsorted(e, hi, "right")) - 1, 0), n - 1)
    inner = [float(v) for v in e[j + 1:k + 1]]
    below = inner[-1] if inner else lo
    top = hi if hi > below else float(np.nextafter(hi, np.inf))  # x <= hi: no double between
    plan.kind = KIND_EDGES
    plan.edges = np.array([lo] + inner + [top], np.float64)
    plan.bins = k - j + 1
    plan.last_inclusive = True
    plan.clamp = False
    plan.src = np.arange(plan.bins)
    plan.dst = np.arange(j, k + 1)


# Plans of a number of bins over a given range depend on nothing but the arguments, and
# building one costs NumPy's linspace plus the library's edges (about 7 ms for 2^20 bins): the
# last few are kept, least recently used first out, up to PLAN_CACHE_ENTRIES plans and
# PLAN_CACHE_BYTES of edge arrays; a plan of more than half that is built on every call. 2^24
# float64 edges (134 MB) fit: planning them costs ~0.2 s a call (NumPy's linspace, the
# library's edges, their comparison).
PLAN_CACHE_ENTRIES = 8
PLAN_CACHE_BYTES = 320 << 20
_plan_cache: "OrderedDict[Any, Tuple[BinPlan, int]]" = OrderedDict()
_plan_cache_bytes = 0
_plan_cache_lock = threading.Lock()


def _range_value_key(x: Any) -> Any:
    """A key telling apart every range value that NumPy's edges tell apart (value, type,
    sign of zero), or None for values not cached (anything but Python and NumPy reals)."""
    t = type(x)
    if t is int or (isinstance(x, np.integer) and t.__module__ == "numpy"):
        return (t, int(x))
    if t is float or t in (np.float16, np.float32, np.float64):
        return (t, float(x), math.copysign(1.0, float(x)))
    return None


def _plan_key(bins: Any, rng: Any, dtype: np.dtype, weighted: bool) -> Any:
    """The cache key of plan_bins' arguments, or None when the plan is not cached (a rule name,
    an array of edges, an automatic range: those depend on the data or an array's contents)."""
    if rng is None or isinstance(bins, (str, bool, np.bool_)) or \
            not isinstance(bins, (int, np.integer)):
        return None
    try:
        lo, hi = rng
    except (TypeError, ValueError):
        return None
    klo, khi = _range_value_key(lo), _range_value_key(hi)
    if klo is None or khi is None:
        return None
    return (int(bins), klo, khi, np.dtype(dtype), bool(weighted))


def _plan_bytes(plan: BinPlan) -> int:
    return sum(a.nbytes for a in (plan.edges, plan.src, plan.dst, plan.np_edges)
               if isinstance(a, np.ndarray))


def clear_plan_cache() -> None:
    """Forget the cached plans (and their device edges)."""
    global _plan_cache_bytes
    with _plan_cache_lock:
        _plan_cache.clear()
        _plan_cache_bytes = 0


def plan_bins(bins: Any, rng: Any, dtype: np.dtype, size: int, weighted: bool,
              finite_minmax: Callable[[], Tuple[Any, Any]],
              rule_bins: Optional[Callable[[str, Any], int]] = None,
              cache: bool = False) -> BinPlan:
    """numpy's _get_bin_edges, as a library request (see the module's docstring).

    A rule name (bins='auto', 'fd', ...) takes its bin count from the library
    (gpuhist_bins_rule_numpy with the installed NumPy's major version, NUMPY_MAJOR, through
    rule_bins(rule, range)); the outer edges and the edges
    themselves follow NumPy's rules as for a number of bins.

    cache=True: a number of bins over a given range comes from (and goes to) the plan cache,
    frozen (BinPlan.freeze): the caller must not change it, and hands out its edges through
    BinPlan.returned_edges.
    """
    global _plan_cache_bytes
    key = _plan_key(bins, rng, dtype, weighted) if cache else None
    if key is None:
        return _plan_bins(bins, rng, dtype, size, weighted, finite_minmax, rule_bins)
    with _plan_cache_lock:
        hit = _plan_cache.get(key)
        if hit is not None:
            _plan_cache.move_to_end(key)
            return hit[0]
    plan = _plan_bins(bins, rng, dtype, size, weighted, finite_minmax, rule_bins)
    nbytes = _plan_bytes(plan)
    if nbytes > PLAN_CACHE_BYTES // 2:
        return plan
    plan.freeze()
    with _plan_cache_lock:
        if key not in _plan_cache:
            _plan_cache[key] = (plan, nbytes)
            _plan_cache_bytes += nbytes
            while len(_plan_cache) > PLAN_CACHE_ENTRIES or _plan_cache_bytes > PLAN_CACHE_BYTES:
                _, (_, b) = _plan_cache.popitem(last=False)
                _plan_cache_bytes -= b
    return plan


def _plan_bins(bins: Any, rng: Any, dtype: np.dtype, size: int, weighted: bool,
               finite_minmax: Callable[[], Tuple[Any, Any]],
               rule_bins: Optional[Callable[[str, Any], int]]) -> BinPlan:
    if isinstance(bins, str):
        check_bins_string(bins, weighted)
        first_edge, last_edge, auto = outer_edges(size, rng, finite_minmax)
        if rule_bins is None:
            raise NotImplementedError(f"gpuhist: bins={bins!r} is not supported here")
        # the library's rules are the installed NumPy's (rule_bins passes NUMPY_MAJOR)
        n = 1 if size == 0 else rule_bins(bins, rng)
        plan = even_plan(n, first_edge, last_edge, dtype, auto)
        plan.as_double = numpy_int64_rule(plan, dtype, None if auto else (first_edge,
                                                                            last_edge))
        if not auto:
            numpy_keep_rule(plan, dtype, first_edge, last_edge)
        return plan
    if np.ndim(bins) == 0:
        try:
            n = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first_edge, last_edge, auto = outer_edges(size, rng, finite_minmax)
        plan = even_plan(n, first_edge, last_edge, dtype, auto)
        plan.as_double = numpy_int64_rule(plan, dtype, None if auto else (first_edge,
                                                                            last_edge))
        if not auto:
            numpy_keep_rule(plan, dtype, first_edge, last_edge)
        return plan
    if np.ndim(bins) == 1:
        bin_edges = np.asarray(bins)
        if np.any(bin_edges[:-1] > bin_edges[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        if bin_edges.size < 2:
            plan = BinPlan()
            plan.np_edges = bin_edges
            plan.bins = 0  # nothing to count: NumPy returns an empty histogram
            return plan
        plan = edges_plan(bin_edges)
        plan.as_double = numpy_int64_rule(plan, dtype, None, bin_edges.dtype)
        return plan
    raise ValueError("`bins` must be 1d, when an array")
