"""Contexts of the C library, one per thread and backend, and the backend choice.

A gpuhist context is used by one thread at a time (the library answers BUSY otherwise), and
creating one can cost a fraction of a second (the CUDA start), so each thread keeps its own,
created on first use and kept for the life of the thread. The strategy and CUDA stream are set
on a context only when they change (a change of stream makes the next call wait for the device).
"""

from __future__ import annotations

import operator
import threading
from typing import Any, Dict, Optional, Tuple

from . import _core

BACKENDS = ("auto", "cpu", "cuda", "opencl")

_local = threading.local()
_strategy_backend: Optional[Dict[str, str]] = None


class Context:
    """A library context plus the settings last applied to it."""

    __slots__ = ("core", "strategy", "stream", "async_")

    def __init__(self, backend: str, device: int, devices: Any = None) -> None:
        self.core = _core.Context(backend, device, devices)
        self.strategy: Optional[str] = None
        self.stream: Optional[int] = None
        self.async_ = False

    def configure(self, strategy: Optional[str], stream: Optional[int] = None,
                  async_: bool = False) -> "Context":
        if strategy != self.strategy:
            self.core.set_strategy(strategy)
            self.strategy = strategy
        if stream != self.stream:
            self.core.set_stream(stream)
            self.stream = stream
        if async_ != self.async_:
            self.core.set_async(async_)
            self.async_ = async_
        return self


def _strategy_backends() -> Dict[str, str]:
    global _strategy_backend
    if _strategy_backend is None:
        _strategy_backend = {s[0]: s[1] for s in _core.strategies()}
    return _strategy_backend


def check_backend(backend: str) -> str:
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend: {backend!r} is not one of 'auto', 'cpu', 'cuda', 'opencl'")
    return backend


def resolve_backend(backend: str, strategy: Optional[str], weighted: bool) -> str:
    """The backend a host-array call runs on.

    'auto' with a forced strategy runs on that strategy's backend; otherwise 'auto' is the
    library's choice (CUDA when a GPU is usable, else the CPU), weighted or not: the CPU and
    CUDA backends sum weights to the same bits. (`weighted` is kept for the callers.)
    """
    check_backend(backend)
    if backend == "auto" and strategy not in (None, "auto"):
        owner = _strategy_backends().get(strategy)
        if owner is None:
            raise ValueError(f"strategy: no strategy named {strategy!r} "
                             f"(gpuhist.strategies() lists them)")
        return owner
    return backend


def check_devices(devices: Any) -> Any:
    """devices=: None (one device), 'all', or a sequence of device numbers, as a hashable key."""
    if devices is None or (isinstance(devices, str) and devices == "all"):
        return devices
    if isinstance(devices, str) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices: expected 'all' or a sequence of device numbers, "
                        f"not {devices!r}")
    out = tuple(operator.index(d) for d in devices)
    if not out or any(d < 0 for d in out):
        raise ValueError(f"devices: {devices!r}: give one or more device numbers >= 0")
    return out


def get(backend: str, device: int = -1, strategy: Optional[str] = None,
        stream: Optional[int] = None, async_: bool = False, devices: Any = None) -> Context:
    """This thread's context for (backend, device or devices), configured as asked."""
    cache: Optional[Dict[Tuple[str, int, Any], Context]] = getattr(_local, "contexts", None)
    if cache is None:
        cache = {}
        _local.contexts = cache
    devices = check_devices(devices)
    key = (backend, device, devices)
    ctx = cache.get(key)
    if ctx is None:
        ctx = Context(backend, device, devices)
        cache[key] = ctx
    if strategy == "auto":
        strategy = None
    return ctx.configure(strategy, stream, async_)


def stream_pointer(stream: Any) -> Optional[int]:
    """A CUDA stream as an integer: an int, a CuPy stream (.ptr), a torch stream
    (.cuda_stream), or None (the array library's current stream, else the default)."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream
    for attr in ("ptr", "cuda_stream"):
        value = getattr(stream, attr, None)
        if isinstance(value, int):
            return value
    raise TypeError(f"stream: expected an int, a cupy.cuda.Stream or a torch.cuda.Stream, "
                    f"not {type(stream).__name__}")
