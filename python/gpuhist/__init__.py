"""gpuhist: exact histograms on CUDA GPUs, OpenCL devices and CPUs, with NumPy's API.

    import gpuhist
    hist, edges = gpuhist.histogram(a, bins=256, range=(0, 1))   # numpy.histogram, same bits
    counts = gpuhist.bincount(ids, minlength=10)                  # numpy.bincount
    h = gpuhist.Histogram(100, (0.0, 1.0))                        # fill again and again
    h.fill(batch1).fill(batch2, weights=w2)
    h2 = gpuhist.HistogramDD((50, 40), range=[(0, 1), (0, 2)])    # N-D, filled again and again
    h2.fill(x, y).fill(x2, y2, weight=w)

Every count comes from the gpuhist C library (libgpuhist, linked into gpuhist._core); this
package resolves NumPy's rules (edges, dtypes, errors) and hands arrays to it without copying
them. docs/PYTHON.md has the exact semantics and the differences from NumPy.
"""

from __future__ import annotations

from typing import Dict, List

from . import _core
from ._api import bincount, histogram, histogram_bin_edges
from ._core import GpuhistError
from ._histdd import HistogramDD
from ._histogram import Axis, Histogram, Kind, Traits
from ._nd import histogram2d, histogramdd

__version__ = _core.library_version

__all__ = [
    "Axis",
    "GpuhistError",
    "Histogram",
    "HistogramDD",
    "Kind",
    "Traits",
    "backends",
    "bincount",
    "device_name",
    "histogram",
    "histogram_bin_edges",
    "histogram2d",
    "histogramdd",
    "strategies",
]


def strategies() -> List[Dict[str, str]]:
    """Every registered strategy of the backends built in: name, backend, seed, supports,
    summary (what `gpuhist --list-strategies` prints)."""
    keys = ("name", "backend", "seed", "supports", "summary")
    return [dict(zip(keys, s)) for s in _core.strategies()]


def backends() -> Dict[str, bool]:
    """Which backends this build of the library has compiled in ('cpu' always)."""
    return {b: bool(_core.backend_compiled(b)) for b in ("cpu", "cuda", "opencl")}


def device_name(backend: str = "auto") -> str:
    """The device a backend runs on here ('auto': the library's choice, with its reason)."""
    from . import _context  # noqa: PLC0415

    ctx = _context.get(_context.check_backend(backend)).core
    note = ctx.note
    return f"{ctx.device_name} [{ctx.backend}]" + (f" ({note})" if note else "")


def __getattr__(name: str) -> object:
    """gpuhist.dask on first use (it imports dask only when called), so `gpuhist.dask.histogram`
    works after a plain `import gpuhist`."""
    if name == "dask":
        import importlib  # noqa: PLC0415

        return importlib.import_module(".dask", __name__)
    raise AttributeError(f"module 'gpuhist' has no attribute {name!r}")
