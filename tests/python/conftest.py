"""Shared fixtures of the Python tests (tests/python).

Random data comes from one seed: GPUHIST_TEST_SEED, default 20261125, printed in the header of
every run so that a failure can be replayed (GPUHIST_TEST_SEED=... pytest tests/python).
Backends: the CPU always; OpenCL when built in and a device answers (PoCL gives a CPU device);
CUDA when built in and a GPU answers, else its tests skip, saying why.
"""

from __future__ import annotations

import os
from typing import Dict, List

import numpy as np
import pytest

import gpuhist

SEED = int(os.environ.get("GPUHIST_TEST_SEED", "20261125"))


def pytest_report_header(config: pytest.Config) -> List[str]:
    return [f"gpuhist {gpuhist.__version__} from {os.path.dirname(gpuhist.__file__)}; "
            f"NumPy {np.__version__}; backends {usable_backends()}; "
            f"seed GPUHIST_TEST_SEED={SEED}"]


_usable: Dict[str, str] = {}


def backend_problem(name: str) -> str:
    """'' when `name` can run here, else why not."""
    if name not in _usable:
        if not gpuhist.backends().get(name, False):
            _usable[name] = f"the {name} backend is not built into this library"
        else:
            try:
                gpuhist.histogram(np.arange(10, dtype=np.float32), 4, (0, 10), backend=name)
                _usable[name] = ""
            except gpuhist.GpuhistError as e:
                _usable[name] = f"{name}: {e}"
    return _usable[name]


def usable_backends() -> List[str]:
    return [b for b in ("cpu", "opencl", "cuda") if not backend_problem(b)]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(SEED)


@pytest.fixture(params=["cpu", "opencl", "cuda"])
def backend(request: pytest.FixtureRequest) -> str:
    problem = backend_problem(request.param)
    if problem:
        print(f"skipping: {problem}")
        pytest.skip(problem)
    return request.param


def same_bits(got: object, want: object) -> None:
    """Equal dtype, shape and bytes (so float results are bit for bit NumPy's)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != NumPy's {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != NumPy's {want.shape}"
    if got.tobytes() != want.tobytes():
        bad = np.nonzero(got != want)[0][:5]
        raise AssertionError(f"differs from NumPy at {bad}: {got[bad]} != {want[bad]}")
