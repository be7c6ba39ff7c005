"""The generic API: wavewarp.distance / pairwise / knn / Index / Measure, for DTW and TWED, with
and without a Sakoe-Chiba window, against the plain full-matrix references of
reference_measures.py (exact integer band), to 1e-12 relative; and every misuse raising a clear
error. Parity with aeon, tslearn and dtaidistance is in test_parity_dtw.py and test_aeon.py.
"""

from __future__ import annotations

import copy
import os
import pickle
import signal
import sys

import numpy as np
import pytest

import wavewarp
from conftest import reference_twed
from reference_measures import dtw_reference, radius_from_window, twed_reference

RTOL = 1e-12
# length pairs: equal, one sample, unequal (22, 43 is where aeon's float floors differ from the band)
LENGTHS = [(1, 1), (1, 7), (6, 6), (13, 13), (9, 20), (22, 43), (31, 17), (40, 41)]
RADII = [None, 0, 1, 3, 10]
WINDOWS = [0.0, 0.1, 0.29, 0.5, 1.0]


def _close(got, want, rtol=RTOL):
    return abs(got - want) <= rtol * max(abs(want), 1e-300)


# ----------------------------------------------------------------------------------- one pair


@pytest.mark.parametrize("dim", [1, 3])
def test_dtw_matches_reference(rng, dim):
    for n, m in LENGTHS:
        a = rng.normal(size=(n, dim)) if dim > 1 else rng.normal(size=n)
        b = rng.normal(size=(m, dim)) if dim > 1 else rng.normal(size=m)
        for radius in RADII:
            want = dtw_reference(a, b, radius)
            got = wavewarp.distance(a, b, "dtw", radius=radius)
            assert type(got) is float
            assert _close(got, want), (n, m, radius, got, want)
            assert _close(wavewarp.distance(b, a, "dtw", radius=radius), want)  # symmetric
        for window in WINDOWS:
            want = dtw_reference(a, b, radius_from_window(window, n, m))
            assert _close(wavewarp.distance(a, b, "dtw", window=window), want), (n, m, window)
            assert _close(wavewarp.distance(a, b, measure="dtw", window=window), want)


@pytest.mark.parametrize("params", [{}, dict(nu=0.1, lmbda=0.5), dict(nu=0.0, lmbda=2.0, degree=1)])
def test_twed_window_matches_reference(rng, params):
    full = dict(nu=0.001, lmbda=1.0, degree=2) | params
    for n, m in LENGTHS:
        a, b = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
        for radius in RADII:
            want = twed_reference(a, b, radius=radius, **full)
            assert _close(wavewarp.distance(a, b, "twed", radius=radius, **params), want), (n, m, radius)
            assert _close(wavewarp.twed(a, b, radius=radius, **params), want)
        for window in (0.0, 0.1, 0.5):
            want = twed_reference(a, b, radius=radius_from_window(window, n, m), **full)
            assert _close(wavewarp.twed(a, b, window=window, **params), want), (n, m, window)
    a, b = rng.normal(size=30), rng.normal(size=40)
    ta, tb = np.cumsum(rng.uniform(0.1, 2, 30)), np.cumsum(rng.uniform(0.1, 2, 40))
    want = twed_reference(a, b, radius=4, tx=ta, ty=tb, **full)  # the band is on indices, not stamps
    assert _close(wavewarp.distance(a, b, "twed", radius=4, ta=ta, tb=tb, **params), want)


def test_defaults_and_the_twed_functions(rng):
    a, b = rng.normal(size=50), rng.normal(size=37)
    assert wavewarp.distance(a, b) == wavewarp.distance(a, b, "dtw")  # DTW is the default measure
    assert _close(wavewarp.distance(a, b), dtw_reference(a, b))
    assert wavewarp.distance(a, b, "twed") == wavewarp.twed(a, b)
    assert _close(wavewarp.twed(a, b), reference_twed(a, b))
    assert wavewarp.distance(a, b, "TWED", nu=0.5) == wavewarp.twed(a, b, nu=0.5)  # names in any case
    for window in (None, 1.0):  # no window, or the whole matrix
        assert wavewarp.distance(a, b, "dtw", window=window) == wavewarp.distance(a, b)
    assert wavewarp.distance(a, b, "dtw", radius=10**30) == wavewarp.distance(a, b)  # wider than anything
    assert wavewarp.distance(a, a, "dtw") == 0.0
    same = rng.normal(size=20)
    shifted = same + 1.0
    assert wavewarp.distance(same, shifted, "dtw", radius=0) == pytest.approx(20.0, rel=RTOL)
    # no square root: DTW of one sample each is the squared Euclidean distance
    assert wavewarp.distance(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), "dtw") == 25.0


def test_float32_and_layouts(rng):
    a, b = rng.normal(size=(40, 3)), rng.normal(size=(33, 3))
    want = wavewarp.distance(a, b, "dtw", window=0.2)
    got = wavewarp.distance(a.astype(np.float32), b.astype(np.float32), "dtw", window=0.2)
    assert type(got) is np.float32
    assert got == pytest.approx(want, rel=1e-5)
    assert wavewarp.distance(np.asfortranarray(a), b[::-1][::-1], "dtw", window=0.2) == want
    assert wavewarp.distance(a.tolist(), b, "dtw", window=0.2) == want
    assert wavewarp.distance(a[:, :1], b[:, 0], "dtw") == wavewarp.distance(a[:, 0], b[:, 0], "dtw")


# ----------------------------------------------------------------------------------- matrices, kNN, Index


def _collections(rng):
    return {
        "univariate": (rng.normal(size=(12, 30)), rng.normal(size=(5, 30))),
        "multivariate": (rng.normal(size=(9, 25, 3)), rng.normal(size=(4, 25, 3))),
        "ragged": ([rng.normal(size=(n, 2)) for n in (5, 40, 13, 27, 1, 22, 43)],
                   [rng.normal(size=(n, 2)) for n in (12, 3, 50)]),
    }


def _each(X):
    return list(X) if isinstance(X, list) else [x for x in X]


@pytest.mark.parametrize("spec", [dict(measure="dtw"), dict(measure="dtw", window=0.1),
                                  dict(measure="dtw", radius=2), dict(measure="twed", window=0.3, nu=0.1),
                                  dict(measure="twed", radius=0, lmbda=0.5)])
def test_pairwise_knn_index_equal_pairs(rng, spec):
    for name, (X, Q) in _collections(rng).items():
        xs, qs = _each(X), _each(Q)
        want = np.array([[wavewarp.distance(q, x, **spec) for x in xs] for q in qs])
        D = wavewarp.pairwise(Q, X, **spec)
        np.testing.assert_allclose(D, want, rtol=RTOL, atol=0, err_msg=name)
        S = wavewarp.pairwise(X, **spec)
        want_s = np.array([[wavewarp.distance(a, b, **spec) for b in xs] for a in xs])
        np.fill_diagonal(want_s, 0.0)
        np.testing.assert_allclose(S, want_s, rtol=RTOL, atol=0, err_msg=name)
        np.testing.assert_array_equal(S, S.T)
        idx, dist = wavewarp.knn(Q, X, 3, **spec)
        order = np.argsort(want, axis=1, kind="stable")[:, :3]
        np.testing.assert_array_equal(idx, order)
        np.testing.assert_allclose(dist, np.take_along_axis(want, order, 1), rtol=RTOL, atol=0)
        with wavewarp.Index(X, **spec) as index:
            np.testing.assert_allclose(index.pairwise(Q), D, rtol=RTOL, atol=0)
            i2, d2 = index.knn(Q, 3)
            np.testing.assert_array_equal(i2, idx)
            np.testing.assert_allclose(d2, dist, rtol=RTOL, atol=0)


def test_window_fraction_is_per_pair_on_ragged_collections(rng):
    X = [rng.normal(size=n) for n in (10, 60, 25)]
    D = wavewarp.pairwise(X, measure="dtw", window=0.1)
    for i, a in enumerate(X):
        for j, b in enumerate(X):
            if i != j:
                r = radius_from_window(0.1, len(a), len(b))  # 1, 1, 2 samples: per pair
                assert _close(D[i, j], dtw_reference(a, b, r))


def test_twed_functions_take_a_window_too(rng):
    X, Q = rng.normal(size=(10, 30)), rng.normal(size=(4, 26))
    np.testing.assert_array_equal(wavewarp.twed_pairwise(Q, X, window=0.2, nu=0.5),
                                  wavewarp.pairwise(Q, X, "twed", window=0.2, nu=0.5))
    for got, want in zip(wavewarp.twed_knn(Q, X, 2, radius=3), wavewarp.knn(Q, X, 2, "twed", radius=3)):
        np.testing.assert_array_equal(got, want)
    with wavewarp.TwedIndex(X, lmbda=0.5, window=0.2) as index:
        assert index.measure == wavewarp.Measure("twed", lmbda=0.5, window=0.2)
        assert (index.nu, index.lmbda, index.degree) == (0.001, 0.5, 2)
        assert "window=0.2" in repr(index) and repr(index).startswith("TwedIndex(")
        np.testing.assert_array_equal(index.pairwise(Q), wavewarp.twed_pairwise(Q, X, lmbda=0.5, window=0.2))
    # the window changes the result (else these tests would prove little)
    assert not np.allclose(wavewarp.twed_pairwise(Q, X, radius=0), wavewarp.twed_pairwise(Q, X))


def test_matrices_in_float32(rng):
    X = rng.normal(size=(8, 30, 2)).astype(np.float32)
    D = wavewarp.pairwise(X, measure="dtw", window=0.1)
    assert D.dtype == np.float32
    np.testing.assert_allclose(D, wavewarp.pairwise(X.astype(np.float64), measure="dtw", window=0.1), rtol=1e-5)
    _, dist = wavewarp.knn(X[:2], X, 2, "dtw")
    assert dist.dtype == np.float32
    index = wavewarp.Index(X, "dtw")
    assert index.dtype == np.float32 and index.knn(X[:2], 2)[1].dtype == np.float32


def test_index_properties_and_life_cycle(rng):
    X = rng.normal(size=(6, 10))
    index = wavewarp.Index(X, "dtw", radius=2, backend="cpu")
    assert isinstance(index, wavewarp.Index) and not isinstance(index, wavewarp.TwedIndex)
    assert isinstance(wavewarp.TwedIndex(X, backend="cpu"), wavewarp.Index)
    assert index.measure == wavewarp.Measure("dtw", radius=2)
    assert (len(index), index.dim, index.backend) == (6, 1, "cpu")
    assert repr(index).startswith("Index(n=6, dim=1") and "Measure('dtw', radius=2)" in repr(index)
    index.close()
    with pytest.raises(ValueError, match="closed Index"):
        index.pairwise(X)
    with pytest.raises(ValueError, match="closed Index"):
        index.knn(X, 1)
    with pytest.raises(TypeError, match="Index cannot be pickled"):
        pickle.dumps(wavewarp.Index(X, "dtw"))


def test_progress_and_threads_with_dtw(rng, capsys):
    X = rng.normal(size=(20, 50))
    reports = []
    D = wavewarp.pairwise(X, measure="dtw", window=0.5, progress=lambda d, t: reports.append((d, t)), threads=1)
    assert reports and reports[-1][0] == reports[-1][1] > 0
    np.testing.assert_array_equal(D, wavewarp.pairwise(X, measure="dtw", window=0.5))
    wavewarp.knn(X, X, 2, "dtw", progress=True)
    assert "wavewarp.knn" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT delivery is POSIX-specific")
def test_ctrl_c_cancels_dtw(rng):
    previous = wavewarp._wavewarp._set_poll_interval(0.01)
    try:
        X = rng.random((300, 300))
        reports = []

        def report(done, total):
            reports.append((done, total))
            if len(reports) == 1:
                os.kill(os.getpid(), signal.SIGINT)

        with pytest.raises(KeyboardInterrupt):
            wavewarp.pairwise(X, measure="dtw", threads=1, progress=report)
        assert reports[-1][0] < reports[-1][1]
    finally:
        wavewarp._wavewarp._set_poll_interval(previous)


def test_contexts_are_reused_across_measures(rng):
    a, b = rng.normal(size=30), rng.normal(size=30)
    for measure in ("dtw", "twed"):
        wavewarp.distance(a, b, measure)
    before = wavewarp._wavewarp._contexts_created()
    for _ in range(50):
        wavewarp.distance(a, b, "dtw", window=0.1)
        wavewarp.distance(a, b, "twed")
        wavewarp.pairwise(np.stack([a, b]), measure="dtw")
    assert wavewarp._wavewarp._contexts_created() == before


# ----------------------------------------------------------------------------------- Measure


def test_measure_object(rng):
    m = wavewarp.Measure("twed", nu=0.1, window=0.2)
    assert (m.name, m.window, m.radius, m.params) == ("twed", 0.2, None, dict(nu=0.1, lmbda=1.0, degree=2))
    assert (m.nu, m.lmbda, m.degree) == (0.1, 1.0, 2)
    assert m.uses_stamps and not wavewarp.Measure("dtw").uses_stamps
    assert repr(m) == "Measure('twed', nu=0.1, lmbda=1.0, degree=2, window=0.2)"
    assert repr(wavewarp.Measure()) == "Measure('dtw')"
    assert repr(wavewarp.Measure("dtw", radius=np.int64(3))) == "Measure('dtw', radius=3)"
    assert m == wavewarp.Measure("TWED", nu=0.1, lmbda=1, window=0.2) and hash(m) == hash(
        wavewarp.Measure("twed", nu=0.1, window=0.2))
    assert m != wavewarp.Measure("twed", nu=0.1, window=0.3) and m != "twed"
    assert pickle.loads(pickle.dumps(m)) == m
    assert copy.deepcopy(m) is m
    with pytest.raises(AttributeError, match="immutable"):
        m.nu = 3.0
    with pytest.raises(AttributeError):
        wavewarp.Measure("dtw").nu
    # aeon's radius: int(window * min(n, m)) in double (0.29 * 100 = 28.999999999999996)
    assert wavewarp.Measure("dtw", window=0.29).radius_for(100, 120) == 28 == radius_from_window(0.29, 100, 120)
    assert wavewarp.Measure("dtw", radius=5).radius_for(3, 4) == 5
    assert wavewarp.Measure("dtw").radius_for(3, 4) is None
    a, b = rng.normal(size=40), rng.normal(size=30)
    for measure in (m, wavewarp.Measure("dtw", radius=1)):
        assert wavewarp.distance(a, b, measure) == wavewarp.distance(
            a, b, measure.name, window=measure.window, radius=measure.radius, **measure.params)
    assert set(wavewarp.MEASURES) == {"dtw", "twed", "softdtw"}


# ----------------------------------------------------------------------------------- misuse

_a = np.linspace(0.0, 1.0, 8)
_X = np.zeros((3, 8))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: wavewarp.distance(_a, _a, "dwt"), ValueError, "unknown measure 'dwt'"),
        (lambda: wavewarp.distance(_a, _a, 3), TypeError, "measure must be"),
        (lambda: wavewarp.pairwise(_X, measure="euclidean"), ValueError, "unknown measure"),
        (lambda: wavewarp.distance(_a, _a, "dtw", nu=0.1), ValueError, "dtw takes no parameters, got nu"),
        (lambda: wavewarp.pairwise(_X, measure="dtw", lmbda=1.0), ValueError, "dtw takes no parameters"),
        (lambda: wavewarp.knn(_X, _X, 1, "dtw", degree=2), ValueError, "dtw takes no parameters"),
        (lambda: wavewarp.Index(_X, "dtw", nu=0.0), ValueError, "dtw takes no parameters"),
        (lambda: wavewarp.distance(_a, _a, "twed", mu=0.1), ValueError, "unknown parameter mu for twed"),
        (lambda: wavewarp.distance(_a, _a, "dtw", windw=0.1), ValueError, "dtw takes no parameters, got windw"),
        (lambda: wavewarp.distance(_a, _a, "dtw", ta=_a), ValueError, "ta: dtw does not use time stamps"),
        (lambda: wavewarp.distance(_a, _a, "dtw", tb=_a), ValueError, "tb: dtw does not use time stamps"),
        (lambda: wavewarp.pairwise(_X, measure="dtw", tX=np.ones(8)), ValueError, "tX: dtw does not use"),
        (lambda: wavewarp.pairwise(_X, _X, "dtw", tY=np.ones(8)), ValueError, "tY: dtw does not use"),
        (lambda: wavewarp.knn(_X, _X, 1, "dtw", tqueries=np.ones(8)), ValueError, "tqueries: dtw"),
        (lambda: wavewarp.knn(_X, _X, 1, "dtw", tX=np.ones(8)), ValueError, "tX: dtw"),
        (lambda: wavewarp.Index(_X, "dtw", tX=np.ones(8)), ValueError, "tX: dtw"),
        (lambda: wavewarp.Index(_X, "dtw").pairwise(_X, tqueries=np.ones(8)), ValueError, "tqueries: dtw"),
        (lambda: wavewarp.distance(_a, _a, "dtw", radius=-1), ValueError, "radius must be >= 0"),
        (lambda: wavewarp.twed(_a, _a, radius=-1), ValueError, "radius must be >= 0"),
        (lambda: wavewarp.twed_pairwise(_X, radius=-2), ValueError, "radius must be >= 0"),
        (lambda: wavewarp.distance(_a, _a, "dtw", radius=2.5), TypeError, "radius must be"),
        (lambda: wavewarp.distance(_a, _a, "dtw", radius=True), TypeError, "radius must be"),
        (lambda: wavewarp.twed(_a, _a, radius="3"), TypeError, "radius must be"),
        (lambda: wavewarp.distance(_a, _a, "dtw", window=1.5), ValueError, "window must be between 0 and 1"),
        (lambda: wavewarp.distance(_a, _a, "dtw", window=-0.1), ValueError, "window must be between 0 and 1"),
        (lambda: wavewarp.distance(_a, _a, "dtw", window=float("nan")), ValueError, "window must be between"),
        (lambda: wavewarp.twed(_a, _a, window=float("nan")), ValueError, "window must be between"),
        (lambda: wavewarp.twed_knn(_X, _X, 1, window=2), ValueError, "window must be between"),
        (lambda: wavewarp.distance(_a, _a, "dtw", window="0.1"), TypeError, "window must be"),
        (lambda: wavewarp.distance(_a, _a, "dtw", window=0.1, radius=2), ValueError, "not both"),
        (lambda: wavewarp.twed(_a, _a, window=0.1, radius=2), ValueError, "not both"),
        (lambda: wavewarp.distance(_a, _a, wavewarp.Measure("dtw"), window=0.1), ValueError, "holds its"),
        (lambda: wavewarp.pairwise(_X, None, wavewarp.Measure("twed"), nu=0.1), ValueError, "holds its"),
        (lambda: wavewarp.distance(_a, _a, "twed", nu=-1.0), ValueError, "invalid parameter"),
        (lambda: wavewarp.distance(_a, _a, "twed", degree=0), ValueError, "degree"),
        (lambda: wavewarp.distance(_a, _a, "twed", degree=1.5), TypeError, "integer"),
        (lambda: wavewarp.distance(_a, np.r_[_a[:-1], np.nan], "dtw"), ValueError, "NaN or infinite"),
        (lambda: wavewarp.pairwise(np.full((2, 8), np.inf), measure="dtw"), ValueError, "NaN or infinite"),
        (lambda: wavewarp.distance(np.zeros(0), _a, "dtw"), ValueError, "empty"),
        (lambda: wavewarp.distance(np.zeros((8, 2)), np.zeros((8, 3)), "dtw"), ValueError, "same dim"),
        (lambda: wavewarp.distance(np.zeros((2, 8, 1)), _a, "dtw"), ValueError, "pairwise"),
        (lambda: wavewarp.pairwise(np.zeros((2, 3, 4, 5)), measure="dtw"), ValueError, "4 dimensions"),
        (lambda: wavewarp.pairwise(_X, np.zeros((2, 8, 3)), "dtw"), ValueError, "dim"),
        (lambda: wavewarp.pairwise([], measure="dtw"), ValueError, "empty"),
        (lambda: wavewarp.knn(_X, _X, 0, "dtw"), ValueError, "k must be between 1 and"),
        (lambda: wavewarp.knn(_X, _X, 4, "dtw"), ValueError, r"number of series in X \(3\)"),
        (lambda: wavewarp.knn(_X, _X, 2.0, "dtw"), TypeError, "k must be an integer"),
        (lambda: wavewarp.Index(_X, "dtw").knn(_X, 4), ValueError, "k must be between"),
        (lambda: wavewarp.distance(_a, _a, "dtw", backend="gpu"), ValueError, "backend"),
        (lambda: wavewarp.pairwise(_X, measure="dtw", threads=0), ValueError, "threads"),
        (lambda: wavewarp.pairwise(_X, measure="dtw", progress="yes"), TypeError, "progress"),
        (lambda: wavewarp.pairwise(_X, measure="dtw", backend="cpu", devices=[0]), ValueError, "does not apply"),
    ],
)
def test_misuse_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("measure, params, match", [
    ("dtw", dict(gamma=0.1), r"^dtw takes no parameters, got gamma \(gamma: softdtw's\)$"),
    ("dtw", dict(nu=0.1, gamma=0.1), r"^dtw takes no parameters, got gamma, nu \(gamma: softdtw's; nu: twed's\)$"),
    ("twed", dict(gamma=0.1), r"^unknown parameter gamma for twed: it takes nu, lmbda, degree \(gamma: softdtw's\)$"),
    ("softdtw", dict(lmbda=1.0), r"^unknown parameter lmbda for softdtw: it takes gamma, divergence \(lmbda: twed's\)$"),
])
def test_parameter_of_another_measure_names_its_owner(measure, params, match):
    with pytest.raises(ValueError, match=match):
        wavewarp.distance(_a, _a, measure, **params)


def test_measure_in_the_place_of_y_is_named():
    """pairwise(X, "dtw") puts the measure in Y's place: the error says so and how to call."""
    with pytest.raises(TypeError, match=r"^Y must be a collection of series or None, not str 'dtw': .*"
                                        r"pairwise\(X, measure='dtw'\)$"):
        wavewarp.pairwise(_X, "dtw")
    with pytest.raises(TypeError, match=r"not Measure .*pairwise\(X, measure=Measure\('twed'"):
        wavewarp.pairwise(_X, wavewarp.Measure("twed"), nu=0.5)
    assert wavewarp.pairwise(_X, None, "dtw").shape == (3, 3)


_s = np.linspace(0.0, 1.0, 8)[::-1].copy()


@pytest.mark.parametrize("call, match", [
    (lambda: wavewarp.distance(_a, _s, "softdtw", divergence="no"), r"^divergence must be True or False, not 'no'$"),
    (lambda: wavewarp.distance(_a, _s, "softdtw", divergence=1), "divergence must be True or False"),
    (lambda: wavewarp.soft_dtw(_a, _s, divergence=None), "divergence must be True or False"),
    (lambda: wavewarp.soft_dtw_batch(_X, _X, grad="no"), r"^grad must be True or False, not 'no'$"),
    (lambda: wavewarp.image_distance(np.ones((2, 2)), np.ones((2, 2)), squared="no"), "squared must be True or False"),
    (lambda: wavewarp.image_pairwise([np.ones((2, 2))], squared=1), "squared must be True or False"),
    (lambda: wavewarp.ted("{a}", "{b}", mapping="yes"), "mapping must be True or False"),
    (lambda: wavewarp.distance(_a, _s, "twed", nu=True), r"^nu must be a number >= 0, not True$"),
    (lambda: wavewarp.twed(_a, _s, nu=True), r"^nu must be a number >= 0, not True$"),
    (lambda: wavewarp.twed(_a, _s, lmbda=np.True_), r"^lmbda must be a number >= 0, not (np\.)?True"),
    (lambda: wavewarp.twed_pairwise(_X, degree=True), r"^degree must be an integer, not True$"),
    (lambda: wavewarp.Measure("twed", degree=False), r"^degree must be an integer, not False$"),
    (lambda: wavewarp.distance(_a, _s, "softdtw", gamma=True), r"^gamma must be a number > 0, not True$"),
    (lambda: wavewarp.soft_dtw(_a, _s, gamma=np.True_), r"^gamma must be a number > 0, not (np\.)?True"),
    (lambda: wavewarp.ted("{a}", "{b}", delete_cost=True), r"^delete_cost must be a number >= 0, not True$"),
    (lambda: wavewarp.distance(_a, _s, threads=True), r"^threads must be None or an integer, not True$"),
    (lambda: wavewarp.pairwise(_X, threads=2.0), r"^threads must be None or an integer, not 2.0$"),
])
def test_parameters_of_the_wrong_kind_are_type_errors(call, match):
    """Boolean parameters take a real bool (bool("no") is True); numbers refuse bools, as window
    and radius always did (nu=True is a slip, not 1.0)."""
    with pytest.raises(TypeError, match=match):
        call()


def test_bools_given_as_bools_are_accepted():
    want = wavewarp.distance(_a, _s, "softdtw", divergence=True)
    assert wavewarp.distance(_a, _s, "softdtw", divergence=np.True_) == want
    assert wavewarp.soft_dtw_batch(_X, _X + 1, grad=np.False_)[1] is None
    assert wavewarp.twed(_a, _s, nu=np.float32(0.5), degree=np.int64(1)) == wavewarp.twed(_a, _s, nu=0.5, degree=1)


@pytest.mark.parametrize("call, match", [
    (lambda: wavewarp.twed(_a, _a, degree=2**40),
     r"^degree must be an integer >= 1 and at most 2147483647, not 1099511627776$"),
    (lambda: wavewarp.distance(_a, _a, "twed", degree=2**80), "degree must be an integer >= 1 and at most 2147483647"),
    (lambda: wavewarp.distance(_a, _a, "twed", degree=-2**80), "degree must be an integer >= 1 and at most"),
    (lambda: wavewarp.distance(_a, _a, threads=10**6),
     r"^threads must be None or an integer >= 1 and at most 65536, not 1000000$"),
    (lambda: wavewarp.pairwise(_X, threads=2**70), "threads must be None or an integer >= 1 and at most 65536"),
    (lambda: wavewarp.pairwise(_X, threads=0), r"^threads must be None or an integer >= 1 and at most 65536, not 0$"),
])
def test_out_of_range_integers_name_both_bounds(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_kinds_of_parameters_checked_in_c_too():
    """Specs that skip Measure (twed()'s fast path) meet the same checks in the C module."""
    for spec, match in [(("softdtw", 1.0, "no", None, None, None), "divergence must be True or False"),
                        (("softdtw", True, False, None, None, None), "gamma must be a number > 0"),
                        (("twed", 0.1, True, 2, None, None), "lmbda must be a number >= 0"),
                        (("twed", 0.1, 1.0, 2.0, None, None), "degree must be an integer")]:
        with pytest.raises(TypeError, match=match):
            wavewarp._wavewarp.measure_check(spec)


def test_measure_spec_checked_in_c_too():
    """The C entry points check the spec themselves (a wrong one cannot reach the library)."""
    c = wavewarp._wavewarp
    for spec, error, match in [
        (("dtw", 0.1, None, None, None, None), ValueError, "dtw takes no parameters"),
        (("lcss", None, None, None, None, None), ValueError, "measure must be 'twed' or 'dtw'"),
        (("dtw", None, None, None, -1, None), ValueError, "radius must be >= 0"),
        (("dtw", None, None, None, 1.5, None), TypeError, "radius"),
        (("dtw", None, None, None, None, 1.01), ValueError, "window must be between"),
        (("dtw", None, None, None, 1, 0.5), ValueError, "not both"),
        (("twed", -1.0, 1.0, 2, None, None), ValueError, "invalid parameter"),
        (("dtw",), TypeError, "spec"),
    ]:
        with pytest.raises(error, match=match):
            c.measure_check(spec)
        with pytest.raises(error, match=match):
            c.distance(_a, _a, None, None, spec, "cpu", None)
    with pytest.raises(ValueError, match="does not use time stamps"):
        c.distance(_a, _a, _a, None, ("dtw", None, None, None, None, None), "cpu", None)


def test_cuda_backend_and_dtw():
    """backend='cuda': a GPU-less machine says so; with a GPU, DTW works or (until the GPU has
    DTW) fails with the library's 'not available on the backend' message, never a silent CPU run."""
    if not wavewarp.cuda_available():
        for call in (lambda: wavewarp.distance(_a, _a, "dtw", backend="cuda"),
                     lambda: wavewarp.pairwise(_X, measure="dtw", window=0.5, backend="cuda"),
                     lambda: wavewarp.Index(_X, "dtw", backend="cuda")):
            with pytest.raises(wavewarp.WavewarpError, match="CUDA|GPU"):
                call()
        return
    want = wavewarp.distance(_a, _a[::-1].copy(), "dtw", backend="cpu")
    try:
        got = wavewarp.distance(_a, _a[::-1].copy(), "dtw", backend="cuda")
    except wavewarp.WavewarpError as exc:
        assert "not available on the backend" in str(exc)
        pytest.skip(f"this build's GPU does not compute DTW yet: {exc}")
    assert got == pytest.approx(want, rel=RTOL)


def test_status_mapping_of_the_measure_statuses():
    with pytest.raises(wavewarp.WavewarpError, match="not available on the backend"):
        wavewarp._wavewarp._raise_status(19)  # WW_ERR_UNSUPPORTED
    with pytest.raises(ValueError, match="unknown measure"):
        wavewarp._wavewarp._raise_status(20)  # WW_ERR_MEASURE


def test_checked_specs_are_reused_but_not_across_types(rng):
    """A call with a name, window and parameters reuses the checked spec of an equal earlier call;
    equal values of other types (True == 1) are still checked, and refused."""
    a, b = rng.normal(size=12), rng.normal(size=15)
    want = wavewarp.distance(a, b, "dtw", radius=1)
    assert wavewarp.distance(a, b, "dtw", radius=1) == want
    assert wavewarp.distance(a, b, "dtw", radius=np.int32(1)) == want
    with pytest.raises(TypeError, match="radius must be"):
        wavewarp.distance(a, b, "dtw", radius=True)
    assert wavewarp.distance(a, b, "dtw", window=1) == wavewarp.distance(a, b, "dtw")
    with pytest.raises(TypeError, match="window must be"):
        wavewarp.distance(a, b, "dtw", window=True)
    assert wavewarp.distance(a, b, "twed", degree=1) == wavewarp.twed(a, b, degree=1)
    with pytest.raises(TypeError):
        wavewarp.distance(a, b, "twed", degree=1.0)
    with pytest.raises(TypeError, match="window must be"):
        wavewarp.distance(a, b, "dtw", window=np.array([0.1, 0.2]))  # unhashable: checked all the same
    with pytest.raises(TypeError):
        wavewarp.MEASURES["dtw"] = {}  # read-only
