"""Device arrays: CuPy arrays and torch CUDA tensors (and any CUDA DLPack producer), zero-copy.

An array on a CUDA device reaches the library as a device pointer (GPUHIST_MEMORY_DEVICE) with
its shape and byte strides, found through `__cuda_array_interface__` (CuPy, torch, Numba) or,
failing that, DLPack (`__dlpack_device__` says CUDA, `__dlpack__(stream=...)` gives the tensor).
Work is enqueued on `stream=` when given, else on the array library's current stream (CuPy's
`get_current_stream()`, torch's `current_stream()`), else on the legacy default stream; the
library is told with gpuhist_set_stream. Results are allocated by the same array library on the
same device (`cupy.empty`, `torch.empty`); for other producers they come back as NumPy arrays.

Limits: samples must be contiguous or rows of contiguous samples with one row stride (else a
ValueError says to make them contiguous); big-endian and masked arrays are refused; weights of
device samples are device arrays of the same shape (device_weights). Nothing here runs
without a GPU: the tests skip, saying so, when no CUDA device, CuPy or torch is present.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _core
from ._plan import library_dtype

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
UNKNOWN = object()  # "not asked yet", for a current stream that may be None


class DeviceArray:
    """A device array's pointer and layout, and what allocates results beside it."""

    __slots__ = ("obj", "ptr", "dtype", "np_dtype", "shape", "strides", "device_id", "owner",
                 "keeper")

    def __init__(self, obj: Any, ptr: int, np_dtype: np.dtype, shape: Tuple[int, ...],
                 strides: Optional[Tuple[int, ...]], device_id: int, owner: str,
                 keeper: Any = None) -> None:
        self.obj = obj
        self.ptr = ptr
        self.np_dtype = np_dtype
        self.dtype = library_dtype(np_dtype)
        self.shape = shape
        self.strides = strides
        self.device_id = device_id
        self.owner = owner  # "cupy", "torch" or "other"
        self.keeper = keeper  # keeps a DLPack tensor alive

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # (np.prod costs a few us per call)


def _owner(obj: Any) -> str:
    module = type(obj).__module__ or ""
    if module.startswith("cupy"):
        return "cupy"
    if module.startswith("torch"):
        return "torch"
    return "other"


def _device_id(obj: Any, owner: str) -> int:
    try:
        if owner == "cupy":
            return int(obj.device.id)
        if owner == "torch":
            index = obj.device.index
            return 0 if index is None else int(index)
    except AttributeError:
        pass
    return 0


# CuPy and torch arrays read through their own attributes (what __cuda_array_interface__
# builds, without building its dictionary: the fast path of small repeated fills)
_TORCH_DTYPES: Optional[dict] = None


def _torch_dtypes() -> dict:
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch  # noqa: PLC0415

        _TORCH_DTYPES = {torch.uint8: np.dtype(np.uint8), torch.int8: np.dtype(np.int8),
                         torch.int16: np.dtype(np.int16), torch.int32: np.dtype(np.int32),
                         torch.int64: np.dtype(np.int64), torch.float32: np.dtype(np.float32),
                         torch.float64: np.dtype(np.float64), torch.bool: np.dtype(np.bool_)}
        for name, npt in (("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64)):
            if hasattr(torch, name):
                _TORCH_DTYPES[getattr(torch, name)] = np.dtype(npt)
    return _TORCH_DTYPES


def _fast(obj: Any, owner: str) -> Optional[DeviceArray]:
    """A CuPy ndarray or a CUDA torch tensor of a dtype the library reads, else None (the
    caller then asks __cuda_array_interface__ / DLPack)."""
    if owner == "cupy":
        if type(obj).__name__ != "ndarray" or obj.dtype.kind not in "buif" or \
                obj.dtype.byteorder == ">":
            return None
        return DeviceArray(obj, int(obj.data.ptr), obj.dtype, obj.shape, obj.strides,
                           int(obj.data.device_id), owner)
    if not obj.is_cuda or obj.is_sparse or obj.is_quantized:
        return None
    np_dtype = _torch_dtypes().get(obj.dtype)
    if np_dtype is None:
        return None
    size = np_dtype.itemsize
    index = obj.device.index
    return DeviceArray(obj, obj.data_ptr(), np_dtype, tuple(obj.shape),
                       tuple(s * size for s in obj.stride()), 0 if index is None else index,
                       owner)


def lookup(obj: Any, stream: Optional[int] = None) -> Optional[DeviceArray]:
    """The device array behind obj, or None for host data (NumPy arrays, torch CPU tensors,
    lists, anything np.asarray takes)."""
    if isinstance(obj, (np.ndarray, list, tuple, int, float)) or obj is None:
        return None
    owner = _owner(obj)
    if owner == "torch" and not getattr(obj, "requires_grad", False):
        if not getattr(obj, "is_cuda", False):
            return None
        fast = _fast(obj, owner)
        if fast is not None:
            return fast
    elif owner == "cupy":
        try:
            fast = _fast(obj, owner)
        except AttributeError:
            fast = None
        if fast is not None:
            return fast
    if owner == "torch" and getattr(obj, "requires_grad", False):
        obj = obj.detach()
    if owner == "torch" and not getattr(obj, "is_cuda", False):
        return None
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        if cai.get("mask") is not None:
            raise TypeError("gpuhist: masked device arrays are not supported")
        typestr = cai["typestr"]
        if typestr[0] == ">":
            raise TypeError("gpuhist: big-endian device arrays are not supported")
        np_dtype = np.dtype(typestr)
        strides = cai.get("strides")
        return DeviceArray(obj, int(cai["data"][0]), np_dtype, tuple(cai["shape"]),
                           None if strides is None else tuple(strides),
                           _device_id(obj, owner), owner)
    dl_device = getattr(obj, "__dlpack_device__", None)
    if dl_device is None:
        return None
    dev_type, dev_id = dl_device()
    if dev_type not in (KDL_CUDA, KDL_CUDA_MANAGED):
        return None
    # DLPack: the consumer's stream (1: the legacy default stream; 0 is not allowed)
    try:
        capsule = obj.__dlpack__(stream=stream if stream else 1)
    except TypeError:  # a producer predating the stream argument
        capsule = obj.__dlpack__()
    ptr, name, shape, strides, _, device_id, keeper = _core.dlpack_view(capsule)
    np_dtype = np.dtype({"u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16,
                         "u32": np.uint32, "i32": np.int32, "u64": np.uint64, "i64": np.int64,
                         "f32": np.float32, "f64": np.float64}[name])
    return DeviceArray(obj, ptr, np_dtype, tuple(shape), strides, device_id, owner, keeper)


def current_stream(dev: DeviceArray) -> Optional[int]:
    """The array library's current stream on dev's device (None: the default stream)."""
    try:
        if dev.owner == "cupy":
            import cupy  # noqa: PLC0415

            try:  # CuPy 10+: the device's current stream without switching devices
                return int(cupy.cuda.get_current_stream(dev.device_id).ptr) or None
            except TypeError:
                with cupy.cuda.Device(dev.device_id):
                    return int(cupy.cuda.get_current_stream().ptr) or None
        if dev.owner == "torch":
            import torch  # noqa: PLC0415

            return int(torch.cuda.current_stream(dev.device_id).cuda_stream) or None
    except (ImportError, AttributeError):
        pass
    return None


class Results:
    """Allocation and small operations on results beside a device array."""

    def __init__(self, dev: DeviceArray) -> None:
        self.dev = dev
        self.owner = dev.owner
        if self.owner == "cupy":
            import cupy  # noqa: PLC0415

            self.xp: Any = cupy
        elif self.owner == "torch":
            import torch  # noqa: PLC0415

            self.xp = torch
        else:
            self.xp = np

    @property
    def on_device(self) -> bool:
        return self.owner in ("cupy", "torch")

    def _dtype(self, np_dtype: Any) -> Any:
        if self.owner == "torch":
            return {np.dtype(np.int64): self.xp.int64, np.dtype(np.float64): self.xp.float64,
                    np.dtype(np.float32): self.xp.float32,
                    np.dtype(np.uint8): self.xp.uint8}[np.dtype(np_dtype)]
        return np_dtype

    def empty(self, n: int, np_dtype: Any) -> Any:
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                return self.xp.empty(n, dtype=np_dtype)
        if self.owner == "torch":
            return self.xp.empty(n, dtype=self._dtype(np_dtype),
                                 device=f"cuda:{self.dev.device_id}")
        return np.empty(n, dtype=np_dtype)

    def zeros(self, n: int, np_dtype: Any) -> Any:
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                return self.xp.zeros(n, dtype=np_dtype)
        if self.owner == "torch":
            return self.xp.zeros(n, dtype=self._dtype(np_dtype),
                                 device=f"cuda:{self.dev.device_id}")
        return np.zeros(n, dtype=np_dtype)

    def from_numpy(self, a: np.ndarray) -> Any:
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                return self.xp.asarray(a)
        if self.owner == "torch":
            a = np.ascontiguousarray(a)
            if not a.flags.writeable:  # torch.from_numpy warns about read-only arrays
                a = a.copy()
            return self.xp.from_numpy(a).to(f"cuda:{self.dev.device_id}")
        return a

    def edges(self, plan: Any, current: Any = UNKNOWN) -> Any:
        """plan.np_edges as the caller's kind of array. A cached plan's edges are copied to
        the device once per (array library, device, current stream) and kept on the plan;
        each call returns a device-side copy of them (enqueued on that same stream, so it
        follows the first upload without a host wait), never the kept array, which the caller
        could write into. `current`: current_stream(self.dev) when the caller has it."""
        np_edges = np.asarray(plan.np_edges)
        if not plan.frozen or not self.on_device:
            return self.from_numpy(np_edges) if self.on_device else plan.returned_edges()
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                ptr = (int(self.xp.cuda.get_current_stream().ptr) if current is UNKNOWN
                       else current or 0)
                key = ("cupy", self.dev.device_id, ptr)
                kept = plan.device_edges.get(key)
                if kept is None:
                    kept = self.xp.asarray(np_edges)
                    plan.device_edges[key] = kept
                # a pool allocation and a raw device-to-device copy on the current stream:
                # ndarray.copy() and empty_like() cost ~15 us more host time per call
                out = self.xp.ndarray(kept.shape, kept.dtype, self.xp.cuda.alloc(kept.nbytes))
                out.data.copy_from_device_async(kept.data, kept.nbytes)
                return out
        stream = (int(self.xp.cuda.current_stream(self.dev.device_id).cuda_stream)
                  if current is UNKNOWN else current or 0)
        key = ("torch", self.dev.device_id, stream)
        kept = plan.device_edges.get(key)
        if kept is None:
            kept = self.from_numpy(np_edges)
            plan.device_edges[key] = kept
        return kept.clone()

    def pointer(self, arr: Any) -> int:
        if self.owner == "cupy":
            return int(arr.data.ptr)
        if self.owner == "torch":
            return int(arr.data_ptr())
        return int(arr.ctypes.data)

    def synchronize(self) -> None:
        """Wait for all work on the device (every stream: fills may have been enqueued on
        streams other than the current one)."""
        if self.owner == "cupy":
            self.xp.cuda.Device(self.dev.device_id).synchronize()
        elif self.owner == "torch":
            self.xp.cuda.synchronize(self.dev.device_id)

    def to_numpy(self, arr: Any) -> np.ndarray:
        if self.owner == "cupy":
            return self.xp.asnumpy(arr)
        if self.owner == "torch":
            return arr.cpu().numpy()
        return np.asarray(arr)

    def to_numpy_after(self, arr: Any, stream: Optional[int]) -> np.ndarray:
        """arr on the host, copied once the work enqueued before on `stream` (a CUDA stream
        pointer; None: the legacy default stream) has finished: the copy is ordered on that
        stream and waited for (one host synchronisation)."""
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                s = self.xp.cuda.ExternalStream(stream) if stream else self.xp.cuda.Stream.null
                out = arr.get(stream=s)
                s.synchronize()  # (CuPy before v11 copies asynchronously when given a stream)
                return out
        if self.owner == "torch":
            torch = self.xp
            s = torch.cuda.ExternalStream(stream, device=self.dev.device_id) if stream else \
                torch.cuda.default_stream(self.dev.device_id)
            with torch.cuda.stream(s):
                return arr.cpu().numpy()  # a blocking copy on s
        return np.asarray(arr)

    def window(self, arr: Any, start: int, length: int, np_dtype: Any) -> Any:
        """window() of a result array on its device (zeros of np_dtype past its end)."""
        if self.owner == "cupy":
            with self.xp.cuda.Device(self.dev.device_id):
                return window(arr, start, length, lambda n: self.zeros(n, np_dtype))
        return window(arr, start, length, lambda n: self.zeros(n, np_dtype))

    def remap(self, lib: Any, out_bins: int, src: Optional[np.ndarray],
              dst: Optional[np.ndarray], np_dtype: Any) -> Any:
        """out[dst] = lib[src] on the device (identity when src is None)."""
        if src is None:
            return lib
        out = self.zeros(out_bins, np_dtype)
        if self.owner == "torch":
            device = f"cuda:{self.dev.device_id}"
            out[self.xp.as_tensor(dst, device=device)] = lib[self.xp.as_tensor(src, device=device)]
        else:
            out[self.from_numpy(dst)] = lib[self.from_numpy(src)]
        return out

    def density(self, n: Any, np_edges: np.ndarray) -> Any:
        """NumPy's n / db / n.sum() with the array library's operations."""
        db = self.from_numpy(np.array(np.diff(np_edges), float))
        if self.owner == "torch":
            n = n.to(self.xp.float64)
        return n / db / n.sum()


def window(arr: Any, start: int, length: int, zeros: Callable[[int], Any]) -> Any:
    """A new array holding arr[start:start + length], zeros past arr's end (zeros(n) makes n of
    them), or arr itself when that is all of it: NumPy arrays, CuPy arrays, torch tensors."""
    avail = arr.shape[0] - start
    if start == 0 and length == avail:
        return arr
    if length <= avail:
        part = arr[start:start + length]
        return part.clone() if hasattr(part, "clone") else part.copy()
    out = zeros(length)
    out[:avail] = arr[start:]
    return out


def as_float64(dev: DeviceArray, keep: Tuple[int, int]) -> DeviceArray:
    """NumPy's view of 64-bit integer samples (BinPlan.as_double): a float64 copy on the same
    device, each sample in [lo, hi] rounded to its nearest double, the others -inf (below lo) or
    +inf (above hi), made by the array's own library and finished before it returns (this path
    synchronises). CuPy arrays and torch tensors only."""
    lo, hi = keep
    info = np.iinfo(dev.np_dtype)
    cut = (lo, hi) != (int(info.min), int(info.max))
    if dev.owner == "cupy":
        import cupy  # noqa: PLC0415

        with cupy.cuda.Device(dev.device_id):
            x = dev.obj
            y = x.astype(cupy.float64)
            if cut:
                t = dev.np_dtype.type
                y = cupy.where(x < t(lo), -np.inf, cupy.where(x > t(hi), np.inf, y))
            y = cupy.ascontiguousarray(y)
            cupy.cuda.get_current_stream().synchronize()
    elif dev.owner == "torch":
        import torch  # noqa: PLC0415

        x = dev.obj
        y = x.to(torch.float64)
        if cut:
            y = torch.where(x < lo, float("-inf"), torch.where(x > hi, float("inf"), y))
        y = y.contiguous()
        torch.cuda.current_stream(dev.device_id).synchronize()
    else:
        raise NotImplementedError("gpuhist: 64-bit integers beyond 2^53 on a device array "
                                  "that is neither CuPy nor torch: NumPy rounds them to float64 "
                                  "before binning; pass y.astype(float64) or a host array")
    out = lookup(y)
    assert out is not None
    return out


def device_weights(dev: DeviceArray, weights: Any) -> Tuple[DeviceArray, np.dtype]:
    """The weights of device samples as the library reads them: a device array on dev's device,
    of dev's shape, float32 or float64 (other real dtypes converted to float64 by the array's
    own library), C-contiguous (the samples' order); and the weights' own dtype (NumPy returns
    sums in it)."""
    owner = _owner(weights)
    if owner == "cupy":
        import cupy  # noqa: PLC0415

        given = np.dtype(weights.dtype)
        if given.kind not in "biuf":
            raise TypeError(f"gpuhist: weights of dtype {given} are not supported (real "
                            f"numbers only)")
        target = np.float32 if given == np.float32 else np.float64
        if given != target or not weights.flags.c_contiguous:
            with cupy.cuda.Device(int(weights.device.id)):
                weights = cupy.ascontiguousarray(weights, dtype=target)
    elif owner == "torch" and getattr(weights, "is_cuda", False):
        import torch  # noqa: PLC0415

        if weights.requires_grad:
            weights = weights.detach()
        if weights.is_complex():
            raise TypeError(f"gpuhist: weights of dtype {weights.dtype} are not supported "
                            f"(real numbers only)")
        given = np.dtype(str(weights.dtype).replace("torch.", "")) \
            if weights.dtype != torch.bool else np.dtype(np.bool_)
        target_t = torch.float32 if weights.dtype == torch.float32 else torch.float64
        if weights.dtype != target_t or not weights.is_contiguous():
            weights = weights.to(target_t).contiguous()
    w = lookup(weights)
    if w is None:
        raise TypeError("gpuhist: weights on the host with samples on a device; pass both on "
                        "the device (or both on the host)")
    if owner not in ("cupy", "torch"):
        given = w.np_dtype
        if given not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise TypeError(f"gpuhist: device weights of dtype {given}: pass float32 or "
                            f"float64 weights")
    if w.device_id != dev.device_id:
        raise ValueError(f"gpuhist: weights on device {w.device_id}, samples on device "
                         f"{dev.device_id}; put them on one device")
    if tuple(w.shape) != tuple(dev.shape):
        raise ValueError("weights should have the same shape as a.")
    if w.strides is not None:
        c_strides, step = [], w.np_dtype.itemsize
        for n in reversed(w.shape):
            c_strides.insert(0, step)
            step *= n
        if any(s != c for s, c, n in zip(w.strides, c_strides, w.shape) if n > 1):
            raise ValueError("gpuhist: device weights must be C-contiguous")
    return w, given
