"""numpy.histogram, numpy.histogram_bin_edges and numpy.bincount on the gpuhist library.

Same signatures, same return types, same errors; the counts are NumPy's bit for bit (see
docs/PYTHON.md for the exact contract and the few documented differences). Keyword-only extras:
backend= ('auto', 'cpu', 'cuda', 'opencl'), strategy= (a registered strategy name), stream= (a
CUDA stream: int, cupy.cuda.Stream, torch.cuda.Stream).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any, Optional, Tuple

import numpy as np

from . import _context, _device
from ._plan import (KIND_INTEGER, NUMPY_MAJOR, BinPlan, check_memory, library_dtype,
                    plan_bins)

# Fields of the tuple _core.Context.histogram returns.
UNDERFLOW, OVERFLOW, NAN, TOTAL, STRATEGY, BACKEND, SECONDS = range(7)


def host_array(a: Any) -> np.ndarray:
    """What NumPy would make of `a` (torch CPU tensors, lists, anything with __array__)."""
    if isinstance(a, np.ndarray):
        return a
    if getattr(a, "requires_grad", False) and hasattr(a, "detach"):
        a = a.detach()
    return np.asarray(a)


def samples_for_library(a: np.ndarray, warn: bool) -> Tuple[np.ndarray, np.dtype]:
    """(samples the library reads, the dtype NumPy's rules see). bool is viewed as uint8
    (NumPy converts it, with a RuntimeWarning); float16 is widened to float32 (exact), while
    NumPy's edge rules still see float16."""
    if a.dtype == np.bool_:
        if warn:
            warnings.warn(f"Converting input from {a.dtype} to {np.uint8} for compatibility.",
                          RuntimeWarning, stacklevel=3)
        a = a.view(np.uint8)
        return a, a.dtype
    if a.dtype == np.float16:
        return a.astype(np.float32), a.dtype
    library_dtype(a.dtype)  # TypeError for anything else the library lacks
    return a, a.dtype


def nonfinite_error(a: Any) -> ValueError:
    """NumPy's error for an automatic range over data holding NaN or inf."""
    return ValueError(f"autodetected range of [{a.min()}, {a.max()}] is not finite")


def host_minmax(ctx: _context.Context, a: np.ndarray, rules_dtype: np.dtype
                ) -> Tuple[Any, Any]:
    """a.min(), a.max() as NumPy scalars of the rules' dtype, through the library when it
    finds them exactly (64-bit integers beyond 2^53 come back rounded: NumPy finds those)."""
    mn, mx, found = ctx.core.minmax(a)
    if not found:
        raise nonfinite_error(a)
    if rules_dtype.kind in "ui" and rules_dtype.itemsize == 8 and max(abs(mn), abs(mx)) > 2**53:
        return a.min(), a.max()
    t = rules_dtype.type
    return t(mn), t(mx)


def host_rule(ctx: _context.Context, a: np.ndarray):
    """rule_bins for plan_bins: the bin count of NumPy's rule, by gpuhist_bins_rule_numpy with
    the installed NumPy's major version."""
    def rule_bins(rule: str, rng: Any) -> int:
        r = None if rng is None else (float(rng[0]), float(rng[1]))
        return ctx.core.bins_rule(a, rule, r, 0, NUMPY_MAJOR)[0]
    return rule_bins


def run_host(ctx: _context.Context, plan: BinPlan, a: np.ndarray,
             weights: Optional[np.ndarray], squares: bool = False
             ) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray], tuple]:
    """(library counts, sums, sums of squares, tallies) of one call; counts are int64."""
    counts = np.empty(plan.bins, np.int64)
    sums = sq = None
    if weights is not None:
        sums = np.empty(plan.bins, np.float64)
        if squares:
            sq = np.empty(plan.bins, np.float64)
    tallies = ctx.core.histogram(a, *plan.args(), counts, weights, sums, sq,
                                 as_double=plan.as_double)
    return counts, sums, sq, tallies


def remap(plan: BinPlan, lib: np.ndarray) -> np.ndarray:
    """NumPy's bins out of the library's: out[dst] = lib[src]."""
    if plan.src is None:
        return lib
    out = np.zeros(plan.out_bins, lib.dtype)
    out[plan.dst] = lib[plan.src]
    return out


def _check_weights(a: np.ndarray, weights: Any) -> Optional[np.ndarray]:
    if weights is None:
        return None
    if _device.lookup(weights) is not None:
        raise TypeError("gpuhist: weights on a device with samples on the host; pass both "
                        "on the host")
    weights = host_array(weights)
    if weights.shape != a.shape:
        raise ValueError("weights should have the same shape as a.")
    return weights


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Optional[bool] = None,
              weights: Any = None, *, backend: str = "auto", strategy: Optional[str] = None,
              stream: Any = None, devices: Any = None) -> Tuple[Any, Any]:
    """Compute the histogram of a dataset: numpy.histogram, counted by the gpuhist library.

    Parameters and return values are numpy.histogram's: `bins` an int, a 1-D array of
    monotonically increasing edges, or a rule name ('auto', 'fd', 'doane', 'rice', 'scott',
    'sqrt', 'stone', 'sturges': the library computes the bin count as NumPy does), `range`
    (lower, upper), `density`, `weights`
    (an array of a's shape). Returns (hist, bin_edges): hist int64 counts (or the weights'
    dtype with weights: the correctly rounded sum of each bin's weights), bin_edges NumPy's
    edges (float32 for float32 data, float64 for integers, the given array for explicit edges).

    Keyword-only: backend 'auto' (CUDA when a GPU is usable, else the CPU; weighted too: both
    sum weights to the same bits), 'cpu', 'cuda' or 'opencl'; strategy a name
    from gpuhist.strategies(); stream a CUDA stream for device arrays and the CUDA backend;
    devices 'all' or a list of device numbers: a host array is shared out between those devices
    and their counts added exactly (the same result as one device).

    `a` may be a NumPy array of any shape, dtype bool, uint8..int64, float16/32/64, byte order
    and strides (read in place, or through bounded buffers), anything np.asarray takes (lists,
    torch CPU tensors), or a CuPy array / torch CUDA tensor / CUDA DLPack tensor, counted in
    place on its device, with hist and bin_edges returned as the same kind of array.
    """
    dev = _device.lookup(a, _context.stream_pointer(stream))
    if dev is not None and devices is not None:
        raise ValueError("devices: a device array is counted on the GPU that holds it; "
                         "devices= shares out host arrays")
    if dev is not None:
        return _device_histogram(dev, bins, range, density, weights, backend, strategy, stream)
    a = host_array(a)
    samples, rules_dtype = samples_for_library(a, warn=True)
    weights = _check_weights(a, weights)
    ctx = _context.get(_context.resolve_backend(backend, strategy, weights is not None), -1,
                       strategy, _context.stream_pointer(stream), devices=devices)
    plan = plan_bins(bins, range, rules_dtype, a.size, weights is not None,
                     lambda: host_minmax(ctx, samples, rules_dtype), host_rule(ctx, samples),
                     cache=True)
    if plan.bins == 0:  # fewer than two edges
        n = np.zeros(max(plan.np_edges.size - 1, 0),
                     np.intp if weights is None else weights.dtype)
    else:
        counts, sums, _, tallies = run_host(ctx, plan, samples, weights)
        if plan.auto_range and (tallies[NAN] or tallies[UNDERFLOW] or tallies[OVERFLOW]):
            raise nonfinite_error(a)
        if weights is None:
            n = remap(plan, counts)
        else:
            n = remap(plan, sums)
            if n.dtype != weights.dtype:
                n = n.astype(weights.dtype)  # NumPy returns the weights' dtype
    if density:
        db = np.array(np.diff(plan.np_edges), float)
        return n / db / n.sum(), plan.returned_edges()
    return n, plan.returned_edges()


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None, *,
                        backend: str = "auto", strategy: Optional[str] = None,
                        stream: Any = None, devices: Any = None) -> Any:
    """The edges numpy.histogram would use (numpy.histogram_bin_edges), bit for bit.

    An automatic range (range=None) is the data's min and max, found by the library; like
    NumPy, data holding NaN or inf then raises ValueError (one counting pass checks it).
    """
    dev = _device.lookup(a, _context.stream_pointer(stream))
    if dev is not None and devices is not None:
        raise ValueError("devices: a device array is counted on the GPU that holds it; "
                         "devices= shares out host arrays")
    if dev is not None:
        if isinstance(bins, (int, np.integer)) and range is not None:
            return _device.Results(dev).edges(
                plan_bins(bins, range, dev.np_dtype, dev.size, weights is not None,
                          lambda: (0, 1), cache=True))
        return _device_histogram(dev, bins, range, None, weights, backend, strategy, stream)[1]
    a = host_array(a)
    samples, rules_dtype = samples_for_library(a, warn=False)
    weights = _check_weights(a, weights)
    ctx = _context.get(_context.resolve_backend(backend, strategy, False), -1, strategy,
                       _context.stream_pointer(stream), devices=devices)
    plan = plan_bins(bins, range, rules_dtype, a.size, weights is not None,
                     lambda: host_minmax(ctx, samples, rules_dtype), host_rule(ctx, samples),
                     cache=True)
    if plan.auto_range and rules_dtype.kind == "f":
        _, _, _, tallies = run_host(ctx, plan, samples, None)
        if tallies[NAN] or tallies[UNDERFLOW] or tallies[OVERFLOW]:
            raise nonfinite_error(a)
    return plan.returned_edges()


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, backend: str = "auto",
             strategy: Optional[str] = None, stream: Any = None, devices: Any = None) -> Any:
    """Count occurrences of each value in an array of non-negative ints (numpy.bincount).

    Returns int64 counts of length max(x.max() + 1, minlength), or float64 sums of the weights
    (each correctly rounded) with weights. Same errors as the installed NumPy (which checks the
    dimension, the dtype and minlength here): x must be 1-D, of an integer dtype NumPy casts
    to int64, without negative values.
    """
    dev = _device.lookup(x, _context.stream_pointer(stream))
    if dev is not None and devices is not None:
        raise ValueError("devices: a device array is counted on the GPU that holds it; "
                         "devices= shares out host arrays")
    if dev is not None:
        return _device_bincount(dev, weights, minlength, backend, strategy, stream)
    given = x
    x = host_array(x)
    # NumPy's own checks, on a zero-length stand-in (or on x when NumPy refuses its shape):
    # dimension, dtype (NumPy 1 refuses uint64, NumPy 2 takes it) and minlength, with NumPy's
    # messages for the installed version
    if x.ndim != 1:
        np.bincount(x, minlength=minlength)
        raise ValueError("gpuhist: bincount needs a 1-D array")  # (NumPy raised above)
    stand_in = x[:0] if (x.size or isinstance(given, np.ndarray)) else np.zeros(0, np.intp)
    np.bincount(stand_in, minlength=minlength)
    minlength = 0 if minlength is None else operator.index(minlength)
    library_dtype(x.dtype)
    if weights is not None:
        weights = host_array(weights)
        if weights.ndim != 1 or weights.shape[0] != x.shape[0]:
            raise ValueError("The weights and list don't have the same length.")
    if x.size == 0:  # nothing to count: NumPy's zeros (its dtype rules for empty input)
        return np.bincount(x if isinstance(given, np.ndarray) else given, weights, minlength)
    ctx = _context.get(_context.resolve_backend(backend, strategy, weights is not None), -1,
                       strategy, _context.stream_pointer(stream), devices=devices)
    whole = whole_range(x.dtype, weights is not None)
    if whole is not None:
        # one pass over a bin per value of the type (no min/max pass), then NumPy's length
        counts, sums, _, _ = run_host(ctx, integer_plan(*whole), x, weights)
        length = bincount_length(counts, whole[0], minlength)
        out = counts if weights is None else sums
        assert out is not None
        return _device.window(out, -whole[0], length, lambda n: np.zeros(n, out.dtype))
    mn, mx, _ = ctx.core.minmax(x)
    if mn < 0:
        raise ValueError(NEGATIVE_BINCOUNT)
    bins = max(int(mx) + 1, minlength)
    check_memory(bins)
    counts, sums, _, _ = run_host(ctx, integer_plan(0, bins), x, weights)
    return counts if weights is None else sums


# numpy.bincount's message for a negative value
NEGATIVE_BINCOUNT = "'list' argument must have no negative elements"


def whole_range(dtype: np.dtype, weighted: bool) -> Optional[Tuple[int, int]]:
    """(integer_lower, bins) of one INTEGER bin per value of a bool, 8-bit or 16-bit dtype:
    bincount then counts in one pass, without finding the data's min and max first. None for
    wider types (2^32 bins and more) and for 16-bit data with weights, where the min/max pass
    costs less than 65536 bins of exact weight sums (each bin's exact state is hundreds of
    bytes, cleared, merged and rounded on every call)."""
    if dtype.kind not in "bui" or dtype.itemsize > 2 or (weighted and dtype.itemsize == 2):
        return None
    info = np.iinfo(np.uint8 if dtype.kind == "b" else dtype)
    return int(info.min), int(info.max) - int(info.min) + 1


def integer_plan(lower: int, bins: int) -> BinPlan:
    """INTEGER bins lower, lower + 1, ..., lower + bins - 1 (bincount's request)."""
    plan = BinPlan()
    plan.kind, plan.last_inclusive = KIND_INTEGER, False
    plan.bins = plan.out_bins = bins
    plan.integer_lower = lower
    return plan


def bincount_length(counts: np.ndarray, lower: int, minlength: int) -> int:
    """NumPy's bincount length out of whole-range counts (counts[i]: how many samples are
    lower + i): max(last value present + 1, minlength); NumPy's ValueError when a value below
    0 is present."""
    zero = -lower
    if counts[:zero].any():
        raise ValueError(NEGATIVE_BINCOUNT)
    present = np.flatnonzero(counts[zero:])
    return max(int(present[-1]) + 1 if present.size else 0, minlength)


# ---- device arrays --------------------------------------------------------------------------

def _device_context(dev: _device.DeviceArray, backend: str, strategy: Optional[str],
                    stream: Any, async_: bool, current: Any = _device.UNKNOWN
                    ) -> _context.Context:
    """The CUDA context for dev, on `stream` or else the array library's current stream
    (`current`: that stream's pointer when the caller already asked for it)."""
    _context.check_backend(backend)
    if backend not in ("auto", "cuda"):
        raise ValueError(f"backend: {backend!r} cannot read a CUDA device array; use 'cuda' "
                         f"or 'auto' (or copy the data to the host)")
    s = _context.stream_pointer(stream)
    if s is None:
        s = _device.current_stream(dev) if current is _device.UNKNOWN else current
    return _context.get("cuda", dev.device_id, strategy, s, async_)


def _device_histogram(dev: _device.DeviceArray, bins: Any, rng: Any, density: Any,
                      weights: Any, backend: str, strategy: Optional[str], stream: Any
                      ) -> Tuple[Any, Any]:
    w = None
    if weights is not None:
        w, w_dtype = _device.device_weights(dev, weights)
    res = _device.Results(dev)
    current = _device.current_stream(dev)  # asked once: the edges' copy is ordered on it too
    ctx = _device_context(dev, backend, strategy, stream, False, current)

    def finite_minmax() -> Tuple[Any, Any]:
        mn, mx, found = ctx.core.minmax_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True)
        if not found:
            raise nonfinite_error(dev.obj)
        if dev.np_dtype.kind in "ui" and dev.np_dtype.itemsize == 8 and \
                max(abs(mn), abs(mx)) > 2**53:
            return dev.np_dtype.type(int(dev.obj.min())), dev.np_dtype.type(int(dev.obj.max()))
        return dev.np_dtype.type(mn), dev.np_dtype.type(mx)

    def rule_bins(rule: str, rng_: Any) -> int:
        r = None if rng_ is None else (float(rng_[0]), float(rng_[1]))
        return ctx.core.bins_rule_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True, rule,
                                      r, 0, NUMPY_MAJOR)[0]

    plan = plan_bins(bins, rng, dev.np_dtype, dev.size, w is not None, finite_minmax,
                     rule_bins, cache=True)
    if plan.bins == 0:
        n = res.zeros(max(plan.np_edges.size - 1, 0), np.int64 if w is None else w_dtype)
    elif w is not None:
        # weighted: the library returns the sums on the host (this call synchronises)
        ctx.configure(ctx.strategy, ctx.stream, False)
        counts = np.empty(plan.bins, np.int64)
        sums = np.empty(plan.bins, np.float64)
        src = dev if plan.as_double is None else _device.as_float64(dev, plan.as_double)
        tallies = ctx.core.histogram_raw(src.ptr, src.dtype, src.shape, src.strides, True,
                                         *plan.args(), counts.ctypes.data, False, None, None,
                                         w.ptr, w.dtype, sums)
        if plan.auto_range and (tallies[NAN] or tallies[UNDERFLOW] or tallies[OVERFLOW]):
            raise nonfinite_error(dev.obj)
        out = remap(plan, sums)
        n = res.from_numpy(out if out.dtype == w_dtype else out.astype(w_dtype))
    else:
        # no host synchronisation unless the tallies are needed (automatic range)
        ctx.configure(ctx.strategy, ctx.stream, res.on_device and not plan.auto_range)
        counts = res.empty(plan.bins, np.int64)
        src = dev if plan.as_double is None else _device.as_float64(dev, plan.as_double)
        tallies = ctx.core.histogram_raw(src.ptr, src.dtype, src.shape, src.strides, True,
                                         *plan.args(), res.pointer(counts), res.on_device)
        if plan.auto_range and (tallies[NAN] or tallies[UNDERFLOW] or tallies[OVERFLOW]):
            raise nonfinite_error(dev.obj)
        n = res.remap(counts, plan.out_bins, plan.src, plan.dst, np.int64)
    edges = res.edges(plan, current)
    if density:
        return res.density(n, np.asarray(plan.np_edges)), edges
    return n, edges


def _device_bincount(dev: _device.DeviceArray, weights: Any, minlength: int, backend: str,
                     strategy: Optional[str], stream: Any) -> Any:
    if len(dev.shape) != 1:
        raise ValueError("object too deep for desired array" if len(dev.shape) > 1
                         else "object of too small depth for desired array")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if dev.size and not np.can_cast(dev.np_dtype, np.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {dev.np_dtype!r} to "
                        f"{np.dtype(np.intp)!r} according to the rule 'safe'")
    w = None
    if weights is not None:
        try:
            w, _ = _device.device_weights(dev, weights)
        except ValueError as e:
            if "same shape" not in str(e):
                raise
            raise ValueError("The weights and list don't have the same length.") from None
    res = _device.Results(dev)
    if dev.size == 0:
        return res.zeros(minlength, np.int64 if w is None else np.float64)
    ctx = _device_context(dev, backend, strategy, stream, False)
    whole = whole_range(dev.np_dtype, w is not None)
    if whole is None:
        mn, mx, _ = ctx.core.minmax_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True)
        if mn < 0:
            raise ValueError(NEGATIVE_BINCOUNT)
        lower, bins = 0, max(int(mx) + 1, minlength)
        check_memory(bins, 8)
    else:
        lower, bins = whole
    spec = (KIND_INTEGER, bins, 0.0, 0.0, None, lower, False, False)
    if w is not None:
        # weighted: float64 sums, returned by the library on the host (synchronises)
        ctx.configure(ctx.strategy, ctx.stream, False)
        counts = np.empty(bins, np.int64)
        sums = np.empty(bins, np.float64)
        ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True, *spec,
                               counts.ctypes.data, False, None, None, w.ptr, w.dtype, sums)
        if whole is not None:
            sums = _device.window(sums, -lower, bincount_length(counts, lower, minlength),
                                  lambda n: np.zeros(n, np.float64))
        return res.from_numpy(sums)
    ctx.configure(ctx.strategy, ctx.stream, res.on_device)
    counts = res.empty(bins, np.int64)
    ctx.core.histogram_raw(dev.ptr, dev.dtype, dev.shape, dev.strides, True, *spec,
                           res.pointer(counts), res.on_device)
    if whole is None:
        return counts
    # the result's length depends on the values present: the call's one host synchronisation
    # reads the counts (2 KiB for 8-bit data, 512 KiB for 16-bit), copied on the library's
    # stream after the count; the result is then cut out of them on the device
    length = bincount_length(res.to_numpy_after(counts, ctx.stream), lower, minlength)
    return res.window(counts, -lower, length, np.int64)
