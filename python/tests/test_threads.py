"""The GIL is released, Ctrl-C cancels long runs, progress is reported.

These tests assert on what happened (which thread ran when, whether a call was cut short), never on
how long anything took: workload sizes are fixed, and signals are sent from inside the call.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

import numpy as np
import pytest

import wavewarp


@pytest.fixture
def fast_polling():
    """Long calls check signals and report progress every 10 ms instead of 100 ms."""
    previous = wavewarp._wavewarp._set_poll_interval(0.01)
    yield
    wavewarp._wavewarp._set_poll_interval(previous)


def _long_collection(rng: np.random.Generator, count: int = 400) -> np.ndarray:
    """count x 200 samples: a self-matrix of count^2/2 pairs of 40,000 cells each (about 3e9 cells
    for 400 series: seconds on one core, many progress reports)."""
    return rng.random((count, 200))


def test_main_thread_runs_while_c_computes(rng):
    """While a worker thread is inside the C call, the main thread runs Python code.

    If the call held the GIL, the main thread could only run once the call had returned, and would
    find it finished before it completed its own loop."""
    X = _long_collection(rng, 250)
    entered, finished = threading.Event(), threading.Event()

    def work() -> None:
        entered.set()
        wavewarp.twed_pairwise(X, threads=1)
        finished.set()

    worker = threading.Thread(target=work)
    worker.start()
    entered.wait()
    iterations = 0
    while iterations < 200_000 and not finished.is_set():
        iterations += 1
    ran_during_call = not finished.is_set()
    worker.join()
    assert ran_during_call, f"the main thread only ran after the C call ({iterations} iterations)"


def test_two_threads_compute_at_once(rng, fast_polling):
    """Two calls from two Python threads are inside C at the same time: their progress reports
    (made with the GIL taken back for a moment) interleave. Serialised by the GIL, all reports of
    one call would come before all reports of the other."""
    X = _long_collection(rng, 200)
    events = []
    lock = threading.Lock()
    barrier = threading.Barrier(2)

    def work(name: str) -> None:
        def report(done: int, total: int) -> None:
            with lock:
                events.append(name)
        barrier.wait()
        wavewarp.twed_pairwise(X, threads=1, progress=report)

    threads = [threading.Thread(target=work, args=(name,)) for name in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    switches = sum(1 for x, y in zip(events, events[1:]) if x != y)
    assert {"a", "b"} <= set(events)
    assert switches >= 2, f"the two calls did not overlap: {''.join(events)}"


def test_concurrent_results_are_right(rng):
    """Threads sharing the module get separate contexts and correct results."""
    X = rng.random((40, 50))
    want = wavewarp.twed_pairwise(X, threads=1)
    results = [None] * 4

    def work(i: int) -> None:
        results[i] = wavewarp.twed_pairwise(X, threads=1)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def _interrupt_from_inside(reports):
    """A progress callable that records reports and sends SIGINT to the process at the first one,
    i.e. while the C call is running."""
    def report(done: int, total: int) -> None:
        reports.append((done, total))
        if len(reports) == 1:
            os.kill(os.getpid(), signal.SIGINT)
    return report


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
@pytest.mark.parametrize("threads", [1, None])
def test_ctrl_c_cancels_pairwise(rng, threads, fast_polling):
    X = _long_collection(rng)
    reports = []
    with pytest.raises(KeyboardInterrupt):
        wavewarp.twed_pairwise(X, threads=threads, progress=_interrupt_from_inside(reports))
    done, total = reports[-1]
    assert done < total, "the call ran to the end instead of stopping"
    # the module (and its pooled contexts) still work afterwards
    small = X[:5, :20]
    np.testing.assert_allclose(wavewarp.twed_pairwise(small, threads=threads)[0, 1],
                               wavewarp.twed(small[0], small[1]), rtol=1e-14)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_cancels_knn(rng, fast_polling):
    X = _long_collection(rng)
    reports = []
    with pytest.raises(KeyboardInterrupt):
        wavewarp.twed_knn(X, X, 1, threads=1, progress=_interrupt_from_inside(reports))
    done, total = reports[-1]
    assert done < total


def test_progress_callable(rng, fast_polling):
    X = _long_collection(rng, 120)
    reports = []
    wavewarp.twed_pairwise(X, progress=lambda done, total: reports.append((done, total)))
    assert len(reports) >= 2
    dones = [d for d, _ in reports]
    assert dones == sorted(dones)
    totals = {t for _, t in reports}
    assert len(totals) == 1
    assert reports[-1][0] == reports[-1][1] > 0


def test_progress_callback_exception_cancels(rng, fast_polling):
    X = _long_collection(rng)
    reports = []

    def stop(done: int, total: int) -> None:
        reports.append((done, total))
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        wavewarp.twed_pairwise(X, progress=stop)
    assert len(reports) == 1 and reports[0][0] < reports[0][1]


def test_progress_bar_on_stderr(rng, capsys):
    X = rng.random((30, 40))
    wavewarp.twed_pairwise(X)
    assert capsys.readouterr().err == ""  # off by default
