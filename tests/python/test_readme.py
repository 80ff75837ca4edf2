"""The README's Python section is true: its example runs, and every row of its migration table
(NumPy / CuPy / torch / dask / boost-histogram call -> gpuhist call) gives the same counts.

The NumPy rows are compared bit for bit (every array of the results: counts or sums, edges);
the other rows compare counts, on the same data, where their library is installed (CuPy and
torch rows: with a CUDA device and the CUDA backend; they skip, saying so, otherwise). The data
are seeded (GPUHIST_TEST_SEED): samples in [0, 1), integer-valued weights (so NumPy's sums in
array order are exact too), integers in [0, 300), points of 3 coordinates.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import gpuhist
from conftest import SEED, backend_problem, same_bits

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def python_section() -> str:
    with open(README) as f:
        text = f.read()
    start = text.index("\n## Python\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def migration_rows() -> List[Tuple[str, str]]:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", python_section(), re.M)
    assert len(rows) >= 10, "the README's migration table was not found"
    return rows


def test_readme_example_runs(capsys):
    block = re.search(r"```python\n(.*?)```", python_section(), re.S)
    assert block, "no Python example in the README's Python section"
    exec(compile(block.group(1), "README.md", "exec"), {})  # noqa: S102 - our own README
    out = capsys.readouterr().out
    assert "cpu" in out or "cuda" in out or "opencl" in out  # h.strategy was printed


def counts_of(r: Any) -> np.ndarray:
    """The counts of a result, on the host, as float64."""
    if isinstance(r, tuple):
        r = r[0]
    if hasattr(r, "values") and callable(r.values) and \
            not type(r).__module__.startswith(("torch", "cupy")):  # boost_histogram / Histogram
        r = r.values()
    if hasattr(r, "compute"):  # dask
        r = r.compute()
    if type(r).__module__.startswith("cupy"):
        r = r.get()
    if type(r).__module__.startswith("torch"):
        r = r.cpu().numpy()
    return np.asarray(r, dtype=np.float64)


def environment(rng: np.random.Generator) -> Dict[str, Any]:
    a = rng.random(20_000)
    return {"np": np, "gpuhist": gpuhist, "a": a, "b": rng.random(a.size),
            "w": rng.integers(-50, 50, a.size).astype(np.float64),
            "x": rng.integers(0, 300, a.size), "pts": rng.random((3000, 3))}


def needs(left: str, env: Dict[str, Any]) -> str:
    """'' when the row can run here (adding its objects to env), else why not."""
    lib = left.split(".")[0]
    if lib == "np":
        return ""
    if lib == "dask":
        try:
            import dask.array as da  # noqa: PLC0415
        except ImportError:
            return "dask is not installed"
        import dask  # noqa: PLC0415

        env["dask"] = dask
        env["da_a"] = da.from_array(env["a"], chunks=1999)
        return ""
    if lib == "bh":
        try:
            import boost_histogram as bh  # noqa: PLC0415
        except ImportError:
            return "boost_histogram is not installed"
        env["bh"] = bh
        return ""
    if lib in ("cupy", "torch"):
        try:
            mod = __import__(lib)
        except ImportError:
            return f"{lib} is not installed"
        problem = backend_problem("cuda")
        if problem:
            return problem
        env[lib] = mod
        if lib == "cupy":
            env["d"], env["dx"] = mod.asarray(env["a"]), mod.asarray(env["x"])
        else:
            if not mod.cuda.is_available():
                return "torch sees no CUDA device"
            env["t"] = mod.from_numpy(env["a"]).cuda()
            env["tx"] = mod.from_numpy(env["x"]).cuda()
        return ""
    return f"unknown library {lib!r}"


@pytest.mark.parametrize("left,right", migration_rows(), ids=lambda s: s[:40])
def test_migration_row(left, right):
    env = environment(np.random.default_rng([SEED, 77]))
    problem = needs(left, env)
    if problem:
        print(f"skipping: {problem}")
        pytest.skip(problem)
    want = eval(left, env)  # noqa: S307 - the README's own table
    got = eval(right, env)  # noqa: S307
    if left.startswith("np."):
        # NumPy's results bit for bit: every array of the tuple (edges lists of histogramdd)
        def flat(r: Any) -> List[Any]:
            if isinstance(r, (tuple, list)):
                return [x for part in r for x in flat(part)]
            return [r]

        g, w = flat(got), flat(want)
        assert len(g) == len(w)
        for x, y in zip(g, w):
            same_bits(x, y)
    else:
        assert np.array_equal(counts_of(got), counts_of(want)), (left, right)
