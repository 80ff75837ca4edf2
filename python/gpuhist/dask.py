"""gpuhist.dask: numpy.histogram, numpy.bincount and numpy.histogramdd / histogram2d over dask
arrays, counted chunk by chunk by the gpuhist library and merged exactly.

    import dask.array as da, gpuhist.dask
    x = da.random.random(10**9, chunks=10**7)
    hist, edges = gpuhist.dask.histogram(x, bins=1000, range=(0, 1))   # hist: a lazy dask array
    hist.compute()                                  # == gpuhist.histogram(x.compute(), ...)

Mechanism:
- The bins are resolved once, on the client, by NumPy's rules (python/gpuhist/_plan.py, as
  gpuhist.histogram does); an automatic range (range=None, bins an int) first computes the
  data's finite min and max: one eager pass over the chunks (gpuhist_minmax on each chunk,
  min of mins, max of maxes), so the data is computed twice unless it is persisted.
- Each chunk is counted by gpuhist on the worker that holds it (NumPy chunks on the host
  backends; CuPy / CUDA chunks through the device path, in place), giving one int64 row:
  the bins' counts, the tallies (underflow, overflow, NaN, total) and, with weights, the
  chunk's exact weight state (result.weight_state: the unrounded sums as integer limbs).
- The rows are reduced in a tree (dask.array.reduction, `split_every` rows at a time): counts
  and tallies by int64 addition, weight states by gpuhist_weight_state_add; both are exact
  and associative, so the result does not depend on the chunking or the tree. The last step
  rounds each sum once (gpuhist_weight_state_sums): the counts and sums are those of
  gpuhist.histogram / gpuhist.bincount on the whole array, bit for bit.
- histogramdd: the edges are fixed on the client (an axis given a bin count needs its range);
  each chunk of whole points gives gpuhist.histogramdd's float64 counts (integers, exact below
  2^53), added in a tree; with weights, each chunk's row holds its joint counts and its exact
  N-D weight state (gpuhist_nd_result.weight_state), reduced as the 1-D rows are and rounded
  once; density is applied to the total.

Limits: bin rule names (bins='auto', 'fd', ...) need the whole data and are refused
(NotImplementedError): compute the edges first. bincount always makes a first pass (its length
is max(x) + 1). Weights of device chunks (histogram, bincount) are device chunks too: the
CUDA backend sums them and returns each chunk's state to the host; weighted N-D device
chunks are refused. Each
chunk's row holds bins + 4 words, plus a weight state of 11 (float32 weights) or 69 (float64)
words per bin (and 3 more slots): many bins and many chunks cost memory in the tree.
dask is imported on first use: the gpuhist package works without it.
"""

from __future__ import annotations

import operator
import warnings
from functools import partial
from typing import Any, List, Optional, Tuple

import builtins

import numpy as np

from . import _api, _context, _core, _device
from ._plan import KIND_INTEGER, check_bins_string, check_memory, library_dtype, plan_bins

__all__ = ["bincount", "histogram", "histogram2d", "histogramdd"]

_range_ = builtins.range  # `range` is an argument name below

TALLIES = 4  # underflow, overflow, NaN, total (the first four fields of a call's tallies)


def _dask() -> Tuple[Any, Any]:
    try:
        import dask  # noqa: PLC0415
        import dask.array as da  # noqa: PLC0415
    except ImportError as e:
        raise ImportError("gpuhist.dask needs dask with dask.array (Debian: python3-dask; "
                          "pip: 'dask[array]')") from e
    return dask, da


def _check_dask_array(da: Any, a: Any, what: str, fn: str) -> None:
    if not isinstance(a, da.Array):
        raise TypeError(f"gpuhist.dask.{fn}: {what} must be a dask.array.Array, not "
                        f"{type(a).__name__} (gpuhist.{fn} takes NumPy, CuPy and torch arrays)")


def _computed(dask: Any, value: Any) -> Any:
    """A dask collection given for bins, range or minlength, computed; anything else as is."""
    if dask.is_dask_collection(value):
        return dask.compute(value)[0]
    if isinstance(value, (tuple, list)) and any(dask.is_dask_collection(v) for v in value):
        return type(value)(dask.compute(*value))
    return value


def _weight_name(dtype: np.dtype) -> str:
    """The library's weight type for weights of `dtype` (as gpuhist._core picks it: float32
    stays float32, every other real dtype is read as float64); TypeError for the rest."""
    if dtype.kind == "f" and dtype.itemsize == 4:
        return "f32"
    if dtype.kind in "biuf" and np.can_cast(dtype, np.float64, "safe"):
        return "f64"
    raise TypeError(f"gpuhist: weights of dtype {dtype} are not supported (real numbers only)")


def _dask_weights(da: Any, a: Any, weights: Any, fn: str) -> Any:
    """weights as a dask array chunked like a (rechunked when its chunks differ)."""
    if isinstance(weights, da.Array):
        w = weights
    else:
        if _device.lookup(weights) is not None:
            raise TypeError(f"gpuhist.dask.{fn}: weights must be a dask array or a host array "
                            f"(device weights: wrap them in a dask array of device chunks)")
        w = np.asarray(weights)
    if _unknown(a) or _unknown(w):
        # sizes known only when computed: the chunks must pair up (each pair's shapes are
        # checked when it is counted)
        if not (isinstance(w, da.Array) and _chunks_match(a.chunks, w.chunks)):
            raise ValueError(f"gpuhist.dask.{fn}: the weights' chunks differ from the data's "
                             f"and some chunk sizes are unknown; rechunk them alike")
        return w
    if w.shape != a.shape:
        if fn == "bincount":
            raise ValueError("The weights and list don't have the same length.")
        raise ValueError("weights should have the same shape as a.")
    if not isinstance(w, da.Array):
        return da.from_array(w, chunks=a.chunks)
    if w.chunks != a.chunks:
        w = w.rechunk(a.chunks)
    return w


def _unknown(x: Any) -> bool:
    """Whether some of x's sizes are unknown (NaN: a dask array cut by a boolean mask)."""
    return any(isinstance(n, float) and n != n for n in x.shape)


def _chunks_match(x: tuple, y: tuple) -> bool:
    """The same chunk structure, an unknown size matching only an unknown size."""
    if len(x) != len(y) or any(len(cx) != len(cy) for cx, cy in zip(x, y)):
        return False
    return all(p == q or (p != p and q != q) for cx, cy in zip(x, y) for p, q in zip(cx, cy))


# ---- work on one chunk (runs on the workers) -------------------------------------------------

class _Spec:
    """What every chunk's call needs: the backend, strategy, the library's bin spec
    (Context.histogram's arguments after the samples), the weight type ('' unweighted) and
    NumPy's rule for 64-bit integers (BinPlan.as_double). One object in the graph, shared by the
    chunk tasks."""

    __slots__ = ("backend", "strategy", "args", "wname", "as_double", "bins", "state_words")

    def __init__(self, backend: str, strategy: Optional[str], args: tuple, wname: str,
                 as_double: Optional[Tuple[int, int]] = None) -> None:
        self.backend = backend
        self.strategy = strategy
        self.args = args
        self.wname = wname
        self.as_double = as_double
        self.bins = int(args[1])
        self.state_words = _core.weight_state_words(self.bins, wname, False) if wname else 0

    def __getstate__(self) -> tuple:
        return (self.backend, self.strategy, self.args, self.wname, self.as_double)

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)  # type: ignore[misc]

    @property
    def row_length(self) -> int:
        return self.bins + TALLIES + self.state_words


def _host_samples(block: Any) -> np.ndarray:
    """A host chunk as the library reads it (bool as uint8, float16 widened to float32)."""
    a = np.asarray(block)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    if a.dtype == np.float16:
        return a.astype(np.float32)
    return a


def _device_counts(dev: _device.DeviceArray, spec: _Spec, wblock: Any = None,
                   state: Optional[np.ndarray] = None) -> Tuple[np.ndarray, tuple]:
    """A device chunk counted in place on its GPU (gpuhist's device path), counts copied back;
    with weights (device weights of the chunk's shape), their exact weight state into
    `state` (the library sums them on the CUDA backend, returning the state to the host)."""
    if dev.size == 0:
        if state is not None:  # the empty state: every limb and flag 0
            state[:] = 0
        return np.zeros(spec.bins, np.int64), (0, 0, 0, 0)
    ctx = _api._device_context(dev, spec.backend, spec.strategy, None, False)
    res = _device.Results(dev)
    if spec.as_double is not None:
        dev = _device.as_float64(dev, spec.as_double)
    if wblock is not None:
        w, _ = _device.device_weights(dev, wblock)
        ctx.configure(ctx.strategy, ctx.stream, False)
        counts = np.empty(spec.bins, np.int64)
        sums = np.empty(spec.bins, np.float64)
        tallies = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                         *spec.args, counts.ctypes.data, False, None, None,
                                         w.ptr, w.dtype, sums, None, state)
        return counts, tallies
    counts = res.empty(spec.bins, np.int64)
    tallies = ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True,
                                     *spec.args, res.pointer(counts), res.on_device)
    return res.to_numpy(counts), tallies


def _chunk_row(block: Any, wblock: Any, spec: _Spec) -> np.ndarray:
    """One chunk's (1, row_length) int64 row: counts, tallies, weight state."""
    row = np.zeros((1, spec.row_length), np.int64)
    dev = _device.lookup(block)
    if dev is not None:
        if spec.wname:
            if _device.lookup(wblock) is None:
                raise TypeError("gpuhist: weights on the host with samples on a device; pass "
                                "both on the device")
            state = np.empty(spec.state_words, np.int64)
            counts, tallies = _device_counts(dev, spec, wblock, state)
            row[0, spec.bins + TALLIES:] = state
        else:
            counts, tallies = _device_counts(dev, spec)
        row[0, :spec.bins] = counts
    else:
        a = _host_samples(block)
        ctx = _context.get(spec.backend, -1, spec.strategy)
        counts = row[0, :spec.bins]
        if spec.wname:
            if _device.lookup(wblock) is not None:
                raise TypeError("gpuhist: weights on a device with samples on the host; "
                                "pass both on the host")
            state = np.empty(spec.state_words, np.int64)
            sums = np.empty(spec.bins, np.float64)
            tallies = ctx.core.histogram(a, *spec.args, counts, np.asarray(wblock), sums, None,
                                         None, state, as_double=spec.as_double)
            row[0, spec.bins + TALLIES:] = state
        else:
            tallies = ctx.core.histogram(a, *spec.args, counts, as_double=spec.as_double)
    row[0, spec.bins:spec.bins + TALLIES] = tallies[:TALLIES]
    return row


def _chunk_minmax(block: Any, backend: str, strategy: Optional[str]) -> Tuple[int, bool, Any, Any]:
    """(samples, found, finite min, finite max) of one chunk, by gpuhist_minmax; 64-bit
    integers beyond 2^53 exactly (gpuhist_minmax rounds them outwards)."""
    dev = _device.lookup(block)
    if dev is not None:
        if dev.size == 0:
            return 0, False, 0, 0
        ctx = _api._device_context(dev, backend, strategy, None, False)
        mn, mx, found = ctx.core.minmax_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True)
        size, dtype, obj = dev.size, dev.np_dtype, dev.obj
    else:
        a = _host_samples(block)
        ctx = _context.get(backend, -1, strategy)
        mn, mx, found = ctx.core.minmax(a)
        size, dtype, obj = a.size, a.dtype, a
    if found and dtype.kind in "ui" and dtype.itemsize == 8 and max(abs(mn), abs(mx)) > 2**53:
        mn, mx = int(obj.min()), int(obj.max())
    return size, bool(found), mn, mx


def _global_minmax(dask: Any, a: Any, backend: str, strategy: Optional[str]
                   ) -> Tuple[int, bool, Any, Any]:
    """The first pass: (samples, found, min, max) over every chunk, computed now."""
    parts = dask.compute(*[dask.delayed(_chunk_minmax)(b, backend, strategy)
                           for b in a.to_delayed().ravel()])
    size, found, mn, mx = 0, False, 0, 0
    for n, f, lo, hi in parts:
        size += n
        if f:
            mn = lo if not found or lo < mn else mn
            mx = hi if not found or hi > mx else mx
            found = True
    return size, found, mn, mx


# ---- the tree -------------------------------------------------------------------------------

def _rows_first(x: np.ndarray, axis: Any = None, keepdims: Any = None) -> np.ndarray:
    return x


def _rows_add(bins: int, wname: str, x: np.ndarray, axis: Any = None, keepdims: bool = False
              ) -> np.ndarray:
    """Rows (k, row_length) added exactly into one: counts and tallies as int64, weight
    states by gpuhist_weight_state_add."""
    head = bins + TALLIES
    out = np.empty((1, x.shape[1]), np.int64)
    out[0, :head] = x[:, :head].sum(axis=0, dtype=np.int64)
    if wname:
        state = np.ascontiguousarray(x[0, head:])
        for r in range(1, x.shape[0]):
            _core.weight_state_add(state, np.ascontiguousarray(x[r, head:]), bins, wname, False)
        out[0, head:] = state
    return out if keepdims else out[0]


def _reduce_rows(da: Any, rows: Any, spec: _Spec, split_every: Any) -> Any:
    add = partial(_rows_add, spec.bins, spec.wname)
    return da.reduction(rows, chunk=_rows_first, combine=add, aggregate=add, axis=0,
                        keepdims=False, dtype=np.int64, split_every=split_every,
                        concatenate=True, meta=np.empty((0,), np.int64),
                        name="gpuhist-merge")


def _chunk_rows(da: Any, a: Any, weights: Any, spec: Any, fn: str, row: Any = None) -> Any:
    """A dask array (chunks, row_length) int64: one row per chunk of a (of its rows when a is
    2-D and chunked along its first axis only), each counted by row(chunk, weights chunk,
    spec) (default _chunk_row) where the chunk is."""
    row = _chunk_row if row is None else row
    from dask.base import tokenize  # noqa: PLC0415
    from dask.core import flatten  # noqa: PLC0415
    from dask.highlevelgraph import HighLevelGraph  # noqa: PLC0415

    token = tokenize(a, weights, spec.backend, spec.strategy, spec.args, spec.wname)
    name = f"gpuhist-{fn}-chunk-{token}"
    spec_key = f"gpuhist-{fn}-spec-{token}"
    a_keys = list(flatten(a.__dask_keys__()))
    w_keys: List[Any] = (list(flatten(weights.__dask_keys__())) if weights is not None
                         else [None] * len(a_keys))
    dsk: dict = {spec_key: spec}
    for i, (k, wk) in enumerate(zip(a_keys, w_keys)):
        dsk[(name, i, 0)] = (row, k, wk, spec_key)
    deps = [a] if weights is None else [a, weights]
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=deps)
    return da.Array(graph, name, chunks=((1,) * len(a_keys), (spec.row_length,)),
                    dtype=np.int64, meta=np.empty((0, 0), np.int64))


def _nonfinite_message(dtype: np.dtype, tallies: np.ndarray, mn: Any, mx: Any) -> str:
    """NumPy's message for an automatic range over data holding NaN or inf (a.min(), a.max()
    from the tallies: any NaN makes both NaN, else -inf / inf where samples fell outside)."""
    t = dtype.type
    under, over, nan = (int(v) for v in tallies[:3])
    lo = t(np.nan) if nan else t(-np.inf) if under else t(mn)
    hi = t(np.nan) if nan else t(np.inf) if over else t(mx)
    return f"autodetected range of [{lo}, {hi}] is not finite"


def _finish(row: np.ndarray, spec: _Spec, clamp: bool, src: Any, dst: Any, out_bins: int,
            out_dtype: Any, density: bool, np_edges: Any, auto: Any) -> np.ndarray:
    """The merged row as NumPy's result: counts, or the sums rounded once, in NumPy's bins."""
    bins = spec.bins
    tallies = row[bins:bins + TALLIES]
    if auto is not None and (tallies[0] or tallies[1] or tallies[2]):
        raise ValueError(_nonfinite_message(auto[0], tallies, auto[1], auto[2]))
    if spec.wname:
        lib = np.empty(bins, np.float64)
        _core.weight_state_sums(np.ascontiguousarray(row[bins + TALLIES:]), bins, spec.wname,
                                False, clamp, lib)
    else:
        lib = np.ascontiguousarray(row[:bins])
    if src is None:
        n = lib
    else:
        n = np.zeros(out_bins, lib.dtype)
        n[dst] = lib[src]
    if n.dtype != out_dtype:
        n = n.astype(out_dtype)  # NumPy returns the weights' dtype
    if density:
        db = np.array(np.diff(np_edges), float)
        return n / db / n.sum()
    return n


def _finished(da: Any, merged: Any, fn: str, spec: _Spec, clamp: bool, src: Any, dst: Any,
              out_bins: int, out_dtype: Any, density: bool, np_edges: Any, auto: Any,
              result_dtype: Any) -> Any:
    """The lazy result: _finish on the merged row, under a name unique to its inputs."""
    from dask.base import tokenize  # noqa: PLC0415

    args = (spec, clamp, src, dst, out_bins, out_dtype, density, np_edges, auto)
    name = f"gpuhist-{fn}-" + tokenize(merged, spec.__getstate__(), *args[1:])
    return merged.map_blocks(_finish, *args, chunks=((out_bins,),), dtype=result_dtype,
                             meta=np.empty((0,), result_dtype), name=name)


# ---- the API --------------------------------------------------------------------------------

def histogram(a: Any, bins: Any = 10, range: Any = None, density: Optional[bool] = None,
              weights: Any = None, *, backend: str = "auto", strategy: Optional[str] = None,
              split_every: Any = None) -> Tuple[Any, Any]:
    """numpy.histogram of a dask array, counted chunk by chunk by gpuhist and merged exactly.

    Returns (hist, bin_edges) as dask.array.histogram does: hist a lazy dask array (one chunk:
    int64 counts, or the weights' dtype with weights, or float64 with density), bin_edges a
    NumPy array (NumPy's edges). hist.compute() equals gpuhist.histogram(a.compute(), ...) bit
    for bit, whatever the chunks; the weighted sums are each rounded once from the chunks'
    exact weight states.

    `a`: a dask.array.Array of NumPy chunks (bool, uint8..int64, float16/32/64) or CuPy / CUDA
    chunks (counted in place on their GPU). `bins`: an int or an array of edges (rule names
    such as 'auto' need the whole data: NotImplementedError). `range=None` with an int `bins`
    computes the data's min and max first (one eager pass). `weights`: a dask array (or a host
    array) of a's shape, rechunked to a's chunks when they differ. Keyword-only: `backend`,
    `strategy` (as gpuhist.histogram), `split_every` (rows added per step of the tree).
    """
    dask, da = _dask()
    _check_dask_array(da, a, "a", "histogram")
    dtype = np.dtype(a.dtype)
    if dtype == np.bool_:
        warnings.warn(f"Converting input from {dtype} to {np.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=2)
        rules_dtype = np.dtype(np.uint8)
    elif dtype == np.float16:
        rules_dtype = dtype
    else:
        library_dtype(dtype)  # TypeError for dtypes the library lacks
        rules_dtype = dtype
    w = None
    wname = ""
    if weights is not None:
        w = _dask_weights(da, a, weights, "histogram")
        wname = _weight_name(np.dtype(w.dtype))
    bins = _computed(dask, bins)
    range = _computed(dask, range)
    if isinstance(bins, str):
        check_bins_string(bins, w is not None)  # NumPy's errors first
        raise NotImplementedError(
            f"gpuhist.dask.histogram: bins={bins!r} needs the whole data (the rules use its "
            f"size, spread or quantiles); pass a number of bins or edges, e.g. the edges of "
            f"gpuhist.histogram_bin_edges(a.compute(), {bins!r})")
    rng_backend = _context.resolve_backend(backend, strategy, w is not None)
    size = a.size
    known = not np.isnan(size)
    first_pass: List[Any] = []

    def finite_minmax() -> Tuple[Any, Any]:
        n, found, mn, mx = _global_minmax(dask, a, rng_backend, strategy)
        first_pass.extend([mn, mx])
        if n == 0:  # unknown chunk sizes, no sample: NumPy's range of an empty array
            return 0, 1
        if not found:
            lo, hi = dask.compute(a.min(), a.max())
            raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")
        t = rules_dtype.type
        return t(mn), t(mx)

    plan = plan_bins(bins, range, rules_dtype, int(size) if known else 1, w is not None,
                     finite_minmax)
    if w is None:
        out_dtype = np.dtype(np.intp)
    else:
        out_dtype = np.dtype(w.dtype)
    if plan.bins == 0:  # fewer than two edges: NumPy's empty histogram
        n = np.zeros(max(plan.np_edges.size - 1, 0), out_dtype)
        if density:
            db = np.array(np.diff(plan.np_edges), float)
            n = n / db / n.sum()
        return da.from_array(n, chunks=-1), plan.np_edges
    spec = _Spec(rng_backend, None if strategy == "auto" else strategy, plan.args(), wname,
                 plan.as_double)
    rows = _chunk_rows(da, a, w, spec, "histogram")
    merged = _reduce_rows(da, rows, spec, split_every)
    auto = (rules_dtype, first_pass[0], first_pass[1]) if plan.auto_range and first_pass \
        else None
    result_dtype = np.dtype(np.float64) if density else out_dtype
    return _finished(da, merged, "histogram", spec, plan.clamp, plan.src, plan.dst,
                     plan.out_bins, out_dtype, bool(density), plan.np_edges, auto,
                     result_dtype), plan.np_edges


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, backend: str = "auto",
             strategy: Optional[str] = None, split_every: Any = None) -> Any:
    """numpy.bincount of a 1-D dask array of non-negative integers, counted chunk by chunk by
    gpuhist and merged exactly.

    Returns a lazy dask array (one chunk) of length max(x.max() + 1, minlength): int64 counts,
    or float64 sums of the weights, each rounded once from the chunks' exact weight states
    (equal to gpuhist.bincount(x.compute(), ...) bit for bit). The length needs x.max(): a
    first pass over the chunks (gpuhist_minmax) runs now, and refuses negative values with
    NumPy's ValueError. NumPy's checks (dimension, dtype, minlength) and messages otherwise.
    """
    dask, da = _dask()
    _check_dask_array(da, x, "x", "bincount")
    dtype = np.dtype(x.dtype)
    minlength = _computed(dask, minlength)
    # NumPy's own checks and messages, on zero-length stand-ins
    np.bincount(np.empty((0,) * x.ndim, dtype), minlength=minlength)
    if x.ndim != 1:
        raise ValueError("gpuhist: bincount needs a 1-D array")  # (NumPy raised above)
    minlength = 0 if minlength is None else operator.index(minlength)
    library_dtype(dtype)
    w = None
    wname = ""
    if weights is not None:
        if np.ndim(weights) != 1:
            raise ValueError("The weights and list don't have the same length.")
        w = _dask_weights(da, x, weights, "bincount")
        wname = _weight_name(np.dtype(w.dtype))
    empty_w = None if w is None else np.empty(0, w.dtype)
    if not np.isnan(x.size) and x.size == 0:
        return da.from_array(np.bincount(np.empty(0, dtype), empty_w, minlength), chunks=-1)
    rng_backend = _context.resolve_backend(backend, strategy, w is not None)
    n, found, mn, mx = _global_minmax(dask, x, rng_backend, strategy)
    if n == 0:
        return da.from_array(np.bincount(np.empty(0, dtype), empty_w, minlength), chunks=-1)
    if mn < 0:
        raise ValueError("'list' argument must have no negative elements")
    bins = max(int(mx) + 1, minlength)
    check_memory(bins)
    spec = _Spec(rng_backend, None if strategy == "auto" else strategy,
                 (KIND_INTEGER, bins, 0.0, 0.0, None, 0, False, False), wname)
    rows = _chunk_rows(da, x, w, spec, "bincount")
    merged = _reduce_rows(da, rows, spec, split_every)
    out_dtype = np.dtype(np.float64 if w is not None else np.intp)
    return _finished(da, merged, "bincount", spec, False, None, None, bins, out_dtype, False,
                     None, None, out_dtype)


def _nd_block(block: Any, edges: List[np.ndarray], axis_bins: List[Any], backend: str,
              strategy: Optional[str]) -> np.ndarray:
    """One chunk of points (rows) counted by the library on the fixed edges, each axis as
    gpuhist.histogramdd plans it (a bin count in axis_bins: the library's even bins where they
    are NumPy's edges bit for bit, else the edges): its counts with a leading axis of 1 (float64
    integers, as NumPy's H)."""
    from ._nd import _count  # noqa: PLC0415

    shape = tuple(e.size - 1 for e in edges)
    joint = int(np.prod(shape, dtype=np.int64))
    a = np.asarray(block)
    if joint == 0 or a.shape[0] == 0:
        return np.zeros((1,) + shape, np.float64)
    counts, _, _, _ = _count(a, edges, axis_bins, joint, None, backend, strategy)
    return counts.astype(np.float64).reshape((1,) + shape)


class _NdSpec:
    """What every weighted N-D chunk's call needs (pickled into the graph once): the fixed
    edges, the axes' bins arguments, the backend, the strategy and the weight type. Its rows
    are laid out as _Spec's (joint counts, 4 tallies, the weight state), so _reduce_rows adds
    them."""

    __slots__ = ("backend", "strategy", "edges", "axis_bins", "wname", "bins", "args",
                 "state_words")

    def __init__(self, backend: str, strategy: Optional[str], edges: List[np.ndarray],
                 axis_bins: List[Any], wname: str) -> None:
        self.backend = backend
        self.strategy = strategy
        self.edges = edges
        self.axis_bins = axis_bins
        self.wname = wname
        self.bins = int(np.prod([e.size - 1 for e in edges], dtype=np.int64))
        self.args = tuple(tuple(e.tolist()) for e in edges)  # (for dask's tokenize)
        self.state_words = _core.weight_state_words(self.bins, wname, False)

    def __getstate__(self) -> tuple:
        return (self.backend, self.strategy, self.edges, self.axis_bins, self.wname)

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)  # type: ignore[misc]

    @property
    def row_length(self) -> int:
        return self.bins + TALLIES + self.state_words


def _nd_weighted_row(block: Any, wblock: Any, spec: _NdSpec) -> np.ndarray:
    """One chunk of points and its weights: the (1, row_length) row of its joint counts, its
    tallies (out, nan, 0, total) and its exact weight state."""
    from ._nd import _count  # noqa: PLC0415

    if _device.lookup(block) is not None or _device.lookup(wblock) is not None:
        raise NotImplementedError("gpuhist.dask.histogramdd: weighted device chunks: the "
                                  "library sums the weights of host points only")
    a, w = np.asarray(block), np.asarray(wblock)
    if w.shape != (a.shape[0],):
        raise ValueError("The weights and list don't have the same length.")
    row = np.zeros((1, spec.row_length), np.int64)
    if a.shape[0] == 0:
        # no point: zero counts and the empty state (a call on no point gives it)
        a = np.zeros((0, a.shape[1]), a.dtype)
    counts, _, state, tallies = _count(a, spec.edges, spec.axis_bins, spec.bins, w,
                                       spec.backend, spec.strategy, want_state=True)
    row[0, :spec.bins] = counts
    row[0, spec.bins:spec.bins + TALLIES] = (tallies[0], tallies[1], 0, tallies[2])
    row[0, spec.bins + TALLIES:] = state
    return row


def _nd_weighted_finish(row: np.ndarray, spec: _NdSpec, shape: Tuple[int, ...],
                        density: bool) -> np.ndarray:
    """The merged row as NumPy's H: each joint bin's sum rounded once, reshaped; density."""
    from ._nd import _density  # noqa: PLC0415

    sums = np.empty(spec.bins, np.float64)
    _core.weight_state_sums(np.ascontiguousarray(row[spec.bins + TALLIES:]), spec.bins,
                            spec.wname, False, False, sums)
    hist = sums.reshape(shape)
    if density:
        hist = _density(hist, spec.edges)
    return hist


def _weighted_histogramdd(da: Any, x: Any, weights: Any, edges: List[np.ndarray],
                          axis_bins: List[Any], shape: Tuple[int, ...], density: bool,
                          backend: str, strategy: Optional[str], split_every: Any) -> Any:
    """Weighted histogramdd of the points x (chunks of whole points): rows of exact states,
    reduced in a tree, rounded once."""
    from dask.base import tokenize  # noqa: PLC0415

    from ._nd import weight_name  # noqa: PLC0415

    if isinstance(weights, da.Array):
        w = weights
    else:
        if _device.lookup(weights) is not None:
            raise TypeError("gpuhist.dask.histogramdd: weights must be a dask array or a host "
                            "array")
        w = np.asarray(weights)
    if w.ndim != 1 or (not _unknown(x) and not _unknown(w) and w.shape[0] != x.shape[0]):
        raise ValueError("The weights and list don't have the same length.")
    wname = weight_name(np.empty(0, w.dtype))
    if not isinstance(w, da.Array):
        w = da.from_array(w, chunks=(x.chunks[0],))
    elif w.chunks != (x.chunks[0],):
        if _unknown(x) or _unknown(w):
            raise ValueError("gpuhist.dask.histogramdd: the weights' chunks differ from the "
                             "points' and some chunk sizes are unknown; rechunk them alike")
        w = w.rechunk((x.chunks[0],))
    if shape and min(shape) == 0:  # an axis of fewer than two edges: nothing to count
        return da.from_array(np.zeros(shape, np.float64), chunks=-1)
    if len(edges) > 8 or int(np.prod(shape, dtype=np.int64)) > 2**31:
        from ._nd import histogramdd as _histogramdd  # noqa: PLC0415

        _histogramdd(np.empty((0, len(edges))), bins=edges)  # its error
    resolved = _context.resolve_backend(backend, strategy, True)
    spec = _NdSpec(resolved, None if strategy == "auto" else strategy, edges, axis_bins, wname)
    rows = _chunk_rows(da, x, w, spec, "histogramdd", _nd_weighted_row)
    merged = _reduce_rows(da, rows, spec, split_every)
    name = "gpuhist-histogramdd-" + tokenize(merged, spec.__getstate__(), shape, density)
    return merged.map_blocks(_nd_weighted_finish, spec, shape, density,
                             chunks=tuple((n,) for n in shape),
                             new_axis=list(_range_(1, len(shape))), dtype=np.float64,
                             meta=np.empty((0,) * len(shape), np.float64), name=name)


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Optional[bool] = None,
                weights: Any = None, *, backend: str = "auto", strategy: Optional[str] = None,
                split_every: Any = None) -> Tuple[Any, List[np.ndarray]]:
    """numpy.histogramdd of a dask array, counted chunk by chunk by gpuhist and added.

    `sample`: a dask array of shape (N, D) (its chunks are joined along the D axis, so each
    chunk holds whole points) or a sequence of D one-dimensional dask arrays of N values.
    `bins`: NumPy's forms; an axis whose bins are a count needs its range (as
    dask.array.histogramdd asks), since the edges are fixed before any chunk is counted.
    Returns (hist, edges) as dask.array.histogramdd does: hist a lazy one-chunk float64 dask
    array (NumPy's H), edges NumPy's arrays. Each chunk's counts are integers held exactly in
    float64 (below 2^53 per bin), so their sum is exact and hist.compute() equals
    gpuhist.histogramdd on the whole sample bit for bit, whatever the chunks; density is then
    NumPy's expression on the total. `weights`: N values (a dask array, rechunked like the
    points, or a host array); each chunk returns its exact weight state
    (gpuhist_nd_result.weight_state), the states are added exactly in the tree and rounded
    once, so the sums are gpuhist.histogramdd's on the whole sample bit for bit.
    """
    dask, da = _dask()
    if isinstance(sample, da.Array):
        if sample.ndim != 2:
            raise ValueError(f"gpuhist.dask.histogramdd: sample must be (N, D), not "
                             f"{sample.ndim}-dimensional (or give a sequence of D 1-D arrays)")
        x = sample
    elif isinstance(sample, (list, tuple)) and len(sample) > 0 and \
            all(isinstance(c, da.Array) and c.ndim == 1 for c in sample):
        x = da.stack(list(sample), axis=1)
    else:
        raise TypeError("gpuhist.dask.histogramdd: sample must be a dask.array.Array of shape "
                        "(N, D) or a sequence of D one-dimensional dask arrays "
                        "(gpuhist.histogramdd takes NumPy arrays)")
    D = x.shape[1]
    bins = _computed(dask, bins)
    range = _computed(dask, range)
    from ._nd import _density, _edges  # noqa: PLC0415

    try:
        per_axis = len(bins) == D
    except TypeError:
        per_axis = False
    counts_only = [np.ndim(bins[i] if per_axis else bins) == 0 for i in _range_(D)]
    given = range is not None and len(range) == D
    missing = [i for i in _range_(D) if counts_only[i] and (not given or range[i] is None)]
    if missing:
        raise ValueError(f"gpuhist.dask.histogramdd: axis {missing[0]} has a bin count but no "
                         f"range: give range=[(lower, upper), ...] (the edges are fixed before "
                         f"the chunks are counted)")
    edges, axis_bins = _edges(np.empty((0, D), x.dtype), bins, range)
    edges = [np.asarray(e) for e in edges]
    shape = tuple(e.size - 1 for e in edges)
    x = x.rechunk({1: D})
    if weights is not None:
        return _weighted_histogramdd(da, x, weights, edges, axis_bins, shape, bool(density),
                                     backend, strategy, split_every), edges
    parts = x.map_blocks(_nd_block, edges, axis_bins, backend, strategy, dtype=np.float64,
                         drop_axis=[1],
                         new_axis=list(_range_(1, D + 1)),
                         chunks=(tuple(1 for _ in x.chunks[0]),) + tuple((n,) for n in shape))
    hist = parts.sum(axis=0, split_every=split_every, dtype=np.float64)
    if density:
        hist = hist.map_blocks(_density, edges, dtype=np.float64)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,
                density: Optional[bool] = None, weights: Any = None, *, backend: str = "auto",
                strategy: Optional[str] = None, split_every: Any = None) -> Tuple[Any, Any, Any]:
    """numpy.histogram2d of two dask arrays: histogramdd of [x, y] (see there). Returns (H,
    xedges, yedges)."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length.")
    try:
        N = len(bins)
    except TypeError:
        N = 1
    if N != 1 and N != 2:
        bins = [np.asarray(bins), np.asarray(bins)]
    hist, edges = histogramdd([x, y], bins, range, density, weights, backend=backend,
                              strategy=strategy, split_every=split_every)
    return hist, edges[0], edges[1]
