"""wavewarp.TwedIndex: a collection prepared once, queried many times (like a FAISS index).

Its results must be those of twed_pairwise / twed_knn with the same parameters; it must own its
data (the caller's arrays may change afterwards); misuse (wrong queries, a closed index, re-entry
from a progress callback) raises clear errors. GPU tests follow test_gpu.py: they need a CUDA
build, a GPU and CuPy or PyTorch, and skip with the reason shown by pytest -rs elsewhere.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading

import numpy as np
import pytest

import wavewarp
from test_gpu import StandInDeviceArray, _matrix_on_gpu, _to_device, gpu, no_gpu  # noqa: F401

RTOL = 1e-12


def _same_pairwise(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)


def _same_knn(got, want) -> None:
    (gi, gd), (wi, wd) = got, want
    assert gi.dtype == wi.dtype == np.intp and gd.dtype == wd.dtype
    np.testing.assert_array_equal(gi, wi)
    np.testing.assert_allclose(gd, wd, rtol=RTOL, atol=0)


# ----------------------------------------------------------------------------------- same results


def _cases(rng):
    """(name, X, queries, params) on which the index must equal twed_pairwise / twed_knn."""
    uni = rng.normal(size=(30, 40))
    multi = rng.normal(size=(25, 33, 3))
    ragged = [rng.normal(size=(n, 2)) for n in (5, 40, 17, 1, 64, 23, 31)]
    ragged_q = [rng.normal(size=(n, 2)) for n in (12, 3, 50)]
    return [
        ("univariate", uni, rng.normal(size=(6, 28)), {}),
        ("univariate-params", uni, rng.normal(size=(4, 40)), dict(nu=0.5, lmbda=0.25, degree=1)),
        ("multivariate", multi, rng.normal(size=(5, 47, 3)), {}),
        ("multivariate-L1", multi, rng.normal(size=(5, 20, 3)), dict(degree=1, nu=0.01)),
        ("multivariate-L3", multi, rng.normal(size=(5, 20, 3)), dict(degree=3, lmbda=0.0)),
        ("ragged", ragged, ragged_q, dict(nu=0.1)),
        ("ragged-vs-array", ragged, rng.normal(size=(4, 19, 2)), {}),
        ("float32", uni.astype(np.float32), rng.normal(size=(6, 28)).astype(np.float32), {}),
        ("float32-multi", multi.astype(np.float32), rng.normal(size=(5, 30, 3)).astype(np.float32), {}),
        ("float32-ragged", [s.astype(np.float32) for s in ragged], [q.astype(np.float32) for q in ragged_q], {}),
        ("one-query", uni, rng.normal(size=(1, 35)), {}),  # one query: q[None]; a 1-D q is refused
    ]


def test_index_equals_pairwise_and_knn(rng):
    for name, X, Q, params in _cases(rng):
        index = wavewarp.TwedIndex(X, backend="cpu", **params)
        want = wavewarp.twed_pairwise(Q, X, backend="cpu", **params)
        _same_pairwise(index.pairwise(Q), want)
        for k in (1, 3, len(index)):
            _same_knn(index.knn(Q, k), wavewarp.twed_knn(Q, X, k, backend="cpu", **params))
        # and the columns are the series of X: the index of a collection against itself
        np.testing.assert_allclose(index.pairwise(X), wavewarp.twed_pairwise(X, X, backend="cpu", **params),
                                   rtol=RTOL, err_msg=name)


def test_index_properties(rng):
    X = rng.normal(size=(12, 30, 4))
    index = wavewarp.TwedIndex(X, nu=0.25, lmbda=0.5, degree=3, backend="cpu", threads=1)
    assert len(index) == 12
    assert index.dim == 4
    assert index.dtype == np.float64
    assert index.backend == "cpu"
    assert index.describe().startswith("cpu (1 thread")
    assert (index.nu, index.lmbda, index.degree) == (0.25, 0.5, 3)
    assert not index.closed
    assert repr(index) == ("TwedIndex(n=12, dim=4, dtype=float64, backend='cpu', nu=0.25, lmbda=0.5, "
                           "degree=3)")
    index32 = wavewarp.TwedIndex([np.zeros(5, np.float32), np.ones(9, np.float32)], backend="cpu")
    assert (len(index32), index32.dim, index32.dtype) == (2, 1, np.float32)
    assert "TwedIndex" in wavewarp.__all__


def test_index_with_stamps(rng):
    X = rng.normal(size=(8, 20))
    tX = np.cumsum(rng.uniform(0.1, 2.0, size=(8, 20)), axis=1)
    Q = rng.normal(size=(3, 15))
    tQ = np.cumsum(rng.uniform(0.1, 2.0, size=(3, 15)), axis=1)
    index = wavewarp.TwedIndex(X, nu=0.3, backend="cpu", tX=tX)
    want = wavewarp.twed_pairwise(Q, X, tX=tQ, tY=tX, nu=0.3, backend="cpu")
    _same_pairwise(index.pairwise(Q, tqueries=tQ), want)
    _same_knn(index.knn(Q, 2, tqueries=tQ), wavewarp.twed_knn(Q, X, 2, tqueries=tQ, tX=tX, nu=0.3, backend="cpu"))
    # default stamps differ from these: the index did keep its own
    assert not np.allclose(index.pairwise(Q), wavewarp.twed_pairwise(Q, X, nu=0.3, backend="cpu"))


def test_queries_of_any_layout_and_integer_dtype(rng):
    X = rng.normal(size=(10, 16, 2))
    index = wavewarp.TwedIndex(X, backend="cpu")
    Q = rng.integers(-3, 3, size=(2, 16, 4))[:, :, ::2]  # int64, non-contiguous
    want = wavewarp.twed_pairwise(Q, X, backend="cpu")
    _same_pairwise(index.pairwise(Q), want)
    _same_pairwise(index.pairwise(Q.tolist()), want)
    # a float64 index from integers and a Fortran-ordered array
    Xi = rng.integers(0, 9, size=(6, 12))
    _same_pairwise(wavewarp.TwedIndex(np.asfortranarray(Xi), backend="cpu").pairwise(Xi[:2]),
                   wavewarp.twed_pairwise(Xi[:2], Xi, backend="cpu"))


# ----------------------------------------------------------------------------------- owns its data


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_caller_may_change_or_delete_the_data(rng, dtype):
    X = rng.normal(size=(15, 25, 2)).astype(dtype)  # C-contiguous of the right dtype: no copy in Python
    tX = np.cumsum(rng.uniform(0.5, 1.5, size=(15, 25)), axis=1).astype(dtype)
    Q = rng.normal(size=(4, 25, 2)).astype(dtype)
    want = wavewarp.twed_pairwise(Q, X, tY=tX, backend="cpu")
    want_knn = wavewarp.twed_knn(Q, X, 4, tX=tX, backend="cpu")
    index = wavewarp.TwedIndex(X, backend="cpu", tX=tX)
    X[...] = 0.0
    tX[...] = np.arange(1, 26)
    _same_pairwise(index.pairwise(Q), want)
    del X, tX
    gc.collect()
    _same_pairwise(index.pairwise(Q), want)
    _same_knn(index.knn(Q, 4), want_knn)


def test_caller_may_change_a_ragged_list(rng):
    series = [rng.normal(size=n) for n in (4, 9, 30, 2)]
    Q = [rng.normal(size=n) for n in (6, 11)]
    want = wavewarp.twed_pairwise(Q, series, backend="cpu")
    index = wavewarp.TwedIndex(series, backend="cpu")
    for s in series:
        s[:] = 7.0
    series.clear()
    gc.collect()
    _same_pairwise(index.pairwise(Q), want)


def test_index_outlives_other_calls(rng):
    """Other calls (which use pooled contexts) between queries do not disturb the index."""
    X = rng.normal(size=(20, 30))
    Q = rng.normal(size=(3, 30))
    index = wavewarp.TwedIndex(X, backend="cpu")
    want = index.pairwise(Q)
    wavewarp.twed_pairwise(rng.normal(size=(40, 50)), backend="cpu")
    other = wavewarp.TwedIndex(rng.normal(size=(5, 7, 2)), backend="cpu")
    wavewarp.twed_knn(Q, X, 2, backend="cpu")
    _same_pairwise(index.pairwise(Q), want)
    other.close()
    _same_pairwise(index.pairwise(Q), want)


# ----------------------------------------------------------------------------------- errors


def test_wrong_queries_raise_value_error(rng):
    index = wavewarp.TwedIndex(rng.normal(size=(10, 20, 3)), backend="cpu")
    with pytest.raises(ValueError, match="queries have dim 2 but the index has dim 3"):
        index.pairwise(rng.normal(size=(2, 20, 2)))
    with pytest.raises(ValueError, match="queries have dim 1 but the index has dim 3"):
        index.knn(rng.normal(size=(2, 20)), 1)
    with pytest.raises(ValueError, match="queries are float32 but the index holds float64"):
        index.pairwise(rng.normal(size=(2, 20, 3)).astype(np.float32))
    with pytest.raises(ValueError, match="queries are float32 but the index holds float64"):
        index.knn(rng.normal(size=(2, 20, 3)).astype(np.float32), 2)
    index32 = wavewarp.TwedIndex(rng.normal(size=(10, 20)).astype(np.float32), backend="cpu")
    with pytest.raises(ValueError, match=r"queries are float64 but the index holds float32.*astype"):
        index32.pairwise(rng.normal(size=(2, 20)))
    with pytest.raises(ValueError, match="queries are float64 but the index holds float32"):
        index32.knn([[1, 2, 3]], 1)  # integers are float64 precision
    bad = rng.normal(size=(2, 20, 3))
    bad[1, 5, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        index.pairwise(bad)
    with pytest.raises(ValueError, match="NaN"):
        index.knn(bad, 1)
    with pytest.raises(ValueError, match="empty"):
        index.pairwise([])
    with pytest.raises(ValueError, match="empty|length 0"):
        index.pairwise(np.zeros((2, 0, 3)))
    with pytest.raises(ValueError, match="time stamps"):
        index.pairwise(rng.normal(size=(2, 20, 3)), tqueries=np.ones((2, 19)))
    # the index still works after all that
    Q = rng.normal(size=(2, 20, 3))
    assert index.pairwise(Q).shape == (2, 10)


def test_k_out_of_range(rng):
    index = wavewarp.TwedIndex(rng.normal(size=(5, 10)), backend="cpu")
    Q = rng.normal(size=(2, 10))
    for k in (0, -1, 6, 10**6):
        with pytest.raises(ValueError, match=r"k must be between 1 and the number of series in the index \(5\)"):
            index.knn(Q, k)
    for k in (1.0, "2", True, None):
        with pytest.raises(TypeError, match="k must be an integer"):
            index.knn(Q, k)
    idx, dist = index.knn(Q, np.int32(5))
    assert idx.shape == dist.shape == (2, 5)


def test_bad_index_input(rng):
    with pytest.raises(ValueError, match="empty"):
        wavewarp.TwedIndex([], backend="cpu")
    with pytest.raises(ValueError, match="NaN"):
        wavewarp.TwedIndex(np.array([[1.0, np.inf]]), backend="cpu")
    with pytest.raises(ValueError, match="parameter"):
        wavewarp.TwedIndex(rng.normal(size=(3, 4)), nu=-1.0, backend="cpu")
    with pytest.raises(ValueError, match="degree"):
        wavewarp.TwedIndex(rng.normal(size=(3, 4)), degree=0, backend="cpu")
    with pytest.raises(ValueError, match="backend"):
        wavewarp.TwedIndex(rng.normal(size=(3, 4)), backend="gpu")
    with pytest.raises(ValueError, match="threads"):
        wavewarp.TwedIndex(rng.normal(size=(3, 4)), threads=0)
    with pytest.raises(ValueError, match="dim"):
        wavewarp.TwedIndex([np.zeros((3, 2)), np.zeros((3, 1))], backend="cpu")
    with pytest.raises(ValueError, match="stamps"):
        wavewarp.TwedIndex(rng.normal(size=(2, 4)), tX=np.array([[1.0, 2, 3, 2], [1, 2, 3, 4]]), backend="cpu")
    with pytest.raises(TypeError):
        wavewarp._wavewarp.Index()


def test_cuda_backend_without_gpu_is_a_wavewarp_error(rng):
    if wavewarp.cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(wavewarp.WavewarpError):
        wavewarp.TwedIndex(rng.normal(size=(3, 4)), backend="cuda")


@no_gpu
def test_gpu_arrays_without_gpu():
    dev = StandInDeviceArray(np.zeros((3, 8)))
    with pytest.raises(wavewarp.WavewarpError, match="CUDA"):
        wavewarp.TwedIndex(dev)
    with pytest.raises(ValueError, match="device memory"):
        wavewarp.TwedIndex(dev, backend="cpu")
    index = wavewarp.TwedIndex(np.zeros((3, 8)), backend="cpu")
    with pytest.raises(ValueError, match="device memory"):  # a CPU index reads host queries only
        index.pairwise(dev)


# ----------------------------------------------------------------------------------- life cycle


def test_closed_index_raises(rng):
    X = rng.normal(size=(6, 10))
    index = wavewarp.TwedIndex(X, backend="cpu")
    index.close()
    assert index.closed
    for call in (lambda: index.pairwise(X), lambda: index.knn(X, 1)):
        with pytest.raises(ValueError, match="closed TwedIndex"):
            call()
    index.close()  # idempotent
    assert (len(index), index.dim, index.dtype) == (6, 1, np.float64)  # metadata stays
    assert "closed" in repr(index)
    with pytest.raises(ValueError, match="closed index"):  # also through the C object (generic)
        index._index.pairwise(wavewarp._arrays.pack(wavewarp._arrays.open_collection(X, "q"), None, False,
                                                    "q", "t"), None)


def test_not_picklable(rng):
    import copy
    import pickle

    index = wavewarp.TwedIndex(rng.normal(size=(3, 4)), backend="cpu")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(index)
    with pytest.raises(TypeError, match="cannot be pickled or copied"):
        copy.copy(index)


def test_context_manager(rng):
    X = rng.normal(size=(6, 10))
    with wavewarp.TwedIndex(X, backend="cpu") as index:
        assert isinstance(index, wavewarp.TwedIndex)
        _same_pairwise(index.pairwise(X), wavewarp.twed_pairwise(X, X, backend="cpu"))
    assert index.closed
    with pytest.raises(ValueError, match="closed"):
        index.knn(X, 2)
    with pytest.raises(ZeroDivisionError):  # closed on the way out of an exception too
        with wavewarp.TwedIndex(X, backend="cpu") as index2:
            1 / 0
    assert index2.closed


def test_contexts_come_back_to_the_pool(rng):
    """An index holds a context of its own while it lives, and gives it back when closed or
    collected: making and dropping many indexes creates no new contexts once warm."""
    X = rng.normal(size=(5, 10))
    wavewarp.TwedIndex(X, backend="cpu", threads=1).close()
    before = wavewarp._wavewarp._contexts_created()
    for _ in range(50):
        wavewarp.TwedIndex(X, backend="cpu", threads=1).close()
    for _ in range(50):
        index = wavewarp.TwedIndex(X, backend="cpu", threads=1)
        index.pairwise(X)
        del index  # freed by reference counting: dealloc destroys the index, then returns the context
    assert wavewarp._wavewarp._contexts_created() == before
    # two live indexes have two contexts, and neither is the one plain calls use meanwhile
    a = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    b = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    wavewarp.twed_pairwise(X, backend="cpu", threads=1)
    assert wavewarp._wavewarp._contexts_created() == before + 2
    _same_pairwise(a.pairwise(X), b.pairwise(X))
    del a, b


def test_index_freed_in_any_order(rng):
    """Indexes dropped in cycles, at odd times, or after their data: no crash, no leak of state."""
    X = rng.normal(size=(5, 10))
    holder = {}
    index = wavewarp.TwedIndex(X, backend="cpu")
    holder["self"] = holder  # a reference cycle through a dict holding the index
    holder["index"] = index
    del index, holder
    gc.collect()
    indexes = [wavewarp.TwedIndex(X[: i + 1], backend="cpu") for i in range(5)]
    del X
    for i, index in enumerate(reversed(indexes)):
        assert len(index) == 5 - i
    indexes[2].close()
    del indexes
    gc.collect()


# ----------------------------------------------------------------------------------- threads, Ctrl-C, progress


@pytest.fixture
def fast_polling():
    previous = wavewarp._wavewarp._set_poll_interval(0.01)
    yield
    wavewarp._wavewarp._set_poll_interval(previous)


def test_threads_share_one_index(rng):
    """Calls on one index from several threads run one at a time on its context, correctly."""
    X = rng.normal(size=(60, 80))
    queries = [rng.normal(size=(5, 80)) for _ in range(6)]
    index = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    want = [wavewarp.twed_knn(Q, X, 3, backend="cpu") for Q in queries]
    got = [None] * len(queries)
    errors = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                got[i] = index.knn(queries[i], 3)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(queries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for g, w in zip(got, want):
        _same_knn(g, w)


def test_gil_released_during_index_calls(rng, fast_polling):
    """Two threads querying two indexes are inside C at once: their progress reports interleave."""
    X = rng.random((200, 200))
    indexes = {name: wavewarp.TwedIndex(X, backend="cpu", threads=1) for name in "ab"}
    events = []
    lock = threading.Lock()
    barrier = threading.Barrier(2)

    def work(name: str) -> None:
        def report(done: int, total: int) -> None:
            with lock:
                events.append(name)
        barrier.wait()
        indexes[name].pairwise(X, progress=report)

    threads = [threading.Thread(target=work, args=(name,)) for name in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    switches = sum(1 for x, y in zip(events, events[1:]) if x != y)
    assert {"a", "b"} <= set(events)
    assert switches >= 2, f"the two calls did not overlap: {''.join(events)}"


def test_close_waits_for_a_running_call(rng, fast_polling):
    X = rng.random((200, 200))
    index = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    started = threading.Event()
    result = {}

    def work() -> None:
        result["D"] = index.pairwise(X, progress=lambda done, total: started.set())

    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    index.close()  # waits (GIL released) until the call is done
    worker.join()
    assert index.closed
    assert result["D"].shape == (200, 200)


def test_reentry_from_progress_callback_raises(rng, fast_polling):
    X = rng.random((150, 200))
    index = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    seen = []

    def use_again(done: int, total: int) -> None:
        try:
            index.knn(X[:1], 1)
        except RuntimeError as exc:
            seen.append(str(exc))
        try:
            index.close()
        except RuntimeError as exc:
            seen.append(str(exc))
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        index.pairwise(X, progress=use_again)
    assert len(seen) == 2
    assert "cannot be used from the progress callback" in seen[0]
    assert "cannot be closed from the progress callback" in seen[1]
    assert not index.closed
    _same_pairwise(index.pairwise(X[:3]), wavewarp.twed_pairwise(X[:3], X, backend="cpu"))


def _interrupt_from_inside(reports):
    def report(done: int, total: int) -> None:
        reports.append((done, total))
        if len(reports) == 1:
            os.kill(os.getpid(), signal.SIGINT)
    return report


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
@pytest.mark.parametrize("method", ["pairwise", "knn"])
def test_ctrl_c_cancels_index_calls(rng, fast_polling, method):
    X = rng.random((400, 200))
    index = wavewarp.TwedIndex(X, backend="cpu", threads=1)
    reports = []
    call = getattr(index, method)
    args = (X,) if method == "pairwise" else (X, 1)
    with pytest.raises(KeyboardInterrupt):
        call(*args, progress=_interrupt_from_inside(reports))
    done, total = reports[-1]
    assert done < total, "the call ran to the end instead of stopping"
    # the index still works afterwards
    _same_pairwise(index.pairwise(X[:3, :20]), wavewarp.twed_pairwise(X[:3, :20], X, backend="cpu"))


def test_progress(rng, capsys, fast_polling):
    X = rng.random((120, 200))
    index = wavewarp.TwedIndex(X, backend="cpu")
    reports = []
    index.pairwise(X, progress=lambda done, total: reports.append((done, total)))
    assert len(reports) >= 2 and reports[-1][0] == reports[-1][1] > 0
    index.pairwise(X[:5])
    assert capsys.readouterr().err == ""  # off by default
    index.pairwise(X[:5], progress=True)
    err = capsys.readouterr().err
    assert "wavewarp.TwedIndex.pairwise [" in err and "100.0%" in err and err.endswith("\n")
    index.knn(X[:5], 2, progress=True)
    assert "wavewarp.TwedIndex.knn" in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress"):
        index.pairwise(X[:2], progress="yes")


# ----------------------------------------------------------------------------------- GPU arrays


def test_index_from_gpu_arrays(gpu, rng):
    X = rng.normal(size=(30, 40, 3))
    Q = rng.normal(size=(6, 33, 3))
    want = wavewarp.twed_pairwise(Q, X, backend="cpu")
    want_knn = wavewarp.twed_knn(Q, X, 4, backend="cpu")
    X_dev = _to_device(gpu, X)
    index = _matrix_on_gpu(lambda: wavewarp.TwedIndex(X_dev))
    assert index.backend == "cuda" and index.describe().startswith("cuda")
    assert (len(index), index.dim, index.dtype) == (30, 3, np.float64)
    X_dev[...] = 0.0  # the index keeps its own copy
    del X_dev
    for queries in (Q, _to_device(gpu, Q)):  # host and GPU queries
        got = _matrix_on_gpu(lambda: index.pairwise(queries))
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=RTOL)
        idx, dist = index.knn(queries, 4)
        np.testing.assert_array_equal(idx, want_knn[0])
        np.testing.assert_allclose(dist, want_knn[1], rtol=RTOL)
    index.close()


def test_gpu_index_float32_ragged_and_host_built(gpu, rng):
    X32 = rng.normal(size=(25, 50)).astype(np.float32)
    Q32 = rng.normal(size=(4, 50)).astype(np.float32)
    with _matrix_on_gpu(lambda: wavewarp.TwedIndex(_to_device(gpu, X32))) as index:
        got = index.pairwise(_to_device(gpu, Q32))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, wavewarp.twed_pairwise(Q32, X32, backend="cpu"), rtol=2e-5, atol=1e-4)
        with pytest.raises(ValueError, match="float64 but the index holds float32"):
            index.pairwise(_to_device(gpu, Q32.astype(np.float64)))
    series = [rng.normal(size=(n, 2)) for n in (10, 31, 7, 64)]
    Q = [rng.normal(size=(n, 2)) for n in (12, 40)]
    want = wavewarp.twed_pairwise(Q, series, backend="cpu")
    with _matrix_on_gpu(lambda: wavewarp.TwedIndex([_to_device(gpu, s) for s in series])) as index:
        np.testing.assert_allclose(index.pairwise([_to_device(gpu, q) for q in Q]), want, rtol=RTOL)
    # host data, CUDA backend: the index lives on the GPU, host and GPU queries both work
    with wavewarp.TwedIndex(series, backend="cuda") as index:
        assert index.backend == "cuda"
        np.testing.assert_allclose(index.pairwise(Q), want, rtol=RTOL)
        got = _matrix_on_gpu(lambda: index.pairwise([_to_device(gpu, q) for q in Q]))
        np.testing.assert_allclose(got, want, rtol=RTOL)

