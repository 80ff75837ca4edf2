"""gpuhist.dask against gpuhist / NumPy on the concatenated array, and weighted sums against
exact rational sums.

Every chunking is drawn from the seed (GPUHIST_TEST_SEED, printed in pytest's header and by each
test): uneven chunks, empty chunks, multi-dimensional chunks, unknown chunk sizes. The result of
gpuhist.dask must be gpuhist.histogram's / gpuhist.bincount's on the whole array bit for bit
(dtype, shape, bytes), and NumPy's where NumPy's is exact (counts). Weighted sums are compared
with Fractions summed exactly and rounded once; the weights are chosen so that adding rounded
per-chunk sums would depend on the chunking (1e16, 1, -1e16). Runs on dask's threaded scheduler
and on a local dask.distributed cluster of 2 workers (threads, and once in processes). Skipped
when dask is missing (scripts/setup installs python3-dask and python3-distributed).
"""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import gpuhist
from conftest import SEED, backend_problem, same_bits

import gpuhist.dask as gd  # imports without dask: dask is imported on first use

try:
    import dask
    import dask.array as da
except ImportError:
    dask = da = None


@pytest.fixture(autouse=True)
def _need_dask(request: pytest.FixtureRequest) -> None:
    """Every test but the one that checks the package without dask needs dask (the tests stay
    collected, so scripts/gpu-check can name test_cupy_chunks on a machine without dask)."""
    if da is None and request.node.name != "test_imports_without_dask":
        print("skipping: dask is not installed (python3-dask)")
        pytest.skip("dask is not installed (python3-dask)")

DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64,
          np.int64, np.float16, np.float32, np.float64]


def random_chunks(rng: np.random.Generator, n: int, empty: bool = True) -> tuple:
    """A random split of n into uneven chunks, some of them empty."""
    k = int(rng.integers(1, 9))
    cuts = np.sort(rng.integers(0, n + 1, k - 1)) if n else np.zeros(k - 1, np.int64)
    sizes = np.diff(np.concatenate([[0], cuts, [n]])).tolist()
    if empty and rng.random() < 0.5:
        sizes.insert(int(rng.integers(0, len(sizes) + 1)), 0)
    return (tuple(int(s) for s in sizes),)


def sample(rng: np.random.Generator, dtype, n: int) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(n) < 0.3
    if dt.kind in "ui":
        info = np.iinfo(dt)
        lo, hi = (max(int(info.min), -1000), min(int(info.max), 1000))
        if dt.itemsize == 8 and rng.random() < 0.5:
            # beyond 2^53 (the first pass finds them exactly), multiples of 256 so that they
            # are doubles: an automatic range whose ends are not doubles leaves samples outside
            # gpuhist.histogram's edges (it then raises "not finite", where NumPy counts)
            base = 2**60 if dt.kind == "u" else -(2**60)
            return (base + 256 * rng.integers(0, 4096, n)).astype(dt)
        return rng.integers(lo, hi, n, endpoint=True).astype(dt)
    return (rng.standard_normal(n) * 10).astype(dt)


def check_histogram(x: np.ndarray, chunks, numpy_too: bool = True, **kw) -> None:
    """gpuhist.dask.histogram over x cut into `chunks` == gpuhist.histogram(x), and NumPy."""
    want = gpuhist.histogram(x, **kw)
    hist, edges = gd.histogram(da.from_array(x, chunks=chunks), **kw)
    assert isinstance(hist, da.Array)
    same_bits(edges, want[1])
    same_bits(hist.compute(), want[0])
    if numpy_too:
        ref = np.histogram(x, **kw)
        same_bits(edges, ref[1])
        same_bits(hist.compute(), ref[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_histogram_dtypes_random_chunkings(dtype):
    rng = np.random.default_rng([SEED, np.dtype(dtype).num])
    print(f"seed {SEED}, dtype {np.dtype(dtype).name}")
    for trial in range(4):
        n = int(rng.integers(0, 3000))
        x = sample(rng, dtype, n)
        chunks = random_chunks(rng, n)
        print(f"trial {trial}: n={n}, chunks={chunks}")
        warn = np.dtype(dtype) == np.bool_
        with pytest.warns(RuntimeWarning) if warn else _nothing():
            check_histogram(x, chunks, bins=int(rng.integers(1, 40)))
        with pytest.warns(RuntimeWarning) if warn else _nothing():
            check_histogram(x, chunks, bins=7, range=(-5, 20))
        if n and not warn:
            lo, hi = float(x.min()), float(x.max())
            edges = np.unique(np.concatenate([[lo - 1], rng.uniform(lo, hi + 1, 6), [hi + 1]]))
            check_histogram(x, chunks, bins=edges)
            check_histogram(x, chunks, bins=edges, density=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_histogram_multidimensional_and_unknown_chunks():
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED}")
    x = rng.standard_normal((60, 47)).astype(np.float32)
    for chunks in [(7, 11), (60, 47), ((0, 30, 30), (1, 46)), (13, 5)]:
        check_histogram(x, chunks, bins=23)
        check_histogram(x, chunks, bins=16, range=(-2, 2))
    d = da.from_array(x.ravel(), chunks=101)
    positive = d[d > 0]  # chunk sizes unknown
    assert np.isnan(positive.size)
    hist, edges = gd.histogram(positive, 12)
    want = gpuhist.histogram(x.ravel()[x.ravel() > 0], 12)
    same_bits(edges, want[0 + 1])
    same_bits(hist.compute(), want[0])
    # weights cut by the same mask: same unknown chunks, counted with them
    wd = da.from_array(x.ravel() * 3, chunks=101)
    hist, _ = gd.histogram(positive, 12, weights=wd[d > 0])
    flat = x.ravel()
    same_bits(hist.compute(), gpuhist.histogram(flat[flat > 0], 12, weights=flat[flat > 0] * 3)[0])
    # weights chunked otherwise while the sizes are unknown: refused, saying so
    with pytest.raises(ValueError, match="chunk sizes are unknown"):
        gd.histogram(positive, 12, weights=da.from_array(x.ravel() * 3, chunks=50)[d > 0])
    nothing = d[d > 100]  # unknown sizes and no sample: NumPy's range [0, 1]
    hist, edges = gd.histogram(nothing, 4)
    ref = np.histogram(np.zeros(0, np.float32), 4)
    same_bits(edges, ref[1])
    same_bits(hist.compute(), ref[0])


def test_histogram_zero_d_and_empty():
    check_histogram(np.array(2.5), (), bins=3)
    check_histogram(np.zeros(0, np.int16), ((0,),), bins=3)
    check_histogram(np.zeros(0, np.float64), ((0, 0),), bins=3, range=(1, 2))
    check_histogram(np.arange(5.0), ((2, 3),), bins=[1.0])  # fewer than two edges


def test_histogram_repeated_and_infinite_edges():
    rng = np.random.default_rng(SEED + 1)
    x = np.concatenate([rng.standard_normal(500), [-np.inf, np.inf, 0.0, 1.0, 1.0, np.nan]])
    w = rng.standard_normal(x.size)
    for edges in ([-np.inf, 0, 1, 1, np.inf], [-1, 0, 0, 1], [-np.inf, 0.5], [0.0, 0.5, np.inf]):
        for trial in range(3):
            chunks = random_chunks(rng, x.size)
            print(f"seed {SEED + 1}: edges {edges}, chunks {chunks}")
            want = gpuhist.histogram(x, edges, weights=w)
            hist, _ = gd.histogram(da.from_array(x, chunks=chunks), edges,
                                   weights=da.from_array(w, chunks=chunks))
            same_bits(hist.compute(), want[0])
            check_histogram(x, chunks, numpy_too=False, bins=edges)


def paired(rng: np.random.Generator, values: np.ndarray, dtype) -> tuple:
    """(samples, weights): every value twice, once with weight +-1e16 + small and once with
    -+1e16 + small, shuffled apart. Each bin's exact sum is the sum of the small parts, which
    adding in float64 chunk by chunk loses in a way that depends on the chunking."""
    m = values.size
    big = rng.choice([1e16, -1e16, 0.0], m)
    small = np.array([1.0, 0.5, 3.0e-3 * (1 + 2**-20), -0.25])
    w = np.concatenate([big + small[rng.integers(0, 4, m)], -big + small[rng.integers(0, 4, m)]])
    perm = rng.permutation(2 * m)
    return np.concatenate([values, values])[perm], w.astype(dtype)[perm]


def exact_sums(x: np.ndarray, w: np.ndarray, edges: np.ndarray, dtype) -> np.ndarray:
    """Each bin's weights added as Fractions, rounded once to float64, then to `dtype` (as
    gpuhist returns float32 sums)."""
    idx = np.searchsorted(edges, x, side="right") - 1
    idx[x == edges[-1]] = edges.size - 2
    out = []
    for b in range(edges.size - 1):
        s = sum((Fraction(float(v)) for v in w[idx == b]), Fraction(0))
        out.append(float(s))
    return np.array(out, np.float64).astype(dtype)


@pytest.mark.parametrize("wdtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_weighted_exact_whatever_the_chunks(wdtype):
    rng = np.random.default_rng([SEED, 7, np.dtype(wdtype).itemsize])
    print(f"seed {SEED}, weights {np.dtype(wdtype).name}")
    x, w = paired(rng, rng.uniform(0, 1, 2000), wdtype)
    n = x.size
    edges = np.linspace(0, 1, 9)
    want = exact_sums(x, w, edges, wdtype)
    same_bits(gpuhist.histogram(x, 8, (0, 1), weights=w)[0], want)
    naive = set()
    for trial in range(6):
        chunks = random_chunks(rng, n)
        print(f"trial {trial}: chunks {chunks}")
        naive.add(sum((float(np.sum(w[s:s + c].astype(np.float64) *
                                    ((x[s:s + c] >= 0.25) & (x[s:s + c] < 0.375))))
                       for s, c in zip(np.cumsum((0,) + chunks[0][:-1]), chunks[0])), 0.0))
        dx = da.from_array(x, chunks=chunks)
        dw = da.from_array(w, chunks=chunks)
        for split_every in (None, 2):
            hist, got_edges = gd.histogram(dx, 8, (0, 1), weights=dw, split_every=split_every)
            same_bits(hist.compute(), want)
            same_bits(got_edges, edges)
        hist, _ = gd.histogram(dx, 8, (0, 1), weights=dw, density=True)
        same_bits(hist.compute(), gpuhist.histogram(x, 8, (0, 1), weights=w, density=True)[0])
        # weights cut differently from the samples: rechunked to the samples' chunks
        hist, _ = gd.histogram(dx, 8, (0, 1), weights=da.from_array(w, chunks=n // 3 + 1))
        same_bits(hist.compute(), want)
    # a NumPy array of weights is cut like the samples
    same_bits(gd.histogram(dx, 8, (0, 1), weights=w)[0].compute(), want)
    # automatic range with weights: the first pass, then the same sums as one call
    hist, got_edges = gd.histogram(dx, 5, weights=dw)
    ref = gpuhist.histogram(x, 5, weights=w)
    same_bits(got_edges, ref[1])
    same_bits(hist.compute(), ref[0])
    print(f"naive chunk-by-chunk sums of bin 2: {sorted(naive)}, exact: {want[2]}")
    assert len(naive) > 1 or want[2] not in naive  # the data does defeat naive sums


def test_weights_of_other_dtypes():
    rng = np.random.default_rng(SEED + 3)
    x = rng.integers(0, 50, 3000).astype(np.int32)
    chunks = random_chunks(rng, x.size)
    print(f"seed {SEED + 3}: chunks {chunks}")
    for w in (rng.integers(-5, 5, x.size).astype(np.int16),
              rng.standard_normal(x.size).astype(np.float16),
              rng.standard_normal(x.size).astype(">f8"), rng.random(x.size) < 0.5):
        want = gpuhist.histogram(x, 10, (0, 50), weights=w)
        hist, _ = gd.histogram(da.from_array(x, chunks=chunks), 10, (0, 50),
                               weights=da.from_array(w, chunks=chunks))
        same_bits(hist.compute(), want[0])


def test_automatic_range_over_nan_and_inf():
    x = np.linspace(-3, 3, 400)
    for bad, where in ((np.nan, 10), (np.inf, 399), (-np.inf, 0)):
        y = x.copy()
        y[where] = bad
        with pytest.raises(ValueError) as ref:
            np.histogram(y, 5)
        with pytest.raises(ValueError) as got:
            hist, _ = gd.histogram(da.from_array(y, chunks=37), 5)
            hist.compute()
        assert str(got.value) == str(ref.value)
    with pytest.raises(ValueError, match=r"autodetected range of \[nan, nan\] is not finite"):
        gd.histogram(da.from_array(np.full(10, np.nan), chunks=3), 5)
    # an explicit range counts them as outliers, as NumPy does
    y = x.copy()
    y[[3, 9]] = [np.nan, np.inf]
    check_histogram(y, 41, bins=6, range=(-1, 1))


def test_bins_rules_and_bad_input():
    x = da.from_array(np.arange(100.0), chunks=30)
    with pytest.raises(NotImplementedError, match="needs the whole data"):
        gd.histogram(x, "auto")
    with pytest.raises(ValueError, match="not a valid estimator"):
        gd.histogram(x, "nonsense")
    with pytest.raises(TypeError, match="not supported for weighted data"):
        gd.histogram(x, "fd", weights=x)
    with pytest.raises(TypeError, match="must be a dask.array.Array"):
        gd.histogram(np.arange(10.0), 5)
    with pytest.raises(TypeError, match="must be a dask.array.Array"):
        gd.bincount([1, 2, 3])
    with pytest.raises(ValueError, match="weights should have the same shape as a."):
        gd.histogram(x, 5, weights=da.ones(99, chunks=30))
    with pytest.raises(TypeError, match="weights of dtype complex128 are not supported"):
        gd.histogram(x, 5, weights=da.ones(100, chunks=30, dtype=complex))
    with pytest.raises(TypeError, match="not supported"):
        gd.histogram(da.ones(10, chunks=3, dtype=complex), 5)
    with pytest.raises(ValueError, match="max must be larger than min"):
        gd.histogram(x, 5, range=(2, 1))
    with pytest.raises(ValueError, match="`bins` must increase monotonically"):
        gd.histogram(x, [1, 0])
    with pytest.raises(ValueError, match="`bins` must be positive"):
        gd.histogram(x, 0)
    with pytest.raises(ValueError, match="backend"):
        gd.histogram(x, 5, backend="tpu")
    # bins and range given as dask values are computed first
    hist, edges = gd.histogram(x, da.from_array(np.array([0.0, 10, 99]), chunks=2),
                               range=None)
    same_bits(hist.compute(), np.histogram(np.arange(100.0), [0.0, 10, 99])[0])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                                   np.int64, np.bool_], ids=lambda t: np.dtype(t).name)
def test_bincount_random_chunkings(dtype):
    rng = np.random.default_rng([SEED, 11, np.dtype(dtype).num])
    print(f"seed {SEED}, dtype {np.dtype(dtype).name}")
    for trial in range(3):
        n = int(rng.integers(0, 2000))
        hi = 2 if dtype is np.bool_ else 300 if np.dtype(dtype).itemsize > 1 else 100
        x = rng.integers(0, hi, n).astype(dtype)
        chunks = random_chunks(rng, n)
        print(f"trial {trial}: n={n}, chunks={chunks}")
        dx = da.from_array(x, chunks=chunks)
        for minlength in (0, 3, hi + 5):
            got = gd.bincount(dx, minlength=minlength)
            assert isinstance(got, da.Array)
            same_bits(got.compute(), np.bincount(x, minlength=minlength))
        for wdtype in (np.float32, np.float64):
            x, w = paired(rng, x[:n // 2], wdtype)
            n = x.size
            chunks = random_chunks(rng, n)
            print(f"weights {np.dtype(wdtype).name}: n={n}, chunks={chunks}")
            dx = da.from_array(x, chunks=chunks)
            got = gd.bincount(dx, weights=da.from_array(w, chunks=chunks), minlength=4)
            same_bits(got.compute(), gpuhist.bincount(x, weights=w, minlength=4))
            bins = max(int(x.max()) + 1 if n else 0, 4)
            want = [float(sum((Fraction(float(v)) for v in w[x == b]), Fraction(0)))
                    for b in range(bins)]
            same_bits(got.compute(), np.array(want, np.float64))


def test_bincount_bad_input_like_numpy():
    cases = [(np.array([1.0, 2.0]), {}), (np.array([[1, 2]]), {}), (np.array([1, -1]), {}),
             (np.array([1, 2]), {"minlength": -1}), (np.array([3, -1], np.int8), {}),
             (np.array([1, 2, 3]), {"weights": np.ones(2)})]
    for x, kw in cases:
        with pytest.raises(Exception) as want:
            np.bincount(x, **kw)
        with pytest.raises(type(want.value)) as got:
            dkw = dict(kw)
            if "weights" in dkw:
                dkw["weights"] = da.from_array(dkw["weights"], chunks=1)
            gd.bincount(da.from_array(x, chunks=1), **dkw).compute()
        assert str(got.value) == str(want.value), (x, kw)
    same_bits(gd.bincount(da.zeros(0, chunks=1, dtype=np.int32), minlength=3).compute(),
              np.bincount(np.zeros(0, np.int32), minlength=3))
    same_bits(gd.bincount(da.zeros(0, chunks=1, dtype=np.int32),
                          weights=da.zeros(0, chunks=1)).compute(),
              np.bincount(np.zeros(0, np.int32), np.zeros(0)))


def test_one_graph_many_results():
    """Several histograms of one array computed together share the chunks and stay apart."""
    x = np.random.default_rng(SEED + 5).standard_normal(5000)
    dx = da.from_array(x, chunks=777)
    a, b, c = gd.histogram(dx, 5)[0], gd.histogram(dx, 9, (-1, 1))[0], \
        gd.bincount((abs(dx) * 10).astype(np.int64))
    got = dask.compute(a, b, c)
    same_bits(got[0], np.histogram(x, 5)[0])
    same_bits(got[1], np.histogram(x, 9, (-1, 1))[0])
    same_bits(got[2], np.bincount((abs(x) * 10).astype(np.int64)))


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed",
                                      reason="dask.distributed is not installed "
                                      "(python3-distributed)")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_local_cluster(cluster_client):
    rng = np.random.default_rng(SEED + 9)
    print(f"seed {SEED + 9}; workers {list(cluster_client.scheduler_info()['workers'])}")
    x, w = paired(rng, rng.standard_normal(10000).astype(np.float32), np.float64)
    chunks = random_chunks(rng, x.size)
    print(f"chunks {chunks}")
    dx = da.from_array(x, chunks=chunks).persist()
    dw = da.from_array(w, chunks=chunks).persist()
    hist, edges = gd.histogram(dx, 40, weights=dw, split_every=3)
    ref = gpuhist.histogram(x, 40, weights=w)
    same_bits(edges, ref[1])
    same_bits(hist.compute(), ref[0])
    check_histogram(x, chunks, bins=64, range=(-4, 4))
    ids = rng.integers(0, 500, 30000)
    same_bits(gd.bincount(da.from_array(ids, chunks=4096), minlength=600).compute(),
              np.bincount(ids, minlength=600))
    same_bits(gd.bincount(da.from_array(ids, chunks=4096),
                          weights=da.from_array(w[:1] * np.ones(ids.size), chunks=1000))
              .compute(), gpuhist.bincount(ids, weights=w[:1] * np.ones(ids.size)))


_PROCESS_CLUSTER = r"""
import numpy as np, dask.array as da, distributed, gpuhist, gpuhist.dask as gd
if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        rng = np.random.default_rng(SEED)
        x = rng.standard_normal(10000)
        w = np.where(rng.random(x.size) < 0.5, 1e16, -1e16) + rng.standard_normal(x.size)
        hist, edges = gd.histogram(da.from_array(x, chunks=999), 32,
                                   weights=da.from_array(w, chunks=999))
        got, want = hist.compute(), gpuhist.histogram(x, 32, weights=w)[0]
        assert got.tobytes() == want.tobytes(), (got, want)
        p = rng.uniform(0, 1, (10000, 2))
        hist, _ = gd.histogramdd(da.from_array(p, chunks=(999, 2)), [5, 4], [(0, 1), (0, 1)],
                                 weights=da.from_array(w, chunks=999))
        got = hist.compute()
        want = gpuhist.histogramdd(p, [5, 4], [(0, 1), (0, 1)], weights=w)[0]
        assert got.tobytes() == want.tobytes(), (got, want)
        print("process cluster: same bits")
"""


def test_local_cluster_processes(tmp_path):
    """Workers in their own processes: the chunk tasks and their shared spec travel pickled."""
    pytest.importorskip("distributed", reason="dask.distributed is not installed")
    script = tmp_path / "cluster.py"
    script.write_text(_PROCESS_CLUSTER.replace("SEED", str(SEED)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "process cluster: same bits" in out.stdout


def test_weight_state_functions():
    """_core's exact parts: states of two parts added == the state of one call, sums and sums
    of squares rounded once from it; bad shapes refused."""
    from gpuhist import _context, _core  # noqa: PLC0415

    rng = np.random.default_rng(SEED + 17)
    x, w = paired(rng, rng.uniform(0, 1, 1000), np.float64)
    ctx = _context.get("cpu").core
    spec = (0, 10, 0.0, 1.0, None, 0, True, False)
    for squares in (False, True):
        words = _core.weight_state_words(10, "f64", squares)
        assert words == 13 * (69 + (69 if squares else 0))

        def part(xs, ws):
            state = np.zeros(words, np.int64)
            sums, sq = np.empty(10), np.empty(10) if squares else None
            ctx.histogram(xs, *spec, np.empty(10, np.int64), ws, sums, sq, None, state)
            return state, sums, sq

        whole, sums, sq = part(x, w)
        merged, _, _ = part(x[:377], w[:377])
        _core.weight_state_add(merged, part(x[377:], w[377:])[0], 10, "f64", squares)
        assert merged.tobytes() == whole.tobytes()
        got, got_sq = np.empty(10), np.empty(10) if squares else None
        _core.weight_state_sums(merged, 10, "f64", squares, False, got, got_sq)
        same_bits(got, sums)
        if squares:
            same_bits(got_sq, sq)
    assert _core.weight_state_words(10, "f32", False) == 13 * 11
    with pytest.raises(ValueError, match="float32 or float64"):
        _core.weight_state_words(10, "i32", False)
    with pytest.raises(ValueError, match="1 bin or more"):
        _core.weight_state_words(0, "f64", False)
    with pytest.raises(ValueError, match="int64 array of 897 items"):
        _core.weight_state_add(np.zeros(897, np.int64), np.zeros(5, np.int64), 10, "f64", False)
    with pytest.raises(ValueError, match="state must be"):
        _core.weight_state_sums(np.zeros(5, np.int64), 10, "f64", False, False, np.empty(10))
    with pytest.raises(ValueError, match="without squares"):
        _core.weight_state_sums(np.zeros(897, np.int64), 10, "f64", False, False, np.empty(10),
                                np.empty(10))
    with pytest.raises(ValueError, match="weight_state needs weights"):
        ctx.histogram(x, *spec, np.empty(10, np.int64), weight_state=np.zeros(897, np.int64))
    with pytest.raises(ValueError, match="weight_state must be"):
        ctx.histogram(x, *spec, np.empty(10, np.int64), w, np.empty(10),
                      weight_state=np.zeros(896, np.int64))


def test_cupy_chunks():
    """CuPy chunks are counted in place on their GPU (gpuhist's device path); needs CuPy and a
    CUDA GPU (scripts/gpu-check runs it on the device machine), skips otherwise."""
    try:
        import cupy  # noqa: PLC0415
    except ImportError:
        print("skipping: cupy is not installed")
        pytest.skip("cupy is not installed")
    problem = backend_problem("cuda")
    if problem:
        print(f"skipping: {problem}")
        pytest.skip(problem)
    rng = np.random.default_rng(SEED + 13)
    x = rng.standard_normal(300_000).astype(np.float32)
    chunks = random_chunks(rng, x.size)
    print(f"seed {SEED + 13}: chunks {chunks}")
    dx = da.from_array(x, chunks=chunks).map_blocks(cupy.asarray)
    for bins, rng_ in ((256, (-4, 4)), (100, None), ([-2.0, -1, 0, 0.5, 3], None)):
        hist, edges = gd.histogram(dx, bins, rng_)
        want = np.histogram(x, bins, rng_)
        same_bits(edges, want[1])
        same_bits(np.asarray(hist.compute()), want[0])
    ids = rng.integers(0, 1000, 100_000).astype(np.int32)
    got = gd.bincount(da.from_array(ids, chunks=7777).map_blocks(cupy.asarray), minlength=1200)
    same_bits(got.compute(), np.bincount(ids, minlength=1200))
    # weights in device chunks: each chunk's exact weight state from the CUDA backend, merged
    # in the tree: gpuhist.histogram's sums on the whole host array, bit for bit
    x64 = x.astype(np.float64)
    xw, w = paired(rng, x64[:50_000], np.float64)
    wchunks = random_chunks(rng, xw.size)
    dxw = da.from_array(xw, chunks=wchunks).map_blocks(cupy.asarray)
    dw = da.from_array(w, chunks=wchunks).map_blocks(cupy.asarray)
    try:
        hist, _ = gd.histogram(dxw, 64, (-4, 4), weights=dw)
        got = hist.compute()
    except gpuhist.GpuhistError as e:
        if e.status != "UNSUPPORTED":
            raise
        print(f"weighted device chunks not compared: the CUDA backend does not sum weights: {e}")
        return
    same_bits(np.asarray(got), gpuhist.histogram(xw, 64, (-4, 4), weights=w)[0])
    with pytest.raises(TypeError, match="host"):
        gd.histogram(dxw, 10, (0, 1), weights=da.from_array(w, chunks=wchunks))[0].compute()


def test_imports_without_dask():
    code = ("import sys; sys.modules['dask'] = None\n"
            "import gpuhist, gpuhist.dask\n"
            "try:\n    gpuhist.dask.histogram(None)\nexcept ImportError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "gpuhist.dask needs dask" in out.stdout


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_histogramdd_chunkings(dtype) -> None:
    """N-D over random row chunkings (column chunks too) equals gpuhist.histogramdd and
    numpy.histogramdd on the whole sample, bit for bit: counts, edges, density."""
    rng = np.random.default_rng(SEED + 31)
    n, D = 20011, 3
    x = rng.uniform(-10, 110, (n, D))
    if np.dtype(dtype).kind == "f":
        x[rng.integers(0, n, 50), rng.integers(0, D, 50)] = np.nan
        x[:40] = np.round(x[:40])  # points on edges
    x = x.astype(dtype) if np.dtype(dtype).kind == "f" else np.clip(x, 0, 255).astype(dtype)
    bins = [5, np.array([0.0, 3, 50, 51, 100]), 7]
    rngs = [(0, 100), None, (-5.5, 99.5)]
    ref, ref_e = np.histogramdd(x, bins=bins, range=rngs)
    for trial in range(3):
        dx = da.from_array(x, chunks=random_chunks(rng, n, empty=False) + ((1, 2),))
        hist, edges = gd.histogramdd(dx, bins=bins, range=rngs, split_every=2)
        h = hist.compute()
        assert h.dtype == np.float64 and h.shape == ref.shape
        same_bits(h, ref)
        for a, b in zip(edges, ref_e):
            same_bits(a, b)
        g, _ = gpuhist.histogramdd(x, bins=bins, range=rngs)
        same_bits(h, g)
    dens, _ = gd.histogramdd(dx, bins=bins, range=rngs, density=True)
    same_bits(dens.compute(), np.histogramdd(x, bins=bins, range=rngs, density=True)[0])
    # columns as a sequence of 1-D dask arrays
    cols = [da.from_array(np.ascontiguousarray(x[:, i]), chunks=4000) for i in range(D)]
    hist, _ = gd.histogramdd(cols, bins=bins, range=rngs)
    same_bits(hist.compute(), ref)


def test_histogram2d_and_refusals() -> None:
    rng = np.random.default_rng(SEED + 32)
    xv, yv = rng.normal(0, 1, 5000), rng.normal(1, 2, 5000)
    dxv, dyv = da.from_array(xv, chunks=777), da.from_array(yv, chunks=1234)
    H, xe, ye = gd.histogram2d(dxv, dyv, bins=[6, np.array([-3.0, 0, 1, 8])],
                               range=[(-2, 2), None])
    r = np.histogram2d(xv, yv, bins=[6, np.array([-3.0, 0, 1, 8])], range=[(-2, 2), None])
    same_bits(H.compute(), r[0])
    same_bits(xe, r[1])
    same_bits(ye, r[2])
    pts = da.stack([dxv, dyv], axis=1)
    with pytest.raises(ValueError, match="axis 0 has a bin count but no range"):
        gd.histogramdd(pts, bins=5)
    with pytest.raises(ValueError, match="same length"):
        gd.histogramdd(pts, bins=5, range=[(0, 1), (0, 1)], weights=dxv[:-1])
    with pytest.raises(TypeError, match="must be a dask.array.Array"):
        gd.histogramdd(np.zeros((3, 2)), bins=5, range=[(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="must be \\(N, D\\)"):
        gd.histogramdd(da.zeros((2, 2, 2), chunks=1), bins=5)



def exact_nd_sums(x: np.ndarray, w: np.ndarray, edges: list) -> np.ndarray:
    """Each joint bin's weights added as Fractions and rounded once to float64 (every axis's
    last edge inclusive; points with a NaN or outside coordinate left out)."""
    n, D = x.shape
    shape = tuple(e.size - 1 for e in edges)
    flat = np.zeros(n, np.int64)
    keep = np.ones(n, bool)
    for i, e in enumerate(edges):
        c = x[:, i]
        idx = np.searchsorted(e, c, side="right") - 1
        idx[c == e[-1]] = e.size - 2
        keep &= ~np.isnan(c) & (c >= e[0]) & (c <= e[-1])
        flat = flat * shape[i] + np.clip(idx, 0, shape[i] - 1)
    out = [Fraction(0)] * int(np.prod(shape))
    for b, v in zip(flat[keep].tolist(), w[keep].tolist()):
        out[b] += Fraction(v)
    return np.array([float(f) for f in out], np.float64).reshape(shape)


@pytest.mark.parametrize("wdtype", [np.float64, np.float32, np.int64],
                         ids=["f64", "f32", "int64"])
def test_histogramdd_weighted_chunkings(wdtype) -> None:
    """Weighted N-D over random row chunkings (empty chunks too; weights chunked otherwise or
    on the host): each chunk's exact weight state, merged in a tree and rounded once, equals
    gpuhist.histogramdd on the whole sample and the exact Fraction sums bit for bit, where
    adding the chunks' rounded sums would not (weights +-1e16 beside small ones)."""
    rng = np.random.default_rng([SEED, 41, np.dtype(wdtype).itemsize])
    print(f"seed [{SEED}, 41, {np.dtype(wdtype).itemsize}]")
    m, D = 3001, 3
    pts = rng.uniform(-0.1, 1.1, (m, D))
    pts[:20] = np.round(pts[:20] * 4) / 4  # on the edges
    pts[rng.integers(0, m, 15), rng.integers(0, D, 15)] = np.nan
    x = np.concatenate([pts, pts])[perm := rng.permutation(2 * m)]
    if wdtype == np.int64:
        w = rng.integers(-2**40, 2**40, 2 * m)
    else:
        _, w = paired(rng, np.zeros(m), wdtype)
    w = w[perm] if wdtype != np.int64 else w
    bins = [4, np.array([0.0, 0.25, 0.3, 1.0]), 3]
    rngs = [(0, 1), None, (-0.05, 1.05)]
    ref, ref_e = gpuhist.histogramdd(x, bins=bins, range=rngs, weights=w)
    same_bits(ref, exact_nd_sums(x, w.astype(np.float64), ref_e))
    for trial in range(4):
        chunks = random_chunks(rng, x.shape[0])
        print(f"chunks {chunks}")
        dx = da.from_array(x, chunks=chunks + ((2, 1),))
        dw = (da.from_array(w, chunks=random_chunks(rng, w.size, empty=False)) if trial % 2
              else w)
        hist, edges = gd.histogramdd(dx, bins=bins, range=rngs, weights=dw,
                                     split_every=int(rng.integers(2, 4)))
        h = hist.compute()
        assert h.dtype == np.float64 and h.shape == ref.shape
        same_bits(h, ref)
        for a, b in zip(edges, ref_e):
            same_bits(a, b)
    dens, _ = gd.histogramdd(dx, bins=bins, range=rngs, weights=dw, density=True)
    same_bits(dens.compute(), gpuhist.histogramdd(x, bins=bins, range=rngs, weights=w,
                                                  density=True)[0])
    # histogram2d of two 1-D dask arrays with weights
    cx, cy = da.from_array(x[:, 0], chunks=777), da.from_array(x[:, 1], chunks=1234)
    H, xe, ye = gd.histogram2d(cx, cy, bins=[5, 2], range=[(0, 1), (0, 1)],
                               weights=da.from_array(w, chunks=500))
    want = gpuhist.histogram2d(x[:, 0], x[:, 1], bins=[5, 2], range=[(0, 1), (0, 1)], weights=w)
    same_bits(H.compute(), want[0])
    same_bits(xe, want[1])
    same_bits(ye, want[2])
